//! `leasesim explore`: what it must find on the bundled explore-* scenarios, that a
//! counterexample replays exactly for every protocol, and that the answer does not depend on
//! `--jobs` or shards.

use crate::common::{leasesim, same_reports, workdir};
use leasesim::scenario::nemesis::Nemesis;
use leasesim::scenario::{Fault, FreezeClock, PauseKind, Scenario, Thread};
use std::fs;
use std::path::Path;

const MS: i64 = 1_000_000;

/// Runs `leasesim explore` with `args` in a fresh directory; the exit code and the directory.
fn explore(test: &str, args: &[&str]) -> (i32, std::path::PathBuf) {
    let (code, dir, _) = explore_printing(test, args);
    (code, dir)
}

/// [`explore`], and what it printed.
fn explore_printing(test: &str, args: &[&str]) -> (i32, std::path::PathBuf, String) {
    let dir = workdir(test);
    let mut all = vec!["explore"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", "out"]);
    let out = leasesim(&all, &dir);
    let code = out.status.code().expect("an exit code");
    assert!(
        code == 0 || code == 1,
        "explore {args:?}: exit {code}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, dir, String::from_utf8(out.stdout).unwrap())
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

fn counterexample(report: &Path) -> Scenario {
    let text = fs::read_to_string(report.join("counterexample.ron")).unwrap();
    Scenario::from_ron(&text).expect("a counterexample parses")
}

/// `leasesim run FILE --json` in `dir`: its summary, and that every expectation held (exit 0).
fn replay(dir: &Path, file: &Path) -> serde_json::Value {
    let out = leasesim(
        &["run", file.to_str().unwrap(), "--json", "--out", "replayed"],
        dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "replaying {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The figures of a summary that a replay must give again (the name differs).
fn figures(s: &serde_json::Value) -> serde_json::Value {
    let mut s = s.clone();
    s.as_object_mut().unwrap().remove("scenario");
    s.as_object_mut().unwrap().remove("expect");
    s
}

#[test]
fn a_cached_bool_holder_under_pauses_shrinks_to_one_pause() {
    let (code, dir, stdout) = explore_printing(
        "explore-cached-bool",
        &["explore-cached-bool-pauses", "--runs", "200"],
    );
    assert_eq!(code, 1, "a violation was found");
    let report = dir.join("out/explore-cached-bool-pauses");
    let c = counterexample(&report);
    let [Fault::Pause {
        node,
        at,
        duration,
        kind: PauseKind::Gc,
        ..
    }] = c.faults.as_slice()
    else {
        panic!("one GC pause: {:?}", c.faults)
    };
    assert_eq!(node, "a");
    // a's term starts when it sends: at 0, then at each renewal, 2 ms + 3k s. With L the last
    // start at or before the pause, the grantor frees the lease at L + 1 ms + 10 s and b, queued,
    // believes from L + 10.002 s; a's cached bool stays set until its renewal timer runs on
    // resume, at at + d. So the overlap is at + d - (L + 10.002 s), and positive. (The shrink
    // leaves d at a readable value a little above the least that overlaps.)
    let (at, d) = (at.ns(), duration.ns());
    let last_start = if at < 3_002 * MS {
        0
    } else {
        2 * MS + (at - 2 * MS) / (3_000 * MS) * (3_000 * MS)
    };
    let overlap = at + d - (last_start + 10_002 * MS);
    assert!(overlap > 0, "overlap {overlap} ns from {at} + {d}");
    let summary = json(&report.join("summary.json"));
    assert_eq!(summary["overlap"]["max_ns"], overlap);
    // The file replays with the same figures, and its expect block holds.
    let replayed = replay(&dir, &report.join("counterexample.ron"));
    assert_eq!(figures(&replayed), figures(&summary));
    let e = json(&report.join("explore.json"));
    assert_eq!(e["violation"]["kind"], "write_overlap");
    assert_eq!(e["violation"]["after"]["faults"], 1);
    assert!(e["violation"]["before"]["faults"].as_u64().unwrap() >= 1);
    // The envelope, as RON, is the scenario's `nemesis` block: GC pauses up to 20 s, 1 a minute.
    let nemesis: Nemesis = leasesim::scenario::ron_options()
        .from_str(e["nemesis"].as_str().expect("RON text"))
        .unwrap();
    let pauses = nemesis.pauses.expect("pauses");
    assert_eq!((pauses.max.ns(), pauses.per_minute), (20_000 * MS, 1.0));
    assert_eq!(nemesis.freezes, None);
    // The printed figures are the counterexample's: one overlap of `overlap` ns. The cached
    // bool acts (and reads) while it overlaps, so the harm counts are the summary's.
    let found = stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("found"))
        .expect("a `found` line")
        .trim_start();
    assert_eq!(
        found,
        format!(
            "1 overlap(s), max {}; zombie actions {}, stale reads {}, unsafe writes {}",
            leasesim::time::format_ns(overlap),
            summary["zombie_actions"],
            summary["stale_reads"],
            summary["unsafe_writes"]
        )
    );
}

#[test]
fn two_sided_below_the_drift_bound_is_broken_by_drift_alone() {
    let (code, dir) = explore(
        "explore-two-sided-drift",
        &["explore-two-sided-drift-below-bound", "--runs", "200"],
    );
    assert_eq!(code, 1);
    let report = dir.join("out/explore-two-sided-drift-below-bound");
    let c = counterexample(&report);
    // No fault but the scenario's own cut: the drift placement is the whole counterexample.
    assert!(
        matches!(c.faults.as_slice(), [Fault::OneWay { from, .. }] if from == "h"),
        "{:?}",
        c.faults
    );
    assert!(c
        .nodes
        .iter()
        .any(|n| n.drift_ppm.is_some_and(|d| d != 0.0)));
    // No placement inside rho = 1000 ppm overlaps by more than the adversarial one's
    // 2.997500 ms (see the scenario's comment).
    let max = json(&report.join("summary.json"))["overlap"]["max_ns"]
        .as_i64()
        .unwrap();
    assert!(max > 0 && max <= 2_997_500, "{max}");
    replay(&dir, &report.join("counterexample.ron"));
}

/// Redisson's watchdog under stalls of its thread: explore finds the stall that outlasts the
/// key and shrinks the run to it, one stall of pod-a's renewal loop.
#[test]
fn a_starved_watchdog_is_found_and_shrinks_to_one_renewal_stall() {
    let name = "explore-cached-bool-renewal-stalls";
    let (code, dir) = explore("explore-renewal-stalls", &[name, "--runs", "200"]);
    assert_eq!(code, 1, "a violation was found");
    let report = dir.join("out").join(name);
    let c = counterexample(&report);
    let [Fault::ThreadStall {
        node,
        thread: Thread::Renewal,
        at,
        duration,
    }] = c.faults.as_slice()
    else {
        panic!("one renewal-loop stall: {:?}", c.faults)
    };
    assert_eq!(node, "pod-a");
    // pod-a's Acquire leaves at 0 and its renewals at 2 ms + 10k s (k >= 1); a renewal due
    // inside the stall waits. With L the last one sent before the stall (0 for the Acquire),
    // redis accepts it at L + 1 ms, lets the key lapse 30 s later and grants pod-b (queued)
    // then, which holds from L + 30.002 s; pod-a's cached bool stays set until its renewal
    // timer runs at the stall's end. So the overlap is at + d - (L + 30.002 s).
    let (at, d) = (at.ns(), duration.ns());
    let last = if at <= 10_002 * MS {
        0
    } else {
        2 * MS + (at - 2 * MS - 1) / (10_000 * MS) * (10_000 * MS)
    };
    let overlap = at + d - (last + 30_002 * MS);
    assert!(overlap > 0, "overlap {overlap} ns from {at} + {d}");
    let summary = json(&report.join("summary.json"));
    assert_eq!(summary["overlap"]["max_ns"], overlap);
    assert_eq!(summary["thread_stalls"], 1);
    let replayed = replay(&dir, &report.join("counterexample.ron"));
    assert_eq!(figures(&replayed), figures(&summary));
    let e = json(&report.join("explore.json"));
    assert_eq!(e["violation"]["kind"], "write_overlap");
}

#[test]
fn a_stalled_vm_freeze_breaks_two_sided_and_shrinks_to_the_freeze() {
    let (code, dir) = explore(
        "explore-freeze",
        &["explore-two-sided-vm-freeze-stall", "--runs", "200"],
    );
    assert_eq!(code, 1);
    let report = dir.join("out/explore-two-sided-vm-freeze-stall");
    let c = counterexample(&report);
    assert!(
        matches!(
            c.faults.as_slice(),
            [f @ Fault::Pause { node, kind: PauseKind::VmFreeze, .. }]
                if node == "a" && f.freeze_clock() == Some(FreezeClock::Stall)
        ),
        "{:?}",
        c.faults
    );
    replay(&dir, &report.join("counterexample.ron"));
}

#[test]
fn a_raft_lease_with_drift_beyond_its_bound_is_found() {
    let (code, dir) = explore(
        "explore-raft",
        &["explore-raft-drift-beyond-bound", "--runs", "200"],
    );
    assert_eq!(code, 1);
    let report = dir.join("out/explore-raft-drift-beyond-bound");
    let c = counterexample(&report);
    assert!(
        matches!(c.faults.as_slice(), [Fault::Partition { .. }]),
        "{:?}",
        c.faults
    );
    assert!(c
        .nodes
        .iter()
        .any(|n| n.drift_ppm.is_some_and(|d| d != 0.0)));
    replay(&dir, &report.join("counterexample.ron"));
}

#[test]
fn two_sided_within_its_envelope_survives_ten_thousand_runs() {
    let (code, dir) = explore(
        "explore-within",
        &["explore-two-sided-within-envelope", "--runs", "10000"],
    );
    assert_eq!(code, 0, "nothing to find");
    let report = dir.join("out/explore-two-sided-within-envelope");
    let e = json(&report.join("explore.json"));
    assert!(e["violation"].is_null());
    assert_eq!(e["runs_done"], 10000);
    // 22 ms of slack with exact clocks, of which drift inside rho eats at most 10.000 ms (the
    // scenario's comment): no run keeps less than 12 ms.
    let miss = e["nearest_miss"]["min_slack_ns"].as_i64().unwrap();
    assert!((12 * MS - 1..22 * MS).contains(&miss), "{miss}");
    // The nearest miss replays with its slack.
    let replayed = replay(&dir, &report.join("nearest-miss.ron"));
    assert_eq!(replayed["min_slack_ns"], miss);
    for f in ["slack.png", "slack.svg", "runs.csv"] {
        assert!(report.join(f).exists(), "{f}");
    }
    let runs = fs::read_to_string(report.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 10_001);
}

#[test]
fn the_answer_does_not_depend_on_jobs_or_shards() {
    for (name, runs) in [
        ("explore-cached-bool-pauses", "120"),
        ("explore-two-sided-within-envelope", "150"),
    ] {
        let (_, one) = explore(
            &format!("explore-jobs1-{name}"),
            &[name, "--runs", runs, "--jobs", "1"],
        );
        let (_, two) = explore(
            &format!("explore-jobs2-{name}"),
            &[name, "--runs", runs, "--jobs", "2"],
        );
        same_reports(&one.join("out").join(name), &two.join("out").join(name));
        // Shards run swarm's runs: the merge is what one machine gives with --search swarm.
        let (_, one) = explore(
            &format!("explore-swarm-{name}"),
            &[name, "--runs", runs, "--search", "swarm"],
        );
        let sharded = workdir(&format!("explore-shards-{name}"));
        for i in 0..3 {
            let shard = format!("{i}/3");
            let out = leasesim(
                &[
                    "explore", name, "--runs", runs, "--search", "swarm", "--shard", &shard,
                    "--out", "parts",
                ],
                &sharded,
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let parts = format!("parts/{name}-explore");
        let out = leasesim(&["explore-merge", &parts, "--out", "merged"], &sharded);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        same_reports(
            &one.join("out").join(name),
            &sharded.join("merged").join(name),
        );
        // Guided search does not shard: a usage error, nothing written.
        let out = leasesim(
            &[
                "explore", name, "--runs", runs, "--shard", "0/3", "--out", "guided",
            ],
            &sharded,
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--search swarm"));
        assert!(!sharded.join("guided").exists());
    }
}

#[test]
fn a_missing_envelope_or_an_unknown_profile_is_a_usage_error() {
    let dir = workdir("explore-bad");
    let out = leasesim(
        &[
            "explore",
            "q4-gc-pause-two-sided",
            "--runs",
            "5",
            "--out",
            "o",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no `nemesis` block")
            && err.contains("pauses, clocks, network, crashes, threads, all"),
        "{err}"
    );
    let out = leasesim(
        &[
            "explore",
            "q4-gc-pause-two-sided",
            "--runs",
            "5",
            "--nemesis",
            "nope",
            "--out",
            "o",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--nemesis \"nope\": no such profile"));
    assert!(!dir.join("o").exists(), "nothing written");
}

/// For every protocol, whatever explore answers replays exactly: the counterexample with its
/// figures (and its expect block holding), or the nearest miss with its slack.
#[test]
fn every_protocol_s_answer_replays_exactly() {
    for name in [
        "q4-gc-pause-two-sided",
        "truetime-drift-within-bound",
        "redlock-pause-replies-in-flight",
        "raft-tikv-partitioned-leader",
        "leaseguard-failover-leaseguard",
        "chubby-jeopardy-safe",
        "k8s-delayed-renew-reply-within-margin",
    ] {
        let (code, dir) = explore(
            &format!("explore-every-{name}"),
            &[name, "--runs", "24", "--nemesis", "all"],
        );
        let report = dir.join("out").join(name);
        let e = json(&report.join("explore.json"));
        if code == 1 {
            // Stopped at the first violation, which is the last run done.
            assert_eq!(
                e["runs_done"],
                e["violation"]["run"].as_u64().unwrap() + 1,
                "{name}"
            );
            let replayed = replay(&dir, &report.join("counterexample.ron"));
            assert_eq!(
                figures(&replayed),
                figures(&json(&report.join("summary.json"))),
                "{name}"
            );
        } else {
            assert_eq!(e["runs_done"], 24, "{name}");
            assert!(e["violation"].is_null(), "{name}");
            if let Some(miss) = e["nearest_miss"]["min_slack_ns"].as_i64() {
                let replayed = replay(&dir, &report.join("nearest-miss.ron"));
                assert_eq!(replayed["min_slack_ns"], miss, "{name}");
            }
        }
    }
}

/// The evidence an exploration without a violation gives: explore-two-sided-within-envelope
/// cuts its holder off at 10 s, so every swarm run hands the lease over (the scenario's
/// comment): 40 runs (all swarm) are 40 handovers, fewer than 100, so weak. Past the first 64,
/// guided search may re-anchor that cut to a protocol moment that never comes, and such a run
/// has no handover: 120 runs give at least 114 (95%), not weak. The least slack is the nearest
/// miss's, at least the 12 ms the drift cannot eat.
#[test]
fn the_evidence_counts_every_handover_and_warns_when_weak() {
    for (runs, weak) in [(40u64, true), (120, false)] {
        let n = runs.to_string();
        let dir = workdir(&format!("explore-power-{runs}"));
        let out = leasesim(
            &[
                "explore",
                "explore-two-sided-within-envelope",
                "--runs",
                &n,
                "--out",
                "out",
            ],
            &dir,
        );
        assert_eq!(out.status.code(), Some(0));
        let printed = String::from_utf8_lossy(&out.stdout);
        let e = json(&dir.join("out/explore-two-sided-within-envelope/explore.json"));
        let p = &e["power"];
        assert_eq!(p["runs"], runs);
        let handovers = p["handovers"].as_u64().unwrap();
        if runs <= 64 {
            assert_eq!(handovers, runs);
        } else {
            assert!(
                (runs - runs / 20..=runs).contains(&handovers),
                "{handovers}"
            );
        }
        assert_eq!(p["weak"], weak);
        let least = p["least_slack_ns"].as_i64().unwrap();
        assert_eq!(least, e["nearest_miss"]["min_slack_ns"].as_i64().unwrap());
        assert!((12 * MS - 1..22 * MS).contains(&least), "{least}");
        let q = &p["slack_ns"];
        assert_eq!(q["min"], least);
        assert!(q["median"].as_i64().unwrap() >= least);
        assert!(
            printed.contains(&format!("{handovers} of {runs} runs had a handover")),
            "{printed}"
        );
        assert_eq!(
            printed.contains("WEAK: only"),
            weak,
            "the warning when weak: {printed}"
        );
    }
    // A violation found at the first handover: explore-cached-bool-pauses's run 59 of the
    // README's example is its only run with a handover (in the others no pause of a outlasted its term, so a kept
    // the lease).
    let (code, dir) = explore(
        "explore-power-violation",
        &["explore-cached-bool-pauses", "--runs", "200"],
    );
    assert_eq!(code, 1);
    let e = json(&dir.join("out/explore-cached-bool-pauses/explore.json"));
    assert_eq!(e["power"]["runs"], 60);
    assert_eq!(e["power"]["handovers"], 1);
    assert!(e["power"]["least_slack_ns"].as_i64().unwrap() < 0);
}

/// An exploration that finds nothing never calls the envelope safe: it says it found no
/// violation in so many runs, then the evidence. On explore-two-sided-within-envelope guided
/// search breeds its generations from the runs nearest a violation, at most 8 of one outcome
/// in its archive: its most common slack (12.010003 ms in 734 of 1947 runs with a handover
/// when written, beside the nearest miss's 12.010001 ms) is under half, but some of its
/// generations are captured by one outcome, and it says so. Swarm
/// testing draws every run on its own, and no slack value takes more than half its runs (its
/// most common, the 22 ms of a run whose faults miss the handover, took 942 of 2000 when
/// written), so nothing is flagged.
#[test]
fn no_violation_found_is_never_called_safe_and_a_collapsed_search_is_flagged() {
    for search in ["guided", "swarm"] {
        let dir = workdir(&format!("explore-collapsed-{search}"));
        let name = "explore-two-sided-within-envelope";
        let args = [
            "explore", name, "--runs", "2000", "--search", search, "--out", "out",
        ];
        let out = leasesim(&args, &dir);
        assert_eq!(out.status.code(), Some(0), "{search}");
        let printed = String::from_utf8_lossy(&out.stdout);
        let headline = printed.lines().nth(1).unwrap();
        assert_eq!(
            headline,
            format!("no violation found in 2000 runs of {name} (a search, not a proof of safety)")
        );
        assert!(!printed.contains("SAFE"), "{printed}");
        let p = &json(&dir.join("out").join(name).join("explore.json"))["power"];
        let weak_lines: Vec<&str> = printed
            .lines()
            .filter(|l| l.starts_with("  weak evidence "))
            .collect();
        if search == "swarm" {
            assert!(p["collapsed"].is_null(), "{p}");
            assert!(weak_lines.is_empty(), "{printed}");
            continue;
        }
        // Guided search keeps at most 8 archive members of one outcome, so the slack it found
        // (12.010001 ms, the arithmetic's 12 ms and the runs' few ns) no longer takes more than
        // half of its runs: not collapsed. (Swarm's flag is tested on counts in `output`.)
        assert!(p["collapsed"].is_null(), "{p}");
        // Some of its bred generations were still captured by one outcome, and it says how many.
        let j = json(&dir.join("out").join(name).join("explore.json"));
        let g = &j["captured_generations"];
        let (captured, bred) = (g["captured"].as_u64().unwrap(), g["of"].as_u64().unwrap());
        // (2000 - 64) / 32 = 60 whole bred generations.
        assert_eq!(bred, 60);
        assert!((1..=bred).contains(&captured), "{g}");
        assert_eq!(
            weak_lines,
            [format!(
                "  weak evidence {captured} of 60 bred generations were captured by one \
                 outcome (three in four of their bred runs alike): the search kept breeding \
                 one lineage"
            )]
        );
    }
}

/// Guided search finds a needle that swarm testing misses for far longer: on
/// needle-wall-clock-cut-then-step-back only a cut between the holder and the grantor then a
/// backward step on that holder before its deadline overlaps (the scenario's comment tells it of
/// a, the first holder; once the lease moved, b is the same case). Guided finds it within 400
/// runs and shrinks it to those faults, which replay; swarm's first 400 runs find nothing.
#[test]
fn guided_search_finds_a_needle_and_its_counterexample_replays() {
    let name = "needle-wall-clock-cut-then-step-back";
    let (code, dir) = explore("explore-needle-guided", &[name, "--runs", "400"]);
    assert_eq!(code, 1, "guided finds it");
    let report = dir.join("out").join(name);
    let e = json(&report.join("explore.json"));
    assert_eq!(e["search"], "guided");
    let run = e["violation"]["run"].as_u64().unwrap();
    // Past the 64 swarm runs of generation 0: found by a bred run.
    assert!((64..400).contains(&run), "{run}");
    let c = counterexample(&report);
    // A partition that keeps a's renewals from the grantor, and the step.
    assert!(
        c.faults
            .iter()
            .any(|f| matches!(f, Fault::Partition { .. })),
        "{:?}",
        c.faults
    );
    assert!(
        c.faults.iter().any(|f| matches!(
            f,
            Fault::ClockStep { by, .. } if by.ns() < -52 * MS
        )),
        "a step back of more than 52 ms on a holder: {:?}",
        c.faults
    );
    assert!(c.faults.len() >= 2, "{:?}", c.faults);
    replay(&dir, &report.join("counterexample.ron"));
    let (code, _) = explore(
        "explore-needle-swarm",
        &[name, "--runs", "400", "--search", "swarm"],
    );
    assert_eq!(code, 0, "swarm's first 400 runs miss it");
}

/// The shrink reaches a needle's two faults where a fault of the search only delayed the
/// timeline the others were placed against. On needle-chubby-freeze-then-cut the first
/// violation guided search finds (the needle's seed, 2,000 runs) has a 400 ms freeze of the
/// master at 0 s beside a's freeze and the cut; removed with the others moved 400 ms earlier,
/// it still fails: a freeze of a and a cut of a, which replay. On
/// needle-zookeeper-cut-then-step-back: a cut of a and a backward step of a's wall clock.
#[test]
fn the_shrink_reaches_the_needles_two_faults() {
    type Is = fn(&Fault) -> bool;
    let cases: [(&str, &[Is]); 3] = [
        (
            "needle-chubby-freeze-then-cut",
            &[
                |f| matches!(f, Fault::Pause { node, kind: PauseKind::VmFreeze, .. } if node == "a"),
                |f| matches!(f, Fault::Partition { groups, .. } if groups[0] == ["a"]),
            ],
        ),
        (
            "needle-zookeeper-cut-then-step-back",
            &[
                |f| matches!(f, Fault::Partition { groups, .. } if groups[0] == ["a"]),
                |f| matches!(f, Fault::ClockStep { node, by, .. } if node == "a" && by.ns() < 0),
            ],
        ),
        // The scheduled transfer, the TimeoutNow held up, r1 paused when it arrives. The
        // search's run also paused r1 over the transfer (which held the TimeoutNow up to the
        // pause's end, where the spike was placed): removed with what it held the transfer up
        // by closed, the spike and the last pause move that much earlier and still fail.
        (
            "needle-raft-late-timeout-now-then-pause",
            &[
                |f| matches!(f, Fault::TransferLeader { .. }),
                |f| matches!(f, Fault::DelaySpike { .. }),
                |f| matches!(f, Fault::Pause { node, .. } if node == "r1"),
            ],
        ),
    ];
    for (name, wanted) in cases {
        let (code, dir) = explore(
            &format!("explore-minimum-{name}"),
            &[name, "--runs", "2000"],
        );
        assert_eq!(code, 1, "{name}: guided finds it");
        let report = dir.join("out").join(name);
        let c = counterexample(&report);
        assert_eq!(c.faults.len(), wanted.len(), "{name}: {:?}", c.faults);
        assert!(
            c.faults.iter().zip(wanted).all(|(f, is)| is(f)),
            "{name}: {:?}",
            c.faults
        );
        replay(&dir, &report.join("counterexample.ron"));
    }
}

/// `explore --liveness`: the Raft replicas without PreVote (the bundled story) lose their leader
/// for longer than the bound after the faults end; the shrunk run keeps the two faults that do
/// it, replays with its expectations held, and says how long no one led. With PreVote the same
/// search finds nothing, and says how late the latest recovery came.
#[test]
fn liveness_finds_a_follower_whose_terms_keep_the_others_from_electing() {
    let name = "explore-raft-liveness-without-prevote";
    let (code, dir, stdout) = explore_printing(
        "explore-liveness",
        &[name, "--runs", "2000", "--liveness", "5s"],
    );
    assert_eq!(code, 1, "a liveness violation was found: {stdout}");
    let report = dir.join("out").join(name);
    let e = json(&report.join("explore.json"));
    assert_eq!(e["violation"]["kind"], "no_recovery");
    let c = counterexample(&report);
    assert_eq!(c.faults.len(), 2, "{:?}", c.faults);
    let summary = replay(&dir, &report.join("counterexample.ron"));
    assert_eq!(summary["overlap"]["count"], 0);
    // Judged: the run lasts at least the bound after its faults, and no one led within it.
    let (end, faults_end) = (
        summary["duration_ns"].as_i64().unwrap(),
        summary["faults_end_ns"].as_i64().unwrap(),
    );
    assert!(end - faults_end >= 5_000 * MS, "{end} - {faults_end}");
    assert!(
        summary["recovery_ns"]
            .as_i64()
            .is_none_or(|r| r > 5_000 * MS),
        "{summary}"
    );
    assert!(
        stdout.contains(" no holder served from the faults' end at ")
            || stdout.contains(" a holder served "),
        "{stdout}"
    );

    let text = leasesim::scenario::library::text(name)
        .unwrap()
        .replace("pre_vote: false", "pre_vote: true");
    fs::write(dir.join("prevote.ron"), text).unwrap();
    let (code, _, stdout) = explore_printing(
        "explore-liveness-prevote",
        &[
            dir.join("prevote.ron").to_str().unwrap(),
            "--runs",
            "2000",
            "--liveness",
            "5s",
        ],
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("  liveness      every run recovered within 5s; the latest "),
        "{stdout}"
    );
}

#[test]
fn a_liveness_bound_must_leave_room_in_the_run() {
    // The envelope's faults stop twice the bound before the end: 30 s in a 60 s run leaves none.
    let dir = workdir("explore-liveness-too-long");
    let out = leasesim(
        &[
            "explore",
            "explore-raft-liveness-without-prevote",
            "--runs",
            "10",
            "--liveness",
            "30s",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--liveness 30s: the envelope's faults stop twice the bound before the run's end, and the run lasts 60s"),
        "{err}"
    );
}

/// The bundled scenario `name` with `faults` added.
fn with_faults(name: &str, faults: &[Fault]) -> Scenario {
    let mut s = Scenario::from_ron(leasesim::scenario::library::text(name).unwrap()).unwrap();
    s.faults.extend_from_slice(faults);
    s
}

#[test]
fn guided_search_credits_only_the_handovers_the_faults_change() {
    use leasesim::explore::guided::Guide;
    use leasesim::time::Dur;
    // needle-raft-late-timeout-now-then-pause (see its file): without the envelope's faults
    // the scheduled transfer hands over with 5 ms of slack (r2 serves from 2.505 s), which no
    // fault changed: no credit. The TimeoutNow held up 12 s (a spike over [2.4 s, 2.6 s) of
    // 12 s): r2 campaigns at 2.501 + 12 = 14.501 s and serves from 14.505 s with 3 ms of
    // slack, a handover the quiet run does not have: credit 3 ms, and its focus r1 (node 0),
    // whose belief ended at 14.505 - 0.003 = 14.502 s. A pause of r1 alone (14 s, 1 s) changes
    // no handover: no credit.
    let name = "needle-raft-late-timeout-now-then-pause";
    let quiet = crate::common::run(&with_faults(name, &[]));
    assert_eq!(quiet.min_slack_ns, Some(5 * MS));
    let q = &quiet.guidance;
    // r2 (node 1) after r1 (node 0).
    assert!(
        q.handovers.contains(&(2_505 * MS, 5 * MS, 0)),
        "{:?}",
        q.handovers
    );
    assert_eq!(Guide::of(q, q).credit_ns, None);
    let spike = Fault::DelaySpike {
        at: Dur::from_ms(2_400).into(),
        duration: Dur::from_ms(200),
        extra: Dur::from_secs(12),
        from: None,
        to: None,
        kinds: None,
    };
    let held = crate::common::run(&with_faults(name, &[spike]));
    let g = Guide::of(&held.guidance, q);
    assert_eq!(
        (g.credit_ns, g.focus),
        (Some(3 * MS), Some((0, 14_502 * MS)))
    );
    let pause = Fault::Pause {
        node: "r1".into(),
        at: Dur::from_secs(14).into(),
        duration: Dur::from_secs(1),
        kind: PauseKind::Gc,
        clock: None,
    };
    let paused = crate::common::run(&with_faults(name, &[pause]));
    assert_eq!(paused.min_slack_ns, Some(5 * MS));
    assert_eq!(Guide::of(&paused.guidance, q).credit_ns, None);
}

#[test]
fn a_holder_believing_past_its_grantors_end_is_measured_without_a_handover() {
    use leasesim::time::Dur;
    // drift-beyond-bound-holder-only (see its file): a believes until 19.035066133 s, while the
    // grantor frees the lease at 18.996085974 s: 19.035066133 - 18.996085974 = 38.980159 ms
    // past its end (b's grant arrives 1 ms after the grantor frees it: the overlap, 37.980159
    // ms, is 1 ms shorter).
    let name = "drift-beyond-bound-holder-only";
    let r = crate::common::run(&with_faults(name, &[]));
    assert_eq!(r.guidance.overrun_ns, Some(38_980_159));
    // Without b nobody takes over: no handover, no overlap, and the same 38.980159 ms.
    let mut alone = with_faults(name, &[]);
    alone.nodes.retain(|n| n.name != "b");
    alone.faults.clear();
    alone.faults.push(Fault::Partition {
        at: Dur::from_secs(10).into(),
        duration: Dur::from_secs(20),
        groups: vec![vec!["a".into()], vec!["lock".into()]],
    });
    alone.expect = None;
    let r = crate::common::run(&alone);
    assert_eq!(r.min_slack_ns, None);
    assert_eq!(r.guidance.overrun_ns, Some(38_980_159));
    // epsilon-with-headroom-ntp-slew: a stops at 18.987693132 s, before the grantor frees the
    // lease at 19.002950048 s (b's grant arrives 1 ms later): none.
    let safe = crate::common::run(&with_faults("epsilon-with-headroom-ntp-slew", &[]));
    assert_eq!(safe.guidance.overrun_ns, None, "{:?}", safe.guidance);
    // A leader that grants itself (Raft) gives no grantor's end to measure against.
    let raft = crate::common::run(&with_faults("needle-raft-late-timeout-now-then-pause", &[]));
    assert_eq!(raft.guidance.overrun_ns, None);
}
