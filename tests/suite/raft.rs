//! `RaftLeaderLease`: Raft's rules under random schedules, and the bundled stories' figures
//! checked against the times the runs themselves report.

use leasesim::msg::NodeId;
use leasesim::scenario::{library, load};
use leasesim::trace::{Observer, TraceEvent, TraceKind};
use proptest::prelude::*;
use std::collections::BTreeMap;

use crate::common::scenario;

/// Who was made leader of which term, at what true time (Grant events: the token is the term).
#[derive(Default)]
struct Leaders {
    by_term: BTreeMap<u64, Vec<(NodeId, i64)>>,
}

impl Observer for Leaders {
    fn event(&mut self, e: &TraceEvent) {
        if let TraceKind::Grant { token, to, .. } = e.kind {
            self.by_term.entry(token).or_default().push((to, e.t.ns()));
        }
    }
}

/// Runs bundled scenario `name`, recording who was made leader of each term.
fn run_bundled_with_leaders(name: &str) -> (leasesim::Outcome, Leaders) {
    let s = load::from_text(name, library::text(name).unwrap()).unwrap();
    let mut leaders = Leaders::default();
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let out = leasesim::run_with(name, &s, strategy, Some(&mut leaders)).unwrap();
    (out, leaders)
}

fn group(strategy: &str, seed: u64, nodes: usize, faults: &str) -> String {
    let names: Vec<String> = (1..=nodes)
        .map(|i| format!("(name: \"r{i}\", role: Replica)"))
        .collect();
    format!(
        r#"Scenario(
            seed: {seed},
            duration: "120s",
            lease: (duration: "900ms"),
            strategy: {strategy},
            nodes: [{}],
            network: (delay: Uniform(min: "1ms", max: "20ms"), loss: 0.01, duplicate: 0.01),
            workload: (reads_per_second: 20.0, writes_per_second: 10.0),
            random_faults: [{faults}],
        )"#,
        names.join(", ")
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// One leader per term, and no committed write is ever lost or replaced (the harm oracle
    /// panics if a log index is committed under two terms), whatever the partitions, pauses,
    /// crashes and message loss. With no drift, a lease of 900 ms from a round's send time ends
    /// before any follower that acknowledged the round can vote (1 s after it received it), so
    /// lease reads never overlap, and a new leader commits nothing before its lease starts,
    /// so no lease read is stale; ReadIndex reads hold no lease at all, and see every write
    /// committed before they began.
    #[test]
    fn raft_elects_one_leader_per_term_and_never_loses_a_commit(
        seed in any::<u64>(),
        five in any::<bool>(),
        read_index in any::<bool>(),
    ) {
        let reads = if read_index { "ReadIndex" } else { "Lease" };
        let strategy = format!(
            "RaftLeaderLease(election_timeout: \"1s\", heartbeat: \"100ms\", reads: {reads})"
        );
        let faults = "Partitions(per_hour: 240.0, duration: Uniform(min: \"100ms\", max: \"5s\")), \
                      Pauses(per_minute: 4.0, duration: Exponential(mean: \"500ms\"), kind: Gc), \
                      Crashes(per_hour: 120.0, restart_after: Uniform(min: \"100ms\", max: \"3s\"))";
        let text = group(&strategy, seed, if five { 5 } else { 3 }, faults);
        let s = scenario(&text);
        let mut leaders = Leaders::default();
        let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
        let out = leasesim::run_with("raft", &s, strategy, Some(&mut leaders)).unwrap();
        for (term, who) in &leaders.by_term {
            prop_assert_eq!(who.len(), 1, "term {} had leaders {:?}", term, who);
        }
        prop_assert!(out.summary.grants >= 1);
        // A ReadIndex read is judged as of when it was taken up (a write that commits while it
        // waits for its round does not make it stale), so no read of either kind is stale.
        prop_assert_eq!(out.summary.stale_reads, 0);
        prop_assert_eq!(out.summary.overlap.count, 0);
        prop_assert_eq!(out.summary.unsafe_writes, 0);
    }
}

/// `raft-tikv-drift-beyond-bound`: the overlap is [s + 1 ms + (10 s + j) / 1.06 + 4 ms,
/// s + 9 s / 0.94), where s is the send time of r1's last acknowledged round and the new
/// leader's Grant (its election) is at s + 1 ms + (10 s + j) / 1.06 + 2 ms. Both ends are
/// checked against the times of the run's own events, not against the figures it prints.
#[test]
fn the_drift_overlap_runs_from_the_new_leaders_first_commit_to_the_old_lease_end() {
    let name = "raft-tikv-drift-beyond-bound";
    let (out, leaders) = run_bundled_with_leaders(name);
    let o = &out.summary.overlap.intervals[0];
    let (_, elected) = leaders.by_term[&2][0];
    // The new leader's first entry commits a round trip (2 ms, no drift on the network) after
    // its election: its read lease starts there.
    assert_eq!(o.start_ns, elected + 2_000_000);
    // r1, the initial leader, campaigned at 0 and was elected at 2 ms (votes back after a
    // round trip); it sends a round every second of its clock from then on, round k at true
    // (m_first + k s) / 0.94. The last before the partition at 30 s, acknowledged 2 ms later,
    // is k = 28: (0.00188 + 28) / 0.94 + 0.002 = 29.791 s < 30 s, while k = 29 goes out at
    // 30.853 s. Its lease ends when its clock reads m_first + 28 s + 9 s.
    let (r1, first) = leaders.by_term[&1][0];
    assert_eq!((r1, first), (0, 2_000_000));
    // r1's clock runs at 0.94 from 0: reading m at true t = floor(0.94 t).
    let m_first = first * 94 / 100;
    let m_end = m_first + 28_000_000_000 + 9_000_000_000;
    // The first true ns at which floor(0.94 t) >= m_end: ceil(m_end / 0.94).
    let end = (m_end * 100 + 93) / 94;
    assert_eq!(o.end_ns, end);
    // The formula of the scenario's comment: 135.506 ms - j / 1.06 with j in [0, 100 ms).
    let size = o.end_ns - o.start_ns;
    assert!((41_166_000..=135_506_000).contains(&size), "{size}");
}

/// `raft-tikv-tick-quantisation` (derivation in the scenario): r1's last acknowledged round
/// before the partition at 39 s was sent at s = its election + a whole number of seconds (r1
/// has no drift), so its lease ends at s + 9 s; r3 campaigns at its 10th tick and its read lease
/// starts when its first entry commits, 2 ms after its election. Both ends are taken from the
/// run's own events. The same run without `tick` is safe: r3 campaigns no earlier than
/// 38.003 s + 10 s / 1.002 = 47.983040 s and serves from 4 ms later, so the slack is at least
/// 47.987040 - 47.002 s = 985.04 ms.
#[test]
fn ticks_eat_the_election_margin() {
    let name = "raft-tikv-tick-quantisation";
    let (out, leaders) = run_bundled_with_leaders(name);
    let (r1, elected_r1) = leaders.by_term[&1][0];
    assert_eq!(r1, 0);
    // Rounds go out at the election and every second after; the last acknowledged one (2 ms
    // round trip) before 39 s.
    let sent =
        elected_r1 + (39_000_000_000 - 2_000_000 - elected_r1) / 1_000_000_000 * 1_000_000_000;
    assert_eq!(sent, 38_002_000_000);
    let (r3, elected_r3) = leaders.by_term[&2][0];
    assert_eq!(r3, 2);
    assert_eq!(elected_r3, 46_991_147_705);
    let o = &out.summary.overlap.intervals;
    assert_eq!(o.len(), 1);
    assert_eq!(
        (o[0].start_ns, o[0].end_ns),
        (elected_r3 + 2_000_000, sent + 9_000_000_000)
    );
    assert_eq!(o[0].end_ns - o[0].start_ns, 8_852_295);

    let text = library::text(name).unwrap().replace("tick: \"1s\",", "");
    let s = crate::common::scenario(&text);
    let out = leasesim::run(name, &s).unwrap().summary;
    assert_eq!(out.overlap.count, 0);
    assert!(
        out.min_slack_ns.unwrap() >= 985_040_000,
        "{:?}",
        out.min_slack_ns
    );

    // Timers count whole ticks: an election timeout of 10.5 ticks is refused.
    let text = library::text(name)
        .unwrap()
        .replace("election_timeout: \"10s\"", "election_timeout: \"10500ms\"");
    let err = load::from_text(name, &text).unwrap_err().to_string();
    assert!(
        err.contains("strategy.election_timeout: must be a whole number of ticks of 1s"),
        "{err}"
    );
}

/// `StepDown` ends the leader's beliefs at once; a base-protocol scenario may not give it.
#[test]
fn step_down_ends_leadership_at_once_and_only_raft_takes_it() {
    let text = r#"Scenario(
        duration: "60s",
        lease: (duration: "9s"),
        strategy: RaftLeaderLease(election_timeout: "10s", election_jitter: "100ms", heartbeat: "1s"),
        nodes: [(name: "r1", role: Replica), (name: "r2", role: Replica, start: "2s"),
                (name: "r3", role: Replica, start: "2s")],
        network: (delay: Fixed("1ms")),
        faults: [StepDown(node: "r1", at: "30s")],
    )"#;
    let s = scenario(text);
    let (out, timeline) = leasesim::run_recorded("step-down", &s).unwrap();
    // r1 led from its election until the step-down at 30 s exactly, in both authorities.
    let last = |v: &[leasesim::oracle::Piece]| v.last().map(|p| p.end.ns());
    assert_eq!(last(&timeline.beliefs[0]), Some(30_000_000_000));
    assert_eq!(last(&timeline.read_beliefs[0]), Some(30_000_000_000));
    // Someone leads again: a follower campaigns 10 s + jitter after it last heard r1 (its last
    // heartbeat, before 30 s), so within [30 s, 40.2 s].
    assert_eq!(out.summary.grants, 2);
    assert_eq!(out.summary.overlap.count, 0);

    let base = r#"Scenario(
        duration: "10s",
        lease: (duration: "1s"),
        strategy: TwoSided(holder_margin: "10ms"),
        nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
        faults: [StepDown(node: "a", at: "1s"), TransferLeader(at: "2s", to: "a")],
    )"#;
    let s = scenario(base);
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let problems = leasesim::scenario::validate::validate_with(&s, &*strategy);
    let want = |i: usize, name: &str| {
        format!(
            "faults[{i}]: {name} is an instruction to a leader, which \
             TwoSided(holder_margin: \"10ms\") does not take (it takes: none)"
        )
    };
    assert!(problems.contains(&want(0, "StepDown")), "{problems:#?}");
    assert!(
        problems.contains(&want(1, "TransferLeader")),
        "{problems:#?}"
    );
}

/// The failover record of `raft-etcd-check-quorum-only`: r2 is made leader at 11.293536676 s
/// and serves reads from its first commit, 11.295536676 s; r1 goes on serving lease reads until
/// it steps down at 12.237726979 s (derived in the scenario), so its last read falls after r2's
/// first. Under `raft-transfer-suspect` the old leader's last read comes before the transfer at
/// 30 s and the new one's first after 30.005 s.
#[test]
fn failover_records_say_when_reads_and_writes_resume() {
    let run = |name: &str| {
        let s = load::from_text(name, library::text(name).unwrap()).unwrap();
        leasesim::run(name, &s).unwrap().summary
    };
    let s = run("raft-etcd-check-quorum-only");
    assert_eq!(s.failovers.len(), 1);
    let f = &s.failovers[0];
    assert_eq!((f.from.as_str(), f.to.as_str()), ("r1", "r2"));
    assert_eq!(f.at_ns, 11_293_536_676);
    let new_read = f.new_first_read_ns.unwrap();
    let old_read = f.old_last_read_ns.unwrap();
    assert!(new_read >= 11_295_536_676, "{new_read}");
    assert!(
        old_read > new_read && old_read < 12_237_726_979,
        "{old_read}"
    );
    // r2's writes commit from its first entry's commit on; r1's last before the partition.
    assert!(f.new_first_write_ns.unwrap() >= 11_295_536_676);
    assert!(f.old_last_write_ns.unwrap() < 10_250_000_000 + 2_000_000);

    let s = run("raft-transfer-suspect");
    let f = &s.failovers[0];
    assert_eq!(f.at_ns, 30_003_000_000);
    assert!(f.old_last_read_ns.unwrap() < 30_000_000_000);
    assert!(f.new_first_read_ns.unwrap() >= 30_005_000_000);
}

/// How reads are served. Every link takes exactly 1 ms, and a majority of three is the leader
/// and one follower, so a confirmation round takes 1 ms out and 1 ms back.
/// - `raft-etcd-read-index`: every read is a ReadIndex read. One that finds no round out starts
///   one and waits exactly 2 ms; one that arrives at t while a round started at t0 is out
///   (t0 < t < t0 + 2 ms) waits for that round and the next, until at most t0 + 4 ms: less than
///   4 ms. At 200 reads/s at the leader a round is out for less than half the time, so the
///   median is the round trip (within the histogram's 1%). The cut-off r1 admits reads until it
///   steps down and never serves them.
/// - `raft-etcd-check-quorum-only`: every read is a lease read, served at once.
#[test]
fn reads_are_served_locally_or_after_one_or_two_round_trips() {
    let run = |name: &str| {
        let s = load::from_text(name, library::text(name).unwrap()).unwrap();
        leasesim::run(name, &s).unwrap().summary.requests
    };
    const MS: u64 = 1_000_000;
    let r = run("raft-etcd-read-index");
    assert_eq!(r.reads_served_local, 0);
    assert_eq!(r.reads_served_confirmed, r.reads_served);
    assert!(r.reads_served > 1000, "{r:?}");
    assert!(r.reads_admitted > r.reads_served, "{r:?}");
    let w = r.confirmed_read_wait.unwrap();
    assert!(
        (2 * MS..=2 * MS + 2 * MS / 100).contains(&w.p50_ns),
        "{w:?}"
    );
    assert!(w.mean_ns > 2 * MS && w.mean_ns < 4 * MS, "{w:?}");
    assert!(w.max_ns > 2 * MS && w.max_ns < 4 * MS, "{w:?}");
    assert!(w.p99_ns >= w.p50_ns && w.p99_ns <= w.max_ns, "{w:?}");

    let r = run("raft-etcd-check-quorum-only");
    assert_eq!(r.reads_served_confirmed, 0);
    assert_eq!(r.reads_served_local, r.reads_served);
    assert_eq!(r.confirmed_read_wait, None);
}

/// A sweep over rho of `raft-tikv-drift-beyond-bound` (placement `Adversarial`: r1 at -rho/2,
/// r2 and r3 at +rho/2, x = rho/2) crosses the bound. r1's lease from a round sent at s ends at
/// s + 9 s / (1 - x); the first follower to time out hears the round at s + 1 ms, campaigns
/// (10 s + j) / (1 + x) later (j in [0, 100 ms)), and serves from 4 ms after that. An overlap
/// needs 9 / (1 - x) - (10 + j) / (1 + x) > 5 ms:
/// - rho = 10.5 % (x = 0.0525): 9.498681 - 9.501188 s < 0 even at j = 0: never.
/// - rho = 11.6 % (x = 0.058): 9.554140 - (10.1 s) / 1.058 = 9.554140 - 9.546314 = 7.8 ms > 5 ms
///   even at j = 100 ms: always.
///
/// Writes are turned off: a write's append after the last round also restarts the followers'
/// timers (later than s + 1 ms), which only adds margin, so "always" needs them gone.
#[test]
fn a_sweep_of_rho_crosses_the_bound() {
    let rows = sweep_drift_scenario(
        "raft-rho-sweep",
        &[
            "--vary",
            "rho=105000,116000",
            "--vary",
            "workload.writes_per_second=0",
            "--seeds",
            "4",
        ],
    );
    assert_eq!(rows.len(), 2);
    // rho, writes_per_second, runs, overlap_runs
    assert_eq!(&rows[0][..4], ["105000", "0", "4", "0"]);
    assert_eq!(&rows[1][..4], ["116000", "0", "4", "4"]);
}

/// Sweeps `raft-tikv-drift-beyond-bound` with `args` into a fresh `test` directory; the rows of
/// its results.csv, split into fields, header left out.
fn sweep_drift_scenario(test: &str, args: &[&str]) -> Vec<Vec<String>> {
    let dir = crate::common::workdir(test);
    let mut all = vec!["sweep", "raft-tikv-drift-beyond-bound"];
    all.extend(args);
    all.extend(["--out", dir.to_str().unwrap()]);
    let out = crate::common::leasesim(&all, &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(dir.join("raft-tikv-drift-beyond-bound-sweep/results.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// A sweep over the election timeout of `raft-tikv-drift-beyond-bound` crosses the bound: with
/// ET = 10 s the followers' timeout, (10 s + j) / 1.06 <= 9.53 s, falls inside the leader's
/// lease of 9 s / 0.94 = 9.574 s (an overlap on every seed); with ET = 11 s it is at least
/// 11 s / 1.06 = 10.377 s, after the lease (none).
#[test]
fn a_sweep_of_the_election_timeout_crosses_the_bound() {
    let rows = sweep_drift_scenario(
        "raft-sweep",
        &[
            "--vary",
            "strategy.election_timeout=10s,11s",
            "--seeds",
            "3",
        ],
    );
    assert_eq!(rows.len(), 2);
    // election_timeout, runs, overlap_runs
    assert_eq!(&rows[0][..3], ["10s", "3", "3"]);
    assert_eq!(&rows[1][..3], ["11s", "3", "0"]);
}

/// Left out, the heartbeat is a tenth of the election timeout (etcd's and TiKV's ratio): the
/// run is the one that names `heartbeat: "100ms"` for a 1 s election timeout, and not the one
/// that names 500 ms (a mutant that multiplied would give 10 s, which validation refuses).
#[test]
fn the_default_heartbeat_is_a_tenth_of_the_election_timeout() {
    let run_with = |fields: &str| {
        crate::common::run_text(&group(
            &format!(r#"RaftLeaderLease(election_timeout: "1s"{fields})"#),
            4,
            3,
            "",
        ))
    };
    let left_out = run_with("");
    let mut tenth = run_with(r#", heartbeat: "100ms""#);
    let slow = run_with(r#", heartbeat: "500ms""#);
    assert_ne!(left_out.messages, slow.messages);
    tenth.strategy = left_out.strategy.clone();
    assert_eq!(left_out, tenth);
}

/// The true times (ns) of the writes committed.
#[derive(Default)]
struct Commits(Vec<i64>);

impl Observer for Commits {
    fn event(&mut self, e: &TraceEvent) {
        if let TraceKind::WriteArrived { applied: true, .. } = e.kind {
            self.0.push(e.t.ns());
        }
    }
}

/// A follower cut off while the leader commits more entries than it keeps catches up from a
/// snapshot. Every link takes 100 us and a write arrives every 200 us; one entry per message
/// and per round trip of 200 us, so the leader commits 5000 a second. Over r3's cut of 5 s it
/// commits about 25,000 entries, more than the 16,384 it keeps: r3 lacks compacted entries.
/// With PreVote r3's vain campaigns raise no term, so when the cut heals (6.5 s) r1 leads on
/// and r3 takes a snapshot of the committed prefix, then each entry as it is appended. At 7 s
/// r2 is cut, and r1 commits only with r3: each write commits a round trip after it arrives,
/// so the 10,000 that arrive in [7.9998 s, 9.9998 s) commit in [8 s, 10 s), and r1 leads
/// throughout (one grant). Without the snapshot r3 would catch up one entry per round trip
/// while writes arrive as fast: none would commit.
#[test]
fn a_follower_behind_the_compacted_log_catches_up_from_a_snapshot() {
    let s = scenario(
        r#"Scenario(
            seed: 3,
            duration: "10s",
            lease: (duration: "900ms"),
            strategy: RaftLeaderLease(
                election_timeout: "1s",
                election_jitter: "0s",
                heartbeat: "100ms",
                pre_vote: true,
            ),
            nodes: [
                (name: "r1", role: Replica),
                (name: "r2", role: Replica, start: "300ms"),
                (name: "r3", role: Replica, start: "300ms"),
            ],
            network: (delay: Fixed("100us")),
            workload: (periodic: (every: "200us", jitter: "0s", write_every: 1)),
            faults: [
                Partition(at: "1500ms", duration: "5s", groups: [["r1", "r2"], ["r3"]]),
                Partition(at: "7s", duration: "3s", groups: [["r1", "r3"], ["r2"]]),
            ],
        )"#,
    );
    let mut commits = Commits::default();
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let out = leasesim::run_with("snapshot", &s, strategy, Some(&mut commits)).unwrap();
    let late = commits.0.iter().filter(|&&t| t >= 8_000_000_000).count();
    assert_eq!(late, 10_000);
    assert_eq!(out.summary.grants, 1);
    assert_eq!(out.summary.stale_reads + out.summary.unsafe_writes, 0);
}

/// A leader whose followers cannot keep up (100,000 writes a second, one entry per message and
/// round trip, ReadIndex reads starting a round each round trip) costs as many events in each
/// second of the run as in the one before, once its windows of 256 appends in flight per
/// follower have filled (within the first second). Without a bound every round that found a
/// follower behind started one more stream of appends that never ended: the runs of 1, 2 and
/// 3 s took 0.60, 2.27 and 6.95 million events (the third second cost 2.8 times the second).
#[test]
fn a_leader_that_cannot_keep_up_costs_the_same_each_second() {
    let events = |secs: u32| {
        crate::common::run_text(&format!(
            r#"Scenario(
                seed: 1,
                duration: "{secs}s",
                lease: (duration: "900ms"),
                strategy: RaftLeaderLease(
                    election_timeout: "1s",
                    heartbeat: "100ms",
                    reads: ReadIndex,
                ),
                nodes: [
                    (name: "r1", role: Replica),
                    (name: "r2", role: Replica),
                    (name: "r3", role: Replica),
                ],
                network: (delay: Uniform(min: "200us", max: "2ms")),
                workload: (reads_per_second: 100000.0, writes_per_second: 100000.0),
            )"#
        ))
        .events
    };
    let (one, two, three) = (events(1), events(2), events(3));
    let (second, third) = (two - one, three - two);
    assert!(
        2 * third <= 3 * second,
        "the third second cost {third} events, the second {second}"
    );
}

/// The instants (true ns) at which a `Vote` answer was delivered to the replica `to`, and who
/// led which term when.
#[derive(Default)]
struct Votes {
    to: NodeId,
    answers: Vec<i64>,
    leaders: Leaders,
}

impl Observer for Votes {
    fn event(&mut self, e: &TraceEvent) {
        if let TraceKind::Deliver { kind: "Vote", .. } = e.kind {
            if e.node == self.to {
                self.answers.push(e.t.ns());
            }
        }
        self.leaders.event(e);
    }
}

/// Runs scenario `text` (named `name`) watching the votes and pre-votes node `to` is answered.
fn votes_to(to: NodeId, name: &str, text: &str) -> Votes {
    let s = scenario(text);
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let mut votes = Votes {
        to,
        ..Votes::default()
    };
    leasesim::run_with(name, &s, strategy, Some(&mut votes)).unwrap();
    votes
}

/// Raft's vote rule in a run: a candidate whose log ends in an older term is refused, and the
/// replica that has the newer entry is elected once another as up to date is back.
#[test]
fn a_lagging_replica_campaigns_in_vain_and_the_up_to_date_one_leads() {
    // Perfect clocks, 1 ms messages, election timeout 10 s with no jitter, heartbeat 1 s.
    // - r1 campaigns at 10 s (r2 and r3 started at 2 s, their timers at 12 s); both vote at
    //   10.001 s: r1 leads term 1 from 10.002 s, its no-op (1) at index 1 on every log.
    // - r3 crashes at 15 s. The transfer at 16 s makes r2 campaign at 16.001 s; r1 votes:
    //   r2 leads term 2 from 16.003 s, its no-op (2) at index 2 reaching r1 only.
    // - r3 restarts at 17 s (term 1, log ending (1, 1), from its disk), cut off from r1 and r2
    //   from 16.5 s to 40 s: it campaigns at 27 s (term 2) and 37 s (term 3), heard by no one.
    // - r2 crashes at 30 s. r1 last heard it at 29.004 s (the heartbeat of 29.003 s) and
    //   campaigns at 39.004 s (term 3); its request to r3 arrives at 39.005 s, before the cut
    //   heals: r1 stays a candidate, its timer at 49.004 s.
    // - r3 campaigns at 47 s (term 4) with a log ending (1, 1). r1 hears it at 47.001 s, moves
    //   to term 4 and refuses it: its own log ends (2, 2), newer. r3 has the answer at
    //   47.002 s and leads nothing. r1, a follower of a new term, restarts its timer: 57.001 s.
    // - r2 restarts at 48 s: term 2 (it voted for itself), log ending (2, 2), timer at 58 s.
    // - r3 campaigns at 57 s (term 5). At 57.001 s r1's timer runs out first (armed before
    //   r3's request was sent): r1 campaigns for term 5 and refuses r3's request as it
    //   arrives; r2 moves to term 5 on r3's request and refuses it ((1, 1) is older than its
    //   (2, 2)). r1's request reaches r2 at 57.002 s: r2 voted for no one in term 5 and knows
    //   no leader, so it votes; r1 leads term 5 from 57.003 s. (Without r2 the two candidates
    //   would split every term: with no jitter, each of r3's vain campaigns restarts r1's timer
    //   1 ms behind r3's own.)
    // A vote rule that let r3 through would make it leader of term 4 at 47.002 s.
    let text = r#"Scenario(
        duration: "60s",
        lease: (duration: "9s"),
        strategy: RaftLeaderLease(election_timeout: "10s", election_jitter: "0s",
            heartbeat: "1s"),
        nodes: [(name: "r1", role: Replica), (name: "r2", role: Replica, start: "2s"),
                (name: "r3", role: Replica, start: "2s")],
        network: (delay: Fixed("1ms")),
        faults: [
            Crash(node: "r3", at: "15s"),
            TransferLeader(at: "16s", to: "r2"),
            Partition(at: "16500ms", duration: "23500ms", groups: [["r3"], ["r1", "r2"]]),
            Restart(node: "r3", at: "17s"),
            Crash(node: "r2", at: "30s"),
            Restart(node: "r2", at: "48s"),
        ],
    )"#;
    let votes = votes_to(2, "lagging", text);
    let leaders: Vec<(u64, Vec<(NodeId, i64)>)> = votes.leaders.by_term.into_iter().collect();
    assert_eq!(
        leaders,
        vec![
            (1, vec![(0, 10_002_000_000)]),
            (2, vec![(1, 16_003_000_000)]),
            (5, vec![(0, 57_003_000_000)]),
        ]
    );
    // The answers r3 gets to its campaigns: r1's refusal of term 4 at 47.002 s (its campaigns
    // of 27 s and 37 s were cut off, and r2 is down at 47 s), then r1's and r2's of term 5 at
    // 57.002 s.
    assert_eq!(
        votes.answers,
        vec![47_002_000_000, 57_002_000_000, 57_002_000_000]
    );
}

/// `raft-tikv-proposal-lease-partitioned-leader` (derivation in the scenario): under the TiKV
/// preset r1 is elected at L = 12.004 s (a pre-vote, then the vote); its lease runs 9 s from the propose time of its empty
/// entry (L), then of the renewal rounds the checks every 2.25 s start at L + 6.75 s and
/// L + 13.5 s; the one at L + 20.25 s = 32.254 s comes after the cut at 30 s. So its read
/// authority runs from its first commit, L + 2 ms = 12.006 s, to L + 22.5 s = 34.504 s, and r2,
/// elected at 40.004 s, serves from 40.006 s: 5.502 s of slack. Every read r1 serves is local
/// (renewals come 2.25 s before the end). With heartbeats renewing the lease instead
/// (`HeartbeatQuorum`, no renewal rounds), rounds go out every 2 s from L, the last
/// acknowledged one at L + 16 s = 28.004 s, and the lease runs to 37.004 s. With `renew_ahead`
/// off, the lease lapses at L + 9 s = 21.004 s, and the next read r1 gets waits for a round.
#[test]
fn the_tikv_preset_renews_by_proposals_and_ahead_not_by_heartbeats() {
    const S: i64 = 1_000_000_000;
    const MS: i64 = 1_000_000;
    let name = "raft-tikv-proposal-lease-partitioned-leader";
    let (out, leaders) = run_bundled_with_leaders(name);
    let l = 12 * S + 4 * MS;
    assert_eq!(leaders.by_term[&1][0], (0, l));
    assert_eq!(leaders.by_term[&2][0], (1, 40 * S + 4 * MS));
    assert_eq!(
        out.summary.min_slack_ns,
        Some(40_006 * MS - (l + 22_500 * MS))
    );
    assert_eq!(out.summary.requests.reads_served_confirmed, 0);
    let text = library::text(name).unwrap();
    let read_authority = |text: &str| {
        let (_, timeline) = leasesim::run_recorded(name, &scenario(text)).unwrap();
        let r1 = &timeline.read_beliefs[0];
        (r1[0].start.ns(), r1.last().unwrap().end.ns())
    };
    assert_eq!(read_authority(text), (l + 2 * MS, l + 22_500 * MS));

    let heartbeats = text.replace(
        "RaftLeaderLease(system: TiKV)",
        r#"RaftLeaderLease(election_timeout: "10s", election_jitter: "10s", heartbeat: "2s", tick: "1s", reads: LeaseOrReadIndex, read_before_commit: Reject, pre_vote: true)"#,
    );
    assert_eq!(read_authority(&heartbeats).1, l + 16 * S + 9 * S);

    let off = text.replace(
        "RaftLeaderLease(system: TiKV)",
        "RaftLeaderLease(system: TiKV, renew_ahead: \"0s\")",
    );
    let s = leasesim::run(name, &scenario(&off)).unwrap().summary;
    assert!(s.requests.reads_served_confirmed > 0, "{:?}", s.requests);
}

/// A preset's fields are defaults a written field overrides; one that gives the system a
/// mechanism it does not have, a renewal period not shorter than the lease, or renewal ahead
/// under a rule that does not renew by proposals is refused, naming field, value and limit.
/// A preset's settings read back as the same settings.
#[test]
fn presets_take_overrides_and_refuse_contradictions() {
    let text = |strategy: &str| {
        format!(
            r#"Scenario(duration: "10s", lease: (duration: "9s"), strategy: {strategy},
               nodes: [(name: "r1", role: Replica), (name: "r2", role: Replica),
                       (name: "r3", role: Replica)])"#
        )
    };
    let problem = |strategy: &str| {
        load::from_text("t", &text(strategy))
            .unwrap_err()
            .to_string()
    };
    let fine = |strategy: &str| load::from_text("t", &text(strategy)).unwrap();
    let err = problem("RaftLeaderLease(system: TiKV, lease_rule: HeartbeatQuorum)");
    assert!(
        err.contains("strategy.lease_rule: TiKV has [ProposalQuorum], not HeartbeatQuorum"),
        "{err}"
    );
    let err = problem("RaftLeaderLease(system: Etcd, reads: LeaseOrReadIndex)");
    assert!(
        err.contains("strategy.reads: Etcd reads by [ReadIndex, Lease], not LeaseOrReadIndex"),
        "{err}"
    );
    let err = problem("RaftLeaderLease(system: TiKV, lease_start: OnAck)");
    assert!(
        err.contains("strategy.lease_start: TiKV counts the lease from the send time"),
        "{err}"
    );
    let err = problem(r#"RaftLeaderLease(system: TiKV, renew_ahead: "9s")"#);
    assert!(
        err.contains("strategy.renew_ahead: 9s must be shorter than the lease (9s)"),
        "{err}"
    );
    let err = problem(r#"RaftLeaderLease(election_timeout: "10s", renew_ahead: "1s")"#);
    assert!(
        err.contains("strategy.renew_ahead: only lease_rule: ProposalQuorum renews ahead"),
        "{err}"
    );
    let err = problem("RaftLeaderLease(reads: ReadIndex)");
    assert!(err.contains("strategy.election_timeout: missing"), "{err}");
    // Overrides: a skew margin under TiKV, reads by lease under etcd (ReadOnlyLeaseBased).
    fine(r#"RaftLeaderLease(system: TiKV, max_clock_skew: "500ms", renew_ahead: "0s")"#);
    fine("RaftLeaderLease(system: Etcd, reads: Lease)");
    for preset in [
        "RaftLeaderLease(system: TiKV)",
        "RaftLeaderLease(system: Etcd)",
    ] {
        let s = fine(preset);
        let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
        let written = strategy.describe();
        let again = fine(&written);
        let strategy2 = leasesim::strategy::from_spec(&again.strategy).unwrap();
        assert_eq!(strategy2.describe(), written);
    }
    let s = fine("RaftLeaderLease(system: TiKV)");
    let described = leasesim::strategy::from_spec(&s.strategy)
        .unwrap()
        .describe();
    assert_eq!(
        described,
        r#"RaftLeaderLease(system: TiKV, election_timeout: "10s", election_jitter: "10s", heartbeat: "2s", tick: "1s", reads: LeaseOrReadIndex, max_clock_skew: "0s", lease_rule: ProposalQuorum, lease_start: OnSend, check_quorum: true, transfer_suspect: true, read_before_commit: Reject, pre_vote: true)"#
    );
    // A field equal to the base default, written beside a preset that sets another, wins.
    for (strategy, shown) in [
        (
            "RaftLeaderLease(system: Etcd, pre_vote: false)",
            "pre_vote: false",
        ),
        (
            "RaftLeaderLease(system: TiKV, read_before_commit: Hold)",
            "read_before_commit: Hold",
        ),
    ] {
        let s = fine(strategy);
        let line = leasesim::strategy::from_spec(&s.strategy)
            .unwrap()
            .describe();
        assert!(line.contains(shown), "{strategy} -> {line}");
    }
}

/// TiKV refuses a leader lease longer than the election timeout less one tick (raftstore
/// `Config::validate`): with 10 ticks of 1 s, 9 s is the longest; 9.5 s and 10.5 s are
/// refused, naming the rule. Without the preset, the same numbers are the user's to choose.
#[test]
fn the_tikv_preset_refuses_a_lease_longer_than_the_election_timeout_less_a_tick() {
    let text = |lease: &str, system: &str| {
        format!(
            r#"Scenario(duration: "10s", lease: (duration: "{lease}"),
               strategy: RaftLeaderLease({system}),
               nodes: [(name: "r1", role: Replica), (name: "r2", role: Replica),
                       (name: "r3", role: Replica)])"#
        )
    };
    assert!(load::from_text("t", &text("9s", "system: TiKV")).is_ok());
    for lease in ["9.5s", "10.5s"] {
        let err = load::from_text("t", &text(lease, "system: TiKV"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!(
                "lease.duration: TiKV refuses a leader lease ({lease}) greater than the \
                 election timeout (10s) minus one tick (1s); at most 9s"
            )),
            "{err}"
        );
        let custom = r#"election_timeout: "10s", tick: "1s", lease_rule: ProposalQuorum"#;
        assert!(
            load::from_text("t", &text(lease, custom)).is_ok(),
            "{lease}"
        );
    }
}

/// etcd refuses lease-based reads without CheckQuorum, and only those (etcd-io/raft
/// `Config.validate`; `TestReadOnlyOptionSafe` runs ReadIndex reads without it).
#[test]
fn etcd_reads_by_read_index_without_check_quorum_and_by_lease_only_with_it() {
    let text = |reads: &str| {
        format!(
            r#"Scenario(duration: "10s", lease: (duration: "1s"),
               strategy: RaftLeaderLease(system: Etcd, reads: {reads}, check_quorum: false),
               nodes: [(name: "r1", role: Replica), (name: "r2", role: Replica),
                       (name: "r3", role: Replica)])"#
        )
    };
    assert!(load::from_text("t", &text("ReadIndex")).is_ok());
    let err = load::from_text("t", &text("Lease"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "strategy.check_quorum: reads: Lease under a CheckQuorumOnly lease need \
             check_quorum (etcd refuses ReadOnlyLeaseBased without CheckQuorum"
        ),
        "{err}"
    );
}

/// `raft-etcd-read-before-first-commit` (derivation in the scenario): r1's first commit waits
/// from its election at 1.004 s (after a pre-vote) until 1.506 s; its 50 reads at 1.01, ...,
/// 1.50 s are held and served at 1.508 s, the first after 498 ms; its 149 reads at 1.51, ..., 2.99 s each wait one
/// 2 ms round trip. So 199 reads served, all confirmed, the longest wait 496 ms. With
/// `read_before_commit: Reject` the 50 are refused: 149 served, each after 2 ms exactly.
#[test]
fn reads_before_the_first_commit_are_held_or_refused() {
    let name = "raft-etcd-read-before-first-commit";
    let text = library::text(name).unwrap();
    let run = |text: &str| {
        leasesim::run(name, &scenario(text))
            .unwrap()
            .summary
            .requests
    };
    let held = run(text);
    assert_eq!((held.reads_served, held.reads_served_confirmed), (199, 199));
    assert_eq!(held.reads_admitted, 199);
    assert_eq!(held.confirmed_read_wait.unwrap().max_ns, 498_000_000);
    let rejected = run(&text.replace(
        "election_jitter: \"100ms\")",
        "election_jitter: \"100ms\", read_before_commit: Reject)",
    ));
    assert_eq!((rejected.reads_served, rejected.reads_admitted), (149, 149));
    let w = rejected.confirmed_read_wait.unwrap();
    assert_eq!((w.max_ns, w.mean_ns), (2_000_000, 2_000_000));
}

/// The etcd preset's pre-vote turned off in the file runs without it: r1's one campaign asks
/// r2 and r3 for a pre-vote and then for a vote (4 RequestVote; r2 answers both, r3 has not
/// started: 2 Vote); without pre-vote it asks only for the vote (2 RequestVote, 1 Vote).
#[test]
fn the_etcd_preset_runs_without_pre_vote_when_the_file_says_so() {
    let name = "raft-etcd-read-before-first-commit";
    let text = library::text(name).unwrap();
    let messages = |text: &str| {
        let m = leasesim::run(name, &scenario(text))
            .unwrap()
            .summary
            .messages;
        (m["RequestVote"], m["Vote"])
    };
    assert_eq!(messages(text), (4, 2));
    let off = text.replace(
        "election_jitter: \"100ms\")",
        "election_jitter: \"100ms\", pre_vote: false)",
    );
    assert_eq!(messages(&off), (2, 1));
}

/// What a transfer does, seen from the trace: when the leader sent TimeoutNow, and the true
/// times of the writes node 0 refused (failed the validity check).
#[derive(Default)]
struct Transfer {
    timeout_now: Vec<i64>,
    refused_writes: Vec<i64>,
    leaders: Leaders,
}

impl Observer for Transfer {
    fn event(&mut self, e: &TraceEvent) {
        match e.kind {
            TraceKind::Send {
                kind: "TimeoutNow", ..
            } => self.timeout_now.push(e.t.ns()),
            TraceKind::Rejected { write: true } if e.node == 0 => {
                self.refused_writes.push(e.t.ns())
            }
            _ => {}
        }
        self.leaders.event(e);
    }
}

/// `raft-transfer-to-lagging-follower` (derivation in the scenario): r2 lacks the 90 writes of
/// 20.1 s to 29.0 s; it gets the first at 28.902 s, one a round trip (2 ms) on that chain, and
/// from the round of 29.002 s and the transfer of 29.0025 s three a round trip: TimeoutNow goes
/// when the 90th acknowledgement arrives, at 29.030 s, and only then. r2 leads from 3 ms later.
/// r1 refuses no write while the transfer is under way (writes at r1 fall on whole tenths of a
/// second; the one of 29.1 s finds r1 a follower). Had each acknowledgement resent the entry the
/// follower lacked rather than the next unsent one, TimeoutNow would have gone at 29.182 s.
#[test]
fn a_transfer_to_a_lagging_follower_waits_for_it_and_drops_writes_meanwhile() {
    let name = "raft-transfer-to-lagging-follower";
    let s = load::from_text(name, library::text(name).unwrap()).unwrap();
    let mut t = Transfer::default();
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let out = leasesim::run_with(name, &s, strategy, Some(&mut t)).unwrap();
    assert_eq!(t.timeout_now, vec![29_030_000_000]);
    let leaders: Vec<(u64, Vec<(NodeId, i64)>)> = t.leaders.by_term.into_iter().collect();
    assert_eq!(
        leaders,
        vec![
            (1, vec![(0, 10_002_000_000)]),
            (2, vec![(1, 29_033_000_000)])
        ]
    );
    let during: Vec<i64> = t
        .refused_writes
        .into_iter()
        .filter(|&w| (29_002_500_000..29_032_000_000).contains(&w))
        .collect();
    assert_eq!(during, Vec::<i64>::new());
    assert_eq!(out.summary.min_slack_ns, Some(32_500_000));
}

/// Who led which term, from when: (term, [(node, true time)]).
type LeadersByTerm = Vec<(u64, Vec<(NodeId, i64)>)>;

/// Runs bundled scenario `name` with a [`Transfer`] observer: the TimeoutNows sent, the writes
/// node 0 refused after its first second (the one of 0 s finds it a candidate), and the leaders.
fn run_transfer(name: &str) -> (Vec<i64>, Vec<i64>, LeadersByTerm) {
    let s = load::from_text(name, library::text(name).unwrap()).unwrap();
    let mut t = Transfer::default();
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    leasesim::run_with(name, &s, strategy, Some(&mut t)).unwrap();
    let refused = t.refused_writes.into_iter().filter(|&w| w >= 1_000_000_000);
    let leaders = t.leaders.by_term.into_iter().collect();
    (t.timeout_now, refused.collect(), leaders)
}

/// `raft-transfer-back-to-leader` (derivation in the scenario): the transfer to the cut-off r3
/// at 30.05 s is ended by the transfer back to r1 at 30.25 s, so r1 refuses only the writes of
/// 30.1 and 30.2 s (waiting out the transfer's timeout it would refuse the hundred of 30.1 to
/// 40.0 s). No TimeoutNow goes, and r1 leads term 1 from 0.002 s to the end.
#[test]
fn a_transfer_back_to_the_leader_ends_the_one_under_way_at_once() {
    let (timeout_now, refused, leaders) = run_transfer("raft-transfer-back-to-leader");
    assert!(timeout_now.is_empty(), "{timeout_now:?}");
    assert_eq!(refused, vec![30_100_000_000, 30_200_000_000]);
    assert_eq!(leaders, vec![(1, vec![(0, 2_000_000)])]);
}

/// `raft-transfer-timeout-in-ticks` (derivation in the scenario): with 1 s ticks on whole seconds
/// of r1's clock, the transfer of 30.45 s is abandoned at its 10th tick after, 40 s, so r1
/// refuses the 32 writes of 30.6, 30.9, ..., 39.9 s (0.3 i s for i = 102 to 133) and takes the
/// one of 40.2 s (a monotonic timeout of 10 s, to 40.45 s, would refuse it too).
#[test]
fn with_a_tick_a_transfer_is_abandoned_at_the_leaders_tenth_tick() {
    let (timeout_now, refused, leaders) = run_transfer("raft-transfer-timeout-in-ticks");
    assert!(timeout_now.is_empty(), "{timeout_now:?}");
    let want: Vec<i64> = (102..=133).map(|i| i * 300_000_000).collect();
    assert_eq!(refused, want);
    assert_eq!(leaders, vec![(1, vec![(0, 2_000_000)])]);
}

/// `raft-transfer-suspect-until-renewed` (derivation in the scenario): r1's read authority ends
/// at the transfer, 30 s, and never comes back, though its lease runs to 41.002 s and the
/// transfer is abandoned at 40 s; its write authority lasts to its check-quorum round at 50 s
/// (the transfer restarted the round's count at 30 s: 40 s finds r3 heard from, 50 s no one).
/// r2 leads term 2 from 33.002 s (TimeoutNow sent at 30 s over the 3 s link).
#[test]
fn a_suspect_lease_is_not_trusted_again_by_a_timer() {
    let name = "raft-transfer-suspect-until-renewed";
    let s = load::from_text(name, library::text(name).unwrap()).unwrap();
    let (out, timeline) = leasesim::run_recorded(name, &s).unwrap();
    let last_end = |v: &[leasesim::oracle::Piece]| v.last().map(|p| p.end.ns());
    let first_start = |v: &[leasesim::oracle::Piece]| v.first().map(|p| p.start.ns());
    assert_eq!(last_end(&timeline.read_beliefs[0]), Some(30_000_000_000));
    assert_eq!(last_end(&timeline.beliefs[0]), Some(50_000_000_000));
    assert_eq!(first_start(&timeline.beliefs[1]), Some(33_002_000_000));
    assert_eq!(first_start(&timeline.read_beliefs[1]), Some(33_004_000_000));
    assert_eq!(out.summary.overlap.count, 0);
}

/// `raft-rejoin-without-prevote` and `raft-rejoin-prevote` (derivations in the scenarios):
/// without PreVote, r3's refusal of the round of 45.002 s deposes r1 at 45.004 s, r3's campaign
/// of term 4 restarts r1's timer at 49.872042476 s, and r1 leads again in term 5 from
/// 59.874042476 s (10 s and two 1 ms trips later); with it, r1 leads term 1 from 10.004 s (a pre-vote round trip
/// later than 10.002 s) to the end. Without CheckQuorum (and without PreVote) r3 ignores the
/// stale round, but nothing is sticky: its campaign of term 4, an election timeout after its
/// campaign of term 3 (h + 30 s, h = 19.871042476 s when it last heard r1), deposes r1 when it
/// arrives, 1 ms later, at 49.872042476 s. r1 and r2 refuse it (a shorter log) and restart their
/// timers to 59.872042476 s, the instant r3's campaign of term 5 reaches them: both campaign
/// first (their timers were armed earlier) and refuse it, and the three split the votes of term
/// 5. No one leads again before the end: one grant.
#[test]
fn pre_vote_keeps_a_rejoining_follower_from_deposing_the_leader() {
    let leaders = |text: &str| {
        let s = scenario(text);
        let mut leaders = Leaders::default();
        let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
        leasesim::run_with("rejoin", &s, strategy, Some(&mut leaders)).unwrap();
        leaders.by_term.into_iter().collect::<Vec<_>>()
    };
    let without = library::text("raft-rejoin-without-prevote").unwrap();
    assert_eq!(
        leaders(without),
        vec![
            (1, vec![(0, 10_002_000_000)]),
            (5, vec![(0, 59_874_042_476)])
        ]
    );
    let with = library::text("raft-rejoin-prevote").unwrap();
    assert_eq!(leaders(with), vec![(1, vec![(0, 10_004_000_000)])]);

    let no_check = without.replace("reads: Lease,", "reads: Lease, check_quorum: false,");
    let s = scenario(&no_check);
    let (out, timeline) = leasesim::run_recorded("rejoin", &s).unwrap();
    let first = timeline.beliefs[0][0];
    assert_eq!(first.start.ns(), 10_002_000_000);
    assert_eq!(first.end.ns(), 49_872_042_476, "{first:?}");
    assert_eq!(out.summary.grants, 1);
}

/// PreVote in a group of one (its own pre-vote is a majority: it leads at its start) and of
/// two (r2 grants r1's pre-vote at 10.001 s, its vote at 10.003 s: r1 leads from 10.004 s).
#[test]
fn pre_vote_elects_groups_of_one_and_two() {
    let run = |nodes: &str| {
        let s = scenario(&format!(
            r#"Scenario(
                duration: "20s",
                lease: (duration: "9s"),
                strategy: RaftLeaderLease(election_timeout: "10s", election_jitter: "0s",
                    heartbeat: "1s", pre_vote: true),
                nodes: [{nodes}],
                network: (delay: Fixed("1ms")),
            )"#
        ));
        let mut leaders = Leaders::default();
        let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
        leasesim::run_with("pre-vote", &s, strategy, Some(&mut leaders)).unwrap();
        leaders.by_term.into_iter().collect::<Vec<_>>()
    };
    assert_eq!(
        run(r#"(name: "r1", role: Replica)"#),
        vec![(1, vec![(0, 0)])]
    );
    assert_eq!(
        run(r#"(name: "r1", role: Replica), (name: "r2", role: Replica, start: "2s")"#),
        vec![(1, vec![(0, 10_004_000_000)])]
    );
}

/// The true times (ns) of the reads each node served.
#[derive(Default)]
struct ReadsServed(BTreeMap<NodeId, Vec<i64>>);

impl Observer for ReadsServed {
    fn event(&mut self, e: &TraceEvent) {
        if let TraceKind::Read { stale, .. } = e.kind {
            assert!(!stale, "a stale read at {e:?}");
            self.0.entry(e.node).or_default().push(e.t.ns());
        }
    }
}

/// `raft-follower-read-partitioned` (derivation in the scenario): r3, cut off from 2 s to 5 s,
/// serves its reads of 0.25 to 1.75 s and of 5.25 to 7.75 s, and none in between; r2 serves all
/// 16 of its own. Each forwarded read is served when the leader's answer arrives: sent at t,
/// it reaches r1 at t + 1 ms, while the round r1 started at t for its own read is out; the next
/// round goes at t + 2 ms and is acknowledged at t + 4 ms; the answer arrives at t + 5 ms. With
/// `follower_reads` off the followers reject every read: 16 admitted, r1's.
#[test]
fn a_follower_serves_reads_its_leader_confirms_and_none_while_cut_off() {
    let name = "raft-follower-read-partitioned";
    let s = load::from_text(name, library::text(name).unwrap()).unwrap();
    let mut served = ReadsServed::default();
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let out = leasesim::run_with(name, &s, strategy, Some(&mut served)).unwrap();
    let ms = 1_000_000;
    let reads = |ks: std::ops::Range<i64>| ks.map(|k| 250 * ms + 500 * ms * k + 5 * ms);
    let at_r3: Vec<i64> = reads(0..4).chain(reads(10..16)).collect();
    assert_eq!(served.0[&2], at_r3);
    assert_eq!(served.0[&1], reads(0..16).collect::<Vec<_>>());
    assert_eq!(out.summary.stale_reads, 0);

    let off = library::text(name)
        .unwrap()
        .replace("follower_reads: true", "follower_reads: false");
    let s = scenario(&off);
    let strategy = leasesim::strategy::from_spec(&s.strategy).unwrap();
    let out = leasesim::run_with(name, &s, strategy, None).unwrap();
    assert_eq!(out.summary.requests.reads_admitted, 16);
}

/// With CheckQuorum, a follower that heard from its leader within the election timeout ignores
/// a pre-vote of a higher term as it ignores a vote: etcd-io/raft, raft.go, `Step`: `inLease`
/// (checkQuorum, a known leader, electionElapsed < electionTimeout) applies to `MsgPreVote` as
/// to `MsgVote`, and the message is dropped ("ignored ... lease is not expired"). The pre-vote
/// alone would not stop a node cut off from its leader only from winning its other peers over.
///
/// By hand: perfect clocks, 1 ms messages, election timeout 10 s with no jitter, heartbeat 1 s,
/// PreVote. r1's timer runs out at 10 s (r2 and r3 started at 2 s, theirs at 12 s): its
/// pre-vote is granted at 10.001 s, its vote at 10.003 s, and it leads term 1 from 10.004 s,
/// sending heartbeats every second from then. From 20 s r1 and r3 cannot reach each other;
/// r2 reaches both. r3 last heard r1 at 19.005 s (the round of 19.004 s) and pre-votes for
/// term 2 at 29.005 s; r2 has it at 29.006 s, 1 ms after r1's round of 29.004 s: it heard its
/// leader lately and ignores it. r3 hears no answer at all (none of r1's, cut, nor r2's): it
/// stays in term 1, and its next pre-vote, at 39.005 s, is never sent: the cut heals at 35 s
/// and r1's round of 35.004 s reaches r3 at 35.005 s, a leader of its own term, which it
/// follows again. r1 leads term 1 to the end. Were pre-votes not sticky, r2's grant would reach
/// r3 at 29.007 s; r3 would campaign for term 2 (its vote ignored by r2, sticky for votes),
/// refuse r1's round of term 1 at 35.005 s with term 2, deposing r1, and, its pre-vote of term
/// 3 at 39.007 s granted by both (answers at 39.009 s) and r1's vote (no leader now) back at
/// 39.011 s, lead term 3 from then.
#[test]
fn a_follower_that_heard_its_leader_lately_ignores_a_pre_vote() {
    let text = r#"Scenario(
        duration: "50s",
        lease: (duration: "9s"),
        strategy: RaftLeaderLease(election_timeout: "10s", election_jitter: "0s",
            heartbeat: "1s", pre_vote: true, check_quorum: true),
        nodes: [(name: "r1", role: Replica), (name: "r2", role: Replica, start: "2s"),
                (name: "r3", role: Replica, start: "2s")],
        network: (delay: Fixed("1ms")),
        faults: [
            Partition(at: "20s", duration: "15s", groups: [["r1"], ["r3"]]),
        ],
    )"#;
    let votes = votes_to(2, "pre-vote-in-lease", text);
    let leaders: Vec<(u64, Vec<(NodeId, i64)>)> = votes.leaders.by_term.into_iter().collect();
    assert_eq!(leaders, vec![(1, vec![(0, 10_004_000_000)])]);
    assert_eq!(votes.answers, Vec::<i64>::new(), "answers to r3");
}
