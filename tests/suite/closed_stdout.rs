//! A reader that closed stdout (`leasesim explore ... | head -1`, `leasesim list | head`) is
//! the reader's choice: every command goes on to its end, writes its files, removes its
//! in-progress file and exits with the code it would have had, quietly; none panics with
//! "failed printing to stdout".

use crate::common::workdir;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `leasesim args` in `dir` with stdout a pipe whose reading end is already closed, so
/// that every write to it fails with EPIPE (not only those after a buffer fills).
fn with_stdout_closed(args: &[&str], dir: &Path) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_leasesim"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// The same command with stdout read to its end: the exit code it should have.
fn with_stdout_read(args: &[&str], dir: &Path) -> i32 {
    crate::common::leasesim(args, dir).status.code().unwrap()
}

fn quiet_and_same_code(args: &[&str], dir: &Path) {
    let want = with_stdout_read(args, dir);
    let o = with_stdout_closed(args, dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(want), "{args:?}: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{args:?}: {err}"
    );
}

#[test]
fn commands_that_only_print_exit_quietly_when_stdout_is_closed() {
    let dir = workdir("closed-stdout-print");
    for args in [
        &["check", "q4-gc-pause-two-sided"][..],
        &["list"],
        &["show", "q4-gc-pause-two-sided"],
        &["tables"],
        &["tables", "--format", "md"],
        &[
            "advise",
            "--rho",
            "100",
            "--max-step",
            "10ms",
            "--max-pause",
            "1s",
            "--max-delay",
            "10ms",
            "--seeds",
            "2",
        ],
    ] {
        quiet_and_same_code(args, &dir);
    }
}

#[test]
fn commands_that_write_reports_finish_them_when_stdout_is_closed() {
    let dir = workdir("closed-stdout-reports");
    for args in [
        &["run", "q4-gc-pause-two-sided", "--out", "a"][..],
        &["compare", "q4-gc-pause-two-sided", "--out", "a"],
        &[
            "sweep",
            "q4-gc-pause-two-sided",
            "--vary",
            "T=5s",
            "--seeds",
            "2",
            "--out",
            "a",
        ],
    ] {
        quiet_and_same_code(args, &dir);
    }
}

#[test]
fn explore_with_stdout_closed_writes_its_report_and_leaves_nothing_to_resume() {
    let dir = workdir("closed-stdout-explore");
    let args = [
        "explore",
        "explore-cached-bool-pauses",
        "--runs",
        "200",
        "--out",
        "out",
    ];
    let o = with_stdout_closed(&args, &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    // A violation is found (exit 1), as with stdout read.
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let out = dir.join("out");
    assert!(out
        .join("explore-cached-bool-pauses/counterexample.ron")
        .exists());
    let left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("in-progress"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // So a --resume has nothing to resume and says so, with stdout closed again.
    let mut resume = args.to_vec();
    resume.push("--resume");
    let o = with_stdout_closed(&resume, &dir);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
