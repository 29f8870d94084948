//! `report.html` in a real browser: headless Chromium opens every bundled scenario's page from
//! disk and runs the page's self-test (`#selftest`): no console message, no script error, no
//! attempt to fetch anything (the page's content security policy refuses every fetch, and the
//! self-test records each refusal), the lanes the data calls for, and a stale read's detail
//! naming the write it missed, reached by a click on the timeline. One page's screenshot is
//! compared with a checked-in picture, within a tolerance for font rendering.
//!
//! Chromium is found as `LEASESIM_CHROMIUM`, `chromium` or `chromium-browser` on the `PATH`.
//! Without one these tests say so and pass, unless `LEASESIM_REQUIRE_BROWSER` is set (CI sets
//! it, after installing Debian's `chromium`): then a missing browser fails them.

use crate::common::{leasesim, workdir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The checked-in screenshot, and the scenario whose page it shows.
pub(crate) const PICTURE: &str = "reports/figures/report-html.png";
const PICTURE_SCENARIO: &str = "q4-gc-pause-cached-bool";
/// A pixel differs when a channel differs by more than this...
const CHANNEL_TOLERANCE: u8 = 48;
/// ... and the picture matches while at most this fraction of pixels differ (text antialiased
/// by another font renderer moves a few percent).
const PIXELS_TOLERANCE: f64 = 0.03;

fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("LEASESIM_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| {
            ["chromium", "chromium-browser"].iter().find_map(|name| {
                std::env::var_os("PATH").and_then(|paths| {
                    std::env::split_paths(&paths)
                        .map(|d| d.join(name))
                        .find(|p| p.is_file())
                })
            })
        });
    if found.is_none() {
        assert!(
            std::env::var_os("LEASESIM_REQUIRE_BROWSER").is_none(),
            "LEASESIM_REQUIRE_BROWSER is set and no Chromium was found"
        );
        eprintln!("no Chromium found (LEASESIM_CHROMIUM, chromium): browser tests skipped");
    }
    found
}

/// Chromium headless with `args` then `url`, in a profile of its own: (stdout, stderr).
fn headless(browser: &Path, args: &[&str], url: &str) -> (String, String) {
    static PROFILE: AtomicUsize = AtomicUsize::new(0);
    let profile = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "chromium-profile-{}-{}",
        std::process::id(),
        PROFILE.fetch_add(1, Ordering::Relaxed)
    ));
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
            "--window-size=1280,900",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.canonicalize().unwrap().display())
}

/// What the page's self-test found, read from the dumped DOM.
fn selftest(browser: &Path, page: &Path) -> (serde_json::Value, Vec<String>) {
    let url = format!("{}#selftest", file_url(page));
    let (dom, stderr) = headless(browser, &["--dump-dom"], &url);
    let console: Vec<String> = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(str::to_string)
        .collect();
    let text = dom
        .split("<pre id=\"selftest\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("{}: no self-test result in the page", page.display()));
    let json = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    (serde_json::from_str(&json).unwrap(), console)
}

/// The data a page carries (its `<script id="data">`).
fn page_data(page: &Path) -> serde_json::Value {
    let html = std::fs::read_to_string(page).unwrap();
    let data = html
        .split("<script id=\"data\" type=\"application/json\">")
        .nth(1)
        .and_then(|r| r.split("</script>").next())
        .expect("the page carries its data");
    serde_json::from_str(data).unwrap()
}

/// The lanes a run's data calls for: per node its beliefs, its read beliefs when it has any,
/// its clients; then the grants and the network.
fn lanes_of(run: &serde_json::Value) -> Vec<String> {
    let mut lanes = Vec::new();
    for (i, n) in run["nodes"].as_array().unwrap().iter().enumerate() {
        let name = n["name"].as_str().unwrap();
        lanes.push(name.to_string());
        if !run["read_beliefs"][i].as_array().unwrap().is_empty() {
            lanes.push(format!("{name} read"));
        }
        lanes.push(format!("{name} clients"));
    }
    lanes.extend(["grants".to_string(), "network".to_string()]);
    lanes
}

/// `run --all` into a fresh directory: the reports' directory.
fn all_reports(test: &str) -> PathBuf {
    let dir = workdir(test);
    let o = leasesim(&["run", "--all", "--out", "out"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir.join("out")
}

/// Every bundled scenario's page: no console message, no error, the lanes its data calls
/// for, and (where the run had a stale read) a click on it that shows the write it missed.
#[test]
fn every_bundled_page_loads_clean_in_chromium() {
    let Some(browser) = chromium() else { return };
    let out = all_reports("browser-all");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path().join("report.html"))
        .filter(|p| p.is_file())
        .collect();
    pages.sort();
    assert!(pages.len() > 100, "{} pages", pages.len());
    let stale_checked = AtomicUsize::new(0);
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(page) = pages.get(i) else { break };
                if check_page(&browser, page) {
                    stale_checked.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    // Bundled scenarios with a stale read shown: the q4 and ZooKeeper stories among others.
    assert!(stale_checked.into_inner() >= 5);
    let (index, console) = selftest(&browser, &out.join("index.html"));
    assert!(console.is_empty(), "index.html: {console:?}");
    assert_eq!(index["errors"], serde_json::json!([]), "index.html");
}

/// One page's self-test, asserted; whether it clicked a stale read.
fn check_page(browser: &Path, page: &Path) -> bool {
    let (r, console) = selftest(browser, page);
    let name = page
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy();
    assert!(console.is_empty(), "{name}: console: {console:?}");
    assert_eq!(r["errors"], serde_json::json!([]), "{name}");
    let data = page_data(page);
    let run = &data["runs"][0];
    let expected = lanes_of(run);
    assert_eq!(r["lanes"], serde_json::json!(expected), "{name}");
    let stale = run["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["stale"] == true && o["missed"].is_object());
    match stale {
        Some(op) => {
            assert_eq!(r["stale_op"], op["id"], "{name}");
            let missed = format!("missed write #{}", op["missed"]["id"]);
            assert!(
                r["detail"].as_str().unwrap().contains(&missed),
                "{name}: {}",
                r["detail"]
            );
            true
        }
        None => {
            assert!(r["stale_op"].is_null(), "{name}");
            false
        }
    }
}

/// The self-test catches a page that tries to fetch something: the same page with an image
/// from the network gets a refusal from its content security policy, reported as an error.
#[test]
fn a_page_that_fetches_fails_its_self_test() {
    let Some(browser) = chromium() else { return };
    let dir = workdir("browser-fetch");
    let o = leasesim(&["run", "q4-gc-pause-two-sided", "--out", "out"], &dir);
    assert!(o.status.success());
    let page = dir.join("out/q4-gc-pause-two-sided/report.html");
    let (clean, _) = selftest(&browser, &page);
    assert_eq!(clean["errors"], serde_json::json!([]));
    let html = std::fs::read_to_string(&page).unwrap();
    let planted = html.replacen("<body>", "<body><img src=\"http://192.0.2.1/x.png\">", 1);
    assert_ne!(planted, html, "the page has a <body> to plant the image in");
    let bad = dir.join("planted.html");
    std::fs::write(&bad, planted).unwrap();
    let (r, console) = selftest(&browser, &bad);
    // Refused before the page's script listens, the image shows in the console; refused
    // later, in the self-test's errors too. Either fails the test of every page above.
    let said = format!("{} {console:?}", r["errors"]);
    assert!(said.contains("192.0.2.1"), "{said}");
}

/// One page as a person sees it, against the checked-in picture (`LEASESIM_BLESS=1` writes it
/// anew).
#[test]
fn a_report_looks_as_it_did() {
    let Some(browser) = chromium() else { return };
    let dir = workdir("browser-picture");
    let o = leasesim(&["run", PICTURE_SCENARIO, "--out", "out"], &dir);
    assert!(o.status.success());
    let page = dir.join("out").join(PICTURE_SCENARIO).join("report.html");
    let shot = dir.join("shot.png");
    let arg = format!("--screenshot={}", shot.display());
    headless(&browser, &[&arg], &file_url(&page));
    let picture = Path::new(env!("CARGO_MANIFEST_DIR")).join(PICTURE);
    if std::env::var_os("LEASESIM_BLESS").is_some() {
        std::fs::create_dir_all(picture.parent().unwrap()).unwrap();
        std::fs::copy(&shot, &picture).unwrap();
        return;
    }
    let got = image::open(&shot).unwrap().to_rgb8();
    let want = image::open(&picture).unwrap().to_rgb8();
    assert_eq!(got.dimensions(), want.dimensions());
    let differ = got
        .pixels()
        .zip(want.pixels())
        .filter(|(a, b)| {
            a.0.iter()
                .zip(b.0.iter())
                .any(|(x, y)| x.abs_diff(*y) > CHANNEL_TOLERANCE)
        })
        .count();
    let fraction = differ as f64 / (got.width() * got.height()) as f64;
    assert!(
        fraction <= PIXELS_TOLERANCE,
        "{:.2}% of the pixels differ from {PICTURE} (the shot: {})",
        fraction * 100.0,
        shot.display()
    );
}
