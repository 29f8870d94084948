//! A sweep's `report.md`, and the analyses it shares with the terminal summary: the best safe
//! parameter sets and the measured safety boundary next to the analytic bound epsilon >= T*rho.
//!
//! The report holds nothing that depends on how the sweep was run (threads, shards, wall time),
//! so that a merged sweep's report is byte-identical to an unsharded one's.

use super::aggregate::CellStats;
use super::grid::Grid;
use super::path::Role;
use std::fmt::Write;

/// A duration in ns, short and readable (`4.998 ms`, `10 s`, `0`).
pub fn human_ns(ns: f64) -> String {
    let a = ns.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        trim(format!("{:.3}", ns / 1e3)) + " µs"
    } else if a < 1e9 {
        trim(format!("{:.3}", ns / 1e6)) + " ms"
    } else {
        trim(format!("{:.3}", ns / 1e9)) + " s"
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Whether a parameter is one the user chooses (the lease and the strategy: `T`, `epsilon`,
/// `lease.*`, `strategy.*`) rather than part of the environment the configuration must survive
/// (rho, clocks, network, workload, nodes, faults).
pub fn chosen(p: &super::grid::Param) -> bool {
    match p.role {
        Role::T | Role::Epsilon => true,
        Role::Rho => false,
        Role::Other => matches!(
            p.path.segs.first(),
            Some(super::path::Seg::Field(f)) if f == "lease" || f == "strategy"
        ),
    }
}

/// One setting of the parameters the user chooses, over every environment the sweep tried.
#[derive(Clone, Debug)]
pub struct Choice {
    /// Its cells, one per combination of environment values.
    pub cells: Vec<usize>,
    /// `T=10s, epsilon=50ms`, or `the scenario's own settings` when nothing chosen was varied.
    pub label: String,
    /// The lowest mean availability over its cells: what the worst environment tried gives.
    pub worst_availability: f64,
    /// The highest P(unsafe) over its cells: the worst environment's risk.
    pub worst_p_unsafe: f64,
    /// Runs over all its cells.
    pub runs: u64,
    /// Whether some run of some cell overlapped.
    pub overlapped: bool,
}

impl Choice {
    /// Safe in every run of every environment tried.
    pub fn safe(&self, stats: &[CellStats]) -> bool {
        self.cells.iter().all(|&c| stats[c].safe())
    }
}

/// The key of `cell` among the choices: its value index for each chosen parameter (`keep`).
fn choice_key(idx: &[usize], keep: &[bool]) -> Vec<usize> {
    idx.iter()
        .zip(keep)
        .filter(|(_, &k)| k)
        .map(|(&i, _)| i)
        .collect()
}

/// Every setting of the parameters the user chooses, in grid order, each over every
/// environment the sweep tried, with its worst case there (the lowest availability, the highest
/// P(unsafe)). A sweep that varies no chosen parameter has one choice, the scenario's own
/// settings.
pub fn choices(grid: &Grid, stats: &[CellStats]) -> Vec<Choice> {
    let keep: Vec<bool> = grid.params.iter().map(chosen).collect();
    let mut choices: Vec<Choice> = Vec::new();
    let mut at: std::collections::BTreeMap<Vec<usize>, usize> = Default::default();
    for (cell, st) in stats.iter().enumerate().take(grid.cell_count()) {
        let idx = grid.value_indices(cell);
        let c = *at.entry(choice_key(&idx, &keep)).or_insert_with(|| {
            let label = grid
                .params
                .iter()
                .zip(&idx)
                .zip(&keep)
                .filter(|(_, &k)| k)
                .map(|((p, &i), _)| format!("{}={}", p.name, p.values[i]))
                .collect::<Vec<_>>()
                .join(", ");
            choices.push(Choice {
                cells: Vec::new(),
                label: if label.is_empty() {
                    "the scenario's own settings".into()
                } else {
                    label
                },
                worst_availability: f64::INFINITY,
                worst_p_unsafe: 0.0,
                runs: 0,
                overlapped: false,
            });
            choices.len() - 1
        });
        let ch = &mut choices[c];
        ch.cells.push(cell);
        ch.worst_availability = ch.worst_availability.min(st.mean_availability());
        ch.worst_p_unsafe = ch.worst_p_unsafe.max(st.p_unsafe());
        ch.runs += st.runs;
        ch.overlapped |= st.overlap_runs > 0;
    }
    choices
}

/// The settings the user chooses that were safe (no overlap, no harm) in every run of every
/// environment tried, best worst-case availability first, at most `n`. A sweep over rho alone
/// has one choice, the scenario's own settings.
pub fn best_safe(grid: &Grid, stats: &[CellStats], n: usize) -> Vec<Choice> {
    let mut safe: Vec<Choice> = choices(grid, stats)
        .into_iter()
        .filter(|ch| ch.safe(stats))
        .collect();
    safe.sort_by(|a, b| {
        b.worst_availability
            .total_cmp(&a.worst_availability)
            .then(a.cells[0].cmp(&b.cells[0]))
    });
    safe.truncate(n);
    safe
}

/// Whether the sweep varied some parameter the user chooses (so there is a choice to make).
pub fn varies_a_choice(grid: &Grid) -> bool {
    grid.params.iter().any(|p| chosen(p) && p.values.len() > 1)
}

/// The environment a sweep varied, in words (`rho=100, 200`), or `None` when it varied none.
pub fn environment(grid: &Grid) -> Option<String> {
    let env: Vec<String> = grid
        .params
        .iter()
        .filter(|p| !chosen(p))
        .map(|p| format!("{}={}", p.name, p.values.join(", ")))
        .collect();
    (!env.is_empty()).then(|| env.join("; "))
}

/// One group of cells that differ only in epsilon, with the measured and the analytic boundary.
#[derive(Clone, Debug)]
pub struct Boundary {
    /// The other parameters' values (`T=10s, rho=100`); empty when epsilon is the only one.
    pub label: String,
    pub t_ns: i64,
    pub rho_eff_ppm: f64,
    /// T * rho_eff in ns.
    pub bound_ns: f64,
    /// The largest epsilon (ns) at which some run overlapped.
    pub last_overlap_eps_ns: Option<i64>,
    /// The smallest epsilon (ns) above all overlapping ones.
    pub first_safe_eps_ns: Option<i64>,
    /// What the group says of the bound.
    pub verdict: BoundVerdict,
}

/// What a group of cells that differ only in epsilon says of the bound epsilon >= T * rho.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundVerdict {
    /// Some epsilon at or above the bound was run, and none of those overlapped.
    Holds,
    /// Some epsilon at or above the bound overlapped.
    Violated,
    /// No epsilon at or above the bound was run: the group says nothing of it.
    Untested,
}

impl BoundVerdict {
    pub fn word(self) -> &'static str {
        match self {
            BoundVerdict::Holds => "holds",
            BoundVerdict::Violated => "**violated**",
            BoundVerdict::Untested => "untested (no epsilon at or above it was run)",
        }
    }
}

/// Whether the analytic bound applies: the strategy has a holder margin and T, rho or epsilon
/// is varied.
pub fn bound_applies(grid: &Grid) -> bool {
    grid.facts.iter().all(|f| f.eps_ns.is_some())
        && [Role::T, Role::Rho, Role::Epsilon]
            .iter()
            .any(|&r| grid.param_with(r).is_some())
}

/// Groups cells by every parameter but epsilon and finds each group's boundary.
pub fn boundaries(grid: &Grid, stats: &[CellStats]) -> Vec<Boundary> {
    let eps_param = grid.param_with(Role::Epsilon);
    let mut groups: Vec<(Vec<usize>, Vec<usize>)> = Vec::new(); // (key, cells)
    let mut at: std::collections::BTreeMap<Vec<usize>, usize> = Default::default();
    for cell in 0..grid.cell_count() {
        let mut key = grid.value_indices(cell);
        if let Some(e) = eps_param {
            key.remove(e);
        }
        match at.get(&key) {
            Some(&g) => groups[g].1.push(cell),
            None => {
                at.insert(key.clone(), groups.len());
                groups.push((key, vec![cell]));
            }
        }
    }
    groups
        .into_iter()
        .map(|(_, mut cells)| {
            let first = cells[0];
            let f = grid.facts[first];
            cells.sort_by_key(|&c| (grid.facts[c].eps_ns, c));
            let eps = |c: usize| grid.facts[c].eps_ns.unwrap_or(0);
            let last_over = cells
                .iter()
                .filter(|&&c| stats[c].overlap_runs > 0)
                .map(|&c| eps(c))
                .max();
            let first_safe = cells
                .iter()
                .map(|&c| eps(c))
                .filter(|&e| last_over.is_none_or(|l| e > l))
                .min();
            let bound_ns = f.drift_margin_ns();
            let values = grid.values(first);
            let label = grid
                .params
                .iter()
                .zip(values)
                .enumerate()
                .filter(|(k, _)| Some(*k) != eps_param)
                .map(|(_, (p, v))| format!("{}={v}", p.name))
                .collect::<Vec<_>>()
                .join(", ");
            Boundary {
                label,
                t_ns: f.t_ns,
                rho_eff_ppm: f.rho_eff_ppm,
                bound_ns,
                last_overlap_eps_ns: last_over,
                first_safe_eps_ns: first_safe,
                verdict: if cells.iter().all(|&c| (eps(c) as f64) < bound_ns) {
                    BoundVerdict::Untested
                } else if last_over.is_some_and(|l| (l as f64) >= bound_ns) {
                    BoundVerdict::Violated
                } else {
                    BoundVerdict::Holds
                },
            }
        })
        .collect()
}

/// A chart the report links to, or one it skipped and why.
pub struct ChartNote {
    /// File stem (`p_overlap_heatmap`): `.png` and `.svg` exist.
    pub file: String,
    pub caption: String,
}

/// The shell command that reproduces the sweep (without `--jobs` or `--shard`, which do not
/// change the results), as `program` (the command line's name, such as `leasesim`) runs it.
pub fn rerun_command(program: &str, grid: &Grid) -> String {
    let mut cmd = format!("{program} sweep {}", shell(&grid.spec.source));
    for (name, values) in &grid.spec.vary {
        cmd.push_str(&format!(
            " --vary {}",
            shell(&format!("{name}={}", values.join(",")))
        ));
    }
    cmd.push_str(&format!(
        " --seeds {} --seed {}",
        grid.spec.seeds, grid.spec.scenario.seed
    ));
    cmd
}

fn shell(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-/=,:+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Renders `report.md`; its commands to rerun or shard the sweep name `program`.
pub fn render(
    grid: &Grid,
    stats: &[CellStats],
    charts: &[ChartNote],
    skipped: &[String],
    program: &str,
) -> String {
    let mut m = String::new();
    write_header(&mut m, grid);
    write_best(&mut m, grid, stats);
    write_bound(&mut m, grid, stats);
    write_results(&mut m, grid, stats);
    write_charts(&mut m, charts, skipped);
    write_files(&mut m, grid, program);
    m
}

/// Writes the title, the run counts and the table of swept parameters.
fn write_header(m: &mut String, grid: &Grid) {
    let spec = &grid.spec;
    let s = &spec.scenario;
    let _ = writeln!(m, "# {}: sweep\n", spec.name);
    if !s.description.is_empty() {
        let _ = writeln!(m, "{}\n", s.description);
    }
    let _ = writeln!(
        m,
        "{} cells x {} seeds = {} runs (seeds {}..={} in every cell), strategy `{}`, {} simulated per run. \
         Expectations of the scenario are not checked in a sweep.\n",
        grid.cell_count(),
        spec.seeds,
        grid.run_count(),
        s.seed,
        s.seed.wrapping_add(spec.seeds - 1),
        s.strategy.to_ron(),
        s.duration
    );
    let _ = writeln!(m, "| parameter | field | values |\n|---|---|---|");
    for p in &grid.params {
        let _ = writeln!(
            m,
            "| `{}` | `{}` | {} |",
            p.name,
            p.path,
            p.values.join(", ")
        );
    }
}

/// Writes the best safe parameter sets, or the least unsafe cells when none was safe.
fn write_best(m: &mut String, grid: &Grid, stats: &[CellStats]) {
    let _ = writeln!(m, "\n## Best parameter sets\n");
    let best = best_safe(grid, stats, 5);
    let env = environment(grid);
    if best.is_empty() {
        let _ = writeln!(
            m,
            "No setting was safe{}: every one had an overlap or harm in some run. The least \
             unsafe cells:\n",
            env.as_ref().map_or(String::new(), |e| format!(
                " in every environment tried ({e})"
            ))
        );
        let mut order: Vec<usize> = (0..stats.len()).collect();
        order.sort_by(|&a, &b| {
            stats[a]
                .p_overlap()
                .total_cmp(&stats[b].p_overlap())
                .then(stats[a].max_overlap_ns.cmp(&stats[b].max_overlap_ns))
                .then(a.cmp(&b))
        });
        for &c in order.iter().take(3) {
            let _ = writeln!(
                m,
                "- {}: P(overlap) {:.3}, max overlap {}, mean availability {:.4}%",
                grid.label(c),
                stats[c].p_overlap(),
                human_ns(stats[c].max_overlap_ns as f64),
                stats[c].mean_availability() * 100.0
            );
        }
    } else {
        let _ = writeln!(
            m,
            "Settings of the lease and the strategy (what you choose) that were safe (no \
             overlap, zombie action, stale read or unsafe write) in every run{}, by their worst \
             mean availability:\n",
            env.as_ref().map_or(String::new(), |e| format!(
                " of every environment tried ({e})"
            ))
        );
        for (k, ch) in best.iter().enumerate() {
            let worst_unavailable = ch
                .cells
                .iter()
                .map(|&c| stats[c].mean_max_unavailable_ns())
                .max()
                .unwrap_or(0);
            let _ = writeln!(
                m,
                "{}. **{}**: mean availability {:.4}% at worst, longest unavailable window {} \
                 (mean, at worst), 0 of {} runs overlapped (P(overlap) <= {:.3} at 95%)",
                k + 1,
                ch.label,
                ch.worst_availability * 100.0,
                human_ns(worst_unavailable as f64),
                ch.runs,
                super::aggregate::wilson(0, ch.runs).1
            );
        }
    }
}

/// Writes, where the bound applies to the grid, the section comparing the analytic bound
/// epsilon >= T * rho with the measured boundary.
fn write_bound(m: &mut String, grid: &Grid, stats: &[CellStats]) {
    if bound_applies(grid) {
        let _ = writeln!(m, "\n## The analytic bound: epsilon >= T * rho\n");
        let _ = writeln!(
            m,
            "The holder stops epsilon before T on its own clock and the grantor waits T on its \
             own; while the lease runs their clocks can drift apart by at most T * rho, with rho \
             the spread between the grantor's rate and the slowest contender's. So epsilon >= \
             T * rho rules overlap out as far as drift goes. The simulator also counts what the \
             formula leaves out: message delays (a grantor counting from when it received the \
             renewal gives the holder that much more room), clock steps, pauses and the \
             check-then-act gap. The measured boundary lies between the largest epsilon with an \
             overlap and the smallest epsilon above it without one.\n"
        );
        if grid.facts.iter().any(|f| f.rho_eff_ppm != f.rho_ppm) {
            let _ = writeln!(
                m,
                "Some nodes set their own `drift_ppm`, so rho here is the configured worst-case \
                 spread (grantor minus slowest contender), not `clocks.drift_spread_ppm` alone.\n"
            );
        }
        let bs = boundaries(grid, stats);
        let _ = writeln!(
            m,
            "| cells | T | rho | bound T * rho | largest epsilon with overlap | smallest epsilon without, above it | bound |\n|---|---|---|---|---|---|---|"
        );
        const SHOWN: usize = 100;
        for b in bs.iter().take(SHOWN) {
            let _ = writeln!(
                m,
                "| {} | {} | {} ppm | {} | {} | {} | {} |",
                if b.label.is_empty() { "all" } else { &b.label },
                human_ns(b.t_ns as f64),
                trim(format!("{:.3}", b.rho_eff_ppm)),
                human_ns(b.bound_ns),
                b.last_overlap_eps_ns
                    .map_or("none".into(), |e| human_ns(e as f64)),
                b.first_safe_eps_ns
                    .map_or("none varied".into(), |e| human_ns(e as f64)),
                b.verdict.word()
            );
        }
        if bs.len() > SHOWN {
            let _ = writeln!(m, "\n({} more groups in results.csv.)", bs.len() - SHOWN);
        }
        let count = |v: BoundVerdict| bs.iter().filter(|b| b.verdict == v).count();
        let (held, violated, untested) = (
            count(BoundVerdict::Holds),
            count(BoundVerdict::Violated),
            count(BoundVerdict::Untested),
        );
        let _ = writeln!(
            m,
            "\n{held} of {} groups overlap-free at every epsilon >= T * rho{}{}.",
            bs.len(),
            if untested > 0 {
                format!(
                    "; {untested} untested (no epsilon at or above their T * rho was run: \
                     add larger ones to test the bound there)"
                )
            } else {
                String::new()
            },
            if violated > 0 {
                ": where it is violated, something beyond drift (a pause, a step, a late message \
                 the strategy trusts) eats the margin"
            } else {
                ""
            }
        );
    }
}

/// Writes the table of every cell's results (the first rows of it).
fn write_results(m: &mut String, grid: &Grid, stats: &[CellStats]) {
    let _ = writeln!(m, "\n## Results\n");
    let mut header: Vec<String> = grid.params.iter().map(|p| p.name.clone()).collect();
    header.extend(
        [
            "runs",
            "P(overlap) [95% CI]",
            "max overlap",
            "mean overlap",
            "mean availability",
            "longest unavailable (mean)",
            "zombie",
            "stale",
            "unsafe writes",
        ]
        .map(String::from),
    );
    let _ = writeln!(m, "| {} |", header.join(" | "));
    let _ = writeln!(m, "|{}", "---|".repeat(header.len()));
    const ROWS: usize = 200;
    for (cell, st) in stats.iter().enumerate().take(ROWS) {
        let (lo, hi) = st.wilson();
        let mut row: Vec<String> = grid.values(cell).iter().map(|v| v.to_string()).collect();
        row.extend([
            st.runs.to_string(),
            format!("{:.3} [{lo:.3}, {hi:.3}]", st.p_overlap()),
            human_ns(st.max_overlap_ns as f64),
            human_ns(st.mean_overlap_ns() as f64),
            format!("{:.4}%", st.mean_availability() * 100.0),
            human_ns(st.mean_max_unavailable_ns() as f64),
            st.zombie_actions.to_string(),
            st.stale_reads.to_string(),
            st.unsafe_writes.to_string(),
        ]);
        let _ = writeln!(m, "| {} |", row.join(" | "));
    }
    if stats.len() > ROWS {
        let _ = writeln!(m, "\n({} more cells in results.csv.)", stats.len() - ROWS);
    }
    let _ = writeln!(
        m,
        "\nOverlap per run is the total length of its overlap intervals; max overlap is the \
         longest single interval of any run. Availability is the fraction of true time in which \
         some running node believed it held the lease."
    );
}

/// Writes the chart links and the charts skipped.
fn write_charts(m: &mut String, charts: &[ChartNote], skipped: &[String]) {
    let _ = writeln!(m, "\n## Charts\n");
    for c in charts {
        let _ = writeln!(
            m,
            "### {}\n\n![{}]({}.png)\n\n(also `{}.svg`)\n",
            c.caption, c.caption, c.file, c.file
        );
    }
    if charts.is_empty() {
        let _ = writeln!(m, "No chart applies to this grid.\n");
    }
    for s in skipped {
        let _ = writeln!(m, "- skipped: {s}");
    }
}

/// Writes the list of files and the commands to rerun or shard the sweep (as `program`).
fn write_files(m: &mut String, grid: &Grid, program: &str) {
    let _ = writeln!(m, "\n## Files and rerun\n");
    let _ = writeln!(
        m,
        "- `results.csv`: one row per cell, in grid order (the first parameter varies slowest).\n\
         - `runs.csv`: one row per run (`run = cell * seeds + seed - first seed`).\n\n\
         Rerun: `{}`\n\n\
         Split over K machines: add `--shard I/K` (I = 0..K-1) to each, gather the \
         `partial-I-of-K.csv` files in one directory and run `{program} sweep-merge DIR`: the \
         result is byte-identical to this one.",
        rerun_command(program, grid)
    );
}
