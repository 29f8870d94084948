//! `--trace`: trace.jsonl and trace.perfetto.json of a small run, counted by hand.

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The cut-off story under GrantorOnly (see strategies.rs): lock grants h at 1 ms; h, at
/// -1000 ppm, is cut off from lock at 10 s; lock grants b at S + 10.001 s while h still
/// believes until S + 10.01001 s: one overlap. Nobody pauses or crashes; no client requests.
const STORY: &str = r#"Scenario(
    duration: "40s",
    lease: (duration: "10s", renew_every: "3s"),
    strategy: GrantorOnly,
    nodes: [
        (name: "lock", role: Grantor, drift_ppm: 0.0),
        (name: "h", role: Contender, drift_ppm: -1000.0),
        (name: "b", role: Contender, start: "100ms", drift_ppm: 0.0),
    ],
    network: (delay: Fixed("1ms")),
    faults: [
        OneWay(from: "h", to: "lock", at: "10s", duration: "30s"),
        Pause(node: "b", at: "35s", duration: "1s"),
    ],
)
"#;

/// Runs the story with --trace into `out` under a fresh dir; returns the report dir.
fn traced(test: &str, out: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("story.ron"), STORY).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_leasesim"))
        .args(["run", "story.ron", "--trace", "--out", out])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    dir.join(out).join("story")
}

fn perfetto(dir: &Path) -> Vec<Value> {
    let text = fs::read_to_string(dir.join("trace.perfetto.json")).unwrap();
    let v: Value = serde_json::from_str(&text).expect("trace.perfetto.json is JSON");
    v["traceEvents"].as_array().unwrap().clone()
}

fn named<'a>(events: &'a [Value], ph: &str, prefix: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["ph"] == ph && e["name"].as_str().unwrap_or("").starts_with(prefix))
        .collect()
}

#[test]
fn perfetto_trace_has_a_track_per_node_and_the_slices_of_the_story() {
    let dir = traced("trace-counts", "out");
    let events = perfetto(&dir);
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    // Tracks: a process per node (lock, h, b) and one for the oracle; three threads per node
    // (lease, faults, messages), one (grants) for lock, the one that grants, and one
    // (overlaps) for the oracle.
    assert_eq!(named(&events, "M", "process_name").len(), 4);
    assert_eq!(named(&events, "M", "thread_name").len(), 3 * 3 + 1 + 1);
    // Beliefs: h holds token 1 from 2 ms until its clock ends the lease, running throughout,
    // so one slice; b holds token 2 from its grant to the end, paused in [35 s, 36 s): its
    // belief is cut into running / paused / running pieces, three slices.
    let beliefs = named(&events, "X", "holds token");
    assert_eq!(beliefs.len(), 4, "{beliefs:#?}");
    assert_eq!(named(&events, "X", "holds token 2 (paused)").len(), 1);
    // lock granted twice, each grant drawn as the interval it granted: token 1 to h from
    // 1 ms (h's Acquire at 0 arrives) to the end of its last renewal, which trace.jsonl's
    // Renewed line gives; token 2 to b from exactly then (lock grants the moment the term
    // ends) to the end of the run, 40 s.
    let grants = named(&events, "X", "granted token");
    assert_eq!(grants.len(), 2);
    assert!(grants.iter().all(|g| g["tid"] == 5 && g["pid"] == 1));
    let span = |g: &Value| {
        let ts = g["ts"].as_f64().unwrap();
        (ts, ts + g["dur"].as_f64().unwrap())
    };
    let jsonl = fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    let last_renewal_end = jsonl
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["kind"] == "Renewed" && l["token"] == 1)
        .map(|l| l["until_ns"].as_i64().unwrap())
        .max()
        .unwrap();
    let (g1, g2) = (span(grants[0]), span(grants[1]));
    assert_eq!(grants[0]["name"], "granted token 1 to h");
    assert_eq!(g1.0, 1_000.0);
    assert!(
        (g1.1 * 1000.0 - last_renewal_end as f64).abs() < 0.5,
        "{g1:?}"
    );
    assert_eq!(grants[1]["name"], "granted token 2 to b");
    assert_eq!(g2.0, g1.1);
    assert_eq!(g2.1, 40_000_000.0);
    // The start of each node is on its lease track, not among its faults.
    let starts = named(&events, "i", "start");
    assert_eq!(starts.len(), 3);
    assert!(starts.iter().all(|e| e["tid"] == 1));
    // h's clock error, sampled: at its first event (2 ms, the grant's delivery) its monotonic
    // clock reads 2 ms * 0.999, 2 us behind; the samples of its clock fall behind by 1 ms per
    // second of true time (-1000 ppm), each 10 us or more apart.
    let h_errors: Vec<(f64, f64)> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["pid"] == 2)
        .map(|e| {
            (
                e["ts"].as_f64().unwrap(),
                e["args"]["monotonic"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(h_errors.len() >= 3, "{h_errors:?}");
    for &(ts_us, err_ms) in &h_errors {
        assert!(
            (err_ms - (-0.001 * ts_us / 1000.0)).abs() < 1e-6,
            "{ts_us} {err_ms}"
        );
    }
    for w in h_errors.windows(2) {
        assert!((w[1].1 - w[0].1).abs() >= 0.01, "{w:?}");
    }
    // One overlap, on the oracle's track, as long as the summary says (in microseconds).
    let overlaps = named(&events, "X", "OVERLAP");
    assert_eq!(overlaps.len(), 1);
    let dur_us = overlaps[0]["dur"].as_f64().unwrap();
    let total_ns = summary["overlap"]["total_ns"].as_i64().unwrap();
    assert!((dur_us * 1000.0 - total_ns as f64).abs() < 0.5);
    // One GC pause slice on b's faults track.
    assert_eq!(named(&events, "X", "GC pause").len(), 1);
    // Every message sent has a send slice; every one delivered a delivery slice and a flow.
    let sent: u64 = summary["messages"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    let dropped = summary["messages_dropped"].as_u64().unwrap();
    let sends = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["tid"] == 3 && e["name"].as_str().unwrap().contains(" to "))
        .count() as u64;
    let delivers = events
        .iter()
        .filter(|e| {
            e["ph"] == "X" && e["tid"] == 3 && e["name"].as_str().unwrap().contains(" from ")
        })
        .count() as u64;
    assert_eq!(sends, sent);
    assert!(
        dropped > 0,
        "h's messages to lock after the cut are dropped"
    );
    assert_eq!(delivers, sent - dropped);
    assert_eq!(
        events.iter().filter(|e| e["ph"] == "f").count() as u64,
        sent - dropped
    );
}

#[test]
fn jsonl_has_one_event_per_line_with_clock_readings() {
    let dir = traced("trace-jsonl", "out");
    let text = fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let events: Vec<&Value> = lines.iter().filter(|l| l.get("t_ns").is_some()).collect();
    for e in &events {
        for key in ["t_ns", "node", "kind", "mono_ns", "wall_ns"] {
            assert!(e.get(key).is_some(), "{key} missing in {e}");
        }
    }
    // The grant to h: sent by lock at 1 ms, delivered at 2 ms, token 1; h's clock at 2 ms reads
    // 2 ms * 0.999 = 1.998 ms.
    let deliver = events
        .iter()
        .find(|e| e["kind"] == "Deliver" && e["msg"] == "Grant" && e["node"] == "h")
        .unwrap();
    assert_eq!(deliver["t_ns"], 2_000_000);
    assert_eq!(deliver["mono_ns"], 1_998_000);
    assert_eq!(deliver["token"], 1);
    assert_eq!(deliver["from"], "lock");
    let send = events
        .iter()
        .find(|e| e["kind"] == "Send" && e["msg_id"] == deliver["msg_id"])
        .unwrap();
    assert_eq!(send["node"], "lock");
    assert_eq!(send["t_ns"], 1_000_000);
    // Kills `now + delay` becoming `now - delay` for the send's arrival time.
    assert_eq!(send["arrives_ns"], 2_000_000);
    // After 10 s everything h sends to lock arrives while the one-way cut holds and is dropped
    // at delivery; the first such message is h's next renewal. A Drop line says so, with the
    // reason. Kills a drop that leaves no line.
    let drop = events
        .iter()
        .find(|e| e["kind"] == "Drop" && e["node"] == "lock")
        .expect("a Drop line for h's cut-off renewal");
    assert_eq!(drop["from"], "h");
    assert_eq!(drop["msg"], "Renew");
    assert_eq!(drop["reason"], "cut");
    // The overlap line agrees with the summary.
    let overlap: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "overlap").collect();
    assert_eq!(overlap.len(), 1);
    assert_eq!(overlap[0]["nodes"], serde_json::json!(["h", "b"]));
}

#[test]
fn traces_are_byte_identical_across_runs() {
    let a = traced("trace-twice", "a");
    let b = traced("trace-twice", "b");
    for f in [
        "trace.jsonl",
        "trace.perfetto.json",
        "summary.json",
        "report.md",
    ] {
        assert_eq!(
            fs::read(a.join(f)).unwrap(),
            fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
}

/// Counts the `Rejected` events of a run, by request kind.
#[derive(Default)]
struct Rejections {
    reads: u64,
    writes: u64,
}

impl leasesim::trace::Observer for Rejections {
    fn event(&mut self, e: &leasesim::trace::TraceEvent) {
        if let leasesim::trace::TraceKind::Rejected { write } = e.kind {
            if write {
                self.writes += 1;
            } else {
                self.reads += 1;
            }
        }
    }
}

/// Every request the validity check refuses is traced as `Rejected`, with its kind: the counts
/// by kind are exactly the summary's arrived minus admitted. (With reads at 50/s and writes at
/// 5/s, both kinds arrive while nobody holds: before the first grant, and while the cut-off
/// holder h has let go.)
#[test]
fn rejected_requests_are_traced_with_their_kind() {
    let text = STORY.replace(
        r#"network: (delay: Fixed("1ms")),"#,
        r#"network: (delay: Fixed("1ms")),
    workload: (reads_per_second: 50.0, writes_per_second: 5.0),"#,
    );
    let scenario = leasesim::Scenario::from_ron(&text).unwrap();
    let strategy = leasesim::strategy::from_spec(&scenario.strategy).unwrap();
    let mut seen = Rejections::default();
    let summary = leasesim::run_with("story", &scenario, strategy, Some(&mut seen))
        .unwrap()
        .summary;
    let r = &summary.requests;
    assert_eq!(seen.reads, r.reads_arrived - r.reads_served);
    assert_eq!(seen.writes, r.writes_arrived - r.writes_admitted);
    assert!(seen.reads > 0 && seen.writes > 0);
    assert!(seen.reads != seen.writes);
}

/// A refusal in the trace (k8s-apiserver-down-refused: 1 ms messages, the API server's process
/// down over [10 s, 13 s)): each of the 6 requests that reach it then is a `Drop` with reason
/// "refused" at the API server, and its sender learns it 1 ms later (one draw of the 1 ms link
/// back): a `Refused` event at the sender naming the message. The first is kcm-1's Update of
/// 10.012 s, refused at 10.013 s and learned at 10.014 s. A datagram protocol's message to a
/// node that is down stays a silent `Drop` with reason "down".
#[test]
fn a_refusal_is_a_drop_at_the_host_and_an_event_at_the_sender() {
    let dir = crate::common::workdir("trace-refused");
    let out = crate::common::leasesim(
        &[
            "run",
            "k8s-apiserver-down-refused",
            "--trace",
            "--out",
            "out",
        ],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    let text = fs::read_to_string(dir.join("out/k8s-apiserver-down-refused/trace.jsonl")).unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let drops: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "Drop" && e["reason"] == "refused")
        .collect();
    let refusals: Vec<&Value> = events.iter().filter(|e| e["kind"] == "Refused").collect();
    assert_eq!((drops.len(), refusals.len()), (6, 6));
    for (d, r) in drops.iter().zip(&refusals) {
        assert_eq!(d["msg_id"], r["msg_id"]);
        assert_eq!(r["node"], d["from"]);
        assert_eq!(r["to"], "apiserver");
        let (t_drop, t_back) = (d["t_ns"].as_i64().unwrap(), r["t_ns"].as_i64().unwrap());
        assert_eq!(t_back - t_drop, 1_000_000);
    }
    assert_eq!(drops[0]["t_ns"], 10_013_000_000i64);
    assert_eq!(
        (&refusals[0]["node"], &refusals[0]["msg"]),
        (&Value::from("kcm-1"), &Value::from("Update"))
    );
    assert!(!events.iter().any(|e| e["reason"] == "down"));
    // The base protocol's datagrams to its crashed grantor are lost without a word.
    let out = crate::common::leasesim(
        &["run", "grantor-restart-waits", "--trace", "--out", "out"],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    let text = fs::read_to_string(dir.join("out/grantor-restart-waits/trace.jsonl")).unwrap();
    assert!(text.contains(r#""reason":"down""#));
    assert!(!text.contains("refused") && !text.contains(r#""kind":"Refused""#));
}
