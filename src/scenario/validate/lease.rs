//! The `lease` section: the term, the periods the protocol reads, and the node that leads first.

use super::Problems;
use crate::scenario::protocols::{LeaseFields, StrategyChecks};
use crate::scenario::Role;

/// T within the limits, and each period the protocol reads ([`StrategyChecks::lease_fields`];
/// every one when the strategy cannot be read): within the limits, and a renewal shorter than T.
pub(super) fn check(p: &mut Problems, protocol: Option<&dyn StrategyChecks>) {
    let lease = &p.s.lease;
    let reads = protocol.map_or(LeaseFields::ALL, |s| s.lease_fields());
    let t = lease.duration;
    p.interval("lease.duration", t);
    if reads.renew_every {
        let renew = lease.renew_every();
        p.interval("lease.renew_every", renew);
        if renew >= t && t.ns() > 0 {
            p.push(format!(
                "lease.renew_every: {renew} must be shorter than the lease ({t}), or the lease \
                 lapses between renewals"
            ));
        }
    }
    if reads.retry_every {
        p.interval("lease.retry_every", lease.retry_every);
    }
    if let Some(name) = &lease.initial_leader {
        initial_leader(p, name, reads, protocol);
    }
}

/// `lease.initial_leader` names a node that contends (a replica, or a contender), under a
/// protocol that elects or races for its holder.
fn initial_leader(
    p: &mut Problems,
    name: &str,
    reads: LeaseFields,
    protocol: Option<&dyn StrategyChecks>,
) {
    if !reads.initial_leader {
        if let Some(s) = protocol {
            p.push(format!(
                "lease.initial_leader: {} does not elect its holder, so no node can be made to \
                 lead first; remove the field",
                s.describe()
            ));
        }
        return;
    }
    match p.s.node_index(name) {
        None => p.push(format!("lease.initial_leader: no node is named {name:?}")),
        // Where there are replicas, they are who leads (a Raft group; etcd's members, whose
        // clients only hold leases); else the contenders race for the holder.
        Some(i) if p.s.nodes[i].role != leads(p.s) => p.push(format!(
            "lease.initial_leader: {name:?} is a {:?}, not a {:?}: only a {:?} leads here",
            p.s.nodes[i].role,
            leads(p.s),
            leads(p.s)
        )),
        Some(_) => {}
    }
}

/// The role of the nodes that lead: replicas if the scenario has any, else contenders.
fn leads(s: &crate::scenario::Scenario) -> Role {
    if s.nodes.iter().any(|n| n.role == Role::Replica) {
        Role::Replica
    } else {
        Role::Contender
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::validate::validate;
    use crate::scenario::Scenario;

    /// The problems of a 2 s run with T = 1 us (the shortest interval allowed) under
    /// `strategy`, on `nodes`.
    fn problems(strategy: &str, nodes: &str) -> Vec<String> {
        let text = format!(
            r#"Scenario(duration: "2s", lease: (duration: "1us"), strategy: {strategy},
                nodes: [{nodes}])"#
        );
        validate(&Scenario::from_ron(&text).unwrap())
    }

    /// With T = 1 us the default renewal period is T/3 = 333 ns, below the 1 us limit. A
    /// protocol that renews every `renew_every` is told so, at that field; Raft, LeaseGuard
    /// and client-go time renewals by settings of their own and are not (their other problems,
    /// if any, name their own fields).
    #[test]
    fn a_lease_period_is_checked_only_for_a_protocol_that_reads_it() {
        let lock = r#"(name: "lock", role: Grantor), (name: "a", role: Contender)"#;
        assert_eq!(
            problems("GrantorOnly", lock),
            ["lease.renew_every: 333ns is below the limit of 1us (see docs/src/limits.md)"]
        );
        let replicas = r#"(name: "r0", role: Replica), (name: "r1", role: Replica),
            (name: "r2", role: Replica)"#;
        for (strategy, nodes) in [
            (r#"RaftLeaderLease(election_timeout: "1s")"#, replicas),
            (
                r#"LeaseGuard(election_timeout: "1s", heartbeat: "100ms")"#,
                replicas,
            ),
            ("K8sLeaderElection", lock),
        ] {
            let p = problems(strategy, nodes);
            assert!(
                !p.iter().any(|p| p.starts_with("lease.")),
                "{strategy}: {p:?}"
            );
        }
    }
}
