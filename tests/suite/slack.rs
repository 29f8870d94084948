//! Safety slack (`min_slack_ns`): hand-derived handovers, an overlap read as negative
//! slack, a lone holder with none, the oracle against a brute-force reading of the recorded
//! beliefs, and the sweep's CSV columns.

use crate::common::*;
use leasesim::oracle::Piece;
use leasesim::outcome::check;
use leasesim::scenario::{library, load, Expect};
use leasesim::sweep::{self, files, Grid, RunRow, SweepSpec};
use leasesim::time::{Dur, SimTime};
use leasesim::{Scenario, Summary};

fn bundled(name: &str) -> (Scenario, Summary) {
    let text = library::text(name).unwrap_or_else(|| panic!("no bundled scenario {name}"));
    let s = load::from_text(name, text).unwrap_or_else(|e| panic!("{e}"));
    let summary = run(&s);
    (s, summary)
}

/// The holder crashes and the next one is granted once the grantor has waited out the lease.
///
/// TwoSided(50 ms), T = 10 s, renewals every 3 s, 1 ms messages, perfect clocks. a asks at 0 and
/// believes from the grant's arrival at 2 ms; it renews at 3.002 s (reaching the grantor at
/// 3.003 s) and crashes at 4.5 s, which ends its belief. The grantor frees the lease at
/// 3.003 + 10 = 13.003 s and grants b, queued since 100 ms; b believes from 13.004 s.
/// Slack: 13.004 - 4.5 = 8.504 s.
#[test]
fn a_crashed_holder_hands_over_after_the_grantors_wait() {
    let text = r#"Scenario(
        duration: "20s",
        lease: (duration: "10s", renew_every: "3s"),
        strategy: TwoSided(holder_margin: "50ms"),
        nodes: [
            (name: "lock", role: Grantor),
            (name: "a", role: Contender),
            (name: "b", role: Contender, start: "100ms"),
        ],
        network: (delay: Fixed("1ms")),
        faults: [Crash(node: "a", at: "4.5s")],
    )"#;
    let (outcome, timeline) = leasesim::run_recorded("test", &scenario(text)).unwrap();
    let s = outcome.summary;
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.overlap.count, 0);
    assert_eq!(s.min_slack_ns, Some(8_504_000_000));
    // The same figure from the recorded beliefs: a's last end, b's first start.
    let a_end = timeline.beliefs[1].last().unwrap().end;
    let b_start = timeline.beliefs[2].first().unwrap().start;
    assert_eq!(
        (a_end, b_start),
        (
            SimTime::from_ns(4_500_000_000),
            SimTime::from_ns(13_004_000_000)
        )
    );
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["min_slack_ns"], 8_504_000_000i64);
}

/// Q4 done right (see the scenario): a's deadline is 18.002 + 10 - 0.05 = 27.952 s, inside its
/// pause; b believes from its grant at 28.004 s: 28.004 - 27.952 = 52 ms of slack, the holder
/// margin plus the two message delays.
#[test]
fn a_paused_holder_with_a_clock_check_leaves_its_margin() {
    let (_, s) = bundled("q4-gc-pause-two-sided");
    assert_eq!(s.min_slack_ns, Some(52_000_000));
    assert_eq!(
        s.max_unavailable_ns, 8_004_000_000,
        "the run the comment derives"
    );
}

/// Q4 under CachedBool: a believes through its pause until it resumes at 32 s, b from
/// 28.004 s. a went on 32 - 28.004 = 3.996 s after b began: slack -3.996 s, minus the one
/// overlap interval's length (b's belief outlasts a's, so the two are the same).
#[test]
fn an_overlap_is_negative_slack() {
    let (_, s) = bundled("q4-gc-pause-cached-bool");
    assert_eq!(s.min_slack_ns, Some(-3_996_000_000));
    let i = &s.overlap.intervals[..];
    assert_eq!(i.len(), 1);
    assert_eq!(
        (i[0].start_ns, i[0].end_ns),
        (28_004_000_000, 32_000_000_000)
    );
    assert_eq!(s.min_slack_ns, Some(-(i[0].end_ns - i[0].start_ns)));
    let text = leasesim::report::text::run_block(&s, "rerun", None);
    assert!(
        text.contains("slack        closest handover: -3.996s of slack"),
        "{text}"
    );
}

/// One contender only: the grantor crashes at 5 ms, just after granting a, and restarts at 6 ms
/// waiting out T = 10 s. a's renewal of 3.002 s is rejected (at 3.003 s, arriving 3.004 s) and a
/// lets go; a is granted again at 6 ms + 10 s = 10.006 s, believing from 10.007 s. Two stretches
/// of one node: a took the lease back, no handover (counting it would give 10.007 - 3.004 =
/// 7.003 s).
#[test]
fn a_lone_holder_taking_the_lease_back_is_no_handover() {
    let text = r#"Scenario(
        duration: "20s",
        lease: (duration: "10s", renew_every: "3s", grantor_restart: Wait),
        strategy: TwoSided(holder_margin: "50ms"),
        nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
        network: (delay: Fixed("1ms")),
        faults: [Crash(node: "lock", at: "5ms"), Restart(node: "lock", at: "6ms")],
        expect: (min_slack_at_least: "1h"),
    )"#;
    let (outcome, timeline) = leasesim::run_recorded("test", &scenario(text)).unwrap();
    let s = outcome.summary;
    assert_eq!(s.holders, ["a", "a"]);
    let a = &timeline.beliefs[1];
    assert_eq!(
        (a[0].end, a.last().unwrap().start),
        (
            SimTime::from_ns(3_004_000_000),
            SimTime::from_ns(10_007_000_000)
        )
    );
    assert_eq!(s.min_slack_ns, None);
    // `min_slack_at_least` holds when there was no handover; `min_slack` does not.
    assert_eq!(s.expect.passed, Some(true), "{:?}", s.expect.failures);
    let exact = Expect {
        min_slack: Some(Dur::ZERO),
        ..Expect::default()
    };
    assert_eq!(
        check(&exact, &s),
        ["expected min_slack: 0s, but the run had no handover"]
    );
    let json = serde_json::to_value(&s).unwrap();
    assert!(json["min_slack_ns"].is_null());
    let text = leasesim::report::text::run_block(&s, "rerun", None);
    assert!(text.contains("slack        no handover"), "{text}");
}

/// The definition read literally from the recorded beliefs, in O(n^2): merge each node's pieces
/// into stretches, order them by (start, node), and at each start find the previous holder (the
/// latest end among the earlier stretches, the other node on a tie); a handover when it is
/// another node, with slack start - (the latest end among other nodes' earlier stretches).
fn brute_force_min_slack(beliefs: &[Vec<Piece>]) -> Option<i64> {
    let mut stretches: Vec<(i64, usize, i64)> = Vec::new(); // (start, node, end)
    for (n, pieces) in beliefs.iter().enumerate() {
        let mut open: Option<(i64, i64)> = None;
        for p in pieces {
            open = match open {
                Some((s, e)) if e == p.start.ns() => Some((s, p.end.ns())),
                Some((s, e)) => {
                    stretches.push((s, n, e));
                    Some((p.start.ns(), p.end.ns()))
                }
                None => Some((p.start.ns(), p.end.ns())),
            };
        }
        if let Some((s, e)) = open {
            stretches.push((s, n, e));
        }
    }
    stretches.sort();
    let mut min: Option<i64> = None;
    for (k, &(s, n, _)) in stretches.iter().enumerate() {
        let earlier = &stretches[..k];
        let Some(&(_, prev, _)) = earlier.iter().max_by_key(|x| (x.2, x.1 != n)) else {
            continue;
        };
        if prev == n {
            continue; // n takes the lease back
        }
        let e = earlier
            .iter()
            .filter(|x| x.1 != n)
            .map(|x| x.2)
            .max()
            .unwrap();
        min = Some(min.map_or(s - e, |m: i64| m.min(s - e)));
    }
    min
}

/// Every bundled story, and a few seeds of the random-fault ones: the oracle's streamed figure
/// is the brute-force one.
#[test]
fn the_oracle_agrees_with_the_definition_on_every_bundled_story() {
    let mut seen = [0; 3]; // no handover, negative, non-negative
    for &(name, text) in library::LIBRARY {
        let mut sc = load::from_text(name, text).unwrap();
        let seeds = if sc.random_faults.is_empty() { 1 } else { 3 };
        for k in 0..seeds {
            sc.seed += k;
            let (outcome, timeline) = leasesim::run_recorded(name, &sc).unwrap();
            let got = outcome.summary.min_slack_ns;
            // Over the exclusive authorities: write, and read when tracked apart (Raft).
            let claims = leasesim::strategy::from_spec(&sc.strategy)
                .unwrap()
                .authorities();
            let exclusive = [
                (claims.write, &timeline.beliefs),
                (claims.read, &timeline.read_beliefs),
            ];
            let want = exclusive
                .iter()
                .filter(|(c, _)| *c == leasesim::strategy::Claim::Exclusive)
                .filter_map(|(_, b)| brute_force_min_slack(b))
                .min();
            assert_eq!(got, want, "{name} seed {}", sc.seed);
            seen[match got {
                None => 0,
                Some(v) if v < 0 => 1,
                Some(_) => 2,
            }] += 1;
        }
    }
    assert!(
        seen.iter().all(|&c| c > 0),
        "every kind of outcome: {seen:?}"
    );
}

/// `runs.csv` carries each run's slack (empty for none) and reads it back; `results.csv` the
/// cell's smallest.
///
/// The cut-off story of sweep.rs (h at -1000 ppm cut off from lock at 10 s, b queued, 1 ms
/// messages, T = 10 s): h's last renewal left at S; h believes until S + (10 s - eps) / 0.999,
/// b from S + 10.002 s. Slack = 10.002 s - (10 s - eps) / 0.999: at eps = 20 ms,
/// 10.002 - 9.98 / 0.999 = 12.01001001 ms; at 5 ms, 10.002 - 9.995 / 0.999 = -3.005005005 ms
/// (true instants are rounded up to the nanosecond: within 1 ns).
#[test]
fn sweeps_carry_the_slack_per_run_and_per_cell() {
    let s = scenario(&cut_off_text(
        r#"TwoSided(holder_margin: "5ms")"#,
        -1000.0,
        "",
    ));
    let grid = Grid::build(SweepSpec {
        name: "cut-off".into(),
        source: "test".into(),
        scenario: s,
        vary: vec![("epsilon".into(), vec!["5ms".into(), "20ms".into()])],
        seeds: 2,
        references: Vec::new(),
    })
    .unwrap_or_else(|p| panic!("{p:?}"));
    let mut runs_csv = Vec::new();
    let (stats, _) = sweep::run_all(&grid, Some(1), false, &mut runs_csv).unwrap();
    let near = |got: Option<i64>, want: i64| {
        assert!(
            got.is_some_and(|g| (g - want).abs() <= 1),
            "{got:?} vs {want}"
        )
    };
    near(stats[0].min_slack_ns, -3_005_005);
    near(stats[1].min_slack_ns, 12_010_010);
    let runs = String::from_utf8(runs_csv).unwrap();
    let mut lines = runs.lines();
    // The slack follows `events`; the faults' end, the recovery and the failover's three
    // parts come after it.
    assert!(lines.next().unwrap().ends_with(
        ",events,min_slack_ns,faults_end_ns,recovery_ns,detection_ns,election_ns,first_op_ns,\
         read_gap_ns,write_gap_ns"
    ));
    for (line, cell) in lines.zip([0, 0, 1, 1]) {
        let slack = line.rsplit(',').nth(7).unwrap();
        assert_eq!(
            Some(slack.parse::<i64>().unwrap()),
            stats[cell].min_slack_ns
        );
    }
    let results = String::from_utf8(files::results_csv(&grid, &stats)).unwrap();
    let rows: Vec<&str> = results.lines().collect();
    assert!(
        rows[0].contains(",unsafe_runs,min_slack_ns,recovered_runs,"),
        "{results}"
    );
    // After min_slack_ns come recovered_runs and four recovery figures, then failover_runs,
    // twelve failover figures and eight gap figures: the slack is the 27th field from the end.
    let last = |r: &str| r.rsplit(',').nth(26).unwrap().to_string();
    assert_eq!(last(rows[1]), stats[0].min_slack_ns.unwrap().to_string());
    assert_eq!(last(rows[2]), stats[1].min_slack_ns.unwrap().to_string());

    // A run without a handover: an empty field, read back as none, as a resume reads it.
    for slack in [None, Some(-7), Some(0), Some(12)] {
        let row = RunRow {
            index: 3,
            overlap_count: 0,
            overlap_total_ns: 0,
            overlap_max_ns: 0,
            availability: 0.5,
            max_unavailable_ns: 9,
            zombie_actions: 0,
            stale_reads: 0,
            unsafe_writes: 0,
            fenced_writes: 0,
            events: 100,
            min_slack_ns: slack,
            faults_end_ns: 5,
            recovery_ns: slack.map(|s| s.abs()),
            detection_ns: slack.map(|s| s.abs() + 1),
            election_ns: None,
            first_op_ns: slack,
            read_gap_ns: slack.map(|s| s * 2),
            write_gap_ns: None,
        };
        let line = files::run_line(&grid, &row);
        let text = String::from_utf8(line.clone()).unwrap();
        assert_eq!(text.ends_with(",100,,5,,,,,,\n"), slack.is_none(), "{text}");
        let back = files::parse_run_line("runs.csv", 2, &grid, &line[..line.len() - 1]).unwrap();
        assert_eq!(back, row);
    }
    // A cell none of whose runs had a handover, nor recovered, nor a failover: empty fields
    // (the slack, the four recovery percentiles after a count of 0, the twelve failover
    // percentiles after another, the eight gap percentiles).
    let none = sweep::CellStats {
        runs: 1,
        ..Default::default()
    };
    let results = String::from_utf8(files::results_csv(&grid, &[none.clone(), none])).unwrap();
    let want = format!(",0,,0,,,,,0{}", ",".repeat(20));
    assert!(
        results.lines().nth(1).unwrap().ends_with(&want),
        "{results}"
    );
}
