//! The harm a broken lease does: zombie actions, stale reads, unsafe and fenced writes.
//!
//! Also the protected register itself: a version counter at the resource, the newest token
//! applied, and each holder's local copy: the register as its grant carried it, plus its own
//! writes applied since under that lease.
//!
//! **Stale reads, by linearizability.** A read arrives at the node that serves it when that
//! node's logic takes it up; it answers with some state of the register (a holder's copy, or a
//! replicated log's committed prefix). It is stale iff that state misses a write that had taken
//! effect (applied at the register, or committed) before it arrived. A write that takes effect
//! between its arrival and its answer may or may not show: either answer is linearizable. The
//! caller hands over, for each read, the register's version at the last write to the read's key
//! when it arrived; the state answered is the copy (or prefix) as it is when served. A copy is
//! kept as the longest run of versions `1..=prefix` it holds: its grant's version, extended by
//! each of its own writes that lands right after it. A write by anyone else (or one of its own
//! from an earlier lease) that lands in between leaves a gap that only a new grant fills, so
//! every read from that copy that must see the gap's write is stale until the copy refreshes.
//! Its own writes of the current lease never make it stale, whether or not they have landed.
//!
//! With several keys (`workload.keys`), a read is judged by its own key: it is stale when the
//! copy misses a write to that key. A write that names no key (the base protocol's register
//! writes) counts as a write to every key.
//!
//! **Which token is newer.** Tokens order leases: an action under a token older than the newest
//! issued is a zombie action, a write applied after one under a newer token is unsafe. A grantor
//! that restarts forgetting what it granted (`lease.grantor_restart: Forget`) may issue the same
//! numbers again (Kubernetes' leaseTransitions starts over with the Lease record): each such
//! restart opens a new *epoch*, and a token issued in a later epoch is newer than every token of
//! an earlier one, whatever the numbers. A token a node acts under is of the epoch in which it
//! was last issued to that node (of the last [`EPOCHS_KEPT`] epochs it was issued tokens in; a
//! token never issued to it is of the current epoch). Tokens are compared as a [`Rank`]: the
//! token itself until the first such restart, so that runs without one judge by the numbers
//! alone.
//!
//! Memory is bounded whatever the run's length: per node a copy, its own writes, and its last
//! epochs; per key a version; and the terms of committed log entries as runs of one term, of
//! which the last [`TERM_RUNS_KEPT`] are kept.
//!
//! Invariant (asserted): a copy's prefix is never ahead of the register.

use crate::msg::{NodeId, Token};
use std::collections::VecDeque;

/// A token placed in its epoch: `epoch << EPOCH_SHIFT | token` (the token itself in epoch 0).
/// Comparing ranks compares epochs first, then tokens.
pub type Rank = u64;

/// Where the epoch starts in a [`Rank`]: tokens of a run with a forgetful grantor restart stay
/// below 2^48 (a grant a nanosecond for three days).
const EPOCH_SHIFT: u32 = 48;

/// How many of a node's epochs are remembered to place the tokens it acts under.
pub const EPOCHS_KEPT: usize = 8;

/// How many runs of committed log entries of one term are kept to check later reports against.
pub const TERM_RUNS_KEPT: usize = 4096;

/// A holder's local copy of the register.
#[derive(Clone, Copy, Debug, Default)]
struct Copy {
    /// The lease it was taken under (`None`: the node holds no copy, not since its last crash).
    token: Option<Token>,
    /// The copy holds every write up to this version: the resource's version when the grant
    /// was issued, extended by each write of its own under `token` that landed right after it.
    prefix: u64,
}

/// Tokens issued to one node in one epoch, from `lo` to `hi`.
#[derive(Clone, Copy, Debug)]
struct EpochTokens {
    epoch: u64,
    lo: Token,
    hi: Token,
}

/// Log entries `first..=last` (client writes among them) were committed under `term`.
#[derive(Clone, Copy, Debug)]
struct TermRun {
    first: u64,
    last: u64,
    term: Token,
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
    /// The newest token issued anywhere, as a rank: every older one is superseded.
    latest: Rank,
    /// The current epoch: how many times a grantor restarted forgetting what it granted.
    epoch: u64,
    /// Per node, the epochs it was issued tokens in, oldest first (at most [`EPOCHS_KEPT`]).
    issued_to: Vec<VecDeque<EpochTokens>>,
    /// Writes applied at the resource so far.
    version: u64,
    /// Per key, the version right after the last write to it; and the version after the last
    /// write that named no key (a write to every key).
    key_versions: Vec<u64>,
    keyless_version: u64,
    /// Read authority is shared by design: reads are judged by staleness alone, never as zombie
    /// actions.
    shared_reads: bool,
    max_applied: Rank,
    copies: Vec<Copy>,
    /// The highest log index reported committed (replicated logs).
    committed_index: u64,
    /// The terms of the entries reported committed, in runs of one term by log index: a later
    /// report of the same index must agree (Raft's safety: a committed entry is never replaced).
    committed_terms: VecDeque<TermRun>,
    counts: HarmCounts,
}

impl Harm {
    pub fn new(nodes: usize, keys: u32, shared_reads: bool) -> Harm {
        Harm {
            latest: 0,
            epoch: 0,
            issued_to: vec![VecDeque::new(); nodes],
            version: 0,
            key_versions: vec![0; keys.max(1) as usize],
            keyless_version: 0,
            shared_reads,
            max_applied: 0,
            copies: vec![Copy::default(); nodes],
            committed_index: 0,
            committed_terms: VecDeque::new(),
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

    /// A grantor restarted forgetting what it granted: tokens issued from now on are newer than
    /// every token issued before, whatever their numbers.
    pub fn new_epoch(&mut self) {
        self.epoch += 1;
    }

    /// Token `token` as node `node` acts under it, placed in its epoch (see the module doc).
    pub fn rank(&self, node: NodeId, token: Token) -> Rank {
        if self.epoch == 0 {
            return token;
        }
        let epoch = self.issued_to[node]
            .iter()
            .rev()
            .find(|e| (e.lo..=e.hi).contains(&token))
            .map_or(self.epoch, |e| e.epoch);
        rank_of(epoch, token)
    }

    /// A grant of `token` to `to` was issued.
    pub fn issued(&mut self, to: NodeId, token: Token) {
        let epochs = &mut self.issued_to[to];
        debug_assert!(
            epochs.back().is_none_or(|e| e.epoch <= self.epoch),
            "a node's epochs are kept oldest first"
        );
        match epochs.back_mut() {
            Some(e) if e.epoch == self.epoch => {
                e.lo = e.lo.min(token);
                e.hi = e.hi.max(token);
            }
            _ => {
                if epochs.len() == EPOCHS_KEPT {
                    epochs.pop_front();
                }
                epochs.push_back(EpochTokens {
                    epoch: self.epoch,
                    lo: token,
                    hi: token,
                });
            }
        }
        self.latest = self.latest.max(self.rank(to, token));
    }

    /// `node` took lease `token` with the register at `version`: its copy holds every write up
    /// to `version`, and its own writes under `token` from now on.
    pub fn holding(&mut self, node: NodeId, token: Token, version: u64) {
        self.copies[node] = Copy {
            token: Some(token),
            prefix: version,
        };
    }

    /// The newest token issued so far, as a rank.
    pub fn latest(&self) -> Rank {
        self.latest
    }

    /// A read admitted under `token` is served at `node` now from its copy; when it arrived,
    /// the last write to its key had brought the register to version `arrived`. Stale if the
    /// copy misses a write up to `arrived`. Returns (zombie, stale).
    pub fn read(&mut self, node: NodeId, token: Token, arrived: u64) -> (bool, bool) {
        let prefix = self.copies[node].prefix;
        assert!(
            prefix <= self.version,
            "a copy is never ahead of the register it copies"
        );
        self.judge_read(node, token, prefix, arrived)
    }

    /// A read admitted under `token` is served at `node` now from a log prefix holding the
    /// register's first `view` writes; when it arrived, the last write to its key had brought
    /// the register to version `arrived`. Stale if that write lies beyond the prefix. Returns
    /// (zombie, stale).
    pub fn read_at(&mut self, node: NodeId, token: Token, view: u64, arrived: u64) -> (bool, bool) {
        self.judge_read(node, token, view, arrived)
    }

    /// The one rule for every read: served at `node` now under `token` from a state holding
    /// the register's first `view` writes, having arrived when the last write to its key had
    /// brought the register to `arrived`. Stale iff that write is not among the `view`
    /// (linearizability: a write that took effect before the read arrived must show; one after
    /// need not). A zombie action iff `token` is superseded now, when the work is done.
    /// Returns (zombie, stale).
    fn judge_read(&mut self, node: NodeId, token: Token, view: u64, arrived: u64) -> (bool, bool) {
        debug_assert!(
            arrived <= self.version,
            "a read arrived at a version the register has reached"
        );
        self.counts.reads_served += 1;
        let zombie = !self.shared_reads && self.rank(node, token) < self.latest;
        if zombie {
            self.counts.zombie_actions += 1;
        }
        let stale = arrived > view;
        if stale {
            self.counts.stale_reads += 1;
        }
        (zombie, stale)
    }

    /// A write admitted under `token` takes effect at `node` now and is sent to the resource.
    /// Returns whether it is a zombie action.
    pub fn write_sent(&mut self, node: NodeId, token: Token) -> bool {
        self.counts.writes_sent += 1;
        let zombie = self.rank(node, token) < self.latest;
        if zombie {
            self.counts.zombie_actions += 1;
        }
        zombie
    }

    /// The resource applied a write from `node` under `token`, to `key` (`None`: the one
    /// register, every key). Returns whether it was unsafe: a write with a newer token had been
    /// applied before it.
    pub fn write_applied(&mut self, node: NodeId, token: Token, key: Option<u32>) -> bool {
        let rank = self.rank(node, token);
        let unsafe_write = rank < self.max_applied;
        if unsafe_write {
            self.counts.unsafe_writes += 1;
        }
        self.max_applied = self.max_applied.max(rank);
        self.version += 1;
        match key.and_then(|k| self.key_versions.get_mut(k as usize)) {
            Some(v) => *v = self.version,
            None => self.keyless_version = self.version,
        }
        self.counts.writes_applied += 1;
        // The writer's copy has its own write: its prefix grows if the write lands right after
        // it (otherwise the write in between stays missing until a new grant).
        let copy = &mut self.copies[node];
        if copy.token == Some(token) && copy.prefix + 1 == self.version {
            copy.prefix = self.version;
        }
        unsafe_write
    }

    /// Log entry `index` was reported committed. Returns whether this is its first report: every
    /// index up to a reporter's commit index has been reported before it (a node's commit index
    /// only comes from leaders, and a leader reports all it commits), so the highest index
    /// reported tells a first report from a repeat.
    ///
    /// Panics when entry `index` is reported with a term other than its first report's: a
    /// committed write was lost, which a correct replicated log never does. The terms are kept
    /// as runs of entries of one term (a log's terms never fall along it), the last
    /// [`TERM_RUNS_KEPT`] of them: a repeat older than those, or of an index no report named
    /// between two runs, is not checked.
    pub fn first_commit(&mut self, index: u64, token: Token) -> bool {
        let first = index > self.committed_index;
        if first {
            debug_assert!(
                self.committed_terms.back().is_none_or(|r| r.last < index),
                "runs of committed terms are kept in index order"
            );
            self.committed_index = index;
            match self.committed_terms.back_mut() {
                Some(run) if run.term == token => run.last = index,
                _ => {
                    if self.committed_terms.len() == TERM_RUNS_KEPT {
                        self.committed_terms.pop_front();
                    }
                    self.committed_terms.push_back(TermRun {
                        first: index,
                        last: index,
                        term: token,
                    });
                }
            }
            return true;
        }
        let runs = &self.committed_terms;
        let at = runs.partition_point(|r| r.first <= index);
        if let Some(run) = at.checked_sub(1).map(|i| runs[i]) {
            if index <= run.last {
                let term = run.term;
                assert_eq!(
                    term, token,
                    "log entry {index} was committed under term {term} and again under term \
                     {token}: a committed write was lost"
                );
            }
        }
        false
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

/// `token` of epoch `epoch` as a [`Rank`].
fn rank_of(epoch: u64, token: Token) -> Rank {
    assert!(
        token < 1 << EPOCH_SHIFT,
        "token {token} is beyond the 2^{EPOCH_SHIFT} tokens a run with a forgetful grantor \
         restart can order"
    );
    epoch << EPOCH_SHIFT | token
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_is_stale_as_of_its_arrival_and_a_zombie_as_of_its_answer() {
        // Node 0 holds token 1 from version 0. A read arrives with the register at version 0;
        // then token 2 goes to node 1, which writes once: version 1.
        let mut h = Harm::new(2, 1, false);
        h.issued(0, 1);
        h.holding(0, 1, 0);
        let arrived = h.version_of(0);
        h.issued(1, 2);
        assert!(!h.write_applied(1, 2, None));
        // Served now from the copy (version 0): the write came after its arrival, so it is not
        // stale; but token 1 is superseded now, when the work is done: a zombie action.
        assert_eq!(h.read(0, 1, arrived), (true, false));
        // A read arriving now must see version 1: stale (and a zombie).
        assert_eq!(h.read(0, 1, h.version_of(0)), (true, true));
        assert_eq!(h.counts().stale_reads, 1);
        assert_eq!(h.counts().zombie_actions, 2);
        assert_eq!(h.counts().reads_served, 2);
    }

    #[test]
    fn an_own_write_landing_after_a_gap_does_not_fill_it() {
        // Node 0 holds token 1 from version 0. A zombie write of node 1 (token 0) lands first:
        // version 1, which node 0's copy misses. A read arrives (must see 1), then node 0's own
        // write lands as version 2. The copy holds 0 plus its write 2, not 1: the read served
        // now is stale. (Counting writes, 0 + 1 own = 1, would wrongly hide the gap.)
        let mut h = Harm::new(2, 1, false);
        h.issued(1, 0);
        h.issued(0, 1);
        h.holding(0, 1, 0);
        h.write_applied(1, 0, None);
        let arrived = h.version_of(0);
        assert_eq!(arrived, 1);
        h.write_applied(0, 1, None);
        assert_eq!(h.read(0, 1, arrived), (false, true));
        // A new grant carrying version 2 fills the gap: its reads are fresh again.
        h.issued(0, 2);
        h.holding(0, 2, 2);
        assert_eq!(h.read(0, 2, h.version_of(0)), (false, false));
        assert_eq!(h.counts().stale_reads, 1);
    }

    #[test]
    fn a_log_read_is_stale_only_when_it_misses_a_write_to_its_own_key() {
        // Three keys. Committed: key 1 (version 1), then key 2 (version 2).
        let mut h = Harm::new(1, 3, false);
        h.issued(0, 1);
        assert!(!h.write_applied(0, 1, Some(1)));
        assert!(!h.write_applied(0, 1, Some(2)));
        assert_eq!(
            (h.version_of(0), h.version_of(1), h.version_of(2)),
            (0, 1, 2)
        );
        // A read from the prefix of the first write: key 1 is there, key 2 is not, key 0 was
        // never written.
        let at = |h: &Harm, k| h.version_of(k);
        assert_eq!(h.read_at(0, 1, 1, at(&h, 1)), (false, false));
        assert_eq!(h.read_at(0, 1, 1, at(&h, 2)), (false, true));
        assert_eq!(h.read_at(0, 1, 1, at(&h, 0)), (false, false));
        // A write that names no key (the base protocol's register) is a write to every key.
        assert!(!h.write_applied(0, 1, None));
        assert_eq!((h.version_of(0), h.version_of(1)), (3, 3));
        assert_eq!(h.read_at(0, 1, 2, at(&h, 0)), (false, true));
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
            h.issued(0, 1);
            h.issued(0, 2);
            let now = h.version_of(0);
            assert_eq!(h.read_at(0, 1, 0, now), (zombie, false));
            assert_eq!(h.read(0, 1, now), (zombie, false));
            assert_eq!(h.counts().zombie_actions, 2 * u64::from(zombie));
        }
    }

    #[test]
    fn a_copy_counts_only_the_writes_of_its_own_lease() {
        // Node 0 holds token 1 from version 0 and writes twice (version 2); it crashes, and is
        // granted token 1 again with the register at version 2. Its copy holds 2 and the write
        // applied since: version 3, not 2 + 3 (which would be ahead of the register).
        let mut h = Harm::new(2, 1, false);
        h.issued(0, 1);
        h.holding(0, 1, 0);
        h.write_applied(0, 1, None);
        h.write_applied(0, 1, None);
        h.forget(0);
        h.new_epoch();
        h.issued(0, 1);
        h.holding(0, 1, 2);
        h.write_applied(0, 1, None);
        assert_eq!(h.read(0, 1, h.version()), (false, false));
        // A write from node 1 (version 4) makes the copy stale: 3 < 4.
        h.write_applied(1, 1, None);
        assert_eq!(h.read(0, 1, h.version()), (false, true));
    }

    #[test]
    fn a_token_of_a_later_epoch_is_newer_whatever_its_number() {
        // Epoch 0: node 0 is issued 1 and 3 (ranks 1 and 3). A grantor forgets: epoch 1 issues
        // 1 to node 1, rank 2^48 + 1, newer than 3 of epoch 0.
        let mut h = Harm::new(2, 1, false);
        h.issued(0, 1);
        h.issued(0, 3);
        assert_eq!(
            (h.rank(0, 3), h.latest()),
            (3, 3),
            "epoch 0: the numbers alone"
        );
        h.new_epoch();
        assert_eq!(h.latest(), 3, "nothing issued in epoch 1 yet");
        assert!(!h.write_sent(0, 3), "node 0's token 3 is still the newest");
        h.issued(1, 1);
        let one = (1 << 48) + 1;
        assert_eq!((h.rank(1, 1), h.rank(0, 3), h.latest()), (one, 3, one));
        // Node 0 acting under 3 (epoch 0) is a zombie; node 1 under 1 (epoch 1) is not.
        assert!(h.write_sent(0, 3));
        assert!(!h.write_sent(1, 1));
        // Node 1's write lands first: node 0's token-3 write after it is unsafe.
        assert!(!h.write_applied(1, 1, None));
        assert!(h.write_applied(0, 3, None));
        assert_eq!(h.counts().unsafe_writes, 1);
        assert_eq!(h.counts().zombie_actions, 1);
        // A token never issued to a node is of the current epoch: node 1 under 5 is newest.
        assert_eq!(h.rank(1, 5), (1 << 48) + 5);
        // Node 0 issued 1 in epoch 1 too: its token 1 is now of epoch 1, its 3 still of 0.
        h.issued(0, 1);
        assert_eq!((h.rank(0, 1), h.rank(0, 3)), (one, 3));
    }

    #[test]
    fn a_node_keeps_its_last_epochs_only() {
        // Node 0 is issued token 9 in epoch 0, then token 1 in each of EPOCHS_KEPT later
        // epochs: epoch 0 is forgotten, and its 9 is taken to be of the current epoch.
        let mut h = Harm::new(1, 1, false);
        h.issued(0, 9);
        for _ in 0..EPOCHS_KEPT {
            h.new_epoch();
            h.issued(0, 1);
        }
        let epoch = EPOCHS_KEPT as u64;
        assert_eq!(h.issued_to[0].len(), EPOCHS_KEPT);
        assert_eq!(h.rank(0, 1), (epoch << 48) + 1);
        assert_eq!(h.rank(0, 9), (epoch << 48) + 9);
    }

    #[test]
    fn committed_terms_are_kept_as_runs_and_checked() {
        // Entries 1 and 2 under term 1, 4 under term 2 (3 is not a write): two runs.
        let mut h = Harm::new(1, 1, false);
        assert!(h.first_commit(1, 1));
        assert!(h.first_commit(2, 1));
        assert!(h.first_commit(4, 2));
        assert_eq!(h.committed_terms.len(), 2);
        // Repeats that agree are not first reports; 3, between the runs, is not checked.
        assert!(!h.first_commit(2, 1));
        assert!(!h.first_commit(4, 2));
        assert!(!h.first_commit(3, 7));
        // A thousand entries under one term are one run.
        for i in 5..1005 {
            assert!(h.first_commit(i, 3));
        }
        assert_eq!(h.committed_terms.len(), 3);
    }

    #[test]
    #[should_panic(expected = "log entry 2 was committed under term 1 and again under term 2")]
    fn a_committed_entry_reported_under_another_term_panics() {
        let mut h = Harm::new(1, 1, false);
        h.first_commit(1, 1);
        h.first_commit(2, 1);
        h.first_commit(3, 2);
        h.first_commit(2, 2);
    }

    #[test]
    fn the_committed_terms_kept_are_bounded() {
        // One entry per term: TERM_RUNS_KEPT + 10 runs, of which the first 10 are dropped; a
        // repeat of entry 1 under another term is then not checked.
        let mut h = Harm::new(1, 1, false);
        for i in 1..=(TERM_RUNS_KEPT as u64 + 10) {
            h.first_commit(i, i);
        }
        assert_eq!(h.committed_terms.len(), TERM_RUNS_KEPT);
        assert_eq!(h.committed_terms[0].first, 11);
        assert!(!h.first_commit(1, 99));
    }
}
