//! What a new user trips on (issue 14): each test pins one surprise that is fixed, so a one-line
//! change bringing it back fails here.

use crate::common::scenario;
use leasesim::scenario::load;
use leasesim::scenario::StrategySpec;

/// A small scenario with `strategy` and `extra` (more top-level fields) spliced in.
fn text(strategy: &str, extra: &str) -> String {
    format!(
        r#"Scenario(
    duration: "20s",
    lease: (duration: "10s"),
    strategy: {strategy},
    nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
    {extra}
)
"#
    )
}

/// The error of loading `text`, as a user sees it.
fn load_error(text: &str) -> String {
    load::from_text("t.ron", text).unwrap_err().to_string()
}

// Item 5: a built-in strategy whose fields all default can be written as its name alone.

#[test]
fn a_strategy_whose_fields_all_default_is_written_as_its_name_alone() {
    // Catches: the bare-name fallback dropped (TwoSided alone is "Expected opening `(`").
    for name in [
        "TwoSided",
        "GrantorOnly",
        "HolderOnly",
        "CachedBool",
        "WallClock",
        "OnReceiveStart",
        "Redlock",
    ] {
        let bare = scenario(&text(name, "")).strategy;
        let empty = if matches!(name, "GrantorOnly" | "CachedBool") {
            bare.clone()
        } else {
            scenario(&text(&format!("{name}()"), "")).strategy
        };
        assert_eq!(bare, empty, "{name}");
        assert_eq!(StrategySpec::from_ron(name).unwrap(), empty, "{name}");
    }
}

#[test]
fn a_strategy_with_a_required_field_written_alone_names_the_field() {
    // Catches: a missing field reported as "in the scenario" or as a parse error elsewhere.
    assert_eq!(
        load_error(&text("Custom", "")),
        "t.ron:4:21: `Custom` written alone takes every field's default, but `holder_clock` has \
         none: write Custom(holder_clock: ..., ...)\n  |\n4 |     strategy: Custom,\n  |                     ^"
    );
}

// Item 8: a duration written as a number says a string with a unit is expected.

#[test]
fn a_duration_written_as_a_number_says_to_add_a_unit() {
    // Catches: durations read with `deserialize_str` again ("Expected string").
    let t = text(
        "GrantorOnly",
        r#"faults: [Pause(node: "a", at: 20, duration: "1s")],"#,
    );
    let e = load_error(&t);
    assert!(
        e.starts_with(
            "t.ron:6:35: expected a duration string with a unit, e.g. \"20s\" or \"20ms\", \
             found the number 20"
        ),
        "{e}"
    );
    let t = text(r#"TwoSided(holder_margin: 0.5)"#, "");
    assert!(
        load_error(&t).contains("e.g. \"0.5s\" or \"0.5ms\", found the number 0.5"),
        "{}",
        load_error(&t)
    );
}

// Item 3: fields that do not apply to a variant are refused, with the reason.

/// The semantic problems of `text` (it must parse).
fn problems(text: &str) -> Vec<String> {
    leasesim::scenario::validate::validate(&scenario(text))
}

#[test]
fn a_clock_given_for_a_gc_pause_is_refused_with_the_reason() {
    // Catches: the check dropped (the clock silently ignored, as before), or `clock` read with
    // a default again so that a given `CatchUp` cannot be told from one left out.
    let faults = r#"faults: [
        Pause(node: "a", at: "5s", duration: "1s", kind: Gc, clock: Stall),
        Pause(node: "a", at: "7s", duration: "1s", clock: CatchUp),
        Pause(node: "a", at: "9s", duration: "1s", kind: VmFreeze, clock: Stall),
        Pause(node: "a", at: "11s", duration: "1s", kind: VmFreeze),
        Pause(node: "a", at: "13s", duration: "1s"),
    ],
    random_faults: [
        Pauses(per_minute: 1.0, duration: Fixed("1s"), clock: Stall),
        Pauses(per_minute: 1.0, duration: Fixed("1s"), kind: VmFreeze, clock: Stall),
    ],"#;
    let why = |at: &str, clock: &str| {
        format!(
            "{at}.clock: {clock} does not apply to a Gc pause, whose clocks keep counting \
             (clock only applies to kind: VmFreeze); remove it, or set kind: VmFreeze"
        )
    };
    assert_eq!(
        problems(&text("GrantorOnly", faults)),
        vec![
            why("faults[0]", "Stall"),
            why("faults[1]", "CatchUp"),
            why("random_faults[0]", "Stall"),
        ]
    );
}

#[test]
fn a_pause_left_without_a_clock_catches_up_and_a_stall_is_kept() {
    // Catches: the default resolved to Stall, or a VmFreeze's Stall lost on the way to the
    // engine: a stalled freeze of 8 s leaves the node's clocks 8 s behind, a catch-up one none.
    use leasesim::scenario::{Fault, FreezeClock};
    let s = scenario(&text(
        "GrantorOnly",
        r#"faults: [
            Pause(node: "a", at: "1s", duration: "1s", kind: VmFreeze),
            Pause(node: "a", at: "3s", duration: "1s", kind: VmFreeze, clock: Stall),
            Pause(node: "a", at: "5s", duration: "1s"),
        ],"#,
    ));
    let clocks: Vec<_> = s.faults.iter().map(Fault::freeze_clock).collect();
    assert_eq!(
        clocks,
        vec![
            Some(FreezeClock::CatchUp),
            Some(FreezeClock::Stall),
            Some(FreezeClock::CatchUp)
        ]
    );
}

#[test]
fn a_holder_margin_under_a_cached_bool_validity_is_refused() {
    // Catches: Custom's margin check forgetting that a cached bool never reads it.
    let custom = |margin: &str| {
        format!(
            "Custom(holder_clock: Monotonic, lease_start: OnSend, validity: CachedBool{margin})"
        )
    };
    assert_eq!(
        problems(&text(&custom(r#", holder_margin: "5ms""#), "")),
        vec![
            "strategy.holder_margin: 5ms does not apply with validity: CachedBool, whose bool is \
             cleared at start + T (by the renewal loop or a Reject), never T - holder_margin; \
             leave it out, or use validity: Clock"
                .to_string()
        ]
    );
    assert_eq!(problems(&text(&custom(""), "")), Vec::<String>::new());
}
