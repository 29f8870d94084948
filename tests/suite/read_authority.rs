//! Read authority tracked apart from write authority: the oracle judges an
//! exclusive read authority on its own, reports a shared one apart, and the timeline, the
//! traces and the chart show read beliefs on their own lane.
//!
//! `Staggered` is a protocol with no messages whose beliefs are fixed in advance, so that every
//! figure can be derived by hand. Clocks have no drift, so local and true time agree:
//! - `a` holds write authority under token 1 until 4 s and read authority until 5 s (an old
//!   leader still serving lease reads after it stopped writing);
//! - `b` takes read authority under token 2 at 4.5 s and write authority at 6 s, to the end.
//!
//! Write authority: a [0, 4 s), b [6 s, 10 s): no overlap.
//! Read authority: a [0, 5 s), b [4.5 s, 10 s): one overlap, [4.5 s, 5 s) = 500 ms, of a and b.

use leasesim::cli::Cli;
use leasesim::clock::ClockKind;
use leasesim::msg::{NodeId, Token};
use leasesim::oracle::authority::Authority;
use leasesim::oracle::{Overlap, Piece};
use leasesim::scenario::{load, Role, Scenario};
use leasesim::strategy::{
    Authorities, Belief, Beliefs, Claim, Cx, LeaseParams, NodeLogic, Out, Protocol,
    ProtocolMessage, Registry, Request, Settings, Strategy, TimerId,
};
use leasesim::time::{LocalTime, SimTime};
use leasesim::trace::{Observer, TraceEvent};
use std::fs;
use std::process::ExitCode;

use crate::common::workdir;

const S: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;

/// The protocol, with the claim it makes for read authority.
struct Staggered {
    read: Claim,
}

#[derive(Clone, Copy, Debug)]
enum NoMsg {}

impl ProtocolMessage for NoMsg {
    const KINDS: &'static [&'static str] = &[];
    fn kind(&self) -> usize {
        match *self {}
    }
    fn token(&self) -> Option<Token> {
        match *self {}
    }
}

/// One node's fixed schedule: until `switch` on its monotonic clock it believes `before`, from
/// then on `after`.
struct Node {
    switch: LocalTime,
    before: Beliefs,
    after: Beliefs,
    switched: bool,
}

const SWITCH: TimerId = 0;

fn until(token: Token, s: i64) -> Belief {
    Belief::Until {
        token,
        clock: ClockKind::Monotonic,
        deadline: LocalTime::from_ns(s),
    }
}

impl Protocol for Staggered {
    type Logic = Node;

    fn describe(&self) -> String {
        match self.read {
            Claim::Shared => "Staggered(shared: true)".to_string(),
            _ => "Staggered()".to_string(),
        }
    }

    fn authorities(&self) -> Authorities {
        Authorities {
            write: Claim::Exclusive,
            read: self.read,
        }
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let contenders = scenario
            .nodes
            .iter()
            .filter(|n| n.role == Role::Contender)
            .count();
        if contenders == 2 {
            Vec::new()
        } else {
            vec!["nodes: Staggered needs exactly two Contenders".to_string()]
        }
    }

    fn node_logic(&self, node: NodeId, _role: Role, _p: &LeaseParams, _disk: ()) -> Node {
        let forever = until(2, 20 * S);
        if node == 0 {
            Node {
                switch: LocalTime::from_ns(5 * S),
                before: Beliefs {
                    write: until(1, 4 * S),
                    read: until(1, 5 * S),
                },
                after: Beliefs::NONE,
                switched: false,
            }
        } else {
            Node {
                switch: LocalTime::from_ns(4 * S + 500 * MS),
                before: Beliefs::NONE,
                after: Beliefs {
                    write: Belief::None,
                    read: forever,
                },
                switched: false,
            }
        }
    }
}

const WRITE_AT: TimerId = 1;

impl NodeLogic for Node {
    type Msg = NoMsg;
    type Disk = ();

    fn on_start(&mut self, _cx: &mut Cx, out: &mut Out<NoMsg>) {
        out.set_timer(SWITCH, ClockKind::Monotonic, self.switch);
    }
    fn on_message(&mut self, _cx: &mut Cx, _from: NodeId, msg: NoMsg, _out: &mut Out<NoMsg>) {
        match msg {}
    }
    fn on_timer(&mut self, _cx: &mut Cx, timer: TimerId, out: &mut Out<NoMsg>) {
        match timer {
            SWITCH => {
                self.switched = true;
                if self.after != Beliefs::NONE {
                    // b: write authority from 6 s on; something stays pending while it believes.
                    out.set_timer(WRITE_AT, ClockKind::Monotonic, LocalTime::from_ns(6 * S));
                }
            }
            _ => {
                self.after.write = until(2, 20 * S);
                out.set_timer(SWITCH, ClockKind::Monotonic, LocalTime::from_ns(20 * S));
            }
        }
    }
    fn check(&self, _cx: &Cx, _request: Request) -> Option<Token> {
        None
    }
    fn on_request(&mut self, _cx: &mut Cx, _r: Request, _t: Token, _out: &mut Out<NoMsg>) {}
    fn beliefs(&self) -> Beliefs {
        if self.switched {
            self.after
        } else {
            self.before
        }
    }
    fn into_disk(self) {}
}

const SCENARIO: &str = r#"Scenario(
    description: "a still serves lease reads for 1 s after it stops writing; b starts reading at 4.5 s",
    duration: "10s",
    lease: (duration: "10s"),
    strategy: Staggered(),
    nodes: [(name: "a", role: Contender), (name: "b", role: Contender)],
)
"#;

/// The scenario under `strategy` and the protocol it names.
fn scenario(strategy: &str) -> (Scenario, Box<dyn Strategy>) {
    let text = SCENARIO.replace("Staggered()", strategy);
    let r = registry();
    let s = load::from_text_in("staggered.ron", &text, &r).expect("the scenario loads");
    let p = r.build(&s.strategy).expect("registered");
    (s, p)
}

/// `Staggered(shared: true)` declares read authority shared; `Staggered()`, exclusive.
#[derive(Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    #[serde(default)]
    shared: bool,
}

impl Settings for Fields {
    const NAME: &'static str = "Staggered";
    type Protocol = Staggered;

    fn to_ron(&self) -> String {
        self.build().describe()
    }

    fn build(&self) -> Staggered {
        let read = if self.shared {
            Claim::Shared
        } else {
            Claim::Exclusive
        };
        Staggered { read }
    }
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register::<Fields>();
    r
}

/// What an observer is shown: belief pieces and overlaps, with their authority.
#[derive(Default)]
struct Seen {
    beliefs: Vec<(NodeId, Authority, SimTime, SimTime, Token)>,
    overlaps: Vec<(Authority, SimTime, SimTime, Vec<NodeId>)>,
}

impl Observer for Seen {
    fn event(&mut self, _e: &TraceEvent) {}
    fn belief(&mut self, node: NodeId, authority: Authority, p: &Piece) {
        self.beliefs
            .push((node, authority, p.start, p.end, p.token));
    }
    fn overlap(&mut self, authority: Authority, o: &Overlap) {
        self.overlaps
            .push((authority, o.start, o.end, o.nodes.clone()));
    }
}

fn t(ns: i64) -> SimTime {
    SimTime::from_ns(ns)
}

#[test]
fn an_exclusive_read_authority_is_judged_on_its_own() {
    let mut seen = Seen::default();
    let (scenario, protocol) = scenario("Staggered()");
    let out = leasesim::run_with("staggered", &scenario, protocol, Some(&mut seen)).expect("runs");
    let s = &out.summary;
    // Read: a [0, 5 s), b [4.5 s, 10 s): one overlap of 500 ms; write authority has none.
    assert_eq!(s.overlap.count, 1);
    assert_eq!(s.overlap.total_ns, 500 * MS);
    let i = &s.overlap.intervals[0];
    assert_eq!(i.authority, Authority::Read);
    assert_eq!((i.start_ns, i.end_ns), (4 * S + 500 * MS, 5 * S));
    assert_eq!(i.nodes, ["a", "b"]);
    assert!(s.shared_read_overlap.is_none());

    // The observer sees each authority's beliefs, and the read overlap.
    let mut beliefs = seen.beliefs.clone();
    beliefs.sort_by_key(|b| (b.1, b.0, b.2));
    assert_eq!(
        beliefs,
        [
            (0, Authority::Write, t(0), t(4 * S), 1),
            (1, Authority::Write, t(6 * S), t(10 * S), 2),
            (0, Authority::Read, t(0), t(5 * S), 1),
            (1, Authority::Read, t(4 * S + 500 * MS), t(10 * S), 2),
        ]
    );
    assert_eq!(
        seen.overlaps,
        [(Authority::Read, t(4 * S + 500 * MS), t(5 * S), vec![0, 1])]
    );
}

#[test]
fn a_shared_read_authority_is_reported_apart_and_is_not_an_overlap() {
    let mut seen = Seen::default();
    let (scenario, protocol) = scenario("Staggered(shared: true)");
    let out = leasesim::run_with("staggered", &scenario, protocol, Some(&mut seen)).expect("runs");
    let s = &out.summary;
    assert_eq!(s.overlap.count, 0);
    let shared = s.shared_read_overlap.as_ref().expect("reported");
    assert_eq!(
        (shared.count, shared.total_ns, shared.max_ns),
        (1, 500 * MS, 500 * MS)
    );
    // Shown as beliefs, never as an overlap band.
    assert!(seen.overlaps.is_empty());
    assert_eq!(
        seen.beliefs
            .iter()
            .filter(|b| b.1 == Authority::Read)
            .count(),
        2
    );
}

#[test]
fn traces_and_the_timeline_show_read_beliefs_on_their_own_lane() {
    let dir = workdir("read-authority");
    let file = dir.join("staggered.ron");
    fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("out");
    let cli = Cli::new().with_registry(registry());
    let code = cli.run_args([
        "leasesim",
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--trace",
    ]);
    assert_eq!(code, ExitCode::SUCCESS);
    let run = out.join("staggered");

    let jsonl = fs::read_to_string(run.join("trace.jsonl")).unwrap();
    let lines: Vec<&str> = jsonl
        .lines()
        .filter(|l| l.contains(r#""kind":"belief""#) || l.contains(r#""kind":"overlap""#))
        .collect();
    assert!(
        lines.contains(
            &r#"{"kind":"belief","authority":"read","start_ns":0,"end_ns":5000000000,"nodes":["a"],"token":1,"running":true}"#
        ),
        "{lines:#?}"
    );
    assert!(
        lines.contains(
            &r#"{"kind":"overlap","authority":"read","start_ns":4500000000,"end_ns":5000000000,"nodes":["a","b"]}"#
        ),
        "{lines:#?}"
    );
    let perfetto = fs::read_to_string(run.join("trace.perfetto.json")).unwrap();
    assert_eq!(perfetto.matches(r#""name":"read lease""#).count(), 2);
    assert!(perfetto.contains("reads under token 2"));
    assert!(perfetto.contains("OVERLAP of read authority 500ms (a, b)"));

    let svg = fs::read_to_string(run.join("timeline.svg")).unwrap();
    assert!(
        svg.contains("read authority (lease reads)"),
        "no legend entry"
    );
}
