//! Events per second on the canonical one-hour scenario (about 14.6 million events).
//!
//! `cargo bench --bench canonical` reports the time per run and, as throughput, events/s, and
//! the time to draw that hour's timeline chart (PNG and SVG).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

const CANONICAL: &str = include_str!("canonical.ron");

fn canonical_hour(c: &mut Criterion) {
    let scenario = leasesim::Scenario::from_ron(CANONICAL).expect("canonical.ron parses");
    let events = leasesim::run("canonical", &scenario)
        .expect("canonical.ron builds")
        .summary
        .events;
    let mut group = c.benchmark_group("canonical");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(events));
    group.bench_function("hour", |b| {
        b.iter(|| {
            leasesim::run("canonical", &scenario)
                .expect("builds")
                .summary
                .events
        })
    });
    group.finish();
}

fn canonical_chart(c: &mut Criterion) {
    let scenario = leasesim::Scenario::from_ron(CANONICAL).expect("canonical.ron parses");
    let (outcome, timeline) = leasesim::run_recorded("canonical", &scenario).expect("builds");
    c.bench_function("canonical/chart", |b| {
        b.iter(|| {
            leasesim::report::chart::timeline::timeline_chart(&timeline, &outcome.summary)
                .png
                .len()
        })
    });
}

criterion_group!(benches, canonical_hour, canonical_chart);
criterion_main!(benches);
