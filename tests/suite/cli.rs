//! The command line as a user meets it: exit codes, error messages, reports on disk.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{leasesim, workdir};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(files_under(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

const GOOD: &str = r#"Scenario(
    duration: "20s",
    lease: (duration: "10s"),
    strategy: TwoSided(holder_margin: "50ms"),
    nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
)
"#;

/// Writes `text` as `bad.ron` in a fresh dir, runs `leasesim run bad.ron`, and checks the
/// failure is a clean exit 2 with nothing written. Returns stderr.
fn run_bad(test: &str, text: &str) -> String {
    let dir = workdir(test);
    fs::write(dir.join("bad.ron"), text).unwrap();
    let o = leasesim(&["run", "bad.ron", "--out", "out"], &dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("stack backtrace"), "{err}");
    assert!(
        !dir.join("out").exists(),
        "nothing may be written on bad input"
    );
    assert_eq!(files_under(&dir), vec![dir.join("bad.ron")]);
    err
}

#[test]
fn syntax_error_names_file_line_column_and_shows_the_line() {
    let text = GOOD.replace(
        r#"lease: (duration: "10s"),"#,
        r#"lease: (duration: "10s")"#,
    );
    let err = run_bad("syntax", &text);
    // The missing comma is noticed at the start of line 4, `strategy`.
    assert!(err.contains("bad.ron:4:5: Expected comma"), "{err}");
    assert!(err.contains("4 |     strategy: TwoSided"), "{err}");
    assert!(err.contains('^'), "{err}");
}

#[test]
fn unknown_field_is_named_with_the_expected_ones() {
    let text = GOOD.replace(r#"(duration: "10s")"#, r#"(duration: "10s", renew: "3s")"#);
    let err = run_bad("unknown-field", &text);
    assert!(err.contains("bad.ron:3:30:"), "{err}");
    assert!(err.contains("unknown field `renew` in `lease`"), "{err}");
    assert!(
        err.contains("renew_every"),
        "the expected fields are listed: {err}"
    );
}

#[test]
fn unknown_field_in_an_enum_struct_variant_is_rejected() {
    let text = GOOD.replace(r#"holder_margin: "50ms""#, r#"holder_margn: "50ms""#);
    let err = run_bad("unknown-variant-field", &text);
    assert!(err.contains("unknown field `holder_margn`"), "{err}");
}

#[test]
fn unknown_node_in_a_fault_is_named() {
    let text = GOOD.replace(
        "\n)\n",
        "\n    faults: [Pause(node: \"z\", at: \"5s\", duration: \"1s\")],\n)\n",
    );
    let err = run_bad("unknown-node", &text);
    assert!(
        err.contains(r#"faults[0]: unknown node "z" (known: lock, a)"#),
        "{err}"
    );
}

#[test]
fn bad_duration_says_what_a_duration_looks_like() {
    let text = GOOD.replace(r#"duration: "20s""#, r#"duration: "20""#);
    let err = run_bad("bad-duration", &text);
    assert!(err.contains("bad.ron:2:"), "{err}");
    assert!(err.contains("has no unit"), "{err}");
}

#[test]
fn margin_not_below_the_lease_is_refused() {
    let text = GOOD.replace(r#"holder_margin: "50ms""#, r#"holder_margin: "10s""#);
    let err = run_bad("margin", &text);
    assert!(
        err.contains("strategy.holder_margin: 10s must be shorter than the lease (10s)"),
        "{err}"
    );
}

#[test]
fn every_semantic_problem_is_listed_at_once() {
    let text = r#"Scenario(
    duration: "20s",
    lease: (duration: "10s", renew_every: "12s"),
    strategy: TwoSided(holder_margin: "10s"),
    nodes: [(name: "a", role: Contender), (name: "a", role: Contender), (name: "r", role: Replica)],
    workload: (reads_per_second: -5.0),
    faults: [
        Crash(node: "a", at: "25s"),
        Restart(node: "b", at: "1s"),
    ],
)
"#;
    let err = run_bad("many", text);
    for needle in [
        "lease.renew_every: 12s must be shorter than the lease",
        "strategy.holder_margin",
        "exactly one Grantor (found 0)",
        "the base protocol has no Replica role",
        "nodes[1]: name \"a\" is already used by nodes[0]",
        "workload.reads_per_second",
        "faults[0]: starts at 25s, outside the run",
        "faults[1]: unknown node \"b\"",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in:\n{err}");
    }
    assert!(err.contains("8 problems found"), "{err}");
}

#[test]
fn bad_strategy_override_is_a_usage_error() {
    let dir = workdir("bad-strategy");
    let o = leasesim(
        &[
            "run",
            "q4-gc-pause-two-sided",
            "--strategy",
            "TwoSided(margin: \"5ms\")",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--strategy:1:"), "{}", stderr(&o));
    assert!(!dir.join("out").exists());
}

#[test]
fn unknown_scenario_name_suggests_the_closest() {
    let dir = workdir("unknown-name");
    let o = leasesim(&["run", "q4-gc-pause-cached"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean q4-gc-pause-cached-bool?"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn check_validates_without_running_or_writing() {
    let dir = workdir("check");
    fs::write(dir.join("good.ron"), GOOD).unwrap();
    let o = leasesim(&["check", "good.ron", "q4-gc-pause-two-sided"], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("ok  good.ron"));
    assert_eq!(files_under(&dir), vec![dir.join("good.ron")]);
}

#[test]
fn a_run_writes_its_report_and_reproduces_byte_for_byte() {
    let dir = workdir("report");
    let a = leasesim(&["run", "q4-gc-pause-cached-bool", "--out", "a"], &dir);
    let b = leasesim(&["run", "q4-gc-pause-cached-bool", "--out", "b"], &dir);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_eq!(b.status.code(), Some(0));
    for f in ["summary.json", "report.md"] {
        let x = fs::read(dir.join("a/q4-gc-pause-cached-bool").join(f)).unwrap();
        let y = fs::read(dir.join("b/q4-gc-pause-cached-bool").join(f)).unwrap();
        assert_eq!(x, y, "{f} differs between two identical runs");
    }
    let out = stdout(&a);
    assert!(out.starts_with("OVERLAP  q4-gc-pause-cached-bool"), "{out}");
    assert!(out.contains("[28.004s, 32s)  3.996s  a, b"), "{out}");
    assert!(
        out.contains("leasesim run q4-gc-pause-cached-bool --seed 7"),
        "{out}"
    );
    let json = fs::read_to_string(dir.join("a/q4-gc-pause-cached-bool/summary.json")).unwrap();
    for key in [
        "\"scenario\"",
        "\"strategy\"",
        "\"seed\"",
        "\"duration_ns\"",
        "\"overlap\"",
        "\"count\"",
        "\"total_ns\"",
        "\"max_ns\"",
        "\"intervals\"",
        "\"start_ns\"",
        "\"end_ns\"",
        "\"nodes\"",
        "\"zombie_actions\"",
        "\"stale_reads\"",
        "\"unsafe_writes\"",
        "\"fenced_writes\"",
        "\"availability\"",
        "\"served_ratio\"",
        "\"max_unavailable_ns\"",
        "\"grants\"",
        "\"messages\"",
        "\"events\"",
        "\"passed\"",
    ] {
        assert!(json.contains(key), "summary.json lacks {key}");
    }
    // No staging directory is left behind.
    let left: Vec<_> = fs::read_dir(dir.join("a")).unwrap().flatten().collect();
    assert_eq!(left.len(), 1);
}

#[test]
fn a_failed_expectation_exits_1() {
    let dir = workdir("expect-fails");
    let text = GOOD.replace("\n)\n", "\n    expect: (overlap: true),\n)\n");
    fs::write(dir.join("s.ron"), text).unwrap();
    let o = leasesim(&["run", "s.ron", "--out", "out"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("expected overlap: true, but the run had 0"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn json_mode_prints_one_object_per_scenario() {
    let dir = workdir("json");
    let o = leasesim(
        &[
            "run",
            "q4-gc-pause-cached-bool",
            "q4-gc-pause-two-sided",
            "--json",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("{\"scenario\":\"q4-gc-pause-cached-bool\""));
    assert!(lines[1].starts_with("{\"scenario\":\"q4-gc-pause-two-sided\""));
}

#[test]
fn another_seed_changes_a_random_run() {
    let dir = workdir("seeds");
    let a = leasesim(
        &["run", "q4-gc-pause-cached-bool", "--json", "--out", "out"],
        &dir,
    );
    let b = leasesim(
        &[
            "run",
            "q4-gc-pause-cached-bool",
            "--json",
            "--seed",
            "8",
            "--out",
            "out",
        ],
        &dir,
    );
    let c = leasesim(
        &[
            "run",
            "q4-gc-pause-cached-bool",
            "--json",
            "--seed",
            "8",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_ne!(stdout(&a), stdout(&b), "seed 8 draws other client requests");
    assert_eq!(stdout(&b), stdout(&c));
    assert!(stdout(&b).contains("\"seed\":8"));
}

#[test]
fn strategy_override_runs_the_same_schedule() {
    let dir = workdir("override");
    let o = leasesim(
        &[
            "run",
            "q4-gc-pause-cached-bool",
            "--strategy",
            "TwoSided(holder_margin: \"50ms\")",
            "--json",
            "--out",
            "out",
        ],
        &dir,
    );
    // The file expects the cached bool's overlap; under TwoSided it does not happen: exit 1.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"count\":0"));
}

#[test]
fn compare_runs_every_strategy_on_one_schedule() {
    let dir = workdir("compare");
    let o = leasesim(
        &["compare", "q4-gc-pause-cached-bool", "--out", "out"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for s in [
        "TwoSided(holder_margin: \"100ms\")",
        "GrantorOnly",
        "HolderOnly",
        "CachedBool",
        "WallClock",
        "OnReceiveStart",
    ] {
        assert!(out.contains(s), "{s} missing:\n{out}");
    }
    let cached = out.lines().find(|l| l.starts_with("CachedBool")).unwrap();
    assert!(
        cached.contains("OVERLAP") && cached.contains("3.996s"),
        "{cached}"
    );
    let two_sided = out.lines().find(|l| l.starts_with("TwoSided")).unwrap();
    assert!(two_sided.contains("SAFE"), "{two_sided}");
    // The lock services on the same pause: Chubby's client stops at its local lease (a 100 ms
    // margin, 1% of T), client-go's leader (12 s pause, T = 10 s scaled from 15/10/2 s to
    // 10/6.666/1.333 s) resumes into a fresh renew cycle and overlaps. No TrueTime row: the
    // scenario's clocks know no error.
    let row = |name: &str| out.lines().find(|l| l.starts_with(name)).unwrap();
    let chubby = row("ChubbySession(");
    assert!(
        chubby.contains("holder_margin: \"100ms\"") && chubby.contains("SAFE"),
        "{chubby}"
    );
    let k8s = row("K8sLeaderElection(renew_deadline: \"6.666s\", retry_period: \"1.333s\"");
    assert!(k8s.contains("OVERLAP"), "{k8s}");
    assert!(!out.contains("TrueTime"), "{out}");
    assert!(dir
        .join("out/q4-gc-pause-cached-bool-compare/compare.md")
        .exists());
}

#[test]
fn compare_draws_reads_and_writes_per_strategy_in_throughput_png() {
    let dir = workdir("compare-throughput");
    let o = leasesim(
        &[
            "compare",
            "raft-transfer-suspect",
            "--bin",
            "5ms",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report = dir.join("out/raft-transfer-suspect-compare");
    let png = fs::read(report.join("throughput.png")).unwrap();
    assert!(!png.is_empty());
    let img = image::load_from_memory_with_format(&png, image::ImageFormat::Png)
        .unwrap_or_else(|e| panic!("throughput.png does not decode: {e}"));
    assert!(img.width() >= 1000 && img.height() >= 500, "{img:?}");
    let svg = fs::read_to_string(report.join("throughput.svg")).unwrap();
    // 60 s in bins of 5 ms: 12000 bins, too many for some 1400 px, so merged into steps.
    assert!(
        svg.contains("Bins of 5ms, averaged over steps of "),
        "{svg}"
    );
    assert!(svg.contains("ops/ms") && svg.contains("true time (s)"));
    let md = fs::read_to_string(report.join("compare.md")).unwrap();
    assert!(md.contains("(throughput.png)"), "{md}");

    // A bin that is not a positive duration, or that would make too many bins: exit 2, nothing
    // written.
    for bin in ["0ms", "soon", "1ns"] {
        let o = leasesim(
            &[
                "compare",
                "raft-transfer-suspect",
                "--bin",
                bin,
                "--out",
                "bad",
            ],
            &dir,
        );
        assert_eq!(o.status.code(), Some(2), "--bin {bin}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("--bin {bin}")),
            "{}",
            stderr(&o)
        );
        assert!(!dir.join("bad").exists());
    }
}

#[test]
fn two_scenarios_with_one_name_are_refused_before_anything_runs() {
    let dir = workdir("same-name");
    for sub in ["a", "b"] {
        fs::create_dir_all(dir.join(sub)).unwrap();
        fs::write(dir.join(sub).join("x.ron"), GOOD).unwrap();
    }
    let o = leasesim(&["run", "a/x.ron", "b/x.ron", "--out", "out"], &dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("a/x.ron, b/x.ron"), "{err}");
    assert!(!dir.join("out").exists(), "nothing may run or be written");
    // The same file twice, under two spellings, is one scenario: it runs once.
    let o = leasesim(
        &["run", "a/x.ron", "./a/x.ron", "--json", "--out", "out"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1);
}

#[test]
fn a_bundled_name_given_twice_runs_once() {
    let dir = workdir("same-bundled");
    let o = leasesim(
        &[
            "run",
            "q4-gc-pause-two-sided",
            "q4-gc-pause-two-sided",
            "--json",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1);
    let names: Vec<_> = fs::read_dir(dir.join("out")).unwrap().flatten().collect();
    assert_eq!(names.len(), 1);
}

/// The names in `dir`, sorted (hidden ones included).
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_report_that_fails_midway_leaves_nothing_behind() {
    use leasesim::report::{Owner, ReportDir, MARKER};
    let dir = workdir("report-fails");
    let target = dir.join("x");
    fs::create_dir_all(&target).unwrap();
    fs::write(target.join("summary.json"), "old").unwrap();
    let owner = Owner::new("run", "x");
    fs::write(target.join(MARKER), serde_json::to_string(&owner).unwrap()).unwrap();
    // An I/O error midway: the staging directory goes, the old report stays whole.
    let report = ReportDir::begin(&target, &owner).unwrap();
    report.write("summary.json", b"new").unwrap();
    assert!(report.write("no/such/dir/report.md", b"x").is_err());
    drop(report);
    assert_eq!(names_in(&dir), ["x"]);
    assert_eq!(
        fs::read_to_string(target.join("summary.json")).unwrap(),
        "old"
    );
    // A panic midway: the same.
    let t = target.clone();
    let panicked = std::panic::catch_unwind(move || {
        let report = ReportDir::begin(&t, &Owner::new("run", "x")).unwrap();
        report.write("summary.json", b"new").unwrap();
        panic!("a report failing midway (expected by this test)");
    });
    assert!(panicked.is_err());
    assert_eq!(names_in(&dir), ["x"]);
    assert_eq!(
        fs::read_to_string(target.join("summary.json")).unwrap(),
        "old"
    );
}

#[test]
fn a_single_file_is_written_whole_by_the_same_staging() {
    use leasesim::report::staging::{write_file, Existing};
    let dir = workdir("write-file");
    let path = dir.join("partial.json");
    write_file(&path, b"first", Existing::Replace).unwrap();
    write_file(&path, b"second", Existing::Replace).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "second");
    // `Keep` never replaces: an error, the old bytes, and no staged file left beside them.
    let err = write_file(&path, b"third", Existing::Keep).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(fs::read_to_string(&path).unwrap(), "second");
    write_file(&dir.join("new.ron"), b"kept", Existing::Keep).unwrap();
    assert_eq!(names_in(&dir), ["new.ron", "partial.json"]);
    // A write that fails midway (its directory is a file) leaves nothing behind either.
    assert!(write_file(&dir.join("new.ron/x"), b"x", Existing::Replace).is_err());
    assert_eq!(names_in(&dir), ["new.ron", "partial.json"]);
    // What a dead writer left for this path is swept by the next write of it.
    let stale = dir.join(format!(".partial.json.tmp-{}", dead_pid()));
    fs::write(&stale, "half").unwrap();
    write_file(&path, b"fourth", Existing::Replace).unwrap();
    assert_eq!(names_in(&dir), ["new.ron", "partial.json"]);
}

/// The PID of a process that has exited.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn staging_left_by_a_dead_process_is_swept() {
    let dir = workdir("stale");
    let out = dir.join("out");
    let pid = dead_pid();
    let name = "q4-gc-pause-two-sided";
    for aside in [format!(".{name}.tmp-{pid}"), format!(".{name}.old-{pid}")] {
        fs::create_dir_all(out.join(&aside)).unwrap();
        fs::write(out.join(aside).join("summary.json"), "half").unwrap();
    }
    // Another target's staging is not this run's business (its writer may be elsewhere).
    fs::create_dir_all(out.join(format!(".other.tmp-{pid}"))).unwrap();
    let o = leasesim(&["run", name, "--out", "out"], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        names_in(&out),
        [format!(".other.tmp-{pid}"), name.to_string()]
    );
    let json = fs::read_to_string(out.join(name).join("summary.json")).unwrap();
    assert!(json.contains("\"scenario\""), "{json}");
}

#[test]
fn sigterm_during_a_run_leaves_no_staging_directory() {
    let dir = workdir("sigterm");
    // The canonical benchmark hour made ten hours long: seconds of work to interrupt.
    let long = include_str!("../../benches/canonical.ron").replace("\"3600s\"", "\"36000s\"");
    fs::write(dir.join("long.ron"), long).unwrap();
    let out = dir.join("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_leasesim"))
        .args(["run", "long.ron", "--out", "out"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let staged = || out.exists() && names_in(&out).iter().any(|n| n.starts_with(".long.tmp-"));
    let mut waited = 0;
    while !staged() && waited < 2000 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        waited += 1;
    }
    assert!(staged(), "the run never began its report");
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_eq!(names_in(&out), Vec::<String>::new());
}

/// `--stats` adds the wall time, events/s and the mean queue length, in text and in JSON. In
/// q4-gc-pause-two-sided each contender (a, and b from 100 ms) always has its next read and its
/// next write arrival queued, paused or not (arrivals keep coming), so the queue holds at least
/// 4 events from 100 ms of the 40 s on; with messages, timers and reads in service on top, the
/// mean lies between 3.9 and 16 (it is 7.1).
#[test]
fn stats_show_the_wall_time_and_the_mean_queue_length() {
    let dir = workdir("stats_fields");
    let o = leasesim(
        &[
            "run",
            "q4-gc-pause-two-sided",
            "--json",
            "--stats",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let wall = v["wall_seconds"].as_f64().unwrap();
    let events = v["events"].as_f64().unwrap();
    let rate = v["events_per_second"].as_f64().unwrap();
    assert!(
        wall > 0.0 && (rate * wall - events).abs() <= events * 1e-9,
        "{v}"
    );
    let in_flight = v["mean_in_flight"].as_f64().unwrap();
    assert!((3.9..16.0).contains(&in_flight), "{in_flight}");
    let o = leasesim(
        &["run", "q4-gc-pause-two-sided", "--stats", "--out", "out"],
        &dir,
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("{in_flight:.1} events in flight on average")),
        "{text}"
    );
}
