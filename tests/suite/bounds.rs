//! Counts the command line accepts are bounded and seeds never wrap: a sweep or an exploration
//! too large to finish, or whose seeds would pass the largest, is refused at once (exit 2, the
//! flag, the value and the limit named, nothing written); a long sweep stops at an interrupt;
//! and an interrupt always gives 128 + the signal, even one that comes as a report is put in
//! place.

use crate::common::{leasesim, workdir};
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2 at once (well under a second of work), `says` in the message, and no file written.
fn refused_at_once(dir: &Path, args: &[&str], says: &[&str]) {
    let o = leasesim(args, dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    for s in says {
        assert!(err.contains(s), "{args:?}: {s:?} not in: {err}");
    }
    assert_eq!(fs::read_dir(dir).unwrap().count(), 0, "{args:?} wrote");
}

#[test]
fn a_sweep_of_more_runs_than_the_limit_is_refused_at_once() {
    let dir = workdir("bounds-sweep-seeds");
    let q4 = "q4-gc-pause-two-sided";
    refused_at_once(
        &dir,
        &[
            "sweep",
            q4,
            "--vary",
            "T=5s",
            "--seeds",
            "18446744073709551615",
        ],
        &["--seeds 18446744073709551615", "10000000 runs"],
    );
    // Two cells of 5,000,001 seeds: each below the limit, together above it.
    refused_at_once(
        &dir,
        &["sweep", q4, "--vary", "T=5s,6s", "--seeds", "5000001"],
        &["2 cells x 5000001 seeds", "10000000 runs"],
    );
}

#[test]
fn sweep_seeds_never_wrap_around_to_zero() {
    let dir = workdir("bounds-sweep-wrap");
    let q4 = "q4-gc-pause-two-sided";
    refused_at_once(
        &dir,
        &[
            "sweep",
            q4,
            "--vary",
            "T=5s",
            "--seeds",
            "3",
            "--seed",
            "18446744073709551614",
        ],
        &[
            "--seed 18446744073709551614 with --seeds 3",
            "start at most at --seed 18446744073709551613",
        ],
    );
    // The last seed exactly at the largest is fine: seeds ..13, ..14, ..15.
    let o = leasesim(
        &[
            "sweep",
            q4,
            "--vary",
            "T=5s",
            "--seeds",
            "3",
            "--seed",
            "18446744073709551613",
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let runs = fs::read_to_string(dir.join(format!("out/{q4}-sweep/runs.csv"))).unwrap();
    let seeds: Vec<&str> = runs
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap())
        .collect();
    assert_eq!(
        seeds,
        [
            "18446744073709551613",
            "18446744073709551614",
            "18446744073709551615"
        ]
    );
}

#[test]
fn an_exploration_of_more_runs_than_the_limit_or_past_the_last_seed_is_refused_at_once() {
    let dir = workdir("bounds-explore");
    refused_at_once(
        &dir,
        &[
            "explore",
            "explore-cached-bool-pauses",
            "--runs",
            "18446744073709551615",
        ],
        &["--runs 18446744073709551615", "1000000 runs"],
    );
    // A scenario whose seed is the largest: its second run's seed would wrap to 0.
    let text = leasesim::scenario::library::text("explore-cached-bool-pauses").unwrap();
    let text = text.replacen("seed: 1,", "seed: 18446744073709551615,", 1);
    let sub = dir.join("sub");
    fs::create_dir_all(&sub).unwrap();
    fs::write(sub.join("last-seed.ron"), text).unwrap();
    let o = leasesim(&["explore", "last-seed.ron", "--runs", "2"], &sub);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--runs 2: the scenario's seed is 18446744073709551615")
            && stderr(&o).contains("give at most --runs 1"),
        "{}",
        stderr(&o)
    );
    assert_eq!(fs::read_dir(&sub).unwrap().count(), 1);
    // One run, with that very seed, is fine.
    let o = leasesim(&["explore", "last-seed.ron", "--runs", "1"], &sub);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
}

/// Waits (up to 20 s) for `ready` to hold.
fn wait_for(ready: impl Fn() -> bool) {
    for _ in 0..2000 {
        if ready() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("never ready");
}

#[test]
fn a_sweep_of_the_most_runs_stops_promptly_at_sigint_and_sigterm() {
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        let dir = workdir(&format!("bounds-sweep-signal{signal}"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_leasesim"))
            .args(["sweep", "q4-gc-pause-two-sided", "--vary", "T=5s"])
            .args(["--seeds", "10000000", "--out", "out"])
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let file = dir.join("out/.q4-gc-pause-two-sided-sweep.in-progress");
        wait_for(|| fs::metadata(&file).is_ok_and(|m| m.len() > 2000));
        #[allow(clippy::disallowed_types)] // the wall time the child takes to stop
        let sent = std::time::Instant::now();
        let kill = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        let took = sent.elapsed();
        assert_eq!(status.code(), Some(code), "{signal}: {status:?}");
        assert!(took < Duration::from_secs(5), "{signal}: {took:?}");
        // The runs done are kept for --resume.
        assert!(file.exists());
    }
}

#[test]
fn a_signal_while_the_report_is_put_in_place_still_exits_128_plus_it() {
    let dir = workdir("bounds-signal-in-commit");
    for _ in 0..3 {
        let o = Command::new(env!("CARGO_BIN_EXE_leasesim"))
            .args(["run", "q4-gc-pause-two-sided", "--out", "out"])
            .current_dir(&dir)
            .env(leasesim::report::SIGNAL_IN_COMMIT, "1")
            .output()
            .unwrap();
        // SIGTERM came while the report was renamed into place: it is whole, and the exit
        // code says the process was interrupted.
        assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
        let report = dir.join("out/q4-gc-pause-two-sided");
        assert!(report.join("summary.json").exists() && report.join("timeline.png").exists());
        let aside: Vec<_> = fs::read_dir(dir.join("out"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with('.'))
            .collect();
        assert!(aside.is_empty(), "{aside:?}");
    }
}
