//! Every protocol under a network that duplicates every message: a second copy changes
//! nothing a single copy would not.
//!
//! Each case runs one scenario twice, with `network.duplicate` 0 and 1. Every delay is fixed
//! (links differ), so both copies of a message arrive at the same instant, one after the
//! other, and the network draws nothing else from its streams (no loss): the two runs see the
//! same messages at the same instants, the second run each one twice. The protocols drop a
//! second copy (the replicated ones as the TCP streams Raft runs over would), so every belief
//! and every figure must be the same but two, which count copies and not messages:
//! - `messages_dropped` counts each copy a cut or a down node drops: twice as many;
//! - `messages_refused` counts each copy a stream refuses back: twice as many;
//! - `events` counts each copy delivered: more.
//!
//! (`messages`, per kind, counts sends, and a copy is no send: it stays the same.)
//!
//! The lock services (the base protocol in each of its strategies, TrueTime, Redlock,
//! ChubbySession, K8sLeaderElection) run the same check over a grantor (or three Redlock
//! masters) and three contenders. Their servers answer a request once: the base grantor knows
//! a renewal it already honoured or refused by its request id; Redis, Chubby's RPCs and the
//! Kubernetes API server run over TCP, which delivers a request once, so they do not see a
//! copy. One figure more counts copies there:
//! - `duplicate_writes` counts each second copy of a write the resource already had (it is
//!   applied once): 0 without copies, and at least one with them once a write was applied.

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
    Ok(same_either_way(|duplicate| group(strategy, seed, nodes, duplicate))?.grants)
}

/// The scenario `text(duplicate)` gives the same beliefs and figures with `duplicate` 1 as
/// with 0, but the copies counted (see the module doc); returns the number of grants.
fn same_either_way(text: impl Fn(f64) -> String) -> Result<Copies, TestCaseError> {
    let (mut once, beliefs_once) = run(&text(0.0));
    let (mut twice, beliefs_twice) = run(&text(1.0));
    prop_assert_eq!(beliefs_once, beliefs_twice);
    // Copies, not messages (see the module doc): both copies of a dropped message are dropped
    // (a cut or a crash at one instant drops both), and each copy delivered is an event.
    let count = |v: &Value, key: &str| v[key].as_u64().unwrap();
    let dropped = count(&once, "messages_dropped");
    prop_assert_eq!(count(&twice, "messages_dropped"), 2 * dropped);
    prop_assert!(count(&twice, "events") > count(&once, "events"));
    // Without copies no write comes twice.
    prop_assert_eq!(count(&once, "duplicate_writes"), 0);
    let copies = Copies {
        grants: count(&once, "grants"),
        writes_applied: once["requests"]["writes_applied"].as_u64().unwrap(),
        duplicate_writes: count(&twice, "duplicate_writes"),
    };
    // A refused copy is refused back on its own, and counted so.
    let refused = |v: &Value| {
        v.get("messages_refused")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    prop_assert_eq!(refused(&twice), 2 * refused(&once));
    for key in [
        "messages_dropped",
        "messages_refused",
        "events",
        "scenario",
        "duplicate_writes",
    ] {
        once[key] = Value::Null;
        twice[key] = Value::Null;
    }
    let differ: Vec<String> = once
        .as_object()
        .unwrap()
        .iter()
        .filter(|(key, value)| twice[key.as_str()] != **value)
        .map(|(key, value)| format!("{key}: {value} once, {} twice", twice[key.as_str()]))
        .collect();
    prop_assert!(differ.is_empty(), "{differ:#?}");
    Ok(copies)
}

/// What [`same_either_way`] saw: grants and writes applied (the same either way), and the
/// second copies of writes counted with every message duplicated.
struct Copies {
    grants: u64,
    writes_applied: u64,
    duplicate_writes: u64,
}

/// `strategy`, a lock service of `grantors` grantors on `clocks`, gives the same beliefs and
/// figures with every message duplicated as without, grants at least once, and a resource
/// that applied a write saw a second copy of one (its writes travel as messages).
fn lock_service_same(
    strategy: &str,
    clocks: &str,
    seed: u64,
    grantors: usize,
) -> Result<(), TestCaseError> {
    let c = same_either_way(|d| lock_service(strategy, clocks, seed, grantors, d))?;
    prop_assert!(c.grants >= 1);
    prop_assert!(c.writes_applied == 0 || c.duplicate_writes >= 1);
    Ok(())
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

/// A lock service under `strategy` for 60 s: `grantors` grantors (`g1`...; Redlock's masters)
/// and contenders `c1` to `c3`, with partitions, GC pauses and crashes (grantors' included,
/// which wait out a term on restart) drawn from `seed`, every message duplicated with
/// probability `duplicate`. `clocks` is the scenario's clocks section.
fn lock_service(
    strategy: &str,
    clocks: &str,
    seed: u64,
    grantors: usize,
    duplicate: f64,
) -> String {
    let mut nodes: Vec<String> = (1..=grantors)
        .map(|i| format!("(name: \"g{i}\", role: Grantor)"))
        .collect();
    nodes.extend(
        (1..=3).map(|i| format!("(name: \"c{i}\", role: Contender, start: \"{}ms\")", 10 * i)),
    );
    format!(
        r#"Scenario(
            seed: {seed},
            duration: "60s",
            lease: (duration: "2s", grantor_restart: Wait, retry_every: "300ms"),
            strategy: {strategy},
            clocks: {clocks},
            nodes: [{}],
            network: (
                delay: Fixed("2ms"),
                duplicate: {duplicate:?},
                links: [
                    (from: "c1", to: "g1", delay: Fixed("1ms")),
                    (from: "g1", to: "c2", delay: Fixed("5ms")),
                    (from: "c3", to: "g1", delay: Fixed("300us")),
                ],
            ),
            workload: (reads_per_second: 50.0, writes_per_second: 20.0, keys: 4),
            random_faults: [
                Partitions(per_hour: 180.0, duration: Uniform(min: "100ms", max: "4s")),
                Pauses(per_minute: 4.0, duration: Exponential(mean: "500ms"), kind: Gc),
                Crashes(per_hour: 120.0, restart_after: Uniform(min: "100ms", max: "3s")),
            ],
        )"#,
        nodes.join(", ")
    )
}

/// Clocks that drift apart but keep no error bound.
const DRIFTING: &str = "(drift_spread_ppm: 200.0, placement: Random)";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn base_protocol_holders_believe_and_do_the_same_when_every_message_comes_twice(
        seed in any::<u64>(),
        strategy in prop::sample::select(vec![
            r#"TwoSided(holder_margin: "20ms")"#,
            "GrantorOnly",
            r#"HolderOnly(margin: "20ms")"#,
            "CachedBool",
            r#"WallClock(holder_margin: "20ms")"#,
            r#"OnReceiveStart(holder_margin: "20ms")"#,
            r#"Custom(holder_clock: Monotonic, lease_start: OnSend, grantor_margin: "0s",
                validity: Unchecked)"#,
        ]),
    ) {
        lock_service_same(strategy, DRIFTING, seed, 1)?;
    }

    #[test]
    fn truetime_holders_believe_and_do_the_same_when_every_message_comes_twice(
        seed in any::<u64>(),
        sync_every in prop::sample::select(vec!["500ms", "5s"]),
    ) {
        let clocks = format!(
            r#"(drift_spread_ppm: 200.0, placement: Random,
                uncertainty: (base: "1ms", growth_ppm: 200.0, sync_every: "{sync_every}"))"#
        );
        lock_service_same("TrueTime", &clocks, seed, 1)?;
    }

    #[test]
    fn redlock_clients_believe_and_do_the_same_when_every_message_comes_twice(
        seed in any::<u64>(),
        strategy in prop::sample::select(vec![
            "Redlock()",
            "Redlock(quorum: One)",
            "Redlock(expiry_clock: Monotonic)",
        ]),
    ) {
        lock_service_same(strategy, DRIFTING, seed, 3)?;
    }

    #[test]
    fn chubby_clients_believe_and_do_the_same_when_every_message_comes_twice(
        seed in any::<u64>(),
        act_in_jeopardy in any::<bool>(),
        lock_delay in prop::sample::select(vec!["0s", "1s"]),
    ) {
        let strategy = format!(
            r#"ChubbySession(grace: "3s", lock_delay: "{lock_delay}",
                act_in_jeopardy: {act_in_jeopardy})"#
        );
        lock_service_same(&strategy, DRIFTING, seed, 1)?;
    }

    #[test]
    fn k8s_candidates_believe_and_do_the_same_when_every_message_comes_twice(
        seed in any::<u64>(),
        jitter in prop::sample::select(vec!["0.0", "1.2"]),
        observed in prop::sample::select(vec!["Monotonic", "Wall"]),
    ) {
        let strategy = format!(
            r#"K8sLeaderElection(renew_deadline: "1500ms", retry_period: "300ms",
                jitter_factor: {jitter}, observed_clock: {observed})"#
        );
        lock_service_same(&strategy, DRIFTING, seed, 1)?;
    }
}

/// A follower catching up after a partition heals, every message duplicated: a second copy of
/// an acknowledgement starts no second stream of appends. In `raft-transfer-to-lagging-follower`
/// r2 catches up 90 entries one round trip at a time; a second stream would send more appends
/// (and would bring the TimeoutNow earlier). With copies dropped, every figure is the same with
/// each message sent twice as once (see [`same_either_way`]), the appends by kind included.
#[test]
fn a_duplicated_acknowledgement_starts_no_second_stream() {
    let name = "raft-transfer-to-lagging-follower";
    let text = leasesim::scenario::library::text(name).unwrap();
    let net = r#"network: (delay: Fixed("1ms")),"#;
    assert!(text.contains(net));
    let with = |d: f64| {
        text.replace(
            net,
            &format!(r#"network: (delay: Fixed("1ms"), duplicate: {d:?}),"#),
        )
    };
    let copies = same_either_way(with).unwrap();
    assert_eq!(copies.grants, 2);
}
