//! Tests of `ThreadStall`: what a stalled loop handles waits, in order, while the node's other
//! loop runs; with pauses, nested stalls and crashes, at instants derived by hand.
//!
//! A one-node protocol, `Loops`, sets three timers at start on its monotonic clock: 0 at 1 s
//! and 2 at 3 s for its renewal loop, 1 at 2 s for its worker. When one fires it sends a
//! message to itself carrying the timer's id, handled by the same loop. The trace's `Send`
//! events give the instants the timers fired, its `Deliver` events those the messages were
//! handled (the network takes 1 ms).

use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario, Thread};
use crate::strategy::{Beliefs, Cx, LeaseParams, NodeLogic, Out, Protocol, Request, TimerId};
use crate::time::LocalTime;
use crate::trace::{Observer, TraceEvent, TraceKind};

use super::timer_tests::Rang;

/// Even timers (and their messages) are the renewal loop's, odd ones the worker's.
fn loop_of(timer: TimerId) -> Thread {
    if timer.is_multiple_of(2) {
        Thread::Renewal
    } else {
        Thread::Worker
    }
}

#[derive(Clone)]
struct Loops;

impl NodeLogic for Loops {
    type Msg = Rang;
    type Disk = ();
    fn on_start(&mut self, _cx: &mut Cx, out: &mut Out<Rang>) {
        for (timer, secs) in [(0, 1), (1, 2), (2, 3)] {
            let at = LocalTime::from_ns(secs * 1_000_000_000);
            out.set_timer(timer, ClockKind::Monotonic, at);
        }
    }
    fn on_message(&mut self, _cx: &mut Cx, _from: NodeId, _msg: Rang, _out: &mut Out<Rang>) {}
    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Rang>) {
        out.send(cx.node, Rang(timer));
    }
    fn thread_of_timer(&self, timer: TimerId) -> Thread {
        loop_of(timer)
    }
    fn thread_of_message(&self, msg: &Rang) -> Thread {
        loop_of(msg.0)
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

impl Protocol for Loops {
    type Logic = Loops;
    fn describe(&self) -> String {
        "Loops".into()
    }
    fn renewal_loop(&self, _role: Role) -> Option<&'static str> {
        Some("the even timers")
    }
    fn check(&self, _scenario: &Scenario) -> Vec<String> {
        Vec::new()
    }
    fn node_logic(&self, _: NodeId, _: Role, _: &LeaseParams, _disk: ()) -> Loops {
        Loops
    }
}

/// What happened, in order: ("fired" or "handled", timer, instant in ms).
#[derive(Default)]
struct Seen(Vec<(&'static str, TimerId, i64)>);

impl Observer for Seen {
    fn event(&mut self, e: &TraceEvent) {
        let (what, token) = match e.kind {
            TraceKind::Send { token, .. } => ("fired", token),
            TraceKind::Deliver { token, .. } => ("handled", token),
            _ => return,
        };
        let timer = TimerId::try_from(token.expect("a timer id")).expect("a timer id");
        assert_eq!(e.t.ns() % 1_000_000, 0, "whole milliseconds here");
        self.0.push((what, timer, e.t.ns() / 1_000_000));
    }
}

/// Runs node `a` for 6 s with `faults` (RON), every message taking 1 ms.
fn seen(faults: &str) -> Vec<(&'static str, TimerId, i64)> {
    let s = Scenario::from_ron(&format!(
        r#"Scenario(
            duration: "6s",
            lease: (duration: "10s"),
            strategy: CachedBool,
            nodes: [(name: "a", role: Contender)],
            network: (delay: Fixed("1ms")),
            faults: [{faults}],
        )"#
    ))
    .expect("a scenario");
    let mut seen = Seen::default();
    super::build(&s, &Loops, Some(&mut seen)).run();
    seen.0
}

fn stall(thread: &str, at: &str, duration: &str) -> String {
    format!(r#"ThreadStall(node: "a", thread: {thread}, at: "{at}", duration: "{duration}"),"#)
}

#[test]
fn without_a_stall_each_timer_fires_when_due() {
    assert_eq!(
        seen(""),
        [
            ("fired", 0, 1000),
            ("handled", 0, 1001),
            ("fired", 1, 2000),
            ("handled", 1, 2001),
            ("fired", 2, 3000),
            ("handled", 2, 3001),
        ]
    );
}

#[test]
fn a_stalled_renewal_loop_holds_its_timers_until_it_ends_while_the_worker_runs() {
    // Renewal stalled over [0.5 s, 3.5 s): timers 0 (1 s) and 2 (3 s) wait and fire at 3.5 s in
    // the order they fell due; the worker's timer fires at 2 s as if nothing happened.
    assert_eq!(
        seen(&stall("Renewal", "500ms", "3s")),
        [
            ("fired", 1, 2000),
            ("handled", 1, 2001),
            ("fired", 0, 3500),
            ("fired", 2, 3500),
            ("handled", 0, 3501),
            ("handled", 2, 3501),
        ]
    );
}

#[test]
fn a_stalled_loop_holds_the_messages_it_handles() {
    // Renewal stalled over [1.0005 s, 2.5 s): timer 0 fired at 1 s, before it; its message
    // arrives at 1.001 s, inside, and is handled at 2.5 s. The worker's message is not held.
    assert_eq!(
        seen(&stall("Renewal", "1000500us", "1499500us")),
        [
            ("fired", 0, 1000),
            ("fired", 1, 2000),
            ("handled", 1, 2001),
            ("handled", 0, 2500),
            ("fired", 2, 3000),
            ("handled", 2, 3001),
        ]
    );
}

#[test]
fn a_stalled_worker_holds_only_the_workers_timer() {
    assert_eq!(
        seen(&stall("Worker", "1500ms", "1s")),
        [
            ("fired", 0, 1000),
            ("handled", 0, 1001),
            ("fired", 1, 2500),
            ("handled", 1, 2501),
            ("fired", 2, 3000),
            ("handled", 2, 3001),
        ]
    );
}

#[test]
fn nested_stalls_of_one_loop_hold_until_the_last_ends() {
    // [0.5 s, 1.5 s) and [1.2 s, 2.7 s): timer 0 (1 s) waits until 2.7 s, not 1.5 s.
    let faults = stall("Renewal", "500ms", "1s") + &stall("Renewal", "1200ms", "1500ms");
    assert_eq!(
        seen(&faults),
        [
            ("fired", 1, 2000),
            ("handled", 1, 2001),
            ("fired", 0, 2700),
            ("handled", 0, 2701),
            ("fired", 2, 3000),
            ("handled", 2, 3001),
        ]
    );
}

#[test]
fn a_stall_that_ends_during_a_pause_lets_its_events_go_first_when_the_pause_ends() {
    // Renewal stalled over [0.5 s, 3.5 s), the process paused over [2.5 s, 4 s). Timer 0 (1 s)
    // is held by the stall; timer 2 (3 s) falls due in the pause and waits for it. The stall
    // ends inside the pause: at 4 s timer 0 fires first (it fell due first), then timer 2.
    let faults =
        stall("Renewal", "500ms", "3s") + r#"Pause(node: "a", at: "2500ms", duration: "1500ms"),"#;
    assert_eq!(
        seen(&faults),
        [
            ("fired", 1, 2000),
            ("handled", 1, 2001),
            ("fired", 0, 4000),
            ("fired", 2, 4000),
            ("handled", 0, 4001),
            ("handled", 2, 4001),
        ]
    );
}

#[test]
fn a_pause_that_ends_during_a_stall_hands_the_stalled_loops_events_to_it() {
    // Paused over [0.5 s, 1.5 s), renewal stalled over [0.8 s, 3.5 s): timer 0 (1 s) waits for
    // the pause, which ends while the stall holds the renewal loop: it waits on until 3.5 s,
    // with timer 2 (3 s).
    let faults = r#"Pause(node: "a", at: "500ms", duration: "1s"),"#.to_string()
        + &stall("Renewal", "800ms", "2700ms");
    assert_eq!(
        seen(&faults),
        [
            ("fired", 1, 2000),
            ("handled", 1, 2001),
            ("fired", 0, 3500),
            ("fired", 2, 3500),
            ("handled", 0, 3501),
            ("handled", 2, 3501),
        ]
    );
}

#[test]
fn a_crash_loses_what_a_stalled_loop_held_and_its_stalls_end_with_it() {
    // Renewal stalled over [0.5 s, 3.5 s); crash at 2.5 s (timer 0 held, lost), restart at
    // 2.6 s: the new process sets its timers again, 0 and 1 already past due (they fire at
    // 2.6 s, the renewal loop no longer stalled), 2 at 3 s. The old stall's end at 3.5 s,
    // from the earlier life, changes nothing.
    let faults = stall("Renewal", "500ms", "3s")
        + r#"Crash(node: "a", at: "2500ms"), Restart(node: "a", at: "2600ms"),"#;
    assert_eq!(
        seen(&faults),
        [
            ("fired", 1, 2000),
            ("handled", 1, 2001),
            ("fired", 0, 2600),
            ("fired", 1, 2600),
            ("handled", 0, 2601),
            ("handled", 1, 2601),
            ("fired", 2, 3000),
            ("handled", 2, 3001),
        ]
    );
}
