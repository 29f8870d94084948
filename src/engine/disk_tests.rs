//! Tests of the disk model: a call that persists and waits sends once its write is durable and
//! holds its loop meanwhile; a background write holds nothing; fsyncs go one at a time, the
//! writes that come during one sharing the next; a `DiskStall` stops the fsync under way; a
//! crash keeps what was durable. Every instant derived by hand.
//!
//! A one-node protocol, `Journal`, counts the timers that fired (its disk keeps the count). At
//! its first start it arms timer 0 at 1 s and timer 2 at 1.2 s for its renewal loop, timer 1
//! at 1.1 s for its worker. A timer that fires adds one to the count, writes it (timers 0 and
//! 1 wait for the write, timer 2 writes in the background, or, in a quiet journal, not at all)
//! and sends the node a message naming the timer. Restarted, it sends one message naming 50
//! plus the count its disk kept.

use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario, Thread};
use crate::strategy::{Beliefs, Cx, LeaseParams, NodeLogic, Out, Protocol, Request, TimerId};
use crate::time::LocalTime;
use crate::trace::{Observer, TraceEvent, TraceKind};

use super::timer_tests::Rang;

struct Journal {
    count: u8,
    quiet: bool,
}

impl NodeLogic for Journal {
    type Msg = Rang;
    type Disk = u8;
    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Rang>) {
        if cx.restarted {
            out.send(cx.node, Rang(50 + self.count));
            return;
        }
        for (timer, ms) in [(0, 1000), (1, 1100), (2, 1200)] {
            let at = LocalTime::from_ns(ms * 1_000_000);
            out.set_timer(timer, ClockKind::Monotonic, at);
        }
    }
    fn on_message(&mut self, _cx: &mut Cx, _from: NodeId, _msg: Rang, _out: &mut Out<Rang>) {}
    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Rang>) {
        self.count += 1;
        if timer == 2 {
            if !self.quiet {
                out.persist_in_background();
            }
        } else {
            out.persist();
        }
        out.send(cx.node, Rang(timer));
    }
    fn thread_of_timer(&self, timer: TimerId) -> Thread {
        if timer.is_multiple_of(2) {
            Thread::Renewal
        } else {
            Thread::Worker
        }
    }
    fn check(&self, _cx: &Cx, _request: Request) -> Option<Token> {
        None
    }
    fn on_request(&mut self, _: &mut Cx, _: Request, _: Token, _: &mut Out<Rang>) {}
    fn beliefs(&self) -> Beliefs {
        Beliefs::NONE
    }
    fn into_disk(self) -> u8 {
        self.count
    }
    fn disk_image(&self) -> Option<u8> {
        Some(self.count)
    }
}

struct JournalProtocol {
    quiet: bool,
}

impl Protocol for JournalProtocol {
    type Logic = Journal;
    fn describe(&self) -> String {
        "Journal".into()
    }
    fn renewal_loop(&self, _role: Role) -> Option<&'static str> {
        Some("the even timers")
    }
    fn persists(&self, _role: Role) -> Option<&'static str> {
        Some("its count")
    }
    fn check(&self, _scenario: &Scenario) -> Vec<String> {
        Vec::new()
    }
    fn node_logic(&self, _: NodeId, _: Role, _: &LeaseParams, count: u8) -> Journal {
        Journal {
            count,
            quiet: self.quiet,
        }
    }
}

/// What happened, in order: ("sent", message, ms) for each message as it leaves, ("durable",
/// writes, ms) for each fsync as it finishes, ("stall", until ms, ms) for each disk stall as
/// it begins.
#[derive(Default)]
struct Seen(Vec<(&'static str, u64, i64)>);

impl Observer for Seen {
    fn event(&mut self, e: &TraceEvent) {
        let (what, n) = match e.kind {
            TraceKind::Send { token, .. } => ("sent", token.expect("a timer id")),
            TraceKind::Durable { writes } => ("durable", u64::from(writes)),
            TraceKind::DiskStallBegin { until } => ("stall", (until.ns() / 1_000_000) as u64),
            _ => return,
        };
        assert_eq!(e.t.ns() % 1_000_000, 0, "whole milliseconds here");
        self.0.push((what, n, e.t.ns() / 1_000_000));
    }
}

/// Runs node `a` for 3 s with a disk whose fsync takes `fsync` (none: no disk) and `faults`.
fn seen(fsync: Option<&str>, faults: &str) -> Vec<(&'static str, u64, i64)> {
    journal(false, fsync, faults)
}

/// As [`seen`], the journal quiet or not.
fn journal(quiet: bool, fsync: Option<&str>, faults: &str) -> Vec<(&'static str, u64, i64)> {
    let disk = fsync.map_or(String::new(), |f| {
        format!(r#", disk: (fsync: Fixed("{f}"))"#)
    });
    let s = Scenario::from_ron(&format!(
        r#"Scenario(
            duration: "3s",
            lease: (duration: "10s"),
            strategy: CachedBool,
            nodes: [(name: "a", role: Contender{disk})],
            network: (delay: Fixed("1ms")),
            faults: [{faults}],
        )"#
    ))
    .expect("a scenario");
    let mut seen = Seen::default();
    super::build(&s, &JournalProtocol { quiet }, Some(&mut seen)).run();
    seen.0
}

#[test]
fn without_a_disk_every_write_is_durable_at_once() {
    assert_eq!(
        seen(None, ""),
        [("sent", 0, 1000), ("sent", 1, 1100), ("sent", 2, 1200)]
    );
}

#[test]
fn a_call_that_waits_sends_once_its_write_is_durable_and_a_background_one_at_once() {
    // fsync 5 ms: timer 0's message leaves at 1.005 s, timer 1's at 1.105 s; timer 2 writes in
    // the background, so its message leaves at 1.2 s and its fsync finishes at 1.205 s.
    assert_eq!(
        seen(Some("5ms"), ""),
        [
            ("durable", 1, 1005),
            ("sent", 0, 1005),
            ("durable", 1, 1105),
            ("sent", 1, 1105),
            ("sent", 2, 1200),
            ("durable", 1, 1205),
        ]
    );
}

#[test]
fn fsyncs_go_one_at_a_time_in_order() {
    // fsync 150 ms. Timer 0 (1 s) writes: durable at 1.15 s. Timer 1 (1.1 s, the worker)
    // writes during it: the next fsync, 1.15 s to 1.3 s. Timer 2 (1.2 s) writes in the
    // background during that one: its message leaves at once, its write is the fsync after,
    // 1.3 s to 1.45 s.
    assert_eq!(
        seen(Some("150ms"), ""),
        [
            ("durable", 1, 1150),
            ("sent", 0, 1150),
            ("sent", 2, 1200),
            ("durable", 1, 1300),
            ("sent", 1, 1300),
            ("durable", 1, 1450),
        ]
    );
}

#[test]
fn a_disk_stall_stops_the_fsync_under_way_and_a_waiting_loop_holds_its_timers() {
    // fsync 5 ms, disk stalled over [1.002 s, 1.502 s). Timer 0's fsync began at 1 s, 2 ms
    // done: its other 3 ms run from 1.502 s, durable at 1.505 s. Timer 1's write (1.1 s) is the
    // next fsync: 1.505 s to 1.51 s. Timer 2 (1.2 s) waits with its loop until 1.505 s; its
    // background write is the fsync after: 1.51 s to 1.515 s.
    let stall = r#"DiskStall(node: "a", at: "1002ms", duration: "500ms")"#;
    assert_eq!(
        seen(Some("5ms"), stall),
        [
            ("stall", 1502, 1002),
            ("durable", 1, 1505),
            ("sent", 0, 1505),
            ("sent", 2, 1505),
            ("durable", 1, 1510),
            ("sent", 1, 1510),
            ("durable", 1, 1515),
        ]
    );
}

#[test]
fn overlapping_disk_stalls_stop_the_fsync_until_the_last_ends() {
    // fsync 5 ms, stalls over [1.002 s, 1.202 s) and [1.102 s, 1.402 s). Timer 0's fsync (from
    // 1 s) has 3 ms left at 1.002 s; the end of the first stall changes nothing, the end of the
    // second lets it finish at 1.405 s. Then as above, 100 ms later: timer 1's write 1.405 s to
    // 1.41 s, timer 2 (held with its loop) fires at 1.405 s, its write 1.41 s to 1.415 s.
    let stalls = r#"DiskStall(node: "a", at: "1002ms", duration: "200ms"),
        DiskStall(node: "a", at: "1102ms", duration: "300ms")"#;
    assert_eq!(
        seen(Some("5ms"), stalls),
        [
            ("stall", 1202, 1002),
            ("stall", 1402, 1102),
            ("durable", 1, 1405),
            ("sent", 0, 1405),
            ("sent", 2, 1405),
            ("durable", 1, 1410),
            ("sent", 1, 1410),
            ("durable", 1, 1415),
        ]
    );
}

#[test]
fn a_crash_keeps_what_was_durable_and_loses_the_rest() {
    // fsync 5 ms; a crash at 1.3 s and a restart at 1.4 s. With a working disk the three
    // writes were durable by then (1.005 s, 1.105 s, 1.205 s): the restart reads 3, message 53.
    let crash = r#"Crash(node: "a", at: "1300ms"), Restart(node: "a", at: "1400ms")"#;
    let run = seen(Some("5ms"), crash);
    assert_eq!(run.last(), Some(&("sent", 53, 1400)));
    // The disk stalled from 0.5 s to 2 s: nothing was durable when it crashed, though the node
    // had counted 2 (timer 2 waited for timer 0's write with its loop): the restart reads 0.
    let stalled = format!(r#"DiskStall(node: "a", at: "500ms", duration: "1500ms"), {crash}"#);
    assert_eq!(
        seen(Some("5ms"), &stalled),
        [("stall", 2000, 500), ("sent", 50, 1400)]
    );
}

#[test]
fn a_loop_released_from_a_stall_handles_all_it_held_and_its_writes_share_one_fsync() {
    // fsync 5 ms; the renewal loop stalled over [0.5 s, 1.5 s) holds timers 0 (1 s) and 2
    // (1.2 s). At 1.5 s it handles both, as a loop that persists a batch of work at once
    // (raft-rs's Ready): their two writes are one fsync, 1.5 s to 1.505 s. Timer 2 writes in
    // the background, but its loop already waits for timer 0's write: its message leaves with
    // timer 0's once the fsync is done. The worker's timer 1 fires at 1.1 s as if nothing
    // happened.
    let stall = r#"ThreadStall(node: "a", thread: Renewal, at: "500ms", duration: "1s")"#;
    assert_eq!(
        seen(Some("5ms"), stall),
        [
            ("durable", 1, 1105),
            ("sent", 1, 1105),
            ("durable", 2, 1505),
            ("sent", 0, 1505),
            ("sent", 2, 1505),
        ]
    );
}

#[test]
fn a_call_that_writes_nothing_sends_after_the_writes_its_loop_waits_for() {
    // As above, timer 2 writing nothing: its message still leaves only once timer 0's write,
    // made before it in the same batch, is durable (1.505 s), as a follower's acknowledgement
    // of entries another message appended must; the fsync holds one write.
    let stall = r#"ThreadStall(node: "a", thread: Renewal, at: "500ms", duration: "1s")"#;
    assert_eq!(
        journal(true, Some("5ms"), stall),
        [
            ("durable", 1, 1105),
            ("sent", 1, 1105),
            ("durable", 1, 1505),
            ("sent", 0, 1505),
            ("sent", 2, 1505),
        ]
    );
    // With nothing to wait for, it sends at once: with a working disk at 1.2 s.
    let quiet = journal(true, Some("5ms"), "");
    assert!(quiet.contains(&("sent", 2, 1200)), "{quiet:?}");
}
