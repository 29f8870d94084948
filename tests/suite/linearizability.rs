//! The streaming linearizability checker (`oracle::linearizable::Checker`) against a brute-force
//! one: Wing and Gong's search over the orders of the operations, as Knossos and porcupine
//! check histories, memoised on (operations linearized, register value), and held to the
//! register's order of the writes.
//!
//! The definition both implement: a history is linearizable *with the register's order* when
//! each operation can be given a point in its interval (an operation with no response anywhere
//! after its invocation) such that each read returns the latest write before it and the writes
//! of each key come in the order they took effect; a write that its writer read before it took
//! effect takes its place in that order at the first such read. A write's response is its
//! acknowledgement, not its effect. Reads are judged in the order they are answered (the greedy
//! rule): a read is stale iff the operations known at its response (every write invoked before
//! it, with only the responses and places in the order it had by then, the reads answered
//! before it that were not stale, and itself) are not linearizable with the order known then.
//! The brute force searches for such a linearization; the checker applies its one-line
//! condition. Neither borrows from the other.
//!
//! Random small histories (a few keys, nodes and operations; writes taking effect in any order,
//! answered late, at once as a quorum's commit, or never; writes read by their writer before
//! they took effect; reads long and instantaneous, of values other reads returned) must get the
//! same stale reads from both, with and without the checker forgetting dead writes.
//! Hand-written histories pin the classic anomalies and what the order changes, each with its
//! reasoning. Short runs of every bundled scenario must get, from the brute force, exactly the
//! stale reads the engine's checker reported.

use leasesim::msg::{Key, NodeId, Value, INITIAL};
use leasesim::oracle::linearizable::{Checker, Tick};
use leasesim::scenario::{library, load};
use leasesim::trace::history::{History, Operation};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::collections::{BTreeMap, BTreeSet};

// ---------------------------------------------------------------------------------------------
// Histories
// ---------------------------------------------------------------------------------------------

/// One client operation. Ticks are points of one total order (tick 0 is the initial value's,
/// before every operation).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Op {
    node: NodeId,
    key: Key,
    value: Value,
    inv: Tick,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A write: the tick it took effect at (the register applied it, a quorum committed it),
    /// if it did, and the tick it was acknowledged at (its response), if it was: at the effect
    /// for a quorum's commit, later for a register's answer, never if the answer was lost.
    Write {
        effect: Option<Tick>,
        answer: Option<Tick>,
    },
    /// A read that returned `value`, answered at `res`.
    Read { res: Tick },
}

impl Op {
    fn write(node: NodeId, key: Key, value: Value, inv: Tick, effect: Option<Tick>) -> Op {
        Op {
            node,
            key,
            value,
            inv,
            kind: Kind::Write {
                effect,
                answer: None,
            },
        }
    }

    /// This write, acknowledged at `at`.
    fn answered(mut self, at: Tick) -> Op {
        let Kind::Write { effect, .. } = self.kind else {
            panic!("a read is not acknowledged")
        };
        self.kind = Kind::Write {
            effect,
            answer: Some(at),
        };
        self
    }

    fn read(node: NodeId, key: Key, value: Value, inv: Tick, res: Tick) -> Op {
        Op {
            node,
            key,
            value,
            inv,
            kind: Kind::Read { res },
        }
    }

    /// A read's response.
    fn res(&self) -> Option<Tick> {
        match self.kind {
            Kind::Read { res } => Some(res),
            Kind::Write { .. } => None,
        }
    }

    /// A write's effect.
    fn effect(&self) -> Option<Tick> {
        match self.kind {
            Kind::Write { effect, .. } => effect,
            Kind::Read { .. } => None,
        }
    }

    /// A write's acknowledgement.
    fn answer(&self) -> Option<Tick> {
        match self.kind {
            Kind::Write { answer, .. } => answer,
            Kind::Read { .. } => None,
        }
    }

    fn is_write(&self) -> bool {
        matches!(self.kind, Kind::Write { .. })
    }
}

/// Panics unless `h` is a history the checker may be given (the engine's invariants): distinct
/// ticks after 0 (but a quorum's commit is a write's effect and its acknowledgement at once),
/// each response after its invocation, a write acknowledged only once it took effect, writes of
/// unique values other than [`INITIAL`], and every read returning [`INITIAL`], a value whose
/// write took effect before the read was answered, or its reader's latest write of the key
/// invoked before then.
fn assert_valid(h: &[Op]) {
    let mut ticks = BTreeSet::new();
    let mut writes: BTreeMap<(Key, Value), &Op> = BTreeMap::new();
    // Per node and key, the invocations of its writes.
    let mut own: BTreeMap<(NodeId, Key), Vec<Tick>> = BTreeMap::new();
    for o in h {
        assert!(
            o.inv > 0 && ticks.insert(o.inv),
            "tick {} reused: {o:?}",
            o.inv
        );
        if let Some(res) = o.res() {
            assert!(res > o.inv && ticks.insert(res), "tick {res}: {o:?}");
        }
        if let Some(e) = o.effect() {
            assert!(e > o.inv && ticks.insert(e), "tick {e}: {o:?}");
        }
        if let Some(a) = o.answer() {
            let e = o.effect().expect("a write acknowledged took effect");
            assert!(a >= e && (a == e || ticks.insert(a)), "tick {a}: {o:?}");
        }
        if o.is_write() {
            assert!(
                o.value != INITIAL && writes.insert((o.key, o.value), o).is_none(),
                "{o:?}"
            );
            own.entry((o.node, o.key)).or_default().push(o.inv);
        }
    }
    for invs in own.values_mut() {
        invs.sort_unstable();
    }
    for r in h {
        let Some(res) = r.res() else { continue };
        if r.value == INITIAL {
            continue;
        }
        let w = writes
            .get(&(r.key, r.value))
            .unwrap_or_else(|| panic!("a read of a value never written: {r:?}"));
        let landed = w.effect().is_some_and(|e| e < res);
        let latest = own
            .get(&(r.node, r.key))
            .and_then(|invs| invs[..invs.partition_point(|&i| i < res)].last());
        let latest_own = w.node == r.node && latest == Some(&w.inv);
        assert!(landed || latest_own, "{r:?} reads {w:?}");
    }
}

/// Where each write of `h` took its place in its key's order (`None` for reads): when it took
/// effect, or when its writer first read it, if that came before (it keeps that place when it
/// takes effect); `None` if neither happened.
fn places(h: &[Op]) -> Vec<Option<Tick>> {
    let mut first_read: BTreeMap<(NodeId, Key, Value), Tick> = BTreeMap::new();
    for r in h {
        if let Some(res) = r.res() {
            let t = first_read.entry((r.node, r.key, r.value)).or_insert(res);
            *t = (*t).min(res);
        }
    }
    h.iter()
        .map(|w| {
            if !w.is_write() {
                return None;
            }
            let read = first_read.get(&(w.node, w.key, w.value)).copied();
            match (w.effect(), read) {
                (Some(e), Some(r)) => Some(e.min(r)),
                (e, r) => e.or(r),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The brute force
// ---------------------------------------------------------------------------------------------

/// How the brute force searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Wing and Gong's search as it is, on each key's whole history, the writes in the
    /// register's order.
    Plain,
    /// The same, the writes in any order (a check of the client history alone).
    OrderFree,
    /// As `Plain`, each key's history split at its cuts ([`parts`]) and the search reduced
    /// ([`Search::search`]), which no verdict depends on: what the real histories need, checked
    /// against `Plain` on the random ones.
    Fast,
}

/// An operation as the search sees it.
#[derive(Clone, Copy, Debug)]
struct LinOp {
    inv: Tick,
    /// Its response; `None`: it may be placed at any point after its invocation.
    res: Option<Tick>,
    kind: LinKind,
    value: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LinKind {
    Read,
    /// A write, with its place in the register's order as known (`Some(k)`: the k-th, from 0);
    /// one not in it yet (`None`) will enter it later, after every write that is.
    Write(Option<usize>),
}

/// Whether the operations of one register holding `start` are linearizable (with the writes in
/// the register's order, unless `mode` is [`Mode::OrderFree`]): Wing and Gong's search, which
/// linearizes next any operation invoked before every response still to come, provided the
/// register allows it (a read returns the current value; a write is the next in the order),
/// memoised on (operations linearized, value) as porcupine does. It succeeds once every
/// operation with a response is linearized: the rest can follow, in the order, after
/// everything.
fn linearizable(ops: &[LinOp], start: Value, mode: Mode) -> bool {
    let mut ops = ops.to_vec();
    ops.sort_by_key(|o| o.inv);
    let mut reads_left: BTreeMap<Value, usize> = BTreeMap::new();
    for o in ops.iter().filter(|o| o.kind == LinKind::Read) {
        *reads_left.entry(o.value).or_default() += 1;
    }
    let mut s = Search {
        ranked: ops
            .iter()
            .filter(|o| matches!(o.kind, LinKind::Write(Some(_))))
            .count(),
        responses: (ops.iter().enumerate())
            .filter_map(|(i, o)| o.res.map(|r| (r, i)))
            .collect(),
        reads_left,
        done: BTreeSet::new(),
        seen: BTreeSet::new(),
        ops,
        mode,
    };
    s.search(0, 0, start)
}

struct Search {
    /// By invocation.
    ops: Vec<LinOp>,
    mode: Mode,
    /// Writes with a place in the order.
    ranked: usize,
    /// The responses of the operations not linearized yet.
    responses: BTreeSet<(Tick, usize)>,
    /// The reads not linearized yet, per value.
    reads_left: BTreeMap<Value, usize>,
    /// The operations linearized.
    done: BTreeSet<usize>,
    /// States searched: (the first operation not linearized, those linearized after it,
    /// value).
    seen: BTreeSet<(usize, Vec<usize>, Value)>,
}

impl Search {
    /// Linearizes operation `i` (or undoes it).
    fn flip(&mut self, i: usize) {
        let o = self.ops[i];
        let taking = self.done.insert(i);
        if !taking {
            self.done.remove(&i);
        }
        if let Some(r) = o.res {
            match taking {
                true => self.responses.remove(&(r, i)),
                false => self.responses.insert((r, i)),
            };
        }
        if o.kind == LinKind::Read {
            let left = self.reads_left.get_mut(&o.value).expect("counted");
            *left = if taking { *left - 1 } else { *left + 1 };
        }
    }

    /// From the state where every operation before `lo` and those in `done` are linearized,
    /// `next` writes of the order among them, and the register holds `value`.
    ///
    /// [`Mode::Fast`] reduces the search twice. Values are unique and no write writes the
    /// register's start value, so a value once overwritten never comes back: (1) a read that may
    /// be linearized now and returns the current value is linearized at once, without trying
    /// the alternatives (if some continuation succeeds, the one that takes this read first
    /// does: every operation before it in that continuation is a read of the same value, and
    /// taking the read out of those left only lets others be linearized sooner); (2) once no
    /// such read is left, none of the current value may be (one not yet invoked before every
    /// response to come can only become so after a write or a read of another value), so the
    /// search gives up there.
    fn search(&mut self, lo: usize, next: usize, value: Value) -> bool {
        let mut lo = lo;
        while self.done.contains(&lo) {
            lo += 1;
        }
        let Some(&(first_res, _)) = self.responses.first() else {
            return true;
        };
        let state = (lo, self.done.range(lo..).copied().collect(), value);
        if !self.seen.insert(state) {
            return false;
        }
        let candidates: Vec<usize> = (lo..self.ops.len())
            .take_while(|&i| self.ops[i].inv < first_res)
            .filter(|i| !self.done.contains(i))
            .collect();
        if self.mode == Mode::Fast {
            let current = |o: &LinOp| o.kind == LinKind::Read && o.value == value;
            if let Some(&i) = candidates.iter().find(|&&i| current(&self.ops[i])) {
                return self.linearize(i, lo, next, value);
            }
            if self.reads_left.get(&value).is_some_and(|&n| n > 0) {
                return false;
            }
        }
        for i in candidates {
            let o = self.ops[i];
            let next = match o.kind {
                LinKind::Read if o.value == value => next,
                LinKind::Read => continue,
                LinKind::Write(_) if self.mode == Mode::OrderFree => next,
                LinKind::Write(Some(k)) if k == next => next + 1,
                LinKind::Write(None) if next == self.ranked => next,
                LinKind::Write(_) => continue,
            };
            if self.linearize(i, lo, next, o.value) {
                return true;
            }
        }
        false
    }

    /// Linearizes operation `i`, leaving the register holding `value`, and searches on.
    fn linearize(&mut self, i: usize, lo: usize, next: usize, value: Value) -> bool {
        self.flip(i);
        let found = self.search(lo, next, value);
        self.flip(i);
        found
    }
}

/// The operations of `part` (indices into `h`, of one key) as known at tick `now`, for the
/// search: the writes invoked before `now` (a response after `now` is none yet; the order as
/// far as it was taken by `now`), and the reads `reads`. [`Mode::Fast`] leaves out the writes
/// not in the order yet that no read returns: they can always be placed after everything.
fn known_at(
    h: &[Op],
    places: &[Option<Tick>],
    (part, now): (&[usize], Tick),
    reads: &[usize],
    mode: Mode,
) -> Vec<LinOp> {
    let mut ordered: Vec<(Tick, usize)> = part
        .iter()
        .filter_map(|&i| places[i].filter(|&p| p < now).map(|p| (p, i)))
        .collect();
    ordered.sort_unstable();
    let rank: BTreeMap<usize, usize> = ordered
        .iter()
        .enumerate()
        .map(|(k, &(_, i))| (i, k))
        .collect();
    let read: BTreeSet<Value> = reads.iter().map(|&i| h[i].value).collect();
    let mut ops: Vec<LinOp> = part
        .iter()
        .filter(|&&i| h[i].is_write() && h[i].inv < now)
        .map(|&i| LinOp {
            inv: h[i].inv,
            res: h[i].answer().filter(|&a| a < now),
            kind: LinKind::Write(rank.get(&i).copied()),
            value: h[i].value,
        })
        .filter(|o| mode != Mode::Fast || o.kind != LinKind::Write(None) || read.contains(&o.value))
        .collect();
    ops.extend(reads.iter().map(|&i| LinOp {
        inv: h[i].inv,
        res: h[i].res(),
        kind: LinKind::Read,
        value: h[i].value,
    }));
    ops
}

/// One key's operations `ops` (indices into `h`, by invocation) split at its *cuts*, each part
/// with the value the register holds at its start.
///
/// A cut is a point by which every operation invoked before it has settled: a read was
/// answered; a write was acknowledged, or a write after it in the order was (it comes before
/// that one), or it never took a place in the order (nobody read it: it can go after
/// everything). Then every operation invoked before the cut that the search must place comes
/// before every operation invoked after it (by real time, or by the order: the writes placed
/// before the cut precede those placed after it). So, for any read answered after the cut, the
/// history known at its response is linearizable iff the part before the cut (with the reads
/// accepted there) is, and the part after it is, starting from the value of the last write
/// placed before the cut. The greedy rule then judges each read with its part alone, once the
/// parts before it are found linearizable as wholes.
fn parts(h: &[Op], places: &[Option<Tick>], ops: &[usize]) -> Vec<(Value, Vec<usize>)> {
    // Per write placed in the order, the first acknowledgement among the writes after it.
    let mut ordered: Vec<(Tick, usize)> = ops
        .iter()
        .filter_map(|&i| places[i].map(|p| (p, i)))
        .collect();
    ordered.sort_unstable();
    let mut answered_after: BTreeMap<usize, Tick> = BTreeMap::new();
    let mut first = Tick::MAX;
    for &(_, i) in ordered.iter().rev() {
        answered_after.insert(i, first);
        first = first.min(h[i].answer().unwrap_or(Tick::MAX));
    }
    let settled = |i: usize| match (h[i].res().or(h[i].answer()), places[i]) {
        (Some(t), _) => t,
        (None, None) => 0,
        (None, Some(_)) => answered_after[&i],
    };
    let mut parts = Vec::new();
    let mut part: Vec<usize> = Vec::new();
    let mut start = INITIAL;
    // The write placed last so far: (place, value).
    let mut last: Option<(Tick, Value)> = None;
    let mut reach: Tick = 0;
    for &i in ops {
        if !part.is_empty() && reach < h[i].inv {
            parts.push((start, std::mem::take(&mut part)));
            start = last.map_or(INITIAL, |(_, v)| v);
        }
        part.push(i);
        reach = reach.max(settled(i));
        if let Some(p) = places[i] {
            if last.is_none_or(|(q, _)| p > q) {
                last = Some((p, h[i].value));
            }
        }
    }
    if !part.is_empty() {
        parts.push((start, part));
    }
    parts
}

/// Each key's operations of `h` (indices, by invocation).
fn by_key(h: &[Op]) -> BTreeMap<Key, Vec<usize>> {
    let mut keys: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
    for (i, o) in h.iter().enumerate() {
        keys.entry(o.key).or_default().push(i);
    }
    for ops in keys.values_mut() {
        ops.sort_by_key(|&i| h[i].inv);
    }
    keys
}

/// The stale reads of `h` (indices, ascending), by the greedy rule: each read, in the order
/// they were answered, is checked with what was known of its key at its response, and the reads
/// of its key accepted before it (linearizability is local: key by key).
fn stale_reads(h: &[Op], mode: Mode) -> Vec<usize> {
    let places = places(h);
    let mut stale = Vec::new();
    for ops in by_key(h).values() {
        let parts = match mode {
            Mode::Fast => parts(h, &places, ops),
            Mode::Plain | Mode::OrderFree => vec![(INITIAL, ops.clone())],
        };
        // Whether a part before was not linearizable: nothing after it is then.
        let mut broken = false;
        for (start, part) in parts {
            let mut reads: Vec<usize> = part
                .iter()
                .copied()
                .filter(|&i| h[i].res().is_some())
                .collect();
            reads.sort_by_key(|&i| h[i].res());
            let mut accepted = Vec::new();
            for r in reads {
                accepted.push(r);
                let res = h[r].res().expect("a read");
                let ops = known_at(h, &places, (&part, res), &accepted, mode);
                if broken || !linearizable(&ops, start, mode) {
                    accepted.pop();
                    stale.push(r);
                }
            }
            let whole = known_at(h, &places, (&part, Tick::MAX), &accepted, mode);
            broken = broken || !linearizable(&whole, start, mode);
        }
    }
    stale.sort_unstable();
    stale
}

/// Whether the whole of `h` is linearizable with the register's order, key by key.
fn whole_history_linearizable(h: &[Op]) -> bool {
    let places = places(h);
    by_key(h).values().all(|ops| {
        let reads: Vec<usize> = ops
            .iter()
            .copied()
            .filter(|&i| h[i].res().is_some())
            .collect();
        let ops = known_at(h, &places, (ops, Tick::MAX), &reads, Mode::Plain);
        linearizable(&ops, INITIAL, Mode::Plain)
    })
}

// ---------------------------------------------------------------------------------------------
// The fast checker, fed event by event
// ---------------------------------------------------------------------------------------------

/// What the driver feeds the checker at one tick, for operation `usize` (at one tick, a
/// quorum's commit takes effect before it is acknowledged).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    WriteInvoked,
    TookEffect,
    WriteAnswered,
    ReadAnswered,
}

/// The stale reads of `h` (indices, ascending) by `checker`, fed in tick order: a write when it
/// is invoked, when it takes effect and when it is acknowledged, a read when it is answered,
/// and before each event the horizon: the earliest invocation of a read not answered yet, or
/// the tick itself.
fn fast_stale(h: &[Op], mut checker: Checker) -> (Vec<usize>, Checker) {
    let mut events: Vec<(Tick, Event, usize)> = Vec::new();
    for (i, o) in h.iter().enumerate() {
        match o.kind {
            Kind::Write { effect, answer } => {
                events.push((o.inv, Event::WriteInvoked, i));
                if let Some(e) = effect {
                    events.push((e, Event::TookEffect, i));
                }
                if let Some(a) = answer {
                    events.push((a, Event::WriteAnswered, i));
                }
            }
            Kind::Read { res } => events.push((res, Event::ReadAnswered, i)),
        }
    }
    events.sort_unstable();
    let mut stale = Vec::new();
    for (t, event, i) in events {
        let horizon = h
            .iter()
            .filter(|r| r.res().is_some_and(|res| res >= t))
            .map(|r| r.inv)
            .fold(t, Tick::min);
        checker.set_horizon(horizon);
        let o = &h[i];
        match event {
            Event::WriteInvoked => checker.write_invoked(o.node, o.key, o.value, o.inv),
            Event::TookEffect => checker.write_took_effect(o.node, o.key, o.value, o.inv),
            Event::WriteAnswered => checker.write_answered(o.node, o.key, o.value, o.inv, t),
            Event::ReadAnswered => {
                if checker.read(o.node, o.key, o.value, o.inv, t) {
                    stale.push(i);
                }
            }
        }
    }
    stale.sort_unstable();
    (stale, checker)
}

/// Checks `h` with the brute force and with the checker, default and compacting as often as it
/// can, and returns the stale reads they agree on (panicking with the history if they do not).
fn agreed_stale(h: &[Op]) -> Vec<usize> {
    assert_valid(h);
    let want = stale_reads(h, Mode::Plain);
    assert_eq!(
        stale_reads(h, Mode::Fast),
        want,
        "the brute force cut and reduced (left) against its plain search on {h:#?}"
    );
    let reads = h.iter().filter(|o| o.res().is_some()).count() as u64;
    for (name, checker) in [
        ("Checker::new()", Checker::new()),
        ("Checker::with_compaction(1)", Checker::with_compaction(1)),
    ] {
        let (got, c) = fast_stale(h, checker);
        assert_eq!(got, want, "{name} (left) against the brute force on {h:#?}");
        let counts = c.counts();
        assert_eq!((counts.reads, counts.stale), (reads, want.len() as u64));
        assert_eq!(counts.ambiguous, 0);
    }
    want
}

// ---------------------------------------------------------------------------------------------
// Hand-written histories
// ---------------------------------------------------------------------------------------------

/// A stale read after an acknowledged write: node 0's w1 is invoked at 1, takes effect at 2 and
/// is acknowledged at 5. Node 1 reads [3, 4] and gets the initial value: fine, though w1 had
/// taken effect (nobody had heard of it; it may be placed at 4.5). Node 1 reads [6, 7] and gets
/// the initial value again: stale, w1 was acknowledged at 5, so it comes before 5 and the read
/// after 6. A read [8, 9] of 1 is fine. As a quorum's commit (effect and acknowledgement both
/// at 5) nothing changes.
#[test]
fn a_read_of_the_old_value_after_an_acknowledged_write_is_stale() {
    for effect in [2, 5] {
        let h = [
            Op::write(0, 0, 1, 1, Some(effect)).answered(5),
            Op::read(1, 0, INITIAL, 3, 4),
            Op::read(1, 0, INITIAL, 6, 7),
            Op::read(1, 0, 1, 8, 9),
        ];
        assert_eq!(agreed_stale(&h), [2], "w1 takes effect at {effect}");
    }
}

/// A write that took effect but was never heard of does not make reads stale: node 0's w1 is
/// invoked at 1 and takes effect at 2; its acknowledgement is lost. Node 1 reads the initial
/// value [3, 4] and [5, 6]: fine (w1 placed at 6.5). Node 2 reads 1 [7, 8]: fine, and now w1
/// has a response (8), the read's. Node 1 reads the initial value [9, 10]: stale.
#[test]
fn a_write_nobody_heard_of_does_not_make_reads_stale() {
    let h = [
        Op::write(0, 0, 1, 1, Some(2)),
        Op::read(1, 0, INITIAL, 3, 4),
        Op::read(1, 0, INITIAL, 5, 6),
        Op::read(2, 0, 1, 7, 8),
        Op::read(1, 0, INITIAL, 9, 10),
    ];
    assert_eq!(agreed_stale(&h), [4]);
}

/// A new-old inversion between two reads: node 0 invokes w1 at 1 and reads it [2, 3] before it
/// takes effect (the engine serves a writer its latest write): w1 takes its place in the order
/// at 3, and has a response there. Node 1 reads [4, 9], overlapping w1, and gets the initial
/// value. Either read alone is linearizable (w1 before 3, or w1 after 4); together not, as w1
/// must come before 3 and the second read after 4. The later-answered read is blamed. Whether
/// w1 then takes effect at 8 and is acknowledged at 10, takes effect and is never
/// acknowledged, or never takes effect, nothing changes: the writer's read already placed it.
#[test]
fn a_new_old_inversion_blames_the_later_read() {
    let w1 = Op::write(0, 0, 1, 1, Some(8));
    for w1 in [w1.clone().answered(10), w1, Op::write(0, 0, 1, 1, None)] {
        let h = [
            w1.clone(),
            Op::read(0, 0, 1, 2, 3),
            Op::read(1, 0, INITIAL, 4, 9),
        ];
        assert_eq!(agreed_stale(&h), [2], "{w1:?}");
    }
}

/// A read concurrent with a write may return either value: node 0's w1 is invoked at 1, takes
/// effect at 4 and is acknowledged at 8 (or never). Node 1 reads [2, 6] and gets the initial
/// value, node 2 reads [3, 7] and gets 1 (read 0 at 3.5, w1 at 4.5, read 1 at 5). Swapped as
/// well: node 1 gets 1 and node 2 the initial value (read 0 at 3.5, w1 at 4.5, read 1 at 5),
/// though node 1's read began first. But a read [9, 10] cannot go back to the initial value:
/// a read of 1 was answered before it began (and w1 acknowledged, if it was).
#[test]
fn a_read_concurrent_with_a_write_may_return_either_value() {
    for answered in [true, false] {
        for (first, second) in [(INITIAL, 1), (1, INITIAL)] {
            let w1 = Op::write(0, 0, 1, 1, Some(4));
            let h = [
                if answered { w1.answered(8) } else { w1 },
                Op::read(1, 0, first, 2, 6),
                Op::read(2, 0, second, 3, 7),
                Op::read(1, 0, INITIAL, 9, 10),
            ];
            assert_eq!(
                agreed_stale(&h),
                [3],
                "{first} then {second}, w1 acknowledged: {answered}"
            );
        }
    }
}

/// A pending write read by its writer, then lost: node 0 invokes w1 at 1 and reads it [2, 3];
/// w1 never takes effect, but has its place in the order (first) and a response (3). Node 1's
/// w2 is invoked at 4, takes effect at 5 (second in the order) and is acknowledged at 6; node 1
/// reads it [7, 8]: fine (w1 at 2.5, w2 at 5.5). Node 2 then reads [9, 10] and gets the initial
/// value: stale, w1 came before 3, although it never took effect. Node 0 reading 1 again
/// [11, 12] is stale too: w2 comes after w1 and was acknowledged at 6.
#[test]
fn a_pending_write_read_by_its_writer_then_lost() {
    let h = [
        Op::write(0, 0, 1, 1, None),
        Op::read(0, 0, 1, 2, 3),
        Op::write(1, 0, 2, 4, Some(5)).answered(6),
        Op::read(1, 0, 2, 7, 8),
        Op::read(2, 0, INITIAL, 9, 10),
        Op::read(0, 0, 1, 11, 12),
    ];
    assert_eq!(agreed_stale(&h), [4, 5]);
}

/// Two overlapping writes that the register applied in one order and acknowledged in the other:
/// node 0 invokes w1 at 1, node 1 invokes w2 at 2; w1 takes effect at 3, w2 at 4; w2 is
/// acknowledged at 5, w1 at 6. Node 2 then reads [7, 8] and gets 1: stale, as w2 comes after w1
/// in the register and was acknowledged before the read began. A check of the client history
/// alone may order the writes either way (w2 at 4.5, w1 at 5.5, the read at 7.5) and allows it;
/// it blames instead a read [9, 10] of 2, which with the order is fine.
#[test]
fn the_register_s_order_decides_between_overlapping_writes() {
    let h = [
        Op::write(0, 0, 1, 1, Some(3)).answered(6),
        Op::write(1, 0, 2, 2, Some(4)).answered(5),
        Op::read(2, 0, 1, 7, 8),
        Op::read(2, 0, 2, 9, 10),
    ];
    assert_eq!(agreed_stale(&h), [2]);
    assert_eq!(stale_reads(&h, Mode::OrderFree), [3], "without the order");
}

/// A write read by its writer before it took effect takes its place in the order at that read,
/// and keeps it when it takes effect: node 0 invokes w1 at 1; node 1's w2 is invoked at 2 and
/// takes effect at 3 (its acknowledgement lost). Node 0 reads its own w1 [5, 6]: w1 goes after
/// w2 in the order, and has a response (6). Node 2 reads 2 [7, 8]: stale, w1 comes after w2 and
/// was answered before 7 (without the order, w1 at 5.5 and w2 at 6.5 would allow it). w1 takes
/// effect at 9, after w2 still, and is acknowledged at 10: a read [11, 12] of 2 is stale, a
/// read [13, 14] of 1 fine.
#[test]
fn a_write_read_by_its_writer_takes_its_place_at_that_read() {
    let h = [
        Op::write(0, 0, 1, 1, Some(9)).answered(10),
        Op::write(1, 0, 2, 2, Some(3)),
        Op::read(0, 0, 1, 5, 6),
        Op::read(2, 0, 2, 7, 8),
        Op::read(2, 0, 2, 11, 12),
        Op::read(3, 0, 1, 13, 14),
    ];
    assert_eq!(agreed_stale(&h), [3, 4]);
    assert!(
        !stale_reads(&h, Mode::OrderFree).contains(&3),
        "without the order"
    );
}

/// A write that lands after being forgotten as dead: node 0 invokes w1 at 1 and reads it
/// [2, 3] (its place: first). Node 1's w2 is invoked at 4, takes effect at 5 and is
/// acknowledged at 6, and read [7, 8]; w3 is invoked at 9 and takes effect at 10 (acknowledged
/// at 11). From tick 9 no read still to come was invoked earlier (the horizon), and w2, after
/// w1, was acknowledged at 6: every later read of w1 is stale, and the compacting checker
/// forgets it. w1 then takes effect at 12 (acknowledged at 13, or never). A read [14, 15] of 1
/// by node 2 is stale, and so the checker must still say, though it kept nothing of w1 but a
/// tombstone.
#[test]
fn a_write_that_lands_after_being_forgotten_stays_dead() {
    let w1 = Op::write(0, 0, 1, 1, Some(12));
    for w1 in [w1.clone().answered(13), w1] {
        let h = [
            w1,
            Op::read(0, 0, 1, 2, 3),
            Op::write(1, 0, 2, 4, Some(5)).answered(6),
            Op::read(1, 0, 2, 7, 8),
            Op::write(1, 0, 3, 9, Some(10)).answered(11),
            Op::read(2, 0, 1, 14, 15),
        ];
        assert_eq!(agreed_stale(&h), [5]);
        let (_, c) = fast_stale(&h, Checker::with_compaction(1));
        assert!(
            c.clusters_held() < fast_stale(&h, Checker::new()).1.clusters_held(),
            "the compacting checker forgot w1"
        );
    }
}

/// What the order known at a read holds: a write that takes its place after the read was
/// answered is not in it for that read. Node 0 invokes w1 at 1; node 1 reads the initial value
/// [2, 3]; w1 takes effect at 6 and is acknowledged at 7, but node 0 reads it [4, 5] before
/// that. For the first read w1 is pending (placed at 3.5 or later); for the second it is not in
/// the order and is placed just before it (4.5): both fine. Had w1 been taken as placed and
/// answered when it was invoked, the first would be stale.
#[test]
fn a_write_placed_after_a_read_is_pending_for_it() {
    let h = [
        Op::write(0, 0, 1, 1, Some(6)).answered(7),
        Op::read(1, 0, INITIAL, 2, 3),
        Op::read(0, 0, 1, 4, 5),
    ];
    assert_eq!(agreed_stale(&h), [] as [usize; 0]);
}

// ---------------------------------------------------------------------------------------------
// Random histories
// ---------------------------------------------------------------------------------------------

/// The most operations in a random history.
const MAX_OPS: usize = 12;

/// One step of a random history; each takes the next tick (an instantaneous read two). Numbers
/// pick among what exists, modulo its count (keys: see [`build`]).
#[derive(Clone, Debug)]
enum Step {
    /// A node invokes a write of a fresh value.
    Write { node: usize, key: usize },
    /// A node invokes a read, answered by a later `Answer` (or never, and then left out).
    Read { node: usize, key: usize },
    /// A write not yet taken effect takes effect, to be acknowledged by a later `Ack` (or
    /// never). Those never picked never take effect.
    Land { pick: usize },
    /// A write not yet taken effect takes effect and is acknowledged at once (a quorum's
    /// commit).
    Commit { pick: usize },
    /// A write that took effect and was not acknowledged is.
    Ack { pick: usize },
    /// A read under way is answered (`pick` below 4: the oldest), with a value the engine could
    /// serve (`choice`).
    Answer { pick: usize, choice: usize },
    /// A node reads, answered at the next tick.
    Instant {
        node: usize,
        key: usize,
        choice: usize,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..4usize, 0..6usize).prop_map(|(node, key)| Step::Write { node, key }),
        3 => (0..4usize, 0..6usize).prop_map(|(node, key)| Step::Read { node, key }),
        3 => (0..8usize).prop_map(|pick| Step::Land { pick }),
        1 => (0..8usize).prop_map(|pick| Step::Commit { pick }),
        2 => (0..8usize).prop_map(|pick| Step::Ack { pick }),
        4 => (0..8usize, 0..16usize).prop_map(|(pick, choice)| Step::Answer { pick, choice }),
        2 => (0..4usize, 0..6usize, 0..16usize)
            .prop_map(|(node, key, choice)| Step::Instant { node, key, choice }),
    ]
}

/// A random history: 1 to 3 keys, 1 to 4 nodes, at most [`MAX_OPS`] operations.
fn history() -> impl Strategy<Value = Vec<Op>> {
    (1..=3usize, 1..=4usize, vec(step(), 1..=36))
        .prop_map(|(keys, nodes, steps)| build(keys, nodes, &steps))
}

/// The value a read of `key` by `node` answered at `res` returns, by `choice`, among those the
/// engine could serve: the initial value, a write that took effect before `res`, or the node's
/// latest write of the key if it has not. Most choices take the freshest (the node's own write
/// not yet taken effect, else the write that took effect last); some the value the last read
/// of the key answered returned (if it may); the rest any, old ones included.
fn served(h: &[Op], node: NodeId, key: Key, res: Tick, choice: usize) -> Value {
    let mut landed: Vec<(Tick, Value)> = h
        .iter()
        .filter(|w| w.key == key)
        .filter_map(|w| w.effect().filter(|&e| e < res).map(|e| (e, w.value)))
        .collect();
    landed.sort_unstable();
    let mut allowed: Vec<Value> = [INITIAL]
        .into_iter()
        .chain(landed.into_iter().map(|(_, v)| v))
        .collect();
    let own_latest = h
        .iter()
        .filter(|w| w.is_write() && w.node == node && w.key == key && w.inv < res)
        .max_by_key(|w| w.inv);
    if let Some(w) = own_latest.filter(|w| w.effect().is_none_or(|e| e > res)) {
        allowed.push(w.value);
    }
    let last_read = h
        .iter()
        .filter(|r| r.key == key && r.res().is_some_and(|t| t < res))
        .max_by_key(|r| r.res())
        .map(|r| r.value)
        .filter(|v| allowed.contains(v));
    match choice {
        0..6 => *allowed.last().expect("the initial value"),
        6..9 => last_read.unwrap_or(*allowed.last().expect("the initial value")),
        _ => allowed[(choice - 9) % allowed.len()],
    }
}

/// Plays `steps` into a history. A write's effect and acknowledgement and a read's response
/// are set when a later step gives them; reads never answered are left out.
fn build(keys: usize, nodes: usize, steps: &[Step]) -> Vec<Op> {
    let mut h: Vec<Op> = Vec::new();
    let mut open_reads: Vec<usize> = Vec::new();
    let mut in_flight: Vec<usize> = Vec::new();
    let mut unanswered: Vec<usize> = Vec::new();
    let mut next_value: Value = 1;
    let mut t: Tick = 0;
    // Key 0 most of the time, so that one key sees many operations.
    let key = |k: usize| (k.saturating_sub(3) % keys) as Key;
    for s in steps {
        t += 1;
        match *s {
            Step::Write { node, key: k } if h.len() < MAX_OPS => {
                h.push(Op::write(node % nodes, key(k), next_value, t, None));
                in_flight.push(h.len() - 1);
                next_value += 1;
            }
            Step::Read { node, key: k } if h.len() < MAX_OPS => {
                // The value is set when it is answered.
                h.push(Op::read(node % nodes, key(k), INITIAL, t, 0));
                open_reads.push(h.len() - 1);
            }
            Step::Land { pick } if !in_flight.is_empty() => {
                let w = in_flight.remove(pick % in_flight.len());
                h[w].kind = Kind::Write {
                    effect: Some(t),
                    answer: None,
                };
                unanswered.push(w);
            }
            Step::Commit { pick } if !in_flight.is_empty() => {
                let w = in_flight.remove(pick % in_flight.len());
                h[w].kind = Kind::Write {
                    effect: Some(t),
                    answer: Some(t),
                };
            }
            Step::Ack { pick } if !unanswered.is_empty() => {
                let w = unanswered.remove(pick % unanswered.len());
                h[w] = h[w].clone().answered(t);
            }
            Step::Answer { pick, choice } if !open_reads.is_empty() => {
                // Half the time the read waiting longest, so that some wait long.
                let r = open_reads.remove(pick.saturating_sub(4) % open_reads.len());
                h[r].value = served(&h, h[r].node, h[r].key, t, choice);
                h[r].kind = Kind::Read { res: t };
            }
            Step::Instant {
                node,
                key: k,
                choice,
            } if h.len() < MAX_OPS => {
                let (node, k) = (node % nodes, key(k));
                let value = served(&h, node, k, t + 1, choice);
                h.push(Op::read(node, k, value, t, t + 1));
                t += 1;
            }
            _ => t -= 1,
        }
    }
    // Reads never answered are not part of the history.
    let open: BTreeSet<usize> = open_reads.into_iter().collect();
    h.into_iter()
        .enumerate()
        .filter(|(i, _)| !open.contains(i))
        .map(|(_, o)| o)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12_000))]

    /// On random histories, the checker finds exactly the stale reads the brute force finds,
    /// whether it keeps every write or forgets dead ones as soon as it may; and the brute force
    /// finds none exactly when the whole history is linearizable with the register's order.
    #[test]
    fn the_checker_agrees_with_the_brute_force(h in history()) {
        let stale = agreed_stale(&h);
        prop_assert_eq!(stale.is_empty(), whole_history_linearizable(&h), "{:#?}", h);
    }
}

/// The random histories are not all easy: a fixed sample (drawn deterministically) holds
/// linearizable and non-linearizable ones, and, each in at least one in forty: writes read by
/// their writer before they took effect, writes taking effect out of their invocation order,
/// writes that took effect and were never acknowledged, writes acknowledged after a later
/// write of their key took effect, quorum commits, reads of a write not acknowledged when
/// another read had returned it, reads that span several effects, histories where the register's
/// order changes the verdict, and histories where the compacting checker forgot writes.
#[test]
fn random_histories_cover_the_hard_cases() {
    let mut runner = TestRunner::deterministic();
    let histories = history();
    let n = 2000;
    let names = [
        "stale",
        "read before effect",
        "effects out of order",
        "never acknowledged",
        "acknowledged late",
        "commits",
        "read of a read",
        "long reads",
        "order decides",
        "cut",
        "forgot",
    ];
    let mut counts = [0usize; 11];
    for _ in 0..n {
        let h = histories
            .new_tree(&mut runner)
            .expect("a history is drawn")
            .current();
        assert_valid(&h);
        let writes: Vec<&Op> = h.iter().filter(|w| w.is_write()).collect();
        let reads: Vec<&Op> = h.iter().filter(|r| r.res().is_some()).collect();
        let stale = stale_reads(&h, Mode::Plain);
        // The responses of the reads of `w`, in order.
        let read_of = |w: &Op| {
            let mut rs: Vec<Tick> = reads
                .iter()
                .filter(|r| r.key == w.key && r.value == w.value)
                .filter_map(|r| r.res())
                .collect();
            rs.sort_unstable();
            rs
        };
        let pairs = || {
            writes
                .iter()
                .flat_map(|a| writes.iter().map(move |b| (*a, *b)))
                .filter(|(a, b)| a.key == b.key && a.inv < b.inv)
        };
        let effect = |w: &Op| w.effect().unwrap_or(Tick::MAX);
        let seen = [
            !stale.is_empty(),
            writes
                .iter()
                .any(|w| read_of(w).first().is_some_and(|&r| r < effect(w))),
            pairs().any(|(a, b)| effect(b) < effect(a)),
            writes
                .iter()
                .any(|w| w.effect().is_some() && w.answer().is_none()),
            pairs().any(|(a, b)| {
                let (ea, eb) = (effect(a), effect(b));
                let late = |x: &Op, y: &Op| {
                    x.answer()
                        .is_some_and(|a| a > y.effect().unwrap_or(Tick::MAX))
                };
                (ea < eb && late(a, b)) || (eb < ea && late(b, a))
            }),
            writes
                .iter()
                .any(|w| w.effect().is_some() && w.effect() == w.answer()),
            writes.iter().any(|w| {
                let rs = read_of(w);
                rs.len() >= 2 && w.answer().is_none_or(|a| a > rs[0])
            }),
            reads.iter().any(|r| {
                writes
                    .iter()
                    .filter(|w| w.key == r.key)
                    .filter(|w| w.effect().is_some_and(|e| e > r.inv && r.res() > Some(e)))
                    .count()
                    >= 2
            }),
            stale_reads(&h, Mode::OrderFree) != stale,
            by_key(&h)
                .values()
                .any(|ops| parts(&h, &places(&h), ops).len() >= 2),
            {
                let held = |c: Checker| fast_stale(&h, c).1.clusters_held();
                held(Checker::with_compaction(1)) < held(Checker::new())
            },
        ];
        for (c, s) in counts.iter_mut().zip(seen) {
            *c += usize::from(s);
        }
    }
    let report: Vec<String> = names
        .iter()
        .zip(counts)
        .map(|(name, c)| format!("{name}: {c}"))
        .collect();
    eprintln!("of {n}: {}", report.join(", "));
    assert!(counts[0] * 4 >= n && counts[0] * 4 <= 3 * n, "{report:?}");
    // The rarest, histories where the order changes the verdict, come about one in thirty.
    assert!(counts.iter().all(|&c| c * 40 >= n), "{report:?}");
}

// ---------------------------------------------------------------------------------------------
// Real histories
// ---------------------------------------------------------------------------------------------

/// The history `ops` recorded (see `trace::history`) as the brute force takes it: operations
/// that failed their node's check, and reads never answered, left out; a write's value its
/// invocation's tick; a write's effect placed between the history's tick before it and the
/// next, several in one such gap in the register's order. The ticks are renumbered
/// 1, 2, ... in that order.
fn from_recorded(ops: &[Operation]) -> (Vec<Op>, Vec<usize>) {
    let kept: Vec<&Operation> = ops
        .iter()
        .filter(|o| !o.failed && (o.write || o.return_tick.is_some()))
        .collect();
    // (tick, 0 for the history's own points or 1 for an effect after it, key, order)
    let effect_point = |o: &Operation| {
        o.effect_tick
            .map(|t| (t, 1, o.key, o.order.expect("an effect has a place")))
    };
    let mut points: Vec<(u64, u8, Key, u64)> = Vec::new();
    for o in &kept {
        points.push((o.call_tick, 0, 0, 0));
        points.extend(o.return_tick.map(|t| (t, 0, 0, 0)));
        points.extend(effect_point(o));
    }
    points.sort_unstable();
    points.dedup();
    let tick = |p| 1 + points.binary_search(&p).expect("a point") as Tick;
    let mut h = Vec::new();
    let mut stale = Vec::new();
    for o in kept {
        let inv = tick((o.call_tick, 0, 0, 0));
        let ret = o.return_tick.map(|t| tick((t, 0, 0, 0)));
        if o.write {
            let effect = effect_point(o).map(tick);
            let w = Op::write(o.node, o.key, o.op, inv, effect);
            h.push(match ret {
                Some(a) => w.answered(a),
                None => w,
            });
        } else {
            let value = o.value.expect("an answered read has its value");
            if o.stale {
                stale.push(h.len());
            }
            h.push(Op::read(o.node, o.key, value, inv, ret.expect("answered")));
        }
    }
    (h, stale)
}

/// The largest part of one key's history that the brute force takes on here: a few seconds of
/// its search (the cost grows with the square of a part's size, as each read of it is checked
/// with all that was known at its response).
const LARGEST_PART: usize = 1500;

/// Every bundled scenario, run with its client history recorded: the brute force finds exactly
/// the reads the run's own checker judged stale. Each key's whole history is checked, from its
/// first operation, split at its cuts (see [`parts`]); no window is cut off. A run whose history
/// holds a part larger than [`LARGEST_PART`] (a long pause, with reads held across it, leaves
/// no cut) is run again with half the requests, until none is: its faults stay as written.
#[test]
fn the_brute_force_agrees_with_the_runs_of_every_bundled_scenario() {
    // The search goes one call deeper per operation it places, in parts of thousands.
    let worker = std::thread::Builder::new()
        .stack_size(1 << 28)
        .spawn(check_bundled_runs)
        .expect("a thread");
    if let Err(panic) = worker.join() {
        std::panic::resume_unwind(panic);
    }
}

/// The operations of the run of `scenario` for its whole duration (`Some`), or `None` if a part
/// of one key's history is larger than [`LARGEST_PART`].
fn recorded_run(
    name: &str,
    scenario: &leasesim::scenario::Scenario,
) -> Option<(Vec<Op>, Vec<usize>)> {
    let strategy = leasesim::strategy::from_spec(&scenario.strategy).expect("built in");
    let mut history = History::new();
    let outcome =
        leasesim::run_with(name, scenario, strategy, Some(&mut history)).expect("it runs");
    assert_eq!(outcome.summary.history_ambiguous, 0, "{name}");
    // Every request that arrived is in the history once, under its own name, whether its node
    // refused it as it arrived, set it aside (paused, or its loop stalled) or was down; none
    // failed that its node admitted.
    let recorded = history.operations();
    let q = &outcome.summary.requests;
    let arrived = q.reads_arrived + q.writes_arrived;
    assert_eq!(recorded.len() as u64, arrived, "{name}");
    let names: std::collections::BTreeSet<u64> = recorded.iter().map(|o| o.op).collect();
    assert_eq!(names.len(), recorded.len(), "{name}: a name told twice");
    let failed = recorded.iter().filter(|o| o.failed).count() as u64;
    assert!(
        failed <= arrived - q.reads_admitted - q.writes_admitted,
        "{name}"
    );
    let (h, want) = from_recorded(recorded);
    assert_eq!(outcome.summary.stale_reads, want.len() as u64, "{name}");
    assert_valid(&h);
    let places = places(&h);
    let largest = by_key(&h)
        .values()
        .flat_map(|ops| parts(&h, &places, ops))
        .map(|(_, p)| p.len())
        .max()
        .unwrap_or(0);
    (largest <= LARGEST_PART).then_some((h, want))
}

fn check_bundled_runs() {
    let (mut ops, mut reads, mut stale_reads_seen) = (0, 0, 0);
    let (mut failures, mut thinned) = (Vec::new(), Vec::new());
    let names = library::names();
    for &name in &names {
        let text = library::text(name).expect("a bundled scenario");
        let mut scenario = load::from_text(name, text).expect("it parses");
        let (h, want) = loop {
            if let Some(run) = recorded_run(name, &scenario) {
                break run;
            }
            let w = &mut scenario.workload;
            w.reads_per_second /= 2.0;
            w.writes_per_second /= 2.0;
            if let Some(p) = w.periodic.as_mut() {
                p.every = leasesim::time::Dur::from_ns(p.every.ns() * 2);
            }
            thinned.push(name);
        };
        let got = stale_reads(&h, Mode::Fast);
        if got != want {
            failures.push(format!("{name}: the brute force {got:?}, the run {want:?}"));
        }
        ops += h.len();
        reads += h.iter().filter(|o| o.res().is_some()).count();
        stale_reads_seen += want.len();
    }
    thinned.dedup();
    eprintln!(
        "{} runs: {ops} operations, {reads} reads, {stale_reads_seen} stale; thinned: {thinned:?}",
        names.len(),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        stale_reads_seen > 1000,
        "{reads} reads, {stale_reads_seen} stale"
    );
    // Nearly every run is checked as written: at most one in twenty thinned.
    assert!(thinned.len() * 20 <= names.len(), "{thinned:?}");
}
