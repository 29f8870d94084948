//! Parameter sweeps: a grid of scenario variants times seeds, run in
//! parallel (feature `parallel`; one after another without it, with the same results),
//! aggregated per cell, written as CSV, a report and charts.
//!
//! - [`path`]: field paths and setting a value in a scenario (through serde JSON).
//! - [`ron_value`]: RON value text to JSON, keeping enum variant names.
//! - [`grid`]: the definition ([`SweepSpec`]), every cell built and validated, run indices.
//! - [`runner`]: runs in index order, on a pool or on the calling thread; shards; the progress
//!   bar.
//! - [`aggregate`]: per-run rows and per-cell statistics (Wilson intervals).
//! - [`files`]: `results.csv`, `runs.csv`, partial files and reading them back.
//! - [`resume`]: the in-progress file that lets an interrupted sweep or shard resume.
//! - [`report`](mod@report): the report, `report.md`.
//!
//! Runs are indexed `cell * seeds + i`, so a sweep split into shards and merged gives the same
//! bytes as one run. Nothing here prints, and only [`resume`] touches files (its in-progress
//! file): the CLI writes the outputs.

pub mod aggregate;
pub mod files;
pub mod grid;
pub mod path;
pub mod reference;
pub mod report;
pub mod resume;
pub mod ron_value;
pub mod runner;

pub use aggregate::{CellStats, Judgement, RunRow};
pub use grid::{Grid, SweepSpec};
pub use runner::{RunOptions, Shard};

use std::io::Write;

/// Everything a merge of partial files produced, before it is written.
pub struct Collected {
    /// Per cell, in grid order.
    pub stats: Vec<CellStats>,
    /// `runs.csv`.
    pub runs_csv: Vec<u8>,
}

/// Folds rows, arriving in run-index order, into cell statistics and `runs.csv` rows written
/// to `W` as they come (memory stays flat however many runs).
pub struct Collector<'g, W: Write> {
    grid: &'g Grid,
    stats: Vec<CellStats>,
    runs: files::RunsWriter<'g, W>,
}

impl<'g, W: Write> Collector<'g, W> {
    pub fn new(grid: &'g Grid, runs_out: W) -> Collector<'g, W> {
        Collector {
            grid,
            stats: vec![CellStats::default(); grid.cell_count()],
            runs: files::RunsWriter::new(grid, runs_out),
        }
    }

    /// Continues a resumed sweep: `stats` holds the runs already on disk, and `runs_out`
    /// appends to a `runs.csv` that has its header and those runs.
    pub fn continuing(grid: &'g Grid, stats: Vec<CellStats>, runs_out: W) -> Collector<'g, W> {
        assert_eq!(stats.len(), grid.cell_count());
        Collector {
            grid,
            stats,
            runs: files::RunsWriter::continuing(grid, runs_out),
        }
    }

    pub fn push(&mut self, r: RunRow) {
        let (cell, _) = self.grid.split(r.index);
        self.stats[cell].push(&r);
        self.runs.push(&r);
    }

    /// Writes the rows pushed so far through to the writer.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.runs.flush()
    }

    /// The cell statistics in grid order, and the `runs.csv` writer, flushed.
    pub fn finish(self) -> std::io::Result<(Vec<CellStats>, W)> {
        let out = self.runs.finish()?;
        Ok((self.stats, out))
    }
}

/// Runs every run of `grid`, streaming `runs.csv` to `runs_out`; returns the cell statistics
/// and the events processed.
pub fn run_all<W: Write>(
    grid: &Grid,
    jobs: Option<usize>,
    progress: bool,
    runs_out: W,
) -> Result<(Vec<CellStats>, u64), String> {
    let mut c = Collector::new(grid, runs_out);
    let events = runner::run(
        grid,
        RunOptions {
            shard: Shard::ALL,
            jobs,
            progress,
            skip: 0,
        },
        &mut |r| c.push(r),
    )?;
    let (stats, mut out) = c.finish().map_err(|e| format!("runs.csv: {e}"))?;
    out.flush().map_err(|e| format!("runs.csv: {e}"))?;
    Ok((stats, events))
}

/// Runs the runs of `shard` that `file` does not hold yet, appending them to it as they finish;
/// `stats` holds the cell statistics of the runs in it already, and gets the new ones. Returns
/// the events of the runs done now.
pub fn run_into(
    grid: &Grid,
    shard: Shard,
    jobs: Option<usize>,
    progress: bool,
    file: &resume::InProgress,
    stats: &mut Vec<CellStats>,
) -> Result<u64, String> {
    let shown = file.path().display().to_string();
    let mut c = Collector::continuing(grid, std::mem::take(stats), file.appender());
    let mut pushed = 0u64;
    let mut flushed = Ok(());
    let events = runner::run(
        grid,
        RunOptions {
            shard,
            jobs,
            progress,
            skip: file.done,
        },
        &mut |r| {
            c.push(r);
            // On disk every 256 runs: an interruption loses at most those.
            pushed += 1;
            if pushed.is_multiple_of(256) && flushed.is_ok() {
                flushed = c.flush();
            }
        },
    )?;
    flushed.map_err(|e| format!("{shown}: {e}"))?;
    let (done, mut out) = c.finish().map_err(|e| format!("{shown}: {e}"))?;
    out.flush().map_err(|e| format!("{shown}: {e}"))?;
    *stats = done;
    Ok(events)
}

/// Merges partial files (`(source, text)`) into the grid they share and its results.
/// Every problem is returned: files of different sweeps, missing or doubled shards, missing or
/// unexpected runs. The sweep's strategy must be a built-in one.
pub fn merge(partials: &[(String, String)]) -> Result<(Grid, Collected), Vec<String>> {
    merge_in(partials, &crate::strategy::Registry::new())
}

/// [`merge`], with the strategies of `registry`.
pub fn merge_in(
    partials: &[(String, String)],
    registry: &crate::strategy::Registry,
) -> Result<(Grid, Collected), Vec<String>> {
    let mut problems = Vec::new();
    let mut read = Vec::new();
    for (source, text) in partials {
        match files::read_partial(source, text) {
            Ok(p) => read.push((source.as_str(), p)),
            Err(e) => problems.push(e),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let Some((first_src, first)) = read.first() else {
        return Err(vec!["no partial files to merge".into()]);
    };
    let of = first.of;
    let mut by_shard: Vec<Option<usize>> = vec![None; of as usize];
    for (k, (src, p)) in read.iter().enumerate() {
        if p.spec_json != first.spec_json {
            problems.push(format!(
                "{src}: a different sweep from {first_src} (scenario, --vary, --seeds or --seed differ)"
            ));
            continue;
        }
        if p.of != of {
            problems.push(format!(
                "{src}: shard {}/{} does not belong to a split into {of} like {first_src}",
                p.shard, p.of
            ));
            continue;
        }
        match by_shard.get_mut(p.shard as usize) {
            Some(slot @ None) => *slot = Some(k),
            Some(Some(other)) => problems.push(format!(
                "{src}: shard {}/{of} is also in {}",
                p.shard, read[*other].0
            )),
            None => problems.push(format!("{src}: shard {} is not below {of}", p.shard)),
        }
    }
    let missing: Vec<String> = by_shard
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| files::partial_name(i as u64, of))
        .collect();
    if !missing.is_empty() {
        problems.push(format!("missing shards: {}", missing.join(", ")));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let grid = Grid::build_in(first.spec.clone(), registry)?;
    let mut rows = Vec::with_capacity(of as usize);
    for slot in &by_shard {
        let (src, p) = &read[slot.expect("checked")];
        match files::parse_runs(src, &grid, &p.body) {
            Ok(r) => rows.push(r),
            Err(e) => problems.push(e),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut c = Collector::new(&grid, Vec::new());
    for index in 0..grid.run_count() {
        let shard = (index % of) as usize;
        let at = (index / of) as usize;
        match rows[shard].get(at) {
            Some(r) if r.index == index => c.push(*r),
            _ => {
                let src = read[by_shard[shard].expect("checked")].0;
                return Err(vec![format!(
                    "{src}: run {index} is missing or out of order \
                     (shard {shard} holds runs {shard}, {shard}+{of}, ...)"
                )]);
            }
        }
    }
    for (shard, r) in rows.iter().enumerate() {
        let expected = Shard {
            index: shard as u64,
            of,
        }
        .run_count(grid.run_count());
        if r.len() as u64 != expected {
            return Err(vec![format!(
                "{}: {} runs, but shard {shard}/{of} has {expected}",
                read[by_shard[shard].expect("checked")].0,
                r.len()
            )]);
        }
    }
    let (stats, runs_csv) = c.finish().map_err(|e| vec![format!("runs.csv: {e}")])?;
    Ok((grid, Collected { stats, runs_csv }))
}
