//! Property tests over random scenarios: determinism, safety of `TwoSided` with a margin that
//! covers the drift, the closed form of the cut-off holder's overlap, and its monotonicity in the
//! holder's margin.
//!
//! Scenarios are written as RON text, so that a failing case prints a scenario file that
//! `leasesim run` replays. Nodes are `g` (the grantor) and `c0`, `c1`, ... (contenders), except in
//! the closed-form family, which uses `g`, `h` and `b`.

use crate::common::*;
use leasesim::time::format_ns;
use leasesim::{Scenario, Summary};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

// ---------------------------------------------------------------------------------------------
// Building scenario text
// ---------------------------------------------------------------------------------------------

/// A duration as a RON string, exact to the nanosecond (`"1.5s"`, `"-200ms"`, `"123ns"`).
pub(crate) fn d(ns: i64) -> String {
    format!("\"{}\"", format_ns(ns))
}

const NS_PER_MS: i64 = 1_000_000;
const NS_PER_S: i64 = 1_000_000_000;

/// Node `i` of a random world: 0 is the grantor `g`, then contenders `c0`, `c1`, ...
fn name(i: usize) -> String {
    if i == 0 {
        "g".to_string()
    } else {
        format!("c{}", i - 1)
    }
}

fn quoted(i: usize) -> String {
    format!("\"{}\"", name(i))
}

/// A list of node names as RON (`["g", "c1"]`).
fn names(ids: &[usize]) -> String {
    let v: Vec<String> = ids.iter().map(|&i| quoted(i)).collect();
    format!("[{}]", v.join(", "))
}

/// One node of a random world.
#[derive(Clone, Debug)]
pub(crate) struct NodeSpec {
    pub(crate) drift_ppm: Option<f64>,
    pub(crate) start_ns: i64,
    pub(crate) offset_ns: i64,
}

/// A random world; `ron()` writes it as a scenario file.
#[derive(Clone, Debug)]
pub(crate) struct World {
    pub(crate) seed: u64,
    pub(crate) duration_ns: i64,
    pub(crate) lease_ns: i64,
    pub(crate) renew_ns: Option<i64>,
    pub(crate) grantor_restart: &'static str,
    pub(crate) strategy: String,
    /// `(drift_spread_ppm, placement)`.
    pub(crate) clocks: (u32, &'static str),
    /// Node 0 is the grantor.
    pub(crate) nodes: Vec<NodeSpec>,
    pub(crate) delay: String,
    pub(crate) loss: f64,
    pub(crate) duplicate: f64,
    /// `(reads_per_second, writes_per_second, service_time_ns)`.
    pub(crate) workload: (f64, f64, i64),
    pub(crate) fencing: bool,
    pub(crate) faults: Vec<String>,
    pub(crate) random_faults: Vec<String>,
}

impl World {
    pub(crate) fn ron(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let role = if i == 0 { "Grantor" } else { "Contender" };
                let mut s = format!("(name: {}, role: {role}", quoted(i));
                if let Some(ppm) = n.drift_ppm {
                    s += &format!(", drift_ppm: {ppm:?}");
                }
                if n.start_ns != 0 {
                    s += &format!(", start: {}", d(n.start_ns));
                }
                if n.offset_ns != 0 {
                    s += &format!(", offset: {}", d(n.offset_ns));
                }
                s + ")"
            })
            .collect();
        let renew = self
            .renew_ns
            .map(|r| format!(", renew_every: {}", d(r)))
            .unwrap_or_default();
        let (reads, writes, service) = self.workload;
        format!(
            "Scenario(
    seed: {seed},
    duration: {duration},
    lease: (duration: {lease}{renew}, grantor_restart: {restart}),
    strategy: {strategy},
    clocks: (drift_spread_ppm: {spread:?}, placement: {placement}),
    nodes: [
        {nodes},
    ],
    network: (delay: {delay}, loss: {loss:?}, duplicate: {dup:?}),
    workload: (reads_per_second: {reads:?}, writes_per_second: {writes:?}, service_time: {service}),
    resource: (fencing: {fencing}),
    faults: [
        {faults}
    ],
    random_faults: [
        {random}
    ],
)",
            seed = self.seed,
            duration = d(self.duration_ns),
            lease = d(self.lease_ns),
            restart = self.grantor_restart,
            strategy = self.strategy,
            spread = f64::from(self.clocks.0),
            placement = self.clocks.1,
            nodes = nodes.join(",\n        "),
            delay = self.delay,
            loss = self.loss,
            dup = self.duplicate,
            service = d(service),
            fencing = self.fencing,
            faults = self.faults.join(",\n        "),
            random = self.random_faults.join(",\n        "),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// Fault start times: within the first minute, so inside every run (runs last 60 to 120 s).
const FAULT_WINDOW_NS: i64 = 60 * NS_PER_S;

/// A message delay distribution. `heavy` adds the heavy-tailed ones.
fn delay_dist(heavy: bool) -> BoxedStrategy<String> {
    // Short delays too: they leave the least slack to a margin.
    let fixed = prop_oneof![0i64..=5 * NS_PER_MS, 0i64..=200_000];
    let uniform = prop_oneof![
        (0i64..=2 * NS_PER_MS, 0i64..=20 * NS_PER_MS),
        (Just(0i64), 0i64..=NS_PER_MS),
    ];
    let mean = prop_oneof![1i64..=10 * NS_PER_MS, 1_000i64..=500_000];
    let light = prop_oneof![
        fixed.prop_map(|v| format!("Fixed({})", d(v))),
        uniform.prop_map(|(lo, w)| format!("Uniform(min: {}, max: {})", d(lo), d(lo + w))),
        mean.prop_map(|m| format!("Exponential(mean: {})", d(m))),
    ];
    if !heavy {
        return light.boxed();
    }
    prop_oneof![
        3 => light,
        1 => (100_000i64..=5 * NS_PER_MS, 0.0f64..1.5)
            .prop_map(|(med, s)| format!("LogNormal(median: {}, sigma: {s:?})", d(med))),
        1 => (100_000i64..=2 * NS_PER_MS, 1.2f64..3.0)
            .prop_map(|(sc, sh)| format!("Pareto(scale: {}, shape: {sh:?})", d(sc))),
    ]
    .boxed()
}

/// The kind (and freeze clock) of a pause. `stall` allows `VmFreeze` with `clock: Stall`.
fn pause_kind(stall: bool) -> BoxedStrategy<&'static str> {
    if stall {
        prop_oneof![
            Just("kind: Gc"),
            Just("kind: VmFreeze, clock: CatchUp"),
            Just("kind: VmFreeze, clock: Stall"),
        ]
        .boxed()
    } else {
        prop_oneof![Just("kind: Gc"), Just("kind: VmFreeze, clock: CatchUp")].boxed()
    }
}

/// A subset of the `n` nodes as an optional `nodes:` field (left out: all).
fn node_subset(n: usize) -> impl Strategy<Value = String> {
    option::of(vec(any::<bool>(), n)).prop_map(|pick| match pick {
        Some(p) if p.iter().any(|&b| b) => {
            let ids: Vec<usize> = (0..p.len()).filter(|&i| p[i]).collect();
            format!("nodes: {}, ", names(&ids))
        }
        _ => String::new(),
    })
}

/// Partitions, pauses, one-way cuts and (with `wild`) wall-clock steps, drift changes, delay
/// spikes and drops, at fixed times, among `n` nodes.
fn fixed_fault(n: usize, stall: bool, wild: bool) -> BoxedStrategy<String> {
    let at = 0i64..FAULT_WINDOW_NS;
    let node = 0..n;
    let pause = (
        node.clone(),
        at.clone(),
        NS_PER_MS..=15 * NS_PER_S,
        pause_kind(stall),
    )
        .prop_map(|(i, at, len, kind)| {
            format!(
                "Pause(node: {}, at: {}, duration: {}, {kind})",
                quoted(i),
                d(at),
                d(len)
            )
        });
    // Each node in no group (0) or in one of two groups; both groups are always written.
    let partition = (at.clone(), 100 * NS_PER_MS..=20 * NS_PER_S, vec(0u8..3, n)).prop_map(
        |(at, len, groups)| {
            let of =
                |g: u8| -> Vec<usize> { (0..groups.len()).filter(|&i| groups[i] == g).collect() };
            format!(
                "Partition(at: {}, duration: {}, groups: [{}, {}])",
                d(at),
                d(len),
                names(&of(1)),
                names(&of(2))
            )
        },
    );
    let one_way = (
        node.clone(),
        1..n,
        at.clone(),
        100 * NS_PER_MS..=20 * NS_PER_S,
    )
        .prop_map(move |(from, shift, at, len)| {
            format!(
                "OneWay(from: {}, to: {}, at: {}, duration: {})",
                quoted(from),
                quoted((from + shift) % n),
                d(at),
                d(len)
            )
        });
    if !wild {
        return prop_oneof![pause, partition, one_way].boxed();
    }
    let step = (node.clone(), at.clone(), -2 * NS_PER_S..=2 * NS_PER_S).prop_map(|(i, at, by)| {
        format!(
            "ClockStep(node: {}, at: {}, by: {})",
            quoted(i),
            d(at),
            d(by)
        )
    });
    let drift = (node.clone(), at.clone(), -500.0f64..500.0).prop_map(|(i, at, ppm)| {
        format!(
            "DriftChange(node: {}, at: {}, drift_ppm: {ppm:?})",
            quoted(i),
            d(at)
        )
    });
    prop_oneof![pause, partition, one_way, step, drift, spikes(n), drops(n)].boxed()
}

/// Message kinds as an optional `kinds:` list (left out: all).
fn kinds() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(", kinds: [Renew, RenewAck]".to_string()),
        Just(", kinds: [Grant]".to_string()),
        Just(", kinds: [Acquire, Grant, Reject]".to_string()),
        Just(", kinds: [Write]".to_string()),
    ]
}

/// A delay spike on messages sent in a window (from one node, or all), of some kinds.
fn spikes(n: usize) -> impl Strategy<Value = String> {
    (
        0i64..FAULT_WINDOW_NS,
        NS_PER_MS..=10 * NS_PER_S,
        0i64..=3 * NS_PER_S,
        option::of(0..n),
        kinds(),
    )
        .prop_map(|(at, len, extra, from, kinds)| {
            let from = from
                .map(|i| format!(", from: [{}]", quoted(i)))
                .unwrap_or_default();
            format!(
                "DelaySpike(at: {}, duration: {}, extra: {}{from}{kinds})",
                d(at),
                d(len),
                d(extra)
            )
        })
}

/// Messages sent in a window dropped (from one node, or all), of some kinds.
fn drops(n: usize) -> impl Strategy<Value = String> {
    (
        0i64..FAULT_WINDOW_NS,
        NS_PER_MS..=10 * NS_PER_S,
        option::of(0..n),
        kinds(),
    )
        .prop_map(|(at, len, from, kinds)| {
            let from = from
                .map(|i| format!(", from: [{}]", quoted(i)))
                .unwrap_or_default();
            format!("Drop(at: {}, duration: {}{from}{kinds})", d(at), d(len))
        })
}

/// Adds a cut-off-and-grantor-restart group to `fixed`; only its cut when `fixed` already
/// crashes the grantor (a node is crashed at most once at a time).
fn with_grantor_restart(fixed: &mut Vec<String>, group: Option<Vec<String>>) {
    let Some(group) = group else { return };
    let keep = if fixed.iter().any(|f| f.starts_with("Crash(node: \"g\"")) {
        1
    } else {
        group.len()
    };
    fixed.extend(group.into_iter().take(keep));
}

/// A contender cut off from the grantor (both ways, or only its messages to it), and the grantor
/// crashing and restarting while it is: the restarted grantor must not grant over a holder it
/// cannot hear from.
fn grantor_restart_while_cut_off(n: usize) -> impl Strategy<Value = Vec<String>> {
    // Cut by 40 s for up to 10 s, the grantor back within 9 s: inside the first minute.
    (
        1..n,
        0i64..40 * NS_PER_S,
        NS_PER_S..=10 * NS_PER_S,
        0.0f64..1.0,
        NS_PER_MS..=9 * NS_PER_S,
        any::<bool>(),
    )
        .prop_map(|(c, at, len, into, down, one_way)| {
            let crash = at + (len as f64 * into) as i64;
            let cut = if one_way {
                format!(
                    "OneWay(from: {}, to: \"g\", at: {}, duration: {})",
                    quoted(c),
                    d(at),
                    d(len)
                )
            } else {
                format!(
                    "Partition(at: {}, duration: {}, groups: [[{}], [\"g\"]])",
                    d(at),
                    d(len),
                    quoted(c)
                )
            };
            vec![
                cut,
                format!("Crash(node: \"g\", at: {})", d(crash)),
                format!("Restart(node: \"g\", at: {})", d(crash + down)),
            ]
        })
}

/// At most one fixed crash and restart per node (the grantor included).
fn crashes(n: usize) -> impl Strategy<Value = Vec<String>> {
    vec(
        // Crash by 40 s, restart within 20 s of it: inside the first minute.
        option::weighted(0.3, (0i64..40 * NS_PER_S, NS_PER_MS..=20 * NS_PER_S)),
        n,
    )
    .prop_map(|per_node| {
        let mut out = Vec::new();
        for (i, c) in per_node.into_iter().enumerate() {
            if let Some((at, after)) = c {
                out.push(format!("Crash(node: {}, at: {})", quoted(i), d(at)));
                out.push(format!(
                    "Restart(node: {}, at: {})",
                    quoted(i),
                    d(at + after)
                ));
            }
        }
        out
    })
}

/// The four generators of `random_faults`, each present or not. `stall` allows stalled
/// freezes among the pauses.
fn random_faults(n: usize, stall: bool) -> impl Strategy<Value = Vec<String>> {
    let pauses = (
        node_subset(n),
        0.1f64..4.0,
        prop_oneof![
            (NS_PER_MS..=3 * NS_PER_S).prop_map(|m| format!("Exponential(mean: {})", d(m))),
            (NS_PER_MS..=NS_PER_S, 0i64..=12 * NS_PER_S).prop_map(|(lo, w)| format!(
                "Uniform(min: {}, max: {})",
                d(lo),
                d(lo + w)
            )),
        ],
        pause_kind(stall),
    )
        .prop_map(|(nodes, rate, len, kind)| {
            format!("Pauses({nodes}per_minute: {rate:?}, duration: {len}, {kind})")
        });
    let partitions = (
        node_subset(n),
        1.0f64..150.0,
        100 * NS_PER_MS..=15 * NS_PER_S,
    )
        .prop_map(|(nodes, rate, max)| {
            format!(
                "Partitions({nodes}per_hour: {rate:?}, duration: Uniform(min: \"100ms\", max: {}))",
                d(max)
            )
        });
    let crashes = (
        node_subset(n),
        1.0f64..90.0,
        100 * NS_PER_MS..=20 * NS_PER_S,
    )
        .prop_map(|(nodes, rate, max)| {
            let after = format!("Uniform(min: \"100ms\", max: {})", d(max));
            format!("Crashes({nodes}per_hour: {rate:?}, restart_after: {after})")
        });
    let steps =
        (node_subset(n), 1.0f64..200.0, 1i64..=2 * NS_PER_S).prop_map(|(nodes, rate, r)| {
            format!(
                "ClockSteps({nodes}per_hour: {rate:?}, by: Uniform(min: {}, max: {}))",
                d(-r),
                d(r)
            )
        });
    (
        option::of(pauses),
        option::of(partitions),
        option::of(crashes),
        option::of(steps),
    )
        .prop_map(|(a, b, c, e)| [a, b, c, e].into_iter().flatten().collect())
}

/// Any strategy of the base protocol's table, margins below 100 ms (T is at least 1 s).
fn any_strategy() -> impl Strategy<Value = String> {
    let margin = || 0i64..=100 * NS_PER_MS;
    prop_oneof![
        (margin(), margin()).prop_map(|(h, g)| format!(
            "TwoSided(holder_margin: {}, grantor_margin: {})",
            d(h),
            d(g)
        )),
        Just("GrantorOnly".to_string()),
        margin().prop_map(|m| format!("HolderOnly(margin: {})", d(m))),
        Just("CachedBool".to_string()),
        margin().prop_map(|m| format!("WallClock(holder_margin: {})", d(m))),
        margin().prop_map(|m| format!("OnReceiveStart(holder_margin: {})", d(m))),
        (
            prop_oneof![Just("Monotonic"), Just("Wall")],
            prop_oneof![Just("OnSend"), Just("OnReceive")],
            margin(),
            -100 * NS_PER_MS..=100 * NS_PER_MS,
            prop_oneof![Just("Clock"), Just("CachedBool")],
        )
            .prop_map(|(clock, start, h, g, validity)| format!(
                "Custom(holder_clock: {clock}, lease_start: {start}, holder_margin: {}, \
                 grantor_margin: {}, validity: {validity})",
                // A cached bool never reads a holder margin, and one given is refused.
                if validity == "CachedBool" { d(0) } else { d(h) },
                d(g)
            )),
    ]
}

/// Anything goes: every strategy, every delay distribution, loss, duplication, a workload, every
/// kind of fixed fault and all four random fault generators (stalled freezes included).
pub(crate) fn any_world() -> impl Strategy<Value = World> {
    (2usize..=4, NS_PER_S..=10 * NS_PER_S).prop_flat_map(|(contenders, lease_ns)| {
        let n = contenders + 1;
        let nodes = vec(
            (
                option::of(-1000.0f64..1000.0),
                0i64..=2 * NS_PER_S,
                -NS_PER_S..=NS_PER_S,
            )
                .prop_map(|(drift_ppm, start_ns, offset_ns)| NodeSpec {
                    drift_ppm,
                    start_ns,
                    offset_ns,
                }),
            n,
        );
        let setup = (
            any::<u64>(),
            60 * NS_PER_S..=120 * NS_PER_S,
            option::of(lease_ns / 10..lease_ns),
            prop_oneof![Just("Wait"), Just("Forget")],
            any_strategy(),
            (
                0u32..=2000,
                prop_oneof![Just("Random"), Just("Adversarial")],
            ),
            nodes,
        );
        let net = (
            delay_dist(true),
            0.0f64..0.3,
            0.0f64..0.2,
            (0.0f64..20.0, 0.0f64..5.0, 0i64..=5 * NS_PER_MS),
            any::<bool>(),
        );
        let faults = (
            vec(fixed_fault(n, true, true), 0..6),
            crashes(n),
            random_faults(n, true),
            option::weighted(0.25, grantor_restart_while_cut_off(n)),
        );
        (setup, net, faults).prop_map(
            move |(
                (seed, duration_ns, renew_ns, restart, strategy, clocks, mut nodes),
                (delay, loss, duplicate, workload, fencing),
                (mut fixed, crash, random, restart_cut),
            )| {
                nodes[0].start_ns = 0;
                fixed.extend(crash);
                with_grantor_restart(&mut fixed, restart_cut);
                World {
                    seed,
                    duration_ns,
                    lease_ns,
                    renew_ns,
                    grantor_restart: restart,
                    strategy,
                    clocks,
                    nodes,
                    delay,
                    loss,
                    duplicate,
                    workload,
                    fencing,
                    faults: fixed,
                    random_faults: random,
                }
            },
        )
    })
}

/// How the drifts of a world under test for safety are placed. Every drift lies in
/// [-rho/2, +rho/2], so any two differ by at most rho.
#[derive(Clone, Debug)]
enum Drifts {
    /// `clocks: (drift_spread_ppm: rho, placement: Random)`.
    Random,
    /// `placement: Adversarial`: grantor at +rho/2, every contender at -rho/2.
    Adversarial,
    /// Each node's own `drift_ppm`: `u * rho - rho/2` for the drawn `u` in [0, 1], one per node.
    PerNode(Vec<f64>),
}

/// A world in which `TwoSided(holder_margin: m)` with m >= T*rho + 1us must be safe: drifts
/// within rho, random delays (heavy-tailed ones too), loss and duplication, any renewal period,
/// GC pauses (and freezes that let the clocks catch up), partitions and one-way cuts, crashes
/// and restarts of contenders and of the grantor (which waits out T on restart), also while a
/// contender is cut off from it, wall-clock steps (which the monotonic holder clock ignores),
/// drops and delay spikes of any message kind, drift changes within the spread, stalled freezes
/// of the grantor, and a grantor margin. The strategy is TwoSided or the same point written as
/// Custom. Returns the world with its T, rho and m.
fn safe_world() -> impl Strategy<Value = (World, i64, u32, i64)> {
    (2usize..=4).prop_flat_map(|contenders| {
        let n = contenders + 1;
        let unit = prop_oneof![Just(0.0f64), Just(1.0f64), 0.0f64..=1.0];
        let drifts = prop_oneof![
            1 => Just(Drifts::Random),
            2 => Just(Drifts::Adversarial),
            1 => vec(unit, n).prop_map(Drifts::PerNode),
        ];
        let setup = (
            any::<u64>(),
            60 * NS_PER_S..=120 * NS_PER_S,
            NS_PER_S..=10 * NS_PER_S,
            prop_oneof![0u32..=2000, 1000u32..=2000],
            drifts,
            // Extra margin above T*rho + 1us: none half of the time, to keep the bound tight.
            prop_oneof![Just(0i64), 0i64..=5 * NS_PER_MS],
            vec(0i64..=2 * NS_PER_S, n),
            // renew_every in tenths of T, or the default T/3.
            option::of(1i64..=9),
        );
        let net = (
            delay_dist(true),
            0.0f64..0.3,
            0.0f64..0.2,
            (0.0f64..5.0, 0.0f64..2.0),
        );
        // Faults that keep TwoSided safe on top of the ones `fixed_fault` draws: drops and delay
        // spikes of any kind, drift changes that stay within [-rho/2, +rho/2] (drawn as a
        // fraction u of the spread: the drift is (u - 1/2) rho), a stalled freeze of the
        // grantor (its clock stops: it frees the lease later, never earlier), and a grantor
        // restart while a contender is cut off from it.
        let extra_faults = (
            vec(prop_oneof![spikes(n), drops(n)], 0..3),
            vec((0..n, 0i64..FAULT_WINDOW_NS, 0.0f64..=1.0), 0..3),
            option::of((0i64..FAULT_WINDOW_NS, NS_PER_MS..=15 * NS_PER_S)),
            option::weighted(0.3, grantor_restart_while_cut_off(n)),
        );
        let faults = (
            vec(fixed_fault(n, false, false), 1..6),
            crashes(n),
            random_faults(n, false),
            extra_faults,
        );
        // The strategy: TwoSided, or the same point written with Custom; a grantor margin (which
        // only makes the grantor later) half of the time.
        let shape = (
            any::<bool>(),
            prop_oneof![Just(0i64), 0i64..=100 * NS_PER_MS],
        );
        (setup, net, faults, shape).prop_map(
            |(
                (seed, duration_ns, lease_ns, rho, drifts, extra, starts, tenths),
                (delay, loss, duplicate, (reads, writes)),
                (mut fixed, crash, random, (net_faults, drift_changes, grantor_stall, restart_cut)),
                (custom, grantor_margin),
            )| {
                // T*rho in ns, rounded up.
                let t_rho = (lease_ns * i64::from(rho) + 999_999) / 1_000_000;
                let m = t_rho + 1_000 + extra;
                let (placement, own) = match drifts {
                    Drifts::Random => ("Random", None),
                    Drifts::Adversarial => ("Adversarial", None),
                    Drifts::PerNode(u) => ("Random", Some(u)),
                };
                let nodes = starts
                    .iter()
                    .enumerate()
                    .map(|(i, &start)| NodeSpec {
                        drift_ppm: own.as_ref().map(|u| (u[i] - 0.5) * f64::from(rho)),
                        start_ns: if i == 0 { 0 } else { start },
                        offset_ns: 0,
                    })
                    .collect();
                fixed.extend(crash);
                fixed.extend(net_faults);
                fixed.extend(drift_changes.into_iter().map(|(i, at, u)| {
                    format!(
                        "DriftChange(node: {}, at: {}, drift_ppm: {:?})",
                        quoted(i),
                        d(at),
                        (u - 0.5) * f64::from(rho)
                    )
                }));
                if let Some((at, len)) = grantor_stall {
                    fixed.push(format!(
                        "Pause(node: \"g\", at: {}, duration: {}, kind: VmFreeze, clock: Stall)",
                        d(at),
                        d(len)
                    ));
                }
                with_grantor_restart(&mut fixed, restart_cut);
                let strategy = if custom {
                    format!(
                        "Custom(holder_clock: Monotonic, lease_start: OnSend, holder_margin: {}, \
                         grantor_margin: {}, validity: Clock)",
                        d(m),
                        d(grantor_margin)
                    )
                } else {
                    format!(
                        "TwoSided(holder_margin: {}, grantor_margin: {})",
                        d(m),
                        d(grantor_margin)
                    )
                };
                let world = World {
                    seed,
                    duration_ns,
                    lease_ns,
                    renew_ns: tenths.map(|k| lease_ns * k / 10),
                    grantor_restart: "Wait",
                    strategy,
                    clocks: (rho, placement),
                    nodes,
                    delay,
                    loss,
                    duplicate,
                    workload: (reads, writes, 0),
                    fencing: false,
                    faults: fixed,
                    random_faults: random,
                };
                (world, lease_ns, rho, m)
            },
        )
    })
}

// ---------------------------------------------------------------------------------------------
// The closed-form family: a holder cut off from the grantor
// ---------------------------------------------------------------------------------------------

/// Grantor `g` at `rho_g`, holder `h` (starts at 0) at `rho_h`, contender `b` (starts at 100 ms,
/// 0 ppm) queued behind `h`. The link h->g takes `d1`, g->b takes `d2`, every other link 1 ms.
/// A one-way cut from `h` to `g` from `x` to the end drops every renewal delivered at or after
/// `x`.
#[derive(Clone, Debug)]
struct CutOff {
    lease_ns: i64,
    margin_ns: i64,
    rho_g_ppm: f64,
    rho_h_ppm: f64,
    d1_ns: i64,
    d2_ns: i64,
    x_ns: i64,
}

impl CutOff {
    /// The run lasts until the grant has reached `b` and `h`'s belief has ended, with room to
    /// spare: the last renewal that counts was sent before `x`, so both happen before x + T + 1 s.
    fn duration_ns(&self) -> i64 {
        self.x_ns + 2 * self.lease_ns + NS_PER_S
    }

    fn ron(&self, strategy: &str) -> String {
        format!(
            r#"Scenario(
    duration: {duration},
    lease: (duration: {lease}),
    strategy: {strategy},
    nodes: [
        (name: "g", role: Grantor, drift_ppm: {rho_g:?}),
        (name: "h", role: Contender, drift_ppm: {rho_h:?}),
        (name: "b", role: Contender, start: "100ms"),
    ],
    network: (
        delay: Fixed("1ms"),
        links: [
            (from: "h", to: "g", delay: Fixed({d1})),
            (from: "g", to: "b", delay: Fixed({d2})),
        ],
    ),
    faults: [OneWay(from: "h", to: "g", at: {x}, duration: {cut})],
)"#,
            duration = d(self.duration_ns()),
            lease = d(self.lease_ns),
            rho_g = self.rho_g_ppm,
            rho_h = self.rho_h_ppm,
            d1 = d(self.d1_ns),
            d2 = d(self.d2_ns),
            x = d(self.x_ns),
            cut = d(self.duration_ns() - self.x_ns),
        )
    }

    fn two_sided(&self) -> String {
        self.ron(&format!("TwoSided(holder_margin: {})", d(self.margin_ns)))
    }

    /// The overlap in ns, in floating point (for the comparison only).
    ///
    /// Let S be the true time at which `h` sent the last renewal that reached `g` (before `x`).
    /// `h` believes until its clock has advanced T - m from its reading at S, i.e. until
    /// S + (T - m) / (1 + rho_h). `g` received the renewal at S + d1 and frees the lease when its
    /// own clock has advanced T from then, at S + d1 + T / (1 + rho_g); it grants to `b` at once
    /// and `b` believes from S + d1 + T / (1 + rho_g) + d2. S cancels out.
    fn predicted_ns(&self) -> f64 {
        // The rates exactly as the engine holds them: whole parts per 10^12.
        let rate = |ppm: f64| 1.0 + (ppm * 1e6).round() / 1e12;
        let t = self.lease_ns as f64;
        let m = self.margin_ns as f64;
        let holder_end = (t - m) / rate(self.rho_h_ppm);
        let b_start = self.d1_ns as f64 + t / rate(self.rho_g_ppm) + self.d2_ns as f64;
        (holder_end - b_start).max(0.0)
    }
}

/// A member of the family: drifts within +-2000 ppm, delays 0.1 to 20 ms, margin up to 30 ms,
/// T from 2 to 20 s, and the cut between T/2 and 5T/2 (well after the first grant). Drawn
/// uniformly, only about one case in fourteen overlaps at all, so half of the drifts put the
/// grantor fast and the holder slow, and half of the delays and margins are small.
fn cut_off() -> impl Strategy<Value = CutOff> {
    let drifts = prop_oneof![
        (-2000.0f64..=2000.0, -2000.0f64..=2000.0),
        (0.0f64..=2000.0, -2000.0f64..=0.0),
    ];
    let delay = || prop_oneof![100_000i64..=20 * NS_PER_MS, 100_000i64..=3 * NS_PER_MS];
    (
        2 * NS_PER_S..=20 * NS_PER_S,
        prop_oneof![0i64..=30 * NS_PER_MS, 0i64..=5 * NS_PER_MS],
        drifts,
        delay(),
        delay(),
        0.5f64..2.5,
    )
        .prop_map(
            |(lease_ns, margin_ns, (rho_g_ppm, rho_h_ppm), d1_ns, d2_ns, x_frac)| CutOff {
                lease_ns,
                margin_ns,
                rho_g_ppm,
                rho_h_ppm,
                d1_ns,
                d2_ns,
                x_ns: (lease_ns as f64 * x_frac) as i64,
            },
        )
}

/// The overlap of a closed-form run, checked to be at most one interval, between `h` and `b`.
fn cut_off_overlap(s: &Summary, text: &str) -> Result<i64, TestCaseError> {
    prop_assert!(
        s.overlap.count <= 1,
        "more than one overlap: {:?}\n{text}",
        s.overlap
    );
    if let Some(i) = s.overlap.intervals.first() {
        prop_assert_eq!(&i.nodes, &["h", "b"], "{}", text);
    }
    Ok(s.overlap.total_ns)
}

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

/// The hand-computed instance of the closed form, checked before the random ones: grantor at
/// 0 ppm, holder at -1000 ppm, d1 = d2 = 1 ms, T = 10 s. With m = 5 ms, the holder believes
/// 9.995 s / 0.999 = 10.005005005 s after S, and `b` from S + 1 ms + 10 s + 1 ms: the overlap is
/// 3.005005005 ms. With no holder margin (GrantorOnly, or TwoSided with m = 0) it is
/// 10 s / 0.999 - 10.002 s = 8.01001001 ms. True instants are whole nanoseconds (rounded up where
/// a clock reaches a deadline), so the measured figure is within 1 ns of the exact one.
#[test]
fn closed_form_hand_computed_instance() {
    let c = CutOff {
        lease_ns: 10 * NS_PER_S,
        margin_ns: 5 * NS_PER_MS,
        rho_g_ppm: 0.0,
        rho_h_ppm: -1000.0,
        d1_ns: NS_PER_MS,
        d2_ns: NS_PER_MS,
        x_ns: 10 * NS_PER_S,
    };
    assert!((c.predicted_ns() - 3_005_005.005).abs() < 1e-3);
    let s = run_text(&c.two_sided());
    assert_eq!(s.overlap.count, 1, "{:?}", s.overlap);
    assert_eq!(s.overlap.intervals[0].nodes, ["h", "b"]);
    let got = s.overlap.total_ns as f64;
    assert!((got - 3_005_005.005).abs() <= 1.0, "overlap {got} ns");
    assert_eq!(s.grants, 2, "h, then b");

    let c0 = CutOff { margin_ns: 0, ..c };
    assert!((c0.predicted_ns() - 8_010_010.01).abs() < 1e-3);
    for text in [c0.ron("GrantorOnly"), c0.two_sided()] {
        let s = run_text(&text);
        assert_eq!(s.overlap.count, 1, "{:?}", s.overlap);
        let got = s.overlap.total_ns as f64;
        assert!(
            (got - 8_010_010.01).abs() <= 1.0,
            "overlap {got} ns\n{text}"
        );
    }
}

/// Runs `s` with a timeline recorder attached (which must change nothing in the summary).
fn run_keeping_timeline(s: &Scenario) -> Summary {
    leasesim::run_recorded("test", s)
        .unwrap_or_else(|e| panic!("test scenario does not build:\n{e}"))
        .0
        .summary
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3072))]

    /// Determinism: a run is a function of the scenario and its seed. Every random draw
    /// comes from a ChaCha stream keyed by (seed, component, index), time and drift are
    /// integers, and events at one instant are ordered by a sequence number, so running the same
    /// scenario again must give the same summary, byte for byte as JSON. So must the scenario
    /// after a trip through its own RON text (what `explore` writes and `run` replays), and a run
    /// with a timeline recorder attached (observing must not perturb it). Random worlds: any
    /// strategy, drifts, every delay distribution, loss, duplication, a workload, fixed faults of
    /// every kind and all four random fault generators, stalled freezes included.
    #[test]
    fn same_scenario_and_seed_give_identical_summaries(w in any_world()) {
        let text = w.ron();
        let s = scenario(&text);
        let a = run(&s);
        let b = run(&s);
        let json_a = serde_json::to_string(&a).expect("summary serializes");
        let json_b = serde_json::to_string(&b).expect("summary serializes");
        prop_assert_eq!(&json_a, &json_b, "JSON differs between two runs of\n{}", text);
        prop_assert!(a == b, "summaries differ between two runs of\n{}", text);
        prop_assert_eq!(format!("{a:?}"), format!("{b:?}"), "{}", text);

        let again = Scenario::from_ron(&s.to_ron());
        prop_assert!(again.is_ok(), "to_ron does not read back: {:?}\n{}", again.err(), s.to_ron());
        let c = run(&again.unwrap());
        prop_assert_eq!(
            &json_a,
            &serde_json::to_string(&c).expect("summary serializes"),
            "a trip through to_ron changes the run of\n{}",
            text
        );
        let t = run_keeping_timeline(&s);
        prop_assert_eq!(
            &json_a,
            &serde_json::to_string(&t).expect("summary serializes"),
            "recording a timeline changes the run of\n{}",
            text
        );
        // Not vacuous: the world did something.
        prop_assert!(a.events > 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16384))]

    /// Safety of TwoSided. A holder's term starts at the local time it SENT the request that
    /// was answered, so it ends at true S + (T - m) / (1 + rho_h). The grantor received that
    /// request at or after S and frees the lease no earlier than T / (1 + rho_g) later, and a
    /// new holder believes only once the grant reaches it. With both drifts in [-rho/2, +rho/2],
    /// (T - m) / (1 + rho_h) <= T / (1 + rho_g) as soon as m >= T * rho / (1 + rho/2), which
    /// m >= T*rho + 1us covers with room for nanosecond rounding. Delay (however heavy its
    /// tail), loss and duplication only make the grantor's side later or older request times
    /// count; the renewal period only moves S; a GC pause (or a freeze whose clocks catch up)
    /// stops no clock, and belief is judged by the clock, paused or not; a partition only drops
    /// messages; a wall-clock step does not move the monotonic clock the holder uses; a crashed
    /// contender forgets its lease, and a restarted grantor waits out T (+ its margin) before
    /// granting anything. A drift change within [-rho/2, +rho/2] keeps every clock's rate in the
    /// bounds the inequality uses; a grantor margin, a stalled freeze of the grantor, a dropped or
    /// delayed message only make the grantor free the lease later. So no two nodes
    /// ever believe at once: no overlap. With no service time, no request is admitted under a
    /// superseded token either: no zombie actions.
    ///
    /// The drifts are kept in [-rho/2, +rho/2] (as `clocks` places them) rather than anywhere
    /// within rho of each other: the exact condition is m >= T * (rho_g - rho_h) / (1 + rho_g),
    /// which exceeds T*rho + 1us when the grantor itself runs slow (e.g. rho_g = -1000 ppm,
    /// rho_h = -3000 ppm, T = 10 s: 20.02 ms against 20.001 ms), a second-order term the T*rho
    /// rule of thumb leaves out.
    ///
    /// Excluded: a VM freeze with `clock: Stall` on the holder. Its monotonic clock stops for
    /// the freeze, so on resume it is behind true time by the freeze's length, and the holder's
    /// deadline is reached that much later in true time, while the grantor's clock kept
    /// counting. No margin derived from drift covers that; it is a failure mode of its own, and
    /// `scenarios/vm-freeze-stall.ron` shows it.
    #[test]
    fn two_sided_with_margin_above_t_rho_never_overlaps(
        (w, lease_ns, rho, m) in safe_world()
    ) {
        let text = w.ron();
        prop_assert!(m > lease_ns * i64::from(rho) / 1_000_000);
        let s = run_text(&text);
        prop_assert_eq!(
            s.overlap.count, 0,
            "T = {}, rho = {} ppm, m = {}: overlaps {:?}\n{}",
            format_ns(lease_ns), rho, format_ns(m), s.overlap.intervals, text
        );
        prop_assert_eq!(s.zombie_actions, 0, "{}", text);
        prop_assert!(!s.truncated);
    }
}

/// The worlds of the safety property are sharp enough for it to fail: the same worlds under
/// `GrantorOnly` (no holder margin) overlap in some runs, as soon as the drift gained over a
/// term outweighs the message delays. (A fixed sample, drawn deterministically.)
#[test]
fn safety_worlds_overlap_without_the_holder_margin() {
    let mut runner = TestRunner::deterministic();
    let worlds = safe_world();
    let (mut runs, mut overlapping) = (0, 0);
    for _ in 0..48 {
        let (mut w, ..) = worlds
            .new_tree(&mut runner)
            .expect("a world is drawn")
            .current();
        w.strategy = "GrantorOnly".to_string();
        runs += 1;
        if run_text(&w.ron()).overlap.count > 0 {
            overlapping += 1;
        }
    }
    assert!(
        overlapping * 10 >= runs,
        "only {overlapping} of {runs} worlds overlap without a margin"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Closed form of the cut-off holder (see `CutOff::predicted_ns`): the overlap is
    /// max(0, (T - m) / (1 + rho_h) - d1 - T / (1 + rho_g) - d2), one interval at most, to
    /// within 1 us (the engine is exact to the nanosecond; the slack is for the float formula).
    /// It holds because renewals go out on h's clock whatever happens at `g`, a one-way cut
    /// drops a message at delivery, so the last renewal that counts is the last one delivered
    /// before the cut, and the time it was sent cancels out. `b`'s own term (started at its
    /// last Acquire retry, at most about 1 s before its grant) outlasts h's since T >= 2 s.
    #[test]
    fn cut_off_holder_overlap_has_a_closed_form(c in cut_off()) {
        let text = c.two_sided();
        let s = run_text(&text);
        let got = cut_off_overlap(&s, &text)?;
        let want = c.predicted_ns();
        prop_assert!(
            (got as f64 - want).abs() <= 1_000.0,
            "overlap {} ns, closed form {:.1} ns\n{}",
            got, want, text
        );
        prop_assert_eq!(s.grants, 2, "h, then b\n{}", text);
    }

    /// Monotone in the margin: in the same family, a larger holder margin m2 > m1 ends h's
    /// belief earlier and changes nothing else (renewals go out on h's clock, not relative to
    /// its deadline; `g` and `b` never see m), so it can only shrink the overlap.
    #[test]
    fn overlap_does_not_grow_with_the_holder_margin(
        c in cut_off(),
        m1 in 0i64..=30 * NS_PER_MS,
        m2 in 0i64..=30 * NS_PER_MS,
    ) {
        let (lo, hi) = (m1.min(m2), m1.max(m2) + 1);
        let small = CutOff { margin_ns: lo, ..c.clone() };
        let large = CutOff { margin_ns: hi, ..c };
        let (ts, tl) = (small.two_sided(), large.two_sided());
        let (ss, sl) = (run_text(&ts), run_text(&tl));
        let (o_small, o_large) = (cut_off_overlap(&ss, &ts)?, cut_off_overlap(&sl, &tl)?);
        prop_assert!(
            o_small >= o_large,
            "overlap {} ns with m = {} but {} ns with m = {}\n{}",
            o_small, format_ns(lo), o_large, format_ns(hi), tl
        );
    }
}
