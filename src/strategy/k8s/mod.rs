//! Kubernetes leader election (SPEC 2.8). Placeholder: the protocol is not written yet.

pub mod msg;

use super::{Beliefs, Cx, LeaseParams, NodeLogic, Out, Protocol, Register, Request, TimerId};
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::time::LocalDur;
pub use msg::Message;

/// `K8sLeaderElection`'s parameters (see [`crate::scenario::StrategySpec::K8sLeaderElection`]).
#[derive(Clone, Copy, Debug)]
pub struct K8sConfig {
    pub renew_deadline: LocalDur,
    pub retry_period: LocalDur,
    /// jitter_factor in parts per million (1.2 is 1,200,000).
    pub jitter_ppm: i64,
}

/// Kubernetes leader election with its parameters.
#[derive(Clone, Debug)]
pub struct K8sLeaderElection {
    config: K8sConfig,
    description: String,
}

impl K8sLeaderElection {
    pub fn new(config: K8sConfig, description: String) -> K8sLeaderElection {
        K8sLeaderElection {
            config,
            description,
        }
    }
}

impl Protocol for K8sLeaderElection {
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

/// A node of Kubernetes leader election.
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
