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
