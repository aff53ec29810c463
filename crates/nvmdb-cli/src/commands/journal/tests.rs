//! Tests of `nvmdb journal`'s script splitting, dumps and checks.

use nvmdb_journal::rusqlite::Connection;

use super::*;

fn is_keyword(sql: &str, words: &[&str]) -> bool {
    let first = sql.split_whitespace().next().unwrap_or_default();
    words.iter().any(|w| first.eq_ignore_ascii_case(w))
}

/// The arguments of a `journal sql` run in `dir`.
fn sql_args(dir: &std::path::Path, config: &str, mode: SqlJournalMode, cuts: CutArgs) -> SqlArgs {
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    SqlArgs {
        config: config.into(),
        db_dir: dir.to_string_lossy().into_owned(),
        script: path("s.sql"),
        cuts,
        dump: Some(path("dump.txt")),
        expect: None,
        journal_mode: mode,
        seed: 1,
        pcm_write_time: PcmWriteTime::Chunks,
        json: true,
    }
}

fn at_write(cut: u64) -> CutArgs {
    CutArgs { power_loss_at_write: Some(cut), ..CutArgs::default() }
}

/// A fresh directory holding `script` as `s.sql`.
fn script_dir(test: &str, script: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nvmdb-journal-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("s.sql"), script).unwrap();
    dir
}

#[test]
fn sql_recovers_after_a_cut_and_dumps_a_committed_state() {
    let dir = script_dir(
        "sql",
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);\nBEGIN;\nINSERT INTO t VALUES(1, 'a');\nCOMMIT;\n\
         BEGIN;\nINSERT INTO t VALUES(2, NULL);\nUPDATE t SET v = 'b' WHERE id = 1;\nCOMMIT;\n",
    );
    let states = ["-- t\n", "-- t\n1|'a'\n", "-- t\n1|'b'\n2|NULL\n"];
    let mut cuts = 0;
    for cut in 1..40 {
        let _ = std::fs::remove_file(dir.join(DB_NAME));
        run_sql(&sql_args(&dir, "RU20-S2X-WH64", SqlJournalMode::Delete, at_write(cut))).unwrap();
        let dump = std::fs::read_to_string(dir.join("dump.txt")).unwrap();
        // Before the table exists the dump is empty; after, one of the committed states.
        assert!(dump.is_empty() || states.contains(&dump.as_str()), "cut {cut}: {dump:?}");
        cuts += 1;
    }
    assert_eq!(cuts, 39);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The database after each COMMIT of `script` on plain in-memory SQLite, in the
/// dump format; element 0 is the empty database.
fn committed_states(script: &str) -> Vec<String> {
    let conn = Connection::open_in_memory().unwrap();
    let mut states = vec![dump(&conn).unwrap()];
    for statement in split_statements(script) {
        execute(&conn, &statement.sql, MAX_OUTPUT_BYTES).unwrap();
        if is_keyword(&statement.sql, &["COMMIT"]) {
            states.push(dump(&conn).unwrap());
        }
    }
    states
}

/// Runs `script` through `journal sql` with the power cut at every device write of
/// it: each recovery must pass `PRAGMA integrity_check` and dump the state after the
/// last committed transaction (or the next, if its COMMIT was cut after its commit
/// point). Returns the crash points tried and the rows of the uncut run.
fn crash_everywhere(test: &str, script: &str, config: &str, mode: SqlJournalMode) -> (u64, Vec<String>) {
    let dir = script_dir(&format!("cuts-{test}-{config}-{mode:?}"), script);
    let states = committed_states(script);
    let args = |cut: Option<u64>| sql_args(&dir, config, mode, cut.map(at_write).unwrap_or_default());
    let full = sql_report(&args(None)).unwrap();
    assert_eq!(full.acknowledged.recovered_state, RecoveredState::LastCommit, "{config} {mode:?}");
    assert!(!full.crashed && full.integrity_check == ["ok"], "{config} {mode:?}: {full:?}");
    assert_eq!(usize::try_from(full.committed_transactions).unwrap(), states.len().saturating_sub(1));
    assert_eq!(full.journal_mode, mode.mode().name());
    let total = full.device_writes;
    let mut tried = 0u64;
    for cut in 1.. {
        // A cut before the first write to the database leaves no image behind.
        let _ = std::fs::remove_file(dir.join(DB_NAME));
        let report = match sql_report(&args(Some(cut))) {
            Err(e) if e.message.contains("past the end of the script") => break,
            report => report.unwrap(),
        };
        // A cut just past the last write can still refuse the final sync.
        assert!(report.crashed && cut <= total.saturating_add(1), "{config} {mode:?}: cut {cut} of {total}");
        tried = tried.saturating_add(1);
        assert_eq!(report.integrity_check, ["ok"], "{config} {mode:?}: cut at write {cut}");
        let state = report.acknowledged.recovered_state;
        assert_ne!(state, RecoveredState::Mismatch, "{config} {mode:?}: cut at write {cut}: {report:?}");
        let committed = usize::try_from(report.committed_transactions).unwrap();
        let dumped = std::fs::read_to_string(dir.join("dump.txt")).unwrap();
        let (before, after) = (states.get(committed), states.get(committed.saturating_add(1)));
        assert!(
            before == Some(&dumped) || after == Some(&dumped),
            "{config} {mode:?}: cut at write {cut}: {committed} committed, {dumped:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    (tried, full.rows)
}

#[test]
fn sql_runs_each_journal_mode_and_recovers_from_a_cut_at_every_write() {
    let script = "PRAGMA journal_mode;\nBEGIN;\nCREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);\n\
                  INSERT INTO t VALUES(1, 'a');\nCOMMIT;\nBEGIN;\nINSERT INTO t VALUES(2, NULL);\n\
                  UPDATE t SET v = 'b' WHERE id = 1;\nCOMMIT;\nBEGIN;\nDELETE FROM t WHERE id = 2;\n\
                  INSERT INTO t VALUES(3, 'c');\nCOMMIT;\n";
    for mode in [SqlJournalMode::Delete, SqlJournalMode::Truncate, SqlJournalMode::Persist] {
        for config in ["RR-S2X", "RU20-S2X-WH64"] {
            let (tried, rows) = crash_everywhere("modes", script, config, mode);
            // SQLite itself names the mode it runs in.
            assert_eq!(rows, [mode.mode().name().to_lowercase()], "{config} {mode:?}");
            assert!(tried > 20, "{config} {mode:?}: only {tried} writes");
            println!("journal sql, {config} {mode:?}: {tried} crash points tried");
        }
    }
}

#[test]
fn sql_runs_transactions_larger_than_the_page_cache_and_recovers_from_a_cut_at_every_write() {
    // A 10-page cache: SQLite spills dirty pages within the transactions and writes a
    // new journal header segment before each spill.
    let script = "PRAGMA cache_size = 10;\nBEGIN;\nCREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);\nCOMMIT;\n\
                  BEGIN;\nWITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 120)\n\
                  INSERT INTO t SELECT x, printf('%.200c', 'a') FROM c;\nCOMMIT;\n\
                  BEGIN;\nUPDATE t SET v = printf('%.180c', 'b') WHERE id % 2 = 0;\n\
                  DELETE FROM t WHERE id % 7 = 0;\nCOMMIT;\nSELECT count(*), sum(length(v)) FROM t;\n";
    for config in ["RR-S2X", "RU20-S2X-WH64"] {
        let (tried, rows) = crash_everywhere("spill", script, config, SqlJournalMode::Delete);
        assert_eq!(rows, ["103|19560"], "{config}");
        assert!(tried > 200, "{config}: only {tried} writes");
        println!("journal sql, {config}, spilling script: {tried} crash points tried");
    }
}

/// Autocommit statements, explicit transactions, a rolled-back one (spilled to the
/// database file first), a savepoint rolled back inside a committed one, and
/// read-only and empty transactions.
const MIXED: &str = "PRAGMA cache_size = 10;\nCREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);\n\
    INSERT INTO t VALUES(1, 'a');\nBEGIN;\nINSERT INTO t VALUES(2, 'b');\nINSERT INTO t VALUES(3, 'c');\n\
    COMMIT;\nSELECT count(*) FROM t;\nBEGIN;\nWITH RECURSIVE c(x) AS (SELECT 10 UNION ALL SELECT x + 1 FROM c \
    WHERE x < 90) INSERT INTO t SELECT x, printf('%.300c', 'r') FROM c;\nROLLBACK;\n\
    UPDATE t SET v = v || '!';\nBEGIN;\nINSERT INTO t VALUES(4, 'd');\nSAVEPOINT s;\n\
    INSERT INTO t VALUES(5, 'e');\nROLLBACK TO s;\nCOMMIT;\nBEGIN;\nCOMMIT;\nSELECT * FROM t;\n\
    DELETE FROM t WHERE id = 2;\n";

#[test]
fn committed_transactions_count_autocommit_statements_and_not_rollbacks() {
    for mode in [SqlJournalMode::Delete, SqlJournalMode::Truncate, SqlJournalMode::Persist] {
        let dir = script_dir(&format!("mixed-{mode:?}"), MIXED);
        let report = sql_report(&sql_args(&dir, "RU20-S2X-WH64", mode, CutArgs::default())).unwrap();
        // CREATE, INSERT, BEGIN..COMMIT, UPDATE, BEGIN..SAVEPOINT..COMMIT, DELETE; not
        // the ROLLBACK, the SELECTs or the empty BEGIN..COMMIT.
        assert_eq!(report.committed_transactions, 6, "{mode:?}");
        assert_eq!(report.acknowledged.commits, 6, "{mode:?}");
        assert_eq!(report.acknowledged.recovered_state, RecoveredState::LastCommit, "{mode:?}");
        assert_eq!(report.rows, ["3", "1|a!", "2|b!", "3|c!", "4|d"], "{mode:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Cuts at every device write of [`MIXED`] with the surviving devices made lossy by
/// `lose`; returns the crash points tried and those whose check reported a mismatch
/// (each also failing the run).
fn lossy_campaign(test: &str, lose: &dyn Fn(&mut nvmdb_journal::Devices)) -> (u64, u64) {
    let dir = script_dir(test, MIXED);
    let (mut tried, mut caught) = (0u64, 0u64);
    for cut in 1.. {
        let _ = std::fs::remove_file(dir.join(DB_NAME));
        let args = sql_args(&dir, "RU20-S2X-WH64", SqlJournalMode::Delete, at_write(cut));
        let report = match sql_report_with(&args, lose) {
            Err(e) if e.message.contains("past the end of the script") => break,
            report => report.unwrap(),
        };
        tried = tried.saturating_add(1);
        if report.acknowledged.recovered_state == RecoveredState::Mismatch {
            assert!(report.acknowledged.verdict().is_err());
            caught = caught.saturating_add(1);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    (tried, caught)
}

#[test]
fn the_acknowledged_state_check_catches_a_lossy_store() {
    // As it is, nothing is lost.
    assert_eq!(lossy_campaign("lossless", &|_| {}).1, 0);
    // A store that loses the database file's writes: every cut after the first
    // acknowledged commit has lost it.
    let (tried, caught) =
        lossy_campaign("drop-db", &|d: &mut nvmdb_journal::Devices| d.storage.load(DB_NAME, Vec::new()));
    println!("database writes dropped: {caught} of {tried} crash points caught");
    assert!(caught > tried / 2, "{caught} of {tried}");
    // A journal whose PCM metadata is lost (the manager frame zeroed): no hot journal
    // is found, so nothing is rolled back, and a cut between a transaction's first
    // database write and its commit point leaves part of it in the database.
    let zero = |d: &mut nvmdb_journal::Devices| {
        d.pcm.storage_write(0, &vec![0; usize::try_from(nvmdb_journal::layout::FRAME_BYTES).unwrap()]).unwrap();
    };
    let (tried, caught) = lossy_campaign("skip-rollback", &zero);
    println!("rollback skipped: {caught} of {tried} crash points caught");
    assert!(caught > 0, "{caught} of {tried}");
}

#[test]
fn a_cut_between_statements_recovers_the_last_commit() {
    let statements = split_statements(MIXED).len() as u64;
    let mut states = std::collections::BTreeSet::new();
    for n in 1..=statements {
        let dir = script_dir(&format!("between-{n}"), MIXED);
        let cuts = CutArgs { power_loss_at: Some(n), ..CutArgs::default() };
        let report = sql_report(&sql_args(&dir, "RR-S2X", SqlJournalMode::Persist, cuts)).unwrap();
        let loss = report.power_loss.as_ref().unwrap();
        assert_eq!((loss.statement, loss.activity), (Some(n), None));
        assert_eq!(report.acknowledged.recovered_state, RecoveredState::LastCommit, "after statement {n}");
        assert_eq!(report.statements_run as u64, n);
        states.insert(report.acknowledged.commits);
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert_eq!(states.len(), 7, "0 to 6 commits: {states:?}");
    let dir = script_dir("between-past", MIXED);
    let past = CutArgs { power_loss_at: Some(statements + 1), ..CutArgs::default() };
    let e = sql_report(&sql_args(&dir, "RR-S2X", SqlJournalMode::Persist, past)).unwrap_err();
    assert_eq!((e.code, e.message.starts_with("--power-loss-at: statement")), (2, true), "{}", e.message);
}

#[test]
fn random_values_are_the_same_in_the_run_and_its_model() {
    let script = "CREATE TABLE IF NOT EXISTS r(a, b);\nINSERT INTO r VALUES(random(), randomblob(4));\n\
                  BEGIN;\nINSERT INTO r SELECT random(), randomblob(3) FROM r;\nCOMMIT;\nSELECT count(*) FROM r;\n";
    let dir = script_dir("random", script);
    let run = |cuts| {
        let _ = std::fs::remove_file(dir.join(DB_NAME));
        sql_report(&sql_args(&dir, "RR-S2X", SqlJournalMode::Delete, cuts)).unwrap()
    };
    let full = run(CutArgs::default());
    assert_eq!(
        (full.rows.as_slice(), full.acknowledged.recovered_state),
        (&["2".to_string()][..], RecoveredState::LastCommit)
    );
    let dumped = std::fs::read_to_string(dir.join("dump.txt")).unwrap();
    assert_ne!(dumped.lines().nth(1), dumped.lines().nth(2), "{dumped}");
    // The same seed draws the same values.
    assert_eq!(run(CutArgs::default()).rows, full.rows);
    assert_eq!(std::fs::read_to_string(dir.join("dump.txt")).unwrap(), dumped);
    for cut in 1..full.device_writes {
        let report = run(at_write(cut));
        assert_ne!(report.acknowledged.recovered_state, RecoveredState::Mismatch, "cut at write {cut}");
    }
    // On the image a run saved, the model starts from that image (2 rows): a cut in
    // the script's transaction leaves the image's rows and the autocommit insert's.
    let _ = run(CutArgs::default());
    let cuts = CutArgs { power_loss_at: Some(4), ..CutArgs::default() };
    let report = sql_report(&sql_args(&dir, "RR-S2X", SqlJournalMode::Delete, cuts)).unwrap();
    assert_eq!(report.acknowledged.recovered_state, RecoveredState::LastCommit);
    let again = std::fs::read_to_string(dir.join("dump.txt")).unwrap();
    assert_eq!(again.lines().count(), 1 + 3, "{again}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn statements_split_outside_quotes_and_comments_with_their_lines() {
    let script =
        "-- a comment; still\nCREATE TABLE t(x);\n\nINSERT INTO t VALUES('a;b');/* c; */ INSERT\nINTO t VALUES(\"q\");";
    let s = split_statements(script);
    let sql: Vec<&str> = s.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(sql, ["CREATE TABLE t(x)", "INSERT INTO t VALUES('a;b')", "INSERT\nINTO t VALUES(\"q\")"]);
    assert_eq!(s.iter().map(|s| s.line).collect::<Vec<_>>(), [2, 4, 4]);
}
