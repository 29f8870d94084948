//! Chubby sessions (SPEC 2.8). Placeholder: the protocol is not written yet.

pub mod msg;

use super::{Beliefs, Cx, LeaseParams, NodeLogic, Out, Protocol, Register, Request, TimerId};
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::time::LocalDur;
pub use msg::Message;

/// `ChubbySession`'s parameters (see [`crate::scenario::StrategySpec::ChubbySession`]).
#[derive(Clone, Copy, Debug)]
pub struct ChubbyConfig {
    pub grace: LocalDur,
    pub lock_delay: LocalDur,
    pub act_in_jeopardy: bool,
    pub holder_margin: LocalDur,
}

/// Chubby sessions with its parameters.
#[derive(Clone, Debug)]
pub struct ChubbySession {
    config: ChubbyConfig,
    description: String,
}

impl ChubbySession {
    pub fn new(config: ChubbyConfig, description: String) -> ChubbySession {
        ChubbySession {
            config,
            description,
        }
    }
}

impl Protocol for ChubbySession {
    type Logic = Node;

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn check(&self, _scenario: &Scenario) -> Vec<String> {
        let _ = &self.config;
        Vec::new()
    }

    fn node_logic(
        &self,
        _node: NodeId,
        _role: Role,
        _params: &LeaseParams,
        _disk: Register,
    ) -> Node {
        Node
    }
}

/// A node of Chubby sessions.
pub struct Node;

impl NodeLogic for Node {
    type Msg = Message;
    type Disk = Register;

    fn on_start(&mut self, _cx: &mut Cx, _out: &mut Out<Message>) {}
    fn on_message(&mut self, _cx: &mut Cx, _from: NodeId, _msg: Message, _out: &mut Out<Message>) {}
    fn on_timer(&mut self, _cx: &mut Cx, _timer: TimerId, _out: &mut Out<Message>) {}
    fn check(&self, _cx: &Cx, _request: Request) -> Option<Token> {
        None
    }
    fn on_request(
        &mut self,
        _cx: &mut Cx,
        _request: Request,
        _token: Token,
        _out: &mut Out<Message>,
    ) {
    }
    fn beliefs(&self) -> Beliefs {
        Beliefs::NONE
    }
    fn into_disk(self) -> Register {
        Register::default()
    }
}
