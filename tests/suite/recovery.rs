//! Recovery: how long after the run's last fault a running node believes it holds the lease
//! (`faults_end_ns`, `recovery_ns`), and the liveness bound `expect.recovers_within`.

use crate::common::*;
use leasesim::outcome::check;
use leasesim::report::chart::sweep::{draw, Charts};
use leasesim::scenario::{library, Expect};
use leasesim::sweep::{self, CellStats, Grid, SweepSpec};
use leasesim::time::Dur;

const MS: i64 = 1_000_000;

/// One grantor and two contenders under a two-sided lease of 2 s, 1 ms messages, `faults`.
fn world(faults: &str) -> String {
    format!(
        r#"Scenario(
            duration: "10s",
            lease: (duration: "2s", renew_every: "1s"),
            strategy: TwoSided(holder_margin: "10ms"),
            nodes: [
                (name: "lock", role: Grantor),
                (name: "a", role: Contender),
                (name: "b", role: Contender, start: "100ms"),
            ],
            network: (delay: Fixed("1ms")),
            faults: [{faults}],
        )"#
    )
}

#[test]
fn a_failover_recovers_when_the_holder_acts_again_and_the_bound_says_so() {
    // chubby-master-failover: the master restarts at 35 s (the last fault), a acts again from
    // 35.002 s (derived in the scenario): 2 ms, which the story pins with recovers_within.
    let s = run_text(library::text("chubby-master-failover").unwrap());
    assert_eq!(
        (s.faults_end_ns, s.recovery_ns),
        (35_000 * MS, Some(2 * MS))
    );
    assert_eq!(s.expect.passed, Some(true), "{:?}", s.expect.failures);
    let tight = Expect {
        recovers_within: Some(Dur::from_ns(MS)),
        ..Expect::default()
    };
    assert_eq!(
        check(&tight, &s),
        ["expected recovers_within: 1ms, but a holder served again only 2ms after the faults' end at 35s"]
    );
}

#[test]
fn the_next_holder_is_granted_once_the_crashed_one_s_lease_has_run_out() {
    // a asks at 0 and holds from 2 ms (granted at 1 ms to 2.001 s); its renewal of 1.002 s is
    // granted at 1.003 s to 3.003 s. It crashes at 1.5 s, for good, the last fault. b's
    // requests (from 100 ms) wait at the grantor until a's lease has run out there: granted at
    // 3.003 s, b believes from 3.004 s: 1.504 s after the crash.
    let s = run_text(&world(r#"Crash(node: "a", at: "1.5s")"#));
    assert_eq!(s.faults_end_ns, 1_500 * MS);
    assert_eq!(s.holders, ["a", "b"]);
    let r = s.recovery_ns.expect("b holds");
    assert_eq!(r, 1_504 * MS);
}

#[test]
fn no_holder_after_the_faults_fails_the_bound_and_no_fault_counts_from_the_start() {
    // Both contenders crash for good, b while it waits: nobody believes after 1.5 s.
    let text = world(r#"Crash(node: "a", at: "1.5s"), Crash(node: "b", at: "200ms")"#);
    let s = run_text(&text);
    assert_eq!((s.faults_end_ns, s.recovery_ns), (1_500 * MS, None));
    let bound = Expect {
        recovers_within: Some(Dur::from_ns(1_000 * MS)),
        ..Expect::default()
    };
    assert_eq!(
        check(&bound, &s),
        ["expected recovers_within: 1s, but no holder served from the faults' end at 1.5s to the run's end at 10s"]
    );
    // A bound longer than what is left of the run after the faults has not run out: 8.5 s
    // are left, so 8.5 s is judged (and broken) and 8.6 s is not.
    let within = |ms: i64| Expect {
        recovers_within: Some(Dur::from_ns(ms * MS)),
        ..Expect::default()
    };
    assert_eq!(check(&within(8_500), &s).len(), 1);
    assert!(check(&within(8_600), &s).is_empty());
    // A fault with a length ends at its end: a partition of [1 s, 1.5 s), a pause of [2 s, 5
    // s) (the later end), a step with none (at 0.5 s, before both).
    let ends = run_text(&world(
        r#"Partition(at: "1s", duration: "500ms", groups: [["a"], ["lock", "b"]]),
        Pause(node: "b", at: "2s", duration: "3s"),
        ClockStep(node: "lock", at: "500ms", by: "1ms")"#,
    ));
    assert_eq!(ends.faults_end_ns, 5_000 * MS);
    let partition = run_text(&world(
        r#"Partition(at: "1s", duration: "500ms", groups: [["a"], ["lock", "b"]])"#,
    ));
    assert_eq!(partition.faults_end_ns, 1_500 * MS);
    // No fault: recovery counts from the start, to a's first belief at 2 ms.
    let quiet = run_text(&world(""));
    assert_eq!((quiet.faults_end_ns, quiet.recovery_ns), (0, Some(2 * MS)));
}

/// A sweep of `world(faults)` varying `vary` over `values`, two seeds a cell: its statistics and
/// the charts it draws.
fn swept(faults: &str, vary: &str, values: &[&str]) -> (Vec<CellStats>, Charts) {
    let grid = Grid::build(SweepSpec {
        name: "recovery".into(),
        source: "test".into(),
        scenario: scenario(&world(faults)),
        vary: vec![(vary.into(), values.iter().map(|v| v.to_string()).collect())],
        seeds: 2,
        references: Vec::new(),
    })
    .unwrap_or_else(|p| panic!("{p:?}"));
    let (stats, _) = sweep::run_all(&grid, Some(1), false, &mut Vec::new()).unwrap();
    let charts = draw(&grid, &stats);
    (stats, charts)
}

#[test]
fn a_sweep_gives_each_cell_its_recovery_times_and_draws_them_when_some_run_recovered() {
    // The crash of a at 1.5 s (as above: recovered 1.504 s later) and at 0.5 s: a's lease,
    // granted at 1 ms, runs to 2.001 s at the grantor, so b is granted then and believes from
    // 2.002 s: 1.502 s. Every run of a cell is the same (perfect clocks, fixed delays).
    let (stats, charts) = swept(
        r#"Crash(node: "a", at: "1.5s")"#,
        "faults[0].at",
        &["1.5s", "0.5s"],
    );
    assert_eq!(
        stats[0].recovery_percentiles([50, 100]),
        Some([1_504 * MS; 2])
    );
    assert_eq!(
        stats[1].recovery_percentiles([50, 100]),
        Some([1_502 * MS; 2])
    );
    assert!(charts.drawn.iter().any(|c| c.file == "recovery_cdf"));
    // The crash is the failover's outage start too: the same times, on the outage chart.
    assert_eq!(stats[0].outages_ns, [1_504 * MS; 2]);
    assert_eq!(stats[1].outages_ns, [1_502 * MS; 2]);
    assert!(charts.drawn.iter().any(|c| c.file == "outage_cdf"));
    // Nobody holds after the faults: no recovery to draw, and the report says why.
    let (stats, charts) = swept(
        r#"Crash(node: "a", at: "1.5s"), Crash(node: "b", at: "200ms")"#,
        "faults[0].at",
        &["1.5s", "1.6s"],
    );
    assert!(stats.iter().all(|c| c.recoveries_ns.is_empty()));
    assert!(!charts.drawn.iter().any(|c| c.file == "recovery_cdf"));
    assert!(
        charts
            .skipped
            .iter()
            .any(|w| w.ends_with(": no run recovered after its last fault")),
        "{:?}",
        charts.skipped
    );
    assert!(
        charts
            .skipped
            .iter()
            .any(|w| w.ends_with(": no run had a failover after an outage")),
        "{:?}",
        charts.skipped
    );
}

#[test]
fn the_outage_counts_from_the_holder_lost_not_from_the_last_fault() {
    // a crashes at 1.5 s and b believes from 3.004 s (as above); a step of the grantor's wall
    // clock at 6 s comes after (the strategy reads monotonic clocks: b holds on). Recovery
    // counts from the last fault (6 s: b holds then, 0); the outage from a's crash: 1.504 s.
    let (stats, _) = swept(
        r#"Crash(node: "a", at: "1.5s"), ClockStep(node: "lock", at: "6s", by: "1ms")"#,
        "faults[0].at",
        &["1.5s"],
    );
    assert_eq!(stats[0].recoveries_ns, [0, 0]);
    assert_eq!(stats[0].outages_ns, [1_504 * MS; 2]);
}

#[test]
fn a_drawn_crash_time_is_the_seed_s_own_and_recovery_counts_from_it() {
    // As above, with a's crash drawn from [1.2 s, 1.8 s]: between a's renewal granted at
    // 1.003 s (to 3.003 s) and the next (sent at 2.002 s), so b believes from 3.004 s whenever
    // a crashed, and recovery is 3.004 s - t for the drawn t.
    let text = world(r#"Crash(node: "a", at: Uniform(min: "1.2s", max: "1.8s"))"#);
    let mut drawn = Vec::new();
    for seed in 1..=12 {
        let mut s = scenario(&text);
        s.seed = seed;
        let t = s.fault_schedule()[0].at().ns();
        assert!((1_200 * MS..=1_800 * MS).contains(&t), "seed {seed}: {t}");
        let out = run(&s);
        assert_eq!(out.faults_end_ns, t, "seed {seed}");
        assert_eq!(out.recovery_ns, Some(3_004 * MS - t), "seed {seed}");
        assert_eq!(
            run(&s).faults_end_ns,
            t,
            "seed {seed} draws again what it drew"
        );
        drawn.push(t);
    }
    drawn.sort();
    drawn.dedup();
    assert!(drawn.len() >= 10, "seeds draw apart: {drawn:?}");
}

#[test]
fn a_drawn_time_must_lie_in_the_run_in_order() {
    let problems = |faults: &str| {
        let s = scenario(&world(faults));
        leasesim::scenario::validate::validate(&s)
            .into_iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        problems(r#"Crash(node: "a", at: Uniform(min: "2s", max: "1s"))"#),
        ["faults[0].at: Uniform(min: 2s, max: 1s) has its max before its min"]
    );
    assert_eq!(
        problems(r#"Crash(node: "a", at: Uniform(min: "2s", max: "10s"))"#),
        ["faults[0].at.max: 10s is outside the run [0, 10s)"]
    );
    let both = r#"Crash(node: "a", at: (moment: Grant, min: "1s", max: "2s"))"#;
    let err = leasesim::Scenario::from_ron(&world(both)).unwrap_err();
    assert!(
        err.to_string()
            .contains("a fault starts after a moment or at a drawn time, not both"),
        "{err}"
    );
}
