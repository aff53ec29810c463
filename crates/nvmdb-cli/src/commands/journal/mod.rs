//! `nvmdb journal`: real SQLite with its rollback journal in simulated PCM.

use clap::{Args, Subcommand, ValueEnum};
use nvmdb_journal::{
    generate, run_workload, App, DeviceParams, JournalConfig, JournalError, JournalMode, Mark, Simulation, WorkloadRun,
};
use serde::Serialize;

use crate::error::CliError;
use crate::output::Output;

mod check;
mod sql_text;
#[cfg(test)]
mod tests;

use check::*;
use sql_text::*;
pub use sql_text::{split_statements, Statement};

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

/// The database file's name on the simulated device and in `--db-dir`.
const DB_NAME: &str = "main.db";

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
    let (heap_bytes, heap_bound) = sqlite_heap_limit();
    nvmdb_journal::vfs::limit_sqlite_heap(heap_bytes);
    let blame = |step: &Step<'_>, e: String| {
        let e = if e.contains("out of memory") {
            format!("{e} (SQLite's heap is capped at {} MiB: {heap_bound})", heap_bytes >> 20)
        } else {
            e
        };
        CliError::at_line(&args.script, step.line, e)
    };
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
