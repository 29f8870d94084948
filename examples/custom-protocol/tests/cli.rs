//! The example's command line on its scenarios: exit code 0 when every expectation holds, 1
//! when one fails, 2 for bad input, with the error where it is in the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_custom-protocol"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the example runs")
}

fn out_dir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The scenario with `from` replaced by `to`, written as `name` in a fresh directory.
fn variant(test: &str, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/majority-restart-forgets.ron"),
    )
    .unwrap();
    assert!(text.contains(from), "{from}");
    let dir = out_dir(test);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("variant.ron");
    std::fs::write(&file, text.replace(from, to)).unwrap();
    file
}

#[test]
fn the_scenarios_hold_their_expectations() {
    let out = out_dir("scenarios");
    let o = run(&[
        "run",
        "scenarios/majority-restart-forgets.ron",
        "scenarios/majority-restart-waits.ron",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary =
        std::fs::read_to_string(out.join("majority-restart-forgets/summary.json")).unwrap();
    assert!(summary.contains(r#""strategy": "Majority(margin: \"10ms\")""#));
    assert!(out.join("majority-restart-waits/timeline.png").is_file());
}

#[test]
fn a_failed_expectation_exits_with_1() {
    // Waiting out T leaves no overlap, which the forgetful scenario expects.
    let file = variant("expect", "grantor_restart: Forget", "grantor_restart: Wait");
    let out = out_dir("expect-out");
    let o = run(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn a_bad_field_is_shown_where_it_is() {
    let file = variant(
        "field",
        r#"Majority(margin: "10ms")"#,
        r#"Majority(margn: "10ms")"#,
    );
    let o = run(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("variant.ron:9:24: unknown field `margn` in `Majority`; expected one of: margin, quorum"),
        "{err}"
    );
}

#[test]
fn a_quorum_that_is_not_a_majority_is_refused() {
    let file = variant(
        "quorum",
        r#"Majority(margin: "10ms")"#,
        r#"Majority(quorum: 1)"#,
    );
    let o = run(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("strategy.quorum: 1 is not a majority of the 3 grantors"),
        "{err}"
    );
}

#[test]
fn the_built_in_strategies_are_there_too() {
    let o = run(&["check", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let o = run(&[
        "run",
        "q4-gc-pause-two-sided",
        "--out",
        out_dir("builtin").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn compare_all_leaves_out_the_strategies_that_do_not_fit() {
    let out = out_dir("compare");
    let o = run(&[
        "compare",
        "scenarios/majority-restart-forgets.ron",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The base protocol takes one grantor; these scenarios have three.
    assert!(
        stderr(&o).contains("note: left out GrantorOnly, which does not fit the scenario"),
        "{}",
        stderr(&o)
    );
    let rows =
        std::fs::read_to_string(out.join("majority-restart-forgets-compare/compare.json")).unwrap();
    assert!(rows.contains("Majority(margin"), "{rows}");
}

/// `--vary epsilon=` means the field the protocol's settings name (`margin`): two cells, one
/// row each in results.csv after its header.
#[test]
fn a_sweep_varies_epsilon_as_the_protocol_names_it() {
    let out = out_dir("sweep");
    let o = run(&[
        "sweep",
        "scenarios/majority-restart-waits.ron",
        "--vary",
        "epsilon=0s,10ms",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let results =
        std::fs::read_to_string(out.join("majority-restart-waits-sweep/results.csv")).unwrap();
    assert_eq!(results.lines().count(), 3, "{results}");
}

/// The rerun line names the program that ran, as its own Cargo name (`custom-protocol`), in
/// what `run` prints and in the report it writes; never `leasesim`, which is not this program.
#[test]
fn the_rerun_line_names_this_program() {
    let out = out_dir("rerun");
    let o = run(&[
        "run",
        "scenarios/majority-restart-waits.ron",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let want = "custom-protocol run scenarios/majority-restart-waits.ron --seed 1";
    let printed = stdout(&o);
    assert!(printed.contains(want), "{printed}");
    assert!(!printed.contains("leasesim run"), "{printed}");
    let report = std::fs::read_to_string(out.join("majority-restart-waits/report.md")).unwrap();
    assert!(report.contains(want), "{report}");
}

/// With `resource.fencing`, the register at g1 rejects the writes under a's old token (259)
/// once b's (1284) is applied: a's 5 writes from 6 s to 12 s (see the scenario's comment) are
/// fenced instead of unsafe, so the expectation of 5 unsafe writes fails (exit code 1).
#[test]
fn fencing_turns_the_unsafe_writes_into_fenced_ones() {
    let file = variant(
        "fencing",
        "    strategy: Majority(margin: \"10ms\"),\n",
        "    strategy: Majority(margin: \"10ms\"),\n    resource: (fencing: true),\n",
    );
    let out = out_dir("fencing-out");
    let o = run(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let json = stdout(&o);
    assert!(json.contains(r#""unsafe_writes":0,"#), "{json}");
    assert!(json.contains(r#""fenced_writes":5,"#), "{json}");
}
