//! The `nodes` section: how many, the roles the protocol needs, and each node's name, drift,
//! offset and start.

use super::Problems;
use crate::scenario::limits;
use crate::scenario::protocols::StrategyChecks;
use std::collections::BTreeMap;

/// The count within the limit, then the protocol's own checks of roles and options
/// ([`StrategyChecks::check`]), then each node.
pub(super) fn check(p: &mut Problems, protocol: Option<&dyn StrategyChecks>) {
    let s = p.s;
    if s.nodes.len() > limits::MAX_NODES {
        p.push(format!(
            "nodes: {} nodes, above the limit of {} (see docs/src/limits.md)",
            s.nodes.len(),
            limits::MAX_NODES
        ));
    }
    if let Some(protocol) = protocol {
        p.list.extend(protocol.check(s));
    }
    p.list.extend(crate::scenario::names::problems(s));
    let mut seen = BTreeMap::new();
    for (i, n) in s.nodes.iter().enumerate() {
        if n.name.is_empty() {
            p.push(format!("nodes[{i}]: name is empty"));
        }
        if let Some(j) = seen.insert(n.name.as_str(), i) {
            p.push(format!(
                "nodes[{i}]: name {:?} is already used by nodes[{j}]",
                n.name
            ));
        }
        if let Some(disk) = &n.disk {
            p.dist(&format!("nodes[{i}].disk.fsync"), &disk.fsync, false);
            let writes = protocol.map(|pr| (pr.describe(), pr.persists(n.role)));
            if let Some((described, None)) = writes {
                // The protocol's name: its settings are beside the point.
                let name = described.split('(').next().unwrap_or_default();
                p.push(format!(
                    "nodes[{i}].disk: {name} writes nothing to disk on a {:?}",
                    n.role
                ));
            }
        }
        if let Some(ppm) = n.drift_ppm {
            p.drift(&format!("nodes[{i}].drift_ppm"), ppm);
        }
        p.clock_step(&format!("nodes[{i}].offset"), n.offset);
        if n.start.ns() < 0 || n.start >= s.duration {
            p.push(format!(
                "nodes[{i}].start: {} is not within the run [0, {})",
                n.start, s.duration
            ));
        }
    }
}
