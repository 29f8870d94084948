//! One Redis master of Redlock: its key (value and expiry), what its disk keeps of it through a
//! crash (`persistence`), and the protected resource when it is the first master.
//!
//! A key is alive while the master's `expiry_clock` reads at most its expiry, and expired once
//! the clock reads more: Redis's `keyIsExpired` (src/db.c) returns `now > when`. A key write is
//! a lock that set the key, an extension that moved its expiry, or an unlock that deleted it.
//! With `EverySec` the master fsyncs at each whole second of its monotonic clock: the first
//! moment it runs with the clock at or past k seconds, the disk gets the key as it is then
//! (every write made before, none made at or after that moment). It does not need to look at
//! the clock between writes: a write comes after the fsync it was waiting for, and the timer
//! makes the fsync due when no write follows. A master never reports a fact of its own but the
//! resource's.

use super::{Message, RedlockPersistence, FSYNC, REFUSE_UNTIL};
use crate::clock::ClockKind;
use crate::msg::NodeId;
use crate::scenario::GrantorRestart;
use crate::strategy::{Cx, LeaseParams, Out, Register, TimerId};
use crate::time::LocalTime;

/// A key: (the client's value, expiry on the master's `expiry_clock`).
pub(super) type Key = (u64, LocalTime);

/// What survives a master's crash: the protected resource (when it hosts it) and the key as
/// its disk has it (always `None` without persistence).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disk {
    pub register: Register,
    pub(super) key: Option<Key>,
}

/// One Redis master.
pub struct Master {
    p: LeaseParams,
    expiry_clock: ClockKind,
    persistence: RedlockPersistence,
    key: Option<Key>,
    /// The key as the disk has it.
    synced: Option<Key>,
    /// With `EverySec` and writes not yet on disk: the whole second of the monotonic clock at
    /// which they are.
    fsync_due: Option<LocalTime>,
    /// After a restart with `grantor_restart: Wait`: refuses every lock until a timer fires.
    refusing: bool,
    /// Whether this master hosts the resource (known at start).
    hosts_resource: Option<bool>,
    register: Register,
    node: NodeId,
}

/// One second on a monotonic clock, in nanoseconds.
const SECOND_NS: i64 = 1_000_000_000;

/// The first whole second of a clock strictly after `t`.
fn next_whole_second(t: LocalTime) -> LocalTime {
    LocalTime::from_ns((t.ns().div_euclid(SECOND_NS) + 1) * SECOND_NS)
}

impl Master {
    /// Master `node` starting from `disk` (its key comes back as the disk has it).
    pub(super) fn new(
        node: NodeId,
        p: LeaseParams,
        expiry_clock: ClockKind,
        persistence: RedlockPersistence,
        disk: Disk,
    ) -> Master {
        debug_assert!(
            persistence != RedlockPersistence::None || disk.key.is_none(),
            "a master without persistence keeps no key on disk"
        );
        Master {
            p,
            expiry_clock,
            persistence,
            key: disk.key,
            synced: disk.key,
            fsync_due: None,
            refusing: false,
            hosts_resource: None,
            register: disk.register,
            node,
        }
    }

    pub(super) fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.hosts_resource = Some(super::resource_host(cx) == self.node);
        if cx.restarted && self.p.grantor_restart == GrantorRestart::Wait {
            self.refusing = true;
            out.set_timer(REFUSE_UNTIL, ClockKind::Monotonic, cx.mono + self.p.lease);
        }
    }

    pub(super) fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            REFUSE_UNTIL => self.refusing = false,
            FSYNC => self.fsync_if_due(cx, out),
            _ => {}
        }
    }

    /// What the disk keeps when the master crashes.
    pub(super) fn into_disk(self) -> Disk {
        Disk {
            register: self.register,
            key: self.synced,
        }
    }

    /// The key's value, if it is set and alive now: the clock reads at most its expiry.
    fn live_key(&self, cx: &Cx) -> Option<u64> {
        self.key
            .filter(|&(_, expiry)| cx.read(self.expiry_clock) <= expiry)
            .map(|(value, _)| value)
    }

    /// What its disk holds once its last write is durable: the key as synced, and the
    /// resource (which a crash keeps in any case: [`NodeLogic::into_disk_with`]).
    ///
    /// [`NodeLogic::into_disk_with`]: crate::strategy::NodeLogic::into_disk_with
    pub(super) fn disk_image(&self) -> Disk {
        Disk {
            register: self.register.clone(),
            key: self.synced,
        }
    }

    /// With `EverySec`: the fsync due at a whole second the clock has reached, if any, by
    /// Redis's background thread (on a node with a disk, durable when that fsync finishes;
    /// nothing waits for it).
    fn fsync_if_due(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if self.fsync_due.is_some_and(|due| cx.mono >= due) {
            self.synced = self.key;
            self.fsync_due = None;
            out.persist_in_background();
        }
    }

    /// Writes the key (`None` deletes it), and to disk as `persistence` says: with `Always`
    /// the reply waits for the fsync (on a node with a disk).
    fn write(&mut self, cx: &Cx, key: Option<Key>, out: &mut Out<Message>) {
        self.fsync_if_due(cx, out);
        self.key = key;
        match self.persistence {
            RedlockPersistence::None => {}
            RedlockPersistence::Always => {
                self.synced = key;
                out.persist();
            }
            RedlockPersistence::EverySec => {
                if self.fsync_due.is_none() {
                    let due = next_whole_second(cx.mono);
                    self.fsync_due = Some(due);
                    out.set_timer(FSYNC, ClockKind::Monotonic, due);
                }
            }
        }
        debug_assert!(self.persistence != RedlockPersistence::None || self.synced.is_none());
        debug_assert!(self.persistence != RedlockPersistence::Always || self.synced == self.key);
    }

    pub(super) fn on_message(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        msg: Message,
        out: &mut Out<Message>,
    ) {
        let expiry = cx.read(self.expiry_clock) + self.p.lease;
        match msg {
            // Redis speaks over TCP, which delivers a command once: a copy the network
            // duplicated is not seen (a second `SET NX` would be refused and answered again).
            Message::Lock { .. } | Message::Extend { .. } | Message::Unlock { .. }
                if cx.duplicate => {}
            Message::Lock { value } => {
                let ok = !self.refusing && self.live_key(cx).is_none();
                // A live key of another value: how long it has left (Redisson's lock script
                // answers a refusal with `pttl`).
                let ttl = match self.key {
                    Some((_, until)) if !ok && self.live_key(cx).is_some() => {
                        Some(until - cx.read(self.expiry_clock))
                    }
                    _ => None,
                };
                if ok {
                    self.write(cx, Some((value, expiry)), out);
                }
                let values =
                    (self.hosts_resource == Some(true)).then(|| self.register.values().clone());
                out.send(
                    from,
                    Message::LockReply {
                        value,
                        ok,
                        values,
                        ttl,
                    },
                );
            }
            Message::Extend { value, seq } => {
                let ok = self.live_key(cx) == Some(value);
                if ok {
                    self.write(cx, Some((value, expiry)), out);
                }
                out.send(from, Message::ExtendReply { value, seq, ok });
            }
            Message::Unlock { value } if self.key.is_some_and(|(v, _)| v == value) => {
                self.write(cx, None, out);
            }
            Message::Write { token, key, value } if self.hosts_resource == Some(true) => {
                // No fencing: Redlock has no token for the resource to check.
                let write = (from, token, (key, value));
                (self.register).serve(out, write, false, cx.duplicate, Message::WriteAck);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_whole_second_is_strictly_later() {
        let s = SECOND_NS;
        assert_eq!(next_whole_second(LocalTime::from_ns(0)).ns(), s);
        assert_eq!(next_whole_second(LocalTime::from_ns(s - 1)).ns(), s);
        assert_eq!(next_whole_second(LocalTime::from_ns(s)).ns(), 2 * s);
        assert_eq!(next_whole_second(LocalTime::from_ns(-1)).ns(), 0);
    }
}
