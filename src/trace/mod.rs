//! What a run can tell an observer as it happens: one [`TraceEvent`] per thing that happened,
//! plus the oracle's belief intervals and overlaps as they are settled.
//!
//! The engine calls an [`Observer`] only when one is attached, so a run without one pays a
//! branch per event and nothing else. Observers here: [`timeline::Recorder`] keeps what a chart
//! needs (bounded by faults, grants and fixed-size bins, not by events), and the writers in
//! [`jsonl`] and [`perfetto`] stream `trace.jsonl` and `trace.perfetto.json` to disk.

pub mod jsonl;
pub mod perfetto;
pub mod timeline;

use crate::msg::{NodeId, Token};
use crate::oracle::authority::Authority;
use crate::oracle::{Overlap, Piece};
use crate::scenario::PauseKind;
use crate::time::{DriftRate, LocalDur, LocalTime, SimTime};

/// Why a message was not delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DropReason {
    /// Lost at send time (loss probability or a `Drop` fault).
    Lost,
    /// A partition or one-way cut was active when it would have been delivered.
    Cut,
    /// The destination was crashed or not started.
    Down,
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

/// One event of a run, with the node's clock readings at that instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceEvent {
    pub t: SimTime,
    pub node: NodeId,
    pub mono: LocalTime,
    pub wall: LocalTime,
    pub kind: TraceKind,
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
    /// The run ended at `end`.
    fn finish(&mut self, _end: SimTime) {}
}
