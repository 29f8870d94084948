//! Guided search against swarm testing on the bundled needles (`scenarios/needle-*.ron`):
//! configurations that only two or more faults in order break. For each needle and each of 10
//! exploration seeds (the scenario's seed + 1000 k), the runs up to and including the first
//! violation, capped at 2,000, by `--search guided` and by `--search swarm`; it prints, per
//! needle, the median of each (a seed that finds nothing counts as more than the cap), the
//! ratio, and how many seeds find it within the cap; then the runs/s of each on one needle.
//!
//! `cargo bench --bench needles`

use leasesim::explore::{Exploration, Ran};
use leasesim::scenario::library;
use leasesim::sweep::Shard;
use leasesim::Scenario;

const SEEDS: u64 = 10;
const CAP: u64 = 2_000;

/// The runs to the first violation (`None`: none within the cap), the runs done and the events.
fn explore(base: &Scenario, guided: bool) -> (Option<u64>, u64) {
    let nemesis = base.nemesis.clone().expect("a needle has an envelope");
    let e = Exploration {
        base,
        nemesis: &nemesis,
        swarm: true,
        guided,
        runs: CAP,
    };
    let runner = |s: &Scenario| {
        leasesim::run("needle", s)
            .map(|o| o.summary)
            .map_err(|e| e.problems)
    };
    let ran: Ran = e
        .run_all(Shard::ALL, None, &|_| {}, &runner)
        .expect("every run runs");
    let found = ran
        .records
        .iter()
        .find(|r| r.violation.is_some())
        .map(|r| r.run + 1);
    (found, ran.records.len() as u64)
}

/// The median of `v` (10 values: the mean of the 5th and 6th), a miss counted as above the cap.
fn median(v: &[Option<u64>]) -> String {
    let mut x: Vec<u64> = v.iter().map(|r| r.unwrap_or(CAP + 1)).collect();
    x.sort_unstable();
    let m = (x[(x.len() - 1) / 2] + x[x.len() / 2]) / 2;
    if m > CAP {
        format!(">{CAP}")
    } else {
        m.to_string()
    }
}

fn with_seed(name: &str, k: u64) -> Scenario {
    let mut s = Scenario::from_ron(library::text(name).expect("bundled")).expect("valid");
    s.seed = s.seed.wrapping_add(1000 * k);
    s
}

#[allow(clippy::disallowed_types)] // wall time for the runs/s line only
fn main() {
    let needles: Vec<&str> = library::names()
        .into_iter()
        .filter(|n| n.starts_with("needle-"))
        .collect();
    println!(
        "{:<46} {:>8} {:>8} {:>7} {:>8} {:>8}",
        "needle", "guided", "swarm", "ratio", "g found", "s found"
    );
    for name in &needles {
        let mut g = Vec::new();
        let mut s = Vec::new();
        for k in 0..SEEDS {
            let base = with_seed(name, k);
            g.push(explore(&base, true).0);
            s.push(explore(&base, false).0);
        }
        let med = |v: &[Option<u64>]| {
            let mut x: Vec<u64> = v.iter().map(|r| r.unwrap_or(CAP + 1)).collect();
            x.sort_unstable();
            (x[4] + x[5]) as f64 / 2.0
        };
        println!(
            "{:<46} {:>8} {:>8} {:>6.1}x {:>5}/{SEEDS} {:>5}/{SEEDS}",
            name,
            median(&g),
            median(&s),
            med(&s) / med(&g),
            g.iter().filter(|r| r.is_some()).count(),
            s.iter().filter(|r| r.is_some()).count(),
        );
    }
    // Runs/s on one needle with no early stop: the within-envelope runs of a whole exploration.
    let name = "needle-two-sided-cut-then-two-stalls";
    for guided in [true, false] {
        let mut runs = 0;
        let started = std::time::Instant::now();
        for k in 0..SEEDS {
            runs += explore(&with_seed(name, k), guided).1;
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "{name}, {}: {runs} runs in {secs:.2} s, {:.0} runs/s",
            if guided { "guided" } else { "swarm" },
            runs as f64 / secs
        );
    }
}
