//! Hostile input against what leasesim writes: names that cannot be a file name or be drawn,
//! traces without end, aborts and full disks, a shrink without end, a limit message with `-0`.
//!
//! One test per input that `check` accepted and that then broke an output: each checks the exit
//! code, the message, and that no file or directory is left behind.

use crate::common::{leasesim, workdir};
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The names in `dir`, sorted, hidden ones included.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `s` as a RON string: quotes and backslashes escaped, everything else as it is (a control
/// character stays raw in the file).
fn ron_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A two-contender scenario with these node names (grantor first), 20 s, T = 10 s.
fn with_nodes(lock: &str, a: &str, b: &str) -> String {
    let (lock, a, b) = (ron_str(lock), ron_str(a), ron_str(b));
    format!(
        r#"Scenario(
    duration: "20s",
    lease: (duration: "10s", renew_every: "3s"),
    strategy: TwoSided(holder_margin: "50ms"),
    nodes: [
        (name: {lock}, role: Grantor),
        (name: {a}, role: Contender),
        (name: {b}, role: Contender, start: "100ms"),
    ],
    workload: (reads_per_second: 20.0, writes_per_second: 2.0),
    faults: [Pause(node: {a}, at: "5s", duration: "12s")],
)
"#
    )
}

/// `check FILE` and `run FILE` in `dir` both refuse it the same way: exit 2, the same message,
/// and nothing written (the directory holds only the file). The message.
fn refused_alike(dir: &Path, file: &str) -> String {
    let check = leasesim(&["check", file], dir);
    let run = leasesim(&["run", file, "--out", "out"], dir);
    assert_eq!(check.status.code(), Some(2), "{}", stderr(&check));
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    assert_eq!(stderr(&check), stderr(&run));
    assert!(!stderr(&run).contains("panicked"), "{}", stderr(&run));
    assert_eq!(names_in(dir), [file]);
    stderr(&run)
}

#[test]
fn a_control_character_in_a_node_name_is_refused_by_check_as_by_run() {
    let dir = workdir("hostile-out-nul");
    // A raw NUL byte inside the string, as the file held it.
    fs::write(dir.join("nul.ron"), with_nodes("lock", "a\u{0}", "b")).unwrap();
    let err = refused_alike(&dir, "nul.ron");
    assert!(err.contains("nul.ron: 1 problem found"), "{err}");
    assert!(
        err.contains("nodes[1].name: \"a\\0\" contains the control character U+0000"),
        "{err}"
    );
}

#[test]
fn a_file_whose_name_gives_the_scenario_the_name_dot_dot_is_refused_by_check_as_by_run() {
    let dir = workdir("hostile-out-dotdot");
    // `...ron` without `.ron` is `..`, which `run` could not write as `out/../`.
    fs::write(dir.join("...ron"), with_nodes("lock", "a", "b")).unwrap();
    let err = refused_alike(&dir, "...ron");
    assert!(
        err.contains("- name (the file name without .ron): \"..\" is not a name a file or a directory can have; rename the file"),
        "{err}"
    );
    // Listed first among the file's other problems.
    fs::write(dir.join("...ron"), with_nodes("lock", "a", "a")).unwrap();
    let err = refused_alike(&dir, "...ron");
    assert!(
        err.contains("2 problems found:\n  - name (the file name"),
        "{err}"
    );
    assert!(
        err.contains("nodes[2]: name \"a\" is already used"),
        "{err}"
    );
}

/// Every SVG in `dir` parses as XML; the texts of all of them.
fn svg_texts(dir: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    let mut svgs = 0;
    for e in fs::read_dir(dir).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "svg") {
            let svg = fs::read_to_string(e.path()).unwrap();
            let doc = roxmltree::Document::parse(&svg)
                .unwrap_or_else(|err| panic!("{}: not well-formed: {err}", e.path().display()));
            texts.extend(
                doc.descendants()
                    .filter_map(|n| n.text())
                    .map(|t| t.trim().to_string()),
            );
            svgs += 1;
        }
    }
    assert!(svgs > 0, "no SVG in {}", dir.display());
    texts
}

#[test]
fn every_svg_is_well_formed_xml_whatever_the_names_hold() {
    let dir = workdir("hostile-out-svg");
    // The five characters XML escapes, in the scenario's name and in every node's.
    let file = "q&<'\">.ron";
    fs::write(dir.join(file), with_nodes("lock&", "a&<>\"'", "b<'>")).unwrap();
    let o = leasesim(&["run", file, "--out", "out"], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let texts = svg_texts(&dir.join("out/q&<'\">"));
    for name in ["q&<'\">", "a&<>\"'", "b<'>", "lock&"] {
        assert!(
            texts.iter().any(|t| t.contains(name)),
            "{name:?} not drawn as itself: {texts:?}"
        );
    }
    let o = leasesim(
        &["compare", file, "--strategies", "all", "--out", "out"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let texts = svg_texts(&dir.join("out/q&<'\">-compare"));
    assert!(texts.iter().any(|t| t.contains("q&<'\">")), "{texts:?}");
}

#[test]
fn traces_past_their_limit_stop_the_run_and_leave_nothing() {
    let dir = workdir("hostile-out-trace");
    // q4-gc-pause-cached-bool writes 9.5 MB of trace.jsonl and 1.0 MB of trace.perfetto.json.
    // By the estimate its traces take at least 121801 events / 2 x 48 bytes = 2923224 bytes,
    // so a limit of 3 MB lets it start, and it is stopped when they pass 3 MB, midway.
    let o = leasesim(
        &[
            "run",
            "q4-gc-pause-cached-bool",
            "--trace",
            "--trace-limit",
            "3MB",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("q4-gc-pause-cached-bool: --trace: the traces passed --trace-limit, 3000000 bytes (3.0 MB), at "),
        "{err}"
    );
    assert!(
        err.contains("the run was stopped and nothing was written"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(names_in(&dir.join("out")), Vec::<String>::new());
    // Under that floor, 2.9 MB, it is refused before it starts: nothing is even created.
    let o = leasesim(
        &[
            "run",
            "q4-gc-pause-cached-bool",
            "--trace",
            "--trace-limit",
            "2.9MB",
            "--out",
            "o2",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("its traces would take at least about 2.9 MB (about 60900 events at 48 bytes or more each), above --trace-limit, 2900000 bytes (2.9 MB)"),
        "{err}"
    );
    assert!(!dir.join("o2").exists());
    // With room, the same run writes both traces whole.
    let o = leasesim(
        &[
            "run",
            "q4-gc-pause-cached-bool",
            "--trace",
            "--trace-limit",
            "20MB",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let traced = dir.join("out/q4-gc-pause-cached-bool");
    let sizes: u64 = ["trace.jsonl", "trace.perfetto.json"]
        .iter()
        .map(|f| fs::metadata(traced.join(f)).unwrap().len())
        .sum();
    assert!(sizes > 3_000_000 && sizes <= 20_000_000, "{sizes}");
}

#[test]
fn an_accepted_file_whose_traces_would_run_to_terabytes_is_refused_up_front() {
    let dir = workdir("hostile-out-trace-tb");
    // 1000 h at 500 reads a second at each of two contenders. The estimate: requests
    // (2 + 1) x 500 x 3.6e6 s = 5.4e9 (the arrivals at both, and the holder's effects), retries
    // 2 x 2 x 3.6e6 s / 1 s = 1.44e7, renewals 3 x 3.6e6 s / 3.333333333 s = 3.24e6: 5.41764e9
    // events, under the limit of 1e10, so `check` accepts it. Its traces take at least half of
    // that, 2.70882e9 events, x 48 bytes = 1.3002e11 bytes: far above the default 4 GiB.
    let text = r#"Scenario(
    duration: "1000h",
    lease: (duration: "10s"),
    strategy: TwoSided(holder_margin: "50ms"),
    nodes: [
        (name: "lock", role: Grantor),
        (name: "a", role: Contender),
        (name: "b", role: Contender),
    ],
    workload: (reads_per_second: 500.0, writes_per_second: 0.0),
    limits: (max_events: 10000000000),
)
"#;
    fs::write(dir.join("huge.ron"), text).unwrap();
    let check = leasesim(&["check", "huge.ron"], &dir);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let o = leasesim(&["run", "huge.ron", "--trace", "--out", "out"], &dir);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("huge.ron: --trace: its traces would take at least about 130.0 GB (about 2.709e9 events at 48 bytes or more each), above --trace-limit, 4294967296 bytes (4.3 GB)"),
        "{err}"
    );
    assert_eq!(names_in(&dir), ["huge.ron"]);
}

#[test]
fn a_protocols_own_events_count_toward_the_trace_floor() {
    let dir = workdir("hostile-out-trace-protocol");
    // An hour of a three-replica Raft group with a 1 ms heartbeat and no workload. The
    // scenario's own estimate is only the lease renewals it would time, 3 x 3600 s / 3.333333333
    // s = 3240 events (the replicas are no contenders: no retries, no requests). The protocol's:
    // per heartbeat the leader's timer and a heartbeat and ack to each of 2 others, 2 x 3 - 1 =
    // 5, every 1 ms: 5000/s; per 1 s election timeout, at worst 3 x 5 = 15: 5015/s x 3600 s =
    // 18,054,000. Half of 18,057,240 is 9,028,620 events, x 48 bytes = 433,373,760 bytes, above
    // a 100 MB limit. Without the protocol's events the floor would be 1620 x 48 = 77,760
    // bytes, and the run would start.
    let text = r#"Scenario(
    duration: "1h",
    lease: (duration: "10s"),
    strategy: RaftLeaderLease(election_timeout: "1s", heartbeat: "1ms"),
    nodes: [(name: "r1", role: Replica), (name: "r2", role: Replica), (name: "r3", role: Replica)],
    workload: (reads_per_second: 0.0, writes_per_second: 0.0),
)
"#;
    fs::write(dir.join("busy.ron"), text).unwrap();
    let args = [
        "run",
        "busy.ron",
        "--trace",
        "--trace-limit",
        "100MB",
        "--out",
        "out",
    ];
    let o = leasesim(&args, &dir);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("busy.ron: --trace: its traces would take at least about 433.4 MB (about 9.029e6 events at 48 bytes or more each), above --trace-limit, 100000000 bytes (100.0 MB)"),
        "{err}"
    );
    assert_eq!(names_in(&dir), ["busy.ron"]);
}

#[test]
fn staging_left_by_an_abort_is_swept_by_the_next_run() {
    let dir = workdir("hostile-out-abort");
    let name = "q4-gc-pause-two-sided";
    // An abort (what the allocator does when memory runs out) right after the staging
    // directory was made: no unwinding, no signal handler, so it stays behind.
    let o = Command::new(env!("CARGO_BIN_EXE_leasesim"))
        .args(["run", name, "--out", "out"])
        .current_dir(&dir)
        .env("LEASESIM_TEST_ABORT_AFTER_STAGING", "1")
        .output()
        .unwrap();
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(o.status.signal(), Some(6), "SIGABRT: {:?}", o.status);
    }
    let left = names_in(&dir.join("out"));
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].starts_with(&format!(".{name}.tmp-")), "{left:?}");
    // The next run of it finds the process gone and removes what it left.
    let o = leasesim(&["run", name, "--out", "out"], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(names_in(&dir.join("out")), [name]);
}

#[test]
fn a_sweep_on_a_full_disk_leaves_no_in_progress_file() {
    let dir = workdir("hostile-out-full");
    // A file size limit of 0 with SIGXFSZ ignored: every write fails with EFBIG, as on a full
    // disk. The in-progress file is created, then its first line cannot be written.
    let o = Command::new("sh")
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 0; exec \"$0\" sweep q4-gc-pause-two-sided \
             --vary T=5s,10s --seeds 2 --out out",
            env!("CARGO_BIN_EXE_leasesim"),
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("error: out/.q4-gc-pause-two-sided-sweep.in-progress: File too large"),
        "{err}"
    );
    assert_eq!(names_in(&dir.join("out")), Vec::<String>::new());
}

#[test]
fn a_sweep_that_fails_after_its_runs_keeps_them_for_resume() {
    let dir = workdir("hostile-out-full-late");
    // The runs fit in 2560 bytes (the in-progress file is 2105 bytes with its 4 runs); the
    // report's runs.csv then passes the limit. The in-progress file is kept, and says so.
    let sweep = "sweep q4-gc-pause-two-sided --vary T=5s,10s --seeds 2 --out out";
    let o = Command::new("sh")
        .args([
            "-c",
            &format!("trap '' XFSZ; ulimit -f 5; exec \"$0\" {sweep}"),
            env!("CARGO_BIN_EXE_leasesim"),
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("the runs done are kept in out/.q4-gc-pause-two-sided-sweep.in-progress"),
        "{err}"
    );
    assert_eq!(
        names_in(&dir.join("out")),
        [".q4-gc-pause-two-sided-sweep.in-progress"]
    );
    // Once there is room, --resume writes the report from them without running any again.
    let args: Vec<&str> = sweep.split(' ').chain(["--resume"]).collect();
    let o = leasesim(&args, &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("4 of 4 runs were done"),
        "{}",
        stderr(&o)
    );
    assert_eq!(names_in(&dir.join("out")), ["q4-gc-pause-two-sided-sweep"]);
}

#[test]
fn the_shrink_stops_at_its_budget_of_runs_with_the_same_bytes_every_time() {
    let dir = workdir("hostile-out-shrink");
    let explore = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "explore",
            "explore-cached-bool-pauses",
            "--runs",
            "200",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        leasesim(&args, &dir)
    };
    // Unbounded by the default of 200, its shrink takes 81 runs; 5 stop it early.
    let o = explore("a", &["--shrink-runs", "5"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("(5 runs, "), "{text}");
    assert!(
        text.contains("  budget     the shrink stopped at its budget (--shrink-runs 5): its budget of runs ran out; the counterexample is the smallest found so far"),
        "{text}"
    );
    let report = dir.join("a/explore-cached-bool-pauses");
    let json = fs::read_to_string(report.join("explore.json")).unwrap();
    assert!(json.contains("\"shrink_runs\": 5,"), "{json}");
    assert!(json.contains("\"shrink_stopped\": \"runs\","), "{json}");
    let ron = fs::read_to_string(report.join("counterexample.ron")).unwrap();
    assert!(
        ron.contains("(the shrink stopped after 5 runs: its budget of runs ran out)."),
        "{ron}"
    );
    // The best so far still replays its violation (its expect block holds: exit 0).
    let o = leasesim(
        &[
            "run",
            "a/explore-cached-bool-pauses/counterexample.ron",
            "--out",
            "r",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The same budget again: the same bytes.
    let o = explore("b", &["--shrink-runs", "5"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let again = dir.join("b/explore-cached-bool-pauses");
    for f in [
        "counterexample.ron",
        "explore.json",
        "summary.json",
        "report.md",
    ] {
        assert!(
            fs::read(report.join(f)).unwrap() == fs::read(again.join(f)).unwrap(),
            "{f} differs"
        );
    }
    // The default budget is not reached: no budget line, nothing stopped.
    let o = explore("c", &[]);
    assert!(!stdout(&o).contains("budget"), "{}", stdout(&o));
    let json = fs::read_to_string(dir.join("c/explore-cached-bool-pauses/explore.json")).unwrap();
    assert!(json.contains("\"shrink_stopped\": null"), "{json}");
}

#[test]
fn the_shrink_stops_at_its_time_and_says_so() {
    let dir = workdir("hostile-out-shrink-time");
    // A deadline of 1 ns is up before the first run of the shrink: the drawn run, unshrunk.
    let o = leasesim(
        &[
            "explore",
            "explore-cached-bool-pauses",
            "--runs",
            "200",
            "--shrink-time",
            "1ns",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("shrunk     5 faults, 3 nodes, 60s -> 5 faults, 3 nodes, 60s (0 runs, "),
        "{text}"
    );
    assert!(
        text.contains("the shrink stopped at its budget (--shrink-time 1ns): its time ran out"),
        "{text}"
    );
    // A bad one is refused before anything runs.
    let o = leasesim(
        &[
            "explore",
            "explore-cached-bool-pauses",
            "--runs",
            "9",
            "--shrink-time",
            "0s",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("must be positive"), "{}", stderr(&o));
}

#[test]
fn a_limit_message_never_prints_minus_zero() {
    let dir = workdir("hostile-out-minus-zero");
    // 5001 fixed clock steps, one over the limit of 5000. The steps expected to be drawn are a
    // sum over the generators of clock steps: with none, an empty sum of f64, which is -0.0;
    // with one at `per_hour: -0.0` (which passes the check for a rate >= 0), -0.0 x 1 h too.
    let steps: Vec<String> = (0..5001)
        .map(|i| format!("ClockStep(node: \"a\", at: \"{}ms\", by: \"1ms\")", i + 1))
        .collect();
    for generators in ["", "ClockSteps(per_hour: -0.0, by: Fixed(\"1ms\"))"] {
        let text = format!(
            r#"Scenario(
    duration: "1h",
    lease: (duration: "10s"),
    strategy: TwoSided(holder_margin: "50ms"),
    nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
    faults: [{}],
    random_faults: [{generators}],
)
"#,
            steps.join(", ")
        );
        fs::write(dir.join("steps.ron"), text).unwrap();
        let o = leasesim(&["check", "steps.ron"], &dir);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("faults, random_faults: 5001 clock steps (5001 fixed, 0 expected to be drawn), above the limit of 5000"),
            "{generators}: {err}"
        );
        assert!(!err.contains("-0"), "{generators}: {err}");
    }
}

/// The unescaped `|` of a Markdown table row: those not preceded by a backslash (an escaped
/// backslash, `\\`, counted as one pair).
fn cell_separators(row: &str) -> usize {
    let (mut n, mut chars) = (0, row.chars());
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '|' => n += 1,
            _ => {}
        }
    }
    n
}

#[test]
fn hostile_node_names_cannot_become_html_or_split_a_table_row_in_report_md() {
    let dir = workdir("hostile-out-markdown");
    let (a, b) = ("<script>alert(1)", "b|c<img src=x onload=alert(2)>`x|");
    fs::write(dir.join("md.ron"), with_nodes("lock", a, b)).unwrap();
    let o = leasesim(&["run", "md.ron", "--out", "out"], &dir);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let md = fs::read_to_string(dir.join("out/md/report.md")).unwrap();
    assert!(!md.contains("<script") && !md.contains("<img"), "{md}");
    assert!(md.contains("&lt;script>alert(1)"), "{md}");
    let drift = md
        .lines()
        .find(|l| l.starts_with("| clock drift |"))
        .unwrap();
    // `| clock drift | ... |`: three separators, however many the names hold.
    assert_eq!(cell_separators(drift), 3, "{drift}");
}

#[test]
fn a_scenario_named_like_staging_is_refused_by_check() {
    let dir = workdir("hostile-out-staging-names");
    for name in [".q4.old-999999", ".q4.tmp-999998", ".q4-sweep.in-progress"] {
        let file = format!("{name}.ron");
        fs::write(dir.join(&file), with_nodes("lock", "a", "b")).unwrap();
        let o = leasesim(&["check", &file], &dir);
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(
            stderr(&o).contains("name (the file name without .ron)")
                && stderr(&o).contains("has the form of the names leasesim gives"),
            "{}",
            stderr(&o)
        );
        fs::remove_file(dir.join(&file)).unwrap();
    }
}

#[test]
fn a_report_of_another_command_or_scenario_is_never_replaced() {
    let dir = workdir("hostile-out-clash");
    fs::write(dir.join("q4.ron"), with_nodes("lock", "a", "b")).unwrap();
    fs::write(dir.join("q4-sweep.ron"), with_nodes("lock", "a", "b")).unwrap();
    let o = leasesim(&["run", "q4-sweep.ron", "--out", "out"], &dir);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let summary = fs::read(dir.join("out/q4-sweep/summary.json")).unwrap();
    let sweep = [
        "sweep", "q4.ron", "--vary", "T=5s", "--seeds", "1", "--out", "out",
    ];
    let o = leasesim(&sweep, &dir);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("holds the run report of q4-sweep, which the sweep report of q4"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        fs::read(dir.join("out/q4-sweep/summary.json")).unwrap(),
        summary
    );
    // A second sweep of the same scenario replaces the first's report, and says so.
    let first = leasesim(&[&sweep[..7], &["other"]].concat(), &dir);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let again = leasesim(&[&sweep[..7], &["other"]].concat(), &dir);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(
        stderr(&again).contains(
            "holds the sweep report of q4, written earlier; this sweep report replaces it"
        ),
        "{}",
        stderr(&again)
    );
    // A directory of the user's where a report would go is left alone.
    fs::create_dir_all(dir.join("mine/q4")).unwrap();
    fs::write(dir.join("mine/q4/notes.txt"), "mine").unwrap();
    let o = leasesim(&["run", "q4.ron", "--out", "mine"], &dir);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is not a leasesim report"),
        "{}",
        stderr(&o)
    );
    assert_eq!(names_in(&dir.join("mine/q4")), ["notes.txt"]);
}

/// A path with a line break in a directory name (a file name cannot hold one; a directory can):
/// the command cited in the counterexample's comment and description stays on one line,
/// quoted as the shell reads it back, so the written file is one scenario that replays, and
/// the reports' rerun commands quote it too.
#[test]
fn a_line_break_in_the_path_stays_quoted_in_what_explore_writes() {
    let dir = workdir("explore_path_with_line_break");
    let sub = dir.join("dir\n)//x");
    fs::create_dir_all(&sub).unwrap();
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/explore-cached-bool-pauses.ron"),
        sub.join("e.ron"),
    )
    .unwrap();
    let o = leasesim(
        &[
            "explore",
            "dir\n)//x/e.ron",
            "--runs",
            "200",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = fs::read_to_string(dir.join("out/e/counterexample.ron")).unwrap();
    let header: Vec<&str> = text.lines().take_while(|l| !l.starts_with('(')).collect();
    assert_eq!(header.len(), 3, "{text}");
    assert!(header.iter().all(|l| l.starts_with("// ")), "{text}");
    assert!(
        header[0].contains(r"explore $'dir\n)//x/e.ron' --runs 200"),
        "{}",
        header[0]
    );
    fs::write(dir.join("counterexample.ron"), &text).unwrap();
    let replay = leasesim(&["run", "counterexample.ron", "--out", "replay"], &dir);
    assert_eq!(replay.status.code(), Some(0), "{}", stderr(&replay));
    let md = fs::read_to_string(dir.join("out/e/report.md")).unwrap();
    assert!(!md.contains("dir\n)"), "{md}");
}
