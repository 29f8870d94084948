//! Duration distributions as scenarios write them ([`DurationDist`]), and sampling them as whole
//! nanoseconds.
//!
//! Distributions are built once ([`Sampler::new`]) and sampled many times. Continuous draws are
//! rounded to the nearest nanosecond and clamped at zero (below zero only where the scenario's
//! `Uniform` allows it, as for clock steps). rand_distr's pure-Rust math keeps draws identical on
//! every platform.

use crate::rng::Rng;
use crate::time::Dur;
use rand::RngExt;
use rand_distr::{Distribution, Exp1, LogNormal, Pareto};
use serde::{Deserialize, Serialize};

/// A distribution of durations (message delays, fault lengths, steps).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum DurationDist {
    Fixed(Dur),
    /// Uniform over [min, max].
    Uniform {
        min: Dur,
        max: Dur,
    },
    /// Exponential with the given mean.
    Exponential {
        mean: Dur,
    },
    /// Log-normal with the given median and sigma of the underlying normal (heavy-tailed).
    LogNormal {
        median: Dur,
        sigma: f64,
    },
    /// Pareto with minimum `scale` and tail index `shape` (heavy-tailed; shape <= 2 has infinite variance).
    Pareto {
        scale: Dur,
        shape: f64,
    },
}

/// A ready-to-sample duration distribution.
#[derive(Clone, Debug)]
pub enum Sampler {
    Fixed(i64),
    Uniform(i64, i64),
    Exponential(f64),
    LogNormal(LogNormal<f64>),
    Pareto(Pareto<f64>),
}

impl Sampler {
    /// Builds a sampler; the error says which parameter is out of range.
    pub fn new(d: &DurationDist) -> Result<Sampler, String> {
        Ok(match *d {
            DurationDist::Fixed(v) => Sampler::Fixed(v.ns()),
            DurationDist::Uniform { min, max } => {
                if min > max {
                    return Err(format!("Uniform min {min} is above max {max}"));
                }
                Sampler::Uniform(min.ns(), max.ns())
            }
            DurationDist::Exponential { mean } => {
                if mean.ns() < 0 {
                    return Err(format!("Exponential mean {mean} is negative"));
                }
                Sampler::Exponential(mean.ns() as f64)
            }
            DurationDist::LogNormal { median, sigma } => {
                if median.ns() <= 0 || !(sigma.is_finite() && sigma >= 0.0) {
                    return Err(format!(
                        "LogNormal needs median > 0 and sigma >= 0 (got {median}, {sigma})"
                    ));
                }
                Sampler::LogNormal(
                    LogNormal::new((median.ns() as f64).ln(), sigma).map_err(|e| e.to_string())?,
                )
            }
            DurationDist::Pareto { scale, shape } => {
                if scale.ns() <= 0 || !(shape.is_finite() && shape > 0.0) {
                    return Err(format!(
                        "Pareto needs scale > 0 and shape > 0 (got {scale}, {shape})"
                    ));
                }
                Sampler::Pareto(Pareto::new(scale.ns() as f64, shape).map_err(|e| e.to_string())?)
            }
        })
    }

    /// Whether every draw is the same value (no randomness consumed).
    pub fn is_fixed(&self) -> bool {
        matches!(self, Sampler::Fixed(_))
    }

    /// The smallest value a draw can take, in ns.
    pub fn min_ns(&self) -> i64 {
        match self {
            Sampler::Fixed(v) | Sampler::Uniform(v, _) => *v,
            Sampler::Pareto(_) | Sampler::LogNormal(_) | Sampler::Exponential(_) => 0,
        }
    }

    /// One draw. The exponential, a Poisson stream's gap drawn for most of a busy run's events,
    /// is drawn inline; the others through a call.
    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng) -> Dur {
        if let Sampler::Exponential(mean) = *self {
            let x: f64 = Exp1.sample(rng);
            return Dur::from_ns(to_ns(x * mean));
        }
        self.sample_other(rng)
    }

    /// One draw of any but the exponential.
    #[inline(never)]
    fn sample_other(&self, rng: &mut Rng) -> Dur {
        let ns = match self {
            Sampler::Fixed(v) => return Dur::from_ns(*v),
            Sampler::Uniform(lo, hi) => return Dur::from_ns(rng.random_range(*lo..=*hi)),
            Sampler::Exponential(_) => unreachable!("drawn inline by `sample`"),
            Sampler::LogNormal(d) => d.sample(rng),
            Sampler::Pareto(d) => d.sample(rng),
        };
        Dur::from_ns(to_ns(ns))
    }
}

/// Rounds a non-negative float count of nanoseconds to an integer (half away from zero, as
/// `f64::round`), saturating.
#[inline]
pub fn to_ns(x: f64) -> i64 {
    /// 2^52: from here up every double is a whole number.
    const WHOLE_FROM: f64 = 4_503_599_627_370_496.0;
    if (0.5..WHOLE_FROM).contains(&x) {
        // `x.round()` in one addition and the truncating cast: x + 0.5 is exact, or rounds to
        // a double on the same side of every whole number. (The next half above x lies at
        // least x's spacing away, and the sum's spacing is at most twice x's; the one tie that
        // could cross a whole number, 0.49999999999999994 + 0.5 rounding to 1, is below one
        // half.)
        return (x + 0.5) as i64;
    }
    if x.is_nan() || x < 0.5 {
        0
    } else if x >= 4e18 {
        4_000_000_000_000_000_000
    } else {
        x as i64 // whole
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn to_ns_rounds_half_away_from_zero_like_round() {
        // The largest double below one half stays 0 (x + 0.5 would round up to 1.0); halves
        // go up; 2^52 - 0.5 is the last half a double can hold; above 2^53 every double is
        // whole.
        for (x, want) in [
            (0.499_999_999_999_999_94, 0),
            (0.5, 1),
            (1.5, 2),
            (2.5, 3),
            (2.499_999_999_999_999_6, 2),
            (4_503_599_627_370_495.5, 4_503_599_627_370_496),
            (9_007_199_254_740_994.0, 9_007_199_254_740_994),
            (3.999_999_999_999_999_5e18, 3_999_999_999_999_999_488),
        ] {
            assert_eq!(to_ns(x), want, "{x}");
            assert_eq!(to_ns(x), x.round() as i64, "{x}");
        }
        assert_eq!(to_ns(-0.7), 0);
        assert_eq!(to_ns(f64::NAN), 0);
        assert_eq!(to_ns(5e18), 4_000_000_000_000_000_000);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// The same integer as `f64::round` for every double of the range, at every scale.
        #[test]
        fn to_ns_is_round(mantissa in 0.0f64..1.0, exponent in 0i32..62) {
            let x = mantissa * 2f64.powi(exponent);
            prop_assume!(x < 4e18);
            prop_assert_eq!(to_ns(x), if x <= 0.0 { 0 } else { x.round() as i64 });
        }

        /// The same for doubles drawn by their bits, uniformly over every double from one
        /// quarter to 2^53 (the one-addition range and both its edges).
        #[test]
        fn to_ns_is_round_for_every_double_near_its_range(
            bits in 0x3FD0_0000_0000_0000u64..0x4340_0000_0000_0000u64,
        ) {
            let x = f64::from_bits(bits);
            prop_assert_eq!(to_ns(x), x.round() as i64);
        }
    }
}
