//! How a [`StrategySpec`] is read and written: the built-in variants exactly as serde derives
//! them, and any other variant name as [`StrategySpec::Other`] with its RON text.
//!
//! Reading goes through the derived code (`#[serde(remote = "Self")]` on the enum) whenever the
//! variant name is a built-in one, on the same deserializer: a bad field of `TwoSided` is
//! reported where it is, as before. Another name is read as a struct variant whose fields are
//! kept as raw RON (`Majority(quorum: 3)`), or as a name alone (`Majority`); a
//! [`crate::strategy::Registry`] reads the fields later. Formats other than RON (the JSON of a
//! sweep's cells and partial files) carry an `Other` as its RON text in a string.

use super::StrategySpec;
use ron::value::RawValue;
use serde::de::value::{EnumAccessDeserializer, StringDeserializer};
use serde::de::{self, EnumAccess, IntoDeserializer, MapAccess, VariantAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::Cell;
use std::fmt;
use std::sync::OnceLock;

impl Serialize for StrategySpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            // Written back as it was read (in JSON: that text as a string).
            StrategySpec::Other { ron, .. } => RawValue::from_ron(ron)
                .map_err(serde::ser::Error::custom)?
                .serialize(s),
            // The derived code (an inherent function, not this trait's method).
            builtin => StrategySpec::serialize(builtin, s),
        }
    }
}

impl<'de> Deserialize<'de> for StrategySpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_enum("StrategySpec", builtin_names(), SpecVisitor)
    }
}

/// The names of the built-in variants, as the derived code knows them.
pub(super) fn builtin_names() -> &'static [&'static str] {
    static NAMES: OnceLock<&'static [&'static str]> = OnceLock::new();
    NAMES.get_or_init(|| {
        let names = VariantNames::default();
        let _ = StrategySpec::deserialize(&names); // the derived code, which asks for an enum
        names.0.get()
    })
}

/// A deserializer that only notes the variant names it is asked for.
#[derive(Default)]
struct VariantNames(Cell<&'static [&'static str]>);

impl<'de> Deserializer<'de> for &VariantNames {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only the variant names are asked for"))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.set(variants);
        Err(de::Error::custom("only the variant names are asked for"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier
        ignored_any
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
        if builtin_names().contains(&name.as_str()) {
            // The derived code reads the variant on, from the same deserializer.
            return StrategySpec::deserialize(EnumAccessDeserializer::new(Named { name, variant }));
        }
        if !is_identifier(&name) {
            // A string holding a strategy's RON text (how JSON carries an `Other`).
            variant.unit_variant()?;
            return StrategySpec::from_ron(&name).map_err(de::Error::custom);
        }
        let entered = Cell::new(false);
        match variant.struct_variant(&[], RawFields { entered: &entered }) {
            Ok(fields) => Ok(StrategySpec::Other {
                ron: other_text(&name, &fields),
                name,
            }),
            // No parentheses follow the name (RON), or there is nothing after it (a unit
            // variant elsewhere): the strategy is its name alone. Nothing was consumed.
            Err(_) if !entered.get() => Ok(StrategySpec::Other {
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

/// An enum whose variant name has been read already.
struct Named<V> {
    name: String,
    variant: V,
}

impl<'de, V: VariantAccess<'de>> EnumAccess<'de> for Named<V> {
    type Error = V::Error;
    type Variant = Bare<V>;

    fn variant_seed<S: de::DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Bare<V>), V::Error> {
        let name: StringDeserializer<V::Error> = self.name.clone().into_deserializer();
        let bare = Bare {
            name: self.name.clone(),
            variant: self.variant,
        };
        Ok((seed.deserialize(name)?, bare))
    }
}

/// A built-in variant's access that also takes a struct variant written as its name alone
/// (`TwoSided`): when no parentheses follow, it is read as if written with none of its fields,
/// so every field takes its default, and a field without one is reported as missing.
struct Bare<V> {
    name: String,
    variant: V,
}

impl<'de, V: VariantAccess<'de>> VariantAccess<'de> for Bare<V> {
    type Error = V::Error;

    fn unit_variant(self) -> Result<(), V::Error> {
        self.variant.unit_variant()
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, V::Error> {
        self.variant.newtype_variant_seed(seed)
    }

    fn tuple_variant<W: Visitor<'de>>(self, len: usize, visitor: W) -> Result<W::Value, V::Error> {
        self.variant.tuple_variant(len, visitor)
    }

    fn struct_variant<W: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: W,
    ) -> Result<W::Value, V::Error> {
        let held = Cell::new(Some(visitor));
        let read = self.variant.struct_variant(fields, Entered(&held));
        match (read, held.take()) {
            // The visitor was never handed a map: no parentheses followed the name, and
            // nothing was consumed. Read the variant with no fields.
            (Err(_), Some(visitor)) => visitor.visit_map(NoFields).map_err(|e| {
                let name = &self.name;
                de::Error::custom(match e.missing {
                    Some(field) => format!(
                        "`{name}` written alone takes every field's default, but `{field}` has \
                         none: write {name}({field}: ..., ...)"
                    ),
                    None => format!("`{name}` written alone: {}", e.message),
                })
            }),
            (read, _) => read,
        }
    }
}

/// Hands the held visitor the variant's fields once its parentheses are open.
struct Entered<'a, W>(&'a Cell<Option<W>>);

impl<'de, W: Visitor<'de>> Visitor<'de> for Entered<'_, W> {
    type Value = W::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the strategy's fields, as in TwoSided(holder_margin: \"5ms\")")
    }

    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<W::Value, M::Error> {
        let visitor = self.0.take().expect("a map is read once");
        visitor.visit_map(map)
    }

    fn visit_seq<S: de::SeqAccess<'de>>(self, seq: S) -> Result<W::Value, S::Error> {
        let visitor = self.0.take().expect("a sequence is read once");
        visitor.visit_seq(seq)
    }
}

/// The fields of a struct variant written without parentheses: none.
struct NoFields;

impl<'de> MapAccess<'de> for NoFields {
    type Error = BareError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        _: K,
    ) -> Result<Option<K::Value>, BareError> {
        Ok(None)
    }

    fn next_value_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        _: T,
    ) -> Result<T::Value, BareError> {
        Err(de::Error::custom("a field without a value"))
    }
}

/// Why a variant written alone cannot be read: the first field without a default, if that is why.
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
fn other_text(name: &str, fields: &[(String, String)]) -> String {
    let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{name}({})", fields.join(", "))
}

/// The text of a strategy that is not built in, `ron`, with its field `field` set to `value`
/// (or added): a value is written as given when it is RON, and as a string when it is not
/// (`10ms`) or when the field held a string. The field's type is the protocol's to check.
pub(crate) fn with_field(ron: &str, field: &str, value: &str) -> Result<String, String> {
    let (name, mut fields) = super::ron_options()
        .from_str_seed(ron, OtherParts)
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
    Ok(other_text(&name, &fields))
}

/// A strategy that is not built in, as its name and its fields (each as raw RON).
struct OtherParts;

impl<'de> de::DeserializeSeed<'de> for OtherParts {
    type Value = (String, Vec<(String, String)>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_enum("", &[], self)
    }
}

impl<'de> Visitor<'de> for OtherParts {
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
