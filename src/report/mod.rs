//! Reports of runs: `summary.json`, `report.md`, and the plain-text summaries the CLI prints.
//!
//! A report directory is written whole or not at all: every file goes into a fresh sibling
//! directory first, which then replaces the old report in one rename; nothing is left aside
//! after an error, a panic or an interrupt ([`staging`]).

#[cfg(feature = "charts")]
pub mod chart;
pub mod markdown;
pub mod staging;
pub mod text;

use crate::outcome::Summary;
use staging::Staged;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub use crate::outcome::Verdict;

/// The command that reproduces a run, as `program` (the command line's name: `leasesim`, or a
/// program of one's own built on `cli::Cli`) runs it.
pub fn rerun_command(
    program: &str,
    s: &Summary,
    source: &str,
    strategy_overridden: bool,
) -> String {
    let mut cmd = format!("{program} run {source} --seed {}", s.seed);
    if strategy_overridden {
        cmd.push_str(&format!(" --strategy '{}'", s.strategy));
    }
    cmd
}

/// A report directory being written: files go into a fresh staging directory beside `dir`,
/// which [`ReportDir::commit`] renames over `dir` in one step. Dropped without a commit (an
/// error, a panic), it removes the staging directory, so a failed report leaves nothing behind
/// and the old one intact; an interrupt removes it too, and what a killed process left for the
/// same `dir` is removed by the next [`ReportDir::begin`] (see [`staging`]).
pub struct ReportDir {
    dir: PathBuf,
    staging: Staged,
}

impl ReportDir {
    pub fn begin(dir: &Path) -> io::Result<ReportDir> {
        let parent = dir.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(parent)?;
        staging::sweep_stale(dir);
        let staging = Staged::dir(parent.join(staging::aside_name(&leaf_of(dir), "tmp")))?;
        Ok(ReportDir {
            dir: dir.to_path_buf(),
            staging,
        })
    }

    /// Where files being written go (for files streamed as the run goes).
    pub fn path(&self, name: &str) -> PathBuf {
        self.staging.path().join(name)
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        fs::write(self.path(name), bytes)
    }

    /// Replaces `dir` with what was written. The old report is set aside as `.NAME.old-PID`
    /// for the moment between the two renames, then removed.
    pub fn commit(self) -> io::Result<()> {
        let parent = self.dir.parent().unwrap_or(Path::new("."));
        let old = parent.join(staging::aside_name(&leaf_of(&self.dir), "old"));
        let dir = self.dir;
        // Under the registry's lock: an interrupt waits until the old report is gone.
        self.staging.commit(|staged| {
            #[cfg(feature = "cli")]
            if std::env::var_os(SIGNAL_IN_COMMIT).is_some() {
                let _ = signal_hook::low_level::raise(signal_hook::consts::SIGTERM);
            }
            let had_old = dir.exists();
            if had_old {
                fs::rename(&dir, &old)?;
            }
            if let Err(e) = fs::rename(staged, &dir) {
                if had_old {
                    let _ = fs::rename(&old, &dir);
                }
                return Err(e);
            }
            if had_old {
                let _ = fs::remove_dir_all(&old);
            }
            Ok(())
        })
    }
}

/// Set in the environment, a report's commit sends the process SIGTERM while it holds the
/// registry's lock (the moment a signal is the hardest to honour: the report goes in place
/// whole, then the process must still exit 143). For the tests; nothing else sets it.
#[cfg(feature = "cli")]
pub const SIGNAL_IN_COMMIT: &str = "LEASESIM_TEST_SIGNAL_IN_COMMIT";

fn leaf_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into())
}

/// Writes `files` (name, content) as the directory `dir`, replacing any old one, whole or not
/// at all.
pub fn write_dir_atomically(dir: &Path, files: &[(&str, Vec<u8>)]) -> io::Result<()> {
    let report = ReportDir::begin(dir)?;
    for (name, bytes) in files {
        report.write(name, bytes)?;
    }
    report.commit()
}

/// The files of one run's report.
pub fn run_files(s: &Summary, report_md: String) -> Vec<(&'static str, Vec<u8>)> {
    let mut json = serde_json::to_vec_pretty(s).expect("a summary serializes");
    json.push(b'\n');
    vec![
        ("summary.json", json),
        ("report.md", report_md.into_bytes()),
    ]
}

/// Where the report of run `name` goes under `out`.
pub fn run_dir(out: &Path, name: &str) -> PathBuf {
    out.join(name)
}
