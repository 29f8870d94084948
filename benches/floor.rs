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
//! canonical/floor, or run `cargo bench --bench ratio`, which times both in turns.
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
