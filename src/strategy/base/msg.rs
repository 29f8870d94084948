//! The base protocol's messages, small (a grant's register values are shared, not copied).
//!
//! Request ids and local send times travel with requests and are echoed in the answers, so a
//! holder can start its term at the send time of the request a grant answers
//! without keeping a table. The grantor treats the echoed times as opaque.

use crate::msg::{Key, Token, Value};
use crate::strategy::{Ack, ProtocolMessage, Store};
use crate::time::LocalTime;

/// A message's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// "Grant me the lease": `req` replaces any earlier request id of the sender.
    Acquire { req: u64, sent: LocalTime },
    /// Answers request `req` (sent at `sent` on the holder's clock) with a new token and the
    /// register's values at the grantor. `expiry`: under TrueTime, the term's absolute end E
    /// (TT.now().latest + T at the grantor); otherwise unused.
    Grant {
        req: u64,
        sent: LocalTime,
        token: Token,
        values: Store,
        expiry: LocalTime,
    },
    /// "Extend my lease `token`", sent at `sent` on the holder's clock.
    Renew {
        token: Token,
        req: u64,
        sent: LocalTime,
    },
    /// The renewal of `token` sent at `sent` was accepted (under TrueTime, until `expiry`).
    RenewAck {
        token: Token,
        req: u64,
        sent: LocalTime,
        expiry: LocalTime,
    },
    /// `token` is not (or no longer) the current lease.
    Reject { token: Token },
    /// A write of `value` to `key` of the protected register, carrying the writer's token.
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
        "Acquire", "Grant", "Renew", "RenewAck", "Reject", "Write", "WriteAck",
    ];

    fn kind(&self) -> usize {
        match self {
            Message::Acquire { .. } => 0,
            Message::Grant { .. } => 1,
            Message::Renew { .. } => 2,
            Message::RenewAck { .. } => 3,
            Message::Reject { .. } => 4,
            Message::Write { .. } => 5,
            Message::WriteAck(_) => 6,
        }
    }

    fn token(&self) -> Option<Token> {
        match *self {
            Message::Grant { token, .. }
            | Message::Renew { token, .. }
            | Message::RenewAck { token, .. }
            | Message::Reject { token }
            | Message::Write { token, .. } => Some(token),
            Message::Acquire { .. } | Message::WriteAck(_) => None,
        }
    }
}
