//! Scenario field paths (`lease.duration`, `faults[0].duration`, `nodes[h].drift_ppm`) and
//! setting a value at one in a scenario serialized to JSON.
//!
//! A path walks the scenario's serde shape. An enum's variant-name layer is stepped over
//! transparently: `faults[0].duration` reaches `{"Pause": {"duration": ..}}`. `[i]` indexes a
//! list; `[name]` picks the element of a list whose `name` is `name` (for `nodes`). A value is
//! read the way the field it replaces is written: a number for a number, a duration or a name
//! for a string, RON for anything else (`Fixed("1ms")`, `[["a"], ["b"]]`). The strategy is RON
//! text its protocol reads: `strategy.holder_margin` sets that field in the text. This module
//! does not know the schema: deserializing the edited JSON back into a `Scenario` checks the
//! types, and the strategy's protocol checks its fields.

use super::ron_value;
use crate::scenario::{Scenario, StrategySpec};
use crate::strategy::Registry;
use serde_json::{Number, Value};
use std::fmt;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Field(String),
    Index(usize),
    /// The list element whose `name` field is this.
    Named(String),
}

/// A parsed field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    pub segs: Vec<Seg>,
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, s) in self.segs.iter().enumerate() {
            match s {
                Seg::Field(name) if k == 0 => write!(f, "{name}")?,
                Seg::Field(name) => write!(f, ".{name}")?,
                Seg::Index(i) => write!(f, "[{i}]")?,
                Seg::Named(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

impl FieldPath {
    /// Parses `a.b[0].c` / `nodes[h].drift_ppm`.
    pub fn parse(text: &str) -> Result<FieldPath, String> {
        let t = text.trim();
        let mut segs = Vec::new();
        let bad = |why: &str| format!("bad field path {t:?}: {why}");
        for part in t.split('.') {
            let (head, mut rest) = match part.find('[') {
                Some(k) => (&part[..k], &part[k..]),
                None => (part, ""),
            };
            if head.is_empty() || !head.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(bad("each step is a field name (letters, digits, _), optionally followed by [index]"));
            }
            segs.push(Seg::Field(head.to_string()));
            while !rest.is_empty() {
                let close = rest
                    .find(']')
                    .filter(|_| rest.starts_with('['))
                    .ok_or_else(|| bad("expected [index] or [name]"))?;
                let inner = rest[1..close].trim();
                if inner.is_empty() {
                    return Err(bad("empty []"));
                }
                segs.push(match inner.parse::<usize>() {
                    Ok(i) => Seg::Index(i),
                    Err(_) => Seg::Named(inner.trim_matches('"').to_string()),
                });
                rest = &rest[close + 1..];
            }
        }
        Ok(FieldPath { segs })
    }
}

/// What a short name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Role {
    /// The lease term T (`lease.duration`).
    T,
    /// The drift spread rho (`clocks.drift_spread_ppm`).
    Rho,
    /// The strategy's holder margin epsilon.
    Epsilon,
    /// Any other field.
    Other,
}

/// The field path of the strategy's epsilon (its protocol's `Settings::epsilon`: a holder
/// margin, or what stands for one), or why it has none.
pub fn epsilon_path(strategy: &StrategySpec, registry: &Registry) -> Result<String, String> {
    let settings = registry
        .resolve(strategy)
        .map_err(|e| format!("epsilon: the scenario's strategy: {e}"))?;
    match settings.epsilon() {
        Some(margin) => Ok(format!("strategy.{}", margin.field)),
        None => Err(format!(
            "epsilon: the scenario's strategy {} has no holder margin to vary; vary one of its \
             fields by name (strategy.FIELD)",
            strategy.name()
        )),
    }
}

/// Resolves a name given to `--vary` (a short name or a path) to a path and its role; the
/// strategy's epsilon is its protocol's, known to `registry`.
pub fn resolve(
    name: &str,
    base: &Scenario,
    registry: &Registry,
) -> Result<(FieldPath, Role), String> {
    let epsilon = || epsilon_path(&base.strategy, registry);
    let (text, role) = match name.trim() {
        "T" => ("lease.duration".to_string(), Role::T),
        "rho" => ("clocks.drift_spread_ppm".to_string(), Role::Rho),
        "epsilon" => (epsilon()?, Role::Epsilon),
        other => (other.to_string(), Role::Other),
    };
    let path = FieldPath::parse(&text)?;
    let role = match (role, path.to_string().as_str()) {
        (Role::Other, "lease.duration") => Role::T,
        (Role::Other, "clocks.drift_spread_ppm") => Role::Rho,
        (Role::Other, p) if epsilon().is_ok_and(|e| e == p) => Role::Epsilon,
        (r, _) => r,
    };
    if let Some(Seg::Field(first)) = path.segs.first() {
        if first == "strategy" && path.segs.len() > 2 {
            return Err(format!(
                "the scenario's strategy {} is read by its protocol: a sweep varies its fields \
                 (strategy.FIELD) but nothing inside them",
                base.strategy.name()
            ));
        }
        if first == "seed" {
            return Err(format!(
                "{name}: the seed is not a grid parameter; use --seeds N (and --seed S for the first)"
            ));
        }
    }
    Ok((path, role))
}

/// If `v` is an enum's variant layer (`{"Variant": inner}`) and `want` is not its key, the inner
/// value; else `v`.
fn through_variant<'v>(v: &'v mut Value, want: Option<&str>) -> &'v mut Value {
    let is_layer = match v {
        Value::Object(m) if m.len() == 1 => {
            let key = m.keys().next().expect("one key");
            key.starts_with(|c: char| c.is_ascii_uppercase()) && Some(key.as_str()) != want
        }
        _ => false,
    };
    if is_layer {
        let Value::Object(m) = v else { unreachable!() };
        m.values_mut().next().expect("one key")
    } else {
        v
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "not set",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a record",
    }
}

/// The value at `path` in `root`, mutable; the error names the step that does not exist.
pub fn locate<'v>(root: &'v mut Value, path: &FieldPath) -> Result<&'v mut Value, String> {
    let mut cur = root;
    let mut here = String::new();
    for seg in &path.segs {
        let at = if here.is_empty() {
            "the scenario".to_string()
        } else {
            format!("`{here}`")
        };
        match seg {
            Seg::Field(name) => {
                let v = through_variant(cur, Some(name));
                match v {
                    Value::Object(m) => {
                        if !m.contains_key(name) {
                            let fields: Vec<&str> = m.keys().map(String::as_str).collect();
                            return Err(format!(
                                "{at} has no field `{name}` (its fields: {})",
                                fields.join(", ")
                            ));
                        }
                        cur = m.get_mut(name).expect("checked");
                    }
                    Value::String(s) => {
                        return Err(format!("{at} is `{s}`, which has no field `{name}`"))
                    }
                    other => {
                        return Err(format!(
                            "{at} is {}, which has no field `{name}`",
                            kind(other)
                        ))
                    }
                }
                if !here.is_empty() {
                    here.push('.');
                }
                here.push_str(name);
            }
            Seg::Index(i) => {
                match through_variant(cur, None) {
                    Value::Array(a) => {
                        let n = a.len();
                        cur = a.get_mut(*i).ok_or_else(|| {
                            let entries = if n == 1 { "entry" } else { "entries" };
                            format!("{at} has {n} {entries}, so [{i}] is out of range")
                        })?;
                    }
                    other => return Err(format!("{at} is {}, not a list", kind(other))),
                }
                here.push_str(&format!("[{i}]"));
            }
            Seg::Named(name) => {
                match through_variant(cur, None) {
                    Value::Array(a) => {
                        let names: Vec<String> = a
                            .iter()
                            .filter_map(|e| e.get("name").and_then(Value::as_str))
                            .map(str::to_string)
                            .collect();
                        cur = a
                            .iter_mut()
                            .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
                            .ok_or_else(|| {
                                format!(
                                    "{at} has no entry named {name:?} (names: {})",
                                    names.join(", ")
                                )
                            })?;
                    }
                    other => return Err(format!("{at} is {}, not a list", kind(other))),
                }
                here.push_str(&format!("[{name}]"));
            }
        }
    }
    Ok(cur)
}

fn structured(text: &str) -> bool {
    text.contains(['(', '[', '{']) || text.starts_with('"')
}

fn number(text: &str, want_float: bool) -> Option<Number> {
    let t = text.trim();
    if !want_float {
        if let Ok(n) = t.parse::<u64>() {
            return Some(n.into());
        }
        if let Ok(n) = t.parse::<i64>() {
            return Some(n.into());
        }
    }
    t.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .and_then(Number::from_f64)
}

/// Reads `text` as a replacement for `target`: a number for a number, a bool for a bool, the
/// text itself for a string (a duration, a name, a unit variant), RON for anything else.
pub fn parse_value(text: &str, target: &Value) -> Result<Value, String> {
    let t = text.trim();
    match target {
        Value::Number(n) => number(t, n.is_f64())
            .map(Value::Number)
            .ok_or_else(|| format!("expected a number, got {t:?}")),
        Value::Bool(_) => match t {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(format!("expected true or false, got {t:?}")),
        },
        Value::String(_) => {
            if structured(t) {
                ron_value::parse(t)
            } else {
                Ok(Value::String(t.to_string()))
            }
        }
        Value::Null => {
            if let Some(n) = number(t, false) {
                Ok(Value::Number(n))
            } else if t == "true" || t == "false" {
                Ok(Value::Bool(t == "true"))
            } else if structured(t) {
                ron_value::parse(t)
            } else {
                Ok(Value::String(t.to_string()))
            }
        }
        Value::Array(_) | Value::Object(_) => ron_value::parse(t),
    }
}

/// Sets the field at `path` of `root` to `text`, read as [`parse_value`] says. The strategy,
/// which JSON holds as its RON text (its protocol reads it), is set as text: a field of it
/// (`strategy.holder_margin`) in that text, or the whole of it (`strategy`) as RON.
pub fn set(root: &mut Value, path: &FieldPath, text: &str) -> Result<(), String> {
    if let Some(Seg::Field(top)) = path.segs.first() {
        if let (Some(Value::String(ron)), "strategy") = (root.get_mut("strategy"), top.as_str()) {
            match path.segs.as_slice() {
                [_] => {
                    let text = text.trim();
                    StrategySpec::from_ron(text)
                        .map_err(|e| format!("expected a strategy, got {text:?}: {e}"))?;
                    *ron = text.to_string();
                    return Ok(());
                }
                [_, Seg::Field(field)] => {
                    *ron = crate::scenario::spec_serde::with_field(ron, field, text)?;
                    return Ok(());
                }
                _ => {}
            }
        }
    }
    let target = match locate(root, path) {
        Ok(target) => target,
        Err(missing) => absent_last_field(root, path).ok_or(missing)?,
    };
    let v = parse_value(text, target)?;
    *target = v;
    Ok(())
}

/// The last field of `path`, added (unset) to its record when that record leaves it out, as a
/// scenario leaves out an optional field it does not set (`lease.initial_leader`); `None`
/// when the path fails before its last step. Whether the record has such a field at all is
/// for the scenario's schema to say, when the JSON is read back (an unknown field is refused
/// there; the caller says so with [`locate`]'s words).
fn absent_last_field<'v>(root: &'v mut Value, path: &FieldPath) -> Option<&'v mut Value> {
    let (Seg::Field(name), parent) = path.segs.split_last()? else {
        return None;
    };
    let parent = FieldPath {
        segs: parent.to_vec(),
    };
    let record = if parent.segs.is_empty() {
        root
    } else {
        locate(root, &parent).ok()?
    };
    match through_variant(record, Some(name)) {
        Value::Object(m) if !m.contains_key(name) => Some(m.entry(name).or_insert(Value::Null)),
        _ => None,
    }
}

/// Why `path` does not lead to a field of `root` as it is, if it does not (a field the record
/// leaves out included): the words for a path whose field the schema does not know.
pub fn missing(root: &Value, path: &FieldPath) -> Option<String> {
    locate(&mut root.clone(), path).err()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(t: &str) -> FieldPath {
        FieldPath::parse(t).unwrap()
    }

    #[test]
    fn parses_and_prints_paths() {
        for t in [
            "lease.duration",
            "faults[0].duration",
            "nodes[h].drift_ppm",
            "a[1][2].b",
        ] {
            assert_eq!(p(t).to_string(), t);
        }
        assert!(FieldPath::parse("lease..duration").is_err());
        assert!(FieldPath::parse("faults[0").is_err());
        assert!(FieldPath::parse("faults[]").is_err());
    }

    #[test]
    fn steps_over_variant_layers() {
        let mut v = json!({
            "faults": [{"Pause": {"node": "a", "duration": "1s"}}],
            "nodes": [{"name": "lock", "drift_ppm": null}, {"name": "h", "drift_ppm": null}],
            "network": {"delay": {"Fixed": "1ms"}},
        });
        set(&mut v, &p("faults[0].duration"), "2s").unwrap();
        set(&mut v, &p("nodes[h].drift_ppm"), "-1000").unwrap();
        set(
            &mut v,
            &p("network.delay"),
            r#"Uniform(min: "1ms", max: "5ms")"#,
        )
        .unwrap();
        assert_eq!(v["faults"][0]["Pause"]["duration"], "2s");
        assert_eq!(v["nodes"][1]["drift_ppm"], -1000);
        assert_eq!(v["network"]["delay"]["Uniform"]["max"], "5ms");
    }

    #[test]
    fn says_which_step_is_missing() {
        let mut v = json!({"lease": {"duration": "10s"}, "strategy": "CachedBool", "faults": []});
        // An absent last field is added (the schema, read afterwards, refuses an unknown
        // one); `missing` has the words for it.
        let e = missing(&v, &p("lease.durration")).unwrap();
        assert!(e.contains("`lease` has no field `durration`"), "{e}");
        assert!(e.contains("duration"), "{e}");
        set(&mut v, &p("lease.initial_leader"), "a").unwrap();
        assert_eq!(v["lease"]["initial_leader"], "a");
        let e = set(&mut v, &p("leese.duration"), "1s").unwrap_err();
        assert!(e.contains("the scenario has no field `leese`"), "{e}");
        let e = set(&mut v, &p("faults[0].duration"), "1s").unwrap_err();
        assert!(e.contains("0 entries"), "{e}");
    }

    /// The strategy is its RON text: a field is set in it (added when left out, quoted when it
    /// is not RON), the whole of it replaced; a path inside a field, or epsilon for a strategy
    /// without one, is refused.
    #[test]
    fn sets_the_strategy_in_its_text() {
        let mut v = json!({"strategy": "TwoSided(holder_margin: \"1ms\")"});
        set(&mut v, &p("strategy.holder_margin"), "5ms").unwrap();
        set(&mut v, &p("strategy.grantor_margin"), "2ms").unwrap();
        assert_eq!(
            v["strategy"],
            r#"TwoSided(holder_margin: "5ms", grantor_margin: "2ms")"#
        );
        set(&mut v, &p("strategy"), " CachedBool ").unwrap();
        assert_eq!(v["strategy"], "CachedBool");
        assert!(set(&mut v, &p("strategy"), "Two Sided").is_err());

        let s = Scenario::from_ron(
            r#"Scenario(duration: "1s", lease: (duration: "1s"), strategy: CachedBool,
                nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)])"#,
        )
        .unwrap();
        let r = Registry::new();
        let e = resolve("strategy.holder_margin.x", &s, &r).unwrap_err();
        assert!(e.contains("nothing inside them"), "{e}");
        let e = resolve("epsilon", &s, &r).unwrap_err();
        assert!(e.contains("CachedBool has no holder margin"), "{e}");
        // WallClock's epsilon is its holder margin, named so either way.
        let mut s = s;
        s.strategy = StrategySpec::from_ron("WallClock()").unwrap();
        for name in ["epsilon", "strategy.holder_margin"] {
            let (path, role) = resolve(name, &s, &r).unwrap();
            assert_eq!(
                (path.to_string(), role),
                ("strategy.holder_margin".into(), Role::Epsilon)
            );
        }
    }

    #[test]
    fn reads_values_as_the_target_is_written() {
        assert_eq!(parse_value("100", &json!(1.5)).unwrap(), json!(100.0));
        assert_eq!(parse_value("7", &json!(1)).unwrap(), json!(7));
        assert!(parse_value("ten", &json!(1.5)).is_err());
        assert_eq!(parse_value("10s", &json!("1s")).unwrap(), json!("10s"));
        assert_eq!(
            parse_value("Adversarial", &json!("Random")).unwrap(),
            json!("Adversarial")
        );
        assert_eq!(
            parse_value(r#"TwoSided(holder_margin: "5ms")"#, &json!("CachedBool")).unwrap(),
            json!({"TwoSided": {"holder_margin": "5ms"}})
        );
        assert_eq!(parse_value("-50", &Value::Null).unwrap(), json!(-50));
        assert_eq!(parse_value("3s", &Value::Null).unwrap(), json!("3s"));
    }
}
