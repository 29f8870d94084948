//! A report is the same whether the requests refused as they arrive reach its observers one by
//! one or are counted by the engine in their stead. `run` without `--history` or `--trace` lets
//! the engine count them once the client log has kept its first 5,000 operations and the chart
//! its first 5,000 exact refusals; `run --history` has every one told. Both reports must carry
//! the same bytes: the chart's bins per node, the log's count of operations, and everything
//! else.

use crate::common::{leasesim, workdir};
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

#[test]
fn counted_refusals_give_the_report_that_told_ones_give() {
    let dir = workdir("refusal_counts");
    fs::write(dir.join("heavy.ron"), HEAVY).unwrap();
    for (out, extra) in [("counted", None), ("told", Some("--history"))] {
        let mut args = vec!["run", "heavy.ron", "--out", out];
        args.extend(extra);
        let o = leasesim(&args, &dir);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (counted, told) = (dir.join("counted/heavy"), dir.join("told/heavy"));
    let s: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(counted.join("summary.json")).unwrap()).unwrap();
    let arrived = s["requests"]["reads_arrived"].as_u64().unwrap();
    assert!(
        arrived > 150_000,
        "{arrived} reads: too few to reach the counting"
    );
    for f in [
        "report.html",
        "report.md",
        "summary.json",
        "timeline.png",
        "timeline.svg",
    ] {
        assert!(
            fs::read(counted.join(f)).unwrap() == fs::read(told.join(f)).unwrap(),
            "{f} differs between the counted and the told run"
        );
    }
}
