//! A member's Raft loop: elections (with pre-vote and check-quorum, as etcd runs etcd-io/raft),
//! the leader's appends, and commits. etcd's `raftNode` persists each `Ready` before it sends
//! (here, storing an entry and sending are one step), and the leader sends a follower the
//! entries it lacks, a batch at a time with one batch in flight, on each heartbeat (every
//! `heartbeat`) and at once when the follower acknowledges one or a new entry is appended.

use super::member::{Member, Peer, CHECK_QUORUM, HEARTBEAT};
use super::msg::{Append, Forwarded, Message, Snapshot};
use crate::clock::ClockKind;
use crate::msg::NodeId;
use crate::strategy::raft_core::{self, majority, Progress, State, VoteRequest};
use crate::strategy::{Cx, Out};

/// Entries one append carries at most.
const BATCH: usize = 64;

impl Member {
    /// The election timer ran out: a pre-campaign, then a campaign if a majority agrees.
    pub(super) fn election_timeout(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if self.core.pre_campaign(cx, out) {
            self.campaign(cx, out);
        }
    }

    pub(super) fn campaign(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if self.core.campaign(cx, false, out) {
            self.become_leader(cx, out);
        }
    }

    /// Leads its term: an empty entry of the term, the lessor promoted, a heartbeat round.
    fn become_leader(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        let term = self.core.term;
        self.core.log.push(raft_core::Entry {
            term,
            ..Default::default()
        });
        let peer = Peer {
            next: self.core.last_index(),
            awaiting: false,
            heard: false,
        };
        self.core.become_leader(cx, peer, out);
        self.promote(cx, out);
        let at = self.core.election.base_deadline(cx.mono);
        out.set_timer(CHECK_QUORUM, ClockKind::Monotonic, at);
        self.heartbeat_round(cx, out);
        self.advance_commit(cx, out);
    }

    /// Moves to `term` as a follower; a leader stops its rounds and its lessor is demoted.
    /// Returns whether it was leading (the caller arms the election timer).
    pub(super) fn become_follower(&mut self, term: u64, out: &mut Out<Message>) -> bool {
        let was_leader = self.core.become_follower(term);
        if was_leader {
            out.cancel_timer(HEARTBEAT);
            out.cancel_timer(CHECK_QUORUM);
            self.demote();
        }
        was_leader
    }

    /// An operator's `StepDown`: the leader steps down in its term and waits out its timer.
    pub(super) fn step_down(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if self.core.is_leader() {
            self.become_follower(self.core.term, out);
            self.core.election.arm(cx, out);
        }
    }

    pub(super) fn heartbeat_round(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        for i in 0..self.core.peers.len() {
            self.send_append(i, out);
        }
        out.set_timer(HEARTBEAT, ClockKind::Monotonic, cx.mono + self.c.heartbeat);
    }

    /// Sends follower `i` the entries after the one it is believed to match (none: a
    /// heartbeat), or a snapshot if that one is compacted away.
    fn send_append(&mut self, i: usize, out: &mut Out<Message>) {
        let Progress { node, ext, .. } = self.core.peers[i];
        let prev_index = ext.next - 1;
        let log = &self.core.log;
        let msg = match log.term(prev_index) {
            Some(prev_term) => Message::Append(Append {
                term: self.core.term,
                prev_index,
                prev_term,
                entries: log.after(prev_index).take(BATCH).copied().collect(),
                commit: self.core.commit(),
            }),
            None => Message::Snapshot(Box::new(Snapshot {
                term: self.core.term,
                snap: self.core.snapshot(),
                table: self.table.clone(),
            })),
        };
        let carries = !matches!(&msg, Message::Append(a) if a.entries.is_empty());
        self.core.peers[i].ext.awaiting |= carries;
        out.send(node, msg);
    }

    /// Appends `f` to the leader's log (dropped while the uncommitted tail is full: its client
    /// asks again), and sends it to every follower not waiting on a batch.
    pub(super) fn append(&mut self, cx: &mut Cx, f: Forwarded, out: &mut Out<Message>) {
        debug_assert!(self.core.is_leader());
        if self.core.tail_full() {
            return;
        }
        let entry = raft_core::Entry {
            term: self.core.term,
            ..f.entry
        };
        self.core.log.push(entry);
        let index = self.core.last_index();
        if let Some(origin) = f.origin {
            self.answers.insert(index, origin);
        }
        for i in 0..self.core.peers.len() {
            if !self.core.peers[i].ext.awaiting {
                self.send_append(i, out);
            }
        }
        self.advance_commit(cx, out);
    }

    /// Commits what a majority stores, if of this term, and applies it.
    fn advance_commit(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if self.core.commit_quorum(majority(cx), out) {
            self.apply_committed(cx, out);
        }
    }

    /// A message of term `term` from the leader `from`: a stale one is refused (the old leader
    /// learns of the newer term); else this member follows `from` and restarts its timer.
    fn hear_leader(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        term: u64,
        out: &mut Out<Message>,
    ) -> bool {
        if term < self.core.term {
            self.ack(from, false, self.core.last_index(), out);
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

    fn ack(&self, to: NodeId, success: bool, index: u64, out: &mut Out<Message>) {
        let term = self.core.term;
        out.send(
            to,
            Message::AppendAck {
                term,
                success,
                index,
            },
        );
    }

    pub(super) fn on_append(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        m: Append,
        out: &mut Out<Message>,
    ) {
        if !self.hear_leader(cx, from, m.term, out) {
            return;
        }
        if !self.core.log.agrees(m.prev_index, m.prev_term) {
            let index = self.core.last_index().min(m.prev_index.saturating_sub(1));
            self.ack(from, false, index, out);
            return;
        }
        let mut matched = m.prev_index;
        for e in m.entries {
            matched += 1;
            self.core.log.store(matched, e);
        }
        // Only what is known to match the leader's log may be committed.
        self.core.commit_to(m.commit.min(matched), out, false);
        self.apply_committed(cx, out);
        self.ack(from, true, matched, out);
    }

    /// The leader's committed prefix and the table applied through it.
    pub(super) fn on_snapshot(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        m: Snapshot,
        out: &mut Out<Message>,
    ) {
        if !self.hear_leader(cx, from, m.term, out) {
            return;
        }
        let index = m.snap.index;
        if self.core.install(m.snap) && index > self.applied {
            self.table = m.table;
            self.applied = index;
        }
        self.apply_committed(cx, out);
        let commit = self.core.commit();
        self.ack(from, true, commit, out);
    }

    pub(super) fn on_append_ack(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        (term, success, index): (u64, bool, u64),
        out: &mut Out<Message>,
    ) {
        if term > self.core.term {
            self.become_follower(term, out);
            self.core.election.arm(cx, out);
            return;
        }
        if !self.core.is_leader() || term < self.core.term {
            return;
        }
        let Some(i) = self.core.peer(from) else {
            return;
        };
        if success {
            self.core.matched(i, index);
        }
        let matched = self.core.peers[i].matched;
        let p = &mut self.core.peers[i].ext;
        p.heard = true;
        p.awaiting = false;
        p.next = match success {
            true => p.next.max(index + 1),
            // Back off towards the follower's log, never below what it is known to store.
            false => (index + 1).min(p.next - 1).max(matched + 1),
        };
        if p.next <= self.core.last_index() {
            self.send_append(i, out);
        }
        self.advance_commit(cx, out);
    }

    /// A vote request. With check-quorum (etcd-io/raft's `inLease`), a leader, or a follower
    /// that heard from its leader lately, ignores a campaign of a higher term.
    pub(super) fn on_request_vote(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        m: VoteRequest,
        out: &mut Out<Message>,
    ) {
        let sticky = self.core.in_lease(&m, cx.mono);
        let mut moved = false;
        if m.term > self.core.term {
            if sticky {
                return;
            }
            if !m.pre {
                self.become_follower(m.term, out);
                moved = true;
            }
        }
        let granted = self.core.answer_vote(cx, from, m, out);
        if moved && !granted {
            self.core.election.arm(cx, out);
        }
    }

    pub(super) fn on_vote(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        (term, granted, pre): (u64, bool, bool),
        out: &mut Out<Message>,
    ) {
        if term > self.core.term && !(pre && granted) {
            self.become_follower(term, out);
            self.core.election.arm(cx, out);
        } else if pre {
            if self.core.count_pre_vote(from, term, granted, majority(cx)) {
                self.campaign(cx, out);
            }
        } else if self.core.count_vote(from, term, granted, majority(cx)) {
            self.become_leader(cx, out);
        }
    }

    /// Check-quorum: a leader that did not hear from a majority (itself included) in the last
    /// election timeout steps down.
    pub(super) fn check_quorum(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if !self.core.is_leader() {
            return;
        }
        let heard = self.core.peers.iter().filter(|p| p.ext.heard).count() + 1;
        for p in &mut self.core.peers {
            p.ext.heard = false;
        }
        if heard < majority(cx) {
            self.become_follower(self.core.term, out);
            self.core.election.arm(cx, out);
            return;
        }
        let at = self.core.election.base_deadline(cx.mono);
        out.set_timer(CHECK_QUORUM, ClockKind::Monotonic, at);
    }
}
