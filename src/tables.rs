//! The lease arithmetic tables: what quorum reads cost against lease reads,
//! the drift margin T * rho, and the lease left usable after a fixed allowance and the drift.
//!
//! Pure arithmetic, exact: durations are integer nanoseconds, drift rates exact decimals held in
//! parts per 10^12, every figure a ratio of integers rounded once (half away from zero) when it
//! is printed. No floating point, so "30.00 ms" and "29947.0 ms" are exactly what they say.
//! Rendering as aligned text or Markdown is here too; the CLI only parses flags and prints.

use crate::time::Dur;
use std::fmt::Write;

/// A drift rate in ppm, exactly: `ppt` parts per 10^12 (1 ppm = 10^6 ppt).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ppm {
    pub ppt: i128,
    /// As given (`100`, `0.5`).
    pub text: String,
}

impl Ppm {
    /// Parses a non-negative decimal ppm with at most 6 fractional digits.
    pub fn parse(text: &str) -> Result<Ppm, String> {
        let t = text.trim();
        let bad = || format!("{t:?} is not a drift rate in ppm (a number >= 0, like 100 or 0.5)");
        let (int, frac) = t.split_once('.').unwrap_or((t, ""));
        if (int.is_empty() && frac.is_empty())
            || !int.chars().all(|c| c.is_ascii_digit())
            || !frac.chars().all(|c| c.is_ascii_digit())
        {
            return Err(bad());
        }
        if frac.len() > 6 {
            return Err(format!("{t:?}: at most 6 decimals of a ppm"));
        }
        let int: i128 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| bad())?
        };
        if int >= 1_000_000 {
            return Err(format!("{t:?}: a drift of 10^6 ppm or more stops a clock"));
        }
        let frac_v: i128 = format!("{frac:0<6}").parse().map_err(|_| bad())?;
        Ok(Ppm {
            ppt: int * 1_000_000 + frac_v,
            text: t.to_string(),
        })
    }
}

/// `num / den` rounded half away from zero to `decimals` places, printed with exactly that many.
pub fn fixed(num: i128, den: i128, decimals: u32) -> String {
    assert!(den > 0, "denominator must be positive");
    let scale = 10i128.pow(decimals);
    let n = num * scale;
    let q = (n.abs() + den / 2) / den; // half away from zero (on the magnitude)
    let neg = n < 0 && q != 0;
    let int = q / scale;
    let frac = q % scale;
    let sign = if neg { "-" } else { "" };
    if decimals == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac:0width$}", width = decimals as usize)
    }
}

/// [`fixed`] without trailing zeros (and without a trailing point).
pub fn trimmed(num: i128, den: i128, decimals: u32) -> String {
    let s = fixed(num, den, decimals);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

const NS_PER_S: i128 = 1_000_000_000;
const PPT_ONE: i128 = 1_000_000_000_000;

/// A table ready to print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Lines printed under the table.
    pub notes: Vec<String>,
}

/// (a) Round trips per second of reads by quorum against reads under a lease: a quorum read
/// costs a round trip each, a lease one renewal per T, so quorum reads cost QPS * T times more.
pub fn round_trips(qps: &[u64], ts: &[Dur]) -> Table {
    let mut rows = Vec::new();
    for &q in qps {
        for t in ts {
            let t_ns = t.ns() as i128;
            let q = q as i128;
            rows.push(vec![
                q.to_string(),
                t.to_string(),
                q.to_string(),
                trimmed(NS_PER_S, t_ns, 3),
                trimmed(q * t_ns - NS_PER_S, t_ns, 3),
                format!("{}x", trimmed(q * t_ns, NS_PER_S, 3)),
            ]);
        }
    }
    Table {
        title: "(a) Extra round trips per second: quorum reads vs lease reads".into(),
        header: [
            "read QPS",
            "T",
            "quorum reads (RT/s)",
            "lease renewals (RT/s)",
            "extra RT/s",
            "quorum / lease",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            "A quorum read costs one round trip; a lease costs one renewal per T, so the ratio is \
             QPS * T. Renewing every T/3 (the usual) triples the lease's cost: divide by 3."
                .into(),
        ],
    }
}

/// (b) The drift margin T * rho: how far the holder's and the grantor's clocks can drift
/// apart over one lease. Its note points to `program`'s `advise` (`program`: the command
/// line's name, such as `leasesim`).
pub fn drift_margin(ts: &[Dur], rhos: &[Ppm], program: &str) -> Table {
    let mut header = vec!["T".to_string()];
    header.extend(rhos.iter().map(|r| format!("rho = {} ppm", r.text)));
    let rows = ts
        .iter()
        .map(|t| {
            let mut row = vec![t.to_string()];
            row.extend(rhos.iter().map(|r| {
                format!(
                    "{} ms",
                    fixed(t.ns() as i128 * r.ppt, PPT_ONE * 1_000_000, 2)
                )
            }));
            row
        })
        .collect();
    Table {
        title: "(b) Drift margin T * rho".into(),
        header,
        rows,
        notes: vec![format!(
            "The least epsilon that covers clock drift alone; steps, pauses and scheduling delay \
             come on top (see `{program} advise`)."
        )],
    }
}

/// (c) The lease left usable: T - allowance - T * rho, for each allowance and rho.
pub fn usable(ts: &[Dur], allowances: &[Dur], rhos: &[Ppm]) -> Table {
    let mut header = vec!["T".to_string()];
    for a in allowances {
        for r in rhos {
            header.push(format!("usable, {a} allowance, rho = {} ppm", r.text));
        }
    }
    let rows = ts
        .iter()
        .map(|t| {
            let mut row = vec![t.to_string()];
            for a in allowances {
                for r in rhos {
                    let t_ns = t.ns() as i128;
                    let ppt_ns = t_ns * PPT_ONE - a.ns() as i128 * PPT_ONE - t_ns * r.ppt;
                    row.push(format!("{} ms", fixed(ppt_ns, PPT_ONE * 1_000_000, 1)));
                }
            }
            row
        })
        .collect();
    Table {
        title: "(c) Usable lease after a fixed allowance and the drift margin".into(),
        header,
        rows,
        notes: vec![
            "usable = T - allowance - T * rho: how long the holder may act on a lease of T. A \
             negative figure means the lease is too short for the allowance."
                .into(),
        ],
    }
}

/// The table as aligned text: numbers right-aligned, the first column left-aligned.
pub fn to_text(t: &Table) -> String {
    let n = t.header.len();
    let mut width = vec![0usize; n];
    for row in std::iter::once(&t.header).chain(&t.rows) {
        for (k, c) in row.iter().enumerate() {
            width[k] = width[k].max(c.chars().count());
        }
    }
    let line = |row: &[String]| -> String {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let pad = width[k] - c.chars().count();
                if k == 0 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        cells.join("  ").trim_end().to_string()
    };
    let mut s = String::new();
    let _ = writeln!(s, "{}\n", t.title);
    let _ = writeln!(s, "{}", line(&t.header));
    let rule: Vec<String> = width.iter().map(|&w| "-".repeat(w)).collect();
    let _ = writeln!(s, "{}", rule.join("  "));
    for r in &t.rows {
        let _ = writeln!(s, "{}", line(r));
    }
    for note in &t.notes {
        let _ = writeln!(s, "\n{note}");
    }
    s
}

/// The table as Markdown.
pub fn to_markdown(t: &Table) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### {}\n", t.title);
    let _ = writeln!(s, "| {} |", t.header.join(" | "));
    let align: Vec<&str> = (0..t.header.len())
        .map(|k| if k == 0 { "---" } else { "---:" })
        .collect();
    let _ = writeln!(s, "|{}|", align.join("|"));
    for r in &t.rows {
        let _ = writeln!(s, "| {} |", r.join(" | "));
    }
    for note in &t.notes {
        let _ = writeln!(s, "\n{note}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(v: &[i64]) -> Vec<Dur> {
        v.iter().map(|&s| Dur::from_secs(s)).collect()
    }

    fn ppm(v: &[&str]) -> Vec<Ppm> {
        v.iter().map(|s| Ppm::parse(s).unwrap()).collect()
    }

    #[test]
    fn rounds_exactly_half_away_from_zero() {
        assert_eq!(fixed(30, 1, 2), "30.00");
        assert_eq!(fixed(1, 8, 2), "0.13"); // 0.125
        assert_eq!(fixed(-1, 8, 2), "-0.13");
        assert_eq!(fixed(-1, 1000, 1), "0.0");
        assert_eq!(trimmed(1, 10, 3), "0.1");
        assert_eq!(trimmed(5, 1, 3), "5");
    }

    #[test]
    fn parses_ppm_exactly() {
        assert_eq!(Ppm::parse("100").unwrap().ppt, 100_000_000);
        assert_eq!(Ppm::parse("0.5").unwrap().ppt, 500_000);
        assert!(Ppm::parse("-1").is_err());
        assert!(Ppm::parse("1e3").is_err());
        assert!(Ppm::parse("0.0000001").is_err());
    }

    #[test]
    fn seed_round_trip_table() {
        let t = round_trips(&[100, 1000, 10000], &secs(&[1, 5, 10]));
        let last = t.rows.last().unwrap();
        assert_eq!(last, &["10000", "10s", "10000", "0.1", "9999.9", "100000x"]);
        assert_eq!(t.rows[0], ["100", "1s", "100", "1", "99", "100x"]);
    }

    #[test]
    fn seed_drift_margin_table() {
        let t = drift_margin(
            &secs(&[1, 5, 10, 30]),
            &ppm(&["10", "100", "1000"]),
            "leasesim",
        );
        assert_eq!(t.rows[0], ["1s", "0.01 ms", "0.10 ms", "1.00 ms"]);
        assert_eq!(t.rows[3], ["30s", "0.30 ms", "3.00 ms", "30.00 ms"]);
    }

    #[test]
    fn seed_usable_table() {
        let t = usable(&secs(&[1, 5, 10, 30]), &[Dur::from_ms(50)], &ppm(&["100"]));
        let col: Vec<&str> = t.rows.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(col, ["949.9 ms", "4949.5 ms", "9949.0 ms", "29947.0 ms"]);
        let short = usable(&[Dur::from_ms(20)], &[Dur::from_ms(50)], &ppm(&["100"]));
        assert_eq!(short.rows[0][1], "-30.0 ms");
    }

    #[test]
    fn renders_aligned_text_and_markdown() {
        let t = drift_margin(&secs(&[1, 30]), &ppm(&["1000"]), "leasesim");
        let text = to_text(&t);
        assert!(text.contains("T    rho = 1000 ppm"), "{text}");
        assert!(text.contains("30s        30.00 ms"), "{text}");
        let md = to_markdown(&t);
        assert!(md.contains("| 30s | 30.00 ms |"), "{md}");
        assert!(md.contains("|---|---:|"), "{md}");
    }
}
