//! ConsulSession: the leader's session timers at TTL x multiplier, their reset on renew and on
//! a change of leader, lock-delay after an invalidation (not after a clean release), the
//! renewal loop's policies, monitorLock as the holder's only news, and the RPC deadline of a
//! call with no answer. The bundled consul-* scenarios pin the stories; these tests pin what
//! each rule does on its own, with the arithmetic in each comment.
//!
//! The world of most tests: T = 15 s (the session TTL), 1 ms messages, perfect clocks, the
//! leader `leader`, client `a` from 0 and `b` from a given start. a creates its session at 1 ms
//! (Created at 2 ms), GETs the key at once (answered at 4 ms), acquires it at 5 ms with
//! LockIndex 1 and holds from 6 ms; monitorLock's GET at index 0 is answered at 8 ms and its
//! blocking GET, sent at 8 ms, is held at the leader from 9 ms. a renews every T/2 = 7.5 s
//! after each answer: sent at 7.502, 15.004, 22.506 s..., reaching the leader 1 ms later
//! (7.503, 15.005, 22.507 s), each answered 2 ms after it was sent.

use crate::common::{run_text, scenario};
use leasesim::scenario::validate::validate;

/// The world above with `strategy`, `b` from `b_start` (none if empty), `faults` and `resource`
/// spliced in.
fn world(strategy: &str, b_start: &str, faults: &str, resource: &str, duration: &str) -> String {
    let b = if b_start.is_empty() {
        String::new()
    } else {
        format!(r#"(name: "b", role: Contender, start: "{b_start}"),"#)
    };
    format!(
        r#"Scenario(
            duration: "{duration}",
            lease: (duration: "15s"),
            strategy: {strategy},
            nodes: [(name: "leader", role: Grantor), (name: "a", role: Contender), {b}],
            network: (delay: Fixed("1ms")),
            workload: (reads_per_second: 20.0, writes_per_second: 2.0),
            resource: ({resource}),
            faults: [{faults}],
        )"#
    )
}

/// a cut off from the leader and b from 20 s on, for 80 s.
const CUT_A: &str = r#"Partition(at: "20s", duration: "80s", groups: [["a"], ["leader", "b"]]),"#;

/// The first overlap's (start, end) in seconds, as ns.
fn first_overlap(s: &leasesim::Summary) -> (i64, i64) {
    let i = &s.overlap.intervals[0];
    (i.start_ns, i.end_ns)
}

const S: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;

/// a is cut off at 20 s; its renew of 22.506 s never arrives, so its session's timer was last
/// reset at 15.005 s and fires at 15.005 + 2 x 15 = 45.005 s. With no lock-delay b, whose
/// blocking GET the leader answers then, acquires at 45.007 s and holds from 45.008 s: a, which
/// has no deadline of its own, still believes, so the overlap starts there. With a multiplier
/// of 3 the timer fires at 15.005 + 45 = 60.005 s and b holds from 60.008 s. Reaping at T would
/// start b at 30.008 s; a timer that renews do not reset, at 0.001 + 30 = 30.001 s (b at
/// 30.004 s).
#[test]
fn the_leader_reaps_a_silent_session_at_ttl_times_the_multiplier() {
    for (multiplier, b_holds_ns) in [(2, 45_008 * MS), (3, 60_008 * MS)] {
        let strategy = format!(r#"ConsulSession(ttl_multiplier: {multiplier}, lock_delay: "0s")"#);
        let s = run_text(&world(&strategy, "100ms", CUT_A, "", "70s"));
        assert_eq!(s.holders, ["a", "b"], "x{multiplier}");
        assert_eq!(first_overlap(&s).0, b_holds_ns, "x{multiplier}");
    }
}

/// Renewed every 7.5 s, a's session never reaches its timer: one grant in 100 s, to a, and no
/// overlap; the leader reports a renewal of the lock at each of a's renews, 13 of them
/// (7.503 + 7.502 k < 100 s for k = 0..12).
#[test]
fn every_renew_resets_the_session_timer() {
    let s = run_text(&world("ConsulSession()", "100ms", "", "", "100s"));
    assert_eq!((s.grants, s.overlap.count), (1, 0));
    assert_eq!(s.holders, ["a"]);
    assert_eq!(s.renewals, 13);
}

/// The leader crashes at 25 s and a new one is up at 35 s; b starts at 40 s. a's renew of
/// 30.008 s is refused at 30.010 s and with `StopOnError` its renewal loop stops. The new
/// leader resets every session's timer to 35 + 30 = 65 s (initializeSessionTimers), and then
/// hears nothing from a: it invalidates a's session at 65 s, answers b's blocking GET, and
/// with no lock-delay grants b's acquire at 65.002 s: b holds from 65.003 s. Keeping the old
/// timer (15.005 + 30 = 45.005 s, past at the restart) would reap a at 35 s; resetting it to T,
/// at 50 s.
#[test]
fn a_new_leader_resets_every_timer_in_full() {
    let faults = r#"Crash(node: "leader", at: "25s"), Restart(node: "leader", at: "35s"),"#;
    let strategy = r#"ConsulSession(renew: StopOnError, lock_delay: "0s")"#;
    let s = run_text(&world(strategy, "40s", faults, "", "70s"));
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.crashes, 1);
    assert_eq!(first_overlap(&s).0, 65_003 * MS);
}

/// The same election with the renewal loop of hashicorp/consul#912: a's renew is refused at
/// 30.010 s, retried 1 s after each refusal (31.010, 32.012, 33.014, 34.016 s: each refused 2 ms
/// later) and the one of 35.018 s reaches the new leader: a's session lives, and b gets
/// nothing in 100 s.
#[test]
fn retrying_every_second_carries_the_session_through_a_short_election() {
    let faults = r#"Crash(node: "leader", at: "25s"), Restart(node: "leader", at: "35s"),"#;
    let s = run_text(&world("ConsulSession()", "40s", faults, "", "100s"));
    assert_eq!(s.holders, ["a"]);
    assert_eq!((s.grants, s.overlap.count), (1, 0));
}

/// With a alone and the leader down from 25 to 45 s, count a's renews. Before the crash: 7.502,
/// 15.004 and 22.506 s (last success answered at 22.508 s). `StopOnError`: the one of 30.008 s,
/// refused, and no more: 4. `RetryEverySecond`: after each refusal (2 ms after its send) a
/// checks whether more than T = 15 s has passed since 22.508 s, and if not sends again 1 s
/// later: sent at 30.008, 31.010, ..., 38.024 s (30.008 + 1.002 k for k = 0..8); the refusal
/// of 38.024 s comes at 38.026 s, 15.518 s after the last success: the loop gives up. 3 + 9 =
/// 12. Checking against T/2 would stop after 30.008 + 1.002 x 1 (2 retries); never giving up,
/// the retries would run to 45 s.
#[test]
fn the_renewal_loop_stops_at_the_first_error_or_retries_for_a_ttl() {
    let faults = r#"Crash(node: "leader", at: "25s"), Restart(node: "leader", at: "45s"),"#;
    // The leader is back at 45 s; by then both loops have ended: no renew in [45, 46 s).
    for (policy, renews) in [("StopOnError", 4), ("RetryEverySecond", 12)] {
        let strategy = format!("ConsulSession(renew: {policy})");
        let s = run_text(&world(&strategy, "", faults, "", "46s"));
        assert_eq!(s.messages.get("Renew"), Some(&renews), "{policy}");
    }
}

/// Lock-delay follows an invalidation. a is cut off as above; its session is reaped at
/// 45.005 s and the key refuses acquires until 45.005 + 15 = 60.005 s. b's acquire of 45.007 s
/// is refused; it sleeps lock_retry (5 s) from the answer at 45.008 s, GETs at index 0 and
/// acquires: each try takes 5.004 s, the acquires arriving at 50.011, 55.015 and 60.019 s, the
/// last granted: b holds from 60.020 s. With lock_retry 2 s the tries come every 2.004 s:
/// 47.011, 49.015, ..., 59.035, 61.039 s (45.007 + 2.004 k), the last granted: b holds from
/// 61.040 s.
#[test]
fn after_an_invalidation_the_key_refuses_acquires_for_the_lock_delay() {
    for (retry, b_holds_ns) in [("5s", 60_020 * MS), ("2s", 61_040 * MS)] {
        let strategy = format!(r#"ConsulSession(lock_retry: "{retry}")"#);
        let s = run_text(&world(&strategy, "100ms", CUT_A, "", "70s"));
        assert_eq!(s.holders, ["a", "b"], "{retry}");
        assert_eq!(first_overlap(&s).0, b_holds_ns, "{retry}");
    }
}

/// A clean release has no lock-delay: a steps down at 10 s (Unlock: a release of the key), the
/// leader frees it at 10.001 s and answers b's blocking GET; b acquires at 10.003 s despite the
/// 15 s lock-delay and holds from 10.004 s, 4 ms after a let go.
#[test]
fn a_clean_release_has_no_lock_delay() {
    let s = run_text(&world(
        "ConsulSession()",
        "100ms",
        r#"StepDown(node: "a", at: "10s"),"#,
        "",
        "20s",
    ));
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.min_slack_ns, Some(4 * MS));
    assert_eq!(s.overlap.count, 0);
}

/// monitorLock is how the holder learns: a's renews are dropped from 20 s (its link otherwise
/// works), its session is reaped at 45.005 s, and the answer to its blocking GET, naming no
/// holder, reaches it at 45.006 s: it stops believing. b (no lock-delay) holds from 45.008 s,
/// 2 ms later: no overlap. A monitor that ignored the change would leave a believing.
#[test]
fn monitor_lock_tells_the_holder_it_lost_the_lock() {
    let faults = r#"Drop(at: "20s", duration: "80s", from: ["a"], kinds: [Renew]),"#;
    let s = run_text(&world(
        r#"ConsulSession(lock_delay: "0s")"#,
        "100ms",
        faults,
        "",
        "60s",
    ));
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.overlap.count, 0);
    assert_eq!(s.min_slack_ns, Some(2 * MS));
}

/// A stall of a's renewal loop (RenewPeriodic) from 20 s for 60 s holds its renew of 22.506 s:
/// the session is reaped at 45.005 s, and monitorLock, on the worker, tells a at 45.006 s. b
/// holds from 45.008 s. Were renewals on the worker, the stall would not touch them and a
/// would keep the lock.
#[test]
fn a_stalled_renewal_loop_loses_the_session() {
    let faults = r#"ThreadStall(node: "a", thread: Renewal, at: "20s", duration: "60s"),"#;
    let s = run_text(&world(
        r#"ConsulSession(lock_delay: "0s")"#,
        "100ms",
        faults,
        "",
        "60s",
    ));
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.min_slack_ns, Some(2 * MS));
}

/// The holder believes until monitorLock's GET fails, and with the answer lost in the cut that
/// is its RPC deadline: the GET sent at 8 ms, blocking for query_wait, fails at 0.008 +
/// wait + wait/16 + rpc_timeout. b holds from 60.020 s (as above). Default (5 min, 7 s):
/// 0.008 + 300 + 18.75 + 7 = 325.758 s. rpc_timeout 60 s: 378.758 s. query_wait 1 min:
/// 0.008 + 60 + 3.75 + 7 = 70.758 s. rpc_timeout None (before hashicorp/consul#11500): never;
/// the overlap runs to the end of the run, 400 s.
#[test]
fn the_holder_believes_until_its_monitor_gets_an_answer_or_times_out() {
    for (fields, end_ns) in [
        ("", 325_758 * MS),
        (r#"rpc_timeout: "60s""#, 378_758 * MS),
        (r#"query_wait: "1m""#, 70_758 * MS),
        ("rpc_timeout: None", 400 * S),
    ] {
        let strategy = format!("ConsulSession({fields})");
        let s = run_text(&world(&strategy, "100ms", CUT_A, "", "400s"));
        assert_eq!(first_overlap(&s), (60_020 * MS, end_ns), "{fields}");
    }
}

/// The LockIndex is the fencing token: with fencing, every write a sends under LockIndex 1
/// after b took LockIndex 2 (a's link heals at 100 s; it still believes) is rejected.
#[test]
fn the_lock_index_fences_the_old_holders_writes() {
    let unfenced = run_text(&world("ConsulSession()", "100ms", CUT_A, "", "200s"));
    assert!(unfenced.unsafe_writes > 0);
    let fenced = run_text(&world(
        "ConsulSession()",
        "100ms",
        CUT_A,
        "fencing: true",
        "200s",
    ));
    assert_eq!(fenced.unsafe_writes, 0);
    assert!(fenced.fenced_writes > 0);
}

/// Consul's bounds, each said with its field: a TTL from 10 s to 24 h, a lock-delay of at
/// most 60 s, a blocking wait of at most 10 min.
#[test]
fn settings_outside_consuls_bounds_are_refused() {
    let text = world(
        r#"ConsulSession(ttl_multiplier: 0, lock_delay: "61s", query_wait: "11m", rpc_timeout: "0s")"#,
        "",
        "",
        "",
        "20s",
    )
    .replace(r#"duration: "15s""#, r#"duration: "9s""#);
    let problems = validate(&scenario(&text));
    for expected in [
        "lease.duration: 9s is the session TTL, which Consul takes from 10s (session_ttl_min) to 86400s",
        "strategy.ttl_multiplier: must be at least 1 (got 0)",
        "strategy.lock_delay: 61s is above 60s, the most Consul takes (structs.MaxLockDelay)",
        "strategy.query_wait: 660s is above 600s, the longest wait Consul grants a blocking query \
         (max_query_time)",
        "strategy.rpc_timeout: must be positive (got 0s)",
    ] {
        assert!(problems.iter().any(|p| p == expected), "{expected}\n{problems:#?}");
    }
}
