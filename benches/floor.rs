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

criterion_group!(benches, floor_hour);
criterion_main!(benches);
