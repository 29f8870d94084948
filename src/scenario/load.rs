//! Loading scenarios: from files, from RON text, or by name from the bundled library.
//!
//! Errors are for people: a syntax or schema error names the source, line and column, says what
//! was expected and shows the offending line with a caret; a semantic error lists every problem
//! found, one per line. Nothing here panics on bad input.

use super::limits::MAX_SCENARIO_BYTES;
use super::protocols::{Builtin, Protocols, StrategyError};
use super::{validate, Scenario, StrategySpec};
use ron::error::{Position, Span, SpannedError};
use std::fmt;
use std::io::Read;
use std::path::Path;

/// Why a scenario could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    Io { source: String, message: String },
    /// The text is not a well-formed scenario (syntax, unknown field, bad duration...).
    Syntax {
        source: String,
        line: usize,
        col: usize,
        message: String,
        /// The offending line of the text, if it exists.
        text: Option<String>,
    },
    /// The scenario parses but cannot run; every problem is listed.
    Invalid {
        source: String,
        problems: Vec<String>,
    },
    /// No bundled scenario has this name; `known` are the bundled names (the message
    /// suggests the closest, [`super::library::closest`], or else the command that lists them,
    /// under `program`: the name the command line goes by, such as `leasesim`).
    UnknownName {
        name: String,
        known: Vec<String>,
        program: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { source, message } => write!(f, "{source}: cannot read: {message}"),
            LoadError::Syntax {
                source,
                line,
                col,
                message,
                text,
            } => {
                write!(f, "{source}:{line}:{col}: {message}")?;
                if let Some(text) = text {
                    let gutter = line.to_string().len();
                    let caret_at = text
                        .chars()
                        .take(col.saturating_sub(1))
                        .map(|c| if c == '\t' { '\t' } else { ' ' })
                        .collect::<String>();
                    write!(
                        f,
                        "\n{:gutter$} |\n{line} | {text}\n{:gutter$} | {caret_at}^",
                        "", ""
                    )?;
                }
                Ok(())
            }
            LoadError::Invalid { source, problems } => {
                let n = problems.len();
                write!(
                    f,
                    "{source}: {n} problem{} found:",
                    if n == 1 { "" } else { "s" }
                )?;
                for p in problems {
                    write!(f, "\n  - {p}")?;
                }
                Ok(())
            }
            LoadError::UnknownName {
                name,
                known,
                program,
            } => {
                write!(f, "no scenario file or bundled scenario named {name:?}")?;
                let close = super::library::closest(name, known);
                match close.as_slice() {
                    [] => write!(f, "; `{program} list` shows the bundled ones"),
                    [one] => write!(f, "; did you mean {one}?"),
                    more => write!(f, "; did you mean one of {}?", more.join(", ")),
                }
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// Turns ron's error into a [`LoadError::Syntax`] with the line shown.
fn syntax_error(source: &str, text: &str, e: ron::error::SpannedError) -> LoadError {
    let line = e.span.start.line;
    let col = e.span.start.col;
    LoadError::Syntax {
        source: source.to_string(),
        line,
        col,
        message: describe(&e.code),
        text: text
            .lines()
            .nth(line.saturating_sub(1))
            .map(|l| l.trim_end().to_string()),
    }
}

/// Where a schema type appears in a scenario file, for messages.
fn place(outer: &Option<String>) -> String {
    let Some(o) = outer else {
        return String::new();
    };
    let field = match o.as_str() {
        "Scenario" => "the scenario",
        "LeaseConfig" => "`lease`",
        "ClocksConfig" => "`clocks`",
        "NodeConfig" => "a node of `nodes`",
        "NetworkConfig" => "`network`",
        "LinkConfig" => "a link of `network.links`",
        "WorkloadConfig" => "`workload`",
        "ResourceConfig" => "`resource`",
        "Expect" => "`expect`",
        "Limits" => "`limits`",
        other => return format!(" in `{other}`"),
    };
    format!(" in {field}")
}

/// ron's message, with the expectation said the way a scenario author thinks of it.
pub(crate) fn describe(code: &ron::Error) -> String {
    match code {
        ron::Error::NoSuchStructField {
            expected,
            found,
            outer,
        } => format!(
            "unknown field `{found}`{}; expected one of: {}",
            place(outer),
            expected.join(", ")
        ),
        ron::Error::NoSuchEnumVariant {
            expected,
            found,
            outer,
        } => format!(
            "unknown variant `{found}`{}; expected one of: {}",
            outer
                .as_ref()
                .map(|o| format!(" of {o}"))
                .unwrap_or_default(),
            expected.join(", ")
        ),
        ron::Error::MissingStructField { field, outer } => {
            format!("missing field `{field}`{}", place(outer))
        }
        other => other.to_string(),
    }
}

/// The line and column (in characters) of byte `at` of `text`.
fn position_at(text: &str, at: usize) -> Position {
    let before = &text[..at];
    Position {
        line: 1 + before.matches('\n').count(),
        col: 1 + before.chars().rev().take_while(|&c| c != '\n').count(),
    }
}

/// An error in the strategy that starts at byte `at` of `text`, as an error of `text`: the
/// position of an error in its fields moved by where it starts, or that start.
fn strategy_error(source: &str, text: &str, at: usize, e: StrategyError) -> LoadError {
    let base = position_at(text, at);
    let shift = |p: Position| {
        if p.line == 1 {
            Position {
                line: base.line,
                col: base.col + p.col - 1,
            }
        } else {
            Position {
                line: base.line + p.line - 1,
                col: p.col,
            }
        }
    };
    let spanned = match e {
        StrategyError::Fields { error, .. } => SpannedError {
            code: error.code,
            span: Span {
                start: shift(error.span.start),
                end: shift(error.span.end),
            },
        },
        other => SpannedError {
            code: ron::Error::Message(other.to_string()),
            span: Span {
                start: base,
                end: base,
            },
        },
    };
    syntax_error(source, text, spanned)
}

/// Parses and validates a scenario from `text`, whose strategy must be a built-in one;
/// `source` names it in errors.
pub fn from_text(source: &str, text: &str) -> Result<Scenario, LoadError> {
    from_text_in(source, text, &Builtin)
}

/// Parses and validates a scenario from `text`, whose strategy is built in or known to
/// `protocols`; `source` names it in errors. An unknown strategy, or a bad field of one, is
/// reported where it is in the text. The strategy comes back as its protocol writes it
/// ([`Protocols::normalize`]).
pub fn from_text_in(
    source: &str,
    text: &str,
    protocols: &dyn Protocols,
) -> Result<Scenario, LoadError> {
    let mut scenario = Scenario::from_ron(text).map_err(|e| syntax_error(source, text, e))?;
    match protocols.normalize(&scenario.strategy) {
        Ok(spec) => scenario.strategy = spec,
        Err(e) => {
            let at = super::strategy_span(text).map_or(0, |s| s.start);
            return Err(strategy_error(source, text, at, e));
        }
    }
    let problems = validate::validate_in(&scenario, protocols);
    if problems.is_empty() {
        Ok(scenario)
    } else {
        Err(LoadError::Invalid {
            source: source.to_string(),
            problems,
        })
    }
}

/// Loads and validates a scenario file, whose strategy must be a built-in one.
pub fn from_file(path: &Path) -> Result<Scenario, LoadError> {
    from_file_in(path, &Builtin)
}

/// Loads and validates a scenario file, whose strategy is built in or known to `protocols`.
pub fn from_file_in(path: &Path, protocols: &dyn Protocols) -> Result<Scenario, LoadError> {
    let source = path.display().to_string();
    let io = |message: String| LoadError::Io {
        source: source.clone(),
        message,
    };
    // Never more than the limit plus one byte, whatever the path names (`/dev/zero`, a log).
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SCENARIO_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| io(e.to_string()))?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(io(format!(
            "larger than {} MiB, the limit for a scenario file (see docs/src/limits.md)",
            MAX_SCENARIO_BYTES >> 20
        )));
    }
    let text = text_of(&source, &bytes)?;
    from_text_in(&source, text, protocols)
}

/// `bytes` as UTF-8 text, or a [`LoadError::Syntax`] at the first invalid byte (line, column and
/// byte offset), like every other error in a file.
pub fn text_of<'b>(source: &str, bytes: &'b [u8]) -> Result<&'b str, LoadError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let before = std::str::from_utf8(&good[line_start..]).unwrap_or_default();
        let rest = &bytes[line_start..];
        let line_end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let line_text = String::from_utf8_lossy(&rest[..line_end]);
        LoadError::Syntax {
            source: source.to_string(),
            line: good.iter().filter(|&&b| b == b'\n').count() + 1,
            col: before.chars().count() + 1,
            message: format!(
                "invalid UTF-8 (byte 0x{:02x} at byte offset {}); scenario files are UTF-8 text",
                bytes[e.valid_up_to()],
                e.valid_up_to()
            ),
            text: Some(line_text.trim_end().to_string()),
        }
    })
}

/// The name of a scenario loaded from `path`: the file name without `.ron`.
pub fn name_of(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Loads and validates a scenario file, with its name ([`name_of`]), whose strategy is built in
/// or known to `protocols`. The name becomes a report directory's, so one that cannot be a file
/// name or be drawn ([`super::names`]) is a problem of the file, listed first among its others
/// (`...ron` would be named `..`).
pub fn named_from_file_in(
    path: &Path,
    protocols: &dyn Protocols,
) -> Result<(String, Scenario), LoadError> {
    let name = name_of(path);
    let bad = super::names::problem(&name)
        .or_else(|| super::names::reserved(&name))
        .map(|why| format!("name (the file name without .ron): {why}; rename the file"));
    match (from_file_in(path, protocols), bad) {
        (Ok(s), None) => Ok((name, s)),
        (Ok(_), Some(bad)) => Err(LoadError::Invalid {
            source: path.display().to_string(),
            problems: vec![bad],
        }),
        (Err(LoadError::Invalid { source, problems }), Some(bad)) => Err(LoadError::Invalid {
            source,
            problems: std::iter::once(bad).chain(problems).collect(),
        }),
        (Err(e), _) => Err(e),
    }
}

/// Parses a strategy written as in a scenario's `strategy` field (`--strategy` on the CLI),
/// which must be a built-in one.
pub fn strategy_from_text(text: &str) -> Result<StrategySpec, LoadError> {
    strategy_from_text_in(text, &Builtin)
}

/// Parses a strategy written as in a scenario's `strategy` field (`--strategy` on the CLI),
/// built in or known to `protocols`, which reads its fields; it comes back as its protocol
/// writes it.
pub fn strategy_from_text_in(
    text: &str,
    protocols: &dyn Protocols,
) -> Result<StrategySpec, LoadError> {
    let source = "--strategy";
    let spec = StrategySpec::from_ron(text).map_err(|e| syntax_error(source, text, e))?;
    protocols.normalize(&spec).map_err(|e| {
        let at = super::value_span(text).map_or(0, |s| s.start);
        strategy_error(source, text, at, e)
    })
}

/// Parses item `item` (from 0) of a comma-separated list of strategies (`compare
/// --strategies`), `part`, which starts at byte `at` of `list`, built in or known to
/// `protocols`. An error names the item by its number and its own text, and points into the
/// whole list.
pub fn strategy_in_list(
    list: &str,
    item: usize,
    at: usize,
    part: &str,
    protocols: &dyn Protocols,
) -> Result<StrategySpec, LoadError> {
    match strategy_from_text_in(part, protocols) {
        Ok(spec) => Ok(spec),
        Err(LoadError::Syntax {
            line, col, message, ..
        }) => {
            let start = position_at(list, at);
            let (line, col) = if line == 1 {
                (start.line, start.col + col - 1)
            } else {
                (start.line + line - 1, col)
            };
            Err(LoadError::Syntax {
                source: "--strategies".to_string(),
                line,
                col,
                message: format!("item {} `{part}`: {message}", item + 1),
                text: list
                    .lines()
                    .nth(line.saturating_sub(1))
                    .map(|l| l.trim_end().to_string()),
            })
        }
        Err(other) => Err(other),
    }
}
