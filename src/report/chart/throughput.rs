//! The throughput chart: reads served and writes applied per ms of true time, one panel per run
//! (typically one per strategy on the same fault schedule), all on one time axis, so that where
//! each run stops serving and when it resumes line up.
//!
//! Each panel draws its run's [`Throughput`] as step lines, reads (filled lightly beneath),
//! writes applied safely, and unsafe writes (a stale holder's, applied out of token order) in
//! their own colour when the run has any, on a y axis from 0 in operations per ms with its own
//! top. The top fits the body of the data ([`body_top`]): a one-step spike (a backlog of
//! writes released at once) is clipped at the top and marked there with its value, instead of
//! flattening the rest of the panel. Bins narrower than
//! [`MIN_STEP_PX`] pixels are merged into steps of whole bins, the rate of a step being its
//! count over its length, so the number of shapes is bounded by the plot's width, never by the
//! number of bins. Layout only; [`super::scene`] renders it.

use super::labels::short_labels;
use super::scene::{rgb, rgba, text_width, Anchor, Scene};
use super::timeline::{
    axis_ticks, draw_axis, draw_grid, draw_legend, draw_title_line, legend_height, Swatch, XMap,
    AXIS_H, MUTED, RIGHT_MARGIN, TEXT, WIDTH,
};
use super::{ChartFiles, Ticks};
use crate::compare::OWN;
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
const UNSAFE_RGB: (u8, u8, u8) = (200, 0, 60);
const GRID: (u8, u8, u8) = (226, 226, 226);

/// The throughput chart of `runs` (label, throughput), one panel each in the order given, under
/// `title`.
pub fn throughput_chart(title: &str, runs: &[(String, &Throughput)]) -> ChartFiles {
    throughput_scene(title, runs).render()
}

/// One run's steps: each of `bins` whole bins (the last one may be shorter), as
/// `(start, end, reads per ms, safe writes per ms)` in ns of true time.
struct Steps {
    /// The step's length when whole.
    step_ns: i64,
    steps: Vec<(i64, i64, f64, f64)>,
    /// Unsafe writes per ms in each step.
    unsafe_rates: Vec<f64>,
    reads: u64,
    /// All writes applied, safe or not.
    writes: u64,
    unsafe_writes: u64,
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
        let mut unsafe_rates = Vec::with_capacity(steps.capacity());
        let (mut reads, mut writes, mut unsafe_writes) = (0u64, 0u64, 0u64);
        let chunks = tp.counts().chunks(k).zip(tp.unsafe_writes().chunks(k));
        for (g, (chunk, uchunk)) in chunks.enumerate() {
            let a = step_ns.saturating_mul(g as i64);
            let b = a.saturating_add(step_ns).min(end);
            let r: u64 = chunk.iter().map(|c| u64::from(c.0)).sum();
            let w: u64 = chunk.iter().map(|c| u64::from(c.1)).sum();
            let u: u64 = uchunk.iter().map(|&c| u64::from(c)).sum();
            reads += r;
            writes += w;
            unsafe_writes += u;
            let ms = (b - a).max(1) as f64 / NS_PER_MS as f64;
            steps.push((a, b, r as f64 / ms, (w - u) as f64 / ms));
            unsafe_rates.push(u as f64 / ms);
        }
        Steps {
            step_ns,
            steps,
            unsafe_rates,
            reads,
            writes,
            unsafe_writes,
        }
    }

    /// Every rate drawn: reads, safe and unsafe writes of each step.
    fn rates(&self) -> Vec<f64> {
        let rw = self.steps.iter().flat_map(|s| [s.2, s.3]);
        rw.chain(self.unsafe_rates.iter().copied()).collect()
    }
}

/// The top a panel's y axis must reach (before rounding to a 1-2-5 step): the body of
/// `rates`, their 99th percentile among the non-zero ones (nearest rank) with a quarter more
/// as headroom; or their maximum when that is at most 1.5 times the body, so that only a
/// spike well above the rest is clipped. 0 when every rate is 0.
pub fn body_top(rates: &[f64]) -> f64 {
    let mut nz: Vec<f64> = rates.iter().copied().filter(|&r| r > 0.0).collect();
    nz.sort_by(f64::total_cmp);
    let Some(&max) = nz.last() else {
        return 0.0;
    };
    let rank = (nz.len() * 99).div_ceil(100).max(1);
    let body = nz[rank - 1] * 1.25;
    if max <= body * 1.5 {
        max
    } else {
        body
    }
}

/// A rate as a clipped spike's mark writes it: whole from 10 up (`110`), else one decimal.
fn rate_label(v: f64) -> String {
    let s = if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    };
    format!("{} {Y_UNIT}", s.trim_end_matches(".0"))
}

/// The runs of consecutive steps whose rate is above `top`: `(first, last, highest rate)`.
fn clipped_runs(rates: &[f64], top: f64) -> Vec<(usize, usize, f64)> {
    let mut out: Vec<(usize, usize, f64)> = Vec::new();
    for (i, &r) in rates.iter().enumerate() {
        if r <= top {
            continue;
        }
        match out.last_mut() {
            Some(run) if run.1 + 1 == i => {
                run.1 = i;
                run.2 = run.2.max(r);
            }
            _ => out.push((i, i, r)),
        }
    }
    out
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
        .map(|s| YScale::for_max(body_top(&s.rates())))
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

    let items = legend(&steps);
    // Bins and steps are said once when every panel has the same, else in each heading.
    let mut kinds = steps
        .iter()
        .zip(runs)
        .map(|(s, (_, tp))| (tp.bin(), s.step_ns));
    let first = kinds.next();
    let shared = first.filter(|&f| kinds.all(|k| k == f));
    let labels: Vec<String> = runs.iter().map(|r| r.0.clone()).collect();
    let short = short_labels(&labels, OWN);
    let headings: Vec<Vec<Line>> = runs
        .iter()
        .zip(&short)
        .zip(&steps)
        .map(|(((_, tp), label), st)| {
            let mut figures = format!("{} reads served, {} writes applied", st.reads, st.writes);
            if st.unsafe_writes > 0 {
                figures.push_str(&format!(" ({} unsafe)", st.unsafe_writes));
            }
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
    if any_clipped(&steps, &scales) {
        sub.push_str(" A clipped spike shows its peak at the top.");
    }
    draw_title_line(&mut sc, 56, 16.0, &[(sub, MUTED, false)], width - 14);

    let ticks = axis_ticks(&xm);
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

/// The legend: reads and writes, and unsafe writes when some run has them.
fn legend(steps: &[Steps]) -> Vec<(Swatch, String)> {
    let mut items = vec![
        (Swatch::Line(READ_RGB, false), "reads served".to_string()),
        (
            Swatch::Line(WRITE_RGB, false),
            "writes applied safely (not fenced, not duplicates)".to_string(),
        ),
    ];
    if steps.iter().any(|s| s.unsafe_writes > 0) {
        items.push((
            Swatch::Line(UNSAFE_RGB, false),
            "unsafe writes applied (a stale holder's, out of token order)".to_string(),
        ));
    }
    items
}

/// Whether some panel clips a spike above its axis.
fn any_clipped(steps: &[Steps], scales: &[YScale]) -> bool {
    steps
        .iter()
        .zip(scales)
        .any(|(s, sc)| s.rates().iter().any(|&r| r > sc.top()))
}

/// Marks, at the top of a panel, each run of steps of `rates` clipped above `scale`: a small
/// triangle in `colour` over its middle with its highest rate beside it.
fn draw_clipped(
    sc: &mut Scene,
    xm: &XMap,
    steps: &[(i64, i64, f64, f64)],
    rates: &[f64],
    scale: YScale,
    colour: (u8, u8, u8),
    top: i32,
) {
    let (r, g, b) = colour;
    for (first, last, peak) in clipped_runs(rates, scale.top()) {
        let x = ((xm.xf(steps[first].0) + xm.xf(steps[last].1)) / 2.0).round() as i32;
        sc.polygon(
            vec![(x - 6, top + 9), (x + 6, top + 9), (x, top)],
            rgb(r, g, b),
        );
        let label = rate_label(peak);
        let w = text_width(&label, LABEL_SIZE, true);
        let (tx, anchor) = if x + 10 + w <= xm.x1 {
            (x + 10, Anchor::Left)
        } else {
            (x - 10, Anchor::Right)
        };
        sc.rect(
            if anchor == Anchor::Left {
                tx - 2
            } else {
                tx - w - 2
            },
            top + 1,
            if anchor == Anchor::Left {
                tx + w + 2
            } else {
                tx + 2
            },
            top + 17,
            rgba(255, 255, 255, 0.85),
        );
        sc.text(tx, top + 9, label, LABEL_SIZE, true, rgb(r, g, b), anchor);
    }
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
    if st.unsafe_writes > 0 {
        let (r, g, b) = UNSAFE_RGB;
        let with: Vec<(i64, i64, f64, f64)> = st
            .steps
            .iter()
            .zip(&st.unsafe_rates)
            .map(|(s, &u)| (s.0, s.1, u, 0.0))
            .collect();
        sc.line(step_line(&with, |s| s.2, xm, y_of), rgb(r, g, b), 2);
        draw_clipped(sc, xm, &st.steps, &st.unsafe_rates, scale, UNSAFE_RGB, top);
    }
    let reads: Vec<f64> = st.steps.iter().map(|s| s.2).collect();
    let writes: Vec<f64> = st.steps.iter().map(|s| s.3).collect();
    draw_clipped(sc, xm, &st.steps, &reads, scale, READ_RGB, top);
    draw_clipped(sc, xm, &st.steps, &writes, scale, WRITE_RGB, top);
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
                clock: crate::trace::Readings::Given {
                    mono: LocalTime::from_ns(0),
                    wall: LocalTime::from_ns(0),
                },
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
    fn the_y_axis_fits_the_body_not_a_one_step_spike() {
        // 100 steps at 2 ops/ms and one backlog step at 110: 101 non-zero rates, the 99th
        // percentile by nearest rank is the 100th smallest (ceil(101 * 0.99) = 100), a 2; with
        // a quarter of headroom 2.5, and 110 > 1.5 * 2.5: clipped. The scale tops 2.5 with
        // steps of 1: 0 to 3.
        let mut rates = vec![2.0; 100];
        rates.push(110.0);
        rates.extend([0.0; 50]); // idle steps do not count
        assert_eq!(body_top(&rates), 2.5);
        let s = YScale::for_max(body_top(&rates));
        assert_eq!(s.top(), 3.0);
        assert_eq!(clipped_runs(&rates, s.top()), [(100, 100, 110.0)]);
        assert_eq!(rate_label(110.0), "110 ops/ms");
        assert_eq!(rate_label(4.0), "4 ops/ms");
        // Rates 1 .. 10, no spike: the body (the 10th of 10, 10, times 1.25) is above the
        // peak, so the peak (10) sets the top and nothing is clipped.
        let even: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(body_top(&even), 10.0);
        assert_eq!(body_top(&[0.0, 0.0]), 0.0);
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
