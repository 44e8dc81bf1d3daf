//! The HTML report as a colleague sees it: the page of real runs (emulated rapidio, bxi and
//! hyperlink in one run, two shm runs with other settings, one the reference) opened in
//! Debian's chromium, headless, 1,400 px wide. Its tables are wider than the window, yet the
//! page must not scroll sideways (each table scrolls in its own box), and its screenshot must
//! show something. The page has no script, and gets none: the measurement is read from a copy
//! with a small script injected, which writes it into the title `--dump-dom` prints.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// The window the page is looked at in: a laptop's.
const WIDTH: u32 = 1400;

/// chromium's path, or why there is none. Under CI (env CI set) a missing browser fails the
/// test; elsewhere the test is skipped with its reason on stderr.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    });
    if found.is_none() {
        let why = "chromium not found on PATH (Debian: apt-get install chromium)";
        assert!(std::env::var_os("CI").is_none(), "{why}: required under CI");
        eprintln!("skipped: {why}");
    }
    found
}

/// chromium headless at `WIDTH` x `height` on `page`, with `extra` arguments; its stdout.
fn headless(browser: &Path, page: &Path, height: u32, extra: &[&str]) -> String {
    let profile = scratch("chromium-profile");
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--hide-scrollbars",
            "--virtual-time-budget=2000",
        ])
        .arg(format!("--window-size={WIDTH},{height}"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(profile);
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The run directories under `out`.
fn dirs(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// Runs `fabbench ARGS -m 1:4K -i 5 -x 1 --out OUT` and returns the run directory it made.
fn make(out: &Path, args: &[&str]) -> PathBuf {
    let before = dirs(out);
    let o = Command::new(bin())
        .args(args)
        .args(["-m", "1:4K", "-i", "5", "-x", "1", "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fabbench {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let made: Vec<PathBuf> = dirs(out)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    made[0].clone()
}

/// The measurements the injected script writes into the title: `name=number` words.
fn measured(dom: &str, name: &str) -> u32 {
    let title = dom
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_else(|| panic!("no title in {dom}"));
    title
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in the title {title:?}"))
}

#[test]
fn the_html_report_fits_a_laptops_window_and_shows_something() {
    let Some(browser) = chromium() else {
        return;
    };
    let _g = serial();
    let out = scratch("report-page");
    let runs = out.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    make(
        &runs,
        &[
            "run",
            "osu_latency",
            "osu_bw",
            "--fabric",
            "rapidio,bxi,hyperlink",
        ],
    );
    let reference = make(&runs, &["run", "osu_latency", "osu_bw", "--fabric", "shm"]);
    make(
        &runs,
        &[
            "run",
            "osu_latency",
            "osu_bw",
            "--fabric",
            "shm",
            "--set",
            "eager_limit=1KiB",
            "--set",
            "frag_size=16KiB",
            "--set",
            "rx_thread=on",
        ],
    );
    let page = out.join("report.html");
    let mut args: Vec<String> = vec!["report".into()];
    args.extend(dirs(&runs).iter().map(|d| d.display().to_string()));
    args.extend(
        [
            "--reference",
            reference.to_str().unwrap(),
            "--format",
            "html",
            "-o",
            page.to_str().unwrap(),
        ]
        .map(String::from),
    );
    let o = raw(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script"), "the report itself has no script");

    // The copy measures: the page's width against the window's, and the widest table's, so
    // the test knows its tables are wide enough to have pushed the page sideways.
    let probe = "<script>document.title = 'body=' + document.body.scrollWidth + ' page=' + \
                 document.documentElement.scrollWidth + ' window=' + window.innerWidth + \
                 ' table=' + Math.max(...Array.from(document.querySelectorAll('table'), \
                 t => t.scrollWidth));</script>\n</body>";
    let copy = out.join("measure.html");
    std::fs::write(&copy, html.replacen("</body>", probe, 1)).unwrap();
    let dom = headless(&browser, &copy, 1000, &["--dump-dom"]);
    let (body, page_width, window, table) = (
        measured(&dom, "body"),
        measured(&dom, "page"),
        measured(&dom, "window"),
        measured(&dom, "table"),
    );
    assert_eq!(window, WIDTH, "{dom}");
    assert!(
        table > window,
        "the widest table ({table} px) fits the window ({window} px): the test proves nothing"
    );
    assert!(
        body <= window && page_width <= window,
        "the page scrolls sideways: body {body} px, page {page_width} px, window {window} px"
    );

    // The screenshot, decoded: the window's width, and not one colour throughout.
    let shot = out.join("report.png");
    headless(
        &browser,
        &page,
        900,
        &[&format!("--screenshot={}", shot.display())],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (WIDTH, 900));
    let px = info.color_type.samples();
    let pixels: std::collections::BTreeSet<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    assert!(
        pixels.len() > 16,
        "the screenshot is nearly blank: {} colours",
        pixels.len()
    );
    let _ = std::fs::remove_dir_all(out);
}
