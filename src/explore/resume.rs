//! Explorations that survive an interruption: each run's record is appended, in run order, to
//! an in-progress file beside what the exploration will write (`.NAME.explore-in-progress` in
//! the output directory; a shard's `.NAME-partial-I-of-K.explore-in-progress`).
//!
//! The file's first line says which exploration it is (the scenario with its envelope, the
//! command, the search, the runs and the shard); then one JSON record a line. A kill can cut the
//! last line; a resume keeps the whole lines that read back as the shard's next runs, cuts the
//! rest, and goes on from there. Since a record is all an exploration keeps of a run, and guided
//! search breeds every generation from the records alone, a resumed exploration writes the
//! bytes of an uninterrupted one. The file is removed when the exploration's files are written.

use super::RunRecord;
use crate::sweep::Shard;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The in-progress file of the exploration `name` writing under `out`.
pub fn in_progress_path(out: &Path, name: &str, shard: Option<Shard>) -> PathBuf {
    match shard {
        None => out.join(format!(".{name}.explore-in-progress")),
        Some(s) => out.join(format!(
            ".{name}-partial-{}-of-{}.explore-in-progress",
            s.index, s.of
        )),
    }
}

/// An open in-progress file, positioned after its last whole record.
#[derive(Debug)]
pub struct InProgress {
    path: PathBuf,
    file: File,
    /// The records kept from an interrupted exploration, in run order.
    pub resumed: Vec<RunRecord>,
    /// Without `resume`: an interrupted exploration's file was there and is started over.
    pub discarded: bool,
}

impl InProgress {
    /// Opens the in-progress file `path` of the exploration `manifest` (one line, no newline)
    /// whose k-th run is `run_of(k)`. With `resume`, keeps the records it holds if its first
    /// line is `manifest` (an error says it is another exploration's); without, starts afresh.
    pub fn open(
        path: &Path,
        manifest: &str,
        resume: bool,
        run_of: &dyn Fn(u64) -> u64,
    ) -> Result<InProgress, String> {
        debug_assert!(!manifest.contains('\n'));
        let shown = path.display();
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)
                .map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
        }
        let exists = path.exists();
        let mut resumed = Vec::new();
        let mut keep_bytes = 0u64;
        if resume && exists {
            let f = File::open(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
            let mut lines = BufReader::new(f);
            let mut line = String::new();
            let mut first = true;
            loop {
                line.clear();
                let n = lines
                    .read_line(&mut line)
                    .map_err(|e| format!("{shown}: cannot read: {e}"))?;
                if n == 0 || !line.ends_with('\n') {
                    break; // the end, or a line the interruption cut
                }
                let body = &line[..line.len() - 1];
                if first {
                    if body != manifest {
                        return Err(format!(
                            "{shown}: an interrupted exploration of another scenario, envelope, \
                             search, run count or shard; run without --resume to start over"
                        ));
                    }
                    first = false;
                } else {
                    match serde_json::from_str::<RunRecord>(body) {
                        Ok(r) if r.run == run_of(resumed.len() as u64) => resumed.push(r),
                        _ => break,
                    }
                }
                keep_bytes += n as u64;
            }
        }
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| format!("{shown}: cannot write: {e}"))?;
        let io = |e: std::io::Error| format!("{shown}: cannot write: {e}");
        if keep_bytes == 0 {
            resumed.clear();
            file.set_len(0).map_err(io)?;
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            file.write_all(format!("{manifest}\n").as_bytes())
                .map_err(io)?;
        } else {
            file.set_len(keep_bytes).map_err(io)?;
            file.seek(SeekFrom::Start(keep_bytes)).map_err(io)?;
        }
        file.flush().map_err(io)?;
        Ok(InProgress {
            path: path.to_path_buf(),
            file,
            resumed,
            discarded: exists && !resume,
        })
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `records` (the next runs, in order) and flushes them to the file.
    pub fn append(&mut self, records: &[RunRecord]) -> Result<(), String> {
        let mut text = String::new();
        for r in records {
            text.push_str(&serde_json::to_string(r).expect("a record serialises"));
            text.push('\n');
        }
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| format!("{}: cannot write: {e}", self.path.display()))
    }

    /// The exploration's files are written: the file goes.
    pub fn remove(self) {
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(run: u64) -> RunRecord {
        RunRecord {
            run,
            seed: 100 + run,
            kinds: vec!["pauses".into()],
            violation: None,
            min_slack_ns: Some(run as i64),
            closest_call_ns: None,
            recovery_margin_ns: None,
            events: 10 * run,
            guide: None,
        }
    }

    /// A test's directory, removed when the test ends, passed or failed.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// A fresh directory for one test's file (in a folder not made yet), and the file's path.
    fn file(test: &str) -> (Scratch, PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("leasesim-resume-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let path = dir.join("sub").join(".e.explore-in-progress");
        (Scratch(dir), path)
    }

    /// Shard runs: the k-th run of shard 2 of 3 is 3k + 1.
    fn shard_run(k: u64) -> u64 {
        3 * k + 1
    }

    /// Written, cut in the middle of a line, and resumed: the whole records come back in order,
    /// the cut line is dropped, and appending goes on after the last whole one.
    #[test]
    fn a_resume_keeps_the_whole_records_and_appends_after_them() {
        let (_dir, path) = file("keeps");
        let mut p = InProgress::open(&path, "M", false, &shard_run).unwrap();
        assert!(p.resumed.is_empty() && !p.discarded);
        p.append(&[record(1), record(4)]).unwrap();
        p.append(&[record(7)]).unwrap();
        drop(p);
        let written = fs::read_to_string(&path).unwrap();
        assert_eq!(written.lines().count(), 4, "{written}");
        assert!(written.starts_with("M\n"));
        // A kill cuts the last record short.
        let cut = written.len() - 5;
        fs::write(&path, &written[..cut]).unwrap();
        let mut p = InProgress::open(&path, "M", true, &shard_run).unwrap();
        assert_eq!(p.resumed, vec![record(1), record(4)]);
        assert!(!p.discarded);
        p.append(&[record(7)]).unwrap();
        drop(p);
        assert_eq!(fs::read_to_string(&path).unwrap(), written);
        let p = InProgress::open(&path, "M", true, &shard_run).unwrap();
        assert_eq!(p.resumed, vec![record(1), record(4), record(7)]);
        p.remove();
        assert!(!path.exists());
    }

    /// Records stop being kept at the first that is not the shard's next run (or not a record);
    /// the file is cut there.
    #[test]
    fn a_resume_stops_at_the_first_record_out_of_order() {
        let (_dir, path) = file("order");
        let mut p = InProgress::open(&path, "M", false, &shard_run).unwrap();
        p.append(&[record(1), record(7), record(4)]).unwrap();
        drop(p);
        let p = InProgress::open(&path, "M", true, &shard_run).unwrap();
        assert_eq!(p.resumed, vec![record(1)]);
        drop(p);
        let kept = fs::read_to_string(&path).unwrap();
        assert_eq!(kept.lines().count(), 2, "{kept}");
        let mut text = kept.clone();
        text.push_str("not a record\n");
        fs::write(&path, &text).unwrap();
        let p = InProgress::open(&path, "M", true, &shard_run).unwrap();
        assert_eq!(p.resumed, vec![record(1)]);
    }

    /// Another exploration's file is refused with `--resume`; without it, any file is started
    /// over (and said to be), and a file with only its first line resumes nothing.
    #[test]
    fn another_explorations_file_is_refused_and_without_resume_started_over() {
        let (_dir, path) = file("other");
        let mut p = InProgress::open(&path, "M", false, &shard_run).unwrap();
        p.append(&[record(1)]).unwrap();
        drop(p);
        let err = InProgress::open(&path, "N", true, &shard_run).unwrap_err();
        assert!(
            err.contains("an interrupted exploration of another"),
            "{err}"
        );
        let p = InProgress::open(&path, "N", false, &shard_run).unwrap();
        assert!(p.resumed.is_empty() && p.discarded);
        drop(p);
        assert_eq!(fs::read_to_string(&path).unwrap(), "N\n");
        let p = InProgress::open(&path, "N", true, &shard_run).unwrap();
        assert!(p.resumed.is_empty() && !p.discarded);
        drop(p);
        assert_eq!(fs::read_to_string(&path).unwrap(), "N\n");
        // A first line cut short is no manifest: started over.
        fs::write(&path, "N").unwrap();
        let p = InProgress::open(&path, "N", true, &shard_run).unwrap();
        assert!(p.resumed.is_empty());
        drop(p);
        assert_eq!(fs::read_to_string(&path).unwrap(), "N\n");
    }
}
