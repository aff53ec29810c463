//! Renders a small report in headless Chromium and checks that the scorecard and every plot
//! are really laid out with a size. Without Chromium the test is skipped, unless
//! `NVMDB_REQUIRE_CHROMIUM` is set (as in CI), when it fails. With `NVMDB_REPORT_DIR` set
//! the report is written there and kept, e.g. for a screenshot.

use crate::chromium;
use std::path::PathBuf;

use nvmdb_lab::report::{write_report, Finished, RunMeta};
use nvmdb_lab::{Cell, Claim, ClaimKind, Outcome, Plot, Relation, Scale, Stated, Table, Tolerance, WouldHoldWhen};

const CLAIMS: &[Claim] = &[
    Claim {
        id: "demo-wear-gain",
        experiment: "demo-wear",
        seed: "CIDR 2011",
        figure: "Figure 6(a)",
        claim: "Flip-N-Write cuts bits written per insert by at least 2×",
        stated: Stated::AtLeast(2.0),
        tolerance: Tolerance::Relative(0.1),
        unit: "×",
        kind: ClaimKind::Measured,
    },
    Claim {
        id: "demo-wear-order",
        experiment: "demo-wear",
        seed: "CIDR 2011",
        figure: "Figure 6(b)",
        claim: "Larger nodes write more bits per insert",
        stated: Stated::Holds,
        tolerance: Tolerance::Exact,
        unit: "",
        kind: ClaimKind::Measured,
    },
    Claim {
        id: "demo-energy-share",
        experiment: "demo-energy",
        seed: "Thesis",
        figure: "Figure 5.6(c)",
        claim: "The PCM log saves 10–20% of the energy",
        stated: Stated::Range { lo: 10.0, hi: 20.0 },
        tolerance: Tolerance::Absolute(2.0),
        unit: "%",
        kind: ClaimKind::Measured,
    },
    Claim {
        id: "demo-wear-line",
        experiment: "demo-wear",
        seed: "CIDR 2011",
        figure: "Table 2",
        claim: "A line is 64 bytes",
        stated: Stated::Value(64.0),
        tolerance: Tolerance::Exact,
        unit: " B",
        kind: ClaimKind::Constant,
    },
    Claim {
        id: "demo-energy-erases",
        experiment: "demo-energy",
        seed: "Thesis",
        figure: "Figure 5.5(b)",
        claim: "Erases per GB written",
        stated: Stated::Value(300.0),
        tolerance: Tolerance::Relative(0.25),
        unit: "",
        kind: ClaimKind::Measured,
    },
];

fn sample() -> Vec<Finished> {
    let sizes = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
    let mut wear_plot = Plot::new("Bits programmed per insert", "node size (cache lines)", "bits per insert");
    wear_plot.series("plain", sizes.iter().map(|&n| (n, 512.0 * n)).collect());
    wear_plot.series("flip-n-write", sizes.iter().map(|&n| (n, 200.0 * n)).collect());
    wear_plot.paper_series("flip-n-write", vec![(1.0, 230.0), (8.0, 1700.0), (32.0, 6900.0)]);
    let mut table = Table::new("Figure 6(a): gain by node size", &["node lines", "paper", "ours"]);
    for &n in &sizes {
        table.row(vec![Cell::from(n as u64), CLAIMS[0].stated_cell(), Cell::from(2.56)]);
    }
    let mut wear = Outcome {
        summary: "Inserts into B+-trees of each node size, counting programmed bits.".into(),
        tables: vec![table],
        plots: vec![wear_plot],
        notes: vec!["Flip-N-Write groups of 32 bits.".into()],
        ..Outcome::default()
    };
    wear.measure_noted("demo-wear-gain", 2.56, "ours counts flip cells too");
    wear.holds("demo-wear-order", true);
    wear.measure_noted("demo-wear-line", 64.0, "the preset's line");
    wear.would_hold_when(
        "demo-energy-share",
        WouldHoldWhen {
            parameter: "buffer pool".into(),
            value: Some(3.5),
            unit: "MB".into(),
            range_tried: [1.0, 5.0],
            relation: Relation::AtLeast,
        },
    );

    let mut energy_plot = Plot::new("Energy by buffer pool", "buffer pool, MB", "J");
    energy_plot.log_y = true;
    energy_plot.series("baseline", vec![(1.0, 900.0), (2.0, 300.0), (3.0, 90.0), (5.0, 0.0)]);
    energy_plot.series("PCM log", vec![(1.0, 700.0), (2.0, 260.0), (3.0, 75.0), (5.0, 20.0)]);
    let mut energy = Outcome {
        summary: "TPC-C through each buffer pool size.".into(),
        plots: vec![energy_plot],
        ..Outcome::default()
    };
    energy.measure("demo-energy-share", 24.5);
    let finished = |id: &str, title: &str, outcome| Finished {
        id: id.into(),
        title: title.into(),
        source: "seed".into(),
        outcome,
    };
    vec![finished("demo-wear", "Wear by node size", wear), finished("demo-energy", "Energy", energy)]
}

#[test]
fn report_renders_scorecard_and_plots_in_chromium() {
    let Some(chromium) = chromium::find_chromium() else {
        if std::env::var_os("NVMDB_REQUIRE_CHROMIUM").is_some() {
            panic!("NVMDB_REQUIRE_CHROMIUM is set but no chromium is on PATH");
        }
        eprintln!("SKIPPED report_renders_scorecard_and_plots_in_chromium: chromium is not installed");
        return;
    };
    let keep = std::env::var_os("NVMDB_REPORT_DIR").map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(|| {
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-browser-{}", std::process::id()))
    });
    let _ = std::fs::remove_dir_all(&dir);
    let finished = sample();
    let meta = RunMeta { seed: 1, scale: Scale::Quick, git_commit: "test".into(), version: "0.1.0".into() };
    write_report(&dir, &finished, &meta, CLAIMS, &[], &nvmdb_lab::PaperStore::default()).unwrap();
    let layout = chromium::render(&chromium, &dir).unwrap();

    // The measured claims, then the checks of the set-up.
    assert_eq!(layout.scorecards.len(), 2, "{layout:?}");
    let (w, h, rows) = layout.scorecards[0];
    assert!(w > 300 && h > 60, "scorecard rendered {w}×{h}");
    assert_eq!(rows, 5, "header and one row per measured claim: {layout:?}");
    let (w, h, rows) = layout.scorecards[1];
    assert!(w > 300 && h > 30, "checks rendered {w}×{h}");
    assert_eq!(rows, 2, "header and the constant claim: {layout:?}");

    let expected: usize = finished.iter().map(|f| f.outcome.plots.len()).sum();
    assert_eq!(layout.plots.len(), expected, "{layout:?}");
    for &(w, h) in &layout.plots {
        assert!(w > 200 && h > 100, "plot rendered {w}×{h}");
    }

    // Reproduces green, differs amber, not measured grey: the colours of the style sheet.
    let expected = [
        ("reproduces", "rgb(215,240,216)"),
        ("reproduces", "rgb(215,240,216)"),
        ("differs", "rgb(253,232,184)"),
        ("not measured", "rgb(229,231,235)"),
        ("reproduces", "rgb(215,240,216)"),
    ];
    let got: Vec<(&str, &str)> = layout.verdicts.iter().map(|(v, c)| (v.as_str(), c.as_str())).collect();
    assert_eq!(got, expected, "{layout:?}");

    if keep.is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
