//! Names shared by every protocol: node ids and fencing tokens. Each protocol defines its own
//! message type (see [`crate::strategy::ProtocolMessage`]).

/// A fencing token: increases with every new grant, not with renewals.
pub type Token = u64;

/// A node index in the scenario's node list.
pub type NodeId = usize;
