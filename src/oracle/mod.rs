//! The oracle: exact belief intervals, overlaps and availability; harm in [`harm`].
//!
//! It stands apart from the engine and the strategies. The engine tells it, at each event that
//! can change a node's belief, what the node now believes ([`Belief`]), whether the node is
//! running, and the node's clock; before anything changes, the engine asks it to settle the time
//! since the last change. Settling turns "believes while the clock reads less than D" into the
//! exact interval of true time up to the nanosecond the clock crosses D, paused or not. Settled
//! pieces are swept across nodes from time to time, so memory stays bounded however long the run:
//! overlaps (two or more believers) and availability (some running believer) are accumulated as
//! the sweep goes, and only the overlap intervals themselves are kept.
//!
//! Invariants (asserted): the sweep never goes back in time, and no count of believers or of
//! available nodes goes negative.
//!
//! **Safety slack** (`min_slack_ns`), the near miss, is computed in the same sweep:
//!
//! - A node's *belief stretch* is a maximal interval of true time in which it believes, whatever
//!   its token or running flag: pieces of one node that meet end to end are one stretch (a token
//!   change or a pause does not split it; a paused believer still believes).
//! - Stretches are ordered by start, and two that start at the same instant by node index: a
//!   stretch *started before* another if it started strictly earlier, or at the same instant on a
//!   lower-indexed node.
//! - At the start s_B of each stretch of node B, the *previous holder* is the node whose stretch,
//!   among all stretches (B's own included) that started before this one, ends latest; a stretch
//!   still open at the end of the run ends at the run's end. When that is another node (on a tie
//!   with B's own previous stretch, the other node), this start is a *handover*, and its slack is
//!   s_B - e, where e is the latest end among the other nodes' stretches that started before it:
//!   the smallest s_B - e over every other node that believed at s_B. When B's own previous
//!   stretch ended last, B took the lease back: no handover.
//! - The slack is negative when the beliefs overlapped: then |slack| is how long the previous
//!   holder's belief went on after B's began (which is longer than the overlap when B's stretch
//!   ends first). A holder whose belief ends at the very instant the next one's starts gives 0.
//!   Two stretches that start at the same instant with nobody earlier: by the tie-break, the
//!   higher-indexed node's start is a handover from the lower-indexed one, with slack -(how long
//!   the lower-indexed node's stretch lasted); -(their common believing) when it ended first.
//! - `min_slack_ns` is the smallest slack over all handovers of the run, `None` when there was
//!   none.
//!
//! The minimum is computed as the smallest s_Z - e_Y over every pair of stretches Y, Z of two
//! different nodes where Y started before Z, which is the same number: take the pair with the
//! smallest value; if Z's node B took the lease back, B's previous stretch P ended after Y, and
//! then (Y, P) if Y started before P, or (P, Y) if P started before Y (s_Y - e_P < s_Z - e_Y, as
//! s_Y < e_Y < e_P < s_Z) would be smaller still. So Z's start is a handover, whose slack is at
//! most s_Z - e_Y, and every handover's slack is the value of one of its pairs.
//!
//! The sweep never keeps stretches: per node, whether a stretch is open, the end of its last
//! one, and, while one is open, the earliest start of another node's stretch since it began (when
//! it ends at e, that start s gives the smallest s - e of the pairs it comes first in). So the
//! carry is a few words per node however long the run, and a handover whose previous holder is
//! still believing is resolved when that belief ends, in whatever flush.

pub mod authority;
pub mod belief;
pub mod failover;
pub mod harm;
pub mod lapse;
pub mod linearizable;

use crate::clock::NodeClock;
use crate::msg::{NodeId, Token};
use crate::time::SimTime;
pub use belief::{Authorities, Belief, Beliefs, Claim};

/// A maximal interval of true time in which two or more nodes believe they hold the lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlap {
    pub start: SimTime,
    pub end: SimTime,
    /// Every node that believed at some instant of the interval, in node order.
    pub nodes: Vec<NodeId>,
}

/// One node's settled belief over [start, end) of true time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub start: SimTime,
    pub end: SimTime,
    pub token: Token,
    /// The node was running (not paused, crashed or unstarted) throughout.
    pub running: bool,
}

struct Track {
    belief: Belief,
    running: bool,
    /// Belief and running are settled up to here.
    since: SimTime,
    /// For a belief `Until` a reading: when it would end, in true time, at the clock's mapping
    /// when last settled (`None` for any other belief).
    ends_at: Option<SimTime>,
    /// When the node's belief under its current token began (see [`lapse`]).
    from: SimTime,
    pieces: Vec<Piece>,
}

/// Sweep state carried from one flush to the next.
#[derive(Default)]
struct Carry {
    believing: Vec<bool>,
    believers: usize,
    available_nodes: usize,
    open_overlap: Option<(SimTime, Vec<bool>)>,
    /// Start of the current unavailable stretch (`None` while available).
    unavailable_since: Option<SimTime>,
    available_ns: i64,
    max_unavailable_ns: i64,
    /// Time up to which the sweep has run.
    swept_to: SimTime,
    /// Safety slack (see the module doc): per node, and the smallest slack so far.
    stretches: Vec<StretchCarry>,
    min_slack_ns: Option<i64>,
    /// The closest call (see [`Oracle::set_belief`]): the least lease left at a renewal.
    closest_call_ns: Option<i64>,
    /// The same, not clamped at 0: negative when a lease lapsed, by how long before the
    /// renewal or the new grant that ended the lapse.
    call_ns: Option<i64>,
    /// The first [`HANDOVERS_KEPT`] slacks noted ([`OracleReport::handovers`]).
    handovers: Vec<Handover>,
    /// When the last fault so far ends (the run's start while none has come).
    faults_end: SimTime,
    /// The first instant from `faults_end` on at which a running node believed.
    recovered_at: Option<SimTime>,
    /// The first [`RESUMPTIONS_KEPT`] ends of a stretch with no running believer.
    resumptions: Vec<Resumption>,
}

/// How many ends of an unavailable stretch are kept ([`OracleReport::resumptions`]): as many
/// as the failovers followed ([`failover::TOKENS_KEPT`]), four times over, for runs whose holder
/// loses and regains its belief between handovers.
pub const RESUMPTIONS_KEPT: usize = 4 * failover::TOKENS_KEPT;

/// The end of a stretch with no running believer: `node` believed (running) again at `at`,
/// after none had since `down_from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resumption {
    pub node: NodeId,
    pub down_from: SimTime,
    pub at: SimTime,
}

/// One node's belief stretches as far as the slack needs them.
#[derive(Clone, Copy, Debug, Default)]
struct StretchCarry {
    /// A stretch of this node is open (it started and has not ended yet).
    open: bool,
    /// The end of this node's last closed stretch.
    last_end: Option<SimTime>,
    /// While a stretch is open: the earliest start of another node's stretch since it began.
    waiting: Option<SimTime>,
}

/// How many handovers a run keeps ([`OracleReport::handovers`]): memory stays bounded.
pub const HANDOVERS_KEPT: usize = 64;

/// One slack noted by the sweep: a stretch of a node starting at `start` (true time) after
/// node `from`'s belief that ended `slack_ns` before it (negative: after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Handover {
    pub start: SimTime,
    pub slack_ns: i64,
    pub from: NodeId,
}

impl Carry {
    fn note_slack(&mut self, start: SimTime, slack_ns: i64, from: NodeId) {
        self.min_slack_ns = Some(self.min_slack_ns.map_or(slack_ns, |m| m.min(slack_ns)));
        if self.handovers.len() < HANDOVERS_KEPT {
            self.handovers.push(Handover {
                start,
                slack_ns,
                from,
            });
        }
    }

    /// Node `n`'s belief stretch ends at `t`: the handovers waiting on it are resolved.
    fn stretch_ends(&mut self, n: NodeId, t: SimTime) {
        let s = &mut self.stretches[n];
        debug_assert!(s.open, "a belief stretch ends that never started");
        s.open = false;
        s.last_end = Some(t);
        if let Some(start) = s.waiting.take() {
            self.note_slack(start, start.ns() - t.ns(), n);
        }
    }

    /// Node `n`'s belief stretch starts at `t` (after every stretch ending at `t`, and after the
    /// starts at `t` of lower-indexed nodes): its slack against every other node's stretch that
    /// started before it, now for those that ended, at their end for those still open.
    fn stretch_starts(&mut self, n: NodeId, t: SimTime) {
        // The latest end of another node's stretch, and whose (the lowest-indexed among equals).
        let mut ended: Option<(SimTime, NodeId)> = None;
        for (m, s) in self.stretches.iter_mut().enumerate() {
            if m == n {
                continue;
            }
            if s.open {
                // The earliest start waiting on a stretch gives its smallest slack.
                s.waiting.get_or_insert(t);
            } else if let Some(end) = s.last_end {
                if ended.is_none_or(|(e, _)| end > e) {
                    ended = Some((end, m));
                }
            }
        }
        self.stretches[n].open = true;
        if let Some((e, from)) = ended {
            self.note_slack(t, t.ns() - e.ns(), from);
        }
    }
}

/// Exact beliefs, overlaps and availability of one run.
pub struct Oracle {
    tracks: Vec<Track>,
    carry: Carry,
    overlaps: Vec<Overlap>,
    pending_pieces: usize,
    /// Sweep once this many settled pieces wait: [`FLUSH_AT`], or twice the nodes (a flush
    /// settles every node).
    flush_at: usize,
    points: Vec<(SimTime, NodeId, i8, i8)>,
    /// With export on: pieces swept since the last [`Oracle::drain_exported`].
    exported: Option<Vec<(NodeId, Piece)>>,
    lapses: lapse::Lapses,
}

/// Flush once this many settled pieces wait, to bound memory: what waits is kept until then,
/// so a run that settles fewer pieces than this holds all of them, and a longer run more of
/// them, up to this bound. Small enough that a run of minutes reaches it.
const FLUSH_AT: usize = 256;

impl Oracle {
    /// An oracle for `nodes` nodes; with `export`, settled pieces are kept for
    /// [`Oracle::drain_exported`] (an observer wants them).
    pub fn new(nodes: usize, export: bool) -> Oracle {
        let flush_at = FLUSH_AT.max(2 * nodes);
        Oracle {
            tracks: (0..nodes)
                .map(|_| Track {
                    belief: Belief::None,
                    running: false,
                    since: SimTime::ZERO,
                    ends_at: None,
                    from: SimTime::ZERO,
                    pieces: Vec::new(),
                })
                .collect(),
            carry: Carry {
                believing: vec![false; nodes],
                stretches: vec![StretchCarry::default(); nodes],
                unavailable_since: Some(SimTime::ZERO),
                ..Carry::default()
            },
            overlaps: Vec::new(),
            pending_pieces: 0,
            flush_at,
            // A piece is two points, and a flush settles every node once more: the sweep's
            // buffer is made once, at its bound.
            points: Vec::with_capacity(2 * (flush_at + nodes)),
            exported: export.then(Vec::new),
            lapses: lapse::Lapses::default(),
        }
    }

    /// What node `n` believes now (as last set).
    pub fn belief(&self, n: NodeId) -> Belief {
        self.tracks[n].belief
    }

    /// Accounts node `n`'s belief from the last settle up to `now` under its current state and
    /// clock mapping. Call before changing either; calling twice at one instant is harmless.
    pub fn settle(&mut self, n: NodeId, now: SimTime, clock: &NodeClock) {
        let t = &mut self.tracks[n];
        if now <= t.since {
            return;
        }
        let since = t.since;
        t.since = now;
        let (token, end) = match t.belief {
            Belief::None => return,
            Belief::Bool { token } => (token, now),
            Belief::Until {
                token,
                clock: kind,
                deadline,
            } => {
                let ends_at = clock.reaches(kind, deadline, since);
                t.ends_at = Some(ends_at);
                (token, ends_at.min(now))
            }
        };
        if end <= since {
            return;
        }
        debug_assert!(end <= now, "a settled piece ends after now");
        self.lapses.settled(token, t.from, end);
        let piece = Piece {
            start: since,
            end,
            token,
            running: t.running,
        };
        match t.pieces.last_mut() {
            Some(last) if last.end == since && last.token == token && last.running == t.running => {
                last.end = end
            }
            _ => {
                t.pieces.push(piece);
                self.pending_pieces += 1;
            }
        }
    }

    /// Node `n` believes `belief` from now on (settle first).
    ///
    /// When a belief that ends at a reading gives way to another belief that holds (a renewal,
    /// or a new grant after it lapsed), the lease the node had left then, in true time at its
    /// clock's rate as last settled (0 if it had lapsed), is a *call*: the least over the run
    /// is its closest call, how near a holder came to losing the lease. It measures a run with
    /// no handover, which has no slack.
    pub fn set_belief(&mut self, n: NodeId, belief: Belief) {
        let t = &mut self.tracks[n];
        if belief != t.belief && belief != Belief::None {
            if let (Belief::Until { .. }, Some(ends_at)) = (t.belief, t.ends_at) {
                let raw_ns = ends_at.ns() - t.since.ns();
                let least = |c: &mut Option<i64>, v: i64| *c = Some(c.map_or(v, |m| m.min(v)));
                least(&mut self.carry.closest_call_ns, raw_ns.max(0));
                least(&mut self.carry.call_ns, raw_ns);
            }
        }
        if token_of(belief) != token_of(t.belief) {
            t.from = t.since;
        }
        t.ends_at = None;
        t.belief = belief;
    }

    /// Lease `token` is free again at `free_at`, by its grantor's word (see [`lapse`]):
    /// `granted` when it was just handed to another node, else a renewal. Settle every node
    /// first, so that what was believed before is measured against the end it had then.
    pub fn lease_ends(&mut self, token: Token, free_at: SimTime, granted: bool) {
        debug_assert!(
            self.lapses.measures(token, granted),
            "an end that is not measured"
        );
        self.lapses.note(token, free_at, granted);
    }

    /// Whether [`Oracle::lease_ends`] of `token` would be noted (see [`lapse::Lapses::measures`]).
    pub fn measures_lease(&self, token: Token, granted: bool) -> bool {
        self.lapses.measures(token, granted)
    }

    /// Node `n` is running (or not) from now on (settle first).
    pub fn set_running(&mut self, n: NodeId, running: bool) {
        self.tracks[n].running = running;
    }

    /// Sweeps if enough pieces wait (returns whether it did). `clocks` are the nodes' clocks,
    /// to settle everyone at `now`.
    pub fn maybe_flush(&mut self, now: SimTime, clocks: &[NodeClock]) -> bool {
        let due = self.pending_pieces >= self.flush_at;
        if due {
            self.flush(now, clocks);
        }
        due
    }

    /// Settles every node at `now` and sweeps everything before it. Points at `now` itself wait
    /// for the next sweep, so that a belief that goes on past `now` is not split there.
    pub fn flush(&mut self, now: SimTime, clocks: &[NodeClock]) {
        for (n, clock) in clocks.iter().enumerate() {
            self.settle(n, now, clock);
        }
        self.collect_points();
        self.sweep(Some(now));
    }

    /// Moves every settled piece into the sweep's points (and the export, if on).
    fn collect_points(&mut self) {
        for (n, t) in self.tracks.iter_mut().enumerate() {
            for p in &t.pieces {
                let avail = i8::from(p.running);
                self.points.push((p.start, n, 1, avail));
                self.points.push((p.end, n, -1, -avail));
            }
            if let Some(x) = self.exported.as_mut() {
                x.extend(t.pieces.iter().map(|p| (n, *p)));
            }
            t.pieces.clear();
        }
        self.pending_pieces = 0;
    }

    /// Runs the sweep over the points before `until` (all of them if `None`), in time order,
    /// carrying state across calls; later points stay for the next sweep.
    fn sweep(&mut self, until: Option<SimTime>) {
        self.points.sort_unstable_by_key(|p| (p.0, p.1, p.2));
        let stop = match until {
            Some(w) => self.points.partition_point(|p| p.0 < w),
            None => self.points.len(),
        };
        let c = &mut self.carry;
        let mut i = 0;
        while i < stop {
            let t = self.points[i].0;
            let at_t = i;
            assert!(t >= c.swept_to, "the oracle's sweep went back in time");
            // Account the stretch [swept_to, t) with the state before t.
            if c.available_nodes > 0 {
                c.available_ns += t.ns() - c.swept_to.ns();
                if c.recovered_at.is_none() && t > c.faults_end {
                    c.recovered_at = Some(c.faults_end.max(c.swept_to));
                }
            }
            c.swept_to = t;
            // Apply every change at t together, so that pieces meeting end to end do not split.
            while i < stop && self.points[i].0 == t {
                let (_, n, db, da) = self.points[i];
                c.believing[n] = db > 0;
                c.believers = c
                    .believers
                    .checked_add_signed(db as isize)
                    .expect("a believer count never goes negative");
                if da != 0 {
                    c.available_nodes = c
                        .available_nodes
                        .checked_add_signed(da as isize)
                        .expect("an available-node count never goes negative");
                }
                if let (Some((_, who)), true) = (c.open_overlap.as_mut(), db > 0) {
                    who[n] = true;
                }
                i += 1;
            }
            stretch_changes(c, &self.points[at_t..i], t);
            match (&c.open_overlap, c.believers >= 2) {
                (None, true) => c.open_overlap = Some((t, c.believing.clone())),
                (Some(_), false) => {
                    let (start, who) = c.open_overlap.take().unwrap();
                    self.overlaps.push(Overlap {
                        start,
                        end: t,
                        nodes: (0..who.len()).filter(|&n| who[n]).collect(),
                    });
                }
                _ => {}
            }
            match (c.unavailable_since, c.available_nodes > 0) {
                (Some(since), true) => {
                    c.max_unavailable_ns = c.max_unavailable_ns.max(t.ns() - since.ns());
                    c.unavailable_since = None;
                    for &(_, node, _, da) in &self.points[at_t..i] {
                        if da > 0 && c.resumptions.len() < RESUMPTIONS_KEPT {
                            c.resumptions.push(Resumption {
                                node,
                                down_from: since,
                                at: t,
                            });
                        }
                    }
                }
                (None, false) => c.unavailable_since = Some(t),
                _ => {}
            }
            if c.recovered_at.is_none() && t >= c.faults_end && c.available_nodes > 0 {
                c.recovered_at = Some(t);
            }
        }
        self.points.drain(..stop);
    }

    /// A fault that lasts until `end` took effect: recovery is judged from the last such end
    /// (faults come in time order and every end is at or after the fault's start, so nothing
    /// swept yet lies past it: a recovery found before is forgotten).
    pub fn faults_until(&mut self, end: SimTime) {
        let c = &mut self.carry;
        if end > c.faults_end {
            debug_assert!(c.swept_to <= end, "a fault ends before what was swept");
            c.faults_end = end;
            c.recovered_at = None;
        }
    }

    /// Hands the pieces swept since the last call to `f`, then forgets them.
    pub fn drain_exported(&mut self, mut f: impl FnMut(NodeId, &Piece)) {
        if let Some(x) = self.exported.as_mut() {
            for (n, p) in x.drain(..) {
                f(n, &p);
            }
        }
    }

    /// The overlap intervals closed so far.
    pub fn overlaps(&self) -> &[Overlap] {
        &self.overlaps
    }

    /// Ends the run at `end`: settles and sweeps everything, closes what is open.
    pub fn finish(&mut self, end: SimTime, clocks: &[NodeClock]) {
        for (n, clock) in clocks.iter().enumerate() {
            self.settle(n, end, clock);
        }
        self.collect_points();
        self.sweep(None);
        let c = &mut self.carry;
        if c.available_nodes > 0 && end > c.swept_to {
            c.available_ns += end.ns() - c.swept_to.ns();
            if c.recovered_at.is_none() && end > c.faults_end {
                c.recovered_at = Some(c.faults_end.max(c.swept_to));
            }
        }
        if let Some((start, who)) = c.open_overlap.take() {
            self.overlaps.push(Overlap {
                start,
                end,
                nodes: (0..who.len()).filter(|&n| who[n]).collect(),
            });
        }
        if let Some(since) = c.unavailable_since.take() {
            c.max_unavailable_ns = c.max_unavailable_ns.max(end.ns() - since.ns());
        }
    }

    /// What the oracle found, after [`Oracle::finish`].
    pub fn into_report(self) -> OracleReport {
        OracleReport {
            overlaps: self.overlaps,
            available_ns: self.carry.available_ns,
            max_unavailable_ns: self.carry.max_unavailable_ns,
            min_slack_ns: self.carry.min_slack_ns,
            closest_call_ns: self.carry.closest_call_ns,
            call_ns: self.carry.call_ns,
            overrun_ns: self.lapses.overrun_ns(),
            handovers: self.carry.handovers,
            faults_end: self.carry.faults_end,
            recovered_at: self.carry.recovered_at,
            resumptions: self.carry.resumptions,
        }
    }
}

/// The token a belief is under, if any.
fn token_of(b: Belief) -> Option<Token> {
    match b {
        Belief::None => None,
        Belief::Bool { token } | Belief::Until { token, .. } => Some(token),
    }
}

/// Tells `c` which belief stretches end and start at `t`, given every point at `t` (sorted by
/// node, an end before a start): a node whose first point at `t` is an end believed before `t`,
/// one whose last point is a start believes after it. Ends first, then starts in node order.
fn stretch_changes(c: &mut Carry, at_t: &[(SimTime, NodeId, i8, i8)], t: SimTime) {
    let groups = at_t.chunk_by(|a, b| a.1 == b.1);
    for g in groups.clone() {
        if g[0].2 < 0 && g[g.len() - 1].2 < 0 {
            c.stretch_ends(g[0].1, t);
        }
    }
    for g in groups {
        if g[0].2 > 0 {
            c.stretch_starts(g[0].1, t);
        }
    }
}

/// What the oracle found over a whole run.
#[derive(Clone, Debug)]
pub struct OracleReport {
    pub overlaps: Vec<Overlap>,
    /// True time in which some running node believed.
    pub available_ns: i64,
    /// The longest stretch with no running believer (from the start, between, or to the end).
    pub max_unavailable_ns: i64,
    /// The smallest safety slack over the run's handovers (see the module doc); negative when
    /// beliefs overlapped, `None` when there was no handover.
    pub min_slack_ns: Option<i64>,
    /// The closest call ([`Oracle::set_belief`]): the least lease a holder had left when a
    /// belief of it that ends at a reading was renewed or taken again; `None` when none was.
    pub closest_call_ns: Option<i64>,
    /// The closest call not clamped at 0: when a lease lapsed before it was renewed or taken
    /// again, minus how long it had lapsed by then (how late the renewal came). Explore's
    /// guided search ranks by it; no output shows it.
    pub call_ns: Option<i64>,
    /// The longest a node went on believing under a lease handed to it past the end its
    /// grantor gave ([`lapse`]); `None` when no belief reached one. Explore's guided search
    /// ranks by it; no output shows it.
    pub overrun_ns: Option<i64>,
    /// The first [`HANDOVERS_KEPT`] slacks of the run in the order the sweep noted them (each
    /// pair of stretches that gave a slack: a handover, or one of its candidates). Their least
    /// is `min_slack_ns` when none was left out. Explore's guided search compares them with a
    /// run without faults; no output shows them.
    pub handovers: Vec<Handover>,
    /// When the run's last fault ended (its start, for a fault with no length; the run's start
    /// when it had none).
    pub faults_end: SimTime,
    /// The first instant from `faults_end` on at which a running node believed; `None` if
    /// none did before the run ended.
    pub recovered_at: Option<SimTime>,
    /// The first ends of a stretch with no running believer, in time order (at most
    /// [`RESUMPTIONS_KEPT`]): who believed again, and since when none had.
    pub resumptions: Vec<Resumption>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ClockKind;
    use crate::time::{DriftRate, LocalDur, LocalTime};

    /// An oracle fed by hand: cached-bool beliefs, so every piece ends exactly where it is
    /// settled, and times in plain nanoseconds.
    struct Feed {
        o: Oracle,
        clocks: Vec<NodeClock>,
    }

    impl Feed {
        fn new(nodes: usize) -> Feed {
            Feed {
                o: Oracle::new(nodes, false),
                clocks: vec![NodeClock::new(DriftRate::ZERO, LocalDur::ZERO); nodes],
            }
        }

        /// Node `n` believes under `token` from `t` on (`None`: stops believing).
        fn believe(&mut self, n: NodeId, t: i64, token: Option<Token>) -> &mut Feed {
            self.o.settle(n, SimTime::from_ns(t), &self.clocks[n]);
            self.o.set_belief(
                n,
                token.map_or(Belief::None, |token| Belief::Bool { token }),
            );
            self
        }

        /// Node `n` runs (or is paused) from `t` on.
        fn running(&mut self, n: NodeId, t: i64, running: bool) -> &mut Feed {
            self.o.settle(n, SimTime::from_ns(t), &self.clocks[n]);
            self.o.set_running(n, running);
            self
        }

        fn flush(&mut self, t: i64) -> &mut Feed {
            self.o.flush(SimTime::from_ns(t), &self.clocks);
            self
        }

        /// Node `n` believes over [from, to) under token 1.
        fn stretch(&mut self, n: NodeId, from: i64, to: i64) -> &mut Feed {
            self.believe(n, from, Some(1)).believe(n, to, None)
        }

        fn finish(&mut self, end: i64) -> OracleReport {
            let mut o = std::mem::replace(&mut self.o, Oracle::new(0, false));
            o.finish(SimTime::from_ns(end), &self.clocks);
            o.into_report()
        }
    }

    #[test]
    fn a_belief_taken_up_after_its_lease_ended_counts_from_its_own_start() {
        // Lease 1, handed to node 0, is free again at 100. Node 0 believes under it from 150
        // to 200: 200 - 150 = 50 past the end (it did not believe before 150). Node 1
        // believes under token 2, which no grantor handed out, from 0 to 400: not measured.
        let mut f = Feed::new(2);
        f.o.lease_ends(1, SimTime::from_ns(100), true);
        f.believe(0, 150, Some(1)).believe(0, 200, None);
        f.believe(1, 0, Some(2)).believe(1, 400, None);
        assert_eq!(f.finish(500).overrun_ns, Some(50));
        // Never past the end: none.
        let mut g = Feed::new(1);
        g.o.lease_ends(1, SimTime::from_ns(100), true);
        g.believe(0, 0, Some(1)).believe(0, 99, None);
        assert_eq!(g.finish(500).overrun_ns, None);
    }

    /// Node `n` believes, from `t`, until its monotonic clock reads `deadline`.
    fn until(f: &mut Feed, n: NodeId, t: i64, deadline: i64) {
        f.o.settle(n, SimTime::from_ns(t), &f.clocks[n]);
        f.o.set_belief(
            n,
            Belief::Until {
                token: 1,
                clock: ClockKind::Monotonic,
                deadline: LocalTime::from_ns(deadline),
            },
        );
    }

    #[test]
    fn recovery_is_the_first_instant_a_running_node_believes_from_the_last_fault_s_end() {
        // Node 0 believes over [0, 100), node 1 from 250 on. A fault lasting to 120 (told at
        // 100): recovered at 250, 130 after it. A second fault, told at 260, lasts to 300:
        // the first recovery is forgotten, and node 1 believes through 300: recovered at once.
        // Every node runs from the start.
        let mut f = Feed::new(2);
        f.running(0, 0, true).running(1, 0, true);
        f.stretch(0, 0, 100);
        f.o.faults_until(SimTime::from_ns(120));
        f.believe(1, 250, Some(2));
        f.flush(260);
        f.o.faults_until(SimTime::from_ns(300));
        let r = f.finish(400);
        assert_eq!(r.faults_end, SimTime::from_ns(300));
        assert_eq!(r.recovered_at, Some(SimTime::from_ns(300)));
        // The same run with only the first fault: recovered at 250.
        let mut g = Feed::new(2);
        g.running(0, 0, true).running(1, 0, true);
        g.stretch(0, 0, 100);
        g.o.faults_until(SimTime::from_ns(120));
        g.believe(1, 250, Some(2));
        let r = g.finish(400);
        assert_eq!(r.recovered_at, Some(SimTime::from_ns(250)));
        // A believer paused over [300, 350) from a fault that ends at 350 runs again then.
        let mut h = Feed::new(1);
        h.running(0, 0, true).believe(0, 0, Some(1));
        h.running(0, 300, false);
        h.o.faults_until(SimTime::from_ns(350));
        h.running(0, 350, true);
        assert_eq!(h.finish(400).recovered_at, Some(SimTime::from_ns(350)));
        // Nobody believes after the fault: no recovery; without faults, from the start.
        let mut k = Feed::new(1);
        k.running(0, 0, true).stretch(0, 0, 100);
        k.o.faults_until(SimTime::from_ns(120));
        assert_eq!(k.finish(400).recovered_at, None);
        let mut m = Feed::new(1);
        m.running(0, 0, true).stretch(0, 40, 100);
        let r = m.finish(400);
        assert_eq!(
            (r.faults_end, r.recovered_at),
            (SimTime::ZERO, Some(SimTime::from_ns(40)))
        );
    }

    #[test]
    fn the_closest_call_is_the_least_lease_left_at_a_renewal() {
        // A lease to 100 renewed at 30 to 130 (70 left), at 120 to 220 (130 - 120 = 10 left),
        // again at 120 with the same deadline (no change: no call), then at 200 to 300
        // (220 - 200 = 20 left): the least is 10.
        let mut f = Feed::new(1);
        until(&mut f, 0, 0, 100);
        until(&mut f, 0, 30, 130);
        until(&mut f, 0, 120, 220);
        until(&mut f, 0, 120, 220);
        until(&mut f, 0, 200, 300);
        let r = f.finish(250);
        assert_eq!(r.closest_call_ns, Some(10));
        assert_eq!(r.min_slack_ns, None);
    }

    #[test]
    fn a_lease_taken_again_after_it_lapsed_is_a_call_of_zero() {
        // A lease to 100, taken again at 150 after it lapsed: 0 left. Ended by a step-down
        // (no belief) with 50 left: not a call. A cached bool has no end: not a call.
        let mut f = Feed::new(2);
        until(&mut f, 0, 0, 100);
        until(&mut f, 0, 150, 300);
        f.believe(0, 250, None);
        f.believe(1, 260, Some(2)).believe(1, 270, Some(3));
        let r = f.finish(400);
        assert_eq!(r.closest_call_ns, Some(0));
        let mut g = Feed::new(1);
        until(&mut g, 0, 0, 100);
        g.believe(0, 50, None);
        assert_eq!(g.finish(400).closest_call_ns, None);
    }

    #[test]
    fn a_lapsed_lease_s_call_is_how_late_it_was_taken_again() {
        // A lease to 100 renewed at 30 to 130 (70 left), then taken again at 150 after it
        // lapsed at 130: clamped 0, unclamped 130 - 150 = -20. Lapsed twice: to 100 taken
        // again at 150 (-50), to 300 taken again at 340 (-40): the least is -50.
        let mut f = Feed::new(1);
        until(&mut f, 0, 0, 100);
        until(&mut f, 0, 30, 130);
        until(&mut f, 0, 150, 300);
        let r = f.finish(200);
        assert_eq!((r.closest_call_ns, r.call_ns), (Some(0), Some(-20)));
        let mut g = Feed::new(1);
        until(&mut g, 0, 0, 100);
        until(&mut g, 0, 150, 300);
        until(&mut g, 0, 340, 400);
        let r = g.finish(400);
        assert_eq!((r.closest_call_ns, r.call_ns), (Some(0), Some(-50)));
    }

    #[test]
    fn every_handover_is_kept_with_its_start_and_slack() {
        // a [10, 100), b [130, 200), a [190, 300): b starts 130 - 100 = 30 after a; a again
        // at 190 while b believes to 200: slack 190 - 200 = -10, noted when b ends at 200.
        let r = Feed::new(2)
            .stretch(0, 10, 100)
            .stretch(1, 130, 200)
            .stretch(0, 190, 300)
            .finish(400);
        let h = |start: i64, slack_ns: i64, from: NodeId| Handover {
            start: SimTime::from_ns(start),
            slack_ns,
            from,
        };
        assert_eq!(r.handovers, vec![h(130, 30, 0), h(190, -10, 1)]);
        assert_eq!(r.min_slack_ns, Some(-10));
        // a [0, 50), c [60, 120): c after a (10); then b from 150: its slack is against the
        // later end, c's (30), not a's (100).
        let r = Feed::new(3)
            .stretch(0, 0, 50)
            .stretch(2, 60, 120)
            .stretch(1, 150, 200)
            .finish(400);
        assert_eq!(r.handovers, vec![h(60, 10, 0), h(150, 30, 2)]);
        // 70 handovers, 10 ns apart: the first 64 kept.
        let mut f = Feed::new(2);
        for k in 0..70 {
            f.stretch((k % 2) as usize, 100 * k, 100 * k + 90);
        }
        let r = f.finish(10_000);
        assert_eq!(r.handovers.len(), HANDOVERS_KEPT);
        // The 64th: stretch 64 (node 0) after stretch 63 (node 1).
        assert_eq!(r.handovers[63], h(6_400, 10, 1));
    }

    #[test]
    fn a_call_is_measured_in_true_time_at_the_clock_s_rate() {
        // A clock 1 % slow (reading 0.99 t): a deadline of 990 is reached at true 1000; renewed
        // at true 900, 100 ns of true time were left (the reading then was 891: 99 to go).
        let mut f = Feed::new(1);
        f.clocks[0] = NodeClock::new(DriftRate::from_ppm(-10_000.0).unwrap(), LocalDur::ZERO);
        until(&mut f, 0, 0, 990);
        until(&mut f, 0, 900, 1_890);
        assert_eq!(f.finish(1_000).closest_call_ns, Some(100));
    }

    #[test]
    fn a_clean_handover_is_the_gap_between_the_two_beliefs() {
        // a [10, 100), b [130, 200): b starts 130 - 100 = 30 ns after a's belief ended.
        let r = Feed::new(2)
            .stretch(0, 10, 100)
            .stretch(1, 130, 200)
            .finish(300);
        assert_eq!(r.min_slack_ns, Some(30));
        assert!(r.overlaps.is_empty());
    }

    #[test]
    fn the_previous_holder_is_the_one_whose_belief_ended_last() {
        // a [0, 10), b [20, 30), c [35, 50): a -> b 20 - 10 = 10; at 35 the latest end among the
        // others is b's 30: 35 - 30 = 5 (not 35 - 10 = 25).
        let r = Feed::new(3)
            .stretch(0, 0, 10)
            .stretch(1, 20, 30)
            .stretch(2, 35, 50)
            .finish(60);
        assert_eq!(r.min_slack_ns, Some(5));
    }

    #[test]
    fn an_overlap_counts_how_long_the_previous_holder_went_on() {
        // a [10, 100), b [40, 60) inside it: a believed 100 - 40 = 60 ns after b began, though
        // the overlap is only [40, 60).
        let r = Feed::new(2)
            .stretch(0, 10, 100)
            .stretch(1, 40, 60)
            .finish(300);
        assert_eq!(r.min_slack_ns, Some(40 - 100));
        assert_eq!(
            r.overlaps,
            [Overlap {
                start: SimTime::from_ns(40),
                end: SimTime::from_ns(60),
                nodes: vec![0, 1]
            }]
        );
        // b starting twice during a's belief: the earlier start is the closer call,
        // 40 - 100 = -60, not 70 - 100 = -30.
        let r = Feed::new(2)
            .stretch(0, 10, 100)
            .stretch(1, 40, 60)
            .stretch(1, 70, 80)
            .finish(300);
        assert_eq!(r.min_slack_ns, Some(-60));
    }

    #[test]
    fn one_node_alone_never_hands_over() {
        // a [0, 10) and [20, 30): a takes the lease back, no handover.
        let r = Feed::new(2).stretch(0, 0, 10).stretch(0, 20, 30).finish(40);
        assert_eq!(r.min_slack_ns, None);
    }

    #[test]
    fn a_token_change_or_a_pause_does_not_split_a_stretch() {
        // a believes over [0, 100) in three pieces: token 1, token 2 from 50, paused from 70.
        // b believes [10, 40) inside. Stretch a [0, 100): b's start gives 10 - 100 = -90. Were a
        // split at 50, b's stretch would be compared with [0, 50) only: 10 - 50 = -40.
        let r = Feed::new(2)
            .running(0, 0, true)
            .believe(0, 0, Some(1))
            .stretch(1, 10, 40)
            .believe(0, 50, Some(2))
            .running(0, 70, false)
            .believe(0, 100, None)
            .finish(200);
        assert_eq!(r.min_slack_ns, Some(-90));
    }

    #[test]
    fn a_handover_is_resolved_across_a_flush() {
        // a [0, 100), b from 40: flushes at 60 (a's piece is cut there, and must not end its
        // stretch) and at 80; a's belief ends at 100, after both: 40 - 100 = -60.
        let mut f = Feed::new(2);
        f.believe(0, 0, Some(1)).believe(1, 40, Some(2));
        f.flush(60).flush(80);
        assert_eq!(f.o.carry.min_slack_ns, None, "a's end is not known yet");
        f.believe(0, 100, None);
        assert_eq!(f.finish(150).min_slack_ns, Some(-60));
    }

    #[test]
    fn a_belief_open_at_the_end_ends_with_the_run() {
        // a from 0 to the end (200), b [50, 60): 50 - 200 = -150.
        let r = Feed::new(2)
            .believe(0, 0, Some(1))
            .stretch(1, 50, 60)
            .finish(200);
        assert_eq!(r.min_slack_ns, Some(-150));
    }

    #[test]
    fn settled_pieces_are_swept_once_enough_wait() {
        // Memory stays bounded: b believes [2, 3), then a believes [10k, 10k + 5) under token k
        // (a new piece each time), k = 0, 1, ... One piece short of FLUSH_AT nothing is swept;
        // at FLUSH_AT the sweep takes everything before now, and the overlap [2, 3) of a's first
        // piece with b's is already known.
        let mut f = Feed::new(2);
        f.stretch(1, 2, 3);
        let piece = |f: &mut Feed, k: i64| {
            f.believe(0, 10 * k, Some(k as Token))
                .believe(0, 10 * k + 5, None);
        };
        for k in 0..FLUSH_AT as i64 - 2 {
            piece(&mut f, k);
        }
        let now = SimTime::from_ns(10 * FLUSH_AT as i64);
        assert_eq!(f.o.pending_pieces, FLUSH_AT - 1);
        assert!(!f.o.maybe_flush(now, &f.clocks.clone()));
        assert!(f.o.overlaps.is_empty());
        piece(&mut f, FLUSH_AT as i64 - 2);
        assert!(f.o.maybe_flush(now, &f.clocks.clone()));
        assert_eq!(f.o.pending_pieces, 0);
        assert!(f.o.points.is_empty(), "every point lay before now");
        // The last piece, k = FLUSH_AT - 2, ended at 10 (FLUSH_AT - 2) + 5.
        assert_eq!(
            f.o.carry.swept_to,
            SimTime::from_ns(10 * (FLUSH_AT as i64 - 2) + 5)
        );
        assert_eq!(
            f.o.overlaps,
            [Overlap {
                start: SimTime::from_ns(2),
                end: SimTime::from_ns(3),
                nodes: vec![0, 1]
            }]
        );
    }

    #[test]
    fn an_end_and_a_start_at_one_instant_give_zero() {
        let r = Feed::new(2).stretch(0, 0, 30).stretch(1, 30, 60).finish(90);
        assert_eq!(r.min_slack_ns, Some(0));
        assert!(r.overlaps.is_empty());
    }

    #[test]
    fn simultaneous_starts_break_the_tie_by_node_index() {
        // a and b both from 10, a until 30, b until 50: a's stretch counts as the earlier, so
        // b's start is the handover: 10 - 30 = -20, their common believing. (b's as the earlier
        // would give 10 - 50 = -40.)
        let r = Feed::new(2)
            .stretch(0, 10, 30)
            .stretch(1, 10, 50)
            .finish(90);
        assert_eq!(r.min_slack_ns, Some(-20));
        // a until 50, b until 30: a went on 40 ns after b began.
        let r = Feed::new(2)
            .stretch(0, 10, 50)
            .stretch(1, 10, 30)
            .finish(90);
        assert_eq!(r.min_slack_ns, Some(-40));
    }
}
