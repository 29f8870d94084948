//! Guided search against swarm testing on the bundled needles (`scenarios/needle-*.ron`):
//! configurations that only two or more faults in order break. For each needle and each of 10
//! exploration seeds (the scenario's seed + 1,000,000 k: past swarm's cap, so no two seeds share
//! a run), the runs up to and including the first
//! violation by `--search guided` (capped at 2,000: it must find each needle within that) and
//! by `--search swarm` (capped at 20,000, so that its median is measured, not cut off); it
//! prints, per needle, the median of each (a seed that finds nothing counts as more than its
//! cap), the ratio, and how many seeds find it within 2,000 runs; then the median of the
//! ratios, and the runs/s of each on one needle.
//!
//! `cargo bench --bench needles`. Two environment variables shorten it: `NEEDLES_SEEDS=K`
//! takes the first K seeds (10 by default), `NEEDLES_FROM=F` starts them at seed F (0 by
//! default), `NEEDLES_ONLY=WORD` runs only the needles whose name has WORD, and
//! `NEEDLES_SWARM=0` leaves swarm out (guided's columns only; no ratio or runs/s lines).

use leasesim::explore::{Exploration, Ran};
use leasesim::scenario::library;
use leasesim::sweep::Shard;
use leasesim::Scenario;

const SEEDS: u64 = 10;

/// The seeds to run (`NEEDLES_SEEDS`, at most [`SEEDS`]) and whether swarm runs
/// (`NEEDLES_SWARM`, not `0`).
fn config() -> (u64, bool) {
    let var = |k: &str| std::env::var(k).ok();
    let seeds = var("NEEDLES_SEEDS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(SEEDS)
        .clamp(1, SEEDS);
    (seeds, var("NEEDLES_SWARM").is_none_or(|v| v != "0"))
}
/// Guided search's budget: it must find every needle within it.
const CAP: u64 = 2_000;
/// Swarm's budget: ten times guided's, so that a ratio of 10 is measured where it is reached.
const SWARM_CAP: u64 = 20_000;

/// The runs to the first violation (`None`: none within the cap), the runs done and the events.
fn explore(base: &Scenario, guided: bool, cap: u64) -> (Option<u64>, u64) {
    let nemesis = base.nemesis.clone().expect("a needle has an envelope");
    let e = Exploration {
        base,
        nemesis: &nemesis,
        swarm: true,
        guided,
        runs: cap,
        liveness: None,
    };
    let runner = |s: &Scenario| {
        leasesim::run("needle", s)
            .map(|o| o.summary)
            .map_err(|e| e.problems)
    };
    let ran: Ran = e
        .run_all(Shard::ALL, None, &|_| {}, &runner)
        .expect("every run runs");
    let found = ran
        .records
        .iter()
        .find(|r| r.violation.is_some())
        .map(|r| r.run + 1);
    (found, ran.records.len() as u64)
}

/// The median of `v` (10 values: the mean of the 5th and 6th), a miss counted as `cap` + 1.
fn median(v: &[Option<u64>], cap: u64) -> f64 {
    let mut x: Vec<u64> = v.iter().map(|r| r.unwrap_or(cap + 1)).collect();
    x.sort_unstable();
    (x[(x.len() - 1) / 2] + x[x.len() / 2]) as f64 / 2.0
}

/// A median as printed: above the cap when most seeds found nothing.
fn shown(m: f64, cap: u64) -> String {
    if m > cap as f64 {
        format!(">{cap}")
    } else {
        format!("{m}")
    }
}

/// Exploration seeds this far apart: run r of an exploration runs seed + r, so seeds closer
/// than swarm's cap would share runs and their medians would not be independent.
const SEED_SPACING: u64 = 1_000_000;
const _: () = assert!(SEED_SPACING > SWARM_CAP && SEED_SPACING > CAP);

/// Seed k of the bench is the needle's seed + [`SEED_SPACING`] (k + `NEEDLES_FROM`, 0 by
/// default: another ten independent seeds to check a figure against).
fn with_seed(name: &str, k: u64) -> Scenario {
    let from: u64 = std::env::var("NEEDLES_FROM")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut s = Scenario::from_ron(library::text(name).expect("bundled")).expect("valid");
    s.seed = s.seed.wrapping_add(SEED_SPACING * (k + from));
    s
}

#[allow(clippy::disallowed_types)] // wall time for the runs/s line only
fn main() {
    let (seeds, with_swarm) = config();
    // `NEEDLES_ONLY=WORD`: only the needles whose name contains it.
    let only = std::env::var("NEEDLES_ONLY").unwrap_or_default();
    let needles: Vec<&str> = library::names()
        .into_iter()
        .filter(|n| n.starts_with("needle-") && n.contains(only.as_str()))
        .collect();
    println!(
        "{:<46} {:>8} {:>8} {:>7} {:>8} {:>8}",
        "needle", "guided", "swarm", "ratio", "g <2000", "s <2000"
    );
    let mut ratios = Vec::new();
    let started = std::time::Instant::now();
    for name in &needles {
        let mut g = Vec::new();
        let mut s = Vec::new();
        for k in 0..seeds {
            let base = with_seed(name, k);
            g.push(explore(&base, true, CAP).0);
            if with_swarm {
                s.push(explore(&base, false, SWARM_CAP).0);
            }
        }
        let within = |v: &[Option<u64>]| v.iter().filter(|r| r.is_some_and(|n| n <= CAP)).count();
        let mg = median(&g, CAP);
        let each: Vec<String> = g
            .iter()
            .map(|r| r.map_or(format!(">{CAP}"), |n| n.to_string()))
            .collect();
        if !with_swarm {
            println!(
                "{:<46} {:>8} {:>8} {:>7} {:>5}/{seeds} {:>8}   guided per seed: {}",
                name,
                shown(mg, CAP),
                "-",
                "-",
                within(&g),
                "-",
                each.join(" ")
            );
            continue;
        }
        let ms = median(&s, SWARM_CAP);
        ratios.push(ms / mg);
        // Swarm missing on most seeds: the ratio is a lower bound.
        let at_least = if ms > SWARM_CAP as f64 { ">" } else { "" };
        println!(
            "{:<46} {:>8} {:>8} {:>7} {:>5}/{seeds} {:>5}/{seeds}   guided per seed: {}",
            name,
            shown(mg, CAP),
            shown(ms, SWARM_CAP),
            format!("{at_least}{:.1}x", ms / mg),
            within(&g),
            within(&s),
            each.join(" ")
        );
    }
    println!("({:.0} s)", started.elapsed().as_secs_f64());
    if !with_swarm || ratios.is_empty() {
        return;
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "median needle: swarm needs {:.1}x the runs guided needs",
        ratios[ratios.len() / 2]
    );
    // Runs/s on one needle with no early stop: the within-envelope runs of a whole exploration.
    let name = "needle-two-sided-cut-then-two-stalls";
    for guided in [true, false] {
        let mut runs = 0;
        let started = std::time::Instant::now();
        for k in 0..seeds {
            runs += explore(&with_seed(name, k), guided, CAP).1;
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "{name}, {}: {runs} runs in {secs:.2} s, {:.0} runs/s",
            if guided { "guided" } else { "swarm" },
            runs as f64 / secs
        );
    }
}
