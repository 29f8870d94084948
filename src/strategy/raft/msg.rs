//! Raft's messages, reduced to what leases need: votes, log appends (one entry at most: a small
//! message), snapshots (whose state is shared, not copied), their acknowledgements, leadership
//! transfer, and reads a follower forwards to its leader.

use crate::msg::{Key, NodeId, Token, Value};
use crate::strategy::raft_core::VoteMessages;
use crate::strategy::{ProtocolMessage, Store};

/// A candidate asks for a vote. `transfer`: the election a leadership transfer started, which a
/// follower does not refuse for having heard from the leader lately. `pre`: a pre-candidate asks
/// for a pre-vote for the term after its own (counted and traced as a `RequestVote`).
pub use crate::strategy::raft_core::VoteRequest as RequestVote;

/// A log entry as it travels: its term, and for a client write the leader that accepted it and
/// the key and value it writes (else the empty entry a new leader appends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub term: u64,
    pub writer: Option<NodeId>,
    pub key: Key,
    pub value: Value,
}

/// The leader's append (a heartbeat when `entry` is `None`) of heartbeat round `round`: `entry`
/// goes at `prev_index + 1`, after an entry of term `prev_term`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Append {
    pub term: u64,
    pub prev_index: u64,
    pub prev_term: u64,
    // A batch of entries would go here (messages need not be `Copy`); it would move Raft's figures.
    pub entry: Option<Entry>,
    pub commit: u64,
    pub round: u64,
}

/// The leader's snapshot of its committed prefix, in heartbeat round `round`, for a follower
/// that needs entries the leader compacted away (raft-rs's `MsgSnapshot`): the prefix ends at
/// `index`, an entry of term `last_term`, and leaves `state`. It is counted,
/// traced and faulted as an `Append`: a kind of its own would change the network's random
/// streams (one per sender and kind) in every Raft run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub term: u64,
    pub index: u64,
    pub last_term: u64,
    pub state: Store,
    pub round: u64,
}

/// The answer to an `Append` or a `Snapshot` of round `round`. On success `index` is the last
/// index known to match the leader's log; on failure, the follower's last index (where to
/// retry from).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppendAck {
    pub term: u64,
    pub success: bool,
    pub index: u64,
    pub round: u64,
}

/// A Raft message. Every message carries the sender's term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    RequestVote(RequestVote),
    /// The answer to a `RequestVote`; `pre`: to a pre-vote request (counted and traced as a
    /// `Vote`).
    Vote {
        term: u64,
        granted: bool,
        pre: bool,
    },
    Append(Append),
    Snapshot(Snapshot),
    AppendAck(AppendAck),
    /// Leadership transfer: campaign now.
    TimeoutNow {
        term: u64,
    },
    /// A follower forwards a client's read to its leader (etcd-io/raft's `MsgReadIndex`): read
    /// `id` of the follower's, in its term.
    ReadIndex {
        term: u64,
        id: u64,
    },
    /// The leader's answer to `ReadIndex` `id` (`MsgReadIndexResp`): the commit index as of a
    /// moment it was confirmed leader after the read arrived, which the follower serves the
    /// read at once it has committed that far; `None`: refused.
    ReadIndexResp {
        term: u64,
        id: u64,
        index: Option<u64>,
    },
}

impl ProtocolMessage for Message {
    const KINDS: &'static [&'static str] = &[
        "RequestVote",
        "Vote",
        "Append",
        "AppendAck",
        "TimeoutNow",
        "ReadIndex",
        "ReadIndexResp",
    ];

    fn kind(&self) -> usize {
        match self {
            Message::RequestVote(_) => 0,
            Message::Vote { .. } => 1,
            Message::Append(_) | Message::Snapshot(_) => 2,
            Message::AppendAck(_) => 3,
            Message::TimeoutNow { .. } => 4,
            Message::ReadIndex { .. } => 5,
            Message::ReadIndexResp { .. } => 6,
        }
    }

    /// The term: Raft's fencing token.
    fn token(&self) -> Option<Token> {
        Some(match *self {
            Message::RequestVote(RequestVote { term, .. })
            | Message::Vote { term, .. }
            | Message::Append(Append { term, .. })
            | Message::Snapshot(Snapshot { term, .. })
            | Message::AppendAck(AppendAck { term, .. })
            | Message::TimeoutNow { term }
            | Message::ReadIndex { term, .. }
            | Message::ReadIndexResp { term, .. } => term,
        })
    }
}

impl VoteMessages for Message {
    fn request_vote(request: RequestVote) -> Message {
        Message::RequestVote(request)
    }
    fn vote(term: u64, granted: bool) -> Message {
        let pre = false;
        Message::Vote { term, granted, pre }
    }
    fn pre_vote(term: u64, granted: bool) -> Message {
        let pre = true;
        Message::Vote { term, granted, pre }
    }
}
