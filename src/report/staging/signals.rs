//! The handler that removes every path being written when a signal interrupts the process
//! (the command line's: a library leaves its host's signals alone). See the parent module.

use super::{registry, remove_any};
use std::sync::{Mutex, Once};

/// What to tell the user if interrupted now (how to resume), printed by the signal handler.
static ON_INTERRUPT: Mutex<Option<String>> = Mutex::new(None);

/// Sets (or clears) the line printed on stderr if a signal interrupts the process.
pub fn on_interrupt_say(note: Option<String>) {
    *ON_INTERRUPT.lock().unwrap_or_else(|e| e.into_inner()) = note;
}

/// Removes every registered path and exits 128 + `signal` on SIGINT, SIGTERM or SIGHUP.
/// Idempotent; the CLI calls it before writing anything.
pub fn install_signal_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return; // no handler: the default action (exit) stands, stale sweeping still works
        };
        std::thread::Builder::new()
            .name("leasesim-signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    // Held until the process is gone: no commit or new staging can start.
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
            })
            .expect("a signal thread starts");
    });
}
