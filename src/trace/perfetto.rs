//! `trace.perfetto.json`: the run in Chrome trace format, streamed to disk; it opens in
//! ui.perfetto.dev (and chrome://tracing).
//!
//! One process per node, each with three tracks: `lease` (belief slices named by token, and
//! the node's start), `faults` (pauses, crashes and restarts, clock steps, drift changes),
//! `messages` (a short slice per send and per delivery, joined by flow arrows); a `grants`
//! track on a node that grants (each grant as the interval it granted, from the grant to its
//! last renewal's end) and a `read lease` track on a protocol that tracks read authority apart;
//! and a `clock error (ms)` counter per node (its monotonic and wall clocks minus true time,
//! sampled at its events whenever either moved by 10 us or more, and at every start, step and
//! drift change). A last process holds the `overlaps` track. Client reads are not drawn one by
//! one (a run has millions); harm is drawn as instant events on the node's `lease` track.
//! Timestamps are microseconds with nanosecond decimals.

use super::{Counted, Observer, TraceEvent, TraceKind};
use crate::msg::{NodeId, Token};
use crate::oracle::authority::Authority;
use crate::oracle::{Overlap, Piece};
use crate::scenario::PauseKind;
use crate::time::{format_ns, SimTime};
use serde_json::json;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

const LEASE: u64 = 1;
const FAULTS: u64 = 2;
const MESSAGES: u64 = 3;
/// Read authority, for a protocol that tracks it apart; named when first used.
const READ_LEASE: u64 = 4;
/// The intervals a node granted; named when first used.
const GRANTS: u64 = 5;
/// The end of the document.
const CLOSING: &[u8] = b"\n]}\n";
/// A clock-error sample is written when either error moved this much since the last one.
const CLOCK_ERROR_STEP_NS: i64 = 10_000;

/// A grant whose interval is still open: (token, to, granted at, free at).
type OpenGrant = (Token, NodeId, SimTime, SimTime);

/// Streams `trace.perfetto.json`.
pub struct PerfettoWriter {
    out: Counted<BufWriter<File>>,
    names: Vec<String>,
    first: bool,
    error: Option<io::Error>,
    /// Open pauses per node: (start, kind, stall).
    open_pauses: Vec<Vec<(SimTime, PauseKind, bool)>>,
    crashed_at: Vec<Option<SimTime>>,
    /// Whether a node's read-lease track has been named yet.
    read_track: Vec<bool>,
    /// Whether a node's grants track has been named yet, and its open grant.
    grants_track: Vec<bool>,
    open_grant: Vec<Option<OpenGrant>>,
    /// Per node, the clock errors (monotonic, wall) of its last sample.
    last_error: Vec<Option<(i64, i64)>>,
}

/// Microseconds with three decimals, exactly, as JSON wants numbers.
fn us(t: i64) -> serde_json::Value {
    let s = format!(
        "{}{}.{:03}",
        if t < 0 { "-" } else { "" },
        t.abs() / 1000,
        t.abs() % 1000
    );
    serde_json::Value::Number(s.parse().expect("a decimal number"))
}

impl PerfettoWriter {
    pub fn create(path: &Path, names: Vec<String>) -> io::Result<PerfettoWriter> {
        let mut out = Counted::new(BufWriter::with_capacity(1 << 16, File::create(path)?));
        out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        let n = names.len();
        let mut w = PerfettoWriter {
            out,
            names,
            first: true,
            error: None,
            open_pauses: vec![Vec::new(); n],
            crashed_at: vec![None; n],
            read_track: vec![false; n],
            grants_track: vec![false; n],
            open_grant: vec![None; n],
            last_error: vec![None; n],
        };
        for node in 0..n {
            let pid = node as u64 + 1;
            let name = w.names[node].clone();
            w.push(json!({"ph":"M","name":"process_name","pid":pid,"args":{"name":name}}));
            w.push(
                json!({"ph":"M","name":"process_sort_index","pid":pid,"args":{"sort_index":pid}}),
            );
            for (tid, track) in [(LEASE, "lease"), (FAULTS, "faults"), (MESSAGES, "messages")] {
                w.push(json!({"ph":"M","name":"thread_name","pid":pid,"tid":tid,"args":{"name":track}}));
            }
        }
        let pid = n as u64 + 1;
        w.push(json!({"ph":"M","name":"process_name","pid":pid,"args":{"name":"oracle"}}));
        w.push(json!({"ph":"M","name":"process_sort_index","pid":pid,"args":{"sort_index":pid}}));
        w.push(json!({"ph":"M","name":"thread_name","pid":pid,"tid":1,"args":{"name":"overlaps"}}));
        Ok(w)
    }

    fn push(&mut self, v: serde_json::Value) {
        if self.error.is_some() {
            return;
        }
        let sep: &[u8] = if self.first { b"" } else { b",\n" };
        self.first = false;
        let r = self
            .out
            .write_all(sep)
            .and_then(|_| serde_json::to_writer(&mut self.out, &v).map_err(io::Error::other));
        if let Err(e) = r {
            self.error = Some(e);
        }
    }

    fn slice(
        &mut self,
        node: NodeId,
        tid: u64,
        name: &str,
        start: SimTime,
        end: SimTime,
        args: serde_json::Value,
    ) {
        self.push(json!({
            "ph": "X", "name": name, "pid": node as u64 + 1, "tid": tid,
            "ts": us(start.ns()), "dur": us((end.ns() - start.ns()).max(1)), "args": args,
        }));
    }

    fn instant(&mut self, node: NodeId, tid: u64, name: &str, t: SimTime, args: serde_json::Value) {
        self.push(json!({
            "ph": "i", "s": "t", "name": name, "pid": node as u64 + 1, "tid": tid,
            "ts": us(t.ns()), "args": args,
        }));
    }

    fn pause_slice(
        &mut self,
        node: NodeId,
        start: SimTime,
        end: SimTime,
        kind: PauseKind,
        stall: bool,
    ) {
        let name = match (kind, stall) {
            (PauseKind::Gc, _) => "GC pause",
            (PauseKind::VmFreeze, false) => "VM freeze (clock catches up)",
            (PauseKind::VmFreeze, true) => "VM freeze (clock stalls)",
        };
        self.slice(
            node,
            FAULTS,
            name,
            start,
            end,
            json!({"duration": format_ns(end.ns() - start.ns())}),
        );
    }

    /// Writes node `node`'s open grant as the interval it granted, ended at `by` if it would
    /// run past it.
    fn close_grant(&mut self, node: NodeId, by: SimTime) {
        let Some((token, to, start, until)) = self.open_grant[node].take() else {
            return;
        };
        if !std::mem::replace(&mut self.grants_track[node], true) {
            let pid = node as u64 + 1;
            self.push(json!({"ph":"M","name":"thread_name","pid":pid,"tid":GRANTS,"args":{"name":"grants"}}));
        }
        let end = until.min(by).max(start);
        let name = format!("granted token {token} to {}", self.names[to]);
        self.slice(
            node,
            GRANTS,
            &name,
            start,
            end,
            json!({"token": token, "until_ns": until.ns()}),
        );
    }

    /// A clock-error sample of the node of `e`, if its errors moved enough (or `force`).
    fn clock_error(&mut self, e: &TraceEvent, force: bool) {
        let err = (e.mono().ns() - e.t.ns(), e.wall().ns() - e.t.ns());
        let moved = self.last_error[e.node].is_none_or(|(m, w)| {
            (err.0 - m).abs() >= CLOCK_ERROR_STEP_NS || (err.1 - w).abs() >= CLOCK_ERROR_STEP_NS
        });
        if moved || force {
            self.last_error[e.node] = Some(err);
            self.push(json!({
                "ph": "C", "name": "clock error (ms)", "pid": e.node as u64 + 1,
                "ts": us(e.t.ns()),
                "args": {"monotonic": err.0 as f64 / 1e6, "wall": err.1 as f64 / 1e6},
            }));
        }
    }

    /// Node `n` started at `t` (`restarted`: after a crash, whose slice this ends): an instant
    /// on its faults track for a restart, on its lease track for the first start.
    fn started(&mut self, n: NodeId, t: SimTime, restarted: bool, clocks: serde_json::Value) {
        if let Some(since) = self.crashed_at[n].take() {
            self.slice(n, FAULTS, "crashed", since, t, json!({}));
        }
        // A start is no fault; a restart ends one.
        let (track, name) = if restarted {
            (FAULTS, "restart")
        } else {
            (LEASE, "start")
        };
        self.instant(n, track, name, t, clocks);
    }

    /// Node `n` crashed at `t`: its crash slice opens, and its open pauses end there.
    fn crashed(&mut self, n: NodeId, t: SimTime) {
        self.crashed_at[n] = Some(t);
        let open: Vec<_> = self.open_pauses[n].drain(..).collect();
        for (start, kind, stall) in open {
            self.pause_slice(n, start, t, kind, stall);
        }
    }

    /// A pause of node `n` ended at `t`: its oldest open pause is drawn.
    fn pause_ended(&mut self, n: NodeId, t: SimTime) {
        if !self.open_pauses[n].is_empty() {
            let (start, kind, stall) = self.open_pauses[n].remove(0);
            self.pause_slice(n, start, t, kind, stall);
        }
    }

    /// The short slice of a message sent or delivered at event `e`, on its node's messages track.
    fn message_slice(&mut self, e: &TraceEvent, name: &str, id: u64, token: Option<Token>) {
        let args = json!({"msg_id": id, "token": token, "mono_ns": e.mono().ns()});
        self.slice(e.node, MESSAGES, name, e.t, e.t, args);
    }

    /// A read by node `n` at `t` under `token`: an instant when it was a zombie's or stale.
    fn read_harm(&mut self, n: NodeId, t: SimTime, token: Token, zombie: bool, stale: bool) {
        if zombie || stale {
            let name = match (zombie, stale) {
                (true, true) => "zombie stale read",
                (true, false) => "zombie read",
                _ => "stale read",
            };
            self.instant(n, LEASE, name, t, json!({"token": token}));
        }
    }

    /// A write of `writer`'s that reached the resource at `t`: an instant on the writer's lease
    /// track when it was applied unsafely or fenced.
    fn write_harm(
        &mut self,
        writer: NodeId,
        t: SimTime,
        token: Token,
        applied: bool,
        unsafe_write: bool,
    ) {
        if unsafe_write || !applied {
            let name = if applied {
                "unsafe write applied"
            } else {
                "write fenced"
            };
            self.instant(writer, LEASE, name, t, json!({"token": token}));
        }
    }

    /// The bytes of the file so far, with the end of the document that `close` writes.
    pub fn bytes_written(&self) -> u64 {
        self.out.bytes() + CLOSING.len() as u64
    }

    /// Closes the JSON document; the first write error, if any happened.
    pub fn close(mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.write_all(CLOSING)?;
        self.out.flush()
    }
}

impl Observer for PerfettoWriter {
    fn event(&mut self, e: &TraceEvent) {
        let n = e.node;
        let clocks = json!({"mono_ns": e.mono().ns(), "wall_ns": e.wall().ns()});
        let clock_changed = matches!(
            e.kind,
            TraceKind::Start { .. } | TraceKind::ClockStep { .. } | TraceKind::DriftChange { .. }
        );
        self.clock_error(e, clock_changed);
        match e.kind {
            TraceKind::Start { restarted } => self.started(n, e.t, restarted, clocks),
            TraceKind::Crash => self.crashed(n, e.t),
            TraceKind::PauseBegin { kind, stall, .. } => {
                self.open_pauses[n].push((e.t, kind, stall))
            }
            TraceKind::PauseEnd => self.pause_ended(n, e.t),
            TraceKind::ThreadStallBegin { thread, until } => {
                let name = format!("{} loop stalls", thread.name());
                let args = json!({"until_ns": until.ns(), "mono_ns": e.mono().ns()});
                self.instant(n, FAULTS, &name, e.t, args);
            }
            TraceKind::ThreadStallEnd { thread } => {
                let name = format!("{} loop resumes", thread.name());
                self.instant(n, FAULTS, &name, e.t, clocks);
            }
            TraceKind::DiskStallBegin { until } => {
                let args = json!({"until_ns": until.ns(), "mono_ns": e.mono().ns()});
                self.instant(n, FAULTS, "disk stalls", e.t, args);
            }
            TraceKind::DiskStallEnd => self.instant(n, FAULTS, "disk resumes", e.t, clocks),
            TraceKind::Durable { writes } => {
                let args = json!({"writes": writes, "mono_ns": e.mono().ns()});
                self.instant(n, FAULTS, "fsync done", e.t, args);
            }
            TraceKind::ClockStep { by } => {
                let name = format!("wall clock step {}", format_ns(by.ns()));
                self.instant(n, FAULTS, &name, e.t, clocks);
            }
            TraceKind::DriftChange { drift } => {
                let name = format!("drift now {:+} ppm", drift.as_ppm());
                self.instant(n, FAULTS, &name, e.t, clocks);
            }
            TraceKind::Send {
                to,
                kind,
                id,
                token,
                arrives,
            } => {
                let name = format!("{} to {}", kind, self.names[to]);
                self.message_slice(e, &name, id, token);
                if arrives.is_some() {
                    self.push(json!({"ph":"s","name":kind,"cat":"msg","id":id,"pid":n as u64 + 1,"tid":MESSAGES,"ts":us(e.t.ns())}));
                }
            }
            TraceKind::Deliver {
                from,
                kind,
                id,
                token,
            } => {
                let name = format!("{} from {}", kind, self.names[from]);
                self.message_slice(e, &name, id, token);
                self.push(json!({"ph":"f","bp":"e","name":kind,"cat":"msg","id":id,"pid":n as u64 + 1,"tid":MESSAGES,"ts":us(e.t.ns())}));
            }
            TraceKind::Drop {
                from,
                kind,
                id,
                reason,
                ..
            } => {
                let name = format!("{} from {} dropped ({reason:?})", kind, self.names[from]);
                self.instant(n, MESSAGES, &name, e.t, json!({"msg_id": id}));
            }
            TraceKind::Refused { to, kind, id } => {
                let name = format!("{} to {} refused", kind, self.names[to]);
                self.instant(n, MESSAGES, &name, e.t, json!({"msg_id": id}));
            }
            TraceKind::Grant { token, to, until } => {
                self.close_grant(n, e.t);
                self.open_grant[n] = Some((token, to, e.t, until));
            }
            TraceKind::Renewed { token, until } => {
                if let Some(g) = self.open_grant[n].as_mut().filter(|g| g.0 == token) {
                    g.3 = g.3.max(until);
                }
            }
            TraceKind::Rejected { .. } | TraceKind::WriteSent { zombie: false, .. } => {}
            TraceKind::Read {
                token,
                zombie,
                stale,
            } => self.read_harm(n, e.t, token, zombie, stale),
            TraceKind::WriteSent {
                token,
                zombie: true,
            } => {
                self.instant(n, LEASE, "zombie write", e.t, json!({"token": token}));
            }
            TraceKind::WriteArrived {
                writer,
                token,
                duplicate: true,
                ..
            } => {
                let args = json!({"token": token});
                self.instant(writer, LEASE, "duplicate write delivered", e.t, args);
            }
            TraceKind::WriteArrived {
                writer,
                token,
                applied,
                unsafe_write,
                ..
            } => self.write_harm(writer, e.t, token, applied, unsafe_write),
        }
    }

    fn belief(&mut self, node: NodeId, authority: Authority, p: &Piece) {
        let what = match authority {
            Authority::Write => "holds",
            Authority::Read => "reads under",
        };
        let name = if p.running {
            format!("{what} token {}", p.token)
        } else {
            format!("{what} token {} (paused)", p.token)
        };
        let track = match authority {
            Authority::Write => LEASE,
            Authority::Read => READ_LEASE,
        };
        if track == READ_LEASE && !std::mem::replace(&mut self.read_track[node], true) {
            let pid = node as u64 + 1;
            self.push(json!({"ph":"M","name":"thread_name","pid":pid,"tid":READ_LEASE,"args":{"name":"read lease"}}));
        }
        self.slice(
            node,
            track,
            &name,
            p.start,
            p.end,
            json!({"token": p.token}),
        );
    }

    fn overlap(&mut self, authority: Authority, o: &Overlap) {
        let who: Vec<&str> = o.nodes.iter().map(|&n| self.names[n].as_str()).collect();
        let of = match authority {
            Authority::Write => "",
            Authority::Read => " of read authority",
        };
        let name = format!(
            "OVERLAP{of} {} ({})",
            format_ns(o.end.ns() - o.start.ns()),
            who.join(", ")
        );
        let pid = self.names.len(); // slice() adds 1: the oracle's process
        self.slice(pid, 1, &name, o.start, o.end, json!({"nodes": who}));
    }

    fn finish(&mut self, end: SimTime) {
        for n in 0..self.names.len() {
            self.close_grant(n, end);
            let open: Vec<_> = self.open_pauses[n].drain(..).collect();
            for (start, kind, stall) in open {
                self.pause_slice(n, start, end, kind, stall);
            }
            if let Some(since) = self.crashed_at[n].take() {
                self.slice(n, FAULTS, "crashed", since, end, json!({}));
            }
        }
    }
}
