//! `report.html` and `index.html`: one self-contained page per report, opening from disk with
//! no network (its script, styles and data inline; a content security policy forbids every
//! fetch), drawn by the script in `assets/` from the data this module writes into it.
//!
//! A page holds a header (title, lines, a summary table sortable by any column, linking to
//! other pages) and the runs to draw: one for `run` and `explore`, one per strategy for
//! `compare` (a picker chooses), none for `sweep` and an index. A run is drawn as a zoomable
//! timeline of every node's beliefs, its faults, the grants, overlaps and handovers, and the
//! client history ([`run_data`]). Everything is written in a fixed order from integers, so a
//! page is byte-identical run to run.

pub mod handovers;
pub mod run_data;
pub mod tables;

use crate::outcome::{Outcome, Summary, Verdict};
use crate::scenario::Scenario;
use crate::trace::client_log::ClientLog;
use crate::trace::timeline::Timeline;
use run_data::RunData;
use serde::Serialize;

const TEMPLATE: &str = include_str!("assets/page.html");
const CSS: &str = include_str!("assets/viewer.css");
const JS: &str = include_str!("assets/viewer.js");

/// What kind of report a page is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PageKind {
    Run,
    Compare,
    Explore,
    Sweep,
    Index,
}

/// A column of a summary table: numeric columns sort by number.
#[derive(Clone, Debug, Serialize)]
pub struct Column {
    pub name: String,
    pub numeric: bool,
}

/// A value a table sorts on: a number, a text, or nothing (sorted last).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum SortKey {
    Number(f64),
    Text(String),
    None,
}

/// A row: its cells as shown, the values they sort on, where its first cell links, and its
/// verdict (which tints it).
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub cells: Vec<String>,
    pub sort: Vec<SortKey>,
    pub link: Option<String>,
    pub verdict: Option<Verdict>,
}

/// A summary table.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

impl Table {
    /// A table of `columns` (name, numeric).
    pub fn new(columns: &[(&str, bool)]) -> Table {
        Table {
            columns: columns
                .iter()
                .map(|&(name, numeric)| Column {
                    name: name.to_string(),
                    numeric,
                })
                .collect(),
            rows: Vec::new(),
        }
    }
}

/// Everything one page shows.
#[derive(Clone, Debug, Serialize)]
pub struct Page<'a> {
    pub kind: PageKind,
    pub title: String,
    pub lines: Vec<String>,
    pub table: Option<Table>,
    pub runs: Vec<RunData<'a>>,
}

impl Page<'_> {
    /// The page as one HTML file.
    pub fn html(&self) -> String {
        fill(TEMPLATE, &self.title, self)
    }
}

/// The page of one run of `scenario`: its outcome's figures and the run drawn from `timeline`
/// and `log`; `trace` links the run's trace when one was written.
pub fn run_page(
    scenario: &Scenario,
    outcome: &Outcome,
    timeline: &Timeline,
    log: &ClientLog,
    trace: Option<&str>,
) -> String {
    let summary = &outcome.summary;
    let claims = (summary, outcome.authorities);
    let run = RunData::of(&summary.scenario, scenario, claims, timeline, log, trace);
    Page {
        kind: PageKind::Run,
        title: summary.scenario.clone(),
        lines: run_lines(scenario),
        table: None,
        runs: vec![run],
    }
    .html()
}

/// The index of several runs' reports (`index.html` beside their directories): one sortable
/// row per run, linking to its page.
pub fn index_page(summaries: &[Summary]) -> String {
    let overlaps = summaries.iter().filter(|s| s.overlap.count > 0).count();
    let failed = summaries
        .iter()
        .filter(|s| s.expect.passed == Some(false))
        .count();
    let expectations = if failed == 0 {
        "all held".to_string()
    } else {
        format!("{failed} FAILED")
    };
    Page {
        kind: PageKind::Index,
        title: format!("{} runs", summaries.len()),
        lines: vec![format!(
            "{} with overlap, {} without; expectations: {expectations}. Click a column to sort \
             by it, a scenario to open its report.",
            overlaps,
            summaries.len() - overlaps
        )],
        table: Some(tables::verdict_table(summaries)),
        runs: Vec::new(),
    }
    .html()
}

/// The lines under a run's title: its scenario's description (its figures, the strategy
/// first, follow in a table).
pub fn run_lines(scenario: &Scenario) -> Vec<String> {
    let d = scenario.description.trim();
    if d.is_empty() {
        Vec::new()
    } else {
        vec![d.to_string()]
    }
}

/// `template` with its placeholders filled: the title escaped for HTML, the styles and script
/// as they are, and `data` written as JSON that is safe inside a `<script>` element, straight
/// into the page (the page is the only copy of it).
fn fill(template: &str, title: &str, data: &impl Serialize) -> String {
    let mut out = Vec::with_capacity(template.len() + CSS.len() + JS.len() + DATA_ROOM);
    let mut rest = template;
    while let Some(at) = rest.find("{{") {
        out.extend_from_slice(&rest.as_bytes()[..at]);
        let after = &rest[at..];
        let len = if after.starts_with("{{TITLE}}") {
            out.extend_from_slice(escape_html(title).as_bytes());
            "{{TITLE}}".len()
        } else if after.starts_with("{{CSS}}") {
            out.extend_from_slice(CSS.as_bytes());
            "{{CSS}}".len()
        } else if after.starts_with("{{JS}}") {
            out.extend_from_slice(JS.as_bytes());
            "{{JS}}".len()
        } else if after.starts_with("{{DATA}}") {
            let mut json = serde_json::Serializer::with_formatter(&mut out, ScriptSafe);
            data.serialize(&mut json).expect("a page serializes");
            "{{DATA}}".len()
        } else {
            out.extend_from_slice(b"{{");
            2
        };
        rest = &after[len..];
    }
    out.extend_from_slice(rest.as_bytes());
    String::from_utf8(out).expect("a page is the template's text and JSON")
}

/// Room for a page's data taken at the start (its vector grows past it).
const DATA_ROOM: usize = 64 * 1024;

/// Text for an HTML element or attribute.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON (serde_json's compact form) that cannot end the `<script>` element it sits in, nor
/// open a comment in it: every `<`, `>` and `&` written as a JSON escape (they appear only
/// inside strings). U+2028 and U+2029 are escaped too, as older parsers of script text took
/// them for line ends.
struct ScriptSafe;

impl serde_json::ser::Formatter for ScriptSafe {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut from = 0;
        for (at, c) in fragment.char_indices() {
            let escaped = match c {
                '<' => "\\u003c",
                '>' => "\\u003e",
                '&' => "\\u0026",
                '\u{2028}' => "\\u2028",
                '\u{2029}' => "\\u2029",
                _ => continue,
            };
            writer.write_all(&fragment.as_bytes()[from..at])?;
            writer.write_all(escaped.as_bytes())?;
            from = at + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[from..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name that tries to close the data's script element stays inside its JSON string.
    #[test]
    fn data_cannot_close_its_script_element() {
        let page = Page {
            kind: PageKind::Index,
            title: "</script><script>alert(1)</script>".to_string(),
            lines: vec!["a & b <!-- c -->".to_string()],
            table: None,
            runs: Vec::new(),
        };
        let html = page.html();
        assert_eq!(html.matches("<script>alert(1)").count(), 0);
        assert!(html.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains(r"\u003c/script\u003e\u003cscript\u003ealert(1)"));
        assert!(html.contains(r"a \u0026 b \u003c!-- c --\u003e"));
        let data = html.split("type=\"application/json\">").nth(1).unwrap();
        let data = data.split("</script>").next().unwrap();
        let back: serde_json::Value = serde_json::from_str(data).unwrap();
        assert_eq!(back["title"], "</script><script>alert(1)</script>");
    }

    /// What a script element cannot hold is escaped wherever it sits in a string (a key, a
    /// value, beside multi-byte characters), and nothing else is: quote and backslash keep
    /// JSON's own escapes.
    #[test]
    fn the_data_escapes_only_what_a_script_element_cannot_hold() {
        let data = serde_json::json!({ "a<b": "é<\u{2028}>&\u{2029}ü\"\\" });
        let out = fill("{{DATA}}", "", &data);
        assert_eq!(
            out,
            r#"{"a\u003cb":"é\u003c\u2028\u003e\u0026\u2029ü\"\\"}"#
        );
    }

    /// Every placeholder is filled once and nothing else of the template is touched.
    #[test]
    fn the_template_is_filled_in_place() {
        let t = "<title>{{TITLE}}</title>{{ x }}<style>{{CSS}}</style><script>{{JS}}</script>\
                 <script id=\"data\" type=\"application/json\">{{DATA}}</script>";
        let out = fill(t, "a<b", &serde_json::json!({ "k": "<" }));
        assert!(out.starts_with("<title>a&lt;b</title>{{ x }}<style>"));
        assert!(out.ends_with("type=\"application/json\">{\"k\":\"\\u003c\"}</script>"));
        // The four placeholders are 9 + 7 + 6 + 8 = 30 bytes.
        let filled = "a&lt;b".len() + CSS.len() + JS.len() + r#"{"k":"\u003c"}"#.len();
        assert_eq!(out.len(), t.len() - 30 + filled);
    }
}
