//! `Majority`: a lease granted by a majority of several grantors (a quorum lease, the shape of
//! Redlock), written against leasesim's public API only.
//!
//! A contender asks every grantor for a lease under a token of its own choosing, larger than
//! any token it has seen. A grantor grants when it has no live lease for another contender
//! and the token is above every token it has seen, and remembers the lease for T on its own
//! monotonic clock; a renewal (the same holder and token) extends it. The contender holds once
//! `quorum` grantors (a majority by default) granted one round, until the round's send time +
//! T - `margin` on its own monotonic clock, renews every `renew_every`, and lets go at its
//! deadline. Two majorities share a grantor, so two contenders cannot both hold, as long as no
//! grantor forgets a lease it granted: a grantor that restarts waits out T before granting
//! (`lease.grantor_restart: Wait`), or grants at once (`Forget`).
//!
//! The protected resource is a [`Register`] kept by the first grantor (the host), on its disk,
//! so that it survives the host's crashes. A holder serves reads from its local copy, and sends
//! each write to the host, which applies it (or, with `resource.fencing`, rejects one whose
//! token is older than one applied) and answers its writer; the writer's copy takes the write
//! from that answer. The host's answers to asks carry its register's values, and a contender's
//! copy starts from the newest it was told.
//!
//! What the oracle is told: the lease exists once a majority granted it, and only the holder,
//! which counts the grants, knows when that is; so the holder reports `Issued` (a new token) and
//! `Renewed` (a renewal that reached a majority), and `Holding`. Each request admitted is served
//! from the copy (`Read`, with the value the copy holds) or sent to the host (`WriteSent`); the
//! host reports what its register did with each write that arrives (`WriteApplied`,
//! `WriteFenced` or `DuplicateWrite`, as `Register::apply` returns it), and the writer reports
//! the host's answer when it arrives (`WriteAcked`): its client hears then.

use leasesim::clock::ClockKind;
use leasesim::msg::{NodeId, Token};
use leasesim::scenario::{GrantorRestart, Role, Scenario};
use leasesim::strategy::{
    Ack, Belief, Beliefs, Cx, Fact, LeaseParams, Margin, NodeLogic, Out, Protocol, ProtocolMessage,
    Register, Request, Settings, Store, TimerId,
};
use leasesim::time::{LocalDur, LocalTime};

/// The strategy's settings, as a scenario writes them: `Majority(margin: "10ms", quorum: 2)`.
/// Registered by name (`Cli::protocol::<Params>()`), they read a scenario's fields, write
/// themselves back, say which field `--vary epsilon=` means, and build the protocol.
#[derive(Clone, Copy, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The holder stops this long before T has passed on its clock. Default 0.
    #[serde(default)]
    pub margin: LocalDur,
    /// Grants needed to hold. Default: a majority of the grantors.
    #[serde(default)]
    pub quorum: Option<usize>,
}

/// The protocol with its parameters.
pub struct Majority {
    params: Params,
}

impl Majority {
    pub fn new(params: Params) -> Majority {
        Majority { params }
    }
}

impl Settings for Params {
    const NAME: &'static str = "Majority";
    type Protocol = Majority;

    /// The fields that are not their default.
    fn to_ron(&self) -> String {
        let mut fields = Vec::new();
        if self.margin != LocalDur::ZERO {
            fields.push(format!("margin: \"{}\"", self.margin));
        }
        if let Some(q) = self.quorum {
            fields.push(format!("quorum: {q}"));
        }
        format!("Majority({})", fields.join(", "))
    }

    fn build(&self) -> Majority {
        Majority::new(*self)
    }

    /// The holder's margin, which two majorities' grantors, timing T on their own clocks,
    /// must cover: the drift bound is its.
    fn epsilon(&self) -> Option<Margin> {
        Some(Margin {
            field: "margin",
            value: self.margin,
            bounds_drift: true,
        })
    }
}

/// The messages: `Clone` is all the engine asks (it clones one only when the network delivers
/// two copies); these are a few integers, and the host's register values (shared, not copied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// "Grant, or extend, lease `token` to me": sent at `sent` on the sender's monotonic clock.
    Ask { token: Token, sent: LocalTime },
    /// The answer to the `Ask` of `token` sent at `sent`: granted. `values`: the register's
    /// values, from the host.
    Grant {
        token: Token,
        sent: LocalTime,
        values: Option<Store>,
    },
    /// The answer to the `Ask` of `token` sent at `sent`: refused; `high` is the highest token
    /// the grantor has seen, `values` as in `Grant`.
    Refuse {
        token: Token,
        sent: LocalTime,
        high: Token,
        values: Option<Store>,
    },
    /// A write of `value` to `key` of the register at the host, under the writer's `token`.
    Write { token: Token, key: u32, value: u64 },
    /// The host's answer to a write it applied.
    Written(Ack),
}

impl ProtocolMessage for Msg {
    const KINDS: &'static [&'static str] = &["Ask", "Grant", "Refuse", "Write", "Written"];

    fn kind(&self) -> usize {
        match self {
            Msg::Ask { .. } => 0,
            Msg::Grant { .. } => 1,
            Msg::Refuse { .. } => 2,
            Msg::Write { .. } => 3,
            Msg::Written(_) => 4,
        }
    }

    fn token(&self) -> Option<Token> {
        match *self {
            Msg::Ask { token, .. }
            | Msg::Grant { token, .. }
            | Msg::Refuse { token, .. }
            | Msg::Write { token, .. } => Some(token),
            Msg::Written(_) => None,
        }
    }
}

/// What a node keeps across a crash: a grantor, the highest token it has seen, so that a
/// restarted grantor never takes an old token for a new one, and its register (the host's is
/// the protected resource; the others' are never written).
#[derive(Clone, Debug, Default)]
pub struct Disk {
    high: Token,
    register: Register,
}

const RETRY: TimerId = 0;
const RENEW: TimerId = 1;
const DEADLINE: TimerId = 2;
const RESTART_WAIT: TimerId = 3;

/// Tokens are `round * 256 + node`: unique to their contender, ordered by round.
const NODE_BITS: u32 = 8;

impl Protocol for Majority {
    type Logic = Node;

    fn describe(&self) -> String {
        self.params.to_ron()
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let mut problems = Vec::new();
        let count = |role| scenario.nodes.iter().filter(|n| n.role == role).count();
        let grantors = count(Role::Grantor);
        if grantors == 0 {
            problems.push("nodes: Majority needs at least one node with role Grantor".into());
        }
        if count(Role::Contender) == 0 {
            problems.push("nodes: Majority needs at least one Contender".into());
        }
        if scenario.nodes.len() > 1 << NODE_BITS {
            problems.push(format!(
                "nodes: Majority numbers tokens for at most {} nodes",
                1 << NODE_BITS
            ));
        }
        if scenario
            .nodes
            .iter()
            .any(|n| !matches!(n.role, Role::Grantor | Role::Contender))
        {
            problems.push("nodes: Majority has Grantors and Contenders only".into());
        }
        if let Some(q) = self.params.quorum {
            if q <= grantors / 2 || q > grantors {
                problems.push(format!(
                    "strategy.quorum: {q} is not a majority of the {grantors} grantors (from {} to \
                     {grantors}): two contenders could hold at once",
                    grantors / 2 + 1
                ));
            }
        }
        let t = scenario.lease.duration;
        let m = self.params.margin;
        if m < LocalDur::ZERO || m >= t {
            problems.push(format!(
                "strategy.margin: {m} must be at least 0 and shorter than the lease ({t})"
            ));
        }
        problems
    }

    fn node_logic(&self, node: NodeId, role: Role, params: &LeaseParams, disk: Disk) -> Node {
        match role {
            Role::Grantor => Node::Grantor(Grantor {
                p: *params,
                holder: None,
                expiry: LocalTime::from_ns(i64::MIN),
                high: disk.high,
                waiting_out: false,
                register: disk.register,
            }),
            _ => Node::Contender(Contender {
                node,
                p: *params,
                params: self.params,
                last_token: 0,
                high: 0,
                held: None,
                deadline: LocalTime::from_ns(i64::MIN),
                round: None,
                values: Store::default(),
                copy: Store::default(),
            }),
        }
    }
}

/// A node of the protocol.
pub enum Node {
    Grantor(Grantor),
    Contender(Contender),
}

impl NodeLogic for Node {
    type Msg = Msg;
    type Disk = Disk;

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Msg>) {
        match self {
            Node::Grantor(g) => g.on_start(cx, out),
            Node::Contender(c) => c.acquire(cx, out),
        }
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Msg, out: &mut Out<Msg>) {
        match self {
            Node::Grantor(g) => g.on_message(cx, from, msg, out),
            Node::Contender(c) => c.on_message(cx, from, msg, out),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Msg>) {
        match self {
            Node::Grantor(g) => {
                if timer == RESTART_WAIT {
                    g.waiting_out = false;
                }
            }
            Node::Contender(c) => c.on_timer(cx, timer, out),
        }
    }

    fn check(&self, cx: &Cx, _request: Request) -> Option<Token> {
        match self {
            Node::Contender(c) => c.held.filter(|_| cx.mono < c.deadline),
            Node::Grantor(_) => None,
        }
    }

    /// A read is served from the holder's copy; a write leaves for the register at the host
    /// (the first grantor), which reports what it does with it when it arrives.
    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<Msg>) {
        let Node::Contender(c) = self else { return };
        match request {
            Request::Write { key, value } => {
                out.report(Fact::WriteSent { token });
                out.send(host(cx), Msg::Write { token, key, value });
            }
            _ => out.report(Fact::Read {
                token,
                value: c.copy.get(request.key()),
            }),
        }
    }

    fn beliefs(&self) -> Beliefs {
        match self {
            Node::Contender(Contender {
                held: Some(token),
                deadline,
                ..
            }) => Beliefs::both(Belief::Until {
                token: *token,
                clock: ClockKind::Monotonic,
                deadline: *deadline,
            }),
            _ => Beliefs::NONE,
        }
    }

    fn into_disk(self) -> Disk {
        match self {
            Node::Grantor(g) => Disk {
                high: g.high,
                register: g.register,
            },
            Node::Contender(_) => Disk::default(),
        }
    }
}

/// The grantor that hosts the register: the first (`Protocol::check` asks for one).
fn host(cx: &Cx) -> NodeId {
    cx.peers(Role::Grantor).next().expect("checked: a grantor")
}

/// One grantor: at most one live lease, on its own monotonic clock.
pub struct Grantor {
    p: LeaseParams,
    holder: Option<(NodeId, Token)>,
    /// When the lease of `holder` ends, on this grantor's monotonic clock.
    expiry: LocalTime,
    /// The highest token seen; a new lease needs a higher one.
    high: Token,
    /// Restarted with `grantor_restart: Wait`: grants nothing until T has passed.
    waiting_out: bool,
    /// The protected register, written only at the host.
    register: Register,
}

impl Grantor {
    fn on_start(&mut self, cx: &Cx, out: &mut Out<Msg>) {
        if cx.restarted && self.p.grantor_restart == GrantorRestart::Wait {
            // It cannot know what it granted before the crash: every such lease is over by T.
            self.waiting_out = true;
            out.set_timer(RESTART_WAIT, ClockKind::Monotonic, cx.mono + self.p.lease);
        }
    }

    fn on_message(&mut self, cx: &Cx, from: NodeId, msg: Msg, out: &mut Out<Msg>) {
        let (token, sent) = match msg {
            Msg::Ask { token, sent } => (token, sent),
            Msg::Write { token, key, value } => {
                // The register says what it did with the write (applied, fenced, or a second
                // copy of one applied); the oracle is told exactly that, and the writer hears
                // of a write applied.
                let (fencing, duplicate) = (self.p.fencing, cx.duplicate);
                let (fact, ack) =
                    self.register
                        .apply(from, token, (key, value), fencing, duplicate);
                out.report(fact);
                if let Some(ack) = ack {
                    out.send(from, Msg::Written(ack));
                }
                return;
            }
            Msg::Grant { .. } | Msg::Refuse { .. } | Msg::Written(_) => return,
        };
        let values = (cx.node == host(cx)).then(|| self.register.values());
        let live = cx.mono < self.expiry;
        let grant = if self.waiting_out {
            false
        } else if live && self.holder == Some((from, token)) {
            true // a renewal
        } else {
            let free = !live || self.holder.is_some_and(|(n, _)| n == from);
            free && token > self.high
        };
        if grant {
            self.holder = Some((from, token));
            self.high = self.high.max(token);
            self.expiry = cx.mono + self.p.lease;
            out.send(
                from,
                Msg::Grant {
                    token,
                    sent,
                    values,
                },
            );
        } else {
            let high = self.high;
            out.send(
                from,
                Msg::Refuse {
                    token,
                    sent,
                    high,
                    values,
                },
            );
        }
    }
}

/// A round of asks: the grants it has gathered.
#[derive(Clone, Debug)]
struct Round {
    token: Token,
    sent: LocalTime,
    granted: Vec<NodeId>,
    /// Whether this round reached the quorum already (later grants change nothing).
    done: bool,
}

/// A node that wants the lease.
pub struct Contender {
    node: NodeId,
    p: LeaseParams,
    params: Params,
    /// The last token it chose.
    last_token: Token,
    /// The highest token a grantor told it of.
    high: Token,
    /// The lease held, if any.
    held: Option<Token>,
    /// When the lease held ends, on its monotonic clock.
    deadline: LocalTime,
    round: Option<Round>,
    /// The newest register values the host's answers carried: where a copy starts.
    values: Store,
    /// Its copy of the register: the values it started from when it took the lease, and its
    /// own writes the host answered since.
    copy: Store,
}

impl Contender {
    fn quorum(&self, cx: &Cx) -> usize {
        self.params
            .quorum
            .unwrap_or_else(|| cx.peers(Role::Grantor).count() / 2 + 1)
    }

    /// Keeps the host's `values`, if newer than those it has.
    fn newer(&mut self, values: Option<Store>) {
        if let Some(v) = values.filter(|v| v.taken_at() >= self.values.taken_at()) {
            self.values = v;
        }
    }

    /// Asks every grantor for `token`.
    fn ask(&mut self, cx: &Cx, token: Token, out: &mut Out<Msg>) {
        let sent = cx.mono;
        for g in cx.peers(Role::Grantor) {
            out.send(g, Msg::Ask { token, sent });
        }
        self.round = Some(Round {
            token,
            sent,
            granted: Vec::new(),
            done: false,
        });
    }

    /// A new lease: a token above every token seen, asked of every grantor; again after
    /// `retry_every` unless it holds by then.
    fn acquire(&mut self, cx: &Cx, out: &mut Out<Msg>) {
        let above = self.high.max(self.last_token) >> NODE_BITS;
        let token = ((above + 1) << NODE_BITS) | self.node as Token;
        self.last_token = token;
        self.ask(cx, token, out);
        out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + self.p.retry_every);
    }

    fn on_message(&mut self, cx: &Cx, from: NodeId, msg: Msg, out: &mut Out<Msg>) {
        match msg {
            Msg::Grant {
                token,
                sent,
                values,
            } => {
                self.newer(values);
                let quorum = self.quorum(cx);
                let Some(round) = self.round.as_mut() else {
                    return;
                };
                if round.token != token || round.sent != sent || round.done {
                    return; // an answer to an older round, or one that is decided
                }
                if !round.granted.contains(&from) {
                    round.granted.push(from); // a duplicated grant counts once
                }
                if round.granted.len() < quorum {
                    return;
                }
                round.done = true;
                let deadline = sent + self.p.lease - self.params.margin;
                if cx.mono >= deadline {
                    return; // the majority came too late to hold anything
                }
                if self.held == Some(token) {
                    out.report(Fact::Renewed {
                        token,
                        until: deadline,
                    });
                } else {
                    self.held = Some(token);
                    out.cancel_timer(RETRY);
                    out.report(Fact::Issued {
                        token,
                        to: cx.node,
                        until: deadline,
                    });
                    self.copy = self.values.clone();
                    out.report(Fact::Holding { token });
                    out.set_timer(RENEW, ClockKind::Monotonic, sent + self.p.renew_every);
                }
                self.deadline = self.deadline.max(deadline);
                out.set_timer(DEADLINE, ClockKind::Monotonic, self.deadline);
            }
            Msg::Refuse { high, values, .. } => {
                self.high = self.high.max(high);
                self.newer(values);
            }
            Msg::Written(ack) => {
                self.copy.merge(ack);
                out.report(Fact::WriteAcked {
                    key: ack.key,
                    value: ack.value,
                });
            }
            Msg::Ask { .. } | Msg::Write { .. } => {}
        }
    }

    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out<Msg>) {
        match (timer, self.held) {
            (RETRY, None) => self.acquire(cx, out),
            (RENEW, Some(token)) => {
                self.ask(cx, token, out);
                out.set_timer(RENEW, ClockKind::Monotonic, cx.mono + self.p.renew_every);
            }
            (DEADLINE, Some(_)) if cx.mono >= self.deadline => {
                self.held = None;
                out.cancel_timer(RENEW);
                self.acquire(cx, out);
            }
            _ => {}
        }
    }
}
