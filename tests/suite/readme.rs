//! The README's and the book's examples run, so that they cannot rot; the README stays short
//! and the book whole: every page listed, every link to a file of the repository alive.

use leasesim::scenario::load;
use std::path::{Path, PathBuf};

const README: &str = include_str!("../../README.md");

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Every Markdown page of the book (docs/src), with its path from the repository root.
fn book_pages() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let path = e.path();
            if path.is_dir() && !e.file_type().unwrap().is_symlink() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "md") {
                let rel = path.strip_prefix(repo("")).unwrap().display().to_string();
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo("docs/src"), &mut out);
    out
}

/// The README and every page of the book.
fn all_docs() -> Vec<(String, String)> {
    let mut docs = vec![("README.md".to_string(), README.to_string())];
    docs.extend(book_pages());
    docs
}

/// The fenced blocks of `lang` in `text`.
fn blocks_in(text: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in text.lines() {
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

/// The fenced blocks of `lang` in the README and the book.
fn blocks(lang: &str) -> Vec<String> {
    all_docs()
        .iter()
        .flat_map(|(_, text)| blocks_in(text, lang))
        .collect()
}

#[test]
fn every_ron_example_loads_runs_and_holds_its_expectations() {
    let examples = blocks("ron");
    assert!(!examples.is_empty());
    for text in examples {
        let s = load::from_text("docs.ron", &text).unwrap_or_else(|e| panic!("{e}"));
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
    let first = blocks_in(README, "sh").into_iter().next().unwrap();
    assert!(first.contains("cargo run --release -- run --all"));
    assert!(first.contains("cargo test --release"));
}

#[test]
fn the_printed_run_matches_what_run_prints() {
    // The first console block shows `run q4-gc-pause-cached-bool`: its figures must be the real ones.
    let shown = blocks_in(README, "console").into_iter().next().unwrap();
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
        assert!(shown.contains(line), "the docs lack the line {line:?}");
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
    assert!(
        all_docs().iter().any(|(_, text)| text.contains(&e)),
        "the book should show:\n{e}"
    );
}

#[test]
fn every_bundled_scenario_is_listed_in_the_book() {
    let stories = std::fs::read_to_string(repo("docs/src/stories.md")).unwrap();
    for name in leasesim::scenario::library::names() {
        assert!(
            stories.contains(&format!("| `{name}` |")),
            "docs/src/stories.md does not list {name}"
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
        "the book should show the counterexample:\n{written}"
    );
    let shown = blocks("console")
        .into_iter()
        .find(|b| b.contains("$ leasesim explore"))
        .expect("an explore example");
    let printed = String::from_utf8(out.stdout).unwrap();
    // Every line but the wall-clock ones (runs/s, the shrink's seconds).
    for line in printed.lines().filter(|l| !l.contains("wall time")) {
        let line = line.split(" (81 runs").next().unwrap();
        assert!(shown.contains(line), "the docs lack the line {line:?}");
    }
}

#[test]
fn the_readme_is_short() {
    // The README says what leasesim is and how to start; the book holds the rest.
    let lines = README.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; move detail into docs/src"
    );
}

/// Every relative link target in `text` (a page at `from`), resolved from the repository root.
fn relative_links(from: &str, text: &str) -> Vec<PathBuf> {
    let base = repo(from).parent().unwrap().to_path_buf();
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target))
        .map(|target| target.split('#').next().unwrap())
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with("mailto:"))
        .map(|t| base.join(t))
        .collect()
}

#[test]
fn every_link_to_a_file_of_the_repository_leads_somewhere() {
    for (page, text) in all_docs() {
        for target in relative_links(&page, &text) {
            assert!(
                target.exists(),
                "{page} links to {}, which is missing",
                target.display()
            );
        }
    }
}

#[test]
fn the_book_lists_every_page_once() {
    let summary = std::fs::read_to_string(repo("docs/src/SUMMARY.md")).unwrap();
    let listed: Vec<PathBuf> = relative_links("docs/src/SUMMARY.md", &summary);
    for (page, _) in book_pages() {
        if page.ends_with("SUMMARY.md") {
            continue;
        }
        let n = listed.iter().filter(|p| **p == repo(&page)).count();
        assert_eq!(n, 1, "docs/src/SUMMARY.md lists {page} {n} times");
    }
    assert!(repo("docs/book.toml").exists());
}

#[test]
fn no_document_cites_one_the_repository_does_not_hold() {
    // The rules are stated where they are used: no pointer into a document the repository does
    // not hold (the product contract, the notes on real systems, the style notes).
    for (page, text) in all_docs() {
        for name in ["SPEC", "REFERENCE", "STYLE"] {
            for cite in [format!("{name} "), format!("{name}.md")] {
                assert!(!text.contains(&cite), "{page} cites {cite:?}");
            }
        }
    }
}

#[test]
fn the_getting_started_walkthrough_prints_what_the_book_shows() {
    // docs/src/getting-started.md: every `$ leasesim ...` line of its console blocks runs, in
    // order, in one directory, after the page's edit; every line shown under a command must be
    // a line that command printed (the page leaves some out, never changes one).
    let page = std::fs::read_to_string(repo("docs/src/getting-started.md")).unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("getting-started");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut commands = 0;
    for block in blocks_in(&page, "console") {
        let mut lines = block.lines().peekable();
        while let Some(line) = lines.next() {
            let args = line
                .strip_prefix("$ leasesim ")
                .expect("a block opens with a command");
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_leasesim"))
                .args(args.split_whitespace())
                .current_dir(&dir)
                .output()
                .unwrap();
            let printed = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            // Columns are compared by their words: a table's widths follow its longest row,
            // which the page leaves out.
            let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
            let printed: Vec<String> = printed.lines().map(words).collect();
            while let Some(shown) = lines.next_if(|l| !l.starts_with("$ ")) {
                assert!(
                    printed.contains(&words(shown)),
                    "`leasesim {args}` did not print {shown:?}; it printed:\n{}",
                    printed.join("\n")
                );
            }
            commands += 1;
            if args.starts_with("show ") {
                // Step 2 of the page: the margin made too small, the slack pin dropped.
                let path = dir.join("mine.ron");
                let text = std::fs::read_to_string(&path).unwrap();
                let edited = text
                    .replacen(r#"holder_margin: "20ms""#, r#"holder_margin: "5ms""#, 1)
                    .replacen(r#", min_slack: "22ms""#, "", 1);
                assert_eq!(
                    edited.len(),
                    text.len() - 1 - 19,
                    "the edit the page describes"
                );
                std::fs::write(&path, edited).unwrap();
            }
        }
    }
    assert_eq!(
        commands, 7,
        "show, check, run, explore, run, compare, sweep"
    );
}
