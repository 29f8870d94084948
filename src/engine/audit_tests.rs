//! Tests of the engine's debug checks on facts (`audit`): a tiny one-node protocol, `Sloppy`,
//! that holds token 1 from its start and serves reads, either faithfully or with one fact left
//! out or made up, or a refusal claimed that its check does not make. The faithful ones run
//! clean; each broken one fails its debug check (those tests exist in debug builds only, where
//! the checks do).

use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::strategy::{
    Belief, Beliefs, Cx, Fact, LeaseParams, NodeLogic, Out, Protocol, ProtocolMessage, Request,
    Stamp, TimerId,
};
use crate::time::LocalDur;

/// No message is ever sent.
#[derive(Clone, Debug)]
struct Silent;

impl ProtocolMessage for Silent {
    const KINDS: &'static [&'static str] = &["Silent"];
    fn kind(&self) -> usize {
        0
    }
}

/// How `Sloppy` behaves. (The broken ones run only in debug builds, where the checks are.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(debug_assertions), allow(dead_code))]
enum Mode {
    /// Reports Holding at start and serves every read at once.
    Faithful,
    /// Keeps every read (Waiting) and serves it with ConfirmedRead when its timer fires.
    Waits,
    /// Believes under token 1 without ever reporting Holding.
    NoHolding,
    /// Takes a request and reports nothing of it.
    ForgetsRequest,
    /// Serves every read at once, and again later as if it had kept it.
    ServesTwice,
    /// Serves a read with a value no write wrote.
    ReadsAValueNobodyWrote,
    /// Says it refuses every request whatever the time, and its check admits them all.
    ClaimsToRefuse,
}

/// The timer that serves kept reads, and the one that keeps the belief honest (a node that
/// believes must have a timer pending).
const SERVE: TimerId = 0;
const KEEP: TimerId = 1;

#[derive(Clone)]
struct Sloppy {
    mode: Mode,
    /// The stamps of the reads kept.
    kept: Vec<Stamp>,
}

impl NodeLogic for Sloppy {
    type Msg = Silent;
    type Disk = ();
    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Silent>) {
        if self.mode != Mode::NoHolding {
            out.report(Fact::Holding { token: 1 });
        }
        out.set_timer(KEEP, crate::clock::ClockKind::Monotonic, cx.mono + SECOND);
    }
    fn on_message(&mut self, _: &mut Cx, _: NodeId, _: Silent, _: &mut Out<Silent>) {}
    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Silent>) {
        if timer == SERVE {
            for since in self.kept.drain(..) {
                out.report(Fact::ConfirmedRead {
                    token: 1,
                    since,
                    value: 0,
                });
            }
        } else {
            out.set_timer(KEEP, crate::clock::ClockKind::Monotonic, cx.mono + SECOND);
        }
    }
    fn check(&self, _: &Cx, _: Request) -> Option<Token> {
        Some(1)
    }
    fn refuses_whatever_the_time(&self, _: Request) -> bool {
        self.mode == Mode::ClaimsToRefuse
    }
    fn on_request(&mut self, cx: &mut Cx, _: Request, token: Token, out: &mut Out<Silent>) {
        match self.mode {
            Mode::Faithful | Mode::NoHolding | Mode::ClaimsToRefuse => {
                out.report(Fact::Read { token, value: 0 })
            }
            Mode::Waits | Mode::ServesTwice => {
                if self.mode == Mode::Waits {
                    out.report(Fact::Waiting { token });
                } else {
                    out.report(Fact::Read { token, value: 0 });
                }
                self.kept.push(cx.stamp);
                out.set_timer(SERVE, crate::clock::ClockKind::Monotonic, cx.mono + MS);
            }
            Mode::ForgetsRequest => {}
            Mode::ReadsAValueNobodyWrote => out.report(Fact::Read { token, value: 42 }),
        }
    }
    fn beliefs(&self) -> Beliefs {
        Beliefs::both(Belief::Bool { token: 1 })
    }
    fn into_disk(self) {}
}

impl Protocol for Sloppy {
    type Logic = Sloppy;
    fn describe(&self) -> String {
        "Sloppy".into()
    }
    fn check(&self, _: &Scenario) -> Vec<String> {
        Vec::new()
    }
    fn node_logic(&self, _: NodeId, _: Role, _: &LeaseParams, _: ()) -> Sloppy {
        self.clone()
    }
}

const MS: LocalDur = LocalDur::from_ms(1);
const SECOND: LocalDur = LocalDur::from_secs(1);

/// Runs one node under `mode` for 1 s with reads arriving 100 times a second; the run's stats.
fn run(mode: Mode) -> super::Stats {
    let s = Scenario::from_ron(
        r#"Scenario(
            seed: 1,
            duration: "1s",
            lease: (duration: "10s"),
            strategy: CachedBool,
            nodes: [(name: "a", role: Contender)],
            workload: (reads_per_second: 100.0),
        )"#,
    )
    .expect("a scenario");
    let sloppy = Sloppy {
        mode,
        kept: Vec::new(),
    };
    super::build(&s, &sloppy, None).run().stats
}

#[test]
fn a_protocol_that_reports_every_fact_runs_clean() {
    // Every read admitted is served: at once, or kept and served 1 ms later (those that arrive
    // in the run's last millisecond wait beyond its end). About 100 arrive in 1 s.
    let at_once = run(Mode::Faithful);
    assert!(at_once.reads_admitted > 50, "{}", at_once.reads_admitted);
    assert_eq!(at_once.reads_local, at_once.reads_admitted);
    let kept = run(Mode::Waits);
    assert!(kept.reads_confirmed > 50, "{}", kept.reads_confirmed);
    assert!(kept.reads_confirmed + 2 >= kept.reads_admitted);
    assert_eq!(kept.reads_local, 0);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "with no Holding for it")]
fn believing_without_holding_fails() {
    run(Mode::NoHolding);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "reported nothing of what became of it")]
fn a_request_left_unaccounted_fails() {
    run(Mode::ForgetsRequest);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "for a waiting read, but no read waits")]
fn a_read_served_twice_fails() {
    run(Mode::ServesTwice);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "which no write that took effect wrote")]
fn a_read_of_a_value_nobody_wrote_fails() {
    run(Mode::ReadsAValueNobodyWrote);
}

/// A logic that says it refuses whatever the time is taken at its word: its check is not
/// called, and every request is refused (in a release build; a debug build calls the check
/// anyway, below).
#[test]
#[cfg(not(debug_assertions))]
fn a_logic_that_refuses_whatever_the_time_is_not_checked() {
    let stats = run(Mode::ClaimsToRefuse);
    assert!(stats.reads_arrived > 50, "{}", stats.reads_arrived);
    assert_eq!(stats.reads_admitted, 0);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(
    expected = "said it refuses Read { key: 0 } whatever the time, and its check admitted it \
                under token Some(1)"
)]
fn a_logic_that_says_it_refuses_and_admits_fails() {
    run(Mode::ClaimsToRefuse);
}
