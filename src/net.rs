//! The network: per-message delay, loss and duplication, and the network faults (cuts, one-way
//! cuts, delay spikes, drops).
//!
//! At send time a message draws its delay (the link's override or the default distribution) from
//! the sender's stream for that message kind, then `Drop` windows, loss and `DelaySpike` windows
//! apply; duplication sends a second copy with its own delay. At delivery time a `Partition` or
//! `OneWay` cut that is active drops it.
//!
//! The protocol's [`Transport`] says how the messages between two nodes are ordered: as
//! datagrams, each on its own (a later one may overtake an earlier), or as one stream per
//! ordered pair of nodes (TCP, a gRPC stream), where a message never arrives before one sent
//! earlier on the pair: it arrives at its drawn instant or with the one before it, whichever is
//! later, so a delayed message holds up those behind it. Loss and cuts still take single
//! messages on a stream (a connection that drops loses what was in flight; the next one carries
//! on), and what arrives behind a message a cut drops is not held back by it.
//!
//! A run may hold any number of fault windows (random partitions make thousands), so they are
//! indexed by time, not scanned, and forgotten once they end: a `Windows` index keeps those not
//! yet started in a heap by start and those active at the last query in a list, and the engine
//! hands it the drawn ones as the run reaches their start. Send-time faults and cuts have an index
//! each, because the first are asked at send time and the second at delivery time; the engine's
//! time never goes backward, so each is asked at non-decreasing times. A message then costs the
//! windows active at that instant, and each window is added and removed once, in O(log n), however
//! many windows the run has; what the network holds is the windows pending and active, not the
//! run's past. Speed must not change a message's fate: active windows are visited in the order the
//! faults are listed (each window carries its place in that order), as a scan of every window
//! visits them, so spikes add up and drops win exactly as before.

use crate::dist::Sampler;
use crate::msg::NodeId;
use crate::rng::{self, Component, Rng};
use crate::time::{Dur, SimTime};
use rand::RngExt;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A set of nodes, or every node.
#[derive(Clone, Debug)]
pub struct NodeSet(Option<Vec<bool>>);

impl NodeSet {
    pub fn all() -> NodeSet {
        NodeSet(None)
    }
    pub fn of(nodes: &[NodeId], n: usize) -> NodeSet {
        let mut v = vec![false; n];
        for &i in nodes {
            v[i] = true;
        }
        NodeSet(Some(v))
    }
    pub fn contains(&self, node: NodeId) -> bool {
        self.0.as_ref().is_none_or(|v| v[node])
    }
}

/// A set of message kinds, or every kind.
#[derive(Clone, Copy, Debug)]
pub struct KindSet(u32);

impl KindSet {
    pub fn all() -> KindSet {
        KindSet(u32::MAX)
    }
    /// The kinds with these indices (each below [`crate::strategy::MAX_KINDS`]).
    pub fn of(kinds: impl IntoIterator<Item = usize>) -> KindSet {
        KindSet(kinds.into_iter().fold(0, |m, k| m | 1 << k))
    }
    pub fn contains(self, k: usize) -> bool {
        self.0 & (1 << k) != 0
    }
}

/// Which messages a window applies to.
#[derive(Clone, Debug)]
pub struct Match {
    pub from: NodeSet,
    pub to: NodeSet,
    pub kinds: KindSet,
}

impl Match {
    fn applies(&self, from: NodeId, to: NodeId, kind: usize) -> bool {
        self.kinds.contains(kind) && self.from.contains(from) && self.to.contains(to)
    }
}

/// A window [start, end) of true time.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub start: SimTime,
    pub end: SimTime,
}

impl Window {
    fn contains(&self, t: SimTime) -> bool {
        self.start <= t && t < self.end
    }
}

/// A network fault, compiled to node ids.
#[derive(Clone, Debug)]
pub enum NetFault {
    /// `group[n]` is the group of node n, or `None` for a node in no group (reaches everyone).
    Partition {
        window: Window,
        group: Vec<Option<u16>>,
    },
    OneWay {
        window: Window,
        from: NodeId,
        to: NodeId,
    },
    DelaySpike {
        window: Window,
        extra: Dur,
        which: Match,
    },
    Drop {
        window: Window,
        which: Match,
    },
}

/// How a protocol's transport orders the messages from one node to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Transport {
    /// Each message on its own: a later message may arrive before an earlier one.
    #[default]
    Datagram,
    /// One ordered stream per pair: no message arrives before one sent earlier from the same
    /// sender to the same receiver.
    Stream,
}

/// What happens to one message at send time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fate {
    /// Delay of the message, or `None` if it is dropped at send time.
    pub first: Option<Dur>,
    /// Delay of a duplicate, if one is made.
    pub copy: Option<Dur>,
}

/// The network model of one run.
pub struct Network {
    nodes: usize,
    default: Sampler,
    /// `link[from * nodes + to]`: index into `overrides`, if that link has its own delay.
    link: Vec<Option<u16>>,
    overrides: Vec<Sampler>,
    loss: f64,
    duplicate: f64,
    /// Partitions and one-way cuts by time, queried at delivery times.
    cuts: Windows,
    /// Delay spikes and drops by time, queried at send times.
    send_faults: Windows,
    /// How many message kinds the protocol has.
    kinds: usize,
    /// One stream per (sender, kind).
    rngs: Vec<Rng>,
    /// With a [`Transport::Stream`]: `last[from * nodes + to]`, the latest instant a message
    /// sent on that pair arrives (a message sent later arrives no earlier).
    last: Option<Vec<SimTime>>,
    /// One stream per refusing node, for the delays of refusals ([`Network::refusal_delay`]).
    refusal_rngs: Vec<Rng>,
}

impl Network {
    /// `links` are (from, to, delay) overrides; the first for a link wins. `faults` are the
    /// fixed faults, in list order (more may be added as the run reaches them: [`Network::add`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        seed: u64,
        nodes: usize,
        kinds: usize,
        default: Sampler,
        links: Vec<(NodeId, NodeId, Sampler)>,
        loss: f64,
        duplicate: f64,
        faults: Vec<NetFault>,
    ) -> Network {
        let mut link = vec![None; nodes * nodes];
        let mut overrides = Vec::new();
        for (from, to, s) in links {
            let slot = &mut link[from * nodes + to];
            if slot.is_none() {
                *slot = Some(overrides.len() as u16);
                overrides.push(s);
            }
        }
        let rngs = (0..nodes * kinds)
            .map(|i| rng::stream(seed, Component::Network, i as u64))
            .collect();
        let refusal_rngs = (0..nodes)
            .map(|i| rng::stream(seed, Component::Refusal, i as u64))
            .collect();
        let mut net = Network {
            nodes,
            default,
            link,
            overrides,
            loss,
            duplicate,
            cuts: Windows::default(),
            send_faults: Windows::default(),
            kinds,
            rngs,
            last: None,
            refusal_rngs,
        };
        for (i, f) in faults.into_iter().enumerate() {
            net.add(f, i as u64);
        }
        net
    }

    /// The network with `transport`'s ordering (datagrams unless told).
    pub fn with_transport(mut self, transport: Transport) -> Network {
        self.last = match transport {
            Transport::Datagram => None,
            Transport::Stream => Some(vec![SimTime::ZERO; self.nodes * self.nodes]),
        };
        self
    }

    /// Adds fault `f`, `order` being its place in the list of every fault (visits of active
    /// windows go by it). Its window must not start before the last query of its kind (the
    /// engine adds a drawn fault before the first event at or after its start).
    pub fn add(&mut self, f: NetFault, order: u64) {
        match f {
            NetFault::Partition { .. } | NetFault::OneWay { .. } => self.cuts.add(f, order),
            NetFault::DelaySpike { .. } | NetFault::Drop { .. } => self.send_faults.add(f, order),
        }
    }

    /// How many windows the network holds (pending and active), for tests of its memory.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.cuts.held() + self.send_faults.held()
    }

    /// Decides the fate of a message of kind `kind` (an index into the protocol's kinds).
    pub fn send(&mut self, now: SimTime, from: NodeId, to: NodeId, kind: usize) -> Fate {
        let sampler = match self.link[from * self.nodes + to] {
            Some(i) => &self.overrides[i as usize],
            None => &self.default,
        };
        let rng = &mut self.rngs[from * self.kinds + kind];
        let mut first = Some(sampler.sample(rng));
        let mut copy = None;
        if self.loss > 0.0 && rng.random::<f64>() < self.loss {
            first = None;
        }
        if self.duplicate > 0.0 && rng.random::<f64>() < self.duplicate {
            copy = Some(sampler.sample(rng));
        }
        let mut extra = Dur::ZERO;
        for f in self.send_faults.active_at(now) {
            debug_assert!(f.window().contains(now));
            match f {
                NetFault::Drop { which, .. } if which.applies(from, to, kind) => {
                    return Fate {
                        first: None,
                        copy: None,
                    };
                }
                NetFault::DelaySpike {
                    extra: e, which, ..
                } if which.applies(from, to, kind) => extra += *e,
                _ => {}
            }
        }
        let mut fate = Fate {
            first: first.map(|d| d + extra),
            copy: copy.map(|d| d + extra),
        };
        if let Some(last) = &mut self.last {
            let last = &mut last[from * self.nodes + to];
            for d in [&mut fate.first, &mut fate.copy].into_iter().flatten() {
                let arrives = (now + *d).max(*last);
                *last = arrives;
                *d = arrives.since(now);
            }
        }
        fate
    }

    /// The delay of a refusal that node `from` (whose process is down) sends back to `to`: one
    /// draw of the link from `from` to `to` (its override or the default distribution), as a
    /// message on it would take, from `from`'s own refusal stream. Loss, drops, spikes and
    /// duplication do not apply (a reset is one segment, sent once); a cut active when it
    /// arrives still loses it. The stream is its own, so runs without refusals draw as before.
    pub fn refusal_delay(&mut self, from: NodeId, to: NodeId) -> Dur {
        let sampler = match self.link[from * self.nodes + to] {
            Some(i) => &self.overrides[i as usize],
            None => &self.default,
        };
        sampler.sample(&mut self.refusal_rngs[from])
    }

    /// Whether the link from `from` to `to` is cut at `t` (a message arriving then is dropped).
    /// `t` must not be earlier than at the previous call (it is the engine's time).
    pub fn is_cut(&mut self, t: SimTime, from: NodeId, to: NodeId) -> bool {
        self.cuts.active_at(t).any(|f| match f {
            NetFault::Partition { group, .. } => {
                matches!((group[from], group[to]), (Some(a), Some(b)) if a != b)
            }
            NetFault::OneWay { from: f, to: d, .. } => *f == from && *d == to,
            _ => false,
        })
    }
}

impl NetFault {
    /// The fault with an empty window, which never applies: it keeps its place in the list of
    /// faults for one placed at a protocol moment.
    pub fn placeholder(mut self) -> NetFault {
        self.set_window(Window {
            start: SimTime::ZERO,
            end: SimTime::ZERO,
        });
        self
    }

    /// The fault moved to start at `start`, as long as before (a fault placed at a protocol
    /// moment, compiled at time zero).
    pub fn moved_to(mut self, start: SimTime) -> NetFault {
        let w = self.window();
        let length = w.end.since(w.start);
        self.set_window(Window {
            start,
            end: start + length,
        });
        self
    }

    fn set_window(&mut self, w: Window) {
        match self {
            NetFault::Partition { window, .. }
            | NetFault::OneWay { window, .. }
            | NetFault::DelaySpike { window, .. }
            | NetFault::Drop { window, .. } => *window = w,
        }
    }

    /// When the fault applies.
    pub fn window(&self) -> Window {
        match self {
            NetFault::Partition { window, .. }
            | NetFault::OneWay { window, .. }
            | NetFault::DelaySpike { window, .. }
            | NetFault::Drop { window, .. } => *window,
        }
    }
}

/// Fault windows indexed by time, for queries at non-decreasing times: which windows contain
/// `t`?
///
/// Windows not yet started wait in a heap by start; `active` holds, by list order, those that
/// had started and not ended at the last query. A query takes off the heap the windows that
/// start by then, adds those not already over to `active`, and drops from `active` those that
/// have ended: an ended window is forgotten. Each window enters and leaves once, so a run of
/// queries costs O(log n) per window plus, per query, the number active.
#[derive(Debug, Default)]
struct Windows {
    /// The windows not yet started at the last query, earliest start first; windows that
    /// contain no instant are left out.
    pending: BinaryHeap<Pending>,
    /// (order, end, fault) of the windows active at the last query, by order.
    active: Vec<(u64, SimTime, NetFault)>,
    /// The time of the last query.
    last: Option<SimTime>,
    /// How many windows queries have taken off the heap, in all (tests check that each window
    /// is stepped over once however many queries there are).
    #[cfg(test)]
    stepped: usize,
}

/// A window not yet started: its fault and its place in the list of faults.
#[derive(Debug)]
struct Pending {
    start: SimTime,
    order: u64,
    fault: NetFault,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Pending) -> bool {
        (self.start, self.order) == (other.start, other.order)
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Pending) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Reversed, so that the standard max-heap gives the earliest start (then the first listed).
impl Ord for Pending {
    fn cmp(&self, other: &Pending) -> Ordering {
        (other.start, other.order).cmp(&(self.start, self.order))
    }
}

impl Windows {
    /// Adds `fault`, `order` being its place in the list of faults. A window that contains no
    /// instant is left out.
    fn add(&mut self, fault: NetFault, order: u64) {
        let w = fault.window();
        debug_assert!(
            self.last.is_none_or(|last| w.start >= last),
            "a fault window added at {:?}, before the last query at {:?}",
            w.start,
            self.last
        );
        if w.start < w.end {
            self.pending.push(Pending {
                start: w.start,
                order,
                fault,
            });
        }
    }

    /// The windows (their faults), in list order, that contain `t` (`start <= t < end`). `t`
    /// must not be earlier than at the previous call: ended windows are forgotten.
    fn active_at(&mut self, t: SimTime) -> impl Iterator<Item = &NetFault> + '_ {
        assert!(
            self.last.is_none_or(|last| t >= last),
            "fault windows queried at {t:?} after {:?}",
            self.last
        );
        self.last = Some(t);
        while self.pending.peek().is_some_and(|p| p.start <= t) {
            let p = self.pending.pop().expect("peeked");
            #[cfg(test)]
            {
                self.stepped += 1;
            }
            let end = p.fault.window().end;
            if end > t {
                let at = self.active.partition_point(|&(j, _, _)| j < p.order);
                self.active.insert(at, (p.order, end, p.fault));
            }
        }
        if !self.active.is_empty() {
            self.active.retain(|&(_, end, _)| end > t);
        }
        self.active.iter().map(|(_, _, f)| f)
    }

    /// How many windows it holds, pending and active.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.pending.len() + self.active.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::DurationDist;
    use proptest::prelude::*;

    /// The tests' protocol has six message kinds, as the base protocol does.
    const KINDS: usize = 6;
    const RENEW: usize = 2;
    const WRITE: usize = 5;

    fn t(ns: i64) -> SimTime {
        SimTime::from_ns(ns)
    }

    fn w(start: i64, end: i64) -> Window {
        Window {
            start: t(start),
            end: t(end),
        }
    }

    fn every() -> Match {
        Match {
            from: NodeSet::all(),
            to: NodeSet::all(),
            kinds: KindSet::all(),
        }
    }

    fn spike(start: i64, end: i64, extra: i64) -> NetFault {
        NetFault::DelaySpike {
            window: w(start, end),
            extra: Dur::from_ns(extra),
            which: every(),
        }
    }

    /// Three nodes, every delay 100 ns, no loss or duplication.
    fn fixed(faults: Vec<NetFault>) -> Network {
        let d = Sampler::new(&DurationDist::Fixed(Dur::from_ns(100))).unwrap();
        Network::new(7, 3, KINDS, d, Vec::new(), 0.0, 0.0, faults)
    }

    fn delay(net: &mut Network, at: i64) -> Option<Dur> {
        let fate = net.send(t(at), 0, 1, RENEW);
        assert_eq!(fate.copy, None);
        fate.first
    }

    #[test]
    fn window_is_closed_at_start_and_open_at_end() {
        let mut net = fixed(vec![spike(1_000, 2_000, 7)]);
        assert_eq!(delay(&mut net, 999), Some(Dur::from_ns(100)));
        assert_eq!(delay(&mut net, 1_000), Some(Dur::from_ns(107)));
        assert_eq!(delay(&mut net, 1_999), Some(Dur::from_ns(107)));
        assert_eq!(delay(&mut net, 2_000), Some(Dur::from_ns(100)));
    }

    #[test]
    fn overlapping_spikes_add_up() {
        // [0, 10) +3, [5, 20) +4, [5, 6) +50.
        let mut net = fixed(vec![spike(0, 10, 3), spike(5, 20, 4), spike(5, 6, 50)]);
        assert_eq!(delay(&mut net, 4), Some(Dur::from_ns(100 + 3)));
        assert_eq!(delay(&mut net, 5), Some(Dur::from_ns(100 + 3 + 4 + 50)));
        assert_eq!(delay(&mut net, 5), Some(Dur::from_ns(100 + 3 + 4 + 50)));
        assert_eq!(delay(&mut net, 6), Some(Dur::from_ns(100 + 3 + 4)));
        assert_eq!(delay(&mut net, 10), Some(Dur::from_ns(100 + 4)));
        assert_eq!(delay(&mut net, 19), Some(Dur::from_ns(100 + 4)));
        assert_eq!(delay(&mut net, 20), Some(Dur::from_ns(100)));
    }

    #[test]
    fn on_a_stream_a_late_message_holds_up_those_behind_it_on_its_pair_only() {
        // Delays 100 ns; a spike of +1000 ns on [10, 11). Sent at 10 (arrives 1110), then at
        // 20, 30: due at 120 and 130, they arrive with it, at 1110 (delays 1090 and 1080).
        let mut net = fixed(vec![spike(10, 11, 1_000)]).with_transport(Transport::Stream);
        assert_eq!(delay(&mut net, 10), Some(Dur::from_ns(1_100)));
        assert_eq!(delay(&mut net, 20), Some(Dur::from_ns(1_090)));
        assert_eq!(delay(&mut net, 30), Some(Dur::from_ns(1_080)));
        // The reverse pair and another receiver have streams of their own: on time.
        assert_eq!(net.send(t(40), 1, 0, RENEW).first, Some(Dur::from_ns(100)));
        assert_eq!(net.send(t(40), 0, 2, RENEW).first, Some(Dur::from_ns(100)));
        // Sent at 1010, due at 1110 with the last one: it arrives then (after it, by the
        // queue's order of pushes); at 1020, on time again.
        assert_eq!(delay(&mut net, 1_010), Some(Dur::from_ns(100)));
        assert_eq!(delay(&mut net, 1_020), Some(Dur::from_ns(100)));
        // As datagrams, each message on its own: the ones behind overtake it.
        let mut net = fixed(vec![spike(10, 11, 1_000)]);
        assert_eq!(delay(&mut net, 10), Some(Dur::from_ns(1_100)));
        assert_eq!(delay(&mut net, 20), Some(Dur::from_ns(100)));
    }

    #[test]
    fn a_drop_beats_spikes_listed_before_or_after_it() {
        let drop = |start, end| NetFault::Drop {
            window: w(start, end),
            which: every(),
        };
        let mut net = fixed(vec![spike(0, 100, 5), drop(10, 20), spike(0, 100, 6)]);
        assert_eq!(delay(&mut net, 9), Some(Dur::from_ns(111)));
        assert_eq!(delay(&mut net, 10), None);
        assert_eq!(delay(&mut net, 19), None);
        assert_eq!(delay(&mut net, 20), Some(Dur::from_ns(111)));
    }

    #[test]
    fn a_drop_of_other_kinds_lets_the_message_through() {
        let mut net = fixed(vec![NetFault::Drop {
            window: w(0, 10),
            which: Match {
                from: NodeSet::all(),
                to: NodeSet::all(),
                kinds: KindSet::of([WRITE]),
            },
        }]);
        assert_eq!(delay(&mut net, 5), Some(Dur::from_ns(100)));
        assert_eq!(net.send(t(5), 0, 1, WRITE).first, None);
    }

    #[test]
    fn a_fault_on_some_links_leaves_the_others_alone() {
        // A drop of 1 -> 0 only, and a +7 ns spike of messages from 2 only, kinds listed twice.
        let mut net = fixed(vec![
            NetFault::Drop {
                window: w(0, 10),
                which: Match {
                    from: NodeSet::of(&[1], 3),
                    to: NodeSet::of(&[0], 3),
                    kinds: KindSet::of([RENEW, RENEW]),
                },
            },
            NetFault::DelaySpike {
                window: w(0, 10),
                extra: Dur::from_ns(7),
                which: Match {
                    from: NodeSet::of(&[2], 3),
                    to: NodeSet::all(),
                    kinds: KindSet::of([RENEW, WRITE, RENEW]),
                },
            },
        ]);
        assert_eq!(net.send(t(5), 1, 0, RENEW).first, None);
        assert_eq!(net.send(t(5), 0, 1, RENEW).first, Some(Dur::from_ns(100)));
        assert_eq!(net.send(t(5), 1, 2, RENEW).first, Some(Dur::from_ns(100)));
        assert_eq!(net.send(t(5), 2, 0, RENEW).first, Some(Dur::from_ns(107)));
        assert_eq!(net.send(t(5), 2, 1, WRITE).first, Some(Dur::from_ns(107)));
        assert_eq!(net.send(t(5), 1, 0, WRITE).first, Some(Dur::from_ns(100)));
    }

    #[test]
    fn each_window_is_stepped_over_once_by_queries_at_rising_times() {
        // 100 windows [10k, 10k + 5): 1000 queries at 0, 1, ..., 999 step over each once, and
        // a repeated query at one instant steps over none.
        let mut ws = index((0..100).map(|k| w(10 * k, 10 * k + 5)));
        for at in 0..1000 {
            let active = active(&mut ws, at);
            let want: Vec<u32> = if at % 10 < 5 {
                vec![(at / 10) as u32]
            } else {
                vec![]
            };
            assert_eq!(active, want, "at {at}");
            assert_eq!(ws.active_at(t(at)).count(), want.len());
        }
        assert_eq!(ws.stepped, 100);
    }

    /// The windows of `windows`, each the `Drop` of every message, its order its place.
    fn index(windows: impl Iterator<Item = Window>) -> Windows {
        let mut ws = Windows::default();
        for (i, window) in windows.enumerate() {
            let which = every();
            ws.add(NetFault::Drop { window, which }, i as u64);
        }
        ws
    }

    /// The places of the windows active at `at`, in the order they are visited.
    fn active(ws: &mut Windows, at: i64) -> Vec<u32> {
        let faults: Vec<Window> = ws.active_at(t(at)).map(NetFault::window).collect();
        let orders: Vec<u32> = ws.active.iter().map(|&(i, _, _)| i as u32).collect();
        assert_eq!(faults.len(), orders.len());
        orders
    }

    #[test]
    fn ended_windows_are_forgotten_and_drawn_ones_join_in_order() {
        // Fixed: [0, 10) and [100, 200) at places 0 and 1. At 50 the first has ended: the
        // network holds one window (the second, pending). Then a window drawn at 150 for
        // [150, 160) (place 7) and one at 150 for [150, 400) (place 5) are added: at 150 all
        // three (1, 5, 7) are active, visited by place; at 199 two (1, 5); at 300 one (5), and
        // the network holds one; at 400 none, and it holds none.
        let mut net = fixed(vec![spike(0, 10, 1), spike(100, 200, 2)]);
        assert_eq!(net.held(), 2);
        assert_eq!(delay(&mut net, 5), Some(Dur::from_ns(101)));
        assert_eq!(delay(&mut net, 50), Some(Dur::from_ns(100)));
        assert_eq!(net.held(), 1);
        net.add(spike(150, 160, 7_000), 7);
        net.add(spike(150, 400, 500), 5);
        assert_eq!(
            delay(&mut net, 150),
            Some(Dur::from_ns(100 + 2 + 500 + 7_000))
        );
        let places: Vec<u64> = net.send_faults.active.iter().map(|a| a.0).collect();
        assert_eq!(places, [1, 5, 7]);
        assert_eq!(delay(&mut net, 199), Some(Dur::from_ns(100 + 2 + 500)));
        assert_eq!(delay(&mut net, 300), Some(Dur::from_ns(100 + 500)));
        assert_eq!(net.held(), 1);
        assert_eq!(delay(&mut net, 400), Some(Dur::from_ns(100)));
        assert_eq!(net.held(), 0);
    }

    #[test]
    fn empty_windows_are_never_active() {
        let mut net = fixed(vec![spike(5, 5, 1), spike(9, 3, 1)]);
        for at in 0..12 {
            assert_eq!(delay(&mut net, at), Some(Dur::from_ns(100)), "at {at}");
        }
    }

    #[test]
    fn cuts_hold_from_start_to_end_and_one_way_cuts_one_direction() {
        let mut net = fixed(vec![
            NetFault::Partition {
                window: w(10, 20),
                group: vec![Some(0), Some(1), None],
            },
            NetFault::OneWay {
                window: w(15, 30),
                from: 2,
                to: 0,
            },
        ]);
        assert!(!net.is_cut(t(9), 0, 1));
        assert!(net.is_cut(t(10), 0, 1));
        assert!(net.is_cut(t(10), 1, 0));
        // A node in no group reaches everyone.
        assert!(!net.is_cut(t(10), 0, 2));
        assert!(!net.is_cut(t(14), 2, 0));
        assert!(net.is_cut(t(15), 2, 0));
        assert!(!net.is_cut(t(15), 0, 2));
        assert!(net.is_cut(t(19), 1, 0));
        assert!(!net.is_cut(t(20), 1, 0));
        assert!(net.is_cut(t(29), 2, 0));
        assert!(!net.is_cut(t(30), 2, 0));
    }

    #[test]
    fn a_long_window_outlives_many_short_ones() {
        let mut faults = vec![spike(0, 1_000, 1)];
        faults.extend((0..100).map(|i| spike(i * 10, i * 10 + 1, 1_000)));
        let mut net = fixed(faults);
        for at in (0..1_000).step_by(5) {
            let short = if at % 10 == 0 { 1_000 } else { 0 };
            assert_eq!(
                delay(&mut net, at),
                Some(Dur::from_ns(100 + 1 + short)),
                "at {at}"
            );
        }
        assert_eq!(delay(&mut net, 1_000), Some(Dur::from_ns(100)));
    }

    #[test]
    fn sends_and_cuts_keep_their_own_cursors() {
        // Cuts are asked at delivery times, later than the send times asked between them.
        let mut net = fixed(vec![
            spike(0, 10, 2),
            NetFault::OneWay {
                window: w(0, 10),
                from: 0,
                to: 1,
            },
        ]);
        assert!(net.is_cut(t(9), 0, 1));
        assert_eq!(delay(&mut net, 0), Some(Dur::from_ns(102)));
        assert!(!net.is_cut(t(10), 0, 1));
        assert_eq!(delay(&mut net, 9), Some(Dur::from_ns(102)));
        assert_eq!(delay(&mut net, 10), Some(Dur::from_ns(100)));
    }

    /// The semantics as a scan of every window: the extra delay at `now`, or `None` if a `Drop`
    /// applies.
    fn scan_send(
        faults: &[NetFault],
        now: SimTime,
        from: NodeId,
        to: NodeId,
        kind: usize,
    ) -> Option<Dur> {
        let mut extra = Dur::ZERO;
        for f in faults {
            match f {
                NetFault::Drop { window, which }
                    if window.contains(now) && which.applies(from, to, kind) =>
                {
                    return None
                }
                NetFault::DelaySpike {
                    window,
                    extra: e,
                    which,
                } if window.contains(now) && which.applies(from, to, kind) => extra += *e,
                _ => {}
            }
        }
        Some(extra)
    }

    fn scan_cut(faults: &[NetFault], now: SimTime, from: NodeId, to: NodeId) -> bool {
        faults.iter().any(|f| match f {
            NetFault::Partition { window, group } => {
                window.contains(now)
                    && matches!((group[from], group[to]), (Some(a), Some(b)) if a != b)
            }
            NetFault::OneWay {
                window,
                from: f,
                to: d,
            } => window.contains(now) && *f == from && *d == to,
            _ => false,
        })
    }

    const NODES: usize = 4;

    fn node_set() -> impl Strategy<Value = NodeSet> {
        prop_oneof![
            Just(NodeSet::all()),
            proptest::collection::vec(0..NODES, 0..3).prop_map(|v| NodeSet::of(&v, NODES)),
        ]
    }

    fn which() -> impl Strategy<Value = Match> {
        let kinds = prop_oneof![
            Just(KindSet::all()),
            proptest::collection::vec(0..KINDS, 0..3).prop_map(KindSet::of),
        ];
        (node_set(), node_set(), kinds).prop_map(|(from, to, kinds)| Match { from, to, kinds })
    }

    /// Windows in [0, 200) of up to 40 ns, some empty and some inverted.
    fn window() -> impl Strategy<Value = Window> {
        (0i64..200, -5i64..40).prop_map(|(start, len)| w(start, start + len))
    }

    fn fault() -> impl Strategy<Value = NetFault> {
        // Extras are small, or huge so that sums saturate; validation keeps them non-negative, but
        // `Network` adds them in list order whatever their sign, and then the order shows.
        let extra = prop_oneof![
            0i64..50,
            Just(i64::MAX / 2),
            Just(i64::MAX),
            Just(-(i64::MAX / 2)),
        ]
        .prop_map(Dur::from_ns);
        prop_oneof![
            (
                window(),
                proptest::collection::vec(proptest::option::of(0u16..3), NODES)
            )
                .prop_map(|(window, group)| NetFault::Partition { window, group }),
            (window(), 0..NODES, 0..NODES).prop_map(|(window, from, to)| NetFault::OneWay {
                window,
                from,
                to
            }),
            (window(), extra, which()).prop_map(|(window, extra, which)| NetFault::DelaySpike {
                window,
                extra,
                which
            }),
            (window(), which()).prop_map(|(window, which)| NetFault::Drop { window, which }),
        ]
    }

    /// Queries: (time step, is it a cut query, from, to, kind).
    fn queries() -> impl Strategy<Value = Vec<(i64, bool, NodeId, NodeId, usize)>> {
        proptest::collection::vec(
            (
                prop_oneof![Just(0i64), 0i64..4, 0i64..30],
                any::<bool>(),
                0..NODES,
                0..NODES,
                0..KINDS,
            ),
            0..300,
        )
    }

    fn sampler() -> Sampler {
        Sampler::new(&DurationDist::Uniform {
            min: Dur::from_ns(1),
            max: Dur::from_ns(1_000),
        })
        .unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// The index gives every message the fate a scan of every window gives it.
        #[test]
        fn index_agrees_with_a_scan(
            faults in proptest::collection::vec(fault(), 0..40),
            queries in queries(),
            seed in any::<u64>(),
            lossy in any::<bool>(),
        ) {
            let (loss, dup) = if lossy { (0.2, 0.3) } else { (0.0, 0.0) };
            let mut net = Network::new(seed, NODES, KINDS, sampler(), Vec::new(), loss, dup, faults.clone());
            // Same streams, no faults: the draws the faults then act on.
            let mut bare = Network::new(seed, NODES, KINDS, sampler(), Vec::new(), loss, dup, Vec::new());
            let (mut send_at, mut cut_at) = (0, 0);
            for (step, cut, from, to, kind) in queries {
                if cut {
                    cut_at += step;
                    let now = t(cut_at);
                    prop_assert_eq!(net.is_cut(now, from, to), scan_cut(&faults, now, from, to));
                } else {
                    send_at += step;
                    let now = t(send_at);
                    let got = net.send(now, from, to, kind);
                    let base = bare.send(now, from, to, kind);
                    let want = match scan_send(&faults, now, from, to, kind) {
                        None => Fate { first: None, copy: None },
                        Some(extra) => Fate {
                            first: base.first.map(|d| d + extra),
                            copy: base.copy.map(|d| d + extra),
                        },
                    };
                    prop_assert_eq!(got, want, "send at {:?}", now);
                }
            }
        }

        /// The index on its own: the active windows at each time, in list order.
        #[test]
        fn windows_are_those_that_contain_the_time(
            windows in proptest::collection::vec(window(), 0..60),
            steps in proptest::collection::vec(0i64..8, 0..100),
        ) {
            let mut ws = index(windows.iter().copied());
            let mut now = -3;
            for step in steps {
                now += step;
                let got = active(&mut ws, now);
                let want: Vec<u32> = (0..windows.len() as u32)
                    .filter(|&i| windows[i as usize].contains(t(now)))
                    .collect();
                prop_assert_eq!(got, want, "at {}", now);
            }
        }
    }
}
