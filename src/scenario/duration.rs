//! Durations as scenario files write them: a decimal number with a unit and an optional sign.
//!
//! `"1.5s"`, `"-200ms"`, `"3333333333ns"`, `"2m"`, `"1h"`, `"250us"`; microseconds also as `µs`
//! (U+00B5, the micro sign) or `μs` (U+03BC, the Greek mu that keyboards give). Parsing is exact decimal
//! arithmetic on the digits (no floating point): a value that is not a whole number of
//! nanoseconds is an error, as is one that does not fit in an i64.

use crate::time::{format_ns, Dur, LocalDur};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The units, as an error lists them.
const UNITS: &str = "ns, us (or \u{b5}s, \u{3bc}s), ms, s, m (or min), h";

/// Parses a duration string; the error says what was expected.
pub fn parse_duration(text: &str) -> Result<Dur, String> {
    let s = text.trim();
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let split = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| {
            format!("duration {text:?} has no unit; expected one of {UNITS} (e.g. \"1.5s\")")
        })?;
    let (number, unit) = body.split_at(split);
    let scale: i128 = match unit {
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => {
            return Err(format!(
                "duration {text:?} has unknown unit {unit:?}; expected one of {UNITS}"
            ))
        }
    };
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() || frac_part.contains('.') {
        return Err(format!(
            "duration {text:?} is not a number followed by a unit"
        ));
    }
    let mut ns: i128 = 0;
    for c in int_part.chars() {
        ns = ns * 10 + c.to_digit(10).unwrap() as i128;
        if ns > i64::MAX as i128 {
            return Err(format!("duration {text:?} is too large"));
        }
    }
    ns *= scale;
    let mut place = scale;
    for c in frac_part.chars() {
        let d = c.to_digit(10).unwrap() as i128;
        if place % 10 != 0 {
            if d != 0 {
                return Err(format!(
                    "duration {text:?} is finer than a nanosecond; time is kept in whole ns"
                ));
            }
            continue;
        }
        place /= 10;
        ns += d * place;
    }
    if ns > i64::MAX as i128 {
        return Err(format!("duration {text:?} is too large"));
    }
    let ns = ns as i64;
    Ok(Dur::from_ns(if neg { -ns } else { ns }))
}

/// The error for a duration written as a bare number (`at: 20`).
pub(crate) fn number_given(number: &str) -> String {
    format!(
        "expected a duration string with a unit, e.g. \"{number}s\" or \"{number}ms\", \
         found the number {number}"
    )
}

/// Serde for a span type: the same duration strings for true and local spans; which one a field
/// is comes from its type in the scenario model.
macro_rules! span_serde {
    ($name:ident) => {
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&format_ns(self.ns()))
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                struct SpanVisitor;
                impl Visitor<'_> for SpanVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("a duration string with a unit, like \"1.5s\" or \"-200ms\"")
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        parse_duration(v)
                            .map(|d| $name::from_ns(d.ns()))
                            .map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(number_given(&v.to_string())))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(number_given(&v.to_string())))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(number_given(&v.to_string())))
                    }
                }
                // `any`, not `str`: a number is then reported as a number, with the fix.
                d.deserialize_any(SpanVisitor)
            }
        }
    };
}

span_serde!(Dur);
span_serde!(LocalDur);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_signs_and_decimals() {
        assert_eq!(parse_duration("1.5s").unwrap().ns(), 1_500_000_000);
        assert_eq!(parse_duration("-200ms").unwrap().ns(), -200_000_000);
        assert_eq!(parse_duration("3333333333ns").unwrap().ns(), 3_333_333_333);
        assert_eq!(parse_duration("2m").unwrap().ns(), 120_000_000_000);
        assert_eq!(parse_duration("1h").unwrap().ns(), 3_600_000_000_000);
        assert_eq!(parse_duration("0.000000001s").unwrap().ns(), 1);
        assert_eq!(parse_duration("1.50ms").unwrap().ns(), 1_500_000);
        assert_eq!(parse_duration(".5s").unwrap().ns(), 500_000_000);
        // Microseconds: us, the micro sign (U+00B5) and the Greek mu (U+03BC) alike.
        for us in ["250us", "250\u{b5}s", "250\u{3bc}s"] {
            assert_eq!(parse_duration(us).unwrap().ns(), 250_000, "{us}");
        }
    }

    #[test]
    fn rejects_what_is_not_a_duration() {
        assert!(parse_duration("10").unwrap_err().contains("no unit"));
        assert!(parse_duration("10 parsecs").is_err());
        // A unit it does not know: the message lists the micro units.
        let e = parse_duration("3xs").unwrap_err();
        assert!(e.contains("us (or \u{b5}s, \u{3bc}s)"), "{e}");
        assert!(parse_duration("1.5ns").unwrap_err().contains("finer"));
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("1.2.3s").is_err());
        assert!(parse_duration("99999999999999h")
            .unwrap_err()
            .contains("too large"));
    }
}
