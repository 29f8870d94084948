//! Swarm testing against every-kind-on (issue 13): how many runs `explore` needs to find a
//! violation on a known-unsafe configuration, with each run enabling a random subset of the
//! envelope's kinds (swarm) and with every kind on in every run.
//!
//! The configuration is `explore-cached-bool-pauses` (a CachedBool holder, T = 10 s, whose only
//! weakness is a pause that outlasts its term) explored inside a wide envelope that also allows
//! crashes, partitions, drops, delay spikes, clock steps and drift. With every kind on, the other
//! kinds keep moving the lease (a crash or a partition of the holder hands it over cleanly, a
//! crashed holder cannot pause) and mask the pause; swarm runs often enable pauses with few
//! others. For each of 40 exploration seeds it counts the runs up to and including the first
//! violation (capped at 2,000), and prints the mean and median of both.
//!
//! `cargo bench --bench swarm`

use leasesim::explore::{Exploration, RunRecord};
use leasesim::scenario::library;
use leasesim::sweep::Shard;
use leasesim::Scenario;

const ENVELOPE: &str = r#"(
    pauses: (max: "20s", per_minute: 1.0),
    crashes: (per_hour: 60.0, max_down: "20s"),
    partitions: (max: "20s", per_hour: 60.0),
    drops: (max: "5s", per_hour: 60.0),
    delay_spikes: (max: "5s", max_extra: "2s", per_hour: 60.0),
    steps: (max: "1s", per_hour: 60.0),
    drift_ppm: 200.0,
)"#;
const SEEDS: u64 = 40;
const CAP: u64 = 2_000;

fn runs_to_violation(base: &Scenario, swarm: bool) -> u64 {
    let nemesis = base.nemesis.clone().expect("set below");
    let e = Exploration {
        base,
        nemesis: &nemesis,
        swarm,
        runs: CAP,
    };
    let runner = |s: &Scenario| {
        leasesim::run("swarm", s)
            .map(|o| o.summary)
            .map_err(|e| e.problems)
    };
    let records: Vec<RunRecord> = e
        .run_shard(Shard::ALL, None, &|_| {}, &runner)
        .expect("every run runs");
    match records.last() {
        Some(r) if r.violation.is_some() => r.run + 1,
        _ => CAP,
    }
}

fn main() {
    let text = library::text("explore-cached-bool-pauses").expect("bundled");
    let mut base = Scenario::from_ron(text).expect("parses");
    base.nemesis = Some(ron::from_str(ENVELOPE).expect("an envelope"));
    for (label, swarm) in [("swarm", true), ("every kind on", false)] {
        let mut counts: Vec<u64> = (0..SEEDS)
            .map(|seed| {
                let mut b = base.clone();
                b.seed = seed * 1_000_003;
                runs_to_violation(&b, swarm)
            })
            .collect();
        counts.sort_unstable();
        let mean = counts.iter().sum::<u64>() as f64 / SEEDS as f64;
        println!(
            "{label:>14}: runs to the first violation over {SEEDS} explorations: mean {mean:.1}, \
             median {}, max {} (cap {CAP})",
            counts[counts.len() / 2],
            counts[counts.len() - 1]
        );
    }
}
