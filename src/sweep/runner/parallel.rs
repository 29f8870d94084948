//! Runs on a rayon pool, with a progress bar (runs done, cells done, runs/s, eta) on stderr
//! when it is a terminal.

use super::{drive, Progress, RunOptions, Workers};
use crate::sweep::aggregate::RunRow;
use crate::sweep::grid::Grid;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::ops::Range;

/// Runs the shard's runs of `grid` (but the first `opts.skip`) on `opts.jobs` threads, handing
/// each row to `sink` in run-index order. Returns the number of events processed. An error
/// names a run that could not be built, or says that the threads could not start.
pub fn run(grid: &Grid, opts: RunOptions, sink: &mut dyn FnMut(RunRow)) -> Result<u64, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.unwrap_or(0))
        .build()
        .map_err(|e| format!("cannot start worker threads: {e}"))?;
    let bar = progress_bar(opts.progress, opts.shard.run_count(grid.run_count()));
    drive(grid, opts, &Pool(pool), &Bar(bar), sink)
}

struct Pool(rayon::ThreadPool);

impl Workers for Pool {
    fn threads(&self) -> usize {
        self.0.current_num_threads()
    }

    fn map(
        &self,
        range: Range<u64>,
        f: &(dyn Fn(u64) -> Result<RunRow, String> + Sync),
    ) -> Vec<Result<RunRow, String>> {
        // An indexed collect: in range order, whichever thread ran what.
        self.0.install(|| range.into_par_iter().map(f).collect())
    }
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn set_position(&self, pos: u64) {
        self.0.set_position(pos);
    }

    fn inc(&self, n: u64) {
        self.0.inc(n);
    }

    fn set_message(&self, msg: String) {
        self.0.set_message(msg);
    }

    fn finish_and_clear(&self) {
        self.0.finish_and_clear();
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
