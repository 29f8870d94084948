//! The harm a broken lease does: zombie actions, stale reads, unsafe and fenced writes.
//!
//! **Stale reads** are judged from the client history alone, by linearizability
//! ([`super::linearizable`]): every read with the value it returned, every write with the value
//! it wrote, each with its invocation and its response. No protocol's rules are known here: a
//! protocol reports the value its node's state held for each read it served, and the history
//! decides. A read is stale when the history is not linearizable because of it.
//!
//! **Zombie actions** are judged by tokens. Tokens order leases: an action begun under a token
//! older than the newest issued is a zombie action (a read when it was taken up, a write when
//! it left its node). It is a late action, not harm in itself: a late read can be linearizable
//! (a ReadIndex read confirmed before its leader was deposed), and a late write harmless (one
//! that a newer write has not yet overtaken). Harm is a stale read or an **unsafe write**: a
//! write applied at the resource after a write under a newer token was applied (lost under the
//! newer holder's feet); with fencing the resource rejects it instead (a **fenced write**).
//!
//! **Which token is newer.** A grantor that restarts forgetting what it granted
//! (`lease.grantor_restart: Forget`) may issue the same numbers again (Kubernetes'
//! leaseTransitions starts over with the Lease record): each such restart opens a new *epoch*,
//! and a token issued in a later epoch is newer than every token of an earlier one, whatever the
//! numbers. A token a node acts under is of the epoch in which it was last issued to that node
//! (of the last [`EPOCHS_KEPT`] epochs it was issued tokens in; a token never issued to it is of
//! the current epoch). Tokens are compared as a [`Rank`]: the token itself until the first such
//! restart, so that runs without one judge by the numbers alone.
//!
//! Memory is bounded whatever the run's length: per node its last epochs; the history's
//! clusters alive at its horizon ([`super::linearizable`]); and the terms of committed log
//! entries as runs of one term, of which the last [`TERM_RUNS_KEPT`] are kept.

use super::linearizable::{Checker, Counts, Tick};
use crate::msg::{Key, NodeId, Token, Value};
use std::collections::VecDeque;

/// A token placed in its epoch: `epoch << EPOCH_SHIFT | token` (the token itself in epoch 0).
/// Comparing ranks compares epochs first, then tokens.
pub type Rank = u64;

/// Where the epoch starts in a [`Rank`]: tokens of a run with a forgetful grantor restart stay
/// below 2^48 (a grant a nanosecond for three days).
const EPOCH_SHIFT: u32 = 48;

/// How many of a node's epochs are remembered to place the tokens it acts under.
pub const EPOCHS_KEPT: usize = 8;

/// How many runs of committed log entries of one term are kept to check later reports against.
pub const TERM_RUNS_KEPT: usize = 4096;

/// Tokens issued to one node in one epoch, from `lo` to `hi`.
#[derive(Clone, Copy, Debug)]
struct EpochTokens {
    epoch: u64,
    lo: Token,
    hi: Token,
}

/// Log entries `first..=last` (client writes among them) were committed under `term`.
#[derive(Clone, Copy, Debug)]
struct TermRun {
    first: u64,
    last: u64,
    term: Token,
}

/// Counts of harm and of the register's traffic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HarmCounts {
    pub zombie_actions: u64,
    pub stale_reads: u64,
    pub unsafe_writes: u64,
    pub fenced_writes: u64,
    /// Second deliveries of a write the resource already had (the network duplicated it). The
    /// resource applies a write once, by its id; one without write ids would apply it twice.
    pub duplicate_writes: u64,
    pub reads_served: u64,
    pub writes_sent: u64,
    pub writes_applied: u64,
    /// Writes that took effect with a value a forgotten tombstone of the history might have
    /// named ([`Counts::ambiguous`]): while zero, the count of stale reads is exact.
    pub history_ambiguous: u64,
}

/// A read the node kept for later (or one that arrived while it was paused, or is under way
/// for its service time): the key it reads, and whether it was a zombie action when taken up.
#[derive(Clone, Copy, Debug)]
struct OpenRead {
    op: Tick,
    key: Key,
    node: u16,
    zombie: bool,
    closed: bool,
}

const _: () = assert!(std::mem::size_of::<OpenRead>() == 16);

/// The reads under way, oldest first: a vector whose first `from` entries are gone, compacted
/// as they come to half of it, emptied whenever no read is under way. (A `VecDeque` took each
/// entry through its push, a call that is not inlined, written to memory field by field and
/// read back whole: a stalled store forward at every read served, 5% of the canonical hour.)
#[derive(Default)]
struct OpenReads {
    reads: Vec<OpenRead>,
    from: usize,
}

impl OpenReads {
    fn live(&self) -> &[OpenRead] {
        &self.reads[self.from..]
    }

    fn front(&self) -> Option<&OpenRead> {
        self.reads.get(self.from)
    }

    fn back(&self) -> Option<&OpenRead> {
        self.live().last()
    }

    fn push_back(&mut self, r: OpenRead) {
        self.reads.push(r);
    }

    // Inlined: once per read answered at the front (most), where the call cost more than the
    // body; the compaction, once in many, out of line.
    #[inline]
    fn pop_front(&mut self) -> Option<OpenRead> {
        let r = *self.front()?;
        self.from += 1;
        if self.from == self.reads.len() || (self.from >= 64 && 2 * self.from >= self.reads.len()) {
            self.compact();
        }
        Some(r)
    }

    /// Drops the reads before the front: all of them (the queue is empty), or half or more.
    #[inline(never)]
    fn compact(&mut self) {
        if self.from == self.reads.len() {
            self.reads.clear();
        } else {
            self.reads.drain(..self.from);
        }
        self.from = 0;
    }

    /// Where read `op` is among those under way (closed or not), if there.
    fn place_of(&self, op: Tick) -> Option<usize> {
        self.live().binary_search_by_key(&op, |r| r.op).ok()
    }

    fn at(&mut self, i: usize) -> &mut OpenRead {
        &mut self.reads[self.from + i]
    }

    fn retain(&mut self, keep: impl FnMut(&OpenRead) -> bool) {
        self.reads.drain(..self.from);
        self.from = 0;
        self.reads.retain(keep);
    }
}

/// How the oracle judged a read served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadVerdict {
    /// Served under a superseded token.
    pub zombie: bool,
    /// It makes the client history not linearizable.
    pub stale: bool,
    /// No client had seen the value it returned before it (a stale read never is the first).
    pub first_sight: bool,
}

/// The oracle's record of the client history and the harm ledger of one run.
pub struct Harm {
    /// The newest token issued anywhere, as a rank: every older one is superseded.
    latest: Rank,
    /// The current epoch: how many times a grantor restarted forgetting what it granted.
    epoch: u64,
    /// Per node, the epochs it was issued tokens in, oldest first (at most [`EPOCHS_KEPT`]).
    issued_to: Vec<VecDeque<EpochTokens>>,
    /// Read authority is shared by design: reads are judged by staleness alone, never as zombie
    /// actions.
    shared_reads: bool,
    max_applied: Rank,
    /// The history's last tick: every invocation and response takes the next.
    tick: Tick,
    /// The read the call under way took up, if any.
    taking_up: Option<Tick>,
    /// The reads under way at every node, in the order they were invoked (a read is opened
    /// when it is invoked, or not at all); closed ones are dropped from the front, so the
    /// first is the earliest under way.
    open: OpenReads,
    history: Checker,
    /// The highest log index reported committed (replicated logs).
    committed_index: u64,
    /// The terms of the entries reported committed, in runs of one term by log index: a later
    /// report of the same index must agree (Raft's safety: a committed entry is never replaced).
    committed_terms: VecDeque<TermRun>,
    counts: HarmCounts,
}

impl Harm {
    pub fn new(nodes: usize, shared_reads: bool) -> Harm {
        Harm {
            latest: 0,
            epoch: 0,
            issued_to: vec![VecDeque::new(); nodes],
            shared_reads,
            max_applied: 0,
            tick: 0,
            taking_up: None,
            open: OpenReads::default(),
            history: Checker::new(),
            committed_index: 0,
            committed_terms: VecDeque::new(),
            counts: HarmCounts::default(),
        }
    }

    pub fn counts(&self) -> HarmCounts {
        HarmCounts {
            history_ambiguous: self.history.counts().ambiguous,
            ..self.counts.clone()
        }
    }

    /// The history checker's own counts.
    pub fn history_counts(&self) -> Counts {
        self.history.counts()
    }

    /// The history's last tick given.
    pub fn last_tick(&self) -> Tick {
        self.tick
    }

    /// The next point of the history: a client request arrived (its invocation, which names it
    /// and, for a write, is its value), or one was answered.
    pub fn tick(&mut self) -> Tick {
        self.tick += 1;
        self.tick
    }

    /// The read a call takes up (`None` once the call is over): it is under way during it.
    pub fn taking_up(&mut self, op: Option<Tick>) {
        self.taking_up = op;
    }

    /// Tells the history where its horizon is: no read answered from now on was invoked
    /// before the first read under way, the read the call under way took up, `answering` (a
    /// read being answered now), or the next tick.
    #[inline]
    fn set_horizon(&mut self, answering: Option<Tick>) {
        debug_assert!(
            self.open.front().is_none_or(|r| !r.closed),
            "no closed read first"
        );
        let first = self.open.front().map_or(NONE_OPEN, |r| r.op);
        let h = first
            .min(self.taking_up.unwrap_or(NONE_OPEN))
            .min(answering.unwrap_or(NONE_OPEN));
        self.history.set_horizon(h.min(self.tick + 1));
    }

    /// Where read `op` is among the reads under way, if it is there (closed or not).
    fn place_of(&self, op: Tick) -> Option<usize> {
        self.open.place_of(op)
    }

    /// Drops the closed reads at the front.
    #[inline]
    fn drop_closed(&mut self) {
        while self.open.front().is_some_and(|r| r.closed) {
            self.open.pop_front();
        }
    }

    /// A grantor restarted forgetting what it granted: tokens issued from now on are newer than
    /// every token issued before, whatever their numbers.
    pub fn new_epoch(&mut self) {
        self.epoch += 1;
    }

    /// Token `token` as node `node` acts under it, placed in its epoch (see the module doc).
    #[inline]
    pub fn rank(&self, node: NodeId, token: Token) -> Rank {
        if self.epoch == 0 {
            return token;
        }
        self.rank_in_epochs(node, token)
    }

    /// [`Harm::rank`] once a grantor restarted: the epoch the token was issued in.
    #[inline(never)]
    fn rank_in_epochs(&self, node: NodeId, token: Token) -> Rank {
        let epoch = self.issued_to[node]
            .iter()
            .rev()
            .find(|e| (e.lo..=e.hi).contains(&token))
            .map_or(self.epoch, |e| e.epoch);
        rank_of(epoch, token)
    }

    /// A grant of `token` to `to` was issued.
    pub fn issued(&mut self, to: NodeId, token: Token) {
        let epochs = &mut self.issued_to[to];
        debug_assert!(
            epochs.back().is_none_or(|e| e.epoch <= self.epoch),
            "a node's epochs are kept oldest first"
        );
        match epochs.back_mut() {
            Some(e) if e.epoch == self.epoch => {
                e.lo = e.lo.min(token);
                e.hi = e.hi.max(token);
            }
            _ => {
                if epochs.len() == EPOCHS_KEPT {
                    epochs.pop_front();
                }
                epochs.push_back(EpochTokens {
                    epoch: self.epoch,
                    lo: token,
                    hi: token,
                });
            }
        }
        self.latest = self.latest.max(self.rank(to, token));
    }

    /// The newest token issued so far, as a rank.
    pub fn latest(&self) -> Rank {
        self.latest
    }

    /// Whether an action of `node` under `token` now is a zombie action (its token superseded).
    fn is_zombie(&self, node: NodeId, token: Token) -> bool {
        self.rank(node, token) < self.latest
    }

    /// Read `op` of `key` at `node` is under way beyond the call that took it in (it arrived
    /// while the node was paused, waits for its service time, or was kept for later).
    #[inline]
    pub fn open_read(&mut self, node: NodeId, op: Tick, key: Key) {
        let q = &mut self.open;
        if q.back().is_some_and(|r| r.op >= op) {
            debug_assert!(
                q.live()
                    .iter()
                    .any(|r| r.op == op && r.node as NodeId == node),
                "a read is opened as it is invoked (the latest), or was open"
            );
            return; // already open
        }
        q.push_back(OpenRead {
            op,
            node: u16::try_from(node).expect("node ids fit 16 bits (at most 100 nodes)"),
            key,
            zombie: false,
            closed: false,
        });
    }

    /// Read `op` at `node` is no longer under way (served, given up, rejected, or lost with a
    /// crash). Returns it, if it was open.
    #[inline(always)]
    fn close_read(&mut self, node: NodeId, op: Tick) -> Option<OpenRead> {
        let q = &mut self.open;
        // Reads are open in the order they were invoked: one invoked after the last open one
        // was never opened (most: a read rejected as it arrives).
        if q.back().is_none_or(|r| r.op < op) {
            return None;
        }
        // Reads mostly end in the order they began: the first is the one, as a rule (the
        // first is never closed: closed ones are dropped from the front).
        debug_assert!(q.front().is_none_or(|r| !r.closed), "no closed read first");
        if q.front().is_some_and(|r| r.op == op) {
            let r = q.pop_front();
            debug_assert!(
                r.is_some_and(|r| r.node as NodeId == node),
                "its own node's"
            );
            self.drop_closed();
            return r;
        }
        // Not the first: closing it leaves the first in place.
        let i = self.place_of(op)?;
        let r = *self.open.at(i);
        debug_assert_eq!(r.node as NodeId, node, "a read is closed at its own node");
        self.open.at(i).closed = true;
        (!r.closed).then_some(r)
    }

    /// Read `op` at `node` ended unanswered (rejected, given up, or its node crashed).
    #[inline]
    pub fn read_ended(&mut self, node: NodeId, op: Tick) {
        // Most never opened (rejected as they arrive): told here without a call.
        if self.open.back().is_some_and(|r| r.op >= op) {
            self.close_read(node, op);
        }
    }

    /// Read `op` of `key` was taken up at `node` under `token` and kept for later: whether it is
    /// a zombie action is decided now.
    pub fn read_waits(&mut self, node: NodeId, op: Tick, key: Key, token: Token) {
        self.open_read(node, op, key);
        let zombie = self.is_zombie(node, token);
        if let Some(i) = self.place_of(op) {
            let r = self.open.at(i);
            debug_assert_eq!(r.node as NodeId, node, "kept at its own node");
            r.zombie = zombie;
        }
    }

    /// `node` served read `op` of `key` now under `token`, with `value`; `taken_now`: it was
    /// taken up in this call (else it was kept, and judged a zombie action when taken up).
    // Inlined always into its one caller, the engine's served read, with `close_read`: once per
    // read served, where the calls cost more than the bodies.
    #[inline(always)]
    pub fn read(
        &mut self,
        node: NodeId,
        (op, key): (Tick, Key),
        token: Token,
        value: Value,
        taken_now: bool,
    ) -> ReadVerdict {
        let kept = self.close_read(node, op);
        let key = kept.map_or(key, |r| r.key);
        let zombie = match kept {
            Some(r) if !taken_now => r.zombie,
            _ => self.is_zombie(node, token),
        } && !self.shared_reads;
        self.set_horizon(Some(op));
        let res = self.tick();
        let stale = self.history.read(node, key, value, op, res);
        self.counts.reads_served += 1;
        self.counts.zombie_actions += u64::from(zombie);
        self.counts.stale_reads += u64::from(stale);
        ReadVerdict {
            zombie,
            stale,
            first_sight: self.history.last_read_was_first(),
        }
    }

    /// The key of read `op` kept at `node`.
    pub fn kept_key(&self, node: NodeId, op: Tick) -> Option<Key> {
        let r = self.open.live()[self.place_of(op)?];
        (r.node as NodeId == node).then_some(r.key)
    }

    /// `node` sent write `op` (of `value` to `key`) under `token` to the resource. Returns
    /// whether it is a zombie action.
    pub fn write_sent(
        &mut self,
        node: NodeId,
        token: Token,
        (op, key, value): (Tick, Key, Value),
    ) -> bool {
        self.counts.writes_sent += 1;
        self.history.write_invoked(node, key, value, op);
        let zombie = self.is_zombie(node, token);
        self.counts.zombie_actions += u64::from(zombie);
        zombie
    }

    /// `node` appended write `op` (of `value` to `key`) to its log: it takes effect only if
    /// committed.
    pub fn write_appended(&mut self, node: NodeId, (op, key, value): (Tick, Key, Value)) {
        self.history.write_invoked(node, key, value, op);
    }

    /// The write of `value` to `key` from `writer` under `token` took effect (the resource
    /// applied it, or a quorum committed it); `answered`: it is acknowledged now (a quorum's
    /// commit is; a register's answer reaches its writer later). Returns whether it was unsafe: a
    /// write with a newer token had been applied before it.
    pub fn write_applied(
        &mut self,
        writer: NodeId,
        token: Token,
        (key, value): (Key, Value),
        answered: bool,
    ) -> bool {
        let rank = self.rank(writer, token);
        let unsafe_write = rank < self.max_applied;
        self.counts.unsafe_writes += u64::from(unsafe_write);
        self.max_applied = self.max_applied.max(rank);
        self.counts.writes_applied += 1;
        // A write's value is its invocation's tick.
        self.history.write_took_effect(writer, key, value, value);
        if answered {
            self.write_acked(writer, (key, value));
        }
        unsafe_write
    }

    /// `writer` heard that its write of `value` to `key` took effect: its client is answered.
    pub fn write_acked(&mut self, writer: NodeId, (key, value): (Key, Value)) {
        self.set_horizon(None);
        let at = self.tick();
        self.history.write_answered(writer, key, value, value, at);
    }

    /// Log entry `index` was reported committed. Returns whether this is its first report: every
    /// index up to a reporter's commit index has been reported before it (a node's commit index
    /// only comes from leaders, and a leader reports all it commits), so the highest index
    /// reported tells a first report from a repeat.
    ///
    /// Panics when entry `index` is reported with a term other than its first report's: a
    /// committed write was lost, which a correct replicated log never does. The terms are kept
    /// as runs of entries of one term (a log's terms never fall along it), the last
    /// [`TERM_RUNS_KEPT`] of them: a repeat older than those, or of an index no report named
    /// between two runs, is not checked.
    pub fn first_commit(&mut self, index: u64, token: Token) -> bool {
        let first = index > self.committed_index;
        if first {
            debug_assert!(
                self.committed_terms.back().is_none_or(|r| r.last < index),
                "runs of committed terms are kept in index order"
            );
            self.committed_index = index;
            match self.committed_terms.back_mut() {
                Some(run) if run.term == token => run.last = index,
                _ => {
                    if self.committed_terms.len() == TERM_RUNS_KEPT {
                        self.committed_terms.pop_front();
                    }
                    self.committed_terms.push_back(TermRun {
                        first: index,
                        last: index,
                        term: token,
                    });
                }
            }
            return true;
        }
        let runs = &self.committed_terms;
        let at = runs.partition_point(|r| r.first <= index);
        if let Some(run) = at.checked_sub(1).map(|i| runs[i]) {
            if index <= run.last {
                let term = run.term;
                assert_eq!(
                    term, token,
                    "log entry {index} was committed under term {term} and again under term \
                     {token}: a committed write was lost"
                );
            }
        }
        false
    }

    /// The resource's fencing check rejected a write.
    pub fn write_fenced(&mut self) {
        self.counts.fenced_writes += 1;
    }

    /// A second copy of a write that already reached the resource arrives: not applied again.
    pub fn duplicate_write(&mut self) {
        self.counts.duplicate_writes += 1;
    }

    /// `node` crashed: the reads under way at it are lost, and so is what it wrote that had
    /// not taken effect (it can no longer read it).
    pub fn crashed(&mut self, node: NodeId) {
        self.open.retain(|r| r.node as NodeId != node);
        self.drop_closed();
        self.history.forget_writer(node);
    }
}

/// No read under way at a node (ticks stay far below it).
const NONE_OPEN: Tick = Tick::MAX;

/// `token` of epoch `epoch` as a [`Rank`].
fn rank_of(epoch: u64, token: Token) -> Rank {
    assert!(
        token < 1 << EPOCH_SHIFT,
        "token {token} is beyond the 2^{EPOCH_SHIFT} tokens a run with a forgetful grantor \
         restart can order"
    );
    epoch << EPOCH_SHIFT | token
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Node `n` sends a write to key 0 under `token` (its value the invocation's tick):
    /// whether it is a zombie action.
    fn sent(h: &mut Harm, n: NodeId, token: Token) -> bool {
        let op = h.tick();
        h.write_sent(n, token, (op, 0, op))
    }

    /// A write to key 0 from node `n` under `token` lands: whether it is unsafe.
    fn landed(h: &mut Harm, n: NodeId, token: Token) -> bool {
        let op = h.tick();
        h.write_applied(n, token, (0, op), false)
    }

    fn verdict(zombie: bool, stale: bool, first_sight: bool) -> ReadVerdict {
        ReadVerdict {
            zombie,
            stale,
            first_sight,
        }
    }

    /// Node `n` writes `value` (its invocation's tick) to key 0 under `token`, which takes
    /// effect at once.
    fn write(h: &mut Harm, n: NodeId, token: Token) -> Value {
        let op = h.tick();
        h.write_sent(n, token, (op, 0, op));
        h.write_applied(n, token, (0, op), true);
        op
    }

    #[test]
    fn a_read_is_a_zombie_by_its_token_and_stale_by_the_history() {
        // Node 0 holds token 1; token 2 goes to node 1, which writes value w. A read by node 0
        // under token 1 returning the initial value: a zombie action (token 1 superseded), and
        // stale (w took effect before the read was invoked). One returning w: a zombie, not
        // stale, and not the first to see w (its acknowledgement was). Then node 1 writes w2,
        // which takes effect unacknowledged: the first read of w2 is the first to see it, the
        // next is not; no read is ever the first to see the initial value (seen at tick 0).
        let mut h = Harm::new(2, false);
        h.issued(0, 1);
        h.issued(1, 2);
        let w = write(&mut h, 1, 2);
        let op = h.tick();
        assert_eq!(h.read(0, (op, 0), 1, 0, true), verdict(true, true, false));
        let op = h.tick();
        assert_eq!(h.read(0, (op, 0), 1, w, true), verdict(true, false, false));
        let w2 = h.tick();
        h.write_sent(1, 2, (w2, 0, w2));
        h.write_applied(1, 2, (0, w2), false);
        let op = h.tick();
        assert_eq!(h.read(1, (op, 0), 2, w2, true), verdict(false, false, true));
        let op = h.tick();
        assert_eq!(
            h.read(1, (op, 0), 2, w2, true),
            verdict(false, false, false)
        );
        let c = h.counts();
        assert_eq!((c.zombie_actions, c.stale_reads, c.reads_served), (2, 1, 4));
    }

    /// Reads under way at two nodes, one queue for all: the horizon is the earliest read under
    /// way at any node, and moves past it only once it ends; a crash drops the node's reads.
    /// (Debug builds also check every read answered against the horizon.)
    #[test]
    fn the_horizon_is_the_earliest_read_under_way_at_any_node() {
        let mut h = Harm::new(2, false);
        h.issued(0, 1);
        // Node 1's read a, then node 0's reads b and c, all under way; then a write w.
        let a = h.tick();
        h.open_read(1, a, 0);
        let b = h.tick();
        h.open_read(0, b, 0);
        let c = h.tick();
        h.open_read(0, c, 0);
        let w = write(&mut h, 0, 1);
        // b is answered with w (not stale: w was acknowledged before b's answer, after its
        // invocation): the horizon stays at a, node 1's.
        assert_eq!(h.read(0, (b, 0), 1, w, false), verdict(false, false, false));
        assert_eq!(h.history.horizon(), a);
        // a, answered with the initial value, invoked before w: not stale; the horizon moves
        // to c, node 0's, the earliest left.
        assert_eq!(h.read(1, (a, 0), 1, 0, false), verdict(false, false, false));
        let d = h.tick();
        h.open_read(1, d, 0);
        h.read_ended(1, d);
        let e = h.tick();
        h.open_read(1, e, 0);
        assert_eq!(h.read(1, (e, 0), 1, w, false), verdict(false, false, false));
        assert_eq!(h.history.horizon(), c);
        // Node 0 crashes: c is dropped, nothing is under way, and the next answer's own read is
        // the horizon.
        let f = h.tick();
        h.open_read(1, f, 0);
        h.crashed(0);
        assert_eq!(h.kept_key(0, c), None);
        assert_eq!(h.read(1, (f, 0), 1, w, false), verdict(false, false, false));
        assert_eq!(h.history.horizon(), f);
    }

    #[test]
    fn a_kept_read_is_a_zombie_as_of_when_it_was_taken_up() {
        // Node 0 under token 1 takes a read up and keeps it; token 2 is issued to node 1, which
        // writes w. Served now with the initial value: not a zombie (token 1 was the newest when
        // it was taken up) and not stale (w took effect after it was invoked).
        let mut h = Harm::new(2, false);
        h.issued(0, 1);
        let op = h.tick();
        h.read_waits(0, op, 0, 1);
        h.issued(1, 2);
        write(&mut h, 1, 2);
        assert_eq!(
            h.read(0, (op, 0), 1, 0, false),
            verdict(false, false, false)
        );
        // Taken up now, under token 1: a zombie (and stale).
        let op = h.tick();
        h.read_waits(0, op, 0, 1);
        assert_eq!(h.read(0, (op, 0), 1, 0, false), verdict(true, true, false));
    }

    #[test]
    fn shared_read_authority_makes_no_zombie_reads() {
        // Token 2 supersedes token 1; a read under 1 is a zombie, unless read authority is
        // shared by design, when the history alone judges it.
        for (shared, zombie) in [(false, true), (true, false)] {
            let mut h = Harm::new(1, shared);
            h.issued(0, 1);
            h.issued(0, 2);
            let op = h.tick();
            assert_eq!(
                h.read(0, (op, 0), 1, 0, true),
                verdict(zombie, false, false)
            );
            assert_eq!(h.counts().zombie_actions, u64::from(zombie));
        }
    }

    #[test]
    fn a_write_applied_after_a_newer_token_s_is_unsafe() {
        // Node 1's token-2 write lands first; node 0's token-1 write after it is unsafe, and a
        // zombie action when it was sent.
        let mut h = Harm::new(2, false);
        h.issued(0, 1);
        h.issued(1, 2);
        write(&mut h, 1, 2);
        let op = h.tick();
        assert!(h.write_sent(0, 1, (op, 0, op)));
        assert!(h.write_applied(0, 1, (0, op), true));
        let c = h.counts();
        assert_eq!(
            (c.unsafe_writes, c.zombie_actions, c.writes_applied),
            (1, 1, 2)
        );
    }

    #[test]
    fn a_token_of_a_later_epoch_is_newer_whatever_its_number() {
        // Epoch 0: node 0 is issued 1 and 3 (ranks 1 and 3). A grantor forgets: epoch 1 issues
        // 1 to node 1, rank 2^48 + 1, newer than 3 of epoch 0.
        let mut h = Harm::new(2, false);
        h.issued(0, 1);
        h.issued(0, 3);
        assert_eq!(
            (h.rank(0, 3), h.latest()),
            (3, 3),
            "epoch 0: the numbers alone"
        );
        h.new_epoch();
        assert_eq!(h.latest(), 3, "nothing issued in epoch 1 yet");
        assert!(!sent(&mut h, 0, 3), "node 0's token 3 is still the newest");
        h.issued(1, 1);
        let one = (1 << 48) + 1;
        assert_eq!((h.rank(1, 1), h.rank(0, 3), h.latest()), (one, 3, one));
        // Node 0 acting under 3 (epoch 0) is a zombie; node 1 under 1 (epoch 1) is not.
        assert!(sent(&mut h, 0, 3));
        assert!(!sent(&mut h, 1, 1));
        // Node 1's write lands first: node 0's token-3 write after it is unsafe.
        assert!(!landed(&mut h, 1, 1));
        assert!(landed(&mut h, 0, 3));
        assert_eq!(h.counts().unsafe_writes, 1);
        assert_eq!(h.counts().zombie_actions, 1);
        // A token never issued to a node is of the current epoch: node 1 under 5 is newest.
        assert_eq!(h.rank(1, 5), (1 << 48) + 5);
        // Node 0 issued 1 in epoch 1 too: its token 1 is now of epoch 1, its 3 still of 0.
        h.issued(0, 1);
        assert_eq!((h.rank(0, 1), h.rank(0, 3)), (one, 3));
    }

    #[test]
    fn a_node_keeps_its_last_epochs_only() {
        // Node 0 is issued token 9 in epoch 0, then token 1 in each of EPOCHS_KEPT later
        // epochs: epoch 0 is forgotten, and its 9 is taken to be of the current epoch.
        let mut h = Harm::new(1, false);
        h.issued(0, 9);
        for _ in 0..EPOCHS_KEPT {
            h.new_epoch();
            h.issued(0, 1);
        }
        let epoch = EPOCHS_KEPT as u64;
        assert_eq!(h.issued_to[0].len(), EPOCHS_KEPT);
        assert_eq!(h.rank(0, 1), (epoch << 48) + 1);
        assert_eq!(h.rank(0, 9), (epoch << 48) + 9);
    }

    #[test]
    fn committed_terms_are_kept_as_runs_and_checked() {
        // Entries 1 and 2 under term 1, 4 under term 2 (3 is not a write): two runs.
        let mut h = Harm::new(1, false);
        assert!(h.first_commit(1, 1));
        assert!(h.first_commit(2, 1));
        assert!(h.first_commit(4, 2));
        assert_eq!(h.committed_terms.len(), 2);
        // Repeats that agree are not first reports; 3, between the runs, is not checked.
        assert!(!h.first_commit(2, 1));
        assert!(!h.first_commit(4, 2));
        assert!(!h.first_commit(3, 7));
        // A thousand entries under one term are one run.
        for i in 5..1005 {
            assert!(h.first_commit(i, 3));
        }
        assert_eq!(h.committed_terms.len(), 3);
    }

    #[test]
    #[should_panic(expected = "log entry 2 was committed under term 1 and again under term 2")]
    fn a_committed_entry_reported_under_another_term_panics() {
        let mut h = Harm::new(1, false);
        h.first_commit(1, 1);
        h.first_commit(2, 1);
        h.first_commit(3, 2);
        h.first_commit(2, 2);
    }

    #[test]
    fn the_committed_terms_kept_are_bounded() {
        // One entry per term: TERM_RUNS_KEPT + 10 runs, of which the first 10 are dropped; a
        // repeat of entry 1 under another term is then not checked.
        let mut h = Harm::new(1, false);
        for i in 1..=(TERM_RUNS_KEPT as u64 + 10) {
            h.first_commit(i, i);
        }
        assert_eq!(h.committed_terms.len(), TERM_RUNS_KEPT);
        assert_eq!(h.committed_terms[0].first, 11);
        assert!(!h.first_commit(1, 99));
    }
}
