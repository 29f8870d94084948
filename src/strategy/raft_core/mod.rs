//! The Raft core shared by the protocols built on Raft (`RaftLeaderLease`, `LeaseGuard`): terms,
//! votes and elections, the replicated log with its matching check, commits of entries of the
//! current term only, stepping down, and compaction of the committed prefix behind a snapshot.
//!
//! It is a library the protocols use, not a protocol, and must stay one: nothing here may hold
//! a lease, serve a read, admit a write or claim an authority (those rules are each protocol's),
//! or know how a protocol carries entries (`RaftLeaderLease` sends each follower its next entry
//! per heartbeat round and per acknowledgement; LeaseGuard's followers subscribe to the
//! leader's log, which streams entries as it appends them). As etcd-io/raft and raft-rs are, it
//! is a state machine the protocol drives: the protocol hands it what arrived (a vote request, a
//! vote, a leader's entry, an acknowledgement's index) and it answers with the state it moved
//! to, with votes sent and the election timer armed through the protocol's [`Out`], and with
//! [`Fact::Committed`] for each client write a leader commits. It must read no clock or
//! random stream but the [`Cx`] it is handed, arm no timer but [`ELECTION`], and send no
//! message but votes.
//!
//! The rules, as Raft has them:
//! - **Terms.** A message of a higher term moves a node to that term as a follower, forgetting
//!   its vote ([`RaftCore::become_follower`], which the protocol calls so that it can drop its
//!   own leader state with it).
//! - **Votes.** A candidate votes for itself and asks every other replica; a replica grants one
//!   vote per term, to a candidate whose log is at least as up to date as its own (a higher last
//!   term, or the same last term and at least as long), and restarts its election timer when it
//!   grants. A majority of votes, the candidate's own included, makes it leader.
//! - **PreVote** (`pre_vote`, as etcd-io/raft and raft-rs have it). A node whose election timer
//!   runs out first asks as a pre-candidate, for the next term without moving to it; a replica
//!   grants a pre-vote to a candidate of a higher term whose log is at least as up to date,
//!   without casting its vote, moving to that term or restarting its timer. Only a majority of
//!   pre-votes starts the real election. A node cut off from a majority thus never raises its
//!   term, and cannot depose a leader when it rejoins. Whether a replica refuses a campaign for
//!   having heard from its leader lately (stickiness) is the protocol's rule, not the core's.
//! - **Commit.** A leader commits the highest index a majority stores (its own log included)
//!   only if that entry is of its term; the entries before it commit with it (an entry of an
//!   earlier term never commits by being counted, Raft's Figure 8).
//! - **Compaction.** A leader keeps the committed entries above the lowest index its followers
//!   are known to store, but no more than the last [`RETAIN`]; a follower keeps the last
//!   [`RETAIN`] (it may come to lead followers that lag). A follower that needs entries already
//!   compacted gets a [`Snapshot`] of the committed prefix instead (raft-rs's `MsgSnapshot`).
//!   A leader's uncommitted tail is bounded too: it admits no entry while [`MAX_UNCOMMITTED`]
//!   wait (raft-rs's `max_uncommitted_size`), so a node's log stays bounded whatever the run's
//!   length.
//! - **Delivery.** Raft's implementations run over TCP (etcd's and TiKV's gRPC streams), which
//!   never hand a message up twice; the simulated network may (`network.duplicate`), and marks
//!   the second copy ([`Cx::duplicate`]). The protocols drop it, as such a transport would
//!   ([`first_copy`]), so a duplicated message changes nothing a single copy would not: not
//!   the election timer (re-armed with a fresh draw at each contact), not a leader's streams
//!   to a follower (each acknowledgement sends the next entry). Their handlers also take a
//!   late or reordered message as Raft does: acknowledgements move progress only forward, a
//!   vote is counted once, an entry already stored is not stored again.

mod election;
mod log;
mod reads;
#[cfg(test)]
mod tests;

pub use election::Election;
pub use log::{Entry, Log, Snapshot};
pub use reads::{KeptRead, PendingReads, MAX_PENDING_READS};

use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::strategy::{Cx, Fact, Out, Store, TimerId};

/// The election timer, the one timer the core arms. A protocol's own timers take other ids.
pub const ELECTION: TimerId = 0;

/// Committed entries a node keeps for peers that lag behind; further back they get a snapshot.
pub const RETAIN: u64 = 16_384;

/// Uncommitted entries a leader holds at most; while that many wait it admits no new one.
pub const MAX_UNCOMMITTED: u64 = 16_384;

/// What a protocol's entries carry besides a client write (`X` of [`Entry`]), and the token
/// a client write an entry carries commits under: its term, unless the protocol's writes carry
/// a token of their own (the revision of a lock's key).
pub trait Payload: Copy + Default {
    /// The token of a committed client write of an entry of `term` carrying this.
    fn write_token(&self, term: u64) -> Token {
        term
    }
    /// Whether a client write of an entry carrying this is acknowledged when it commits (its
    /// writer is the member that took it); false when the writer, outside the group, learns of
    /// the commit from an answer. True by default.
    fn acked_at_commit(&self) -> bool {
        true
    }
}

impl Payload for () {}
impl Payload for crate::time::LocalTime {}

/// A replica's state in its term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Follower,
    /// Asking for pre-votes for the next term, still in its own (`pre_vote`).
    PreCandidate,
    Candidate,
    Leader,
}

/// A candidate's request for a vote. `transfer`: the election a leadership transfer started,
/// which a follower does not refuse for having heard from its leader lately. `pre`: a
/// pre-candidate's request, for `term` (its own term + 1) without having moved to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VoteRequest {
    pub term: u64,
    pub last_index: u64,
    pub last_term: u64,
    pub transfer: bool,
    pub pre: bool,
}

/// The messages the core sends itself, in the protocol's message type.
pub trait VoteMessages {
    fn request_vote(request: VoteRequest) -> Self;
    fn vote(term: u64, granted: bool) -> Self;
    /// The answer to a pre-vote request: of the request's term when granted, else of the
    /// voter's own (a protocol that never asks for pre-votes is never asked to answer one).
    fn pre_vote(term: u64, granted: bool) -> Self;
}

/// What a replica keeps across a crash: Raft's persistent state.
#[derive(Clone, Debug, Default)]
pub struct Disk<X> {
    term: u64,
    voted_for: Option<NodeId>,
    log: Log<X>,
}

/// Raft's persistent state at a glance: the term, the vote, and the log's last entry (index
/// and term: by the Log Matching Property they name the whole log). A call that changes it
/// must make it durable before it answers ([`persisting`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HardState {
    term: u64,
    voted_for: Option<NodeId>,
    last: (u64, u64),
}

/// A call into replica `node` (`call`), whose Raft state `core` reads: if the call changed its
/// term, vote or log, it writes them to disk and waits, and what it sent leaves once they are
/// durable (raft-rs's `Ready`: persist, then send).
pub fn persisting<T, X: Payload, P: Copy, M>(
    node: &mut T,
    core: impl Fn(&T) -> &RaftCore<X, P>,
    out: &mut Out<M>,
    call: impl FnOnce(&mut T, &mut Out<M>),
) {
    let before = core(node).hard_state();
    call(node, out);
    if core(node).hard_state() != before {
        out.persist();
    }
}

/// What a leader knows of one follower: the highest index known to match its own log, and
/// what the protocol keeps besides (`P`).
#[derive(Clone, Copy, Debug)]
pub struct Progress<P> {
    pub node: NodeId,
    pub matched: u64,
    pub ext: P,
}

/// The `majority`-th highest of `values`: what a majority has reached, when `values` holds
/// one value per replica.
pub fn quorum(values: impl Iterator<Item = u64>, majority: usize) -> u64 {
    let mut v: Vec<u64> = values.collect();
    debug_assert!(
        majority >= 1 && majority <= v.len(),
        "a majority of the replicas"
    );
    v.sort_unstable_by(|a, b| b.cmp(a));
    v[majority - 1]
}

/// Whether the message being handled is its first copy (see the module doc: a second copy of a
/// message the network duplicated is dropped, as Raft's transports never deliver one).
pub fn first_copy(cx: &Cx) -> bool {
    !cx.duplicate
}

/// How many of a scenario's nodes are replicas (a Raft group has no other role).
pub fn replicas(scenario: &Scenario) -> usize {
    let nodes = scenario.nodes.iter();
    nodes.filter(|n| n.role == Role::Replica).count()
}

/// How many replicas make a majority.
pub fn majority(cx: &Cx) -> usize {
    cx.peers(Role::Replica).count() / 2 + 1
}

/// One replica's Raft state, with entries carrying `X` and per-follower progress carrying `P`.
#[derive(Debug)]
pub struct RaftCore<X, P> {
    pub node: NodeId,
    pub term: u64,
    pub voted_for: Option<NodeId>,
    pub log: Log<X>,
    pub state: State,
    /// The leader of its term it knows of (itself when leading).
    pub leader: Option<NodeId>,
    /// As leader: the other replicas.
    pub peers: Vec<Progress<P>>,
    pub election: Election,
    /// Elections start with a pre-vote (see the module doc). Off unless the protocol sets it.
    pub pre_vote: bool,
    /// Never below the log's base, never past its last index.
    commit: u64,
    /// The state machine: every key's value after the first `commit` entries.
    applied: Store,
    /// As candidate: who granted its vote (itself first). A set, not a count: a vote may
    /// arrive twice.
    votes: Vec<NodeId>,
    /// [`RETAIN`] (smaller in unit tests).
    retain: u64,
    /// The last index a user that applies committed entries itself (etcd's member, its lessor
    /// and key table) has applied: compaction never passes it, so no committed entry goes
    /// before its user has seen it. `None` for a user that reads the core's own state machine.
    user_applied: Option<u64>,
}

impl<X: Payload, P: Copy> RaftCore<X, P> {
    /// Node `node` starting from `disk`, a follower: what it compacted is committed.
    pub fn new(node: NodeId, disk: Disk<X>, election: Election) -> RaftCore<X, P> {
        RaftCore {
            node,
            term: disk.term,
            voted_for: disk.voted_for,
            commit: disk.log.base(),
            applied: disk.log.base_state().clone(),
            log: disk.log,
            state: State::Follower,
            leader: None,
            peers: Vec::new(),
            election,
            pre_vote: false,
            votes: Vec::new(),
            retain: RETAIN,
            user_applied: None,
        }
    }

    /// Its user has applied every committed entry through `index` (and applies the rest
    /// itself): compaction keeps the entries after it until told they were applied.
    pub fn user_applied_through(&mut self, index: u64) {
        self.user_applied = Some(index);
    }

    /// What it keeps across a crash.
    pub fn into_disk(self) -> Disk<X> {
        Disk {
            term: self.term,
            voted_for: self.voted_for,
            log: self.log,
        }
    }

    /// What it must persist, at a glance (see [`HardState`]).
    pub fn hard_state(&self) -> HardState {
        HardState {
            term: self.term,
            voted_for: self.voted_for,
            last: (self.log.last_index(), self.log.last_term()),
        }
    }

    /// What its disk holds once what it wrote is durable.
    pub fn disk_image(&self) -> Disk<X> {
        Disk {
            term: self.term,
            voted_for: self.voted_for,
            log: self.log.clone(),
        }
    }

    pub fn commit(&self) -> u64 {
        self.commit
    }

    /// The state machine: every key's value after the committed entries.
    pub fn applied(&self) -> &Store {
        &self.applied
    }

    pub fn last_index(&self) -> u64 {
        self.log.last_index()
    }

    pub fn is_leader(&self) -> bool {
        self.state == State::Leader
    }

    /// Whether a leader holds [`MAX_UNCOMMITTED`] entries waiting to commit (it admits no more).
    pub fn tail_full(&self) -> bool {
        self.last_index() - self.commit >= MAX_UNCOMMITTED
    }

    /// Moves to `term` (if higher, with no vote cast in it) as a follower with no leader
    /// known. Returns whether it was leading: the protocol then drops its leader state.
    pub fn become_follower(&mut self, term: u64) -> bool {
        if term > self.term {
            self.term = term;
            self.voted_for = None;
        }
        let was_leader = self.state == State::Leader;
        self.state = State::Follower;
        self.leader = None;
        self.peers.clear();
        was_leader
    }

    /// Campaigns in the next term (unless leading): votes for itself, re-arms the election
    /// timer and asks every other replica. Returns whether its own vote is a majority already
    /// (a group of one): the protocol then makes it leader.
    pub fn campaign<M: VoteMessages>(
        &mut self,
        cx: &mut Cx,
        transfer: bool,
        out: &mut Out<M>,
    ) -> bool {
        if self.state == State::Leader {
            return false;
        }
        // An attempt begins when a follower campaigns; a campaign after a pre-vote, or again
        // after a split vote, goes on with it.
        if self.state == State::Follower {
            out.report(Fact::Seeking);
        }
        self.term += 1;
        self.voted_for = Some(self.node);
        self.state = State::Candidate;
        self.leader = None;
        self.election.heard_leader_at = None;
        self.votes.clear();
        self.votes.push(self.node);
        self.election.arm(cx, out);
        let request = VoteRequest {
            term: self.term,
            last_index: self.last_index(),
            last_term: self.log.last_term(),
            transfer,
            pre: false,
        };
        for p in cx.peers(Role::Replica).filter(|&p| p != self.node) {
            out.send(p, M::request_vote(request));
        }
        self.votes.len() >= majority(cx)
    }

    /// Asks for pre-votes for the next term (unless leading), staying in its own term and
    /// voting for no one: it counts itself, re-arms the election timer and asks every other
    /// replica. Returns whether its own pre-vote is a majority already (a group of one): the
    /// protocol then campaigns for real.
    pub fn pre_campaign<M: VoteMessages>(&mut self, cx: &mut Cx, out: &mut Out<M>) -> bool {
        if self.state == State::Leader {
            return false;
        }
        if self.state == State::Follower {
            out.report(Fact::Seeking);
        }
        self.state = State::PreCandidate;
        self.leader = None;
        self.election.heard_leader_at = None;
        self.votes.clear();
        self.votes.push(self.node);
        self.election.arm(cx, out);
        let request = VoteRequest {
            term: self.term + 1,
            last_index: self.last_index(),
            last_term: self.log.last_term(),
            transfer: false,
            pre: true,
        };
        for p in cx.peers(Role::Replica).filter(|&p| p != self.node) {
            out.send(p, M::request_vote(request));
        }
        self.votes.len() >= majority(cx)
    }

    /// Answers `from`'s request for a vote, once the protocol has moved to a higher term it
    /// carries (or refused it), as etcd-io/raft's `Step` (raft.go) and raft-rs's `step`
    /// (src/raft.rs) do. A request of a lower term is ignored, not answered, unless it asks for
    /// a pre-vote (refused in its own term then: a pre-candidate of an older term learns it is
    /// behind). Otherwise it may vote (`canVote`) for the candidate it voted for in the term, or
    /// for anyone if it voted for no one and knows no leader of the term, whatever its state (a
    /// pre-candidate of the term grants a real vote so), and a pre-vote for a higher term; it
    /// grants when it may and the candidate's log is at least as up to date as its own. A real
    /// vote granted is cast and re-arms the election timer; a pre-vote casts nothing, moves no
    /// one and leaves the timer alone. Returns whether it granted.
    pub fn answer_vote<M: VoteMessages>(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        request: VoteRequest,
        out: &mut Out<M>,
    ) -> bool {
        debug_assert!(
            request.pre || request.term <= self.term,
            "a higher term is taken first"
        );
        if request.term < self.term && !request.pre {
            return false;
        }
        let ours = (self.log.last_term(), self.last_index());
        let up_to_date = (request.last_term, request.last_index) >= ours;
        let may = self.voted_for == Some(from)
            || (self.voted_for.is_none() && self.leader.is_none())
            || (request.pre && request.term > self.term);
        let granted = may && up_to_date && request.term >= self.term;
        if request.pre {
            let term = if granted { request.term } else { self.term };
            out.send(from, M::pre_vote(term, granted));
            return granted;
        }
        if granted {
            debug_assert!(self.state != State::Leader && self.state != State::Candidate);
            self.voted_for = Some(from);
            self.election.arm(cx, out);
        }
        out.send(from, M::vote(self.term, granted));
        granted
    }

    /// Leader stickiness (etcd-io/raft's `inLease`, under check-quorum): whether this replica
    /// ignores the campaign `m` of a higher term, as a leader or as a follower that heard from
    /// its leader less than an election timeout ago at `now`, unless a leadership transfer
    /// started it.
    pub fn in_lease(&self, m: &VoteRequest, now: crate::time::LocalTime) -> bool {
        !m.transfer
            && (self.is_leader()
                || (self.state == State::Follower
                    && self.leader.is_some()
                    && self.election.heard_leader_lately(now)))
    }

    /// Counts `from`'s vote of `term`. Returns whether it makes a majority for the candidate
    /// of that term: the protocol then makes it leader.
    pub fn count_vote(&mut self, from: NodeId, term: u64, granted: bool, majority: usize) -> bool {
        if self.state != State::Candidate || term != self.term || !granted {
            return false;
        }
        self.count(from, majority)
    }

    /// Counts `from`'s pre-vote for `term`. Returns whether it makes a majority for the
    /// pre-candidate asking for that term (its own + 1): the protocol then campaigns for real.
    pub fn count_pre_vote(
        &mut self,
        from: NodeId,
        term: u64,
        granted: bool,
        majority: usize,
    ) -> bool {
        if self.state != State::PreCandidate || term != self.term + 1 || !granted {
            return false;
        }
        self.count(from, majority)
    }

    /// Counts `from`'s vote (once); whether the votes make a majority.
    fn count(&mut self, from: NodeId, majority: usize) -> bool {
        if !self.votes.contains(&from) {
            self.votes.push(from);
        }
        self.votes.len() >= majority
    }

    /// Leads its term: the election timer stops, and every other replica gets a progress
    /// record (nothing known to match) with `ext`.
    pub fn become_leader<M>(&mut self, cx: &Cx, ext: P, out: &mut Out<M>) {
        debug_assert_eq!(self.state, State::Candidate);
        self.state = State::Leader;
        self.leader = Some(self.node);
        out.cancel_timer(ELECTION);
        let node = self.node;
        self.peers = cx
            .peers(Role::Replica)
            .filter(|&p| p != node)
            .map(|node| Progress {
                node,
                matched: 0,
                ext,
            })
            .collect();
    }

    /// The position of `node` among the peers.
    pub fn peer(&self, node: NodeId) -> Option<usize> {
        self.peers.iter().position(|p| p.node == node)
    }

    /// Raises what a peer is known to store to `index` (an acknowledgement: a late or repeated
    /// one never lowers it). Returns whether it rose.
    pub fn matched(&mut self, i: usize, index: u64) -> bool {
        let p = &mut self.peers[i];
        let rose = index > p.matched;
        p.matched = p.matched.max(index);
        rose
    }

    /// Commits what a majority stores (the leader's own log included), if it is of the
    /// current term, with everything before it; reports each client write it commits. Returns
    /// whether the commit index moved.
    pub fn commit_quorum<M>(&mut self, majority: usize, out: &mut Out<M>) -> bool {
        debug_assert_eq!(self.state, State::Leader);
        let stored = self.peers.iter().map(|p| p.matched);
        let n = quorum(stored.chain([self.last_index()]), majority);
        if n <= self.commit || self.log.term(n) != Some(self.term) {
            return false;
        }
        self.commit_to(n, out, true);
        true
    }

    /// Moves the commit index up to `n` (no further than the log); with `report` (a leader),
    /// reports each client write it commits. Compacts what no peer needs any more.
    pub fn commit_to<M>(&mut self, n: u64, out: &mut Out<M>, report: bool) {
        let n = n.min(self.last_index());
        if n <= self.commit {
            return;
        }
        while self.commit < n {
            self.commit += 1;
            let e = self
                .log
                .entry(self.commit)
                .expect("committed entries are kept");
            if let Some(writer) = e.writer {
                self.applied.put(e.key, e.value);
                if report {
                    out.report(Fact::Committed {
                        index: self.commit,
                        writer,
                        token: e.extra.write_token(e.term),
                        acked: e.extra.acked_at_commit(),
                        key: e.key,
                        value: e.value,
                    });
                }
            }
        }
        self.compact();
    }

    /// Discards the committed entries no follower needs: a leader keeps those above the lowest
    /// index a follower is known to store, but no more than the last `retain`; a follower
    /// keeps the last `retain`.
    fn compact(&mut self) {
        let mut floor = self.commit.saturating_sub(self.retain);
        if self.state == State::Leader {
            let lowest = self.peers.iter().map(|p| p.matched).min();
            floor = floor.max(lowest.unwrap_or(self.commit).min(self.commit));
        }
        if let Some(applied) = self.user_applied {
            floor = floor.min(applied);
        }
        if floor > self.log.base() {
            self.log.compact(floor);
        }
        debug_assert!(self.log.base() <= self.commit && self.commit <= self.last_index());
    }

    /// Keeps the first `keep` entries (a leader said its log differs after them, or a
    /// follower rewrites what it holds from a new stream); a commit index past them moves back
    /// to them, and the state machine with it (entries dropped that were committed come back the
    /// same: a correct log never loses a committed entry, which the oracle checks).
    pub fn truncate(&mut self, keep: u64) {
        let keep = keep.min(self.last_index()).max(self.log.base());
        self.log.truncate(keep);
        if self.commit > keep {
            self.commit = keep;
            self.applied = self.log.state_through(keep);
        }
    }

    /// A snapshot of its committed prefix, for a peer that needs entries it compacted.
    pub fn snapshot(&self) -> Snapshot<X> {
        self.log.snapshot(self.commit, self.applied.clone())
    }

    /// Takes a leader's snapshot of its committed prefix: if the log holds the snapshot's last
    /// entry it keeps what follows, else it is replaced by the snapshot; either way everything
    /// up to it is committed. Returns whether the commit index moved (a snapshot of no more
    /// than it committed changes nothing).
    pub fn install(&mut self, s: Snapshot<X>) -> bool {
        if s.index <= self.commit {
            return false;
        }
        let (index, state) = (s.index, s.state.clone());
        if self.log.term(index) != Some(s.entry.term) {
            self.log.reset_to(s);
        }
        self.commit = index;
        self.applied = state;
        self.compact();
        true
    }

    /// Keeps only `retain` committed entries instead of [`RETAIN`].
    #[cfg(test)]
    pub(crate) fn set_retain(&mut self, retain: u64) {
        self.retain = retain;
    }
}
