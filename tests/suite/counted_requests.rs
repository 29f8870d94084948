//! A report is the same whether the requests the engine may count for it (refused as they
//! arrive; reads served without harm that saw nothing new) reach its observers one by one or
//! are counted by the engine in their stead. `run` without `--history` or `--trace` lets the
//! engine count them once the client log has kept its first 5,000 operations and the chart its
//! first 5,000 exact marks of the kind; `run --history` has every one told. Both reports must
//! carry the same bytes: the chart's bins per node, the log's count of operations, its stale
//! reads with the writes they missed, and everything else.

use crate::common::{leasesim, report_files, workdir};
use std::fs;

/// Two contenders of three refuse their reads (20,000 a second each) while the third holds:
/// about 120,000 refusals in 3 s, so the engine counts nearly all of them. The pauses hold
/// requests back: those refused when their node wakes were told as they arrived, and are
/// told as they fail, counted or not.
const HEAVY: &str = r#"Scenario(
    seed: 7,
    duration: "3s",
    lease: (duration: "1s"),
    strategy: TwoSided(holder_margin: "10ms"),
    nodes: [
        (name: "lock", role: Grantor),
        (name: "a", role: Contender),
        (name: "b", role: Contender),
        (name: "c", role: Contender),
    ],
    network: (delay: Uniform(min: "1ms", max: "3ms")),
    workload: (reads_per_second: 20000.0, writes_per_second: 50.0),
    faults: [
        Pause(node: "b", at: "1s", duration: "200ms", kind: Gc),
        Pause(node: "c", at: "2s", duration: "300ms", kind: VmFreeze),
    ],
)"#;

/// The report files of `run SCENARIO` and of `run SCENARIO --history` (which has every request
/// told, and writes the history's files besides) are the same bytes; `least_reads` served at least, so that the counting began.
fn counted_and_told_agree(dir: &std::path::Path, scenario: &str, least_reads: u64) {
    for (out, extra) in [("counted", None), ("told", Some("--history"))] {
        let mut args = vec!["run", scenario, "--out", out];
        args.extend(extra);
        let o = leasesim(&args, dir);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let name = scenario.trim_end_matches(".ron");
    let (counted, told) = (dir.join("counted").join(name), dir.join("told").join(name));
    let s: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(counted.join("summary.json")).unwrap()).unwrap();
    let served = s["requests"]["reads_served"].as_u64().unwrap();
    assert!(served >= least_reads, "{scenario}: {served} reads served");
    // Every file of the counted run, and the told run has only the history's files more.
    let files = report_files(&counted);
    let history = ["history.elle.edn", "history.json", "history.knossos.edn"];
    let mut told_files = report_files(&told);
    told_files.retain(|f| !history.contains(&f.as_str()));
    assert_eq!(files, told_files, "{scenario}");
    assert!(files.contains(&"report.html".to_string()), "{files:?}");
    for f in &files {
        assert!(
            fs::read(counted.join(f)).unwrap() == fs::read(told.join(f)).unwrap(),
            "{scenario}: {f} differs between the counted and the told run"
        );
    }
}

#[test]
fn counted_refusals_give_the_report_that_told_ones_give() {
    let dir = workdir("counted_refusals");
    fs::write(dir.join("heavy.ron"), HEAVY).unwrap();
    // 20,000 reads a second at the holder for 3 s, less its pause: about 60,000 served.
    counted_and_told_agree(&dir, "heavy.ron", 50_000);
}

/// Runs with harm past their first operations: stale and zombie reads are told one by one
/// among the plain ones counted (each stale read's missed write named as the whole history
/// names it), and so is the first read of each value. In the starved send thread's run the
/// write that 957 stale reads missed was first seen by a read (#51406), long after the first
/// operations: counted, the page would name the write's acknowledgement instead.
#[test]
fn counted_plain_reads_give_the_report_that_told_ones_give() {
    let dir = workdir("counted_plain_reads");
    // 26,681 reads served, 2,681 of them stale; 26,681 served, 2,701 stale; 32,939 served,
    // 75 stale.
    counted_and_told_agree(&dir, "hbase-gc-pause-zk-session", 20_000);
    counted_and_told_agree(&dir, "hbase-zk-send-thread-starved", 20_000);
    counted_and_told_agree(&dir, "q4-gc-pause-cached-bool", 20_000);
}
