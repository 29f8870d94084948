//! The Consul servers' leader: sessions and their TTL timers, the lock key, lock-delay,
//! blocking queries, a change of leader, and the register.
//!
//! Sessions (hashicorp/consul `agent/consul/session_ttl.go`): a session opens on `Create`
//! with TTL T; `createSessionTimer` arms its timer at T x `ttl_multiplier` ("to give a client a
//! grace period ... the contract is that a session is not expired before the TTL"), and every
//! `Renew` resets it (`resetSessionTimer`); a renew of a session the leader does not have is
//! answered "not found". When the timer fires, `invalidateSession` applies a `SessionDestroy`
//! through Raft: here at once, with no retries (a single server commits alone). A `Destroy`
//! from the client does the same. Invalidation releases the lock key if the session holds it,
//! bumping the key's modify index, and the key then refuses every acquire for the session's
//! lock-delay (`state/delay.go`, checked before the Raft apply in `kvsPreApply`; each server
//! applies the destroy and keeps its own, so a new leader has it too). A clean release has no
//! lock-delay.
//!
//! The lock key (`kvs_endpoint.go`, the state store's `kvsLockTxn`): an acquire succeeds if the
//! key has no session and no lock-delay runs, or if the asking session already holds it; a new
//! holder bumps the key's LockIndex, which is the fencing token, and its modify index. There
//! is no queue: refused clients wait on a blocking GET and try again (see [`super::client`]).
//!
//! Blocking queries (`blockingQuery`): a GET with index 0, or an older index than the key's
//! modify index, is answered at once; any other is held until the key changes, or until its
//! wait plus a jitter drawn uniformly from [0, wait/16) (`lib.RandomStagger`) has passed, and
//! then answered with the key as it stands.
//!
//! A change of leader is a crash and restart of the Grantor: the Raft log keeps the open
//! sessions (not their timers), the key, a lock-delay in progress and the register; held
//! queries are lost (no answer ever comes: the client's RPC deadline decides). The new leader
//! runs `initializeSessionTimers`: every session's timer restarts at the full T x multiplier.
//! With `lease.grantor_restart: Forget` (the bug) it invalidates every session at once instead.
//!
//! Duplicates change nothing: calls travel over TCP, so the leader never sees a copy of a
//! request the network duplicated, and the register applies a duplicated write once.

use super::msg::Message;
use super::{ConsulConfig, Disk, JITTER_FRACTION};
use crate::msg::{NodeId, Token};
use crate::scenario::GrantorRestart;
use crate::strategy::service_node;
use crate::strategy::{Cx, Fact, LeaseParams, Out, Register, TimerId};
use crate::time::{LocalDur, LocalTime};
use rand::RngExt as _;

/// Fires at the earliest session timer.
pub(super) const EXPIRY: TimerId = 0;
/// Fires at the earliest end of a held query's wait.
pub(super) const QUERY: TimerId = 1;

/// The lock key as the Raft log keeps it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockKey {
    /// The session holding it: (client node, session id).
    pub(super) holder: Option<(NodeId, u64)>,
    /// Bumped each time a session other than the holder acquires it: the fencing token.
    pub(super) lock_index: Token,
    /// Bumped at every change of the key (acquire, release, invalidation).
    pub(super) modify_index: u64,
}

/// An open session: its timer's end on the leader's monotonic clock.
#[derive(Clone, Copy, Debug)]
pub(super) struct Session {
    pub(super) node: NodeId,
    pub(super) id: u64,
    pub(super) expiry: LocalTime,
}

/// A blocking GET the leader holds.
#[derive(Clone, Copy, Debug)]
struct HeldGet {
    node: NodeId,
    req: u64,
    /// When its wait (and jitter) ends.
    due: LocalTime,
}

/// The leader.
pub struct Leader {
    p: LeaseParams,
    c: ConsulConfig,
    /// Open sessions, in order of creation.
    pub(super) sessions: Vec<Session>,
    pub(super) key: LockKey,
    /// While a lock-delay runs, the leader's monotonic time at which it ends.
    pub(super) delay_until: Option<LocalTime>,
    /// Blocking GETs waiting for the key to change, in order of arrival.
    gets: Vec<HeldGet>,
    /// Where the expiry timer is armed, if it is.
    expiry_armed: Option<LocalTime>,
    /// Where the query timer is armed, if it is.
    query_armed: Option<LocalTime>,
    register: Register,
}

impl Leader {
    pub(super) fn new(p: LeaseParams, c: ConsulConfig, disk: Disk) -> Leader {
        let sessions = disk
            .sessions
            .iter()
            .map(|&(node, id)| Session {
                node,
                id,
                expiry: LocalTime::from_ns(i64::MIN), // set in on_start
            })
            .collect();
        Leader {
            p,
            c,
            sessions,
            key: disk.key,
            delay_until: disk.delay_until,
            gets: Vec::new(),
            expiry_armed: None,
            query_armed: None,
            register: disk.register,
        }
    }

    /// What the Raft log holds.
    pub(super) fn into_disk(self) -> Disk {
        Disk {
            sessions: self.sessions.iter().map(|s| (s.node, s.id)).collect(),
            key: self.key,
            delay_until: self.delay_until,
            register: self.register,
        }
    }

    /// T x the multiplier: how long after its last reset a session's timer fires.
    fn reap_after(&self) -> LocalDur {
        self.c.reap_after(self.p.lease)
    }

    fn find(&self, node: NodeId, id: u64) -> Option<usize> {
        self.sessions
            .iter()
            .position(|s| (s.node, s.id) == (node, id))
    }

    /// Resets session `i`'s timer to now + T x multiplier (`resetSessionTimer`); reports the
    /// renewal of the lock if the session holds it.
    fn reset(&mut self, cx: &Cx, i: usize, out: &mut Out<Message>) {
        let until = cx.mono + self.reap_after();
        let s = &mut self.sessions[i];
        s.expiry = until;
        if self.key.holder == Some((s.node, s.id)) {
            let token = self.key.lock_index;
            out.report(Fact::Renewed { token, until });
        }
    }

    /// Arms the expiry timer at the earliest session timer, if it moved.
    fn arm_expiry(&mut self, out: &mut Out<Message>) {
        let earliest = self.sessions.iter().map(|s| s.expiry).min();
        service_node::arm_earliest(EXPIRY, earliest, &mut self.expiry_armed, out);
    }

    /// Arms the query timer at the earliest end of a held GET's wait, if it moved.
    fn arm_query(&mut self, out: &mut Out<Message>) {
        let earliest = self.gets.iter().map(|g| g.due).min();
        service_node::arm_earliest(QUERY, earliest, &mut self.query_armed, out);
    }

    /// The key as it stands, as an answer to GET `req`.
    fn key_state(&self, req: u64) -> Message {
        Message::KeyState {
            req,
            index: self.key.modify_index,
            holder: self.key.holder,
            lock_index: self.key.lock_index,
        }
    }

    /// The key changed: every held GET is answered.
    fn changed(&mut self, out: &mut Out<Message>) {
        self.key.modify_index += 1;
        for g in std::mem::take(&mut self.gets) {
            out.send(g.node, self.key_state(g.req));
        }
        self.arm_query(out);
    }

    /// Holds a blocking GET for its wait plus a jitter in [0, wait/16).
    fn hold_get(&mut self, cx: &mut Cx, node: NodeId, req: u64, wait: LocalDur) {
        let stagger = wait.ns() / JITTER_FRACTION;
        let jitter = if stagger > 0 {
            cx.rng.random_range(0..stagger)
        } else {
            0
        };
        let due = cx.mono + wait + LocalDur::from_ns(jitter);
        self.gets.push(HeldGet { node, req, due });
    }

    /// Invalidates the sessions for which `which` holds (`SessionDestroy`): releases the lock
    /// of one that holds it, and starts the lock-delay.
    fn invalidate(&mut self, cx: &Cx, which: impl Fn(&Session) -> bool, out: &mut Out<Message>) {
        let holder = self.key.holder;
        let released = self
            .sessions
            .iter()
            .any(|s| which(s) && holder == Some((s.node, s.id)));
        self.sessions.retain(|s| !which(s));
        if released {
            self.key.holder = None;
            if self.c.lock_delay > LocalDur::ZERO {
                self.delay_until = Some(cx.mono + self.c.lock_delay);
            }
            self.changed(out);
        }
        self.arm_expiry(out);
    }

    fn delaying(&self, cx: &Cx) -> bool {
        self.delay_until.is_some_and(|until| cx.mono < until)
    }

    /// `?acquire=`: the answer, and a grant if the key was free.
    fn acquire(
        &mut self,
        cx: &Cx,
        node: NodeId,
        (session, req): (u64, u64),
        out: &mut Out<Message>,
    ) {
        let found = self.find(node, session).is_some();
        let me = Some((node, session));
        let free = self.key.holder.is_none() && !self.delaying(cx);
        let locked = found && (self.key.holder == me || free);
        let mut values = Default::default();
        if locked {
            values = self.register.values();
            if self.key.holder != me {
                self.key.lock_index += 1;
                self.key.holder = me;
                let until = self.sessions[self.find(node, session).expect("found")].expiry;
                out.report(Fact::Issued {
                    token: self.key.lock_index,
                    to: node,
                    until,
                });
                self.changed(out);
            }
        }
        let answer = Message::AcquireResult {
            session,
            req,
            found,
            locked,
            token: self.key.lock_index,
            index: self.key.modify_index,
            holder: self.key.holder,
            values,
        };
        out.send(node, answer);
    }

    pub(super) fn on_start(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if !cx.restarted {
            return;
        }
        match self.p.grantor_restart {
            GrantorRestart::Wait => {
                // initializeSessionTimers: every session's timer restarts in full.
                for i in 0..self.sessions.len() {
                    self.reset(cx, i, out);
                }
                self.arm_expiry(out);
            }
            GrantorRestart::Forget => self.invalidate(cx, |_| true, out),
        }
    }

    pub(super) fn on_message(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        msg: Message,
        out: &mut Out<Message>,
    ) {
        match msg {
            // Over TCP a request arrives once: a copy the network duplicated is not seen.
            // Writes stay: the register counts their copies.
            Message::Write { token, key, value } => {
                let write = (from, token, (key, value));
                let (fencing, duplicate) = (self.p.fencing, cx.duplicate);
                (self.register).serve(out, write, fencing, duplicate, Message::WriteAck);
            }
            _ if cx.duplicate => {}
            Message::Create { session, req } => {
                if self.find(from, session).is_none() {
                    let expiry = cx.mono + self.reap_after();
                    let id = session;
                    self.sessions.push(Session {
                        node: from,
                        id,
                        expiry,
                    });
                    self.arm_expiry(out);
                }
                out.send(from, Message::Created { session, req });
            }
            Message::Renew { session, req } => {
                let found = match self.find(from, session) {
                    Some(i) => {
                        self.reset(cx, i, out);
                        self.arm_expiry(out);
                        true
                    }
                    None => false,
                };
                out.send(
                    from,
                    Message::RenewResult {
                        session,
                        req,
                        found,
                    },
                );
            }
            Message::Destroy { session } => {
                self.invalidate(cx, |s| (s.node, s.id) == (from, session), out)
            }
            Message::Get { req, index, wait } => {
                if index == 0 || self.key.modify_index > index {
                    out.send(from, self.key_state(req));
                } else {
                    self.hold_get(cx, from, req, wait);
                    self.arm_query(out);
                }
            }
            Message::Acquire { session, req } => self.acquire(cx, from, (session, req), out),
            Message::Release { session, token } => {
                if self.key.holder == Some((from, session)) && self.key.lock_index == token {
                    self.key.holder = None; // a clean release: no lock-delay
                    self.changed(out);
                }
            }
            Message::Created { .. }
            | Message::RenewResult { .. }
            | Message::KeyState { .. }
            | Message::AcquireResult { .. }
            | Message::WriteAck(_) => {}
        }
    }

    pub(super) fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            EXPIRY => {
                self.expiry_armed = None;
                let now = cx.mono;
                self.invalidate(cx, |s| s.expiry <= now, out);
            }
            QUERY => {
                self.query_armed = None;
                let now = cx.mono;
                let (due, waiting): (Vec<HeldGet>, Vec<HeldGet>) =
                    self.gets.iter().partition(|g| g.due <= now);
                self.gets = waiting;
                for g in due {
                    out.send(g.node, self.key_state(g.req));
                }
                self.arm_query(out);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Role;
    use crate::strategy::{Action, Store};

    const S: i64 = 1_000_000_000;
    /// Node 0 is the leader, nodes 1 and 2 clients.
    const ROLES: &[Role] = &[Role::Grantor, Role::Contender, Role::Contender];

    fn params(restart: GrantorRestart) -> LeaseParams {
        LeaseParams {
            lease: LocalDur::from_secs(15),
            renew_every: LocalDur::from_secs(5),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: restart,
            fencing: false,
            initial_leader: None,
        }
    }

    fn config(lock_delay_s: i64) -> ConsulConfig {
        ConsulConfig {
            ttl_multiplier: 2,
            lock_delay: LocalDur::from_secs(lock_delay_s),
            renew: super::super::RenewPolicy::RetryEverySecond,
            query_wait: LocalDur::from_secs(300),
            lock_wait: LocalDur::from_secs(15),
            lock_retry: LocalDur::from_secs(5),
            rpc_timeout: Some(LocalDur::from_secs(7)),
        }
    }

    fn leader(lock_delay_s: i64) -> Leader {
        Leader::new(
            params(GrantorRestart::Wait),
            config(lock_delay_s),
            Disk::default(),
        )
    }

    fn call(
        l: &mut Leader,
        at_ns: i64,
        f: impl FnOnce(&mut Leader, &mut Cx, &mut Out<Message>),
    ) -> Out<Message> {
        crate::strategy::call_for_test(l, 0, ROLES, LocalTime::from_ns(at_ns), f)
    }

    fn from(l: &mut Leader, at_ns: i64, node: NodeId, msg: Message) -> Out<Message> {
        call(l, at_ns, |l, cx, out| l.on_message(cx, node, msg, out))
    }

    fn sent(given: &Out<Message>) -> Vec<(NodeId, Message)> {
        given
            .actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { to, msg } => Some((*to, msg.clone())),
                _ => None,
            })
            .collect()
    }

    /// Whether the answer to an acquire says locked.
    fn locked(given: &Out<Message>) -> Option<bool> {
        sent(given).into_iter().find_map(|(_, m)| match m {
            Message::AcquireResult { locked, .. } => Some(locked),
            _ => None,
        })
    }

    fn expire(l: &mut Leader, at_ns: i64) -> Out<Message> {
        call(l, at_ns, |l, cx, out| l.on_timer(cx, EXPIRY, out))
    }

    /// Node 1 opens session 1 at 0 and acquires the key at 0: LockIndex 1, to 30 s.
    fn held_by_1(lock_delay_s: i64) -> Leader {
        let mut l = leader(lock_delay_s);
        from(&mut l, 0, 1, Message::Create { session: 1, req: 1 });
        let grant = from(&mut l, 0, 1, Message::Acquire { session: 1, req: 2 });
        assert_eq!(locked(&grant), Some(true));
        assert_eq!(
            grant.facts(),
            [Fact::Issued {
                token: 1,
                to: 1,
                until: LocalTime::from_ns(30 * S)
            }]
        );
        l
    }

    /// Created at 0 with T = 15 s: reaped at 2 x 15 = 30 s, not before; a renew at 10 s moves
    /// it to 40 s (and renews the lock it holds); a renew of the reaped session is "not found".
    #[test]
    fn a_session_is_reaped_at_twice_its_ttl_after_its_last_renew() {
        let mut l = held_by_1(0);
        let renew = from(&mut l, 10 * S, 1, Message::Renew { session: 1, req: 3 });
        assert_eq!(
            renew.facts(),
            [Fact::Renewed {
                token: 1,
                until: LocalTime::from_ns(40 * S)
            }]
        );
        expire(&mut l, 40 * S - 1);
        assert_eq!(l.sessions.len(), 1);
        expire(&mut l, 40 * S);
        assert!(l.sessions.is_empty() && l.key.holder.is_none());
        let late = from(&mut l, 41 * S, 1, Message::Renew { session: 1, req: 4 });
        let not_found = Message::RenewResult {
            session: 1,
            req: 4,
            found: false,
        };
        assert_eq!(sent(&late), [(1, not_found)]);
    }

    /// Lock-delay 15 s: node 1's session is reaped at 30 s, so node 2 (its session open) is
    /// refused until 45 s and granted LockIndex 2 at 45 s. A clean release has no delay.
    #[test]
    fn only_an_invalidation_starts_the_lock_delay() {
        let mut l = held_by_1(15);
        from(&mut l, 20 * S, 2, Message::Create { session: 1, req: 1 });
        expire(&mut l, 30 * S);
        assert_eq!(l.delay_until, Some(LocalTime::from_ns(45 * S)));
        let early = from(
            &mut l,
            45 * S - 1,
            2,
            Message::Acquire { session: 1, req: 2 },
        );
        assert_eq!(locked(&early), Some(false));
        let at_end = from(&mut l, 45 * S, 2, Message::Acquire { session: 1, req: 3 });
        assert_eq!(locked(&at_end), Some(true));
        assert_eq!(l.key.lock_index, 2);
        // Node 2 releases cleanly at 46 s: node 1's new session takes it at once.
        let release = Message::Release {
            session: 1,
            token: 2,
        };
        from(&mut l, 46 * S, 2, release);
        from(&mut l, 46 * S, 1, Message::Create { session: 2, req: 5 });
        let again = from(&mut l, 46 * S, 1, Message::Acquire { session: 2, req: 6 });
        assert_eq!(locked(&again), Some(true));
        assert_eq!(l.key.lock_index, 3);
    }

    /// A blocking GET at the key's index waits; the key's change answers it at once, with the
    /// new index and no holder. One at an older index is answered at once.
    #[test]
    fn a_blocking_get_is_answered_when_the_key_changes() {
        let mut l = held_by_1(0);
        let index = l.key.modify_index;
        let get = Message::Get {
            req: 9,
            index,
            wait: LocalDur::from_secs(15),
        };
        assert!(sent(&from(&mut l, S, 2, get)).is_empty());
        let reaped = expire(&mut l, 30 * S);
        let state = Message::KeyState {
            req: 9,
            index: index + 1,
            holder: None,
            lock_index: 1,
        };
        assert_eq!(sent(&reaped), [(2, state)]);
        let old = Message::Get {
            req: 10,
            index,
            wait: LocalDur::from_secs(15),
        };
        assert_eq!(sent(&from(&mut l, 31 * S, 2, old)).len(), 1);
    }

    /// A held GET of 15 s is answered between 15 s and 15 + 15/16 s after it arrived.
    #[test]
    fn a_blocking_get_times_out_within_its_wait_and_jitter() {
        let mut l = held_by_1(0);
        let index = l.key.modify_index;
        let get = Message::Get {
            req: 9,
            index,
            wait: LocalDur::from_secs(15),
        };
        let held = from(&mut l, 0, 2, get);
        let due = held
            .actions()
            .iter()
            .find_map(|a| match a {
                Action::SetTimer {
                    timer: QUERY, at, ..
                } => Some(at.ns()),
                _ => None,
            })
            .expect("a query timer");
        assert!((15 * S..15 * S + 15 * S / 16).contains(&due), "{due}");
        assert_eq!(
            sent(&call(&mut l, due, |l, cx, out| l.on_timer(cx, QUERY, out))).len(),
            1
        );
    }

    /// A new leader at 100 s resets every session's timer to 100 + 30 = 130 s and keeps the
    /// lock with its holder; with `Forget` (the bug) it invalidates them at once.
    #[test]
    fn a_new_leader_resets_every_session_timer_in_full() {
        let disk = held_by_1(15).into_disk();
        let restart = |how| {
            let mut l = Leader::new(params(how), config(15), disk.clone());
            let given = call(&mut l, 100 * S, |l, cx, out| {
                cx.restarted = true;
                l.on_start(cx, out)
            });
            (l, given)
        };
        let (l, given) = restart(GrantorRestart::Wait);
        assert_eq!(l.sessions[0].expiry, LocalTime::from_ns(130 * S));
        assert_eq!(l.key.holder, Some((1, 1)));
        assert_eq!(
            given.facts(),
            [Fact::Renewed {
                token: 1,
                until: LocalTime::from_ns(130 * S)
            }]
        );
        let (l, _) = restart(GrantorRestart::Forget);
        assert!(l.sessions.is_empty() && l.key.holder.is_none());
        assert_eq!(l.delay_until, Some(LocalTime::from_ns(115 * S)));
        assert_eq!(l.register.values(), Store::default());
    }
}
