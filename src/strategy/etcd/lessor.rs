//! The leader's lessor (etcd `server/lease/lessor.go`): the only member that times leases.
//!
//! A member's lessor is *primary* from the moment it leads (`Promote`) until it stops
//! (`Demote`). Promoted, it gives every lease an expiry of now + `extend` (the election
//! timeout) + the lease's remaining TTL: its checkpointed remaining TTL if it has one, else
//! the whole TTL, so that a lease outlives a leader change however little it had left (etcd
//! issues 9395 and 17132: frequent leader changes keep a dead client's lease alive). A renewal
//! sets the expiry to now + TTL. A lease past its expiry is renewed no more: a KeepAlive for it
//! waits until the lease is revoked or the lessor demoted (`Renew`'s `revokec`/`demotec`).
//! Every 500 ms (`runLoop`) the lessor hands the leases past their expiry to be revoked, and
//! again every 3 s (`expiredLeaseRetryInterval`) while one is not revoked yet: revoking is a
//! proposal through the log, and takes effect only when it is applied. With checkpointing on,
//! a lease with more than the interval left is checkpointed after the interval (its remaining
//! TTL, rounded up to whole seconds, proposed through the log), and a renewal of a lease with
//! a checkpoint clears it (a checkpoint of zero).
//!
//! The lessor reads one clock, the monotonic one unless the scenario asks for etcd before it
//! read the monotonic clock (etcd issue 12291, fixed by PR 12292): expiries are readings of it.

use super::table::Table;
use super::LeaseId;
use crate::msg::NodeId;
use crate::time::{LocalDur, LocalTime};
use std::collections::BTreeMap;

/// How often the lessor looks for expired leases (`runLoop`'s ticker).
pub const LESSOR_TICK: LocalDur = LocalDur::from_ms(500);
/// How long an expired lease handed to be revoked waits before it is handed again
/// (`defaultExpiredleaseRetryInterval`).
pub const REVOKE_RETRY: LocalDur = LocalDur::from_secs(3);

/// A KeepAlive of an expired lease, held until the lease is revoked: the lease, the client and
/// the member it came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    pub lease: LeaseId,
    pub client: NodeId,
    pub via: NodeId,
}

/// What a KeepAlive gets from the lessor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renew {
    /// Renewed to now + `ttl`; `clear_checkpoint`: the lease had a checkpoint, to clear.
    Renewed {
        ttl: LocalDur,
        until: LocalTime,
        clear_checkpoint: bool,
    },
    /// No such lease (`ErrLeaseNotFound`).
    NotFound,
    /// Expired: the KeepAlive waits for the revoke.
    Held,
    /// Not the primary lessor (`ErrNotPrimary`): forward it to the leader.
    NotPrimary,
}

/// One member's lessor.
#[derive(Debug, Default)]
pub struct Lessor {
    primary: bool,
    /// Each lease's expiry on the lessor's clock (primary only).
    expiry: BTreeMap<LeaseId, LocalTime>,
    /// When each lease handed to be revoked may be handed again.
    retry: BTreeMap<LeaseId, LocalTime>,
    /// When each scheduled checkpoint is due (checkpointing on, primary only).
    checkpoint_at: BTreeMap<LeaseId, LocalTime>,
    /// KeepAlives of expired leases, waiting for the revoke.
    held: Vec<Held>,
    /// The checkpoint interval, when checkpointing is on.
    checkpoint_every: Option<LocalDur>,
}

impl Lessor {
    pub fn new(checkpoint_every: Option<LocalDur>) -> Lessor {
        Lessor {
            checkpoint_every,
            ..Lessor::default()
        }
    }

    /// The expiry of `lease`, if the lessor is primary and has it.
    pub fn expiry(&self, lease: LeaseId) -> Option<LocalTime> {
        self.expiry.get(&lease).copied()
    }

    /// `Promote(extend)` at `now`: primary, every lease expiring at now + extend + its remaining
    /// TTL (checkpointed, else whole).
    pub fn promote(&mut self, now: LocalTime, extend: LocalDur, table: &Table) {
        self.primary = true;
        self.expiry.clear();
        self.retry.clear();
        self.checkpoint_at.clear();
        for (id, row) in table.leases() {
            let remaining = row.remaining.unwrap_or(row.ttl);
            self.expiry.insert(id, now + extend + remaining);
            self.schedule_checkpoint(now, id, remaining);
        }
    }

    /// `Demote`: no longer primary; every expiry forgotten (`forever`). Returns the KeepAlives
    /// it held (`ErrNotPrimary` to each: the member forwards them no more, and the client
    /// sends again).
    pub fn demote(&mut self) -> Vec<Held> {
        self.primary = false;
        self.expiry.clear();
        self.retry.clear();
        self.checkpoint_at.clear();
        std::mem::take(&mut self.held)
    }

    /// A lease granted (applied) at `now`: the primary times it from now.
    pub fn granted(&mut self, now: LocalTime, id: LeaseId, ttl: LocalDur) {
        if self.primary {
            self.expiry.insert(id, now + ttl);
            self.schedule_checkpoint(now, id, ttl);
        }
    }

    /// A lease revoked (applied): forgotten. Returns the KeepAlives held for it (each answered
    /// `ErrLeaseNotFound`).
    pub fn revoked(&mut self, id: LeaseId) -> Vec<Held> {
        self.expiry.remove(&id);
        self.retry.remove(&id);
        self.checkpoint_at.remove(&id);
        let (answered, kept) = self.held.iter().partition(|h| h.lease == id);
        self.held = kept;
        answered
    }

    /// A checkpoint applied: the primary schedules the lease's next one.
    pub fn checkpointed(&mut self, now: LocalTime, id: LeaseId, table: &Table) {
        if let (true, Some(row)) = (self.primary, table.lease(id)) {
            self.schedule_checkpoint(now, id, row.remaining.unwrap_or(row.ttl));
        }
    }

    /// A KeepAlive of `held.lease` at `now`.
    pub fn renew(&mut self, now: LocalTime, held: Held, table: &Table) -> Renew {
        if !self.primary {
            return Renew::NotPrimary;
        }
        let Some(row) = table.lease(held.lease) else {
            return Renew::NotFound;
        };
        let Some(&expiry) = self.expiry.get(&held.lease) else {
            return Renew::NotFound;
        };
        if now >= expiry {
            if !self.held.contains(&held) {
                self.held.push(held);
            }
            return Renew::Held;
        }
        let until = now + row.ttl;
        self.expiry.insert(held.lease, until);
        Renew::Renewed {
            ttl: row.ttl,
            until,
            clear_checkpoint: self.checkpoint_every.is_some() && row.remaining.is_some(),
        }
    }

    /// `revokeExpiredLeases` at `now`: the leases past their expiry not handed to be revoked in
    /// the last [`REVOKE_RETRY`], in id order; each is handed again after that long.
    pub fn expired(&mut self, now: LocalTime) -> Vec<LeaseId> {
        if !self.primary {
            return Vec::new();
        }
        let due: Vec<LeaseId> = self
            .expiry
            .iter()
            .filter(|&(id, &at)| now >= at && self.retry.get(id).is_none_or(|&r| now >= r))
            .map(|(&id, _)| id)
            .collect();
        for &id in &due {
            self.retry.insert(id, now + REVOKE_RETRY);
        }
        due
    }

    /// `checkpointScheduledLeases` at `now`: each lease whose checkpoint is due, not expired and
    /// with less than its TTL left, with its remaining TTL rounded up to whole seconds.
    pub fn due_checkpoints(&mut self, now: LocalTime, table: &Table) -> Vec<(LeaseId, LocalDur)> {
        let due: Vec<LeaseId> = self
            .checkpoint_at
            .iter()
            .filter(|&(_, &at)| now >= at)
            .map(|(&id, _)| id)
            .collect();
        let mut out = Vec::new();
        for id in due {
            self.checkpoint_at.remove(&id);
            let (Some(row), Some(&expiry)) = (table.lease(id), self.expiry.get(&id)) else {
                continue;
            };
            if now >= expiry {
                continue;
            }
            let remaining = ceil_secs(expiry - now);
            if remaining < row.ttl {
                out.push((id, remaining));
            }
        }
        out
    }

    /// `scheduleCheckpointIfNeeded`: a checkpoint after the interval, for a lease with more than
    /// the interval left.
    fn schedule_checkpoint(&mut self, now: LocalTime, id: LeaseId, remaining: LocalDur) {
        if let Some(every) = self.checkpoint_every {
            if remaining > every {
                self.checkpoint_at.insert(id, now + every);
            }
        }
    }
}

/// `d` rounded up to whole seconds (etcd's TTLs and checkpoints are whole seconds).
pub fn ceil_secs(d: LocalDur) -> LocalDur {
    const S: i64 = 1_000_000_000;
    LocalDur::from_secs((d.ns() + S - 1).div_euclid(S))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;
    const TTL: LocalDur = LocalDur::from_secs(5);
    const ET: LocalDur = LocalDur::from_secs(1);

    fn at(ms: i64) -> LocalTime {
        LocalTime::from_ns(ms * 1_000_000)
    }

    fn table() -> Table {
        let mut t = Table::default();
        t.grant(1, TTL);
        t
    }

    const KA: Held = Held {
        lease: 1,
        client: 5,
        via: 0,
    };

    #[test]
    fn promote_extends_by_the_election_timeout_or_from_the_checkpoint() {
        // Promoted at 10 s: expiry 10 + 1 + 5 = 16 s.
        let mut t = table();
        let mut l = Lessor::new(None);
        l.promote(at(10_000), ET, &t);
        assert_eq!(l.expiry(1), Some(at(16_000)));
        // With 2 s checkpointed: 10 + 1 + 2 = 13 s.
        t.checkpoint(1, LocalDur::from_secs(2));
        l.promote(at(10_000), ET, &t);
        assert_eq!(l.expiry(1), Some(at(13_000)));
        // A follower's lessor times nothing and renews nothing.
        assert_eq!(l.demote(), []);
        assert_eq!(l.expiry(1), None);
        assert_eq!(l.renew(at(10_500), KA, &t), Renew::NotPrimary);
    }

    #[test]
    fn an_expired_lease_is_renewed_no_more_and_its_keepalive_waits_for_the_revoke() {
        let t = table();
        let mut l = Lessor::new(None);
        l.promote(at(0), ET, &t);
        // Renewed at 2 s: until 7 s.
        let renewed = l.renew(at(2_000), KA, &t);
        let until = at(7_000);
        let ttl = TTL;
        let clear_checkpoint = false;
        assert_eq!(
            renewed,
            Renew::Renewed {
                ttl,
                until,
                clear_checkpoint
            }
        );
        // At 6.999 s nothing is due; at 7 s the lease is, and again only 3 s later.
        assert!(l.expired(at(6_999)).is_empty());
        assert_eq!(l.expired(at(7_000)), [1]);
        assert!(l.expired(at(9_999)).is_empty());
        assert_eq!(l.expired(at(10_000)), [1]);
        // A KeepAlive now waits (once, however often it comes), and is answered by the revoke.
        assert_eq!(l.renew(at(7_100), KA, &t), Renew::Held);
        assert_eq!(l.renew(at(7_200), KA, &t), Renew::Held);
        assert_eq!(l.revoked(1), [KA]);
        assert_eq!(l.revoked(1), []);
    }

    #[test]
    fn a_checkpoint_is_due_after_the_interval_with_the_remaining_ttl_rounded_up() {
        // TTL 5 s, interval 2 s, promoted at 0 with ET 1 s: expiry 6 s, checkpoint due at 2 s
        // with 6 - 2 = 4 s left (below the TTL: proposed).
        let t = table();
        let mut l = Lessor::new(Some(LocalDur::from_secs(2)));
        l.promote(at(0), ET, &t);
        assert!(l.due_checkpoints(at(1_999), &t).is_empty());
        assert_eq!(
            l.due_checkpoints(at(2_500), &t),
            [(1, LocalDur::from_secs(4))],
            "6 - 2.5 = 3.5 s, rounded up"
        );
        // Once taken it is not due again until scheduled again.
        assert!(l.due_checkpoints(at(4_000), &t).is_empty());
        assert_eq!(ceil_secs(LocalDur::from_ns(S)), LocalDur::from_secs(1));
        assert_eq!(ceil_secs(LocalDur::from_ns(S + 1)), LocalDur::from_secs(2));
    }

    #[test]
    fn a_lease_granted_to_a_primary_expires_a_ttl_after_the_grant_and_to_a_follower_never() {
        // Granted (applied) at 2 s by a primary: due for revoking at 7 s, not at 6.999 s.
        let mut l = Lessor::new(None);
        l.promote(at(0), ET, &Table::default());
        l.granted(at(2_000), 1, TTL);
        assert_eq!(l.expiry(1), Some(at(7_000)));
        assert!(l.expired(at(6_999)).is_empty());
        assert_eq!(l.expired(at(7_000)), [1]);
        // A follower's lessor times nothing.
        let mut f = Lessor::new(None);
        f.granted(at(2_000), 1, TTL);
        assert_eq!(f.expiry(1), None);
    }

    #[test]
    fn an_applied_checkpoint_schedules_the_next_one() {
        // Promoted at 0 (expiry 6 s), interval 2 s: the first checkpoint, taken at 2.5 s, has
        // 4 s left. Applied at 2.6 s, it schedules the next at 4.6 s, which finds ceil(6 -
        // 4.6) = 2 s left.
        let mut t = table();
        let mut l = Lessor::new(Some(LocalDur::from_secs(2)));
        l.promote(at(0), ET, &t);
        assert_eq!(
            l.due_checkpoints(at(2_500), &t),
            [(1, LocalDur::from_secs(4))]
        );
        t.checkpoint(1, LocalDur::from_secs(4));
        l.checkpointed(at(2_600), 1, &t);
        assert!(l.due_checkpoints(at(4_599), &t).is_empty());
        assert_eq!(
            l.due_checkpoints(at(4_600), &t),
            [(1, LocalDur::from_secs(2))]
        );
    }

    #[test]
    fn a_renewal_clears_a_checkpoint_only_where_there_is_one_to_clear() {
        let clears = |every: Option<LocalDur>, remaining: Option<LocalDur>| {
            let mut t = table();
            if let Some(r) = remaining {
                t.checkpoint(1, r);
            }
            let mut l = Lessor::new(every);
            l.promote(at(0), ET, &t);
            match l.renew(at(100), KA, &t) {
                Renew::Renewed {
                    clear_checkpoint, ..
                } => clear_checkpoint,
                other => panic!("{other:?}"),
            }
        };
        let (every, two) = (Some(LocalDur::from_secs(2)), Some(LocalDur::from_secs(2)));
        assert!(clears(every, two));
        assert!(!clears(every, None), "no checkpoint to clear");
        assert!(!clears(None, two), "checkpointing off");
    }

    #[test]
    fn a_checkpoint_is_skipped_with_the_whole_ttl_left_and_never_scheduled_for_less_than_the_interval(
    ) {
        // Interval 500 ms, promoted at 0 (expiry 6 s): due at 500 ms, taken at 1 s with
        // ceil(6 - 1) = 5 s left, the whole TTL: skipped, as etcd skips it (`remainingTTL >=
        // l.ttl`), and not scheduled again.
        let t = table();
        let mut l = Lessor::new(Some(LocalDur::from_ms(500)));
        l.promote(at(0), ET, &t);
        assert!(l.due_checkpoints(at(1_000), &t).is_empty());
        assert!(l.due_checkpoints(at(3_000), &t).is_empty());
        // Interval 5 s, the TTL: a lease with no more than the interval left is not scheduled
        // (`getRemainingTTL() > interval`), so at 5 s, with 1 s left, nothing is due.
        let mut l = Lessor::new(Some(TTL));
        l.promote(at(0), ET, &t);
        assert!(l.due_checkpoints(at(5_000), &t).is_empty());
    }
}
