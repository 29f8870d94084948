//! The ratio canonical/floor: the canonical hour (`benches/canonical.ron`, run as
//! `leasesim::run` does, no observer) against the floor (a bare binary heap pushed and popped
//! as many times as the hour has events, with exponential gaps; `benches/floor.rs`), timed in
//! turns so that both see the same load on the machine.
//!
//! Each round times one floor and one canonical hour back to back, in CPU seconds of the thread
//! (on a busy machine, wall time counts the waits for a core too); the figure is the median of
//! the rounds' ratios, with the fastest of each beside it (the least disturbed by other work).
//!
//! `cargo bench --bench ratio` (`LEASESIM_RATIO_ROUNDS=9` for more rounds than the 5 default)

#[path = "shared/floor_loop.rs"]
mod floor_loop;

use std::hint::black_box;

const CANONICAL: &str = include_str!("canonical.ron");

/// The CPU time the calling thread has used, in seconds.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill in.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "the thread's CPU clock is readable");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Runs `f`, and the CPU seconds it took.
fn seconds(f: impl FnOnce() -> u64) -> (f64, u64) {
    let start = thread_cpu_seconds();
    let out = f();
    (thread_cpu_seconds() - start, out)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; nothing here takes arguments.
    let rounds: usize = std::env::var("LEASESIM_RATIO_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5)
        .max(1);
    let scenario = leasesim::Scenario::from_ron(CANONICAL).expect("canonical.ron parses");
    let hour = || {
        leasesim::run("canonical", &scenario)
            .expect("canonical.ron builds")
            .summary
            .events
    };
    let events = hour();
    let (mut floors, mut hours, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        let (f, _) = seconds(|| floor_loop::floor(black_box(events)) as u64);
        let (h, n) = seconds(hour);
        assert_eq!(n, events, "the hour runs the same events every time");
        println!(
            "round {round}: floor {f:.3} s, canonical {h:.3} s, ratio {:.2}",
            h / f
        );
        floors.push(f);
        hours.push(h);
        ratios.push(h / f);
    }
    let fastest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (f_min, h_min) = (fastest(&floors), fastest(&hours));
    let mevents = |s: f64| events as f64 / s / 1e6;
    println!("events: {events}");
    println!(
        "floor: median {:.3} s, fastest {f_min:.3} s ({:.2} M events/s)",
        median(&mut floors),
        mevents(f_min)
    );
    println!(
        "canonical: median {:.3} s, fastest {h_min:.3} s ({:.2} M events/s)",
        median(&mut hours),
        mevents(h_min)
    );
    println!(
        "ratio canonical/floor: {:.2}x (median of {rounds} rounds; fastest against fastest \
         {:.2}x)",
        median(&mut ratios),
        h_min / f_min
    );
}
