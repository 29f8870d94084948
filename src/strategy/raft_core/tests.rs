//! Unit tests of the Raft core: the vote rule, the election timer's instants, the commit rule
//! (Figure 8), stepping down, compaction and snapshots, with fixed inputs and the expected
//! effects derived by hand.

use super::*;
use crate::clock::ClockKind;
use crate::strategy::{Action, Fact, Store};
use crate::time::{LocalDur, LocalTime};

const MS: i64 = 1_000_000;
const S: i64 = 1_000_000_000;
const ROLES: &[Role] = &[Role::Replica, Role::Replica, Role::Replica];

/// The core's messages, as a protocol would carry them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Msg {
    Ask(VoteRequest),
    Vote { term: u64, granted: bool },
    PreVote { term: u64, granted: bool },
}

impl VoteMessages for Msg {
    fn request_vote(request: VoteRequest) -> Msg {
        Msg::Ask(request)
    }
    fn vote(term: u64, granted: bool) -> Msg {
        Msg::Vote { term, granted }
    }
    fn pre_vote(term: u64, granted: bool) -> Msg {
        Msg::PreVote { term, granted }
    }
}

type Core = RaftCore<(), ()>;

fn at(ns: i64) -> LocalTime {
    LocalTime::from_ns(ns)
}

/// An entry of `term`: a write of value `10 term` to key `term` by node 0 when `write`.
fn e(term: u64, write: bool) -> Entry<()> {
    Entry {
        term,
        writer: write.then_some(0),
        key: term as u32,
        value: 10 * term,
        extra: (),
    }
}

/// Node `node` in `term` with a log of entries of `terms` (empty ones), a follower whose
/// election timeout is exactly 1 s.
fn core(node: NodeId, term: u64, terms: &[u64]) -> Core {
    let election = Election::new(LocalDur::from_secs(1), LocalDur::ZERO, None);
    let mut c = Core::new(node, Disk::default(), election);
    c.term = term;
    c.log = Log::from_entries(terms.iter().map(|&t| e(t, false)));
    c
}

/// Runs `f` on node `c.node` with its clocks reading `now`; its actions and its facts.
fn given(
    c: &mut Core,
    now: i64,
    f: impl FnOnce(&mut Core, &mut Cx, &mut Out<Msg>),
) -> (Vec<Action<Msg>>, Vec<Fact>) {
    let node = c.node;
    crate::strategy::with_test_cx(node, ROLES, at(now), |cx| {
        let mut out = Out::default();
        f(c, cx, &mut out);
        out.take()
    })
}

/// [`given`]: the actions alone.
fn call(
    c: &mut Core,
    now: i64,
    f: impl FnOnce(&mut Core, &mut Cx, &mut Out<Msg>),
) -> Vec<Action<Msg>> {
    given(c, now, f).0
}

fn election_timer(ns: i64) -> Action<Msg> {
    Action::SetTimer {
        timer: ELECTION,
        clock: ClockKind::Monotonic,
        at: at(ns),
    }
}

/// Node 1, whose log ends with an entry of term 2 at index 3, is asked at 5 s by candidate 0
/// of term 3 with the candidate's last entry at `(last_index, last_term)`; it moves to term 3
/// first (as every protocol does with a higher term). Its answer, and its effects.
fn ask(last_index: u64, last_term: u64) -> (Option<NodeId>, Vec<Action<Msg>>) {
    let mut c = core(1, 2, &[1, 1, 2]);
    assert!(!c.become_follower(3));
    let request = VoteRequest {
        term: 3,
        last_index,
        last_term,
        transfer: false,
        pre: false,
    };
    let fx = call(&mut c, 5 * S, |c, cx, out| {
        c.answer_vote(cx, 0, request, out);
    });
    (c.voted_for, fx)
}

#[test]
fn a_vote_goes_only_to_a_candidate_whose_log_is_at_least_as_up_to_date() {
    let refused = vec![Action::Send {
        to: 0,
        msg: Msg::Vote {
            term: 3,
            granted: false,
        },
    }];
    // A lower last term, however long the log: refused, and the timer is left alone.
    assert_eq!(ask(9, 1), (None, refused.clone()));
    // The same last term and shorter: refused.
    assert_eq!(ask(2, 2), (None, refused));
    // At least as up to date: granted, and the election timer restarts at 5 s + 1 s.
    let granted = vec![
        election_timer(6 * S),
        Action::Send {
            to: 0,
            msg: Msg::Vote {
                term: 3,
                granted: true,
            },
        },
    ];
    for (last_index, last_term) in [(3, 2), (4, 2), (1, 3)] {
        let got = ask(last_index, last_term);
        assert_eq!(
            got,
            (Some(0), granted.clone()),
            "({last_index}, {last_term})"
        );
    }
}

#[test]
fn one_vote_per_term() {
    let mut c = core(1, 3, &[1]);
    let request = |term| VoteRequest {
        term,
        last_index: 1,
        last_term: 1,
        transfer: false,
        pre: false,
    };
    let granted = |c: &mut Core, from| {
        let fx = call(c, 0, |c, cx, out| {
            c.answer_vote(cx, from, request(3), out);
        });
        fx.contains(&Action::Send {
            to: from,
            msg: Msg::Vote {
                term: 3,
                granted: true,
            },
        })
    };
    assert!(granted(&mut c, 0));
    // Another candidate of the same term, as up to date: refused; the first again: granted.
    assert!(!granted(&mut c, 2));
    assert!(granted(&mut c, 0));
    assert_eq!(c.voted_for, Some(0));
    // A request of an older term is ignored, not answered (etcd-io/raft `Step`, "ignore other
    // cases"; raft-rs `step`).
    let fx = call(&mut c, 0, |c, cx, out| {
        c.answer_vote(cx, 2, request(2), out);
    });
    assert_eq!(fx, []);
}

#[test]
fn the_election_timer_fires_a_timeout_after_it_is_armed_without_ticks() {
    // Timeout 10 s, no jitter: armed at 2.5 s, it fires at 12.5 s exactly.
    let el = Election::new(LocalDur::from_secs(10), LocalDur::ZERO, None);
    let mut c = Core::new(0, Disk::default(), el);
    let fx = call(&mut c, 2_500 * MS, |c, cx, out| c.election.arm(cx, out));
    assert_eq!(fx, [election_timer(12_500 * MS)]);
    // A jitter of 1 ns draws from [0, 1): 0, so the same instant.
    let el = Election::new(LocalDur::from_secs(10), LocalDur::from_ns(1), None);
    let mut c = Core::new(0, Disk::default(), el);
    let fx = call(&mut c, 2_500 * MS, |c, cx, out| c.election.arm(cx, out));
    assert_eq!(fx, [election_timer(12_500 * MS)]);
    // Stickiness: heard from the leader at 5.7 s, it has heard lately until 15.7 s.
    c.election.heard_leader_at = Some(at(5_700 * MS));
    assert!(c.election.heard_leader_lately(at(15_700 * MS - 1)));
    assert!(!c.election.heard_leader_lately(at(15_700 * MS)));
}

#[test]
fn with_ticks_the_election_timer_fires_at_the_tick_that_completes_the_count() {
    // Ticks of 1 s from the start at 0.3 s (at 1.3 s, 2.3 s, ...); a timeout of 10 ticks.
    let tick = Some(LocalDur::from_secs(1));
    let el = Election::new(LocalDur::from_secs(10), LocalDur::ZERO, tick);
    let mut c = Core::new(0, Disk::default(), el);
    c.election.start(at(300 * MS));
    // Armed at 5.7 s: the first tick after it is 6.3 s, the tenth 6.3 + 9 = 15.3 s (9.6 s on).
    let fx = call(&mut c, 5_700 * MS, |c, cx, out| c.election.arm(cx, out));
    assert_eq!(fx, [election_timer(15_300 * MS)]);
    // Armed on a tick, at 6.3 s: the first tick after it is 7.3 s, the tenth 16.3 s (10 s on).
    let fx = call(&mut c, 6_300 * MS, |c, cx, out| c.election.arm(cx, out));
    assert_eq!(fx, [election_timer(16_300 * MS)]);
    // A jitter of one tick draws n from [10, 11): 10, the same instant.
    let el = Election::new(LocalDur::from_secs(10), LocalDur::from_secs(1), tick);
    let mut j = Core::new(0, Disk::default(), el);
    j.election.start(at(300 * MS));
    let fx = call(&mut j, 5_700 * MS, |c, cx, out| c.election.arm(cx, out));
    assert_eq!(fx, [election_timer(15_300 * MS)]);
    // Stickiness in ticks: heard at 5.7 s, it counts ticks 6.3 s, 7.3 s, ...; at 15.3 s the
    // count reaches 10 (from the first tick after 15.3 s, 16.3 s, back to 6.3 s): no longer.
    c.election.heard_leader_at = Some(at(5_700 * MS));
    assert!(c.election.heard_leader_lately(at(15_300 * MS - 1)));
    assert!(!c.election.heard_leader_lately(at(15_300 * MS)));
}

/// Whether node 1, in term 3 in state `state` with `voted_for` and `leader`, grants candidate
/// 0's request of term 3 (a real vote, or a pre-vote when `pre`), both logs alike.
fn grants_in_its_term(
    state: State,
    voted_for: Option<NodeId>,
    leader: Option<NodeId>,
    pre: bool,
) -> bool {
    let mut c = core(1, 3, &[1]);
    (c.state, c.voted_for, c.leader) = (state, voted_for, leader);
    let request = VoteRequest {
        term: 3,
        last_index: 1,
        last_term: 1,
        transfer: false,
        pre,
    };
    let mut granted = false;
    call(&mut c, 0, |c, cx, out| {
        granted = c.answer_vote(cx, 0, request, out);
    });
    granted
}

#[test]
fn a_vote_of_its_own_term_follows_can_vote_whatever_the_state() {
    use State::*;
    // etcd-io/raft raft.go `Step`, `canVote`: the candidate it voted for, or anyone if it voted
    // for no one and knows no leader. The state does not matter: a pre-candidate of term 3
    // that voted for no one grants a real vote of term 3 (raft_test.go `testRecvMsgVote`, its
    // `StatePreCandidate` row refuses only because it voted for itself).
    assert!(grants_in_its_term(PreCandidate, None, None, false));
    assert!(!grants_in_its_term(PreCandidate, Some(1), None, false));
    assert!(grants_in_its_term(Follower, Some(0), Some(2), false));
    // A follower that knows the leader of its term and voted for no one refuses (it learned
    // the term from the leader's append).
    assert!(!grants_in_its_term(Follower, None, Some(2), false));
    assert!(grants_in_its_term(Follower, None, None, false));
    // A pre-vote of its own term takes the same rule.
    assert!(!grants_in_its_term(Follower, None, Some(2), true));
    assert!(grants_in_its_term(Follower, None, None, true));
}

/// Node 0 elected leader of term `term + 1` with node 1's vote at 1 s, from a log of `log`.
fn leader(term: u64, log: &[Entry<()>]) -> Core {
    let mut c = core(0, term, &[]);
    c.log = Log::from_entries(log.iter().copied());
    let fx = call(&mut c, S, |c, cx, out| {
        assert!(!c.campaign(cx, false, out));
        assert!(c.count_vote(1, term + 1, true, 2));
        c.become_leader(cx, (), out);
    });
    // It asked both others with its last entry, and stopped its election timer.
    let (last_index, last_term) = (c.last_index(), c.log.last_term());
    let ask = Msg::Ask(VoteRequest {
        term: term + 1,
        last_index,
        last_term,
        transfer: false,
        pre: false,
    });
    assert!(fx.contains(&Action::Send { to: 1, msg: ask }));
    assert!(fx.contains(&Action::Send { to: 2, msg: ask }));
    assert_eq!(fx.last(), Some(&Action::CancelTimer { timer: ELECTION }));
    assert_eq!(
        (c.state, c.leader, c.peers.len()),
        (State::Leader, Some(0), 2)
    );
    c
}

#[test]
fn an_entry_of_an_earlier_term_commits_only_with_one_of_the_current_term() {
    // Raft's Figure 8: the leader of term 3 holds a write of term 2 at index 2, not known
    // committed (its commit index is 1).
    let mut c = leader(2, &[e(1, false), e(2, true)]);
    call(&mut c, S, |c, _, out| c.commit_to(1, out, false));
    // Node 1 stores index 2: a majority (0 and 1) stores it, but it is of term 2, not 3.
    assert!(c.matched(0, 2));
    let fx = given(&mut c, S, |c, _, out| {
        assert!(!c.commit_quorum(2, out));
    });
    assert!(fx.0.is_empty() && fx.1.is_empty());
    assert_eq!(c.commit(), 1);
    // A write of term 3 at index 3, stored by node 1 too: both commit, each reported once.
    c.log.push(e(3, true));
    assert!(c.matched(0, 3));
    // A late acknowledgement of index 2 lowers nothing.
    assert!(!c.matched(0, 2));
    let (_, fx) = given(&mut c, S, |c, _, out| {
        assert!(c.commit_quorum(2, out));
    });
    let committed = |index, token| Fact::Committed {
        index,
        writer: 0,
        token,
        key: token as u32,
        value: 10 * token,
        acked: true,
    };
    assert_eq!(fx, [committed(2, 2), committed(3, 3)]);
    // The state machine applied both writes.
    let state = c.applied();
    assert_eq!((c.commit(), state.get(2), state.get(3)), (3, 20, 30));
}

#[test]
fn truncating_below_the_commit_index_takes_the_state_back_with_it() {
    // Writes of terms 1, 2, 3 (keys 1, 2, 3: values 10, 20, 30), all committed; a truncation to
    // the first entry leaves the commit index at 1 and the state with the first write only.
    let mut c = core(0, 3, &[]);
    c.log = Log::from_entries([e(1, true), e(2, true), e(3, true)]);
    call(&mut c, 0, |c, _, out| c.commit_to(3, out, false));
    assert_eq!((c.applied().get(2), c.applied().get(3)), (20, 30));
    c.truncate(1);
    assert_eq!((c.commit(), c.last_index()), (1, 1));
    let s = c.applied();
    assert_eq!((s.get(1), s.get(2), s.get(3)), (10, 0, 0));
}

#[test]
fn a_higher_term_makes_a_leader_a_follower_with_no_vote() {
    let mut c = leader(2, &[e(1, false)]);
    assert_eq!((c.term, c.voted_for), (3, Some(0)));
    // Term 5 seen: it was leading; now it follows in term 5, with no vote, no leader, no peers.
    assert!(c.become_follower(5));
    assert_eq!((c.state, c.term, c.voted_for), (State::Follower, 5, None));
    assert_eq!((c.leader, c.peers.len()), (None, 0));
    // A vote for its old campaign counts for nothing now.
    assert!(!c.count_vote(1, 3, true, 2));
    // Stepping down in its own term keeps its vote.
    c.voted_for = Some(2);
    assert!(!c.become_follower(5));
    assert_eq!((c.term, c.voted_for), (5, Some(2)));
    // A leader never campaigns: nothing happens.
    let mut l = leader(2, &[]);
    let fx = call(&mut l, 2 * S, |c, cx, out| {
        assert!(!c.campaign(cx, false, out));
    });
    assert!(fx.is_empty());
    assert_eq!(l.term, 3);
}

#[test]
fn the_log_stores_agrees_and_truncates_by_raft_s_rules() {
    let mut log = Log::from_entries([e(1, false), e(1, true), e(2, true)]);
    assert!(log.agrees(0, 0) && log.agrees(3, 2) && !log.agrees(3, 1) && !log.agrees(4, 2));
    // The same entry again changes nothing; one of another term drops it and what follows.
    assert!(!log.store(2, e(1, true)));
    assert_eq!(log.last_index(), 3);
    assert!(log.store(2, e(3, false)));
    assert_eq!((log.last_index(), log.term(2)), (2, Some(3)));
    assert!(!log.store(3, e(3, true)));
    // Compacted through 2: the base keeps its term, entries before it are gone and agree; the
    // write at 1 was dropped with the conflict, so the base state holds nothing yet.
    log.compact(2);
    assert_eq!((log.base(), log.term(2), log.term(1)), (2, Some(3), None));
    assert!(log.agrees(1, 7) && log.agrees(2, 3) && !log.agrees(2, 1));
    assert_eq!(log.base_state(), &Store::default());
    // Compacted through 3: the base state has entry 3's write (30 to key 3).
    log.compact(3);
    assert_eq!((log.base_state().get(3), log.base_state().get(1)), (30, 0));
    // An entry at or below the base is committed, so the leader's is the same: not stored.
    assert!(!log.store(3, e(9, true)));
    assert_eq!(log.term(3), Some(3));
}

#[test]
fn commits_compact_what_no_peer_needs_and_keep_the_last_committed_ones() {
    // A follower keeps the last 2 committed entries: committing 8 of 10 leaves 7 and 8.
    let mut f = core(1, 1, &[1; 10]);
    f.set_retain(2);
    call(&mut f, 0, |c, _, out| c.commit_to(8, out, false));
    assert_eq!((f.log.base(), f.last_index()), (6, 10));
    // A leader keeps what its slowest peer lacks (above 5), bounded by the same 2 (from 6).
    let mut l = leader(1, &[e(1, false); 10]);
    l.set_retain(2);
    assert!(l.matched(0, 7) && l.matched(1, 5));
    call(&mut l, 0, |c, _, out| c.commit_to(8, out, false));
    assert_eq!(l.log.base(), 6);
    // Both peers store 10: committing 10 compacts everything.
    assert!(l.matched(0, 10) && l.matched(1, 10));
    call(&mut l, 0, |c, _, out| c.commit_to(10, out, false));
    assert_eq!((l.log.base(), l.last_index(), l.commit()), (10, 10, 10));
    // Its snapshot is of the whole committed prefix.
    assert_eq!(l.snapshot().index, 10);
}

#[test]
fn a_snapshot_replaces_a_log_that_lacks_its_last_entry_and_keeps_one_that_has_it() {
    // A snapshot whose state has `value` for key 9.
    let snap = |index, term, value| {
        let mut state = Store::default();
        state.put(9, value);
        Snapshot {
            index,
            entry: e(term, false),
            state,
        }
    };
    // Three entries of term 1; a snapshot up to 6 (term 2): the log is replaced, and the state
    // is the snapshot's.
    let mut a = core(1, 2, &[1, 1, 1]);
    assert!(a.install(snap(6, 2, 4)));
    assert_eq!((a.log.base(), a.last_index(), a.commit()), (6, 6, 6));
    assert_eq!((a.applied().get(9), a.log.last_term()), (4, 2));
    assert_eq!(a.log.base_state().get(9), 4);
    // The same snapshot again, or an older one, changes nothing.
    assert!(!a.install(snap(6, 2, 5)) && !a.install(snap(5, 2, 3)));
    assert_eq!(a.applied().get(9), 4);
    // A log that holds the snapshot's last entry (index 3, term 2) keeps what follows.
    let mut b = core(1, 2, &[1, 1, 2, 2]);
    b.log = Log::from_entries([e(1, true), e(1, false), e(2, true), e(2, false)]);
    assert!(b.install(snap(3, 2, 2)));
    assert_eq!((b.commit(), b.last_index(), b.applied().get(9)), (3, 4, 2));
}

#[test]
fn pending_reads_leave_in_order_once_their_condition_is_reached() {
    let mut reads = PendingReads::default();
    let read = |key| KeptRead {
        since: crate::strategy::Stamp::new(crate::time::SimTime::ZERO, u64::from(key)),
        key,
    };
    reads.push(1, read(1));
    reads.push(1, read(2));
    reads.push(3, read(3));
    let keys = |r: &mut PendingReads, reached| r.ready(reached).map(|k| k.key).collect::<Vec<_>>();
    assert_eq!(keys(&mut reads, 0), Vec::<u32>::new());
    assert_eq!(keys(&mut reads, 2), [1, 2]);
    assert!(!reads.is_empty());
    assert_eq!(keys(&mut reads, 3), [3]);
    assert!(reads.is_empty());
}

#[test]
fn a_quorum_is_the_value_a_majority_has_reached() {
    // Five replicas at 9, 4, 7, 1, 7: three of them have reached 7, not 9 or 4.
    assert_eq!(quorum([9, 4, 7, 1, 7].into_iter(), 3), 7);
    assert_eq!(quorum([9, 4, 7, 1, 7].into_iter(), 5), 1);
    assert_eq!(quorum([2].into_iter(), 1), 2);
}

/// Node 1 (term 2, log ending (2, 3), following `leader`) asked at 5 s by node 0 for a pre-vote
/// for `term`, node 0's log ending `(last_index, last_term)`: its answer and effects.
fn ask_pre(term: u64, last: (u64, u64), leader: Option<NodeId>) -> (Core, Vec<Action<Msg>>) {
    let mut c = core(1, 2, &[1, 1, 2]);
    c.leader = leader;
    let request = VoteRequest {
        term,
        last_index: last.0,
        last_term: last.1,
        transfer: false,
        pre: true,
    };
    let fx = call(&mut c, 5 * S, |c, cx, out| {
        c.answer_vote(cx, 0, request, out);
    });
    (c, fx)
}

#[test]
fn a_pre_vote_is_granted_without_a_vote_a_term_or_a_timer() {
    let pre = |term, granted| {
        vec![Action::Send {
            to: 0,
            msg: Msg::PreVote { term, granted },
        }]
    };
    // For term 3 with a log as up to date: granted in term 3, while the voter stays in term 2
    // with no vote cast and its timer left alone (no action but the answer).
    let (c, fx) = ask_pre(3, (3, 2), Some(2));
    assert_eq!(fx, pre(3, true));
    assert_eq!((c.term, c.voted_for, c.state), (2, None, State::Follower));
    // A shorter log: refused in the voter's term.
    assert_eq!(ask_pre(3, (2, 2), None).1, pre(2, false));
    // For its own term 2: granted only with no vote and no leader known.
    assert_eq!(ask_pre(2, (3, 2), Some(2)).1, pre(2, false));
    assert_eq!(ask_pre(2, (3, 2), None).1, pre(2, true));
}

#[test]
fn a_pre_candidate_stays_in_its_term_and_campaigns_only_with_a_majority_of_pre_votes() {
    let mut c = core(0, 2, &[1]);
    let fx = call(&mut c, 0, |c, cx, out| {
        assert!(!c.pre_campaign(cx, out));
    });
    assert_eq!(
        (c.state, c.term, c.voted_for),
        (State::PreCandidate, 2, None)
    );
    let ask = Msg::Ask(VoteRequest {
        term: 3,
        last_index: 1,
        last_term: 1,
        transfer: false,
        pre: true,
    });
    let want = vec![
        election_timer(S),
        Action::Send { to: 1, msg: ask },
        Action::Send { to: 2, msg: ask },
    ];
    assert_eq!(fx, want);
    // A refusal, and a grant for another term, count for nothing; a grant for term 3 makes two
    // of three.
    assert!(!c.count_pre_vote(1, 3, false, 2));
    assert!(!c.count_pre_vote(1, 2, true, 2));
    assert!(!c.count_vote(1, 3, true, 2));
    assert!(c.count_pre_vote(2, 3, true, 2));
}

#[test]
fn a_duplicate_is_not_a_first_copy_and_majorities_count_replicas_alone() {
    crate::strategy::with_test_cx(0, ROLES, at(0), |cx| {
        assert!(first_copy(cx));
        cx.duplicate = true;
        assert!(!first_copy(cx));
    });
    // Four replicas and a contender: a majority is 3 (of 3 replicas, 2).
    let roles = [
        Role::Replica,
        Role::Contender,
        Role::Replica,
        Role::Replica,
        Role::Replica,
    ];
    crate::strategy::with_test_cx(0, &roles, at(0), |cx| assert_eq!(majority(cx), 3));
    crate::strategy::with_test_cx(0, ROLES, at(0), |cx| assert_eq!(majority(cx), 2));
    let s = Scenario::from_ron(
        r#"Scenario(duration: "1s", lease: (duration: "1s"), strategy: Base(),
            nodes: [(name: "g", role: Grantor), (name: "a", role: Replica),
            (name: "b", role: Replica), (name: "c", role: Contender), (name: "d", role: Replica)])"#,
    )
    .unwrap();
    assert_eq!(replicas(&s), 3);
}

#[test]
fn a_restart_keeps_the_term_the_vote_and_the_log() {
    let mut c = core(1, 3, &[1, 2]);
    c.voted_for = Some(2);
    assert!(!c.is_leader());
    let election = Election::new(LocalDur::from_secs(1), LocalDur::ZERO, None);
    let back = Core::new(1, c.into_disk(), election);
    assert_eq!(
        (
            back.term,
            back.voted_for,
            back.last_index(),
            back.log.last_term()
        ),
        (3, Some(2), 2, 2)
    );
}

#[test]
fn a_leaders_tail_is_full_at_the_bound_of_uncommitted_entries() {
    let mut l = leader(1, &[]);
    assert!(l.is_leader());
    for _ in 1..MAX_UNCOMMITTED {
        l.log.push(e(2, false));
    }
    // Commit 0, last 16,383: one short.
    assert!(!l.tail_full());
    l.log.push(e(2, false));
    assert!(l.tail_full());
    // One committed: short again.
    call(&mut l, S, |c, _, out| c.commit_to(1, out, false));
    assert!(!l.tail_full());
}

#[test]
fn only_a_granted_vote_of_its_term_counts_and_each_voter_once() {
    // Node 0 campaigns into term 1 among five (its own vote first); a majority is 3.
    let roles = [Role::Replica; 5];
    let mut c = core(0, 0, &[]);
    crate::strategy::with_test_cx(0, &roles, at(0), |cx| {
        assert!(!c.campaign(cx, false, &mut Out::<Msg>::default()));
    });
    assert!(!c.count_vote(1, 1, true, 3), "two of three");
    // Each of these would be the third.
    assert!(!c.count_vote(2, 1, false, 3), "refused");
    assert!(!c.count_vote(2, 0, true, 3), "of another term");
    assert!(!c.count_vote(1, 1, true, 3), "the same voter again");
    assert!(c.count_vote(2, 1, true, 3));
    // A follower counts nothing.
    let mut f = core(1, 1, &[]);
    assert!(!f.count_vote(2, 1, true, 1));
}

#[test]
fn a_leader_finds_its_peers_and_their_progress_only_rises() {
    // Node 0 leads: its peers are nodes 1 and 2, in that order.
    let mut l = leader(1, &[e(1, false); 4]);
    assert_eq!((l.peer(1), l.peer(2), l.peer(0)), (Some(0), Some(1), None));
    assert!(l.matched(1, 3));
    assert!(!l.matched(1, 3), "the same index again");
    assert!(!l.matched(1, 2), "a late one");
    assert_eq!(l.peers[1].matched, 3);
}

/// Twenty draws of `c`'s election timer armed at `now_ns`, from one random stream.
fn twenty_draws(c: &mut Core, now_ns: i64) -> Vec<i64> {
    let fx = call(c, now_ns, |c, cx, out| {
        for _ in 0..20 {
            c.election.arm(cx, out);
        }
    });
    fx.iter()
        .map(|a| match a {
            Action::SetTimer { at, .. } => at.ns(),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_drawn_timeout_falls_within_its_jitter_and_varies() {
    // Timeout 10 s with 5 s of jitter, armed at 2 s: in [12 s, 17 s), not always the same.
    let el = Election::new(LocalDur::from_secs(10), LocalDur::from_secs(5), None);
    let drawn = twenty_draws(&mut Core::new(0, Disk::default(), el), 2 * S);
    assert!(
        drawn.iter().all(|&t| (12 * S..17 * S).contains(&t)),
        "{drawn:?}"
    );
    assert!(drawn.iter().any(|&t| t != drawn[0]), "{drawn:?}");
    // In ticks of 1 s from 0, a timeout of 10 ticks with 5 of jitter armed at 2.5 s: the
    // n-th tick after it for n in [10, 15): 12 s to 16 s, whole seconds.
    let tick = Some(LocalDur::from_secs(1));
    let el = Election::new(LocalDur::from_secs(10), LocalDur::from_secs(5), tick);
    let ticks = twenty_draws(&mut Core::new(0, Disk::default(), el), 2_500 * MS);
    assert!(
        ticks
            .iter()
            .all(|&t| (12 * S..=16 * S).contains(&t) && t % S == 0),
        "{ticks:?}"
    );
    assert!(ticks.iter().any(|&t| t != ticks[0]), "{ticks:?}");
}

#[test]
fn the_base_deadline_counts_the_timeout_without_a_draw() {
    // No ticks: 10 s after 2.5 s, whatever the jitter.
    let el = Election::new(LocalDur::from_secs(10), LocalDur::from_secs(5), None);
    assert_eq!(el.base_deadline(at(2_500 * MS)), at(12_500 * MS));
    // Ticks of 1 s from 0.3 s, 10 ticks from 5.7 s: the first at 6.3 s, the tenth 15.3 s.
    let mut el = Election::new(
        LocalDur::from_secs(10),
        LocalDur::from_secs(5),
        Some(LocalDur::from_secs(1)),
    );
    el.start(at(300 * MS));
    assert_eq!(el.base_deadline(at(5_700 * MS)), at(15_300 * MS));
}

/// Entries 1 to 5 of term 1, writes of keys 1 to 5 (values 10), compacted through 2.
fn compacted() -> Log<()> {
    let mut log = Log::from_entries((1..=5).map(|key| Entry {
        term: 1,
        writer: Some(0),
        key,
        value: 10,
        extra: (),
    }));
    log.compact(2);
    assert_eq!((log.base(), log.last_index()), (2, 5));
    log
}

#[test]
fn a_compacted_log_counts_from_its_base() {
    let log = compacted();
    let keys = |index| log.after(index).map(|e| e.key).collect::<Vec<_>>();
    assert_eq!(keys(2), [3, 4, 5]);
    assert_eq!(keys(3), [4, 5]);
    // Through 3: the base's keys 1 and 2 and entry 3's key, not 4.
    let state = log.state_through(3);
    assert_eq!(
        [1, 2, 3, 4].map(|k| state.get(k)),
        [10, 10, 10, crate::strategy::Store::default().get(4)]
    );
    let mut cut = log.clone();
    cut.truncate(3);
    assert_eq!(cut.last_index(), 3);
    // The last entry stored again, of its own term: the same entry, not a second.
    let mut again = log;
    let last = again.last();
    assert!(!again.store(5, last));
    assert_eq!(again.last_index(), 5);
}

#[test]
fn pending_reads_are_bounded_and_refused_together() {
    let read = |op| KeptRead {
        since: crate::strategy::Stamp::new(crate::time::SimTime::ZERO, op),
        key: 1,
    };
    let mut reads = PendingReads::default();
    for op in 0..MAX_PENDING_READS as u64 - 1 {
        reads.push(1, read(op));
    }
    assert!(!reads.is_full());
    reads.push(1, read(MAX_PENDING_READS as u64));
    assert!(reads.is_full());
    // A leader stepping down under token 4 refuses each, and holds none after.
    let mut small = PendingReads::default();
    small.push(1, read(7));
    small.push(2, read(8));
    let mut out = Out::<Msg>::default();
    small.refuse_all(4, &mut out);
    let refused: Vec<Fact> = [7, 8]
        .map(|op| Fact::Refused {
            token: 4,
            since: read(op).since,
        })
        .into();
    assert_eq!(out.facts(), refused);
    assert!(small.is_empty());
}
