//! Kubernetes leader election's messages: a candidate's Get and Update of the Lease record at the
//! API server, their answers, and the leader's writes to the protected resource (which lives at
//! the API server too). `Drop` and `DelaySpike` faults name them in `kinds:`.

use crate::msg::{Key, NodeId, Token, Value};
use crate::strategy::{Ack, ProtocolMessage, Store};
use crate::time::{LocalDur, LocalTime};

/// Who holds the Lease: one process on a node (client-go's identity is `hostname_uuid`, fresh in
/// every process, so a node that crashed and restarted is somebody else, and so is a candidate
/// that exited on losing the lease and was started again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    pub node: NodeId,
    /// The node's life (a crash and restart begins the next).
    pub incarnation: u32,
    /// The process within that life: one more at every exit and restart of the candidate.
    pub process: u32,
}

/// The Lease record's content (client-go's `LeaderElectionRecord`). Candidates compare it whole
/// (client-go compares the raw bytes) to tell that it changed; nobody compares its times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    /// HolderIdentity: `None` once the holder released it (an empty string in client-go).
    pub holder: Option<Identity>,
    /// The holder's wall clock when it acquired (kept by renewals).
    pub acquire_wall: LocalTime,
    /// The holder's wall clock when it last renewed: written, never read for a decision.
    pub renew_wall: LocalTime,
    /// LeaseDurationSeconds: how long other candidates wait after they see the record change.
    pub duration: LocalDur,
    /// LeaseTransitions: how many times the holder changed. The token is transitions + 1.
    pub transitions: u64,
}

impl Lease {
    /// The token that holding under this record means (see the module doc).
    pub fn token(&self) -> Token {
        self.transitions + 1
    }
}

/// A message of Kubernetes leader election. `req` numbers a candidate's tries, so that an answer
/// to a try it has given up is not taken for an answer to the current one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// GET the Lease.
    Get { req: u64 },
    /// The Lease as stored, with its resourceVersion (`rv`); `lease: None` and `rv: 0` when it
    /// does not exist yet.
    Record {
        req: u64,
        rv: u64,
        lease: Option<Lease>,
    },
    /// UPDATE the Lease to `lease` iff its resourceVersion is still `rv` (CREATE it when `rv` is
    /// 0 and it does not exist).
    Update { req: u64, rv: u64, lease: Lease },
    /// The answer: `ok` when the Update was applied (otherwise a 409 Conflict), with the
    /// record's resourceVersion `rv` after it. `values` are the protected resource's values at
    /// the API server then.
    UpdateReply {
        req: u64,
        ok: bool,
        rv: u64,
        values: Store,
    },
    /// A leader's write of `value` to `key` of the protected resource, under its token.
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
        "Get",
        "Record",
        "Update",
        "UpdateReply",
        "Write",
        "WriteAck",
    ];

    fn kind(&self) -> usize {
        match self {
            Message::Get { .. } => 0,
            Message::Record { .. } => 1,
            Message::Update { .. } => 2,
            Message::UpdateReply { .. } => 3,
            Message::Write { .. } => 4,
            Message::WriteAck(_) => 5,
        }
    }

    fn token(&self) -> Option<Token> {
        match *self {
            Message::Write { token, .. } => Some(token),
            Message::Update { lease, .. } => Some(lease.token()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_has_its_own_kind_in_order() {
        let lease = Lease {
            holder: None,
            acquire_wall: LocalTime::from_ns(0),
            renew_wall: LocalTime::from_ns(0),
            duration: LocalDur::from_secs(15),
            transitions: 4,
        };
        let all = [
            Message::Get { req: 1 },
            Message::Record {
                req: 1,
                rv: 2,
                lease: Some(lease),
            },
            Message::Update {
                req: 1,
                rv: 2,
                lease,
            },
            Message::UpdateReply {
                req: 1,
                ok: true,
                rv: 3,
                values: Store::default(),
            },
            Message::Write {
                token: 5,
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
        assert_eq!(kinds, [0, 1, 2, 3, 4, 5]);
        assert_eq!(Message::KINDS.len(), all.len());
        // The token (leaseTransitions + 1 = 5) travels with an Update and a write; a Record
        // carries the same lease but is an answer, not a claim.
        let tokens: Vec<Option<Token>> = all.iter().map(|m| m.token()).collect();
        assert_eq!(tokens, [None, None, Some(5), None, Some(5), None]);
    }
}
