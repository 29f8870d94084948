//! The protected resource as a protocol hosts it: a register with a version, and the fencing
//! check (a write under a token older than one already applied is rejected). A protocol keeps
//! one where writes land (on the base protocol's grantor, durable across its crashes) and reports each arriving write with the fact [`Register::apply`]
//! returns, so the harm oracle sees exactly what the resource did.

use super::Fact;
use crate::msg::{NodeId, Token};

/// A register: how many writes it applied, and the highest token among them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Register {
    version: u64,
    max_token: Token,
}

impl Register {
    /// How many writes the register has applied.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// A write from `writer` under `token` arrives. With `fencing`, a token lower than the
    /// highest applied is rejected; otherwise it is applied. `duplicate`: a second copy of a write
    /// already applied, which is not applied again. Returns the fact to report.
    pub fn apply(&mut self, writer: NodeId, token: Token, fencing: bool, duplicate: bool) -> Fact {
        if duplicate {
            return Fact::DuplicateWrite { writer, token };
        }
        if fencing && token < self.max_token {
            return Fact::WriteFenced { writer, token };
        }
        self.max_token = self.max_token.max(token);
        self.version += 1;
        Fact::WriteApplied { writer, token }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type E = Fact;

    #[test]
    fn fencing_rejects_only_older_tokens() {
        let mut r = Register::default();
        assert_eq!(
            r.apply(1, 2, true, false),
            E::WriteApplied {
                writer: 1,
                token: 2
            }
        );
        // Token 1 after token 2: fenced, not applied.
        assert_eq!(
            r.apply(2, 1, true, false),
            E::WriteFenced {
                writer: 2,
                token: 1
            }
        );
        // The same token again is not older: applied.
        assert!(matches!(r.apply(1, 2, true, false), E::WriteApplied { .. }));
        assert_eq!(r.version(), 2);
        // Without fencing the old token is applied (and the oracle calls it unsafe).
        assert!(matches!(
            r.apply(2, 1, false, false),
            E::WriteApplied { .. }
        ));
        assert_eq!(r.version(), 3);
        // A duplicate is never applied.
        assert!(matches!(
            r.apply(1, 2, false, true),
            E::DuplicateWrite { .. }
        ));
        assert_eq!(r.version(), 3);
    }
}
