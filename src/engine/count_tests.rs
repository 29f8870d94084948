//! The engine's side of counting requests for an observer ([`Observer::as_counts`]): what it
//! counts and what it still tells one by one once an observer takes a kind as counts.

use crate::trace::tally::{Countable, Tally};
use crate::trace::Observer;

/// An observer that takes plain reads as counts at the first asking, and keeps what it is
/// told of reads.
#[derive(Default)]
struct Switches {
    /// The latest invocation told when it took counts.
    switched_after: Option<u64>,
    /// Reads invoked and not refused.
    invoked: std::collections::BTreeSet<u64>,
    answered: std::collections::BTreeSet<u64>,
    counted: Option<u64>,
}

impl Observer for Switches {
    fn event(&mut self, _e: &crate::trace::TraceEvent) {}
    fn wants_history(&self) -> bool {
        true
    }
    fn history(&mut self, e: &crate::trace::history::HistoryEvent) {
        use crate::trace::history::HistoryEvent as H;
        match *e {
            H::Invoked { op, .. } => _ = self.invoked.insert(op),
            H::ReadAnswered { op, .. } => _ = self.answered.insert(op),
            H::Failed { op, .. } => _ = self.invoked.remove(&op),
            _ => {}
        }
    }
    fn as_counts(&mut self, what: Countable) -> Option<Tally> {
        if what == Countable::Refusals {
            return None; // those before the grant reaches the holder, told
        }
        self.switched_after = self.invoked.last().copied();
        Some(Tally::new(2, 200_000_000))
    }
    fn counted(&mut self, what: Countable, tally: Tally) {
        assert_eq!(
            what,
            Countable::PlainReads,
            "refusals were never taken as counts"
        );
        self.counted = Some(tally.total());
    }
}

/// One holder serves 10,000 reads a second, each 5 ms in service (about fifty under way at
/// any instant), of a key never written. The engine first asks the observer after the first
/// read answered (told: nothing was counted yet), and it takes plain reads as counts then:
/// every read invoked by then is still answered to it one by one (its invocation was told),
/// every later one is counted (none is stale, a zombie, or the first to see the initial value,
/// which every client has seen from the start), and the two make every read served.
#[test]
fn reads_invoked_before_the_observer_took_counts_are_answered_one_by_one() {
    let s = crate::Scenario::from_ron(
        r#"Scenario(
            seed: 11,
            duration: "200ms",
            lease: (duration: "10s"),
            strategy: TwoSided(holder_margin: "10ms"),
            nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
            network: (delay: Fixed("1ms")),
            workload: (reads_per_second: 10000.0, service_time: "5ms"),
        )"#,
    )
    .unwrap();
    let mut o = Switches::default();
    let strategy = crate::strategy::from_spec(&s.strategy).unwrap();
    let outcome = crate::run_with("s", &s, strategy, Some(&mut o)).unwrap();
    let after = o.switched_after.expect("it took counts");
    let before: Vec<u64> = o.invoked.range(..=after).copied().collect();
    assert!(before.len() > 20, "{} reads under way", before.len());
    assert!(before.iter().all(|op| o.answered.contains(op)));
    assert!(o.answered.iter().all(|&op| op <= after));
    let served = outcome.summary.requests.reads_served;
    let counted = o.counted.expect("counted");
    assert!(counted > 1_000, "{counted}");
    assert_eq!(counted + o.answered.len() as u64, served);
}
