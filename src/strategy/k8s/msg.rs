//! Kubernetes leader election's messages.

use crate::strategy::ProtocolMessage;

/// A message of Kubernetes leader election.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    Placeholder,
}

impl ProtocolMessage for Message {
    const KINDS: &'static [&'static str] = &["Placeholder"];
    fn kind(&self) -> usize {
        0
    }
}
