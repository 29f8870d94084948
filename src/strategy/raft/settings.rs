//! `RaftLeaderLease`'s settings as a scenario writes them: election timing, the heartbeat, an
//! optional tick, how the leader serves reads and what makes its lease. Its fields are checked
//! with its roles ([`Protocol::check`](crate::strategy::Protocol::check) of
//! [`super::RaftLeaderLease`]).

use super::{RaftConfig, RaftLeaderLease as RaftProtocol};
use crate::scenario::{LeaseFields, Scenario};
use crate::strategy::settings::check;
use crate::strategy::{Margin, Settings};
use crate::time::LocalDur;
use serde::{Deserialize, Serialize};

/// How a Raft leader serves reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RaftReads {
    /// From local state while the lease holds.
    #[default]
    Lease,
    /// After a heartbeat round a majority acknowledges: a round trip, never stale.
    ReadIndex,
    /// TiKV: locally while more than `max_clock_skew` of lease remains, else ReadIndex.
    LeaseOrReadIndex,
}

/// What makes a Raft leader's lease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RaftRule {
    /// The send time of a heartbeat round a majority acknowledged, plus T.
    #[default]
    HeartbeatQuorum,
    /// etcd's `ReadOnlyLeaseBased`: no clock lease; reads until check-quorum steps it down.
    CheckQuorumOnly,
}

/// Where a Raft leader's lease term starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RaftLeaseStart {
    /// At the send time of the acknowledged round (safe).
    #[default]
    OnSend,
    /// At the receipt of the acknowledgement that completed the majority (the bug).
    OnAck,
}

/// A Raft group whose elected leader holds the lease: TiKV, etcd, CockroachDB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RaftLeaderLease {
    /// A follower campaigns after hearing nothing from a leader for this long (plus jitter), on
    /// its monotonic clock.
    pub election_timeout: LocalDur,
    /// Each election timeout is drawn from [election_timeout, election_timeout + jitter).
    /// Default: the election timeout (etcd's [ET, 2 ET)).
    #[serde(default)]
    pub election_jitter: Option<LocalDur>,
    /// The leader's heartbeat period. Default: election_timeout / 10.
    #[serde(default)]
    pub heartbeat: Option<LocalDur>,
    /// With a tick (TiKV's `raft-base-tick-interval`, etcd's tick), a follower counts its
    /// election timeout in ticks of its monotonic clock, as raft-rs and etcd/raft do: the count
    /// restarts when it hears from the leader and goes up at each tick, so the timeout runs out
    /// up to one tick early. Election timeout and jitter are then whole ticks. Default: none
    /// (timers run from the instant the follower heard from its leader).
    #[serde(default)]
    pub tick: Option<LocalDur>,
    #[serde(default)]
    pub reads: RaftReads,
    /// `LeaseOrReadIndex` serves locally only while more than this much lease remains.
    #[serde(default)]
    pub max_clock_skew: LocalDur,
    #[serde(default)]
    pub lease_rule: RaftRule,
    #[serde(default)]
    pub lease_start: RaftLeaseStart,
    /// The leader steps down when it has not heard from a majority for an election timeout; and
    /// a leader, or a follower that heard from its leader less than an election timeout ago,
    /// ignores a campaign of a higher term not started by a leadership transfer (leader
    /// stickiness, as etcd and raft-rs tie it to CheckQuorum). Without it a campaign of a higher
    /// term always moves the replica to that term.
    #[serde(default = "yes")]
    pub check_quorum: bool,
    /// On a leadership transfer the old leader stops lease reads at once (TiKV), and takes them
    /// up again only when a round sent after the transfer ended renews its lease.
    #[serde(default = "yes")]
    pub transfer_suspect: bool,
    /// Elections start with a pre-vote (etcd's `PreVote`, raft-rs's `pre_vote`): a replica whose
    /// election timer runs out asks for the next term without moving to it, and campaigns only
    /// once a majority would vote for it. A group of any size may use it: one replica wins its
    /// own pre-vote, two need each other's as for the vote itself. Default false.
    #[serde(default)]
    pub pre_vote: bool,
}

fn yes() -> bool {
    true
}

impl Settings for RaftLeaderLease {
    const NAME: &'static str = "RaftLeaderLease";
    type Protocol = RaftProtocol;

    /// Options left out when not set, the skew when zero, `pre_vote` when off; every other
    /// field written.
    fn to_ron(&self) -> String {
        let mut f = vec![format!("election_timeout: \"{}\"", self.election_timeout)];
        if let Some(j) = self.election_jitter {
            f.push(format!("election_jitter: \"{j}\""));
        }
        if let Some(h) = self.heartbeat {
            f.push(format!("heartbeat: \"{h}\""));
        }
        if let Some(t) = self.tick {
            f.push(format!("tick: \"{t}\""));
        }
        f.push(format!("reads: {:?}", self.reads));
        if self.max_clock_skew != LocalDur::ZERO {
            f.push(format!("max_clock_skew: \"{}\"", self.max_clock_skew));
        }
        f.push(format!("lease_rule: {:?}", self.lease_rule));
        f.push(format!("lease_start: {:?}", self.lease_start));
        f.push(format!("check_quorum: {}", self.check_quorum));
        f.push(format!("transfer_suspect: {}", self.transfer_suspect));
        if self.pre_vote {
            f.push("pre_vote: true".into());
        }
        format!("RaftLeaderLease({})", f.join(", "))
    }

    fn build(&self) -> RaftProtocol {
        let et = self.election_timeout;
        RaftProtocol::new(
            RaftConfig {
                election_timeout: et,
                election_jitter: self.election_jitter.unwrap_or(et),
                heartbeat: self.heartbeat.unwrap_or(LocalDur::from_ns(et.ns() / 10)),
                tick: self.tick,
                reads: self.reads,
                max_clock_skew: self.max_clock_skew,
                lease_rule: self.lease_rule,
                lease_start: self.lease_start,
                check_quorum: self.check_quorum,
                transfer_suspect: self.transfer_suspect,
                pre_vote: self.pre_vote,
            },
            self.to_ron(),
        )
    }

    /// Its periods at least the shortest interval (1 us: heartbeat, election timeout, the
    /// jitter when not zero, tick) and the skew a margin under the lease, not negative. Their
    /// other bounds (positive, heartbeat below the election timeout, whole ticks) are checked
    /// with its roles.
    fn validate(&self, s: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        check::interval(&mut p, "strategy.election_timeout", self.election_timeout);
        for (at, d) in [
            ("strategy.election_jitter", self.election_jitter),
            ("strategy.heartbeat", self.heartbeat),
            ("strategy.tick", self.tick),
        ] {
            if let Some(d) = d {
                check::interval(&mut p, at, d);
            }
        }
        check::margin(
            &mut p,
            "strategy.max_clock_skew",
            self.max_clock_skew,
            s.lease.duration,
        );
        p
    }

    /// Per heartbeat, the leader's timer and a heartbeat to each of the n - 1 others with its
    /// ack: 2n - 1. Per election timeout, at worst every replica campaigns: a timer and a vote
    /// request and reply with each other, n (2n - 1), and with `pre_vote` a pre-vote request and
    /// reply with each other besides, n (4n - 3). With a tick, each replica's tick timer.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let n = s.nodes.len() as f64;
        let et = self.election_timeout;
        let round = 2.0 * n - 1.0;
        let campaign = if self.pre_vote { 4.0 * n - 3.0 } else { round };
        let heartbeat = self.heartbeat.unwrap_or(LocalDur::from_ns(et.ns() / 10));
        let ticks = self.tick.map_or(0.0, |t| check::per_second(n, t));
        check::per_second(round, heartbeat) + check::per_second(n * campaign, et) + ticks
    }

    /// Elections and heartbeats are its own settings: renewals and retries are not timed by
    /// the lease.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::TERM_ONLY
    }

    /// The skew is varied as epsilon, but the bound epsilon >= T*rho is not its.
    fn epsilon(&self) -> Option<Margin> {
        Some(Margin {
            field: "max_clock_skew",
            value: self.max_clock_skew,
            bounds_drift: false,
        })
    }

    /// These settings with one field changed at a time: each other read path (Lease,
    /// ReadIndex, LeaseOrReadIndex), the other lease rule (HeartbeatQuorum or etcd's
    /// CheckQuorumOnly), `transfer_suspect` turned over, the other lease start (OnSend, or
    /// OnAck: the bug), and with a `tick`, timers not counted in ticks; each labelled with what
    /// changed. One equal to these settings is dropped by the caller.
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        let with = |what: &str, f: &dyn Fn(&mut RaftLeaderLease)| {
            let mut s = *self;
            f(&mut s);
            (s, format!("the scenario's Raft settings, {what}"))
        };
        let mut variants = vec![
            with("reads: Lease", &|s| s.reads = RaftReads::Lease),
            with("reads: ReadIndex", &|s| s.reads = RaftReads::ReadIndex),
            with("reads: LeaseOrReadIndex", &|s| {
                s.reads = RaftReads::LeaseOrReadIndex
            }),
            with("the other lease rule", &|s| {
                s.lease_rule = match s.lease_rule {
                    RaftRule::HeartbeatQuorum => RaftRule::CheckQuorumOnly,
                    RaftRule::CheckQuorumOnly => RaftRule::HeartbeatQuorum,
                }
            }),
            with("transfer_suspect turned over", &|s| {
                s.transfer_suspect = !s.transfer_suspect
            }),
            with("the other lease start", &|s| {
                s.lease_start = match s.lease_start {
                    RaftLeaseStart::OnSend => RaftLeaseStart::OnAck,
                    RaftLeaseStart::OnAck => RaftLeaseStart::OnSend,
                }
            }),
        ];
        if self.tick.is_some() {
            variants.push(with("timers not counted in ticks", &|s| s.tick = None));
        }
        Some(variants)
    }
}
