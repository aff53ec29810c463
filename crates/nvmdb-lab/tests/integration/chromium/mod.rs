//! Headless Chromium for the report's browser checks: renders a report's `index.html`
//! inside a wrapper page and returns what was laid out. Used by the browser test and by
//! the `check_report` example, which CI runs on the real report.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What Chromium laid out: the scorecard tables (width, height, rows), every plot's size
/// and each verdict cell's text and background colour.
#[derive(Debug, Default)]
pub struct Layout {
    pub scorecards: Vec<(u32, u32, usize)>,
    pub plots: Vec<(u32, u32)>,
    pub verdicts: Vec<(String, String)>,
}

pub fn find_chromium() -> Option<PathBuf> {
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

/// Renders `dir/index.html` with `chromium` and reads back its layout.
pub fn render(chromium: &Path, dir: &Path) -> Result<Layout, String> {
    let wrapper = dir.join("browser-check.html");
    std::fs::write(&wrapper, WRAPPER).map_err(|e| format!("{}: {e}", wrapper.display()))?;
    let dom = dump_dom(chromium, &wrapper, dir, Duration::from_secs(90));
    std::fs::remove_file(&wrapper).map_err(|e| format!("{}: {e}", wrapper.display()))?;
    let marker = "<pre id=\"result\">";
    let start = dom.find(marker).ok_or("no result element in the dump")? + marker.len();
    let end = start + dom[start..].find("</pre>").ok_or("unterminated result element")?;
    let mut layout = Layout::default();
    for line in dom[start..end].lines() {
        let words: Vec<&str> = line.split(' ').collect();
        let number = |i: usize| words.get(i).and_then(|w| w.parse::<u32>().ok()).ok_or(format!("bad line '{line}'"));
        match words[0] {
            "scorecard" => layout.scorecards.push((number(1)?, number(2)?, number(3)? as usize)),
            "plot" => layout.plots.push((number(1)?, number(2)?)),
            "verdict" if words.len() >= 3 => {
                layout.verdicts.push((words[1..words.len() - 1].join(" "), words[words.len() - 1].to_string()))
            }
            _ => return Err(format!("the page reported '{line}'")),
        }
    }
    Ok(layout)
}
