//! The client workload: each node's Poisson streams of reads and writes (each stream's next
//! arrival waits in `engine::arrivals`, beside the queue), its fixed-rate stream
//! (`workload.periodic`, whose operations are queued), the key each request names, and what an
//! arrival does.

use super::{Ev, Sim};
use crate::msg::NodeId;
use crate::rng::Rng;
use crate::strategy::{Key, Protocol, Request};
use crate::time::{Dur, SimTime};

/// A node's fixed-rate operations (`workload.periodic`): operation i arrives at
/// `start + jitter + i * every`, shifted by a uniform draw in `[-jitter, +jitter]`. It is drawn
/// by an [`Ev::Generate`] at `start + i * every`, the earliest it can arrive, so that one
/// pending draw suffices however far the jitter reorders operations.
pub(crate) struct Periodic {
    pub(crate) every: Dur,
    pub(crate) jitter: Dur,
    pub(crate) write_every: u32,
    pub(crate) rng: Rng,
    /// The next operation's index, and the true time of the stream's start.
    pub(crate) next: u64,
    pub(crate) start: SimTime,
}

impl<P: Protocol> Sim<'_, P> {
    /// Draws the next arrival of node `n`'s Poisson stream of writes (or reads), and its key: it
    /// waits beside the queue (`engine::arrivals`) under the sequence number it takes now.
    // Inlined always: once per arrival, and out of line (the compiler's choice varied with the
    // code around it) it took about 19 instructions more an arrival.
    #[inline(always)]
    pub(super) fn schedule_arrival(&mut self, n: NodeId, write: bool) {
        let (node, draws) = (&mut self.nodes[n], self.draws.as_ref());
        let stream = if write {
            node.writes.as_mut()
        } else {
            node.reads.as_mut()
        };
        if let Some(stream) = stream {
            let (gap, key) = stream.next(self.keys, draws);
            let seq = self.queue.reserve_seq();
            self.arrivals
                .push(self.now + gap, seq, n as u32, write, key);
        }
    }

    /// Client request `kind` arrives at node `n` now, from its Poisson stream (which draws its
    /// next arrival first) or, if `periodic`, from its fixed-rate one: the history names it
    /// (its invocation's tick, a write's value) and it goes to the node, which tells the
    /// history of its invocation ([`Sim::route_request`]).
    // Inlined always: once per arrival (the compiler kept it out of line as the code around it
    // grew, at about 18 instructions an arrival).
    #[inline(always)]
    pub(super) fn arrive(&mut self, n: NodeId, kind: Request, periodic: bool) {
        if !periodic {
            self.schedule_arrival(n, kind.is_write());
        }
        let op = self.harm.tick();
        let kind = match kind {
            Request::Write { key, .. } => {
                self.stats.writes_arrived += 1;
                Request::Write { key, value: op }
            }
            read => {
                self.stats.reads_arrived += 1;
                read
            }
        };
        self.route_request(n, kind, periodic, op);
    }

    /// Node `n`'s fixed-rate stream draws its next operation (its jitter, its key) and the
    /// draw after it.
    pub(super) fn generate(&mut self, n: NodeId) {
        use rand::RngExt;
        let keys = self.keys;
        let Some(ops) = self.nodes[n].ops.as_mut() else {
            return;
        };
        let i = ops.next;
        ops.next += 1;
        let j = ops.jitter.ns();
        let shift = if j > 0 {
            ops.rng.random_range(0..=2 * j)
        } else {
            0
        };
        let key = draw_key(&mut ops.rng, keys);
        let write = ops.write_every > 0 && i % u64::from(ops.write_every) == 0;
        let kind = if write {
            Request::Write { key, value: 0 }
        } else {
            Request::Read { key }
        };
        // Drawn at start + i * every (now): it arrives at that plus a shift in [0, 2 jitter].
        // One that would arrive after the run is never queued: a jitter far beyond the run
        // must not fill the queue with requests that never arrive.
        let next = ops.start + Dur::from_ns(ops.every.ns().saturating_mul(i as i64 + 1));
        let at = self.now + Dur::from_ns(shift);
        if at < self.end {
            self.queue.push(
                at,
                Ev::Arrival {
                    node: n as u32,
                    kind,
                    periodic: true,
                    op: 0,
                },
            );
        }
        if next < self.end {
            self.queue.push(next, Ev::Generate { node: n as u32 });
        }
    }
}

/// A uniform key in `[0, keys)`, drawn only when there is more than one (so that a one-key
/// workload's streams are what they were before keys existed).
pub(super) fn draw_key(rng: &mut Rng, keys: u32) -> Key {
    use rand::RngExt;
    if keys > 1 {
        rng.random_range(0..keys)
    } else {
        0
    }
}
