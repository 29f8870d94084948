//! Helpers shared by the suite: building scenarios from RON text and running them.

use leasesim::{Scenario, Summary};

/// Parses a scenario, panicking with ron's position on a syntax error.
pub fn scenario(text: &str) -> Scenario {
    Scenario::from_ron(text).unwrap_or_else(|e| panic!("test scenario does not parse: {e}"))
}

/// Runs a scenario and returns its summary.
pub fn run(s: &Scenario) -> Summary {
    leasesim::run("test", s)
        .unwrap_or_else(|e| panic!("test scenario does not build:\n{e}"))
        .summary
}

/// Parses and runs.
pub fn run_text(text: &str) -> Summary {
    run(&scenario(text))
}
