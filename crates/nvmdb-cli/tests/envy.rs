//! End-to-end checks of `nvmdb envy replay` and `nvmdb envy run`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn nvmdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().expect("nvmdb runs")
}

fn temp(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nvmdb-envy-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

fn json(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.find('{').expect("a JSON object");
    serde_json::from_str(&text[start..]).expect("valid JSON")
}

#[test]
fn replay_reads_back_writes_and_zeros() {
    let trace = temp("small.trace", "W 0 0102\nR 0 4\nW 0xff aabbccdd # spans two pages\nR 254 6\n");
    let out = nvmdb(&["envy", "replay", "--trace", trace.to_str().unwrap(), "--size-mb", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().take(2).collect();
    assert_eq!(lines, ["01020000", "00aabbccdd00"]);
}

/// A trace long enough to clean many times in a 1 MiB space at 90 % utilisation.
fn long_trace() -> String {
    let mut x = 12345u64;
    let mut next = move |m: u64| {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % m
    };
    let mut s = String::new();
    for i in 0..12_000u64 {
        let len = 1 + next(32);
        let addr = next((1 << 20) - len);
        if i % 4 == 0 {
            s.push_str(&format!("R {addr} {len}\n"));
        } else {
            let hex: String = (0..len).map(|j| format!("{:02x}", (i + j) as u8)).collect();
            s.push_str(&format!("W {addr:#x} {hex}\n"));
        }
    }
    s
}

#[test]
fn power_loss_loses_nothing_at_every_policy() {
    let trace = temp("long.trace", &long_trace());
    let trace = trace.to_str().unwrap();
    let reference = nvmdb(&["envy", "replay", "--trace", trace, "--size-mb", "1", "--utilization", "0.9"]);
    assert!(reference.status.success());
    let reference_reads: Vec<String> =
        String::from_utf8_lossy(&reference.stdout).lines().filter(|l| !l.contains(' ')).map(String::from).collect();
    for cleaning in ["greedy", "fifo", "locality", "hybrid"] {
        let reads = temp(&format!("reads-{cleaning}.txt"), "");
        let out = nvmdb(&[
            "envy",
            "replay",
            "--trace",
            trace,
            "--size-mb",
            "1",
            "--utilization",
            "0.9",
            "--cleaning",
            cleaning,
            "--sram-mb",
            "0.01",
            "--power-loss-at",
            "7000",
            "--reads",
            reads.to_str().unwrap(),
            "--json",
        ]);
        assert!(out.status.success(), "{cleaning}: {}", String::from_utf8_lossy(&out.stderr));
        let report = json(&out);
        assert_eq!(report["lost_bytes"], 0, "{cleaning}");
        assert!(report["erases"].as_u64().unwrap() > 100, "{cleaning}: the trace must clean: {report}");
        let got: Vec<String> = std::fs::read_to_string(&reads).unwrap().lines().map(String::from).collect();
        assert_eq!(got.len(), 3_000);
        assert_eq!(got, reference_reads[..3_000], "{cleaning}: reads differ from the run without a cut");
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases = [
        ("bad-hex.trace", "W 0 0g\n", ":1:"),
        ("odd.trace", "R 0 1\nW 0 abc\n", ":2:"),
        ("range.trace", "R 1048575 2\n", ":1:"),
        ("op.trace", "X 1 2\n", ":1:"),
        ("zero.trace", "R 0 0\n", ":1:"),
        ("huge.trace", "R 0 18446744073709551615\n", ":1:"),
    ];
    for (name, contents, at) in cases {
        let trace = temp(name, contents);
        let out = nvmdb(&["envy", "replay", "--trace", trace.to_str().unwrap(), "--size-mb", "1"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name) && err.contains(at), "{name}: {err}");
    }
    let trace = temp("ok.trace", "R 0 1\n");
    let t = trace.to_str().unwrap();
    for (args, flag) in [
        (vec!["--reads", t], "--reads"),
        (vec!["--utilization", "1.0"], "--utilization"),
        (vec!["--size-mb", "0"], "--size-mb"),
        (vec!["--size-mb", "18446744073709551615"], "--size-mb"),
        (vec!["--sram-mb", "0"], "--sram-mb"),
        (vec!["--cleaning", "lru"], "--cleaning"),
        (vec!["--power-loss-at", "0"], "--power-loss-at"),
    ] {
        let mut full = vec!["envy", "replay", "--trace", t];
        full.extend(args);
        let out = nvmdb(&full);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains(flag), "{flag}: {err}");
    }
}

#[test]
fn run_reports_cleaning_of_a_bimodal_workload() {
    let out = nvmdb(&["envy", "run", "--workload", "bimodal", "--flash-mb", "2", "--turnovers", "2", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json(&out);
    assert_eq!(report["workload"], "90/10");
    assert!(report["cleaning_cost"].as_f64().unwrap() > 0.0, "{report}");
}
