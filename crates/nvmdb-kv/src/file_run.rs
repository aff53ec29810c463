//! `nvmdb kv run`'s file mode: a load file loaded and synced, then the parsed operations
//! run (with a power cut where asked, recovered from the devices and finished from the
//! last completed sync), and the memory all that holds at most
//! ([`estimated_memory_bytes`]), computed from first readings of the files that keep
//! nothing ([`file_format::summarize_load`], [`summarize_ops`]).

use std::collections::BTreeMap;
use std::io::{BufRead, Write};

use crate::engine::{Engine, Stats};
use crate::file_format::{self, FileOp, LoadSummary, ParseError};
use crate::workload::{self, CutReport, EngineUse};
use crate::{EngineConfig, KvError};

/// How the operations run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileRunOptions {
    /// Sync after every this many operations (besides `C` lines and the final sync).
    pub sync_every: Option<u64>,
    /// Cut the power before this device write (from 1) of the operations.
    pub power_loss_at: Option<u64>,
    /// Cut it again before this device write (from 1) of the recovery.
    pub power_loss_during_recovery: Option<u64>,
    /// Keep the answers of `G` and `S` (a results file is written).
    pub keep_results: bool,
}

/// What an operations file asks of a run, read without keeping it ([`summarize_ops`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpsSummary {
    /// Operations.
    pub ops: u64,
    /// `I` lines.
    pub inserts: u64,
    /// `I`, `U` and `D` lines.
    pub changes: u64,
    /// Syncs the run makes at most: `C` lines and those of `sync_every`.
    pub syncs: u64,
    /// The values' bytes in all.
    pub value_bytes: u64,
    /// The smallest and the largest value, bytes (`None`: no value).
    pub value_range: Option<(usize, usize)>,
    /// The most `G` lines between two syncs.
    pub gets_between_syncs: u64,
    /// The most keys the `S` lines between two syncs can answer, at most the range of
    /// each and the records loaded and inserted before it.
    pub scanned_between_syncs: u64,
    /// The most keys one `S` line can answer.
    pub scanned_at_once: u64,
    /// The most `I`, `U` and `D` lines between two syncs.
    pub changes_between_syncs: u64,
}

/// Reads an operations file, checking every line, and counts what a run of it after a
/// load of `loaded` records asks (syncs as [`run_ops`] makes them under `options`);
/// memory: one line.
pub fn summarize_ops(input: impl BufRead, loaded: u64, options: &FileRunOptions) -> Result<OpsSummary, ParseError> {
    let mut s = OpsSummary::default();
    // Since the last sync: operations, gets, scanned keys, changes.
    let (mut since, mut gets, mut scanned, mut changes) = (0u64, 0u64, 0u64, 0u64);
    file_format::for_each_line(input, |_, line| {
        let Some(op) = file_format::parse_op_line(line)? else { return Ok(()) };
        s.ops = s.ops.saturating_add(1);
        if let FileOp::Insert(_, value) | FileOp::Update(_, value) = &op {
            s.value_bytes = s.value_bytes.saturating_add(value.len() as u64);
            s.value_range = file_format::widen(s.value_range, value.len());
        }
        match &op {
            FileOp::Insert(..) | FileOp::Update(..) | FileOp::Delete(_) => {
                s.inserts = s.inserts.saturating_add(u64::from(matches!(op, FileOp::Insert(..))));
                s.changes = s.changes.saturating_add(1);
                changes = changes.saturating_add(1);
            }
            FileOp::Get(_) => gets = gets.saturating_add(1),
            FileOp::Scan(lo, hi) => {
                let keys = (u64::from(*hi) - u64::from(*lo) + 1).min(loaded.saturating_add(s.inserts));
                scanned = scanned.saturating_add(keys);
                s.scanned_at_once = s.scanned_at_once.max(keys);
            }
            FileOp::Sync => {}
        }
        s.gets_between_syncs = s.gets_between_syncs.max(gets);
        s.scanned_between_syncs = s.scanned_between_syncs.max(scanned);
        s.changes_between_syncs = s.changes_between_syncs.max(changes);
        since = since.saturating_add(1);
        if op == FileOp::Sync || options.sync_every.is_some_and(|k| since >= k) {
            s.syncs = s.syncs.saturating_add(1);
            (since, gets, scanned, changes) = (0, 0, 0, 0);
        }
        Ok(())
    })?;
    Ok(s)
}

/// The longest answer line of an `S` key, bytes: a u32 in decimal and a separator.
const SCANNED_KEY_TEXT_BYTES: u64 = 11;

/// Host memory a file-mode run holds at most, bytes: the load of `load` and the
/// operations of `ops` (summaries of the files) on a fresh engine of `config`, under
/// `options`; the largest of
/// - [`file_format::check_load`]'s keys (16 B a record), held alone;
/// - the parsed operations ([`file_format::parse_ops`]: a vector of exactly as many
///   [`FileOp`]s, and their values' bytes) with all that the run holds:
///   - the engine ([`workload::engine_memory_bytes`]) holding at most the records loaded
///     and inserted, of the files' smallest to largest values, a page change per record
///     loaded and per `I`, `U` or `D`, a sync per `C` line or `sync_every` operations, the
///     load's and the final one;
///   - one scan's answer: its entries (as [`workload::listed_bytes`]), each key's text
///     (a string, 24 B, and its up to 10 digits) and the joined line;
///   - with `keep_results`, the answers since the last sync (a `G`: its value and a line
///     end; an `S`: 11 B a key), in a vector grown by doubling (3× with the old buffer
///     while it grows);
///   - with a power cut, the model: the synced state of every record
///     ([`workload::synced_model_bytes`]), the changes since the last sync, the recovered
///     engine's scan of every record ([`workload::listed_bytes`]) and its index by key in
///     the check (a map entry and a share of the inner nodes, 64 B a record); the values
///     of the state and the scan at most the records' largest, and at most all the
///     files' values.
pub fn estimated_memory_bytes(
    config: &EngineConfig,
    load: &LoadSummary,
    ops: &OpsSummary,
    options: &FileRunOptions,
) -> u64 {
    let records = load.records.saturating_add(ops.inserts);
    let (smallest, largest) = match (load.value_range, ops.value_range) {
        (Some(a), Some(b)) => (a.0.min(b.0), a.1.max(b.1)),
        (Some(r), None) | (None, Some(r)) => r,
        (None, None) => (1, 1),
    };
    let value = largest as u64;
    let engine = workload::engine_memory_bytes(
        config,
        &EngineUse {
            records,
            value_bytes: (smallest, largest),
            page_changes: load.records.saturating_add(ops.changes),
            syncs: ops.syncs.saturating_add(2),
        },
    );
    let held_ops = ops.ops.saturating_mul(std::mem::size_of::<FileOp>() as u64).saturating_add(ops.value_bytes);
    let scan = workload::listed_bytes(ops.scanned_at_once, value)
        .saturating_add(ops.scanned_at_once.saturating_mul(24 + 10 + SCANNED_KEY_TEXT_BYTES));
    let results = if options.keep_results {
        let answers = ops
            .gets_between_syncs
            .saturating_mul(value.max(1) + 1)
            .saturating_add(ops.scanned_between_syncs.saturating_mul(SCANNED_KEY_TEXT_BYTES));
        answers.saturating_mul(3)
    } else {
        0
    };
    let model = if options.power_loss_at.is_some() {
        // Each record's value is one of the files' values.
        let values = records.saturating_mul(value).min(load.value_bytes.saturating_add(ops.value_bytes));
        workload::synced_model_bytes(records, 0)
            .saturating_add(workload::listed_bytes(ops.changes_between_syncs, value))
            .saturating_add(workload::listed_bytes(records, 0))
            .saturating_add(values.saturating_mul(2))
            .saturating_add(records.saturating_mul(64))
    } else {
        0
    };
    let run = held_ops.saturating_add(engine).saturating_add(scan).saturating_add(results).saturating_add(model);
    load.records.saturating_mul(16).max(run)
}

/// The state at the last completed sync, and the changes since (kept only to count what a
/// power loss lost).
#[derive(Debug, Default)]
pub struct Model {
    synced: BTreeMap<u32, Vec<u8>>,
    unsynced: Vec<(u32, Option<Vec<u8>>)>,
}

impl Model {
    fn sync(&mut self) {
        for (key, value) in self.unsynced.drain(..) {
            match value {
                Some(v) => self.synced.insert(key, v),
                None => self.synced.remove(&key),
            };
        }
    }
}

/// A file run's failure.
#[derive(Debug)]
pub enum FileRunError<E> {
    /// A line of the load file.
    Load(ParseError),
    /// The engine's.
    Engine(KvError),
    /// Writing the answers.
    Results(E),
}

impl<E> From<KvError> for FileRunError<E> {
    fn from(e: KvError) -> Self {
        FileRunError::Engine(e)
    }
}

/// Loads the records of a load file (checked by [`file_format::check_load`]) into
/// `engine` and syncs; with a power cut to come, returns the model of the synced state.
pub fn load<E>(engine: &mut Engine, input: impl BufRead, power_cut: bool) -> Result<Option<Model>, FileRunError<E>> {
    let mut loaded = Ok(());
    let mut model = power_cut.then(Model::default);
    file_format::for_each_line(input, |_, line| {
        if let (Ok(()), Some((key, value))) = (&loaded, file_format::parse_load_line(line)?) {
            loaded = engine.insert(key, &value).map(|_| ());
            if let Some(m) = &mut model {
                m.synced.insert(key, value);
            }
        }
        Ok(())
    })
    .map_err(FileRunError::Load)?;
    loaded?;
    engine.sync()?;
    Ok(model)
}

/// What [`run_ops`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRunOutcome {
    /// The operations' counters, before the cut and after recovery (recovery left out).
    pub stats: Stats,
    /// Where the cut fell (`None`: none was asked for, or the run made fewer device
    /// writes).
    pub cut: Option<CutReport>,
    /// Keys on which the recovered state differs from the state at the last completed
    /// sync.
    pub lost_synced_ops: u64,
    /// The same check at the end of the run, after its last sync.
    pub lost_synced_ops_at_end: u64,
    /// Simulated time recovery took, ns.
    pub recovery_ns: u64,
}

/// The answers since the last completed sync, held back so that those a power loss makes
/// the run repeat are given once.
struct Answers {
    keep: bool,
    pending: Vec<u8>,
}

impl Answers {
    fn answer(&mut self, line: std::fmt::Arguments) {
        if self.keep {
            // Writing to a Vec cannot fail.
            let _ = writeln!(self.pending, "{line}");
        }
    }
}

fn apply(engine: &mut Engine, op: &FileOp, answers: &mut Answers, model: Option<&mut Model>) -> Result<(), KvError> {
    match op {
        FileOp::Insert(key, value) => {
            engine.insert(*key, value)?;
            if let Some(m) = model {
                m.unsynced.push((*key, Some(value.clone())));
            }
        }
        FileOp::Update(key, value) => {
            if engine.update(*key, value)? {
                if let Some(m) = model {
                    m.unsynced.push((*key, Some(value.clone())));
                }
            }
        }
        FileOp::Delete(key) => {
            engine.delete(*key)?;
            if let Some(m) = model {
                m.unsynced.push((*key, None));
            }
        }
        FileOp::Get(key) => match engine.get(*key)? {
            Some(value) => answers.answer(format_args!("{}", String::from_utf8_lossy(&value))),
            None => answers.answer(format_args!("-")),
        },
        FileOp::Scan(lo, hi) => {
            let entries = engine.scan(*lo, *hi)?;
            if entries.is_empty() {
                answers.answer(format_args!("-"));
            } else {
                let keys: Vec<String> = entries.iter().map(|(k, _)| k.to_string()).collect();
                answers.answer(format_args!("{}", keys.join(" ")));
            }
        }
        FileOp::Sync => {
            engine.sync()?;
            if let Some(m) = model {
                m.sync();
            }
        }
    }
    Ok(())
}

/// Runs `ops` on `engine` (loaded by [`load`], whose model it takes) and a final sync,
/// calling `synced` with the answers of `G` and `S` (with `keep_results`) at each
/// completed sync. With `power_loss_at`, the power is cut before that device write of
/// the operations (and again in the recovery with `power_loss_during_recovery`): the
/// engine is reopened from its devices, checked against the state at the last completed
/// sync, and the run goes on from there.
pub fn run_ops<E>(
    mut engine: Engine,
    ops: &[FileOp],
    options: &FileRunOptions,
    mut model: Option<Model>,
    synced: &mut dyn FnMut(&[u8]) -> Result<(), E>,
) -> Result<FileRunOutcome, FileRunError<E>> {
    let mut answers = Answers { keep: options.keep_results, pending: Vec::new() };
    let mut before = engine.stats();
    let mut measured = Stats::default();
    let first = engine.device_writes();
    if let Some(n) = options.power_loss_at {
        engine.cut_power_before(first.saturating_add(n).saturating_sub(1));
    }
    let mut outcome = FileRunOutcome {
        stats: Stats::default(),
        cut: None,
        lost_synced_ops: 0,
        lost_synced_ops_at_end: 0,
        recovery_ns: 0,
    };
    let mut last_sync = 0;
    let mut next = 0;
    let mut since_sync = 0u64;
    // The operations, then the final sync (which a cut may also interrupt).
    let final_sync = FileOp::Sync;
    while next <= ops.len() {
        nvmdb_cancel::check().map_err(KvError::from)?;
        let op = ops.get(next).unwrap_or(&final_sync);
        let step = apply(&mut engine, op, &mut answers, model.as_mut()).and_then(|()| {
            since_sync = since_sync.saturating_add(1);
            if *op != FileOp::Sync && options.sync_every.is_some_and(|k| since_sync >= k) {
                engine.sync()?;
                if let Some(m) = model.as_mut() {
                    m.sync();
                }
                return Ok(true);
            }
            Ok(*op == FileOp::Sync)
        });
        match step {
            Ok(was_sync) => {
                next = next.saturating_add(1);
                if was_sync {
                    last_sync = next;
                    since_sync = 0;
                    synced(&answers.pending).map_err(FileRunError::Results)?;
                    answers.pending.clear();
                }
            }
            Err(KvError::PowerCut) => {
                measured = measured.plus(&engine.stats().since(&before));
                let at = engine.last_cut().expect("a refused write is a cut");
                let recovered = workload::recover(engine, options.power_loss_during_recovery)?;
                engine = recovered.engine;
                outcome.cut = Some(CutReport {
                    operation: (next as u64).saturating_add(1),
                    device_write: at.device_write.saturating_sub(first).saturating_add(1),
                    activity: at.activity,
                    recovery_cut: recovered.recovery_cut,
                    recovery_device_writes: recovered.recovery_device_writes,
                });
                outcome.recovery_ns = engine.recovery_ns();
                let m = model.as_mut().expect("a power cut is only set with a model");
                let recovered = engine.scan(0, u32::MAX)?;
                outcome.lost_synced_ops = workload::lost_synced(&m.synced, &recovered);
                m.unsynced.clear();
                before = engine.stats();
                answers.pending.clear();
                next = last_sync;
                since_sync = 0;
            }
            Err(e) => return Err(e.into()),
        }
    }
    outcome.stats = measured.plus(&engine.stats().since(&before));
    if let (Some(_), Some(m)) = (outcome.cut, &model) {
        // The run ended with a sync: the engine holds the model's synced state exactly.
        outcome.lost_synced_ops_at_end = workload::lost_synced(&m.synced, &engine.scan(0, u32::MAX)?);
    }
    Ok(outcome)
}
