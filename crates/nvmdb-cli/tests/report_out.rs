//! `--out` of `run` and `reproduce` is checked before any experiment starts, and the
//! single-experiment run writes its files and the scorecard rows of its claims.

use std::process::{Command, Output};

fn nvmdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().expect("nvmdb runs")
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nvmdb-out-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn out_that_is_a_file_is_refused_before_running_and_left_alone() {
    let dir = scratch("file");
    let file = dir.join("not-a-dir");
    std::fs::write(&file, "keep me").unwrap();
    for command in ["run", "reproduce"] {
        let mut args = vec![command];
        if command == "run" {
            args.push("cidr-fig5");
        }
        let out = file.to_str().unwrap();
        args.extend(["--out", out]);
        let output = nvmdb(&args);
        assert_eq!(output.status.code(), Some(2), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{command}: one line, got {stderr}");
        assert!(stderr.contains("--out") && stderr.contains("not a directory"), "{stderr}");
        assert!(!stderr.contains("running"), "{command} must not start an experiment: {stderr}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    }
}

#[test]
fn run_writes_results_into_out() {
    let dir = scratch("run");
    let output = nvmdb(&["run", "cidr-fig5", "--out", dir.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let results = dir.join("cidr-fig5").join("results.json");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(results).unwrap()).unwrap();
    assert_eq!(json["id"], "cidr-fig5");
    assert!(String::from_utf8_lossy(&output.stdout).contains("Scorecard"));
}
