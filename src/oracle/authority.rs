//! Beliefs kept per authority: one [`Oracle`] for write authority, and a second
//! for read authority when the protocol tracks it apart (Raft's lease reads, LeaseGuard's
//! inherited reads); the base protocol and Redlock grant both together, and keep one.
//!
//! Availability comes from write authority. Overlaps count for the verdict only for the
//! authorities the protocol declares [`Claim::Exclusive`]; a shared read authority's overlap is
//! reported apart, informational.

use super::{Authorities, Beliefs, Claim, Oracle, OracleReport};
use crate::clock::NodeClock;
use crate::msg::NodeId;
use crate::time::SimTime;

/// What is shown what the oracles settle ([`AuthorityOracles::report`]): the engine's trace
/// observer, which the oracle knows only as this.
pub trait Watcher {
    /// Node `node` believed in `authority` over `piece`, now settled.
    fn settled(&mut self, node: NodeId, authority: Authority, piece: &super::Piece);
    /// An overlap of an exclusive `authority`, now settled.
    fn overlapped(&mut self, authority: Authority, overlap: &super::Overlap);
}

/// Which authority a belief, an overlap or a handover concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Authority {
    Write,
    Read,
}

/// The oracles of one run, one per tracked authority.
pub struct AuthorityOracles {
    claims: Authorities,
    write: Oracle,
    read: Option<Oracle>,
    /// How many overlaps of each (write, read) an observer has been shown.
    reported: [usize; 2],
}

/// What the oracles found over a whole run.
#[derive(Clone, Debug)]
pub struct AuthorityReports {
    pub claims: Authorities,
    pub write: OracleReport,
    /// `None` when read authority goes with write authority.
    pub read: Option<OracleReport>,
}

impl AuthorityReports {
    /// The reports whose overlaps count: those of exclusive authorities.
    pub fn exclusive(&self) -> impl Iterator<Item = (Authority, &OracleReport)> {
        let write =
            (self.claims.write == Claim::Exclusive).then_some((Authority::Write, &self.write));
        let read = self
            .read
            .as_ref()
            .filter(|_| self.claims.read == Claim::Exclusive)
            .map(|r| (Authority::Read, r));
        write.into_iter().chain(read)
    }

    /// The read authority's report when the protocol shares it by design.
    pub fn shared_read(&self) -> Option<&OracleReport> {
        self.read
            .as_ref()
            .filter(|_| self.claims.read == Claim::Shared)
    }
}

impl AuthorityOracles {
    /// Oracles for `nodes` nodes under `claims`; with `export`, every tracked authority's
    /// settled pieces are kept for an observer ([`AuthorityOracles::report`]).
    pub fn new(nodes: usize, export: bool, claims: Authorities) -> AuthorityOracles {
        AuthorityOracles {
            claims,
            write: Oracle::new(nodes, export),
            read: (claims.read != Claim::WithWrite).then(|| Oracle::new(nodes, export)),
            reported: [0; 2],
        }
    }

    /// Shows `o` what the oracles have swept since the last call: each tracked authority's
    /// settled belief pieces, and the overlaps of the exclusive ones (an overlap of a shared
    /// authority is by design, and shown as beliefs only).
    pub fn report<W: Watcher + ?Sized>(&mut self, o: &mut W) {
        let oracles = [
            (Authority::Write, Some(&mut self.write), self.claims.write),
            (Authority::Read, self.read.as_mut(), self.claims.read),
        ];
        for ((authority, oracle, claim), reported) in oracles.into_iter().zip(&mut self.reported) {
            let Some(oracle) = oracle else { continue };
            oracle.drain_exported(|n, p| o.settled(n, authority, p));
            if claim == Claim::Exclusive {
                let overlaps = oracle.overlaps();
                for ov in &overlaps[*reported..] {
                    o.overlapped(authority, ov);
                }
                *reported = overlaps.len();
            }
        }
    }

    /// The write authority's oracle (what an observer is shown).
    pub fn write(&self) -> &Oracle {
        &self.write
    }

    pub fn write_mut(&mut self) -> &mut Oracle {
        &mut self.write
    }

    fn each(&mut self, mut f: impl FnMut(&mut Oracle)) {
        f(&mut self.write);
        if let Some(r) = self.read.as_mut() {
            f(r);
        }
    }

    /// What node `n` believes now, as last set.
    pub fn beliefs(&self, n: NodeId) -> Beliefs {
        let write = self.write.belief(n);
        Beliefs {
            write,
            read: self.read.as_ref().map_or(write, |r| r.belief(n)),
        }
    }

    /// See [`Oracle::settle`].
    pub fn settle(&mut self, n: NodeId, now: SimTime, clock: &NodeClock) {
        self.each(|o| o.settle(n, now, clock));
    }

    /// Node `n` believes `beliefs` from now on (settle first).
    pub fn set_beliefs(&mut self, n: NodeId, beliefs: Beliefs) {
        self.write.set_belief(n, beliefs.write);
        if let Some(r) = self.read.as_mut() {
            r.set_belief(n, beliefs.read);
        }
    }

    /// See [`Oracle::lease_ends`]: every node is settled at `now` first, unless the end is
    /// not measured (a renewal of a lease no node handed to another: a leader's own).
    pub fn lease_ends(
        &mut self,
        token: crate::msg::Token,
        free_at: SimTime,
        granted: bool,
        now: SimTime,
        clocks: &[NodeClock],
    ) {
        if !self.write.measures_lease(token, granted) {
            return;
        }
        for (n, clock) in clocks.iter().enumerate() {
            self.settle(n, now, clock);
        }
        self.each(|o| o.lease_ends(token, free_at, granted));
    }

    /// See [`Oracle::set_running`].
    pub fn set_running(&mut self, n: NodeId, running: bool) {
        self.each(|o| o.set_running(n, running));
    }

    /// See [`Oracle::maybe_flush`]: whether any oracle swept.
    pub fn maybe_flush(&mut self, now: SimTime, clocks: &[NodeClock]) -> bool {
        let read = self
            .read
            .as_mut()
            .is_some_and(|r| r.maybe_flush(now, clocks));
        self.write.maybe_flush(now, clocks) | read
    }

    /// See [`Oracle::faults_until`].
    pub fn faults_until(&mut self, end: SimTime) {
        self.each(|o| o.faults_until(end));
    }

    /// See [`Oracle::finish`].
    pub fn finish(&mut self, end: SimTime, clocks: &[NodeClock]) {
        self.each(|o| o.finish(end, clocks));
    }

    pub fn into_reports(self) -> AuthorityReports {
        AuthorityReports {
            claims: self.claims,
            write: self.write.into_report(),
            read: self.read.map(Oracle::into_report),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::{Belief, Beliefs};
    use crate::time::{DriftRate, LocalDur};

    fn t(ns: i64) -> SimTime {
        SimTime::from_ns(ns)
    }

    #[test]
    fn a_late_renewal_measures_what_was_believed_before_it_against_the_old_end() {
        // Node 0 hands lease 1 to node 1 at 0, free again at 100, and renews it only at 150, to
        // 300; node 1 believes under it from 0 to 250. Up to the renewal it believed 150 - 100
        // = 50 past the end it had then; after it, nothing past 300. Every node is settled at
        // the renewal: without that, node 1's belief would be settled at 250 only, against 300.
        let clocks = vec![NodeClock::new(DriftRate::ZERO, LocalDur::ZERO); 2];
        let mut o = AuthorityOracles::new(2, false, Authorities::ONE_LEASE);
        o.lease_ends(1, t(100), true, t(0), &clocks);
        o.settle(1, t(0), &clocks[1]);
        o.set_beliefs(1, Beliefs::both(Belief::Bool { token: 1 }));
        o.lease_ends(1, t(300), false, t(150), &clocks);
        o.settle(1, t(250), &clocks[1]);
        o.set_beliefs(1, Beliefs::NONE);
        o.finish(t(400), &clocks);
        assert_eq!(o.into_reports().write.overrun_ns, Some(50));
    }
}
