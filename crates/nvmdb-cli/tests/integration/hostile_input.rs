//! Hostile input, one test per failure class: bad input exits 2 with one stderr line naming
//! the file:line or the flag; a failure while running exits 1 with one line; nothing
//! panics, hangs or overwrites an input. Every run has a deadline, so no case can hang
//! the suite.

use crate::scratch;
use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Generous: every case here finishes in well under a second; only a hang reaches it.
const DEADLINE: Duration = Duration::from_secs(120);

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn dir() -> PathBuf {
    scratch::dir("hostile")
}

fn file(name: &str, contents: &[u8]) -> String {
    scratch::file("hostile", name, contents)
}

/// Waits for `child` until the deadline; kills it and fails the test on expiry.
fn wait(mut child: Child, args: &[&str]) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("nvmdb {args:?} did not finish within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs nvmdb with stdout and stderr in files (a pipe could fill and stall the child).
fn nvmdb(args: &[&str]) -> Run {
    let id = format!("{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let (out_path, err_path) = (dir().join(format!("out-{id}")), dir().join(format!("err-{id}")));
    let child = Command::new(env!("CARGO_BIN_EXE_nvmdb"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let code = wait(child, args);
    Run {
        code,
        stdout: std::fs::read_to_string(&out_path).unwrap(),
        stderr: std::fs::read_to_string(&err_path).unwrap(),
    }
}

/// Asserts exit `code` and exactly one stderr line containing every needle.
fn refused(args: &[&str], code: i32, needles: &[&str]) -> String {
    let run = nvmdb(args);
    let line = run.stderr.trim_end_matches('\n');
    assert!(!run.stderr.contains("panicked"), "{args:?} panicked: {}", run.stderr);
    assert_eq!(run.code, Some(code), "{args:?}: {}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
    for needle in needles {
        assert!(line.contains(needle), "{args:?}: {line:?} lacks {needle:?}");
    }
    line.to_string()
}

fn bad(args: &[&str], needles: &[&str]) -> String {
    refused(args, 2, needles)
}

#[test]
fn byte_ranges_crossing_2_pow_64_are_refused_in_every_format() {
    let cases = [
        ("disksim", "1 0 36028797018963967 1 0\n"),
        ("msr", "1,h,0,Write,18446744073709551615,4096,1\n"),
        ("spc", "0,36028797018963967,4096,w,0.1\n"),
        ("fiu", "1 2 p 36028797018963967 8 W 6 0 0123456789abcdef0000000000000001\n"),
        ("simple", "W 0 4096\nW 18446744073709551000 4096\n"),
    ];
    for (format, text) in cases {
        let trace = file(&format!("wrap.{format}"), text.as_bytes());
        let line = if format == "simple" { 2 } else { 1 };
        bad(&["ssd", "replay", "--trace", &trace, "--format", format], &[&format!("{trace}:{line}:"), "crosses 2^64"]);
    }
    let trace = file("wrap.pcm", b"R 0xffffffffffffffff 1\n");
    bad(&["pcm", "replay", "--trace", &trace], &[&format!("{trace}:1:"), "crosses 2^64"]);
    let trace = file("wrap2.pcm", b"W 18446744073709551615 00\n");
    bad(&["pcm", "replay", "--trace", &trace], &[&format!("{trace}:1:"), "crosses 2^64"]);
}

#[test]
fn requests_longer_than_the_device_are_refused_and_long_reads_finish() {
    let trace = file("long.simple", b"W 0 9223372036854775807\n");
    bad(
        &["ssd", "replay", "--trace", &trace, "--format", "simple"],
        &[&format!("{trace}:1:"), "longer than the device"],
    );
    let trace = file("long.pcm", b"R 0 1099511627777\n");
    bad(&["pcm", "replay", "--trace", &trace], &[&format!("{trace}:1:"), "ends past"]);
    // Reading the whole 1 TiB device is legal and is counted, not copied: it finishes.
    let trace = file("whole.pcm", b"R 0 1099511627776\n");
    let run = nvmdb(&["pcm", "replay", "--trace", &trace, "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("\"lines_read\": 17179869184"), "{}", run.stdout);
}

#[test]
fn sizes_beyond_the_machine_are_refused_before_allocating() {
    let generator = ["btree", "run", "--variant", "sorted", "--node-lines", "1"];
    bad(
        &[&generator[..], &["--entries", "18446744073709551615", "--op", "insert", "--count", "1"]].concat(),
        &["--entries", "MiB"],
    );
    bad(&[&generator[..], &["--entries", "10", "--op", "insert", "--count", "100000000000000"]].concat(), &["--count"]);
    bad(&["join", "run", "--algo", "simple", "--generate", "--r-mb", "20000", "--match-per-r", "1000"], &["--r-mb"]);
    let out = dir().join("never.fiu").display().to_string();
    bad(
        &[
            "trace",
            "gen",
            "--workload",
            "d1",
            "--out",
            &out,
            "--requests",
            "1000000000",
            "--footprint-mb",
            "1099511627776",
        ],
        &["--requests", "MiB"],
    );
    assert!(!std::path::Path::new(&out).exists(), "refused before the output was created");
    let trace = file("ok.simple", b"W 0 4096\n");
    bad(
        &["ssd", "replay", "--trace", &trace, "--format", "simple", "--set", "buffer.pcm_mb=100000000"],
        &["buffer.pcm_mb"],
    );
    bad(
        &["ssd", "replay", "--trace", &trace, "--format", "simple", "--set", "flash.packages=4000000000"],
        &["flash.packages"],
    );
    bad(&["bench", "--filter", "memory", "--mib", "100000000"], &["--mib", "MiB"]);
}

#[test]
fn geometry_and_config_errors_name_the_key() {
    let trace = file("cfg.simple", b"W 0 4096\n");
    let replay = ["ssd", "replay", "--trace", &trace, "--format", "simple"];
    for (set, key) in [
        ("flash.page_bytes=3", "flash.page_bytes"),
        ("flash.page_bytes=65536", "flash.page_bytes"),
        ("flash.endurance=0", "flash.endurance"),
        ("flash.packages=0", "flash.packages"),
        ("ftl.log_blocks=8", "ftl.log_blocks"),
        ("dedup.segments=8", "dedup.segments"),
        ("ftl.overprovision=nan", "ftl.overprovision"),
    ] {
        bad(&[&replay[..], &["--set", set]].concat(), &[key]);
    }
    let tiny =
        ["flash.packages=1", "flash.planes_per_package=1", "flash.blocks_per_plane=3", "flash.pages_per_block=1"];
    let mut args = replay.to_vec();
    for set in tiny.iter().chain(&["ftl.overprovision=0.9"]) {
        args.extend(["--set", set]);
    }
    bad(&args, &["ftl.overprovision", "no logical pages"]);
    let config = file("bad.toml", b"\xef\xbb\xbf[ftl]\nmapping = \"page\"\ngcc = 3\n");
    bad(&["ssd", "replay", "--trace", &trace, "--format", "simple", "--config", &config], &[&config, "gcc"]);
    let config = file("huge.toml", &vec![b'#'; 2 << 20]);
    bad(&["ssd", "replay", "--trace", &trace, "--format", "simple", "--config", &config], &[&config, "larger than"]);
}

#[test]
fn closed_pipes_end_quietly_and_full_disks_exit_1() {
    for args in [&["list"][..], &["join", "model", "--record-bytes", "1..10000:1"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nvmdb"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
        let code = wait(child, args);
        let stderr = reader.join().unwrap();
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "{args:?}");
    }
    if std::path::Path::new("/dev/full").exists() {
        let keys = file("full-keys.txt", b"1 1\n");
        let ops = file("full-ops.txt", b"G 1\n");
        let args = ["btree", "run", "--variant", "sorted", "--node-lines", "1", "--load", &keys, "--ops", &ops];
        refused(&[&args[..], &["--results", "/dev/full"]].concat(), 1, &["/dev/full", "cannot write"]);
        let gen = ["trace", "gen", "--workload", "d1", "--requests", "10", "--footprint-mb", "4", "--out", "/dev/full"];
        refused(&gen, 1, &["/dev/full", "cannot write"]);
        let stdout_full = Command::new(env!("CARGO_BIN_EXE_nvmdb"))
            .args(["list"])
            .stdout(File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&stdout_full.stderr);
        assert_eq!((stdout_full.status.code(), stderr.lines().count()), (Some(1), 1), "{stderr}");
        assert!(!stderr.contains("panicked"));
    }
}

#[test]
fn an_output_that_is_an_input_is_refused_before_writing() {
    let keys = file("same-keys.txt", b"1 1\n2 2\n");
    let ops = file("same-ops.txt", b"G 1\nS 0 5\n");
    let base = ["btree", "run", "--variant", "sorted", "--node-lines", "1", "--load", &keys, "--ops", &ops];
    let dotted = format!("{}/./same-keys.txt", dir().display());
    for results in [keys.as_str(), dotted.as_str(), ops.as_str()] {
        bad(&[&base[..], &["--results", results]].concat(), &["--results", "input"]);
    }
    assert_eq!(std::fs::read(&keys).unwrap(), b"1 1\n2 2\n");
    assert_eq!(std::fs::read(&ops).unwrap(), b"G 1\nS 0 5\n");
    let r = file("same-r.csv", b"a,b\n1,2\n");
    let args =
        ["join", "run", "--algo", "simple", "--r", &r, "--s", &r, "--r-key", "a", "--s-key", "a", "--output", &r];
    bad(&args, &["--output", "--r"]);
    assert_eq!(std::fs::read(&r).unwrap(), b"a,b\n1,2\n");
}

#[test]
fn argument_errors_name_the_flag_and_its_allowed_values() {
    let trace = file("args.simple", b"W 0 4096\n");
    bad(&["ssd", "replay", "--trace", &trace], &["--format", "disksim, msr, spc, fiu, simple"]);
    bad(&["btree", "run", "--variant", "sorted", "--node-lines", "3"], &["--node-lines", "1, 2, 4, 8"]);
    bad(&["btree", "run", "--variant", "oak", "--node-lines", "1"], &["--variant", "nvmdb-leaf"]);
    bad(&["trace", "gen", "--out", "x"], &["--workload", "d1, d2, t1, t2, t3"]);
    bad(&["join", "run", "--generate"], &["--algo", "virtual-partitioning"]);
    let journal = ["journal", "run", "--config", "RR-S2X", "--workload", "kt", "--pcm-write-time"];
    bad(&[&journal[..], &["budget"]].concat(), &["--pcm-write-time", "chunks, cells"]);
    let sql = ["journal", "sql", "--config", "RR-S2X", "--db-dir", ".", "--script", "s.sql", "--pcm-write-time"];
    bad(&[&sql[..], &["fixed"]].concat(), &["--pcm-write-time", "chunks, cells"]);
}

#[test]
fn tokens_are_quoted_short_boms_accepted_and_lines_bounded() {
    let long = format!("Q{} 0 1\n", "x".repeat(5000));
    let trace = file("longtoken.simple", long.as_bytes());
    let line = bad(&["ssd", "replay", "--trace", &trace, "--format", "simple"], &[&format!("{trace}:1:"), "…"]);
    assert!(line.len() < trace.len() + 160, "{line}");
    let flag = "y".repeat(5000);
    let line = bad(&["ssd", "replay", "--trace", &trace, "--format", &flag], &["--format", "…"]);
    assert!(line.len() < 300, "{line}");
    let bom = file("bom.simple", b"\xef\xbb\xbfW 0 4096\n");
    assert_eq!(nvmdb(&["ssd", "replay", "--trace", &bom, "--format", "simple"]).code, Some(0));
    let bom = file("bom.pcm", b"\xef\xbb\xbfW 0 ff\n");
    assert_eq!(nvmdb(&["pcm", "replay", "--trace", &bom]).code, Some(0));
    let huge = file("huge-line.pcm", &[b"R 0 1\nW 0 ".as_slice(), &vec![b'0'; 3 << 20]].concat());
    bad(&["pcm", "replay", "--trace", &huge], &[&format!("{huge}:2:"), "line too long"]);
    let binary = file("binary.simple", b"W 0 4096\n\xff\xfe\x00\x01garbage\n");
    bad(&["ssd", "replay", "--trace", &binary, "--format", "simple"], &[&format!("{binary}:2:"), "UTF-8"]);
    let keys = file("binary-keys.txt", b"1 1\n\x80\x81\n");
    let ops = file("binary-ops.txt", b"G 1\n");
    let args = ["btree", "run", "--variant", "sorted", "--node-lines", "1", "--load", &keys, "--ops", &ops];
    bad(&args, &[&format!("{keys}:2:"), "UTF-8"]);
    let empty = file("empty.csv", b"");
    let args = ["join", "run", "--algo", "simple", "--r", &empty, "--s", &empty, "--r-key", "a", "--s-key", "a"];
    bad(&args, &[&format!("{empty}:1:"), "header"]);
}

#[test]
fn generators_that_cannot_finish_are_refused_up_front() {
    let out = dir().join("gen.fiu").display().to_string();
    let gen = ["trace", "gen", "--workload", "t1", "--out", &out, "--requests", "10"];
    bad(&[&gen[..], &["--footprint-mb", "4", "--buffer-pool-mb", "4"]].concat(), &["--buffer-pool-mb", "quarter"]);
    bad(&[&gen[..], &["--buffer-pool-mb", "18446744073709551615"]].concat(), &["--buffer-pool-mb"]);
    bad(&[&gen[..], &["--footprint-mb", "18446744073709551615"]].concat(), &["--footprint-mb"]);
    bad(&[&gen[..], &["--requests", "0"]].concat(), &["--requests"]);
    assert!(!std::path::Path::new(&out).exists());
    bad(
        &["join", "run", "--algo", "simple", "--generate", "--record-bytes", "8..18446744073709551615:1"],
        &["--record-bytes", "10000"],
    );
    bad(&["join", "run", "--algo", "simple", "--generate", "--match-per-r", "5..1"], &["--match-per-r", "empty"]);
    bad(
        &["join", "model", "--record-bytes", "1..10000:1", "--match-per-r", "1..10000:1"],
        &["--record-bytes/--match-per-r", "combinations"],
    );
    let generator = ["btree", "run", "--variant", "sorted", "--node-lines", "1", "--entries", "10", "--op", "delete"];
    bad(&[&generator[..], &["--count", "11"]].concat(), &["--count"]);
}

#[test]
fn backward_times_and_extra_fields_are_errors() {
    let trace = file("back.disksim", b"2 0 8 8 0\n1 0 8 8 0\n");
    bad(&["ssd", "replay", "--trace", &trace, "--format", "disksim"], &[&format!("{trace}:2:"), "earlier"]);
    let trace = file("extra.msr", b"1,hm,1,Write,0,4096,1,extra\n");
    bad(&["ssd", "replay", "--trace", &trace, "--format", "msr"], &[&format!("{trace}:1:"), "expected 7 fields"]);
    let trace = file("extra.disksim", b"1 0 8 8 0 9\n");
    bad(&["ssd", "replay", "--trace", &trace, "--format", "disksim"], &[&format!("{trace}:1:"), "expected 5 fields"]);
    let trace = file("extra.pcm", b"R 0 1 2\n");
    bad(&["pcm", "replay", "--trace", &trace], &[&format!("{trace}:1:"), "found 4 fields"]);
    let trace = file("zero.simple", b"W 0 0\n");
    bad(&["ssd", "replay", "--trace", &trace, "--format", "simple"], &[&format!("{trace}:1:"), "0 bytes"]);
    // SPC's optional fields after the fifth are ignored (documented in the README).
    let trace = file("extra.spc", b"0,1,512,w,0.1,opt\n");
    assert_eq!(nvmdb(&["ssd", "replay", "--trace", &trace, "--format", "spc"]).code, Some(0));
}
