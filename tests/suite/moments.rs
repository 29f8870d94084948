//! Faults placed at protocol moments (`at: After(...)`): where the engine places them, what
//! happens to one whose moment never comes, and the errors of a bad one; and `explore --resume`,
//! which must write the bytes of an uninterrupted exploration.

use crate::common::{leasesim, same_reports, workdir};
use std::fs;
use std::path::Path;

const MS: i64 = 1_000_000;
const FILE: &str = "scenarios/moment-grantor-only-freeze-before-expiry.ron";

/// The bundled moment scenario with `from` replaced by `to` and no `expect` block.
fn variant(from: &str, to: &str) -> String {
    let text = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE)).unwrap();
    assert!(text.contains(from), "{from}");
    let text = text.replace(from, to);
    let expect = text.find("    expect:").unwrap();
    let end = expect + text[expect..].find('\n').unwrap() + 1;
    format!("{}{}", &text[..expect], &text[end..])
}

/// `leasesim run` on `text` in a fresh directory: the exit code, its summary (with `--json`)
/// and its standard error.
fn run(test: &str, text: &str) -> (i32, serde_json::Value, String) {
    let dir = workdir(test);
    fs::write(dir.join("s.ron"), text).unwrap();
    let out = leasesim(&["run", "s.ron", "--json", "--out", "out"], &dir);
    let code = out.status.code().unwrap();
    let summary = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (code, summary, String::from_utf8_lossy(&out.stderr).into())
}

fn slack(s: &serde_json::Value) -> i64 {
    s["min_slack_ns"].as_i64().expect("a handover")
}

/// The bundled scenario as written: its `expect` block holds (exit 0), and its figures are the
/// ones its comment derives: the freeze placed 8 s before the end the fourth grant or renewal
/// set (19.003 s - 8 s = 11.003 s) stalls a's clock by 1 s, so a believes to 20.002 s while b
/// holds from 19.004 s: -998 ms. The crash after a commit never happens.
#[test]
fn a_freeze_placed_before_an_expiry_lands_where_the_protocol_puts_it() {
    let dir = workdir("moments-bundled");
    let out = leasesim(
        &[
            "run",
            &format!("{}/{FILE}", env!("CARGO_MANIFEST_DIR")),
            "--json",
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(slack(&s), -998 * MS);
    assert_eq!(s["pauses"], 1);
    assert_eq!(s["crashes"], 0);
    assert_eq!(s["faults_never_placed"], 1);
}

/// The same freeze placed by other moments, each derived by hand:
/// - 2 s after lock's third renewal (applied at 9.003 s): 11.003 s, the same stall: -998 ms;
/// - 8 s before the fifth expiry: the fifth is b's grant at 19.003 s, ending 29.003 s, so the
///   freeze begins at 21.003 s, after a stopped at 19.002 s: the cut's 2 ms of slack alone
///   (lock frees at 19.003 s, b believes from 19.004 s);
/// - after b's first acquisition (19.004 s) plus 1 ms: a is frozen at 19.005 s, its clock
///   already past 19.002 s: 2 ms again;
/// - a partition placed 997 ms after the third renewal (9.003 + 0.997 = 10 s, as the fixed one
///   was) with the freeze at a fixed 11 s: -998 ms, as with both fixed.
#[test]
fn faults_follow_renewals_expiries_and_acquisitions() {
    let freeze = r#"at: After(moment: Expiry, node: "lock", nth: 4, delay: "-8s")"#;
    let cases = [
        (
            "moments-renewal",
            variant(
                freeze,
                r#"at: After(moment: Renewal, node: "lock", nth: 3, delay: "2s")"#,
            ),
            -998 * MS,
        ),
        (
            "moments-expiry-5",
            variant(
                freeze,
                r#"at: After(moment: Expiry, node: "lock", nth: 5, delay: "-8s")"#,
            ),
            2 * MS,
        ),
        (
            "moments-acquire",
            variant(
                freeze,
                r#"at: After(moment: Acquire, node: "b", delay: "1ms")"#,
            ),
            2 * MS,
        ),
        (
            "moments-partition",
            variant(freeze, r#"at: "11s""#).replace(
                r#"Partition(at: "10s""#,
                r#"Partition(at: After(moment: Renewal, node: "lock", nth: 3, delay: "997ms")"#,
            ),
            -998 * MS,
        ),
    ];
    for (test, text, want) in cases {
        let (code, s, err) = run(test, &text);
        assert_eq!(code, 0, "{test}: {err}");
        assert_eq!(slack(&s), want, "{test}");
        assert_eq!(s["pauses"], 1, "{test}");
    }
}

/// A fault whose moment never comes never happens, and the summary counts it: lock makes at
/// most one renewal every 3 s, 20 in the 60 s run, never a 1000th; so neither the freeze nor
/// the crash happens, and the cut alone leaves 2 ms.
#[test]
fn a_moment_that_never_comes_places_nothing() {
    let text = variant(
        r#"at: After(moment: Expiry, node: "lock", nth: 4, delay: "-8s")"#,
        r#"at: After(moment: Renewal, node: "lock", nth: 1000)"#,
    );
    let (code, s, err) = run("moments-never", &text);
    assert_eq!(code, 0, "{err}");
    assert_eq!(s["pauses"], 0);
    assert_eq!(s["faults_never_placed"], 2);
    assert_eq!(slack(&s), 2 * MS);
}

/// Bad moments are usage errors naming the field and the value.
#[test]
fn a_bad_moment_is_a_usage_error() {
    let freeze = r#"at: After(moment: Expiry, node: "lock", nth: 4, delay: "-8s")"#;
    for (bad, says) in [
        (
            r#"at: After(moment: Grant, nth: 0)"#,
            "faults[1].at.nth: must be from 1 to 1000000 (got 0)",
        ),
        (
            r#"at: After(moment: Grant, delay: "-1s")"#,
            "faults[1].at.delay: must not be negative after a Grant moment (got -1s)",
        ),
        (
            r#"at: After(moment: Grant, node: "z")"#,
            r#"faults[1].at.node: unknown node "z""#,
        ),
        (
            r#"at: After(moment: Expiry, delay: "-60s")"#,
            "faults[1].at.delay: -60s is not shorter than the run (60s)",
        ),
        (r#"at: After(moment: Sent)"#, "Sent"),
        (r#"at: After(moment: Grant, when: 1)"#, "when"),
    ] {
        let (code, _, err) = run("moments-bad", &variant(freeze, bad));
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains(says), "{bad}: {err}");
    }
}

/// An exploration stopped after some runs and resumed writes the bytes of one that ran
/// through, guided and swarm; the in-progress file is gone afterwards.
#[test]
fn a_resumed_exploration_writes_the_same_bytes() {
    let name = "explore-cached-bool-pauses";
    for (search, stop) in [("guided", "40"), ("swarm", "40")] {
        let whole = workdir(&format!("resume-whole-{search}"));
        let out = leasesim(
            &[
                "explore", name, "--runs", "150", "--search", search, "--out", "out",
            ],
            &whole,
        );
        assert!(matches!(out.status.code(), Some(0 | 1)));
        let cut = workdir(&format!("resume-cut-{search}"));
        let args = [
            "explore", name, "--runs", "150", "--search", search, "--out", "out",
        ];
        let mut stopped = args.to_vec();
        stopped.extend(["--stop-after", stop, "--jobs", "1"]);
        let out = leasesim(&stopped, &cut);
        assert_eq!(
            out.status.code(),
            Some(130),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let progress = cut.join("out").join(format!(".{name}.explore-in-progress"));
        let lines = fs::read_to_string(&progress).unwrap().lines().count();
        assert!(lines > 1, "the manifest and the runs kept");
        assert!(!cut.join("out").join(name).exists());
        let mut resumed = args.to_vec();
        resumed.push("--resume");
        let out = leasesim(&resumed, &cut);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{err}");
        assert!(err.contains(&format!("{} runs kept", lines - 1)), "{err}");
        same_reports(&whole.join("out").join(name), &cut.join("out").join(name));
        assert!(!progress.exists());
        // Another exploration's file is not resumed.
        let out = leasesim(&stopped, &cut);
        assert_eq!(out.status.code(), Some(130));
        let mut other = resumed.clone();
        other[3] = "151";
        let out = leasesim(&other, &cut);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("an interrupted exploration of another")
        );
    }
}
