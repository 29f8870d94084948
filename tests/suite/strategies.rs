//! One test per strategy: its characteristic outcome, with the overlap derived by hand.
//!
//! Most use the "cut-off holder" story: grantor `lock` at 0 ppm, holder `h`, a second contender
//! `b` queued behind it, every message 1 ms. `h` acquires first (its Acquire leaves at 0, the
//! grant arrives at 2 ms) and renews every 3 s of its monotonic clock. A one-way cut from `h` to
//! `lock` at 10 s drops every later renewal (a cut applies at delivery time), so the last renewal
//! that counts is the one sent at true S just before 10 s. `lock` then frees the lease at
//! S + 1 ms + T on its own clock and the grant reaches `b` 1 ms later, at S + T + 2 ms.

use crate::common::*;
use leasesim::Summary;

/// The cut-off story with `h` at `h_ppm` and the given strategy and extra faults.
fn cut_off(strategy: &str, h_ppm: f64, extra_faults: &str) -> Summary {
    run_text(&cut_off_text(strategy, h_ppm, extra_faults))
}

fn only_overlap(s: &Summary) -> (i64, i64) {
    assert_eq!(s.overlap.count, 1, "expected one overlap: {:?}", s.overlap);
    let i = &s.overlap.intervals[0];
    assert_eq!(i.nodes, ["h", "b"]);
    (i.start_ns, i.end_ns - i.start_ns)
}

#[test]
fn two_sided_small_margin_overlaps_by_the_drift_it_does_not_cover() {
    // h runs at -1000 ppm. Its renewal sent at S moves its deadline to local(S) + 9.995 s, which
    // its slow clock reaches 9.995 / 0.999 s = 10.005005005 s later in true time. b believes
    // from S + 10.002 s. Overlap: 10.005005005 - 10.002 = 3.005005 ms; the true instants are
    // rounded up to whole nanoseconds on both sides, so allow 1 ns.
    let s = cut_off(r#"TwoSided(holder_margin: "5ms")"#, -1000.0, "");
    let (_, len) = only_overlap(&s);
    assert!((len - 3_005_005).abs() <= 1, "overlap {len} ns");
    assert_eq!(s.grants, 2);
}

#[test]
fn two_sided_margin_above_the_drift_is_safe() {
    // 20 ms covers the drift: 9.98 / 0.999 s = 9.98998999 s < 10.002 s.
    let s = cut_off(r#"TwoSided(holder_margin: "20ms")"#, -1000.0, "");
    assert_eq!(s.overlap.count, 0);
    assert_eq!(s.grants, 2, "b still gets the lease after h's");
}

#[test]
fn grantor_only_overlaps_by_the_full_drift() {
    // The holder keeps the whole T: 10 / 0.999 s = 10.01001001 s; minus 10.002 s = 8.010010 ms.
    let s = cut_off("GrantorOnly", -1000.0, "");
    let (_, len) = only_overlap(&s);
    assert!((len - 8_010_010).abs() <= 1, "overlap {len} ns");
}

#[test]
fn holder_only_lets_the_grantor_regrant_early() {
    // Both sides use T - 5 ms. h ends at S + 9.995 / 0.999 s = S + 10.005005005 s; the grantor
    // frees at S + 1 ms + 9.995 s and b believes from S + 9.997 s: overlap 8.005005 ms.
    let s = cut_off(r#"HolderOnly(margin: "5ms")"#, -1000.0, "");
    let (_, len) = only_overlap(&s);
    assert!((len - 8_005_005).abs() <= 1, "overlap {len} ns");
}

#[test]
fn wall_clock_expiry_is_moved_by_a_backward_ntp_step() {
    // All clocks perfect. h renews at 3.002, 6.002 and 9.002 s (grant at 2 ms, then every 3 s),
    // so S = 9.002 s and its wall deadline is 9.002 + 9.995 = 18.997 s. A -5 s wall step at 12 s
    // moves that to true 23.997 s. b believes from S + 10.002 = 19.004 s: overlap 4.993 s.
    let s = cut_off(
        r#"WallClock(holder_margin: "5ms")"#,
        0.0,
        r#"ClockStep(node: "h", at: "12s", by: "-5s"),"#,
    );
    let (start, len) = only_overlap(&s);
    assert_eq!(start, 19_004_000_000);
    assert_eq!(len, 4_993_000_000);
    // The same step does nothing to a monotonic deadline.
    let s = cut_off(
        r#"TwoSided(holder_margin: "5ms")"#,
        0.0,
        r#"ClockStep(node: "h", at: "12s", by: "-5s"),"#,
    );
    assert_eq!(s.overlap.count, 0);
}

#[test]
fn on_receive_start_trusts_a_late_ack() {
    // S = 9.002 s. Its RenewAck leaves lock at 9.003 s and is held up 3 s, arriving at
    // 12.004 s. Starting the term on receipt gives a deadline of 12.004 + 9.995 = 21.999 s;
    // b believes from 19.004 s: overlap 2.995 s (= the 3 s delay - the 5 ms margin).
    let spike = r#"DelaySpike(at: "9s", duration: "500ms", extra: "3s", kinds: [RenewAck]),"#;
    let s = cut_off(r#"OnReceiveStart(holder_margin: "5ms")"#, 0.0, spike);
    let (start, len) = only_overlap(&s);
    assert_eq!(start, 19_004_000_000);
    assert_eq!(len, 2_995_000_000);
    // Starting at the send time ignores the delay: the deadline stays 9.002 + 9.995 = 18.997 s.
    let s = cut_off(r#"TwoSided(holder_margin: "5ms")"#, 0.0, spike);
    assert_eq!(s.overlap.count, 0);
}

#[test]
fn cached_bool_believes_until_its_renewal_loop_runs() {
    // Without a pause the renewal loop notices in time: the renewal timer of h fires every 3 s
    // and finds the term (9.002 + 10 = 19.002 s) over at its first run after it, at 21.002 s.
    // Until then the bool is set: b believes from 19.004 s, overlap 21.002 - 19.004 = 1.998 s.
    let s = cut_off("CachedBool", 0.0, "");
    let (start, len) = only_overlap(&s);
    assert_eq!(start, 19_004_000_000);
    assert_eq!(len, 1_998_000_000);
}

#[test]
fn an_unchecked_bool_believes_to_the_end_whatever_the_grantor_answers() {
    // validity: Unchecked clears its bool on nothing but a crash. In the cut-off story b
    // believes from 19.004 s as above, and h to the end of the run: 40 - 19.004 = 20.996 s.
    let unchecked = r#"Custom(holder_clock: Monotonic, lease_start: OnSend, grantor_margin: "0s",
                              validity: Unchecked)"#;
    let s = cut_off(unchecked, 0.0, "");
    assert_eq!(only_overlap(&s), (19_004_000_000, 20_996_000_000));
    // With the cut healed at 22 s, h's renewal of 24.002 s reaches the grantor, which answers
    // Reject (b holds), and so for every renewal after it: h still believes to the end.
    let healed =
        cut_off_text(unchecked, 0.0, "").replace(r#"duration: "30s""#, r#"duration: "12s""#);
    let s = run_text(&healed);
    assert_eq!(only_overlap(&s), (19_004_000_000, 20_996_000_000));
    // A margin means nothing to a bool that never reads the clock.
    let margin = cut_off_text(
        r#"Custom(holder_clock: Monotonic, lease_start: OnSend, holder_margin: "5ms",
                  grantor_margin: "0s", validity: Unchecked)"#,
        0.0,
        "",
    );
    let problems = leasesim::scenario::validate::validate(&scenario(&margin));
    assert!(
        problems.iter().any(|p| p
            .starts_with("strategy.holder_margin: 5ms does not apply with validity: Unchecked")),
        "{problems:?}"
    );
}

#[test]
fn custom_reproduces_the_named_points() {
    // Custom written out as TwoSided must give the same run as TwoSided itself.
    let named = cut_off(r#"TwoSided(holder_margin: "5ms")"#, -1000.0, "");
    let custom = cut_off(
        r#"Custom(holder_clock: Monotonic, lease_start: OnSend, holder_margin: "5ms",
                  grantor_margin: "0s", validity: Clock)"#,
        -1000.0,
        "",
    );
    assert_eq!(named.overlap, custom.overlap);
    assert_eq!(named.events, custom.events);
}

#[test]
fn a_grantor_that_forgets_on_restart_grants_twice() {
    // Perfect clocks, 1 ms messages. h holds from 2 ms and renews at 3.002 s (deadline 12.997 s).
    // b asks at 100 ms and retries every second (1.1 s, 2.1 s, ...). The grantor crashes at 4 s
    // and restarts at 5 s. With Forget it grants b's retry of 5.1 s at once (arriving 5.101 s;
    // b believes from 5.102 s). h's next renewal (6.002 s) is rejected because b holds now;
    // the Reject reaches h at 6.004 s. Overlap: 6.004 - 5.102 = 902 ms.
    // With Wait it grants nothing before 5 + 10 = 15 s; h is rejected at 6.004 s all the same
    // and nobody overlaps.
    let story = |restart: &str| {
        run_text(&format!(
            r#"Scenario(
                duration: "30s",
                lease: (duration: "10s", renew_every: "3s", grantor_restart: {restart}),
                strategy: TwoSided(holder_margin: "5ms"),
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "h", role: Contender),
                    (name: "b", role: Contender, start: "100ms"),
                ],
                faults: [Crash(node: "lock", at: "4s"), Restart(node: "lock", at: "5s")],
            )"#
        ))
    };
    let forget = story("Forget");
    let (start, len) = only_overlap(&forget);
    assert_eq!(start, 5_102_000_000);
    assert_eq!(len, 902_000_000);
    let wait = story("Wait");
    assert_eq!(wait.overlap.count, 0);
    assert!(
        wait.grants >= 2,
        "the lease is granted again after the wait"
    );
    // Tokens are durable at the grantor, so the grant after the restart is token 2, not 1 again.
}

#[test]
fn a_restarted_grantor_grants_first_when_its_own_term_and_margin_have_passed() {
    // Perfect clocks, 1 ms messages, T = 10 s, grantor margin 500 ms. h holds from 2 ms; b asks
    // at 100 ms and retries every second (its place in the queue kept). The grantor crashes at
    // 4 s (losing its queue) and restarts at 5 s; b's retry of 5.1 s queues it at 5.101 s. h's
    // renewal of 6.002 s reaches a grantor that holds nothing for it at 6.003 s: Reject, and h
    // queues behind b at 6.005 s.
    // With Wait the grantor grants nothing before its clock reads restart + T + margin
    // = 5 + 10 + 0.5 = 15.5 s; the first grant after the restart, to b at the head of the queue,
    // is made at that instant (its timer), so the failover from h to b is at 15.5 s exactly.
    // Without the margin in the wait it would be at 15 s; without the wait (Forget), at once
    // when b's retry arrives, 5.101 s.
    let first_grant_after_restart = |restart: &str, grantor_margin: &str| {
        let s = run_text(&format!(
            r#"Scenario(
                duration: "30s",
                lease: (duration: "10s", renew_every: "3s", grantor_restart: {restart}),
                strategy: TwoSided(holder_margin: "5ms", grantor_margin: "{grantor_margin}"),
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "h", role: Contender),
                    (name: "b", role: Contender, start: "100ms"),
                ],
                network: (delay: Fixed("1ms")),
                faults: [Crash(node: "lock", at: "4s"), Restart(node: "lock", at: "5s")],
            )"#
        ));
        assert_eq!(s.holders[..2], ["h", "b"]);
        let f = &s.failovers[0];
        assert_eq!((f.from.as_str(), f.to.as_str()), ("h", "b"));
        f.at_ns
    };
    assert_eq!(first_grant_after_restart("Wait", "500ms"), 15_500_000_000);
    assert_eq!(first_grant_after_restart("Wait", "0s"), 15_000_000_000);
    assert_eq!(first_grant_after_restart("Forget", "500ms"), 5_101_000_000);
}

#[test]
fn a_restarted_contender_is_heard_at_once() {
    // Perfect clocks, 1 ms messages, TwoSided(50 ms), T = 10 s, renewals every 3 s. `a` holds
    // from 2 ms and renews at 3.002 ... 27.002 s, then crashes at 30 s: the grantor frees the
    // lease at 27.003 + 10 = 37.003 s. `b` asked at 100 ms and retried every second, so the grant
    // answers its 37th request (sent at 36.1 s); b holds from 37.004 s. b crashes at 40 s (before
    // its first renewal at 40.004 s) and restarts at 41 s: its new requests must not be taken for
    // retries older than request 37, or it would wait ~37 s for its counter to catch up. The
    // grantor frees b's old lease at 47.003 s and grants its new request: b holds from 47.004 s.
    // Unavailable: [0, 2 ms), [30 s, 37.004 s) and [40 s, 47.004 s): the longest is 7.004 s.
    let s = run_text(
        r#"Scenario(
            duration: "60s",
            lease: (duration: "10s", renew_every: "3s"),
            strategy: TwoSided(holder_margin: "50ms"),
            nodes: [
                (name: "lock", role: Grantor),
                (name: "a", role: Contender),
                (name: "b", role: Contender, start: "100ms"),
            ],
            faults: [
                Crash(node: "a", at: "30s"),
                Crash(node: "b", at: "40s"),
                Restart(node: "b", at: "41s"),
            ],
        )"#,
    );
    assert_eq!(s.grants, 3, "a, b, and b again after its restart");
    assert_eq!(s.overlap.count, 0);
    assert_eq!(s.max_unavailable_ns, 7_004_000_000);
}

#[test]
fn a_restart_before_the_node_starts_does_not_start_it() {
    // `a` starts at 15 s; a crash at 1 s and a restart at 2 s happen to a node that is not
    // running yet and change nothing: a asks at 15 s and holds from 15.002 s to the end.
    let s = run_text(
        r#"Scenario(
            duration: "30s",
            lease: (duration: "10s"),
            strategy: TwoSided(holder_margin: "50ms"),
            nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender, start: "15s")],
            faults: [Crash(node: "a", at: "1s"), Restart(node: "a", at: "2s")],
        )"#,
    );
    assert_eq!(s.grants, 1);
    assert_eq!(s.availability, (30e9 - 15.002e9) / 30e9);
}
