//! The fault schedule as the run reaches it.
//!
//! The nodes' starts and the scenario's fixed faults are compiled to node ids once (they are
//! the input). The `random_faults` generators' faults are drawn one at a time, each stream's
//! next when the last is taken, and merged in time order: a run holds the next fault of each
//! stream, not the schedule of the whole run, however long it lasts. The order is the one of
//! the whole schedule compiled and sorted at once: by time, then starts and fixed faults in list
//! order, then the drawn ones in generator order, node order, draw order. A node fault at an
//! instant comes before any event the run schedules for it (see `Sim::next_event`), and a drawn
//! network fault joins the network before the first event at or after its start.

use super::moments::{Anchored, Placed};
use super::NodeFault;
use crate::msg::NodeId;
use crate::net::{KindSet, Match, NetFault, NodeSet, Window};
use crate::scenario::random_faults::{self, FaultStream};
use crate::scenario::{Fault, KindName, Scenario};
use crate::strategy::Command;
use crate::time::{DriftRate, Dur, SimTime};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The faults still to come: the fixed ones, and the drawn streams' next.
pub(super) struct Feed {
    ids: Ids,
    /// Starts and fixed node faults in schedule order, the next last (taken off the end).
    fixed: Vec<(SimTime, NodeId, NodeFault)>,
    /// The random streams, in schedule order.
    streams: Vec<FaultStream>,
    /// Each stream's next node fault, by (time, stream): a node fault's place in the schedule.
    node_heads: BinaryHeap<Reverse<(SimTime, usize)>>,
    /// Each stream's next network fault, by (time, stream).
    net_heads: BinaryHeap<Reverse<(SimTime, usize)>>,
    /// The compiled next fault of each stream, if it has one.
    next: Vec<Option<Compiled>>,
    /// How many network faults each stream has given (a drawn network fault's place in the
    /// list of faults is its stream's, then this).
    given: Vec<u32>,
    /// Node faults placed at protocol moments, by (time, order placed), and the faults.
    placed: BinaryHeap<Reverse<(SimTime, usize)>>,
    placed_faults: Vec<(NodeId, NodeFault)>,
    /// When the next node fault is due (of `fixed`, `node_heads` and `placed`), kept as they
    /// change: the run asks before every event.
    next_node: Option<SimTime>,
    /// How many times `next_node` was set: the run knows by it that a fault may now be due
    /// sooner (one placed at a protocol moment).
    changes: u64,
}

/// A drawn fault, compiled.
enum Compiled {
    Node(NodeId, NodeFault),
    Net(NetFault),
}

impl Feed {
    /// The feed of `scenario`'s faults: `fixed`, its starts and fixed node faults compiled (in
    /// time order), and the streams its generators draw.
    pub(super) fn new(
        ids: Ids,
        scenario: &Scenario,
        mut fixed: Vec<(SimTime, NodeId, NodeFault)>,
    ) -> Feed {
        fixed.reverse();
        let streams = random_faults::streams(scenario);
        let n = streams.len();
        let mut feed = Feed {
            ids,
            fixed,
            streams,
            node_heads: BinaryHeap::new(),
            net_heads: BinaryHeap::new(),
            next: (0..n).map(|_| None).collect(),
            given: vec![0; n],
            placed: BinaryHeap::new(),
            placed_faults: Vec::new(),
            next_node: None,
            changes: 0,
        };
        for k in 0..n {
            feed.draw(k);
        }
        feed.refresh();
        feed
    }

    /// Sets `next_node` after a change of the fixed list or of either heap.
    fn refresh(&mut self) {
        self.next_node = self.first_due();
        self.changes += 1;
    }

    /// How many times the next node fault was set (see [`Feed::next_node_at`]).
    #[inline]
    pub(super) fn changes(&self) -> u64 {
        self.changes
    }

    /// When the next drawn network fault starts, if one is drawn.
    #[inline]
    pub(super) fn next_net_at(&self) -> Option<SimTime> {
        self.net_heads.peek().map(|h| h.0 .0)
    }

    /// The earliest of the fixed list's next, the drawn streams' and the placed faults'.
    fn first_due(&self) -> Option<SimTime> {
        let fixed = self.fixed.last().map(|f| f.0);
        let drawn = self.node_heads.peek().map(|h| h.0 .0);
        let placed = self.placed.peek().map(|h| h.0 .0);
        [fixed, drawn, placed].into_iter().flatten().min()
    }

    /// Draws stream `k`'s next fault, if it has one.
    fn draw(&mut self, k: usize) {
        let Some(f) = self.streams[k].next() else {
            return;
        };
        let at = SimTime::from_ns(f.at().ns());
        let compiled = match net_fault(&self.ids, &f, at) {
            Some(nf) => {
                self.net_heads.push(Reverse((at, k)));
                Compiled::Net(nf)
            }
            None => {
                let mut out = Vec::with_capacity(1);
                node_fault(&self.ids, &f, at, &mut out);
                let [(_, node, fault)] = out[..] else {
                    unreachable!("a drawn fault reaches one node")
                };
                self.node_heads.push(Reverse((at, k)));
                Compiled::Node(node, fault)
            }
        };
        self.next[k] = Some(compiled);
        self.refresh();
    }

    /// Places node fault `fault` of `node` at `at`, no earlier than the run's time (a fault
    /// placed at a protocol moment).
    pub(super) fn place(&mut self, at: SimTime, node: NodeId, fault: NodeFault) {
        self.placed.push(Reverse((at, self.placed_faults.len())));
        self.placed_faults.push((node, fault));
        self.refresh();
    }

    /// When the next node fault is due.
    #[inline]
    pub(super) fn next_node_at(&self) -> Option<SimTime> {
        debug_assert_eq!(
            self.next_node,
            self.first_due(),
            "the cached next fault is current"
        );
        self.next_node
    }

    /// Takes out the next node fault (at a tie, a fixed one first, then the drawn ones by
    /// stream, then those placed at moments in the order placed).
    pub(super) fn pop_node(&mut self) -> Option<(SimTime, NodeId, NodeFault)> {
        let next = self.take_node();
        self.refresh();
        next
    }

    fn take_node(&mut self) -> Option<(SimTime, NodeId, NodeFault)> {
        let first = self.next_node_at()?;
        if self.fixed.last().is_some_and(|f| f.0 == first) {
            return self.fixed.pop();
        }
        if let Some(&Reverse((at, k))) = self.node_heads.peek().filter(|h| h.0 .0 == first) {
            self.node_heads.pop();
            let Some(Compiled::Node(node, fault)) = self.next[k].take() else {
                unreachable!("a node head names a node fault")
            };
            self.draw(k);
            return Some((at, node, fault));
        }
        let Reverse((at, i)) = self.placed.pop().expect("the first is a placed one");
        let (node, fault) = self.placed_faults[i];
        Some((at, node, fault))
    }

    /// Takes out the next drawn network fault that starts by `t`, with its place in the list
    /// of faults (after every fixed one: a fixed fault's place is its index).
    pub(super) fn pop_net_by(&mut self, t: SimTime) -> Option<(NetFault, u64)> {
        let &Reverse((at, k)) = self.net_heads.peek()?;
        if at > t {
            return None;
        }
        self.net_heads.pop();
        let Some(Compiled::Net(f)) = self.next[k].take() else {
            unreachable!("a network head names a network fault")
        };
        let order = ((k as u64 + 1) << 32) | u64::from(self.given[k]);
        self.given[k] += 1;
        self.draw(k);
        Some((f, order))
    }
}

/// A validated scenario's names, resolved: node names to ids, message kind names to the
/// protocol's kind indices.
pub(super) struct Ids {
    /// Every node's name, by id.
    names: Vec<String>,
    kind_names: &'static [&'static str],
}

impl Ids {
    pub(super) fn new(s: &Scenario, kind_names: &'static [&'static str]) -> Ids {
        Ids {
            names: s.nodes.iter().map(|n| n.name.clone()).collect(),
            kind_names,
        }
    }

    /// How many message kinds the protocol has.
    pub(super) fn kinds_len(&self) -> usize {
        self.kind_names.len()
    }

    /// The id of the node named `name`.
    pub(super) fn node(&self, name: &str) -> NodeId {
        self.names
            .iter()
            .position(|n| n == name)
            .expect("validated node name")
    }

    /// The nodes named (every node when no list is given).
    fn nodes(&self, names: &Option<Vec<String>>) -> NodeSet {
        match names {
            None => NodeSet::all(),
            Some(v) => NodeSet::of(
                &v.iter().map(|s| self.node(s)).collect::<Vec<_>>(),
                self.names.len(),
            ),
        }
    }

    /// The message kinds named (every kind when no list is given).
    fn kinds(&self, names: &Option<Vec<KindName>>) -> KindSet {
        match names {
            None => KindSet::all(),
            Some(v) => KindSet::of(v.iter().map(|k| {
                self.kind_names
                    .iter()
                    .position(|&name| name == k.0)
                    .expect("validated kind")
            })),
        }
    }
}

/// `scenario.faults` and the nodes' starts, compiled to node ids ([`compile_fixed`]).
pub(super) struct Fixed {
    /// Node faults at fixed times, in time order (stable: faults at one instant apply in the
    /// order the scenario lists them, starts first).
    pub node_faults: Vec<(SimTime, NodeId, NodeFault)>,
    /// Network faults in list order; one placed at a protocol moment keeps its place with an
    /// empty window until it is placed.
    pub net_faults: Vec<NetFault>,
    /// The faults placed at protocol moments, in list order.
    pub anchored: Vec<Anchored>,
}

/// The nodes' starts and `scenario.faults` compiled to node ids.
pub(super) fn compile_fixed(ids: &Ids, scenario: &Scenario) -> Fixed {
    let mut node_faults: Vec<(SimTime, NodeId, NodeFault)> = Vec::new();
    for (i, c) in scenario.nodes.iter().enumerate() {
        node_faults.push((SimTime::from_ns(c.start.ns()), i, NodeFault::Start));
    }
    let mut net_faults = Vec::new();
    let mut anchored = Vec::new();
    for f in &scenario.faults {
        let Some(after) = f.after() else {
            let at = SimTime::from_ns(f.at().ns());
            match net_fault(ids, f, at) {
                Some(nf) => net_faults.push(nf),
                None => node_fault(ids, f, at, &mut node_faults),
            }
            continue;
        };
        let what = match net_fault(ids, f, SimTime::ZERO) {
            Some(nf) => {
                let order = net_faults.len() as u64;
                net_faults.push(nf.clone().placeholder());
                Placed::Net { fault: nf, order }
            }
            None => {
                let mut faults = Vec::new();
                node_fault(ids, f, SimTime::ZERO, &mut faults);
                Placed::Node(faults.into_iter().map(|(_, n, f)| (n, f)).collect())
            }
        };
        anchored.push(Anchored {
            moment: after.moment,
            node: after.node.as_ref().map(|n| ids.node(n)),
            nth: after.nth,
            delay: after.delay,
            seen: 0,
            placed: false,
            what,
        });
    }
    node_faults.sort_by_key(|f| f.0);
    Fixed {
        node_faults,
        net_faults,
        anchored,
    }
}

/// Fault `f` at `at`, if it is a network fault.
fn net_fault(ids: &Ids, f: &Fault, at: SimTime) -> Option<NetFault> {
    let window = |d: Dur| Window {
        start: at,
        end: at + d,
    };
    let n = ids.names.len();
    Some(match f {
        Fault::Partition {
            duration, groups, ..
        } => {
            let mut group = vec![None; n];
            for (g, names) in groups.iter().enumerate() {
                for name in names {
                    group[ids.node(name)] = Some(g as u16);
                }
            }
            NetFault::Partition {
                window: window(*duration),
                group,
            }
        }
        Fault::OneWay {
            from, to, duration, ..
        } => NetFault::OneWay {
            window: window(*duration),
            from: ids.node(from),
            to: ids.node(to),
        },
        Fault::DelaySpike {
            duration,
            extra,
            from,
            to,
            kinds,
            ..
        } => NetFault::DelaySpike {
            window: window(*duration),
            extra: *extra,
            which: Match {
                from: ids.nodes(from),
                to: ids.nodes(to),
                kinds: ids.kinds(kinds),
            },
        },
        Fault::Drop {
            duration,
            from,
            to,
            kinds,
            ..
        } => NetFault::Drop {
            window: window(*duration),
            which: Match {
                from: ids.nodes(from),
                to: ids.nodes(to),
                kinds: ids.kinds(kinds),
            },
        },
        _ => return None,
    })
}

/// Pushes node fault `f` at `at` onto `out` (an operator's leader transfer reaches every node).
fn node_fault(ids: &Ids, f: &Fault, at: SimTime, out: &mut Vec<(SimTime, NodeId, NodeFault)>) {
    let (node, fault) = match f {
        Fault::Pause {
            node,
            duration,
            kind,
            ..
        } => (
            node,
            NodeFault::Pause {
                duration: *duration,
                kind: *kind,
                clock: f.freeze_clock().expect("a pause"),
            },
        ),
        Fault::Crash { node, .. } => (node, NodeFault::Crash),
        Fault::Restart { node, .. } => (node, NodeFault::Restart),
        Fault::ClockStep { node, by, .. } => (node, NodeFault::ClockStep { by: *by }),
        Fault::DriftChange {
            node, drift_ppm, ..
        } => (
            node,
            NodeFault::DriftChange {
                drift: DriftRate::from_ppm(*drift_ppm).expect("validated drift"),
            },
        ),
        Fault::ThreadStall {
            node,
            thread,
            duration,
            ..
        } => (
            node,
            NodeFault::ThreadStall {
                thread: *thread,
                duration: *duration,
            },
        ),
        Fault::DiskStall { node, duration, .. } => (
            node,
            NodeFault::DiskStall {
                duration: *duration,
            },
        ),
        Fault::StepDown { node, .. } => (node, NodeFault::Command(Command::StepDown)),
        Fault::TransferLeader { to, .. } => {
            let to = ids.node(to);
            for node in 0..ids.names.len() {
                let command = Command::TransferLeader { to };
                out.push((at, node, NodeFault::Command(command)));
            }
            return;
        }
        Fault::Partition { .. }
        | Fault::OneWay { .. }
        | Fault::DelaySpike { .. }
        | Fault::Drop { .. } => unreachable!("a network fault"),
    };
    out.push((at, ids.node(node), fault));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::random_faults::materialize;

    /// A lock service with every generator, two of them on some nodes only, and fixed faults
    /// (one at a node's start, one a partition).
    fn scenario(seed: u64) -> Scenario {
        Scenario::from_ron(&format!(
            r#"Scenario(
                seed: {seed},
                duration: "10m",
                lease: (duration: "2s"),
                strategy: TwoSided(holder_margin: "10ms"),
                nodes: [
                    (name: "g", role: Grantor),
                    (name: "c1", role: Contender),
                    (name: "c2", role: Contender, start: "25ms"),
                ],
                faults: [
                    Pause(node: "c2", at: "25ms", duration: "300ms"),
                    Partition(at: "1s", duration: "2s", groups: [["c1"], ["g", "c2"]]),
                    Crash(node: "c1", at: "90s"),
                ],
                random_faults: [
                    Pauses(nodes: ["c1"], per_minute: 6.0, duration: Exponential(mean: "100ms")),
                    Partitions(per_hour: 120.0, duration: Exponential(mean: "1s")),
                    ClockSteps(nodes: ["c2"], per_hour: 60.0, by: Uniform(min: "-1s", max: "1s")),
                    Crashes(per_hour: 30.0, restart_after: Uniform(min: "1s", max: "5s")),
                    Partitions(nodes: ["g"], per_hour: 30.0, duration: Fixed("500ms")),
                ],
            )"#
        ))
        .expect("a valid scenario")
    }

    /// The schedule compiled whole, as the engine once queued it: starts, then every fault of
    /// `fault_schedule` (the fixed ones, then `materialize`'s), node faults sorted stably by
    /// time, network faults in list order.
    fn compiled_whole(s: &Scenario, ids: &Ids) -> (Vec<String>, Vec<String>) {
        let mut node_faults = Vec::new();
        for (i, c) in s.nodes.iter().enumerate() {
            node_faults.push((SimTime::from_ns(c.start.ns()), i, NodeFault::Start));
        }
        let mut net = Vec::new();
        for f in &s.fault_schedule() {
            let at = SimTime::from_ns(f.at().ns());
            match net_fault(ids, f, at) {
                Some(nf) => net.push(nf),
                None => node_fault(ids, f, at, &mut node_faults),
            }
        }
        node_faults.sort_by_key(|f| f.0);
        let node = node_faults.iter().map(|f| format!("{f:?}")).collect();
        (node, net.iter().map(|f| format!("{f:?}")).collect())
    }

    /// The lazy feed gives the node faults of the whole schedule in the order the whole
    /// schedule sorted gives them, and its network faults are those of the list (in the order
    /// of their places): for several seeds, so that the streams' merge, its tie rules and the
    /// hard-stop shares are the materialized schedule's.
    #[test]
    fn the_lazy_feed_gives_the_materialized_schedule() {
        for seed in [1, 2, 3, 290] {
            let s = scenario(seed);
            let ids = Ids::new(&s, &[]);
            let (want_node, want_net) = compiled_whole(&s, &ids);
            let Fixed {
                node_faults: fixed,
                net_faults: fixed_net,
                ..
            } = compile_fixed(&ids, &s);
            let mut feed = Feed::new(Ids::new(&s, &[]), &s, fixed);
            let mut node = Vec::new();
            let mut net: Vec<(u64, String)> = fixed_net
                .iter()
                .enumerate()
                .map(|(i, f)| (i as u64, format!("{f:?}")))
                .collect();
            while let Some(t) = feed.next_node_at() {
                // Network faults are handed out up to each node fault's time, in time order.
                let mut last = SimTime::ZERO;
                while let Some((f, order)) = feed.pop_net_by(t) {
                    let start = match &f {
                        NetFault::Partition { window, .. } => window.start,
                        _ => unreachable!("drawn network faults are partitions"),
                    };
                    assert!(
                        last <= start && start <= t,
                        "seed {seed}: {start:?} by {t:?}"
                    );
                    last = start;
                    net.push((order, format!("{f:?}")));
                }
                node.push(format!("{:?}", feed.pop_node().expect("one is due")));
            }
            while let Some((f, order)) = feed.pop_net_by(SimTime::from_ns(i64::MAX)) {
                net.push((order, format!("{f:?}")));
            }
            net.sort();
            let net: Vec<String> = net.into_iter().map(|(_, f)| f).collect();
            assert_eq!(node, want_node, "seed {seed}");
            assert_eq!(net, want_net, "seed {seed}");
            // Every generator drew: pauses, steps and crashes of 10 minutes, and partitions.
            assert!(materialize(&s).len() > 50, "seed {seed}");
        }
    }

    /// Faults at one instant are taken in the order the scenario lists them, however many
    /// there are: the schedule is sorted by time alone, stably, as the whole schedule was
    /// compiled and sorted at once (the module doc). 60 clock steps, listed at 2 s, 1 s, 3 s in
    /// turn, step c1 and c2 by 1, 2, ..., 60 ms, so each is told apart by its `by`. After the
    /// three starts at 0 (g, c1, c2 in list order) come the 20 steps at 1 s, by 2, 5, ..., 59
    /// ms (list positions 1, 4, ..., 58), then the 20 at 2 s, by 1, 4, ..., 58 ms, then the 20
    /// at 3 s, by 3, 6, ..., 60 ms. Simultaneous faults whose order changes an outcome (two
    /// steps of one node's clock, a crash and a restart) rest on this; a sort that reorders
    /// equal keys keeps a list of 20 or fewer in order, which small scenarios cannot tell apart.
    #[test]
    fn more_than_twenty_faults_at_one_instant_keep_their_list_order() {
        let faults: String = (0..60)
            .map(|i| {
                let at = ["2s", "1s", "3s"][i % 3];
                let node = ["c1", "c2"][i % 2];
                let by = i + 1;
                format!(r#"ClockStep(node: "{node}", at: "{at}", by: "{by}ms"),"#)
            })
            .collect();
        let s = Scenario::from_ron(&format!(
            r#"Scenario(
                duration: "10s",
                lease: (duration: "2s"),
                strategy: TwoSided(holder_margin: "10ms"),
                nodes: [
                    (name: "g", role: Grantor),
                    (name: "c1", role: Contender),
                    (name: "c2", role: Contender),
                ],
                faults: [{faults}],
            )"#
        ))
        .expect("a valid scenario");
        let ids = Ids::new(&s, &[]);
        let fixed = compile_fixed(&ids, &s).node_faults;
        let mut feed = Feed::new(Ids::new(&s, &[]), &s, fixed);
        let mut got = Vec::new();
        while let Some(f) = feed.pop_node() {
            got.push(f);
        }
        let mut want: Vec<(SimTime, NodeId, NodeFault)> = (0..3)
            .map(|n| (SimTime::ZERO, n, NodeFault::Start))
            .collect();
        for (secs, first) in [(1, 1), (2, 0), (3, 2)] {
            for i in (first..60).step_by(3) {
                let by = crate::time::LocalDur::from_ms(i as i64 + 1);
                let at = SimTime::from_ns(secs * 1_000_000_000);
                want.push((at, 1 + i % 2, NodeFault::ClockStep { by }));
            }
        }
        assert_eq!(got.len(), 63);
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
    }
}
