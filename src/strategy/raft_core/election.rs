//! The election timer of the Raft core: when a follower that hears nothing from a leader
//! campaigns, on its monotonic clock or counted in ticks of it, and whether it heard from a
//! leader lately enough to refuse a vote (leader stickiness).
//!
//! Without ticks a timeout is drawn anew each time the timer is armed, from `[timeout,
//! timeout + jitter)` on the monotonic clock, from the node's own random stream. With a tick,
//! as in raft-rs and etcd/raft, the count restarts when the timer is armed and rises at each
//! tick of the node's clock (ticks fall at the node's start reading plus whole ticks); the
//! node campaigns at the tick that brings the count to n, drawn from `[timeout, timeout +
//! jitter)` in ticks: a timeout of n ticks runs out between n - 1 and n ticks after the timer
//! was armed. A leader counts the base timeout (no draw) the same way to know when to abandon a
//! leadership transfer ([`Election::base_deadline`]).

use super::ELECTION;
use crate::clock::ClockKind;
use crate::rng::Rng;
use crate::strategy::{Cx, Out};
use crate::time::{LocalDur, LocalTime};

/// The election timer's settings and what it remembers.
#[derive(Clone, Copy, Debug)]
pub struct Election {
    timeout: LocalDur,
    jitter: LocalDur,
    tick: Option<LocalDur>,
    /// The monotonic reading at the node's start: its ticks fall at this plus whole ticks.
    tick_origin: LocalTime,
    /// When the node last heard from the leader of its term (monotonic).
    pub heard_leader_at: Option<LocalTime>,
}

impl Election {
    /// A timer of `timeout` plus a draw below `jitter`, counted in ticks of `tick` if given (both
    /// whole numbers of ticks then).
    pub fn new(timeout: LocalDur, jitter: LocalDur, tick: Option<LocalDur>) -> Election {
        debug_assert!(timeout > LocalDur::ZERO && jitter >= LocalDur::ZERO);
        debug_assert!(tick.is_none_or(|t| timeout.ns() % t.ns() == 0 && jitter.ns() % t.ns() == 0));
        Election {
            timeout,
            jitter,
            tick,
            tick_origin: LocalTime::from_ns(0),
            heard_leader_at: None,
        }
    }

    /// The node starts (or restarts) with its monotonic clock reading `now`: its ticks count
    /// from here.
    pub fn start(&mut self, now: LocalTime) {
        self.tick_origin = now;
    }

    /// When the timer armed at `now` fires: a fresh draw from the node's stream (none when the
    /// jitter is less than a tick, or zero).
    pub fn deadline(&self, rng: &mut Rng, now: LocalTime) -> LocalTime {
        use rand::RngExt;
        let unit = self.tick.map_or(1, |t| t.ns());
        let jitter = self.jitter.ns() / unit;
        let extra = if jitter > 0 {
            rng.random_range(0..jitter)
        } else {
            0
        };
        match self.tick {
            None => now + self.timeout + LocalDur::from_ns(extra),
            Some(tick) => self.nth_tick(now, tick, self.timeout.ns() / unit + extra),
        }
    }

    /// When a count of the base timeout (no draw) started at `now` runs out: `now + timeout`
    /// on the monotonic clock, or with a tick, at the tick that brings a count restarted at
    /// `now` to the timeout's ticks, as the election timer counts. A leader times its transfers
    /// so: etcd-io/raft (raft.go) resets `electionElapsed` when a transfer starts (`stepLeader`,
    /// `MsgTransferLeader`) and `tickHeartbeat` abandons it once `electionElapsed` reaches
    /// `electionTimeout`; raft-rs (src/raft.rs) does the same in `handle_transfer_leader` and
    /// `tick_heartbeat`.
    pub fn base_deadline(&self, now: LocalTime) -> LocalTime {
        match self.tick {
            None => now + self.timeout,
            Some(tick) => self.nth_tick(now, tick, self.timeout.ns() / tick.ns()),
        }
    }

    /// The reading of the node's `n`-th tick (n >= 1) after `now`: the first is the next one
    /// after now, less than a tick away, so the n-th falls between n - 1 and n ticks after now.
    fn nth_tick(&self, now: LocalTime, tick: LocalDur, n: i64) -> LocalTime {
        debug_assert!(n >= 1);
        LocalTime::from_ns(self.tick_at(now, tick) + (n - 1) * tick.ns())
    }

    /// Arms (or re-arms) the election timer from now.
    pub fn arm<M>(&self, cx: &mut Cx, out: &mut Out<M>) {
        let at = self.deadline(cx.rng, cx.mono);
        out.set_timer(ELECTION, ClockKind::Monotonic, at);
    }

    /// The reading of the node's first tick after `now`.
    fn tick_at(&self, now: LocalTime, tick: LocalDur) -> i64 {
        let since = (now - self.tick_origin).ns();
        self.tick_origin.ns() + (since.div_euclid(tick.ns()) + 1) * tick.ns()
    }

    /// Whether the node heard from its leader less than a timeout (the base value) before
    /// `now`: by its clock, or with ticks, in fewer ticks than the timeout's.
    pub fn heard_leader_lately(&self, now: LocalTime) -> bool {
        let Some(h) = self.heard_leader_at else {
            return false;
        };
        match self.tick {
            None => now < h + self.timeout,
            Some(tick) => {
                let ticks = (self.tick_at(now, tick) - self.tick_at(h, tick)) / tick.ns();
                ticks < self.timeout.ns() / tick.ns()
            }
        }
    }
}
