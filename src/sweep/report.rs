//! A sweep's `report.md`, and the analyses it shares with the terminal summary: the best safe
//! parameter sets and the measured safety boundary next to the analytic bound epsilon >= T*rho.
//!
//! The report holds nothing that depends on how the sweep was run (threads, shards, wall time),
//! so that a merged sweep's report is byte-identical to an unsharded one's.

use super::aggregate::{percentiles, CellStats, Judgement};
use super::grid::Grid;
use super::path::Role;
use crate::markdown::{code, escape};
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
/// Fields varied together are chosen when every one of them is.
pub fn chosen(p: &super::grid::Param) -> bool {
    p.paths.iter().all(|(path, role)| match role {
        Role::T | Role::Epsilon => true,
        Role::Rho => false,
        Role::Other => matches!(
            path.segs.first(),
            Some(super::path::Seg::Field(f)) if f == "lease" || f == "strategy"
        ),
    })
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
    /// Runs with a handover over all its cells: the runs that could show an overlap.
    pub handover_runs: u64,
    /// Whether some run of some cell overlapped.
    pub overlapped: bool,
}

impl Choice {
    /// What its cells show together: unsafe if some cell is; else untested if some cell had
    /// no handover to judge (an environment tried in which nothing could overlap); else safe.
    pub fn judgement(&self, stats: &[CellStats]) -> Judgement {
        let of = |j: Judgement| self.cells.iter().any(|&c| stats[c].judgement() == j);
        if of(Judgement::Unsafe) {
            Judgement::Unsafe
        } else if of(Judgement::Untested) {
            Judgement::Untested
        } else {
            Judgement::Safe
        }
    }

    /// Safe in every run of every environment tried, each with runs that had a handover.
    pub fn safe(&self, stats: &[CellStats]) -> bool {
        self.judgement(stats) == Judgement::Safe
    }

    /// The evidence of a safe choice, in words: `0 of 37 runs with a handover overlapped or
    /// harmed, of 40 runs`.
    pub fn evidence_words(&self) -> String {
        format!(
            "0 of {} run{} with a handover overlapped or harmed, of {} run{}",
            self.handover_runs,
            plural(self.handover_runs),
            self.runs,
            plural(self.runs)
        )
    }
}

/// "s" unless `n` is 1.
fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
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
                handover_runs: 0,
                overlapped: false,
            });
            choices.len() - 1
        });
        let ch = &mut choices[c];
        ch.cells.push(cell);
        ch.worst_availability = ch.worst_availability.min(st.mean_availability());
        ch.worst_p_unsafe = ch.worst_p_unsafe.max(st.p_unsafe());
        ch.runs += st.runs;
        ch.handover_runs += st.handover_runs;
        ch.overlapped |= st.overlap_runs > 0;
    }
    choices
}

/// The settings the user chooses that were safe (no overlap, no harm) in every run of every
/// environment tried, with runs that had a handover in each, best worst-case availability
/// first, at most `n`. A setting with an environment in which no run had a handover is
/// untested there, never safe. A sweep over rho alone has one choice, the scenario's own
/// settings.
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

/// The choices by what their runs show: unsafe (an overlap or harm somewhere), untested (none,
/// but some environment without a handover to judge), and safe.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub safe: usize,
    /// The untested choices' labels, in grid order.
    pub untested: Vec<String>,
    pub unsafe_: usize,
}

/// Tallies the choices of the sweep (see [`choices`]) by their [`Judgement`].
pub fn tally(grid: &Grid, stats: &[CellStats]) -> Tally {
    let mut t = Tally::default();
    for ch in choices(grid, stats) {
        match ch.judgement(stats) {
            Judgement::Safe => t.safe += 1,
            Judgement::Untested => t.untested.push(ch.label),
            Judgement::Unsafe => t.unsafe_ += 1,
        }
    }
    t
}

/// Why no setting is the best safe one, in words (`every setting had an overlap or harm at some
/// rho=100, 200`, `2 settings untested: no run with a handover to judge at some ...`); `env` is
/// the environment the sweep varied ([`environment`]).
pub fn none_safe_words(t: &Tally, env: Option<&str>) -> String {
    let at_some = env.map_or(String::new(), |e| format!(" at some {e}"));
    let mut parts = Vec::new();
    if t.unsafe_ > 0 {
        parts.push(if t.untested.is_empty() {
            format!("every setting had an overlap or harm{at_some}")
        } else {
            format!("{} had an overlap or harm{at_some}", settings(t.unsafe_))
        });
    }
    if !t.untested.is_empty() {
        parts.push(format!(
            "{} untested: no run with a handover to judge{at_some}",
            settings(t.untested.len())
        ));
    }
    parts.join(", ")
}

/// "1 setting", "3 settings".
pub fn settings(n: usize) -> String {
    format!("{n} setting{}", if n == 1 { "" } else { "s" })
}

/// The untested settings' labels, the first three, then how many more.
pub fn untested_labels(t: &Tally) -> String {
    let mut w = t
        .untested
        .iter()
        .take(3)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("; ");
    if t.untested.len() > 3 {
        w.push_str(&format!("; {} more", t.untested.len() - 3));
    }
    w
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
    /// The smallest epsilon (ns) above all overlapping ones at which some run had a handover
    /// (and so none overlapped with something to judge).
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
    /// None of the epsilons at or above the bound overlapped, but at one of them no run had a
    /// handover: nothing could overlap there, so the group does not test the bound.
    NoHandover,
}

impl BoundVerdict {
    pub fn word(self) -> &'static str {
        match self {
            BoundVerdict::Holds => "holds",
            BoundVerdict::Violated => "**violated**",
            BoundVerdict::Untested => "untested (no epsilon at or above it was run)",
            BoundVerdict::NoHandover => {
                "untested (no run with a handover at an epsilon at or above it)"
            }
        }
    }

    /// Either way of leaving the bound untested.
    pub fn untested(self) -> bool {
        matches!(self, BoundVerdict::Untested | BoundVerdict::NoHandover)
    }
}

/// Why groups left the bound untested, in words: `1 ran no epsilon at or above its T*rho; 2 had
/// no run with a handover there`, or empty when none did.
pub fn untested_bound_words(bs: &[Boundary]) -> String {
    let count = |v: BoundVerdict| bs.iter().filter(|b| b.verdict == v).count();
    let (none_run, no_handover) = (
        count(BoundVerdict::Untested),
        count(BoundVerdict::NoHandover),
    );
    let mut parts = Vec::new();
    if none_run > 0 {
        parts.push(format!(
            "{none_run} ran no epsilon at or above {} T*rho",
            if none_run == 1 { "its" } else { "their" }
        ));
    }
    if no_handover > 0 {
        parts.push(format!(
            "{no_handover} had no run with a handover at an epsilon at or above it"
        ));
    }
    parts.join("; ")
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
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut at: std::collections::BTreeMap<Vec<usize>, usize> = Default::default();
    for cell in 0..grid.cell_count() {
        let mut key = grid.value_indices(cell);
        if let Some(e) = eps_param {
            key.remove(e);
        }
        match at.get(&key) {
            Some(&g) => groups[g].push(cell),
            None => {
                at.insert(key, groups.len());
                groups.push(vec![cell]);
            }
        }
    }
    groups
        .into_iter()
        .map(|cells| boundary_of(grid, stats, cells, eps_param))
        .collect()
}

/// The boundary of one group of cells that differ only in epsilon (parameter `eps_param`).
fn boundary_of(
    grid: &Grid,
    stats: &[CellStats],
    mut cells: Vec<usize>,
    eps_param: Option<usize>,
) -> Boundary {
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
        .filter(|&&c| stats[c].handover_runs > 0)
        .map(|&c| eps(c))
        .filter(|&e| last_over.is_none_or(|l| e > l))
        .min();
    let bound_ns = f.drift_margin_ns();
    let at_or_above: Vec<&CellStats> = cells
        .iter()
        .filter(|&&c| eps(c) as f64 >= bound_ns)
        .map(|&c| &stats[c])
        .collect();
    let label = grid
        .params
        .iter()
        .zip(grid.values(first))
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
        verdict: bound_verdict(
            &at_or_above,
            last_over.is_some_and(|l| l as f64 >= bound_ns),
        ),
    }
}

/// What a group says of the bound, from its cells at or above it and whether one of those
/// overlapped: an overlap there violates it; else it holds only if each of them had a handover
/// to judge.
fn bound_verdict(at_or_above: &[&CellStats], overlapped_there: bool) -> BoundVerdict {
    if at_or_above.is_empty() {
        BoundVerdict::Untested
    } else if overlapped_there {
        BoundVerdict::Violated
    } else if at_or_above.iter().any(|st| st.handover_runs == 0) {
        BoundVerdict::NoHandover
    } else {
        BoundVerdict::Holds
    }
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
    let mut cmd = format!(
        "{} sweep {}",
        crate::shell::word(program),
        crate::shell::word(&grid.spec.source)
    );
    for (name, values) in &grid.spec.vary {
        cmd.push_str(&format!(
            " --vary {}",
            crate::shell::word(&format!("{name}={}", values.join(",")))
        ));
    }
    cmd.push_str(&format!(
        " --seeds {} --seed {}",
        grid.spec.seeds, grid.spec.scenario.seed
    ));
    for r in &grid.spec.references {
        cmd.push_str(&format!(" --reference {}", crate::shell::word(&r.arg())));
    }
    cmd
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
    write_failovers(&mut m, grid, stats);
    write_published(&mut m, grid, stats);
    write_charts(&mut m, charts, skipped);
    write_files(&mut m, grid, program);
    m
}

/// Writes the title, the run counts and the table of swept parameters.
fn write_header(m: &mut String, grid: &Grid) {
    let spec = &grid.spec;
    let s = &spec.scenario;
    let _ = writeln!(m, "# {}: sweep\n", escape(&spec.name));
    if !s.description.is_empty() {
        let _ = writeln!(m, "{}\n", escape(&s.description));
    }
    let _ = writeln!(
        m,
        "{} cells x {} seeds = {} runs (seeds {}..={} in every cell), strategy {}, {} simulated per run. \
         Expectations of the scenario are not checked in a sweep.\n",
        grid.cell_count(),
        spec.seeds,
        grid.run_count(),
        s.seed,
        s.seed.saturating_add(spec.seeds - 1),
        code(&s.strategy.to_ron()),
        s.duration
    );
    let _ = writeln!(m, "| parameter | field | values |\n|---|---|---|");
    for p in &grid.params {
        let _ = writeln!(
            m,
            "| {} | {} | {} |",
            code(&p.name),
            code(
                &p.paths
                    .iter()
                    .map(|(path, _)| path.to_string())
                    .collect::<Vec<_>>()
                    .join(" + ")
            ),
            escape(&p.values.join(", "))
        );
    }
}

/// Writes the best safe parameter sets, or the least unsafe cells when none was safe, and the
/// settings left untested.
fn write_best(m: &mut String, grid: &Grid, stats: &[CellStats]) {
    let _ = writeln!(m, "\n## Best parameter sets\n");
    let best = best_safe(grid, stats, 5);
    let env = environment(grid);
    let t = tally(grid, stats);
    if best.is_empty() {
        write_none_safe(m, grid, stats, &t, env.as_deref());
    } else {
        let _ = writeln!(
            m,
            "Settings of the lease and the strategy (what you choose) that were safe (no \
             overlap, zombie action, stale read or unsafe write) in every run{}, with runs that \
             had a handover of the lease to judge in each, by their worst mean availability:\n",
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
                 (mean, at worst), {} (P(overlap) of a run with a handover <= {:.3} at 95%)",
                k + 1,
                escape(&ch.label),
                ch.worst_availability * 100.0,
                human_ns(worst_unavailable as f64),
                ch.evidence_words(),
                super::aggregate::wilson(0, ch.handover_runs).1
            );
        }
    }
    if !t.untested.is_empty() {
        let _ = writeln!(
            m,
            "\nUntested, so never called safe: {} ({}) had no overlap or harm, but no run with a \
             handover to judge{}. A run in which the lease never passes from one holder to \
             another cannot show an overlap.",
            settings(t.untested.len()),
            untested_labels(&t),
            env.as_ref().map_or(String::new(), |e| format!(
                " in some environment tried ({e})"
            ))
        );
    }
}

/// Writes why no setting was safe, and the least unsafe cells when some overlapped or harmed.
fn write_none_safe(m: &mut String, grid: &Grid, stats: &[CellStats], t: &Tally, env: Option<&str>) {
    let _ = writeln!(m, "No setting was safe: {}.", none_safe_words(t, env));
    let mut order: Vec<usize> = (0..stats.len())
        .filter(|&c| stats[c].judgement() == Judgement::Unsafe)
        .collect();
    if order.is_empty() {
        return;
    }
    order.sort_by(|&a, &b| {
        stats[a]
            .p_overlap()
            .total_cmp(&stats[b].p_overlap())
            .then(stats[a].max_overlap_ns.cmp(&stats[b].max_overlap_ns))
            .then(a.cmp(&b))
    });
    let _ = writeln!(m, "The least unsafe cells:\n");
    for &c in order.iter().take(3) {
        let _ = writeln!(
            m,
            "- {}: P(overlap) {:.3}, max overlap {}, mean availability {:.4}%",
            escape(&grid.label(c)),
            stats[c].p_overlap(),
            human_ns(stats[c].max_overlap_ns as f64),
            stats[c].mean_availability() * 100.0
        );
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
             overlap and the smallest epsilon above it without one (among those with runs that \
             had a handover: where the lease never moved, nothing could overlap).\n"
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
            "| cells | T | rho | bound T * rho | largest epsilon with overlap | smallest epsilon without, above it, with handovers | bound |\n|---|---|---|---|---|---|---|"
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
                    .map_or("none".into(), |e| human_ns(e as f64)),
                b.verdict.word()
            );
        }
        if bs.len() > SHOWN {
            let _ = writeln!(m, "\n({} more groups in results.csv.)", bs.len() - SHOWN);
        }
        write_bound_tally(m, &bs);
    }
}

/// Writes how many groups held the bound, were untested (and why) or violated it.
fn write_bound_tally(m: &mut String, bs: &[Boundary]) {
    let count = |v: BoundVerdict| bs.iter().filter(|b| b.verdict == v).count();
    let (held, violated) = (count(BoundVerdict::Holds), count(BoundVerdict::Violated));
    let untested = bs.iter().filter(|b| b.verdict.untested()).count();
    let _ = writeln!(
        m,
        "\n{held} of {} groups overlap-free, with handovers to judge, at every epsilon >= T * \
         rho{}{}.",
        bs.len(),
        if untested > 0 {
            let no_eps = count(BoundVerdict::Untested) > 0;
            let no_handover = count(BoundVerdict::NoHandover) > 0;
            format!(
                "; {untested} untested ({}: {}{}{} to test the bound there)",
                untested_bound_words(bs),
                if no_eps { "add larger epsilons" } else { "" },
                if no_eps && no_handover { ", and " } else { "" },
                if no_handover {
                    "make the lease change hands in those runs"
                } else {
                    ""
                }
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

/// Writes the table of every cell's results (the first rows of it).
fn write_results(m: &mut String, grid: &Grid, stats: &[CellStats]) {
    let _ = writeln!(m, "\n## Results\n");
    let mut header: Vec<String> = grid.params.iter().map(|p| escape(&p.name)).collect();
    header.extend(
        [
            "runs",
            "runs with a handover",
            "P(overlap) [95% CI]",
            "max overlap",
            "mean overlap",
            "mean availability",
            "longest unavailable (mean)",
            "recovery (median / p99 / max)",
            "zombie",
            "stale",
            "unsafe writes",
            "verdict",
        ]
        .map(String::from),
    );
    let _ = writeln!(m, "| {} |", header.join(" | "));
    let _ = writeln!(m, "|{}", "---|".repeat(header.len()));
    const ROWS: usize = 200;
    for (cell, st) in stats.iter().enumerate().take(ROWS) {
        let (lo, hi) = st.wilson();
        let mut row: Vec<String> = grid.values(cell).iter().map(|v| escape(v)).collect();
        row.extend([
            st.runs.to_string(),
            st.handover_runs.to_string(),
            format!("{:.3} [{lo:.3}, {hi:.3}]", st.p_overlap()),
            human_ns(st.max_overlap_ns as f64),
            human_ns(st.mean_overlap_ns() as f64),
            format!("{:.4}%", st.mean_availability() * 100.0),
            human_ns(st.mean_max_unavailable_ns() as f64),
            recovery_words(st),
            st.zombie_actions.to_string(),
            st.stale_reads.to_string(),
            st.unsafe_writes.to_string(),
            st.verdict_words().to_string(),
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
         some running node believed it held the lease. Recovery is how long after a run's last \
         fault a running node believed again, over the runs in which one did (nearest rank; how \
         many did: `recovered_runs` in results.csv). A run has a handover when the lease passes \
         from one holder to another (it has a safety slack); only such a run can show an \
         overlap. A cell is `safe` when some of its runs had a handover and none overlapped or \
         did harm, `untested: no handover` when none overlapped or did harm but none had a \
         handover either (nothing was tested), `overlap` or `harm` otherwise."
    );
}

/// Writes each cell's failover time, whole and split in three, over the runs whose last
/// failover had an outage, and the longest gaps clients saw; nothing when no run had any.
fn write_failovers(m: &mut String, grid: &Grid, stats: &[CellStats]) {
    let none = |st: &CellStats| {
        st.detections_ns.is_empty() && st.read_gaps_ns.is_empty() && st.write_gaps_ns.is_empty()
    };
    if stats.iter().all(none) {
        return;
    }
    let _ = writeln!(m, "\n## Failover time\n");
    let mut header: Vec<String> = grid.params.iter().map(|p| escape(&p.name)).collect();
    header.extend(
        [
            "runs with an outage",
            "outage (median / p90 / p99 / max)",
            "detection",
            "election or acquisition",
            "first operation",
            "longest read gap",
            "longest write gap",
        ]
        .map(String::from),
    );
    let _ = writeln!(m, "| {} |", header.join(" | "));
    let _ = writeln!(m, "|{}", "---|".repeat(header.len()));
    const ROWS: usize = 200;
    for (cell, st) in stats.iter().enumerate().take(ROWS) {
        let mut row: Vec<String> = grid.values(cell).iter().map(|v| escape(v)).collect();
        row.push(st.detections_ns.len().to_string());
        let parts = [
            &st.outages_ns,
            &st.detections_ns,
            &st.elections_ns,
            &st.first_ops_ns,
        ];
        for values in parts
            .into_iter()
            .chain([&st.read_gaps_ns, &st.write_gaps_ns])
        {
            row.push(match percentiles(values, [50, 90, 99, 100]) {
                Some(ps) => ps.map(|p| human_ns(p as f64)).join(" / "),
                None => "-".to_string(),
            });
        }
        let _ = writeln!(m, "| {} |", row.join(" | "));
    }
    let _ = writeln!(
        m,
        "\nEach run's last failover with an outage (a stretch with no running holder): the \
         outage, from its start to the new holder believing (the outage chart draws it), and \
         its parts. Detection, from the outage's start to the start of the new holder's winning \
         attempt (its election, or the acquire request that was granted; 0 when that request \
         was already under way); election or acquisition, from then until the new holder \
         believed; first operation, from then until it served a read or a write took effect \
         (over the runs in which it served one). The longest read gap and write gap are what \
         clients saw, over every run with a read (a write) served: the longest stretch with \
         none served, a stretch that never ended running to the run's end; a holder that \
         believes but cannot serve (a leader whose loop waits for its disk, or that hears no \
         acks) is no outage to the first three columns, and is one here. Nearest rank, as for \
         recovery."
    );
}

/// Writes each published figure (`--reference`) beside the one its cell measured, with the
/// difference as a share of the published one.
fn write_published(m: &mut String, grid: &Grid, stats: &[CellStats]) {
    if grid.spec.references.is_empty() {
        return;
    }
    let _ = writeln!(
        m,
        "\n## Published figures\n\nRecovery times of the runs that recovered, each figure \
         beside the one its cell measured.\n\n| cell | figure | published | measured | \
         difference |\n|---|---|---|---|---|"
    );
    for r in &grid.spec.references {
        let cell = grid
            .cell_named(&r.cell)
            .expect("checked when the grid was built");
        let (measured, diff) = match r.figure.of(&stats[cell]) {
            Some(ns) => {
                let d = (ns - r.time.ns()) as f64 / r.time.ns() as f64 * 100.0;
                (human_ns(ns as f64), format!("{d:+.0} %"))
            }
            None => ("no run recovered".to_string(), "-".to_string()),
        };
        let _ = writeln!(
            m,
            "| {} | {} | {} | {measured} | {diff} |",
            escape(&r.cell),
            r.figure.name(),
            human_ns(r.time.ns() as f64)
        );
    }
}

/// A cell's recovery times as `median / p99 / max`, or `-` when no run recovered.
fn recovery_words(st: &CellStats) -> String {
    match st.recovery_percentiles([50, 99, 100]) {
        Some([median, p99, max]) => format!(
            "{} / {} / {}",
            human_ns(median as f64),
            human_ns(p99 as f64),
            human_ns(max as f64)
        ),
        None => "-".to_string(),
    }
}

/// Writes the chart links and the charts skipped.
fn write_charts(m: &mut String, charts: &[ChartNote], skipped: &[String]) {
    let _ = writeln!(m, "\n## Charts\n");
    for c in charts {
        let _ = writeln!(
            m,
            "### {}\n\n![{}]({}.png)\n\n(also `{}.svg`)\n",
            escape(&c.caption),
            escape(&c.caption).replace('[', "\\[").replace(']', "\\]"),
            c.file,
            c.file
        );
    }
    if charts.is_empty() {
        let _ = writeln!(m, "No chart applies to this grid.\n");
    }
    for s in skipped {
        // Why a chart was skipped may name the sweep's parameters and values.
        let _ = writeln!(m, "- skipped: {}", escape(s));
    }
}

/// Writes the list of files and the commands to rerun or shard the sweep (as `program`).
fn write_files(m: &mut String, grid: &Grid, program: &str) {
    let _ = writeln!(m, "\n## Files and rerun\n");
    let _ = writeln!(
        m,
        "- `results.csv`: one row per cell, in grid order (the first parameter varies slowest).\n\
         - `runs.csv`: one row per run (`run = cell * seeds + seed - first seed`).\n\n\
         Rerun: {}\n\n\
         Split over K machines: add `--shard I/K` (I = 0..K-1) to each, gather the \
         `partial-I-of-K.csv` files in one directory and run `{program} sweep-merge DIR`: the \
         result is byte-identical to this one.",
        code(&rerun_command(program, grid))
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(runs: u64, handover_runs: u64, overlap_runs: u64) -> CellStats {
        CellStats {
            runs,
            handover_runs,
            overlap_runs,
            unsafe_runs: overlap_runs,
            ..Default::default()
        }
    }

    #[test]
    fn the_bound_holds_only_where_its_epsilons_had_handovers_to_judge() {
        let (tested, untested, over) = (cell(4, 4, 0), cell(4, 0, 0), cell(4, 4, 1));
        assert_eq!(bound_verdict(&[], false), BoundVerdict::Untested);
        assert_eq!(
            bound_verdict(&[&tested, &tested], false),
            BoundVerdict::Holds
        );
        // One epsilon at or above the bound without a handover: the group does not test it.
        assert_eq!(
            bound_verdict(&[&tested, &untested], false),
            BoundVerdict::NoHandover
        );
        // An overlap there is a violation, whatever the other cells had.
        assert_eq!(
            bound_verdict(&[&untested, &over], true),
            BoundVerdict::Violated
        );
        assert!(BoundVerdict::NoHandover.untested() && !BoundVerdict::Holds.untested());
    }

    #[test]
    fn no_best_safe_says_which_settings_failed_and_which_were_untested() {
        let t = |unsafe_: usize, untested: &[&str]| Tally {
            safe: 0,
            untested: untested.iter().map(|s| s.to_string()).collect(),
            unsafe_,
        };
        assert_eq!(
            none_safe_words(&t(3, &[]), Some("rho=100, 200")),
            "every setting had an overlap or harm at some rho=100, 200"
        );
        assert_eq!(
            none_safe_words(&t(0, &["T=60s"]), None),
            "1 setting untested: no run with a handover to judge"
        );
        assert_eq!(
            none_safe_words(&t(2, &["a", "b", "c"]), Some("rho=1")),
            "2 settings had an overlap or harm at some rho=1, 3 settings untested: no run with \
             a handover to judge at some rho=1"
        );
        let many = t(0, &["a", "b", "c", "d", "e"]);
        assert_eq!(untested_labels(&many), "a; b; c; 2 more");
    }
}
