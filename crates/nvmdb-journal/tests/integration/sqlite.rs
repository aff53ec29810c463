//! Real SQLite on the PCM-journal VFS: journal bytes read back exactly, and a power cut
//! at every device write of a multi-transaction script recovers the last committed state.

use std::sync::{Mutex, MutexGuard, PoisonError};

use nvmdb_journal::vfs::Shadow;
use nvmdb_journal::{DeviceParams, JournalConfig, JournalMode, Simulation};
use rusqlite::Connection;

/// SQLite draws journal nonces from one process-wide PRNG, which each simulation seeds:
/// tests running at once would draw from each other's sequence, so a cut run could make
/// other writes than the uncut run it is compared with. Each test holds this lock.
static SQLITE_PRNG: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SQLITE_PRNG.lock().unwrap_or_else(PoisonError::into_inner)
}

const CONFIGS: [&str; 9] =
    ["RR", "RR-S2", "RR-S2X", "RU", "RU-S2", "RU-S2X", "RU20-S2X", "RU20-S2X-WH64", "RU2-S2X-WH4-INV25"];

/// The transactions, each one `BEGIN … COMMIT` string; the first creates the tables.
fn script() -> Vec<String> {
    let mut txs = vec!["BEGIN;CREATE TABLE msg(id INTEGER PRIMARY KEY, who TEXT, body TEXT);\
         CREATE TABLE meta(k TEXT PRIMARY KEY, v INTEGER);COMMIT;"
        .to_string()];
    for t in 0..10u32 {
        let mut sql = String::from("BEGIN;");
        for i in 0..(4 + t) {
            let id = t * 40 + i;
            sql += &format!(
                "INSERT INTO msg(id, who, body) VALUES({id}, 'user{}', '{}');",
                id % 3,
                "x".repeat(40 + (id as usize * 13) % 200)
            );
        }
        sql += &format!("UPDATE msg SET body = body || '!' WHERE id % 4 = {};", t % 4);
        if t % 2 == 1 {
            sql += &format!("DELETE FROM msg WHERE id = {};", t * 40 - 37);
        }
        sql += &format!("INSERT OR REPLACE INTO meta VALUES('last', {t});COMMIT;");
        txs.push(sql);
    }
    txs
}

fn dump(conn: &Connection) -> Vec<String> {
    let mut rows = Vec::new();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM {table} ORDER BY rowid")).unwrap();
        let mut q = stmt.query([]).unwrap();
        while let Some(row) = q.next().unwrap() {
            let cols: Vec<String> = (0..row.as_ref().column_count())
                .map(|i| match row.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    other => format!("{other:?}"),
                })
                .collect();
            rows.push(format!("{table}|{}", cols.join("|")));
        }
    }
    rows
}

/// The state after the setup and the first `committed` transactions, on plain SQLite.
fn reference(committed: usize) -> Vec<String> {
    let txs = script();
    let conn = Connection::open_in_memory().unwrap();
    for t in &txs[..committed] {
        conn.execute_batch(t).unwrap();
    }
    dump(&conn)
}

/// Runs the script until an error; returns the transactions whose COMMIT returned.
fn run(sim: &Simulation) -> usize {
    run_in(sim, JournalMode::Delete)
}

/// [`run`] in SQLite's journal `mode`.
fn run_in(sim: &Simulation, mode: JournalMode) -> usize {
    let Ok(db) = sim.open_in_mode("main.db", mode) else { return 0 };
    let mut committed = 0;
    for t in &script() {
        if db.execute_batch(t).is_err() {
            break;
        }
        committed += 1;
    }
    committed
}

#[test]
fn journal_reads_return_the_bytes_sqlite_wrote_for_every_config() {
    let _serial = serial();
    for name in CONFIGS {
        reads_match(name, JournalMode::Delete);
    }
}

#[test]
fn journal_reads_return_the_bytes_sqlite_wrote_in_persist_and_truncate_modes() {
    let _serial = serial();
    for mode in [JournalMode::Persist, JournalMode::Truncate] {
        for name in ["RR", "RR-S2X", "RU20-S2X-WH64", "RU2-S2X-WH4-INV25"] {
            reads_match(name, mode);
        }
    }
}

/// Runs the script with every other transaction rolled back (SQLite reads its journal)
/// and checks every journal read against a plain copy of the bytes SQLite wrote.
fn reads_match(name: &str, mode: JournalMode) {
    let config = JournalConfig::parse(name).unwrap();
    let sim = Simulation::new(config, &DeviceParams::PAPER, 7).unwrap();
    sim.with_shared(|s| s.shadow = Some(Shadow::default()));
    {
        let db = sim.open_in_mode("main.db", mode).unwrap();
        let txs = script();
        db.execute_batch(&txs[0]).unwrap();
        for (i, t) in txs.iter().enumerate().skip(1) {
            // Every other transaction is rolled back: SQLite reads its journal.
            let body = t.trim_end_matches("COMMIT;");
            db.execute_batch(body).unwrap();
            if i % 2 == 0 {
                db.execute_batch("ROLLBACK").unwrap();
            } else {
                db.execute_batch("COMMIT").unwrap();
            }
        }
        let check: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok");
    }
    let shadow = sim.with_shared(|s| s.shadow.clone().unwrap());
    assert!(shadow.reads > 10 && shadow.bytes > 4096, "{name} {mode:?}: only {} reads", shadow.reads);
    let (mismatches, reads) = (shadow.mismatches, shadow.reads);
    assert_eq!(mismatches, 0, "{name} {mode:?}: {mismatches} of {reads} journal reads differ");
    assert!(sim.stats().total_bit_updates > 0);
}

/// A journal area of 9 frames, so the script runs garbage collection and frame copies.
const SMALL: DeviceParams = DeviceParams { journal_bytes: 9 << 16, ..DeviceParams::PAPER };

/// Cuts the power at every device write of the script; returns the points tried and
/// how many recoveries found a hot journal.
fn crash_everywhere(name: &str) -> (u64, u64) {
    crash_everywhere_in(name, JournalMode::Delete)
}

/// [`crash_everywhere`] in SQLite's journal `mode`.
fn crash_everywhere_in(name: &str, mode: JournalMode) -> (u64, u64) {
    let config = JournalConfig::parse(name).unwrap();
    let total = {
        let sim = Simulation::new(config, &SMALL, 1).unwrap();
        assert_eq!(run_in(&sim, mode), script().len(), "{name}: {:?}", sim.with_shared(|s| s.take_error()));
        assert_eq!(sim.commits(), script().len() as u64, "{name} {mode:?}: the VFS saw each commit point");
        let stats = sim.stats();
        println!("{name}: {} GC runs, {} frame copies", stats.gc_runs, stats.frame_copies);
        if name.starts_with("RU") {
            assert!(stats.gc_runs > 0, "{name}: the script never collected garbage");
        }
        if name.starts_with("RU2-") {
            assert!(stats.frame_copies > 0, "{name}: the script never reached the reuse limit");
        }
        stats.device_writes
    };
    assert!(total > 50, "{name}: only {total} device writes");
    let mut hot = 0;
    for cut in 1..=total {
        let sim = Simulation::new(config, &SMALL, 1).unwrap();
        sim.cut_power_at(cut);
        let committed = run_in(&sim, mode);
        assert!(sim.is_cut(), "{name}: cut {cut} of {total} was not reached");
        // The VFS saw the commit point of each transaction whose COMMIT returned, and of
        // the one cut short after it.
        let commits = usize::try_from(sim.commits()).unwrap();
        assert!(commits == committed || commits == committed + 1, "{name} {mode:?}: cut {cut}");
        let devices = sim.into_devices();
        let (sim, recovery) = Simulation::recover(config, devices, 2).unwrap();
        hot += recovery.hot_journals;
        let db = sim.open_in_mode("main.db", mode).unwrap();
        let check: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok", "{name} {mode:?}: cut at write {cut}");
        // Exactly the state as of the last commit point the VFS saw.
        assert_eq!(dump(&db), reference(commits), "{name} {mode:?}: cut at write {cut}: {committed} committed");
        // The recovered database takes new transactions, over any journal left behind.
        db.execute_batch("BEGIN;CREATE TABLE after(x);INSERT INTO after VALUES(1);COMMIT;").unwrap();
        drop(db);
        // PERSIST keeps its journal, with a zeroed header.
        let left = sim.with_shared(|s| s.journal.exists("main.db"));
        assert_eq!(left, mode == JournalMode::Persist, "{name} {mode:?}: cut {cut}: journal left behind or gone");
    }
    assert!(hot > total / 4, "{name}: only {hot} of {total} recoveries found a hot journal");
    (total, hot)
}

#[test]
fn power_cut_at_every_write_recovers_rr_s2x() {
    let _serial = serial();
    let (tried, hot) = crash_everywhere("RR-S2X");
    println!("RR-S2X: {tried} crash points tried, {hot} with a hot journal");
}

#[test]
fn power_cut_at_every_write_recovers_ru20_s2x_wh64() {
    let _serial = serial();
    let (tried, hot) = crash_everywhere("RU20-S2X-WH64");
    println!("RU20-S2X-WH64: {tried} crash points tried, {hot} with a hot journal");
}

#[test]
fn power_cut_at_every_write_recovers_rr_and_ru2_inv() {
    let _serial = serial();
    for name in ["RR", "RU2-S2X-WH4-INV25"] {
        let (tried, hot) = crash_everywhere(name);
        println!("{name}: {tried} crash points tried, {hot} with a hot journal");
    }
}

#[test]
fn power_cut_at_every_write_recovers_persist_and_truncate_modes() {
    let _serial = serial();
    for mode in [JournalMode::Persist, JournalMode::Truncate] {
        for name in ["RR-S2X", "RU20-S2X-WH64"] {
            let (tried, hot) = crash_everywhere_in(name, mode);
            println!("{name} {mode:?}: {tried} crash points tried, {hot} with a hot journal");
        }
    }
}

/// A second cut during the recovery (SQLite's rollback of the hot journal, and the
/// deletion of the journal) must leave a state that a third start recovers.
#[test]
fn power_cut_during_recovery_recovers_again() {
    let _serial = serial();
    let config = JournalConfig::RU20_S2X_WH64;
    let total = {
        let sim = Simulation::new(config, &SMALL, 1).unwrap();
        run(&sim);
        sim.stats().device_writes
    };
    let (mut tried, mut rollbacks) = (0, 0);
    for cut in (1..=total).step_by(5) {
        for second in 1..=6u64 {
            let sim = Simulation::new(config, &SMALL, 1).unwrap();
            sim.cut_power_at(cut);
            let committed = run(&sim);
            // The first recovery, cut `second` writes in.
            let (sim, _) = Simulation::recover(config, sim.into_devices(), 2).unwrap();
            let start = sim.stats().device_writes;
            sim.cut_power_at(start + second);
            if let Ok(db) = sim.open("main.db") {
                let _ = db.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0));
            }
            let reached = sim.is_cut();
            let (sim, _) = Simulation::recover(config, sim.into_devices(), 3).unwrap();
            let db = sim.open("main.db").unwrap();
            let check: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
            assert_eq!(check, "ok", "cut {cut}, then {second} writes into recovery");
            let state = dump(&db);
            let after = reference((committed + 1).min(script().len()));
            assert!(state == reference(committed) || state == after, "cut {cut}, then {second}: state differs");
            tried += 1;
            rollbacks += u64::from(reached);
        }
    }
    println!("{tried} double cuts tried, {rollbacks} during a rollback's writes");
    assert!(rollbacks > 0, "no second cut fell inside a recovery");
}

/// Transactions larger than a 10-page cache: SQLite spills dirty pages mid-transaction
/// and writes a new journal header segment before each spill.
fn spill_script() -> Vec<String> {
    let fill = |n: u32, c: char| format!("printf('%.{n}c', '{c}')");
    vec![
        "BEGIN;CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);COMMIT;".to_string(),
        format!(
            "BEGIN;WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 120) \
             INSERT INTO t SELECT x, {} FROM c;COMMIT;",
            fill(200, 'a')
        ),
        format!("BEGIN;UPDATE t SET v = {} WHERE id % 2 = 0;DELETE FROM t WHERE id % 7 = 0;COMMIT;", fill(180, 'b')),
        format!("BEGIN;UPDATE t SET v = {} WHERE id % 3 = 0;INSERT INTO t VALUES(500, 'z');COMMIT;", fill(150, 'c')),
    ]
}

/// The state after the first `committed` spill transactions, on plain SQLite.
fn spill_reference(committed: usize) -> Vec<String> {
    let conn = Connection::open_in_memory().unwrap();
    for t in &spill_script()[..committed] {
        conn.execute_batch(t).unwrap();
    }
    dump(&conn)
}

/// Opens `main.db` with a 10-page cache and runs the spill script until an error;
/// returns the transactions whose COMMIT returned.
fn run_spill(sim: &Simulation) -> usize {
    let Ok(db) = sim.open("main.db") else { return 0 };
    if db.execute_batch("PRAGMA cache_size = 10").is_err() {
        return 0;
    }
    spill_script().iter().take_while(|t| db.execute_batch(t).is_ok()).count()
}

/// PCM bit updates spent on header segments after the first.
fn segment_bits(sim: &Simulation) -> u64 {
    sim.with_shared(|s| s.devices.pcm_by_field()[nvmdb_journal::Field::SegmentHeader.index()].bits_written)
}

#[test]
fn a_transaction_larger_than_the_page_cache_writes_header_segments_read_back_exactly() {
    let _serial = serial();
    for name in ["RR-S2X", "RU20-S2X-WH64", "RU2-S2X-WH4-INV25"] {
        let config = JournalConfig::parse(name).unwrap();
        let sim = Simulation::new(config, &SMALL, 7).unwrap();
        sim.with_shared(|s| s.shadow = Some(Shadow::default()));
        {
            let db = sim.open("main.db").unwrap();
            db.execute_batch("PRAGMA cache_size = 10").unwrap();
            let txs = spill_script();
            db.execute_batch(&txs[0]).unwrap();
            db.execute_batch(&txs[1]).unwrap();
            // The third transaction spills, then is rolled back: SQLite reads every segment.
            db.execute_batch(txs[2].trim_end_matches("COMMIT;")).unwrap();
            db.execute_batch("ROLLBACK").unwrap();
            db.execute_batch(&txs[3]).unwrap();
            let check: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
            assert_eq!(check, "ok", "{name}");
            let conn = Connection::open_in_memory().unwrap();
            for t in [&txs[0], &txs[1], &txs[3]] {
                conn.execute_batch(t).unwrap();
            }
            assert_eq!(dump(&db), dump(&conn), "{name}: the rolled-back transaction left a trace");
        }
        assert!(segment_bits(&sim) > 0, "{name}: no header segment after the first was written");
        let shadow = sim.with_shared(|s| s.shadow.clone().unwrap());
        assert!(shadow.reads > 10, "{name}: only {} journal reads", shadow.reads);
        assert_eq!(shadow.mismatches, 0, "{name}: {} of {} journal reads differ", shadow.mismatches, shadow.reads);
    }
}

#[test]
fn power_cut_at_every_write_of_a_spilling_script_recovers() {
    let _serial = serial();
    for name in ["RR-S2X", "RU20-S2X-WH64"] {
        let config = JournalConfig::parse(name).unwrap();
        let total = {
            let sim = Simulation::new(config, &SMALL, 1).unwrap();
            assert_eq!(run_spill(&sim), spill_script().len(), "{name}: {:?}", sim.with_shared(|s| s.take_error()));
            assert!(segment_bits(&sim) > 0, "{name}: the script never spilled");
            sim.stats().device_writes
        };
        let (mut hot, mut in_segments) = (0, 0);
        for cut in 1..=total {
            let sim = Simulation::new(config, &SMALL, 1).unwrap();
            sim.cut_power_at(cut);
            let committed = run_spill(&sim);
            assert!(sim.is_cut(), "{name}: cut {cut} of {total} was not reached");
            in_segments += u64::from(segment_bits(&sim) > 0);
            let (sim, recovery) = Simulation::recover(config, sim.into_devices(), 2).unwrap();
            hot += recovery.hot_journals;
            let db = sim.open("main.db").unwrap();
            let check: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
            assert_eq!(check, "ok", "{name}: cut at write {cut}");
            let state = dump(&db);
            let after = spill_reference((committed + 1).min(spill_script().len()));
            assert!(
                state == spill_reference(committed) || state == after,
                "{name}: cut at write {cut}: {committed} committed, state differs"
            );
        }
        assert!(in_segments > 0 && hot > total / 4, "{name}: {hot} hot, {in_segments} after a segment");
        println!("{name}, spilling script: {total} crash points tried, {hot} with a hot journal, {in_segments} after a header segment was written");
    }
}
