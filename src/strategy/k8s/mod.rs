//! Kubernetes leader election as client-go runs it (`tools/leaderelection`).
//!
//! The one `Grantor` is the API server ([`server`]): it stores the Lease record (holder,
//! acquire and renew times, LeaseDurationSeconds, leaseTransitions) with a resourceVersion,
//! answers `Get` with `Record`, and applies an `Update` iff the resourceVersion it carries is
//! still current, answering `UpdateReply`. It decides nothing about time. Every `Contender` is a
//! candidate ([`candidate`]) running `tryAcquireOrRenew`. With `fast_path` (client-go since
//! 1.28), a candidate whose last observed record is its own and still valid by its clock sends
//! one Update on that record's resourceVersion, and falls back to the slow path on a Conflict.
//! The slow path: Get; if the record's content changed since its last Get, observedTime = now on
//! its own monotonic clock; if another holds it and observedTime + T > now (`now` taken when the
//! try began, as client-go does), give up this try; else Update (holder = self, renewTime from
//! its wall clock, which nobody compares). Its own record is always renewable, and a record
//! with no holder (released) is taken at once.
//!
//! Timing, on the candidate's monotonic clock:
//! - Not leading, it tries at start (with `lease.initial_leader` naming another candidate, its
//!   first process starts that loop one jittered period late, so the named one leads first)
//!   and then every retry_period * (1 + U[0, jitter_factor)) (a
//!   fresh draw from its own stream, whole nanoseconds), counted from the end of the previous
//!   try (JitterUntil is sliding).
//! - Every Get and Update has the HTTP client's timeout, `http_timeout` (by default RenewDeadline
//!   / 2, at least 1 s, as `resourcelock.NewFromKubeconfig` sets it): a request with no answer
//!   by then fails, and so, at once, does one the API server's host refuses (its process is
//!   down: the protocol talks over streams, and [`NodeLogic::on_refused`] hears it). A failed
//!   fast-path Update falls back to the slow path's Get (tryAcquireOrRenew does on any error); a
//!   failed Get or Update fails the try; a failed request of `release()` ends it. A late answer
//!   to a request given up is ignored.
//! - After each success (the acquiring Update included) the leader sleeps retry_period, then
//!   opens a renew cycle: a try at once and one at every open + k * retry_period (a tick that
//!   falls while a try is outstanding starts the next try as soon as that one fails, as Go's
//!   ticker keeps one tick), until one succeeds (sleep again) or open + renew_deadline, a timer
//!   that fires whether or not a request is outstanding: then it stops leading. A cycle opens
//!   when the process runs it: after a pause, at resume. A try that finds another holder fails
//!   only that try. (client-go's `renew()` opens its first cycle at once after acquiring;
//!   leasesim has the leader sleep after every success, the acquisition too.)
//! - A leader stops leading when its renew loop gives up or an operator's `StepDown` cancels
//!   it. With `release_on_cancel` it then runs `release()`: Get, and if the record it last
//!   observed is its own, an Update with no holder (retried from the Get on a Conflict, given up
//!   after renew_deadline). Then, by `on_lost`: `Exit(restart)` (the default) ends the process,
//!   which starts again `restart` later as a new identity that has observed nothing, so it waits
//!   out its predecessor's record like anyone; `Rerun` goes back to the acquire loop at once
//!   with the same identity (an application that runs the elector again). A node that crashed
//!   and restarted is a new identity too (client-go's `hostname_uuid`).
//!
//! Beliefs: a leader believes both authorities, as a [`Belief::Bool`](crate::strategy::Belief::Bool), from the answer to its
//! successful Update until its renew loop gives up: that is the context client-go cancels, not
//! a clock check on use. It serves reads and writes meanwhile; a candidate rejects requests.
//!
//! Tokens: leaseTransitions + 1. The record's leaseTransitions grows by one at every change of
//! holder, so the token orders leaderships as Kubernetes itself does; a renewal (and a leader
//! taking its own record back) keeps it. The API server emits [`Fact::Issued`](crate::strategy::Fact::Issued) when an Update
//! it applies changes the holder, [`Fact::Renewed`](crate::strategy::Fact::Renewed) otherwise. Their `until`, which only
//! traces and timelines show, is the record's nominal end: apply time + T on the API server's
//! monotonic clock, the earliest a candidate that saw the change at once, with a clock at the
//! server's rate, could take over. The oracle's slack is measured between beliefs, so how far
//! a new leader starts after that nominal end is the observers' lag, and how far before it the
//! old leader stopped is the margin T - renew_deadline - retry_period bought.
//!
//! The protected resource lives at the API server (controllers write through it) and survives
//! its crash, like the Lease record (etcd keeps both). `resource.fencing: true` makes it reject
//! a write whose token (leaseTransitions + 1) is older than the newest applied: an admission
//! check Kubernetes does not have, offered to show what fencing by leaseTransitions would stop.
//! `lease.grantor_restart: Forget` makes a restarted API server lose the record (etcd data
//! loss); the default keeps it. `lease.renew_every` and `lease.retry_every` are not used: the
//! strategy's retry_period and renew_deadline replace them.

pub mod candidate;
pub mod msg;
pub mod server;
pub mod settings;

use super::{
    Beliefs, Command, Cx, LeaseParams, NodeLogic, Out, Protocol, Request, Thread, TimerId,
    Transport,
};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::strategy::roles::{Grantors, LockServiceRoles};
use crate::time::LocalDur;
use candidate::Candidate;
pub use msg::Message;
use server::{ApiServer, Disk};

/// `K8sLeaderElection`'s parameters (see [`settings::K8sLeaderElection`]).
#[derive(Clone, Copy, Debug)]
pub struct K8sConfig {
    /// RenewDeadline: a renew cycle gives up this long after it opened.
    pub renew_deadline: LocalDur,
    /// RetryPeriod: the leader's try period, and candidates' before jitter.
    pub retry_period: LocalDur,
    /// jitter_factor in parts per million (1.2 is 1,200,000).
    pub jitter_ppm: i64,
    /// The clock a candidate times the record by: client-go's observedTime is Go's `time.Now()`,
    /// monotonic since Go 1.9; `Wall` is the older client whose takeover a wall step moves.
    pub observed_clock: ClockKind,
    /// What the process does when it stops leading.
    pub on_lost: OnLost,
    /// A valid leader renews with one Update on the record it last wrote, without a Get.
    pub fast_path: bool,
    /// ReleaseOnCancel: the leader writes an empty holder when it stops leading.
    pub release_on_cancel: bool,
    /// LeaseDuration, when not `lease.duration`.
    pub lease_duration: Option<LocalDur>,
    /// Whose LeaseDuration a candidate waits out before taking another's lease.
    pub expiry_from: settings::ExpiryFrom,
    /// The HTTP client's timeout of every Get and Update (`NewFromKubeconfig`: RenewDeadline / 2,
    /// at least 1 s).
    pub http_timeout: LocalDur,
}

/// What a candidate's process does when it stops leading (its renew loop gave up, or a
/// `StepDown` cancelled it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
pub enum OnLost {
    /// It exits (kube-controller-manager and kube-scheduler call `klog.FlushAndExit` in
    /// `OnStoppedLeading`) and is started again `restart` later as a new identity that has
    /// observed nothing.
    Exit { restart: LocalDur },
    /// It runs the elector again at once, under the same identity and with what it observed.
    Rerun,
}

/// Kubernetes leader election with its parameters, and the candidates that run their own.
#[derive(Clone, Debug)]
pub struct K8sLeaderElection {
    config: K8sConfig,
    description: String,
    own: Vec<(NodeId, K8sConfig)>,
}

impl K8sLeaderElection {
    pub fn new(config: K8sConfig, description: String) -> K8sLeaderElection {
        K8sLeaderElection {
            config,
            description,
            own: Vec::new(),
        }
    }

    /// Its parameters (every candidate's but those with their own).
    pub fn config(&self) -> K8sConfig {
        self.config
    }

    /// The protocol where each candidate of `own` runs its own parameters.
    pub fn with_own(mut self, own: Vec<(NodeId, K8sConfig)>) -> K8sLeaderElection {
        self.own = own;
        self
    }
}

impl Protocol for K8sLeaderElection {
    /// client-go's requests share one HTTP/2 connection (TCP) to the API server.
    const TRANSPORT: Transport = Transport::Stream;
    type Logic = K8sNode;

    fn describe(&self) -> String {
        self.description.clone()
    }

    /// Its roles; its fields are its settings' to check ([`settings::K8sLeaderElection`]).
    fn check(&self, scenario: &Scenario) -> Vec<String> {
        LockServiceRoles {
            protocol: "K8sLeaderElection",
            grantors: Grantors::ExactlyOne,
            grantor_is: "the API server",
            contender_is: "a candidate",
        }
        .check(scenario)
    }

    /// `StepDown` cancels a leader's context: it stops leading as when its renew loop gives up.
    fn commands(&self) -> &'static [&'static str] {
        &["StepDown"]
    }

    /// A candidate's renewal loop is the elector's goroutine (`wait.Until` running
    /// `tryAcquireOrRenew`); its worker is the controller that acts while `IsLeader()`.
    fn renewal_loop(&self, role: Role) -> Option<&'static str> {
        (role == Role::Contender).then_some("the leader elector's acquire and renew goroutine")
    }

    fn node_logic(&self, node: NodeId, role: Role, params: &LeaseParams, disk: Disk) -> K8sNode {
        match role {
            Role::Grantor => K8sNode::Server(ApiServer { p: *params, disk }),
            _ => {
                let own = self.own.iter().find(|&&(n, _)| n == node);
                let c = own.map_or(self.config, |&(_, c)| c);
                // Its LeaseDuration is the term it writes and, under `ExpiryFrom::Own`, waits.
                let lease = c.lease_duration.unwrap_or(params.lease);
                let p = LeaseParams { lease, ..*params };
                K8sNode::Candidate(Box::new(Candidate::new(c, p, node)))
            }
        }
    }
}

/// A node of Kubernetes leader election: the API server or a candidate.
pub enum K8sNode {
    Server(ApiServer),
    /// Boxed: a candidate's state (its try, its observed record, its cycle) is several times
    /// the API server's.
    Candidate(Box<Candidate>),
}

impl NodeLogic for K8sNode {
    type Msg = Message;
    /// The API server's etcd: the Lease record and the protected resource.
    type Disk = Disk;

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        match self {
            K8sNode::Server(s) => s.on_start(cx),
            K8sNode::Candidate(c) => c.on_start(cx, out),
        }
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match self {
            K8sNode::Server(s) => s.on_message(cx, from, msg, out),
            K8sNode::Candidate(c) => c.on_message(cx, msg, out),
        }
    }

    fn on_refused(&mut self, cx: &mut Cx, _to: NodeId, msg: Message, out: &mut Out<Message>) {
        if let K8sNode::Candidate(c) = self {
            c.on_refused(cx, msg, out);
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        if let K8sNode::Candidate(c) = self {
            c.on_timer(cx, timer, out);
        }
    }

    fn thread_of_timer(&self, timer: TimerId) -> Thread {
        match self {
            K8sNode::Server(_) => Thread::Worker,
            K8sNode::Candidate(_) => candidate::thread_of_timer(timer),
        }
    }

    fn thread_of_message(&self, msg: &Message) -> Thread {
        match (self, msg) {
            (K8sNode::Candidate(_), Message::Record { .. } | Message::UpdateReply { .. }) => {
                Thread::Renewal
            }
            _ => Thread::Worker,
        }
    }

    fn check(&self, _cx: &Cx, _request: Request) -> Option<Token> {
        match self {
            K8sNode::Server(_) => None,
            K8sNode::Candidate(c) => c.check(),
        }
    }

    /// The check reads no clock: it refuses whatever the time exactly when it refuses now.
    fn refuses_whatever_the_time(&self, _request: Request) -> bool {
        match self {
            K8sNode::Server(_) => true,
            K8sNode::Candidate(c) => c.check().is_none(),
        }
    }

    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<Message>) {
        if let K8sNode::Candidate(c) = self {
            c.on_request(cx, request, token, out);
        }
    }

    fn on_command(&mut self, cx: &mut Cx, command: Command, out: &mut Out<Message>) {
        if let (K8sNode::Candidate(c), Command::StepDown) = (self, command) {
            c.step_down(cx, out);
        }
    }

    fn beliefs(&self) -> Beliefs {
        match self {
            K8sNode::Server(_) => Beliefs::NONE,
            K8sNode::Candidate(c) => Beliefs::both(c.belief()),
        }
    }

    fn into_disk(self) -> Disk {
        match self {
            K8sNode::Server(s) => s.disk,
            K8sNode::Candidate(_) => Disk::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::msg::{Identity, Lease};
    use super::*;
    use crate::scenario::GrantorRestart;
    use crate::strategy::{call_for_test, Action, Fact, Store};
    use crate::time::LocalTime;

    const S: i64 = 1_000_000_000;
    /// Node 0 is the API server, nodes 1 and 2 candidates.
    const ROLES: &[Role] = &[Role::Grantor, Role::Contender, Role::Contender];

    fn protocol() -> K8sLeaderElection {
        K8sLeaderElection::new(
            K8sConfig {
                renew_deadline: LocalDur::from_secs(10),
                retry_period: LocalDur::from_secs(2),
                jitter_ppm: 1_200_000,
                observed_clock: ClockKind::Monotonic,
                on_lost: OnLost::Rerun,
                fast_path: false,
                release_on_cancel: false,
                lease_duration: None,
                expiry_from: settings::ExpiryFrom::Record,
                http_timeout: LocalDur::from_secs(5),
            },
            String::new(),
        )
    }

    fn params() -> LeaseParams {
        LeaseParams {
            lease: LocalDur::from_secs(15),
            renew_every: LocalDur::from_secs(5),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
            initial_leader: None,
        }
    }

    fn node(n: NodeId) -> K8sNode {
        protocol().node_logic(n, ROLES[n], &params(), Disk::default())
    }

    #[test]
    fn the_api_server_and_a_candidate_that_never_led_refuse_whatever_the_time() {
        let read = Request::Read { key: 0 };
        for n in 0..ROLES.len() {
            assert!(node(n).refuses_whatever_the_time(read), "node {n}");
        }
    }

    fn call(
        k: &mut K8sNode,
        n: NodeId,
        at_ns: i64,
        f: impl FnOnce(&mut K8sNode, &mut Cx, &mut Out<Message>),
    ) -> Out<Message> {
        call_for_test(k, n, ROLES, LocalTime::from_ns(at_ns), f)
    }

    fn lease(node: NodeId, transitions: u64) -> Lease {
        Lease {
            holder: Some(Identity {
                node,
                incarnation: 0,
                process: 0,
            }),
            acquire_wall: LocalTime::from_ns(0),
            renew_wall: LocalTime::from_ns(0),
            duration: LocalDur::from_secs(15),
            transitions,
        }
    }

    fn update(k: &mut K8sNode, from: NodeId, rv: u64, l: Lease) -> Out<Message> {
        call(k, 0, 0, |k, cx, out| {
            k.on_message(
                cx,
                from,
                Message::Update {
                    req: 1,
                    rv,
                    lease: l,
                },
                out,
            )
        })
    }

    fn reply_ok(given: &Out<Message>) -> bool {
        given
            .actions()
            .iter()
            .find_map(|e| match e {
                Action::Send {
                    msg: Message::UpdateReply { ok, .. },
                    ..
                } => Some(*ok),
                _ => None,
            })
            .expect("an UpdateReply")
    }

    /// An Update applies iff its resourceVersion is current; a change of holder is a grant
    /// (token leaseTransitions + 1), the same holder a renewal.
    #[test]
    fn the_api_server_compares_resource_versions_and_nothing_else() {
        let mut s = node(0);
        // Create (resourceVersion 0): a grant of token 1 to node 1.
        // Its nominal end (traces only): the server's clock at 0 plus LeaseDurationSeconds.
        let e = update(&mut s, 1, 0, lease(1, 0));
        assert!(reply_ok(&e));
        assert_eq!(
            e.facts(),
            [Fact::Issued {
                token: 1,
                to: 1,
                until: LocalTime::from_ns(15 * S)
            }]
        );
        // A second Create with resourceVersion 0: Conflict, nothing applied.
        let e = update(&mut s, 2, 0, lease(2, 0));
        assert!(!reply_ok(&e));
        assert!(!e.facts().iter().any(|e| matches!(e, Fact::Issued { .. })));
        // Node 1 renews on resourceVersion 1: a renewal, same token.
        let e = update(&mut s, 1, 1, lease(1, 0));
        assert!(reply_ok(&e));
        assert!(e
            .facts()
            .iter()
            .any(|e| matches!(e, Fact::Renewed { token: 1, .. })));
        // Node 2 takes over on resourceVersion 2: token 2.
        let e = update(&mut s, 2, 2, lease(2, 1));
        assert!(e.facts().iter().any(|e| matches!(
            e,
            Fact::Issued {
                token: 2,
                to: 2,
                ..
            }
        )));
        // The record survives a crash.
        let disk = s.into_disk();
        assert_eq!((disk.rv, disk.lease), (3, Some(lease(2, 1))));
    }

    /// An API server restarted with `grantor_restart: Forget` (etcd's data lost) has no Lease;
    /// the revision counter goes on, so the next create is resourceVersion 2. Restarted with
    /// `Wait` (the default) it keeps the record, and so does a first start with `Forget`.
    #[test]
    fn a_restarted_api_server_forgets_the_lease_only_when_told_to() {
        let get = |s: &mut K8sNode| {
            let e = call(s, 0, S, |k, cx, out| {
                k.on_message(cx, 1, Message::Get { req: 9 }, out)
            });
            sent(&e)
        };
        let start = |restart, restarted| {
            let params = LeaseParams {
                grantor_restart: restart,
                ..params()
            };
            let mut s = protocol().node_logic(0, ROLES[0], &params, Disk::default());
            update(&mut s, 1, 0, lease(1, 0));
            call(&mut s, 0, S, |k, cx, out| {
                cx.restarted = restarted;
                k.on_start(cx, out)
            });
            s
        };
        let kept = Message::Record {
            req: 9,
            rv: 1,
            lease: Some(lease(1, 0)),
        };
        for (restart, restarted) in [
            (GrantorRestart::Wait, true),
            (GrantorRestart::Forget, false),
        ] {
            assert_eq!(
                get(&mut start(restart, restarted)),
                std::slice::from_ref(&kept)
            );
        }
        let mut s = start(GrantorRestart::Forget, true);
        let none = Message::Record {
            req: 9,
            rv: 0,
            lease: None,
        };
        assert_eq!(get(&mut s), [none]);
        let e = update(&mut s, 2, 0, lease(2, 0));
        assert!(reply_ok(&e));
        assert_eq!(s.into_disk().rv, 2);
    }

    /// A candidate that finds another holder gives up the try until it has seen the record
    /// unchanged for T on its own clock, whatever the record's renewTime says.
    #[test]
    fn a_candidate_times_the_record_from_when_it_saw_it_change() {
        let mut c = node(2);
        call(&mut c, 2, 0, |k, cx, out| k.on_start(cx, out));
        let mut held = lease(1, 0);
        held.renew_wall = LocalTime::from_ns(-100 * S); // long ago by node 1's wall clock
        let record = Message::Record {
            req: 1,
            rv: 5,
            lease: Some(held),
        };
        let updates = |e: &Out<Message>| {
            e.actions()
                .iter()
                .filter_map(|e| match e {
                    Action::Send {
                        msg: Message::Update { rv, lease, .. },
                        ..
                    } => Some((*rv, lease.transitions)),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        // Seen (changed) at 1 s: the try fails, no Update.
        let e = call(&mut c, 2, S, |k, cx, out| k.on_message(cx, 0, record, out));
        assert!(updates(&e).is_empty());
        // A try that begins at 16 s - 1 ns still fails; one that begins at 16 s updates, with
        // leaseTransitions + 1 and the same resourceVersion.
        let try_at = |c: &mut K8sNode, at: i64, req: u64| {
            call(c, 2, at, |k, cx, out| k.on_timer(cx, 0, out));
            let record = Message::Record {
                req,
                rv: 5,
                lease: Some(held),
            };
            call(c, 2, at + 2_000_000, |k, cx, out| {
                k.on_message(cx, 0, record, out)
            })
        };
        assert!(updates(&try_at(&mut c, 16 * S - 1, 2)).is_empty());
        assert_eq!(updates(&try_at(&mut c, 16 * S, 3)), [(5, 1)]);
    }

    const MS: i64 = 1_000_000;

    /// A candidate `n` of [`protocol`] with `release_on_cancel` on (on_lost: Rerun).
    fn releasing_candidate(n: NodeId) -> K8sNode {
        let mut config = protocol().config();
        config.release_on_cancel = true;
        K8sLeaderElection::new(config, String::new()).node_logic(
            n,
            ROLES[n],
            &params(),
            Disk::default(),
        )
    }

    /// The messages `given` sends, in order.
    fn sent(given: &Out<Message>) -> Vec<Message> {
        given
            .actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { msg, .. } => Some(msg.clone()),
                _ => None,
            })
            .collect()
    }

    /// When `given` arms timer `id`, if it does.
    fn armed(given: &Out<Message>, id: TimerId) -> Option<i64> {
        given.actions().iter().find_map(|a| match a {
            Action::SetTimer { timer, at, .. } if *timer == id => Some(at.ns()),
            _ => None,
        })
    }

    /// Candidate 1 starts at 0 and takes the empty record: Get (req 1), the Record (no holder,
    /// resourceVersion 0) at 1 ms, its Update (req 1, transitions 0), applied at 2 ms as
    /// resourceVersion 1. It leads under token 1 and sleeps retry_period (SLEEP, timer 3).
    fn leading_candidate() -> K8sNode {
        lead(releasing_candidate(1))
    }

    /// Candidate 1 of `config` (on_lost: Rerun unless it says otherwise).
    fn candidate_with(change: impl FnOnce(&mut K8sConfig)) -> K8sNode {
        let mut config = protocol().config();
        change(&mut config);
        K8sLeaderElection::new(config, String::new()).node_logic(
            1,
            ROLES[1],
            &params(),
            Disk::default(),
        )
    }

    /// Candidate `c` (node 1) taken to lead as [`leading_candidate`] describes.
    fn lead(mut c: K8sNode) -> K8sNode {
        call(&mut c, 1, 0, |k, cx, out| k.on_start(cx, out));
        let none = Message::Record {
            req: 1,
            rv: 0,
            lease: None,
        };
        let e = call(&mut c, 1, MS, |k, cx, out| k.on_message(cx, 0, none, out));
        assert!(matches!(
            sent(&e)[..],
            [Message::Update { req: 1, rv: 0, .. }]
        ));
        let ok = Message::UpdateReply {
            req: 1,
            ok: true,
            rv: 1,
            values: Store::default(),
        };
        let e = call(&mut c, 1, 2 * MS, |k, cx, out| k.on_message(cx, 0, ok, out));
        assert!(e.facts().contains(&Fact::Holding { token: 1 }));
        assert_eq!(leads(&c), Some(1));
        c
    }

    /// The token candidate 1 admits requests under (at 0: candidates do not read the clock).
    fn leads(k: &K8sNode) -> Option<Token> {
        let at = LocalTime::from_ns(0);
        crate::strategy::with_test_cx(1, ROLES, at, |cx| k.check(cx, Request::Read { key: 0 }))
    }

    /// `release()` clears the record only if the record this candidate last observed is its
    /// own: client-go's `LeaderElector.release` (k8s.io/client-go,
    /// tools/leaderelection/leaderelection.go) returns at once when `!le.IsLeader()`, and
    /// `IsLeader` compares the observed record's HolderIdentity with its own identity.
    ///
    /// By hand (T = 15 s, retry_period 2 s): candidate 1 leads under token 1 from 2 ms and sleeps
    /// until 2.002 s, when a renew cycle opens with a Get (req 2). Its Record at 2.003 s says
    /// node 2 holds (transitions 1: node 2 took over while 1 was cut off), which 1 observes (a
    /// change) and, not having seen it unchanged for 15 s, fails the try. At 3 s an operator's
    /// StepDown cancels it: release() Gets (req 3); the Record at 3.001 s is still node 2's. The
    /// observed record is not its own, so there is nothing to release: no Update at all (one with
    /// no holder on resourceVersion 5 would apply and throw node 2 out). With on_lost: Rerun it
    /// goes straight back to the acquire loop: a Get (req 4) and nothing else.
    #[test]
    fn release_on_cancel_leaves_a_record_it_observed_as_anothers_alone() {
        let mut c = leading_candidate();
        let e = call(&mut c, 1, 2_002 * MS, |k, cx, out| k.on_timer(cx, 3, out));
        assert_eq!(sent(&e), [Message::Get { req: 2 }]);
        let theirs = Message::Record {
            req: 2,
            rv: 5,
            lease: Some(lease(2, 1)),
        };
        let e = call(&mut c, 1, 2_003 * MS, |k, cx, out| {
            k.on_message(cx, 0, theirs, out)
        });
        assert!(sent(&e).is_empty());
        let e = call(&mut c, 1, 3 * S, |k, cx, out| {
            k.on_command(cx, Command::StepDown, out)
        });
        assert_eq!(sent(&e), [Message::Get { req: 3 }]);
        assert_eq!(leads(&c), None);
        let theirs = Message::Record {
            req: 3,
            rv: 5,
            lease: Some(lease(2, 1)),
        };
        let e = call(&mut c, 1, 3_001 * MS, |k, cx, out| {
            k.on_message(cx, 0, theirs, out)
        });
        assert_eq!(sent(&e), [Message::Get { req: 4 }]);
    }

    /// With on_lost: Rerun, a candidate that released runs the elector again as an ordinary
    /// candidate, not as one still releasing: its acquire loop keeps trying every jittered
    /// period until it takes the lease, and then it renews. client-go: `release()` returns and
    /// `Run` returns; the application calls `LeaderElector.Run` again, which starts `acquire`'s
    /// `wait.JitterUntil` afresh (k8s.io/client-go, tools/leaderelection/leaderelection.go).
    ///
    /// By hand (T = 15 s, retry_period 2 s, jitter 1.2): candidate 1 leads under token 1 from
    /// 2 ms; StepDown at 1 s: release() Gets (req 2), its own record comes at 1.001 s, the
    /// Update with no holder (transitions 0) is applied at 1.002 s. Rerun: a Get (req 3) at
    /// once, answered at 1.003 s with node 2's record (transitions 1, taken in between): a
    /// change, observed at 1.003 s, so the try fails and the next one is due a period in
    /// [2, 4.4) s later. Each try (req 4, 5, ...) fires at its timer and is answered 1 ms later
    /// with the same record, until a try that began at or after 1.003 + 15 = 16.003 s finds it
    /// expired and Updates with transitions 2 (token 3). Applied, 1 leads under token 3; after
    /// retry_period's sleep it renews (Get, its own record, an Update keeping transitions 2)
    /// and still leads under token 3.
    #[test]
    fn a_rerun_after_release_acquires_and_renews_like_any_candidate() {
        let mut c = leading_candidate();
        let e = call(&mut c, 1, S, |k, cx, out| {
            k.on_command(cx, Command::StepDown, out)
        });
        assert_eq!(sent(&e), [Message::Get { req: 2 }]);
        let own = lease(1, 0);
        let e = call(&mut c, 1, 1_001 * MS, |k, cx, out| {
            let record = Message::Record {
                req: 2,
                rv: 1,
                lease: Some(own),
            };
            k.on_message(cx, 0, record, out)
        });
        let [Message::Update {
            req: 2,
            rv: 1,
            lease: released,
        }] = sent(&e)[..]
        else {
            panic!("expected the releasing Update: {:?}", sent(&e));
        };
        assert_eq!((released.holder, released.transitions), (None, 0));
        let ok = |req, rv| Message::UpdateReply {
            req,
            ok: true,
            rv,
            values: Store::default(),
        };
        let e = call(&mut c, 1, 1_002 * MS, |k, cx, out| {
            k.on_message(cx, 0, ok(2, 2), out)
        });
        assert_eq!(sent(&e), [Message::Get { req: 3 }]);
        // Node 2 took the lease at resourceVersion 3.
        let theirs = |req| Message::Record {
            req,
            rv: 3,
            lease: Some(lease(2, 1)),
        };
        let mut e = call(&mut c, 1, 1_003 * MS, |k, cx, out| {
            k.on_message(cx, 0, theirs(3), out)
        });
        let mut req = 3;
        let update = loop {
            assert!(sent(&e).is_empty(), "{:?}", sent(&e));
            let at = armed(&e, 0).expect("the next try of the acquire loop is timed");
            assert!(at < 16_003 * MS + 4_400 * MS, "{at}");
            req += 1;
            let tried = call(&mut c, 1, at, |k, cx, out| k.on_timer(cx, 0, out));
            assert_eq!(
                sent(&tried),
                [Message::Get { req }],
                "the try due at {at} ns"
            );
            e = call(&mut c, 1, at + MS, |k, cx, out| {
                k.on_message(cx, 0, theirs(req), out)
            });
            if let [Message::Update { rv: 3, lease, .. }] = sent(&e)[..] {
                assert!(at >= 16_003 * MS);
                break lease;
            }
            assert!(at < 16_003 * MS);
        };
        assert_eq!(
            (update.holder.map(|h| h.node), update.token()),
            (Some(1), 3)
        );
        let e = call(&mut c, 1, 20 * S, |k, cx, out| {
            k.on_message(cx, 0, ok(req, 4), out)
        });
        assert!(e.facts().contains(&Fact::Holding { token: 3 }));
        assert_eq!(leads(&c), Some(3));
        // The renewal: SLEEP ends at 22 s, a Get, its own record, an Update, applied.
        let sleep_end = armed(&e, 3).expect("sleeps retry_period");
        assert_eq!(sleep_end, 22 * S);
        let e = call(&mut c, 1, sleep_end, |k, cx, out| k.on_timer(cx, 3, out));
        req += 1;
        assert_eq!(sent(&e), [Message::Get { req }]);
        let e = call(&mut c, 1, sleep_end + MS, |k, cx, out| {
            let record = Message::Record {
                req,
                rv: 4,
                lease: Some(update),
            };
            k.on_message(cx, 0, record, out)
        });
        let [Message::Update {
            rv: 4,
            lease: renewed,
            ..
        }] = sent(&e)[..]
        else {
            panic!("expected the renewing Update: {:?}", sent(&e));
        };
        assert_eq!(renewed.token(), 3);
        call(&mut c, 1, sleep_end + 2 * MS, |k, cx, out| {
            k.on_message(cx, 0, ok(req, 5), out)
        });
        assert_eq!(leads(&c), Some(3));
    }

    /// A release whose Update meets a Conflict tries again from the Get, as client-go's
    /// `tryRelease` does: StepDown at 1 s, the Get (req 2), its own record at 1.001 s, the
    /// Update with no holder, a Conflict at 1.002 s: a Get of the same release (req 2), not
    /// the acquire loop's next try (req 3).
    #[test]
    fn a_release_that_meets_a_conflict_reads_again() {
        let mut c = leading_candidate();
        let e = call(&mut c, 1, S, |k, cx, out| {
            k.on_command(cx, Command::StepDown, out)
        });
        // release() gives up renew_deadline after it began: at 11 s.
        assert_eq!(armed(&e, 5), Some(11 * S));
        let e = call(&mut c, 1, 1_001 * MS, |k, cx, out| {
            let record = Message::Record {
                req: 2,
                rv: 1,
                lease: Some(lease(1, 0)),
            };
            k.on_message(cx, 0, record, out)
        });
        assert!(matches!(sent(&e)[..], [Message::Update { req: 2, .. }]));
        let conflict = Message::UpdateReply {
            req: 2,
            ok: false,
            rv: 2,
            values: Store::default(),
        };
        let e = call(&mut c, 1, 1_002 * MS, |k, cx, out| {
            k.on_message(cx, 0, conflict, out)
        });
        assert_eq!(sent(&e), [Message::Get { req: 2 }]);
    }

    /// A process that exits when it stops leading comes back `restart` later as a new
    /// identity (client-go's holder identity is new in every process).
    ///
    /// By hand: candidate 1 leads from 2 ms under process 0 (req 1); StepDown at 1 s (no
    /// ReleaseOnCancel): it exits, sends nothing, and is started again at 1 + 10 = 11 s. A
    /// stale RETRY at 3 s finds it exited: nothing. At 11 s it Gets (req 2); the empty record
    /// at 11.001 s makes it Update as process 1.
    #[test]
    fn an_exited_process_comes_back_as_a_new_identity() {
        let mut c = lead(candidate_with(|c| {
            c.on_lost = OnLost::Exit {
                restart: LocalDur::from_secs(10),
            }
        }));
        let e = call(&mut c, 1, S, |k, cx, out| {
            k.on_command(cx, Command::StepDown, out)
        });
        assert!(sent(&e).is_empty());
        assert_eq!(armed(&e, 4), Some(11 * S));
        assert_eq!(leads(&c), None);
        let e = call(&mut c, 1, 3 * S, |k, cx, out| k.on_timer(cx, 0, out));
        assert!(sent(&e).is_empty(), "{:?}", sent(&e));
        let e = call(&mut c, 1, 11 * S, |k, cx, out| k.on_timer(cx, 4, out));
        assert_eq!(sent(&e), [Message::Get { req: 2 }]);
        let none = Message::Record {
            req: 2,
            rv: 3,
            lease: None,
        };
        let e = call(&mut c, 1, 11_001 * MS, |k, cx, out| {
            k.on_message(cx, 0, none, out)
        });
        let [Message::Update {
            req: 2,
            rv: 3,
            lease,
        }] = sent(&e)[..]
        else {
            panic!("expected an Update: {:?}", sent(&e));
        };
        let me = lease.holder.expect("a holder");
        assert_eq!((me.node, me.incarnation, me.process), (1, 0, 1));
    }

    /// A timer that is not the state's own (left armed, or due at the instant the state
    /// changed) changes nothing: RETRY, DEADLINE, RELEASE_TIMEOUT and RESTART to a leader
    /// between cycles; SLEEP to a leader in a cycle and to a candidate that does not lead.
    #[test]
    fn timers_of_another_state_change_nothing() {
        let mut c = leading_candidate();
        for timer in [0, 2, 4, 5] {
            let e = call(&mut c, 1, S, |k, cx, out| k.on_timer(cx, timer, out));
            assert!(e.actions().is_empty(), "timer {timer}: {:?}", e.actions());
            assert_eq!(leads(&c), Some(1), "timer {timer}");
        }
        // SLEEP ends at 2.002 s: a cycle opens with a Get (req 2); a second SLEEP in it is
        // stale.
        let e = call(&mut c, 1, 2_002 * MS, |k, cx, out| k.on_timer(cx, 3, out));
        assert_eq!(sent(&e), [Message::Get { req: 2 }]);
        let e = call(&mut c, 1, 2_003 * MS, |k, cx, out| k.on_timer(cx, 3, out));
        assert!(e.actions().is_empty(), "{:?}", e.actions());
        let mut c = candidate_with(|_| {});
        call(&mut c, 1, 0, |k, cx, out| k.on_start(cx, out));
        let e = call(&mut c, 1, MS, |k, cx, out| k.on_timer(cx, 3, out));
        assert!(e.actions().is_empty(), "{:?}", e.actions());
    }

    /// A renew cycle polls every retry_period from its opening until renew_deadline: a tick
    /// that finds a try outstanding is kept, and the try, once failed, is followed at once by
    /// the next. A late tick re-arms on the cycle's own grid, and none falls at the deadline.
    ///
    /// By hand: the cycle opens at 2.002 s (SLEEP) with a Get (req 2): ticks at 4.002 s,
    /// 6.002 s, ..., the deadline at 12.002 s. A tick run late at 9.5 s (7.498 s into the
    /// cycle) re-arms at 2.002 + (3 + 1) x 2 = 10.002 s and, the Get still out, sends nothing.
    /// The Get's record, another's, fails the try; the kept tick starts the next try (req 3) at
    /// once. A tick at exactly 12.002 s does nothing, and the deadline then stops the leader.
    #[test]
    fn a_renew_cycle_polls_on_its_grid_until_its_deadline() {
        let mut c = leading_candidate();
        let e = call(&mut c, 1, 2_002 * MS, |k, cx, out| k.on_timer(cx, 3, out));
        assert_eq!(sent(&e), [Message::Get { req: 2 }]);
        assert_eq!(
            (armed(&e, 1), armed(&e, 2)),
            (Some(4_002 * MS), Some(12_002 * MS))
        );
        let e = call(&mut c, 1, 9_500 * MS, |k, cx, out| k.on_timer(cx, 1, out));
        assert!(sent(&e).is_empty());
        assert_eq!(armed(&e, 1), Some(10_002 * MS));
        let theirs = Message::Record {
            req: 2,
            rv: 5,
            lease: Some(lease(2, 1)),
        };
        let e = call(&mut c, 1, 9_501 * MS, |k, cx, out| {
            k.on_message(cx, 0, theirs, out)
        });
        assert_eq!(sent(&e), [Message::Get { req: 3 }]);
        let e = call(&mut c, 1, 12_002 * MS, |k, cx, out| k.on_timer(cx, 1, out));
        assert!(e.actions().is_empty(), "{:?}", e.actions());
        assert_eq!(leads(&c), Some(1));
        call(&mut c, 1, 12_002 * MS, |k, cx, out| k.on_timer(cx, 2, out));
        assert_eq!(leads(&c), None);
    }

    /// A leader serves a read from its copy and sends a write, under its token, to the
    /// resource at the API server.
    #[test]
    fn a_leader_reads_its_copy_and_sends_its_writes_to_the_api_server() {
        let mut c = leading_candidate();
        let e = call(&mut c, 1, S, |k, cx, out| {
            k.on_request(cx, Request::Read { key: 0 }, 1, out)
        });
        assert_eq!(e.facts(), [Fact::Read { token: 1, value: 0 }]);
        let e = call(&mut c, 1, S, |k, cx, out| {
            k.on_request(cx, Request::Write { key: 0, value: 7 }, 1, out)
        });
        assert_eq!(e.facts(), [Fact::WriteSent { token: 1 }]);
        assert_eq!(
            sent(&e),
            [Message::Write {
                token: 1,
                key: 0,
                value: 7
            }]
        );
    }

    /// The fast path (client-go since 1.28): a leader whose own record is still valid by its
    /// clock renews with one Update on the resourceVersion it last wrote, no Get.
    ///
    /// By hand: candidate 1 leads from 2 ms (its record, resourceVersion 1, observed then) and
    /// sleeps until 2.002 s; its record is valid while 2 ms + 15 s > now, so until
    /// 15.002 s - 1 ns. A renewal at 2.002 s or at 15.002 s - 1 ns (a process paused past its
    /// sleep) is an Update (req 2, resourceVersion 1) of its record with renewTime its wall
    /// reading and LeaseDurationSeconds 15 s; one at 15.002 s is a Get.
    #[test]
    fn a_valid_leader_renews_with_one_update_and_an_expired_one_reads_first() {
        let fast = || lead(candidate_with(|c| c.fast_path = true));
        for at in [2_002 * MS, 15_002 * MS - 1] {
            let mut c = fast();
            let e = call(&mut c, 1, at, |k, cx, out| k.on_timer(cx, 3, out));
            let [Message::Update {
                req: 2,
                rv: 1,
                lease,
            }] = sent(&e)[..]
            else {
                panic!("at {at}: expected the fast path's Update: {:?}", sent(&e));
            };
            assert_eq!(lease.holder.map(|h| h.node), Some(1));
            assert_eq!(
                (lease.renew_wall.ns(), lease.duration),
                (at, LocalDur::from_secs(15))
            );
            assert_eq!((lease.acquire_wall.ns(), lease.transitions), (0, 0));
            assert_eq!(armed(&e, 6), Some(at + 5 * S), "the HTTP timeout");
        }
        let mut c = fast();
        let e = call(&mut c, 1, 15_002 * MS, |k, cx, out| k.on_timer(cx, 3, out));
        assert_eq!(sent(&e), [Message::Get { req: 2 }]);
        // Without the fast path, a valid leader reads first too.
        let mut c = lead(candidate_with(|_| {}));
        let e = call(&mut c, 1, 2_002 * MS, |k, cx, out| k.on_timer(cx, 3, out));
        assert_eq!(sent(&e), [Message::Get { req: 2 }]);
    }

    /// The fast path's Update that fails falls back to the slow path's Get under the same
    /// request, whether the API server answered Conflict or the HTTP client gave up (timer 6);
    /// the record that Get brings is then handled as a Get's.
    ///
    /// By hand: the leader's fast Update (req 2) goes at 2.002 s. Conflict at 2.003 s: a Get
    /// (req 2). Or no answer by 2.002 + 5 = 7.002 s: a Get (req 2); its record at 7.003 s,
    /// the leader's own at resourceVersion 1, makes the slow path's Update on resourceVersion 1.
    #[test]
    fn a_failed_fast_update_falls_back_to_a_get_of_the_same_try() {
        let fast = || {
            let mut c = lead(candidate_with(|c| c.fast_path = true));
            call(&mut c, 1, 2_002 * MS, |k, cx, out| k.on_timer(cx, 3, out));
            c
        };
        let mut c = fast();
        let conflict = |req| Message::UpdateReply {
            req,
            ok: false,
            rv: 7,
            values: Store::default(),
        };
        // A copy of an older try's answer (req 1), which the network duplicated, is no answer.
        let e = call(&mut c, 1, 2_003 * MS, |k, cx, out| {
            k.on_message(cx, 0, conflict(1), out)
        });
        assert!(sent(&e).is_empty(), "{:?}", sent(&e));
        let e = call(&mut c, 1, 2_003 * MS, |k, cx, out| {
            k.on_message(cx, 0, conflict(2), out)
        });
        assert_eq!(sent(&e), [Message::Get { req: 2 }]);
        // That Get's record (another's, resourceVersion 7, seen changed now) fails the try.
        let theirs = Message::Record {
            req: 2,
            rv: 7,
            lease: Some(lease(2, 1)),
        };
        let e = call(&mut c, 1, 2_004 * MS, |k, cx, out| {
            k.on_message(cx, 0, theirs, out)
        });
        assert!(sent(&e).is_empty(), "{:?}", sent(&e));
        assert!(e
            .actions()
            .iter()
            .any(|a| matches!(a, Action::CancelTimer { timer: 6 })));
        let mut c = fast();
        let e = call(&mut c, 1, 7_002 * MS, |k, cx, out| k.on_timer(cx, 6, out));
        assert_eq!(sent(&e), [Message::Get { req: 2 }]);
        let own = Message::Record {
            req: 2,
            rv: 1,
            lease: Some(lease(1, 0)),
        };
        let e = call(&mut c, 1, 7_003 * MS, |k, cx, out| {
            k.on_message(cx, 0, own, out)
        });
        let [Message::Update {
            req: 2,
            rv: 1,
            lease: renewed,
        }] = sent(&e)[..]
        else {
            panic!("expected the slow path's Update: {:?}", sent(&e));
        };
        // renewTime is the try's own `now` (its wall reading when it began), not the record's.
        assert_eq!(renewed.renew_wall.ns(), 2_002 * MS);
        assert_eq!((renewed.acquire_wall.ns(), renewed.transitions), (0, 0));
    }

    /// A request the API server's host refused (its process down) fails at once if it is the
    /// try's outstanding one, and a refusal of an older request changes nothing.
    ///
    /// By hand: candidate 1 starts at 0 with a Get (req 1) and draws its period p in
    /// [2, 4.4) s. Refused at 1 ms: the try fails, the next falls due at 1 ms + p. A refused
    /// Get of req 0 (none outstanding under that number) or an Update of req 1 (a Get is
    /// outstanding) arms nothing.
    #[test]
    fn a_refused_request_fails_the_try_it_belongs_to_and_no_other() {
        let refused = |msg: Message| {
            let mut c = candidate_with(|_| {});
            call(&mut c, 1, 0, |k, cx, out| k.on_start(cx, out));
            call(&mut c, 1, MS, |k, cx, out| k.on_refused(cx, 0, msg, out))
        };
        let e = refused(Message::Get { req: 1 });
        let retry = armed(&e, 0).expect("the next try is timed");
        assert!((2_001 * MS..4_401 * MS).contains(&retry), "{retry}");
        assert_eq!(armed(&refused(Message::Get { req: 0 }), 0), None);
        let update = Message::Update {
            req: 1,
            rv: 0,
            lease: lease(1, 0),
        };
        assert_eq!(armed(&refused(update), 0), None);
    }

    /// Candidates' periods lie in [retry_period, retry_period x (1 + jitter_factor)).
    #[test]
    fn jittered_periods_stay_in_their_range() {
        let K8sNode::Candidate(c) = node(1) else {
            unreachable!()
        };
        crate::strategy::with_test_cx(1, ROLES, LocalTime::from_ns(0), |cx| {
            let periods: Vec<i64> = (0..1000).map(|_| c.jittered(cx).ns()).collect();
            assert!(periods.iter().all(|&p| (2 * S..4_400_000_000).contains(&p)));
            // Spread over the range, not stuck at one end: 1 in 12 draws lies in the top
            // 200 ms (of 2.4 s), past 2 s x 2, so a jitter of retry_period alone fails.
            assert!(periods.iter().any(|&p| p < 2_500_000_000));
            assert!(periods.iter().any(|&p| p > 4_200_000_000));
        });
        // With no jitter, every period is retry_period exactly.
        let K8sNode::Candidate(c) = candidate_with(|c| c.jitter_ppm = 0) else {
            unreachable!()
        };
        crate::strategy::with_test_cx(1, ROLES, LocalTime::from_ns(0), |cx| {
            assert!((0..10).all(|_| c.jittered(cx) == LocalDur::from_secs(2)));
        });
    }
}
