//! What a new user trips on (issue 14): each test pins one surprise that is fixed, so a one-line
//! change bringing it back fails here.

use crate::common::{leasesim, scenario, workdir};
use leasesim::scenario::load;
use std::fs;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A small scenario with `strategy` and `extra` (more top-level fields) spliced in.
fn text(strategy: &str, extra: &str) -> String {
    format!(
        r#"Scenario(
    duration: "20s",
    lease: (duration: "10s"),
    strategy: {strategy},
    nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
    {extra}
)
"#
    )
}

/// The error of loading `text`, as a user sees it.
fn load_error(text: &str) -> String {
    load::from_text("t.ron", text).unwrap_err().to_string()
}

// Item 5: a built-in strategy whose fields all default can be written as its name alone.

#[test]
fn a_strategy_whose_fields_all_default_is_written_as_its_name_alone() {
    // Catches: the bare-name fallback dropped (TwoSided alone is "Expected opening `(`").
    for name in [
        "TwoSided",
        "GrantorOnly",
        "HolderOnly",
        "CachedBool",
        "WallClock",
        "OnReceiveStart",
        "Redlock",
    ] {
        // Loaded, each is written as its protocol writes it: the same settings.
        let loaded = |strategy: &str| load::from_text("t.ron", &text(strategy, "")).unwrap();
        let bare = loaded(name).strategy;
        let empty = loaded(&format!("{name}()")).strategy;
        assert_eq!(bare, empty, "{name}");
        assert_eq!(load::strategy_from_text(name).unwrap(), empty, "{name}");
        // As written, the text is kept.
        assert_eq!(scenario(&text(name, "")).strategy.to_ron(), name);
    }
}

#[test]
fn a_strategy_with_a_required_field_written_alone_names_the_field() {
    // Catches: a missing field reported as "in the scenario" or as a parse error elsewhere.
    assert_eq!(
        load_error(&text("Custom", "")),
        "t.ron:4:15: `Custom` written alone takes every field's default, but `holder_clock` has \
         none: write Custom(holder_clock: ..., ...)\n  |\n4 |     strategy: Custom,\n  |               ^"
    );
}

// Item 8: a duration written as a number says a string with a unit is expected.

#[test]
fn a_duration_written_as_a_number_says_to_add_a_unit() {
    // Catches: durations read with `deserialize_str` again ("Expected string").
    let t = text(
        "GrantorOnly",
        r#"faults: [Pause(node: "a", at: 20, duration: "1s")],"#,
    );
    let e = load_error(&t);
    assert!(
        e.starts_with(
            "t.ron:6:35: expected a duration string with a unit, e.g. \"20s\" or \"20ms\", \
             found the number 20"
        ),
        "{e}"
    );
    let t = text(r#"TwoSided(holder_margin: 0.5)"#, "");
    assert!(
        load_error(&t).contains("e.g. \"0.5s\" or \"0.5ms\", found the number 0.5"),
        "{}",
        load_error(&t)
    );
}

// Item 3: fields that do not apply to a variant are refused, with the reason.

/// The semantic problems of `text` (it must parse).
fn problems(text: &str) -> Vec<String> {
    leasesim::scenario::validate::validate(&scenario(text))
}

#[test]
fn a_clock_given_for_a_gc_pause_is_refused_with_the_reason() {
    // Catches: the check dropped (the clock silently ignored, as before), or `clock` read with
    // a default again so that a given `CatchUp` cannot be told from one left out.
    let faults = r#"faults: [
        Pause(node: "a", at: "5s", duration: "1s", kind: Gc, clock: Stall),
        Pause(node: "a", at: "7s", duration: "1s", clock: CatchUp),
        Pause(node: "a", at: "9s", duration: "1s", kind: VmFreeze, clock: Stall),
        Pause(node: "a", at: "11s", duration: "1s", kind: VmFreeze),
        Pause(node: "a", at: "13s", duration: "1s"),
    ],
    random_faults: [
        Pauses(per_minute: 1.0, duration: Fixed("1s"), clock: Stall),
        Pauses(per_minute: 1.0, duration: Fixed("1s"), kind: VmFreeze, clock: Stall),
    ],"#;
    let why = |at: &str, clock: &str| {
        format!(
            "{at}.clock: {clock} does not apply to a Gc pause, whose clocks keep counting \
             (clock only applies to kind: VmFreeze); remove it, or set kind: VmFreeze"
        )
    };
    assert_eq!(
        problems(&text("GrantorOnly", faults)),
        vec![
            why("faults[0]", "Stall"),
            why("faults[1]", "CatchUp"),
            why("random_faults[0]", "Stall"),
        ]
    );
}

#[test]
fn a_pause_left_without_a_clock_catches_up_and_a_stall_is_kept() {
    // Catches: the default resolved to Stall, or a VmFreeze's Stall lost on the way to the
    // engine: a stalled freeze of 8 s leaves the node's clocks 8 s behind, a catch-up one none.
    use leasesim::scenario::{Fault, FreezeClock};
    let s = scenario(&text(
        "GrantorOnly",
        r#"faults: [
            Pause(node: "a", at: "1s", duration: "1s", kind: VmFreeze),
            Pause(node: "a", at: "3s", duration: "1s", kind: VmFreeze, clock: Stall),
            Pause(node: "a", at: "5s", duration: "1s"),
        ],"#,
    ));
    let clocks: Vec<_> = s.faults.iter().map(Fault::freeze_clock).collect();
    assert_eq!(
        clocks,
        vec![
            Some(FreezeClock::CatchUp),
            Some(FreezeClock::Stall),
            Some(FreezeClock::CatchUp)
        ]
    );
}

#[test]
fn a_holder_margin_under_a_cached_bool_validity_is_refused() {
    // Catches: Custom's margin check forgetting that a cached bool never reads it.
    let custom = |margin: &str| {
        format!(
            "Custom(holder_clock: Monotonic, lease_start: OnSend, validity: CachedBool{margin})"
        )
    };
    assert_eq!(
        problems(&text(&custom(r#", holder_margin: "5ms""#), "")),
        vec![
            "strategy.holder_margin: 5ms does not apply with validity: CachedBool, whose bool is \
             cleared at start + T (by the renewal loop or a Reject), never T - holder_margin; \
             leave it out, or use validity: Clock"
                .to_string()
        ]
    );
    assert_eq!(problems(&text(&custom(""), "")), Vec::<String>::new());
}

// Item 7: the verdict in summary.json and --json; the injected faults in report.md.

/// Runs a bundled scenario as the library does.
fn run_bundled(name: &str) -> (leasesim::Scenario, leasesim::Summary) {
    let s = load::from_text(name, leasesim::scenario::library::text(name).unwrap()).unwrap();
    let summary = leasesim::run(name, &s).unwrap().summary;
    (s, summary)
}

#[test]
fn the_summary_carries_the_verdict_as_a_word() {
    // Catches: the field left out of the JSON, or set before the figures it is derived from.
    for (name, word) in [
        ("q4-gc-pause-cached-bool", "OVERLAP"),
        ("kleppmann-gc-pause-unsafe-write", "HARM"),
        ("q4-gc-pause-two-sided", "SAFE"),
    ] {
        let (_, summary) = run_bundled(name);
        let json = serde_json::to_value(&summary).unwrap();
        assert_eq!(json["verdict"], word, "{name}");
    }
}

#[test]
fn run_json_and_summary_json_say_the_verdict() {
    // Catches: `--json` printing another struct than the summary written to disk.
    let dir = workdir("newcomer-verdict-json");
    let o = leasesim(
        &["run", "q4-gc-pause-cached-bool", "--json", "--out", "out"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(line["verdict"], "OVERLAP");
    let file: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(dir.join("out/q4-gc-pause-cached-bool/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(file["verdict"], "OVERLAP");
}

#[test]
fn report_md_lists_the_faults_injected() {
    // Catches: the section left out, or the fixed fault shown without its end.
    let (s, summary) = run_bundled("q4-gc-pause-cached-bool");
    let md = leasesim::report::markdown::run_report(&summary, &s, "rerun");
    assert!(
        md.contains(
            "## Faults injected\n\n1 fault(s): 1 from `faults`, 0 drawn by `random_faults` from \
             the seed.\n\n| at | until | fault | source |\n|---:|---:|---|---|\n\
             | 20s | 32s | Pause a 12s (Gc) | faults[0] |\n"
        ),
        "{md}"
    );
}

#[test]
fn report_md_lists_random_faults_as_drawn() {
    // Catches: random faults left out of the list (only `faults` printed), or listed other
    // than the engine runs them.
    let (s, summary) = run_bundled("tikv-lease-9s-random-faults");
    let drawn = leasesim::scenario::random_faults::materialize(&s);
    assert!(!drawn.is_empty() && s.faults.is_empty());
    let md = leasesim::report::markdown::run_report(&summary, &s, "rerun");
    assert!(md.contains(&format!(
        "{} fault(s): 0 from `faults`, {} drawn",
        drawn.len(),
        drawn.len()
    )));
    assert_eq!(md.matches(" | drawn |\n").count(), drawn.len());
    let first = drawn.iter().min_by_key(|f| f.at()).unwrap();
    assert!(md.contains(&format!(
        "| {} | ",
        leasesim::time::format_ns(first.at().ns())
    )));
    assert_eq!(s.fault_schedule(), drawn);
}

// Item 1: compare runs the scenario's own strategy, marked as such, and says where the other
// rows' margins came from.

#[test]
fn compare_runs_the_scenarios_own_strategy_as_a_marked_row() {
    // Catches: the own strategy replaced by one with a margin of 1% of T (the file's TwoSided()
    // overlaps under -1000 ppm; the 100 ms margin does not), or the rows left unlabelled.
    let dir = workdir("newcomer-compare-own");
    fs::write(
        dir.join("own.ron"),
        crate::common::cut_off_text("TwoSided()", -1000.0, ""),
    )
    .unwrap();
    let o = leasesim(&["compare", "own.ron", "--out", "out"], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<(&str, &str, &str)> = out
        .lines()
        .filter(|l| l.contains("  SAFE  ") || l.contains("  OVERLAP  "))
        .map(|l| {
            let cells: Vec<&str> = l.split("  ").filter(|c| !c.is_empty()).collect();
            (cells[0].trim(), cells[1].trim(), *cells.last().unwrap())
        })
        .collect();
    assert_eq!(
        rows[..2],
        [
            ("TwoSided()", "OVERLAP", "the scenario's own"),
            (
                "TwoSided(holder_margin: \"100ms\")",
                "SAFE",
                "margin 100ms: 1% of T"
            ),
        ]
    );
    assert_eq!(rows[2], ("GrantorOnly", "OVERLAP", "no margin to set"));
    let json: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(dir.join("out/own-compare/compare.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json[0]["origin"], "the scenario's own");
    assert_eq!(json[0]["strategy"], "TwoSided()");
    assert_eq!(json[1]["origin"], "margin 100ms: 1% of T");
    let svg = fs::read_to_string(dir.join("out/own-compare/compare.svg")).unwrap();
    // The chart names each by what differs (here the strategy's name), and the scenario's own
    // as such; compare.md has them in full.
    assert!(svg.contains("TwoSided (the scenario&apos;s own)"), "{svg}");
    assert!(
        svg.contains("HolderOnly") && !svg.contains("HolderOnly(margin"),
        "{svg}"
    );
    let md = fs::read_to_string(dir.join("out/own-compare/compare.md")).unwrap();
    assert!(md.contains(r#"HolderOnly(margin: "100ms")"#), "{md}");
}

#[test]
fn compare_takes_margins_from_the_scenarios_strategy_and_runs_it_once() {
    // Catches: the own strategy run twice when a built-in equals it, or the origin of a
    // margin taken from the scenario said to be 1% of T.
    let dir = workdir("newcomer-compare-margin");
    let o = leasesim(&["compare", "q4-gc-pause-two-sided", "--out", "out"], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        out.matches("TwoSided(holder_margin: \"50ms\")").count(),
        1,
        "{out}"
    );
    let holder_only = out.lines().find(|l| l.starts_with("HolderOnly")).unwrap();
    assert!(
        holder_only.ends_with("margin 50ms from the scenario's strategy"),
        "{holder_only}"
    );
}

// Item 6: `show` prints or writes a bundled scenario's source.

#[test]
fn show_prints_a_bundled_scenarios_source() {
    // Catches: `show` printing the parsed scenario (comments lost) instead of the source.
    let dir = workdir("newcomer-show");
    let o = leasesim(&["show", "q4-gc-pause-cached-bool"], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let source = leasesim::scenario::library::text("q4-gc-pause-cached-bool").unwrap();
    assert_eq!(stdout(&o), source);
}

#[test]
fn show_out_writes_a_new_file_and_never_replaces_one() {
    // Catches: `--out` overwriting a user's edited copy, or leaving its temporary file behind.
    let dir = workdir("newcomer-show-out");
    let o = leasesim(&["show", "vm-freeze-stall", "--out", "mine.ron"], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let source = leasesim::scenario::library::text("vm-freeze-stall").unwrap();
    assert_eq!(fs::read_to_string(dir.join("mine.ron")).unwrap(), source);
    fs::write(dir.join("mine.ron"), "edited").unwrap();
    let o = leasesim(&["show", "vm-freeze-stall", "--out", "mine.ron"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: mine.ron exists; leasesim show never replaces a file (remove it, or choose \
         another name)\n"
    );
    assert_eq!(fs::read_to_string(dir.join("mine.ron")).unwrap(), "edited");
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, ["mine.ron"]);
    // The file it writes is a scenario `check` accepts as it is.
    let o = leasesim(&["show", "vm-freeze-stall", "--out", "copy.ron"], &dir);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        leasesim(&["check", "copy.ron"], &dir).status.code(),
        Some(0)
    );
}

// Item 8: an unknown bundled name suggests the closest; every bad item of --strategies is
// reported by its own text and place.

#[test]
fn an_unknown_name_suggests_the_closest_and_show_says_the_same() {
    // Catches: the whole library listed again, or `show` with an error of its own.
    let dir = workdir("newcomer-did-you-mean");
    let cases = [
        (
            "q4-gc-pause",
            "did you mean one of q4-gc-pause-cached-bool, q4-gc-pause-two-sided?",
        ),
        (
            "q4-gc-pause-cahced-bool",
            "did you mean q4-gc-pause-cached-bool?",
        ),
        ("vm-freze-stall", "did you mean vm-freeze-stall?"),
        ("zzz", "`leasesim list` shows the bundled ones"),
    ];
    for (name, hint) in cases {
        let want = format!("error: no scenario file or bundled scenario named {name:?}; {hint}\n");
        let run = leasesim(&["run", name, "--out", "out"], &dir);
        assert_eq!((run.status.code(), stderr(&run)), (Some(2), want.clone()));
        let show = leasesim(&["show", name], &dir);
        assert_eq!((show.status.code(), stderr(&show)), (Some(2), want));
    }
}

#[test]
fn every_bad_item_of_compare_strategies_is_reported_by_its_text_and_place() {
    // Catches: stopping at the first bad item, or naming it `--strategy:1:1`.
    let dir = workdir("newcomer-compare-items");
    let list = r#"TwoSided, Cachedbool,TwoSided(holder_margin: 5)"#;
    let o = leasesim(
        &[
            "compare",
            "q4-gc-pause-cached-bool",
            "--strategies",
            list,
            "--out",
            "out",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "error: --strategies:1:11: item 2 `Cachedbool`: unknown strategy \"Cachedbool\" \
             (known: TwoSided, GrantorOnly, HolderOnly, CachedBool, WallClock, OnReceiveStart, \
             Redlock, RaftLeaderLease, LeaseGuard, ChubbySession, ZooKeeperSession, \
             ConsulSession, K8sLeaderElection, EtcdLease, TrueTime, Custom)
  |
1 | {list}
  |           ^
\
             error: --strategies:1:46: item 3 `TwoSided(holder_margin: 5)`: expected a duration \
             string with a unit, e.g. \"5s\" or \"5ms\", found the number 5\n  |\n1 | {list}\n  \
             | {}^\n",
            " ".repeat(45)
        )
    );
    assert!(!dir.join("out").exists());
}

// Item 4: a holder margin below the scenario's own T*rho is warned about, not refused.

#[test]
fn a_margin_below_t_rho_is_warned_about_in_check_and_run() {
    // Catches: the warning dropped, an explicit drift_ppm left out of rho (here -200 ppm
    // against the grantor's +50: 250 ppm), or the warning turned into an error.
    let dir = workdir("newcomer-thin-margin");
    fs::write(
        dir.join("thin.ron"),
        r#"Scenario(duration: "20s", lease: (duration: "10s"), strategy: TwoSided(),
    clocks: (drift_spread_ppm: 100.0),
    nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender, drift_ppm: -200.0)])"#,
    )
    .unwrap();
    let want = "warning: thin.ron: strategy TwoSided(): holder_margin + grantor_margin is 0s, \
                below T*rho = 10s x 250 ppm = 2.5ms, the most a holder's clock can fall behind \
                the grantor's in one term: beliefs can overlap through drift alone; set \
                holder_margin to at least 2.5ms\n";
    let o = leasesim(&["check", "thin.ron"], &dir);
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), want.to_string()));
    let o = leasesim(&["run", "thin.ron", "--out", "out"], &dir);
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), want.to_string()));
    // At the bound, and with no drift at all, there is nothing to say.
    let s = |strategy: &str, spread: f64| {
        scenario(&format!(
            r#"Scenario(duration: "20s", lease: (duration: "10s"), strategy: {strategy},
            clocks: (drift_spread_ppm: {spread}),
            nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)])"#
        ))
    };
    let warnings = leasesim::scenario::validate::warnings;
    assert!(warnings(&s(r#"TwoSided(holder_margin: "1ms")"#, 100.0)).is_empty());
    assert!(warnings(&s("TwoSided()", 0.0)).is_empty());
    assert_eq!(
        warnings(&s(r#"WallClock(holder_margin: "999us")"#, 100.0)).len(),
        1
    );
}

#[test]
fn a_story_that_asks_for_the_overlap_gets_its_warning_as_an_expected_note() {
    // Catches: the note printed as a warning (an alarm on a story meant to fail), or the note
    // given to a scenario that does not ask for an overlap (overlap: false keeps the warning).
    let dir = workdir("newcomer-expected-warning");
    let file = |expect: &str| {
        format!(
            r#"Scenario(duration: "20s", lease: (duration: "10s"), strategy: TwoSided(),
    clocks: (drift_spread_ppm: 100.0),
    nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender, drift_ppm: -200.0)],
    expect: ({expect}))"#
        )
    };
    fs::write(dir.join("meant.ron"), file("overlap_count: 1")).unwrap();
    fs::write(dir.join("safe.ron"), file("overlap: false")).unwrap();
    let tail = "strategy TwoSided(): holder_margin + grantor_margin is 0s, below T*rho = 10s x \
                250 ppm = 2.5ms, the most a holder's clock can fall behind the grantor's in one \
                term: beliefs can overlap through drift alone; set holder_margin to at least \
                2.5ms\n";
    let o = leasesim(&["check", "meant.ron", "safe.ron"], &dir);
    let want = format!(
        "note: meant.ron: expected (its expect asks for an overlap): {tail}\
         warning: safe.ron: {tail}"
    );
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), want));
}

// Item 9: words. The served ratio says whose requests it counts; the overlap intervals of the
// `run` block have a label.

#[test]
fn the_run_block_labels_the_served_ratio_and_the_overlap_intervals() {
    // Catches: "served 41.248% of requests" without saying they arrive at every contender, or
    // the intervals printed under `cost` with a blank label.
    let (_, summary) = run_bundled("q4-gc-pause-cached-bool");
    let block = leasesim::report::text::run_block(&summary, "rerun", None);
    assert!(
        block.contains(
            "  availability 79.985%, served 41.248% of requests arriving at any contender, \
             longest unavailable 8.004s\n  recovery     a holder served when the last fault \
             ended (32s)\n  failover     a -> b down 8.004s: detected after 7.1s, elected or \
             acquired after 904ms; first operation 49.939us later\n  cost         2 grants, 9 renewals, 683 messages (0 dropped)\n  \
             overlaps     [28.004s, 32s)  3.996s  a, b\n"
        ),
        "{block}"
    );
}

#[test]
fn tables_takes_lease_and_capital_t_and_keeps_the_old_spelling() {
    // Catches: `--lease`/`-T` missing, or the old `--T` dropped; the help names no seed tables.
    let dir = workdir("newcomer-tables-lease");
    let run = |flag: &str| {
        let o = leasesim(&["tables", flag, "30s", "--rho", "1000"], &dir);
        assert_eq!(o.status.code(), Some(0), "{flag}: {}", stderr(&o));
        stdout(&o)
    };
    let lease = run("--lease");
    assert_eq!(run("-T"), lease);
    assert_eq!(run("--T"), lease);
    let help = stdout(&leasesim(&["tables", "--help"], &dir));
    assert!(!help.contains("seed"), "{help}");
    assert!(help.contains("--lease"), "{help}");
    // The fixed allowance of table (c) is not epsilon (the drift margin of table (b), which (c)
    // subtracts on top of it): `--epsilon` is not a name for it.
    assert!(!help.contains("--epsilon"), "{help}");
    assert_eq!(
        leasesim(&["tables", "--epsilon", "5ms"], &dir)
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn a_harm_verdict_says_why_with_the_first_act_of_each_kind() {
    use leasesim::outcome::{FirstHarmOut, HarmActOut};
    // kleppmann-gc-pause-unsafe-write (its comment has the arithmetic): a's write checked at
    // 500 ms takes effect at 41 s, when a resumes from its GC pause, under token 1, which b's
    // grant (token 2, at 31.002 s) superseded: the first zombie action, a write sent by a at
    // 41 s. It reaches the one master, `redis`, 1 ms later, after b's token-2 writes: the first
    // unsafe write, at redis at 41.001 s. Every operation is a write: no stale read.
    let bundled = |name| {
        let text = leasesim::scenario::library::text(name).unwrap();
        leasesim::scenario::load::from_text(name, text).unwrap()
    };
    let s = bundled("kleppmann-gc-pause-unsafe-write");
    let summary = leasesim::run("k", &s).unwrap().summary;
    let act = |at_ns, node: &str| HarmActOut {
        at_ns,
        node: "a".to_string(),
        token: 1,
        what: "write",
        at_node: node.to_string(),
    };
    assert_eq!(
        summary.first_harm,
        Some(FirstHarmOut {
            unsafe_write: Some(act(41_001_000_000, "redis")),
            zombie_action: Some(act(41_000_000_000, "a")),
            stale_read: None,
        })
    );
    let block = leasesim::report::text::run_block(&summary, "rerun", None);
    assert!(
        block.contains(
            "why          first unsafe write: a's write under token 1 took effect at redis at \
             41.001s, after a write under a newer token"
        ),
        "{block}"
    );
    // An overlap explains itself in its intervals: no `why`.
    let s = bundled("q4-gc-pause-cached-bool");
    let summary = leasesim::run("q4", &s).unwrap().summary;
    assert_eq!(summary.first_harm, None);
}
