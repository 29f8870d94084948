//! The space of base-protocol strategies: the clock a holder keeps its deadline on, where its
//! term starts, the margins on either side, how it checks its lease. Each named strategy is a
//! point of it, placed there by its settings (`base::settings`):
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
//! Under `TrueTime` the grantor stamps each grant and renewal with an absolute
//! expiry E = TT.now().latest + T and the holder believes while its own TT.now().latest is below
//! E - h: both sides measure one instant, E, on clocks that know their error.

use crate::clock::ClockKind;
use crate::time::LocalDur;
use serde::{Deserialize, Serialize};

/// Where a lease holder starts counting its term.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LeaseStart {
    /// At the local time it sent the request that the grant answers (correct).
    OnSend,
    /// At the local time it received the grant (a classic bug).
    OnReceive,
}

/// How a holder decides, on each use, that its lease is still valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Validity {
    /// Reads the clock on every use and compares it with the deadline.
    Clock,
    /// Reads a cached bool that only the renewal loop or a `Reject` clears.
    CachedBool,
    /// Reads a bool that nothing clears but a crash: a lock held until Unlock (etcd's mutex,
    /// the story of a lock service whose holder never checks its lease). The holder goes on
    /// renewing and ignores every `Reject`; it believes until it crashes or the run ends, even
    /// on a grant that arrives after its own end.
    Unchecked,
}

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

impl Default for Rules {
    /// `GrantorOnly`: both sides time the full T on their monotonic clocks from the request's
    /// send time, and the holder checks its clock on every use. Every other point changes some
    /// of these ([`super::base::settings`] says which).
    fn default() -> Rules {
        Rules {
            holder_clock: ClockKind::Monotonic,
            lease_start: LeaseStart::OnSend,
            holder_margin: LocalDur::ZERO,
            grantor_margin: LocalDur::ZERO,
            validity: Validity::Clock,
            expiry: Expiry::OwnClocks,
        }
    }
}
