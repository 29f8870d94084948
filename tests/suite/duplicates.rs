//! The replicated protocols under a network that duplicates every message: a second copy
//! changes nothing a single copy would not.
//!
//! Each case runs one scenario twice, with `network.duplicate` 0 and 1. Every delay is fixed
//! (links differ), so both copies of a message arrive at the same instant, one after the
//! other, and the network draws nothing else from its streams (no loss): the two runs see the
//! same messages at the same instants, the second run each one twice. The protocols drop a
//! second copy, as the TCP streams Raft runs over would, so every belief and every figure must
//! be the same but two, which count copies and not messages:
//! - `messages_dropped` counts each copy a cut or a down node drops: twice as many;
//! - `events` counts each copy delivered: more.
//!
//! (`messages`, per kind, counts sends, and a copy is no send: it stays the same.)

use leasesim::Outcome;
use proptest::prelude::*;
use serde_json::Value;

use crate::common::scenario;

/// A group of `nodes` replicas under `strategy` for 30 s, with partitions, GC pauses and
/// crashes drawn from `seed`, every message duplicated with probability `duplicate`.
fn group(strategy: &str, seed: u64, nodes: usize, duplicate: f64) -> String {
    let names: Vec<String> = (1..=nodes)
        .map(|i| format!("(name: \"r{i}\", role: Replica)"))
        .collect();
    format!(
        r#"Scenario(
            seed: {seed},
            duration: "30s",
            lease: (duration: "900ms"),
            strategy: {strategy},
            clocks: (drift_spread_ppm: 200.0, placement: Random),
            nodes: [{}],
            network: (
                delay: Fixed("2ms"),
                duplicate: {duplicate:?},
                links: [
                    (from: "r1", to: "r2", delay: Fixed("1ms")),
                    (from: "r3", to: "r1", delay: Fixed("5ms")),
                    (from: "r2", to: "r3", delay: Fixed("300us")),
                ],
            ),
            workload: (reads_per_second: 100.0, writes_per_second: 50.0, keys: 8),
            random_faults: [
                Partitions(per_hour: 360.0, duration: Uniform(min: "100ms", max: "4s")),
                Pauses(per_minute: 4.0, duration: Exponential(mean: "300ms"), kind: Gc),
                Crashes(per_hour: 180.0, restart_after: Uniform(min: "100ms", max: "2s")),
            ],
        )"#,
        names.join(", ")
    )
}

/// Runs `text`, recording its beliefs: the summary as JSON, and each node's belief intervals
/// of write and read authority.
fn run(text: &str) -> (Value, String) {
    let s = scenario(text);
    let (out, timeline): (Outcome, _) = leasesim::run_recorded("dup", &s).unwrap();
    let summary = serde_json::to_value(&out.summary).unwrap();
    let beliefs = format!("{:?} {:?}", timeline.beliefs, timeline.read_beliefs);
    (summary, beliefs)
}

/// `strategy` gives the same beliefs and figures with every message duplicated as without;
/// returns the number of grants (so that a case is seen to have elected someone).
fn same_with_duplicates(strategy: &str, seed: u64, nodes: usize) -> Result<u64, TestCaseError> {
    let (mut once, beliefs_once) = run(&group(strategy, seed, nodes, 0.0));
    let (mut twice, beliefs_twice) = run(&group(strategy, seed, nodes, 1.0));
    prop_assert_eq!(beliefs_once, beliefs_twice);
    // Copies, not messages (see the module doc): both copies of a dropped message are dropped
    // (a cut or a crash at one instant drops both), and each copy delivered is an event.
    let count = |v: &Value, key: &str| v[key].as_u64().unwrap();
    let dropped = count(&once, "messages_dropped");
    prop_assert_eq!(count(&twice, "messages_dropped"), 2 * dropped);
    prop_assert!(count(&twice, "events") > count(&once, "events"));
    for key in ["messages_dropped", "events", "scenario"] {
        once[key] = Value::Null;
        twice[key] = Value::Null;
    }
    prop_assert_eq!(&once, &twice);
    Ok(once["grants"].as_u64().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn raft_leaders_believe_and_do_the_same_when_every_message_comes_twice(
        seed in any::<u64>(),
        five in any::<bool>(),
        reads in prop::sample::select(vec!["Lease", "ReadIndex", "LeaseOrReadIndex"]),
        tick in any::<bool>(),
    ) {
        let tick = if tick { r#", tick: "100ms""# } else { "" };
        let strategy = format!(
            r#"RaftLeaderLease(election_timeout: "1s", heartbeat: "100ms", reads: {reads},
                max_clock_skew: "50ms", check_quorum: true{tick})"#
        );
        let grants = same_with_duplicates(&strategy, seed, if five { 5 } else { 3 })?;
        prop_assert!(grants >= 1);
    }

    #[test]
    fn leaseguard_leaders_believe_and_do_the_same_when_every_message_comes_twice(
        seed in any::<u64>(),
        mode in prop::sample::select(
            vec!["Inconsistent", "Quorum", "LogLease", "DeferCommit", "LeaseGuard"],
        ),
        log_write in prop::sample::select(vec!["0s", "100us"]),
    ) {
        let strategy = format!(
            r#"LeaseGuard(mode: {mode}, election_timeout: "300ms", heartbeat: "100ms",
                log_write: "{log_write}")"#
        );
        let grants = same_with_duplicates(&strategy, seed, 3)?;
        prop_assert!(grants >= 1);
    }
}
