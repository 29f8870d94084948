//! etcd's lease API and the lock built on it (`EtcdLease`): every `Replica` is an etcd member,
//! every `Contender` a client that wants one lock through a session.
//!
//! The members run Raft ([`replication`]) over a log whose entries grant, revoke and checkpoint
//! leases, put the lock's keys and the protected key ([`msg::Op`]); every member applies them
//! into the same table ([`table`]). Only the leader's lessor times leases ([`lessor`]): it
//! renews a lease on a client's KeepAlive, hands one past its expiry to be revoked (a proposal
//! that takes effect when applied), and, promoted, extends every lease by the election timeout.
//! A client ([`client`]) keeps its session's lease alive and holds the lock while its key is
//! the oldest under the lock's prefix (clientv3 `concurrency.Mutex`); the key's create
//! revision (here, the index of the entry that created it) is the lock's token. The leader
//! issues the lock to the owner of the oldest key when the entry that makes it so is applied.
//!
//! What the model leaves out is listed in the book's page on the protocol.

pub mod client;
pub mod lessor;
pub mod member;
pub mod msg;
pub mod replication;
pub mod settings;
pub mod table;

use super::{Authorities, Beliefs, Command, Cx, LeaseParams, NodeLogic, Out, Protocol, Request};
use super::{Thread, TimerId, Transport};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::strategy::raft_core::{self, ELECTION};
use crate::time::LocalDur;
pub use client::Client;
pub use member::{Member, MemberDisk};
pub use msg::Message;

/// A lease's id: the index of the entry that granted it.
pub type LeaseId = u64;

/// `EtcdLease`'s parameters (see [`settings::EtcdLease`]).
#[derive(Clone, Copy, Debug)]
pub struct EtcdConfig {
    /// `--election-timeout`; also what a new leader extends every lease by.
    pub election_timeout: LocalDur,
    /// `--heartbeat-interval`: the leader's heartbeat and Raft's tick.
    pub heartbeat: LocalDur,
    /// The lock checks its own key after waiting (the fix of etcd issues 9921 and 11456).
    pub check_own_key: bool,
    /// A lessor's revoke is proposed only while the member leads (etcd PR 16822).
    pub ensure_leadership: bool,
    /// Lease checkpointing (`--experimental-enable-lease-checkpoint`) and its interval.
    pub checkpoint_interval: Option<LocalDur>,
    /// The clock the lessor times leases on (the wall clock: etcd issue 12291).
    pub expiry_clock: ClockKind,
    /// The application stops acting when its session ends (`Session.Done()`).
    pub app_watches_session: bool,
}

impl EtcdConfig {
    /// The shortest TTL a member grants: 1.5 election timeouts counted in heartbeats (integer
    /// ticks), rounded up to whole seconds (etcd `server/etcdserver/server.go`, `minTTL`).
    pub fn min_ttl(&self) -> LocalDur {
        let ticks = self.election_timeout.ns() / self.heartbeat.ns().max(1);
        let min = LocalDur::from_ns((3 * ticks / 2) * self.heartbeat.ns());
        lessor::ceil_secs(min)
    }
}

/// etcd's lease API with its parameters.
#[derive(Clone, Debug)]
pub struct EtcdLease {
    config: EtcdConfig,
    description: String,
}

impl EtcdLease {
    pub fn new(config: EtcdConfig, description: String) -> EtcdLease {
        EtcdLease {
            config,
            description,
        }
    }
}

/// A node: a member or a client.
pub enum Node {
    Member(Box<Member>),
    Client(Box<Client>),
}

impl Protocol for EtcdLease {
    /// gRPC streams between clients and members, and between members.
    const TRANSPORT: Transport = Transport::Stream;
    type Logic = Node;

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn authorities(&self) -> Authorities {
        Authorities::ONE_LEASE
    }

    /// A replica writes Raft's term, vote and log before it answers.
    fn persists(&self, role: Role) -> Option<&'static str> {
        (role == Role::Replica).then_some("Raft's term, vote and log")
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        let count = |role| scenario.nodes.iter().filter(|n| n.role == role).count();
        if count(Role::Replica) == 0 {
            p.push("nodes: EtcdLease needs at least one Replica (an etcd member)".into());
        }
        if count(Role::Contender) == 0 {
            p.push("nodes: EtcdLease needs at least one Contender (a client)".into());
        }
        if count(Role::Grantor) > 0 {
            p.push(
                "nodes: EtcdLease has no Grantor role (it takes Replicas, the etcd members, and \
                 Contenders, the clients)"
                    .into(),
            );
        }
        let t = scenario.lease.duration;
        if t.ns() % 1_000_000_000 != 0 {
            p.push(format!(
                "lease.duration: an etcd lease's TTL is whole seconds (got {t})"
            ));
        }
        if scenario.resource.fencing {
            p.push(
                "resource.fencing: EtcdLease writes are Puts through etcd's log; a Txn guarded \
                 by the lock key's revision is not modelled"
                    .into(),
            );
        }
        p
    }

    /// The members serve the clients, not the workload: requests go to the clients alone.
    fn takes_requests(&self, role: Role) -> bool {
        role == Role::Contender
    }

    fn commands(&self) -> &'static [&'static str] {
        &["StepDown"]
    }

    fn renewal_loop(&self, role: Role) -> Option<&'static str> {
        match role {
            Role::Replica => Some("the lessor's loop (KeepAlives and expiry)"),
            Role::Contender => Some("the session's keep-alive loop"),
            Role::Grantor => None,
        }
    }

    fn node_logic(&self, node: NodeId, role: Role, params: &LeaseParams, disk: MemberDisk) -> Node {
        match role {
            Role::Replica => {
                let first = params.initial_leader == Some(node);
                Node::Member(Box::new(Member::new(self.config, node, disk, first)))
            }
            _ => Node::Client(Box::new(Client::new(self.config, *params))),
        }
    }
}

impl NodeLogic for Node {
    type Msg = Message;
    type Disk = MemberDisk;

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        match self {
            Node::Member(m) => {
                raft_core::persisting(m, |m| &m.core, out, |m, out| m.on_start(cx, out))
            }
            Node::Client(c) => c.on_start(cx, out),
        }
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match self {
            Node::Member(m) => raft_core::persisting(
                m,
                |m| &m.core,
                out,
                |m, out| on_member_message(m, cx, from, msg, out),
            ),
            Node::Client(c) => c.on_message(cx, msg, out),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match self {
            Node::Member(m) => raft_core::persisting(
                m,
                |m| &m.core,
                out,
                |m, out| match timer {
                    ELECTION => m.election_timeout(cx, out),
                    member::HEARTBEAT if m.core.is_leader() => m.heartbeat_round(cx, out),
                    member::CHECK_QUORUM => m.check_quorum(cx, out),
                    member::LESSOR => m.lessor_tick(cx, out),
                    member::PROPOSE => m.take_queued(cx, out),
                    _ => {}
                },
            ),
            Node::Client(c) => c.on_timer(cx, timer, out),
        }
    }

    fn check(&self, _cx: &Cx, _request: Request) -> Option<Token> {
        match self {
            Node::Member(_) => None,
            Node::Client(c) => c.check(),
        }
    }

    /// The check reads no clock: it refuses whatever the time exactly when it refuses now.
    fn refuses_whatever_the_time(&self, _request: Request) -> bool {
        match self {
            Node::Member(_) => true,
            Node::Client(c) => c.check().is_none(),
        }
    }

    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<Message>) {
        if let Node::Client(c) = self {
            c.on_request(cx, request, token, out);
        }
    }

    fn on_command(&mut self, cx: &mut Cx, command: Command, out: &mut Out<Message>) {
        if let (Node::Member(m), Command::StepDown) = (self, command) {
            raft_core::persisting(m, |m| &m.core, out, |m, out| m.step_down(cx, out));
        }
    }

    fn thread_of_timer(&self, timer: TimerId) -> Thread {
        match self {
            Node::Member(_) if timer == member::LESSOR => Thread::Renewal,
            Node::Member(_) => Thread::Worker,
            Node::Client(c) => c.thread_of_timer(timer),
        }
    }

    fn thread_of_message(&self, msg: &Message) -> Thread {
        match self {
            Node::Member(_) => match msg {
                Message::KeepAlive { .. }
                | Message::RenewFwd { .. }
                | Message::RenewFwdResp { .. } => Thread::Renewal,
                _ => Thread::Worker,
            },
            Node::Client(c) => c.thread_of_message(msg),
        }
    }

    fn beliefs(&self) -> Beliefs {
        match self {
            Node::Member(_) => Beliefs::NONE,
            Node::Client(c) => Beliefs::both(c.belief()),
        }
    }

    fn into_disk(self) -> MemberDisk {
        match self {
            Node::Member(m) => m.into_disk(),
            Node::Client(_) => MemberDisk::default(),
        }
    }

    /// A member writes its Raft state (the lessor's grants, revokes and checkpoints are in
    /// its log) and its applied table; a client nothing.
    fn disk_image(&self) -> Option<MemberDisk> {
        match self {
            Node::Member(m) => Some(m.disk_image()),
            Node::Client(_) => None,
        }
    }
}

/// A member's message: Raft's on the Raft loop, a client's call or watch, a KeepAlive on the
/// lessor's loop, a forwarded proposal or answer. Raft's transports never hand a message up
/// twice; a second copy is dropped.
fn on_member_message(
    m: &mut Member,
    cx: &mut Cx,
    from: NodeId,
    msg: Message,
    out: &mut Out<Message>,
) {
    if !raft_core::first_copy(cx) {
        return;
    }
    match msg {
        Message::Call { req, call } => m.on_call(cx, from, req, call, out),
        Message::KeepAlive { lease } => {
            let via = m.core.node;
            m.keepalive(
                cx,
                lessor::Held {
                    lease,
                    client: from,
                    via,
                },
                out,
            )
        }
        Message::RenewFwd { lease, client } => m.keepalive(
            cx,
            lessor::Held {
                lease,
                client,
                via: from,
            },
            out,
        ),
        Message::RenewFwdResp { lease, client, ttl } => {
            out.send(client, Message::KeepAliveResp { lease, ttl })
        }
        Message::WaitDeletes { rev } => m.wait_deletes(from, rev, out),
        Message::Propose { op } => m.propose(cx, op, out),
        Message::Relay { client, req, reply } => out.send(client, Message::Answer { req, reply }),
        Message::RequestVote(r) => m.on_request_vote(cx, from, r, out),
        Message::Vote { term, granted, pre } => m.on_vote(cx, from, (term, granted, pre), out),
        Message::Append(a) => m.on_append(cx, from, a, out),
        Message::Snapshot(s) => m.on_snapshot(cx, from, *s, out),
        Message::AppendAck {
            term,
            success,
            index,
        } => m.on_append_ack(cx, from, (term, success, index), out),
        Message::Answer { .. } | Message::KeepAliveResp { .. } | Message::Turn { .. } => {}
    }
}
