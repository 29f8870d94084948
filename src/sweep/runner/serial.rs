//! Runs one after another on the calling thread, with no progress bar: the same rows in the
//! same order as on a thread pool, so the same results to the byte. What a library built
//! without the `parallel` feature runs, and available to one built with it.

use super::{drive, Progress, RunOptions, Workers};
use crate::sweep::aggregate::RunRow;
use crate::sweep::grid::Grid;
use std::ops::Range;

/// Runs the shard's runs of `grid` (but the first `opts.skip`) on the calling thread, handing
/// each row to `sink` in run-index order (`opts.jobs` and `opts.progress` are not used).
/// Returns the number of events processed. An error names a run that could not be built.
pub fn run(grid: &Grid, opts: RunOptions, sink: &mut dyn FnMut(RunRow)) -> Result<u64, String> {
    drive(grid, opts, &OneThread, &Silent, sink)
}

struct OneThread;

impl Workers for OneThread {
    fn threads(&self) -> usize {
        1
    }

    fn map(
        &self,
        range: Range<u64>,
        f: &(dyn Fn(u64) -> Result<RunRow, String> + Sync),
    ) -> Vec<Result<RunRow, String>> {
        range.map(f).collect()
    }
}

struct Silent;

impl Progress for Silent {
    fn set_position(&self, _: u64) {}
    fn inc(&self, _: u64) {}
    fn set_message(&self, _: String) {}
    fn finish_and_clear(&self) {}
}
