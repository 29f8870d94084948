//! What a node believes, as the protocols say it and the oracle judges it: a [`Belief`] per
//! authority ([`Beliefs`]), and how each authority may be held ([`Claim`], [`Authorities`]).
//!
//! These small types are the oracle's own: node logic reports them (the strategy module
//! re-exports them), and the oracle turns them into exact intervals of true time.

use crate::clock::ClockKind;
use crate::msg::Token;
use crate::time::LocalTime;

/// What a node believes about one authority, as the oracle needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Belief {
    /// Holds nothing.
    #[default]
    None,
    /// Believes unconditionally (a cached bool) until told otherwise.
    Bool { token: Token },
    /// Believes while `clock` reads less than `deadline`.
    Until {
        token: Token,
        clock: ClockKind,
        deadline: LocalTime,
    },
}

/// A node's beliefs, per authority: `write` (it acts alone on the resource) and
/// `read` (it serves reads from local state without a round trip).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Beliefs {
    pub write: Belief,
    pub read: Belief,
}

impl Beliefs {
    pub const NONE: Beliefs = Beliefs {
        write: Belief::None,
        read: Belief::None,
    };

    /// Both authorities together, as the base protocol grants them.
    pub fn both(b: Belief) -> Beliefs {
        Beliefs { write: b, read: b }
    }
}

/// How a protocol's authority may be held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub enum Claim {
    /// At most one node may hold it: two believers at once are an overlap.
    Exclusive,
    /// Several nodes may hold it by design (reported as shared, judged by harm alone).
    Shared,
    /// Held with the write authority, always: not tracked apart.
    WithWrite,
}

/// The claims a protocol makes for its two authorities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Authorities {
    pub write: Claim,
    pub read: Claim,
}

impl Authorities {
    /// One exclusive lease that carries both authorities (the base protocol, Redlock).
    pub const ONE_LEASE: Authorities = Authorities {
        write: Claim::Exclusive,
        read: Claim::WithWrite,
    };
}
