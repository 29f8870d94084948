//! Seeded random streams, one per (seed, component, index).
//!
//! Every stream is a ChaCha8 generator keyed by the scenario seed and set to its own stream
//! number, so that changing one part of a scenario (say, the read rate) does not reshuffle the
//! draws of another (network delays). Nothing else in leasesim produces randomness.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use rand_chacha::ChaCha8Rng as Rng;

/// The parts of a run that draw random numbers, each with streams of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Component {
    /// Delays, loss and duplication; index = sender * message kinds + kind.
    Network = 1,
    /// Read arrivals; index = node.
    Reads = 2,
    /// Write arrivals; index = node.
    Writes = 3,
    /// Random fault generators; index = the generator's position in `random_faults`.
    Faults = 4,
    /// Drift placement; index = node.
    Drift = 5,
    /// Node logic's own stream (jitter, randomised timeouts); index = node.
    Node = 6,
    /// Fixed-rate operations (their jitter and keys); index = node.
    Ops = 7,
    /// Clock sync residuals (`clocks.uncertainty`); index = node.
    Sync = 8,
    /// `explore`'s draws of a run (`explore::draw`): index 0 = the swarm's choice of kinds and
    /// intensities; `(kind << 16) | node` = the draws of nemesis kind `kind` (1 = `pauses`,
    /// 2 = `freezes`, ... 10 = `crashes`, in the field order of `Nemesis`) at `node`, with node
    /// 0xffff for the draws made once for the whole cluster.
    Explore = 9,
    /// `explore`'s guided search (`explore::guided`): index = the run bred.
    Guided = 10,
    /// The delays of refusals (a stream's reset coming back from a crashed process); index =
    /// the refusing node.
    Refusal = 11,
    /// Fsync latencies of a node's disk; index = node.
    Disk = 12,
    /// Fault start times drawn from a range (`at: Uniform(min, max)`); index = the fault's
    /// position in `faults`.
    FaultTimes = 13,
}

/// The stream of `component` for `index` under `seed`.
pub fn stream(seed: u64, component: Component, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(((component as u64) << 48) | (index & ((1 << 48) - 1)));
    rng
}
