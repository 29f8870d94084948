//! The API server: it stores the Lease record with a resourceVersion, answers Get, and applies an
//! Update iff the resourceVersion it carries is still current (optimistic concurrency),
//! answering with the record's resourceVersion after it. It decides nothing about time. An
//! Update with no holder is a release: it grants nothing. It also hosts the protected resource: controllers write through
//! it. Duplicates change nothing: HTTP runs over TCP, so it never sees a copy of a request the
//! network duplicated, and the resource applies a duplicated write once.

use super::msg::{Lease, Message};
use crate::clock::ClockKind;
use crate::msg::NodeId;
use crate::strategy::{Cx, Fact, LeaseParams, Out, Register};

/// What the API server keeps across a crash: etcd has it on disk.
#[derive(Clone, Debug, Default)]
pub struct Disk {
    /// The Lease, if it was ever created, and its resourceVersion (0 while it does not exist).
    pub lease: Option<Lease>,
    pub rv: u64,
    /// The last resourceVersion handed out: a new one is always larger (etcd's revision).
    pub last_rv: u64,
    /// The protected resource.
    pub register: Register,
}

/// The API server (the scenario's one `Grantor`).
pub struct ApiServer {
    pub(super) p: LeaseParams,
    pub(super) disk: Disk,
}

impl ApiServer {
    pub fn on_start(&mut self, cx: &Cx) {
        if cx.restarted && self.p.grantor_restart == crate::scenario::GrantorRestart::Forget {
            // etcd lost its data: the Lease is gone (the revision counter and the resource are
            // kept, so an Update that still carries an old resourceVersion cannot match).
            self.disk.lease = None;
            self.disk.rv = 0;
        }
    }

    pub fn on_message(&mut self, cx: &Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match msg {
            // HTTP over TCP delivers a request once: a copy the network duplicated is not seen.
            Message::Get { .. } | Message::Update { .. } if cx.duplicate => {}
            Message::Get { req } => out.send(
                from,
                Message::Record {
                    req,
                    rv: self.disk.rv,
                    lease: self.disk.lease,
                },
            ),
            Message::Update { req, rv, lease } => {
                let ok = rv == self.disk.rv;
                if ok {
                    let before = self.disk.lease;
                    self.disk.last_rv += 1;
                    self.disk.rv = self.disk.last_rv;
                    self.disk.lease = Some(lease);
                    // The record's nominal end: when a candidate that saw the change at once,
                    // with a clock at this server's rate, could take over. Shown in traces only.
                    // A release (no holder) grants nothing and extends nothing.
                    let until = cx.read(ClockKind::Monotonic) + lease.duration;
                    let token = lease.token();
                    match lease.holder {
                        None => {}
                        Some(h) if before.is_some_and(|b| b.holder == Some(h)) => {
                            out.report(Fact::Renewed { token, until });
                        }
                        Some(h) => out.report(Fact::Issued {
                            token,
                            to: h.node,
                            until,
                        }),
                    }
                }
                let reply = Message::UpdateReply {
                    req,
                    ok,
                    rv: self.disk.rv,
                    values: self.disk.register.values().clone(),
                };
                out.send(from, reply);
            }
            Message::Write { token, key, value } => {
                let write = (from, token, (key, value));
                let (fencing, duplicate) = (self.p.fencing, cx.duplicate);
                (self.disk.register).serve(out, write, fencing, duplicate, Message::WriteAck);
            }
            Message::Record { .. } | Message::UpdateReply { .. } | Message::WriteAck(_) => {}
        }
    }
}
