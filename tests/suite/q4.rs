//! The seed's self-check Q4: T = 10 s and a 12 s full GC pause on the holder.
//!
//! Perfect clocks, 1 ms messages. `a` acquires first (grant arrives at 2 ms) and renews every 3 s:
//! at 3.002, 6.002, 9.002, 12.002, 15.002 and 18.002 s. The GC pause runs from 20 s to 32 s, so
//! the renewal due at 21.002 s waits. The grantor received the last renewal at 18.003 s and frees
//! the lease at 28.003 s; the grant reaches `b` (queued since 100 ms) at 28.004 s.
//! Clients send `a` 1000 reads/s and 10 writes/s; `b` as much.

use crate::common::*;
use leasesim::Summary;

fn q4(strategy: &str, fencing: bool) -> Summary {
    run_text(&format!(
        r#"Scenario(
            seed: 7,
            duration: "40s",
            lease: (duration: "10s", renew_every: "3s"),
            strategy: {strategy},
            nodes: [
                (name: "lock", role: Grantor),
                (name: "a", role: Contender),
                (name: "b", role: Contender, start: "100ms"),
            ],
            network: (delay: Fixed("1ms")),
            workload: (reads_per_second: 1000.0, writes_per_second: 10.0),
            resource: (fencing: {fencing}),
            faults: [Pause(node: "a", at: "20s", duration: "12s", kind: Gc)],
        )"#
    ))
}

#[test]
fn cached_bool_keeps_serving_through_the_pause() {
    // The bool stays set through the pause; on resume `a` first handles, in the order they fell
    // due, the requests that arrived between 20 s and 21.002 s (served under token 1: zombie
    // actions), then its renewal timer, which finds the term (18.002 + 10 = 28.002 s) over and
    // clears the bool at 32 s. Overlap: [28.004 s, 32 s) = 3.996 s.
    let s = q4("CachedBool", false);
    assert_eq!(s.overlap.count, 1);
    let i = &s.overlap.intervals[0];
    assert_eq!((i.start_ns, i.end_ns), (28_004_000_000, 32_000_000_000));
    assert_eq!(i.nodes, ["a", "b"]);
    // About 1.002 s of queued reads at 1000/s were served late. Seed 7 draws (checked against
    // --trace): 978 reads and 4 writes of a queued in [20 s, 21.002 s) and served at 32 s under
    // token 1: 982 zombie actions. The reads are not stale: they arrived before b held anything,
    // so each can be placed before b's writes. The 4 writes land at 32.001 s, after b's: 4
    // unsafe writes, answered to a at 32.002 s. b's copy holds its own last write, before them
    // in the register's order, until its next write (sent at 32.064991238 s) is answered at
    // 32.066991238 s: the 75 reads b serves in between return a value that writes answered
    // before they arrived had replaced: stale.
    assert_eq!(s.zombie_actions, 982);
    assert_eq!(s.stale_reads, 75);
    assert_eq!(s.unsafe_writes, 4);
    assert_eq!(s.fenced_writes, 0);
}

#[test]
fn fencing_rejects_the_zombie_writes() {
    // The same run with fencing: exactly the writes that were unsafe are now rejected.
    let unfenced = q4("CachedBool", false);
    let fenced = q4("CachedBool", true);
    assert_eq!(fenced.unsafe_writes, 0);
    assert_eq!(fenced.fenced_writes, unfenced.unsafe_writes);
    // Fencing protects the register, not the lease: the overlap and zombie reads remain.
    assert_eq!(fenced.overlap, unfenced.overlap);
    assert!(fenced.zombie_actions > 0);
}

#[test]
fn two_sided_stops_at_its_deadline_even_while_paused() {
    // The clock check ends a's belief at its deadline 18.002 + 9.95 = 27.952 s, inside the
    // pause and before b's grant at 28.004 s. On resume every queued request fails the check:
    // nothing is served under the old token, so nothing is a zombie, stale or unsafe.
    let s = q4(r#"TwoSided(holder_margin: "50ms")"#, false);
    assert_eq!(s.overlap.count, 0);
    assert_eq!(s.zombie_actions, 0);
    assert_eq!(s.stale_reads, 0);
    assert_eq!(s.unsafe_writes, 0);
    // b holds from 28.004 s to the end: a believed [2 ms, 27.952 s), b [28.004 s, 40 s); the
    // running-believer time excludes a's pause [20 s, 27.952 s).
    let available: i64 = (20_000_000_000 - 2_000_000) + (40_000_000_000 - 28_004_000_000);
    assert_eq!(s.availability, available as f64 / 40e9);
    // The longest stretch without a running believer: from the pause (20 s) to b's grant.
    assert_eq!(s.max_unavailable_ns, 8_004_000_000);
}

#[test]
fn check_then_act_gap_lets_a_checked_write_land_late() {
    // With a service time, a request checked just before the pause takes effect after it: the
    // check-then-act gap. Make the gap certain: one write checked at 19.9995 s with 1 ms of
    // service falls into the pause and lands at 32 s under token 1, after b's writes (token 2).
    // Reads are off so only writes matter; writes are 200/s so one lands in [19.999 s, 20 s)
    // with probability 1 - e^-0.2 for a given seed, so search the seeds for one that has it and
    // check the mechanism there: the late write is unsafe without fencing and fenced with it.
    let story = |seed: u64, fencing: bool| {
        run_text(&format!(
            r#"Scenario(
                seed: {seed},
                duration: "40s",
                lease: (duration: "10s", renew_every: "3s"),
                strategy: TwoSided(holder_margin: "50ms"),
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "a", role: Contender),
                    (name: "b", role: Contender, start: "100ms"),
                ],
                network: (delay: Fixed("1ms")),
                workload: (writes_per_second: 200.0, service_time: "1ms"),
                resource: (fencing: {fencing}),
                faults: [Pause(node: "a", at: "20s", duration: "12s", kind: Gc)],
            )"#
        ))
    };
    let seed = (0..200)
        .find(|&seed| story(seed, false).unsafe_writes > 0)
        .expect("some seed puts a write in the last millisecond before the pause");
    let unfenced = story(seed, false);
    assert_eq!(
        unfenced.overlap.count, 0,
        "the lease itself was never shared"
    );
    assert!(
        unfenced.zombie_actions > 0,
        "the write took effect under a superseded token"
    );
    let fenced = story(seed, true);
    assert_eq!(fenced.unsafe_writes, 0);
    assert_eq!(fenced.fenced_writes, unfenced.unsafe_writes);
}
