//! `EtcdLease`: etcd's lessor, the lock on it and the members' Raft. The bundled `etcd-lease-*`
//! scenarios pin the stories with their fixes missing; these tests turn each fix back on
//! (derived from the same arithmetic), pin checkpoints, validation, and what holds under random
//! faults.

use crate::common::*;
use leasesim::msg::Token;
use leasesim::scenario::library;
use leasesim::scenario::validate::validate_with;
use leasesim::trace::{Observer, TraceEvent, TraceKind};
use leasesim::Summary;
use proptest::prelude::*;

/// Bundled scenario `name` with `from` (which must be in it once) replaced by `to`.
fn variant(name: &str, from: &str, to: &str) -> String {
    let text = library::text(name).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{name}: {from:?}");
    text.replacen(from, to, 1)
}

/// Bundled scenario `name` changed so, run with its `expect` block dropped.
fn run_variant(name: &str, from: &str, to: &str) -> Summary {
    let text = variant(name, from, to);
    let (head, _) = text.split_once("    expect: (").unwrap();
    run_text(&format!("{head})"))
}

/// The lessor's renewals, in order: (true time, until), in ns.
#[derive(Default)]
struct Renewals(Vec<(i64, i64)>);

impl Observer for Renewals {
    fn event(&mut self, e: &TraceEvent) {
        if let TraceKind::Renewed { until, .. } = e.kind {
            self.0.push((e.t.ns(), until.ns()));
        }
    }
}

/// The grants, in order: (true time, token, to).
#[derive(Default)]
struct Grants(Vec<(i64, Token, usize)>);

impl Observer for Grants {
    fn event(&mut self, e: &TraceEvent) {
        if let TraceKind::Grant { token, to, .. } = e.kind {
            self.0.push((e.t.ns(), token, to));
        }
    }
}

fn observed<O: Observer + Default + 'static>(text: &str) -> (Summary, O) {
    let s = scenario(text);
    let mut o = O::default();
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let out = leasesim::run_with("etcd", &s, strategy, Some(&mut o)).unwrap();
    (out.summary, o)
}

const S: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;

#[test]
fn a_stuck_leader_that_confirms_its_leadership_revokes_nothing() {
    // etcd-lease-stuck-leader-revokes-all with PR 16822's check: at 15 s the stuck member
    // follows m1 first, so it drops both revokes. Nothing is revoked and a keeps the lock.
    // Renewals: a's 7 at m0, m1's promotion, and a's at m1 every 1.5 s from 11.101 s to the
    // end: 11.101, 12.601, 14.101, 15.601, 17.101, 18.601 s (6): 14.
    let s = run_variant(
        "etcd-lease-stuck-leader-revokes-all",
        "strategy: EtcdLease(ensure_leadership: false)",
        "strategy: EtcdLease(ensure_leadership: true)",
    );
    assert_eq!(s.overlap.count, 0);
    assert_eq!((s.grants, s.holders.clone()), (1, vec!["a".to_string()]));
    assert_eq!(s.renewals, 14);
}

#[test]
fn a_waiter_that_checks_its_own_key_or_watches_its_session_starts_over() {
    // etcd-lease-lock-on-expired-lease with the fix: told its turn at 20.006 s, b gets its own
    // key (6 ms through m2 and the leader), finds it gone at 20.012 s and starts over with a new
    // session, its key behind c's: c alone holds. The same when b checks
    // nothing but watches its session, which ended at its look of 6.2 s (deadline 0.704 + 5 =
    // 5.704 s): its turn comes to a session that is over. Both: two grants, a then c.
    let name = "etcd-lease-lock-on-expired-lease";
    let from = "strategy: EtcdLease(check_own_key: false, app_watches_session: false)";
    for to in [
        "strategy: EtcdLease(check_own_key: true, app_watches_session: false)",
        "strategy: EtcdLease(check_own_key: false, app_watches_session: true)",
    ] {
        let s = run_variant(name, from, to);
        assert_eq!(s.overlap.count, 0, "{to}");
        assert_eq!(s.holders, ["a", "c"], "{to}");
    }
}

#[test]
fn a_lessor_on_the_monotonic_clock_ignores_the_step() {
    // etcd-lease-wall-clock-step with the lessor on its monotonic clock: the 1 h step moves no
    // expiry, nothing is revoked, a keeps the lock.
    let s = run_variant(
        "etcd-lease-wall-clock-step",
        "strategy: EtcdLease(expiry_clock: Wall)",
        "strategy: EtcdLease(expiry_clock: Monotonic)",
    );
    assert_eq!(s.overlap.count, 0);
    assert_eq!(s.holders, ["a"]);
}

#[test]
fn a_checkpoint_shrinks_what_the_next_leader_extends() {
    // etcd-lease-leader-changes-reset-ttl. Without checkpoints every promotion gives a's lease
    // the election timeout plus its whole TTL: 6 s from the promotion, each of the ten.
    let name = "etcd-lease-leader-changes-reset-ttl";
    let plain = library::text(name).unwrap();
    let (_, r) = observed::<Renewals>(plain);
    let promotions: Vec<_> = r.0.iter().filter(|&&(t, _)| t > 5 * S).collect();
    assert_eq!(promotions.len(), 10);
    assert!(promotions.iter().all(|&&(t, until)| until - t == 6 * S));
    // With a 2 s interval: m1, promoted at 7.404 s (1 + 5 s: nothing checkpointed yet),
    // schedules a's checkpoint at 9.404 s; its lessor's look of 9.5 s finds ceil(13.404 - 9.5)
    // = 4 s left, under the TTL, and proposes it (committed at 9.502 s, before the step down at
    // 9.75 s). The next leader, at 11.004 s, gives the lease 1 + 4 = 5 s.
    let text = variant(
        name,
        "EtcdLease()",
        r#"EtcdLease(checkpoint_interval: "2s")"#,
    );
    let (head, _) = text.split_once("    expect: (").unwrap();
    let (_, r) = observed::<Renewals>(&format!("{head})"));
    let promotions: Vec<_> = r.0.iter().filter(|&&(t, _)| t > 5 * S).collect();
    assert_eq!(*promotions[0], (7_404 * MS, 13_404 * MS));
    assert_eq!(*promotions[1], (11_004 * MS, 16_004 * MS));
}

/// A three-member cluster with two clients, `strategy`'s fields, and `extra` nodes or fields.
fn cluster(strategy: &str, lease: &str, extra: &str) -> String {
    format!(
        r#"Scenario(
            duration: "10s",
            lease: (duration: "{lease}"),
            strategy: EtcdLease({strategy}),
            nodes: [
                (name: "m0", role: Replica),
                (name: "m1", role: Replica),
                (name: "m2", role: Replica),
                (name: "a", role: Contender),
                {extra}
            ],
        )"#
    )
}

fn problems(text: &str) -> Vec<String> {
    let s = scenario(text);
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    validate_with(&s, &*strategy)
        .into_iter()
        .map(|p| p.to_string())
        .collect()
}

#[test]
fn validation_says_what_etcd_would_not_run() {
    assert!(problems(&cluster("", "5s", "")).is_empty());
    let p = problems(&cluster("", "1500ms", r#"(name: "g", role: Grantor)"#));
    let joined = p.join("\n");
    assert!(
        joined.contains("lease.duration: an etcd lease's TTL is whole seconds (got 1.5s)"),
        "{joined}"
    );
    assert!(
        joined.contains("nodes: EtcdLease has no Grantor role"),
        "{joined}"
    );
    let p = problems(&cluster(r#"election_timeout: "250ms""#, "5s", "")).join("\n");
    assert!(
        p.contains("strategy.election_timeout: must be a whole number (2 or more) of heartbeats"),
        "{p}"
    );
    let fenced =
        cluster("", "5s", "").replace("strategy:", "resource: (fencing: true),\n strategy:");
    assert!(problems(&fenced)
        .join("\n")
        .contains("resource.fencing: EtcdLease writes are Puts"));
}

#[test]
fn every_member_and_client_has_a_renewal_loop_to_stall() {
    // The lessor's loop on a member, the session's keep-alive loop on a client: a renewal stall
    // of either is accepted.
    let stall = |node: &str| {
        cluster("", "5s", "").replace(
            "        )",
            &format!(
                r#"faults: [ThreadStall(node: "{node}", thread: Renewal, at: "1s", duration: "1s")],
        )"#
            ),
        )
    };
    assert!(
        problems(&stall("m0")).is_empty(),
        "{:?}",
        problems(&stall("m0"))
    );
    assert!(problems(&stall("a")).is_empty());
}

/// Random crashes, partitions, pauses, clock steps, loss and duplicates over a three-member
/// cluster and three clients.
fn chaos(seed: u64) -> String {
    format!(
        r#"Scenario(
            seed: {seed},
            duration: "60s",
            lease: (duration: "3s", retry_every: "500ms"),
            strategy: EtcdLease(),
            clocks: (drift_spread_ppm: 100.0, placement: Random),
            nodes: [
                (name: "m0", role: Replica),
                (name: "m1", role: Replica),
                (name: "m2", role: Replica),
                (name: "a", role: Contender),
                (name: "b", role: Contender, start: "50ms"),
                (name: "c", role: Contender, start: "100ms"),
            ],
            network: (delay: Uniform(min: "500us", max: "20ms"), loss: 0.02, duplicate: 0.02),
            workload: (reads_per_second: 20.0, writes_per_second: 5.0),
            random_faults: [
                Pauses(per_minute: 3.0, duration: Exponential(mean: "1s"), kind: Gc),
                Partitions(per_hour: 120.0, duration: Uniform(min: "500ms", max: "5s")),
                Crashes(per_hour: 120.0, restart_after: Uniform(min: "100ms", max: "5s")),
                ClockSteps(per_hour: 60.0, by: Uniform(min: "-2s", max: "2s")),
            ],
        )"#
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever the faults, the lock's tokens are issued in increasing order, each to a client,
    /// and once each (a member that applies an owner's key later, or again after a restart,
    /// issues nothing): the run's grants are exactly the distinct tokens issued. Debug builds
    /// also run the engine's audit of every fact the members and clients report.
    #[test]
    fn the_lock_is_issued_in_token_order_to_clients_once_each(seed in 0u64..1_000_000) {
        let (s, g) = observed::<Grants>(&chaos(seed));
        let tokens: Vec<Token> = g.0.iter().map(|&(_, t, _)| t).collect();
        prop_assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
        prop_assert!(g.0.iter().all(|&(_, _, to)| to >= 3), "{:?}", g.0);
        prop_assert_eq!(s.grants, tokens.len() as u64);
    }
}

#[test]
fn a_holder_takes_its_own_writes_into_its_copy_only_when_their_commits_are_answered() {
    // One client, its member m1 frozen 450 ms from 3 s (found by explore): the Puts a sends in
    // the freeze wait in m1's queue and commit in order after it (at 3.453 and 3.455 s). Were a
    // to read its own latest write before it took effect, that write would take its place in
    // the history ahead of its earlier writes still queued, and their commits after it would
    // make a's later reads of it stale: 6 of them. A copy that takes a write from the answer to
    // its commit reads nothing out of order.
    let text = r#"Scenario(
        seed: 4,
        duration: "4s",
        lease: (duration: "4s", initial_leader: "m0"),
        strategy: EtcdLease(),
        nodes: [
            (name: "m0", role: Replica),
            (name: "m1", role: Replica),
            (name: "m2", role: Replica),
            (name: "a", role: Contender, start: "100ms"),
        ],
        workload: (reads_per_second: 50.0, writes_per_second: 5.0),
        faults: [Pause(node: "m1", at: "3s", duration: "450ms", kind: VmFreeze)],
    )"#;
    let s = run_text(text);
    assert_eq!(
        (s.stale_reads, s.zombie_actions, s.unsafe_writes),
        (0, 0, 0)
    );
    assert_eq!(s.holders, ["a"]);
}
