//! `RaftLeaderLease`: the lease held by an elected Raft leader, as TiKV, etcd, CockroachDB and
//! Consul serve reads.
//!
//! Every node is a `Replica` built on the Raft core ([`crate::strategy::raft_core`]): terms,
//! votes, the election timer, the log and its commit rule, and with `pre_vote` pre-votes. With
//! `check_quorum`, a leader, and a follower that heard from the current leader less than
//! `election_timeout` ago, ignore a campaign of a higher term and keep their term (leader
//! stickiness, what makes the lease safe; etcd-io/raft and raft-rs tie it to CheckQuorum the
//! same way); with a `tick`, as in raft-rs and etcd/raft, election timers count ticks of the
//! follower's clock. This protocol adds how entries travel, the lease and the reads.
//!
//! Leadership transfer, as raft-rs has it: the leader sends the target TimeoutNow once the
//! target stores its whole log (replicating to it first if it lags), takes no write while the
//! transfer is under way, and abandons it after an election timeout (with a `tick`, at its tick
//! that completes the timeout's count since the transfer began), or at once when told to
//! transfer to itself. The target campaigns at once, and its campaign is not refused for
//! stickiness. With `transfer_suspect` (TiKV) the leader serves no lease read from the
//! transfer's start until a round sent after the transfer ended renews its lease: no timer makes
//! the lease trusted again.
//!
//! Replication: the leader sends a follower its next unsent entry (one entry per message) at
//! every heartbeat round, when a write arrives while the follower is caught up, and after each
//! acknowledgement while entries remain unsent; each entry goes once, the follower's next index
//! moving on as it is sent, and back to what the follower stores when it rejects an append. One
//! that lacks entries the leader has compacted gets a snapshot of the committed prefix instead. An acknowledgement or a write sends
//! nothing while [`MAX_INFLIGHT`] appends to the follower await theirs; a round's always goes.
//!
//! The lease: the leader sends a heartbeat round every `heartbeat`; when a majority (itself
//! included) has acknowledged round r, sent at local time s_r, the lease runs to s_r + T on the
//! leader's monotonic clock (`HeartbeatQuorum`; `lease_start: OnAck` counts from the receipt of
//! the acknowledgement that completed the majority instead: the bug). `CheckQuorumOnly` is etcd's
//! `ReadOnlyLeaseBased`: no clock lease, the leader serves lease reads until its check-quorum
//! tick finds no majority heard from. `ProposalQuorum` is TiKV's: the lease runs to s + T, s the
//! local propose time of the newest proposal a majority acknowledged, an entry of the leader's
//! term (committed) or a ReadIndex round; heartbeat rounds renew nothing, and with
//! `renew_ahead` D the leader checks every D and starts a ReadIndex round when its lease ends
//! within D. A new leader serves nothing before its first entry (empty, of its term) commits,
//! and its lease starts no earlier; a ReadIndex read that arrives before then is held until
//! then (`read_before_commit: Hold`, etcd) or refused (`Reject`, raft-rs).
//!
//! Authorities: write authority (shared: Raft's log makes two believing leaders harmless, only
//! one can commit) while a node is leader; read authority (exclusive: two nodes serving reads
//! from local state at once is an overlap) while its lease holds, for `reads: Lease` and the
//! local part of `LeaseOrReadIndex`. Writes take effect when committed ([`Fact::Committed`]),
//! so a read by a deposed leader after its successor committed is a stale read.

mod follower_reads;
mod msg;
pub mod settings;

use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::strategy::raft_core::{
    self, majority, quorum, Election, KeptRead, PendingReads, Progress, RaftCore, State,
};
use crate::strategy::{
    Authorities, Belief, Beliefs, Claim, Command, Cx, Fact, LeaseParams, NodeLogic, Out, Protocol,
    Request, TimerId, Transport,
};
use crate::time::{LocalDur, LocalTime};
pub use msg::{Append, AppendAck, Entry, Message, RequestVote, Snapshot};
pub use settings::{RaftLeaseStart, RaftReads, RaftRule, RaftSystem, ReadBeforeCommit};
use std::collections::VecDeque;

/// The protocol's parameters, resolved (defaults filled in).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaftConfig {
    pub election_timeout: LocalDur,
    pub election_jitter: LocalDur,
    pub heartbeat: LocalDur,
    /// Election timers count whole ticks of this length (see the module doc).
    pub tick: Option<LocalDur>,
    pub reads: RaftReads,
    pub max_clock_skew: LocalDur,
    pub lease_rule: RaftRule,
    pub lease_start: RaftLeaseStart,
    pub check_quorum: bool,
    pub transfer_suspect: bool,
    /// As written (`None`: the rule's default, see [`renew_ahead`]).
    pub renew_ahead: Option<LocalDur>,
    pub read_before_commit: ReadBeforeCommit,
    /// Elections start with a pre-vote (see [`raft_core`]).
    pub pre_vote: bool,
    /// Followers serve reads the leader confirms ([`follower_reads`]).
    pub follower_reads: bool,
}

/// How often a leader renews its lease ahead under `rule`, with `written` the setting as
/// written and `lease` T: T/4 by default under `ProposalQuorum` (TiKV's default), never under
/// the other rules; zero means never.
pub fn renew_ahead(rule: RaftRule, written: Option<LocalDur>, lease: LocalDur) -> LocalDur {
    match (rule, written) {
        (RaftRule::ProposalQuorum, None) => LocalDur::from_ns(lease.ns() / 4),
        (_, d) => d.unwrap_or(LocalDur::ZERO),
    }
}

/// `RaftLeaderLease` with its configuration, and the replicas that run their own.
#[derive(Clone, Debug)]
pub struct RaftLeaderLease {
    c: RaftConfig,
    description: String,
    /// Replicas with a configuration of their own (a rolling upgrade's mixed fleet).
    own: Vec<(NodeId, RaftConfig)>,
}

impl RaftLeaderLease {
    pub fn new(c: RaftConfig, description: String) -> RaftLeaderLease {
        let own = Vec::new();
        RaftLeaderLease {
            c,
            description,
            own,
        }
    }

    /// The protocol where each of `own` runs its own configuration.
    pub fn with_own(mut self, own: Vec<(NodeId, RaftConfig)>) -> RaftLeaderLease {
        self.own = own;
        self
    }

    /// Its configuration (every replica's but those with their own).
    pub fn config(&self) -> RaftConfig {
        self.c
    }

    /// The configuration replica `node` runs.
    fn config_of(&self, node: NodeId) -> RaftConfig {
        let own = self.own.iter().find(|&&(n, _)| n == node);
        own.map_or(self.c, |&(_, c)| c)
    }
}

/// What a replica keeps across a crash: Raft's persistent state (its entries carry nothing
/// besides what the core stores).
pub type Disk = raft_core::Disk<()>;

const HEARTBEAT: TimerId = 1;
const CHECK_QUORUM: TimerId = 2;
/// A leadership transfer not done within an election timeout is abandoned.
const TRANSFER: TimerId = 3;
/// `renew_ahead`: the leader's check of how soon its lease ends.
const RENEW: TimerId = 5;

/// Where a leader's lease stands with respect to leadership transfers (`transfer_suspect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Suspect {
    /// No transfer has made it suspect.
    No,
    /// A transfer is under way: no lease reads.
    Transferring,
    /// The transfer ended (abandoned) once round `after` had gone out: no lease reads until a
    /// majority acknowledges a later round.
    Ended { after: u64 },
}

/// Send times of the last rounds, by `round % ROUNDS`: enough for acknowledgements to arrive
/// while far more rounds are sent than a round trip lasts.
const ROUNDS: usize = 64;

/// Appends to one follower awaiting acknowledgement beyond which an acknowledgement or a write
/// sends it no more (a flow-control window, as etcd's and TiKV's `max-inflight-msgs` of 256).
/// Each acknowledgement sends the follower its next entry, and each round that finds it behind
/// starts one more such stream: without a bound, a follower that cannot catch up would be sent
/// ever more copies of the same entries, and a run's events would grow with the square of its
/// length. A heartbeat round's own append always goes (the lease and the reads wait on it).
pub const MAX_INFLIGHT: u32 = 256;

impl Protocol for RaftLeaderLease {
    /// etcd (rafthttp's stream per peer) and TiKV (a gRPC stream per store) carry a replica's
    /// messages to another in order.
    const TRANSPORT: Transport = Transport::Stream;
    type Logic = Replica;

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn authorities(&self) -> Authorities {
        Authorities {
            write: Claim::Shared,
            read: Claim::Exclusive,
        }
    }

    /// A replica writes Raft's term, vote and log before it answers.
    fn persists(&self, role: Role) -> Option<&'static str> {
        (role == Role::Replica).then_some("Raft's term, vote and log")
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        let replicas = raft_core::replicas(scenario);
        if replicas != scenario.nodes.len() {
            p.push("nodes: RaftLeaderLease has Replicas only (every node is a Raft member)".into());
        }
        if replicas == 0 {
            p.push("nodes: RaftLeaderLease needs at least one Replica".into());
        }
        let c = &self.c;
        if c.election_timeout <= LocalDur::ZERO {
            p.push(format!(
                "strategy.election_timeout: must be positive (got {})",
                c.election_timeout
            ));
        }
        if c.election_jitter < LocalDur::ZERO || c.election_jitter > c.election_timeout {
            p.push(format!(
                "strategy.election_jitter: must be in [0, election_timeout = {}] (got {})",
                c.election_timeout, c.election_jitter
            ));
        }
        if c.heartbeat <= LocalDur::ZERO || c.heartbeat >= c.election_timeout {
            p.push(format!(
                "strategy.heartbeat: must be positive and shorter than the election timeout ({}) \
                 (got {})",
                c.election_timeout, c.heartbeat
            ));
        }
        if let Some(t) = c.tick {
            if t <= LocalDur::ZERO {
                p.push(format!("strategy.tick: must be positive (got {t})"));
            } else {
                for (field, d) in [
                    ("election_timeout", c.election_timeout),
                    ("election_jitter", c.election_jitter),
                ] {
                    if d.ns() % t.ns() != 0 {
                        p.push(format!(
                            "strategy.{field}: must be a whole number of ticks of {t} \
                             (got {d}): timers count ticks"
                        ));
                    }
                }
            }
        }
        if c.max_clock_skew < LocalDur::ZERO {
            p.push(format!(
                "strategy.max_clock_skew: must not be negative (got {})",
                c.max_clock_skew
            ));
        }
        // etcd-io/raft's `Config.validate` refuses `ReadOnlyLeaseBased` reads without
        // CheckQuorum, and only those: ReadIndex reads (`ReadOnlySafe`) confirm each read with
        // a round, whatever the leader believes.
        if c.lease_rule == RaftRule::CheckQuorumOnly
            && !c.check_quorum
            && c.reads != RaftReads::ReadIndex
        {
            p.push(format!(
                "strategy.check_quorum: reads: {:?} under a CheckQuorumOnly lease need \
                 check_quorum (etcd refuses ReadOnlyLeaseBased without CheckQuorum: nothing \
                 would end the lease); reads: ReadIndex runs without it",
                c.reads
            ));
        }
        if scenario.resource.fencing {
            p.push(
                "resource.fencing: a Raft group fences by term in its log; the resource is the \
                 log, so there is no separate fencing check to turn on"
                    .into(),
            );
        }
        p
    }

    fn commands(&self) -> &'static [&'static str] {
        &["StepDown", "TransferLeader"]
    }

    fn node_logic(&self, node: NodeId, _role: Role, params: &LeaseParams, disk: Disk) -> Replica {
        let c = self.config_of(node);
        let election = Election::new(c.election_timeout, c.election_jitter, c.tick);
        let mut core = RaftCore::new(node, disk, election);
        core.pre_vote = c.pre_vote;
        Replica {
            c,
            lease: params.lease,
            renew_every: renew_ahead(c.lease_rule, c.renew_ahead, params.lease),
            core,
            round: 0,
            round_sent: [LocalTime::from_ns(i64::MIN); ROUNDS],
            lease_until: None,
            lease_round: 0,
            serving: false,
            transfer: None,
            suspect: Suspect::No,
            pending_reads: PendingReads::default(),
            read_round_open: false,
            round_is_read: [false; ROUNDS],
            proposed: VecDeque::new(),
            held_reads: PendingReads::default(),
            leads_first: params.initial_leader == Some(node),
            forwarded: Default::default(),
            relayed: Default::default(),
        }
    }
}

/// What the leader keeps of one follower besides what it stores.
#[derive(Clone, Copy, Debug, Default)]
struct Peer {
    /// The next index to send.
    next: u64,
    /// It acknowledged an append since it last rejected one (or since this leader's election):
    /// etcd-io/raft's `StateReplicate`, in which the next index moves on as entries are sent.
    /// Until then (`StateProbe`) each append offers the same entry again.
    replicating: bool,
    /// The highest heartbeat round it acknowledged.
    acked_round: u64,
    /// Heard from since the last check-quorum tick.
    heard: bool,
    /// Appends sent to it and not yet acknowledged.
    inflight: Inflight,
}

/// The appends sent to one follower and not yet acknowledged, by the round they went out in
/// (`round % ROUNDS`). One still unacknowledged when its slot comes round again, ROUNDS rounds
/// later, is taken as lost: a count that only lost messages would otherwise raise for good.
#[derive(Clone, Copy, Debug)]
struct Inflight {
    by_round: [u16; ROUNDS],
    total: u32,
}

impl Default for Inflight {
    fn default() -> Self {
        Inflight {
            by_round: [0; ROUNDS],
            total: 0,
        }
    }
}

impl Inflight {
    /// Round `round` begins: what was sent ROUNDS rounds ago and never acknowledged is lost.
    fn begin(&mut self, round: u64) {
        let slot = &mut self.by_round[round as usize % ROUNDS];
        self.total -= u32::from(*slot);
        *slot = 0;
    }

    /// An append went out in round `round` (the current one).
    fn sent(&mut self, round: u64) {
        let slot = &mut self.by_round[round as usize % ROUNDS];
        if *slot < u16::MAX {
            *slot += 1;
            self.total += 1;
        }
    }

    /// The acknowledgement of an append of round `round` arrived, in round `now`.
    fn acked(&mut self, round: u64, now: u64) {
        let slot = &mut self.by_round[round as usize % ROUNDS];
        if now - round < ROUNDS as u64 && *slot > 0 {
            *slot -= 1;
            self.total -= 1;
        }
        debug_assert_eq!(
            self.total,
            self.by_round.iter().map(|&n| u32::from(n)).sum::<u32>()
        );
    }
}

/// One Raft replica.
pub struct Replica {
    c: RaftConfig,
    lease: LocalDur,
    core: RaftCore<(), Peer>,
    /// As leader: the current heartbeat round, and when each recent round was sent.
    round: u64,
    round_sent: [LocalTime; ROUNDS],
    /// As leader: the read lease's end on the monotonic clock (`HeartbeatQuorum`), and the
    /// round it was last extended by.
    lease_until: Option<LocalTime>,
    lease_round: u64,
    /// As leader: its first entry has committed, so it serves requests.
    serving: bool,
    /// As leader: the target of the leadership transfer under way. It takes no write while one
    /// is (raft-rs drops proposals then).
    transfer: Option<NodeId>,
    /// As leader: whether a transfer made the lease suspect (no lease reads).
    suspect: Suspect,
    /// As leader: ReadIndex reads waiting for a majority to acknowledge a round (the first
    /// round started after each arrived), each with its request's stamp.
    pending_reads: PendingReads,
    /// A round has been started for the pending reads and not yet acknowledged.
    read_round_open: bool,
    /// `ProposalQuorum`'s renewal period ahead of the lease's end (zero: none).
    renew_every: LocalDur,
    /// As leader, by `round % ROUNDS`: whether the round was a ReadIndex round (started for
    /// reads or to renew the lease), which renews a `ProposalQuorum` lease.
    round_is_read: [bool; ROUNDS],
    /// As leader under `ProposalQuorum`: the entries of its term not yet committed, by index,
    /// with their local propose time.
    proposed: VecDeque<(u64, LocalTime)>,
    /// As leader before its first commit: the ReadIndex reads held (`Hold`), their stamps.
    held_reads: PendingReads,
    /// The scenario's `lease.initial_leader`: it campaigns at its first start (term 0).
    leads_first: bool,
    /// As follower: the reads it forwarded to its leader (`follower_reads`).
    forwarded: follower_reads::FollowerReads,
    /// As leader: the reads followers forwarded, waiting for a round to confirm them.
    relayed: follower_reads::Relayed,
}

impl Replica {
    /// Moves to `term` as a follower (a higher term seen, or stepping down). Returns whether it
    /// was leading: its election timer was then stopped, and the caller must arm it (every path
    /// that deposes a leader does, or it would never campaign again).
    fn become_follower(&mut self, term: u64, out: &mut Out<Message>) -> bool {
        self.pending_reads.refuse_all(self.core.term, out);
        self.held_reads.refuse_all(self.core.term, out);
        self.refuse_forwarded(out);
        self.relayed.clear();
        self.proposed.clear();
        let was_leader = self.core.become_follower(term);
        if was_leader {
            out.cancel_timer(HEARTBEAT);
            out.cancel_timer(CHECK_QUORUM);
            out.cancel_timer(TRANSFER);
            out.cancel_timer(RENEW);
        }
        self.serving = false;
        self.transfer = None;
        self.suspect = Suspect::No;
        self.lease_until = None;
        self.lease_round = 0;
        self.read_round_open = false;
        was_leader
    }

    /// The election timer ran out: a campaign, or with `pre_vote` a pre-campaign first.
    fn election_timeout(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.refuse_forwarded(out);
        if !self.core.pre_vote || self.core.pre_campaign(cx, out) {
            self.campaign(cx, false, out);
        }
    }

    fn campaign(&mut self, cx: &mut Cx, transfer: bool, out: &mut Out<Message>) {
        if self.core.campaign(cx, transfer, out) {
            self.become_leader(cx, out);
        }
    }

    fn become_leader(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        let term = self.core.term;
        self.core.log.push(raft_core::Entry {
            term,
            ..Default::default()
        });
        let next = self.core.last_index();
        self.proposed.clear();
        self.propose(next, cx.mono);
        let peer = Peer {
            next,
            ..Peer::default()
        };
        self.core.become_leader(cx, peer, out);
        self.serving = false;
        self.transfer = None;
        self.suspect = Suspect::No;
        self.lease_until = None;
        self.lease_round = 0;
        out.report(Fact::Issued {
            token: term,
            to: self.core.node,
            until: cx.mono + self.c.election_timeout,
        });
        if self.c.check_quorum {
            let at = self.core.election.base_deadline(cx.mono);
            out.set_timer(CHECK_QUORUM, ClockKind::Monotonic, at);
        }
        if self.renew_every > LocalDur::ZERO {
            out.set_timer(RENEW, ClockKind::Monotonic, cx.mono + self.renew_every);
        }
        self.heartbeat_round(cx, out);
        self.advance_commit(cx, out);
    }

    /// Entry `index` of its term was proposed at local time `at`: under `ProposalQuorum` its
    /// commit renews the lease from `at`.
    fn propose(&mut self, index: u64, at: LocalTime) {
        if self.c.lease_rule == RaftRule::ProposalQuorum {
            debug_assert!(self
                .proposed
                .back()
                .is_none_or(|&(i, t)| i < index && t <= at));
            self.proposed.push_back((index, at));
        }
    }

    /// Starts a ReadIndex round: a heartbeat round whose majority confirms the reads waiting
    /// for it and renews a `ProposalQuorum` lease.
    fn read_round(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.heartbeat_round(cx, out);
        self.round_is_read[self.round as usize % ROUNDS] = true;
        self.read_round_open = true;
    }

    /// `renew_ahead`'s check: a leader serving under a lease that ends within the period (or
    /// has ended) starts a ReadIndex round to renew it, unless one is out already (its
    /// acknowledgements renew the lease) or a transfer made the lease suspect (TiKV renews
    /// only a valid or expired lease).
    fn renew_ahead_check(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if !self.core.is_leader() {
            return;
        }
        let d = self.renew_every;
        out.set_timer(RENEW, ClockKind::Monotonic, cx.mono + d);
        let ends_soon = self.lease_until.is_none_or(|u| cx.mono + d >= u);
        if self.serving
            && self.suspect != Suspect::Transferring
            && ends_soon
            && !self.read_round_open
        {
            self.read_round(cx, out);
        }
    }

    /// Starts a heartbeat round: every follower gets its next entry, or an empty append.
    fn heartbeat_round(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.round += 1;
        self.round_sent[self.round as usize % ROUNDS] = cx.mono;
        self.round_is_read[self.round as usize % ROUNDS] = false;
        for i in 0..self.core.peers.len() {
            self.core.peers[i].ext.inflight.begin(self.round);
            self.send_append(i, out);
        }
        out.set_timer(HEARTBEAT, ClockKind::Monotonic, cx.mono + self.c.heartbeat);
    }

    /// Whether follower `i` lacks entries and this round may send it more.
    fn may_send_more(&self, i: usize) -> bool {
        let p = &self.core.peers[i].ext;
        p.next <= self.core.last_index() && p.inflight.total < MAX_INFLIGHT
    }

    /// Sends follower `i` its next entry after the one it is believed to match (none: a
    /// heartbeat), or a snapshot if that one is compacted away.
    fn send_append(&mut self, i: usize, out: &mut Out<Message>) {
        let (term, commit, round) = (self.core.term, self.core.commit(), self.round);
        let Progress { node, ext, .. } = self.core.peers[i];
        let prev_index = ext.next - 1;
        let log = &self.core.log;
        let msg = match log.term(prev_index) {
            Some(prev_term) => Message::Append(Append {
                term,
                prev_index,
                prev_term,
                entry: log.entry(ext.next).map(|e| Entry {
                    term: e.term,
                    writer: e.writer,
                    key: e.key,
                    value: e.value,
                }),
                commit,
                round,
            }),
            None => {
                let s = self.core.snapshot();
                Message::Snapshot(Snapshot {
                    term,
                    index: s.index,
                    last_term: s.entry.term,
                    state: s.state,
                    round,
                })
            }
        };
        let ext = &mut self.core.peers[i].ext;
        if let Message::Snapshot(_) = msg {
            // etcd-io/raft's `BecomeSnapshot` resets the progress: appends sent before it
            // (into a partition, say) no longer hold the window shut.
            ext.inflight = Inflight::default();
            ext.replicating = false;
        }
        ext.inflight.sent(round);
        // Replicating, the next append carries the entry after this one, as etcd-io/raft's and
        // raft-rs's progress does in its replicate state (`UpdateOnEntriesSend`: Next moves on as
        // entries go out; a rejection moves it back): each entry goes once, not once per
        // acknowledgement that arrives while the follower lacks it.
        if let Message::Append(Append { entry: Some(_), .. }) = msg {
            if ext.replicating {
                ext.next += 1;
            }
        }
        out.send(node, msg);
    }

    /// Commits what a majority stores, if of this term; the first commit of the term makes the
    /// leader serve, and the reads held for it wait for a round started now. Under
    /// `ProposalQuorum` every commit renews the lease.
    fn advance_commit(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if !self.core.commit_quorum(majority(cx), out) {
            return;
        }
        if !self.serving {
            self.serving = true;
            out.report(Fact::Holding {
                token: self.core.term,
            });
            if !self.held_reads.is_empty() {
                debug_assert!(self.pending_reads.is_empty() && !self.read_round_open);
                for read in self.held_reads.ready(u64::MAX) {
                    self.pending_reads.push(self.round + 1, read);
                }
                self.read_round(cx, out);
            }
            self.update_lease(cx, out);
        } else if self.c.lease_rule == RaftRule::ProposalQuorum {
            self.update_lease(cx, out);
        }
    }

    /// The highest round a majority (the leader included) has acknowledged.
    fn quorum_round(&self, cx: &Cx) -> u64 {
        let acked = self.core.peers.iter().map(|p| p.ext.acked_round);
        quorum(acked.chain([self.round]), majority(cx))
    }

    /// Extends the lease by the rounds a majority acknowledged, serves the ReadIndex reads they
    /// confirm, and re-arms the lease's end.
    fn update_lease(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if !self.core.is_leader() || !self.serving {
            return;
        }
        let q = self.quorum_round(cx);
        // A lease a transfer made suspect is trusted again only when renewed by a round sent
        // after the transfer ended.
        if matches!(self.suspect, Suspect::Ended { after } if q > after) {
            self.suspect = Suspect::No;
        }
        match self.c.lease_rule {
            // A round extends the lease once: when a majority has acknowledged it.
            RaftRule::HeartbeatQuorum if q > self.lease_round => {
                let sent = self.newest_round_sent(q, |_| true);
                self.lease_round = q;
                self.extend_lease(cx, sent, out);
            }
            RaftRule::ProposalQuorum => {
                let is_read = self.round_is_read;
                let sent = self.newest_round_sent(q, |r| is_read[r as usize % ROUNDS]);
                self.lease_round = self.lease_round.max(q);
                self.extend_lease(cx, sent, out);
                let commit = self.core.commit();
                let mut proposed = None;
                while let Some(&(index, at)) = self.proposed.front() {
                    if index > commit {
                        break;
                    }
                    proposed = Some(at);
                    self.proposed.pop_front();
                }
                self.extend_lease(cx, proposed, out);
            }
            _ => {}
        }
        // ReadIndex: a read waits for a majority to acknowledge a round started after it
        // arrived; reads that arrived while a round was out wait for the next one.
        let token = self.core.term;
        for read in self.pending_reads.ready(q) {
            let value = self.core.applied().get(read.key);
            let since = read.since;
            out.report(Fact::ConfirmedRead {
                token,
                since,
                value,
            });
        }
        self.answer_relayed(q, out);
        if self.read_round_open && q >= self.round {
            self.read_round_open = false;
            if !self.pending_reads.is_empty() || !self.relayed.is_empty() {
                self.read_round(cx, out);
            }
        }
    }

    /// The send time of the newest round in (`lease_round`, `q`] that `counts`, if it is among
    /// the rounds remembered (a majority answering more than ROUNDS rounds late has lost its
    /// send time: it extends nothing).
    fn newest_round_sent(&self, q: u64, counts: impl Fn(u64) -> bool) -> Option<LocalTime> {
        let oldest = self.round.saturating_sub(ROUNDS as u64 - 1);
        (self.lease_round + 1..=q)
            .rev()
            .take_while(|&r| r >= oldest)
            .find(|&r| counts(r))
            .map(|r| self.round_sent[r as usize % ROUNDS])
    }

    /// A renewal whose proposal went out at local time `sent` (none: no renewal): the lease
    /// runs to `sent` + T (or, `lease_start: OnAck`, from now), if that is later than it ran,
    /// and the leader reports the renewal of its term's lease.
    fn extend_lease(&mut self, cx: &Cx, sent: Option<LocalTime>, out: &mut Out<Message>) {
        let Some(sent) = sent else {
            return;
        };
        debug_assert!(
            sent <= cx.mono,
            "a proposal renews from its send time, not later"
        );
        let start = match self.c.lease_start {
            RaftLeaseStart::OnSend => sent,
            RaftLeaseStart::OnAck => cx.mono,
        };
        let until = start + self.lease;
        if self.lease_until.is_none_or(|u| until > u) {
            self.lease_until = Some(until);
            out.report(Fact::Renewed {
                token: self.core.term,
                until,
            });
        }
    }

    /// Whether a read may be served from local state now (the lease holds, by the configured
    /// rule, with `skew` to spare).
    fn lease_holds(&self, cx: &Cx, skew: LocalDur) -> bool {
        if !self.core.is_leader() || !self.serving || self.suspect != Suspect::No {
            return false;
        }
        match self.c.lease_rule {
            RaftRule::CheckQuorumOnly => true,
            RaftRule::HeartbeatQuorum | RaftRule::ProposalQuorum => {
                self.lease_until.is_some_and(|u| cx.mono + skew < u)
            }
        }
    }

    /// Of an append or snapshot of `(term, round)` from `from`: if `term` is older than its own,
    /// returns false, answering failure in its own term with `check_quorum` or `pre_vote` (which
    /// deposes the stale leader; without either, as in etcd-io/raft and raft-rs, a higher term
    /// reaches it only through a campaign); else takes `from` as the leader of `term` (a follower
    /// of it from now), heard from now.
    fn hear_leader(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        of: (u64, u64),
        out: &mut Out<Message>,
    ) -> bool {
        let (term, round) = of;
        if term < self.core.term {
            if self.c.check_quorum || self.c.pre_vote {
                let index = self.core.last_index();
                self.ack(from, false, index, round, out);
            }
            return false;
        }
        if term > self.core.term || self.core.state != State::Follower {
            self.become_follower(term, out);
        }
        self.core.leader = Some(from);
        self.core.election.heard_leader_at = Some(cx.mono);
        self.core.election.arm(cx, out);
        true
    }

    fn ack(&self, to: NodeId, success: bool, index: u64, round: u64, out: &mut Out<Message>) {
        let term = self.core.term;
        let ack = AppendAck {
            term,
            success,
            index,
            round,
        };
        out.send(to, Message::AppendAck(ack));
    }

    fn on_append(&mut self, cx: &mut Cx, from: NodeId, m: Append, out: &mut Out<Message>) {
        if !self.hear_leader(cx, from, (m.term, m.round), out) {
            return;
        }
        if !self.core.log.agrees(m.prev_index, m.prev_term) {
            let index = self.core.last_index().min(m.prev_index.saturating_sub(1));
            self.ack(from, false, index, m.round, out);
            return;
        }
        let mut matched = m.prev_index;
        if let Some(e) = m.entry {
            let at = m.prev_index + 1;
            // The writer is the leader that accepted the write, which the entry names: not the
            // leader relaying it now.
            let stored = raft_core::Entry {
                term: e.term,
                writer: e.writer,
                key: e.key,
                value: e.value,
                extra: (),
            };
            self.core.log.store(at, stored);
            matched = at;
        }
        // Only what is known to match the leader's log may be committed.
        self.core.commit_to(m.commit.min(matched), out, false);
        self.serve_forwarded(out);
        self.ack(from, true, matched, m.round, out);
    }

    /// A snapshot of the leader's committed prefix: it matches the leader's log up to there.
    fn on_snapshot(&mut self, cx: &mut Cx, from: NodeId, m: Snapshot, out: &mut Out<Message>) {
        if !self.hear_leader(cx, from, (m.term, m.round), out) {
            return;
        }
        let entry = raft_core::Entry {
            term: m.last_term,
            ..Default::default()
        };
        self.core.install(raft_core::Snapshot {
            index: m.index,
            entry,
            state: m.state,
        });
        self.serve_forwarded(out);
        let index = self.core.commit();
        self.ack(from, true, index, m.round, out);
    }

    fn on_append_ack(&mut self, cx: &mut Cx, from: NodeId, m: AppendAck, out: &mut Out<Message>) {
        if m.term > self.core.term {
            self.become_follower(m.term, out);
            self.core.election.arm(cx, out);
            return;
        }
        if !self.core.is_leader() || m.term < self.core.term {
            return;
        }
        let Some(i) = self.core.peer(from) else {
            return;
        };
        let rose = m.success && self.core.matched(i, m.index);
        // A transfer's target gets TimeoutNow once it stores the leader's whole log (and
        // once only: the log does not grow while the transfer is under way).
        if rose
            && self.transfer == Some(from)
            && self.core.peers[i].matched == self.core.last_index()
        {
            self.send_timeout_now(from, out);
        }
        let Progress {
            matched, ext: p, ..
        } = &mut self.core.peers[i];
        p.heard = true;
        p.inflight.acked(m.round, self.round);
        if m.success && !p.replicating {
            // `BecomeReplicate`: the progress starts afresh.
            p.inflight = Inflight::default();
        }
        p.replicating = m.success;
        if m.success {
            p.next = p.next.max(m.index + 1);
            p.acked_round = p.acked_round.max(m.round);
        } else {
            // Back off towards the follower's log, but never to what it is known to store (a
            // late rejection of an older append says nothing new). What was in flight is
            // forgotten, as etcd-io/raft's `BecomeProbe` resets its inflights: appends sent into
            // a partition that has healed would otherwise hold the window shut until their
            // rounds came round again.
            p.next = (m.index + 1).min(p.next - 1).max(*matched + 1);
            p.inflight = Inflight::default();
        }
        if self.may_send_more(i) {
            self.send_append(i, out);
        }
        self.advance_commit(cx, out);
        self.update_lease(cx, out);
    }

    fn on_request_vote(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        m: RequestVote,
        out: &mut Out<Message>,
    ) {
        // Stickiness, with check_quorum only (etcd-io/raft's `inLease`): a leader, or a follower
        // that heard from its leader lately, ignores a campaign of a higher term (and keeps its
        // term), unless a leadership transfer started it.
        let sticky = self.c.check_quorum && self.core.in_lease(&m, cx.mono);
        let mut moved = false;
        if m.term > self.core.term {
            if sticky {
                return;
            }
            // A pre-vote request moves no one to its term.
            if !m.pre {
                self.become_follower(m.term, out);
                moved = true;
            }
        }
        let granted = self.core.answer_vote(cx, from, m, out);
        // A node that became a follower of a higher term restarts its election timer, granted
        // or not (etcd-io/raft `becomeFollower` -> `reset`; raft-rs `become_follower` ->
        // `reset`); a grant has restarted it already.
        if moved && !granted {
            self.core.election.arm(cx, out);
        }
    }

    /// A vote, or a pre-vote, from `from`.
    fn on_vote(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        term: u64,
        granted: bool,
        pre: bool,
        out: &mut Out<Message>,
    ) {
        // A granted pre-vote carries the term asked for, ahead of the pre-candidate's own: it
        // moves no one; any other answer of a higher term does.
        if term > self.core.term && !(pre && granted) {
            self.become_follower(term, out);
            self.core.election.arm(cx, out);
        } else if pre {
            if self.core.count_pre_vote(from, term, granted, majority(cx)) {
                self.campaign(cx, false, out);
            }
        } else if self.core.count_vote(from, term, granted, majority(cx)) {
            self.become_leader(cx, out);
        }
    }

    /// Starts a leadership transfer to `to`, as etcd-io/raft (raft.go, `stepLeader` on
    /// `MsgTransferLeader`) and raft-rs (src/raft.rs, `handle_transfer_leader`) do: one to the
    /// same target already under way changes nothing; any other first abandons the one under
    /// way; one to the leader itself then stops there ("already leader"), so it ends a pending
    /// transfer at once (etcd-io/raft raft_test.go `TestLeaderTransferBack`). A transfer ends,
    /// if no higher term ended it first, when an election timeout has run out since it began,
    /// counted in ticks if the timers count ticks ([`Election::base_deadline`]). The target gets
    /// TimeoutNow at once if it stores the leader's whole log, else the entries it lacks first.
    fn transfer_leader(&mut self, cx: &mut Cx, to: NodeId, out: &mut Out<Message>) {
        let peer = self.core.peer(to);
        if peer.is_none() && to != self.core.node {
            // Not a member of the group (both systems: "no progress available").
            return;
        }
        if self.transfer == Some(to) {
            return;
        }
        if self.transfer.is_some() {
            self.abort_transfer(out);
        }
        let Some(i) = peer else {
            return;
        };
        self.transfer = Some(to);
        // TiKV marks the lease suspect first: no lease reads until the transfer is over and a
        // round sent after it renewed the lease.
        if self.c.transfer_suspect {
            self.suspect = Suspect::Transferring;
        }
        // One count times both the transfer and the CheckQuorum round (`electionElapsed`),
        // and the transfer restarts it: the next check falls an election timeout from now.
        let until = self.core.election.base_deadline(cx.mono);
        if self.c.check_quorum {
            out.set_timer(CHECK_QUORUM, ClockKind::Monotonic, until);
        }
        out.set_timer(TRANSFER, ClockKind::Monotonic, until);
        if self.core.peers[i].matched == self.core.last_index() {
            self.send_timeout_now(to, out);
        } else if self.may_send_more(i) {
            self.send_append(i, out);
        }
    }

    fn send_timeout_now(&self, to: NodeId, out: &mut Out<Message>) {
        let term = self.core.term;
        out.send(to, Message::TimeoutNow { term });
    }

    /// The transfer under way is abandoned (raft-rs's `abort_leader_transfer`, etcd-io/raft's
    /// `abortLeaderTransfer`): not done within an election timeout, or replaced by another
    /// transfer (to the leader itself, too). The leader takes writes again; a suspect lease
    /// stays so until a round sent from now on renews it.
    fn abort_transfer(&mut self, out: &mut Out<Message>) {
        out.cancel_timer(TRANSFER);
        self.transfer = None;
        if self.suspect == Suspect::Transferring {
            self.suspect = Suspect::Ended { after: self.round };
        }
    }

    fn check_quorum(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        let heard = 1 + self.core.peers.iter().filter(|p| p.ext.heard).count();
        if heard < majority(cx) {
            self.become_follower(self.core.term, out);
            self.core.election.arm(cx, out);
        } else {
            for p in &mut self.core.peers {
                p.ext.heard = false;
            }
            let at = self.core.election.base_deadline(cx.mono);
            out.set_timer(CHECK_QUORUM, ClockKind::Monotonic, at);
        }
    }
}

impl Replica {
    // The calls into node logic; each persists what it changed of Raft's state (see
    // `NodeLogic for Replica`).

    fn start_call(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.core.election.start(cx.mono);
        if cx.peers(Role::Replica).count() == 1 {
            self.campaign(cx, false, out);
        } else if self.leads_first && self.core.term == 0 {
            self.election_timeout(cx, out);
        } else {
            self.core.election.arm(cx, out);
        }
    }

    fn message_call(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        if !raft_core::first_copy(cx) {
            return;
        }
        match msg {
            Message::RequestVote(m) => self.on_request_vote(cx, from, m, out),
            Message::Vote { term, granted, pre } => self.on_vote(cx, from, term, granted, pre, out),
            Message::Append(m) => self.on_append(cx, from, m, out),
            Message::Snapshot(m) => self.on_snapshot(cx, from, m, out),
            Message::AppendAck(m) => self.on_append_ack(cx, from, m, out),
            Message::TimeoutNow { term } => {
                if term == self.core.term && self.core.state == State::Follower {
                    self.campaign(cx, true, out);
                }
            }
            Message::ReadIndex { term, id } => self.on_read_index(cx, from, (term, id), out),
            Message::ReadIndexResp { term, id, index } => {
                self.on_read_index_resp((term, id), index, out)
            }
        }
    }

    fn timer_call(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            raft_core::ELECTION => self.election_timeout(cx, out),
            HEARTBEAT => self.heartbeat_round(cx, out),
            CHECK_QUORUM => self.check_quorum(cx, out),
            TRANSFER => self.abort_transfer(out),
            RENEW => self.renew_ahead_check(cx, out),
            _ => {}
        }
    }

    fn command_call(&mut self, cx: &mut Cx, command: Command, out: &mut Out<Message>) {
        if !self.core.is_leader() {
            return;
        }
        match command {
            Command::StepDown => {
                self.become_follower(self.core.term, out);
                self.core.election.arm(cx, out);
            }
            Command::TransferLeader { to } => self.transfer_leader(cx, to, out),
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
        if self.c.follower_reads && !request.is_write() && !self.core.is_leader() {
            self.forward_read(request, (since, token), out);
            return;
        }
        if !self.core.is_leader() || token != self.core.term {
            // Deposed between the check and now: the client times out.
            out.report(Fact::Refused { token, since });
            return;
        }
        match request {
            Request::Write { .. } if self.transfer.is_some() => {
                // A transfer began since the write was admitted: dropped.
                out.report(Fact::Refused { token, since });
            }
            Request::Write { key, value } => {
                out.report(Fact::Appended { token });
                self.core.log.push(raft_core::Entry {
                    term: token,
                    writer: Some(self.core.node),
                    key,
                    value,
                    extra: (),
                });
                // No `WriteSent`: the write takes effect only when it commits
                // (`Fact::Committed`); a deposed leader's appends never do.
                let index = self.core.last_index();
                self.propose(index, cx.mono);
                for i in 0..self.core.peers.len() {
                    if self.core.peers[i].ext.next == index && self.may_send_more(i) {
                        self.send_append(i, out);
                    }
                }
                self.advance_commit(cx, out);
            }
            _ if !self.serving => {
                // Admitted before the first commit: held until it (`check`).
                debug_assert_eq!(self.c.read_before_commit, ReadBeforeCommit::Hold);
                out.report(Fact::Waiting { token });
                let key = request.key();
                self.held_reads.push(0, KeptRead { since, key });
            }
            _ => {
                let local = match self.c.reads {
                    RaftReads::Lease => true,
                    RaftReads::ReadIndex => false,
                    RaftReads::LeaseOrReadIndex => self.lease_holds(cx, self.c.max_clock_skew),
                };
                let key = request.key();
                if local {
                    let value = self.core.applied().get(key);
                    out.report(Fact::Read { token, value });
                } else if self.pending_reads.is_full() {
                    out.report(Fact::Refused { token, since });
                } else {
                    // ReadIndex: confirm leadership with a round started after the read
                    // arrived: now, or when the round already out is acknowledged.
                    out.report(Fact::Waiting { token });
                    self.pending_reads
                        .push(self.round + 1, KeptRead { since, key });
                    if !self.read_round_open {
                        self.read_round(cx, out);
                        self.update_lease(cx, out);
                    }
                }
            }
        }
    }
}

impl NodeLogic for Replica {
    type Msg = Message;
    type Disk = Disk;

    /// A lone replica campaigns at once; so does the scenario's initial leader at its first
    /// start, as a node told to campaign (etcd's `MsgHup`): with a pre-vote first if the group
    /// runs one. Every other replica waits out its election timer.
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
            return self.admits_forwarded(request).then_some(self.core.term);
        }
        if !self.serving {
            // Before the first commit only a read that would be confirmed by a round, held.
            let held = matches!(request, Request::Read { .. })
                && self.c.read_before_commit == ReadBeforeCommit::Hold
                && self.c.reads != RaftReads::Lease
                && !self.held_reads.is_full();
            return held.then_some(self.core.term);
        }
        let ok = match request {
            // A leader whose uncommitted tail is full admits no write, nor one transferring
            // its leadership.
            Request::Write { .. } => !self.core.tail_full() && self.transfer.is_none(),
            _ => match self.c.reads {
                RaftReads::Lease => self.lease_holds(cx, LocalDur::ZERO),
                // A read that may wait for a round needs room among the waiting ones.
                RaftReads::ReadIndex | RaftReads::LeaseOrReadIndex => !self.pending_reads.is_full(),
            },
        };
        ok.then_some(self.core.term)
    }

    /// A follower that takes no read to forward admits nothing (nor does a candidate).
    fn refuses_whatever_the_time(&self, request: Request) -> bool {
        !self.core.is_leader() && !self.admits_forwarded(request)
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
        let read = if !self.serving || self.suspect != Suspect::No {
            Belief::None
        } else {
            match (self.c.reads, self.c.lease_rule) {
                (RaftReads::ReadIndex, _) => Belief::None,
                (_, RaftRule::CheckQuorumOnly) => Belief::Bool { token },
                (reads, RaftRule::HeartbeatQuorum | RaftRule::ProposalQuorum) => {
                    match self.lease_until {
                        Some(u) => Belief::Until {
                            token,
                            clock: ClockKind::Monotonic,
                            deadline: if reads == RaftReads::LeaseOrReadIndex {
                                u - self.c.max_clock_skew
                            } else {
                                u
                            },
                        },
                        None => Belief::None,
                    }
                }
            }
        };
        Beliefs { write, read }
    }

    fn into_disk(self) -> Disk {
        self.core.into_disk()
    }

    /// Raft's term, vote and log.
    fn disk_image(&self) -> Option<Disk> {
        Some(self.core.disk_image())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{self, Component};
    use crate::scenario::GrantorRestart;
    use crate::strategy::{Action, Store};

    const S: i64 = 1_000_000_000;
    const MS: i64 = 1_000_000;

    fn at(s: i64) -> LocalTime {
        LocalTime::from_ns(s)
    }

    const ROLES: &[Role] = &[Role::Replica; 3];

    /// Node `node` of three: election timeout 10 s (no jitter), a round every 1 s, lease reads
    /// under a lease of 9 s.
    fn replica(node: NodeId) -> Replica {
        replica_with(node, |_| {})
    }

    /// [`replica`] with its configuration changed by `change`.
    fn replica_with(node: NodeId, change: impl FnOnce(&mut RaftConfig)) -> Replica {
        let mut c = RaftConfig {
            election_timeout: LocalDur::from_secs(10),
            election_jitter: LocalDur::ZERO,
            heartbeat: LocalDur::from_secs(1),
            tick: None,
            reads: RaftReads::Lease,
            max_clock_skew: LocalDur::ZERO,
            lease_rule: RaftRule::HeartbeatQuorum,
            lease_start: RaftLeaseStart::OnSend,
            check_quorum: false,
            transfer_suspect: true,
            renew_ahead: None,
            read_before_commit: ReadBeforeCommit::Hold,
            pre_vote: false,
            follower_reads: false,
        };
        change(&mut c);
        let params = LeaseParams {
            lease: LocalDur::from_secs(9),
            renew_every: LocalDur::from_secs(3),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
            initial_leader: None,
        };
        let p = RaftLeaderLease::new(c, String::new());
        p.node_logic(node, Role::Replica, &params, Disk::default())
    }

    /// An ack of a round older than the remembered send times extends nothing; a recent one
    /// extends the lease to its round's send time + T, and each extension is reported as a
    /// renewal of the term's lease (so a run counts them and faults can be placed at them).
    #[test]
    fn an_ack_of_a_forgotten_round_extends_no_lease() {
        let mut r = replica(0);
        let roles = ROLES;
        let mut rng = rng::stream(0, Component::Node, 0);
        let mut run_token = 0;
        let mut cx = Cx {
            node: 0,
            roles,
            mono: at(0),
            wall: at(0),
            tt: crate::strategy::TtNow::exact(at(0)),
            restarted: false,
            incarnation: 0,
            duplicate: false,
            rng: &mut rng,
            run_token: &mut run_token,
            stamp: crate::strategy::Stamp::new(crate::time::SimTime::ZERO, 0),
        };
        let mut out = Out::default();
        let ack = |round| {
            Message::AppendAck(AppendAck {
                term: 1,
                success: true,
                index: 1,
                round,
            })
        };
        // Elected at 0 with r1's vote; round 1 goes out at 0 with the empty entry.
        r.campaign(&mut cx, false, &mut out);
        r.on_message(
            &mut cx,
            1,
            Message::Vote {
                term: 1,
                granted: true,
                pre: false,
            },
            &mut out,
        );
        assert_eq!(r.core.state, State::Leader);
        // r1 acknowledges round 1: the entry commits, the lease runs to 0 + 9 s.
        r.on_message(&mut cx, 1, ack(1), &mut out);
        assert_eq!(r.lease_until, Some(at(9 * S)));
        // Rounds 2..=101 go out at 1 s, ..., 100 s (round k at k - 1 s).
        for k in 1..=100 {
            cx.mono = at(k * S);
            r.heartbeat_round(&mut cx, &mut out);
        }
        assert_eq!(r.round, 101);
        // r2's ack of round 3 (sent at 2 s) completes round 3's majority at 100.5 s: 98 rounds
        // ago, its send time is gone (its slot holds round 67's, 66 s): no extension.
        cx.mono = at(100 * S + S / 2);
        r.on_message(&mut cx, 2, ack(3), &mut out);
        assert_eq!(r.lease_until, Some(at(9 * S)));
        // r1's ack of round 100 (sent at 99 s): the lease runs to 108 s.
        r.on_message(&mut cx, 1, ack(100), &mut out);
        assert_eq!(r.lease_until, Some(at(108 * S)));
        // Two renewals of term 1's lease: to 9 s, then to 108 s (the forgotten round's ack
        // renewed nothing).
        let renewals: Vec<(Token, LocalTime)> = out
            .facts()
            .iter()
            .filter_map(|f| match *f {
                Fact::Renewed { token, until } => Some((token, until)),
                _ => None,
            })
            .collect();
        assert_eq!(renewals, [(1, at(9 * S)), (1, at(108 * S))]);
    }

    /// Calls `f` on `r` with its clocks reading `t`; the actions it gave.
    fn call(
        r: &mut Replica,
        t: i64,
        f: impl FnOnce(&mut Replica, &mut Cx, &mut Out<Message>),
    ) -> Vec<Action<Message>> {
        let node = r.core.node;
        crate::strategy::call_for_test(r, node, ROLES, at(t), f)
            .take()
            .0
    }

    fn ack(index: u64, round: u64) -> Message {
        let (term, success) = (1, true);
        Message::AppendAck(AppendAck {
            term,
            success,
            index,
            round,
        })
    }

    /// A follower stores the writer an entry names, not the leader that relays it: r1's write of
    /// term 1, relayed by r3 leading term 2, is still r1's (it is r1's client that wrote it, and
    /// the oracle, the traces and the write gap name r1 when it commits).
    #[test]
    fn a_relayed_entry_keeps_its_writer() {
        let mut b = replica(1);
        let relayed = Message::Append(Append {
            term: 2,
            prev_index: 0,
            prev_term: 0,
            entry: Some(Entry {
                term: 1,
                writer: Some(0),
                key: 3,
                value: 7,
            }),
            commit: 0,
            round: 1,
        });
        call(&mut b, S, |b, cx, out| b.on_message(cx, 2, relayed, out));
        let stored = b.core.log.entry(1).expect("stored at index 1");
        assert_eq!(
            (stored.term, stored.writer, stored.key, stored.value),
            (1, Some(0), 3, 7)
        );
    }

    /// A leader that compacted what a silent follower lacks sends it a snapshot when it
    /// speaks again; the follower takes it, and appends go on from the entry after it.
    /// The entries (by index) of the appends to `to` among `fx`.
    fn entries_to(fx: &[Action<Message>], to: NodeId) -> Vec<u64> {
        fx.iter()
            .filter_map(|a| match a {
                Action::Send {
                    to: t,
                    msg: Message::Append(m),
                } if *t == to => m.entry.map(|_| m.prev_index + 1),
                _ => None,
            })
            .collect()
    }

    /// Replicating, each entry goes once: writes 2, 3 and 4 each go to r1 as they arrive, and
    /// r1's acknowledgement of 2 sends nothing (3 and 4 are on their way; resending 3 on every
    /// acknowledgement while r1 lacked it made appends multiply with the read rate). A
    /// rejection sends r1 back to what it stores and reopens a window full of lost appends.
    #[test]
    fn a_replicating_follower_gets_each_entry_once_and_a_rejection_moves_back() {
        let mut a = elected();
        let fx = call(&mut a, S, |a, cx, out| {
            for value in 2..=4 {
                a.on_request(cx, Request::Write { key: 7, value }, 1, out);
            }
        });
        assert_eq!(entries_to(&fx, 1), [2, 3, 4]);
        let fx = call(&mut a, S, |a, cx, out| a.on_message(cx, 1, ack(2, 1), out));
        assert_eq!(entries_to(&fx, 1), Vec::<u64>::new());
        // Fill the window with appends that will never be answered (a partition).
        for value in 5..(5 + u64::from(MAX_INFLIGHT)) {
            call(&mut a, S, |a, cx, out| {
                a.on_request(cx, Request::Write { key: 7, value }, 1, out)
            });
        }
        assert_eq!(a.core.peers[0].ext.inflight.total, MAX_INFLIGHT);
        // r1 rejects an append after 4 (it stores 4): the leader sends 5 at once.
        let reject = Message::AppendAck(AppendAck {
            term: 1,
            success: false,
            index: 4,
            round: 1,
        });
        let fx = call(&mut a, S, |a, cx, out| a.on_message(cx, 1, reject, out));
        assert_eq!(entries_to(&fx, 1), [5]);
    }

    /// TiKV's proposal lease (`ProposalQuorum`): an entry's commit renews the lease from the
    /// time the leader proposed it, not from the commit; an acknowledgement that commits
    /// nothing new renews nothing, heartbeats included.
    #[test]
    fn a_committed_proposal_renews_the_lease_from_its_proposal_time() {
        let mut a = elected_from(replica_with(0, |c| c.lease_rule = RaftRule::ProposalQuorum));
        // The empty entry, proposed at 0, committed at 0: the lease runs to 0 + 9 s.
        assert_eq!(a.lease_until, Some(at(9 * S)));
        // A write proposed at 2 s (index 2), then the heartbeat round 2 at 3 s.
        call(&mut a, 2 * S, |a, cx, out| {
            a.on_request(cx, Request::Write { key: 7, value: 1 }, 1, out)
        });
        call(&mut a, 3 * S, |a, cx, out| a.heartbeat_round(cx, out));
        // At 4 s node 1 answers round 2 storing only index 1: nothing new commits, and a
        // heartbeat round does not renew a proposal lease.
        call(&mut a, 4 * S, |a, cx, out| {
            a.on_message(cx, 1, ack(1, 2), out)
        });
        assert_eq!((a.core.commit(), a.lease_until), (1, Some(at(9 * S))));
        // At 5 s it stores index 2: the write commits, the lease runs to its proposal at 2 s
        // + 9 s = 11 s (from the commit it would be 14 s).
        call(&mut a, 5 * S, |a, cx, out| {
            a.on_message(cx, 1, ack(2, 2), out)
        });
        assert_eq!((a.core.commit(), a.lease_until), (2, Some(at(11 * S))));
        // Under the heartbeat rule the same acknowledgements renew from round 2's send at 3 s.
        let mut h = elected();
        call(&mut h, 2 * S, |a, cx, out| {
            a.on_request(cx, Request::Write { key: 7, value: 1 }, 1, out)
        });
        call(&mut h, 3 * S, |a, cx, out| a.heartbeat_round(cx, out));
        call(&mut h, 4 * S, |a, cx, out| {
            a.on_message(cx, 1, ack(1, 2), out)
        });
        assert_eq!(h.lease_until, Some(at(12 * S)));
    }

    #[test]
    fn a_follower_behind_the_compacted_log_gets_a_snapshot_then_appends() {
        let mut a = replica(0);
        a.core.set_retain(4);
        // Elected at 0 (round 1 carries the empty entry, index 1); r1 stores it: committed.
        let mut a = elected_from(a);
        assert_eq!(a.core.commit(), 1);
        // Ten writes, indices 2 to 11, each stored by r1 at once and committed; r2 is silent.
        // The leader keeps the last 4 committed entries: its base is the commit index - 4.
        for index in 2..=11 {
            call(&mut a, S, |a, cx, out| {
                let write = Request::Write {
                    key: 7,
                    value: index,
                };
                a.on_request(cx, write, 1, out);
                a.on_message(cx, 1, ack(index, 1), out);
            });
            assert_eq!(
                (a.core.commit(), a.core.log.base()),
                (index, index.saturating_sub(4))
            );
        }
        // Round 2: r2 still waits for index 1, compacted away: it gets the committed prefix,
        // up to 11 (term 1), with the state the 10 writes leave: key 7 holds the last, 11.
        let fx = call(&mut a, 2 * S, |a, cx, out| a.on_timer(cx, HEARTBEAT, out));
        let mut state = Store::default();
        state.put(7, 11);
        let snapshot = Snapshot {
            term: 1,
            index: 11,
            last_term: 1,
            state,
            round: 2,
        };
        let to_r2 = Action::Send {
            to: 2,
            msg: Message::Snapshot(snapshot.clone()),
        };
        assert!(fx.contains(&to_r2), "{fx:?}");
        // r2, with nothing, takes it: all 11 committed, and it says it matches up to 11.
        let mut b = replica(2);
        let fx = call(&mut b, 2 * S, |b, cx, out| {
            b.on_message(cx, 0, Message::Snapshot(snapshot), out);
        });
        assert!(fx.contains(&Action::Send {
            to: 0,
            msg: ack(11, 2)
        }));
        assert_eq!((b.core.commit(), b.core.applied().get(7)), (11, 11));
        assert_eq!((b.core.log.base(), b.core.last_index()), (11, 11));
        // The leader goes on from index 12: the next write reaches r2 as an append after 11.
        let fx = call(&mut a, 2 * S, |a, cx, out| {
            a.on_message(cx, 2, ack(11, 2), out);
            a.on_request(cx, Request::Write { key: 8, value: 1 }, 1, out);
        });
        let append = fx.iter().find_map(|e| match *e {
            Action::Send {
                to: 2,
                msg: Message::Append(m),
            } => Some(m),
            _ => None,
        });
        let append = append.expect("an append to r2");
        assert_eq!((append.prev_index, append.prev_term), (11, 1));
        let fx = call(&mut b, 2 * S, |b, cx, out| {
            b.on_message(cx, 0, Message::Append(append), out);
        });
        assert!(fx.contains(&Action::Send {
            to: 0,
            msg: ack(12, 2)
        }));
    }

    /// Appends in flight to one follower, by round: sent, acknowledged, and forgotten as lost
    /// when their round's slot comes round again.
    #[test]
    fn appends_in_flight_are_counted_until_acknowledged_or_forgotten() {
        let mut f = Inflight::default();
        f.sent(1);
        f.sent(1);
        f.sent(2);
        assert_eq!(f.total, 3);
        // Two acknowledgements of round 1, in round 2; a third finds nothing of round 1 left.
        f.acked(1, 2);
        f.acked(1, 2);
        f.acked(1, 2);
        assert_eq!(f.total, 1);
        // Round 65 reuses round 1's slot (65 % 64 = 1), empty; round 66 forgets round 2's.
        f.begin(65);
        assert_eq!(f.total, 1);
        f.begin(66);
        assert_eq!(f.total, 0);
        // Sent in round 70; an acknowledgement of round 6 (same slot, 64 rounds older) is not
        // taken for it.
        f.begin(70);
        f.sent(70);
        f.acked(6, 70);
        assert_eq!(f.total, 1);
        f.acked(70, 71);
        assert_eq!(f.total, 0);
    }

    /// Node 0 of three, elected at 0 with node 1's vote; node 1 stores the empty entry (index
    /// 1), so it commits and the lease runs to 9 s.
    fn elected() -> Replica {
        elected_from(replica(0))
    }

    /// [`elected`] from the replica `a` (node 0).
    fn elected_from(mut a: Replica) -> Replica {
        let vote = Message::Vote {
            term: 1,
            granted: true,
            pre: false,
        };
        call(&mut a, 0, |a, cx, out| {
            a.campaign(cx, false, out);
            a.on_message(cx, 1, vote, out);
            a.on_message(cx, 1, ack(1, 1), out);
        });
        assert!(a.serving);
        a
    }

    #[test]
    fn a_follower_refuses_whatever_the_time_unless_it_forwards_reads() {
        let read = Request::Read { key: 0 };
        assert!(replica(1).refuses_whatever_the_time(read));
        assert!(!elected().refuses_whatever_the_time(read));
        // A follower that serves follower reads and knows its leader takes a read to forward,
        // not a write.
        let mut f = replica_with(1, |c| c.follower_reads = true);
        f.core.leader = Some(0);
        assert!(!f.refuses_whatever_the_time(read));
        assert!(f.refuses_whatever_the_time(Request::Write { key: 0, value: 1 }));
    }

    fn timeout_now(fx: &[Action<Message>]) -> usize {
        let is = |e: &&Action<Message>| {
            matches!(
                e,
                Action::Send {
                    msg: Message::TimeoutNow { .. },
                    ..
                }
            )
        };
        fx.iter().filter(is).count()
    }

    /// A leader whose log leads the target's sends TimeoutNow only when an acknowledgement
    /// shows the target stores its whole log, once; it takes no write until the transfer is
    /// abandoned an election timeout (10 s) after it began.
    #[test]
    fn a_transfer_waits_for_the_target_and_drops_writes_meanwhile() {
        let mut a = elected();
        let write = Request::Write { key: 7, value: 1 };
        // A write at 1 s: index 2, sent to node 1 (caught up); no acknowledgement yet.
        call(&mut a, S, |a, cx, out| a.on_request(cx, write, 1, out));
        assert_eq!(a.core.last_index(), 2);
        // The transfer to node 1 at 1 s: it stores 1 of 2, so no TimeoutNow.
        let fx = call(&mut a, S, |a, cx, out| {
            a.on_command(cx, Command::TransferLeader { to: 1 }, out)
        });
        assert_eq!(timeout_now(&fx), 0, "{fx:?}");
        call(&mut a, S, |a, cx, _| assert_eq!(a.check(cx, write), None));
        // Node 1 acknowledges index 2: TimeoutNow now; a second acknowledgement of it sends none.
        let fx = call(&mut a, S + S / 2, |a, cx, out| {
            a.on_message(cx, 1, ack(2, 1), out)
        });
        assert_eq!(timeout_now(&fx), 1, "{fx:?}");
        let fx = call(&mut a, S + S / 2, |a, cx, out| {
            a.on_message(cx, 1, ack(2, 1), out)
        });
        assert_eq!(timeout_now(&fx), 0, "{fx:?}");
        // Abandoned at 11 s (the timer set at 1 s): writes admitted again.
        call(&mut a, 11 * S, |a, cx, out| a.on_timer(cx, TRANSFER, out));
        call(&mut a, 11 * S, |a, cx, _| {
            assert_eq!(a.check(cx, write), Some(1))
        });
    }

    /// The election timer set for `ns`.
    fn election_timer(ns: i64) -> Action<Message> {
        Action::SetTimer {
            timer: raft_core::ELECTION,
            clock: ClockKind::Monotonic,
            at: at(ns),
        }
    }

    /// A vote of `term` refused to `to`.
    fn refused_vote(to: NodeId, term: u64) -> Action<Message> {
        let msg = Message::Vote {
            term,
            granted: false,
            pre: false,
        };
        Action::Send { to, msg }
    }

    /// A leader deposed by a transfer's campaign it refuses (the candidate's log is shorter)
    /// arms its election timer: 10 s (no jitter) after the request, at 12 s.
    #[test]
    fn a_leader_deposed_by_a_vote_it_refuses_arms_its_election_timer() {
        let mut a = elected();
        call(&mut a, S, |a, cx, out| {
            a.on_request(cx, Request::Write { key: 7, value: 1 }, 1, out)
        });
        let request = Message::RequestVote(RequestVote {
            term: 2,
            last_index: 1,
            last_term: 1,
            transfer: true,
            pre: false,
        });
        let fx = call(&mut a, 2 * S, |a, cx, out| {
            a.on_message(cx, 2, request, out)
        });
        assert_eq!((a.core.state, a.core.term), (State::Follower, 2));
        assert!(fx.contains(&election_timer(12 * S)), "{fx:?}");
        assert!(fx.contains(&refused_vote(2, 2)), "{fx:?}");
    }

    /// A follower moved to a higher term by a campaign it refuses (the candidate's log is
    /// shorter) restarts its election timer all the same, as etcd-io/raft's `becomeFollower`
    /// resets it: armed at 0 (timeout 10 s, no jitter), asked at 3 s, it now runs out at 13 s,
    /// not 10 s. A request of its own, lower term afterwards is ignored: no answer, no timer.
    #[test]
    fn a_follower_moved_to_a_higher_term_restarts_its_timer_even_when_it_refuses() {
        let mut b = replica(1);
        call(&mut b, 0, |b, cx, out| b.on_start(cx, out));
        call(&mut b, S, |b, _, _| {
            b.core.log.push(raft_core::Entry {
                term: 1,
                ..Default::default()
            });
            b.core.term = 1;
        });
        let ask = |term| {
            Message::RequestVote(RequestVote {
                term,
                last_index: 0,
                last_term: 0,
                transfer: false,
                pre: false,
            })
        };
        let fx = call(&mut b, 3 * S, |b, cx, out| b.on_message(cx, 2, ask(2), out));
        assert_eq!((b.core.term, b.core.voted_for), (2, None));
        // The new term is written before the refusal leaves (persist, then send).
        let persist = Action::Persist { wait: true };
        assert_eq!(fx, [refused_vote(2, 2), election_timer(13 * S), persist]);
        let fx = call(&mut b, 4 * S, |b, cx, out| b.on_message(cx, 0, ask(1), out));
        assert_eq!(fx, []);
    }

    /// A transfer restarts the count that times the CheckQuorum round, as etcd-io/raft resets
    /// `electionElapsed` on `MsgTransferLeader`: elected at 0 with check_quorum, its check is
    /// due at 10 s; a transfer at 4 s moves it to 14 s, with the transfer's own end.
    #[test]
    fn a_transfer_restarts_the_check_quorum_count() {
        let a = replica_with(0, |c| c.check_quorum = true);
        let mut a = elected_from(a);
        let fx = call(&mut a, 4 * S, |a, cx, out| {
            a.on_command(cx, Command::TransferLeader { to: 2 }, out)
        });
        let timer = |timer| Action::SetTimer {
            timer,
            clock: ClockKind::Monotonic,
            at: at(14 * S),
        };
        assert!(fx.contains(&timer(CHECK_QUORUM)), "{fx:?}");
        assert!(fx.contains(&timer(TRANSFER)), "{fx:?}");
    }

    /// A lease a transfer made suspect is trusted again only when a majority acknowledges a
    /// round sent after the transfer was abandoned, not when the transfer's timer runs out.
    /// Rounds: 1 at 0, then k + 1 at k s; the transfer to node 2 (which never answers) begins at
    /// 0.5 s and is abandoned at 10.5 s, after round 11 (10 s) went out.
    #[test]
    fn a_suspect_lease_waits_for_a_round_sent_after_the_transfer_ended() {
        let mut a = elected();
        let holds = |a: &mut Replica, t: i64| {
            let mut h = false;
            call(a, t, |a, cx, _| h = a.lease_holds(cx, LocalDur::ZERO));
            h
        };
        assert!(holds(&mut a, S / 2));
        call(&mut a, S / 2, |a, cx, out| {
            a.on_command(cx, Command::TransferLeader { to: 2 }, out)
        });
        assert!(!holds(&mut a, S / 2));
        assert_eq!(a.beliefs().read, Belief::None);
        for k in 1..=10 {
            call(&mut a, k * S, |a, cx, out| {
                a.on_timer(cx, HEARTBEAT, out);
                a.on_message(cx, 1, ack(1, a.round), out);
            });
            assert!(!holds(&mut a, k * S), "{k}");
        }
        call(&mut a, 10 * S + S / 2, |a, cx, out| {
            a.on_timer(cx, TRANSFER, out)
        });
        assert_eq!(a.suspect, Suspect::Ended { after: 11 });
        // Round 11 (sent at 10 s, before the end) acknowledged late: still suspect.
        call(&mut a, 10 * S + 600 * MS, |a, cx, out| {
            a.on_message(cx, 1, ack(1, 11), out)
        });
        assert!(!holds(&mut a, 10 * S + 600 * MS));
        // Round 12, sent at 11 s and acknowledged at 11.002 s: the lease holds, to 20 s.
        call(&mut a, 11 * S, |a, cx, out| a.on_timer(cx, HEARTBEAT, out));
        call(&mut a, 11 * S + 2 * MS, |a, cx, out| {
            a.on_message(cx, 1, ack(1, 12), out)
        });
        assert!(holds(&mut a, 11 * S + 2 * MS));
        assert_eq!(a.lease_until, Some(at(20 * S)));
    }

    /// The TRANSFER timers among `fx`.
    fn transfer_timers(fx: &[Action<Message>]) -> Vec<Action<Message>> {
        let is = |e: &&Action<Message>| {
            matches!(
                e,
                Action::SetTimer {
                    timer: TRANSFER,
                    ..
                } | Action::CancelTimer { timer: TRANSFER }
            )
        };
        fx.iter().filter(is).cloned().collect()
    }

    /// A transfer to the leader itself abandons the one under way at once, as etcd-io/raft's
    /// `TestLeaderTransferBack` (raft_test.go) has it: the leader leads on and takes writes
    /// again, with no wait for the transfer's timer. Node 2 has acknowledged nothing (it stores
    /// 0 of 1), so the transfer to it at 1 s sends no TimeoutNow and holds until 11 s; the
    /// transfer back at 2 s ends it then: writes admitted from 2 s, not from 11 s. With none
    /// under way, a transfer to itself does nothing at all.
    #[test]
    fn a_transfer_to_the_leader_itself_abandons_the_one_under_way() {
        let mut a = elected();
        let write = Request::Write { key: 7, value: 1 };
        let fx = call(&mut a, S / 2, |a, cx, out| {
            a.on_command(cx, Command::TransferLeader { to: 0 }, out)
        });
        assert!(fx.is_empty(), "{fx:?}");
        let fx = call(&mut a, S, |a, cx, out| {
            a.on_command(cx, Command::TransferLeader { to: 2 }, out)
        });
        assert_eq!(timeout_now(&fx), 0, "{fx:?}");
        let timer = Action::SetTimer {
            timer: TRANSFER,
            clock: ClockKind::Monotonic,
            at: at(11 * S),
        };
        assert_eq!(transfer_timers(&fx), [timer]);
        call(&mut a, 2 * S, |a, cx, _| {
            assert_eq!(a.check(cx, write), None)
        });
        // Back to itself at 2 s: abandoned, its timer cancelled, writes admitted at once; the
        // lease stays suspect until a round sent from now on (round 1 has gone out) renews it.
        let fx = call(&mut a, 2 * S, |a, cx, out| {
            a.on_command(cx, Command::TransferLeader { to: 0 }, out)
        });
        assert_eq!(timeout_now(&fx), 0, "{fx:?}");
        assert_eq!(
            transfer_timers(&fx),
            [Action::CancelTimer { timer: TRANSFER }]
        );
        assert_eq!((a.core.state, a.transfer), (State::Leader, None));
        assert_eq!(a.suspect, Suspect::Ended { after: 1 });
        call(&mut a, 2 * S, |a, cx, _| {
            assert_eq!(a.check(cx, write), Some(1))
        });
    }

    /// With a tick, a transfer is abandoned at the leader's tick that brings a count restarted
    /// at its start to the election timeout's ticks, as etcd-io/raft's `tickHeartbeat` (raft.go)
    /// and raft-rs's `tick_heartbeat` (src/raft.rs) count `electionElapsed`. Ticks of 1 s, an
    /// election timeout of 10 (10 s), the node started at 0.3 s: its ticks fall at 1.3 s, 2.3 s,
    /// and so on. A transfer at 1.5 s counts the ticks of 2.3 s, ..., 11.3 s: abandoned at the
    /// 10th, 11.3 s (9.8 s later, where the clock without ticks gives 11.5 s). One that begins
    /// on a tick, at 12.3 s, counts from the next: its 10th is 22.3 s, exactly 10 s later.
    #[test]
    fn with_a_tick_a_transfer_is_abandoned_at_the_leaders_tick() {
        let mut a = elected_from(replica_with(0, |c| c.tick = Some(LocalDur::from_secs(1))));
        a.core.election.start(at(300 * MS));
        let to_2 = Command::TransferLeader { to: 2 };
        let fx = call(&mut a, S + S / 2, |a, cx, out| a.on_command(cx, to_2, out));
        let timer = |t| Action::SetTimer {
            timer: TRANSFER,
            clock: ClockKind::Monotonic,
            at: at(t),
        };
        assert_eq!(transfer_timers(&fx), [timer(11 * S + 300 * MS)]);
        call(&mut a, 11 * S + 300 * MS, |a, cx, out| {
            a.on_timer(cx, TRANSFER, out)
        });
        assert_eq!(a.transfer, None);
        let fx = call(&mut a, 12 * S + 300 * MS, |a, cx, out| {
            a.on_command(cx, to_2, out)
        });
        assert_eq!(transfer_timers(&fx), [timer(22 * S + 300 * MS)]);
    }
}
