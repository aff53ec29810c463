//! `--out` of `run` and `reproduce` is checked before any experiment starts, and the
//! single-experiment run writes its files and the scorecard rows of its claims.

use std::process::{Command, Output};

fn nvmdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().expect("nvmdb runs")
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-out-test-{}-{name}", std::process::id()));
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
    // Run from a directory outside any checkout: the report names the commit the binary
    // was built from, not the current directory's.
    let output = Command::new(env!("CARGO_BIN_EXE_nvmdb"))
        .args(["run", "cidr-fig5", "--out", dir.to_str().unwrap()])
        .current_dir(&dir)
        .output()
        .expect("nvmdb runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let results = dir.join("cidr-fig5").join("results.json");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(results).unwrap()).unwrap();
    assert_eq!(json["id"], "cidr-fig5");
    let built_from = env!("NVMDB_GIT_COMMIT");
    assert!(built_from == "unknown" || built_from.len() == 40, "{built_from}");
    assert_eq!(json["meta"]["git_commit"], built_from);
    assert!(String::from_utf8_lossy(&output.stdout).contains("Scorecard"));
}

/// Every file under `dir`, by its path relative to `dir`, with its bytes.
fn files(dir: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(path.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// The whole quick-scale reproduction writes the same bytes, report and every
/// experiment's files, whether its experiments run one or two at a time.
#[test]
fn reproduce_writes_the_same_report_on_one_or_two_threads() {
    let runs: Vec<_> = ["1", "2"]
        .iter()
        .map(|jobs| {
            let dir = scratch(&format!("jobs-{jobs}"));
            let output = nvmdb(&["reproduce", "--jobs", jobs, "--out", dir.to_str().unwrap()]);
            assert!(output.status.success(), "--jobs {jobs}: {}", String::from_utf8_lossy(&output.stderr));
            files(&dir)
        })
        .collect();
    assert!(runs[0].contains_key(std::path::Path::new("REPORT.md")));
    assert!(runs[0].len() > 50, "{} files", runs[0].len());
    assert_eq!(runs[0].keys().collect::<Vec<_>>(), runs[1].keys().collect::<Vec<_>>());
    for (path, bytes) in &runs[0] {
        assert!(bytes == &runs[1][path], "{} differs between --jobs 1 and --jobs 2", path.display());
    }
}

#[test]
fn zero_jobs_is_refused() {
    let dir = scratch("jobs-0");
    let output = nvmdb(&["reproduce", "--jobs", "0", "--out", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--jobs"), "{stderr}");
    assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "nothing written");
}

#[test]
fn store_needs_paper_scale() {
    let dir = scratch("store-quick");
    let store = dir.join("stored");
    for command in ["run", "reproduce"] {
        let mut args = vec![command];
        if command == "run" {
            args.push("cidr-fig5");
        }
        args.extend(["--store", "--paper-results", store.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
        let output = nvmdb(&args);
        assert_eq!(output.status.code(), Some(2), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{command}: {stderr}");
        assert!(stderr.contains("--store") && stderr.contains("--scale paper"), "{stderr}");
        assert!(!store.exists(), "{command} stored nothing");
    }
}

/// `--store` keeps a paper-scale run's values with its provenance, and a later quick run
/// cites them in its scorecard.
#[test]
fn a_stored_paper_scale_run_appears_in_later_reports() {
    let dir = scratch("store");
    let store = dir.join("stored");
    let (out, stored) = (dir.join("out"), store.to_str().unwrap());
    let output = nvmdb(&[
        "run",
        "cidr-fig5",
        "--scale",
        "paper",
        "--store",
        "--paper-results",
        stored,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = std::fs::read_to_string(store.join("cidr-fig5.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["experiment"], "cidr-fig5");
    assert_eq!(json["command"], "nvmdb run cidr-fig5 --scale paper --seed 1 --store");
    assert_eq!(json["seed"], 1);
    let date = json["date"].as_str().unwrap();
    assert!(date.len() == 20 && date.ends_with('Z') && date.as_bytes()[10] == b'T', "{date}");
    let values = json["values"].as_array().unwrap();
    assert!(values.len() >= 3 && values.iter().all(|v| v["claim"].as_str().unwrap().starts_with("cidr-fig5")));
    let commit = json["commit"].as_str().unwrap();

    let output = nvmdb(&["run", "cidr-fig5", "--paper-results", stored, "--out", out.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let citation = format!("({}, {})", &date[..10], &commit[..commit.len().min(7)]);
    let cited = stdout.lines().filter(|l| l.contains(&citation)).count();
    assert!(cited >= values.len(), "{cited} scorecard rows cite {citation}:\n{stdout}");
    assert!(stdout.contains("| cidr-fig5 | "), "the run is listed: {stdout}");
    assert!(!stdout.contains("| not stored |"), "every claim of cidr-fig5 was stored: {stdout}");
}

/// A malformed stored run is bad input: one line naming the file and line, exit 2, before
/// any experiment runs.
#[test]
fn a_malformed_stored_run_is_refused_before_running() {
    let dir = scratch("store-bad");
    let store = dir.join("stored");
    std::fs::create_dir_all(&store).unwrap();
    let bad = store.join("cidr-fig5.json");
    std::fs::write(&bad, "{\n  \"experiment\": \"cidr-fig5\",\n  \"command\": 7\n}\n").unwrap();
    let out = dir.join("out");
    for command in ["run", "reproduce"] {
        let mut args = vec![command];
        if command == "run" {
            args.push("cidr-fig5");
        }
        args.extend(["--paper-results", store.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        let output = nvmdb(&args);
        assert_eq!(output.status.code(), Some(2), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{command}: {stderr}");
        assert!(stderr.starts_with(&format!("{}:3: ", bad.display())), "{stderr}");
        assert!(!stderr.contains("running"), "{stderr}");
        assert!(std::fs::read_dir(&out).unwrap().next().is_none(), "{command} wrote nothing");
    }
}

#[test]
fn out_may_not_be_the_paper_results_directory() {
    let dir = scratch("store-same");
    let output = nvmdb(&["run", "cidr-fig5", "--paper-results", dir.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--out") && stderr.contains("--paper-results"), "{stderr}");
    assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "nothing written");
}
