//! TrueTime: `clocks.uncertainty` gives every node an error bound and periodic
//! syncs; the `TrueTime` lease grants until an absolute E and waits for TT.now().earliest > E.
//! The bundled truetime-* scenarios pin the Spanner story; these tests pin what they cannot.

use crate::common::{cut_off_text, run, run_text, scenario};
use leasesim::scenario::validate::validate;
use proptest::prelude::*;

const MS: i64 = 1_000_000;

/// A TrueTime lease between `spanner` (the grantor) and contenders `a` (cut off from the
/// grantor at `cut`) and `b` (queued from 1 s), with the given drifts and `uncertainty`.
fn cut_off(
    strategy: &str,
    drifts: (f64, f64, f64),
    cut: &str,
    uncertainty: &str,
    extra: &str,
) -> String {
    let (g, a, b) = drifts;
    format!(
        r#"Scenario(
            seed: 3,
            duration: "60s",
            lease: (duration: "10s", renew_every: "2s"),
            strategy: {strategy},
            clocks: (uncertainty: {uncertainty}),
            nodes: [
                (name: "spanner", role: Grantor, drift_ppm: {g:?}),
                (name: "a", role: Contender, drift_ppm: {a:?}),
                (name: "b", role: Contender, start: "1s", drift_ppm: {b:?}),
            ],
            network: (delay: Fixed("1ms")),
            faults: [
                Partition(at: "{cut}", duration: "100s", groups: [["a"], ["spanner", "b"]]),
                {extra}
            ],
        )"#
    )
}

proptest! {
    // A case runs in about 0.1 ms: 2048 of them find a rounding slip that 256 can miss.
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// TrueTime is safe while every node's true time lies inside its interval. With
    /// every drift within the bound's growth (200 ppm), syncs at any period and residuals
    /// drawn within the base, no true time ever leaves an interval and the lease, handed over
    /// once the holder is cut off, never overlaps, with no holder margin at all.
    #[test]
    fn inside_the_bound_the_lease_never_overlaps(
        g in -200.0f64..=200.0,
        a in -200.0f64..=200.0,
        b in -200.0f64..=200.0,
        cut_ms in 1_000i64..30_000,
        sync_s in prop::sample::select(vec![3, 7, 30]),
        base_us in 0i64..2_000,
    ) {
        let u = format!(r#"(base: "{base_us}us", growth_ppm: 200.0, sync_every: "{sync_s}s")"#);
        let s = run_text(&cut_off("TrueTime", (g, a, b), &format!("{cut_ms}ms"), &u, ""));
        prop_assert_eq!(s.overlap.count, 0);
        prop_assert_eq!(s.clock_error.as_ref().unwrap().max_outside_interval_ns, 0);
        prop_assert_eq!(s.holders, vec!["a".to_string(), "b".to_string()]);
    }
}

/// Outside the bound the oracle says by how much, and syncs reset it. `a` at +600 ppm against a
/// bound of 0 + 200 ppm (residuals are then 0): it drifts 0.0004 t outside its interval
/// between syncs, 4 ms just before each sync at 10 s and 20 s, 2 ms at the end (25 s). A sync
/// that did not reset the clock would leave it 10 ms out at the end; one whose excess was not
/// noted before the step would report the 2 ms of the end alone.
#[test]
fn the_oracle_reports_how_far_true_time_left_an_interval() {
    let text = cut_off(
        "TrueTime",
        (0.0, 600.0, 0.0),
        "24s",
        r#"(base: "0s", growth_ppm: 200.0, sync_every: "10s")"#,
        "",
    )
    .replace(r#"duration: "60s""#, r#"duration: "25s""#);
    let s = run_text(&text);
    let c = s.clock_error.expect("uncertainty is configured");
    assert_eq!(c.max_outside_interval_ns, 4 * MS);
    assert_eq!(c.node.as_deref(), Some("a"));
}

/// `clocks.uncertainty` works with every strategy and only adds syncs and the interval: a
/// TwoSided lease keeps its deadlines on the monotonic clock, which syncs never step, so every
/// figure of the cut-off story is the same with and without it.
#[test]
fn uncertainty_changes_nothing_a_monotonic_lease_measures() {
    let plain = cut_off_text(r#"TwoSided(holder_margin: "50ms")"#, -300.0, "");
    let synced = plain.replace(
        "network:",
        r#"clocks: (uncertainty: (base: "2ms", growth_ppm: 200.0, sync_every: "3s")),
            network:"#,
    );
    let without = run_text(&plain);
    let mut with = run_text(&synced);
    // h at -300 ppm against a 200 ppm bound: 0.0001 * 3 s = 0.3 ms past a 2 ms base is
    // never reached between 3 s syncs, but the residual of a sync can be anywhere in +-2 ms.
    assert!(with.clock_error.take().is_some());
    // The syncs are events of their own: 3 nodes at 3, 6, ..., 39 s, 13 each.
    assert_eq!(with.events, without.events + 3 * 13);
    with.events = without.events;
    assert_eq!(without, with);
}

/// A restarted TrueTime grantor that waits (`grantor_restart: Wait`) grants nothing until its
/// earliest bound passes its latest bound at restart + T. Drift 0 and e = 1 ms flat (growth 0):
/// it restarts at 4 s, so it waits for t - 1 ms > 4 s + 1 ms + 10 s, and grants b (whose retry
/// is pending) at 14.002000001 s. `a`, cut off at 2.5 s, last renewed at 2.002 s (reaching the
/// grantor at 2.003 s: E = 12.004 s) and believes until t + 1 ms >= E, 12.003 s: no overlap. A
/// grantor that forgot would grant b at b's first retry after the restart: b started at 0.1 s
/// and retries every second, so its retry of 4.1 s reaches the grantor at 4.101 s.
#[test]
fn a_restarted_grantor_waits_until_its_earliest_bound_passes_latest_plus_t() {
    let text = |restart: &str| {
        cut_off(
            "TrueTime",
            (0.0, 0.0, 0.0),
            "2500ms",
            r#"(base: "1ms", growth_ppm: 0.0, sync_every: "100s")"#,
            r#"Crash(node: "spanner", at: "3s"), Restart(node: "spanner", at: "4s"),"#,
        )
        .replace(
            r#"renew_every: "2s")"#,
            &format!(r#"renew_every: "2s", grantor_restart: {restart})"#),
        )
        .replace(r#"start: "1s""#, r#"start: "100ms""#)
    };
    let waits = run_text(&text("Wait"));
    assert_eq!(waits.overlap.count, 0);
    assert_eq!(waits.failovers[0].at_ns, 14_002_000_001);
    let forgets = run_text(&text("Forget"));
    assert_eq!(forgets.failovers[0].at_ns, 4_101_000_000);
    assert_eq!(forgets.overlap.count, 1);
}

/// TrueTime without clocks that know their error is refused with the fix; bad uncertainty
/// fields are each named, all at once.
#[test]
fn truetime_needs_clocks_uncertainty_and_its_fields_are_checked() {
    let text = cut_off("TrueTime", (0.0, 0.0, 0.0), "5s", "None", "");
    let problems = validate(&scenario(&text));
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("clocks.uncertainty: TrueTime needs clocks that know")),
        "{problems:?}"
    );
    let bad = cut_off(
        "TrueTime",
        (0.0, 0.0, 0.0),
        "5s",
        r#"(base: "-1ms", growth_ppm: -5.0, sync_every: "0s")"#,
        "",
    );
    let problems = validate(&scenario(&bad));
    for field in ["base", "growth_ppm", "sync_every"] {
        let at = format!("clocks.uncertainty.{field}:");
        assert!(
            problems.iter().any(|p| p.starts_with(&at)),
            "{at} in {problems:?}"
        );
    }
}

/// The same scenario and seed give the same summary, syncs and residuals included.
#[test]
fn syncs_are_deterministic() {
    let text = cut_off(
        "TrueTime",
        (150.0, -150.0, 0.0),
        "8s",
        r#"(base: "1ms", growth_ppm: 200.0, sync_every: "3s")"#,
        "",
    );
    let s = scenario(&text);
    assert_eq!(run(&s), run(&s));
}
