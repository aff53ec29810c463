//! `nvmdb journal`: real SQLite with its rollback journal in simulated PCM.

use clap::{Args, Subcommand, ValueEnum};
use nvmdb_journal::rusqlite::types::ValueRef;
use nvmdb_journal::rusqlite::Connection;
use nvmdb_journal::{generate, run_workload, App, DeviceParams, JournalConfig, JournalMode, Simulation};
use serde::Serialize;

use crate::error::CliError;
use crate::output::Output;

/// Journal commands.
#[derive(Debug, Subcommand)]
pub enum JournalCommand {
    /// Run a generated mobile-app workload (fb, tw, kt, gm) through SQLite on the PCM
    /// journal and print its bit updates, energy and time.
    Run(RunArgs),
    /// Run an SQL script through SQLite on the PCM journal, optionally cutting the power
    /// at a device write and recovering.
    Sql(SqlArgs),
}

/// Arguments of `nvmdb journal run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Journal configuration, in the paper's grammar (e.g. RR-S2X, RU20-S2X-WH64).
    #[arg(long)]
    pub config: String,
    /// Workload: fb, tw, kt or gm.
    #[arg(long)]
    pub workload: String,
    /// Trace length, 1 to 4.
    #[arg(long, default_value_t = 1)]
    pub length: u32,
    /// The run's one seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The PCM's write time: chunks (7.1 µs per changed 128 B step) or cells (by the
    /// cells each write programs, 64 per 444 ns iteration: a program-power budget).
    #[arg(long, value_enum, default_value_t = PcmWriteTime::Chunks)]
    pub pcm_write_time: PcmWriteTime,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `nvmdb journal sql`.
#[derive(Debug, Args)]
pub struct SqlArgs {
    /// Journal configuration, in the paper's grammar.
    #[arg(long)]
    pub config: String,
    /// An existing directory holding the database image `main.db`: loaded before the
    /// run if present, and saved there after it (after recovery when there was a cut).
    /// Nothing else is written in it.
    #[arg(long)]
    pub db_dir: String,
    /// The SQL script: statements separated by `;`, run in order.
    #[arg(long)]
    pub script: String,
    /// Cut the power at this device write (1-based, PCM and storage writes counted
    /// together); the script stops there, then the database is reopened and recovered.
    /// A cut that interrupts no write or sync of the script is past its end: exit 2.
    #[arg(long)]
    pub power_loss_at: Option<u64>,
    /// Write the final database here: per table in name order, `-- NAME`, then its rows
    /// by rowid, values joined by `|`, each an SQL literal (blobs as `X'FF00'`).
    #[arg(long)]
    pub dump: Option<String>,
    /// SQLite's rollback-journal mode: delete (the commit deletes the journal),
    /// truncate (the commit truncates it to 0 bytes) or persist (the commit zeroes its
    /// header and the journal stays).
    #[arg(long, value_enum, default_value_t = SqlJournalMode::Delete)]
    pub journal_mode: SqlJournalMode,
    /// The seed of SQLite's randomness (journal nonces).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The PCM's write time: chunks (7.1 µs per changed 128 B step) or cells (by the
    /// cells each write programs, 64 per 444 ns iteration: a program-power budget).
    #[arg(long, value_enum, default_value_t = PcmWriteTime::Chunks)]
    pub pcm_write_time: PcmWriteTime,
    /// Print one JSON object instead of the SELECT rows.
    #[arg(long)]
    pub json: bool,
}

/// The rollback-journal modes of `nvmdb journal sql`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SqlJournalMode {
    /// `journal_mode=DELETE`: the commit deletes the journal.
    Delete,
    /// `journal_mode=TRUNCATE`: the commit truncates the journal to 0 bytes.
    Truncate,
    /// `journal_mode=PERSIST`: the commit zeroes the journal header; the journal stays.
    Persist,
}

impl SqlJournalMode {
    fn mode(self) -> JournalMode {
        match self {
            SqlJournalMode::Delete => JournalMode::Delete,
            SqlJournalMode::Truncate => JournalMode::Truncate,
            SqlJournalMode::Persist => JournalMode::Persist,
        }
    }
}

/// The PCM write times of `--pcm-write-time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PcmWriteTime {
    /// A fixed time per changed 128 B step (`nvmdb_journal::PAPER_BOARD_PCM`).
    Chunks,
    /// By the cells each write programs (`nvmdb_journal::PAPER_BOARD_PCM_PROGRAM_BUDGET`).
    Cells,
}

impl PcmWriteTime {
    fn params(self) -> DeviceParams {
        match self {
            PcmWriteTime::Chunks => DeviceParams::PAPER,
            PcmWriteTime::Cells => DeviceParams::PAPER_PROGRAM_BUDGET,
        }
    }
}

/// Runs a `journal` subcommand.
pub fn run(command: JournalCommand) -> Result<(), CliError> {
    match command {
        JournalCommand::Run(args) => run_generated(&args),
        JournalCommand::Sql(args) => run_sql(&args),
    }
}

fn parse_config(text: &str) -> Result<JournalConfig, CliError> {
    JournalConfig::parse(text).map_err(|e| CliError::input(format!("--config: {e}")))
}

#[derive(Debug, Serialize)]
struct RunReport {
    config: String,
    workload: String,
    length: u32,
    seed: u64,
    db_files: usize,
    transactions: usize,
    commands: u64,
    total_bit_updates: u64,
    max_bit_updates: u64,
    energy_pj: u64,
    time_ns: u64,
    time_per_command_ns: u64,
    pcm_write_time: PcmWriteTime,
    device_writes: u64,
    frame_copies: u64,
    gc_runs: u64,
    writes_per_page: f64,
    small_overwrite_percent: f64,
    hottest_field: String,
}

fn run_generated(args: &RunArgs) -> Result<(), CliError> {
    let config = parse_config(&args.config)?;
    let app = App::parse(&args.workload).map_err(|e| CliError::input(format!("--workload: {e}")))?;
    let workload = generate(app, args.length, args.seed).map_err(|e| CliError::input(format!("--length: {e}")))?;
    let run = run_workload(Some(config), &workload, &args.pcm_write_time.params(), args.seed)
        .map_err(|e| CliError::failed(e.to_string()))?;
    let report = RunReport {
        config: config.to_string(),
        workload: app.code().into(),
        length: args.length,
        seed: args.seed,
        db_files: workload.db_files.len(),
        transactions: workload.transactions.len(),
        commands: run.commands,
        total_bit_updates: run.stats.total_bit_updates,
        max_bit_updates: run.stats.max_bit_updates,
        energy_pj: run.stats.energy_pj,
        time_ns: run.stats.time_ns,
        time_per_command_ns: run.transactions_time_ns.checked_div(run.commands).unwrap_or(0),
        pcm_write_time: args.pcm_write_time,
        device_writes: run.stats.device_writes,
        frame_copies: run.stats.frame_copies,
        gc_runs: run.stats.gc_runs,
        writes_per_page: run.writes_per_page,
        small_overwrite_percent: run.small_overwrite_percent,
        hottest_field: run.hottest_field.clone(),
    };
    let out = Output::new();
    if args.json {
        return out.json(&report);
    }
    let mut out = out;
    let value = serde_json::to_value(&report).map_err(|e| CliError::failed(e.to_string()))?;
    if let serde_json::Value::Object(fields) = value {
        for (k, v) in fields {
            out.line(format_args!("{k:<24} {v}"))?;
        }
    }
    out.finish()
}

/// One statement of a script and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The SQL, without the `;`.
    pub sql: String,
    /// 1-based line of its first character.
    pub line: u64,
}

/// Splits a script at `;` outside quotes and comments. Empty statements are dropped.
pub fn split_statements(script: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut current = String::new();
    let (mut line, mut start_line) = (1u64, None);
    let mut chars = script.chars().peekable();
    let mut push = |current: &mut String, start: &mut Option<u64>| {
        let sql = current.trim();
        if !sql.is_empty() {
            out.push(Statement { sql: sql.to_string(), line: start.unwrap_or(1) });
        }
        current.clear();
        *start = None;
    };
    while let Some(c) = chars.next() {
        if c == '\n' {
            line = line.saturating_add(1);
        }
        if start_line.is_none() && !c.is_whitespace() {
            start_line = Some(line);
        }
        match c {
            // A trigger's body holds statements of its own: it ends at `; END ;`.
            ';' if is_trigger(&current) && !ends_trigger_body(&current) => current.push(c),
            ';' => push(&mut current, &mut start_line),
            '\'' | '"' | '`' | '[' => {
                let close = if c == '[' { ']' } else { c };
                current.push(c);
                for d in chars.by_ref() {
                    if d == '\n' {
                        line = line.saturating_add(1);
                    }
                    current.push(d);
                    if d == close {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        line = line.saturating_add(1);
                        current.push('\n');
                        break;
                    }
                }
                if current.trim().is_empty() {
                    start_line = None;
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if d == '\n' {
                        line = line.saturating_add(1);
                    }
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
                current.push(' ');
                if current.trim().is_empty() {
                    start_line = None;
                }
            }
            _ => current.push(c),
        }
    }
    push(&mut current, &mut start_line);
    out
}

/// Whether `sql` starts `CREATE [TEMP|TEMPORARY] TRIGGER`.
fn is_trigger(sql: &str) -> bool {
    let mut words = sql.split_whitespace().map(str::to_ascii_uppercase);
    words.next().as_deref() == Some("CREATE") && {
        let next = words.next();
        let next = if matches!(next.as_deref(), Some("TEMP" | "TEMPORARY")) { words.next() } else { next };
        next.as_deref() == Some("TRIGGER")
    }
}

/// Whether a trigger's text so far ends with its body's `; END` (SQLite's own rule,
/// `sqlite3_complete`: a `CASE … END` inside the body is not preceded by `;`).
fn ends_trigger_body(sql: &str) -> bool {
    let sql = sql.trim_end();
    let Some(before) = sql.len().checked_sub(3).and_then(|cut| sql.get(..cut)) else { return false };
    sql[before.len()..].eq_ignore_ascii_case("END")
        && !before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
        && before.trim_end().ends_with(';')
}

fn is_keyword(sql: &str, words: &[&str]) -> bool {
    let first = sql.split_whitespace().next().unwrap_or_default();
    words.iter().any(|w| first.eq_ignore_ascii_case(w))
}

/// A value as sqlite3's list mode prints it.
fn list_value(conn: &Connection, value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => String::new(),
        ValueRef::Integer(v) => v.to_string(),
        // SQLite's own text conversion of a real.
        ValueRef::Real(v) => {
            conn.query_row("SELECT CAST(?1 AS TEXT)", [v], |r| r.get(0)).unwrap_or_else(|_| v.to_string())
        }
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
    }
}

/// A value as an SQL literal that gives it back exactly (sqlite3's quote mode, but a
/// real with every digit it needs): `NULL`, an integer, a real (`1.0`, not `1`), text
/// quoted with `''` (`CAST(X'..' AS TEXT)` when not UTF-8), a blob as `X'FF00'`.
fn sql_literal(value: ValueRef<'_>) -> String {
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02X}")).collect::<String>();
    match value {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(v) => v.to_string(),
        ValueRef::Real(v) => format!("{v:?}"),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(text) => format!("'{}'", text.replace('\'', "''")),
            Err(_) => format!("CAST(X'{}' AS TEXT)", hex(t)),
        },
        ValueRef::Blob(b) => format!("X'{}'", hex(b)),
    }
}

/// Runs one statement, returning its rows in list format.
fn execute(conn: &Connection, sql: &str) -> Result<Vec<String>, nvmdb_journal::rusqlite::Error> {
    execute_as(conn, sql, &|v| list_value(conn, v))
}

/// Runs one statement, returning its rows with each value as `format` writes it, joined
/// by `|`.
fn execute_as(
    conn: &Connection,
    sql: &str,
    format: &dyn Fn(ValueRef<'_>) -> String,
) -> Result<Vec<String>, nvmdb_journal::rusqlite::Error> {
    let mut stmt = conn.prepare(sql)?;
    let columns = stmt.column_count();
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let values: Vec<String> = (0..columns).map(|i| row.get_ref(i).map(format)).collect::<Result<_, _>>()?;
        if columns > 0 {
            out.push(values.join("|"));
        }
    }
    Ok(out)
}

fn dump(conn: &Connection) -> Result<String, nvmdb_journal::rusqlite::Error> {
    let mut text = String::new();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for table in tables {
        text += &format!("-- {table}\n");
        let quoted = table.replace('"', "\"\"");
        let rows = execute_as(conn, &format!("SELECT * FROM \"{quoted}\" ORDER BY rowid"), &sql_literal)
            .or_else(|_| execute_as(conn, &format!("SELECT * FROM \"{quoted}\""), &sql_literal))?;
        for row in rows {
            text += &row;
            text.push('\n');
        }
    }
    Ok(text)
}

#[derive(Debug, Serialize)]
struct SqlReport {
    config: String,
    journal_mode: &'static str,
    statements_run: usize,
    committed_transactions: u64,
    crashed: bool,
    /// Every row `PRAGMA integrity_check` returned (`["ok"]` for a sound database).
    integrity_check: Vec<String>,
    total_bit_updates: u64,
    max_bit_updates: u64,
    energy_pj: u64,
    time_ns: u64,
    pcm_write_time: PcmWriteTime,
    recovery_ns: u64,
    device_writes: u64,
    rows: Vec<String>,
}

/// SQLite virtual-machine steps one statement may take (checked every 1000 steps), so a
/// runaway query (an unbounded recursive CTE) stops with an error instead of hanging.
const MAX_VM_STEPS: u64 = 2_000_000_000;

/// Interrupts any statement of `conn` past [`MAX_VM_STEPS`]; the counter restarts with
/// every statement.
fn limit_steps(conn: &Connection) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let steps = std::sync::Arc::new(AtomicU64::new(0));
    let counter = std::sync::Arc::clone(&steps);
    conn.progress_handler(
        1000,
        Some(move || counter.fetch_add(1000, Ordering::Relaxed).saturating_add(1000) > MAX_VM_STEPS),
    );
    steps
}

/// Whether SQLite found the database image malformed (not a database, or corrupt).
fn not_a_database(e: &nvmdb_journal::rusqlite::Error) -> bool {
    use nvmdb_journal::rusqlite::ErrorCode;
    matches!(e.sqlite_error_code(), Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt))
}

/// The database file's name on the simulated device and in `--db-dir`.
const DB_NAME: &str = "main.db";

fn run_sql(args: &SqlArgs) -> Result<(), CliError> {
    let report = sql_report(args)?;
    let mut out = Output::new();
    if args.json {
        return out.json(&report);
    }
    for row in &report.rows {
        out.line(row)?;
    }
    out.finish()
}

/// Runs the script of `args` and returns what the JSON reports.
fn sql_report(args: &SqlArgs) -> Result<SqlReport, CliError> {
    let config = parse_config(&args.config)?;
    let dir = std::path::Path::new(&args.db_dir);
    if !dir.is_dir() {
        return Err(CliError::input(format!("--db-dir {}: not a directory", args.db_dir)));
    }
    let image_path = dir.join(DB_NAME);
    let image = image_path.to_string_lossy().into_owned();
    // The image is written back after the run: it must be neither the script nor the dump.
    let mut outputs = vec![("--db-dir database", image.as_str())];
    if let Some(dump_path) = &args.dump {
        if crate::input::same_file(std::path::Path::new(dump_path), dir) {
            return Err(CliError::input(format!("--dump {dump_path}: is the --db-dir directory, not a file")));
        }
        outputs.push(("--dump", dump_path));
    }
    crate::input::check_outputs(&outputs, &[("--script", &args.script)])?;
    let script = crate::input::read_small(&args.script)?;
    let statements = split_statements(&script);
    if args.power_loss_at == Some(0) {
        return Err(CliError::input("--power-loss-at: writes are counted from 1"));
    }
    let failed = |e: nvmdb_journal::JournalError| CliError::failed(e.to_string());
    let sim = Simulation::new(config, &args.pcm_write_time.params(), args.seed).map_err(failed)?;
    let loaded = image_path.is_file();
    if loaded {
        let bytes = std::fs::read(&image_path).map_err(|e| CliError::unreadable(&image, &e))?;
        if bytes.len() as u64 > nvmdb_journal::devices::MAX_FILE_BYTES {
            return Err(CliError::input(format!("{image}: larger than the simulated device's files")));
        }
        sim.load_file(DB_NAME, bytes);
    }
    if let Some(n) = args.power_loss_at {
        sim.cut_power_at(n);
    }
    let mut rows = Vec::new();
    let mut committed = 0u64;
    let mut run = 0usize;
    {
        // SQLite reads the loaded image when it opens it: SQLite refusing it (not a
        // database) is the image's fault.
        let db = sim.open_in_mode(DB_NAME, args.journal_mode.mode()).map_err(|e| match e {
            e @ nvmdb_journal::JournalError::Sqlite(_) if loaded => CliError::input(format!("{image}: {e}")),
            e => failed(e),
        })?;
        let steps = limit_steps(&db);
        for statement in &statements {
            nvmdb_cancel::check()?;
            steps.store(0, std::sync::atomic::Ordering::Relaxed);
            match execute(&db, &statement.sql) {
                Ok(out) => {
                    run = run.saturating_add(1);
                    if is_keyword(&statement.sql, &["COMMIT", "END"]) {
                        committed = committed.saturating_add(1);
                    }
                    rows.extend(out);
                }
                Err(_) if sim.is_cut() => break,
                Err(e) if steps.load(std::sync::atomic::Ordering::Relaxed) > MAX_VM_STEPS => {
                    return Err(CliError::at_line(
                        &args.script,
                        statement.line,
                        format!("stopped after {MAX_VM_STEPS} SQLite steps ({e})"),
                    ))
                }
                Err(e) if not_a_database(&e) => return Err(CliError::input(format!("{image}: {e}"))),
                Err(e) => return Err(CliError::at_line(&args.script, statement.line, e)),
            }
        }
    }
    if let Some(n) = args.power_loss_at.filter(|_| !sim.cut_interrupted()) {
        return Err(CliError::input(format!(
            "--power-loss-at: device write {n} is past the end of the script ({} device writes in all)",
            sim.stats().device_writes
        )));
    }
    let crashed = sim.is_cut();
    let (sim, recovery_ns) = if crashed {
        let devices = sim.into_devices();
        let (sim, recovery) = Simulation::recover(config, devices, args.seed.wrapping_add(1)).map_err(failed)?;
        (sim, recovery.time_ns)
    } else {
        (sim, 0)
    };
    let (integrity, dumped) = {
        let db = sim.open_in_mode(DB_NAME, args.journal_mode.mode()).map_err(failed)?;
        let check =
            execute(&db, "PRAGMA integrity_check").map_err(|e| CliError::failed(format!("integrity_check: {e}")))?;
        let dumped = match &args.dump {
            Some(_) => Some(dump(&db).map_err(|e| CliError::failed(format!("--dump: {e}")))?),
            None => None,
        };
        (check, dumped)
    };
    if let (Some(path), Some(text)) = (&args.dump, &dumped) {
        crate::output::write_file(path, text)?;
    }
    if let Some(bytes) = sim.file(DB_NAME) {
        crate::output::write_bytes(&image, &bytes)?;
    }
    let stats = sim.stats();
    Ok(SqlReport {
        config: config.to_string(),
        journal_mode: args.journal_mode.mode().name(),
        statements_run: run,
        committed_transactions: committed,
        crashed,
        integrity_check: integrity,
        total_bit_updates: stats.total_bit_updates,
        max_bit_updates: stats.max_bit_updates,
        energy_pj: stats.energy_pj,
        time_ns: stats.time_ns,
        pcm_write_time: args.pcm_write_time,
        recovery_ns,
        device_writes: stats.device_writes,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_recovers_after_a_cut_and_dumps_a_committed_state() {
        let dir = std::env::temp_dir().join(format!("nvmdb-journal-sql-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("s.sql");
        std::fs::write(
            &script,
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);\nBEGIN;\nINSERT INTO t VALUES(1, 'a');\nCOMMIT;\n\
             BEGIN;\nINSERT INTO t VALUES(2, NULL);\nUPDATE t SET v = 'b' WHERE id = 1;\nCOMMIT;\n",
        )
        .unwrap();
        let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
        let states = ["-- t\n", "-- t\n1|'a'\n", "-- t\n1|'b'\n2|NULL\n"];
        let mut cuts = 0;
        for cut in 1..40 {
            let _ = std::fs::remove_file(dir.join(DB_NAME));
            let args = SqlArgs {
                config: "RU20-S2X-WH64".into(),
                db_dir: dir.to_string_lossy().into_owned(),
                script: path("s.sql"),
                power_loss_at: Some(cut),
                dump: Some(path("dump.txt")),
                journal_mode: SqlJournalMode::Delete,
                seed: 1,
                pcm_write_time: PcmWriteTime::Chunks,
                json: true,
            };
            run_sql(&args).unwrap();
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
            execute(&conn, &statement.sql).unwrap();
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
        let id = std::process::id();
        let dir = std::env::temp_dir().join(format!("nvmdb-journal-cuts-{id}-{test}-{config}-{mode:?}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("s.sql"), script).unwrap();
        let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
        let states = committed_states(script);
        let args = |cut: Option<u64>| SqlArgs {
            config: config.into(),
            db_dir: dir.to_string_lossy().into_owned(),
            script: path("s.sql"),
            power_loss_at: cut,
            dump: Some(path("dump.txt")),
            journal_mode: mode,
            seed: 1,
            pcm_write_time: PcmWriteTime::Chunks,
            json: true,
        };
        let full = sql_report(&args(None)).unwrap();
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

    #[test]
    fn statements_split_outside_quotes_and_comments_with_their_lines() {
        let script = "-- a comment; still\nCREATE TABLE t(x);\n\nINSERT INTO t VALUES('a;b');/* c; */ INSERT\nINTO t VALUES(\"q\");";
        let s = split_statements(script);
        let sql: Vec<&str> = s.iter().map(|s| s.sql.as_str()).collect();
        assert_eq!(sql, ["CREATE TABLE t(x)", "INSERT INTO t VALUES('a;b')", "INSERT\nINTO t VALUES(\"q\")"]);
        assert_eq!(s.iter().map(|s| s.line).collect::<Vec<_>>(), [2, 4, 4]);
    }
}
