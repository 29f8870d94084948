//! Read authority tracked apart from write authority: the oracle judges an
//! exclusive read authority on its own, reports a shared one apart, and the timeline, the
//! traces and the chart show read beliefs on their own lane. And staleness, judged by
//! linearizability for every protocol: a read is stale iff the state it returns misses a write
//! that had taken effect before it arrived at the node that serves it (the runs at the end).
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
    Authorities, Belief, Beliefs, Claim, Cx, Fact, LeaseParams, NodeLogic, Out, Protocol,
    ProtocolMessage, Registry, Request, Settings, Strategy, TimerId,
};
use leasesim::time::{LocalTime, SimTime};
use leasesim::trace::{Observer, TraceEvent, TraceKind};
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
        // a holds token 1 from its start (what it believes under before its switch).
        if self.before != Beliefs::NONE {
            out.report(Fact::Holding { token: 1 });
        }
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
                    // b holds token 2 from its switch on.
                    out.report(Fact::Holding { token: 2 });
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

/// What a run's trace says of its reads, grants and applied writes, in true nanoseconds.
#[derive(Default)]
struct Reads {
    /// (t, node, token, zombie, stale) of every read served.
    served: Vec<(i64, NodeId, Token, bool, bool)>,
    /// (t, to, token) of every grant.
    grants: Vec<(i64, NodeId, Token)>,
    /// (t, writer, token) of every write applied (or committed).
    applied: Vec<(i64, NodeId, Token)>,
}

impl Observer for Reads {
    fn event(&mut self, e: &TraceEvent) {
        let t = e.t.ns();
        match e.kind {
            TraceKind::Read {
                token,
                zombie,
                stale,
            } => self.served.push((t, e.node, token, zombie, stale)),
            TraceKind::Grant { token, to, .. } => self.grants.push((t, to, token)),
            TraceKind::WriteArrived {
                writer,
                token,
                applied: true,
                ..
            } => self.applied.push((t, writer, token)),
            _ => {}
        }
    }
}

/// Runs scenario `text` (named `name`) with built-in protocols, watching its reads.
fn run_watched(name: &str, text: &str) -> (leasesim::Summary, Reads) {
    let s = load::from_text(name, text).unwrap_or_else(|e| panic!("{e}"));
    let mut seen = Reads::default();
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let out = leasesim::run_with(name, &s, strategy, Some(&mut seen)).unwrap();
    assert_ne!(
        out.summary.expect.passed,
        Some(false),
        "{:?}",
        out.summary.expect.failures
    );
    (out.summary, seen)
}

const LINEARIZABILITY_DOC: &str = include_str!("../../docs/src/linearizability.md");

/// The ```ron blocks of the linearizability page.
fn doc_scenarios() -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in LINEARIZABILITY_DOC.lines() {
        match &mut cur {
            None if line.trim_start() == "```ron" => cur = Some(String::new()),
            Some(b) if line.trim_start() == "```" => {
                out.push(std::mem::take(b));
                cur = None;
            }
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
            None => {}
        }
    }
    out
}

/// The page's example, a ReadIndex read across a pause. r1 leads term 1; its read arriving at
/// 2 s starts a round and waits for it; r1 pauses at 2.0005 s for 3 s, so it reads the round's
/// acknowledgements (in at 2.002 s) and serves the read at 2 s + 0.5 ms + 3 s = 5.0005 s, after
/// waiting 3.0005 s. r3 wins term 2 during the pause and commits writes before that. The read
/// is not stale: it arrived before any of them was committed, so it can be placed before them;
/// and not a zombie action: it was taken up at 2 s under term 1, the newest then (a majority
/// of term 1 confirmed it before term 2 existed). The other reads:
/// r3 serves those arriving at 4 s and 5 s a round trip later (2 ms each); every other read
/// arrives at a node that does not lead. Waits: (3.0005 + 0.002 + 0.002) / 3 = 1.0015 s.
#[test]
fn a_readindex_read_across_a_pause_is_judged_at_its_arrival() {
    let docs = doc_scenarios();
    assert_eq!(docs.len(), 1, "the page has one scenario");
    let (s, seen) = run_watched("linearizability.md", &docs[0]);
    let (r1, r3) = (0, 2);
    let served_at = 2 * S + 500_000 + 3 * S;
    assert_eq!(
        seen.served,
        [
            (4 * S + 2 * MS, r3, 2, false, false),
            (served_at, r1, 1, false, false),
            (5 * S + 2 * MS, r3, 2, false, false),
        ]
    );
    assert_eq!((s.zombie_actions, s.stale_reads), (0, 0));
    assert_eq!(s.verdict, leasesim::outcome::Verdict::Safe);
    let r = &s.requests;
    assert_eq!((r.reads_served, r.reads_served_confirmed), (3, 3));
    let wait = r.confirmed_read_wait.as_ref().expect("three waited");
    assert_eq!((wait.mean_ns, wait.max_ns), (1_001_500_000, 3_000_500_000));
    // Term 2 was issued to r3 before the answer, and r3 committed writes between the read's
    // arrival and its answer: judged at the answer, the read would miss them and be late.
    let (elected, to, _) = seen.grants[1];
    assert!(to == r3 && (2 * S..served_at).contains(&elected));
    let between = seen
        .applied
        .iter()
        .filter(|w| w.1 == r3 && (2 * S..served_at).contains(&w.0))
        .count();
    assert!(between > 0, "r3 committed nothing while r1 was paused");
}

/// `raft-etcd-check-quorum-only` with fixed-rate operations in place of the Poisson streams:
/// one every 10 ms at each replica, every tenth (multiples of 100 ms) a write. r1, cut off at
/// 10.25 s, keeps serving lease reads until its check-quorum tick at 12.237726979 s. The trace
/// gives r3's election (term 2) in (11.32 s, 11.33 s); r3's first client write arrives at 11.4 s
/// and commits a round trip later, 11.402 s. r1's reads are every 10 ms off the multiples of
/// 100 ms:
/// - zombie actions (term 1 superseded when served): the reads of 11.33 s .. 12.23 s, 91
///   operations less the 9 writes at 11.4 .. 12.2 s: 82;
/// - stale (a write committed before they arrived is missing from r1's copy): the reads of
///   11.41 s .. 12.23 s, 83 operations less the 8 writes at 11.5 .. 12.2 s: 75. Those of
///   11.33 .. 11.39 s arrived before any write of term 2 took effect.
#[test]
fn a_deposed_leaders_lease_reads_after_the_successors_commit_are_stale() {
    let text = leasesim::scenario::library::text("raft-etcd-check-quorum-only")
        .unwrap()
        .replace(
            "reads_per_second: 200.0, writes_per_second: 50.0",
            r#"periodic: (every: "10ms", write_every: 10)"#,
        );
    // The story's own expectations are of its Poisson run; the counts here are checked below.
    let text = &text[..text.find("    expect:").unwrap()];
    let (s, seen) = run_watched("cq-periodic", &format!("{text})"));
    let (r1, r3) = (0, 2);
    let (elected, to, term) = seen.grants[1];
    assert_eq!((to, term), (r3, 2));
    assert!(11_320 * MS < elected && elected < 11_330 * MS, "{elected}");
    let first = seen.applied.iter().find(|w| w.2 == 2).expect("r3 commits");
    assert_eq!(first.0, 11_402 * MS);
    assert_eq!((s.zombie_actions, s.stale_reads), (82, 75));
    let stale: Vec<i64> = seen
        .served
        .iter()
        .filter(|r| r.4)
        .map(|r| {
            assert_eq!(r.1, r1);
            r.0
        })
        .collect();
    assert_eq!(
        (stale[0], stale[stale.len() - 1]),
        (11_410 * MS, 12_230 * MS)
    );
}

/// `lease-without-fencing-delayed-write` with fixed-rate operations: one every 100 ms at each
/// contender from its start (a at 0, b at 100 ms), every tenth a write; a crashes at 4.5 s. a
/// holds from 2 ms, so its writes of 1 s, 2 s, 3 s are applied at +1 ms and answered at +2 ms,
/// and the one of 4 s is held up 15 s. The grantor frees the lease 10 s after its last renewal
/// (3.003 s) and grants b token 2 at 13.003 s. b's writes of 13.1 .. 18.1 s land at +1 ms. a's
/// delayed write lands at 19.001 s: after b's in the register's order, and unsafe (token 1
/// after 2). But its answer goes to a crashed node: no client heard of it, so it can be placed
/// after every read b serves, and none of them is stale (b's copy holds b's own writes). No
/// zombie: a's write was sent under its valid lease.
#[test]
fn a_late_write_nobody_heard_of_makes_no_read_stale() {
    let text = leasesim::scenario::library::text("lease-without-fencing-delayed-write")
        .unwrap()
        .replace(
            "reads_per_second: 100.0, writes_per_second: 10.0",
            r#"periodic: (every: "100ms", write_every: 10)"#,
        )
        .replace(
            r#"Crash(node: "a", at: "5s")"#,
            r#"Crash(node: "a", at: "4.5s")"#,
        );
    let text = &text[..text.find("    expect:").unwrap()];
    let (s, seen) = run_watched("delayed-periodic", &format!("{text})"));
    let (a, b) = (1, 2);
    assert_eq!(seen.grants[1], (13_003 * MS, b, 2));
    let from_a: Vec<_> = seen.applied.iter().filter(|w| w.1 == a).collect();
    assert_eq!(from_a.len(), 4);
    assert_eq!(*from_a[3], (19_001 * MS, a, 1));
    assert_eq!(
        (s.stale_reads, s.zombie_actions, s.unsafe_writes),
        (0, 0, 1)
    );
}

/// The same, but a stays up: a partition cuts it from the lock and b over [4.5 s, 18.95 s)
/// instead of a crash, and its write of 4 s is held up 15.15 s. a's renewal of 6.002 s is cut,
/// so its lease ends at 3.002 + 9.95 = 12.952 s; the grantor frees it at 13.003 s and grants b.
/// b's writes of 13.1 .. 19.1 s land at +1 ms. a's write lands at 19.151 s (the partition has
/// healed), after b's write of 19.1 s in the register's order, and its answer reaches a at
/// 19.152 s. b's reads of 19.2 .. 20.0 s return b's write of 19.1 s, which a's, answered before
/// they arrived, had replaced: 9 stale reads. b's write of 20.1 s, answered at 20.102 s, comes
/// after a's: its reads of 20.2 s on are fresh. One unsafe write; no zombie.
#[test]
fn a_late_write_answered_makes_the_next_holders_reads_stale_until_it_writes() {
    let text = leasesim::scenario::library::text("lease-without-fencing-delayed-write")
        .unwrap()
        .replace(
            "reads_per_second: 100.0, writes_per_second: 10.0",
            r#"periodic: (every: "100ms", write_every: 10)"#,
        )
        .replace(r#"extra: "15s""#, r#"extra: "15.15s""#)
        .replace(
            r#"Crash(node: "a", at: "5s")"#,
            r#"Partition(at: "4.5s", duration: "14.45s", groups: [["a"], ["lock", "b"]])"#,
        );
    let text = &text[..text.find("    expect:").unwrap()];
    let (s, seen) = run_watched("delayed-answered", &format!("{text})"));
    let (a, b) = (1, 2);
    assert_eq!(seen.grants[1], (13_003 * MS, b, 2));
    let late = seen.applied.iter().find(|w| w.1 == a && w.0 > 5_000 * MS);
    assert_eq!(late, Some(&(19_151 * MS, a, 1)));
    assert_eq!(
        (s.stale_reads, s.zombie_actions, s.unsafe_writes),
        (9, 0, 1)
    );
    let stale: Vec<i64> = seen.served.iter().filter(|r| r.4).map(|r| r.0).collect();
    assert_eq!(
        (stale[0], stale[stale.len() - 1]),
        (19_200 * MS, 20_000 * MS)
    );
    assert!(seen.served.iter().filter(|r| r.4).all(|r| r.1 == b));
}
