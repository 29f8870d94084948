//! Exact time: true instants and spans, node-local clock readings and spans, drift rates.
//!
//! True (simulation) time is an integer count of nanoseconds since the start of the run
//! ([`SimTime`]); a span of it is a [`Dur`]. A node's clock reading is a different type
//! ([`LocalTime`]), and a span that a node measures on its own clock (a lease term, a margin, a
//! wall-clock step) is a [`LocalDur`], so that true and local time cannot be mixed by accident:
//! the only ways between them are a node's clock mapping (`clock::NodeClock`) and the explicit,
//! greppable [`Dur::as_local`] / [`LocalDur::as_true`] for the few places (the advisor's bounds,
//! parameter defaults) that reason about a span's length in both worlds at once. All four are
//! signed nanoseconds behind private fields. Drift is held as an exact integer in parts per 10^12
//! ([`DriftRate`]); no floating point appears here except in the one-time conversion from a
//! scenario's `drift_ppm`.
//!
//! ```
//! use leasesim::time::{LocalDur, LocalTime};
//! let deadline = LocalTime::from_ns(0) + LocalDur::from_secs(10);
//! assert_eq!(deadline - LocalTime::from_ns(0), LocalDur::from_secs(10));
//! ```
//! A true span does not add to a clock reading:
//! ```compile_fail
//! use leasesim::time::{Dur, LocalTime};
//! let deadline = LocalTime::from_ns(0) + Dur::from_secs(10);
//! ```
//! nor a local span to a true instant:
//! ```compile_fail
//! use leasesim::time::{LocalDur, SimTime};
//! let at = SimTime::ZERO + LocalDur::from_secs(10);
//! ```

use std::fmt;
use std::ops::{Add, AddAssign, Neg, Sub};

/// Nanoseconds per unit, for readability at call sites.
pub const NS_PER_US: i64 = 1_000;
pub const NS_PER_MS: i64 = 1_000_000;
pub const NS_PER_S: i64 = 1_000_000_000;

/// A true instant: nanoseconds since the start of the run.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(i64);

/// A reading of one node's clock (monotonic or wall), in nanoseconds of that clock.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LocalTime(i64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    /// Later than any instant a run can reach; used for "never".
    pub const NEVER: SimTime = SimTime(i64::MAX);

    pub const fn from_ns(ns: i64) -> SimTime {
        SimTime(ns)
    }
    pub const fn ns(self) -> i64 {
        self.0
    }
    /// The true span from `earlier` to `self`.
    pub fn since(self, earlier: SimTime) -> Dur {
        Dur(self.0 - earlier.0)
    }
}

impl LocalTime {
    pub const fn from_ns(ns: i64) -> LocalTime {
        LocalTime(ns)
    }
    pub const fn ns(self) -> i64 {
        self.0
    }
}

/// Defines a signed span type with unit constructors, saturating arithmetic and a display that
/// keeps the unit exact; [`Dur`] and [`LocalDur`] share it and nothing else.
macro_rules! span_type {
    ($(#[$doc:meta])* $name:ident, $debug:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(i64);

        impl $name {
            pub const ZERO: $name = $name(0);
            pub const MAX: $name = $name(i64::MAX);

            pub const fn from_ns(ns: i64) -> $name {
                $name(ns)
            }
            pub const fn from_us(us: i64) -> $name {
                $name(us * NS_PER_US)
            }
            pub const fn from_ms(ms: i64) -> $name {
                $name(ms * NS_PER_MS)
            }
            pub const fn from_secs(s: i64) -> $name {
                $name(s * NS_PER_S)
            }
            pub const fn ns(self) -> i64 {
                self.0
            }
            pub fn max(self, other: $name) -> $name {
                $name(self.0.max(other.0))
            }
            pub fn min(self, other: $name) -> $name {
                $name(self.0.min(other.0))
            }
        }
        impl Add for $name {
            type Output = $name;
            fn add(self, o: $name) -> $name {
                $name(self.0.saturating_add(o.0))
            }
        }
        impl Sub for $name {
            type Output = $name;
            fn sub(self, o: $name) -> $name {
                $name(self.0.saturating_sub(o.0))
            }
        }
        impl Neg for $name {
            type Output = $name;
            fn neg(self) -> $name {
                $name(self.0.saturating_neg())
            }
        }
        impl AddAssign for $name {
            fn add_assign(&mut self, o: $name) {
                self.0 = self.0.saturating_add(o.0);
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&format_ns(self.0))
            }
        }
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($debug, "({})"), format_ns(self.0))
            }
        }
    };
}

span_type!(
    /// A signed span of true time in nanoseconds: a delay, a pause, an overlap, a fault's `at`.
    Dur,
    "Dur"
);
span_type!(
    /// A signed span of one node's clock in nanoseconds of that clock: a lease term, a margin,
    /// a timeout, a wall-clock step. How much true time it takes depends on the clock's drift.
    LocalDur,
    "LocalDur"
);

impl Dur {
    /// The same number of nanoseconds read as a span of a local clock: exact only for a clock
    /// without drift. For bounds and defaults that deliberately compare the two.
    pub const fn as_local(self) -> LocalDur {
        LocalDur(self.0)
    }
}
impl LocalDur {
    /// The same number of nanoseconds read as a span of true time: exact only for a clock without
    /// drift. For bounds and defaults that deliberately compare the two.
    pub const fn as_true(self) -> Dur {
        Dur(self.0)
    }
}

impl Add<Dur> for SimTime {
    type Output = SimTime;
    fn add(self, d: Dur) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl Sub<Dur> for SimTime {
    type Output = SimTime;
    fn sub(self, d: Dur) -> SimTime {
        SimTime(self.0.saturating_sub(d.0))
    }
}
impl Add<LocalDur> for LocalTime {
    type Output = LocalTime;
    fn add(self, d: LocalDur) -> LocalTime {
        LocalTime(self.0.saturating_add(d.0))
    }
}
impl Sub<LocalDur> for LocalTime {
    type Output = LocalTime;
    fn sub(self, d: LocalDur) -> LocalTime {
        LocalTime(self.0.saturating_sub(d.0))
    }
}
impl Sub for LocalTime {
    type Output = LocalDur;
    fn sub(self, o: LocalTime) -> LocalDur {
        LocalDur(self.0.saturating_sub(o.0))
    }
}

/// Formats a nanosecond count with the largest unit that keeps it exact (`1.5s`, `-200ms`, `7ns`).
pub fn format_ns(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    if a == 0 {
        return "0s".to_string();
    }
    for (unit, per) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if a >= per {
            let whole = a / per;
            let frac = a % per;
            if frac == 0 {
                return format!("{sign}{whole}{unit}");
            }
            let digits = per.ilog10() as usize;
            let frac_str = format!("{frac:0digits$}");
            return format!("{sign}{whole}.{}{unit}", frac_str.trim_end_matches('0'));
        }
    }
    format!("{sign}{a}ns")
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", format_ns(self.0))
    }
}
impl fmt::Debug for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SimTime({}ns)", self.0)
    }
}
impl fmt::Debug for LocalTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LocalTime({}ns)", self.0)
    }
}

/// Parts per 10^12 in one ppm.
pub const PPT_PER_PPM: i64 = 1_000_000;
/// The unit rate: a clock with zero drift advances 10^12 parts per 10^12 of true time.
pub const RATE_ONE: i64 = 1_000_000_000_000;

/// A drift rate, exactly, in parts per 10^12 (1 ppm = 10^6 ppt). Positive runs fast.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct DriftRate {
    pub ppt: i64,
}

impl DriftRate {
    pub const ZERO: DriftRate = DriftRate { ppt: 0 };

    /// Converts a scenario's ppm value (fractions allowed) once, rounding to the nearest ppt.
    /// Returns `None` for values a clock cannot have: not finite, at or above 10^9 ppm, or so
    /// close to -10^6 ppm that the rounded rate `1 + drift` is not positive (a clock that stops
    /// or runs backward; mapping a deadline back to true time would divide by zero).
    /// Scenarios are held to far narrower drifts (`scenario::limits::MAX_DRIFT_PPM`).
    pub fn from_ppm(ppm: f64) -> Option<DriftRate> {
        if !ppm.is_finite() || ppm <= -1e6 || ppm >= 1e9 {
            return None;
        }
        let rate = DriftRate {
            ppt: (ppm * PPT_PER_PPM as f64).round() as i64,
        };
        (rate.rate() > 0).then_some(rate)
    }

    pub const fn from_ppm_int(ppm: i64) -> DriftRate {
        DriftRate {
            ppt: ppm * PPT_PER_PPM,
        }
    }

    /// The clock's rate as a ratio over [`RATE_ONE`]: `1 + drift`.
    pub fn rate(self) -> i64 {
        RATE_ONE + self.ppt
    }

    /// The drift in ppm, for display only.
    pub fn as_ppm(self) -> f64 {
        self.ppt as f64 / PPT_PER_PPM as f64
    }
}

/// `x / 10^12` rounded toward negative infinity, clamped to i64. 10^12 = 2^12 * 5^12 and nested
/// floor divisions compose exactly, so a shift first brings most products (|x| < 2^75) into i64,
/// where dividing by the constant 5^12 is a multiply and a shift instead of an i128 division.
#[inline]
pub fn div_rate_one_floor(x: i128) -> i64 {
    const FIVE_12: i64 = 244_140_625;
    let shifted = x >> 12; // floor(x / 2^12), also for negative x
    match i64::try_from(shifted) {
        // Unsigned, the division by a constant is a multiply and a shift with no sign's fixup.
        Ok(s) if s >= 0 => (s as u64 / FIVE_12 as u64) as i64,
        Ok(s) => s.div_euclid(FIVE_12),
        Err(_) => {
            let q = x.div_euclid(RATE_ONE as i128);
            q.clamp(i64::MIN as i128, i64::MAX as i128) as i64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_arithmetic_are_exact_and_saturate() {
        assert_eq!(Dur::from_us(7).ns(), 7_000);
        assert_eq!(Dur::from_ms(7).ns(), 7_000_000);
        assert_eq!(Dur::from_secs(7).ns(), 7_000_000_000);
        assert_eq!(Dur::from_ns(7).ns(), 7);
        let t = SimTime::from_ns(10_000);
        assert_eq!(t.ns(), 10_000);
        assert_eq!(t.since(SimTime::from_ns(2_500)), Dur::from_ns(7_500));
        assert_eq!(t + Dur::from_ns(5), SimTime::from_ns(10_005));
        assert_eq!(t - Dur::from_ns(5), SimTime::from_ns(9_995));
        assert_eq!(SimTime::NEVER + Dur::from_ns(1), SimTime::NEVER);
        let l = LocalTime::from_ns(3);
        assert_eq!(l + LocalDur::from_ns(4), LocalTime::from_ns(7));
        assert_eq!(l - LocalDur::from_ns(4), LocalTime::from_ns(-1));
        assert_eq!(l - LocalTime::from_ns(10), LocalDur::from_ns(-7));
        assert_eq!(Dur::from_ns(3) + Dur::from_ns(4), Dur::from_ns(7));
        assert_eq!(Dur::from_ns(3) - Dur::from_ns(4), Dur::from_ns(-1));
        assert_eq!(-Dur::from_ns(3), Dur::from_ns(-3));
        assert_eq!(-LocalDur::from_ns(i64::MIN), LocalDur::MAX);
        let mut d = Dur::from_ns(i64::MAX - 1);
        d += Dur::from_ns(5);
        assert_eq!(d, Dur::MAX);
        let mut d = LocalDur::from_ns(i64::MAX - 1);
        d += LocalDur::from_ns(5);
        assert_eq!(d, LocalDur::MAX);
        assert_eq!(Dur::from_ms(3).max(Dur::from_ms(4)), Dur::from_ms(4));
        assert_eq!(
            LocalDur::from_ms(3).min(LocalDur::from_ms(4)),
            LocalDur::from_ms(3)
        );
        assert_eq!(Dur::from_us(9).as_local(), LocalDur::from_us(9));
        assert_eq!(LocalDur::from_us(9).as_true(), Dur::from_us(9));
        assert_eq!(DriftRate::from_ppm_int(-50).rate(), RATE_ONE - 50_000_000);
        assert_eq!(DriftRate::from_ppm_int(-50).as_ppm(), -50.0);
        // Too fast for any clock, though the rate would be positive.
        assert!(DriftRate::from_ppm(1e9).is_none());
        assert!(DriftRate::from_ppm(5e8).is_some());
    }

    #[test]
    fn debug_and_display_show_units() {
        assert_eq!(format!("{:?}", Dur::from_ns(1_500_000_000)), "Dur(1.5s)");
        assert_eq!(format!("{:?}", LocalDur::from_ms(-2)), "LocalDur(-2ms)");
        assert_eq!(format!("{}", LocalDur::from_us(1_500)), "1.5ms");
        assert_eq!(format!("{}", SimTime::from_ns(1_500_000_000)), "t=1.5s");
        assert_eq!(format!("{:?}", SimTime::from_ns(5)), "SimTime(5ns)");
        assert_eq!(format!("{:?}", LocalTime::from_ns(-5)), "LocalTime(-5ns)");
    }

    #[test]
    fn formats_with_exact_units() {
        assert_eq!(format_ns(1_500_000_000), "1.5s");
        assert_eq!(format_ns(-200_000_000), "-200ms");
        assert_eq!(format_ns(3_333_333_333), "3.333333333s");
        assert_eq!(format_ns(7), "7ns");
        assert_eq!(format_ns(3_005_005), "3.005005ms");
    }

    #[test]
    fn drift_conversion_is_exact_for_fractions() {
        assert_eq!(DriftRate::from_ppm(-50.0).unwrap().ppt, -50_000_000);
        assert_eq!(DriftRate::from_ppm(0.25).unwrap().ppt, 250_000);
        assert!(DriftRate::from_ppm(-1e6).is_none());
        assert!(DriftRate::from_ppm(f64::NAN).is_none());
        // Rounds to a rate of 0: a stopped clock (found by fuzzing).
        assert!(DriftRate::from_ppm(-999999.9999995).is_none());
        assert!(DriftRate::from_ppm(-999999.999).unwrap().rate() > 0);
    }

    #[test]
    fn fast_division_by_rate_one_matches_i128() {
        let one = RATE_ONE as i128;
        for x in [
            0i128,
            1,
            -1,
            one - 1,
            one,
            -one,
            -one - 1,
            (1i128 << 75) - 1,
            -(1i128 << 75),
            1i128 << 80,
            -(1i128 << 80) - 7,
            3_600_000_000_000 * 100_000_000 + 999_999_999_999,
        ] {
            let want = x.div_euclid(one).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
            assert_eq!(div_rate_one_floor(x), want, "x = {x}");
        }
        assert_eq!(div_rate_one_floor(i128::MAX), i64::MAX);
        assert_eq!(div_rate_one_floor(i128::MIN), i64::MIN);
    }
}
