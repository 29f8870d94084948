//! TrueTime's messages.

use crate::strategy::ProtocolMessage;

/// A message of TrueTime.
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
