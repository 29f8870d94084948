//! The summary tables of the HTML pages: one row per run (`run` with several scenarios, as an
//! index linking each scenario's page) or per strategy (`compare`), each cell shown as the
//! terminal shows it and sorted by the exact figure under it.

use super::{Row, SortKey, Table};
use crate::outcome::{Summary, Verdict};
use crate::report::text;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// What a path segment keeps as it is: letters, digits and `-._~` (RFC 3986's unreserved).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The relative link to the page of the report directory `dir_name` beside the index.
pub fn link_to(dir_name: &str) -> String {
    format!("{}/report.html", utf8_percent_encode(dir_name, SEGMENT))
}

fn num(x: impl Into<f64>) -> SortKey {
    SortKey::Number(x.into())
}

fn int(x: u64) -> SortKey {
    // Counts stay far below 2^53, where every integer is exact.
    SortKey::Number(x as f64)
}

fn ns(x: i64) -> SortKey {
    SortKey::Number(x as f64)
}

fn slack(s: &Summary) -> SortKey {
    s.min_slack_ns.map_or(SortKey::None, ns)
}

/// The sort keys of the columns both tables share, from slack to availability.
fn slack_to_availability(s: &Summary) -> [SortKey; 6] {
    [
        slack(s),
        int(s.zombie_actions),
        int(s.stale_reads),
        int(s.unsafe_writes),
        int(s.fenced_writes),
        num(s.availability),
    ]
}

/// The verdict table of several runs (the terminal's columns), each scenario linking to its
/// page.
pub fn verdict_table(summaries: &[Summary]) -> Table {
    let columns: Vec<(&str, bool)> = text::VERDICT_HEADER
        .iter()
        .map(|&c| {
            (
                c,
                !matches!(c, "scenario" | "verdict" | "expect" | "strategy"),
            )
        })
        .collect();
    let mut t = Table::new(&columns);
    for s in summaries {
        t.rows.push(Row {
            cells: text::verdict_row(s),
            sort: [
                SortKey::Text(s.scenario.clone()),
                SortKey::Text(Verdict::of(s).word().to_string()),
                SortKey::Text(text::expect_word(s).to_string()),
                int(s.overlap.count),
                ns(s.overlap.max_ns),
            ]
            .into_iter()
            .chain(slack_to_availability(s))
            .chain([SortKey::Text(s.strategy.clone())])
            .collect(),
            link: Some(link_to(&s.scenario)),
            verdict: Some(Verdict::of(s)),
        });
    }
    t
}

/// The table of `compare`: one row per strategy, with where its strategy came from.
pub fn compare_table(rows: &[(&Summary, &str)]) -> Table {
    let columns: Vec<(&str, bool)> = text::COMPARE_HEADER
        .iter()
        .map(|&c| (c, !matches!(c, "strategy" | "verdict" | "row")))
        .collect();
    let mut t = Table::new(&columns);
    for &(s, origin) in rows {
        t.rows.push(Row {
            cells: text::compare_row(s, origin),
            sort: [
                SortKey::Text(s.strategy.clone()),
                SortKey::Text(Verdict::of(s).word().to_string()),
                int(s.overlap.count),
                ns(s.overlap.total_ns),
                ns(s.overlap.max_ns),
            ]
            .into_iter()
            .chain(slack_to_availability(s))
            .chain([SortKey::Text(origin.to_string())])
            .collect(),
            link: None,
            verdict: Some(Verdict::of(s)),
        });
    }
    t
}

/// The table of a CSV file (its first record the header) with only the columns `keep` names
/// (all when empty), in the file's order: a column whose every non-empty cell is a number
/// sorts by number.
pub fn csv_table(csv_bytes: &[u8], keep: &[&str]) -> Result<Table, csv::Error> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(csv_bytes);
    let header = r.headers()?.clone();
    let chosen: Vec<usize> = (0..header.len())
        .filter(|&i| keep.is_empty() || keep.contains(&&header[i]))
        .collect();
    let records: Vec<csv::StringRecord> = r.records().collect::<Result<_, _>>()?;
    let numeric = |i: usize| {
        records
            .iter()
            .all(|rec| rec[i].is_empty() || rec[i].parse::<f64>().is_ok())
    };
    let columns: Vec<(&str, bool)> = chosen.iter().map(|&i| (&header[i], numeric(i))).collect();
    let mut t = Table::new(&columns);
    for rec in &records {
        let sort = chosen
            .iter()
            .zip(&columns)
            .map(|(&i, &(_, numeric))| match rec[i].parse::<f64>() {
                _ if rec[i].is_empty() => SortKey::None,
                Ok(x) if numeric => SortKey::Number(x),
                _ => SortKey::Text(rec[i].to_string()),
            })
            .collect();
        t.rows.push(Row {
            cells: chosen.iter().map(|&i| rec[i].to_string()).collect(),
            sort,
            link: None,
            verdict: None,
        });
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns kept in the file's order; a column with a text cell sorts as text, an empty
    /// cell sorts last.
    #[test]
    fn a_csv_becomes_a_sortable_table() {
        let csv = b"lease,runs,note,min_slack_ns\n10s,5,a,-3\n1s,7,2,\n";
        let t = csv_table(csv, &["lease", "runs", "min_slack_ns"]).unwrap();
        let cols: Vec<(&str, bool)> = t
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.numeric))
            .collect();
        assert_eq!(
            cols,
            [("lease", false), ("runs", true), ("min_slack_ns", true)]
        );
        assert_eq!(t.rows[1].cells, ["1s", "7", ""]);
        assert!(matches!(t.rows[0].sort[2], SortKey::Number(x) if x == -3.0));
        assert!(matches!(t.rows[1].sort[2], SortKey::None));
        assert!(matches!(&t.rows[1].sort[0], SortKey::Text(x) if x == "1s"));
        // Every column when none is named; "note" has a text cell ("a"), so it sorts as text.
        let all = csv_table(csv, &[]).unwrap();
        assert!(!all.columns[2].numeric);
    }

    /// Every row has a cell and a sort key per column, in both tables, and the numbers sort by
    /// the exact figure (the max overlap in ns, not its text).
    #[test]
    fn each_column_has_its_cell_and_its_key() {
        let text = crate::scenario::library::text("q4-gc-pause-cached-bool").unwrap();
        let s = crate::run("t", &crate::Scenario::from_ron(text).unwrap())
            .unwrap()
            .summary;
        let v = verdict_table(std::slice::from_ref(&s));
        let c = compare_table(&[(&s, "own")]);
        for t in [&v, &c] {
            assert_eq!(t.rows[0].cells.len(), t.columns.len());
            assert_eq!(t.rows[0].sort.len(), t.columns.len());
        }
        // Q4's overlap is 3.996 s: the "max" column sorts on 3,996,000,000.
        assert!(matches!(v.rows[0].sort[4], SortKey::Number(x) if x == 3_996_000_000.0));
        assert!(matches!(&c.rows[0].sort[11], SortKey::Text(o) if o == "own"));
    }

    /// A name with a space, `#`, `%`, `?` and a non-ASCII letter links to its own directory.
    #[test]
    fn a_link_survives_any_name() {
        assert_eq!(link_to("q4-gc.pause_x~"), "q4-gc.pause_x~/report.html");
        assert_eq!(link_to("a b#c%d?é"), "a%20b%23c%25d%3F%C3%A9/report.html");
    }
}
