//! `leasesim tables`: the lease arithmetic tables of [`crate::tables`], for the seed's lists by
//! default or any lists given, as aligned text or Markdown. Writes nothing but stdout.

use crate::scenario::duration::parse_duration;
use crate::tables::{self, Ppm};
use crate::time::Dur;
use clap::{Args, ValueEnum};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum Format {
    /// Aligned plain text.
    Text,
    /// Markdown tables.
    Md,
}

#[derive(Args)]
pub(crate) struct TablesArgs {
    /// Read rates (requests per second) for table (a).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "QPS,...",
        default_value = "100,1000,10000"
    )]
    pub(crate) qps: Vec<u64>,
    /// Lease terms T (`--lease` or `-T`). Default: 1s,5s,10s for table (a), the extra round
    /// trips reads need without a lease, and 1s,5s,10s,30s for (b), the drift margin T*rho,
    /// and (c), the usable lease; given, every table uses this list.
    #[arg(
        long = "lease",
        short = 'T',
        alias = "T",
        alias = "t",
        value_delimiter = ',',
        value_name = "T,..."
    )]
    pub(crate) t: Option<Vec<String>>,
    /// Drift spreads rho in ppm. Default: 10,100,1000 for table (b) and 100 for (c); given,
    /// both use this list.
    #[arg(long, value_delimiter = ',', value_name = "PPM,...")]
    pub(crate) rho: Option<Vec<String>>,
    /// Fixed allowances (delay, processing, steps) subtracted in table (c), e.g. 50ms. Not
    /// epsilon: table (c) subtracts the drift margin T*rho (table (b), the least epsilon) on
    /// top of it.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "D,...",
        default_value = "50ms"
    )]
    pub(crate) allowance: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
}

fn durations(flag: &str, texts: &[String], problems: &mut Vec<String>) -> Vec<Dur> {
    let mut out = Vec::new();
    for t in texts {
        match parse_duration(t) {
            Ok(d) if d.ns() > 0 => out.push(d),
            Ok(d) => problems.push(format!("{flag} {t}: must be positive (got {d})")),
            Err(e) => problems.push(format!("{flag} {t}: {e}")),
        }
    }
    out
}

fn non_negative(flag: &str, texts: &[String], problems: &mut Vec<String>) -> Vec<Dur> {
    let mut out = Vec::new();
    for t in texts {
        match parse_duration(t) {
            Ok(d) if d.ns() >= 0 => out.push(d),
            Ok(d) => problems.push(format!("{flag} {t}: must not be negative (got {d})")),
            Err(e) => problems.push(format!("{flag} {t}: {e}")),
        }
    }
    out
}

/// `program`: the name the command line goes by, in the commands the tables' notes point to.
pub(crate) fn tables(args: TablesArgs, program: &str) -> ExitCode {
    let mut problems = Vec::new();
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let t_given = args.t.as_ref().map(|t| durations("--T", t, &mut problems));
    let rho_given = args.rho.as_ref().map(|r| {
        r.iter()
            .filter_map(|x| {
                Ppm::parse(x)
                    .map_err(|e| problems.push(format!("--rho: {e}")))
                    .ok()
            })
            .collect::<Vec<_>>()
    });
    let allowance = non_negative("--allowance", &args.allowance, &mut problems);
    if args.qps.is_empty() {
        problems.push("--qps: give at least one rate".into());
    }
    if !problems.is_empty() {
        eprintln!("error: bad input to tables:");
        for p in &problems {
            eprintln!("  - {p}");
        }
        return ExitCode::from(2);
    }
    let mut ignore = Vec::new();
    let t_a = t_given
        .clone()
        .unwrap_or_else(|| durations("", &owned(&["1s", "5s", "10s"]), &mut ignore));
    let t_bc =
        t_given.unwrap_or_else(|| durations("", &owned(&["1s", "5s", "10s", "30s"]), &mut ignore));
    let parse_all = |v: &[&str]| -> Vec<Ppm> {
        v.iter()
            .map(|x| Ppm::parse(x).expect("a valid default"))
            .collect()
    };
    let rho_b = rho_given
        .clone()
        .unwrap_or_else(|| parse_all(&["10", "100", "1000"]));
    let rho_c = rho_given.unwrap_or_else(|| parse_all(&["100"]));
    let all = [
        tables::round_trips(&args.qps, &t_a),
        tables::drift_margin(&t_bc, &rho_b, program),
        tables::usable(&t_bc, &allowance, &rho_c),
    ];
    let rendered: Vec<String> = all
        .iter()
        .map(|t| match args.format {
            Format::Text => tables::to_text(t),
            Format::Md => tables::to_markdown(t),
        })
        .collect();
    out!("{}", rendered.join("\n"));
    ExitCode::SUCCESS
}
