//! Reads served at followers and confirmed by the leader (`follower_reads`), as etcd-io/raft
//! runs them (raft.go: `stepFollower` forwards a `MsgReadIndex` to the leader, `stepLeader`
//! answers it with `MsgReadIndexResp` once its read path confirms it still leads, and the
//! member serves the read once it has applied that index) and as TiKV's follower read does.
//!
//! A follower that knows its leader admits a read, reports it waiting and forwards it
//! (`ReadIndex`, with an id of its own). The leader answers it as its own reads go: under
//! `Lease` while its lease holds, and under `LeaseOrReadIndex` while it holds with the skew to
//! spare, at once with its commit index; otherwise once a majority has acknowledged a round
//! started after the request arrived, with its commit index then. A leader that has not
//! committed an entry of its term, whose `Lease` reads' lease has lapsed, or that holds the
//! most reads already, refuses (`index: None`). The follower serves its reads in the order they
//! arrived, each once it has committed through the index its leader gave, from its own state
//! machine: a read is never served from a state older than the leader's when it was confirmed.
//! It refuses every read still waiting when it leaves its term or its leader (a campaign, a
//! higher term); its clients retry elsewhere. A leader that steps down drops what it was
//! confirming, as etcd's does: the followers refuse those reads when they learn the new term.

use super::{Message, RaftReads, Replica};
use crate::msg::NodeId;
use crate::strategy::raft_core::{KeptRead, State, MAX_PENDING_READS};
use crate::strategy::{Cx, Fact, Out, Request, Stamp, Token};
use crate::time::LocalDur;
use std::collections::VecDeque;

/// A read a follower forwarded: its id, the request, and the index its leader answered with.
#[derive(Clone, Copy, Debug)]
struct Forwarded {
    id: u64,
    read: KeptRead,
    index: Option<u64>,
}

/// A follower's forwarded reads, by id (ids rise with arrival), and the next id.
#[derive(Debug, Default)]
pub(super) struct FollowerReads {
    waiting: VecDeque<Forwarded>,
    next_id: u64,
}

/// A leader's reads forwarded by followers and waiting for a round: the round that confirms
/// each, the follower and its id, in the order they arrived (rounds non-decreasing).
#[derive(Debug, Default)]
pub(super) struct Relayed {
    queue: VecDeque<(u64, NodeId, u64)>,
}

impl Relayed {
    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Forgets every read it was confirming (the leader stepped down).
    pub(super) fn clear(&mut self) {
        self.queue.clear();
    }
}

impl Replica {
    /// Whether a follower takes a read to forward: it serves follower reads, knows its leader,
    /// and has room among its waiting reads.
    pub(super) fn admits_forwarded(&self, request: Request) -> bool {
        matches!(request, Request::Read { .. })
            && self.c.follower_reads
            && self.core.state == State::Follower
            && self.core.leader.is_some()
            && self.forwarded.waiting.len() < MAX_PENDING_READS
    }

    /// A follower takes up read `request` (stamp `since`), admitted under `token`: it waits,
    /// forwarded to the leader; refused if the follower left the term or the leader since.
    pub(super) fn forward_read(
        &mut self,
        request: Request,
        (since, token): (Stamp, Token),
        out: &mut Out<Message>,
    ) {
        let leader = self.core.leader;
        let (Some(leader), true) = (leader, self.admits_forwarded(request)) else {
            out.report(Fact::Refused { token, since });
            return;
        };
        if token != self.core.term {
            out.report(Fact::Refused { token, since });
            return;
        }
        out.report(Fact::Waiting { token });
        let id = self.forwarded.next_id;
        self.forwarded.next_id += 1;
        let read = KeptRead {
            since,
            key: request.key(),
        };
        self.forwarded.waiting.push_back(Forwarded {
            id,
            read,
            index: None,
        });
        let term = self.core.term;
        out.send(leader, Message::ReadIndex { term, id });
    }

    /// As leader: follower `from` forwarded its read `id` in `term`. A request of another term
    /// is not answered (the follower refuses the read when it learns the term).
    pub(super) fn on_read_index(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        (term, id): (u64, u64),
        out: &mut Out<Message>,
    ) {
        if term != self.core.term || !self.core.is_leader() {
            return;
        }
        let at_once = match self.c.reads {
            RaftReads::Lease => Some(self.lease_holds(cx, LocalDur::ZERO)),
            RaftReads::LeaseOrReadIndex if self.lease_holds(cx, self.c.max_clock_skew) => {
                Some(true)
            }
            _ => None,
        };
        let refuse = !self.serving || at_once == Some(false);
        if refuse || at_once == Some(true) {
            let index = (!refuse).then(|| self.core.commit());
            out.send(from, Message::ReadIndexResp { term, id, index });
            return;
        }
        if self.relayed.queue.len() >= MAX_PENDING_READS {
            let index = None;
            out.send(from, Message::ReadIndexResp { term, id, index });
            return;
        }
        self.relayed.queue.push_back((self.round + 1, from, id));
        if !self.read_round_open {
            self.read_round(cx, out);
            self.update_lease(cx, out);
        }
    }

    /// As leader: a majority acknowledged round `q`: each forwarded read it confirms is
    /// answered with the commit index now.
    pub(super) fn answer_relayed(&mut self, q: u64, out: &mut Out<Message>) {
        let (term, index) = (self.core.term, Some(self.core.commit()));
        while let Some(&(need, from, id)) = self.relayed.queue.front() {
            if need > q {
                break;
            }
            self.relayed.queue.pop_front();
            out.send(from, Message::ReadIndexResp { term, id, index });
        }
    }

    /// As follower: the leader answered read `id` of `term` with `index` (`None`: refused).
    pub(super) fn on_read_index_resp(
        &mut self,
        (term, id): (u64, u64),
        index: Option<u64>,
        out: &mut Out<Message>,
    ) {
        if term != self.core.term {
            return;
        }
        let waiting = &mut self.forwarded.waiting;
        let Ok(at) = waiting.binary_search_by_key(&id, |f| f.id) else {
            return;
        };
        match index {
            Some(i) => waiting[at].index = Some(i),
            None => {
                let since = waiting.remove(at).expect("found").read.since;
                out.report(Fact::Refused { token: term, since });
            }
        }
        self.serve_forwarded(out);
    }

    /// As follower: serves, in order of arrival, the forwarded reads whose index it has
    /// committed, from its state machine.
    pub(super) fn serve_forwarded(&mut self, out: &mut Out<Message>) {
        let commit = self.core.commit();
        let token = self.core.term;
        while let Some(f) = self.forwarded.waiting.front() {
            if f.index.is_none_or(|i| i > commit) {
                break;
            }
            let value = self.core.applied().get(f.read.key);
            let since = f.read.since;
            out.report(Fact::ConfirmedRead {
                token,
                since,
                value,
            });
            self.forwarded.waiting.pop_front();
        }
    }

    /// The follower leaves its term or its leader: every forwarded read still waiting is
    /// refused (under the term it was admitted in).
    pub(super) fn refuse_forwarded(&mut self, out: &mut Out<Message>) {
        let token = self.core.term;
        for f in self.forwarded.waiting.drain(..) {
            let since = f.read.since;
            out.report(Fact::Refused { token, since });
        }
    }
}
