//! The `leasesim` command line: parse, run, map the result to an exit code.
//!
//! 0: every run held its expectations; 1: an expectation failed; 2: bad input or usage.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "leasesim",
    version,
    about = "Deterministic simulator for lease protocols"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run scenario files and print each run's summary as JSON, one object per line.
    Run {
        /// Scenario files (.ron).
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run { scenarios, seed } => {
            let mut failed = false;
            for path in scenarios {
                let text = match std::fs::read_to_string(&path) {
                    Ok(t) => t,
                    Err(e) => {
                        eprintln!("error: cannot read {}: {e}", path.display());
                        return ExitCode::from(2);
                    }
                };
                let mut scenario = match leasesim::Scenario::from_ron(&text) {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!("error: {}:{e}", path.display());
                        return ExitCode::from(2);
                    }
                };
                if let Some(seed) = seed {
                    scenario.seed = seed;
                }
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match leasesim::run(&name, &scenario) {
                    Ok(outcome) => {
                        failed |= outcome.summary.expect.passed == Some(false);
                        println!(
                            "{}",
                            serde_json::to_string(&outcome.summary).expect("summary serializes")
                        );
                    }
                    Err(e) => {
                        eprintln!("error: {}:\n{e}", path.display());
                        return ExitCode::from(2);
                    }
                }
            }
            ExitCode::from(u8::from(failed))
        }
    }
}
