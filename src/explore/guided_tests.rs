//! Guided search: ranks, tournaments, each mutation and the envelope it keeps, derived from the
//! same random draws the mutation makes.

use super::*;
use crate::explore::Exploration;
use crate::scenario::nemesis::{profile, ThreadStalls};
use crate::scenario::FreezeClock;

/// `lock`, `a`, `b` (from 1 s), T = 10 s, 2 min, a pause of `a` at 50 s, seed 3.
fn base() -> Scenario {
    Scenario {
        seed: 3,
        ..crate::explore::tests::base()
    }
}

/// Guided search of `runs` runs of `s` under `n`, swarm's subsets in generation 0.
fn exploration<'a>(s: &'a Scenario, n: &'a Nemesis, runs: u64) -> Exploration<'a> {
    Exploration {
        base: s,
        nemesis: n,
        swarm: true,
        guided: true,
        runs,
        liveness: None,
    }
}

/// An archive of swarm's runs 0 to 15, ranked by run (no run is needed).
fn archive(e: &Exploration) -> Vec<Member> {
    (0..16)
        .map(|run| Member {
            placement: Vec::new(),
            rank: (0, run as i64, run),
            child: Child::from(e.draw(run)),
            focus: None,
        })
        .collect()
}

/// The children of the first `generations` bred generations of guided search of `s` under
/// `n` (from an archive of swarm's first runs), each checked inside the envelope, by run.
fn children_inside(s: &Scenario, n: &Nemesis, generations: u64) -> Vec<(u64, Child)> {
    let e = exploration(s, n, 1000);
    let m = Mutator::new(s, n);
    let archive = archive(&e);
    (FIRST..FIRST + generations * GENERATION)
        .map(|run| {
            let c = breed(&e, &archive, run);
            assert!(m.inside(&c.scenario), "run {run}");
            (run, c)
        })
        .collect()
}

#[test]
fn every_child_is_inside_the_envelope_and_most_are_bred() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let e = exploration(&s, &n, 1000);
    let archive = archive(&e);
    let mut bred = 0;
    for (run, c) in children_inside(&s, &n, 4) {
        // Deterministic: the same run breeds the same child.
        assert_eq!(
            c.scenario.to_ron(),
            breed(&e, &archive, run).scenario.to_ron()
        );
        // The scenario's own pause first, unchanged.
        assert!(
            matches!(&c.scenario.faults[0], Fault::Pause { at, .. } if at.ns() == 50_000_000_000)
        );
        let immigrant = (run - FIRST) % GENERATION < IMMIGRANTS;
        let swarm = e.draw(run).scenario.to_ron();
        if immigrant {
            assert_eq!(c.scenario.to_ron(), swarm, "run {run} is swarm's own");
        } else if c.scenario.to_ron() != swarm {
            bred += 1;
        }
    }
    // 4 generations of 28 bred runs each: nearly all of them stay inside within 8 tries.
    assert!(bred > 100, "{bred} of 112");
}

#[test]
fn a_liveness_search_breeds_no_fault_after_its_faults_stop() {
    // With a 20 s bound the envelope's faults stop 40 s before the 120 s run ends, at 80 s:
    // every bred child's faults start before it (a restart may come later), so that each run
    // has the bound's room after its faults to recover in.
    let s = base();
    let n = profile("all", &s).unwrap();
    let mut e = exploration(&s, &n, 1000);
    e.liveness = Some(Dur::from_secs(20));
    assert_eq!(e.faults_stop_ns(), Some(80_000_000_000));
    let archive = archive(&e);
    let fixed = Mutator::new(&s, &n).fixed(&s);
    let mut checked = 0;
    for run in FIRST..FIRST + 4 * GENERATION {
        let c = breed(&e, &archive, run);
        for f in &c.scenario.faults[fixed..] {
            assert!(
                matches!(f, Fault::Restart { .. }) || f.at().ns() < 80_000_000_000,
                "run {run}: {f:?}"
            );
            checked += 1;
        }
    }
    assert!(checked > 200, "{checked} faults checked");
}

#[test]
fn a_schedule_outside_the_envelope_is_refused() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let e = exploration(&s, &n, 10);
    let inside = e.draw(0).scenario;
    assert!(m.inside(&inside));
    let with = |f: Fault| {
        let mut x = inside.clone();
        x.faults.push(f);
        x
    };
    let pause_max = n.pauses.as_ref().unwrap().max;
    let pause = |at: i64, d: i64| Fault::Pause {
        node: "b".into(),
        at: Dur::from_ns(at).into(),
        duration: Dur::from_ns(d),
        kind: PauseKind::Gc,
        clock: None,
    };
    // A GC pause of the envelope's max is inside; 1 ns more is not.
    assert!(m.inside(&with(pause(70_000_000_000, pause_max.ns()))));
    assert!(!m.inside(&with(pause(70_000_000_000, pause_max.ns() + 1))));
    // Two pauses of b that touch: [70 s, 70 s + 1 ms] and from 70 s + 1 ms.
    let mut two = with(pause(70_000_000_000, 1_000_000));
    two.faults.push(pause(70_001_000_000, 1_000_000));
    assert!(!m.inside(&two));
    // A pause on a that meets the scenario's own (50 s to 51 s).
    let mut own = inside.clone();
    own.faults.push(Fault::Pause {
        node: "a".into(),
        at: Dur::from_secs(51).into(),
        duration: Dur::from_ns(1),
        kind: PauseKind::Gc,
        clock: None,
    });
    assert!(!m.inside(&own));
    // A downtime 1 ns longer than max_down.
    let down = n.crashes.as_ref().unwrap().max_down.ns();
    let mut crash = inside.clone();
    crash
        .faults
        .retain(|f| !matches!(f, Fault::Crash { .. } | Fault::Restart { .. }));
    crash.faults.push(Fault::Crash {
        node: "b".into(),
        at: Dur::from_secs(100).into(),
    });
    crash.faults.push(Fault::Restart {
        node: "b".into(),
        at: Dur::from_ns(100_000_000_000 + down + 1).into(),
    });
    assert!(!m.inside(&crash));
    // The scenario's own fault changed.
    let mut changed = inside.clone();
    changed.faults[0] = pause(50_000_000_000, 2_000_000_000);
    assert!(!m.inside(&changed));
}

/// Run `run`'s record with its slack and closest call, no violation.
fn record(run: u64, slack: Option<i64>, call: Option<i64>) -> RunRecord {
    RunRecord {
        run,
        seed: run,
        kinds: vec![],
        violation: None,
        min_slack_ns: slack,
        closest_call_ns: call,
        recovery_margin_ns: None,
        events: 0,
        guide: None,
    }
}

#[test]
fn the_archive_ranks_least_slack_first_and_no_handover_last() {
    let rec = |run: u64, slack: Option<i64>| record(run, slack, None);
    let mut v = [
        rec(0, None),
        rec(1, Some(5)),
        rec(2, Some(-1)),
        rec(3, Some(5)),
        rec(4, None),
    ];
    v.sort_by_key(rank);
    let order: Vec<u64> = v.iter().map(|r| r.run).collect();
    assert_eq!(order, [2, 1, 3, 0, 4]);
}

/// The stream a test draws from, numbered.
fn stream(i: u64) -> Rng {
    rng::stream(1, Component::Guided, i)
}

/// One fault of each kind of the `all` envelope, at 10 s on `b` where it has a node.
fn one_of_each(n: &Nemesis) -> Vec<Fault> {
    let t = || At::Time(Dur::from_secs(10));
    let d = Dur::from_secs(1);
    vec![
        Fault::Pause {
            node: "b".into(),
            at: t(),
            duration: d,
            kind: PauseKind::Gc,
            clock: None,
        },
        Fault::Pause {
            node: "b".into(),
            at: At::Time(Dur::from_secs(20)),
            duration: d,
            kind: PauseKind::VmFreeze,
            clock: Some(n.freezes.as_ref().unwrap().clock),
        },
        Fault::ClockStep {
            node: "b".into(),
            at: t(),
            by: LocalDur::from_ns(-1_000_000_000),
        },
        Fault::DriftChange {
            node: "b".into(),
            at: t(),
            drift_ppm: 10.0,
        },
        Fault::Partition {
            at: t(),
            duration: d,
            groups: vec![vec!["b".into()], vec!["lock".into(), "a".into()]],
        },
        Fault::OneWay {
            from: "a".into(),
            to: "b".into(),
            at: t(),
            duration: d,
        },
        Fault::DelaySpike {
            at: t(),
            duration: d,
            extra: d,
            from: None,
            to: None,
            kinds: None,
        },
        Fault::Drop {
            at: t(),
            duration: d,
            from: None,
            to: None,
            kinds: n.drops.as_ref().unwrap().kinds.clone(),
        },
        Fault::Crash {
            node: "b".into(),
            at: At::Time(Dur::from_secs(30)),
        },
        Fault::Restart {
            node: "b".into(),
            at: At::Time(Dur::from_secs(31)),
        },
    ]
}

#[test]
fn runs_without_a_handover_rank_by_their_closest_call() {
    let rec = record;
    let mut v = [
        rec(0, None, None),
        rec(1, None, Some(9)),
        rec(2, Some(100), Some(0)),
        rec(3, None, Some(3)),
        rec(4, None, Some(-2)),
    ];
    v.sort_by_key(rank);
    let order: Vec<u64> = v.iter().map(|r| r.run).collect();
    // Slack first (its closest call ignored), then calls least first, then neither.
    assert_eq!(order, [2, 4, 3, 1, 0]);
}

/// A guidance of the handovers (start, slack, node before) `h` and the unclamped call `call`.
fn guidance(h: &[(i64, i64, NodeId)], call: Option<i64>) -> Guidance {
    Guidance {
        handovers: h.to_vec(),
        call_ns: call,
        overrun_ns: None,
    }
}

/// A quiet run's guidance with the handovers `h` and nothing else.
fn quiet_of(h: &[(i64, i64, NodeId)]) -> Guidance {
    guidance(h, None)
}

#[test]
fn only_the_handovers_the_faults_changed_earn_credit() {
    // The quiet run hands over at 100 with 5 and at 400 with 30. The run has those two, one at
    // 250 with 12 and one at 400 with 7: changed, 12 and 7; credit 7.
    let quiet = [(100, 5, 0), (400, 30, 1)];
    let g = Guide::of(
        &guidance(
            &[(100, 5, 0), (250, 12, 2), (400, 7, 1), (400, 30, 1)],
            Some(-3),
        ),
        &quiet_of(&quiet),
    );
    assert_eq!((g.credit_ns, g.call_ns), (Some(7), Some(-3)));
    // Its focus: node 1, whose belief ended 7 before 400, at 393.
    assert_eq!(g.focus, Some((1, 393)));
    // The same handovers as the quiet run: no credit, no focus. One moved by 1 ns: credit its
    // slack, focus its node at 101 - 5 = 96.
    let same = Guide::of(&guidance(&quiet, None), &quiet_of(&quiet));
    assert_eq!((same.credit_ns, same.focus), (None, None));
    let moved = [(101, 5, 0), (400, 30, 1)];
    let g = Guide::of(&guidance(&moved, None), &quiet_of(&quiet));
    assert_eq!((g.credit_ns, g.focus), (Some(5), Some((0, 96))));
    // The same handover after another node's belief is another handover: changed.
    let other = [(100, 5, 2), (400, 30, 1)];
    let g = Guide::of(&guidance(&other, None), &quiet_of(&quiet));
    assert_eq!((g.credit_ns, g.focus), (Some(5), Some((2, 95))));
    // A quiet handover matches one of the run's at most: the second (100, 5) is changed.
    let twice = [(100, 5, 0), (100, 5, 0), (400, 30, 1)];
    assert_eq!(
        Guide::of(&guidance(&twice, None), &quiet_of(&quiet)).credit_ns,
        Some(5)
    );
    // Two changed handovers with the least slack: the earlier is the focus.
    let tie = [(200, 4, 1), (300, 4, 0)];
    assert_eq!(
        Guide::of(&guidance(&tie, None), &quiet_of(&[])).focus,
        Some((1, 196))
    );
}

#[test]
fn a_belief_past_its_lease_end_counts_only_when_longer_than_quiet() {
    let with = |overrun: Option<i64>| Guidance {
        overrun_ns: overrun,
        ..guidance(&[], None)
    };
    // The quiet run's holders never believed past their grantor's end: any overrun counts,
    // 0 (a belief that ended exactly there) included.
    assert_eq!(Guide::of(&with(Some(0)), &with(None)).overrun_ns, Some(0));
    assert_eq!(Guide::of(&with(Some(40)), &with(None)).overrun_ns, Some(40));
    assert_eq!(Guide::of(&with(None), &with(None)).overrun_ns, None);
    // The quiet run's went 30 past (a leader's nominal end it never renews): only longer
    // counts.
    assert_eq!(Guide::of(&with(Some(30)), &with(Some(30))).overrun_ns, None);
    assert_eq!(Guide::of(&with(Some(29)), &with(Some(30))).overrun_ns, None);
    assert_eq!(
        Guide::of(&with(Some(31)), &with(Some(30))).overrun_ns,
        Some(31)
    );
}

/// Run `run`'s record with a guide (credit, unclamped call) and a slack.
fn guided(run: u64, credit: Option<i64>, call: Option<i64>, slack: Option<i64>) -> RunRecord {
    overran(run, credit, None, call, slack)
}

/// [`guided`] with a belief past its lease's end by `overrun`.
fn overran(
    run: u64,
    credit: Option<i64>,
    overrun: Option<i64>,
    call: Option<i64>,
    slack: Option<i64>,
) -> RunRecord {
    RunRecord {
        guide: Some(Guide {
            credit_ns: credit,
            call_ns: call,
            overrun_ns: overrun,
            focus: None,
        }),
        ..record(run, slack, None)
    }
}

#[test]
fn guided_runs_rank_by_credit_then_by_the_call_past_zero() {
    let mut v = [
        guided(0, None, None, None),
        guided(1, None, Some(9), Some(5)),
        guided(2, Some(100), Some(-50), Some(5)),
        guided(3, None, Some(-200), Some(5)),
        guided(4, None, None, Some(5)),
        guided(5, Some(-1), None, Some(-1)),
        guided(6, None, Some(0), None),
        overran(7, None, Some(10), Some(-900), Some(5)),
        overran(8, None, Some(300), None, None),
        overran(9, Some(50), Some(900), None, Some(50)),
    ];
    v.sort_by_key(rank);
    let order: Vec<u64> = v.iter().map(|r| r.run).collect();
    // Credit first (-1, 50, then 100; run 9's overrun ignored), then beliefs past a lease's
    // end, longest first (300, 10; run 7's call ignored), then calls least first (-200:
    // lapsed 200 ns before its renewal; 0; 9), then the quiet run's handovers only (slack 5),
    // then nothing.
    assert_eq!(order, [5, 9, 2, 8, 7, 3, 6, 1, 4, 0]);
    assert_eq!(rank(&v[3]), (1, -300, 8));
    assert_eq!(rank(&v[5]), (2, -200, 3));
}

/// A member of rank (0, `value`, `run`) placed at `place` (one fault in that eighth of T).
fn placed(value: i64, run: u64, place: i64) -> Member {
    let s = base();
    Member {
        rank: (0, value, run),
        placement: vec![("Pause a".into(), place)],
        child: Child {
            scenario: s,
            kinds: vec![],
        },
        focus: None,
    }
}

#[test]
fn one_outcome_cannot_fill_the_archive() {
    // 20 runs of one outcome (value 3), each placed apart, then 6 of value 5 and 6 of value
    // 7 (each placed apart). By rank alone the archive would be the 16 runs of value 3. With
    // niches of 8: 8 of value 3 (runs 0 to 7), the 6 of value 5 (runs 20 to 25), and 2 of
    // value 7 (26, 27) fill the 16 places.
    assert_eq!(NICHE, 8);
    let mut pool: Vec<Member> = (0..20).map(|r| placed(3, r, r as i64)).collect();
    pool.extend((20..26).map(|r| placed(5, r, r as i64)));
    pool.extend((26..32).map(|r| placed(7, r, r as i64)));
    pool.reverse();
    let runs: Vec<u64> = select(pool).iter().map(|m| m.rank.2).collect();
    let want: Vec<u64> = (0..8).chain(20..26).chain(26..28).collect();
    assert_eq!(runs, want);
    // Fewer other outcomes: 12 of value 3 and 2 of value 5 give 8 of value 3 (0 to 7) and the
    // 2 (20, 21); places are left, and go to the runs passed over, 8 to 11 of value 3.
    let mut pool: Vec<Member> = (0..12).map(|r| placed(3, r, r as i64)).collect();
    pool.extend((20..22).map(|r| placed(5, r, r as i64)));
    let runs: Vec<u64> = select(pool).iter().map(|m| m.rank.2).collect();
    let want: Vec<u64> = (0..12).chain(20..22).collect();
    assert_eq!(runs, want);
    // One outcome and one placement twice: the twin waits. Runs 0 and 1 alike, 2 placed
    // elsewhere: 0, 2, then 1 from the places left.
    let pool = vec![placed(3, 0, 1), placed(3, 1, 1), placed(3, 2, 2)];
    let runs: Vec<u64> = select(pool).iter().map(|m| m.rank.2).collect();
    assert_eq!(runs, [0, 1, 2], "sorted by rank once chosen");
    let pool: Vec<Member> = (0..40).map(|r| placed(3, r, 0)).collect();
    let runs: Vec<u64> = select(pool).iter().map(|m| m.rank.2).collect();
    // All twins: run 0 alone by novelty, then the 15 best passed over, 1 to 15.
    assert_eq!(runs, (0..16).collect::<Vec<u64>>());
}

#[test]
fn a_placement_is_each_fault_s_kind_node_and_eighth_of_t() {
    // base(): T = 10 s, its own pause of `a` at 50 s (left out). Added: a pause of b at
    // 12.6 s (12.6 / 1.25 = 10.08: eighth 10), a step of a at 3 s (eighth 2), b's drift
    // 12.4 ppm (12).
    let mut s = base();
    s.faults.push(Fault::Pause {
        node: "b".into(),
        at: Dur::from_ms(12_600).into(),
        duration: Dur::from_secs(1),
        kind: PauseKind::Gc,
        clock: None,
    });
    s.faults.push(Fault::ClockStep {
        node: "a".into(),
        at: Dur::from_secs(3).into(),
        by: LocalDur::from_ns(5),
    });
    s.nodes[2].drift_ppm = Some(12.4);
    let p = placement(&base(), &s);
    let words: Vec<(&str, i64)> = p.iter().map(|(w, e)| (w.as_str(), *e)).collect();
    assert_eq!(words.len(), 3, "{words:?}");
    assert!(words.contains(&("drift b", 12)), "{words:?}");
    assert!(
        words.iter().any(|&(w, e)| w.ends_with(" b") && e == 10),
        "{words:?}"
    );
    assert!(
        words.iter().any(|&(w, e)| w.ends_with(" a") && e == 2),
        "{words:?}"
    );
}

#[test]
fn a_tournament_is_won_by_the_better_of_two() {
    let s = base();
    let member = |slack: i64, run: u64| Member {
        placement: Vec::new(),
        rank: (0, slack, run),
        child: Child {
            scenario: s.clone(),
            kinds: vec![],
        },
        focus: None,
    };
    let archive = [member(5, 0), member(1, 1)];
    let mut r = stream(0);
    let better = (0..400)
        .filter(|_| tournament(&archive, &mut r).rank.2 == 1)
        .count();
    // The worse wins only when it is drawn twice: 1 in 4.
    assert!((270..=330).contains(&better), "{better} of 400");
}

#[test]
fn the_mutator_adds_only_the_kinds_the_envelope_and_the_cluster_allow() {
    let s = base();
    let all = profile("all", &s).unwrap();
    assert_eq!(Mutator::new(&s, &all).kinds, [0, 1, 2, 4, 5, 6, 7, 8, 9]);
    // Drift changes need a rho to draw from; a cut needs two nodes.
    let mut no_rho = all.clone();
    no_rho.drift_ppm = None;
    assert_eq!(Mutator::new(&s, &no_rho).kinds, [0, 1, 2, 5, 6, 7, 8, 9]);
    let mut one = s.clone();
    one.nodes.truncate(1);
    assert_eq!(Mutator::new(&one, &all).kinds, [0, 1, 2, 4, 7, 8, 9]);
    assert_eq!(Mutator::new(&s, &all).term_ns, 10_000_000_000);
}

#[test]
fn the_scenarios_own_faults_are_counted_per_seed() {
    let mut s = base();
    let n = profile("all", &s).unwrap();
    let mut c = s.clone();
    assert_eq!(Mutator::new(&s, &n).fixed(&c), 1);
    s.random_faults = crate::scenario::ron_options()
        .from_str(r#"[Pauses(per_minute: 30.0, duration: Fixed("1ms"))]"#)
        .unwrap();
    let m = Mutator::new(&s, &n);
    for seed in [3, 4] {
        c.seed = seed;
        let mut b = s.clone();
        b.seed = seed;
        let want = b.fault_schedule().len();
        assert!(want > 20, "{want}");
        assert_eq!(m.fixed(&c), want);
    }
}

#[test]
fn a_shift_is_at_most_t_on_one_of_four_scales() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let t = m.term_ns;
    let mut r = stream(1);
    let d: Vec<i64> = (0..2000).map(|_| m.delta(&mut r)).collect();
    assert!(d.iter().all(|x| x.abs() <= t));
    let share = |f: &dyn Fn(i64) -> bool| d.iter().filter(|&&x| f(x)).count();
    // Scale T: half of its draws beyond T/2, an eighth of all.
    let far = share(&|x| x.abs() > t / 2);
    assert!((190..=310).contains(&far), "{far}");
    // Within T/100: all of scale T/100's, a tenth of T/10's, ...: 1/4 (1 + 1/10 + 1/50 +
    // 1/100) = 28 %.
    let near = share(&|x| x.abs() <= t / 100);
    assert!((470..=660).contains(&near), "{near}");
    // Within T/10: 1/4 (1 + 1 + 1/5 + 1/10) = 57.5 %.
    let mid = share(&|x| x.abs() <= t / 10);
    assert!((1040..=1260).contains(&mid), "{mid}");
    // Within T/2: 1/4 (3 + 1/2) = 87.5 %.
    let half = share(&|x| x.abs() <= t / 2);
    assert!((1660..=1840).contains(&half), "{half}");
    // Hardly ever a nanosecond or two.
    assert!(share(&|x| x.abs() <= 2) < 10);
    // Both ways.
    assert!(share(&|x| x < 0) > 800 && share(&|x| x > 0) > 800);
}

#[test]
fn a_shift_stays_in_the_run_and_after_its_moment() {
    let end = 120_000_000_000;
    let mut f = Fault::Crash {
        node: "a".into(),
        at: At::Time(Dur::from_secs(5)),
    };
    shift(&mut f, 3_000_000_000, end);
    assert_eq!(f.at(), Dur::from_secs(8));
    shift(&mut f, -9_000_000_000, end);
    assert_eq!(f.at(), Dur::ZERO);
    shift(&mut f, i64::MAX, end);
    assert_eq!(f.at().ns(), end - 1);
    // After a grant: not before it. Before an expiry: up to a run's length before it.
    let after = |moment: Moment, delay: i64| Fault::Crash {
        node: "a".into(),
        at: At::After(AfterMoment {
            moment,
            node: None,
            nth: 1,
            delay: Dur::from_ns(delay),
        }),
    };
    let mut g = after(Moment::Grant, 5);
    shift(&mut g, -10, end);
    assert_eq!(g.at(), Dur::ZERO);
    let mut x = after(Moment::Expiry, -5);
    shift(&mut x, -10, end);
    assert_eq!(x.at().ns(), -15);
    shift(&mut x, i64::MIN, end);
    assert_eq!(x.at().ns(), 1 - end);
    assert_eq!(x.after().map(|a| a.moment), Some(Moment::Expiry));
}

#[test]
fn a_pair_is_two_distinct_nodes_in_either_order() {
    let mut r = stream(2);
    let mut seen = BTreeMap::new();
    for _ in 0..600 {
        let (a, b) = pair(&mut r, 3);
        assert!(a < 3 && b < 3 && a != b);
        *seen.entry((a, b)).or_insert(0) += 1;
    }
    // All six ordered pairs, about 100 each.
    assert_eq!(seen.len(), 6);
    assert!(seen.values().all(|&c| c > 60), "{seen:?}");
}

#[test]
fn a_crash_finds_its_nodes_next_restart() {
    let crash = |node: &str, s: i64| Fault::Crash {
        node: node.into(),
        at: At::Time(Dur::from_secs(s)),
    };
    let restart = |node: &str, s: i64| Fault::Restart {
        node: node.into(),
        at: At::Time(Dur::from_secs(s)),
    };
    let own = [
        crash("a", 1),
        restart("b", 2),
        restart("a", 3),
        restart("a", 4),
        crash("b", 5),
    ];
    assert_eq!(restart_of(&own, 0), Some(2));
    assert_eq!(restart_of(&own, 1), None);
    assert_eq!(restart_of(&own, 2), None);
    assert_eq!(restart_of(&own, 4), None);
}

#[test]
fn pauses_of_one_node_must_not_touch() {
    let pause = |node: &str, at: At, d: i64| Fault::Pause {
        node: node.into(),
        at,
        duration: Dur::from_ns(d),
        kind: PauseKind::Gc,
        clock: None,
    };
    let time = |ns: i64| At::Time(Dur::from_ns(ns));
    assert!(pauses_apart(&[
        pause("a", time(0), 10),
        pause("a", time(11), 5)
    ]));
    assert!(!pauses_apart(&[
        pause("a", time(11), 5),
        pause("a", time(0), 11)
    ]));
    assert!(!pauses_apart(&[
        pause("a", time(0), 20),
        pause("a", time(5), 1)
    ]));
    assert!(pauses_apart(&[
        pause("a", time(0), 20),
        pause("b", time(5), 1)
    ]));
    // One placed at a moment has no time to meet another's.
    let at_grant = At::After(AfterMoment {
        moment: Moment::Grant,
        node: None,
        nth: 1,
        delay: Dur::from_ns(5),
    });
    assert!(pauses_apart(&[
        pause("a", time(0), 20),
        pause("a", at_grant, 1)
    ]));
}

#[test]
fn a_drawn_restart_follows_its_crash_within_max_down() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let max = n.crashes.as_ref().unwrap().max_down.ns();
    let m = Mutator::new(&s, &n);
    let at = |ns: i64| At::Time(Dur::from_ns(ns));
    let life = |down: i64| {
        vec![
            Fault::Crash {
                node: "a".into(),
                at: at(1000),
            },
            Fault::Restart {
                node: "a".into(),
                at: at(1000 + down),
            },
        ]
    };
    assert!(m.downtimes_within(&life(max)));
    assert!(m.downtimes_within(&life(1)));
    assert!(!m.downtimes_within(&life(max + 1)));
    assert!(!m.downtimes_within(&life(0)));
    // A restart of a node that did not crash (or of another node) is not the envelope's.
    let mut other = life(5);
    other[1] = Fault::Restart {
        node: "b".into(),
        at: at(1005),
    };
    assert!(!m.downtimes_within(&other));
    assert!(!m.downtimes_within(&life(5)[1..]));
    // Without crashes in the envelope there is nothing to bound here.
    let mut no_crashes = n.clone();
    no_crashes.crashes = None;
    assert!(Mutator::new(&s, &no_crashes).downtimes_within(&life(max + 1)));
}

#[test]
fn each_kind_is_bounded_by_its_own_fields() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let each = one_of_each(&n);
    for f in &each {
        assert!(m.bounded(f), "{f:?}");
    }
    let changed = |i: usize, change: &dyn Fn(&mut Fault)| {
        let mut f = each[i].clone();
        change(&mut f);
        m.bounded(&f)
    };
    let over = |max: Dur| Dur::from_ns(max.ns() + 1);
    let pause_max = n.pauses.as_ref().unwrap().max;
    let freeze_max = n.freezes.as_ref().unwrap().max;
    let set_len = |f: &mut Fault, d: Dur| match f {
        Fault::Pause { duration, .. }
        | Fault::Partition { duration, .. }
        | Fault::OneWay { duration, .. }
        | Fault::DelaySpike { duration, .. }
        | Fault::Drop { duration, .. } => *duration = d,
        _ => unreachable!(),
    };
    // Lengths: 1 ns to max, each kind by its own max.
    for (i, max) in [
        (0, pause_max),
        (1, freeze_max),
        (4, n.partitions.as_ref().unwrap().max),
        (5, n.one_way.as_ref().unwrap().max),
        (6, n.delay_spikes.as_ref().unwrap().max),
        (7, n.drops.as_ref().unwrap().max),
    ] {
        assert!(changed(i, &|f| set_len(f, max)), "{i}");
        assert!(!changed(i, &|f| set_len(f, over(max))), "{i}");
        assert!(!changed(i, &|f| set_len(f, Dur::ZERO)), "{i}");
    }
    // A GC pause has no clock; a freeze has the envelope's.
    assert!(!changed(0, &|f| {
        if let Fault::Pause { clock, .. } = f {
            *clock = Some(FreezeClock::CatchUp);
        }
    }));
    assert!(!changed(1, &|f| {
        if let Fault::Pause { clock, .. } = f {
            *clock = Some(FreezeClock::Stall);
        }
    }));
    // A step: neither 0 nor beyond max, either way.
    let step_max = n.steps.as_ref().unwrap().max.ns();
    let step = |by: i64| changed(2, &|f| *f = step_to(f, by));
    assert!(step(step_max) && step(-step_max));
    assert!(!step(0) && !step(step_max + 1) && !step(-step_max - 1));
    // A drift change within rho/2, and only with drift changes in the envelope.
    let half = ppm(half_ppt(n.drift_ppm.unwrap()));
    let drift = |x: f64| {
        changed(3, &|f| {
            if let Fault::DriftChange { drift_ppm, .. } = f {
                *drift_ppm = x;
            }
        })
    };
    assert!(drift(half) && drift(-half) && !drift(half + 1.0) && !drift(-half - 1.0));
    let mut no_changes = n.clone();
    no_changes.drift_changes = None;
    assert!(!Mutator::new(&s, &no_changes).bounded(&each[3]));
    // A partition cuts off one node; a one-way cut joins two.
    assert!(!changed(4, &|f| {
        if let Fault::Partition { groups, .. } = f {
            *groups = vec![vec!["b".into(), "a".into()], vec!["lock".into()]];
        }
    }));
    assert!(!changed(4, &|f| {
        if let Fault::Partition { groups, .. } = f {
            groups.push(vec![]);
        }
    }));
    assert!(!changed(5, &|f| {
        if let Fault::OneWay { to, .. } = f {
            *to = "a".into();
        }
    }));
    // A spike's extra delay by its own max; a drop of the envelope's kinds only.
    let extra_max = n.delay_spikes.as_ref().unwrap().max_extra;
    let extra = |d: Dur| {
        changed(6, &|f| {
            if let Fault::DelaySpike { extra, .. } = f {
                *extra = d;
            }
        })
    };
    assert!(extra(extra_max) && !extra(over(extra_max)) && !extra(Dur::ZERO));
    assert!(!changed(7, &|f| {
        if let Fault::Drop { kinds, .. } = f {
            *kinds = Some(vec![crate::scenario::KindName("Grant".into())]);
        }
    }));
    // Without the kind in the envelope, none is bounded.
    let empty = Nemesis::default();
    let none = Mutator::new(&s, &empty);
    assert!(each.iter().all(|f| !none.bounded(f)));
    // A fault no envelope draws.
    let step_down = Fault::StepDown {
        node: "a".into(),
        at: At::Time(Dur::from_secs(1)),
    };
    assert!(!m.bounded(&step_down));
}

/// `f`, a clock step, stepping by `by`.
fn step_to(f: &Fault, by: i64) -> Fault {
    let mut f = f.clone();
    if let Fault::ClockStep { by: b, .. } = &mut f {
        *b = LocalDur::from_ns(by);
    }
    f
}

/// A fault's length (its `duration`), in ns.
fn length(f: &Fault) -> i64 {
    match f {
        Fault::Pause { duration, .. }
        | Fault::Partition { duration, .. }
        | Fault::OneWay { duration, .. }
        | Fault::DelaySpike { duration, .. }
        | Fault::Drop { duration, .. }
        | Fault::ThreadStall { duration, .. } => duration.ns(),
        _ => panic!("no length: {f:?}"),
    }
}

#[test]
fn a_resize_moves_a_length_by_one_shift_within_its_kinds_cap() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let caps = [
        (0, n.pauses.as_ref().unwrap().max.ns()),
        (1, n.freezes.as_ref().unwrap().max.ns()),
        (4, n.partitions.as_ref().unwrap().max.ns()),
        (5, n.one_way.as_ref().unwrap().max.ns()),
        (7, n.drops.as_ref().unwrap().max.ns()),
    ];
    // From 1 ms and from 1 ms below the cap, so that both ends of the clamp are met.
    for (i, cap) in caps {
        for from in [1_000_000, cap - 1_000_000] {
            let mut each = one_of_each(&n);
            match &mut each[i] {
                Fault::Pause { duration, .. }
                | Fault::Partition { duration, .. }
                | Fault::OneWay { duration, .. }
                | Fault::Drop { duration, .. } => *duration = Dur::from_ns(from),
                _ => unreachable!(),
            }
            let (mut low, mut high) = (false, false);
            for k in 0..60 {
                let mut r = stream(100 + k);
                let d = m.delta(&mut r.clone());
                let mut own = each.clone();
                m.resize(&mut own, i, &mut r);
                let want = from.saturating_add(d).clamp(1, cap);
                assert_eq!(length(&own[i]), want, "kind {i} from {from} by {d}");
                (low, high) = (low || want == 1, high || want == cap);
                assert_eq!(own[..i], each[..i]);
                assert_eq!(own[i + 1..], each[i + 1..]);
            }
            assert!(low || high, "kind {i}: the clamp was never met");
        }
    }
}

#[test]
fn a_resize_keeps_a_steps_sign_redraws_a_drift_and_moves_a_restart() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let each = one_of_each(&n);
    let step_max = n.steps.as_ref().unwrap().max.ns();
    let half = half_ppt(n.drift_ppm.unwrap());
    let max_down = n.crashes.as_ref().unwrap().max_down.ns();
    let spike = n.delay_spikes.as_ref().unwrap();
    let (mut lengths, mut extras) = (0, 0);
    for k in 0..60 {
        let mut r = stream(200 + k);
        let mut after = r.clone();
        let d = m.delta(&mut after);
        // A step of -1 s: still negative, its size moved by d within [1, max].
        let mut own = each.clone();
        m.resize(&mut own, 2, &mut r.clone());
        let want = -(1_000_000_000 + d).clamp(1, step_max);
        assert!(matches!(&own[2], Fault::ClockStep { by, .. } if by.ns() == want));
        // A drift change: drawn afresh within rho/2 after the shift.
        let mut own = each.clone();
        m.resize(&mut own, 3, &mut r.clone());
        let drawn = ppm(after.clone().random_range(-half..=half));
        assert!(matches!(&own[3], Fault::DriftChange { drift_ppm, .. } if *drift_ppm == drawn));
        // A delay spike: its length or its extra delay, by a coin after the shift.
        let mut own = each.clone();
        m.resize(&mut own, 6, &mut r.clone());
        let Fault::DelaySpike {
            duration, extra, ..
        } = &own[6]
        else {
            unreachable!()
        };
        let moved = (1_000_000_000 + d).clamp(1, spike.max.ns());
        if after.clone().random_bool(0.5) {
            assert_eq!((duration.ns(), extra.ns()), (moved, 1_000_000_000));
            lengths += 1;
        } else {
            let moved = (1_000_000_000 + d).clamp(1, spike.max_extra.ns());
            assert_eq!((duration.ns(), extra.ns()), (1_000_000_000, moved));
            extras += 1;
        }
        // A crash (30 s, back at 31 s): it stays, its restart moves by d, down within
        // [1 ns, max_down].
        let mut own = each.clone();
        m.resize(&mut own, 8, &mut r.clone());
        assert_eq!(own[8], each[8]);
        let down = (1_000_000_000 + d).clamp(1, max_down);
        assert_eq!(own[9].at().ns(), 30_000_000_000 + down);
        // A restart alone is not resized.
        let mut own = each.clone();
        m.resize(&mut own, 9, &mut r);
        assert_eq!(own, each);
    }
    assert!(lengths > 10 && extras > 10, "{lengths} {extras}");
}

#[test]
fn a_renode_moves_a_fault_to_any_node_and_a_cut_to_any_pair() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let each = one_of_each(&n);
    let names = ["lock", "a", "b"];
    let mut nodes = BTreeMap::new();
    let mut cut_off = BTreeMap::new();
    let mut pairs = BTreeMap::new();
    for k in 0..90 {
        let r = stream(300 + k);
        let want = names[r.clone().random_range(0..3)];
        for i in [0, 2, 3] {
            let mut f = each[i].clone();
            m.renode(&mut f, &mut r.clone());
            let (Fault::Pause { node, .. }
            | Fault::ClockStep { node, .. }
            | Fault::DriftChange { node, .. }) = &f
            else {
                unreachable!()
            };
            assert_eq!(node, want);
            *nodes.entry(node.clone()).or_insert(0) += 1;
        }
        let mut f = each[4].clone();
        m.renode(&mut f, &mut r.clone());
        let Fault::Partition { groups, .. } = &f else {
            unreachable!()
        };
        let rest: Vec<String> = names
            .iter()
            .filter(|&&x| x != want)
            .map(|x| x.to_string())
            .collect();
        assert_eq!(groups, &vec![vec![want.to_string()], rest]);
        *cut_off.entry(want).or_insert(0) += 1;
        let mut f = each[5].clone();
        m.renode(&mut f, &mut r.clone());
        let (a, b) = pair(&mut r.clone(), 3);
        let Fault::OneWay { from, to, .. } = &f else {
            unreachable!()
        };
        assert_eq!((from.as_str(), to.as_str()), (names[a], names[b]));
        *pairs.entry((a, b)).or_insert(0) += 1;
        // A crash, a spike and a drop stay where they are.
        for i in [6, 7, 8] {
            let mut f = each[i].clone();
            m.renode(&mut f, &mut r.clone());
            assert_eq!(f, each[i]);
        }
    }
    assert_eq!((nodes.len(), cut_off.len(), pairs.len()), (3, 3, 6));
    // With one node there is no other side to cut off.
    let mut one = s.clone();
    one.nodes.truncate(1);
    let m1 = Mutator::new(&one, &n);
    for i in [4, 5] {
        let mut f = each[i].clone();
        m1.renode(&mut f, &mut stream(1));
        assert_eq!(f, each[i]);
    }
}

#[test]
fn an_anchor_places_a_fault_at_a_moment_and_back_at_a_time() {
    let mut s = base();
    s.duration = Dur::from_secs(6); // shorter than T: a delay is at most the run
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let end = s.duration.ns();
    let mut moments = BTreeMap::new();
    let (mut on_any, mut on_one, mut nths) = (0, 0, [0; 4]);
    let mut longest = 0;
    for k in 0..300 {
        let mut r = stream(400 + k);
        let mut f = one_of_each(&n)[0].clone();
        m.anchor(&mut f, &mut r);
        let a = f.after().cloned().expect("placed at a moment");
        *moments.entry(format!("{:?}", a.moment)).or_insert(0) += 1;
        match &a.node {
            None => on_any += 1,
            Some(node) => {
                assert!(s.node_index(node).is_some());
                on_one += 1;
            }
        }
        assert!((1..=3).contains(&a.nth));
        nths[a.nth as usize] += 1;
        let delay = a.delay.ns();
        if a.moment == Moment::Expiry {
            assert!((1 - end..=0).contains(&delay), "{delay}");
        } else {
            assert!((0..end).contains(&delay), "{delay}");
        }
        longest = longest.max(delay.abs());
        // And back: a time in the run, no moment.
        m.anchor(&mut f, &mut r);
        assert!(f.after().is_none() && (0..end).contains(&f.at().ns()));
    }
    assert_eq!(moments.len(), MOMENTS.len(), "{moments:?}");
    assert!(on_any > 100 && on_one > 100, "{on_any} {on_one}");
    assert!(nths[1..].iter().all(|&c| c > 60), "{nths:?}");
    // Delays spread over the run: some beyond nine tenths of it.
    assert!(longest > end / 10 * 9, "{longest}");
}

/// An envelope of one kind of `all`'s: the kind at `KINDS` index `k` (and rho with drift
/// changes).
fn only(all: &Nemesis, k: usize) -> Nemesis {
    let mut n = Nemesis::default();
    match k {
        0 => n.pauses = all.pauses.clone(),
        1 => n.freezes = all.freezes.clone(),
        2 => n.steps = all.steps.clone(),
        4 => {
            n.drift_ppm = all.drift_ppm;
            n.drift_changes = all.drift_changes.clone();
        }
        5 => n.partitions = all.partitions.clone(),
        6 => n.one_way = all.one_way.clone(),
        7 => n.delay_spikes = all.delay_spikes.clone(),
        8 => n.drops = all.drops.clone(),
        _ => n.crashes = all.crashes.clone(),
    }
    n
}

#[test]
fn an_added_fault_is_of_the_envelopes_kind_near_its_time_and_named_among_the_kinds() {
    let s = base();
    let all = profile("all", &s).unwrap();
    let end = s.duration.ns();
    for k in [0, 1, 2, 4, 5, 6, 7, 8, 9] {
        let n = only(&all, k);
        let m = Mutator::new(&s, &n);
        assert!(m.kinds == [k] || (k == 4 && m.kinds == [4]));
        let mut nodes = BTreeMap::new();
        for (j, near) in [-5, 0, 7_000_000_000, end - 1, end, end + 9]
            .iter()
            .enumerate()
        {
            for t in 0..20 {
                let mut r = stream(500 + 100 * j as u64 + t);
                let mut c = Child {
                    scenario: s.clone(),
                    kinds: vec!["steps".into()],
                };
                let mut own = Vec::new();
                m.add(&mut own, *near, &mut c, &mut r);
                let f = own.iter().find(|f| !matches!(f, Fault::Restart { .. }));
                let f = f.expect("one fault added");
                assert_eq!(f.at().ns(), (*near).clamp(0, end - 1), "kind {k}");
                assert!(m.bounded(f), "kind {k}: {f:?}");
                if let Some(node) = node_of(f) {
                    *nodes.entry(node).or_insert(0) += 1;
                }
                // Its kind named once, in the envelope's order.
                let mut want = vec!["steps".to_string()];
                if k != 2 {
                    want.push(KINDS[k].to_string());
                    want.sort_by_key(|x| KINDS.iter().position(|y| y == x));
                }
                assert_eq!(c.kinds, want, "kind {k}");
                // A crash comes back within the run, or not at all.
                if let Fault::Crash { at, .. } = f {
                    let restart = own.iter().find(|f| matches!(f, Fault::Restart { .. }));
                    match restart {
                        Some(back) => {
                            assert!(back.at() > at.offset() && back.at().ns() < end);
                            assert!(m.downtimes_within(&[f.clone(), back.clone()]));
                        }
                        None => assert!(at.ns() >= end - n.crashes.as_ref().unwrap().max_down.ns()),
                    }
                    assert_eq!(own.len(), 1 + usize::from(restart.is_some()));
                } else {
                    assert_eq!(own.len(), 1);
                }
            }
        }
        if ![7, 8].contains(&k) {
            assert_eq!(nodes.len(), 3, "kind {k}: every node in turn");
        }
    }
    // An envelope with no kind to add adds nothing.
    let empty = Nemesis::default();
    let m = Mutator::new(&s, &empty);
    let mut c = Child {
        scenario: s.clone(),
        kinds: vec![],
    };
    let mut own = Vec::new();
    m.add(&mut own, 0, &mut c, &mut stream(1));
    assert!(own.is_empty() && c.kinds.is_empty());
}

/// The node a fault is on, or the node a cut isolates or starts from.
fn node_of(f: &Fault) -> Option<String> {
    match f {
        Fault::Pause { node, .. }
        | Fault::ClockStep { node, .. }
        | Fault::DriftChange { node, .. }
        | Fault::ThreadStall { node, .. }
        | Fault::Crash { node, .. } => Some(node.clone()),
        Fault::Partition { groups, .. } => Some(groups[0][0].clone()),
        Fault::OneWay { from, .. } => Some(from.clone()),
        _ => None,
    }
}

#[test]
fn a_drift_redraws_one_node_or_places_all_adversarially() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let half = half_ppt(n.drift_ppm.unwrap());
    let mut drawn = e_drawn(&s, &n);
    for node in &mut drawn.scenario.nodes {
        node.drift_ppm = Some(0.5);
    }
    let (mut one, mut adversarial) = (0, 0);
    for k in 0..60 {
        let mut c = drawn.clone();
        c.kinds = vec!["pauses".into(), "crashes".into()];
        m.drift(&mut c, &mut stream(600 + k));
        let d: Vec<f64> = c
            .scenario
            .nodes
            .iter()
            .map(|n| n.drift_ppm.unwrap())
            .collect();
        let changed = d.iter().filter(|&&x| x != 0.5).count();
        if changed == 3 {
            adversarial += 1;
            for (i, x) in d.iter().enumerate() {
                let want = if s.runs_fast_adversarially(i) {
                    half
                } else {
                    -half
                };
                assert_eq!(*x, ppm(want));
            }
        } else {
            one += 1;
            assert!(changed <= 1);
            assert!(d.iter().all(|x| x.abs() <= ppm(half)));
        }
        assert_eq!(c.kinds, ["pauses", "drift_ppm", "crashes"]);
        // Named once.
        m.drift(&mut c, &mut stream(700 + k));
        assert_eq!(c.kinds, ["pauses", "drift_ppm", "crashes"]);
    }
    assert!(one > 15 && adversarial > 15, "{one} {adversarial}");
}

/// Run 0 of `s` under `n`, as a child.
fn e_drawn(s: &Scenario, n: &Nemesis) -> Child {
    Child::from(super::super::draw::draw_run(s, n, 0, false))
}

#[test]
fn a_splice_takes_the_first_parents_faults_before_a_cut_and_the_seconds_after() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let e = exploration(&s, &n, 10);
    let child = |run: u64| Child::from(e.draw(run));
    let mut cuts = 0;
    for (x, y) in [(0, 1), (2, 3), (4, 5), (6, 7)] {
        let (a, b) = (child(x), child(y));
        let mut r = stream(800 + x);
        let cut = r.clone().random_range(0..s.duration.ns());
        let mut c = a.clone();
        m.splice(&mut c, &b, &mut r);
        // The scenario's own pause, then a's before the cut and b's from it, by time.
        assert_eq!(c.scenario.faults[0], s.faults[0]);
        let mut want: Vec<Fault> = a.scenario.faults[1..]
            .iter()
            .filter(|f| f.at().ns() < cut)
            .chain(b.scenario.faults[1..].iter().filter(|f| f.at().ns() >= cut))
            .cloned()
            .collect();
        want.sort_by_key(Fault::at);
        assert_eq!(c.scenario.faults[1..], want[..]);
        cuts += usize::from(want.len() < a.scenario.faults.len() - 1 + b.scenario.faults.len() - 1);
        // a's seed and drifts; both kinds, in order, but b's drift only by a's own.
        assert_eq!(c.scenario.seed, a.scenario.seed);
        assert_eq!(drifts(&c.scenario), drifts(&a.scenario));
        let mut kinds: Vec<String> = a.kinds.clone();
        for k in &b.kinds {
            if !kinds.contains(k) && k != "drift_ppm" {
                kinds.push(k.clone());
            }
        }
        kinds.sort_by_key(|k| KINDS.iter().position(|x| x == k));
        assert_eq!(c.kinds, kinds);
    }
    assert!(cuts > 0);
}

#[test]
fn each_mutation_happens() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let start = e_drawn(&s, &n);
    let faults = start.scenario.faults.len();
    assert!(faults > 3, "{faults}");
    let (mut more, mut fewer, mut anchored, mut drifted, mut changed) = (0, 0, 0, 0, 0);
    for k in 0..400 {
        let mut c = start.clone();
        m.mutate(&mut c, &mut stream(900 + k));
        let f = &c.scenario.faults;
        // The scenario's own fault first, the rest by time.
        assert_eq!(f[0], s.faults[0]);
        assert!(f[1..].windows(2).all(|w| w[0].at() <= w[1].at()));
        more += usize::from(f.len() > faults);
        fewer += usize::from(f.len() < faults);
        anchored += usize::from(f.iter().any(|f| f.after().is_some()));
        drifted += usize::from(drifts(&c.scenario) != drifts(&start.scenario));
        changed += usize::from(f.len() == faults && *f != start.scenario.faults);
    }
    // Eight mutations, one each time: adds (2, 7 without a focus, and every op without its
    // fault) and the rest, about 50 each; a drift placed adversarially where it already was
    // changes nothing.
    assert!(more > 40 && fewer > 25, "{more} {fewer}");
    assert!(
        anchored > 30 && drifted > 15 && changed > 100,
        "{anchored} {drifted} {changed}"
    );
}

/// Every node's drift, in node order.
fn drifts(s: &Scenario) -> Vec<Option<f64>> {
    s.nodes.iter().map(|n| n.drift_ppm).collect()
}

#[test]
fn a_quarter_of_the_children_have_a_second_parent() {
    let s = base();
    let member = |run: u64| Member {
        placement: Vec::new(),
        rank: (0, run as i64, run),
        child: Child {
            scenario: s.clone(),
            kinds: vec![],
        },
        focus: None,
    };
    let two = [member(0), member(1)];
    let mut r = stream(3);
    let spliced = (0..800)
        .filter(|_| parents(&two, &mut r).1.is_some())
        .count();
    assert!((150..=250).contains(&spliced), "{spliced} of 800");
    // One member: nothing to splice with.
    let one = [member(0)];
    assert!((0..100).all(|_| parents(&one, &mut r).1.is_none()));
}

#[test]
fn the_first_bred_run_of_a_generation_follows_its_immigrants() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let e = exploration(&s, &n, 1000);
    let archive = archive(&e);
    for g in 0..3 {
        let first = FIRST + g * GENERATION;
        let last_immigrant = first + IMMIGRANTS - 1;
        let swarm = |run: u64| e.draw(run).scenario.to_ron();
        assert_eq!(
            breed(&e, &archive, last_immigrant).scenario.to_ron(),
            swarm(last_immigrant)
        );
        let bred = last_immigrant + 1;
        assert_ne!(breed(&e, &archive, bred).scenario.to_ron(), swarm(bred));
    }
    // Without an archive, every run is swarm's.
    assert_eq!(
        breed(&e, &[], FIRST + IMMIGRANTS).scenario.to_ron(),
        e.draw(FIRST + IMMIGRANTS).scenario.to_ron()
    );
}

#[test]
fn a_pick_is_any_fault_but_a_restart() {
    let n = profile("all", &base()).unwrap();
    let each = one_of_each(&n);
    let mut r = stream(4);
    let mut seen = BTreeMap::new();
    for _ in 0..500 {
        let i = pick(&each, &mut r).expect("faults to pick from");
        assert!(!matches!(each[i], Fault::Restart { .. }));
        *seen.entry(i).or_insert(0) += 1;
    }
    // Nine of the ten (all but the restart), about 55 times each.
    assert_eq!(seen.len(), 9);
    assert!(seen.values().all(|&c| c > 25), "{seen:?}");
    assert_eq!(pick(&[], &mut r), None);
    assert_eq!(pick(&each[9..], &mut r), None);
}

#[test]
fn each_mutation_does_what_its_number_says() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let each = one_of_each(&n);
    let child = || Child {
        scenario: s.clone(),
        kinds: vec![],
    };
    let (crash, pause) = (8, 0);
    for k in 0..40 {
        let r = stream(1000 + k);
        let apply = |op: u64, i: Option<usize>| {
            let (mut own, mut c) = (each.clone(), child());
            m.apply(op, i, &mut own, &mut c, &mut r.clone());
            (own, c)
        };
        // 0: the crash and its restart move by one shift, together.
        let d = m.delta(&mut r.clone());
        let (own, _) = apply(0, Some(crash));
        assert_eq!(
            own[crash].at().ns(),
            (30_000_000_000 + d).clamp(0, s.duration.ns() - 1)
        );
        assert_eq!(own[9].at().ns() - own[crash].at().ns(), 1_000_000_000);
        // 1: a resize, 3: a renode, with the same draws.
        let mut want = each.clone();
        m.resize(&mut want, pause, &mut r.clone());
        assert_eq!(apply(1, Some(pause)).0, want);
        let mut want = each.clone();
        m.renode(&mut want[2], &mut r.clone());
        assert_eq!(apply(3, Some(2)).0, want);
        // 4: the crash goes with its restart; a pause alone.
        let (own, _) = apply(4, Some(crash));
        assert_eq!(own[..], each[..crash]);
        let (own, _) = apply(4, Some(pause));
        assert_eq!(own[..], each[1..]);
        // 5: a drift (with rho in the envelope), nothing else.
        let (own, c) = apply(5, None);
        assert_eq!(own, each);
        assert_eq!(c.kinds, ["drift_ppm"]);
        // 6: a pause at a moment; a crash stays at its time (a fault is added instead).
        let (own, _) = apply(6, Some(pause));
        assert!(own[pause].after().is_some() && own.len() == each.len());
        let (own, _) = apply(6, Some(crash));
        assert!(own.iter().all(|f| f.after().is_none()));
        assert!(own.len() > each.len());
        // 2: a fault added near a picked one, one shift away.
        let mut after = r.clone();
        let near = each[pick(&each, &mut after).unwrap()].at().ns() + m.delta(&mut after);
        let (own, c) = apply(2, Some(pause));
        assert_eq!(own[..each.len()], each[..]);
        // The fault added comes last (after a crash's restart).
        let added = own.last().expect("a fault added");
        assert_eq!(added.at().ns(), near.clamp(0, s.duration.ns() - 1));
        assert_eq!(c.kinds.len(), 1);
        // Without a fault to pick, one is added anywhere in the run.
        let (mut own, mut c) = (Vec::new(), child());
        m.apply(0, None, &mut own, &mut c, &mut r.clone());
        assert!(!own.is_empty());
    }
    // Without rho, 5 adds a fault and leaves the drifts.
    let mut no_rho = n.clone();
    no_rho.drift_ppm = None;
    no_rho.drift_changes = None;
    let m = Mutator::new(&s, &no_rho);
    let (mut own, mut c) = (each[..2].to_vec(), child());
    m.apply(5, None, &mut own, &mut c, &mut stream(5));
    assert_eq!(own.len(), 3);
    assert_eq!(drifts(&c.scenario), drifts(&s));
    assert!(!c.kinds.iter().any(|k| k == "drift_ppm"));
}

#[test]
fn an_aimed_fault_lands_on_the_focus_node_within_t_before_its_end() {
    // The focus: a (node 1), whose belief ended at 60 s before the closest changed handover;
    // T = 10 s, so an aimed fault starts in [50 s, 60 s], at 60 s less the first draw.
    let s = base();
    let n = profile("all", &s).unwrap();
    let mut m = Mutator::new(&s, &n);
    m.focus = Some((1, 60_000_000_000));
    let each = one_of_each(&n);
    let child = || Child {
        scenario: s.clone(),
        kinds: vec![],
    };
    let (step, partition, one_way, spike, crash) = (2, 4, 5, 6, 8);
    let mut added_on_a = 0;
    for k in 0..40 {
        let r = stream(2000 + k);
        let want_at = 60_000_000_000 - r.clone().random_range(0..=10_000_000_000i64);
        let aim = |i: Option<usize>| {
            let (mut own, mut c) = (each.clone(), child());
            m.aim(&mut own, i, &mut c, &mut r.clone());
            own
        };
        // A step moves onto a, at the time drawn; nothing else changes.
        let own = aim(Some(step));
        assert!(matches!(&own[step], Fault::ClockStep { node, .. } if node == "a"));
        assert_eq!(own[step].start(), &At::Time(Dur::from_ns(want_at)));
        assert_eq!(own.len(), each.len());
        assert_eq!(own[..step], each[..step]);
        // A partition cuts a off from the rest; a one-way cut has a at one end.
        let own = aim(Some(partition));
        let Fault::Partition { groups, .. } = &own[partition] else {
            panic!("a partition")
        };
        assert_eq!(
            groups,
            &[vec!["a".to_string()], vec!["lock".into(), "b".into()]]
        );
        let own = aim(Some(one_way));
        let Fault::OneWay { from, to, .. } = &own[one_way] else {
            panic!("a one-way cut")
        };
        assert!((from == "a") != (to == "a"), "{from} -> {to}");
        // A delay spike (of no node) or a crash stays as it was, and a fault is added at the
        // time drawn (on a, when it can be on a node).
        for i in [spike, crash] {
            let own = aim(Some(i));
            assert_eq!(own[..each.len()], each[..]);
            assert!(own.len() > each.len());
            let added = own.last().unwrap();
            if m.can_be_on(added, 1) {
                assert_eq!(added.start(), &At::Time(Dur::from_ns(want_at)));
                if let Fault::Pause { node, .. }
                | Fault::ClockStep { node, .. }
                | Fault::DriftChange { node, .. } = added
                {
                    assert_eq!(node, "a");
                }
                added_on_a += 1;
            }
        }
    }
    // Of 80 faults added, most are of a kind that can be on a node (8 of the envelope's 10).
    assert!(added_on_a > 30, "{added_on_a}");
    // Without a focus, mutation 7 adds a fault near a picked one, as mutation 2 does.
    m.focus = None;
    for k in 0..10 {
        let r = stream(3000 + k);
        let apply = |op: u64| {
            let (mut own, mut c) = (each.clone(), child());
            m.apply(op, Some(0), &mut own, &mut c, &mut r.clone());
            own
        };
        assert_eq!(apply(7), apply(2));
    }
}

#[test]
fn a_freeze_is_resized_by_the_freezes_max() {
    let s = base();
    let mut n = profile("all", &s).unwrap();
    let pause_max = n.pauses.as_ref().unwrap().max.ns();
    n.freezes.as_mut().unwrap().max = Dur::from_ns(pause_max / 4);
    let m = Mutator::new(&s, &n);
    let mut each = one_of_each(&n);
    if let Fault::Pause { duration, .. } = &mut each[1] {
        *duration = Dur::from_ns(pause_max / 4);
    }
    let mut grew = 0;
    for k in 0..40 {
        let mut own = each.clone();
        m.resize(&mut own, 1, &mut stream(1100 + k));
        assert!(length(&own[1]) <= pause_max / 4);
        grew += usize::from(length(&own[1]) == pause_max / 4);
    }
    // Half the shifts are upward: the cap holds them.
    assert!(grew > 10, "{grew}");
}

#[test]
fn added_steps_and_drift_changes_go_either_way() {
    let s = base();
    let all = profile("all", &s).unwrap();
    for k in [2, 4] {
        let envelope = only(&all, k);
        let m = Mutator::new(&s, &envelope);
        let (mut neg, mut pos) = (0, 0);
        for t in 0..100 {
            let mut own = Vec::new();
            let mut c = Child {
                scenario: s.clone(),
                kinds: vec![],
            };
            m.add(&mut own, 1_000, &mut c, &mut stream(1200 + t));
            let x = match &own[0] {
                Fault::ClockStep { by, .. } => by.ns() as f64,
                Fault::DriftChange { drift_ppm, .. } => *drift_ppm,
                f => panic!("{f:?}"),
            };
            neg += usize::from(x < 0.0);
            pos += usize::from(x > 0.0);
        }
        assert!(neg > 30 && pos > 30, "kind {k}: {neg} {pos}");
    }
}

#[test]
fn a_crash_added_a_nanosecond_before_the_end_stays_down() {
    // max_down 1 ns: the restart would be at the run's end, which is not in the run.
    let s = base();
    let mut n = only(&profile("all", &s).unwrap(), 9);
    n.crashes.as_mut().unwrap().max_down = Dur::from_ns(1);
    let m = Mutator::new(&s, &n);
    let end = s.duration.ns();
    for (near, restarts) in [(end, 0), (end - 2, 1)] {
        let mut own = Vec::new();
        let mut c = Child {
            scenario: s.clone(),
            kinds: vec![],
        };
        m.add(&mut own, near, &mut c, &mut stream(6));
        let back: Vec<i64> = own
            .iter()
            .filter(|f| matches!(f, Fault::Restart { .. }))
            .map(|f| f.at().ns())
            .collect();
        assert_eq!(back.len(), restarts, "near {near}");
        assert!(back.iter().all(|&b| b == near.min(end - 1) + 1));
    }
}

#[test]
fn a_fault_at_the_cut_comes_from_the_second_parent() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let r = stream(7);
    let cut = r.clone().random_range(0..s.duration.ns());
    let pause = |node: &str, at: i64| Fault::Pause {
        node: node.into(),
        at: At::Time(Dur::from_ns(at)),
        duration: Dur::from_ns(1),
        kind: PauseKind::Gc,
        clock: None,
    };
    let child = |faults: Vec<Fault>| {
        let mut c = s.clone();
        c.faults.extend(faults);
        Child {
            scenario: c,
            kinds: vec!["pauses".into()],
        }
    };
    let mut a = child(vec![pause("a", cut - 1), pause("a", cut)]);
    let b = child(vec![pause("b", cut - 1), pause("b", cut)]);
    m.splice(&mut a, &b, &mut r.clone());
    assert_eq!(
        a.scenario.faults[1..],
        [pause("a", cut - 1), pause("b", cut)]
    );
}

#[test]
fn an_anchor_draws_its_moment_node_delay_and_nth_in_turn() {
    let mut s = base();
    s.duration = Dur::from_secs(6);
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let names = ["lock", "a", "b"];
    for k in 0..50 {
        let r = stream(1300 + k);
        let mut f = one_of_each(&n)[0].clone();
        m.anchor(&mut f, &mut r.clone());
        // The draws, in the order the mutation makes them.
        let mut d = r.clone();
        let moment = MOMENTS[d.random_range(0..MOMENTS.len())];
        let node = d
            .random_bool(0.5)
            .then(|| names[d.random_range(0..3)].to_string());
        let span = d.random_range(0..=s.duration.ns() - 1); // the run is shorter than T
        let nth = d.random_range(1..=3);
        let delay = if moment == Moment::Expiry {
            -span
        } else {
            span
        };
        assert_eq!(
            f.after(),
            Some(&AfterMoment {
                moment,
                node,
                nth,
                delay: Dur::from_ns(delay),
            })
        );
    }
}

#[test]
fn the_envelope_holds_at_its_edges() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let with = |own: Vec<Fault>| {
        let mut c = s.clone();
        c.faults.extend(own);
        c
    };
    // The scenario's own fault and nothing of the envelope's: inside; without its own: not.
    assert!(m.inside(&with(vec![])));
    let mut bare = s.clone();
    bare.faults.clear();
    assert!(!m.inside(&bare));
    // A crash of b (which starts at 1 s) at its start, or 1 ns before it.
    let crash = |at: i64| {
        vec![Fault::Crash {
            node: "b".into(),
            at: At::Time(Dur::from_ns(at)),
        }]
    };
    assert!(m.inside(&with(crash(1_000_000_000))));
    assert!(!m.inside(&with(crash(999_999_999))));
    // A drift change in the run's last nanosecond, or at its end.
    let change = |at: i64| Fault::DriftChange {
        node: "a".into(),
        at: At::Time(Dur::from_ns(at)),
        drift_ppm: 1.0,
    };
    let end = s.duration.ns();
    assert!(m.inside(&with(vec![change(end - 1)])));
    assert!(!m.inside(&with(vec![change(end)])));
    // As many faults as a scenario may list, and one more.
    let most = limits::MAX_FAULTS - s.faults.len();
    let many: Vec<Fault> = (0..most as i64).map(|i| change(1000 * i)).collect();
    assert!(m.inside(&with(many.clone())));
    let mut more = many;
    more.push(change(end - 1));
    assert!(!m.inside(&with(more)));
}

/// Thread stalls: the mutator adds them only on the nodes with the loop the envelope stops
/// (the contenders `a` and `b` for the renewal loop; every node for the worker), of the
/// envelope's thread, within its `max`; a renode keeps them there; two stalls of one loop of
/// a node must not touch, while a stall and a pause, or stalls of both loops, may.
#[test]
fn thread_stalls_go_to_the_nodes_with_the_loop_and_stay_apart() {
    let s = base();
    let threads = profile("threads", &s).unwrap();
    let m = Mutator::new(&s, &threads);
    assert_eq!(
        (m.kinds.clone(), m.stallable.clone()),
        (vec![10], vec![1, 2])
    );
    let (mut nodes, mut renoded) = (BTreeMap::new(), BTreeMap::new());
    let (mut moved, mut resized) = (0, 0);
    for t in 0..40 {
        let mut r = stream(900 + t);
        let mut c = Child {
            scenario: s.clone(),
            kinds: vec![],
        };
        let mut own = Vec::new();
        m.add(&mut own, 7_000_000_000, &mut c, &mut r);
        let [f] = &mut own[..] else {
            panic!("one stall added: {own:?}")
        };
        assert!(m.bounded(f), "{f:?}");
        assert!(matches!(
            f,
            Fault::ThreadStall {
                thread: Thread::Renewal,
                ..
            }
        ));
        let was = node_of(f).unwrap();
        *nodes.entry(was.clone()).or_insert(0) += 1;
        m.renode(f, &mut r);
        *renoded.entry(node_of(f).unwrap()).or_insert(0) += 1;
        moved += usize::from(node_of(f).unwrap() != was);
        // A resize moves the length and keeps it within [1 ns, max].
        let before = length(&own[0]);
        m.resize(&mut own, 0, &mut r);
        assert!(m.bounded(&own[0]), "{:?}", own[0]);
        resized += usize::from(length(&own[0]) != before);
        assert_eq!(c.kinds, ["thread_stalls"]);
    }
    assert_eq!(nodes.keys().collect::<Vec<_>>(), ["a", "b"]);
    // A renode draws among the nodes with the loop: both, never the grantor, moving about
    // half of the stalls; a resize moves nearly every length.
    assert_eq!(renoded.keys().collect::<Vec<_>>(), ["a", "b"]);
    assert!((8..=32).contains(&moved), "{moved} of 40 moved");
    assert!(resized > 30, "{resized} of 40 resized");
    // Past the envelope's max, or of the other loop: out.
    let stall = |node: &str, thread, at: i64, d: i64| Fault::ThreadStall {
        node: node.into(),
        thread,
        at: At::Time(Dur::from_ns(at)),
        duration: Dur::from_ns(d),
    };
    let max = threads.thread_stalls.as_ref().unwrap().max.ns();
    assert!(m.bounded(&stall("a", Thread::Renewal, 0, max)));
    assert!(!m.bounded(&stall("a", Thread::Renewal, 0, max + 1)));
    assert!(!m.bounded(&stall("a", Thread::Worker, 0, 1)));
    let worker = Nemesis {
        thread_stalls: threads.thread_stalls.clone().map(|t| ThreadStalls {
            thread: Thread::Worker,
            ..t
        }),
        ..Nemesis::default()
    };
    assert_eq!(Mutator::new(&s, &worker).stallable, [0, 1, 2]);
    // Apart per loop of a node: touching stalls of one loop meet; of two loops, or a stall
    // and a pause, they do not.
    let (r, w) = (Thread::Renewal, Thread::Worker);
    assert!(!pauses_apart(&[stall("a", r, 0, 10), stall("a", r, 10, 5)]));
    assert!(pauses_apart(&[stall("a", r, 0, 10), stall("a", r, 11, 5)]));
    assert!(pauses_apart(&[stall("a", r, 0, 10), stall("a", w, 5, 5)]));
    assert!(pauses_apart(&[stall("a", r, 0, 10), stall("b", r, 5, 5)]));
    let pause = Fault::Pause {
        node: "a".into(),
        at: At::Time(Dur::from_ns(5)),
        duration: Dur::from_ns(5),
        kind: PauseKind::Gc,
        clock: None,
    };
    assert!(pauses_apart(&[stall("a", r, 0, 10), pause]));
}

/// Guided search under the `threads` profile breeds children inside it: stalls on the
/// contenders only, apart, within max.
#[test]
fn every_child_under_thread_stalls_is_inside() {
    let s = base();
    let n = profile("threads", &s).unwrap();
    let stalls: usize = children_inside(&s, &n, 2)
        .iter()
        .map(|(_, c)| {
            let faults = c.scenario.faults.iter();
            faults
                .filter(|f| matches!(f, Fault::ThreadStall { .. }))
                .count()
        })
        .sum();
    assert!(stalls > 64, "{stalls}");
}

/// A record of run `run` with slack `slack` (no closest call, no violation).
fn slack_record(run: u64, slack: Option<i64>) -> RunRecord {
    RunRecord {
        run,
        seed: run,
        kinds: Vec::new(),
        violation: None,
        min_slack_ns: slack,
        closest_call_ns: None,
        recovery_margin_ns: None,
        events: 1,
        guide: None,
    }
}

/// Generation 1 is runs 64 to 95: 4 immigrants, 28 bred. With 21 of the 28 at one slack
/// (4 x 21 = 84 >= 3 x 28 = 84) it is captured; with 20 (80 < 84) it is not. Immigrants do not
/// count, a generation not yet whole is not judged, and generation 0 (swarm's) never is.
#[test]
fn a_generation_mostly_alike_is_captured() {
    let records = |alike: u64, immigrants_alike: bool, extra: u64| -> Vec<RunRecord> {
        (0..FIRST + GENERATION + extra)
            .map(|run| {
                let k = run.wrapping_sub(FIRST);
                let same = if run < FIRST {
                    true
                } else if k < IMMIGRANTS {
                    immigrants_alike
                } else {
                    k - IMMIGRANTS < alike
                };
                slack_record(run, Some(if same { 7 } else { run as i64 }))
            })
            .collect()
    };
    assert_eq!(captured_generations(&records(21, false, 0)), (1, 1));
    assert_eq!(captured_generations(&records(20, true, 0)), (0, 1));
    // Generation 2 has begun but is not whole: one judged.
    assert_eq!(captured_generations(&records(28, false, 5)), (1, 1));
    assert_eq!(
        captured_generations(&records(0, false, 0)[..FIRST as usize]),
        (0, 0)
    );
}
