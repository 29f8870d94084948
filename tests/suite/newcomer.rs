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
