//! The throughput chart: reads served and writes applied per ms of true time, one panel per run
//! (typically one per strategy on the same fault schedule), all on one time axis, so that where
//! each run stops serving and when it resumes line up.
//!
//! Each panel draws its run's [`Throughput`] as two step lines, reads (filled lightly beneath)
//! and writes, on a y axis from 0 in operations per ms with its own top. Bins narrower than
//! [`MIN_STEP_PX`] pixels are merged into steps of whole bins, the rate of a step being its
//! count over its length, so the number of shapes is bounded by the plot's width, never by the
//! number of bins. Layout only; [`super::scene`] renders it.

use super::scene::{rgb, rgba, text_width, Anchor, Scene};
use super::timeline::{
    draw_axis, draw_grid, draw_legend, draw_title_line, legend_height, Swatch, XMap, AXIS_H, MUTED,
    RIGHT_MARGIN, TEXT, WIDTH,
};
use super::{time_ticks, ChartFiles, Ticks, TIME_UNITS};
use crate::time::{Dur, NS_PER_MS};
use crate::trace::throughput::Throughput;
use plotters::style::RGBAColor;

/// The narrowest step drawn, in pixels: finer bins are merged.
pub const MIN_STEP_PX: i64 = 3;

const TITLE_H: i32 = 78;
const HEADING_LINE_H: i32 = 24;
/// The most lines a panel's label takes (the last cut with an ellipsis).
const MAX_LABEL_LINES: usize = 2;
const PLOT_H: i32 = 150;
const PANEL_GAP: i32 = 18;
const LABEL_SIZE: f64 = 14.0;
/// The unit of the y axes.
const Y_UNIT: &str = "ops/ms";
const READ_RGB: (u8, u8, u8) = (31, 100, 180);
const WRITE_RGB: (u8, u8, u8) = (222, 110, 0);
const GRID: (u8, u8, u8) = (226, 226, 226);

/// The throughput chart of `runs` (label, throughput), one panel each in the order given, under
/// `title`.
pub fn throughput_chart(title: &str, runs: &[(String, &Throughput)]) -> ChartFiles {
    throughput_scene(title, runs).render()
}

/// One run's steps: each of `bins` whole bins (the last one may be shorter), as
/// `(start, end, reads per ms, writes per ms)` in ns of true time.
struct Steps {
    /// The step's length when whole.
    step_ns: i64,
    steps: Vec<(i64, i64, f64, f64)>,
    reads: u64,
    writes: u64,
}

impl Steps {
    fn of(tp: &Throughput, plot_w: i32, t1: i64) -> Steps {
        let bin_ns = tp.bin().ns();
        // Bins per step: the least of 1, 2, 5, 10, 20, ... that spans at least MIN_STEP_PX
        // pixels of [0, t1], that is k * bin_ns * plot_w / t1 >= MIN_STEP_PX.
        let need = t1.max(1) as i128 * MIN_STEP_PX as i128;
        let per_bin = bin_ns as i128 * plot_w.max(1) as i128;
        let least = (need + per_bin - 1) / per_bin;
        let k = (0..=18u32)
            .flat_map(|exp| [1i128, 2, 5].map(|m| m * 10i128.pow(exp)))
            .find(|&k| k >= least)
            .unwrap_or(least)
            .clamp(1, tp.len().max(1) as i128) as usize;
        let step_ns = bin_ns.saturating_mul(k as i64);
        let end = bin_ns.saturating_mul(tp.len() as i64);
        let mut steps = Vec::with_capacity(tp.len().div_ceil(k));
        let (mut reads, mut writes) = (0u64, 0u64);
        for (g, chunk) in tp.counts().chunks(k).enumerate() {
            let a = step_ns.saturating_mul(g as i64);
            let b = a.saturating_add(step_ns).min(end);
            let r: u64 = chunk.iter().map(|c| u64::from(c.0)).sum();
            let w: u64 = chunk.iter().map(|c| u64::from(c.1)).sum();
            reads += r;
            writes += w;
            let ms = (b - a).max(1) as f64 / NS_PER_MS as f64;
            steps.push((a, b, r as f64 / ms, w as f64 / ms));
        }
        Steps {
            step_ns,
            steps,
            reads,
            writes,
        }
    }

    fn max_rate(&self) -> f64 {
        self.steps.iter().map(|s| s.2.max(s.3)).fold(0.0, f64::max)
    }
}

/// A y axis from 0: `n` steps of `m * 10^e` ops/ms, `m` in 1, 2, 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct YScale {
    m: i64,
    e: i32,
    n: i64,
}

impl YScale {
    /// The scale whose top is the least multiple of a 1-2-5 step at or above `max`, in at most
    /// four steps; 0 to 1 when there is nothing.
    fn for_max(max: f64) -> YScale {
        if max.is_nan() || max <= 0.0 {
            return YScale { m: 1, e: 0, n: 1 };
        }
        for e in -9..=12 {
            for m in [1, 2, 5] {
                let step = m as f64 * 10f64.powi(e);
                if max <= 4.0 * step {
                    let n = ((max / step).ceil() as i64).max(1);
                    return YScale { m, e, n };
                }
            }
        }
        YScale { m: 1, e: 13, n: 4 }
    }

    fn step(&self) -> f64 {
        self.m as f64 * 10f64.powi(self.e)
    }

    fn top(&self) -> f64 {
        self.n as f64 * self.step()
    }

    /// The label of tick `k`, exact (decimals from the step's exponent).
    fn label(&self, k: i64) -> String {
        let v = k * self.m;
        if v == 0 {
            return "0".to_string();
        }
        if self.e >= 0 {
            return (v * 10i64.pow(self.e as u32)).to_string();
        }
        let d = (-self.e) as usize;
        let p = 10i64.pow(d as u32);
        format!("{}.{:0d$}", v / p, v % p)
    }
}

/// Ticks for the window of `xm` in ms, leaving room for their labels.
fn ms_ticks(xm: &XMap) -> Ticks {
    let unit = TIME_UNITS[1];
    let w = (xm.x1 - xm.x0).max(1);
    let mut max = 16usize;
    loop {
        let mut t = time_ticks(xm.t0, xm.t1, max);
        let d = unit.decimals_for(t.step_ns);
        t.labels = t.at.iter().map(|&x| unit.format(x, d)).collect();
        t.unit = unit;
        let widest = t
            .labels
            .iter()
            .map(|l| text_width(l, LABEL_SIZE, false))
            .max()
            .unwrap_or(0);
        if max <= 2 || (widest + 24) * t.at.len() as i32 <= w {
            return t;
        }
        max -= 1;
    }
}

/// A step line of `rate` over `steps`, in pixels: vertical at each change.
fn step_line(
    steps: &[(i64, i64, f64, f64)],
    rate: impl Fn(&(i64, i64, f64, f64)) -> f64,
    xm: &XMap,
    y_of: impl Fn(f64) -> i32,
) -> Vec<(i32, i32)> {
    let mut pts: Vec<(i32, i32)> = Vec::new();
    let mut push = |p: (i32, i32)| {
        if pts.last() != Some(&p) {
            pts.push(p);
        }
    };
    let mut prev: Option<i32> = None;
    for s in steps {
        let x = xm.xf(s.0).round() as i32;
        let y = y_of(rate(s));
        if let Some(p) = prev {
            if p != y {
                push((x, p));
                push((x, y));
            }
        } else {
            push((x, y));
        }
        prev = Some(y);
    }
    if let (Some(p), Some(last)) = (prev, steps.last()) {
        push((xm.xf(last.1).round() as i32, p));
    }
    pts
}

/// `bins of 1ms`, or `bins of 1ms, averaged over steps of 200ms` when they are merged.
fn bins_and_steps(bin: Dur, step_ns: i64) -> String {
    if step_ns == bin.ns() {
        format!("bins of {bin}")
    } else {
        format!(
            "bins of {bin}, averaged over steps of {}",
            Dur::from_ns(step_ns)
        )
    }
}

/// A line of a heading: its parts, each with its colour, bold or not.
type Line = Vec<(String, RGBAColor, bool)>;

/// A panel's heading in lines of at most `max_w` pixels: `label` in bold, broken at spaces onto
/// at most [`MAX_LABEL_LINES`] lines, then `figures` after it, on a line of their own if the
/// last has no room for them.
fn heading(label: &str, figures: &str, max_w: i32) -> Vec<Line> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in label.split(' ') {
        let candidate = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if cur.is_empty()
            || text_width(&candidate, 18.0, true) <= max_w
            || lines.len() + 1 == MAX_LABEL_LINES
        {
            cur = candidate;
        } else {
            lines.push(std::mem::replace(&mut cur, word.to_string()));
        }
    }
    lines.push(cur);
    let mut out: Vec<Line> = lines.into_iter().map(|l| vec![(l, TEXT, true)]).collect();
    let last = out.last_mut().expect("at least one line");
    let used = text_width(&last[0].0, 18.0, true);
    let gap = "   ";
    if used + text_width(&format!("{gap}{figures}"), 18.0, false) <= max_w {
        last.push((format!("{gap}{figures}"), MUTED, false));
    } else {
        out.push(vec![(figures.to_string(), MUTED, false)]);
    }
    out
}

/// The height of a heading of `lines`.
fn heading_height(lines: &[Line]) -> i32 {
    10 + HEADING_LINE_H * lines.len() as i32
}

/// The chart's display list (what [`throughput_chart`] renders).
pub fn throughput_scene(title: &str, runs: &[(String, &Throughput)]) -> Scene {
    super::font::ensure_registered();
    let width = WIDTH as i32;
    let t1 = runs
        .iter()
        .map(|(_, tp)| tp.bin().ns().saturating_mul(tp.len() as i64))
        .max()
        .unwrap_or(0)
        .max(1);
    // The left margin fits the y unit and the widest tick label of any panel, which depend on
    // the steps; these are merged for a plot narrower than it will be (a margin of 200 px), so
    // that they are at least as wide as asked.
    let x1 = width - RIGHT_MARGIN;
    let provisional_w = x1 - 200;
    let steps: Vec<Steps> = runs
        .iter()
        .map(|(_, tp)| Steps::of(tp, provisional_w, t1))
        .collect();
    let scales: Vec<YScale> = steps
        .iter()
        .map(|s| YScale::for_max(s.max_rate()))
        .collect();
    let widest = scales
        .iter()
        .flat_map(|sc| (0..=sc.n).map(move |k| sc.label(k)))
        .map(|l| text_width(&l, LABEL_SIZE, false))
        .max()
        .unwrap_or(0);
    let unit_w = text_width(Y_UNIT, LABEL_SIZE, true);
    let x0 = 14 + unit_w + 16 + widest + 10;
    let xm = XMap { x0, x1, t0: 0, t1 };

    let items = vec![
        (Swatch::Line(READ_RGB, false), "reads served".to_string()),
        (
            Swatch::Line(WRITE_RGB, false),
            "writes applied (not fenced, not duplicates)".to_string(),
        ),
    ];
    // Bins and steps are said once when every panel has the same, else in each heading.
    let mut kinds = steps
        .iter()
        .zip(runs)
        .map(|(s, (_, tp))| (tp.bin(), s.step_ns));
    let first = kinds.next();
    let shared = first.filter(|&f| kinds.all(|k| k == f));
    let headings: Vec<Vec<Line>> = runs
        .iter()
        .zip(&steps)
        .map(|((label, tp), st)| {
            let mut figures = format!("{} reads served, {} writes applied", st.reads, st.writes);
            if shared.is_none() {
                figures.push_str(&format!("; {}", bins_and_steps(tp.bin(), st.step_ns)));
            }
            heading(label, &figures, width - 28)
        })
        .collect();
    let panels: i32 = headings
        .iter()
        .map(|h| heading_height(h) + PLOT_H + PANEL_GAP)
        .sum();
    let height = TITLE_H + panels + AXIS_H + 8 + legend_height(&items, width);
    let mut sc = Scene::new(WIDTH, height as u32);

    draw_title_line(
        &mut sc,
        26,
        24.0,
        &[(title.to_string(), TEXT, true)],
        width - 14,
    );
    let mut sub = match runs.len() {
        1 => "Reads served and writes applied per ms of true time, summed over all nodes."
            .to_string(),
        n => format!(
            "Reads served and writes applied per ms of true time, summed over all nodes; {n} runs \
             of the same fault schedule."
        ),
    };
    if let Some((bin, step)) = shared {
        let b = bins_and_steps(bin, step);
        sub.push_str(&format!(" {}{}.", b[..1].to_uppercase(), &b[1..]));
    }
    draw_title_line(&mut sc, 56, 16.0, &[(sub, MUTED, false)], width - 14);

    let ticks = ms_ticks(&xm);
    let mut y = TITLE_H;
    for ((st, scale), lines) in steps.iter().zip(&scales).zip(&headings) {
        sc.rect(14, y, width - 14, y + 2, rgb(150, 150, 150));
        for (i, line) in lines.iter().enumerate() {
            draw_title_line(
                &mut sc,
                y + 17 + i as i32 * HEADING_LINE_H,
                18.0,
                line,
                width - 14,
            );
        }
        y += heading_height(lines);
        let (top, bottom) = (y + 6, y + PLOT_H);
        draw_panel(&mut sc, &xm, &ticks, st, *scale, top, bottom);
        y = bottom + PANEL_GAP;
    }
    let axis_y = if runs.is_empty() { y } else { y - PANEL_GAP };
    let y = draw_axis(&mut sc, &xm, &ticks, axis_y);
    draw_legend(&mut sc, &items, width, y + 8);
    sc
}

/// One run's plot between `top` and `bottom`: grid, y axis in ops/ms, reads and writes.
fn draw_panel(
    sc: &mut Scene,
    xm: &XMap,
    ticks: &Ticks,
    st: &Steps,
    scale: YScale,
    top: i32,
    bottom: i32,
) {
    let (r, g, b) = GRID;
    draw_grid(sc, xm, ticks, top, bottom);
    let y_of = |v: f64| -> i32 {
        let f = (v / scale.top()).clamp(0.0, 1.0);
        bottom - (f * (bottom - top) as f64).round() as i32
    };
    for k in 0..=scale.n {
        let yk = y_of(k as f64 * scale.step());
        if k > 0 {
            sc.rect(xm.x0, yk, xm.x1 + 1, yk + 1, rgb(r, g, b));
        }
        sc.rect(xm.x0 - 5, yk, xm.x0, yk + 1, rgb(60, 60, 60));
        sc.text(
            xm.x0 - 8,
            yk,
            scale.label(k),
            LABEL_SIZE,
            false,
            TEXT,
            Anchor::Right,
        );
    }
    sc.text(
        14,
        (top + bottom) / 2,
        Y_UNIT,
        LABEL_SIZE,
        true,
        TEXT,
        Anchor::Left,
    );
    sc.rect(xm.x0 - 1, top, xm.x0, bottom + 1, rgb(60, 60, 60));
    let reads = step_line(&st.steps, |s| s.2, xm, y_of);
    if let (Some(&first), Some(&last)) = (reads.first(), reads.last()) {
        let mut area = reads.clone();
        area.push((last.0, bottom));
        area.push((first.0, bottom));
        let (r, g, b) = READ_RGB;
        sc.polygon(area, rgba(r, g, b, 0.14));
    }
    let (r, g, b) = READ_RGB;
    sc.line(reads, rgb(r, g, b), 2);
    let (r, g, b) = WRITE_RGB;
    sc.line(step_line(&st.steps, |s| s.3, xm, y_of), rgb(r, g, b), 2);
    sc.rect(xm.x0, bottom, xm.x1 + 1, bottom + 1, rgb(60, 60, 60));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{LocalTime, SimTime};
    use crate::trace::{Observer, TraceEvent, TraceKind};

    /// A run of `end_ms` in 1 ms bins with one read at each of `reads` (ms).
    fn run(end_ms: i64, reads: &[i64]) -> Throughput {
        let mut tp = Throughput::new(Dur::from_ms(1));
        for &ms in reads {
            tp.event(&TraceEvent {
                t: SimTime::from_ns(ms * NS_PER_MS),
                node: 0,
                mono: LocalTime::from_ns(0),
                wall: LocalTime::from_ns(0),
                kind: TraceKind::Read {
                    token: 1,
                    zombie: false,
                    stale: false,
                },
            });
        }
        tp.finish(SimTime::from_ns(end_ms * NS_PER_MS));
        tp
    }

    #[test]
    fn fine_bins_are_merged_into_round_steps_of_whole_bins() {
        // 2000 bins over 1000 px: 0.5 px each; 3 px need 6 bins, rounded up to 10 (10 ms).
        let tp = run(2_000, &[0, 9, 10, 1_999]);
        let st = Steps::of(&tp, 1_000, 2_000 * NS_PER_MS);
        assert_eq!(st.step_ns, 10 * NS_PER_MS);
        assert_eq!(st.steps.len(), 200);
        // Reads at 0 and 9 ms are in step 0 ([0, 10) ms): 2 in 10 ms, 0.2 per ms; 10 ms in
        // step 1; 1999 ms in the last, step 199.
        assert_eq!(st.steps[0], (0, 10 * NS_PER_MS, 0.2, 0.0));
        assert_eq!(st.steps[1].2, 0.1);
        assert_eq!(st.steps[2].2, 0.0);
        assert_eq!(st.steps[199].2, 0.1);
        assert_eq!((st.reads, st.writes), (4, 0));
        // Wide enough for 3 px a bin (6000 px), bins are drawn as they are: 1 read per ms.
        let st = Steps::of(&tp, 6_000, 2_000 * NS_PER_MS);
        assert_eq!((st.step_ns, st.steps.len()), (NS_PER_MS, 2_000));
        assert_eq!(st.steps[9].2, 1.0);
    }

    #[test]
    fn a_last_short_step_is_a_rate_over_its_own_length() {
        // 1003 bins of 1 ms over 1000 px: 3 px need 3.009 bins, so 4, rounded up to 5. The
        // last step is [1000, 1003) ms, 3 ms long: one read in it is 1/3 per ms.
        let tp = run(1_003, &[1_001]);
        let st = Steps::of(&tp, 1_000, 1_003 * NS_PER_MS);
        assert_eq!(st.step_ns, 5 * NS_PER_MS);
        assert_eq!(st.steps.len(), 201);
        let last = *st.steps.last().unwrap();
        assert_eq!(last, (1_000 * NS_PER_MS, 1_003 * NS_PER_MS, 1.0 / 3.0, 0.0));
    }

    #[test]
    fn the_y_scale_starts_at_zero_and_tops_the_peak_with_a_round_step() {
        let s = YScale::for_max(0.043);
        assert_eq!((s.m, s.e, s.n), (2, -2, 3));
        assert_eq!(
            (0..=s.n).map(|k| s.label(k)).collect::<Vec<_>>(),
            ["0", "0.02", "0.04", "0.06"]
        );
        let s = YScale::for_max(3.0);
        assert_eq!((s.m, s.e, s.n), (1, 0, 3));
        let s = YScale::for_max(17.0);
        assert_eq!((s.label(s.n), s.n), ("20".to_string(), 4));
        assert_eq!(YScale::for_max(0.0), YScale { m: 1, e: 0, n: 1 });
    }
}
