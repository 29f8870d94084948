//! The `lease` section: the term, and the periods the protocol reads.

use super::Problems;
use crate::scenario::protocols::{LeaseFields, StrategyChecks};

/// T within the limits, and each period the protocol reads ([`StrategyChecks::lease_fields`];
/// every one when the strategy cannot be read): within the limits, and a renewal shorter than T.
pub(super) fn check(p: &mut Problems, protocol: Option<&dyn StrategyChecks>) {
    let lease = &p.s.lease;
    let reads = protocol.map_or(LeaseFields::ALL, |s| s.lease_fields());
    let t = lease.duration;
    p.interval("lease.duration", t);
    if reads.renew_every {
        let renew = lease.renew_every();
        p.interval("lease.renew_every", renew);
        if renew >= t && t.ns() > 0 {
            p.push(format!(
                "lease.renew_every: {renew} must be shorter than the lease ({t}), or the lease \
                 lapses between renewals"
            ));
        }
    }
    if reads.retry_every {
        p.interval("lease.retry_every", lease.retry_every);
    }
}
