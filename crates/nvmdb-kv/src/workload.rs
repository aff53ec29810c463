//! The seed's three benchmarks (Section 3): insert `N` records (4 B key, 26 B value) in
//! random order; `N` skewed updates, 80% of them to 20% of the pages; `N` random
//! searches. Update and search run on a database first loaded with the `N` records in
//! random order and synced; the load is left out of the measured figures.
//!
//! A [`Run`] advances in steps ([`Run::step`]), so a monitor can drive several engines
//! side by side and sample [`Progress`] (operations done, simulated time) as they go;
//! [`run`] drives one engine to the end with a callback.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::config::EngineKind;
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
}

/// A benchmark run in progress.
#[derive(Debug)]
pub struct Run {
    spec: WorkloadSpec,
    phase: Phase,
    /// Insertion order of the keys.
    order: Vec<u32>,
    rng: Xoshiro256PlusPlus,
    done: u64,
    since_sync: u64,
    phase_start: Stats,
    phase_start_ns: u64,
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
        }
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
    /// the run is.
    pub fn step(&mut self, engine: &mut Engine, max_ops: u64) -> Result<Progress, KvError> {
        let mut left = max_ops;
        while left > 0 && self.phase != Phase::Done {
            if self.done == self.phase_total() {
                engine.sync()?;
                self.next_phase(engine);
                continue;
            }
            self.one(engine)?;
            self.done += 1;
            left -= 1;
            if self.phase == Phase::Measure {
                self.since_sync += 1;
                if self.spec.sync_every.is_some_and(|k| self.since_sync >= k) {
                    engine.sync()?;
                    self.since_sync = 0;
                }
            }
        }
        if self.phase != Phase::Done && self.done == self.phase_total() {
            engine.sync()?;
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
            }
            (Phase::Measure, Benchmark::Update) => {
                let key = self.update_key();
                let value = self.value();
                engine.update(key, &value)?;
            }
            (Phase::Measure, Benchmark::Search) => {
                let key = self.rng.gen_range(0..n) as u32;
                engine.get(key)?;
            }
            (Phase::Done, _) => {}
        }
        Ok(())
    }

    /// The next update's key: rank `N · u^(ln 0.2 / ln 0.8)` of the `N` keys.
    fn update_key(&mut self) -> u32 {
        let n = self.order.len();
        let u: f64 = self.rng.gen();
        ((n as f64 * u.powf(skew_exponent())) as usize).min(n - 1) as u32
    }

    /// The measured phase's report (meaningful once the run is done).
    pub fn report(&self, engine: &Engine) -> RunReport {
        let stats = engine.stats().since(&self.phase_start);
        RunReport {
            engine: engine.config().kind,
            benchmark: self.spec.benchmark,
            records: self.order.len() as u64,
            ops_per_s: stats.ops_per_s(),
            stats,
        }
    }
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
}
