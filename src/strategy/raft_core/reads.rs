//! Reads a leader holds until a condition it counts upward is met (a heartbeat round
//! acknowledged by a majority, an index committed), served in the order they arrived.
//!
//! The conditions are pushed in non-decreasing order, so the reads ready at any moment are a
//! prefix: each read is pushed and popped once, in O(1), however long the queue grows. The
//! queue is bounded ([`MAX_PENDING_READS`]); a protocol refuses reads while it is full.

use crate::msg::{Key, Token};
use crate::strategy::{Fact, Out, Stamp};
use std::collections::VecDeque;

/// The most reads one leader holds waiting (a leader that can reach no majority would otherwise
/// hold every read that arrives, for as long as the run lasts).
pub const MAX_PENDING_READS: usize = 65_536;

/// A read kept for later: its request's stamp and the key it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeptRead {
    pub since: Stamp,
    pub key: Key,
}

/// Reads waiting for a condition `need` to be reached.
#[derive(Clone, Debug, Default)]
pub struct PendingReads {
    queue: VecDeque<(u64, KeptRead)>,
}

impl PendingReads {
    /// Holds `read` until [`PendingReads::ready`] is called with `need` or more; `need` is at
    /// least that of every read held.
    pub fn push(&mut self, need: u64, read: KeptRead) {
        debug_assert!(
            self.queue.back().is_none_or(|&(n, _)| n <= need),
            "reads pushed out of order"
        );
        debug_assert!(!self.is_full(), "a read pushed into a full queue");
        self.queue.push_back((need, read));
    }

    /// Takes out, in order, the reads whose condition `reached` meets.
    pub fn ready(&mut self, reached: u64) -> impl Iterator<Item = KeptRead> + '_ {
        std::iter::from_fn(move || {
            if self.queue.front()?.0 <= reached {
                self.queue.pop_front().map(|(_, read)| read)
            } else {
                None
            }
        })
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Whether it holds [`MAX_PENDING_READS`] already.
    pub fn is_full(&self) -> bool {
        self.queue.len() >= MAX_PENDING_READS
    }

    /// Gives up every read held (admitted under `token`: the leader steps down), reporting
    /// each as refused: their clients time out.
    pub fn refuse_all<M>(&mut self, token: Token, out: &mut Out<M>) {
        for (_, read) in self.queue.drain(..) {
            out.report(Fact::Refused {
                token,
                since: read.since,
            });
        }
    }
}
