//! The ratio canonical/floor, in process and as whole processes.
//!
//! The floor is a bare binary heap pushed and popped as many times as the canonical hour
//! (`benches/canonical.ron`) has events, with exponential gaps, holding as many events as the
//! hour's own queue holds on average (the engine counts it: `run --stats` prints it as "events
//! in flight"). See `benches/shared/floor_loop.rs`.
//!
//! - In process: `leasesim::run` (no observer, no report) against the floor loop, each timed in
//!   CPU seconds of the process (every thread: the helper that draws the hour's Poisson streams
//!   on another core is counted; it is joined before `run` returns).
//! - Whole process: `leasesim run benches/canonical.ron --out <temp>` (loading, the run with the
//!   chart recorder, the reports and both charts written) against this bench's own binary
//!   started as a floor process (`ratio --floor-process EVENTS PENDING`: the same loop behind a
//!   process start), each timed in CPU seconds of the child (user and system).
//!
//! Each round times one of each back to back, so that both see the same load on the machine;
//! the figure is the median of the rounds' ratios in CPU time, with the fastest of each beside
//! it (the least disturbed by other work). The ratio of elapsed times is printed after it: the
//! floor runs on one thread, while a long run draws its streams on a second core, which costs
//! CPU time and saves elapsed time.
//!
//! `cargo bench --bench ratio` (`LEASESIM_RATIO_ROUNDS=9` for more rounds than the 5 default)

#[path = "shared/floor_loop.rs"]
mod floor_loop;

use std::hint::black_box;
use std::path::Path;
use std::process::Command;

const CANONICAL: &str = include_str!("canonical.ron");

/// A clock's reading, in seconds.
fn clock_seconds(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill in.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "the clock {clock} is readable");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The CPU time (user and system) of every child process waited for so far, in seconds.
fn children_cpu_seconds() -> f64 {
    // SAFETY: an all-zero rusage is a valid value for the call to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid rusage for the call to fill in.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0, "the children's usage is readable");
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// What a timed piece of work took: CPU seconds (every thread) and elapsed seconds.
#[derive(Clone, Copy)]
struct Took {
    cpu: f64,
    elapsed: f64,
}

/// Runs `f` and what it took of the process, and its result.
fn seconds(f: impl FnOnce() -> u64) -> (Took, u64) {
    let (cpu, elapsed) = (
        clock_seconds(libc::CLOCK_PROCESS_CPUTIME_ID),
        clock_seconds(libc::CLOCK_MONOTONIC),
    );
    let out = f();
    let took = Took {
        cpu: clock_seconds(libc::CLOCK_PROCESS_CPUTIME_ID) - cpu,
        elapsed: clock_seconds(libc::CLOCK_MONOTONIC) - elapsed,
    };
    (took, out)
}

/// Runs `cmd` to its end (it must succeed), and what it took: the child's CPU seconds (user
/// and system), and the seconds from its start to its end.
fn process_seconds(cmd: &mut Command) -> Took {
    let (cpu, elapsed) = (children_cpu_seconds(), clock_seconds(libc::CLOCK_MONOTONIC));
    let out = cmd.output().expect("the child starts");
    let elapsed = clock_seconds(libc::CLOCK_MONOTONIC) - elapsed;
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Took {
        cpu: children_cpu_seconds() - cpu,
        elapsed,
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn fastest(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Times `a` and `b` in turns for `rounds` rounds and prints the ratio b/a, in CPU time (the
/// figure) and in elapsed time.
fn in_turns(
    rounds: usize,
    events: u64,
    names: (&str, &str),
    mut a: impl FnMut() -> Took,
    mut b: impl FnMut() -> Took,
) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let (x, y) = (a(), b());
        println!(
            "  round {round}: {} {:.3} s, {} {:.3} s, ratio {:.2} (elapsed {:.3} s, {:.3} s, {:.2})",
            names.0,
            x.cpu,
            names.1,
            y.cpu,
            y.cpu / x.cpu,
            x.elapsed,
            y.elapsed,
            y.elapsed / x.elapsed
        );
        xs.push(x);
        ys.push(y);
    }
    let mevents = |s: f64| events as f64 / s / 1e6;
    for (reading, of) in [
        ("CPU", (|t: &Took| t.cpu) as fn(&Took) -> f64),
        ("elapsed", |t| t.elapsed),
    ] {
        let (mut x, mut y): (Vec<f64>, Vec<f64>) =
            (xs.iter().map(of).collect(), ys.iter().map(of).collect());
        let mut ratios: Vec<f64> = x.iter().zip(&y).map(|(x, y)| y / x).collect();
        for (name, v) in [(names.0, &mut x), (names.1, &mut y)] {
            let f = fastest(v);
            println!(
                "  {name}, {reading}: median {:.3} s, fastest {f:.3} s ({:.2} M events/s)",
                median(v),
                mevents(f)
            );
        }
        println!(
            "  ratio {}/{}, {reading}: {:.2}x (median of {rounds} rounds; fastest against fastest {:.2}x)",
            names.1,
            names.0,
            median(&mut ratios),
            fastest(&y) / fastest(&x)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, events, pending] = args.as_slice() {
        if flag == "--floor-process" {
            let events = events.parse().expect("EVENTS is a count");
            let pending = pending.parse().expect("PENDING is a count");
            black_box(floor_loop::floor(events, pending));
            return;
        }
    }
    // `cargo bench` passes `--bench`; nothing else here takes arguments.
    let rounds: usize = std::env::var("LEASESIM_RATIO_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5)
        .max(1);
    let scenario = leasesim::Scenario::from_ron(CANONICAL).expect("canonical.ron parses");
    let once = leasesim::run("canonical", &scenario).expect("canonical.ron builds");
    let events = once.summary.events;
    let pending = once.mean_in_flight.round() as u64;
    println!(
        "events: {events}; in flight on average: {:.2} (the floor holds {pending})",
        once.mean_in_flight
    );

    println!("in process (CPU seconds of the process, every thread; and elapsed seconds):");
    in_turns(
        rounds,
        events,
        ("floor", "canonical"),
        || seconds(|| floor_loop::floor(black_box(events), pending) as u64).0,
        || {
            let (secs, n) = seconds(|| {
                leasesim::run("canonical", &scenario)
                    .expect("canonical.ron builds")
                    .summary
                    .events
            });
            assert_eq!(n, events, "the hour runs the same events every time");
            secs
        },
    );

    println!("whole process (CPU seconds of the child, user and system; and elapsed seconds):");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("leasesim-ratio-{}", std::process::id()));
    let me = std::env::current_exe().expect("the bench knows its binary");
    in_turns(
        rounds,
        events,
        ("floor process", "leasesim run"),
        || {
            process_seconds(
                Command::new(&me)
                    .arg("--floor-process")
                    .arg(events.to_string())
                    .arg(pending.to_string()),
            )
        },
        || {
            process_seconds(
                Command::new(env!("CARGO_BIN_EXE_leasesim"))
                    .arg("run")
                    .arg(manifest.join("benches/canonical.ron"))
                    .arg("--out")
                    .arg(&out),
            )
        },
    );
    let _ = std::fs::remove_dir_all(&out);
}
