//! What the engine does with what a call into node logic gives (`after_call`): its actions
//! (sends go to the network, timers to the node's slots) and its facts (grants, reads and writes
//! go to the oracle and the harm ledger, and what happened to an attached observer), in the
//! order they were given.

use super::stats::{FirstHarm, HarmAct};
use super::{Ev, Sim, GRANT_ORDER_CAP};
use crate::msg::{Key, NodeId, Token, Value};
use crate::strategy::{
    Action, Beliefs, Fact, MsgOf, NodeLogic, Protocol, ProtocolMessage, Request,
};
use crate::trace::history::{HistoryEvent, Refused};
use crate::trace::tally::Countable;
use crate::trace::{DropReason, Readings, TraceEvent, TraceKind};

impl<P: Protocol> Sim<'_, P> {
    /// Node `n` served read `op` of `key`, admitted under `token`, with `value`; `taken_now`:
    /// in the call that took it up (else it was kept for later). The history judges whether it
    /// is stale; its token, when it was taken up, whether it is a zombie action.
    #[inline]
    pub(super) fn served_read(
        &mut self,
        n: NodeId,
        token: Token,
        (op, key, value): (u64, Key, Value),
        taken_now: bool,
    ) {
        self.stats.read_gap.event(self.now);
        let verdict = self.harm.read(n, (op, key), token, value, taken_now);
        let (zombie, stale) = (verdict.zombie, verdict.stale);
        self.failovers.read(self.harm.rank(n, token), self.now);
        let act = self.harm_act(n, token, n, false);
        if zombie {
            FirstHarm::note(&mut self.stats.first_harm.zombie, act);
        }
        if stale {
            FirstHarm::note(&mut self.stats.first_harm.stale_read, act);
        }
        if let Some((tally, after)) = self.read_tally.as_mut() {
            if op > *after && !zombie && !stale && !verdict.first_sight {
                tally.count(self.now, n);
                return;
            }
        }
        self.tell(HistoryEvent::ReadAnswered {
            op,
            value,
            tick: self.harm.last_tick(),
            at: self.now,
            stale,
        });
        if self.observer.is_some() {
            let kind = TraceKind::Read {
                token,
                zombie,
                stale,
            };
            self.emit(n, kind);
            if self.read_tally.is_none() && self.history_wanted {
                let after = self.harm.last_tick();
                let o = self.observer.as_mut().expect("an observer");
                self.read_tally = o.as_counts(Countable::PlainReads).map(|t| (t, after));
            }
        }
    }

    /// A harmful act by `actor` under `token`, judged at `place`, now.
    fn harm_act(&self, actor: NodeId, token: Token, place: NodeId, write: bool) -> HarmAct {
        HarmAct {
            at: self.now,
            actor,
            token,
            place,
            write,
        }
    }

    /// Carries out what a call into node `n`'s logic gave, in the order it was given, and
    /// tells the oracle what changed.
    pub(super) fn after_call(&mut self, n: NodeId) {
        let beliefs = self.nodes[n].logic.as_ref().expect("node is up").beliefs();
        // Most calls (a request checked) ask for nothing; most of the rest (a read served)
        // report one fact, noted without draining the buffers (on a node without a disk: one
        // with a disk may hold its messages, below, whatever the call gave).
        let only_fact = match self.nodes[n].disk_model {
            None => self.out.take_only_fact(),
            Some(_) => None,
        };
        if let Some(fact) = only_fact {
            self.note(n, fact.with_clock());
        } else if !self.out.is_empty() {
            // On a node with a disk, a call that persists writes to it; one that waits holds
            // its messages until the write is durable, and so does every call its loop makes
            // meanwhile (those it handles at once on going on): no message leaves before the
            // writes its loop made before it (an acknowledgement of entries only appended).
            let (persist, after_writes) = match self.nodes[n].disk_model {
                Some(_) => (
                    writes_of(self.out.actions()),
                    self.nodes[n].disk_waits[self.call_thread as usize] > 0,
                ),
                None => (None, false),
            };
            if persist == Some(true) || after_writes {
                self.held_sends = Some(Vec::new());
            }
            let mut out = std::mem::take(&mut self.out);
            let (facts, mut actions) = out.drain();
            let mut done = 0;
            for (after, fact) in facts {
                for action in actions.by_ref().take(after - done) {
                    self.carry_out(n, action);
                }
                done = after;
                self.note(n, fact.with_clock());
            }
            for action in actions {
                self.carry_out(n, action);
            }
            self.out = out;
            let sends = self.held_sends.take().unwrap_or_default();
            match persist {
                Some(wait) => self.write_disk(n, wait.then_some(self.call_thread), sends),
                None if after_writes => self.hold_for_disk(n, sends),
                None => debug_assert!(sends.is_empty(), "nothing held"),
            }
        }
        if cfg!(debug_assertions) {
            let before = self.oracle.beliefs(n);
            let claims = self.protocol.authorities();
            self.audit.end_call(n, before, beliefs, claims);
        }
        // A node that believes must have something pending that will renew or end the belief
        // (a renewal, a deadline); otherwise it would believe forever without asking anyone.
        assert!(
            beliefs == Beliefs::NONE || self.nodes[n].timers.iter().any(|t| t.armed),
            "node {n} believes {beliefs:?} with no timer pending"
        );
        if beliefs != self.oracle.beliefs(n) {
            self.oracle.settle(n, self.now, &self.clocks[n]);
            self.oracle.set_beliefs(n, beliefs);
            if self.oracle.maybe_flush(self.now, &self.clocks) {
                self.report_to_observer();
            }
        }
    }

    /// Carries out one action of a call into node `n`'s logic.
    fn carry_out(&mut self, n: NodeId, action: Action<MsgOf<P>>) {
        match action {
            Action::Send { to, msg } => match self.held_sends.as_mut() {
                Some(held) => held.push((to, msg)),
                None => self.send(n, to, msg),
            },
            Action::SetTimer { timer, clock, at } => self.set_timer(n, timer, clock, at),
            Action::CancelTimer { timer } => self.cancel_timer(n, timer),
            // Carried out once the call's actions are (`after_call`), with a disk; else
            // nothing to do: the state is durable at once.
            Action::Persist { .. } => {}
        }
    }

    /// Takes note of one fact a call into node `n`'s logic reported (its clock named).
    fn note(&mut self, n: NodeId, fact: Fact) {
        if cfg!(debug_assertions) {
            self.audit.fact(n, &fact);
        }
        self.see_moments(n, &fact);
        match fact {
            Fact::Issued { .. } | Fact::Renewed { .. } => {
                unreachable!("named with their clock by the caller")
            }
            Fact::IssuedOn {
                token,
                to,
                clock,
                until,
            } => {
                self.stats.grants += 1;
                if self.stats.grant_order.len() < GRANT_ORDER_CAP {
                    self.stats.grant_order.push(to);
                }
                self.harm.issued(to, token);
                let sought_at = self.seeking[to];
                self.failovers
                    .issued(self.harm.rank(to, token), to, self.now, sought_at);
                let until = self.clocks[n].reaches(clock, until, self.now);
                self.oracle
                    .lease_ends(token, until, to != n, self.now, &self.clocks);
                if self.observer.is_some() {
                    self.emit(n, TraceKind::Grant { token, to, until });
                }
            }
            Fact::RenewedOn {
                token,
                clock,
                until,
            } => {
                self.stats.renewals += 1;
                let until = self.clocks[n].reaches(clock, until, self.now);
                self.oracle
                    .lease_ends(token, until, false, self.now, &self.clocks);
                if self.observer.is_some() {
                    self.emit(n, TraceKind::Renewed { token, until });
                }
            }
            Fact::Holding { .. } => {}
            Fact::Seeking => self.seeking[n] = Some(self.now),
            Fact::WriteApplied { .. }
            | Fact::WriteAcked { .. }
            | Fact::WriteFenced { .. }
            | Fact::DuplicateWrite { .. }
            | Fact::Committed { .. } => self.note_resource(n, fact),
            _ => self.note_request(n, fact),
        }
    }

    /// A fact of what became of a client request node `n` took up.
    fn note_request(&mut self, n: NodeId, fact: Fact) {
        match fact {
            Fact::Waiting { token } => {
                if let Some((op, request)) = self.call_request {
                    self.harm.read_waits(n, op, request.key(), token);
                }
            }
            Fact::Appended { .. } => {
                if let Some((op, Request::Write { key, value })) = self.call_request {
                    self.harm.write_appended(n, (op, key, value));
                }
            }
            Fact::Refused { since, .. } => self.harm.read_ended(n, since.op()),
            Fact::Read { token, value } => {
                self.stats.reads_local += 1;
                let (op, request) = self
                    .call_request
                    .expect("a read served at once is taken up");
                self.served_read(n, token, (op, request.key(), value), true);
            }
            Fact::ConfirmedRead {
                token,
                since,
                value,
            } => {
                self.stats.reads_confirmed += 1;
                let wait = self.now.since(since.time());
                self.stats.confirmed_read_waits.record(wait);
                let op = since.op();
                let key = self.harm.kept_key(n, op).unwrap_or_else(|| {
                    panic!("node {n} served a read it had not kept (ConfirmedRead without Waiting)")
                });
                self.served_read(n, token, (op, key, value), false);
            }
            Fact::WriteSent { token } => {
                let Some((op, Request::Write { key, value })) = self.call_request else {
                    unreachable!("a write sent is taken up")
                };
                let zombie = self.harm.write_sent(n, token, (op, key, value));
                if zombie {
                    let act = self.harm_act(n, token, n, true);
                    FirstHarm::note(&mut self.stats.first_harm.zombie, act);
                }
                if self.observer.is_some() {
                    self.emit(n, TraceKind::WriteSent { token, zombie });
                }
            }
            _ => unreachable!("not a request's fact: {fact:?}"),
        }
    }

    /// A fact of the resource at node `n`: a write arrived (applied, fenced or a duplicate), its
    /// answer reached its writer, or an entry committed.
    fn note_resource(&mut self, n: NodeId, fact: Fact) {
        match fact {
            Fact::WriteApplied {
                writer,
                token,
                key,
                value,
            } => {
                self.stats.write_gap.event(self.now);
                self.took_effect(n, (writer, token), (key, value), false);
            }
            Fact::WriteAcked { key, value } => {
                self.harm.write_acked(n, (key, value));
                self.tell_acked(value);
            }
            Fact::WriteFenced { writer, token } => {
                self.harm.write_fenced();
                self.emit_write(n, writer, token, false, false, false);
            }
            Fact::DuplicateWrite { writer, token } => {
                self.harm.duplicate_write();
                self.emit_write(n, writer, token, false, false, true);
            }
            Fact::Committed {
                index,
                writer,
                token,
                key,
                value,
                acked,
            } => {
                if self.harm.first_commit(index, token) {
                    // Committed is acknowledged: the leader that accepted it answers its client
                    // now; one a later leader commits, its client learns of at the new leader
                    // (as a retry of its request does), and any client may read it from now on.
                    // A writer outside the group is answered later (it reports WriteAcked).
                    if writer == n || !acked {
                        self.stats.write_gap.event(self.now);
                    }
                    self.took_effect(n, (writer, token), (key, value), acked);
                }
            }
            _ => unreachable!("not the resource's fact: {fact:?}"),
        }
    }

    /// The write of `value` to `key` from `writer` under `token` took effect at node `n`;
    /// `acked`: it is acknowledged now.
    fn took_effect(
        &mut self,
        n: NodeId,
        (writer, token): (NodeId, Token),
        (key, value): (Key, Value),
        acked: bool,
    ) {
        // The history's last tick before it took effect (a commit's acknowledgement takes the
        // next).
        let tick = self.harm.last_tick();
        let unsafe_write = self.harm.write_applied(writer, token, (key, value), acked);
        let at = self.now;
        self.tell(HistoryEvent::WriteTookEffect {
            key,
            value,
            tick,
            at,
        });
        if acked {
            self.tell_acked(value);
        }
        if unsafe_write {
            let act = self.harm_act(writer, token, n, true);
            FirstHarm::note(&mut self.stats.first_harm.unsafe_write, act);
        }
        self.failovers
            .write(self.harm.rank(writer, token), self.now);
        self.emit_write(n, writer, token, true, unsafe_write, false);
    }

    /// Tells the observer, if it wants the history, what happened to a client operation.
    pub(super) fn tell(&mut self, e: HistoryEvent) {
        if !self.history_wanted {
            return;
        }
        if let Some(o) = self.observer.as_mut() {
            o.history(&e);
        }
    }

    /// Tells the observer, if it wants the history, that request `op` (`kind`) reached node
    /// `n` now.
    pub(super) fn tell_invoked(&mut self, n: NodeId, kind: Request, op: u64) {
        self.tell(HistoryEvent::Invoked {
            op,
            node: n,
            key: kind.key(),
            write: kind.is_write(),
            at: self.now,
        });
    }

    /// Tells the observer of request `op` (`kind`) refused by node `n`'s check now: its trace
    /// event, and its failure to the history if it wants it, with its invocation in the same
    /// call if `fresh` (it arrived just now: the history has not heard of it yet). A fresh one
    /// only counts in the observer's tally once it takes them so.
    // Inlined always: its counting path once per request refused as it arrives; the rest out of
    // line.
    #[inline(always)]
    pub(super) fn tell_refused(&mut self, n: NodeId, kind: Request, op: u64, fresh: bool) {
        if let (Some(tally), true) = (self.refusal_tally.as_mut(), fresh) {
            tally.count(self.now, n);
            return;
        }
        self.tell_refused_one(n, kind, op, fresh);
    }

    /// [`Sim::tell_refused`] for a request the observer hears of one by one.
    #[inline(never)]
    fn tell_refused_one(&mut self, n: NodeId, kind: Request, op: u64, fresh: bool) {
        let Some(o) = self.observer.as_mut() else {
            return;
        };
        let write = kind.is_write();
        let e = TraceEvent {
            t: self.now,
            node: n,
            clock: Readings::Of(&self.clocks[n]),
            kind: TraceKind::Rejected { write },
        };
        if !self.history_wanted {
            o.event(&e);
        } else if fresh {
            let key = kind.key();
            let at = self.now;
            o.refused(
                &Refused {
                    op,
                    node: n,
                    key,
                    write,
                    at,
                },
                &e,
            );
            self.refusal_tally = o.as_counts(Countable::Refusals);
        } else {
            o.history(&HistoryEvent::Failed { op, at: self.now });
            o.event(&e);
        }
    }

    /// Tells the observer that the write of `value` was acknowledged now (the history's last
    /// tick).
    fn tell_acked(&mut self, value: Value) {
        let tick = self.harm.last_tick();
        let at = self.now;
        self.tell(HistoryEvent::WriteAcked { value, tick, at });
    }

    /// Passes what the oracle has swept since last time to the observer.
    pub(super) fn report_to_observer(&mut self) {
        if let Some(o) = self.observer.as_mut() {
            self.oracle.report(&mut **o);
        }
    }

    /// Tells the observer (there must be one) that `kind` happened at node `n` now.
    pub(super) fn emit(&mut self, n: NodeId, kind: TraceKind) {
        let e = TraceEvent {
            t: self.now,
            node: n,
            clock: Readings::Of(&self.clocks[n]),
            kind,
        };
        if let Some(o) = self.observer.as_mut() {
            o.event(&e);
        }
    }

    /// Tells the observer that a write from `writer` reached the resource at node `n`.
    pub(super) fn emit_write(
        &mut self,
        n: NodeId,
        writer: NodeId,
        token: Token,
        applied: bool,
        unsafe_write: bool,
        duplicate: bool,
    ) {
        if self.observer.is_some() {
            let kind = TraceKind::WriteArrived {
                writer,
                token,
                applied,
                unsafe_write,
                duplicate,
            };
            self.emit(n, kind);
        }
    }

    /// Tells the observer that message `id` from `from` to `to` was dropped, and why.
    pub(super) fn emit_drop(
        &mut self,
        from: u32,
        to: u32,
        msg: &MsgOf<P>,
        id: u64,
        reason: DropReason,
    ) {
        if self.observer.is_some() {
            let kind = TraceKind::Drop {
                from: from as NodeId,
                to: to as NodeId,
                kind: kind_name(msg),
                id,
                reason,
            };
            self.emit(to as NodeId, kind);
        }
    }

    /// Node `from` sends `msg` to `to`: the network decides its fate (lost, delayed, or two
    /// copies), and each copy that arrives is queued for its instant. The message moves into
    /// the queue; it is cloned only for a second copy.
    pub(super) fn send(&mut self, from: NodeId, to: NodeId, msg: MsgOf<P>) {
        let kind = msg.kind();
        self.stats.messages_sent[kind] += 1;
        let id = self.next_msg_id;
        self.next_msg_id += 1;
        let fate = self.net.send(self.now, from, to, kind);
        if self.observer.is_some() {
            let arrives = fate.first.map(|d| self.now + d);
            let token = msg.token();
            self.emit(
                from,
                TraceKind::Send {
                    to,
                    kind: kind_name(&msg),
                    id,
                    token,
                    arrives,
                },
            );
        }
        let twin = fate.first.is_some() && fate.copy.is_some();
        let life = self.nodes[from].life;
        let deliver = |msg| Ev::Deliver {
            to: to as u32,
            from: from as u32,
            msg,
            id,
            twin,
            life,
        };
        match (fate.first, fate.copy) {
            (Some(d), None) => self.queue.push(self.now + d, deliver(msg)),
            (Some(d), Some(c)) => {
                self.queue.push(self.now + d, deliver(msg.clone()));
                self.queue.push(self.now + c, deliver(msg));
            }
            (None, copy) => {
                self.stats.messages_dropped += 1;
                self.emit_drop(from as u32, to as u32, &msg, id, DropReason::Lost);
                if let Some(c) = copy {
                    self.queue.push(self.now + c, deliver(msg));
                }
            }
        }
    }

    /// One copy of message `id` was delivered (`delivered`) or lost on the way. Returns whether
    /// this is the second copy and the first was delivered: a duplicate delivery.
    pub(super) fn twin_consumed(&mut self, twin: bool, id: u64, delivered: bool) -> bool {
        if !twin {
            return false;
        }
        match self.twins.remove(&id) {
            Some(first_delivered) => first_delivered && delivered,
            None => {
                self.twins.insert(id, delivered);
                false
            }
        }
    }
}

/// The name of a message's kind (for traces).
/// Whether a call's `actions` write to disk (`None`: they do not), and if so whether any of
/// the writes waits.
fn writes_of<M>(actions: &[Action<M>]) -> Option<bool> {
    actions.iter().fold(None, |acc, a| match a {
        Action::Persist { wait } => Some(acc.unwrap_or(false) || *wait),
        _ => acc,
    })
}

pub(super) fn kind_name<M: ProtocolMessage>(msg: &M) -> &'static str {
    M::KINDS[msg.kind()]
}

#[cfg(test)]
mod tests {
    use super::writes_of;
    use crate::strategy::Action;

    #[test]
    fn a_call_waits_for_its_disk_when_any_of_its_writes_waits() {
        let send = Action::Send { to: 0, msg: () };
        let background = Action::Persist { wait: false };
        let wait = Action::Persist { wait: true };
        assert_eq!(writes_of::<()>(&[]), None);
        assert_eq!(writes_of(std::slice::from_ref(&send)), None);
        assert_eq!(writes_of(&[background.clone(), send.clone()]), Some(false));
        assert_eq!(writes_of(&[wait.clone(), background.clone()]), Some(true));
        assert_eq!(writes_of(&[background, send, wait]), Some(true));
    }
}
