//! `leasesim advise`: recommend T, epsilon and the renew interval for an environment (drift,
//! NTP steps, pauses, delays, a failover budget), with the arithmetic shown line by line, then
//! check the advice with a small sweep around it (epsilon at 0.5x, 1x and 2x the advice).
//!
//! Flags in, text out: the arithmetic, the check scenario and the verdict are the library's
//! [`crate::advise`]. The check runs a scenario built in code, or the one given with
//! `--scenario`; it writes no files. Exit code 1 when the advised point was not safe in the check.

use super::load_all;
use crate::advise::{self, Env};
use crate::scenario::duration::parse_duration;
use crate::sweep::{self, Grid};
use crate::tables::Ppm;
use crate::time::Dur;
use clap::Args;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct AdviseArgs {
    /// The drift spread rho between grantor and holder clocks, in ppm (e.g. 200; ntpd slews up to
    /// 500).
    #[arg(long, value_name = "PPM")]
    pub(crate) rho: String,
    /// The largest wall-clock step NTP may make (ntpd steps above 128ms), e.g. 128ms.
    #[arg(long, value_name = "D")]
    pub(crate) max_step: String,
    /// The longest normal pause (GC, VM freeze) of a holder, e.g. 2s.
    #[arg(long, value_name = "D")]
    pub(crate) max_pause: String,
    /// The longest delay between a validity check and the act it allows (scheduling, network
    /// to the resource), also taken as the longest message delay, e.g. 10ms.
    #[arg(long, value_name = "D")]
    pub(crate) max_delay: String,
    /// The pauses stall the holder's clocks (VM freezes whose guest clocks do not catch up): the
    /// pause bound on T becomes a safety condition, and the check's pause stalls the clocks.
    #[arg(long)]
    pub(crate) pauses_stall_clocks: bool,
    /// Reads per second, to show what the lease saves over quorum reads.
    #[arg(long, value_name = "N")]
    pub(crate) qps: Option<u64>,
    /// How soon after a holder dies another must hold the lease, e.g. 30s.
    #[arg(long, value_name = "D")]
    pub(crate) failover: Option<String>,
    /// Check the advice on this scenario (file or bundled name; its strategy needs a holder
    /// margin) instead of the built-in cut-off-holder world.
    #[arg(long, value_name = "S")]
    pub(crate) scenario: Option<String>,
    /// Seeds per epsilon in the check.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) seeds: u64,
}

fn parse_env(args: &AdviseArgs) -> Result<Env, Vec<String>> {
    let mut p = Vec::new();
    let rho = Ppm::parse(&args.rho)
        .map_err(|e| p.push(format!("--rho: {e}")))
        .ok();
    let mut dur = |flag: &str, text: &str, zero_ok: bool| -> Option<Dur> {
        match parse_duration(text) {
            Ok(d) if d.ns() > 0 || (zero_ok && d.ns() == 0) => Some(d),
            Ok(d) => {
                p.push(format!(
                    "{flag} {text}: must be {} (got {d})",
                    if zero_ok { ">= 0" } else { "positive" }
                ));
                None
            }
            Err(e) => {
                p.push(format!("{flag}: {e}"));
                None
            }
        }
    };
    let step = dur("--max-step", &args.max_step, true);
    let pause = dur("--max-pause", &args.max_pause, true);
    let delay = dur("--max-delay", &args.max_delay, true);
    let failover = args
        .failover
        .as_deref()
        .map(|f| dur("--failover", f, false));
    if let (Some(Some(f)), Some(d)) = (failover, delay) {
        if f.ns() <= 2 * d.ns() {
            p.push(format!(
                "--failover {f}: must be longer than two message delays (2 x {d}): the next \
                 holder's grant alone takes that"
            ));
        }
    }
    if !p.is_empty() {
        return Err(p);
    }
    Ok(Env {
        rho: rho.expect("checked"),
        step: step.expect("checked"),
        pause: pause.expect("checked"),
        delay: delay.expect("checked"),
        failover: failover.map(|f| f.expect("checked")),
        stall: args.pauses_stall_clocks,
    })
}

/// `program`: the name the command line goes by.
pub(crate) fn advise(
    args: AdviseArgs,
    registry: &crate::strategy::Registry,
    program: &str,
) -> ExitCode {
    let env = match parse_env(&args) {
        Ok(e) => e,
        Err(problems) => {
            eprintln!("error: bad input to advise:");
            for p in problems {
                eprintln!("  - {p}");
            }
            return ExitCode::from(2);
        }
    };
    let given = match &args.scenario {
        Some(name) => match load_all(std::slice::from_ref(name), registry, program) {
            Ok(mut l) => Some(l.remove(0)),
            Err(code) => return code,
        },
        None => None,
    };
    let a = advise::compute(&env);
    let mut ran = None;
    let (base, name, source) = match given {
        Some(l) => {
            let s = advise::given_scenario(l.scenario, &env, &a);
            ran = Some(format!(
                "Checked on {}: its own faults and strategy, with lease.duration = {} and \
                 lease.renew_every = {} (T/3).\n",
                l.name,
                s.lease.duration,
                s.lease.renew_every.expect("set by the advice")
            ));
            (s, l.name, l.source)
        }
        None => match advise::check_scenario(&env, &a) {
            Ok(s) => (s, "advise-check".to_string(), "advise-check".to_string()),
            Err(e) => {
                return super::bad_input(format!(
                    "the advice (T = {}, epsilon = {}) cannot be checked in the built-in \
                     cut-off-holder scenario ({e}); check it on a scenario of your own with \
                     --scenario FILE",
                    a.t, a.eps
                ))
            }
        },
    };
    let spec = advise::check_spec(name, source, base, &a, args.seeds);
    let grid = match Grid::build_in(spec, registry) {
        Ok(g) => g,
        Err(problems) => {
            eprintln!("error: the advice cannot be checked on this scenario:");
            for p in problems {
                eprintln!("  - {p}");
            }
            return ExitCode::from(2);
        }
    };
    out!("{}", advise::explain(&env, &a, args.qps));
    out!("{}", ran.unwrap_or_default());
    let (stats, _) = match sweep::run_all(&grid, None, true, std::io::sink()) {
        Ok(r) => r,
        Err(e) => return super::bad_input(e),
    };
    let (text, advised_safe) = advise::check_report(&grid, &stats, &a);
    out!("{text}");
    ExitCode::from(if advised_safe { 0 } else { 1 })
}
