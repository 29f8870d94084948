//! What `report.html` draws, checked against the oracle's own figures on every bundled
//! scenario: the handovers it bands give the run's least slack, and each stale read it shows
//! names the write it missed as the full client history says.

use leasesim::msg::INITIAL;
use leasesim::outcome::Outcome;
use leasesim::report::html::run_data::counted_handovers;
use leasesim::scenario::library;
use leasesim::trace::client_log::ClientLog;
use leasesim::trace::history::{History, Operation};
use leasesim::trace::timeline::{Recorder, Timeline};
use leasesim::trace::Tee;
use leasesim::Scenario;
use std::collections::BTreeMap;

/// A bundled scenario run with the chart's recorder, the page's client log and the whole
/// history.
fn recorded(name: &str) -> (Outcome, Timeline, ClientLog, History) {
    let s = Scenario::from_ron(library::text(name).unwrap()).unwrap();
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let mut obs = Tee(
        Recorder::for_scenario(&s),
        Tee(ClientLog::new(), History::new()),
    );
    let o = leasesim::run_with(name, &s, strategy, Some(&mut obs)).unwrap();
    let Tee(rec, Tee(log, history)) = obs;
    (o, rec.into_timeline(), log, history)
}

/// The handovers drawn from the kept belief pieces, of the authorities whose overlaps count,
/// give exactly the oracle's least slack, which it finds in its sweep without keeping a
/// stretch: two computations of one definition.
#[test]
fn the_handovers_drawn_give_the_least_slack_of_every_bundled_scenario() {
    let mut compared = 0;
    for name in library::names() {
        let (outcome, tl, _, _) = recorded(name);
        if tl.spans_cut_at.is_some() {
            continue;
        }
        let counted = counted_handovers(&tl, outcome.authorities);
        let least = counted.iter().map(|(h, _)| h.slack_ns()).min();
        assert_eq!(least, outcome.summary.min_slack_ns, "{name}");
        compared += 1;
    }
    // Every bundled scenario keeps all its pieces but the soak runs.
    assert!(compared > 100, "only {compared} compared");
}

/// A write's first response in the whole history: its acknowledgement, or the first read of
/// it that was not stale, whichever came first (in ticks), with its time.
fn first_seen(ops: &[Operation]) -> BTreeMap<u64, (u64, i64)> {
    let mut seen: BTreeMap<u64, (u64, i64)> = BTreeMap::new();
    let mut note = |w: u64, tick: u64, at: i64| {
        let e = seen.entry(w).or_insert((tick, at));
        if tick < e.0 {
            *e = (tick, at);
        }
    };
    for o in ops.iter().filter(|o| !o.failed) {
        if let (Some(tick), Some(at)) = (o.return_tick, o.return_ns) {
            match (o.write, o.value) {
                (true, _) => note(o.op, tick, at),
                (false, Some(v)) if !o.stale && v != INITIAL => note(v, tick, at),
                _ => {}
            }
        }
    }
    seen
}

/// Every stale read the page shows names a missed write, and it is the one the whole history
/// gives: of the writes after the one read in its key's order, the first a client saw, seen
/// before the read was invoked. The page keeps every stale read of the scenarios that have
/// fewer operations than it keeps.
#[test]
fn each_stale_read_shown_names_the_write_it_missed() {
    let mut checked = 0;
    for name in library::names() {
        let (outcome, _, log, history) = recorded(name);
        let summary = &outcome.summary;
        if summary.stale_reads == 0 {
            continue;
        }
        let ops = history.operations();
        let seen = first_seen(ops);
        let by_op: BTreeMap<u64, &Operation> = ops.iter().map(|o| (o.op, o)).collect();
        let shown: Vec<_> = log.operations().iter().filter(|o| o.stale).collect();
        if log.invoked() <= log.operations().len() as u64 {
            assert_eq!(shown.len() as u64, summary.stale_reads, "{name}");
        }
        for r in shown {
            let full = by_op[&r.op];
            let read_order = match r.value.unwrap() {
                INITIAL => None,
                v => by_op[&v].order,
            };
            let expected = ops
                .iter()
                .filter(|w| w.write && w.key == full.key)
                .filter(|w| w.order.is_some() && w.order > read_order)
                .filter_map(|w| seen.get(&w.op).map(|s| (s.0, w.op, s.1)))
                .filter(|&(tick, _, _)| tick < r.op)
                .min();
            let missed = r.missed.expect("a stale read shown names its missed write");
            let (_, id, at) = expected.expect("the history has a write the read missed");
            assert_eq!(
                (missed.op, missed.seen.ns()),
                (id, at),
                "{name}: read {}",
                r.op
            );
            checked += 1;
        }
    }
    assert!(checked > 10, "only {checked} stale reads checked");
}
