//! `leasesim explore --exhaustive`: the statement of what a search without a violation proved,
//! the counterexample of one with a violation (a replay shows it), and flags that do not go
//! with it refused.

use crate::common::{leasesim, workdir};
use std::fs;

const NEEDLE: &str = "needle-zookeeper-cut-then-step-back";

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// One fault alone never breaks the ZooKeeper needle (its file says so and why): the search
/// proves it on the default grid, and `explore.json` says what was searched.
#[test]
fn one_fault_proves_the_needle_safe_alone() {
    let dir = workdir("exhaustive-one");
    let out = leasesim(
        &[
            "explore",
            NEEDLE,
            "--exhaustive",
            "--faults",
            "1",
            "--out",
            "out",
        ],
        &dir,
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("no violation with up to 1 fault of pauses (500ms), steps (±5s), partitions of one node (40s) (each at its largest; 12 faults in all)"), "{stdout}");
    let j = json(&dir.join("out").join(NEEDLE).join("explore.json"));
    assert_eq!(j["search"], "exhaustive");
    let x = &j["exhaustive"];
    assert_eq!(x["proved"], true);
    assert_eq!(x["faults"], 1);
    assert_eq!(x["letters"], 12);
    assert_eq!(x["offsets"].as_array().unwrap().len(), 7);
    assert_eq!(
        x["moments"],
        serde_json::json!(["grant", "renewal", "acquire", "expiry"])
    );
    // Every schedule is one root or one letter at one instant: a multiple of 12, plus 1.
    let schedules = x["schedules"].as_u64().unwrap();
    let skipped = x["invalid"].as_u64().unwrap();
    assert_eq!((schedules + skipped - 1) % 12, 0, "{x}");
    assert_eq!(j["runs_done"].as_u64().unwrap(), schedules);
    assert!(x["statement"]
        .as_str()
        .unwrap()
        .ends_with("invalid schedules skipped"));
}

/// Two faults find it: a cut of `a`, then a step back while it is SUSPENDED. The counterexample
/// replays the overlap.
#[test]
fn two_faults_find_the_needle_and_the_counterexample_replays() {
    let dir = workdir("exhaustive-two");
    let out = leasesim(
        &[
            "explore",
            NEEDLE,
            "--exhaustive",
            "--faults",
            "2",
            "--offsets",
            "-1/8,0",
            "--out",
            "out",
        ],
        &dir,
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("exhaustive schedule"), "{stdout}");
    let report = dir.join("out").join(NEEDLE);
    let j = json(&report.join("explore.json"));
    assert_eq!(j["exhaustive"]["proved"], false);
    let statement = j["exhaustive"]["statement"].as_str().unwrap();
    let run = j["violation"]["run"].as_u64().unwrap();
    assert!(
        statement.starts_with(&format!("a violation at schedule {run} (proving nothing)")),
        "{statement}"
    );
    assert_eq!(
        j["violation"]["kinds"],
        serde_json::json!(["steps", "partitions"])
    );
    let ce = fs::read_to_string(report.join("counterexample.ron")).unwrap();
    assert!(
        ce.contains("--exhaustive --faults 2 --offsets -1/8,0"),
        "{ce}"
    );
    assert!(ce.contains("ClockStep") && ce.contains("Partition"), "{ce}");
    let replay = leasesim(
        &[
            "run",
            report.join("counterexample.ron").to_str().unwrap(),
            "--out",
            "replayed",
        ],
        &dir,
    );
    assert_eq!(
        replay.status.code(),
        Some(0),
        "the counterexample's expect holds"
    );
}

#[test]
fn flags_that_do_not_go_with_it_are_refused() {
    let dir = workdir("exhaustive-flags");
    for args in [
        vec!["--exhaustive", "--search", "swarm"],
        vec!["--exhaustive", "--shard", "0/2"],
        vec!["--exhaustive", "--faults", "4"],
        vec!["--runs", "10", "--faults", "2"],
        vec!["--exhaustive", "--offsets", "1/0"],
        vec!["--exhaustive", "--sizes", "2"],
        vec!["--exhaustive", "--moments", "lunch"],
        vec!["--exhaustive", "--runs", "2000000"],
    ] {
        let mut all = vec!["explore", NEEDLE, "--out", "out"];
        all.extend_from_slice(&args);
        let out = leasesim(&all, &dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(!dir.join("out").join(NEEDLE).exists(), "nothing written");
}
