//! The replicated log of the Raft core: entries by index, the matching check, truncation of a
//! conflicting suffix, and compaction behind a snapshot of the committed prefix.
//!
//! Indices start at 1. The log keeps the entries after its *base*, the last index compacted
//! away (0 while nothing is), and the base entry itself (its term and payload), so that the
//! term at the base is still known to the matching check and a protocol still reads the entry
//! at the commit index, which compaction never passes. What is compacted away is committed, so
//! every later leader holds it too: a follower takes a leader's entries at or below its base as
//! agreeing with its own.

use crate::msg::{Key, NodeId, Value};
use crate::strategy::Store;
use std::collections::VecDeque;

/// An entry as a replica stores it: its term, for a client write the leader that accepted it
/// and the key and value it writes (else the entry is empty), and what the protocol adds (`X`:
/// LeaseGuard's creation time; nothing for `RaftLeaderLease`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Entry<X> {
    pub term: u64,
    pub writer: Option<NodeId>,
    pub key: Key,
    pub value: Value,
    pub extra: X,
}

impl<X> Entry<X> {
    /// Whether it is a client write (else an empty entry, as a new leader appends).
    pub fn is_write(&self) -> bool {
        self.writer.is_some()
    }
}

/// A snapshot of a committed prefix, as a leader sends it to a follower that lacks entries
/// the leader compacted away: the prefix's last index and entry, and the state its client
/// writes leave (every key's value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot<X> {
    pub index: u64,
    pub entry: Entry<X>,
    pub state: Store,
}

/// A replica's log.
#[derive(Clone, Debug, Default)]
pub struct Log<X> {
    /// The last index compacted away (0: none).
    base: u64,
    /// The entry at `base` (all zero at 0).
    base_entry: Entry<X>,
    /// The state the entries up to `base` leave.
    base_state: Store,
    /// The entries from `base + 1` on.
    entries: VecDeque<Entry<X>>,
}

impl<X: Copy + Default> Log<X> {
    /// A log holding `entries` from index 1 on.
    pub fn from_entries(entries: impl IntoIterator<Item = Entry<X>>) -> Log<X> {
        Log {
            entries: entries.into_iter().collect(),
            ..Log::default()
        }
    }

    pub fn last_index(&self) -> u64 {
        self.base + self.entries.len() as u64
    }

    /// The last index compacted away (0 while nothing is).
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The state the entries up to the base leave.
    pub fn base_state(&self) -> &Store {
        &self.base_state
    }

    /// The entry at `index`, from the base (index 0: an empty entry of term 0) to the last;
    /// `None` outside.
    pub fn entry(&self, index: u64) -> Option<Entry<X>> {
        if index == self.base {
            Some(self.base_entry)
        } else if index > self.base {
            self.entries.get((index - self.base - 1) as usize).copied()
        } else {
            None
        }
    }

    /// The term of the entry at `index` (see [`Log::entry`]).
    pub fn term(&self, index: u64) -> Option<u64> {
        self.entry(index).map(|e| e.term)
    }

    /// The last entry (the base entry when none follows it).
    pub fn last(&self) -> Entry<X> {
        self.entries.back().copied().unwrap_or(self.base_entry)
    }

    pub fn last_term(&self) -> u64 {
        self.last().term
    }

    /// The entries after `index` (at or after the base), in order.
    pub fn after(&self, index: u64) -> impl Iterator<Item = &Entry<X>> {
        debug_assert!(index >= self.base, "entries after {index} were compacted");
        self.entries
            .range((index.max(self.base) - self.base) as usize..)
    }

    /// Whether the log agrees with a leader's whose entry at `prev_index` is of `prev_term`:
    /// it holds an entry of that term there, or `prev_index` is compacted away (committed, so
    /// the leader holds the same).
    pub fn agrees(&self, prev_index: u64, prev_term: u64) -> bool {
        prev_index < self.base || self.term(prev_index) == Some(prev_term)
    }

    pub fn push(&mut self, e: Entry<X>) {
        self.entries.push_back(e);
    }

    /// Stores a leader's entry `e` at `index` (at most one past the last): an entry of another
    /// term there is dropped with everything after it (Raft's rule for a conflict); one of the
    /// same term is the same entry, and stays. Returns whether the log was truncated.
    pub fn store(&mut self, index: u64, e: Entry<X>) -> bool {
        debug_assert!(index <= self.last_index() + 1, "a gap before {index}");
        if index <= self.base {
            return false; // committed, so the leader's is the same
        }
        let conflict = index <= self.last_index() && self.term(index) != Some(e.term);
        if conflict {
            self.truncate(index - 1);
        }
        if index > self.last_index() {
            self.entries.push_back(e);
        }
        conflict
    }

    /// Keeps the first `keep` entries (never fewer than the base: those are committed).
    pub fn truncate(&mut self, keep: u64) {
        debug_assert!(keep >= self.base, "truncating below the base {}", self.base);
        let keep = keep.max(self.base);
        self.entries.truncate((keep - self.base) as usize);
    }

    /// The state the entries up to `index` (at or after the base) leave.
    pub fn state_through(&self, index: u64) -> Store {
        debug_assert!(index >= self.base && index <= self.last_index());
        let mut state = self.base_state.clone();
        for e in self.after(self.base).take((index - self.base) as usize) {
            if e.is_write() {
                state.put(e.key, e.value);
            }
        }
        state
    }

    /// Discards the entries up to `index` (committed; at most the last index).
    pub fn compact(&mut self, index: u64) {
        debug_assert!(index <= self.last_index(), "compacting past the last entry");
        while self.base < index {
            let e = self
                .entries
                .pop_front()
                .expect("an entry up to the last index");
            self.base += 1;
            self.base_entry = e;
            if e.is_write() {
                self.base_state.put(e.key, e.value);
            }
        }
    }

    /// A snapshot of the prefix up to `index` (at or after the base), with `state` the state
    /// it leaves.
    pub fn snapshot(&self, index: u64, state: Store) -> Snapshot<X> {
        Snapshot {
            index,
            entry: self.entry(index).expect("a snapshot within the log"),
            state,
        }
    }

    /// Replaces the whole log with snapshot `s` (whose prefix it does not hold).
    pub fn reset_to(&mut self, s: Snapshot<X>) {
        self.base = s.index;
        self.base_entry = s.entry;
        self.base_state = s.state;
        self.entries.clear();
    }
}
