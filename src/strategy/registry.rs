//! Strategies by name: the built-in ones, and protocols a program registers (SPEC 2.8: a user
//! writes a protocol in their own crate and runs it on any scenario).
//!
//! A scenario names a registered protocol like a built-in strategy, by a variant name with its
//! fields in RON: `strategy: Majority(quorum: 3, margin: "10ms")`. The scenario parses that as
//! [`StrategySpec::Other`] with the text as written; [`Registry::build`] finds the protocol by
//! name, reads the fields into its parameter type and builds it.
//!
//! ```
//! use leasesim::strategy::{base::BaseProtocol, Registry, Rules, Strategy};
//! use leasesim::scenario::StrategySpec;
//! use leasesim::time::LocalDur;
//!
//! /// The fields of `Patient(wait: "20ms")`.
//! #[derive(serde::Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct Patient {
//!     wait: LocalDur,
//! }
//!
//! let mut registry = Registry::new();
//! registry.register("Patient", |p: Patient| -> Box<dyn Strategy> {
//!     let rules = Rules::of(&StrategySpec::TwoSided { holder_margin: p.wait, grantor_margin: p.wait });
//!     Box::new(BaseProtocol::new(rules, format!("Patient(wait: \"{}\")", p.wait)))
//! });
//! let spec = StrategySpec::from_ron(r#"Patient(wait: "20ms")"#).unwrap();
//! assert_eq!(registry.build(&spec).unwrap().describe(), r#"Patient(wait: "20ms")"#);
//! let typo = StrategySpec::from_ron(r#"Patient(wiat: "20ms")"#).unwrap();
//! let error = registry.build(&typo).err().unwrap().to_string();
//! assert!(error.starts_with("Patient at 1:9: unknown field `wiat`"), "{error}");
//! ```

use super::Strategy;
use crate::scenario::spec_serde::{is_identifier, Ident};
use crate::scenario::{ron_options, StrategySpec};
use ron::error::SpannedError;
use serde::de::value::{MapAccessDeserializer, MapDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, EnumAccess, VariantAccess, Visitor};
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// Reads a strategy's RON text (name and fields) and builds the protocol.
type Build = dyn Fn(&str) -> Result<Box<dyn Strategy>, SpannedError> + Send + Sync;

/// The strategies a program knows: the built-in ones, always, and the protocols registered
/// with [`Registry::register`]. Cheap to clone.
#[derive(Clone, Default)]
pub struct Registry {
    protocols: Vec<(String, Arc<Build>)>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("registered", &self.registered().collect::<Vec<_>>())
            .finish()
    }
}

/// Why a strategy could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrategyError {
    /// The name is neither built in nor registered.
    Unknown { name: String, known: Vec<String> },
    /// The fields of a registered protocol do not read as its parameters. The position is in
    /// the strategy's RON text (`StrategySpec::to_ron`), which starts at line 1, column 1.
    Fields {
        name: String,
        error: Box<SpannedError>,
    },
}

impl fmt::Display for StrategyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StrategyError::Unknown { name, known } => {
                write!(f, "unknown strategy {name:?} (known: {})", known.join(", "))
            }
            StrategyError::Fields { name, error } => write!(
                f,
                "{name} at {}: {}",
                error.span.start,
                crate::scenario::load::describe(&error.code)
            ),
        }
    }
}

impl std::error::Error for StrategyError {}

impl Registry {
    /// The built-in strategies alone.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Registers the protocol `name`: a scenario's `strategy: Name(field: value, ...)` (or
    /// `Name` alone, when every field has a default) reads its fields as `P`, a struct of named
    /// fields (`#[derive(serde::Deserialize)]`, in the scenario's RON: durations as `"10ms"`,
    /// optional fields bare), and `build` makes the protocol from them.
    ///
    /// # Panics
    ///
    /// If `name` is not an identifier, is a built-in strategy's name, or is registered already.
    pub fn register<P, F>(&mut self, name: &str, build: F) -> &mut Registry
    where
        P: DeserializeOwned + 'static,
        F: Fn(P) -> Box<dyn Strategy> + Send + Sync + 'static,
    {
        assert!(
            is_identifier(name),
            "a strategy's name is an identifier (letters, digits, _), not {name:?}"
        );
        assert!(
            !StrategySpec::builtin_names().contains(&name),
            "{name} is a built-in strategy; register the protocol under another name"
        );
        assert!(
            !self.registered().any(|n| n == name),
            "{name} is registered already"
        );
        let owned = name.to_string();
        let read = move |text: &str| -> Result<Box<dyn Strategy>, SpannedError> {
            let params: P = ron_options().from_str_seed(
                text,
                Fields {
                    name: &owned,
                    params: PhantomData,
                },
            )?;
            Ok(build(params))
        };
        self.protocols.push((name.to_string(), Arc::new(read)));
        self
    }

    /// The registered protocols' names, in the order they were registered.
    pub fn registered(&self) -> impl Iterator<Item = &str> {
        self.protocols.iter().map(|(n, _)| n.as_str())
    }

    /// Every strategy name it knows: the built-in ones, then the registered ones.
    pub fn names(&self) -> Vec<String> {
        StrategySpec::builtin_names()
            .iter()
            .copied()
            .chain(self.registered())
            .map(str::to_string)
            .collect()
    }

    /// The strategy `spec` names, built.
    pub fn build(&self, spec: &StrategySpec) -> Result<Box<dyn Strategy>, StrategyError> {
        let StrategySpec::Other { name, ron } = spec else {
            return Ok(super::builtin(spec));
        };
        match self.protocols.iter().find(|(n, _)| n == name) {
            Some((_, read)) => read(ron).map_err(|error| StrategyError::Fields {
                name: name.clone(),
                error: Box::new(error),
            }),
            None => Err(StrategyError::Unknown {
                name: name.clone(),
                known: self.names(),
            }),
        }
    }
}

/// Reads `Name(fields...)` (or `Name`) as the fields `P` of protocol `name`.
struct Fields<'n, P> {
    name: &'n str,
    params: PhantomData<P>,
}

impl<'de, P: DeserializeOwned> DeserializeSeed<'de> for Fields<'_, P> {
    type Value = P;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<P, D::Error> {
        d.deserialize_enum("", &[], self)
    }
}

impl<'de, P: DeserializeOwned> Visitor<'de> for Fields<'_, P> {
    type Value = P;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "the strategy {}(...)", self.name)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<P, A::Error> {
        let (Ident(found), variant) = data.variant::<Ident>()?;
        if found != self.name {
            return Err(de::Error::custom(format!(
                "expected the strategy {}, found {found}",
                self.name
            )));
        }
        let entered = Cell::new(false);
        match variant.struct_variant(
            &[],
            Params {
                entered: &entered,
                params: PhantomData::<P>,
            },
        ) {
            Ok(p) => Ok(p),
            // The name alone: every field takes its default.
            Err(_) if !entered.get() => P::deserialize(MapDeserializer::<_, A::Error>::new(
                std::iter::empty::<(&str, &str)>(),
            )),
            Err(e) => Err(e),
        }
    }
}

/// The fields between the parentheses, read as `P` by `P`'s own code.
struct Params<'a, P> {
    entered: &'a Cell<bool>,
    params: PhantomData<P>,
}

impl<'de, P: DeserializeOwned> Visitor<'de> for Params<'_, P> {
    type Value = P;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the strategy's fields")
    }

    fn visit_map<M: de::MapAccess<'de>>(self, map: M) -> Result<P, M::Error> {
        self.entered.set(true);
        P::deserialize(MapAccessDeserializer::new(map))
    }
}
