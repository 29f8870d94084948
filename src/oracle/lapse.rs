//! Beliefs past a lease's lapse: how long a node went on believing under a lease after its
//! grantor's word on when it is free again had passed.
//!
//! A grantor that hands a lease to another node says, with the grant and each renewal, when it
//! is free again (its clock's reading, taken to true time at that clock's mapping as it ran
//! when it said so). From that instant on the grantor may hand the lease to someone else, so a
//! holder still believing under it is one grant away from an overlap: the further past, the
//! nearer. Nothing here is a verdict (an overlap is, and the oracle finds it exactly); explore's
//! guided search ranks runs by the longest such stretch, a gradient that goes on where the
//! closest call stops (a run with a holder paused past its lease has no handover, and its lease
//! lapsed before any renewal: every such run has the same closest call, whatever the pause).
//!
//! Only leases handed from one node to another count: a node that grants itself (a Raft or
//! LeaseGuard leader, whose term is its grant; a Redlock client's own deadline) gives its own
//! word, which its belief follows by construction, or a nominal end it does not renew.

use crate::msg::Token;
use crate::time::SimTime;

/// How many leases' ends are kept: the latest tokens, an older one forgotten first. A belief
/// under a token forgotten is not measured (every older token is superseded).
pub const LAPSES_KEPT: usize = 16;

/// The ends of the latest leases handed to another node, and the longest belief past one.
#[derive(Debug, Default)]
pub struct Lapses {
    /// (token, free again at), sorted by token.
    kept: Vec<(Token, SimTime)>,
    /// The longest a node believed under a lease past its end, in ns (0 when a belief ended
    /// exactly there); `None` while none did.
    overrun_ns: Option<i64>,
}

impl Lapses {
    /// Lease `token`, handed to another node, is free again at `free_at` (a grant, or a renewal
    /// of a lease handed out before; a renewal of a token not handed to another is ignored).
    pub fn note(&mut self, token: Token, free_at: SimTime, granted: bool) {
        match self.kept.binary_search_by_key(&token, |k| k.0) {
            Ok(i) => self.kept[i].1 = free_at,
            Err(i) if granted => {
                self.kept.insert(i, (token, free_at));
                if self.kept.len() > LAPSES_KEPT {
                    self.kept.remove(0);
                }
            }
            Err(_) => {}
        }
    }

    /// Whether a noted end of `token` would count: it was handed to another node and is kept,
    /// or is being handed now (`granted`).
    pub fn measures(&self, token: Token, granted: bool) -> bool {
        granted || self.kept.binary_search_by_key(&token, |k| k.0).is_ok()
    }

    /// A node believed under `token` from `from` (when its belief under this token began) until
    /// `end`, settled.
    pub fn settled(&mut self, token: Token, from: SimTime, end: SimTime) {
        if self.kept.is_empty() {
            return;
        }
        let Ok(i) = self.kept.binary_search_by_key(&token, |k| k.0) else {
            return;
        };
        let free_at = self.kept[i].1;
        if end >= free_at {
            let past_ns = end.ns() - free_at.max(from).ns();
            self.overrun_ns = Some(self.overrun_ns.map_or(past_ns, |m| m.max(past_ns)));
        }
    }

    /// See [`Lapses::settled`]: the longest belief past a lease's end so far.
    pub fn overrun_ns(&self) -> Option<i64> {
        self.overrun_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ns: i64) -> SimTime {
        SimTime::from_ns(ns)
    }

    #[test]
    fn a_belief_past_its_lease_end_counts_from_the_end_or_its_own_start() {
        let mut l = Lapses::default();
        l.note(7, t(100), true);
        l.settled(7, t(0), t(90));
        assert_eq!(l.overrun_ns(), None, "ended 10 ns before the lease did");
        l.settled(7, t(0), t(130));
        assert_eq!(l.overrun_ns(), Some(30), "130 - 100");
        // A belief that began after the end: measured from its own start, 160 - 120.
        l.settled(7, t(120), t(160));
        assert_eq!(l.overrun_ns(), Some(40));
        // A shorter one later does not lower the longest.
        l.settled(7, t(0), t(101));
        assert_eq!(l.overrun_ns(), Some(40));
        // Ending exactly at the lease's end is 0 past it, and noted.
        let mut m = Lapses::default();
        m.note(1, t(50), true);
        m.settled(1, t(0), t(50));
        assert_eq!(m.overrun_ns(), Some(0));
    }

    #[test]
    fn a_renewal_moves_the_end_and_unknown_tokens_are_not_measured() {
        let mut l = Lapses::default();
        l.note(3, t(100), true);
        l.note(3, t(200), false);
        l.settled(3, t(0), t(150));
        assert_eq!(l.overrun_ns(), None, "renewed to 200");
        // A renewal of a token never handed to another node (a self-grant) is ignored.
        l.note(4, t(10), false);
        l.settled(4, t(0), t(150));
        assert_eq!(l.overrun_ns(), None);
        // Beyond the kept tokens the oldest is forgotten: token 3 among 17.
        for k in 10..26 {
            l.note(k, t(1_000), true);
        }
        l.settled(3, t(0), t(500));
        assert_eq!(l.overrun_ns(), None, "token 3 was forgotten");
        l.settled(10, t(0), t(1_005));
        assert_eq!(l.overrun_ns(), Some(5));
    }
}
