//! `lease.initial_leader`: the named replica leads first, adversarial drift placement slows it,
//! and a run (or a file) whose slowed replica may never lead says so.

use leasesim::outcome::slowed_replica_never_led;
use leasesim::scenario::validate::{validate, validate_in, warnings};
use leasesim::strategy::{base::BaseProtocol, Registry, Rules, Settings};
use leasesim::time::LocalDur;

use crate::common::{run, scenario};

/// Three replicas at rho = 10 % placed adversarially, 1 ms messages, no faults; election
/// timeouts drawn from [1 s, 1.01 s); `lease` is the `lease` section.
fn group(lease: &str) -> String {
    format!(
        r#"Scenario(
            duration: "20s",
            lease: {lease},
            strategy: RaftLeaderLease(election_timeout: "1s", election_jitter: "10ms",
                heartbeat: "100ms"),
            clocks: (drift_spread_ppm: 100000.0, placement: Adversarial),
            nodes: [(name: "r1", role: Replica), (name: "r2", role: Replica),
                    (name: "r3", role: Replica)],
            network: (delay: Fixed("1ms")),
            workload: (reads_per_second: 10.0),
        )"#
    )
}

/// r3, named initial leader, campaigns at 0: its votes come back at 2 ms and it leads term 1,
/// before any timer (>= 1 s / 1.05 = 952 ms) runs out; it is the replica slowed, at -5 %, and
/// the others run at +5 %. With no fault it leads throughout: one grant, and no note.
#[test]
fn the_initial_leader_leads_first_and_is_the_one_slowed() {
    let s = scenario(&group(r#"(duration: "900ms", initial_leader: "r3")"#));
    assert!(validate(&s).is_empty(), "{:?}", validate(&s));
    assert!(warnings(&s).is_empty(), "{:?}", warnings(&s));
    let out = run(&s);
    assert_eq!(out.holders, ["r3"]);
    assert_eq!(out.drift_ppm["r3"], -50_000.0);
    assert_eq!(out.drift_ppm["r1"], 50_000.0);
    assert_eq!(out.drift_ppm["r2"], 50_000.0);
    // Its lease reads start once term 1's first entry commits: append at 2 ms, acks at 4 ms.
    assert!(out.availability > 0.999, "{}", out.availability);
    assert_eq!(slowed_replica_never_led(&s, &out), None);
}

/// With no initial leader the first replica, r1, is slowed (-5 %), but its timer runs out last:
/// at >= 1 s / 0.95 = 1.0526 s true, while r2's and r3's run out by 1.01 s / 1.05 = 0.962 s.
/// One of them leads and r1 never does: the file gets a warning before the run and the run a
/// note after it, naming r1 and the field that fixes it.
#[test]
fn a_slowed_first_replica_that_never_leads_is_named() {
    let s = scenario(&group(r#"(duration: "900ms")"#));
    let w = warnings(&s);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("slows r1") && w[0].contains(r#"initial_leader: "r1""#),
        "{w:?}"
    );
    let out = run(&s);
    assert!(!out.holders.iter().any(|h| h == "r1"), "{:?}", out.holders);
    let note = slowed_replica_never_led(&s, &out).expect("r1 never led");
    assert!(
        note.contains("slowed r1 by -50000 ppm") && note.contains("never led"),
        "{note}"
    );
    // Placed at random, nothing is claimed of the leader: neither warning nor note.
    let random = scenario(&group(r#"(duration: "900ms")"#).replace("Adversarial", "Random"));
    assert!(warnings(&random).is_empty());
    assert_eq!(slowed_replica_never_led(&random, &run(&random)), None);
}

/// The field names a node, under a protocol that elects its holder or lets its contenders race
/// for it (a contender of TwoSided, whose contenders race; see
/// `the_named_contender_holds_first_under_every_racing_protocol`).
#[test]
fn an_initial_leader_is_a_node_of_a_protocol_that_elects_or_races() {
    let unknown = scenario(&group(r#"(duration: "900ms", initial_leader: "r9")"#));
    assert_eq!(
        validate(&unknown),
        [r#"lease.initial_leader: no node is named "r9""#]
    );
    let lock = scenario(
        r#"Scenario(duration: "10s", lease: (duration: "1s", initial_leader: "a"),
            strategy: TwoSided(holder_margin: "10ms"),
            nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)])"#,
    );
    assert!(validate(&lock).is_empty(), "{:?}", validate(&lock));
}

/// LeaseGuard elects with the same Raft core: r2, named, campaigns at 0 (votes back at 2 ms)
/// while the others' timers run at least ET = 1 s; with no fault it leads throughout.
#[test]
fn leaseguard_elects_the_initial_leader_first() {
    let s = scenario(
        r#"Scenario(
            duration: "10s",
            lease: (duration: "1s", initial_leader: "r2"),
            strategy: LeaseGuard(election_timeout: "1s", heartbeat: "100ms"),
            nodes: [(name: "r1", role: Replica), (name: "r2", role: Replica),
                    (name: "r3", role: Replica)],
            network: (delay: Fixed("1ms")),
            workload: (reads_per_second: 10.0, writes_per_second: 5.0),
        )"#,
    );
    assert!(validate(&s).is_empty(), "{:?}", validate(&s));
    assert_eq!(run(&s).holders, ["r2"]);
    // Without the field the election decides: under seed 0 r3's timer runs out first.
    let mut unnamed = s.clone();
    unnamed.lease.initial_leader = None;
    assert_eq!(run(&unnamed).holders, ["r3"]);
}

/// Two contenders that start together under `strategy`, behind one grantor or (with `masters`
/// of them) several, 1 ms messages, `lease` the `lease` section: the first holder, and every
/// holder in grant order.
fn race(strategy: &str, grantors: &[&str], lease: &str) -> Vec<String> {
    let grantors: String = grantors
        .iter()
        .map(|g| format!(r#"(name: "{g}", role: Grantor), "#))
        .collect();
    let text = format!(
        r#"Scenario(
            duration: "20s",
            lease: {lease},
            strategy: {strategy},
            nodes: [{grantors}(name: "c1", role: Contender), (name: "c2", role: Contender)],
            network: (delay: Fixed("1ms")),
        )"#
    );
    let s = scenario(&text);
    assert!(validate(&s).is_empty(), "{strategy}: {:?}", validate(&s));
    run(&s).holders
}

/// Contenders that race for the holder lead first when named: client-go's candidates (the
/// others' first try waits a jittered retry period, 2 s to 4.4 s, while the named one's Create
/// is applied at 3 ms), the base protocol's contenders (the others' first Acquire waits
/// `retry_every`, so the named one's is first in the grantor's FIFO) and Redlock's clients
/// (the others' first attempt waits a retry delay of 0.5 s to 1 s; the named one's decides at
/// 2 ms, every master having answered). Unnamed, c1 wins each race: both start at 0 and its
/// messages are sent first. Named, c2 holds first, and holds alone in the 20 s run (T 15 s,
/// renewed).
#[test]
fn the_named_contender_holds_first_under_every_racing_protocol() {
    for (strategy, grantors) in [
        ("K8sLeaderElection(jitter_factor: 1.2)", &["apiserver"][..]),
        (r#"TwoSided(holder_margin: "10ms")"#, &["lock"][..]),
        ("Redlock", &["m1", "m2", "m3"][..]),
    ] {
        let unnamed = race(strategy, grantors, r#"(duration: "15s")"#);
        assert_eq!(
            unnamed.first().map(String::as_str),
            Some("c1"),
            "{strategy}"
        );
        let named = race(
            strategy,
            grantors,
            r#"(duration: "15s", initial_leader: "c2")"#,
        );
        assert_eq!(named, ["c2"], "{strategy}");
    }
}

/// The lock services' clients race for the lock too, each through its session, and lead first
/// when named. Each test catches a client whose first process does not hold back (the named one
/// would not hold first: unnamed, c1 wins, its messages sent first), one that holds back when
/// it is itself named (c1 named would not hold first), and a protocol that refuses the field
/// (validation fails in `race`). `lease` is the `lease` section without `initial_leader`.
fn named_first(strategy: &str, grantor: &str, lease: &str) {
    let with = |leader: &str| {
        let lease = match leader {
            "" => format!("({lease})"),
            l => format!(r#"({lease}, initial_leader: "{l}")"#),
        };
        race(strategy, &[grantor], &lease)
    };
    let unnamed = with("");
    assert_eq!(
        unnamed.first().map(String::as_str),
        Some("c1"),
        "{strategy}"
    );
    let second = with("c2");
    assert_eq!(second.first().map(String::as_str), Some("c2"), "{strategy}");
    let first = with("c1");
    assert_eq!(first.first().map(String::as_str), Some("c1"), "{strategy}");
}

/// Chubby: the other client opens its session at once but sends its first Acquire
/// `retry_every` (here 1 s) late, so the named one's Acquire reaches the master first (2 ms) and
/// is granted; the other's, refused while the lock is held, keeps retrying. Catches a client
/// that asks at once whoever is named, and one that waits when it is named itself.
#[test]
fn a_named_chubby_client_holds_first() {
    named_first(
        "ChubbySession",
        "master",
        r#"duration: "15s", retry_every: "1s""#,
    );
}

/// Consul: the other client's first `Lock()` sleeps `lock_retry` (5 s) first, so the named one
/// creates its session, GETs the free key and acquires it within a few ms; the other's GET then
/// finds the key held and blocks. Catches the same two faults as the Chubby test, under
/// Consul's acquire loop.
#[test]
fn a_named_consul_client_holds_first() {
    named_first("ConsulSession", "leader", r#"duration: "15s""#);
}

/// ZooKeeper: the other client's first connect waits `retry_every` (1 s), so the named one's
/// session and lock node come first and its node is the lowest; the other's queues behind it.
/// Catches the same two faults, under Curator's lock recipe (the lowest node holds).
#[test]
fn a_named_zookeeper_client_holds_first() {
    named_first(
        r#"ZooKeeperSession(tick_time: "2s", session_timeout: "30s")"#,
        "zk",
        r#"duration: "30s", retry_every: "1s""#,
    );
}

/// A protocol of a user's own that says nothing of `lease.initial_leader`: the base protocol
/// under another name, with `lease_fields` left at its default (every period, no initial
/// leader).
#[derive(Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Unelected {
    #[serde(default)]
    margin: LocalDur,
}

impl Settings for Unelected {
    const NAME: &'static str = "Unelected";
    type Protocol = BaseProtocol;

    fn to_ron(&self) -> String {
        format!("Unelected(margin: \"{}\")", self.margin)
    }

    fn build(&self) -> BaseProtocol {
        let rules = Rules {
            holder_margin: self.margin,
            grantor_margin: self.margin,
            ..Rules::default()
        };
        BaseProtocol::new(rules, self.to_ron())
    }
}

/// A grantor cannot be named, nor a contender where replicas lead (etcd's clients hold leases
/// that its members grant), nor anyone under a protocol that does not read the field (every
/// built-in protocol reads it: a registered one that leaves `lease_fields` at its default).
#[test]
fn only_a_node_that_leads_can_be_named() {
    let lock = r#"(name: "lock", role: Grantor), (name: "a", role: Contender)"#;
    let text = |strategy: &str, nodes: &str, leader: &str| {
        format!(
            r#"Scenario(duration: "5s", lease: (duration: "15s", initial_leader: "{leader}"),
                strategy: {strategy}, nodes: [{nodes}])"#
        )
    };
    let p = validate(&scenario(&text("K8sLeaderElection", lock, "lock")));
    assert_eq!(
        p,
        [
            r#"lease.initial_leader: "lock" is a Grantor, not a Contender: only a Contender leads here"#
        ]
    );
    let mut registry = Registry::new();
    registry.register::<Unelected>();
    let p = validate_in(&scenario(&text("Unelected", lock, "a")), &registry);
    assert!(
        p.len() == 1 && p[0].contains("does not elect its holder"),
        "{p:?}"
    );
}
