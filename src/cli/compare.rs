//! `leasesim compare`: one scenario, several strategies, the same fault schedule. Which
//! strategies `all` means is the library's [`crate::compare`]; here: flags, the runs on the pool,
//! the charts and the files.

use super::{load_all, split_top_level_at, with_strategy, CompareArgs, Loaded};
use crate::compare::{all_strategies, Entry, Row, OWN};
use crate::oracle::Authorities;
use crate::outcome::Summary;
use crate::report::chart::compare::compare_chart;
use crate::report::chart::throughput::throughput_chart;
use crate::report::{self, text};
use crate::scenario::duration::parse_duration;
use crate::scenario::load::{self, LoadError};
use crate::strategy::Registry;
use crate::time::Dur;
use crate::trace::client_log::ClientLog;
use crate::trace::throughput::Throughput;
use crate::trace::timeline::{Recorder, Timeline};
use crate::trace::Tee;
use rayon::prelude::*;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// The most bins a run's [`Throughput`] may have (8 bytes each).
const MAX_BINS: i64 = 1_000_000;

/// The bin of `throughput.png` for a run of `duration`: `--bin` if given (positive, and giving
/// at most [`MAX_BINS`] bins), else 1 ms or the least 1-2-5 multiple of it that does.
fn throughput_bin(given: Option<&str>, duration: Dur) -> Result<Dur, String> {
    let bins = |bin: Dur| (duration.ns().max(1) as u64).div_ceil(bin.ns() as u64);
    let Some(text) = given else {
        let fits = (0..=18u32)
            .flat_map(|exp| [1i64, 2, 5].map(|m| m.checked_mul(10i64.pow(exp))))
            .flatten()
            .filter_map(|m| m.checked_mul(crate::time::NS_PER_MS))
            .map(Dur::from_ns)
            .find(|&b| bins(b) <= MAX_BINS as u64);
        return Ok(fits.unwrap_or(Dur::MAX));
    };
    let bin = parse_duration(text).map_err(|e| format!("--bin {text}: {e}"))?;
    if bin.ns() <= 0 {
        return Err(format!("--bin {text}: must be positive (got {bin})"));
    }
    if bins(bin) > MAX_BINS as u64 {
        let least = Dur::from_ns((duration.ns().max(1) as u64).div_ceil(MAX_BINS as u64) as i64);
        return Err(format!(
            "--bin {text}: a run of {duration} would have {} bins, more than {MAX_BINS}; \
             use at least {least}",
            bins(bin)
        ));
    }
    Ok(bin)
}

/// `leasesim compare`: the scenario of `args` run under each strategy asked for, on the same
/// fault schedule; the report written, the table (or JSON lines) printed. `program`: the name
/// the command line goes by, in the report's rerun line.
pub(crate) fn compare(args: CompareArgs, registry: &Registry, program: &str) -> ExitCode {
    if let Err(code) = super::check_out_dir(&args.out) {
        return code;
    }
    let mut base = match load_all(std::slice::from_ref(&args.scenario), registry, program) {
        Ok(mut l) => l.remove(0),
        Err(code) => return code,
    };
    if let Some(seed) = args.seed {
        base.scenario.seed = seed;
    }
    let dir = args.out.join(format!("{}-compare", base.name));
    let owner = report::Owner::new("compare", &base.name);
    if let Err(code) = super::claim_reports(&[(dir.clone(), owner.clone())], true) {
        return code;
    }
    let bin = match throughput_bin(args.bin.as_deref(), base.scenario.duration) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let all = args.strategies.trim() == "all";
    let specs = if all {
        all_strategies(&base.scenario, registry)
    } else {
        match listed_strategies(&args.strategies, &base, registry) {
            Some(specs) => specs,
            None => return ExitCode::from(2),
        }
    };
    let Some(runs) = fitting_runs(&specs, &base, all, registry) else {
        return ExitCode::from(2);
    };
    let Recorded {
        runs: recorded,
        throughputs,
        logs,
    } = run_each(&runs, bin, registry);
    let chart = compare_chart(
        &format!("{}: the same fault schedule under each strategy", base.name),
        &recorded,
    );
    let per_run: Vec<(String, &Throughput)> = recorded
        .iter()
        .zip(&throughputs)
        .map(|((label, _, _), tp)| (label.clone(), tp))
        .collect();
    let throughput = throughput_chart(
        &format!("{}: reads and writes under each strategy", base.name),
        &per_run,
    );
    let origins: Vec<&str> = runs.iter().map(|(_, o)| o.as_str()).collect();
    let page = compare_page(&base, &runs, &recorded, &logs);
    let results: Vec<Summary> = recorded.into_iter().map(|(_, _, s)| s).collect();
    let rows: Vec<Vec<String>> = results
        .iter()
        .zip(&origins)
        .map(|(s, o)| text::compare_row(s, o))
        .collect();
    let json_rows: Vec<Row> = results
        .iter()
        .zip(&origins)
        .map(|(summary, origin)| Row { origin, summary })
        .collect();
    let table = text::table(&text::COMPARE_HEADER, &rows);
    let md = compare_md(&base, &args.strategies, &table, program);
    let mut json = serde_json::to_vec_pretty(&json_rows).expect("summaries serialize");
    json.push(b'\n');
    if let Err(e) = report::write_dir_atomically(
        &dir,
        &owner,
        &[
            ("compare.json", json),
            ("compare.md", md.into_bytes()),
            ("compare.svg", chart.svg.into_bytes()),
            ("compare.png", chart.png),
            ("throughput.svg", throughput.svg.into_bytes()),
            ("throughput.png", throughput.png),
            ("report.html", page.into_bytes()),
        ],
    ) {
        eprintln!("error: cannot write the report {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let terminal = text::table(&text::COMPARE_HEADER, &text::with_strategies_cut(&rows, 0));
    print_results(args.json, &base, &json_rows, &terminal, &dir);
    ExitCode::SUCCESS
}

/// The strategies of `--strategies LIST` (not `all`), each with its origin (the scenario's
/// own, or "as given"); `None` after reporting every bad item, each by its own text and place
/// in the list.
fn listed_strategies(list: &str, base: &Loaded, registry: &Registry) -> Option<Vec<Entry>> {
    let mut specs = Vec::new();
    let mut bad = false;
    for (item, (at, part)) in split_top_level_at(list).into_iter().enumerate() {
        match load::strategy_in_list(list, item, at, &part, registry) {
            Ok(s) => {
                let origin = if s == base.scenario.strategy {
                    OWN
                } else {
                    "as given"
                };
                specs.push(Entry::new(s, origin));
            }
            // Every bad item is reported, each by its own text and place in the list.
            Err(e) => {
                eprintln!("error: {e}");
                bad = true;
            }
        }
    }
    (!bad).then_some(specs)
}

/// The scenario `base` under each of `specs`, with its origin; `None` after reporting why
/// one does not fit. Under `all`, the strategies the scenario does not fit are left out with a
/// note instead, as long as one fits.
fn fitting_runs(
    specs: &[Entry],
    base: &Loaded,
    all: bool,
    registry: &Registry,
) -> Option<Vec<(Loaded, String)>> {
    let mut runs = Vec::new();
    let mut failed = false;
    let mut unfit: Vec<(String, LoadError)> = Vec::new();
    for entry in specs {
        let mut l = Loaded {
            name: base.name.clone(),
            source: base.source.clone(),
            scenario: base.scenario.clone(),
        };
        entry.apply(&mut l.scenario);
        match with_strategy(&mut l, &entry.strategy, registry) {
            Ok(()) => runs.push((l, entry.origin.clone())),
            // `all` leaves out the strategies the scenario does not fit (a protocol of one's
            // own may take other roles than the built-in ones), as long as one fits.
            Err(e) if all => unfit.push((entry.strategy.to_ron(), e)),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    if all && runs.is_empty() {
        for (_, e) in unfit.drain(..) {
            eprintln!("error: {e}");
        }
        failed = true;
    }
    if failed {
        return None;
    }
    for (spec, e) in unfit {
        let why = match e {
            LoadError::Invalid { problems, .. } => problems.join("; "),
            other => other.to_string(),
        };
        eprintln!("note: left out {spec}, which does not fit the scenario: {why}");
    }
    Some(runs)
}

/// Each of `runs`, on the pool: its label, timeline and summary, and its throughput in bins
/// of `bin`, in the order of `runs`.
fn run_each(runs: &[(Loaded, String)], bin: Dur, registry: &Registry) -> Recorded {
    let each: Vec<_> = runs
        .par_iter()
        .map(|(l, origin)| {
            let strategy = registry
                .build(&l.scenario.strategy)
                .expect("validated at load");
            let log = ClientLog::keeping(COMPARE_OPS_KEPT, COMPARE_HARMFUL_KEPT);
            let mut observers = Tee(
                Recorder::for_scenario(&l.scenario),
                Tee(Throughput::new(bin), log),
            );
            let outcome = crate::run_with(&l.name, &l.scenario, strategy, Some(&mut observers))
                .expect("validated at load");
            let Tee(recorder, Tee(throughput, log)) = observers;
            let label = format!("{} ({origin})", l.scenario.strategy.to_ron());
            (
                (label, recorder.into_timeline(), outcome.summary),
                (throughput, (log, outcome.authorities)),
            )
        })
        .collect();
    let (runs, rest): (Vec<_>, Vec<_>) = each.into_iter().unzip();
    let (throughputs, logs) = rest.into_iter().unzip();
    Recorded {
        runs,
        throughputs,
        logs,
    }
}

/// What [`run_each`] recorded of each run, in the order of the runs: its label, timeline and
/// summary; its throughput; its client history for the page.
struct Recorded {
    runs: Vec<(String, Timeline, Summary)>,
    throughputs: Vec<Throughput>,
    /// Each run's client log and what its protocol claimed of its authorities.
    logs: Vec<(ClientLog, Authorities)>,
}

/// Client operations each strategy's run keeps for the page one by one, from its start and
/// harmful ones past them: fewer than a run's own page, as a comparison draws many runs.
const COMPARE_OPS_KEPT: usize = 1_000;
const COMPARE_HARMFUL_KEPT: usize = 250;

/// `report.html` of a comparison: the table of the runs, and each run drawn (a picker chooses).
fn compare_page(
    base: &Loaded,
    runs: &[(Loaded, String)],
    recorded: &[(String, Timeline, Summary)],
    logs: &[(ClientLog, Authorities)],
) -> String {
    use crate::report::html::{run_data::RunData, tables, Page, PageKind};
    let rows: Vec<(&Summary, &str)> = recorded
        .iter()
        .zip(runs)
        .map(|((_, _, s), (_, origin))| (s, origin.as_str()))
        .collect();
    let data = recorded
        .iter()
        .zip(runs)
        .zip(logs)
        .map(|(((label, tl, s), (l, _)), (log, claims))| {
            RunData::of(label, &l.scenario, (s, *claims), tl, log, None)
        })
        .collect();
    let mut lines = crate::report::html::run_lines(&base.scenario);
    lines.push(format!(
        "Seed {}, the same fault schedule for every row.",
        base.scenario.seed
    ));
    Page {
        kind: PageKind::Compare,
        title: format!("{}: strategies compared", base.name),
        lines,
        table: Some(tables::compare_table(&rows)),
        runs: data,
    }
    .html()
}

/// `compare.md`: the table of the runs, the charts, and the command that reruns them
/// (`strategies` as given, under the name `program`).
fn compare_md(base: &Loaded, strategies: &str, table: &str, program: &str) -> String {
    use crate::report::markdown::{code, escape, fence};
    let fence = fence(table);
    let mut md = format!(
        "# {}: strategies compared\n\n{}\n\nSeed {}, the same fault schedule for every row.\n\n{fence}\n{table}{fence}\n\n![strategies compared](compare.png)\n\n![reads and writes per ms](throughput.png)\n",
        escape(&base.name),
        escape(&base.scenario.description),
        base.scenario.seed
    );
    use crate::shell::word;
    let rerun = format!(
        "{} compare {} --seed {} --strategies {}",
        word(program),
        word(&base.source),
        base.scenario.seed,
        word(strategies)
    );
    md.push_str(&format!("\nRerun: {}\n", code(&rerun)));
    md
}

/// Prints the comparison: one JSON line per row with `json`, else the table and where the
/// report is.
fn print_results(json: bool, base: &Loaded, json_rows: &[Row], table: &str, dir: &Path) {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if json {
        for r in json_rows {
            let _ = writeln!(out, "{}", serde_json::to_string(r).expect("serializes"));
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
}

#[cfg(test)]
mod tests {
    use super::super::split_top_level;
    use super::throughput_bin;
    use crate::time::Dur;

    #[test]
    fn the_bin_is_1ms_unless_given_or_the_run_is_too_long_for_it() {
        let s = Dur::from_secs;
        assert_eq!(throughput_bin(None, s(60)), Ok(Dur::from_ms(1)));
        // 1000 s is exactly 1000000 bins of 1 ms; 1000.001 s needs 2 ms; an hour, 5 ms.
        assert_eq!(throughput_bin(None, s(1000)), Ok(Dur::from_ms(1)));
        let just_over = s(1000) + Dur::from_ms(1);
        assert_eq!(throughput_bin(None, just_over), Ok(Dur::from_ms(2)));
        assert_eq!(throughput_bin(None, s(3600)), Ok(Dur::from_ms(5)));
        assert_eq!(throughput_bin(Some("250us"), s(60)), Ok(Dur::from_us(250)));
        for (bad, says) in [
            ("0s", "must be positive"),
            ("-1ms", "must be positive"),
            ("fast", "--bin fast: "),
            ("1us", "60000000 bins, more than 1000000; use at least 60us"),
        ] {
            let e = throughput_bin(Some(bad), s(60)).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

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
