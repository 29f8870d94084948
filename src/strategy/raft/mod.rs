//! `RaftLeaderLease`: the lease held by an elected Raft leader, as TiKV, etcd,
//! CockroachDB and Consul serve reads.
//!
//! Every node is a `Replica`. Elections follow Raft: a follower that hears nothing from a leader
//! for its election timeout (drawn anew each time from `[election_timeout, election_timeout +
//! election_jitter)` on its monotonic clock, from the node's own random stream) campaigns in the
//! next term; a majority of votes makes a leader. A follower that heard from the current leader
//! less than `election_timeout` ago (the base value) refuses to vote and keeps its term (leader
//! stickiness, what makes the lease safe). With a `tick`, as in raft-rs and etcd/raft, both
//! count ticks of the follower's clock instead: the count restarts when it hears from the
//! leader and rises at each tick, so a timeout of n ticks runs out between n - 1 and n ticks
//! after the last contact. The log replicates one entry per message; an entry
//! commits when a majority stores it and it is of the leader's term (older ones commit with it).
//!
//! The lease: the leader sends a heartbeat round every `heartbeat`; when a majority (itself
//! included) has acknowledged round r, sent at local time s_r, the lease runs to s_r + T on the
//! leader's monotonic clock (`HeartbeatQuorum`; `lease_start: OnAck` counts from the receipt of
//! the acknowledgement that completed the majority instead: the bug). `CheckQuorumOnly` is etcd's
//! `ReadOnlyLeaseBased`: no clock lease, the leader serves lease reads until its check-quorum
//! tick finds no majority heard from. A new leader serves nothing before its first entry (empty,
//! of its term) commits, and its lease starts no earlier.
//!
//! Authorities: write authority (shared: Raft's log makes two believing leaders
//! harmless, only one can commit) while a node is leader; read authority (exclusive) while its
//! lease holds, for `reads: Lease` and the local part of `LeaseOrReadIndex`. Writes take effect
//! when committed ([`Effect::Committed`]), so a read by a deposed leader after its successor
//! committed is a stale read.

mod msg;
pub mod settings;

use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::strategy::{
    Authorities, Belief, Beliefs, Claim, Command, Cx, Effect, Key, LeaseParams, NodeLogic, Out,
    Protocol, Request, Stamp, TimerId,
};
use crate::time::{LocalDur, LocalTime};
pub use msg::{Append, AppendAck, Entry, Message, RequestVote};
pub use settings::{RaftLeaseStart, RaftReads, RaftRule};

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
}

/// `RaftLeaderLease` with its configuration.
#[derive(Clone, Debug)]
pub struct RaftLeaderLease {
    c: RaftConfig,
    description: String,
}

impl RaftLeaderLease {
    pub fn new(c: RaftConfig, description: String) -> RaftLeaderLease {
        RaftLeaderLease { c, description }
    }
}

/// What a replica keeps across a crash: Raft's persistent state.
#[derive(Clone, Debug, Default)]
pub struct Disk {
    term: u64,
    voted_for: Option<NodeId>,
    /// `log[i]` is the entry at index i + 1.
    log: Vec<Stored>,
}

/// An entry as a replica stores it: its term, and for a client write, the leader that accepted
/// it and the key it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stored {
    term: u64,
    writer: Option<NodeId>,
    key: Key,
}

const ELECTION: TimerId = 0;
const HEARTBEAT: TimerId = 1;
const CHECK_QUORUM: TimerId = 2;
/// A leadership transfer not done within an election timeout is abandoned.
const TRANSFER: TimerId = 3;

/// Send times of the last rounds, by `round % ROUNDS`: enough for acknowledgements to arrive
/// while far more rounds are sent than a round trip lasts.
const ROUNDS: usize = 64;

impl Protocol for RaftLeaderLease {
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

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        let replicas = scenario
            .nodes
            .iter()
            .filter(|n| n.role == Role::Replica)
            .count();
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
        if c.lease_rule == RaftRule::CheckQuorumOnly && !c.check_quorum {
            p.push(
                "strategy.check_quorum: CheckQuorumOnly leases need check_quorum (etcd refuses \
                 ReadOnlyLeaseBased without CheckQuorum: nothing would end the lease)"
                    .into(),
            );
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
        Replica {
            c: self.c,
            lease: params.lease,
            node,
            term: disk.term,
            voted_for: disk.voted_for,
            log: disk.log,
            state: State::Follower,
            leader: None,
            heard_leader_at: None,
            tick_origin: LocalTime::from_ns(0),
            commit: 0,
            writes_committed: 0,
            votes: Vec::new(),
            peers: Vec::new(),
            round: 0,
            round_sent: [LocalTime::from_ns(i64::MIN); ROUNDS],
            lease_until: None,
            lease_round: 0,
            serving: false,
            suspect: false,
            pending_reads: Vec::new(),
            read_round_open: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Follower,
    Candidate,
    Leader,
}

/// What the leader knows of one follower.
#[derive(Clone, Copy, Debug, Default)]
struct Peer {
    node: NodeId,
    /// The next index to send.
    next: u64,
    /// The highest index known to match.
    matched: u64,
    /// The highest heartbeat round it acknowledged.
    acked_round: u64,
    /// Heard from since the last check-quorum tick.
    heard: bool,
}

/// One Raft replica.
pub struct Replica {
    c: RaftConfig,
    lease: LocalDur,
    node: NodeId,
    term: u64,
    voted_for: Option<NodeId>,
    log: Vec<Stored>,
    state: State,
    leader: Option<NodeId>,
    /// When it last heard from the leader of its term (monotonic).
    heard_leader_at: Option<LocalTime>,
    /// With `tick`: the monotonic reading at start, from which the node's ticks fall every
    /// `tick`.
    tick_origin: LocalTime,
    commit: u64,
    /// Client writes among the first `commit` entries.
    writes_committed: u64,
    /// As candidate: who granted its vote (itself first). A set, not a count: the network may
    /// deliver a vote twice.
    votes: Vec<NodeId>,
    /// As leader: the other replicas.
    peers: Vec<Peer>,
    /// As leader: the current heartbeat round, and when each recent round was sent.
    round: u64,
    round_sent: [LocalTime; ROUNDS],
    /// As leader: the read lease's end on the monotonic clock (`HeartbeatQuorum`), and the
    /// round it was last extended by.
    lease_until: Option<LocalTime>,
    lease_round: u64,
    /// As leader: its first entry has committed, so it serves requests.
    serving: bool,
    /// As leader: a transfer is under way and the lease is suspect (no lease reads).
    suspect: bool,
    /// As leader: ReadIndex reads waiting for a round at or after the one recorded (in the
    /// order they arrived, so rounds are non-decreasing), each with its request's stamp.
    pending_reads: Vec<(u64, Stamp)>,
    /// A round has been started for the pending reads and not yet acknowledged.
    read_round_open: bool,
}

impl Replica {
    fn last_index(&self) -> u64 {
        self.log.len() as u64
    }

    fn term_at(&self, index: u64) -> u64 {
        if index == 0 {
            0
        } else {
            self.log[(index - 1) as usize].term
        }
    }

    fn cluster(cx: &Cx) -> usize {
        cx.peers(Role::Replica).count()
    }

    fn majority(cx: &Cx) -> usize {
        Self::cluster(cx) / 2 + 1
    }

    fn arm_election(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        use rand::RngExt;
        let at = match self.c.tick {
            None => {
                let jitter = self.c.election_jitter.ns();
                let extra = if jitter > 0 {
                    cx.rng.random_range(0..jitter)
                } else {
                    0
                };
                cx.mono + self.c.election_timeout + LocalDur::from_ns(extra)
            }
            Some(tick) => {
                // raft-rs and etcd/raft: the count restarts now and goes up at each tick; the
                // node campaigns at the tick that brings it to n, drawn from [ET, ET + jitter)
                // in ticks. The first tick is the next one after now, less than a tick away.
                let t = tick.ns();
                let jitter = self.c.election_jitter.ns() / t;
                let extra = if jitter > 0 {
                    cx.rng.random_range(0..jitter)
                } else {
                    0
                };
                let n = self.c.election_timeout.ns() / t + extra;
                LocalTime::from_ns(self.tick_at(cx.mono, tick) + (n - 1) * t)
            }
        };
        out.set_timer(ELECTION, ClockKind::Monotonic, at);
    }

    /// The reading of the node's first tick after `now` (ticks fall at the origin plus whole
    /// multiples of `tick`).
    fn tick_at(&self, now: LocalTime, tick: LocalDur) -> i64 {
        let since = (now - self.tick_origin).ns();
        self.tick_origin.ns() + (since.div_euclid(tick.ns()) + 1) * tick.ns()
    }

    /// Whether the node heard from its leader less than an election timeout ago: by its clock,
    /// or with `tick`, in ticks counted since (fewer than the timeout's).
    fn heard_leader_lately(&self, now: LocalTime) -> bool {
        let Some(h) = self.heard_leader_at else {
            return false;
        };
        match self.c.tick {
            None => now < h + self.c.election_timeout,
            Some(tick) => {
                let ticks = (self.tick_at(now, tick) - self.tick_at(h, tick)) / tick.ns();
                ticks < self.c.election_timeout.ns() / tick.ns()
            }
        }
    }

    /// Moves to `term` as a follower (a higher term seen, or stepping down).
    fn become_follower(&mut self, term: u64, out: &mut Out<Message>) {
        if term > self.term {
            self.term = term;
            self.voted_for = None;
        }
        if self.state == State::Leader {
            out.cancel_timer(HEARTBEAT);
            out.cancel_timer(CHECK_QUORUM);
            out.cancel_timer(TRANSFER);
        }
        self.state = State::Follower;
        self.leader = None;
        self.serving = false;
        self.suspect = false;
        self.lease_until = None;
        self.lease_round = 0;
        self.pending_reads.clear();
        self.read_round_open = false;
    }

    fn campaign(&mut self, cx: &mut Cx, transfer: bool, out: &mut Out<Message>) {
        if self.state == State::Leader {
            return;
        }
        self.term += 1;
        self.voted_for = Some(self.node);
        self.state = State::Candidate;
        self.leader = None;
        self.heard_leader_at = None;
        self.votes.clear();
        self.votes.push(self.node);
        self.arm_election(cx, out);
        let (last_index, last_term) = (self.last_index(), self.term_at(self.last_index()));
        for p in cx.peers(Role::Replica).filter(|&p| p != self.node) {
            out.send(
                p,
                Message::RequestVote(RequestVote {
                    term: self.term,
                    last_index,
                    last_term,
                    transfer,
                }),
            );
        }
        if self.votes.len() >= Self::majority(cx) {
            self.become_leader(cx, out);
        }
    }

    fn become_leader(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.state = State::Leader;
        self.leader = Some(self.node);
        out.cancel_timer(ELECTION);
        self.log.push(Stored {
            term: self.term,
            writer: None,
            key: 0,
        });
        let next = self.last_index();
        self.peers = cx
            .peers(Role::Replica)
            .filter(|&p| p != self.node)
            .map(|node| Peer {
                node,
                next,
                ..Peer::default()
            })
            .collect();
        self.serving = false;
        self.suspect = false;
        self.lease_until = None;
        self.lease_round = 0;
        out.push(Effect::Issued {
            token: self.term,
            to: self.node,
            until: cx.mono + self.c.election_timeout,
        });
        if self.c.check_quorum {
            out.set_timer(
                CHECK_QUORUM,
                ClockKind::Monotonic,
                cx.mono + self.c.election_timeout,
            );
        }
        self.heartbeat_round(cx, out);
        self.advance_commit(cx, out);
    }

    /// Starts a heartbeat round: every follower gets its next entry, or an empty append.
    fn heartbeat_round(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.round += 1;
        self.round_sent[self.round as usize % ROUNDS] = cx.mono;
        for i in 0..self.peers.len() {
            self.send_append(i, out);
        }
        out.set_timer(HEARTBEAT, ClockKind::Monotonic, cx.mono + self.c.heartbeat);
    }

    fn send_append(&self, i: usize, out: &mut Out<Message>) {
        let p = &self.peers[i];
        let prev_index = p.next - 1;
        let entry = (p.next <= self.last_index()).then(|| {
            let s = self.log[(p.next - 1) as usize];
            Entry {
                term: s.term,
                write: s.writer.is_some(),
                key: s.key,
            }
        });
        out.send(
            p.node,
            Message::Append(Append {
                term: self.term,
                prev_index,
                prev_term: self.term_at(prev_index),
                entry,
                commit: self.commit,
                round: self.round,
            }),
        );
    }

    /// Commits what a majority stores, if of this term; reports client writes as they commit.
    fn advance_commit(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        let mut matched: Vec<u64> = self.peers.iter().map(|p| p.matched).collect();
        matched.push(self.last_index());
        matched.sort_unstable_by(|a, b| b.cmp(a));
        let n = matched[Self::majority(cx) - 1];
        if n > self.commit && self.term_at(n) == self.term {
            self.commit_to(n, out, true);
            if !self.serving {
                self.serving = true;
                out.push(Effect::Holding {
                    token: self.term,
                    version: self.writes_committed,
                });
                self.update_lease(cx, out);
            }
        }
    }

    /// Moves the commit index to `n`; a leader reports each client write it commits.
    fn commit_to(&mut self, n: u64, out: &mut Out<Message>, report: bool) {
        let n = n.min(self.last_index());
        while self.commit < n {
            self.commit += 1;
            let s = self.log[(self.commit - 1) as usize];
            if let Some(writer) = s.writer {
                self.writes_committed += 1;
                if report {
                    out.push(Effect::Committed {
                        index: self.commit,
                        writer,
                        token: s.term,
                        key: s.key,
                    });
                }
            }
        }
    }

    /// The highest round a majority (the leader included) has acknowledged.
    fn quorum_round(&self, cx: &Cx) -> u64 {
        let mut rounds: Vec<u64> = self.peers.iter().map(|p| p.acked_round).collect();
        rounds.push(self.round);
        rounds.sort_unstable_by(|a, b| b.cmp(a));
        rounds[Self::majority(cx) - 1]
    }

    /// Extends the lease by the rounds a majority acknowledged, serves the ReadIndex reads they
    /// confirm, and re-arms the lease's end.
    fn update_lease(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if self.state != State::Leader || !self.serving {
            return;
        }
        let q = self.quorum_round(cx);
        // A round extends the lease once: when a majority has acknowledged it.
        if self.c.lease_rule == RaftRule::HeartbeatQuorum && q > self.lease_round {
            self.lease_round = q;
            let start = match self.c.lease_start {
                // A round older than the ones remembered (a majority answering more than ROUNDS
                // rounds late) has lost its send time: it extends nothing.
                RaftLeaseStart::OnSend => {
                    (self.round - q < ROUNDS as u64).then(|| self.round_sent[q as usize % ROUNDS])
                }
                RaftLeaseStart::OnAck => Some(cx.mono),
            };
            if let Some(start) = start {
                let until = start + self.lease;
                if self.lease_until.is_none_or(|u| until > u) {
                    self.lease_until = Some(until);
                }
            }
        }
        // ReadIndex: a read waits for a majority to acknowledge a round started after it
        // arrived; reads that arrived while a round was out wait for the next one.
        let ready = self.pending_reads.partition_point(|&(need, _)| need <= q);
        for (_, since) in self.pending_reads.drain(..ready) {
            out.push(Effect::ConfirmedRead {
                token: self.term,
                since,
            });
        }
        if self.read_round_open && q >= self.round {
            self.read_round_open = false;
            if !self.pending_reads.is_empty() {
                self.heartbeat_round(cx, out);
                self.read_round_open = true;
            }
        }
    }

    /// Whether a read may be served from local state now (the lease holds, by the configured
    /// rule, with `skew` to spare).
    fn lease_holds(&self, cx: &Cx, skew: LocalDur) -> bool {
        if self.state != State::Leader || !self.serving || self.suspect {
            return false;
        }
        match self.c.lease_rule {
            RaftRule::CheckQuorumOnly => true,
            RaftRule::HeartbeatQuorum => self.lease_until.is_some_and(|u| cx.mono + skew < u),
        }
    }

    fn on_append(&mut self, cx: &mut Cx, from: NodeId, m: Append, out: &mut Out<Message>) {
        if m.term < self.term {
            out.send(
                from,
                Message::AppendAck(AppendAck {
                    term: self.term,
                    success: false,
                    index: self.last_index(),
                    round: m.round,
                }),
            );
            return;
        }
        if m.term > self.term || self.state != State::Follower {
            self.become_follower(m.term, out);
        }
        self.leader = Some(from);
        self.heard_leader_at = Some(cx.mono);
        self.arm_election(cx, out);
        let ok = m.prev_index <= self.last_index() && self.term_at(m.prev_index) == m.prev_term;
        if !ok {
            out.send(
                from,
                Message::AppendAck(AppendAck {
                    term: self.term,
                    success: false,
                    index: self.last_index().min(m.prev_index.saturating_sub(1)),
                    round: m.round,
                }),
            );
            return;
        }
        let mut matched = m.prev_index;
        if let Some(e) = m.entry {
            let at = m.prev_index + 1;
            if at <= self.last_index() && self.term_at(at) != e.term {
                self.log.truncate((at - 1) as usize);
            }
            if at > self.last_index() {
                self.log.push(Stored {
                    term: e.term,
                    writer: e.write.then_some(from),
                    key: e.key,
                });
            }
            matched = at;
        }
        // Only what is known to match the leader's log may be committed.
        self.commit_to(m.commit.min(matched), out, false);
        out.send(
            from,
            Message::AppendAck(AppendAck {
                term: self.term,
                success: true,
                index: matched,
                round: m.round,
            }),
        );
    }

    fn on_append_ack(&mut self, cx: &mut Cx, from: NodeId, m: AppendAck, out: &mut Out<Message>) {
        if m.term > self.term {
            self.become_follower(m.term, out);
            self.arm_election(cx, out);
            return;
        }
        if self.state != State::Leader || m.term < self.term {
            return;
        }
        let Some(i) = self.peers.iter().position(|p| p.node == from) else {
            return;
        };
        let last = self.last_index();
        let p = &mut self.peers[i];
        p.heard = true;
        if m.success {
            p.matched = p.matched.max(m.index);
            p.next = p.next.max(m.index + 1);
            p.acked_round = p.acked_round.max(m.round);
        } else {
            p.next = (m.index + 1).min(p.next.saturating_sub(1)).max(1);
        }
        let more = p.next <= last;
        if more {
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
        // Stickiness: a follower that heard from its leader lately ignores the campaign (and
        // keeps its term), unless a leadership transfer started it.
        let sticky = !m.transfer
            && self.state == State::Follower
            && self.leader.is_some()
            && self.heard_leader_lately(cx.mono);
        let leading = self.state == State::Leader && !m.transfer;
        if m.term > self.term && (sticky || leading) {
            return;
        }
        if m.term > self.term {
            self.become_follower(m.term, out);
        }
        let up_to_date =
            (m.last_term, m.last_index) >= (self.term_at(self.last_index()), self.last_index());
        let granted = m.term == self.term
            && up_to_date
            && self.voted_for.is_none_or(|v| v == from)
            && self.state == State::Follower;
        if granted {
            self.voted_for = Some(from);
            self.arm_election(cx, out);
        }
        out.send(
            from,
            Message::Vote {
                term: self.term,
                granted,
            },
        );
    }
}

impl NodeLogic for Replica {
    type Msg = Message;
    type Disk = Disk;

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.tick_origin = cx.mono;
        if Self::cluster(cx) == 1 {
            self.campaign(cx, false, out);
        } else {
            self.arm_election(cx, out);
        }
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match msg {
            Message::RequestVote(m) => self.on_request_vote(cx, from, m, out),
            Message::Vote { term, granted } => {
                if term > self.term {
                    self.become_follower(term, out);
                    self.arm_election(cx, out);
                } else if self.state == State::Candidate && term == self.term && granted {
                    if !self.votes.contains(&from) {
                        self.votes.push(from);
                    }
                    if self.votes.len() >= Self::majority(cx) {
                        self.become_leader(cx, out);
                    }
                }
            }
            Message::Append(m) => self.on_append(cx, from, m, out),
            Message::AppendAck(m) => self.on_append_ack(cx, from, m, out),
            Message::TimeoutNow { term } => {
                if term == self.term && self.state == State::Follower {
                    self.campaign(cx, true, out);
                }
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            ELECTION => self.campaign(cx, false, out),
            HEARTBEAT => self.heartbeat_round(cx, out),
            CHECK_QUORUM => {
                let heard = 1 + self.peers.iter().filter(|p| p.heard).count();
                if heard < Self::majority(cx) {
                    self.become_follower(self.term, out);
                    self.arm_election(cx, out);
                } else {
                    for p in &mut self.peers {
                        p.heard = false;
                    }
                    out.set_timer(
                        CHECK_QUORUM,
                        ClockKind::Monotonic,
                        cx.mono + self.c.election_timeout,
                    );
                }
            }
            TRANSFER => self.suspect = false,
            _ => {}
        }
    }

    fn on_command(&mut self, cx: &mut Cx, command: Command, out: &mut Out<Message>) {
        if self.state != State::Leader {
            return;
        }
        match command {
            Command::StepDown => {
                self.become_follower(self.term, out);
                self.arm_election(cx, out);
            }
            Command::TransferLeader { to } if to != self.node => {
                // TiKV marks the lease suspect first: no lease reads until the transfer is over.
                self.suspect = self.c.transfer_suspect;
                out.send(to, Message::TimeoutNow { term: self.term });
                out.set_timer(
                    TRANSFER,
                    ClockKind::Monotonic,
                    cx.mono + self.c.election_timeout,
                );
            }
            _ => {}
        }
    }

    fn check(&self, cx: &Cx, request: Request) -> Option<Token> {
        if self.state != State::Leader || !self.serving {
            return None;
        }
        match request {
            Request::Write { .. } => Some(self.term),
            _ => match self.c.reads {
                RaftReads::Lease => self.lease_holds(cx, LocalDur::ZERO).then_some(self.term),
                RaftReads::ReadIndex | RaftReads::LeaseOrReadIndex => Some(self.term),
            },
        }
    }

    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<Message>) {
        if self.state != State::Leader || token != self.term {
            return; // deposed between the check and now: the client times out
        }
        match request {
            Request::Write { key } => {
                self.log.push(Stored {
                    term: self.term,
                    writer: Some(self.node),
                    key,
                });
                // No `WriteSent`: the write takes effect only when it commits
                // (`Effect::Committed`); a deposed leader's appends never do.
                let index = self.last_index();
                for i in 0..self.peers.len() {
                    if self.peers[i].next == index {
                        self.send_append(i, out);
                    }
                }
                self.advance_commit(cx, out);
            }
            _ => {
                let local = match self.c.reads {
                    RaftReads::Lease => true,
                    RaftReads::ReadIndex => false,
                    RaftReads::LeaseOrReadIndex => self.lease_holds(cx, self.c.max_clock_skew),
                };
                if local {
                    out.push(Effect::Read { token });
                } else {
                    // ReadIndex: confirm leadership with a round started after the read
                    // arrived: now, or when the round already out is acknowledged.
                    self.pending_reads.push((self.round + 1, cx.stamp));
                    if !self.read_round_open {
                        self.heartbeat_round(cx, out);
                        self.read_round_open = true;
                        self.update_lease(cx, out);
                    }
                }
            }
        }
    }

    fn beliefs(&self) -> Beliefs {
        if self.state != State::Leader {
            return Beliefs::NONE;
        }
        let write = Belief::Bool { token: self.term };
        let read = if !self.serving || self.suspect {
            Belief::None
        } else {
            match (self.c.reads, self.c.lease_rule) {
                (RaftReads::ReadIndex, _) => Belief::None,
                (_, RaftRule::CheckQuorumOnly) => Belief::Bool { token: self.term },
                (reads, RaftRule::HeartbeatQuorum) => match self.lease_until {
                    Some(u) => Belief::Until {
                        token: self.term,
                        clock: ClockKind::Monotonic,
                        deadline: if reads == RaftReads::LeaseOrReadIndex {
                            u - self.c.max_clock_skew
                        } else {
                            u
                        },
                    },
                    None => Belief::None,
                },
            }
        };
        Beliefs { write, read }
    }

    fn into_disk(self) -> Disk {
        Disk {
            term: self.term,
            voted_for: self.voted_for,
            log: self.log,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{self, Component};
    use crate::scenario::GrantorRestart;

    const S: i64 = 1_000_000_000;

    fn at(s: i64) -> LocalTime {
        LocalTime::from_ns(s)
    }

    /// An ack of a round older than the remembered send times extends nothing; a recent one
    /// extends the lease to its round's send time + T.
    #[test]
    fn an_ack_of_a_forgotten_round_extends_no_lease() {
        let c = RaftConfig {
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
        };
        let params = LeaseParams {
            lease: LocalDur::from_secs(9),
            renew_every: LocalDur::from_secs(3),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
        };
        let p = RaftLeaderLease::new(c, String::new());
        let mut r = p.node_logic(0, Role::Replica, &params, Disk::default());
        let roles = [Role::Replica; 3];
        let mut rng = rng::stream(0, Component::Node, 0);
        let mut run_token = 0;
        let mut cx = Cx {
            node: 0,
            roles: &roles,
            mono: at(0),
            wall: at(0),
            tt: crate::strategy::TtNow::exact(at(0)),
            restarted: false,
            incarnation: 0,
            duplicate: false,
            rng: &mut rng,
            run_token: &mut run_token,
            stamp: crate::strategy::Stamp::new(crate::time::SimTime::ZERO, 0, 0),
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
            },
            &mut out,
        );
        assert_eq!(r.state, State::Leader);
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
    }
}
