//! A lock service's node: the service (a master, a server) or one of its clients. The service
//! grants and holds nothing; a client believes and serves requests. [`ServiceNode`] is the
//! [`NodeLogic`] of such a protocol, given the two sides, so that each protocol writes only what
//! its service and its clients do.

use super::{
    Belief, Beliefs, Command, Cx, NodeLogic, Out, ProtocolMessage, Request, Thread, TimerId,
};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::time::LocalTime;

/// The service side of a lock service: it grants, it never believes.
pub trait Service {
    /// The protocol's messages.
    type Msg: ProtocolMessage;
    /// What survives a crash of the service (its disk or replicated database).
    type Disk: Default + Send;
    /// The service starts, or restarts after a crash (`cx.restarted`).
    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Self::Msg>);
    /// A client's request or answer arrives from `from`.
    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Self::Msg, out: &mut Out<Self::Msg>);
    /// One of the service's timers fires.
    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Self::Msg>);
    /// The service crashed: what it keeps.
    fn into_disk(self) -> Self::Disk;
    /// What its disk holds once what it wrote is durable (see [`NodeLogic::disk_image`]):
    /// none by default (it writes nothing).
    fn disk_image(&self) -> Option<Self::Disk> {
        None
    }
    /// It crashed with a disk: what it keeps, given the last image made durable (see
    /// [`NodeLogic::into_disk_with`]). That image by default.
    fn into_disk_with(self, durable: Self::Disk) -> Self::Disk
    where
        Self: Sized,
    {
        drop(self);
        durable
    }
}

/// A client of a lock service: it asks the service (the only peer it talks to) and believes.
pub trait Client {
    /// The protocol's messages.
    type Msg;
    /// The client starts, or restarts after a crash with nothing kept.
    fn on_start(&mut self, cx: &Cx, out: &mut Out<Self::Msg>);
    /// The service's answer or notice arrives.
    fn on_message(&mut self, cx: &Cx, msg: Self::Msg, out: &mut Out<Self::Msg>);
    /// One of the client's timers fires.
    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out<Self::Msg>);
    /// The token a request would be admitted under now, if any.
    fn check(&self, cx: &Cx) -> Option<Token>;
    /// Whether [`Client::check`] refuses every request now whatever the clocks read (see
    /// [`NodeLogic::refuses_whatever_the_time`]).
    fn refuses_whatever_the_time(&self) -> bool;
    /// A request admitted under `token` (by [`Client::check`]) is served.
    fn on_request(&mut self, cx: &Cx, request: Request, token: Token, out: &mut Out<Self::Msg>);
    /// `msg`, sent to the service, was refused by its host while the service was down (see
    /// [`NodeLogic::on_refused`]): ignored by default.
    fn on_refused(&mut self, _cx: &Cx, _msg: Self::Msg, _out: &mut Out<Self::Msg>) {}
    /// An operator's `StepDown`: the client gives up what it holds (by default, nothing).
    fn step_down(&mut self, _cx: &Cx, _out: &mut Out<Self::Msg>) {}
    /// The client's belief now, for reads and writes alike.
    fn belief(&self) -> Belief;
    /// Which of the client's loops handles timer `timer` (see [`NodeLogic::thread_of_timer`]):
    /// the worker's by default.
    fn thread_of_timer(&self, _timer: TimerId) -> Thread {
        Thread::Worker
    }
    /// Which of the client's loops handles message `msg`: the worker's by default.
    fn thread_of_message(&self, _msg: &Self::Msg) -> Thread {
        Thread::Worker
    }
}

/// Keeps one monotonic timer of a service armed at the earliest of its deadlines (a session's
/// expiry, a held request's answer): re-armed at `earliest`, or cancelled when there is none,
/// only if that moved from `armed`, which it then records.
pub fn arm_earliest<M>(
    timer: TimerId,
    earliest: Option<LocalTime>,
    armed: &mut Option<LocalTime>,
    out: &mut Out<M>,
) {
    if earliest != *armed {
        match earliest {
            Some(at) => out.set_timer(timer, ClockKind::Monotonic, at),
            None => out.cancel_timer(timer),
        }
        *armed = earliest;
    }
}

/// A node of a lock service: the service or a client.
pub enum ServiceNode<S, C> {
    Service(S),
    Client(C),
}

impl<S, C> NodeLogic for ServiceNode<S, C>
where
    S: Service + Send,
    C: Client<Msg = S::Msg> + Send,
{
    type Msg = S::Msg;
    type Disk = S::Disk;

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<S::Msg>) {
        match self {
            ServiceNode::Service(s) => s.on_start(cx, out),
            ServiceNode::Client(c) => c.on_start(cx, out),
        }
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: S::Msg, out: &mut Out<S::Msg>) {
        match self {
            ServiceNode::Service(s) => s.on_message(cx, from, msg, out),
            ServiceNode::Client(c) => c.on_message(cx, msg, out),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<S::Msg>) {
        match self {
            ServiceNode::Service(s) => s.on_timer(cx, timer, out),
            ServiceNode::Client(c) => c.on_timer(cx, timer, out),
        }
    }

    fn on_refused(&mut self, cx: &mut Cx, _to: NodeId, msg: S::Msg, out: &mut Out<S::Msg>) {
        if let ServiceNode::Client(c) = self {
            c.on_refused(cx, msg, out);
        }
    }

    fn check(&self, cx: &Cx, _request: Request) -> Option<Token> {
        match self {
            ServiceNode::Service(_) => None,
            ServiceNode::Client(c) => c.check(cx),
        }
    }

    fn refuses_whatever_the_time(&self, _request: Request) -> bool {
        match self {
            ServiceNode::Service(_) => true,
            ServiceNode::Client(c) => c.refuses_whatever_the_time(),
        }
    }

    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<S::Msg>) {
        if let ServiceNode::Client(c) = self {
            c.on_request(cx, request, token, out);
        }
    }

    fn on_command(&mut self, cx: &mut Cx, command: Command, out: &mut Out<S::Msg>) {
        if let (ServiceNode::Client(c), Command::StepDown) = (self, command) {
            c.step_down(cx, out);
        }
    }

    /// The service has one loop; a client's are its own to say.
    fn thread_of_timer(&self, timer: TimerId) -> Thread {
        match self {
            ServiceNode::Service(_) => Thread::Worker,
            ServiceNode::Client(c) => c.thread_of_timer(timer),
        }
    }

    fn thread_of_message(&self, msg: &S::Msg) -> Thread {
        match self {
            ServiceNode::Service(_) => Thread::Worker,
            ServiceNode::Client(c) => c.thread_of_message(msg),
        }
    }

    fn beliefs(&self) -> Beliefs {
        match self {
            ServiceNode::Service(_) => Beliefs::NONE,
            ServiceNode::Client(c) => Beliefs::both(c.belief()),
        }
    }

    fn into_disk(self) -> S::Disk {
        match self {
            ServiceNode::Service(s) => s.into_disk(),
            ServiceNode::Client(_) => S::Disk::default(),
        }
    }

    fn disk_image(&self) -> Option<S::Disk> {
        match self {
            ServiceNode::Service(s) => s.disk_image(),
            ServiceNode::Client(_) => None,
        }
    }

    fn into_disk_with(self, durable: S::Disk) -> S::Disk {
        match self {
            ServiceNode::Service(s) => s.into_disk_with(durable),
            ServiceNode::Client(_) => S::Disk::default(),
        }
    }
}
