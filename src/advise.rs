//! The arithmetic of `leasesim advise`: from an environment (drift, NTP steps, pauses, delays,
//! a failover budget) to T, epsilon and the renew interval, with the explanation line by line,
//! and the check of that advice: the scenario it runs (built here, or the user's with the advice
//! applied), the epsilon grid around the advice (0.5x, 1x, 2x) and the verdict.
//!
//! Exact: integer ns, drift in parts per 10^12, no floating point in the advice. The command
//! line parses flags into an [`Env`], runs the [`check_spec`] sweep and prints what this module
//! writes; it decides nothing.

use crate::scenario::{load, Scenario};
use crate::sweep::{report::human_ns, CellStats, Grid, Judgement, SweepSpec};
use crate::tables::{self, Ppm};
use crate::time::{Dur, LocalDur};
use std::fmt::Write as _;

/// The environment, validated.
#[derive(Clone, Debug)]
pub struct Env {
    pub rho: Ppm,
    pub step: Dur,
    pub pause: Dur,
    pub delay: Dur,
    pub failover: Option<Dur>,
    /// Pauses stall the clocks (a VM freeze whose guest clocks do not catch up): a paused holder
    /// cannot see the pause, so the pause bound is a safety condition, not only availability.
    pub stall: bool,
}

/// The advice and the figures behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advice {
    pub t: Dur,
    pub eps: Dur,
    /// T * rho, rounded up to a whole ns.
    pub drift: Dur,
    /// The exact sum drift + step + delay before rounding epsilon up to a whole ms.
    pub eps_sum: Dur,
    /// 1.5 x (pause + epsilon + 2 x delay).
    pub t_min: Dur,
    /// failover - 2 x delay.
    pub t_max: Option<Dur>,
    /// No T satisfies both bounds.
    pub conflict: bool,
}

const MS: i64 = 1_000_000;

/// Round lease terms: 1, 2, 3, 5 times a power of ten, from 10 ms to 5000 s.
fn round_terms() -> Vec<i64> {
    let mut v = Vec::new();
    let mut p = 10 * MS;
    while p <= 1_000_000_000_000 {
        for m in [1, 2, 3, 5] {
            v.push(m * p);
        }
        p *= 10;
    }
    v
}

fn round_up(ns: i64) -> i64 {
    round_terms().into_iter().find(|&r| r >= ns).unwrap_or(ns)
}

fn round_down(ns: i64) -> Option<i64> {
    round_terms().into_iter().rfind(|&r| r <= ns)
}

/// T * rho in ns, rounded up.
fn drift_ns(t: Dur, rho: &Ppm) -> i64 {
    let p = t.ns() as i128 * rho.ppt;
    let one = 1_000_000_000_000i128;
    ((p + one - 1) / one) as i64
}

/// The advice for `env` (see the module doc and the printed explanation).
pub fn compute(env: &Env) -> Advice {
    let d2 = 2 * env.delay.ns();
    let t_max = env.failover.map(|f| Dur::from_ns(f.ns() - d2));
    let mut t = Dur::from_ns(round_up(10 * MS));
    let mut out = None;
    for _ in 0..20 {
        let drift = Dur::from_ns(drift_ns(t, &env.rho));
        let eps_sum = Dur::from_ns(drift.ns() + env.step.ns() + env.delay.ns());
        let eps = Dur::from_ns(((eps_sum.ns() + MS - 1) / MS).max(1) * MS);
        let t_min = Dur::from_ns((3 * (env.pause.ns() + eps.ns() + d2) + 1) / 2);
        let (next, conflict) = match t_max.and_then(|m| round_down(m.ns())) {
            Some(m) if m > t_min.ns() => (m, false),
            _ => (round_up(t_min.ns() + 1), t_max.is_some()),
        };
        let advice = Advice {
            t,
            eps,
            drift,
            eps_sum,
            t_min,
            t_max,
            conflict,
        };
        if next == t.ns() {
            return advice;
        }
        out = Some(advice);
        t = Dur::from_ns(next);
    }
    out.expect("at least one round")
}

fn ms(d: Dur) -> String {
    format!("{} ms", tables::fixed(d.ns() as i128, MS as i128, 3))
}

/// The explanation, line by line.
pub fn explain(env: &Env, a: &Advice, qps: Option<u64>) -> String {
    let mut s = String::new();
    explain_environment(&mut s, env);
    explain_epsilon(&mut s, env, a);
    explain_term(&mut s, env, a);
    let renew = Dur::from_ns(a.t.ns() / 3);
    let retry = Dur::from_ns(a.t.ns() / 2);
    explain_periods(&mut s, a, renew, retry, qps);
    let _ = writeln!(
        s,
        "\nAs a scenario:\n    lease: (duration: \"{}\", renew_every: \"{renew}\", retry_every: \"{retry}\"),\n    \
         strategy: TwoSided(holder_margin: \"{}\"),",
        a.t, a.eps
    );
    s
}

/// The environment the advice is for, in one sentence, onto `s`.
fn explain_environment(s: &mut String, env: &Env) {
    let _ = writeln!(
        s,
        "Environment: rho = {} ppm, NTP steps up to {}, pauses up to {}, check-to-act and message \
         delays up to {}{}.\n",
        env.rho.text,
        env.step,
        env.pause,
        env.delay,
        env.failover
            .map_or(String::new(), |f| format!(", failover within {f}"))
    );
}

/// The holder's margin epsilon, term by term (drift, step, scheduling) and their sum, onto `s`.
fn explain_epsilon(s: &mut String, env: &Env, a: &Advice) {
    let _ = writeln!(
        s,
        "epsilon, the holder's margin (it stops acting epsilon before T on its own clock):"
    );
    let row = |s: &mut String, what: &str, how: &str, v: String| {
        let _ = writeln!(s, "  {what:<14}{how:<42}= {v:>12}");
    };
    row(
        s,
        "drift",
        &format!("T x rho = {} x {} ppm", a.t, env.rho.text),
        ms(a.drift),
    );
    row(s, "NTP step", "the largest wall-clock step", ms(env.step));
    row(
        s,
        "scheduling",
        "the longest delay from check to act",
        ms(env.delay),
    );
    row(
        s,
        "sum",
        "epsilon >= drift + step + scheduling",
        ms(a.eps_sum),
    );
    let _ = writeln!(
        s,
        "  => epsilon = {} (rounded up to a whole ms; tens of ms is usual).\n  \
         The drift term covers clocks that run apart over one lease; the step term a wall clock \
         set back (a holder timing its lease on a monotonic clock is immune to it, keep it anyway \
         if anything reads wall time); the scheduling term a request checked just before the \
         deadline that takes effect after it.\n",
        a.eps
    );
}

/// The lease term T: the pause bound below it, the failover budget above it (and their
/// conflict, if any), and the value chosen, onto `s`.
fn explain_term(s: &mut String, env: &Env, a: &Advice) {
    let _ = writeln!(s, "T, the lease term:");
    explain_pause(s, env, a);
    if let (Some(f), Some(m)) = (env.failover, a.t_max) {
        let _ = writeln!(
            s,
            "  short enough for the failover budget: when a holder dies right after renewing, the \
             grantor waits T from that renewal and the grant takes a delay to arrive, so the next \
             holder acts after about T + 2 x delay:\n    T + 2 x {} <= {f}  =>  T <= {m}",
            env.delay
        );
    }
    if a.conflict {
        let _ = writeln!(
            s,
            "  CONFLICT: no T is both above {} and within the failover budget. Choose: shorter \
             pauses (GC tuning), a larger budget, or accept losing the lease in the longest \
             pauses. Advised here: the pause bound wins (a lapsed lease is unavailability, not \
             an overlap).",
            a.t_min
        );
    }
    let _ = writeln!(
        s,
        "  => T = {} ({}). After a crash the lease moves in about T + 2 x delay = {}.\n",
        a.t,
        if env.failover.is_some() && !a.conflict {
            "the largest round value within the budget: fewer renewals, more room for pauses"
        } else {
            "the smallest round value above the pause bound; longer tolerates longer pauses and \
             costs fewer renewals, but lengthens failover"
        },
        Dur::from_ns(a.t.ns() + 2 * env.delay.ns())
    );
}

/// The pause bound on T, onto `s`: for availability when the clocks keep counting through a
/// pause, for safety when they stall.
fn explain_pause(s: &mut String, env: &Env, a: &Advice) {
    let bound = format!(
        "renew interval + pause + 2 x delay + epsilon < T, with the renew interval T/3:\n    \
         T/3 + pause + 2 x delay + epsilon < T  =>  T > 1.5 x ({} + {} + 2 x {}) = {}",
        env.pause, a.eps, env.delay, a.t_min
    );
    if env.stall {
        let _ = writeln!(
            s,
            "  pauses stall the clocks: a holder paused just before a renewal is due resumes with \
             its clock where it stopped, believing its lease has as long left as before the \
             pause. It is safe only if the renewal it sends on resume reaches the grantor and is \
             answered before the grantor's T runs out (otherwise it overlaps the next holder by \
             up to pause - epsilon):\n  {bound}"
        );
    } else {
        let _ = writeln!(
            s,
            "  longer than the worst normal pause, to keep the lease through it: a pause may begin \
             just before a renewal is due, and the renewal sent on resume must be answered before \
             the deadline T - epsilon:\n  {bound}"
        );
        if env.pause.ns() > 0 {
            let _ = writeln!(
                s,
                "  (the clocks keep counting through these pauses, so a longer one costs the lease, \
                 not safety. Do they stall? A VM frozen with its guest clocks stopped resumes \
                 unaware of the pause: then pass --pauses-stall-clocks, and this bound becomes a \
                 safety condition.)"
            );
        }
    }
}

/// The renewal and retry periods (`renew`, `retry`), and with `qps` the cost of the lease
/// against reading by quorum, onto `s`.
fn explain_periods(s: &mut String, a: &Advice, renew: Dur, retry: Dur, qps: Option<u64>) {
    let _ = writeln!(
        s,
        "renew every T/3 = {renew}: one lost renewal still leaves a third of the lease to retry in, \
         and a pause up to the bound above is survived."
    );
    let _ = writeln!(
        s,
        "retry at T/2 = {retry}: a renewal that got no answer is retried by then, and a contender \
         holding nothing asks again at that period."
    );
    if let Some(q) = qps {
        let q = q as i128;
        let t_ns = a.t.ns() as i128;
        let _ = writeln!(
            s,
            "cost: {q} reads/s by quorum cost {q} round trips/s; the lease costs 3/T = {} renewals/s, \
             {}x fewer (QPS x T / 3).",
            tables::trimmed(3_000_000_000, t_ns, 3),
            tables::trimmed(q * t_ns, 3_000_000_000, 1)
        );
    }
}

/// The built-in check world: the cut-off holder, clocks placed adversarially at rho, a pause of
/// the longest normal length just before a renewal, a backward wall step of the largest size
/// on the holder after its last renewal, delays up to the bound, and reads whose effect lands
/// `max delay` after their check. The holder times its lease on its wall clock, so that every
/// term of epsilon is exercised.
pub fn check_scenario(env: &Env, a: &Advice) -> Result<Scenario, String> {
    let t = a.t.ns();
    let cut = 2 * t;
    let duration = cut + t + t / 2;
    let secs = duration as f64 / 1e9;
    let reads = (50_000.0 / secs).clamp(20.0, 1000.0).round();
    let delay = if env.delay.ns() > 0 {
        format!("Uniform(min: \"0ns\", max: \"{}\")", env.delay)
    } else {
        "Fixed(\"0ns\")".to_string()
    };
    let mut faults = vec![format!(
        "OneWay(from: \"h\", to: \"lock\", at: \"{}\", duration: \"{}\")",
        Dur::from_ns(cut),
        Dur::from_ns(duration - cut)
    )];
    if env.pause.ns() > 0 {
        faults.push(format!(
            "Pause(node: \"h\", at: \"{}\", duration: \"{}\", {})",
            Dur::from_ns(t / 3),
            env.pause,
            if env.stall {
                "kind: VmFreeze, clock: Stall"
            } else {
                "kind: Gc"
            }
        ));
    }
    if env.step.ns() > 0 {
        faults.push(format!(
            "ClockStep(node: \"h\", at: \"{}\", by: \"-{}\")",
            Dur::from_ns(cut + t / 10),
            env.step
        ));
    }
    let mut extras = String::new();
    if env.pause.ns() > 0 {
        let stalls = if env.stall {
            " that stalls its clocks"
        } else {
            ""
        };
        extras.push_str(&format!(
            ", a {} pause{stalls} just before a renewal",
            env.pause
        ));
    }
    if env.step.ns() > 0 {
        extras.push_str(&format!(", a -{} wall step after the cut", env.step));
    }
    let text = format!(
        r#"Scenario(
            description: "advise check: holder h cut off from the grantor at 2T, clocks {rho} ppm apart (adversarial){extras}, delays and check-to-act up to {delay_bound}; h times its lease on its wall clock",
            seed: 1,
            duration: "{dur}",
            lease: (duration: "{t}", renew_every: "{renew}", retry_every: "{retry}"),
            strategy: WallClock(holder_margin: "{eps}"),
            clocks: (drift_spread_ppm: {rho}, placement: Adversarial),
            nodes: [
                (name: "lock", role: Grantor),
                (name: "h", role: Contender),
                (name: "b", role: Contender, start: "{b_start}"),
            ],
            network: (delay: {delay}),
            workload: (reads_per_second: {reads:.0}, service_time: "{service}"),
            faults: [{faults}],
        )"#,
        rho = env.rho.text,
        extras = extras,
        delay_bound = env.delay,
        dur = Dur::from_ns(duration),
        t = a.t,
        renew = Dur::from_ns(t / 3),
        retry = Dur::from_ns(t / 2),
        eps = a.eps,
        service = env.delay,
        faults = faults.join(", "),
        // b asks after h has the lease (a delay is under T/3) and well inside the run (3.5 T).
        b_start = Dur::from_ns((t / 2).min(100 * MS)),
    );
    load::from_text("advise check", &text).map_err(|e| e.to_string())
}

/// The user's scenario with the advice applied.
pub fn given_scenario(mut s: Scenario, env: &Env, a: &Advice) -> Scenario {
    s.lease.duration = a.t.as_local();
    s.lease.renew_every = Some(LocalDur::from_ns(s.lease.duration.ns() / 3));
    s.clocks.drift_spread_ppm = env.rho.text.parse().unwrap_or(0.0);
    s
}

/// The check's sweep: `scenario` (from [`check_scenario`] or [`given_scenario`]) with epsilon at
/// half, once and twice the advice, `seeds` runs each.
pub fn check_spec(
    name: String,
    source: String,
    scenario: Scenario,
    a: &Advice,
    seeds: u64,
) -> SweepSpec {
    let half = Dur::from_ns(a.eps.ns() / 2);
    let double = Dur::from_ns(a.eps.ns() * 2);
    SweepSpec {
        name,
        source,
        scenario,
        vary: vec![(
            "epsilon".to_string(),
            vec![half.to_string(), a.eps.to_string(), double.to_string()],
        )],
        seeds,
        references: Vec::new(),
    }
}

/// What went wrong in a cell, in words: "overlap in 8 of 8 runs, 184 zombie actions".
pub fn harm_words(st: &CellStats) -> String {
    let mut parts = Vec::new();
    if st.overlap_runs > 0 {
        parts.push(format!(
            "overlap in {} of {} runs",
            st.overlap_runs, st.runs
        ));
    }
    for (n, what) in [
        (st.zombie_actions, "zombie actions"),
        (st.stale_reads, "stale reads"),
        (st.unsafe_writes, "unsafe writes"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.join(", ")
}

/// The check's table and verdict; whether the advised epsilon was safe.
pub fn check_report(grid: &Grid, stats: &[CellStats], a: &Advice) -> (String, bool) {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nCheck: {} ({} seeds per epsilon)\n  {}\n",
        grid.spec.name, grid.spec.seeds, grid.spec.scenario.description
    );
    let mults = ["0.5x", "1x (advised)", "2x"];
    let rows: Vec<Vec<String>> = stats
        .iter()
        .enumerate()
        .map(|(c, st)| {
            vec![
                grid.values(c)[0].to_string(),
                mults[c.min(2)].to_string(),
                format!("{} of {}", st.overlap_runs, st.runs),
                human_ns(st.max_overlap_ns as f64),
                st.zombie_actions.to_string(),
                st.stale_reads.to_string(),
                format!("{:.4}%", st.mean_availability() * 100.0),
                match st.judgement() {
                    Judgement::Safe => "safe",
                    Judgement::Untested => "untested: no handover",
                    Judgement::Unsafe => "UNSAFE",
                }
                .to_string(),
            ]
        })
        .collect();
    s.push_str(&crate::report::text::table(
        &[
            "epsilon",
            "of the advice",
            "runs with overlap",
            "max overlap",
            "zombie actions",
            "stale reads",
            "availability",
            "verdict",
        ],
        &rows,
    ));
    let advised = &stats[1];
    let verdict = check_verdict(advised, &stats[0], a);
    let _ = writeln!(
        s,
        "\n{verdict}\n(Availability counts time with a running holder: a paused holder serves \
         nothing, and the cut-off holder's last lease plus epsilon is a gap.)"
    );
    (s, advised.safe())
}

/// The check's verdict in words, from the cells at the advised epsilon and at half of it.
fn check_verdict(advised: &CellStats, halfst: &CellStats, a: &Advice) -> String {
    let n = advised.runs;
    match (advised.judgement(), halfst.judgement()) {
        (Judgement::Safe, Judgement::Unsafe) => format!(
            "The advised epsilon ({}) was safe in all {n} runs, and half of it was not ({}): \
             the margin is needed, and it is enough here.",
            a.eps,
            harm_words(halfst)
        ),
        (Judgement::Safe, Judgement::Safe) => format!(
            "The advised epsilon ({}) was safe in all {n} runs, and so was half of it: this \
             check's worst case needs less than epsilon/2 (the formula is conservative: message \
             delays, for one, count in the holder's favour).",
            a.eps
        ),
        (Judgement::Safe, Judgement::Untested) => format!(
            "The advised epsilon ({}) was safe in all {n} runs; half of it was untested (no run \
             had a handover of the lease), so this check does not say whether the margin is \
             needed.",
            a.eps
        ),
        (Judgement::Untested, _) => format!(
            "The advised epsilon ({}) was NOT tested by this check: in none of its {n} runs did \
             the lease pass from one holder to another, so none could show an overlap. Check \
             it on a scenario in which the lease moves.",
            a.eps
        ),
        (Judgement::Unsafe, _) => format!(
            "The advised epsilon ({}) was NOT safe in this check ({}): the environment is worse \
             than the flags say, or the scenario has faults a margin cannot cover (a pause \
             between check and act needs fencing).",
            a.eps,
            harm_words(advised)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(rho: &str, step: i64, pause: i64, delay: i64, failover: Option<i64>) -> Env {
        Env {
            rho: Ppm::parse(rho).unwrap(),
            step: Dur::from_ms(step),
            pause: Dur::from_ms(pause),
            delay: Dur::from_ms(delay),
            failover: failover.map(Dur::from_ms),
            stall: false,
        }
    }

    #[test]
    fn epsilon_sums_drift_step_and_delay() {
        // Failover 30 s: T <= 30 s - 20 ms -> the largest round value is 20 s.
        // epsilon >= 20 s x 200 ppm (4 ms) + 50 ms + 10 ms = 64 ms.
        let a = compute(&env("200", 50, 2000, 10, Some(30_000)));
        assert_eq!(a.t, Dur::from_secs(20));
        assert_eq!(a.drift, Dur::from_ms(4));
        assert_eq!(a.eps, Dur::from_ms(64));
        // T_min = 1.5 x (2 s + 64 ms + 20 ms) = 3.126 s.
        assert_eq!(a.t_min, Dur::from_ms(3126));
        assert!(!a.conflict);
    }

    #[test]
    fn without_a_budget_t_is_the_round_value_above_the_pause_bound() {
        // eps = T x 100 ppm + 50 + 10 -> 61 ms for T = 2 s (0.2 ms of drift, rounded up);
        // T_min = 1.5 x (1 s + 61 ms + 20 ms) = 1.6215 s -> T = 2 s.
        let a = compute(&env("100", 50, 1000, 10, None));
        assert_eq!((a.t, a.eps), (Dur::from_secs(2), Dur::from_ms(61)));
        assert_eq!(a.eps_sum, Dur::from_ns(60_200_000));
    }

    #[test]
    fn a_budget_below_the_pause_bound_is_a_conflict() {
        let a = compute(&env("100", 50, 10_000, 10, Some(5_000)));
        assert!(a.conflict);
        assert!(a.t.ns() > a.t_min.ns());
    }

    #[test]
    fn stalled_clocks_make_the_pause_bound_a_safety_condition_and_the_check_stalls_them() {
        let mut e = env("200", 50, 2000, 10, Some(30_000));
        let a = compute(&e);
        let text = explain(&e, &a, None);
        assert!(text.contains("pass --pauses-stall-clocks"), "{text}");
        assert!(!text.contains("pauses stall the clocks:"), "{text}");
        let plain = check_scenario(&e, &a).unwrap();
        e.stall = true;
        // The advice itself is the same: T/3 + 2 s + 2 x 10 ms + 64 ms < T holds at T = 20 s.
        assert_eq!(compute(&e), a);
        let text = explain(&e, &a, None);
        assert!(text.contains("pauses stall the clocks:"), "{text}");
        assert!(
            text.contains("T/3 + pause + 2 x delay + epsilon < T  =>  T > 1.5 x (2s + 64ms + 2 x 10ms) = 3.126s"),
            "{text}"
        );
        let stalled = check_scenario(&e, &a).unwrap();
        let kinds = |s: &Scenario| format!("{:?}", s.faults);
        assert!(kinds(&stalled).contains("Stall"), "{}", kinds(&stalled));
        assert!(!kinds(&plain).contains("Stall"), "{}", kinds(&plain));
    }

    #[test]
    fn an_advised_epsilon_without_a_handover_is_untested_not_safe() {
        let a = compute(&env("200", 50, 2000, 10, Some(30_000)));
        let cell = |runs, handover_runs, overlap_runs| CellStats {
            runs,
            handover_runs,
            overlap_runs,
            unsafe_runs: overlap_runs,
            ..Default::default()
        };
        // 3 clean runs, none with a handover: not tested, whatever half of it did.
        let v = check_verdict(&cell(3, 0, 0), &cell(3, 3, 3), &a);
        assert!(
            v.starts_with("The advised epsilon (64ms) was NOT tested"),
            "{v}"
        );
        // Tested at the advice (3 handovers), untested at half: the need is not shown.
        let v = check_verdict(&cell(3, 3, 0), &cell(3, 0, 0), &a);
        assert!(v.contains("half of it was untested"), "{v}");
        // Tested both ways: the margin is needed.
        let v = check_verdict(&cell(3, 3, 0), &cell(3, 3, 2), &a);
        assert!(
            v.contains("half of it was not (overlap in 2 of 3 runs)"),
            "{v}"
        );
    }
}
