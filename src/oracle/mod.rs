//! The oracle (SPEC 3): exact belief intervals, overlaps and availability; harm in [`harm`].
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

pub mod authority;
pub mod harm;

use crate::clock::NodeClock;
use crate::msg::{NodeId, Token};
use crate::strategy::Belief;
use crate::time::SimTime;

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
    pieces: Vec<Piece>,
}

/// Sweep state carried from one flush to the next.
#[derive(Default)]
struct Carry {
    believing: Vec<bool>,
    available: Vec<bool>,
    believers: usize,
    available_nodes: usize,
    open_overlap: Option<(SimTime, Vec<bool>)>,
    /// Start of the current unavailable stretch (`None` while available).
    unavailable_since: Option<SimTime>,
    available_ns: i64,
    max_unavailable_ns: i64,
    /// Time up to which the sweep has run.
    swept_to: SimTime,
}

/// Exact beliefs, overlaps and availability of one run.
pub struct Oracle {
    tracks: Vec<Track>,
    carry: Carry,
    overlaps: Vec<Overlap>,
    pending_pieces: usize,
    points: Vec<(SimTime, NodeId, i8, i8)>,
    /// With export on: pieces swept since the last [`Oracle::drain_exported`].
    exported: Option<Vec<(NodeId, Piece)>>,
}

/// Flush once this many settled pieces wait, to bound memory.
const FLUSH_AT: usize = 4096;

impl Oracle {
    /// An oracle for `nodes` nodes; with `export`, settled pieces are kept for
    /// [`Oracle::drain_exported`] (an observer wants them).
    pub fn new(nodes: usize, export: bool) -> Oracle {
        Oracle {
            tracks: (0..nodes)
                .map(|_| Track {
                    belief: Belief::None,
                    running: false,
                    since: SimTime::ZERO,
                    pieces: Vec::new(),
                })
                .collect(),
            carry: Carry {
                believing: vec![false; nodes],
                available: vec![false; nodes],
                unavailable_since: Some(SimTime::ZERO),
                ..Carry::default()
            },
            overlaps: Vec::new(),
            pending_pieces: 0,
            points: Vec::new(),
            exported: export.then(Vec::new),
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
            } => (token, clock.reaches(kind, deadline, since).min(now)),
        };
        if end <= since {
            return;
        }
        debug_assert!(end <= now, "a settled piece ends after now");
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
    pub fn set_belief(&mut self, n: NodeId, belief: Belief) {
        self.tracks[n].belief = belief;
    }

    /// Node `n` is running (or not) from now on (settle first).
    pub fn set_running(&mut self, n: NodeId, running: bool) {
        self.tracks[n].running = running;
    }

    /// Sweeps if enough pieces wait (returns whether it did). `clocks` are the nodes' clocks,
    /// to settle everyone at `now`.
    pub fn maybe_flush(&mut self, now: SimTime, clocks: &[NodeClock]) -> bool {
        let due = self.pending_pieces >= FLUSH_AT;
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
            assert!(t >= c.swept_to, "the oracle's sweep went back in time");
            // Account the stretch [swept_to, t) with the state before t.
            if c.available_nodes > 0 {
                c.available_ns += t.0 - c.swept_to.0;
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
                    c.available[n] = da > 0;
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
                    c.max_unavailable_ns = c.max_unavailable_ns.max(t.0 - since.0);
                    c.unavailable_since = None;
                }
                (None, false) => c.unavailable_since = Some(t),
                _ => {}
            }
        }
        self.points.drain(..stop);
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
            c.available_ns += end.0 - c.swept_to.0;
        }
        if let Some((start, who)) = c.open_overlap.take() {
            self.overlaps.push(Overlap {
                start,
                end,
                nodes: (0..who.len()).filter(|&n| who[n]).collect(),
            });
        }
        if let Some(since) = c.unavailable_since.take() {
            c.max_unavailable_ns = c.max_unavailable_ns.max(end.0 - since.0);
        }
    }

    /// What the oracle found, after [`Oracle::finish`].
    pub fn into_report(self) -> OracleReport {
        OracleReport {
            overlaps: self.overlaps,
            available_ns: self.carry.available_ns,
            max_unavailable_ns: self.carry.max_unavailable_ns,
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
}
