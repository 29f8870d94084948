//! Which stretch of a run a chart's zoom panel shows: the first overlap too short to see at the
//! scale of the run, and enough time before it to show its cause.
//!
//! Pure arithmetic on a [`Timeline`] in integer nanoseconds; nothing here knows pixels.

use super::timeline::Timeline;

/// A zoom window: the overlap it is about and the true-time span it shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoomWindow {
    /// Index of the overlap in [`Timeline::overlaps`].
    pub overlap: usize,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// Whether an overlap of `len_ns` in a run of `run_ns` is too short to see (under 1% of the run).
pub fn needs_zoom(len_ns: i64, run_ns: i64) -> bool {
    (len_ns as i128) * 100 < run_ns.max(1) as i128
}

/// The instants of `tl` that can cause an overlap: grants and expiries, pause, crash and cut
/// edges, clock steps, drift changes and restarts.
fn causes_ns(tl: &Timeline) -> Vec<i64> {
    let mut events: Vec<i64> = Vec::new();
    for g in &tl.grants {
        events.extend([g.start.ns(), g.until.ns()]);
    }
    for p in &tl.pauses {
        events.extend([p.span.start.ns(), p.span.end.ns()]);
    }
    for d in &tl.down {
        events.extend([d.start.ns(), d.end.ns()]);
    }
    for c in &tl.cuts {
        events.extend([c.start.ns(), c.end.ns()]);
    }
    events.extend(tl.clock_steps.iter().map(|x| x.0.ns()));
    events.extend(tl.drift_changes.iter().map(|x| x.0.ns()));
    events.extend(tl.restarts.iter().map(|x| x.0.ns()));
    events
}

/// The zoom window of `tl`: its first overlap shorter than 1% of the run, seen from just before
/// the latest cause (see [`causes_ns`]) within `max(20 * overlap, 5 ms)` before it; `None` when
/// no overlap is that short.
///
/// The window starts at `min(start - 2 * len, cause - max(len / 2, (start - cause) / 4))` (not
/// before 0) and ends at `end + max(len, (end - lo) / 6)` (not after the run).
pub fn zoom_window(tl: &Timeline) -> Option<ZoomWindow> {
    let run = tl.end.ns();
    let (i, o) = tl
        .overlaps
        .iter()
        .enumerate()
        .find(|(_, o)| needs_zoom(o.end.ns() - o.start.ns(), run))?;
    let (s, e) = (o.start.ns(), o.end.ns());
    let len = (e - s).max(1);
    let lookback = (20 * len).max(5_000_000);
    let cause = causes_ns(tl)
        .into_iter()
        .filter(|&t| t < s && t >= s - lookback)
        .max();
    let mut lo = s - 2 * len;
    if let Some(c) = cause {
        lo = lo.min(c - (len / 2).max((s - c) / 4));
    }
    let lo = lo.max(0);
    let hi = (e + len.max((e - lo) / 6)).min(run.max(e));
    Some(ZoomWindow {
        overlap: i,
        start_ns: lo,
        end_ns: hi,
    })
}

/// The zoom window shared by several runs of one fault schedule: the first run's (the
/// scenario's own strategy, as `compare` orders them) if it has one, else the next run's.
pub fn shared_zoom_window<'a>(
    runs: impl IntoIterator<Item = &'a Timeline>,
) -> Option<(usize, ZoomWindow)> {
    runs.into_iter()
        .enumerate()
        .find_map(|(k, tl)| zoom_window(tl).map(|z| (k, z)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::Overlap;
    use crate::time::SimTime;
    use crate::trace::timeline::GrantSpan;

    fn t(ns: i64) -> SimTime {
        SimTime::from_ns(ns)
    }

    fn run(overlaps: &[(i64, i64)], grants: &[(i64, i64)]) -> Timeline {
        Timeline {
            node_names: vec!["lock".into(), "a".into(), "b".into()],
            end: t(30_000_000_000),
            overlaps: overlaps
                .iter()
                .map(|&(s, e)| Overlap {
                    start: t(s),
                    end: t(e),
                    nodes: vec![1, 2],
                })
                .collect(),
            grants: grants
                .iter()
                .map(|&(s, u)| GrantSpan {
                    grantor: 0,
                    to: 2,
                    token: 2,
                    start: t(s),
                    until: t(u),
                })
                .collect(),
            ..Timeline::default()
        }
    }

    #[test]
    fn the_window_starts_before_the_grant_that_caused_the_overlap() {
        // Overlap [19.004 s, 19.007 s): len 3 ms, lookback max(60 ms, 5 ms) = 60 ms.
        // The grant at 18.990 s is the latest cause before it: s - c = 14 ms,
        // lo = min(19.004 s - 6 ms, 18.990 s - max(1.5 ms, 3.5 ms)) = 18.9865 s;
        // hi = 19.007 s + max(3 ms, (19.007 - 18.9865) s / 6 = 3.416666 ms) = 19.010416666 s.
        let tl = run(
            &[(19_004_000_000, 19_007_000_000)],
            &[(18_990_000_000, 38_000_000_000)],
        );
        assert_eq!(
            zoom_window(&tl),
            Some(ZoomWindow {
                overlap: 0,
                start_ns: 18_986_500_000,
                end_ns: 19_010_416_666
            })
        );
        // Without a cause in reach: [s - 2 len, e + max(len, (e - lo) / 6)]
        // = [18.998 s, 19.007 s + 3 ms].
        let tl = run(
            &[(19_004_000_000, 19_007_000_000)],
            &[(1_000_000_000, 2_000_000_000)],
        );
        let z = zoom_window(&tl).unwrap();
        assert_eq!((z.start_ns, z.end_ns), (18_998_000_000, 19_010_000_000));
    }

    #[test]
    fn an_overlap_of_one_percent_or_more_is_not_zoomed() {
        // 300 ms of a 30 s run is exactly 1%.
        let tl = run(&[(1_000_000_000, 1_300_000_000)], &[]);
        assert_eq!(zoom_window(&tl), None);
        // The first short one is chosen, not the long one before it.
        let tl = run(
            &[
                (1_000_000_000, 1_300_000_000),
                (5_000_000_000, 5_000_001_000),
            ],
            &[],
        );
        assert_eq!(zoom_window(&tl).map(|z| z.overlap), Some(1));
        assert!(needs_zoom(299_999_999, 30_000_000_000));
        assert!(!needs_zoom(300_000_000, 30_000_000_000));
    }

    #[test]
    fn several_runs_share_the_first_runs_window_else_the_next() {
        let none = run(&[], &[]);
        let one = run(&[(19_004_000_000, 19_007_000_000)], &[]);
        assert_eq!(shared_zoom_window([&none, &one]).map(|w| w.0), Some(1));
        assert_eq!(shared_zoom_window([&one, &none]).map(|w| w.0), Some(0));
        assert_eq!(shared_zoom_window([&none, &none]), None);
    }
}
