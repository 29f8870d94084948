//! Plain-text summaries for the terminal: a block per run, and aligned tables.

use super::Verdict;
use crate::outcome::Summary;
use crate::time::format_ns;
use std::fmt::Write;

/// How many overlap intervals a block lists before it says "and N more".
const SHOWN_INTERVALS: usize = 5;

/// The expectation status in a few characters.
pub fn expect_word(s: &Summary) -> &'static str {
    match s.expect.passed {
        None => "-",
        Some(true) => "held",
        Some(false) => "FAILED",
    }
}

/// A compact summary of one run: verdict first, then figures, overlaps, how to rerun.
pub fn run_block(s: &Summary, rerun: &str, report_dir: Option<&str>) -> String {
    let mut t = String::new();
    let verdict = Verdict::of(s);
    let _ = writeln!(
        t,
        "{}  {}  expectations: {}",
        verdict.word(),
        s.scenario,
        expect_word(s)
    );
    for f in &s.expect.failures {
        let _ = writeln!(t, "  ! {f}");
    }
    for (k, v) in figure_rows(s) {
        let _ = writeln!(t, "  {k:<12} {v}");
    }
    write_overlaps(&mut t, s);
    for line in why_lines(s) {
        let _ = writeln!(t, "  {:<12} {line}", "why");
    }
    let r = &s.requests;
    let gaps = [
        ("read gap", r.longest_read_gap),
        ("write gap", r.longest_write_gap),
    ];
    for (k, g) in gaps {
        if let Some(g) = g {
            let _ = writeln!(t, "  {k:<12} {}", gap_text(g));
        }
    }
    let _ = writeln!(t, "  {:<12} {rerun}", "rerun");
    if let Some(dir) = report_dir {
        let _ = writeln!(t, "  {:<12} {dir}", "report");
    }
    t
}

/// Why a HARM verdict: no two nodes believed at once, yet the first unsafe write and stale read
/// happened (and the first zombie action, the late action that usually leads to them), each
/// with who, under which token, when and where it was judged.
pub fn why_lines(s: &Summary) -> Vec<String> {
    let Some(h) = &s.first_harm else {
        return Vec::new();
    };
    let at = |ns: i64| format_ns(ns);
    let mut lines =
        vec!["no two nodes believed at once, yet the client history shows harm:".to_string()];
    if let Some(a) = &h.unsafe_write {
        lines.push(format!(
            "first unsafe write: {}'s write under token {} took effect at {} at {}, after a \
             write under a newer token",
            a.node,
            a.token,
            a.at_node,
            at(a.at_ns)
        ));
    }
    if let Some(a) = &h.zombie_action {
        lines.push(format!(
            "first zombie action: {} {} under token {}, already superseded, at {} (late, \
             harmful only through what it caused)",
            a.node,
            if a.what == "write" {
                "sent a write"
            } else {
                "served a read"
            },
            a.token,
            at(a.at_ns)
        ));
    }
    if let Some(a) = &h.stale_read {
        lines.push(format!(
            "first stale read: {} served a read at {} with a value a write that took effect \
             before the read arrived had replaced (no order of the history explains it)",
            a.node,
            at(a.at_ns)
        ));
    }
    lines
}

/// A run's figures as labelled rows: strategy (with the settings of each node that runs its
/// own), run, overlap, slack, harm, availability and cost, then confirmed reads and clock error
/// when the run has them.
pub(crate) fn figure_rows(s: &Summary) -> Vec<(&'static str, String)> {
    let own = s.node_settings.iter().map(|n| ("own", n.clone()));
    let rows = [
        ("strategy", s.strategy.clone()),
        (
            "run",
            format!(
                "seed {}, {} simulated, {} events{}",
                s.seed,
                format_ns(s.duration_ns),
                s.events,
                if s.truncated {
                    " (TRUNCATED at limits.max_events)"
                } else {
                    ""
                }
            ),
        ),
        (
            "overlap",
            if s.overlap.count == 0 {
                "none".to_string()
            } else {
                format!(
                    "{} interval(s), total {}, max {}",
                    s.overlap.count,
                    format_ns(s.overlap.total_ns),
                    format_ns(s.overlap.max_ns)
                )
            },
        ),
        ("slack", slack_words(s.min_slack_ns)),
        (
            "harm",
            format!(
                "zombie actions {}, stale reads {}, unsafe writes {}, fenced writes {}",
                s.zombie_actions, s.stale_reads, s.unsafe_writes, s.fenced_writes
            ),
        ),
        (
            "availability",
            format!(
                "{:.3}%, served {:.3}% of requests arriving at any contender, longest unavailable {}",
                s.availability * 100.0,
                s.served_ratio * 100.0,
                format_ns(s.max_unavailable_ns)
            ),
        ),
        ("recovery", recovery_words(s)),
        (
            "cost",
            format!(
                "{} grants, {} renewals, {} messages ({} dropped)",
                s.grants,
                s.renewals,
                s.messages.values().sum::<u64>(),
                s.messages_dropped
            ),
        ),
    ];
    let r = &s.requests;
    let reads = r.confirmed_read_wait.map(|w| {
        (
            "reads",
            format!(
                "{} served locally, {} after a confirmation round (waited mean {}, p99 {}, max {})",
                r.reads_served_local,
                r.reads_served_confirmed,
                format_ns(w.mean_ns as i64),
                format_ns(w.p99_ns as i64),
                format_ns(w.max_ns as i64)
            ),
        )
    });
    let clocks = s
        .clock_error
        .as_ref()
        .map(|c| ("clocks", clock_error_words(c)));
    let failover = failover_words(s).map(|w| ("failover", w));
    let (first, rest) = rows.split_at(1);
    let first = first.iter().cloned();
    // The failover goes under the recovery.
    let split = rest
        .iter()
        .position(|r| r.0 == "recovery")
        .map_or(rest.len(), |i| i + 1);
    let (up_to_recovery, after) = rest.split_at(split);
    first
        .chain(own)
        .chain(up_to_recovery.iter().cloned())
        .chain(failover)
        .chain(after.iter().cloned())
        .chain(reads)
        .chain(clocks)
        .collect()
}

/// The last failover that had an outage, split: how long until the winning attempt began,
/// until the new holder believed, and until it served its first operation.
fn failover_words(s: &Summary) -> Option<String> {
    let f = s.last_outage()?;
    let k = s.failovers.iter().position(|g| std::ptr::eq(g, f))?;
    let down = f.serving_from_ns? - f.down_from_ns?;
    let split = match (f.detection_ns, f.election_ns) {
        (Some(d), Some(e)) => format!(
            ": detected after {}, elected or acquired after {}",
            format_ns(d),
            format_ns(e)
        ),
        _ => String::new(),
    };
    let first_op = match f.first_op_ns {
        Some(o) => format!("first operation {} later", format_ns(o)),
        None => "no operation served".to_string(),
    };
    let of = if s.failovers.len() > 1 {
        format!(" (failover {} of {})", k + 1, s.failovers.len())
    } else {
        String::new()
    };
    Some(format!(
        "{} -> {} down {}{split}; {first_op}{of}",
        f.from,
        f.to,
        format_ns(down)
    ))
}

/// How long after the run's last fault (or its start, with none) a holder served again.
fn recovery_words(s: &Summary) -> String {
    let end = format_ns(s.faults_end_ns);
    if s.faults_end_ns == 0 {
        return match s.recovery_ns {
            Some(r) => format!("no fault; a holder served from {}", format_ns(r)),
            None => "no fault; no holder served".to_string(),
        };
    }
    if s.faults_end_ns >= s.duration_ns {
        return format!("the faults last to the run's end ({end})");
    }
    match s.recovery_ns {
        Some(0) => format!("a holder served when the last fault ended ({end})"),
        Some(r) => format!(
            "a holder served {} after the last fault ended ({end})",
            format_ns(r)
        ),
        None => format!("no holder served after the last fault ended ({end})"),
    }
}

/// The first `SHOWN_INTERVALS` overlap intervals of `s`, one a line, and how many more, onto `t`.
fn write_overlaps(t: &mut String, s: &Summary) {
    for (n, i) in s.overlap.intervals.iter().take(SHOWN_INTERVALS).enumerate() {
        let _ = writeln!(
            t,
            "  {:<12} [{}, {})  {}  {}",
            if n == 0 { "overlaps" } else { "" },
            format_ns(i.start_ns),
            format_ns(i.end_ns),
            format_ns(i.end_ns - i.start_ns),
            i.nodes.join(", ")
        );
    }
    if s.overlap.intervals.len() > SHOWN_INTERVALS {
        let _ = writeln!(
            t,
            "  {:<12} ... and {} more (see the report)",
            "",
            s.overlap.intervals.len() - SHOWN_INTERVALS
        );
    }
}

/// The safety slack in words: "closest handover: 40us of slack", or "no handover".
pub fn slack_words(min_slack_ns: Option<i64>) -> String {
    match min_slack_ns {
        None => "no handover".to_string(),
        Some(ns) if ns < 0 => format!(
            "closest handover: {} of slack (the previous holder believed on for {})",
            format_ns(ns),
            format_ns(-ns)
        ),
        Some(ns) => format!("closest handover: {} of slack", format_ns(ns)),
    }
}

/// The safety slack in a table cell: the duration, or "-" when there was no handover.
fn slack_cell(min_slack_ns: Option<i64>) -> String {
    min_slack_ns.map_or_else(|| "-".to_string(), format_ns)
}

/// Renders rows as a table with a header, columns aligned (numbers to the right).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let cols = header.len();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (c, cell) in r.iter().enumerate().take(cols) {
            width[c] = width[c].max(cell.chars().count());
        }
    }
    let numeric = |c: usize| {
        rows.iter().all(|r| {
            r[c].chars()
                .next()
                .is_none_or(|ch| ch.is_ascii_digit() || ch == '-')
        })
    };
    let right: Vec<bool> = (0..cols).map(|c| c > 0 && numeric(c)).collect();
    let mut t = String::new();
    let line = |t: &mut String, cells: &[String]| {
        let mut parts = Vec::new();
        for c in 0..cols {
            let w = width[c];
            parts.push(if right[c] {
                format!("{:>w$}", cells[c])
            } else {
                format!("{:<w$}", cells[c])
            });
        }
        let _ = writeln!(t, "{}", parts.join("  ").trim_end());
    };
    line(
        &mut t,
        &header.iter().map(|h| h.to_string()).collect::<Vec<_>>(),
    );
    line(
        &mut t,
        &width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>(),
    );
    for r in rows {
        line(&mut t, r);
    }
    t
}

/// One row of the verdict table for `run` with several scenarios.
pub fn verdict_row(s: &Summary) -> Vec<String> {
    vec![
        s.scenario.clone(),
        Verdict::of(s).word().to_string(),
        expect_word(s).to_string(),
        s.overlap.count.to_string(),
        format_ns(s.overlap.max_ns),
        slack_cell(s.min_slack_ns),
        s.zombie_actions.to_string(),
        s.stale_reads.to_string(),
        s.unsafe_writes.to_string(),
        s.fenced_writes.to_string(),
        format!("{:.2}%", s.availability * 100.0),
        s.strategy.clone(),
    ]
}

/// The widest strategy cell of a terminal table, in characters (the Markdown report keeps
/// the whole text).
pub const STRATEGY_CELL_MAX: usize = 100;

/// The strategy column of a terminal table, cut to what differs: of the strategies of one
/// protocol (the text before its first parenthesis), the settings every row of that protocol
/// has alike are left out (a `…` says so), and a cell still wider than [`STRATEGY_CELL_MAX`]
/// is cut there. A protocol on one row keeps its settings, cut to the width.
pub fn strategy_cells(specs: &[String]) -> Vec<String> {
    let parsed: Vec<(&str, Vec<&str>)> = specs.iter().map(|s| split_spec(s)).collect();
    parsed
        .iter()
        .zip(specs)
        .map(|((name, args), spec)| {
            let same: Vec<&(&str, Vec<&str>)> = parsed.iter().filter(|(n, _)| n == name).collect();
            let kept: Vec<&str> = if same.len() < 2 {
                args.clone()
            } else {
                args.iter()
                    .copied()
                    .filter(|a| !same.iter().all(|(_, other)| other.contains(a)))
                    .collect()
            };
            let cell = match (args.is_empty(), kept.len() < args.len(), kept.is_empty()) {
                (true, _, _) => spec.to_string(),
                (false, false, _) => format!("{name}({})", kept.join(", ")),
                (false, true, true) => format!("{name}(…)"),
                (false, true, false) => format!("{name}({}, …)", kept.join(", ")),
            };
            cut(&cell, STRATEGY_CELL_MAX)
        })
        .collect()
}

/// `Name(a: 1, b: Fixed("1ms"))` as its name and its top-level settings (`a: 1`, ...).
fn split_spec(spec: &str) -> (&str, Vec<&str>) {
    let spec = spec.trim();
    let Some(open) = spec.find('(') else {
        return (spec, Vec::new());
    };
    let inner = spec[open + 1..]
        .strip_suffix(')')
        .unwrap_or(&spec[open + 1..]);
    let (mut depth, mut quoted, mut from) = (0i32, false, 0);
    let mut args = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                args.push(inner[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    args.push(inner[from..].trim());
    args.retain(|a| !a.is_empty());
    (&spec[..open], args)
}

/// `text` cut to at most `max` characters, its end `…` when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut t: String = text.chars().take(max - 1).collect();
    t.push('…');
    t
}

/// `rows` with column `col` (strategies) cut to what differs ([`strategy_cells`]).
pub fn with_strategies_cut(rows: &[Vec<String>], col: usize) -> Vec<Vec<String>> {
    let specs: Vec<String> = rows.iter().map(|r| r[col].clone()).collect();
    rows.iter()
        .zip(strategy_cells(&specs))
        .map(|(r, cell)| {
            let mut r = r.clone();
            r[col] = cell;
            r
        })
        .collect()
}

pub const VERDICT_HEADER: [&str; 12] = [
    "scenario", "verdict", "expect", "overlaps", "max", "slack", "zombies", "stale", "unsafe",
    "fenced", "avail", "strategy",
];

/// One row of the `compare` table; `origin` says where its strategy came from (the scenario's
/// own, or how its margins were chosen).
pub fn compare_row(s: &Summary, origin: &str) -> Vec<String> {
    vec![
        s.strategy.clone(),
        Verdict::of(s).word().to_string(),
        s.overlap.count.to_string(),
        format_ns(s.overlap.total_ns),
        format_ns(s.overlap.max_ns),
        slack_cell(s.min_slack_ns),
        s.zombie_actions.to_string(),
        s.stale_reads.to_string(),
        s.unsafe_writes.to_string(),
        s.fenced_writes.to_string(),
        format!("{:.2}%", s.availability * 100.0),
        origin.to_string(),
    ]
}

pub const COMPARE_HEADER: [&str; 12] = [
    "strategy", "verdict", "overlaps", "total", "max", "slack", "zombies", "stale", "unsafe",
    "fenced", "avail", "row",
];

/// The longest gap between requests served: "500.6ms, from 500.1ms to 1.0007s".
pub(crate) fn gap_text(g: crate::outcome::GapOut) -> String {
    if g.open {
        return format!(
            "{}, from {} to the run's end at {} (never resumed)",
            format_ns(g.length_ns()),
            format_ns(g.from_ns),
            format_ns(g.to_ns)
        );
    }
    format!(
        "{}, from {} to {}",
        format_ns(g.length_ns()),
        format_ns(g.from_ns),
        format_ns(g.to_ns)
    )
}

/// Whether true time kept within every node's TrueTime interval, in words.
pub(crate) fn clock_error_words(c: &crate::outcome::ClockErrorOut) -> String {
    match &c.node {
        None => "true time stayed inside every node's TT.now() interval".to_string(),
        Some(node) => format!(
            "true time left {node}'s TT.now() interval, by up to {}: the error bound did not hold",
            format_ns(c.max_outside_interval_ns)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// Two Chubby rows differ in `lock_delay` only: each keeps that and says the rest is left
    /// out; a protocol on one row keeps its settings; a name alone stays as it is; a quoted
    /// comma or a nested list is not a split.
    #[test]
    fn strategy_cells_keep_what_differs() {
        let cells = strategy_cells(&specs(&[
            r#"ChubbySession(grace: "45s", lock_delay: "0s", keepalive: Held(every: "1s"))"#,
            r#"ChubbySession(grace: "45s", lock_delay: "60s", keepalive: Held(every: "1s"))"#,
            r#"TwoSided(holder_margin: "1ms", grantor_margin: "0s")"#,
            "CachedBool",
            "TwoSided()",
            r#"Redlock(masters: ["m1", "m2"], note: "a, b")"#,
            r#"Redlock(masters: ["m1", "m2"], note: "a, c")"#,
        ]));
        assert_eq!(
            cells,
            [
                r#"ChubbySession(lock_delay: "0s", …)"#,
                r#"ChubbySession(lock_delay: "60s", …)"#,
                r#"TwoSided(holder_margin: "1ms", grantor_margin: "0s")"#,
                "CachedBool",
                "TwoSided()",
                r#"Redlock(note: "a, b", …)"#,
                r#"Redlock(note: "a, c", …)"#,
            ]
        );
        // Alike in everything: the name and that something was left out.
        let same = strategy_cells(&specs(&["TwoSided(a: 1)", "TwoSided(a: 1)"]));
        assert_eq!(same, ["TwoSided(…)", "TwoSided(…)"]);
    }

    /// A cell wider than the limit is cut to it, its last character `…`.
    #[test]
    fn strategy_cells_are_cut_to_the_width() {
        let long = format!("K8s(a: \"{}\")", "x".repeat(120));
        let cell = &strategy_cells(&[long])[0];
        assert_eq!(cell.chars().count(), STRATEGY_CELL_MAX);
        assert!(cell.ends_with('…') && cell.starts_with("K8s(a: \"xxx"));
    }
}
