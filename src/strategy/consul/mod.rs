//! Consul sessions with the Go API's lock (`api.Lock`, hashicorp/consul `api/lock.go`): one
//! `Grantor` is the Consul servers' leader (the cluster as one server that may crash and come
//! back as a new leader with its Raft-kept state), every `Contender` a client that wants the
//! one lock key.
//!
//! The session is the lease, and only the leader times it. A client creates a session with
//! TTL T (`lease.duration`; `api.Lock` asks for 15 s by default) and renews it every T/2
//! (`RenewPeriodic`, the client's renewal loop); the leader keeps one timer per session of
//! T x `ttl_multiplier` (Consul's `SessionTTLMultiplier`, 2), resets it on every renew, and when
//! it fires invalidates the session, which releases the lock it holds; the lock key then
//! refuses every acquire for the session's `lock_delay` (15 s). A clean release
//! (`?release=`) has no lock-delay. A new leader resets every session's timer to the full
//! T x multiplier (`initializeSessionTimers`).
//!
//! The holder has no deadline of its own: it believes from its successful acquire until
//! `monitorLock`, a blocking consistent GET of the key repeated for as long as the key names
//! its session, tells it otherwise: the key changed hands, or the GET failed. A GET that gets no
//! answer fails only at its RPC deadline (`rpc_timeout` past the query's wait and jitter,
//! Consul since hashicorp/consul#11500); without one (`rpc_timeout: None`, before it) it hangs,
//! and the holder believes for ever (hashicorp/consul#8504). [`leader`] and [`client`] give the
//! details; this module checks scenarios and builds nodes.

pub mod client;
pub mod leader;
pub mod msg;
pub mod settings;

use super::{Belief, Cx, LeaseParams, Out, Protocol, Register};
use super::{Request, Thread, TimerId, Transport};
use crate::msg::{NodeId, Token};
use crate::scenario::limits;
use crate::scenario::{Role, Scenario};
use crate::strategy::roles::{Grantors, LockServiceRoles};
use crate::strategy::service_node::{self, Service, ServiceNode};
use crate::time::{LocalDur, LocalTime};
pub use client::Client;
pub use leader::Leader;
pub use msg::Message;
use serde::Deserialize;

/// `ConsulSession`'s parameters (see [`settings::ConsulSession`]).
#[derive(Clone, Copy, Debug)]
pub struct ConsulConfig {
    /// The leader invalidates a session this many TTLs after its last renew (Consul: 2).
    pub ttl_multiplier: u32,
    /// After a session is invalidated, its lock refuses every acquire for this long.
    pub lock_delay: LocalDur,
    /// What the renewal loop does when a renew fails.
    pub renew: RenewPolicy,
    /// The wait of monitorLock's blocking GET (Consul's default query time, 5 min).
    pub query_wait: LocalDur,
    /// The wait of the acquire loop's blocking GET (`LockWaitTime`, 15 s).
    pub lock_wait: LocalDur,
    /// The pause after an acquire refused under lock-delay, and before an application tries
    /// `Lock()` again after it failed (`LockRetryTime`, 5 s).
    pub lock_retry: LocalDur,
    /// How long past its own wait a call gets its answer before it fails; `None`: never (a
    /// call with no answer hangs).
    pub rpc_timeout: Option<LocalDur>,
}

impl ConsulConfig {
    /// How long after its last renew the leader invalidates a session of TTL `ttl`.
    pub fn reap_after(&self, ttl: LocalDur) -> LocalDur {
        LocalDur::from_ns(ttl.ns().saturating_mul(self.ttl_multiplier as i64))
    }

    /// When a call sent at `sent` fails for want of an answer: a blocking GET of `wait` may
    /// take wait + wait/16 (the server's jitter), any call `rpc_timeout` more
    /// (`QueryOptions.BlockingTimeout` and `HasTimedOut`). `None`: it waits for ever.
    pub fn deadline(&self, sent: LocalTime, wait: LocalDur) -> Option<LocalTime> {
        let jitter = LocalDur::from_ns(wait.ns() / JITTER_FRACTION);
        self.rpc_timeout.map(|x| sent + wait + jitter + x)
    }
}

/// Consul's `JitterFraction`: a blocking query waits up to wait/16 more, at random.
pub const JITTER_FRACTION: i64 = 16;

/// What the renewal loop does when a renew fails (no answer by its deadline, or refused).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum RenewPolicy {
    /// `RenewPeriodic` since hashicorp/consul#912: retry every second, until T has passed
    /// since the last successful renew.
    #[default]
    RetryEverySecond,
    /// The client before it: stop renewing at the first error.
    StopOnError,
}

/// Consul sessions with their parameters.
#[derive(Clone, Debug)]
pub struct ConsulSession {
    config: ConsulConfig,
    description: String,
}

impl ConsulSession {
    pub fn new(config: ConsulConfig, description: String) -> ConsulSession {
        ConsulSession {
            config,
            description,
        }
    }
}

/// Consul refuses a session TTL below `session_ttl_min` (10 s by default) or above 24 h.
pub const TTL_MIN: LocalDur = LocalDur::from_secs(10);
/// The longest session TTL Consul accepts.
pub const TTL_MAX: LocalDur = LocalDur::from_secs(86_400);
/// Consul refuses a session lock-delay above 60 s (`structs.MaxLockDelay`).
pub const LOCK_DELAY_MAX: LocalDur = LocalDur::from_secs(60);
/// Consul caps a blocking query's wait at `max_query_time`, 10 min by default.
pub const QUERY_WAIT_MAX: LocalDur = LocalDur::from_secs(600);

impl Protocol for ConsulSession {
    /// A client's calls travel on its connection to the servers (through its local agent).
    const TRANSPORT: Transport = Transport::Stream;
    type Logic = Node;

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let mut p = LockServiceRoles {
            protocol: "ConsulSession",
            grantors: Grantors::ExactlyOne,
            grantor_is: "the Consul servers' leader",
            contender_is: "a client of api.Lock",
        }
        .check(scenario);
        let t = scenario.lease.duration;
        if t.ns() > 0 && (t < TTL_MIN || t > TTL_MAX) {
            p.push(format!(
                "lease.duration: {t} is the session TTL, which Consul takes from {TTL_MIN} \
                 (session_ttl_min) to {TTL_MAX}"
            ));
        }
        p.extend(check_config(&self.config, t));
        p
    }

    fn commands(&self) -> &'static [&'static str] {
        &["StepDown"]
    }

    fn renewal_loop(&self, role: Role) -> Option<&'static str> {
        (role == Role::Contender).then_some("the session's RenewPeriodic goroutine")
    }

    fn node_logic(&self, _node: NodeId, role: Role, params: &LeaseParams, disk: Disk) -> Node {
        match role {
            Role::Grantor => ServiceNode::Service(Leader::new(*params, self.config, disk)),
            _ => ServiceNode::Client(Client::new(self.config, *params)),
        }
    }
}

/// Every problem of the settings' fields, each with its field.
fn check_config(c: &ConsulConfig, t: LocalDur) -> Vec<String> {
    let mut p = Vec::new();
    let mult = c.ttl_multiplier;
    if mult == 0 {
        p.push("strategy.ttl_multiplier: must be at least 1 (got 0)".to_string());
    } else if c.reap_after(t).ns() > limits::MAX_DURATION_NS {
        p.push(format!(
            "strategy.ttl_multiplier: T x {mult} is above the limit of {} (see \
             docs/src/limits.md)",
            limits::dur(limits::MAX_DURATION_NS)
        ));
    }
    let d = c.lock_delay;
    if d < LocalDur::ZERO {
        p.push(format!(
            "strategy.lock_delay: must not be negative (got {d})"
        ));
    } else if d > LOCK_DELAY_MAX {
        p.push(format!(
            "strategy.lock_delay: {d} is above {LOCK_DELAY_MAX}, the most Consul takes \
             (structs.MaxLockDelay)"
        ));
    }
    for (field, w) in [("query_wait", c.query_wait), ("lock_wait", c.lock_wait)] {
        if w <= LocalDur::ZERO {
            p.push(format!("strategy.{field}: must be positive (got {w})"));
        } else if w > QUERY_WAIT_MAX {
            p.push(format!(
                "strategy.{field}: {w} is above {QUERY_WAIT_MAX}, the longest wait Consul \
                 grants a blocking query (max_query_time)"
            ));
        }
    }
    let mut positive = vec![("lock_retry", c.lock_retry)];
    if let Some(x) = c.rpc_timeout {
        positive.push(("rpc_timeout", x));
    }
    for (field, x) in positive {
        if x <= LocalDur::ZERO {
            p.push(format!("strategy.{field}: must be positive (got {x})"));
        } else if x.ns() > limits::MAX_DURATION_NS {
            p.push(format!(
                "strategy.{field}: {} is above the limit of {} (see docs/src/limits.md)",
                limits::dur(x.ns()),
                limits::dur(limits::MAX_DURATION_NS)
            ));
        }
    }
    p
}

/// What the servers' Raft log keeps across a change of leader (see [`leader`]).
#[derive(Clone, Debug, Default)]
pub struct Disk {
    /// The open sessions: (client node, session id). Not their timers.
    sessions: Vec<(NodeId, u64)>,
    /// The lock key.
    key: leader::LockKey,
    /// A lock-delay in progress: its end on the leader's monotonic clock (every server
    /// applies the invalidation and keeps its own).
    delay_until: Option<LocalTime>,
    /// The protected register.
    register: Register,
}

/// A node of a Consul cluster as this protocol sees it: the leader (the service) or a client.
pub type Node = ServiceNode<Leader, Client>;

/// The leader is the lock service: it grants, it never believes.
impl Service for Leader {
    type Msg = Message;
    type Disk = Disk;

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        Leader::on_start(self, cx, out);
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        Leader::on_message(self, cx, from, msg, out);
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        Leader::on_timer(self, cx, timer, out);
    }

    fn into_disk(self) -> Disk {
        Leader::into_disk(self)
    }
}

/// A client of `api.Lock`: its session's renewal loop, its lock and monitor calls, its work.
impl service_node::Client for Client {
    type Msg = Message;

    fn on_start(&mut self, cx: &Cx, out: &mut Out<Message>) {
        Client::on_start(self, cx, out);
    }

    fn on_message(&mut self, cx: &Cx, msg: Message, out: &mut Out<Message>) {
        Client::on_message(self, cx, msg, out);
    }

    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out<Message>) {
        Client::on_timer(self, cx, timer, out);
    }

    /// The leader's process is down ("No cluster leader"): the client's call fails at once.
    fn on_refused(&mut self, cx: &Cx, msg: Message, out: &mut Out<Message>) {
        Client::on_refused(self, cx, msg, out);
    }

    fn check(&self, _cx: &Cx) -> Option<Token> {
        self.held()
    }

    /// The check reads no clock.
    fn refuses_whatever_the_time(&self) -> bool {
        self.held().is_none()
    }

    fn on_request(&mut self, cx: &Cx, request: Request, token: Token, out: &mut Out<Message>) {
        Client::on_request(self, cx, request, token, out);
    }

    fn step_down(&mut self, cx: &Cx, out: &mut Out<Message>) {
        Client::step_down(self, cx, out);
    }

    fn belief(&self) -> Belief {
        Client::belief(self)
    }

    /// `RenewPeriodic`'s timer and the answers to its renewals are the renewal loop's.
    fn thread_of_timer(&self, timer: TimerId) -> Thread {
        client::thread_of_timer(timer)
    }

    fn thread_of_message(&self, msg: &Message) -> Thread {
        match msg {
            Message::RenewResult { .. } => Thread::Renewal,
            _ => Thread::Worker,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::settings::ConsulSession as Settings;
    use super::*;
    use crate::strategy::Settings as _;

    /// The protocol's own problems with a leader and `contenders` clients, T = `t`.
    fn problems(t: &str, strategy: &str, contenders: usize) -> Vec<String> {
        let clients: Vec<String> = (0..contenders)
            .map(|i| format!(r#"(name: "c{i}", role: Contender)"#))
            .collect();
        let s = Scenario::from_ron(&format!(
            r#"Scenario(duration: "60s", lease: (duration: "{t}"), strategy: {strategy},
                nodes: [(name: "l", role: Grantor), {}])"#,
            clients.join(", ")
        ))
        .unwrap();
        let settings: Settings = crate::scenario::ron_options()
            .from_str(&s.strategy.to_ron())
            .unwrap();
        settings.build().check(&s)
    }

    /// T from 10 s to 24 h; one leader and a client.
    #[test]
    fn the_ttl_is_within_consuls_bounds_and_a_client_is_needed() {
        assert!(problems("10s", "ConsulSession()", 1).is_empty());
        assert!(problems("24h", "ConsulSession()", 1).is_empty());
        assert_eq!(
            problems("9999999999ns", "ConsulSession()", 0),
            [
                "nodes: ConsulSession needs at least one Contender (a client of api.Lock)",
                "lease.duration: 9.999999999s is the session TTL, which Consul takes from 10s \
                 (session_ttl_min) to 86400s"
            ]
        );
    }

    /// Each bound of each field, alone: the edge accepted, one past it refused.
    #[test]
    fn every_field_is_checked_at_its_bounds() {
        let one = |fields: &str| problems("15s", &format!("ConsulSession({fields})"), 1);
        for ok in [
            r#"lock_delay: "0s""#,
            r#"lock_delay: "60s""#,
            r#"query_wait: "10m""#,
            r#"lock_wait: "1ns""#,
            r#"lock_retry: "1ns""#,
            "rpc_timeout: None",
            "ttl_multiplier: 1",
        ] {
            assert!(one(ok).is_empty(), "{ok}: {:?}", one(ok));
        }
        for (bad, said) in [
            (
                r#"lock_delay: "-1ns""#,
                "strategy.lock_delay: must not be negative (got -1ns)",
            ),
            (
                r#"lock_delay: "60000000001ns""#,
                "strategy.lock_delay: 60.000000001s is above 60s, the most Consul takes \
                 (structs.MaxLockDelay)",
            ),
            (
                r#"lock_wait: "0s""#,
                "strategy.lock_wait: must be positive (got 0s)",
            ),
            (
                r#"lock_retry: "0s""#,
                "strategy.lock_retry: must be positive (got 0s)",
            ),
            (
                "ttl_multiplier: 0",
                "strategy.ttl_multiplier: must be at least 1 (got 0)",
            ),
        ] {
            assert_eq!(one(bad), [said], "{bad}");
        }
        // T x multiplier past the longest run.
        let p = one("ttl_multiplier: 300000");
        assert!(p[0].starts_with("strategy.ttl_multiplier: T x 300000 is above the limit"));
    }

    /// A blocking GET of 16 s sent at 1 s fails at 1 + 16 + 1 + 7 = 25 s; a call that does not
    /// block at 1 + 7 = 8 s; with no RPC timeout, never.
    #[test]
    fn a_call_fails_rpc_timeout_after_its_wait_and_jitter() {
        let mut c = ConsulConfig {
            ttl_multiplier: 2,
            lock_delay: LocalDur::from_secs(15),
            renew: RenewPolicy::RetryEverySecond,
            query_wait: LocalDur::from_secs(300),
            lock_wait: LocalDur::from_secs(15),
            lock_retry: LocalDur::from_secs(5),
            rpc_timeout: Some(LocalDur::from_secs(7)),
        };
        let at = LocalTime::from_ns(1_000_000_000);
        let s = |n: i64| Some(LocalTime::from_ns(n * 1_000_000_000));
        assert_eq!(c.deadline(at, LocalDur::from_secs(16)), s(25));
        assert_eq!(c.deadline(at, LocalDur::ZERO), s(8));
        c.rpc_timeout = None;
        assert_eq!(c.deadline(at, LocalDur::ZERO), None);
        assert_eq!(
            c.reap_after(LocalDur::from_secs(15)),
            LocalDur::from_secs(30)
        );
    }
}
