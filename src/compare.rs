//! What `leasesim compare` runs: one scenario under several strategies on the same fault
//! schedule. [`all_strategies`] picks the rows of `--strategies all` for the scenario at hand
//! (its own strategy first; base strategies and lock services, or its protocol's variants),
//! each with the words that say where its settings came from; [`Row`] is a row of
//! `compare.json`. Running them and drawing the charts is the command line's.

use crate::outcome::Summary;
use crate::scenario::{Scenario, StrategySpec};
use crate::strategy::Registry;
use crate::time::LocalDur;

/// What a row of `compare` says of where it came from.
pub const OWN: &str = "the scenario's own";

/// The strategies `compare --strategies all` runs, each with where it came from: the scenario's
/// own strategy first, as its protocol writes it; then the registered protocols (with their
/// defaults, when every field has one); then the variants its protocol names
/// (`Settings::compare_variants`: a Redlock scenario's settings with keys expiring on the wall
/// clock and on the monotonic clock and with a quorum of one, a Raft or LeaseGuard scenario's
/// variants), or else the common lineup, every protocol's part of it (`Settings::lineup`: the
/// six base-protocol strategies and the lock services on the same roles), with margins from
/// the scenario: its own strategy's margin (`Settings::epsilon`) if it has a positive one, else
/// 1% of T. A strategy equal to the scenario's own is not run twice.
pub fn all_strategies(s: &Scenario, registry: &Registry) -> Vec<(StrategySpec, String)> {
    let own = registry.resolve(&s.strategy).ok();
    let own_spec = own
        .as_ref()
        .and_then(|o| o.spec())
        .unwrap_or_else(|| s.strategy.clone());
    let mut rows = vec![(own_spec, OWN.to_string())];
    for name in registry.registered() {
        if s.strategy.name() == name {
            continue;
        }
        let alone = StrategySpec::from_ron(name).expect("a registered name is an identifier");
        if let Ok(defaults) = registry.resolve(&alone) {
            let spec = defaults.spec().unwrap_or(alone);
            rows.push((spec, "its defaults".to_string()));
        }
    }
    match own.as_ref().and_then(|o| o.compare_variants(s)) {
        Some(variants) => rows.extend(variants),
        None => {
            let margin = own.as_ref().and_then(|o| o.epsilon()).map(|m| m.value);
            let (m, from) = match margin.filter(|m| m.ns() > 0) {
                Some(m) => (m, format!("margin {m} from the scenario's strategy")),
                None => {
                    let m = LocalDur::from_ns(s.lease.duration.ns() / 100);
                    (m, format!("margin {m}: 1% of T"))
                }
            };
            rows.extend(registry.lineup(s, m, &from));
        }
    }
    let mut seen = Vec::new();
    rows.retain(|(spec, _)| {
        let fresh = !seen.contains(spec);
        seen.push(spec.clone());
        fresh
    });
    rows
}

/// A row of `compare.json`: the run's summary, and where its strategy came from.
#[derive(serde::Serialize)]
pub struct Row<'a> {
    /// "the scenario's own", or how its margins were chosen.
    pub origin: &'a str,
    #[serde(flatten)]
    pub summary: &'a Summary,
}
