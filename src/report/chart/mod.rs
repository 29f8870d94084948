//! Charts (PNG and SVG) drawn with plotters and the embedded font.
//!
//! [`timeline`] draws one run, [`compare`] several runs of one fault schedule side by side,
//! [`throughput`] their reads and writes per ms on one time axis, [`sweep`] a sweep's charts and
//! [`slack`] an exploration's slack histogram. Each lays its chart out once
//! as a [`scene::Scene`] (a display list in pixels) and renders that to both SVG and PNG, so the
//! two files show the same thing and are byte-identical run to run.
//! Shared here: the [`ChartFiles`] a chart returns and the tick helper for time axes.

pub mod compare;
pub mod font;
pub mod labels;
pub mod scene;
pub mod slack;
pub mod sweep;
pub mod throughput;
pub mod timeline;

/// One chart as SVG text and PNG bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChartFiles {
    pub svg: String,
    pub png: Vec<u8>,
}

/// A unit for nanosecond values on an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeUnit {
    /// As an axis label writes it: `s`, `ms`, `us`, `ns`.
    pub name: &'static str,
    /// Nanoseconds per unit.
    pub ns: i64,
}

/// The units an axis may use, largest first.
pub const TIME_UNITS: [TimeUnit; 4] = [
    TimeUnit {
        name: "s",
        ns: 1_000_000_000,
    },
    TimeUnit {
        name: "ms",
        ns: 1_000_000,
    },
    TimeUnit {
        name: "us",
        ns: 1_000,
    },
    TimeUnit { name: "ns", ns: 1 },
];

impl TimeUnit {
    /// `ns` in this unit with exactly `decimals` decimals, from integers (no float rounding).
    pub fn format(self, ns: i64, decimals: usize) -> String {
        let sign = if ns < 0 { "-" } else { "" };
        let a = ns.unsigned_abs();
        let per = self.ns as u64;
        let whole = a / per;
        if decimals == 0 {
            return format!("{sign}{whole}");
        }
        let scale = 10u64.pow(decimals as u32);
        let frac = (a % per) as u128 * scale as u128 / per as u128;
        format!("{sign}{whole}.{frac:0decimals$}")
    }

    /// `ns` in this unit with the decimals it needs and no more (`1.5`, `2`, `0.25`): at most
    /// those that write multiples of `step_ns` exactly, trailing zeros dropped.
    pub fn format_trimmed(self, ns: i64, step_ns: i64) -> String {
        let s = self.format(ns, self.decimals_for(step_ns));
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }

    /// The decimals this unit needs to write multiples of `step_ns` exactly.
    pub fn decimals_for(self, step_ns: i64) -> usize {
        let mut d = 0;
        let mut q = self.ns;
        while q > 1 && step_ns % q != 0 {
            q /= 10;
            d += 1;
        }
        d
    }
}

/// Ticks of an axis of nanosecond values: where they are, in which unit, and their labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ticks {
    pub unit: TimeUnit,
    pub step_ns: i64,
    /// Tick positions (ns), multiples of `step_ns` within the range.
    pub at: Vec<i64>,
    /// One label per tick, in `unit`, without the unit.
    pub labels: Vec<String>,
}

/// Ticks for the range `[lo, hi]` (ns), at most `max_ticks` steps apart end to end, at a 1-2-5 step. Each
/// label has the digits it needs and no more (`0`, `0.5`, `1`, `1.5`: never `1.0` or
/// `1.500000`). The unit is the one whose labels are shortest (then: with fewest decimals,
/// then: the larger unit), so a 40 s run reads `0 .. 40` in s, a 2 s run `0, 0.5, 1, 1.5, 2` in
/// s, a 600 ms run `0 .. 600` in ms, a 10 ms window at 19 s `19000 .. 19010` in ms, and an
/// error of up to 0.4 s `-400 .. 0` in ms.
///
/// Bounded whatever the range: at most `max_ticks + 1` ticks, even for a span near the whole of
/// `i64` (a clock error of 10^18 ns once asked for 10^18 ticks); the arithmetic is in i128.
pub fn time_ticks(lo: i64, hi: i64, max_ticks: usize) -> Ticks {
    let span = (hi as i128 - lo as i128).max(1);
    let max_ticks = max_ticks.max(1) as i128;
    // The 1-2-5 steps that fit an i64, smallest first; the largest if none is coarse enough.
    let steps = (0..=18u32).flat_map(|exp| [1i64, 2, 5].map(|m| m.checked_mul(10i64.pow(exp))));
    let step = steps
        .clone()
        .flatten()
        .find(|&s| (span + s as i128 - 1) / s as i128 <= max_ticks)
        .unwrap_or_else(|| steps.flatten().last().expect("steps exist"));
    let first = lo.div_euclid(step) as i128 + i128::from(lo.rem_euclid(step) != 0);
    let at: Vec<i64> = (0..=max_ticks)
        .map(|k| (first + k) * step as i128)
        .take_while(|&t| t <= hi as i128)
        .map(|t| t as i64)
        .collect();
    let mut best: Option<((usize, usize), TimeUnit, Vec<String>)> = None;
    for unit in TIME_UNITS {
        let d = unit.decimals_for(step);
        let labels: Vec<String> = at.iter().map(|&t| unit.format_trimmed(t, step)).collect();
        let len = labels.iter().map(|l| l.len()).max().unwrap_or(0);
        // Shortest labels first, then fewest decimals (`-200` ms over `-0.2` s).
        if best.as_ref().is_none_or(|(l, _, _)| (len, d) < *l) {
            best = Some(((len, d), unit, labels));
        }
    }
    let (_, unit, labels) = best.expect("four units were tried");
    Ticks {
        unit,
        step_ns: step,
        at,
        labels,
    }
}

/// Labels for the durations `values_ns` (a swept T or epsilon) in one unit, each with the
/// digits it needs and no more: the unit whose longest label is shortest, then the larger one
/// (`2 ms .. 20 ms`, `0.5 s, 1.5 s`, never `0.500 s` or `1500ms` beside `2s`).
pub fn duration_labels(values_ns: &[i64]) -> Vec<String> {
    let mut best: Option<(usize, Vec<String>)> = None;
    for unit in TIME_UNITS {
        let labels: Vec<String> = values_ns
            .iter()
            .map(|&v| unit.format_trimmed(v, v.max(1)))
            .collect();
        let len = labels.iter().map(String::len).max().unwrap_or(0);
        if best.as_ref().is_none_or(|(l, _)| len < *l) {
            best = Some((
                len,
                labels
                    .into_iter()
                    .map(|l| format!("{l} {}", unit.name))
                    .collect(),
            ));
        }
    }
    best.map(|b| b.1).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_pick_a_unit_that_fits() {
        let t = time_ticks(0, 40_000_000_000, 10);
        assert_eq!(t.unit.name, "s");
        assert_eq!(t.labels.first().map(String::as_str), Some("0"));
        assert_eq!(t.labels.last().map(String::as_str), Some("40"));
        let t = time_ticks(18_998_000_000, 19_010_000_000, 8);
        assert_eq!(t.unit.name, "ms");
        assert!(t.labels.contains(&"19000".to_string()), "{t:?}");
        let t = time_ticks(0, 1_000_000, 10);
        assert_eq!((t.unit.name, t.labels[1].as_str()), ("ms", "0.1"));
        let t = time_ticks(-400_000_000, 0, 2);
        assert_eq!((t.unit.name, t.labels[0].as_str()), ("ms", "-400"));
        let t = time_ticks(-40_000_000, 0, 3);
        assert_eq!(t.unit.name, "ms");
        assert_eq!(t.labels, ["-40", "-20", "0"]);
    }

    #[test]
    fn tick_labels_carry_no_useless_digits() {
        // 0..2 s in at most 4 steps: a 500 ms step. In s the labels are 0, 0.5, 1, 1.5, 2
        // (3 characters at most); in ms 0 .. 2000 (4): s wins, and 1_500_000_000 ns reads 1.5.
        let t = time_ticks(0, 2_000_000_000, 4);
        assert_eq!((t.unit.name, t.step_ns), ("s", 500_000_000));
        assert_eq!(t.labels, ["0", "0.5", "1", "1.5", "2"]);
        // 0..600 ms in at most 6 steps: 100 ms. In s 0.1 .. 0.6 (3 characters, 1 decimal), in
        // ms 100 .. 600 (3, none): ms wins on decimals, so 500 ms reads 500, not 0.500.
        let t = time_ticks(0, 600_000_000, 6);
        assert_eq!(t.unit.name, "ms");
        assert_eq!(t.labels[5], "500");
        // 0..1 s in at most 5 steps: 200 ms. In s 0, 0.2 .. 0.8, 1 (3 characters); in ms
        // 0 .. 1000 (4): s, with no `0.0` or `1.0`.
        let t = time_ticks(0, 1_000_000_000, 5);
        assert_eq!(t.labels, ["0", "0.2", "0.4", "0.6", "0.8", "1"]);
        // A step of 250 ms writes two decimals in s; 1.5 s needs one.
        assert_eq!(
            TIME_UNITS[0].format_trimmed(1_500_000_000, 250_000_000),
            "1.5"
        );
        assert_eq!(TIME_UNITS[1].format_trimmed(-2_000_000, 500_000), "-2");
    }

    #[test]
    fn swept_durations_share_the_unit_that_writes_them_shortest() {
        // 2, 5, 10, 20 ms: 2 characters in ms, 5 in s (0.002), 5 in us (20000).
        assert_eq!(
            duration_labels(&[2_000_000, 5_000_000, 10_000_000, 20_000_000]),
            ["2 ms", "5 ms", "10 ms", "20 ms"]
        );
        // 500 ms and 1.5 s: 0.5 and 1.5 in s (3 characters), 500 and 1500 in ms (4).
        assert_eq!(
            duration_labels(&[500_000_000, 1_500_000_000]),
            ["0.5 s", "1.5 s"]
        );
        // 0 reads 0 in any unit, so the others decide: 0 and 2 s.
        assert_eq!(duration_labels(&[0, 2_000_000_000]), ["0 s", "2 s"]);
    }

    #[test]
    fn ticks_are_bounded_for_any_range() {
        for (lo, hi) in [
            (0, i64::MAX),
            (i64::MIN, i64::MAX),
            (-1_080_000_000_000_000_000, 0),
            (i64::MIN, i64::MIN + 1),
            (i64::MAX - 1, i64::MAX),
        ] {
            let t = time_ticks(lo, hi, 2);
            assert!(t.at.len() <= 3, "{lo}..{hi}: {t:?}");
            assert!(t.at.iter().all(|&x| lo <= x && x <= hi));
        }
    }

    #[test]
    fn format_is_exact() {
        assert_eq!(TIME_UNITS[0].format(-1_500_000_000, 1), "-1.5");
        assert_eq!(TIME_UNITS[1].format(19_004_000_000, 0), "19004");
        assert_eq!(TIME_UNITS[0].format(19_004_000_000, 3), "19.004");
    }
}
