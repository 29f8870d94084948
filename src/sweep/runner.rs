//! Running a grid's runs (all, or one shard's) in parallel, handing rows over in index order.
//!
//! Runs go to rayon in chunks; each chunk is collected with an indexed collect, so rows reach the
//! sink in run-index order whatever the thread count: results never depend on `--jobs`. Only
//! compact rows are kept, a chunk at a time, so memory does not grow with the number of runs.
//! The progress bar (runs done, cells done, runs/s, eta) draws only on a terminal.

use super::aggregate::RunRow;
use super::grid::Grid;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which runs to do: those whose index `% of == index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub of: u64,
}

impl Shard {
    /// Every run.
    pub const ALL: Shard = Shard { index: 0, of: 1 };

    /// Parses `I/K` with `I < K`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {text:?}: expected I/K with 0 <= I < K, like 0/4");
        let (i, k) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let of: u64 = k.trim().parse().map_err(|_| bad())?;
        if of == 0 || index >= of {
            return Err(bad());
        }
        Ok(Shard { index, of })
    }

    /// How many of a grid's runs this shard does.
    pub fn run_count(self, total: u64) -> u64 {
        if self.index >= total {
            0
        } else {
            (total - self.index - 1) / self.of + 1
        }
    }

    /// How many runs of `cell` (runs `cell * seeds ..` of `seeds`) fall in this shard.
    fn runs_in_cell(self, cell: u64, seeds: u64) -> u64 {
        let k = self.of as u128;
        let first = cell as u128 * seeds as u128;
        let i0 = (self.index as u128 + k - first % k) % k;
        if i0 >= seeds as u128 {
            0
        } else {
            ((seeds as u128 - 1 - i0) / k + 1) as u64
        }
    }
}

/// How to run.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    pub shard: Shard,
    /// Worker threads; `None` for one per core.
    pub jobs: Option<usize>,
    /// Draw a progress bar on stderr if it is a terminal.
    pub progress: bool,
    /// How many of the shard's first runs are done already (a resumed sweep): they are skipped.
    pub skip: u64,
}

/// Runs the shard's runs of `grid` (but the first `opts.skip`), handing each row to `sink` in
/// run-index order. Returns the number of events processed. An error names a run that could not
/// be built.
pub fn run(grid: &Grid, opts: RunOptions, sink: &mut dyn FnMut(RunRow)) -> Result<u64, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.unwrap_or(0))
        .build()
        .map_err(|e| format!("cannot start worker threads: {e}"))?;
    let total = grid.run_count();
    let shard = opts.shard;
    let mine = shard.run_count(total);
    let seeds = grid.spec.seeds;
    let remaining: Vec<AtomicU64> = (0..grid.cell_count() as u64)
        .map(|c| AtomicU64::new(shard.runs_in_cell(c, seeds)))
        .collect();
    let cells_here = remaining
        .iter()
        .filter(|r| r.load(Ordering::Relaxed) > 0)
        .count();
    let skip = opts.skip.min(mine);
    for j in 0..skip {
        let (cell, _) = grid.split(shard.index + j * shard.of);
        remaining[cell].fetch_sub(1, Ordering::Relaxed);
    }
    let cells_done = AtomicU64::new(
        (cells_here
            - remaining
                .iter()
                .filter(|r| r.load(Ordering::Relaxed) > 0)
                .count()) as u64,
    );
    let bar = progress_bar(opts.progress, mine);
    bar.set_position(skip);
    bar.set_message(format!(
        "{}/{cells_here} cells",
        cells_done.load(Ordering::Relaxed)
    ));

    // Small enough that rows reach the sink (and an interrupted sweep's file) every fraction
    // of a second, large enough that the threads rarely wait for each other.
    let chunk = (pool.current_num_threads() as u64 * 64).max(256);
    let mut events = 0u64;
    let mut k = skip; // position among this shard's runs
    while k < mine {
        let n = chunk.min(mine - k);
        let rows: Vec<Result<RunRow, String>> = pool.install(|| {
            (k..k + n)
                .into_par_iter()
                .map(|j| {
                    let index = shard.index + j * shard.of;
                    let row = run_one(grid, index);
                    bar.inc(1);
                    let (cell, _) = grid.split(index);
                    if remaining[cell].fetch_sub(1, Ordering::Relaxed) == 1 {
                        let done = cells_done.fetch_add(1, Ordering::Relaxed) + 1;
                        bar.set_message(format!("{done}/{cells_here} cells"));
                    }
                    row
                })
                .collect()
        });
        for r in rows {
            let r = r.inspect_err(|_| bar.finish_and_clear())?;
            events += r.events;
            sink(r);
        }
        k += n;
    }
    bar.finish_and_clear();
    Ok(events)
}

fn run_one(grid: &Grid, index: u64) -> Result<RunRow, String> {
    let scenario = grid.scenario(index);
    match crate::run(&grid.spec.name, &scenario) {
        Ok(o) => Ok(RunRow::of(index, &o.summary)),
        Err(e) => {
            let (cell, _) = grid.split(index);
            Err(format!(
                "run {index} ({}, seed {}) cannot be built: {e}",
                grid.label(cell),
                scenario.seed
            ))
        }
    }
}

/// A bar on stderr when it is a terminal; a hidden one otherwise (indicatif also hides itself
/// off a terminal, this makes sure).
fn progress_bar(wanted: bool, len: u64) -> ProgressBar {
    if !wanted || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{wide_bar}] {pos}/{len} runs, {msg}, {rate}, eta {eta}",
        )
        .expect("a valid template")
        .with_key(
            "rate",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0} runs/s", s.per_sec());
            },
        )
        .progress_chars("=> "),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::Shard;

    #[test]
    fn shards_partition_the_runs() {
        for of in 1..6u64 {
            let total: u64 = (0..of).map(|i| Shard { index: i, of }.run_count(23)).sum();
            assert_eq!(total, 23);
            for cell in 0..5u64 {
                let per: u64 = (0..of)
                    .map(|i| Shard { index: i, of }.runs_in_cell(cell, 7))
                    .sum();
                assert_eq!(per, 7);
                for i in 0..of {
                    let want = (cell * 7..cell * 7 + 7).filter(|x| x % of == i).count() as u64;
                    assert_eq!(Shard { index: i, of }.runs_in_cell(cell, 7), want);
                }
            }
        }
        assert!(Shard::parse("2/2").is_err());
        assert_eq!(Shard::parse("1/3").unwrap(), Shard { index: 1, of: 3 });
    }
}
