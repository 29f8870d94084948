//! Faults placed at protocol moments (`at: After(moment: .., nth: .., delay: ..)`): the
//! engine reads each moment off the facts node logic reports, counts each waiting fault's
//! moments (on its node, or on any), and at the `nth` places the fault `delay` later (never
//! earlier than now, never at or past the run's end). A fault whose moment never comes, or
//! comes too late, is never placed; the run counts such faults.

use super::{NodeFault, Sim};
use crate::msg::{NodeId, Token};
use crate::net::NetFault;
use crate::scenario::Moment;
use crate::strategy::{Fact, Protocol};
use crate::time::{Dur, SimTime};

/// A fault waiting for its moment.
#[derive(Clone, Debug)]
pub(crate) struct Anchored {
    pub moment: Moment,
    /// The node whose moments count; any node's when `None`.
    pub node: Option<NodeId>,
    pub nth: u32,
    pub delay: Dur,
    /// Moments counted so far.
    pub seen: u32,
    /// Whether the fault has been placed in the run.
    pub placed: bool,
    pub what: Placed,
}

/// What an anchored fault starts.
#[derive(Clone, Debug)]
pub(crate) enum Placed {
    /// Node faults (a leader transfer has one per node).
    Node(Vec<(NodeId, NodeFault)>),
    /// A network fault, compiled at time zero, and its place in the list of faults.
    Net { fault: NetFault, order: u64 },
}

/// What the engine keeps for anchored faults: them, and each node's last token held.
#[derive(Clone, Debug, Default)]
pub(crate) struct Anchors {
    pub faults: Vec<Anchored>,
    held: Vec<Option<Token>>,
    /// The observer hears every moment.
    watched: bool,
}

impl Anchors {
    pub fn new(faults: Vec<Anchored>, nodes: usize, watched: bool) -> Anchors {
        Anchors {
            faults,
            held: vec![None; nodes],
            watched,
        }
    }

    /// How many anchored faults were never placed.
    pub fn never_placed(&self) -> u64 {
        self.faults.iter().filter(|a| !a.placed).count() as u64
    }
}

impl<P: Protocol> Sim<'_, P> {
    /// The moments fact `fact` of node `n` (its clock named) is, if any anchored fault waits.
    pub(super) fn see_moments(&mut self, n: NodeId, fact: &Fact) {
        if self.anchors.faults.is_empty() && !self.anchors.watched {
            return;
        }
        let now = self.now;
        let (kind, at) = match *fact {
            Fact::IssuedOn { clock, until, .. } => {
                self.moment(n, Moment::Grant, now);
                (Moment::Expiry, self.clocks[n].reaches(clock, until, now))
            }
            Fact::RenewedOn { clock, until, .. } => {
                self.moment(n, Moment::Renewal, now);
                (Moment::Expiry, self.clocks[n].reaches(clock, until, now))
            }
            Fact::Holding { token, .. } => {
                if self.anchors.held[n] == Some(token) {
                    return;
                }
                self.anchors.held[n] = Some(token);
                (Moment::Acquire, now)
            }
            Fact::Committed { .. } => (Moment::Commit, now),
            Fact::WriteSent { .. } => (Moment::Write, now),
            _ => return,
        };
        self.moment(n, kind, at);
    }

    /// A moment of kind `kind` on node `n`, at `at` (an expiry's instant may lie ahead, or be
    /// `NEVER` on a stalled clock): places each fault whose `nth` this is.
    fn moment(&mut self, n: NodeId, kind: Moment, at: SimTime) {
        if self.anchors.watched && at != SimTime::NEVER {
            if let Some(o) = self.observer.as_mut() {
                o.moment(n, kind, at);
            }
        }
        for a in &mut self.anchors.faults {
            if a.moment != kind || a.node.is_some_and(|m| m != n) || a.seen >= a.nth {
                continue;
            }
            a.seen += 1;
            if a.seen < a.nth || at == SimTime::NEVER {
                continue;
            }
            let start = (at + a.delay).max(self.now);
            if start >= self.end {
                continue;
            }
            a.placed = true;
            match &a.what {
                Placed::Node(faults) => {
                    for &(node, fault) in faults {
                        self.feed.place(start, node, fault);
                    }
                }
                Placed::Net { fault, order } => {
                    let fault = fault.clone().moved_to(start);
                    self.oracle.faults_until(fault.window().end);
                    self.net.add(fault, *order);
                }
            }
        }
    }
}
