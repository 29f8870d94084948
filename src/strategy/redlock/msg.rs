//! Redlock's messages: a client's lock, extend and unlock requests to every master, their
//! replies, and writes to the protected resource.

use crate::msg::{Key, Token, Value};
use crate::strategy::{Ack, ProtocolMessage, Store};
use crate::time::LocalDur;

/// A Redlock message. `value` is the client's unique lock value for one attempt; `seq` numbers
/// a client's extension rounds, so a late reply to an older round is not counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// `SET key value NX PX T` on a master.
    Lock {
        value: u64,
    },
    /// The master's answer: `ok` when it set the key; `values` are the resource's values when
    /// the master hosts the resource; refused because another value holds the key, that key's
    /// remaining time to live on the master's expiry clock (`PTTL`; exact, where Redis rounds it
    /// to milliseconds).
    LockReply {
        value: u64,
        ok: bool,
        values: Option<Store>,
        ttl: Option<LocalDur>,
    },
    /// Extend the key if it still holds `value`.
    Extend {
        value: u64,
        seq: u64,
    },
    ExtendReply {
        value: u64,
        seq: u64,
        ok: bool,
    },
    /// Delete the key if it holds `value`.
    Unlock {
        value: u64,
    },
    /// A write of `value` to `key` of the protected resource. `token` is the oracle's name for
    /// the holder's acquisition: the resource does not check it (Redlock has no fencing token).
    Write {
        token: Token,
        key: Key,
        value: Value,
    },
    /// The resource applied the write: its key, value and sequence, for the writer's copy.
    WriteAck(Ack),
}

impl ProtocolMessage for Message {
    const KINDS: &'static [&'static str] = &[
        "Lock",
        "LockReply",
        "Extend",
        "ExtendReply",
        "Unlock",
        "Write",
        "WriteAck",
    ];

    fn kind(&self) -> usize {
        match self {
            Message::Lock { .. } => 0,
            Message::LockReply { .. } => 1,
            Message::Extend { .. } => 2,
            Message::ExtendReply { .. } => 3,
            Message::Unlock { .. } => 4,
            Message::Write { .. } => 5,
            Message::WriteAck(_) => 6,
        }
    }

    fn token(&self) -> Option<Token> {
        match *self {
            Message::Write { token, .. } => Some(token),
            _ => None,
        }
    }
}
