//! The `network` section: delays, loss and duplication, and the links' own delays.

use super::Problems;

pub(super) fn check(p: &mut Problems) {
    let network = &p.s.network;
    p.dist("network.delay", &network.delay, false);
    p.prob("network.loss", network.loss);
    p.prob("network.duplicate", network.duplicate);
    for (i, l) in network.links.iter().enumerate() {
        let at = format!("network.links[{i}]");
        p.node(&at, &l.from);
        p.node(&at, &l.to);
        p.dist(&format!("{at}.delay"), &l.delay, false);
    }
}
