//! The sweep grid: parameters with their values, every combination of them (a cell), and the
//! runs of a cell (one per seed), each with a global index.
//!
//! The first parameter varies slowest. Run `index = cell * seeds + i` runs the cell's scenario
//! with seed `scenario.seed + i`, so any subset of runs (a shard) can be computed anywhere and
//! merged. Every cell's scenario is built and validated here, before anything runs, and every
//! problem found is returned.

use super::path::{self, FieldPath, Role};
use crate::scenario::{validate, Scenario};
use crate::strategy::Registry;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything that defines a sweep, as the user gave it. Written at the top of every partial
/// result so that a merge needs nothing else.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepSpec {
    /// The scenario's name (output directory `<name>-sweep`).
    pub name: String,
    /// How the user named the scenario (a path or a bundled name), for the rerun command.
    pub source: String,
    /// The base scenario, with its `seed` the first seed of every cell.
    pub scenario: Scenario,
    /// `(name as given, values as given)`, one per `--vary`, in order.
    pub vary: Vec<(String, Vec<String>)>,
    /// Seeds per cell.
    pub seeds: u64,
    /// Published figures to set beside cells' recovery times (`--reference`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<super::reference::Reference>,
}

/// One varied parameter: one field, or several varied together (`--vary a+b=x1+y1,x2+y2`:
/// `a` and `b` change at once, a cell per pair, not per combination).
#[derive(Clone, Debug)]
pub struct Param {
    /// As given to `--vary` (`T`, `epsilon`, `lease.duration`, `a+b`): the results.csv column
    /// name.
    pub name: String,
    /// The field, or the fields varied together, in the order named.
    pub paths: Vec<(FieldPath, Role)>,
    /// The role of a single field; `Other` for fields varied together.
    pub role: Role,
    /// As given (`1ms`; `12ms+6ms` for fields varied together).
    pub values: Vec<String>,
}

impl Param {
    /// Sets value `text` of this parameter (every part of it, for fields varied together) on
    /// `root`.
    fn set(&self, root: &mut serde_json::Value, text: &str) -> Result<(), String> {
        let parts = if self.paths.len() == 1 {
            vec![text.to_string()]
        } else {
            joint_parts(text)
        };
        if parts.len() != self.paths.len() {
            return Err(format!(
                "expected {} values joined by `+`, one for each of {}, got {}",
                self.paths.len(),
                self.name,
                parts.len()
            ));
        }
        for ((path, _), part) in self.paths.iter().zip(&parts) {
            path::set(root, path, part)?;
        }
        Ok(())
    }
}

/// The parts of a joint name or value, split at each `+` outside brackets and strings.
fn joint_parts(text: &str) -> Vec<String> {
    super::ron_value::split_top_level_at(text, '+')
        .into_iter()
        .map(|(_, p)| p)
        .collect()
}

/// What the charts and the report need to know of a cell beyond its parameter values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellFacts {
    /// T in ns.
    pub t_ns: i64,
    /// `clocks.drift_spread_ppm`.
    pub rho_ppm: f64,
    /// The worst-case spread of the configured drifts: the grantor's rate (its own `drift_ppm`,
    /// else +rho/2) minus the slowest contender's (its own, else -rho/2). Equals `rho_ppm` when
    /// every node takes its drift from `clocks`.
    pub rho_eff_ppm: f64,
    /// The strategy's holder margin in ns, if it has one.
    pub eps_ns: Option<i64>,
}

impl CellFacts {
    fn of(s: &Scenario, registry: &Registry) -> CellFacts {
        use crate::scenario::Role as NodeRole;
        let half = s.clocks.drift_spread_ppm / 2.0;
        let grantor = s
            .nodes
            .iter()
            .filter(|n| n.role == NodeRole::Grantor)
            .map(|n| n.drift_ppm.unwrap_or(half))
            .fold(f64::NEG_INFINITY, f64::max);
        let slowest = s
            .nodes
            .iter()
            .filter(|n| n.role == NodeRole::Contender)
            .map(|n| n.drift_ppm.unwrap_or(-half))
            .fold(f64::INFINITY, f64::min);
        // A margin the bound epsilon >= T * rho is about (Redlock's allowance and Raft's
        // max_clock_skew are varied as epsilon, but the bound is not theirs).
        let eps_ns = registry
            .resolve(&s.strategy)
            .ok()
            .and_then(|settings| settings.epsilon())
            .filter(|m| m.bounds_drift)
            .map(|m| m.value.ns());
        CellFacts {
            t_ns: s.lease.duration.ns(),
            rho_ppm: s.clocks.drift_spread_ppm,
            rho_eff_ppm: (grantor - slowest).max(0.0),
            eps_ns,
        }
    }

    /// The analytic drift margin T * rho_eff in ns.
    pub fn drift_margin_ns(&self) -> f64 {
        self.t_ns as f64 * self.rho_eff_ppm / 1e6
    }
}

/// A validated grid, ready to run.
#[derive(Debug)]
pub struct Grid {
    pub spec: SweepSpec,
    pub params: Vec<Param>,
    /// Each cell's scenario (seed = the first seed).
    cells: Vec<Scenario>,
    pub facts: Vec<CellFacts>,
    /// The strategies its cells may name.
    pub registry: Registry,
}

/// The most cells a grid may have (each is a scenario held in memory).
pub const MAX_CELLS: usize = 1_000_000;

/// The most runs a sweep may have, cells x seeds, every shard together: each is a line of
/// `runs.csv` and of the in-progress file (about 100 bytes), so both stay near a gigabyte.
pub const MAX_RUNS: u64 = 10_000_000;

impl Grid {
    /// Resolves every parameter, applies every value, builds and validates every cell, whose
    /// strategy must be a built-in one. On failure, every problem found (each on its own line
    /// when printed).
    pub fn build(spec: SweepSpec) -> Result<Grid, Vec<String>> {
        Grid::build_in(spec, &Registry::new())
    }

    /// [`Grid::build`] with the strategies of `registry`, which the grid keeps to run its cells.
    pub fn build_in(spec: SweepSpec, registry: &Registry) -> Result<Grid, Vec<String>> {
        let mut problems = Vec::new();
        if spec.seeds == 0 {
            problems.push("--seeds: must be at least 1".to_string());
        }
        if spec.vary.is_empty() {
            problems.push("no --vary given: a sweep needs at least one parameter".to_string());
        }
        let base_json =
            serde_json::to_value(&spec.scenario).expect("a scenario serializes to JSON");
        let params = vary_params(&spec, &base_json, registry, &mut problems);
        // The combinations of the good values are checked even when some values were bad, so
        // that every problem is reported at once.
        if let Some(e) = seeds_problem(spec.scenario.seed, spec.seeds) {
            problems.push(e);
            return Err(problems);
        }
        let count = match grid_size(&params, spec.seeds) {
            Ok(count) => count,
            Err(e) => {
                problems.push(e);
                return Err(problems);
            }
        };
        let (cells, cell_problems) = build_cells(&params, &base_json, registry, count);
        if !cell_problems.is_empty() || !problems.is_empty() {
            problems.extend(cell_problems);
            return Err(problems);
        }
        let facts = cells.iter().map(|c| CellFacts::of(c, registry)).collect();
        let grid = Grid {
            spec,
            params,
            cells,
            facts,
            registry: registry.clone(),
        };
        let unknown = grid.unknown_references();
        if unknown.is_empty() {
            Ok(grid)
        } else {
            Err(unknown)
        }
    }

    /// The values of `cell` as the tables show them, joined by `, `: what `--reference` names.
    pub fn cell_values(&self, cell: usize) -> String {
        self.values(cell).join(", ")
    }

    /// The cell a reference names, if one has its values.
    pub fn cell_named(&self, values: &str) -> Option<usize> {
        (0..self.cells.len()).find(|&c| self.cell_values(c) == values)
    }

    /// A problem for each reference that names no cell, listing the cells there are.
    fn unknown_references(&self) -> Vec<String> {
        let cells = || {
            let all: Vec<String> = (0..self.cells.len().min(12))
                .map(|c| format!("{:?}", self.cell_values(c)))
                .collect();
            let more = self.cells.len().saturating_sub(12);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("{}{more}", all.join(", "))
        };
        self.spec
            .references
            .iter()
            .filter(|r| self.cell_named(&r.cell).is_none())
            .map(|r| {
                format!(
                    "--reference {}: no cell has the values {:?}; the cells are {}",
                    r.label(),
                    r.cell,
                    cells()
                )
            })
            .collect()
    }

    pub fn cell_count(&self) -> usize {
        self.cells.len()
    }

    pub fn run_count(&self) -> u64 {
        self.cells.len() as u64 * self.spec.seeds
    }

    /// The value index of each parameter in `cell`.
    pub fn value_indices(&self, cell: usize) -> Vec<usize> {
        decode(&self.params, cell)
    }

    /// The values of `cell` as given, one per parameter.
    pub fn values(&self, cell: usize) -> Vec<&str> {
        self.value_indices(cell)
            .iter()
            .zip(&self.params)
            .map(|(&k, p)| p.values[k].as_str())
            .collect()
    }

    /// `T=1s, epsilon=5ms`.
    pub fn label(&self, cell: usize) -> String {
        label(&self.params, &self.value_indices(cell))
    }

    /// The cell of run `index` and the seed offset `i` within it.
    pub fn split(&self, index: u64) -> (usize, u64) {
        ((index / self.spec.seeds) as usize, index % self.spec.seeds)
    }

    /// The seed of run `index`.
    pub fn seed_of(&self, index: u64) -> u64 {
        self.spec
            .scenario
            .seed
            .checked_add(index % self.spec.seeds)
            .expect("a grid's seeds are checked not to pass u64::MAX")
    }

    /// The run index of `cell` with seed `seed`, if that seed belongs to the cell's runs.
    pub fn index_of(&self, cell: usize, seed: u64) -> Option<u64> {
        let i = seed.checked_sub(self.spec.scenario.seed)?;
        (cell < self.cells.len() && i < self.spec.seeds).then(|| cell as u64 * self.spec.seeds + i)
    }

    /// The scenario of run `index`.
    pub fn scenario(&self, index: u64) -> Scenario {
        let (cell, _) = self.split(index);
        let mut s = self.cells[cell].clone();
        s.seed = self.seed_of(index);
        s
    }

    /// The parameter with `role`, if one is varied.
    pub fn param_with(&self, role: Role) -> Option<usize> {
        self.params.iter().position(|p| p.role == role)
    }
}

/// The parameters of `spec.vary` with their good values, each value tried alone on the base
/// scenario (`base_json`); every problem found goes onto `problems`, and a parameter with no
/// good value is left out.
fn vary_params(
    spec: &SweepSpec,
    base_json: &serde_json::Value,
    registry: &Registry,
    problems: &mut Vec<String>,
) -> Vec<Param> {
    let mut params: Vec<Param> = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (name, values) in &spec.vary {
        let mut paths = Vec::new();
        let mut bad = false;
        for part in joint_parts(name) {
            match path::resolve(&part, &spec.scenario, registry) {
                Ok((path, role)) => {
                    if let Some(other) = seen.insert(path.to_string(), name.clone()) {
                        problems.push(format!(
                            "--vary {name}: the field `{path}` is already varied by --vary \
                             {other}"
                        ));
                        bad = true;
                    }
                    paths.push((path, role));
                }
                Err(e) => {
                    problems.push(format!("--vary {name}: {e}"));
                    bad = true;
                }
            }
        }
        if bad {
            continue;
        }
        if values.is_empty() || values.iter().any(|v| v.trim().is_empty()) {
            problems.push(format!(
                "--vary {name}: needs values, like {name}=V1,V2 (an empty value was given)"
            ));
            continue;
        }
        let role = match paths.as_slice() {
            [(_, role)] => *role,
            _ => Role::Other,
        };
        let mut param = Param {
            name: name.clone(),
            paths,
            role,
            values: Vec::new(),
        };
        param.values = good_values(&param, values, base_json, registry, problems);
        if !param.values.is_empty() {
            params.push(param);
        }
    }
    params
}

/// The values of `--vary name` that make a valid scenario when set alone at `path` on the
/// base scenario (`base_json`), trimmed; the others' problems go onto `problems`. A wrong path
/// shows in every value: it is said once, and no value is good.
fn good_values(
    param: &Param,
    values: &[String],
    base_json: &serde_json::Value,
    registry: &Registry,
    problems: &mut Vec<String>,
) -> Vec<String> {
    let name = &param.name;
    let mut good = Vec::new();
    for v in values {
        // Each value alone on the base scenario: wrong paths, types and units show here.
        let mut j = base_json.clone();
        let applied = param
            .set(&mut j, v)
            .and_then(|()| serde_json::from_value::<Scenario>(j).map_err(|e| e.to_string()))
            .and_then(|s| {
                // The strategy's fields are its protocol's to read.
                registry.resolve(&s.strategy).map_err(|e| e.to_string())
            });
        // A field the schema does not know: said as the path's missing step.
        let missing = param
            .paths
            .iter()
            .find_map(|(path, _)| path::missing(base_json, path));
        let applied = applied.map_err(|e| match missing {
            Some(why) if e.contains("unknown field") => why,
            _ => e,
        });
        match applied {
            Ok(_) => good.push(v.trim().to_string()),
            Err(e) => {
                let wrong_path = e.contains("has no field")
                    || e.contains("unknown field")
                    || e.contains("out of range")
                    || e.contains("no entry named")
                    || e.contains(", not a list");
                if wrong_path {
                    // One message for all the values of a wrong path.
                    problems.push(format!("--vary {name}: {e}"));
                    return Vec::new();
                }
                problems.push(format!("--vary {name}={v}: {e}"));
            }
        }
    }
    good
}

/// The number of cells of `params`' combinations, or why the grid is too large (over
/// `MAX_CELLS` cells, or cells times `seeds` runs over 64 bits).
fn grid_size(params: &[Param], seeds: u64) -> Result<usize, String> {
    let count = params
        .iter()
        .try_fold(1usize, |n, p| n.checked_mul(p.values.len()))
        .filter(|&n| n <= MAX_CELLS);
    let Some(count) = count else {
        return Err(format!(
            "the grid has more than {MAX_CELLS} cells; split it into several sweeps"
        ));
    };
    match (count as u64).checked_mul(seeds.max(1)) {
        Some(runs) if runs <= MAX_RUNS => Ok(count),
        _ => Err(format!(
            "--seeds {seeds}: {count} cell{} x {seeds} seeds is more than the {MAX_RUNS} runs a \
             sweep may have; give fewer seeds or values, or split it into several sweeps",
            if count == 1 { "" } else { "s" }
        )),
    }
}

/// Why the seeds `first, first + 1, ..., first + seeds - 1` cannot be a sweep's: more than
/// [`MAX_RUNS`] of them, or past the largest seed (they never wrap around to 0).
fn seeds_problem(first: u64, seeds: u64) -> Option<String> {
    if seeds > MAX_RUNS {
        return Some(format!(
            "--seeds {seeds}: above the limit of {MAX_RUNS} runs a sweep may have"
        ));
    }
    if first.checked_add(seeds.saturating_sub(1)).is_none() {
        return Some(format!(
            "--seed {first} with --seeds {seeds}: the last seed would pass {}, the largest \
             (seeds never wrap around to 0); start at most at --seed {}",
            u64::MAX,
            u64::MAX - (seeds - 1)
        ));
    }
    None
}

/// Every one of the `count` combinations of `params` set on the base scenario (`base_json`),
/// validated: the scenarios that could be built (with no expectations), and the problems
/// found, each said once with the cells it was found in, in the order first found.
fn build_cells(
    params: &[Param],
    base_json: &serde_json::Value,
    registry: &Registry,
    count: usize,
) -> (Vec<Scenario>, Vec<String>) {
    let mut cells = Vec::with_capacity(count);
    let mut by_problem: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for cell in 0..count {
        let values = decode(params, cell);
        let label = label(params, &values);
        let mut j = base_json.clone();
        let mut built = Ok(());
        for (p, &k) in params.iter().zip(&values) {
            built = built.and_then(|()| p.set(&mut j, &p.values[k]));
        }
        let s =
            built.and_then(|()| serde_json::from_value::<Scenario>(j).map_err(|e| e.to_string()));
        let mut found = match &s {
            Ok(s) => validate::validate_in(s, registry),
            Err(e) => vec![e.clone()],
        };
        for f in found.drain(..) {
            let cells_of = by_problem.entry(f.clone()).or_default();
            if cells_of.is_empty() {
                order.push(f);
            }
            cells_of.push(label.clone());
        }
        if let Ok(mut s) = s {
            s.expect = None; // a sweep crosses boundaries on purpose; nothing is expected
            cells.push(s);
        }
    }
    let problems = order
        .into_iter()
        .map(|f| in_cells(&f, &by_problem[&f]))
        .collect();
    (cells, problems)
}

/// Problem `f` with the cells it was found in (`at`, by label): the first few, and how many
/// more.
fn in_cells(f: &str, at: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut where_ = at
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if at.len() > SHOWN {
        where_.push_str(&format!("; and {} more", at.len() - SHOWN));
    }
    let n = at.len();
    format!(
        "{f} (in {n} cell{}: {where_})",
        if n == 1 { "" } else { "s" }
    )
}

/// Mixed-radix decoding, first parameter slowest.
fn decode(params: &[Param], mut cell: usize) -> Vec<usize> {
    let mut out = vec![0; params.len()];
    for (k, p) in params.iter().enumerate().rev() {
        out[k] = cell % p.values.len();
        cell /= p.values.len();
    }
    out
}

fn label(params: &[Param], values: &[usize]) -> String {
    params
        .iter()
        .zip(values)
        .map(|(p, &k)| format!("{}={}", p.name, p.values[k]))
        .collect::<Vec<_>>()
        .join(", ")
}
