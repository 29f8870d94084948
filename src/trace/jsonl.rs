//! `trace.jsonl`: every event of a run, one JSON object per line, streamed to disk.
//!
//! Each line has `t_ns` (true time), `node`, `kind`, the node's `mono_ns` and `wall_ns`
//! readings, and the kind's own fields (message ids, tokens, ...). Belief intervals and overlaps
//! are written as `belief` and `overlap` lines when the oracle has settled them (so they follow
//! the events they summarise). Nothing is held in memory: lines go through a buffered writer.

use super::{Counted, DropReason, Observer, TraceEvent, TraceKind};
use crate::msg::NodeId;
use crate::oracle::authority::Authority;
use crate::oracle::{Overlap, Piece};
use crate::scenario::PauseKind;
use crate::time::SimTime;
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Streams `trace.jsonl`.
pub struct JsonlWriter {
    out: Counted<BufWriter<File>>,
    names: Vec<String>,
    error: Option<io::Error>,
}

#[derive(Serialize)]
struct Line<'a> {
    t_ns: i64,
    node: &'a str,
    kind: &'static str,
    mono_ns: i64,
    wall_ns: i64,
    #[serde(flatten)]
    fields: Fields<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Fields<'a> {
    None {},
    Start {
        restarted: bool,
    },
    Pause {
        pause: &'static str,
        stall: bool,
        until_ns: i64,
    },
    ThreadStall {
        thread: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        until_ns: Option<i64>,
    },
    DiskStall {
        until_ns: i64,
    },
    Durable {
        writes: u32,
    },
    Step {
        by_ns: i64,
    },
    Drift {
        drift_ppm: f64,
    },
    Msg(Msg<'a>),
    Lease {
        token: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        to: Option<&'a str>,
        until_ns: i64,
    },
    Request {
        write: bool,
    },
    Effect {
        token: u64,
        zombie: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        stale: Option<bool>,
    },
    Arrived {
        writer: &'a str,
        token: u64,
        applied: bool,
        #[serde(rename = "unsafe")]
        unsafe_write: bool,
        #[serde(skip_serializing_if = "is_false")]
        duplicate: bool,
    },
}

/// A message's fields: its kind and id, and those its event has of the others.
#[derive(Serialize)]
struct Msg<'a> {
    msg: &'static str,
    msg_id: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arrives_ns: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
}

impl Msg<'_> {
    /// A message of kind `msg` with id `msg_id`, and no other field.
    fn of(msg: &'static str, msg_id: u64) -> Self {
        Msg {
            msg,
            msg_id,
            from: None,
            to: None,
            token: None,
            arrives_ns: None,
            reason: None,
        }
    }
}

#[derive(Serialize)]
struct IntervalLine<'a> {
    kind: &'static str,
    authority: Authority,
    start_ns: i64,
    end_ns: i64,
    nodes: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    running: Option<bool>,
}

impl JsonlWriter {
    pub fn create(path: &Path, names: Vec<String>) -> io::Result<JsonlWriter> {
        Ok(JsonlWriter {
            out: Counted::new(BufWriter::with_capacity(1 << 16, File::create(path)?)),
            names,
            error: None,
        })
    }

    /// The bytes of the file so far.
    pub fn bytes_written(&self) -> u64 {
        self.out.bytes()
    }

    /// Flushes the file; the first write error, if any happened.
    pub fn close(mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }
}

/// Writes one line, keeping the first error (later lines are skipped after one).
fn write_line<T: Serialize>(
    out: &mut Counted<BufWriter<File>>,
    error: &mut Option<io::Error>,
    value: &T,
) {
    if error.is_some() {
        return;
    }
    let r = serde_json::to_writer(&mut *out, value)
        .map_err(io::Error::other)
        .and_then(|_| out.write_all(b"\n"));
    if let Err(e) = r {
        *error = Some(e);
    }
}

fn reason(r: DropReason) -> &'static str {
    match r {
        DropReason::Lost => "lost",
        DropReason::Cut => "cut",
        DropReason::Down => "down",
        DropReason::Backlog => "backlog",
        DropReason::Refused => "refused",
    }
}

/// A trace kind's name and its own fields, with nodes named by `name`: one arm per kind, so
/// that the match reads as the schema of a line (long because it is that whole schema, one
/// short arm per kind: split, it would no longer read as one).
fn fields<'a>(kind: TraceKind, name: impl Fn(NodeId) -> &'a str) -> (&'static str, Fields<'a>) {
    match kind {
        TraceKind::Start { restarted } => ("Start", Fields::Start { restarted }),
        TraceKind::Crash => ("Crash", Fields::None {}),
        TraceKind::PauseBegin { kind, stall, until } => (
            "PauseBegin",
            Fields::Pause {
                pause: pause_name(kind),
                stall,
                until_ns: until.ns(),
            },
        ),
        TraceKind::PauseEnd => ("PauseEnd", Fields::None {}),
        TraceKind::ThreadStallBegin { thread, until } => (
            "ThreadStallBegin",
            Fields::ThreadStall {
                thread: thread.name(),
                until_ns: Some(until.ns()),
            },
        ),
        TraceKind::ThreadStallEnd { thread } => (
            "ThreadStallEnd",
            Fields::ThreadStall {
                thread: thread.name(),
                until_ns: None,
            },
        ),
        TraceKind::DiskStallBegin { until } => (
            "DiskStallBegin",
            Fields::DiskStall {
                until_ns: until.ns(),
            },
        ),
        TraceKind::DiskStallEnd => ("DiskStallEnd", Fields::None {}),
        TraceKind::Durable { writes } => ("Durable", Fields::Durable { writes }),
        TraceKind::ClockStep { by } => ("ClockStep", Fields::Step { by_ns: by.ns() }),
        TraceKind::DriftChange { drift } => (
            "DriftChange",
            Fields::Drift {
                drift_ppm: drift.as_ppm(),
            },
        ),
        TraceKind::Send {
            to,
            kind,
            id,
            token,
            arrives,
        } => (
            "Send",
            Fields::Msg(Msg {
                to: Some(name(to)),
                token,
                arrives_ns: arrives.map(|t| t.ns()),
                ..Msg::of(kind, id)
            }),
        ),
        TraceKind::Deliver {
            from,
            kind,
            id,
            token,
        } => (
            "Deliver",
            Fields::Msg(Msg {
                from: Some(name(from)),
                token,
                ..Msg::of(kind, id)
            }),
        ),
        TraceKind::Drop {
            from,
            to,
            kind,
            id,
            reason: r,
        } => (
            "Drop",
            Fields::Msg(Msg {
                from: Some(name(from)),
                to: Some(name(to)),
                reason: Some(reason(r)),
                ..Msg::of(kind, id)
            }),
        ),
        TraceKind::Refused { to, kind, id } => (
            "Refused",
            Fields::Msg(Msg {
                to: Some(name(to)),
                ..Msg::of(kind, id)
            }),
        ),
        TraceKind::Grant { token, to, until } => (
            "Grant",
            Fields::Lease {
                token,
                to: Some(name(to)),
                until_ns: until.ns(),
            },
        ),
        TraceKind::Renewed { token, until } => (
            "Renewed",
            Fields::Lease {
                token,
                to: None,
                until_ns: until.ns(),
            },
        ),
        TraceKind::Rejected { write } => ("Rejected", Fields::Request { write }),
        TraceKind::Read {
            token,
            zombie,
            stale,
        } => (
            "Read",
            Fields::Effect {
                token,
                zombie,
                stale: Some(stale),
            },
        ),
        TraceKind::WriteSent { token, zombie } => (
            "WriteSent",
            Fields::Effect {
                token,
                zombie,
                stale: None,
            },
        ),
        TraceKind::WriteArrived {
            writer,
            token,
            applied,
            unsafe_write,
            duplicate,
        } => (
            "WriteArrived",
            Fields::Arrived {
                writer: name(writer),
                token,
                applied,
                unsafe_write,
                duplicate,
            },
        ),
    }
}

/// A pause kind as `trace.jsonl` names it.
fn pause_name(kind: PauseKind) -> &'static str {
    match kind {
        PauseKind::Gc => "Gc",
        PauseKind::VmFreeze => "VmFreeze",
    }
}

impl Observer for JsonlWriter {
    fn event(&mut self, e: &TraceEvent) {
        let names = &self.names;
        let name = |n: NodeId| names[n].as_str();
        let (kind, fields) = fields(e.kind, name);
        let line = Line {
            t_ns: e.t.ns(),
            node: name(e.node),
            kind,
            mono_ns: e.mono().ns(),
            wall_ns: e.wall().ns(),
            fields,
        };
        write_line(&mut self.out, &mut self.error, &line);
    }

    fn belief(&mut self, node: NodeId, authority: Authority, p: &Piece) {
        let names = &self.names;
        let line = IntervalLine {
            kind: "belief",
            authority,
            start_ns: p.start.ns(),
            end_ns: p.end.ns(),
            nodes: vec![names[node].as_str()],
            token: Some(p.token),
            running: Some(p.running),
        };
        write_line(&mut self.out, &mut self.error, &line);
    }

    fn overlap(&mut self, authority: Authority, o: &Overlap) {
        let names = &self.names;
        let line = IntervalLine {
            kind: "overlap",
            authority,
            start_ns: o.start.ns(),
            end_ns: o.end.ns(),
            nodes: o.nodes.iter().map(|&n| names[n].as_str()).collect(),
            token: None,
            running: None,
        };
        write_line(&mut self.out, &mut self.error, &line);
    }

    fn finish(&mut self, _end: SimTime) {}
}

fn is_false(b: &bool) -> bool {
    !*b
}
