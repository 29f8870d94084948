//! The handler that removes every path being written when a signal interrupts the process
//! (the command line's: a library leaves its host's signals alone). See the parent module.

use super::{end_interrupted, SIGNAL};
use std::sync::Once;

/// On SIGINT, SIGTERM or SIGHUP: notes the signal at once (what [`super::interrupted`] reads),
/// then, on a thread of its own, removes every registered path and exits 128 + the signal.
/// Idempotent; the CLI calls it before writing anything.
pub fn install_signal_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            // Set inside the handler: the flag is up before the thread below wakes, so a
            // command that finishes meanwhile still sees it and exits with 128 + the signal.
            let _ = signal_hook::flag::register_usize(signal, &SIGNAL, signal as usize);
        }
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return; // no handler: the default action (exit) stands, stale sweeping still works
        };
        std::thread::Builder::new()
            .name("leasesim-signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    end_interrupted(signal);
                }
            })
            .expect("a signal thread starts");
    });
}
