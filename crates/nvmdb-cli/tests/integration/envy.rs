//! End-to-end checks of `nvmdb envy replay` and `nvmdb envy run`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn nvmdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().expect("nvmdb runs")
}

fn temp(name: &str, contents: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-envy-cli-{}", std::process::id()));
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
    for (cleaning, spares) in [("greedy", "1"), ("fifo", "1"), ("locality", "1"), ("hybrid", "1"), ("fifo", "4")] {
        let reads = temp(&format!("reads-{cleaning}-{spares}.txt"), "");
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
            "--spare-segments",
            spares,
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

/// A cut past the last operation never happens: one line naming the flag, exit 2.
#[test]
fn a_cut_past_the_end_of_the_trace_exits_2_naming_the_flag() {
    let trace = temp("past.trace", "W 0 01\nB\nW 1 02\nC\nR 0 2\n");
    let run = |at: &str| {
        nvmdb(&[
            "envy",
            "replay",
            "--trace",
            trace.to_str().unwrap(),
            "--size-mb",
            "1",
            "--power-loss-at",
            at,
            "--json",
        ])
    };
    let out = run("5");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!((json(&out)["power_loss_at"].clone(), json(&out)["lost_bytes"].clone()), (5.into(), 0.into()));
    let out = run("6");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!((out.status.code(), err.trim().lines().count()), (Some(2), 1), "{err}");
    assert_eq!(err.trim(), "--power-loss-at: operation 6 is past the end of the trace (5 operations in all)");
    assert!(!String::from_utf8_lossy(&out.stdout).contains('{'), "no report without the cut");
    // Without the flag the report has no lost_bytes at all.
    let out = nvmdb(&["envy", "replay", "--trace", trace.to_str().unwrap(), "--size-mb", "1", "--json"]);
    assert!(json(&out).get("lost_bytes").is_none());
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
        ("nested.trace", "B\nW 0 01\nB\n", ":3:"),
        ("commit.trace", "W 0 01\nC\n", ":2:"),
        ("abort.trace", "A\n", ":1:"),
        ("operand.trace", "B 7\n", ":1:"),
    ];
    for (name, contents, at) in cases {
        let trace = temp(name, contents);
        let out = nvmdb(&["envy", "replay", "--trace", trace.to_str().unwrap(), "--size-mb", "1"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name) && err.contains(at), "{name}: {err}");
    }
    // A transaction writing more pages than it may shadow names the write's line.
    let big: String =
        std::iter::once("B\n".to_string()).chain((0..100).map(|p| format!("W {} 01\n", p * 256))).collect();
    let trace = temp("big-txn.trace", &big);
    let out = nvmdb(&["envy", "replay", "--trace", trace.to_str().unwrap(), "--size-mb", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("big-txn.trace:66:"), "{err}");
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
        (vec!["--spare-segments", "0"], "--spare-segments"),
        (vec!["--spare-segments", "63"], "--spare-segments"),
        (vec!["--spare-segments", "8", "--utilization", "0.9"], "--spare-segments"),
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
    // The flash energy is the 1994 preset's per-operation energies over the operations
    // counted: programs (flushes and cleaning) at 4,756,250 pJ, erases at 16,500,000 pJ
    // per 4 KB of the segment (64 segments), and the rest whole reads at 593,750 pJ.
    let energy = &report["energy"];
    let flash = energy["flash_pj"].as_u64().unwrap();
    let segment_bytes = (report["flash_mib"].as_f64().unwrap() * 1_048_576.0 / 64.0) as u64;
    assert_eq!(segment_bytes % 256, 0, "{report}");
    let erase_pj = 16_500_000 * segment_bytes / 4096;
    let written =
        report["flash_programs"].as_u64().unwrap() * 4_756_250 + report["erases"].as_u64().unwrap() * erase_pj;
    assert!(flash >= written, "{report}");
    assert_eq!((flash - written) % 593_750, 0, "{report}");
    assert!(energy["sram_pj"].as_u64().unwrap() > 0, "{report}");
    assert!(energy["per_operation_pj"].as_f64().unwrap() > 0.0, "{report}");
}

#[test]
fn a_run_without_page_bytes_reports_what_a_run_with_them_does() {
    let base = ["envy", "run", "--workload", "bimodal", "--cleaning", "locality", "--flash-mb", "2", "--json"];
    let with = nvmdb(&base);
    let without = nvmdb(&[&base[..], &["--no-page-bytes"]].concat());
    assert!(with.status.success() && without.status.success(), "{}", String::from_utf8_lossy(&without.stderr));
    assert!(json(&with)["clean_programs"].as_u64().unwrap() > 0, "the run cleaned");
    assert_eq!(with.stdout, without.stdout);
    // TPC-A reads its pages back: refused, naming the flag.
    let out = nvmdb(&["envy", "run", "--workload", "tpca", "--no-page-bytes"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--no-page-bytes"), "{err}");
}

/// Three transactions (committed, aborted, committed) and reads between them.
const TRANSACTIONS: &str = "W 0 11\nB\nW 0 22\nW 0x12c 33\nC\nR 0 1\nB\nW 0 44\nA\nR 0 1\n# the third\n\
                            B\nW 0 55\nW 0x200 66\nR 0 1\nC\nR 0 1\nR 0x200 1\n";

#[test]
fn transactions_commit_abort_and_roll_back_at_every_cut() {
    let trace = temp("txn.trace", TRANSACTIONS);
    let trace = trace.to_str().unwrap();
    let base = ["envy", "replay", "--trace", trace, "--size-mb", "1", "--json"];
    let out = nvmdb(&base);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let reads: Vec<&str> = text.lines().take(5).collect();
    assert_eq!(reads, ["22", "22", "55", "55", "66"]);
    let report = json(&out);
    assert_eq!(report["transactions"]["committed_transactions"], 2);
    assert_eq!(report["transactions"]["aborted_transactions"], 1);
    assert_eq!(report["transactions"]["rolled_back_transactions"], 0);
    // A cut after every operation (17 of them), at every policy.
    let mut tried = 0;
    for cleaning in ["greedy", "fifo", "locality", "hybrid"] {
        for cut in 1..=17u64 {
            let cut_text = cut.to_string();
            let mut args = base.to_vec();
            args.extend(["--cleaning", cleaning, "--power-loss-at", &cut_text]);
            let out = nvmdb(&args);
            assert!(out.status.success(), "{cleaning} at {cut}: {}", String::from_utf8_lossy(&out.stderr));
            let report = json(&out);
            assert_eq!(report["lost_bytes"], 0, "{cleaning} at {cut}: {report}");
            // Open at the cut: after B (2, 7, 11) up to the operation before C or A.
            let open = (2..=4).contains(&cut) || (7..=8).contains(&cut) || (11..=14).contains(&cut);
            let t = &report["transactions"];
            assert_eq!(t["rolled_back_transactions"], u64::from(open), "{cleaning} at {cut}: {report}");
            let skipped = match cut {
                2..=4 => 5 - cut,
                7..=8 => 9 - cut,
                11..=14 => 15 - cut,
                _ => 0,
            };
            assert_eq!(t["skipped_operations"], skipped, "{cleaning} at {cut}: {report}");
            let text = String::from_utf8_lossy(&out.stdout);
            let lines: Vec<&str> = text.lines().filter(|l| !l.contains(['{', '}', ':'])).collect();
            let last = &lines[lines.len() - 2..];
            if (11..=14).contains(&cut) {
                assert_eq!(last, ["22", "00"], "{cleaning} at {cut}: the third transaction rolled back");
            } else {
                assert_eq!(last, ["55", "66"], "{cleaning} at {cut}");
            }
            if (2..=4).contains(&cut) {
                assert_eq!(lines[0], "11", "{cleaning} at {cut}: the first transaction rolled back");
            }
            tried += 1;
        }
    }
    assert_eq!(tried, 68);
}

#[test]
fn a_cut_inside_a_transaction_while_cleaning_rolls_it_back() {
    // The long trace in transactions of six operations: B, six lines, C (eight lines).
    let mut trace = String::new();
    for (i, line) in long_trace().lines().enumerate() {
        if i % 6 == 0 {
            trace.push_str("B\n");
        }
        trace.push_str(line);
        trace.push('\n');
        if i % 6 == 5 {
            trace.push_str("C\n");
        }
    }
    let trace = temp("long-txn.trace", &trace);
    for cleaning in ["greedy", "fifo", "locality", "hybrid"] {
        // Operation 7003 is the second operation of the 876th transaction (7001 is its B).
        let out = nvmdb(&[
            "envy",
            "replay",
            "--trace",
            trace.to_str().unwrap(),
            "--size-mb",
            "1",
            "--utilization",
            "0.9",
            "--cleaning",
            cleaning,
            "--sram-mb",
            "0.01",
            "--power-loss-at",
            "7003",
            "--reads",
            temp(&format!("txn-reads-{cleaning}.txt"), "").to_str().unwrap(),
            "--json",
        ]);
        assert!(out.status.success(), "{cleaning}: {}", String::from_utf8_lossy(&out.stderr));
        let report = json(&out);
        assert_eq!(report["lost_bytes"], 0, "{cleaning}: {report}");
        assert!(report["erases"].as_u64().unwrap() > 100, "{cleaning}: the trace must clean: {report}");
        let t = &report["transactions"];
        assert_eq!(t["rolled_back_transactions"], 1, "{cleaning}: {report}");
        assert_eq!(t["skipped_operations"], 5, "{cleaning}: {report}");
        assert_eq!(t["committed_transactions"], 1_999, "{cleaning}: {report}");
    }
}

#[test]
fn the_flash_and_convergence_flags_are_validated() {
    let base = ["envy", "run", "--workload", "tpca", "--flash-mb", "2", "--transactions", "100"];
    for (args, flags) in [
        (vec!["--erase-ms", "-1"], vec!["--erase-ms"]),
        (vec!["--erase-ms", "NaN"], vec!["--erase-ms"]),
        (vec!["--erase-ms", "1e300"], vec!["--erase-ms"]),
        (vec!["--program-us", "-0.5"], vec!["--program-us"]),
        (vec!["--program-us", "inf"], vec!["--program-us"]),
        (vec!["--banks", "0", "--parallel-banks"], vec!["--banks"]),
        (vec!["--banks", "3", "--parallel-banks"], vec!["--banks"]),
        (vec!["--banks", "128", "--parallel-banks"], vec!["--banks"]),
        (vec!["--banks", "8"], vec!["--banks", "--parallel-banks"]),
        (vec!["--parallel-banks"], vec!["--parallel-banks", "--banks"]),
        (vec!["--redistribution-divisor", "70000"], vec!["--redistribution-divisor"]),
        (vec!["--redistribution-divisor", "4", "--cleaning", "greedy"], vec!["--redistribution-divisor", "--cleaning"]),
        (vec!["--tolerance", "0.1"], vec!["--tolerance", "--converge"]),
        (vec!["--max-turnovers", "2"], vec!["--max-turnovers", "--converge"]),
        (vec!["--converge", "--tolerance", "0"], vec!["--tolerance"]),
        (vec!["--converge", "--tolerance", "-inf"], vec!["--tolerance"]),
        (vec!["--converge", "--tolerance", "0.9"], vec!["--tolerance"]),
        (vec!["--converge", "--max-turnovers", "NaN"], vec!["--max-turnovers"]),
        (vec!["--converge", "--max-turnovers", "1e9"], vec!["--max-turnovers"]),
        (vec!["--transactions", "100000000000"], vec!["--transactions"]),
    ] {
        let out = nvmdb(&[&base[..], &args].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        for flag in flags {
            assert!(err.contains(flag), "{args:?} names {flag}: {err}");
        }
    }
    // A run whose turnovers cap is more than 2^28 flash programs is refused before it starts.
    let out =
        nvmdb(&["envy", "run", "--workload", "tpca", "--flash-mb", "4096", "--converge", "--max-turnovers", "64"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    // --converge is TPC-A's.
    let out = nvmdb(&["envy", "run", "--workload", "uniform", "--flash-mb", "2", "--converge"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--converge") && err.contains("--workload"), "{err}");
}

#[test]
fn the_flash_flags_change_what_they_should() {
    let run = |extra: &[&str]| {
        let base = ["envy", "run", "--workload", "tpca", "--flash-mb", "16", "--tps", "1e6", "--transactions", "4000"];
        let out = nvmdb(&[&base[..], extra, &["--json"]].concat());
        assert!(out.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        json(&out)
    };
    let tps = |r: &serde_json::Value| r["throughput_tps"].as_f64().unwrap();
    let preset = run(&[]);
    assert_eq!((preset["erase_ms"].as_f64(), preset["program_us"].as_f64()), (Some(1600.0), Some(9.0)));
    assert_eq!((preset["banks"].as_u64(), preset["redistribution_divisor"].as_u64()), (Some(1), Some(8)));
    // Saturated TPC-A waits for its cleans' erases: a shorter erase is faster, and more so
    // with the banks erasing and programming at once.
    let fast = run(&["--erase-ms", "10"]);
    assert_eq!(fast["erase_ms"].as_f64(), Some(10.0));
    assert!(tps(&fast) > 5.0 * tps(&preset), "{fast} {preset}");
    let parallel = run(&["--erase-ms", "10", "--banks", "8", "--parallel-banks"]);
    assert_eq!((parallel["banks"].as_u64(), parallel["parallel_banks"].as_bool()), (Some(8), Some(true)));
    assert!(tps(&parallel) > tps(&fast), "{parallel} {fast}");
    let slow_programs = run(&["--erase-ms", "10", "--program-us", "90"]);
    assert!(tps(&slow_programs) < tps(&fast), "{slow_programs} {fast}");
    // The same operations whatever the timing: only the times move.
    for key in ["flash_programs", "erases", "cleaning_cost"] {
        assert_eq!(fast[key], preset[key], "{key}");
        assert_eq!(parallel[key], preset[key], "{key}");
    }
    // Without redistribution the cleans copy other pages.
    let plain = run(&["--redistribution-divisor", "0"]);
    assert_eq!(plain["redistribution_divisor"].as_u64(), Some(0));
    assert_ne!(plain["clean_programs"], preset["clean_programs"]);
    // Converging: the report says what ended the run.
    let converged = run(&["--converge", "--max-turnovers", "2"]);
    let c = &converged["convergence"];
    let ended = c["ended_by"].as_str().unwrap();
    assert!(ended == "converged" || ended == "turnovers", "{c}");
    assert!(c["windows"].as_u64().unwrap() >= 1 && c["window_transactions"].as_u64().unwrap() >= 2_000, "{c}");
    assert_eq!(
        converged["operations"].as_u64(),
        Some(c["windows"].as_u64().unwrap() * c["window_transactions"].as_u64().unwrap())
    );
}

/// A short trace for the crash run: whole-page and page-spanning writes to the 60 pages
/// whose home is position 0 of a 1 MiB space, so that under locality gathering they
/// flush into one segment and clean it; committed and aborted transactions; reads.
fn crash_trace() -> String {
    let mut s = String::new();
    for i in 0..130u64 {
        let page = (i * 7) % 60;
        if i % 10 == 3 {
            s.push_str("B\n");
        }
        let hex = format!("{:02x}", i as u8);
        if i % 13 == 5 {
            s.push_str(&format!("W {} {}\n", page * 256 + 200, hex.repeat(100)));
        } else {
            s.push_str(&format!("W {} {}\n", page * 256, hex.repeat(256)));
        }
        match i % 20 {
            5 => s.push_str("C\n"),
            15 => s.push_str("A\n"),
            _ => {}
        }
        if i % 9 == 0 {
            s.push_str(&format!("R {} 16\n", page * 256));
        }
    }
    s
}

/// `envy replay --power-loss-at-write N` at every device write of a short trace, and at
/// every device write of the recovery after every 40th first cut and after the first cut
/// in a clean whose recovery writes: every run recovers with nothing acknowledged lost,
/// checked against the replay's own model right after the recovery and at the end; the
/// cuts fall in the host's writes, flushes, a clean and commits.
#[test]
fn cuts_at_every_device_write_and_again_in_recovery_lose_nothing() {
    let trace = temp("crash.trace", &crash_trace());
    let trace = trace.to_str().unwrap();
    let base = ["envy", "replay", "--trace", trace, "--size-mb", "1", "--cleaning", "locality", "--json"];
    let run = |cut: u64, second: Option<u64>| {
        let cut = cut.to_string();
        let second = second.map(|m| m.to_string());
        let mut args = base.to_vec();
        args.extend(["--power-loss-at-write", &cut]);
        if let Some(m) = &second {
            args.extend(["--power-loss-during-recovery", m]);
        }
        nvmdb(&args)
    };
    let check = |out: &Output, what: &str| {
        assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
        let report = json(out);
        let loss = &report["power_loss"];
        for (check, when) in [(&loss["after_recovery"], "after recovery"), (&report, "at the end")] {
            assert_eq!(check["verified_bytes"], 1 << 20, "{what}, {when}");
            assert_eq!((&check["lost_pages"], &check["lost_bytes"]), (&0.into(), &0.into()), "{what}, {when}");
        }
        report
    };
    let (mut first, mut second, mut activities) = (0u64, 0u64, std::collections::BTreeSet::new());
    let mut clean_recovered = false;
    for cut in 1.. {
        let out = run(cut, None);
        if out.status.code() == Some(2) && String::from_utf8_lossy(&out.stderr).contains("past the end of the trace") {
            break;
        }
        let report = check(&out, &format!("cut {cut}"));
        let loss = &report["power_loss"];
        assert_eq!(loss["device_write"], cut);
        let activity = loss["activity"].as_str().unwrap().to_string();
        let recovery_writes = loss["recovery_device_writes"].as_u64().unwrap();
        first += 1;
        let in_clean = activity == "clean" && recovery_writes > 1 && !clean_recovered;
        if cut % 40 == 0 || in_clean {
            clean_recovered |= in_clean;
            for m in 1..=recovery_writes {
                let report = check(&run(cut, Some(m)), &format!("cut {cut}, then recovery write {m}"));
                assert_eq!(report["power_loss"]["recovery_cut"], m);
                second += 1;
            }
            let out = run(cut, Some(recovery_writes + 1));
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert!(err.starts_with("--power-loss-during-recovery: device write"), "{err}");
        }
        activities.insert(activity);
    }
    eprintln!(
        "envy replay: {} crash points: a cut at each of {first} device writes ({activities:?}), and at {second} \
         device writes of their recoveries",
        first + second
    );
    for activity in ["host", "flush", "clean", "commit"] {
        assert!(activities.contains(activity), "no cut fell in {activity}: {activities:?}");
    }
    assert!(clean_recovered && second > 10, "{second} recovery cuts");
}

/// The cut flags' combinations that would do nothing exit 2 naming both flags.
#[test]
fn cut_flags_that_do_nothing_together_exit_2_naming_both() {
    let trace = temp("flags.trace", "W 0 01\nB\nW 1 02\nC\nR 0 2\n");
    let trace = trace.to_str().unwrap();
    let base = ["envy", "replay", "--trace", trace, "--size-mb", "1"];
    for (extra, names) in [
        (
            &["--power-loss-at", "1", "--power-loss-at-write", "1"][..],
            &["--power-loss-at ", "--power-loss-at-write"][..],
        ),
        (&["--power-loss-during-recovery", "1"], &["--power-loss-during-recovery", "--power-loss-at-write"]),
        (&["--power-loss-at-write", "0"], &["--power-loss-at-write"]),
        (&["--power-loss-at", "1", "--power-loss-during-recovery", "0"], &["--power-loss-during-recovery"]),
    ] {
        let out = nvmdb(&[&base[..], extra].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!((out.status.code(), err.trim().lines().count()), (Some(2), 1), "{extra:?}: {err}");
        assert!(out.stdout.is_empty(), "{extra:?}");
        for name in names {
            assert!(err.contains(name), "{extra:?}: {err} does not name {name}");
        }
    }
}
