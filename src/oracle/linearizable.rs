//! Stale reads, judged by linearizability of the client history as the run produces it, in
//! bounded memory.
//!
//! **The history.** Every client operation on one key (a register): a write of a value of its
//! own, or a read that returned one value ([`INITIAL`] before any write), each with an
//! *invocation* and a *response*, given as ticks: points of one total order, the order in which
//! the run produced them (true time, then the order of events at one instant). A write's
//! response is the instant it took effect (the register applied it, a quorum committed it); a
//! write that has not taken effect has none yet, and may take effect at any later point.
//!
//! **The rule.** Reads are judged in the order they are answered. A read is *stale* when the
//! history of every write, as known when the read is answered, and every read answered before it
//! that was not stale, with this read added, is not linearizable. So no read is stale exactly
//! when the whole history is linearizable; when it is not, the reads that made it so are.
//!
//! **The test.** For a register whose writes write unique values, linearizability is decided by
//! Gibbons and Korach's zones (P. B. Gibbons and E. Korach, "Testing Shared Memories", SIAM J.
//! Comput. 26(4), 1997, in the form W. Golab, X. Li and M. A. Shah give it in "Analyzing
//! Consistency Properties for Fun and Profit", PODC 2011). A write and the reads that returned
//! its value form a *cluster*; let f be the earliest response in it and s the latest invocation.
//! Its *zone* is *forward*, [f, s], when f < s (its operations must be ordered across that
//! span), else *backward*, [s, f] (they can all take effect at one point in it). The history is
//! linearizable iff no read is answered before its write was invoked, no two forward zones
//! overlap, and no backward zone lies inside a forward zone. A new read changes one cluster's
//! zone; it is checked against the others, kept in two ordered indexes (forward zones by start,
//! disjoint; backward zones by end): O(log n) per read, plus the backward zones that cross the
//! new zone's start (operations under way at one instant). A read that extends the newest zone
//! of its key, as reads of the current value do, needs no index at all.
//!
//! **Memory.** A cluster whose zone ended before the *horizon* H (no read answered from now on
//! was invoked before H; the engine says where it is) is *dead* once another such zone lies
//! after its earliest response: a read of its value now would make its zone reach past H,
//! across that one. Dead clusters are forgotten, leaving one number per key (the furthest a
//! forgotten zone reaches, which is all a later zone needs of them); a read of a forgotten
//! value is stale. What stays is the clusters alive at the horizon, which operations under way
//! bound. A write not yet taken effect is remembered, until then, only as its writer's latest
//! write of its key: the writer is the only node that can read it (the engine checks this), and
//! only while it is its latest. A forgotten cluster whose write had not taken effect leaves a
//! tombstone, so that the write does not come back as new when it lands late; at most
//! [`TOMBSTONES_KEPT`] are kept, and a write that lands with a value a dropped tombstone might
//! have named is counted ([`Counts::ambiguous`]): the count of stale reads is exact while that is
//! zero.

use crate::msg::{Key, NodeId, Value, INITIAL};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A point of the history: ticks increase in the order the run produces invocations and
/// responses, one tick each.
pub type Tick = u64;

/// The most tombstones kept (see the module doc), over every key.
pub const TOMBSTONES_KEPT: usize = 65_536;

/// A key is compacted once it holds this many clusters (or twice as many as its last
/// compaction left, if more).
const COMPACT_AT: usize = 32;

/// A cluster's zone: forward [f, s] or backward [s, f] (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Zone {
    Forward { from: Tick, to: Tick },
    Backward { from: Tick, to: Tick },
}

impl Zone {
    /// Its last tick.
    fn end(self) -> Tick {
        match self {
            Zone::Forward { to, .. } | Zone::Backward { to, .. } => to,
        }
    }

    /// How far it reaches for a later zone that starts at `a` and ends past it: a forward zone
    /// overlaps it iff its end is after `a`, a backward one lies inside it iff its start is.
    fn reach(self) -> Tick {
        match self {
            Zone::Forward { to, .. } => to,
            Zone::Backward { from, .. } => from,
        }
    }
}

/// A write and the reads that returned its value.
#[derive(Clone, Copy, Debug)]
struct Cluster {
    /// The write's invocation.
    write_inv: Tick,
    /// The write has taken effect (its response is among `min_res`).
    effective: bool,
    /// The earliest response among its operations (`None`: none answered yet).
    min_res: Option<Tick>,
    /// The latest invocation among them.
    max_inv: Tick,
}

impl Cluster {
    /// The zone, once some operation of the cluster has been answered.
    fn zone(&self) -> Option<Zone> {
        let f = self.min_res?;
        let s = self.max_inv;
        Some(if f < s {
            Zone::Forward { from: f, to: s }
        } else {
            Zone::Backward { from: s, to: f }
        })
    }

    /// The earliest response, which a read of it now would stretch a zone from.
    fn earliest(&self) -> Tick {
        self.min_res.expect("a cluster with a zone")
    }
}

/// One key's clusters and their zones.
#[derive(Debug)]
struct KeyHistory {
    clusters: BTreeMap<Value, Cluster>,
    /// Forward zones by start: (end, value). They never overlap.
    forward: BTreeMap<Tick, (Tick, Value)>,
    /// Backward zones by (end, value): start.
    backward: BTreeMap<(Tick, Value), Tick>,
    /// The furthest a forgotten zone reaches ([`Zone::reach`]).
    forgotten_reach: Option<Tick>,
    /// Forgotten clusters whose write had not taken effect.
    tombstones: BTreeSet<Value>,
    /// The highest value of a tombstone dropped to keep memory bounded.
    dropped_tombstone: Option<Value>,
    /// The latest end of any zone of the key, and the value whose zone ends there (`None` once
    /// that zone changed in another way or was forgotten).
    frontier: Tick,
    frontier_owner: Option<Value>,
    /// Compact once this many clusters are held.
    compact_at: usize,
}

impl KeyHistory {
    fn new(compact_min: usize) -> KeyHistory {
        let mut k = KeyHistory {
            clusters: BTreeMap::new(),
            forward: BTreeMap::new(),
            backward: BTreeMap::new(),
            forgotten_reach: None,
            tombstones: BTreeSet::new(),
            dropped_tombstone: None,
            frontier: 0,
            frontier_owner: None,
            compact_at: compact_min,
        };
        // The initial value: written and answered before everything, at tick 0.
        let initial = Cluster {
            write_inv: 0,
            effective: true,
            min_res: Some(0),
            max_inv: 0,
        };
        k.insert(INITIAL, initial);
        k
    }

    /// Adds cluster `v`, with its zone if it has one.
    fn insert(&mut self, v: Value, c: Cluster) {
        self.clusters.insert(v, c);
        if let Some(z) = c.zone() {
            self.index(v, z);
        }
    }

    fn index(&mut self, v: Value, z: Zone) {
        match z {
            Zone::Forward { from, to } => {
                self.forward.insert(from, (to, v));
            }
            Zone::Backward { from, to } => {
                self.backward.insert((to, v), from);
            }
        }
        if z.end() >= self.frontier {
            self.frontier = z.end();
            self.frontier_owner = Some(v);
        }
    }

    fn unindex(&mut self, v: Value, z: Zone) {
        match z {
            Zone::Forward { from, .. } => {
                self.forward.remove(&from);
            }
            Zone::Backward { to, .. } => {
                self.backward.remove(&(to, v));
            }
        }
        if self.frontier_owner == Some(v) {
            self.frontier_owner = None;
        }
    }

    /// Whether cluster `v` may take `new` for zone (its old zone `old`, if any): whether the
    /// history stays linearizable.
    fn fits(&self, v: Value, old: Option<Zone>, new: Zone) -> bool {
        match new {
            Zone::Forward { from: a, to: b } => {
                if self.forgotten_reach.is_some_and(|r| r > a) {
                    return false;
                }
                // Extending the newest zone of the key: nothing else ends after its old end.
                if let Some(Zone::Forward { from, to }) = old {
                    if from == a && self.frontier_owner == Some(v) && self.frontier == to {
                        return true;
                    }
                }
                self.no_forward_overlaps(v, a, b) && self.no_backward_inside(v, a, b)
            }
            Zone::Backward { from: s, to: e } => {
                // The forward zone that starts last before s is the only one that can hold it
                // (they do not overlap). v's own old zone was not forward (a zone never turns
                // from forward to backward).
                let holder = self.forward.range(..s).next_back();
                !holder.is_some_and(|(_, &(end, w))| w != v && end > e)
            }
        }
    }

    /// No forward zone but `v`'s overlaps (a, b): they are disjoint and ordered, so only the
    /// last starting before b can reach past a.
    fn no_forward_overlaps(&self, v: Value, a: Tick, b: Tick) -> bool {
        for (_, &(end, w)) in self.forward.range(..b).rev() {
            if w != v {
                return end <= a;
            }
        }
        true
    }

    /// No backward zone but `v`'s lies inside (a, b). Those ending before b are visited from
    /// the latest end down to a; one that starts after a lies inside, the others cross a.
    fn no_backward_inside(&self, v: Value, a: Tick, b: Tick) -> bool {
        for (&(end, w), &start) in self.backward.range(..(b, 0)).rev() {
            if end < a {
                break;
            }
            if w != v && start > a {
                return false;
            }
        }
        true
    }

    /// Cluster `v` takes `new` for its zone, with `c` its new state.
    fn rezone(&mut self, v: Value, c: Cluster, old: Option<Zone>, new: Zone) {
        match (old, new) {
            // The common case: a forward zone reaching further, updated in place.
            (Some(Zone::Forward { from, .. }), Zone::Forward { from: a, to }) if from == a => {
                if let Some(e) = self.forward.get_mut(&a) {
                    e.0 = to;
                }
                if to >= self.frontier {
                    self.frontier = to;
                    self.frontier_owner = Some(v);
                }
            }
            _ => {
                if let Some(z) = old {
                    self.unindex(v, z);
                }
                self.index(v, new);
            }
        }
        self.clusters.insert(v, c);
    }

    /// Forgets the dead clusters among those whose zones ended before `horizon` (see the
    /// module doc). Returns the values forgotten whose write had not taken effect.
    fn compact(&mut self, horizon: Tick, compact_min: usize) -> Vec<Value> {
        let old: Vec<(Value, Cluster, Zone)> = self
            .clusters
            .iter()
            .filter_map(|(&v, c)| c.zone().map(|z| (v, *c, z)))
            .filter(|(_, _, z)| z.end() < horizon)
            .collect();
        // The two furthest reaches among the old zones, to leave each cluster's own out.
        let mut top: [Option<(Tick, Value)>; 2] = [None, None];
        for &(v, _, z) in &old {
            let r = Some((z.reach(), v));
            if r > top[0] {
                top = [r, top[0]];
            } else if r > top[1] {
                top[1] = r;
            }
        }
        let mut forgotten = Vec::new();
        for (v, c, z) in old {
            let other = match top {
                [Some((_, w)), second] if w == v => second,
                [first, _] => first,
            };
            let reach = other.map(|(r, _)| r).max(self.forgotten_reach);
            if reach.is_some_and(|r| r > c.earliest()) {
                self.unindex(v, z);
                self.clusters.remove(&v);
                self.forgotten_reach = self.forgotten_reach.max(Some(z.reach()));
                if !c.effective {
                    forgotten.push(v);
                }
            }
        }
        self.compact_at = compact_min.max(2 * self.clusters.len());
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

/// The streaming linearizability checker of one run (see the module doc).
#[derive(Debug)]
pub struct Checker {
    keys: BTreeMap<Key, KeyHistory>,
    /// Per (writer, key), its latest write not yet taken effect nor read: (value, invocation).
    unread: BTreeMap<(NodeId, Key), (Value, Tick)>,
    /// Tombstones in the order they were made, over every key (at most [`TOMBSTONES_KEPT`]).
    tombstones: VecDeque<(Key, Value)>,
    /// No read answered from now on was invoked before this.
    horizon: Tick,
    /// A key holding at least this many clusters is compacted.
    compact_min: usize,
    counts: Counts,
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

    /// A checker that compacts a key once it holds `at` clusters (tests compact often, to
    /// show that forgetting changes no verdict).
    pub fn with_compaction(at: usize) -> Checker {
        Checker {
            keys: BTreeMap::new(),
            unread: BTreeMap::new(),
            tombstones: VecDeque::new(),
            horizon: 0,
            compact_min: at.max(1),
            counts: Counts::default(),
        }
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Clusters held now, over every key (what memory the history takes).
    pub fn clusters_held(&self) -> usize {
        self.keys.values().map(|k| k.clusters.len()).sum()
    }

    /// No read answered from now on was invoked before `tick` (it never moves back).
    pub fn set_horizon(&mut self, tick: Tick) {
        debug_assert!(tick >= self.horizon, "the horizon moved back");
        self.horizon = self.horizon.max(tick);
    }

    /// Key `key`'s history, begun if it has none yet.
    fn key(keys: &mut BTreeMap<Key, KeyHistory>, key: Key, compact_min: usize) -> &mut KeyHistory {
        keys.entry(key)
            .or_insert_with(|| KeyHistory::new(compact_min))
    }

    /// `writer` invoked a write of `value` to `key` at `inv`. Until it takes effect, only
    /// `writer` can read it, while it is its latest write of `key`.
    pub fn write_invoked(&mut self, writer: NodeId, key: Key, value: Value, inv: Tick) {
        debug_assert_ne!(value, INITIAL, "a write writes a value of its own");
        self.unread.insert((writer, key), (value, inv));
    }

    /// The write of `value` to `key` by `writer`, invoked at `inv`, took effect at `at`: its
    /// response.
    pub fn write_took_effect(
        &mut self,
        writer: NodeId,
        key: Key,
        value: Value,
        inv: Tick,
        at: Tick,
    ) {
        debug_assert!(at > inv, "a write takes effect after its invocation");
        if self
            .unread
            .get(&(writer, key))
            .is_some_and(|u| u.0 == value)
        {
            self.unread.remove(&(writer, key));
        }
        let k = Self::key(&mut self.keys, key, self.compact_min);
        match k.clusters.get(&value).copied() {
            Some(mut c) => {
                // Read before it took effect: its reads were answered earlier, so its zone
                // stays what it was.
                c.effective = true;
                let old = c.zone();
                c.min_res = Some(c.min_res.map_or(at, |m| m.min(at)));
                let new = c.zone().expect("answered");
                debug_assert!(old.is_none() || old == Some(new));
                k.rezone(value, c, old, new);
            }
            None if k.tombstones.remove(&value) => {
                // Forgotten as dead before it landed: it stays dead.
            }
            None => {
                if k.dropped_tombstone.is_some_and(|d| value <= d) {
                    self.counts.ambiguous += 1;
                }
                let c = Cluster {
                    write_inv: inv,
                    effective: true,
                    min_res: Some(at),
                    max_inv: inv,
                };
                // A new backward zone ending now lies inside no forward zone: those end at
                // invocations before now.
                debug_assert!(k.fits(value, None, c.zone().expect("answered")));
                k.insert(value, c);
            }
        }
        self.maybe_compact(key);
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
        let unread = self.unread.get(&(reader, key)).copied();
        let k = Self::key(&mut self.keys, key, self.compact_min);
        let cluster = match k.clusters.get(&value) {
            Some(c) => Some(*c),
            // Its writer reads the write it has not seen take effect yet.
            None if unread.is_some_and(|u| u.0 == value) => {
                let (_, write_inv) = unread.expect("checked");
                Some(Cluster {
                    write_inv,
                    effective: false,
                    min_res: None,
                    max_inv: write_inv,
                })
            }
            // A value forgotten as dead.
            None => None,
        };
        let stale = match cluster {
            None => true,
            Some(c) => {
                debug_assert!(res > c.write_inv, "a read answered before its write began");
                let old = c.zone();
                let next = Cluster {
                    min_res: Some(c.min_res.map_or(res, |m| m.min(res))),
                    max_inv: c.max_inv.max(inv),
                    ..c
                };
                let new = next.zone().expect("answered");
                if old == Some(new) {
                    false
                } else if k.fits(value, old, new) {
                    k.rezone(value, next, old, new);
                    false
                } else {
                    true
                }
            }
        };
        if !stale && unread.is_some_and(|u| u.0 == value) {
            self.unread.remove(&(reader, key));
        }
        if stale {
            self.counts.stale += 1;
        }
        self.maybe_compact(key);
        stale
    }

    fn maybe_compact(&mut self, key: Key) {
        let horizon = self.horizon;
        let min = self.compact_min;
        let k = self.keys.get_mut(&key).expect("the key was just touched");
        if k.clusters.len() < k.compact_at {
            return;
        }
        for v in k.compact(horizon, min) {
            k.tombstones.insert(v);
            self.tombstones.push_back((key, v));
        }
        while self.tombstones.len() > TOMBSTONES_KEPT {
            let (key, v) = self.tombstones.pop_front().expect("over the bound");
            if let Some(k) = self.keys.get_mut(&key) {
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

    /// Ticks as a test writes them: every invocation and response its own.
    #[test]
    fn a_read_of_the_value_before_a_finished_write_is_stale() {
        // w1 [1, 2] writes 1; a read [3, 4] of the initial value misses it: the initial value's
        // forward zone [0, 3] would hold w1's backward zone [1, 2].
        let mut c = Checker::new();
        c.write_invoked(0, 0, 1, 1);
        c.write_took_effect(0, 0, 1, 1, 2);
        assert!(c.read(1, 0, INITIAL, 3, 4));
        // A read of 1 is fine.
        assert!(!c.read(1, 0, 1, 5, 6));
        assert_eq!(c.counts().stale, 1);
    }

    #[test]
    fn a_read_overlapping_the_write_may_return_either_value() {
        // w1 [1, 4]; reads [2, 5] of the initial value and [3, 6] of 1: both linearizable
        // (read 0 at 2, w1 at 3, read 1 at 3.5).
        let mut c = Checker::new();
        c.write_invoked(0, 0, 1, 1);
        c.write_took_effect(0, 0, 1, 1, 4);
        assert!(!c.read(1, 0, INITIAL, 2, 5));
        assert!(!c.read(2, 0, 1, 3, 6));
        // But a read invoked after both were answered cannot go back to 0: the initial value's
        // zone would become forward [0, 7], and 1's backward zone [3, 4] lies inside it.
        assert!(c.read(1, 0, INITIAL, 7, 8));
    }

    #[test]
    fn a_new_old_inversion_between_reads_blames_the_later_read() {
        // w1 invoked at 1, not yet taken effect; its writer reads it [2, 3]; another read
        // [4, 5] returns the initial value. Each alone is linearizable (w1 may take effect
        // later); together not: the later one is stale.
        let mut c = Checker::new();
        c.write_invoked(0, 0, 1, 1);
        assert!(!c.read(0, 0, 1, 2, 3));
        assert!(c.read(1, 0, INITIAL, 4, 5));
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
    fn forgetting_dead_clusters_changes_no_verdict() {
        // Writes 1..=60 one after another, each read once after it took effect; then a read of
        // 10 (long dead) and a read of 60 (the current value). Compacting at every step or
        // never gives the same verdicts.
        for at in [1, 1_000_000] {
            let mut c = Checker::with_compaction(at);
            let mut t = 1;
            for v in 1..=60u64 {
                c.write_invoked(0, 0, v, t);
                c.write_took_effect(0, 0, v, t, t + 1);
                assert!(!c.read(1, 0, v, t + 2, t + 3));
                t += 4;
                c.set_horizon(t);
            }
            assert!(c.read(1, 0, 10, t, t + 1));
            assert!(!c.read(1, 0, 60, t + 2, t + 3));
            if at == 1 {
                assert!(c.clusters_held() <= 3, "{}", c.clusters_held());
            }
        }
    }

    #[test]
    fn a_write_forgotten_before_it_landed_stays_dead_when_it_lands() {
        // Node 0 writes 1 (in flight) and reads it [2, 3]; node 1's write 2 [4, 5] takes
        // effect and is read [6, 7]. With the horizon at 8, the cluster of 1 is dead (2's
        // zone lies after its earliest response 3) and forgotten. Write 1 then lands at 9:
        // reads of it stay stale.
        let mut c = Checker::with_compaction(1);
        c.write_invoked(0, 0, 1, 1);
        assert!(!c.read(0, 0, 1, 2, 3));
        c.write_invoked(1, 0, 2, 4);
        c.write_took_effect(1, 0, 2, 4, 5);
        assert!(!c.read(1, 0, 2, 6, 7));
        c.set_horizon(8);
        c.write_invoked(1, 0, 3, 8);
        c.write_took_effect(1, 0, 3, 8, 9);
        c.write_took_effect(0, 0, 1, 1, 10);
        assert!(c.read(2, 0, 1, 11, 12));
        assert_eq!(c.counts().ambiguous, 0);
    }
}
