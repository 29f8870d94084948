//! Failovers under partial failures: one-way cuts and slow (not dead) links, disks and masters,
//! one story per protocol family (`docs/src/partial-failures.md`). Each test sweeps a story
//! over seeds and checks its failover-time distribution against bounds derived in the story's
//! comment; together they pin where belief and service part (a leader that believes but cannot
//! serve is an outage to clients only).

use crate::common::*;
use leasesim::scenario::library;
use leasesim::sweep::{self, CellStats, Grid, SweepSpec};

const MS: i64 = 1_000_000;
const S: i64 = 1_000 * MS;
const SEEDS: u64 = 20;

/// Bundled story `name` swept over `vary` (one parameter, or several joined by `+`), `SEEDS`
/// seeds a cell: each cell's statistics.
fn swept(name: &str, vary: &str, values: &[&str]) -> Vec<CellStats> {
    let grid = Grid::build(SweepSpec {
        name: name.into(),
        source: name.into(),
        scenario: scenario(library::text(name).unwrap()),
        vary: vec![(vary.into(), values.iter().map(|v| v.to_string()).collect())],
        seeds: SEEDS,
        references: Vec::new(),
    })
    .unwrap_or_else(|p| panic!("{p:?}"));
    sweep::run_all(&grid, Some(2), false, &mut Vec::new())
        .unwrap()
        .0
}

fn all_within(values: &[i64], lo: i64, hi: i64) {
    assert!(!values.is_empty());
    assert!(
        values.iter().all(|v| (lo..=hi).contains(v)),
        "{values:?} not within [{lo}, {hi}]"
    );
}

/// Lock service, acks lost one way: the unused stretch is the largest multiple of renew_every
/// below T - margin (10 s - 50 ms), plus the margin and the grant's 2 ms, for every seed: 9 s +
/// 52 ms at 3 s, 5 s + 52 ms at 5 s.
#[test]
fn a_holder_that_loses_its_acks_leaves_the_lease_unused_to_the_grantors_term() {
    let st = swept(
        "lock-service-acks-lost-one-way",
        "lease.renew_every",
        &["3s", "5s"],
    );
    assert_eq!(st[0].outages_ns, vec![9_052 * MS; SEEDS as usize]);
    assert_eq!(st[1].outages_ns, vec![5_052 * MS; SEEDS as usize]);
}

/// Lock service, slow link: renewals that still land inside the grantor's term but whose acks
/// come back after the holder's deadline keep the grantor renewing for a holder that stopped:
/// 9.052 s + the extra delay (5 s: 14.052 s). A delay past 7 s lands the renewals after the
/// term: the grantor's view ends first, as on a dead link (52 ms).
#[test]
fn a_slow_link_costs_more_than_a_dead_one() {
    let st = swept(
        "lock-service-slow-holder-link",
        "faults[0].extra",
        &["5s", "7.1s"],
    );
    assert_eq!(st[0].outages_ns, vec![14_052 * MS; SEEDS as usize]);
    assert_eq!(st[1].outages_ns, vec![52 * MS; SEEDS as usize]);
}

/// Redlock with one master 4.95 s slow: every attempt gets its quorum but spends its validity
/// (5 s - 4.96 s - 52 ms < 0), so the lock stays free until the master is fast again at 25 s:
/// a crash in [10 s, 11 s) is down at least 14 s. With no slow master the crashed holder's
/// keys (5 s) and a retry cycle bound it by 5.165 s.
#[test]
fn a_slow_redlock_master_keeps_the_lock_free_while_it_is_slow() {
    let st = swept("redlock-slow-master", "faults[0].extra", &["4.95s", "0s"]);
    all_within(&st[0].outages_ns, 14 * S, 17 * S);
    all_within(&st[1].outages_ns, 4 * S, 5_165 * MS);
}

/// Chubby over a slow link: 15 s each way lapses the session and fails over as a cut link
/// does, (T - hold margin) + 2 ms = 11.002 s every seed; 8 s each way keeps the session alive
/// at the master with late KeepAlives while the holder never regains its lease: no failover,
/// and no read for 40 s or more.
#[test]
fn a_chubby_session_over_a_slow_link_either_fails_over_or_hangs() {
    let st = swept(
        "chubby-slow-keepalive-link",
        "faults[0].extra",
        &["15s", "8s"],
    );
    assert_eq!(st[0].outages_ns, vec![11_002 * MS; SEEDS as usize]);
    assert!(st[1].outages_ns.is_empty());
    all_within(&st[1].read_gaps_ns, 40 * S, 60 * S);
}

/// ZooKeeper, pings lost one way (t = 40 s, 2 s ticks): the waiter's request is outstanding
/// throughout (detection 0) and the outage is t/3 plus the expiry bucket's rounding, one of
/// three values whatever the cut's start: 13.997, 14.664 or 15.330 s (to the ms).
#[test]
fn a_zookeeper_holder_whose_pings_are_lost_hands_over_in_one_of_three_steps() {
    let st = swept(
        "zk-client-pings-lost-one-way",
        "strategy.session_timeout",
        &["60s"],
    );
    assert!(st[0].detections_ns.iter().all(|&d| d == 0));
    for &o in &st[0].outages_ns {
        let ms = (o + MS / 2) / MS;
        assert!([13_997, 14_664, 15_330].contains(&ms), "{o}");
    }
}

/// client-go with its requests to the API server cut: the leader gives up at RenewDeadline
/// (10 s) and the other candidate acquires LeaseDuration (15 s) after it saw the record change,
/// at its next jittered try: the outage is at least LD - RD - RP + 4 ms = 3.002 s and at most
/// that plus two jittered periods (2 s x 2.2 each).
#[test]
fn a_kubernetes_leader_cut_from_the_api_server_is_replaced_after_the_lease_duration() {
    let st = swept("k8s-leader-one-way-to-apiserver", "T", &["15s"]);
    all_within(&st[0].outages_ns, 3_002 * MS, 3_002 * MS + 8_800 * MS);
    assert!(st[0].elections_ns.iter().all(|&e| e == 4 * MS));
}

/// Raft, the leader deaf to its followers: only CheckQuorum deposes it, at its first check a
/// whole election timeout (1 s) after its last ack; a follower last heard it at most a
/// heartbeat (100 ms) before and times out within [1 s, 2 s) of that: every outage within
/// [0.9 s, 2 s). Without CheckQuorum nobody campaigns: no failover, and the reads stop to the
/// run's end (the cut at 10 s of 20 s; the lease lapses by 10.9 s).
#[test]
fn a_deaf_raft_leader_is_deposed_only_by_check_quorum() {
    let st = swept(
        "raft-leader-deaf-one-way",
        "strategy.check_quorum",
        &["true", "false"],
    );
    assert_eq!(st[0].outages_ns.len(), SEEDS as usize);
    all_within(&st[0].outages_ns, 900 * MS, 2 * S);
    assert!(st[1].outages_ns.is_empty() && st[1].handover_runs == 0);
    all_within(&st[1].read_gaps_ns, 9 * S, 10 * S);
}

/// Raft, the leader's disk stalled 5 s: it believes throughout (its loop waits, it hears of the
/// new term only when the fsync returns), so the belief shows no outage; clients see one
/// capped by the election (a timeout within [1 s, 2 s) of the last heartbeat), not the stall.
/// A 250 ms stall, shorter than any timeout, hands nothing over and costs at most its own
/// length and a little (the loop waits from the first write after the stall began: 20 writes
/// a second, so often much less).
#[test]
fn a_raft_leaders_stalled_disk_is_an_outage_to_clients_only() {
    let st = swept(
        "raft-leader-disk-slow",
        "faults[0].duration",
        &["5s", "250ms"],
    );
    assert!(st[0].outages_ns.is_empty());
    assert_eq!(st[0].handover_runs, SEEDS);
    all_within(&st[0].read_gaps_ns, S, 2_100 * MS);
    assert_eq!(st[1].handover_runs, 0);
    all_within(&st[1].read_gaps_ns, 0, 300 * MS);
}

/// LeaseGuard, the leader deaf for 3 s: nothing deposes it and its pings keep the others from
/// campaigning, so there is no failover; reads stop when its lease (1 s from its last commit)
/// lapses and resume at the heal: a read gap of 2 s to 3 s.
#[test]
fn a_deaf_leaseguard_leader_stops_serving_until_the_cut_heals() {
    let st = swept(
        "leaseguard-leader-deaf-one-way",
        "faults[0].duration+faults[1].duration",
        &["3s+3s"],
    );
    assert!(st[0].outages_ns.is_empty() && st[0].handover_runs == 0);
    all_within(&st[0].read_gaps_ns, 2 * S, 3 * S);
}

/// The deaf leader without CheckQuorum, seed 1: its lease lapses by 10.835561007 s and no read
/// is served after 10.830114849 s (the story's comment: its last one under the lease), to the
/// run's end at 20 s. The longest read gap is that open stretch, and the story's own
/// `reads_resume_between` (for the run with CheckQuorum) is broken by it, saying so.
#[test]
fn a_gap_that_never_closes_is_the_longest_and_breaks_a_resume_window() {
    let text = library::text("raft-leader-deaf-one-way")
        .unwrap()
        .replace("check_quorum: true", "check_quorum: false");
    let s = run_text(&text);
    let gap = s.requests.longest_read_gap.unwrap();
    assert_eq!(
        (gap.from_ns, gap.to_ns, gap.open),
        (10_830_114_849, 20 * S, true)
    );
    assert!(
        s.expect.failures.iter().any(|f| f
            == "expected reads_resume_between: (12.209525515s, 12.209525515s), but the longest \
                gap never ended: none was served from 10.830114849s to the run's end at 20s"),
        "{:?}",
        s.expect.failures
    );
    let block = leasesim::report::text::run_block(&s, "rerun", None);
    assert!(
        block.contains(
            "read gap     9.169885151s, from 10.830114849s to the run's end at 20s (never resumed)"
        ),
        "{block}"
    );
}
