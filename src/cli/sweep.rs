//! `leasesim sweep` and `leasesim sweep-merge`: parse and check the grid, run it (or one shard
//! of it) on every core, and write `<scenario>-sweep/` whole: results.csv, runs.csv, report.md
//! and the charts. A shard writes only its `partial-I-of-K.csv`; the merge turns the partials
//! into the same files, byte for byte, as one unsharded sweep.
//!
//! Runs stream to an in-progress file beside the output (`sweep::resume`), kept when the sweep
//! is interrupted; `--resume` checks it is the same sweep and runs only what is missing.
//!
//! Every input problem (a bad path, a value of the wrong type, a cell that does not validate) is
//! reported before anything runs, with exit code 2, and nothing is written.

use super::{load_all, split_top_level};
use crate::report::chart::sweep as charts;
use crate::report::{staging, text, ReportDir};
use crate::strategy::Registry;
use crate::sweep::reference::Reference;
use crate::sweep::resume::{Found, InProgress};
use crate::sweep::{self, report as sweep_report, CellStats, Collected, Grid, Shard, SweepSpec};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct SweepArgs {
    /// A scenario file (.ron) or the name of a bundled scenario.
    pub(crate) scenario: String,
    /// A field to vary and its values: PATH=V1,V2,... Short names: T (lease.duration), rho
    /// (clocks.drift_spread_ppm), epsilon (the strategy's holder margin). Any scenario field
    /// path works: lease.renew_every, network.delay, faults[0].duration, nodes[h].drift_ppm,
    /// and strategy.FIELD for a field of a registered protocol.
    /// Values are written as in a scenario file: 10s, 250, Adversarial, Fixed("1ms").
    /// Repeat --vary for more parameters; the first varies slowest.
    #[arg(long = "vary", value_name = "PATH=V1,V2,...", required = true)]
    pub(crate) vary: Vec<String>,
    /// Runs per cell, with seeds seed, seed+1, ..., seed+N-1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) seeds: u64,
    /// The first seed (default: the scenario's `seed`).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Worker threads (default: one per core). The results do not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) jobs: Option<u16>,
    /// Directory for the sweep's report (`<scenario>-sweep/`).
    #[arg(long, default_value = "reports")]
    pub(crate) out: PathBuf,
    /// Run only shard I of K (the runs whose index % K == I) and write
    /// `<scenario>-sweep/partial-I-of-K.csv`; merge the K partials with `leasesim sweep-merge`.
    /// `auto/K` takes I from a batch system: JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)
    /// or SLURM_ARRAY_TASK_ID (a Slurm job array, numbered from 0).
    #[arg(long, value_name = "I/K")]
    pub(crate) shard: Option<String>,
    /// Continue an interrupted sweep (or shard) from the runs it left in
    /// `<out>/.<scenario>-sweep.in-progress` (a shard: `.partial-I-of-K.csv.in-progress`):
    /// same scenario, --vary, --seeds and --seed required; gives the same bytes as one
    /// uninterrupted sweep. Without it, a sweep starts over.
    #[arg(long)]
    pub(crate) resume: bool,
    /// A published figure of one cell's recovery times to set beside what the cell measured:
    /// VALUES:FIGURE=TIME, where VALUES are the cell's values as the table shows them (joined
    /// by ", " for several parameters) and FIGURE is median, mean, max or pNN. The report
    /// gives each with the measured figure and the difference; the recovery chart marks it.
    /// Repeat for more.
    #[arg(long = "reference", value_name = "VALUES:FIGURE=TIME")]
    pub(crate) references: Vec<String>,
}

#[derive(Args)]
pub(crate) struct MergeArgs {
    /// The directory holding every `partial-I-of-K.csv` of one sweep.
    pub(crate) dir: PathBuf,
    /// Directory for the merged report (`<scenario>-sweep/`). When that is DIR itself, the
    /// partial files are kept in it.
    #[arg(long, default_value = "reports")]
    pub(crate) out: PathBuf,
}

/// Reads `--vary` texts into (name, values), or says what is wrong with each.
fn parse_vary(texts: &[String], problems: &mut Vec<String>) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for t in texts {
        match t.split_once('=') {
            Some((name, values)) if !name.trim().is_empty() => {
                out.push((name.trim().to_string(), split_top_level(values)));
            }
            _ => problems.push(format!(
                "--vary {t:?}: expected PATH=V1,V2,... (like T=5s,10s or epsilon=1ms,10ms)"
            )),
        }
    }
    out
}

/// Reads `--reference` texts, or says what is wrong with each.
fn parse_references(texts: &[String], problems: &mut Vec<String>) -> Vec<Reference> {
    texts
        .iter()
        .filter_map(|r| Reference::parse(r).map_err(|e| problems.push(e)).ok())
        .collect()
}

/// `program`: the name the command line goes by, in the commands it prints and writes.
pub(crate) fn sweep(args: SweepArgs, registry: &Registry, program: &str) -> ExitCode {
    if let Err(code) = super::check_out_dir(&args.out) {
        return code;
    }
    let mut loaded = match load_all(std::slice::from_ref(&args.scenario), registry, program) {
        Ok(mut l) => l.remove(0),
        Err(code) => return code,
    };
    if let Some(seed) = args.seed {
        loaded.scenario.seed = seed;
    }
    let mut problems = Vec::new();
    let shard = super::parse_shard(args.shard.as_deref(), &mut problems);
    let vary = parse_vary(&args.vary, &mut problems);
    let references = parse_references(&args.references, &mut problems);
    if !problems.is_empty() {
        return super::report_problems("sweep", &problems);
    }
    let spec = SweepSpec {
        name: loaded.name.clone(),
        source: loaded.source.clone(),
        scenario: loaded.scenario,
        vary,
        seeds: args.seeds,
        references,
    };
    let grid = match Grid::build_in(spec, registry) {
        Ok(g) => g,
        Err(problems) => return super::report_problems("sweep", &problems),
    };
    let dir = args.out.join(format!("{}-sweep", grid.spec.name));
    let owner = crate::report::Owner::new("sweep", &grid.spec.name);
    // A shard adds its partial file: it replaces no report.
    if let Err(code) = super::claim_reports(&[(dir.clone(), owner.clone())], shard.is_none()) {
        return code;
    }
    let jobs = args.jobs.map(usize::from);
    let threads = jobs.unwrap_or_else(rayon::current_num_threads);
    let runs_here = shard.unwrap_or(Shard::ALL).run_count(grid.run_count());
    say_start(&grid, shard, runs_here, threads);

    #[allow(clippy::disallowed_types)] // wall time for the runs/s line only, never simulated time
    let started = std::time::Instant::now();
    let here = shard.unwrap_or(Shard::ALL);
    // The runs stream into an in-progress file beside the target, kept on an interruption.
    let target = match shard {
        Some(s) => dir.join(sweep::files::partial_name(s.index, s.of)),
        None => dir.clone(),
    };
    staging::sweep_stale(&target); // a partial's `.tmp-PID` left by an older leasesim
    let mut stats = vec![CellStats::default(); grid.cell_count()];
    let file = match InProgress::open(&target, &grid, here, args.resume, &mut |r| {
        stats[grid.split(r.index).0].push(r)
    }) {
        Ok(f) => f,
        Err(e) => return super::bad_input(e),
    };
    let shown = file.path().display().to_string();
    say_found(file.found, &shown, runs_here, args.resume);
    let resumed = file.done;
    staging::on_interrupt_say(Some(format!(
        "interrupted: the runs done are kept in {shown}; \
         the same command with --resume continues the sweep"
    )));
    let events = match sweep::run_into(&grid, here, jobs, true, &file, &mut stats) {
        Ok(events) => events,
        Err(e) => {
            eprintln!("error: {e}");
            return failed_midway(file, &shown);
        }
    };
    let secs = started.elapsed().as_secs_f64();
    let rate = super::per_second((runs_here - resumed) as f64, secs);
    let resumed_note = if resumed > 0 {
        format!(" ({resumed} resumed)")
    } else {
        String::new()
    };
    if let Some(shard) = shard {
        if let Err(e) = file.publish_as(&target) {
            cannot_write(&target, e);
            return failed_midway_note(true, &shown);
        }
        staging::on_interrupt_say(None);
        outln!(
            "shard {}/{}: {runs_here} runs{resumed_note}, {events} events in {secs:.2} s \
             ({rate} runs/s)\n\
             partial: {}\n\
             when every shard is done: {program} sweep-merge {}",
            shard.index,
            shard.of,
            target.display(),
            dir.display()
        );
        return ExitCode::SUCCESS;
    }
    let written = ReportDir::begin(&dir, &owner).and_then(|staging| {
        file.copy_runs_to(&staging.path("runs.csv"))?;
        write_outputs(&grid, &stats, staging, Vec::new(), program)
    });
    if let Err(e) = written {
        cannot_write(&dir, e);
        return failed_midway(file, &shown);
    }
    // The report holds every run now: the in-progress file has served.
    let _ = file.remove();
    staging::on_interrupt_say(None);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let _ = writeln!(
        out,
        "{} runs{resumed_note}, {events} events in {secs:.2} s of wall time: {rate} runs/s \
         on {threads} thread{}",
        grid.run_count(),
        if threads == 1 { "" } else { "s" }
    );
    let _ = write!(out, "{}", summary(&grid, &stats, &dir));
    ExitCode::SUCCESS
}

/// Says what the sweep runs (`runs_here` of its runs in `shard`, if one), on how many threads.
fn say_start(grid: &Grid, shard: Option<Shard>, runs_here: u64, threads: usize) {
    eprintln!(
        "sweep {}: {} cells x {} seeds = {} runs{}, {threads} thread{}",
        grid.spec.name,
        grid.cell_count(),
        grid.spec.seeds,
        grid.run_count(),
        shard.map_or(String::new(), |s| format!(
            " (shard {}/{}: {runs_here} of them)",
            s.index, s.of
        )),
        if threads == 1 { "" } else { "s" }
    );
}

/// `program`: the name the command line goes by, in the commands it prints and writes.
pub(crate) fn merge(args: MergeArgs, registry: &Registry, program: &str) -> ExitCode {
    if let Err(code) = super::check_out_dir(&args.out) {
        return code;
    }
    let entries = match std::fs::read_dir(&args.dir) {
        Ok(e) => e,
        Err(e) => return super::bad_input(format!("{}: cannot read: {e}", args.dir.display())),
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("partial-") && n.ends_with(".csv"))
        })
        .collect();
    names.sort();
    if names.is_empty() {
        return super::bad_input(format!(
            "{}: no partial-I-of-K.csv files (write them with {program} sweep ... --shard I/K)",
            args.dir.display()
        ));
    }
    let mut partials = Vec::new();
    let mut problems = Vec::new();
    for p in &names {
        match std::fs::read_to_string(p) {
            Ok(t) => partials.push((p.display().to_string(), t)),
            Err(e) => problems.push(format!("{}: cannot read: {e}", p.display())),
        }
    }
    if !problems.is_empty() {
        return super::report_problems("sweep", &problems);
    }
    let (grid, collected) = match sweep::merge_in(&partials, registry) {
        Ok(r) => r,
        Err(problems) => return super::report_problems("sweep", &problems),
    };
    // The name becomes the report directory's: the partials' must be one a scenario can have.
    if let Some(why) = crate::scenario::names::problem(&grid.spec.name)
        .or_else(|| crate::scenario::names::reserved(&grid.spec.name))
    {
        let first = &partials[0].0;
        return super::report_problems("sweep", &[format!("{first}: name: {why}")]);
    }
    let dir = args.out.join(format!("{}-sweep", grid.spec.name));
    let owner = crate::report::Owner::new("sweep", &grid.spec.name);
    if let Err(code) = super::claim_reports(&[(dir.clone(), owner.clone())], true) {
        return code;
    }
    // Merging in place keeps the partials: the new directory replaces the old one whole.
    let same = match (dir.canonicalize(), args.dir.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let keep: Vec<(String, Vec<u8>)> = if same {
        names
            .iter()
            .zip(&partials)
            .map(|(p, (_, t))| {
                (
                    p.file_name()
                        .expect("a file")
                        .to_string_lossy()
                        .into_owned(),
                    t.clone().into_bytes(),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let Collected { stats, runs_csv } = collected;
    let mut extra = vec![("runs.csv".to_string(), runs_csv)];
    extra.extend(keep);
    let written = ReportDir::begin(&dir, &owner)
        .and_then(|staging| write_outputs(&grid, &stats, staging, extra, program));
    if let Err(e) = written {
        return cannot_write(&dir, e);
    }
    outln!(
        "merged {} partials: {} runs of {} cells",
        names.len(),
        grid.run_count(),
        grid.cell_count()
    );
    out!("{}", summary(&grid, &stats, &dir));
    ExitCode::SUCCESS
}

/// Finishes the sweep's directory and puts it in place whole: results.csv, charts, report,
/// and `extra` files, beside whatever was streamed into `staging` already (runs.csv). The
/// report's commands name `program`.
fn write_outputs(
    grid: &Grid,
    stats: &[CellStats],
    staging: ReportDir,
    extra: Vec<(String, Vec<u8>)>,
    program: &str,
) -> std::io::Result<()> {
    let drawn = charts::draw(grid, stats);
    let notes: Vec<sweep_report::ChartNote> = drawn
        .drawn
        .iter()
        .map(|ch| sweep_report::ChartNote {
            file: ch.file.to_string(),
            caption: ch.caption.clone(),
        })
        .collect();
    let md = sweep_report::render(grid, stats, &notes, &drawn.skipped, program);
    let csv = sweep::files::results_csv(grid, stats);
    staging.write("report.html", sweep_page(grid, &csv, &notes).as_bytes())?;
    staging.write("results.csv", &csv)?;
    staging.write("report.md", md.as_bytes())?;
    for ch in drawn.drawn {
        staging.write(&format!("{}.png", ch.file), &ch.png)?;
        staging.write(&format!("{}.svg", ch.file), &ch.svg)?;
    }
    for (name, bytes) in extra {
        staging.write(&name, &bytes)?;
    }
    staging.commit()
}

/// `report.html` of a sweep: its cells as a sortable table (the figures that say where the
/// lease broke and what it cost), and its charts named.
fn sweep_page(grid: &Grid, results_csv: &[u8], notes: &[sweep_report::ChartNote]) -> String {
    use crate::report::html::{tables, Page, PageKind};
    let mut keep: Vec<&str> = grid.params.iter().map(|p| p.name.as_str()).collect();
    keep.extend(SWEEP_PAGE_COLUMNS);
    let table = tables::csv_table(results_csv, &keep).expect("results.csv is written here");
    let mut lines = vec![format!(
        "{} cells, one row each (every figure is in results.csv; times in ns). Click a column \
         to sort by it.",
        grid.cell_count()
    )];
    lines.extend(
        notes
            .iter()
            .map(|n| format!("{}.png: {}", n.file, n.caption)),
    );
    Page {
        kind: PageKind::Sweep,
        title: format!("{}: sweep", grid.spec.name),
        lines,
        table: Some(table),
        runs: Vec::new(),
    }
    .html()
}

/// The columns of `results.csv` that a sweep's page shows beside its parameters.
const SWEEP_PAGE_COLUMNS: [&str; 12] = [
    "runs",
    "overlap_runs",
    "p_overlap",
    "p_overlap_lo",
    "p_overlap_hi",
    "max_overlap_ns",
    "min_slack_ns",
    "mean_availability",
    "stale_reads",
    "unsafe_writes",
    "median_recovery_ns",
    "p99_recovery_ns",
];

/// Says what the in-progress file `shown` held: runs resumed, nothing to resume, or an
/// interrupted sweep's runs started over.
fn say_found(found: Found, shown: &str, runs_here: u64, resume: bool) {
    match found {
        Found::Resumed {
            runs,
            dropped_bytes,
        } => eprintln!(
            "resuming {shown}: {runs} of {runs_here} runs were done{}",
            if dropped_bytes > 0 {
                format!(" ({dropped_bytes} bytes of a cut last run dropped)")
            } else {
                String::new()
            }
        ),
        Found::Nothing if resume => {
            eprintln!("nothing to resume in {shown}: running the whole sweep")
        }
        Found::Discarded => eprintln!(
            "note: {shown} held the runs of an interrupted sweep; starting over \
             (--resume continues it instead)"
        ),
        Found::Nothing => {}
    }
}

/// After a sweep failed midway (a full disk, say): keeps its in-progress file, `shown`, if a
/// resume has runs to keep in it, else removes it, and says which; exit 2.
fn failed_midway(file: InProgress, shown: &str) -> ExitCode {
    failed_midway_note(file.keep_if_resumable(), shown)
}

fn failed_midway_note(kept: bool, shown: &str) -> ExitCode {
    staging::on_interrupt_say(None);
    if kept {
        eprintln!(
            "the runs done are kept in {shown}: once the problem is fixed, the same command \
             with --resume continues the sweep"
        );
    } else {
        eprintln!("nothing was kept: no run had been written");
    }
    ExitCode::from(2)
}

fn cannot_write(dir: &Path, e: impl std::fmt::Display) -> ExitCode {
    eprintln!(
        "error: cannot write the sweep report {}: {e}",
        dir.display()
    );
    ExitCode::from(2)
}

/// The terminal summary: a small grid, the best safe cells, the bound, where the files are.
fn summary(grid: &Grid, stats: &[CellStats], dir: &Path) -> String {
    let mut s = String::new();
    if grid.cell_count() <= 64 {
        s.push('\n');
        s.push_str(&cell_table(grid, stats));
    }
    s.push('\n');
    s.push_str(&best_safe_lines(grid, stats));
    if sweep_report::bound_applies(grid) {
        s.push_str(&bound_lines(grid, stats));
    }
    s.push_str(&format!(
        "report: {}/report.md (results.csv, runs.csv, charts)\n",
        dir.display()
    ));
    s
}

/// Every cell's row: its runs, how many had a handover, P(overlap), availability, recovery
/// after the last fault, harm and verdict.
fn cell_table(grid: &Grid, stats: &[CellStats]) -> String {
    let mut header: Vec<&str> = grid.params.iter().map(|p| p.name.as_str()).collect();
    header.extend([
        "runs",
        "handovers",
        "P(overlap)",
        "95% CI",
        "max overlap",
        "slack (least / median)",
        "availability",
        "recovery (median / max)",
        "zombie",
        "stale",
        "verdict",
    ]);
    let rows: Vec<Vec<String>> = stats
        .iter()
        .enumerate()
        .map(|(cell, st)| {
            let (lo, hi) = st.wilson();
            let mut r: Vec<String> = grid.values(cell).iter().map(|v| v.to_string()).collect();
            r.extend([
                st.runs.to_string(),
                st.handover_runs.to_string(),
                format!("{:.3}", st.p_overlap()),
                format!("{lo:.3}-{hi:.3}"),
                sweep_report::human_ns(st.max_overlap_ns as f64),
                match (st.min_slack_ns, st.slack_percentiles([50])) {
                    (Some(least), Some([median])) => format!(
                        "{} / {}",
                        crate::time::format_ns(least),
                        crate::time::format_ns(median)
                    ),
                    _ => "-".to_string(),
                },
                format!("{:.4}%", st.mean_availability() * 100.0),
                match st.recovery_percentiles([50, 100]) {
                    Some([median, max]) => format!(
                        "{} / {}",
                        sweep_report::human_ns(median as f64),
                        sweep_report::human_ns(max as f64)
                    ),
                    None => "-".to_string(),
                },
                st.zombie_actions.to_string(),
                st.stale_reads.to_string(),
                st.verdict_words().to_string(),
            ]);
            r
        })
        .collect();
    text::table(&header, &rows)
}

/// `best safe: ...` with its evidence, or why there is none; and the settings left untested.
/// Safe means safe, with handovers to judge, in every environment tried; unsafe, unsafe in some
/// (one is enough).
fn best_safe_lines(grid: &Grid, stats: &[CellStats]) -> String {
    let env = sweep_report::environment(grid);
    let t = sweep_report::tally(grid, stats);
    let mut s = match sweep_report::best_safe(grid, stats, 1).first() {
        Some(b) => format!(
            "best safe: {} (availability {:.4}% at worst, {}{})\n",
            b.label,
            b.worst_availability * 100.0,
            b.evidence_words(),
            env.as_ref()
                .map_or(String::new(), |e| format!(" at every {e}"))
        ),
        None => format!(
            "best safe: none ({})\n",
            sweep_report::none_safe_words(&t, env.as_deref())
        ),
    };
    if !t.untested.is_empty() {
        s.push_str(&format!(
            "untested: {} ({}): no overlap or harm, but no run with a handover to judge{}; \
             never called safe\n",
            sweep_report::settings(t.untested.len()),
            sweep_report::untested_labels(&t),
            env.map_or(String::new(), |e| format!(" at some {e}"))
        ));
    }
    s
}

/// What the groups of cells say of the bound epsilon >= T*rho, and the measured boundary when
/// there is one group.
fn bound_lines(grid: &Grid, stats: &[CellStats]) -> String {
    use sweep_report::BoundVerdict;
    let bs = sweep_report::boundaries(grid, stats);
    let count = |v: BoundVerdict| bs.iter().filter(|b| b.verdict == v).count();
    let untested = bs.iter().filter(|b| b.verdict.untested()).count();
    let mut s = format!(
        "bound epsilon >= T*rho: holds in {} of {} groups, violated in {}, untested in {untested}{}\n",
        count(BoundVerdict::Holds),
        bs.len(),
        count(BoundVerdict::Violated),
        if untested > 0 {
            format!(" ({})", sweep_report::untested_bound_words(&bs))
        } else {
            String::new()
        }
    );
    if let [b] = &bs[..] {
        s.push_str(&format!(
            "  T*rho = {}; measured boundary between {} (overlap) and {} (none, with handovers)\n",
            sweep_report::human_ns(b.bound_ns),
            b.last_overlap_eps_ns
                .map_or("-".into(), |e| sweep_report::human_ns(e as f64)),
            b.first_safe_eps_ns
                .map_or("-".into(), |e| sweep_report::human_ns(e as f64)),
        ));
    }
    s
}
