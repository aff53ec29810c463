//! The check of acknowledged state after a cut: a model of each DB file on plain SQLite,
//! run beside the simulation, the cut points, recovery (cut again where asked) and the
//! comparison of the recovered files with the model.

use nvmdb_journal::rusqlite::types::ValueRef;
use nvmdb_journal::rusqlite::{Connection, OpenFlags};
use nvmdb_journal::{CutActivity, Db, JournalConfig, JournalError, JournalMode, Simulation};
use serde::Serialize;

use super::sql_text::{dump, execute, limit_steps, MAX_OUTPUT_BYTES, MAX_VM_STEPS};
use super::CutArgs;
use crate::error::CliError;

/// One statement the harness runs: on which DB file, in which operation (a statement of
/// `sql`, a transaction of `run`: 0 for its setup), from which line of its text.
pub(super) struct Step<'a> {
    pub(super) db: usize,
    pub(super) sql: &'a str,
    pub(super) operation: u64,
    pub(super) line: u64,
}

/// The harness's own model of what SQLite acknowledged on one DB file: plain SQLite in
/// memory that runs every statement the simulated SQLite returned from, so with the same
/// transactions; its state as of its last commit is the acknowledged state. Nothing in it
/// is read from the simulated devices.
pub(super) struct Model {
    pub(super) conn: Connection,
}

impl Model {
    /// A model starting from the database image at `image` (read only), or empty.
    pub(super) fn new(image: Option<&std::path::Path>) -> Result<Model, CliError> {
        let mut conn = Connection::open_in_memory().map_err(model_failed)?;
        // The model touches no file: ATTACH (and VACUUM INTO, which attaches) is refused.
        conn.set_limit(nvmdb_journal::rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0);
        if let Some(path) = image {
            // A file that is not a database is bad input.
            let unreadable = |e: nvmdb_journal::rusqlite::Error| CliError::input(format!("{}: {e}", path.display()));
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let source = Connection::open_with_flags(path, flags).map_err(unreadable)?;
            // Reading the schema names what is wrong with a file that is not a database
            // (a backup's step would say only "not an error").
            source.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())).map_err(unreadable)?;
            let backup = nvmdb_journal::rusqlite::backup::Backup::new(&source, &mut conn).map_err(unreadable)?;
            backup.run_to_completion(1024, std::time::Duration::ZERO, None).map_err(unreadable)?;
        }
        Ok(Model { conn })
    }

    /// Runs `step` on the model.
    pub(super) fn run(&self, step: &Step<'_>, blame: &dyn Fn(&Step<'_>, String) -> CliError) -> Result<(), CliError> {
        execute(&self.conn, step.sql, usize::MAX)
            .map_err(|e| blame(step, format!("the check's model cannot run it: {e}")))?;
        Ok(())
    }

    /// The dump of the model as of its last commit: a transaction left open is rolled
    /// back.
    pub(super) fn committed(&self) -> Result<String, CliError> {
        if !self.conn.is_autocommit() {
            self.conn.execute_batch("ROLLBACK").map_err(model_failed)?;
        }
        dump(&self.conn).map_err(model_failed)
    }
}

pub(super) fn model_failed(e: nvmdb_journal::rusqlite::Error) -> CliError {
    CliError::failed(format!("the check's model: {e}"))
}

/// Gives `conn` its own `random()` and `randomblob(N)`, drawing from one stream seeded by
/// `seed`: SQLite's own draw from its process-wide generator, which the journal's nonces
/// and every connection share, so the simulated run and the check's model would draw
/// different values.
pub(super) fn seed_random(conn: &Connection, seed: u64) -> Result<(), nvmdb_journal::rusqlite::Error> {
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
pub(super) struct CutPoint {
    /// The step the cut fell in (`inside`) or after, and its DB file.
    pub(super) step: usize,
    pub(super) db: usize,
    pub(super) inside: bool,
    /// The device write refused (between operations: the next the run would make).
    pub(super) device_write: u64,
    pub(super) activity: Option<CutActivity>,
    /// The DB file's state with the interrupted statement done, when its commit point
    /// passed before the cut.
    pub(super) in_flight: Option<String>,
}

/// What a run of steps did.
pub(super) struct Driven {
    pub(super) rows: Vec<String>,
    /// Bytes of `rows`, each with its line end.
    pub(super) output_bytes: usize,
    pub(super) statements_run: usize,
    /// Commits of statements SQLite returned from.
    pub(super) acknowledged_commits: u64,
    pub(super) cut: Option<CutPoint>,
}

/// Runs `steps` on `dbs` and, for each statement SQLite returns from, on `models`, until
/// the end or a cut (`cuts`: after an operation, or at the device write the simulation
/// was set to refuse). `before` is called before each step. `random()` and
/// `randomblob()` draw from a stream seeded by `seed` (and the DB file's index), the
/// same on a DB file and its model.
#[allow(clippy::too_many_arguments, reason = "the run's parts, each used once")]
pub(super) fn drive(
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
    pub(super) fn closed(&mut self, sim: &Simulation, cuts: &CutArgs, steps: &[Step<'_>]) {
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
pub(super) fn past_the_end(cuts: &CutArgs, what: &str, sim: &Simulation) -> CliError {
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
pub(super) fn integrity(sim: &Simulation, names: &[&str], mode: JournalMode) -> Vec<Vec<String>> {
    let check = |name: &str| {
        let db = sim.open_in_mode(name, mode).map_err(|e| e.to_string())?;
        execute(&db, "PRAGMA integrity_check", MAX_OUTPUT_BYTES).map_err(|e| e.to_string())
    };
    names.iter().map(|name| check(name).unwrap_or_else(|e| vec![format!("error: {e}")])).collect()
}

/// The dump of DB file `name` (an error's text when it cannot be read).
pub(super) fn dump_of(sim: &Simulation, name: &str, mode: JournalMode) -> Result<String, String> {
    let db = sim.open_in_mode(name, mode).map_err(|e| e.to_string())?;
    dump(&db).map_err(|e| e.to_string())
}

/// The machine after the recovery from a cut.
pub(super) struct Recovered {
    pub(super) sim: Simulation,
    pub(super) recovery_ns: u64,
    /// Each DB file's `PRAGMA integrity_check`, which ran in the recovery.
    pub(super) integrity: Vec<Vec<String>>,
    /// The second cut, the recovery's device write it refused (from 1).
    pub(super) recovery_cut: Option<u64>,
    /// Device writes of the recovery that completed.
    pub(super) recovery_device_writes: u64,
}

/// Recovers the machine whose `devices` survived a power cut: the journal's DRAM state from PCM, then SQLite's
/// rollback of each hot journal as it opens every DB file of `names` and runs `PRAGMA
/// integrity_check`. With `second`, the power is cut again before the recovery's
/// `second`-th device write, and the machine recovers once more.
pub(super) fn recover(
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
pub(super) struct PowerLoss {
    /// `sql`: the statement (from 1) the cut fell in, or after (`--power-loss-at`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) statement: Option<u64>,
    /// `sql`: that statement's line in the script.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) line: Option<u64>,
    /// `run`: the workload transaction (from 1; 0: the setup) the cut fell in or after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) transaction: Option<u64>,
    /// `run`: the DB file of that transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) db_file: Option<String>,
    /// The device write refused, from 1 (a cut between operations: the next the run
    /// would have made).
    pub(super) device_write: u64,
    /// What SQLite was doing at the refused write or sync (`null` between operations):
    /// `journal-write`, `database-write`, `sync`, `commit` or `rollback`.
    pub(super) activity: Option<CutActivity>,
    /// The second cut: the recovery's device write refused, from 1.
    pub(super) recovery_cut: Option<u64>,
    /// Device writes of the recovery that completed.
    pub(super) recovery_device_writes: u64,
}

impl PowerLoss {
    pub(super) fn new(cut: &CutPoint, recovered: &Recovered) -> PowerLoss {
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
pub(super) enum RecoveredState {
    /// The state as of the last commit SQLite acknowledged.
    LastCommit,
    /// The state of the statement the cut interrupted after its commit point.
    InFlightCommit,
    /// Neither: acknowledged data was lost, or unacknowledged data kept.
    Mismatch,
}

/// The final (recovered) DB files against the harness's model of acknowledged state.
#[derive(Debug, Serialize)]
pub(super) struct Acknowledged {
    /// Commits of statements SQLite returned from.
    pub(super) commits: u64,
    pub(super) recovered_state: RecoveredState,
    /// DB files compared.
    pub(super) files_checked: usize,
    /// On a mismatch, the first differing line of the first DB file that differs.
    pub(super) first_difference: Option<String>,
}

impl Acknowledged {
    /// Compares each DB file's `dumps` with its model's state as of its last commit, or,
    /// for the file the cut fell in after its commit point, with the interrupted commit's.
    /// A DB file that cannot be read differs.
    pub(super) fn check(
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
    pub(super) fn verdict(&self) -> Result<(), CliError> {
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
pub(super) fn first_difference_of(expected: &str, got: &str) -> Option<String> {
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
pub(super) struct Expected {
    pub(super) matches: bool,
    pub(super) first_difference: Option<String>,
}
