//! The network: per-message delay, loss and duplication, and the network faults of SPEC 2.4.
//!
//! At send time a message draws its delay (the link's override or the default distribution) from
//! the sender's stream for that message kind, then `Drop` windows, loss and `DelaySpike` windows
//! apply; duplication sends a second copy with its own delay. At delivery time a `Partition` or
//! `OneWay` cut that is active drops it. Fault windows are few and checked by a scan, so a message
//! costs the same whatever the length of the run.

use crate::dist::Sampler;
use crate::msg::{MsgKind, NodeId};
use crate::rng::{self, Component, Rng};
use crate::time::{Dur, SimTime};
use rand::RngExt;

/// A set of nodes, or every node.
#[derive(Clone, Debug, Default)]
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
    pub fn of(kinds: &[MsgKind]) -> KindSet {
        KindSet(kinds.iter().fold(0, |m, k| m | 1 << k.index()))
    }
    pub fn contains(self, k: MsgKind) -> bool {
        self.0 & (1 << k.index()) != 0
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
    fn applies(&self, from: NodeId, to: NodeId, kind: MsgKind) -> bool {
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
    send_faults: Vec<NetFault>,
    /// One stream per (sender, kind).
    rngs: Vec<Rng>,
}

impl Network {
    /// `links` are (from, to, delay) overrides; the first for a link wins.
    pub fn new(
        seed: u64,
        nodes: usize,
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
        let (cuts, send_faults) = faults
            .into_iter()
            .partition(|f| matches!(f, NetFault::Partition { .. } | NetFault::OneWay { .. }));
        let rngs = (0..nodes * MsgKind::COUNT)
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
            send_faults,
            rngs,
        }
    }

    /// Decides the fate of a message sent at `now`.
    pub fn send(&mut self, now: SimTime, from: NodeId, to: NodeId, kind: MsgKind) -> Fate {
        let sampler = match self.link[from * self.nodes + to] {
            Some(i) => &self.overrides[i as usize],
            None => &self.default,
        };
        let rng = &mut self.rngs[from * MsgKind::COUNT + kind.index()];
        let mut first = Some(sampler.sample(rng));
        let mut copy = None;
        if self.loss > 0.0 && rng.random::<f64>() < self.loss {
            first = None;
        }
        if self.duplicate > 0.0 && rng.random::<f64>() < self.duplicate {
            copy = Some(sampler.sample(rng));
        }
        let mut extra = Dur::ZERO;
        for f in &self.send_faults {
            match f {
                NetFault::Drop { window, which }
                    if window.contains(now) && which.applies(from, to, kind) =>
                {
                    return Fate {
                        first: None,
                        copy: None,
                    };
                }
                NetFault::DelaySpike {
                    window,
                    extra: e,
                    which,
                } if window.contains(now) && which.applies(from, to, kind) => extra += *e,
                _ => {}
            }
        }
        Fate {
            first: first.map(|d| d + extra),
            copy: copy.map(|d| d + extra),
        }
    }

    /// Whether the link from `from` to `to` is cut at `t` (a message arriving then is dropped).
    pub fn is_cut(&self, t: SimTime, from: NodeId, to: NodeId) -> bool {
        self.cuts.iter().any(|f| match f {
            NetFault::Partition { window, group } => {
                window.contains(t)
                    && matches!((group[from], group[to]), (Some(a), Some(b)) if a != b)
            }
            NetFault::OneWay {
                window,
                from: f,
                to: d,
            } => window.contains(t) && *f == from && *d == to,
            _ => false,
        })
    }
}
