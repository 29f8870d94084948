//! The floor: what any event engine pays for the canonical hour's events with no model at all.
//!
//! As many events as the canonical hour runs (counted by running it once) go through a bare
//! `std::collections::BinaryHeap` of (time, seq, slot) keys, the same 24-byte key the engine's
//! queue uses. Each pop pushes one event a ChaCha-drawn exponential gap later, so the pending
//! population stays at the hour's own mean queue length (the engine counts it; `run --stats`
//! prints it as "events in flight", about 11: each contender's next read and write arrival,
//! messages and timers; the fault schedule is merged in, not queued). Compare its events/s with
//! `canonical/hour` for the ratio canonical/floor, or run `cargo bench --bench ratio`, which
//! times both in turns, in process and as whole processes.
//!
//! `floor/draw` times the one piece of work the floor and the engine share: the exponential
//! draw of a Poisson stream's next gap, as the engine makes it (`leasesim::dist::Sampler`, a
//! ChaCha8 stream per node and kind), over six streams in turn as the canonical hour's three
//! contenders' reads and writes.
//!
//! `cargo bench --bench floor -- --warm-up-time 1 --measurement-time 5`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

#[path = "shared/floor_loop.rs"]
mod floor_loop;
use floor_loop::floor;

const CANONICAL: &str = include_str!("canonical.ron");

fn floor_hour(c: &mut Criterion) {
    let scenario = leasesim::Scenario::from_ron(CANONICAL).expect("canonical.ron parses");
    let once = leasesim::run("canonical", &scenario).expect("canonical.ron builds");
    let (events, pending) = (once.summary.events, once.mean_in_flight.round() as u64);
    let mut group = c.benchmark_group("floor");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(events));
    group.bench_function("hour", |b| b.iter(|| floor(black_box(events), pending)));
    group.finish();
}

/// Draws per iteration of `floor/draw`.
const DRAWS: u64 = 1_000_000;

fn draw(c: &mut Criterion) {
    use leasesim::dist::Sampler;
    use rand::SeedableRng;
    // A read every millisecond on average, as the hour's contenders draw them.
    let gap = Sampler::Exponential(1e6);
    let mut streams: Vec<leasesim::rng::Rng> =
        (0..6).map(leasesim::rng::Rng::seed_from_u64).collect();
    let mut group = c.benchmark_group("floor");
    group.throughput(Throughput::Elements(DRAWS));
    group.bench_function("draw", |b| {
        b.iter(|| {
            let mut sum = 0i64;
            for i in 0..DRAWS {
                let rng = &mut streams[(i % 6) as usize];
                sum = sum.wrapping_add(gap.sample(rng).ns());
            }
            black_box(sum)
        })
    });
    group.finish();
}

criterion_group!(benches, floor_hour, draw);
criterion_main!(benches);
