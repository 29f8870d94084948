//! `LeaseGuard`: Raft replicas whose log is the lease (LeaseGuard, SIGMOD 2026), in five modes,
//! from no lease at all to LeaseGuard itself.
//!
//! Every node is a `Replica` built on the Raft core ([`crate::strategy::raft_core`]): terms,
//! votes, the election timer, the log and its commit rule. This protocol adds how entries
//! travel, the lease carried by the log, and the reads.
//!
//! Every log entry carries its creator's clock interval: the wall clock's reading w when the
//! leader created it, with TT = [w - e, w + e] and e = `max_clock_error` (the scenario's wall
//! clocks must stay within e of true time for the rules to hold). With T the lease
//! (`lease.duration`):
//! - **read lease**: a leader serves reads while the newest committed entry c has
//!   c.earliest + T > now.latest, that is while its wall clock reads less than c.w + T - 2e;
//! - **prior term expired**: a new leader's newest entry p of an earlier term has expired when
//!   p.latest + T < now.earliest, that is once its wall clock reads more than p.w + T + 2e.
//!
//! | mode | reads | writes |
//! |---|---|---|
//! | `Inconsistent` | at once, from the committed state, unchecked | appended at once |
//! | `Quorum` | after an entry appended after the read commits (a round trip) | appended at once |
//! | `LogLease` | under its own lease: an entry of its term committed, prior term expired | the same |
//! | `DeferCommit` | as LogLease | appended at once; the commit index waits for the prior term to expire, then moves in one burst |
//! | `LeaseGuard` | as DeferCommit, and at once under the lease it inherited (the newest committed entry may be of an earlier term), except keys written in its limbo region | as DeferCommit |
//!
//! The limbo region is the entries of earlier terms past the new leader's commit index when it
//! was elected: it cannot know whether they committed, so it refuses reads of the keys they
//! write until it commits them.
//!
//! Replication is as in the published simulator (and MongoDB): a follower finds the leader from
//! heartbeats (every replica pings every other every `heartbeat`, a tenth of that while it
//! knows no leader; a new leader says so at its next heartbeat), then subscribes to the
//! leader's log and the leader streams entries as it appends them (a follower that needs
//! entries the leader compacted gets a snapshot of the committed prefix first). The follower
//! writes each entry in `log_write`, then acknowledges it. An entry of the leader's term
//! commits when a majority has written it (older ones with it). The leader appends an empty
//! entry every `noop_every` (its monotonic clock), and at election; `StepDown` makes it a
//! follower, `TransferLeader(to)` makes `to` campaign.
//!
//! A new leader takes authority (its term supersedes older ones: [`Fact::Issued`]) when the
//! prior term has expired, or at election when there is nothing to wait for (`Inconsistent`,
//! `Quorum`, or an empty log): until then an old leader serving under its lease is no zombie.
//!
//! Authorities: write authority (shared: the log makes two believing leaders harmless) while a
//! node leads; read authority while it may serve lease reads: exclusive (two nodes serving
//! reads from local state at once is an overlap), except in `LeaseGuard` mode where a new
//! leader's inherited lease overlaps its predecessor's by design. A read is served from the
//! state its committed prefix leaves (in `Quorum` mode, once the entry appended after it
//! commits: from the state then).

mod msg;
pub mod settings;

use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::strategy::raft_core::{
    self, majority, Election, KeptRead, PendingReads, RaftCore, State,
};
use crate::strategy::{
    Authorities, Belief, Beliefs, Claim, Command, Cx, Fact, Key, LeaseParams, NodeLogic, Out,
    Protocol, Request, Store, TimerId, Value,
};
use crate::time::{LocalDur, LocalTime};
pub use msg::{Entry, Message};
pub use settings::LeaseGuardMode;
use std::collections::{BTreeMap, VecDeque};

/// The protocol's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseGuardConfig {
    pub mode: LeaseGuardMode,
    pub max_clock_error: LocalDur,
    pub noop_every: LocalDur,
    pub election_timeout: LocalDur,
    pub heartbeat: LocalDur,
    pub log_write: LocalDur,
}

/// `LeaseGuard` with its configuration.
#[derive(Clone, Debug)]
pub struct LeaseGuard {
    c: LeaseGuardConfig,
    description: String,
}

impl LeaseGuard {
    pub fn new(c: LeaseGuardConfig, description: String) -> LeaseGuard {
        LeaseGuard { c, description }
    }
}

/// An entry as a replica stores it: the core's, carrying its creator's wall-clock reading.
type Stored = raft_core::Entry<LocalTime>;

/// What a replica keeps across a crash.
pub type Disk = raft_core::Disk<LocalTime>;

impl From<Stored> for Entry {
    fn from(s: Stored) -> Entry {
        Entry {
            term: s.term,
            writer: s.writer,
            key: s.key,
            value: s.value,
            wall: s.extra,
        }
    }
}

impl From<Entry> for Stored {
    fn from(e: Entry) -> Stored {
        Stored {
            term: e.term,
            writer: e.writer,
            key: e.key,
            value: e.value,
            extra: e.wall,
        }
    }
}

const HEARTBEAT: TimerId = 1;
const NOOP: TimerId = 2;
const LOG_WRITE: TimerId = 3;
const EXPIRY: TimerId = 4;

/// How many out-of-order entries a follower keeps (beyond that it drops them and catches up
/// through its next subscription).
const MAX_EARLY: usize = 4096;

impl Protocol for LeaseGuard {
    type Logic = Replica;

    fn authorities(&self) -> Authorities {
        // A new leader's inherited lease overlaps its predecessor's by design.
        let read = match self.c.mode {
            LeaseGuardMode::LeaseGuard => Claim::Shared,
            _ => Claim::Exclusive,
        };
        Authorities {
            read,
            write: Claim::Shared,
        }
    }

    fn describe(&self) -> String {
        self.description.clone()
    }

    /// A replica writes Raft's term, vote and log before it answers.
    fn persists(&self, role: Role) -> Option<&'static str> {
        (role == Role::Replica).then_some("Raft's term, vote and log")
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        let replicas = raft_core::replicas(scenario);
        if replicas != scenario.nodes.len() || replicas == 0 {
            p.push("nodes: LeaseGuard has Replicas only, at least one".into());
        }
        let c = &self.c;
        for (field, d) in [
            ("election_timeout", c.election_timeout),
            ("noop_every", c.noop_every),
        ] {
            if d <= LocalDur::ZERO {
                p.push(format!("strategy.{field}: must be positive (got {d})"));
            }
        }
        if c.heartbeat.ns() < 10 {
            p.push(format!(
                "strategy.heartbeat: must be at least 10ns (a tenth of it is the leaderless \
                 heartbeat) (got {})",
                c.heartbeat
            ));
        }
        for (field, d) in [
            ("max_clock_error", c.max_clock_error),
            ("log_write", c.log_write),
        ] {
            if d < LocalDur::ZERO {
                p.push(format!("strategy.{field}: must not be negative (got {d})"));
            }
        }
        if scenario.resource.fencing {
            p.push(
                "resource.fencing: a LeaseGuard group fences by term in its log; the resource \
                 is the log, so there is no separate fencing check to turn on"
                    .into(),
            );
        }
        p
    }

    fn commands(&self) -> &'static [&'static str] {
        &["StepDown", "TransferLeader"]
    }

    fn node_logic(&self, node: NodeId, _role: Role, params: &LeaseParams, disk: Disk) -> Replica {
        let et = self.c.election_timeout;
        Replica {
            c: self.c,
            lease: params.lease,
            // The timeout is drawn from [ET, 2 ET), on the monotonic clock.
            core: RaftCore::new(node, disk, Election::new(et, et, None)),
            subscribed: false,
            queue: VecDeque::new(),
            early: BTreeMap::new(),
            commit_hint: 0,
            verified: 0,
            first_own: 0,
            expired: true,
            limbo: Vec::new(),
            limbo_end: 0,
            pending_reads: PendingReads::default(),
            leads_first: params.initial_leader == Some(node),
        }
    }
}

/// One LeaseGuard replica. As leader, each follower's progress carries the next index to
/// stream to it (`None`: it has not subscribed this term).
pub struct Replica {
    c: LeaseGuardConfig,
    lease: LocalDur,
    core: RaftCore<LocalTime, Option<u64>>,
    /// As follower: subscribed to its leader's log.
    subscribed: bool,
    /// As follower: entries received and not yet written (the head is being written).
    queue: VecDeque<(u64, Entry)>,
    /// As follower: entries of the leader's stream that arrived before one they follow (the
    /// network reorders messages), by index.
    early: BTreeMap<u64, Entry>,
    /// As follower: the leader's commit index as last heard.
    commit_hint: u64,
    /// As follower: its log agrees with the leader's up to this index (what it wrote from the
    /// leader's stream).
    verified: u64,
    /// As leader: the index of its first entry (the one appended at election).
    first_own: u64,
    /// As leader: the prior term's entries have expired (or there are none).
    expired: bool,
    /// As leader (`LeaseGuard` mode): the keys written in its limbo region (sorted), which ends
    /// at index `limbo_end`.
    limbo: Vec<Key>,
    limbo_end: u64,
    /// As leader (`Quorum` mode): reads waiting for the index they need to commit.
    pending_reads: PendingReads,
    /// The scenario's `lease.initial_leader`: it campaigns at its first start (term 0).
    leads_first: bool,
}

impl Replica {
    fn two_errors(&self) -> LocalDur {
        self.c.max_clock_error + self.c.max_clock_error
    }

    /// When reads under the newest committed entry's lease must stop (wall clock): its
    /// earliest + T > now.latest while the wall clock reads less than w + T - 2e.
    fn read_deadline(&self) -> Option<LocalTime> {
        let commit = self.core.commit();
        let c = self.core.log.entry(commit).filter(|_| commit > 0)?;
        Some(c.extra + self.lease - self.two_errors())
    }

    fn deferred_commit(&self) -> bool {
        matches!(
            self.c.mode,
            LeaseGuardMode::DeferCommit | LeaseGuardMode::LeaseGuard
        )
    }

    /// The leader's own lease: an entry of its term committed, the prior term expired, and the
    /// newest committed entry's lease running.
    fn own_lease(&self, wall: LocalTime) -> bool {
        self.core.is_leader()
            && self.expired
            && self.core.commit() >= self.first_own
            && self.read_deadline().is_some_and(|d| wall < d)
    }

    /// Any lease, its own or inherited (`LeaseGuard` mode).
    fn any_lease(&self, wall: LocalTime) -> bool {
        self.core.is_leader() && self.read_deadline().is_some_and(|d| wall < d)
    }

    fn in_limbo(&self, key: Key) -> bool {
        self.core.commit() < self.limbo_end && self.limbo.binary_search(&key).is_ok()
    }

    fn heartbeat(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        let leader = self.core.is_leader();
        let (term, last) = (self.core.term, self.core.last_index());
        for p in cx.peers(Role::Replica).filter(|&p| p != self.core.node) {
            out.send(p, Message::Ping { term, leader, last });
        }
        let every = if self.core.leader.is_some() {
            self.c.heartbeat
        } else {
            LocalDur::from_ns(self.c.heartbeat.ns() / 10)
        };
        out.set_timer(HEARTBEAT, ClockKind::Monotonic, cx.mono + every);
    }

    /// Moves to `term` (if higher) as a follower with no leader known.
    fn become_follower(&mut self, term: u64, out: &mut Out<Message>) {
        self.pending_reads.refuse_all(self.core.term, out);
        if self.core.become_follower(term) {
            out.cancel_timer(EXPIRY);
        }
        self.subscribed = false;
        self.limbo.clear();
        self.limbo_end = 0;
    }

    /// What a message of `term` from `from` tells of the term and the leader: `leads` when the
    /// sender says it leads that term. Returns false when the message is of an older term.
    fn hear(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        term: u64,
        leads: bool,
        out: &mut Out<Message>,
    ) -> bool {
        if term < self.core.term {
            return false;
        }
        if term > self.core.term || (self.core.state == State::Candidate && leads) {
            self.become_follower(term, out);
        }
        if self.core.state == State::Follower {
            if leads {
                if self.core.leader != Some(from) {
                    // A new leader: what an earlier one streamed and is not yet written may
                    // not be in its log, so it is dropped, and acknowledged to no one.
                    self.core.leader = Some(from);
                    self.subscribed = false;
                    self.verified = 0;
                    self.commit_hint = 0;
                    self.drop_stream(out);
                }
                self.core.election.arm(cx, out);
                self.subscribe(out);
            } else if self.core.leader == Some(from) {
                // Its leader stepped down.
                self.core.leader = None;
                self.subscribed = false;
            }
        }
        true
    }

    /// Drops what it received and has not written (a new leader, a mismatch, a snapshot).
    fn drop_stream(&mut self, out: &mut Out<Message>) {
        self.early.clear();
        self.queue.clear();
        out.cancel_timer(LOG_WRITE);
    }

    /// The index after the last entry it has or is writing.
    fn expected(&self) -> u64 {
        self.core.last_index() + self.queue.len() as u64 + 1
    }

    fn subscribe(&mut self, out: &mut Out<Message>) {
        let Some(leader) = self.core.leader else {
            return;
        };
        if self.subscribed || self.core.state != State::Follower {
            return;
        }
        self.subscribed = true;
        let from = self.expected();
        let prev_term = match self.queue.back() {
            Some((_, e)) => e.term,
            None => self.core.log.last_term(),
        };
        let term = self.core.term;
        out.send(
            leader,
            Message::Pull {
                term,
                from,
                prev_term,
            },
        );
    }

    /// The leader has entries up to `last` and none is on its way to be written: the stream
    /// broke (a lost message), so subscribe again.
    fn resubscribe_if_behind(&mut self, from: NodeId, last: u64, out: &mut Out<Message>) {
        if self.core.leader == Some(from) && self.core.state == State::Follower {
            if self.queue.is_empty() && self.expected() <= last {
                self.subscribed = false;
            }
            self.subscribe(out);
        }
    }

    fn campaign(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if self.core.is_leader() {
            return;
        }
        self.subscribed = false;
        self.queue.clear();
        self.early.clear();
        out.cancel_timer(LOG_WRITE);
        if self.core.campaign(cx, false, out) {
            self.become_leader(cx, out);
        }
    }

    fn become_leader(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.core.become_leader(cx, None, out);
        // The prior term's newest entry, and the limbo region behind the commit index.
        self.expired = true;
        let lease_modes = !matches!(
            self.c.mode,
            LeaseGuardMode::Inconsistent | LeaseGuardMode::Quorum
        );
        if lease_modes && self.core.last_index() > 0 {
            let until = self.core.log.last().extra + self.lease + self.two_errors();
            if cx.wall <= until {
                self.expired = false;
                out.set_timer(EXPIRY, ClockKind::Wall, until + LocalDur::from_ns(1));
            }
        }
        if self.c.mode == LeaseGuardMode::LeaseGuard {
            let after = self.core.log.after(self.core.commit());
            self.limbo = after.filter_map(|s| s.writer.and(Some(s.key))).collect();
            self.limbo.sort_unstable();
            self.limbo.dedup();
            self.limbo_end = self.core.last_index();
        }
        self.append(cx, None, out);
        self.first_own = self.core.last_index();
        if self.expired {
            self.take_authority(cx, out);
        }
    }

    /// The prior term has expired (or there was none to wait for): from now on the leader's
    /// term supersedes every older one, and an old leader acting is a zombie.
    fn take_authority(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        out.report(Fact::Issued {
            token: self.core.term,
            to: self.core.node,
            until: cx.mono + self.c.election_timeout,
        });
    }

    /// The leader appends an entry (a client write by `writer` of `value` to `key`, or empty)
    /// and streams it to the followers that are caught up.
    fn append(&mut self, cx: &mut Cx, write: Option<(NodeId, Key, Value)>, out: &mut Out<Message>) {
        let (key, value) = write.map_or((0, 0), |(_, k, v)| (k, v));
        self.core.log.push(Stored {
            term: self.core.term,
            writer: write.map(|w| w.0),
            key,
            value,
            extra: cx.wall,
        });
        let index = self.core.last_index();
        for i in 0..self.core.peers.len() {
            if self.core.peers[i].ext == Some(index) {
                self.stream(i, out);
            }
        }
        self.advance_commit(cx, out);
    }

    /// Sends peer `i` every entry from its next index on.
    fn stream(&mut self, i: usize, out: &mut Out<Message>) {
        let (term, commit) = (self.core.term, self.core.commit());
        let Some(next) = self.core.peers[i].ext else {
            return;
        };
        let node = self.core.peers[i].node;
        for (index, s) in (next..).zip(self.core.log.after(next - 1)) {
            let entry = Entry::from(*s);
            let msg = Message::Append {
                term,
                index,
                entry,
                commit,
            };
            out.send(node, msg);
        }
        self.core.peers[i].ext = Some(self.core.last_index() + 1);
    }

    /// Commits what a majority has written, if of this term (and, deferring commits, once the
    /// prior term has expired); reports client writes and serves the reads that waited.
    fn advance_commit(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if !self.core.is_leader() || (self.deferred_commit() && !self.expired) {
            return;
        }
        if !self.core.commit_quorum(majority(cx), out) {
            return;
        }
        let (term, commit) = (self.core.term, self.core.commit());
        for p in &self.core.peers {
            out.send(p.node, Message::Commit { term, commit });
        }
        for read in self.pending_reads.ready(commit) {
            let value = self.core.applied().get(read.key);
            out.report(Fact::ConfirmedRead {
                token: term,
                since: read.since,
                value,
            });
        }
    }

    /// A follower writes the entry at the head of its queue, acknowledges it and goes on.
    fn write_head(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        let Some((index, e)) = self.queue.pop_front() else {
            return;
        };
        // Queued only at the index after the last (`expected`), and the log moves only here
        // while a queue waits (a mismatch, a snapshot or a new leader drops it).
        debug_assert_eq!(
            index,
            self.core.last_index() + 1,
            "the queue follows the log"
        );
        self.core.log.push(e.into());
        // The leader checked, when it accepted the subscription, that the logs agree up to
        // where it began: so they agree up to here, and so far the leader's commit index holds.
        self.verified = index;
        self.core
            .commit_to(self.commit_hint.min(self.verified), out, false);
        if let Some(leader) = self.core.leader {
            let term = self.core.term;
            out.send(leader, Message::Progress { term, index });
        }
        self.start_write(cx, out);
    }

    /// Starts writing the head of the queue (at once when writes take no time).
    fn start_write(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if self.queue.is_empty() {
            return;
        }
        if self.c.log_write == LocalDur::ZERO {
            while !self.queue.is_empty() {
                self.write_head(cx, out);
            }
        } else {
            out.set_timer(LOG_WRITE, ClockKind::Monotonic, cx.mono + self.c.log_write);
        }
    }

    fn on_append(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        index: u64,
        e: Entry,
        commit: u64,
        out: &mut Out<Message>,
    ) {
        if self.core.leader != Some(from) || self.core.state != State::Follower {
            return;
        }
        self.commit_hint = self.commit_hint.max(commit);
        if index < self.expected() {
            return; // a second copy
        }
        if index > self.expected() {
            // Ahead of one still on its way (or lost: a heartbeat then finds the follower
            // behind and it subscribes again). Kept until the gap fills, within bounds.
            if self.early.len() < MAX_EARLY {
                self.early.insert(index, e);
            }
            return;
        }
        let idle = self.queue.is_empty();
        self.queue.push_back((index, e));
        self.queue_early();
        if idle {
            self.start_write(cx, out);
        }
    }

    /// Queues the entries kept early that now follow in order; those it has (every key held
    /// is past the expected index, so this looks at one entry or two) are dropped.
    fn queue_early(&mut self) {
        while let Some(e) = self.early.remove(&self.expected()) {
            self.queue.push_back((self.expected(), e));
        }
        let expected = self.expected();
        while self
            .early
            .first_key_value()
            .is_some_and(|(&i, _)| i < expected)
        {
            self.early.pop_first();
        }
    }

    /// A snapshot of the leader's committed prefix, ending at `index` with `entry` and leaving
    /// `state`: what the follower has or is writing up to there is committed, and the leader
    /// streams what follows.
    fn on_snapshot(
        &mut self,
        cx: &mut Cx,
        (index, entry, state): (u64, Entry, Store),
        out: &mut Out<Message>,
    ) {
        let s = raft_core::Snapshot {
            index,
            entry: entry.into(),
            state,
        };
        if !self.core.install(s) {
            return;
        }
        self.queue.clear();
        out.cancel_timer(LOG_WRITE);
        self.verified = index;
        self.commit_hint = self.commit_hint.max(index);
        if let Some(leader) = self.core.leader {
            let term = self.core.term;
            out.send(leader, Message::Progress { term, index });
        }
        // What arrived early and follows the snapshot is written next.
        self.queue_early();
        self.start_write(cx, out);
    }

    fn on_pull(&mut self, from: NodeId, m_from: u64, prev_term: u64, out: &mut Out<Message>) {
        let Some(i) = self.core.peer(from) else {
            return;
        };
        let (term, prev) = (self.core.term, m_from - 1);
        if prev < self.core.log.base() {
            // It needs entries compacted away: the committed prefix first, then what follows.
            let s = self.core.snapshot();
            let (index, entry, state) = (s.index, s.entry.into(), s.state);
            out.send(
                from,
                Message::Snapshot {
                    term,
                    index,
                    entry,
                    state,
                },
            );
            self.core.peers[i].ext = Some(index + 1);
            self.stream(i, out);
        } else if self.core.log.term(prev) == Some(prev_term) {
            self.core.peers[i].ext = Some(m_from);
            self.stream(i, out);
        } else {
            self.core.peers[i].ext = None;
            let keep = prev.saturating_sub(1).min(self.core.last_index());
            out.send(from, Message::Mismatch { term, keep });
        }
    }

    fn on_request_vote(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        term: u64,
        last: (u64, u64),
        out: &mut Out<Message>,
    ) {
        if term > self.core.term {
            self.become_follower(term, out);
        }
        let request = raft_core::VoteRequest {
            term,
            last_index: last.0,
            last_term: last.1,
            transfer: false,
            pre: false,
        };
        self.core.answer_vote(cx, from, request, out);
    }

    fn on_mismatch(&mut self, keep: u64, out: &mut Out<Message>) {
        self.drop_stream(out);
        self.core.truncate(keep);
        self.subscribed = false;
        self.subscribe(out);
    }

    fn on_progress(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        term: u64,
        index: u64,
        out: &mut Out<Message>,
    ) {
        if term > self.core.term {
            self.become_follower(term, out);
            return;
        }
        if term < self.core.term || !self.core.is_leader() {
            return;
        }
        if let Some(i) = self.core.peer(from) {
            self.core.matched(i, index);
        }
        self.advance_commit(cx, out);
    }
}

impl Replica {
    // The calls into node logic; each persists what it changed of Raft's state (see
    // `NodeLogic for Replica`).

    fn start_call(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.core.election.start(cx.mono);
        self.core.election.arm(cx, out);
        self.heartbeat(cx, out);
        out.set_timer(NOOP, ClockKind::Monotonic, cx.mono + self.c.noop_every);
        if self.leads_first && self.core.term == 0 {
            self.campaign(cx, out);
        }
    }

    fn message_call(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        if !raft_core::first_copy(cx) {
            return;
        }
        match msg {
            Message::RequestVote {
                term,
                last_index,
                last_term,
            } => self.on_request_vote(cx, from, term, (last_index, last_term), out),
            Message::Vote { term, granted } => {
                if term > self.core.term {
                    self.become_follower(term, out);
                } else if self.core.count_vote(from, term, granted, majority(cx)) {
                    self.become_leader(cx, out);
                }
            }
            Message::Ping { term, leader, last } => {
                self.hear(cx, from, term, leader, out);
                self.resubscribe_if_behind(from, last, out);
                let (term, leader) = (self.core.term, self.core.is_leader());
                let last = self.core.last_index();
                out.send(from, Message::Pong { term, leader, last });
            }
            Message::Pong { term, leader, last } => {
                self.hear(cx, from, term, leader, out);
                self.resubscribe_if_behind(from, last, out);
            }
            Message::Pull {
                term,
                from: m_from,
                prev_term,
            } => {
                if term > self.core.term {
                    self.become_follower(term, out);
                }
                if term == self.core.term && self.core.is_leader() {
                    self.on_pull(from, m_from, prev_term, out);
                }
            }
            Message::Mismatch { term, keep } => {
                if self.hear(cx, from, term, true, out) && self.core.leader == Some(from) {
                    self.on_mismatch(keep, out);
                }
            }
            Message::Append {
                term,
                index,
                entry,
                commit,
            } => {
                if self.hear(cx, from, term, true, out) {
                    self.on_append(cx, from, index, entry, commit, out);
                }
            }
            Message::Snapshot {
                term,
                index,
                entry,
                state,
            } => {
                if self.hear(cx, from, term, true, out) && self.core.leader == Some(from) {
                    self.on_snapshot(cx, (index, entry, state), out);
                }
            }
            Message::Progress { term, index } => self.on_progress(cx, from, term, index, out),
            Message::Commit { term, commit } => {
                if self.hear(cx, from, term, true, out) && self.core.leader == Some(from) {
                    self.commit_hint = self.commit_hint.max(commit);
                    let upto = self.commit_hint.min(self.verified);
                    self.core.commit_to(upto, out, false);
                }
            }
        }
    }

    fn timer_call(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            raft_core::ELECTION => self.campaign(cx, out),
            HEARTBEAT => self.heartbeat(cx, out),
            NOOP => {
                // An empty entry refreshes the lease; with the uncommitted tail full it would
                // only lengthen it.
                if self.core.is_leader() && !self.core.tail_full() {
                    self.append(cx, None, out);
                }
                out.set_timer(NOOP, ClockKind::Monotonic, cx.mono + self.c.noop_every);
            }
            LOG_WRITE => self.write_head(cx, out),
            EXPIRY => {
                self.expired = true;
                self.take_authority(cx, out);
                self.advance_commit(cx, out);
            }
            _ => {}
        }
    }

    fn command_call(&mut self, cx: &mut Cx, command: Command, out: &mut Out<Message>) {
        match command {
            Command::StepDown if self.core.is_leader() => {
                let term = self.core.term;
                self.become_follower(term, out);
                self.core.election.arm(cx, out);
            }
            Command::TransferLeader { to } if to == self.core.node => self.campaign(cx, out),
            _ => {}
        }
    }

    fn request_call(
        &mut self,
        cx: &mut Cx,
        request: Request,
        token: Token,
        out: &mut Out<Message>,
    ) {
        let since = cx.stamp;
        if !self.core.is_leader() || token != self.core.term {
            // Deposed between the check and now: the client times out.
            out.report(Fact::Refused { token, since });
            return;
        }
        match request {
            Request::Write { key, value } => {
                out.report(Fact::Appended { token });
                self.append(cx, Some((self.core.node, key, value)), out);
            }
            Request::Read { key } if self.c.mode == LeaseGuardMode::Quorum => {
                // Served once an entry appended after it commits, from the state then.
                out.report(Fact::Waiting { token });
                let need = self.core.last_index() + 1;
                self.pending_reads.push(need, KeptRead { since, key });
                self.append(cx, None, out);
            }
            Request::Read { key } => out.report(Fact::Read {
                token,
                value: self.core.applied().get(key),
            }),
        }
    }
}

impl NodeLogic for Replica {
    type Msg = Message;
    type Disk = Disk;

    fn into_disk(self) -> Disk {
        self.core.into_disk()
    }

    /// Raft's term, vote and log.
    fn disk_image(&self) -> Option<Disk> {
        Some(self.core.disk_image())
    }

    /// Arms the election timer, the heartbeat and the no-op timer; the scenario's initial
    /// leader also campaigns at once at its first start.
    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        raft_core::persisting(self, |r| &r.core, out, |r, out| r.start_call(cx, out));
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        raft_core::persisting(
            self,
            |r| &r.core,
            out,
            |r, out| r.message_call(cx, from, msg, out),
        );
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        raft_core::persisting(
            self,
            |r| &r.core,
            out,
            |r, out| r.timer_call(cx, timer, out),
        );
    }

    fn on_command(&mut self, cx: &mut Cx, command: Command, out: &mut Out<Message>) {
        raft_core::persisting(
            self,
            |r| &r.core,
            out,
            |r, out| r.command_call(cx, command, out),
        );
    }

    fn check(&self, cx: &Cx, request: Request) -> Option<Token> {
        if !self.core.is_leader() {
            return None;
        }
        // A write appends an entry, and so does a read in `Quorum` mode: none while the
        // uncommitted tail is full.
        let appends = request.is_write() || self.c.mode == LeaseGuardMode::Quorum;
        if appends && self.core.tail_full() {
            return None;
        }
        let ok = match (self.c.mode, request) {
            (LeaseGuardMode::LogLease, _) => self.own_lease(cx.wall),
            (_, Request::Write { .. }) => true,
            (LeaseGuardMode::Inconsistent | LeaseGuardMode::Quorum, _) => true,
            (LeaseGuardMode::DeferCommit, _) => self.own_lease(cx.wall),
            (_, Request::Read { key }) => self.any_lease(cx.wall) && !self.in_limbo(key),
        };
        ok.then_some(self.core.term)
    }

    /// Only a leader admits anything.
    fn refuses_whatever_the_time(&self, _request: Request) -> bool {
        !self.core.is_leader()
    }

    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<Message>) {
        raft_core::persisting(
            self,
            |r| &r.core,
            out,
            |r, out| r.request_call(cx, request, token, out),
        );
    }

    fn beliefs(&self) -> Beliefs {
        if !self.core.is_leader() {
            return Beliefs::NONE;
        }
        let token = self.core.term;
        let write = Belief::Bool { token };
        let until = |deadline| Belief::Until {
            token,
            clock: ClockKind::Wall,
            deadline,
        };
        let read = match self.c.mode {
            LeaseGuardMode::Inconsistent => write,
            LeaseGuardMode::Quorum => Belief::None,
            LeaseGuardMode::LogLease | LeaseGuardMode::DeferCommit => match self.read_deadline() {
                Some(d) if self.expired && self.core.commit() >= self.first_own => until(d),
                _ => Belief::None,
            },
            LeaseGuardMode::LeaseGuard => self.read_deadline().map_or(Belief::None, until),
        };
        Beliefs { write, read }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::GrantorRestart;
    use crate::strategy::Action;

    const MS: i64 = 1_000_000;
    const ROLES: &[Role] = &[Role::Replica, Role::Replica, Role::Replica];

    fn config(mode: LeaseGuardMode) -> LeaseGuardConfig {
        LeaseGuardConfig {
            mode,
            max_clock_error: LocalDur::from_ns(200_000),
            noop_every: LocalDur::from_ms(250),
            election_timeout: LocalDur::from_secs(10),
            heartbeat: LocalDur::from_ms(500),
            log_write: LocalDur::from_ns(250_000),
        }
    }

    fn replica(mode: LeaseGuardMode, node: NodeId) -> Replica {
        replica_of(config(mode), node, None, Disk::default())
    }

    #[test]
    fn only_a_leader_admits_anything() {
        let read = Request::Read { key: 0 };
        assert!(replica(LeaseGuardMode::LogLease, 1).refuses_whatever_the_time(read));
        let (leader, _) = elected(LeaseGuardMode::LogLease);
        assert!(!leader.refuses_whatever_the_time(read));
    }

    /// Node `node` running `c` with T = 1 s, `leader` the scenario's initial leader, from `disk`.
    fn replica_of(
        c: LeaseGuardConfig,
        node: NodeId,
        leader: Option<NodeId>,
        disk: Disk,
    ) -> Replica {
        let params = LeaseParams {
            lease: LocalDur::from_secs(1),
            renew_every: LocalDur::from_ms(300),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
            initial_leader: leader,
        };
        LeaseGuard::new(c, String::new()).node_logic(node, Role::Replica, &params, disk)
    }

    /// Calls `f` on `r` (node `node`) with both clocks reading `ms`; what it gave.
    fn call(
        r: &mut Replica,
        node: NodeId,
        ms: i64,
        f: impl FnOnce(&mut Replica, &mut Cx, &mut Out<Message>),
    ) -> Out<Message> {
        crate::strategy::call_for_test(r, node, ROLES, LocalTime::from_ns(ms * MS), f)
    }

    /// An entry of `term`; a write (by `writer`) writes `100 + key` to `key`.
    fn entry(term: u64, writer: Option<NodeId>, key: Key, wall_ms: i64) -> Stored {
        Stored {
            term,
            writer,
            key,
            value: writer.map_or(0, |_| 100 + u64::from(key)),
            extra: LocalTime::from_ns(wall_ms * MS),
        }
    }

    /// Moves `r`'s commit index to `n` (no effects: a follower's commit).
    fn commit(r: &mut Replica, n: u64) {
        r.core.commit_to(n, &mut Out::<Message>::default(), false);
    }

    /// Node 1 with a's term-1 log: an empty entry at 0 ms, writes of keys 7 (100 ms) and 8
    /// (499 ms); it knows the first two committed. Elected in term 2 at 1000 ms.
    fn elected(mode: LeaseGuardMode) -> (Replica, Out<Message>) {
        let mut b = replica(mode, 1);
        b.core.term = 1;
        b.core.log = raft_core::Log::from_entries([
            entry(1, None, 0, 0),
            entry(1, Some(0), 7, 100),
            entry(1, Some(0), 8, 499),
        ]);
        commit(&mut b, 2);
        assert_eq!((b.core.applied().get(7), b.core.applied().get(8)), (107, 0));
        let fx = call(&mut b, 1, 1000, |b, cx, out| {
            b.campaign(cx, out);
            b.on_message(
                cx,
                2,
                Message::Vote {
                    term: 2,
                    granted: true,
                },
                out,
            );
        });
        assert_eq!(b.core.state, State::Leader);
        (b, fx)
    }

    fn expiry_timer(fx: &Out<Message>) -> Option<LocalTime> {
        fx.actions().iter().find_map(|e| match *e {
            Action::SetTimer {
                timer: EXPIRY,
                clock: ClockKind::Wall,
                at,
            } => Some(at),
            _ => None,
        })
    }

    #[test]
    fn a_new_leader_waits_for_the_prior_term_to_expire_by_t_plus_two_errors() {
        // p, the newest term-1 entry, was written at 499 ms: it expires when the wall clock
        // passes 499 + 1000 + 0.4 ms. The leader takes authority (issues its term) then.
        for mode in [
            LeaseGuardMode::LogLease,
            LeaseGuardMode::DeferCommit,
            LeaseGuardMode::LeaseGuard,
        ] {
            let (mut b, fx) = elected(mode);
            assert_eq!(expiry_timer(&fx), Some(LocalTime::from_ns(1_499_400_001)));
            assert!(!fx.facts().iter().any(|e| matches!(e, Fact::Issued { .. })));
            assert!(!b.expired);
            let fx = call(&mut b, 1, 1500, |b, cx, out| b.on_timer(cx, EXPIRY, out));
            assert!(b.expired);
            assert!(fx
                .facts()
                .iter()
                .any(|e| matches!(e, Fact::Issued { token: 2, .. })));
        }
        // Without a lease there is nothing to wait for: issued at election.
        for mode in [LeaseGuardMode::Inconsistent, LeaseGuardMode::Quorum] {
            let (b, fx) = elected(mode);
            assert_eq!(expiry_timer(&fx), None);
            assert!(b.expired);
            assert!(fx
                .facts()
                .iter()
                .any(|e| matches!(e, Fact::Issued { token: 2, .. })));
        }
    }

    #[test]
    fn each_mode_admits_what_the_table_says() {
        let read = |k| Request::Read { key: k };
        let write = Request::Write { key: 1, value: 1 };
        let check = |b: &Replica, ms: i64, req| {
            let at = LocalTime::from_ns(ms * MS);
            crate::strategy::with_test_cx(1, ROLES, at, |cx| b.check(cx, req).is_some())
        };
        // At 1001 ms, before its own entry commits: the newest committed entry is the write of
        // key 7 at 100 ms, whose lease runs to 100 + 1000 - 0.4 = 1099.6 ms. LeaseGuard reads
        // under it (not key 8, written in its limbo region), the lease-free modes read
        // unchecked, the others wait for their own lease; all but LogLease accept writes.
        for (mode, reads, writes) in [
            (LeaseGuardMode::Inconsistent, true, true),
            (LeaseGuardMode::Quorum, true, true),
            (LeaseGuardMode::LogLease, false, false),
            (LeaseGuardMode::DeferCommit, false, true),
            (LeaseGuardMode::LeaseGuard, true, true),
        ] {
            let (b, _) = elected(mode);
            assert_eq!(check(&b, 1001, read(3)), reads, "{mode:?}");
            assert_eq!(check(&b, 1001, write), writes, "{mode:?}");
        }
        let (mut b, _) = elected(LeaseGuardMode::LeaseGuard);
        // The region: entries 3 (key 8) to 3, past the commit index of 2.
        assert_eq!((b.limbo.as_slice(), b.limbo_end), (&[8][..], 3));
        assert!(!check(&b, 1001, read(8)));
        assert!(check(&b, 1099, read(7)));
        assert!(!check(&b, 1100, read(7)));
        // Once the write of key 8 (499 ms) is committed, the region is, and its lease runs to
        // 1498.6 ms.
        assert!(b.in_limbo(8));
        commit(&mut b, 3);
        assert!(!b.in_limbo(8));
        assert!(check(&b, 1001, read(8)));
        assert!(check(&b, 1498, read(3)));
        assert!(!check(&b, 1499, read(3)));
        // DeferCommit reads only under its own lease: its entry committed, prior expired.
        let (mut d, _) = elected(LeaseGuardMode::DeferCommit);
        d.expired = true;
        commit(&mut d, 4);
        assert!(check(&d, 1600, read(8)));
        // Its newest committed entry, its own of 1000 ms, leases to 1999.6 ms.
        assert!(check(&d, 1999, read(8)));
        assert!(!check(&d, 2000, read(8)));
    }

    /// Reads stop two clock errors before the newest committed entry's lease ends, to the
    /// nanosecond: key 7's write at 100 ms, T = 1 s, e = 200 us, so the last read is served
    /// at 100 + 1000 - 2 * 0.2 = 1099.6 ms less 1 ns (one error would give 1099.8 ms, none
    /// 1100 ms).
    #[test]
    fn reads_stop_two_clock_errors_before_the_newest_committed_lease_ends() {
        let (b, _) = elected(LeaseGuardMode::LeaseGuard);
        let read_at = |ns| {
            let at = LocalTime::from_ns(ns);
            crate::strategy::with_test_cx(1, ROLES, at, |cx| {
                b.check(cx, Request::Read { key: 7 }).is_some()
            })
        };
        assert!(read_at(1_099_599_999));
        assert!(!read_at(1_099_600_000));
    }

    #[test]
    fn quorum_reads_are_served_from_the_state_once_their_entry_commits() {
        // b leads term 2 with a's entries 1 to 3 (writes of keys 7 and 8), knowing only 1 and 2
        // committed: its state has key 7 (107), not key 8. A read of key 8 arrives at 1100 ms:
        // in Quorum mode it waits for an entry appended after it (index 5) to commit. When the
        // followers have written up to 5, b commits 3, 4 and 5: the write of key 8 commits with
        // them, and the read is served from the state then, 108 (from the state when it arrived,
        // 0, it would miss a write acknowledged before it was answered... and be stale).
        let (mut b, _) = elected(LeaseGuardMode::Quorum);
        let fx = call(&mut b, 1, 1100, |b, cx, out| {
            b.on_request(cx, Request::Read { key: 8 }, 2, out)
        });
        assert_eq!(fx.facts(), [Fact::Waiting { token: 2 }]);
        assert_eq!((b.core.last_index(), b.core.commit()), (5, 2));
        for p in &mut b.core.peers {
            p.matched = 5;
        }
        let fx = call(&mut b, 1, 1102, |b, cx, out| b.advance_commit(cx, out));
        let served: Vec<_> = fx
            .facts()
            .iter()
            .filter_map(|f| match *f {
                Fact::ConfirmedRead { value, .. } => Some(value),
                _ => None,
            })
            .collect();
        assert_eq!((b.core.commit(), served), (5, vec![108]));
    }

    #[test]
    fn deferred_commit_holds_the_commit_index_until_the_prior_term_expires() {
        let (mut b, _) = elected(LeaseGuardMode::DeferCommit);
        // Both followers have written the leader's entry (index 4).
        for p in &mut b.core.peers {
            p.matched = 4;
        }
        let fx = call(&mut b, 1, 1200, |b, cx, out| b.advance_commit(cx, out));
        assert_eq!(b.core.commit(), 2);
        assert!(fx.actions().is_empty() && fx.facts().is_empty());
        // At expiry it commits the three, reporting the one client write among them (key 8).
        let fx = call(&mut b, 1, 1500, |b, cx, out| b.on_timer(cx, EXPIRY, out));
        assert_eq!(b.core.commit(), 4);
        let committed: Vec<_> = fx
            .facts()
            .iter()
            .filter_map(|e| match *e {
                Fact::Committed { index, key, .. } => Some((index, key)),
                _ => None,
            })
            .collect();
        assert_eq!(committed, [(3, 8)]);
        assert_eq!(b.core.applied().get(8), 108);
        // LogLease commits at once.
        let (mut l, _) = elected(LeaseGuardMode::LogLease);
        for p in &mut l.core.peers {
            p.matched = 4;
        }
        call(&mut l, 1, 1200, |l, cx, out| l.advance_commit(cx, out));
        assert_eq!(l.core.commit(), 4);
    }

    #[test]
    fn a_follower_writes_reordered_entries_in_order_and_commits_only_what_it_verified() {
        let mut c = replica(LeaseGuardMode::LeaseGuard, 2);
        let e = |key| Entry {
            term: 1,
            writer: Some(0),
            key,
            value: 100 + u64::from(key),
            wall: LocalTime::from_ns(0),
        };
        call(&mut c, 2, 10, |c, cx, out| {
            c.hear(cx, 0, 1, true, out);
            // Entry 2 arrives before entry 1; the leader's commit index says 2.
            c.on_message(
                cx,
                0,
                Message::Append {
                    term: 1,
                    index: 2,
                    entry: e(5),
                    commit: 2,
                },
                out,
            );
            assert_eq!(c.queue.len(), 0);
            c.on_message(
                cx,
                0,
                Message::Append {
                    term: 1,
                    index: 1,
                    entry: e(4),
                    commit: 2,
                },
                out,
            );
        });
        assert_eq!(c.queue.iter().map(|q| q.0).collect::<Vec<_>>(), [1, 2]);
        assert!(c.early.is_empty());
        // Each write takes 250 us; after the first only index 1 is verified and committed.
        let fx = call(&mut c, 2, 11, |c, cx, out| c.on_timer(cx, LOG_WRITE, out));
        assert_eq!(
            (
                c.core.last_index(),
                c.core.commit(),
                c.core.applied().get(4),
                c.core.applied().get(5)
            ),
            (1, 1, 104, 0)
        );
        assert!(fx.actions().contains(&Action::Send {
            to: 0,
            msg: Message::Progress { term: 1, index: 1 }
        }));
        call(&mut c, 2, 12, |c, cx, out| c.on_timer(cx, LOG_WRITE, out));
        let key = c.core.log.entry(2).unwrap().key;
        assert_eq!((c.core.last_index(), c.core.commit(), key), (2, 2, 5));
        // A second copy of entry 2 changes nothing.
        call(&mut c, 2, 13, |c, cx, out| {
            c.on_message(
                cx,
                0,
                Message::Append {
                    term: 1,
                    index: 2,
                    entry: e(9),
                    commit: 2,
                },
                out,
            )
        });
        let key = c.core.log.entry(2).unwrap().key;
        assert_eq!((c.queue.len(), key), (0, 5));
    }

    #[test]
    fn a_new_leader_is_never_told_of_entries_an_earlier_one_streamed() {
        // c has entry 1 from a (term 1) queued for writing when b, leader of term 2, pings.
        let mut c = replica(LeaseGuardMode::LeaseGuard, 2);
        let e = Entry {
            term: 1,
            writer: Some(0),
            key: 3,
            value: 103,
            wall: LocalTime::from_ns(0),
        };
        call(&mut c, 2, 10, |c, cx, out| {
            c.hear(cx, 0, 1, true, out);
            let append = Message::Append {
                term: 1,
                index: 1,
                entry: e,
                commit: 0,
            };
            c.on_message(cx, 0, append, out);
        });
        assert_eq!(c.queue.len(), 1);
        let fx = call(&mut c, 2, 11, |c, cx, out| {
            c.hear(cx, 1, 2, true, out);
        });
        assert!(c.queue.is_empty());
        assert!(fx
            .actions()
            .contains(&Action::CancelTimer { timer: LOG_WRITE }));
        // Its log is empty, so it subscribes to b from index 1.
        assert!(fx.actions().contains(&Action::Send {
            to: 1,
            msg: Message::Pull {
                term: 2,
                from: 1,
                prev_term: 0
            }
        }));
    }

    #[test]
    fn a_mismatch_truncates_the_follower_to_what_the_leader_says_to_keep() {
        let mut c = replica(LeaseGuardMode::LeaseGuard, 2);
        c.core.term = 2;
        c.core.log = raft_core::Log::from_entries([
            entry(1, None, 0, 0),
            entry(1, Some(0), 3, 1),
            entry(1, Some(0), 4, 2),
        ]);
        let fx = call(&mut c, 2, 10, |c, cx, out| {
            c.hear(cx, 1, 2, true, out);
            c.on_message(cx, 1, Message::Mismatch { term: 2, keep: 1 }, out);
        });
        assert_eq!(c.core.last_index(), 1);
        // It subscribes again from index 2, after an entry of term 1.
        assert!(fx.actions().contains(&Action::Send {
            to: 1,
            msg: Message::Pull {
                term: 2,
                from: 2,
                prev_term: 1
            }
        }));
    }

    /// A follower that subscribes from an index the leader compacted away gets the committed
    /// prefix first; it takes it and says so.
    #[test]
    fn a_follower_that_subscribes_below_the_compacted_log_gets_a_snapshot() {
        // b leads term 2 from 1000 ms with entries 1 to 3 of term 1 (writes of keys 7 and 8 at
        // 2 and 3) and its own empty entry at 4; it keeps the last 2 committed entries.
        let (mut b, _) = elected(LeaseGuardMode::Inconsistent);
        b.core.set_retain(2);
        let pull = |from, prev_term| Message::Pull {
            term: 2,
            from,
            prev_term,
        };
        // a subscribes after its entry 3; five writes (keys 5 to 9) at 1001 ms are streamed to
        // it as indices 5 to 9; it has written them all: 9 commits, c (node 2) still silent.
        call(&mut b, 1, 1001, |b, cx, out| {
            b.on_message(cx, 0, pull(4, 1), out);
            for key in 5..=9 {
                let value = 100 + u64::from(key);
                b.on_request(cx, Request::Write { key, value }, 2, out);
            }
            b.on_message(cx, 0, Message::Progress { term: 2, index: 9 }, out);
        });
        // Committed through 9; compacted through 9 - 2 = 7.
        assert_eq!((b.core.commit(), b.core.log.base()), (9, 7));
        // c subscribes from 1: entries 1 to 7 are gone, so it gets the prefix up to 9 (the
        // write of key 9, made at 1001 ms; the state of 7 writes, to keys 7, 8 and 5 to 9), and
        // nothing follows it yet.
        let fx = call(&mut b, 1, 1002, |b, cx, out| {
            b.on_message(cx, 2, pull(1, 0), out)
        });
        let mut state = crate::strategy::Store::default();
        for key in [7, 8, 5, 6, 7, 8, 9] {
            state.put(key, 100 + u64::from(key));
        }
        let snapshot = Message::Snapshot {
            term: 2,
            index: 9,
            entry: Entry {
                term: 2,
                writer: Some(1),
                key: 9,
                value: 109,
                wall: LocalTime::from_ns(1001 * MS),
            },
            state,
        };
        assert_eq!(
            fx.actions(),
            [Action::Send {
                to: 2,
                msg: snapshot.clone()
            }]
        );
        // c, with nothing, takes it: committed through 9, waiting for 10, and says so.
        let mut c = replica(LeaseGuardMode::Inconsistent, 2);
        let fx = call(&mut c, 2, 1003, |c, cx, out| {
            c.on_message(cx, 1, snapshot.clone(), out)
        });
        let progress = Message::Progress { term: 2, index: 9 };
        assert!(fx.actions().contains(&Action::Send {
            to: 1,
            msg: progress
        }));
        assert_eq!((c.core.commit(), c.core.applied().get(5)), (9, 105));
        assert_eq!((c.core.log.base(), c.expected()), (9, 10));
        // The same snapshot again changes nothing and says nothing.
        let fx = call(&mut c, 2, 1004, |c, cx, out| {
            c.on_message(cx, 1, snapshot, out)
        });
        assert!(!fx
            .actions()
            .iter()
            .any(|e| matches!(e, Action::Send { .. })));
    }

    /// The messages sent, with their destinations.
    fn sends(fx: &Out<Message>) -> Vec<(NodeId, Message)> {
        fx.actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { to, msg } => Some((*to, msg.clone())),
                _ => None,
            })
            .collect()
    }

    fn set(timer: TimerId, clock: ClockKind, ns: i64) -> Action<Message> {
        Action::SetTimer {
            timer,
            clock,
            at: LocalTime::from_ns(ns),
        }
    }

    fn scenario(nodes: &str, fencing: bool) -> Scenario {
        Scenario::from_ron(&format!(
            r#"Scenario(duration: "10s", lease: (duration: "1s"),
                strategy: LeaseGuard(election_timeout: "10s", heartbeat: "500ms"),
                resource: (fencing: {fencing}), nodes: [{nodes}])"#
        ))
        .unwrap()
    }

    const THREE: &str = r#"(name: "a", role: Replica), (name: "b", role: Replica),
        (name: "c", role: Replica)"#;

    #[test]
    fn it_describes_itself_and_shares_reads_in_leaseguard_mode_alone() {
        let lg = |mode| LeaseGuard::new(config(mode), "LeaseGuard(...)".into());
        assert_eq!(lg(LeaseGuardMode::LeaseGuard).describe(), "LeaseGuard(...)");
        assert_eq!(
            lg(LeaseGuardMode::LeaseGuard).commands(),
            ["StepDown", "TransferLeader"]
        );
        let shared = Authorities {
            read: Claim::Shared,
            write: Claim::Shared,
        };
        assert_eq!(lg(LeaseGuardMode::LeaseGuard).authorities(), shared);
        for mode in [LeaseGuardMode::LogLease, LeaseGuardMode::Quorum] {
            let exclusive = Authorities {
                read: Claim::Exclusive,
                ..shared
            };
            assert_eq!(lg(mode).authorities(), exclusive, "{mode:?}");
        }
    }

    #[test]
    fn its_check_takes_replicas_only_and_each_field_at_its_boundary() {
        let check = |c: LeaseGuardConfig, s: &Scenario| LeaseGuard::new(c, String::new()).check(s);
        let base = config(LeaseGuardMode::LeaseGuard);
        let three = scenario(THREE, false);
        assert!(check(base, &three).is_empty());
        let only = ["nodes: LeaseGuard has Replicas only, at least one"];
        let grantor = r#"(name: "g", role: Grantor), (name: "a", role: Replica)"#;
        assert_eq!(check(base, &scenario(grantor, false)), only);
        assert_eq!(check(base, &scenario("", false)), only);
        assert_eq!(
            check(base, &scenario(THREE, true)),
            [
                "resource.fencing: a LeaseGuard group fences by term in its log; the resource is \
              the log, so there is no separate fencing check to turn on"
            ]
        );
        let ns = LocalDur::from_ns;
        let zero = LeaseGuardConfig {
            election_timeout: LocalDur::ZERO,
            noop_every: LocalDur::ZERO,
            heartbeat: ns(9),
            max_clock_error: ns(-1),
            log_write: ns(-1),
            ..base
        };
        assert_eq!(
            check(zero, &three),
            [
                "strategy.election_timeout: must be positive (got 0s)",
                "strategy.noop_every: must be positive (got 0s)",
                "strategy.heartbeat: must be at least 10ns (a tenth of it is the leaderless \
                 heartbeat) (got 9ns)",
                "strategy.max_clock_error: must not be negative (got -1ns)",
                "strategy.log_write: must not be negative (got -1ns)"
            ]
        );
        for heartbeat in [10, 11] {
            let least = LeaseGuardConfig {
                election_timeout: ns(1),
                noop_every: ns(1),
                heartbeat: ns(heartbeat),
                max_clock_error: LocalDur::ZERO,
                log_write: LocalDur::ZERO,
                ..base
            };
            assert!(check(least, &three).is_empty(), "{heartbeat}");
        }
    }

    /// Started at 1000 ms with no leader known: pings to the two others, the next heartbeat a
    /// tenth of 500 ms later, the first no-op 250 ms later; the initial leader campaigns.
    #[test]
    fn a_start_pings_the_others_and_only_the_initial_leader_campaigns_at_once() {
        let start = |node, leader| {
            let mut r = replica_of(
                config(LeaseGuardMode::LeaseGuard),
                node,
                leader,
                Disk::default(),
            );
            call(&mut r, node, 1000, |r, cx, out| r.on_start(cx, out))
        };
        let fx = start(1, Some(2));
        let ping = Message::Ping {
            term: 0,
            leader: false,
            last: 0,
        };
        assert_eq!(sends(&fx), [(0, ping.clone()), (2, ping)]);
        for timer in [
            set(HEARTBEAT, ClockKind::Monotonic, 1050 * MS),
            set(NOOP, ClockKind::Monotonic, 1250 * MS),
        ] {
            assert!(fx.actions().contains(&timer), "{timer:?}");
        }
        let votes = |fx: &Out<Message>| {
            sends(fx)
                .iter()
                .filter(|(_, m)| matches!(m, Message::RequestVote { term: 1, .. }))
                .count()
        };
        assert_eq!(votes(&fx), 0);
        assert_eq!(votes(&start(2, Some(2))), 2);
        // Restarted in a later term, it does not.
        let mut r = replica_of(
            config(LeaseGuardMode::LeaseGuard),
            2,
            Some(2),
            Disk::default(),
        );
        r.core.term = 1;
        assert_eq!(
            votes(&call(&mut r, 2, 0, |r, cx, out| r.on_start(cx, out))),
            0
        );
    }

    #[test]
    fn a_leader_heartbeats_every_heartbeat_saying_it_leads() {
        let (mut b, _) = elected(LeaseGuardMode::LeaseGuard);
        let fx = call(&mut b, 1, 2000, |b, cx, out| b.on_timer(cx, HEARTBEAT, out));
        let ping = Message::Ping {
            term: 2,
            leader: true,
            last: 4,
        };
        assert_eq!(sends(&fx), [(0, ping.clone()), (2, ping)]);
        assert!(fx
            .actions()
            .contains(&set(HEARTBEAT, ClockKind::Monotonic, 2500 * MS)));
    }

    #[test]
    fn nothing_committed_is_no_lease_and_an_empty_log_leader_takes_authority_at_once() {
        let fresh = replica(LeaseGuardMode::LogLease, 1);
        assert_eq!(fresh.read_deadline(), None);
        assert_eq!(fresh.beliefs(), Beliefs::NONE);
        // With an empty log there is no prior term: issued at election (1000 ms), to the
        // election timeout later, 11 s; no expiry timer.
        let mut b = replica(LeaseGuardMode::LogLease, 1);
        let fx = call(&mut b, 1, 1000, |b, cx, out| {
            b.on_timer(cx, raft_core::ELECTION, out);
            let vote = Message::Vote {
                term: 1,
                granted: true,
            };
            b.on_message(cx, 2, vote, out);
        });
        assert!(b.core.is_leader() && b.expired);
        let issued = Fact::Issued {
            token: 1,
            to: 1,
            until: LocalTime::from_ns(11_000 * MS),
        };
        // The campaign began the attempt; the vote won it.
        assert_eq!(fx.facts(), [Fact::Seeking, issued]);
        assert_eq!(expiry_timer(&fx), None);
    }

    /// DeferCommit's own lease runs while the wall clock reads less than its entry's 1000 ms
    /// + 1 s - 0.4 ms = 1999.6 ms.
    #[test]
    fn its_own_lease_ends_at_the_deadline_to_the_nanosecond() {
        let (mut d, _) = elected(LeaseGuardMode::DeferCommit);
        d.expired = true;
        commit(&mut d, 4);
        let read = |ns| {
            let at = LocalTime::from_ns(ns);
            crate::strategy::with_test_cx(1, ROLES, at, |cx| {
                d.check(cx, Request::Read { key: 1 }).is_some()
            })
        };
        assert!(read(1_999_599_999));
        assert!(!read(1_999_600_000));
    }

    #[test]
    fn beliefs_follow_the_mode_and_the_lease() {
        let until = |ns| Belief::Until {
            token: 2,
            clock: ClockKind::Wall,
            deadline: LocalTime::from_ns(ns),
        };
        let write = Belief::Bool { token: 2 };
        let beliefs = |read| Beliefs { write, read };
        // Before the prior term expires: LeaseGuard reads under the inherited lease (key 7's
        // entry of 100 ms, committed: to 100 + 1000 - 0.4 = 1099.6 ms), LogLease not at all.
        let (b, _) = elected(LeaseGuardMode::LeaseGuard);
        assert_eq!(b.beliefs(), beliefs(until(1_099_600_000)));
        let (mut l, _) = elected(LeaseGuardMode::LogLease);
        assert_eq!(l.beliefs(), beliefs(Belief::None));
        // Expired but its own entry (4) not committed: still none; committed: to 1999.6 ms.
        l.expired = true;
        commit(&mut l, 3);
        assert_eq!(l.beliefs(), beliefs(Belief::None));
        commit(&mut l, 4);
        assert_eq!(l.beliefs(), beliefs(until(1_999_600_000)));
        // Committed but not expired: none.
        let (mut l, _) = elected(LeaseGuardMode::LogLease);
        commit(&mut l, 4);
        assert_eq!(l.beliefs(), beliefs(Belief::None));
        let (i, _) = elected(LeaseGuardMode::Inconsistent);
        assert_eq!(i.beliefs(), beliefs(write));
        let (q, _) = elected(LeaseGuardMode::Quorum);
        assert_eq!(q.beliefs(), beliefs(Belief::None));
    }

    fn msg(r: &mut Replica, node: NodeId, ms: i64, from: NodeId, m: Message) -> Out<Message> {
        call(r, node, ms, |r, cx, out| r.on_message(cx, from, m, out))
    }

    #[test]
    fn votes_and_acknowledgements_move_terms_only_upward() {
        // The leader of term 2 asked for a vote of its own term: it stays, and refuses.
        let (mut b, _) = elected(LeaseGuardMode::LeaseGuard);
        let ask = |term, last_index, last_term| Message::RequestVote {
            term,
            last_index,
            last_term,
        };
        let fx = msg(&mut b, 1, 1001, 0, ask(2, 4, 2));
        assert!(b.core.is_leader());
        let refused = Message::Vote {
            term: 2,
            granted: false,
        };
        assert_eq!(sends(&fx), [(0, refused)]);
        // An acknowledgement of an older term moves no progress; one of a newer term deposes.
        msg(&mut b, 1, 1001, 0, Message::Progress { term: 1, index: 4 });
        assert_eq!(b.core.peers[0].matched, 0);
        msg(&mut b, 1, 1001, 0, Message::Progress { term: 3, index: 4 });
        assert_eq!((b.core.state, b.core.term), (State::Follower, 3));
        // A follower of term 1 asked for term 2 moves to it and grants.
        let mut c = replica(LeaseGuardMode::LeaseGuard, 2);
        c.core.term = 1;
        let fx = msg(&mut c, 2, 10, 0, ask(2, 0, 0));
        let granted = Message::Vote {
            term: 2,
            granted: true,
        };
        assert_eq!(sends(&fx), [(0, granted)]);
        assert_eq!(c.core.term, 2);
        // A candidate that hears a vote of a later term follows in it.
        let mut d = replica(LeaseGuardMode::LeaseGuard, 0);
        let fx = call(&mut d, 0, 10, |d, cx, out| {
            d.on_timer(cx, raft_core::ELECTION, out)
        });
        assert_eq!((d.core.state, d.core.term), (State::Candidate, 1));
        assert_eq!(sends(&fx).len(), 2);
        let late = Message::Vote {
            term: 3,
            granted: false,
        };
        msg(&mut d, 0, 11, 1, late);
        assert_eq!((d.core.state, d.core.term), (State::Follower, 3));
    }

    /// The indices of the entries streamed, by destination.
    fn appended(fx: &Out<Message>) -> Vec<(NodeId, u64)> {
        sends(fx)
            .into_iter()
            .filter_map(|(to, m)| match m {
                Message::Append { index, .. } => Some((to, index)),
                _ => None,
            })
            .collect()
    }

    /// The leader's log: entries 1 to 3 of term 1, its own (4) of term 2.
    #[test]
    fn a_pull_is_answered_from_the_entry_before_it_and_new_entries_go_to_subscribers() {
        let (mut b, _) = elected(LeaseGuardMode::LeaseGuard);
        let pull = |term, from, prev_term| Message::Pull {
            term,
            from,
            prev_term,
        };
        // From 4 after an entry of term 2: entry 3 is of term 1, so keep up to 2.
        let fx = msg(&mut b, 1, 1001, 0, pull(2, 4, 2));
        assert_eq!(sends(&fx), [(0, Message::Mismatch { term: 2, keep: 2 })]);
        // From 1 (after entry 0, of term 0): everything, and no snapshot.
        let fx = msg(&mut b, 1, 1001, 0, pull(2, 1, 0));
        assert_eq!(appended(&fx), [(0, 1), (0, 2), (0, 3), (0, 4)]);
        assert_eq!(sends(&fx).len(), 4);
        // From 4 after an entry of term 1: entry 4 alone.
        let fx = msg(&mut b, 1, 1001, 2, pull(2, 4, 1));
        assert_eq!(appended(&fx), [(2, 4)]);
        // A write is streamed at once to both subscribers, as entry 5.
        let fx = call(&mut b, 1, 1002, |b, cx, out| {
            b.on_request(cx, Request::Write { key: 5, value: 6 }, 2, out)
        });
        assert_eq!(appended(&fx), [(0, 5), (2, 5)]);
        // A pull of an older term is not answered; one of a newer term deposes.
        assert!(msg(&mut b, 1, 1003, 0, pull(1, 1, 0)).actions().is_empty());
        msg(&mut b, 1, 1003, 0, pull(3, 1, 0));
        assert_eq!((b.core.state, b.core.term), (State::Follower, 3));
    }

    #[test]
    fn commands_step_a_leader_down_and_transfer_to_the_named_node() {
        let (mut b, _) = elected(LeaseGuardMode::LeaseGuard);
        let fx = call(&mut b, 1, 1001, |b, cx, out| {
            b.on_command(cx, Command::StepDown, out)
        });
        assert_eq!((b.core.state, b.core.term), (State::Follower, 2));
        assert!(fx.actions().iter().any(|a| matches!(
            a,
            Action::SetTimer {
                timer: raft_core::ELECTION,
                ..
            }
        )));
        // A follower ignores a step-down and a transfer to another; one to itself campaigns.
        let mut c = replica(LeaseGuardMode::LeaseGuard, 2);
        for command in [Command::StepDown, Command::TransferLeader { to: 0 }] {
            let fx = call(&mut c, 2, 10, |c, cx, out| c.on_command(cx, command, out));
            assert!(fx.actions().is_empty(), "{command:?}");
        }
        let to_self = Command::TransferLeader { to: 2 };
        call(&mut c, 2, 10, |c, cx, out| c.on_command(cx, to_self, out));
        assert_eq!((c.core.state, c.core.term), (State::Candidate, 1));
    }

    /// A leader whose uncommitted tail is full: commit 2, last 2 + 16,384.
    fn full(mode: LeaseGuardMode) -> Replica {
        let (mut b, _) = elected(mode);
        while !b.core.tail_full() {
            b.core.log.push(entry(2, None, 0, 1000));
        }
        assert_eq!(b.core.last_index(), 2 + raft_core::MAX_UNCOMMITTED);
        b
    }

    #[test]
    fn a_full_tail_refuses_what_would_append_and_skips_the_noop() {
        let admits = |b: &Replica, req| {
            let at = LocalTime::from_ns(1001 * MS);
            crate::strategy::with_test_cx(1, ROLES, at, |cx| b.check(cx, req).is_some())
        };
        let (read, write) = (
            Request::Read { key: 1 },
            Request::Write { key: 1, value: 1 },
        );
        let i = full(LeaseGuardMode::Inconsistent);
        assert!(admits(&i, read) && !admits(&i, write));
        assert!(!admits(&full(LeaseGuardMode::Quorum), read));
        // The no-op is skipped, and asked again 250 ms later.
        let mut f = full(LeaseGuardMode::LeaseGuard);
        let last = f.core.last_index();
        let fx = call(&mut f, 1, 1100, |f, cx, out| f.on_timer(cx, NOOP, out));
        assert_eq!(f.core.last_index(), last);
        assert_eq!(fx.actions(), [set(NOOP, ClockKind::Monotonic, 1350 * MS)]);
        // Not full: appended.
        let (mut b, _) = elected(LeaseGuardMode::LeaseGuard);
        call(&mut b, 1, 1100, |b, cx, out| b.on_timer(cx, NOOP, out));
        assert_eq!(b.core.last_index(), 5);
        // A follower appends nothing.
        let mut c = replica(LeaseGuardMode::LeaseGuard, 2);
        let fx = call(&mut c, 2, 1100, |c, cx, out| c.on_timer(cx, NOOP, out));
        assert_eq!(c.core.last_index(), 0);
        assert_eq!(fx.actions(), [set(NOOP, ClockKind::Monotonic, 1350 * MS)]);
    }

    #[test]
    fn a_request_of_an_old_term_is_refused_and_reads_follow_the_mode() {
        let (mut i, _) = elected(LeaseGuardMode::Inconsistent);
        let read = |r: &mut Replica, token| {
            call(r, 1, 1001, |r, cx, out| {
                r.on_request(cx, Request::Read { key: 7 }, token, out)
            })
        };
        assert!(matches!(
            read(&mut i, 1).facts(),
            [Fact::Refused { token: 1, .. }]
        ));
        assert_eq!(
            read(&mut i, 2).facts(),
            [Fact::Read {
                token: 2,
                value: 107
            }]
        );
        // In Quorum mode a read needs the entry appended after it, 5: with 4 committed it
        // waits; with 5, served.
        let (mut q, _) = elected(LeaseGuardMode::Quorum);
        read(&mut q, 2);
        let acked = |q: &mut Replica, index| {
            let progress = Message::Progress { term: 2, index };
            msg(q, 1, 1002, 0, progress)
                .facts()
                .iter()
                .filter(|f| matches!(f, Fact::ConfirmedRead { .. }))
                .count()
        };
        assert_eq!(acked(&mut q, 4), 0);
        assert_eq!(q.core.commit(), 4);
        assert_eq!(acked(&mut q, 5), 1);
    }

    #[test]
    fn a_restart_keeps_the_term_and_the_log() {
        let (b, _) = elected(LeaseGuardMode::LeaseGuard);
        let r = replica_of(config(LeaseGuardMode::LeaseGuard), 1, None, b.into_disk());
        assert_eq!((r.core.term, r.core.last_index()), (2, 4));
    }

    fn ping(term: u64, leader: bool, last: u64) -> Message {
        Message::Ping { term, leader, last }
    }

    /// An entry of term 1 written by node 0: key `key` to 100 + key.
    fn streamed(key: Key) -> Entry {
        Entry {
            term: 1,
            writer: Some(0),
            key,
            value: 100 + u64::from(key),
            wall: LocalTime::from_ns(0),
        }
    }

    fn append(index: u64, commit: u64) -> Message {
        Message::Append {
            term: 1,
            index,
            entry: streamed(index as Key),
            commit,
        }
    }

    /// Node 2, a follower of node 0 in term 1 from 10 ms, subscribed from index 1.
    fn follower() -> Replica {
        let mut c = replica(LeaseGuardMode::LeaseGuard, 2);
        let fx = msg(&mut c, 2, 10, 0, ping(1, true, 0));
        let pull = Message::Pull {
            term: 1,
            from: 1,
            prev_term: 0,
        };
        assert!(sends(&fx).contains(&(0, pull)));
        assert_eq!(c.core.leader, Some(0));
        c
    }

    fn pulls(fx: &Out<Message>) -> usize {
        let sent = sends(fx);
        sent.iter()
            .filter(|(_, m)| matches!(m, Message::Pull { .. }))
            .count()
    }

    #[test]
    fn a_follower_forgets_only_its_own_leader_stepping_down() {
        let mut c = follower();
        msg(&mut c, 2, 11, 1, ping(1, false, 0));
        assert_eq!(c.core.leader, Some(0));
        msg(&mut c, 2, 12, 0, ping(1, false, 0));
        assert_eq!(c.core.leader, None);
    }

    #[test]
    fn a_follower_subscribes_again_when_its_leader_is_ahead_and_nothing_is_on_its_way() {
        let mut c = follower();
        // Its leader has 3 entries, it has none and none is coming: it asks again.
        assert_eq!(pulls(&msg(&mut c, 2, 11, 0, ping(1, true, 3))), 1);
        // Its leader has none it lacks: no pull.
        let mut c = follower();
        assert_eq!(pulls(&msg(&mut c, 2, 11, 0, ping(1, true, 0))), 0);
        // Another node says it is ahead: no pull.
        assert_eq!(pulls(&msg(&mut c, 2, 11, 1, ping(1, false, 3))), 0);
        // Entry 1 is being written: the stream is alive, no pull.
        msg(&mut c, 2, 12, 0, append(1, 0));
        assert_eq!(c.queue.len(), 1);
        assert_eq!(pulls(&msg(&mut c, 2, 12, 0, ping(1, true, 3))), 0);
        // Hearing its leader again drops nothing it is writing.
        assert_eq!(c.queue.len(), 1);
    }

    #[test]
    fn a_follower_writes_each_entry_in_log_write_or_at_once_without_one() {
        // 250 us per write: entry 1, arriving at 12 ms, is written at 12.25 ms.
        let mut c = follower();
        let fx = msg(&mut c, 2, 12, 0, append(1, 0));
        let write = set(LOG_WRITE, ClockKind::Monotonic, 12 * MS + 250_000);
        assert!(fx.actions().contains(&write));
        assert_eq!(c.core.last_index(), 0);
        // Without a write time it is written and acknowledged at once.
        let instant = LeaseGuardConfig {
            log_write: LocalDur::ZERO,
            ..config(LeaseGuardMode::LeaseGuard)
        };
        let mut d = replica_of(instant, 2, None, Disk::default());
        msg(&mut d, 2, 10, 0, ping(1, true, 0));
        let fx = msg(&mut d, 2, 12, 0, append(1, 0));
        assert_eq!(d.core.last_index(), 1);
        let progress = Message::Progress { term: 1, index: 1 };
        assert_eq!(sends(&fx), [(0, progress)]);
    }

    #[test]
    fn entries_ahead_are_kept_up_to_the_bound_and_dropped_once_passed() {
        let mut c = follower();
        // Entry 1 and entry 3 arrive, 2 is missing: 3 waits.
        msg(&mut c, 2, 12, 0, append(1, 0));
        msg(&mut c, 2, 12, 0, append(3, 0));
        assert_eq!(c.early.keys().copied().collect::<Vec<_>>(), [3]);
        // A snapshot through 5 passes it: dropped.
        let snapshot = Message::Snapshot {
            term: 1,
            index: 5,
            entry: streamed(5),
            state: Store::default(),
        };
        msg(&mut c, 2, 13, 0, snapshot);
        assert!(c.early.is_empty() && c.queue.is_empty());
        // The bound: MAX_EARLY entries ahead are kept, one more is not.
        let mut c = follower();
        call(&mut c, 2, 14, |c, cx, out| {
            for index in 3..3 + MAX_EARLY as u64 {
                c.on_append(cx, 0, index, streamed(1), 0, out);
            }
            c.on_append(cx, 0, 10_000, streamed(1), 0, out);
        });
        assert_eq!(c.early.len(), MAX_EARLY);
        assert!(!c.early.contains_key(&10_000));
    }

    #[test]
    fn a_follower_takes_entries_only_from_its_leader_and_its_term() {
        let mut c = follower();
        // Straight from node 1, not its leader: nothing queued.
        call(&mut c, 2, 12, |c, cx, out| {
            c.on_append(cx, 1, 1, streamed(1), 0, out)
        });
        assert!(c.queue.is_empty());
        // Entries 1 and 2 written; its leader says 2 committed.
        for (index, ms) in [(1, 12), (2, 13)] {
            msg(&mut c, 2, ms, 0, append(index, 0));
            call(&mut c, 2, ms, |c, cx, out| c.on_timer(cx, LOG_WRITE, out));
        }
        assert_eq!((c.core.last_index(), c.core.commit()), (2, 0));
        // A Commit of an older term, from its leader, is not taken.
        c.core.term = 2;
        c.core.leader = Some(0);
        msg(&mut c, 2, 14, 0, Message::Commit { term: 1, commit: 2 });
        assert_eq!(c.core.commit(), 0);
        let mismatch = Message::Mismatch { term: 1, keep: 0 };
        msg(&mut c, 2, 14, 0, mismatch);
        assert_eq!(c.core.last_index(), 2);
        let snapshot = Message::Snapshot {
            term: 1,
            index: 5,
            entry: streamed(5),
            state: Store::default(),
        };
        msg(&mut c, 2, 14, 0, snapshot);
        assert_eq!(c.core.commit(), 0);
        // Its term's Commit is.
        msg(&mut c, 2, 15, 0, Message::Commit { term: 2, commit: 2 });
        assert_eq!(c.core.commit(), 2);
    }
}
