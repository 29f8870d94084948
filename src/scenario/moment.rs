//! When a fault begins: at a true time from the run's start (`at: "12s"`), at a true time drawn
//! once per run from a range (`at: Uniform(min: "2s", max: "2.075s")`), or a delay after a
//! moment of the protocol (`at: After(moment: Grant, nth: 2, delay: "50ms")`).
//!
//! Moments are read off the facts every protocol already reports, so that no protocol has to
//! name them: a grant (a lease issued), a renewal (a lease extended), an acquisition (a node
//! starts to hold under a token it did not hold before: an election won, a lock taken), a
//! lease's expiry (the end of a grant or renewal as the granting node's clock reads it), a
//! commit (a replicated write committed) and a write sent (a write leaving its writer). A
//! moment the facts do not show (a renewal request sent, a leadership transfer) cannot be
//! named. The engine counts a kind's moments as they happen (on one node, or on any) and
//! places the fault when the `nth` comes; a fault whose moment never comes never happens, and
//! the run's summary counts it (`faults_never_placed`).

use crate::time::Dur;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeStructVariant;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A kind of protocol moment, as the engine reads it off the reported facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Moment {
    /// A node issues a lease (to another node or to itself): the node counted is the issuer.
    Grant,
    /// A node extends a lease it issued: the node counted is the one extending it.
    Renewal,
    /// A node starts to hold under a token it did not hold before (an election won, a lock
    /// acquired): the node counted is the new holder.
    Acquire,
    /// The end of a lease as one grant or renewal set it, on the issuer's clock as it ran when
    /// the grant or renewal was made; `delay` counts from there and may be negative ("50 ms
    /// before the lease runs out"). A fault placed before the moment was seen starts when it
    /// is seen.
    Expiry,
    /// A leader commits a client write to its replicated log.
    Commit,
    /// A write leaves its writer for the resource.
    Write,
}

/// Every moment kind, in order (for the search's mutations and the docs).
pub const MOMENTS: [Moment; 6] = [
    Moment::Grant,
    Moment::Renewal,
    Moment::Acquire,
    Moment::Expiry,
    Moment::Commit,
    Moment::Write,
];

/// `delay` after the `nth` moment of kind `moment` on `node` (any node when left out).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AfterMoment {
    pub moment: Moment,
    /// The node whose moments count; every node's when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Which moment of that kind, from 1. Default 1.
    #[serde(default = "first")]
    pub nth: u32,
    /// How long after the moment the fault begins. Default 0. Negative only for `Expiry`.
    #[serde(default)]
    pub delay: Dur,
}

fn first() -> u32 {
    1
}

/// The fields of a drawn time, `Uniform(min, max)`, as JSON names them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Range {
    min: Dur,
    max: Dur,
}

/// When a fault begins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum At {
    /// At this true time from the run's start.
    Time(Dur),
    /// After a protocol moment.
    After(AfterMoment),
    /// At a true time drawn once per run, uniformly from `[min, max]` (whole nanoseconds), from
    /// the run's seed: a crash "somewhere within a heartbeat interval". The run resolves it
    /// before it starts ([`crate::scenario::Scenario::with_drawn_times`]), so that nothing past
    /// that sees a range.
    Uniform { min: Dur, max: Dur },
}

impl At {
    /// The fault's offset: its true time, or its delay after the moment (for a drawn time,
    /// the earliest it can be).
    pub fn offset(&self) -> Dur {
        match self {
            At::Time(d) => *d,
            At::After(a) => a.delay,
            At::Uniform { min, .. } => *min,
        }
    }

    /// The offset in ns.
    pub fn ns(&self) -> i64 {
        self.offset().ns()
    }

    /// The offset, to change it.
    pub fn offset_mut(&mut self) -> &mut Dur {
        match self {
            At::Time(d) => d,
            At::After(a) => &mut a.delay,
            At::Uniform { min, .. } => min,
        }
    }

    /// The moment the fault follows, if any.
    pub fn after(&self) -> Option<&AfterMoment> {
        match self {
            At::Time(_) | At::Uniform { .. } => None,
            At::After(a) => Some(a),
        }
    }

    /// The range a drawn time is drawn from, if the time is drawn.
    pub fn drawn(&self) -> Option<(Dur, Dur)> {
        match self {
            At::Uniform { min, max } => Some((*min, *max)),
            _ => None,
        }
    }
}

impl From<Dur> for At {
    fn from(d: Dur) -> At {
        At::Time(d)
    }
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            At::Time(d) => write!(f, "{d}"),
            At::Uniform { min, max } => write!(f, "uniformly in [{min}, {max}]"),
            At::After(a) => {
                let on = a
                    .node
                    .as_ref()
                    .map(|n| format!(" on {n}"))
                    .unwrap_or_default();
                let delay = if a.delay.ns() < 0 {
                    format!("{} before", Dur::from_ns(-a.delay.ns()))
                } else {
                    format!("{} after", a.delay)
                };
                write!(f, "{delay} {:?} #{}{on}", a.moment, a.nth)
            }
        }
    }
}

impl Serialize for At {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            At::Time(d) => d.serialize(s),
            At::Uniform { min, max } => {
                let mut v = s.serialize_struct_variant("At", 2, "Uniform", 2)?;
                v.serialize_field("min", min)?;
                v.serialize_field("max", max)?;
                v.end()
            }
            At::After(a) => {
                let fields = 3 + usize::from(a.node.is_some());
                let mut v = s.serialize_struct_variant("At", 1, "After", fields)?;
                v.serialize_field("moment", &a.moment)?;
                if let Some(node) = &a.node {
                    v.serialize_field("node", node)?;
                }
                v.serialize_field("nth", &a.nth)?;
                v.serialize_field("delay", &a.delay)?;
                v.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for At {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<At, D::Error> {
        struct AtVisitor;
        impl<'de> Visitor<'de> for AtVisitor {
            type Value = At;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a duration string like \"1.5s\", After(moment: Grant, nth: 1, delay: \
                     \"50ms\"), or Uniform(min: \"2s\", max: \"2.075s\")",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<At, E> {
                super::duration::parse_duration(v)
                    .map(At::Time)
                    .map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<At, E> {
                Err(E::custom(super::duration::number_given(&v.to_string())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<At, E> {
                Err(E::custom(super::duration::number_given(&v.to_string())))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<At, E> {
                Err(E::custom(super::duration::number_given(&v.to_string())))
            }
            // RON gives `After(moment: ..)` and `Uniform(min: .., max: ..)` as a map of their
            // fields (the name unseen: told apart by the fields); JSON gives {"After": {..}}.
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<At, M::Error> {
                let mut moment = None;
                let (mut min, mut max) = (None, None);
                let mut a = AfterMoment {
                    moment: Moment::Grant,
                    node: None,
                    nth: 1,
                    delay: Dur::ZERO,
                };
                while let Some(key) = m.next_key::<String>()? {
                    match key.as_str() {
                        "After" => return m.next_value().map(At::After),
                        "Uniform" => {
                            let r: Range = m.next_value()?;
                            return Ok(At::Uniform {
                                min: r.min,
                                max: r.max,
                            });
                        }
                        "min" => min = Some(m.next_value()?),
                        "max" => max = Some(m.next_value()?),
                        "moment" => moment = Some(m.next_value()?),
                        "node" => a.node = Some(m.next_value()?),
                        "nth" => a.nth = m.next_value()?,
                        "delay" => a.delay = m.next_value()?,
                        other => {
                            return Err(de::Error::unknown_field(
                                other,
                                &["moment", "node", "nth", "delay", "min", "max"],
                            ))
                        }
                    }
                }
                if min.is_some() || max.is_some() {
                    if moment.is_some() {
                        return Err(de::Error::custom(
                            "a fault starts after a moment or at a drawn time, not both",
                        ));
                    }
                    return Ok(At::Uniform {
                        min: min.ok_or_else(|| de::Error::missing_field("min"))?,
                        max: max.ok_or_else(|| de::Error::missing_field("max"))?,
                    });
                }
                a.moment = moment.ok_or_else(|| de::Error::missing_field("moment"))?;
                Ok(At::After(a))
            }
        }
        d.deserialize_any(AtVisitor)
    }
}
