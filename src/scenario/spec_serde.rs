//! How a [`StrategySpec`] is read and written: a strategy's name, and its fields kept as raw
//! RON (`Majority(quorum: 3)`), or its name alone (`Majority`); the protocol reads the fields
//! later (`strategy::Registry`). Formats other than RON (the JSON of a sweep's cells and partial
//! files) carry a strategy as its RON text in a string.

use super::StrategySpec;
use ron::value::RawValue;
use serde::de::value::MapDeserializer;
use serde::de::{self, DeserializeOwned, EnumAccess, MapAccess, VariantAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::Cell;
use std::fmt;

impl Serialize for StrategySpec {
    /// Written back as its text (in JSON: that text as a string).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RawValue::from_ron(&self.ron)
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }
}

impl<'de> Deserialize<'de> for StrategySpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_enum("StrategySpec", &[], SpecVisitor)
    }
}

/// A variant name, read as an identifier.
pub(crate) struct Ident(pub(crate) String);

impl<'de> Deserialize<'de> for Ident {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Ident;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a strategy name, such as TwoSided")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Ident, E> {
                Ok(Ident(v.to_string()))
            }
        }
        d.deserialize_identifier(V)
    }
}

struct SpecVisitor;

impl<'de> Visitor<'de> for SpecVisitor {
    type Value = StrategySpec;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a lease strategy, such as TwoSided(holder_margin: \"5ms\")")
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<StrategySpec, A::Error> {
        let (Ident(name), variant) = data.variant::<Ident>()?;
        if !is_identifier(&name) {
            // A string holding a strategy's RON text (how JSON carries one).
            variant.unit_variant()?;
            return StrategySpec::from_ron(&name).map_err(de::Error::custom);
        }
        let entered = Cell::new(false);
        match variant.struct_variant(&[], RawFields { entered: &entered }) {
            Ok(fields) => Ok(StrategySpec {
                ron: spec_text(&name, &fields),
                name,
            }),
            // No parentheses follow the name (RON), or there is nothing after it (a unit
            // variant elsewhere): the strategy is its name alone. Nothing was consumed.
            Err(_) if !entered.get() => Ok(StrategySpec {
                ron: name.clone(),
                name,
            }),
            Err(e) => Err(e),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<StrategySpec, E> {
        StrategySpec::from_ron(v).map_err(E::custom)
    }
}

/// True for a RON identifier: a letter or `_`, then letters, digits and `_`.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A strategy written as its name alone, `name`, read as `P` with every field left out (each
/// takes its default); a field without one is said with how to write it.
pub(crate) fn alone<P: DeserializeOwned>(name: &str) -> Result<P, String> {
    P::deserialize(MapDeserializer::<_, BareError>::new(std::iter::empty::<(
        &str,
        &str,
    )>()))
    .map_err(|e| match e.missing {
        Some(field) => format!(
            "`{name}` written alone takes every field's default, but `{field}` has none: write \
             {name}({field}: ..., ...)"
        ),
        None => format!("`{name}` written alone: {}", e.message),
    })
}

/// Why a strategy written alone cannot be read: the first field without a default, if that is
/// why.
#[derive(Debug)]
struct BareError {
    missing: Option<&'static str>,
    message: String,
}

impl fmt::Display for BareError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BareError {}

impl de::Error for BareError {
    fn custom<T: fmt::Display>(msg: T) -> BareError {
        BareError {
            missing: None,
            message: msg.to_string(),
        }
    }

    fn missing_field(field: &'static str) -> BareError {
        BareError {
            missing: Some(field),
            message: format!("missing field `{field}`"),
        }
    }
}

/// `Name(field: raw, ...)`.
fn spec_text(name: &str, fields: &[(String, String)]) -> String {
    let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{name}({})", fields.join(", "))
}

/// The text of a strategy, `ron`, with its field `field` set to `value` (or added): a value is
/// written as given when it is RON, and as a string when it is not (`10ms`) or when the field
/// held a string. The field's type is the protocol's to check.
pub(crate) fn with_field(ron: &str, field: &str, value: &str) -> Result<String, String> {
    let (name, mut fields) = super::ron_options()
        .from_str_seed(ron, Parts)
        .map_err(|e| format!("cannot read the strategy {ron}: {e}"))?;
    let value = value.trim();
    let quoted = format!("{value:?}");
    let at = fields.iter().position(|(k, _)| k == field);
    let held_string = at.is_some_and(|i| fields[i].1.starts_with('"'));
    let raw = if held_string && !value.starts_with('"') {
        quoted
    } else if RawValue::from_ron(value).is_ok() {
        value.to_string()
    } else {
        quoted
    };
    match at {
        Some(i) => fields[i].1 = raw,
        None => fields.push((field.to_string(), raw)),
    }
    Ok(spec_text(&name, &fields))
}

/// The strategy `base` with every field `over` writes set to what `over` says (a node's own
/// settings over the scenario's strategy); both name the same strategy.
pub(crate) fn overridden(base: &StrategySpec, over: &StrategySpec) -> Result<StrategySpec, String> {
    let (_, fields) = super::ron_options()
        .from_str_seed(&over.ron, Parts)
        .map_err(|e| format!("cannot read {}: {e}", over.ron))?;
    let mut ron = base.ron.clone();
    for (field, value) in fields {
        ron = with_field(&ron, &field, &value)?;
    }
    StrategySpec::from_ron(&ron).map_err(|e| e.to_string())
}

/// A strategy as its name and its fields (each as raw RON).
struct Parts;

impl<'de> de::DeserializeSeed<'de> for Parts {
    type Value = (String, Vec<(String, String)>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_enum("", &[], self)
    }
}

impl<'de> Visitor<'de> for Parts {
    type Value = (String, Vec<(String, String)>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a strategy, such as Majority(quorum: 3)")
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        let (Ident(name), variant) = data.variant::<Ident>()?;
        let entered = Cell::new(false);
        match variant.struct_variant(&[], RawFields { entered: &entered }) {
            Ok(fields) => Ok((name, fields)),
            Err(_) if !entered.get() => Ok((name, Vec::new())),
            Err(e) => Err(e),
        }
    }
}

/// The fields of a struct variant, each as (name, raw RON).
struct RawFields<'a> {
    /// Set once the variant's parentheses are open.
    entered: &'a Cell<bool>,
}

impl<'de> Visitor<'de> for RawFields<'_> {
    type Value = Vec<(String, String)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the strategy's fields, as in Majority(quorum: 3)")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        self.entered.set(true);
        let mut fields = Vec::new();
        while let Some(Ident(key)) = map.next_key()? {
            let value: Box<RawValue> = map.next_value()?;
            fields.push((key, value.get_ron().to_string()));
        }
        Ok(fields)
    }
}
