//! What a run can tell an observer as it happens: one [`TraceEvent`] per thing that happened,
//! plus the oracle's belief intervals and overlaps as they are settled.
//!
//! The engine calls an [`Observer`] only when one is attached, so a run without one pays a
//! branch per event and nothing else. Observers here: [`timeline::Recorder`] keeps what a chart
//! needs (bounded by faults, grants and fixed-size bins, not by events), [`throughput::Throughput`]
//! counts reads and writes per bin of true time, and the writers in [`jsonl`] and [`perfetto`]
//! stream `trace.jsonl` and `trace.perfetto.json` to disk. [`Tee`] lets two observers watch one
//! run.

pub mod client_log;
pub mod clock_error;
pub mod history;
pub mod jsonl;
pub mod perfetto;
pub mod tally;
pub mod throughput;
pub mod timeline;
pub mod zoom;

use crate::msg::{NodeId, Token};
use crate::oracle::authority::Authority;
use crate::oracle::{Overlap, Piece};
use crate::scenario::{PauseKind, Thread};
use crate::time::{DriftRate, LocalDur, LocalTime, SimTime};

/// Why a message was not delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DropReason {
    /// Lost at send time (loss probability or a `Drop` fault).
    Lost,
    /// A partition or one-way cut was active when it would have been delivered.
    Cut,
    /// The destination was crashed or not started (datagrams: lost without a word).
    Down,
    /// The destination's process was crashed or not started on a stream transport: its host
    /// refuses the connection, and the sender learns it one network delay later
    /// ([`TraceKind::Refused`]).
    Refused,
    /// The destination was paused with its backlog full ([`crate::engine::MAX_DEFERRED`]).
    Backlog,
}

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum TraceKind {
    Start {
        restarted: bool,
    },
    Crash,
    PauseBegin {
        kind: PauseKind,
        stall: bool,
        until: SimTime,
    },
    PauseEnd,
    /// One loop of the node stalls until `until` (what it handles waits).
    ThreadStallBegin {
        thread: Thread,
        until: SimTime,
    },
    ThreadStallEnd {
        thread: Thread,
    },
    /// The node's disk makes nothing durable until `until`.
    DiskStallBegin {
        until: SimTime,
    },
    DiskStallEnd,
    /// An fsync of the node's disk finished: what `writes` calls wrote is durable.
    Durable {
        writes: u32,
    },
    ClockStep {
        by: LocalDur,
    },
    DriftChange {
        drift: DriftRate,
    },
    Send {
        to: NodeId,
        /// The message kind, as the protocol names it.
        kind: &'static str,
        id: u64,
        token: Option<Token>,
        /// When it will arrive (`None`: lost at send time).
        arrives: Option<SimTime>,
    },
    Deliver {
        from: NodeId,
        /// The message kind, as the protocol names it.
        kind: &'static str,
        id: u64,
        token: Option<Token>,
    },
    Drop {
        from: NodeId,
        to: NodeId,
        /// The message kind, as the protocol names it.
        kind: &'static str,
        id: u64,
        reason: DropReason,
    },
    /// The sender learns that its message `id` to `to` was refused (`to`'s process was down when
    /// it arrived: a connection refused or reset).
    Refused {
        to: NodeId,
        /// The message kind, as the protocol names it.
        kind: &'static str,
        id: u64,
    },
    /// The grantor issued a lease; `until` is its expiry on the grantor's clock mapped to true time.
    Grant {
        token: Token,
        to: NodeId,
        until: SimTime,
    },
    /// The grantor extended the lease `token` to `until` (true time).
    Renewed {
        token: Token,
        until: SimTime,
    },
    /// A client request failed the validity check.
    Rejected {
        write: bool,
    },
    /// A read took effect under `token`.
    Read {
        token: Token,
        zombie: bool,
        stale: bool,
    },
    /// A write took effect at the holder under `token` and left for the resource.
    WriteSent {
        token: Token,
        zombie: bool,
    },
    /// A write from `writer` reached the resource (at this node): applied, possibly unsafely,
    /// or fenced; or a second copy of a write the resource already had (`duplicate`: not applied
    /// again, counted in `duplicate_writes`).
    WriteArrived {
        writer: NodeId,
        token: Token,
        applied: bool,
        unsafe_write: bool,
        duplicate: bool,
    },
}

/// One event of a run, with the node's clock readings at that instant ([`TraceEvent::mono`],
/// [`TraceEvent::wall`]).
#[derive(Clone, Copy, Debug)]
pub struct TraceEvent<'a> {
    pub t: SimTime,
    pub node: NodeId,
    /// Where the clock readings come from.
    pub clock: Readings<'a>,
    pub kind: TraceKind,
}

/// A node's clock readings at an event: read from its clock when an observer asks (most
/// events need none: a chart's marks go by true time), or given.
#[derive(Clone, Copy, Debug)]
pub enum Readings<'a> {
    /// The node's clock, read at the event's true time.
    Of(&'a crate::clock::NodeClock),
    /// Readings given as they are.
    Given { mono: LocalTime, wall: LocalTime },
}

impl TraceEvent<'_> {
    /// The node's monotonic clock at the event.
    pub fn mono(&self) -> LocalTime {
        match self.clock {
            Readings::Of(c) => c.mono(self.t),
            Readings::Given { mono, .. } => mono,
        }
    }

    /// The node's wall clock at the event.
    pub fn wall(&self) -> LocalTime {
        match self.clock {
            Readings::Of(c) => c.wall(self.t),
            Readings::Given { wall, .. } => wall,
        }
    }
}

/// Something that watches a run.
pub trait Observer {
    fn event(&mut self, e: &TraceEvent);
    /// A settled belief interval of `node` in `authority` (pieces of one node and authority
    /// arrive in time order). Read authority comes apart only from a protocol that tracks it
    /// apart ([`crate::strategy::Claim`]); otherwise the write pieces stand for both.
    fn belief(&mut self, _node: NodeId, _authority: Authority, _piece: &Piece) {}
    /// An overlap interval of an exclusive authority, once it has closed.
    fn overlap(&mut self, _authority: Authority, _o: &Overlap) {}
    /// What happened to a client operation, as the oracle judged it (called only if
    /// [`Observer::wants_history`]).
    fn history(&mut self, _e: &history::HistoryEvent) {}
    /// Whether it wants [`Observer::history`] called: the engine asks once, before the run.
    fn wants_history(&self) -> bool {
        false
    }
    /// A request reached its node and failed the node's check at once: its
    /// [`Invoked`](history::HistoryEvent::Invoked) and its
    /// [`Failed`](history::HistoryEvent::Failed), and its trace event `e`
    /// ([`TraceKind::Rejected`]), in one call (most of a busy run's requests are refused so; an
    /// observer that keeps nothing of them can say so cheaply). By default the two history
    /// events through [`Observer::history`], then `e` through [`Observer::event`]. Called only
    /// if [`Observer::wants_history`] (else `e` alone, through [`Observer::event`]).
    fn refused(&mut self, r: &history::Refused, e: &TraceEvent) {
        for h in r.events() {
            self.history(&h);
        }
        self.event(e);
    }
    /// Whether from now on it takes the requests `what` names as counts alone: if so, an empty
    /// tally binned as it bins them. The engine then counts each such request there instead of
    /// telling it (no event is made for it), and hands the tally back through
    /// [`Observer::counted`] before [`Observer::finish`]. The engine asks an observer that
    /// [wants the history](Observer::wants_history) after it has told it of such a request,
    /// until the answer is a tally. `None` by default.
    fn as_counts(&mut self, _what: tally::Countable) -> Option<tally::Tally> {
        None
    }
    /// The requests `what` names since [`Observer::as_counts`] gave a tally for them, counted
    /// there.
    fn counted(&mut self, _what: tally::Countable, _tally: tally::Tally) {}
    /// A protocol moment: a moment of kind `kind` on node `node` at `at` (an expiry's instant
    /// may lie ahead of the call; see [`crate::scenario::Moment`]). Called only if
    /// [`Observer::wants_moments`].
    fn moment(&mut self, _node: NodeId, _kind: crate::scenario::Moment, _at: SimTime) {}
    /// Whether it wants [`Observer::moment`] called: the engine asks once, before the run.
    fn wants_moments(&self) -> bool {
        false
    }
    /// The run ended at `end`.
    fn finish(&mut self, _end: SimTime) {}
}

/// What the oracles settle reaches an observer as its beliefs and overlaps.
impl<O: Observer + ?Sized> crate::oracle::authority::Watcher for O {
    fn settled(&mut self, node: NodeId, authority: Authority, piece: &Piece) {
        self.belief(node, authority, piece);
    }
    fn overlapped(&mut self, authority: Authority, overlap: &Overlap) {
        self.overlap(authority, overlap);
    }
}

/// A writer that counts the bytes it passes on: how large a streamed trace has grown (what
/// `run --trace-limit` holds it to), whatever is still in a buffer below it.
#[derive(Debug)]
pub struct Counted<W> {
    inner: W,
    bytes: u64,
}

impl<W: std::io::Write> Counted<W> {
    pub fn new(inner: W) -> Counted<W> {
        Counted { inner, bytes: 0 }
    }

    /// The bytes written through it so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl<W: std::io::Write> std::io::Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Two observers watching one run: every call goes to the first, then to the second. Nest them
/// (`Tee(a, Tee(b, c))`) for more. Every request reaches both one by one (a tee takes none as
/// counts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tee<A, B>(pub A, pub B);

impl<A: Observer, B: Observer> Observer for Tee<A, B> {
    fn event(&mut self, e: &TraceEvent) {
        self.0.event(e);
        self.1.event(e);
    }
    fn belief(&mut self, node: NodeId, authority: Authority, piece: &Piece) {
        self.0.belief(node, authority, piece);
        self.1.belief(node, authority, piece);
    }
    fn overlap(&mut self, authority: Authority, o: &Overlap) {
        self.0.overlap(authority, o);
        self.1.overlap(authority, o);
    }
    fn history(&mut self, e: &history::HistoryEvent) {
        self.0.history(e);
        self.1.history(e);
    }
    fn wants_history(&self) -> bool {
        self.0.wants_history() || self.1.wants_history()
    }
    fn refused(&mut self, r: &history::Refused, e: &TraceEvent) {
        for o in [&mut self.0 as &mut dyn Observer, &mut self.1] {
            if o.wants_history() {
                o.refused(r, e);
            } else {
                o.event(e);
            }
        }
    }
    fn moment(&mut self, node: NodeId, kind: crate::scenario::Moment, at: SimTime) {
        self.0.moment(node, kind, at);
        self.1.moment(node, kind, at);
    }
    fn wants_moments(&self) -> bool {
        self.0.wants_moments() || self.1.wants_moments()
    }
    fn finish(&mut self, end: SimTime) {
        self.0.finish(end);
        self.1.finish(end);
    }
}

#[cfg(test)]
mod tests {
    use super::throughput::Throughput;
    use super::*;
    use crate::time::{Dur, LocalTime};

    #[test]
    fn a_tee_passes_every_call_to_both() {
        let mut tee = Tee(
            Throughput::new(Dur::from_ms(1)),
            Throughput::new(Dur::from_ms(2)),
        );
        let read = TraceEvent {
            t: SimTime::from_ns(2_500_000),
            node: 0,
            clock: Readings::Given {
                mono: LocalTime::from_ns(0),
                wall: LocalTime::from_ns(0),
            },
            kind: TraceKind::Read {
                token: 1,
                zombie: false,
                stale: false,
            },
        };
        tee.event(&read);
        tee.finish(SimTime::from_ns(4_000_000));
        // 2.5 ms is in bin 2 of 1 ms bins and bin 1 of 2 ms bins; 4 ms is 4 and 2 bins.
        assert_eq!(tee.0.counts(), [(0, 0), (0, 0), (1, 0), (0, 0)]);
        assert_eq!(tee.1.counts(), [(0, 0), (1, 0)]);
    }

    /// What an observer was told, in order.
    #[derive(Default)]
    struct Told {
        history: bool,
        calls: Vec<String>,
    }

    impl Observer for Told {
        fn event(&mut self, e: &TraceEvent) {
            self.calls.push(format!("event {:?}", e.kind));
        }
        fn history(&mut self, e: &history::HistoryEvent) {
            self.calls.push(format!("history {e:?}"));
        }
        fn wants_history(&self) -> bool {
            self.history
        }
    }

    /// A refused request reaches an observer that takes it in the default way as its
    /// invocation, its failure and its trace event, in that order; through a tee, one that
    /// does not want the history gets the trace event alone.
    #[test]
    fn a_refused_request_is_told_as_invoked_failed_and_rejected() {
        let at = SimTime::from_ns(50);
        let r = history::Refused {
            op: 7,
            node: 1,
            key: 3,
            write: true,
            at,
        };
        let e = TraceEvent {
            t: at,
            node: 1,
            clock: Readings::Given {
                mono: LocalTime::from_ns(0),
                wall: LocalTime::from_ns(0),
            },
            kind: TraceKind::Rejected { write: true },
        };
        let mut tee = Tee(
            Told {
                history: true,
                calls: Vec::new(),
            },
            Told::default(),
        );
        assert!(tee.wants_history());
        tee.refused(&r, &e);
        let invoked = history::HistoryEvent::Invoked {
            op: 7,
            node: 1,
            key: 3,
            write: true,
            at,
        };
        let failed = history::HistoryEvent::Failed { op: 7, at };
        let rejected = format!("event {:?}", e.kind);
        assert_eq!(
            tee.0.calls,
            [
                format!("history {invoked:?}"),
                format!("history {failed:?}"),
                rejected.clone()
            ]
        );
        assert_eq!(tee.1.calls, [rejected]);
    }
}
