//! The sweep charts as a user sees them (SVG text): every series of the line charts visible and
//! coinciding ones named, drops to zero between grid values not drawn as a known crossing, the
//! x scale named in the axis title, and the trade-off labelling every unsafe point of a small
//! sweep with its frontier drawn.

use crate::common::{leasesim, workdir};
use std::path::{Path, PathBuf};

/// Runs `leasesim sweep` with `args` into a fresh directory; the sweep's directory.
fn sweep(test: &str, scenario: &str, args: &[&str]) -> PathBuf {
    let dir = workdir(test);
    let mut all = vec!["sweep", scenario];
    all.extend(args);
    all.extend(["--out", "out"]);
    let out = leasesim(&all, &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join(format!("out/{scenario}-sweep"))
}

fn svg_texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// At T = 5 s, rho = 200 and 500 ppm never overlap at any epsilon: their lines lie on one
/// another under the rho = 2000 line. The panel names them; the markers of every series are
/// dodged (unit-tested in the chart's module). Where a line drops from overlap to none between
/// two grid values, the legend says the crossing lies somewhere between them.
#[test]
fn the_overlap_chart_names_coinciding_lines_and_the_unmeasured_crossing() {
    let dir = sweep(
        "sweep-charts-coincide",
        "sweep-drift-boundary",
        &[
            "--vary",
            "T=5s,10s",
            "--vary",
            "rho=200,500,2000",
            "--vary",
            "epsilon=0ms,5ms,20ms",
            "--seeds",
            "3",
        ],
    );
    let t = svg_texts(&dir.join("overlap_vs_epsilon.svg"));
    assert!(
        t.iter()
            .any(|t| t == "rho = 200, 500 ppm: no overlap at any ε (lines coincide)"),
        "{t:?}"
    );
    assert!(
        t.iter().any(|t| t
            .starts_with("dotted: the overlap reaches 0 somewhere between these two values of ε")),
        "{t:?}"
    );
    // One x-scale rule: epsilon 0, 5, 20 ms spans a factor of 4 above 0: linear; T = 5 s, 10 s:
    // linear. Each axis title says so.
    assert!(t.iter().any(|t| t == "ε, holder margin (linear)"), "{t:?}");
    let a = svg_texts(&dir.join("availability_vs_t.svg"));
    assert!(a.iter().any(|t| t == "T, lease duration (linear)"), "{a:?}");
}

#[test]
fn a_decade_of_epsilon_with_zero_is_on_a_log_axis_with_zero_set_apart() {
    let dir = sweep(
        "sweep-charts-log",
        "sweep-drift-boundary",
        &["--vary", "epsilon=0ms,1ms,5ms,20ms", "--seeds", "2"],
    );
    let t = svg_texts(&dir.join("overlap_vs_epsilon.svg"));
    assert!(
        t.iter()
            .any(|t| t == "ε, holder margin (log scale, 0 set apart)"),
        "{t:?}"
    );
}

/// A Raft sweep over rho alone: seven points, three safe. Every unsafe point carries its
/// parameter set; rho is the environment, not a choice, so no frontier is drawn over it.
#[test]
fn the_tradeoff_of_a_sweep_over_the_environment_alone_labels_its_points_and_draws_no_frontier() {
    let rhos = [
        "100000", "105000", "108000", "110000", "112000", "116000", "120000",
    ];
    let vary = format!("rho={}", rhos.join(","));
    let dir = sweep(
        "sweep-charts-tradeoff",
        "raft-tikv-drift-beyond-bound",
        &["--vary", &vary, "--seeds", "4"],
    );
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (rho, unsafe_runs) = (col("rho"), col("unsafe_runs"));
    let unsafe_rhos: Vec<String> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| r[unsafe_runs] != "0")
        .map(|r| r[rho].to_string())
        .collect();
    assert!(unsafe_rhos.len() >= 3, "{unsafe_rhos:?}");
    let t = svg_texts(&dir.join("tradeoff.svg"));
    for r in &unsafe_rhos {
        let label = format!("rho={r}");
        assert!(t.contains(&label), "{label} unlabelled: {t:?}");
    }
    assert!(
        !t.iter()
            .any(|t| t.starts_with("frontier: the best availability")),
        "{t:?}"
    );
    assert!(
        t.iter()
            .any(|t| t.contains("nothing to choose, so no frontier")),
        "{t:?}"
    );
}

/// The trade-off of a real sweep, laid out: no two label boxes overlap, each box holds its
/// words as the embedded font measures them, and every unsafe point is labelled.
#[test]
fn the_tradeoff_labels_of_a_real_sweep_never_overlap() {
    use leasesim::report::chart::scene::text_width;
    use leasesim::report::chart::sweep::{tradeoff, Data};
    use leasesim::scenario::{library, load};
    use leasesim::sweep::{self, Grid, SweepSpec};
    let name = "sweep-drift-boundary";
    let s = load::from_text(name, library::text(name).unwrap()).unwrap();
    let vary = |p: &str, v: &[&str]| (p.to_string(), v.iter().map(|x| x.to_string()).collect());
    let grid = Grid::build(SweepSpec {
        name: name.into(),
        source: "test".into(),
        scenario: s,
        vary: vec![
            vary("T", &["5s", "10s", "20s"]),
            vary("rho", &["1000", "2000"]),
            vary("epsilon", &["1ms", "5ms"]),
        ],
        seeds: 2,
        references: Vec::new(),
    })
    .unwrap_or_else(|p| panic!("{p:?}"));
    let (stats, _) = sweep::run_all(&grid, Some(1), false, std::io::sink()).unwrap();
    let unsafe_points = stats.iter().filter(|s| !s.safe()).count();
    // 11 of the 12 sets are unsafe, at nearly one spot (P(unsafe) = 1, availability within
    // 0.0003 %): a column of labels to lay out.
    assert!(
        (8..=tradeoff::MAX_LABELS).contains(&unsafe_points),
        "{unsafe_points}"
    );
    let t = tradeoff::tradeoff(&Data::new(&grid, &stats)).unwrap();
    let boxes = t.label_boxes();
    let placed: Vec<_> = boxes.iter().flatten().collect();
    // One point per setting chosen (T x epsilon: 3 x 2 = 6, rho being the environment), each
    // at its worst over rho; all six ask for a label (at most MAX_LABELS unsafe ones, and every
    // safe one), and find room.
    assert_eq!(boxes.len(), 6, "{boxes:?}");
    assert!(
        boxes.iter().flatten().all(|b| !b.text.contains("rho")),
        "{boxes:?}"
    );
    assert_eq!(placed.len(), boxes.len());
    for (i, a) in placed.iter().enumerate() {
        assert_eq!(
            a.x1 - a.x0,
            text_width(&a.text, tradeoff::LABEL_SIZE, false) + 6
        );
        for b in &placed[i + 1..] {
            let apart = a.x1 <= b.x0 || b.x1 <= a.x0 || a.y1 <= b.y0 || b.y1 <= a.y0;
            assert!(apart, "{a:?} overlaps {b:?}");
        }
    }
    // The scene draws what was laid out, and says how many found no room.
    let scene = t.scene();
    let missing = boxes.len() - placed.len();
    let said = scene.shapes.iter().any(|sh| {
        matches!(sh, leasesim::report::chart::scene::Shape::Text { text, .. }
            if text.starts_with(&format!("{missing} labels left out")))
    });
    assert_eq!(said, missing > 0);
}

/// Cells in which no run had a handover are drawn as untested in every chart, never as safe.
/// In `sweep-drift-boundary` the holder is cut off at 10 s of a 40 s run: with T = 60 s its
/// lease outlasts the run, so the lease never moves (no handover, nothing to judge), while with
/// T = 5 s it moves in every run.
#[test]
fn cells_without_a_handover_are_drawn_untested_in_every_chart() {
    let dir = sweep(
        "sweep-charts-untested",
        "sweep-drift-boundary",
        &[
            "--vary",
            "T=5s,60s",
            "--vary",
            "rho=500,2000",
            "--vary",
            "epsilon=5ms,20ms",
            "--seeds",
            "2",
        ],
    );
    // The heat map: the four T = 60 s cells (2 rho x 2 panels) say "untested", and the legend
    // says what the grey means.
    let h = svg_texts(&dir.join("p_overlap_heatmap.svg"));
    assert_eq!(h.iter().filter(|t| *t == "untested").count(), 4, "{h:?}");
    assert!(
        h.iter()
            .any(|t| t.starts_with("grey, hatched &quot;untested&quot;: no run had a handover")),
        "{h:?}"
    );
    // The trade-off: the T = 60 s settings are untested points, never the best safe one.
    let t = svg_texts(&dir.join("tradeoff.svg"));
    assert!(
        t.iter()
            .any(|t| t.starts_with("untested: no overlap or harm")),
        "{t:?}"
    );
    assert!(t.iter().any(|t| t == "T=60s, epsilon=20ms"), "{t:?}");
    assert!(
        !t.iter().any(|t| t.starts_with("best safe: T=60s")),
        "{t:?}"
    );
    // The overlap chart: the T = 60 s panel names its lines untested, not overlap-free.
    let o = svg_texts(&dir.join("overlap_vs_epsilon.svg"));
    assert!(
        o.iter().any(|t| t
            == "rho = 500, 2000 ppm: no run with a handover at any ε: untested (lines coincide)"),
        "{o:?}"
    );
    assert!(
        !o.iter().any(|t| t.contains("no overlap at any ε")),
        "{o:?}"
    );
}
