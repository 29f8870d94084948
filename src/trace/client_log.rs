//! The [`ClientLog`]: the part of a run's client history that a report can show operation by
//! operation, in memory bounded whatever the run's length.
//!
//! It keeps exactly the first [`KEPT_OPS`] operations invoked, and past them every harmful one
//! (a stale or zombie read, an unsafe write) up to [`KEPT_HARMFUL`] more: a soak run's report
//! shows its start and its harm one by one, and the rest as counts per bin (the chart
//! recorder's). Each kept operation carries what explains it: the token it was served or applied
//! under, the serving node's clock readings, and for a stale read, the write it missed.
//!
//! **The write a stale read missed.** A read of the value of write w, invoked at tick I, is stale
//! when some write after w in the register's order of its key was seen by a client (its
//! acknowledgement, or a read of it that was not stale) before I ([`crate::oracle::linearizable`]
//! states the rule). The write it missed is the one among those seen first. To name it the log
//! keeps the latest [`WRITES_PER_KEY`] writes of each key in the register's order, and the
//! operations invoked lately in a ring of [`RECENT`] slots indexed by their name (their
//! invocation tick; a request refused as it arrives takes none, as nothing asks for it): each
//! write's writer and when it took effect, and when and how a client first saw it. A stale read
//! whose value or successors fell out of those is kept without a missed write (`missed: None`),
//! and [`ClientLog::unexplained`] counts it.
//!
//! Memory: the ring, the kept operations and [`WRITES_PER_KEY`] names per key: fixed sizes. A
//! write's note (when it took effect, when it was first seen) sits in a ring of notes that
//! writes alone fill, so a run of reads touches none of it; a note moved aside while its write
//! is still in the ring goes when the write leaves it, so there are never more notes than
//! writes in the ring.

use super::history::{HistoryEvent, Refused};
use super::tally::Countable;
use super::{Observer, TraceEvent, TraceKind};
use crate::msg::{Key, NodeId, Token, Value, INITIAL};
use crate::time::SimTime;
use std::collections::{BTreeMap, VecDeque};

/// Operations kept from the run's start, whatever they did.
pub const KEPT_OPS: usize = 5_000;
/// Harmful operations kept past those.
pub const KEPT_HARMFUL: usize = 1_000;
/// Slots of the ring of operations remembered by name (a power of two): a read answered more
/// than this many ticks after it was invoked may have lost its slot, and is then kept without
/// its invocation.
pub const RECENT: usize = 1 << 16;
/// Writes of each key remembered in the register's order.
pub const WRITES_PER_KEY: usize = 4_096;

/// How a client first saw a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeenBy {
    /// Its writer's acknowledgement.
    Acknowledged,
    /// A read (named by its invocation tick) that returned it and was not stale.
    Read(u64),
}

/// The write a stale read missed: who wrote it, when it took effect, and when (true time) and
/// how a client first saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Missed {
    pub op: u64,
    pub node: NodeId,
    pub call: SimTime,
    pub effect: Option<SimTime>,
    pub seen: SimTime,
    pub by: SeenBy,
}

/// One client operation as the report shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedOp {
    /// Its name: the tick of its invocation (a write's value).
    pub op: u64,
    pub node: NodeId,
    pub key: Key,
    pub write: bool,
    /// Its invocation (`None`: it fell out of the ring before it was kept).
    pub call: Option<SimTime>,
    /// Its response: a read answered, a write acknowledged (`None`: never).
    pub ret: Option<SimTime>,
    /// The value written, or read (`None`: a read never answered).
    pub value: Option<Value>,
    pub failed: bool,
    pub stale: bool,
    pub zombie: bool,
    pub unsafe_write: bool,
    /// The token it was served (a read) or applied (a write) under.
    pub token: Option<Token>,
    /// The serving node's monotonic and wall clock readings then (a write: at the node where it
    /// took effect).
    pub readings: Option<(i64, i64)>,
    /// A write: when and where it took effect.
    pub effect: Option<(SimTime, NodeId)>,
    /// A stale read: the write it missed, when the log still knew it.
    pub missed: Option<Missed>,
}

impl LoggedOp {
    /// Operation `op` of `node` on `key`, invoked at `call`, with nothing known of it yet but
    /// its `value` (a write's own, a read's when answered).
    fn new(
        (op, node, key, write): (u64, NodeId, Key, bool),
        call: Option<SimTime>,
        value: Option<Value>,
    ) -> LoggedOp {
        LoggedOp {
            op,
            node,
            key,
            write,
            call,
            ret: None,
            value,
            failed: false,
            stale: false,
            zombie: false,
            unsafe_write: false,
            token: None,
            readings: None,
            effect: None,
            missed: None,
        }
    }
}

/// What the ring remembers of a recent operation: 32 bytes, as a busy run writes one for
/// every request its nodes admit.
#[derive(Clone, Copy, Debug)]
struct Recent {
    /// Its name ([`EMPTY`]: a slot never used).
    op: u64,
    call: SimTime,
    node: u32,
    key: Key,
    /// Where it sits in the kept operations ([`NOT_KEPT`]: it is not).
    kept: u32,
    /// A write: its note's slot among the notes ([`NO_NOTE`]: a read).
    note: u32,
}

const _: () = assert!(std::mem::size_of::<Recent>() == 32);

/// The name of no operation: a slot never used (ticks stay far below it).
const EMPTY: u64 = u64::MAX;
/// The place among the kept operations of one not kept.
const NOT_KEPT: u32 = u32::MAX;
/// The note slot of a read (it has none).
const NO_NOTE: u32 = u32::MAX;
/// The most operations a log keeps from the start, and harmful ones past them: each place
/// among the kept fits a slot's `u32`.
const KEPT_AT_MOST: usize = 1 << 30;

impl Recent {
    const UNUSED: Recent = Recent {
        op: EMPTY,
        call: SimTime::ZERO,
        node: 0,
        key: 0,
        kept: NOT_KEPT,
        note: NO_NOTE,
    };

    fn kept(&self) -> Option<usize> {
        (self.kept != NOT_KEPT).then_some(self.kept as usize)
    }

    fn write(&self) -> bool {
        self.note != NO_NOTE
    }
}

/// What the ring remembers of a recent write, in a ring of notes of its own that only writes
/// take (so that a run of reads touches none of it).
#[derive(Clone, Copy, Debug)]
struct WriteNote {
    /// The write's name.
    op: u64,
    /// When it took effect.
    effect: Option<SimTime>,
    /// The tick and time a client first saw it, and how.
    seen: Option<(u64, SimTime, SeenBy)>,
}

/// The recorder (an observer of the history and of the reads and writes that follow it).
#[derive(Debug)]
pub struct ClientLog {
    /// Operations kept from the start, and harmful ones kept past them, at most.
    kept_ops: usize,
    kept_harmful: usize,
    ring: Vec<Recent>,
    /// What became of the writes in the ring: write i's note in slot i mod [`RECENT`] (grown
    /// to it as writes are invoked), or in `moved` if a later write took that slot while the
    /// write was still in the ring (its name's slot in the ring not yet reused: possible when
    /// the ticks that would reuse it went to requests refused as they arrived).
    notes: Vec<WriteNote>,
    moved: BTreeMap<u64, WriteNote>,
    /// Writes invoked.
    writes: u64,
    kept: Vec<LoggedOp>,
    /// Where each kept operation sits in `kept` (looked up only for one out of the ring).
    index: BTreeMap<u64, usize>,
    /// Kept operations past the first `kept_ops`.
    harmful: usize,
    /// Per key, the latest writes' names in the register's order.
    order: BTreeMap<Key, VecDeque<u64>>,
    /// A read answered, waiting for its trace event (token, readings): its name and whether it
    /// was stale.
    answered: Option<(u64, bool)>,
    /// A write that took effect, waiting for its trace event.
    applied: Option<u64>,
    /// Operations invoked.
    invoked: u64,
    /// Harmful operations past every kept one.
    harmful_left_out: u64,
    unexplained: u64,
}

/// The ring's slot of operation `op`.
fn slot(op: u64) -> usize {
    op as usize % RECENT
}

impl Default for ClientLog {
    fn default() -> Self {
        ClientLog::new()
    }
}

impl ClientLog {
    /// A log that keeps [`KEPT_OPS`] operations from the start and [`KEPT_HARMFUL`] harmful
    /// ones past them.
    pub fn new() -> ClientLog {
        ClientLog::keeping(KEPT_OPS, KEPT_HARMFUL)
    }

    /// A log that keeps `ops` operations from the start and `harmful` harmful ones past them
    /// (a page of many runs keeps fewer of each), each at most 2^30.
    pub fn keeping(ops: usize, harmful: usize) -> ClientLog {
        ClientLog {
            kept_ops: ops.min(KEPT_AT_MOST),
            kept_harmful: harmful.min(KEPT_AT_MOST),
            ring: vec![Recent::UNUSED; RECENT],
            // Room taken, not touched: a note is written as a write is invoked.
            notes: Vec::with_capacity(RECENT),
            moved: BTreeMap::new(),
            writes: 0,
            // Room for the first operations from the start (untouched until kept): grown by
            // doubling, the vector's copies would touch about twice the memory it ends with.
            kept: Vec::with_capacity(ops.min(KEPT_OPS)),
            index: BTreeMap::new(),
            harmful: 0,
            order: BTreeMap::new(),
            answered: None,
            applied: None,
            invoked: 0,
            harmful_left_out: 0,
            unexplained: 0,
        }
    }

    /// The operations kept, in the order they were invoked (the first ones), then the harmful
    /// ones past them in the order they did harm.
    pub fn operations(&self) -> &[LoggedOp] {
        &self.kept
    }

    /// Operations invoked in the whole run.
    pub fn invoked(&self) -> u64 {
        self.invoked
    }

    /// Harmful operations not kept (past those kept).
    pub fn harmful_left_out(&self) -> u64 {
        self.harmful_left_out
    }

    /// Stale reads kept whose missed write the log no longer knew.
    pub fn unexplained(&self) -> u64 {
        self.unexplained
    }

    fn recent(&self, op: u64) -> Option<&Recent> {
        Some(&self.ring[slot(op)]).filter(|r| r.op == op)
    }

    fn recent_mut(&mut self, op: u64) -> Option<&mut Recent> {
        Some(&mut self.ring[slot(op)]).filter(|r| r.op == op)
    }

    /// What became of write `op`, while it is in the ring.
    fn note(&self, op: u64) -> Option<&WriteNote> {
        let r = self.recent(op)?;
        if !r.write() {
            return None;
        }
        let n = &self.notes[r.note as usize];
        if n.op == op {
            Some(n)
        } else {
            self.moved.get(&op)
        }
    }

    fn note_mut(&mut self, op: u64) -> Option<&mut WriteNote> {
        let r = *self.recent(op)?;
        if !r.write() {
            return None;
        }
        let n = &mut self.notes[r.note as usize];
        if n.op == op {
            Some(n)
        } else {
            self.moved.get_mut(&op)
        }
    }

    /// A fresh note for write `op` (just put in the ring), in the next slot of the notes; the
    /// note it replaces moves aside if its write is still in the ring.
    fn new_note(&mut self, op: u64) -> u32 {
        let at = (self.writes % RECENT as u64) as usize;
        self.writes += 1;
        let fresh = WriteNote {
            op,
            effect: None,
            seen: None,
        };
        if at == self.notes.len() {
            self.notes.push(fresh);
        } else {
            let old = std::mem::replace(&mut self.notes[at], fresh);
            if self.recent(old.op).is_some() {
                self.moved.insert(old.op, old);
            }
        }
        at as u32
    }

    /// Where `op` sits among the kept operations: from its slot in the ring while it is
    /// there (most events: no search), else from the index of every kept one.
    #[inline]
    fn kept_at(&self, op: u64) -> Option<usize> {
        match self.recent(op) {
            Some(r) => r.kept(),
            None => self.index.get(&op).copied(),
        }
    }

    fn kept_mut(&mut self, op: u64) -> Option<&mut LoggedOp> {
        let i = self.kept_at(op)?;
        Some(&mut self.kept[i])
    }

    #[inline]
    fn invoked_op(&mut self, op: u64, node: NodeId, key: Key, write: bool, at: SimTime) {
        self.invoked += 1;
        let s = slot(op);
        if !self.moved.is_empty() {
            // The operation leaving the ring takes its moved note with it (nearly always
            // there is none, and the slot it leaves is not read).
            let leaving = self.ring[s];
            if leaving.write() {
                self.moved.remove(&leaving.op);
            }
        }
        self.ring[s] = Recent {
            op,
            call: at,
            node: node as u32,
            key,
            kept: NOT_KEPT,
            note: NO_NOTE,
        };
        if write {
            self.ring[s].note = self.new_note(op);
        }
        if self.kept.len() < self.kept_ops {
            let (value, call) = (write.then_some(op), Some(at));
            self.keep(LoggedOp::new((op, node, key, write), call, value));
        }
    }

    #[inline(never)]
    fn keep(&mut self, o: LoggedOp) {
        let at = self.kept.len();
        self.index.insert(o.op, at);
        debug_assert!(at < NOT_KEPT as usize, "kept operations are bounded");
        if let Some(r) = self.recent_mut(o.op) {
            r.kept = at as u32;
        }
        self.kept.push(o);
    }

    /// Keeps harmful operation `op` (not kept yet) if there is room; whether it is kept.
    fn keep_harmful(&mut self, op: u64, value: Option<Value>) -> bool {
        if self.harmful >= self.kept_harmful {
            self.harmful_left_out += 1;
            return false;
        }
        self.harmful += 1;
        let r = self.recent(op).copied();
        let (node, key) = r.map_or((0, 0), |r| (r.node as NodeId, r.key));
        let write = r.is_some_and(|r| r.write());
        self.keep(LoggedOp::new(
            (op, node, key, write),
            r.map(|r| r.call),
            value,
        ));
        true
    }

    /// A client saw write `value` at tick `tick` (time `at`): the first time counts.
    fn seen(&mut self, value: Value, tick: u64, at: SimTime, by: SeenBy) {
        if let Some(w) = self.note_mut(value) {
            w.seen.get_or_insert((tick, at, by));
        }
    }

    /// The write a read of `value` from `key`, invoked at tick `call`, missed: among the writes
    /// after `value` in the key's order, the one a client saw first, if before `call`.
    fn missed(&self, key: Key, value: Value, call: u64) -> Option<Missed> {
        let order = self.order.get(&key)?;
        let after = if value == INITIAL {
            0
        } else {
            order.iter().position(|&w| w == value)? + 1
        };
        order
            .iter()
            .skip(after)
            .filter_map(|&w| Some((self.recent(w)?, self.note(w)?)))
            .filter_map(|(r, w)| w.seen.map(|s| (s, r, w.effect)))
            .filter(|((tick, _, _), _, _)| *tick < call)
            .min_by_key(|((tick, _, _), _, _)| *tick)
            .map(|((_, seen, by), r, effect)| Missed {
                op: r.op,
                node: r.node as NodeId,
                call: r.call,
                effect,
                seen,
                by,
            })
    }

    #[inline(never)]
    fn read_answered(&mut self, op: u64, value: Value, tick: u64, at: SimTime, stale: bool) {
        if !stale {
            self.seen(value, tick, at, SeenBy::Read(op));
        }
        self.answered = Some((op, stale));
        let kept = self.kept_at(op).is_some() || (stale && self.keep_harmful(op, Some(value)));
        if !kept {
            return;
        }
        // A read kept without its invocation (out of the ring) has no key to look in.
        let o = &self.kept[self.kept_at(op).expect("kept above")];
        let missed = if stale && o.call.is_some() {
            self.missed(o.key, value, op)
        } else {
            None
        };
        if stale && missed.is_none() {
            self.unexplained += 1;
        }
        let o = self.kept_mut(op).expect("kept above");
        o.value = Some(value);
        o.ret = Some(at);
        o.stale = stale;
        o.missed = missed;
    }

    #[inline(never)]
    fn took_effect(&mut self, key: Key, value: Value, at: SimTime) {
        let order = self.order.entry(key).or_default();
        if order.len() == WRITES_PER_KEY {
            order.pop_front();
        }
        order.push_back(value);
        if let Some(w) = self.note_mut(value) {
            w.effect = Some(at);
        }
        self.applied = Some(value);
    }

    #[inline(never)]
    fn failed(&mut self, op: u64, at: SimTime) {
        if let Some(o) = self.kept_mut(op) {
            o.failed = true;
            o.ret = Some(at);
        }
    }

    #[inline(never)]
    fn write_acked(&mut self, value: Value, tick: u64, at: SimTime) {
        self.seen(value, tick, at, SeenBy::Acknowledged);
        if let Some(o) = self.kept_mut(value) {
            o.ret.get_or_insert(at);
        }
    }

    /// The trace event that follows a read answered: its token, whether it is a zombie, and
    /// the node's clocks. A zombie read not kept yet is kept now (a stale one already was).
    #[inline(never)]
    fn read_served(&mut self, e: &TraceEvent, token: Token, zombie: bool) {
        let Some((op, stale)) = self.answered.take() else {
            return;
        };
        if zombie && !stale && self.kept_at(op).is_none() && self.keep_harmful(op, None) {
            if let Some(o) = self.kept_mut(op) {
                o.ret = Some(e.t);
            }
        }
        if let Some(o) = self.kept_mut(op) {
            o.token = Some(token);
            o.zombie = zombie;
            o.readings = Some((e.mono().ns(), e.wall().ns()));
        }
    }

    /// The trace event that follows a write taking effect at node `e.node`.
    #[inline(never)]
    fn write_arrived(&mut self, e: &TraceEvent, token: Token, unsafe_write: bool) {
        let Some(op) = self.applied.take() else {
            return;
        };
        if unsafe_write && self.kept_at(op).is_none() {
            self.keep_harmful(op, Some(op));
        }
        if let Some(o) = self.kept_mut(op) {
            o.token = Some(token);
            o.unsafe_write = unsafe_write;
            o.effect = Some((e.t, e.node));
            o.readings = Some((e.mono().ns(), e.wall().ns()));
        }
    }
}

impl Observer for ClientLog {
    #[inline]
    fn event(&mut self, e: &TraceEvent) {
        match e.kind {
            TraceKind::Read { token, zombie, .. } => self.read_served(e, token, zombie),
            TraceKind::WriteArrived {
                token,
                unsafe_write,
                applied: true,
                duplicate: false,
                ..
            } => self.write_arrived(e, token, unsafe_write),
            _ => {}
        }
    }

    /// A small dispatcher, inlined into its caller: a refused request's failure (a third of a
    /// busy run's events) costs a call only when the log keeps the request.
    #[inline]
    fn history(&mut self, e: &HistoryEvent) {
        match *e {
            HistoryEvent::Invoked {
                op,
                node,
                key,
                write,
                at,
            } => self.invoked_op(op, node, key, write, at),
            HistoryEvent::Failed { op, at } => {
                if self.kept_at(op).is_some() {
                    self.failed(op, at);
                }
            }
            HistoryEvent::ReadAnswered {
                op,
                value,
                tick,
                at,
                stale,
            } => self.read_answered(op, value, tick, at, stale),
            HistoryEvent::WriteTookEffect { key, value, at, .. } => {
                self.took_effect(key, value, at)
            }
            HistoryEvent::WriteAcked { value, tick, at } => self.write_acked(value, tick, at),
        }
    }

    fn wants_history(&self) -> bool {
        true
    }

    /// A request refused as it arrived is counted, and kept only among the first operations:
    /// nothing asks for it later (it is never answered, takes no effect and does no harm), so
    /// it takes no slot in the ring. Its trace event tells the log nothing.
    #[inline]
    fn refused(&mut self, r: &Refused, _e: &TraceEvent) {
        if self.kept.len() < self.kept_ops {
            self.invoked_op(r.op, r.node, r.key, r.write, r.at);
            self.failed(r.op, r.at);
        } else {
            self.invoked += 1;
        }
    }
}

impl ClientLog {
    /// Whether it takes the requests a [`Countable`] names as counts: it has kept its first
    /// operations, so it keeps nothing of a request refused as it arrives but its count, and
    /// nothing of a read invoked from now on that neither harmed nor was the first to see its
    /// value (its invocation is still told, for the ring).
    pub fn takes_as_counts(&self) -> bool {
        self.kept.len() >= self.kept_ops
    }

    /// `count` requests that `what` names, past the first operations, counted elsewhere: what
    /// the calls would have counted one by one (a refusal's invocation; a plain read's answer
    /// counts nothing).
    pub fn add_counted(&mut self, what: Countable, count: u64) {
        debug_assert!(self.takes_as_counts() || count == 0);
        if what == Countable::Refusals {
            self.invoked += count;
        }
    }

    /// How many operations it keeps from the start, and harmful ones past them.
    pub fn capacity(&self) -> (usize, usize) {
        (self.kept_ops, self.kept_harmful)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::LocalTime;
    use crate::trace::Readings;

    fn t(ns: i64) -> SimTime {
        SimTime::from_ns(ns)
    }

    fn invoke(log: &mut ClientLog, op: u64, node: NodeId, write: bool) {
        let at = t(op as i64 * 10);
        log.history(&HistoryEvent::Invoked {
            op,
            node,
            key: 0,
            write,
            at,
        });
    }

    fn effect(log: &mut ClientLog, value: u64, tick: u64) {
        let at = t(tick as i64 * 10);
        log.history(&HistoryEvent::WriteTookEffect {
            key: 0,
            value,
            tick,
            at,
        });
        log.event(&event(
            at,
            0,
            TraceKind::WriteArrived {
                writer: 0,
                token: 1,
                applied: true,
                unsafe_write: false,
                duplicate: false,
            },
        ));
    }

    fn ack(log: &mut ClientLog, value: u64, tick: u64) {
        let at = t(tick as i64 * 10);
        log.history(&HistoryEvent::WriteAcked { value, tick, at });
    }

    /// Read `op` on node 1 answered at `tick` with `value`; its trace event follows.
    fn answer(log: &mut ClientLog, op: u64, value: u64, tick: u64, stale: bool, zombie: bool) {
        let at = t(tick as i64 * 10);
        log.history(&HistoryEvent::ReadAnswered {
            op,
            value,
            tick,
            at,
            stale,
        });
        let kind = TraceKind::Read {
            token: 2,
            zombie,
            stale,
        };
        log.event(&event(at, 1, kind));
    }

    fn event(at: SimTime, node: NodeId, kind: TraceKind) -> TraceEvent<'static> {
        TraceEvent {
            t: at,
            node,
            clock: Readings::Given {
                mono: LocalTime::from_ns(at.ns() + 1),
                wall: LocalTime::from_ns(at.ns() + 2),
            },
            kind,
        }
    }

    /// Writes 1 and 2 (in that order) take effect; 2 is acknowledged at tick 5, 1 at tick 6. A
    /// read of the initial value invoked at tick 7 missed both: the one a client saw first is
    /// write 2 (tick 5), though write 1 comes first in the order.
    #[test]
    fn the_missed_write_is_the_first_one_seen() {
        let mut log = ClientLog::new();
        invoke(&mut log, 1, 0, true);
        invoke(&mut log, 2, 0, true);
        effect(&mut log, 1, 3);
        effect(&mut log, 2, 4);
        ack(&mut log, 2, 5);
        ack(&mut log, 1, 6);
        invoke(&mut log, 7, 1, false);
        answer(&mut log, 7, INITIAL, 8, true, false);
        let r = &log.operations()[2];
        assert_eq!((r.op, r.stale, r.ret), (7, true, Some(t(80))));
        let m = r.missed.unwrap();
        assert_eq!(
            (m.op, m.node, m.seen, m.by),
            (2, 0, t(50), SeenBy::Acknowledged)
        );
        assert_eq!((m.call, m.effect), (t(20), Some(t(40))));
        // The read's token and its node's clocks come from the trace event after the answer.
        assert_eq!((r.token, r.readings), (Some(2), Some((81, 82))));
        // A write took its token and its place of effect from the resource's event.
        assert_eq!(log.operations()[0].effect, Some((t(30), 0)));
        assert_eq!(log.operations()[0].ret, Some(t(60)));
    }

    /// A write first seen by a read (not stale) counts from that read: write 1 takes effect at
    /// tick 2, read 3 returns it at tick 4; read 5 of the initial value missed write 1, seen by
    /// read 3. A read invoked before any write was seen (read 3 at tick 3 would be) misses none.
    #[test]
    fn a_write_is_seen_by_its_first_read_that_was_not_stale() {
        let mut log = ClientLog::new();
        invoke(&mut log, 1, 0, true);
        effect(&mut log, 1, 2);
        invoke(&mut log, 3, 1, false);
        answer(&mut log, 3, 1, 4, false, false);
        invoke(&mut log, 5, 1, false);
        answer(&mut log, 5, INITIAL, 6, true, false);
        let m = log.operations()[2].missed.unwrap();
        assert_eq!((m.op, m.seen, m.by), (1, t(40), SeenBy::Read(3)));
        assert_eq!(log.unexplained(), 0);
        assert_eq!(log.operations()[1].missed, None);
    }

    /// Keeping 2 from the start and 1 harmful past them: ops 1 and 2 kept, 3 not; stale read 4
    /// kept as the harmful one, with its invocation from the ring; stale read 5 only counted.
    #[test]
    fn past_its_capacity_it_keeps_harm_only_and_counts_the_rest() {
        let mut log = ClientLog::keeping(2, 1);
        for op in 1..=5 {
            invoke(&mut log, op, 1, false);
        }
        answer(&mut log, 3, INITIAL, 6, false, false);
        answer(&mut log, 4, INITIAL, 7, true, false);
        answer(&mut log, 5, INITIAL, 8, true, false);
        let kept: Vec<u64> = log.operations().iter().map(|o| o.op).collect();
        assert_eq!(kept, [1, 2, 4]);
        assert_eq!(log.operations()[2].call, Some(t(40)));
        assert_eq!((log.invoked(), log.harmful_left_out()), (5, 1));
        // Nothing was written: the stale reads name no missed write, and say so.
        assert_eq!(log.unexplained(), 1);
    }

    fn refuse(log: &mut ClientLog, op: u64, write: bool) {
        let at = t(op as i64 * 10);
        let r = Refused {
            op,
            node: 2,
            key: 0,
            write,
            at,
        };
        log.refused(&r, &event(at, 2, TraceKind::Rejected { write }));
    }

    /// A request refused at once, among the first kept: kept failed, answered at its call
    /// (op 1 at tick 1: 10 ns), exactly as its invocation and failure told apart would have
    /// kept it. Past the first ones it is only counted.
    #[test]
    fn a_refused_request_is_kept_among_the_first_and_counted_past_them() {
        let mut log = ClientLog::keeping(1, 1);
        refuse(&mut log, 1, true);
        refuse(&mut log, 2, false);
        let o = &log.operations()[0];
        assert_eq!(
            (o.op, o.node, o.write, o.failed, o.call, o.ret),
            (1, 2, true, true, Some(t(10)), Some(t(10)))
        );
        assert_eq!((log.operations().len(), log.invoked()), (1, 2));
    }

    /// A write's note outlives the note slot a later write takes while the write is still in
    /// the ring. Write 1 takes note slot 0; writes 2 to RECENT and RECENT + 2 (tick RECENT + 1,
    /// which would reuse write 1's slot in the ring, went to no invoked request) are the next
    /// RECENT writes, the last taking note slot 0 again. Write 1 then takes effect (tick
    /// RECENT + 3) and is acknowledged (+ 4); a read invoked at + 5 answered stale with the
    /// initial value missed it, with both times from its moved note. Once tick RECENT + 1 is
    /// invoked, write 1 leaves the ring and its moved note goes.
    #[test]
    fn a_write_keeps_its_note_while_it_is_in_the_ring() {
        let r = RECENT as u64;
        let mut log = ClientLog::keeping(0, 1);
        invoke(&mut log, 1, 0, true);
        for op in (2..=r).chain([r + 2]) {
            invoke(&mut log, op, 0, true);
        }
        assert_eq!((log.notes[0].op, log.moved.len()), (r + 2, 1));
        effect(&mut log, 1, r + 3);
        ack(&mut log, 1, r + 4);
        invoke(&mut log, r + 5, 1, false);
        answer(&mut log, r + 5, INITIAL, r + 6, true, false);
        let m = log.operations()[0].missed.expect("write 1 is explained");
        assert_eq!(
            (m.op, m.call, m.effect),
            (1, t(10), Some(t((r as i64 + 3) * 10)))
        );
        assert_eq!(
            (m.seen, m.by),
            (t((r as i64 + 4) * 10), SeenBy::Acknowledged)
        );
        invoke(&mut log, r + 1, 0, false);
        assert!(log.moved.is_empty());
    }

    /// A refused request takes no slot in the ring: read 3 still has its own when it is
    /// answered stale after a refused request whose name falls in the same slot (3 + RECENT),
    /// so it is kept with its invocation (tick 3: 30 ns). Told as an invocation and a failure
    /// apart, the refused one would have taken the slot, and the stale read lost its call.
    #[test]
    fn a_refused_request_takes_no_slot_in_the_ring() {
        let late = 3 + RECENT as u64;
        let mut log = ClientLog::keeping(0, 1);
        invoke(&mut log, 3, 1, false);
        refuse(&mut log, late, false);
        answer(&mut log, 3, INITIAL, late + 1, true, false);
        assert_eq!(log.operations()[0].call, Some(t(30)));
        let mut apart = ClientLog::keeping(0, 1);
        invoke(&mut apart, 3, 1, false);
        invoke(&mut apart, late, 2, false);
        apart.history(&HistoryEvent::Failed {
            op: late,
            at: t(late as i64 * 10),
        });
        answer(&mut apart, 3, INITIAL, late + 1, true, false);
        assert_eq!(apart.operations()[0].call, None);
    }

    /// A log keeps at most 2^30 of each (a kept one's place fits its slot in the ring).
    #[test]
    fn what_a_log_keeps_is_bounded() {
        let log = ClientLog::keeping(usize::MAX, usize::MAX);
        assert_eq!(log.capacity(), (1 << 30, 1 << 30));
        assert_eq!(ClientLog::keeping(3, 2).capacity(), (3, 2));
    }

    /// A zombie read that is not stale is harm too: kept past the start's operations.
    #[test]
    fn a_zombie_read_past_the_start_is_kept() {
        let mut log = ClientLog::keeping(1, 1);
        invoke(&mut log, 1, 1, false);
        invoke(&mut log, 2, 1, false);
        answer(&mut log, 2, INITIAL, 3, false, true);
        let o = &log.operations()[1];
        assert_eq!(
            (o.op, o.zombie, o.stale, o.ret),
            (2, true, false, Some(t(30)))
        );
    }
}
