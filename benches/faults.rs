//! Events per second as the number of network fault windows grows (issue 8, section 4: an
//! event's cost does not depend on how many faults the run has).
//!
//! The canonical scenario cut to ten minutes of simulated time, run with 0, 2,000 and 20,000
//! windows of 1 ms each, spread uniformly over the run: `partitions/N` are `Partition`s that cut
//! one random node off from the others (checked when a message arrives), `spikes_drops/N` are
//! half `DelaySpike`s of 2 ms and half `Drop`s of every message (checked when one is sent), and
//! `inert/N` are half `Partition`s with every node in one group and half `DelaySpike`s of 0 ns:
//! they are checked for every message and change no fate, so the run is event for event the run
//! without faults and the difference is the cost of the windows alone. Each case reports its own
//! event count as throughput, so the figures are events/s.
//!
//! `cargo bench --bench faults -- --warm-up-time 1 --measurement-time 5`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use leasesim::scenario::Fault;
use leasesim::time::Dur;
use leasesim::Scenario;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

const CANONICAL: &str = include_str!("canonical.ron");

/// Simulated time of each run.
const RUN: Dur = Dur::from_secs(600);
/// Length of every window.
const WINDOW: Dur = Dur::from_ms(1);
const COUNTS: [usize; 3] = [0, 2_000, 20_000];

#[derive(Clone, Copy)]
enum Family {
    Partitions,
    SpikesDrops,
    Inert,
}

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Partitions => "partitions",
            Family::SpikesDrops => "spikes_drops",
            Family::Inert => "inert",
        }
    }
}

/// The shortened canonical scenario with `count` windows of `family`, drawn from a fixed seed.
fn scenario(family: Family, count: usize) -> Scenario {
    let mut s = Scenario::from_ron(CANONICAL).expect("canonical.ron parses");
    s.duration = RUN;
    let names: Vec<String> = s.nodes.iter().map(|n| n.name.clone()).collect();
    let mut r = ChaCha8Rng::seed_from_u64(8);
    let mut faults: Vec<Fault> = (0..count)
        .map(|i| {
            let at = Dur::from_ns(r.random_range(0..RUN.ns() - WINDOW.ns()));
            match (family, i % 2) {
                (Family::Partitions, _) => {
                    let cut = &names[r.random_range(0..names.len())];
                    let rest = names.iter().filter(|n| *n != cut).cloned().collect();
                    Fault::Partition {
                        at: at.into(),
                        duration: WINDOW,
                        groups: vec![vec![cut.clone()], rest],
                    }
                }
                (Family::SpikesDrops, 0) => Fault::DelaySpike {
                    at: at.into(),
                    duration: WINDOW,
                    extra: Dur::from_ms(2),
                    from: None,
                    to: None,
                    kinds: None,
                },
                (Family::SpikesDrops, _) => Fault::Drop {
                    at: at.into(),
                    duration: WINDOW,
                    from: None,
                    to: None,
                    kinds: None,
                },
                (Family::Inert, 0) => Fault::Partition {
                    at: at.into(),
                    duration: WINDOW,
                    groups: vec![names.clone(), Vec::new()],
                },
                (Family::Inert, _) => Fault::DelaySpike {
                    at: at.into(),
                    duration: WINDOW,
                    extra: Dur::ZERO,
                    from: None,
                    to: None,
                    kinds: None,
                },
            }
        })
        .collect();
    faults.sort_by_key(|f| f.at());
    s.faults = faults;
    let problems = leasesim::scenario::validate::validate(&s);
    assert!(problems.is_empty(), "{problems:?}");
    s
}

fn events(s: &Scenario) -> u64 {
    leasesim::run("faults", s).expect("builds").summary.events
}

fn fault_windows(c: &mut Criterion) {
    let mut group = c.benchmark_group("faults");
    group.sample_size(10);
    for family in [Family::Partitions, Family::SpikesDrops, Family::Inert] {
        for count in COUNTS {
            if count == 0 && !matches!(family, Family::Partitions) {
                continue; // the same run as partitions/0
            }
            let s = scenario(family, count);
            group.throughput(Throughput::Elements(events(&s)));
            group.bench_with_input(BenchmarkId::new(family.name(), count), &s, |b, s| {
                b.iter(|| events(s))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(10));
    targets = fault_windows
}
criterion_main!(benches);
