//! Failovers: for every change of holder, when the old holder last served a read and last had a
//! write take effect, and when the new one first did each (true time). "Reads resume at" and
//! "writes resume at" are read off these, and so is a deposed holder still serving after its
//! successor began.
//!
//! Tokens here are ranks ([`super::harm::Rank`]): a token placed in its epoch, so that a token
//! a forgetful grantor issues again after its restart is a new lease, not a renewal of the old.
//!
//! Memory is bounded: records are kept for the first [`TOKENS_KEPT`] tokens issued only.

use crate::msg::{NodeId, Token};
use crate::time::SimTime;

/// How many issued tokens are followed (the first ones).
pub const TOKENS_KEPT: usize = 65;

/// What happened under one token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenRecord {
    pub holder: NodeId,
    pub issued_at: SimTime,
    /// When the holder began the attempt that won the token (its last
    /// [`crate::strategy::Fact::Seeking`] before the grant); `None` if it reported none.
    pub sought_at: Option<SimTime>,
    pub first_read: Option<SimTime>,
    pub last_read: Option<SimTime>,
    pub first_write: Option<SimTime>,
    pub last_write: Option<SimTime>,
}

/// One change of holder, between consecutive tokens in issue order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failover {
    pub from: NodeId,
    pub to: NodeId,
    /// When the new token was issued.
    pub at: SimTime,
    pub old: TokenRecord,
    pub new: TokenRecord,
}

/// The records of a run.
#[derive(Debug)]
pub struct Failovers {
    /// The followed tokens in issue order, with their records.
    records: Vec<(Token, TokenRecord)>,
    /// Where the last looked-up token sits in `records` (`None`: not followed): reads and
    /// writes come in long runs under one token, so the hot path is one comparison.
    last: Option<(Token, Option<usize>)>,
}

/// Room for every followed token from the start: what a run holds for them is the same at its
/// first grant as after hours (grown by doubling, 65 records would take room for 128).
impl Default for Failovers {
    fn default() -> Failovers {
        Failovers {
            records: Vec::with_capacity(TOKENS_KEPT),
            last: None,
        }
    }
}

impl Failovers {
    /// Token `token` was issued to `to` at `now`, which began the attempt that won it at
    /// `sought_at` (a renewal under the same token is not an issue).
    pub fn issued(&mut self, token: Token, to: NodeId, now: SimTime, sought_at: Option<SimTime>) {
        if self.records.len() >= TOKENS_KEPT || self.find(token).is_some() {
            return;
        }
        self.last = None;
        self.records.push((
            token,
            TokenRecord {
                holder: to,
                issued_at: now,
                sought_at,
                first_read: None,
                last_read: None,
                first_write: None,
                last_write: None,
            },
        ));
    }

    fn find(&mut self, token: Token) -> Option<&mut TokenRecord> {
        let i = match self.last {
            Some((t, i)) if t == token => i,
            _ => {
                let i = self.records.iter().position(|r| r.0 == token);
                self.last = Some((token, i));
                i
            }
        };
        Some(&mut self.records[i?].1)
    }

    /// A read was served under `token` at `now`.
    pub fn read(&mut self, token: Token, now: SimTime) {
        if let Some(r) = self.find(token) {
            r.first_read.get_or_insert(now);
            r.last_read = Some(now);
        }
    }

    /// A write under `token` took effect (applied, or committed) at `now`.
    pub fn write(&mut self, token: Token, now: SimTime) {
        if let Some(r) = self.find(token) {
            r.first_write.get_or_insert(now);
            r.last_write = Some(now);
        }
    }

    /// Every change of holder between consecutive tokens, in issue order.
    pub fn failovers(&self) -> Vec<Failover> {
        self.records
            .windows(2)
            .map(|w| (w[0].1, w[1].1))
            .filter(|(old, new)| old.holder != new.holder)
            .map(|(old, new)| Failover {
                from: old.holder,
                to: new.holder,
                at: new.issued_at,
                old,
                new,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> SimTime {
        SimTime::from_ns(s)
    }

    #[test]
    fn records_the_edges_of_each_handover_and_skips_takebacks() {
        let mut f = Failovers::default();
        f.issued(1, 0, t(0), None);
        f.read(1, t(5));
        f.write(1, t(6));
        f.read(1, t(9));
        f.issued(2, 1, t(10), Some(t(8)));
        f.read(1, t(11)); // the deposed holder still serving
        f.write(2, t(12));
        f.read(2, t(13));
        f.issued(2, 1, t(14), None); // a renewal: not a new token
        f.issued(3, 1, t(20), None); // same holder again: no failover
        let v = f.failovers();
        assert_eq!(v.len(), 1);
        let x = v[0];
        assert_eq!((x.from, x.to, x.at), (0, 1, t(10)));
        assert_eq!(
            (x.old.last_read, x.old.last_write),
            (Some(t(11)), Some(t(6)))
        );
        assert_eq!(
            (x.new.first_read, x.new.first_write),
            (Some(t(13)), Some(t(12)))
        );
        assert_eq!(x.old.first_read, Some(t(5)));
        assert_eq!(x.new.sought_at, Some(t(8)));
    }

    #[test]
    fn keeps_the_first_tokens_only() {
        let mut f = Failovers::default();
        for k in 0..(TOKENS_KEPT as u64 + 10) {
            f.issued(k + 1, (k % 2) as NodeId, t(k as i64), None);
        }
        assert_eq!(f.failovers().len(), TOKENS_KEPT - 1);
        f.read(TOKENS_KEPT as u64 + 5, t(1000)); // not followed: ignored
    }
}
