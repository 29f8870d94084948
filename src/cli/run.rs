//! `leasesim run`: run scenarios (several on the pool, one on the calling thread), write their
//! reports (a run's chart drawn while its page is written, on a canvas touched while the run
//! was simulated), print a block or a verdict table.

use super::{bad_input, load_all, with_strategy, Loaded, RunArgs};
use crate::msg::NodeId;
use crate::oracle::authority::Authority;
use crate::oracle::{Overlap, Piece};
use crate::outcome::Summary;
use crate::report::chart::timeline::{timeline_canvas, timeline_scene};
use crate::report::{self, markdown, staging, text, ReportDir};
use crate::scenario::{library, limits, load};
use crate::strategy::Registry;
use crate::time::SimTime;
use crate::trace::client_log::ClientLog;
use crate::trace::history::{History, HistoryEvent, Refused};
use crate::trace::jsonl::JsonlWriter;
use crate::trace::perfetto::PerfettoWriter;
use crate::trace::tally::{Countable, Tally};
use crate::trace::timeline::Recorder;
use crate::trace::{Observer, TraceEvent};
use rayon::prelude::*;
use std::io::Write;
use std::process::ExitCode;

/// `program`: the name the command line goes by, in the rerun lines it prints and writes.
pub(crate) fn run(args: RunArgs, registry: &Registry, program: &str) -> ExitCode {
    let names: Vec<String> = if args.all || args.scenarios.is_empty() {
        let mut v: Vec<String> = library::names().iter().map(|s| s.to_string()).collect();
        v.extend(args.scenarios.iter().cloned());
        v
    } else {
        args.scenarios.clone()
    };
    let names = without_repeats(names);
    if let Err(code) = super::check_out_dir(&args.out) {
        return code;
    }
    let mut loaded = match load_all(&names, registry, program) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Err(code) = refuse_name_clashes(&loaded) {
        return code;
    }
    let claims: Vec<_> = loaded
        .iter()
        .map(|l| {
            let owner = report::Owner::new("run", &l.name);
            (report::run_dir(&args.out, &l.name), owner)
        })
        .collect();
    if let Err(code) = super::claim_reports(&claims, true) {
        return code;
    }
    if let Some(text) = &args.strategy {
        let spec = match load::strategy_from_text_in(text, registry) {
            Ok(s) => s,
            Err(e) => return bad_input(e),
        };
        let mut failed = false;
        for l in &mut loaded {
            if let Err(e) = with_strategy(l, &spec, registry) {
                eprintln!("error: {e}");
                failed = true;
            }
        }
        if failed {
            return ExitCode::from(2);
        }
    }
    super::warn(&loaded, registry);
    if let Some(seed) = args.seed {
        for l in &mut loaded {
            l.scenario.seed = seed;
        }
    }
    if args.trace {
        if let Err(code) = refuse_traces_over_the_limit(&loaded, args.trace_limit, registry) {
            return code;
        }
    }

    // One scenario runs on this thread: a pool would only add its threads' start and wait.
    let one = |l: &Loaded| run_one(l, &args, registry, program);
    let results: Vec<Result<(Summary, Timing), String>> = if loaded.len() == 1 {
        loaded.iter().map(one).collect()
    } else {
        loaded.par_iter().map(one).collect()
    };
    let mut results_ok = Vec::new();
    let mut write_failed = false;
    for r in results {
        match r {
            Ok(r) => results_ok.push(r),
            Err(e) => {
                eprintln!("error: {e}");
                write_failed = true;
            }
        }
    }
    if write_failed {
        return ExitCode::from(2);
    }
    let results = results_ok;
    if results.len() > 1 {
        let summaries: Vec<Summary> = results.iter().map(|(s, _)| s.clone()).collect();
        let index = args.out.join("index.html");
        let page = report::html::index_page(&summaries);
        if let Err(e) = staging::write_file(&index, page.as_bytes(), staging::Existing::Replace) {
            eprintln!("error: cannot write {}: {e}", index.display());
            return ExitCode::from(2);
        }
    }
    print_results(&results, &loaded, &args, program);
    let failed = results.iter().any(|(s, _)| s.expect.passed == Some(false));
    ExitCode::from(u8::from(failed))
}

/// Prints the runs' summaries: JSON lines, one run's block, or the verdict table; then, on
/// stderr, a note for each run whose adversarially slowed replica never led.
fn print_results(results: &[(Summary, Timing)], loaded: &[Loaded], args: &RunArgs, program: &str) {
    print_summaries(results, loaded, args, program);
    for ((s, _), l) in results.iter().zip(loaded) {
        if let Some(note) = crate::outcome::slowed_replica_never_led(&l.scenario, s) {
            eprintln!("note: {}: {note}", l.source);
        }
    }
}

fn print_summaries(
    results: &[(Summary, Timing)],
    loaded: &[Loaded],
    args: &RunArgs,
    program: &str,
) {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        for (s, timing) in results {
            let line = if args.stats {
                serde_json::to_string(&WithStats {
                    summary: s,
                    wall_seconds: timing.wall_seconds,
                    events_per_second: s.events as f64 / timing.wall_seconds.max(1e-9),
                    mean_in_flight: timing.mean_in_flight,
                })
            } else {
                serde_json::to_string(s)
            };
            let _ = writeln!(out, "{}", line.expect("a summary serializes"));
        }
    } else if results.len() == 1 {
        let (s, timing) = &results[0];
        let l = &loaded[0];
        let rerun = report::rerun_command(program, s, &l.source, args.strategy.is_some());
        let dir = report::run_dir(&args.out, &l.name);
        let _ = write!(
            out,
            "{}",
            text::run_block(s, &rerun, Some(&dir.display().to_string()))
        );
        if args.stats {
            let _ = writeln!(out, "  {:<12} {}", "stats", stats_line(s.events, timing));
        }
    } else {
        let rows: Vec<Vec<String>> = results.iter().map(|(s, _)| text::verdict_row(s)).collect();
        let strategy = text::VERDICT_HEADER.len() - 1;
        let rows = text::with_strategies_cut(&rows, strategy);
        let _ = write!(out, "{}", text::table(&text::VERDICT_HEADER, &rows));
        for (s, timing) in results {
            for f in &s.expect.failures {
                let _ = writeln!(out, "FAILED {}: {f}", s.scenario);
            }
            if args.stats {
                let _ = writeln!(out, "{}: {}", s.scenario, stats_line(s.events, timing));
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
}

/// The arguments with repeats of the same scenario dropped, first kept: a bundled name given
/// twice (`--all q4-gc-pause-two-sided`), or the same file twice, under any spelling of its path.
fn without_repeats(args: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    args.into_iter()
        .filter(|a| {
            let path = std::path::Path::new(a);
            let key = match path.canonicalize() {
                Ok(p) if path.is_file() => format!("file:{}", p.display()),
                _ => format!("arg:{a}"),
            };
            seen.insert(key)
        })
        .collect()
}

/// Two different scenarios with the same name would write the same report directory: refuses
/// them, before anything runs, listing each clash's sources (exit 2).
fn refuse_name_clashes(loaded: &[Loaded]) -> Result<(), ExitCode> {
    let mut by_name: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for l in loaded {
        by_name.entry(&l.name).or_default().push(&l.source);
    }
    let clashes: Vec<_> = by_name.iter().filter(|(_, s)| s.len() > 1).collect();
    if clashes.is_empty() {
        return Ok(());
    }
    for (name, sources) in clashes {
        eprintln!(
            "error: {} scenarios are named {name:?} and would write the same report {name}/: {} \
             (rename a file, or run them one at a time with different --out)",
            sources.len(),
            sources.join(", ")
        );
    }
    Err(ExitCode::from(2))
}

/// Refuses, before anything runs, every run whose traces are sure to pass `limit` by the
/// estimate ([`limits::trace_bytes_floor`]): exit 2, each named.
fn refuse_traces_over_the_limit(
    loaded: &[Loaded],
    limit: u64,
    registry: &Registry,
) -> Result<(), ExitCode> {
    let mut refused = false;
    for l in loaded {
        let protocol = crate::scenario::Protocols::checks(registry, &l.scenario.strategy).ok();
        let floor = limits::trace_bytes_floor(&l.scenario, protocol.as_deref());
        if floor > limit as f64 {
            eprintln!(
                "error: {}: --trace: its traces would take at least about {} (about {} events \
                 at {} bytes or more each), above --trace-limit, {}; raise --trace-limit, or \
                 shorten the run or lower its rates (nothing was run or written)",
                l.source,
                size_words(floor),
                limits::count(floor / limits::TRACE_BYTES_PER_EVENT_FLOOR),
                limits::TRACE_BYTES_PER_EVENT_FLOOR,
                limit_words(limit)
            );
            refused = true;
        }
    }
    if refused {
        Err(ExitCode::from(2))
    } else {
        Ok(())
    }
}

/// A size in bytes for a message, to a tenth of its unit: `1.3 GB`; bytes below 1 kB.
fn size_words(bytes: f64) -> String {
    let (per, unit) = match bytes {
        b if b >= 1e12 => (1e12, "TB"),
        b if b >= 1e9 => (1e9, "GB"),
        b if b >= 1e6 => (1e6, "MB"),
        b if b >= 1e3 => (1e3, "kB"),
        _ => return format!("{bytes:.0} bytes"),
    };
    format!("{:.1} {unit}", bytes / per)
}

/// The limit for a message: its bytes exactly, and in words.
fn limit_words(limit: u64) -> String {
    format!("{limit} bytes ({})", size_words(limit as f64))
}

/// What a run's traces reached: the point at which it is stopped (unwound out of the engine
/// with [`std::panic::resume_unwind`], which runs no panic hook, and caught by [`run_one`]).
struct TraceLimitReached {
    at: SimTime,
}

/// What watches a run for its report: the chart's recorder, and the trace writers if asked,
/// held to `trace_limit` bytes together.
struct ReportObservers {
    recorder: Recorder,
    traces: Option<(JsonlWriter, PerfettoWriter)>,
    trace_limit: u64,
    history: Option<History>,
    /// The client history as `report.html` shows it (bounded).
    client_log: ClientLog,
}

impl ReportObservers {
    /// Stops the run once the traces passed their limit (see [`TraceLimitReached`]).
    fn hold_to_limit(&self, at: SimTime) {
        if let Some((j, p)) = &self.traces {
            if j.bytes_written() + p.bytes_written() > self.trace_limit {
                std::panic::resume_unwind(Box::new(TraceLimitReached { at }));
            }
        }
    }
}

impl ReportObservers {
    /// Trace event `e` to the trace writers, if asked for.
    fn trace(&mut self, e: &TraceEvent) {
        if let Some((j, p)) = self.traces.as_mut() {
            j.event(e);
            p.event(e);
            self.hold_to_limit(e.t);
        }
    }
}

impl Observer for ReportObservers {
    fn event(&mut self, e: &TraceEvent) {
        self.recorder.event(e);
        self.client_log.event(e);
        self.trace(e);
    }
    fn belief(&mut self, node: NodeId, authority: Authority, piece: &Piece) {
        self.recorder.belief(node, authority, piece);
        if let Some((j, p)) = self.traces.as_mut() {
            j.belief(node, authority, piece);
            p.belief(node, authority, piece);
            self.hold_to_limit(piece.end);
        }
    }
    fn overlap(&mut self, authority: Authority, o: &Overlap) {
        self.recorder.overlap(authority, o);
        if let Some((j, p)) = self.traces.as_mut() {
            j.overlap(authority, o);
            p.overlap(authority, o);
            self.hold_to_limit(o.end);
        }
    }
    fn history(&mut self, e: &HistoryEvent) {
        self.client_log.history(e);
        if let Some(h) = self.history.as_mut() {
            h.record(e);
        }
    }
    fn wants_history(&self) -> bool {
        true
    }
    fn refused(&mut self, r: &Refused, e: &TraceEvent) {
        self.client_log.refused(r, e);
        self.recorder.rejected(e);
        if let Some(h) = self.history.as_mut() {
            r.events().iter().for_each(|ev| h.record(ev));
        }
        self.trace(e);
    }
    /// Past the first operations and the first exact marks of a kind, and with no trace or
    /// history written, a refused request or a plain read is only counted: by the engine, in
    /// the recorder's bins.
    fn as_counts(&mut self, what: Countable) -> Option<Tally> {
        let one_by_one = self.traces.is_some() || self.history.is_some();
        if one_by_one || !self.client_log.takes_as_counts() {
            return None;
        }
        self.recorder.tally(what)
    }
    fn counted(&mut self, what: Countable, tally: Tally) {
        self.client_log.add_counted(what, tally.total());
        self.recorder.add_counted(what, &tally);
    }
    fn finish(&mut self, end: SimTime) {
        self.recorder.finish(end);
        if let Some(h) = self.history.as_mut() {
            h.finish(end);
        }
        if let Some((j, p)) = self.traces.as_mut() {
            j.finish(end);
            p.finish(end);
            self.hold_to_limit(end);
        }
    }
}

/// Runs one scenario with its observers and writes its report directory whole; an error says
/// what failed, for the user. The staging directory goes on every error (its guard's drop).
fn run_one(
    l: &Loaded,
    args: &RunArgs,
    registry: &Registry,
    program: &str,
) -> Result<(Summary, Timing), String> {
    let dir = report::run_dir(&args.out, &l.name);
    let io = |e: std::io::Error| format!("cannot write the report of {}: {e}", l.name);
    let staging = ReportDir::begin(&dir, &report::Owner::new("run", &l.name)).map_err(io)?;
    if std::env::var_os(ABORT_AFTER_STAGING).is_some() {
        std::process::abort();
    }
    // The chart's canvas is touched on another core while the run is simulated (its page
    // faults were a third of the bitmap's time), unless the pool's threads run scenarios.
    let canvas = rayon::current_thread_index()
        .is_none()
        .then(|| std::thread::spawn(timeline_canvas));
    let names: Vec<String> = l.scenario.nodes.iter().map(|n| n.name.clone()).collect();
    let traces = if args.trace {
        Some((
            JsonlWriter::create(&staging.path("trace.jsonl"), names.clone()).map_err(io)?,
            PerfettoWriter::create(&staging.path("trace.perfetto.json"), names).map_err(io)?,
        ))
    } else {
        None
    };
    let mut observers = ReportObservers {
        recorder: Recorder::for_scenario(&l.scenario),
        traces,
        trace_limit: args.trace_limit,
        history: args.history.then(History::new),
        client_log: ClientLog::new(),
    };
    #[allow(clippy::disallowed_types)] // wall time for --stats only, never simulated time
    let started = std::time::Instant::now();
    let strategy = registry
        .build(&l.scenario.strategy)
        .expect("validated at load");
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::run_with(&l.name, &l.scenario, strategy, Some(&mut observers))
    }));
    let outcome = match ran {
        Ok(outcome) => outcome.expect("validated at load"),
        Err(payload) => match payload.downcast::<TraceLimitReached>() {
            Ok(reached) => {
                return Err(format!(
                    "{}: --trace: the traces passed --trace-limit, {}, at {} of simulated time \
                     (of {}); the run was stopped and nothing was written (raise \
                     --trace-limit, or run without --trace)",
                    l.source,
                    limit_words(args.trace_limit),
                    crate::time::format_ns(reached.at.ns()),
                    l.scenario.duration
                ))
            }
            Err(other) => std::panic::resume_unwind(other),
        },
    };
    let timing = Timing {
        wall_seconds: started.elapsed().as_secs_f64(),
        mean_in_flight: outcome.mean_in_flight,
    };
    if let Some((jsonl, perfetto)) = observers.traces {
        jsonl.close().map_err(io)?;
        perfetto.close().map_err(io)?;
    }
    let timeline = observers.recorder.into_timeline();
    let trace = args.trace.then_some("trace.perfetto.json");
    // The chart's bitmap (most of a short run's time) is drawn while the page is written, the
    // client log (the page's alone) freed, and the chart's SVG written.
    let scene = timeline_scene(&timeline, &outcome.summary);
    let log = observers.client_log;
    let canvas = canvas.map_or_else(Vec::new, |c| {
        c.join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    let (png, written) = both(
        || scene.png_on(canvas),
        || {
            let page = report::html::run_page(&l.scenario, &outcome, &timeline, &log, trace);
            drop(log);
            staging.write("report.html", page.as_bytes())?;
            staging.write("timeline.svg", scene.svg().as_bytes())
        },
    );
    written.map_err(io)?;
    let s = outcome.summary;
    let rerun = report::rerun_command(program, &s, &l.source, args.strategy.is_some());
    let md = markdown::run_report(&s, &l.scenario, &rerun);
    let mut files = report::run_files(&s, md);
    if let Some(h) = &observers.history {
        files.push(("history.json", h.porcupine_json().into_bytes()));
        files.push(("history.knossos.edn", h.knossos_edn().into_bytes()));
        files.push(("history.elle.edn", h.elle_edn().into_bytes()));
    }
    let written = files
        .into_iter()
        .try_for_each(|(name, bytes)| staging.write(name, &bytes))
        .and_then(|()| staging.write("timeline.png", &png))
        .and_then(|()| staging.commit());
    written.map_err(io)?;
    Ok((s, timing))
}

/// Runs `a` and `b` at once and returns what each returned: on the pool's threads when called
/// from one (as [`run_one`] is when `run` has several scenarios), else `b` on a thread of its
/// own. A panic in either is resumed here.
fn both<RA: Send, RB: Send>(
    a: impl FnOnce() -> RA + Send,
    b: impl FnOnce() -> RB + Send,
) -> (RA, RB) {
    if rayon::current_thread_index().is_some() {
        return rayon::join(a, b);
    }
    std::thread::scope(|scope| {
        let other = scope.spawn(b);
        let ra = a();
        let rb = other
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (ra, rb)
    })
}

/// Set in the environment, `run` aborts (as an allocator that ran out of memory does: no
/// unwinding, no handler) right after it began a report's staging directory. For the tests of
/// what the next run sweeps; nothing else sets it.
pub(crate) const ABORT_AFTER_STAGING: &str = "LEASESIM_TEST_ABORT_AFTER_STAGING";

/// A summary with the wall-clock figures of `--stats` (never written to `summary.json`).
#[derive(serde::Serialize)]
struct WithStats<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    wall_seconds: f64,
    events_per_second: f64,
    mean_in_flight: f64,
}

/// What `--stats` shows of a run beside its summary.
pub(crate) struct Timing {
    wall_seconds: f64,
    /// The mean number of events pending in the engine's queue.
    mean_in_flight: f64,
}

fn stats_line(events: u64, t: &Timing) -> String {
    format!(
        "{events} events in {:.3} s of wall time: {:.0} events/s, {:.1} events in flight on \
         average",
        t.wall_seconds,
        events as f64 / t.wall_seconds.max(1e-9),
        t.mean_in_flight
    )
}

#[cfg(test)]
mod tests {
    use super::both;

    /// Each closure's value comes back in its place, on a thread of its own and on a pool, and
    /// the second closure's panic reaches the caller with its message.
    #[test]
    fn both_returns_each_value_and_resumes_a_panic() {
        assert_eq!(both(|| 1, || "two"), (1, "two"));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        assert_eq!(pool.install(|| both(|| 3, || "four")), (3, "four"));
        let panicked = std::panic::catch_unwind(|| both(|| 5, || -> u8 { panic!("from b") }));
        let payload = panicked.expect_err("the panic of b is resumed");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"from b"));
    }
}
