//! The client history of a run, as the oracle judged it ([`HistoryEvent`]s), recorded
//! ([`History`]) and exported for the tools that check histories: a JSON history in the shape of
//! porcupine's operations, and EDN histories for Knossos (`jepsen.independent` register
//! operations) and Elle (`rw-register` transactions). `run --history` writes them.
//!
//! Every operation admitted or timed out is recorded; one the node refused when it checked it
//! (its client told at once, "not the holder") failed, and is left out of the JSON and written
//! `:fail` in the EDN. A write never acknowledged, or a read never answered, is of unknown
//! outcome: in the EDN `:info` at the end of the run, in the JSON returning at the end of the run
//! (so porcupine may place it anywhere after its call).
//!
//! Recording keeps every operation: memory grows with the run, as a trace's does.

use crate::msg::{Key, NodeId, Value};
use crate::time::SimTime;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What happened to a client operation, as the oracle saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HistoryEvent {
    /// Request `op` (the tick of its invocation) reached `node` at `at`: a read of `key`, or a
    /// write of value `op` to `key`.
    Invoked {
        op: u64,
        node: NodeId,
        key: Key,
        write: bool,
        at: SimTime,
    },
    /// Request `op` failed its node's check at `at`: its client was told at once.
    Failed { op: u64, at: SimTime },
    /// Read `op` was answered at `at` (tick `tick`) with `value`, judged `stale` or not.
    ReadAnswered {
        op: u64,
        value: Value,
        tick: u64,
        at: SimTime,
        stale: bool,
    },
    /// The write of `value` to `key` took effect at `at`, after the history's tick `tick` and
    /// before the next: the next in the register's order of `key`'s writes.
    WriteTookEffect {
        key: Key,
        value: Value,
        tick: u64,
        at: SimTime,
    },
    /// The write of `value` was acknowledged at `at` (tick `tick`).
    WriteAcked {
        value: Value,
        tick: u64,
        at: SimTime,
    },
}

/// A request refused as it arrived: invoked and failed at the same instant (see
/// [`super::Observer::refused`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The tick of its invocation.
    pub op: u64,
    pub node: NodeId,
    pub key: Key,
    pub write: bool,
    pub at: SimTime,
}

impl Refused {
    /// It as the history's events: its invocation, then its failure.
    pub fn events(&self) -> [HistoryEvent; 2] {
        let invoked = HistoryEvent::Invoked {
            op: self.op,
            node: self.node,
            key: self.key,
            write: self.write,
            at: self.at,
        };
        let failed = HistoryEvent::Failed {
            op: self.op,
            at: self.at,
        };
        [invoked, failed]
    }
}

/// One operation of the history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Operation {
    /// The tick of its invocation: names it (and a write's value).
    pub op: u64,
    pub node: NodeId,
    pub key: Key,
    pub write: bool,
    /// The value written, or the value read (`None`: a read never answered).
    pub value: Option<Value>,
    pub call_ns: i64,
    pub call_tick: u64,
    /// Its response (`None`: never acknowledged or answered).
    pub return_ns: Option<i64>,
    pub return_tick: Option<u64>,
    /// Its node refused it when checked: it did not happen.
    pub failed: bool,
    /// A read judged stale.
    pub stale: bool,
    /// A write's place in the register's order of its key's writes (0 first; `None`: it never
    /// took effect).
    pub order: Option<u64>,
    /// A write's effect: the history's last tick before it took effect (`None`: it never did).
    pub effect_tick: Option<u64>,
}

/// The recorder of a run's history (an observer of [`HistoryEvent`]s).
#[derive(Debug, Default)]
pub struct History {
    ops: Vec<Operation>,
    /// Where each operation sits in `ops`, by its name.
    index: BTreeMap<u64, usize>,
    /// Per key, how many writes took effect so far.
    effects: BTreeMap<Key, u64>,
    end_ns: i64,
}

impl History {
    pub fn new() -> History {
        History::default()
    }

    /// Takes in one event.
    pub fn record(&mut self, e: &HistoryEvent) {
        match *e {
            HistoryEvent::Invoked {
                op,
                node,
                key,
                write,
                at,
            } => {
                self.index.insert(op, self.ops.len());
                self.ops.push(Operation {
                    op,
                    node,
                    key,
                    write,
                    value: write.then_some(op),
                    call_ns: at.ns(),
                    call_tick: op,
                    return_ns: None,
                    return_tick: None,
                    failed: false,
                    stale: false,
                    order: None,
                    effect_tick: None,
                });
            }
            HistoryEvent::Failed { op, .. } => {
                if let Some(o) = self.op(op) {
                    o.failed = true;
                }
            }
            HistoryEvent::ReadAnswered {
                op,
                value,
                tick,
                at,
                stale,
            } => {
                if let Some(o) = self.op(op) {
                    o.value = Some(value);
                    o.return_ns = Some(at.ns());
                    o.return_tick = Some(tick);
                    o.stale = stale;
                }
            }
            HistoryEvent::WriteTookEffect {
                key, value, tick, ..
            } => {
                let n = self.effects.entry(key).or_insert(0);
                let order = *n;
                *n += 1;
                if let Some(o) = self.op(value) {
                    o.order = Some(order);
                    o.effect_tick = Some(tick);
                }
            }
            HistoryEvent::WriteAcked { value, tick, at } => {
                if let Some(o) = self.op(value) {
                    if o.return_tick.is_none() {
                        o.return_ns = Some(at.ns());
                        o.return_tick = Some(tick);
                    }
                }
            }
        }
    }

    fn op(&mut self, op: u64) -> Option<&mut Operation> {
        let i = *self.index.get(&op)?;
        Some(&mut self.ops[i])
    }

    /// The run ended at `end`.
    pub fn finish(&mut self, end: SimTime) {
        self.end_ns = end.ns();
    }

    /// Every operation, in the order they were invoked.
    pub fn operations(&self) -> &[Operation] {
        &self.ops
    }

    /// The history as porcupine's operations in JSON: every operation that did not fail, with
    /// `ClientId` its node, `Input` `{"op": 0 read | 1 write, "key", "value"}`, `Output`
    /// `{"value"}` (a read's), `Call` and `Return` in ns (the run's end for one never
    /// answered), and, besides, the write's `Order` in the register and a read's `Stale`.
    pub fn porcupine_json(&self) -> String {
        #[derive(Serialize)]
        struct Input {
            op: u8,
            key: String,
            value: String,
        }
        #[derive(Serialize)]
        struct Output {
            value: String,
        }
        #[derive(Serialize)]
        #[allow(non_snake_case)]
        struct Op {
            ClientId: usize,
            Input: Input,
            Call: i64,
            Output: Output,
            Return: i64,
            Order: Option<u64>,
            Stale: bool,
        }
        let ops: Vec<Op> = self
            .ops
            .iter()
            .filter(|o| !o.failed)
            .map(|o| {
                let value = o.value.map_or(String::new(), |v| v.to_string());
                Op {
                    ClientId: o.node,
                    Input: Input {
                        op: u8::from(o.write),
                        key: o.key.to_string(),
                        value: if o.write {
                            value.clone()
                        } else {
                            String::new()
                        },
                    },
                    Call: o.call_ns,
                    Output: Output {
                        value: if o.write { String::new() } else { value },
                    },
                    Return: o.return_ns.unwrap_or(self.end_ns),
                    Order: o.order,
                    Stale: o.stale,
                }
            })
            .collect();
        serde_json::to_string_pretty(&ops).expect("serialisable") + "\n"
    }

    /// The history in EDN, one map a line, invocations and completions in the order they
    /// happened: `tuple` writes Knossos's `jepsen.independent` operations (`:f :read` /
    /// `:write`, `:value [key value]`), else Elle's `rw-register` transactions (`:f :txn`,
    /// `:value [[:r key value]]` / `[[:w key value]]`). Each operation runs on a process of its
    /// own for its duration (a process serves one at a time; one left `:info` is never reused).
    fn edn(&self, tuple: bool) -> String {
        // (tick, invocation first, op index)
        let mut points: Vec<(u64, bool, usize)> = Vec::new();
        for (i, o) in self.ops.iter().enumerate() {
            // A failed operation completes as soon as it is invoked.
            let done = match o.failed {
                true => o.call_tick,
                false => o.return_tick.unwrap_or(u64::MAX),
            };
            points.push((o.call_tick, true, i));
            points.push((done, false, i));
        }
        points.sort_unstable_by_key(|&(t, invoke, i)| (t, !invoke, i));
        let mut free: std::collections::BTreeSet<usize> = Default::default();
        let mut next_process = 0;
        let mut process = vec![0; self.ops.len()];
        let mut out = String::new();
        for (index, &(_, invoke, i)) in points.iter().enumerate() {
            let o = &self.ops[i];
            if invoke {
                process[i] = free.pop_first().unwrap_or_else(|| {
                    next_process += 1;
                    next_process - 1
                });
            }
            let (kind, time) = match (invoke, o.failed, o.return_ns) {
                (true, _, _) => (":invoke", o.call_ns),
                (false, true, _) => (":fail", o.call_ns),
                (false, false, Some(r)) => (":ok", r),
                (false, false, None) => (":info", self.end_ns),
            };
            if !invoke && kind != ":info" {
                free.insert(process[i]);
            }
            let shown = match (invoke, o.write) {
                (true, false) | (false, false) if kind != ":ok" => None,
                _ => o.value,
            };
            let value = shown.map_or("nil".to_string(), |v| v.to_string());
            let (f, v) = match (tuple, o.write) {
                (true, true) => (":write", format!("[{} {value}]", o.key)),
                (true, false) => (":read", format!("[{} {value}]", o.key)),
                (false, true) => (":txn", format!("[[:w {} {value}]]", o.key)),
                (false, false) => (":txn", format!("[[:r {} {value}]]", o.key)),
            };
            let _ = writeln!(
                out,
                "{{:index {index}, :time {time}, :type {kind}, :process {}, :f {f}, :value {v}}}",
                process[i]
            );
        }
        out
    }

    /// The history for Knossos (see [`History::edn`]).
    pub fn knossos_edn(&self) -> String {
        self.edn(true)
    }

    /// The history for Elle's `rw-register` (see [`History::edn`]).
    pub fn elle_edn(&self) -> String {
        self.edn(false)
    }
}

impl super::Observer for History {
    fn event(&mut self, _e: &super::TraceEvent) {}
    fn history(&mut self, e: &HistoryEvent) {
        self.record(e);
    }
    fn wants_history(&self) -> bool {
        true
    }
    fn finish(&mut self, end: SimTime) {
        History::finish(self, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ns: i64) -> SimTime {
        SimTime::from_ns(ns)
    }

    /// A write of key 0 by node 0 (op 1, effect and answer at 30 ns), a read by node 1 (op 2)
    /// answered at 40 ns with it, a read by node 1 (op 3) refused, and a write (op 4) never
    /// acknowledged, in a run that ends at 100 ns.
    fn history() -> History {
        let mut h = History::new();
        let inv = |op, node, write, at| HistoryEvent::Invoked {
            op,
            node,
            key: 0,
            write,
            at: t(at),
        };
        h.record(&inv(1, 0, true, 10));
        h.record(&inv(2, 1, false, 20));
        h.record(&HistoryEvent::WriteTookEffect {
            key: 0,
            value: 1,
            tick: 2,
            at: t(30),
        });
        h.record(&HistoryEvent::WriteAcked {
            value: 1,
            tick: 5,
            at: t(30),
        });
        h.record(&HistoryEvent::ReadAnswered {
            op: 2,
            value: 1,
            tick: 6,
            at: t(40),
            stale: false,
        });
        h.record(&inv(7, 1, false, 50));
        h.record(&HistoryEvent::Failed { op: 7, at: t(50) });
        h.record(&inv(8, 0, true, 60));
        h.finish(t(100));
        h
    }

    #[test]
    fn operations_keep_their_calls_responses_and_the_register_s_order() {
        let h = history();
        let ops = h.operations();
        assert_eq!(ops.len(), 4);
        assert_eq!(
            (
                ops[0].order,
                ops[0].effect_tick,
                ops[0].return_ns,
                ops[0].value
            ),
            (Some(0), Some(2), Some(30), Some(1))
        );
        assert_eq!((ops[1].value, ops[1].return_tick), (Some(1), Some(6)));
        assert!(ops[2].failed);
        assert_eq!((ops[3].order, ops[3].return_ns), (None, None));
    }

    #[test]
    fn the_knossos_history_interleaves_calls_and_completions_by_tick() {
        let edn = history().knossos_edn();
        let lines: Vec<&str> = edn.lines().collect();
        assert_eq!(
            lines,
            [
                "{:index 0, :time 10, :type :invoke, :process 0, :f :write, :value [0 1]}",
                "{:index 1, :time 20, :type :invoke, :process 1, :f :read, :value [0 nil]}",
                "{:index 2, :time 30, :type :ok, :process 0, :f :write, :value [0 1]}",
                "{:index 3, :time 40, :type :ok, :process 1, :f :read, :value [0 1]}",
                "{:index 4, :time 50, :type :invoke, :process 0, :f :read, :value [0 nil]}",
                "{:index 5, :time 50, :type :fail, :process 0, :f :read, :value [0 nil]}",
                "{:index 6, :time 60, :type :invoke, :process 0, :f :write, :value [0 8]}",
                "{:index 7, :time 100, :type :info, :process 0, :f :write, :value [0 8]}",
            ]
        );
    }

    /// An observer that does not take a refused request in one call hears it as its
    /// invocation and its failure, in that order: the history is what it would be told apart.
    #[test]
    fn a_refused_request_reaches_an_observer_as_invoked_then_failed() {
        use crate::trace::Observer;
        let r = Refused {
            op: 7,
            node: 1,
            key: 3,
            write: false,
            at: t(50),
        };
        let e = crate::trace::TraceEvent {
            t: t(50),
            node: 1,
            clock: crate::trace::Readings::Given {
                mono: crate::time::LocalTime::from_ns(0),
                wall: crate::time::LocalTime::from_ns(0),
            },
            kind: crate::trace::TraceKind::Rejected { write: false },
        };
        let mut one = History::new();
        one.refused(&r, &e);
        let mut apart = History::new();
        apart.record(&HistoryEvent::Invoked {
            op: 7,
            node: 1,
            key: 3,
            write: false,
            at: t(50),
        });
        apart.record(&HistoryEvent::Failed { op: 7, at: t(50) });
        assert_eq!(one.ops, apart.ops);
        let o = &one.ops[0];
        assert_eq!(
            (o.op, o.node, o.key, o.call_ns, o.failed),
            (7, 1, 3, 50, true)
        );
    }
}
