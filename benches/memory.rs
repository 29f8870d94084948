//! Memory stays flat in simulated time: each protocol's peak of live heap bytes over a run of
//! 600 s and of 2400 s, with a steady workload and periodic faults, must be within 1.3x.
//!
//! The allocator is the system one wrapped in a counter (current and peak live bytes). Each
//! run is the library's `run` (no observer, no trace), on the bench's thread alone
//! (`LEASESIM_HELPER_THREAD=0`): the peak is taken from the live bytes just before it, so it
//! counts what the run itself holds (engine, nodes, oracle, statistics, the outcome). A
//! protocol whose state grew with the run (a log never compacted, a history per sync, a table
//! per term) would show a ratio near 4.
//!
//! Random faults are drawn as the run reaches them (one pending fault per generator and node)
//! and network fault windows are forgotten once they end, so the schedule itself no longer
//! grows with the run, and every fault duration is drawn from a bounded range, so that both
//! runs see the same longest pause. What still differs is rarer coincidences in the longer
//! run's four times as many faults (pauses on several nodes at once, a deeper queue after a
//! resume), so each protocol runs under three seeds and the median ratio is its figure (each
//! seed's is printed too). A protocol passes when that ratio is within 1.3x, or
//! when what the longer run holds more is at most [`MAX_BYTES_PER_FAULT`] per extra fault
//! drawn (a state that grew with the run would show a ratio near 4 and thousands of bytes per
//! fault).
//!
//! A second table judges by events rather than simulated time: each protocol with its periods at
//! the floor the checker accepts (1 us renewals, heartbeats, retries, no-ops or clock syncs),
//! over [`FINE_SHORT_S`] and three times as long, with the timeline recorder the charts use
//! attached. Both runs have the same faults, early on: two GC pauses and a partition, so that
//! both see the same backlog a paused node's peers build at a microsecond's period (bounded by
//! the deferred list's cap, not by the events). At these periods simulated time is events (a
//! few million a second), so the longer run has about three times the events; its peak may be
//! at most [`MAX_RATIO`] times as high, or grow by at most [`MAX_BYTES_PER_EVENT`] per extra
//! event: a queue entry, a chart point or a record kept per renewal or sync (about 40 to 200
//! bytes each) would show at once.
//!
//! `cargo bench --bench memory` (a protocol's name as an argument runs only the protocols whose
//! names contain it)

use leasesim::time::Dur;
use leasesim::Scenario;
use std::alloc::{GlobalAlloc, Layout, System};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

impl Counting {
    fn grew(by: usize) {
        let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
        PEAK.fetch_max(now, Ordering::Relaxed);
    }

    fn shrank(by: usize) {
        LIVE.fetch_sub(by, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed through to `System` unchanged; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            Counting::grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            Counting::grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        Counting::shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                Counting::grew(new_size - layout.size());
            } else {
                Counting::shrank(layout.size() - new_size);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The shorter and the longer run, in seconds of simulated time.
/// The seeds each protocol runs under: the figures are those of the median ratio, since one
/// seed's peak hangs on the rarest coincidence of faults it happens to draw.
const SEEDS: [u64; 3] = [7, 8, 9];
const SHORT_S: u64 = 600;
const LONG_S: u64 = 2400;
/// The most the longer run's peak may exceed the shorter's...
const MAX_RATIO: f64 = 1.3;
/// ... unless it is no more than this per extra fault drawn.
const MAX_BYTES_PER_FAULT: usize = 512;

/// Simulated seconds of the shorter of the two runs at 1 us periods; the longer runs three times
/// as long.
const FINE_SHORT_S: i64 = 2;

/// The faults of both runs at 1 us periods: the first node and the fourth (a grantor or leader
/// and a contender or replica) paused, then the two cut off from each other.
const FINE_FAULTS: &str = r#"faults: [
        Pause(node: "FIRST", at: "1200ms", duration: "300ms", kind: Gc),
        Pause(node: "FOURTH", at: "1300ms", duration: "300ms", kind: Gc),
        Partition(at: "1700ms", duration: "200ms", groups: [["FIRST"], ["FOURTH"]]),
    ],"#;
/// The most the longer 1 us run may hold more, per extra event.
const MAX_BYTES_PER_EVENT: f64 = 0.5;

/// Random faults every protocol below runs under: GC pauses, partitions and crashes (grantors
/// and replicas included), so that leaders and holders change, logs grow and terms pass. Every
/// duration is drawn from a bounded range, so that both runs see the same extremes: with
/// exponential pauses (mean 200 ms) the longest of the longer run's four times as many draws is
/// longer (mean x ln n: 0.88 s against 1.15 s), and a paused node keeps what arrives for its
/// resume, a backlog that grows with the pause, not with simulated time.
const FAULTS: &str = r#"random_faults: [
        Pauses(per_minute: 2.0, duration: Uniform(min: "10ms", max: "400ms"), kind: Gc),
        Partitions(per_hour: 60.0, duration: Uniform(min: "200ms", max: "5s")),
        Crashes(per_hour: 20.0, restart_after: Uniform(min: "1s", max: "5s")),
    ],"#;

/// A lock service under `strategy`: one grantor (three for Redlock) and three contenders.
fn lock_service(strategy: &str, grantors: usize, lease: &str, clocks: &str) -> String {
    let grantors: Vec<String> = (1..=grantors)
        .map(|i| format!("(name: \"g{i}\", role: Grantor)"))
        .collect();
    format!(
        r#"Scenario(
            seed: 7,
            duration: "60s",
            lease: {lease},
            strategy: {strategy},
            clocks: {clocks},
            nodes: [
                {},
                (name: "c1", role: Contender),
                (name: "c2", role: Contender, start: "25ms"),
                (name: "c3", role: Contender, start: "50ms"),
            ],
            network: (delay: Uniform(min: "200us", max: "2ms"), loss: 0.001, duplicate: 0.001),
            workload: (reads_per_second: 100.0, writes_per_second: 20.0),
            {FAULTS}
        )"#,
        grantors.join(", ")
    )
}

/// Three replicas under `strategy` with `workload`.
fn replicas(strategy: &str, lease: &str, workload: &str) -> String {
    format!(
        r#"Scenario(
            seed: 7,
            duration: "60s",
            lease: {lease},
            strategy: {strategy},
            clocks: (drift_spread_ppm: 200.0, placement: Random),
            nodes: [
                (name: "r1", role: Replica),
                (name: "r2", role: Replica, start: "50ms"),
                (name: "r3", role: Replica, start: "100ms"),
            ],
            network: (delay: Uniform(min: "200us", max: "2ms")),
            workload: {workload},
            {FAULTS}
        )"#
    )
}

/// Three etcd members and three clients under `strategy`.
fn etcd_cluster(strategy: &str, lease: &str) -> String {
    format!(
        r#"Scenario(
            seed: 7,
            duration: "60s",
            lease: {lease},
            strategy: {strategy},
            clocks: (drift_spread_ppm: 200.0, placement: Random),
            nodes: [
                (name: "r1", role: Replica),
                (name: "r2", role: Replica, start: "50ms"),
                (name: "r3", role: Replica, start: "100ms"),
                (name: "c1", role: Contender),
                (name: "c2", role: Contender, start: "50ms"),
                (name: "c3", role: Contender, start: "100ms"),
            ],
            network: (delay: Uniform(min: "200us", max: "2ms"), loss: 0.001, duplicate: 0.001),
            workload: (reads_per_second: 100.0, writes_per_second: 20.0),
            {FAULTS}
        )"#
    )
}

/// Each protocol's scenario, by name.
fn cases() -> Vec<(&'static str, String)> {
    let drifting = "(drift_spread_ppm: 200.0, placement: Random)";
    let lease = r#"(duration: "5s", grantor_restart: Wait)"#;
    vec![
        (
            "base TwoSided",
            lock_service(r#"TwoSided(holder_margin: "10ms")"#, 1, lease, drifting),
        ),
        ("Redlock", lock_service("Redlock()", 3, lease, drifting)),
        (
            "ChubbySession",
            lock_service(
                r#"ChubbySession(grace: "10s", lock_delay: "5s")"#,
                1,
                r#"(duration: "12s", renew_every: "4s")"#,
                drifting,
            ),
        ),
        (
            "K8sLeaderElection",
            lock_service(
                r#"K8sLeaderElection(renew_deadline: "10s", retry_period: "2s", jitter_factor: 1.2)"#,
                1,
                r#"(duration: "15s")"#,
                drifting,
            ),
        ),
        (
            "EtcdLease",
            etcd_cluster("EtcdLease()", r#"(duration: "5s", retry_every: "1s")"#),
        ),
        (
            "RaftLeaderLease (TiKV)",
            replicas(
                r#"RaftLeaderLease(election_timeout: "10s", election_jitter: "10s",
                    heartbeat: "2s", tick: "1s", reads: LeaseOrReadIndex,
                    max_clock_skew: "500ms")"#,
                r#"(duration: "9s")"#,
                "(reads_per_second: 200.0, writes_per_second: 200.0)",
            ),
        ),
        (
            "LeaseGuard",
            replicas(
                r#"LeaseGuard(mode: LeaseGuard, max_clock_error: "200us", noop_every: "250ms",
                    election_timeout: "1s", heartbeat: "100ms", log_write: "250us")"#,
                r#"(duration: "1s")"#,
                "(reads_per_second: 200.0, writes_per_second: 100.0)",
            ),
        ),
        (
            "TrueTime (sync 1s)",
            lock_service(
                "TrueTime",
                1,
                lease,
                r#"(drift_spread_ppm: 100.0, placement: Random,
                    uncertainty: (base: "1ms", growth_ppm: 200.0, sync_every: "1s"))"#,
            ),
        ),
    ]
}

/// Each protocol with its periods at the checker's floor of 1 us, by name.
fn fine_cases() -> Vec<(&'static str, String)> {
    let drifting = "(drift_spread_ppm: 200.0, placement: Random)";
    let renew =
        r#"(duration: "5s", renew_every: "1us", retry_every: "1us", grantor_restart: Wait)"#;
    vec![
        (
            "base TwoSided, renew_every 1us",
            lock_service(r#"TwoSided(holder_margin: "10ms")"#, 1, renew, drifting),
        ),
        (
            "Redlock, renew_every 1us",
            lock_service("Redlock()", 3, renew, drifting),
        ),
        (
            "ChubbySession, renew_every 1us",
            lock_service(
                r#"ChubbySession(grace: "10s", lock_delay: "5s")"#,
                1,
                r#"(duration: "12s", renew_every: "1us", retry_every: "1us")"#,
                drifting,
            ),
        ),
        (
            "K8sLeaderElection, retry_period 1us",
            lock_service(
                r#"K8sLeaderElection(renew_deadline: "10s", retry_period: "1us")"#,
                1,
                r#"(duration: "15s")"#,
                drifting,
            ),
        ),
        (
            "EtcdLease, heartbeat 1us",
            etcd_cluster(
                r#"EtcdLease(election_timeout: "300ms", heartbeat: "1us")"#,
                r#"(duration: "5s", retry_every: "1us")"#,
            ),
        ),
        (
            "RaftLeaderLease, heartbeat 1us",
            replicas(
                r#"RaftLeaderLease(election_timeout: "300ms", election_jitter: "300ms",
                    heartbeat: "1us", reads: LeaseOrReadIndex, max_clock_skew: "20ms")"#,
                r#"(duration: "250ms")"#,
                "(reads_per_second: 200.0, writes_per_second: 200.0)",
            ),
        ),
        (
            "LeaseGuard, heartbeat 1us",
            replicas(
                r#"LeaseGuard(mode: LeaseGuard, max_clock_error: "200us", noop_every: "250ms",
                    election_timeout: "1s", heartbeat: "1us", log_write: "250us")"#,
                r#"(duration: "1s")"#,
                "(reads_per_second: 200.0, writes_per_second: 100.0)",
            ),
        ),
        (
            "TrueTime, sync_every 1us",
            lock_service(
                "TrueTime",
                1,
                r#"(duration: "5s", grantor_restart: Wait)"#,
                r#"(drift_spread_ppm: 100.0, placement: Random,
                    uncertainty: (base: "1ms", growth_ppm: 200.0, sync_every: "1us"))"#,
            ),
        ),
    ]
}

/// Runs `text` for `seconds` with [`FINE_FAULTS`] instead of the random ones, timeline
/// recorder attached: the peak of live bytes above those before it, and the events run.
fn measure_fine(name: &str, text: &str, seconds: i64) -> (usize, u64) {
    let (first, fourth) = if text.contains("\"g1\"") {
        ("g1", "c1")
    } else {
        ("r1", "r2")
    };
    let faults = FINE_FAULTS
        .replace("FIRST", first)
        .replace("FOURTH", fourth);
    let text = text.replace(FAULTS, &faults);
    let mut s = Scenario::from_ron(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    s.duration = Dur::from_secs(seconds);
    s.limits.max_events = 10_000_000_000;
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let (out, timeline) =
        leasesim::run_recorded(name, &s).unwrap_or_else(|e| panic!("{name}: {e}"));
    let peak = PEAK.load(Ordering::Relaxed) - before;
    drop(timeline);
    assert!(!out.summary.truncated, "{name}: truncated");
    (peak, out.summary.events)
}

/// The 1 us table; the names of the protocols whose memory grew with events.
fn fine_table(filter: &[String]) -> Vec<&'static str> {
    println!();
    println!(
        "| protocol at 1 us periods | peak bytes, {FINE_SHORT_S} s | events | peak bytes, {} s \
         | events | ratio | bytes more per extra event |",
        FINE_SHORT_S * 3
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut failed = Vec::new();
    for (name, text) in fine_cases() {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let (short, short_events) = measure_fine(name, &text, FINE_SHORT_S);
        let (long, long_events) = measure_fine(name, &text, FINE_SHORT_S * 3);
        let extra = long_events.saturating_sub(short_events).max(1);
        let per_event = long.saturating_sub(short) as f64 / extra as f64;
        let ratio = long as f64 / short as f64;
        println!(
            "| {name} | {short} | {short_events} | {long} | {long_events} | {ratio:.2} | \
             {per_event:.3} |"
        );
        if ratio > MAX_RATIO && per_event > MAX_BYTES_PER_EVENT {
            failed.push(name);
        }
    }
    failed
}

/// What one run held and did.
struct Run {
    /// The peak of live bytes while it ran, above what was live before it started.
    peak: usize,
    /// Faults drawn for it (and given).
    faults: usize,
    events: u64,
}

/// Runs `text` under `seed` for `seconds` of simulated time.
fn measure(name: &str, text: &str, seed: u64, seconds: u64) -> Run {
    let mut s = Scenario::from_ron(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    s.duration = Dur::from_secs(seconds as i64);
    s.seed = seed;
    let faults = s.fault_schedule().len();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = leasesim::run(name, &s).unwrap_or_else(|e| panic!("{name}: {e}"));
    let peak = PEAK.load(Ordering::Relaxed) - before;
    Run {
        peak,
        faults,
        events: out.summary.events,
    }
}

fn main() -> ExitCode {
    // The runs on this thread alone: the helper that draws a long run's Poisson streams holds
    // a bounded set of chunks, the same at every length, which would only dilute the ratios.
    std::env::set_var(leasesim::engine::HELPER_THREAD_VAR, "0");
    // `cargo bench` passes `--bench`; a filter selects protocols by name.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    println!(
        "| protocol | peak bytes at {SHORT_S} s | at {LONG_S} s | ratio | ratio by seed | \
         faults drawn | bytes more per extra fault | events at {LONG_S} s |"
    );
    println!("|---|---:|---:|---:|---|---:|---:|---:|");
    let mut failed = Vec::new();
    for (name, text) in cases() {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let mut by_seed: Vec<(f64, Run, Run)> = SEEDS
            .iter()
            .map(|&seed| {
                let short = measure(name, &text, seed, SHORT_S);
                let long = measure(name, &text, seed, LONG_S);
                (long.peak as f64 / short.peak as f64, short, long)
            })
            .collect();
        let ratios: Vec<String> = by_seed.iter().map(|(r, _, _)| format!("{r:.2}")).collect();
        by_seed.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (ratio, short, long) = &by_seed[by_seed.len() / 2];
        let more = long.peak.saturating_sub(short.peak);
        let per_fault = more / long.faults.saturating_sub(short.faults).max(1);
        println!(
            "| {name} | {} | {} | {ratio:.2} | {} | {} / {} | {per_fault} | {} |",
            short.peak,
            long.peak,
            ratios.join(", "),
            short.faults,
            long.faults,
            long.events
        );
        if *ratio > MAX_RATIO && per_fault > MAX_BYTES_PER_FAULT {
            failed.push(name);
        }
    }
    let fine_failed = fine_table(&filter);
    if !fine_failed.is_empty() {
        eprintln!(
            "memory grows with events at 1 us periods (more than {MAX_BYTES_PER_EVENT} bytes \
             per extra event): {fine_failed:?}"
        );
    }
    if failed.is_empty() && fine_failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "memory grows with simulated time (ratio above {MAX_RATIO}, more than \
             {MAX_BYTES_PER_FAULT} bytes per extra fault): {failed:?}"
        );
        ExitCode::FAILURE
    }
}
