//! What counts as a violation in an exploration, and the kind a shrink must keep: an overlap of
//! one exclusive authority (the write lease, or an exclusive read lease), or, without any
//! overlap, one kind of harm (a stale read, an unsafe write). A zombie action alone is a late
//! action, not a violation. With a liveness bound (`explore --liveness`), a safe run in which
//! no holder served again within the bound after the faults ended is one too.

use crate::oracle::authority::Authority;
use crate::outcome::Summary;
use crate::scenario::Expect;
use crate::time::Dur;
use serde::{Deserialize, Serialize};

/// The kind of a run's violation, judged from its summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Violation {
    /// Two nodes believed at once that they held the exclusive write authority.
    WriteOverlap,
    /// Two nodes believed at once that they held an exclusive read authority.
    ReadOverlap,
    /// No overlap, but a write took effect under a superseded token.
    UnsafeWrites,
    /// No overlap, but a read the client history cannot explain (stale).
    StaleReads,
    /// Safe, but no running node believed it held the lease within the liveness bound after
    /// the run's last fault ended (and the run lasted that long after it).
    NoRecovery,
}

impl Violation {
    /// The run's violation, if it had one: an overlap first (of the authority of its first
    /// overlap interval), then the harms in the order unsafe writes, stale reads. `None` for a
    /// SAFE run.
    pub fn of(s: &Summary) -> Option<Violation> {
        if let Some(i) = s.overlap.intervals.first() {
            return Some(match i.authority {
                Authority::Write => Violation::WriteOverlap,
                Authority::Read => Violation::ReadOverlap,
            });
        }
        if s.unsafe_writes > 0 {
            Some(Violation::UnsafeWrites)
        } else if s.stale_reads > 0 {
            Some(Violation::StaleReads)
        } else {
            None
        }
    }

    /// [`Violation::of`], and with a liveness bound, [`Violation::NoRecovery`] for a run that
    /// is otherwise safe and did not recover within it.
    pub fn judge(s: &Summary, liveness: Option<Dur>) -> Option<Violation> {
        Violation::of(s).or_else(|| {
            let late = liveness.is_some_and(|within| recovered_late(s, within));
            late.then_some(Violation::NoRecovery)
        })
    }

    /// True when `s` still shows this kind of violation (what a shrink keeps): an overlap of
    /// the same authority, or the same harm (with or without an overlap), or no recovery
    /// within `liveness`.
    pub fn shown_by(self, s: &Summary, liveness: Option<Dur>) -> bool {
        let overlap_of = |a: Authority| s.overlap.intervals.iter().any(|i| i.authority == a);
        match self {
            Violation::WriteOverlap => overlap_of(Authority::Write),
            Violation::ReadOverlap => overlap_of(Authority::Read),
            Violation::UnsafeWrites => s.unsafe_writes > 0,
            Violation::StaleReads => s.stale_reads > 0,
            Violation::NoRecovery => liveness.is_some_and(|within| recovered_late(s, within)),
        }
    }

    /// In a few words, for reports: "an overlap of the write lease".
    pub fn words(self) -> &'static str {
        match self {
            Violation::WriteOverlap => "an overlap of the write lease",
            Violation::ReadOverlap => "an overlap of an exclusive read lease",
            Violation::UnsafeWrites => "unsafe writes",
            Violation::StaleReads => "stale reads",
            Violation::NoRecovery => "no holder serving within the liveness bound",
        }
    }

    /// An `expect` block that pins what `s` (a run showing this violation) found: for an
    /// overlap, that there was one, how many, and the longest exactly; for a harm, that there
    /// was no overlap and the harm happened.
    pub fn pin(self, s: &Summary) -> Expect {
        let mut e = Expect::default();
        match self {
            Violation::WriteOverlap | Violation::ReadOverlap => {
                e.overlap = Some(true);
                e.overlap_count = Some(s.overlap.count);
                e.max_overlap_at_least = Some(Dur::from_ns(s.overlap.max_ns));
                e.max_overlap_at_most = Some(Dur::from_ns(s.overlap.max_ns));
            }
            Violation::UnsafeWrites => {
                e.overlap = Some(s.overlap.count > 0);
                e.unsafe_writes = Some(true);
            }
            Violation::StaleReads => {
                e.overlap = Some(s.overlap.count > 0);
                e.stale_reads = Some(true);
            }
            Violation::NoRecovery => {
                // Safe, and down at least from the faults' end to the recovery (or the end).
                e.overlap = Some(false);
                let down = s.recovery_ns.unwrap_or(s.duration_ns - s.faults_end_ns);
                e.max_unavailable_at_least = Some(Dur::from_ns(down));
            }
        }
        e
    }
}

/// Whether the run ended at least `within` after its last fault and no running node believed
/// within `within` of that fault's end. A run that ended sooner is not judged: the bound had
/// not run out.
pub fn recovered_late(s: &Summary, within: Dur) -> bool {
    let judged = s.duration_ns - s.faults_end_ns >= within.ns();
    judged && s.recovery_ns.is_none_or(|r| r > within.ns())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::IntervalOut;

    /// A SAFE run's summary (the bundled two-sided Q4 story), to change one figure at a time.
    fn safe() -> Summary {
        let text = crate::scenario::library::text("q4-gc-pause-two-sided").expect("bundled");
        let s = crate::Scenario::from_ron(text).expect("parses");
        let summary = crate::run("q4", &s).expect("builds").summary;
        assert_eq!(Violation::of(&summary), None);
        summary
    }

    fn with(f: impl FnOnce(&mut Summary)) -> Summary {
        let mut s = safe();
        f(&mut s);
        s
    }

    fn overlap(authority: Authority) -> IntervalOut {
        IntervalOut {
            start_ns: 1,
            end_ns: 2,
            nodes: vec!["a".into(), "b".into()],
            authority,
        }
    }

    /// An overlap comes first, of its first interval's authority; then unsafe writes, then
    /// stale reads; one harm alone is enough.
    #[test]
    fn a_run_is_judged_overlap_first_then_unsafe_writes_then_stale_reads() {
        let stale = with(|s| s.stale_reads = 1);
        assert_eq!(Violation::of(&stale), Some(Violation::StaleReads));
        let unsafe_write = with(|s| s.unsafe_writes = 1);
        assert_eq!(Violation::of(&unsafe_write), Some(Violation::UnsafeWrites));
        let both = with(|s| (s.unsafe_writes, s.stale_reads) = (1, 1));
        assert_eq!(Violation::of(&both), Some(Violation::UnsafeWrites));
        let read_first = with(|s| {
            s.overlap.intervals = vec![overlap(Authority::Read), overlap(Authority::Write)];
            s.unsafe_writes = 1;
        });
        assert_eq!(Violation::of(&read_first), Some(Violation::ReadOverlap));
        let write = with(|s| s.overlap.intervals = vec![overlap(Authority::Write)]);
        assert_eq!(Violation::of(&write), Some(Violation::WriteOverlap));
        let zombie = with(|s| s.zombie_actions = 5);
        assert_eq!(
            Violation::of(&zombie),
            None,
            "a zombie action is not a violation"
        );
    }

    /// A shrink keeps a run while it shows the same kind: the same authority overlapping, or
    /// the same harm with or without an overlap.
    #[test]
    fn a_violation_is_shown_by_the_same_authority_or_the_same_harm() {
        let safe = safe();
        let stale = with(|s| s.stale_reads = 2);
        let unsafe_write = with(|s| s.unsafe_writes = 2);
        let read = with(|s| s.overlap.intervals = vec![overlap(Authority::Read)]);
        let write = with(|s| s.overlap.intervals = vec![overlap(Authority::Write)]);
        let cases = [
            (Violation::StaleReads, [false, true, false, false, false]),
            (Violation::UnsafeWrites, [false, false, true, false, false]),
            (Violation::ReadOverlap, [false, false, false, true, false]),
            (Violation::WriteOverlap, [false, false, false, false, true]),
        ];
        for (v, shown) in cases {
            let got = [&safe, &stale, &unsafe_write, &read, &write].map(|s| v.shown_by(s, None));
            assert_eq!(got, shown, "{v:?}");
        }
        let stale_and_overlap = with(|s| {
            s.stale_reads = 1;
            s.overlap.intervals = vec![overlap(Authority::Write)];
        });
        assert!(Violation::StaleReads.shown_by(&stale_and_overlap, None));
    }

    /// The pin of a harm says whether the run also overlapped; the pin of an overlap gives its
    /// count and its longest interval exactly.
    #[test]
    fn a_pin_holds_what_the_run_showed() {
        let stale = with(|s| s.stale_reads = 1);
        let e = Violation::StaleReads.pin(&stale);
        assert_eq!(
            (e.overlap, e.stale_reads, e.unsafe_writes),
            (Some(false), Some(true), None)
        );
        let both = with(|s| {
            (s.unsafe_writes, s.overlap.count) = (1, 1);
        });
        let e = Violation::UnsafeWrites.pin(&with(|s| s.unsafe_writes = 1));
        assert_eq!((e.overlap, e.unsafe_writes), (Some(false), Some(true)));
        let e = Violation::UnsafeWrites.pin(&both);
        assert_eq!(
            (e.overlap, e.unsafe_writes, e.stale_reads),
            (Some(true), Some(true), None)
        );
        let e = Violation::StaleReads.pin(&with(|s| (s.stale_reads, s.overlap.count) = (1, 2)));
        assert_eq!(e.overlap, Some(true));
        let overlap = with(|s| (s.overlap.count, s.overlap.max_ns) = (3, 42));
        let e = Violation::WriteOverlap.pin(&overlap);
        assert_eq!((e.overlap, e.overlap_count), (Some(true), Some(3)));
        let exact = Some(Dur::from_ns(42));
        assert_eq!(
            (e.max_overlap_at_least, e.max_overlap_at_most),
            (exact, exact)
        );
    }

    #[test]
    fn a_late_recovery_is_a_violation_only_once_the_bound_has_run_out() {
        // Faults end at 10 s of a 20 s run, bound 5 s: recovered after 4 s or at the bound
        // itself is in time, after 6 s late; never recovered is late (10 s passed with no
        // holder). In a run ending at 14 s, never recovered is not judged (only 4 s passed);
        // ending at 15 s, it is.
        let s = |duration: i64, recovery: Option<i64>| {
            with(|x| {
                x.duration_ns = duration;
                x.faults_end_ns = 10_000_000_000;
                x.recovery_ns = recovery;
            })
        };
        let b = Some(Dur::from_secs(5));
        let judge = |x: &Summary| Violation::judge(x, b);
        assert_eq!(judge(&s(20_000_000_000, Some(4_000_000_000))), None);
        assert_eq!(judge(&s(20_000_000_000, Some(5_000_000_000))), None);
        assert_eq!(
            judge(&s(20_000_000_000, Some(6_000_000_000))),
            Some(Violation::NoRecovery)
        );
        assert_eq!(judge(&s(20_000_000_000, None)), Some(Violation::NoRecovery));
        assert_eq!(judge(&s(14_000_000_000, None)), None);
        assert_eq!(judge(&s(15_000_000_000, None)), Some(Violation::NoRecovery));
        // Without a bound it is no violation; a safety violation comes first.
        assert_eq!(Violation::judge(&s(20_000_000_000, None), None), None);
        let both = with(|x| {
            x.faults_end_ns = 0;
            x.recovery_ns = None;
            x.overlap.intervals.push(overlap(Authority::Write));
        });
        assert_eq!(Violation::judge(&both, b), Some(Violation::WriteOverlap));
        assert!(Violation::NoRecovery.shown_by(&s(20_000_000_000, None), b));
        assert!(!Violation::NoRecovery.shown_by(&s(20_000_000_000, None), None));
        // The pin: no overlap, down at least from the faults' end to the recovery (or the end).
        let e = Violation::NoRecovery.pin(&s(20_000_000_000, Some(6_000_000_000)));
        assert_eq!(e.overlap, Some(false));
        assert_eq!(e.max_unavailable_at_least, Some(Dur::from_secs(6)));
        let e = Violation::NoRecovery.pin(&s(20_000_000_000, None));
        assert_eq!(e.max_unavailable_at_least, Some(Dur::from_secs(10)));
    }
}
