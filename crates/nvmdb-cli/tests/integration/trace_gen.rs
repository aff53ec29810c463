//! `nvmdb trace gen`: deterministic FIU output, and one-line errors with exit code 2.

use std::process::Command;

fn nvmdb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().expect("the binary runs")
}

#[test]
fn same_seed_same_trace_in_fiu_format() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-trace-gen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut texts = Vec::new();
    for name in ["a.fiu", "b.fiu"] {
        let out = dir.join(name);
        let o = nvmdb(&[
            "trace",
            "gen",
            "--workload",
            "t1",
            "--requests",
            "500",
            "--seed",
            "9",
            "--footprint-mb",
            "16",
            "--buffer-pool-mb",
            "1",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        texts.push(std::fs::read_to_string(&out).unwrap());
    }
    assert_eq!(texts[0], texts[1]);
    let lines: Vec<&str> = texts[0].lines().collect();
    assert!(lines.len() >= 500);
    for line in lines {
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 9, "{line}");
        assert!(f[5] == "W" || f[5] == "R");
        assert!(f[8].len() == 32 && f[8].chars().all(|c| c.is_ascii_hexdigit()));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_flags_exit_2_with_one_line() {
    let out = std::env::temp_dir().join(format!("nvmdb-trace-gen-bad-{}.fiu", std::process::id()));
    let out = out.to_str().expect("a UTF-8 temporary path");
    for (args, needle) in [
        (vec!["trace", "gen", "--workload", "t9", "--out", out], "--workload"),
        (vec!["trace", "gen", "--workload", "d1", "--requests", "0", "--out", out], "--requests"),
        (vec!["trace", "gen", "--workload", "d1", "--out", "/nonexistent-dir/x.fiu"], "--out"),
    ] {
        let o = nvmdb(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(needle), "{stderr}");
    }
}

/// Ctrl-C stops a run at its next check: `interrupted`, exit code 130, and the output
/// file, written under a temporary name until complete, is not left behind; an earlier
/// file of that name stays whole.
#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_run_and_leaves_no_output() {
    use std::time::{Duration, Instant};

    let dir = std::env::temp_dir().join(format!("nvmdb-trace-gen-ctrl-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("t1.trace");
    std::fs::write(&out, "earlier\n").unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_nvmdb"))
        .args(["trace", "gen", "--workload", "t1", "--requests", "1000000000", "--out", out.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // The temporary file shows that the run (and its Ctrl-C handler, installed first) started.
    let started = Instant::now();
    while std::fs::read_dir(&dir).unwrap().count() < 2 {
        assert!(started.elapsed() < Duration::from_secs(60), "the run never started writing");
        std::thread::sleep(Duration::from_millis(10));
    }
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(kill.success());
    let done = child.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(130), "{:?}", done.status);
    assert_eq!(String::from_utf8_lossy(&done.stderr), "interrupted\n");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["t1.trace"], "only the earlier file is left");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier\n");
    std::fs::remove_dir_all(&dir).unwrap();
}
