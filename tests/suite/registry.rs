//! Protocols registered by name (`strategy::Registry`, `cli::Cli::protocol`): scenarios name
//! them like built-in strategies, every command runs them, and their errors point into the file.

use leasesim::cli::Cli;
use leasesim::scenario::load::{self, LoadError};
use leasesim::scenario::{validate, StrategySpec};
use leasesim::strategy::{base::BaseProtocol, Registry, Rules, Settings};
use leasesim::time::LocalDur;
use leasesim::Scenario;
use std::fs;
use std::path::Path;
use std::process::ExitCode;

use crate::common::workdir;

/// The fields of `Patient(wait: "20ms")`: the base protocol with both margins `wait`, a
/// stand-in for a protocol of a user's own.
#[derive(Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Patient {
    wait: LocalDur,
    #[serde(default)]
    note: Option<String>,
}

impl Settings for Patient {
    const NAME: &'static str = "Patient";
    type Protocol = BaseProtocol;

    fn to_ron(&self) -> String {
        let note = self.note.as_ref().map(|n| format!(", note: {n:?}"));
        format!(
            "Patient(wait: \"{}\"{})",
            self.wait,
            note.unwrap_or_default()
        )
    }

    fn build(&self) -> BaseProtocol {
        let rules = Rules {
            holder_margin: self.wait,
            grantor_margin: self.wait,
            ..Rules::default()
        };
        BaseProtocol::new(rules, self.to_ron())
    }
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register::<Patient>();
    r
}

fn cli() -> Cli {
    Cli::new().protocol::<Patient>()
}

fn scenario_text(strategy: &str) -> String {
    format!(
        r#"Scenario(
    duration: "30s",
    lease: (duration: "10s"),
    strategy: {strategy},
    nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender), (name: "b", role: Contender)],
    network: (delay: Fixed("1ms")),
    workload: (reads_per_second: 5.0),
    faults: [Pause(node: "a", at: "5s", duration: "12s")],
)
"#
    )
}

fn run_cli(args: &[&str]) -> ExitCode {
    cli().run_args(std::iter::once("leasesim").chain(args.iter().copied()))
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

#[test]
fn a_registered_protocol_runs_through_every_command() {
    let dir = workdir("registry-cli");
    let file = dir.join("patient.ron");
    fs::write(&file, scenario_text(r#"Patient(wait: "20ms")"#)).unwrap();
    let out = dir.join("out");
    let (file, out) = (path(&file), path(&out));

    assert_eq!(run_cli(&["check", file]), ExitCode::SUCCESS);
    assert_eq!(
        run_cli(&["run", file, "--out", out, "--trace"]),
        ExitCode::SUCCESS
    );
    let run = dir.join("out/patient");
    let summary = fs::read_to_string(run.join("summary.json")).unwrap();
    assert!(
        summary.contains(r#""strategy": "Patient(wait: \"20ms\")""#),
        "{summary}"
    );
    for f in ["report.md", "timeline.svg", "timeline.png", "trace.jsonl"] {
        assert!(run.join(f).is_file(), "{f}");
    }

    // --strategy names a registered protocol too, on a scenario of a built-in strategy.
    let builtin = dir.join("builtin.ron");
    fs::write(&builtin, scenario_text("GrantorOnly")).unwrap();
    assert_eq!(
        run_cli(&[
            "run",
            path(&builtin),
            "--out",
            out,
            "--strategy",
            r#"Patient(wait: "5ms", note: "override")"#,
        ]),
        ExitCode::SUCCESS
    );
    let summary = fs::read_to_string(dir.join("out/builtin/summary.json")).unwrap();
    assert!(summary.contains(r#"note: \"override\""#), "{summary}");

    // compare: the scenario's own protocol first under `all`, or named in the list.
    assert_eq!(run_cli(&["compare", file, "--out", out]), ExitCode::SUCCESS);
    let compared = fs::read_to_string(dir.join("out/patient-compare/compare.json")).unwrap();
    assert!(compared.contains("Patient(wait"), "{compared}");
    assert!(compared.contains("CachedBool"), "{compared}");
    assert_eq!(
        run_cli(&[
            "compare",
            file,
            "--out",
            out,
            "--strategies",
            r#"Patient(wait: "1ms"), Patient(wait: "2s"), GrantorOnly"#,
        ]),
        ExitCode::SUCCESS
    );
    assert!(dir.join("out/patient-compare/compare.png").is_file());

    // sweep: the scenario's own fields vary, and the protocol's by name.
    assert_eq!(
        run_cli(&[
            "sweep", file, "--out", out, "--vary", "T=5s,10s", "--seeds", "2", "--jobs", "1",
        ]),
        ExitCode::SUCCESS
    );
    let results = fs::read_to_string(dir.join("out/patient-sweep/results.csv")).unwrap();
    assert_eq!(results.lines().count(), 3, "{results}");
    assert_eq!(
        run_cli(&[
            "sweep",
            file,
            "--out",
            out,
            "--vary",
            "strategy.wait=1ms,4s",
            "--vary",
            r#"strategy.note="x","y""#,
            "--seeds",
            "1",
        ]),
        ExitCode::SUCCESS
    );
    let results = fs::read_to_string(dir.join("out/patient-sweep/results.csv")).unwrap();
    assert_eq!(results.lines().count(), 5, "{results}");
    let runs = fs::read_to_string(dir.join("out/patient-sweep/runs.csv")).unwrap();
    assert!(runs.lines().nth(4).unwrap().contains("4s"), "{runs}");
    // A value the protocol does not take, a path inside a field, or epsilon: bad input.
    for vary in ["strategy.wait=7", "strategy.wait.x=1ms", "epsilon=1ms"] {
        assert_eq!(
            run_cli(&["sweep", file, "--out", out, "--vary", vary, "--seeds", "1"]),
            ExitCode::from(2),
            "{vary}"
        );
    }

    // The leasesim binary alone does not know it: bad input.
    assert_eq!(
        Cli::new().run_args(["leasesim", "check", file]),
        ExitCode::from(2)
    );
}

#[test]
fn a_sharded_sweep_of_a_registered_protocol_merges() {
    let dir = workdir("registry-shards");
    let file = dir.join("patient.ron");
    fs::write(&file, scenario_text(r#"Patient(wait: "20ms")"#)).unwrap();
    let (file, parts) = (path(&file), dir.join("parts"));
    for shard in ["0/2", "1/2"] {
        let args = [
            "sweep",
            file,
            "--out",
            path(&parts),
            "--vary",
            "rho=0,100",
            "--seeds",
            "2",
            "--shard",
            shard,
        ];
        assert_eq!(run_cli(&args), ExitCode::SUCCESS);
    }
    let partials = parts.join("patient-sweep");
    let merged = dir.join("merged");
    assert_eq!(
        run_cli(&["sweep-merge", path(&partials), "--out", path(&merged)]),
        ExitCode::SUCCESS
    );
    assert!(merged.join("patient-sweep/results.csv").is_file());
}

#[test]
fn an_unknown_strategy_lists_the_known_ones() {
    let text = scenario_text(r#"Patent(wait: "20ms")"#);
    let known =
        "TwoSided, GrantorOnly, HolderOnly, CachedBool, WallClock, OnReceiveStart, Redlock, \
                 RaftLeaderLease, LeaseGuard, ChubbySession, ZooKeeperSession, ConsulSession, \
                 K8sLeaderElection, EtcdLease, TrueTime, Custom, Patient";
    // Loading the file: where it is.
    match load::from_text_in("s.ron", &text, &registry()) {
        Err(LoadError::Syntax {
            line, col, message, ..
        }) => {
            assert_eq!((line, col), (4, 15));
            assert_eq!(
                message,
                format!(r#"unknown strategy "Patent" (known: {known})"#)
            );
        }
        other => panic!("{other:?}"),
    }
    // Validating a scenario: one problem among the others.
    let scenario = Scenario::from_ron(&text).unwrap();
    let problems = validate::validate_in(&scenario, &registry());
    assert_eq!(
        problems,
        vec![format!(
            r#"strategy: unknown strategy "Patent" (known: {known})"#
        )]
    );
    // The library's `run` knows the built-in strategies alone, and says so.
    let good = Scenario::from_ron(&scenario_text(r#"Patient(wait: "20ms")"#)).unwrap();
    let e = leasesim::run("t", &good).unwrap_err().to_string();
    assert!(
        e.contains(r#"unknown strategy "Patient" (known: TwoSided"#),
        "{e}"
    );
    assert!(e.contains("run_with"), "{e}");
}

#[test]
fn a_bad_field_of_a_registered_strategy_is_reported_where_it_is() {
    let at =
        |strategy: &str| match load::from_text_in("s.ron", &scenario_text(strategy), &registry()) {
            Err(LoadError::Syntax {
                line,
                col,
                message,
                text,
                ..
            }) => (line, col, message, text.unwrap_or_default()),
            other => panic!("{strategy}: {other:?}"),
        };
    // `    strategy: Patient(wiat: "20ms"),`: `wiat` is at column 23.
    let (line, col, message, text) = at(r#"Patient(wiat: "20ms")"#);
    assert_eq!((line, col), (4, 23), "{message}");
    assert!(
        message.starts_with("unknown field `wiat` in `Patient`; expected one of: wait, note"),
        "{message}"
    );
    assert_eq!(text, r#"    strategy: Patient(wiat: "20ms"),"#);
    // A bad duration: the column of its text, as for a built-in strategy's field.
    let (line, col, message, _) = at(r#"Patient(wait: "20xs")"#);
    assert_eq!((line, col), (4, 30), "{message}");
    assert!(
        message.contains(r#"duration "20xs" has unknown unit"#),
        "{message}"
    );
    // Over several lines, after a comment: the line of the field and its own column (ron's
    // column for a value of the wrong type is just after the colon, as for a built-in one).
    let (line, col, message, text) =
        at("/* mine */ Patient(\n        wait: \"1ms\",\n        note: 7,\n    )");
    assert_eq!((line, col), (6, 14), "{message}");
    assert_eq!(text, "        note: 7,");
    // A missing field.
    let (line, _, message, _) = at("Patient()");
    assert_eq!(line, 4);
    assert!(message.contains("missing field `wait`"), "{message}");
    // --strategy: the position in its own text (a duration written as a number: the number's
    // own column, where the error says to add a unit).
    match load::strategy_from_text_in(r#"  Patient(wait: 5)"#, &registry()) {
        Err(LoadError::Syntax {
            source, line, col, ..
        }) => assert_eq!((source.as_str(), line, col), ("--strategy", 1, 17)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_other_strategy_round_trips_through_ron_and_json() {
    for text in [
        r#"Patient(wait: "20ms")"#,
        r#"Patient(wait: "20ms", note: "a, b")"#,
        "Patient",
        "Patient()",
        "Patient(\n        wait: \"1ms\", // the margin\n    )",
    ] {
        let spec = StrategySpec::from_ron(text).unwrap();
        assert_eq!(spec.to_ron(), text);
        assert_eq!(spec.name(), "Patient");
        assert_eq!(StrategySpec::from_ron(&spec.to_ron()).unwrap(), spec);

        // In a scenario file, as written; written back and read again, the same.
        let scenario = Scenario::from_ron(&scenario_text(text)).unwrap();
        assert_eq!(scenario.strategy, spec);
        let again = Scenario::from_ron(&scenario.to_ron()).unwrap();
        assert_eq!(again.strategy, spec, "{}", scenario.to_ron());
        // JSON (a sweep's cells and partial files): the RON text in a string.
        let json = serde_json::to_value(&scenario).unwrap();
        assert_eq!(json["strategy"], serde_json::Value::String(text.into()));
        let back: Scenario = serde_json::from_value(json).unwrap();
        assert_eq!(back.strategy, spec);
    }
    // A built-in strategy is read the same way: its text kept as written, its protocol's
    // names listed first.
    let text = r#"TwoSided(holder_margin: "5ms", grantor_margin: "0s")"#;
    let spec = StrategySpec::from_ron(text).unwrap();
    assert_eq!((spec.name(), spec.to_ron().as_str()), ("TwoSided", text));
    let names = registry().names();
    for n in ["TwoSided", "GrantorOnly", "CachedBool", "Custom"] {
        assert!(names.contains(&n.to_string()), "{names:?}");
    }
    assert_eq!(names.last().map(String::as_str), Some("Patient"));
    // Loaded through its protocol, it is written as the protocol writes it (zero margins left
    // out), and reads back as the same settings.
    let normal = load::strategy_from_text(text).unwrap();
    assert_eq!(normal.to_ron(), r#"TwoSided(holder_margin: "5ms")"#);
    assert_eq!(load::strategy_from_text(&normal.to_ron()).unwrap(), normal);
}

#[test]
#[should_panic(expected = "TwoSided is a built-in strategy")]
fn a_built_in_name_cannot_be_registered() {
    #[derive(Clone, serde::Deserialize)]
    struct Impostor {}
    impl Settings for Impostor {
        const NAME: &'static str = "TwoSided";
        type Protocol = BaseProtocol;
        fn to_ron(&self) -> String {
            Self::NAME.to_string()
        }
        fn build(&self) -> BaseProtocol {
            BaseProtocol::new(Rules::default(), self.to_ron())
        }
    }
    Registry::new().register::<Impostor>();
}

/// A protocol whose fields all have defaults is named alone (`Quiet`, no parentheses); one
/// with a required field is not, and says which.
#[test]
fn a_protocol_with_every_field_defaulted_is_named_alone() {
    #[derive(Clone, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Quiet {
        #[serde(default)]
        wait: LocalDur,
    }
    impl Settings for Quiet {
        const NAME: &'static str = "Quiet";
        type Protocol = BaseProtocol;
        fn to_ron(&self) -> String {
            format!("Quiet(wait: \"{}\")", self.wait)
        }
        fn build(&self) -> BaseProtocol {
            Patient {
                wait: self.wait,
                note: None,
            }
            .build()
        }
    }
    let mut r = registry();
    r.register::<Quiet>();
    let alone = StrategySpec::from_ron("Quiet").unwrap();
    assert_eq!(
        r.build(&alone).unwrap().describe(),
        r#"Patient(wait: "0s")"#
    );
    let required = StrategySpec::from_ron("Patient").unwrap();
    let error = r.build(&required).err().unwrap().to_string();
    assert!(
        error.contains(
            "`Patient` written alone takes every field's default, but `wait` has none: write \
             Patient(wait: ..., ...)"
        ),
        "{error}"
    );
}

/// The registry's debug form names the protocols it holds.
#[test]
fn a_registry_shows_what_it_holds() {
    assert_eq!(
        format!("{:?}", registry()),
        r#"Registry { registered: ["Patient"] }"#
    );
}

/// The commands a report prints name the program that ran: the file stem of its path as run
/// (`/opt/bin/mytool` gives `mytool`), or the name given to `Cli::name`, which wins. A rerun
/// line that kept `leasesim` for another program would tell its users to run the wrong one.
#[test]
fn reports_name_the_program_that_ran() {
    let dir = workdir("registry-program-name");
    let file = dir.join("patient.ron");
    fs::write(&file, scenario_text(r#"Patient(wait: "20ms")"#)).unwrap();
    let (file, out) = (path(&file), dir.join("out"));
    let run = |cli: Cli, argv0: &str, args: &[&str]| {
        cli.run_args(std::iter::once(argv0).chain(args.iter().copied()))
    };
    let args = ["run", file, "--out", path(&out)];
    assert_eq!(run(cli(), "/opt/bin/mytool", &args), ExitCode::SUCCESS);
    let report = fs::read_to_string(out.join("patient/report.md")).unwrap();
    assert!(
        report.contains(&format!("mytool run {file} --seed ")),
        "{report}"
    );
    assert!(!report.contains("leasesim run"), "{report}");

    let sweep = [
        "sweep",
        file,
        "--out",
        path(&out),
        "--vary",
        "rho=0,100",
        "--seeds",
        "1",
    ];
    assert_eq!(
        run(cli().name("named"), "/opt/bin/mytool", &sweep),
        ExitCode::SUCCESS
    );
    let report = fs::read_to_string(out.join("patient-sweep/report.md")).unwrap();
    assert!(
        report.contains(&format!("`named sweep {file} ")),
        "{report}"
    );
    assert!(report.contains("run `named sweep-merge DIR`"), "{report}");
}
