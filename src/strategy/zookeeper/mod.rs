//! ZooKeeper sessions with Curator's lock recipe: one `Grantor` is the ensemble (one server
//! stands for it), every `Contender` a client that wants one lock (`InterProcessMutex`).
//!
//! The session is the lease, timed on both sides from messages, not from a term the holder is
//! given: the server expires a session in the tick bucket after (its last message) + t, the
//! negotiated timeout (the requested `session_timeout` clamped into the server's
//! [`min_session_timeout`, `max_session_timeout`], by default [2, 20] x `tick_time`);
//! the client turns Disconnected when it has received nothing for readTimeout = 2t/3, and it
//! learns that its session expired only when a reconnect is answered Expired, unless Curator's
//! `ConnectionStateManager` declares it LOST first (a simulated expiry, t after SUSPENDED by
//! default). The lock is the lowest ephemeral sequential node; its sequence number is the
//! fencing token. A holder acts until SUSPENDED (Curator's default error policy), until LOST
//! (its session policy), or with `act_while_disconnected`, the raw client, until the Expired
//! event (HBase). `lease.duration` is not read: the session timeout is the term (a
//! scenario writes the negotiated timeout there for what reads T, such as `advise`), and
//! `lease.retry_every` is the period of reconnect tries. [`server`] and [`client`] give the
//! details, [`emit`] every effect they hand the engine; this module checks scenarios and
//! builds nodes.

pub mod client;
mod emit;
pub mod msg;
pub mod server;
pub mod settings;

use super::{LeaseParams, Protocol, Register, Transport};
use crate::msg::NodeId;
use crate::scenario::{Role, Scenario};
use crate::strategy::roles::{Grantors, LockServiceRoles};
use crate::strategy::service_node::ServiceNode;
use crate::time::LocalDur;
pub use client::Client;
pub use msg::Message;
pub use server::{Bounds, Server};

/// `ZooKeeperSession`'s parameters (see [`settings::ZooKeeperSession`]).
#[derive(Clone, Copy, Debug)]
pub struct ZkConfig {
    /// The server's tick: its expiry bucket width, and the unit of the default bounds.
    pub tick_time: LocalDur,
    /// The timeout a client asks for.
    pub session_timeout: LocalDur,
    /// The server's bounds on the timeout, defaults resolved.
    pub bounds: Bounds,
    /// The holder acts through SUSPENDED: the raw client (HBase's behaviour, acting until the
    /// Expired event), or Curator's session policy (until LOST).
    pub acts_while_suspended: bool,
    /// Curator's `simulatedSessionExpirationPercent` (0: none, as for the raw client).
    pub expiration_percent: u32,
}

/// ZooKeeper sessions with their parameters, and the clients that run their own.
#[derive(Clone, Debug)]
pub struct ZooKeeperSession {
    config: ZkConfig,
    description: String,
    /// Clients with parameters of their own (the server's fields are the ensemble's).
    own: Vec<(NodeId, ZkConfig)>,
}

impl ZooKeeperSession {
    pub fn new(config: ZkConfig, description: String) -> ZooKeeperSession {
        ZooKeeperSession {
            config,
            description,
            own: Vec::new(),
        }
    }

    /// Its parameters (every client's but those with their own).
    pub fn config(&self) -> ZkConfig {
        self.config
    }

    /// The protocol where each client of `own` runs its own parameters.
    pub fn with_own(mut self, own: Vec<(NodeId, ZkConfig)>) -> ZooKeeperSession {
        self.own = own;
        self
    }
}

impl Protocol for ZooKeeperSession {
    /// A client's session runs over one TCP connection, which ZooKeeper's FIFO client order
    /// rests on.
    const TRANSPORT: Transport = Transport::Stream;
    type Logic = Node;

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        LockServiceRoles {
            protocol: "ZooKeeperSession",
            grantors: Grantors::ExactlyOne,
            grantor_is: "the ZooKeeper ensemble",
            contender_is: "a client",
        }
        .check(scenario)
    }

    fn renewal_loop(&self, role: Role) -> Option<&'static str> {
        (role == Role::Contender).then_some("the client's SendThread (pings, reads, reconnects)")
    }

    /// The server logs each transaction (a session opened or closed, a lock node made or
    /// deleted) before it answers.
    fn persists(&self, role: Role) -> Option<&'static str> {
        (role == Role::Grantor).then_some("its transaction log (sessions and lock nodes)")
    }

    fn node_logic(&self, node: NodeId, role: Role, params: &LeaseParams, disk: Disk) -> Node {
        match role {
            Role::Grantor => {
                let (tick, bounds) = (self.config.tick_time, self.config.bounds);
                Node::Service(Server::new(*params, tick, bounds, disk))
            }
            _ => {
                let own = self.own.iter().find(|&&(n, _)| n == node);
                let config = own.map_or(self.config, |&(_, c)| c);
                Node::Client(Client::new(config, *params))
            }
        }
    }
}

/// What the ensemble's database keeps across a restart (see [`server`]).
#[derive(Clone, Debug, Default)]
pub struct Disk {
    sessions: Vec<server::Session>,
    nodes: Vec<server::LockNode>,
    last_session: u64,
    last_seq: u64,
    register: Register,
}

/// A node: the server or a client.
pub type Node = ServiceNode<Server, Client>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::GrantorRestart;
    use crate::strategy::{call_for_test, Action, NodeLogic};

    fn config(session_timeout_s: i64) -> ZkConfig {
        let tick = LocalDur::from_secs(1);
        ZkConfig {
            tick_time: tick,
            session_timeout: LocalDur::from_secs(session_timeout_s),
            bounds: Bounds::of(tick, None, None),
            acts_while_suspended: false,
            expiration_percent: 100,
        }
    }

    fn scenario(nodes: &str) -> Scenario {
        Scenario::from_ron(&format!(
            r#"Scenario(duration: "10s", lease: (duration: "3s"), strategy: ZooKeeperSession(),
                nodes: [{nodes}])"#
        ))
        .unwrap()
    }

    #[test]
    fn it_describes_itself_and_takes_one_ensemble_and_clients() {
        let z = ZooKeeperSession::new(config(3), "ZooKeeperSession(...)".into());
        assert_eq!(z.describe(), "ZooKeeperSession(...)");
        let ok = r#"(name: "zk", role: Grantor), (name: "a", role: Contender)"#;
        assert!(z.check(&scenario(ok)).is_empty());
        let two = r#"(name: "zk", role: Grantor), (name: "zk2", role: Grantor),
            (name: "a", role: Contender)"#;
        assert_eq!(
            z.check(&scenario(two)),
            ["nodes: ZooKeeperSession needs exactly one Grantor, the ZooKeeper ensemble (found 2)"]
        );
    }

    /// The ensemble is the server; a client with its own settings asks its own timeout in its
    /// first Connect, the others the protocol's.
    #[test]
    fn the_ensemble_is_the_server_and_a_client_runs_its_own_settings() {
        let z = ZooKeeperSession::new(config(3), String::new()).with_own(vec![(2, config(7))]);
        let params = LeaseParams {
            lease: LocalDur::from_secs(3),
            renew_every: LocalDur::from_secs(1),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
            initial_leader: None,
        };
        let logic = |node, role| z.node_logic(node, role, &params, Disk::default());
        assert!(matches!(logic(0, Role::Grantor), Node::Service(_)));
        let roles = [Role::Grantor, Role::Contender, Role::Contender];
        let asked = |node| {
            let mut n = logic(node, Role::Contender);
            let at = crate::time::LocalTime::from_ns(0);
            let out = call_for_test(&mut n, node, &roles, at, |n, cx, out| n.on_start(cx, out));
            out.actions().iter().find_map(|a| match a {
                Action::Send {
                    msg: Message::Connect { timeout, .. },
                    ..
                } => Some(timeout.ns()),
                _ => None,
            })
        };
        assert_eq!(asked(1), Some(3_000_000_000));
        assert_eq!(asked(2), Some(7_000_000_000));
    }
}
