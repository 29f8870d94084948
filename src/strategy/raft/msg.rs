//! Raft's messages, reduced to what leases need: votes, log appends (one entry at most, so a
//! message stays small and `Copy`) and their acknowledgements, and leadership transfer.

use crate::msg::Token;
use crate::strategy::{Key, ProtocolMessage};

/// A log entry as it travels: its term, and whether it is a client write (else the empty entry a
/// new leader appends) and of which key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub term: u64,
    pub write: bool,
    pub key: Key,
}

/// A candidate asks for a vote. `transfer`: the election a leadership transfer started, which a
/// follower does not refuse for having heard from the leader lately.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestVote {
    pub term: u64,
    pub last_index: u64,
    pub last_term: u64,
    pub transfer: bool,
}

/// The leader's append (a heartbeat when `entry` is `None`) of heartbeat round `round`: `entry`
/// goes at `prev_index + 1`, after an entry of term `prev_term`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Append {
    pub term: u64,
    pub prev_index: u64,
    pub prev_term: u64,
    pub entry: Option<Entry>,
    pub commit: u64,
    pub round: u64,
}

/// The answer to an `Append` of round `round`. On success `index` is the last index known to
/// match the leader's log; on failure, the follower's last index (where to retry from).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppendAck {
    pub term: u64,
    pub success: bool,
    pub index: u64,
    pub round: u64,
}

/// A Raft message. Every message carries the sender's term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    RequestVote(RequestVote),
    Vote {
        term: u64,
        granted: bool,
    },
    Append(Append),
    AppendAck(AppendAck),
    /// Leadership transfer: campaign now.
    TimeoutNow {
        term: u64,
    },
}

impl ProtocolMessage for Message {
    const KINDS: &'static [&'static str] =
        &["RequestVote", "Vote", "Append", "AppendAck", "TimeoutNow"];

    fn kind(&self) -> usize {
        match self {
            Message::RequestVote(_) => 0,
            Message::Vote { .. } => 1,
            Message::Append(_) => 2,
            Message::AppendAck(_) => 3,
            Message::TimeoutNow { .. } => 4,
        }
    }

    /// The term: Raft's fencing token.
    fn token(&self) -> Option<Token> {
        Some(match *self {
            Message::RequestVote(RequestVote { term, .. })
            | Message::Vote { term, .. }
            | Message::Append(Append { term, .. })
            | Message::AppendAck(AppendAck { term, .. })
            | Message::TimeoutNow { term } => term,
        })
    }
}
