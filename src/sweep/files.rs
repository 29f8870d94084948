//! The sweep's CSV files: `results.csv` (one row per cell), `runs.csv` (one row per run) and
//! `partial-I-of-K.csv` (the runs of one shard, headed by the sweep's definition).
//!
//! Column names and order are part of the product contract: the varied parameters
//! first, named and valued as given, then the fixed figures. Floats that are merged later
//! (a run's availability) are written in Rust's shortest round-trip form, so that a partial read
//! back gives the same bits and a merge the same bytes as an unsharded sweep.

use super::aggregate::{percentiles, CellStats, RunRow};
use super::grid::{Grid, SweepSpec};

/// The fixed columns of `results.csv` after the parameters.
pub const RESULT_COLUMNS: [&str; 44] = [
    "runs",
    "overlap_runs",
    "handover_runs",
    "p_overlap",
    "p_overlap_lo",
    "p_overlap_hi",
    "mean_overlap_ns",
    "max_overlap_ns",
    "mean_availability",
    "zombie_actions",
    "stale_reads",
    "unsafe_writes",
    "fenced_writes",
    "mean_max_unavailable_ns",
    "max_unavailable_ns",
    "events",
    "unsafe_runs",
    "min_slack_ns",
    "recovered_runs",
    "median_recovery_ns",
    "p90_recovery_ns",
    "p99_recovery_ns",
    "max_recovery_ns",
    "failover_runs",
    "median_detection_ns",
    "p90_detection_ns",
    "p99_detection_ns",
    "max_detection_ns",
    "median_election_ns",
    "p90_election_ns",
    "p99_election_ns",
    "max_election_ns",
    "median_first_op_ns",
    "p90_first_op_ns",
    "p99_first_op_ns",
    "max_first_op_ns",
    "median_read_gap_ns",
    "p90_read_gap_ns",
    "p99_read_gap_ns",
    "max_read_gap_ns",
    "median_write_gap_ns",
    "p90_write_gap_ns",
    "p99_write_gap_ns",
    "max_write_gap_ns",
];

/// The per-run figures of `runs.csv` after `run, cell, seed` and the parameters.
pub const RUN_COLUMNS: [&str; 18] = [
    "overlap_count",
    "overlap_total_ns",
    "overlap_max_ns",
    "availability",
    "max_unavailable_ns",
    "zombie_actions",
    "stale_reads",
    "unsafe_writes",
    "fenced_writes",
    "events",
    "min_slack_ns",
    "faults_end_ns",
    "recovery_ns",
    "detection_ns",
    "election_ns",
    "first_op_ns",
    "read_gap_ns",
    "write_gap_ns",
];

/// First-line marker of a partial file.
const PARTIAL_MARK: &str = "#leasesim-sweep-partial ";

fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new())
}

fn finish(w: csv::Writer<Vec<u8>>) -> Vec<u8> {
    w.into_inner().expect("writing to memory cannot fail")
}

/// `results.csv`: one row per cell, in grid order.
pub fn results_csv(grid: &Grid, stats: &[CellStats]) -> Vec<u8> {
    let mut w = writer();
    let mut header: Vec<&str> = grid.params.iter().map(|p| p.name.as_str()).collect();
    header.extend(RESULT_COLUMNS);
    w.write_record(&header).expect("memory");
    for (cell, c) in stats.iter().enumerate() {
        let (lo, hi) = c.wilson();
        let mut row: Vec<String> = grid.values(cell).iter().map(|v| v.to_string()).collect();
        row.extend([
            c.runs.to_string(),
            c.overlap_runs.to_string(),
            c.handover_runs.to_string(),
            format!("{:.6}", c.p_overlap()),
            format!("{lo:.6}"),
            format!("{hi:.6}"),
            c.mean_overlap_ns().to_string(),
            c.max_overlap_ns.to_string(),
            format!("{:.9}", c.mean_availability()),
            c.zombie_actions.to_string(),
            c.stale_reads.to_string(),
            c.unsafe_writes.to_string(),
            c.fenced_writes.to_string(),
            c.mean_max_unavailable_ns().to_string(),
            c.max_unavailable_ns.to_string(),
            c.events.to_string(),
            c.unsafe_runs.to_string(),
            ns_field(c.min_slack_ns),
            c.recoveries_ns.len().to_string(),
        ]);
        match c.recovery_percentiles([50, 90, 99, 100]) {
            Some(ps) => row.extend(ps.map(|p| p.to_string())),
            None => row.extend(std::iter::repeat_n(String::new(), 4)),
        }
        row.push(c.detections_ns.len().to_string());
        let parts = [&c.detections_ns, &c.elections_ns, &c.first_ops_ns];
        for values in parts.into_iter().chain([&c.read_gaps_ns, &c.write_gaps_ns]) {
            match percentiles(values, [50, 90, 99, 100]) {
                Some(ps) => row.extend(ps.map(|p| p.to_string())),
                None => row.extend(std::iter::repeat_n(String::new(), 4)),
            }
        }
        w.write_record(&row).expect("memory");
    }
    finish(w)
}

/// The header of `runs.csv`: `run, cell, seed`, the parameters, then [`RUN_COLUMNS`].
fn runs_header(grid: &Grid) -> Vec<&str> {
    let mut header = vec!["run", "cell", "seed"];
    header.extend(grid.params.iter().map(|p| p.name.as_str()));
    header.extend(RUN_COLUMNS);
    header
}

/// The fields of one run's `runs.csv` row.
fn run_fields(grid: &Grid, r: &RunRow) -> Vec<String> {
    let (cell, _) = grid.split(r.index);
    let mut row = vec![
        r.index.to_string(),
        cell.to_string(),
        grid.seed_of(r.index).to_string(),
    ];
    row.extend(grid.values(cell).iter().map(|v| v.to_string()));
    row.extend([
        r.overlap_count.to_string(),
        r.overlap_total_ns.to_string(),
        r.overlap_max_ns.to_string(),
        r.availability.to_string(),
        r.max_unavailable_ns.to_string(),
        r.zombie_actions.to_string(),
        r.stale_reads.to_string(),
        r.unsafe_writes.to_string(),
        r.fenced_writes.to_string(),
        r.events.to_string(),
        ns_field(r.min_slack_ns),
        r.faults_end_ns.to_string(),
        ns_field(r.recovery_ns),
        ns_field(r.detection_ns),
        ns_field(r.election_ns),
        ns_field(r.first_op_ns),
        ns_field(r.read_gap_ns),
        ns_field(r.write_gap_ns),
    ]);
    row
}

/// Nanoseconds as a CSV field (a safety slack, a recovery), or empty when there are none.
fn ns_field(ns: Option<i64>) -> String {
    ns.map(|ns| ns.to_string()).unwrap_or_default()
}

/// The header line of `runs.csv`, with its newline, as [`RunsWriter`] writes it.
pub fn runs_header_line(grid: &Grid) -> Vec<u8> {
    let mut w = writer();
    w.write_record(runs_header(grid)).expect("memory");
    finish(w)
}

/// One run's line of `runs.csv`, with its newline, as [`RunsWriter`] writes it.
pub fn run_line(grid: &Grid, r: &RunRow) -> Vec<u8> {
    let mut w = writer();
    w.write_record(run_fields(grid, r)).expect("memory");
    finish(w)
}

/// Writes runs as CSV rows (`runs.csv` and the body of a partial), header first, to any
/// writer: a file in the report's staging directory, so that rows stream to disk as runs finish.
pub struct RunsWriter<'g, W: std::io::Write> {
    grid: &'g Grid,
    w: csv::Writer<W>,
    error: Option<csv::Error>,
}

impl<'g, W: std::io::Write> RunsWriter<'g, W> {
    pub fn new(grid: &'g Grid, out: W) -> RunsWriter<'g, W> {
        let mut w = RunsWriter::continuing(grid, out);
        w.error = w.w.write_record(runs_header(grid)).err();
        w
    }

    /// A writer that appends rows to a file that has its header already (a resumed sweep).
    pub fn continuing(grid: &'g Grid, out: W) -> RunsWriter<'g, W> {
        let w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(out);
        RunsWriter {
            grid,
            w,
            error: None,
        }
    }

    pub fn push(&mut self, r: &RunRow) {
        if self.error.is_some() {
            return;
        }
        self.error = self.w.write_record(run_fields(self.grid, r)).err();
    }

    /// Pushes the rows written so far through to the writer, and flushes it.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if let Some(e) = &self.error {
            return Err(std::io::Error::other(e.to_string()));
        }
        self.w.flush()
    }

    /// Flushes and returns the writer; the first write error, if any.
    pub fn finish(self) -> std::io::Result<W> {
        if let Some(e) = self.error {
            return Err(std::io::Error::other(e));
        }
        self.w
            .into_inner()
            .map_err(|e| std::io::Error::other(e.to_string()))
    }
}

/// The name of shard `i` of `k`'s file.
pub fn partial_name(i: u64, k: u64) -> String {
    format!("partial-{i}-of-{k}.csv")
}

#[derive(serde::Serialize, serde::Deserialize)]
struct PartialHead {
    shard: u64,
    of: u64,
    spec: SweepSpec,
}

/// The first line of a partial file: the marker and the sweep's definition as JSON.
pub fn partial_head(spec: &SweepSpec, shard: u64, of: u64) -> String {
    let head = PartialHead {
        shard,
        of,
        spec: spec.clone(),
    };
    format!(
        "{PARTIAL_MARK}{}\n",
        serde_json::to_string(&head).expect("a sweep definition serializes")
    )
}

/// A partial file read back.
pub struct Partial {
    pub shard: u64,
    pub of: u64,
    pub spec: SweepSpec,
    /// The definition's JSON as written, to compare partials exactly.
    pub spec_json: String,
    /// The CSV body after the first line.
    pub body: String,
}

/// Splits a partial file into its definition and its CSV body.
pub fn read_partial(source: &str, text: &str) -> Result<Partial, String> {
    let (first, body) = text.split_once('\n').unwrap_or((text, ""));
    let json = first.strip_prefix(PARTIAL_MARK).ok_or_else(|| {
        format!(
            "{source}: not a leasesim sweep partial (no `{}` first line)",
            PARTIAL_MARK.trim()
        )
    })?;
    let head: PartialHead = serde_json::from_str(json)
        .map_err(|e| format!("{source}: the sweep definition on line 1 does not read: {e}"))?;
    let spec_json = serde_json::to_string(&head.spec).expect("serializes");
    Ok(Partial {
        shard: head.shard,
        of: head.of,
        spec: head.spec,
        spec_json,
        body: body.to_string(),
    })
}

/// The runs of a partial's body, checked against `grid`.
pub fn parse_runs(source: &str, grid: &Grid, body: &str) -> Result<Vec<RunRow>, String> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(body.as_bytes());
    let mut rows = Vec::new();
    for (k, rec) in r.records().enumerate() {
        let line = k + 3; // the definition line and the header come first
        let rec = rec.map_err(|e| format!("{source}:{line}: {e}"))?;
        rows.push(parse_run(source, line, grid, &rec)?);
    }
    Ok(rows)
}

/// One line of `runs.csv` (without its newline) read back, checked against `grid`.
pub fn parse_run_line(
    source: &str,
    line: usize,
    grid: &Grid,
    text: &[u8],
) -> Result<RunRow, String> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text);
    let mut rec = csv::StringRecord::new();
    match r.read_record(&mut rec) {
        Ok(true) => parse_run(source, line, grid, &rec),
        Ok(false) => Err(format!("{source}:{line}: empty line")),
        Err(e) => Err(format!("{source}:{line}: {e}")),
    }
}

fn parse_run(
    source: &str,
    line: usize,
    grid: &Grid,
    rec: &csv::StringRecord,
) -> Result<RunRow, String> {
    let n_params = grid.params.len();
    let want = 3 + n_params + RUN_COLUMNS.len();
    if rec.len() != want {
        return Err(format!(
            "{source}:{line}: {} columns, expected {want}",
            rec.len()
        ));
    }
    let int = |i: usize| -> Result<i64, String> {
        rec[i].parse::<i64>().map_err(|_| {
            format!(
                "{source}:{line}: column {} is not an integer: {:?}",
                i + 1,
                &rec[i]
            )
        })
    };
    let uint = |i: usize| -> Result<u64, String> {
        rec[i].parse::<u64>().map_err(|_| {
            format!(
                "{source}:{line}: column {} is not a count: {:?}",
                i + 1,
                &rec[i]
            )
        })
    };
    // An integer, or nothing (a run without a handover, a recovery or a failover).
    let opt = |i: usize| -> Result<Option<i64>, String> {
        match &rec[i] {
            "" => Ok(None),
            _ => int(i).map(Some),
        }
    };
    let index = uint(0)?;
    let cell = uint(1)? as usize;
    let seed = uint(2)?;
    if grid.index_of(cell, seed) != Some(index) {
        return Err(format!(
            "{source}:{line}: run {index} (cell {cell}, seed {seed}) is not a run of this sweep"
        ));
    }
    let m = 3 + n_params;
    let availability = rec[m + 3]
        .parse::<f64>()
        .map_err(|_| format!("{source}:{line}: availability is not a number"))?;
    Ok(RunRow {
        index,
        overlap_count: uint(m)?,
        overlap_total_ns: int(m + 1)?,
        overlap_max_ns: int(m + 2)?,
        availability,
        max_unavailable_ns: int(m + 4)?,
        zombie_actions: uint(m + 5)?,
        stale_reads: uint(m + 6)?,
        unsafe_writes: uint(m + 7)?,
        fenced_writes: uint(m + 8)?,
        events: uint(m + 9)?,
        min_slack_ns: opt(m + 10)?,
        faults_end_ns: int(m + 11)?,
        recovery_ns: opt(m + 12)?,
        detection_ns: opt(m + 13)?,
        election_ns: opt(m + 14)?,
        first_op_ns: opt(m + 15)?,
        read_gap_ns: opt(m + 16)?,
        write_gap_ns: opt(m + 17)?,
    })
}
