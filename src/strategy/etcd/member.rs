//! An etcd member: a Raft replica (its log replicated by [`super::replication`]), the table its
//! log builds ([`Table`]), its lessor ([`Lessor`]), and what it serves its clients.
//!
//! A member runs two loops, as etcd does. The *Raft loop* (the worker) handles Raft's messages,
//! persists, sends, applies, answers calls and takes the lessor's proposals; etcd's `raftNode`
//! loop blocks on its disk when `fdatasync` stalls, and so does this one under a worker
//! `ThreadStall`. The *lessor loop* (the renewal loop) renews leases on KeepAlives and, every
//! 500 ms, hands the leases past their expiry to be revoked; it runs on while the Raft loop is
//! stuck (etcd issue 15247: the stuck leader's lessor, still primary, expires every lease its
//! clients renew elsewhere).
//!
//! A client's call arrives at the member it is connected to. One that goes through the log
//! (`LeaseGrant`, the lock's `Txn`, a `Put`) is appended there if the member leads, else
//! forwarded to the leader (etcd-io/raft forwards proposals, `MsgProp`); the leader answers it
//! once its entry is applied, through the member that forwarded it. A KeepAlive is renewed by
//! the member's lessor if primary, else forwarded to the leader (etcd's `LeaseRenew` over
//! HTTP). A lock waiter's `waitDeletes` is a watch the member serves from what it has applied.
//!
//! The lessor's proposals (revokes, checkpoints) go to the Raft loop, which appends them if it
//! leads. If it does not, a revoke is dropped with `ensure_leadership` (etcd PR 16822, the fix
//! of issue 15247: a lessor's revoke is proposed only after the member confirms it still
//! leads), and forwarded to the leader without it, as etcd did before: the deposed leader's
//! revokes then commit at the new leader.

use super::lessor::{Held, Lessor, Renew, LESSOR_TICK};
use super::msg::{Call, Entry, Forwarded, Message, Op, Origin, Reply};
use super::table::Table;
use super::EtcdConfig;
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::strategy::raft_core::{self, RaftCore};
use crate::strategy::{Ack, Cx, Fact, Out, Store};
use crate::time::{LocalDur, LocalTime};
use std::collections::BTreeMap;

/// The leader's heartbeat round.
pub(super) const HEARTBEAT: crate::strategy::TimerId = 1;
/// The leader's check that it heard from a quorum in the last election timeout.
pub(super) const CHECK_QUORUM: crate::strategy::TimerId = 2;
/// The lessor's loop (every [`LESSOR_TICK`]).
pub(super) const LESSOR: crate::strategy::TimerId = 3;
/// The Raft loop takes the lessor's proposals.
pub(super) const PROPOSE: crate::strategy::TimerId = 4;

/// Proposals a member queues at most for its Raft loop; past that the lessor's are dropped (it
/// hands an expired lease again 3 s later).
const MAX_QUEUED: usize = 1024;
/// Lock waiters a member keeps at most (one per client and revision).
const MAX_WAITERS: usize = 1024;

/// What a member keeps across a crash: Raft's state, and the table applied through `applied`
/// (etcd's backend, written as entries are applied).
#[derive(Clone, Debug, Default)]
pub struct MemberDisk {
    pub(super) raft: raft_core::Disk<Op>,
    pub(super) table: Table,
    pub(super) applied: u64,
}

/// What the leader keeps of one follower besides what it stores.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Peer {
    /// The next index to send.
    pub next: u64,
    /// An append with entries is on its way and not acknowledged (one at a time).
    pub awaiting: bool,
    /// Heard from since the last check-quorum round.
    pub heard: bool,
}

/// An etcd member.
pub struct Member {
    pub(super) c: EtcdConfig,
    pub(super) core: RaftCore<Op, Peer>,
    /// The leases and the lock's keys, applied through index `applied`.
    pub(super) table: Table,
    pub(super) applied: u64,
    pub(super) lessor: Lessor,
    /// As leader: the calls waiting for their entry to be applied, by index.
    pub(super) answers: BTreeMap<u64, Origin>,
    /// The lessor's proposals waiting for the Raft loop.
    pub(super) queued: Vec<Op>,
    /// Lock waiters: (client, the revision of its key), answered once no older key is left.
    pub(super) waiters: Vec<(NodeId, Token)>,
    /// The scenario's initial leader: it campaigns at its first start.
    pub(super) leads_first: bool,
}

impl Member {
    pub(super) fn new(c: EtcdConfig, node: NodeId, disk: MemberDisk, leads_first: bool) -> Member {
        let election =
            raft_core::Election::new(c.election_timeout, c.election_timeout, Some(c.heartbeat));
        let mut core = RaftCore::new(node, disk.raft, election);
        core.pre_vote = true;
        // Its lessor and key table apply the committed entries: the core keeps them until then.
        core.user_applied_through(disk.applied.min(core.commit()));
        Member {
            lessor: Lessor::new(c.checkpoint_interval),
            c,
            core,
            table: disk.table,
            applied: disk.applied,
            answers: BTreeMap::new(),
            queued: Vec::new(),
            waiters: Vec::new(),
            leads_first,
        }
    }

    /// What its disk holds once what it wrote is durable.
    pub(super) fn disk_image(&self) -> MemberDisk {
        MemberDisk {
            raft: self.core.disk_image(),
            table: self.table.clone(),
            applied: self.applied,
        }
    }

    pub(super) fn into_disk(self) -> MemberDisk {
        MemberDisk {
            raft: self.core.into_disk(),
            table: self.table,
            applied: self.applied,
        }
    }

    /// The lessor's clock now.
    pub(super) fn lessor_now(&self, cx: &Cx) -> LocalTime {
        cx.read(self.c.expiry_clock)
    }

    /// A lone member campaigns at once; so does the initial leader at its first start. Every
    /// other waits out its election timer. The lessor's loop starts with the member.
    pub(super) fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.core.election.start(cx.mono);
        out.set_timer(LESSOR, ClockKind::Monotonic, cx.mono + LESSOR_TICK);
        let members = cx.peers(crate::scenario::Role::Replica).count();
        if members == 1 {
            self.campaign(cx, out);
        } else if self.leads_first && self.core.term == 0 {
            self.election_timeout(cx, out);
        } else {
            self.core.election.arm(cx, out);
        }
    }

    /// A client's call: appended if this member leads, else forwarded to the leader.
    pub(super) fn on_call(
        &mut self,
        cx: &mut Cx,
        client: NodeId,
        req: u64,
        call: Call,
        out: &mut Out<Message>,
    ) {
        let entry = match call {
            Call::Grant { ttl } => op_entry(Op::Grant { ttl }),
            Call::Lock { lease } => op_entry(Op::Lock { lease, client }),
            Call::Get { rev } => op_entry(Op::Get { rev }),
            Call::Put { key, value, token } => Entry {
                writer: Some(client),
                key,
                value,
                extra: Op::Put { token },
                ..Entry::default()
            },
        };
        let origin = Some(Origin {
            client,
            via: self.core.node,
            req,
        });
        self.propose(cx, Forwarded { entry, origin }, out);
    }

    /// Appends `f` if leading, else forwards it to the leader it knows (dropped if none: the
    /// client asks again).
    pub(super) fn propose(&mut self, cx: &mut Cx, f: Forwarded, out: &mut Out<Message>) {
        if self.core.is_leader() {
            self.append(cx, f, out);
        } else if let Some(leader) = self.core.leader.filter(|&l| l != self.core.node) {
            out.send(leader, Message::Propose { op: f });
        }
    }

    /// Answers call `origin` with `reply`: to the client if it called this member, else
    /// through the member it called.
    pub(super) fn answer(&self, origin: Origin, reply: Reply, out: &mut Out<Message>) {
        let Origin { client, via, req } = origin;
        if via == self.core.node {
            out.send(client, Message::Answer { req, reply });
        } else {
            out.send(via, Message::Relay { client, req, reply });
        }
    }

    /// A KeepAlive of `h.lease`, from a client of this member or forwarded by another.
    pub(super) fn keepalive(&mut self, cx: &mut Cx, h: Held, out: &mut Out<Message>) {
        let now = self.lessor_now(cx);
        match self.lessor.renew(now, h, &self.table) {
            Renew::Renewed {
                ttl,
                until,
                clear_checkpoint,
            } => {
                self.keepalive_answer(h, Some(ttl), out);
                if clear_checkpoint {
                    let remaining = LocalDur::ZERO;
                    self.queue(
                        cx,
                        Op::Checkpoint {
                            lease: h.lease,
                            remaining,
                        },
                        out,
                    );
                }
                if let Some((token, key)) = self.table.owner() {
                    if key.lease == h.lease {
                        let clock = self.c.expiry_clock;
                        out.report(Fact::RenewedOn {
                            token,
                            clock,
                            until,
                        });
                    }
                }
            }
            Renew::NotFound => self.keepalive_answer(h, None, out),
            Renew::Held => {}
            Renew::NotPrimary => {
                let leader = self.core.leader.filter(|&l| l != self.core.node);
                if let (Some(leader), true) = (leader, h.via == self.core.node) {
                    let msg = Message::RenewFwd {
                        lease: h.lease,
                        client: h.client,
                    };
                    out.send(leader, msg);
                }
            }
        }
    }

    /// The answer to KeepAlive `h`: its TTL, or `None` for a lease not found.
    pub(super) fn keepalive_answer(&self, h: Held, ttl: Option<LocalDur>, out: &mut Out<Message>) {
        let (lease, client) = (h.lease, h.client);
        if h.via == self.core.node {
            out.send(client, Message::KeepAliveResp { lease, ttl });
        } else {
            out.send(h.via, Message::RenewFwdResp { lease, client, ttl });
        }
    }

    /// The lessor's loop: the leases past their expiry go to be revoked, due checkpoints to be
    /// proposed.
    pub(super) fn lessor_tick(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        out.set_timer(LESSOR, ClockKind::Monotonic, cx.mono + LESSOR_TICK);
        let now = self.lessor_now(cx);
        for lease in self.lessor.expired(now) {
            self.queue(cx, Op::Revoke { lease }, out);
        }
        for (lease, remaining) in self.lessor.due_checkpoints(now, &self.table) {
            self.queue(cx, Op::Checkpoint { lease, remaining }, out);
        }
    }

    /// Hands a proposal of the lessor to the Raft loop.
    fn queue(&mut self, cx: &Cx, op: Op, out: &mut Out<Message>) {
        if self.queued.len() < MAX_QUEUED {
            self.queued.push(op);
            out.set_timer(PROPOSE, ClockKind::Monotonic, cx.mono);
        }
    }

    /// The Raft loop takes the lessor's proposals: appended if it leads; if not, a revoke is
    /// dropped with `ensure_leadership` and forwarded without it, as is a checkpoint.
    pub(super) fn take_queued(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        for op in std::mem::take(&mut self.queued) {
            let revoke = matches!(op, Op::Revoke { .. });
            if !self.core.is_leader() && revoke && self.c.ensure_leadership {
                continue;
            }
            let f = Forwarded {
                entry: op_entry(op),
                origin: None,
            };
            self.propose(cx, f, out);
        }
    }

    /// A lock waiter of this member: answered at once if no older key is left, else when one
    /// is applied that leaves none.
    pub(super) fn wait_deletes(&mut self, client: NodeId, rev: Token, out: &mut Out<Message>) {
        if !self.waiters.contains(&(client, rev)) && self.waiters.len() < MAX_WAITERS {
            self.waiters.push((client, rev));
        }
        self.serve_waiters(out);
    }

    /// What the member's state holds, as of the entries it applied.
    fn values(&self) -> Store {
        self.core.applied().clone().as_of(self.core.commit())
    }

    /// Answers every waiter with no older key left.
    pub(super) fn serve_waiters(&mut self, out: &mut Out<Message>) {
        let table = &self.table;
        let values = self.values();
        self.waiters.retain(|&(client, rev)| {
            if !table.none_before(rev) {
                return true;
            }
            let values = values.clone();
            out.send(client, Message::Turn { rev, values });
            false
        });
    }

    /// Applies every committed entry not applied yet, then serves the waiters.
    pub(super) fn apply_committed(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        while self.applied < self.core.commit() {
            self.applied += 1;
            let index = self.applied;
            match self.core.log.entry(index) {
                Some(e) => self.apply(cx, index, e, out),
                None => debug_assert!(false, "entry {index} compacted before it was applied"),
            }
        }
        self.core.user_applied_through(self.applied);
        self.serve_waiters(out);
    }

    /// Applies entry `index`; the lock's new owner, if it changed, is issued.
    fn apply(&mut self, cx: &mut Cx, index: u64, e: Entry, out: &mut Out<Message>) {
        let now = self.lessor_now(cx);
        let reply = match e.extra {
            Op::Grant { ttl } => {
                let ttl = ttl.max(self.c.min_ttl());
                self.table.grant(index, ttl);
                self.lessor.granted(now, index, ttl);
                Some(Reply::Granted { lease: index, ttl })
            }
            Op::Revoke { lease } => {
                self.table.revoke(lease);
                for h in self.lessor.revoked(lease) {
                    self.keepalive_answer(h, None, out);
                }
                None
            }
            Op::Lock { lease, client } => Some(match self.table.lock(index, lease, client) {
                Some(l) => Reply::Locked {
                    rev: l.rev,
                    owner: l.owner,
                    values: self.values(),
                },
                None => Reply::LeaseNotFound,
            }),
            Op::Checkpoint { lease, remaining } => {
                self.table.checkpoint(lease, remaining);
                self.lessor.checkpointed(now, lease, &self.table);
                None
            }
            Op::Put { .. } => Some(Reply::Written(Ack {
                key: e.key,
                value: e.value,
                seq: index,
            })),
            Op::Get { rev } => Some(Reply::Key {
                exists: self.table.has_key(rev),
                values: self.values(),
            }),
            Op::Empty => None,
        };
        if let (Some(reply), Some(origin)) = (reply, self.answers.remove(&index)) {
            self.answer(origin, reply, out);
        }
        self.issue_owner(cx, now, out);
    }

    /// The lock's owner, if it is newer than every owner issued in the run: issued now, free
    /// again when its lease expires by this member's lessor (or a TTL from now). The first
    /// member to apply an owner's key is the leader that committed it; the run's token keeps a
    /// member that applies it later (or again, after a restart) from issuing it twice.
    fn issue_owner(&mut self, cx: &mut Cx, now: LocalTime, out: &mut Out<Message>) {
        let Some((token, key)) = self.table.owner() else {
            return;
        };
        if token <= *cx.run_token {
            return;
        }
        *cx.run_token = token;
        let ttl = self
            .table
            .lease(key.lease)
            .map_or(LocalDur::ZERO, |r| r.ttl);
        let until = self.lessor.expiry(key.lease).unwrap_or(now + ttl);
        out.report(Fact::IssuedOn {
            token,
            to: key.client,
            clock: self.c.expiry_clock,
            until,
        });
    }

    /// Leading: the lessor is promoted (every lease extended by the election timeout), and the
    /// owner's lease renewed with it.
    pub(super) fn promote(&mut self, cx: &Cx, out: &mut Out<Message>) {
        let now = self.lessor_now(cx);
        self.lessor
            .promote(now, self.c.election_timeout, &self.table);
        if let Some((token, key)) = self.table.owner() {
            if let Some(until) = self.lessor.expiry(key.lease) {
                let clock = self.c.expiry_clock;
                out.report(Fact::RenewedOn {
                    token,
                    clock,
                    until,
                });
            }
        }
    }

    /// No longer leading: the lessor is demoted, and the calls waiting for their entries are
    /// answered no more (their clients ask again).
    pub(super) fn demote(&mut self) {
        self.lessor.demote();
        self.answers.clear();
    }
}

/// An entry that carries `op` alone.
pub(super) fn op_entry(op: Op) -> Entry {
    Entry {
        extra: op,
        ..Entry::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Role;
    use crate::strategy::{call_for_test, Action};

    const ROLES: &[Role] = &[Role::Replica, Role::Replica, Role::Replica, Role::Contender];

    fn config(ensure_leadership: bool) -> EtcdConfig {
        let text = format!("EtcdLease(ensure_leadership: {ensure_leadership})");
        let s: super::super::settings::EtcdLease =
            crate::scenario::ron_options().from_str(&text).unwrap();
        s.config()
    }

    /// Calls `f` on member 0 when its clocks read 0, and returns what it gave.
    fn call(
        m: &mut Member,
        f: impl FnOnce(&mut Member, &mut Cx, &mut Out<Message>),
    ) -> Out<Message> {
        call_for_test(m, 0, ROLES, LocalTime::from_ns(0), f)
    }

    /// The proposals member 0 forwards to member 1.
    fn forwarded(out: &Out<Message>) -> Vec<Op> {
        out.actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send {
                    to: 1,
                    msg: Message::Propose { op },
                } => Some(op.entry.extra),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_deposed_member_forwards_its_revokes_only_without_the_leadership_check() {
        let revoke = Op::Revoke { lease: 2 };
        let checkpoint = Op::Checkpoint {
            lease: 2,
            remaining: LocalDur::from_secs(1),
        };
        for ensure in [false, true] {
            // Member 0 follows member 1, with its lessor's revoke and checkpoint queued.
            let mut m = Member::new(config(ensure), 0, MemberDisk::default(), false);
            m.core.leader = Some(1);
            m.queued = vec![revoke, checkpoint];
            let out = call(&mut m, |m, cx, out| m.take_queued(cx, out));
            // The checkpoint goes to the leader either way; the revoke only without the check.
            let expected = match ensure {
                true => vec![checkpoint],
                false => vec![revoke, checkpoint],
            };
            assert_eq!(forwarded(&out), expected, "ensure_leadership: {ensure}");
            assert!(m.queued.is_empty());
        }
    }

    #[test]
    fn a_member_with_no_leader_drops_a_call_and_one_that_follows_forwards_it() {
        let mut m = Member::new(config(true), 0, MemberDisk::default(), false);
        let call = Call::Grant {
            ttl: LocalDur::from_secs(5),
        };
        let grant =
            |m: &mut Member| super::tests::call(m, |m, cx, out| m.on_call(cx, 3, 7, call, out));
        assert!(grant(&mut m).actions().is_empty());
        m.core.leader = Some(1);
        let out = grant(&mut m);
        // Forwarded with where to answer: client 3's call 7, through member 0.
        let origin = Some(Origin {
            client: 3,
            via: 0,
            req: 7,
        });
        match out.actions() {
            [Action::Send {
                to: 1,
                msg: Message::Propose { op },
            }] => assert_eq!(
                (op.entry.extra, op.origin),
                (
                    Op::Grant {
                        ttl: LocalDur::from_secs(5)
                    },
                    origin
                )
            ),
            other => panic!("{other:?}"),
        }
    }
}
