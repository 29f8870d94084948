//! The `expect` section: fractions in range, holders that exist, message kinds the protocol has.

use super::Problems;
use crate::scenario::protocols::StrategyChecks;

pub(super) fn check(p: &mut Problems, protocol: Option<&dyn StrategyChecks>) {
    let Some(e) = &p.s.expect else {
        return;
    };
    for (key, a) in [
        ("min_availability", e.min_availability),
        ("max_availability", e.max_availability),
    ] {
        if let Some(a) = a.filter(|a| !(0.0..=1.0).contains(a)) {
            p.push(format!(
                "expect.{key}: must be a fraction in [0, 1] (got {a})"
            ));
        }
    }
    for (i, name) in e.holders.iter().flatten().enumerate() {
        p.node(&format!("expect.holders[{i}]"), name);
    }
    let Some(protocol) = protocol else {
        return; // no protocol, no kinds to check against
    };
    let kinds = protocol.kinds();
    for kind in e.messages.iter().flat_map(|m| m.keys()) {
        if !kinds.contains(&kind.as_str()) {
            p.push(format!(
                "expect.messages: unknown message kind {kind:?} (known: {})",
                kinds.join(", ")
            ));
        }
    }
}
