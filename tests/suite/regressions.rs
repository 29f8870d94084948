//! Regressions of engine bugs, each with the story that found it and the arithmetic by hand.

use crate::common::*;
use leasesim::Summary;

/// The story of the deferred-order bug: T 10 s, renewals every 3 s, `{strategy}`, 1 ms links.
/// `a` is granted at 2 ms (its Acquire left at 0) and renews at 3.002 s; the grantor renews at
/// 3.003 s (lease free at 13.003 s) and answers, but a delay spike holds that RenewAck for
/// 7.5 s, so it reaches `a` at 10.504 s. `a` is GC-paused over [5 s, 11 s): its renewal timer
/// (6.002 s), its deadline (0 + 10 s - 50 ms = 9.95 s) and the RenewAck (10.504 s) all wait,
/// and at resume run in the order they fell due: the renewal finds the deadline passed and sends
/// nothing, the deadline lets go, the ack comes too late to matter. `b` (queued since 100 ms)
/// is granted when the lease is free at 13.003 s and believes from 13.004 s.
fn deferred_story(strategy: &str, extra_fault: &str) -> String {
    format!(
        r#"Scenario(
            duration: "30s",
            lease: (duration: "10s", renew_every: "3s"),
            strategy: {strategy},
            nodes: [
                (name: "lock", role: Grantor),
                (name: "a", role: Contender),
                (name: "b", role: Contender, start: "100ms"),
            ],
            network: (delay: Fixed("1ms")),
            faults: [
                DelaySpike(at: "3.002s", duration: "2ms", extra: "7.5s", from: ["lock"], to: ["a"], kinds: [RenewAck]),
                Pause(node: "a", at: "5s", duration: "6s", kind: Gc),
                {extra_fault}
            ],
        )"#
    )
}

/// Everything but the count of events processed (a fault is an event of its own).
fn without_events(s: &Summary) -> serde_json::Value {
    let mut v = serde_json::to_value(s).expect("summary serializes");
    v.as_object_mut().expect("an object").remove("events");
    v
}

fn assert_deferred_story(s: &Summary) {
    // a's grant, then b's at 13.003 s.
    assert_eq!(s.grants, 2, "{s:?}");
    // a's one renewal at 3.003 s; b renews at 16.004, 19.004, 22.004, 25.004, 28.004 s.
    assert_eq!(s.renewals, 6, "{s:?}");
    assert_eq!(s.overlap.count, 0);
    // No running believer from a's pause at 5 s until b believes at 13.004 s.
    assert_eq!(s.max_unavailable_ns, 8_004_000_000);
    // Available over [2 ms, 5 s) and [13.004 s, 30 s): 4.998 + 16.996 = 21.994 s of 30 s.
    assert_eq!(s.availability, 21.994 / 30.0);
}

/// A no-op drift change (to the rate the clock already has) at 10.8 s, while `a` is paused
/// with its timers already due, used to re-queue those timers at 10.8 s, behind the RenewAck
/// of 10.504 s: the ack then revived a's lease, and a kept it (1 grant) instead of letting go.
#[test]
fn a_no_op_drift_change_keeps_deferred_timers_in_order() {
    let strategy = r#"TwoSided(holder_margin: "50ms")"#;
    let plain = run_text(&deferred_story(strategy, ""));
    assert_deferred_story(&plain);
    let drift = r#"DriftChange(node: "a", at: "10.8s", drift_ppm: 0.0),"#;
    let with_noop = run_text(&deferred_story(strategy, drift));
    assert_eq!(without_events(&with_noop), without_events(&plain));
    assert_eq!(with_noop.events, plain.events + 1, "the fault itself");
}

/// The same under `WallClock`, with a +1 ms NTP step at 10.8 s: the deadline timer is on the
/// wall clock and had already fallen due at 9.95 s, so the step must not move it.
#[test]
fn a_wall_step_after_a_deadline_fell_due_does_not_move_it() {
    let strategy = r#"WallClock(holder_margin: "50ms")"#;
    let plain = run_text(&deferred_story(strategy, ""));
    assert_deferred_story(&plain);
    let step = r#"ClockStep(node: "a", at: "10.8s", by: "1ms"),"#;
    let stepped = run_text(&deferred_story(strategy, step));
    assert_eq!(without_events(&stepped), without_events(&plain));
}

/// Re-anchoring a clock keeps its fraction of a nanosecond. `h` at -333 ppm holds token 1 from
/// its Acquire sent at 0, margin 0, and every Renew is dropped, so it believes until its clock
/// reads 10 s: true 10 s / 0.999667 = 10_003_331_109.1 ns, first whole nanosecond
/// 10_003_331_110. The grantor frees the lease at 1 ms + 10 s and `b` believes from 10.002 s.
/// A drift change to the same rate at 1.000000001 s (when h's clock reads 999_667_000.999667)
/// used to drop the .999667 and end the overlap 1 ns later, the unsafe direction.
#[test]
fn a_no_op_drift_change_moves_no_crossing() {
    let story = |extra: &str| {
        cut_off_text(
            "TwoSided()",
            -333.0,
            &format!(r#"Drop(at: "0s", duration: "40s", kinds: [Renew]), {extra}"#),
        )
    };
    let plain = run_text(&story(""));
    let changed = run_text(&story(
        r#"DriftChange(node: "h", at: "1.000000001s", drift_ppm: -333.0)"#,
    ));
    for s in [&plain, &changed] {
        assert_eq!(s.overlap.count, 1, "{s:?}");
        let o = &s.overlap.intervals[0];
        assert_eq!((o.start_ns, o.end_ns), (10_002_000_000, 10_003_331_110));
    }
    assert_eq!(without_events(&changed), without_events(&plain));
}

/// Every message duplicated (`duplicate: 1.0`), fixed 1 ms delays, one contender writing. The
/// grantor grants once (the second Acquire answers a request already granted) and renews once
/// per renewal request: `a` renews at 3.002, 6.002, ..., 18.002 s, six renewals in 20 s, not
/// twelve. Each write reaches the resource twice: applied once, the copy counted in
/// `duplicate_writes`. Both copies take exactly 1 ms, so they land at the same instant (or both
/// after the end): duplicates equal writes applied, exactly.
#[test]
fn duplicated_messages_renew_once_and_write_once() {
    let s = run_text(
        r#"Scenario(
            seed: 3,
            duration: "20s",
            lease: (duration: "10s", renew_every: "3s"),
            strategy: TwoSided(holder_margin: "50ms"),
            nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
            network: (delay: Fixed("1ms"), duplicate: 1.0),
            workload: (reads_per_second: 0.0, writes_per_second: 50.0),
        )"#,
    );
    assert_eq!(s.grants, 1);
    assert_eq!(s.renewals, 6);
    let applied = s.requests.writes_applied;
    assert!(applied > 900, "about 50/s for 20 s: {applied}");
    assert_eq!(s.duplicate_writes, applied, "{s:?}");
    assert_eq!(
        s.unsafe_writes, 0,
        "a duplicate is not a write under an older token"
    );
}
