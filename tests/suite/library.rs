//! The bundled scenario library: every story parses, states what it shows, and holds its `expect`.

use leasesim::scenario::{library, load};

#[test]
fn every_bundled_scenario_holds_its_expectations() {
    let mut failures = Vec::new();
    for &(name, text) in library::LIBRARY {
        let scenario = match load::from_text(name, text) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{e}"));
                continue;
            }
        };
        if scenario.description.trim().is_empty() {
            failures.push(format!("{name}: no description"));
        }
        if scenario.expect.is_none() {
            failures.push(format!("{name}: no expect block"));
        }
        let summary = leasesim::run(name, &scenario).unwrap().summary;
        if summary.expect.passed != Some(true) {
            failures.push(format!("{name}: {:?}", summary.expect.failures));
        }
        if summary.truncated {
            failures.push(format!("{name}: hit the event limit"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_library_is_not_empty_and_is_sorted() {
    let names = library::names();
    assert!(names.len() >= 3);
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}
