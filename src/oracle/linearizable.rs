//! Stale reads, judged by linearizability of the client history as the run produces it, in
//! bounded memory.
//!
//! **The history.** Every client operation on one key (a register): a write of a value of its
//! own, or a read that returned one value ([`INITIAL`] before any write), each with an
//! *invocation* and a *response*, given as ticks: points of one total order, the order in which
//! the run produced them (true time, then the order of events at one instant). A write's
//! response is when it is acknowledged as taken effect (the register's answer reaches its
//! writer; a quorum commits it); a write not acknowledged has none yet. And the order in which
//! the writes of each key took effect (the register applied them, the log committed them): the
//! resource's own order, which any later reader of the resource sees.
//!
//! **The rule.** The history is linearizable with that order when its operations can be placed
//! at points within their intervals, each read just after the write it returns, the writes in
//! the register's order. Reads are judged in the order they are answered, each against the
//! writes and the reads answered before it that were not stale: a read is *stale* when it makes
//! the history not linearizable. So no read is stale exactly when the whole history is
//! linearizable; when it is not, the reads that made it so are.
//!
//! **The test.** With the writes' order given, the placement is a greedy sweep along that order
//! (each write and its reads placed as early as they can be, Gibbons and Korach's clusters
//! taken in a fixed order: P. B. Gibbons and E. Korach, "Testing Shared Memories", SIAM J.
//! Comput. 26(4), 1997): it succeeds iff, for every write, every operation of the writes before
//! it in the order was invoked before every operation of it was answered. For a new read of the
//! value of write w, that is: it is stale iff some write after w in the order was acknowledged,
//! or returned by a read, before this read was invoked. Per key the checker keeps the writes in
//! the register's order with the first response of each (its acknowledgement or its first
//! read), and for each the first response among the writes after it (*after*): a read of w
//! invoked at I is stale iff after(w) < I. A first response sets `after` for every write
//! before it that had none yet: those form the order's tail, so each write gets its `after`
//! once. Every operation costs O(log n) (a lookup of the value's place).
//!
//! A write that its writer reads before it takes effect (a protocol whose node takes its own
//! writes into its state at once) takes its place in the order at that first read: the register
//! can only put it after every write that took effect before. When it later takes effect it
//! keeps that place.
//!
//! **Memory.** `after` never changes once set, and it grows along the order. So once `after(w)`
//! lies before the *horizon* H (no read answered from now on was invoked before H; the engine
//! says where it is), every later read of w is stale, and so is every read of a write before w:
//! the order's prefix up to w is forgotten, and a read of a forgotten value is stale. What stays
//! is the writes whose successors were first answered after H: a handful while no read is long
//! under way. A write forgotten before it took effect leaves a tombstone, so that it does not
//! come back as new when it lands late; at most [`TOMBSTONES_KEPT`] are kept, and a write that
//! lands with a value a dropped tombstone might have named is counted ([`Counts::ambiguous`]):
//! the count of stale reads is exact while that count is zero.

use crate::msg::{Key, NodeId, Value, INITIAL};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A point of the history: ticks increase in the order the run produces invocations and
/// responses, one tick each.
pub type Tick = u64;

/// The most tombstones kept (see the module doc), over every key.
pub const TOMBSTONES_KEPT: usize = 65_536;

/// A key is trimmed once it holds this many writes, or twice what its last trim left if more
/// (see [`Checker::with_compaction`]).
const COMPACT_AT: usize = 8;

/// One write of a key, in the register's order.
#[derive(Clone, Copy, Debug)]
struct Place {
    value: Value,
    /// It took effect (else its writer read it first).
    effective: bool,
    /// Its first response: its acknowledgement, or its first read answered (not stale).
    first: Option<Tick>,
    /// The earliest first response among the writes after it.
    after: Option<Tick>,
}

/// One key's writes in the register's order, from the first not forgotten.
#[derive(Debug)]
struct KeyHistory {
    /// (A vector, its forgotten prefix drained at each trim: a read looks at its last place and
    /// indexes it, which a `VecDeque` did with wrapping arithmetic on every read.)
    order: Vec<Place>,
    /// The position (counted from the key's first write, the initial value) of `order[0]`.
    base: u64,
    /// Each value's position.
    positions: BTreeMap<Value, u64>,
    /// The position from which no write has an `after` yet (the tail).
    open_from: u64,
    /// Forgotten writes that had not taken effect.
    tombstones: BTreeSet<Value>,
    /// The highest value of a tombstone dropped to keep memory bounded.
    dropped_tombstone: Option<Value>,
    /// Trim once this many writes are held.
    trim_at: usize,
}

impl KeyHistory {
    fn new(trim_at: usize) -> KeyHistory {
        let mut k = KeyHistory {
            order: Vec::new(),
            base: 0,
            positions: BTreeMap::new(),
            open_from: 0,
            tombstones: BTreeSet::new(),
            dropped_tombstone: None,
            trim_at,
        };
        // The initial value: written and answered before everything, at tick 0.
        k.push(INITIAL, true);
        k.answer(0, 0);
        k
    }

    /// `value` takes the next place in the order.
    fn push(&mut self, value: Value, effective: bool) -> u64 {
        let at = self.base + self.order.len() as u64;
        self.order.push(Place {
            value,
            effective,
            first: None,
            after: None,
        });
        self.positions.insert(value, at);
        at
    }

    /// Where `value` stands in the order (the newest write, as a rule, is the one read).
    fn position(&self, value: Value) -> Option<u64> {
        match self.order.last() {
            Some(p) if p.value == value => Some(self.base + self.order.len() as u64 - 1),
            _ => self.positions.get(&value).copied(),
        }
    }

    fn place(&mut self, at: u64) -> &mut Place {
        &mut self.order[(at - self.base) as usize]
    }

    /// The write at position `at` has its first response at `t`, if it had none: every write
    /// before it without an `after` gets `t`. Whether it had none.
    fn answer(&mut self, at: u64, t: Tick) -> bool {
        if self.place(at).first.is_some() {
            return false;
        }
        self.place(at).first = Some(t);
        while self.open_from < at {
            let from = self.open_from;
            self.place(from).after = Some(t);
            self.open_from += 1;
        }
        true
    }

    /// Forgets the prefix of the order whose writes are dead at `horizon` (see the module doc);
    /// returns the values forgotten that had not taken effect.
    fn trim(&mut self, horizon: Tick, trim_min: usize) -> Vec<Value> {
        let mut forgotten = Vec::new();
        let dead = self
            .order
            .iter()
            .take_while(|p| p.after.is_some_and(|a| a < horizon))
            .count();
        for p in self.order.drain(..dead) {
            self.positions.remove(&p.value);
            self.base += 1;
            if !p.effective {
                forgotten.push(p.value);
            }
        }
        self.trim_at = trim_min.max(2 * self.order.len());
        forgotten
    }
}

/// What the checker has counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Reads judged.
    pub reads: u64,
    /// Reads judged stale.
    pub stale: u64,
    /// Writes that took effect with a value a dropped tombstone might have named (see the
    /// module doc): while this is zero, every verdict is exact.
    pub ambiguous: u64,
}

/// Each key's history, begun at its first use; the key looked up last is found again without
/// a search (a run's requests mostly name few keys, often one).
#[derive(Debug, Default)]
struct Keys {
    index: BTreeMap<Key, usize>,
    histories: Vec<KeyHistory>,
    last: Option<(Key, usize)>,
}

impl Keys {
    /// Key `key`'s history, begun if it has none yet (trimmed at `trim_min` writes).
    #[inline(always)]
    fn touch(&mut self, key: Key, trim_min: usize) -> &mut KeyHistory {
        let i = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let histories = &mut self.histories;
                let i = *self.index.entry(key).or_insert_with(|| {
                    histories.push(KeyHistory::new(trim_min));
                    histories.len() - 1
                });
                self.last = Some((key, i));
                i
            }
        };
        &mut self.histories[i]
    }

    /// Key `key`'s history, if it has one.
    fn get_mut(&mut self, key: Key) -> Option<&mut KeyHistory> {
        let i = *self.index.get(&key)?;
        Some(&mut self.histories[i])
    }
}

/// The streaming linearizability checker of one run (see the module doc).
#[derive(Debug)]
pub struct Checker {
    keys: Keys,
    /// Per (writer, key), its latest write not yet taken effect nor read: (value, invocation).
    unread: BTreeMap<(NodeId, Key), (Value, Tick)>,
    /// Tombstones in the order they were made, over every key (at most [`TOMBSTONES_KEPT`]).
    tombstones: VecDeque<(Key, Value)>,
    /// No read answered from now on was invoked before this.
    horizon: Tick,
    /// A key holding at least this many writes is trimmed.
    trim_min: usize,
    counts: Counts,
    /// The last read judged was the first response of the write it returned.
    last_read_first: bool,
}

impl Default for Checker {
    fn default() -> Checker {
        Checker::new()
    }
}

impl Checker {
    pub fn new() -> Checker {
        Checker::with_compaction(COMPACT_AT)
    }

    /// A checker that trims a key once it holds `at` writes (tests trim at every step, to show
    /// that forgetting changes no verdict).
    pub fn with_compaction(at: usize) -> Checker {
        Checker {
            keys: Keys::default(),
            unread: BTreeMap::new(),
            tombstones: VecDeque::new(),
            horizon: 0,
            trim_min: at.max(1),
            counts: Counts::default(),
            last_read_first: false,
        }
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Writes held now, over every key (what memory the history takes).
    pub fn clusters_held(&self) -> usize {
        self.keys.histories.iter().map(|k| k.order.len()).sum()
    }

    /// The horizon (see [`Checker::set_horizon`]).
    #[cfg(test)]
    pub(crate) fn horizon(&self) -> Tick {
        self.horizon
    }

    /// No read answered from now on was invoked before `tick` (it never moves back).
    pub fn set_horizon(&mut self, tick: Tick) {
        debug_assert!(tick >= self.horizon, "the horizon moved back");
        self.horizon = self.horizon.max(tick);
    }

    /// `writer` crashed: what it wrote that has not taken effect it can no longer read.
    pub fn forget_writer(&mut self, writer: NodeId) {
        self.unread.retain(|&(w, _), _| w != writer);
    }

    /// `writer` invoked a write of `value` to `key` at `inv`. Until it takes effect, only
    /// `writer` can read it, while it is its latest write of `key`.
    pub fn write_invoked(&mut self, writer: NodeId, key: Key, value: Value, inv: Tick) {
        debug_assert_ne!(value, INITIAL, "a write writes a value of its own");
        self.unread.insert((writer, key), (value, inv));
    }

    /// The write of `value` to `key` by `writer`, invoked at `inv`, took effect: it takes the
    /// next place in the key's order (unless its writer read it before, which placed it).
    pub fn write_took_effect(&mut self, writer: NodeId, key: Key, value: Value, _inv: Tick) {
        if self
            .unread
            .get(&(writer, key))
            .is_some_and(|u| u.0 == value)
        {
            self.unread.remove(&(writer, key));
        }
        let k = self.keys.touch(key, self.trim_min);
        if let Some(&at) = k.positions.get(&value) {
            k.place(at).effective = true;
            return;
        }
        if k.tombstones.remove(&value) {
            return; // forgotten as dead before it landed: it stays dead
        }
        if k.dropped_tombstone.is_some_and(|d| value <= d) {
            self.counts.ambiguous += 1;
        }
        k.push(value, true);
        self.maybe_trim(key);
    }

    /// The write of `value` to `key` by `writer`, invoked at `inv`, was acknowledged at `at`:
    /// its response.
    pub fn write_answered(&mut self, _writer: NodeId, key: Key, value: Value, inv: Tick, at: Tick) {
        debug_assert!(at > inv, "a write is answered after its invocation");
        let k = self.keys.touch(key, self.trim_min);
        // A write forgotten (dead) stays as it is.
        if let Some(&p) = k.positions.get(&value) {
            k.answer(p, at);
        }
        self.maybe_trim(key);
    }

    /// `reader` answered, at `res`, a read of `key` invoked at `inv` with `value`. Returns
    /// whether it is stale; a stale read is left out of the history that later reads are
    /// judged with.
    pub fn read(&mut self, reader: NodeId, key: Key, value: Value, inv: Tick, res: Tick) -> bool {
        debug_assert!(
            inv < res && inv >= self.horizon,
            "a read within the horizon"
        );
        self.counts.reads += 1;
        let k = self.keys.touch(key, self.trim_min);
        let at = match k.position(value) {
            Some(at) => Some(at),
            // Its writer reads a write it has not seen take effect: it takes its place now.
            None if self
                .unread
                .get(&(reader, key))
                .is_some_and(|u| u.0 == value) =>
            {
                self.unread.remove(&(reader, key));
                Some(k.push(value, false))
            }
            // A value forgotten as dead.
            None => None,
        };
        let (stale, first) = match at {
            None => (true, false),
            Some(at) if k.place(at).after.is_some_and(|a| a < inv) => (true, false),
            Some(at) => (false, k.answer(at, res)),
        };
        self.last_read_first = first;
        self.counts.stale += u64::from(stale);
        if k.order.len() >= k.trim_at {
            self.trim(key);
        }
        stale
    }

    /// Whether the last read judged ([`Checker::read`]) was the first response of the write it
    /// returned: no client had seen that value before (a stale read never is).
    pub fn last_read_was_first(&self) -> bool {
        self.last_read_first
    }

    fn maybe_trim(&mut self, key: Key) {
        if self
            .keys
            .get_mut(key)
            .is_some_and(|k| k.order.len() >= k.trim_at)
        {
            self.trim(key);
        }
    }

    /// Forgets what key `key` holds that is dead at the horizon.
    fn trim(&mut self, key: Key) {
        let (horizon, min) = (self.horizon, self.trim_min);
        let k = self.keys.get_mut(key).expect("the key was just touched");
        for v in k.trim(horizon, min) {
            k.tombstones.insert(v);
            self.tombstones.push_back((key, v));
        }
        while self.tombstones.len() > TOMBSTONES_KEPT {
            let (key, v) = self.tombstones.pop_front().expect("over the bound");
            if let Some(k) = self.keys.get_mut(key) {
                if k.tombstones.remove(&v) {
                    k.dropped_tombstone = k.dropped_tombstone.max(Some(v));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `writer`'s write of `value` to `key`, invoked at `value`, takes effect and is answered
    /// at `at`.
    fn effect(c: &mut Checker, (writer, key, value): (NodeId, Key, Value), at: Tick) {
        c.write_took_effect(writer, key, value, value);
        c.write_answered(writer, key, value, value, at);
    }

    #[test]
    fn a_read_of_the_value_before_an_acknowledged_write_is_stale() {
        // w1 [1, 2] writes 1; a read [3, 4] of the initial value misses it: w1 was answered at
        // 2, before the read was invoked.
        let mut c = Checker::new();
        c.write_invoked(0, 0, 1, 1);
        effect(&mut c, (0, 0, 1), 2);
        assert!(c.read(1, 0, INITIAL, 3, 4));
        assert!(!c.read(1, 0, 1, 5, 6));
        assert_eq!(c.counts().stale, 1);
    }

    #[test]
    fn a_read_overlapping_the_write_may_return_either_value() {
        // w1 [1, 4]; reads [2, 5] of the initial value and [3, 6] of 1: both linearizable
        // (read 0 at 2, w1 at 3, read 1 at 3.5). Taking effect is not enough to make a read of
        // the initial value stale: w1 is answered only at 4.
        let mut c = Checker::new();
        c.write_invoked(0, 0, 1, 1);
        c.write_took_effect(0, 0, 1, 1);
        c.write_answered(0, 0, 1, 1, 4);
        assert!(!c.read(1, 0, INITIAL, 2, 5));
        assert!(!c.read(2, 0, 1, 3, 6));
        // A read invoked after w1's answer cannot go back to 0.
        assert!(c.read(1, 0, INITIAL, 7, 8));
    }

    #[test]
    fn a_read_returning_a_later_write_makes_earlier_values_stale() {
        // w1 took effect at 1 (unanswered); a read [2, 3] returns it. A read [4, 5] of the
        // initial value goes back: stale (the new-old inversion), though w1 is not answered.
        let mut c = Checker::new();
        c.write_invoked(0, 0, 1, 1);
        c.write_took_effect(0, 0, 1, 1);
        assert!(!c.read(0, 0, 1, 2, 3));
        assert!(c.read(1, 0, INITIAL, 4, 5));
    }

    #[test]
    fn the_register_s_order_decides_between_concurrent_writes() {
        // w1 [1, 4] and w2 [2, 3] overlap; the register applied w1 then w2, and w2 was answered
        // at 3. A read [5, 6] of 1 is stale: w2 comes after w1 in the register, whatever order
        // a client-side check could pick. (Checked without the order, w2 could go first.)
        let mut c = Checker::new();
        c.write_invoked(0, 0, 1, 1);
        c.write_invoked(1, 0, 2, 2);
        c.write_took_effect(0, 0, 1, 1);
        c.write_took_effect(1, 0, 2, 2);
        c.write_answered(1, 0, 2, 2, 3);
        c.write_answered(0, 0, 1, 1, 4);
        assert!(c.read(2, 0, 1, 5, 6));
        assert!(!c.read(2, 0, 2, 7, 8));
    }

    #[test]
    fn only_the_writer_reads_a_write_that_has_not_taken_effect() {
        // Node 0 writes 1 and 2 to key 0 (neither taken effect); only 2, its latest, is
        // readable, and only by node 0.
        let mut c = Checker::new();
        c.write_invoked(0, 0, 1, 1);
        c.write_invoked(0, 0, 2, 2);
        assert!(c.read(0, 0, 1, 3, 4), "no longer its latest");
        assert!(c.read(1, 0, 2, 5, 6), "another node's");
        assert!(!c.read(0, 0, 2, 7, 8));
    }

    #[test]
    fn forgetting_dead_writes_changes_no_verdict() {
        // Writes 1..=60 one after another, each answered and then read; then a read of 10
        // (long dead) and a read of 60 (the current value). Trimming at every step or never
        // gives the same verdicts, and trimming keeps memory flat.
        for at in [1, 1_000_000] {
            let mut c = Checker::with_compaction(at);
            let mut t = 1;
            for v in 1..=60u64 {
                c.write_invoked(0, 0, t, t);
                effect(&mut c, (0, 0, t), t + 1);
                assert!(!c.read(1, 0, t, t + 2, t + 3));
                t += 4;
                c.set_horizon(t);
                assert_eq!(v, (t - 1) / 4);
            }
            assert!(c.read(1, 0, 37, t, t + 1), "write 10 (value 37) is dead");
            assert!(!c.read(1, 0, t - 4, t + 2, t + 3), "write 60 is current");
            if at == 1 {
                // The current write, perhaps its predecessor, and what the next trim takes
                // (a key is trimmed once it holds twice what its last trim left).
                assert!(c.clusters_held() <= 3, "{}", c.clusters_held());
            } else {
                assert_eq!(c.clusters_held(), 61);
            }
        }
    }

    #[test]
    fn a_write_forgotten_before_it_landed_stays_dead_when_it_lands() {
        // Node 0 reads its own write 1 (not taken effect) [2, 3]: it takes the next place. Node
        // 1's write 4 takes effect after it and is answered at 5. With the horizon at 6, write
        // 1 is dead (a write after it answered at 5 < 6) and forgotten. It lands at 7: reads of
        // it stay stale.
        let mut c = Checker::with_compaction(1);
        c.write_invoked(0, 0, 1, 1);
        assert!(!c.read(0, 0, 1, 2, 3));
        c.write_invoked(1, 0, 4, 4);
        effect(&mut c, (1, 0, 4), 5);
        c.set_horizon(6);
        c.write_invoked(1, 0, 6, 6);
        effect(&mut c, (1, 0, 6), 7);
        assert_eq!(
            c.clusters_held(),
            2,
            "the initial value and write 1 forgotten"
        );
        effect(&mut c, (0, 0, 1), 8);
        assert!(c.read(2, 0, 1, 9, 10));
        assert!(!c.read(2, 0, 6, 11, 12));
        assert_eq!(c.counts().ambiguous, 0);
    }

    #[test]
    fn a_long_read_invoked_before_the_overwrite_is_not_stale() {
        // A read invoked at 2 (say, queued at a paused node) is answered at 9 with the
        // initial value, though w3 was answered at 4: it was invoked before, so it may be
        // placed first. The horizon stays at 2 while it is under way, and nothing is forgotten
        // that it may need.
        let mut c = Checker::with_compaction(1);
        c.set_horizon(2);
        c.write_invoked(0, 0, 3, 3);
        effect(&mut c, (0, 0, 3), 4);
        c.write_invoked(0, 0, 5, 5);
        effect(&mut c, (0, 0, 5), 6);
        assert!(!c.read(1, 0, INITIAL, 2, 9));
        assert!(c.read(1, 0, INITIAL, 10, 11));
    }
}
