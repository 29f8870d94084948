//! Disks: `nodes[i].disk` and `DiskStall`. The bundled `redlock-everysec-disk-stall-loses-key`
//! and `etcd-lease-disk-stall-revokes-all` pin the stories; these tests pin their
//! counterfactuals, what a stalled disk stops in a Raft
//! group (only the loop that waits on it), and what validation refuses. The engine's own tests
//! (`engine::disk_tests`) pin the instants.

use crate::common::*;
use leasesim::scenario::validate::validate_with;
use leasesim::trace::{Observer, TraceEvent, TraceKind};

/// `redlock-everysec-disk-stall-loses-key` with its strategy's persistence `persistence` and
/// without its disk stall unless `stall`.
fn everysec_story(persistence: &str, stall: bool) -> String {
    let text = leasesim::scenario::library::text("redlock-everysec-disk-stall-loses-key").unwrap();
    let text = text.replace(
        "strategy: Redlock(persistence: EverySec),",
        &format!("strategy: Redlock(persistence: {persistence}),"),
    );
    if stall {
        return text;
    }
    let fault = r#"        DiskStall(node: "m3", at: "0.5s", duration: "3s"),
"#;
    assert!(text.contains(fault));
    text.replace(fault, "")
}

#[test]
fn the_key_a_stalled_disk_never_made_durable_is_lost_and_a_working_disk_keeps_it() {
    // The story: the fsync due at 1 s never returns before the crash at 2.5 s: 7.048 s of
    // overlap (derived in the scenario).
    let lost = run_text(&everysec_story("EverySec", true));
    assert_eq!(lost.overlap.total_ns, 7_048_000_000);
    assert_eq!(lost.holders, ["a", "b"]);
    // A working disk: the fsync at 1 s is durable at 1.002 s, the key comes back at 2.6 s,
    // and b gets only m4 and m5; a extends with m1-m3 at 3.05, 6.05 and 9.05 s, alone.
    let kept = run_text(&everysec_story("EverySec", false));
    assert_eq!(kept.overlap.count, 0);
    assert_eq!(kept.holders, ["a"]);
    assert_eq!(kept.renewals, 3);
    // `Always` writes the key before m3 answers a (durable at 0.003 s, before the stall at
    // 0.5 s): the stall and the crash change nothing.
    let always = run_text(&everysec_story("Always", true));
    assert_eq!(always.overlap.count, 0);
    assert_eq!(always.holders, ["a"]);
    assert_eq!(always.renewals, 3);
}

/// Three replicas under RaftLeaderLease (etcd's defaults), r0 first leader, every disk's fsync
/// 1 ms, r0's disk stalled over [3 s, 6 s), with `workload`.
fn raft_group(workload: &str) -> String {
    format!(
        r#"Scenario(
            seed: 1,
            duration: "10s",
            lease: (duration: "1s", initial_leader: "r0"),
            strategy: RaftLeaderLease(system: Etcd),
            nodes: [
                (name: "r0", role: Replica, disk: (fsync: Fixed("1ms"))),
                (name: "r1", role: Replica, disk: (fsync: Fixed("1ms"))),
                (name: "r2", role: Replica, disk: (fsync: Fixed("1ms"))),
            ],
            network: (delay: Fixed("1ms")),
            workload: ({workload}),
            faults: [DiskStall(node: "r0", at: "3s", duration: "3s")],
        )"#
    )
}

#[test]
fn a_stalled_disk_stops_a_leader_only_once_it_must_write() {
    // With no client writes the leader writes nothing after its election (heartbeats are not
    // logged): the stall changes nothing, r0 leads throughout.
    let idle = run_text(&raft_group(""));
    assert_eq!(idle.grants, 1);
    assert_eq!(idle.holders, ["r0"]);
    // With writes, the first one after 3 s makes r0's Raft loop wait on its disk: no more
    // heartbeats, and another replica is elected, after r0's lease (no overlap).
    let busy = run_text(&raft_group("writes_per_second: 5.0"));
    assert_eq!(busy.grants, 2);
    assert_eq!(busy.holders[0], "r0");
    assert_ne!(busy.holders[1], "r0");
    assert_eq!(busy.overlap.count, 0);
}

#[test]
fn a_disk_the_protocol_does_not_write_and_a_stall_of_no_disk_are_refused() {
    let check = |strategy: &str, nodes: &str, fault: &str| {
        let s = scenario(&format!(
            r#"Scenario(
                duration: "10s",
                lease: (duration: "10s"),
                strategy: {strategy},
                nodes: [{nodes}],
                faults: [{fault}],
            )"#
        ));
        let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
        validate_with(&s, &*strategy)
    };
    let disk = r#"disk: (fsync: Fixed("1ms"))"#;
    let masters = format!(r#"(name: "m", role: Grantor, {disk}), (name: "a", role: Contender)"#);
    // A master without persistence writes nothing.
    assert_eq!(
        check("Redlock", &masters, ""),
        ["nodes[0].disk: Redlock writes nothing to disk on a Grantor"]
    );
    // A client never writes.
    let client = format!(r#"(name: "m", role: Grantor), (name: "a", role: Contender, {disk})"#);
    assert_eq!(
        check("Redlock(persistence: Always)", &client, ""),
        ["nodes[1].disk: Redlock writes nothing to disk on a Contender"]
    );
    // A stall needs a disk, and a positive duration; an fsync cannot take negative time.
    let plain = r#"(name: "m", role: Grantor), (name: "a", role: Contender)"#;
    let stall = r#"DiskStall(node: "m", at: "1s", duration: "0s")"#;
    assert_eq!(
        check("Redlock(persistence: Always)", plain, stall),
        [
            "faults[0].duration: must be positive (got 0s)",
            "faults[0]: node \"m\" has no disk (give it one: `disk: (fsync: Fixed(\"1ms\"))`)",
        ]
    );
    let negative = r#"(name: "m", role: Grantor, disk: (fsync: Uniform(min: "-1ms", max: "1ms"))),
        (name: "a", role: Contender)"#;
    assert_eq!(
        check("Redlock(persistence: Always)", negative, ""),
        ["nodes[0].disk.fsync: durations cannot be negative"]
    );
}

#[test]
fn an_envelope_of_disk_stalls_needs_a_disk() {
    let text = everysec_story("EverySec", false).replace(
        r#"(name: "m3", role: Grantor, disk: (fsync: Fixed("2ms"))),"#,
        r#"(name: "m3", role: Grantor),"#,
    );
    let text = text.replace(
        "    expect: (",
        "    nemesis: (disk_stalls: (max: \"5s\", per_minute: 2.0)),\n    expect: (",
    );
    let s = scenario(&text);
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let problems = validate_with(&s, &*strategy);
    assert!(
        problems.contains(
            &"nemesis.disk_stalls: no node of the scenario has a disk (give one a `disk: \
              (fsync: ...)`)"
                .to_string()
        ),
        "{problems:?}"
    );
}

/// `explore` finds the story's needle from an envelope of disk stalls: the scenario without
/// its stall, m3 still crashing at 2.5 s. The key is lost only if a stall stops m3's fsync of
/// 1 s (from 1 s to 1.002 s) and lasts until the crash (which the shrinker may move), so the
/// counterexample's stall begins by 1.002 s and ends no earlier than its crash; its replay
/// meets the expectations it was written with.
#[test]
fn explore_finds_a_disk_stall_that_loses_the_key() {
    let story = everysec_story("EverySec", false);
    let (head, _) = story.split_once("    expect: (").unwrap();
    let text = format!("{head}    nemesis: (disk_stalls: (max: \"5s\", per_minute: 2.0)),\n)\n");
    let dir = workdir("explore-disk-stalls");
    std::fs::write(dir.join("needle.ron"), text).unwrap();
    let out = leasesim(
        &["explore", "needle.ron", "--runs", "2000", "--out", "out"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1), "a violation was found");
    let report = dir.join("out").join("needle");
    let c = std::fs::read_to_string(report.join("counterexample.ron")).unwrap();
    let c = scenario(&c);
    let crash = c
        .faults
        .iter()
        .find_map(|f| match f {
            leasesim::scenario::Fault::Crash { at, .. } => Some(at.ns()),
            _ => None,
        })
        .expect("m3 still crashes");
    let stalls: Vec<(i64, i64)> = c
        .faults
        .iter()
        .filter_map(|f| match f {
            leasesim::scenario::Fault::DiskStall { node, at, duration } => {
                assert_eq!(node, "m3");
                Some((at.ns(), at.ns() + duration.ns()))
            }
            _ => None,
        })
        .collect();
    assert!(
        stalls
            .iter()
            .any(|&(a, b)| a <= 1_002_000_000 && b >= crash),
        "{stalls:?}, crash at {crash}"
    );
    let replay = leasesim(
        &["run", "out/needle/counterexample.ron", "--out", "replayed"],
        &dir,
    );
    assert_eq!(
        replay.status.code(),
        Some(0),
        "the counterexample's expectations hold"
    );
}

/// The grants (true time, token) and the fsyncs finished, of a run.
#[derive(Default)]
struct Writes {
    grants: Vec<(i64, u64)>,
    fsyncs: u32,
}

impl Observer for Writes {
    fn event(&mut self, e: &TraceEvent) {
        match e.kind {
            TraceKind::Grant { token, .. } => self.grants.push((e.t.ns(), token)),
            TraceKind::Durable { .. } => self.fsyncs += 1,
            _ => {}
        }
    }
}

/// Three replicas under RaftLeaderLease (etcd's defaults, pre-vote on), r0 campaigning at its
/// start, 1 ms messages, for 1 s; every replica's disk as `disk` says.
fn election(disk: &str) -> Writes {
    let s = scenario(&format!(
        r#"Scenario(
            seed: 1,
            duration: "1s",
            lease: (duration: "1s", initial_leader: "r0"),
            strategy: RaftLeaderLease(system: Etcd),
            nodes: [
                (name: "r0", role: Replica{disk}),
                (name: "r1", role: Replica{disk}),
                (name: "r2", role: Replica{disk}),
            ],
            network: (delay: Fixed("1ms")),
        )"#
    ));
    let mut w = Writes::default();
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    leasesim::run_with("election", &s, strategy, Some(&mut w)).unwrap();
    w
}

#[test]
fn a_raft_vote_and_a_new_term_are_written_before_they_are_sent() {
    // Without a disk: r0's pre-vote at 0 is granted at 1 ms (answers at 2 ms); r0 campaigns at
    // 2 ms, the votes reach it at 4 ms: it leads, and grants itself term 1, at 4 ms.
    let plain = election("");
    assert_eq!(plain.grants, [(4_000_000, 1)]);
    assert_eq!(plain.fsyncs, 0);
    // fsync 1 ms: a pre-vote writes nothing, but r0's new term and its vote for itself are
    // written before its RequestVotes leave (2 ms to 3 ms, arriving at 4 ms), and each voter's
    // term and vote before its answer (4 ms to 5 ms, arriving at 6 ms): r0 leads at 6 ms. The
    // fsyncs of the run: those three, then the new leader's empty entry, at r0 and at both
    // followers: 6 (heartbeats write nothing).
    let disked = election(r#", disk: (fsync: Fixed("1ms"))"#);
    assert_eq!(disked.grants, [(6_000_000, 1)]);
    assert_eq!(disked.fsyncs, 6);
}

/// `etcd-lease-disk-stall-revokes-all` with `from` replaced by `to`.
fn etcd_story(from: &str, to: &str) -> String {
    let text = leasesim::scenario::library::text("etcd-lease-disk-stall-revokes-all").unwrap();
    assert!(text.contains(from), "{from}");
    text.replace(from, to)
}

#[test]
fn a_leader_stalled_on_its_disk_revokes_only_what_expired_and_only_without_the_check() {
    // The story: 1.078 s of overlap (derived in the scenario).
    let text = leasesim::scenario::library::text("etcd-lease-disk-stall-revokes-all").unwrap();
    let story = run_text(text);
    assert_eq!(story.overlap.total_ns, 1_078_000_000);
    // PR 16822's check: the stuck member, a follower by the time its loop takes the revokes,
    // drops them; nothing is revoked and a keeps the lock.
    let checked = run_text(&etcd_story(
        "EtcdLease(ensure_leadership: false)",
        "EtcdLease(ensure_leadership: true)",
    ));
    assert_eq!(checked.overlap.count, 0);
    assert_eq!(checked.holders, ["a"]);
    // A 3 s stall ends at 13 s, before the stuck lessor's expiries (13.602 and 13.702 s): its
    // loop follows m2 and, no longer leader, its lessor is demoted before any lease expires.
    let short = run_text(&etcd_story(r#"duration: "6s")"#, r#"duration: "3s")"#));
    assert_eq!(short.overlap.count, 0);
    assert_eq!(short.holders, ["a"]);
}
