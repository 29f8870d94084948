//! leasesim's whole command line (`run`, `check`, `compare`, `sweep`, charts, traces) for a
//! protocol written here, `Majority` (see `majority.rs`), next to the built-in strategies:
//!
//! ```sh
//! cargo run --release -- run scenarios/majority-restart-waits.ron
//! cargo run --release -- compare scenarios/majority-restart-forgets.ron \
//!     --strategies 'Majority(margin: "10ms"), Majority(margin: "10ms", quorum: 3)'
//! ```

mod majority;

fn main() -> std::process::ExitCode {
    leasesim::cli::Cli::new()
        .protocol::<majority::Params>()
        .main()
}
