//! ZooKeeperSession: timeout negotiation, expiry in tick buckets, the client's ping cadence and
//! its Disconnected instant, Expired learnt only on reconnect, the lock's handover in sequence
//! order, and Curator's error policies with its simulated expiry. The bundled
//! hbase-gc-pause-zk-session, zk-curator-lock-suspended, zk-curator-session-policy-partition and
//! kafka-controller-gc-pause-zk pin the stories; these tests pin each rule on its own, with the
//! arithmetic in each comment and the ZooKeeper or Curator code it follows.
//!
//! The world of most tests: tick 2 s, 1 ms messages, perfect clocks; client `a` connects at 0
//! (zk opens session 1 at 1 ms, a is Connected at 2 ms), creates node 1 at 2 ms (answered at
//! 4 ms), asks for its predecessor at 4 ms and holds the lock (token 1) from 6 ms; `b` (from
//! 100 ms) has node 2 and watches node 1. a last sent at 4 ms, so with nothing to send it pings
//! every t/3 from there. From 21 s a is cut off from zk and b.

use crate::common::{leasesim, run_text, workdir};
use leasesim::strategy::zookeeper::server::{round_to_next_interval, Bounds};
use leasesim::time::{LocalDur, LocalTime};

const S: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;

/// The world above with `strategy`, `nodes` after zk and a, `faults` and `duration`.
fn world(strategy: &str, more_nodes: &str, faults: &str, duration: &str) -> String {
    format!(
        r#"Scenario(
            duration: "{duration}",
            lease: (duration: "30s"),
            strategy: {strategy},
            nodes: [
                (name: "zk", role: Grantor),
                (name: "a", role: Contender),
                {more_nodes}
            ],
            network: (delay: Fixed("1ms")),
            workload: (reads_per_second: 20.0, writes_per_second: 2.0),
            faults: [{faults}],
        )"#
    )
}

const B: &str = r#"(name: "b", role: Contender, start: "100ms"),"#;
/// a cut off from 21 s to the end of a 100 s run.
const CUT_A: &str = r#"Partition(at: "21s", duration: "79s", groups: [["a"], ["zk", "b"]]),"#;

fn zk(tick: &str, timeout: &str, act_while_disconnected: bool) -> String {
    format!(
        r#"ZooKeeperSession(tick_time: "{tick}", session_timeout: "{timeout}", act_while_disconnected: {act_while_disconnected})"#
    )
}

/// `ZooKeeperServer.processConnectRequest` clamps the requested timeout into
/// [minSessionTimeout, maxSessionTimeout], by default [2, 20] x tickTime: with a 2 s tick,
/// 1 s -> 4 s, 30 s -> 30 s, 90 s -> 40 s (HBase's default asks for 90 s).
#[test]
fn the_server_clamps_the_timeout_into_2_to_20_ticks() {
    let bounds = Bounds::of(LocalDur::from_secs(2), None, None);
    let got = |s: i64| bounds.negotiate(LocalDur::from_secs(s));
    assert_eq!(got(1), LocalDur::from_secs(4));
    assert_eq!(got(4), LocalDur::from_secs(4));
    assert_eq!(got(30), LocalDur::from_secs(30));
    assert_eq!(got(40), LocalDur::from_secs(40));
    assert_eq!(got(90), LocalDur::from_secs(40));
}

/// The clamp as a run shows it, under Curator's default policy. With t granted, a pings every
/// t/3 from 4 ms (readTimeout = 2t/3, the ping at readTimeout / 2, `ClientCnxn.SendThread`);
/// its last ping before the cut at 21 s reaches zk 1 ms later, the session expires in the
/// bucket after that + t, b learns it holds 3 ms after (NodeDeleted, then its Check's round
/// trip), and a stopped at its last Pong + 2t/3.
/// - asked 1 s, t = 4 s: pings every 1.333333333 s; the 15th, at 0.004 + 15 x 1.333333333 =
///   20.003999995 s, reaches zk at 20.004999995 s: expiry (floor(24.004999995 / 2) + 1) x 2 =
///   26 s, b holds from 26.003 s; a stopped at 20.005999995 + 2.666666666 = 22.672666661 s:
///   slack 3.330333339 s.
/// - asked 90 s, t = 40 s: pings every 13.333333333 s; the one of 13.337333333 s reaches zk at
///   13.338333333 s: expiry (floor(53.338333333 / 2) + 1) x 2 = 54 s, b from 54.003 s; a stopped
///   at 13.339333333 + 26.666666666 = 40.005999999 s: slack 13.997000001 s. Unclamped (90 s),
///   b would wait past 100 s: no handover at all.
#[test]
fn the_negotiated_timeout_is_the_one_both_sides_use() {
    let slack = |timeout: &str| {
        let s = run_text(&world(&zk("2s", timeout, false), B, CUT_A, "100s"));
        assert_eq!(s.holders, ["a", "b"], "{timeout}");
        assert_eq!(s.overlap.count, 0);
        s.min_slack_ns
    };
    assert_eq!(slack("1s"), Some(3_330_333_339));
    assert_eq!(slack("90s"), Some(13_997_000_001));
}

/// The server's own bounds (zoo.cfg `minSessionTimeout`, `maxSessionTimeout`; ZooKeeper's
/// `SessionTest.testMinMaxSessionTimeout` sets both) replace the defaults of 2 and 20 ticks, and
/// both sides time the session by what is granted. The world above, a cut off at 21 s:
/// - asked 90 s, max 60 s: t = 60 s (not the 40 s of the default max, nor 90 s): readTimeout
///   40 s, a ping every 20 s from 4 ms; the one of 20.004 s reaches zk at 20.005 s: expiry
///   (floor(80.005 / 2) + 1) x 2 = 82 s, b holds from 82.003 s; a stopped at its Pong (20.006 s)
///   + 40 s = 60.006 s: slack 21.997 s.
/// - asked 1 s, min 10 s: t = 10 s (not 4 s): readTimeout 6.666666666 s, a ping every
///   3.333333333 s; the 6th, at 0.004 + 6 x 3.333333333 = 20.003999998 s, reaches zk at
///   20.004999998 s: expiry (floor(30.004999998 / 2) + 1) x 2 = 32 s, b from 32.003 s; a stopped
///   at 20.005999998 + 6.666666666 = 26.672666664 s: slack 5.330333336 s.
#[test]
fn the_servers_bounds_set_the_timeout_both_sides_use() {
    let slack = |timeout: &str, bounds: &str| {
        let strategy =
            format!(r#"ZooKeeperSession(tick_time: "2s", session_timeout: "{timeout}", {bounds})"#);
        let s = run_text(&world(&strategy, B, CUT_A, "100s"));
        assert_eq!(s.holders, ["a", "b"], "{timeout} {bounds}");
        assert_eq!(s.overlap.count, 0);
        s.min_slack_ns
    };
    let max = r#"max_session_timeout: "60s""#;
    assert_eq!(slack("90s", max), Some(21_997 * MS));
    let min = r#"min_session_timeout: "10s""#;
    assert_eq!(slack("1s", min), Some(5_330_333_336));
}

/// `ExpiryQueue.roundToNextInterval`: (time / interval + 1) x interval, the next multiple
/// strictly after (an exact multiple goes to the next one).
#[test]
fn expiry_rounds_up_to_the_next_tick_bucket() {
    let tick = LocalDur::from_secs(2);
    let at = |ns: i64| round_to_next_interval(LocalTime::from_ns(ns), tick).ns();
    assert_eq!(at(50_005 * MS), 52 * S);
    assert_eq!(at(40 * S), 42 * S);
    assert_eq!(at(40 * S - 1), 40 * S);
    assert_eq!(at(0), 2 * S);
}

/// The bucket instant in a run (`SessionTrackerImpl.run` expires a bucket when it comes): with
/// t = 30 s, a's last ping before the cut (20.004 s) reaches zk at 20.005 s; the session expires
/// at the bucket after 50.005 s: 52 s with a 2 s tick, (floor(50.005 / 7) + 1) x 7 = 56 s with
/// a 7 s tick (30 s is inside [14, 140] s). b holds 3 ms later: 52.003 and 56.003 s. a stopped
/// at its last Pong + 20 s = 40.006 s, so the slack is 11.997 and 15.997 s. (Unrounded, b
/// would hold from 50.008 s.)
#[test]
fn the_session_expires_at_its_bucket_instant() {
    let slack = |tick: &str| {
        let s = run_text(&world(&zk(tick, "30s", false), B, CUT_A, "100s"));
        assert_eq!(s.holders, ["a", "b"]);
        s.min_slack_ns
    };
    assert_eq!(slack("2s"), Some(11_997 * MS));
    assert_eq!(slack("7s"), Some(15_997 * MS));
}

/// A quiet client pings when it has sent nothing for t/3 (`ClientCnxn.SendThread.run`:
/// readTimeout / 2 with readTimeout = 2t/3). a alone, no workload, 100 s: Connect, Create and
/// Check once each, the last at 4 ms; with t = 30 s pings at 0.004 + 10k s for k = 1..9 (the
/// tenth would be at 100.004 s): 9 Pings, 9 Pongs. With t = 4 s (asked 1 s, clamped), every
/// 1.333333333 s: 0.004 + 74 x 1.333333333 = 98.670666642 s is the last, 74 of each.
#[test]
fn an_idle_client_pings_every_third_of_the_timeout() {
    let count = |timeout: &str| {
        let text = world(&zk("2s", timeout, false), "", "", "100s")
            .replace("reads_per_second: 20.0, writes_per_second: 2.0", "");
        let s = run_text(&text);
        let m = |k: &str| s.messages.get(k).copied().unwrap_or(0);
        for once in [
            "Connect",
            "Connected",
            "Create",
            "Created",
            "Check",
            "Checked",
        ] {
            assert_eq!(m(once), 1, "{once}");
        }
        assert_eq!(m("Pong"), m("Ping"));
        m("Ping")
    };
    assert_eq!(count("30s"), 9);
    assert_eq!(count("1s"), 74);
}

/// The client turns Disconnected readTimeout after the last message it received: a's last Pong
/// before the cut arrives at 20.006 s (t = 30 s, readTimeout 20 s), so a stops acting at
/// 40.006 s; b holds from 52.003 s (see the bucket test): 11.997 s apart. With
/// `act_while_disconnected` a goes on: Disconnected at 40.006 s, it reconnects then and every
/// second after (`lease.retry_every`), each Connect lost in the partition, and zk's Closed at 52 s
/// too. The partition ends at 60 s: the Connect of 60.006 s reaches zk at 60.007 s and is
/// answered Expired (the session expired at 52 s), which arrives at 60.008 s: only then does a
/// stop. Overlap [52.003 s, 60.008 s) = 8.005 s; one Expired sent.
#[test]
fn disconnected_comes_after_two_thirds_and_expired_only_on_reconnect() {
    let s = run_text(&world(&zk("2s", "30s", false), B, CUT_A, "100s"));
    assert_eq!(s.min_slack_ns, Some(11_997 * MS));
    let cut = r#"Partition(at: "21s", duration: "39s", groups: [["a"], ["zk", "b"]]),"#;
    let s = run_text(&world(&zk("2s", "30s", true), B, cut, "100s"));
    assert_eq!(s.overlap.count, 1);
    let i = &s.overlap.intervals[0];
    assert_eq!((i.start_ns, i.end_ns), (52_003 * MS, 60_008 * MS));
    assert_eq!(s.messages.get("Expired"), Some(&1));
}

/// Curator's recipe (`LockInternals.internalLockLoop`, `StandardLockInternalsDriver.getsTheLock`):
/// the lowest node holds, each other node watches the one just before it. a, b and c have
/// nodes 1, 2 and 3 (c from 200 ms watches node 2). a is cut off at 21 s: its session expires at
/// 52 s, b (told at 52.001 s) holds token 2 from 52.003 s; b's Check of 52.001 s touched its
/// session last; b crashes at 55 s and its session expires at the bucket after 82.002 s, 84 s:
/// c holds token 3 from 84.003 s. Each deletion tells one watcher: 2 NodeDeleted (a herd
/// watching node 1 would send 3).
#[test]
fn the_lock_passes_in_sequence_order_and_each_deletion_wakes_one_watcher() {
    let nodes = r#"(name: "b", role: Contender, start: "100ms"),
        (name: "c", role: Contender, start: "200ms"),"#;
    let faults = r#"Partition(at: "21s", duration: "79s", groups: [["a"], ["zk", "b", "c"]]),
        Crash(node: "b", at: "55s"),"#;
    let s = run_text(&world(&zk("2s", "30s", false), nodes, faults, "100s"));
    assert_eq!(s.holders, ["a", "b", "c"]);
    assert_eq!(s.grants, 3);
    assert_eq!(s.messages.get("NodeDeleted"), Some(&2));
    assert_eq!(s.overlap.count, 0);
}

/// Zero or negative periods exit 2 and name the field, as do bounds with min above max (with a
/// 2 s tick, a min of 50 s is above the default max of 40 s); a timeout outside the bounds is
/// accepted (the server clamps it).
#[test]
fn bad_values_exit_2_naming_the_field() {
    let dir = workdir("zookeeper-bad-values");
    let bad = world(&zk("0s", "30s", false), B, "", "10s");
    std::fs::write(dir.join("bad.ron"), bad).unwrap();
    let out = leasesim(&["check", "bad.ron"], &dir);
    assert_eq!(out.status.code(), Some(2));
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("strategy.tick_time: must be positive"),
        "{said}"
    );
    let crossed = world(
        r#"ZooKeeperSession(tick_time: "2s", min_session_timeout: "50s")"#,
        B,
        "",
        "10s",
    );
    std::fs::write(dir.join("crossed.ron"), crossed).unwrap();
    let out = leasesim(&["check", "crossed.ron"], &dir);
    assert_eq!(out.status.code(), Some(2));
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "strategy.min_session_timeout: 50s must not be larger than \
             strategy.max_session_timeout (40s: 20 x tick_time, its default)"
        ),
        "{said}"
    );
    let clamped = world(&zk("2s", "1h", false), B, "", "10s");
    std::fs::write(dir.join("clamped.ron"), clamped).unwrap();
    assert_eq!(
        leasesim(&["check", "clamped.ron"], &dir).status.code(),
        Some(0)
    );
}

/// Curator's settings after the base ones: `error_policy` and, if given, the percent.
fn curator(policy: &str, percent: Option<u32>) -> String {
    let percent = percent
        .map(|n| format!(", simulated_session_expiration_percent: {n}"))
        .unwrap_or_default();
    format!(
        r#"ZooKeeperSession(tick_time: "2s", session_timeout: "30s", error_policy: {policy}{percent})"#
    )
}

/// a cut off from 21 s to 120 s of a 150 s run, with `more` faults after it.
fn cut_to_120(strategy: &str, more: &str) -> leasesim::outcome::Summary {
    let faults =
        format!(r#"Partition(at: "21s", duration: "99s", groups: [["a"], ["zk", "b"]]), {more}"#);
    run_text(&world(strategy, B, &faults, "150s"))
}

/// The one overlap's [start, end) in ns, or None.
fn overlap_of(s: &leasesim::outcome::Summary) -> Option<(i64, i64)> {
    assert!(s.overlap.count <= 1, "{:?}", s.overlap);
    let i = s.overlap.intervals.first()?;
    Some((i.start_ns, i.end_ns))
}

/// The same partition under the three clients (zk-curator-session-policy-partition derives it):
/// t = 30 s, a's last Pong at 20.006 s, SUSPENDED at 40.006 s; the session expires at 52 s and b
/// holds from 52.003 s. `SessionConnectionStateErrorPolicy` (LOST only) acts on until
/// `ConnectionStateManager.checkSessionExpiration` injects LOST at 40.006 + 30 = 70.006 s:
/// overlap [52.003 s, 70.006 s) = 18.003 s, and no Expired is ever sent (a's new session after
/// the heal never names session 1). The raw client acts until the Expired answering its
/// Connect of 120.006 s, at 120.008 s: 68.005 s, one Expired. The standard policy stops at
/// SUSPENDED: 52.003 - 40.006 = 11.997 s of slack.
#[test]
fn the_session_policy_acts_until_lost_one_timeout_after_suspended() {
    let s = cut_to_120(&curator("Session", None), "");
    assert_eq!(overlap_of(&s), Some((52_003 * MS, 70_006 * MS)));
    assert_eq!(s.messages.get("Expired"), Some(&0));
    assert_eq!(s.holders, ["a", "b"]);
    let s = cut_to_120(&zk("2s", "30s", true), "");
    assert_eq!(overlap_of(&s), Some((52_003 * MS, 120_008 * MS)));
    assert_eq!(s.messages.get("Expired"), Some(&1));
    let s = cut_to_120(&curator("Standard", None), "");
    assert_eq!(overlap_of(&s), None);
    assert_eq!(s.min_slack_ns, Some(11_997 * MS));
}

/// `getUseSessionTimeoutMs`: LOST comes t x percent / 100 after SUSPENDED (40.006 s):
/// - 50%: 40.006 + 15 = 55.006 s: overlap [52.003 s, 55.006 s) = 3.003 s;
/// - 30% (`TestConnectionStateManager.testSessionConnectionStateErrorPolicyWithExpirationPercent30`):
///   40.006 + 9 = 49.006 s, before b: 52.003 - 49.006 = 2.997 s of slack;
/// - 0: nothing simulated (`processEvents` checks only for a percent above 0): a acts until
///   the Expired of 120.008 s, as the raw client: [52.003 s, 120.008 s), one Expired.
#[test]
fn lost_is_injected_at_suspended_plus_the_percent_of_the_timeout_and_0_turns_it_off() {
    let s = cut_to_120(&curator("Session", Some(50)), "");
    assert_eq!(overlap_of(&s), Some((52_003 * MS, 55_006 * MS)));
    let s = cut_to_120(&curator("Session", Some(30)), "");
    assert_eq!(overlap_of(&s), None);
    assert_eq!(s.min_slack_ns, Some(2_997 * MS));
    let s = cut_to_120(&curator("Session", Some(0)), "");
    assert_eq!(overlap_of(&s), Some((52_003 * MS, 120_008 * MS)));
    assert_eq!(s.messages.get("Expired"), Some(&1));
}

/// `checkSessionExpiration` measures the time since SUSPENDED by `System.currentTimeMillis`,
/// while its poll waits on the monotonic clock. SUSPENDED at 40.006 s (wall 40.006 s); a's
/// wall clock stepped at 45 s:
/// - back 10 s: at the poll's end, 70.006 s, the wall clock reads 60.006 s, 20 s elapsed of
///   30: it polls the 10 s left and injects at 80.006 s: overlap [52.003 s, 80.006 s) = 28.003 s;
/// - forward 10 s: the poll still ends at 70.006 s (40 s elapsed by then, at least 30): LOST at
///   70.006 s, as unstepped. A forward step never brings LOST earlier than the poll's end.
#[test]
fn a_wall_clock_step_back_delays_the_simulated_expiry_and_forward_does_not_advance_it() {
    let step = |by: &str| format!(r#"ClockStep(node: "a", at: "45s", by: "{by}"),"#);
    let s = cut_to_120(&curator("Session", None), &step("-10s"));
    assert_eq!(overlap_of(&s), Some((52_003 * MS, 80_006 * MS)));
    let s = cut_to_120(&curator("Session", None), &step("10s"));
    assert_eq!(overlap_of(&s), Some((52_003 * MS, 70_006 * MS)));
}

/// RECONNECTED of its own session (`TestLeaderLatch.testSessionErrorPolicy`: under the session
/// policy SUSPENDED then RECONNECTED, and the leadership is never given up). a cut off from
/// 21 s to 45 s: SUSPENDED at 40.006 s, it retries every second; its Connect of 45.006 s reaches
/// zk at 45.007 s, before the session's expiry at 52 s, and resumes it. Under the session policy
/// a holds throughout: one grant, no gap longer than the 6 ms of its first acquisition. Under
/// the standard policy it stops at 40.006 s and holds again once its Check after the reconnect
/// is answered, 45.010 s: unavailable 5.004 s.
#[test]
fn the_session_policy_keeps_the_lock_through_a_reconnect_of_its_session() {
    let cut = r#"Partition(at: "21s", duration: "24s", groups: [["a"], ["zk", "b"]]),"#;
    let s = run_text(&world(&curator("Session", None), B, cut, "100s"));
    assert_eq!((s.grants, s.overlap.count), (1, 0));
    assert_eq!(s.holders, ["a"]);
    assert_eq!(s.max_unavailable_ns, 6 * MS);
    let s = run_text(&world(&curator("Standard", None), B, cut, "100s"));
    assert_eq!(s.holders, ["a"]);
    assert_eq!(s.max_unavailable_ns, 5_004 * MS);
}

/// Curator's fields with the raw client are refused, each by name; so is a percent above 100
/// (`CuratorFrameworkFactory.Builder.simulatedSessionExpirationPercent`).
#[test]
fn curator_fields_with_the_raw_client_and_a_percent_above_100_exit_2() {
    let dir = workdir("zookeeper-curator-fields");
    let said = |name: &str, strategy: &str| {
        let text = world(strategy, B, "", "10s");
        std::fs::write(dir.join(name), text).unwrap();
        let out = leasesim(&["check", name], &dir);
        assert_eq!(out.status.code(), Some(2), "{strategy}");
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let raw = said(
        "raw.ron",
        r#"ZooKeeperSession(act_while_disconnected: true, error_policy: Session, simulated_session_expiration_percent: 50)"#,
    );
    for field in ["error_policy", "simulated_session_expiration_percent"] {
        let line = format!(
            "strategy.{field}: a Curator client's setting, but act_while_disconnected: true is \
             the raw ZooKeeper client (HBase), which has no ConnectionStateManager"
        );
        assert!(raw.contains(&line), "{raw}");
    }
    let big = said(
        "big.ron",
        r#"ZooKeeperSession(simulated_session_expiration_percent: 101)"#,
    );
    assert!(
        big.contains(
            "strategy.simulated_session_expiration_percent: must be at most 100 (got 101)"
        ),
        "{big}"
    );
}
