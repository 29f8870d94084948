//! Redlock: several independent masters, no fencing token, expiry on the wall clock.
//! The bundled redlock-* scenarios pin the stories; these tests pin what the scenarios cannot.

use crate::common::{run, run_text, scenario};
use leasesim::scenario::validate::validate;

/// Five masters, a reaches m1-m3 and b reaches m3-m5, T = 10 s, renewals every 3 s; `strategy`,
/// `lease_extra` (fields of `lease`), `extra` (more faults) and `resource` are spliced in.
fn five_masters(strategy: &str, lease_extra: &str, extra: &str, resource: &str) -> String {
    format!(
        r#"Scenario(
            duration: "12s",
            lease: (duration: "10s", renew_every: "3s", {lease_extra}),
            strategy: {strategy},
            nodes: [
                (name: "m1", role: Grantor), (name: "m2", role: Grantor),
                (name: "m3", role: Grantor), (name: "m4", role: Grantor),
                (name: "m5", role: Grantor),
                (name: "a", role: Contender), (name: "b", role: Contender, start: "2s"),
            ],
            network: (delay: Fixed("1ms")),
            resource: ({resource}),
            faults: [
                Partition(at: "0s", duration: "12s", groups: [["a"], ["m4", "m5"]]),
                Partition(at: "0s", duration: "12s", groups: [["b"], ["m1", "m2"]]),
                {extra}
            ],
        )"#
    )
}

/// Redlock has no fencing token: `resource.fencing: true` is refused, with the reason.
#[test]
fn fencing_is_rejected_with_the_reason() {
    let s = scenario(&five_masters("Redlock()", "", "", "fencing: true"));
    let problems = validate(&s);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("resource.fencing:") && p.contains("no fencing token")),
        "{problems:?}"
    );
    // The same scenario under a base strategy fails for its roles, not for fencing.
    let s = scenario(&five_masters("TwoSided()", "", "", "fencing: true"));
    let problems = validate(&s);
    assert!(problems
        .iter()
        .any(|p| p.contains("exactly one Grantor (found 5)")));
    assert!(!problems.iter().any(|p| p.starts_with("resource.fencing")));
}

/// A restarted master that waits out T (grantor_restart: Wait) refuses b's lock, so the story
/// of redlock-master-restart-forgets ends without an overlap: m3 restarts at 1.5 s and refuses
/// until 1.5 + 10 = 11.5 s; until then b gets m4 and m5 only (2 of 5). a's extension at 3.05 s
/// gets m1 and m2 only, so a lets go at 9.898 s (and its new attempts find its own old keys on
/// m1 and m2, extended to 13.051 s). b's first attempt sent at or after 11.499 s gets m3 too;
/// it decides at its 50 ms timeout (m1, m2 never answer), at 11.549 s or later, before 12 s.
/// So the slack is in [11.549 - 9.898, 12 - 9.898] = [1.651 s, 2.102 s].
#[test]
fn a_restarted_master_that_waits_prevents_the_overlap() {
    let crash = r#"Crash(node: "m3", at: "1s"), Restart(node: "m3", at: "1.5s"),"#;
    let forgets = run_text(&five_masters(
        "Redlock()",
        "grantor_restart: Forget",
        crash,
        "",
    ));
    assert_eq!(forgets.overlap.total_ns, 7_848_000_000);
    let waits = run_text(&five_masters(
        "Redlock()",
        "grantor_restart: Wait",
        crash,
        "",
    ));
    assert_eq!(waits.overlap.count, 0);
    assert_eq!(waits.holders, ["a", "b"]);
    let slack = waits.min_slack_ns.expect("a hands over to b");
    assert!((1_651_000_000..=2_102_000_000).contains(&slack), "{slack}");
}

/// Message kinds are Redlock's own: a `Drop` of `Extend` is accepted and takes effect; a kind
/// of the base protocol is an error that lists Redlock's kinds.
#[test]
fn fault_kinds_are_the_protocols_own() {
    // Without the clock step, a alone holds (m3 keeps its key): its extensions at 3.05, 6.05
    // and 9.05 s each get m1, m2, m3: 3 renewals. Dropping every Extend sent from 3 s on leaves
    // none.
    let kept = run_text(&five_masters("Redlock()", "", "", ""));
    assert_eq!(kept.renewals, 3);
    let drop = r#"Drop(at: "3s", duration: "9s", kinds: [Extend]),"#;
    let s = scenario(&five_masters("Redlock()", "", drop, ""));
    assert!(validate(&s).is_empty(), "{:?}", validate(&s));
    assert_eq!(run(&s).renewals, 0);

    let bad = r#"Drop(at: "3s", duration: "9s", kinds: [Renew]),"#;
    let problems = validate(&scenario(&five_masters("Redlock()", "", bad, "")));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("faults[2].kinds: Redlock("),
        "{problems:?}"
    );
    assert!(
        problems[0].ends_with(
            "has no message kind \"Renew\" (its kinds: Lock, LockReply, Extend, ExtendReply, \
             Unlock, Write, WriteAck)"
        ),
        "{problems:?}"
    );
}

/// Retries draw from the client's own stream: the same seed gives the same run, another seed
/// another one (the GC-pause story's slack depends on when b's retry lands).
#[test]
fn retries_are_random_but_seeded() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/redlock-gc-pause-unsafe-write.ron"
    ))
    .unwrap();
    let mut s = scenario(&text);
    let first = run(&s);
    assert_eq!(first, run(&s));
    let slack = |seed| {
        s.seed = seed;
        run(&s).min_slack_ns.expect("a handover")
    };
    let slacks: Vec<i64> = (1..=4).map(slack).collect();
    // Each at least 304 ms (b's first lock that reaches the masters after 30.001 s), at most
    // 304 ms + retry_every (100 ms), and not all equal.
    for &ns in &slacks {
        assert!((304_000_000..=404_000_000).contains(&ns), "{slacks:?}");
    }
    assert!(slacks.windows(2).any(|w| w[0] != w[1]), "{slacks:?}");
}

mod properties {
    use crate::common::{run, scenario};
    use proptest::prelude::*;

    /// A Redlock world: `masters` masters and `clients` clients with drifts within +-1000 ppm,
    /// random delays, loss and duplication, and random GC pauses, partitions, crashes (masters
    /// restart with `grantor_restart: Wait`) and wall-clock steps of up to 30 s.
    #[derive(Debug, Clone)]
    struct World {
        masters: usize,
        clients: usize,
        lease_ms: i64,
        drifts: Vec<i64>,
        loss: f64,
        duplicate: f64,
        seed: u64,
        expiry_clock: &'static str,
    }

    impl World {
        fn text(&self) -> String {
            let mut nodes = String::new();
            for i in 0..self.masters {
                let ppm = self.drifts[i];
                nodes += &format!("(name: \"m{i}\", role: Grantor, drift_ppm: {ppm}.0),");
            }
            for i in 0..self.clients {
                let ppm = self.drifts[self.masters + i];
                nodes += &format!(
                    "(name: \"c{i}\", role: Contender, drift_ppm: {ppm}.0, start: \"{i}00ms\"),"
                );
            }
            format!(
                r#"Scenario(
                    seed: {seed},
                    duration: "60s",
                    lease: (duration: "{t}ms", retry_every: "{retry}ms"),
                    strategy: Redlock(expiry_clock: {clock}),
                    nodes: [{nodes}],
                    network: (delay: Uniform(min: "100us", max: "5ms"), loss: {loss},
                              duplicate: {dup}),
                    workload: (reads_per_second: 20.0, writes_per_second: 10.0,
                               service_time: "1ms"),
                    random_faults: [
                        Pauses(per_minute: 6.0, duration: Uniform(min: "10ms", max: "3s"),
                               kind: Gc),
                        Partitions(per_hour: 120.0, duration: Uniform(min: "100ms", max: "5s")),
                        Crashes(per_hour: 60.0, restart_after: Uniform(min: "100ms", max: "3s")),
                        ClockSteps(per_hour: 120.0, by: Uniform(min: "-30s", max: "30s")),
                    ],
                )"#,
                seed = self.seed,
                t = self.lease_ms,
                retry = self.lease_ms / 5,
                clock = self.expiry_clock,
                loss = self.loss,
                dup = self.duplicate,
            )
        }
    }

    fn world() -> impl Strategy<Value = World> {
        (1usize..=5, 2usize..=3).prop_flat_map(|(masters, clients)| {
            (
                1_000i64..=10_000,
                proptest::collection::vec(-1000i64..=1000, masters + clients),
                0.0f64..0.2,
                0.0f64..0.2,
                any::<u64>(),
                prop_oneof![Just("Monotonic"), Just("Wall")],
            )
                .prop_map(
                    move |(lease_ms, drifts, loss, duplicate, seed, expiry_clock)| World {
                        masters,
                        clients,
                        lease_ms,
                        drifts,
                        loss,
                        duplicate,
                        seed,
                        expiry_clock,
                    },
                )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        /// Redlock is safe when its assumptions hold: keys expire on the masters' monotonic
        /// clocks, drift (at most 1000 ppm a node, 2000 ppm between two) is far inside
        /// drift_factor (1%), and a restarted master waits out T. A client believes until
        /// t0 + T - drift on its clock, t0 before any master set its key, and a key expires
        /// T after it was set, so two majorities never hold live keys at once. Pauses,
        /// partitions, loss, duplication, crashes and wall steps change nothing. The same
        /// world under wall-clock expiry is only required to run, and to run the same twice.
        #[test]
        fn redlock_with_monotonic_expiry_never_overlaps(w in world()) {
            let s = scenario(&w.text());
            let first = run(&s);
            prop_assert_eq!(&first, &run(&s));
            if w.expiry_clock == "Monotonic" {
                prop_assert_eq!(first.overlap.count, 0, "{:?}", first.overlap);
            }
        }
    }
}

/// The property above bites: in these worlds the lock does move between clients, and with keys
/// on the wall clock, the 30 s steps do put two clients in the lock at once.
#[test]
fn the_random_worlds_hand_over_and_wall_expiry_overlaps() {
    let world = |seed: u64, clock: &str| {
        format!(
            r#"Scenario(
                seed: {seed},
                duration: "60s",
                lease: (duration: "2s", retry_every: "400ms"),
                strategy: Redlock(expiry_clock: {clock}),
                nodes: [
                    (name: "m0", role: Grantor), (name: "m1", role: Grantor),
                    (name: "m2", role: Grantor),
                    (name: "c0", role: Contender), (name: "c1", role: Contender),
                ],
                network: (delay: Uniform(min: "100us", max: "5ms")),
                random_faults: [
                    Partitions(per_hour: 120.0, duration: Uniform(min: "100ms", max: "5s")),
                    ClockSteps(per_hour: 120.0, by: Uniform(min: "-30s", max: "30s")),
                ],
            )"#
        )
    };
    let (mut handovers, mut wall_overlaps) = (0, 0);
    for seed in 0..40 {
        let mono = run_text(&world(seed, "Monotonic"));
        assert_eq!(mono.overlap.count, 0, "seed {seed}");
        handovers += mono.min_slack_ns.is_some() as u32;
        wall_overlaps += (run_text(&world(seed, "Wall")).overlap.count > 0) as u32;
    }
    assert!(
        handovers >= 10,
        "{handovers} of 40 runs handed the lock over"
    );
    assert!(
        wall_overlaps >= 10,
        "{wall_overlaps} of 40 wall-clock runs overlapped"
    );
}

/// `compare --strategies all` on a Redlock scenario compares Redlock's own settings: wall-clock
/// expiry (the 7.848 s overlap of redlock-clock-jump), monotonic expiry (safe) and quorum One
/// (b holds from 2.002 s, when m3's grant arrives, to the end of the run at 12 s: 9.998 s).
#[test]
fn compare_all_on_redlock_compares_redlock_settings() {
    let dir = crate::common::workdir("redlock-compare");
    let out = crate::common::leasesim(
        &[
            "compare",
            "redlock-clock-jump",
            "--out",
            dir.to_str().unwrap(),
        ],
        &dir,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("Redlock(")).collect();
    // Then the other persistences and the delayed restart: no master restarts here.
    assert_eq!(rows.len(), 6, "{text}");
    assert!(rows[0].contains("expiry_clock: Wall, quorum: Majority") && rows[0].contains("7.848s"));
    assert!(rows[1].contains("expiry_clock: Monotonic") && rows[1].contains("SAFE"));
    assert!(rows[2].contains("quorum: One") && rows[2].contains("9.998s"));
}

/// `compare --strategies all` on a Redlock story of a master that forgets (m3 restarts without
/// persistence and b gets m3, m4, m5 while a holds m1-m3: 7.848 s of overlap) includes
/// Redlock's own fixes, and each fixes it: `persistence: Always` (m3 comes back with a's key,
/// as redlock-master-restart-always pins) and a delayed restart (`lease.grantor_restart: Wait`:
/// m3 refuses every lock until 11.5 s, so b never gets a majority).
#[test]
fn compare_all_on_redlock_includes_its_fixes() {
    let dir = crate::common::workdir("redlock-compare-fixes");
    let out = crate::common::leasesim(
        &[
            "compare",
            "redlock-master-restart-forgets",
            "--out",
            dir.to_str().unwrap(),
            "--json",
        ],
        &dir,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let row = |origin: &str| {
        rows.iter()
            .find(|r| r["origin"].as_str().unwrap().contains(origin))
            .unwrap_or_else(|| panic!("no row from {origin:?}: {text}"))
    };
    let own = row("the scenario's own");
    assert_eq!(own["overlap"]["max_ns"], 7_848_000_000i64);
    let always = row("persistence: Always");
    assert!(
        always["strategy"]
            .as_str()
            .unwrap()
            .contains("persistence: Always"),
        "{always}"
    );
    assert_eq!(always["verdict"], "SAFE", "{always}");
    assert_eq!(always["holders"], serde_json::json!(["a"]));
    let delayed = row("a delayed restart");
    assert_eq!(delayed["strategy"], own["strategy"]);
    assert_eq!(delayed["verdict"], "SAFE", "{delayed}");
    assert_eq!(delayed["holders"], serde_json::json!(["a"]));
}

/// `masters` masters, the first `silent` of them cut off from the single client a for the whole
/// run, T = `lease`, 1 ms messages, run for 3 s; `strategy` is spliced in.
fn silent_masters(strategy: &str, lease: &str, masters: usize, silent: usize) -> String {
    let nodes: String = (1..=masters)
        .map(|i| format!("(name: \"m{i}\", role: Grantor),"))
        .collect();
    let cut: Vec<String> = (1..=silent).map(|i| format!("\"m{i}\"")).collect();
    format!(
        r#"Scenario(
            duration: "3s",
            lease: (duration: "{lease}"),
            strategy: {strategy},
            nodes: [{nodes} (name: "a", role: Contender)],
            network: (delay: Fixed("1ms")),
            faults: [Partition(at: "0s", duration: "3s", groups: [["a"], [{}]])],
        )"#,
        cut.join(", ")
    )
}

/// Asked one at a time, each silent master costs a whole per-instance timeout and each other
/// one a round trip (2 ms), so the first grant comes later the more masters there are; asked
/// at once, the attempt ends at the request timeout (50 ms) whatever N. T = 10 s, so a holds
/// from the end of its first attempt to the end of the 3 s run: the longest time without a
/// holder is that first attempt.
///   5 masters, 2 silent, 50 ms each: 2 x 50 + 3 x 2 = 106 ms; at once: 50 ms.
///   7 masters, 3 silent: 3 x 50 + 4 x 2 = 158 ms; at once: 50 ms.
///   5 masters, none silent: 5 x 2 = 10 ms; at once: 2 ms (every master answered).
#[test]
fn asking_one_at_a_time_takes_longer_with_more_masters() {
    let seq = r#"Redlock(acquire: Sequential(per_instance_timeout: "50ms"))"#;
    let first_grant = |strategy: &str, masters, silent| {
        let s = run_text(&silent_masters(strategy, "10s", masters, silent));
        assert_eq!(s.holders, ["a"]);
        s.max_unavailable_ns
    };
    assert_eq!(first_grant(seq, 5, 2), 106_000_000);
    assert_eq!(first_grant("Redlock()", 5, 2), 50_000_000);
    assert_eq!(first_grant(seq, 7, 3), 158_000_000);
    assert_eq!(first_grant("Redlock()", 7, 3), 50_000_000);
    assert_eq!(first_grant(seq, 5, 0), 10_000_000);
    assert_eq!(first_grant("Redlock()", 5, 0), 2_000_000);
}

/// The time spent asking comes off the validity. T = 200 ms: drift = 0.01 x 200 ms + 2 ms =
/// 4 ms. Five masters, the first two silent, per-instance timeout D: elapsed = 2D + 6 ms,
/// validity = 200 - 2D - 6 - 4 ms. D = 95 ms: validity 0, not positive: a never holds (every
/// retry the same). D = 94 ms: validity 2 ms: a holds (from 194 ms to 196 ms). Asked at once,
/// the attempt ends at 50 ms: validity 146 ms, a holds.
#[test]
fn asking_one_at_a_time_can_spend_the_whole_validity() {
    let seq = |d: &str| format!("Redlock(acquire: Sequential(per_instance_timeout: \"{d}\"))");
    let never = run_text(&silent_masters(&seq("95ms"), "200ms", 5, 2));
    assert_eq!(never.grants, 0);
    assert!(never.holders.is_empty());
    // (It lets go at 196 ms and asks again; its own keys on m3-m5 refuse it until they expire,
    // so it holds again later: only its first grant is derived here.)
    let barely = run_text(&silent_masters(&seq("94ms"), "200ms", 5, 2));
    assert!(barely.grants >= 1, "{barely:?}");
    assert!(barely.max_unavailable_ns >= 194_000_000, "{barely:?}");
    let parallel = run_text(&silent_masters("Redlock()", "200ms", 5, 2));
    assert_eq!(parallel.holders, ["a"]);
    assert_eq!(parallel.max_unavailable_ns, 50_000_000);
}

/// A per-instance timeout above the lease is refused with the field, the value and the limit,
/// and exit code 2; one equal to the lease is accepted.
#[test]
fn a_per_instance_timeout_above_the_lease_is_refused() {
    let dir = crate::common::workdir("redlock-per-instance");
    let text = |d: &str| {
        silent_masters(
            &format!("Redlock(acquire: Sequential(per_instance_timeout: \"{d}\"))"),
            "10s",
            3,
            0,
        )
    };
    std::fs::write(dir.join("bad.ron"), text("10.001s")).unwrap();
    let o = crate::common::leasesim(&["check", "bad.ron"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "strategy.acquire.per_instance_timeout: 10.001s is above the lease (10s): one master \
             that does not answer would outlast every key the client set"
        ),
        "{err}"
    );
    assert!(validate(&scenario(&text("10s"))).is_empty());
    let zero = validate(&scenario(&text("0s")));
    assert!(
        zero.iter()
            .any(|p| p == "strategy.acquire.per_instance_timeout: must be positive (got 0s)"),
        "{zero:?}"
    );
}

/// `persistence: EverySec` keeps what the master had at its last whole second: the story of
/// redlock-master-restart-everysec with m3 crashing on either side of its fsync at 1 s (perfect
/// clocks: its monotonic clock reads true time). a's key was set on m3 at 0.001 s.
///   Crash at 0.999999999 s: before the fsync, the key is lost: the 7.848 s overlap.
///   Crash at 1.000000001 s: after it, m3 comes back at 1.5 s with a's key (alive to 10.001 s
///   on its wall clock): b gets only m4 and m5, and a's extensions at 3.05, 6.05 and 9.05 s get
///   m1-m3 each: no overlap, a alone, 3 renewals.
#[test]
fn everysec_keeps_the_key_once_the_master_reached_a_whole_second() {
    let crash_at = |at: &str| {
        let crash = format!(r#"Crash(node: "m3", at: "{at}"), Restart(node: "m3", at: "1.5s"),"#);
        let strategy = "Redlock(persistence: EverySec)";
        run_text(&five_masters(
            strategy,
            "grantor_restart: Forget",
            &crash,
            "",
        ))
    };
    let lost = crash_at("999999999ns");
    assert_eq!(lost.overlap.total_ns, 7_848_000_000);
    let kept = crash_at("1000000001ns");
    assert_eq!(kept.overlap.count, 0);
    assert_eq!(kept.holders, ["a"]);
    assert_eq!(kept.renewals, 3);
}

/// `persistence` and `lease.grantor_restart` combine: the disk decides which keys come back,
/// `Wait` refuses every new lock for T after the restart whatever came back. One master, T =
/// 10 s, 1 ms messages. a takes the lock at 0 (key alive to 10.001 s) and crashes at 0.5 s
/// (its belief ends). b asks from 100 ms and asks again 0.5 to 1 s after each answer (2 ms) or
/// timeout (50 ms, while the master is down, over [1.5 s, 2 s)). If the master grants every
/// lock arriving after x (or at x and after), b's first granted Lock is the first it sends
/// after x - 1 ms; it sent the one before at or before x - 1 ms and sends the next at most
/// 1.002 s later (1.05 s after a timeout), and holds 2 ms after sending; its slack is that less
/// a's 0.5 s:
///   None + Forget: the key is gone and granting opens at the restart, 2 s: slack in
///     (1.501 s, 2.551 s] (the gap after a Lock lost while the master was down is up to
///     50 ms + 1 s).
///   Always + Forget (EverySec too: the key was written at 0.001 s, on disk at 1 s): a's key
///     comes back and lives to 10.001 s: slack in (9.502 s, 10.504 s] (gaps 2 ms + 1 s).
///   Always + Wait, None + Wait: the master refuses every lock until its clock reads
///     2 s + 10 s = 12 s: slack in [11.501 s, 12.503 s].
#[test]
fn persistence_and_grantor_restart_combine() {
    let run = |persistence: &str, restart: &str| {
        run_text(&format!(
            r#"Scenario(
                duration: "15s",
                lease: (duration: "10s", grantor_restart: {restart}),
                strategy: Redlock(persistence: {persistence}),
                nodes: [
                    (name: "redis", role: Grantor), (name: "a", role: Contender),
                    (name: "b", role: Contender, start: "100ms"),
                ],
                network: (delay: Fixed("1ms")),
                faults: [
                    Crash(node: "a", at: "500ms"),
                    Crash(node: "redis", at: "1.5s"), Restart(node: "redis", at: "2s"),
                ],
            )"#
        ))
    };
    let slack_ms = |persistence: &str, restart: &str| {
        let s = run(persistence, restart);
        assert_eq!(s.holders, ["a", "b"], "{persistence} {restart}");
        assert_eq!(s.overlap.count, 0, "{persistence} {restart}");
        s.min_slack_ns.expect("a handover") as f64 / 1e6
    };
    let within = |ms: f64, lo: f64, hi: f64| lo < ms && ms <= hi;
    let s = slack_ms("None", "Forget");
    assert!(within(s, 1_501.0, 2_551.0), "{s}");
    for persistence in ["Always", "EverySec"] {
        let s = slack_ms(persistence, "Forget");
        assert!(within(s, 9_502.0, 10_504.0), "{persistence}: {s}");
    }
    for persistence in ["Always", "None"] {
        let s = slack_ms(persistence, "Wait");
        assert!((11_501.0..=12_503.0).contains(&s), "{persistence}: {s}");
    }
}

/// A `SET NX` to a master whose Redis process is down is refused at once and counts as a failure
/// (redlock-master-down-refused): asked one at a time, m1 and m2 cost 2 ms each instead of the
/// 50 ms per-instance timeout, so a holds from 10 ms (106 ms when they are cut off); 2 Locks
/// and 3 rounds x 2 Extends are refused. Asked all at once, the attempt decides when the last
/// answer comes, at 2 ms (m1's and m2's refusals and m3-m5's grants all arrive then), instead of
/// at the 50 ms request timeout.
#[test]
fn a_refused_master_fails_the_attempt_at_once() {
    let text = leasesim::scenario::library::text("redlock-master-down-refused").unwrap();
    let s = run_text(text);
    assert_eq!(s.messages_refused, 8);
    assert_eq!(
        (s.grants, s.renewals, s.max_unavailable_ns),
        (1, 3, 10_000_000)
    );
    let parallel = run_text(&text.replace(
        r#"Redlock(acquire: Sequential(per_instance_timeout: "50ms"))"#,
        "Redlock",
    ));
    assert_eq!(parallel.max_unavailable_ns, 2_000_000);
    let cut = run_text(&text.replace(
        r#"faults: [Crash(node: "m1", at: "0s"), Crash(node: "m2", at: "0s")]"#,
        r#"faults: [Partition(at: "0s", duration: "12s", groups: [["a"], ["m1", "m2"]])]"#,
    ));
    assert_eq!(
        (cut.messages_refused, cut.max_unavailable_ns),
        (0, 106_000_000)
    );
}
