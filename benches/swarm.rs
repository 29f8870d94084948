//! Swarm testing against every-kind-on (issue 13): how many runs `explore` needs to find a
//! violation on a known-unsafe configuration, with each run enabling a random subset of the
//! envelope's kinds (swarm) and with every kind on in every run.
//!
//! The configuration is `explore-cached-bool-pauses` (a CachedBool holder, T = 10 s, whose only
//! weakness is a pause that outlasts its term), explored inside two envelopes that also allow
//! crashes, partitions, drops, delay spikes, clock steps and drift:
//! - `mild`: those other kinds at 60 an hour. They rarely get in the way, and every-kind-on,
//!   which always has pauses at their full rate, finds the pause sooner.
//! - `suppressing`: crashes, partitions and drops at 600 an hour. They keep moving or stalling
//!   the lease (a crashed holder cannot pause, a grant that is dropped or cut off hands b
//!   nothing), so with every kind on a long pause almost never meets a clean handover; a swarm
//!   run often enables pauses with few others.
//!
//! For each of 40 exploration seeds it counts the runs up to and including the first violation
//! (capped at 2,000), and prints the mean, median and largest count of each.
//!
//! `cargo bench --bench swarm`

use leasesim::explore::{Exploration, RunRecord};
use leasesim::scenario::library;
use leasesim::sweep::Shard;
use leasesim::Scenario;

const MILD: &str = r#"(
    pauses: (max: "20s", per_minute: 1.0),
    crashes: (per_hour: 60.0, max_down: "20s"),
    partitions: (max: "20s", per_hour: 60.0),
    drops: (max: "5s", per_hour: 60.0),
    delay_spikes: (max: "5s", max_extra: "2s", per_hour: 60.0),
    steps: (max: "1s", per_hour: 60.0),
    drift_ppm: 200.0,
)"#;
const SUPPRESSING: &str = r#"(
    pauses: (max: "20s", per_minute: 1.0),
    crashes: (per_hour: 600.0, max_down: "20s"),
    partitions: (max: "20s", per_hour: 600.0),
    drops: (max: "20s", per_hour: 600.0),
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
        guided: false,
        runs: CAP,
        liveness: None,
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
    for (envelope, ron_text) in [("mild", MILD), ("suppressing", SUPPRESSING)] {
        let mut base = Scenario::from_ron(text).expect("parses");
        base.nemesis = Some(
            leasesim::scenario::ron_options()
                .from_str(ron_text)
                .expect("an envelope"),
        );
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
                "{envelope:>11}, {label:>13}: runs to the first violation over {SEEDS} \
                 explorations: mean {mean:.1}, median {}, max {} (cap {CAP})",
                counts[counts.len() / 2],
                counts[counts.len() - 1]
            );
        }
    }
}
