//! `nvmdb kv demo`: its flags' errors, its event stream read over a plain TCP connection,
//! its end on Ctrl-C, and its page in headless Chromium while the runs progress. Without Chromium the
//! browser test is skipped, unless `NVMDB_REQUIRE_CHROMIUM` is set (as in CI), when it
//! fails. With `NVMDB_SCREENSHOT_DIR` set (an absolute path), the browser test writes
//! screenshots of the page there: mid-run (`kv-demo.png`) and at the end
//! (`kv-demo-final.png`).

use crate::chromium;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn nvmdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().expect("nvmdb runs")
}

/// The one line a refused run prints, after checking it exited 2 with nothing on stdout.
fn refusal(args: &[&str]) -> String {
    let out = nvmdb(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn a_port_in_use_is_refused_naming_the_flag() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let line = refusal(&["kv", "demo", "--records", "100", "--serve", &addr]);
    assert_eq!(line, format!("--serve {addr}: the port is already in use"));
}

#[test]
fn bad_addresses_and_record_counts_are_refused_naming_the_flag() {
    for value in ["localhost:8080", "127.0.0.1", "127.0.0.1:65536", "8080", "127.0.0.1:80x"] {
        let line = refusal(&["kv", "demo", "--records", "100", "--serve", value]);
        assert!(line.starts_with(&format!("--serve '{value}': not an IP:PORT address")), "{line}");
    }
    // An empty value is refused as every text flag's is.
    let line = refusal(&["kv", "demo", "--records", "100", "--serve", ""]);
    assert!(line.contains("--serve") && line.contains("a value is required"), "{line}");
    for records in ["0", "-5", "10000001", "many"] {
        let line = refusal(&["kv", "demo", &format!("--records={records}")]);
        assert!(line.contains("--records"), "{line}");
    }
}

/// A demo serving on a free port, with the address it printed; stderr is drained by a
/// thread from then on (so the child never blocks on a full pipe). Killed on drop.
struct Demo {
    child: Child,
    addr: String,
}

impl Demo {
    fn start(records: &str) -> Demo {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nvmdb"))
            .args(["kv", "demo", "--records", records, "--seed", "7", "--json", "--serve", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nvmdb runs");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let addr = line
            .strip_prefix("live monitor at http://")
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("first stderr line: {line}"))
            .to_string();
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Demo { child, addr }
    }

    /// Waits for the exit (at most `limit`) and returns the runs' JSON reports.
    fn finish(mut self, limit: Duration) -> Vec<serde_json::Value> {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the demo did not exit within {limit:?}");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "{status}");
        let mut stdout: ChildStdout = self.child.stdout.take().unwrap();
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        serde_json::from_str::<Vec<serde_json::Value>>(&text).unwrap()
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Operations per simulated second of a report, as the engine computed it.
fn ops_per_s(report: &serde_json::Value) -> f64 {
    report["ops_per_s"].as_f64().unwrap()
}

/// Record counts the event-stream test tries in turn: a faster machine finishes the
/// smaller ones before enough progress could be watched, and then the next is tried.
const STREAM_RECORDS: [u64; 3] = [30_000, 120_000, 480_000];
/// The same for the browser test, which reads the page about every 200 ms.
const PAGE_RECORDS: [u64; 3] = [50_000, 200_000, 800_000];

/// What one demo's event stream carried.
struct Stream {
    records: u64,
    /// Each progress event's (load_done + ops_done) summed over the runs.
    totals: Vec<u64>,
    /// Samples received per run.
    samples: Vec<usize>,
    /// The last progress event.
    last: serde_json::Value,
    ended_with_done: bool,
    reports: Vec<serde_json::Value>,
}

impl Stream {
    /// How many times the summed progress rose from one event to the next.
    fn rises(&self) -> usize {
        self.totals.windows(2).filter(|w| w[0] < w[1]).count()
    }
}

fn stream_events(records: u64) -> Stream {
    let demo = Demo::start(&records.to_string());
    let mut stream = TcpStream::connect(&demo.addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    stream.write_all(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK\r\n");
    let mut seen = Stream {
        records,
        totals: Vec::new(),
        samples: vec![0; 12],
        last: serde_json::Value::Null,
        ended_with_done: false,
        reports: Vec::new(),
    };
    let mut event = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(name) = line.strip_prefix("event: ") {
            event = name.trim().to_string();
            seen.ended_with_done = event == "done";
        } else if let Some(data) = line.strip_prefix("data: ") {
            if event == "progress" {
                let state: serde_json::Value = serde_json::from_str(data).unwrap();
                let runs = state["runs"].as_array().unwrap();
                assert_eq!(runs.len(), 12, "four engines × three benchmarks");
                seen.totals.push(
                    runs.iter().map(|r| r["load_done"].as_u64().unwrap() + r["ops_done"].as_u64().unwrap()).sum(),
                );
                for (n, run) in seen.samples.iter_mut().zip(runs) {
                    *n += run["samples"].as_array().unwrap().len();
                }
                seen.last = state;
            }
        }
    }
    seen.reports = demo.finish(Duration::from_secs(600));
    seen
}

#[test]
fn events_arrive_and_progress_increases_to_the_final_numbers() {
    let mut seen = stream_events(STREAM_RECORDS[0]);
    for records in &STREAM_RECORDS[1..] {
        if seen.rises() >= 3 {
            break;
        }
        eprintln!("{} records: progress rose {} times; trying {records}", seen.records, seen.rises());
        seen = stream_events(*records);
    }
    let (records, totals) = (seen.records, &seen.totals);
    assert!(seen.ended_with_done, "the stream ends with a done event");
    assert!(totals.windows(2).all(|w| w[0] <= w[1]), "progress went backwards: {totals:?}");
    assert!(seen.rises() >= 3, "progress seen increasing only {} times: {totals:?}", seen.rises());
    assert_eq!(*totals.last().unwrap(), 12 * records + 8 * records, "every operation and every load record");
    assert!(seen.samples.iter().all(|n| (2..=202).contains(n)), "samples per run: {:?}", seen.samples);

    // The monitor's final numbers are the engine's own.
    assert_eq!(seen.reports.len(), 12);
    for (run, report) in seen.last["runs"].as_array().unwrap().iter().zip(&seen.reports) {
        assert_eq!(run["engine"], report["engine"]);
        assert_eq!(run["benchmark"], report["benchmark"]);
        assert_eq!(run["finished"], true);
        assert_eq!(run["ops_done"], report["stats"]["ops"]);
        assert_eq!(run["sim_ns"], report["stats"]["sim_ns"]);
        let shown = run["ops_done"].as_f64().unwrap() * 1e9 / run["sim_ns"].as_f64().unwrap();
        assert!((shown - ops_per_s(report)).abs() < 1e-6 * shown, "{shown} vs {report}");
    }
}

#[test]
fn the_demo_reports_what_kv_run_reports() {
    let out = nvmdb(&["kv", "demo", "--records", "6000", "--seed", "3", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let reports: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reports.len(), 12);
    for report in &reports {
        let (engine, benchmark) = (report["engine"].as_str().unwrap(), report["benchmark"].as_str().unwrap());
        let args =
            ["kv", "run", "--engine", engine, "--workload", benchmark, "--records", "6000", "--seed", "3", "--json"];
        let out = nvmdb(&args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let single: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(single["ops_per_s"], report["ops_per_s"], "{engine} {benchmark}");
        assert_eq!(single["sim_ns"], report["stats"]["sim_ns"], "{engine} {benchmark}");
    }
}

/// What the page shows: the status line, every progress cell's count, every gauge's value,
/// the chart lines drawn and the first gauge's rendered width.
const READ_PAGE: &str = "({
  status: document.getElementById('status').textContent,
  counts: Array.from(document.querySelectorAll('#progress .count')).map(function (e) { return e.textContent; }),
  gauges: Array.from(document.querySelectorAll('.gauge-value')).map(function (e) { return e.textContent; }),
  lines: document.querySelectorAll('#charts polyline').length,
  gauge_width: document.querySelector('.gauge svg').getBoundingClientRect().width
})";

fn number(text: &str) -> f64 {
    text.replace(',', "").parse().unwrap_or_else(|_| panic!("not a number: '{text}'"))
}

/// What the page showed during one demo.
struct Watched {
    records: u64,
    /// Readings while the status said running.
    running: Vec<serde_json::Value>,
    /// The reading once every run had finished.
    last: serde_json::Value,
    reports: Vec<serde_json::Value>,
}

/// Starts a demo of `records` records, opens its page and reads it every 200 ms until the
/// runs are over; screenshots (with `NVMDB_SCREENSHOT_DIR`) mid-run and at the end.
fn watch_page(browser: &mut chromium::Browser, records: u64) -> Watched {
    let shots = std::env::var_os("NVMDB_SCREENSHOT_DIR").map(std::path::PathBuf::from);
    let demo = Demo::start(&records.to_string());
    browser.navigate(&format!("http://{}/", demo.addr));
    browser.wait_for("document.querySelectorAll('#progress .count').length === 12", Duration::from_secs(60));
    let mut running = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(600);
    let last = loop {
        let page = browser.eval(READ_PAGE);
        let status = page["status"].as_str().unwrap().to_string();
        if status.starts_with("all 12 runs finished") {
            if let Some(dir) = &shots {
                std::fs::write(dir.join("kv-demo-final.png"), browser.screenshot_png()).unwrap();
            }
            break page;
        }
        assert!(status.starts_with("running"), "status '{status}'");
        if running.len() == 5 {
            if let Some(dir) = &shots {
                std::fs::write(dir.join("kv-demo.png"), browser.screenshot_png()).unwrap();
            }
        }
        running.push(page);
        assert!(Instant::now() < deadline, "the runs did not finish within 600 s");
        std::thread::sleep(Duration::from_millis(200));
    };
    let reports = demo.finish(Duration::from_secs(60));
    Watched { records, running, last, reports }
}

/// `12,345`, as the page writes numbers.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn the_page_shows_numbers_that_change_while_the_runs_progress() {
    let Some(chromium) = chromium::find_chromium() else {
        if std::env::var_os("NVMDB_REQUIRE_CHROMIUM").is_some() {
            panic!("NVMDB_REQUIRE_CHROMIUM is set but no chromium is on PATH");
        }
        eprintln!("SKIPPED the_page_shows_numbers_that_change_while_the_runs_progress: chromium is not installed");
        return;
    };
    let profile = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("nvmdb-kv-demo-chromium-{}", std::process::id()));
    // The browser first, so that its start-up does not eat into the runs.
    let mut browser = chromium::Browser::start(&chromium, &profile);
    let mut watched = watch_page(&mut browser, PAGE_RECORDS[0]);
    for records in &PAGE_RECORDS[1..] {
        if watched.running.len() >= 5 {
            break;
        }
        eprintln!("{} records: {} readings while running; trying {records}", watched.records, watched.running.len());
        watched = watch_page(&mut browser, *records);
    }
    let Watched { records, running, last, reports } = watched;

    // Displayed operations done, summed over the progress cells, at each reading.
    let done: Vec<f64> = running
        .iter()
        .map(|p| {
            p["counts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| number(c.as_str().unwrap().split(" / ").next().unwrap()))
                .sum()
        })
        .collect();
    let rises = done.windows(2).filter(|w| w[0] < w[1]).count();
    assert!(rises >= 3, "the displayed counts rose {rises} times while running: {done:?}");
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "{done:?}");
    let gauges: Vec<&serde_json::Value> = running.iter().map(|p| &p["gauges"]).collect();
    assert!(gauges.windows(2).any(|w| w[0] != w[1]), "the gauges never changed: {gauges:?}");
    assert!(running[0]["gauge_width"].as_f64().unwrap() > 100.0, "{}", running[0]);

    // The final page: every run complete, a chart line per run, and each engine's gauge
    // showing its last benchmark's mean, the number the engine reports.
    let complete = format!("{0} / {0}", thousands(records));
    let counts = last["counts"].as_array().unwrap();
    assert!(counts.iter().all(|c| c.as_str() == Some(complete.as_str())), "{counts:?}");
    assert_eq!(last["lines"], 12);
    let shown: Vec<f64> = last["gauges"].as_array().unwrap().iter().map(|g| number(g.as_str().unwrap())).collect();
    let searches: Vec<f64> = reports.iter().filter(|r| r["benchmark"] == "search").map(ops_per_s).collect();
    assert_eq!(shown.len(), 4);
    for (shown, engine) in shown.iter().zip(&searches) {
        assert!((shown - engine).abs() <= 1.0, "gauge {shown} vs the engine's {engine}");
    }
}

/// Ctrl-C (SIGINT, sent with `kill -INT`) ends a serving demo in the middle of its runs
/// (exit code 130), and its port is free again.
#[cfg(unix)]
#[test]
fn ctrl_c_ends_a_serving_demo_and_frees_its_port() {
    use std::os::unix::process::ExitStatusExt;

    // A process started in the background by a shell without job control ignores SIGINT,
    // and so does every child it starts: the demo would never see the signal.
    if sigint_ignored() {
        eprintln!("SKIPPED ctrl_c_ends_a_serving_demo_and_frees_its_port: SIGINT is ignored in this process");
        return;
    }
    // Enough records that the runs are far from over when the signal comes.
    let mut demo = Demo::start("200000");
    let mut stream = TcpStream::connect(&demo.addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    stream.write_all(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    while !line.starts_with("event: progress") {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended before any progress");
    }
    assert!(demo.child.try_wait().unwrap().is_none(), "the demo ended before the signal");
    let kill = Command::new("kill").args(["-INT", &demo.child.id().to_string()]).status().expect("kill runs");
    assert!(kill.success());
    let sent = Instant::now();
    let status = loop {
        if let Some(status) = demo.child.try_wait().unwrap() {
            break status;
        }
        assert!(sent.elapsed() < Duration::from_secs(10), "the demo still runs 10 s after SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    // The engines stopped at their next operation: "interrupted", exit code 130.
    assert_eq!((status.code(), status.signal()), (Some(130), None), "{status}");
    // The event stream ends, and the address can be bound again.
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    TcpListener::bind(&demo.addr).unwrap_or_else(|e| panic!("{} is still taken: {e}", demo.addr));
}

/// Whether this process ignores SIGINT (Linux: bit 1 of `SigIgn` in `/proc/self/status`);
/// `false` where that cannot be read.
#[cfg(unix)]
fn sigint_ignored() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:")).map(str::trim);
    mask.and_then(|m| u64::from_str_radix(m, 16).ok()).is_some_and(|m| m & (1 << 1) != 0)
}
