//! The messages nodes exchange, small and `Copy` so that sending one allocates nothing.
//!
//! Request ids and local send times travel with requests and are echoed in the answers, so a
//! holder can start its term at the send time of the request a grant answers (SPEC 2.5 step 3)
//! without keeping a table. The grantor treats the echoed times as opaque.

use crate::time::LocalTime;
use serde::{Deserialize, Serialize};

/// A fencing token: increases with every new grant, not with renewals.
pub type Token = u64;

/// A node index in the scenario's node list.
pub type NodeId = usize;

/// Message kinds, as scenario faults name them (`kinds: [Renew, RenewAck]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MsgKind {
    Acquire,
    Grant,
    Renew,
    RenewAck,
    Reject,
    Write,
}

impl MsgKind {
    pub const ALL: [MsgKind; 6] = [
        MsgKind::Acquire,
        MsgKind::Grant,
        MsgKind::Renew,
        MsgKind::RenewAck,
        MsgKind::Reject,
        MsgKind::Write,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            MsgKind::Acquire => "Acquire",
            MsgKind::Grant => "Grant",
            MsgKind::Renew => "Renew",
            MsgKind::RenewAck => "RenewAck",
            MsgKind::Reject => "Reject",
            MsgKind::Write => "Write",
        }
    }
}

/// A message's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    /// "Grant me the lease": `req` replaces any earlier request id of the sender.
    Acquire { req: u64, sent: LocalTime },
    /// Answers request `req` (sent at `sent` on the holder's clock) with a new token and the
    /// register's version at the grantor.
    Grant {
        req: u64,
        sent: LocalTime,
        token: Token,
        version: u64,
    },
    /// "Extend my lease `token`", sent at `sent` on the holder's clock.
    Renew {
        token: Token,
        req: u64,
        sent: LocalTime,
    },
    /// The renewal of `token` sent at `sent` was accepted.
    RenewAck {
        token: Token,
        req: u64,
        sent: LocalTime,
    },
    /// `token` is not (or no longer) the current lease.
    Reject { token: Token },
    /// A write to the protected register, carrying the writer's token.
    Write { token: Token },
}

impl Message {
    pub fn kind(&self) -> MsgKind {
        match self {
            Message::Acquire { .. } => MsgKind::Acquire,
            Message::Grant { .. } => MsgKind::Grant,
            Message::Renew { .. } => MsgKind::Renew,
            Message::RenewAck { .. } => MsgKind::RenewAck,
            Message::Reject { .. } => MsgKind::Reject,
            Message::Write { .. } => MsgKind::Write,
        }
    }
}
