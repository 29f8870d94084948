//! Turning a validated [`Scenario`] into a runnable [`Sim`]: node ids, drift placement, the fault
//! schedule (fixed and drawn), the network, the workload streams and the initial events.

use super::draws::{Chunk, Drawer, DrawsOn, Helper, Stream};
use super::feed::{compile_fixed, Feed, Ids};
use super::node::{Node, TimerSlot};
use super::workload::Periodic;
use super::{Ev, EventQueue, Sim, Stats};
use crate::clock::{ErrorBound, NodeClock};
use crate::dist::Sampler;
use crate::net::{NetFault, Network};
use crate::oracle::authority::AuthorityOracles;
use crate::oracle::harm::Harm;
use crate::rng::{self, Component};
use crate::scenario::{DurationDist, Placement, Scenario};
use crate::strategy::{LeaseParams, MsgOf, Out, Protocol, ProtocolMessage, MAX_KINDS, MAX_TIMERS};
use crate::time::{DriftRate, Dur, SimTime};
use crate::trace::Observer;
use rand::RngExt;

/// A scenario that cannot run, with every problem found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .problems.join("\n"))]
pub struct BuildError {
    pub problems: Vec<String>,
}

/// Builds a run of `scenario` under `protocol`, told to `observer` if there is one. The scenario
/// must have passed [`crate::scenario::validate::validate_with`] for this protocol.
pub fn build<'o, P: Protocol>(
    scenario: &Scenario,
    protocol: &'o P,
    observer: Option<&'o mut (dyn Observer + 'static)>,
) -> Sim<'o, P> {
    let kind_names = <MsgOf<P> as ProtocolMessage>::KINDS;
    assert!(
        kind_names.len() <= MAX_KINDS,
        "a protocol has at most {MAX_KINDS} message kinds"
    );
    let drawn = scenario.with_drawn_times();
    let scenario = drawn.as_ref().unwrap_or(scenario);
    let ids = Ids::new(scenario, kind_names);
    let n = scenario.nodes.len();
    let fixed = compile_fixed(&ids, scenario);
    let net_faults_end = fixed.net_faults.iter().map(|f| f.window().end).max();
    let net = network(&ids, scenario, fixed.net_faults).with_transport(P::TRANSPORT);
    let mut queue = EventQueue::default();
    let syncs = scenario.clocks.uncertainty.map(|u| {
        for node in 0..n {
            queue.push(SimTime::ZERO + u.sync_every, Ev::Sync { node: node as u32 });
        }
        super::Syncs {
            every: u.sync_every,
            base: u.base,
            rngs: (0..n)
                .map(|i| rng::stream(scenario.seed, Component::Sync, i as u64))
                .collect(),
        }
    });
    let w = &scenario.workload;
    let lease = &scenario.lease;
    let mut nodes = nodes(scenario, protocol);
    let draws = DrawsOn::here()
        .helper(expected_arrivals(scenario, &nodes))
        .then(|| draws_ahead(&mut nodes, w.keys))
        .flatten();
    Sim {
        now: SimTime::ZERO,
        end: SimTime::from_ns(scenario.duration.ns()),
        max_events: scenario.limits.max_events,
        queue,
        arrivals: Default::default(),
        service: Default::default(),
        draws,
        nodes,
        clocks: clocks(scenario),
        net,
        oracle: {
            let mut o = AuthorityOracles::new(n, observer.is_some(), protocol.authorities());
            o.faults_until(net_faults_end.unwrap_or(SimTime::ZERO));
            o
        },
        harm: Harm::new(
            n,
            protocol.authorities().read == crate::strategy::Claim::Shared,
        ),
        failovers: Default::default(),
        seeking: vec![None; n],
        protocol,
        roles: scenario.nodes.iter().map(|c| c.role).collect(),
        params: LeaseParams {
            lease: lease.duration,
            renew_every: lease.renew_every(),
            retry_every: lease.retry_every,
            grantor_restart: lease.grantor_restart,
            fencing: scenario.resource.fencing,
            initial_leader: lease
                .initial_leader
                .as_deref()
                .and_then(|name| scenario.node_index(name)),
        },
        service_time: w.service_time,
        feed: Feed::new(ids, scenario, fixed.node_faults),
        anchors: super::moments::Anchors::new(
            fixed.anchored,
            n,
            observer.as_ref().is_some_and(|o| o.wants_moments()),
        ),
        out: Out::default(),
        audit: super::audit::Audit::new(n),
        run_token: 0,
        keys: w.keys,
        call_request: None,
        max_deferred: super::MAX_DEFERRED,
        stats: Stats {
            messages_sent: vec![0; kind_names.len()],
            ..Stats::default()
        },
        next_msg_id: 0,
        twins: std::collections::BTreeMap::new(),
        history_wanted: observer.as_ref().is_some_and(|o| o.wants_history()),
        refusal_tally: None,
        read_tally: None,
        observer,
        syncs,
        call_thread: crate::scenario::Thread::Worker,
        held_sends: None,
    }
}

/// Each node's clocks, at its drift as placed, with the error bound of `clocks.uncertainty` if
/// the scenario gives one.
fn clocks(scenario: &Scenario) -> Vec<NodeClock> {
    let drifts = place_drifts(scenario);
    scenario
        .nodes
        .iter()
        .zip(&drifts)
        .map(|(c, &d)| {
            let clock = NodeClock::new(d, c.offset);
            match &scenario.clocks.uncertainty {
                None => clock,
                Some(u) => clock.with_bound(ErrorBound {
                    base: u.base,
                    growth_ppt: DriftRate::from_ppm(u.growth_ppm)
                        .expect("validated growth")
                        .ppt,
                }),
            }
        })
        .collect()
}

/// The network: its delays (default and per link), loss, duplication and fault windows.
fn network(ids: &Ids, scenario: &Scenario, net_faults: Vec<NetFault>) -> Network {
    let sampler = |d: &DurationDist| Sampler::new(d).expect("validated distribution");
    let net_cfg = &scenario.network;
    let links = net_cfg
        .links
        .iter()
        .map(|l| (ids.node(&l.from), ids.node(&l.to), sampler(&l.delay)))
        .collect();
    Network::new(
        scenario.seed,
        scenario.nodes.len(),
        ids.kinds_len(),
        sampler(&net_cfg.delay),
        links,
        net_cfg.loss,
        net_cfg.duplicate,
        net_faults,
    )
}

/// Every node, not yet started, with its streams: its logic's own, and its client workload's
/// (requests go to the nodes whose role takes them, [`Protocol::takes_requests`]: by default
/// contenders and every replica, whose followers reject them).
fn nodes<P: Protocol>(scenario: &Scenario, protocol: &P) -> Vec<Node<P::Logic>> {
    let arrivals = |rate: f64, component: Component, node: usize| {
        (rate > 0.0).then(|| {
            let mean = Dur::from_ns(crate::dist::to_ns(1e9 / rate));
            Stream::Here(Drawer::new(
                Sampler::new(&DurationDist::Exponential { mean }).expect("mean >= 0"),
                rng::stream(scenario.seed, component, node as u64),
            ))
        })
    };
    let w = &scenario.workload;
    scenario
        .nodes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let contender = protocol.takes_requests(c.role);
            Node {
                role: c.role,
                logic: None,
                disk: None,
                disk_model: c.disk.as_ref().map(|d| {
                    let fsync = Sampler::new(&d.fsync).expect("validated fsync latency");
                    let rng = rng::stream(scenario.seed, Component::Disk, i as u64);
                    super::disk::Disk::new(fsync, rng)
                }),
                rng: rng::stream(scenario.seed, Component::Node, i as u64),
                life: 0,
                pause_depth: 0,
                stall_depth: 0,
                deferred: Vec::new(),
                thread_stalls: [0; 2],
                disk_waits: [0; 2],
                held: Vec::new(),
                timers: [TimerSlot::default(); MAX_TIMERS],
                started: false,
                reads: arrivals(w.reads_per_second, Component::Reads, i).filter(|_| contender),
                writes: arrivals(w.writes_per_second, Component::Writes, i).filter(|_| contender),
                ops: w.periodic.as_ref().filter(|_| contender).map(|o| Periodic {
                    every: o.every,
                    jitter: o.jitter,
                    write_every: o.write_every,
                    rng: rng::stream(scenario.seed, Component::Ops, i as u64),
                    next: 0,
                    start: SimTime::ZERO,
                }),
            }
        })
        .collect()
}

/// The Poisson arrivals a run of `scenario` is expected to have, over `nodes`' streams.
pub(super) fn expected_arrivals<L: crate::strategy::NodeLogic>(
    scenario: &Scenario,
    nodes: &[Node<L>],
) -> f64 {
    let w = &scenario.workload;
    let seconds = scenario.duration.ns() as f64 / 1e9;
    let per_second: f64 = nodes
        .iter()
        .map(|n| {
            let reads = n.reads.as_ref().map_or(0.0, |_| w.reads_per_second);
            reads + n.writes.as_ref().map_or(0.0, |_| w.writes_per_second)
        })
        .sum();
    per_second * seconds
}

/// Hands every stream of `nodes` to a helper thread that draws them ahead of the run (each
/// drawing keys among `keys`), leaving each node to read its own from the helper's chunks; if
/// the thread cannot be started, the streams stay as they are, drawn by the run.
fn draws_ahead<L: crate::strategy::NodeLogic>(nodes: &mut [Node<L>], keys: u32) -> Option<Helper> {
    let streams: Vec<&mut Stream> = nodes
        .iter_mut()
        .flat_map(|n| [n.reads.as_mut(), n.writes.as_mut()])
        .flatten()
        .collect();
    let drawers = streams
        .iter()
        .map(|stream| match stream {
            Stream::Here(drawer) => drawer.clone(),
            Stream::Fed { .. } => unreachable!("a stream is built to be drawn here"),
        })
        .collect();
    let helper = Helper::start(drawers, keys)?;
    for (index, stream) in streams.into_iter().enumerate() {
        *stream = Stream::Fed {
            index,
            chunk: Chunk::default(),
            read: 0,
        };
    }
    Some(helper)
}

/// Each node's drift: its own `drift_ppm`, or placed within `clocks.drift_spread_ppm` (rho).
pub(crate) fn place_drifts(s: &Scenario) -> Vec<DriftRate> {
    let rho = DriftRate::from_ppm(s.clocks.drift_spread_ppm).expect("validated spread");
    let half = rho.ppt / 2;
    s.nodes
        .iter()
        .enumerate()
        .map(|(i, c)| match c.drift_ppm {
            Some(ppm) => DriftRate::from_ppm(ppm).expect("validated drift"),
            None if half == 0 => DriftRate::ZERO,
            None => match s.clocks.placement {
                Placement::Random => {
                    let mut r = rng::stream(s.seed, Component::Drift, i as u64);
                    DriftRate {
                        ppt: r.random_range(-half..=half),
                    }
                }
                Placement::Adversarial => DriftRate {
                    ppt: if s.runs_fast_adversarially(i) {
                        half
                    } else {
                        -half
                    },
                },
            },
        })
        .collect()
}
