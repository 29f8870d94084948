//! What etcd's log builds that the lease protocol reads: the leases, with their TTLs and
//! checkpointed remaining TTLs, and the lock's keys, each attached to a lease and ordered by
//! its create revision. Every member applies the same entries in the same order, so that every
//! member's table is the same at the same index. Expiry is not here: only the leader's lessor
//! times leases ([`super::lessor`]).

use super::LeaseId;
use crate::msg::{NodeId, Token};
use crate::time::LocalDur;
use std::collections::BTreeMap;

/// One lease as the log has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseRow {
    /// The TTL granted (at least the cluster's minimum).
    pub ttl: LocalDur,
    /// The remaining TTL last checkpointed (`LeaseCheckpoint`), if any: a new leader's lessor
    /// starts from it instead of the whole TTL.
    pub remaining: Option<LocalDur>,
}

/// A key under the lock's prefix: the lease it is attached to and the client that put it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockKey {
    pub lease: LeaseId,
    pub client: NodeId,
}

/// The leases and the lock's keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    leases: BTreeMap<LeaseId, LeaseRow>,
    /// By create revision: the first is the lock's owner.
    keys: BTreeMap<Token, LockKey>,
}

/// What the lock's `Txn` gives: the key's create revision and whether it owns the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Locked {
    pub rev: Token,
    pub owner: bool,
}

impl Table {
    /// `LeaseGrant`: lease `id` with `ttl`.
    pub fn grant(&mut self, id: LeaseId, ttl: LocalDur) {
        let row = LeaseRow {
            ttl,
            remaining: None,
        };
        self.leases.entry(id).or_insert(row);
    }

    /// `LeaseRevoke`: the lease and its key go. Returns whether the lease was there.
    pub fn revoke(&mut self, lease: LeaseId) -> bool {
        self.keys.retain(|_, k| k.lease != lease);
        self.leases.remove(&lease).is_some()
    }

    /// The lock's `Txn` at log index `index`: put the key of `lease` if it has none (created
    /// at `index`), then get the owner. `None` if the lease is gone (the put fails with
    /// `ErrLeaseNotFound`).
    pub fn lock(&mut self, index: u64, lease: LeaseId, client: NodeId) -> Option<Locked> {
        if !self.leases.contains_key(&lease) {
            return None;
        }
        let rev = match self.key_of(lease) {
            Some(rev) => rev,
            None => {
                self.keys.insert(index, LockKey { lease, client });
                index
            }
        };
        let owner = self.owner().map(|(r, _)| r) == Some(rev);
        Some(Locked { rev, owner })
    }

    /// `LeaseCheckpoint`: the remaining TTL of `lease` (zero clears it).
    pub fn checkpoint(&mut self, lease: LeaseId, remaining: LocalDur) {
        if let Some(row) = self.leases.get_mut(&lease) {
            row.remaining = (remaining > LocalDur::ZERO).then_some(remaining);
        }
    }

    /// The lock's owner: the key with the smallest create revision.
    pub fn owner(&self) -> Option<(Token, LockKey)> {
        self.keys.first_key_value().map(|(&rev, &k)| (rev, k))
    }

    /// The create revision of the key attached to `lease`, if it has one.
    pub fn key_of(&self, lease: LeaseId) -> Option<Token> {
        self.keys
            .iter()
            .find(|(_, k)| k.lease == lease)
            .map(|(&rev, _)| rev)
    }

    /// Whether the key created at `rev` exists.
    pub fn has_key(&self, rev: Token) -> bool {
        self.keys.contains_key(&rev)
    }

    /// Whether every key created before `rev` is deleted (`waitDeletes` returns).
    pub fn none_before(&self, rev: Token) -> bool {
        self.keys.range(..rev).next().is_none()
    }

    pub fn lease(&self, id: LeaseId) -> Option<LeaseRow> {
        self.leases.get(&id).copied()
    }

    /// Every lease, by id.
    pub fn leases(&self) -> impl Iterator<Item = (LeaseId, LeaseRow)> + '_ {
        self.leases.iter().map(|(&id, &row)| (id, row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: LocalDur = LocalDur::from_secs(5);

    #[test]
    fn the_oldest_key_owns_the_lock_and_a_revoke_hands_it_on() {
        let mut t = Table::default();
        t.grant(1, TTL);
        t.grant(2, TTL);
        // Lease 1's key is created at index 3, lease 2's at 4: 1 owns.
        assert_eq!(
            t.lock(3, 1, 10),
            Some(Locked {
                rev: 3,
                owner: true
            })
        );
        assert_eq!(
            t.lock(4, 2, 11),
            Some(Locked {
                rev: 4,
                owner: false
            })
        );
        // The Txn again under lease 2 keeps its key and revision (the Else branch).
        assert_eq!(
            t.lock(9, 2, 11),
            Some(Locked {
                rev: 4,
                owner: false
            })
        );
        assert!(!t.none_before(4));
        // Revoking lease 1 deletes its key: 2's is the oldest.
        assert!(t.revoke(1));
        assert_eq!(
            t.owner(),
            Some((
                4,
                LockKey {
                    lease: 2,
                    client: 11
                }
            ))
        );
        assert!(t.none_before(4) && t.has_key(4) && !t.has_key(3));
        // A lease revoked twice was there once; a Txn under it finds no lease.
        assert!(!t.revoke(1));
        assert_eq!(t.lock(12, 1, 10), None);
    }

    #[test]
    fn a_checkpoint_of_zero_clears_the_remaining_ttl() {
        let mut t = Table::default();
        t.grant(1, TTL);
        t.checkpoint(1, LocalDur::from_secs(2));
        assert_eq!(t.lease(1).unwrap().remaining, Some(LocalDur::from_secs(2)));
        t.checkpoint(1, LocalDur::ZERO);
        assert_eq!(t.lease(1).unwrap().remaining, None);
        // A checkpoint of a lease that is gone changes nothing.
        t.checkpoint(7, LocalDur::from_secs(2));
        assert_eq!(t.lease(7), None);
    }
}
