//! Failover time as a distribution: fields varied together (`--vary a+b=x+y`), published
//! figures set beside a sweep's recovery times (`--reference`), and the Raft paper's Figure 16
//! (`raft-figure-16`) against the figures its text gives.

use crate::common::*;
use leasesim::scenario::library;
use leasesim::sweep::reference::{Figure, Reference};
use leasesim::sweep::{self, CellStats, Grid, SweepSpec};

const MS: i64 = 1_000_000;

/// The Figure 16 story swept over `vary` with `seeds` seeds a cell and `references`.
fn figure_16(vary: (&str, &[&str]), seeds: u64, references: &[&str]) -> Result<Grid, Vec<String>> {
    Grid::build(SweepSpec {
        name: "raft-figure-16".into(),
        source: "raft-figure-16".into(),
        scenario: scenario(library::text("raft-figure-16").unwrap()),
        vary: vec![(
            vary.0.into(),
            vary.1.iter().map(|v| v.to_string()).collect(),
        )],
        seeds,
        references: references
            .iter()
            .map(|r| Reference::parse(r).unwrap())
            .collect(),
    })
}

fn stats(grid: &Grid) -> Vec<CellStats> {
    sweep::run_all(grid, Some(2), false, &mut Vec::new())
        .unwrap()
        .0
}

const BOTTOM: &str = "strategy.election_timeout+strategy.election_jitter+strategy.heartbeat+T";

#[test]
fn fields_varied_together_make_one_cell_per_tuple() {
    // Two tuples of four fields: two cells, not 2^4; each cell's scenario has its tuple.
    let grid = figure_16(
        (BOTTOM, &["12ms+12ms+6ms+10ms", "25ms+25ms+12.5ms+20ms"]),
        1,
        &[],
    )
    .unwrap();
    assert_eq!(grid.cell_count(), 2);
    assert_eq!(grid.cell_values(1), "25ms+25ms+12.5ms+20ms");
    let s = grid.scenario(1);
    assert_eq!(s.lease.duration.ns(), 20 * MS);
    let ron = s.strategy.to_ron();
    for field in [
        "election_timeout: \"25ms\"",
        "election_jitter: \"25ms\"",
        "heartbeat: \"12.5ms\"",
    ] {
        assert!(ron.contains(field), "{field} in {ron}");
    }
    // A tuple with a value missing, or a field twice, is refused with what to write.
    let problems = figure_16((BOTTOM, &["12ms+12ms+6ms"]), 1, &[]).unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("expected 4 values joined by `+`"),
        "{problems:?}"
    );
    let twice = figure_16(("T+lease.duration", &["1s+1s"]), 1, &[]).unwrap_err();
    assert!(twice[0].contains("is already varied"), "{twice:?}");
}

#[test]
fn a_reference_must_name_a_cell_and_is_set_beside_what_it_measured() {
    let unknown = figure_16(
        ("strategy.election_jitter", &["5ms", "50ms"]),
        1,
        &["7ms:median=287ms"],
    )
    .unwrap_err();
    assert_eq!(
        unknown,
        ["--reference 7ms: median 287ms: no cell has the values \"7ms\"; the cells are \"5ms\", \"50ms\""]
    );
    // Seed 1 of the 5 ms cell is the story as written: 293.483887 ms. Against 287 ms: +2 %.
    let grid = figure_16(
        ("strategy.election_jitter", &["5ms"]),
        1,
        &["5ms:median=287ms", "5ms:mean=1s"],
    )
    .unwrap();
    let st = stats(&grid);
    assert_eq!(Figure::Percentile(50).of(&st[0]), Some(293_483_887));
    let md = sweep::report::render(&grid, &st, &[], &[], "leasesim");
    assert!(
        md.contains("| 5ms | median | 287 ms | 293.484 ms | +2 % |"),
        "{md}"
    );
    assert!(
        md.contains("| 5ms | mean | 1 s | 293.484 ms | -71 % |"),
        "{md}"
    );
    assert!(
        md.contains("--reference 5ms:median=287ms --reference 5ms:mean=1s"),
        "the rerun command keeps them: {md}"
    );
}

/// The figures the paper's text gives, against 1,000 runs a line (the paper's own count):
/// 150-155 ms, median about 287 ms (within 15 %); 150-200 ms, worst of 1,000 513 ms (within
/// 25 %); 12-24 ms, longest 152 ms (within 25 %). The model's mean for 12-24 ms is below the
/// paper's 35 ms (the book's failover page says why) and is not checked here.
#[test]
fn figure_16_meets_the_figures_the_paper_gives() {
    let within = |measured: i64, published_ms: i64, tolerance: f64| {
        let d = (measured - published_ms * MS) as f64 / (published_ms * MS) as f64;
        assert!(
            d.abs() <= tolerance,
            "{measured} ns against {published_ms} ms: {:+.0} %",
            d * 100.0
        );
    };
    let top = figure_16(("strategy.election_jitter", &["5ms", "50ms"]), 1000, &[]).unwrap();
    let st = stats(&top);
    assert_eq!(st[0].recoveries_ns.len(), 1000);
    within(Figure::Percentile(50).of(&st[0]).unwrap(), 287, 0.15);
    within(Figure::Percentile(100).of(&st[1]).unwrap(), 513, 0.25);
    let bottom = figure_16((BOTTOM, &["12ms+12ms+6ms+10ms"]), 1000, &[]).unwrap();
    let st = stats(&bottom);
    within(Figure::Percentile(100).of(&st[0]).unwrap(), 152, 0.25);
}

/// 150-150 ms: with no jitter nothing separates the followers' timers. They run out within the
/// 0.3 ms spread of the last heartbeat's arrival, each candidate writes its vote before asking
/// (an fsync longer than that spread), so all campaign and split; each then re-arms exactly
/// 150 ms from its own campaign's start, and the spread never grows. The paper's LogCabin runs
/// "often" took over 10 s (timer and scheduling noise breaks the tie there); here none ever ends.
#[test]
fn without_jitter_the_split_votes_never_end() {
    let grid = figure_16(("strategy.election_jitter", &["0ms"]), 20, &[]).unwrap();
    let st = stats(&grid);
    assert_eq!(st[0].runs, 20);
    assert!(st[0].recoveries_ns.is_empty(), "{:?}", st[0].recoveries_ns);
}

/// The one failover of `name`'s bundled run.
fn only_failover(name: &str) -> leasesim::outcome::FailoverOut {
    let summary = run(&scenario(library::text(name).unwrap()));
    assert_eq!(summary.failovers.len(), 1, "{:?}", summary.failovers);
    summary.failovers[0].clone()
}

/// `q4-gc-pause-two-sided`: `a` pauses at 20 s, its last renewal reached the lock at 18.003 s so
/// the lock holds the lease to 28.003 s; `b` asks every second at x.100 s (1 ms each way) and
/// the lock keeps the latest request, the one sent at 27.100 s, until the lease ends.
/// Detection 27.100 - 20.000 = 7.1 s; acquisition 28.004 (the grant sent at 28.003 arrives)
/// - 27.100 = 904 ms; together the 8.004 s outage.
#[test]
fn a_paused_holders_failover_splits_into_detection_acquisition_and_first_operation() {
    let f = only_failover("q4-gc-pause-two-sided");
    assert_eq!((f.from.as_str(), f.to.as_str()), ("a", "b"));
    assert_eq!(f.down_from_ns, Some(20_000 * MS));
    assert_eq!(f.sought_at_ns, Some(27_100 * MS));
    assert_eq!(f.serving_from_ns, Some(28_004 * MS));
    assert_eq!(f.detection_ns, Some(7_100 * MS));
    assert_eq!(f.election_ns, Some(904 * MS));
    // The first operation is the earlier of the first read and the first write taking effect.
    let first = f
        .new_first_read_ns
        .unwrap()
        .min(f.new_first_write_ns.unwrap());
    assert_eq!(f.first_op_ns, Some(first - 28_004 * MS));
}

/// `raft-figure-16`, seed 1: `r0` crashes at 2.043437945 s. `r1` heard its last heartbeat at
/// 2.028583076 s and its timer (151.598444 ms drawn) ran out at 2.180181520 s: detection
/// 2.180181520 - 2.043437945 = 136.743575 ms. Its term-2 vote split; its next timeout started
/// term 3, won by the fourth vote at 2.336921832 s: election 2.336921832 - 2.180181520 =
/// 156.740312 ms, the split vote's second round counted in the election.
#[test]
fn a_crashed_raft_leaders_failover_counts_a_split_vote_in_the_election() {
    let f = only_failover("raft-figure-16");
    assert_eq!(f.down_from_ns, Some(2_043_437_945));
    assert_eq!(f.sought_at_ns, Some(2_180_181_520));
    assert_eq!(f.detection_ns, Some(136_743_575));
    assert_eq!(f.election_ns, Some(156_740_312));
    assert_eq!(f.serving_from_ns, Some(2_336_921_832));
}

/// A handover through an overlap has no outage to split: the new holder believed before the
/// old one stopped.
#[test]
fn an_overlapping_handover_has_no_outage() {
    let f = only_failover("ntp-step-back-wall-clock-expiry");
    assert_eq!(f.down_from_ns, None);
    assert_eq!((f.detection_ns, f.election_ns), (None, None));
    assert!(f.sought_at_ns.is_some());
}

/// A sweep carries each run's split to `runs.csv` and each cell's distribution to
/// `results.csv` and `report.md`: every seed of the paused-holder story has the same 7.1 s
/// detection (the pause and the retry schedule do not depend on the seed).
#[test]
fn a_sweep_gives_the_failover_split_per_cell() {
    let grid = Grid::build(SweepSpec {
        name: "q4".into(),
        source: "q4-gc-pause-two-sided".into(),
        scenario: scenario(library::text("q4-gc-pause-two-sided").unwrap()),
        vary: vec![("T".into(), vec!["10s".into()])],
        seeds: 3,
        references: Vec::new(),
    })
    .unwrap();
    let mut runs_csv = Vec::new();
    let (st, _) = sweep::run_all(&grid, Some(1), false, &mut runs_csv).unwrap();
    assert_eq!(st[0].detections_ns, vec![7_100 * MS; 3]);
    assert_eq!(st[0].elections_ns, vec![904 * MS; 3]);
    let runs = String::from_utf8(runs_csv).unwrap();
    let names: Vec<&str> = runs.lines().next().unwrap().split(',').collect();
    let column = |name: &str| names.iter().position(|h| *h == name).unwrap();
    for line in runs.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields[column("detection_ns")], "7100000000", "{line}");
        assert_eq!(fields[column("election_ns")], "904000000", "{line}");
    }
    let results = String::from_utf8(sweep::files::results_csv(&grid, &st)).unwrap();
    let header: Vec<&str> = results.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = results.lines().nth(1).unwrap().split(',').collect();
    let at = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(at("failover_runs"), "3");
    assert_eq!(at("median_detection_ns"), "7100000000");
    assert_eq!(at("max_election_ns"), "904000000");
}
