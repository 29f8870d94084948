//! The `faults` section: each fault inside the run, on nodes that exist, with lengths and
//! steps within the limits, message kinds and instructions the protocol has, and crashes and
//! restarts in an order that makes sense.

use super::Problems;
use crate::scenario::limits;
use crate::scenario::protocols::StrategyChecks;
use crate::scenario::{AfterMoment, At, Fault, FreezeClock, Moment, PauseKind, Role, Thread};
use crate::time::Dur;
use std::collections::BTreeMap;

/// A node's crashes and restarts: (when, whether a restart, the fault's index), by node.
type Lives<'s> = BTreeMap<&'s str, Vec<(Dur, bool, usize)>>;

pub(super) fn check(p: &mut Problems, protocol: Option<&dyn StrategyChecks>) {
    let s = p.s;
    if s.faults.len() > limits::MAX_FAULTS {
        p.push(format!(
            "faults: {} faults, above the limit of {} (see docs/src/limits.md)",
            s.faults.len(),
            limits::MAX_FAULTS
        ));
    }
    let mut lives = Lives::new();
    for (i, f) in s.faults.iter().enumerate() {
        fault(p, i, f, protocol, &mut lives);
    }
    crashes_and_restarts(p, lives);
}

/// The moment a fault follows: a node that exists, `nth` from 1 to
/// [`limits::MAX_MOMENT_NTH`], a delay shorter than the run and not negative (except before
/// an expiry, by less than the run).
fn after_moment(p: &mut Problems, at: &str, a: &AfterMoment) {
    if let Some(n) = &a.node {
        p.node(&format!("{at}.at.node"), n);
    }
    if a.nth == 0 || a.nth > limits::MAX_MOMENT_NTH {
        p.push(format!(
            "{at}.at.nth: must be from 1 to {} (got {})",
            limits::MAX_MOMENT_NTH,
            a.nth
        ));
    }
    let d = a.delay;
    if d.ns() < 0 && a.moment != Moment::Expiry {
        p.push(format!(
            "{at}.at.delay: must not be negative after a {:?} moment (got {d}); only an \
             Expiry moment takes a negative delay, the time before it",
            a.moment
        ));
    } else if d.ns().unsigned_abs() >= p.s.duration.ns().unsigned_abs() {
        p.push(format!(
            "{at}.at.delay: {d} is not shorter than the run ({})",
            p.s.duration
        ));
    }
}

/// When fault `f` (named `at`) starts: inside the run, a moment that exists, a drawn range in
/// order and inside the run.
fn start(p: &mut Problems, at: &str, f: &Fault) {
    let s = p.s;
    match f.after() {
        None if f.at().ns() < 0 || f.at() >= s.duration => p.push(format!(
            "{at}: starts at {}, outside the run [0, {})",
            f.at(),
            s.duration
        )),
        None => {}
        Some(a) => after_moment(p, at, a),
    }
    if let Some((min, max)) = f.start().drawn() {
        if max < min {
            p.push(format!(
                "{at}.at: Uniform(min: {min}, max: {max}) has its max before its min"
            ));
        } else if max >= s.duration {
            p.push(format!(
                "{at}.at.max: {max} is outside the run [0, {})",
                s.duration
            ));
        }
    }
}

/// Fault `i`, `f`; a crash or restart is noted in `lives`.
fn fault<'s>(
    p: &mut Problems<'s>,
    i: usize,
    f: &'s Fault,
    protocol: Option<&dyn StrategyChecks>,
    lives: &mut Lives<'s>,
) {
    let at = format!("faults[{i}]");
    start(p, &at, f);
    match f {
        Fault::Pause {
            node: n,
            duration,
            kind,
            clock,
            ..
        } => {
            p.node(&at, n);
            p.positive(&format!("{at}.duration"), *duration);
            freeze_clock_applies(p, &at, *kind, *clock);
        }
        Fault::ThreadStall {
            node: n,
            thread,
            duration,
            ..
        } => {
            p.node(&at, n);
            p.positive(&format!("{at}.duration"), *duration);
            if *thread == Thread::Renewal {
                renewal_loop(p, &at, n, protocol);
            }
        }
        Fault::DiskStall {
            node: n, duration, ..
        } => disk_stall(p, &at, n, *duration),
        // A crash or restart placed at a moment or a drawn time is ordered only when the run
        // meets it.
        Fault::Crash { node: n, at: when } => {
            p.node(&at, n);
            if let At::Time(when) = when {
                lives.entry(n).or_default().push((*when, false, i));
            }
        }
        Fault::Restart { node: n, at: when } => {
            p.node(&at, n);
            if let At::Time(when) = when {
                lives.entry(n).or_default().push((*when, true, i));
            }
        }
        Fault::ClockStep { node: n, by, .. } => {
            p.node(&at, n);
            p.clock_step(&format!("{at}.by"), *by);
        }
        Fault::DriftChange {
            node: n, drift_ppm, ..
        } => {
            p.node(&at, n);
            p.drift(&format!("{at}.drift_ppm"), *drift_ppm);
        }
        Fault::StepDown { node: n, .. } | Fault::TransferLeader { to: n, .. } => {
            p.node(&at, n);
            instruction(p, &at, f, protocol);
        }
        Fault::Partition {
            duration, groups, ..
        } => {
            p.positive(&format!("{at}.duration"), *duration);
            partition(p, &at, groups);
        }
        Fault::OneWay {
            from, to, duration, ..
        } => {
            p.node(&at, from);
            p.node(&at, to);
            p.positive(&format!("{at}.duration"), *duration);
        }
        Fault::DelaySpike {
            duration,
            extra,
            from,
            to,
            kinds,
            ..
        } => {
            p.positive(&format!("{at}.duration"), *duration);
            if extra.ns() < 0 {
                p.push(format!("{at}.extra: must not be negative (got {extra})"));
            }
            p.nodes(&at, from);
            p.nodes(&at, to);
            p.kinds(&at, kinds, protocol);
        }
        Fault::Drop {
            duration,
            from,
            to,
            kinds,
            ..
        } => {
            p.positive(&format!("{at}.duration"), *duration);
            p.nodes(&at, from);
            p.nodes(&at, to);
            p.kinds(&at, kinds, protocol);
        }
    }
}

/// An instruction to a leader (`f`, a `StepDown` or a `TransferLeader`) must be one the
/// protocol takes (unchecked without one).
fn instruction(p: &mut Problems, at: &str, f: &Fault, protocol: Option<&dyn StrategyChecks>) {
    let name = match f {
        Fault::StepDown { .. } => "StepDown",
        _ => "TransferLeader",
    };
    let Some(protocol) = protocol else {
        return;
    };
    let takes = protocol.commands();
    if !takes.contains(&name) {
        p.push(format!(
            "{at}: {name} is an instruction to a leader, which {} does not take (it takes: {})",
            protocol.describe(),
            if takes.is_empty() {
                "none".to_string()
            } else {
                takes.join(", ")
            }
        ));
    }
}

/// A `DiskStall` names a node with a disk, for a positive duration.
fn disk_stall(p: &mut Problems, at: &str, n: &str, duration: Dur) {
    p.node(at, n);
    p.positive(&format!("{at}.duration"), duration);
    if p.s
        .node_index(n)
        .is_some_and(|i| p.s.nodes[i].disk.is_none())
    {
        p.push(format!(
            "{at}: node {n:?} has no disk (give it one: `disk: (fsync: Fixed(\"1ms\"))`)"
        ));
    }
}

/// A stall of node `n`'s renewal loop: the protocol must give a node of its role one (unchecked
/// without a protocol or for an unknown node).
fn renewal_loop(p: &mut Problems, at: &str, n: &str, protocol: Option<&dyn StrategyChecks>) {
    let (Some(protocol), Some(i)) = (protocol, p.s.node_index(n)) else {
        return;
    };
    let role = p.s.nodes[i].role;
    if protocol.renewal_loop(role).is_none() {
        let with = Role::ALL
            .into_iter()
            .filter_map(|r| protocol.renewal_loop(r).map(|l| format!("a {r:?} ({l})")))
            .collect::<Vec<_>>();
        p.push(format!(
            "{at}.thread: under {}, node {n:?} (a {role:?}) has no renewal loop apart from its \
             work; stall its Worker loop, or the renewal loop of {}",
            protocol.describe(),
            if with.is_empty() {
                "no node: no role has one".to_string()
            } else {
                with.join(" or ")
            }
        ));
    }
}

/// A partition's groups: nodes that exist, each in one group, and at least two groups.
fn partition(p: &mut Problems, at: &str, groups: &[Vec<String>]) {
    let mut group_of = BTreeMap::new();
    for (g, names) in groups.iter().enumerate() {
        for n in names {
            p.node(at, n);
            if let Some(h) = group_of.insert(n.as_str(), g) {
                if h != g {
                    p.push(format!("{at}.groups: node {n:?} is in groups {h} and {g}"));
                }
            }
        }
    }
    if groups.len() < 2 {
        p.push(format!(
            "{at}.groups: a partition needs at least two groups"
        ));
    }
}

/// Each node's crashes and restarts, in time order, alternate: a restart of a node that is
/// down, a crash of one that is up.
fn crashes_and_restarts(p: &mut Problems, lives: Lives) {
    for (name, mut events) in lives {
        if p.s.node_index(name).is_none() {
            continue; // already reported as unknown
        }
        events.sort_by_key(|e| e.0);
        let mut up = true;
        for (_, restart, i) in events {
            if restart && up {
                p.push(format!(
                    "faults[{i}]: Restart of {name:?}, which is not down at that time (crash it \
                     first)"
                ));
            } else if !restart && !up {
                p.push(format!(
                    "faults[{i}]: Crash of {name:?}, which is already down since an earlier \
                     Crash"
                ));
            }
            up = restart;
        }
    }
}

/// A pause's `clock` applies only to a `VmFreeze`: a GC pause stops no clock, so a `clock`
/// given for one would be ignored. Refuses it (`clock` is kept as given to tell).
pub(super) fn freeze_clock_applies(
    p: &mut Problems,
    at: &str,
    kind: PauseKind,
    clock: Option<FreezeClock>,
) {
    if let (PauseKind::Gc, Some(clock)) = (kind, clock) {
        p.push(format!(
            "{at}.clock: {clock:?} does not apply to a Gc pause, whose clocks keep counting \
             (clock only applies to kind: VmFreeze); remove it, or set kind: VmFreeze"
        ));
    }
}
