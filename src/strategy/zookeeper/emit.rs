//! Everything ZooKeeperSession's nodes hand the engine goes through these few functions:
//! commands (send, timers) and the facts the oracle needs (grants, holding, reads, writes).
//! An engine whose interface changes is met here alone.

use super::msg::Message;
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::strategy::{Fact, Out, Register, TimerId};
use crate::time::LocalTime;

pub(super) type Sink = Out<Message>;

/// Sends `msg` to `to`.
pub(super) fn send(out: &mut Sink, to: NodeId, msg: Message) {
    out.send(to, msg);
}

/// Arms `timer` at `at` on the monotonic clock.
pub(super) fn arm(out: &mut Sink, timer: TimerId, at: LocalTime) {
    out.set_timer(timer, ClockKind::Monotonic, at);
}

pub(super) fn cancel(out: &mut Sink, timer: TimerId) {
    out.cancel_timer(timer);
}

/// The server: the lock is `token`'s (the node's sequence number), `to`'s, until its session's
/// expiry `until` on the server's monotonic clock.
pub(super) fn issued(out: &mut Sink, token: Token, to: NodeId, until: LocalTime) {
    out.report(Fact::Issued { token, to, until });
}

/// The server: the holder's session now expires at `until`.
pub(super) fn renewed(out: &mut Sink, token: Token, until: LocalTime) {
    out.report(Fact::Renewed { token, until });
}

/// A client: it holds the lock under `token`, its copy at `version`.
pub(super) fn holding(out: &mut Sink, token: Token, version: u64) {
    out.report(Fact::Holding { token, version });
}

/// A client: a read served from its copy under `token`.
pub(super) fn read(out: &mut Sink, token: Token) {
    out.report(Fact::Read { token });
}

/// A client: a write under `token` leaves for the register at `server`.
pub(super) fn write(out: &mut Sink, server: NodeId, token: Token) {
    out.report(Fact::WriteSent { token });
    out.send(server, Message::Write { token });
}

/// The server: a write from `writer` arrives at the register.
pub(super) fn apply(
    out: &mut Sink,
    register: &mut Register,
    writer: NodeId,
    token: Token,
    fencing: bool,
    duplicate: bool,
) {
    out.report(register.apply(writer, token, fencing, duplicate));
}
