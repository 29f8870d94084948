//! ZooKeeperSession's messages, small (the register values a `Checked` carries are shared,
//! not copied).
//!
//! A client's messages name its session (an id the server hands out in `Connected`, 0 to ask
//! for a new one), so that the server can tell a live session from one it expired. What stands
//! for a TCP connection: `Closed` is the server closing the session's socket (at expiry, or in
//! answer to a request of a session it no longer has), which the client sees as Disconnected at
//! once. The lock's messages are Curator's recipe in two round trips: `Create` (an ephemeral
//! sequential node under the lock's path) and `Check` (getChildren, and a watch on the
//! predecessor if there is one, done by the server in one step).

use crate::msg::{Key, Token, Value};
use crate::strategy::{Ack, ProtocolMessage, Store};
use crate::time::LocalDur;

/// A message's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A connect request: a new session (`session: 0`) or a reconnect of `session`, with the
    /// timeout the client asks for.
    Connect {
        session: u64,
        timeout: LocalDur,
    },
    /// The server opened or resumed `session`, with the negotiated timeout.
    Connected {
        session: u64,
        timeout: LocalDur,
    },
    /// The answer to a reconnect of a session the server expired: the Expired event.
    Expired {
        session: u64,
    },
    /// The server closed `session`'s connection (end of stream).
    Closed {
        session: u64,
    },
    Ping {
        session: u64,
    },
    Pong {
        session: u64,
    },
    /// Create the session's ephemeral sequential lock node (once per session: a retry finds
    /// the node it made, as Curator's protected mode does).
    Create {
        session: u64,
    },
    /// The session's node has sequence number `seq`.
    Created {
        session: u64,
        seq: u64,
    },
    /// Is node `seq` the lowest? If not, watch its predecessor.
    Check {
        session: u64,
        seq: u64,
    },
    /// Node `seq`'s predecessor is `pred` (0: none, `seq` is the lowest and holds the lock),
    /// with the register's values at the server.
    Checked {
        session: u64,
        seq: u64,
        pred: u64,
        values: Store,
    },
    /// The watched node `pred` was deleted (its session expired).
    NodeDeleted {
        session: u64,
        pred: u64,
    },
    /// A write of `value` to `key` of the protected register, carrying the writer's sequence
    /// number.
    Write {
        token: Token,
        key: Key,
        value: Value,
    },
    /// The resource applied the write: its key, value and sequence, for the writer's copy.
    WriteAck(Ack),
}

impl ProtocolMessage for Message {
    /// In this order: the network's random streams are numbered by kind.
    const KINDS: &'static [&'static str] = &[
        "Connect",
        "Connected",
        "Expired",
        "Closed",
        "Ping",
        "Pong",
        "Create",
        "Created",
        "Check",
        "Checked",
        "NodeDeleted",
        "Write",
        "WriteAck",
    ];

    fn kind(&self) -> usize {
        match self {
            Message::Connect { .. } => 0,
            Message::Connected { .. } => 1,
            Message::Expired { .. } => 2,
            Message::Closed { .. } => 3,
            Message::Ping { .. } => 4,
            Message::Pong { .. } => 5,
            Message::Create { .. } => 6,
            Message::Created { .. } => 7,
            Message::Check { .. } => 8,
            Message::Checked { .. } => 9,
            Message::NodeDeleted { .. } => 10,
            Message::Write { .. } => 11,
            Message::WriteAck(_) => 12,
        }
    }

    fn token(&self) -> Option<Token> {
        match *self {
            Message::Checked { seq, pred: 0, .. } => Some(seq),
            Message::Write { token, .. } => Some(token),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_has_its_own_kind_in_order() {
        let t = LocalDur::from_secs(30);
        let all = [
            Message::Connect {
                session: 0,
                timeout: t,
            },
            Message::Connected {
                session: 1,
                timeout: t,
            },
            Message::Expired { session: 1 },
            Message::Closed { session: 1 },
            Message::Ping { session: 1 },
            Message::Pong { session: 1 },
            Message::Create { session: 1 },
            Message::Created { session: 1, seq: 4 },
            Message::Check { session: 1, seq: 4 },
            Message::Checked {
                session: 1,
                seq: 4,
                pred: 0,
                values: Store::default(),
            },
            Message::NodeDeleted {
                session: 1,
                pred: 3,
            },
            Message::Write {
                token: 4,
                key: 0,
                value: 9,
            },
            Message::WriteAck(Ack {
                key: 0,
                value: 9,
                seq: 1,
            }),
        ];
        let kinds: Vec<usize> = all.iter().map(|m| m.kind()).collect();
        assert_eq!(kinds, (0..13).collect::<Vec<_>>());
        assert_eq!(Message::KINDS.len(), all.len());
        // The sequence number is a token where it says the lock is held, and on a write.
        let tokens: Vec<Option<Token>> = all.iter().map(|m| m.token()).collect();
        let mut expected = vec![None; 13];
        expected[9] = Some(4);
        expected[11] = Some(4);
        assert_eq!(tokens, expected);
    }
}
