//! The bad-input contract, one test per kind of check: each refusal exits 2 with one
//! stderr line naming the file:line or the flag at fault, and leaves every input
//! byte-identical; a closed stdout ends quietly with exit 0.

use crate::scratch;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn dir() -> PathBuf {
    scratch::dir("contract")
}

fn file(name: &str, contents: &[u8]) -> String {
    scratch::file("contract", name, contents)
}

/// Exit code, stdout, stderr.
fn nvmdb(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).stdin(Stdio::null()).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Asserts exit 2 and one short stderr line holding every needle, and that each of `inputs` is
/// byte-identical afterwards; returns the line.
fn refused(args: &[&str], needles: &[&str], inputs: &[&str]) -> String {
    let before: Vec<Vec<u8>> = inputs.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let (code, _, stderr) = nvmdb(args);
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.len() < 400, "{args:?}: a long line: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{args:?}: {stderr:?} lacks {needle:?}");
    }
    for (path, bytes) in inputs.iter().zip(before) {
        assert_eq!(std::fs::read(path).unwrap(), bytes, "{args:?} changed {path}");
    }
    stderr.trim_end().to_string()
}

/// A second name for `path` (a hard link), fresh.
fn hard_link(path: &str, name: &str) -> String {
    let link = dir().join(name);
    let _ = std::fs::remove_file(&link);
    std::fs::hard_link(path, &link).unwrap();
    link.display().to_string()
}

#[test]
fn an_output_that_is_an_input_by_another_name_is_refused() {
    let load = file("hl.load", b"1 a\n2 b\n");
    let ops = file("hl.ops", b"G 1\nS 0 5\n");
    let both = [load.as_str(), ops.as_str()];
    let kv = ["kv", "run", "--engine", "ipl", "--load", &load, "--ops", &ops, "--results"];
    let tree =
        ["btree", "run", "--variant", "sorted", "--node-lines", "1", "--load", &load, "--ops", &ops, "--results"];
    for (base, input, flag) in [(&kv[..], &ops, "--ops"), (&kv[..], &load, "--load"), (&tree[..], &load, "--load")] {
        let link = hard_link(input, "hl.link");
        refused(&[base, &[link.as_str()]].concat(), &["--results", &link, flag], &both);
    }
    // Through a symbolic link, and through /dev/stdout redirected to an input.
    let symlink = dir().join("hl.sym");
    let _ = std::fs::remove_file(&symlink);
    std::os::unix::fs::symlink(&ops, &symlink).unwrap();
    refused(&[&kv[..], &[symlink.to_str().unwrap()]].concat(), &["--results", "--ops"], &both);
    let appended = Command::new(env!("CARGO_BIN_EXE_nvmdb"))
        .args([&kv[..], &["/dev/stdout"]].concat())
        .stdout(std::fs::OpenOptions::new().append(true).open(&ops).unwrap())
        .output()
        .unwrap();
    assert_eq!(appended.status.code(), Some(2), "{}", String::from_utf8_lossy(&appended.stderr));
    assert_eq!(std::fs::read(&ops).unwrap(), b"G 1\nS 0 5\n");

    let r = file("hl-r.csv", b"a,b\n1,2\n");
    let s = file("hl-s.csv", b"c,d\n1,5\n");
    let link = hard_link(&s, "hl-out.csv");
    let join = ["join", "run", "--algo", "simple", "--r", &r, "--s", &s, "--r-key", "a", "--s-key", "c", "--output"];
    refused(&[&join[..], &[link.as_str()]].concat(), &["--output", &link, "--s"], &[&r, &s]);

    let trace = file("hl.envy", b"W 0 0102\nR 0 2\n");
    let link = hard_link(&trace, "hl-reads.txt");
    refused(
        &["envy", "replay", "--trace", &trace, "--size-mb", "1", "--reads", &link],
        &["--reads", "--trace"],
        &[&trace],
    );

    let ssd = file("hl.simple", b"W 0 4096\nR 0 4096\n");
    let link = hard_link(&ssd, "hl-ssd-reads.txt");
    let args = ["ssd", "replay", "--trace", &ssd, "--format", "simple", "--set", "content=bytes", "--reads", &link];
    refused(&args, &["--reads", "--trace"], &[&ssd]);

    let script = file("hl.sql", b"CREATE TABLE t(x);\nINSERT INTO t VALUES(1);\n");
    let db = dir().join("hl-db");
    std::fs::create_dir_all(&db).unwrap();
    let db = db.display().to_string();
    let sql = ["journal", "sql", "--config", "RR-S2X", "--db-dir", &db, "--script", &script, "--dump"];
    let link = hard_link(&script, "hl-dump.txt");
    refused(&[&sql[..], &[link.as_str()]].concat(), &["--dump", "--script"], &[&script]);
    // The dump may not be the database image (even before it exists) or its directory.
    let image = format!("{db}/main.db");
    refused(&[&sql[..], &[image.as_str()]].concat(), &["--dump", "--db-dir"], &[&script]);
    assert!(!std::path::Path::new(&image).exists());
    refused(&[&sql[..], &[db.as_str()]].concat(), &["--dump", "--db-dir"], &[&script]);
}

#[test]
fn a_row_layout_record_of_more_than_512_bytes_joins() {
    let header: Vec<String> = (0..65).map(|i| format!("c{i}")).collect();
    let wide = file("w65.csv", format!("{}\n{}\n", header.join(","), vec!["1"; 65].join(",")).as_bytes());
    let s = file("w65-s.csv", b"c,d\n1,5\n");
    let before = std::fs::read(&wide).unwrap();
    let args = ["join", "run", "--algo", "simple", "--r", &wide, "--s", &s, "--r-key", "c0", "--s-key", "c", "--json"];
    let (code, stdout, stderr) = nvmdb(&args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\"matches\": 1"), "{stdout}");
    assert_eq!(std::fs::read(&wide).unwrap(), before);
    for algo in ["simple", "cache-partitioning", "virtual-partitioning"] {
        let generated =
            ["join", "run", "--algo", algo, "--generate", "--record-bytes", "600", "--r-mb", "0.06", "--json"];
        let (code, stdout, stderr) = nvmdb(&generated);
        assert_eq!(code, Some(0), "{algo}: {stderr}");
        assert!(stdout.contains("\"matches\": 100"), "{algo}: {stdout}");
    }
}

/// Runs nvmdb with stdout a pipe closed after its first line; returns the exit code and
/// stderr.
fn first_line_only(args: &[&str]) -> (Option<i32>, String) {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nvmdb"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(!first.is_empty(), "{args:?} printed nothing");
    let stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    let status = child.wait().unwrap();
    (status.code(), stderr.join().unwrap())
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let n = 30_000;
    let load: String = (1..=n).map(|k| format!("{k} v{k}\n")).collect();
    let gets: String = (1..=n).map(|k| format!("G {k}\n")).collect();
    let load = file("pipe.load", load.as_bytes());
    let ops = file("pipe.ops", gets.as_bytes());
    let keys: String = (1..=n).map(|k| format!("{k} {k}\n")).collect();
    let keys = file("pipe.keys", keys.as_bytes());
    let csv: String = std::iter::once("a,b\n".to_string()).chain((1..=n).map(|k| format!("{k},{k}\n"))).collect();
    let csv = file("pipe.csv", csv.as_bytes());
    let envy: String = (0..4000).map(|i| format!("W {} abababab\nR {} 4\n", i * 4, i * 4)).collect();
    let envy = file("pipe.envy", envy.as_bytes());
    let ssd: String = (0..4000).map(|i| format!("W {} 4096\nR {} 4096\n", i * 4096, i * 4096)).collect();
    let ssd = file("pipe.simple", ssd.as_bytes());
    let stdout = "/dev/stdout";
    let runs: [&[&str]; 5] = [
        &["kv", "run", "--engine", "ipl", "--load", &load, "--ops", &ops, "--results", stdout],
        &[
            "btree",
            "run",
            "--variant",
            "sorted",
            "--node-lines",
            "1",
            "--load",
            &keys,
            "--ops",
            &ops,
            "--results",
            stdout,
        ],
        &[
            "join", "run", "--algo", "simple", "--r", &csv, "--s", &csv, "--r-key", "a", "--s-key", "a", "--output",
            stdout,
        ],
        &["envy", "replay", "--trace", &envy, "--size-mb", "1"],
        &["ssd", "replay", "--trace", &ssd, "--format", "simple", "--set", "content=bytes", "--reads", stdout],
    ];
    for args in runs {
        assert_eq!(first_line_only(args), (Some(0), String::new()), "{args:?}");
    }
}

#[test]
fn failures_of_the_input_exit_2_naming_it() {
    // A power cut on an FTL that cannot recover is refused before the replay.
    let trace = file("cut.simple", b"W 0 4096\nW 4096 4096\nR 0 4096\n");
    for mapping in ["block", "hybrid"] {
        let set = format!("ftl.mapping={mapping}");
        let args = ["ssd", "replay", "--trace", &trace, "--format", "simple", "--set", &set, "--power-loss-at", "2"];
        refused(&args, &["--power-loss-at", "ftl.mapping", mapping], &[&trace]);
    }
    let args = ["ssd", "replay", "--trace", &trace, "--format", "simple", "--warmup-requests", "18446744073709551615"];
    refused(&args, &["--warmup-requests", "no request"], &[&trace]);
    refused(
        &["ssd", "replay", "--trace", &trace, "--format", "simple", "--warmup-requests", "3"],
        &["--warmup-requests"],
        &[],
    );
    // A database image SQLite refuses names the image.
    let db = dir().join("garbage-db");
    std::fs::create_dir_all(&db).unwrap();
    let image = db.join("main.db").display().to_string();
    std::fs::write(&image, [0x5au8; 8192]).unwrap();
    let script = file("garbage.sql", b"CREATE TABLE t(x);\n");
    let db = db.display().to_string();
    refused(
        &["journal", "sql", "--config", "RR-S2X", "--db-dir", &db, "--script", &script],
        &[&image, "not a database"],
        &[&image, &script],
    );
    // --paper-results that is a file.
    let not_dir = file("paper-results.txt", b"x");
    let out = dir().join("report-paper").display().to_string();
    refused(
        &["run", "cidr-fig5", "--out", &out, "--paper-results", &not_dir],
        &["--paper-results", "not a directory"],
        &[&not_dir],
    );
    // MSR fields that are not numbers.
    let msr = file("bad-disk.msr", b"1,hm,-1,Write,0,4096,1\n");
    refused(&["ssd", "replay", "--trace", &msr, "--format", "msr"], &[&format!("{msr}:1:"), "disk number"], &[&msr]);
    let msr = file("bad-response.msr", b"1,hm,1,Write,0,4096,1\n2,hm,1,Read,0,4096,xyz\n");
    refused(&["ssd", "replay", "--trace", &msr, "--format", "msr"], &[&format!("{msr}:2:"), "response time"], &[&msr]);
    // Full outputs name their path.
    let envy = file("full.envy", b"W 0 0102\nR 0 2\n");
    let full = nvmdb(&["envy", "replay", "--trace", &envy, "--size-mb", "1", "--reads", "/dev/full"]);
    assert_eq!((full.0, full.2.lines().count()), (Some(1), 1), "{}", full.2);
    assert!(full.2.starts_with("/dev/full: cannot write"), "{}", full.2);
}

#[test]
fn sql_scripts_name_the_line_at_fault_and_triggers_run() {
    let db = dir().join("sql-db");
    std::fs::create_dir_all(&db).unwrap();
    let db = db.display().to_string();
    let sql =
        |script: &str| ["journal", "sql", "--config", "RR-S2X", "--db-dir", &db, "--script", script].map(String::from);
    let run = |script: &str| {
        let _ = std::fs::remove_file(format!("{db}/main.db"));
        let args = sql(script);
        nvmdb(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let nul = file("nul.sql", b"CREATE TABLE t(x);\nINSERT INTO t VALUES(1\0);\n");
    let bad = file("bad-utf8.sql", b"CREATE TABLE t(x);\n\n\xff\xfe;\n");
    for (script, line, what) in [(&nul, 2, "NUL"), (&bad, 3, "UTF-8")] {
        let args = sql(script);
        refused(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[&format!("{script}:{line}:"), what], &[script]);
    }
    let trigger = file(
        "trigger.sql",
        b"CREATE TABLE t(x);\nCREATE TABLE log(y);\nCREATE TRIGGER tr AFTER INSERT ON t BEGIN\n\
          INSERT INTO log VALUES(CASE WHEN new.x > 1 THEN 1 ELSE 0 END);\n  INSERT INTO log VALUES(new.x);\nEND;\n\
          INSERT INTO t VALUES(5);\nSELECT * FROM log;\n",
    );
    let (code, stdout, stderr) = run(&trigger);
    assert_eq!((code, stdout.as_str()), (Some(0), "1\n5\n"), "{stderr}");
    let unfinished =
        file("unfinished-trigger.sql", b"CREATE TABLE t(x);\nCREATE TRIGGER tr AFTER INSERT ON t BEGIN\n  SELECT 1;\n");
    let _ = std::fs::remove_file(format!("{db}/main.db"));
    let args = sql(&unfinished);
    refused(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[&format!("{unfinished}:2:")], &[&unfinished]);
}

#[test]
fn flags_name_themselves_for_negative_nan_empty_and_out_of_range_values() {
    let trace = file("flags.simple", b"W 0 4096\n");
    let cases: [(&[&str], &[&str]); 12] = [
        (&["kv", "demo", "--records", "-1"], &["--records", "'-1'"]),
        (
            &[
                "btree",
                "run",
                "--variant",
                "sorted",
                "--node-lines",
                "1",
                "--entries",
                "-5",
                "--op",
                "insert",
                "--count",
                "1",
            ],
            &["--entries", "'-5'"],
        ),
        (&["ssd", "replay", "--trace", &trace, "--format", "simple", "--passes", "-2"], &["--passes", "'-2'"]),
        (&["envy", "run", "--workload", "uniform", "--utilization", "NaN"], &["--utilization", "not a finite number"]),
        (&["envy", "run", "--workload", "uniform", "--utilization", "-inf"], &["--utilization", "not a finite number"]),
        (&["join", "model", "--r-mb", "1e308"], &["--r-mb", "(0, 20000]"]),
        (&["join", "model", "--hash-table-lw", "1e308"], &["--hash-table-lw"]),
        (&["join", "model", "--gamma", "65"], &["--gamma", "(0, 64]"]),
        (&["join", "model", "--n-h", "-1"], &["--n-h"]),
        (&["ssd", "replay", "--trace", "", "--format", "simple"], &["--trace", "a value is required"]),
        (&["ssd"], &["a command is required", "replay"]),
        (&["bench", "--filter", "no-such-bench"], &["--filter", "no-such-bench"]),
    ];
    for (args, needles) in cases {
        refused(args, needles, &[&trace]);
    }
    let set = ["--set", "buffer.kind=pcm-log", "--set", "buffer.pcm_mb=1048576"];
    let args = [&["ssd", "replay", "--trace", &trace, "--format", "simple"][..], &set].concat();
    refused(&args, &["--set buffer.pcm_mb=1048576", "memory"], &[&trace]);
}

#[test]
fn a_flag_without_effect_names_both_flags() {
    let pcm = file("effect.pcm", b"W 0 ff\n");
    let trace = file("effect.simple", b"W 0 4096\n");
    let cases: [(&[&str], &[&str]); 8] = [
        (
            &["pcm", "replay", "--trace", &pcm, "--flip-bits", "8"],
            &["--flip-bits has no effect without --flip-n-write"],
        ),
        // Given at its default value, it still has no effect.
        (
            &["pcm", "replay", "--trace", &pcm, "--flip-bits", "64"],
            &["--flip-bits has no effect without --flip-n-write"],
        ),
        (
            &["envy", "run", "--workload", "uniform", "--hot-access", "0.5"],
            &["--hot-access has no effect with --workload uniform"],
        ),
        (&["envy", "run", "--workload", "bimodal", "--transactions", "10"], &["--transactions", "--workload bimodal"]),
        (&["envy", "run", "--workload", "uniform", "--converge"], &["--converge", "--workload uniform"]),
        (
            &["join", "run", "--algo", "simple", "--generate", "--id-encoding", "plain32"],
            &["--id-encoding", "--algo simple"],
        ),
        (
            &["ssd", "replay", "--trace", &trace, "--format", "simple", "--age", "--prefill", "true"],
            &["--prefill has no effect with --age"],
        ),
        (
            &[
                "ssd",
                "replay",
                "--trace",
                &trace,
                "--format",
                "simple",
                "--set",
                "buffer.kind=pcm-log",
                "--set",
                "buffer.delta_bytes_max=100000",
            ],
            &["buffer.delta_bytes_max", "flash.page_bytes"],
        ),
    ];
    for (args, needles) in cases {
        refused(args, needles, &[&pcm, &trace]);
    }
}

#[test]
fn a_pcm_write_carries_up_to_524286_bytes() {
    let line = |bytes: usize| format!("W 0 {}\n", "ab".repeat(bytes));
    let largest = file("largest.pcm", line(524_286).as_bytes());
    let (code, stdout, stderr) = nvmdb(&["pcm", "replay", "--trace", &largest, "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\"lines_written\": 8192"), "{stdout}");
    let over = file("over.pcm", line(524_287).as_bytes());
    refused(&["pcm", "replay", "--trace", &over], &[&format!("{over}:1:"), "line too long"], &[&over]);
}
