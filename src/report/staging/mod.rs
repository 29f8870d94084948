//! What an error, a panic, an interrupt or a crash must not leave behind in an output directory.
//!
//! Every path being written aside (a report's staging directory `.NAME.tmp-PID`, a file's
//! `.NAME.tmp-PID`) is held by a [`Staged`] guard and registered here while it exists:
//! - dropped without [`Staged::commit`] (an error, a panic unwinding), the guard removes it;
//! - on SIGINT, SIGTERM or SIGHUP the handler of `install_signal_handler` (feature `cli`: a
//!   library does not take over its host's signals) removes every registered path and exits
//!   with 128 + the signal number (130, 143, 129);
//! - left by a process that died without running either (`kill -9`, an abort such as an
//!   allocator's when memory runs out, power loss), it is removed by [`sweep_stale`] the next
//!   time the same target is written: the PID in its name is no longer a running leasesim
//!   (Linux: `/proc/PID`, a zombie counting as gone).
//!
//! The registry's lock is held across a commit's renames and by the handler until the process
//! exits, so the handler never sees a report half-renamed. Nothing here decides what is written.
//!
//! Every output goes through here: a report directory through [`crate::report::ReportDir`], a
//! single file (an explore shard's partial, `show --out`) through [`write_file`]. The one file
//! deliberately kept on an interrupt is a sweep's in-progress file (`crate::sweep::resume`),
//! whose runs a `--resume` continues; it is published by a rename into a staged report
//! (`runs.csv`) or as a shard's partial.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

#[cfg(feature = "cli")]
mod signals;
#[cfg(feature = "cli")]
pub use signals::install_signal_handler;

static REGISTRY: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// The signal that interrupted the process, set in the signal handler itself (so before any
/// thread wakes up to act on it), 0 while none did. Only the command line's handler sets it.
static SIGNAL: AtomicUsize = AtomicUsize::new(0);

/// What to tell the user if interrupted now (how to resume), printed when a signal ends the
/// process.
static ON_INTERRUPT: Mutex<Option<String>> = Mutex::new(None);

/// Sets (or clears) the line printed on stderr if a signal interrupts the process.
pub fn on_interrupt_say(note: Option<String>) {
    *ON_INTERRUPT.lock().unwrap_or_else(|e| e.into_inner()) = note;
}

/// The signal (SIGINT, SIGTERM, SIGHUP) that arrived, if one did: the process is ending with
/// 128 + it. Always `None` without the command line's signal handler.
pub fn interrupted() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => i32::try_from(s).ok(),
    }
}

/// If a signal arrived, ends the process as the signal handler does (every path being written
/// removed, the note said, exit 128 + the signal); else returns at once. Long loops call it
/// between their steps, and the command line once more after its last write, so that an
/// interrupt always gives 128 + the signal, even one that arrived while a report was put in place.
pub fn exit_if_interrupted() {
    if let Some(signal) = interrupted() {
        end_interrupted(signal);
    }
}

/// Removes every registered path, says the note, and exits 128 + `signal`. The registry's lock
/// is held until the process is gone, so no commit or new staging can start, and a second
/// caller (the handler's thread and a loop at once) waits for the first's exit.
fn end_interrupted(signal: i32) -> ! {
    let held = registry();
    for path in held.iter() {
        remove_any(path);
    }
    if let Some(note) = ON_INTERRUPT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
    {
        eprintln!("\n{note}");
    }
    std::process::exit(128 + signal);
}

/// The registry of paths being written, locked (a panic elsewhere does not poison it for us).
pub(crate) fn registry() -> MutexGuard<'static, BTreeSet<PathBuf>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

fn remove_any(path: &Path) {
    if fs::remove_dir_all(path).is_err() {
        let _ = fs::remove_file(path);
    }
}

/// A path being written aside, removed unless committed. See the module header.
#[derive(Debug)]
pub struct Staged {
    path: PathBuf,
    done: bool,
}

impl Staged {
    /// Creates `path` as a fresh empty directory (removing a leftover of ours) and registers it.
    pub fn dir(path: PathBuf) -> io::Result<Staged> {
        let mut reg = registry();
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path)?;
        reg.insert(path.clone());
        Ok(Staged { path, done: false })
    }

    /// Registers `path` as a file about to be created by the caller (removed unless committed).
    pub fn file(path: PathBuf) -> Staged {
        registry().insert(path.clone());
        Staged { path, done: false }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `put_in_place` (the renames that publish what was written) under the registry's
    /// lock, so that an interrupt waits for it; on success the path is no longer ours to remove.
    pub fn commit(mut self, put_in_place: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
        let mut reg = registry();
        put_in_place(&self.path)?;
        reg.remove(&self.path);
        self.done = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let mut reg = registry();
            remove_any(&self.path);
            reg.remove(&self.path);
        }
    }
}

/// What [`write_file`] does when the file is already there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Replace it, in one rename.
    Replace,
    /// Leave it and fail with `AlreadyExists` (the new file is put in place by a hard link,
    /// which never replaces).
    Keep,
}

/// Writes `bytes` as the file `path`, whole or not at all: into `.NAME.tmp-PID` beside it
/// (a [`Staged`] file: removed on an error, a panic or an interrupt, and by a later write of
/// the same path if this process dies), synced, then put in place. The one way a single output
/// file is written; a report directory is [`crate::report::ReportDir`], on the same staging.
pub fn write_file(path: &Path, bytes: &[u8], existing: Existing) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(parent)?;
    sweep_stale(path);
    let leaf = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let staged = Staged::file(parent.join(aside_name(&leaf, "tmp")));
    {
        use std::io::Write as _;
        let mut f = fs::File::create(staged.path())?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    match existing {
        Existing::Replace => staged.commit(|tmp| fs::rename(tmp, path)),
        Existing::Keep => {
            // The link publishes; the staged name is then removed by the guard's drop.
            fs::hard_link(staged.path(), path)
        }
    }
}

/// The name of the aside path for `leaf` of kind `tmp` or `old`, owned by this process.
pub fn aside_name(leaf: &str, kind: &str) -> String {
    format!(".{leaf}.{kind}-{}", std::process::id())
}

/// Whether process `pid` may still be a leasesim writing: `/proc/PID` exists, is not a zombie
/// (a process that ended, aborted or killed, and was not yet reaped: it writes nothing more)
/// and runs the same program as this one. Without `/proc` it cannot tell, and says yes
/// (nothing is removed).
pub fn may_be_running(pid: u32) -> bool {
    let proc_dir = Path::new("/proc");
    if !proc_dir.join("self").exists() {
        return true;
    }
    if pid == std::process::id() {
        return true;
    }
    let pid_dir = proc_dir.join(pid.to_string());
    if !pid_dir.exists() {
        return false;
    }
    // `PID (comm) STATE ...`: the state follows the last `)` (a comm may hold one).
    if let Ok(stat) = fs::read_to_string(pid_dir.join("stat")) {
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.trim_start().chars().next());
        if matches!(state, Some('Z' | 'X')) {
            return false;
        }
    }
    // A PID reused by another program is not a writer of ours.
    match (
        fs::read(pid_dir.join("comm")),
        fs::read(proc_dir.join("self/comm")),
    ) {
        (Ok(theirs), Ok(ours)) => theirs == ours,
        _ => true,
    }
}

/// Removes what dead processes left aside for `target` (`DIR/NAME`): `.NAME.tmp-PID`
/// (an unfinished write) and `.NAME.old-PID` (a previous version set aside by a commit; put back
/// if `NAME` is missing, since the commit then died between its two renames). Only paths for
/// this target are touched, so writers of other targets in a shared directory are left alone.
pub fn sweep_stale(target: &Path) {
    let (Some(parent), Some(leaf)) = (target.parent(), target.file_name()) else {
        return;
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let leaf = leaf.to_string_lossy();
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    let mut stale_old = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix('.')
            .and_then(|r| r.strip_prefix(leaf.as_ref()))
        else {
            continue;
        };
        let (kind, pid) = match rest.rsplit_once('-') {
            Some((".tmp", pid)) => ("tmp", pid),
            Some((".old", pid)) => ("old", pid),
            _ => continue,
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if may_be_running(pid) {
            continue;
        }
        if kind == "tmp" {
            remove_any(&e.path());
        } else {
            stale_old.push(e.path());
        }
    }
    for old in stale_old {
        if !target.exists() && fs::rename(&old, target).is_ok() {
            continue;
        }
        remove_any(&old);
    }
}
