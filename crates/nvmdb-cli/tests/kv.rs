//! `nvmdb kv run`: file mode answers the same on every engine and after a power loss;
//! bad input exits 2 with one line naming the file:line or the flag.

use std::path::PathBuf;
use std::process::Command;

fn dir() -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-kv-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn file(name: &str, contents: &str) -> String {
    let path = dir().join(name);
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
}

/// Exit code, stdout, stderr.
fn nvmdb(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn json_field(stdout: &str, key: &str) -> serde_json::Value {
    let value: serde_json::Value = serde_json::from_str(stdout).unwrap();
    value.get(key).unwrap_or_else(|| panic!("no {key} in {stdout}")).clone()
}

/// A deterministic load and operations file with every operation kind.
fn workload() -> (String, String) {
    let mut load = String::new();
    let mut ops = String::new();
    let mut x: u64 = 7;
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x >> 33
    };
    for k in 0..600 {
        load.push_str(&format!("{} v{k}\n", k * 3));
    }
    for i in 0..1500 {
        let k = next() % 2000;
        match next() % 20 {
            0..=6 => ops.push_str(&format!("I {k} new{i}\n")),
            7..=9 => ops.push_str(&format!("U {k} up{i}\n")),
            10 | 11 => ops.push_str(&format!("D {k}\n")),
            12..=16 => ops.push_str(&format!("G {k}\n")),
            17 | 18 => ops.push_str(&format!("S {k} {}\n", k + 40)),
            _ => ops.push_str("C\n"),
        }
    }
    (file("load.txt", &load), file("ops.txt", &ops))
}

#[test]
fn every_engine_gives_the_same_answers_and_a_power_loss_loses_nothing_synced() {
    let (load, ops) = workload();
    let small = ["--page-kb", "1", "--buffer-kb", "4"];
    let mut reference: Option<String> = None;
    for engine in ["flash-only", "pcm-only", "ipl", "ipl-p"] {
        let results = dir().join(format!("results-{engine}.txt")).display().to_string();
        let mut args =
            vec!["kv", "run", "--engine", engine, "--load", &load, "--ops", &ops, "--results", &results, "--json"];
        args.extend(small);
        let (code, stdout, stderr) = nvmdb(&args);
        assert_eq!(code, 0, "{engine}: {stderr}");
        assert!(json_field(&stdout, "ops_per_s").as_f64().unwrap() > 0.0);
        let answers = std::fs::read_to_string(&results).unwrap();
        assert_eq!(answers.lines().count(), 1500 - answers_skipped(&ops), "{engine}: one line per G and S");
        match &reference {
            Some(r) => assert_eq!(&answers, r, "{engine} answers differently"),
            None => reference = Some(answers.clone()),
        }
        for cut in ["1", "40", "400"] {
            let cut_results = dir().join(format!("results-{engine}-{cut}.txt")).display().to_string();
            let mut args = vec![
                "kv",
                "run",
                "--engine",
                engine,
                "--load",
                &load,
                "--ops",
                &ops,
                "--results",
                &cut_results,
                "--json",
                "--power-loss-at",
                cut,
                "--sync-every",
                "25",
            ];
            args.extend(small);
            let (code, stdout, stderr) = nvmdb(&args);
            assert_eq!(code, 0, "{engine} cut {cut}: {stderr}");
            assert_eq!(json_field(&stdout, "lost_synced_ops"), 0, "{engine} cut {cut}");
            assert!(json_field(&stdout, "recovery_ns").as_u64().is_some());
            assert_eq!(std::fs::read_to_string(&cut_results).unwrap(), answers, "{engine} cut {cut}");
        }
    }
}

/// Operations of the file that write no result line (I, U, D, C).
fn answers_skipped(ops: &str) -> usize {
    std::fs::read_to_string(ops).unwrap().lines().filter(|l| !l.starts_with('G') && !l.starts_with('S')).count()
}

#[test]
fn the_benchmark_mode_reports_operations_per_simulated_second() {
    let (code, stdout, stderr) =
        nvmdb(&["kv", "run", "--engine", "ipl-p", "--workload", "update", "--records", "3000", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json_field(&stdout, "ops"), 3000);
    assert!(json_field(&stdout, "ops_per_s").as_f64().unwrap() > 0.0);
}

/// `--flash-time` picks the flash's one time source: the board SSD's measured latency by
/// default, the chip's on request; the report names it, and the same run takes another
/// simulated time.
#[test]
fn the_flash_time_is_reported_and_moves_the_simulated_time() {
    let run = |extra: &[&str]| {
        let args = [&["kv", "run", "--engine", "flash-only", "--workload", "update", "--records", "3000"][..], extra];
        let (code, stdout, stderr) = nvmdb(&[&args.concat()[..], &["--json"]].concat());
        assert_eq!(code, 0, "{extra:?}: {stderr}");
        (json_field(&stdout, "flash_time"), json_field(&stdout, "sim_ns").as_u64().unwrap())
    };
    let (default, default_ns) = run(&[]);
    let (measured, measured_ns) = run(&["--flash-time", "measured"]);
    let (chip, chip_ns) = run(&["--flash-time", "chip"]);
    assert_eq!((default, measured, chip), ("measured".into(), "measured".into(), "chip".into()));
    assert_eq!(default_ns, measured_ns);
    assert_ne!(chip_ns, measured_ns);
    let (code, stdout, stderr) =
        nvmdb(&["kv", "run", "--engine", "pcm-only", "--workload", "insert", "--records", "10", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(serde_json::from_str::<serde_json::Value>(&stdout).unwrap().get("flash_time").is_none());
}

/// Benchmark mode with a power cut: inside the measured phase (an update or insert, a
/// sync every 100 operations, the final sync), recovery loses nothing synced, and the run
/// finishes; a cut beyond the run's device writes is never reached.
#[test]
fn the_benchmark_mode_cuts_the_power_recovers_and_finishes() {
    for engine in ["flash-only", "pcm-only", "ipl", "ipl-p"] {
        for workload in ["insert", "update"] {
            let base = [
                "kv",
                "run",
                "--engine",
                engine,
                "--workload",
                workload,
                "--records",
                "2000",
                "--page-kb",
                "1",
                "--buffer-kb",
                "4",
                "--sync-every",
                "100",
                "--json",
            ];
            let (code, stdout, stderr) = nvmdb(&base);
            assert_eq!(code, 0, "{engine} {workload}: {stderr}");
            let uncut_ops = json_field(&stdout, "ops").as_u64().unwrap();
            for cut in ["1", "250", "1000"] {
                let (code, stdout, stderr) = nvmdb(&[&base[..], &["--power-loss-at", cut]].concat());
                assert_eq!(code, 0, "{engine} {workload} cut {cut}: {stderr}");
                assert_eq!(json_field(&stdout, "power_loss_at"), cut.parse::<u64>().unwrap());
                assert_eq!(json_field(&stdout, "lost_synced_ops"), 0, "{engine} {workload} cut {cut}");
                assert!(json_field(&stdout, "recovery_ns").as_u64().is_some());
                // The operations since the last sync before the cut run twice.
                let ops = json_field(&stdout, "ops").as_u64().unwrap();
                assert!(
                    (uncut_ops..=uncut_ops + 100).contains(&ops),
                    "{engine} {workload} cut {cut}: {ops} operations"
                );
            }
            // A cut past the run's device writes never happens: one line naming the flag.
            let (code, stdout, stderr) = nvmdb(&[&base[..], &["--power-loss-at", "100000000"]].concat());
            assert_eq!((code, stdout.as_str(), stderr.lines().count()), (2, "", 1), "{stderr}");
            assert_eq!(stderr.trim(), "--power-loss-at: device write 100000000 is past the end of the run");
        }
    }
}

fn bad(args: &[&str], names: &[&str]) {
    let (code, stdout, stderr) = nvmdb(args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert!(stdout.is_empty(), "{args:?} printed {stdout}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    for name in names {
        assert!(stderr.contains(name), "{args:?}: {stderr} does not name {name}");
    }
}

#[test]
fn bad_files_and_flags_exit_2_naming_the_line_or_the_flag() {
    let load = file("good-load.txt", "1 a\n2 b\n");
    let ops = file("good-ops.txt", "G 1\n");
    let run = |l: &str, o: &str| {
        vec![
            "kv".to_string(),
            "run".into(),
            "--engine".into(),
            "ipl-p".into(),
            "--load".into(),
            l.into(),
            "--ops".into(),
            o.into(),
        ]
    };
    let cases = [
        (file("dup.txt", "1 a\n2 b\n1 c\n"), ops.clone(), "dup.txt:3: duplicate key 1 (first on line 1)"),
        (file("badkey.txt", "x a\n"), ops.clone(), "badkey.txt:1: key 'x' is not a u32 decimal"),
        (load.clone(), file("badop.txt", "G 1\nX 2\n"), "badop.txt:2: unknown operation 'X'"),
        (load.clone(), file("long.txt", &format!("I 1 {}\n", "v".repeat(65))), "long.txt:1: value of 65 bytes"),
        (load.clone(), file("bin.txt", "G 1\n\u{0}\u{ff}\n"), "bin.txt:2:"),
    ];
    for (l, o, message) in cases {
        let args = run(&l, &o);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        bad(&args, &[message]);
    }
    let args = run(&load, &ops);
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["--results", &load]);
    bad(&args, &["--results"]);
    assert_eq!(std::fs::read_to_string(&load).unwrap(), "1 a\n2 b\n", "the input was overwritten");
    let gen = ["kv", "run", "--engine", "ipl", "--workload", "insert", "--records", "10"];
    bad(&[&gen[..], &["--page-kb", "65"]].concat(), &["--page-kb"]);
    bad(&[&gen[..], &["--buffer-kb", "16"]].concat(), &["--buffer-kb"]);
    bad(&[&gen[..], &["--pcm-write-bytes", "100"]].concat(), &["--pcm-write-bytes"]);
    bad(&[&gen[..], &["--power-loss-at", "0"]].concat(), &["--power-loss-at"]);
    bad(&[&gen[..], &["--flash-time", "fast"]].concat(), &["--flash-time"]);
    bad(&[&gen[..], &["--preset", "chips", "--flash-time", "measured"]].concat(), &["--preset", "--flash-time"]);
    let pcm = ["kv", "run", "--engine", "pcm-only", "--workload", "insert", "--records", "10"];
    bad(&[&pcm[..], &["--flash-time", "chip"]].concat(), &["--engine", "--flash-time"]);
    bad(&["kv", "run", "--engine", "ipl", "--workload", "insert"], &["--workload", "--records"]);
    bad(&["kv", "run", "--engine", "btree", "--workload", "insert", "--records", "1"], &["--engine"]);
}

#[test]
fn a_cut_at_every_device_write_of_a_small_file_including_the_final_sync_loses_nothing() {
    let load = file("small-load.txt", &(0..40).map(|k| format!("{k} v{k}\n")).collect::<String>());
    let ops: String = (0..60)
        .map(|i| match i % 6 {
            0 => format!("I {} n{i}\n", 100 + i),
            1 => format!("U {} u{i}\n", i % 40),
            2 => format!("D {}\n", i % 50),
            3 => format!("G {}\n", i % 45),
            4 => format!("S {} {}\n", i % 30, i % 30 + 12),
            _ => "C\n".to_string(),
        })
        .collect();
    let ops = file("small-ops.txt", &ops);
    for engine in ["flash-only", "ipl", "ipl-p"] {
        let reference = dir().join(format!("small-{engine}.txt")).display().to_string();
        let base =
            ["kv", "run", "--engine", engine, "--load", &load, "--ops", &ops, "--page-kb", "1", "--buffer-kb", "3"];
        let (code, _, stderr) = nvmdb(&[&base[..], &["--results", &reference]].concat());
        assert_eq!(code, 0, "{stderr}");
        let answers = std::fs::read_to_string(&reference).unwrap();
        let mut cuts = 0;
        for n in 1.. {
            let results = dir().join(format!("small-{engine}-{n}.txt")).display().to_string();
            let n = n.to_string();
            let (code, stdout, stderr) =
                nvmdb(&[&base[..], &["--results", &results, "--power-loss-at", &n, "--json"]].concat());
            if code == 2 && stderr.contains("--power-loss-at: device write") && stderr.contains("past the end") {
                break;
            }
            assert_eq!(code, 0, "{engine} cut {n}: {stderr}");
            cuts += 1;
            assert_eq!(json_field(&stdout, "lost_synced_ops"), 0, "{engine} cut {n}");
            assert_eq!(std::fs::read_to_string(&results).unwrap(), answers, "{engine} cut {n}");
        }
        assert!(cuts > 10, "{engine}: only {cuts} device writes");
    }
}
