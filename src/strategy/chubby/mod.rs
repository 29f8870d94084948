//! Chubby lock sessions (Burrows, OSDI'06): one `Grantor` is the cell's master,
//! every `Contender` a client that wants one lock through a session.
//!
//! The session is the lease: the master extends it to (its answer to a KeepAlive) + T on its
//! monotonic clock. With `keepalive: HeldOpen` (Chubby) it holds each KeepAlive until the
//! session has `hold_margin` left and the client sends the next one as soon as the answer
//! comes; with `Immediate` it answers at once and the client sends one every `renew_every`.
//! The answer says how long the master held the KeepAlive and the extension it granted, so
//! the client's local lease runs to (KeepAlive send time) + held + extension - holder_margin
//! on its own clock. Past its local lease the client is in jeopardy for `grace`; it must not
//! act then (`act_in_jeopardy: true` is the bug of acting anyway). The lock belongs to the session: the
//! master releases it when the session expires and then refuses it to everyone for
//! `lock_delay`, not after a clean release. The lock's generation number is the fencing token.
//! A restarted master (fail-over) extends every session by T before it expires any. Under load
//! (`extend_under_load`) every extension is that bound instead of T.
//! [`master`] and [`client`] give the details; this module checks scenarios and builds nodes.

pub mod client;
pub mod master;
pub mod msg;
pub mod settings;

use super::{LeaseParams, Protocol, Register, Transport};
use crate::msg::{NodeId, Token};
use crate::scenario::limits;
use crate::scenario::{Role, Scenario};
use crate::strategy::roles::{Grantors, LockServiceRoles};
use crate::strategy::service_node::ServiceNode;
use crate::time::{LocalDur, LocalTime};
pub use client::Client;
pub use master::Master;
pub use msg::Message;
use serde::Deserialize;

/// `ChubbySession`'s parameters (see [`settings::ChubbySession`]).
#[derive(Clone, Copy, Debug)]
pub struct ChubbyConfig {
    /// How long a client in jeopardy keeps trying, from the end of its local lease (Chubby: 45 s).
    pub grace: LocalDur,
    /// How long the master refuses a lock whose session expired (Chubby: up to 60 s).
    pub lock_delay: LocalDur,
    /// The bug: the client acts in jeopardy, until grace ends.
    pub act_in_jeopardy: bool,
    /// The client's local lease ends this much before the end the master's answer implies.
    pub holder_margin: LocalDur,
    /// How the master answers KeepAlives.
    pub keepalive: KeepAliveMode,
    /// With `HeldOpen`, the master answers a held KeepAlive when the session has this left.
    pub hold_margin: LocalDur,
    /// The extension of a master under load, instead of T (never under load if `None`).
    pub extend_under_load: Option<LocalDur>,
}

impl ChubbyConfig {
    /// What the master extends a session by: T, or the bound under load.
    pub fn extension(&self, p: &LeaseParams) -> LocalDur {
        self.extend_under_load.unwrap_or(p.lease)
    }
}

/// How the master answers a KeepAlive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum KeepAliveMode {
    /// Chubby's: the master holds a KeepAlive until the session it extended last has
    /// `hold_margin` left, then extends it and answers; the client sends the next KeepAlive
    /// as soon as an answer comes, so one is almost always waiting at the master.
    #[default]
    HeldOpen,
    /// The master answers at once; the client sends a KeepAlive every `renew_every`.
    Immediate,
}

/// Chubby sessions with their parameters.
#[derive(Clone, Debug)]
pub struct ChubbySession {
    config: ChubbyConfig,
    description: String,
}

impl ChubbySession {
    pub fn new(config: ChubbyConfig, description: String) -> ChubbySession {
        ChubbySession {
            config,
            description,
        }
    }
}

impl Protocol for ChubbySession {
    /// A client's KeepAlives, its events and its lock calls travel on one connection to the
    /// master.
    const TRANSPORT: Transport = Transport::Stream;
    type Logic = Node;

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let mut p = LockServiceRoles {
            protocol: "ChubbySession",
            grantors: Grantors::ExactlyOne,
            grantor_is: "the cell's master",
            contender_is: "a client",
        }
        .check(scenario);
        let c = &self.config;
        let t = scenario.lease.duration;
        for (field, d) in [("grace", c.grace), ("lock_delay", c.lock_delay)] {
            if d < LocalDur::ZERO {
                p.push(format!("strategy.{field}: must not be negative (got {d})"));
            } else if d.ns() > limits::MAX_DURATION_NS {
                p.push(format!(
                    "strategy.{field}: {} is above the limit of {} (see docs/src/limits.md)",
                    limits::dur(d.ns()),
                    limits::dur(limits::MAX_DURATION_NS)
                ));
            }
        }
        p.extend(check_keepalive(c, t));
        let m = c.holder_margin;
        if m < LocalDur::ZERO {
            p.push(format!(
                "strategy.holder_margin: must not be negative (got {m})"
            ));
        } else if m >= t && t.ns() > 0 {
            p.push(format!(
                "strategy.holder_margin: {m} must be shorter than the lease ({t}), or the \
                 client's local lease is empty"
            ));
        } else if c.keepalive == KeepAliveMode::Immediate {
            // renew_every >= T is reported by the scenario's own checks; this is the part
            // that holder_margin adds. Held open, renew_every paces only KeepAlives that got
            // no answer.
            let renew = scenario.lease.renew_every();
            let local = t - m;
            if renew >= local && renew < t {
                p.push(format!(
                    "lease.renew_every: {renew} must be shorter than the client's local lease, \
                     T - holder_margin ({local}), or every session falls into jeopardy between \
                     KeepAlives"
                ));
            }
        }
        p
    }

    fn commands(&self) -> &'static [&'static str] {
        &["StepDown"]
    }

    fn renewal_loop(&self, role: Role) -> Option<&'static str> {
        (role == Role::Contender).then_some("the client library's KeepAlive and grace-period loop")
    }

    fn node_logic(&self, _node: NodeId, role: Role, params: &LeaseParams, disk: Disk) -> Node {
        match role {
            Role::Grantor => Node::Service(Master::new(*params, self.config, disk)),
            _ => Node::Client(Client::new(self.config, *params)),
        }
    }
}

/// The hold margin against T (held open) and the extension under load against T and the
/// limits: each problem with its field.
fn check_keepalive(c: &ChubbyConfig, t: LocalDur) -> Vec<String> {
    let mut p = Vec::new();
    let hold = c.hold_margin;
    if c.keepalive == KeepAliveMode::HeldOpen {
        if hold <= LocalDur::ZERO {
            p.push(format!(
                "strategy.hold_margin: must be positive (got {hold}), or the master answers a \
                 held KeepAlive only as the session expires"
            ));
        } else if hold >= t && t.ns() > 0 {
            p.push(format!(
                "strategy.hold_margin: {hold} must be shorter than the lease ({t}), or the \
                 master never holds a KeepAlive"
            ));
        }
    }
    if let Some(e) = c.extend_under_load {
        if e < t {
            p.push(format!(
                "strategy.extend_under_load: {e} is below the lease ({t}): a master under load \
                 extends sessions by T or more"
            ));
        } else if e.ns() > limits::MAX_DURATION_NS {
            p.push(format!(
                "strategy.extend_under_load: {} is above the limit of {} (see \
                 docs/src/limits.md)",
                limits::dur(e.ns()),
                limits::dur(limits::MAX_DURATION_NS)
            ));
        }
    }
    p
}

/// What the cell's replicated database keeps across a master's fail-over (see [`master`]).
#[derive(Clone, Debug, Default)]
pub struct Disk {
    /// The open sessions: (client node, session id). Not their expiries.
    sessions: Vec<(NodeId, u64)>,
    /// Per client node, the newest session id ever opened.
    newest: Vec<u64>,
    owner: Option<master::Owner>,
    /// The last generation number granted: generations keep increasing across fail-overs.
    generation: Token,
    /// A lock-delay in progress: its end on the master's monotonic clock.
    delay_until: Option<LocalTime>,
    /// The protected register the master hosts.
    register: Register,
}

/// A node of a Chubby cell: the master or a client.
pub type Node = ServiceNode<Master, Client>;

#[cfg(test)]
mod tests {
    use super::settings::ChubbySession as Settings;
    use super::*;
    use crate::strategy::Settings as _;

    /// The protocol's own problems with a master and a client, T = `t`, renewing every
    /// `renew`.
    fn problems(t: &str, renew: &str, strategy: &str) -> Vec<String> {
        let s = Scenario::from_ron(&format!(
            r#"Scenario(duration: "60s", lease: (duration: "{t}", renew_every: "{renew}"),
                strategy: {strategy},
                nodes: [(name: "m", role: Grantor), (name: "a", role: Contender)])"#
        ))
        .unwrap();
        check(&s)
    }

    /// The protocol's own problems with scenario `s`.
    fn check(s: &Scenario) -> Vec<String> {
        let settings: Settings = crate::scenario::ron_options()
            .from_str(&s.strategy.to_ron())
            .unwrap();
        settings.build().check(s)
    }

    fn chubby(fields: &str) -> Vec<String> {
        problems("12s", "4s", &format!("ChubbySession({fields})"))
    }

    const MAX: i64 = limits::MAX_DURATION_NS;

    /// `field` at the longest duration the checker accepts passes; 1 ns more is refused, alone.
    fn at_most_the_limit(field: &str) {
        assert!(
            chubby(&format!(r#"{field}: "{MAX}ns""#)).is_empty(),
            "{field}"
        );
        let p = chubby(&format!(r#"{field}: "{}ns""#, MAX + 1));
        assert_eq!(p.len(), 1, "{field}: {p:?}");
        let head = format!("strategy.{field}: ");
        assert!(
            p[0].starts_with(&head) && p[0].contains("is above the limit of"),
            "{p:?}"
        );
    }

    #[test]
    fn grace_and_lock_delay_are_at_least_zero_and_at_most_the_limit() {
        assert!(chubby(r#"grace: "0s", lock_delay: "0s""#).is_empty());
        assert_eq!(
            chubby(r#"grace: "-1ns""#),
            ["strategy.grace: must not be negative (got -1ns)"]
        );
        at_most_the_limit("lock_delay");
    }

    /// T = 12 s: a holder margin of 0 to 12 s - 1 ns leaves a local lease; 12 s does not.
    #[test]
    fn the_holder_margin_is_shorter_than_the_lease_and_not_negative() {
        assert!(chubby(r#"holder_margin: "11999999999ns""#).is_empty());
        assert_eq!(
            chubby(r#"holder_margin: "12s""#),
            ["strategy.holder_margin: 12s must be shorter than the lease (12s), or the client's \
              local lease is empty"]
        );
        assert_eq!(
            chubby(r#"holder_margin: "-1ns""#),
            ["strategy.holder_margin: must not be negative (got -1ns)"]
        );
    }

    /// Answered at once, a client renews every 4 s; with T = 12 s and a holder margin of 8 s
    /// its local lease is 4 s: refused (every session would fall into jeopardy); with 8 s - 1 ns
    /// it is 4 s + 1 ns: accepted. Held open, renew_every paces only unanswered KeepAlives:
    /// no problem. A renewal of T or more is the scenario's own problem, not this one.
    #[test]
    fn answered_at_once_a_client_renews_within_its_local_lease() {
        assert_eq!(
            chubby(r#"holder_margin: "8s", keepalive: Immediate"#),
            [
                "lease.renew_every: 4s must be shorter than the client's local lease, T - \
              holder_margin (4s), or every session falls into jeopardy between KeepAlives"
            ]
        );
        assert!(chubby(r#"holder_margin: "7999999999ns", keepalive: Immediate"#).is_empty());
        assert!(chubby(r#"holder_margin: "8s""#).is_empty());
        let at_t = problems(
            "12s",
            "12s",
            r#"ChubbySession(holder_margin: "8s", keepalive: Immediate)"#,
        );
        assert!(at_t.is_empty(), "{at_t:?}");
    }

    /// T = 12 s: a hold margin in (0, 12 s) holds KeepAlives open; an extension under load
    /// from T to the limit.
    #[test]
    fn the_hold_margin_and_the_extension_under_load_are_bounded_by_t() {
        assert!(chubby(r#"hold_margin: "1ns""#).is_empty());
        assert!(chubby(r#"hold_margin: "11999999999ns""#).is_empty());
        assert_eq!(
            chubby(r#"hold_margin: "0s""#),
            [
                "strategy.hold_margin: must be positive (got 0s), or the master answers a held \
              KeepAlive only as the session expires"
            ]
        );
        assert_eq!(chubby(r#"hold_margin: "12s""#).len(), 1);
        // Answered at once, the hold margin is not read.
        assert!(chubby(r#"hold_margin: "0s", keepalive: Immediate"#).is_empty());
        assert!(chubby(r#"extend_under_load: "12s""#).is_empty());
        assert_eq!(
            chubby(r#"extend_under_load: "11999999999ns""#),
            [
                "strategy.extend_under_load: 11.999999999s is below the lease (12s): a master \
              under load extends sessions by T or more"
            ]
        );
        at_most_the_limit("extend_under_load");
    }

    /// The master is the service node, every other node a client; an operator may step a
    /// client down.
    #[test]
    fn the_master_serves_and_clients_take_step_downs() {
        let p = Settings::build(
            &crate::scenario::ron_options()
                .from_str("ChubbySession()")
                .unwrap(),
        );
        assert_eq!(p.commands(), ["StepDown"]);
        let params = LeaseParams {
            lease: LocalDur::from_secs(12),
            renew_every: LocalDur::from_secs(4),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: crate::scenario::GrantorRestart::Wait,
            fencing: false,
            initial_leader: None,
        };
        let logic = |role| p.node_logic(0, role, &params, Disk::default());
        assert!(matches!(logic(Role::Grantor), Node::Service(_)));
        assert!(matches!(logic(Role::Contender), Node::Client(_)));
    }

    /// With no lease (T = 0, which the scenario's own check refuses) the margins are not
    /// measured against it: the protocol adds nothing of its own.
    #[test]
    fn a_zero_lease_adds_no_margin_problem() {
        let p = problems(
            "0s",
            "4s",
            r#"ChubbySession(hold_margin: "1s", holder_margin: "0s")"#,
        );
        assert!(p.is_empty(), "{p:?}");
    }

    /// Exactly one master and at least one client.
    #[test]
    fn the_roles_are_checked_with_the_settings() {
        let s = Scenario::from_ron(
            r#"Scenario(duration: "60s", lease: (duration: "12s", renew_every: "4s"),
                strategy: ChubbySession(grace: "-1s"), nodes: [(name: "m", role: Grantor)])"#,
        )
        .unwrap();
        assert_eq!(
            check(&s),
            [
                "nodes: ChubbySession needs at least one Contender (a client)",
                "strategy.grace: must not be negative (got -1s)"
            ]
        );
    }
}
