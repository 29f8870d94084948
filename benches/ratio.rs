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
//! the figure is the median of the rounds' ratios, with the fastest of each beside it (the least
//! disturbed by other work).
//!
//! `cargo bench --bench ratio` (`LEASESIM_RATIO_ROUNDS=9` for more rounds than the 5 default)

#[path = "shared/floor_loop.rs"]
mod floor_loop;

use std::hint::black_box;
use std::path::Path;
use std::process::Command;

const CANONICAL: &str = include_str!("canonical.ron");

/// The CPU time the process has used (all its threads), in seconds.
fn process_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill in.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "the process's CPU clock is readable");
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

/// Runs `f`, and the CPU seconds of the process it took.
fn seconds(f: impl FnOnce() -> u64) -> (f64, u64) {
    let start = process_cpu_seconds();
    let out = f();
    (process_cpu_seconds() - start, out)
}

/// Runs `cmd` to its end (it must succeed), and the CPU seconds it took.
fn process_seconds(cmd: &mut Command) -> f64 {
    let start = children_cpu_seconds();
    let out = cmd.output().expect("the child starts");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    children_cpu_seconds() - start
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn fastest(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Times `a` and `b` in turns for `rounds` rounds and prints the ratio b/a.
fn in_turns(
    rounds: usize,
    events: u64,
    names: (&str, &str),
    mut a: impl FnMut() -> f64,
    mut b: impl FnMut() -> f64,
) {
    let (mut xs, mut ys, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        let (x, y) = (a(), b());
        println!(
            "  round {round}: {} {x:.3} s, {} {y:.3} s, ratio {:.2}",
            names.0,
            names.1,
            y / x
        );
        xs.push(x);
        ys.push(y);
        ratios.push(y / x);
    }
    let mevents = |s: f64| events as f64 / s / 1e6;
    for (name, v) in [(names.0, &mut xs), (names.1, &mut ys)] {
        let f = fastest(v);
        println!(
            "  {name}: median {:.3} s, fastest {f:.3} s ({:.2} M events/s)",
            median(v),
            mevents(f)
        );
    }
    println!(
        "  ratio {}/{}: {:.2}x (median of {rounds} rounds; fastest against fastest {:.2}x)",
        names.1,
        names.0,
        median(&mut ratios),
        fastest(&ys) / fastest(&xs)
    );
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

    println!("in process (CPU seconds of the thread):");
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

    println!("whole process (CPU seconds of the child, user and system):");
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
