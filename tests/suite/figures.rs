//! Golden images: every chart the README and the book show (`reports/figures/`) and a few more kept under
//! `tests/golden/charts/` (a compare chart, the sweep's trade-off and availability charts) must
//! be exactly what the command beside it draws today, byte for byte. Charts are deterministic
//! (integer layout, the embedded font, a pinned PNG encoder), so any change to a chart, meant or
//! not, fails here until the images are looked at and re-blessed:
//!
//! ```text
//! LEASESIM_BLESS=1 cargo test --release --test suite figures
//! ```
//!
//! which runs the same commands and writes what they draw over the committed files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One golden image: the command that draws it, the file it writes under `--out`, and where
/// the image is committed (relative to the repository).
struct Figure {
    args: &'static [&'static str],
    drawn: &'static str,
    golden: &'static str,
}

const SWEEP: &[&str] = &[
    "sweep",
    "sweep-drift-boundary",
    "--vary",
    "T=2s,5s,10s,20s",
    "--vary",
    "rho=200,500,1000,2000",
    "--vary",
    "epsilon=2ms,5ms,10ms,20ms",
    "--seeds",
    "20",
    "--jobs",
    "2",
];

/// The Raft paper's Figure 16, top graph: the election timeouts' spread varied.
const FIGURE_16_TOP: &[&str] = &[
    "sweep",
    "raft-figure-16",
    "--vary",
    "strategy.election_jitter=0ms,1ms,5ms,25ms,50ms,150ms",
    "--seeds",
    "1000",
    "--reference",
    "5ms:median=287ms",
    "--reference",
    "50ms:max=513ms",
];

/// Figure 16, bottom graph: the timeouts scaled, each from T to 2T with heartbeats of T/2.
/// `raft-leader-deaf-one-way` with and without pre-vote, and without CheckQuorum, as the
/// partial-failures page draws it.
const DEAF_LEADER: &[&str] = &[
    "sweep",
    "raft-leader-deaf-one-way",
    "--vary",
    "strategy.check_quorum+strategy.pre_vote=true+true,true+false,false+true",
    "--seeds",
    "200",
];

const FIGURE_16_BOTTOM: &[&str] = &[
    "sweep",
    "raft-figure-16",
    "--vary",
    "strategy.election_timeout+strategy.election_jitter+strategy.heartbeat+T=\
     12ms+12ms+6ms+10ms,25ms+25ms+12.5ms+20ms,50ms+50ms+25ms+40ms,100ms+100ms+50ms+80ms,\
     150ms+150ms+75ms+100ms",
    "--seeds",
    "1000",
    "--reference",
    "12ms+12ms+6ms+10ms:max=152ms",
];

const FIGURES: &[Figure] = &[
    Figure {
        args: &["run", "q4-gc-pause-cached-bool"],
        drawn: "q4-gc-pause-cached-bool/timeline.png",
        golden: "reports/figures/q4-gc-pause-cached-bool.png",
    },
    // The README's example page.
    Figure {
        args: &["run", "q4-gc-pause-cached-bool"],
        drawn: "q4-gc-pause-cached-bool/report.html",
        golden: "reports/example/report.html",
    },
    Figure {
        args: &["run", "epsilon-too-small-ntp-slew"],
        drawn: "epsilon-too-small-ntp-slew/timeline.png",
        golden: "reports/figures/epsilon-too-small-ntp-slew.png",
    },
    Figure {
        args: &["run", "k8s-leader-pause-retry-sleep"],
        drawn: "k8s-leader-pause-retry-sleep/timeline.png",
        golden: "reports/figures/k8s-leader-pause-retry-sleep.png",
    },
    Figure {
        args: &["compare", "leaseguard-failover-inconsistent"],
        drawn: "leaseguard-failover-inconsistent-compare/throughput.png",
        golden: "reports/figures/leaseguard-failover-throughput.png",
    },
    Figure {
        args: &["explore", "explore-cached-bool-pauses", "--runs", "200"],
        drawn: "explore-cached-bool-pauses/timeline.png",
        golden: "reports/figures/explore-cached-bool-pauses-counterexample.png",
    },
    Figure {
        args: &[
            "explore",
            "explore-two-sided-within-envelope",
            "--runs",
            "2000",
        ],
        drawn: "explore-two-sided-within-envelope/slack.png",
        golden: "reports/figures/explore-two-sided-within-envelope-slack.png",
    },
    Figure {
        args: SWEEP,
        drawn: "sweep-drift-boundary-sweep/p_overlap_heatmap.png",
        golden: "reports/figures/sweep-drift-boundary-heatmap.png",
    },
    Figure {
        args: SWEEP,
        drawn: "sweep-drift-boundary-sweep/overlap_vs_epsilon.png",
        golden: "reports/figures/sweep-drift-boundary-overlap.png",
    },
    Figure {
        args: SWEEP,
        drawn: "sweep-drift-boundary-sweep/tradeoff.png",
        golden: "tests/golden/charts/sweep-drift-boundary-tradeoff.png",
    },
    Figure {
        args: SWEEP,
        drawn: "sweep-drift-boundary-sweep/availability_vs_t.png",
        golden: "tests/golden/charts/sweep-drift-boundary-availability.png",
    },
    Figure {
        args: FIGURE_16_TOP,
        drawn: "raft-figure-16-sweep/recovery_cdf.png",
        golden: "reports/figures/raft-figure-16-top.png",
    },
    Figure {
        args: FIGURE_16_BOTTOM,
        drawn: "raft-figure-16-sweep/recovery_cdf.png",
        golden: "reports/figures/raft-figure-16-bottom.png",
    },
    Figure {
        args: DEAF_LEADER,
        drawn: "raft-leader-deaf-one-way-sweep/outage_cdf.png",
        golden: "reports/figures/raft-leader-deaf-one-way-outage.png",
    },
    Figure {
        args: &["compare", "epsilon-too-small-ntp-slew"],
        drawn: "epsilon-too-small-ntp-slew-compare/compare.png",
        golden: "tests/golden/charts/epsilon-too-small-ntp-slew-compare.png",
    },
    Figure {
        args: &["run", "grantor-restart-waits"],
        drawn: "grantor-restart-waits/timeline.png",
        golden: "tests/golden/charts/grantor-restart-waits.png",
    },
];

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Runs each distinct command once into its own directory; returns where each figure was drawn.
fn draw_all() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("figures");
    let _ = fs::remove_dir_all(&root);
    let mut commands: Vec<&[&str]> = Vec::new();
    FIGURES
        .iter()
        .map(|f| {
            let k = match commands.iter().position(|c| *c == f.args) {
                Some(k) => k,
                None => {
                    commands.push(f.args);
                    let k = commands.len() - 1;
                    let out = root.join(k.to_string());
                    let o = Command::new(env!("CARGO_BIN_EXE_leasesim"))
                        .args(f.args)
                        .arg("--out")
                        .arg(&out)
                        .output()
                        .unwrap();
                    // 0 (safe) or 1 (an overlap, a violation): the story these figures tell.
                    assert!(
                        matches!(o.status.code(), Some(0 | 1)),
                        "{:?}: {}",
                        f.args,
                        String::from_utf8_lossy(&o.stderr)
                    );
                    k
                }
            };
            root.join(k.to_string()).join(f.drawn)
        })
        .collect()
}

#[test]
fn every_chart_is_its_golden_image() {
    let bless = std::env::var_os("LEASESIM_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (f, drawn) in FIGURES.iter().zip(draw_all()) {
        let png = fs::read(&drawn).unwrap_or_else(|e| panic!("{}: {e}", drawn.display()));
        let golden = repo(f.golden);
        if bless {
            fs::create_dir_all(golden.parent().unwrap()).unwrap();
            fs::write(&golden, &png).unwrap();
        } else if fs::read(&golden).ok().as_deref() != Some(&png[..]) {
            stale.push(format!(
                "{} (drawn by `leasesim {}` as {})",
                f.golden,
                f.args.join(" "),
                drawn.display()
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "these charts differ from their golden images; look at the new ones, then re-bless \
         with `LEASESIM_BLESS=1 cargo test --release --test suite figures`:\n  {}",
        stale.join("\n  ")
    );
}

#[test]
fn the_docs_show_every_committed_figure_and_each_has_a_golden_command() {
    // The README shows its figures from reports/figures/, the book from docs/src/figures/ (a
    // link to the same folder, so that mdBook copies them).
    let mut docs = vec![include_str!("../../README.md").to_string()];
    for page in fs::read_dir(repo("docs/src"))
        .unwrap()
        .chain(fs::read_dir(repo("docs/src/protocols")).unwrap())
        .flatten()
    {
        if page.path().extension().is_some_and(|x| x == "md") {
            docs.push(fs::read_to_string(page.path()).unwrap());
        }
    }
    let mut shown: Vec<&str> = docs
        .iter()
        .flat_map(|text| text.split("figures/").skip(1))
        .filter_map(|rest| rest.split_once(')').map(|(name, _)| name))
        .filter(|name| name.ends_with(".png") || name.ends_with(".svg"))
        .collect();
    shown.sort();
    shown.dedup();
    let mut committed: Vec<String> = fs::read_dir(repo("reports/figures"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    committed.sort();
    assert_eq!(
        shown, committed,
        "figures shown in the docs against reports/figures/"
    );
    for name in committed {
        let path = format!("reports/figures/{name}");
        // The page's screenshot is the browser test's picture, taken by Chromium.
        assert!(
            FIGURES.iter().any(|f| f.golden == path) || path == crate::browser::PICTURE,
            "{path} has no command that draws it"
        );
    }
}
