//! Everything ZooKeeperSession's nodes hand the engine goes through these few functions:
//! commands (send, timers) and the facts the oracle needs (grants, holding, reads, writes).
//! An engine whose interface changes is met here alone.

use super::msg::Message;
use crate::clock::ClockKind;
use crate::msg::{Key, NodeId, Token, Value};
use crate::strategy::{Ack, Fact, Out, Register, TimerId};
use crate::time::LocalTime;

pub(super) type Sink = Out<Message>;

/// Sends `msg` to `to`.
pub(super) fn send(out: &mut Sink, to: NodeId, msg: Message) {
    out.send(to, msg);
}

/// The server logged a transaction: it answers once the log is durable.
pub(super) fn persist(out: &mut Sink) {
    out.persist();
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

/// A client: it holds the lock under `token`.
pub(super) fn holding(out: &mut Sink, token: Token) {
    out.report(Fact::Holding { token });
}

/// A client: a read served from its copy under `token`, which held `value` for its key.
pub(super) fn read(out: &mut Sink, token: Token, value: Value) {
    out.report(Fact::Read { token, value });
}

/// A client: the server answered its write `ack`.
pub(super) fn write_acked(out: &mut Sink, ack: Ack) {
    out.report(Fact::WriteAcked {
        key: ack.key,
        value: ack.value,
    });
}

/// A client: a write of `value` to `key` under `token` leaves for the register at `server`.
pub(super) fn write(out: &mut Sink, server: NodeId, token: Token, (key, value): (Key, Value)) {
    out.report(Fact::WriteSent { token });
    out.send(server, Message::Write { token, key, value });
}

/// The server: the write `(key, value)` from `writer` under `token` arrives at the register,
/// and its writer is answered if it is applied.
pub(super) fn apply(
    out: &mut Sink,
    register: &mut Register,
    (writer, token, write): (NodeId, Token, (Key, Value)),
    fencing: bool,
    duplicate: bool,
) {
    register.serve(
        out,
        (writer, token, write),
        fencing,
        duplicate,
        Message::WriteAck,
    );
}
