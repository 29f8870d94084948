//! Bytes in, a scenario out: load (UTF-8, RON, schema), validate, and when valid, a short run
//! with the chart recorder, the summary, the markdown report, the timeline chart's layout and
//! (for one input in sixteen) its SVG and PNG; the scenario written minimal must read back as
//! itself, and with a `nemesis`, a drawn explore run must validate and run. Any panic, abort or runaway allocation is a bug: bad input must be
//! a `LoadError`, and whatever validates must run in bounded memory and time.
//!
//! The run is capped at a few thousand events so that each input takes milliseconds; the
//! limits under test are those of validation and of everything drawn before the run (random
//! faults, the fault schedule, per-node tables), which the cap does not shorten.

#![no_main]

use leasesim::report::chart::timeline::timeline_scene;
use leasesim::report::{markdown, run_files, text};
use leasesim::scenario::load;
use libfuzzer_sys::fuzz_target;

/// Events per fuzzed run.
const MAX_EVENTS: u64 = 5_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = load::text_of("fuzz", data) else {
        return;
    };
    let Ok(mut scenario) = load::from_text("fuzz", text) else {
        return;
    };
    scenario.limits.max_events = scenario.limits.max_events.min(MAX_EVENTS);
    let (outcome, timeline) =
        leasesim::run_recorded("fuzz", &scenario).expect("a validated scenario builds");
    let summary = outcome.summary;
    let md = markdown::run_report(&summary, &scenario, "leasesim run fuzz.ron");
    let _ = run_files(&summary, md);
    let _ = text::run_block(&summary, "leasesim run fuzz.ron", None);
    let scene = timeline_scene(&timeline, &summary);
    if data.len() % 16 == 0 {
        let _ = scene.render();
    }
    // Written minimal, it reads back as itself (what explore writes counterexamples with).
    let minimal = scenario.to_ron_minimal();
    let back = leasesim::Scenario::from_ron(&minimal).expect("a minimal scenario reads back");
    assert_eq!(back.to_ron(), scenario.to_ron());
    // An envelope that validates draws runs that validate and run (explore's drawing).
    if let Some(nemesis) = &scenario.nemesis {
        let run = data.len() as u64 % 4;
        let drawn = leasesim::explore::draw::draw_run(&scenario, nemesis, run, run % 2 == 0);
        let mut s = drawn.scenario;
        s.limits.max_events = s.limits.max_events.min(MAX_EVENTS);
        leasesim::run("fuzz", &s).expect("a drawn run validates");
    }
});
