//! The limits on what a scenario may ask for, in one place, each with its reason.
//!
//! Every scenario that validates must run in bounded memory and bounded time; every one that
//! cannot is rejected by [`super::validate`] with the field, the value and the limit named (exit
//! code 2). The limits are far above anything the lease stories need (the bundled scenarios stay
//! below a thousandth of most of them) and well below what would exhaust a laptop. The book's
//! limits page (docs/src/limits.md) says the same for users; keep the two in step.
//!
//! - [`MAX_SCENARIO_BYTES`]: a scenario file is read whole; 16 MiB is thousands of times the
//!   largest bundled file and keeps a mistaken path (a log, `/dev/zero`) from filling memory.
//! - [`MAX_NODES`]: the timeline chart draws rows and clock-error lanes per node (about 0.4 MB
//!   of peak memory each), the network keeps per-link state and every fault a per-node table.
//!   A lease has one grantor; a hundred contenders is already an unreadable chart (~50 MB).
//! - [`MAX_DURATION_NS`]: 1000 h of simulated time. With drift bounded (below) a clock reading
//!   stays under 1.5 x 1000 h, far from `i64` overflow; longer soaks are sweeps of seeds.
//! - [`MIN_INTERVAL_NS`]: the lease term, the renewal and the retry period are at least 1 us, and
//!   so is every period and timeout of a protocol's own settings (heartbeat, election timeout
//!   and its jitter when not zero, tick, no-op, retry, renew deadline, request timeout) and
//!   `clocks.uncertainty.sync_every`. No real system times a lease finer; shorter ones only
//!   multiply events (a `renew_every` of 1 ns is a billion renewals per simulated second).
//! - [`MAX_DRIFT_PPM`], [`MAX_DRIFT_SPREAD_PPM`]: a drift of at most 500,000 ppm (50 %) either
//!   way, a spread of at most twice that: two clocks may run at any rate ratio up to 1.5 / 0.5
//!   = 3, so questions about a ratio (client-go's LeaseDuration / RenewDeadline, 15 s / 10 s =
//!   1.5, or 1.25 with other settings) can be run as asked. The clock path stays exact and far
//!   from overflow there: the rate `1 + drift` is at least 0.5 (a deadline mapped back to true
//!   time divides by at least half of [`RATE_ONE`](crate::time::RATE_ONE), never by zero), a
//!   reading stays under 1.5 x [`MAX_DURATION_NS`], and every product of an elapsed time and a
//!   rate in parts per 10^12 is at most 3.6e15 x 1.5e12 = 5.4e27, far inside `i128` (1.7e38).
//!   Past [`REALISTIC_DRIFT_PPM`] (10 %) a drift is allowed with a warning
//!   (`validate::warnings`): no clock that software disciplines runs that far off (the Linux
//!   kernel keeps adjtimex's `tick` within +-10 % of nominal, and chrony slews at most 83,333
//!   ppm), so it is a broken clock source or a thought experiment. Drifts beyond NTP's 500 ppm
//!   but within 10 % are the library's exaggerations that make an effect show in a short run,
//!   and a throttled or slewing clock: allowed without a word.
//! - [`MAX_CLOCK_STEP_NS`], [`MAX_CLOCK_STEPS`]: a node's `offset`, each `ClockStep.by` and each
//!   drawn random step are at most 100 h either way, and a run has at most 5,000 steps (fixed
//!   plus the expected number drawn; drawing stops at 10,000 whatever the draws). So a wall
//!   clock is never more than 15,001 x 100 h = 5.4e18 ns off true time, and local readings plus
//!   a lease term cannot saturate an `i64` (a saturated wall clock would fire its timers at
//!   once, forever). A VM restored from a snapshot days old is 100 h; an RTC reset to 1970 is
//!   out of scope.
//! - [`MAX_REQUEST_RATE`]: at most 100,000 reads and 100,000 writes per second per contender
//!   (a mean gap of 10 us, far above the 1 ns resolution: at 1e10/s every gap rounds to 0 and
//!   all requests fall on one instant). [`MAX_FAULT_RATE_PER_SECOND`]: likewise a random fault
//!   generator's mean gap is at least 1 us.
//!   `workload.periodic.every` is at least 10 us for the same reason. [`MAX_KEYS`]: the oracle
//!   keeps a version per key.
//! - [`MAX_PENDING_REQUESTS`]: a paused node keeps every request that arrives until it resumes,
//!   and each served request waits `service_time` for its effect. So (reads + writes per second)
//!   x (longest pause + service time) must stay under 1,000,000 requests (about 50 MB). The
//!   longest pause is that of the merged fixed pauses and worker-loop stalls of a node, or the
//!   largest draw a random
//!   pause distribution gives (heavy tails are cut at their 1 - 1e-9 quantile, see
//!   [`draw_bound_ns`]).
//! - [`MAX_FAULTS`], [`MAX_RANDOM_FAULTS`], [`RANDOM_FAULTS_HARD_STOP`]: fixed faults are held
//!   for the whole run, and a drawn schedule is listed whole where explore runs or shrinks it
//!   (a run draws its random faults as it reaches them, but draws each stream's times once
//!   ahead), so their number is memory and time. At most 100,000 fixed faults, and random
//!   generators whose expected count (rate x duration x nodes; a drawn partition lists every
//!   node and counts once per node) is at most 100,000. Drawing stops at twice that whatever the
//!   draws, which a Poisson count of mean 100,000 reaches with probability below 1e-1000.
//! - [`MAX_EVENTS`], [`DEFAULT_MAX_EVENTS`]: the engine processes 1.5 to 7 million events a
//!   second on one core, by protocol and workload. `limits.max_events` defaults to 10^8 (15 to
//!   60 s; a run that reaches it stops and says TRUNCATED) and may be raised to 10^10 (half an
//!   hour to two hours). A
//!   scenario whose estimated event count ([`estimated_events`], plus the protocol's own timers
//!   and messages: heartbeats, elections, no-ops, KeepAlives, tries, each protocol's
//!   `events_per_second` times the run) is above 10^10 could never finish and is rejected.
//! - [`DEFAULT_TRACE_BYTES`], [`TRACE_BYTES_PER_EVENT_FLOOR`]: `run --trace` streams about 85 to
//!   250 bytes of `trace.jsonl` per event (130 on most scenarios), at a couple of hundred MB a
//!   second; a run the limits accept can have 10^10 events, over a terabyte. So the traces of
//!   one run (both files together) stop at `--trace-limit`, 4 GiB by default (three times the
//!   1.34 GB of the canonical benchmark hour): the run is stopped, exit code 2, nothing written.
//!   A run whose traces are sure to pass it is refused before it starts: half its estimated
//!   events (the estimate is at most 1.72 times the events of any bundled scenario), at most
//!   `limits.max_events`, at 48 bytes each ([`trace_bytes_floor`]).

use super::{DurationDist, RandomFault, Role, Scenario, StrategyChecks};
use crate::time::{Dur, LocalDur};

/// The largest scenario file read, in bytes (16 MiB).
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;
/// The most nodes a scenario may have.
pub const MAX_NODES: usize = 100;
/// The longest run: 1000 h of simulated time.
pub const MAX_DURATION_NS: i64 = 1000 * 3_600_000_000_000;
/// The shortest lease term, renewal and retry period: 1 us.
pub const MIN_INTERVAL_NS: i64 = 1_000;
/// The largest drift either way, in ppm (50 %).
pub const MAX_DRIFT_PPM: f64 = 500_000.0;
/// The largest drift either way that draws no warning, in ppm (10 %): the most the Linux kernel
/// lets software change a clock's rate (adjtimex's `tick`, +-10 %).
pub const REALISTIC_DRIFT_PPM: f64 = 100_000.0;
/// The largest `clocks.drift_spread_ppm` (rho): both ends at [`MAX_DRIFT_PPM`].
pub const MAX_DRIFT_SPREAD_PPM: f64 = 2.0 * MAX_DRIFT_PPM;
/// The largest wall-clock offset or step either way: 100 h.
pub const MAX_CLOCK_STEP_NS: i64 = 100 * 3_600_000_000_000;
/// The largest `nth` of a fault placed at a protocol moment (`at: After(nth: ..)`).
pub const MAX_MOMENT_NTH: u32 = 1_000_000;
/// The most clock steps in a run, fixed plus the expected number drawn.
pub const MAX_CLOCK_STEPS: f64 = 5_000.0;
/// Where drawing random clock steps stops, whatever the draws.
pub const CLOCK_STEPS_HARD_STOP: usize = 2 * MAX_CLOCK_STEPS as usize;
/// The most client requests per second of each kind at one contender.
pub const MAX_REQUEST_RATE: f64 = 100_000.0;
/// The largest `workload.keys`: the oracle keeps one version per key (8 MB at the limit).
pub const MAX_KEYS: u32 = 1_000_000;
/// The highest rate of a random fault generator, per second (a mean gap of 1 us).
pub const MAX_FAULT_RATE_PER_SECOND: f64 = 1e9 / MIN_INTERVAL_NS as f64;
/// The most requests that may wait at once in a paused node or for their effect.
pub const MAX_PENDING_REQUESTS: f64 = 1_000_000.0;
/// The most faults in `faults`.
pub const MAX_FAULTS: usize = 100_000;
/// The most faults `random_faults` may be expected to draw (a partition counts once per node).
pub const MAX_RANDOM_FAULTS: f64 = 100_000.0;
/// Where drawing random faults stops, whatever the draws.
pub const RANDOM_FAULTS_HARD_STOP: usize = 2 * MAX_RANDOM_FAULTS as usize;
/// The default of `limits.max_events`.
pub const DEFAULT_MAX_EVENTS: u64 = 100_000_000;
/// The largest `limits.max_events`, and the most events a scenario may be estimated to need.
pub const MAX_EVENTS: u64 = 10_000_000_000;

/// The default of `run --trace-limit`: the most bytes the traces of one run may take.
pub const DEFAULT_TRACE_BYTES: u64 = 4 << 30;
/// Fewer bytes of traces than any event of a run writes on average (the bundled scenarios'
/// `trace.jsonl` alone takes 84 or more per event).
pub const TRACE_BYTES_PER_EVENT_FLOOR: f64 = 48.0;

/// The bytes the traces of a run of `s` take at the least, by the estimate: half its
/// [`estimated_events`] plus the protocol's own ([`protocol_events`]), at most
/// `limits.max_events`, at [`TRACE_BYTES_PER_EVENT_FLOOR`] each.
pub fn trace_bytes_floor(s: &Scenario, protocol: Option<&dyn StrategyChecks>) -> f64 {
    let events = ((estimated_events(s) + protocol_events(s, protocol)) / 2.0)
        .min(s.limits.max_events as f64);
    events * TRACE_BYTES_PER_EVENT_FLOOR
}

/// The largest value a draw from `d` takes, in ns, with heavy tails cut at their 1 - 1e-9
/// quantile (the random fault generators clamp their draws to it, so it is a hard bound).
/// Saturates at `i64::MAX`; `d` must be a valid distribution.
pub fn draw_bound_ns(d: &DurationDist) -> i64 {
    let f = |x: f64| crate::dist::to_ns(x).max(0);
    match *d {
        DurationDist::Fixed(v) => v.ns(),
        DurationDist::Uniform { max, .. } => max.ns(),
        // P(X > 21 mean) = e^-21 < 1e-9.
        DurationDist::Exponential { mean } => f(mean.ns() as f64 * 21.0),
        // P(Z > 6.1) < 1e-9 for a standard normal Z.
        DurationDist::LogNormal { median, sigma } => f(median.ns() as f64 * (6.1 * sigma).exp()),
        // P(X > scale * 1e9^(1/shape)) = 1e-9.
        DurationDist::Pareto { scale, shape } => f(scale.ns() as f64 * 1e9f64.powf(1.0 / shape)),
    }
}

/// The smallest value a draw from `d` takes after the same clamping (negative only for a
/// `Fixed` or `Uniform` that allows it).
pub fn draw_floor_ns(d: &DurationDist) -> i64 {
    match *d {
        DurationDist::Fixed(v) => v.ns(),
        DurationDist::Uniform { min, .. } => min.ns(),
        _ => 0,
    }
}

/// How many nodes a generator's `nodes` list covers (all when left out).
fn covered(s: &Scenario, nodes: &Option<Vec<String>>) -> f64 {
    nodes.as_ref().map_or(s.nodes.len(), Vec::len) as f64
}

/// The expected number of faults each generator draws over the run, in order, counted as
/// [`MAX_RANDOM_FAULTS`] counts them (a partition once per node). Rates must be finite.
pub fn expected_random_faults(s: &Scenario) -> Vec<f64> {
    let hours = s.duration.ns().max(0) as f64 / 3.6e12;
    s.random_faults
        .iter()
        .map(|g| match g {
            RandomFault::Pauses {
                nodes, per_minute, ..
            } => per_minute * 60.0 * hours * covered(s, nodes),
            RandomFault::ClockSteps {
                nodes, per_hour, ..
            } => per_hour * hours * covered(s, nodes),
            RandomFault::Partitions { per_hour, .. } => per_hour * hours * s.nodes.len() as f64,
            // A crash and its restart.
            RandomFault::Crashes {
                nodes, per_hour, ..
            } => 2.0 * per_hour * hours * covered(s, nodes),
        })
        .collect()
}

/// The protocol's own timers and messages over a run of `s`: its `events_per_second` times the
/// run (none without a protocol).
pub fn protocol_events(s: &Scenario, protocol: Option<&dyn StrategyChecks>) -> f64 {
    let secs = s.duration.ns().max(0) as f64 / 1e9;
    protocol.map_or(0.0, |x| x.events_per_second(s).max(0.0) * secs)
}

/// An estimate of the events a run of `s` processes, from above where it is cheap to be:
/// every request's arrival, the holder's effects and writes, every contender's retries (timer
/// and `Acquire`), renewals (timer, `Renew`, `RenewAck`), the faults and the clock syncs
/// ([`clock_syncs`]). Rates must be finite. A protocol's own timers and messages are not
/// counted here: the validation adds its `events_per_second` times the run.
pub fn estimated_events(s: &Scenario) -> f64 {
    let secs = s.duration.ns().max(0) as f64 / 1e9;
    let contenders = s.nodes.iter().filter(|n| n.role == Role::Contender).count() as f64;
    let w = &s.workload;
    let rate = w.requests_per_second();
    let per = |d: LocalDur| secs / (d.ns().max(1) as f64 / 1e9);
    let requests = contenders * rate * secs + rate * secs + w.writes_per_second.max(0.0) * secs;
    let protocol = 2.0 * contenders * per(s.lease.retry_every) + 3.0 * per(s.lease.renew_every());
    let faults = s.faults.len() as f64 + 2.0 * expected_random_faults(s).iter().sum::<f64>();
    requests + protocol + faults + clock_syncs(s)
}

/// The wall-clock syncs of `clocks.uncertainty` over a run of `s`: one per node every
/// `sync_every` (none without it, or with a `sync_every` that is not positive).
pub fn clock_syncs(s: &Scenario) -> f64 {
    match s.clocks.uncertainty {
        Some(u) if u.sync_every.ns() > 0 => {
            s.nodes.len() as f64 * s.duration.ns().max(0) as f64 / u.sync_every.ns() as f64
        }
        _ => 0.0,
    }
}

/// Writes a duration for a message, with hours too when it is that long (`3600000s (1000h)`).
pub fn dur(ns: i64) -> String {
    let h = ns as f64 / 3.6e12;
    if h.abs() >= 1.0 {
        let hours = format!("{h:.3}");
        let hours = hours.trim_end_matches('0').trim_end_matches('.');
        format!("{} ({hours}h)", Dur::from_ns(ns))
    } else {
        Dur::from_ns(ns).to_string()
    }
}

/// Writes a count for a message: `1.2e+12` style above a million, digits below. A count that
/// rounds to zero is `0`, never `-0`: an empty sum of `f64` is `-0.0` (no generator of clock
/// steps, say), and so is anything a rate of `-0.0` multiplies (it passes the checks for `>= 0`).
pub fn count(x: f64) -> String {
    if x.abs() >= 1e6 {
        format!("{x:.3e}")
    } else {
        match format!("{x:.0}") {
            z if z == "-0" => "0".to_string(),
            digits => digits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_consistent() {
        // The worst wall offset plus the longest run and a lease term stays within i64.
        let steps = MAX_CLOCK_STEPS as i128 + CLOCK_STEPS_HARD_STOP as i128 + 1;
        let worst = steps * MAX_CLOCK_STEP_NS as i128 + 3 * MAX_DURATION_NS as i128;
        assert!(worst < i64::MAX as i128);
        // A rate 1 + drift of at least 0.5 and at most 1.5: a reading of the longest run plus a
        // lease term is at most 1.5 + 1 < 3 runs (the bound above), and a deadline mapped back
        // to true time divides by at least half of RATE_ONE.
        const { assert!(MAX_DRIFT_PPM <= 500_000.0) };
        const { assert!(REALISTIC_DRIFT_PPM <= MAX_DRIFT_PPM) };
        const { assert!(MAX_DRIFT_SPREAD_PPM == 2.0 * MAX_DRIFT_PPM) };
        // The largest product of an elapsed time and a rate in parts per 10^12 fits in i128
        // many times over.
        let rate = crate::time::RATE_ONE as i128 * 3 / 2;
        assert!((MAX_DURATION_NS as i128)
            .checked_mul(rate)
            .is_some_and(|p| p < i128::MAX / 1000));
        const { assert!(DEFAULT_MAX_EVENTS <= MAX_EVENTS) };
    }

    #[test]
    fn a_count_that_rounds_to_zero_has_no_sign() {
        // -0.0 (an empty sum, or a rate of -0.0 times anything), and negatives that round to 0
        // at no decimals; -0.5 rounds half to even, to 0.
        let empty: f64 = Vec::<f64>::new().iter().sum();
        assert_eq!(count(empty), "0");
        for x in [-0.0, -0.4, -0.5, 0.0, 0.4] {
            assert_eq!(count(x), "0", "{x}");
        }
        assert_eq!(count(-0.6), "-1");
        assert_eq!(count(5001.0), "5001");
        assert_eq!(count(-2e6), "-2.000e6");
    }

    #[test]
    fn draw_bounds() {
        let ms = Dur::from_ms;
        assert_eq!(draw_bound_ns(&DurationDist::Fixed(ms(3))), 3_000_000);
        assert_eq!(
            draw_bound_ns(&DurationDist::Exponential { mean: ms(100) }),
            2_100_000_000
        );
        let p = DurationDist::Pareto {
            scale: ms(1),
            shape: 1e-3,
        };
        assert!(draw_bound_ns(&p) > 1_000_000_000_000_000_000);
    }
}
