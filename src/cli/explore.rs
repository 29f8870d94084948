//! `leasesim explore` and `leasesim explore-merge`: run an exploration (guided, or swarm's, or
//! one shard of swarm's) on every core, shrink the first violation, and write `<out>/<name>/`
//! whole: the counterexample and its report, or the nearest miss and the slack histogram, with
//! `explore.json` (with the evidence: handovers and slack) and `runs.csv`. A shard writes only `<out>/<name>-explore/partial-I-of-K.json`;
//! the merge gives the same files, byte for byte, as one machine.

use super::{bad_input, load_all, Loaded};
use crate::explore::output::{
    counterexample_text, faults_words, found_words, kinds_words, nearest_miss_text, nemesis_ron,
    runs_csv, Captured, ExhaustiveOut, ExploreJson, MissOut, Partial, PowerOut, SizeOut,
    ViolationOut,
};
use crate::explore::resume::{self, InProgress};
use crate::explore::{self, shrink, Answer, Exploration, RunRecord};
use crate::outcome::Summary;
use crate::report::chart::timeline::timeline_chart;
use crate::report::staging::{self, Existing};
use crate::report::{self, markdown};
use crate::scenario::nemesis::{self, Nemesis};
use crate::scenario::{load, Scenario};
use crate::strategy::Registry;
use crate::sweep::Shard;
use crate::trace::client_log::ClientLog;
use crate::trace::timeline::{Recorder, Timeline};
use crate::trace::Tee;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct ExploreArgs {
    /// A scenario file (.ron) or the name of a bundled scenario.
    pub(crate) scenario: String,
    /// How many runs, at most 1000000; run i has seed (the scenario's seed + i), and the last
    /// may not pass 18446744073709551615 (seeds never wrap around to 0).
    /// With --exhaustive: the most schedules to run (default 1000000); past it the search
    /// stops and proves nothing.
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..),
        required_unless_present = "exhaustive"
    )]
    pub(crate) runs: Option<u64>,
    /// A named envelope instead of the scenario's `nemesis` block: pauses, clocks, network,
    /// crashes, threads (stalls of the renewal loop) or all (all but threads), scaled to the
    /// scenario's lease term; see docs/src/explore.md.
    #[arg(long, value_name = "PROFILE")]
    pub(crate) nemesis: Option<String>,
    /// Every run enables every kind of the envelope at its full rate (no swarm testing).
    #[arg(long)]
    pub(crate) no_swarm: bool,
    /// How runs are chosen: `guided` breeds each generation of runs from the least slack found
    /// so far (after 64 swarm runs); `swarm` draws run i on its own. See docs/src/explore.md.
    #[arg(long, value_enum, default_value_t = Search::Guided)]
    pub(crate) search: Search,
    /// Worker threads (default: one per core). The results do not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) jobs: Option<u16>,
    /// Run only shard I of K (the runs whose index % K == I) and write
    /// `<out>/<name>-explore/partial-I-of-K.json`; merge the K partials with
    /// `leasesim explore-merge`. `auto/K` takes I from JOB_COMPLETION_INDEX or
    /// SLURM_ARRAY_TASK_ID.
    #[arg(long, value_name = "I/K")]
    pub(crate) shard: Option<String>,
    /// Directory for the report (`<name>/`).
    #[arg(long, default_value = "reports")]
    pub(crate) out: PathBuf,
    /// Continue an interrupted exploration (the same command) from the runs it had done; the
    /// files are the bytes an uninterrupted one writes.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Also look for liveness violations: the envelope's faults stop twice this before the
    /// run's end, and a run in which no holder serves again within this long after its last
    /// fault ended is a violation, shrunk like a safety one (e.g. 5s).
    #[arg(long, value_name = "D", value_parser = parse_liveness)]
    pub(crate) liveness: Option<crate::time::Dur>,
    /// Stop as if interrupted once this many runs are kept (for tests of --resume).
    #[arg(long, value_name = "N", hide = true)]
    pub(crate) stop_after: Option<u64>,
    /// Bounded exhaustive search instead of a sampled one: every schedule of up to --faults
    /// faults of the envelope's kinds (each at its largest size), each placed at --offsets
    /// from every --moments moment of the run; either a violation, or a statement of what was
    /// proved. See docs/src/explore.md.
    #[arg(long, conflicts_with_all = ["search", "no_swarm", "shard", "resume", "liveness"])]
    pub(crate) exhaustive: bool,
    /// With --exhaustive: the most faults a schedule has (1 to 3).
    #[arg(long, value_name = "K", default_value_t = 2, requires = "exhaustive",
          value_parser = clap::value_parser!(u8).range(1..=explore::exhaustive::MAX_FAULTS as i64))]
    pub(crate) faults: u8,
    /// With --exhaustive: the offsets from each moment, in fractions of the lease term,
    /// comma-separated (default -1/2,-1/4,-1/8,0,1/8,1/4,1/2).
    #[arg(long, value_name = "LIST", requires = "exhaustive", value_parser = parse_offsets,
          allow_hyphen_values = true)]
    pub(crate) offsets: Option<Offsets>,
    /// With --exhaustive: the sizes of each kind's faults, in fractions of its largest,
    /// comma-separated (default 1: the envelope's `max` of each kind).
    #[arg(long, value_name = "LIST", requires = "exhaustive", value_parser = parse_sizes)]
    pub(crate) sizes: Option<Offsets>,
    /// With --exhaustive: the moments placed at, comma-separated, of grant, renewal, acquire,
    /// expiry, commit, write (default grant,renewal,acquire,expiry).
    #[arg(long, value_name = "LIST", requires = "exhaustive", value_parser = parse_moments)]
    pub(crate) moments: Option<Moments>,
    #[command(flatten)]
    pub(crate) shrink: ShrinkArgs,
}

/// `--offsets`: a list of fractions of the lease term.
#[derive(Clone, Debug)]
pub(crate) struct Offsets(pub(crate) Vec<explore::exhaustive::Offset>);

/// `--moments`: a list of moment kinds.
#[derive(Clone, Debug)]
pub(crate) struct Moments(pub(crate) Vec<crate::scenario::Moment>);

fn parse_offsets(text: &str) -> Result<Offsets, String> {
    let mut v = text
        .split(',')
        .map(explore::exhaustive::Offset::parse)
        .collect::<Result<Vec<_>, _>>()?;
    v.dedup();
    Ok(Offsets(v))
}

fn parse_sizes(text: &str) -> Result<Offsets, String> {
    let o = parse_offsets(text)?;
    match o.0.iter().find(|s| s.num <= 0 || s.num > s.den) {
        Some(s) => Err(format!(
            "{s}: a size is a fraction of the largest, above 0 and at most 1"
        )),
        None => Ok(o),
    }
}

fn parse_moments(text: &str) -> Result<Moments, String> {
    use crate::scenario::moment::MOMENTS;
    let mut v = Vec::new();
    for word in text.split(',') {
        let w = word.trim();
        let m = MOMENTS
            .iter()
            .find(|m| format!("{m:?}").eq_ignore_ascii_case(w))
            .ok_or_else(|| {
                format!("{w:?}: not a moment; the moments are grant, renewal, acquire, expiry, commit, write")
            })?;
        if !v.contains(m) {
            v.push(*m);
        }
    }
    Ok(Moments(v))
}

/// `--search`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Search {
    Guided,
    Swarm,
}

#[derive(Args)]
pub(crate) struct ExploreMergeArgs {
    /// The directory holding every `partial-I-of-K.json` of one exploration.
    pub(crate) dir: PathBuf,
    /// Directory for the merged report (`<name>/`).
    #[arg(long, default_value = "reports")]
    pub(crate) out: PathBuf,
    #[command(flatten)]
    pub(crate) shrink: ShrinkArgs,
}

/// The shrink's budget: when it is spent, the smallest counterexample found so far is written.
#[derive(Args)]
pub(crate) struct ShrinkArgs {
    /// The most runs the shrink of a violation may take (at most 10000). The same runs give the
    /// same counterexample, byte for byte.
    #[arg(
        long,
        value_name = "N",
        default_value_t = shrink::DEFAULT_BUDGET_RUNS,
        value_parser = clap::value_parser!(u64).range(0..=shrink::MAX_RUNS)
    )]
    pub(crate) shrink_runs: u64,
    /// The most simulated events the shrink's runs may take in all (at least 1, at most
    /// 10^12): a heavy scenario's runs cost more. Deterministic, as runs are.
    #[arg(
        long,
        value_name = "N",
        default_value_t = shrink::DEFAULT_BUDGET_EVENTS,
        value_parser = clap::value_parser!(u64).range(1..=1_000_000_000_000)
    )]
    pub(crate) shrink_events: u64,
    /// The most wall time the shrink may take, e.g. 30s or 5m (default: no limit). Not
    /// deterministic: how far the shrink gets depends on the machine.
    #[arg(long, value_name = "D", value_parser = parse_shrink_time)]
    pub(crate) shrink_time: Option<std::time::Duration>,
}

/// Why `--liveness` leaves no room in the run, if it does not: the envelope's faults stop twice
/// the bound before the run's end.
fn liveness_problem(liveness: Option<crate::time::Dur>, s: &Scenario) -> Option<String> {
    let d = liveness?;
    (2 * d.ns() >= s.duration.ns()).then(|| {
        format!(
            "--liveness {d}: the envelope's faults stop twice the bound before the run's end, \
             and the run lasts {}: give a bound under half of it, or a longer run",
            s.duration
        )
    })
}

/// `--liveness`: a positive duration, written as in a scenario file.
fn parse_liveness(text: &str) -> Result<crate::time::Dur, String> {
    let d = crate::scenario::duration::parse_duration(text)?;
    if d.ns() <= 0 {
        return Err(format!("must be positive (got {d})"));
    }
    Ok(d)
}

/// `--shrink-time`: a positive duration, written as in a scenario file.
fn parse_shrink_time(text: &str) -> Result<std::time::Duration, String> {
    let d = crate::scenario::duration::parse_duration(text)?;
    if d.ns() <= 0 {
        return Err(format!("must be positive (got {d})"));
    }
    Ok(std::time::Duration::from_nanos(d.ns() as u64))
}

/// The runs/s and counts printed at the end.
pub(super) struct Timing {
    pub(super) secs: f64,
    pub(super) runs: u64,
    pub(super) events: u64,
}

/// `program`: the name the command line goes by, in the commands it prints and writes.
pub(crate) fn explore(args: ExploreArgs, registry: &Registry, program: &str) -> ExitCode {
    if let Err(code) = super::check_out_dir(&args.out) {
        return code;
    }
    let mut loaded = match load_all(std::slice::from_ref(&args.scenario), registry, program) {
        Ok(mut l) => l.remove(0),
        Err(code) => return code,
    };
    let mut problems = Vec::new();
    let shard = super::parse_shard(args.shard.as_deref(), &mut problems);
    let runs = args.runs.unwrap_or(MAX_RUNS);
    problems.extend(flag_problems(&args, shard, runs, &loaded.scenario));
    match envelope(&loaded, args.nemesis.as_deref()) {
        Ok(n) => loaded.scenario.nemesis = Some(n),
        Err(e) => problems.push(e),
    }
    if problems.is_empty() {
        problems = crate::scenario::validate::validate_with(
            &loaded.scenario,
            &*registry
                .build(&loaded.scenario.strategy)
                .expect("validated at load"),
        );
    }
    if !problems.is_empty() {
        return super::report_problems("exploration", &problems);
    }
    super::warn(std::slice::from_ref(&loaded), registry);
    let command = command_line(program, &loaded.source, &args);
    let nemesis = loaded.scenario.nemesis.clone().expect("resolved above");
    let e = Exploration {
        base: &loaded.scenario,
        nemesis: &nemesis,
        swarm: !args.no_swarm,
        guided: args.search == Search::Guided,
        runs,
        liveness: args.liveness,
    };
    if args.exhaustive {
        return super::exhaustive::exhaustive(&args, &loaded, &e, (&command, program), registry);
    }

    if shard.is_none() {
        let dir = report::run_dir(&args.out, &loaded.name);
        let owner = report::Owner::new("explore", &loaded.name);
        if let Err(code) = super::claim_reports(&[(dir, owner)], true) {
            return code;
        }
    }
    let runner = runner(&loaded.name, registry);
    let here = shard.unwrap_or(Shard::ALL);
    let todo = here.run_count(runs);
    let threads = args
        .jobs
        .map_or_else(rayon::current_num_threads, usize::from);
    say_start(&loaded.name, &e, (shard, todo), threads);
    let mut file = match in_progress(&args, &loaded.name, &command, &e, shard) {
        Ok(f) => f,
        Err(err) => return bad_input(err),
    };
    let path = file.path().to_path_buf();
    let resumed = std::mem::take(&mut file.resumed);
    let bar = progress_bar(todo);
    #[allow(clippy::disallowed_types)] // wall time for the runs/s line only, never simulated time
    let started = std::time::Instant::now();
    let mut kept = resumed.len() as u64;
    let mut keep = |records: &[RunRecord]| {
        file.append(records)?;
        kept += records.len() as u64;
        match args.stop_after {
            Some(n) if kept >= n => Err(format!("{STOPPED} after {kept} runs")),
            _ => Ok(()),
        }
    };
    let jobs = args.jobs.map(usize::from);
    let ran = e.resume(here, jobs, &|n| bar.inc(n), &runner, &resumed, &mut keep);
    bar.finish_and_clear();
    let ran = match ran {
        Ok(r) => r,
        Err(err) => return stopped(&err, &path),
    };
    let timing = Timing {
        secs: started.elapsed().as_secs_f64(),
        runs: ran.records.len() as u64,
        events: ran.records.iter().map(|r| r.events).sum(),
    };
    let code = match shard {
        Some(s) => write_partial(
            &args.out,
            &loaded,
            (&command, program),
            &e,
            s,
            ran.records,
            &timing,
        ),
        None => finish(
            &args.out,
            &loaded.name,
            (&command, program),
            &e,
            &ran,
            Some(&timing),
            &args.shrink,
            registry,
            None,
        ),
    };
    // Every run is done and the files are written (or said why not): nothing to resume.
    file.remove();
    code
}

/// What is wrong with the flags `args` (with `shard` parsed, `runs` the runs or the cap of
/// schedules) for exploring `s`.
fn flag_problems(args: &ExploreArgs, shard: Option<Shard>, runs: u64, s: &Scenario) -> Vec<String> {
    let mut problems = Vec::new();
    if shard.is_some() && args.search == Search::Guided {
        problems.push(
            "--shard: guided search breeds each generation from every earlier run, so it runs \
             on one machine; shard with --search swarm"
                .to_string(),
        );
    }
    if !args.exhaustive {
        problems.extend(runs_problem(s.seed, runs));
    } else if runs > MAX_RUNS {
        problems.push(format!(
            "--runs {runs}: above the limit of {MAX_RUNS} schedules an exhaustive search may run"
        ));
    }
    problems.extend(liveness_problem(args.liveness, s));
    problems
}

/// The most runs an exploration may have: each run's record is kept in memory, in the
/// in-progress file and in `runs.csv` (about 100 bytes each).
pub(crate) const MAX_RUNS: u64 = 1_000_000;

/// Why `runs` runs from seed `first` cannot be explored: more than [`MAX_RUNS`], or seeds past
/// the largest (run i has seed `first + i`, which never wraps around to 0).
fn runs_problem(first: u64, runs: u64) -> Option<String> {
    if runs > MAX_RUNS {
        return Some(format!(
            "--runs {runs}: above the limit of {MAX_RUNS} runs an exploration may have; \
             explore more in several explorations of other seeds (the scenario's `seed`)"
        ));
    }
    if first.checked_add(runs.saturating_sub(1)).is_none() {
        return Some(format!(
            "--runs {runs}: the scenario's seed is {first}, so the last run's seed would pass \
             {}, the largest (seeds never wrap around to 0); give at most --runs {}, or a \
             smaller `seed` in the scenario",
            u64::MAX,
            u64::MAX - first + 1
        ));
    }
    None
}

/// Says what the exploration `e` of `name` runs (of them `todo` in `shard`, if one) and on how
/// many threads.
fn say_start(name: &str, e: &Exploration, (shard, todo): (Option<Shard>, u64), threads: usize) {
    eprintln!(
        "explore {name}: {} runs{}, {}, nemesis: {}, {threads} thread{}",
        e.runs,
        shard.map_or(String::new(), |s| format!(
            " (shard {}/{}: {todo} of them)",
            s.index, s.of
        )),
        match (e.guided, e.swarm) {
            (true, true) if e.liveness.is_some() =>
                "guided (swarm runs, then generations bred from the latest recovery)",
            (true, false) if e.liveness.is_some() =>
                "guided (runs of every kind, then generations bred from the latest recovery)",
            (true, true) => "guided (swarm runs, then generations bred from the least slack)",
            (true, false) =>
                "guided (runs of every kind, then generations bred from the least slack)",
            (false, true) => "swarm (each run a random subset of the kinds)",
            (false, false) => "every kind in every run",
        },
        kinds_of(e.nemesis).join(", "),
        if threads == 1 { "" } else { "s" },
    );
}

/// The in-progress file of the exploration `e` of `name` (`shard`, or all of it): its runs
/// kept with `--resume`, or a fresh one; says which.
fn in_progress(
    args: &ExploreArgs,
    name: &str,
    command: &str,
    e: &Exploration,
    shard: Option<Shard>,
) -> Result<InProgress, String> {
    let here = shard.unwrap_or(Shard::ALL);
    let manifest = serde_json::json!({
        "command": command,
        "scenario": e.base.to_ron(),
        "swarm": e.swarm,
        "guided": e.guided,
        "runs": e.runs,
        "shard": [here.index, here.of],
    })
    .to_string();
    let path = resume::in_progress_path(&args.out, name, shard);
    let run_of = |k: u64| here.index + k * here.of;
    let file = InProgress::open(&path, &manifest, args.resume, &run_of)?;
    if args.resume && file.resumed.is_empty() {
        eprintln!(
            "nothing to resume in {} (no run of an interrupted `{command}` there): running \
             the whole exploration",
            path.display()
        );
    } else if args.resume {
        eprintln!(
            "resuming from {}: {} runs kept",
            path.display(),
            file.resumed.len()
        );
    } else if file.discarded {
        eprintln!(
            "{}: an interrupted exploration's runs, started over (--resume continues it instead)",
            path.display()
        );
    }
    Ok(file)
}

/// An exploration that stopped before its end: as asked (`--stop-after`, exit 130, as an
/// interruption), or on an error (exit 2).
fn stopped(err: &str, path: &Path) -> ExitCode {
    if err.starts_with(STOPPED) {
        eprintln!(
            "{err}; the same command with --resume continues from {}",
            path.display()
        );
        return ExitCode::from(130);
    }
    eprintln!("error: {err}");
    ExitCode::from(2)
}

/// How a run stopped by `--stop-after` says so.
const STOPPED: &str = "stopped as asked";

/// `program`: the name the command line goes by, in the commands it prints and writes.
pub(crate) fn merge(args: ExploreMergeArgs, registry: &Registry, program: &str) -> ExitCode {
    if let Err(code) = super::check_out_dir(&args.out) {
        return code;
    }
    let entries = match std::fs::read_dir(&args.dir) {
        Ok(e) => e,
        Err(e) => return bad_input(format!("{}: cannot read: {e}", args.dir.display())),
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("partial-") && n.ends_with(".json"))
        })
        .collect();
    names.sort();
    if names.is_empty() {
        return bad_input(format!(
            "{}: no partial-I-of-K.json files (write them with {program} explore ... --shard I/K)",
            args.dir.display()
        ));
    }
    let mut partials = Vec::new();
    let mut problems = Vec::new();
    for p in &names {
        match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Partial>(&t).map_err(|e| e.to_string()))
        {
            Ok(part) => partials.push(part),
            Err(e) => problems.push(format!("{}: cannot read: {e}", p.display())),
        }
    }
    if !problems.is_empty() {
        return super::report_problems("exploration", &problems);
    }
    let first = &partials[0];
    let of = first.shard.1;
    for (p, part) in names.iter().zip(&partials) {
        let same = part.name == first.name
            && part.command == first.command
            && part.scenario == first.scenario
            && part.swarm == first.swarm
            && part.runs == first.runs
            && part.shard.1 == of;
        if !same {
            problems.push(format!(
                "{}: not a shard of the same exploration as {}",
                p.display(),
                names[0].display()
            ));
        }
    }
    if let Some(seed) = load::from_text_in(&first.name, &first.scenario, registry)
        .ok()
        .map(|s| s.seed)
    {
        problems
            .extend(runs_problem(seed, first.runs).map(|p| format!("{}: {p}", names[0].display())));
    }
    // The name becomes the report directory's: a partial's must be one a scenario can have.
    if let Some(why) = crate::scenario::names::problem(&first.name)
        .or_else(|| crate::scenario::names::reserved(&first.name))
    {
        problems.push(format!("{}: name: {why}", names[0].display()));
    }
    let mut seen: Vec<u64> = partials.iter().map(|p| p.shard.0).collect();
    seen.sort_unstable();
    seen.dedup();
    if problems.is_empty() && seen.len() as u64 != of {
        problems.push(format!(
            "{} of {of} shards found (shards {seen:?}): every shard's partial is needed",
            seen.len()
        ));
    }
    if !problems.is_empty() {
        return super::report_problems("exploration", &problems);
    }
    let scenario = match load::from_text_in(&first.name, &first.scenario, registry) {
        Ok(s) => s,
        Err(e) => return bad_input(e),
    };
    let nemesis = scenario.nemesis.clone().unwrap_or_default();
    let e = Exploration {
        base: &scenario,
        nemesis: &nemesis,
        swarm: first.swarm,
        guided: false,
        runs: first.runs,
        liveness: first.liveness,
    };
    let records: Vec<RunRecord> = partials.iter().flat_map(|p| p.records.clone()).collect();
    let records = match explore::complete(records, first.runs) {
        Ok(r) => r,
        Err(e) => return super::report_problems("exploration", &[e]),
    };
    let owner = report::Owner::new("explore", &first.name);
    let claim = [(report::run_dir(&args.out, &first.name), owner)];
    if let Err(code) = super::claim_reports(&claim, true) {
        return code;
    }
    eprintln!("merged {} partials of {}", partials.len(), first.name);
    let ran = explore::Ran {
        records,
        kept: Default::default(),
        quiet_runs: 0,
    };
    finish(
        &args.out,
        &first.name,
        (&first.command, program),
        &e,
        &ran,
        None,
        &args.shrink,
        registry,
        None,
    )
}

/// The envelope: the named profile, or the scenario's own `nemesis` block.
fn envelope(l: &Loaded, profile: Option<&str>) -> Result<Nemesis, String> {
    match profile {
        Some(name) => nemesis::profile(name, &l.scenario).ok_or_else(|| {
            format!(
                "--nemesis {name:?}: no such profile; the profiles are {}",
                nemesis::PROFILES.join(", ")
            )
        }),
        None => l.scenario.nemesis.clone().ok_or_else(|| {
            format!(
                "{}: no `nemesis` block to explore within; add one (see docs/src/scenarios.md) or name a \
                 profile with --nemesis ({})",
                l.source,
                nemesis::PROFILES.join(", ")
            )
        }),
    }
}

/// The fault kinds an envelope allows, by field name.
fn kinds_of(n: &Nemesis) -> Vec<&'static str> {
    let k: Vec<&'static str> = nemesis::KINDS
        .iter()
        .zip(n.present())
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
    if k.is_empty() {
        vec!["nothing"]
    } else {
        k
    }
}

/// The command that runs this exploration on one machine, as `program` runs it.
fn command_line(program: &str, source: &str, args: &ExploreArgs) -> String {
    use crate::shell::word;
    let mut c = format!("{} explore {}", word(program), word(source));
    if let Some(runs) = args.runs {
        c.push_str(&format!(" --runs {runs}"));
    }
    if args.exhaustive {
        c.push_str(&format!(" --exhaustive --faults {}", args.faults));
        if let Some(o) = &args.offsets {
            let list: Vec<String> = o.0.iter().map(|o| o.to_string()).collect();
            c.push_str(&format!(" --offsets {}", word(&list.join(","))));
        }
        if let Some(z) = &args.sizes {
            let list: Vec<String> = z.0.iter().map(|o| o.to_string()).collect();
            c.push_str(&format!(" --sizes {}", word(&list.join(","))));
        }
        if let Some(m) = &args.moments {
            let list: Vec<String> =
                m.0.iter()
                    .map(|m| format!("{m:?}").to_lowercase())
                    .collect();
            c.push_str(&format!(" --moments {}", list.join(",")));
        }
    }
    if let Some(p) = &args.nemesis {
        c.push_str(&format!(" --nemesis {}", word(p)));
    }
    if args.no_swarm {
        c.push_str(" --no-swarm");
    }
    if args.search == Search::Swarm {
        c.push_str(" --search swarm");
    }
    if let Some(d) = args.liveness {
        c.push_str(&format!(" --liveness {d}"));
    }
    c
}

/// Runs a scenario under its strategy (built through `registry`).
pub(super) fn runner<'a>(
    name: &'a str,
    registry: &'a Registry,
) -> impl Fn(&Scenario) -> Result<Summary, Vec<String>> + Sync + 'a {
    move |s: &Scenario| {
        // Every run of the search and of the shrink starts here: an interrupt ends the process
        // here at the latest (its handler's thread does it at once).
        staging::exit_if_interrupted();
        let strategy = registry
            .build(&s.strategy)
            .map_err(|e| vec![format!("strategy: {e}")])?;
        crate::run_with(name, s, strategy, None)
            .map(|o| o.summary)
            .map_err(|e| e.problems)
    }
}

pub(super) fn progress_bar(len: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{wide_bar}] {pos}/{len} runs, {per_sec}, eta {eta}",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar
}

fn cannot_write(dir: &Path, e: std::io::Error) -> ExitCode {
    eprintln!("error: cannot write {}: {e}", dir.display());
    ExitCode::from(2)
}

/// Writes shard `shard`'s partial file; `command` runs the whole exploration, `program` is
/// the name the command line goes by.
fn write_partial(
    out: &Path,
    l: &Loaded,
    (command, program): (&str, &str),
    e: &Exploration,
    shard: Shard,
    records: Vec<RunRecord>,
    timing: &Timing,
) -> ExitCode {
    let dir = out.join(format!("{}-explore", l.name));
    let path = dir.join(format!("partial-{}-of-{}.json", shard.index, shard.of));
    let first = explore::first_violation(&records).map(|r| r.run);
    let partial = Partial {
        name: l.name.clone(),
        command: command.to_string(),
        scenario: e.base.to_ron(),
        swarm: e.swarm,
        runs: e.runs,
        shard: (shard.index, shard.of),
        records,
        liveness: e.liveness,
    };
    let mut json = serde_json::to_vec_pretty(&partial).expect("a partial serializes");
    json.push(b'\n');
    if let Err(err) = staging::write_file(&path, &json, Existing::Replace) {
        return cannot_write(&path, err);
    }
    outln!(
        "shard {}/{}: {} runs{}, {}\npartial: {}\nwhen every shard is done: {program} explore-merge {}",
        shard.index,
        shard.of,
        timing.runs,
        first.map_or(String::new(), |r| format!(" (stopped at run {r}, a violation)")),
        rate(timing),
        path.display(),
        dir.display()
    );
    ExitCode::SUCCESS
}

fn rate(t: &Timing) -> String {
    format!(
        "{} events in {:.2} s of wall time: {} runs/s",
        t.events,
        t.secs,
        super::per_second(t.runs as f64, t.secs)
    )
}

/// The shrink's progress on a terminal (a bar of its runs against its budget, at the runs/s of
/// the shrink itself); nothing elsewhere. Counts every run of the answer.
struct ShrinkProgress {
    bar: ProgressBar,
    #[allow(clippy::disallowed_types)] // wall time for the runs/s shown, never simulated time
    started: std::time::Instant,
}

impl ShrinkProgress {
    fn new(shrinking: bool, budget_runs: u64) -> ShrinkProgress {
        let bar = if shrinking && std::io::stderr().is_terminal() {
            let bar =
                ProgressBar::with_draw_target(Some(budget_runs), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} shrinking the violation: {pos} of at most {len} runs, {msg}",
                )
                .expect("a valid template"),
            );
            bar
        } else {
            ProgressBar::hidden()
        };
        #[allow(clippy::disallowed_types)] // wall time for the runs/s shown
        let started = std::time::Instant::now();
        ShrinkProgress { bar, started }
    }

    fn ran(&self) {
        self.bar.inc(1);
        let secs = self.started.elapsed().as_secs_f64();
        self.bar.set_message(format!(
            "{} runs/s",
            super::per_second(self.bar.position() as f64, secs)
        ));
    }
}

/// Answers (the shrink within the budget of `shrink_args`), writes `<out>/<name>/` whole,
/// prints what was found, and gives the exit code: 1 for a violation, 0 for none. `command`
/// runs the exploration; `program` is the name the command line goes by, in replay lines.
#[allow(clippy::too_many_arguments)]
pub(super) fn finish(
    out: &Path,
    name: &str,
    (command, program): (&str, &str),
    e: &Exploration,
    ran: &explore::Ran,
    timing: Option<&Timing>,
    shrink_args: &ShrinkArgs,
    registry: &Registry,
    exhaustive: Option<ExhaustiveOut>,
) -> ExitCode {
    let records = &ran.records[..];
    let runner = runner(name, registry);
    let progress = ShrinkProgress::new(
        explore::first_violation(records).is_some(),
        shrink_args.shrink_runs,
    );
    let deadline = shrink_args.shrink_time.map(|d| progress.started + d);
    #[allow(clippy::disallowed_types)] // wall time for the shrink's deadline only
    let out_of_time = move || deadline.is_some_and(|d| std::time::Instant::now() >= d);
    let spent = std::sync::atomic::AtomicU64::new(0);
    let events_spent = || spent.load(std::sync::atomic::Ordering::Relaxed);
    let budget = shrink::Budget {
        runs: shrink_args.shrink_runs,
        events: shrink_args.shrink_events,
        events_spent: Some(&events_spent),
        out_of_time: deadline.map(|_| &out_of_time as &(dyn Fn() -> bool + Sync)),
    };
    let counted = |s: &Scenario| {
        let r = runner(s);
        if let Ok(summary) = &r {
            spent.fetch_add(summary.events, std::sync::atomic::Ordering::Relaxed);
        }
        progress.ran();
        r
    };
    let answer = e.answer_within(ran, command, &counted, &budget);
    progress.bar.finish_and_clear();
    let answer = match answer {
        Ok(a) => a,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::from(2);
        }
    };
    let shrink_secs = progress.started.elapsed().as_secs_f64();
    let dir = report::run_dir(out, name);
    let mut summary = explore_json((name, command), e, registry, records, exhaustive.is_some());
    let epsilon_ns = registry
        .resolve(&e.base.strategy)
        .ok()
        .and_then(|r| r.epsilon())
        .map(|m| m.value.ns());
    let mut files: Vec<(&str, Vec<u8>)> = vec![("runs.csv", runs_csv(records))];
    let mut lines = match &answer {
        Answer::Violation(f) => {
            let found = violation_report(f, name, (command, program), registry, &mut files);
            let Ok(v) = found else {
                return ExitCode::from(2);
            };
            let shrink = (shrink_args, shrink_secs);
            let lines = violation_lines(f, &v, (name, records), (&dir, program), shrink);
            summary.violation = Some(v);
            lines
        }
        Answer::Nothing(miss) => {
            let mut lines = nothing_report(
                miss.as_deref(),
                (name, command, epsilon_ns),
                records,
                (&dir, program),
                &mut summary,
                &mut files,
            );
            if let Some(within) = e.liveness {
                lines.insert(1, liveness_words(records, within));
            }
            lines
        }
    };
    if let Some(x) = &exhaustive {
        exhaustive_lines(x, &answer, &mut lines);
    }
    summary.exhaustive = exhaustive;
    let mut json = serde_json::to_vec_pretty(&summary).expect("explore.json serializes");
    json.push(b'\n');
    files.push(("explore.json", json));
    let owner = report::Owner::new("explore", name);
    if let Err(err) = report::write_dir_atomically(&dir, &owner, &files) {
        return cannot_write(&dir, err);
    }
    if let Some(t) = timing {
        outln!("{} runs, {}", t.runs, rate(t));
    }
    for l in lines {
        outln!("{l}");
    }
    outln!("  report     {}", dir.display());
    if matches!(answer, Answer::Violation(_)) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `explore.json` of the exploration `e` of `name` by `command` (exhaustive or not) before its
/// answer is in: the search and the evidence of its `records`.
fn explore_json<'a>(
    (name, command): (&'a str, &'a str),
    e: &Exploration,
    registry: &Registry,
    records: &[RunRecord],
    exhaustive: bool,
) -> ExploreJson<'a> {
    let strategy = registry
        .build(&e.base.strategy)
        .expect("validated at load")
        .describe();
    ExploreJson {
        scenario: name,
        strategy,
        command,
        nemesis: nemesis_ron(e.nemesis),
        swarm: e.swarm,
        search: match (exhaustive, e.guided) {
            (true, _) => "exhaustive",
            (false, true) => "guided",
            (false, false) => "swarm",
        },
        runs: e.runs,
        runs_done: records.len() as u64,
        violation: None,
        nearest_miss: None,
        power: PowerOut::of(records),
        exhaustive: None,
        captured_generations: match explore::guided::captured_generations(records) {
            (captured, of) if e.guided && !exhaustive && captured > 0 => {
                Some(Captured { captured, of })
            }
            _ => None,
        },
    }
}

/// An exhaustive search's words in what `explore` prints: the statement of what it proved in
/// place of the search's, or where the violation was found.
fn exhaustive_lines(x: &ExhaustiveOut, answer: &Answer, lines: &mut Vec<String>) {
    match answer {
        Answer::Nothing(_) => lines[0] = x.statement.clone(),
        Answer::Violation(f) => lines.insert(
            1,
            format!(
                "  exhaustive schedule {} of the search ({} faults of {}): {} schedules run",
                f.record.run,
                f.drawn.faults.len(),
                kinds_words(&f.record.kinds),
                x.schedules
            ),
        ),
    }
}

/// The files of a violation's report (the counterexample, its run's report and timeline) into
/// `files`, and its entry of `explore.json`; an error is printed (the counterexample does not
/// run). Its replay commands name `program`.
fn violation_report(
    f: &explore::Found,
    name: &str,
    (command, program): (&str, &str),
    registry: &Registry,
    files: &mut Vec<(&str, Vec<u8>)>,
) -> Result<ViolationOut, ()> {
    let v = ViolationOut {
        run: f.record.run,
        seed: f.record.seed,
        kind: f.violation,
        kinds: f.record.kinds.clone(),
        before: SizeOut::of(&f.drawn),
        after: SizeOut::of(&f.counterexample),
        shrink_runs: f.shrink_runs,
        shrink_stopped: f.shrink_stopped,
        file: "counterexample.ron",
    };
    let text = counterexample_text(&f.counterexample, command, program);
    files.push(("counterexample.ron", text.into_bytes()));
    let strategy = registry
        .build(&f.counterexample.strategy)
        .expect("validated at load");
    let mut observers = Tee(Recorder::for_scenario(&f.counterexample), ClientLog::new());
    match crate::run_with(name, &f.counterexample, strategy, Some(&mut observers)) {
        Ok(o) => {
            let Tee(recorder, log) = observers;
            let timeline = recorder.into_timeline();
            // Relative to the report, so that its bytes do not depend on --out.
            let rerun = format!("{} run counterexample.ron", crate::shell::word(program));
            let md = markdown::run_report(&o.summary, &f.counterexample, &rerun);
            files.extend(report::run_files(&o.summary, md));
            let chart = timeline_chart(&timeline, &o.summary);
            files.push(("timeline.svg", chart.svg.into_bytes()));
            files.push(("timeline.png", chart.png));
            let page = counterexample_page(name, f, &v, (&o, &timeline, &log));
            files.push(("report.html", page.into_bytes()));
            Ok(v)
        }
        Err(err) => {
            eprintln!("error: the counterexample: {}", err.problems.join("; "));
            Err(())
        }
    }
}

/// `report.html` of an exploration that found a violation: its counterexample's run drawn,
/// under what the search found and how far the shrink took it.
fn counterexample_page(
    name: &str,
    f: &explore::Found,
    v: &ViolationOut,
    (outcome, timeline, log): (&crate::outcome::Outcome, &Timeline, &ClientLog),
) -> String {
    use crate::report::html::{run_data::RunData, run_lines, Page, PageKind};
    let mut lines = vec![format!(
        "Run {} (seed {}) of the search showed {}; shrunk from {} faults to {}, {} long \
             (counterexample.ron replays it).",
        v.run,
        v.seed,
        v.kind.words(),
        v.before.faults,
        v.after.faults,
        crate::time::format_ns(v.after.duration_ns)
    )];
    lines.extend(run_lines(&f.counterexample));
    let claims = (&outcome.summary, outcome.authorities);
    let run = RunData::of(
        "counterexample",
        &f.counterexample,
        claims,
        timeline,
        log,
        None,
    );
    Page {
        kind: PageKind::Explore,
        title: format!("{name}: a counterexample"),
        lines,
        table: None,
        runs: vec![run],
    }
    .html()
}

/// What `explore` prints about a violation: the run, the shrink (its runs, seconds and runs/s,
/// and whether it stopped at its budget), the figures, how to replay it (with `program`, from
/// the report in `dir`).
fn violation_lines(
    f: &explore::Found,
    v: &ViolationOut,
    (name, records): (&str, &[RunRecord]),
    (dir, program): (&Path, &str),
    (shrink_args, shrink_secs): (&ShrinkArgs, f64),
) -> Vec<String> {
    let mut lines = vec![
        format!(
            "VIOLATION  {name}: run {} (seed {}, kinds {}) showed {}",
            f.record.run,
            f.record.seed,
            kinds_words(&f.record.kinds),
            f.violation.words()
        ),
        format!(
            "  shrunk     {}, {} nodes, {} -> {}, {} nodes, {} ({} runs, {shrink_secs:.2} s{})",
            faults_words(v.before.faults),
            v.before.nodes,
            f.drawn.duration,
            faults_words(v.after.faults),
            v.after.nodes,
            f.counterexample.duration,
            f.shrink_runs,
            if f.shrink_runs > 0 {
                format!(
                    ", {} runs/s",
                    super::per_second(f.shrink_runs as f64, shrink_secs)
                )
            } else {
                String::new()
            }
        ),
    ];
    if let Some(why) = f.shrink_stopped {
        let flag = match why {
            shrink::Stopped::Runs => format!("--shrink-runs {}", shrink_args.shrink_runs),
            shrink::Stopped::Events => {
                format!("--shrink-events {}", shrink_args.shrink_events)
            }
            shrink::Stopped::Time => match shrink_args.shrink_time {
                Some(d) => format!(
                    "--shrink-time {}",
                    crate::time::format_ns(d.as_nanos() as i64)
                ),
                None => "its cap".to_string(),
            },
        };
        lines.push(format!(
            "  budget     the shrink stopped at its budget ({flag}): {}; the counterexample is \
             the smallest found so far",
            why.words()
        ));
    }
    lines.push(format!(
        "  found      {}",
        found_words(&f.summary, f.violation)
    ));
    lines.push(format!(
        "  handovers  {}",
        PowerOut::of(records).handover_words()
    ));
    lines.push(format!(
        "  replay     {program} run {}",
        dir.join("counterexample.ron").display()
    ));
    lines
}

/// With a liveness bound and no violation: every judged run recovered within it, and the
/// latest recovery (the least margin left).
fn liveness_words(records: &[RunRecord], within: crate::time::Dur) -> String {
    let latest = records
        .iter()
        .filter_map(|r| r.recovery_margin_ns.map(|m| (m, r.run)))
        .min();
    match latest {
        Some((margin, run)) if margin < within.ns() => format!(
            "  liveness      every run recovered within {within}; the latest {} after its \
             faults ended (run {run})",
            crate::time::format_ns(within.ns() - margin)
        ),
        _ => format!("  liveness      every run recovered within {within} at once"),
    }
}

/// The files and `explore.json` entry of an exploration without a violation (the nearest miss
/// and the slack histogram), and what it prints (the replay line with `program`).
fn nothing_report(
    miss: Option<&explore::NearestMiss>,
    (name, command, epsilon_ns): (&str, &str, Option<i64>),
    records: &[RunRecord],
    (dir, program): (&Path, &str),
    summary: &mut ExploreJson,
    files: &mut Vec<(&str, Vec<u8>)>,
) -> Vec<String> {
    // A search that found nothing is evidence, not a proof: the lines after say how strong.
    let mut lines = vec![format!(
        "no violation found in {} run{} of {name} (a search, not a proof of safety)",
        records.len(),
        if records.len() == 1 { "" } else { "s" }
    )];
    if let Some(m) = miss {
        let slack = m.record.min_slack_ns.expect("a nearest miss has a slack");
        summary.nearest_miss = Some(MissOut {
            run: m.record.run,
            seed: m.record.seed,
            kinds: m.record.kinds.clone(),
            min_slack_ns: slack,
            file: "nearest-miss.ron",
        });
        files.push((
            "nearest-miss.ron",
            nearest_miss_text(&m.drawn, command, &m.record).into_bytes(),
        ));
        lines.push(format!(
            "  nearest miss  run {} (seed {}, kinds {}): {} of slack",
            m.record.run,
            m.record.seed,
            kinds_words(&m.record.kinds),
            crate::time::format_ns(slack)
        ));
        lines.push(format!(
            "  replay        {program} run {}",
            dir.join("nearest-miss.ron").display()
        ));
    } else {
        lines.push("  no run had a handover of the lease: no slack to report".into());
    }
    lines.push(format!(
        "  handovers     {}",
        summary.power.handover_words()
    ));
    lines.push(format!(
        "  evidence      {}",
        summary.power.evidence_words()
    ));
    for w in summary.power.repetition_words() {
        lines.push(format!("  weak evidence {w}"));
    }
    if let Some(c) = summary.captured_generations {
        lines.push(format!("  weak evidence {}", c.words()));
    }
    let chart = crate::report::chart::slack::slack_histogram(name, records, epsilon_ns);
    if let Some(chart) = chart {
        files.push(("slack.svg", chart.svg.into_bytes()));
        files.push(("slack.png", chart.png));
    }
    lines
}
