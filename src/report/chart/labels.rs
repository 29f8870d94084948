//! Short names for the runs a comparison draws: a strategy's full settings are too long for a
//! heading (`LeaseGuard(mode: Quorum, max_clock_error: "200us", ...)`), and what tells the runs
//! apart is the part that differs (`mode: Quorum`). [`short_labels`] keeps that part;
//! [`group_name`] names runs drawn once because their rows are identical.

/// A label split into the strategy's name, its fields (`key: value`, top-level) and where it
/// came from (the trailing `(origin)`, if any).
struct Parts {
    name: String,
    fields: Vec<(String, String)>,
    origin: Option<String>,
}

/// Splits `text` at top-level commas (outside brackets and quotes), each part trimmed.
fn split_fields(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let (mut depth, mut quoted, mut cur) = (0i32, false, String::new());
    for ch in text.chars() {
        match ch {
            '"' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        parts.push(cur.trim().to_string());
    }
    parts
}

/// `(body, origin)` when `label` ends with ` (origin)`, the origin's brackets balanced
/// (`... (client-go's 15/10/2 s scaled to T (in whole ms))`).
fn split_origin(label: &str) -> Option<(&str, &str)> {
    let inner = label.strip_suffix(')')?;
    let mut depth = 0;
    for (i, ch) in inner.char_indices().rev() {
        match ch {
            ')' => depth += 1,
            '(' if depth > 0 => depth -= 1,
            '(' => return Some((label[..i].strip_suffix(' ')?, &inner[i + 1..])),
            _ => {}
        }
    }
    None
}

/// `Name(k: v, ...) (origin)`, `Name (origin)` or `Name`; `None` if it is not of that form.
fn parse(label: &str) -> Option<Parts> {
    let (body, origin) = match split_origin(label) {
        Some((body, origin)) => (body, Some(origin.to_string())),
        None => (label, None),
    };
    let Some(open) = body.find('(') else {
        return Some(Parts {
            name: body.to_string(),
            fields: Vec::new(),
            origin,
        });
    };
    let inner = body[open + 1..].strip_suffix(')')?;
    let fields = split_fields(inner)
        .into_iter()
        .map(|f| match f.split_once(':') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (f, String::new()),
        })
        .collect();
    Some(Parts {
        name: body[..open].to_string(),
        fields,
        origin,
    })
}

/// The labels cut to what differs between them: the fields whose value is not the same in
/// every label of the strategy's name (`mode: Quorum`), under that name only when the names
/// differ, and
/// `(the scenario's own)` kept where it is said (other origins repeat what differs). Labels
/// that cannot be parsed, or that would come out empty or alike, are kept whole.
pub fn short_labels(labels: &[String], own: &str) -> Vec<String> {
    let Some(parts) = labels.iter().map(|l| parse(l)).collect::<Option<Vec<_>>>() else {
        return labels.to_vec();
    };
    let value = |p: &Parts, k: &str| p.fields.iter().find(|f| f.0 == k).map(|f| f.1.clone());
    // A field differs when strategies of one name set it differently.
    let differs = |name: &str, k: &str| {
        let mut same = parts.iter().filter(|p| p.name == name);
        let first = same.next().and_then(|p| value(p, k));
        same.any(|p| value(p, k) != first)
    };
    let names_differ = parts.iter().any(|p| p.name != parts[0].name);
    let out: Vec<String> = parts
        .iter()
        .map(|p| {
            let kept: Vec<String> = p
                .fields
                .iter()
                .filter(|f| differs(&p.name, &f.0))
                .map(|(k, v)| {
                    if v.is_empty() {
                        k.clone()
                    } else {
                        format!("{k}: {v}")
                    }
                })
                .collect();
            let mut s = match (names_differ, kept.is_empty()) {
                (true, true) => p.name.clone(),
                (true, false) => format!("{}({})", p.name, kept.join(", ")),
                (false, _) => kept.join(", "),
            };
            if p.origin.as_deref() == Some(own) {
                s.push_str(&format!(" ({own})"));
            }
            s
        })
        .collect();
    let mut seen = out.clone();
    seen.sort();
    seen.dedup();
    if out.iter().any(|s| s.is_empty() || s.starts_with(" (")) || seen.len() < out.len() {
        return labels.to_vec();
    }
    out
}

/// The name of runs drawn once, their rows being identical: `mode: Quorum, LogLease:
/// identical` when their short labels all set one field, else the labels joined.
pub fn group_name(members: &[&str]) -> String {
    if let [one] = members {
        return one.to_string();
    }
    let key = |l: &str| {
        l.split_once(": ")
            .map(|(k, v)| (k.to_string(), v.to_string()))
    };
    let keyed: Option<Vec<(String, String)>> = members.iter().map(|l| key(l)).collect();
    let joined = match keyed {
        Some(kv) if kv.iter().all(|(k, v)| *k == kv[0].0 && !v.contains(": ")) => {
            let values: Vec<&str> = kv.iter().map(|(_, v)| v.as_str()).collect();
            format!("{}: {}", kv[0].0, values.join(", "))
        }
        _ => members.join("; "),
    };
    format!("{joined}: identical")
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &str = "the scenario's own";

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn labels_keep_only_what_differs() {
        let labels = strings(&[
            r#"LeaseGuard(mode: Inconsistent, max_clock_error: "200us", heartbeat: "500ms") (the scenario's own)"#,
            r#"LeaseGuard(mode: Quorum, max_clock_error: "200us", heartbeat: "500ms") (the scenario's settings, mode Quorum)"#,
        ]);
        assert_eq!(
            short_labels(&labels, OWN),
            ["mode: Inconsistent (the scenario's own)", "mode: Quorum"]
        );
        // Different strategies keep their names, with the fields that differ.
        let labels = strings(&[
            r#"TwoSided(holder_margin: "5ms", grant: "1s") (as given)"#,
            r#"TwoSided(holder_margin: "9ms", grant: "1s") (as given)"#,
            "CachedBool (as given)",
        ]);
        assert_eq!(
            short_labels(&labels, OWN),
            [
                r#"TwoSided(holder_margin: "5ms")"#,
                r#"TwoSided(holder_margin: "9ms")"#,
                "CachedBool"
            ]
        );
        // A comma inside a quoted value or brackets does not split a field.
        let labels = strings(&[r#"X(a: "p, q", b: [1, 2])"#, r#"X(a: "p, q", b: [1, 3])"#]);
        assert_eq!(short_labels(&labels, OWN), ["b: [1, 2]", "b: [1, 3]"]);
        // The same strategy twice: nothing differs, so the labels stay whole.
        // An origin with brackets of its own is still split off.
        let labels = strings(&[
            r#"K8s(retry: "1.333s") (client-go's scaled to T (in whole ms))"#,
            "CachedBool (no margin to set)",
        ]);
        assert_eq!(short_labels(&labels, OWN), ["K8s", "CachedBool"]);
        let same = strings(&["X(a: 1) (as given)", "X(a: 1) (as given)"]);
        assert_eq!(short_labels(&same, OWN), same);
    }

    #[test]
    fn identical_runs_are_named_together() {
        assert_eq!(
            group_name(&["mode: Quorum", "mode: LogLease"]),
            "mode: Quorum, LogLease: identical"
        );
        assert_eq!(group_name(&["mode: Quorum"]), "mode: Quorum");
        assert_eq!(group_name(&["A(x: 1)", "B"]), "A(x: 1); B: identical");
    }
}
