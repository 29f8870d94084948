//! Sweeps, tables and advice: the boundary a sweep finds, results independent of threads and
//! shards, bad input refused before anything is written, and the seed tables' figures.

use crate::common::{leasesim, report_files, same_reports, scenario, workdir};
use leasesim::sweep::{self, Grid, SweepSpec};
use std::fs;
use std::path::Path;
use std::process::Output;

fn ok(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{out}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// A small grid over a scenario with random delays, so that seeds matter.
const SMALL_GRID: [&str; 8] = [
    "sweep-drift-boundary",
    "--vary",
    "T=5s,10s",
    "--vary",
    "epsilon=2ms,5ms,8ms",
    "--seeds",
    "3",
    "--out",
];

#[test]
fn a_sweep_across_the_analytic_boundary_finds_it() {
    // The cut-off story of strategies.rs: grantor `lock` at 0 ppm, holder `h` at -1000 ppm, `b`
    // queued, every message 1 ms, T = 10 s, renewals every 3 s, h's messages to lock cut from
    // 10 s. The last renewal lock receives leaves h at true S. h believes until its slow clock
    // has run T - eps: S + (T - eps) / 0.999. lock frees the lease T after receiving the renewal
    // (S + 1 ms + T) and b believes 1 ms later, from S + T + 2 ms = S + 10.002 s. So
    //   overlap = (T - eps) / 0.999 - 10.002 s,
    // positive iff T - eps > 0.999 * 10.002 s = 9.991998 s, i.e. eps < eps* = 8.002 ms.
    // (The analytic bound T * rho = 10 s * 1000 ppm = 10 ms is on the safe side by the two
    // message delays.) No randomness: every seed gives the same run, so P(overlap) is 1 or 0.
    let s = scenario(CUT_OFF);
    let below = ["1ms", "5ms", "8ms", "8.0015ms"];
    let above = ["8.0025ms", "9ms", "10ms", "20ms"];
    let values: Vec<String> = below.iter().chain(&above).map(|v| v.to_string()).collect();
    let grid = Grid::build(SweepSpec {
        name: "cut-off".into(),
        source: "test".into(),
        scenario: s.clone(),
        vary: vec![("epsilon".into(), values)],
        seeds: 3,
        references: Vec::new(),
    })
    .unwrap_or_else(|p| panic!("{p:?}"));
    let (stats, _) = sweep::run_all(&grid, Some(2), false, std::io::sink()).unwrap();
    for (cell, st) in stats.iter().enumerate() {
        let eps = grid.values(cell)[0];
        let want = if below.contains(&eps) { 1.0 } else { 0.0 };
        assert_eq!(st.p_overlap(), want, "epsilon = {eps}: {st:?}");
        assert_eq!(st.runs, 3);
    }
    // At 5 ms: 9.995 / 0.999 s - 10.002 s = 3.005005 ms (true instants rounded up: 1 ns).
    assert!((stats[1].max_overlap_ns - 3_005_005).abs() <= 1);
    // The measured boundary sits between 8.0015 and 8.0025 ms, below the bound of 10 ms.
    let b = &sweep::report::boundaries(&grid, &stats)[0];
    assert_eq!(b.last_overlap_eps_ns, Some(8_001_500));
    assert_eq!(b.first_safe_eps_ns, Some(8_002_500));
    assert_eq!(b.verdict, sweep::report::BoundVerdict::Holds);
    assert!((b.bound_ns - 10_000_000.0).abs() < 1e-6);

    // The same story with only margins below T * rho = 10 ms: the group cannot say whether the
    // bound holds. With h's drift placed by rho (Adversarial: h at -rho/2), the margin h needs
    // moves with rho: at rho = 1000 ppm (h at -500 ppm) an overlap needs (T - eps) / 0.9995 >
    // 10.002 s, eps < 3.001 ms; at 2000 ppm, eps < 8.002 ms as above. So epsilon = 5 ms is
    // safe at rho = 1000 only, and the best safe choice over both is epsilon = 9 ms (5 ms, the
    // more available, must not be offered: rho is not the user's to choose).
    let grid = |scenario, vary: Vec<(String, Vec<String>)>| {
        Grid::build(SweepSpec {
            name: "cut-off".into(),
            source: "test".into(),
            scenario,
            vary,
            seeds: 1,
            references: Vec::new(),
        })
        .unwrap_or_else(|p| panic!("{p:?}"))
    };
    let strings = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let g = grid(
        s.clone(),
        vec![("epsilon".into(), strings(&["1ms", "5ms", "8ms"]))],
    );
    let (stats, _) = sweep::run_all(&g, Some(2), false, std::io::sink()).unwrap();
    let b = &sweep::report::boundaries(&g, &stats)[0];
    assert_eq!(b.verdict, sweep::report::BoundVerdict::Untested);

    let placed = scenario(
        r#"Scenario(
            duration: "40s",
            lease: (duration: "10s", renew_every: "3s"),
            strategy: TwoSided(holder_margin: "5ms"),
            clocks: (drift_spread_ppm: 2000.0, placement: Adversarial),
            nodes: [
                (name: "lock", role: Grantor, drift_ppm: 0.0),
                (name: "h", role: Contender),
                (name: "b", role: Contender, start: "100ms", drift_ppm: 0.0),
            ],
            network: (delay: Fixed("1ms")),
            faults: [OneWay(from: "h", to: "lock", at: "10s", duration: "30s")],
        )"#,
    );
    let g = grid(
        placed,
        vec![
            ("epsilon".into(), strings(&["2ms", "5ms", "9ms"])),
            ("rho".into(), strings(&["1000", "2000"])),
        ],
    );
    let (stats, _) = sweep::run_all(&g, Some(2), false, std::io::sink()).unwrap();
    let overlapped: Vec<bool> = stats.iter().map(|st| st.overlap_runs > 0).collect();
    // Cells in order (epsilon, rho): (2, 1000) (2, 2000) (5, 1000) (5, 2000) (9, 1000) (9, 2000).
    assert_eq!(overlapped, [true, true, false, true, false, false]);
    let best = sweep::report::best_safe(&g, &stats, 5);
    assert_eq!(best.len(), 1);
    assert_eq!(best[0].label, "epsilon=9ms");
    assert_eq!(best[0].cells, [4, 5]);
    assert_eq!(best[0].runs, 2);
    // The choices (what the trade-off chart plots) are the epsilons alone, each over both rho:
    // rho is the environment, never part of a choice. Each takes its worst cell: epsilon = 5ms
    // overlapped at rho = 2000 only, and that is what it shows.
    let ch = sweep::report::choices(&g, &stats);
    let labels: Vec<&str> = ch.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["epsilon=2ms", "epsilon=5ms", "epsilon=9ms"]);
    let cells: Vec<&[usize]> = ch.iter().map(|c| c.cells.as_slice()).collect();
    assert_eq!(cells, [&[0, 1][..], &[2, 3], &[4, 5]]);
    let over: Vec<bool> = ch.iter().map(|c| c.overlapped).collect();
    assert_eq!(over, [true, true, false]);
    assert_eq!(
        ch[1].worst_p_unsafe,
        stats[3].p_unsafe().max(stats[2].p_unsafe())
    );
    assert!(ch[1].worst_p_unsafe > 0.0 && ch[2].worst_p_unsafe == 0.0);
}

/// The cut-off story (margin 5 ms, lease 10 s, each a grid may vary): h (-1000 ppm) renews
/// every 3 s and is cut off from lock at 10 s, every message takes 1 ms, the run lasts 40 s.
const CUT_OFF: &str = r#"Scenario(
    duration: "40s",
    lease: (duration: "10s", renew_every: "3s"),
    strategy: TwoSided(holder_margin: "5ms"),
    nodes: [
        (name: "lock", role: Grantor, drift_ppm: 0.0),
        (name: "h", role: Contender, drift_ppm: -1000.0),
        (name: "b", role: Contender, start: "100ms", drift_ppm: 0.0),
    ],
    network: (delay: Fixed("1ms")),
    faults: [OneWay(from: "h", to: "lock", at: "10s", duration: "30s")],
)"#;

/// Sweeps [`CUT_OFF`] (as `cut.ron` in a fresh `test` directory) over `vary`, 3 seeds; what
/// it printed, its results.csv rows as (T, epsilon, handover_runs) and its report.md.
fn sweep_cut_off(test: &str, vary: &[&str]) -> (String, Vec<(String, String, String)>, String) {
    let dir = workdir(test);
    fs::write(dir.join("cut.ron"), CUT_OFF).unwrap();
    let mut args = vec!["sweep", "cut.ron", "--seeds", "3", "--out", "out"];
    for v in vary {
        args.extend(["--vary", v]);
    }
    let printed = ok(&leasesim(&args, &dir));
    let results = fs::read_to_string(dir.join("out/cut-sweep/results.csv")).unwrap();
    let mut lines = results.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (t, eps, handovers) = (col("T"), col("epsilon"), col("handover_runs"));
    assert_eq!(handovers, col("overlap_runs") + 1, "{head:?}");
    let rows = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[t].into(), f[eps].into(), f[handovers].into())
        })
        .collect();
    let report = fs::read_to_string(dir.join("out/cut-sweep/report.md")).unwrap();
    (printed, rows, report)
}

/// A cell whose runs never hand the lease over has nothing to judge: it is untested, never safe
/// and never the best safe setting, however available.
///
/// In [`CUT_OFF`] lock last receives the renewal h sent at 9 s (the one of 12 s is cut), at
/// 9.001 s. With T = 10 s it frees the lease at 19.001 s and b believes from 19.002 s: a
/// handover in each of the 3 runs; at epsilon = 5 ms h believes until 9 + 9.995 / 0.999 s, an
/// overlap of 3.005 ms, and at 20 ms it stops 12.01 ms before b starts (safe). With T = 60 s
/// lock would free it at 69.001 s, after the run's 40 s: b never holds, 0 handovers of 3, no
/// overlap, no harm. Those cells are the most available (h holds all run long, 99.995 %
/// against 99.965 % at T = 10 s), so a best safe that ignored the handovers would pick one.
#[test]
fn a_cell_without_a_handover_is_untested_and_never_the_best_safe() {
    let (printed, rows, report) =
        sweep_cut_off("sweep-untested", &["T=10s,60s", "epsilon=5ms,20ms"]);
    let row = |t: &str, e: &str, h: &str| (t.to_string(), e.to_string(), h.to_string());
    assert_eq!(
        rows,
        [
            row("10s", "5ms", "3"),
            row("10s", "20ms", "3"),
            row("60s", "5ms", "0"),
            row("60s", "20ms", "0"),
        ]
    );
    let verdicts: Vec<&str> = printed
        .lines()
        .filter(|l| l.starts_with("10s") || l.starts_with("60s"))
        .map(|l| l.split("  ").last().unwrap().trim())
        .collect();
    assert_eq!(
        verdicts,
        [
            "overlap",
            "safe",
            "untested: no handover",
            "untested: no handover"
        ],
        "{printed}"
    );
    assert!(
        printed.contains(
            "best safe: T=10s, epsilon=20ms (availability 99.9650% at worst, 0 of 3 runs with a \
             handover overlapped or harmed, of 3 runs)\n"
        ),
        "{printed}"
    );
    assert!(
        printed.contains("untested: 2 settings (T=60s, epsilon=5ms; T=60s, epsilon=20ms)"),
        "{printed}"
    );
    assert!(report.contains("1. **T=10s, epsilon=20ms**"), "{report}");
    assert!(!report.contains("2. **"), "one safe setting only: {report}");
    assert!(
        report.contains("| 60s | 20ms | 3 | 0 | 0.000 [0.000, 0.561] |"),
        "{report}"
    );
    assert!(report.contains("| untested: no handover |"), "{report}");
}

/// A sweep none of whose cells had a handover has no best safe setting, and says why; the
/// bound is not tested where no run at an epsilon at or above it had a handover.
///
/// T = 60 s as above: no handover in any run. T * rho = 60 s x 1000 ppm (h's drift against
/// lock's) = 60 ms, so epsilon = 70 ms lies above the bound but, without a handover, cannot
/// show whether it holds.
#[test]
fn a_sweep_without_handovers_has_no_best_safe_and_does_not_test_the_bound() {
    let (printed, rows, report) =
        sweep_cut_off("sweep-all-untested", &["T=60s", "epsilon=5ms,70ms"]);
    assert!(rows.iter().all(|r| r.2 == "0"), "{rows:?}");
    assert!(
        printed
            .contains("best safe: none (2 settings untested: no run with a handover to judge)\n"),
        "{printed}"
    );
    assert!(
        printed.contains(
            "bound epsilon >= T*rho: holds in 0 of 1 groups, violated in 0, untested in 1 (1 had \
             no run with a handover at an epsilon at or above it)"
        ),
        "{printed}"
    );
    assert!(
        report.contains("No setting was safe: 2 settings untested"),
        "{report}"
    );
    assert!(!report.contains("The least unsafe cells"), "{report}");
}

#[test]
fn results_do_not_depend_on_jobs() {
    let dir = workdir("sweep-jobs");
    for jobs in ["1", "2"] {
        let mut args = vec!["sweep"];
        args.extend(SMALL_GRID);
        args.extend([jobs, "--jobs", jobs]);
        ok(&leasesim(&args, &dir));
    }
    let report = |j: &str| dir.join(j).join("sweep-drift-boundary-sweep");
    let results = fs::read_to_string(report("1").join("results.csv")).unwrap();
    assert!(results.starts_with(
        "T,epsilon,runs,overlap_runs,handover_runs,p_overlap,p_overlap_lo,p_overlap_hi,\
         mean_overlap_ns,max_overlap_ns,mean_availability,zombie_actions,stale_reads,"
    ));
    assert_eq!(results.lines().count(), 1 + 6, "{results}");
    assert!(results.lines().nth(1).unwrap().starts_with("5s,2ms,3,"));
    same_reports(&report("1"), &report("2"));
}

#[test]
fn shards_merged_give_the_unsharded_bytes() {
    let dir = workdir("sweep-shards");
    let mut args = vec!["sweep"];
    args.extend(SMALL_GRID);
    args.push("whole");
    ok(&leasesim(&args, &dir));
    for shard in ["0/3", "1/3", "2/3"] {
        let mut args = vec!["sweep"];
        args.extend(SMALL_GRID);
        args.extend(["split", "--shard", shard, "--jobs", "1"]);
        ok(&leasesim(&args, &dir));
    }
    let split = dir.join("split/sweep-drift-boundary-sweep");
    assert_eq!(
        report_files(&split),
        Vec::<String>::new(),
        "a shard writes its partial only"
    );
    // A missing shard is refused, with nothing written.
    let lone = dir.join("lone");
    fs::create_dir_all(&lone).unwrap();
    fs::copy(
        split.join("partial-1-of-3.csv"),
        lone.join("partial-1-of-3.csv"),
    )
    .unwrap();
    let o = leasesim(&["sweep-merge", "lone", "--out", "lone-out"], &dir);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("missing shards: partial-0-of-3.csv, partial-2-of-3.csv"),
        "{err}"
    );
    assert!(!dir.join("lone-out").exists());

    ok(&leasesim(
        &[
            "sweep-merge",
            "split/sweep-drift-boundary-sweep",
            "--out",
            "split",
        ],
        &dir,
    ));
    same_reports(&dir.join("whole/sweep-drift-boundary-sweep"), &split);
    assert!(
        split.join("partial-0-of-3.csv").exists(),
        "merging in place keeps the partials"
    );
}

#[test]
fn a_bad_vary_path_exits_2_and_writes_nothing() {
    let dir = workdir("sweep-bad");
    let o = leasesim(
        &[
            "sweep",
            "sweep-drift-boundary",
            "--vary",
            "lease.durration=1s,2s",
            "--vary",
            "epsilon=1ms,20s",
            "--seeds",
            "2",
            "--out",
            "out",
        ],
        &dir,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("`lease` has no field `durration`"), "{err}");
    assert!(
        err.contains("20s must be shorter than the lease (10s)"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        fs::read_dir(&dir).unwrap().next().is_none(),
        "nothing written"
    );
}

#[test]
fn tables_reproduce_the_seed_figures() {
    let out = ok(&leasesim(
        &["tables"],
        Path::new(env!("CARGO_TARGET_TMPDIR")),
    ));
    for figure in ["100000x", "30.00 ms", "949.9 ms", "29947.0 ms"] {
        assert!(out.contains(figure), "{figure} missing from:\n{out}");
    }
    let md = ok(&leasesim(
        &["tables", "--format", "md", "--T", "30s", "--rho", "1000"],
        Path::new(env!("CARGO_TARGET_TMPDIR")),
    ));
    assert!(md.contains("| 30s | 30.00 ms |"), "{md}");
}

/// The environment both advise tests describe: 200 ppm, steps up to 50 ms, pauses up to 2 s,
/// delays up to 10 ms, a failover budget of 30 s.
const ADVISE_ENV: &[&str] = &[
    "--rho",
    "200",
    "--max-step",
    "50ms",
    "--max-pause",
    "2s",
    "--max-delay",
    "10ms",
    "--failover",
    "30s",
];

#[test]
fn advise_shows_its_arithmetic_and_checks_it() {
    let args = [&["advise"], ADVISE_ENV, &["--seeds", "3"]].concat();
    let out = ok(&leasesim(&args, Path::new(env!("CARGO_TARGET_TMPDIR"))));
    // T = 20 s (the largest round value within 30 s - 2 x 10 ms); epsilon = 20 s x 200 ppm
    // + 50 ms + 10 ms = 64 ms.
    for line in [
        "T x rho = 20s x 200 ppm",
        "4.000 ms",
        "epsilon >= drift + step + scheduling",
        "=> epsilon = 64ms",
        "T > 1.5 x (2s + 64ms + 2 x 10ms) = 3.126s",
        "T <= 29.98s",
        "=> T = 20s",
        "renew every T/3 = 6.666666666s",
        "1x (advised)",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
    assert!(
        out.contains("The advised epsilon (64ms) was safe in all 3 runs"),
        "{out}"
    );
}

#[test]
fn advise_with_stalled_clocks_states_the_safety_condition_and_names_what_it_ran() {
    // The environment of the test above, with pauses that stall the clocks, checked on a
    // bundled scenario: T = 20 s, so the scenario runs with a 20 s lease renewed every
    // 20 s / 3 = 6.666666666 s.
    let extra = [
        "--pauses-stall-clocks",
        "--scenario",
        "q4-gc-pause-two-sided",
        "--seeds",
        "2",
    ];
    let args = [&["advise"], ADVISE_ENV, &extra].concat();
    let out = leasesim(&args, Path::new(env!("CARGO_TARGET_TMPDIR")));
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "pauses stall the clocks:",
        "renew interval + pause + 2 x delay + epsilon < T",
        "T > 1.5 x (2s + 64ms + 2 x 10ms) = 3.126s",
        "Checked on q4-gc-pause-two-sided: its own faults and strategy, with lease.duration = \
         20s and lease.renew_every = 6.666666666s (T/3).",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
}

/// The names in `dir`, sorted, hidden ones included.
fn all_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

const IN_PROGRESS: &str = ".sweep-drift-boundary-sweep.in-progress";

#[test]
fn a_sweep_killed_at_random_points_resumes_to_the_same_bytes() {
    // 1,920 runs: a few seconds on two threads, so that the kills land mid-sweep.
    let grid = [
        "sweep",
        "sweep-drift-boundary",
        "--vary",
        "T=2s,5s,10s,20s",
        "--vary",
        "rho=200,500,1000,2000",
        "--vary",
        "epsilon=2ms,5ms,10ms,20ms",
        "--seeds",
        "30",
        "--jobs",
        "2",
        "--out",
    ];
    let dir = workdir("sweep-killed");
    let mut args = grid.to_vec();
    args.push("whole");
    ok(&leasesim(&args, &dir));
    let mut args = grid.to_vec();
    args.extend(["killed", "--resume"]);
    // Each kill lands after the sweep has put more runs on disk than the last one left (so
    // every kill interrupts real progress, however loaded the machine), plus a seeded delay
    // (splitmix64 of a fixed seed) of 0 to 50 ms that moves it off the flush itself.
    let in_progress = dir.join("killed").join(IN_PROGRESS);
    let lines = || {
        fs::read(&in_progress)
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0)
    };
    let mut state = 0x1ea5e5u64;
    let mut kills = 0;
    for _ in 0..3 {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let delay_ms = (z ^ (z >> 31)) % 50;
        let before = lines().max(2); // the definition and the header come first
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_leasesim"))
            .args(&args)
            .current_dir(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Polls every 5 ms, for two minutes at most.
        for _ in 0..24_000 {
            if lines() > before {
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL: no handler runs
            kills += 1;
        }
        child.wait().unwrap();
        if !in_progress.exists() {
            break; // it finished before the kill: nothing more to interrupt
        }
    }
    assert!(kills > 0, "no kill landed mid-sweep");
    let o = leasesim(&args, &dir);
    let out = ok(&o);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("resuming killed/"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains(" resumed)"),
        "only the missing runs ran: {out}"
    );
    same_reports(
        &dir.join("whole/sweep-drift-boundary-sweep"),
        &dir.join("killed/sweep-drift-boundary-sweep"),
    );
    assert_eq!(
        all_names(&dir.join("killed")),
        ["sweep-drift-boundary-sweep"],
        "nothing left aside"
    );
}

#[test]
fn an_in_progress_file_cut_anywhere_resumes_to_the_same_bytes() {
    let dir = workdir("sweep-cut");
    let mut args = vec!["sweep"];
    args.extend(SMALL_GRID);
    args.push("whole");
    ok(&leasesim(&args, &dir));
    // A one-shard partial has the in-progress file's format: definition, header, runs.
    let mut args = vec!["sweep"];
    args.extend(SMALL_GRID);
    args.extend(["full", "--shard", "0/1"]);
    ok(&leasesim(&args, &dir));
    let full = fs::read(dir.join("full/sweep-drift-boundary-sweep/partial-0-of-1.csv")).unwrap();
    let lines: Vec<usize> = (0..full.len()).filter(|&i| full[i] == b'\n').collect();
    assert_eq!(lines.len(), 2 + 18);
    // Blocks of zeros in place of runs 5 to 8 (what a power loss can leave): the runs from there
    // on are run again, even those whole after the zeros.
    let mut damaged = full.clone();
    damaged[lines[2 + 4] + 10..lines[2 + 8]].fill(0);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("inside the definition", full[..lines[0] / 2].to_vec()),
        ("inside the header", full[..lines[1] - 3].to_vec()),
        ("after the header", full[..lines[1] + 1].to_vec()),
        ("in the middle of run 7", full[..lines[2 + 6] + 20].to_vec()),
        ("just before a newline", full[..lines[2 + 11]].to_vec()),
        ("a damaged run", damaged),
        ("every run done", full.clone()),
    ];
    for (k, (case, bytes)) in cases.into_iter().enumerate() {
        let out = format!("cut{k}");
        fs::create_dir_all(dir.join(&out)).unwrap();
        fs::write(dir.join(&out).join(IN_PROGRESS), bytes).unwrap();
        let mut args = vec!["sweep"];
        args.extend(SMALL_GRID);
        args.extend([out.as_str(), "--resume"]);
        ok(&leasesim(&args, &dir));
        let got = dir.join(&out).join("sweep-drift-boundary-sweep");
        assert_eq!(
            all_names(&dir.join(&out)),
            ["sweep-drift-boundary-sweep"],
            "{case}"
        );
        same_reports(&dir.join("whole/sweep-drift-boundary-sweep"), &got);
    }

    // A shard resumes too: its partial comes out the same.
    let mut args = vec!["sweep"];
    args.extend(SMALL_GRID);
    args.extend(["shard", "--shard", "1/3"]);
    ok(&leasesim(&args, &dir));
    let partial = dir.join("shard/sweep-drift-boundary-sweep/partial-1-of-3.csv");
    let want = fs::read(&partial).unwrap();
    fs::remove_file(&partial).unwrap();
    let cut = want.iter().rposition(|&b| b == b'\n').unwrap() - 9;
    fs::write(
        dir.join("shard/sweep-drift-boundary-sweep/.partial-1-of-3.csv.in-progress"),
        &want[..cut],
    )
    .unwrap();
    args.push("--resume");
    let o = leasesim(&args, &dir);
    ok(&o);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("5 of 6 runs were done"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(fs::read(&partial).unwrap() == want);
    assert_eq!(
        all_names(&dir.join("shard/sweep-drift-boundary-sweep")),
        ["partial-1-of-3.csv"]
    );
}

#[test]
fn resuming_another_sweep_is_refused() {
    let dir = workdir("sweep-other");
    let mut args = vec!["sweep"];
    args.extend(SMALL_GRID);
    args.extend(["full", "--shard", "0/1"]);
    ok(&leasesim(&args, &dir));
    let full = fs::read(dir.join("full/sweep-drift-boundary-sweep/partial-0-of-1.csv")).unwrap();
    let fifth = full
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(4)
        .unwrap()
        .0;
    let half = &full[..fifth + 1];
    fs::create_dir_all(dir.join("out")).unwrap();
    fs::write(dir.join("out").join(IN_PROGRESS), half).unwrap();
    let o = leasesim(
        &[
            "sweep",
            "sweep-drift-boundary",
            "--vary",
            "T=5s,10s",
            "--vary",
            "epsilon=2ms,5ms,8ms",
            "--seeds",
            "4",
            "--out",
            "out",
            "--resume",
        ],
        &dir,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--seeds 3 there, 4 here"), "{err}");
    assert!(err.contains("without --resume"), "{err}");
    assert_eq!(all_names(&dir.join("out")), [IN_PROGRESS]);
    assert!(fs::read(dir.join("out").join(IN_PROGRESS)).unwrap() == half);

    // The same sweep started while another process writes its file is refused too.
    let held = fs::File::options()
        .read(true)
        .write(true)
        .open(dir.join("out").join(IN_PROGRESS))
        .unwrap();
    held.lock().unwrap();
    let mut args = vec!["sweep"];
    args.extend(SMALL_GRID);
    args.extend(["out", "--resume"]);
    let o = leasesim(&args, &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("another leasesim process is running this sweep"),
        "{err}"
    );
    drop(held);
    assert!(fs::read(dir.join("out").join(IN_PROGRESS)).unwrap() == half);
    // Once it is free, the resume runs.
    ok(&leasesim(&args, &dir));
    assert_eq!(all_names(&dir.join("out")), ["sweep-drift-boundary-sweep"]);
}
