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
}

/// What `explore.json` says (the same bytes from one machine and from a merge).
#[derive(Serialize)]
pub struct ExploreJson<'a> {
    pub scenario: &'a str,
    pub strategy: String,
    pub command: &'a str,
    pub nemesis: String,
    pub swarm: bool,
    pub runs: u64,
    /// Runs done: every run, or up to and including the first violation.
    pub runs_done: u64,
    pub violation: Option<ViolationOut>,
    pub nearest_miss: Option<MissOut>,
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
            r.events.to_string(),
        ])
        .expect("in memory");
    }
    w.into_inner().expect("in memory")
}

/// `counterexample.ron`: the shrunk scenario, minimal, under a header citing `command`.
pub fn counterexample_text(c: &Scenario, command: &str) -> String {
    format!(
        "// A counterexample found and shrunk by `{command}`.\n\
         // Every fault is explicit; `leasesim run` on this file replays the violation, and its\n\
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

/// The counterexample's figures in one line.
pub fn found_words(s: &Summary) -> String {
    use crate::time::format_ns;
    format!(
        "{} overlap(s), max {}; zombie actions {}, stale reads {}, unsafe writes {}",
        s.overlap.count,
        format_ns(s.overlap.max_ns),
        s.zombie_actions,
        s.stale_reads,
        s.unsafe_writes
    )
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
