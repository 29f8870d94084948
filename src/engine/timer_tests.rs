//! Timing tests of the engine: the exact true instant a timer fires after the mapping of its
//! node's clocks changed (a wall-clock step, a drift change), derived by hand.
//!
//! A one-node protocol, `Alarm`, sets its timers at start and, when one fires, sends a message
//! to itself carrying the timer's id as its token; the trace's `Send` events give the instants.

use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::strategy::{
    Beliefs, Cx, LeaseParams, NodeLogic, Out, Protocol, ProtocolMessage, Request, TimerId,
};
use crate::time::LocalTime;
use crate::trace::{Observer, TraceEvent, TraceKind};

/// Timer `0` fired (the thread-stall tests' message too).
#[derive(Clone, Copy, Debug)]
pub(super) struct Rang(pub(super) TimerId);

impl ProtocolMessage for Rang {
    const KINDS: &'static [&'static str] = &["Rang"];
    fn kind(&self) -> usize {
        0
    }
    fn token(&self) -> Option<Token> {
        Some(Token::from(self.0))
    }
}

/// Sets each (timer, clock, local deadline) at start.
#[derive(Clone)]
struct Alarm(Vec<(TimerId, ClockKind, LocalTime)>);

impl NodeLogic for Alarm {
    type Msg = Rang;
    type Disk = ();
    fn on_start(&mut self, _cx: &mut Cx, out: &mut Out<Rang>) {
        for &(timer, clock, at) in &self.0 {
            out.set_timer(timer, clock, at);
        }
    }
    fn on_message(&mut self, _cx: &mut Cx, _from: NodeId, _msg: Rang, _out: &mut Out<Rang>) {}
    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Rang>) {
        out.send(cx.node, Rang(timer));
    }
    fn check(&self, _cx: &Cx, _request: Request) -> Option<Token> {
        None
    }
    fn on_request(&mut self, _: &mut Cx, _: Request, _: Token, _: &mut Out<Rang>) {}
    fn beliefs(&self) -> Beliefs {
        Beliefs::NONE
    }
    fn into_disk(self) {}
}

impl Protocol for Alarm {
    type Logic = Alarm;
    fn describe(&self) -> String {
        "Alarm".into()
    }
    fn check(&self, _scenario: &Scenario) -> Vec<String> {
        Vec::new()
    }
    fn node_logic(&self, _: NodeId, _: Role, _: &LeaseParams, _disk: ()) -> Alarm {
        self.clone()
    }
}

/// The instants (ns) each timer fired, and the node's monotonic and wall readings then.
#[derive(Default)]
struct Fired(Vec<(TimerId, i64, i64, i64)>);

impl Observer for Fired {
    fn event(&mut self, e: &TraceEvent) {
        if let TraceKind::Send {
            token: Some(timer), ..
        } = e.kind
        {
            let timer = TimerId::try_from(timer).expect("a timer id");
            self.0.push((timer, e.t.ns(), e.mono().ns(), e.wall().ns()));
        }
    }
}

/// Node `a` alone (drift `drift_ppm`, `faults` in RON) for 20 s.
fn one_node(drift_ppm: f64, faults: &str) -> Scenario {
    Scenario::from_ron(&format!(
        r#"Scenario(
            duration: "20s",
            lease: (duration: "10s"),
            strategy: CachedBool,
            nodes: [(name: "a", role: Contender, drift_ppm: {drift_ppm:?})],
            faults: [{faults}],
        )"#
    ))
    .expect("a scenario")
}

/// An alarm of `timers`, each (timer, clock, local deadline in ns).
fn alarm(timers: &[(TimerId, ClockKind, i64)]) -> Alarm {
    Alarm(
        timers
            .iter()
            .map(|&(t, c, at)| (t, c, LocalTime::from_ns(at)))
            .collect(),
    )
}

/// Runs node `a` (drift `drift_ppm`, `faults` in RON) for 20 s with `timers`.
fn fired(
    drift_ppm: f64,
    faults: &str,
    timers: &[(TimerId, ClockKind, i64)],
) -> Vec<(TimerId, i64, i64, i64)> {
    let mut seen = Fired::default();
    super::build(
        &one_node(drift_ppm, faults),
        &alarm(timers),
        Some(&mut seen),
    )
    .run();
    seen.0
}

const WALL: ClockKind = ClockKind::Wall;
const MONO: ClockKind = ClockKind::Monotonic;

#[test]
fn a_wall_step_moves_a_wall_timer_to_the_instant_the_stepped_clock_reaches_it() {
    // +100 ppm: the clocks read floor(1.0001 t). Timer 0 on the wall clock and timer 1 on the
    // monotonic clock, both at 10 s; unstepped, both fire at ceil(10e9 / 1.0001) =
    // ceil(9_999_000_099.990001) = 9_999_000_100 (1.0001 x that = 10_000_000_000.01).
    let plain = fired(
        100.0,
        "",
        &[(0, WALL, 10_000_000_000), (1, MONO, 10_000_000_000)],
    );
    assert_eq!(
        plain,
        [
            (0, 9_999_000_100, 10_000_000_000, 10_000_000_000),
            (1, 9_999_000_100, 10_000_000_000, 10_000_000_000)
        ]
    );
    // The wall clock stepped back 500 ms at 2 s: it reads 1.0001 t - 0.5e9, which reaches 10 s
    // at ceil(10.5e9 / 1.0001) = ceil(10_498_950_104.9895) = 10_498_950_105 (the monotonic
    // clock then reads floor(10_500_000_000.0105)). The monotonic timer does not move.
    let back = fired(
        100.0,
        r#"ClockStep(node: "a", at: "2s", by: "-500ms")"#,
        &[(0, WALL, 10_000_000_000), (1, MONO, 10_000_000_000)],
    );
    assert_eq!(
        back,
        [
            (1, 9_999_000_100, 10_000_000_000, 9_500_000_000),
            (0, 10_498_950_105, 10_500_000_000, 10_000_000_000)
        ]
    );
    // Stepped forward 3 s at 2 s: 1.0001 t + 3e9 reaches 10 s at ceil(7e9 / 1.0001) =
    // ceil(6_999_300_069.993) = 6_999_300_070.
    let forward = fired(
        100.0,
        r#"ClockStep(node: "a", at: "2s", by: "3s")"#,
        &[(0, WALL, 10_000_000_000)],
    );
    assert_eq!(forward, [(0, 6_999_300_070, 7_000_000_000, 10_000_000_000)]);
    // A step past the deadline fires the timer at the step's instant: +9 s at 2 s reads
    // floor(2_000_200_000) + 9e9 >= 10 s at once.
    let past = fired(
        100.0,
        r#"ClockStep(node: "a", at: "2s", by: "9s")"#,
        &[(0, WALL, 10_000_000_000)],
    );
    assert_eq!(past, [(0, 2_000_000_000, 2_000_200_000, 11_000_200_000)]);
}

#[test]
fn a_drift_change_moves_every_timer_to_the_instant_the_new_rate_reaches_it() {
    // +100 ppm until 4 s, when the clock reads 4e9 x 1.0001 = 4_000_400_000 exactly; then
    // -200 ppm: it reads 4_000_400_000 + floor((t - 4e9) x 0.9998). 10 s needs
    // (t - 4e9) x 0.9998 >= 5_999_600_000, t - 4e9 >= 6_000_800_160.032 -> 6_000_800_161
    // (x 0.9998 = 5_999_600_000.9678), so both timers fire at 10_000_800_161, not at the
    // 9_999_000_100 of the old rate.
    let changed = fired(
        100.0,
        r#"DriftChange(node: "a", at: "4s", drift_ppm: -200.0)"#,
        &[(0, WALL, 10_000_000_000), (1, MONO, 10_000_000_000)],
    );
    assert_eq!(
        changed,
        [
            (0, 10_000_800_161, 10_000_000_000, 10_000_000_000),
            (1, 10_000_800_161, 10_000_000_000, 10_000_000_000)
        ]
    );
    // Faster instead, +1000 ppm from 4 s: 4_000_400_000 + floor((t - 4e9) x 1.001) >= 10e9
    // needs t - 4e9 >= 5_999_600_000 / 1.001 = 5_993_606_393.606 -> 5_993_606_394 (x 1.001 =
    // 5_999_600_000.394): 9_993_606_394.
    let faster = fired(
        100.0,
        r#"DriftChange(node: "a", at: "4s", drift_ppm: 1000.0)"#,
        &[(1, MONO, 10_000_000_000)],
    );
    assert_eq!(faster, [(1, 9_993_606_394, 10_000_000_000, 10_000_000_000)]);
}

/// Re-arms timer 0 ten seconds ahead on every tick of timer 1 (every millisecond until 5 s),
/// as a lease holder re-arms its expiry on every renewal.
#[derive(Clone)]
struct Rearm;

const MS: i64 = 1_000_000;

impl NodeLogic for Rearm {
    type Msg = Rang;
    type Disk = ();
    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Rang>) {
        out.set_timer(
            0,
            MONO,
            cx.mono + crate::time::LocalDur::from_ns(10_000 * MS),
        );
        out.set_timer(1, MONO, cx.mono + crate::time::LocalDur::from_ns(MS));
    }
    fn on_message(&mut self, _cx: &mut Cx, _from: NodeId, _msg: Rang, _out: &mut Out<Rang>) {}
    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Rang>) {
        if timer == 0 {
            out.send(cx.node, Rang(0));
            return;
        }
        out.set_timer(
            0,
            MONO,
            cx.mono + crate::time::LocalDur::from_ns(10_000 * MS),
        );
        if cx.mono.ns() < 5_000 * MS {
            out.set_timer(1, MONO, cx.mono + crate::time::LocalDur::from_ns(MS));
        }
    }
    fn check(&self, _cx: &Cx, _request: Request) -> Option<Token> {
        None
    }
    fn on_request(&mut self, _: &mut Cx, _: Request, _: Token, _: &mut Out<Rang>) {}
    fn beliefs(&self) -> Beliefs {
        Beliefs::NONE
    }
    fn into_disk(self) {}
}

impl Protocol for Rearm {
    type Logic = Rearm;
    fn describe(&self) -> String {
        "Rearm".into()
    }
    fn check(&self, _scenario: &Scenario) -> Vec<String> {
        Vec::new()
    }
    fn node_logic(&self, _: NodeId, _: Role, _: &LeaseParams, _disk: ()) -> Rearm {
        Rearm
    }
}

#[test]
fn a_timer_re_armed_later_holds_one_queue_entry_and_fires_at_its_last_deadline() {
    let s = Scenario::from_ron(
        r#"Scenario(
            duration: "20s",
            lease: (duration: "10s"),
            strategy: CachedBool,
            nodes: [(name: "a", role: Contender)],
            network: (delay: Fixed("1ms")),
        )"#,
    )
    .expect("a scenario");
    let mut seen = Fired::default();
    let result = super::build(&s, &Rearm, Some(&mut seen)).run();
    // The node starts at 0 (1 event). Timer 1 ticks at 1, 2, ..., 5000 ms (5000) and last re-arms timer 0 at 5 s, to
    // 15 s: it fires then. Timer 0's one entry, queued at 0 for 10 s, comes out at 10 s and
    // carries the timer to 15 s (2 events); the message it sends arrives at 15.001 s (1). Had
    // every re-arm queued an entry of its own, 5000 stale ones would come out too.
    assert_eq!(seen.0, [(0, 15_000 * MS, 15_000 * MS, 15_000 * MS)]);
    assert_eq!(result.stats.events, 1 + 5000 + 2 + 1);
}

/// The events in flight are counted once each event is out of the queue: with timers at 1, 2
/// and 3 s, each sending a message to its own node, the run is the start (a fault: nothing
/// queued yet, 0), timer 0 (timers 1 and 2 wait: 2), its message (2), timer 1 (1), its message
/// (1), timer 2 (0) and its message (0): 7 events, 6 in flight in all.
#[test]
fn events_in_flight_are_counted_after_each_leaves_the_queue() {
    let timers = [
        (0, MONO, 1_000_000_000),
        (1, MONO, 2_000_000_000),
        (2, MONO, 3_000_000_000),
    ];
    let r = super::build(&one_node(0.0, ""), &alarm(&timers), None).run();
    assert_eq!((r.stats.events, r.stats.in_flight_sum), (7, 6));
}
