//! Reports of runs: `summary.json`, `report.md`, and the plain-text summaries the CLI prints.
//!
//! A report directory is written whole or not at all: every file goes into a fresh sibling
//! directory first, which then replaces the old report in one rename; nothing is left aside
//! after an error, a panic or an interrupt ([`staging`]).

#[cfg(feature = "charts")]
pub mod chart;
pub mod html;
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
    use crate::shell::word;
    let mut cmd = format!("{} run {} --seed {}", word(program), word(source), s.seed);
    if strategy_overridden {
        cmd.push_str(&format!(" --strategy {}", word(&s.strategy)));
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
    /// Begins the report of `owner` in `dir`, or refuses (`AlreadyExists`, with [`claim`]'s
    /// words) when `dir` holds something that is not `owner`'s earlier report. The staging
    /// directory gets `owner`'s [`MARKER`] first.
    pub fn begin(dir: &Path, owner: &Owner) -> io::Result<ReportDir> {
        claim(dir, owner).map_err(|why| io::Error::new(io::ErrorKind::AlreadyExists, why))?;
        let parent = dir.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(parent)?;
        staging::sweep_stale(dir);
        let staging = Staged::dir(parent.join(staging::aside_name(&leaf_of(dir), "tmp")))?;
        let report = ReportDir {
            dir: dir.to_path_buf(),
            staging,
        };
        report.write(MARKER, owner.marker().as_bytes())?;
        Ok(report)
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

/// The file in every report directory that says which command wrote it, for which scenario:
/// one line of JSON, `{"command":"sweep","scenario":"q4"}`.
pub const MARKER: &str = ".leasesim-report";

/// Who writes a report directory: a command (`run`, `compare`, `sweep`, `explore`; a merge
/// writes its command's report) and the scenario's name.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Owner {
    pub command: String,
    pub scenario: String,
}

impl Owner {
    pub fn new(command: &str, scenario: &str) -> Owner {
        Owner {
            command: command.to_string(),
            scenario: scenario.to_string(),
        }
    }

    fn marker(&self) -> String {
        let mut line = serde_json::to_string(self).expect("an owner serializes");
        line.push('\n');
        line
    }

    /// `the run report of q4`.
    pub fn words(&self) -> String {
        format!("the {} report of {}", self.command, self.scenario)
    }
}

/// What [`claim`] found at a report directory's place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Nothing (or an empty directory, or only a sharded sweep's partial files): nothing is lost.
    New,
    /// An earlier report of the same scenario, which the new one replaces: the same command's,
    /// or, in the directory `run` and `explore` share (`DIR/NAME/`), the other's.
    Replaces(Owner),
}

/// Whether `owner` may write its report at `dir`: yes when nothing is there or only what it
/// may replace (its own earlier report, by the [`MARKER`]; the partial files of its shards);
/// else why not, in words that say what to do. A report of another command or another
/// scenario (`run q4-sweep` against `sweep q4`) and a directory without a marker (one of the
/// user's, or a report of a leasesim before markers) are never replaced.
pub fn claim(dir: &Path, owner: &Owner) -> Result<Claim, String> {
    let shown = dir.display();
    let Ok(meta) = fs::symlink_metadata(dir) else {
        return Ok(Claim::New);
    };
    if !meta.is_dir() {
        return Err(format!(
            "{shown} is not a directory, and a report is one; remove it, or choose another --out"
        ));
    }
    let what_to_do = "remove it, or choose another --out";
    match fs::read(dir.join(MARKER)) {
        Ok(bytes) => match serde_json::from_slice::<Owner>(&bytes) {
            Ok(theirs) => replaces(theirs, owner).map_err(|theirs| {
                format!(
                    "{shown} holds {}, which {} would replace; {what_to_do}",
                    theirs.words(),
                    owner.words()
                )
            }),
            Err(_) => Err(format!(
                "{shown}: its {MARKER} is not one leasesim wrote; {what_to_do}"
            )),
        },
        Err(_) => {
            let entries: Vec<String> = fs::read_dir(dir)
                .map_err(|e| format!("{shown}: cannot read: {e}"))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            // A sharded sweep's partial files (and their in-progress and staging files).
            let partial = |n: &String| n.trim_start_matches('.').starts_with("partial-");
            if entries
                .iter()
                .all(|n| owner.command == "sweep" && partial(n))
            {
                return Ok(Claim::New);
            }
            match legacy_owner(dir, &entries) {
                Some(theirs) => replaces(theirs, owner).map_err(|theirs| {
                    format!(
                        "{shown} holds {} (written by an older leasesim), which {} would \
                         replace; {what_to_do}",
                        theirs.words(),
                        owner.words()
                    )
                }),
                None => Err(format!(
                    "{shown} exists and is not a leasesim report (no {MARKER} file, and files \
                     a report does not have), so it is not {}; {what_to_do}",
                    owner.words()
                )),
            }
        }
    }
}

/// Whether `owner` may replace the report of `theirs` (see [`Claim::Replaces`]); else `theirs`.
fn replaces(theirs: Owner, owner: &Owner) -> Result<Claim, Owner> {
    let shared = |c: &str| c == "run" || c == "explore";
    let same_dir =
        theirs.command == owner.command || shared(&theirs.command) && shared(&owner.command);
    if same_dir && theirs.scenario == owner.scenario {
        Ok(Claim::Replaces(theirs))
    } else {
        Err(theirs)
    }
}

/// The owner of a report written before reports were marked, told by its files: every one a
/// kind a report holds, and one that only a command's report has (`explore.json`,
/// `results.csv`, `compare.json`, `summary.json`); its scenario from the directory's name.
fn legacy_owner(dir: &Path, entries: &[String]) -> Option<Owner> {
    let kinds = [
        ".json", ".md", ".png", ".svg", ".csv", ".jsonl", ".edn", ".ron",
    ];
    if !entries.iter().all(|n| kinds.iter().any(|k| n.ends_with(k))) {
        return None;
    }
    let leaf = leaf_of(dir);
    let has = |f: &str| entries.iter().any(|n| n == f);
    let (command, scenario) = if has("explore.json") {
        ("explore", leaf.as_str())
    } else if has("results.csv") {
        ("sweep", leaf.strip_suffix("-sweep")?)
    } else if has("compare.json") {
        ("compare", leaf.strip_suffix("-compare")?)
    } else if has("summary.json") {
        ("run", leaf.as_str())
    } else {
        return None;
    };
    Some(Owner::new(command, scenario))
}

/// Writes `files` (name, content) as `owner`'s report directory `dir`, replacing its own
/// earlier one (see [`claim`]), whole or not at all.
pub fn write_dir_atomically(
    dir: &Path,
    owner: &Owner,
    files: &[(&str, Vec<u8>)],
) -> io::Result<()> {
    let report = ReportDir::begin(dir, owner)?;
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
