//! ChubbySession: sessions, held-open KeepAlives, jeopardy and grace, lock-delay, the master's
//! FIFO and its fail-over. The bundled chubby-* scenarios pin the stories; these tests pin what
//! each rule does on its own, with the arithmetic in each comment.
//!
//! The world of most tests: T = 12 s, 1 ms messages, perfect clocks, KeepAlives held open with
//! the default 1 s hold margin (renew_every 4 s paces only KeepAlives with no answer); client
//! `a` opens its session at 0 and holds generation 1 from 2 ms, `b` (from 100 ms) and `c` (from
//! 200 ms) queue behind it. The master answers a's KeepAlive 1 at once (it opens the session,
//! to 12.001 s) and holds KeepAlive 2, sent at 2 ms, until 11.001 s: a's local lease runs to
//! 0.002 + 10.998 + 12 = 23 s. It holds KeepAlive 3, sent at 11.002 s, until 22.001 s and then
//! extends a's session to 34.001 s, even when a cut at 21 s drops that answer: a stops at 23 s,
//! the master expires its session at 34.001 s. With `keepalive: Immediate` a's last KeepAlive
//! answered before the cut is the one sent at 20 s: a's local lease ends at 32 s, the master,
//! which received it at 20.001 s, expires the session at 32.001 s.

use crate::common::{leasesim, run, run_text, scenario, workdir};
use leasesim::scenario::validate::validate;

/// The world above with `strategy`, `lease_extra` (fields of `lease`), `faults` and
/// `resource` spliced in, and a third client `c` when `with_c`.
fn world(
    strategy: &str,
    lease_extra: &str,
    faults: &str,
    resource: &str,
    with_c: bool,
    duration: &str,
) -> String {
    let c = if with_c {
        r#"(name: "c", role: Contender, start: "200ms"),"#
    } else {
        ""
    };
    format!(
        r#"Scenario(
            duration: "{duration}",
            lease: (duration: "12s", renew_every: "4s", {lease_extra}),
            strategy: {strategy},
            nodes: [
                (name: "master", role: Grantor),
                (name: "a", role: Contender),
                (name: "b", role: Contender, start: "100ms"),
                {c}
            ],
            network: (delay: Fixed("1ms")),
            workload: (reads_per_second: 50.0, writes_per_second: 5.0),
            resource: ({resource}),
            faults: [{faults}],
        )"#
    )
}

/// a cut off from the master and the other clients from 21 s on.
const CUT_A: &str = r#"Partition(at: "21s", duration: "79s", groups: [["a"], ["master", "b"]]),"#;
/// The same with a third client.
const CUT_A_FROM_BC: &str =
    r#"Partition(at: "21s", duration: "79s", groups: [["a"], ["master", "b", "c"]]),"#;

/// The master grants to the oldest pending session, at the instant the lock is free: a's
/// session expires at 34.001 s and b, queued at 101 ms before c at 201 ms, gets generation 2
/// then, though neither retries near that instant (retries every 5 s: b's at 30.1 and 35.1 s).
/// b holds from 34.002 s, 11.002 s after a stopped at 23 s. Granting the newest would pick c;
/// granting at b's next retry would start b at 35.102 s, 12.102 s after.
#[test]
fn the_oldest_pending_session_gets_the_lock_at_the_instant_it_is_free() {
    let s = run_text(&world(
        "ChubbySession()",
        r#"retry_every: "5s""#,
        CUT_A_FROM_BC,
        "",
        true,
        "40s",
    ));
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.min_slack_ns, Some(11_002_000_000));
    assert_eq!(s.overlap.count, 0);
}

/// Lock-delay ends at an exact instant too: a's session expires at 34.001 s, the lock is
/// refused until 34.001 + 10 = 44.001 s and granted to b then (b's retries every 5 s come at
/// 40.1 and 45.1 s): b holds from 44.002 s, 21.002 s after a stopped at 23 s.
#[test]
fn the_lock_is_granted_the_instant_lock_delay_ends() {
    let s = run_text(&world(
        r#"ChubbySession(lock_delay: "10s")"#,
        r#"retry_every: "5s""#,
        CUT_A_FROM_BC,
        "",
        true,
        "50s",
    ));
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.min_slack_ns, Some(21_002_000_000));
}

/// Lock-delay follows a session's expiry, never a clean release: a steps down at 10 s (a
/// `Release`, then a new Acquire behind b), the master frees the lock at 10.001 s and grants it
/// to b at once despite the 60 s lock-delay: b holds from 10.002 s (its local lease, from its
/// session's opening at 100 ms, runs to 12.1 s), 2 ms after a let go.
#[test]
fn a_clean_release_has_no_lock_delay() {
    let s = run_text(&world(
        r#"ChubbySession(lock_delay: "60s")"#,
        "",
        r#"StepDown(node: "a", at: "10s"),"#,
        "",
        false,
        "20s",
    ));
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.min_slack_ns, Some(2_000_000));
    assert_eq!(s.overlap.count, 0);
}

/// The local lease counts from the KeepAlive's send time, not from its answer's receipt
/// (answered at once). a's link to the master is cut one way from 21 s, and the answer to its
/// KeepAlive of 20 s is 2 s late (it arrives at 22.002 s): a's local lease still ends at
/// 20 + 12 = 32 s, and b, granted at 32.001 s, holds 2 ms later. Counting from the receipt
/// would run a's lease to 34.002 s: an overlap of 2 s.
#[test]
fn the_local_lease_counts_from_the_keepalive_send_time() {
    let faults = r#"OneWay(from: "a", to: "master", at: "21s", duration: "19s"),
        DelaySpike(at: "20s", duration: "10ms", extra: "2s", kinds: [KeepAliveAck]),"#;
    let strategy = "ChubbySession(keepalive: Immediate)";
    let s = scenario(&world(strategy, "", faults, "", false, "40s"));
    assert!(validate(&s).is_empty(), "{:?}", validate(&s));
    let s = run(&s);
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.min_slack_ns, Some(2_000_000));
}

/// Grace runs from the end of the local lease, not from the start of the outage: with a
/// grace of 12 s a client acting in jeopardy believes until 23 + 12 = 35 s, and b holds from
/// 34.002 s: an overlap of 0.998 s. From the cut at 21 s it would end at 33 s, before b.
#[test]
fn grace_runs_from_the_end_of_the_local_lease() {
    let s = run_text(&world(
        r#"ChubbySession(grace: "12s", act_in_jeopardy: true)"#,
        "",
        CUT_A,
        "",
        false,
        "50s",
    ));
    assert_eq!(s.overlap.count, 1);
    let i = &s.overlap.intervals[0];
    assert_eq!((i.start_ns, i.end_ns), (34_002_000_000, 35_000_000_000));
}

/// The HBase story as a Chubby stand-in (a 13.2 s GC pause at 18.5 s against a 10 s session,
/// pings every T/3, answered at once as ZooKeeper's are; `hbase-gc-pause-zk-session` now tells
/// it on ZooKeeperSession).
const HBASE_ON_CHUBBY: &str = r#"Scenario(
    description: "A 13.2 s GC pause on an HBase region server whose ZooKeeper session is 10 s; it acts on resume until the ZooKeeper client delivers the Expired event, 5.033 s into the new owner's tenure.",
    seed: 16,
    duration: "40s",
    lease: (duration: "10s"),
    strategy: ChubbySession(grace: "1h", act_in_jeopardy: true, keepalive: Immediate),
    nodes: [
        (name: "zk", role: Grantor),
        (name: "rs1", role: Contender),
        (name: "rs2", role: Contender, start: "100ms"),
    ],
    network: (delay: Fixed("1ms")),
    workload: (reads_per_second: 200.0, writes_per_second: 10.0),
    faults: [Pause(node: "rs1", at: "18.5s", duration: "13.2s", kind: Gc)],
    expect: (
        overlap: true,
        max_overlap_at_least: "5.033333335s",
        max_overlap_at_most: "5.033333335s",
        overlap_count: 1,
        zombie_actions: true,
        stale_reads: true,
        unsafe_writes: true,
        grants: 2,
        holders: ["rs1", "rs2"],
        pauses: 1,
    ),
)"#;

/// In HBASE_ON_CHUBBY the grace stands for "until the Expired event arrives": rs1's
/// local lease ends at 26.666666665 s and the event arrives at 31.702 s, so any grace above
/// 5.035333335 s gives the bundled run (overlap 5.033333335 s), and a grace of 5 s ends the
/// belief at 31.666666665 s instead: 31.666666665 - 26.668666665 = 4.998 s.
#[test]
fn the_zookeeper_grace_only_needs_to_outlast_the_event() {
    let text = HBASE_ON_CHUBBY;
    let overlap_with = |grace: &str| {
        let mut s = scenario(&text.replace(r#"grace: "1h""#, &format!("grace: {grace:?}")));
        s.expect = None;
        run(&s).overlap.max_ns
    };
    assert_eq!(overlap_with("1h"), 5_033_333_335);
    assert_eq!(overlap_with("5.04s"), 5_033_333_335);
    assert_eq!(overlap_with("5s"), 4_998_000_000);
}

/// A restarted master (chubby-master-failover-immediate: down from 21 to 35 s, KeepAlives
/// answered at once) that expires the sessions it found instead of extending them
/// (`grantor_restart: Forget`) releases a's lock at 35 s.
/// b's retry of 35.1 s hears SessionExpired at 35.102 s; b opens a new session whose KeepAlive
/// and Acquire reach the master at 35.103 s, which grants generation 2 at once (no lock-delay
/// here): b holds from 35.104 s. a, in jeopardy since 32 s, learns that its session is gone
/// from the answer to its KeepAlive of 36 s, at 36.002 s; acting in jeopardy it overlaps b for
/// 36.002 - 35.104 = 0.898 s. The same run with `Wait` keeps one holder.
#[test]
fn a_restarted_master_that_forgets_sessions_hands_the_lock_over() {
    let crash = r#"Crash(node: "master", at: "21s"), Restart(node: "master", at: "35s"),"#;
    let strategy = r#"ChubbySession(act_in_jeopardy: true, keepalive: Immediate)"#;
    let waits = run_text(&world(strategy, "", crash, "", false, "50s"));
    assert_eq!(waits.holders, ["a"]);
    assert_eq!(waits.overlap.count, 0);
    let forgets = run_text(&world(
        strategy,
        "grantor_restart: Forget",
        crash,
        "",
        false,
        "50s",
    ));
    assert_eq!(forgets.holders, ["a", "b"]);
    assert_eq!(forgets.overlap.count, 1);
    let i = &forgets.overlap.intervals[0];
    assert_eq!((i.start_ns, i.end_ns), (35_104_000_000, 36_002_000_000));
}

/// The lock's generation number is the fencing token: HBASE_ON_CHUBBY with
/// `resource.fencing: true` fences every write rs1 sends on resume (generation 1, after rs2's
/// generation-2 writes were applied) instead of applying it.
#[test]
fn the_generation_number_fences_the_old_holders_writes() {
    let text = HBASE_ON_CHUBBY;
    let mut s = scenario(text);
    let unfenced = run(&s);
    assert!(unfenced.unsafe_writes > 0);
    s.resource.fencing = true;
    s.expect = None;
    let fenced = run(&s);
    assert_eq!(fenced.unsafe_writes, 0);
    assert_eq!(fenced.fenced_writes, unfenced.unsafe_writes);
    assert_eq!(fenced.overlap, unfenced.overlap);
}

/// Chubby's message kinds are what `Drop` and `DelaySpike` filter on. Dropping every KeepAlive
/// from 21 s cuts a and b off without a partition, but not the answers to those already held:
/// a's KeepAlive 3 (sent at 11.002 s, held since 11.003 s) is answered at 22.001 s, held
/// 10.998 s, so a's lease runs to 11.002 + 10.998 + 12 = 34 s and its session to 34.001 s;
/// b's, 100 ms later in each, to 34.1 s and 34.101 s. Every later KeepAlive is dropped, so b is
/// granted at 34.001 s and holds from 34.002 s, 2 ms after a stopped (and until its own local
/// lease ends at 34.1 s). A base-protocol kind is an error that lists Chubby's.
#[test]
fn fault_kinds_are_the_protocols_own() {
    let drop = r#"Drop(at: "21s", duration: "19s", kinds: [KeepAlive]),"#;
    let s = run_text(&world("ChubbySession()", "", drop, "", false, "40s"));
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.min_slack_ns, Some(2_000_000));
    let bad = r#"Drop(at: "21s", duration: "19s", kinds: [Renew]),"#;
    let problems = validate(&scenario(&world(
        "ChubbySession()",
        "",
        bad,
        "",
        false,
        "40s",
    )));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].ends_with(
            "has no message kind \"Renew\" (its kinds: KeepAlive, KeepAliveAck, \
             SessionExpired, Acquire, Grant, Release, Write, WriteAck)"
        ),
        "{problems:?}"
    );
}

/// `leasesim check` lists every problem at once, each with its field, and exits 2.
#[test]
fn check_lists_every_problem_at_once() {
    let dir = workdir("chubby-check");
    let text = r#"Scenario(
        duration: "60s",
        lease: (duration: "12s", renew_every: "4s"),
        strategy: ChubbySession(grace: "-1s", lock_delay: "-60s", holder_margin: "9s",
                                keepalive: Immediate),
        nodes: [
            (name: "m1", role: Grantor), (name: "m2", role: Grantor),
            (name: "r", role: Replica),
        ],
    )"#;
    std::fs::write(dir.join("bad.ron"), text).unwrap();
    let o = leasesim(&["check", "bad.ron"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for want in [
        "nodes: ChubbySession needs exactly one Grantor, the cell's master (found 2)",
        "nodes: ChubbySession needs at least one Contender (a client)",
        "nodes: ChubbySession has no Replica role",
        "strategy.grace: must not be negative (got -1s)",
        "strategy.lock_delay: must not be negative (got -60s)",
        "lease.renew_every: 4s must be shorter than the client's local lease, T - \
         holder_margin (3s)",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
    // A holder margin as long as T leaves no local lease at all.
    let s = scenario(&world(
        r#"ChubbySession(holder_margin: "12s")"#,
        "",
        "",
        "",
        false,
        "10s",
    ));
    let problems = validate(&s);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("strategy.holder_margin: 12s must be shorter")),
        "{problems:?}"
    );
}

/// Held open, a late answer puts the client in jeopardy until it comes, and its local lease
/// counts the hold from the KeepAlive's send time, not from the answer's arrival. The answer to
/// a's KeepAlive 2 (sent at 2 ms, held 10.998 s, answered at 11.001 s) is 2 s late: it arrives
/// at 13.002 s. a's lease from its session's opening ends at 12 s, so a is in jeopardy from 12
/// s to 13.002 s (its KeepAlive of 12 s is lost: a's link to the master is cut one way from
/// 11.5 s), then acts to 0.002 + 10.998 + 12 = 23 s. The master, which extended a's session to
/// 11.001 + 12 = 23.001 s and hears nothing more, expires it then and b holds from 23.002 s:
/// 2 ms apart. The longest gap is the jeopardy, 1.002 s. Counting from the arrival would run
/// a's lease to 25.002 s (an overlap of 2 s); counting from the send without the hold would
/// end it at 12.002 s.
#[test]
fn held_open_a_late_answer_means_jeopardy_until_it_comes() {
    let faults = r#"OneWay(from: "a", to: "master", at: "11.5s", duration: "28.5s"),
        DelaySpike(at: "11s", duration: "10ms", extra: "2s", kinds: [KeepAliveAck]),"#;
    let s = scenario(&world("ChubbySession()", "", faults, "", false, "40s"));
    assert!(validate(&s).is_empty(), "{:?}", validate(&s));
    let s = run(&s);
    assert_eq!(s.holders, ["a", "b"]);
    assert_eq!(s.overlap.count, 0);
    assert_eq!(s.min_slack_ns, Some(2_000_000));
    assert_eq!(s.max_unavailable_ns, 1_002_000_000);
}

/// A master down from 10.5 s to 14 s. Held open, a's KeepAlive 2 was waiting at the master
/// (due at 11.001 s) and is lost with it: a's lease, from the session's opening, ends at 12 s;
/// a's KeepAlive of 12 s finds no master, the one of 16 s is the first the new master hears in
/// that session, answered at once: a acts again from 16.002 s. The gap: [12 s, 16.002 s) =
/// 4.002 s, availability (30 - 0.002 - 4.002) / 30. Answered at once every 4 s, a's lease from
/// its KeepAlive of 8 s runs to 20 s, past the outage: its KeepAlive of 16 s extends it to 28 s
/// and a never stops (the longest gap is the 2 ms before its grant).
#[test]
fn a_short_master_outage_puts_only_a_held_open_client_in_jeopardy() {
    let crash = r#"Crash(node: "master", at: "10.5s"), Restart(node: "master", at: "14s"),"#;
    let held = run_text(&world("ChubbySession()", "", crash, "", false, "30s"));
    assert_eq!(held.holders, ["a"]);
    assert_eq!(held.max_unavailable_ns, 4_002_000_000);
    assert_eq!(held.availability, (30e9 - 0.002e9 - 4.002e9) / 30e9);
    let immediate = "ChubbySession(keepalive: Immediate)";
    let at_once = run_text(&world(immediate, "", crash, "", false, "30s"));
    assert_eq!(at_once.holders, ["a"]);
    assert_eq!(at_once.max_unavailable_ns, 2_000_000);
}

/// The master's KeepAlive settings are checked against T: a hold margin as long as T (the
/// master would never hold a KeepAlive) or of zero, an extension under load shorter than T, and
/// a zero T, each named with its value, and `check` exits 2. A hold margin is not read when
/// KeepAlives are answered at once.
#[test]
fn bad_keepalive_settings_are_refused_with_exit_2() {
    let dir = workdir("chubby-keepalive-check");
    let bad = [
        (
            r#"ChubbySession(hold_margin: "12s", extend_under_load: "5s")"#,
            "12s",
            vec![
                "strategy.hold_margin: 12s must be shorter than the lease (12s), or the master \
                 never holds a KeepAlive",
                "strategy.extend_under_load: 5s is below the lease (12s): a master under load \
                 extends sessions by T or more",
            ],
        ),
        (
            r#"ChubbySession(hold_margin: "0s")"#,
            "12s",
            vec!["strategy.hold_margin: must be positive (got 0s)"],
        ),
        (
            "ChubbySession()",
            "0s",
            vec!["lease.duration: must be positive (got 0s)"],
        ),
    ];
    for (i, (strategy, t, wants)) in bad.iter().enumerate() {
        let text = format!(
            r#"Scenario(duration: "60s", lease: (duration: "{t}", renew_every: "4s"),
                strategy: {strategy},
                nodes: [(name: "m", role: Grantor), (name: "a", role: Contender)])"#
        );
        let file = format!("bad{i}.ron");
        std::fs::write(dir.join(&file), text).unwrap();
        let o = leasesim(&["check", &file], &dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{strategy}: {err}");
        for want in wants {
            assert!(err.contains(want), "missing {want:?} in:\n{err}");
        }
    }
    let s = scenario(&world(
        r#"ChubbySession(hold_margin: "12s", keepalive: Immediate)"#,
        "",
        "",
        "",
        false,
        "10s",
    ));
    assert!(validate(&s).is_empty(), "{:?}", validate(&s));
}

/// Same seed, same run, byte for byte: here under loss, duplication, random delays and random
/// pauses, partitions and crashes, with fencing on.
#[test]
fn runs_are_deterministic() {
    let text = r#"Scenario(
        seed: 9,
        duration: "120s",
        lease: (duration: "3s"),
        strategy: ChubbySession(grace: "5s", lock_delay: "2s", holder_margin: "10ms"),
        nodes: [
            (name: "master", role: Grantor), (name: "a", role: Contender),
            (name: "b", role: Contender), (name: "c", role: Contender),
        ],
        network: (delay: Uniform(min: "1ms", max: "20ms"), loss: 0.05, duplicate: 0.05),
        workload: (reads_per_second: 50.0, writes_per_second: 10.0),
        resource: (fencing: true),
        random_faults: [
            Pauses(per_minute: 4.0, duration: Uniform(min: "100ms", max: "6s"), kind: Gc),
            Partitions(per_hour: 120.0, duration: Uniform(min: "1s", max: "10s")),
            Crashes(per_hour: 60.0, restart_after: Uniform(min: "1s", max: "5s")),
        ],
    )"#;
    let s = scenario(text);
    let first = run(&s);
    assert_eq!(first, run(&s));
    assert!(first.grants >= 2, "the lock moves: {:?}", first.holders);
}

mod properties {
    use crate::common::{run, scenario};
    use proptest::prelude::*;

    /// A Chubby cell: one master and 2 or 3 clients with drifts within +-100 ppm, random
    /// delays, loss and duplication, and random GC pauses, partitions and crashes (the master's
    /// too: it fails over with `Wait`); KeepAlives held open (hold margin T/4) or answered at
    /// once, the master under load (extending by 2T) or not.
    #[derive(Debug, Clone)]
    struct World {
        clients: usize,
        lease_ms: i64,
        held_open: bool,
        under_load: bool,
        grace_ms: i64,
        lock_delay_ms: i64,
        drifts: Vec<i64>,
        loss: f64,
        duplicate: f64,
        seed: u64,
    }

    impl World {
        fn text(&self) -> String {
            let mut nodes = format!(
                "(name: \"master\", role: Grantor, drift_ppm: {}.0),",
                self.drifts[0]
            );
            for i in 0..self.clients {
                nodes += &format!(
                    "(name: \"c{i}\", role: Contender, drift_ppm: {}.0, start: \"{i}00ms\"),",
                    self.drifts[i + 1]
                );
            }
            // The margin covers the drift between any two clocks over the master's hold and
            // one extension E (below 2E): 200 ppm of 2E, rounded up to a microsecond.
            let extension_ms = if self.under_load {
                2 * self.lease_ms
            } else {
                self.lease_ms
            };
            let margin_us = extension_ms * 2 / 5 + 1;
            let keepalive = if self.held_open {
                "HeldOpen"
            } else {
                "Immediate"
            };
            let under_load = if self.under_load {
                format!(r#", extend_under_load: "{extension_ms}ms""#)
            } else {
                String::new()
            };
            format!(
                r#"Scenario(
                    seed: {seed},
                    duration: "60s",
                    lease: (duration: "{t}ms", retry_every: "{retry}ms"),
                    strategy: ChubbySession(grace: "{grace}ms", lock_delay: "{delay}ms",
                                            holder_margin: "{margin_us}us",
                                            keepalive: {keepalive},
                                            hold_margin: "{hold}ms"{under_load}),
                    nodes: [{nodes}],
                    network: (delay: Uniform(min: "100us", max: "5ms"), loss: {loss},
                              duplicate: {dup}),
                    workload: (reads_per_second: 20.0, writes_per_second: 10.0),
                    random_faults: [
                        Pauses(per_minute: 6.0, duration: Uniform(min: "10ms", max: "3s"),
                               kind: Gc),
                        Partitions(per_hour: 120.0, duration: Uniform(min: "100ms", max: "5s")),
                        Crashes(per_hour: 60.0, restart_after: Uniform(min: "100ms", max: "3s")),
                    ],
                )"#,
                seed = self.seed,
                t = self.lease_ms,
                retry = self.lease_ms / 5,
                hold = self.lease_ms / 4,
                grace = self.grace_ms,
                delay = self.lock_delay_ms,
                loss = self.loss,
                dup = self.duplicate,
            )
        }
    }

    fn world() -> impl Strategy<Value = World> {
        (2usize..=3).prop_flat_map(|clients| {
            (
                1_000i64..=5_000,
                0i64..=10_000,
                0i64..=3_000,
                proptest::collection::vec(-100i64..=100, clients + 1),
                0.0f64..0.2,
                0.0f64..0.2,
                any::<u64>(),
                any::<(bool, bool)>(),
            )
                .prop_map(
                    move |(
                        lease_ms,
                        grace_ms,
                        lock_delay_ms,
                        drifts,
                        loss,
                        duplicate,
                        seed,
                        (held_open, under_load),
                    )| {
                        World {
                            clients,
                            lease_ms,
                            held_open,
                            under_load,
                            grace_ms,
                            lock_delay_ms,
                            drifts,
                            loss,
                            duplicate,
                            seed,
                        }
                    },
                )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Chubby is safe when its clients do not act in jeopardy and their margin covers the
        /// drift: a client acts until (KeepAlive send) + held + E - margin on its clock, and
        /// the master keeps the session open until (its answer, sent held after the
        /// KeepAlive's arrival, or later) + E on its own, or, after a fail-over, until
        /// (restart) + E. Whatever the grace, the lock-delay, the
        /// pauses, partitions, crashes, loss and duplication, no two clients ever act at once,
        /// and a run is the same twice.
        #[test]
        fn chubby_without_acting_in_jeopardy_never_overlaps(w in world()) {
            let s = scenario(&w.text());
            let first = run(&s);
            prop_assert_eq!(&first, &run(&s));
            prop_assert_eq!(first.overlap.count, 0, "{:?}", first.overlap);
        }
    }
}
