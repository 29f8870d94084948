//! Sweeps that survive an interruption: the runs done so far are kept on disk in an
//! in-progress file beside what the sweep will write, `.NAME.in-progress` (`.x-sweep.in-progress`
//! beside `x-sweep/`, `.partial-I-of-K.csv.in-progress` beside a shard's partial).
//!
//! The file has a partial's format: the sweep's definition on the first line (the manifest a
//! resume checks), the `runs.csv` header, then one line per run in run-index order, appended as
//! runs finish. A kill can cut the last line, or lose a buffered tail; a resume keeps only the
//! whole lines that read back as the expected next run and render to the very same bytes, drops
//! the rest, and runs what is missing. So a resumed sweep writes the bytes of an uninterrupted one.
//! The file is locked while a sweep writes it, so two sweeps cannot append to it at once.
//!
//! This is the only part of [`crate::sweep`] that touches files; it prints nothing.

use super::aggregate::RunRow;
use super::files;
use super::grid::Grid;
use super::runner::Shard;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The in-progress file of `target` (a sweep directory or a partial file): `.LEAF.in-progress`
/// beside it.
pub fn in_progress_path(target: &Path) -> PathBuf {
    let leaf = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{leaf}.in-progress"))
}

/// What opening an in-progress file found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// No file, or an empty one, or one cut before its first line ended.
    Nothing,
    /// With `resume`: this many of the shard's runs were whole on disk and are kept;
    /// `dropped_bytes` of a cut or unreadable tail were dropped.
    Resumed { runs: u64, dropped_bytes: u64 },
    /// Without `resume`: an interrupted sweep's file was there, and is started over.
    Discarded,
}

/// An open, locked in-progress file, positioned after its last whole run.
#[derive(Debug)]
pub struct InProgress {
    path: PathBuf,
    file: File,
    /// The shard's runs already in the file.
    pub done: u64,
    pub found: Found,
}

impl InProgress {
    /// Opens the in-progress file of `target` for `shard` of `grid`. With `resume`, checks that
    /// it holds the same sweep and shard (else an error saying what differs), hands each whole
    /// run it keeps to `on_row` in order, and cuts the file after the last one; without, or when
    /// there is nothing to resume, starts the file afresh.
    pub fn open(
        target: &Path,
        grid: &Grid,
        shard: Shard,
        resume: bool,
        on_row: &mut dyn FnMut(&RunRow),
    ) -> Result<InProgress, String> {
        let path = in_progress_path(target);
        let shown = path.display().to_string();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| format!("{shown}: {e}"))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(format!(
                    "{shown}: another leasesim process is running this sweep now"
                ))
            }
            // A file system without locks: go on unguarded.
            Err(fs::TryLockError::Error(_)) => {}
        }
        let len = file.metadata().map_err(|e| format!("{shown}: {e}"))?.len();
        let head = files::partial_head(&grid.spec, shard.index, shard.of);
        let header = files::runs_header_line(grid);
        let mut kept = 0u64; // bytes kept
        let mut done = 0u64;
        let mut found = if len == 0 {
            Found::Nothing
        } else {
            Found::Discarded
        };
        if resume && len > 0 {
            let mut r = BufReader::new(&file);
            let mut line = Vec::new();
            r.read_until(b'\n', &mut line)
                .map_err(|e| format!("{shown}: {e}"))?;
            if line.last() == Some(&b'\n') {
                if line != head.as_bytes() {
                    return Err(mismatch(&shown, grid, shard, &line));
                }
                kept = line.len() as u64;
                line.clear();
                r.read_until(b'\n', &mut line)
                    .map_err(|e| format!("{shown}: {e}"))?;
                if line == header {
                    kept += line.len() as u64;
                    loop {
                        line.clear();
                        let n = r
                            .read_until(b'\n', &mut line)
                            .map_err(|e| format!("{shown}: {e}"))?;
                        if n == 0 || line.last() != Some(&b'\n') {
                            break; // the end, or a line cut by the interruption
                        }
                        let expected = shard.index + done * shard.of;
                        let row =
                            match files::parse_run_line(&shown, 0, grid, &line[..line.len() - 1]) {
                                Ok(row) if row.index == expected => row,
                                _ => break,
                            };
                        if files::run_line(grid, &row) != line {
                            break;
                        }
                        on_row(&row);
                        done += 1;
                        kept += line.len() as u64;
                    }
                } else {
                    kept = 0; // the header was cut: nothing to keep but to start afresh
                }
                if kept > 0 {
                    found = Found::Resumed {
                        runs: done,
                        dropped_bytes: len - kept,
                    };
                } else {
                    found = Found::Nothing;
                }
            } else {
                found = Found::Nothing;
            }
        }
        let fresh = kept == 0;
        file.set_len(if fresh { 0 } else { kept })
            .map_err(|e| format!("{shown}: {e}"))?;
        file.seek(SeekFrom::End(0))
            .map_err(|e| format!("{shown}: {e}"))?;
        if fresh {
            done = 0;
            let started = file
                .write_all(head.as_bytes())
                .and_then(|_| file.write_all(&header));
            if let Err(e) = started {
                // No run in it to resume (a full disk, say): the file goes, not left empty.
                drop(file);
                let _ = fs::remove_file(&path);
                return Err(format!("{shown}: {e}"));
            }
        }
        Ok(InProgress {
            path,
            file,
            done,
            found,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A buffered writer appending to the file (runs go through [`files::RunsWriter::continuing`]).
    pub fn appender(&self) -> BufWriter<&File> {
        BufWriter::with_capacity(1 << 16, &self.file)
    }

    /// Writes the runs (the file less its first line) to `out`, after syncing the file.
    pub fn copy_runs_to(&self, out: &Path) -> io::Result<()> {
        self.file.sync_all()?;
        let mut r = BufReader::new(File::open(&self.path)?);
        r.skip_until(b'\n')?;
        let mut w = BufWriter::new(File::create(out)?);
        io::copy(&mut r, &mut w)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()
    }

    /// Puts the file in place as `target` (a shard's partial: its format already), whole.
    pub fn publish_as(self, target: &Path) -> io::Result<()> {
        self.file.sync_all()?;
        fs::rename(&self.path, target)
    }

    /// Removes the file: its runs are in the finished report.
    pub fn remove(self) -> io::Result<()> {
        fs::remove_file(&self.path)
    }

    /// After the sweep failed (a full disk, say): keeps the file when it holds a whole run, which
    /// `--resume` keeps, else removes it (it would only be clutter). Whether it was kept.
    pub fn keep_if_resumable(self) -> bool {
        let kept = self.done > 0 || self.holds_a_run().unwrap_or(false);
        if !kept {
            drop(self.file);
            let _ = fs::remove_file(&self.path);
        }
        kept
    }

    /// Whether a whole line follows the definition and the header.
    fn holds_a_run(&self) -> io::Result<bool> {
        let mut r = BufReader::new(File::open(&self.path)?);
        r.skip_until(b'\n')?;
        r.skip_until(b'\n')?;
        let mut line = Vec::new();
        r.read_until(b'\n', &mut line)?;
        Ok(line.last() == Some(&b'\n'))
    }
}

/// Says how the sweep in an in-progress file differs from this one.
fn mismatch(shown: &str, grid: &Grid, shard: Shard, line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut what = Vec::new();
    match files::read_partial(shown, &text) {
        Err(_) => what.push("it is not a leasesim sweep's file".to_string()),
        Ok(p) => {
            if p.shard != shard.index || p.of != shard.of {
                what.push(format!(
                    "shard {}/{} there, {}/{} here",
                    p.shard, p.of, shard.index, shard.of
                ));
            }
            if p.spec.name != grid.spec.name || p.spec.source != grid.spec.source {
                what.push(format!(
                    "scenario {} there, {} here",
                    p.spec.source, grid.spec.source
                ));
            }
            if json(&p.spec.scenario) != json(&grid.spec.scenario) {
                what.push(if p.spec.scenario.seed != grid.spec.scenario.seed {
                    format!(
                        "first seed {} there, {} here",
                        p.spec.scenario.seed, grid.spec.scenario.seed
                    )
                } else {
                    "the scenario's content differs".to_string()
                });
            }
            if p.spec.vary != grid.spec.vary {
                what.push("the --vary parameters or values differ".to_string());
            }
            if p.spec.seeds != grid.spec.seeds {
                what.push(format!(
                    "--seeds {} there, {} here",
                    p.spec.seeds, grid.spec.seeds
                ));
            }
            if what.is_empty() {
                what.push("its definition line differs".to_string());
            }
        }
    }
    format!(
        "{shown}: the interrupted sweep there is not this one ({}); \
         run without --resume to start this sweep over",
        what.join("; ")
    )
}

/// A value's JSON text, to compare scenarios without `PartialEq`.
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("serializes")
}
