//! Names shared by every protocol: node ids, fencing tokens, and the keys and values of the
//! protected resource. Each protocol defines its own message type (see
//! [`crate::strategy::ProtocolMessage`]).

/// A fencing token: increases with every new grant, not with renewals.
pub type Token = u64;

/// A node index in the scenario's node list.
pub type NodeId = usize;

/// A key of the resource: the register is one key (0) unless the workload spreads requests over
/// `workload.keys` of them.
pub type Key = u32;

/// A value of a key. Every client write writes a value of its own (the engine hands it out with
/// the request), so a value names the write that wrote it; [`INITIAL`] is the value every key
/// holds before its first write.
pub type Value = u64;

/// The value of a key no write has written yet.
pub const INITIAL: Value = 0;
