//! `explore`: swarm testing or guided search of a scenario's strategy inside a `nemesis`
//! envelope, and the shrinking of the first violation into a scenario file that replays it.
//!
//! With guided search ([`guided`], the command line's default) runs 0 to 63 are swarm's and
//! each later generation is bred from the earlier runs nearest a violation; the rest of this
//! header is swarm's run order, which guided search keeps generation by generation (it does
//! not shard).
//!
//! Run i of an exploration ([`draw`]) is the scenario with seed + i and a fault schedule drawn
//! inside the envelope; with swarm testing each run enables its own subset of the envelope's
//! kinds at its own intensities. Runs go out in chunks (on a thread pool with the `parallel`
//! feature, one after another without it) and come back in run order, and a shard stops after
//! its first violation: everything before it has run, so the first violation in run order, the
//! one shrunk, is the same whatever `--jobs`, the chunking or the sharding. Without a violation
//! the answer is the nearest miss: the run with the smallest safety slack.
//!
//! The first violation's drawn scenario, every random draw already explicit, is shrunk
//! ([`shrink`], within a [`shrink::Budget`]: when it is spent, the smallest failing scenario so
//! far is the answer) while it shows the same kind of violation ([`Violation::shown_by`]), and becomes
//! the counterexample: a plain scenario whose description says what was found and where, and
//! whose `expect` block pins the violation ([`Violation::pin`]).

pub mod draw;
pub mod exhaustive;
pub mod guided;
pub mod output;
pub mod resume;
pub mod shrink;
pub mod violation;

#[cfg(test)]
mod tests;

use crate::outcome::Summary;
use crate::scenario::nemesis::Nemesis;
use crate::scenario::Scenario;
use crate::sweep::Shard;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
pub use violation::Violation;

/// Runs a scenario: its summary, or the problems that keep it from running.
pub type Runner<'a> = dyn Fn(&Scenario) -> Result<Summary, Vec<String>> + Sync + 'a;

/// An exploration: `runs` runs of `base`, drawn inside `nemesis`.
#[derive(Clone, Copy, Debug)]
pub struct Exploration<'a> {
    /// The scenario explored (valid).
    pub base: &'a Scenario,
    pub nemesis: &'a Nemesis,
    /// Each run enables a random subset of the envelope's kinds (swarm testing); without,
    /// every run enables every kind at its full rate.
    pub swarm: bool,
    /// Guided search ([`guided`]) rather than run i drawn as swarm's run i.
    pub guided: bool,
    pub runs: u64,
    /// The liveness bound (`--liveness`): the envelope's faults stop at
    /// [`Exploration::faults_stop_ns`], and a run with no holder serving within this long after
    /// its last fault ended is a violation ([`Violation::NoRecovery`]).
    pub liveness: Option<crate::time::Dur>,
}

/// The runs an exploration did: every record in run order (up to and including the first
/// violation), and the schedules of runs that are not simply drawn ([`Exploration::draw`]) that
/// an answer may need, by run.
#[derive(Default)]
pub struct Ran {
    pub records: Vec<RunRecord>,
    pub kept: BTreeMap<u64, Scenario>,
    /// Guided search's quiet runs ([`guided::Guide`]): runs besides the records.
    pub quiet_runs: u64,
}

/// What one run found, in a few words (a line of `runs.csv`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub run: u64,
    pub seed: u64,
    /// The fault kinds the run enabled.
    pub kinds: Vec<String>,
    pub violation: Option<Violation>,
    pub min_slack_ns: Option<i64>,
    /// With no handover: the run's closest call (the least lease a holder had left at a
    /// renewal), which ranks it among the runs without slack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closest_call_ns: Option<i64>,
    /// With a liveness bound: how much of it was left when a holder served again after the
    /// last fault (negative: recovered late; the whole time left in the run, negated, when no
    /// holder ever did), which ranks runs by how near they came to a liveness violation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_margin_ns: Option<i64>,
    pub events: u64,
    /// Guided search only: what it ranks the run by besides its figures ([`guided::Guide`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guide: Option<guided::Guide>,
}

/// The first violation, shrunk.
#[derive(Clone, Debug)]
pub struct Found {
    /// The run that found it.
    pub record: RunRecord,
    pub violation: Violation,
    /// The run's scenario as drawn, every draw explicit.
    pub drawn: Scenario,
    /// The shrunk scenario with its description and `expect` block.
    pub counterexample: Scenario,
    /// The counterexample's run.
    pub summary: Summary,
    /// Runs the shrink took.
    pub shrink_runs: u64,
    /// What of its budget ran out, if the shrink stopped before its fixpoint.
    pub shrink_stopped: Option<shrink::Stopped>,
}

/// The nearest miss of an exploration without a violation.
#[derive(Clone, Debug)]
pub struct NearestMiss {
    pub record: RunRecord,
    /// The run's scenario, every draw explicit, to replay with `leasesim run`.
    pub drawn: Scenario,
}

/// What an exploration found.
#[derive(Clone, Debug)]
pub enum Answer {
    Violation(Box<Found>),
    /// No violation in any run; the nearest miss, if any run had a handover.
    Nothing(Option<Box<NearestMiss>>),
}

impl Exploration<'_> {
    /// Run `run`'s scenario and the kinds it enabled.
    pub fn draw(&self, run: u64) -> draw::Drawn {
        let mut d = draw::draw_run(self.base, self.nemesis, run, self.swarm);
        if let Some(stop) = self.faults_stop_ns() {
            let mut b = self.base.clone();
            b.seed = d.scenario.seed;
            draw::stop_faults(&mut d.scenario, b.fault_schedule().len(), stop);
        }
        d
    }

    /// With a liveness bound, when the envelope's faults stop: twice the bound before the
    /// run's end, so that a fault begun just before (up to the envelope's largest) still
    /// leaves the bound to recover in. `None` without a bound.
    pub fn faults_stop_ns(&self) -> Option<i64> {
        self.liveness
            .map(|b| (self.base.duration.ns() - 2 * b.ns()).max(0))
    }

    /// Runs run `run` and records what it found.
    pub fn record(&self, run: u64, runner: &Runner) -> Result<RunRecord, String> {
        let drawn = self.draw(run);
        let kinds = drawn.kinds.iter().map(|k| k.to_string()).collect();
        record_of(run, &drawn.scenario, kinds, runner, self.liveness)
    }

    /// Run `run`'s scenario: kept by the search, or drawn.
    fn scenario_of(&self, run: u64, kept: &BTreeMap<u64, Scenario>) -> Scenario {
        kept.get(&run)
            .cloned()
            .unwrap_or_else(|| self.draw(run).scenario)
    }

    /// Every run of `shard`: guided ([`guided::search`], on one machine only) or drawn
    /// ([`Exploration::run_shard`]).
    pub fn run_all(
        &self,
        shard: Shard,
        jobs: Option<usize>,
        done: &(dyn Fn(u64) + Sync),
        runner: &Runner,
    ) -> Result<Ran, String> {
        self.resume(shard, jobs, done, runner, &[], &mut |_| Ok(()))
    }

    /// [`Exploration::run_all`], taking the shard's first runs from `resumed` (their records,
    /// in run order, from an interrupted exploration: they are not run again) and handing each
    /// batch of new records to `keep` as it comes, in run order (an error from `keep` stops the
    /// exploration). The records are the same as an uninterrupted exploration's: a resumed
    /// record is what its run gave, and guided search breeds each generation again from the
    /// records, which is all it breeds from.
    pub fn resume(
        &self,
        shard: Shard,
        jobs: Option<usize>,
        done: &(dyn Fn(u64) + Sync),
        runner: &Runner,
        resumed: &[RunRecord],
        keep: &mut dyn FnMut(&[RunRecord]) -> Result<(), String>,
    ) -> Result<Ran, String> {
        for (k, r) in resumed.iter().enumerate() {
            let want = shard.index + k as u64 * shard.of;
            if r.run != want {
                return Err(format!(
                    "the interrupted exploration's record {k} is of run {}, not run {want}",
                    r.run
                ));
            }
        }
        if self.guided {
            if shard != Shard::ALL {
                return Err(
                    "--shard: guided search breeds each generation from every earlier \
                            run; shard an exploration with --search swarm"
                        .into(),
                );
            }
            let g = guided::search(self, jobs, done, runner, resumed, keep)?;
            return Ok(Ran {
                records: g.records,
                kept: g.kept,
                quiet_runs: g.quiet_runs,
            });
        }
        Ok(Ran {
            records: self.shard_resumed(shard, jobs, done, runner, resumed, keep)?,
            kept: BTreeMap::new(),
            quiet_runs: 0,
        })
    }

    /// The runs of `shard` in run order, up to and including its first violation. `done`
    /// hears how many runs each chunk finished. An error names a run that could not run.
    pub fn run_shard(
        &self,
        shard: Shard,
        jobs: Option<usize>,
        done: &(dyn Fn(u64) + Sync),
        runner: &Runner,
    ) -> Result<Vec<RunRecord>, String> {
        self.shard_resumed(shard, jobs, done, runner, &[], &mut |_| Ok(()))
    }

    /// [`Exploration::run_shard`], its first runs' records taken from `resumed` and each
    /// chunk's new records handed to `keep` ([`Exploration::resume`]).
    fn shard_resumed(
        &self,
        shard: Shard,
        jobs: Option<usize>,
        done: &(dyn Fn(u64) + Sync),
        runner: &Runner,
        resumed: &[RunRecord],
        keep: &mut dyn FnMut(&[RunRecord]) -> Result<(), String>,
    ) -> Result<Vec<RunRecord>, String> {
        let pool = Pool::new(jobs)?;
        let chunk = (pool.threads() as u64 * 16).max(16);
        // The shard's k-th run is run shard.index + k * shard.of.
        let total = shard.run_count(self.runs);
        let mut records = Vec::new();
        for r in resumed.iter().take(total as usize) {
            records.push(r.clone());
            if r.violation.is_some() {
                return Ok(records);
            }
        }
        let mut k = records.len() as u64;
        done(k);
        while k < total {
            let end = (k + chunk).min(total);
            let found = pool.map(k..end, &|k| self.record(shard.index + k * shard.of, runner));
            done(end - k);
            let from = records.len();
            let mut stop = false;
            for r in found {
                let r = r?;
                stop = r.violation.is_some();
                records.push(r);
                if stop {
                    break;
                }
            }
            keep(&records[from..])?;
            if stop {
                return Ok(records);
            }
            k = end;
        }
        Ok(records)
    }

    /// The answer from every run's record (one machine's, or every shard's merged): the first
    /// violation in run order, shrunk within the default budget, or the nearest miss. `records`
    /// must hold every run up to the first violation, or all `runs` runs ([`complete`] checks it).
    pub fn answer(&self, ran: &Ran, command: &str, runner: &Runner) -> Result<Answer, String> {
        self.answer_within(ran, command, runner, &shrink::Budget::default())
    }

    /// [`Exploration::answer`], the shrink within `budget`.
    pub fn answer_within(
        &self,
        ran: &Ran,
        command: &str,
        runner: &Runner,
        budget: &shrink::Budget,
    ) -> Result<Answer, String> {
        match first_violation(&ran.records) {
            Some(r) => {
                let drawn = self.scenario_of(r.run, &ran.kept);
                self.shrink(r, drawn, command, runner, budget)
                    .map(|f| Answer::Violation(Box::new(f)))
            }
            None => Ok(Answer::Nothing(nearest_miss(&ran.records).map(|r| {
                Box::new(NearestMiss {
                    record: r.clone(),
                    drawn: {
                        let mut s = self.scenario_of(r.run, &ran.kept);
                        tidy(&mut s);
                        s
                    },
                })
            }))),
        }
    }

    /// Shrinks the violation `r` found into a counterexample.
    fn shrink(
        &self,
        r: &RunRecord,
        drawn: Scenario,
        command: &str,
        runner: &Runner,
        budget: &shrink::Budget,
    ) -> Result<Found, String> {
        let violation = r.violation.expect("a violating run");
        let liveness = self.liveness;
        let still_fails = |c: &Scenario| runner(c).is_ok_and(|s| violation.shown_by(&s, liveness));
        // Re-placed faults may grow to their kind's largest in the envelope, and no further.
        let largest = |f: &crate::scenario::Fault| guided::largest(self.nemesis, f);
        let shrunk = shrink::shrink_placing(drawn.clone(), &still_fails, budget, Some(&largest));
        let mut c = shrunk.scenario;
        tidy(&mut c);
        let summary = runner(&c).map_err(|p| format!("the shrunk run: {}", p.join("; ")))?;
        if !violation.shown_by(&summary, liveness) {
            return Err(format!(
                "run {}: the shrunk scenario no longer shows {}",
                r.run,
                violation.words()
            ));
        }
        c.description = describe(r, violation, &drawn, &c, command);
        if let Some(why) = shrunk.stopped {
            c.description.pop(); // the full stop
            c.description.push_str(&format!(
                " (the shrink stopped after {} runs: {}).",
                shrunk.runs,
                why.words()
            ));
        }
        c.expect = Some(violation.pin(&summary));
        Ok(Found {
            record: r.clone(),
            violation,
            drawn,
            counterexample: c,
            summary,
            shrink_runs: shrunk.runs,
            shrink_stopped: shrunk.stopped,
        })
    }
}

/// Runs `scenario` as run `run` (which enabled `kinds`) and records what it found, judged
/// with the liveness bound `liveness` if there is one.
pub fn record_of(
    run: u64,
    scenario: &Scenario,
    kinds: Vec<String>,
    runner: &Runner,
    liveness: Option<crate::time::Dur>,
) -> Result<RunRecord, String> {
    let s = runner(scenario)
        .map_err(|p| format!("run {run} (seed {}): {}", scenario.seed, p.join("; ")))?;
    Ok(record_from(run, scenario, kinds, &s, liveness))
}

/// The record of run `run` of `scenario` (which enabled `kinds`), whose summary is `s`.
pub fn record_from(
    run: u64,
    scenario: &Scenario,
    kinds: Vec<String>,
    s: &Summary,
    liveness: Option<crate::time::Dur>,
) -> RunRecord {
    RunRecord {
        run,
        seed: scenario.seed,
        kinds,
        violation: Violation::judge(s, liveness),
        min_slack_ns: s.min_slack_ns,
        closest_call_ns: s.closest_call_ns,
        recovery_margin_ns: liveness.map(|b| recovery_margin(s, b)),
        events: s.events,
        guide: None,
    }
}

/// The bound `within` less the run's recovery time; with no recovery, less the time the run
/// lasted after its faults (every run that never recovered is further than any that did).
fn recovery_margin(s: &Summary, within: crate::time::Dur) -> i64 {
    let left = s.duration_ns - s.faults_end_ns;
    within.ns() - s.recovery_ns.unwrap_or(left.saturating_add(1))
}

/// Leaves out what changes nothing: a drift of 0 written on a node when clocks place none
/// (`drift_spread_ppm` 0 gives every node without its own drift a drift of 0).
fn tidy(s: &mut Scenario) {
    if s.clocks.drift_spread_ppm == 0.0 {
        for n in &mut s.nodes {
            if n.drift_ppm == Some(0.0) {
                n.drift_ppm = None;
            }
        }
    }
}

/// The first record with a violation (in run order: records are sorted by run).
pub fn first_violation(records: &[RunRecord]) -> Option<&RunRecord> {
    records.iter().find(|r| r.violation.is_some())
}

/// The record with the smallest safety slack (the earliest run on a tie); `None` when no run
/// had a handover.
pub fn nearest_miss(records: &[RunRecord]) -> Option<&RunRecord> {
    records
        .iter()
        .filter_map(|r| r.min_slack_ns.map(|s| (s, r.run, r)))
        .min_by_key(|&(s, run, _)| (s, run))
        .map(|(_, _, r)| r)
}

/// Sorts merged records by run and checks that they are what one machine would have: every run
/// from 0 once, up to the first violation or to `runs`; runs after the first violation (a
/// shard that went on past another shard's earlier violation) are dropped.
pub fn complete(mut records: Vec<RunRecord>, runs: u64) -> Result<Vec<RunRecord>, String> {
    records.sort_by_key(|r| r.run);
    let end = first_violation(&records).map_or(runs, |r| r.run + 1);
    records.retain(|r| r.run < end);
    for (i, r) in records.iter().enumerate() {
        if r.run != i as u64 {
            return Err(if r.run < i as u64 {
                format!("run {} is in more than one partial", r.run)
            } else {
                format!("run {i} is in no partial: is a shard missing?")
            });
        }
    }
    if records.len() as u64 != end {
        return Err(format!(
            "runs {} to {} are in no partial: is a shard missing?",
            records.len(),
            end - 1
        ));
    }
    Ok(records)
}

/// The counterexample's description: what was found, by which command and run, and how much
/// the shrink removed.
fn describe(
    r: &RunRecord,
    v: Violation,
    before: &Scenario,
    after: &Scenario,
    command: &str,
) -> String {
    let kinds = if r.kinds.is_empty() {
        "none of the envelope's kinds".to_string()
    } else {
        r.kinds.join(", ")
    };
    let size = |s: &Scenario| {
        let n = s.faults.len();
        format!(
            "{n} fault{}, {} nodes and {}",
            if n == 1 { "" } else { "s" },
            s.nodes.len(),
            s.duration
        )
    };
    format!(
        "Found by `{command}`: run {} (seed {}, kinds {kinds}) showed {}. Shrunk from {} to {}.",
        r.run,
        r.seed,
        v.words(),
        size(before),
        size(after),
    )
}

/// Where the runs of a chunk go: a rayon pool of `jobs` threads (feature `parallel`), or the
/// calling thread.
struct Pool {
    #[cfg(feature = "parallel")]
    pool: rayon::ThreadPool,
}

impl Pool {
    #[cfg(feature = "parallel")]
    fn new(jobs: Option<usize>) -> Result<Pool, String> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(jobs.unwrap_or(0))
            .build()
            .map(|pool| Pool { pool })
            .map_err(|e| format!("cannot start worker threads: {e}"))
    }

    #[cfg(not(feature = "parallel"))]
    fn new(_jobs: Option<usize>) -> Result<Pool, String> {
        Ok(Pool {})
    }

    fn threads(&self) -> usize {
        #[cfg(feature = "parallel")]
        return self.pool.current_num_threads();
        #[cfg(not(feature = "parallel"))]
        return 1;
    }

    /// `f` of every index in `range`, in that order, whichever thread ran what.
    fn map<T: Send>(&self, range: std::ops::Range<u64>, f: &(dyn Fn(u64) -> T + Sync)) -> Vec<T> {
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            self.pool.install(|| range.into_par_iter().map(f).collect())
        }
        #[cfg(not(feature = "parallel"))]
        range.map(f).collect()
    }
}
