//! `leasesim run`: run scenarios, write their reports, print a block or a verdict table.

use super::{bad_input, load_all, with_strategy, Loaded, RunArgs};
use crate::msg::NodeId;
use crate::oracle::authority::Authority;
use crate::oracle::{Overlap, Piece};
use crate::outcome::Summary;
use crate::report::chart::timeline::timeline_chart;
use crate::report::{self, markdown, text, ReportDir};
use crate::scenario::{library, load};
use crate::strategy::Registry;
use crate::time::SimTime;
use crate::trace::jsonl::JsonlWriter;
use crate::trace::perfetto::PerfettoWriter;
use crate::trace::timeline::Recorder;
use crate::trace::{Observer, TraceEvent};
use rayon::prelude::*;
use std::io::Write;
use std::process::ExitCode;

pub(crate) fn run(args: RunArgs, registry: &Registry) -> ExitCode {
    let names: Vec<String> = if args.all || args.scenarios.is_empty() {
        let mut v: Vec<String> = library::names().iter().map(|s| s.to_string()).collect();
        v.extend(args.scenarios.iter().cloned());
        v
    } else {
        args.scenarios.clone()
    };
    let names = without_repeats(names);
    let mut loaded = match load_all(&names, registry) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Err(code) = refuse_name_clashes(&loaded) {
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

    let results: Vec<Result<(Summary, f64), String>> = loaded
        .par_iter()
        .map(|l| run_one(l, &args, registry).map_err(|e| format!("{}: {e}", l.name)))
        .collect();
    let mut results_ok = Vec::new();
    let mut write_failed = false;
    for r in results {
        match r {
            Ok(r) => results_ok.push(r),
            Err(e) => {
                eprintln!("error: cannot write the report of {e}");
                write_failed = true;
            }
        }
    }
    if write_failed {
        return ExitCode::from(2);
    }
    let results = results_ok;

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

/// What watches a run for its report: the chart's recorder, and the trace writers if asked.
struct ReportObservers {
    recorder: Recorder,
    traces: Option<(JsonlWriter, PerfettoWriter)>,
}

impl Observer for ReportObservers {
    fn event(&mut self, e: &TraceEvent) {
        self.recorder.event(e);
        if let Some((j, p)) = self.traces.as_mut() {
            j.event(e);
            p.event(e);
        }
    }
    fn belief(&mut self, node: NodeId, authority: Authority, piece: &Piece) {
        self.recorder.belief(node, authority, piece);
        if let Some((j, p)) = self.traces.as_mut() {
            j.belief(node, authority, piece);
            p.belief(node, authority, piece);
        }
    }
    fn overlap(&mut self, authority: Authority, o: &Overlap) {
        self.recorder.overlap(authority, o);
        if let Some((j, p)) = self.traces.as_mut() {
            j.overlap(authority, o);
            p.overlap(authority, o);
        }
    }
    fn finish(&mut self, end: SimTime) {
        self.recorder.finish(end);
        if let Some((j, p)) = self.traces.as_mut() {
            j.finish(end);
            p.finish(end);
        }
    }
}

/// Runs one scenario with its observers and writes its report directory whole.
fn run_one(l: &Loaded, args: &RunArgs, registry: &Registry) -> std::io::Result<(Summary, f64)> {
    let dir = report::run_dir(&args.out, &l.name);
    let staging = ReportDir::begin(&dir)?;
    let names: Vec<String> = l.scenario.nodes.iter().map(|n| n.name.clone()).collect();
    let traces = if args.trace {
        Some((
            JsonlWriter::create(&staging.path("trace.jsonl"), names.clone())?,
            PerfettoWriter::create(&staging.path("trace.perfetto.json"), names)?,
        ))
    } else {
        None
    };
    let mut observers = ReportObservers {
        recorder: Recorder::for_scenario(&l.scenario),
        traces,
    };
    #[allow(clippy::disallowed_types)] // wall time for --stats only, never simulated time
    let started = std::time::Instant::now();
    let strategy = registry
        .build(&l.scenario.strategy)
        .expect("validated at load");
    let outcome = crate::run_with(&l.name, &l.scenario, strategy, Some(&mut observers))
        .expect("validated at load");
    let secs = started.elapsed().as_secs_f64();
    if let Some((jsonl, perfetto)) = observers.traces {
        jsonl.close()?;
        perfetto.close()?;
    }
    let s = outcome.summary;
    let timeline = observers.recorder.into_timeline();
    let rerun = report::rerun_command(&s, &l.source, args.strategy.is_some());
    let md = markdown::run_report(&s, &l.scenario, &rerun);
    for (name, bytes) in report::run_files(&s, md) {
        staging.write(name, &bytes)?;
    }
    let chart = timeline_chart(&timeline, &s);
    staging.write("timeline.svg", chart.svg.as_bytes())?;
    staging.write("timeline.png", &chart.png)?;
    staging.commit()?;
    Ok((s, secs))
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
