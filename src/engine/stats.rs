//! The counters of one run, and the longest gap between two reads or two writes.

use super::waits;
use crate::msg::NodeId;
use crate::time::SimTime;

/// Counters of one run.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub events: u64,
    pub truncated: bool,
    /// The events pending in the queue as each event was taken out, summed (over `events`,
    /// the queue's mean length: what a bare event heap would hold for this run).
    pub in_flight_sum: u64,
    /// Messages sent, by kind (indexed as the protocol's `KINDS`).
    pub messages_sent: Vec<u64>,
    pub messages_dropped: u64,
    /// Of those, the messages a stream refused back to their sender (their destination's
    /// process was down).
    pub messages_refused: u64,
    pub grants: u64,
    pub renewals: u64,
    pub reads_arrived: u64,
    pub writes_arrived: u64,
    pub reads_admitted: u64,
    pub writes_admitted: u64,
    /// Reads served from local state at once ([`Fact::Read`](crate::strategy::Fact::Read)).
    pub reads_local: u64,
    /// Reads served after a confirmation round ([`Fact::ConfirmedRead`](crate::strategy::Fact::ConfirmedRead)), and how long they
    /// waited for it.
    pub reads_confirmed: u64,
    pub confirmed_read_waits: waits::ReadWaits,
    /// Client requests dropped because their paused node's backlog was full.
    pub requests_shed: u64,
    /// The longest stretch between two reads served (anywhere), and between two writes
    /// acknowledged to their clients (applied at the resource; in a replicated log, committed by
    /// the leader that accepted them): when clients saw reads or writes stop and resume.
    pub read_gap: Gap,
    pub write_gap: Gap,
    pub pauses: u64,
    /// Stalls of one loop of a node (`ThreadStall`) that began on a node that was up.
    pub thread_stalls: u64,
    pub crashes: u64,
    /// The recipients of the first [`GRANT_ORDER_CAP`] grants, in the order they were issued
    /// (bounded: a long run's later grants are counted in `grants` only).
    pub grant_order: Vec<NodeId>,
    /// Faults placed at protocol moments that never happened: their moment never came, or
    /// came too late for the run.
    pub faults_never_placed: u64,
    /// The first harmful act of each kind, to say why a run did harm.
    pub first_harm: FirstHarm,
}

/// The first harmful act of each kind in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FirstHarm {
    pub zombie: Option<HarmAct>,
    pub stale_read: Option<HarmAct>,
    pub unsafe_write: Option<HarmAct>,
}

/// One harmful act: when, who acted and under which token, and the node where it was judged
/// (the reader for a read, the node that sent a write, the resource or the committing leader
/// where a write took effect).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HarmAct {
    pub at: SimTime,
    pub actor: NodeId,
    pub token: crate::msg::Token,
    pub place: NodeId,
    /// For a zombie action: a write sent (else a read served).
    pub write: bool,
}

impl FirstHarm {
    /// Notes `act` as the first of its kind if none came before.
    pub fn note(slot: &mut Option<HarmAct>, act: HarmAct) {
        slot.get_or_insert(act);
    }
}

/// The longest stretch between two successive events of one kind (reads served, writes taking
/// effect), tracked in constant memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gap {
    /// The last event so far: a stretch from it to the run's end is open.
    pub last: Option<SimTime>,
    /// The longest stretch so far: (from, to), the two events that bound it.
    pub longest: Option<(SimTime, SimTime)>,
}

impl Gap {
    /// One event at `t` (times never go backwards).
    pub fn event(&mut self, t: SimTime) {
        if let Some(last) = self.last {
            debug_assert!(t >= last, "events come in time order");
            if self.longest.is_none_or(|(a, b)| t.since(last) > b.since(a)) {
                self.longest = Some((last, t));
            }
        }
        self.last = Some(t);
    }
}

/// How many grant recipients [`Stats::grant_order`] keeps.
pub const GRANT_ORDER_CAP: usize = 64;
