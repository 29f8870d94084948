//! `explore` (SPEC 5): swarm testing of a scenario's strategy inside a `nemesis` envelope, and
//! the shrinking of the first violation into a scenario file that replays it.

pub mod draw;
pub mod shrink;
