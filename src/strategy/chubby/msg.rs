//! ChubbySession's messages, small (a grant's register values are shared, not copied).
//!
//! Every message of a client names its session (an id the client picks, larger for each new
//! session it opens, across restarts too), so that the master can tell a live session from one
//! that expired and answer the latter with `SessionExpired`. KeepAlives carry a request id (a
//! duplicate extends the session once), the id of the newest answer the client has (the
//! master holds a KeepAlive only from a client that has its latest answer) and the client's
//! monotonic send time, which the answer echoes: the client's local lease runs from that send
//! time, plus how long the master held the KeepAlive and the extension it granted, both of
//! which the answer says; the client keeps no table of what it sent. The master treats the
//! echoed time as opaque.

use crate::msg::{Key, Token, Value};
use crate::strategy::{Ack, ProtocolMessage, Store};
use crate::time::{LocalDur, LocalTime};

/// A message's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// "Keep session `session` alive", sent at `sent` on the client's monotonic clock by a
    /// client whose newest answer is to KeepAlive `acked` (0: none in this session). Opens the
    /// session if the master has never seen it.
    KeepAlive {
        session: u64,
        req: u64,
        acked: u64,
        sent: LocalTime,
    },
    /// The master held KeepAlive `req` for `held` on its monotonic clock, then extended
    /// `session` by `extension` from this answer.
    KeepAliveAck {
        session: u64,
        req: u64,
        sent: LocalTime,
        held: LocalDur,
        extension: LocalDur,
    },
    /// `session` has expired at the master (or it is older than one the master knows): the
    /// client has lost it, and the lock with it.
    SessionExpired { session: u64 },
    /// "Give session `session` the lock": a retry keeps the session's place in the queue.
    Acquire { session: u64 },
    /// The lock is `session`'s, with generation number `token` (the sequencer) and the
    /// register's values at the master.
    Grant {
        session: u64,
        token: Token,
        values: Store,
    },
    /// `session` gives up the lock of generation `token` (a clean release: no lock-delay).
    Release { session: u64, token: Token },
    /// A write of `value` to `key` of the protected register, carrying the writer's generation
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
        "KeepAlive",
        "KeepAliveAck",
        "SessionExpired",
        "Acquire",
        "Grant",
        "Release",
        "Write",
        "WriteAck",
    ];

    fn kind(&self) -> usize {
        match self {
            Message::KeepAlive { .. } => 0,
            Message::KeepAliveAck { .. } => 1,
            Message::SessionExpired { .. } => 2,
            Message::Acquire { .. } => 3,
            Message::Grant { .. } => 4,
            Message::Release { .. } => 5,
            Message::Write { .. } => 6,
            Message::WriteAck(_) => 7,
        }
    }

    fn token(&self) -> Option<Token> {
        match *self {
            Message::Grant { token, .. }
            | Message::Release { token, .. }
            | Message::Write { token, .. } => Some(token),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_has_its_own_kind_in_order() {
        let t = LocalTime::from_ns(0);
        let all = [
            Message::KeepAlive {
                session: 1,
                req: 1,
                acked: 0,
                sent: t,
            },
            Message::KeepAliveAck {
                session: 1,
                req: 1,
                sent: t,
                held: LocalDur::ZERO,
                extension: LocalDur::from_secs(12),
            },
            Message::SessionExpired { session: 1 },
            Message::Acquire { session: 1 },
            Message::Grant {
                session: 1,
                token: 3,
                values: Store::default(),
            },
            Message::Release {
                session: 1,
                token: 3,
            },
            Message::Write {
                token: 3,
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
        assert_eq!(kinds, [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(Message::KINDS.len(), all.len());
        // The generation number travels with a grant, a release and a write.
        let tokens: Vec<Option<Token>> = all.iter().map(|m| m.token()).collect();
        assert_eq!(
            tokens,
            [None, None, None, None, Some(3), Some(3), Some(3), None]
        );
    }
}
