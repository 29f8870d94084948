//! Messages that say what to do: each input here once got an internal or a misleading error.

use crate::common::{leasesim, workdir};
use std::fs;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn advise_checks_a_short_term_in_its_own_scenario() {
    // T comes out at 10 ms: the check scenario's run is 35 ms long, and its second contender
    // once started at 100 ms, outside it ("the check scenario does not build").
    let dir = workdir("messages-advise-short");
    let o = leasesim(
        &[
            "advise",
            "--rho",
            "100",
            "--max-step",
            "0s",
            "--max-pause",
            "0s",
            "--max-delay",
            "1ms",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("safe in all 8 runs"), "{out}");
}

#[test]
fn a_sweep_varies_a_field_the_file_leaves_unset() {
    let dir = workdir("messages-vary-unset");
    let text = leasesim::scenario::library::text("raft-consul-2014-lease-reads").unwrap();
    assert!(!text.contains("initial_leader"));
    fs::write(dir.join("raft.ron"), text).unwrap();
    let vary = [
        "sweep", "raft.ron", "--seeds", "1", "--out", "out", "--vary",
    ];
    let mut args = vary.to_vec();
    args.push("lease.initial_leader=r1,r2");
    let o = leasesim(&args, &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let results = fs::read_to_string(dir.join("out/raft-sweep/results.csv")).unwrap();
    assert!(results.contains("r2"), "{results}");
    // A field that no record has is still refused, by the path's missing step.
    let mut args = vary.to_vec();
    args.push("lease.initial_leadr=r1");
    let o = leasesim(&args, &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`lease` has no field `initial_leadr`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn out_naming_a_file_or_a_dangling_link_says_it_must_be_a_directory() {
    let dir = workdir("messages-out-file");
    fs::write(dir.join("file"), "mine").unwrap();
    std::os::unix::fs::symlink("nowhere", dir.join("dangling")).unwrap();
    let q4 = "q4-gc-pause-two-sided";
    for (out, says) in [
        ("file", "--out file: is a file; give a directory"),
        ("dangling", "--out dangling: is a symbolic link to nothing"),
        ("file/x", "--out file/x: is inside a file: file is a file"),
    ] {
        for args in [
            &["run", q4, "--out", out][..],
            &["compare", q4, "--out", out],
            &["sweep", q4, "--vary", "T=5s", "--seeds", "1", "--out", out],
            &[
                "explore",
                "explore-cached-bool-pauses",
                "--runs",
                "1",
                "--out",
                out,
            ],
        ] {
            let o = leasesim(args, &dir);
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
            assert!(!stderr(&o).contains("os error"), "{}", stderr(&o));
        }
    }
    assert_eq!(fs::read_to_string(dir.join("file")).unwrap(), "mine");
    let o = leasesim(&["show", q4, "--out", "dangling"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a symbolic link to nothing"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn microseconds_read_with_either_mu_and_an_unknown_unit_lists_them() {
    let dir = workdir("messages-mu");
    let with = |d: &str| {
        format!(
            r#"Scenario(
    duration: "20s",
    lease: (duration: "10s", renew_every: "{d}"),
    strategy: TwoSided(holder_margin: "50ms"),
    nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
)
"#
        )
    };
    for (i, d) in ["3000000us", "3000000\u{b5}s", "3000000\u{3bc}s"]
        .iter()
        .enumerate()
    {
        fs::write(dir.join(format!("ok{i}.ron")), with(d)).unwrap();
        let o = leasesim(&["check", &format!("ok{i}.ron")], &dir);
        assert_eq!(o.status.code(), Some(0), "{d}: {}", stderr(&o));
    }
    fs::write(dir.join("bad.ron"), with("3000000xs")).unwrap();
    let o = leasesim(&["check", "bad.ron"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("us (or \u{b5}s, \u{3bc}s)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn explore_resume_with_nothing_to_resume_says_so() {
    let dir = workdir("messages-resume-nothing");
    let o = leasesim(
        &[
            "explore",
            "explore-cached-bool-pauses",
            "--runs",
            "2",
            "--resume",
            "--out",
            "out",
        ],
        &dir,
    );
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("nothing to resume in "), "{err}");
    assert!(err.contains("running the whole exploration"), "{err}");
    assert!(!err.contains("0 runs kept"), "{err}");
}
