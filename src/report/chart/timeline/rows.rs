//! A node's row: belief bars by token, a grantor's grants, pauses, crashes and cuts, instant
//! events, harm marks with their counts, and the overlap bands and labels over all rows.

use super::lanes::short_ns;
use super::layout::*;
use super::palette::*;
use crate::oracle::Piece;
use crate::report::chart::scene::{rgb, rgba, text_width, Anchor, Scene};
use crate::scenario::{PauseKind, Thread};
use crate::time::format_ns;
use crate::trace::timeline::{MarkKind, PauseSpan, Span, Timeline, BINS};
use plotters::style::RGBAColor;

/// Above this many overlaps, bands that touch at the chart's resolution are merged into one.
pub(crate) const MAX_SEPARATE_BANDS: usize = 400;

/// The overlaps of `rv` in the window as pixel bands (merged when there are very many), each
/// with the overlap's index, if it is one overlap, and its length.
pub(crate) fn overlap_bands(rv: &RunView, xm: &XMap) -> Vec<(i32, i32, Option<usize>, i64)> {
    let mut bands: Vec<(i32, i32, Option<usize>, i64)> = Vec::new();
    let merge = rv.tl.overlaps.len() > MAX_SEPARATE_BANDS;
    for (i, o) in rv.tl.overlaps.iter().enumerate() {
        let Some((a, b)) = xm.span(o.start.ns(), o.end.ns(), 2) else {
            continue;
        };
        let len = o.end.ns() - o.start.ns();
        match bands.last_mut() {
            Some(last) if merge && a <= last.1 => {
                last.1 = last.1.max(b);
                last.2 = None;
                last.3 += len;
            }
            _ => bands.push((a, b, Some(i), len)),
        }
    }
    bands
}

/// Overlap labels on the strip `[y0, y0 + 2 * 15)` above the bands.
pub(crate) fn draw_overlap_labels(
    sc: &mut Scene,
    bands: &[(i32, i32, Option<usize>, i64)],
    y0: i32,
    xm: &XMap,
    zoomed: Option<usize>,
) {
    let mut slots = Slots::new(2);
    for &(a, b, idx, len) in bands {
        let mut label = match idx {
            Some(_) => format_ns(len),
            None => format!("{} (merged)", format_ns(len)),
        };
        if idx.is_some() && idx == zoomed {
            label.push_str(" (zoomed below)");
        }
        let w = text_width(&label, 14.0, true);
        let c = (a + b) / 2;
        let la = (c - w / 2).min(xm.x1 - w).max(xm.x0);
        if let Some(line) = slots.take(la, la + w) {
            let y = y0 + 8 + 15 * line as i32;
            sc.text(la, y, label, 14.0, true, OVERLAP_TEXT, Anchor::Left);
        }
    }
}

/// The overlap bands (hatched, outlined in red) over `[y0, y1)`.
pub(crate) fn draw_bands(
    sc: &mut Scene,
    bands: &[(i32, i32, Option<usize>, i64)],
    y0: i32,
    y1: i32,
    fill: Rgb,
) {
    for &(xa, xb, _, _) in bands {
        draw_band(sc, xa, xb, y0, y1, fill);
    }
}

/// Draws node `node`'s row of `rv` with its top at `top`, and its label in the left margin.
pub(crate) fn draw_row(
    sc: &mut Scene,
    rv: &RunView,
    node: usize,
    xm: &XMap,
    top: i32,
    stripe: bool,
) {
    let tl = rv.tl;
    let lay = &rv.lays[node];
    let bottom = top + lay.height;
    if stripe {
        sc.rect(xm.x0, top, xm.x1, bottom, rgb(248, 248, 250));
    }
    sc.rect(xm.x0, bottom - 1, xm.x1, bottom, rgb(205, 205, 205));
    // The label at the row's centre.
    let yc = top + lay.height / 2;
    let name = fit_text(&tl.node_names[node], 16.0, true, xm.x0 - 24);
    // Under the name: the grantor's role, and the node's drift as run (when it has one).
    let drift =
        rv.s.drift_ppm
            .get(&tl.node_names[node])
            .copied()
            .filter(|&d| d != 0.0);
    let under: Vec<String> = match (rv.is_grantor(node), drift) {
        (true, Some(d)) => vec![format!("grantor, {d:+} ppm")],
        (true, None) => vec!["grantor".to_string()],
        (false, Some(d)) => vec![format!("drift {d:+} ppm")],
        (false, None) => vec![],
    };
    if under.is_empty() {
        sc.text(14, yc, name, 16.0, true, TEXT, Anchor::Left);
    } else {
        sc.text(14, yc - 9, name, 16.0, true, TEXT, Anchor::Left);
        let under = fit_text(&under.join(", "), 12.0, false, xm.x0 - 24);
        sc.text(14, yc + 10, under, 12.0, false, MUTED, Anchor::Left);
    }

    // Pauses and crashes shaded over the whole row (drawn first, under everything).
    let mut pauses: Vec<_> = tl.pauses.iter().filter(|p| p.span.node == node).collect();
    pauses.sort_by_key(|p| (p.span.start, p.span.end));
    let downs: Vec<_> = tl.down.iter().filter(|d| d.node == node).collect();
    let mut shade = SpanPainter::new(top, bottom - 1);
    for p in &pauses {
        if let Some((a, b)) = xm.span(p.span.start.ns(), p.span.end.ns(), 1) {
            shade.add(sc, a, b, pause_style(p).0);
        }
    }
    shade.flush(sc);
    let mut shade = SpanPainter::new(top, bottom - 1);
    for d in &downs {
        if let Some((a, b)) = xm.span(d.start.ns(), d.end.ns(), 1) {
            shade.add(sc, a, b, DOWN_SHADE);
        }
    }
    shade.flush(sc);

    // Beliefs (or, on a grantor's row, grants).
    let (by0, by1) = (top + lay.belief, top + lay.belief + BELIEF_H);
    fn pieces(v: &[Vec<Piece>], node: usize) -> &[Piece] {
        v.get(node).map_or(&[], Vec::as_slice)
    }
    draw_beliefs(sc, pieces(&rv.tl.beliefs, node), xm, by0, by1, true);
    if rv.is_grantor(node) {
        draw_grants(sc, rv, node, xm, by0, by1);
    }
    if let Some(off) = lay.read {
        let (ry0, ry1) = (top + off, top + off + READ_H);
        draw_beliefs(sc, pieces(&rv.tl.read_beliefs, node), xm, ry0, ry1, false);
    }

    // Harm marks.
    for &(k, off) in &lay.marks {
        draw_marks(sc, rv, node, k, xm, top + off + MARK_H / 2);
    }

    // The fault lane: pauses and crashes, named.
    if let Some(off) = lay.faults {
        draw_disk_stalls(sc, tl, node, xm, top + off);
        draw_fault_lane(sc, xm, &pauses, &downs, top + off);
        draw_stalls(sc, tl, node, xm, top + off);
    }

    // The cut lane.
    if let Some(off) = lay.cuts {
        draw_cut_lane(sc, tl, node, xm, top + off);
    }

    // Instant events: clock steps, drift changes, restarts.
    if let Some(off) = lay.events {
        draw_event_lane(sc, tl, node, xm, top + off, bottom);
    }
}

/// A pause's (shade over the row, colour in the fault lane).
fn pause_style(p: &PauseSpan) -> (RGBAColor, Rgb) {
    match (p.kind, p.stall) {
        (PauseKind::Gc, _) => (GC_SHADE, GC_RGB),
        (PauseKind::VmFreeze, false) => (VM_SHADE, VM_RGB),
        (PauseKind::VmFreeze, true) => (STALL_SHADE, STALL_RGB),
    }
}

/// Node `node`'s loop stalls in its fault lane from `fy0`, named where the name fits (a stall
/// does not stop the process: the row is not shaded).
fn draw_stalls(sc: &mut Scene, tl: &Timeline, node: usize, xm: &XMap, fy0: i32) {
    let fy1 = fy0 + FAULT_H;
    let mut labels: Vec<(i32, i32, String, Rgb)> = Vec::new();
    for thread in Thread::ALL {
        let c = match thread {
            Thread::Renewal => RENEWAL_STALL_RGB,
            Thread::Worker => WORKER_STALL_RGB,
        };
        let mut painter = SpanPainter::new(fy0, fy1);
        let stalls = tl.thread_stalls.iter();
        for s in stalls.filter(|s| s.span.node == node && s.thread == thread) {
            let Some((a, b)) = xm.span(s.span.start.ns(), s.span.end.ns(), 2) else {
                continue;
            };
            if painter.add(sc, a, b, solid(c)) {
                let len = format_ns(s.span.end.ns() - s.span.start.ns());
                let name = thread.name().to_lowercase();
                if let Some(l) = [format!("{name} loop stalled {len}"), name]
                    .into_iter()
                    .find(|l| text_width(l, 12.0, false) + 8 <= b - a)
                {
                    labels.push((a, b, l, c));
                }
            }
        }
        painter.flush(sc);
    }
    for (a, b, l, c) in labels {
        let y = (fy0 + fy1) / 2;
        sc.text((a + b) / 2, y, l, 12.0, false, ink_on(c), Anchor::Center);
    }
}

/// Node `node`'s disk stalls in its fault lane from `fy0`, named where the name fits, under
/// the pauses and crashes drawn after them (a crash in a disk stall shows).
fn draw_disk_stalls(sc: &mut Scene, tl: &Timeline, node: usize, xm: &XMap, fy0: i32) {
    let fy1 = fy0 + FAULT_H;
    let mut labels: Vec<(i32, i32, String, Rgb)> = Vec::new();
    let mut painter = SpanPainter::new(fy0, fy1);
    for s in tl.disk_stalls.iter().filter(|s| s.node == node) {
        let Some((a, b)) = xm.span(s.start.ns(), s.end.ns(), 2) else {
            continue;
        };
        if painter.add(sc, a, b, solid(DISK_STALL_RGB)) {
            let len = format_ns(s.end.ns() - s.start.ns());
            if let Some(l) = [format!("disk stalled {len}"), "disk".into()]
                .into_iter()
                .find(|l| text_width(l, 12.0, false) + 8 <= b - a)
            {
                labels.push((a, b, l, DISK_STALL_RGB));
            }
        }
    }
    painter.flush(sc);
    for (a, b, l, c) in labels {
        let y = (fy0 + fy1) / 2;
        sc.text((a + b) / 2, y, l, 12.0, false, ink_on(c), Anchor::Center);
    }
}

/// The fault lane from `fy0`: pauses and crashes as bars, named where the name fits.
fn draw_fault_lane(sc: &mut Scene, xm: &XMap, pauses: &[&PauseSpan], downs: &[&Span], fy0: i32) {
    let fy1 = fy0 + FAULT_H;
    let mut painter = SpanPainter::new(fy0, fy1);
    let mut labels: Vec<(i32, i32, String, Rgb)> = Vec::new();
    for p in pauses {
        let Some((a, b)) = xm.span(p.span.start.ns(), p.span.end.ns(), 2) else {
            continue;
        };
        let c = pause_style(p).1;
        if painter.add(sc, a, b, solid(c)) {
            let len = format_ns(p.span.end.ns() - p.span.start.ns());
            let names = match (p.kind, p.stall) {
                (PauseKind::Gc, _) => {
                    vec![format!("GC pause {len}"), format!("GC {len}"), "GC".into()]
                }
                (PauseKind::VmFreeze, false) => {
                    vec![format!("VM freeze {len}"), format!("VM {len}"), "VM".into()]
                }
                (PauseKind::VmFreeze, true) => vec![
                    format!("VM freeze {len}, clock stalled"),
                    format!("VM freeze {len}, stalled"),
                    format!("VM {len} stall"),
                    "stall".into(),
                ],
            };
            if let Some(l) = names
                .into_iter()
                .find(|l| text_width(l, 12.0, false) + 8 <= b - a)
            {
                labels.push((a, b, l, c));
            }
        }
    }
    painter.flush(sc);
    let mut painter = SpanPainter::new(fy0, fy1);
    for d in downs {
        let Some((a, b)) = xm.span(d.start.ns(), d.end.ns(), 2) else {
            continue;
        };
        if painter.add(sc, a, b, solid(DOWN_RGB)) {
            let len = format_ns(d.end.ns() - d.start.ns());
            if let Some(l) = [format!("crashed {len}"), "down".to_string()]
                .into_iter()
                .find(|l| text_width(l, 12.0, false) + 8 <= b - a)
            {
                labels.push((a, b, l, DOWN_RGB));
            }
        }
    }
    painter.flush(sc);
    for (a, b, l, c) in labels {
        sc.text(
            (a + b) / 2,
            (fy0 + fy1) / 2,
            l,
            12.0,
            false,
            ink_on(c),
            Anchor::Center,
        );
    }
}

/// The cut lane of `node` from `cy0`: its partitions and one-way cuts as bars. Cuts over the
/// same span on the same side are named together (`r1 → r2, r3 lost`); a name goes where it
/// fits and covers no other, else it is left out.
fn draw_cut_lane(sc: &mut Scene, tl: &Timeline, node: usize, xm: &XMap, cy0: i32) {
    let cy1 = cy0 + FAULT_H;
    // (xa, xb, one_way, mine, the nodes on the other side).
    let mut bars: Vec<(i32, i32, bool, bool, Vec<usize>)> = Vec::new();
    for c in &tl.cuts {
        let mine = c.cut_off.contains(&node);
        if !mine && !c.others.contains(&node) {
            continue;
        }
        let Some((a, b)) = xm.span(c.start.ns(), c.end.ns(), 2) else {
            continue;
        };
        let far = if mine { &c.others } else { &c.cut_off };
        match bars
            .iter_mut()
            .find(|x| (x.0, x.1, x.2, x.3) == (a, b, c.one_way, mine))
        {
            Some(bar) => {
                bar.4.extend(far);
                bar.4.sort_unstable();
                bar.4.dedup();
            }
            None => bars.push((a, b, c.one_way, mine, far.clone())),
        }
    }
    let names = |ids: &[usize]| {
        ids.iter()
            .map(|&i| tl.node_names[i].as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut taken: Vec<(i32, i32)> = Vec::new();
    for (a, b, _, mine, _) in &bars {
        let color = if *mine { CUT_RGB } else { CUT_OTHER_RGB };
        sc.rect(*a, cy0, *b, cy1, solid(color));
    }
    for (a, b, one_way, mine, far) in bars {
        let color = if mine { CUT_RGB } else { CUT_OTHER_RGB };
        let label = match (one_way, mine) {
            (true, true) => format!(
                "one-way cut: {} → {} lost",
                tl.node_names[node],
                names(&far)
            ),
            (true, false) => format!("one-way cut: nothing from {}", names(&far)),
            (false, _) => format!("partition: cut off from {}", names(&far)),
        };
        let short = if one_way { "one-way cut" } else { "partition" };
        let mid = (a + b) / 2;
        let place = [label, short.to_string()].into_iter().find_map(|l| {
            let w = text_width(&l, 12.0, false);
            let (la, lb) = (mid - w / 2 - 4, mid + w / 2 + 4);
            let free = taken.iter().all(|&(p, q)| lb <= p || la >= q);
            (w + 8 <= b - a && free).then_some((la, lb, l))
        });
        if let Some((la, lb, l)) = place {
            taken.push((la, lb));
            let ink = ink_on(color);
            sc.text(mid, (cy0 + cy1) / 2, l, 12.0, false, ink, Anchor::Center);
        }
    }
}

/// The event lane of `node` from `ey0`: clock steps, drift changes and restarts as markers with
/// lines down to `bottom`, each labelled right of its marker, or left of it near the plot's
/// right edge, or not at all where the label would cover the previous one.
fn draw_event_lane(sc: &mut Scene, tl: &Timeline, node: usize, xm: &XMap, ey0: i32, bottom: i32) {
    let ey1 = ey0 + EVENTS_H;
    let mut items: Vec<(i64, String, Rgb, bool)> = Vec::new();
    for &(t, n, by) in &tl.clock_steps {
        if n == node {
            items.push((
                t.ns(),
                format!("wall step {}", short_ns(by.ns() as f64)),
                STEP_RGB,
                true,
            ));
        }
    }
    for &(t, n, d) in &tl.drift_changes {
        if n == node {
            let ppm = d.as_ppm();
            let sign = if ppm > 0.0 { "+" } else { "" };
            items.push((t.ns(), format!("drift {sign}{ppm}ppm"), DRIFT_RGB, false));
        }
    }
    for &(t, n) in &tl.restarts {
        if n == node {
            items.push((t.ns(), "restart".to_string(), RESTART_RGB, false));
        }
    }
    items.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let mut last_x = i32::MIN;
    let mut label_end = i32::MIN;
    for (t, label, c, strong) in items {
        let Some(x) = xm.x(t) else { continue };
        if x == last_x {
            continue;
        }
        last_x = x;
        let line = solid(c);
        if strong {
            sc.rect(x - 1, ey1, x + 1, bottom - 1, line);
        } else {
            sc.dashed(vec![(x, ey1), (x, bottom - 1)], line, 1, 4, 3);
        }
        sc.polygon(vec![(x - 5, ey1 - 8), (x + 5, ey1 - 8), (x, ey1)], line);
        let w = text_width(&label, 12.0, true);
        // Right of the marker; left of it where that would pass the plot's right edge; left
        // out where it would cover the previous label.
        let lx = x + 7;
        let right_fits = lx + w <= xm.x1;
        if lx > label_end && right_fits {
            sc.text(
                lx,
                (ey0 + ey1) / 2 - 1,
                label,
                12.0,
                true,
                line,
                Anchor::Left,
            );
            label_end = lx + w + 6;
        } else if !right_fits && x - 7 - w > label_end.max(xm.x0) {
            sc.text(
                x - 7,
                (ey0 + ey1) / 2 - 1,
                label,
                12.0,
                true,
                line,
                Anchor::Right,
            );
            label_end = x + 6;
        }
    }
}

/// Belief bars, coloured by token; hatched and lighter while the node is not running; with
/// `labels`, the token written in the bar where it fits.
pub(crate) fn draw_beliefs(
    sc: &mut Scene,
    pieces: &[Piece],
    xm: &XMap,
    y0: i32,
    y1: i32,
    labels: bool,
) {
    let mut covered_to = i32::MIN;
    let mut pending: Option<(i32, i32, u64, bool)> = None;
    let flush = |sc: &mut Scene, p: Option<(i32, i32, u64, bool)>| {
        if let Some((a, b, token, running)) = p {
            let c = token_rgb(token);
            if running {
                sc.rect(a, y0, b, y1, solid(c));
            } else {
                let (r, g, bl) = c;
                sc.rect(a, y0, b, y1, rgba(r, g, bl, 0.28));
                if b - a >= 4 {
                    sc.hatch(a, y0, b, y1, 7, solid(c), 2);
                    sc.frame(a, y0, b - 1, y1 - 1, solid(c), 1);
                }
            }
        }
    };
    for p in pieces {
        let Some((a, b)) = xm.span(p.start.ns(), p.end.ns(), 1) else {
            continue;
        };
        if b <= covered_to {
            continue;
        }
        let a = a.max(covered_to);
        match &mut pending {
            Some((_, pb, tok, run)) if *tok == p.token && *run == p.running && a <= *pb => *pb = b,
            _ => {
                flush(sc, pending.take());
                pending = Some((a, b, p.token, p.running));
            }
        }
        covered_to = b;
    }
    flush(sc, pending);
    if !labels {
        return;
    }
    // Token labels, one per run of pieces with the same token: in its first piece wide enough,
    // preferring one where the node runs; over hatching, dark text on a white box.
    let mut i = 0;
    while i < pieces.len() {
        let mut j = i;
        while j + 1 < pieces.len()
            && pieces[j + 1].token == pieces[i].token
            && pieces[j + 1].start == pieces[j].end
        {
            j += 1;
        }
        let token = pieces[i].token;
        let label = format!("tok {token}");
        let need = text_width(&label, 14.0, true) + 12;
        let fits = |p: &&Piece| {
            xm.span(p.start.ns(), p.end.ns(), 1)
                .filter(|(a, b)| b - a >= need)
                .map(|(a, _)| (a, p.running))
        };
        let run = &pieces[i..=j];
        let place = run
            .iter()
            .filter(|p| p.running)
            .find_map(|p| fits(&p))
            .or_else(|| run.iter().find_map(|p| fits(&p)));
        let yc = (y0 + y1) / 2;
        match place {
            Some((a, true)) => {
                let ink = ink_on(token_rgb(token));
                sc.text(a + 6, yc, label, 14.0, true, ink, Anchor::Left);
            }
            Some((a, false)) => {
                sc.rect(
                    a + 3,
                    yc - 8,
                    a + need - 3,
                    yc + 8,
                    rgba(255, 255, 255, 0.9),
                );
                sc.text(a + 6, yc, label, 14.0, true, rgb(20, 20, 20), Anchor::Left);
            }
            None => {}
        }
        i = j + 1;
    }
}

/// A grantor's row: each grant from its start until its (last) expiry, coloured by token.
pub(crate) fn draw_grants(sc: &mut Scene, rv: &RunView, node: usize, xm: &XMap, y0: i32, y1: i32) {
    let mut covered_to = i32::MIN;
    let mut labels = Vec::new();
    for g in rv.tl.grants.iter().filter(|g| g.grantor == node) {
        let Some((a, b)) = xm.span(g.start.ns(), g.until.ns(), 1) else {
            continue;
        };
        if b <= covered_to {
            continue;
        }
        let c = token_rgb(g.token);
        sc.rect(a, y0 + 2, b, y1 - 2, solid(c));
        covered_to = b;
        let to = rv.tl.node_names.get(g.to).map_or("?", String::as_str);
        let until = format_ns(g.until.ns());
        if let Some(l) = [
            format!("granted tok {} to {to}, until {until}", g.token),
            format!("tok {} → {to}", g.token),
            format!("{}", g.token),
        ]
        .into_iter()
        .find(|l| text_width(l, 14.0, true) + 10 <= b - a)
        {
            labels.push((a + 6, l, ink_on(c)));
        }
    }
    for (x, l, ink) in labels {
        sc.text(x, (y0 + y1) / 2, l, 14.0, true, ink, Anchor::Left);
    }
}

/// Marks of kind `k` on `node`'s row, centred on `y`. Exact marks where the timeline kept all of
/// the window's (dense runs of them become bars with a mark at each end); otherwise the bins, as a
/// density strip (darker where denser), over the whole window so that one kind reads one way.
/// A run that holds more marks than it shows is labelled with its count (`×982`).
pub(crate) fn draw_marks(
    sc: &mut Scene,
    rv: &RunView,
    node: usize,
    k: MarkKind,
    xm: &XMap,
    y: i32,
) {
    let exact = rv.exact_until[k as usize].is_none_or(|until| xm.t1 <= until);
    let runs = if exact {
        draw_exact_marks(sc, rv, node, k, xm, y)
    } else {
        draw_binned_marks(sc, rv, node, k, xm, y)
    };
    draw_mark_counts(sc, &runs, k, xm, y);
}

/// A run of marks as drawn: its pixels, how many marks it holds, how many it shows.
pub(crate) struct MarkRun {
    pub xa_px: i32,
    pub xb_px: i32,
    pub count: u64,
    pub shown: u64,
}

/// The text of a mark count: `×982`.
pub(crate) fn count_label(count: u64) -> String {
    format!("×{count}")
}

/// Labels each run of `runs` that shows fewer marks than it holds with its count: right of the
/// run, or left of it when that would pass the plot's right edge. When a label would cover
/// another run or label of the lane, the lane gets one label with the total instead, right of
/// its last run or left of its first.
fn draw_mark_counts(sc: &mut Scene, runs: &[MarkRun], k: MarkKind, xm: &XMap, y: i32) {
    if runs.iter().all(|r| r.count <= r.shown) {
        return;
    }
    let mut taken: Vec<(i32, i32)> = runs.iter().map(|r| (r.xa_px - 4, r.xb_px + 4)).collect();
    let mut labels: Vec<(i32, String)> = Vec::new();
    for r in runs.iter().filter(|r| r.count > r.shown) {
        match place_count(&taken, r.xa_px, r.xb_px, r.count, xm) {
            Some((a, b, label)) => {
                taken.push((a - 3, b + 3));
                labels.push((a, label));
            }
            None => {
                labels.clear();
                break;
            }
        }
    }
    if labels.is_empty() {
        let taken: Vec<(i32, i32)> = runs.iter().map(|r| (r.xa_px - 4, r.xb_px + 4)).collect();
        let (first, last) = (&runs[0], &runs[runs.len() - 1]);
        let total = runs.iter().map(|r| r.count).sum();
        if let Some((a, _, label)) = place_count(&taken, first.xa_px, last.xb_px, total, xm) {
            labels.push((a, label));
        }
    }
    for (a, label) in labels {
        sc.text(a, y, label, COUNT_SIZE, true, mark_ink(k), Anchor::Left);
    }
}

const COUNT_SIZE: f64 = 10.0;

/// Where the count label of marks over `[xa, xb]` goes: right of them, else left, inside the
/// plot and clear of `taken`; its span and text.
fn place_count(
    taken: &[(i32, i32)],
    xa: i32,
    xb: i32,
    count: u64,
    xm: &XMap,
) -> Option<(i32, i32, String)> {
    let label = count_label(count);
    let w = text_width(&label, COUNT_SIZE, true);
    let free = |a: i32, b: i32| taken.iter().all(|&(p, q)| b <= p || a >= q);
    [(xb + 5, xb + 5 + w), (xa - 5 - w, xa - 5)]
        .into_iter()
        .find(|&(a, b)| a >= xm.x0 && b <= xm.x1 && free(a, b))
        .map(|(a, b)| (a, b, label))
}

/// The bins of `node`'s marks of kind `k` as a density strip; returns its runs of touching bins.
fn draw_binned_marks(
    sc: &mut Scene,
    rv: &RunView,
    node: usize,
    k: MarkKind,
    xm: &XMap,
    y: i32,
) -> Vec<MarkRun> {
    let (r, g, b) = mark_rgb(k);
    let max = rv.bin_max[k as usize].max(1);
    let Some(bins) = rv.tl.bins.get(node).and_then(|b| b.get(k as usize)) else {
        return Vec::new();
    };
    let mut painter = SpanPainter::new(y - 3, y + 4);
    // Runs of touching non-empty bins, to mark each run's start with the kind's shape.
    let mut runs: Vec<MarkRun> = Vec::new();
    for (i, &count) in bins.iter().enumerate().take(BINS) {
        if count == 0 {
            continue;
        }
        let (s, e) = rv.tl.bin_span(i);
        let Some((xa, xb)) = xm.span(s.ns(), e.ns(), 3) else {
            continue;
        };
        // Four levels on a log scale: a single mark still shows.
        let f = (count as f64).ln_1p() / (max as f64).ln_1p();
        let level = (f * 4.0).ceil().clamp(1.0, 4.0);
        painter.add(sc, xa, xb, rgba(r, g, b, 0.25 + 0.1875 * level));
        match runs.last_mut() {
            Some(run) if xa <= run.xb_px + 1 => {
                run.xb_px = run.xb_px.max(xb);
                run.count += count as u64;
            }
            _ => runs.push(MarkRun {
                xa_px: xa,
                xb_px: xb,
                count: count as u64,
                shown: 1,
            }),
        }
    }
    painter.flush(sc);
    if runs.len() <= 200 {
        for run in &runs {
            draw_mark(sc, k, run.xa_px + 1, y);
        }
    } else {
        runs.clear();
    }
    runs
}

/// `node`'s exact marks of kind `k` in the window, merged into cells of a few pixels; returns
/// the runs of occupied cells.
fn draw_exact_marks(
    sc: &mut Scene,
    rv: &RunView,
    node: usize,
    k: MarkKind,
    xm: &XMap,
    y: i32,
) -> Vec<MarkRun> {
    const CELL: i32 = 3;
    let (r, g, b) = mark_rgb(k);
    let w = (xm.x1 - xm.x0).max(1);
    let mut cells = vec![0u64; (w / CELL + 2) as usize];
    for m in rv.tl.marks.iter().filter(|m| m.node == node && m.kind == k) {
        if let Some(x) = xm.x(m.t.ns()) {
            cells[((x - xm.x0) / CELL) as usize] += 1;
        }
    }
    let mut runs = Vec::new();
    let mut i = 0;
    while i < cells.len() {
        if cells[i] == 0 {
            i += 1;
            continue;
        }
        // A run: occupied cells with gaps of at most one cell.
        let mut j = i;
        while j + 1 < cells.len() && (cells[j + 1] > 0 || (j + 2 < cells.len() && cells[j + 2] > 0))
        {
            j += 1;
        }
        let xa = xm.x0 + i as i32 * CELL + CELL / 2;
        let xb = xm.x0 + j as i32 * CELL + CELL / 2;
        let count: u64 = cells[i..=j].iter().sum();
        let shown = if j - i >= 3 {
            sc.rect(xa, y - 2, xb + 1, y + 3, rgba(r, g, b, 0.8));
            draw_mark(sc, k, xa, y);
            draw_mark(sc, k, xb, y);
            2
        } else {
            let occupied: Vec<usize> = (i..=j).filter(|&c| cells[c] > 0).collect();
            for &cell in &occupied {
                draw_mark(sc, k, xm.x0 + cell as i32 * CELL + CELL / 2, y);
            }
            occupied.len() as u64
        };
        runs.push(MarkRun {
            xa_px: xa - 4,
            xb_px: xb + 4,
            count,
            shown,
        });
        i = j + 1;
    }
    runs
}
