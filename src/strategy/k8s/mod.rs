//! Kubernetes leader election as client-go runs it (SPEC 2.8; `tools/leaderelection`).
//!
//! The one `Grantor` is the API server ([`server`]): it stores the Lease record (holder,
//! acquire and renew times, LeaseDurationSeconds, leaseTransitions) with a resourceVersion,
//! answers `Get` with `Record`, and applies an `Update` iff the resourceVersion it carries is
//! still current, answering `UpdateReply`. It decides nothing about time. Every `Contender` is a
//! candidate ([`candidate`]) running `tryAcquireOrRenew`: Get; if the record's content changed
//! since its last Get, observedTime = now on its own monotonic clock; if another holds it and
//! observedTime + T > now (`now` taken when the try began, as client-go does), give up this try;
//! else Update (holder = self, renewTime from its wall clock, which nobody compares). Its own
//! record is always renewable.
//!
//! Timing, on the candidate's monotonic clock:
//! - Not leading, it tries at start and then every retry_period * (1 + U[0, jitter_factor)) (a
//!   fresh draw from its own stream, whole nanoseconds), counted from the end of the previous
//!   try (JitterUntil is sliding). API requests have no timeout of their own; a try still
//!   unanswered one period after it began is given up then and the next begins (client-go would
//!   wait for its HTTP client to give up; without this a candidate whose Get was lost would never
//!   try again). A late answer to a try given up is ignored.
//! - After each success (the acquiring Update included) the leader sleeps retry_period, then
//!   opens a renew cycle: a try at once and one at every open + k * retry_period (a tick that
//!   falls while a try is outstanding starts the next try as soon as that one fails, as Go's
//!   ticker keeps one tick), until one succeeds (sleep again) or open + renew_deadline, a timer
//!   that fires whether or not a request is outstanding: then it stops leading. A cycle opens
//!   when the process runs it: after a pause, at resume. A try that finds another holder fails
//!   only that try. (client-go's `renew()` opens its first cycle at once after acquiring; SPEC
//!   2.8 has the leader sleep after every success, the acquisition too, and so does leasesim.)
//! - A leader that stops leading goes back to the acquire loop at once, with the same identity
//!   (an application that runs the elector again); a node that crashed and restarted is a new
//!   identity (client-go's `hostname_uuid`), so it waits out its predecessor's lease like anyone.
//!
//! Beliefs: a leader believes both authorities, as a [`Belief::Bool`](crate::strategy::Belief::Bool), from the answer to its
//! successful Update until its renew loop gives up: that is the context client-go cancels, not
//! a clock check on use. It serves reads and writes meanwhile; a candidate rejects requests.
//!
//! Tokens: leaseTransitions + 1. The record's leaseTransitions grows by one at every change of
//! holder, so the token orders leaderships as Kubernetes itself does; a renewal (and a leader
//! taking its own record back) keeps it. The API server emits [`Effect::Issued`](crate::strategy::Effect::Issued) when an Update
//! it applies changes the holder, [`Effect::Renewed`](crate::strategy::Effect::Renewed) otherwise. Their `until`, which only
//! traces and timelines show, is the record's nominal end: apply time + T on the API server's
//! monotonic clock, the earliest a candidate that saw the change at once, with a clock at the
//! server's rate, could take over. The oracle's slack is measured between beliefs, so how far
//! a new leader starts after that nominal end is the observers' lag, and how far before it the
//! old leader stopped is the margin T - renew_deadline - retry_period bought.
//!
//! The protected resource lives at the API server (controllers write through it) and survives
//! its crash, like the Lease record (etcd keeps both). `resource.fencing: true` makes it reject
//! a write whose token (leaseTransitions + 1) is older than the newest applied: an admission
//! check Kubernetes does not have, offered to show what fencing by leaseTransitions would stop.
//! `lease.grantor_restart: Forget` makes a restarted API server lose the record (etcd data
//! loss); the default keeps it. `lease.renew_every` and `lease.retry_every` are not used: the
//! strategy's retry_period and renew_deadline replace them.

pub mod candidate;
pub mod msg;
pub mod server;

use super::{Beliefs, Cx, LeaseParams, NodeLogic, Out, Protocol, Request, TimerId};
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario, StrategySpec};
use crate::time::LocalDur;
use candidate::Candidate;
pub use msg::Message;
use server::{ApiServer, Disk};

/// `K8sLeaderElection`'s parameters (see [`crate::scenario::StrategySpec::K8sLeaderElection`]).
#[derive(Clone, Copy, Debug)]
pub struct K8sConfig {
    /// RenewDeadline: a renew cycle gives up this long after it opened.
    pub renew_deadline: LocalDur,
    /// RetryPeriod: the leader's try period, and candidates' before jitter.
    pub retry_period: LocalDur,
    /// jitter_factor in parts per million (1.2 is 1,200,000).
    pub jitter_ppm: i64,
}

/// Kubernetes leader election with its parameters.
#[derive(Clone, Debug)]
pub struct K8sLeaderElection {
    config: K8sConfig,
    description: String,
}

impl K8sLeaderElection {
    pub fn new(config: K8sConfig, description: String) -> K8sLeaderElection {
        K8sLeaderElection {
            config,
            description,
        }
    }
}

impl Protocol for K8sLeaderElection {
    type Logic = K8sNode;

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        let count = |role| scenario.nodes.iter().filter(|n| n.role == role).count();
        let servers = count(Role::Grantor);
        if servers != 1 {
            p.push(format!(
                "nodes: K8sLeaderElection needs exactly one Grantor, the API server (found \
                 {servers})"
            ));
        }
        if count(Role::Contender) == 0 {
            p.push("nodes: K8sLeaderElection needs at least one Contender (a candidate)".into());
        }
        if count(Role::Replica) > 0 {
            p.push(
                "nodes: K8sLeaderElection has no Replica role (it takes one Grantor, the API \
                 server, and Contenders)"
                    .into(),
            );
        }
        // client-go's NewLeaderElector: every duration positive, LeaseDuration > RenewDeadline
        // > JitterFactor * RetryPeriod.
        let (t, c) = (scenario.lease.duration, &self.config);
        for (field, d) in [
            ("renew_deadline", c.renew_deadline),
            ("retry_period", c.retry_period),
        ] {
            if d <= LocalDur::ZERO {
                p.push(format!(
                    "strategy.{field}: must be greater than zero, as client-go requires (got {d})"
                ));
            }
        }
        if c.renew_deadline >= t {
            p.push(format!(
                "strategy.renew_deadline: must be shorter than the lease (lease.duration, \
                 client-go's LeaseDuration: {t}), as client-go requires (got {})",
                c.renew_deadline
            ));
        }
        let jitter_factor = match scenario.strategy {
            StrategySpec::K8sLeaderElection { jitter_factor, .. } => Some(jitter_factor),
            _ => None,
        };
        let factor = jitter_factor.map_or_else(
            || format!("{}", c.jitter_ppm as f64 / 1e6),
            |f| format!("{f}"),
        );
        if jitter_factor.is_some_and(|f| !f.is_finite()) || c.jitter_ppm < 0 {
            p.push(format!(
                "strategy.jitter_factor: must be a number at least 0 (got {factor})"
            ));
        } else if c.renew_deadline.ns() as i128 * 1_000_000
            <= c.retry_period.ns() as i128 * c.jitter_ppm as i128
        {
            p.push(format!(
                "strategy.renew_deadline: must be greater than jitter_factor x retry_period = \
                 {factor} x {}, as client-go requires (got {})",
                c.retry_period, c.renew_deadline
            ));
        }
        p
    }

    fn node_logic(&self, node: NodeId, role: Role, params: &LeaseParams, disk: Disk) -> K8sNode {
        match role {
            Role::Grantor => K8sNode::Server(ApiServer { p: *params, disk }),
            _ => K8sNode::Candidate(Candidate::new(self.config, *params, node)),
        }
    }
}

/// A node of Kubernetes leader election: the API server or a candidate.
pub enum K8sNode {
    Server(ApiServer),
    Candidate(Candidate),
}

impl NodeLogic for K8sNode {
    type Msg = Message;
    /// The API server's etcd: the Lease record and the protected resource.
    type Disk = Disk;

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        match self {
            K8sNode::Server(s) => s.on_start(cx),
            K8sNode::Candidate(c) => c.on_start(cx, out),
        }
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match self {
            K8sNode::Server(s) => s.on_message(cx, from, msg, out),
            K8sNode::Candidate(c) => c.on_message(cx, msg, out),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        if let K8sNode::Candidate(c) = self {
            c.on_timer(cx, timer, out);
        }
    }

    fn check(&self, _cx: &Cx, _request: Request) -> Option<Token> {
        match self {
            K8sNode::Server(_) => None,
            K8sNode::Candidate(c) => c.check(),
        }
    }

    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<Message>) {
        if let K8sNode::Candidate(c) = self {
            c.on_request(cx, request, token, out);
        }
    }

    fn beliefs(&self) -> Beliefs {
        match self {
            K8sNode::Server(_) => Beliefs::NONE,
            K8sNode::Candidate(c) => Beliefs::both(c.belief()),
        }
    }

    fn into_disk(self) -> Disk {
        match self {
            K8sNode::Server(s) => s.disk,
            K8sNode::Candidate(_) => Disk::default(),
        }
    }
}
