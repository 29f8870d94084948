//! The floor: what any event engine pays for the canonical hour's events with no model at all.
//!
//! As many events as the canonical hour runs (counted by running it once) go through a bare
//! `std::collections::BinaryHeap` of (time, seq, slot) keys, the same 24-byte key the engine's
//! queue uses. Each pop pushes one event a ChaCha-drawn exponential gap later, so the pending
//! population stays at `PENDING`. The engine pushes all of a run's node faults when it builds the
//! run; in the canonical hour that is four starts and, at one a minute per contender, about 180
//! GC pauses, pending from the start and fewer as the hour goes, plus a few arrivals, messages
//! and timers per node in flight. 200 is of that order (the engine does not count its queue, so
//! this is an estimate). Compare its events/s with `canonical/hour` for the ratio
//! canonical/floor.
//!
//! `cargo bench --bench floor -- --warm-up-time 1 --measurement-time 5`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Duration;

const CANONICAL: &str = include_str!("canonical.ron");

/// Events pending at any time.
const PENDING: u64 = 200;
/// Simulated time the events span, in ns (the canonical hour).
const HOUR_NS: f64 = 3600e9;

/// Pops `events` events, pushing one new event per pop; returns a checksum of the times.
fn floor(events: u64) -> i64 {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    // Mean gap such that PENDING events at a time cover the hour in `events` pops.
    let gap = Exp::new(events as f64 / (PENDING as f64 * HOUR_NS)).expect("positive rate");
    let mut heap: BinaryHeap<Reverse<(i64, u64, u32)>> = BinaryHeap::new();
    let mut seq = 0;
    for slot in 0..PENDING {
        heap.push(Reverse((gap.sample(&mut rng) as i64, seq, slot as u32)));
        seq += 1;
    }
    let mut sum = 0i64;
    for _ in 0..events {
        let Reverse((at, _, slot)) = heap.pop().expect("never empty");
        sum = sum.wrapping_add(at);
        heap.push(Reverse((at + gap.sample(&mut rng) as i64, seq, slot)));
        seq += 1;
    }
    sum
}

fn floor_hour(c: &mut Criterion) {
    let scenario = leasesim::Scenario::from_ron(CANONICAL).expect("canonical.ron parses");
    let events = leasesim::run("canonical", &scenario)
        .expect("canonical.ron builds")
        .summary
        .events;
    let mut group = c.benchmark_group("floor");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(events));
    group.bench_function("hour", |b| b.iter(|| floor(black_box(events))));
    group.finish();
}

criterion_group!(benches, floor_hour);
criterion_main!(benches);
