//! The base protocol's figures, recorded from every bundled scenario before protocols became
//! code (`tests/golden/base-protocol-summaries.jsonl`), and recorded again when harm came to be
//! judged from the client history and the register to answer each write it applies (which
//! added `WriteAck` messages and their events, and moved stale reads): overlaps, harm,
//! availability, grants, messages and events must stay exactly what they are. A change to the
//! engine, the oracle or the base protocol that moves any of them fails here, scenario by
//! scenario. A scenario that moves to another protocol leaves the file (its own `expect` block
//! pins it from then on), and the count at the end goes down by one.

use leasesim::scenario::{library, load};
use serde_json::Value;

const GOLDEN: &str = include_str!("../golden/base-protocol-summaries.jsonl");

/// Equal, with floats compared to within rounding of their last digit (the file was written by
/// another JSON printer, whose shortest representation may parse to a neighbouring float).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-15 * x.abs().max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn the_base_protocols_figures_are_unchanged() {
    let mut checked = 0;
    for line in GOLDEN.lines() {
        let mut want: Value = serde_json::from_str(line).unwrap();
        let name = want["scenario"].as_str().unwrap().to_owned();
        let name = name.as_str();
        let scenario = load::from_text(name, library::text(name).unwrap()).unwrap();
        let summary = leasesim::run(name, &scenario).unwrap().summary;
        let mut got = serde_json::to_value(&summary).unwrap();
        // Fields added since the recording: the overlap's authority (always write here).
        for i in got["overlap"]["intervals"].as_array_mut().unwrap() {
            assert_eq!(i["authority"], "write");
            i.as_object_mut().unwrap().remove("authority");
        }
        // ... and the split of reads: the base protocol serves every read from local state at
        // once, so none waits for a confirmation round.
        let requests = got["requests"].as_object_mut().unwrap();
        assert_eq!(requests["reads_served_local"], requests["reads_served"]);
        assert_eq!(requests["reads_served_confirmed"], 0);
        assert_eq!(requests["confirmed_read_wait"], Value::Null);
        assert!(requests["reads_admitted"].as_u64() >= requests["reads_served"].as_u64());
        // ... and the longest gaps between reads and between writes, which lie within the run.
        for k in ["longest_read_gap", "longest_write_gap"] {
            if let Some(g) = requests[k].as_object() {
                let (from, to) = (g["from_ns"].as_i64().unwrap(), g["to_ns"].as_i64().unwrap());
                assert!(
                    0 <= from && from < to && to <= summary.duration_ns,
                    "{name}: {k}"
                );
            }
        }
        for k in [
            "reads_admitted",
            "reads_served_local",
            "reads_served_confirmed",
            "confirmed_read_wait",
            "longest_read_gap",
            "longest_write_gap",
        ] {
            requests.remove(k);
        }
        // The count of queue entries the engine took out is how it works, not what happened:
        // it fell when a re-armed timer stopped leaving a stale entry behind (the scenario
        // summaries pin today's count).
        want.as_object_mut().unwrap().remove("events");
        let got: serde_json::Map<String, Value> = want
            .as_object()
            .unwrap()
            .keys()
            .map(|k| (k.clone(), got[k].clone()))
            .collect();
        assert!(
            same(&want, &Value::Object(got.clone())),
            "{name}: figures moved\nwant {want}\n got {}",
            Value::Object(got)
        );
        checked += 1;
    }
    // 34 when recorded; five left the base protocol since: the two k8s-* scenarios for
    // K8sLeaderElection, hbase-gc-pause-zk-session-cached-bool for ChubbySession,
    // kleppmann-gc-pause-unsafe-write for Redlock and tikv-lease-9s-random-faults for
    // RaftLeaderLease.
    assert_eq!(checked, 29);
}

const EVERY: &str = include_str!("../golden/scenario-summaries.jsonl");

/// Every bundled scenario's whole `summary.json`, byte for byte, as recorded in
/// `tests/golden/scenario-summaries.jsonl` (one line a scenario, in library order). A change that
/// moves any figure of any protocol fails here, scenario by scenario; a change that means to
/// (a bug fixed, a model made closer to the real system) re-blesses the file with
/// `LEASESIM_BLESS=1 cargo test --release --test suite golden` and says in its commit which
/// scenarios moved and why.
#[test]
fn every_bundled_scenarios_summary_is_unchanged() {
    let mut lines = Vec::new();
    for name in library::names() {
        let scenario = load::from_text(name, library::text(name).unwrap()).unwrap();
        let summary = leasesim::run(name, &scenario).unwrap().summary;
        lines.push(serde_json::to_string(&summary).unwrap());
    }
    let got = lines.join("\n") + "\n";
    if std::env::var_os("LEASESIM_BLESS").is_some() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/golden/scenario-summaries.jsonl"
        );
        std::fs::write(path, &got).unwrap();
        return;
    }
    let want: Vec<&str> = EVERY.lines().collect();
    assert_eq!(
        want.len(),
        lines.len(),
        "the library's scenarios changed: re-bless"
    );
    let moved: Vec<String> = want
        .iter()
        .zip(&lines)
        .filter(|(w, g)| w != g)
        .map(|(w, g)| format!("want {w}\n got {g}"))
        .collect();
    assert!(
        moved.is_empty(),
        "{} scenarios moved:\n{}",
        moved.len(),
        moved.join("\n\n")
    );
}
