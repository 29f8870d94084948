//! The network: per-message delay, loss and duplication, and the network faults (cuts, one-way
//! cuts, delay spikes, drops).
//!
//! At send time a message draws its delay (the link's override or the default distribution) from
//! the sender's stream for that message kind, then `Drop` windows, loss and `DelaySpike` windows
//! apply; duplication sends a second copy with its own delay. At delivery time a `Partition` or
//! `OneWay` cut that is active drops it.
//!
//! A run may hold any number of fault windows (random partitions make thousands), so they are
//! indexed by time, not scanned: a `Windows` index keeps them sorted by start, a cursor that moves
//! forward with the query time, and the windows active at the last query. Send-time faults and
//! cuts have an index each, because the first are asked at send time and the second at delivery
//! time; the engine's time never goes backward, so each is asked at non-decreasing times. A
//! message then costs the windows active at that instant, and each window is added and removed
//! once in the whole run, however many windows the run has. Speed must not change a message's
//! fate: active windows are visited in the order the faults are listed, as a scan of every window
//! visits them, so spikes add up and drops win exactly as before.

use crate::dist::Sampler;
use crate::msg::NodeId;
use crate::rng::{self, Component, Rng};
use crate::time::{Dur, SimTime};
use rand::RngExt;

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
    cuts: Vec<NetFault>,
    /// `cuts` by time, queried at delivery times.
    cut_windows: Windows,
    send_faults: Vec<NetFault>,
    /// `send_faults` by time, queried at send times.
    send_windows: Windows,
    /// For each fault as listed: whether it is a cut, and its index in `cuts` or
    /// `send_faults`.
    place: Vec<(bool, usize)>,
    /// How many message kinds the protocol has.
    kinds: usize,
    /// One stream per (sender, kind).
    rngs: Vec<Rng>,
}

impl Network {
    /// `links` are (from, to, delay) overrides; the first for a link wins.
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
        let mut place = Vec::with_capacity(faults.len());
        let (mut cuts, mut send_faults) = (Vec::new(), Vec::new());
        for f in faults {
            if matches!(f, NetFault::Partition { .. } | NetFault::OneWay { .. }) {
                place.push((true, cuts.len()));
                cuts.push(f);
            } else {
                place.push((false, send_faults.len()));
                send_faults.push(f);
            }
        }
        let cut_windows = Windows::new(cuts.iter().map(NetFault::window));
        let send_windows = Windows::new(send_faults.iter().map(NetFault::window));
        let rngs = (0..nodes * kinds)
            .map(|i| rng::stream(seed, Component::Network, i as u64))
            .collect();
        Network {
            nodes,
            default,
            link,
            overrides,
            loss,
            duplicate,
            cuts,
            cut_windows,
            send_faults,
            send_windows,
            place,
            kinds,
            rngs,
        }
    }

    /// Opens fault `index` (as listed, given closed: [`NetFault::closed`]) over `window`, which
    /// must not start before the engine's time (a fault placed at a protocol moment).
    pub fn open(&mut self, index: usize, window: Window) {
        let (cut, i) = self.place[index];
        let (faults, windows) = if cut {
            (&mut self.cuts, &mut self.cut_windows)
        } else {
            (&mut self.send_faults, &mut self.send_windows)
        };
        debug_assert!(
            faults[i].window().start >= faults[i].window().end,
            "opened once"
        );
        faults[i].set_window(window);
        windows.insert(window, i);
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
        for i in self.send_windows.active_at(now) {
            let f = &self.send_faults[i as usize];
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
        Fate {
            first: first.map(|d| d + extra),
            copy: copy.map(|d| d + extra),
        }
    }

    /// Whether the link from `from` to `to` is cut at `t` (a message arriving then is dropped).
    /// `t` must not be earlier than at the previous call (it is the engine's time).
    pub fn is_cut(&mut self, t: SimTime, from: NodeId, to: NodeId) -> bool {
        let cuts = &self.cuts;
        self.cut_windows
            .active_at(t)
            .any(|i| match &cuts[i as usize] {
                NetFault::Partition { group, .. } => {
                    matches!((group[from], group[to]), (Some(a), Some(b)) if a != b)
                }
                NetFault::OneWay { from: f, to: d, .. } => *f == from && *d == to,
                _ => false,
            })
    }
}

impl NetFault {
    /// The fault with an empty window: it never applies until it is opened.
    pub fn closed(mut self) -> NetFault {
        self.set_window(Window {
            start: SimTime::ZERO,
            end: SimTime::ZERO,
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

/// A list of windows indexed by time, for queries at non-decreasing times: which windows
/// contain `t`?
///
/// The windows are sorted by start; a cursor marks the first that had not started at the last
/// query, and `active` holds those that had started and not ended. A query moves the cursor past
/// the windows that start by then, adds them to `active`, and drops from `active` those that
/// have ended. Each window enters and leaves `active` once, so a run of queries costs the number
/// of windows plus, per query, the number active.
#[derive(Clone, Debug)]
struct Windows {
    /// (start, end, index in the fault list) by start; windows that contain no instant are left
    /// out.
    by_start: Vec<(SimTime, SimTime, u32)>,
    /// The first entry of `by_start` that had not started at the last query.
    next: usize,
    /// (index in the fault list, end) of the windows active at the last query, by index.
    active: Vec<(u32, SimTime)>,
    /// The time of the last query.
    last: SimTime,
    /// How many window entries queries have stepped over, in all (tests check that each window
    /// is stepped over once however many queries there are).
    #[cfg(test)]
    stepped: usize,
}

impl Windows {
    fn new(windows: impl Iterator<Item = Window>) -> Windows {
        let mut by_start: Vec<(SimTime, SimTime, u32)> = windows
            .enumerate()
            .filter(|(_, w)| w.start < w.end)
            .map(|(i, w)| {
                let i = u32::try_from(i).expect("fewer than 2^32 fault windows");
                (w.start, w.end, i)
            })
            .collect();
        by_start.sort_unstable_by_key(|&(start, _, i)| (start, i));
        Windows {
            by_start,
            next: 0,
            active: Vec::new(),
            last: SimTime::from_ns(i64::MIN),
            #[cfg(test)]
            stepped: 0,
        }
    }

    /// Adds window `w` of fault `i`, which starts no earlier than the last query.
    fn insert(&mut self, w: Window, i: usize) {
        debug_assert!(w.start >= self.last, "a window opened in the past");
        if w.start >= w.end {
            return;
        }
        let i = u32::try_from(i).expect("fewer than 2^32 fault windows");
        let key = (w.start, i);
        let at = self.next + self.by_start[self.next..].partition_point(|&(s, _, j)| (s, j) < key);
        self.by_start.insert(at, (w.start, w.end, i));
    }

    /// The indices, in list order, of the windows that contain `t` (`start <= t < end`). `t`
    /// should not be earlier than at the previous call; if it is, the index starts over from the
    /// first window, which gives the right answer slowly.
    fn active_at(&mut self, t: SimTime) -> impl Iterator<Item = u32> + '_ {
        debug_assert!(
            t >= self.last,
            "fault windows queried at {t:?} after {:?}",
            self.last
        );
        if t < self.last {
            self.next = 0;
            self.active.clear();
        }
        self.last = t;
        while let Some(&(start, end, i)) = self.by_start.get(self.next) {
            if start > t {
                break;
            }
            self.next += 1;
            #[cfg(test)]
            {
                self.stepped += 1;
            }
            if end > t {
                let at = self.active.partition_point(|&(j, _)| j < i);
                self.active.insert(at, (i, end));
            }
        }
        if !self.active.is_empty() {
            self.active.retain(|&(_, end)| end > t);
        }
        self.active.iter().map(|&(i, _)| i)
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
        let mut ws = Windows::new((0..100).map(|k| w(10 * k, 10 * k + 5)));
        for at in 0..1000 {
            let active: Vec<u32> = ws.active_at(t(at)).collect();
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
            let mut index = Windows::new(windows.iter().copied());
            let mut now = -3;
            for step in steps {
                now += step;
                let got: Vec<u32> = index.active_at(t(now)).collect();
                let want: Vec<u32> = (0..windows.len() as u32)
                    .filter(|&i| windows[i as usize].contains(t(now)))
                    .collect();
                prop_assert_eq!(got, want, "at {}", now);
            }
        }
    }
}
