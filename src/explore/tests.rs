//! The exploration's plumbing with a runner that judges by the seed: which runs run, in which
//! order, what is recorded, resumed, merged and answered, and what the counterexample says.

use super::*;
use crate::scenario::nemesis::profile;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// `lock`, `a`, `b`, T = 10 s, a 2 min run with seed 100 and one pause of its own.
pub(super) fn base() -> Scenario {
    Scenario::from_ron(
        r#"Scenario(
            seed: 100,
            duration: "2min",
            lease: (duration: "10s", renew_every: "3s"),
            strategy: TwoSided(holder_margin: "100ms"),
            nodes: [
                (name: "lock", role: Grantor),
                (name: "a", role: Contender),
                (name: "b", role: Contender, start: "1s"),
            ],
            faults: [Pause(node: "a", at: "50s", duration: "1s")],
        )"#,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A SAFE run's summary (the bundled two-sided Q4 story), to change a figure at a time.
fn safe() -> Summary {
    let text = crate::scenario::library::text("q4-gc-pause-two-sided").expect("bundled");
    let s = Scenario::from_ron(text).expect("parses");
    crate::run("q4", &s).expect("builds").summary
}

/// A runner that judges a scenario by its seed alone: the run with seed base + `bad` writes
/// unsafely, every run's slack is `slack(seed)` and its events are its seed; it counts calls.
struct BySeed {
    summary: Summary,
    bad: Vec<u64>,
    slack: fn(u64) -> Option<i64>,
    calls: AtomicU64,
    seeds: Mutex<Vec<u64>>,
}

impl BySeed {
    fn new(bad: &[u64], slack: fn(u64) -> Option<i64>) -> BySeed {
        BySeed {
            summary: safe(),
            bad: bad.iter().map(|b| 100 + b).collect(),
            slack,
            calls: AtomicU64::new(0),
            seeds: Mutex::new(Vec::new()),
        }
    }

    fn run(&self, s: &Scenario) -> Result<Summary, Vec<String>> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.seeds.lock().expect("not poisoned").push(s.seed);
        let mut out = self.summary.clone();
        out.unsafe_writes = u64::from(self.bad.contains(&s.seed));
        out.min_slack_ns = (self.slack)(s.seed);
        out.closest_call_ns = Some(7);
        // No handovers nor calls for guided search to read: it ranks by slack alone.
        out.guidance = Default::default();
        out.events = s.seed;
        Ok(out)
    }

    fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

fn exploration<'a>(s: &'a Scenario, n: &'a Nemesis, guided: bool, runs: u64) -> Exploration<'a> {
    Exploration {
        base: s,
        nemesis: n,
        swarm: true,
        guided,
        runs,
        liveness: None,
    }
}

fn record(run: u64, violation: Option<Violation>, slack: Option<i64>) -> RunRecord {
    RunRecord {
        run,
        seed: 100 + run,
        kinds: vec!["pauses".into()],
        violation,
        min_slack_ns: slack,
        closest_call_ns: None,
        recovery_margin_ns: None,
        events: 1,
        guide: None,
    }
}

fn runs(records: &[RunRecord]) -> Vec<u64> {
    records.iter().map(|r| r.run).collect()
}

#[test]
fn a_record_says_what_its_run_found() {
    let s = base();
    let by = BySeed::new(&[3], |seed| Some(seed as i64 * 10));
    let mut c = s.clone();
    c.seed = 103;
    let r = record_of(3, &c, vec!["steps".into()], &|s| by.run(s), None).unwrap();
    assert_eq!(
        r,
        RunRecord {
            run: 3,
            seed: 103,
            kinds: vec!["steps".into()],
            violation: Some(Violation::UnsafeWrites),
            min_slack_ns: Some(1030),
            closest_call_ns: Some(7),
            recovery_margin_ns: None,
            events: 103,
            guide: None,
        }
    );
    let refused = record_of(3, &c, vec![], &|_| Err(vec!["x".into(), "y".into()]), None);
    assert_eq!(refused.unwrap_err(), "run 3 (seed 103): x; y");
}

#[test]
fn a_shard_runs_its_runs_in_order_and_stops_at_its_first_violation() {
    let s = base();
    let n = profile("pauses", &s).unwrap();
    let e = exploration(&s, &n, false, 100);
    // Runs 40 and 70 write unsafely; shard 1 of 3 runs 1, 4, 7, ..., 40 and stops there (the
    // rest of its chunk is dropped), never reaching 70.
    let by = BySeed::new(&[40, 70], |_| None);
    let done = AtomicU64::new(0);
    let shard = Shard { index: 1, of: 3 };
    let records = e
        .run_shard(
            shard,
            Some(2),
            &|k| {
                done.fetch_add(k, Ordering::Relaxed);
            },
            &|s| by.run(s),
        )
        .unwrap();
    let want: Vec<u64> = (0..=13).map(|k| 1 + 3 * k).collect();
    assert_eq!(runs(&records), want);
    assert_eq!(
        records.last().unwrap().violation,
        Some(Violation::UnsafeWrites)
    );
    assert!(records[..13].iter().all(|r| r.violation.is_none()));
    // Each run's seed is the base's plus its number.
    assert!(records.iter().all(|r| r.seed == 100 + r.run));
    // One chunk of 16 runs a thread (two threads, with a pool): every run of it is done, 14
    // of them kept.
    let chunk = if cfg!(feature = "parallel") { 32 } else { 16 };
    assert_eq!(by.calls(), chunk);
    assert_eq!(done.load(Ordering::Relaxed), chunk);
    // Without a violation every run of the shard runs, and `done` hears all of them.
    let clean = BySeed::new(&[], |_| None);
    let done = AtomicU64::new(0);
    let all = e
        .run_shard(
            Shard::ALL,
            Some(1),
            &|k| {
                done.fetch_add(k, Ordering::Relaxed);
            },
            &|s| clean.run(s),
        )
        .unwrap();
    assert_eq!(runs(&all), (0..100).collect::<Vec<_>>());
    assert_eq!(done.load(Ordering::Relaxed), 100);
    assert_eq!(clean.calls(), 100);
}

#[test]
fn a_resumed_exploration_runs_only_what_is_new_and_keeps_every_new_record() {
    let s = base();
    let n = profile("pauses", &s).unwrap();
    for guided in [false, true] {
        let e = exploration(&s, &n, guided, 80);
        let clean = BySeed::new(&[], |seed| Some(seed as i64));
        let whole = e
            .run_all(Shard::ALL, Some(1), &|_| {}, &|s| clean.run(s))
            .unwrap();
        assert_eq!(runs(&whole.records), (0..80).collect::<Vec<_>>());
        // Resumed after 20 runs: those 20 are not run again, the other 60 are, and `keep`
        // hears exactly them; the records are the whole exploration's.
        let again = BySeed::new(&[], |seed| Some(seed as i64));
        let mut kept = Vec::new();
        let ran = e
            .resume(
                Shard::ALL,
                Some(1),
                &|_| {},
                &|s| again.run(s),
                &whole.records[..20],
                &mut |new| {
                    kept.extend_from_slice(new);
                    Ok(())
                },
            )
            .unwrap();
        assert_eq!(ran.records, whole.records, "guided {guided}");
        // Guided search runs each seed's quiet run besides: the whole search 68, the 64 seeds
        // of generation 0 and its next 4 immigrants' (a bred run has its parent's seed).
        let quiet = if guided { 68 } else { 0 };
        assert_eq!(whole.quiet_runs, quiet);
        assert_eq!(again.calls(), 60 + ran.quiet_runs, "guided {guided}");
        assert!(ran.quiet_runs <= quiet, "{}", ran.quiet_runs);
        assert_eq!(kept[..], whole.records[20..], "guided {guided}");
        // A `keep` that fails stops the exploration with its error.
        let err = e.resume(
            Shard::ALL,
            Some(1),
            &|_| {},
            &|s| again.run(s),
            &[],
            &mut |_| Err("disk full".into()),
        );
        assert_eq!(err.err().as_deref(), Some("disk full"));
    }
}

#[test]
fn a_resumed_violation_ends_the_shard_without_a_run() {
    let s = base();
    let n = profile("pauses", &s).unwrap();
    let e = exploration(&s, &n, false, 100);
    let by = BySeed::new(&[], |_| None);
    let resumed = [
        record(0, None, None),
        record(1, Some(Violation::WriteOverlap), None),
    ];
    let records = e
        .resume(
            Shard::ALL,
            Some(1),
            &|_| {},
            &|s| by.run(s),
            &resumed,
            &mut |_| Ok(()),
        )
        .unwrap()
        .records;
    assert_eq!(records, resumed);
    assert_eq!(by.calls(), 0);
}

#[test]
fn resumed_records_must_be_the_shards_first_runs() {
    let s = base();
    let n = profile("pauses", &s).unwrap();
    let e = exploration(&s, &n, false, 100);
    let by = BySeed::new(&[], |_| None);
    let shard = Shard { index: 2, of: 4 };
    let resume = |resumed: &[RunRecord]| {
        e.resume(
            shard,
            Some(1),
            &|_| {},
            &|s| by.run(s),
            resumed,
            &mut |_| Ok(()),
        )
        .map(|r| r.records.len())
    };
    // Shard 2 of 4: runs 2, 6, 10, ...
    assert_eq!(
        resume(&[record(2, None, None), record(6, None, None)]),
        Ok(25)
    );
    assert_eq!(
        resume(&[record(2, None, None), record(7, None, None)]),
        Err("the interrupted exploration's record 1 is of run 7, not run 6".into())
    );
    // Guided search breeds from every run: it does not shard.
    let g = exploration(&s, &n, true, 100);
    let err = g
        .run_all(shard, Some(1), &|_| {}, &|s| by.run(s))
        .err()
        .unwrap();
    assert!(err.starts_with("--shard: guided search"), "{err}");
    // Only the first call ran anything: 25 runs, 2 of them resumed.
    assert_eq!(by.calls(), 23);
}

#[test]
fn merged_partials_are_one_machines_records() {
    let recs = |v: &[u64]| -> Vec<RunRecord> { v.iter().map(|&r| record(r, None, None)).collect() };
    // Sorted by run.
    assert_eq!(
        runs(&complete(recs(&[2, 0, 3, 1]), 4).unwrap()),
        [0, 1, 2, 3]
    );
    // Runs after the first violation (another shard went on) are dropped.
    let mut v = recs(&[0, 1, 3, 4, 5]);
    v.push(record(2, Some(Violation::StaleReads), None));
    assert_eq!(runs(&complete(v, 6).unwrap()), [0, 1, 2]);
    assert_eq!(
        complete(recs(&[0, 1, 1, 2]), 3).unwrap_err(),
        "run 1 is in more than one partial"
    );
    assert_eq!(
        complete(recs(&[0, 2, 3]), 4).unwrap_err(),
        "run 1 is in no partial: is a shard missing?"
    );
    assert_eq!(
        complete(recs(&[0, 1]), 5).unwrap_err(),
        "runs 2 to 4 are in no partial: is a shard missing?"
    );
}

#[test]
fn the_first_violation_and_the_nearest_miss_go_by_run_order() {
    let v = [
        record(0, None, Some(5)),
        record(1, None, None),
        record(2, None, Some(-3)),
        record(3, Some(Violation::ReadOverlap), Some(-3)),
        record(4, Some(Violation::WriteOverlap), Some(-9)),
    ];
    assert_eq!(first_violation(&v).map(|r| r.run), Some(3));
    assert_eq!(first_violation(&v[..3]), None);
    // The least slack, the earliest of a tie (-3 at runs 2 and 3; run 4 has less).
    assert_eq!(nearest_miss(&v[..4]).map(|r| r.run), Some(2));
    assert_eq!(nearest_miss(&v).map(|r| r.run), Some(4));
    assert_eq!(nearest_miss(&v[1..2]), None);
}

#[test]
fn without_a_violation_the_answer_is_the_nearest_miss_as_drawn() {
    let s = base();
    let n = profile("pauses", &s).unwrap();
    let e = exploration(&s, &n, false, 10);
    let by = BySeed::new(&[], |seed| Some(1000 - seed as i64));
    let ran = e
        .run_all(Shard::ALL, Some(1), &|_| {}, &|s| by.run(s))
        .unwrap();
    let Answer::Nothing(Some(miss)) = e.answer(&ran, "explore", &|s| by.run(s)).unwrap() else {
        panic!("expected the nearest miss");
    };
    // Slack 1000 - seed: the last run (9) is the nearest.
    assert_eq!(miss.record.run, 9);
    assert_eq!(miss.drawn.seed, 109);
    // Its drawn faults, and no drift of 0 written out (the scenario places none).
    assert_eq!(miss.drawn.faults, e.draw(9).scenario.faults);
    assert!(e
        .draw(9)
        .scenario
        .nodes
        .iter()
        .all(|n| n.drift_ppm == Some(0.0)));
    assert!(miss.drawn.nodes.iter().all(|n| n.drift_ppm.is_none()));
    // No handover in any run: no nearest miss.
    let none = BySeed::new(&[], |_| None);
    let ran = e
        .run_all(Shard::ALL, Some(1), &|_| {}, &|s| none.run(s))
        .unwrap();
    assert!(matches!(
        e.answer(&ran, "explore", &|s| none.run(s)),
        Ok(Answer::Nothing(None))
    ));
}

#[test]
fn a_drift_written_out_stays_when_clocks_place_drifts() {
    let mut s = base();
    s.clocks.drift_spread_ppm = 100.0;
    s.nodes[1].drift_ppm = Some(0.0);
    s.nodes[2].drift_ppm = Some(3.0);
    let mut t = s.clone();
    tidy(&mut t);
    assert_eq!(t.nodes[1].drift_ppm, Some(0.0));
    s.clocks.drift_spread_ppm = 0.0;
    tidy(&mut s);
    assert_eq!(s.nodes[1].drift_ppm, None);
    assert_eq!(s.nodes[2].drift_ppm, Some(3.0));
}

#[test]
fn the_first_violation_is_shrunk_described_and_pinned() {
    let s = base();
    let n = profile("pauses", &s).unwrap();
    let e = exploration(&s, &n, false, 10);
    // Run 6 writes unsafely whatever its faults: the shrink takes every fault away.
    let by = BySeed::new(&[6], |_| Some(1));
    let ran = e
        .run_all(Shard::ALL, Some(1), &|_| {}, &|s| by.run(s))
        .unwrap();
    assert_eq!(runs(&ran.records), (0..=6).collect::<Vec<_>>());
    let Answer::Violation(f) = e.answer(&ran, "explore x", &|s| by.run(s)).unwrap() else {
        panic!("expected a violation");
    };
    assert_eq!((f.record.run, f.violation), (6, Violation::UnsafeWrites));
    assert_eq!(f.drawn.to_ron(), e.draw(6).scenario.to_ron());
    assert!(f.counterexample.faults.is_empty());
    assert_eq!(f.shrink_stopped, None);
    assert!(f.shrink_runs > 0);
    let kinds = f.record.kinds.join(", ");
    let drawn = f.drawn.faults.len();
    assert!(drawn > 1, "{drawn}");
    let c = &f.counterexample;
    assert_eq!(
        c.description,
        format!(
            "Found by `explore x`: run 6 (seed 106, kinds {kinds}) showed unsafe writes. \
             Shrunk from {drawn} faults, 3 nodes and {} to 0 faults, {} nodes and {}.",
            s.duration,
            c.nodes.len(),
            c.duration
        )
    );
    assert_eq!(
        f.counterexample.expect,
        Some(Violation::UnsafeWrites.pin(&f.summary))
    );
    assert_eq!(f.summary.unsafe_writes, 1);

    // With no run to spend, the drawn run is the answer, and says why.
    let none = shrink::Budget::runs(0);
    let Answer::Violation(f) = e
        .answer_within(&ran, "explore x", &|s| by.run(s), &none)
        .unwrap()
    else {
        panic!("expected a violation");
    };
    assert_eq!(f.shrink_stopped, Some(shrink::Stopped::Runs));
    assert_eq!(f.counterexample.faults, f.drawn.faults);
    assert_eq!(
        f.counterexample.description,
        format!(
            "Found by `explore x`: run 6 (seed 106, kinds {kinds}) showed unsafe writes. \
             Shrunk from {drawn} faults, 3 nodes and {d} to {drawn} faults, 3 nodes and {d} \
             (the shrink stopped after 0 runs: its budget of runs ran out).",
            d = s.duration
        )
    );

    // A runner that no longer shows it once shrunk (the records said it did): an error.
    let once = |sc: &Scenario| {
        let mut out = by.run(sc)?;
        out.unsafe_writes = 0;
        Ok(out)
    };
    let err = e
        .answer_within(&ran, "explore x", &once, &none)
        .err()
        .unwrap();
    assert_eq!(
        err,
        "run 6: the shrunk scenario no longer shows unsafe writes"
    );
}

#[test]
fn a_description_counts_its_faults_and_names_its_kinds() {
    let mut before = base();
    let after = before.clone();
    before.faults.push(before.faults[0].clone());
    let mut r = record(2, Some(Violation::WriteOverlap), None);
    r.kinds.clear();
    assert_eq!(
        describe(&r, Violation::WriteOverlap, &before, &after, "explore q"),
        "Found by `explore q`: run 2 (seed 102, kinds none of the envelope's kinds) showed an \
         overlap of the write lease. Shrunk from 2 faults, 3 nodes and 120s to 1 fault, 3 nodes \
         and 120s."
    );
}

#[test]
fn guided_search_runs_in_generations_and_keeps_its_best_runs() {
    let s = base();
    let n = profile("pauses", &s).unwrap();
    let e = exploration(&s, &n, true, 100);
    // Slack 1000 - seed: a child keeps its first parent's seed, so ties are many.
    let by = BySeed::new(&[], |seed| Some(1000 - seed as i64));
    let sizes = Mutex::new(Vec::new());
    let ran = e
        .run_all(
            Shard::ALL,
            Some(1),
            &|k| sizes.lock().expect("not poisoned").push(k),
            &|s| by.run(s),
        )
        .unwrap();
    // 64 swarm runs, then generations of 32 (the last cut to what is left).
    assert_eq!(*sizes.lock().expect("not poisoned"), [64, 32, 4]);
    assert_eq!(runs(&ran.records), (0..100).collect::<Vec<_>>());
    // Kept: the archive after the last generation, 16 runs with their schedules, at most 8 of
    // one slack (a child keeps its parent's seed, so its slack). Runs 99 to 96 (seeds 199 to
    // 196, slacks 801 to 804) and 67 to 64 (833 to 836), immigrants, are the best 8; after
    // them come the slacks of runs 63, 62, ... (837, 838, ...) and their children.
    let kept: Vec<u64> = ran.kept.keys().copied().collect();
    assert_eq!(kept.len(), guided::ARCHIVE);
    for run in [64, 65, 66, 67, 96, 97, 98, 99] {
        assert!(kept.contains(&run), "{kept:?}");
    }
    let slack = |run: u64| ran.records[run as usize].min_slack_ns;
    for &k in &kept {
        let same = kept.iter().filter(|&&o| slack(o) == slack(k)).count();
        assert!(same <= guided::NICHE, "{kept:?}");
        assert!(slack(k) <= Some(1000 - 155), "{kept:?}");
    }
    for r in &ran.records {
        if let Some(k) = ran.kept.get(&r.run) {
            assert_eq!(k.seed, r.seed);
        }
    }
    // A violation ends the search with its run kept beside the archive: seed 164 is run 64's,
    // the first immigrant's (a bred run has its parent's seed, one of runs 0 to 63's).
    let bad = BySeed::new(&[64], |seed| Some(1000 - seed as i64));
    let ran = e
        .run_all(Shard::ALL, Some(1), &|_| {}, &|s| bad.run(s))
        .unwrap();
    let last = ran.records.last().unwrap();
    assert_eq!(
        (last.run, last.violation),
        (64, Some(Violation::UnsafeWrites))
    );
    assert!(ran.records[..ran.records.len() - 1]
        .iter()
        .all(|r| r.violation.is_none()));
    assert_eq!(ran.kept.get(&64).map(|k| k.seed), Some(164));
    assert_eq!(ran.kept.len(), guided::ARCHIVE + 1);
}
