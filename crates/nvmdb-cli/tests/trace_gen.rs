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
    for (args, needle) in [
        (vec!["trace", "gen", "--workload", "t9", "--out", "/tmp/x.fiu"], "--workload"),
        (vec!["trace", "gen", "--workload", "d1", "--requests", "0", "--out", "/tmp/x.fiu"], "--requests"),
        (vec!["trace", "gen", "--workload", "d1", "--out", "/nonexistent-dir/x.fiu"], "--out"),
    ] {
        let o = nvmdb(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(needle), "{stderr}");
    }
}
