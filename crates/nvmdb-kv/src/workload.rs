//! The seed's three benchmarks (Section 3): insert `N` records (4 B key, 26 B value) in
//! random order; `N` skewed updates, 80% of them to 20% of the pages; `N` random
//! searches. Update and search run on a database first loaded with the `N` records in
//! random order and synced; the load is left out of the measured figures.
//!
//! A [`Run`] advances in steps ([`Run::step`]), so a monitor can drive several engines
//! side by side and sample [`Progress`] (operations done, simulated time) as they go;
//! [`run`] drives one engine to the end with a callback, and [`run_with_power_loss`] cuts
//! the power once in the measured phase, recovers and finishes.

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use nvmdb_device::Activity;

use crate::config::{EngineConfig, EngineKind};
use crate::engine::{Engine, Stats};
use crate::KvError;

/// One of the seed's benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Benchmark {
    /// Insert the records in random order (the load is what is measured).
    Insert,
    /// Skewed updates: 80% to the 20% of the key space (and so of the leaf pages) with
    /// the lowest keys, self-similar within it.
    Update,
    /// Uniform random searches for loaded keys.
    Search,
}

impl Benchmark {
    /// The three, in the seed's order.
    pub const ALL: [Benchmark; 3] = [Benchmark::Insert, Benchmark::Update, Benchmark::Search];

    /// The name the CLI and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Insert => "insert",
            Benchmark::Update => "update",
            Benchmark::Search => "search",
        }
    }

    /// The benchmark of a name.
    pub fn parse(name: &str) -> Option<Benchmark> {
        Benchmark::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    /// The benchmark.
    pub benchmark: Benchmark,
    /// Records (keys `0..records`).
    pub records: u64,
    /// Measured operations (for `insert`, the records themselves).
    pub ops: u64,
    /// Value size, bytes (26 in the seed).
    pub value_bytes: usize,
    /// Sync after every this many measured operations (besides the sync that ends each
    /// phase).
    pub sync_every: Option<u64>,
    /// Seed of the key order, the update and search keys and the values.
    pub seed: u64,
}

impl WorkloadSpec {
    /// The seed's benchmark over `records` records: as many operations as records,
    /// 26-byte values, no syncs but the one at the end of each phase.
    pub fn seed_benchmark(benchmark: Benchmark, records: u64, seed: u64) -> WorkloadSpec {
        WorkloadSpec { benchmark, records, ops: records, value_bytes: 26, sync_every: None, seed }
    }
}

/// Host memory a run of `spec` on a fresh engine of `config` holds at most, bytes (as
/// [`run`] runs it: no power loss): the engine ([`engine_memory_bytes`]: the benchmarks
/// never delete, and change a tree page at most once per loaded record and measured
/// operation; a sync ends each phase and comes every `sync_every` measured operations)
/// and the insertion order (4 B a record).
///
/// `tests/memory_estimate.rs` checks it against the measured peak.
pub fn estimated_memory_bytes(config: &EngineConfig, spec: &WorkloadSpec) -> u64 {
    let load = if spec.benchmark == Benchmark::Insert { 0 } else { spec.records };
    let use_ = EngineUse {
        records: spec.records,
        value_bytes: (spec.value_bytes, spec.value_bytes),
        page_changes: load.saturating_add(spec.ops),
        syncs: spec.sync_every.map_or(0, |k| spec.ops / k.max(1)).saturating_add(2),
    };
    engine_memory_bytes(config, &use_).saturating_add(spec.records.saturating_mul(4))
}

/// What a run asks of a fresh engine, for [`engine_memory_bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EngineUse {
    /// The most records the engine holds at once.
    pub records: u64,
    /// The smallest and the largest value, bytes.
    pub value_bytes: (usize, usize),
    /// Operations that change a tree page (each changes one leaf, besides splits and
    /// merges).
    pub page_changes: u64,
    /// Syncs, at most.
    pub syncs: u64,
}

/// Host memory a fresh engine of `config` holds at most under `use_`, bytes, from the
/// layout:
/// - the devices ([`crate::devices::host_bytes_bound`]) under a tree of at most
///   [`EngineConfig::tree_pages`] pages (of the largest values); a tree page is changed at
///   most once per changing operation and three times per split or merge (the two pages
///   and the parent), fewer than the tree's pages;
/// - the buffer pool's resident pages, at most its frames or the tree's pages, each
///   decoded in memory ([`crate::pool::frame_bytes`], of the smallest values: the most
///   entries);
/// - per page of capacity its place in the page table, the committed table and the pool's
///   index (4 B each), per image slot its place on the free list (4 B), per log block its
///   committed length (8 B).
pub(crate) fn engine_memory_bytes(config: &EngineConfig, use_: &EngineUse) -> u64 {
    let (smallest, largest) = use_.value_bytes;
    let tree_pages = config.tree_pages(use_.records, largest).min(u64::from(config.capacity_pages));
    let page_changes = use_.page_changes.saturating_add(tree_pages.saturating_mul(3)).saturating_add(1);
    let frames = config.buffer_pages().min(tree_pages);
    let frame =
        crate::pool::frame_bytes(config.page_bytes, smallest, config.kind.logs().then_some(config.log_sector_bytes));
    let capacity = u64::from(config.capacity_pages);
    let tables = capacity
        .saturating_mul(4 * 3)
        .saturating_add(capacity.saturating_mul(2).saturating_add(2).saturating_mul(4))
        .saturating_add(u64::from(config.blocks()).saturating_mul(8));
    crate::devices::host_bytes_bound(config, tree_pages, page_changes, use_.syncs)
        .saturating_add(frames.saturating_mul(frame))
        .saturating_add(tables)
}

/// Host memory [`run_with_power_loss`] holds at most, bytes: [`estimated_memory_bytes`]
/// and its models, all at once at a cut: the synced state ([`synced_model_bytes`]); the
/// writes since the last sync (at most a phase's, [`listed_bytes`]); and the recovered
/// engine's scan of every record (the same).
pub fn estimated_power_loss_memory_bytes(config: &EngineConfig, spec: &WorkloadSpec) -> u64 {
    let value = spec.value_bytes as u64;
    estimated_memory_bytes(config, spec)
        .saturating_add(synced_model_bytes(spec.records, value))
        .saturating_add(listed_bytes(spec.records.max(spec.ops), value))
        .saturating_add(listed_bytes(spec.records, value))
}

/// A model of the synced state of `records` records of values of at most `value` bytes,
/// bytes: per record a map entry, its key and value vector in a B-tree node at least five
/// of whose eleven slots are full, 64 B, a share of the inner nodes, 16 B, and the
/// value's bytes.
pub fn synced_model_bytes(records: u64, value: u64) -> u64 {
    records.saturating_mul(64 + 16 + value)
}

/// `n` keys with values of at most `value` bytes in a vector grown by doubling, bytes:
/// each 32 B and its value's bytes, 96 B with the old half while it grows.
pub fn listed_bytes(n: u64, value: u64) -> u64 {
    n.saturating_mul(96 + value)
}

/// The phase a run is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Loading the records (update and search only; not measured).
    Load,
    /// The measured operations.
    Measure,
    /// Finished.
    Done,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Progress {
    /// The phase.
    pub phase: Phase,
    /// Operations done in this phase.
    pub ops_done: u64,
    /// Operations this phase has.
    pub ops_total: u64,
    /// Simulated time since the phase began, ns.
    pub sim_ns: u64,
}

/// What a finished run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    /// The engine.
    pub engine: EngineKind,
    /// The benchmark.
    pub benchmark: Benchmark,
    /// Records loaded or inserted.
    pub records: u64,
    /// The measured phase's counters (its operations, time, device traffic).
    pub stats: Stats,
    /// Measured operations per simulated second.
    pub ops_per_s: f64,
    /// The tree's size at the end of the phase: its pages × the page size, bytes.
    pub db_bytes: u64,
}

/// A benchmark run in progress. A clone is the run at that point: run on an engine in
/// the same state, it makes the same operations.
#[derive(Debug, Clone)]
pub struct Run {
    spec: WorkloadSpec,
    phase: Phase,
    /// Insertion order of the keys (shared by clones).
    order: Arc<[u32]>,
    rng: Xoshiro256PlusPlus,
    done: u64,
    since_sync: u64,
    phase_start: Stats,
    phase_start_ns: u64,
    /// Syncs the run has completed.
    syncs: u64,
    /// When kept: the writes (key, value) since the last completed sync.
    writes: Option<Vec<(u32, Option<Vec<u8>>)>>,
}

/// Exponent of the self-similar 80-20 distribution: `rank = N · u^(ln 0.2 / ln 0.8)` puts
/// 80% of the draws in the lowest 20% of ranks (Gray et al., SIGMOD 1994).
fn skew_exponent() -> f64 {
    0.2f64.ln() / 0.8f64.ln()
}

impl Run {
    /// A run of `spec` on `engine` (which should be empty).
    pub fn new(spec: &WorkloadSpec, engine: &Engine) -> Run {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
        let records = u32::try_from(spec.records).unwrap_or(u32::MAX);
        let mut order: Vec<u32> = (0..records).collect();
        order.shuffle(&mut rng);
        let order = Arc::from(order);
        let phase = if spec.benchmark == Benchmark::Insert { Phase::Measure } else { Phase::Load };
        Run {
            spec: spec.clone(),
            phase,
            order,
            rng,
            done: 0,
            since_sync: 0,
            phase_start: engine.stats(),
            phase_start_ns: engine.sim_ns(),
            syncs: 0,
            writes: None,
        }
    }

    fn sync(&mut self, engine: &mut Engine) -> Result<(), KvError> {
        engine.sync()?;
        self.syncs += 1;
        Ok(())
    }

    fn value(&mut self) -> Vec<u8> {
        (0..self.spec.value_bytes.max(1)).map(|_| self.rng.gen_range(b'a'..=b'z')).collect()
    }

    fn phase_total(&self) -> u64 {
        match (self.phase, self.spec.benchmark) {
            (Phase::Load, _) | (Phase::Measure, Benchmark::Insert) => self.order.len() as u64,
            (Phase::Measure, _) => self.spec.ops,
            (Phase::Done, _) => 0,
        }
    }

    /// Where the run is, on `engine`.
    pub fn progress(&self, engine: &Engine) -> Progress {
        Progress {
            phase: self.phase,
            ops_done: self.done,
            ops_total: self.phase_total(),
            sim_ns: engine.sim_ns() - self.phase_start_ns,
        }
    }

    /// Whether the run has finished.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Runs up to `max_ops` operations (and the sync that ends a phase); returns where
    /// the run is. A stop asked for ([`nvmdb_cancel`]) ends it before its next operation
    /// with [`KvError::Interrupted`].
    pub fn step(&mut self, engine: &mut Engine, max_ops: u64) -> Result<Progress, KvError> {
        let mut left = max_ops;
        while left > 0 && self.phase != Phase::Done {
            nvmdb_cancel::check()?;
            if self.done == self.phase_total() {
                self.sync(engine)?;
                self.next_phase(engine);
                continue;
            }
            self.one(engine)?;
            self.done += 1;
            left -= 1;
            if self.phase == Phase::Measure {
                self.since_sync += 1;
                if self.spec.sync_every.is_some_and(|k| self.since_sync >= k) {
                    self.sync(engine)?;
                    self.since_sync = 0;
                }
            }
        }
        if self.phase != Phase::Done && self.done == self.phase_total() {
            self.sync(engine)?;
            self.next_phase(engine);
        }
        Ok(self.progress(engine))
    }

    fn next_phase(&mut self, engine: &Engine) {
        self.phase = match self.phase {
            Phase::Load => Phase::Measure,
            _ => Phase::Done,
        };
        self.done = 0;
        self.since_sync = 0;
        if self.phase == Phase::Measure {
            self.phase_start = engine.stats();
            self.phase_start_ns = engine.sim_ns();
        }
    }

    fn one(&mut self, engine: &mut Engine) -> Result<(), KvError> {
        let n = self.order.len();
        if n == 0 {
            return Ok(());
        }
        match (self.phase, self.spec.benchmark) {
            (Phase::Load, _) | (Phase::Measure, Benchmark::Insert) => {
                let key = self.order[self.done as usize];
                let value = self.value();
                engine.insert(key, &value)?;
                self.note_write(key, value);
            }
            (Phase::Measure, Benchmark::Update) => {
                let key = self.update_key();
                let value = self.value();
                if engine.update(key, &value)? {
                    self.note_write(key, value);
                }
            }
            (Phase::Measure, Benchmark::Search) => {
                let key = self.rng.gen_range(0..n) as u32;
                engine.get(key)?;
            }
            (Phase::Done, _) => {}
        }
        Ok(())
    }

    fn note_write(&mut self, key: u32, value: Vec<u8>) {
        if let Some(writes) = &mut self.writes {
            writes.push((key, Some(value)));
        }
    }

    /// The next update's key: rank `N · u^(ln 0.2 / ln 0.8)` of the `N` keys.
    fn update_key(&mut self) -> u32 {
        let n = self.order.len();
        let u: f64 = self.rng.gen();
        ((n as f64 * u.powf(skew_exponent())) as usize).min(n - 1) as u32
    }

    /// The measured phase's report (meaningful once the run is done).
    pub fn report(&self, engine: &Engine) -> RunReport {
        report_since(engine, self.spec.benchmark, self.order.len() as u64, &self.phase_start)
    }

    /// Runs the load phase to its end, its sync included.
    fn finish_load(&mut self, engine: &mut Engine) -> Result<(), KvError> {
        while self.phase == Phase::Load {
            let left = self.phase_total() - self.done;
            self.step(engine, left)?;
        }
        Ok(())
    }

    /// Runs the measured phase to the end.
    fn finish(&mut self, engine: &mut Engine) -> Result<(), KvError> {
        while !self.is_done() {
            self.step(engine, u64::MAX)?;
        }
        Ok(())
    }
}

/// The report of `benchmark` over `records` records measured from the counters `start`.
fn report_since(engine: &Engine, benchmark: Benchmark, records: u64, start: &Stats) -> RunReport {
    let stats = engine.stats().since(start);
    let db_bytes = u64::from(engine.pages()) * u64::from(engine.config().page_bytes);
    RunReport { engine: engine.config().kind, benchmark, records, ops_per_s: stats.ops_per_s(), stats, db_bytes }
}

/// The seed's `benchmarks` ([`WorkloadSpec::seed_benchmark`] over `records` records with
/// `seed`) from one load on `engine` (which should be empty), reports in the order of
/// `benchmarks`. The insert benchmark's measured phase is the update and search
/// benchmarks' load: the same keys in the same order, the same values and the one sync.
/// So the load runs once and the insert report is taken at its end; each update or search
/// run then starts from a clone of the loaded engine and run, the last from the originals.
/// Each report is the one [`run`] gives on a fresh engine of the same configuration. Peak
/// memory: two engines when more than one update or search run is asked for, else one.
pub fn run_from_one_load(
    mut engine: Engine,
    records: u64,
    seed: u64,
    benchmarks: &[Benchmark],
) -> Result<Vec<RunReport>, KvError> {
    let before_load = engine.stats();
    let mut loaded = Run::new(&WorkloadSpec::seed_benchmark(Benchmark::Update, records, seed), &engine);
    loaded.finish_load(&mut engine)?;
    let insert = report_since(&engine, Benchmark::Insert, loaded.order.len() as u64, &before_load);
    let measured: Vec<Benchmark> = benchmarks.iter().copied().filter(|&b| b != Benchmark::Insert).collect();
    let mut reports = Vec::with_capacity(measured.len());
    let mut loaded = Some((engine, loaded));
    for (i, &benchmark) in measured.iter().enumerate() {
        let (mut engine, run) = if i + 1 == measured.len() {
            loaded.take().expect("the last run takes the loaded state")
        } else {
            loaded.clone().expect("the loaded state is kept until the last run")
        };
        // At the start of its measured phase a search run is the update run at that point.
        let mut run = Run { spec: WorkloadSpec { benchmark, ..run.spec.clone() }, ..run };
        run.finish(&mut engine)?;
        reports.push(run.report(&engine));
    }
    let mut reports = reports.into_iter();
    Ok(benchmarks
        .iter()
        .map(|&b| if b == Benchmark::Insert { insert.clone() } else { reports.next().expect("a report per run") })
        .collect())
}

/// Runs `spec` on `engine` to the end, calling `on_progress` every `every` operations.
pub fn run(
    engine: &mut Engine,
    spec: &WorkloadSpec,
    every: u64,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<RunReport, KvError> {
    let mut run = Run::new(spec, engine);
    while !run.is_done() {
        let progress = run.step(engine, every.max(1))?;
        on_progress(&progress);
    }
    Ok(run.report(engine))
}

/// Keys on which a recovered state (`recovered`, ascending) differs from the exact state
/// at the last completed sync (`synced`, the caller's own model of what the host was
/// acknowledged): lost, changed or stray. A sync's commit point is its last device write,
/// so a recovery holds that state exactly (docs/kv.md): any write since the sync it
/// holds, a part of a batch included, counts.
pub fn lost_synced(synced: &BTreeMap<u32, Vec<u8>>, recovered: &[(u32, Vec<u8>)]) -> u64 {
    let held: BTreeMap<u32, &[u8]> = recovered.iter().map(|(k, v)| (*k, v.as_slice())).collect();
    let changed = synced.iter().filter(|(k, v)| held.get(k).copied() != Some(v.as_slice())).count();
    let stray = held.keys().filter(|k| !synced.contains_key(k)).count();
    (changed + stray) as u64
}

/// Where a power cut fell, and what the recovery after it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CutReport {
    /// The operation the cut fell in, from 1 (file mode: the operations file's
    /// operation, one past the last for the final sync; benchmark mode: the measured
    /// operations completed before the cut, plus 1).
    pub operation: u64,
    /// The device write refused, from 1, counted as the cut's index is.
    pub device_write: u64,
    /// What the engine was doing: `host`, `flush` (writing pages back), `merge`, `commit`
    /// (a sync's metadata write) or `gc` (the FTL's garbage collection).
    pub activity: Activity,
    /// The second cut: the recovery's device write refused, from 1.
    pub recovery_cut: Option<u64>,
    /// Device writes of the recovery that completed.
    pub recovery_device_writes: u64,
}

/// An engine reopened after a power cut, and what its recovery did.
#[derive(Debug)]
pub struct Recovered {
    /// The engine, recovered.
    pub engine: Engine,
    /// The second cut, when one was asked for and fell in the recovery: the recovery's
    /// device write refused, from 1.
    pub recovery_cut: Option<u64>,
    /// Device writes of the recovery that completed.
    pub recovery_device_writes: u64,
}

/// Drops a cut engine and reopens it from its devices; with `second`, cuts the power
/// again before the recovery's `second`-th device write (from 1) and reopens once more
/// (`recovery_cut` is `None` when the recovery made fewer writes).
pub fn recover(engine: Engine, second: Option<u64>) -> Result<Recovered, KvError> {
    let config = engine.config().clone();
    let mut devices = engine.crash();
    if let Some(m) = second {
        let at = devices.device_writes().saturating_add(m.saturating_sub(1));
        devices.cut_power_before(at);
    }
    let mut recovery_cut = None;
    loop {
        let start = devices.device_writes();
        match Engine::recover(config.clone(), devices) {
            Ok(mut engine) => {
                let recovery_device_writes = engine.device_writes() - start;
                if recovery_cut.is_none() {
                    // A second cut the recovery never reached is not left armed.
                    engine.cut_power_before(u64::MAX);
                }
                return Ok(Recovered { engine, recovery_cut, recovery_device_writes });
            }
            Err(failure) if failure.error == KvError::PowerCut && recovery_cut.is_none() => {
                // The failed recovery handed its devices back with the power restored.
                devices = failure.devices;
                recovery_cut = Some(devices.device_writes() - start + 1);
            }
            Err(failure) => return Err(failure.error),
        }
    }
}

/// What [`run_with_power_loss`] measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerLossReport {
    /// The measured operations' counters, before the cut and after recovery (operations
    /// the cut made the run repeat count twice); recovery itself is left out.
    pub stats: Stats,
    /// Where the cut fell, and what recovery did (`None`: the run made fewer device
    /// writes and was never cut).
    pub cut: Option<CutReport>,
    /// Keys whose value at the last completed sync recovery lost, or keys it holds that
    /// the synced state does not (0 when the engine keeps its contract).
    pub lost_synced_ops: u64,
    /// The same check at the end of the run, after its last sync.
    pub lost_synced_ops_at_end: u64,
    /// Simulated time recovery took, ns (0 without a cut).
    pub recovery_ns: u64,
}

/// Runs `spec` on a fresh `engine` with the power cut before the `power_loss_at`-th device
/// write (from 1) of the measured phase (and, with `second`, again before the recovery's
/// `second`-th device write): the engine is dropped and reopened from its devices, its
/// contents are checked against the state at the last completed sync, and the run goes on
/// from that sync to the end, where they are checked again. Returns the engine at the
/// end.
pub fn run_with_power_loss(
    mut engine: Engine,
    spec: &WorkloadSpec,
    power_loss_at: u64,
    second: Option<u64>,
) -> Result<(Engine, PowerLossReport), KvError> {
    let mut run = Run::new(spec, &engine);
    run.writes = Some(Vec::new());
    let mut synced: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    // The writes a completed sync made durable join the synced state.
    let fold = |run: &mut Run, synced: &mut BTreeMap<u32, Vec<u8>>| {
        for (key, value) in run.writes.as_mut().map(std::mem::take).unwrap_or_default() {
            synced.insert(key, value.expect("benchmarks insert and update"));
        }
    };
    while run.phase == Phase::Load {
        run.step(&mut engine, 1)?;
    }
    fold(&mut run, &mut synced);
    let first = engine.device_writes();
    engine.cut_power_before(first.saturating_add(power_loss_at).saturating_sub(1));
    let mut at_sync = run.clone();
    let mut before = engine.stats();
    let mut measured = Stats::default();
    let mut outcome = PowerLossReport {
        stats: Stats::default(),
        cut: None,
        lost_synced_ops: 0,
        lost_synced_ops_at_end: 0,
        recovery_ns: 0,
    };
    while !run.is_done() {
        match run.step(&mut engine, 1) {
            Ok(_) => {
                if run.syncs > at_sync.syncs {
                    fold(&mut run, &mut synced);
                    at_sync = run.clone();
                }
            }
            Err(KvError::PowerCut) => {
                let operation = if run.phase == Phase::Measure { run.done + 1 } else { 1 };
                // A step syncs only after its operation, so a sync it completed before
                // the cut made all its writes durable, and the run stands just after it.
                if run.syncs > at_sync.syncs {
                    fold(&mut run, &mut synced);
                    at_sync = run.clone();
                }
                measured = measured.plus(&engine.stats().since(&before));
                let cut = engine.last_cut().expect("a refused write is a cut");
                let recovered = recover(engine, second)?;
                engine = recovered.engine;
                outcome.cut = Some(CutReport {
                    operation,
                    device_write: cut.device_write - first + 1,
                    activity: cut.activity,
                    recovery_cut: recovered.recovery_cut,
                    recovery_device_writes: recovered.recovery_device_writes,
                });
                outcome.recovery_ns = engine.recovery_ns();
                let recovered = engine.scan(0, u32::MAX)?;
                outcome.lost_synced_ops = lost_synced(&synced, &recovered);
                before = engine.stats();
                run = at_sync.clone();
            }
            Err(e) => return Err(e),
        }
    }
    outcome.stats = measured.plus(&engine.stats().since(&before));
    if outcome.cut.is_some() {
        // The run ended with a sync, which made every write durable.
        fold(&mut run, &mut synced);
        outcome.lost_synced_ops_at_end = lost_synced(&synced, &engine.scan(0, u32::MAX)?);
    }
    Ok((engine, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EngineConfig, EngineKind};

    #[test]
    fn eighty_percent_of_updates_go_to_the_lowest_fifth_of_the_keys() {
        let n = 10_000u64;
        let engine = Engine::new(EngineConfig::new(EngineKind::FlashOnly, n, 26)).unwrap();
        let mut run = Run::new(&WorkloadSpec::seed_benchmark(Benchmark::Update, n, 3), &engine);
        let draws = 200_000;
        let hot = (0..draws).filter(|_| u64::from(run.update_key()) < n / 5).count();
        let share = hot as f64 / f64::from(draws);
        assert!((0.79..=0.81).contains(&share), "{share}");
    }

    /// A cut anywhere in the measured phase (in an operation, a sync every 50 operations,
    /// the final sync) loses nothing synced, and the run finishes with the state of an
    /// uncut run.
    #[test]
    fn a_power_loss_in_the_measured_phase_loses_nothing_synced_and_the_run_finishes() {
        for kind in EngineKind::ALL {
            for benchmark in [Benchmark::Insert, Benchmark::Update] {
                let mut config = EngineConfig::new(kind, 600, 26);
                config.page_bytes = 1024;
                config.buffer_bytes = 4 * 1024;
                config.size_for(600, 26);
                let spec = WorkloadSpec { sync_every: Some(50), ..WorkloadSpec::seed_benchmark(benchmark, 600, 5) };
                // The uncut run, and the device writes of its measured phase.
                let mut clean = Engine::new(config.clone()).unwrap();
                let mut clean_run = Run::new(&spec, &clean);
                while clean_run.phase == Phase::Load {
                    clean_run.step(&mut clean, 1).unwrap();
                }
                let load_writes = clean.device_writes();
                while !clean_run.is_done() {
                    clean_run.step(&mut clean, 64).unwrap();
                }
                let writes = clean.device_writes() - load_writes;
                let want = clean.scan(0, u32::MAX).unwrap();
                let (mut engine, report) =
                    run_with_power_loss(Engine::new(config.clone()).unwrap(), &spec, 1, None).unwrap();
                assert!(report.cut.is_some(), "{kind:?} {benchmark:?}: the first write was not cut");
                for at in [2, 37, writes / 3, writes - 1, writes] {
                    let (mut cut, report) =
                        run_with_power_loss(Engine::new(config.clone()).unwrap(), &spec, at, None).unwrap();
                    assert_eq!(report.lost_synced_ops, 0, "{kind:?} {benchmark:?} cut at {at}");
                    assert_eq!(report.lost_synced_ops_at_end, 0, "{kind:?} {benchmark:?} cut at {at}");
                    assert_eq!(report.cut.map(|c| c.device_write), Some(at), "{kind:?} {benchmark:?} cut at {at}");
                    // Once something was committed, recovery reads it.
                    assert!(at < writes / 3 || report.recovery_ns > 0, "{kind:?} {benchmark:?} cut at {at}");
                    cut.check().unwrap();
                    assert_eq!(cut.scan(0, u32::MAX).unwrap(), want, "{kind:?} {benchmark:?} cut at {at}");
                }
                assert_eq!(engine.scan(0, u32::MAX).unwrap(), want);
                let (_, report) = run_with_power_loss(Engine::new(config).unwrap(), &spec, u64::MAX, None).unwrap();
                assert!(report.cut.is_none() && report.recovery_ns == 0);
            }
        }
    }

    /// The three benchmarks from one load, the search run on a clone of the loaded engine,
    /// report what three runs on fresh engines report, for every engine (small pages and
    /// pool, so that the runs merge, evict and collect garbage).
    #[test]
    fn the_benchmarks_from_one_load_report_what_separate_runs_report() {
        let records = 1_500;
        for kind in EngineKind::ALL {
            let mut config = EngineConfig::new(kind, records, 26);
            config.page_bytes = 1024;
            config.buffer_bytes = 4 * 1024;
            config.size_for(records, 26);
            let shared = run_from_one_load(Engine::new(config.clone()).unwrap(), records, 9, &Benchmark::ALL).unwrap();
            let separate: Vec<RunReport> = Benchmark::ALL
                .iter()
                .map(|&benchmark| {
                    let spec = WorkloadSpec::seed_benchmark(benchmark, records, 9);
                    run(&mut Engine::new(config.clone()).unwrap(), &spec, 1 << 16, &mut |_| {}).unwrap()
                })
                .collect();
            assert_eq!(shared, separate, "{kind:?}");
            assert!(separate.iter().all(|r| r.stats.ops == records && r.stats.sim_ns > 0), "{kind:?}");
            // One update or search run takes the loaded engine itself; reports in the order asked.
            let two = [Benchmark::Search, Benchmark::Insert];
            let shared = run_from_one_load(Engine::new(config.clone()).unwrap(), records, 9, &two).unwrap();
            assert_eq!(shared, [separate[2].clone(), separate[0].clone()], "{kind:?}");
        }
    }

    #[test]
    fn lost_synced_counts_every_key_that_differs_from_the_synced_state() {
        let synced: BTreeMap<u32, Vec<u8>> = [(1, b"a".to_vec()), (2, b"b".to_vec())].into();
        let state = |entries: &[(u32, &[u8])]| entries.iter().map(|(k, v)| (*k, v.to_vec())).collect::<Vec<_>>();
        assert_eq!(lost_synced(&synced, &state(&[(1, b"a"), (2, b"b")])), 0);
        assert_eq!(lost_synced(&synced, &state(&[(2, b"b")])), 1);
        assert_eq!(lost_synced(&synced, &state(&[(1, b"x"), (2, b"b"), (4, b"y")])), 2);
        assert_eq!(lost_synced(&synced, &state(&[(2, b"c"), (5, b"e")])), 3);
    }

    /// The check catches a recovery that applies part of the writes after the last sync
    /// (which a check accepting, per key, any later value would pass), and one that drops
    /// the last synced write, on a real engine's recovered state.
    #[test]
    fn lost_synced_catches_a_partial_or_lossy_recovery_of_an_engine() {
        for kind in EngineKind::ALL {
            let mut config = EngineConfig::new(kind, 100, 26);
            config.page_bytes = 1024;
            config.buffer_bytes = 4 * 1024;
            config.size_for(100, 26);
            let value = |key: u32, tag: u8| vec![tag ^ key as u8; 26];
            let mut engine = Engine::new(config.clone()).unwrap();
            let mut synced = BTreeMap::new();
            for key in 0..40 {
                engine.insert(key, &value(key, 1)).unwrap();
                synced.insert(key, value(key, 1));
            }
            engine.sync().unwrap();
            // A batch after the sync, cut before it is synced.
            let pending: Vec<(u32, Option<Vec<u8>>)> = (0..10).map(|key| (key, Some(value(key, 2)))).collect();
            for (key, v) in &pending {
                engine.update(*key, v.as_deref().unwrap()).unwrap();
            }
            let next = engine.device_writes();
            engine.cut_power_before(next);
            assert!(matches!(engine.sync(), Err(KvError::PowerCut)), "{kind:?}");
            let mut recovered = Engine::open(config.clone(), engine.crash()).unwrap();
            let state = recovered.scan(0, u32::MAX).unwrap();
            assert_eq!(lost_synced(&synced, &state), 0, "{kind:?}");
            // A recovery that applied half of the batch.
            for (key, v) in &pending[..5] {
                recovered.update(*key, v.as_deref().unwrap()).unwrap();
            }
            let partial = recovered.scan(0, u32::MAX).unwrap();
            assert_eq!(lost_synced(&synced, &partial), 5, "{kind:?}");
            // A recovery that dropped the last synced write.
            let mut lossy = state.clone();
            lossy.retain(|(key, _)| *key != 39);
            assert_eq!(lost_synced(&synced, &lossy), 1, "{kind:?}");
        }
    }
}
