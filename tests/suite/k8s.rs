//! `K8sLeaderElection`: client-go's candidates against an API server that only
//! compares resourceVersions. Figures are derived by hand with jitter off (jitter_factor 0:
//! candidates retry every 2 s exactly, counted from the end of each try), perfect clocks and
//! 1 ms messages; the bundled k8s-* and kubelet-* scenarios pin the stories (the paused leader and the random
//! faults with client-go's jitter).
//!
//! Shared arithmetic (LD/RD/RP 15/10/2 s). kcm-1 starts at 0: Get, Record at 2 ms, Create
//! applied at 3 ms (token 1), the answer at 4 ms: it leads from 4 ms. After each success it
//! sleeps 2 s, then a cycle opens and its first try succeeds 4 ms later: cycles open at
//! 2.004, 4.008, 6.012, 8.016, 10.020 s, their Updates applied at 2.007, 4.011, 6.015, 8.019,
//! 10.023 s, their answers at 2.008, ..., 10.024 s. kcm-2 starts at 100 ms and tries at 0.1,
//! 2.102, 4.104, 6.106, 8.108, 10.110 s (each try takes 2 ms, and the next starts 2 s after
//! it ends); each of its Gets lands after a renewal, so it sees the record change each time, last
//! at 10.112 s (the record of 10.023 s).

use crate::common::{leasesim, run, run_text, scenario, workdir};
use leasesim::scenario::validate::validate;

const MS: i64 = 1_000_000;

/// kcm-1 and kcm-2 against `apiserver`, 1 ms messages, LD 15 s; `strategy` fields, kcm-1's
/// extra node fields, and faults spliced in.
fn pair(strategy: &str, kcm1: &str, faults: &str, duration: &str) -> String {
    format!(
        r#"Scenario(
            seed: 3,
            duration: "{duration}",
            lease: (duration: "15s"),
            strategy: K8sLeaderElection({strategy}),
            nodes: [
                (name: "apiserver", role: Grantor),
                (name: "kcm-1", role: Contender, {kcm1}),
                (name: "kcm-2", role: Contender, start: "100ms"),
            ],
            network: (delay: Fixed("1ms")),
            workload: (reads_per_second: 20.0, writes_per_second: 2.0),
            faults: [{faults}],
        )"#
    )
}

/// `text` without kcm-2: kcm-1 alone.
fn alone(text: &str) -> String {
    text.replace(r#"(name: "kcm-2", role: Contender, start: "100ms"),"#, "")
}

const NO_JITTER: &str = "jitter_factor: 0.0";
const PAUSE: &str = r#"Pause(node: "kcm-1", at: "10.5s", duration: "20s", kind: Gc)"#;

/// The leader paused in its retry sleep, exact: kcm-1 pauses over [10.5 s, 30.5 s), in its sleep (the sleep ends at 12.024 s).
/// kcm-2 saw the record last change at 10.112 s; its later tries start at 12.112 + 2.002 k s and
/// find it unchanged; the first at or after 10.112 + 15 = 25.112 s is k = 7, at 26.126 s: its
/// Update is applied at 26.129 s (token 2) and it leads from 26.130 s. kcm-1 resumes at 30.5 s,
/// where its sleep's timer runs: a cycle opens then and ends at 40.5 s (its tries at 30.5,
/// 32.5, ..., 38.5 s find kcm-2's record and fail only themselves). Overlap [26.130, 40.5) s
/// = 14.370 s.
/// A cycle deadline counted from the last success (10.024 s) would end kcm-1's belief at its
/// resume: 4.370 s.
#[test]
fn a_leader_paused_in_its_sleep_opens_a_fresh_cycle_on_resume() {
    let s = run_text(&pair(NO_JITTER, "", PAUSE, "45s"));
    assert_eq!(s.overlap.count, 1);
    let i = &s.overlap.intervals[0];
    assert_eq!((i.start_ns, i.end_ns), (26_130 * MS, 40_500 * MS));
    assert_eq!(s.overlap.max_ns, 14_370 * MS);
    assert_eq!(s.holders, ["kcm-1", "kcm-2"]);
    assert!(s.zombie_actions > 0 && s.stale_reads > 0 && s.unsafe_writes > 0);
    // Fencing by leaseTransitions at the API server: kcm-1's writes under token 1 that land
    // after kcm-2's under token 2 are rejected instead.
    let text = pair(NO_JITTER, "", PAUSE, "45s").replace(
        "faults: [",
        "resource: (fencing: true),\n            faults: [",
    );
    let fenced = run_text(&text);
    assert_eq!(fenced.overlap.max_ns, 14_370 * MS);
    assert_eq!(fenced.unsafe_writes, 0);
    assert!(fenced.fenced_writes > 0);
}

/// observedTime is the candidate's own monotonic clock, never the record's renewTime: with
/// kcm-1's wall clock 5 s behind, its renewTimes read 5 s early (10.020 - 5 = 5.020 s for the
/// last), and a candidate that timed the lease from renewTime would take over at its first try
/// at or after 20.020 s (20.120 s: overlap 40.5 - 20.124 = 20.376 s). kcm-2 does not: the same
/// 14.370 s as without the offset.
#[test]
fn observed_time_is_the_candidates_own_clock_not_the_record() {
    let s = run_text(&pair(NO_JITTER, r#"offset: "-5s""#, PAUSE, "45s"));
    assert_eq!(s.overlap.max_ns, 14_370 * MS);
    // A wall clock 5 s ahead does not shorten it either.
    let s = run_text(&pair(NO_JITTER, r#"offset: "5s""#, PAUSE, "45s"));
    assert_eq!(s.overlap.max_ns, 14_370 * MS);
}

/// The delayed renewal answer, exact. The answer to kcm-1's renewal applied at 10.023 s is delayed by `extra`; from
/// 10.5 s every Get and Update kcm-1 sends is dropped. kcm-1 succeeds when the answer arrives
/// (10.024 s + extra, inside its cycle of [10.020, 20.020) s), sleeps 2 s, opens a cycle whose
/// Get is lost, and stops leading 10 s later: at 22.024 s + extra. kcm-2 (record unchanged
/// since it saw it at 10.112 s) leads from 26.130 s, as above. Overlap iff extra > 4.106 s:
/// LD - RD - RP = 3 s, plus kcm-2's lag of 1.106 s (it saw the record 89 ms after the Update,
/// its first try after 25.112 s began 1.014 s later, its acquisition took 4 ms against the
/// 1 ms of kcm-1's answer). 4 s: 106 ms of slack; 5 s: 0.894 s of overlap.
#[test]
fn a_delayed_renewal_answer_overlaps_iff_it_exceeds_the_margin_and_the_lag() {
    let faults = |extra: &str| {
        format!(
            r#"DelaySpike(at: "10s", duration: "100ms", extra: "{extra}", kinds: [UpdateReply]),
               Drop(at: "10.5s", duration: "19.5s", from: ["kcm-1"], kinds: [Get, Update])"#
        )
    };
    let below = run_text(&pair(NO_JITTER, "", &faults("4s"), "30s"));
    assert_eq!(below.overlap.count, 0);
    assert_eq!(below.min_slack_ns, Some(106 * MS));
    assert_eq!(below.holders, ["kcm-1", "kcm-2"]);
    let above = run_text(&pair(NO_JITTER, "", &faults("5s"), "30s"));
    let i = &above.overlap.intervals[0];
    assert_eq!((i.start_ns, i.end_ns), (26_130 * MS, 27_024 * MS));
    assert_eq!(above.min_slack_ns, Some(-894 * MS));
    // At the threshold itself (4.106 s) kcm-1 stops at the instant kcm-2 starts: no overlap.
    let at = run_text(&pair(NO_JITTER, "", &faults("4.106s"), "30s"));
    assert_eq!(at.overlap.count, 0);
    assert_eq!(at.min_slack_ns, Some(0));
}

/// An Update whose answer never comes is no success. From 5 s every UpdateReply to kcm-1 is
/// dropped (kcm-1 runs alone). The cycle that opens at
/// 6.012 s has its Update applied at 6.015 s and no answer: its ticks at 8.012, ..., 14.012 s
/// find the try outstanding, and at 16.012 s the cycle ends: kcm-1 stops leading. As a
/// candidate it tries at once and every 2 s after (a try unanswered for a period is given up):
/// its own record is renewable, so each try's Update is applied, and each answer dropped up to
/// the one sent at 24.015 s. The try of 26.012 s is answered at 26.016 s: it leads again, under
/// the same token (no new grant). Unavailable [16.012, 26.016) s = 10.004 s.
#[test]
fn an_unanswered_update_never_counts_as_a_success() {
    let s = run_text(&alone(&pair(
        NO_JITTER,
        "",
        r#"Drop(at: "5s", duration: "20s", to: ["kcm-1"], kinds: [UpdateReply])"#,
        "30s",
    )));
    assert_eq!(s.max_unavailable_ns, 10_004 * MS);
    assert_eq!(s.grants, 1);
    assert_eq!(s.holders, ["kcm-1"]);
}

/// The leader's renew period is not jittered (client-go's renew loop uses wait.Until without
/// jitter; only the acquire loop jitters). Alone, with client-go's jitter: Updates at 0.003 s
/// (the acquisition) and at 2.007 + 2.004 k s, k = 0..9, within 20.5 s (the 11th would be at
/// 22.047 s): 10 renewals, 11 Gets and 11 Updates.
#[test]
fn the_leader_renews_every_retry_period_without_jitter() {
    let s = run_text(&alone(&pair("", "", "", "20.5s")));
    assert_eq!(s.renewals, 10);
    assert_eq!(s.messages["Update"], 11);
    assert_eq!(s.messages["Get"], 11);
}

/// The API server may be listed anywhere: with it last, kcm-1 still talks to it alone and
/// renews exactly as above (11 Gets and Updates to 20.5 s, 10 of them renewals).
#[test]
fn the_api_server_need_not_be_the_first_node() {
    let last = alone(&pair("", "", "", "20.5s")).replace(
        r#"(name: "apiserver", role: Grantor),
                (name: "kcm-1", role: Contender, ),"#,
        r#"(name: "kcm-1", role: Contender, ),
                (name: "apiserver", role: Grantor),"#,
    );
    assert!(last.find("kcm-1") < last.find("apiserver"), "{last}");
    let s = run_text(&last);
    assert_eq!(s.renewals, 10);
    assert_eq!(s.messages["Update"], 11);
    assert_eq!(s.messages["Get"], 11);
}

/// Candidates retry every retry_period * (1 + U[0, 1.2)): with kcm-1 leading throughout, kcm-2
/// tries from 100 ms to 60 s, each try 2 ms long and each pause in [2 s, 4.4 s): between
/// 59.9 / 4.402 + 1 = 14.6 and 59.9 / 2.002 + 1 = 30.9 tries, so 15 to 30 Gets; the mean pause
/// 3.2 s gives about 19.7. Without jitter it would be exactly 30.
#[test]
fn candidates_jitter_their_retries_from_their_own_stream() {
    let text = pair("", "", "", "60s");
    let gets_of_kcm2 = |s: &leasesim::Summary| {
        // kcm-1: its acquisition and a renewal every 2.004 s from 2.004 s to 58.116 s: 30.
        s.messages["Get"] - 30
    };
    let a = run_text(&text);
    let n = gets_of_kcm2(&a);
    assert!((15..=30).contains(&n), "{n}");
    assert!(n < 30, "{n}: not jittered");
    // Deterministic: the same seed twice gives the same summary, byte for byte.
    let b = run_text(&text);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    // Another seed draws other retries.
    let c = run_text(&text.replace("seed: 3", "seed: 4"));
    assert_ne!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&c).unwrap()
    );
}

/// The API server applies an Update only if its resourceVersion still matches. Both
/// candidates start at 0 and find no record (resourceVersion 0) at 2 ms; both Create with
/// resourceVersion 0 at 3 ms: the first applied wins, the second gets a Conflict. One grant,
/// no overlap. (Without the comparison both would lead from 4 ms.)
#[test]
fn only_one_of_two_simultaneous_updates_is_applied() {
    let text = pair(NO_JITTER, "", "", "20s").replace(r#"start: "100ms""#, r#"start: "0s""#);
    let s = run_text(&text);
    assert_eq!(s.grants, 1);
    assert_eq!(s.overlap.count, 0);
    assert_eq!(s.holders.len(), 1);
}

/// Message kinds are the protocol's own: `Drop` and `DelaySpike` accept them; a base kind is
/// an error that lists them.
#[test]
fn fault_kinds_are_the_protocols_own() {
    for kinds in ["Get", "Record", "Update", "UpdateReply", "Write"] {
        let f = format!(r#"Drop(at: "1s", duration: "1s", kinds: [{kinds}])"#);
        let s = scenario(&pair("", "", &f, "5s"));
        assert!(validate(&s).is_empty(), "{kinds}: {:?}", validate(&s));
    }
    let s = scenario(&pair(
        "",
        "",
        r#"Drop(at: "1s", duration: "1s", kinds: [Renew])"#,
        "5s",
    ));
    let problems = validate(&s);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].ends_with(
            "has no message kind \"Renew\" (its kinds: Get, Record, Update, UpdateReply, Write)"
        ),
        "{problems:?}"
    );
    // Dropping every Record: nobody ever leads.
    let s = run(&scenario(&pair(
        "",
        "",
        r#"Drop(at: "0s", duration: "5s", kinds: [Record])"#,
        "5s",
    )));
    assert_eq!(s.grants, 0);
    assert_eq!(s.availability, 0.0);
}

/// client-go's validation, every problem at once, each with its field: LeaseDuration >
/// RenewDeadline > JitterFactor * RetryPeriod, all positive; one API server, candidates, no
/// replicas. Exit 2 from `leasesim check`.
#[test]
fn validation_lists_every_problem_with_its_field() {
    let bad = r#"Scenario(
        duration: "10s",
        lease: (duration: "15s"),
        strategy: K8sLeaderElection(renew_deadline: "15s", retry_period: "0s"),
        nodes: [(name: "a", role: Grantor), (name: "b", role: Grantor),
                (name: "r", role: Replica)],
    )"#;
    let problems = validate(&scenario(bad));
    let want = [
        "nodes: K8sLeaderElection needs exactly one Grantor, the API server (found 2)",
        "nodes: K8sLeaderElection needs at least one Contender",
        "nodes: K8sLeaderElection has no Replica role",
        "strategy.retry_period: must be greater than zero",
        "strategy.renew_deadline: must be shorter than the lease",
    ];
    for w in want {
        assert!(
            problems.iter().any(|p| p.starts_with(w)),
            "{w}: {problems:?}"
        );
    }
    let dir = workdir("k8s-validation");
    std::fs::write(dir.join("bad.ron"), bad).unwrap();
    let o = leasesim(&["check", "bad.ron"], &dir);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    for w in want {
        assert!(err.contains(w), "{w}: {err}");
    }

    // The bounds are strict, as in client-go: RD = T and RD = 1.2 x RP are refused, a
    // nanosecond more (less) is not.
    let with = |strategy: &str| validate(&scenario(&pair(strategy, "", "", "5s")));
    let p = with(r#"renew_deadline: "15s""#);
    assert!(
        p[0].starts_with("strategy.renew_deadline: must be shorter"),
        "{p:?}"
    );
    assert!(with(r#"renew_deadline: "14.999999999s""#).is_empty());
    let p = with(r#"renew_deadline: "2.4s""#);
    assert_eq!(
        p,
        [
            "strategy.renew_deadline: must be greater than jitter_factor x retry_period = 1.2 x \
          2s, as client-go requires (got 2.4s)"
        ]
    );
    assert!(with(r#"renew_deadline: "2.400000001s""#).is_empty());
    let p = with("jitter_factor: -0.5");
    assert!(p[0].starts_with("strategy.jitter_factor: must be"), "{p:?}");
}

/// The API server's record survives its crash (etcd keeps it): a leader cut off by the crash
/// for less than what others wait keeps its lease, under the same token. kcm-1 runs alone. The API server is down over [5 s, 8 s): the cycle that opens at
/// 6.012 s loses its Get, and ends at 16.012 s; kcm-1 tries again at once, finds its own
/// record, and leads again from 16.016 s: one grant. With `grantor_restart: Forget` the record
/// is gone and kcm-1 creates it again: a second grant, to kcm-1.
#[test]
fn the_record_survives_an_api_server_crash_unless_etcd_forgets() {
    let faults = r#"Crash(node: "apiserver", at: "5s"), Restart(node: "apiserver", at: "8s")"#;
    let text = alone(&pair(NO_JITTER, "", faults, "20s"));
    let kept = run_text(&text);
    assert_eq!(kept.grants, 1);
    assert_eq!(kept.max_unavailable_ns, 4 * MS);
    let forgot = run_text(&text.replace(
        r#"lease: (duration: "15s")"#,
        r#"lease: (duration: "15s", grantor_restart: Forget)"#,
    ));
    assert_eq!(forgot.grants, 2);
    assert_eq!(forgot.holders, ["kcm-1", "kcm-1"]);
}

/// The wall-clock observer's contrast (k8s-ntp-step-wall-clock-observer): the same +20 s step on kcm-2 when it
/// times the record on its monotonic clock (client-go since Go 1.9) moves nothing. kcm-2 last
/// saw a change at 8.110 s, so it waits for a try beginning at or after 23.110 s: its tries fall
/// at 0.1 + 2.002 k s, so 24.124 s; the grant is applied at 24.127 s and kcm-2 leads from
/// 24.128 s, 4.108 s after kcm-1's last cycle gave up at 20.020 s.
#[test]
fn a_wall_clock_step_moves_nothing_for_a_monotonic_observer() {
    let text = leasesim::scenario::library::text("k8s-ntp-step-wall-clock-observer").unwrap();
    let wall = crate::common::run_text(text);
    assert_eq!(wall.failovers[0].at_ns, 12_115_000_000);
    let monotonic = crate::common::run_text(&text.replace(", observed_clock: Wall", ""));
    assert_eq!(monotonic.overlap.count, 0);
    assert_eq!(monotonic.failovers[0].at_ns, 24_127_000_000);
    assert_eq!(monotonic.min_slack_ns, Some(4_108_000_000));
}
