//! The command line (SPEC 5): parse, turn flags into validated inputs, run, map to an exit code.
//!
//! Exit codes: 0 success and every expectation held; 1 an expectation failed; 2 bad input or
//! usage. All input is loaded and checked before anything runs or is written, so bad input
//! leaves no file behind.

use crate::outcome::Summary;
use crate::report::{self, markdown, text};
use crate::scenario::load::{self, LoadError};
use crate::scenario::{library, Scenario, StrategySpec};
use crate::time::Dur;
use clap::{Args, Parser, Subcommand};
use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "leasesim",
    version,
    about = "Deterministic discrete-event simulator for lease protocols",
    long_about = "Runs lease strategies against drifting clocks, pauses, clock steps, crashes and \
                  network faults, and reports every interval in which two nodes both believed \
                  they held the lease, exactly, with the harm done."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run scenarios (files or bundled names; none or --all: the whole library).
    Run(RunArgs),
    /// Run one scenario under several strategies on the same fault schedule.
    Compare(CompareArgs),
    /// Validate scenario files without running them.
    Check {
        /// Scenario files or bundled names.
        #[arg(required = true)]
        scenarios: Vec<String>,
    },
    /// List the bundled scenarios with their descriptions.
    List,
}

#[derive(Args)]
struct RunArgs {
    /// Scenario files (.ron) or names of bundled scenarios.
    scenarios: Vec<String>,
    /// Run every bundled scenario.
    #[arg(long)]
    all: bool,
    /// Override the scenarios' seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the strategy, in the RON syntax of the `strategy` field,
    /// e.g. 'TwoSided(holder_margin: "20ms")'.
    #[arg(long)]
    strategy: Option<String>,
    /// Directory for reports (one subdirectory per scenario).
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// Print each summary as one JSON object per line instead of text.
    #[arg(long)]
    json: bool,
    /// Also print events processed and events per second of wall time.
    #[arg(long)]
    stats: bool,
}

#[derive(Args)]
struct CompareArgs {
    /// A scenario file or bundled name.
    scenario: String,
    /// `all`, or strategies in RON syntax separated by commas.
    #[arg(long, default_value = "all")]
    strategies: String,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Directory for the comparison report (`<scenario>-compare/`).
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// Print the rows as JSON objects, one per line.
    #[arg(long)]
    json: bool,
}

/// A scenario ready to run, with where it came from.
#[derive(Debug)]
struct Loaded {
    name: String,
    /// What to pass to `leasesim run` to get it again (a path or a bundled name).
    source: String,
    scenario: Scenario,
}

/// Runs the command line; the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Run(args) => run(args),
        Command::Compare(args) => compare(args),
        Command::Check { scenarios } => check(&scenarios),
        Command::List => {
            let mut rows = Vec::new();
            for name in library::names() {
                let s = load::from_text(name, library::text(name).expect("listed"));
                let d = s
                    .map(|s| s.description)
                    .unwrap_or_else(|e| format!("(invalid: {e})"));
                rows.push(vec![name.to_string(), d]);
            }
            print!("{}", text::table(&["scenario", "description"], &rows));
            ExitCode::SUCCESS
        }
    }
}

/// Loads one argument: a file if it names one (or ends in `.ron`), else a bundled scenario.
fn load_one(arg: &str) -> Result<Loaded, LoadError> {
    let path = Path::new(arg);
    if path.exists() || arg.ends_with(".ron") {
        return Ok(Loaded {
            name: load::name_of(path),
            source: arg.to_string(),
            scenario: load::from_file(path)?,
        });
    }
    match library::text(arg) {
        Some(t) => Ok(Loaded {
            name: arg.to_string(),
            source: arg.to_string(),
            scenario: load::from_text(&format!("{arg} (bundled)"), t)?,
        }),
        None => Err(LoadError::UnknownName {
            name: arg.to_string(),
            known: library::names().iter().map(|s| s.to_string()).collect(),
        }),
    }
}

/// Loads every argument, or reports every error and gives exit code 2.
fn load_all(args: &[String]) -> Result<Vec<Loaded>, ExitCode> {
    let (ok, errors): (Vec<_>, Vec<_>) = args.iter().map(|a| load_one(a)).partition(Result::is_ok);
    if errors.is_empty() {
        return Ok(ok.into_iter().map(Result::unwrap).collect());
    }
    for e in errors {
        eprintln!("error: {}", e.unwrap_err());
    }
    Err(ExitCode::from(2))
}

fn bad_input(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

/// Applies a strategy override and re-validates (a margin can be too large for a scenario's T).
fn with_strategy(l: &mut Loaded, spec: &StrategySpec) -> Result<(), LoadError> {
    l.scenario.strategy = spec.clone();
    let problems = crate::scenario::validate::validate(&l.scenario);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(LoadError::Invalid {
            source: format!("{} with --strategy {}", l.source, spec.to_ron()),
            problems,
        })
    }
}

fn run(args: RunArgs) -> ExitCode {
    let names: Vec<String> = if args.all || args.scenarios.is_empty() {
        let mut v: Vec<String> = library::names().iter().map(|s| s.to_string()).collect();
        v.extend(args.scenarios.iter().cloned());
        v
    } else {
        args.scenarios.clone()
    };
    let mut loaded = match load_all(&names) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Some(text) = &args.strategy {
        let spec = match load::strategy_from_text(text) {
            Ok(s) => s,
            Err(e) => return bad_input(e),
        };
        let mut failed = false;
        for l in &mut loaded {
            if let Err(e) = with_strategy(l, &spec) {
                eprintln!("error: {e}");
                failed = true;
            }
        }
        if failed {
            return ExitCode::from(2);
        }
    }
    if let Some(seed) = args.seed {
        for l in &mut loaded {
            l.scenario.seed = seed;
        }
    }

    #[allow(clippy::disallowed_types)] // wall time for --stats only, never simulated time
    let results: Vec<(Summary, f64)> = loaded
        .par_iter()
        .map(|l| {
            let started = std::time::Instant::now();
            let outcome = crate::run(&l.name, &l.scenario).expect("validated at load");
            (outcome.summary, started.elapsed().as_secs_f64())
        })
        .collect();

    for (l, (s, _)) in loaded.iter().zip(&results) {
        let rerun = report::rerun_command(s, &l.source, args.strategy.is_some());
        let md = markdown::run_report(s, &l.scenario, &rerun);
        let dir = report::run_dir(&args.out, &l.name);
        if let Err(e) = report::write_dir_atomically(&dir, &report::run_files(s, md)) {
            eprintln!("error: cannot write the report {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    }

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        for (s, secs) in &results {
            let line = if args.stats {
                serde_json::to_string(&WithStats {
                    summary: s,
                    wall_seconds: *secs,
                    events_per_second: s.events as f64 / secs.max(1e-9),
                })
            } else {
                serde_json::to_string(s)
            };
            let _ = writeln!(out, "{}", line.expect("a summary serializes"));
        }
    } else if results.len() == 1 {
        let (s, secs) = &results[0];
        let l = &loaded[0];
        let rerun = report::rerun_command(s, &l.source, args.strategy.is_some());
        let dir = report::run_dir(&args.out, &l.name);
        let _ = write!(
            out,
            "{}",
            text::run_block(s, &rerun, Some(&dir.display().to_string()))
        );
        if args.stats {
            let _ = writeln!(out, "  {:<12} {}", "stats", stats_line(s.events, *secs));
        }
    } else {
        let rows: Vec<Vec<String>> = results.iter().map(|(s, _)| text::verdict_row(s)).collect();
        let _ = write!(out, "{}", text::table(&text::VERDICT_HEADER, &rows));
        for (s, secs) in &results {
            for f in &s.expect.failures {
                let _ = writeln!(out, "FAILED {}: {f}", s.scenario);
            }
            if args.stats {
                let _ = writeln!(out, "{}: {}", s.scenario, stats_line(s.events, *secs));
            }
        }
        let overlaps = results.iter().filter(|(s, _)| s.overlap.count > 0).count();
        let failed = results
            .iter()
            .filter(|(s, _)| s.expect.passed == Some(false))
            .count();
        let _ = writeln!(
            out,
            "\n{} runs: {} with overlap, {} without; expectations: {}. Reports in {}/",
            results.len(),
            overlaps,
            results.len() - overlaps,
            if failed == 0 {
                "all held".to_string()
            } else {
                format!("{failed} FAILED")
            },
            args.out.display()
        );
    }
    let failed = results.iter().any(|(s, _)| s.expect.passed == Some(false));
    ExitCode::from(u8::from(failed))
}

/// A summary with the wall-clock figures of `--stats` (never written to `summary.json`).
#[derive(serde::Serialize)]
struct WithStats<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    wall_seconds: f64,
    events_per_second: f64,
}

fn stats_line(events: u64, secs: f64) -> String {
    format!(
        "{events} events in {secs:.3} s of wall time: {:.0} events/s",
        events as f64 / secs.max(1e-9)
    )
}

/// The strategies `compare --strategies all` runs, with margins from the scenario: its own
/// strategy's holder margin if it has a positive one, else 1% of T.
fn all_strategies(s: &Scenario) -> Vec<StrategySpec> {
    let own = match s.strategy {
        StrategySpec::TwoSided { holder_margin, .. }
        | StrategySpec::WallClock { holder_margin }
        | StrategySpec::OnReceiveStart { holder_margin }
        | StrategySpec::Custom { holder_margin, .. } => holder_margin,
        StrategySpec::HolderOnly { margin } => margin,
        StrategySpec::GrantorOnly | StrategySpec::CachedBool => Dur::ZERO,
    };
    let m = if own.0 > 0 {
        own
    } else {
        Dur(s.lease.duration.0 / 100)
    };
    vec![
        StrategySpec::TwoSided {
            holder_margin: m,
            grantor_margin: Dur::ZERO,
        },
        StrategySpec::GrantorOnly,
        StrategySpec::HolderOnly { margin: m },
        StrategySpec::CachedBool,
        StrategySpec::WallClock { holder_margin: m },
        StrategySpec::OnReceiveStart { holder_margin: m },
    ]
}

/// Splits `a,b(c, d),e` at the commas outside parentheses.
fn split_top_level(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut in_string = false;
    let mut cur = String::new();
    for ch in text.chars() {
        match ch {
            '"' => in_string = !in_string,
            '(' | '[' if !in_string => depth += 1,
            ')' | ']' if !in_string => depth -= 1,
            ',' if depth == 0 && !in_string => {
                parts.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        parts.push(cur.trim().to_string());
    }
    parts
}

fn compare(args: CompareArgs) -> ExitCode {
    let mut base = match load_all(std::slice::from_ref(&args.scenario)) {
        Ok(mut l) => l.remove(0),
        Err(code) => return code,
    };
    if let Some(seed) = args.seed {
        base.scenario.seed = seed;
    }
    let specs = if args.strategies.trim() == "all" {
        all_strategies(&base.scenario)
    } else {
        let mut specs = Vec::new();
        for part in split_top_level(&args.strategies) {
            match load::strategy_from_text(&part) {
                Ok(s) => specs.push(s),
                Err(e) => return bad_input(e),
            }
        }
        specs
    };
    let mut runs = Vec::new();
    let mut failed = false;
    for spec in &specs {
        let mut l = Loaded {
            name: base.name.clone(),
            source: base.source.clone(),
            scenario: base.scenario.clone(),
        };
        match with_strategy(&mut l, spec) {
            Ok(()) => runs.push(l),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    if failed {
        return ExitCode::from(2);
    }
    let results: Vec<Summary> = runs
        .par_iter()
        .map(|l| {
            crate::run(&l.name, &l.scenario)
                .expect("validated at load")
                .summary
        })
        .collect();
    let rows: Vec<Vec<String>> = results.iter().map(text::compare_row).collect();
    let table = text::table(&text::COMPARE_HEADER, &rows);
    let mut md = format!(
        "# {}: strategies compared\n\n{}\n\nSeed {}, the same fault schedule for every row.\n\n```\n{table}```\n",
        base.name, base.scenario.description, base.scenario.seed
    );
    md.push_str(&format!(
        "\nRerun: `leasesim compare {} --seed {} --strategies '{}'`\n",
        base.source, base.scenario.seed, args.strategies
    ));
    let mut json = serde_json::to_vec_pretty(&results).expect("summaries serialize");
    json.push(b'\n');
    let dir = args.out.join(format!("{}-compare", base.name));
    if let Err(e) = report::write_dir_atomically(
        &dir,
        &[("compare.json", json), ("compare.md", md.into_bytes())],
    ) {
        eprintln!("error: cannot write the report {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        for s in &results {
            let _ = writeln!(out, "{}", serde_json::to_string(s).expect("serializes"));
        }
    } else {
        let _ = writeln!(
            out,
            "{} (seed {}): {}\n",
            base.name, base.scenario.seed, base.scenario.description
        );
        let _ = write!(out, "{table}");
        let _ = writeln!(out, "\nreport: {}", dir.display());
    }
    ExitCode::SUCCESS
}

fn check(args: &[String]) -> ExitCode {
    match load_all(args) {
        Ok(loaded) => {
            for l in loaded {
                println!("ok  {}", l.source);
            }
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

#[cfg(test)]
mod tests {
    use super::split_top_level;

    #[test]
    fn splits_strategies_at_top_level_commas() {
        assert_eq!(
            split_top_level(
                r#"CachedBool, TwoSided(holder_margin: "5ms", grantor_margin: "1ms"),GrantorOnly"#
            ),
            vec![
                "CachedBool".to_string(),
                r#"TwoSided(holder_margin: "5ms", grantor_margin: "1ms")"#.to_string(),
                "GrantorOnly".to_string()
            ]
        );
    }
}
