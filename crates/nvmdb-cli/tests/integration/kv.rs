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
    bad(
        &[&gen[..], &["--power-loss-at", "1", "--power-loss-at-write", "1"]].concat(),
        &["--power-loss-at ", "--power-loss-at-write"],
    );
    bad(
        &[&gen[..], &["--power-loss-during-recovery", "1"]].concat(),
        &["--power-loss-during-recovery", "--power-loss-at-write"],
    );
    bad(
        &[&gen[..], &["--power-loss-at-write", "1", "--power-loss-during-recovery", "0"]].concat(),
        &["--power-loss-during-recovery"],
    );
    bad(
        &[&gen[..], &["--power-loss-at-write", "1", "--power-loss-during-recovery", "1000"]].concat(),
        &["--power-loss-during-recovery: device write 1000 is past the end of the recovery"],
    );
    bad(
        &[&gen[..], &["--power-loss-at-write", "100000"]].concat(),
        &["--power-loss-at-write: device write 100000 is past the end of the run"],
    );
    bad(&[&gen[..], &["--flash-time", "fast"]].concat(), &["--flash-time"]);
    bad(&[&gen[..], &["--preset", "chips", "--flash-time", "measured"]].concat(), &["--preset", "--flash-time"]);
    let pcm = ["kv", "run", "--engine", "pcm-only", "--workload", "insert", "--records", "10"];
    bad(&[&pcm[..], &["--flash-time", "chip"]].concat(), &["--engine", "--flash-time"]);
    bad(&["kv", "run", "--engine", "ipl", "--workload", "insert"], &["--workload", "--records"]);
    bad(&["kv", "run", "--engine", "btree", "--workload", "insert", "--records", "1"], &["--engine"]);
}

/// `kv run --power-loss-at-write N` at every device write of a small file run (the final
/// sync included), on every engine, and `--power-loss-during-recovery M` at every device
/// write of each recovery that writes (`ipl` merges a block whose log holds sectors
/// written after the last commit): the recovered state is exactly the state at the last
/// completed sync (`lost_synced_ops`), the end is the model's final state
/// (`lost_synced_ops_at_end`), and the answers are those of the uncut run. Prints the
/// crash points tried.
#[test]
fn a_cut_at_every_device_write_of_a_small_file_and_in_its_recoveries_loses_nothing() {
    // 300 records of 40 B over 1 KB pages: about 15 leaves, in a pool of 3 pages.
    let pad = "x".repeat(36);
    let load = file("small-load.txt", &(0..300).map(|k| format!("{k} v{k:03}{pad}\n")).collect::<String>());
    let ops: String = (0..150)
        .map(|i| match i % 10 {
            0 | 6 => format!("I {} n{i}{pad}\n", 1000 + i * 7),
            1 | 7 => format!("U {} u{i}{pad}\n", (i * 37) % 300),
            2 => format!("D {}\n", (i * 53) % 300),
            3 => format!("G {}\n", (i * 31) % 320),
            4 => format!("S {} {}\n", (i * 13) % 300, (i * 13) % 300 + 12),
            5 if i % 20 == 5 => "C\n".to_string(),
            _ => format!("U {} w{i}{pad}\n", (i * 11) % 300),
        })
        .collect();
    let ops = file("small-ops.txt", &ops);
    let mut total = 0;
    for engine in ["flash-only", "pcm-only", "ipl", "ipl-p"] {
        let reference = dir().join(format!("small-{engine}.txt")).display().to_string();
        let base =
            ["kv", "run", "--engine", engine, "--load", &load, "--ops", &ops, "--page-kb", "1", "--buffer-kb", "3"];
        let (code, _, stderr) = nvmdb(&[&base[..], &["--results", &reference]].concat());
        assert_eq!(code, 0, "{stderr}");
        let answers = std::fs::read_to_string(&reference).unwrap();
        let run = |n: u64, m: Option<u64>, what: &str| {
            let results = dir().join(format!("small-{engine}-{n}-{m:?}.txt")).display().to_string();
            let (n, m) = (n.to_string(), m.map(|m| m.to_string()));
            let mut args = [&base[..], &["--results", &results, "--power-loss-at-write", &n, "--json"]].concat();
            if let Some(m) = &m {
                args.extend(["--power-loss-during-recovery", m]);
            }
            let (code, stdout, stderr) = nvmdb(&args);
            if code == 2 && stderr.contains("past the end") {
                return None;
            }
            assert_eq!(code, 0, "{what}: {stderr}");
            assert_eq!(json_field(&stdout, "lost_synced_ops"), 0, "{what}");
            assert_eq!(json_field(&stdout, "lost_synced_ops_at_end"), 0, "{what}");
            assert_eq!(std::fs::read_to_string(&results).unwrap(), answers, "{what}");
            Some(json_field(&stdout, "power_loss"))
        };
        let (mut cuts, mut recovery_cuts, mut activities) = (0u64, 0u64, std::collections::BTreeSet::new());
        for n in 1.. {
            let what = format!("{engine} cut {n}");
            let Some(loss) = run(n, None, &what) else { break };
            assert_eq!(loss["device_write"], n, "{what}");
            activities.insert(loss["activity"].as_str().unwrap().to_string());
            cuts += 1;
            let writes = loss["recovery_device_writes"].as_u64().unwrap();
            for m in 1..=writes {
                let what = format!("{engine} cut {n}, then recovery write {m}");
                let loss = run(n, Some(m), &what).unwrap_or_else(|| panic!("{what}: past the end"));
                assert_eq!(loss["recovery_cut"], m, "{what}");
                recovery_cuts += 1;
            }
            if writes > 0 || n == 1 {
                assert!(run(n, Some(writes + 1), &what).is_none(), "{what}: a second cut past the recovery's end");
            }
        }
        eprintln!(
            "kv run --engine {engine}: {} crash points: a cut at each of {cuts} device writes ({activities:?}), and at \
             {recovery_cuts} device writes of their recoveries",
            cuts + recovery_cuts
        );
        assert!(cuts > 10, "{engine}: only {cuts} device writes");
        for activity in ["flush", "commit"] {
            assert!(activities.contains(activity), "{engine}: no cut fell in {activity}: {activities:?}");
        }
        if engine.starts_with("ipl") {
            assert!(activities.contains("merge"), "{engine}: no cut fell in a merge: {activities:?}");
        }
        if engine == "ipl" {
            assert!(recovery_cuts > 0, "no ipl recovery wrote, so no second cut fell in one");
        }
        total += cuts + recovery_cuts;
    }
    assert!(total > 0);
}
