//! Every protocol as a [`Strategy`]: the engine runs it, monomorphised (its messages never
//! boxed), and hands the result back through the type-erased [`Ran`], which [`simulate`] opens.
//! This impl lives here, not with the trait, so that the strategy module never names the
//! engine.

use super::RunResult;
use crate::oracle::Authorities;
use crate::scenario::Scenario;
use crate::strategy::{Protocol, Ran, Strategy};
use crate::trace::Observer;

impl<P: Protocol> Strategy for P {
    fn authorities(&self) -> Authorities {
        Protocol::authorities(self)
    }

    fn simulate(
        &self,
        scenario: &Scenario,
        observer: Option<&mut (dyn Observer + 'static)>,
    ) -> Ran {
        Ran::new(super::build(scenario, self, observer).run())
    }
}

/// Runs `scenario` (validated for `strategy`) under `strategy`, telling `observer` what happens.
pub fn simulate(
    strategy: &dyn Strategy,
    scenario: &Scenario,
    observer: Option<&mut (dyn Observer + 'static)>,
) -> RunResult {
    strategy
        .simulate(scenario, observer)
        .take()
        .expect("a strategy runs on the engine, which returns its RunResult")
}
