//! `EtcdLease`'s messages: a client's calls to the member it is connected to and their answers,
//! and what members send each other (Raft's votes and appends, proposals forwarded to the
//! leader, KeepAlives forwarded to it, answers relayed back).

use super::table::Table;
use super::LeaseId;
use crate::msg::{Key, NodeId, Token, Value};
use crate::strategy::raft_core::{self, VoteMessages, VoteRequest};
use crate::strategy::{Ack, ProtocolMessage, Store};
use crate::time::LocalDur;

/// What an entry of etcd's log does besides a client write (which the entry's writer, key and
/// value say): the lessor's and the lock's operations, applied by every member in log order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Op {
    /// An empty entry (a new leader's) or a client write, which carries nothing more.
    #[default]
    Empty,
    /// `LeaseGrant`: a lease of `ttl`, its id the entry's index.
    Grant { ttl: LocalDur },
    /// `LeaseRevoke`: the lease and every key attached to it are deleted.
    Revoke { lease: LeaseId },
    /// The lock's `Txn`: if the key of `lease` under the lock's prefix does not exist, put it
    /// (attached to the lease, created at the entry's index); then get the owner.
    Lock { lease: LeaseId, client: NodeId },
    /// `LeaseCheckpoint`: the lease's remaining TTL (zero: cleared).
    Checkpoint { lease: LeaseId, remaining: LocalDur },
    /// A client's `Put` of the protected key, under the lock's revision `token`.
    Put { token: Token },
    /// The lock's linearizable `Get` of the waiter's own key (created at `rev`): whether it is
    /// still there. It changes nothing; in the log, it is ordered after everything committed
    /// before it, as etcd's ReadIndex orders the `Get`.
    Get { rev: Token },
}

impl raft_core::Payload for Op {
    /// A write commits under the lock revision its writer held, not the Raft term.
    fn write_token(&self, term: u64) -> Token {
        match *self {
            Op::Put { token } => token,
            _ => term,
        }
    }
    /// A client's write is acknowledged when the answer to its `Put` reaches it.
    fn acked_at_commit(&self) -> bool {
        false
    }
}

/// An entry of etcd's log.
pub type Entry = raft_core::Entry<Op>;

/// A client's call, as the member it is connected to takes it (and forwards it to the leader
/// when the call goes through the log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `LeaseGrant(ttl)`.
    Grant { ttl: LocalDur },
    /// The lock's `Txn` under `lease`.
    Lock { lease: LeaseId },
    /// `Put(key, value)` under lock revision `token`.
    Put {
        key: Key,
        value: Value,
        token: Token,
    },
    /// The lock's `Get(myKey)` of the key created at `rev`, once the keys before it are gone.
    Get { rev: Token },
}

/// The answer to a client's call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A lease granted.
    Granted { lease: LeaseId, ttl: LocalDur },
    /// The lock's `Txn` applied: the key's create revision, whether it is the owner (the
    /// smallest revision under the prefix), and the values the member's state holds then.
    Locked {
        rev: Token,
        owner: bool,
        values: Store,
    },
    /// The lease named is gone (`ErrLeaseNotFound`).
    LeaseNotFound,
    /// The `Get` of the waiter's own key: whether it exists, and the values the member's state
    /// holds then.
    Key { exists: bool, values: Store },
    /// A `Put` committed, at the index its answer carries as its sequence.
    Written(Ack),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Client to member: a call, numbered by the client.
    Call {
        req: u64,
        call: Call,
    },
    /// Member to client: the answer to call `req`.
    Answer {
        req: u64,
        reply: Reply,
    },
    /// Client to member: `LeaseKeepAlive(lease)`.
    KeepAlive {
        lease: LeaseId,
    },
    /// Member to client: the KeepAlive's answer: the TTL, or `None` for a lease not found.
    KeepAliveResp {
        lease: LeaseId,
        ttl: Option<LocalDur>,
    },
    /// Client to member: wait until no lock key older than `rev` is left (the lock's
    /// `waitDeletes`, a watch the member serves from what it applied), then say whether the
    /// key of `rev` itself is still there.
    WaitDeletes {
        rev: Token,
    },
    /// Member to client: every key older than `rev` is deleted; the values the member's state
    /// holds then.
    Turn {
        rev: Token,
        values: Store,
    },
    /// Member to leader: a proposal (a forwarded call, or the lessor's own with `origin` none).
    Propose {
        op: Forwarded,
    },
    /// Leader to the member that forwarded call `req` of `client`: its answer, to relay.
    Relay {
        client: NodeId,
        req: u64,
        reply: Reply,
    },
    /// Member to leader: a client's KeepAlive forwarded (etcd forwards renewals to the leader
    /// over HTTP, not through the log).
    RenewFwd {
        lease: LeaseId,
        client: NodeId,
    },
    /// Leader to member: the answer to a forwarded KeepAlive, to relay.
    RenewFwdResp {
        lease: LeaseId,
        client: NodeId,
        ttl: Option<LocalDur>,
    },
    RequestVote(VoteRequest),
    Vote {
        term: u64,
        granted: bool,
        pre: bool,
    },
    /// Raft's append (a heartbeat when `entries` is empty).
    Append(Append),
    /// The leader's committed prefix, for a follower that lacks entries it compacted: the
    /// Raft snapshot and the lease table applied through it.
    Snapshot(Box<Snapshot>),
    AppendAck {
        term: u64,
        success: bool,
        index: u64,
    },
}

/// A proposal on its way to the leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Forwarded {
    /// What to append: the operation and, for a write, its writer, key and value.
    pub entry: Entry,
    /// The client and its call, to answer through the member that forwarded it (none for the
    /// lessor's own proposals).
    pub origin: Option<Origin>,
}

/// Who asked for a proposal: call `req` of `client`, made through member `via`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    pub client: NodeId,
    pub via: NodeId,
    pub req: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Append {
    pub term: u64,
    pub prev_index: u64,
    pub prev_term: u64,
    pub entries: Vec<Entry>,
    pub commit: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub term: u64,
    pub snap: raft_core::Snapshot<Op>,
    pub table: Table,
}

impl VoteMessages for Message {
    fn request_vote(request: VoteRequest) -> Message {
        Message::RequestVote(request)
    }
    fn vote(term: u64, granted: bool) -> Message {
        Message::Vote {
            term,
            granted,
            pre: false,
        }
    }
    fn pre_vote(term: u64, granted: bool) -> Message {
        Message::Vote {
            term,
            granted,
            pre: true,
        }
    }
}

impl ProtocolMessage for Message {
    const KINDS: &'static [&'static str] = &[
        "Call",
        "Answer",
        "KeepAlive",
        "KeepAliveResp",
        "WaitDeletes",
        "Turn",
        "Propose",
        "Relay",
        "RenewFwd",
        "RenewFwdResp",
        "RequestVote",
        "Vote",
        "Append",
        "AppendAck",
    ];

    fn kind(&self) -> usize {
        match self {
            Message::Call { .. } => 0,
            Message::Answer { .. } => 1,
            Message::KeepAlive { .. } => 2,
            Message::KeepAliveResp { .. } => 3,
            Message::WaitDeletes { .. } => 4,
            Message::Turn { .. } => 5,
            Message::Propose { .. } => 6,
            Message::Relay { .. } => 7,
            Message::RenewFwd { .. } => 8,
            Message::RenewFwdResp { .. } => 9,
            Message::RequestVote(_) => 10,
            Message::Vote { .. } => 11,
            Message::Append(_) | Message::Snapshot(_) => 12,
            Message::AppendAck { .. } => 13,
        }
    }

    fn token(&self) -> Option<Token> {
        match self {
            Message::Call {
                call: Call::Put { token, .. },
                ..
            } => Some(*token),
            Message::Answer {
                reply: Reply::Locked { rev, .. },
                ..
            }
            | Message::Turn { rev, .. } => Some(*rev),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_has_its_own_kind_in_order() {
        let ttl = LocalDur::from_secs(5);
        let snapshot = Snapshot {
            term: 1,
            snap: raft_core::Snapshot {
                index: 0,
                entry: Entry::default(),
                state: Store::default(),
            },
            table: Table::default(),
        };
        let all = [
            Message::Call {
                req: 1,
                call: Call::Grant { ttl },
            },
            Message::Answer {
                req: 1,
                reply: Reply::LeaseNotFound,
            },
            Message::KeepAlive { lease: 1 },
            Message::KeepAliveResp {
                lease: 1,
                ttl: None,
            },
            Message::WaitDeletes { rev: 2 },
            Message::Turn {
                rev: 2,
                values: Store::default(),
            },
            Message::Propose {
                op: Forwarded {
                    entry: Entry::default(),
                    origin: None,
                },
            },
            Message::Relay {
                client: 3,
                req: 1,
                reply: Reply::LeaseNotFound,
            },
            Message::RenewFwd {
                lease: 1,
                client: 3,
            },
            Message::RenewFwdResp {
                lease: 1,
                client: 3,
                ttl: Some(ttl),
            },
            Message::request_vote(VoteRequest {
                term: 1,
                last_index: 0,
                last_term: 0,
                transfer: false,
                pre: false,
            }),
            Message::vote(1, true),
            Message::Append(Append {
                term: 1,
                prev_index: 0,
                prev_term: 0,
                entries: Vec::new(),
                commit: 0,
            }),
            Message::AppendAck {
                term: 1,
                success: true,
                index: 0,
            },
        ];
        for (i, m) in all.iter().enumerate() {
            assert_eq!(m.kind(), i, "{m:?}");
        }
        assert_eq!(Message::KINDS.len(), all.len());
        // A snapshot travels as an append does (a cut of appends cuts snapshots too).
        assert_eq!(Message::Snapshot(Box::new(snapshot)).kind(), 12);
    }

    #[test]
    fn a_write_commits_under_its_lock_revision_and_anything_else_under_its_term() {
        use raft_core::Payload;
        assert_eq!(Op::Put { token: 7 }.write_token(3), 7);
        assert_eq!(Op::Empty.write_token(3), 3);
    }
}
