//! `nvmdb journal`: real SQLite with its rollback journal in simulated PCM.

use clap::{Args, Subcommand, ValueEnum};
use nvmdb_journal::rusqlite::types::ValueRef;
use nvmdb_journal::rusqlite::{Connection, OpenFlags};
use nvmdb_journal::{
    generate, run_workload, App, CutActivity, Db, DeviceParams, JournalConfig, JournalError, JournalMode, Mark,
    Simulation, WorkloadRun,
};
use serde::Serialize;

use crate::error::CliError;
use crate::output::Output;

/// Journal commands.
#[derive(Debug, Subcommand)]
pub enum JournalCommand {
    /// Run a generated mobile-app workload (fb, tw, kt, gm) through SQLite on the PCM
    /// journal and print its bit updates, energy and time; optionally cut the power,
    /// recover, and check every DB file against a model of the acknowledged state.
    Run(RunArgs),
    /// Run an SQL script through SQLite on the PCM journal, optionally cutting the power,
    /// recovering, and checking the database against a model of the acknowledged state
    /// (exit 1 on a difference).
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
    #[command(flatten)]
    pub cuts: CutArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The power cuts of `journal run` and `journal sql`. After a cut the machine recovers
/// from its devices alone (the journal's metadata from PCM, then SQLite's rollback of
/// each hot journal as it opens every DB file and runs `PRAGMA integrity_check`), and
/// each DB file's contents are compared with the harness's own model of what SQLite
/// acknowledged (JSON `acknowledged`).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct CutArgs {
    /// Cuts the power after the N-th statement of the script (`sql`) or transaction of
    /// the workload (`run`, its setup not counted), from 1, before anything of the next
    /// begins. Past the end: exit 2.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub power_loss_at: Option<u64>,
    /// Cuts the power before the N-th device write (PCM and storage writes together,
    /// from 1, counted from the machine's first write: `run`'s setup included), inside
    /// whatever SQLite is doing: a journal write, a database write, a sync, the commit or
    /// a rollback (JSON `power_loss.activity`). Not with --power-loss-at. A cut that
    /// refuses no write or sync is past the end: exit 2.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub power_loss_at_write: Option<u64>,
    /// A second cut, before the M-th device write (from 1) of the recovery after the
    /// first: the machine recovers again from its devices. Needs --power-loss-at or
    /// --power-loss-at-write; past the recovery's device writes (JSON
    /// `power_loss.recovery_device_writes` without it), exit 2.
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u64).range(1..))]
    pub power_loss_during_recovery: Option<u64>,
}

impl CutArgs {
    /// Whether any cut is asked for; refuses combinations that do nothing.
    fn check(&self) -> Result<bool, CliError> {
        if self.power_loss_at.is_some() && self.power_loss_at_write.is_some() {
            return Err(CliError::input(
                "--power-loss-at and --power-loss-at-write: a run cuts the power once; give one",
            ));
        }
        let cut = self.power_loss_at.is_some() || self.power_loss_at_write.is_some();
        if self.power_loss_during_recovery.is_some() && !cut {
            return Err(CliError::input(
                "--power-loss-during-recovery does nothing without --power-loss-at or --power-loss-at-write: there is \
                 no recovery",
            ));
        }
        Ok(cut)
    }
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
    #[command(flatten)]
    pub cuts: CutArgs,
    /// Write the final database here: per table in name order, `-- NAME`, then its rows
    /// by rowid, values joined by `|`, each an SQL literal (blobs as `X'FF00'`).
    #[arg(long)]
    pub dump: Option<String>,
    /// Compare the final database (after recovery when there was a cut), dumped as
    /// --dump writes it, with this file: on a difference the report is printed, then one
    /// line on stderr names the first differing line, and the exit code is 1.
    #[arg(long, value_name = "DUMP")]
    pub expect: Option<String>,
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
    /// With a cut: where it fell and what the recovery did.
    #[serde(skip_serializing_if = "Option::is_none")]
    power_loss: Option<PowerLoss>,
    /// With a cut: every row of each DB file's `PRAGMA integrity_check` after recovery.
    #[serde(skip_serializing_if = "Option::is_none")]
    integrity_check: Option<std::collections::BTreeMap<String, Vec<String>>>,
    /// With a cut: the recovered DB files against the model of acknowledged state.
    #[serde(skip_serializing_if = "Option::is_none")]
    acknowledged: Option<Acknowledged>,
}

fn run_generated(args: &RunArgs) -> Result<(), CliError> {
    let config = parse_config(&args.config)?;
    let app = App::parse(&args.workload).map_err(|e| CliError::input(format!("--workload: {e}")))?;
    let workload = generate(app, args.length, args.seed).map_err(|e| CliError::input(format!("--length: {e}")))?;
    let report = if args.cuts.check()? {
        cut_run(args, config, app, &workload)?
    } else {
        let run = run_workload(Some(config), &workload, &args.pcm_write_time.params(), args.seed)
            .map_err(|e| CliError::failed(e.to_string()))?;
        run_report(args, config, app, &workload, &run)
    };
    let out = Output::new();
    if args.json {
        out.json(&report)?;
    } else {
        let mut out = out;
        let value = serde_json::to_value(&report).map_err(|e| CliError::failed(e.to_string()))?;
        if let serde_json::Value::Object(fields) = value {
            for (k, v) in fields {
                out.line(format_args!("{k:<24} {v}"))?;
            }
        }
        out.finish()?;
    }
    report.acknowledged.as_ref().map_or(Ok(()), Acknowledged::verdict)
}

fn run_report(
    args: &RunArgs,
    config: JournalConfig,
    app: App,
    workload: &nvmdb_journal::Workload,
    run: &WorkloadRun,
) -> RunReport {
    RunReport {
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
        power_loss: None,
        integrity_check: None,
        acknowledged: None,
    }
}

/// `journal run` with a power cut: the setup and the transactions run statement by
/// statement beside the model, the figures are those of the run up to the cut, and the
/// recovered DB files are checked.
fn cut_run(
    args: &RunArgs,
    config: JournalConfig,
    app: App,
    workload: &nvmdb_journal::Workload,
) -> Result<RunReport, CliError> {
    let transactions = workload.transactions.len() as u64;
    if let Some(n) = args.cuts.power_loss_at.filter(|&n| n > transactions) {
        return Err(CliError::input(format!(
            "--power-loss-at: transaction {n} is past the end of the workload ({transactions} transactions)"
        )));
    }
    let failed = |e: JournalError| CliError::failed(e.to_string());
    let names: Vec<&str> = workload.db_files.iter().map(String::as_str).collect();
    let split: Vec<(usize, u64, Vec<Statement>)> = (workload.setup.iter().enumerate().map(|(db, sql)| (db, 0, sql)))
        .chain(workload.transactions.iter().zip(1u64..).map(|((db, sql), t)| (*db, t, sql)))
        .map(|(db, t, sql)| (db, t, split_statements(sql)))
        .collect();
    let steps: Vec<Step<'_>> = split
        .iter()
        .flat_map(|(db, t, statements)| {
            statements.iter().map(move |s| Step { db: *db, sql: &s.sql, operation: *t, line: s.line })
        })
        .collect();
    let sim = Simulation::new(config, &args.pcm_write_time.params(), args.seed).map_err(failed)?;
    if let Some(n) = args.cuts.power_loss_at_write {
        sim.cut_power_at(n);
    }
    let mut models = names.iter().map(|_| Model::new(None)).collect::<Result<Vec<_>, _>>()?;
    let blame = |step: &Step<'_>, e: String| {
        CliError::failed(format!("transaction {} on {}: {e}", step.operation, names[step.db]))
    };
    let (driven, run) = {
        let dbs = names.iter().map(|n| sim.open_in_mode(n, JournalMode::Delete)).collect::<Result<Vec<_>, _>>();
        let dbs = dbs.map_err(failed)?;
        let mut start = None;
        let mut mark = |step: &Step<'_>| {
            if step.operation > 0 && start.is_none() {
                start = Some(Mark::now(&sim));
            }
        };
        let driven = drive(&sim, &dbs, &mut models, &steps, &args.cuts, args.seed, &mut mark, &blame)?;
        let commands = steps[..driven.statements_run].iter().filter(|s| s.operation > 0).count() as u64;
        let run = WorkloadRun::measure(&sim, &start.unwrap_or_else(|| Mark::now(&sim)), commands);
        (driven, run)
    };
    let mut driven = driven;
    driven.closed(&sim, &args.cuts, &steps);
    let cut = driven.cut.as_ref().ok_or_else(|| past_the_end(&args.cuts, "the workload", &sim))?;
    let step = &steps[cut.step];
    let second = args.cuts.power_loss_during_recovery;
    let recovered = recover(config, sim.into_devices(), &names, JournalMode::Delete, args.seed, second)?;
    let mut report = run_report(args, config, app, workload, &run);
    let dumps: Vec<_> = names.iter().map(|name| dump_of(&recovered.sim, name, JournalMode::Delete)).collect();
    report.acknowledged = Some(Acknowledged::check(&names, &models, &driven, &dumps)?);
    report.integrity_check = Some(names.iter().map(|n| n.to_string()).zip(recovered.integrity.clone()).collect());
    report.power_loss = Some(PowerLoss {
        statement: None,
        line: None,
        transaction: Some(step.operation),
        db_file: Some(names[step.db].to_string()),
        ..PowerLoss::new(cut, &recovered)
    });
    Ok(report)
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

/// Runs one statement, returning its rows in list format; more than `max_bytes` of them
/// is an error ("too big").
fn execute(conn: &Connection, sql: &str, max_bytes: usize) -> Result<Vec<String>, nvmdb_journal::rusqlite::Error> {
    execute_as(conn, sql, &|v| list_value(conn, v), max_bytes)
}

/// Runs one statement, returning its rows with each value as `format` writes it, joined
/// by `|`; stops with SQLITE_TOOBIG once the rows pass `max_bytes`.
fn execute_as(
    conn: &Connection,
    sql: &str,
    format: &dyn Fn(ValueRef<'_>) -> String,
    max_bytes: usize,
) -> Result<Vec<String>, nvmdb_journal::rusqlite::Error> {
    use nvmdb_journal::rusqlite::{ffi, Error};
    let mut stmt = conn.prepare(sql)?;
    let columns = stmt.column_count();
    let mut rows = stmt.query([])?;
    let (mut out, mut bytes) = (Vec::new(), 0usize);
    while let Some(row) = rows.next()? {
        let values: Vec<String> = (0..columns).map(|i| row.get_ref(i).map(format)).collect::<Result<_, _>>()?;
        if columns > 0 {
            let row = values.join("|");
            bytes = bytes.saturating_add(row.len()).saturating_add(1);
            if bytes > max_bytes {
                let what = format!("the rows printed pass the script's {MAX_OUTPUT_BYTES}-byte output limit");
                return Err(Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_TOOBIG), Some(what)));
            }
            out.push(row);
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
        let rows = execute_as(conn, &format!("SELECT * FROM \"{quoted}\" ORDER BY rowid"), &sql_literal, usize::MAX)
            .or_else(|_| execute_as(conn, &format!("SELECT * FROM \"{quoted}\""), &sql_literal, usize::MAX))?;
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
    /// Transactions committed, autocommit statements included, as the VFS saw their
    /// commit point (a cut after a commit point counts that commit).
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
    /// Where the cut fell and what the recovery did (`null` without a cut).
    power_loss: Option<PowerLoss>,
    /// The final (recovered) database against the model of acknowledged state.
    acknowledged: Acknowledged,
    /// The final database against `--expect` (`null` without it).
    expect: Option<Expected>,
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

/// SQLite's heap in `journal sql`: at most 1 GiB, and a quarter of the memory available.
fn sqlite_heap_limit_bytes() -> u64 {
    (1u64 << 30).min(crate::limits::machine_memory_bytes() / 4)
}

/// The most output (rows printed) a script may produce, bytes: SQLite bounds each value
/// and row (at the device file's size) but not how many rows a script prints.
const MAX_OUTPUT_BYTES: usize = 256 << 20;

/// The database file's name on the simulated device and in `--db-dir`.
const DB_NAME: &str = "main.db";

/// One statement the harness runs: on which DB file, in which operation (a statement of
/// `sql`, a transaction of `run`: 0 for its setup), from which line of its text.
struct Step<'a> {
    db: usize,
    sql: &'a str,
    operation: u64,
    line: u64,
}

/// The harness's own model of what SQLite acknowledged on one DB file: plain SQLite in
/// memory that runs every statement the simulated SQLite returned from, so with the same
/// transactions; its state as of its last commit is the acknowledged state. Nothing in it
/// is read from the simulated devices.
struct Model {
    conn: Connection,
}

impl Model {
    /// A model starting from the database image at `image` (read only), or empty.
    fn new(image: Option<&std::path::Path>) -> Result<Model, CliError> {
        let mut conn = Connection::open_in_memory().map_err(model_failed)?;
        // The model touches no file: ATTACH (and VACUUM INTO, which attaches) is refused.
        conn.set_limit(nvmdb_journal::rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0);
        if let Some(path) = image {
            // A file that is not a database is bad input.
            let unreadable = |e: nvmdb_journal::rusqlite::Error| CliError::input(format!("{}: {e}", path.display()));
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let source = Connection::open_with_flags(path, flags).map_err(unreadable)?;
            let backup = nvmdb_journal::rusqlite::backup::Backup::new(&source, &mut conn).map_err(unreadable)?;
            backup.run_to_completion(1024, std::time::Duration::ZERO, None).map_err(unreadable)?;
        }
        Ok(Model { conn })
    }

    /// Runs `step` on the model.
    fn run(&self, step: &Step<'_>, blame: &dyn Fn(&Step<'_>, String) -> CliError) -> Result<(), CliError> {
        execute(&self.conn, step.sql, usize::MAX)
            .map_err(|e| blame(step, format!("the check's model cannot run it: {e}")))?;
        Ok(())
    }

    /// The dump of the model as of its last commit: a transaction left open is rolled
    /// back.
    fn committed(&self) -> Result<String, CliError> {
        if !self.conn.is_autocommit() {
            self.conn.execute_batch("ROLLBACK").map_err(model_failed)?;
        }
        dump(&self.conn).map_err(model_failed)
    }
}

fn model_failed(e: nvmdb_journal::rusqlite::Error) -> CliError {
    CliError::failed(format!("the check's model: {e}"))
}

/// Gives `conn` its own `random()` and `randomblob(N)`, drawing from one stream seeded by
/// `seed`: SQLite's own draw from its process-wide generator, which the journal's nonces
/// and every connection share, so the simulated run and the check's model would draw
/// different values.
fn seed_random(conn: &Connection, seed: u64) -> Result<(), nvmdb_journal::rusqlite::Error> {
    use nvmdb_journal::rusqlite::functions::FunctionFlags;
    use nvmdb_journal::rusqlite::limits::Limit;
    use rand::{RngCore, SeedableRng};
    let rng = std::sync::Arc::new(std::sync::Mutex::new(rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed)));
    let lock = |rng: &std::sync::Mutex<rand_xoshiro::Xoshiro256PlusPlus>| {
        rng.lock().unwrap_or_else(std::sync::PoisonError::into_inner).next_u64()
    };
    let (draw, flags) = (std::sync::Arc::clone(&rng), FunctionFlags::SQLITE_UTF8);
    conn.create_scalar_function("random", 0, flags, move |_| Ok(lock(&draw) as i64))?;
    // As SQLite's: at least 1 byte, at most the connection's length limit.
    let limit = i64::from(conn.limit(Limit::SQLITE_LIMIT_LENGTH));
    conn.create_scalar_function("randomblob", 1, flags, move |ctx| {
        #[allow(clippy::cast_possible_truncation, reason = "SQLite's own length of a real truncates it")]
        let n = match ctx.get_raw(0) {
            ValueRef::Integer(n) => n,
            ValueRef::Real(r) => r as i64,
            _ => 1,
        };
        if n > limit {
            return Err(nvmdb_journal::rusqlite::Error::UserFunctionError("string or blob too big".into()));
        }
        let mut bytes = vec![0u8; usize::try_from(n.max(1)).unwrap_or(1)];
        rng.lock().unwrap_or_else(std::sync::PoisonError::into_inner).fill_bytes(&mut bytes);
        Ok(bytes)
    })
}

/// Where the power was cut, as the harness saw it.
struct CutPoint {
    /// The step the cut fell in (`inside`) or after, and its DB file.
    step: usize,
    db: usize,
    inside: bool,
    /// The device write refused (between operations: the next the run would make).
    device_write: u64,
    activity: Option<CutActivity>,
    /// The DB file's state with the interrupted statement done, when its commit point
    /// passed before the cut.
    in_flight: Option<String>,
}

/// What a run of steps did.
struct Driven {
    rows: Vec<String>,
    /// Bytes of `rows`, each with its line end.
    output_bytes: usize,
    statements_run: usize,
    /// Commits of statements SQLite returned from.
    acknowledged_commits: u64,
    cut: Option<CutPoint>,
}

/// Runs `steps` on `dbs` and, for each statement SQLite returns from, on `models`, until
/// the end or a cut (`cuts`: after an operation, or at the device write the simulation
/// was set to refuse). `before` is called before each step. `random()` and
/// `randomblob()` draw from a stream seeded by `seed` (and the DB file's index), the
/// same on a DB file and its model.
#[allow(clippy::too_many_arguments, reason = "the run's parts, each used once")]
fn drive(
    sim: &Simulation,
    dbs: &[Db<'_>],
    models: &mut [Model],
    steps: &[Step<'_>],
    cuts: &CutArgs,
    seed: u64,
    before: &mut dyn FnMut(&Step<'_>),
    blame: &dyn Fn(&Step<'_>, String) -> CliError,
) -> Result<Driven, CliError> {
    use std::sync::atomic::Ordering;
    for ((db, model), i) in dbs.iter().zip(models.iter()).zip(0u64..) {
        let seeded =
            seed_random(db, seed.wrapping_add(i)).and_then(|()| seed_random(&model.conn, seed.wrapping_add(i)));
        seeded.map_err(|e| CliError::failed(format!("random(): {e}")))?;
    }
    let counters: Vec<_> = dbs.iter().map(|db| limit_steps(db)).collect();
    let mut driven =
        Driven { rows: Vec::new(), output_bytes: 0, statements_run: 0, acknowledged_commits: 0, cut: None };
    for (i, step) in steps.iter().enumerate() {
        nvmdb_cancel::check()?;
        before(step);
        counters[step.db].store(0, Ordering::Relaxed);
        let commits = sim.commits();
        match execute(&dbs[step.db], step.sql, MAX_OUTPUT_BYTES.saturating_sub(driven.output_bytes)) {
            Ok(out) => {
                driven.output_bytes =
                    out.iter().fold(driven.output_bytes, |n, row| n.saturating_add(row.len()).saturating_add(1));
                driven.rows.extend(out);
                driven.statements_run = driven.statements_run.saturating_add(1);
                driven.acknowledged_commits =
                    driven.acknowledged_commits.saturating_add(sim.commits().saturating_sub(commits));
                models[step.db].run(step, blame)?;
                let last_of_operation =
                    steps.get(i.saturating_add(1)).is_none_or(|next| next.operation != step.operation);
                if last_of_operation && cuts.power_loss_at == Some(step.operation) {
                    let next = sim.stats().device_writes.saturating_add(1);
                    sim.cut_power_at(next);
                    let (activity, in_flight) = (None, None);
                    driven.cut =
                        Some(CutPoint { step: i, db: step.db, inside: false, device_write: next, activity, in_flight });
                    break;
                }
            }
            Err(_) if sim.is_cut() => {
                // The commit point passed before the cut: the recovered state is the one
                // this statement commits.
                let in_flight = if sim.commits() > commits {
                    models[step.db].run(step, blame)?;
                    Some(models[step.db].committed()?)
                } else {
                    None
                };
                let device_write = cuts.power_loss_at_write.unwrap_or_default();
                let activity = sim.cut_activity();
                driven.cut = Some(CutPoint { step: i, db: step.db, inside: true, device_write, activity, in_flight });
                break;
            }
            Err(e) if counters[step.db].load(Ordering::Relaxed) > MAX_VM_STEPS => {
                return Err(blame(step, format!("stopped after {MAX_VM_STEPS} SQLite steps ({e})")));
            }
            Err(e) => return Err(blame(step, e.to_string())),
        }
    }
    Ok(driven)
}

impl Driven {
    /// Notes a cut that fell only once the connections were closed (in the rollback of a
    /// transaction left open at the end), in the last step.
    fn closed(&mut self, sim: &Simulation, cuts: &CutArgs, steps: &[Step<'_>]) {
        if let (None, true, Some(last)) = (&self.cut, sim.cut_interrupted(), steps.len().checked_sub(1)) {
            self.cut = Some(CutPoint {
                step: last,
                db: steps[last].db,
                inside: true,
                device_write: cuts.power_loss_at_write.unwrap_or_default(),
                activity: sim.cut_activity(),
                in_flight: None,
            });
        }
    }
}

/// The error of a `--power-loss-at-write` cut that refused no write or sync of `what`.
fn past_the_end(cuts: &CutArgs, what: &str, sim: &Simulation) -> CliError {
    let writes = sim.stats().device_writes;
    match cuts.power_loss_at_write {
        Some(n) => CliError::input(format!(
            "--power-loss-at-write: device write {n} is past the end of {what} ({writes} device writes in all)"
        )),
        None => CliError::failed(format!("no power cut happened in {what}")),
    }
}

/// Every row of `PRAGMA integrity_check` of each DB file of `names` (`error: …` when it
/// cannot run: a database too damaged to read).
fn integrity(sim: &Simulation, names: &[&str], mode: JournalMode) -> Vec<Vec<String>> {
    let check = |name: &str| {
        let db = sim.open_in_mode(name, mode).map_err(|e| e.to_string())?;
        execute(&db, "PRAGMA integrity_check", MAX_OUTPUT_BYTES).map_err(|e| e.to_string())
    };
    names.iter().map(|name| check(name).unwrap_or_else(|e| vec![format!("error: {e}")])).collect()
}

/// The dump of DB file `name` (an error's text when it cannot be read).
fn dump_of(sim: &Simulation, name: &str, mode: JournalMode) -> Result<String, String> {
    let db = sim.open_in_mode(name, mode).map_err(|e| e.to_string())?;
    dump(&db).map_err(|e| e.to_string())
}

/// The machine after the recovery from a cut.
struct Recovered {
    sim: Simulation,
    recovery_ns: u64,
    /// Each DB file's `PRAGMA integrity_check`, which ran in the recovery.
    integrity: Vec<Vec<String>>,
    /// The second cut, the recovery's device write it refused (from 1).
    recovery_cut: Option<u64>,
    /// Device writes of the recovery that completed.
    recovery_device_writes: u64,
}

/// Recovers the machine whose `devices` survived a power cut: the journal's DRAM state from PCM, then SQLite's
/// rollback of each hot journal as it opens every DB file of `names` and runs `PRAGMA
/// integrity_check`. With `second`, the power is cut again before the recovery's
/// `second`-th device write, and the machine recovers once more.
fn recover(
    config: JournalConfig,
    mut devices: nvmdb_journal::Devices,
    names: &[&str],
    mode: JournalMode,
    seed: u64,
    second: Option<u64>,
) -> Result<Recovered, CliError> {
    let failed = |e: JournalError| CliError::failed(format!("recovery: {e}"));
    if let Some(m) = second {
        devices.cut_power_after_restore(devices.writes().saturating_add(m));
    }
    let (mut recovery_cut, mut seed) = (None, seed);
    loop {
        seed = seed.wrapping_add(1);
        let start = devices.writes();
        let (sim, recovery) = match Simulation::try_recover(config, devices, seed) {
            Ok(recovered) => recovered,
            Err((JournalError::PowerCut(_), Some(cut))) if recovery_cut.is_none() => {
                (recovery_cut, devices) = (second, *cut);
                continue;
            }
            Err((e, _)) => return Err(failed(e)),
        };
        let checked = integrity(&sim, names, mode);
        if sim.cut_interrupted() && recovery_cut.is_none() {
            (recovery_cut, devices) = (second, sim.into_devices());
            continue;
        }
        let recovery_device_writes = sim.stats().device_writes.saturating_sub(start);
        if let Some(m) = second.filter(|_| recovery_cut.is_none()) {
            return Err(CliError::input(format!(
                "--power-loss-during-recovery: device write {m} is past the end of the recovery \
                 ({recovery_device_writes} device writes in all)"
            )));
        }
        let integrity = checked;
        return Ok(Recovered { sim, recovery_ns: recovery.time_ns, integrity, recovery_cut, recovery_device_writes });
    }
}

/// Where a power cut fell and what the recovery did.
#[derive(Debug, Serialize)]
struct PowerLoss {
    /// `sql`: the statement (from 1) the cut fell in, or after (`--power-loss-at`).
    #[serde(skip_serializing_if = "Option::is_none")]
    statement: Option<u64>,
    /// `sql`: that statement's line in the script.
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
    /// `run`: the workload transaction (from 1; 0: the setup) the cut fell in or after.
    #[serde(skip_serializing_if = "Option::is_none")]
    transaction: Option<u64>,
    /// `run`: the DB file of that transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    db_file: Option<String>,
    /// The device write refused, from 1 (a cut between operations: the next the run
    /// would have made).
    device_write: u64,
    /// What SQLite was doing at the refused write or sync (`null` between operations):
    /// `journal-write`, `database-write`, `sync`, `commit` or `rollback`.
    activity: Option<CutActivity>,
    /// The second cut: the recovery's device write refused, from 1.
    recovery_cut: Option<u64>,
    /// Device writes of the recovery that completed.
    recovery_device_writes: u64,
}

impl PowerLoss {
    fn new(cut: &CutPoint, recovered: &Recovered) -> PowerLoss {
        PowerLoss {
            statement: None,
            line: None,
            transaction: None,
            db_file: None,
            device_write: cut.device_write,
            activity: cut.activity.filter(|_| cut.inside),
            recovery_cut: recovered.recovery_cut,
            recovery_device_writes: recovered.recovery_device_writes,
        }
    }
}

/// Which acknowledged state the final (recovered) database holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum RecoveredState {
    /// The state as of the last commit SQLite acknowledged.
    LastCommit,
    /// The state of the statement the cut interrupted after its commit point.
    InFlightCommit,
    /// Neither: acknowledged data was lost, or unacknowledged data kept.
    Mismatch,
}

/// The final (recovered) DB files against the harness's model of acknowledged state.
#[derive(Debug, Serialize)]
struct Acknowledged {
    /// Commits of statements SQLite returned from.
    commits: u64,
    recovered_state: RecoveredState,
    /// DB files compared.
    files_checked: usize,
    /// On a mismatch, the first differing line of the first DB file that differs.
    first_difference: Option<String>,
}

impl Acknowledged {
    /// Compares each DB file's `dumps` with its model's state as of its last commit, or,
    /// for the file the cut fell in after its commit point, with the interrupted commit's.
    /// A DB file that cannot be read differs.
    fn check(
        names: &[&str],
        models: &[Model],
        driven: &Driven,
        dumps: &[Result<String, String>],
    ) -> Result<Acknowledged, CliError> {
        let in_flight = driven.cut.as_ref().and_then(|cut| cut.in_flight.as_ref().map(|state| (cut.db, state)));
        let mut first_difference = None;
        for (i, (model, got)) in models.iter().zip(dumps).enumerate() {
            let expected = match in_flight {
                Some((db, state)) if db == i => state.clone(),
                _ => model.committed()?,
            };
            let difference = match got {
                Ok(got) => first_difference_of(&expected, got),
                Err(e) => Some(format!("cannot be read: {e}")),
            };
            if let Some(at) = difference {
                first_difference = Some(format!("{}: {at}", names[i]));
                break;
            }
        }
        let recovered_state = match (&first_difference, in_flight) {
            (Some(_), _) => RecoveredState::Mismatch,
            (None, Some(_)) => RecoveredState::InFlightCommit,
            (None, None) => RecoveredState::LastCommit,
        };
        let commits = driven.acknowledged_commits;
        Ok(Acknowledged { commits, recovered_state, files_checked: dumps.len(), first_difference })
    }

    /// Exit 1 with one line when acknowledged state was lost.
    fn verdict(&self) -> Result<(), CliError> {
        match &self.first_difference {
            Some(at) => {
                Err(CliError::failed(format!("the recovered database differs from the acknowledged state: {at}")))
            }
            None => Ok(()),
        }
    }
}

/// The first line where `got` differs from `expected`: `line N: expected `A`, got `B``
/// (`the end` past the last line).
fn first_difference_of(expected: &str, got: &str) -> Option<String> {
    let show = |line: Option<&str>| match line {
        None => "the end".to_string(),
        Some(text) if text.chars().count() > 60 => format!("`{}…`", text.chars().take(60).collect::<String>()),
        Some(text) => format!("`{text}`"),
    };
    let (mut want, mut have) = (expected.lines(), got.lines());
    for n in 1u64.. {
        match (want.next(), have.next()) {
            (None, None) => return None,
            (a, b) if a == b => {}
            (a, b) => return Some(format!("line {n}: expected {}, got {}", show(a), show(b))),
        }
    }
    None
}

/// The final database against `--expect`.
#[derive(Debug, Serialize)]
struct Expected {
    matches: bool,
    first_difference: Option<String>,
}

fn run_sql(args: &SqlArgs) -> Result<(), CliError> {
    let report = sql_report(args)?;
    let mut out = Output::new();
    if args.json {
        out.json(&report)?;
    } else {
        for row in &report.rows {
            out.line(row)?;
        }
        out.finish()?;
    }
    report.acknowledged.verdict()?;
    match (&args.expect, report.expect.as_ref().and_then(|e| e.first_difference.as_ref())) {
        (Some(path), Some(at)) => Err(CliError::failed(format!("--expect {path}: {at}"))),
        _ => Ok(()),
    }
}

/// Runs the script of `args` and returns what the JSON reports.
fn sql_report(args: &SqlArgs) -> Result<SqlReport, CliError> {
    sql_report_with(args, &|_| {})
}

/// [`sql_report`], with `lose` applied to the devices that survive a cut (a test makes
/// them lossy, to show the check catching it).
fn sql_report_with(args: &SqlArgs, lose: &dyn Fn(&mut nvmdb_journal::Devices)) -> Result<SqlReport, CliError> {
    let config = parse_config(&args.config)?;
    let dir = std::path::Path::new(&args.db_dir);
    if !dir.is_dir() {
        return Err(CliError::input(format!("--db-dir {}: not a directory", args.db_dir)));
    }
    let image_path = dir.join(DB_NAME);
    let image = image_path.to_string_lossy().into_owned();
    let mut inputs = vec![("--script", args.script.as_str())];
    inputs.extend(args.expect.as_deref().map(|path| ("--expect", path)));
    // The image is written back after the run: it and the dump must be neither an input nor
    // each other, by any name.
    let mut outputs = vec![("--db-dir database", image.as_str())];
    if let Some(dump_path) = &args.dump {
        if crate::input::same_file(std::path::Path::new(dump_path), dir) {
            return Err(CliError::input(format!("--dump {dump_path}: is the --db-dir directory, not a file")));
        }
        outputs.push(("--dump", dump_path));
    }
    crate::input::check_outputs(&outputs, &inputs)?;
    let cut_asked = args.cuts.check()?;
    let script = crate::input::read_small(&args.script)?;
    let expected = args.expect.as_deref().map(crate::input::read_small).transpose()?;
    let statements = split_statements(&script);
    if let Some(n) = args.cuts.power_loss_at.filter(|&n| n > statements.len() as u64) {
        return Err(CliError::input(format!(
            "--power-loss-at: statement {n} is past the end of the script ({} statements)",
            statements.len()
        )));
    }
    let steps: Vec<Step<'_>> =
        statements.iter().zip(1u64..).map(|(s, i)| Step { db: 0, sql: &s.sql, operation: i, line: s.line }).collect();
    let failed = |e: JournalError| CliError::failed(e.to_string());
    let sim = Simulation::new(config, &args.pcm_write_time.params(), args.seed).map_err(failed)?;
    let loaded = image_path.is_file();
    if loaded {
        let bytes = std::fs::read(&image_path).map_err(|e| CliError::unreadable(&image, &e))?;
        if bytes.len() as u64 > nvmdb_journal::devices::MAX_FILE_BYTES {
            return Err(CliError::input(format!("{image}: larger than the simulated device's files")));
        }
        sim.load_file(DB_NAME, bytes);
    }
    let mut models = vec![Model::new(loaded.then_some(image_path.as_path()))?];
    if let Some(n) = args.cuts.power_loss_at_write {
        sim.cut_power_at(n);
    }
    let mode = args.journal_mode.mode();
    nvmdb_journal::vfs::limit_sqlite_heap(sqlite_heap_limit_bytes());
    let blame = |step: &Step<'_>, e: String| CliError::at_line(&args.script, step.line, e);
    let mut driven = {
        let db = sim.open_in_mode(DB_NAME, mode).map_err(failed)?;
        drive(&sim, std::slice::from_ref(&db), &mut models, &steps, &args.cuts, args.seed, &mut |_| {}, &blame)?
    };
    driven.closed(&sim, &args.cuts, &steps);
    if cut_asked && driven.cut.is_none() {
        return Err(past_the_end(&args.cuts, "the script", &sim));
    }
    let committed = sim.commits();
    let (sim, integrity, recovery_ns, power_loss) = match &driven.cut {
        Some(cut) => {
            let step = &steps[cut.step];
            let mut devices = sim.into_devices();
            lose(&mut devices);
            let recovered =
                recover(config, devices, &[DB_NAME], mode, args.seed, args.cuts.power_loss_during_recovery)?;
            let loss =
                PowerLoss { statement: Some(step.operation), line: Some(step.line), ..PowerLoss::new(cut, &recovered) };
            let integrity = recovered.integrity.into_iter().next().unwrap_or_default();
            (recovered.sim, integrity, recovered.recovery_ns, Some(loss))
        }
        None => {
            let integrity = integrity(&sim, &[DB_NAME], mode).into_iter().next().unwrap_or_default();
            (sim, integrity, 0, None)
        }
    };
    // The figures leave out the reads of the dump below.
    let stats = sim.stats();
    let dumped = dump_of(&sim, DB_NAME, mode);
    if let (Some(path), Ok(text)) = (&args.dump, &dumped) {
        crate::output::write_file(path, text)?;
    }
    if let Some(bytes) = sim.file(DB_NAME) {
        crate::output::write_bytes(&image, &bytes)?;
    }
    let acknowledged = Acknowledged::check(&[DB_NAME], &models, &driven, std::slice::from_ref(&dumped))?;
    let expect = expected.map(|text| {
        let first_difference = match &dumped {
            Ok(got) => first_difference_of(&text, got),
            Err(e) => Some(format!("the database cannot be read: {e}")),
        };
        Expected { matches: first_difference.is_none(), first_difference }
    });
    Ok(SqlReport {
        config: config.to_string(),
        journal_mode: mode.name(),
        statements_run: driven.statements_run,
        committed_transactions: committed,
        crashed: driven.cut.is_some(),
        integrity_check: integrity,
        total_bit_updates: stats.total_bit_updates,
        max_bit_updates: stats.max_bit_updates,
        energy_pj: stats.energy_pj,
        time_ns: stats.time_ns,
        pcm_write_time: args.pcm_write_time,
        recovery_ns,
        device_writes: stats.device_writes,
        power_loss,
        acknowledged,
        expect,
        rows: driven.rows,
    })
}

#[cfg(test)]
mod tests {
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
        let script = "-- a comment; still\nCREATE TABLE t(x);\n\nINSERT INTO t VALUES('a;b');/* c; */ INSERT\nINTO t VALUES(\"q\");";
        let s = split_statements(script);
        let sql: Vec<&str> = s.iter().map(|s| s.sql.as_str()).collect();
        assert_eq!(sql, ["CREATE TABLE t(x)", "INSERT INTO t VALUES('a;b')", "INSERT\nINTO t VALUES(\"q\")"]);
        assert_eq!(s.iter().map(|s| s.line).collect::<Vec<_>>(), [2, 4, 4]);
    }
}
