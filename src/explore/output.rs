//! The files an exploration writes, as values and bytes: a shard's partial ([`Partial`], what
//! `explore-merge` reads back), `explore.json` ([`ExploreJson`]), `runs.csv`, the
//! counterexample's and the nearest miss's RON, and the words the terminal and the files share.
//! Writing them to disk, and the charts beside them, are the command line's.

use super::RunRecord;
use crate::outcome::Summary;
use crate::scenario::nemesis::Nemesis;
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// What a shard writes: everything the merge needs to give the one-machine answer.
#[derive(Serialize, Deserialize)]
pub struct Partial {
    pub name: String,
    /// The command as the user would run it on one machine (the counterexample cites it).
    pub command: String,
    /// The scenario with the envelope explored as its `nemesis`, as RON.
    pub scenario: String,
    pub swarm: bool,
    pub runs: u64,
    pub shard: (u64, u64),
    pub records: Vec<RunRecord>,
    /// The liveness bound, if the exploration had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<crate::time::Dur>,
}

/// What `explore.json` says (the same bytes from one machine and from a merge).
#[derive(Serialize)]
pub struct ExploreJson<'a> {
    pub scenario: &'a str,
    pub strategy: String,
    pub command: &'a str,
    pub nemesis: String,
    pub swarm: bool,
    /// `guided` or `swarm`.
    pub search: &'static str,
    pub runs: u64,
    /// Runs done: every run, or up to and including the first violation.
    pub runs_done: u64,
    pub violation: Option<ViolationOut>,
    pub nearest_miss: Option<MissOut>,
    /// How many runs had a handover, and their slack: how strong the evidence is.
    pub power: PowerOut,
    /// An exhaustive search's grid and what it proved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exhaustive: Option<ExhaustiveOut>,
    /// A guided search some of whose bred generations were captured by one outcome
    /// ([`super::guided::captured_generations`]; absent when none was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub captured_generations: Option<Captured>,
}

/// Bred generations captured by one outcome, of those bred.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Captured {
    pub captured: u64,
    pub of: u64,
}

impl Captured {
    /// The terminal's words: "12 of 60 bred generations ...".
    pub fn words(&self) -> String {
        format!(
            "{} of {} bred generations were captured by one outcome (three in four of their \
             bred runs alike): the search kept breeding one lineage",
            self.captured, self.of
        )
    }
}

/// `explore.json`'s `exhaustive`: the grid searched, the schedules, and the statement.
#[derive(Clone, Debug, Serialize)]
pub struct ExhaustiveOut {
    pub faults: usize,
    /// Offsets from each moment, in fractions of the lease term.
    pub offsets: Vec<String>,
    pub moments: Vec<String>,
    /// Faults in the alphabet (each kind of the envelope on each target, at its largest size).
    pub letters: u64,
    /// Drift placements searched from.
    pub roots: u64,
    /// Moments of the searched kinds in the runs without faults.
    pub root_moments: u64,
    pub schedules: u64,
    pub duplicates: u64,
    pub invalid: u64,
    /// Every schedule of the grid ran without a violation.
    pub proved: bool,
    /// What was proved, or how far the search got, in words.
    pub statement: String,
}

impl ExhaustiveOut {
    /// The entry of an exhaustive search of `e` over `grid` that did `p`.
    pub fn of(
        e: &super::Exploration,
        grid: &super::exhaustive::Grid,
        p: &super::exhaustive::Proof,
    ) -> ExhaustiveOut {
        ExhaustiveOut {
            faults: grid.faults,
            offsets: grid.offsets.iter().map(|o| o.to_string()).collect(),
            moments: grid
                .moments
                .iter()
                .map(|m| format!("{m:?}").to_lowercase())
                .collect(),
            letters: p.letters,
            roots: p.roots,
            root_moments: p.root_moments,
            schedules: p.schedules,
            duplicates: p.duplicates,
            invalid: p.invalid,
            proved: p.complete,
            statement: super::exhaustive::statement(e, grid, p),
        }
    }
}

/// `explore.json`'s `violation`: the run, what it showed, and the shrink's before and after.
#[derive(Serialize)]
pub struct ViolationOut {
    pub run: u64,
    pub seed: u64,
    pub kind: super::Violation,
    pub kinds: Vec<String>,
    pub before: SizeOut,
    pub after: SizeOut,
    pub shrink_runs: u64,
    /// What of its budget ran out, if the shrink stopped before its fixpoint (`runs`, `time`).
    pub shrink_stopped: Option<super::shrink::Stopped>,
    pub file: &'static str,
}

/// The size of a scenario, before or after the shrink.
#[derive(Serialize)]
pub struct SizeOut {
    pub faults: usize,
    pub nodes: usize,
    pub duration_ns: i64,
}

impl SizeOut {
    pub fn of(s: &Scenario) -> SizeOut {
        SizeOut {
            faults: s.faults.len(),
            nodes: s.nodes.len(),
            duration_ns: s.duration.ns(),
        }
    }
}

/// `explore.json`'s `nearest_miss`: the run with the smallest slack, when nothing was found.
#[derive(Serialize)]
pub struct MissOut {
    pub run: u64,
    pub seed: u64,
    pub kinds: Vec<String>,
    pub min_slack_ns: i64,
    pub file: &'static str,
}

/// The envelope as RON, as `explore.json` gives it.
pub fn nemesis_ron(n: &Nemesis) -> String {
    crate::scenario::ron_options()
        .to_string(n)
        .expect("a nemesis serializes")
}

/// `runs.csv`: one line per run done, in run order.
pub fn runs_csv(records: &[RunRecord]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "run",
        "seed",
        "kinds",
        "violation",
        "min_slack_ns",
        "closest_call_ns",
        "events",
    ])
    .expect("in memory");
    for r in records {
        let violation = r.violation.map_or(String::new(), |v| {
            serde_json::to_value(v)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        });
        w.write_record([
            r.run.to_string(),
            r.seed.to_string(),
            r.kinds.join("+"),
            violation,
            r.min_slack_ns.map_or(String::new(), |s| s.to_string()),
            r.closest_call_ns.map_or(String::new(), |s| s.to_string()),
            r.events.to_string(),
        ])
        .expect("in memory");
    }
    w.into_inner().expect("in memory")
}

/// `counterexample.ron`: the shrunk scenario, minimal, under a header citing `command` and
/// how `program` (the command line's name, such as `leasesim`) replays it.
pub fn counterexample_text(c: &Scenario, command: &str, program: &str) -> String {
    format!(
        "// A counterexample found and shrunk by `{command}`.\n\
         // Every fault is explicit; `{program} run` on this file replays the violation, and its\n\
         // `expect` block pins it.\n{}",
        c.to_ron_minimal()
    )
}

/// `nearest-miss.ron`: the run with the smallest slack, every fault explicit, no `expect`.
pub fn nearest_miss_text(s: &Scenario, command: &str, r: &RunRecord) -> String {
    let mut s = s.clone();
    s.description = format!(
        "The nearest miss of `{command}`: run {} (seed {}, kinds {}), {} of slack; every fault \
         of the run is explicit.",
        r.run,
        r.seed,
        kinds_words(&r.kinds),
        crate::time::format_ns(r.min_slack_ns.unwrap_or(0))
    );
    s.expect = None;
    s.to_ron_minimal()
}

/// The counterexample's figures in one line; for a liveness violation, its recovery too.
pub fn found_words(s: &Summary, v: crate::explore::Violation) -> String {
    use crate::time::format_ns;
    let safety = format!(
        "{} overlap(s), max {}; zombie actions {}, stale reads {}, unsafe writes {}",
        s.overlap.count,
        format_ns(s.overlap.max_ns),
        s.zombie_actions,
        s.stale_reads,
        s.unsafe_writes
    );
    if v != crate::explore::Violation::NoRecovery {
        return safety;
    }
    let end = format_ns(s.faults_end_ns);
    let recovery = match s.recovery_ns {
        Some(r) => format!(
            "a holder served {} after the faults ended at {end}",
            format_ns(r)
        ),
        None => format!(
            "no holder served from the faults' end at {end} to the run's end at {}",
            format_ns(s.duration_ns)
        ),
    };
    format!("{safety}; {recovery}")
}

/// The kinds a run enabled, or "none".
pub fn kinds_words(kinds: &[String]) -> String {
    if kinds.is_empty() {
        "none".to_string()
    } else {
        kinds.join(", ")
    }
}

/// "1 fault", "5 faults".
pub fn faults_words(n: usize) -> String {
    format!("{n} fault{}", if n == 1 { "" } else { "s" })
}

/// Below this many runs with a handover, an exploration without a violation is weak evidence:
/// most runs never put the lease between two holders, so they could not have shown an overlap.
pub const STRONG_HANDOVERS: u64 = 100;

/// How strong an exploration's evidence is (`explore.json`'s `power`): how many runs had a
/// handover of the lease (a slack at all), the least slack, and the slack's spread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PowerOut {
    /// Runs done.
    pub runs: u64,
    /// Runs with a handover: those with a slack.
    pub handovers: u64,
    /// The least slack of any run (negative at an overlap).
    pub least_slack_ns: Option<i64>,
    /// The slack over the runs with a handover, by nearest rank.
    pub slack_ns: Option<Quantiles>,
    /// Fewer than [`STRONG_HANDOVERS`] runs had a handover.
    pub weak: bool,
    /// More than half of the runs with a handover share one slack value (null: they do not).
    pub collapsed: Option<Collapsed>,
    /// More than half of all runs share one outcome: one slack, or, without a handover, one
    /// closest call (null: they do not).
    pub repeated: Option<Repeated>,
}

/// Most runs with a handover had exactly the same slack: the search mostly repeated one
/// outcome, so its count of handovers overstates what it tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Collapsed {
    /// Runs with that slack.
    pub runs: u64,
    /// Runs with a handover.
    pub of: u64,
    pub slack_ns: i64,
}

/// Most of all the runs had one outcome: the same slack, or no handover and the same closest
/// call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Repeated {
    /// Runs with that outcome.
    pub runs: u64,
    /// Runs done.
    pub of: u64,
    /// `slack` (a handover with that slack) or `closest_call` (no handover, that closest call).
    pub outcome: &'static str,
    /// The slack or the closest call, in ns.
    pub value_ns: i64,
}

/// The most frequent value of `v` and how often it occurs (the least such value on a tie);
/// `None` when `v` is empty.
fn mode<T: Ord + Copy>(mut v: Vec<T>) -> Option<(T, u64)> {
    v.sort_unstable();
    let mut best: Option<(T, u64)> = None;
    for run in v.chunk_by(|a, b| a == b) {
        let n = run.len() as u64;
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((run[0], n));
        }
    }
    best
}

/// Whether `runs` of `of` is most of them: more than half, and at least two (one run alone
/// repeats nothing).
fn most(runs: u64, of: u64) -> bool {
    runs >= 2 && 2 * runs > of
}

impl Collapsed {
    /// Of the runs' records: the one slack more than half of the runs with a handover share.
    pub fn of(records: &[RunRecord]) -> Option<Collapsed> {
        let slacks: Vec<i64> = records.iter().filter_map(|r| r.min_slack_ns).collect();
        let of = slacks.len() as u64;
        let (slack_ns, runs) = mode(slacks)?;
        most(runs, of).then_some(Collapsed { runs, of, slack_ns })
    }
}

impl Repeated {
    /// Of the runs' records: the one outcome more than half of all the runs share.
    pub fn of(records: &[RunRecord]) -> Option<Repeated> {
        // 0: a handover with this slack; 1: none, with this closest call.
        let outcomes: Vec<(u8, i64)> = records
            .iter()
            .filter_map(|r| match (r.min_slack_ns, r.closest_call_ns) {
                (Some(s), _) => Some((0, s)),
                (None, Some(c)) => Some((1, c)),
                (None, None) => None,
            })
            .collect();
        let of = records.len() as u64;
        let ((kind, value_ns), runs) = mode(outcomes)?;
        most(runs, of).then_some(Repeated {
            runs,
            of,
            outcome: if kind == 0 { "slack" } else { "closest_call" },
            value_ns,
        })
    }
}

/// The least, the 10th, 50th and 90th percentile (nearest rank), and the most of a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Quantiles {
    pub min: i64,
    pub p10: i64,
    pub median: i64,
    pub p90: i64,
    pub max: i64,
}

impl Quantiles {
    /// Of `v` (any order); `None` when empty. The p-th percentile is the value of rank
    /// ceil(p * n / 100) in ascending order (rank 1 the least).
    pub fn of(mut v: Vec<i64>) -> Option<Quantiles> {
        v.sort_unstable();
        let n = v.len();
        let rank = |p: usize| v[(p * n).div_ceil(100).max(1) - 1];
        Some(Quantiles {
            min: *v.first()?,
            p10: rank(10),
            median: rank(50),
            p90: rank(90),
            max: *v.last()?,
        })
    }
}

impl PowerOut {
    pub fn of(records: &[RunRecord]) -> PowerOut {
        let slacks: Vec<i64> = records.iter().filter_map(|r| r.min_slack_ns).collect();
        let handovers = slacks.len() as u64;
        PowerOut {
            runs: records.len() as u64,
            handovers,
            least_slack_ns: slacks.iter().copied().min(),
            slack_ns: Quantiles::of(slacks),
            weak: handovers < STRONG_HANDOVERS,
            collapsed: Collapsed::of(records),
            repeated: Repeated::of(records),
        }
    }

    /// The terminal's lines on a search that mostly repeated one outcome: most runs with a
    /// handover at one slack, or most runs without one at one closest call (most runs at one
    /// slack is said by the first already). Empty when the outcomes vary.
    pub fn repetition_words(&self) -> Vec<String> {
        use crate::time::format_ns;
        let mut lines = Vec::new();
        if let Some(c) = self.collapsed {
            lines.push(format!(
                "{} of {} runs with a handover share one slack value ({}): the search mostly \
                 repeated one outcome",
                c.runs,
                c.of,
                format_ns(c.slack_ns)
            ));
        }
        if let Some(r) = self.repeated.filter(|r| r.outcome == "closest_call") {
            lines.push(format!(
                "{} of {} runs had no handover and one closest call ({}): the search mostly \
                 repeated one outcome",
                r.runs,
                r.of,
                format_ns(r.value_ns)
            ));
        }
        lines
    }

    /// The terminal's line on the handovers and their slack.
    pub fn handover_words(&self) -> String {
        use crate::time::format_ns;
        let mut w = format!(
            "{} of {} run{} had a handover",
            self.handovers,
            self.runs,
            if self.runs == 1 { "" } else { "s" }
        );
        if let Some(q) = self.slack_ns {
            w.push_str(&format!(
                "; slack min {}, p10 {}, median {}, p90 {}, max {}",
                format_ns(q.min),
                format_ns(q.p10),
                format_ns(q.median),
                format_ns(q.p90),
                format_ns(q.max)
            ));
        }
        w
    }

    /// The terminal's verdict on the evidence of an exploration without a violation.
    pub fn evidence_words(&self) -> String {
        let least = self.least_slack_ns.map_or("no slack".to_string(), |s| {
            format!("least slack {}", crate::time::format_ns(s))
        });
        if self.weak {
            format!(
                "WEAK: only {} run{} with a handover (fewer than {STRONG_HANDOVERS}), {least}; \
                 the other runs could not have shown an overlap",
                self.handovers,
                if self.handovers == 1 { "" } else { "s" }
            )
        } else {
            format!("{} runs with a handover, {least}", self.handovers)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(run: u64, slack: Option<i64>) -> RunRecord {
        RunRecord {
            run,
            seed: run,
            kinds: vec![],
            violation: None,
            min_slack_ns: slack,
            closest_call_ns: None,
            recovery_margin_ns: None,
            events: 0,
            guide: None,
        }
    }

    #[test]
    fn the_mode_is_the_most_frequent_value_and_the_least_on_a_tie() {
        // 3 twice, 1 twice, 7 once: a tie between 1 and 3, resolved to the least.
        assert_eq!(mode(vec![3, 7, 1, 3, 1]), Some((1, 2)));
        assert_eq!(mode(vec![5, 2, 5]), Some((5, 2)));
        assert_eq!(mode(Vec::<i64>::new()), None);
    }

    #[test]
    fn power_counts_handovers_and_ranks_the_slack() {
        // Slacks 40, 10, 30, 20 ns and two runs without a handover: 4 handovers of 6 runs.
        // Sorted 10 20 30 40: p10 = rank ceil(0.4) = 1 (10), median = rank 2 (20), p90 = rank
        // ceil(3.6) = 4 (40).
        let recs = [
            rec(0, Some(40)),
            rec(1, None),
            rec(2, Some(10)),
            rec(3, Some(30)),
            rec(4, None),
            rec(5, Some(20)),
        ];
        let p = PowerOut::of(&recs);
        assert_eq!((p.runs, p.handovers, p.least_slack_ns), (6, 4, Some(10)));
        let q = p.slack_ns.unwrap();
        assert_eq!((q.min, q.p10, q.median, q.p90, q.max), (10, 10, 20, 40, 40));
        assert!(p.weak);
        assert!(p.evidence_words().starts_with("WEAK: only 4 runs"));
        assert_eq!(
            p.handover_words(),
            "4 of 6 runs had a handover; slack min 10ns, p10 10ns, median 20ns, p90 40ns, max 40ns"
        );
        // 100 handovers (slack 1..=100 ns) is no longer weak: p10 = rank 10, p90 = rank 90.
        let many: Vec<RunRecord> = (0..100).map(|i| rec(i, Some(i as i64 + 1))).collect();
        let p = PowerOut::of(&many);
        assert!(!p.weak);
        let q = p.slack_ns.unwrap();
        assert_eq!((q.p10, q.median, q.p90), (10, 50, 90));
        // None at all: no slack, weak.
        let p = PowerOut::of(&[rec(0, None)]);
        assert_eq!((p.handovers, p.least_slack_ns, p.slack_ns), (0, None, None));
        assert!(p.weak);
    }

    #[test]
    fn a_population_collapsed_onto_one_slack_is_flagged() {
        // 7 runs: slack 6 ns in 4 of the 6 with a handover (4 > 6 / 2), one without.
        let mut recs: Vec<RunRecord> = [6, 6, 9, 6, 2, 6]
            .iter()
            .map(|&s| rec(0, Some(s)))
            .collect();
        recs.push(rec(0, None));
        let p = PowerOut::of(&recs);
        let c = p.collapsed.expect("collapsed");
        assert_eq!((c.runs, c.of, c.slack_ns), (4, 6, 6));
        // 4 of all 7 runs share it too.
        let r = p.repeated.expect("repeated");
        assert_eq!((r.runs, r.of, r.outcome, r.value_ns), (4, 7, "slack", 6));
        assert_eq!(
            p.repetition_words(),
            [
                "4 of 6 runs with a handover share one slack value (6ns): the search mostly \
              repeated one outcome"
            ]
        );
        // Exactly half is not most: 3 of 6 at 6 ns.
        let half: Vec<RunRecord> = [6, 6, 6, 1, 2, 3]
            .iter()
            .map(|&s| rec(0, Some(s)))
            .collect();
        assert_eq!(PowerOut::of(&half).collapsed, None);
        // A varied population (100 distinct slacks) is not flagged, nor is one run alone.
        let varied: Vec<RunRecord> = (0..100).map(|i| rec(i, Some(i as i64))).collect();
        let p = PowerOut::of(&varied);
        assert_eq!((p.collapsed, p.repeated), (None, None));
        assert!(p.repetition_words().is_empty());
        assert_eq!(PowerOut::of(&[rec(0, Some(5))]).collapsed, None);
    }

    #[test]
    fn most_runs_without_a_handover_at_one_closest_call_are_flagged() {
        // 5 runs: 3 without a handover and a closest call of 40 ns (3 > 5 / 2), 2 with a slack.
        let call = |c: i64| RunRecord {
            closest_call_ns: Some(c),
            recovery_margin_ns: None,
            ..rec(0, None)
        };
        let recs = [
            call(40),
            rec(1, Some(8)),
            call(40),
            call(40),
            rec(4, Some(9)),
        ];
        let p = PowerOut::of(&recs);
        assert_eq!(p.collapsed, None, "the two slacks differ");
        let r = p.repeated.expect("repeated");
        assert_eq!(
            (r.runs, r.of, r.outcome, r.value_ns),
            (3, 5, "closest_call", 40)
        );
        assert_eq!(
            p.repetition_words(),
            [
                "3 of 5 runs had no handover and one closest call (40ns): the search mostly \
              repeated one outcome"
            ]
        );
        // A slack and a closest call of the same value are different outcomes: 2 + 2 of 5.
        let mixed = [
            call(40),
            call(40),
            rec(2, Some(40)),
            rec(3, Some(40)),
            rec(4, None),
        ];
        assert_eq!(PowerOut::of(&mixed).repeated, None);
    }
}
