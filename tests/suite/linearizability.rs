//! The streaming linearizability checker (`oracle::linearizable::Checker`) against a brute-force
//! one, as Knossos and porcupine check histories: Wing and Gong's search over the orders of the
//! operations, memoised on (operations linearized, register value).
//!
//! Both apply the same greedy rule: reads are judged in the order they are answered, and a read
//! is stale iff every write known when it is answered (one that has not taken effect yet may be
//! linearized at any point after its invocation, or never), every read answered before it that
//! was not stale, and itself are not linearizable. Random small histories (a few keys, nodes and
//! operations, with in-flight, lost and late writes, long and instantaneous reads, and values
//! read from anywhere the engine could serve them) must get the same stale reads from both, with
//! and without the checker forgetting dead clusters. Hand-written histories pin the classic
//! anomalies, each with its reasoning.

use leasesim::msg::{Key, NodeId, Value, INITIAL};
use leasesim::oracle::linearizable::{Checker, Tick};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::collections::BTreeSet;

// ---------------------------------------------------------------------------------------------
// Histories
// ---------------------------------------------------------------------------------------------

/// One client operation. Ticks are distinct points of one total order (tick 0 is the initial
/// value's, before every operation).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Op {
    node: NodeId,
    key: Key,
    value: Value,
    inv: Tick,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A write, with the tick it took effect at (its response), if it ever did.
    Write { effect: Option<Tick> },
    /// A read that returned `value`, answered at `res`.
    Read { res: Tick },
}

impl Op {
    fn write(node: NodeId, key: Key, value: Value, inv: Tick, effect: Option<Tick>) -> Op {
        Op {
            node,
            key,
            value,
            inv,
            kind: Kind::Write { effect },
        }
    }

    fn read(node: NodeId, key: Key, value: Value, inv: Tick, res: Tick) -> Op {
        Op {
            node,
            key,
            value,
            inv,
            kind: Kind::Read { res },
        }
    }

    /// A read's response.
    fn res(&self) -> Option<Tick> {
        match self.kind {
            Kind::Read { res } => Some(res),
            Kind::Write { .. } => None,
        }
    }

    /// A write's effect tick.
    fn effect(&self) -> Option<Tick> {
        match self.kind {
            Kind::Write { effect } => effect,
            Kind::Read { .. } => None,
        }
    }

    fn is_write(&self) -> bool {
        matches!(self.kind, Kind::Write { .. })
    }
}

/// Panics unless `h` is a history the checker may be given: distinct ticks after 0, responses
/// after invocations, writes of unique values other than [`INITIAL`], and every read returning
/// [`INITIAL`], a value whose write took effect before the read was answered, or its reader's
/// latest write of the key invoked before then (the engine's guarantee).
fn assert_valid(h: &[Op]) {
    let mut ticks = BTreeSet::new();
    let mut values = BTreeSet::new();
    for o in h {
        assert!(
            o.inv > 0 && ticks.insert(o.inv),
            "tick {} reused: {h:?}",
            o.inv
        );
        if let Some(end) = o.res().or(o.effect()) {
            assert!(end > o.inv && ticks.insert(end), "tick {end}: {h:?}");
        }
        if o.is_write() {
            assert!(
                o.value != INITIAL && values.insert((o.key, o.value)),
                "{h:?}"
            );
        }
    }
    for r in h {
        let Some(res) = r.res() else { continue };
        if r.value == INITIAL {
            continue;
        }
        let w = h
            .iter()
            .find(|w| w.is_write() && w.key == r.key && w.value == r.value)
            .unwrap_or_else(|| panic!("a read of a value never written: {r:?}"));
        let landed = w.effect().is_some_and(|e| e < res);
        let latest_own = w.node == r.node
            && w.inv < res
            && !h.iter().any(|x| {
                x.is_write() && x.node == r.node && x.key == r.key && x.inv > w.inv && x.inv < res
            });
        assert!(landed || latest_own, "{r:?} reads {w:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// The brute force
// ---------------------------------------------------------------------------------------------

/// An operation as the search sees it: `res` `None` is a write that has not taken effect, which
/// may be linearized at any point after its invocation, or left out.
#[derive(Clone, Copy, Debug)]
struct LinOp {
    inv: Tick,
    res: Option<Tick>,
    write: bool,
    value: Value,
}

/// Whether the operations of one register, starting at [`INITIAL`], are linearizable: Wing and
/// Gong's search, which linearizes next any operation invoked before every response still to
/// come, memoised on (operations linearized, value) as porcupine does.
fn linearizable(ops: &[LinOp]) -> bool {
    assert!(ops.len() <= 64, "a bitmask of operations");
    let answered = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.res.is_some())
        .fold(0u64, |m, (i, _)| m | 1 << i);
    search(ops, answered, 0, INITIAL, &mut BTreeSet::new())
}

fn search(
    ops: &[LinOp],
    answered: u64,
    done: u64,
    value: Value,
    seen: &mut BTreeSet<(u64, Value)>,
) -> bool {
    if done & answered == answered {
        // Every answered operation is linearized; the writes still pending are left out.
        return true;
    }
    if !seen.insert((done, value)) {
        return false;
    }
    let left = |i: usize| done & (1 << i) == 0;
    let first_res = (0..ops.len())
        .filter(|&i| left(i))
        .filter_map(|i| ops[i].res)
        .min()
        .expect("an answered operation is left");
    for (i, o) in ops.iter().enumerate() {
        if !left(i) || o.inv > first_res {
            continue;
        }
        let next = match (o.write, o.value == value) {
            (true, _) => o.value,
            (false, true) => value,
            (false, false) => continue,
        };
        if search(ops, answered, done | 1 << i, next, seen) {
            return true;
        }
    }
    false
}

/// Indices of `h`'s reads, in the order they were answered.
fn reads_by_response(h: &[Op]) -> Vec<usize> {
    let mut reads: Vec<usize> = (0..h.len()).filter(|&i| h[i].res().is_some()).collect();
    reads.sort_by_key(|&i| h[i].res());
    reads
}

/// The stale reads of `h` (indices, ascending), by the greedy rule: each read, in the order they
/// were answered, is checked with the writes of its key invoked before its response (those that
/// took effect later still pending) and the reads of its key accepted before it.
fn brute_force_stale(h: &[Op]) -> Vec<usize> {
    let mut accepted: Vec<usize> = Vec::new();
    let mut stale = Vec::new();
    for r in reads_by_response(h) {
        let (key, res) = (h[r].key, h[r].res().expect("a read"));
        let mut ops: Vec<LinOp> = h
            .iter()
            .filter(|w| w.key == key && w.is_write() && w.inv < res)
            .map(|w| LinOp {
                inv: w.inv,
                res: w.effect().filter(|&e| e < res),
                write: true,
                value: w.value,
            })
            .collect();
        ops.extend(
            accepted
                .iter()
                .chain([&r])
                .filter(|&&i| h[i].key == key)
                .map(|&i| LinOp {
                    inv: h[i].inv,
                    res: h[i].res(),
                    write: false,
                    value: h[i].value,
                }),
        );
        if linearizable(&ops) {
            accepted.push(r);
        } else {
            stale.push(r);
        }
    }
    stale.sort_unstable();
    stale
}

/// Whether the whole of `h` is linearizable (writes that never took effect pending), key by key:
/// linearizability is local.
fn whole_history_linearizable(h: &[Op]) -> bool {
    let keys: BTreeSet<Key> = h.iter().map(|o| o.key).collect();
    keys.into_iter().all(|key| {
        let ops: Vec<LinOp> = h
            .iter()
            .filter(|o| o.key == key)
            .map(|o| LinOp {
                inv: o.inv,
                res: o.res().or(o.effect()),
                write: o.is_write(),
                value: o.value,
            })
            .collect();
        linearizable(&ops)
    })
}

// ---------------------------------------------------------------------------------------------
// The fast checker, fed event by event
// ---------------------------------------------------------------------------------------------

/// What the driver feeds the checker at one tick, for operation `usize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    WriteInvoked,
    TookEffect,
    Answered,
}

/// The stale reads of `h` (indices, ascending) by `checker`, fed in tick order: a write when it
/// is invoked and when it takes effect, a read when it is answered, and before each event the
/// horizon: the earliest invocation of a read not answered yet, or the tick itself.
fn fast_stale(h: &[Op], mut checker: Checker) -> (Vec<usize>, Checker) {
    let mut events: Vec<(Tick, usize, Event)> = Vec::new();
    for (i, o) in h.iter().enumerate() {
        match o.kind {
            Kind::Write { effect } => {
                events.push((o.inv, i, Event::WriteInvoked));
                if let Some(e) = effect {
                    events.push((e, i, Event::TookEffect));
                }
            }
            Kind::Read { res } => events.push((res, i, Event::Answered)),
        }
    }
    events.sort_unstable();
    let mut stale = Vec::new();
    for (t, i, event) in events {
        let horizon = h
            .iter()
            .filter(|r| r.res().is_some_and(|res| res >= t))
            .map(|r| r.inv)
            .fold(t, Tick::min);
        checker.set_horizon(horizon);
        let o = &h[i];
        match event {
            Event::WriteInvoked => checker.write_invoked(o.node, o.key, o.value, o.inv),
            Event::TookEffect => checker.write_took_effect(o.node, o.key, o.value, o.inv, t),
            Event::Answered => {
                if checker.read(o.node, o.key, o.value, o.inv, t) {
                    stale.push(i);
                }
            }
        }
    }
    stale.sort_unstable();
    (stale, checker)
}

/// Checks `h` with the brute force and with the checker, default and compacting as often as it
/// can, and returns the stale reads they agree on (panicking with the history if they do not).
fn agreed_stale(h: &[Op]) -> Vec<usize> {
    assert_valid(h);
    let want = brute_force_stale(h);
    let reads = h.iter().filter(|o| o.res().is_some()).count() as u64;
    for (name, checker) in [
        ("Checker::new()", Checker::new()),
        ("Checker::with_compaction(1)", Checker::with_compaction(1)),
    ] {
        let (got, c) = fast_stale(h, checker);
        assert_eq!(got, want, "{name} (left) against the brute force on {h:#?}");
        let counts = c.counts();
        assert_eq!((counts.reads, counts.stale), (reads, want.len() as u64));
        assert_eq!(counts.ambiguous, 0);
    }
    want
}

// ---------------------------------------------------------------------------------------------
// Hand-written histories
// ---------------------------------------------------------------------------------------------

/// A stale read after a completed write: w1 [1, 2] by node 0; node 1 reads [3, 4] and gets the
/// initial value. w1 took effect before the read began, so the read must follow it: stale. A
/// read [5, 6] of 1 is fine.
#[test]
fn a_read_of_the_old_value_after_a_completed_write_is_stale() {
    let h = [
        Op::write(0, 0, 1, 1, Some(2)),
        Op::read(1, 0, INITIAL, 3, 4),
        Op::read(1, 0, 1, 5, 6),
    ];
    assert_eq!(agreed_stale(&h), [1]);
}

/// A new-old inversion between two reads: node 0 invokes w1 at 1, and it takes effect only at
/// 8; node 0 reads its own write [2, 3] (the engine serves a writer its in-flight write), then
/// node 1 reads [4, 9], overlapping w1, and gets the initial value. Either read alone is
/// linearizable (w1 before 3, or w1 after 4); together not, as w1 must come before 3 and the
/// second read after 4. The later-answered read is blamed. With w1 lost instead (it never takes
/// effect) nothing changes: the writer's read already placed it.
#[test]
fn a_new_old_inversion_blames_the_later_read() {
    for effect in [Some(8), None] {
        let h = [
            Op::write(0, 0, 1, 1, effect),
            Op::read(0, 0, 1, 2, 3),
            Op::read(1, 0, INITIAL, 4, 9),
        ];
        assert_eq!(agreed_stale(&h), [2], "w1 takes effect at {effect:?}");
    }
}

/// A read concurrent with a write may return either value: w1 [1, 4]; node 1 reads [2, 5] and
/// gets the initial value, node 2 reads [3, 6] and gets 1 (read 0 at 2.5, w1 at 3.5, read 1 at
/// 4.5). Swapped as well: node 1 gets 1 and node 2 the initial value (read 0 at 3.5, w1 at 3.7,
/// read 1 at 4.5), though node 1's read began first. But a read [7, 8], after w1 took effect,
/// cannot go back to the initial value.
#[test]
fn a_read_concurrent_with_a_write_may_return_either_value() {
    for (first, second) in [(INITIAL, 1), (1, INITIAL)] {
        let h = [
            Op::write(0, 0, 1, 1, Some(4)),
            Op::read(1, 0, first, 2, 5),
            Op::read(2, 0, second, 3, 6),
            Op::read(1, 0, INITIAL, 7, 8),
        ];
        assert_eq!(agreed_stale(&h), [3], "{first} then {second}");
    }
}

/// A pending write read by its writer, then lost: node 0 invokes w1 at 1 and reads it [2, 3];
/// w1 never takes effect. Node 1's w2 [4, 5] is read by node 1 [6, 7]: fine (w1 at 2.5, w2 at
/// 4.5). Node 2 then reads [8, 9] and gets the initial value: w1 came before 3, so that read is
/// stale although the write it missed never took effect. Node 0 reading 1 again [10, 11] is
/// stale too: w2 came after w1.
#[test]
fn a_pending_write_read_by_its_writer_then_lost() {
    let h = [
        Op::write(0, 0, 1, 1, None),
        Op::read(0, 0, 1, 2, 3),
        Op::write(1, 0, 2, 4, Some(5)),
        Op::read(1, 0, 2, 6, 7),
        Op::read(2, 0, INITIAL, 8, 9),
        Op::read(0, 0, 1, 10, 11),
    ];
    assert_eq!(agreed_stale(&h), [4, 5]);
}

/// A write that lands after being forgotten as dead: node 0 invokes w1 at 1 and reads it
/// [2, 3]; node 1's w2 [4, 5] is read [6, 7] and w3 [8, 9] follows. From tick 8 no read still
/// to come was invoked earlier (the horizon), and w2's zone [5, 6] lies after the earliest
/// response of w1's cluster (3): w1 is dead, and the compacting checker forgets it. w1 then
/// lands at 10. A read [11, 12] of 1 by node 2 is stale (w1 came before 3, w3 after 8), and so
/// the checker must still say, though it kept nothing of w1 but a tombstone.
#[test]
fn a_write_that_lands_after_being_forgotten_stays_dead() {
    let h = [
        Op::write(0, 0, 1, 1, Some(10)),
        Op::read(0, 0, 1, 2, 3),
        Op::write(1, 0, 2, 4, Some(5)),
        Op::read(1, 0, 2, 6, 7),
        Op::write(1, 0, 3, 8, Some(9)),
        Op::read(2, 0, 1, 11, 12),
    ];
    assert_eq!(agreed_stale(&h), [5]);
    let (_, c) = fast_stale(&h, Checker::with_compaction(1));
    assert!(
        c.clusters_held() < fast_stale(&h, Checker::new()).1.clusters_held(),
        "the compacting checker forgot w1"
    );
}

/// The brute force's own rule at a glance: a write that takes effect after a read is answered
/// is pending for it. w1 is invoked at 1 and takes effect at 6; node 1 reads [2, 3] and gets
/// the initial value, node 0 reads its own write [4, 5]: both fine. Had w1 been taken as
/// answered when it was invoked, rather than as pending, the first would be stale.
#[test]
fn a_write_taking_effect_after_a_read_is_pending_for_it() {
    let h = [
        Op::write(0, 0, 1, 1, Some(6)),
        Op::read(1, 0, INITIAL, 2, 3),
        Op::read(0, 0, 1, 4, 5),
    ];
    assert_eq!(agreed_stale(&h), [] as [usize; 0]);
}

// ---------------------------------------------------------------------------------------------
// Random histories
// ---------------------------------------------------------------------------------------------

/// The most operations in a random history.
const MAX_OPS: usize = 12;

/// One step of a random history; each takes the next tick (an instantaneous read two). Numbers
/// pick among what exists, modulo its count (keys: see [`build`]).
#[derive(Clone, Debug)]
enum Step {
    /// A node invokes a write of a fresh value.
    Write { node: usize, key: usize },
    /// A node invokes a read, answered by a later `Answer` (or never, and then left out).
    Read { node: usize, key: usize },
    /// A write not yet taken effect takes effect (those never picked never do).
    Land { pick: usize },
    /// A read under way is answered (`pick` below 4: the oldest), with a value the engine could
    /// serve (`choice`).
    Answer { pick: usize, choice: usize },
    /// A node reads, answered at the next tick.
    Instant {
        node: usize,
        key: usize,
        choice: usize,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..4usize, 0..6usize).prop_map(|(node, key)| Step::Write { node, key }),
        3 => (0..4usize, 0..6usize).prop_map(|(node, key)| Step::Read { node, key }),
        4 => (0..8usize).prop_map(|pick| Step::Land { pick }),
        4 => (0..8usize, 0..16usize).prop_map(|(pick, choice)| Step::Answer { pick, choice }),
        2 => (0..4usize, 0..6usize, 0..16usize)
            .prop_map(|(node, key, choice)| Step::Instant { node, key, choice }),
    ]
}

/// A random history: 1 to 3 keys, 1 to 4 nodes, at most [`MAX_OPS`] operations.
fn history() -> impl Strategy<Value = Vec<Op>> {
    (1..=3usize, 1..=4usize, vec(step(), 1..=30))
        .prop_map(|(keys, nodes, steps)| build(keys, nodes, &steps))
}

/// The value a read of `key` by `node` answered at `res` returns, by `choice`, among those the
/// engine could serve: the initial value, a write that took effect before `res`, or the node's
/// latest write of the key if it has not. Most choices take the freshest (the node's own write
/// in flight, else the write that took effect last); the rest any, old ones included.
fn served(h: &[Op], node: NodeId, key: Key, res: Tick, choice: usize) -> Value {
    let mut landed: Vec<(Tick, Value)> = h
        .iter()
        .filter(|w| w.key == key)
        .filter_map(|w| w.effect().filter(|&e| e < res).map(|e| (e, w.value)))
        .collect();
    landed.sort_unstable();
    let mut allowed: Vec<Value> = [INITIAL]
        .into_iter()
        .chain(landed.into_iter().map(|(_, v)| v))
        .collect();
    let own_latest = h
        .iter()
        .filter(|w| w.is_write() && w.node == node && w.key == key && w.inv < res)
        .max_by_key(|w| w.inv);
    if let Some(w) = own_latest.filter(|w| w.effect().is_none_or(|e| e > res)) {
        allowed.push(w.value);
    }
    if choice < 6 {
        *allowed.last().expect("the initial value")
    } else {
        allowed[(choice - 6) % allowed.len()]
    }
}

/// Plays `steps` into a history. A write's effect and a read's response are set when a later
/// step gives them; reads never answered are left out.
fn build(keys: usize, nodes: usize, steps: &[Step]) -> Vec<Op> {
    let mut h: Vec<Op> = Vec::new();
    let mut open_reads: Vec<usize> = Vec::new();
    let mut in_flight: Vec<usize> = Vec::new();
    let mut next_value: Value = 1;
    let mut t: Tick = 0;
    // Key 0 most of the time, so that one key sees many operations.
    let key = |k: usize| (k.saturating_sub(3) % keys) as Key;
    for s in steps {
        t += 1;
        match *s {
            Step::Write { node, key: k } if h.len() < MAX_OPS => {
                h.push(Op::write(node % nodes, key(k), next_value, t, None));
                in_flight.push(h.len() - 1);
                next_value += 1;
            }
            Step::Read { node, key: k } if h.len() < MAX_OPS => {
                // The value is set when it is answered.
                h.push(Op::read(node % nodes, key(k), INITIAL, t, 0));
                open_reads.push(h.len() - 1);
            }
            Step::Land { pick } if !in_flight.is_empty() => {
                let w = in_flight.remove(pick % in_flight.len());
                h[w].kind = Kind::Write { effect: Some(t) };
            }
            Step::Answer { pick, choice } if !open_reads.is_empty() => {
                // Half the time the read waiting longest, so that some wait long.
                let r = open_reads.remove(pick.saturating_sub(4) % open_reads.len());
                h[r].value = served(&h, h[r].node, h[r].key, t, choice);
                h[r].kind = Kind::Read { res: t };
            }
            Step::Instant {
                node,
                key: k,
                choice,
            } if h.len() < MAX_OPS => {
                let (node, k) = (node % nodes, key(k));
                let value = served(&h, node, k, t + 1, choice);
                h.push(Op::read(node, k, value, t, t + 1));
                t += 1;
            }
            _ => t -= 1,
        }
    }
    // Reads never answered are not part of the history.
    let open: BTreeSet<usize> = open_reads.into_iter().collect();
    h.into_iter()
        .enumerate()
        .filter(|(i, _)| !open.contains(i))
        .map(|(_, o)| o)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12_000))]

    /// On random histories, the checker finds exactly the stale reads the brute force finds,
    /// whether it keeps every cluster or forgets dead ones as soon as it may; and the brute
    /// force finds none exactly when the whole history is linearizable.
    #[test]
    fn the_checker_agrees_with_the_brute_force(h in history()) {
        let stale = agreed_stale(&h);
        prop_assert_eq!(stale.is_empty(), whole_history_linearizable(&h), "{:#?}", h);
    }
}

/// The random histories are not all easy: a fixed sample (drawn deterministically) holds
/// linearizable and non-linearizable ones, writes read by their writer before they took
/// effect, writes that never do, reads that span several writes, and histories where the
/// compacting checker forgot clusters.
#[test]
fn random_histories_cover_the_hard_cases() {
    let mut runner = TestRunner::deterministic();
    let histories = history();
    let n = 2000;
    let (mut with_stale, mut read_in_flight, mut lost, mut long_reads, mut forgot) =
        (0, 0, 0, 0, 0);
    for _ in 0..n {
        let h = histories
            .new_tree(&mut runner)
            .expect("a history is drawn")
            .current();
        assert_valid(&h);
        if !brute_force_stale(&h).is_empty() {
            with_stale += 1;
        }
        let read_before_effect = |w: &Op| {
            h.iter().any(|r| {
                r.value == w.value
                    && r.key == w.key
                    && r.res()
                        .is_some_and(|res| w.effect().is_none_or(|e| e > res))
            })
        };
        if h.iter().any(|w| w.is_write() && read_before_effect(w)) {
            read_in_flight += 1;
        }
        if h.iter().any(|w| w.is_write() && w.effect().is_none()) {
            lost += 1;
        }
        let spans = |r: &Op| {
            h.iter()
                .filter(|w| w.key == r.key && w.effect().is_some_and(|e| e > r.inv))
                .filter(|w| {
                    r.res()
                        .is_some_and(|res| w.effect().is_some_and(|e| e < res))
                })
                .count()
        };
        if h.iter().any(|r| spans(r) >= 2) {
            long_reads += 1;
        }
        let held = |c: Checker| fast_stale(&h, c).1.clusters_held();
        if held(Checker::with_compaction(1)) < held(Checker::new()) {
            forgot += 1;
        }
    }
    let counts = [with_stale, read_in_flight, lost, long_reads, forgot];
    eprintln!("of {n}: stale, read in flight, lost, long reads, forgot: {counts:?}");
    assert!(with_stale * 4 >= n && with_stale * 4 <= 3 * n, "{counts:?}");
    assert!(counts.iter().all(|&c| c * 20 >= n), "{counts:?}");
}
