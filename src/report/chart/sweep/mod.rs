//! A sweep's charts, as PNG and SVG: P(overlap) heatmaps over T x rho (one panel per epsilon)
//! with the analytic boundary epsilon = T*rho; overlap versus epsilon with the bound marked;
//! availability and the longest unavailable window versus T; recovery after the last fault, a
//! cumulative line per cell; and the safety/availability trade-off of every parameter set with
//! its frontier.
//!
//! This module is the entry point ([`draw`]) and the data every chart reads ([`Data`]: the grid,
//! its cells' statistics, pooled by the parameters a chart shows). Each chart lays itself out as
//! a [`Scene`](super::scene::Scene) in its own file ([`heatmap`], [`lines`], [`cdf`], [`tradeoff`]) from
//! the shared pieces: [`axis`] (scales and ticks), [`marks`] (marker shapes), [`legend`] and
//! [`page`] (title block and legend under the body).
//!
//! Only the charts that the varied parameters allow are drawn; the others come back with the
//! reason they were skipped. Parameters a chart does not show are pooled (their runs summed),
//! and the chart says so. Drawing is deterministic (embedded font, no clock, no randomness, no
//! hash map), so the same results give the same bytes. Nothing here runs simulations or writes
//! reports.

pub mod axis;
pub mod cdf;
pub mod heatmap;
pub mod legend;
pub mod lines;
pub mod marks;
pub mod page;
pub mod tradeoff;

use super::scene::{rgb, Scene};
use crate::sweep::aggregate::CellStats;
use crate::sweep::grid::{CellFacts, Grid};
use crate::sweep::path::Role;
use plotters::style::RGBAColor;
use std::collections::BTreeMap;

/// One chart, drawn.
pub struct Chart {
    /// File stem: the chart is `<file>.png` and `<file>.svg`.
    pub file: &'static str,
    pub caption: String,
    pub png: Vec<u8>,
    pub svg: Vec<u8>,
}

/// The charts of a sweep, and those skipped with the reason.
pub struct Charts {
    pub drawn: Vec<Chart>,
    pub skipped: Vec<String>,
}

fn push(out: &mut Charts, file: &'static str, caption: &str, scene: Result<Scene, String>) {
    match scene {
        Ok(s) => {
            let files = s.render();
            out.drawn.push(Chart {
                file,
                caption: caption.to_string(),
                png: files.png,
                svg: files.svg.into_bytes(),
            })
        }
        Err(why) => out.skipped.push(format!("{caption}: {why}")),
    }
}

/// Draws every chart the grid allows.
pub fn draw(grid: &Grid, stats: &[CellStats]) -> Charts {
    let mut out = Charts {
        drawn: Vec::new(),
        skipped: Vec::new(),
    };
    let d = Data::new(grid, stats);
    push(
        &mut out,
        "p_overlap_heatmap",
        "P(overlap) over T x rho, one panel per epsilon",
        heatmap::heatmap(&d).map(|h| h.scene()),
    );
    push(
        &mut out,
        "overlap_vs_epsilon",
        "Overlap (max and mean) versus epsilon, the bound T*rho marked",
        lines::overlap_vs_epsilon(&d).map(|c| c.scene()),
    );
    push(
        &mut out,
        "availability_vs_t",
        "Availability and the longest unavailable window versus T",
        lines::availability_vs_t(&d).map(|c| c.scene()),
    );
    push(
        &mut out,
        "recovery_cdf",
        "Recovery after the last fault: the share of each cell's runs with a holder serving again within x",
        cdf::recovery_cdf(&d, cdf::Measure::Recovery).map(|c| c.scene()),
    );
    push(
        &mut out,
        "outage_cdf",
        "Failover outage: the share of each cell's runs whose last failover after an outage had a new holder within x of its start",
        cdf::recovery_cdf(&d, cdf::Measure::Outage).map(|c| c.scene()),
    );
    push(
        &mut out,
        "tradeoff",
        "Safety versus availability, one point per setting you choose (at its worst over the environment)",
        tradeoff::tradeoff(&d).map(|t| t.scene()),
    );
    out
}

// ---------------------------------------------------------------------------------------------
// The data the charts read.

/// The grid and its statistics, with the parameters in the T, rho and epsilon roles that vary.
pub struct Data<'a> {
    grid: &'a Grid,
    stats: &'a [CellStats],
    t: Option<usize>,
    rho: Option<usize>,
    eps: Option<usize>,
}

/// Cells pooled by the value indices of some parameters.
struct Group {
    key: Vec<usize>,
    stats: CellStats,
    facts: CellFacts,
}

impl<'a> Data<'a> {
    pub fn new(grid: &'a Grid, stats: &'a [CellStats]) -> Data<'a> {
        let varied = |r: Role| {
            grid.param_with(r)
                .filter(|&p| grid.params[p].values.len() >= 2)
        };
        Data {
            grid,
            stats,
            t: varied(Role::T),
            rho: varied(Role::Rho),
            eps: varied(Role::Epsilon).filter(|_| grid.facts.iter().all(|f| f.eps_ns.is_some())),
        }
    }

    /// Pools the cells by the values of `params` (in grid order of first appearance).
    fn pool(&self, params: &[usize]) -> Vec<Group> {
        let mut groups: Vec<Group> = Vec::new();
        let mut at: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
        for cell in 0..self.grid.cell_count() {
            let idx = self.grid.value_indices(cell);
            let key: Vec<usize> = params.iter().map(|&p| idx[p]).collect();
            match at.get(&key) {
                Some(&g) => groups[g].stats.merge(&self.stats[cell]),
                None => {
                    at.insert(key.clone(), groups.len());
                    groups.push(Group {
                        key,
                        stats: self.stats[cell].clone(),
                        facts: self.grid.facts[cell],
                    });
                }
            }
        }
        groups
    }

    /// How many values parameter `p` has.
    fn count(&self, p: usize) -> usize {
        self.grid.params[p].values.len()
    }

    /// "; runs pooled over a, b" for the varied parameters not in `shown`, or "".
    fn pooled_note(&self, shown: &[usize]) -> String {
        let others: Vec<&str> = self
            .grid
            .params
            .iter()
            .enumerate()
            .filter(|(k, p)| !shown.contains(k) && p.values.len() > 1)
            .map(|(_, p)| p.name.as_str())
            .collect();
        if others.is_empty() {
            String::new()
        } else {
            format!("; runs pooled over {}", others.join(", "))
        }
    }

    /// The numeric value (T in ns, rho in ppm, epsilon in ns) of each value of parameter `p`.
    fn numeric(&self, p: usize) -> Vec<f64> {
        let role = self.grid.params[p].role;
        let n = self.grid.params[p].values.len();
        let mut out = vec![f64::NAN; n];
        for cell in 0..self.grid.cell_count() {
            let k = self.grid.value_indices(cell)[p];
            if out[k].is_nan() {
                let f = &self.grid.facts[cell];
                out[k] = match role {
                    Role::T => f.t_ns as f64,
                    Role::Rho => f.rho_ppm,
                    Role::Epsilon => f.eps_ns.unwrap_or(0) as f64,
                    Role::Other => k as f64,
                };
            }
        }
        out
    }

    /// The tick labels of parameter `p`'s values: T and epsilon in one time unit with no
    /// useless digits ([`crate::report::chart::duration_labels`]), the rest as given.
    fn tick_labels(&self, p: usize) -> Vec<String> {
        match self.grid.params[p].role {
            Role::T | Role::Epsilon => {
                let ns: Vec<i64> = self.numeric(p).iter().map(|&v| v as i64).collect();
                crate::report::chart::duration_labels(&ns)
            }
            _ => self.grid.params[p].values.clone(),
        }
    }

    fn name(&self, p: usize) -> &str {
        &self.grid.params[p].name
    }

    fn value(&self, p: usize, k: usize) -> &str {
        &self.grid.params[p].values[k]
    }

    /// `rho = 200 ppm`, `T = 10s`: a parameter's value for a legend.
    fn value_label(&self, p: usize, k: usize) -> String {
        let unit = if self.grid.params[p].role == Role::Rho {
            " ppm"
        } else {
            ""
        };
        format!("{} = {}{unit}", self.name(p), self.value(p, k))
    }

    fn subtitle_base(&self) -> String {
        format!(
            "{}: {} seeds per cell, strategy {}",
            self.grid.spec.name,
            self.grid.spec.seeds,
            self.grid.spec.scenario.strategy.name()
        )
    }
}

/// How a parameter's name reads on an axis.
fn axis_name(name: &str, role: Role) -> String {
    let what = match role {
        Role::T => "T, lease duration",
        Role::Rho => "ρ, clock drift spread (ppm)",
        Role::Epsilon => "ε, holder margin",
        Role::Other => return name.to_string(),
    };
    let short = match role {
        Role::T => "T",
        Role::Rho => "rho",
        _ => "epsilon",
    };
    if name == short {
        what.to_string()
    } else {
        format!("{what} [{name}]")
    }
}

/// Value positions sorted by numeric value: `order[i]` is the value index at position `i`.
fn sorted_order(vals: &[f64]) -> Vec<usize> {
    let mut o: Vec<usize> = (0..vals.len()).collect();
    o.sort_by(|&a, &b| vals[a].total_cmp(&vals[b]).then(a.cmp(&b)));
    o
}

/// The series colours, one per line (Tableau 10's first eight).
const PALETTE: [RGBAColor; 8] = [
    rgb(31, 119, 180),
    rgb(255, 127, 14),
    rgb(44, 160, 44),
    rgb(214, 39, 40),
    rgb(148, 103, 189),
    rgb(140, 86, 75),
    rgb(227, 119, 194),
    rgb(127, 127, 127),
];

/// Cells and points with no run that had a handover: untested, drawn apart from the safe.
const UNTESTED_FILL: RGBAColor = rgb(208, 208, 208);
const UNTESTED_HATCH: RGBAColor = rgb(140, 140, 140);

/// Text colours.
const TEXT: RGBAColor = rgb(20, 20, 20);
const MUTED: RGBAColor = rgb(90, 90, 90);

/// A number with a few significant decimals, trailing zeros dropped.
fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let s = if a == 0.0 {
        "0".to_string()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A unit for durations up to `max_ns`: (divisor, name).
fn time_unit(max_ns: f64) -> (f64, &'static str) {
    if max_ns >= 2e9 {
        (1e9, "s")
    } else if max_ns >= 2e6 || max_ns == 0.0 {
        (1e6, "ms")
    } else if max_ns >= 2e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}
