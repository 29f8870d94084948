//! The command line: parse, turn flags into validated inputs, run, map to an exit code.
//!
//! Standard output is written through `out!` and `outln!` ([`print_out`]), never `print!`: a
//! reader that closed the pipe (`leasesim list | head -3`) is the reader's choice, not an error,
//! so every command goes on to its end (its files written, its in-progress file removed) and
//! exits with the code it would have had, as Unix tools do.
//!
//! Exit codes: 0 success and every expectation held; 1 an expectation failed; 2 bad input or
//! usage. All input is loaded and checked before anything runs or is written, so bad input
//! leaves no file behind.
//!
//! [`Cli`] is the whole command line as a value: the `leasesim` binary is `Cli::new().main()`,
//! and a program with protocols of its own registers them first, to get every command for them
//! (`run`, `check`, `compare`, `sweep`, charts and traces):
//!
//! ```no_run
//! # use leasesim::strategy::{base::BaseProtocol, Rules, Settings};
//! /// The fields of `MyProtocol(quorum: 3)`.
//! #[derive(Clone, serde::Deserialize)]
//! struct MyProtocol {
//!     quorum: usize,
//! }
//!
//! impl Settings for MyProtocol {
//!     const NAME: &'static str = "MyProtocol";
//!     type Protocol = BaseProtocol;
//!     fn to_ron(&self) -> String {
//!         format!("MyProtocol(quorum: {})", self.quorum)
//!     }
//!     fn build(&self) -> BaseProtocol {
//! #       // A protocol of one's own would be built here; the base protocol stands in.
//!         BaseProtocol::new(Rules::default(), self.to_ron())
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     leasesim::cli::Cli::new().protocol::<MyProtocol>().main()
//! }
//! ```

/// `print!` for every command: a closed stdout (a reader such as `head` that stopped reading)
/// ends nothing and panics nothing, see [`print_out`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::print_out(format_args!($($arg)*))
    };
}

/// `println!` for every command, as [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::print_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod advise;
mod compare;
mod exhaustive;
mod explore;
mod run;
mod sweep;
mod tables;

use crate::report::{self, staging, text};
use crate::scenario::load::{self, LoadError};
use crate::scenario::{library, Scenario, StrategySpec};
use crate::strategy::{Registry, Settings};
use crate::sweep::Shard;
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
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
struct Parsed {
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
    /// Print a bundled scenario's RON source, to copy and edit (or write it with --out).
    Show {
        /// The bundled scenario's name (see `leasesim list`).
        name: String,
        /// Write the source to this file instead of printing it. An existing file is never
        /// replaced; the file appears whole or not at all.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run a grid of parameter values x seeds; write results.csv, runs.csv, a report, charts.
    Sweep(sweep::SweepArgs),
    /// Merge the partial-I-of-K.csv files of a sharded sweep into its full results.
    SweepMerge(sweep::MergeArgs),
    /// Search for a violation inside a fault envelope (swarm testing) and shrink the first
    /// one found into a scenario file that replays it.
    Explore(explore::ExploreArgs),
    /// Merge the partial-I-of-K.json files of a sharded exploration into its answer.
    ExploreMerge(explore::ExploreMergeArgs),
    /// Print the lease arithmetic tables (round trips, drift margin, usable lease).
    Tables(tables::TablesArgs),
    /// Recommend T, epsilon and the renew interval for an environment, and check them.
    Advise(advise::AdviseArgs),
}

#[derive(Args)]
pub(crate) struct RunArgs {
    /// Scenario files (.ron) or names of bundled scenarios.
    pub(crate) scenarios: Vec<String>,
    /// Run every bundled scenario.
    #[arg(long)]
    pub(crate) all: bool,
    /// Override the scenarios' seed.
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Override the strategy, in the RON syntax of the `strategy` field,
    /// e.g. 'TwoSided(holder_margin: "20ms")'.
    #[arg(long)]
    pub(crate) strategy: Option<String>,
    /// Directory for reports (one subdirectory per scenario).
    #[arg(long, default_value = "reports")]
    pub(crate) out: PathBuf,
    /// Print each summary as one JSON object per line instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also print events processed, events per second of wall time and the mean number of
    /// events in flight in the engine's queue.
    #[arg(long)]
    pub(crate) stats: bool,
    /// Also write trace.jsonl (every event) and trace.perfetto.json (for ui.perfetto.dev).
    #[arg(long)]
    pub(crate) trace: bool,
    /// Also write the client history as the oracle judged it: history.json (porcupine's
    /// operations), history.knossos.edn and history.elle.edn.
    #[arg(long)]
    pub(crate) history: bool,
    /// With --trace: the most the traces of one run may take, both files together, e.g.
    /// 500MB or 10GiB (units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB). A run whose traces reach
    /// it is stopped, and one whose estimate is already above it is refused before it starts:
    /// exit 2, nothing written.
    // The default is `limits::DEFAULT_TRACE_BYTES` (a test checks the two agree).
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "4GiB",
        value_parser = parse_size,
        requires = "trace"
    )]
    pub(crate) trace_limit: u64,
}

/// A size in bytes as written on the command line: a number (decimals allowed) and a unit,
/// `B` (or none), `kB`, `MB`, `GB`, `TB` (powers of 1000) or `KiB`, `MiB`, `GiB`, `TiB`
/// (powers of 1024), in any case. Rounded down to whole bytes.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = (&t[..split], t[split..].trim());
    let per: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?}; write a number and one of B, kB, MB, GB, TB, \
                 KiB, MiB, GiB, TiB (like 500MB or 4GiB)"
            ))
        }
    };
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    let bad = || format!("{text:?}: expected a size such as 500MB or 4GiB");
    if whole.is_empty() && frac.is_empty() || frac.contains('.') || frac.len() > 12 {
        return Err(bad());
    }
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let frac_value: u128 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| bad())?
    };
    let too_large = || format!("{text:?}: above the largest size, 2^64 - 1 bytes");
    let part = frac_value * u128::from(per) / 10u128.pow(frac.len() as u32);
    let bytes = whole
        .checked_mul(u128::from(per))
        .and_then(|b| b.checked_add(part))
        .ok_or_else(too_large)?;
    u64::try_from(bytes).map_err(|_| too_large())
}

#[derive(Args)]
pub(crate) struct CompareArgs {
    /// A scenario file or bundled name.
    pub(crate) scenario: String,
    /// `all`, or strategies in RON syntax separated by commas.
    #[arg(long, default_value = "all")]
    pub(crate) strategies: String,
    /// Override the scenario's seed.
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Directory for the comparison report (`<scenario>-compare/`).
    #[arg(long, default_value = "reports")]
    pub(crate) out: PathBuf,
    /// Print the rows as JSON objects, one per line.
    #[arg(long)]
    pub(crate) json: bool,
    /// The bins of `throughput.png`: reads and writes are counted per bin of this much true
    /// time, e.g. 10ms. Default: 1ms, or for a run of over 1000s the least of 2ms, 5ms, 10ms,
    /// 20ms, ... that keeps it to at most 1000000 bins (the most allowed).
    #[arg(long, value_name = "D")]
    pub(crate) bin: Option<String>,
}

/// A scenario ready to run, with where it came from.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) name: String,
    /// What to pass to `leasesim run` to get it again (a path or a bundled name).
    pub(crate) source: String,
    pub(crate) scenario: Scenario,
}

/// The command line, with the strategies it knows: the built-in ones, and the protocols
/// registered with [`Cli::protocol`]; and the name it goes by in the commands it prints (rerun
/// and replay lines, hints such as `leasesim sweep-merge DIR`), see [`Cli::name`].
#[derive(Clone, Debug, Default)]
pub struct Cli {
    registry: Registry,
    /// Set by [`Cli::name`]; otherwise taken from the program's path as run.
    name: Option<String>,
}

impl Cli {
    /// The command line with the built-in strategies.
    pub fn new() -> Cli {
        Cli::default()
    }

    /// Adds the protocol whose settings are `S`, which scenarios (`strategy: Name(field:
    /// value)`, with `Name` its [`Settings::NAME`]),
    /// `--strategy` and `compare --strategies` then name like a built-in strategy. See
    /// [`Registry::register`].
    ///
    /// # Panics
    ///
    /// If the name is not an identifier, is a built-in strategy's name, or is registered
    /// already.
    pub fn protocol<S: Settings>(mut self) -> Cli {
        self.registry.register::<S>();
        self
    }

    /// Uses `registry` (built-in strategies and registered protocols) instead.
    pub fn with_registry(mut self, registry: Registry) -> Cli {
        self.registry = registry;
        self
    }

    /// The strategies it knows.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Names the program in the commands it prints, such as a run report's rerun line
    /// (`NAME run FILE --seed 1`). Without it, the name is the file stem of the program's path
    /// as run (the first argument: `target/release/custom-protocol` gives `custom-protocol`),
    /// or `leasesim` when that is empty.
    pub fn name(mut self, name: impl Into<String>) -> Cli {
        self.name = Some(name.into());
        self
    }

    /// Runs the command line on the process's arguments; the exit code. Staging left by an
    /// interrupt is removed on SIGINT, SIGTERM and SIGHUP, and the exit code is then 128 + the
    /// signal, even when the signal came as the command finished.
    pub fn main(self) -> ExitCode {
        crate::report::staging::install_signal_handler();
        let code = self.run_args(std::env::args_os());
        // A signal that arrived while the last files were put in place, or just after: the
        // exit code says it (128 + the signal), whatever was written.
        crate::report::staging::exit_if_interrupted();
        code
    }

    /// Runs the command line on `args` (the program's name first, as in `std::env::args_os`),
    /// without installing the signal handler; the exit code.
    pub fn run_args<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let program = match self.name {
            Some(name) => name,
            None => program_name(args.first().map(Path::new)),
        };
        let parsed = match Parsed::try_parse_from(args) {
            Ok(parsed) => parsed,
            Err(e) => {
                let code = if e.use_stderr() { 2 } else { 0 };
                let _ = e.print();
                return ExitCode::from(code);
            }
        };
        dispatch(parsed.command, &self.registry, &program)
    }
}

/// The program's name in the commands it prints: the file stem of its path as run, or
/// `leasesim` without one.
fn program_name(path: Option<&Path>) -> String {
    path.and_then(Path::file_stem)
        .map(|stem| stem.to_string_lossy().into_owned())
        .filter(|stem| !stem.is_empty())
        .unwrap_or_else(|| "leasesim".to_string())
}

/// Runs the command line with the built-in strategies: `Cli::new().main()`.
pub fn main() -> ExitCode {
    Cli::new().main()
}

/// Runs `command`; `program` is the name the commands it prints go by.
fn dispatch(command: Command, registry: &Registry, program: &str) -> ExitCode {
    match command {
        Command::Run(args) => run::run(args, registry, program),
        Command::Compare(args) => compare::compare(args, registry, program),
        Command::Check { scenarios } => check(&scenarios, registry, program),
        Command::Sweep(args) => sweep::sweep(args, registry, program),
        Command::SweepMerge(args) => sweep::merge(args, registry, program),
        Command::Explore(args) => explore::explore(args, registry, program),
        Command::ExploreMerge(args) => explore::merge(args, registry, program),
        Command::Tables(args) => tables::tables(args, program),
        Command::Advise(args) => advise::advise(args, registry, program),
        Command::Show { name, out } => show(&name, out.as_deref(), program),
        Command::List => {
            let mut rows = Vec::new();
            for name in library::names() {
                let s = load::from_text_in(name, library::text(name).expect("listed"), registry);
                let d = s
                    .map(|s| s.description)
                    .unwrap_or_else(|e| format!("(invalid: {e})"));
                rows.push(vec![name.to_string(), d]);
            }
            out!("{}", text::table(&["scenario", "description"], &rows));
            ExitCode::SUCCESS
        }
    }
}

/// `leasesim show NAME [--out FILE]`: a bundled scenario's source, printed or written to a new
/// file (through a temporary file linked into place, so that it appears whole and an existing
/// file is never replaced). `program`: the name the command line goes by.
fn show(name: &str, out: Option<&Path>, program: &str) -> ExitCode {
    let Some(text) = library::text(name) else {
        return bad_input(unknown_name(name, program));
    };
    let Some(path) = out else {
        out!("{text}");
        return ExitCode::SUCCESS;
    };
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        let what = if meta.file_type().is_symlink() && !path.exists() {
            " (a symbolic link to nothing)"
        } else {
            ""
        };
        return bad_input(format_args!(
            "{} exists{what}; {program} show never replaces a file (remove it, or choose \
             another name)",
            path.display()
        ));
    }
    let written = staging::write_file(path, text.as_bytes(), staging::Existing::Keep);
    match written {
        Ok(()) => {
            eprintln!("wrote {} ({name})", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => bad_input(format_args!("cannot write {}: {e}", path.display())),
    }
}

/// The error for a name that is neither a file nor a bundled scenario.
fn unknown_name(name: &str, program: &str) -> LoadError {
    LoadError::UnknownName {
        name: name.to_string(),
        known: library::names().iter().map(|s| s.to_string()).collect(),
        program: program.to_string(),
    }
}

/// Loads one argument: a file if it names one (or ends in `.ron`), else a bundled scenario.
fn load_one(arg: &str, registry: &Registry, program: &str) -> Result<Loaded, LoadError> {
    let path = Path::new(arg);
    if path.exists() || arg.ends_with(".ron") {
        let (name, scenario) = load::named_from_file_in(path, registry)?;
        return Ok(Loaded {
            name,
            source: arg.to_string(),
            scenario,
        });
    }
    match library::text(arg) {
        Some(t) => Ok(Loaded {
            name: arg.to_string(),
            source: arg.to_string(),
            scenario: load::from_text_in(&format!("{arg} (bundled)"), t, registry)?,
        }),
        None => Err(unknown_name(arg, program)),
    }
}

/// Loads every argument, or reports every error and gives exit code 2 (`program`: the name
/// the command line goes by, for the hint that its `list` shows the bundled scenarios).
pub(crate) fn load_all(
    args: &[String],
    registry: &Registry,
    program: &str,
) -> Result<Vec<Loaded>, ExitCode> {
    let (ok, errors): (Vec<_>, Vec<_>) = args
        .iter()
        .map(|a| load_one(a, registry, program))
        .partition(Result::is_ok);
    if errors.is_empty() {
        return Ok(ok.into_iter().map(Result::unwrap).collect());
    }
    for e in errors {
        eprintln!("error: {}", e.unwrap_err());
    }
    Err(ExitCode::from(2))
}

/// Splits `a,b(c, d),e` at the commas outside parentheses, brackets, braces and strings.
pub(crate) fn split_top_level(text: &str) -> Vec<String> {
    split_top_level_at(text)
        .into_iter()
        .map(|(_, p)| p)
        .collect()
}

/// [`split_top_level`], each part with the byte offset in `text` at which it starts.
pub(crate) fn split_top_level_at(text: &str) -> Vec<(usize, String)> {
    crate::sweep::ron_value::split_top_level_at(text, ',')
}

/// `--shard I/K` (or `auto/K`, from the batch system's environment), if given; a bad one goes
/// to `problems`.
pub(crate) fn parse_shard(text: Option<&str>, problems: &mut Vec<String>) -> Option<Shard> {
    match Shard::parse_with_env(text?, |v| std::env::var(v).ok()) {
        Ok(s) => Some(s),
        Err(e) => {
            problems.push(e);
            None
        }
    }
}

/// Every problem with the input of a `what` (a sweep, an exploration), one a line; exit 2.
pub(crate) fn report_problems(what: &str, problems: &[String]) -> ExitCode {
    let n = problems.len();
    eprintln!(
        "error: {n} problem{} with the {what} (nothing was run or written):",
        if n == 1 { "" } else { "s" }
    );
    for p in problems {
        eprintln!("  - {p}");
    }
    ExitCode::from(2)
}

/// `count` per second of `secs` for a line of output, to three significant digits below 100
/// (`0.483`, `4.83`, `48.3`) and whole above: a slow rate is never written `0`.
pub(crate) fn per_second(count: f64, secs: f64) -> String {
    let rate = count / secs.max(1e-9);
    match rate {
        r if r >= 100.0 => format!("{r:.0}"),
        r if r >= 10.0 => format!("{r:.1}"),
        r if r >= 1.0 => format!("{r:.2}"),
        r => format!("{r:.3}"),
    }
}

/// Writes `args` to stdout. A write that fails (a closed pipe: the reader stopped reading; a full
/// disk under a redirection) is dropped, never a panic: what the command writes to files and its
/// exit code do not depend on who reads its stdout.
pub(crate) fn print_out(args: std::fmt::Arguments) {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_fmt(args);
}

/// Why `--out DIR` cannot hold reports, if it cannot: it, or the nearest of its ancestors that
/// exists, is not a directory (a regular file, or a symbolic link to one or to nothing). Said
/// before anything runs, instead of the system's "File exists" once a report is due.
pub(crate) fn out_dir_problem(out: &Path) -> Option<String> {
    let mut at = out;
    loop {
        if let Ok(meta) = std::fs::symlink_metadata(at) {
            let what = match std::fs::metadata(at) {
                Ok(m) if m.is_dir() => return None,
                Ok(_) if meta.file_type().is_symlink() => "a symbolic link to a file",
                Ok(_) => "a file",
                Err(_) if meta.file_type().is_symlink() => {
                    "a symbolic link to nothing (its target does not exist)"
                }
                Err(_) => "not readable",
            };
            let whose = if at == out {
                String::new()
            } else {
                format!(": {} is {what}", at.display())
            };
            let what = if at == out { what } else { "inside a file" };
            return Some(format!(
                "--out {}: is {what}{whose}; give a directory (it is created when missing), or \
                 remove what is there",
                out.display()
            ));
        }
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => return None,
        }
    }
}

/// Claims the report directories `claims` (each with its [`report::Owner`]) before anything
/// runs: a place holding what is not the owner's earlier report is refused, every one said
/// (exit 2); with `say`, the earlier reports that will be replaced are noted on stderr.
pub(crate) fn claim_reports(
    claims: &[(PathBuf, report::Owner)],
    say: bool,
) -> Result<(), ExitCode> {
    let mut problems = Vec::new();
    let mut replaced = Vec::new();
    for (dir, owner) in claims {
        match report::claim(dir, owner) {
            Ok(report::Claim::Replaces(theirs)) => replaced.push((dir, theirs)),
            Ok(report::Claim::New) => {}
            Err(why) => problems.push(why),
        }
    }
    if !problems.is_empty() {
        for p in problems {
            eprintln!("error: {p}");
        }
        return Err(ExitCode::from(2));
    }
    match replaced.as_slice() {
        _ if !say => {}
        [] => {}
        [(dir, theirs)] => eprintln!(
            "note: {} holds {}, written earlier; this {} report replaces it",
            dir.display(),
            theirs.words(),
            claims[0].1.command
        ),
        [(dir, _), ..] => eprintln!(
            "note: {} earlier reports (under {}) are replaced by these",
            replaced.len(),
            dir.parent().unwrap_or(Path::new(".")).display()
        ),
    }
    Ok(())
}

/// [`out_dir_problem`] as an exit: 2 with the message, or `Ok`.
pub(crate) fn check_out_dir(out: &Path) -> Result<(), ExitCode> {
    match out_dir_problem(out) {
        Some(why) => Err(bad_input(why)),
        None => Ok(()),
    }
}

pub(crate) fn bad_input(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

/// Applies a strategy override and re-validates (a margin can be too large for a scenario's T).
pub(crate) fn with_strategy(
    l: &mut Loaded,
    spec: &StrategySpec,
    registry: &Registry,
) -> Result<(), LoadError> {
    l.scenario.strategy = spec.clone();
    let problems = crate::scenario::validate::validate_in(&l.scenario, registry);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(LoadError::Invalid {
            source: format!("{} with --strategy {}", l.source, spec.to_ron()),
            problems,
        })
    }
}

/// Prints the warnings of each scenario ([`crate::scenario::validate::warnings_in`]) on stderr.
/// A scenario that means them ([`crate::scenario::Expect::means_warnings`]: its `expect` counts
/// them, or asks for an overlap) gets each as a note marked expected, not an alarm; one whose
/// `expect.warnings` no longer matches is told so.
pub(crate) fn warn(loaded: &[Loaded], registry: &Registry) {
    for l in loaded {
        let warnings = crate::scenario::validate::warnings_in(&l.scenario, registry);
        let expect = l.scenario.expect.as_ref();
        let meant = expect.and_then(|e| e.means_warnings(warnings.len()));
        for w in &warnings {
            match &meant {
                Some(why) => eprintln!("note: {}: expected ({why}): {w}", l.source),
                None => eprintln!("warning: {}: {w}", l.source),
            }
        }
        if let Some(n) = expect.and_then(|e| e.warnings) {
            if n != warnings.len() as u64 {
                eprintln!(
                    "warning: {}: expect.warnings says {n}, but it has {}",
                    l.source,
                    warnings.len()
                );
            }
        }
    }
}

fn check(args: &[String], registry: &Registry, program: &str) -> ExitCode {
    match load_all(args, registry, program) {
        Ok(loaded) => {
            warn(&loaded, registry);
            for l in loaded {
                outln!("ok  {}", l.source);
            }
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_size, per_second};

    #[test]
    fn a_slow_rate_is_never_written_zero() {
        // 9 runs in 38 s: 0.2368 runs/s (written "0" at no decimals); 113 runs in 234 s: 0.4829.
        assert_eq!(per_second(9.0, 38.0), "0.237");
        assert_eq!(per_second(113.0, 234.0), "0.483");
        // 3 significant digits up to 100, whole from there: 4.83, 48.3, 483.
        assert_eq!(per_second(483.0, 100.0), "4.83");
        assert_eq!(per_second(483.0, 10.0), "48.3");
        assert_eq!(per_second(81.0, 0.01), "8100");
        assert_eq!(per_second(0.0, 1.0), "0.000");
    }

    #[test]
    fn sizes_read_in_decimal_and_binary_units() {
        // The default of --trace-limit, as its help writes it.
        assert_eq!(
            parse_size("4GiB"),
            Ok(crate::scenario::limits::DEFAULT_TRACE_BYTES)
        );
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("500MB"), Ok(500_000_000));
        assert_eq!(parse_size("500mb"), Ok(500_000_000));
        assert_eq!(parse_size("123"), Ok(123));
        assert_eq!(parse_size("123 B"), Ok(123));
        // 1.5 x 1024 = 1536; 0.001 kB = 1 byte; 0.0001 kB = 0.1 byte, rounded down to 0.
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("0.001kB"), Ok(1));
        assert_eq!(parse_size("0.0001kB"), Ok(0));
        assert_eq!(parse_size(".5kB"), Ok(500));
        // 16 EiB is 2^64: one past the largest u64.
        assert!(parse_size("16777216TiB").unwrap_err().contains("largest"));
        assert_eq!(parse_size("16777215TiB"), Ok(16_777_215 << 40));
        for bad in ["", "GiB", "4 GB!", "4G", "1.2.3MB", "-1MB", "."] {
            assert!(parse_size(bad).is_err(), "{bad:?} accepted");
        }
    }
}
