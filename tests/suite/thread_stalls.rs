//! `ThreadStall`: one loop of a live process stops while the other runs. The bundled
//! `redisson-watchdog-starved` and `k8s-renew-goroutine-starved` pin the stories; these tests
//! pin what makes a stall differ from a pause, and what validation refuses.

use crate::common::*;
use leasesim::scenario::validate::validate_with;
use leasesim::scenario::Thread;

/// `redisson-watchdog-starved` with its fault replaced by `fault`.
fn watchdog(fault: &str) -> String {
    let text = leasesim::scenario::library::text("redisson-watchdog-starved").unwrap();
    let (head, _) = text.split_once("    faults: [").unwrap();
    format!("{head}    faults: [{fault}],\n)")
}

#[test]
fn a_starved_renewal_loop_lets_the_worker_act_through_the_whole_overlap() {
    // The story's stall over [25 s, 65 s): overlap [50.004 s, 65 s), every action of pod-a's in
    // it a zombie's (363, derived in the scenario).
    let stalled = run_text(&watchdog(
        r#"ThreadStall(node: "pod-a", thread: Renewal, at: "25s", duration: "40s")"#,
    ));
    // The same 40 s as a process pause: the same overlap (the renewal waits as long), but the
    // worker waits too; only the backlog it serves at 65 s, before the renewal clears the
    // bool, is a zombie's: far fewer actions.
    let paused = run_text(&watchdog(
        r#"Pause(node: "pod-a", at: "25s", duration: "40s")"#,
    ));
    for s in [&stalled, &paused] {
        assert_eq!(s.overlap.count, 1);
        assert_eq!(s.overlap.max_ns, 14_996_000_000);
    }
    assert_eq!(stalled.zombie_actions, 363);
    assert_eq!(stalled.pauses, 0);
    assert_eq!(stalled.thread_stalls, 1);
    assert_eq!(paused.thread_stalls, 0);
    assert!(
        paused.zombie_actions * 2 < stalled.zombie_actions,
        "paused {} against stalled {}",
        paused.zombie_actions,
        stalled.zombie_actions
    );
    // A paused pod serves nothing for 40 s; a stalled watchdog costs the clients nothing until
    // the lock moves.
    assert!(paused.max_unavailable_ns >= 25_000_000_000);
    assert!(stalled.max_unavailable_ns < 1_000_000_000);
}

#[test]
fn a_stalled_worker_leaves_the_lease_renewed_and_safe() {
    // The worker stalled 40 s: requests wait for it, but the watchdog renews at 30.002, 40.002,
    // ... s, so the key never lapses: one grant, pod-a's renewals every 10 s from 10.002 s to
    // 70.002 s (seven), none of pod-b's.
    let s = run_text(&watchdog(
        r#"ThreadStall(node: "pod-a", thread: Worker, at: "25s", duration: "40s")"#,
    ));
    assert_eq!(s.overlap.count, 0);
    assert_eq!(s.grants, 1);
    assert_eq!(s.renewals, 7);
    assert_eq!(s.zombie_actions, 0);
}

#[test]
fn a_stall_of_a_loop_the_node_does_not_have_is_refused() {
    let base = |strategy: &str, nodes: &str, fault: &str| {
        scenario(&format!(
            r#"Scenario(
                duration: "10s",
                lease: (duration: "1s"),
                strategy: {strategy},
                nodes: [{nodes}],
                faults: [{fault}],
            )"#
        ))
    };
    let check = |s: &leasesim::Scenario| {
        let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
        validate_with(s, &*strategy)
    };
    let lock = r#"(name: "lock", role: Grantor), (name: "a", role: Contender)"#;
    // A grantor serves, it renews nothing.
    let s = base(
        r#"TwoSided(holder_margin: "10ms")"#,
        lock,
        r#"ThreadStall(node: "lock", thread: Renewal, at: "1s", duration: "1s")"#,
    );
    let want = "faults[0].thread: under TwoSided(holder_margin: \"10ms\"), node \"lock\" (a \
                Grantor) has no renewal loop apart from its work; stall its Worker loop, or the \
                renewal loop of a Contender (the acquire and renew loop)";
    assert_eq!(check(&s), [want]);
    // Its worker may stall; so may the contender's renewal loop.
    for fault in [
        r#"ThreadStall(node: "lock", thread: Worker, at: "1s", duration: "1s")"#,
        r#"ThreadStall(node: "a", thread: Renewal, at: "1s", duration: "1s")"#,
    ] {
        let s = base(r#"TwoSided(holder_margin: "10ms")"#, lock, fault);
        assert_eq!(check(&s), Vec::<String>::new(), "{fault}");
    }
    // A Raft replica's heartbeats are its one loop's work: no role has a renewal loop apart.
    let s = base(
        "RaftLeaderLease(system: Etcd)",
        r#"(name: "r1", role: Replica), (name: "r2", role: Replica), (name: "r3", role: Replica)"#,
        r#"ThreadStall(node: "r1", thread: Renewal, at: "1s", duration: "1s")"#,
    );
    let problems = check(&s);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].ends_with("or the renewal loop of no node: no role has one"),
        "{problems:#?}"
    );
    // A stall lasts.
    let s = base(
        r#"TwoSided(holder_margin: "10ms")"#,
        lock,
        r#"ThreadStall(node: "a", thread: Worker, at: "1s", duration: "0s")"#,
    );
    let problems = check(&s);
    assert!(
        problems.iter().any(|p| p.starts_with("faults[0].duration")),
        "{problems:#?}"
    );
}

/// `chubby-jeopardy-safe` with its partition (a cut off from the master from 21 s) replaced by
/// a 60 s stall of a's session loop from 21 s: the KeepAlive due then waits, as it could not
/// get through before, and the answer to the one in flight is held, as the cut lost it. The
/// client checks its local lease, so the story's figures hold (derived there): no overlap, b
/// holds 11.002 s after a stopped. With `act_in_jeopardy`, a acts through the grace period
/// instead, as in `chubby-act-in-jeopardy`: an overlap.
#[test]
fn a_stalled_chubby_session_loop_costs_a_checking_client_availability_only() {
    let text = leasesim::scenario::library::text("chubby-jeopardy-safe").unwrap();
    let (head, _) = text.split_once("    faults: [").unwrap();
    let stall = r#"ThreadStall(node: "a", thread: Renewal, at: "21s", duration: "60s")"#;
    let safe = run_text(&format!("{head}    faults: [{stall}],\n)"));
    assert_eq!(safe.overlap.count, 0);
    assert_eq!(safe.min_slack_ns, Some(11_002_000_000));
    assert_eq!(safe.max_unavailable_ns, 11_002_000_000);
    let acting = head.replace("act_in_jeopardy: false", "act_in_jeopardy: true");
    let acting = run_text(&format!("{acting}    faults: [{stall}],\n)"));
    assert_eq!(acting.overlap.count, 1);
    assert!(acting.zombie_actions > 0);
}

/// The timeline (what the chart draws) keeps the stall as a span of its loop, the trace as a
/// begin and an end: the story's [25 s, 65 s) of pod-a's renewal loop.
#[test]
fn a_stall_reaches_the_timeline_as_a_span_of_its_loop() {
    let text = leasesim::scenario::library::text("redisson-watchdog-starved").unwrap();
    let (_, timeline) = leasesim::run_recorded("watchdog", &scenario(text)).unwrap();
    let spans: Vec<_> = timeline
        .thread_stalls
        .iter()
        .map(|s| (s.span.node, s.span.start.ns(), s.span.end.ns(), s.thread))
        .collect();
    let pod_a = 1;
    let want = (pod_a, 25_000_000_000, 65_000_000_000, Thread::Renewal);
    assert_eq!(spans, [want]);
    assert!(timeline.pauses.is_empty());
}

/// `compare` on the starved watchdog: whether the worker checks the lease is the choice. The
/// cached bool overlaps for the story's 14.996 s; TwoSided (its 300 ms margin, 1% of T) is
/// safe: pod-a's worker stops at its last renewal's send (20.002 s) + T (30 s) - 300 ms =
/// 49.702 s on its own clock (perfect here), pod-b holds from 50.004 s, so the slack is
/// 302 ms, the longest the lock serves nobody; with the 2 ms before pod-a's first grant
/// arrives, 304 ms of the 80 s: availability 1 - 0.304 / 80 = 0.9962.
#[test]
fn compare_shows_a_checked_lease_surviving_the_starved_watchdog() {
    let dir = workdir("compare-watchdog");
    let o = leasesim(
        &[
            "compare",
            "redisson-watchdog-starved",
            "--json",
            "--out",
            "out",
        ],
        &dir,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["strategy"].as_str().unwrap().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row"))
    };
    let cached = row("CachedBool");
    assert_eq!(cached["overlap"]["max_ns"], 14_996_000_000_i64);
    assert_eq!(cached["thread_stalls"], 1);
    let two_sided = row("TwoSided(holder_margin: \"300ms\")");
    assert_eq!(two_sided["verdict"], "SAFE");
    assert_eq!(two_sided["min_slack_ns"], 302_000_000);
    assert_eq!(two_sided["max_unavailable_ns"], 302_000_000);
    assert_eq!(two_sided["availability"], 0.9962);
}

/// A stall placed at a protocol moment: 4.998 s after redis's second renewal of pod-a's key
/// (pod-a sends it at 20.002 s, redis takes it at 20.003 s), so at 25.001 s, 1 ms after the
/// story's: the overlap runs from 50.004 s to the stall's end at 65.001 s, 14.997 s.
#[test]
fn a_stall_placed_at_a_moment_starts_there() {
    let at = r#"After(moment: Renewal, node: "redis", nth: 2, delay: "4998ms")"#;
    let s = run_text(&watchdog(&format!(
        r#"ThreadStall(node: "pod-a", thread: Renewal, at: {at}, duration: "40s")"#
    )));
    assert_eq!(s.overlap.max_ns, 14_997_000_000);
    assert_eq!(s.overlap.intervals[0].start_ns, 50_004_000_000);
    assert_eq!(s.faults_never_placed, 0);
}
