//! Helpers shared by the suite: building scenarios from RON text and running them.

use leasesim::{Scenario, Summary};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Parses a scenario, panicking with ron's position on a syntax error.
pub fn scenario(text: &str) -> Scenario {
    Scenario::from_ron(text).unwrap_or_else(|e| panic!("test scenario does not parse: {e}"))
}

/// Runs a scenario and returns its summary.
pub fn run(s: &Scenario) -> Summary {
    leasesim::run("test", s)
        .unwrap_or_else(|e| panic!("test scenario does not build:\n{e}"))
        .summary
}

/// Parses and runs.
pub fn run_text(text: &str) -> Summary {
    run(&scenario(text))
}

/// The cut-off holder story (see strategies.rs): grantor `lock` at 0 ppm, holder `h` at `h_ppm`,
/// `b` queued from 100 ms, 1 ms messages, renewals every 3 s, and a one-way cut h -> lock at 10 s
/// that drops every later renewal; `extra_faults` are appended to the fault list.
pub fn cut_off_text(strategy: &str, h_ppm: f64, extra_faults: &str) -> String {
    format!(
        r#"Scenario(
            duration: "40s",
            lease: (duration: "10s", renew_every: "3s"),
            strategy: {strategy},
            nodes: [
                (name: "lock", role: Grantor, drift_ppm: 0.0),
                (name: "h", role: Contender, drift_ppm: {h_ppm}),
                (name: "b", role: Contender, start: "100ms", drift_ppm: 0.0),
            ],
            network: (delay: Fixed("1ms")),
            faults: [
                OneWay(from: "h", to: "lock", at: "10s", duration: "30s"),
                {extra_faults}
            ],
        )"#
    )
}

/// Runs the `leasesim` binary in `cwd`.
pub fn leasesim(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leasesim"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the binary runs")
}

/// A fresh empty directory for one test.
pub fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The file names of `dir`, sorted, without the shards' partial files.
pub fn report_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("partial-"))
        .collect();
    v.sort();
    v
}

/// Every report file of `a` has the same bytes in `b`, and `b` has no others.
pub fn same_reports(a: &Path, b: &Path) {
    let (fa, fb) = (report_files(a), report_files(b));
    assert_eq!(fa, fb);
    for f in &fa {
        assert!(
            fs::read(a.join(f)).unwrap() == fs::read(b.join(f)).unwrap(),
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}
