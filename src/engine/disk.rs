//! A node's disk (`nodes[i].disk`): what node logic writes ([`Out::persist`]) becomes durable
//! one fsync at a time, in order, each taking a draw of the node's fsync latency. An fsync
//! asked of an idle disk begins once the calls of that instant are made, and the writes that
//! come while one is under way share the next (group commit), so that a node never has more
//! than two fsyncs' worth pending, however long its disk stalls. A `DiskStall` stops the
//! fsync under way (it finishes that much later). When an fsync finishes, the image it wrote
//! is what a crash keeps; then the node, once it runs, sends what the calls that waited for it
//! sent and lets their loops go on. A crash loses every write not yet durable (the model is a
//! machine that loses power: nothing in the page cache survives).
//!
//! [`Out::persist`]: crate::strategy::Out::persist

use super::{Ev, Sim};
use crate::dist::Sampler;
use crate::msg::NodeId;
use crate::rng::Rng;
use crate::scenario::Thread;
use crate::strategy::{MsgOf, NodeLogic, Protocol};
use crate::time::{Dur, SimTime};
use crate::trace::TraceKind;
use std::collections::VecDeque;

/// The writes one fsync makes durable.
pub(super) struct Batch<L: NodeLogic> {
    /// What the disk holds once it is durable (the image of the last write in it).
    image: Option<L::Disk>,
    /// The messages of the calls that wait for it, in the order they were sent.
    sends: Vec<(NodeId, L::Msg)>,
    /// How many waiting calls of each loop ([`Thread::ALL`] order) it holds.
    waiting: [u32; 2],
    /// How many calls wrote it.
    writes: u32,
}

impl<L: NodeLogic> Batch<L> {
    fn new() -> Batch<L> {
        Batch {
            image: None,
            sends: Vec::new(),
            waiting: [0; 2],
            writes: 0,
        }
    }

    /// Whether the node has anything to do once it is durable: messages to send or loops to
    /// let go on (a batch of background writes has neither).
    fn holds_anything(&self) -> bool {
        !self.sends.is_empty() || self.waiting != [0; 2]
    }
}

/// One node's disk.
pub(super) struct Disk<L: NodeLogic> {
    fsync: Sampler,
    rng: Rng,
    /// `DiskStall`s under way.
    stall_depth: u32,
    /// The fsync under way (or, until `started`, about to begin: the writes of the instant
    /// it was asked for join it).
    current: Option<Batch<L>>,
    started: bool,
    /// The writes that came while it was under way: the next fsync.
    next: Option<Batch<L>>,
    /// When the fsync under way finishes (while the disk runs), or how much of it is left
    /// (while it is stalled).
    done_at: SimTime,
    left: Dur,
    /// Incremented whenever the fsync under way is stopped or lost: its finish event is stale.
    gen: u32,
    /// Fsyncs finished whose sends and waiting loops the node has not yet handled (it was
    /// paused), in the order they finished.
    finished: VecDeque<Batch<L>>,
    /// The last image made durable: what a crash keeps. `None` if the protocol gives none.
    pub(super) durable: Option<L::Disk>,
}

impl<L: NodeLogic> Disk<L> {
    pub(super) fn new(fsync: Sampler, rng: Rng) -> Disk<L> {
        Disk {
            fsync,
            rng,
            stall_depth: 0,
            current: None,
            started: false,
            next: None,
            done_at: SimTime::NEVER,
            left: Dur::ZERO,
            gen: 0,
            finished: VecDeque::new(),
            durable: None,
        }
    }

    /// The node crashed: every write not yet durable is lost, and so is what the finished
    /// fsyncs held for it to send.
    pub(super) fn crashed(&mut self) {
        self.current = None;
        self.started = false;
        self.next = None;
        self.finished.clear();
        self.gen = self.gen.wrapping_add(1);
    }
}

impl<P: Protocol> Sim<'_, P> {
    /// The call into node `n`'s logic that just ended persisted (`wait`: and waits for it, its
    /// messages `sends` held until then, from loop `thread`): the disk takes the logic's image
    /// as what it writes.
    pub(super) fn write_disk(
        &mut self,
        n: NodeId,
        wait: Option<Thread>,
        sends: Vec<(NodeId, MsgOf<P>)>,
    ) {
        let image = self.nodes[n].logic.as_ref().and_then(NodeLogic::disk_image);
        if let Some(thread) = wait {
            let waits = &mut self.nodes[n].disk_waits[thread as usize];
            *waits = waits.checked_add(1).expect("disk waits never wrap");
        }
        let life = self.nodes[n].life;
        let disk = self.nodes[n]
            .disk_model
            .as_mut()
            .expect("a node with a disk");
        let idle = disk.current.is_none();
        let batch = if idle || !disk.started {
            disk.current.get_or_insert_with(Batch::new)
        } else {
            disk.next.get_or_insert_with(Batch::new)
        };
        if image.is_some() {
            batch.image = image;
        }
        batch.sends.extend(sends);
        if let Some(thread) = wait {
            batch.waiting[thread as usize] += 1;
        }
        batch.writes += 1;
        if idle {
            // It begins once the calls of this instant are made: their writes share it.
            let ev = Ev::FsyncStart {
                node: n as u32,
                life,
                gen: disk.gen,
            };
            self.queue.push(self.now, ev);
        }
    }

    /// A call of node `n` that wrote nothing while its loop waits for its disk sent `sends`:
    /// they leave with the latest write not yet handled (after every write its loop made).
    pub(super) fn hold_for_disk(&mut self, n: NodeId, sends: Vec<(NodeId, MsgOf<P>)>) {
        if sends.is_empty() {
            return;
        }
        let disk = self.nodes[n]
            .disk_model
            .as_mut()
            .expect("a node with a disk");
        let latest = match (disk.next.as_mut(), disk.current.as_mut()) {
            (Some(next), _) => next,
            (None, Some(current)) => current,
            (None, None) => disk
                .finished
                .back_mut()
                .expect("a loop waits for a write not yet handled"),
        };
        latest.sends.extend(sends);
    }

    /// The fsync asked for at this instant begins (unless the node crashed since: `gen` is
    /// stale).
    pub(super) fn fsync_start(&mut self, n: NodeId, life: u32, gen: u32) {
        let node = &mut self.nodes[n];
        let current_life = node.life;
        let disk = node.disk_model.as_mut().expect("a node with a disk");
        if disk.gen != gen || current_life != life {
            return;
        }
        disk.started = true;
        self.start_fsync(n, life);
    }

    /// Node `n`'s disk begins the fsync now current: it finishes one draw of the fsync
    /// latency from now, or, while the disk is stalled, that long after the stall ends.
    fn start_fsync(&mut self, n: NodeId, life: u32) {
        let disk = self.nodes[n]
            .disk_model
            .as_mut()
            .expect("a node with a disk");
        debug_assert!(disk.current.is_some(), "an fsync writes something");
        let took = disk.fsync.sample(&mut disk.rng);
        if disk.stall_depth > 0 {
            disk.left = took;
            disk.done_at = SimTime::NEVER;
            return;
        }
        disk.done_at = self.now + took;
        let gen = disk.gen;
        let ev = Ev::FsyncDone {
            node: n as u32,
            life,
            gen,
        };
        self.queue.push(disk.done_at, ev);
    }

    /// An fsync of node `n` finishes (unless the disk stalled or the node crashed since it was
    /// queued: `gen` is stale): its image is durable, the next fsync begins, and the node is
    /// handed what the calls that waited for it sent.
    pub(super) fn fsync_done(&mut self, n: NodeId, life: u32, gen: u32) {
        let node = &mut self.nodes[n];
        let current_life = node.life;
        let disk = node.disk_model.as_mut().expect("a node with a disk");
        if disk.gen != gen || current_life != life {
            return;
        }
        let mut batch = disk.current.take().expect("an fsync under way");
        if let Some(image) = batch.image.take() {
            disk.durable = Some(image);
        }
        let writes = batch.writes;
        let holds = batch.holds_anything();
        if holds {
            disk.finished.push_back(batch);
        }
        disk.started = false;
        if let Some(next) = disk.next.take() {
            // The writes that came during this fsync: the next one, at once (group commit).
            disk.current = Some(next);
            disk.started = true;
            self.start_fsync(n, life);
        }
        if self.observer.is_some() {
            self.emit(n, TraceKind::Durable { writes });
        }
        if holds {
            self.route(n, Ev::Durable { node: n as u32 });
        }
    }

    /// Node `n` (running) handles its oldest finished fsync: the messages held for it leave,
    /// and the loops that waited for it go on.
    pub(super) fn durable(&mut self, n: NodeId) {
        let disk = self.nodes[n]
            .disk_model
            .as_mut()
            .expect("a node with a disk");
        let batch = disk.finished.pop_front().expect("a finished fsync");
        for (to, msg) in batch.sends {
            self.send(n, to, msg);
        }
        for thread in Thread::ALL {
            let waited = batch.waiting[thread as usize];
            if waited == 0 {
                continue;
            }
            let waits = &mut self.nodes[n].disk_waits[thread as usize];
            *waits = waits
                .checked_sub(waited)
                .expect("a write is waited for once");
            self.drain_held(n, thread);
        }
    }

    /// Node `n`'s disk stalls for `duration`: the fsync under way stops until it ends.
    pub(super) fn stall_disk(&mut self, n: NodeId, duration: Dur) {
        let now = self.now;
        let disk = self.nodes[n]
            .disk_model
            .as_mut()
            .expect("validated: a disk");
        disk.stall_depth = disk.stall_depth.checked_add(1).expect("never wraps");
        if disk.stall_depth == 1 && disk.current.is_some() && disk.started {
            disk.left = disk.done_at.since(now);
            disk.done_at = SimTime::NEVER;
            disk.gen = disk.gen.wrapping_add(1);
        }
        if self.observer.is_some() {
            let until = now + duration;
            self.emit(n, TraceKind::DiskStallBegin { until });
        }
        self.queue
            .push(now + duration, Ev::DiskStallEnd { node: n as u32 });
    }

    /// A stall of node `n`'s disk ends: when the last one ends, the fsync under way goes on.
    pub(super) fn end_disk_stall(&mut self, n: NodeId) {
        let now = self.now;
        let life = self.nodes[n].life;
        let disk = self.nodes[n].disk_model.as_mut().expect("a disk stalled");
        disk.stall_depth = disk
            .stall_depth
            .checked_sub(1)
            .expect("a disk stall ends only after it began");
        let resumes = disk.stall_depth == 0 && disk.current.is_some() && disk.started;
        if resumes {
            disk.done_at = now + disk.left;
            let ev = Ev::FsyncDone {
                node: n as u32,
                life,
                gen: disk.gen,
            };
            self.queue.push(disk.done_at, ev);
        }
        if self.observer.is_some() {
            self.emit(n, TraceKind::DiskStallEnd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::timer_tests::Rang;

    /// A node logic whose disk keeps nothing, for batches alone.
    struct Nothing;
    impl NodeLogic for Nothing {
        type Msg = Rang;
        type Disk = ();
        fn on_start(&mut self, _: &mut crate::strategy::Cx, _: &mut crate::strategy::Out<Rang>) {}
        fn on_message(
            &mut self,
            _: &mut crate::strategy::Cx,
            _: NodeId,
            _: Rang,
            _: &mut crate::strategy::Out<Rang>,
        ) {
        }
        fn on_timer(
            &mut self,
            _: &mut crate::strategy::Cx,
            _: crate::strategy::TimerId,
            _: &mut crate::strategy::Out<Rang>,
        ) {
        }
        fn check(&self, _: &crate::strategy::Cx, _: crate::strategy::Request) -> Option<u64> {
            None
        }
        fn on_request(
            &mut self,
            _: &mut crate::strategy::Cx,
            _: crate::strategy::Request,
            _: u64,
            _: &mut crate::strategy::Out<Rang>,
        ) {
        }
        fn beliefs(&self) -> crate::strategy::Beliefs {
            crate::strategy::Beliefs::NONE
        }
        fn into_disk(self) {}
    }

    #[test]
    fn a_batch_holds_something_when_a_call_waits_for_it_with_or_without_messages() {
        let mut b: Batch<Nothing> = Batch::new();
        b.writes = 1;
        assert!(!b.holds_anything(), "background writes alone");
        b.waiting[Thread::Worker as usize] = 1;
        assert!(b.holds_anything(), "a waiting call that sent nothing");
        b.sends.push((0, Rang(0)));
        assert!(b.holds_anything(), "a waiting call that sent a message");
        b.waiting = [0; 2];
        assert!(b.holds_anything(), "messages held");
    }
}
