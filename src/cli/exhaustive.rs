//! `leasesim explore --exhaustive`: the bounded exhaustive search of a scenario's envelope
//! ([`crate::explore::exhaustive`]), written as an exploration's report is: the counterexample
//! shrunk, or the nearest miss with the statement of what was proved in `explore.json`.

use super::explore::{finish, runner, ExploreArgs, Timing};
use super::Loaded;
use crate::explore::exhaustive::{self, Grid, MomentLog};
use crate::explore::output::ExhaustiveOut;
use crate::explore::Exploration;
use crate::outcome::Summary;
use crate::report;
use crate::report::staging;
use crate::scenario::Scenario;
use crate::strategy::Registry;
use std::process::ExitCode;

/// Runs the exhaustive search of `e` (of `loaded`) as `args` asks and writes its report;
/// `command` runs it again, `program` is the name the command line goes by.
pub(crate) fn exhaustive(
    args: &ExploreArgs,
    loaded: &Loaded,
    e: &Exploration,
    (command, program): (&str, &str),
    registry: &Registry,
) -> ExitCode {
    let dir = report::run_dir(&args.out, &loaded.name);
    let owner = report::Owner::new("explore", &loaded.name);
    if let Err(code) = super::claim_reports(&[(dir, owner)], true) {
        return code;
    }
    let grid = Grid {
        faults: usize::from(args.faults),
        offsets: args
            .offsets
            .as_ref()
            .map_or_else(|| exhaustive::DEFAULT_OFFSETS.to_vec(), |o| o.0.clone()),
        sizes: args
            .sizes
            .as_ref()
            .map_or_else(|| exhaustive::DEFAULT_SIZES.to_vec(), |o| o.0.clone()),
        moments: args
            .moments
            .as_ref()
            .map_or_else(|| exhaustive::DEFAULT_MOMENTS.to_vec(), |m| m.0.clone()),
        cap: e.runs,
    };
    let letters = exhaustive::alphabet(e.base, e.nemesis, &grid.sizes).len();
    let threads = args
        .jobs
        .map_or_else(rayon::current_num_threads, usize::from);
    eprintln!(
        "explore {}: exhaustive, up to {} fault{} of {letters} in the alphabet, at most {} \
         schedules, {threads} thread{}",
        loaded.name,
        grid.faults,
        if grid.faults == 1 { "" } else { "s" },
        grid.cap,
        if threads == 1 { "" } else { "s" },
    );
    let runner = runner(&loaded.name, registry);
    let watched = watched(&loaded.name, registry);
    let bar = counter();
    #[allow(clippy::disallowed_types)] // wall time for the runs/s line only, never simulated time
    let started = std::time::Instant::now();
    let jobs = args.jobs.map(usize::from);
    let searched = exhaustive::search(e, &grid, jobs, &|n| bar.inc(n), &runner, &watched);
    bar.finish_and_clear();
    let searched = match searched {
        Ok(s) => s,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::from(2);
        }
    };
    let timing = Timing {
        secs: started.elapsed().as_secs_f64(),
        runs: searched.ran.records.len() as u64,
        events: searched.ran.records.iter().map(|r| r.events).sum(),
    };
    let out = ExhaustiveOut::of(e, &grid, &searched.proof);
    finish(
        &args.out,
        &loaded.name,
        (command, program),
        e,
        &searched.ran,
        Some(&timing),
        &args.shrink,
        registry,
        Some(out),
    )
}

/// Runs a scenario under its strategy (built through `registry`), telling `log` its moments.
fn watched<'a>(
    name: &'a str,
    registry: &'a Registry,
) -> impl Fn(&Scenario, &mut MomentLog) -> Result<Summary, Vec<String>> + Sync + 'a {
    move |s: &Scenario, log: &mut MomentLog| {
        staging::exit_if_interrupted();
        let strategy = registry
            .build(&s.strategy)
            .map_err(|e| vec![format!("strategy: {e}")])?;
        crate::run_with(name, s, strategy, Some(log))
            .map(|o| o.summary)
            .map_err(|e| e.problems)
    }
}

/// A count of the schedules run on a terminal (how many there are is known only as the search
/// goes); nothing elsewhere.
fn counter() -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} {spinner} {pos} schedules run, {per_sec}")
            .expect("a valid template"),
    );
    bar
}
