//! Reports of runs: `summary.json`, `report.md`, and the plain-text summaries the CLI prints.
//!
//! A report directory is written whole or not at all: every file goes into a fresh sibling
//! directory first, which then replaces the old report in one rename.

pub mod chart;
pub mod markdown;
pub mod text;

use crate::outcome::Summary;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// What a run's verdict is, in one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Two or more nodes believed at once.
    Overlap,
    /// No overlap, but harm was done (a checked request landed late: the check-then-act gap).
    Harm,
    /// No overlap and no harm.
    Safe,
}

impl Verdict {
    pub fn of(s: &Summary) -> Verdict {
        if s.overlap.count > 0 {
            Verdict::Overlap
        } else if s.zombie_actions + s.stale_reads + s.unsafe_writes > 0 {
            Verdict::Harm
        } else {
            Verdict::Safe
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Overlap => "OVERLAP",
            Verdict::Harm => "HARM",
            Verdict::Safe => "SAFE",
        }
    }
}

/// The command that reproduces a run.
pub fn rerun_command(s: &Summary, source: &str, strategy_overridden: bool) -> String {
    let mut cmd = format!("leasesim run {source} --seed {}", s.seed);
    if strategy_overridden {
        cmd.push_str(&format!(" --strategy '{}'", s.strategy));
    }
    cmd
}

/// A report directory being written: files go into a fresh staging directory beside `dir`,
/// which [`ReportDir::commit`] renames over `dir` in one step. Dropped without a commit, it
/// removes the staging directory, so a failed report leaves nothing behind and the old one intact.
pub struct ReportDir {
    dir: PathBuf,
    staging: PathBuf,
    committed: bool,
}

impl ReportDir {
    pub fn begin(dir: &Path) -> io::Result<ReportDir> {
        let parent = dir.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(parent)?;
        let leaf = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "report".into());
        let staging = parent.join(format!(".{leaf}.tmp-{}", std::process::id()));
        let _ = fs::remove_dir_all(&staging);
        fs::create_dir_all(&staging)?;
        Ok(ReportDir {
            dir: dir.to_path_buf(),
            staging,
            committed: false,
        })
    }

    /// Where files being written go (for files streamed as the run goes).
    pub fn path(&self, name: &str) -> PathBuf {
        self.staging.join(name)
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        fs::write(self.path(name), bytes)
    }

    /// Replaces `dir` with what was written.
    pub fn commit(mut self) -> io::Result<()> {
        let parent = self.dir.parent().unwrap_or(Path::new("."));
        let leaf = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let old = parent.join(format!(
            ".{}.old-{}",
            leaf.unwrap_or_default(),
            std::process::id()
        ));
        let had_old = self.dir.exists();
        if had_old {
            fs::rename(&self.dir, &old)?;
        }
        if let Err(e) = fs::rename(&self.staging, &self.dir) {
            if had_old {
                let _ = fs::rename(&old, &self.dir);
            }
            return Err(e);
        }
        self.committed = true;
        if had_old {
            let _ = fs::remove_dir_all(&old);
        }
        Ok(())
    }
}

impl Drop for ReportDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
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
