//! The space of base-protocol strategies (SPEC 2.7) and where each named strategy sits in it.
//!
//! | name | holder clock | lease start | holder stops at | grantor re-grants at | check |
//! |---|---|---|---|---|---|
//! | `TwoSided(h, g)` | monotonic | OnSend | T - h | T + g | clock |
//! | `GrantorOnly` | monotonic | OnSend | T | T | clock |
//! | `HolderOnly(m)` | monotonic | OnSend | T - m | T - m | clock |
//! | `CachedBool` | monotonic | OnSend | renewal loop finds start + T passed | T | bool |
//! | `WallClock(h)` | wall | OnSend | T - h | T | clock |
//! | `OnReceiveStart(h)` | monotonic | OnReceive | T - h | T | clock |
//! | `TrueTime(h)` | TT.now().latest | the grantor's E | E - h | TT.now().earliest > E | clock |
//!
//! Under `TrueTime` (SPEC 2.8) the grantor stamps each grant and renewal with an absolute
//! expiry E = TT.now().latest + T and the holder believes while its own TT.now().latest is below
//! E - h: both sides measure one instant, E, on clocks that know their error.

use crate::clock::ClockKind;
use crate::scenario::{LeaseStart, StrategySpec, Validity};
use crate::time::LocalDur;

/// One point of the strategy space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// The clock on which the holder keeps its deadline.
    pub holder_clock: ClockKind,
    pub lease_start: LeaseStart,
    /// The holder stops at start + T - holder_margin.
    pub holder_margin: LocalDur,
    /// The grantor frees the lease at grant/renewal + T + grantor_margin (may be negative).
    pub grantor_margin: LocalDur,
    pub validity: Validity,
    pub expiry: Expiry,
}

/// How grantor and holder place the end of a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// Each on its own clock: the grantor frees the lease when its monotonic clock reaches the
    /// grant (or renewal) + T + grantor_margin, the holder stops at its term's start + T -
    /// holder_margin on `holder_clock`.
    OwnClocks,
    /// TrueTime: the grantor stamps E = TT.now().latest + T, the holder believes while
    /// TT.now().latest < E - holder_margin, and the grantor frees the lease once
    /// TT.now().earliest > E.
    TrueTime,
}

impl Rules {
    /// The rules of a strategy of the base protocol.
    ///
    /// # Panics
    ///
    /// For a strategy that is a protocol of its own: Redlock, or one not built in
    /// ([`StrategySpec::Other`]); neither is a point of this space.
    pub fn of(spec: &StrategySpec) -> Rules {
        let base = Rules {
            holder_clock: ClockKind::Monotonic,
            lease_start: LeaseStart::OnSend,
            holder_margin: LocalDur::ZERO,
            grantor_margin: LocalDur::ZERO,
            validity: Validity::Clock,
            expiry: Expiry::OwnClocks,
        };
        match *spec {
            StrategySpec::TwoSided {
                holder_margin,
                grantor_margin,
            } => Rules {
                holder_margin,
                grantor_margin,
                ..base
            },
            StrategySpec::GrantorOnly => base,
            StrategySpec::HolderOnly { margin } => Rules {
                holder_margin: margin,
                grantor_margin: -margin,
                ..base
            },
            StrategySpec::CachedBool => Rules {
                validity: Validity::CachedBool,
                ..base
            },
            StrategySpec::WallClock { holder_margin } => Rules {
                holder_clock: ClockKind::Wall,
                holder_margin,
                ..base
            },
            StrategySpec::OnReceiveStart { holder_margin } => Rules {
                lease_start: LeaseStart::OnReceive,
                holder_margin,
                ..base
            },
            StrategySpec::Custom {
                holder_clock,
                lease_start,
                holder_margin,
                grantor_margin,
                validity,
            } => Rules {
                holder_clock,
                lease_start,
                holder_margin,
                grantor_margin,
                validity,
                expiry: Expiry::OwnClocks,
            },
            StrategySpec::TrueTime { holder_margin } => Rules {
                holder_clock: ClockKind::TtLatest,
                holder_margin,
                expiry: Expiry::TrueTime,
                ..base
            },
            StrategySpec::Redlock { .. }
            | StrategySpec::RaftLeaderLease { .. }
            | StrategySpec::LeaseGuard { .. }
            | StrategySpec::ChubbySession { .. }
            | StrategySpec::K8sLeaderElection { .. }
            | StrategySpec::Other { .. } => {
                panic!("{} is not a strategy of the base protocol", spec.name())
            }
        }
    }
}
