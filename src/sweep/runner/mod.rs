//! Running a grid's runs (all, or one shard's), handing rows over in index order.
//!
//! Runs go out in chunks; each chunk's rows come back in run-index order however they were
//! computed, so rows reach the sink in run-index order whatever the thread count: results never
//! depend on `--jobs`, nor on whether the runs went to a thread pool (`parallel`, feature
//! `parallel`: rayon, and a progress bar that draws only on a terminal) or ran one after another
//! on the calling thread ([`serial`]). [`run`] is the first when the feature is on, the second
//! otherwise. Only compact rows are kept, a chunk at a time, so memory does not grow with the
//! number of runs.

use super::aggregate::RunRow;
use super::grid::Grid;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(feature = "parallel")]
pub mod parallel;
pub mod serial;

#[cfg(feature = "parallel")]
pub use parallel::run;
#[cfg(not(feature = "parallel"))]
pub use serial::run;

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

    /// Parses `I/K`, or `auto/K` with I taken from the batch system through `env`: a
    /// Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` or a Slurm job array's
    /// `SLURM_ARRAY_TASK_ID` (0-based: `--array=0-{K-1}`).
    pub fn parse_with_env(
        text: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Shard, String> {
        let Some(k) = text.strip_prefix("auto/") else {
            return Shard::parse(text);
        };
        let found: Vec<(&str, String)> = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"]
            .into_iter()
            .filter_map(|v| env(v).map(|i| (v, i.trim().to_string())))
            .collect();
        let index = match found.as_slice() {
            [] => {
                return Err(format!(
                    "--shard {text:?}: auto takes the shard index from JOB_COMPLETION_INDEX \
                     (a Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (a Slurm job array), \
                     and neither is set"
                ))
            }
            [(_, i)] => i.clone(),
            [(_, i), (_, j)] if i == j => i.clone(),
            [(a, i), (b, j), ..] => {
                return Err(format!(
                    "--shard {text:?}: {a}={i} and {b}={j} disagree; unset one"
                ))
            }
        };
        let (name, _) = &found[0];
        let shard = Shard::parse(&format!("{index}/{k}")).map_err(|_| {
            format!(
                "--shard {text:?}: {name}={index} is not a shard index below {k} (number the \
                 job's tasks from 0: Kubernetes does; with Slurm, --array=0-N where N = K - 1)"
            )
        })?;
        Ok(shard)
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
    /// Worker threads; `None` for one per core. (Ignored by [`serial::run`].)
    pub jobs: Option<usize>,
    /// Draw a progress bar on stderr if it is a terminal. (Ignored by [`serial::run`].)
    pub progress: bool,
    /// How many of the shard's first runs are done already (a resumed sweep): they are skipped.
    pub skip: u64,
}

/// How the runs of a chunk are computed.
trait Workers {
    /// How many runs go at once.
    fn threads(&self) -> usize;
    /// `f` of every position in `range`, in that order.
    fn map(
        &self,
        range: Range<u64>,
        f: &(dyn Fn(u64) -> Result<RunRow, String> + Sync),
    ) -> Vec<Result<RunRow, String>>;
}

/// What is shown of the progress (nothing, or a bar).
trait Progress: Sync {
    fn set_position(&self, pos: u64);
    fn inc(&self, n: u64);
    fn set_message(&self, msg: String);
    fn finish_and_clear(&self);
}

/// Runs the shard's runs of `grid` (but the first `opts.skip`) on `workers`, handing each row
/// to `sink` in run-index order. Returns the number of events processed. An error names a run
/// that could not be built.
fn drive(
    grid: &Grid,
    opts: RunOptions,
    workers: &impl Workers,
    bar: &impl Progress,
    sink: &mut dyn FnMut(RunRow),
) -> Result<u64, String> {
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
    bar.set_position(skip);
    bar.set_message(format!(
        "{}/{cells_here} cells",
        cells_done.load(Ordering::Relaxed)
    ));

    // Small enough that rows reach the sink (and an interrupted sweep's file) every fraction
    // of a second, large enough that the threads rarely wait for each other.
    let chunk = (workers.threads() as u64 * 64).max(256);
    let mut events = 0u64;
    let mut k = skip; // position among this shard's runs
    while k < mine {
        let n = chunk.min(mine - k);
        let rows = workers.map(k..k + n, &|j| {
            let index = shard.index + j * shard.of;
            let row = run_one(grid, index);
            bar.inc(1);
            let (cell, _) = grid.split(index);
            if remaining[cell].fetch_sub(1, Ordering::Relaxed) == 1 {
                let done = cells_done.fetch_add(1, Ordering::Relaxed) + 1;
                bar.set_message(format!("{done}/{cells_here} cells"));
            }
            row
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
    let built = grid
        .registry
        .build(&scenario.strategy)
        .map_err(|e| crate::BuildError {
            problems: vec![format!("strategy: {e}")],
        });
    match built.and_then(|strategy| crate::run_with(&grid.spec.name, &scenario, strategy, None)) {
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

#[cfg(test)]
mod tests {
    #[test]
    fn auto_takes_the_shard_index_from_the_batch_system() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |v: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == v)
                    .map(|(_, x)| x.to_string())
            }
        };
        let k8s = env(&[("JOB_COMPLETION_INDEX", "2")]);
        assert_eq!(
            Shard::parse_with_env("auto/4", k8s),
            Ok(Shard { index: 2, of: 4 })
        );
        let slurm = env(&[("SLURM_ARRAY_TASK_ID", "3")]);
        assert_eq!(
            Shard::parse_with_env("auto/4", slurm),
            Ok(Shard { index: 3, of: 4 })
        );
        let both = env(&[("JOB_COMPLETION_INDEX", "1"), ("SLURM_ARRAY_TASK_ID", "1")]);
        assert_eq!(
            Shard::parse_with_env("auto/4", both),
            Ok(Shard { index: 1, of: 4 })
        );
        let disagree = env(&[("JOB_COMPLETION_INDEX", "1"), ("SLURM_ARRAY_TASK_ID", "2")]);
        assert!(Shard::parse_with_env("auto/4", disagree)
            .unwrap_err()
            .contains("disagree"));
        let none = env(&[]);
        assert!(Shard::parse_with_env("auto/4", none)
            .unwrap_err()
            .contains("neither is set"));
        // A 1-based Slurm array's last task is out of range, with the fix in the message.
        let one_based = env(&[("SLURM_ARRAY_TASK_ID", "4")]);
        assert!(Shard::parse_with_env("auto/4", one_based)
            .unwrap_err()
            .contains("--array=0-N"));
        assert_eq!(
            Shard::parse_with_env("1/3", env(&[])),
            Ok(Shard { index: 1, of: 3 })
        );
    }

    use super::*;

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

    /// The serial runner a library without `parallel` gets hands over the very rows the pool
    /// does, so every file written from them has the same bytes.
    #[cfg(feature = "parallel")]
    #[test]
    fn a_pool_and_one_thread_hand_over_the_same_rows() {
        let name = "sweep-drift-boundary";
        let text = crate::scenario::library::text(name).expect("bundled");
        let scenario = crate::scenario::load::from_text(name, text).expect("valid");
        let grid = Grid::build(crate::sweep::SweepSpec {
            name: name.into(),
            source: name.into(),
            scenario,
            vary: vec![("epsilon".into(), vec!["2ms".into(), "8ms".into()])],
            seeds: 3,
            references: Vec::new(),
        })
        .expect("a valid grid");
        type Runner = fn(&Grid, RunOptions, &mut dyn FnMut(RunRow)) -> Result<u64, String>;
        for (shard, skip) in [(Shard::ALL, 0), (Shard { index: 1, of: 2 }, 1)] {
            let rows = |run: Runner| {
                let mut rows = Vec::new();
                let opts = RunOptions {
                    shard,
                    jobs: Some(2),
                    progress: false,
                    skip,
                };
                let events = run(&grid, opts, &mut |r| rows.push(r)).expect("runs");
                (rows, events)
            };
            let (pool, one) = (rows(parallel::run), rows(serial::run));
            assert_eq!(pool.0.len() as u64, shard.run_count(6) - skip);
            assert!(pool.1 > 0);
            assert_eq!(pool, one);
        }
    }
}
