//! Hostile input against what leasesim writes: names that cannot be a file name or be drawn,
//! traces without end, aborts and full disks, a shrink without end, a limit message with `-0`.
//!
//! One test per input that `check` accepted and that then broke an output: each checks the exit
//! code, the message, and that no file or directory is left behind.

use crate::common::{leasesim, workdir};
use std::fs;
use std::path::Path;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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
