//! Exhaustive search: the grid's arithmetic, the alphabet, schedules counted by hand, no
//! schedule run twice, the same records whatever the thread count, and needles found.

use super::*;
use crate::explore::Exploration;
use std::sync::Mutex;

/// `lock` grants `a` at 1 ms (its request at 0 arrives after the fixed 1 ms delay), T = 10 s,
/// renewals every 3 s, 20 s; the envelope: pauses of at most 100 ms.
fn one_grant() -> (Scenario, Nemesis) {
    let s = Scenario::from_ron(
        r#"Scenario(
            seed: 7,
            duration: "20s",
            lease: (duration: "10s", renew_every: "3s"),
            strategy: TwoSided(holder_margin: "100ms"),
            nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
            network: (delay: Fixed("1ms")),
            nemesis: (pauses: (max: "100ms", per_minute: 1.0)),
        )"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let n = s.nemesis.clone().expect("an envelope");
    (s, n)
}

/// The bundled ZooKeeper needle.
fn needle() -> Scenario {
    let text = crate::scenario::library::text("needle-zookeeper-cut-then-step-back").unwrap();
    Scenario::from_ron(text).unwrap_or_else(|e| panic!("{e}"))
}

fn exploration<'a>(s: &'a Scenario, n: &'a Nemesis) -> Exploration<'a> {
    Exploration {
        base: s,
        nemesis: n,
        swarm: false,
        guided: false,
        runs: 1_000_000,
        liveness: None,
    }
}

fn grid(faults: usize, offsets: &[(i64, i64)], moments: &[Moment]) -> Grid {
    Grid {
        faults,
        offsets: offsets
            .iter()
            .map(|&(num, den)| Offset { num, den })
            .collect(),
        sizes: DEFAULT_SIZES.to_vec(),
        moments: moments.to_vec(),
        cap: 1_000_000,
    }
}

/// Runs the search with real runs, remembering every scenario run (as RON, in call order).
fn searched(e: &Exploration, g: &Grid, jobs: usize) -> (Exhausted, Vec<String>) {
    let seen = Mutex::new(Vec::new());
    let runner = |s: &Scenario| {
        seen.lock().unwrap().push(s.to_ron());
        crate::run("x", s)
            .map(|o| o.summary)
            .map_err(|e| e.problems)
    };
    let watched = |s: &Scenario, log: &mut MomentLog| {
        seen.lock().unwrap().push(s.to_ron());
        let strategy = crate::strategy::from_spec(&s.strategy).expect("built in");
        crate::run_with("x", s, strategy, Some(log))
            .map(|o| o.summary)
            .map_err(|e| e.problems)
    };
    let x = search(e, g, Some(jobs), &|_| {}, &runner, &watched).expect("searches");
    (x, seen.into_inner().unwrap())
}

/// The faults each run record's schedule added (from the kept scenarios or not: by count).
fn pauses_at(ron: &str) -> usize {
    ron.matches("Pause(").count()
}

#[test]
fn offsets_are_fractions_of_the_term() {
    let o = Offset::parse("-1/4").unwrap();
    assert_eq!(o, Offset { num: -1, den: 4 });
    // 30 s x -1/4 = -7.5 s; 10 s x 1/3 = 3.333333333 s, toward zero.
    assert_eq!(o.of(30_000_000_000), -7_500_000_000);
    assert_eq!(Offset { num: 1, den: 3 }.of(10_000_000_000), 3_333_333_333);
    assert_eq!(
        Offset { num: -1, den: 3 }.of(10_000_000_000),
        -3_333_333_333
    );
    assert_eq!(Offset::parse("2").unwrap(), Offset { num: 2, den: 1 });
    assert_eq!(o.to_string(), "-1/4");
    assert_eq!(Offset::parse("0").unwrap().to_string(), "0");
    for bad in ["x", "1/0", "1/-2", "65", "", "1/2/3"] {
        assert!(Offset::parse(bad).is_err(), "{bad:?} parsed");
    }
}

#[test]
fn the_alphabet_has_each_kind_on_each_target_at_its_largest() {
    // The ZooKeeper needle: 3 nodes; pauses (3), steps both ways (6), one node cut off (3).
    let s = needle();
    let n = s.nemesis.clone().unwrap();
    let a = alphabet(&s, &n, &DEFAULT_SIZES);
    assert_eq!(a.len(), 3 + 6 + 3);
    let kinds = |k: &str| a.iter().filter(|l| l.kind == k).count();
    assert_eq!(
        (kinds("pauses"), kinds("steps"), kinds("partitions")),
        (3, 6, 3)
    );
    let steps: Vec<i64> = a
        .iter()
        .filter_map(|l| match &l.faults[0] {
            Fault::ClockStep { by, .. } => Some(by.ns()),
            _ => None,
        })
        .collect();
    // Per node: +5 s, then -5 s.
    assert_eq!(steps[..2], [5_000_000_000, -5_000_000_000]);
    // A crash carries its restart max_down after it; one-way cuts go both ways on each pair.
    let n = Nemesis {
        crashes: Some(crate::scenario::nemesis::Crashes {
            per_hour: 1.0,
            max_down: Dur::from_secs(7),
        }),
        one_way: Some(crate::scenario::nemesis::PerHour {
            max: Dur::from_secs(2),
            per_hour: 1.0,
        }),
        ..Nemesis::default()
    };
    let a = alphabet(&s, &n, &DEFAULT_SIZES);
    assert_eq!(a.len(), 3 + 6);
    let crash = a.iter().find(|l| l.kind == "crashes").unwrap();
    assert_eq!(crash.faults.len(), 2);
    assert_eq!(crash.faults[1].at().ns(), 7_000_000_000);
    // At a quarter and all of their largest: a crash down 1.75 s, then 7 s.
    let quarter = [Offset { num: 1, den: 4 }, Offset { num: 1, den: 1 }];
    let a = alphabet(&s, &n, &quarter);
    assert_eq!(a.len(), 2 * (3 + 6));
    let downs: Vec<i64> = a
        .iter()
        .filter(|l| l.kind == "crashes")
        .map(|l| l.faults[1].at().ns())
        .take(2)
        .collect();
    assert_eq!(downs, [1_750_000_000, 7_000_000_000]);
    // Steps keep their sign: 5 s / 4 = 1.25 s either way.
    let n = needle().nemesis.unwrap();
    let steps: Vec<i64> = alphabet(&s, &n, &quarter)
        .iter()
        .filter_map(|l| match &l.faults[0] {
            Fault::ClockStep { by, .. } => Some(by.ns()),
            _ => None,
        })
        .take(4)
        .collect();
    assert_eq!(
        steps,
        [1_250_000_000, 5_000_000_000, -1_250_000_000, -5_000_000_000]
    );
}

#[test]
fn one_fault_at_the_grant_is_each_letter_at_1ms() {
    let (s, n) = one_grant();
    let e = exploration(&s, &n);
    // One grant (at 1 ms); offsets 0: the root and a pause of each of 2 nodes at 1 ms.
    let (x, seen) = searched(&e, &grid(1, &[(0, 1)], &[Moment::Grant]), 1);
    assert_eq!(x.proof.schedules, 3);
    assert_eq!(
        (x.proof.duplicates, x.proof.invalid, x.proof.root_moments),
        (0, 0, 1)
    );
    assert!(x.proof.complete);
    assert!(seen[1].contains("at: \"1ms\""), "{}", seen[1]);
    // Offsets 0 and 1/2 (5 s later): 1 + 2 x 2.
    let (x, _) = searched(&e, &grid(1, &[(0, 1), (1, 2)], &[Moment::Grant]), 1);
    assert_eq!(x.proof.schedules, 5);
    // Offsets 0 and 1/2 of every renewal too: renewals at about 3 s, 6 s, ... more schedules.
    let (x, _) = searched(
        &e,
        &grid(1, &[(0, 1), (1, 2)], &[Moment::Grant, Moment::Renewal]),
        1,
    );
    assert!(x.proof.schedules > 5);
}

#[test]
fn two_faults_follow_the_moments_of_the_run_with_the_first() {
    let (s, n) = one_grant();
    let e = exploration(&s, &n);
    let (x, seen) = searched(&e, &grid(2, &[(0, 1)], &[Moment::Grant]), 1);
    // The root (grant at 1 ms); lock paused at 1 ms (the fault comes before the request that
    // arrives then: the grant moves to 101 ms) and a paused at 1 ms (the grant stays at 1 ms).
    // Lock's child: lock or a paused at 101 ms. a's child: none after (1 ms, a), the last letter.
    assert_eq!(x.proof.schedules, 5, "{seen:#?}");
    assert_eq!(x.ran.records.len(), 5);
    let twos: Vec<&String> = seen.iter().filter(|r| pauses_at(r) == 2).collect();
    assert_eq!(twos.len(), 2);
    assert!(
        twos.iter().all(|r| r.contains("at: \"101ms\"")),
        "{twos:#?}"
    );
}

#[test]
fn no_schedule_runs_twice_and_threads_change_nothing() {
    let (s, n) = one_grant();
    let e = exploration(&s, &n);
    let g = grid(
        2,
        &[(-1, 8), (0, 1), (1, 8)],
        &[Moment::Grant, Moment::Renewal],
    );
    let (one, seen) = searched(&e, &g, 1);
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "a schedule ran twice");
    assert_eq!(seen.len() as u64, one.proof.schedules + one.proof.invalid);
    let (two, _) = searched(&e, &g, 2);
    assert_eq!(one.ran.records, two.ran.records);
    assert_eq!(one.proof, two.proof);
}

#[test]
fn the_cap_stops_the_search_and_proves_nothing() {
    let (s, n) = one_grant();
    let e = exploration(&s, &n);
    let mut g = grid(2, &[(0, 1), (1, 2)], &[Moment::Grant, Moment::Renewal]);
    g.cap = 4;
    let (x, _) = searched(&e, &g, 1);
    assert_eq!(x.proof.schedules, 4);
    assert!(!x.proof.complete);
    assert!(statement(&e, &g, &x.proof).starts_with("stopped at the cap of 4 schedules"));
}

#[test]
fn the_zookeeper_needle_is_safe_with_one_fault_and_found_with_two() {
    let s = needle();
    let n = s.nemesis.clone().unwrap();
    let e = exploration(&s, &n);
    let one = grid(1, &[(-1, 8), (0, 1)], &DEFAULT_MOMENTS);
    let (x, _) = searched(&e, &one, 2);
    assert!(x.proof.complete);
    assert!(x.ran.records.iter().all(|r| r.violation.is_none()));
    let words = statement(&e, &one, &x.proof);
    assert!(
        words.starts_with("no violation with up to 1 fault of pauses (500ms), steps (±5s)"),
        "{words}"
    );
    assert!(
        words.contains("(each at its largest; 12 faults in all)"),
        "{words}"
    );
    // Two: a cut of `a` then a step back while it is SUSPENDED (see the scenario's comment).
    let two = grid(2, &[(-1, 8), (0, 1)], &DEFAULT_MOMENTS);
    let (x, _) = searched(&e, &two, 2);
    let last = x.ran.records.last().unwrap();
    assert!(last.violation.is_some());
    assert_eq!(last.kinds, ["steps", "partitions"]);
    assert!(!x.proof.complete && x.proof.violated);
    assert!(x.ran.kept.contains_key(&last.run));
    let words = statement(&e, &two, &x.proof);
    assert!(
        words.starts_with(&format!(
            "a violation at schedule {} (proving nothing)",
            last.run
        )),
        "{words}"
    );
}

/// A scenario that cannot run at all is an error, not a proof of anything.
#[test]
fn a_scenario_that_does_not_run_is_an_error() {
    let (s, n) = one_grant();
    let e = exploration(&s, &n);
    let refuse = |_: &Scenario| Err(vec!["no".to_string()]);
    let watched = |_: &Scenario, _: &mut MomentLog| Err(vec!["it does not build".to_string()]);
    let g = grid(1, &[(0, 1)], &[Moment::Grant]);
    let err = search(&e, &g, Some(1), &|_| {}, &refuse, &watched)
        .err()
        .expect("an error");
    assert!(err.ends_with("it does not build"), "{err}");
}
