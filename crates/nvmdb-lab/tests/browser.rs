//! Renders a small report in headless Chromium and checks that the scorecard and every plot
//! are really laid out with a size. Without Chromium the test is skipped, unless
//! `NVMDB_REQUIRE_CHROMIUM` is set (as in CI), when it fails. With `NVMDB_REPORT_DIR` set
//! the report is written there and kept, e.g. for a screenshot.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nvmdb_lab::report::{write_report, Finished, RunMeta};
use nvmdb_lab::{Cell, Claim, Outcome, Plot, Scale, Stated, Table, Tolerance};

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

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Opens `index.html` in an iframe and, once it has loaded, writes the rendered size of
/// the scorecard, of every plot and the verdict cells' colours into `#result`. The
/// report itself stays free of test script.
const WRAPPER: &str = r#"<!doctype html><html><body>
<iframe id="report" src="index.html" style="width:1280px;height:2400px"></iframe>
<pre id="result">not loaded</pre>
<script>
document.getElementById('report').addEventListener('load', function () {
  var out = [];
  try {
    var d = this.contentDocument;
    var size = function (el) { var b = el.getBoundingClientRect(); return Math.round(b.width) + ' ' + Math.round(b.height); };
    d.querySelectorAll('table.scorecard').forEach(function (t) {
      out.push('scorecard ' + size(t) + ' ' + t.querySelectorAll('tr').length);
    });
    d.querySelectorAll('img, svg, object').forEach(function (p) { out.push('plot ' + size(p)); });
    d.querySelectorAll('td.verdict').forEach(function (td) {
      out.push('verdict ' + td.textContent + ' ' + getComputedStyle(td).backgroundColor.replace(/ /g, ''));
    });
  } catch (e) {
    out.push('error ' + e);
  }
  document.getElementById('result').textContent = out.join('\n');
});
</script></body></html>
"#;

/// Runs Chromium on `page`, killing it if it is not done within `limit`; returns stdout.
fn dump_dom(chromium: &Path, page: &Path, dir: &Path, limit: Duration) -> String {
    let profile = dir.join("chromium-profile");
    let stdout_path = dir.join("dom.html");
    let stdout = std::fs::File::create(&stdout_path).unwrap();
    let stderr = std::fs::File::create(dir.join("chromium.log")).unwrap();
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--allow-file-access-from-files",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(page)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let log = std::fs::read_to_string(dir.join("chromium.log")).unwrap_or_default();
    assert!(status.success(), "chromium failed ({status}): {log}");
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::read_to_string(&stdout_path).unwrap()
}

fn size(words: &[&str]) -> (u32, u32) {
    (words[0].parse().unwrap(), words[1].parse().unwrap())
}

#[test]
fn report_renders_scorecard_and_plots_in_chromium() {
    let Some(chromium) = find_chromium() else {
        if std::env::var_os("NVMDB_REQUIRE_CHROMIUM").is_some() {
            panic!("NVMDB_REQUIRE_CHROMIUM is set but no chromium is on PATH");
        }
        eprintln!("SKIPPED report_renders_scorecard_and_plots_in_chromium: chromium is not installed");
        return;
    };
    let keep = std::env::var_os("NVMDB_REPORT_DIR").map(PathBuf::from);
    let dir =
        keep.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("nvmdb-browser-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir);
    let finished = sample();
    let meta = RunMeta { seed: 1, scale: Scale::Quick, git_commit: "test".into(), version: "0.1.0".into() };
    write_report(&dir, &finished, &meta, CLAIMS).unwrap();
    let wrapper = dir.join("browser-check.html");
    std::fs::write(&wrapper, WRAPPER).unwrap();

    let dom = dump_dom(&chromium, &wrapper, &dir, Duration::from_secs(90));
    let start = dom.find("<pre id=\"result\">").expect("result element in the dump") + "<pre id=\"result\">".len();
    let result = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let lines: Vec<Vec<&str>> = result.lines().map(|l| l.split(' ').collect()).collect();
    assert!(!lines.iter().any(|l| l[0] == "error" || l[0] == "not"), "{result}");

    let scorecards: Vec<&Vec<&str>> = lines.iter().filter(|l| l[0] == "scorecard").collect();
    assert_eq!(scorecards.len(), 1, "{result}");
    let (w, h) = size(&scorecards[0][1..]);
    assert!(w > 300 && h > 60, "scorecard rendered {w}×{h}");
    assert_eq!(scorecards[0][3], "5", "header and one row per claim: {result}");

    let plots: Vec<(u32, u32)> = lines.iter().filter(|l| l[0] == "plot").map(|l| size(&l[1..])).collect();
    let expected: usize = finished.iter().map(|f| f.outcome.plots.len()).sum();
    assert_eq!(plots.len(), expected, "{result}");
    for (w, h) in plots {
        assert!(w > 200 && h > 100, "plot rendered {w}×{h}");
    }

    // Reproduces green, differs amber, not measured grey: the colours of the style sheet.
    let verdicts: Vec<(String, &str)> =
        lines.iter().filter(|l| l[0] == "verdict").map(|l| (l[1..l.len() - 1].join(" "), l[l.len() - 1])).collect();
    let expected = [
        ("reproduces", "rgb(215,240,216)"),
        ("reproduces", "rgb(215,240,216)"),
        ("differs", "rgb(253,232,184)"),
        ("not measured", "rgb(229,231,235)"),
    ];
    let got: Vec<(&str, &str)> = verdicts.iter().map(|(v, c)| (v.as_str(), *c)).collect();
    assert_eq!(got, expected, "{result}");

    if keep.is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
