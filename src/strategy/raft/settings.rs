//! `RaftLeaderLease`'s settings as a scenario writes them: election timing, the heartbeat, an
//! optional tick, how the leader serves reads and what makes its lease, or a `system` whose
//! defaults fill every field not written. Its fields are checked with its roles
//! ([`Protocol::check`](crate::strategy::Protocol::check) of [`super::RaftLeaderLease`]).

use super::{RaftConfig, RaftLeaderLease as RaftProtocol};
use crate::msg::NodeId;
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
    /// TiKV: the local propose time of the newest proposal (an entry of the leader's term, or
    /// a ReadIndex round) a majority acknowledged, plus T. Heartbeats renew nothing.
    ProposalQuorum,
}

/// What a ReadIndex read that reaches a leader before its term's first commit gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReadBeforeCommit {
    /// Held, and confirmed by a round started once the first entry commits (etcd).
    #[default]
    Hold,
    /// Refused: the client tries again (raft-rs, so TiKV).
    Reject,
}

/// A real system whose defaults fill the fields a scenario does not write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RaftSystem {
    /// No system: the fields' own defaults, and `election_timeout` must be written.
    #[default]
    Custom,
    /// etcd 3.5.
    Etcd,
    /// TiKV 7.x.
    TiKV,
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

/// A Raft group whose elected leader holds the lease: TiKV, etcd, CockroachDB. Read from the
/// fields as written ([`Written`]): a `system`'s defaults, then each field written over them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Written")]
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
    pub check_quorum: bool,
    /// On a leadership transfer the old leader stops lease reads at once (TiKV), and takes them
    /// up again only when a round sent after the transfer ended renews its lease.
    pub transfer_suspect: bool,
    // Presets, TiKV's proposal lease, reads before the first commit.
    /// The system whose defaults the fields not written took.
    pub system: RaftSystem,
    /// `ProposalQuorum`: every `renew_ahead` the leader checks its lease, and if it ends within
    /// `renew_ahead`, starts a ReadIndex round to renew it. Default (`None`): T/4 under
    /// `ProposalQuorum`, none otherwise; zero turns it off.
    pub renew_ahead: Option<LocalDur>,
    pub read_before_commit: ReadBeforeCommit,
    /// Elections start with a pre-vote (etcd's `PreVote`, raft-rs's `pre_vote`): a replica whose
    /// election timer runs out asks for the next term without moving to it, and campaigns only
    /// once a majority would vote for it. A group of any size may use it: one replica wins its
    /// own pre-vote, two need each other's as for the vote itself. Default false.
    pub pre_vote: bool,
    /// Followers serve reads too, each confirmed by the leader: a follower forwards the read
    /// (`ReadIndex`), the leader answers with its commit index once its read path confirms it
    /// still leads, and the follower serves the read when it has committed that far (etcd
    /// serves linearizable reads at every member so; TiKV's follower read). Default false:
    /// followers reject reads.
    pub follower_reads: bool,
}

/// The fields as a scenario writes them: any left out takes the `system`'s default.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename = "RaftLeaderLease")]
pub struct Written {
    #[serde(default)]
    system: RaftSystem,
    election_timeout: Option<LocalDur>,
    election_jitter: Option<LocalDur>,
    heartbeat: Option<LocalDur>,
    tick: Option<LocalDur>,
    reads: Option<RaftReads>,
    max_clock_skew: Option<LocalDur>,
    lease_rule: Option<RaftRule>,
    lease_start: Option<RaftLeaseStart>,
    check_quorum: Option<bool>,
    transfer_suspect: Option<bool>,
    renew_ahead: Option<LocalDur>,
    read_before_commit: Option<ReadBeforeCommit>,
    pre_vote: Option<bool>,
    follower_reads: Option<bool>,
}

impl RaftSystem {
    /// The system's defaults, election timeout included (none for `Custom`, which has none).
    /// etcd 3.5: a 100 ms tick, an election timeout of 10 ticks drawn from [10, 20), a heartbeat
    /// every tick, check-quorum and pre-vote on, ReadIndex reads (its lease-based reads have no
    /// clock lease), reads before the first commit held. TiKV 7.x: a 1 s tick, 10 ticks drawn
    /// from [10, 20), a heartbeat every 2 ticks, the lease renewed by proposals ahead of its end
    /// (T/4 by default), lease reads while it holds else ReadIndex, no skew margin, the lease
    /// suspect during a transfer, check-quorum and pre-vote on, reads before the first commit
    /// refused (raft-rs drops them).
    fn defaults(self) -> (Option<LocalDur>, RaftLeaderLease) {
        let ms = |n: i64| Some(LocalDur::from_ns(n * 1_000_000));
        let custom = RaftLeaderLease {
            election_timeout: LocalDur::ZERO,
            election_jitter: None,
            heartbeat: None,
            tick: None,
            reads: RaftReads::Lease,
            max_clock_skew: LocalDur::ZERO,
            lease_rule: RaftRule::HeartbeatQuorum,
            lease_start: RaftLeaseStart::OnSend,
            check_quorum: true,
            transfer_suspect: true,
            system: self,
            renew_ahead: None,
            read_before_commit: ReadBeforeCommit::Hold,
            pre_vote: false,
            follower_reads: false,
        };
        match self {
            RaftSystem::Custom => (None, custom),
            RaftSystem::Etcd => (
                ms(1000),
                RaftLeaderLease {
                    election_jitter: ms(1000),
                    heartbeat: ms(100),
                    tick: ms(100),
                    reads: RaftReads::ReadIndex,
                    lease_rule: RaftRule::CheckQuorumOnly,
                    transfer_suspect: false,
                    pre_vote: true,
                    ..custom
                },
            ),
            RaftSystem::TiKV => (
                ms(10_000),
                RaftLeaderLease {
                    election_jitter: ms(10_000),
                    heartbeat: ms(2000),
                    tick: ms(1000),
                    reads: RaftReads::LeaseOrReadIndex,
                    lease_rule: RaftRule::ProposalQuorum,
                    read_before_commit: ReadBeforeCommit::Reject,
                    pre_vote: true,
                    ..custom
                },
            ),
        }
    }

    /// The lease rules and read paths the system has; a preset with another is a different
    /// system (write `system: Custom`).
    fn mechanisms(self) -> Option<(&'static [RaftRule], &'static [RaftReads])> {
        match self {
            RaftSystem::Custom => None,
            RaftSystem::Etcd => Some((
                &[RaftRule::CheckQuorumOnly],
                &[RaftReads::ReadIndex, RaftReads::Lease],
            )),
            RaftSystem::TiKV => Some((&[RaftRule::ProposalQuorum], &[RaftReads::LeaseOrReadIndex])),
        }
    }
}

impl TryFrom<Written> for RaftLeaderLease {
    type Error = String;

    /// The system's defaults with every written field over them.
    fn try_from(w: Written) -> Result<RaftLeaderLease, String> {
        let (timeout, d) = w.system.defaults();
        let election_timeout = w.election_timeout.or(timeout).ok_or_else(|| {
            "strategy.election_timeout: missing (write it, or a system: Etcd or TiKV, whose \
             default it takes)"
                .to_string()
        })?;
        Ok(RaftLeaderLease {
            election_timeout,
            election_jitter: w.election_jitter.or(d.election_jitter),
            heartbeat: w.heartbeat.or(d.heartbeat),
            tick: w.tick.or(d.tick),
            reads: w.reads.unwrap_or(d.reads),
            max_clock_skew: w.max_clock_skew.unwrap_or(d.max_clock_skew),
            lease_rule: w.lease_rule.unwrap_or(d.lease_rule),
            lease_start: w.lease_start.unwrap_or(d.lease_start),
            check_quorum: w.check_quorum.unwrap_or(d.check_quorum),
            transfer_suspect: w.transfer_suspect.unwrap_or(d.transfer_suspect),
            system: w.system,
            renew_ahead: w.renew_ahead.or(d.renew_ahead),
            read_before_commit: w.read_before_commit.unwrap_or(d.read_before_commit),
            pre_vote: w.pre_vote.unwrap_or(d.pre_vote),
            follower_reads: w.follower_reads.unwrap_or(d.follower_reads),
        })
    }
}

impl RaftLeaderLease {
    /// The settings `text` (a strategy's RON) reads as.
    fn read_back(text: &str) -> Result<RaftLeaderLease, String> {
        crate::scenario::ron_options()
            .from_str(text)
            .map_err(|e| e.to_string())
    }

    /// The lease is renewed ahead every this long (zero: never), under a lease of `lease`.
    pub fn renew_ahead_for(&self, lease: LocalDur) -> LocalDur {
        super::renew_ahead(self.lease_rule, self.renew_ahead, lease)
    }
}

impl Settings for RaftLeaderLease {
    const NAME: &'static str = "RaftLeaderLease";
    type Protocol = RaftProtocol;

    /// Every field written, but the system when `Custom` and the options not set (no system
    /// sets them: left out, they read back unset). So the text reads back as the same settings
    /// under any system, each field a value the system's default cannot replace.
    fn to_ron(&self) -> String {
        let mut f = Vec::new();
        if self.system != RaftSystem::Custom {
            f.push(format!("system: {:?}", self.system));
        }
        f.push(format!("election_timeout: \"{}\"", self.election_timeout));
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
        f.push(format!("max_clock_skew: \"{}\"", self.max_clock_skew));
        f.push(format!("lease_rule: {:?}", self.lease_rule));
        f.push(format!("lease_start: {:?}", self.lease_start));
        f.push(format!("check_quorum: {}", self.check_quorum));
        f.push(format!("transfer_suspect: {}", self.transfer_suspect));
        if let Some(d) = self.renew_ahead {
            f.push(format!("renew_ahead: \"{d}\""));
        }
        f.push(format!("read_before_commit: {:?}", self.read_before_commit));
        f.push(format!("pre_vote: {}", self.pre_vote));
        // No system turns it on: left out, it reads back off.
        if self.follower_reads {
            f.push("follower_reads: true".into());
        }
        let text = format!("RaftLeaderLease({})", f.join(", "));
        debug_assert!(
            Self::read_back(&text).as_ref() == Ok(self),
            "{text} reads back as other settings"
        );
        text
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
                renew_ahead: self.renew_ahead,
                read_before_commit: self.read_before_commit,
                pre_vote: self.pre_vote,
                follower_reads: self.follower_reads,
            },
            self.to_ron(),
        )
    }

    /// Each replica may run settings of its own: a rolling upgrade's mixed fleet (etcd-io/raft's
    /// `TestPreVoteMigration*`: some replicas with pre-vote, some without).
    fn build_nodes(&self, nodes: &[(NodeId, Self)]) -> Option<RaftProtocol> {
        let own = nodes.iter().map(|(n, s)| (*n, s.build().config()));
        Some(self.build().with_own(own.collect()))
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
        self.validate_renewal_and_system(&mut p, s.lease.duration);
        p
    }

    /// Per heartbeat, the leader's timer and a heartbeat to each of the n - 1 others with its
    /// ack: 2n - 1. Per election timeout, at worst every replica campaigns: a timer and a vote
    /// request and reply with each other, n (2n - 1), and with `pre_vote` a pre-vote request and
    /// reply with each other besides, n (4n - 3). With a tick, each replica's tick timer.
    /// Renewing ahead, the leader's check and at most one round per check: 2n.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let n = s.nodes.len() as f64;
        let et = self.election_timeout;
        let round = 2.0 * n - 1.0;
        let campaign = if self.pre_vote { 4.0 * n - 3.0 } else { round };
        let heartbeat = self.heartbeat.unwrap_or(LocalDur::from_ns(et.ns() / 10));
        let ticks = self.tick.map_or(0.0, |t| check::per_second(n, t));
        let renew = check::per_second(round + 1.0, self.renew_ahead_for(s.lease.duration));
        check::per_second(round, heartbeat) + check::per_second(n * campaign, et) + ticks + renew
    }

    /// Elections and heartbeats are its own settings: renewals and retries are not timed by
    /// the lease. A scenario may name the replica that leads first.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields {
            initial_leader: true,
            ..LeaseFields::TERM_ONLY
        }
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
    /// CheckQuorumOnly; TiKV's ProposalQuorum's other is HeartbeatQuorum), `transfer_suspect` turned over, the other lease start (OnSend, or
    /// OnAck: the bug), `pre_vote` and `check_quorum` turned over, and with a `tick`, timers not
    /// counted in ticks; each labelled with what changed. One equal to these settings is dropped by the caller.
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        // A variant is no longer the preset's system: it keeps the resolved fields as written.
        let with = |what: &str, f: &dyn Fn(&mut RaftLeaderLease)| {
            let mut s = *self;
            s.system = RaftSystem::Custom;
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
                    RaftRule::CheckQuorumOnly | RaftRule::ProposalQuorum => {
                        RaftRule::HeartbeatQuorum
                    }
                };
                // Renewing ahead is the proposal rule's alone.
                if s.lease_rule != RaftRule::ProposalQuorum {
                    s.renew_ahead = None;
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
        variants.push(with("pre_vote turned over", &|s| s.pre_vote = !s.pre_vote));
        variants.push(with("check_quorum turned over", &|s| {
            s.check_quorum = !s.check_quorum
        }));
        if self.tick.is_some() {
            variants.push(with("timers not counted in ticks", &|s| s.tick = None));
        }
        Some(variants)
    }
}

impl RaftLeaderLease {
    /// `renew_ahead` at least the shortest interval when on, not negative, shorter than the
    /// lease (a leader would renew at every check, however fresh its lease) and only under
    /// `ProposalQuorum` (no other rule renews by proposals); under a preset, a lease rule and
    /// read path its system has, and leases counted from the send time (neither system counts
    /// from the acknowledgement); under TiKV, a lease no longer than the election timeout less
    /// a tick, as TiKV's own check refuses. A preset's numbers (timings, tick, skew,
    /// check-quorum, pre-vote, renew_ahead, reads before the first commit, transfer_suspect)
    /// are overrides, whatever their values.
    fn validate_renewal_and_system(&self, p: &mut Vec<String>, lease: LocalDur) {
        if let Some(d) = self.renew_ahead {
            check::interval(p, "strategy.renew_ahead", d);
            if d < LocalDur::ZERO {
                p.push(format!(
                    "strategy.renew_ahead: must not be negative (got {d})"
                ));
            } else if d >= lease && d > LocalDur::ZERO {
                p.push(format!(
                    "strategy.renew_ahead: {d} must be shorter than the lease ({lease}), or the \
                     leader renews at every check"
                ));
            }
            if d > LocalDur::ZERO && self.lease_rule != RaftRule::ProposalQuorum {
                p.push(format!(
                    "strategy.renew_ahead: only lease_rule: ProposalQuorum renews ahead (got \
                     {d} with {:?}; \"0s\" or leave it out)",
                    self.lease_rule
                ));
            }
        }
        let Some((rules, reads)) = self.system.mechanisms() else {
            return;
        };
        let system = self.system;
        if !rules.contains(&self.lease_rule) {
            p.push(format!(
                "strategy.lease_rule: {system:?} has {rules:?}, not {:?} (write system: Custom \
                 for another system)",
                self.lease_rule
            ));
        }
        if !reads.contains(&self.reads) {
            p.push(format!(
                "strategy.reads: {system:?} reads by {reads:?}, not {:?} (write system: Custom \
                 for another system)",
                self.reads
            ));
        }
        if self.lease_start != RaftLeaseStart::OnSend {
            p.push(format!(
                "strategy.lease_start: {system:?} counts the lease from the send time (OnSend), \
                 not {:?} (write system: Custom for another system)",
                self.lease_start
            ));
        }
        // TiKV's raftstore `Config::validate`: "lease should not be greater than election
        // timeout - 1 tick" (a follower's tick count may run out up to a tick early).
        if let (RaftSystem::TiKV, Some(tick)) = (system, self.tick) {
            let et = self.election_timeout;
            if lease > et - tick {
                p.push(format!(
                    "lease.duration: TiKV refuses a leader lease ({lease}) greater than the \
                     election timeout ({et}) minus one tick ({tick}); at most {}",
                    et - tick
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each field with each value it may take (durations in the form they print).
    const FIELDS: &[(&str, &[&str])] = &[
        ("election_timeout", &["\"2s\"", "\"3s\""]),
        ("election_jitter", &["\"0s\"", "\"500ms\""]),
        ("heartbeat", &["\"100ms\"", "\"200ms\""]),
        ("tick", &["\"100ms\"", "\"1s\""]),
        ("reads", &["Lease", "ReadIndex", "LeaseOrReadIndex"]),
        ("max_clock_skew", &["\"0s\"", "\"250ms\""]),
        (
            "lease_rule",
            &["HeartbeatQuorum", "CheckQuorumOnly", "ProposalQuorum"],
        ),
        ("lease_start", &["OnSend", "OnAck"]),
        ("check_quorum", &["true", "false"]),
        ("transfer_suspect", &["true", "false"]),
        ("renew_ahead", &["\"0s\"", "\"1s\""]),
        ("read_before_commit", &["Hold", "Reject"]),
        ("pre_vote", &["true", "false"]),
        // Off in every system, and left out of the line when off (it reads back off).
        ("follower_reads", &["true"]),
    ];

    /// Every field of every system, written beside the system with each value it may take
    /// (the system's own default included), is that value in the settings, in the strategy
    /// line, and in the settings that line reads back as. A preset that filled a field the
    /// file wrote, or a line that left out a value the preset would replace, fails here.
    #[test]
    fn a_written_field_wins_over_every_preset_whatever_its_value() {
        for system in ["Custom", "Etcd", "TiKV"] {
            for &(field, values) in FIELDS {
                for value in values {
                    // `Custom` has no election timeout of its own.
                    let timeout = match (system, field) {
                        ("Custom", f) if f != "election_timeout" => ", election_timeout: \"2s\"",
                        _ => "",
                    };
                    let text =
                        format!("RaftLeaderLease(system: {system}{timeout}, {field}: {value})");
                    let settings = RaftLeaderLease::read_back(&text).expect(&text);
                    let line = Settings::to_ron(&settings);
                    assert!(
                        line.contains(&format!("{field}: {value}")),
                        "{text} -> {line}"
                    );
                    assert_eq!(RaftLeaderLease::read_back(&line), Ok(settings), "{line}");
                    let built = Settings::build(&settings);
                    assert_eq!(crate::strategy::Protocol::describe(&built), line);
                }
            }
        }
    }

    /// The fields a preset sets, left out, take the preset's values: the etcd preset has
    /// pre-vote and holds reads before its first commit; TiKV's has pre-vote and refuses them.
    #[test]
    fn a_field_left_out_takes_the_preset_s_value() {
        let read = |t: &str| RaftLeaderLease::read_back(t).unwrap();
        let etcd = read("RaftLeaderLease(system: Etcd)");
        assert!(etcd.pre_vote && etcd.read_before_commit == ReadBeforeCommit::Hold);
        assert_eq!(etcd.election_timeout, LocalDur::from_ns(1_000_000_000));
        let tikv = read("RaftLeaderLease(system: TiKV)");
        assert!(tikv.pre_vote && tikv.read_before_commit == ReadBeforeCommit::Reject);
        assert_eq!(tikv.tick, Some(LocalDur::from_ns(1_000_000_000)));
        let custom = read("RaftLeaderLease(election_timeout: \"2s\")");
        assert!(!custom.pre_vote && custom.read_before_commit == ReadBeforeCommit::Hold);
        for s in [etcd, tikv, custom] {
            assert!(!s.follower_reads);
            let off = format!(
                "{}, follower_reads: false)",
                Settings::to_ron(&s).trim_end_matches(')')
            );
            assert_eq!(read(&off), s, "{off}");
        }
    }
}
