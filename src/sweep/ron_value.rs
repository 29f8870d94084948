//! RON value text to a `serde_json::Value` in serde's externally tagged shape, so that a value
//! given on the command line (`Uniform(min: "1ms", max: "5ms")`) can be put into a scenario
//! that was serialized to JSON.
//!
//! `ron::Value` drops enum variant names, which is why this small parser exists. It maps
//! `Name` to `"Name"` (a unit variant), `Name(x)` to `{"Name": x}` (newtype), `Name(a: x, ..)`
//! to `{"Name": {"a": x, ..}}` (struct variant), `Name(x, y)` to `{"Name": [x, y]}`, `(a: x)`
//! to an object, `[..]` and `(x, y)` to arrays, `Some(x)` to `x` and `None` to `null`. It knows
//! nothing of the scenario schema: deserializing the result into a `Scenario` does the checking.

use serde_json::{Map, Number, Value};

/// `text` split at each `sep` outside brackets and strings, each part trimmed, with the byte
/// offset in `text` at which it starts; a last part of only blanks is dropped (`a,b,`).
pub fn split_top_level_at(text: &str, sep: char) -> Vec<(usize, String)> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut in_string = false;
    let mut start = 0;
    let push = |parts: &mut Vec<(usize, String)>, start: usize, end: usize| {
        let raw = &text[start..end];
        let lead = raw.len() - raw.trim_start().len();
        parts.push((start + lead, raw.trim().to_string()));
    };
    for (i, ch) in text.char_indices() {
        match ch {
            '"' => in_string = !in_string,
            '(' | '[' | '{' if !in_string => depth += 1,
            ')' | ']' | '}' if !in_string => depth -= 1,
            c if c == sep && depth == 0 && !in_string => {
                push(&mut parts, start, i);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        push(&mut parts, start, text.len());
    }
    parts
}

/// Parses one RON value; the error says where and what was expected.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        text,
    };
    let v = p.value()?;
    p.ws();
    if p.i < p.s.len() {
        return Err(p.err("end of the value"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn err(&self, expected: &str) -> String {
        let rest: String = self.text[self.i.min(self.text.len())..]
            .chars()
            .take(12)
            .collect();
        if rest.is_empty() {
            format!("expected {expected} at the end of {:?}", self.text)
        } else {
            format!(
                "expected {expected} at column {} of {:?} (found {rest:?})",
                self.i + 1,
                self.text
            )
        }
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(b'"') => self.string().map(Value::String),
            Some(b'[') => {
                self.i += 1;
                Ok(Value::Array(self.items(b']')?))
            }
            Some(b'{') => self.map(),
            Some(b'(') => {
                self.i += 1;
                self.parens()
            }
            Some(c) if c == b'-' || c == b'+' || c == b'.' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let name = self.ident();
                match name.as_str() {
                    "true" => return Ok(Value::Bool(true)),
                    "false" => return Ok(Value::Bool(false)),
                    "None" => return Ok(Value::Null),
                    _ => {}
                }
                if self.eat(b'(') {
                    let inner = self.parens()?;
                    if name == "Some" {
                        return Ok(inner);
                    }
                    let mut m = Map::new();
                    m.insert(name, inner);
                    Ok(Value::Object(m))
                } else {
                    Ok(Value::String(name))
                }
            }
            _ => Err(self.err("a value (a number, a \"string\", a list, or a Name(...))")),
        }
    }

    fn ident(&mut self) -> String {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        self.text[start..self.i].to_string()
    }

    /// After `(`: named fields give an object, one value gives itself (a newtype's content),
    /// several give an array, none give an empty object (a struct with every field defaulted).
    fn parens(&mut self) -> Result<Value, String> {
        if self.eat(b')') {
            return Ok(Value::Object(Map::new()));
        }
        if self.named_field_ahead() {
            let mut m = Map::new();
            loop {
                if self.eat(b')') {
                    break;
                }
                let key = self.ident();
                if key.is_empty() {
                    return Err(self.err("a field name"));
                }
                if !self.eat(b':') {
                    return Err(self.err("`:` after a field name"));
                }
                let v = self.value()?;
                if m.insert(key.clone(), v).is_some() {
                    return Err(format!("field `{key}` given twice in {:?}", self.text));
                }
                if !self.eat(b',') {
                    if self.eat(b')') {
                        break;
                    }
                    return Err(self.err("`,` or `)`"));
                }
            }
            return Ok(Value::Object(m));
        }
        let mut items = self.items(b')')?;
        Ok(if items.len() == 1 {
            items.pop().expect("one item")
        } else {
            Value::Array(items)
        })
    }

    /// Whether the parenthesised content starts with `name:`.
    fn named_field_ahead(&mut self) -> bool {
        let save = self.i;
        self.ws();
        let name = self.ident();
        let named = !name.is_empty() && self.eat(b':');
        self.i = save;
        named
    }

    /// Comma-separated values up to `close` (a trailing comma is allowed).
    fn items(&mut self, close: u8) -> Result<Vec<Value>, String> {
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Ok(items);
            }
            items.push(self.value()?);
            if !self.eat(b',') {
                if self.eat(close) {
                    return Ok(items);
                }
                return Err(self.err(&format!("`,` or `{}`", close as char)));
            }
        }
    }

    fn map(&mut self) -> Result<Value, String> {
        self.i += 1; // `{`
        let mut m = Map::new();
        loop {
            if self.eat(b'}') {
                return Ok(Value::Object(m));
            }
            let key = match self.value()? {
                Value::String(s) => s,
                other => other.to_string(),
            };
            if !self.eat(b':') {
                return Err(self.err("`:` after a map key"));
            }
            let v = self.value()?;
            m.insert(key, v);
            if !self.eat(b',') {
                if self.eat(b'}') {
                    return Ok(Value::Object(m));
                }
                return Err(self.err("`,` or `}`"));
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1; // opening quote
        let mut out = String::new();
        let rest = &self.text[self.i..];
        let mut chars = rest.char_indices();
        while let Some((k, c)) = chars.next() {
            match c {
                '"' => {
                    self.i += k + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, e @ ('"' | '\\' | '\''))) => out.push(e),
                    _ => {
                        self.i += k;
                        return Err(self.err("an escape: \\\" \\\\ \\n or \\t"));
                    }
                },
                c => out.push(c),
            }
        }
        self.i = self.s.len();
        Err(self.err("a closing `\"`"))
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        while self.i < self.s.len()
            && matches!(
                self.s[self.i],
                b'0'..=b'9' | b'.' | b'-' | b'+' | b'e' | b'E' | b'_'
            )
        {
            self.i += 1;
        }
        let t: String = self.text[start..self.i]
            .chars()
            .filter(|&c| c != '_')
            .collect();
        if let Ok(n) = t.parse::<u64>() {
            return Ok(Value::Number(n.into()));
        }
        if let Ok(n) = t.parse::<i64>() {
            return Ok(Value::Number(n.into()));
        }
        match t.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(Value::Number(n)),
            None => {
                self.i = start;
                Err(self.err("a number"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use serde_json::json;

    #[test]
    fn maps_ron_to_externally_tagged_json() {
        assert_eq!(parse(r#"Fixed("1ms")"#).unwrap(), json!({"Fixed": "1ms"}));
        assert_eq!(
            parse(r#"Uniform(min: "1ms", max: "5ms",)"#).unwrap(),
            json!({"Uniform": {"min": "1ms", "max": "5ms"}})
        );
        assert_eq!(parse("CachedBool").unwrap(), json!("CachedBool"));
        assert_eq!(parse("TwoSided()").unwrap(), json!({"TwoSided": {}}));
        assert_eq!(
            parse(r#"[["a"], ["lock", "b"]]"#).unwrap(),
            json!([["a"], ["lock", "b"]])
        );
        assert_eq!(
            parse("(x: -1.5, y: Some(3))").unwrap(),
            json!({"x": -1.5, "y": 3})
        );
        assert_eq!(parse("None").unwrap(), json!(null));
        assert_eq!(parse("(1, 2)").unwrap(), json!([1, 2]));
        assert_eq!(
            parse(r#"OneWay(from: "h", to: "lock", at: "10s", duration: "5s")"#).unwrap(),
            json!({"OneWay": {"from": "h", "to": "lock", "at": "10s", "duration": "5s"}})
        );
    }

    #[test]
    fn says_what_it_expected() {
        assert!(parse("Fixed(1ms)").unwrap_err().contains("expected"));
        assert!(parse(r#"Uniform(min: "1ms""#)
            .unwrap_err()
            .contains("`,` or `)`"));
        assert!(parse("[1, 2").is_err());
        assert!(parse("Fixed(\"1ms\") extra")
            .unwrap_err()
            .contains("end of the value"));
    }
}
