//! The floor's loop, shared by the `floor` and `ratio` benches: what any event engine pays for
//! a run's events with no model at all (see `benches/floor.rs`).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Simulated time the events span, in ns (the canonical hour).
pub const HOUR_NS: f64 = 3600e9;

/// Pops `events` events, pushing one new event per pop, with `pending` events pending at any
/// time; returns a checksum of the times.
pub fn floor(events: u64, pending: u64) -> i64 {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    // Mean gap such that `pending` events at a time cover the hour in `events` pops.
    let gap = Exp::new(events as f64 / (pending as f64 * HOUR_NS)).expect("positive rate");
    let mut heap: BinaryHeap<Reverse<(i64, u64, u32)>> = BinaryHeap::new();
    let mut seq = 0;
    for slot in 0..pending {
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
