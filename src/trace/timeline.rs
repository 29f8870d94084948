//! The [`Recorder`]: an observer that keeps what a timeline chart needs, and the [`Timeline`] it
//! produces.
//!
//! Memory is bounded by the run's faults, grants, belief intervals and a fixed number of bins,
//! never by its event count: client reads and writes are counted into [`BINS`] bins per node and
//! kind, and only the first [`EXACT_MARKS`] marks of each kind are kept exactly (for the zoom).
//! Clock steps are kept exactly up to [`EXACT_MARKS`] too (the rest counted), and each node's
//! clock-error breakpoints up to [`MAX_CLOCK_POINTS`]: past that every other one is dropped and
//! only every second new one kept, and so on, so that a clock synced every microsecond still
//! draws its error from thousands of evenly spread points. Grants, belief intervals and
//! overlaps are kept up to [`MAX_SPANS`] each (per node for beliefs); the first instant one was
//! left out is `Timeline::spans_cut_at`, which the chart states.

use super::tally::{Countable, Tally};
use super::{Observer, TraceEvent, TraceKind};
use crate::msg::{NodeId, Token};
use crate::oracle::authority::Authority;
use crate::oracle::{Overlap, Piece};
use crate::scenario::{PauseKind, Role, Thread};
use crate::time::{DriftRate, LocalDur, SimTime};

/// Bins across the run for dense marks.
pub const BINS: usize = 1000;
/// Exact marks kept per kind before only bins are.
pub const EXACT_MARKS: usize = 5000;

/// Clock-error breakpoints kept per node (a chart lane is narrower than this in pixels).
pub const MAX_CLOCK_POINTS: usize = 4096;

/// Grants, overlaps, and belief intervals per node and authority, kept each (more than a chart
/// can show one by one; a run of microsecond leases makes millions).
pub const MAX_SPANS: usize = 20_000;

/// A span of true time on one node's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub node: NodeId,
    pub start: SimTime,
    pub end: SimTime,
}

/// A pause, GC or VM freeze.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseSpan {
    pub span: Span,
    pub kind: PauseKind,
    /// A VM freeze that stalled the clocks.
    pub stall: bool,
}

/// A stall of one loop of a live node (`ThreadStall`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StallSpan {
    pub span: Span,
    pub thread: Thread,
}

/// What the grantor granted: `token` to `to`, from `start` until `until` (its expiry on its own
/// clock mapped to true time, moved by each renewal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrantSpan {
    pub grantor: NodeId,
    pub to: NodeId,
    pub token: Token,
    pub start: SimTime,
    pub until: SimTime,
}

/// Kinds of marks a chart draws on the row of the node that did them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum MarkKind {
    /// A read served under a superseded token.
    ZombieRead,
    /// A read that missed an applied write.
    StaleRead,
    /// A write that took effect under a superseded token.
    ZombieWrite,
    /// A write applied after a newer token's (drawn on the writer's row).
    UnsafeWrite,
    /// A write rejected by fencing (drawn on the writer's row).
    FencedWrite,
    /// Any read served (harmful or not).
    Read,
    /// A client request rejected by the validity check.
    Rejected,
}

impl MarkKind {
    pub const ALL: [MarkKind; 7] = [
        MarkKind::ZombieRead,
        MarkKind::StaleRead,
        MarkKind::ZombieWrite,
        MarkKind::UnsafeWrite,
        MarkKind::FencedWrite,
        MarkKind::Read,
        MarkKind::Rejected,
    ];
}

/// One exact mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub t: SimTime,
    pub node: NodeId,
    pub kind: MarkKind,
}

/// A network cut: `cut_off` nodes could not exchange messages with `others` over [start, end).
/// A one-way cut has `one_way` set: only `cut_off` -> `others` was cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutSpan {
    pub start: SimTime,
    pub end: SimTime,
    pub cut_off: Vec<NodeId>,
    pub others: Vec<NodeId>,
    pub one_way: bool,
}

/// A node's clock error at a breakpoint: local minus true, for both clocks, just after `t`.
/// Between breakpoints the error changes linearly (constant drift).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockPoint {
    pub t: SimTime,
    pub mono_err_ns: i64,
    pub wall_err_ns: i64,
}

/// Everything a timeline chart of one run shows.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    pub node_names: Vec<String>,
    pub roles: Vec<Role>,
    pub end: SimTime,
    /// Per node, its belief intervals of write authority (with token, and whether it was
    /// running); they stand for read authority too unless the protocol tracks it apart.
    pub beliefs: Vec<Vec<Piece>>,
    /// Per node, its belief intervals of read authority, for a protocol that tracks it apart
    /// (all empty otherwise).
    pub read_beliefs: Vec<Vec<Piece>>,
    /// Overlaps of the exclusive authorities, in time order.
    pub overlaps: Vec<Overlap>,
    /// The authority of each overlap (`overlap_authorities[i]` is that of `overlaps[i]`).
    pub overlap_authorities: Vec<Authority>,
    pub grants: Vec<GrantSpan>,
    pub pauses: Vec<PauseSpan>,
    /// Stalls of one loop of a node, in order of their start.
    pub thread_stalls: Vec<StallSpan>,
    /// Stalls of a node's disk, in order of their start.
    pub disk_stalls: Vec<Span>,
    /// Spans in which a node was crashed (not the time before its first start).
    pub down: Vec<Span>,
    /// Restarts after a crash: (time, node).
    pub restarts: Vec<(SimTime, NodeId)>,
    pub cuts: Vec<CutSpan>,
    /// The first [`EXACT_MARKS`] wall-clock steps, in time order.
    pub clock_steps: Vec<(SimTime, NodeId, LocalDur)>,
    /// Steps past those.
    pub clock_steps_beyond: u64,
    pub drift_changes: Vec<(SimTime, NodeId, DriftRate)>,
    /// The first instant at which a grant, belief interval or overlap was left out (more than
    /// [`MAX_SPANS`]); those before it are all kept.
    pub spans_cut_at: Option<SimTime>,
    /// Per node, clock-error breakpoints in time order (first at the node's start), thinned
    /// evenly past [`MAX_CLOCK_POINTS`].
    pub clock_error: Vec<Vec<ClockPoint>>,
    /// The first [`EXACT_MARKS`] marks of each kind, in time order.
    pub marks: Vec<Mark>,
    /// `bins[node][kind as usize][i]`: marks of that kind in bin i of [`BINS`] across the run.
    pub bins: Vec<Vec<Vec<u32>>>,
}

impl Timeline {
    /// The true time covered by bin `i`.
    pub fn bin_span(&self, i: usize) -> (SimTime, SimTime) {
        let w = self.end.ns() as i128;
        let a = (w * i as i128 / BINS as i128) as i64;
        let b = (w * (i as i128 + 1) / BINS as i128) as i64;
        (SimTime::from_ns(a), SimTime::from_ns(b))
    }
}

/// Builds a [`Timeline`] from a run's events.
pub struct Recorder {
    tl: Timeline,
    end_hint: SimTime,
    open_pause: Vec<Vec<(SimTime, PauseKind, bool)>>,
    open_stall: Vec<Vec<(SimTime, Thread)>>,
    /// Per node, the starts of its disk's stalls under way (a disk stall outlives a crash).
    open_disk_stall: Vec<Vec<SimTime>>,
    crashed_at: Vec<Option<SimTime>>,
    exact_counts: [usize; 7],
    /// Per node: keep one clock-error breakpoint in this many (a power of two), and how many
    /// were offered since the last one kept.
    clock_stride: Vec<(u64, u64)>,
    /// The last bin a mark fell in, as [`BinSpan`]: marks come in time order, so most fall in
    /// the bin before them and need no division.
    last_bin: BinSpan,
    /// `Timeline::bins` in one vector, node by node, kind by kind: `[(node * kinds + kind) *
    /// BINS + bin]` (one index to count a mark), laid out as the timeline's at its end.
    bins: Vec<u32>,
}

/// Instants known to share one bin: every `t` in `[from, until)` is in bin `bin` (bins grow
/// with time, so an instant between one known to be in a bin and the first of the next bin
/// is in that bin).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct BinSpan {
    pub(super) from: i64,
    pub(super) until: i64,
    pub(super) bin: usize,
}

impl BinSpan {
    /// No instant known yet.
    pub(super) const EMPTY: BinSpan = BinSpan {
        from: 0,
        until: 0,
        bin: 0,
    };

    /// The span of instants from `t_ns` that share its bin in a run `width_ns` long (> 0):
    /// up to the first instant of the next bin, ceil((bin + 1) * width / BINS), or to the end
    /// of time for the last bin (which takes every later instant).
    pub(super) fn of(t_ns: i64, width_ns: i64) -> BinSpan {
        let bin = bin_of(t_ns, width_ns);
        let until = if bin + 1 >= BINS {
            i64::MAX
        } else {
            let next = (bin as i128 + 1) * i128::from(width_ns);
            let bins = BINS as i128;
            i64::try_from((next + bins - 1) / bins).unwrap_or(i64::MAX)
        };
        BinSpan {
            from: t_ns,
            until,
            bin,
        }
    }
}

/// The bin of `t_ns` among [`BINS`] equal bins of a run `width_ns` long (clamped to the first
/// and the last): floor(t * BINS / width), in 64 bits when the product fits (every run shorter
/// than 106 days), else in 128; both exact, so the bin is the same either way.
pub(super) fn bin_of(t_ns: i64, width_ns: i64) -> usize {
    let bins = BINS as i64;
    let q = match t_ns.checked_mul(bins) {
        Some(p) => i128::from(p / width_ns),
        None => i128::from(t_ns) * i128::from(bins) / i128::from(width_ns),
    };
    q.clamp(0, i128::from(bins - 1)) as usize
}

impl Recorder {
    /// A recorder for a run of `node_names` with `roles`, lasting until `end`. `cuts` are the
    /// scenario's network cuts (they are not events of the run).
    pub fn new(
        node_names: Vec<String>,
        roles: Vec<Role>,
        end: SimTime,
        cuts: Vec<CutSpan>,
    ) -> Recorder {
        let n = node_names.len();
        Recorder {
            tl: Timeline {
                node_names,
                roles,
                end,
                beliefs: vec![Vec::new(); n],
                read_beliefs: vec![Vec::new(); n],
                cuts,
                clock_error: vec![Vec::new(); n],
                ..Timeline::default()
            },
            end_hint: end,
            open_pause: vec![Vec::new(); n],
            open_stall: vec![Vec::new(); n],
            open_disk_stall: vec![Vec::new(); n],
            crashed_at: vec![None; n],
            exact_counts: [0; 7],
            clock_stride: vec![(1, 0); n],
            last_bin: BinSpan::EMPTY,
            bins: vec![0; n * MarkKind::ALL.len() * BINS],
        }
    }

    /// What [`Observer::event`] does with a request's rejection (`e`, a
    /// [`TraceKind::Rejected`]), for an observer that knows the event's kind: its mark.
    #[inline]
    pub fn rejected(&mut self, e: &TraceEvent) {
        debug_assert!(matches!(e.kind, TraceKind::Rejected { .. }), "{:?}", e.kind);
        self.mark(e.t, e.node, MarkKind::Rejected);
    }

    /// The mark a request that `what` names makes.
    fn mark_of(what: Countable) -> MarkKind {
        match what {
            Countable::Refusals => MarkKind::Rejected,
            Countable::PlainReads => MarkKind::Read,
        }
    }

    /// An empty tally for the requests `what` names from now on, binned as its marks, once it
    /// keeps no more of their marks exactly (`None` before).
    pub fn tally(&self, what: Countable) -> Option<Tally> {
        let kept = self.exact_counts[Self::mark_of(what) as usize];
        (kept >= EXACT_MARKS).then(|| Tally::new(self.tl.node_names.len(), self.end_hint.ns()))
    }

    /// Adds the requests of `tally` (made by [`Recorder::tally`] for `what`) to its marks'
    /// bins.
    pub fn add_counted(&mut self, what: Countable, tally: &Tally) {
        let kinds = MarkKind::ALL.len();
        for node in 0..self.tl.node_names.len() {
            let at = (node * kinds + Self::mark_of(what) as usize) * BINS;
            for (bin, n) in self.bins[at..][..BINS].iter_mut().zip(tally.node(node)) {
                *bin += n;
            }
        }
    }

    #[inline]
    fn mark(&mut self, t: SimTime, node: NodeId, kind: MarkKind) {
        let k = kind as usize;
        if self.exact_counts[k] < EXACT_MARKS {
            self.exact_counts[k] += 1;
            self.tl.marks.push(Mark { t, node, kind });
        }
        let t_ns = t.ns();
        if !(self.last_bin.from..self.last_bin.until).contains(&t_ns) {
            self.last_bin = BinSpan::of(t_ns, self.end_hint.ns().max(1));
        }
        debug_assert_eq!(self.last_bin.bin, bin_of(t_ns, self.end_hint.ns().max(1)));
        self.bins[(node * MarkKind::ALL.len() + k) * BINS + self.last_bin.bin] += 1;
    }

    fn push_pause(
        &mut self,
        node: NodeId,
        start: SimTime,
        end: SimTime,
        kind: PauseKind,
        stall: bool,
    ) {
        self.tl.pauses.push(PauseSpan {
            span: Span { node, start, end },
            kind,
            stall,
        });
    }

    /// Ends every open pause and loop stall of `node` at `end` (a crash, or the end of the
    /// run).
    fn close_pauses(&mut self, node: NodeId, end: SimTime) {
        let open = std::mem::take(&mut self.open_pause[node]);
        for (start, kind, stall) in open {
            self.push_pause(node, start, end, kind, stall);
        }
        for (start, thread) in std::mem::take(&mut self.open_stall[node]) {
            let span = Span { node, start, end };
            self.tl.thread_stalls.push(StallSpan { span, thread });
        }
    }

    /// A stall of `node`'s disk ended at `end`: the earliest open one.
    fn disk_stall_ended(&mut self, node: NodeId, end: SimTime) {
        if !self.open_disk_stall[node].is_empty() {
            let start = self.open_disk_stall[node].remove(0);
            self.tl.disk_stalls.push(Span { node, start, end });
        }
    }

    /// A stall of loop `thread` of `node` ended at `end`: the earliest open one of that loop.
    fn stall_ended(&mut self, node: NodeId, thread: Thread, end: SimTime) {
        let open = &mut self.open_stall[node];
        if let Some(i) = open.iter().position(|&(_, t)| t == thread) {
            let (start, _) = open.remove(i);
            let span = Span { node, start, end };
            self.tl.thread_stalls.push(StallSpan { span, thread });
        }
    }

    fn clock_point(&mut self, e: &TraceEvent) {
        let (stride, skipped) = &mut self.clock_stride[e.node];
        if *skipped + 1 < *stride {
            *skipped += 1;
            return;
        }
        *skipped = 0;
        let points = &mut self.tl.clock_error[e.node];
        points.push(ClockPoint {
            t: e.t,
            mono_err_ns: e.mono().ns() - e.t.ns(),
            wall_err_ns: e.wall().ns() - e.t.ns(),
        });
        if points.len() == MAX_CLOCK_POINTS {
            // Keep the even-numbered ones (the first among them) and from now on one in twice
            // as many: the kept points stay evenly spread over the offered ones.
            let mut i = 0;
            points.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            // The last point pushed was dropped: the next offered is the next to keep.
            *skipped = *stride;
            *stride *= 2;
        }
    }

    /// A span starting at `at` was left out.
    fn cut_spans(&mut self, at: SimTime) {
        let cut = self.tl.spans_cut_at.get_or_insert(at);
        *cut = (*cut).min(at);
    }

    /// The timeline, once the run has finished.
    pub fn into_timeline(mut self) -> Timeline {
        let per_node = MarkKind::ALL.len() * BINS;
        self.tl.bins = self
            .bins
            .chunks_exact(per_node)
            .map(|node| node.chunks_exact(BINS).map(<[u32]>::to_vec).collect())
            .collect();
        self.tl.marks.sort_by_key(|m| (m.t, m.node, m.kind));
        self.tl.grants.sort_by_key(|g| (g.start, g.token));
        self.tl.pauses.sort_by_key(|p| (p.span.start, p.span.node));
        self.tl
            .thread_stalls
            .sort_by_key(|p| (p.span.start, p.span.node));
        self.tl.disk_stalls.sort_by_key(|s| (s.start, s.node));
        self.tl
    }
}

impl Observer for Recorder {
    fn event(&mut self, e: &TraceEvent) {
        let n = e.node;
        match e.kind {
            TraceKind::Start { restarted } => {
                if let Some(since) = self.crashed_at[n].take() {
                    self.tl.down.push(Span {
                        node: n,
                        start: since,
                        end: e.t,
                    });
                }
                if restarted {
                    self.tl.restarts.push((e.t, n));
                }
                self.clock_point(e);
            }
            TraceKind::Crash => {
                self.crashed_at[n] = Some(e.t);
                self.close_pauses(n, e.t);
                // Grants the grantor had made are forgotten with it.
                for g in self.tl.grants.iter_mut().filter(|g| g.grantor == n) {
                    g.until = g.until.min(e.t);
                }
            }
            TraceKind::PauseBegin { kind, stall, .. } => {
                self.open_pause[n].push((e.t, kind, stall));
                if stall {
                    self.clock_point(e);
                }
            }
            TraceKind::PauseEnd => {
                if !self.open_pause[n].is_empty() {
                    let (start, kind, stall) = self.open_pause[n].remove(0);
                    self.push_pause(n, start, e.t, kind, stall);
                    if stall {
                        self.clock_point(e);
                    }
                }
            }
            TraceKind::ThreadStallBegin { thread, .. } => self.open_stall[n].push((e.t, thread)),
            TraceKind::ThreadStallEnd { thread } => self.stall_ended(n, thread, e.t),
            TraceKind::DiskStallBegin { .. } => self.open_disk_stall[n].push(e.t),
            TraceKind::DiskStallEnd => self.disk_stall_ended(n, e.t),
            TraceKind::Durable { .. } => {}
            TraceKind::ClockStep { by } => {
                if self.tl.clock_steps.len() < EXACT_MARKS {
                    self.tl.clock_steps.push((e.t, n, by));
                } else {
                    self.tl.clock_steps_beyond += 1;
                }
                self.clock_point(e);
            }
            TraceKind::DriftChange { drift } => {
                self.tl.drift_changes.push((e.t, n, drift));
                self.clock_point(e);
            }
            TraceKind::Grant { token, to, until } => {
                if self.tl.grants.len() < MAX_SPANS {
                    self.tl.grants.push(GrantSpan {
                        grantor: n,
                        to,
                        token,
                        start: e.t,
                        until,
                    });
                } else {
                    self.cut_spans(e.t);
                }
            }
            TraceKind::Renewed { token, until } => {
                if let Some(g) = self
                    .tl
                    .grants
                    .iter_mut()
                    .rev()
                    .find(|g| g.grantor == n && g.token == token)
                {
                    g.until = g.until.max(until);
                }
            }
            TraceKind::Rejected { .. } => self.rejected(e),
            TraceKind::Read { zombie, stale, .. } => {
                self.mark(e.t, n, MarkKind::Read);
                if zombie {
                    self.mark(e.t, n, MarkKind::ZombieRead);
                }
                if stale {
                    self.mark(e.t, n, MarkKind::StaleRead);
                }
            }
            TraceKind::WriteSent { zombie: true, .. } => self.mark(e.t, n, MarkKind::ZombieWrite),
            TraceKind::WriteArrived {
                duplicate: true, ..
            } => {}
            TraceKind::WriteArrived {
                writer,
                applied,
                unsafe_write,
                ..
            } => {
                // Marked on the writer's row: it is the writer's lease that failed.
                if unsafe_write {
                    self.mark(e.t, writer, MarkKind::UnsafeWrite);
                }
                if !applied {
                    self.mark(e.t, writer, MarkKind::FencedWrite);
                }
            }
            TraceKind::Send { .. }
            | TraceKind::Deliver { .. }
            | TraceKind::Drop { .. }
            | TraceKind::Refused { .. }
            | TraceKind::WriteSent { .. } => {}
        }
    }

    fn belief(&mut self, node: NodeId, authority: Authority, piece: &Piece) {
        let v = match authority {
            Authority::Write => &mut self.tl.beliefs[node],
            Authority::Read => &mut self.tl.read_beliefs[node],
        };
        let room = v.len() < MAX_SPANS;
        match v.last_mut() {
            Some(l)
                if l.end == piece.start && l.token == piece.token && l.running == piece.running =>
            {
                l.end = piece.end
            }
            _ if room => v.push(*piece),
            _ => self.cut_spans(piece.start),
        }
    }

    fn overlap(&mut self, authority: Authority, o: &Overlap) {
        if self.tl.overlaps.len() < MAX_SPANS {
            self.tl.overlaps.push(o.clone());
            self.tl.overlap_authorities.push(authority);
        } else {
            self.cut_spans(o.start);
        }
    }

    fn finish(&mut self, end: SimTime) {
        self.tl.end = end;
        // Each authority's overlaps arrive in time order; merge them (stable: write first).
        let mut both: Vec<(Overlap, Authority)> = std::mem::take(&mut self.tl.overlaps)
            .into_iter()
            .zip(std::mem::take(&mut self.tl.overlap_authorities))
            .collect();
        both.sort_by_key(|(o, _)| (o.start, o.end));
        (self.tl.overlaps, self.tl.overlap_authorities) = both.into_iter().unzip();
        for n in 0..self.tl.node_names.len() {
            self.close_pauses(n, end);
            for start in std::mem::take(&mut self.open_disk_stall[n]) {
                self.tl.disk_stalls.push(Span {
                    node: n,
                    start,
                    end,
                });
            }
            if let Some(since) = self.crashed_at[n].take() {
                self.tl.down.push(Span {
                    node: n,
                    start: since,
                    end,
                });
            }
        }
    }
}

impl Recorder {
    /// A recorder for a run of `s` (which must be valid): its nodes, its end, and the network
    /// cuts of its fault schedule (fixed and drawn).
    pub fn for_scenario(s: &crate::scenario::Scenario) -> Recorder {
        use crate::scenario::{random_faults, Fault};
        let id = |name: &str| s.node_index(name).expect("validated node name");
        let mut faults = s.faults.clone();
        faults.extend(random_faults::materialize(s));
        let mut cuts = Vec::new();
        // A cut placed at a protocol moment has no time until the run meets it: not drawn.
        for f in faults.iter().filter(|f| f.after().is_none()) {
            match f {
                Fault::Partition {
                    at,
                    duration,
                    groups,
                } => {
                    let mut groups: Vec<Vec<NodeId>> = groups
                        .iter()
                        .map(|g| g.iter().map(|n| id(n)).collect())
                        .collect();
                    groups.sort_by_key(|g| g.len());
                    let cut_off = groups.first().cloned().unwrap_or_default();
                    let others = groups.iter().skip(1).flatten().copied().collect();
                    cuts.push(CutSpan {
                        start: SimTime::from_ns(at.ns()),
                        end: SimTime::from_ns(at.ns() + duration.ns()),
                        cut_off,
                        others,
                        one_way: false,
                    });
                }
                Fault::OneWay {
                    from,
                    to,
                    at,
                    duration,
                } => cuts.push(CutSpan {
                    start: SimTime::from_ns(at.ns()),
                    end: SimTime::from_ns(at.ns() + duration.ns()),
                    cut_off: vec![id(from)],
                    others: vec![id(to)],
                    one_way: true,
                }),
                _ => {}
            }
        }
        cuts.sort_by_key(|c| c.start);
        Recorder::new(
            s.nodes.iter().map(|n| n.name.clone()).collect(),
            s.nodes.iter().map(|n| n.role).collect(),
            SimTime::from_ns(s.duration.ns()),
            cuts,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bins split the run evenly, the last instant falls in the last bin, and a product past
    /// 64 bits takes the 128-bit path to the same floor.
    #[test]
    fn bins_split_the_run_evenly_in_64_or_128_bits() {
        let w = 3_600_000_000_000; // an hour: 3.6 s a bin
        assert_eq!(bin_of(0, w), 0);
        assert_eq!(bin_of(3_599_999_999, w), 0); // 3.599999999 s * 1000 / 3600 s = 0.99...
        assert_eq!(bin_of(3_600_000_000, w), 1);
        assert_eq!(bin_of(w - 1, w), BINS - 1);
        assert_eq!(bin_of(w, w), BINS - 1); // clamped
                                            // t * 1000 overflows i64: (2^62 - 1) * 1000 / (2^63 - 1) = 499.99..., so 499.
        assert_eq!(bin_of(i64::MAX / 2, i64::MAX), 499);
        assert_eq!(bin_of(i64::MAX, i64::MAX), BINS - 1);
    }

    /// A bin's span runs from the instant asked to the first instant of the next bin. An hour
    /// in 1000 bins: bin 0 is [0, 3.6 s), so from 1 s it runs to 3.6 s; 7 ns in 1000 bins:
    /// bin b holds t with floor(1000 t / 7) = b, so t = 0 alone is bin 0 and bin 142 (t = 1)
    /// ends at ceil(143 * 7 / 1000) = ceil(1.001) = 2; the last bin runs to the end of time.
    #[test]
    fn a_bin_span_ends_where_the_next_bin_begins() {
        let hour = 3_600_000_000_000;
        let s = BinSpan::of(1_000_000_000, hour);
        assert_eq!((s.from, s.until, s.bin), (1_000_000_000, 3_600_000_000, 0));
        assert_eq!(bin_of(3_600_000_000 - 1, hour), 0);
        assert_eq!(BinSpan::of(0, 7).until, 1);
        let s = BinSpan::of(1, 7);
        assert_eq!((s.until, s.bin), (2, 142));
        assert_eq!(BinSpan::of(hour - 1, hour).until, i64::MAX);
        // Past 64 bits: bin 499 of a run of 2^63 - 1 ns ends at ceil(500 (2^63 - 1) / 1000) =
        // ceil(2^62 - 1/2) = 2^62.
        assert_eq!(BinSpan::of(i64::MAX / 2, i64::MAX).until, 1 << 62);
    }

    proptest::proptest! {
        /// Every instant in a bin's span is in its bin, and the span's end is in the next.
        #[test]
        fn a_bin_span_holds_its_bin_exactly(t in 0i64..1 << 50, width in 1i64..1 << 50, ahead in 0i64..1 << 20) {
            let s = BinSpan::of(t, width);
            proptest::prop_assert_eq!(s.bin, bin_of(t, width));
            let inside = t.saturating_add(ahead).min(s.until - 1);
            proptest::prop_assert_eq!(bin_of(inside, width), s.bin);
            if s.until < i64::MAX {
                proptest::prop_assert_eq!(bin_of(s.until, width), s.bin + 1);
            }
        }
    }
}
