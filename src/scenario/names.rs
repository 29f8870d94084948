//! The rule for names that become file names or are drawn: a scenario's name (its file name
//! without `.ron`, which names its report directory `DIR/<name>/`), its nodes' names (drawn in
//! every chart, written in every report and trace) and the message kinds its faults name.
//!
//! Such a name must be something a file system and an XML document can both hold: not empty,
//! not `.` or `..`, without a path separator (`/` or `\`), without a control character (none can
//! be drawn, and XML forbids most of them outright), and at most [`MAX_NAME_BYTES`] bytes (a
//! report directory's staging name adds about twenty bytes to it, and most file systems stop at
//! 255). Anything else is allowed, `&<>"'` included: every writer escapes what its format needs.
//!
//! [`problem`] is the rule for one name; [`problems`] applies it to a scenario's names, each
//! problem naming its field (`nodes[2].name: ...`), and validation calls it, so that `check`
//! refuses what `run` would. A scenario's own name is checked where it is decided, when a file
//! is loaded ([`super::load::named_from_file_in`]).

use super::{Fault, Scenario};

/// The page beside the report directories of a run of several scenarios.
pub const INDEX: &str = "index.html";

/// The longest name, in bytes of UTF-8.
pub const MAX_NAME_BYTES: usize = 200;

/// Why `name` cannot be a file name or be drawn, in a few words; `None` when it can.
pub fn problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".into());
    }
    if name == "." || name == ".." {
        return Some(format!(
            "{name:?} is not a name a file or a directory can have"
        ));
    }
    if let Some(c) = name.chars().find(|&c| c == '/' || c == '\\') {
        return Some(format!(
            "{name:?} contains the path separator {c:?}, which cannot be in a file name"
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Some(format!(
            "{name:?} contains the control character U+{:04X}, which cannot be drawn or be \
             in a file name",
            u32::from(c)
        ));
    }
    if name.len() > MAX_NAME_BYTES {
        return Some(format!(
            "is {} bytes long, above the limit of {MAX_NAME_BYTES}",
            name.len()
        ));
    }
    None
}

/// Why `name` cannot be a scenario's own name although it can be a file's, if so: it has the
/// form of the names leasesim gives what it writes beside a report directory `DIR/NAME/` (a
/// staging directory `.NAME.tmp-PID`, a replaced report `.NAME.old-PID`, an in-progress file
/// `.NAME.in-progress` or `.NAME.explore-in-progress`), which a later command that writes `NAME`
/// removes as its own leftovers once that PID has ended. Checked where a file's name becomes a
/// scenario's ([`super::load::named_from_file_in`]).
pub fn reserved(name: &str) -> Option<String> {
    if name == INDEX {
        return Some(format!(
            "{name:?} is the name of the page that indexes the reports of a run of several \
             scenarios, written beside their directories"
        ));
    }
    let rest = name.strip_prefix('.')?;
    let aside = |kind: &str| {
        rest.rsplit_once(kind)
            .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
    };
    if aside(".tmp-") || aside(".old-") || rest.ends_with("in-progress") {
        return Some(format!(
            "{name:?} has the form of the names leasesim gives the files it writes beside a \
             report (.NAME.tmp-PID, .NAME.old-PID, .NAME.in-progress), which a later run into \
             the same directory removes as its own leftovers"
        ));
    }
    None
}

/// The problems of the names in `s`, each with its field: its nodes' names and the message
/// kinds its faults filter on. An empty node name is left to validation's own check of it.
pub fn problems(s: &Scenario) -> Vec<String> {
    let mut p = Vec::new();
    for (i, n) in s.nodes.iter().enumerate() {
        if n.name.is_empty() {
            continue;
        }
        if let Some(why) = problem(&n.name) {
            p.push(format!("nodes[{i}].name: {why}"));
        }
    }
    for (i, f) in s.faults.iter().enumerate() {
        let kinds = match f {
            Fault::DelaySpike { kinds, .. } | Fault::Drop { kinds, .. } => kinds,
            _ => continue,
        };
        for (j, k) in kinds.iter().flatten().enumerate() {
            if let Some(why) = problem(&k.0) {
                p.push(format!("faults[{i}].kinds[{j}]: {why}"));
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_file_system_or_a_drawing_cannot_hold_is_refused() {
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "/",
            "a\\b",
            "a\u{0}b",
            "\n",
            "tab\there",
            "\u{7f}",
        ] {
            assert!(problem(bad).is_some(), "{bad:?} accepted");
        }
        // The limit, exactly: 200 bytes pass, 201 do not; a 2-byte character counts twice.
        assert_eq!(problem(&"x".repeat(200)), None);
        assert!(problem(&"x".repeat(201)).is_some());
        assert!(problem(&"é".repeat(101)).is_some());
        assert_eq!(problem(&"é".repeat(100)), None);
    }

    #[test]
    fn the_forms_of_staging_names_are_reserved_for_a_scenario() {
        for bad in [
            ".q4.old-999999",
            ".q4.tmp-999998",
            ".q4-sweep.in-progress",
            ".q4.explore-in-progress",
            "..tmp-1",
            "index.html",
        ] {
            assert!(reserved(bad).is_some(), "{bad:?} accepted");
        }
        for good in [
            "q4",
            ".hidden",
            "q4.tmp-1",
            ".q4.tmp-",
            ".q4.tmp-1x",
            ".q4.old",
            "index",
            "index.htm",
        ] {
            assert_eq!(reserved(good), None, "{good:?} refused");
        }
    }

    #[test]
    fn what_escaping_handles_is_allowed() {
        for good in [
            "a", "lock", "a&<>\"'b", "...", ".hidden", "a.b", "node 1", "ü", "-",
        ] {
            assert_eq!(problem(good), None, "{good:?} refused");
        }
    }

    #[test]
    fn each_problem_names_its_field() {
        let s = Scenario::from_ron(
            r#"Scenario(
                duration: "10s",
                lease: (duration: "1s"),
                strategy: GrantorOnly,
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "", role: Contender),
                    (name: "a\u{1}", role: Contender),
                    (name: "..", role: Contender),
                ],
            )"#,
        )
        .unwrap();
        let p = problems(&s);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(
            p[0].starts_with("nodes[2].name: ") && p[0].contains("U+0001"),
            "{p:?}"
        );
        assert!(
            p[1].starts_with("nodes[3].name: ") && p[1].contains("\"..\""),
            "{p:?}"
        );
    }
}
