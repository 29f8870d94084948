//! Guided search: ranks, tournaments, each mutation and the envelope it keeps, derived from the
//! same random draws the mutation makes.

use super::*;
use crate::explore::Exploration;
use crate::scenario::nemesis::profile;
use crate::scenario::FreezeClock;

/// `lock`, `a`, `b`, T = 10 s, 2 min, explored under the `all` profile.
fn base() -> Scenario {
    Scenario::from_ron(
        r#"Scenario(
            seed: 3,
            duration: "2min",
            lease: (duration: "10s", renew_every: "3s"),
            strategy: TwoSided(holder_margin: "100ms"),
            nodes: [
                (name: "lock", role: Grantor),
                (name: "a", role: Contender),
                (name: "b", role: Contender, start: "1s"),
            ],
            faults: [Pause(node: "a", at: "50s", duration: "1s")],
        )"#,
    )
    .unwrap()
}

/// An archive of swarm's runs 0 to 15, ranked by run (no run is needed).
fn archive(e: &Exploration) -> Vec<Member> {
    (0..16)
        .map(|run| {
            let d = e.draw(run);
            Member {
                rank: (0, run as i64, run),
                child: Child {
                    scenario: d.scenario,
                    kinds: d.kinds.iter().map(|k| k.to_string()).collect(),
                },
            }
        })
        .collect()
}

#[test]
fn every_child_is_inside_the_envelope_and_most_are_bred() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let e = Exploration {
        base: &s,
        nemesis: &n,
        swarm: true,
        guided: true,
        runs: 1000,
    };
    let m = Mutator::new(&s, &n);
    let archive = archive(&e);
    let mut bred = 0;
    for run in FIRST..FIRST + 4 * GENERATION {
        let c = breed(&e, &archive, run);
        // Deterministic: the same run breeds the same child.
        assert_eq!(
            c.scenario.to_ron(),
            breed(&e, &archive, run).scenario.to_ron()
        );
        assert!(m.inside(&c.scenario), "run {run}");
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
fn a_schedule_outside_the_envelope_is_refused() {
    let s = base();
    let n = profile("all", &s).unwrap();
    let m = Mutator::new(&s, &n);
    let e = Exploration {
        base: &s,
        nemesis: &n,
        swarm: true,
        guided: true,
        runs: 10,
    };
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

#[test]
fn the_archive_ranks_least_slack_first_and_no_handover_last() {
    let rec = |run: u64, slack: Option<i64>| RunRecord {
        run,
        seed: run,
        kinds: vec![],
        violation: None,
        min_slack_ns: slack,
        closest_call_ns: None,
        events: 0,
    };
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
    let rec = |run: u64, slack: Option<i64>, call: Option<i64>| RunRecord {
        run,
        seed: run,
        kinds: vec![],
        violation: None,
        min_slack_ns: slack,
        closest_call_ns: call,
        events: 0,
    };
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

#[test]
fn a_tournament_is_won_by_the_better_of_two() {
    let s = base();
    let member = |slack: i64, run: u64| Member {
        rank: (0, slack, run),
        child: Child {
            scenario: s.clone(),
            kinds: vec![],
        },
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
