//! Published figures set beside a sweep's measured recovery times (`--reference
//! 'VALUES:FIGURE=TIME'`): a paper's median failover time for one cell, its worst case for
//! another. The report sets each beside what the cell measured, with the difference; the
//! recovery chart marks each on its cell's line.

use super::aggregate::CellStats;
use crate::time::Dur;
use serde::{Deserialize, Serialize};

/// Which figure of a cell's recovery times a published one is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Figure {
    /// The time by which this percentage (1..=100) of the runs that recovered had recovered
    /// (nearest rank); 50 is the median, 100 the maximum.
    Percentile(u32),
    /// The mean of the runs that recovered.
    Mean,
}

impl Figure {
    /// `median`, `max`, `mean` or `pNN`.
    fn parse(text: &str) -> Result<Figure, String> {
        let bad =
            || format!("{text:?} is not a figure: write median, mean, max or pNN (p1 to p100)");
        match text {
            "median" => Ok(Figure::Percentile(50)),
            "max" => Ok(Figure::Percentile(100)),
            "mean" => Ok(Figure::Mean),
            _ => {
                let p: u32 = text
                    .strip_prefix('p')
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(bad)?;
                if (1..=100).contains(&p) {
                    Ok(Figure::Percentile(p))
                } else {
                    Err(bad())
                }
            }
        }
    }

    /// `median`, `max`, `mean` or `p90`.
    pub fn name(self) -> String {
        match self {
            Figure::Percentile(50) => "median".into(),
            Figure::Percentile(100) => "max".into(),
            Figure::Percentile(p) => format!("p{p}"),
            Figure::Mean => "mean".into(),
        }
    }

    /// This figure of `stats`' recovery times in ns; `None` when no run recovered.
    pub fn of(self, stats: &CellStats) -> Option<i64> {
        match self {
            Figure::Percentile(p) => stats.recovery_percentiles([p]).map(|[v]| v),
            Figure::Mean => {
                let v = &stats.recoveries_ns;
                let sum: i128 = v.iter().map(|&x| i128::from(x)).sum();
                (!v.is_empty()).then(|| (sum / v.len() as i128) as i64)
            }
        }
    }
}

/// One published figure for one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// The cell's values as the sweep's tables show them, joined by `, ` for several
    /// parameters (`5ms`; `12ms+6ms, 200`).
    pub cell: String,
    pub figure: Figure,
    pub time: Dur,
}

impl Reference {
    /// `VALUES:FIGURE=TIME`, as `--reference` takes it: `5ms:median=287ms`.
    pub fn parse(text: &str) -> Result<Reference, String> {
        let form = "expected VALUES:FIGURE=TIME, like 5ms:median=287ms";
        let (left, time) = text
            .rsplit_once('=')
            .ok_or_else(|| format!("--reference {text:?}: {form}"))?;
        let (cell, figure) = left
            .rsplit_once(':')
            .ok_or_else(|| format!("--reference {text:?}: {form}"))?;
        let figure =
            Figure::parse(figure.trim()).map_err(|e| format!("--reference {text:?}: {e}"))?;
        let time = crate::scenario::duration::parse_duration(time.trim())
            .map_err(|e| format!("--reference {text:?}: {e}"))?;
        if time.ns() <= 0 {
            return Err(format!("--reference {text:?}: the time must be positive"));
        }
        Ok(Reference {
            cell: cell.trim().to_string(),
            figure,
            time,
        })
    }

    /// As `--reference` takes it: `5ms:median=287ms`.
    pub fn arg(&self) -> String {
        format!("{}:{}={}", self.cell, self.figure.name(), self.time)
    }

    /// `5ms: median 287ms`.
    pub fn label(&self) -> String {
        format!("{}: {} {}", self.cell, self.figure.name(), self.time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_figure_and_refuses_what_is_not_one() {
        let r = Reference::parse("12ms+6ms, 200:max=152ms").unwrap();
        assert_eq!(r.cell, "12ms+6ms, 200");
        assert_eq!(r.figure, Figure::Percentile(100));
        assert_eq!(r.time, Dur::from_ns(152_000_000));
        assert_eq!(
            Reference::parse("5ms:median=287ms").unwrap().figure,
            Figure::Percentile(50)
        );
        assert_eq!(
            Reference::parse("a:p90=1s").unwrap().figure,
            Figure::Percentile(90)
        );
        assert_eq!(Reference::parse("a:mean=1s").unwrap().figure, Figure::Mean);
        for bad in [
            "5ms=287ms",
            "5ms:p0=1s",
            "5ms:p101=1s",
            "5ms:avg=1s",
            "5ms:max=0s",
        ] {
            assert!(Reference::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_mean_is_of_the_runs_that_recovered() {
        // 10, 20 and 60 ns recovered, one run never did: the mean is 90 / 3 = 30 ns.
        let st = CellStats {
            recoveries_ns: vec![10, 60, 20],
            runs: 4,
            ..CellStats::default()
        };
        assert_eq!(Figure::Mean.of(&st), Some(30));
        assert_eq!(Figure::Percentile(100).of(&st), Some(60));
        assert_eq!(Figure::Mean.of(&CellStats::default()), None);
    }
}
