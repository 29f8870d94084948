//! The harm a broken lease does (SPEC 3): zombie actions, stale reads, unsafe and fenced writes.
//!
//! Also the protected register itself: a version counter at the resource, the highest token
//! applied, and each holder's local copy (the version its grant carried plus its own writes).
//! A read is stale when the resource has applied a write that the reader's copy misses: one by
//! another holder, or one of its own from an earlier lease; its own writes of the current lease
//! never make it stale, whether or not they have landed.
//!
//! With several keys (`workload.keys`), a read is judged by its own key: it is stale when the
//! copy misses a write to that key. A write that names no key (the base protocol's register
//! writes) counts as a write to every key.
//!
//! Invariant (asserted): a copy (its grant's version plus its own applied writes) is never ahead
//! of the register.

use crate::msg::{NodeId, Token};
use std::collections::BTreeMap;

/// A holder's local copy of the register.
#[derive(Clone, Copy, Debug, Default)]
struct Copy {
    token: Token,
    /// The resource's version when the grant was issued.
    base_version: u64,
}

/// Counts of harm and of the register's traffic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HarmCounts {
    pub zombie_actions: u64,
    pub stale_reads: u64,
    pub unsafe_writes: u64,
    pub fenced_writes: u64,
    /// Second deliveries of a write the resource already had (the network duplicated it). The
    /// resource applies a write once, by its id; one without write ids would apply it twice.
    pub duplicate_writes: u64,
    pub reads_served: u64,
    pub writes_sent: u64,
    pub writes_applied: u64,
}

/// The oracle's record of the register, and the harm ledger of one run.
pub struct Harm {
    /// The newest token issued anywhere: every older one is superseded.
    latest_token: Token,
    /// Writes applied at the resource so far.
    version: u64,
    /// Per key, the version right after the last write to it; and the version after the last
    /// write that named no key (a write to every key).
    key_versions: Vec<u64>,
    keyless_version: u64,
    /// Read authority is shared by design (SPEC 3): reads are judged by staleness alone, never
    /// as zombie actions.
    shared_reads: bool,
    max_applied_token: Token,
    copies: Vec<Copy>,
    /// Per node: (token, writes applied under it) for its newest token seen at the resource.
    own_applied: Vec<(Token, u64)>,
    /// The highest log index reported committed (replicated logs).
    committed_index: u64,
    /// The term of each write entry reported committed, by log index: a later report of the
    /// same index must agree (Raft's safety: a committed entry is never replaced).
    committed_terms: BTreeMap<u64, Token>,
    counts: HarmCounts,
}

impl Harm {
    pub fn new(nodes: usize, keys: u32, shared_reads: bool) -> Harm {
        Harm {
            latest_token: 0,
            version: 0,
            key_versions: vec![0; keys.max(1) as usize],
            keyless_version: 0,
            shared_reads,
            max_applied_token: 0,
            copies: vec![Copy::default(); nodes],
            own_applied: vec![(0, 0); nodes],
            committed_index: 0,
            committed_terms: BTreeMap::new(),
            counts: HarmCounts::default(),
        }
    }

    /// The register's version at the resource now.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The register's version right after the last write to `key`: a copy at that version or
    /// later has every write to `key` so far.
    pub fn version_of(&self, key: u32) -> u64 {
        let k = self.key_versions.get(key as usize).copied().unwrap_or(0);
        k.max(self.keyless_version)
    }

    pub fn counts(&self) -> &HarmCounts {
        &self.counts
    }

    /// A grant with `token` was issued.
    pub fn issued(&mut self, token: Token) {
        self.latest_token = self.latest_token.max(token);
    }

    /// `node` took lease `token` with the register at `version`.
    pub fn holding(&mut self, node: NodeId, token: Token, version: u64) {
        self.copies[node] = Copy {
            token,
            base_version: version,
        };
    }

    /// The newest token issued so far.
    pub fn latest_token(&self) -> Token {
        self.latest_token
    }

    /// A read admitted under `token` is served at `node` now from its copy; it was taken up
    /// when the last write to its key had brought the register to `version` and the newest
    /// token was `latest_token` (now, for a read served at once). Linearizability asks that a
    /// read reflect every write that took effect before it began, so the read is stale if the
    /// copy misses one of those, and a zombie action if its token was already superseded then.
    /// Returns (zombie, stale).
    pub fn read(&mut self, node: NodeId, token: Token, as_of: (u64, Token)) -> (bool, bool) {
        let copy = self.copies[node];
        let (own_token, own) = self.own_applied[node];
        let own = if own_token == copy.token { own } else { 0 };
        assert!(
            copy.base_version + own <= self.version,
            "a copy is never ahead of the register it copies"
        );
        self.judge_read(token, copy.base_version + own, as_of)
    }

    /// A read admitted under `token` is served from a log prefix holding the register's first
    /// `view` writes; it was taken up when the last write to its key had brought the register to
    /// `version`, with `latest_token` the newest token. Stale if that write lies beyond the
    /// prefix. Returns (zombie, stale).
    pub fn read_at(&mut self, token: Token, view: u64, as_of: (u64, Token)) -> (bool, bool) {
        self.judge_read(token, view, as_of)
    }

    /// Counts a read under `token` that saw the register's first `view` writes, taken up as of
    /// `(version, latest_token)`. Returns (zombie, stale).
    fn judge_read(
        &mut self,
        token: Token,
        view: u64,
        (version, latest_token): (u64, Token),
    ) -> (bool, bool) {
        self.counts.reads_served += 1;
        let zombie = !self.shared_reads && token < latest_token;
        if zombie {
            self.counts.zombie_actions += 1;
        }
        let stale = version > view;
        if stale {
            self.counts.stale_reads += 1;
        }
        (zombie, stale)
    }

    /// A write admitted under `token` takes effect at its node now and is sent to the resource.
    /// Returns whether it is a zombie action.
    pub fn write_sent(&mut self, token: Token) -> bool {
        self.counts.writes_sent += 1;
        let zombie = token < self.latest_token;
        if zombie {
            self.counts.zombie_actions += 1;
        }
        zombie
    }

    /// The resource applied a write from `node` under `token`, to `key` (`None`: the one
    /// register, every key). Returns whether it was unsafe: a write with a newer token had been
    /// applied before it.
    pub fn write_applied(&mut self, node: NodeId, token: Token, key: Option<u32>) -> bool {
        let unsafe_write = token < self.max_applied_token;
        if unsafe_write {
            self.counts.unsafe_writes += 1;
        }
        self.max_applied_token = self.max_applied_token.max(token);
        self.version += 1;
        match key.and_then(|k| self.key_versions.get_mut(k as usize)) {
            Some(v) => *v = self.version,
            None => self.keyless_version = self.version,
        }
        self.counts.writes_applied += 1;
        let own = &mut self.own_applied[node];
        if token == own.0 {
            own.1 += 1;
        } else if token > own.0 {
            *own = (token, 1);
        }
        unsafe_write
    }

    /// Log entry `index` was reported committed. Returns whether this is its first report: every
    /// index up to a reporter's commit index has been reported before it (a node's commit index
    /// only comes from leaders, and a leader reports all it commits), so the highest index
    /// reported tells a first report from a repeat.
    ///
    /// Panics when entry `index` is reported with a term other than its first report's: a
    /// committed write was lost, which a correct replicated log never does.
    pub fn first_commit(&mut self, index: u64, token: Token) -> bool {
        let first = index > self.committed_index;
        self.committed_index = self.committed_index.max(index);
        let term = *self.committed_terms.entry(index).or_insert(token);
        assert_eq!(
            term, token,
            "log entry {index} was committed under term {term} and again under term {token}: \
             a committed write was lost"
        );
        first
    }

    /// The resource's fencing check rejected a write.
    pub fn write_fenced(&mut self) {
        self.counts.fenced_writes += 1;
    }

    /// A second copy of a write that already reached the resource arrives: not applied again.
    pub fn duplicate_write(&mut self) {
        self.counts.duplicate_writes += 1;
    }

    /// `node` crashed: its copy is gone.
    pub fn forget(&mut self, node: NodeId) {
        self.copies[node] = Copy::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_is_judged_as_of_when_it_was_taken_up() {
        // Node 0 holds token 1 from version 0. Node 1 (token 2) writes once: version 1.
        let mut h = Harm::new(2, 1, false);
        h.issued(1);
        h.holding(0, 1, 0);
        // Taken up at version 0 with token 1 the newest: a write landing while it waited does
        // not make it stale, nor does token 2 issued meanwhile make it a zombie.
        let then = (h.version(), h.latest_token());
        h.issued(2);
        assert!(!h.write_applied(1, 2, None));
        assert_eq!(h.read(0, 1, then), (false, false));
        // Taken up now, after the write and token 2: both.
        let now = (h.version(), h.latest_token());
        assert_eq!(now, (1, 2));
        assert_eq!(h.read(0, 1, now), (true, true));
        assert_eq!(h.counts().stale_reads, 1);
        assert_eq!(h.counts().zombie_actions, 1);
        assert_eq!(h.counts().reads_served, 2);
    }

    #[test]
    fn a_log_read_is_stale_only_when_it_misses_a_write_to_its_own_key() {
        // Three keys. Committed: key 1 (version 1), then key 2 (version 2).
        let mut h = Harm::new(1, 3, false);
        h.issued(1);
        assert!(!h.write_applied(0, 1, Some(1)));
        assert!(!h.write_applied(0, 1, Some(2)));
        assert_eq!(
            (h.version_of(0), h.version_of(1), h.version_of(2)),
            (0, 1, 2)
        );
        // A read from the prefix of the first write: key 1 is there, key 2 is not, key 0 was
        // never written.
        let at = |h: &Harm, k| (h.version_of(k), h.latest_token());
        assert_eq!(h.read_at(1, 1, at(&h, 1)), (false, false));
        assert_eq!(h.read_at(1, 1, at(&h, 2)), (false, true));
        assert_eq!(h.read_at(1, 1, at(&h, 0)), (false, false));
        // A write that names no key (the base protocol's register) is a write to every key.
        assert!(!h.write_applied(0, 1, None));
        assert_eq!((h.version_of(0), h.version_of(1)), (3, 3));
        assert_eq!(h.read_at(1, 2, at(&h, 0)), (false, true));
        assert_eq!(h.counts().stale_reads, 2);
        // A key beyond the configured ones has only the writes to every key (the engine never
        // asks for one).
        assert_eq!(h.version_of(7), 3);
    }

    #[test]
    fn shared_read_authority_makes_no_zombie_reads() {
        // Token 2 supersedes token 1; a read under 1 is a zombie, unless read authority is
        // shared by design, when staleness alone judges it.
        for (shared, zombie) in [(false, true), (true, false)] {
            let mut h = Harm::new(1, 1, shared);
            h.issued(1);
            h.issued(2);
            let now = (h.version_of(0), h.latest_token());
            assert_eq!(h.read_at(1, 0, now), (zombie, false));
            assert_eq!(h.read(0, 1, now), (zombie, false));
            assert_eq!(h.counts().zombie_actions, 2 * u64::from(zombie));
        }
    }
}
