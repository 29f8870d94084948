//! `report.md`: one run, readable on its own by a reviewer. Every user string in it goes through
//! [`crate::markdown`]'s escaping.

use super::{text, Verdict};
pub use crate::markdown::{code, escape, fence};
use crate::outcome::Summary;
use crate::scenario::{Fault, Scenario};
use crate::time::format_ns;
use std::fmt::Write;

/// How many injected faults `report.md` lists before it says how many more there were.
const LISTED_FAULTS: usize = 1000;

/// The faults injected, fixed and drawn, in time order (the file's order at one instant), each
/// with its start and end.
fn faults_section(m: &mut String, scenario: &Scenario) {
    let fixed = scenario.faults.len();
    let mut all: Vec<(usize, Fault)> = scenario.fault_schedule().into_iter().enumerate().collect();
    all.sort_by_key(|(i, f)| (f.at(), *i));
    let _ = writeln!(m, "\n## Faults injected\n");
    if all.is_empty() {
        let _ = writeln!(m, "None.");
        return;
    }
    let drawn = all.len() - fixed;
    let _ = writeln!(
        m,
        "{} fault(s): {fixed} from `faults`, {drawn} drawn by `random_faults` from the seed.\n",
        all.len()
    );
    let _ = writeln!(m, "| at | until | fault | source |\n|---:|---:|---|---|");
    for (i, f) in all.iter().take(LISTED_FAULTS) {
        let until = match f {
            Fault::Pause { at, duration, .. }
            | Fault::ThreadStall { at, duration, .. }
            | Fault::DiskStall { at, duration, .. }
            | Fault::Partition { at, duration, .. }
            | Fault::OneWay { at, duration, .. }
            | Fault::DelaySpike { at, duration, .. }
            | Fault::Drop { at, duration, .. }
                if f.after().is_none() =>
            {
                format_ns(at.ns() + duration.ns())
            }
            Fault::Pause { duration, .. }
            | Fault::ThreadStall { duration, .. }
            | Fault::DiskStall { duration, .. }
            | Fault::Partition { duration, .. }
            | Fault::OneWay { duration, .. }
            | Fault::DelaySpike { duration, .. }
            | Fault::Drop { duration, .. } => format!("{duration} later"),
            _ => "-".to_string(),
        };
        let source = if *i < fixed {
            format!("faults[{i}]")
        } else {
            "drawn".to_string()
        };
        let _ = writeln!(
            m,
            "| {} | {until} | {} | {source} |",
            f.start(),
            escape(&f.describe())
        );
    }
    if all.len() > LISTED_FAULTS {
        let _ = writeln!(m, "\n... and {} more.", all.len() - LISTED_FAULTS);
    }
}

/// Renders the report of run `s` of `scenario`; `rerun` is the command that reproduces it.
pub fn run_report(s: &Summary, scenario: &Scenario, rerun: &str) -> String {
    let mut m = String::new();
    head_section(&mut m, s, scenario);
    overlap_section(&mut m, s);
    faults_section(&mut m, scenario);
    harm_section(&mut m, s);
    availability_section(&mut m, s);
    let fence = fence(rerun);
    let _ = writeln!(m, "\n## Rerun\n\n{fence}\n{rerun}\n{fence}");
    m
}

/// The title, the description, and the table of the run's verdict and settings, with the
/// expectations that failed.
fn head_section(m: &mut String, s: &Summary, scenario: &Scenario) {
    let verdict = Verdict::of(s);
    let _ = writeln!(m, "# {}: {}\n", escape(&s.scenario), verdict.word());
    if !scenario.description.is_empty() {
        let _ = writeln!(m, "{}\n", escape(&scenario.description));
    }
    let expect = match s.expect.passed {
        None => "none stated".to_string(),
        Some(true) => "all held".to_string(),
        Some(false) => format!("**{} failed**", s.expect.failures.len()),
    };
    let _ = writeln!(m, "| | |\n|---|---|");
    let _ = writeln!(m, "| verdict | **{}** |", verdict.word());
    let _ = writeln!(m, "| expectations | {expect} |");
    let _ = writeln!(
        m,
        "| safety slack (closest handover; negative: the beliefs overlapped) | {} |",
        match s.min_slack_ns {
            None => "no handover".to_string(),
            Some(ns) => format_ns(ns),
        }
    );
    let _ = writeln!(m, "| strategy | {} |", code(&s.strategy));
    for own in &s.node_settings {
        let _ = writeln!(m, "| a node's own settings | {} |", code(own));
    }
    let _ = writeln!(m, "| seed | {} |", s.seed);
    let _ = writeln!(m, "| simulated | {} |", format_ns(s.duration_ns));
    let l = &scenario.lease;
    let _ = writeln!(
        m,
        "| lease | T = {}, renew every {}, retry every {}, grantor restart {:?} |",
        l.duration,
        l.renew_every(),
        l.retry_every,
        l.grantor_restart
    );
    let drifts: Vec<String> = s
        .drift_ppm
        .iter()
        .map(|(n, d)| format!("{} {d:+} ppm", escape(n)))
        .collect();
    let _ = writeln!(m, "| clock drift | {} |", drifts.join(", "));
    if let Some(c) = &s.clock_error {
        let _ = writeln!(
            m,
            "| clock error bounds | {} |",
            crate::report::text::clock_error_words(c)
        );
    }
    let _ = writeln!(m, "| events | {} |", s.events);
    if s.truncated {
        let _ = writeln!(m, "| **truncated** | the run hit `limits.max_events` |");
    }
    for f in &s.expect.failures {
        let _ = writeln!(m, "\n- expectation failed: {}", escape(f));
    }
}

/// The overlap intervals, or a sentence saying there were none.
fn overlap_section(m: &mut String, s: &Summary) {
    let _ = writeln!(m, "\n## Overlap\n");
    if s.overlap.count == 0 {
        let _ = writeln!(
            m,
            "No instant at which two nodes both believed they held the lease."
        );
    } else {
        let _ = writeln!(
            m,
            "{} interval(s), {} in total, the longest {}.\n",
            s.overlap.count,
            format_ns(s.overlap.total_ns),
            format_ns(s.overlap.max_ns)
        );
        let _ = writeln!(
            m,
            "| start | end | duration | nodes |\n|---:|---:|---:|---|"
        );
        for i in &s.overlap.intervals {
            let _ = writeln!(
                m,
                "| {} | {} | {} | {} |",
                format_ns(i.start_ns),
                format_ns(i.end_ns),
                format_ns(i.end_ns - i.start_ns),
                escape(&i.nodes.join(", "))
            );
        }
    }
}

/// The harm done, by kind.
fn harm_section(m: &mut String, s: &Summary) {
    let _ = writeln!(m, "\n## Harm\n");
    let _ = writeln!(m, "| | count |\n|---|---:|");
    let _ = writeln!(
        m,
        "| zombie actions (served under a superseded token) | {} |",
        s.zombie_actions
    );
    let _ = writeln!(
        m,
        "| stale reads (missed an applied write) | {} |",
        s.stale_reads
    );
    let _ = writeln!(
        m,
        "| unsafe writes (applied after a newer token's) | {} |",
        s.unsafe_writes
    );
    let _ = writeln!(
        m,
        "| fenced writes (rejected by fencing) | {} |",
        s.fenced_writes
    );
    let _ = writeln!(
        m,
        "| duplicate writes (a second copy delivered; applied once) | {} |",
        s.duplicate_writes
    );
}

/// Availability, requests served, how long they stopped, and what the lease cost in grants,
/// renewals and messages.
fn availability_section(m: &mut String, s: &Summary) {
    let r = &s.requests;
    let _ = writeln!(m, "\n## Availability and cost\n");
    let _ = writeln!(m, "| | |\n|---|---:|");
    let _ = writeln!(
        m,
        "| availability (time with a running believer) | {:.4}% |",
        s.availability * 100.0
    );
    let _ = writeln!(
        m,
        "| longest window with no running believer | {} |",
        format_ns(s.max_unavailable_ns)
    );
    let _ = writeln!(
        m,
        "| requests served | {:.4}% of {} |",
        s.served_ratio * 100.0,
        r.reads_arrived + r.writes_arrived
    );
    let _ = writeln!(
        m,
        "| reads served / arrived | {} / {} |",
        r.reads_served, r.reads_arrived
    );
    if r.reads_served_confirmed > 0 {
        let _ = writeln!(
            m,
            "| reads served locally / after a confirmation round (ReadIndex) | {} / {} |",
            r.reads_served_local, r.reads_served_confirmed
        );
    }
    if let Some(w) = r.confirmed_read_wait {
        let _ = writeln!(
            m,
            "| confirmed reads' wait: mean / p50 / p99 / max | {} / {} / {} / {} |",
            format_ns(w.mean_ns as i64),
            format_ns(w.p50_ns as i64),
            format_ns(w.p99_ns as i64),
            format_ns(w.max_ns as i64)
        );
    }
    for (what, g) in [
        ("reads", r.longest_read_gap),
        ("writes", r.longest_write_gap),
    ] {
        if let Some(g) = g {
            let _ = writeln!(
                m,
                "| longest gap between {what} served | {} |",
                text::gap_text(g)
            );
        }
    }
    let _ = writeln!(
        m,
        "| writes admitted / applied / arrived | {} / {} / {} |",
        r.writes_admitted, r.writes_applied, r.writes_arrived
    );
    let _ = writeln!(m, "| grants / renewals | {} / {} |", s.grants, s.renewals);
    let msgs: Vec<String> = s
        .messages
        .iter()
        .map(|(k, v)| format!("{} {v}", escape(k)))
        .collect();
    let _ = writeln!(
        m,
        "| messages sent (dropped {}) | {} |",
        s.messages_dropped,
        msgs.join(", ")
    );
}
