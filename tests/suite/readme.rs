//! The README's examples run, so that they cannot rot.

use leasesim::scenario::load;

const README: &str = include_str!("../../README.md");

/// The fenced blocks of `lang` in the README.
fn blocks(lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in README.lines() {
        match &mut cur {
            None if line.trim_start() == format!("```{lang}") => cur = Some(String::new()),
            Some(b) if line.trim_start() == "```" => {
                out.push(std::mem::take(b));
                cur = None;
            }
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
            None => {}
        }
    }
    out
}

#[test]
fn every_ron_example_loads_runs_and_holds_its_expectations() {
    let examples = blocks("ron");
    assert!(!examples.is_empty());
    for text in examples {
        let s = load::from_text("README.md", &text).unwrap_or_else(|e| panic!("{e}"));
        let summary = leasesim::run("readme", &s).unwrap().summary;
        assert_ne!(
            summary.expect.passed,
            Some(false),
            "{:?}",
            summary.expect.failures
        );
    }
}

#[test]
fn the_first_lines_give_the_two_commands() {
    let first = blocks("sh").into_iter().next().unwrap();
    assert!(first.contains("cargo run --release -- run --all"));
    assert!(first.contains("cargo test --release"));
}

#[test]
fn the_printed_run_matches_what_run_prints() {
    // The first console block shows `run q4-gc-pause-cached-bool`: its figures must be the real ones.
    let shown = blocks("console").into_iter().next().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_leasesim"))
        .args(["run", "q4-gc-pause-cached-bool", "--out"])
        .arg(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-run"))
        .output()
        .unwrap();
    let printed = String::from_utf8(out.stdout).unwrap();
    for line in printed
        .lines()
        .filter(|l| !l.trim_start().starts_with("report"))
    {
        assert!(shown.contains(line), "README lacks the line {line:?}");
    }
}

#[test]
fn the_error_examples_are_what_leasesim_says() {
    // The unknown-field example: the same file gives the same message.
    let text = r#"Scenario(
    duration: "20s",
    lease: (duration: "10s", renew: "3s"),
    strategy: TwoSided(holder_margin: "50ms"),
    nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
)"#;
    let e = load::from_text("bad.ron", text).unwrap_err().to_string();
    assert!(README.contains(&e), "README should show:\n{e}");
}

#[test]
fn every_bundled_scenario_is_listed_in_the_readme() {
    for name in leasesim::scenario::library::names() {
        assert!(
            README.contains(&format!("| `{name}` |")),
            "README does not list {name}"
        );
    }
}

#[test]
fn the_explore_example_is_what_explore_writes_and_prints() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-explore");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_leasesim"))
        .args(["explore", "explore-cached-bool-pauses", "--runs", "200"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let written =
        std::fs::read_to_string(dir.join("reports/explore-cached-bool-pauses/counterexample.ron"))
            .unwrap();
    assert!(
        blocks("ron").contains(&written),
        "README should show the counterexample:\n{written}"
    );
    let shown = blocks("console")
        .into_iter()
        .find(|b| b.contains("$ leasesim explore"))
        .expect("an explore example");
    let printed = String::from_utf8(out.stdout).unwrap();
    // Every line but the wall-clock ones (runs/s, the shrink's seconds).
    for line in printed.lines().filter(|l| !l.contains("wall time")) {
        let line = line.split(" (81 runs").next().unwrap();
        assert!(shown.contains(line), "README lacks the line {line:?}");
    }
}
