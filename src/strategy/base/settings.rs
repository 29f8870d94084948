//! The strategies of the base protocol as a scenario names them: the six of the strategy
//! space (`TwoSided`, `GrantorOnly`, `HolderOnly`, `CachedBool`, `WallClock`,
//! `OnReceiveStart`), `TrueTime`, and `Custom`, the general point. Each reads its margins,
//! writes itself back leaving zero margins out, checks them against T, and builds the base
//! protocol with its point of the space ([`Rules`]).

use super::BaseProtocol;
use crate::clock::ClockKind;
use crate::scenario::{LeaseFields, Scenario};
use crate::strategy::settings::check;
use crate::strategy::{Expiry, LeaseStart, Margin, Rules, Settings, Validity};
use crate::time::LocalDur;
use serde::Deserialize;

/// `Name(k: "d", ...)` with the margins that are not zero (they are the default), or `Name()`.
fn with_margins(name: &str, margins: &[(&str, LocalDur)]) -> String {
    let set: Vec<String> = margins
        .iter()
        .filter(|(_, d)| d.ns() != 0)
        .map(|(k, d)| format!("{k}: \"{d}\""))
        .collect();
    format!("{name}({})", set.join(", "))
}

/// The base protocol at `rules`, described as `settings` write themselves.
fn base(rules: Rules, settings: &impl Settings) -> BaseProtocol {
    BaseProtocol::new(rules, settings.to_ron())
}

/// A holder margin `m` bounded by T*rho: `--vary epsilon=` varies the field `field`.
fn epsilon(field: &'static str, m: LocalDur) -> Option<Margin> {
    Some(Margin {
        field,
        value: m,
        bounds_drift: true,
    })
}

/// The problems of a `holder_margin` of `m`: negative, or not shorter than the lease.
fn holder_margin_problems(m: LocalDur, s: &Scenario) -> Vec<String> {
    let mut p = Vec::new();
    check::margin(&mut p, "strategy.holder_margin", m, s.lease.duration);
    p
}

/// What a row of the common lineup says when it has no margin.
const NO_MARGIN: &str = "no margin to set";

/// The holder stops at T - holder_margin, the grantor re-grants at T + grantor_margin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TwoSided {
    #[serde(default)]
    pub holder_margin: LocalDur,
    #[serde(default)]
    pub grantor_margin: LocalDur,
}

impl Settings for TwoSided {
    const NAME: &'static str = "TwoSided";
    type Protocol = BaseProtocol;

    /// Every period, and `lease.initial_leader`: the named contender's Acquire comes first.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::RACING
    }

    fn to_ron(&self) -> String {
        with_margins(
            Self::NAME,
            &[
                ("holder_margin", self.holder_margin),
                ("grantor_margin", self.grantor_margin),
            ],
        )
    }

    fn build(&self) -> BaseProtocol {
        let rules = Rules {
            holder_margin: self.holder_margin,
            grantor_margin: self.grantor_margin,
            ..Rules::default()
        };
        base(rules, self)
    }

    fn validate(&self, s: &Scenario) -> Vec<String> {
        let mut p = holder_margin_problems(self.holder_margin, s);
        let g = self.grantor_margin;
        check::not_negative(&mut p, "strategy.grantor_margin", g);
        check::at_most_max(&mut p, "strategy.grantor_margin", g);
        p
    }

    fn drift_margin(&self) -> Option<(LocalDur, &'static str)> {
        let sum = self
            .holder_margin
            .ns()
            .saturating_add(self.grantor_margin.ns().max(0));
        Some((LocalDur::from_ns(sum), "holder_margin + grantor_margin"))
    }

    fn epsilon(&self) -> Option<Margin> {
        epsilon("holder_margin", self.holder_margin)
    }

    fn lineup(_: &Scenario, m: LocalDur, from: &str) -> Vec<(Self, String)> {
        let two_sided = TwoSided {
            holder_margin: m,
            grantor_margin: LocalDur::ZERO,
        };
        vec![(two_sided, from.to_string())]
    }
}

/// Only the grantor waits (T); the holder uses the full T.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantorOnly {}

impl Settings for GrantorOnly {
    const NAME: &'static str = "GrantorOnly";
    type Protocol = BaseProtocol;

    /// Every period, and `lease.initial_leader`: the named contender's Acquire comes first.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::RACING
    }

    fn to_ron(&self) -> String {
        Self::NAME.to_string()
    }

    fn build(&self) -> BaseProtocol {
        base(Rules::default(), self)
    }

    fn lineup(_: &Scenario, _: LocalDur, _: &str) -> Vec<(Self, String)> {
        vec![(GrantorOnly {}, NO_MARGIN.to_string())]
    }
}

/// Only the holder stops early; the grantor re-grants at T - margin too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HolderOnly {
    #[serde(default)]
    pub margin: LocalDur,
}

impl Settings for HolderOnly {
    const NAME: &'static str = "HolderOnly";
    type Protocol = BaseProtocol;

    /// Every period, and `lease.initial_leader`: the named contender's Acquire comes first.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::RACING
    }

    fn to_ron(&self) -> String {
        with_margins(Self::NAME, &[("margin", self.margin)])
    }

    fn build(&self) -> BaseProtocol {
        let rules = Rules {
            holder_margin: self.margin,
            grantor_margin: -self.margin,
            ..Rules::default()
        };
        base(rules, self)
    }

    fn validate(&self, s: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        check::margin(&mut p, "strategy.margin", self.margin, s.lease.duration);
        p
    }

    fn epsilon(&self) -> Option<Margin> {
        epsilon("margin", self.margin)
    }

    fn lineup(_: &Scenario, m: LocalDur, from: &str) -> Vec<(Self, String)> {
        vec![(HolderOnly { margin: m }, from.to_string())]
    }
}

/// isLeader is a bool cleared by the renewal loop or a `Reject`, never checked against a clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CachedBool {}

impl Settings for CachedBool {
    const NAME: &'static str = "CachedBool";
    type Protocol = BaseProtocol;

    /// Every period, and `lease.initial_leader`: the named contender's Acquire comes first.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::RACING
    }

    fn to_ron(&self) -> String {
        Self::NAME.to_string()
    }

    fn build(&self) -> BaseProtocol {
        let rules = Rules {
            validity: Validity::CachedBool,
            ..Rules::default()
        };
        base(rules, self)
    }

    fn lineup(_: &Scenario, _: LocalDur, _: &str) -> Vec<(Self, String)> {
        vec![(CachedBool {}, NO_MARGIN.to_string())]
    }
}

/// A strategy whose one setting is `holder_margin`, bounded by T*rho: the struct, and its
/// [`Settings`] with the base protocol at `rules(holder_margin)`. `WallClock` and
/// `OnReceiveStart` differ only in their rules.
macro_rules! holder_margin_strategy {
    ($(#[$doc:meta])* $name:ident, $rules:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            #[serde(default)]
            pub holder_margin: LocalDur,
        }

        impl Settings for $name {
            const NAME: &'static str = stringify!($name);
            type Protocol = BaseProtocol;

            /// Every period, and `lease.initial_leader`: the named contender's Acquire comes first.
            fn lease_fields(&self) -> LeaseFields {
                LeaseFields::RACING
            }

            fn to_ron(&self) -> String {
                with_margins(Self::NAME, &[("holder_margin", self.holder_margin)])
            }

            fn build(&self) -> BaseProtocol {
                let rules: fn(LocalDur) -> Rules = $rules;
                base(rules(self.holder_margin), self)
            }

            fn validate(&self, s: &Scenario) -> Vec<String> {
                holder_margin_problems(self.holder_margin, s)
            }

            fn drift_margin(&self) -> Option<(LocalDur, &'static str)> {
                Some((self.holder_margin, "holder_margin"))
            }

            fn epsilon(&self) -> Option<Margin> {
                epsilon("holder_margin", self.holder_margin)
            }

            fn lineup(_: &Scenario, m: LocalDur, from: &str) -> Vec<(Self, String)> {
                vec![($name { holder_margin: m }, from.to_string())]
            }
        }
    };
}

holder_margin_strategy!(
    /// The holder's deadline is on its wall clock.
    WallClock,
    |m| Rules {
        holder_clock: ClockKind::Wall,
        holder_margin: m,
        ..Rules::default()
    }
);

holder_margin_strategy!(
    /// The holder starts its term when it receives the grant, not when it sent the request.
    OnReceiveStart,
    |m| Rules {
        lease_start: LeaseStart::OnReceive,
        holder_margin: m,
        ..Rules::default()
    }
);

/// A single-grantor lease on TrueTime (Spanner): the grantor stamps an absolute expiry E =
/// TT.now().latest + T and grants again once TT.now().earliest > E; the holder believes while
/// TT.now().latest < E - holder_margin. Needs `clocks.uncertainty`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrueTime {
    #[serde(default)]
    pub holder_margin: LocalDur,
}

impl Settings for TrueTime {
    const NAME: &'static str = "TrueTime";
    type Protocol = BaseProtocol;

    /// Every period, and `lease.initial_leader`: the named contender's Acquire comes first.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::RACING
    }

    fn to_ron(&self) -> String {
        with_margins(Self::NAME, &[("holder_margin", self.holder_margin)])
    }

    fn build(&self) -> BaseProtocol {
        let rules = Rules {
            holder_clock: ClockKind::TtLatest,
            holder_margin: self.holder_margin,
            expiry: Expiry::TrueTime,
            ..Rules::default()
        };
        base(rules, self)
    }

    /// Its margin of either sign, |holder_margin| below T: at -T or below the holder believes
    /// a whole term past the expiry the grantor waits out (an overlap the scenario never
    /// meant), at T or above it never acts.
    fn validate(&self, s: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        check::signed_margin(
            &mut p,
            "strategy.holder_margin",
            self.holder_margin,
            s.lease.duration,
        );
        p
    }

    /// Its margin is varied as epsilon; the drift bound is not its (the clocks know their
    /// error).
    fn epsilon(&self) -> Option<Margin> {
        Some(Margin {
            field: "holder_margin",
            value: self.holder_margin,
            bounds_drift: false,
        })
    }

    /// With the margin `m`, when the clocks know their error.
    fn lineup(s: &Scenario, m: LocalDur, from: &str) -> Vec<(Self, String)> {
        let row = (TrueTime { holder_margin: m }, from.to_string());
        s.clocks
            .uncertainty
            .is_some()
            .then_some(row)
            .into_iter()
            .collect()
    }
}

/// The general point of the space the others are points of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Custom {
    pub holder_clock: ClockKind,
    pub lease_start: LeaseStart,
    #[serde(default)]
    pub holder_margin: LocalDur,
    #[serde(default)]
    pub grantor_margin: LocalDur,
    pub validity: Validity,
}

impl Settings for Custom {
    const NAME: &'static str = "Custom";
    type Protocol = BaseProtocol;

    /// Every period, and `lease.initial_leader`: the named contender's Acquire comes first.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::RACING
    }

    fn to_ron(&self) -> String {
        let Custom {
            holder_clock,
            lease_start,
            holder_margin,
            grantor_margin,
            validity,
        } = self;
        format!(
            "Custom(holder_clock: {holder_clock:?}, lease_start: {lease_start:?}, \
             holder_margin: \"{holder_margin}\", grantor_margin: \"{grantor_margin}\", \
             validity: {validity:?})"
        )
    }

    fn build(&self) -> BaseProtocol {
        let rules = Rules {
            holder_clock: self.holder_clock,
            lease_start: self.lease_start,
            holder_margin: self.holder_margin,
            grantor_margin: self.grantor_margin,
            validity: self.validity,
            expiry: Expiry::OwnClocks,
        };
        base(rules, self)
    }

    fn validate(&self, s: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        let (h, g, t) = (self.holder_margin, self.grantor_margin, s.lease.duration);
        check::margin(&mut p, "strategy.holder_margin", h, t);
        if self.validity == Validity::CachedBool && h.ns() != 0 {
            p.push(format!(
                "strategy.holder_margin: {h} does not apply with validity: CachedBool, whose \
                 bool is cleared at start + T (by the renewal loop or a Reject), never T - \
                 holder_margin; leave it out, or use validity: Clock"
            ));
        }
        if self.validity == Validity::Unchecked && h.ns() != 0 {
            p.push(format!(
                "strategy.holder_margin: {h} does not apply with validity: Unchecked, whose bool \
                 only a crash clears; leave it out, or use validity: Clock"
            ));
        }
        if g.ns() <= -t.ns() {
            p.push(format!(
                "strategy.grantor_margin: {g} would free the lease before it is granted (T is \
                 {t})"
            ));
        }
        check::at_most_max(&mut p, "strategy.grantor_margin", g);
        p
    }

    /// The holder margin, while the holder checks its clock.
    fn drift_margin(&self) -> Option<(LocalDur, &'static str)> {
        (self.validity == Validity::Clock).then_some((self.holder_margin, "holder_margin"))
    }

    fn epsilon(&self) -> Option<Margin> {
        epsilon("holder_margin", self.holder_margin)
    }
}
