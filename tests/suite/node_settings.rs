//! Nodes that run settings of their own (`nodes[i].settings`): what each runs, what the reports
//! show, and what is refused, each problem said at the node's field.

use crate::common::scenario;
use leasesim::scenario::validate::validate;
use leasesim::scenario::{library, load};

/// The bundled story with one node's settings, loaded.
fn story(name: &str) -> leasesim::Scenario {
    load::from_text(name, library::text(name).unwrap()).unwrap()
}

/// `zk-clients-own-session-timeouts` (derivation in the scenario): a asks 30 s and acts 18.003 s
/// into b's tenure; b asks its own 6 s and acts 2 s into a's (6 s: SUSPENDED 4 s after its last
/// Pong at 98.003 s, LOST 6 s later at 108.003 s; a holds from 106.003 s). Were b's own
/// timeout not what b runs, its overlap would be a's 18.003 s again.
#[test]
fn each_zookeeper_client_acts_on_its_own_session_timeout() {
    let out = leasesim::run("own", &story("zk-clients-own-session-timeouts")).unwrap();
    let s = &out.summary;
    let overlaps: Vec<(i64, i64)> = s
        .overlap
        .intervals
        .iter()
        .map(|o| (o.start_ns, o.end_ns))
        .collect();
    assert_eq!(
        overlaps,
        vec![
            (52_003_000_000, 70_006_000_000),
            (106_003_000_000, 108_003_000_000)
        ]
    );
    assert_eq!(
        s.node_settings,
        vec!["b: ZooKeeperSession(session_timeout: \"6s\")"]
    );
}

/// `raft-prevote-rolling-upgrade` is `raft-rejoin-prevote` with r3's own `pre_vote: false`:
/// r3 raises its term while cut off and deposes r1 at 45.006 s, where the group that runs
/// PreVote everywhere keeps r1 leading (one grant, 0.8333 available).
#[test]
fn a_replica_without_prevote_deposes_a_leader_the_others_would_keep() {
    let mixed = leasesim::run("mixed", &story("raft-prevote-rolling-upgrade")).unwrap();
    assert_eq!(mixed.summary.max_unavailable_ns, 14_994_000_000);
    let all = leasesim::run("all", &story("raft-rejoin-prevote")).unwrap();
    assert_eq!(all.summary.max_unavailable_ns, 10_004_000_000);
    assert!(all.summary.node_settings.is_empty());
    // Written back, a scenario keeps the node's own settings.
    let s = story("raft-prevote-rolling-upgrade");
    let again = scenario(&s.to_ron());
    assert_eq!(
        again.nodes[2].settings.as_ref().map(|s| s.to_ron()),
        Some("RaftLeaderLease(pre_vote: false)".to_string())
    );
}

/// A two-node ZooKeeper scenario with `zk_settings` on the ensemble and `a_settings` on the
/// client (`None`: none), under `strategy`.
fn zk(strategy: &str, zk_settings: &str, a_settings: &str) -> String {
    format!(
        r#"Scenario(
            duration: "10s",
            lease: (duration: "30s"),
            strategy: {strategy},
            nodes: [
                (name: "zk", role: Grantor{zk_settings}),
                (name: "a", role: Contender{a_settings}),
            ],
        )"#
    )
}

/// The problems `text` has.
fn problems(text: &str) -> Vec<String> {
    validate(&scenario(text))
}

#[test]
fn a_node_s_own_settings_are_checked_as_the_strategy_s_at_the_node_s_field() {
    let zks = "ZooKeeperSession(tick_time: \"2s\")";
    // Another strategy's name.
    let p = problems(&zk(zks, "", ", settings: TwoSided(holder_margin: \"1ms\")"));
    assert!(
        p.iter().any(|p| p.starts_with("nodes[1].settings: ")),
        "{p:?}"
    );
    // A field the strategy does not have.
    let p = problems(&zk(
        zks,
        "",
        ", settings: ZooKeeperSession(session_timout: \"6s\")",
    ));
    assert!(
        p.iter()
            .any(|p| p.starts_with("nodes[1].settings: ") && p.contains("session_timout")),
        "{p:?}"
    );
    // A value the strategy would refuse, said at the node's field.
    let p = problems(&zk(
        zks,
        "",
        ", settings: ZooKeeperSession(session_timeout: \"0s\")",
    ));
    assert!(
        p.iter()
            .any(|p| p.starts_with("nodes[1].settings.session_timeout: ")),
        "{p:?}"
    );
    // The server's fields are the ensemble's: not a client's, and the ensemble takes none.
    let p = problems(&zk(
        zks,
        "",
        ", settings: ZooKeeperSession(tick_time: \"1s\")",
    ));
    assert!(
        p.iter()
            .any(|p| p.starts_with("nodes[1].settings.tick_time: ")),
        "{p:?}"
    );
    let p = problems(&zk(
        zks,
        ", settings: ZooKeeperSession(session_timeout: \"6s\")",
        "",
    ));
    assert!(
        p.iter()
            .any(|p| p.starts_with("nodes[0].settings.tick_time: ")),
        "{p:?}"
    );
    // Written as the strategy's own values, nothing to say.
    let ok = zk(
        zks,
        "",
        ", settings: ZooKeeperSession(session_timeout: \"6s\")",
    );
    assert_eq!(problems(&ok), Vec::<String>::new());
}

#[test]
fn a_protocol_that_takes_no_settings_of_a_node_s_own_says_so() {
    let text = r#"Scenario(
        duration: "10s",
        lease: (duration: "10s", renew_every: "3s"),
        strategy: TwoSided(holder_margin: "5ms"),
        nodes: [
            (name: "lock", role: Grantor),
            (name: "h", role: Contender, settings: TwoSided(holder_margin: "1ms")),
        ],
    )"#;
    let p = problems(text);
    assert!(
        p.iter()
            .any(|p| p.starts_with("nodes[1].settings: ") && p.contains("no settings of a node")),
        "{p:?}"
    );
}

#[test]
fn a_replica_s_own_raft_settings_are_checked_at_its_field() {
    let text = |own: &str| {
        format!(
            r#"Scenario(
                duration: "10s",
                lease: (duration: "900ms"),
                strategy: RaftLeaderLease(election_timeout: "1s", election_jitter: "0s"),
                nodes: [
                    (name: "r1", role: Replica),
                    (name: "r2", role: Replica, settings: RaftLeaderLease({own})),
                ],
            )"#
        )
    };
    let p = problems(&text("election_jitter: \"2s\""));
    assert!(
        p.iter()
            .any(|p| p.starts_with("nodes[1].settings.election_jitter: ")),
        "{p:?}"
    );
    assert_eq!(problems(&text("pre_vote: true")), Vec::<String>::new());
}

/// `k8s-mixed-lease-durations` (derivation in the scenario): under client-go's old rule b,
/// with its own 10 s, takes a's lease at 11.013 s and both lead until a's renew deadline at
/// 34.004 s; under the rule of client-go 1.27 (the record's 30 s) b never does. An API server
/// with settings of its own is refused.
#[test]
fn a_candidate_with_a_shorter_lease_duration_takes_the_lease_under_the_old_rule_only() {
    let name = "k8s-mixed-lease-durations";
    let old = leasesim::run(name, &story(name)).unwrap().summary;
    assert_eq!(old.overlap.max_ns, 22_990_000_000);
    assert_eq!(old.grants, 2);
    let text = library::text(name)
        .unwrap()
        .replace(", expiry_from: Own", "");
    let new = leasesim::run(name, &scenario(&text)).unwrap().summary;
    assert_eq!((new.overlap.count, new.grants), (0, 1));

    let api_own = text.replace(
        r#"(name: "api", role: Grantor)"#,
        r#"(name: "api", role: Grantor, settings: K8sLeaderElection(retry_period: "1s"))"#,
    );
    let p = problems(&api_own);
    assert!(
        p.iter()
            .any(|p| p.starts_with("nodes[0].settings.renew_deadline: ")),
        "{p:?}"
    );
}
