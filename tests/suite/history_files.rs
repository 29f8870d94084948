//! The history files `run --history` writes, read back with parsers of their formats: porcupine's
//! JSON with serde_json (unknown fields refused), Knossos's and Elle's EDN with an EDN reader.
//! Each must hold the run's operations as the run judged them: the stale reads `summary.json`
//! counts, the register's order of each key's writes, and, in the EDN, an invocation and one
//! completion per operation on a process that serves one operation at a time.

use crate::common::{leasesim, workdir};
use edn_format::{Keyword, Value as Edn};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct PorcupineOp {
    ClientId: usize,
    Input: Input,
    Call: i64,
    Output: Output,
    Return: i64,
    Order: Option<u64>,
    Stale: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    op: u8,
    key: String,
    value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Output {
    value: String,
}

/// The run of `scenario` with its history: the directory of its files.
fn run_with_history(name: &str, scenario: &str) -> std::path::PathBuf {
    let dir = workdir(name);
    let o = leasesim(&["run", scenario, "--history", "--out", "out"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir.join("out").join(scenario)
}

fn summary_count(dir: &Path, field: &str) -> u64 {
    let s: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    s[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} in summary.json"))
}

/// One line of an EDN history, its keys read.
struct Line {
    index: i64,
    time: i64,
    kind: String,
    process: i64,
    f: String,
    value: Edn,
}

fn keyword(name: &str) -> Edn {
    Edn::Keyword(Keyword::from_name(name))
}

fn edn_lines(path: &Path) -> Vec<Line> {
    let text = fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .map(|(n, line)| {
            let Edn::Map(m) = edn_format::parse_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e:?}", path.display(), n + 1))
            else {
                panic!("{}:{}: not a map", path.display(), n + 1);
            };
            assert_eq!(m.len(), 6, "{line}");
            let int = |k: &str| match &m[&keyword(k)] {
                Edn::Integer(i) => *i,
                other => panic!("{k} is {other:?} in {line}"),
            };
            let kw = |k: &str| match &m[&keyword(k)] {
                Edn::Keyword(w) => w.name().to_string(),
                other => panic!("{k} is {other:?} in {line}"),
            };
            Line {
                index: int("index"),
                time: int("time"),
                kind: kw("type"),
                process: int("process"),
                f: kw("f"),
                value: m[&keyword("value")].clone(),
            }
        })
        .collect()
}

/// The EDN history's shape: indices 0, 1, ...; times that never go back; per process, an
/// invocation then its completion (`:ok`, `:fail`, or `:info`, after which the process is never
/// used again). Returns the number of invocations of each completion type.
fn check_shape(lines: &[Line]) -> BTreeMap<String, usize> {
    let mut open: BTreeMap<i64, usize> = BTreeMap::new();
    let mut retired: BTreeSet<i64> = BTreeSet::new();
    let mut types: BTreeMap<String, usize> = BTreeMap::new();
    for (n, l) in lines.iter().enumerate() {
        assert_eq!(l.index, n as i64);
        if n > 0 {
            assert!(
                l.time >= lines[n - 1].time,
                "time goes back at line {}",
                n + 1
            );
        }
        assert!(!retired.contains(&l.process), "line {}", n + 1);
        match l.kind.as_str() {
            "invoke" => assert!(open.insert(l.process, n).is_none(), "line {}", n + 1),
            "ok" | "fail" | "info" => {
                let at = open
                    .remove(&l.process)
                    .expect("a completion of an invocation");
                assert_eq!(lines[at].f, l.f, "line {}", n + 1);
                if l.kind == "info" {
                    retired.insert(l.process);
                }
            }
            other => panic!("type {other} at line {}", n + 1),
        }
        *types.entry(l.kind.clone()).or_default() += 1;
    }
    assert!(open.is_empty(), "every invocation completes: {open:?}");
    types
}

/// `[key value]` as (key, value), `value` `None` for `nil`.
fn pair(v: &Edn) -> (i64, Option<i64>) {
    match v {
        Edn::Vector(kv) if kv.len() == 2 => match (&kv[0], &kv[1]) {
            (Edn::Integer(k), Edn::Integer(v)) => (*k, Some(*v)),
            (Edn::Integer(k), Edn::Nil) => (*k, None),
            other => panic!("{other:?}"),
        },
        other => panic!("not [key value]: {other:?}"),
    }
}

/// A run where a frozen Raft leader serves reads its successor's commits made stale, and writes
/// are refused, lost and acknowledged: every kind of completion is there.
#[test]
fn the_history_files_read_back_as_the_run_judged_them() {
    let dir = run_with_history("history_files", "raft-frozen-leader-misses-its-own-write");
    let stale = summary_count(&dir, "stale_reads");
    assert!(stale > 0);

    let json = fs::read_to_string(dir.join("history.json")).unwrap();
    let ops: Vec<PorcupineOp> = serde_json::from_str(&json).expect("porcupine's operations");
    assert_eq!(ops.iter().filter(|o| o.Stale).count() as u64, stale);
    let mut written: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut orders: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    // The clients are the replicas that took requests as leaders: the frozen r1 and its
    // successor r2 (what a follower refuses, the JSON leaves out).
    let clients: BTreeSet<usize> = ops.iter().map(|o| o.ClientId).collect();
    assert_eq!(clients, BTreeSet::from([0, 1]));
    for o in &ops {
        assert!(o.Call <= o.Return);
        match o.Input.op {
            1 => {
                assert!(o.Output.value.is_empty() && !o.Stale);
                assert!(written
                    .entry(o.Input.key.clone())
                    .or_default()
                    .insert(o.Input.value.clone()));
                orders
                    .entry(o.Input.key.clone())
                    .or_default()
                    .extend(o.Order);
            }
            0 => assert!(o.Input.value.is_empty() && o.Order.is_none()),
            other => panic!("op {other}"),
        }
    }
    // Each key's writes that took effect have the places 0, 1, ... of its order.
    for (key, mut places) in orders {
        places.sort_unstable();
        assert!(
            places.iter().copied().eq(0..places.len() as u64),
            "key {key}"
        );
    }
    // Every value read was written to its key, or is the initial value 0.
    let mut json_reads: Vec<(i64, i64)> = Vec::new();
    for o in ops
        .iter()
        .filter(|o| o.Input.op == 0 && !o.Output.value.is_empty())
    {
        let v = &o.Output.value;
        assert!(v == "0" || written[&o.Input.key].contains(v), "{v}");
        json_reads.push((o.Input.key.parse().unwrap(), v.parse().unwrap()));
    }
    json_reads.sort_unstable();

    for (file, read, write) in [
        ("history.knossos.edn", "read", "write"),
        ("history.elle.edn", "txn", "txn"),
    ] {
        let lines = edn_lines(&dir.join(file));
        let types = check_shape(&lines);
        // The JSON holds the operations that were not refused; the EDN all of them.
        assert_eq!(types["invoke"], ops.len() + types["fail"], "{file}");
        assert!(types["fail"] > 0 && types["info"] > 0, "{file}: {types:?}");
        let mut reads: Vec<(i64, i64)> = Vec::new();
        for l in lines.iter().filter(|l| l.kind == "ok") {
            assert!(l.f == read || l.f == write, "{file}");
            let (is_read, (key, value)) = match &l.value {
                Edn::Vector(txn) if file.contains("elle") => {
                    let [Edn::Vector(mop)] = txn.as_slice() else {
                        panic!("one micro-operation: {txn:?}");
                    };
                    let is_read = mop[0] == keyword("r");
                    assert!(is_read || mop[0] == keyword("w"));
                    (is_read, pair(&Edn::Vector(mop[1..].to_vec())))
                }
                v => (l.f == read, pair(v)),
            };
            if is_read {
                reads.push((key, value.expect("an answered read has its value")));
            }
        }
        reads.sort_unstable();
        assert_eq!(
            reads, json_reads,
            "{file}: the reads answered, and what they returned"
        );
    }
}
