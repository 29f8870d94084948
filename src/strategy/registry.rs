//! Strategies by name: the built-in protocols, and those a program registers (a user writes a
//! protocol in their own crate and runs it on any scenario), all registered the same way.
//!
//! A scenario names a protocol by its name with its fields in RON: `strategy: Majority(quorum:
//! 3, margin: "10ms")`. [`Registry::resolve`] finds the protocol by name and reads the fields
//! into its [`Settings`]; [`Registry::build`] builds it.
//!
//! ```
//! use leasesim::strategy::{base::BaseProtocol, Registry, Rules, Settings, Strategy};
//! use leasesim::scenario::StrategySpec;
//! use leasesim::time::LocalDur;
//!
//! /// The fields of `Patient(wait: "20ms")`: the base protocol with both margins `wait`.
//! #[derive(Clone, serde::Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct Patient {
//!     wait: LocalDur,
//! }
//!
//! impl Settings for Patient {
//!     const NAME: &'static str = "Patient";
//!     type Protocol = BaseProtocol;
//!     fn to_ron(&self) -> String {
//!         format!("Patient(wait: \"{}\")", self.wait)
//!     }
//!     fn build(&self) -> BaseProtocol {
//!         let rules = Rules { holder_margin: self.wait, grantor_margin: self.wait, ..Rules::default() };
//!         BaseProtocol::new(rules, self.to_ron())
//!     }
//! }
//!
//! let mut registry = Registry::new();
//! registry.register::<Patient>();
//! let spec = StrategySpec::from_ron(r#"Patient(wait: "20ms")"#).unwrap();
//! assert_eq!(registry.build(&spec).unwrap().describe(), r#"Patient(wait: "20ms")"#);
//! let typo = StrategySpec::from_ron(r#"Patient(wiat: "20ms")"#).unwrap();
//! let error = registry.build(&typo).err().unwrap().to_string();
//! assert!(error.starts_with("Patient at 1:9: unknown field `wiat`"), "{error}");
//! ```

use super::settings::{specs, Resolved, Settings};
use super::Strategy;
use crate::scenario::spec_serde::{alone, is_identifier, Ident};
use crate::scenario::{
    ron_options, Builtin, Protocols, Scenario, StrategyChecks, StrategyError, StrategySpec,
};
use crate::time::LocalDur;
use ron::error::SpannedError;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, EnumAccess, VariantAccess, Visitor};
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

/// Reads a strategy's RON text (name and fields) into its settings.
type Read = fn(&str) -> Result<Box<dyn Resolved>, SpannedError>;
/// A protocol's part of the common lineup of `compare --strategies all` ([`Settings::lineup`]).
type Lineup = fn(&Scenario, LocalDur, &str) -> Vec<(StrategySpec, String)>;

/// One registered protocol.
#[derive(Clone, Copy)]
struct Entry {
    name: &'static str,
    read: Read,
    lineup: Lineup,
}

/// The strategies a program knows: the built-in protocols, always, and those registered with
/// [`Registry::register`]. Cheap to clone.
#[derive(Clone)]
pub struct Registry {
    /// In registration order, the built-in ones first.
    protocols: Vec<Entry>,
    /// How many of them are built in.
    builtins: usize,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("registered", &self.registered().collect::<Vec<_>>())
            .finish()
    }
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::new()
    }
}

impl Registry {
    /// The built-in protocols alone ([`super::register_builtins`]).
    pub fn new() -> Registry {
        let mut registry = Registry {
            protocols: Vec::new(),
            builtins: 0,
        };
        super::register_builtins(&mut registry);
        registry.builtins = registry.protocols.len();
        registry
    }

    /// The built-in protocols alone, built once.
    pub fn builtin() -> &'static Registry {
        static BUILTIN: OnceLock<Registry> = OnceLock::new();
        BUILTIN.get_or_init(Registry::new)
    }

    /// Registers the protocol whose settings are `S`: a scenario's `strategy: Name(field:
    /// value, ...)` (or `Name` alone, when every field has a default), with `Name`
    /// [`Settings::NAME`], reads its fields as `S` and builds `S`'s protocol.
    ///
    /// # Panics
    ///
    /// If the name is not an identifier, is a built-in strategy's name, or is registered
    /// already.
    pub fn register<S: Settings>(&mut self) -> &mut Registry {
        let name = S::NAME;
        assert!(
            is_identifier(name),
            "a strategy's name is an identifier (letters, digits, _), not {name:?}"
        );
        assert!(
            !self.protocols[..self.builtins]
                .iter()
                .any(|e| e.name == name),
            "{name} is a built-in strategy; register the protocol under another name"
        );
        assert!(
            !self.protocols.iter().any(|e| e.name == name),
            "{name} is registered already"
        );
        self.protocols.push(Entry {
            name,
            read: read::<S>,
            lineup: lineup::<S>,
        });
        self
    }

    /// The names of the protocols registered beyond the built-in ones, in the order they were
    /// registered.
    pub fn registered(&self) -> impl Iterator<Item = &str> {
        self.protocols[self.builtins..].iter().map(|e| e.name)
    }

    /// Every strategy name it knows: the built-in ones, then the registered ones.
    pub fn names(&self) -> Vec<String> {
        self.protocols.iter().map(|e| e.name.to_string()).collect()
    }

    /// The strategy `spec` names, read into its protocol's settings.
    pub fn resolve(&self, spec: &StrategySpec) -> Result<Box<dyn Resolved>, StrategyError> {
        let name = spec.name();
        match self.protocols.iter().find(|e| e.name == name) {
            Some(entry) => (entry.read)(&spec.to_ron()).map_err(|error| StrategyError::Fields {
                name: name.to_string(),
                error: Box::new(error),
            }),
            None => Err(StrategyError::Unknown {
                name: name.to_string(),
                known: self.names(),
            }),
        }
    }

    /// The strategy `spec` names, built.
    pub fn build(&self, spec: &StrategySpec) -> Result<Box<dyn Strategy>, StrategyError> {
        Ok(self.resolve(spec)?.build())
    }

    /// The common lineup of `compare --strategies all` on `scenario`: every protocol's part
    /// ([`Settings::lineup`]), in registration order, with the margin `margin` said as `from`.
    pub fn lineup(
        &self,
        scenario: &Scenario,
        margin: LocalDur,
        from: &str,
    ) -> Vec<(StrategySpec, String)> {
        self.protocols
            .iter()
            .flat_map(|e| (e.lineup)(scenario, margin, from))
            .collect()
    }
}

/// Loading and validation read strategies through the registry.
impl Protocols for Registry {
    fn checks(&self, spec: &StrategySpec) -> Result<Box<dyn StrategyChecks>, StrategyError> {
        Ok(self.build(spec)?)
    }

    fn normalize(&self, spec: &StrategySpec) -> Result<StrategySpec, StrategyError> {
        Ok(self.resolve(spec)?.spec().unwrap_or_else(|| spec.clone()))
    }
}

/// The scenario module's built-in protocols are this module's.
impl Protocols for Builtin {
    fn checks(&self, spec: &StrategySpec) -> Result<Box<dyn StrategyChecks>, StrategyError> {
        Registry::builtin().checks(spec)
    }

    fn normalize(&self, spec: &StrategySpec) -> Result<StrategySpec, StrategyError> {
        Registry::builtin().normalize(spec)
    }
}

/// Reads `text`, `S::NAME(fields...)` or `S::NAME`, as `S`.
fn read<S: Settings>(text: &str) -> Result<Box<dyn Resolved>, SpannedError> {
    Ok(Box::new(read_settings::<S>(text)?))
}

/// Reads `text`, `S::NAME(fields...)` or `S::NAME`, as the settings `S`.
pub(crate) fn read_settings<S: Settings>(text: &str) -> Result<S, SpannedError> {
    ron_options().from_str_seed(
        text,
        Fields {
            name: S::NAME,
            params: PhantomData,
        },
    )
}

/// `S`'s part of the common lineup, as strategies.
fn lineup<S: Settings>(
    scenario: &Scenario,
    margin: LocalDur,
    from: &str,
) -> Vec<(StrategySpec, String)> {
    specs(S::lineup(scenario, margin, from))
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
            Err(_) if !entered.get() => alone(self.name).map_err(de::Error::custom),
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
