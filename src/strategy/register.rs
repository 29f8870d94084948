//! The protected resource as protocols hold it: a [`Store`] of every key's value (a
//! resource's, or a node's copy of it), and a [`Register`], the resource itself where writes
//! land, with the fencing check (a write under a token older than one already applied is
//! rejected). A protocol keeps a register where writes land (on the base protocol's grantor,
//! durable across its crashes), reports each arriving write with the fact [`Register::apply`]
//! returns, so the oracle sees exactly what the resource did, and answers the writer of each
//! write it applied with an [`Ack`]. A node that serves reads keeps a store of what it knows:
//! the values its grant carried, and its own writes as their answers arrive. It reports the
//! value it holds for each read.

use super::{Fact, Out};
use crate::msg::{Key, NodeId, Token, Value, INITIAL};
use std::sync::Arc;

/// Every key's value, as a resource or a node's copy holds it ([`INITIAL`] until written), each
/// with its place in the resource's order of applied writes (its *sequence*: how many writes the
/// resource had applied when it applied this one).
///
/// Cheap to copy into a message: a copy shares the values, and the first write to either side
/// after that copies them (so a grant carries the register's values without copying them, and
/// the register pays for the copy at its next write).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Store {
    /// Per key, (value, sequence).
    values: Option<Arc<Vec<(Value, u64)>>>,
    /// The sequence of every key not listed (a copy taken when the resource had applied this
    /// many writes holds every key as it was then).
    floor: u64,
}

impl Store {
    /// The value of `key`.
    pub fn get(&self, key: Key) -> Value {
        self.entry(key).0
    }

    fn entry(&self, key: Key) -> (Value, u64) {
        self.values
            .as_ref()
            .and_then(|v| v.get(key as usize).copied())
            .unwrap_or((INITIAL, 0))
    }

    fn set(&mut self, key: Key, value: Value, seq: u64) {
        let values = Arc::make_mut(self.values.get_or_insert_with(Default::default));
        let i = key as usize;
        if values.len() <= i {
            values.resize(i + 1, (INITIAL, 0));
        }
        values[i] = (value, seq);
    }

    /// How many writes the resource had applied when this copy of its values was taken: of two
    /// copies of one resource, the one with more is the newer.
    pub fn taken_at(&self) -> u64 {
        self.floor
    }

    /// These values as a copy of a state machine that has applied the first `applied` entries of
    /// its log: an answer to a write at or before it ([`Ack::seq`] its index) adds nothing.
    pub fn as_of(self, applied: u64) -> Store {
        Store {
            floor: applied,
            ..self
        }
    }

    /// Sets `key` to `value`, as a state machine applying writes in its own order does (a
    /// replicated log's: no resource answers it).
    pub fn put(&mut self, key: Key, value: Value) {
        self.set(key, value, 0);
    }

    /// Takes in what the resource answered for a write it applied: the key takes the value,
    /// unless the copy already holds a later one (an answer can arrive after later writes of
    /// the key reached the copy, through a grant or another answer).
    pub fn merge(&mut self, ack: Ack) {
        let (_, seq) = self.entry(ack.key);
        if ack.seq > seq.max(self.floor) {
            self.set(ack.key, ack.value, ack.seq);
        }
    }
}

/// The resource's answer to a write it applied: the write's key and value, and its sequence.
/// The writer takes it into its copy ([`Store::merge`]) and reports it
/// ([`Fact::WriteAcked`]): its client hears then that the write took effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    pub key: Key,
    pub value: Value,
    pub seq: u64,
}

/// A register: every key's value, how many writes it applied, and the highest token among them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Register {
    values: Store,
    applied: u64,
    max_token: Token,
}

impl Register {
    /// How many writes the register has applied.
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// Every key's value now, as a grant carries it to a new holder (its floor is the writes
    /// applied so far: an answer to one of those adds nothing to a copy taken now).
    pub fn values(&self) -> Store {
        Store {
            floor: self.applied,
            ..self.values.clone()
        }
    }

    /// The write of `value` to `key` from `writer` under `token` arrives. With `fencing`, a
    /// token lower than the highest applied is rejected; otherwise it is applied. `duplicate`: a
    /// second copy of a write already applied, which is not applied again. Returns the fact to
    /// report and, for a write applied, the answer to send its writer.
    pub fn apply(
        &mut self,
        writer: NodeId,
        token: Token,
        (key, value): (Key, Value),
        fencing: bool,
        duplicate: bool,
    ) -> (Fact, Option<Ack>) {
        if duplicate {
            return (Fact::DuplicateWrite { writer, token }, None);
        }
        if fencing && token < self.max_token {
            return (Fact::WriteFenced { writer, token }, None);
        }
        self.max_token = self.max_token.max(token);
        self.applied += 1;
        let seq = self.applied;
        self.values.set(key, value, seq);
        let fact = Fact::WriteApplied {
            writer,
            token,
            key,
            value,
        };
        (fact, Some(Ack { key, value, seq }))
    }

    /// [`Register::apply`], with what follows from it: the fact reported, and the writer
    /// answered with `answer(ack)` if the write was applied.
    pub fn serve<M>(
        &mut self,
        out: &mut Out<M>,
        (writer, token, write): (NodeId, Token, (Key, Value)),
        fencing: bool,
        duplicate: bool,
        answer: impl FnOnce(Ack) -> M,
    ) {
        let (fact, ack) = self.apply(writer, token, write, fencing, duplicate);
        out.report(fact);
        if let Some(ack) = ack {
            out.send(writer, answer(ack));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type E = Fact;

    #[test]
    fn fencing_rejects_only_older_tokens() {
        let mut r = Register::default();
        let ack = Ack {
            key: 0,
            value: 7,
            seq: 1,
        };
        let applied = E::WriteApplied {
            writer: 1,
            token: 2,
            key: 0,
            value: 7,
        };
        assert_eq!(r.apply(1, 2, (0, 7), true, false), (applied, Some(ack)));
        // Token 1 after token 2: fenced, not applied, not answered.
        let fenced = E::WriteFenced {
            writer: 2,
            token: 1,
        };
        assert_eq!(r.apply(2, 1, (0, 8), true, false), (fenced, None));
        assert_eq!(r.values().get(0), 7);
        // The same token again is not older: applied.
        assert!(matches!(
            r.apply(1, 2, (0, 9), true, false),
            (E::WriteApplied { .. }, Some(_))
        ));
        assert_eq!(r.applied(), 2);
        // Without fencing the old token is applied (and the oracle calls it unsafe).
        assert!(matches!(
            r.apply(2, 1, (0, 10), false, false).0,
            E::WriteApplied { .. }
        ));
        assert_eq!(r.applied(), 3);
        // A duplicate is never applied, nor answered.
        assert!(matches!(
            r.apply(1, 2, (0, 11), false, true),
            (E::DuplicateWrite { .. }, None)
        ));
        assert_eq!((r.applied(), r.values().get(0)), (3, 10));
    }

    #[test]
    fn a_copy_keeps_its_values_and_takes_only_newer_answers() {
        // A grant carries the register's values; the register's next writes do not reach the
        // copy until answered, and an answer older than what the copy holds changes nothing.
        let mut r = Register::default();
        r.apply(0, 1, (2, 5), false, false);
        let mut copy = r.values();
        let (_, six) = r.apply(0, 1, (2, 6), false, false);
        let (_, seven) = r.apply(0, 1, (2, 7), false, false);
        let (_, one) = r.apply(0, 1, (0, 1), false, false);
        assert_eq!(
            (copy.get(0), copy.get(1), copy.get(2)),
            (INITIAL, INITIAL, 5)
        );
        // Answers out of order: 7 (seq 3), then 6 (seq 2) which is older: key 2 stays 7.
        copy.merge(seven.unwrap());
        copy.merge(six.unwrap());
        copy.merge(one.unwrap());
        assert_eq!((copy.get(0), copy.get(2)), (1, 7));
        // A copy taken now holds everything: an old answer adds nothing to it.
        let mut fresh = r.values();
        fresh.merge(six.unwrap());
        assert_eq!(fresh.get(2), 7);
    }
}
