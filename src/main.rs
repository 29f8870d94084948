//! The `leasesim` binary: everything lives in the library's `cli` module.

fn main() -> std::process::ExitCode {
    leasesim::cli::Cli::new().main()
}
