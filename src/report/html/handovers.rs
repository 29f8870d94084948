//! Every handover of a run's write authority, with its slack, from the belief pieces a
//! timeline kept: what the report draws as a band between two holders.
//!
//! The rule is the oracle's, which finds only the least slack as it sweeps (`min_slack_ns`; see
//! [`crate::oracle`]): a node's *belief stretch* is a maximal run of its pieces end to end; at
//! the start of each stretch (ordered by start, then by node), the *previous holder* is the node
//! whose stretch, among those that started before, ends latest (an open one at the run's end);
//! when that is another node (on a tie, the other node), the start is a handover, from the
//! other node whose stretch ends latest, and its slack is this start minus that end (negative
//! when they overlapped).

use crate::msg::NodeId;
use crate::oracle::Piece;
use crate::time::SimTime;

/// One handover: `from`'s belief ended at `prev_end` (or goes on past `start`, for a negative
/// slack), `to`'s began at `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handover {
    pub from: NodeId,
    pub to: NodeId,
    pub prev_end: SimTime,
    pub start: SimTime,
}

impl Handover {
    pub fn slack_ns(&self) -> i64 {
        self.start.ns() - self.prev_end.ns()
    }
}

/// A node's belief stretches: its pieces joined where one ends as the next begins.
fn stretches(pieces: &[Piece]) -> Vec<(SimTime, SimTime)> {
    let mut out: Vec<(SimTime, SimTime)> = Vec::new();
    for p in pieces.iter().filter(|p| p.end > p.start) {
        match out.last_mut() {
            Some(last) if last.1 == p.start => last.1 = p.end,
            _ => out.push((p.start, p.end)),
        }
    }
    out
}

/// The handovers of `beliefs` (each node's pieces in time order), in order of their start.
pub fn handovers(beliefs: &[Vec<Piece>]) -> Vec<Handover> {
    let mut all: Vec<(SimTime, NodeId, SimTime)> = beliefs
        .iter()
        .enumerate()
        .flat_map(|(n, pieces)| stretches(pieces).into_iter().map(move |(s, e)| (s, n, e)))
        .collect();
    all.sort();
    // Per node, the latest end among its stretches that started before the one at hand.
    let mut latest: Vec<Option<SimTime>> = vec![None; beliefs.len()];
    let mut out = Vec::new();
    for (start, to, end) in all {
        let other = latest
            .iter()
            .enumerate()
            .filter(|&(m, _)| m != to)
            .filter_map(|(m, e)| e.map(|e| (e, m)))
            // Ties between other nodes go to the lower index, as the stretch order does.
            .max_by_key(|&(e, m)| (e, std::cmp::Reverse(m)));
        if let Some((prev_end, from)) = other {
            if latest[to].is_none_or(|own| prev_end >= own) {
                out.push(Handover {
                    from,
                    to,
                    prev_end,
                    start,
                });
            }
        }
        latest[to] = Some(latest[to].map_or(end, |e| e.max(end)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(start: i64, end: i64) -> Piece {
        Piece {
            start: SimTime::from_ns(start),
            end: SimTime::from_ns(end),
            token: 1,
            running: true,
        }
    }

    /// a holds [0, 10) and [10, 20) (one stretch), b from 25: one handover, slack 25 - 20 = 5.
    /// Then a again from 30 while b holds to 40: a handover back, slack 30 - 40 = -10.
    #[test]
    fn a_handover_per_change_of_holder_with_its_slack() {
        let a = vec![piece(0, 10), piece(10, 20), piece(30, 50)];
        let b = vec![piece(25, 40)];
        let h = handovers(&[a, b]);
        let got: Vec<(NodeId, NodeId, i64)> =
            h.iter().map(|h| (h.from, h.to, h.slack_ns())).collect();
        assert_eq!(got, vec![(0, 1, 5), (1, 0, -10)]);
    }

    /// A node that takes the lease back after its own stretch ended last is no handover: a
    /// holds [0, 10) and [20, 30), b held [2, 5): at 20, a's own end 10 is later than b's 5.
    #[test]
    fn taking_the_lease_back_is_no_handover() {
        let a = vec![piece(0, 10), piece(20, 30)];
        let b = vec![piece(2, 5)];
        let h = handovers(&[a, b]);
        // b's start at 2 is a handover from a (still believing until 10): slack 2 - 10 = -8.
        assert_eq!(h.len(), 1);
        assert_eq!((h[0].from, h[0].to, h[0].slack_ns()), (0, 1, -8));
    }

    /// Two stretches that start together: the higher-indexed node's is a handover from the
    /// lower-indexed one, with slack -(the lower one's length) when it ends first.
    #[test]
    fn simultaneous_starts_hand_over_by_index() {
        let h = handovers(&[vec![piece(5, 8)], vec![piece(5, 20)]]);
        assert_eq!(h.len(), 1);
        assert_eq!((h[0].from, h[0].to, h[0].slack_ns()), (0, 1, -3));
    }
}
