//! ConsulSession's messages: the HTTP API calls `api.Lock` makes (session create, renew and
//! destroy, a KV get that may block, a KV put with `?acquire=` or `?release=`), a write to the
//! protected register, and the answers.
//!
//! Every call of a client carries a request id (`req`), unique to the client across its
//! lives, so that an answer to a call the client has given up (its RPC deadline passed) is
//! told apart and ignored. Session ids are picked by the client, larger for each session it
//! opens, across restarts too (Consul's servers hand out UUIDs; here a session is named by its
//! client node and that id).

use crate::msg::{Key, NodeId, Token, Value};
use crate::strategy::{Ack, ProtocolMessage, Store};
use crate::time::LocalDur;

/// A message's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// `PUT /v1/session/create`: open `session` with the lock's TTL (T).
    Create { session: u64, req: u64 },
    /// The session is open.
    Created { session: u64, req: u64 },
    /// `PUT /v1/session/renew/<session>`: reset the session's TTL timer.
    Renew { session: u64, req: u64 },
    /// The answer to a renew: `found: false` is Consul's 404, "session not found" (the session
    /// was invalidated): `RenewPeriodic` returns `ErrSessionExpired`.
    RenewResult { session: u64, req: u64, found: bool },
    /// `PUT /v1/session/destroy/<session>`: invalidate the session (its locks are released,
    /// with lock-delay).
    Destroy { session: u64 },
    /// `GET /v1/kv/<lock key>?index=<index>&wait=<wait>`: answered at once when `index` is 0 or
    /// older than the key's, else held until the key changes or `wait` (plus Consul's jitter of
    /// up to wait/16) has passed.
    Get {
        req: u64,
        index: u64,
        wait: LocalDur,
    },
    /// The lock key as the answer finds it: its modify index, the session holding it (its
    /// client node and id), and its LockIndex.
    KeyState {
        req: u64,
        index: u64,
        holder: Option<(NodeId, u64)>,
        lock_index: Token,
    },
    /// `PUT /v1/kv/<lock key>?acquire=<session>`.
    Acquire { session: u64, req: u64 },
    /// The answer to an acquire: `locked`, with the LockIndex `token` and the register's values;
    /// or not, with the key as it stands (what lock.go's follow-up GET reads). `found: false`:
    /// the session is not open (Consul's "invalid session").
    AcquireResult {
        session: u64,
        req: u64,
        found: bool,
        locked: bool,
        token: Token,
        index: u64,
        holder: Option<(NodeId, u64)>,
        values: Store,
    },
    /// `PUT /v1/kv/<lock key>?release=<session>`: a clean release (no lock-delay).
    Release { session: u64, token: Token },
    /// A write of `value` to `key` of the protected register, with the writer's LockIndex.
    Write {
        token: Token,
        key: Key,
        value: Value,
    },
    /// The register applied the write: its key, value and sequence, for the writer's copy.
    WriteAck(Ack),
}

impl ProtocolMessage for Message {
    /// In this order: the network's random streams are numbered by kind.
    const KINDS: &'static [&'static str] = &[
        "Create",
        "Created",
        "Renew",
        "RenewResult",
        "Destroy",
        "Get",
        "KeyState",
        "Acquire",
        "AcquireResult",
        "Release",
        "Write",
        "WriteAck",
    ];

    fn kind(&self) -> usize {
        match self {
            Message::Create { .. } => 0,
            Message::Created { .. } => 1,
            Message::Renew { .. } => 2,
            Message::RenewResult { .. } => 3,
            Message::Destroy { .. } => 4,
            Message::Get { .. } => 5,
            Message::KeyState { .. } => 6,
            Message::Acquire { .. } => 7,
            Message::AcquireResult { .. } => 8,
            Message::Release { .. } => 9,
            Message::Write { .. } => 10,
            Message::WriteAck(_) => 11,
        }
    }

    fn token(&self) -> Option<Token> {
        match *self {
            Message::AcquireResult {
                locked: true,
                token,
                ..
            }
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
        let wait = LocalDur::from_secs(15);
        let result = |locked| Message::AcquireResult {
            session: 1,
            req: 3,
            found: true,
            locked,
            token: 2,
            index: 5,
            holder: Some((1, 1)),
            values: Store::default(),
        };
        let all = [
            Message::Create { session: 1, req: 1 },
            Message::Created { session: 1, req: 1 },
            Message::Renew { session: 1, req: 2 },
            Message::RenewResult {
                session: 1,
                req: 2,
                found: true,
            },
            Message::Destroy { session: 1 },
            Message::Get {
                req: 3,
                index: 0,
                wait,
            },
            Message::KeyState {
                req: 3,
                index: 4,
                holder: None,
                lock_index: 1,
            },
            Message::Acquire { session: 1, req: 4 },
            result(true),
            Message::Release {
                session: 1,
                token: 2,
            },
            Message::Write {
                token: 2,
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
        assert_eq!(kinds, (0..12).collect::<Vec<_>>());
        assert_eq!(Message::KINDS.len(), all.len());
        // The LockIndex travels with a successful acquire, a release and a write; a refused
        // acquire carries none.
        let tokens: Vec<Option<Token>> = all.iter().map(|m| m.token()).collect();
        let mut expected = vec![None; 12];
        for i in [8, 9, 10] {
            expected[i] = Some(2);
        }
        assert_eq!(tokens, expected);
        assert_eq!(result(false).token(), None);
    }
}
