//! LeaseGuard's messages: votes, heartbeats (how followers find the leader), the follower's
//! subscription to the leader's log and the entries (or the snapshot) streamed in answer, and
//! acknowledgements.

use crate::msg::{Key, NodeId, Token, Value};
use crate::strategy::raft_core::{VoteMessages, VoteRequest};
use crate::strategy::{ProtocolMessage, Store};
use crate::time::LocalTime;

/// A log entry as it travels: its term, for a client write the leader that accepted it and the
/// key and value it writes (else the entry is empty), and its creator's wall-clock reading when
/// it was created (the middle of the clock interval the entry carries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub term: u64,
    pub writer: Option<NodeId>,
    pub key: Key,
    pub value: Value,
    pub wall: LocalTime,
}

/// A LeaseGuard message. Every message carries the sender's term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    RequestVote {
        term: u64,
        last_index: u64,
        last_term: u64,
    },
    Vote {
        term: u64,
        granted: bool,
    },
    /// A heartbeat: says whether the sender leads its term, and its last index.
    Ping {
        term: u64,
        leader: bool,
        last: u64,
    },
    /// The answer to a heartbeat.
    Pong {
        term: u64,
        leader: bool,
        last: u64,
    },
    /// A follower asks the leader to stream its log from index `from`; its own log holds
    /// `from - 1` entries, the last of term `prev_term`.
    Pull {
        term: u64,
        from: u64,
        prev_term: u64,
    },
    /// The leader's answer to a `Pull` whose logs disagree: keep only the first `keep` entries
    /// and pull again.
    Mismatch {
        term: u64,
        keep: u64,
    },
    /// The leader's entry at `index`, and its commit index when it sent it.
    Append {
        term: u64,
        index: u64,
        entry: Entry,
        commit: u64,
    },
    /// The leader's snapshot of its committed prefix, for a follower that subscribed from an
    /// index the leader compacted away: the prefix ends at `index` with `entry` and leaves
    /// `state`; the leader streams what follows. It is counted, traced and
    /// faulted as an `Append`: a kind of its own would change the network's random streams
    /// (one per sender and kind) in every LeaseGuard run.
    Snapshot {
        term: u64,
        index: u64,
        entry: Entry,
        state: Store,
    },
    /// A follower has written its log up to `index`.
    Progress {
        term: u64,
        index: u64,
    },
    /// The leader's commit index moved.
    Commit {
        term: u64,
        commit: u64,
    },
}

impl ProtocolMessage for Message {
    const KINDS: &'static [&'static str] = &[
        "RequestVote",
        "Vote",
        "Ping",
        "Pong",
        "Pull",
        "Mismatch",
        "Append",
        "Progress",
        "Commit",
    ];

    fn kind(&self) -> usize {
        match self {
            Message::RequestVote { .. } => 0,
            Message::Vote { .. } => 1,
            Message::Ping { .. } => 2,
            Message::Pong { .. } => 3,
            Message::Pull { .. } => 4,
            Message::Mismatch { .. } => 5,
            Message::Append { .. } | Message::Snapshot { .. } => 6,
            Message::Progress { .. } => 7,
            Message::Commit { .. } => 8,
        }
    }

    /// The term: the log's fencing token.
    fn token(&self) -> Option<Token> {
        Some(match *self {
            Message::RequestVote { term, .. }
            | Message::Vote { term, .. }
            | Message::Ping { term, .. }
            | Message::Pong { term, .. }
            | Message::Pull { term, .. }
            | Message::Mismatch { term, .. }
            | Message::Append { term, .. }
            | Message::Snapshot { term, .. }
            | Message::Progress { term, .. }
            | Message::Commit { term, .. } => term,
        })
    }
}

impl VoteMessages for Message {
    fn request_vote(r: VoteRequest) -> Message {
        debug_assert!(!r.transfer, "a LeaseGuard election is never a transfer's");
        debug_assert!(!r.pre, "LeaseGuard asks for no pre-votes");
        Message::RequestVote {
            term: r.term,
            last_index: r.last_index,
            last_term: r.last_term,
        }
    }
    fn vote(term: u64, granted: bool) -> Message {
        Message::Vote { term, granted }
    }
    fn pre_vote(_: u64, _: bool) -> Message {
        unreachable!("LeaseGuard asks for no pre-votes, so it is asked to answer none")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_has_its_kind_and_its_term_as_token() {
        let entry = Entry {
            term: 3,
            writer: None,
            key: 0,
            value: 0,
            wall: LocalTime::from_ns(0),
        };
        // (message, its kind's name), each of term 10 + its position.
        let all = [
            (
                Message::RequestVote {
                    term: 10,
                    last_index: 1,
                    last_term: 1,
                },
                "RequestVote",
            ),
            (
                Message::Vote {
                    term: 11,
                    granted: true,
                },
                "Vote",
            ),
            (
                Message::Ping {
                    term: 12,
                    leader: true,
                    last: 1,
                },
                "Ping",
            ),
            (
                Message::Pong {
                    term: 13,
                    leader: false,
                    last: 1,
                },
                "Pong",
            ),
            (
                Message::Pull {
                    term: 14,
                    from: 1,
                    prev_term: 0,
                },
                "Pull",
            ),
            (Message::Mismatch { term: 15, keep: 0 }, "Mismatch"),
            (
                Message::Append {
                    term: 16,
                    index: 1,
                    entry,
                    commit: 0,
                },
                "Append",
            ),
            (
                Message::Snapshot {
                    term: 17,
                    index: 1,
                    entry,
                    state: Store::default(),
                },
                "Append",
            ),
            (Message::Progress { term: 18, index: 1 }, "Progress"),
            (
                Message::Commit {
                    term: 19,
                    commit: 1,
                },
                "Commit",
            ),
        ];
        for (i, (m, kind)) in all.iter().enumerate() {
            assert_eq!(Message::KINDS[m.kind()], *kind, "{m:?}");
            assert_eq!(m.token(), Some(10 + i as u64), "{m:?}");
        }
    }
}
