//! The requests' lane ([`Sim::run_requests`](super::Sim)) against the run's one loop: every
//! bundled scenario, cut at an event bound that falls inside the lane's stretches, tells an
//! observer the same things in the same order either way and ends with the same result.

use super::run::{LANE_EVENTS, ONE_LOOP};
use crate::oracle::authority::Authority;
use crate::oracle::{Overlap, Piece};
use crate::trace::history::HistoryEvent;
use crate::trace::{Observer, TraceEvent};
use crate::Scenario;
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hasher};
use std::path::Path;

/// Everything an observer is told, in order: each call's `Debug` text, hashed as it comes.
#[derive(Default)]
struct Told {
    hash: DefaultHasher,
    calls: u64,
}

impl std::fmt::Write for Told {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.hash.write(s.as_bytes());
        Ok(())
    }
}

impl Told {
    fn tell(&mut self, args: std::fmt::Arguments) {
        self.calls += 1;
        self.write_fmt(args).expect("hashing never fails");
        self.hash.write_u8(0);
    }
}

impl Observer for Told {
    fn event(&mut self, e: &TraceEvent) {
        self.tell(format_args!("event {e:?}"));
    }
    fn belief(&mut self, node: usize, authority: Authority, piece: &Piece) {
        self.tell(format_args!("belief {node} {authority:?} {piece:?}"));
    }
    fn overlap(&mut self, authority: Authority, o: &Overlap) {
        self.tell(format_args!("overlap {authority:?} {o:?}"));
    }
    fn history(&mut self, e: &HistoryEvent) {
        self.tell(format_args!("history {e:?}"));
    }
    fn wants_history(&self) -> bool {
        true
    }
    fn moment(&mut self, node: usize, kind: crate::scenario::Moment, at: crate::time::SimTime) {
        self.tell(format_args!("moment {node} {kind:?} {at:?}"));
    }
    fn wants_moments(&self) -> bool {
        true
    }
    fn finish(&mut self, end: crate::time::SimTime) {
        self.tell(format_args!("finish {end:?}"));
    }
}

/// How a run ended and what it told its observer.
#[derive(Debug, PartialEq)]
struct Ran {
    /// The run's result as text: its counters (events, in flight, truncated and the rest), the
    /// oracle's reports, the harm, the failovers and the clocks.
    result: String,
    events: u64,
    truncated: bool,
    /// The hash of the calls' text, and how many calls.
    told: (u64, u64),
}

/// A run of `s`, through the one loop alone if `one_loop`, and how many events the lane took.
fn run(s: &Scenario, one_loop: bool) -> (Ran, u64) {
    ONE_LOOP.set(one_loop);
    LANE_EVENTS.set(0);
    let strategy = crate::strategy::from_spec(&s.strategy).expect("a built-in strategy");
    let mut t = Told::default();
    let r = super::strategy::simulate(&*strategy, s, Some(&mut t));
    ONE_LOOP.set(false);
    let ran = Ran {
        result: format!(
            "{:?}",
            (
                &r.stats,
                &r.oracle,
                &r.harm,
                &r.failovers,
                r.duration,
                &r.drifts,
                &r.outside_interval_ns
            )
        ),
        events: r.stats.events,
        truncated: r.stats.truncated,
        told: (t.hash.finish(), t.calls),
    };
    (ran, LANE_EVENTS.get())
}

/// Every bundled scenario run whole, then cut at a third of its events (inside a stretch of
/// the lane, as a rule): the same calls and result (events in flight among its counters) with the lane as through
/// the one loop alone. The lane takes most events of every run with a steady workload, and
/// none with the loop alone.
#[test]
fn the_lane_keeps_the_order_of_the_one_loop() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the bundled scenarios")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect();
    files.sort();
    assert!(files.len() >= 100, "{} scenarios", files.len());
    let (mut cut, mut mostly_lane) = (0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        let mut s = Scenario::from_ron(&text).expect("a bundled scenario parses");
        let name = f.display();
        let (whole, in_lane) = run(&s, false);
        let (alone, none) = run(&s, true);
        assert_eq!(whole, alone, "{name}: whole");
        assert_eq!(none, 0, "{name}: the loop alone takes no event in the lane");
        mostly_lane += usize::from(2 * in_lane > whole.events);
        s.limits.max_events = s.limits.max_events.min(whole.events / 3);
        let (part, _) = run(&s, false);
        let (alone, _) = run(&s, true);
        assert_eq!(part, alone, "{name}: cut at a third");
        cut += usize::from(part.truncated);
    }
    assert!(cut >= 140, "{cut} runs cut at the bound");
    assert!(mostly_lane >= 50, "{mostly_lane} runs mostly in the lane");
}

/// `Scribe`: one node that holds token 1 from its start and sends every write it is handed
/// (reporting it sent, with no resource to reach: nothing is queued).
#[derive(Clone)]
struct Scribe;

/// No message is ever sent.
#[derive(Clone, Debug)]
struct Quiet;

impl crate::strategy::ProtocolMessage for Quiet {
    const KINDS: &'static [&'static str] = &["Quiet"];
    fn kind(&self) -> usize {
        0
    }
}

mod scribe {
    use super::{Quiet, Scribe};
    use crate::clock::ClockKind;
    use crate::msg::{NodeId, Token};
    use crate::scenario::{Role, Scenario};
    use crate::strategy::{
        Belief, Beliefs, Cx, Fact, LeaseParams, NodeLogic, Out, Protocol, Request, TimerId,
    };
    use crate::time::LocalDur;

    impl NodeLogic for Scribe {
        type Msg = Quiet;
        type Disk = ();
        fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Quiet>) {
            out.report(Fact::Holding { token: 1 });
            out.set_timer(0, ClockKind::Monotonic, cx.mono + LocalDur::from_secs(10));
        }
        fn on_message(&mut self, _: &mut Cx, _: NodeId, _: Quiet, _: &mut Out<Quiet>) {}
        fn on_timer(&mut self, cx: &mut Cx, _: TimerId, out: &mut Out<Quiet>) {
            out.set_timer(0, ClockKind::Monotonic, cx.mono + LocalDur::from_secs(10));
        }
        fn check(&self, _: &Cx, _: Request) -> Option<Token> {
            Some(1)
        }
        fn on_request(&mut self, _: &mut Cx, _: Request, token: Token, out: &mut Out<Quiet>) {
            out.report(Fact::WriteSent { token });
        }
        fn beliefs(&self) -> Beliefs {
            Beliefs::both(Belief::Bool { token: 1 })
        }
        fn into_disk(self) {}
    }

    impl Protocol for Scribe {
        type Logic = Scribe;
        fn describe(&self) -> String {
            "Scribe".into()
        }
        fn check(&self, _: &Scenario) -> Vec<String> {
            Vec::new()
        }
        fn node_logic(&self, _: NodeId, _: Role, _: &LeaseParams, _: ()) -> Scribe {
            Scribe
        }
    }
}

/// The trace's events, each as its true time and its kind's text.
#[derive(Default)]
struct Events(Vec<(i64, String)>);

impl Observer for Events {
    fn event(&mut self, e: &TraceEvent) {
        self.0.push((e.t.ns(), format!("{:?}", e.kind)));
    }
}

/// A fault placed at a moment seen in the lane, with nothing queued by the event that saw it:
/// writes arrive 1,000 times a second and are sent as they arrive (no service time), and the
/// fifth write sent pauses its node at once. The pause begins at the fifth write's instant,
/// before the next arrival, as through the one loop; the arrival after it waits out the pause.
#[test]
fn a_fault_placed_in_the_lane_comes_before_its_next_event() {
    let s = Scenario::from_ron(
        r#"Scenario(
            seed: 5,
            duration: "50ms",
            lease: (duration: "10s"),
            strategy: CachedBool,
            nodes: [(name: "a", role: Contender)],
            workload: (writes_per_second: 1000.0),
            faults: [Pause(node: "a", at: After(moment: Write, nth: 5), duration: "10ms", kind: Gc)],
        )"#,
    )
    .expect("a scenario");
    let trace = |one_loop: bool| {
        ONE_LOOP.set(one_loop);
        LANE_EVENTS.set(0);
        let mut events = Events::default();
        super::build(&s, &Scribe, Some(&mut events)).run();
        ONE_LOOP.set(false);
        (events.0, LANE_EVENTS.get())
    };
    let (lane, in_lane) = trace(false);
    let (alone, _) = trace(true);
    assert_eq!(lane, alone);
    assert!(
        in_lane >= 4,
        "the first writes arrive in the lane ({in_lane})"
    );
    let sent: Vec<i64> = lane
        .iter()
        .filter(|e| e.1.starts_with("WriteSent"))
        .map(|e| e.0)
        .collect();
    let pause = lane
        .iter()
        .position(|e| e.1.starts_with("PauseBegin"))
        .expect("the pause begins");
    assert_eq!(lane[pause].0, sent[4], "at the fifth write");
    assert!(
        lane[..pause]
            .iter()
            .filter(|e| e.1.starts_with("WriteSent"))
            .count()
            == 5
    );
}

/// A run expects the arrivals of the streams its nodes have: each contender's reads and writes
/// at the workload's rates, over the whole run (the grantor takes no requests, so it has none).
/// Two contenders, 6 s: with 1,000 reads and 10 writes a second, 2 x 1,010 x 6 = 12,120; with
/// reads alone, 2 x 1,000 x 6 = 12,000.
#[test]
fn a_run_expects_the_arrivals_of_its_contenders_streams() {
    for (writes, expected) in [("10.0", 12_120.0), ("0.0", 12_000.0)] {
        let s = Scenario::from_ron(&format!(
            r#"Scenario(
                seed: 1,
                duration: "6s",
                lease: (duration: "10s"),
                strategy: TwoSided(holder_margin: "10ms"),
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "a", role: Contender),
                    (name: "b", role: Contender),
                ],
                workload: (reads_per_second: 1000.0, writes_per_second: {writes}),
            )"#
        ))
        .expect("a scenario");
        let sim = super::build(&s, &Scribe, None);
        let arrivals = super::build::expected_arrivals(&s, &sim.nodes);
        assert_eq!(arrivals, expected, "{writes} writes a second");
    }
}
