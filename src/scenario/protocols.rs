//! What loading and validating a scenario need of the protocols a program knows, said as
//! traits so that this module names no protocol and imports nothing of the strategy module,
//! which sits above it (the strategy module implements them).
//!
//! [`Protocols`] reads a scenario's [`StrategySpec`] into its protocol's settings (or says why
//! it cannot, with where in the strategy's text); `strategy::Registry` is one. [`Builtin`] is
//! the built-in protocols alone, what [`super::load::from_text`] and
//! [`super::validate::validate`] use; the strategy module implements [`Protocols`] for it with
//! its built-in registry. [`StrategyChecks`] is what validation asks of the protocol a scenario
//! runs under: its message kinds and instructions, the problems of its settings and of the
//! scenario's roles, the lease fields it reads, and the margin the drift warning compares.

use super::{Scenario, StrategySpec};
use crate::time::LocalDur;
use ron::error::SpannedError;
use std::fmt;

/// Which of `lease`'s periods a protocol reads: validation checks only those, so that a problem
/// names a field the protocol uses. The term `lease.duration` is every protocol's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseFields {
    /// `lease.renew_every`: a holder renews this often.
    pub renew_every: bool,
    /// `lease.retry_every`: a contender holding nothing retries this often.
    pub retry_every: bool,
    /// `lease.initial_leader`: the protocol elects its holder and lets the named node lead first.
    pub initial_leader: bool,
}

impl LeaseFields {
    /// Every period: a holder renews, a contender retries (no initial leader).
    pub const ALL: LeaseFields = LeaseFields {
        renew_every: true,
        retry_every: true,
        initial_leader: false,
    };
    /// Every period, and `lease.initial_leader`: contenders that race for the holder, the
    /// named one trying first (the others' first try waits a retry period).
    pub const RACING: LeaseFields = LeaseFields {
        renew_every: true,
        retry_every: true,
        initial_leader: true,
    };
    /// The term alone: a protocol that times renewals and retries by settings of its own.
    pub const TERM_ONLY: LeaseFields = LeaseFields {
        renew_every: false,
        retry_every: false,
        initial_leader: false,
    };
}

/// What validation asks of the protocol a scenario runs under. The strategy module's
/// `Strategy` has it as a supertrait: every protocol answers it.
pub trait StrategyChecks {
    /// The protocol as RON text, as problems name it.
    fn describe(&self) -> String;
    /// The names of its message kinds (what `kinds:` and `expect.messages` may name).
    fn kinds(&self) -> &'static [&'static str];
    /// The operator instructions (faults such as `StepDown`) it understands.
    fn commands(&self) -> &'static [&'static str];
    /// What the renewal loop of a node with `role` is, in a few words (for messages and
    /// reports), or `None` if such a node keeps no lease of its own apart from its work: a
    /// `ThreadStall` of its `Renewal` loop is then refused.
    fn renewal_loop(&self, role: crate::scenario::Role) -> Option<&'static str>;
    /// What a node with `role` writes to its disk before it answers, in a few words ("its
    /// term, vote and log"), or `None` if it writes nothing: a `disk` on such a node is
    /// refused. None by default.
    fn persists(&self, _role: crate::scenario::Role) -> Option<&'static str> {
        None
    }
    /// Every problem with the strategy's own settings in `scenario`, each prefixed with its
    /// field path (`strategy.holder_margin: ...`): checked right after the lease. None by
    /// default (a protocol built without settings).
    fn check_settings(&self, _scenario: &Scenario) -> Vec<String> {
        Vec::new()
    }
    /// Every reason `scenario` does not fit the protocol (roles and their counts, options it
    /// does not support), each prefixed with the field at fault: checked with the nodes.
    fn check(&self, scenario: &Scenario) -> Vec<String>;
    /// Every problem with the nodes' own settings (`nodes[i].settings`), each node's settings
    /// checked as the strategy's are. By default the protocol takes none: each node that
    /// writes some is a problem.
    fn check_node_settings(&self, scenario: &Scenario) -> Vec<String> {
        let nodes = scenario.nodes.iter().enumerate();
        nodes
            .filter(|(_, n)| n.settings.is_some())
            .map(|(i, _)| {
                format!(
                    "nodes[{i}].settings: {} takes no settings of a node's own",
                    self.describe()
                )
            })
            .collect()
    }
    /// The lease periods it reads. All of them by default.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::ALL
    }
    /// The margin that the drift warning compares with T*rho, and how to name it
    /// (`holder_margin`), for a protocol whose holder stops that long before the grantor frees
    /// the lease, both timing one term on their own clocks. None by default: no warning.
    fn drift_margin(&self) -> Option<(LocalDur, &'static str)> {
        None
    }
    /// The events its own timers and messages add per simulated second of `scenario`, counted
    /// in the event estimate against `limits.max_events`. 0 by default.
    fn events_per_second(&self, _scenario: &Scenario) -> f64 {
        0.0
    }
}

/// The protocols a program knows, as loading and validation see them (`strategy::Registry`).
pub trait Protocols {
    /// The protocol `spec` names, with its settings read from `spec`'s text, as validation
    /// checks it; or why it cannot be read.
    fn checks(&self, spec: &StrategySpec) -> Result<Box<dyn StrategyChecks>, StrategyError>;
    /// `spec` as its protocol writes it (`TwoSided()` as `TwoSided`, defaults left out): the
    /// text summaries and reports print.
    fn normalize(&self, spec: &StrategySpec) -> Result<StrategySpec, StrategyError>;
}

/// The built-in protocols alone: the strategy module implements [`Protocols`] for this type
/// with its built-in registry (`strategy::Registry::new()`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Builtin;

/// Why a strategy could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrategyError {
    /// No protocol of this name is known.
    Unknown { name: String, known: Vec<String> },
    /// The fields do not read as the protocol's settings. The position is in the strategy's
    /// RON text ([`StrategySpec::to_ron`]), which starts at line 1, column 1.
    Fields {
        name: String,
        error: Box<SpannedError>,
    },
}

impl fmt::Display for StrategyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StrategyError::Unknown { name, known } => {
                write!(f, "unknown strategy {name:?} (known: {})", known.join(", "))
            }
            StrategyError::Fields { name, error } => write!(
                f,
                "{name} at {}: {}",
                error.span.start,
                super::load::describe(&error.code)
            ),
        }
    }
}

impl std::error::Error for StrategyError {}
