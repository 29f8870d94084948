//! Metamorphic properties: changes to a scenario that must not change its run.
//!
//! Adding faults that change nothing (a drift change to the rate a clock already has, a 0 ns
//! wall-clock step, a partition whose one group holds every node) anywhere in a random world
//! changes no byte of the summary but the count of events (each node fault is one event) and
//! when the faults end (a no-op fault is still one), and recovery only if that moved. And
//! renaming the nodes changes only the names in it. Worlds are those of the determinism
//! property: every strategy, every kind of fault, random fault generators.

use crate::common::*;
use crate::properties::{any_world, d, World};
use leasesim::Summary;
use proptest::collection::vec;
use proptest::prelude::*;

fn json(s: &Summary) -> serde_json::Value {
    serde_json::to_value(s).expect("summary serializes")
}

/// A no-op fault: `(kind, node index, at in [0, 1) of the run)`. Kind 0: drift change to the
/// node's own rate; 1: a 0 ns step; 2: a partition with one group of every node.
fn no_op() -> impl Strategy<Value = (u8, usize, f64)> {
    (0u8..3, 0usize..16, 0.0f64..1.0)
}

/// The names of a world's nodes, in order (`g`, `c0`, `c1`, ...).
fn node_names(w: &World) -> Vec<String> {
    (0..w.nodes.len())
        .map(|i| {
            if i == 0 {
                "g".to_string()
            } else {
                format!("c{}", i - 1)
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn no_op_faults_change_nothing(w in any_world(), extra in vec(no_op(), 1..6)) {
        let plain = run_text(&w.ron());
        prop_assume!(!plain.truncated);
        let names = node_names(&w);
        // A node's rate is its drift as run, unless the world changes it somewhere.
        let changes_drift = |name: &str| {
            w.faults
                .iter()
                .any(|f| f.starts_with("DriftChange") && f.contains(&format!("\"{name}\"")))
        };
        let mut noisy = w.clone();
        let mut node_faults = 0;
        for (kind, i, frac) in extra {
            let name = &names[i % names.len()];
            let at = d((frac * w.duration_ns as f64) as i64);
            match kind {
                0 if !changes_drift(name) => {
                    let ppm = plain.drift_ppm[name];
                    noisy.faults.push(format!(
                        "DriftChange(node: \"{name}\", at: {at}, drift_ppm: {ppm:?})"
                    ));
                    node_faults += 1;
                }
                0 => {}
                1 => {
                    noisy.faults.push(format!("ClockStep(node: \"{name}\", at: {at}, by: \"0s\")"));
                    node_faults += 1;
                }
                _ => {
                    let all: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                    noisy.faults.push(format!(
                        "Partition(at: {at}, duration: \"5s\", groups: [[{}], []])",
                        all.join(", ")
                    ));
                }
            }
        }
        let text = noisy.ron();
        let with = run_text(&text);
        let (mut a, mut b) = (json(&plain), json(&with));
        // A no-op fault is still a fault: the faults' end can only move later, and recovery,
        // judged from it, changes only if it moved.
        for field in ["events", "faults_end_ns", "recovery_ns"] {
            a.as_object_mut().unwrap().remove(field);
            b.as_object_mut().unwrap().remove(field);
        }
        prop_assert_eq!(a, b, "no-op faults changed the run of\n{}", text);
        prop_assert_eq!(with.events, plain.events + node_faults, "{}", text);
        prop_assert!(with.faults_end_ns >= plain.faults_end_ns, "{}", text);
        if with.faults_end_ns == plain.faults_end_ns {
            prop_assert_eq!(with.recovery_ns, plain.recovery_ns, "{}", text);
        }
    }

    #[test]
    fn renaming_nodes_changes_only_names(w in any_world()) {
        let text = w.ron();
        let plain = run_text(&text);
        // New names sort in the opposite order to the old ones (g < c.. becomes a < z..).
        let names = node_names(&w);
        let renamed_of = |i: usize| {
            if i == 0 { "a-grantor".to_string() } else { format!("z{}-node", 9 - i) }
        };
        let mut renamed_text = text.clone();
        for (i, n) in names.iter().enumerate() {
            renamed_text = renamed_text.replace(&format!("\"{n}\""), &format!("\"{}\"", renamed_of(i)));
        }
        let renamed = run_text(&renamed_text);
        let mut back = serde_json::to_string(&renamed).unwrap();
        for (i, n) in names.iter().enumerate() {
            back = back.replace(&format!("\"{}\"", renamed_of(i)), &format!("\"{n}\""));
        }
        // Both through text, so that both floats take the same parse.
        let back: serde_json::Value = serde_json::from_str(&back).unwrap();
        let plain: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&plain).unwrap()).unwrap();
        prop_assert_eq!(back, plain, "renaming changed the run of\n{}", renamed_text);
    }
}
