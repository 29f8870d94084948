//! The `clocks` section: the drift spread, and the error bound of `uncertainty`.

use super::Problems;
use crate::scenario::limits;

pub(super) fn check(p: &mut Problems) {
    let clocks = &p.s.clocks;
    let spread = clocks.drift_spread_ppm;
    if !(spread.is_finite() && (0.0..=limits::MAX_DRIFT_SPREAD_PPM).contains(&spread)) {
        p.push(format!(
            "clocks.drift_spread_ppm: {spread} is outside [0, {}], the limit (see docs/src/limits.md)",
            limits::MAX_DRIFT_SPREAD_PPM
        ));
    }
    let Some(u) = clocks.uncertainty else {
        return;
    };
    if u.base.ns() < 0 || u.base.ns() > limits::MAX_CLOCK_STEP_NS {
        p.push(format!(
            "clocks.uncertainty.base: {} is outside [0s, {}] (see docs/src/limits.md)",
            u.base,
            limits::dur(limits::MAX_CLOCK_STEP_NS)
        ));
    }
    if !(u.growth_ppm.is_finite() && (0.0..=limits::MAX_DRIFT_PPM).contains(&u.growth_ppm)) {
        p.push(format!(
            "clocks.uncertainty.growth_ppm: {} is outside [0, {}], the limit (see \
             docs/src/limits.md)",
            u.growth_ppm,
            limits::MAX_DRIFT_PPM
        ));
    }
    if u.sync_every.ns() < limits::MIN_INTERVAL_NS {
        p.push(format!(
            "clocks.uncertainty.sync_every: {} is below the shortest interval, {} (see \
             docs/src/limits.md)",
            u.sync_every,
            limits::dur(limits::MIN_INTERVAL_NS)
        ));
    }
}
