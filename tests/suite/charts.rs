//! Timeline and comparison charts: what the SVG holds, that the PNG decodes at the chart's size,
//! that a chart is byte-identical run to run, and when the zoom panel appears.
//!
//! Set `LEASESIM_CHART_DIR=/some/dir` to have the tests write every chart they draw there, to look
//! at them.

use crate::common::{cut_off_text, scenario};
use leasesim::report::chart::compare::{compare_chart, compare_scene, SHARED_CLOCKS_NOTE};
use leasesim::report::chart::scene::{text_width, Anchor, Scene, Shape};
use leasesim::report::chart::throughput::{throughput_chart, throughput_scene};
use leasesim::report::chart::timeline::{
    timeline_chart, timeline_scene, OVERLAP_FILL, WIDTH, ZOOM_HEADING,
};
use leasesim::report::chart::ChartFiles;
use leasesim::scenario::{library, StrategySpec};
use leasesim::time::Dur;
use leasesim::trace::throughput::Throughput;
use leasesim::trace::timeline::{MarkKind, Timeline};
use leasesim::{Scenario, Summary};

fn recorded(name: &str, s: &Scenario) -> (Timeline, Summary) {
    let (outcome, tl) = leasesim::run_recorded(name, s)
        .unwrap_or_else(|e| panic!("test scenario {name} does not build:\n{e}"));
    (tl, outcome.summary)
}

fn bundled(name: &str) -> Scenario {
    scenario(library::text(name).unwrap_or_else(|| panic!("no bundled scenario {name}")))
}

/// The cut-off holder story of `strategies.rs`.
fn cut_off(strategy: &str, h_ppm: f64, extra_faults: &str) -> Scenario {
    scenario(&cut_off_text(strategy, h_ppm, extra_faults))
}

/// Q4 under CachedBool with a second 12 s GC pause, on `b` once it holds: two overlaps.
fn two_pauses() -> Scenario {
    scenario(
        r#"Scenario(
            seed: 7,
            duration: "80s",
            lease: (duration: "10s", renew_every: "3s"),
            strategy: CachedBool,
            nodes: [
                (name: "lock", role: Grantor),
                (name: "a", role: Contender),
                (name: "b", role: Contender, start: "100ms"),
            ],
            network: (delay: Fixed("1ms")),
            workload: (reads_per_second: 100.0, writes_per_second: 10.0),
            faults: [
                Pause(node: "a", at: "20s", duration: "12s", kind: Gc),
                Pause(node: "b", at: "50s", duration: "12s", kind: Gc),
            ],
        )"#,
    )
}

/// Writes `files` under `$LEASESIM_CHART_DIR` as `name.svg` and `name.png`, if it is set.
fn keep(name: &str, files: &ChartFiles) {
    if let Ok(dir) = std::env::var("LEASESIM_CHART_DIR") {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).expect("chart dir");
        std::fs::write(dir.join(format!("{name}.svg")), &files.svg).expect("write svg");
        std::fs::write(dir.join(format!("{name}.png")), &files.png).expect("write png");
    }
}

/// The PNG's size, decoding it whole.
fn png_size(png: &[u8]) -> (u32, u32) {
    let img = image::load_from_memory_with_format(png, image::ImageFormat::Png)
        .unwrap_or_else(|e| panic!("the chart's PNG does not decode: {e}"));
    (img.width(), img.height())
}

/// The SVG's declared size.
fn svg_size(svg: &str) -> (u32, u32) {
    let attr = |name: &str| -> u32 {
        let key = format!("{name}=\"");
        let at = svg
            .find(&key)
            .unwrap_or_else(|| panic!("svg has no {name}"))
            + key.len();
        svg[at..]
            .split('"')
            .next()
            .and_then(|v| v.parse().ok())
            .expect("a number")
    };
    (attr("width"), attr("height"))
}

/// The texts of the SVG, trimmed.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim())
        })
        .collect()
}

fn bands(svg: &str) -> usize {
    svg.matches(&format!("fill=\"{OVERLAP_FILL}\"")).count()
}

#[test]
fn timeline_svg_names_the_run_and_its_nodes_and_bands_each_overlap_once() {
    let (tl, s) = recorded("two-pauses", &two_pauses());
    assert_eq!(
        s.overlap.count, 2,
        "the story has two overlaps: {:?}",
        s.overlap
    );
    let files = timeline_chart(&tl, &s);
    keep("two-pauses", &files);
    let texts = texts(&files.svg);
    assert!(
        texts.iter().any(|t| t.contains("two-pauses")),
        "scenario name missing"
    );
    assert!(texts.contains(&"OVERLAP"), "verdict missing");
    for name in &tl.node_names {
        assert!(
            texts.contains(&name.as_str()),
            "node {name} has no label: {texts:?}"
        );
    }
    assert_eq!(bands(&files.svg), 2, "one band per overlap interval");
    // A run without an overlap has no band at all.
    let (tl, s) = recorded("q4-gc-pause-two-sided", &bundled("q4-gc-pause-two-sided"));
    assert_eq!(s.overlap.count, 0);
    let files = timeline_chart(&tl, &s);
    keep("q4-two-sided", &files);
    assert_eq!(bands(&files.svg), 0);
    assert!(files.svg.contains("SAFE"));
}

#[test]
fn timeline_png_decodes_at_the_charts_size() {
    let (tl, s) = recorded(
        "q4-gc-pause-cached-bool",
        &bundled("q4-gc-pause-cached-bool"),
    );
    let files = timeline_chart(&tl, &s);
    keep("q4-cached-bool", &files);
    assert_eq!(&files.png[..8], b"\x89PNG\r\n\x1a\n");
    let (w, h) = png_size(&files.png);
    assert_eq!(w, WIDTH);
    assert_eq!(
        (w, h),
        svg_size(&files.svg),
        "PNG and SVG have the same size"
    );
    assert!((400..2400).contains(&h), "height {h}");
    // More nodes, a taller chart.
    let mut bigger = bundled("q4-gc-pause-cached-bool");
    let mut extra = bigger.nodes[2].clone();
    extra.name = "c".into();
    bigger.nodes.push(extra);
    let (tl, s) = recorded("four-nodes", &bigger);
    let (_, h4) = png_size(&timeline_chart(&tl, &s).png);
    assert!(h4 > h, "a fourth node adds a row and a lane: {h4} <= {h}");
}

#[test]
fn timeline_chart_is_byte_identical_run_to_run() {
    let sc = bundled("vm-freeze-stall");
    let (tl1, s1) = recorded("vm-freeze-stall", &sc);
    let (tl2, s2) = recorded("vm-freeze-stall", &sc);
    let a = timeline_chart(&tl1, &s1);
    let b = timeline_chart(&tl2, &s2);
    keep("vm-freeze-stall", &a);
    assert!(a.svg == b.svg, "SVG differs between two runs");
    assert!(a.png == b.png, "PNG differs between two runs");
    assert!(
        a.svg.contains("clock stalled"),
        "the stalled freeze is named"
    );
}

#[test]
fn a_millisecond_overlap_gets_a_zoom_panel_and_q4_does_not() {
    // h at -1000 ppm with a 5 ms margin: 3.005005 ms of overlap in a 40 s run (< 1%).
    let (tl, s) = recorded(
        "drift-overlap",
        &cut_off(r#"TwoSided(holder_margin: "5ms")"#, -1000.0, ""),
    );
    assert_eq!(s.overlap.count, 1);
    let files = timeline_chart(&tl, &s);
    keep("drift-overlap-zoom", &files);
    assert!(
        files.svg.contains(ZOOM_HEADING),
        "no zoom panel for a 3 ms overlap"
    );
    assert!(
        files.svg.contains("3.005005ms"),
        "the overlap is labelled with its length"
    );
    assert_eq!(
        bands(&files.svg),
        1,
        "the zoom panel's band is not counted as another"
    );
    // Q4: the overlap is 10% of the run, visible as it is.
    let (tl, s) = recorded("q4", &bundled("q4-gc-pause-cached-bool"));
    let files = timeline_chart(&tl, &s);
    assert!(
        !files.svg.contains(ZOOM_HEADING),
        "a zoom panel for a 4 s overlap"
    );
    assert!(files.svg.contains("3.996s"));
}

#[test]
fn a_wall_clock_step_is_marked_with_its_size() {
    let (tl, s) = recorded(
        "ntp-step-wall-clock",
        &cut_off(
            r#"WallClock(holder_margin: "5ms")"#,
            0.0,
            r#"ClockStep(node: "h", at: "12s", by: "-5s"),"#,
        ),
    );
    assert_eq!(s.overlap.count, 1);
    let files = timeline_chart(&tl, &s);
    keep("ntp-step-wall-clock", &files);
    assert!(files.svg.contains("wall step -5s"));
    assert!(
        files.svg.contains("wall clock error"),
        "both clocks are drawn when they differ"
    );
}

#[test]
fn compare_chart_has_a_group_per_strategy() {
    let base = bundled("q4-gc-pause-cached-bool");
    let strategies = [
        r#"TwoSided(holder_margin: "50ms")"#,
        "GrantorOnly",
        r#"HolderOnly(margin: "50ms")"#,
        "CachedBool",
        r#"WallClock(holder_margin: "50ms")"#,
        r#"OnReceiveStart(holder_margin: "50ms")"#,
    ]
    .map(spec);
    let runs: Vec<(String, Timeline, Summary)> = strategies
        .iter()
        .map(|spec| {
            let mut sc = base.clone();
            sc.strategy = spec.clone();
            let (tl, s) = recorded("q4-gc-pause", &sc);
            (spec.to_ron(), tl, s)
        })
        .collect();
    let files = compare_chart("Q4: a 12 s GC pause with T = 10 s, six strategies", &runs);
    keep("q4-compare", &files);
    assert!(files.svg.contains("six strategies"));
    // Six different strategies, one of each: a heading names each by its name alone (what
    // differs), alone or among those whose rows came out identical.
    let t = texts(&files.svg);
    for spec in &strategies {
        let name = spec.name();
        assert!(
            t.iter()
                .any(|x| x.split([',', ':', ';']).any(|w| w.trim() == name)),
            "{name} missing: {t:?}"
        );
    }
    let overlaps: u64 = runs.iter().map(|r| r.2.overlap.count).sum();
    assert!(overlaps >= 1, "CachedBool overlaps in Q4");
    assert_eq!(bands(&files.svg) as u64, overlaps);
    assert_eq!(png_size(&files.png), svg_size(&files.svg));
    let again = compare_chart("Q4: a 12 s GC pause with T = 10 s, six strategies", &runs);
    assert!(again == files, "the compare chart is deterministic");
}

#[test]
fn dense_marks_stay_a_bounded_number_of_shapes() {
    // Q4 CachedBool has thousands of zombie and stale reads; the chart merges them by pixel.
    let (tl, s) = recorded("q4", &bundled("q4-gc-pause-cached-bool"));
    assert!(tl.marks.len() > 2000, "marks {}", tl.marks.len());
    let scene = timeline_scene(&tl, &s);
    assert!(scene.shapes.len() < 3000, "{} shapes", scene.shapes.len());
}

/// The canonical benchmark hour (14.6 M events): drawing its chart must take well under a
/// second. Ignored by default (the run itself takes seconds in a debug build); run it with
/// `cargo test --release --test suite canonical_hour -- --ignored`.
#[test]
fn the_throughput_chart_has_a_panel_per_run_and_a_bounded_number_of_shapes() {
    let base = bundled("q4-gc-pause-cached-bool");
    let runs: Vec<(String, Throughput)> = ["CachedBool", r#"TwoSided(holder_margin: "50ms")"#]
        .map(spec)
        .into_iter()
        .map(|spec| {
            let mut sc = base.clone();
            sc.strategy = spec.clone();
            let strategy = leasesim::strategy::from_spec(&sc.strategy).unwrap();
            let mut tp = Throughput::new(Dur::from_ms(1));
            leasesim::run_with("q4", &sc, strategy, Some(&mut tp)).unwrap();
            (spec.to_ron(), tp)
        })
        .collect();
    let refs: Vec<(String, &Throughput)> = runs.iter().map(|(l, tp)| (l.clone(), tp)).collect();
    // 40 s in 1 ms bins: 40000 bins, one pair each.
    assert!(runs.iter().all(|(_, tp)| tp.len() == 40_000));
    assert!(runs.iter().all(|(_, tp)| tp.reads().sum::<u32>() > 0));
    let files = throughput_chart("Q4: reads and writes", &refs);
    keep("q4-throughput", &files);
    let t = texts(&files.svg);
    assert!(t.contains(&"Q4: reads and writes"));
    assert!(t.contains(&"CachedBool"), "{t:?}");
    assert!(t.contains(&"reads served") && t.contains(&"true time (s)"));
    assert_eq!(t.iter().filter(|x| **x == "ops/ms").count(), 2);
    assert_eq!(png_size(&files.png), svg_size(&files.svg));
    assert!(throughput_chart("Q4: reads and writes", &refs) == files);
    let scene = throughput_scene("Q4: reads and writes", &refs);
    assert!(scene.shapes.len() < 500, "{} shapes", scene.shapes.len());
    let nothing = throughput_chart("nothing", &[]);
    assert_eq!(png_size(&nothing.png), svg_size(&nothing.svg));
}

#[test]
fn a_compare_chart_of_nothing_is_still_a_chart() {
    let files = compare_chart("nothing to compare", &[]);
    assert!(texts(&files.svg).contains(&"nothing to compare"));
    assert_eq!(png_size(&files.png), svg_size(&files.svg));
}

/// The overlap-versus-epsilon chart shows the mean total overlap per run beside the longest
/// only when they differ: in `drift-beyond-bound-two-sided` every run overlaps alike, once
/// (fixed clocks and delays), so one panel says both; in `sweep-drift-boundary` (random
/// delays) they differ and both panels are drawn.
#[test]
fn the_mean_overlap_panel_is_drawn_only_when_it_differs_from_the_longest() {
    let dir = crate::common::workdir("charts-overlap-panels");
    let panels = |name: &str| {
        let out = crate::common::leasesim(
            &[
                "sweep",
                name,
                "--vary",
                "epsilon=1ms,5ms,20ms",
                "--seeds",
                "3",
                "--out",
                "out",
            ],
            &dir,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let svg =
            std::fs::read_to_string(dir.join(format!("out/{name}-sweep/overlap_vs_epsilon.svg")))
                .unwrap();
        (
            svg.contains("longest overlap, also the mean total per run"),
            svg.contains("mean overlap per run"),
        )
    };
    assert_eq!(panels("drift-beyond-bound-two-sided"), (true, false));
    assert_eq!(panels("sweep-drift-boundary"), (false, true));
}

#[test]
fn rows_name_each_nodes_drift_and_clocks_without_error_share_one_line() {
    // drift-beyond-bound-two-sided: the grantor runs at +2000 ppm, a at -2000 ppm, b exact.
    // Catches: a fixed drift not labelled on the node's row; a flat lane drawn per node.
    let (tl, s) = recorded("drift-rows", &bundled("drift-beyond-bound-two-sided"));
    let files = timeline_chart(&tl, &s);
    let drift = texts(&files.svg);
    // The whole run and the zoom both label the rows.
    assert_eq!(
        drift.iter().filter(|t| **t == "grantor, +2000 ppm").count(),
        2
    );
    assert_eq!(drift.iter().filter(|t| **t == "drift -2000 ppm").count(), 2);
    assert_eq!(drift.iter().filter(|t| **t == "no clock error").count(), 2);
    // Q4 has no drift at all: one line for its three nodes, no lane of its own for any.
    let (tl, s) = recorded("q4-rows", &bundled("q4-gc-pause-cached-bool"));
    let files = timeline_chart(&tl, &s);
    let q4 = texts(&files.svg);
    assert_eq!(q4.iter().filter(|t| **t == "no clock error").count(), 1);
    assert!(q4.contains(&"lock, a, b"));
    assert!(!q4.iter().any(|t| t.starts_with("error (")));
}

/// A text of a scene as placed: its box from left to right, its centre line, size and text.
struct Placed {
    left: i32,
    right: i32,
    y: i32,
    size: f64,
    text: String,
}

/// Every text of `scene`, measured with the embedded font.
fn placed_texts(scene: &Scene) -> Vec<Placed> {
    scene
        .shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Text {
                x,
                y,
                text,
                size,
                bold,
                anchor,
                ..
            } => {
                let w = text_width(text, *size, *bold);
                let left = match anchor {
                    Anchor::Left => *x,
                    Anchor::Center => x - w / 2,
                    Anchor::Right => x - w,
                };
                Some(Placed {
                    left,
                    right: left + w,
                    y: *y,
                    size: *size,
                    text: text.clone(),
                })
            }
            _ => None,
        })
        .collect()
}

/// What is wrong with the texts of `scene`: any outside its width, and any two on one line
/// (centres closer than half the smaller size) that overlap by more than a pixel.
fn label_problems(name: &str, scene: &Scene) -> Vec<String> {
    let texts = placed_texts(scene);
    let mut out = Vec::new();
    for t in &texts {
        if t.left < 0 || t.right > scene.width as i32 {
            out.push(format!(
                "{name}: {:?} spans {}..{} outside 0..{}",
                t.text, t.left, t.right, scene.width
            ));
        }
    }
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            let same_line = ((a.y - b.y).abs() as f64) < a.size.min(b.size) / 2.0;
            let overlap = a.right.min(b.right) - a.left.max(b.left);
            if same_line && overlap > 1 {
                out.push(format!(
                    "{name}: {:?} at {}..{} and {:?} at {}..{} overlap on y {}",
                    a.text, a.left, a.right, b.text, b.left, b.right, a.y
                ));
            }
        }
    }
    out
}

/// Checks [`label_problems`] finds none.
fn assert_labels_fit(name: &str, scene: &Scene) {
    let problems = label_problems(name, scene);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn overlaps_are_hatched_bands_and_no_token_is_red_or_orange() {
    // Catches: token 2 drawn in the orange (#FF7F0E) that reads as the overlap's red; a band
    // that is only a red wash (no hatching, no outline), in the chart or in the legend.
    let (tl, s) = recorded("q4", &bundled("q4-gc-pause-cached-bool"));
    let files = timeline_chart(&tl, &s);
    keep("q4-hatched", &files);
    assert!(!files.svg.contains("#FF7F0E"), "token 2 is orange");
    assert_eq!(bands(&files.svg), 1);
    let hatch = format!("stroke=\"{OVERLAP_FILL}\"");
    assert!(
        files.svg.matches("<polyline").any(|_| true)
            && files
                .svg
                .split("<polyline")
                .skip(1)
                .any(|p| p[..p.find('>').unwrap()].contains(&hatch)),
        "the band is not hatched"
    );
    assert!(
        files.svg.contains("fill=\"none\" stroke=\"#C81014\""),
        "the band has no outline"
    );
    // The legend's swatch is hatched too, in its own colour (so it does not count as a band).
    assert!(
        files.svg.contains("stroke=\"#E41B1C\""),
        "the legend swatch is not hatched"
    );
    // Every token colour is away from red.
    for tok in 1..=8u64 {
        let (r, g, b) = leasesim::report::chart::timeline::token_color(tok);
        assert!(
            !(r > g + 40 && r > b + 40),
            "token {tok} is reddish: ({r}, {g}, {b})"
        );
    }
}

#[test]
fn dense_marks_are_labelled_with_their_count() {
    // Q4 CachedBool: 982 zombie actions and 8973 stale reads, all bunched at a's resume (and b's
    // reads after): the chart states how many, per node and kind, and they add up to the summary.
    let (tl, s) = recorded("q4", &bundled("q4-gc-pause-cached-bool"));
    let files = timeline_chart(&tl, &s);
    let t = texts(&files.svg);
    let count = |node: usize, k: MarkKind| -> u64 {
        tl.bins[node][k as usize].iter().map(|&c| c as u64).sum()
    };
    let (mut zombie, mut stale) = (0, 0);
    for node in 0..tl.node_names.len() {
        for k in [
            MarkKind::ZombieRead,
            MarkKind::ZombieWrite,
            MarkKind::StaleRead,
        ] {
            let n = count(node, k);
            if n > 1 {
                let label = format!("×{n}");
                assert!(
                    t.contains(&label.as_str()),
                    "node {node} {k:?}: no {label} in {t:?}"
                );
            }
            match k {
                MarkKind::StaleRead => stale += n,
                _ => zombie += n,
            }
        }
    }
    assert_eq!((zombie, stale), (s.zombie_actions, s.stale_reads));
    assert_eq!(s.zombie_actions, 982);
    assert!(t.contains(&"×978") && t.contains(&"×4"), "{t:?}");
}

#[test]
fn labels_stay_inside_the_chart_and_do_not_overlap_on_a_line() {
    // Catches: two clock-lane end labels run together (`-857ms-78.03ms`), an event label past the
    // right edge (`restart`), an overlap label hanging off the plot.
    // Every bundled scenario: busy runs (q4, k8s), wall steps, restarts, drift, Raft, LeaseGuard.
    let mut problems = Vec::new();
    for name in leasesim::scenario::library::names() {
        let (tl, s) = recorded(name, &bundled(name));
        problems.extend(label_problems(name, &timeline_scene(&tl, &s)));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn clock_lanes_of_one_section_share_one_unit() {
    // epsilon-too-small-ntp-slew: in the zoom, the grantor is 950 us ahead and a is 5.705 ms
    // behind; the lanes once read "error (us)" and "error (ms)". Both sections now read ms, and
    // the end labels use it too.
    let (tl, s) = recorded("eps", &bundled("epsilon-too-small-ntp-slew"));
    let files = timeline_chart(&tl, &s);
    let t = texts(&files.svg);
    let units: Vec<&&str> = t.iter().filter(|x| x.starts_with("error (")).collect();
    assert_eq!(units.len(), 4, "{units:?}");
    assert!(units.iter().all(|u| **u == "error (ms)"), "{units:?}");
    assert!(t.contains(&"+0.95ms") && t.contains(&"-5.705ms"), "{t:?}");
    assert!(!t.iter().any(|x| x.ends_with("us")), "{t:?}");
}

#[test]
fn the_zoom_axis_reads_as_an_offset_from_a_round_origin() {
    // epsilon-too-small-ntp-slew zooms on [18.99844297 s, 19.009457126 s]: 11 ms at a 2 ms step,
    // origin 18.998 s (the start rounded down to the step), ticks +2 .. +10 ms.
    let (tl, s) = recorded("eps", &bundled("epsilon-too-small-ntp-slew"));
    let files = timeline_chart(&tl, &s);
    let t = texts(&files.svg);
    assert!(t.contains(&"true time: ms after 18.998 s"), "{t:?}");
    for tick in ["+2", "+4", "+6", "+8", "+10"] {
        assert!(t.contains(&tick), "no tick {tick}: {t:?}");
    }
    assert!(!t.contains(&"19000") && !t.contains(&"18999"), "{t:?}");
}

/// `base` under each of `strategies`, labelled as `compare` labels them.
/// A strategy written as in a scenario.
fn spec(text: &str) -> StrategySpec {
    StrategySpec::from_ron(text).unwrap()
}

fn compare_runs(base: &Scenario, strategies: &[StrategySpec]) -> Vec<(String, Timeline, Summary)> {
    strategies
        .iter()
        .map(|spec| {
            let mut sc = base.clone();
            sc.strategy = spec.clone();
            let (tl, s) = recorded("compare", &sc);
            (spec.to_ron(), tl, s)
        })
        .collect()
}

#[test]
fn compare_zooms_onto_a_short_overlap_and_draws_the_clocks_once() {
    // epsilon-too-small-ntp-slew: a 2.75 ms overlap in 30 s, caused by a's drift. The compare
    // chart shows the clocks (the same in every run: drawn once, with a note) and zooms every
    // group onto one window, the first run's, on the offset axis.
    let base = bundled("epsilon-too-small-ntp-slew");
    let own = base.strategy.clone();
    let runs = compare_runs(&base, &[own, spec("CachedBool"), spec("GrantorOnly")]);
    let files = compare_chart("eps", &runs);
    keep("eps-compare", &files);
    let t = texts(&files.svg);
    assert_eq!(
        t.iter().filter(|x| x.starts_with(ZOOM_HEADING)).count(),
        1,
        "{t:?}"
    );
    assert_eq!(
        t.iter().filter(|x| **x == SHARED_CLOCKS_NOTE).count(),
        2,
        "{t:?}"
    );
    assert!(t.iter().any(|x| x.starts_with("Clock error")));
    assert!(t.contains(&"true time: ms after 18.998 s"), "{t:?}");
    let overlaps: u64 = runs.iter().map(|r| r.2.overlap.count).sum();
    assert_eq!(
        bands(&files.svg) as u64,
        overlaps,
        "the zoom's bands count once"
    );
    assert_labels_fit("eps-compare", &compare_scene("eps", &runs));
    // Q4: a 4 s overlap, no zoom; the same clocks (none err), one line for all.
    let base = bundled("q4-gc-pause-cached-bool");
    let runs = compare_runs(&base, &[spec("CachedBool"), spec("GrantorOnly")]);
    let t_q4 = compare_chart("q4", &runs);
    let t = texts(&t_q4.svg);
    assert!(!t.iter().any(|x| x.starts_with(ZOOM_HEADING)), "{t:?}");
    assert!(t.contains(&SHARED_CLOCKS_NOTE));
}
