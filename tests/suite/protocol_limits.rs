//! The limits on every protocol's own settings: each period and timeout at least 1 us, its
//! timers and messages counted in the event estimate against `limits.max_events`, and its margins
//! shorter than the lease. One test per input a fuzz campaign found accepted by `check` and then
//! running out of memory or time, or meaning an overlap the scenario never asked for: `leasesim
//! check` exits 2 naming the field, the value and the limit.

use crate::common::{leasesim, workdir};
use std::fs;

/// A scenario of `duration` and a 9 s lease under `strategy`, on `nodes`, with `clocks`.
fn scenario(duration: &str, strategy: &str, clocks: &str, nodes: &str) -> String {
    format!(
        r#"Scenario(
    duration: "{duration}",
    lease: (duration: "9s"),
    strategy: {strategy},
    clocks: ({clocks}),
    nodes: [{nodes}],
    network: (delay: Fixed("1ms")),
)
"#
    )
}

const REPLICAS: &str = r#"(name: "r1", role: Replica), (name: "r2", role: Replica),
    (name: "r3", role: Replica)"#;
const LOCK: &str = r#"(name: "lock", role: Grantor), (name: "a", role: Contender),
    (name: "b", role: Contender)"#;
const UNCERTAIN: &str = r#"uncertainty: (base: "1ms", growth_ppm: 200.0, sync_every: "30s")"#;

/// Runs `leasesim check` on `text`; asserts exit 2, no panic, and a line of stderr with every
/// one of `words` (the field, the value, the limit).
fn check_names(test: &str, text: &str, words: &[&str]) {
    let dir = workdir(test);
    fs::write(dir.join("limits.ron"), text).unwrap();
    let o = leasesim(&["check", "limits.ron"], &dir);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.lines().any(|l| words.iter().all(|w| l.contains(w))),
        "no line of stderr has all of {words:?}:\n{err}"
    );
}

/// Runs `leasesim check` on `text`; asserts it passes.
fn check_passes(test: &str, text: &str) {
    let dir = workdir(test);
    fs::write(dir.join("limits.ron"), text).unwrap();
    let o = leasesim(&["check", "limits.ron"], &dir);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{err}");
}

#[test]
fn a_raft_heartbeat_of_1ns_is_below_the_floor() {
    let raft = r#"RaftLeaderLease(election_timeout: "1s", heartbeat: "1ns")"#;
    let t = scenario("10s", raft, "", REPLICAS);
    check_names("limits-raft-hb", &t, &["strategy.heartbeat", "1ns", "1us"]);
    // At the floor it passes (1 us: 5 events a heartbeat = 5e6/s, over 10 s 5e7 events).
    let raft = r#"RaftLeaderLease(election_timeout: "1s", heartbeat: "1us")"#;
    check_passes("limits-raft-hb-ok", &scenario("10s", raft, "", REPLICAS));
}

#[test]
fn a_leaseguard_election_timeout_of_1ns_is_below_the_floor() {
    let lg = r#"LeaseGuard(election_timeout: "1ns", heartbeat: "100ms")"#;
    let t = scenario("10s", lg, "", REPLICAS);
    check_names(
        "limits-lg-et",
        &t,
        &["strategy.election_timeout", "1ns", "1us"],
    );
}

#[test]
fn a_leaseguard_noop_every_of_1ns_is_below_the_floor() {
    let lg = r#"LeaseGuard(election_timeout: "1s", heartbeat: "100ms", noop_every: "1ns")"#;
    let t = scenario("10s", lg, "", REPLICAS);
    check_names("limits-lg-noop", &t, &["strategy.noop_every", "1ns", "1us"]);
}

#[test]
fn a_k8s_retry_period_of_1ns_is_below_the_floor() {
    let k8s = r#"K8sLeaderElection(renew_deadline: "6s", retry_period: "1ns")"#;
    let t = scenario("10s", k8s, "", LOCK);
    check_names(
        "limits-k8s-retry",
        &t,
        &["strategy.retry_period", "1ns", "1us"],
    );
}

/// A sync every 1 us is within the floor, but one a microsecond for each of 3 nodes over an
/// hour is 3 x 3.6e9 = 1.08e10 events, above the limit of 1e10 (the lease's renewals add
/// 3 x 3600 s / 3 s = 3600, which does not show at four digits).
#[test]
fn truetime_syncs_every_microsecond_for_an_hour_are_too_many_events() {
    let clocks = r#"uncertainty: (base: "1ms", growth_ppm: 200.0, sync_every: "1us")"#;
    let t = scenario("1h", "TrueTime", clocks, LOCK);
    check_names(
        "limits-tt-sync",
        &t,
        &[
            "duration",
            "clocks.uncertainty.sync_every = 1us",
            "1.080e10",
            "1.000e10",
        ],
    );
    // A sync every 10 us makes it 1.08e9: it passes.
    let clocks = r#"uncertainty: (base: "1ms", growth_ppm: 200.0, sync_every: "10us")"#;
    check_passes(
        "limits-tt-sync-ok",
        &scenario("1h", "TrueTime", clocks, LOCK),
    );
}

/// Raft at the floor for an hour: a heartbeat every 1 us from the leader to 2 followers with
/// their acks and its timer is 5 events, 5e6 a second; elections add 3 x 5 per 1 s election
/// timeout, 15 a second: (5e6 + 15) x 3600 = 1.8000054e10, above the limit of 1e10.
#[test]
fn raft_heartbeats_are_counted_in_the_event_estimate() {
    let raft = r#"RaftLeaderLease(election_timeout: "1s", heartbeat: "1us")"#;
    let t = scenario("1h", raft, "", REPLICAS);
    check_names(
        "limits-raft-events",
        &t,
        &[
            "duration",
            "strategy RaftLeaderLease",
            "1.800e10",
            "1.000e10",
        ],
    );
}

/// Kubernetes: 2 candidates, each try 5 events (timer, Get, Record, Update, UpdateReply), every
/// 1 us: 1e7 a second, over 1001 s 1.001e10, above the limit of 1e10 (the scenario's own
/// renewals and retries add a few thousand, below the fourth digit).
#[test]
fn k8s_tries_are_counted_in_the_event_estimate() {
    let k8s = r#"K8sLeaderElection(renew_deadline: "6s", retry_period: "1us")"#;
    let over = scenario("1001s", k8s, "", LOCK);
    check_names(
        "limits-k8s-events",
        &over,
        &["duration", "strategy K8sLeaderElection", "1.001e10"],
    );
}

#[test]
fn a_truetime_holder_margin_of_a_term_or_more_either_way_is_rejected() {
    for (test, m, words) in [
        ("limits-tt-neg", "-1000h", &["-3600000s", "overlaps"][..]),
        ("limits-tt-pos", "1000h", &["3600000s", "never holds"][..]),
        ("limits-tt-neg-t", "-9s", &["-9s", "overlaps"][..]),
        ("limits-tt-pos-t", "9s", &["9s", "never holds"][..]),
    ] {
        let tt = format!(r#"TrueTime(holder_margin: "{m}")"#);
        let t = scenario("10s", &tt, UNCERTAIN, LOCK);
        let mut all = vec!["strategy.holder_margin", "9s"];
        all.extend(words);
        check_names(test, &t, &all);
    }
    // Just inside either way it passes.
    for m in ["-8.999s", "8.999s"] {
        let tt = format!(r#"TrueTime(holder_margin: "{m}")"#);
        check_passes("limits-tt-ok", &scenario("10s", &tt, UNCERTAIN, LOCK));
    }
}

#[test]
fn raft_skew_and_leaseguard_clock_error_stay_under_the_lease() {
    let raft = r#"RaftLeaderLease(election_timeout: "1s", max_clock_skew: "9s")"#;
    let t = scenario("10s", raft, "", REPLICAS);
    check_names("limits-raft-skew", &t, &["strategy.max_clock_skew", "9s"]);
    let raft = r#"RaftLeaderLease(election_timeout: "1s", max_clock_skew: "-1ms")"#;
    let t = scenario("10s", raft, "", REPLICAS);
    check_names(
        "limits-raft-skew-neg",
        &t,
        &["strategy.max_clock_skew", "-1ms"],
    );
    let lg = r#"LeaseGuard(election_timeout: "1s", heartbeat: "100ms", max_clock_error: "9s")"#;
    let t = scenario("10s", lg, "", REPLICAS);
    check_names("limits-lg-error", &t, &["strategy.max_clock_error", "9s"]);
}

/// Redlock's request timeout and Chubby's margin were bounded before: confirm.
#[test]
fn redlock_request_timeout_has_the_floor_too() {
    let r = r#"Redlock(request_timeout: "999ns")"#;
    let t = scenario("10s", r, "", LOCK);
    check_names(
        "limits-redlock",
        &t,
        &["strategy.request_timeout", "999ns", "1us"],
    );
}

#[test]
fn an_envelope_that_tips_the_protocols_events_over_the_limit_is_refused() {
    // 1000 h of a three-replica Raft group, heartbeat 1,810,370 ns, election timeout 1 s. The
    // scenario's own estimate: lease renewals 3 x 3.6e15 ns / 3,333,333,333 ns = 3,240,000. The
    // protocol's: (2 x 3 - 1) = 5 per heartbeat, 5e9 / 1,810,370 = 2761.87/s, plus 3 x 5 = 15
    // per election timeout: 2776.87/s x 3.6e6 s = 9,996,718,892. Together 9,999,958,892: under
    // the limit of 1e10 by 41,108, so the file without a nemesis runs. Pauses at 0.25 a minute
    // on each of 3 nodes draw 3 x 0.25 x 60,000 = 45,000 faults, 2 events each: 90,000 more,
    // over the limit. At 0.01 a minute (3,600 more) it stays under.
    let text = |per_minute: &str| {
        format!(
            r#"Scenario(
    duration: "1000h",
    lease: (duration: "10s"),
    strategy: RaftLeaderLease(election_timeout: "1s", heartbeat: "1810370ns"),
    nodes: [{REPLICAS}],
    workload: (reads_per_second: 0.0, writes_per_second: 0.0),
    limits: (max_events: 10000000000),
    nemesis: (pauses: (max: "1s", per_minute: {per_minute})),
)
"#
        )
    };
    check_names(
        "protocol-limits-nemesis-events",
        &text("0.25"),
        &[
            "nemesis:",
            "with the envelope's faults needs about",
            "above the limit",
        ],
    );
    let dir = workdir("protocol-limits-nemesis-events-ok");
    fs::write(dir.join("ok.ron"), text("0.01")).unwrap();
    let o = leasesim(&["check", "ok.ron"], &dir);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
