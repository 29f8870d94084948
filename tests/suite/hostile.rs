//! Hostile input (issue 8): every file runs within bounded resources or is rejected with
//! exit code 2, the field and the limit named (`src/scenario/limits.rs`, docs/src/limits.md).
//!
//! One regression test per input that fuzzing found accepted and then crashing, hanging or
//! exhausting memory, with the exact input; and a property test that mutates the bundled
//! scenarios (extreme numbers and durations, dropped and repeated lines, random bytes) and
//! sends them through the loader, the validator and a run capped at a few thousand events:
//! never a panic, always a scenario or a load error.

use crate::common::{leasesim, run_text, workdir};
use leasesim::report::chart::timeline::timeline_scene;
use leasesim::scenario::library;
use leasesim::scenario::limits;
use leasesim::scenario::load::{self, LoadError};
use proptest::prelude::*;
use std::fs;

/// A two-node scenario with the given pieces spliced in: `lease` extra fields, `clocks`,
/// `node` extra fields of contender `a`, `workload`, `faults` and `random_faults`.
fn text(
    duration: &str,
    lease: &str,
    clocks: &str,
    node: &str,
    workload: &str,
    faults: &str,
) -> String {
    format!(
        r#"Scenario(
    duration: "{duration}",
    lease: (duration: "10s"{lease}),
    strategy: TwoSided(holder_margin: "50ms"),
    clocks: ({clocks}),
    nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender{node})],
    workload: ({workload}),
    {faults}
)
"#
    )
}

/// The problems validation finds in `text` (which must parse).
fn problems(text: &str) -> Vec<String> {
    match load::from_text("hostile.ron", text) {
        Err(LoadError::Invalid { problems, .. }) => problems,
        Err(e) => panic!("expected a validation error, got: {e}"),
        Ok(_) => panic!("expected a validation error, the scenario was accepted:\n{text}"),
    }
}

/// Asserts one problem names `field` and contains every one of `words` (the limit).
fn rejected(text: &str, field: &str, words: &[&str]) {
    let p = problems(text);
    assert!(
        p.iter()
            .any(|m| m.starts_with(field) && words.iter().all(|w| m.contains(w))),
        "no problem names {field} with {words:?}: {p:#?}"
    );
}

/// Runs `leasesim check` on `text` written to a file; asserts exit 2 and no panic; stderr.
fn check_exit_2(test: &str, bytes: &[u8]) -> String {
    let dir = workdir(test);
    fs::write(dir.join("hostile.ron"), bytes).unwrap();
    let o = leasesim(&["check", "hostile.ron"], &dir);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn drift_that_rounds_to_a_stopped_clock_is_rejected() {
    let t = text("60s", "", "", ", drift_ppm: -999999.9999995", "", "");
    rejected(&t, "nodes[1].drift_ppm", &["-999999.9999995", "500000"]);
    let t = text(
        "60s",
        "",
        "",
        "",
        "",
        r#"faults: [DriftChange(node: "a", at: "1s", drift_ppm: -999999.9999995)],"#,
    );
    rejected(&t, "faults[0].drift_ppm", &["500000"]);
}

#[test]
fn drift_spread_beyond_the_limit_is_rejected_with_exit_2() {
    let t = text("60s", "", "drift_spread_ppm: 1.5e9", "", "", "");
    rejected(&t, "clocks.drift_spread_ppm", &["1500000000", "1000000"]);
    let err = check_exit_2("hostile-spread", t.as_bytes());
    assert!(err.contains("clocks.drift_spread_ppm"), "{err}");
    assert!(err.contains("1000000"), "{err}");
    let t = text(
        "60s",
        "",
        "drift_spread_ppm: 3e6, placement: Adversarial",
        "",
        "",
        "",
    );
    rejected(&t, "clocks.drift_spread_ppm", &["1000000"]);
}

#[test]
fn a_clock_racing_ahead_for_long_is_rejected() {
    let t = text("1000h", "", "", ", drift_ppm: 999999999.0", "", "");
    rejected(&t, "nodes[1].drift_ppm", &["999999999", "500000"]);
}

#[test]
fn clock_errors_beyond_the_limit_are_rejected() {
    let t = text(
        "60s",
        "",
        "",
        "",
        "",
        r#"faults: [ClockStep(node: "a", at: "1s", by: "300000h")],"#,
    );
    rejected(&t, "faults[0].by", &["300000h", "100h"]);
    let t = text(
        "60s",
        "",
        "",
        r#", offset: "9223372036854775807ns""#,
        "",
        "",
    );
    rejected(&t, "nodes[1].offset", &["100h"]);
    let t = text(
        "60s",
        "",
        "",
        "",
        "",
        r#"random_faults: [ClockSteps(per_hour: 60.0, by: Exponential(mean: "10h"))],"#,
    );
    rejected(&t, "random_faults[0].by", &["100h"]);
}

#[test]
fn runs_longer_than_the_limit_are_rejected() {
    let t = text("2200000h", "", "", "", "", "");
    rejected(&t, "duration", &["2200000h", "1000h"]);
    // 100 years with the default retry: a billion events.
    let t = text("876000h", "", "", "", "", "");
    rejected(&t, "duration", &["1000h"]);
}

#[test]
fn random_faults_beyond_the_limit_are_rejected() {
    let t = text(
        "60s",
        "",
        "",
        "",
        "",
        r#"random_faults: [Pauses(per_minute: 1e12, duration: Fixed("1ms"))],"#,
    );
    rejected(&t, "random_faults:", &["expected to draw", "100000"]);
    rejected(&t, "random_faults[0].per_minute", &["1.000e6 per second"]);
    // The rate alone, over a run so short that the expected count is small.
    let t = text(
        "1ms",
        "",
        "",
        "",
        "",
        r#"random_faults: [Pauses(per_minute: 1e12, duration: Fixed("1ms"))],"#,
    );
    rejected(&t, "random_faults[0].per_minute", &["1.000e6 per second"]);
}

#[test]
fn random_fault_drawing_stops_at_its_hard_stop() {
    // Valid only because the limits are checked by validation; drawn directly here, the
    // generator stops at the hard stop however many the rate asks for.
    let t = text(
        "60s",
        "",
        "",
        "",
        "",
        r#"random_faults: [Pauses(per_minute: 1e9, duration: Fixed("1ms"))],"#,
    );
    let s = leasesim::Scenario::from_ron(&t).unwrap();
    let drawn = leasesim::scenario::random_faults::materialize(&s);
    assert_eq!(drawn.len(), limits::RANDOM_FAULTS_HARD_STOP);
}

/// A scenario with `n` nodes (one grantor).
fn many_nodes(n: usize) -> String {
    let nodes: Vec<String> = (1..n)
        .map(|i| format!(r#"(name: "c{i}", role: Contender)"#))
        .collect();
    format!(
        r#"Scenario(
    duration: "60s",
    lease: (duration: "10s"),
    strategy: TwoSided(holder_margin: "50ms"),
    nodes: [(name: "lock", role: Grantor), {}],
)"#,
        nodes.join(", ")
    )
}

#[test]
fn too_many_nodes_are_rejected() {
    for n in [10_000, 40_000] {
        rejected(&many_nodes(n), "nodes:", &[&format!("{n} nodes"), "100"]);
    }
    assert!(load::from_text("ok", &many_nodes(limits::MAX_NODES)).is_ok());
}

#[test]
fn request_rates_beyond_the_limit_are_rejected() {
    let t = text("60s", "", "", "", "reads_per_second: 1e10", "");
    rejected(&t, "workload.reads_per_second", &["10000000000", "100000"]);
    let t = text("60s", r#", renew_every: "1ns""#, "", "", "", "");
    rejected(&t, "lease.renew_every", &["1ns", "1us"]);
}

#[test]
fn a_long_pause_under_many_reads_is_rejected() {
    let t = text(
        "60s",
        "",
        "",
        "",
        "reads_per_second: 1e6",
        r#"faults: [Pause(node: "a", at: "1s", duration: "39s")],"#,
    );
    rejected(&t, "workload:", &["39s", "1.000e6"]);
    // Under the rate limit the same pause is still too much: 39 s x 100,000/s.
    let t = t.replace("1e6", "1e5");
    rejected(&t, "workload:", &["3.900e6", "1.000e6"]);
    // Overlapping pauses count as one.
    let t = text(
        "60s",
        "",
        "",
        "",
        "reads_per_second: 50000.0",
        r#"faults: [Pause(node: "a", at: "1s", duration: "15s"), Pause(node: "a", at: "10s", duration: "15s")],"#,
    );
    rejected(&t, "workload:", &["24s"]);
}

#[test]
fn max_events_has_a_lower_default_and_a_cap() {
    let t = text("60s", "", "", "", "", "");
    let s = load::from_text("ok", &t).unwrap();
    assert_eq!(s.limits.max_events, limits::DEFAULT_MAX_EVENTS);
    let t = text(
        "60s",
        "",
        "",
        "",
        "",
        "limits: (max_events: 18446744073709551615),",
    );
    rejected(&t, "limits.max_events", &["10000000000"]);
}

#[test]
fn non_utf8_file_error_has_a_position_and_exit_2() {
    let bytes = b"Scenario(\n  description: \"caf\xe9\",\n)\n";
    let err = check_exit_2("hostile-utf8", bytes);
    assert!(err.contains("hostile.ron:2:20: invalid UTF-8"), "{err}");
    assert!(err.contains("byte offset 29"), "{err}");
}

#[test]
fn a_file_above_the_size_limit_is_refused_without_reading_it_whole() {
    let dir = workdir("hostile-size");
    let big = vec![b' '; limits::MAX_SCENARIO_BYTES as usize + 1];
    fs::write(dir.join("big.ron"), big).unwrap();
    let err = load::from_file(&dir.join("big.ron"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("16 MiB"), "{err}");
}

#[test]
fn a_scenario_at_every_clock_limit_runs_and_draws_its_chart() {
    // The largest offset and steps, the widest drift: the chart's clock-error axis spans 200 h
    // and its ticks stay few.
    let t = format!(
        r#"Scenario(
    duration: "60s",
    lease: (duration: "10s"),
    strategy: WallClock(holder_margin: "50ms"),
    clocks: (drift_spread_ppm: 1000000.0, placement: Adversarial),
    nodes: [
        (name: "lock", role: Grantor, offset: "-100h"),
        (name: "a", role: Contender, offset: "100h"),
        (name: "b", role: Contender, drift_ppm: -500000.0),
    ],
    workload: (reads_per_second: 100000.0, service_time: "1ms"),
    faults: [
        ClockStep(node: "a", at: "20s", by: "-100h"),
        ClockStep(node: "b", at: "30s", by: "100h"),
        DriftChange(node: "b", at: "40s", drift_ppm: 500000.0),
    ],
    random_faults: [ClockSteps(nodes: ["lock"], per_hour: 3600.0, by: Uniform(min: "-100h", max: "100h"))],
    limits: (max_events: {}),
)"#,
        200_000
    );
    let s = load::from_text("limits", &t).unwrap_or_else(|e| panic!("{e}"));
    let (outcome, timeline) = leasesim::run_recorded("limits", &s).unwrap();
    let scene = timeline_scene(&timeline, &outcome.summary);
    let _ = scene.render();
}

// ---------------------------------------------------------------------------------------------
// Mutations of the bundled scenarios
// ---------------------------------------------------------------------------------------------

/// Values that replace a number or a duration: extremes, signs, units, nonsense.
const EXTREMES: &[&str] = &[
    "0",
    "-0.0",
    "1",
    "-1",
    "0.5",
    "1e308",
    "-1e308",
    "1e-300",
    "NaN",
    "inf",
    "1e12",
    "1.5e9",
    "3e6",
    "-999999.9999995",
    "999999999.0",
    "100000.0",
    "200000.0",
    "18446744073709551615",
    "9223372036854775807",
    "-9223372036854775808",
    "0ns",
    "1ns",
    "-1ns",
    "1us",
    "39s",
    "100h",
    "-100h",
    "1000h",
    "300000h",
    "2200000h",
    "9223372036854775807ns",
    "-9223372036854775807ns",
    "2562047h",
];

/// The spans of number-like words: a digit (or `-` then a digit) after a non-word character,
/// running over letters, digits, `.`, `_`, `+` and `-` (so `10s` and `1.5e9` are one word).
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'+' | b'-');
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = (b[i].is_ascii_digit()
            || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
            && (i == 0 || !word(b[i - 1]));
        if starts {
            let mut j = i + 1;
            while j < b.len() && word(b[j]) {
                j += 1;
            }
            out.push((i, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the number-like word (index modulo their count) with an extreme.
    Number(usize, usize),
    /// Drop a line.
    DropLine(usize),
    /// Repeat a line (a duplicated field or list entry).
    RepeatLine(usize),
    /// Overwrite a byte.
    Byte(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => (any::<usize>(), 0..EXTREMES.len()).prop_map(|(i, v)| Mutation::Number(i, v)),
        1 => any::<usize>().prop_map(Mutation::DropLine),
        1 => any::<usize>().prop_map(Mutation::RepeatLine),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Byte(i, b)),
    ]
}

fn apply(bytes: Vec<u8>, m: &Mutation) -> Vec<u8> {
    let lines =
        |b: &[u8]| -> Vec<Vec<u8>> { b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect() };
    match *m {
        Mutation::Number(i, v) => {
            let Ok(text) = String::from_utf8(bytes.clone()) else {
                return bytes;
            };
            let spans = numbers(&text);
            if spans.is_empty() {
                return bytes;
            }
            let (a, b) = spans[i % spans.len()];
            format!("{}{}{}", &text[..a], EXTREMES[v], &text[b..]).into_bytes()
        }
        Mutation::DropLine(i) => {
            let mut ls = lines(&bytes);
            let k = i % ls.len();
            ls.remove(k);
            ls.join(&b'\n')
        }
        Mutation::RepeatLine(i) => {
            let mut ls = lines(&bytes);
            let k = i % ls.len();
            let l = ls[k].clone();
            ls.insert(k, l);
            ls.join(&b'\n')
        }
        Mutation::Byte(i, b) => {
            let mut out = bytes;
            if !out.is_empty() {
                let k = i % out.len();
                out[k] = b;
            }
            out
        }
    }
}

/// Load, validate and (if valid) run with a small event budget and lay out the chart; panics
/// only on a bug.
fn survive(bytes: &[u8]) -> Result<(), String> {
    let loaded = load::text_of("mutant.ron", bytes).and_then(|t| load::from_text("mutant.ron", t));
    match loaded {
        Ok(mut s) => {
            s.limits.max_events = s.limits.max_events.min(3_000);
            let (outcome, timeline) = leasesim::run_recorded("mutant", &s)
                .map_err(|e| format!("validated but does not build: {e}"))?;
            let _ = timeline_scene(&timeline, &outcome.summary);
            Ok(())
        }
        Err(LoadError::Syntax { .. } | LoadError::Invalid { .. }) => Ok(()),
        Err(e) => Err(format!("unexpected kind of error: {e}")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn mutated_bundled_scenarios_never_panic(
        pick in any::<usize>(),
        ms in proptest::collection::vec(mutation(), 1..5),
    ) {
        let names = library::names();
        let name = names[pick % names.len()];
        let mut bytes = library::text(name).unwrap().as_bytes().to_vec();
        for m in &ms {
            bytes = apply(bytes, m);
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        prop_assert!(survive(&bytes).is_ok(), "{name} mutated by {ms:?}:\n{text}\n{:?}", survive(&bytes));
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        prop_assert!(survive(&bytes).is_ok());
    }
}

#[test]
fn every_bundled_scenario_is_within_the_limits() {
    for name in library::names() {
        let t = library::text(name).unwrap();
        assert!(load::from_text(name, t).is_ok(), "{name}");
    }
}

/// Expectations that name what cannot exist are input errors, listed together before the run.
#[test]
fn expectations_naming_unknown_nodes_or_kinds_are_rejected() {
    let text = r#"Scenario(
        duration: "10s",
        lease: (duration: "2s"),
        strategy: GrantorOnly,
        nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
        expect: (
            max_availability: 1.5,
            holders: ["a", "nobody"],
            messages: {"Acquire": 1, "Heartbeat": 2},
        ),
    )"#;
    let s = leasesim::Scenario::from_ron(text).expect("it parses");
    let problems = leasesim::scenario::validate::validate(&s).join("\n");
    assert!(
        problems.contains("expect.max_availability: must be a fraction in [0, 1] (got 1.5)"),
        "{problems}"
    );
    assert!(
        problems.contains("expect.holders[1]: unknown node \"nobody\""),
        "{problems}"
    );
    assert!(
        problems.contains("expect.messages: unknown message kind \"Heartbeat\""),
        "{problems}"
    );
    assert!(!problems.contains("holders[0]"), "{problems}");
}

/// Random pauses that overlap merge into one long pause, which the validated bound on waiting
/// requests (rate x longest single pause) does not see: 10 pauses a second of 5 s each keep `a`
/// paused from its first pause to the end. At 100,000 reads/s for 30 s, about 3 million reads
/// arrive while it is paused; the engine keeps at most `MAX_DEFERRED` (2^20) of its input and
/// sheds the rest, counted, instead of holding them all.
#[test]
fn a_paused_node_keeps_a_bounded_backlog() {
    let s = run_text(
        r#"Scenario(
            duration: "30s",
            lease: (duration: "10s"),
            strategy: GrantorOnly,
            nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
            workload: (reads_per_second: 100000.0),
            random_faults: [Pauses(nodes: ["a"], per_minute: 600.0, duration: Fixed("5s"), kind: Gc)],
        )"#,
    );
    assert!(!s.truncated);
    let shed = s.requests.shed_while_paused;
    // Everything after the backlog filled was shed. What was kept: the reads `a` handled before
    // its first pause (served, or rejected in the 2 ms before its grant: about 200 at 100k/s)
    // and the 2^20 entries of the full backlog, all reads but a timer or two (the grantor sends
    // `a` nothing while it holds).
    let kept = s.requests.reads_arrived - shed;
    let backlog = kept - s.requests.reads_served;
    let max = leasesim::engine::MAX_DEFERRED as u64;
    assert!(
        (max..=max + 1_000).contains(&backlog),
        "backlog {backlog}: {s:?}"
    );
}

/// The fuzz corpus's reproducers of past bugs (`fuzz/reproducers`), replayed as the fuzz target
/// runs them: each loads and validates, and runs capped at 20,000 events with the chart
/// recorder, the reports and the timeline's layout; written minimal, it reads back as itself.
/// Each file is named in the directory's README, so none is added without saying what it was.
#[test]
fn every_fuzz_reproducer_loads_runs_and_reads_back() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/reproducers");
    let readme = fs::read_to_string(dir.join("README.md")).unwrap();
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    assert!(files.len() >= 9, "{files:?}");
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let stem = name.trim_end_matches(".ron");
        let listed = readme.contains(&format!("`{name}`"))
            || (stem.ends_with("-1us") && readme.contains("`*-1us.ron`"));
        assert!(
            listed,
            "{name} is not described in fuzz/reproducers/README.md"
        );
        let text = fs::read_to_string(&path).unwrap();
        let mut s = load::from_text(&name, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
        s.limits.max_events = 20_000;
        let (outcome, timeline) = leasesim::run_recorded(stem, &s).expect("it builds");
        assert_eq!(outcome.summary.events, 20_000, "{name}: the cap is reached");
        let md = leasesim::report::markdown::run_report(&outcome.summary, &s, "rerun");
        assert!(
            !md.contains("<b onload"),
            "{name}: markup escaped in report.md"
        );
        let _ = timeline_scene(&timeline, &outcome.summary);
        let back = leasesim::Scenario::from_ron(&s.to_ron_minimal()).expect("reads back");
        assert_eq!(back.to_ron(), s.to_ron(), "{name}");
    }
}
