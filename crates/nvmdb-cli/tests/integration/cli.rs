//! End-to-end checks of the `nvmdb` binary.

use std::path::PathBuf;
use std::process::{Command, Output};

fn nvmdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().expect("nvmdb runs")
}

fn temp_path(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn write_trace(name: &str, text: &str) -> String {
    let path = temp_path(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn json(output: &Output) -> serde_json::Value {
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

/// `nvmdb ARGS` under a 512 MiB `ulimit -v` (below the machine's MemAvailable on any
/// machine that runs the tests, so it is the memory available).
fn nvmdb_in_512_mib(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 524288 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_nvmdb"))
        .args(args)
        .output()
        .expect("sh runs")
}

/// Asserts that `output` is a refusal for memory under [`nvmdb_in_512_mib`]: exit 2 and one
/// stderr line that starts with `start` and says what it needs beyond the limit.
fn assert_refused_past_512_mib(output: &Output, start: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(
        stderr.starts_with(start)
            && stderr.contains("MiB of memory, more than the 512 MiB available (ulimit -v)")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[test]
fn pcm_replay_counts_by_hand() {
    // W 0 ff00: word 0 of line 0, 8 bits. W 62 01030710: word 7 of line 0 (1 + 2 bits)
    // and word 0 of line 1 (3 + 1 bits). R 100 70: lines 1 and 2.
    let trace = write_trace("hand.trace", "# hand-checked\nW 0 ff00\n\nW 0x3e 01030710 # crossing\nR 100 70\n");
    let v = json(&nvmdb(&["pcm", "replay", "--trace", &trace, "--json"]));
    assert_eq!(v["lines_read"], 2);
    assert_eq!(v["lines_written"], 3);
    assert_eq!(v["words_written"], 3);
    assert_eq!(v["bits_written"], 15);
    assert_eq!(v["energy_pj"], 8 * 64 * (2 + 3) * 2 + 15 * 16);
    assert_eq!(v["latency_cycles"], 2 * 230 + 3 * 450);
    assert_eq!(v["max_cell_writes"], 1);
}

#[test]
fn a_join_whose_pairs_outgrow_the_memory_available_is_refused_naming_output() {
    // 4,000 rows of one key on each side: 16,000,000 pairs, each at most 2 × 16 B in the
    // pair vector and 3 × 10 B of text while it grows: about 946 MiB, and with the join
    // itself (the tables, the simulated memory, the cache) 951 MiB, past the 512 MiB
    // available.
    let rows: String = (0..4_000).map(|i| format!("1,{i}\n")).collect();
    let r = write_trace("pairs_r.csv", &format!("k,v\n{rows}"));
    let s = write_trace("pairs_s.csv", &format!("k,w\n{rows}"));
    let out = r.replace("pairs_r.csv", "pairs_out.csv");
    let args = ["join", "run", "--algo", "simple", "--r", &r, "--s", &s, "--r-key", "k", "--s-key", "k"];
    let output = nvmdb_in_512_mib(&[&args[..], &["--output", &out]].concat());
    assert_refused_past_512_mib(&output, "--output: needs about 951 MiB of memory");
    assert!(!std::path::Path::new(&out).exists());
}

#[test]
fn a_join_over_tables_that_outgrow_the_memory_available_is_refused_naming_the_tables() {
    // 3,000,000 rows of one column on each side: the tables (8 B a cell), the relations
    // in simulated PCM (a line record per 64 B), the hash table and the cache come to
    // about 668 MiB, past the 512 MiB available.
    let rows = format!("k\n{}", "7\n".repeat(3_000_000));
    let r = write_trace("big_r.csv", &rows);
    let s = write_trace("big_s.csv", &rows);
    let output =
        nvmdb_in_512_mib(&["join", "run", "--algo", "simple", "--r", &r, "--s", &s, "--r-key", "k", "--s-key", "k"]);
    assert_refused_past_512_mib(&output, "--r/--s: needs about ");
}

#[test]
fn a_kv_file_run_whose_answers_outgrow_the_memory_available_is_refused_naming_the_files() {
    // 100,000 records and 1,000 scans of every key before the final sync: their answers,
    // kept until the sync, are 100,000,000 keys of up to 11 B of text each (3× while the
    // buffer grows), past the 512 MiB available; under a fixed 512 B a record the run
    // was accepted.
    let load: String = (0..100_000).map(|i| format!("{i} v\n")).collect();
    let load = write_trace("scans.load", &load);
    let ops = write_trace("scans.ops", &"S 0 4294967295\n".repeat(1_000));
    let results = load.replace("scans.load", "scans.results");
    let output =
        nvmdb_in_512_mib(&["kv", "run", "--engine", "ipl", "--load", &load, "--ops", &ops, "--results", &results]);
    assert_refused_past_512_mib(&output, "--load/--ops: needs about ");
    assert!(!std::path::Path::new(&results).exists());
}

#[test]
fn pcm_replay_stops_writes_that_outgrow_the_memory_available_and_names_the_limit() {
    // Each write, 4 MiB from the last, takes a directory table (16 KiB) and a chunk of
    // line records (10 KiB): 20,000 of them about 500 MiB, past half of 512 MiB.
    let text: String = (0..20_000u64).map(|i| format!("W {} ff\n", i << 22)).collect();
    let trace = write_trace("scattered.trace", &text);
    let output = nvmdb_in_512_mib(&["pcm", "replay", "--trace", &trace]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(
        stderr.starts_with(&format!("{trace}: the cells written up to line "))
            && stderr.contains("need more than half the 512 MiB available (ulimit -v)")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[test]
fn pcm_replay_flip_n_write_programs_one_flip_cell() {
    let trace = write_trace("fnw.trace", "W 8 ffffffffffffffff\nW 8 0000000000000000\n");
    let v = json(&nvmdb(&["pcm", "replay", "--trace", &trace, "--flip-n-write", "--json"]));
    assert_eq!(v["bits_written"], 2, "each write flips only the word's flip cell");
    assert_eq!(v["flip_bits_written"], 2);
    assert_eq!(v["max_cell_writes"], 2);
    let plain = json(&nvmdb(&["pcm", "replay", "--trace", &trace, "--json"]));
    assert_eq!(plain["bits_written"], 128);
}

#[test]
fn journal_pcm_write_time_by_cells_changes_only_the_time() {
    let run = |time: &str| {
        json(&nvmdb(&[
            "journal",
            "run",
            "--config",
            "RU20-S2X-WH64",
            "--workload",
            "tw",
            "--pcm-write-time",
            time,
            "--json",
        ]))
    };
    let (chunks, cells) = (run("chunks"), run("cells"));
    for key in ["total_bit_updates", "max_bit_updates", "energy_pj", "device_writes", "commands"] {
        assert_eq!(chunks[key], cells[key], "{key}");
    }
    assert!(cells["time_ns"].as_u64() < chunks["time_ns"].as_u64(), "{cells} against {chunks}");
    assert_eq!((chunks["pcm_write_time"].as_str(), cells["pcm_write_time"].as_str()), (Some("chunks"), Some("cells")));
    let default = json(&nvmdb(&["journal", "run", "--config", "RU20-S2X-WH64", "--workload", "tw", "--json"]));
    assert_eq!(default, chunks, "chunks is the default");
}

#[test]
fn malformed_trace_line_exits_2_with_file_and_line() {
    let trace = write_trace("bad.trace", "W 0 ff\nX 1 2\n");
    let out = nvmdb(&["pcm", "replay", "--trace", &trace]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr, format!("{trace}:2: unknown operation 'X' (expected R or W)\n"));
    let out = nvmdb(&["pcm", "replay", "--trace", &write_trace("odd.trace", "W 0 abc\n")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("odd.trace:1: hex data 'abc' has an odd number of digits"));
}

#[test]
fn bad_flags_give_one_line_and_exit_2() {
    let out = nvmdb(&["pcm", "replay", "--trace", "x", "--flip-bits", "12"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--flip-bits"), "{stderr}");
    let out = nvmdb(&["run", "no-such-experiment"]);
    assert_eq!(out.status.code(), Some(2));
    let out = nvmdb(&["pcm", "replay", "--trace", "/nonexistent/trace"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().starts_with("/nonexistent/trace: cannot read"));
}

#[test]
fn run_writes_results_and_plots() {
    let listed = String::from_utf8(nvmdb(&["list"]).stdout).unwrap();
    assert!(listed.contains("pcm-flip-n-write"));
    let out_dir = temp_path("report");
    let out = nvmdb(&["run", "pcm-flip-n-write", "--out", out_dir.to_str().unwrap(), "--seed", "3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dir = out_dir.join("pcm-flip-n-write");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["meta"]["seed"], 3);
    let rows = results["outcome"]["tables"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "plain plus four group sizes");
    // Measured cost within 2% of the binomial expectation for every encoding.
    for row in rows {
        let ratio = row[4].as_f64().unwrap();
        assert!((ratio - 1.0).abs() < 0.02, "measured / analytic = {ratio}");
    }
    assert!(std::fs::read_to_string(dir.join("results.csv")).unwrap().starts_with("table,row,column,value\n"));
    assert!(std::fs::read_to_string(dir.join("plot-1.svg")).unwrap().contains("<polyline"));
}

#[test]
fn same_seed_same_results() {
    let a = temp_path("det-a");
    let b = temp_path("det-b");
    for dir in [&a, &b] {
        let out = nvmdb(&["run", "pcm-start-gap", "--out", dir.to_str().unwrap()]);
        assert!(out.status.success());
    }
    let read = |d: &PathBuf| std::fs::read_to_string(d.join("pcm-start-gap/results.csv")).unwrap();
    assert_eq!(read(&a), read(&b));
}

/// The names `nvmdb bench` reported, in order.
fn bench_names(args: &[&str]) -> Vec<String> {
    let v = json(&nvmdb(&[&["bench", "--ops", "2000", "--mib", "1", "--json"], args].concat()));
    v.as_array().expect("an array").iter().map(|r| r["name"].as_str().expect("a name").to_owned()).collect()
}

#[test]
fn bench_filter_is_a_substring_and_exact_selects_one_name() {
    let substring = bench_names(&["--filter", "memory-random-mix"]);
    assert!(substring.contains(&"envy-memory-random-mix/envy".to_owned()), "{substring:?}");
    assert!(substring.contains(&"memory-random-mix/cached-pcm".to_owned()), "{substring:?}");
    let exact = bench_names(&["--filter", "memory-random-mix", "--exact"]);
    assert_eq!(exact, ["memory-random-mix/cached-pcm", "memory-random-mix/native"]);
    let out = nvmdb(&["bench", "--filter", "memory-random", "--exact"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--filter"), "{stderr}");
    assert_eq!(nvmdb(&["bench", "--exact"]).status.code(), Some(2));
}

/// `journal sql --power-loss-at-write` past the script's device writes never cuts: one
/// line naming the flag, exit 2, and no database image written.
#[test]
fn journal_sql_out_of_memory_names_the_heap_cap_and_the_limit() {
    // A 200 MB blob is within SQLite's length limit (256 MiB) but past its heap, a quarter
    // of 512 MiB.
    let dir = temp_path("journal-oom");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = write_trace("journal-oom.sql", "SELECT length(randomblob(200000000));\n");
    let args = ["journal", "sql", "--config", "RR-S2X", "--db-dir", dir.to_str().unwrap(), "--script", &script];
    let output = nvmdb_in_512_mib(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!("{script}:1: out of memory (SQLite's heap is capped at 128 MiB: a quarter of the 512 MiB available (ulimit -v))")
    );
}

#[test]
fn journal_sql_cut_past_the_end_exits_2_naming_the_flag() {
    let dir = temp_path("journal-past");
    let script = write_trace("journal-past.sql", "CREATE TABLE t(x);\nINSERT INTO t VALUES(1);\n");
    let run = |cut: Option<&str>| {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut args = vec!["journal", "sql", "--config", "RR-S2X", "--db-dir", dir.to_str().unwrap()];
        args.extend(["--script", &script, "--json"]);
        args.extend(cut.map(|c| ["--power-loss-at-write", c]).into_iter().flatten());
        nvmdb(&args)
    };
    let full = json(&run(None));
    assert_eq!(full["crashed"], false);
    let writes = full["device_writes"].as_u64().unwrap();
    assert!(writes > 0);
    assert_eq!(json(&run(Some(&writes.to_string())))["crashed"], true);
    let past = (writes + 1).to_string();
    let out = run(Some(&past));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!((out.status.code(), out.stdout.len(), err.trim().lines().count()), (Some(2), 0, 1), "{err}");
    assert_eq!(
        err.trim(),
        format!(
            "--power-loss-at-write: device write {past} is past the end of the script ({writes} device writes in all)"
        )
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no database image written");
}

/// `journal sql` reports every row of `PRAGMA integrity_check` (an index whose schema
/// was rewritten misses five rows), and `--dump` writes each value as an SQL literal:
/// blobs as hex, text quoted, reals with their point, NULL by name.
#[test]
fn journal_sql_reports_the_whole_integrity_check_and_dumps_losslessly() {
    let dir = temp_path("journal-integrity");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = write_trace(
        "journal-integrity.sql",
        "CREATE TABLE t(a, b);\nCREATE INDEX i ON t(a);\n\
         INSERT INTO t VALUES(1, X'FF00'), (2, X'FE00'), (3, 'it''s|x'), (4, 1.0), (5, 1), (NULL, NULL);\n\
         PRAGMA writable_schema = ON;\nUPDATE sqlite_master SET sql = 'CREATE INDEX i ON t(b)' WHERE name = 'i';\n",
    );
    let dump = temp_path("journal-integrity.dump");
    let report = json(&nvmdb(&[
        "journal",
        "sql",
        "--config",
        "RR-S2X",
        "--db-dir",
        dir.to_str().unwrap(),
        "--script",
        &script,
        "--dump",
        dump.to_str().unwrap(),
        "--json",
    ]));
    let missing: Vec<String> = (1..=5).map(|row| format!("row {row} missing from index i")).collect();
    assert_eq!(report["integrity_check"], serde_json::json!(missing));
    assert_eq!(
        std::fs::read_to_string(&dump).unwrap(),
        "-- t\n1|X'FF00'\n2|X'FE00'\n3|'it''s|x'\n4|1.0\n5|1\nNULL|NULL\n"
    );
}

#[test]
fn ssd_replay_refuses_a_trace_whose_page_bytes_outgrow_the_memory_available() {
    // A 512 MiB flash (2,048 blocks of 64 pages of 4 KiB) keeping page bytes: 400 writes
    // of 1 MiB write 102,400 pages, and with the pre-fill's one write per page touched
    // could program every block, whose bytes alone take the 512 MiB available; 20 such
    // writes program at most 170 blocks (about 43 MiB) and run.
    let geometry = ["--set", "flash.packages=1", "--set", "flash.planes_per_package=2"];
    let settings = [&geometry[..], &["--set", "flash.blocks_per_plane=1024", "--set", "content=\"bytes\""]].concat();
    let writes = |n: u64| (0..n).map(|i| format!("W {} 1048576\n", i << 20)).collect::<String>();
    let big = write_trace("page_bytes_big.trace", &writes(400));
    let args = ["ssd", "replay", "--format", "simple", "--trace", &big];
    let output = nvmdb_in_512_mib(&[&args[..], &settings].concat());
    assert_refused_past_512_mib(
        &output,
        &format!("{big} (400 requests, 102400 pages written or trimmed): needs about "),
    );
    let small = write_trace("page_bytes_small.trace", &writes(20));
    let args = ["ssd", "replay", "--format", "simple", "--trace", &small, "--json"];
    let v = json(&nvmdb_in_512_mib(&[&args[..], &settings].concat()));
    assert_eq!(v["requests"], 20);
}
