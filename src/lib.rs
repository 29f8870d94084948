//! leasesim: a deterministic discrete-event simulator for lease protocols.
//!
//! A lease buys away round trips with a bet on clocks. leasesim runs a scenario (nodes with
//! drifting clocks, pauses, steps, crashes, a network with delay, loss and partitions) under a
//! lease protocol, and an oracle flags, to the nanosecond, every interval in which two nodes both
//! believe they hold an exclusive authority, and counts the harm done.
//!
//! The architecture in one screen:
//!
//! ```text
//!  scenario (RON) ──parse──▶ Scenario ──validate──▶ engine::Sim<P: Protocol> ──run──▶ Outcome
//!                                                     │                    ▲
//!   time, clock: exact integer time and clock maps    │ Cx: clock readings,│ Out<P::Msg>: actions
//!   net: delays, loss, cuts   rng: ChaCha streams     │ peers, own stream  │ (send, timers) and
//!                                                     ▼                    │ facts (grants, reads)
//!                      P::Logic: NodeLogic (pure: one input in, actions and facts out; a Disk
//!                                           kept across crashes)
//!                                                     │ beliefs (write, read)
//!                                                     ▼
//!                      oracle: exact belief intervals ─▶ overlaps per exclusive authority,
//!                              availability, slack; harm: zombies, stale reads, unsafe writes
//! ```
//!
//! A message goes from one node's logic to another's in one place, `engine::Sim`: `after_call`
//! takes the `Send` action, the network decides its fate, the delivery event is queued, and at
//! its instant the recipient's `on_message` runs (or waits in its deferred list while it is
//! paused). After every call into node logic the engine hands the node's beliefs to the oracle.
//!
//! - [`time`]: true instants, durations, local readings, drift rates (integers only).
//! - [`clock`]: a node's monotonic and wall clock, both directions of the mapping.
//! - [`engine`]: the event queue and the run loop, generic over the protocol; pauses, crashes,
//!   timers.
//! - [`net`]: message fates; [`dist`]: duration distributions; [`rng`]: seeded streams.
//! - [`strategy`]: the `Protocol`/`NodeLogic` traits, the base protocol (the six strategies),
//!   Redlock, `RaftLeaderLease`, and the `Registry` of protocols by name.
//! - [`oracle`]: exact belief intervals per authority, overlaps, availability, slack, harm,
//!   failover records.
//! - [`scenario`]: the RON schema, validation, random fault generators.
//! - [`outcome`]: the run summary and the expectation check.
//! - [`report`]: `summary.json`, `report.md`, terminal tables; `report::chart`: the charts.
//! - [`sweep`]: parameter grids, run over seeds, aggregated; [`explore`]: random schedules
//!   inside an envelope, shrunk to a counterexample.
//! - [`tables`] and [`advise`]: the lease arithmetic, and advice on T and epsilon with its check.
//! - [`compare`]: the strategies `compare` runs on one fault schedule, and where each came from.
//! - `cli`: the command line, a thin layer over the above.
//!
//! Features: `cli` (the default) is the command line and brings in `charts` (the
//! `report::chart` module: PNG and SVG through plotters) and `parallel` (sweeps on a rayon
//! pool, with a progress bar). With `default-features = false` none of them is compiled, and
//! everything else is here: scenarios, the engine, the oracle, outcomes and their JSON, traces,
//! the text and Markdown reports, sweeps on the calling thread (the same results).
//!
//! ```
//! let text = r#"Scenario(
//!     duration: "30s",
//!     lease: (duration: "10s"),
//!     strategy: TwoSided(holder_margin: "50ms"),
//!     nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
//! )"#;
//! let scenario = leasesim::Scenario::from_ron(text).unwrap();
//! let outcome = leasesim::run("doc", &scenario).unwrap();
//! assert_eq!(outcome.summary.overlap.count, 0);
//! assert_eq!(outcome.summary.grants, 1);
//! ```

#![forbid(unsafe_code)]
// Standard output goes through `cli::print_out`, which a closed pipe cannot make panic.
#![deny(clippy::print_stdout)]

pub mod advise;
#[cfg(feature = "cli")]
pub mod cli;
pub mod clock;
pub mod compare;
pub mod dist;
pub mod engine;
pub mod explore;
pub mod markdown;
pub mod msg;
pub mod net;
pub mod oracle;
pub mod outcome;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod shell;
pub mod strategy;
pub mod sweep;
pub mod tables;
pub mod time;
pub mod trace;

/// The book's Rust examples ("Using leasesim as a library") run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/src/library.md")]
pub struct BookDoctests;

/// The book's step-by-step protocol ("Writing a protocol, step by step"), whole, runs as a
/// doctest: its names are the API's.
#[cfg(doctest)]
#[doc = include_str!("../docs/src/writing-a-protocol.md")]
pub struct WritingAProtocolDoctests;

pub use engine::BuildError;
pub use outcome::{Outcome, Summary};
pub use scenario::Scenario;
pub use strategy::Strategy;

/// Runs `scenario` (named `name` in the summary) under its own strategy, which must be a
/// built-in one: a protocol of your own runs with [`run_with`], or by name through a
/// [`strategy::Registry`].
pub fn run(name: &str, scenario: &Scenario) -> Result<Outcome, BuildError> {
    run_with(name, scenario, builtin(scenario)?, None)
}

/// The scenario's own strategy, if it is built in.
fn builtin(scenario: &Scenario) -> Result<Box<dyn Strategy>, BuildError> {
    strategy::from_spec(&scenario.strategy).map_err(|e| BuildError {
        problems: vec![format!(
            "strategy: {e}; a protocol that is not built in runs with `leasesim::run_with`, or \
             by name through a `strategy::Registry`"
        )],
    })
}

/// Runs `scenario` under `strategy` (any implementation of [`Strategy`]), telling `observer`
/// everything that happens if one is given.
pub fn run_with(
    name: &str,
    scenario: &Scenario,
    strategy: Box<dyn Strategy>,
    observer: Option<&mut (dyn trace::Observer + 'static)>,
) -> Result<Outcome, BuildError> {
    let problems = scenario::validate::validate_with(scenario, &*strategy);
    if !problems.is_empty() {
        return Err(BuildError { problems });
    }
    // Counted only for a scenario whose `expect` counts them: a run's hot loop of explorations
    // and sweeps does not pay for them.
    let warnings = scenario
        .expect
        .as_ref()
        .and_then(|e| e.warnings)
        .map(|_| scenario::validate::warnings_with(scenario, &*strategy).len());
    let result = engine::simulate(&*strategy, scenario, observer);
    Ok(Outcome::new(
        name,
        strategy.describe(),
        scenario,
        result,
        warnings,
    ))
}

/// Runs `scenario` under its own strategy (a built-in one) and records its
/// [`trace::timeline::Timeline`] for a chart.
pub fn run_recorded(
    name: &str,
    scenario: &Scenario,
) -> Result<(Outcome, trace::timeline::Timeline), BuildError> {
    run_recorded_with(name, scenario, builtin(scenario)?)
}

/// Runs `scenario` under `strategy` and records its [`trace::timeline::Timeline`] for a chart.
pub fn run_recorded_with(
    name: &str,
    scenario: &Scenario,
    strategy: Box<dyn Strategy>,
) -> Result<(Outcome, trace::timeline::Timeline), BuildError> {
    let mut recorder = trace::timeline::Recorder::for_scenario(scenario);
    let outcome = run_with(name, scenario, strategy, Some(&mut recorder))?;
    Ok((outcome, recorder.into_timeline()))
}
