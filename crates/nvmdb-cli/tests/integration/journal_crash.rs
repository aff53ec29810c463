//! `nvmdb journal sql` and `nvmdb journal run` cut at device writes from the command
//! line, in each journal mode and again during recovery: nothing SQLite acknowledged is
//! lost, as the harness's own model of acknowledged state checks.

use std::path::PathBuf;
use std::process::{Command, Output};

fn nvmdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().expect("nvmdb runs")
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("nvmdb-journal-crash-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

fn json(out: &Output) -> serde_json::Value {
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// Autocommit statements and explicit transactions, blobs among the values.
const SCRIPT: &str = "CREATE TABLE t(id INTEGER PRIMARY KEY, v);\nINSERT INTO t VALUES(1, X'FF00');\n\
    BEGIN;\nINSERT INTO t VALUES(2, 'b');\nUPDATE t SET v = X'FE00' WHERE id = 1;\nCOMMIT;\n\
    DELETE FROM t WHERE id = 2;\nINSERT INTO t VALUES(3, 1.5);\n";

/// `journal sql` on `SCRIPT` in `mode` with `extra` flags, on a fresh database.
fn sql(dir: &std::path::Path, mode: &str, extra: &[&str]) -> Output {
    let _ = std::fs::remove_file(dir.join("main.db"));
    let script = dir.join("s.sql");
    std::fs::write(&script, SCRIPT).unwrap();
    let (db_dir, script) = (dir.to_str().unwrap(), script.to_str().unwrap());
    let mut args = vec!["journal", "sql", "--config", "RU20-S2X-WH64", "--db-dir", db_dir, "--script", script];
    args.extend(["--journal-mode", mode, "--json"]);
    args.extend(extra);
    nvmdb(&args)
}

/// Whether `out` is the exit 2 of a cut past the end, naming `flag`.
fn past_the_end(out: &Output, flag: &str) -> bool {
    let err = stderr(out);
    let past = out.status.code() == Some(2) && err.contains("past the end");
    assert!(!past || (err.starts_with(flag) && err.lines().count() == 1 && out.stdout.is_empty()), "{err}");
    past
}

/// Checks a recovered run's report: sound, and the acknowledged state kept.
fn recovered(report: &serde_json::Value, what: &str) -> String {
    assert_eq!(report["crashed"], true, "{what}");
    assert_eq!(report["integrity_check"], serde_json::json!(["ok"]), "{what}");
    let state = report["acknowledged"]["recovered_state"].as_str().unwrap().to_string();
    assert!(state == "last_commit" || state == "in_flight_commit", "{what}: {report}");
    state
}

#[test]
fn journal_sql_cut_at_every_device_write_and_again_in_recovery_loses_nothing_acknowledged() {
    let dir = dir("sql");
    for mode in ["delete", "truncate", "persist"] {
        let full = json(&sql(&dir, mode, &[]));
        assert_eq!(full["committed_transactions"], 5, "{mode}: 4 autocommit statements and 1 transaction");
        assert_eq!(full["acknowledged"]["recovered_state"], "last_commit");
        let (mut tried, mut in_flight, mut activities) = (0u64, 0u64, std::collections::BTreeSet::new());
        let mut cut = 1u64;
        loop {
            let n = cut.to_string();
            let out = sql(&dir, mode, &["--power-loss-at-write", &n]);
            if past_the_end(&out, "--power-loss-at-write") {
                break;
            }
            let report = json(&out);
            let what = format!("{mode}: cut at write {cut}");
            in_flight += u64::from(recovered(&report, &what) == "in_flight_commit");
            let loss = &report["power_loss"];
            assert_eq!(loss["device_write"], cut, "{what}");
            activities.insert(loss["activity"].as_str().unwrap().to_string());
            tried += 1;
            // A second cut at every write of every third cut's recovery.
            if cut % 3 == 1 {
                for m in 1u64.. {
                    let out =
                        sql(&dir, mode, &["--power-loss-at-write", &n, "--power-loss-during-recovery", &m.to_string()]);
                    if past_the_end(&out, "--power-loss-during-recovery") {
                        break;
                    }
                    let report = json(&out);
                    recovered(&report, &format!("{what}, then at recovery write {m}"));
                    assert_eq!(report["power_loss"]["recovery_cut"], m);
                    tried += 1;
                }
            }
            cut += 1;
        }
        println!("journal sql, {mode}: {tried} crash points tried ({in_flight} after a commit point), {activities:?}");
        assert!(tried > 60 && in_flight > 0, "{mode}: {tried} crash points, {in_flight} in flight");
        // A sync precedes each commit point, so a cut there refuses the sync; the
        // deletion's writes after the hot flag's are the commit's.
        let mut expected = vec!["journal-write", "database-write", "sync"];
        expected.extend((mode != "persist").then_some("commit"));
        for activity in expected {
            assert!(activities.contains(activity), "{mode}: {activities:?}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn journal_sql_expect_compares_the_final_database_with_a_dump() {
    let dir = dir("expect");
    let dump = dir.join("dump.txt");
    let full = json(&sql(&dir, "delete", &["--dump", dump.to_str().unwrap()]));
    assert_eq!(full["expect"], serde_json::Value::Null);
    let text = std::fs::read_to_string(&dump).unwrap();
    assert_eq!(text, "-- t\n1|X'FE00'\n3|1.5\n");
    let expect = dir.join("expect.txt");
    std::fs::write(&expect, &text).unwrap();
    let ok = json(&sql(&dir, "delete", &["--expect", expect.to_str().unwrap()]));
    assert_eq!(ok["expect"], serde_json::json!({"matches": true, "first_difference": null}));
    // The blob differs in one byte: exit 1, the report printed, one line naming the line.
    std::fs::write(&expect, "-- t\n1|X'FF00'\n3|1.5\n").unwrap();
    let out = sql(&dir, "delete", &["--expect", expect.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["expect"]["matches"], false);
    let path = expect.display();
    assert_eq!(stderr(&out), format!("--expect {path}: line 2: expected `1|X'FF00'`, got `1|X'FE00'`"));
    // After a cut that lost the last statement, the recovered state differs at its row.
    std::fs::write(&expect, &text).unwrap();
    let out = sql(&dir, "delete", &["--power-loss-at", "7", "--expect", expect.to_str().unwrap()]);
    assert_eq!(
        (out.status.code(), stderr(&out)),
        (Some(1), format!("--expect {path}: line 3: expected `3|1.5`, got the end"))
    );
    // DUMP is an input: --dump may not overwrite it.
    let out = sql(&dir, "delete", &["--expect", expect.to_str().unwrap(), "--dump", expect.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("--dump"), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn journal_cut_flags_are_checked() {
    let dir = dir("flags");
    let cases: [(&[&str], &str); 4] = [
        (&["--power-loss-at", "1", "--power-loss-at-write", "1"], "--power-loss-at and --power-loss-at-write"),
        (&["--power-loss-during-recovery", "1"], "--power-loss-during-recovery does nothing"),
        (&["--power-loss-at", "9"], "--power-loss-at: statement 9 is past the end of the script (8 statements)"),
        (&["--power-loss-at-write", "0"], "error: invalid value '0' for '--power-loss-at-write <N>'"),
    ];
    for (flags, message) in cases {
        let out = sql(&dir, "delete", flags);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert!(stderr(&out).starts_with(message), "{flags:?}: {}", stderr(&out));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `journal run` with cuts: at device writes through the setup and the transactions,
/// after a transaction, and again during recovery; every DB file is checked.
#[test]
fn journal_run_cuts_recover_every_db_file_to_its_acknowledged_state() {
    let run = |extra: &[&str]| {
        let mut args = vec!["journal", "run", "--config", "RU2-S2X-WH4", "--workload", "gm", "--json"];
        args.extend(extra);
        nvmdb(&args)
    };
    let full = json(&run(&[]));
    assert!(full.get("power_loss").is_none() && full.get("acknowledged").is_none());
    let writes = full["device_writes"].as_u64().unwrap();
    let transactions = full["transactions"].as_u64().unwrap();
    let mut tried = 0;
    for cut in (1..=writes).step_by(usize::try_from(writes / 25).unwrap().max(1)) {
        let report = json(&run(&["--power-loss-at-write", &cut.to_string()]));
        let state = report["acknowledged"]["recovered_state"].as_str().unwrap();
        assert!(state != "mismatch", "cut at write {cut}: {report}");
        assert_eq!(report["acknowledged"]["files_checked"], full["db_files"]);
        assert!(report["integrity_check"].as_object().unwrap().values().all(|v| v == &serde_json::json!(["ok"])));
        tried += 1;
        let again = run(&["--power-loss-at-write", &cut.to_string(), "--power-loss-during-recovery", "1"]);
        if report["power_loss"]["recovery_device_writes"] == 0 {
            assert!(past_the_end(&again, "--power-loss-during-recovery"), "{}", stderr(&again));
            continue;
        }
        let again = json(&again);
        assert!(again["acknowledged"]["recovered_state"] != "mismatch", "cut at write {cut}, then 1: {again}");
        assert_eq!(again["power_loss"]["recovery_cut"], 1);
        tried += 1;
    }
    let after = json(&run(&["--power-loss-at", "3"]));
    assert_eq!(after["power_loss"]["transaction"], 3);
    assert_eq!(after["acknowledged"]["recovered_state"], "last_commit");
    let past = run(&["--power-loss-at", &(transactions + 1).to_string()]);
    assert!(past_the_end(&past, "--power-loss-at:"), "{}", stderr(&past));
    let past = run(&["--power-loss-at-write", &(writes + 2).to_string()]);
    assert!(past_the_end(&past, "--power-loss-at-write"), "{}", stderr(&past));
    println!("journal run: {tried} crash points tried");
}

/// A database image that is not a database is bad input, named, and left as it was.
#[test]
fn journal_sql_refuses_an_image_that_is_not_a_database() {
    let dir = dir("garbage");
    let (image, script) = (dir.join("main.db"), dir.join("s.sql"));
    let garbage = b"not a database, not even close".repeat(40);
    std::fs::write(&image, &garbage).unwrap();
    std::fs::write(&script, SCRIPT).unwrap();
    let (db_dir, script) = (dir.to_str().unwrap(), script.to_str().unwrap());
    let out = nvmdb(&["journal", "sql", "--config", "RR-S2X", "--db-dir", db_dir, "--script", script]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).starts_with(&image.display().to_string()), "{}", stderr(&out));
    assert_eq!(std::fs::read(&image).unwrap(), garbage);
    std::fs::remove_dir_all(&dir).unwrap();
}
