//! The hash-join experiments: CIDR 2011 Figures 5, 7, 8 and 9 (seed 001) and the thesis's
//! Figures 5.9–5.11 (seed 000).

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

mod cidr;
mod fig5;
mod thesis;

use nvmdb_device::{Pcm, PcmConfig, PcmMetrics};
use nvmdb_lab::{Experiment, LabError, Memo, Scale};
use nvmdb_memory::{CacheConfig, CacheLevelConfig, CachedMemory, HintFilter, Memory, MemoryReport};
use serde::Serialize;

use nvmdb_join::join::{measured_join, Algorithm, JoinOptions, JoinOutput};
use nvmdb_join::relation::StoredRelation;
use nvmdb_join::synth::{generate, SynthSpec};

/// Every hash-join experiment, in report order.
pub fn all() -> Vec<Box<dyn Experiment>> {
    vec![
        Box::new(fig5::Fig5),
        Box::new(cidr::Fig7),
        Box::new(cidr::Fig8),
        Box::new(cidr::Fig9),
        Box::new(thesis::ThesisHashJoin),
    ]
}

/// The simulated machine of a scale.
///
/// Paper: CIDR Table 5's hierarchy (8 MB L3) and a 50 MB R. Quick: every cache level and
/// R shrunk by the same factor ([`QUICK_SHRINK`]: L1 2 KB, L2 16 KB, L3 512 KB, R
/// 3.125 MB), which keeps the ratios of the levels to one another and of the relations
/// and hash tables to the cache, and so the regime the paper studies (the simple join's
/// hash table does not fit the cache; a partition's working set fills it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Machine {
    /// Cache hierarchy.
    pub cache: CacheConfig,
    /// Bytes of R.
    pub r_bytes: u64,
}

/// How much smaller than the paper's the quick machine and R are.
pub const QUICK_SHRINK: u64 = 16;

/// The paper's R, bytes.
const PAPER_R_BYTES: u64 = 50_000_000;

impl Machine {
    /// The machine for `scale`.
    pub fn for_scale(scale: Scale) -> Machine {
        match scale {
            Scale::Paper => Machine { cache: CacheConfig::cidr2011(), r_bytes: PAPER_R_BYTES },
            Scale::Quick => {
                let paper = CacheConfig::cidr2011();
                Machine {
                    cache: CacheConfig {
                        levels: paper
                            .levels
                            .iter()
                            .map(|l| CacheLevelConfig { size_bytes: l.size_bytes / QUICK_SHRINK, ..*l })
                            .collect(),
                        ..paper
                    },
                    r_bytes: PAPER_R_BYTES / QUICK_SHRINK,
                }
            }
        }
    }

    /// This machine with its last cache level `factor`× smaller.
    pub fn with_last_level_shrunk(&self, factor: u64) -> Machine {
        let mut machine = self.clone();
        let last = machine.cache.levels.last_mut().expect("a cache level");
        last.size_bytes /= factor;
        machine
    }

    /// The last-level cache size, the paper's C.
    pub fn cache_bytes(&self) -> u64 {
        self.cache.levels.last().expect("a cache level").size_bytes
    }
}

/// Simulated PCM capacity: ample for 50 MB R and 400 MB S plus copies (allocated sparsely).
const PCM_CAPACITY_BYTES: u64 = 4 << 30;

/// One measured join.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// The join's output.
    pub output: JoinOutput,
    /// The counters of the join alone (relations loaded before the counters were reset).
    pub report: MemoryReport,
}

impl Measurement {
    /// Bits programmed (total wear).
    pub fn wear_bits(&self) -> u64 {
        self.report.pcm.bits_written
    }

    /// Energy, pJ.
    pub fn energy_pj(&self) -> u64 {
        self.report.energy_pj()
    }

    /// Estimated memory cycles: the memory-only time.
    pub fn cycles(&self) -> u64 {
        self.report.estimated_cycles
    }

    /// The CPU time model's cycles: the joins' declared instructions, the DTLB and
    /// overlapped independent misses beside the memory accesses.
    pub fn cpu_cycles(&self) -> u64 {
        self.report.cpu.cycles
    }
}

/// Which of the joins' hints reach the CPU time model: to isolate their share of its
/// time. Neither changes a counter or the memory-only time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// The instructions the joins declare beside their loads and stores.
    pub instructions: bool,
    /// The groups of independent accesses whose misses overlap.
    pub overlap: bool,
}

impl Hints {
    /// Every hint, as the experiments run.
    pub const ALL: Hints = Hints { instructions: true, overlap: true };
}

/// Generates the synthetic relations of `spec` in fresh cached PCM and runs `algorithm`
/// on them. The relations come from `seed`, so every algorithm sees the same data.
pub fn run_synthetic(
    machine: &Machine,
    metrics: PcmMetrics,
    spec: &SynthSpec,
    algorithm: Algorithm,
    seed: u64,
    id: &str,
) -> Result<Measurement, LabError> {
    run_synthetic_hinted(machine, metrics, spec, algorithm, seed, id, Hints::ALL)
}

/// [`run_synthetic`] with only `hints` reaching the CPU time model.
pub fn run_synthetic_hinted(
    machine: &Machine,
    metrics: PcmMetrics,
    spec: &SynthSpec,
    algorithm: Algorithm,
    seed: u64,
    id: &str,
    hints: Hints,
) -> Result<Measurement, LabError> {
    let mut runs = run_synthetic_timed(machine, metrics, spec, algorithm, seed, id, &[metrics.t_w_cycles], hints)?;
    Ok(runs.pop().expect("one T_w"))
}

/// [`run_synthetic`] as one simulation timed at each of `t_ws`
/// ([`CachedMemory::time_also_at_t_w`]): the measurements in the order of `t_ws`, each
/// the one [`run_synthetic`] gives with `metrics` at that T_w.
pub fn run_synthetic_by_t_w(
    machine: &Machine,
    metrics: PcmMetrics,
    spec: &SynthSpec,
    algorithm: Algorithm,
    seed: u64,
    id: &str,
    t_ws: &[u64],
) -> Result<Vec<Measurement>, LabError> {
    run_synthetic_timed(machine, metrics, spec, algorithm, seed, id, t_ws, Hints::ALL)
}

/// One simulation of [`run_synthetic`] with `hints`, timed at each of `t_ws`.
#[allow(clippy::too_many_arguments)]
fn run_synthetic_timed(
    machine: &Machine,
    metrics: PcmMetrics,
    spec: &SynthSpec,
    algorithm: Algorithm,
    seed: u64,
    id: &str,
    t_ws: &[u64],
    hints: Hints,
) -> Result<Vec<Measurement>, LabError> {
    let mut data = Generated::new(machine, metrics, spec, seed, id, hints)?;
    // Loading the relations is timed at the device's T_w only: the other T_w count from
    // the counters' reset at the start of the join.
    data.mem.inner.time_also_at_t_w(t_ws);
    let output = data.join(machine, algorithm, id)?;
    Ok(t_ws
        .iter()
        .map(|&t_w| Measurement {
            output: output.clone(),
            report: data.mem.inner.report_at_t_w(t_w).expect("timed at every T_w asked for"),
        })
        .collect())
}

/// The synthetic relations of a spec generated in fresh cached PCM.
struct Generated {
    mem: HintFilter<CachedMemory<Pcm>>,
    r: StoredRelation,
    s: StoredRelation,
    spec: SynthSpec,
}

impl Generated {
    fn new(
        machine: &Machine,
        metrics: PcmMetrics,
        spec: &SynthSpec,
        seed: u64,
        id: &str,
        hints: Hints,
    ) -> Result<Generated, LabError> {
        use rand::SeedableRng;
        let mut config = PcmConfig::new(PCM_CAPACITY_BYTES);
        config.metrics = metrics;
        let pcm = Pcm::new(config).map_err(|e| failed(id, e.to_string()))?;
        let mut mem = HintFilter {
            inner: CachedMemory::new(pcm, machine.cache.clone()),
            instruction_factor: u64::from(hints.instructions),
            overlap: hints.overlap,
        };
        let mut rng = nvmdb_lab::Rng::seed_from_u64(seed);
        let (r, s) = generate(&mut mem, spec, &mut rng).map_err(|e| failed(id, e.to_string()))?;
        Ok(Generated { mem, r, s, spec: *spec })
    }

    /// Runs `algorithm` on the relations from clean counters ([`measured_join`]); the
    /// report is the memory's.
    fn join(&mut self, machine: &Machine, algorithm: Algorithm, id: &str) -> Result<JoinOutput, LabError> {
        let options = JoinOptions { cache_bytes: machine.cache_bytes(), ..JoinOptions::cidr2011(algorithm) };
        let (output, _) =
            measured_join(&mut self.mem, &self.r, &self.s, &options).map_err(|e| failed(id, e.to_string()))?;
        if output.matches != self.spec.s_rows() {
            return Err(failed(
                id,
                format!("{} found {} matches, expected {}", algorithm.name(), output.matches, self.spec.s_rows()),
            ));
        }
        Ok(output)
    }
}

fn failed(id: &str, message: String) -> LabError {
    LabError::Failed { id: id.into(), message }
}

/// [`run_synthetic`] of each of `algorithms`, in that order, on one generation of the
/// relations: after the first join the memory is rewound ([`CachedMemory::rewind`]) to
/// where generating them left it (every dirty line written back, as [`measured_join`]
/// starts by doing), so each measurement is the one [`run_synthetic`] gives.
pub fn run_synthetic_each(
    machine: &Machine,
    metrics: PcmMetrics,
    spec: &SynthSpec,
    algorithms: &[Algorithm],
    seed: u64,
    id: &str,
) -> Result<Vec<Measurement>, LabError> {
    let mut data = Generated::new(machine, metrics, spec, seed, id, Hints::ALL)?;
    data.mem.flush_all();
    let generated = data.mem.inner.checkpoint();
    let mut runs = Vec::with_capacity(algorithms.len());
    for (i, &algorithm) in algorithms.iter().enumerate() {
        if i > 0 {
            data.mem.inner.rewind(&generated);
        }
        let output = data.join(machine, algorithm, id)?;
        runs.push(Measurement { output, report: data.mem.inner.report() });
    }
    Ok(runs)
}

/// The joins [`run_synthetic_shared`] ran in this process, keyed by every input of the
/// simulation. `cidr-fig7`'s record-size sweep, `cidr-fig8`'s Figure 8(c), `cidr-fig9`'s
/// T_w sweep and its gap runs measure the same joins (the same machine, data, algorithm
/// and PCM); in one `nvmdb reproduce` the first experiment to ask runs each, and the
/// others take its measurements.
static SHARED: Memo<Vec<Measurement>> = Memo::new();

/// [`run_synthetic_by_t_w`], or its measurements if this process ran the same join
/// (machine, `metrics`, spec, algorithm, seed, `t_ws`) before. A second asker while the
/// first runs waits for its measurements; they are the same whichever asks first.
#[allow(clippy::too_many_arguments)]
pub fn run_synthetic_shared(
    machine: &Machine,
    metrics: PcmMetrics,
    spec: &SynthSpec,
    algorithm: Algorithm,
    seed: u64,
    id: &str,
    t_ws: &[u64],
) -> Result<Vec<Measurement>, LabError> {
    // Every input of the simulation; the hints are [`Hints::ALL`], and `id` names only
    // the experiment in an error.
    let key = format!("{machine:?} {metrics:?} {spec:?} {algorithm:?} {seed} {t_ws:?}");
    let run =
        || run_synthetic_by_t_w(machine, metrics, spec, algorithm, seed, id, t_ws).map_err(LabError::into_message);
    SHARED.get_or_run(key, run).map_err(|message| LabError::Failed { id: id.into(), message })
}

/// `a / b` as a float, `None` when `b` is zero.
pub fn ratio(a: u64, b: u64) -> Option<f64> {
    (b != 0).then(|| a as f64 / b as f64)
}
