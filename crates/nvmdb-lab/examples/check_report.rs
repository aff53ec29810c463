//! Renders a written report (`DIR/index.html`) in headless Chromium and checks that the
//! scorecard (the measured claims' table, then the checks of the set-up) has one row per
//! claim of `DIR/scorecard.json` and that every plot the
//! experiments wrote (`DIR/*/plot-*.svg`) is laid out with a size. CI runs it on the
//! report of `nvmdb reproduce`:
//!
//! ```sh
//! cargo run --release -p nvmdb-lab --example check_report -- report
//! ```

#![allow(clippy::unwrap_used, reason = "a check's panic is its failure report")]

#[path = "../tests/integration/chromium/mod.rs"]
mod chromium;

use std::path::PathBuf;

fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: check_report REPORT_DIR");
        std::process::exit(2);
    };
    let chromium = chromium::find_chromium().expect("chromium is on PATH");
    let scorecard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scorecard.json")).unwrap()).unwrap();
    let claims = scorecard["rows"].as_array().expect("scorecard.json has rows").len();
    let mut svgs = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            for file in std::fs::read_dir(&path).unwrap() {
                let name = file.unwrap().file_name().to_string_lossy().into_owned();
                svgs += usize::from(name.starts_with("plot-") && name.ends_with(".svg"));
            }
        }
    }
    let checks = scorecard["rows"].as_array().unwrap().iter().filter(|r| r["kind"] != "measured").count();
    let layout = chromium::render(&chromium, &dir).unwrap();
    let tables = if checks == 0 { 1 } else { 2 };
    assert_eq!(layout.scorecards.len(), tables, "the measured claims, then any checks of the set-up: {layout:?}");
    let (w, h, _) = layout.scorecards[0];
    assert!(w > 300 && h > 60, "scorecard rendered {w}×{h}");
    for &(w, h, rows) in &layout.scorecards {
        assert!(w > 300 && h > 30 && rows > 1, "a scorecard table rendered {w}×{h} with {rows} rows");
    }
    let rows: usize = layout.scorecards.iter().map(|&(_, _, rows)| rows).sum();
    assert_eq!(rows, claims + tables, "a header per table and a row per claim of scorecard.json");
    assert_eq!(layout.plots.len(), svgs, "every plot file is shown");
    for &(w, h) in &layout.plots {
        assert!(w > 200 && h > 100, "a plot rendered {w}×{h}");
    }
    println!(
        "{}: the scorecard ({claims} claims, {checks} of them checks of the set-up; {w}×{h} px) and all {svgs} plots \
         are laid out",
        dir.display()
    );
}
