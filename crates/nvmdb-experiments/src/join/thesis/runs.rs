//! What the parts of `thesis-hashjoin` share: where the database lives ([`Mode`]), the
//! DRAM pool, one measured run of a query ([`measure`]) and its counters ([`Totals`]),
//! the variants compared, and independent runs on the context's free threads.

use nvmdb_device::{Pcm, PcmAccounting, PcmConfig, PcmStats};
use nvmdb_join::buffered::{BufferedMemory, PAGE_BYTES};
use nvmdb_join::idlist::IdEncoding;
use nvmdb_join::join::{Algorithm, JoinOptions};
use nvmdb_join::relation::Layout;
use nvmdb_join::ssb::{run_query, Query, ResultColumns, Ssb, StoredSsb};
use nvmdb_lab::{Cell, LabError, RunContext};
use nvmdb_memory::{CachedMemory, Memory};

use crate::join::Machine;

/// Database ÷ DRAM pool of the pool sweep at 1.0X. The thesis states 256 MB of DRAM over
/// 8 GB of PCM (1/32); 16 is the pool of the size sweep.
pub(super) const POOL_FRACTIONS: [u64; 4] = [32, SIZE_SWEEP_POOL_FRACTION, 4, HALF];

/// Database ÷ DRAM pool of the size sweep (the pool stays fixed as the database grows).
pub(super) const SIZE_SWEEP_POOL_FRACTION: u64 = 16;

/// A pool of half the database, where the disk claim is measured.
pub(super) const HALF: u64 = 2;

/// Where the database lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// PCM storage behind a DRAM buffer pool.
    Disk,
    /// PCM main memory behind the CPU caches.
    MainMemory,
}

/// Totals over the three queries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Totals {
    pub(super) pcm: PcmStats,
    pub(super) dram_bytes: u64,
    pub(super) result_rows: [u64; 3],
}

impl Totals {
    pub(super) fn add(&mut self, pcm: &PcmStats) {
        self.pcm.lines_read += pcm.lines_read;
        self.pcm.lines_written += pcm.lines_written;
        self.pcm.words_written += pcm.words_written;
        self.pcm.bits_written += pcm.bits_written;
    }
    pub(super) fn energy_pj(&self) -> u64 {
        self.pcm.energy_pj(&nvmdb_device::PcmMetrics::CIDR2011)
    }
    pub(super) fn latency_cycles(&self) -> u64 {
        self.pcm.latency_cycles(&nvmdb_device::PcmMetrics::CIDR2011)
    }
    /// N_r of the thesis's formulas: words read (8 per line or line of a page read).
    pub(super) fn words_read(&self) -> u64 {
        self.pcm.lines_read * WORDS_PER_LINE
    }
    /// The thesis's energy (Section 4.1.1): 8(N_w·E_wb + N_r·E_rb), pJ.
    pub(super) fn thesis_energy_pj(&self) -> u64 {
        let m = nvmdb_device::PcmMetrics::CIDR2011;
        8 * (self.pcm.words_written * m.e_wb_pj + self.words_read() * m.e_rb_pj)
    }
    /// The thesis's access latency (Section 4.1.1): 8(N_w·T_w + N_r·T_r), cycles.
    pub(super) fn thesis_latency_cycles(&self) -> u64 {
        let m = nvmdb_device::PcmMetrics::CIDR2011;
        8 * (self.pcm.words_written * m.t_w_cycles + self.words_read() * m.t_l_cycles)
    }
}

/// 8 B words per 64 B line.
const WORDS_PER_LINE: u64 = 8;

/// The PCM of every run: 4 GiB, no Flip-N-Write, its cells counted without their wear
/// ([`PcmAccounting::Bits`]: every counter as counting every cell gives it), since the
/// experiment reads the counters and never the wear.
pub(super) fn device() -> Result<Pcm, String> {
    Pcm::new(PcmConfig { accounting: PcmAccounting::Bits, ..PcmConfig::new(4 << 30) }).map_err(|e| e.to_string())
}

pub(super) fn variant_name(layout: Layout, algorithm: Algorithm) -> &'static str {
    match (layout, algorithm) {
        (Layout::Row, Algorithm::CachePartitioning) => "R-S traditional",
        (Layout::Row, _) => "R-S modified",
        (Layout::Column, Algorithm::CachePartitioning) => "C-S traditional",
        (Layout::Column, _) => "C-S modified",
    }
}

/// The three queries on `ssb`, loaded as `stored` in `mem`.
fn run_all<M: Memory>(
    mem: &mut M,
    ssb: &Ssb,
    stored: &StoredSsb,
    options: &JoinOptions,
    columns: ResultColumns,
    mut dram_bytes: impl FnMut(&M) -> u64,
) -> Result<Totals, String> {
    let mut totals = Totals::default();
    for (q, query) in Query::ALL.into_iter().enumerate() {
        let mut dram = 0;
        let run = run_query(mem, ssb, stored, query, options, columns, |m| dram += dram_bytes(m))
            .map_err(|e| e.to_string())?;
        for (_, report) in &run.joins {
            totals.add(&report.pcm);
        }
        totals.dram_bytes += dram;
        totals.result_rows[q] = run.result_rows;
    }
    Ok(totals)
}

/// How big the DRAM pool is and where partitions are sized to (PCM as disk), and what a
/// column-store result reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pool {
    pub(super) bytes: u64,
    /// The C partitions are sized to: the pool, unless an experiment isolates the choice.
    pub(super) partition_bytes: u64,
    /// The attributes the query uses, unless an experiment isolates the choice.
    pub(super) result_columns: ResultColumns,
}

impl Pool {
    pub(super) fn of(bytes: u64) -> Pool {
        Pool { bytes, partition_bytes: bytes, result_columns: ResultColumns::Used }
    }
}

/// Runs `run` on a clone of `loaded` for each of `runs` but the last, which takes `loaded`
/// itself: every run starts from the same state, and at most two copies of it exist.
fn from_one_load<L: Clone, R, T>(
    loaded: L,
    runs: &[R],
    mut run: impl FnMut(L, &R) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let mut out = Vec::with_capacity(runs.len());
    if let Some((last, rest)) = runs.split_last() {
        for r in rest {
            out.push(run(loaded.clone(), r)?);
        }
        out.push(run(loaded, last)?);
    }
    Ok(out)
}

/// The runs without the users of `specs`, which differ only in the join and its
/// [`Pool::partition_bytes`] and [`Pool::result_columns`]: the database is loaded once (the
/// load does not depend on them) and each run starts from a copy of the loaded state.
/// Results in the order of `specs`.
pub(super) fn measure(ssb: &Ssb, specs: &[SingleSpec], machine: &Machine) -> Result<Vec<Totals>, String> {
    let first = specs.first().expect("a run");
    assert!(specs.iter().all(|s| s.load() == first.load()), "one load");
    let pcm = device()?;
    let options = |spec: &SingleSpec| {
        let cache_bytes = match spec.mode {
            Mode::Disk => spec.pool.partition_bytes,
            Mode::MainMemory => machine.cache_bytes(),
        };
        JoinOptions { algorithm: spec.algorithm, cache_bytes, id_encoding: IdEncoding::Plain32, collect_pairs: true }
    };
    match first.mode {
        Mode::Disk => {
            let mut mem = BufferedMemory::new(pcm, first.pool.bytes);
            let stored = StoredSsb::load(&mut mem, ssb, first.layout).map_err(|e| e.to_string())?;
            from_one_load(mem, specs, |mut mem, spec| {
                run_all(&mut mem, ssb, &stored, &options(spec), spec.pool.result_columns, |m| {
                    let s = m.dram_stats();
                    s.bytes_read + s.bytes_written
                })
            })
        }
        Mode::MainMemory => {
            let mut mem = CachedMemory::new(pcm, machine.cache.clone());
            let stored = StoredSsb::load(&mut mem, ssb, first.layout).map_err(|e| e.to_string())?;
            from_one_load(mem, specs, |mut mem, spec| {
                run_all(&mut mem, ssb, &stored, &options(spec), spec.pool.result_columns, |_| 0)
            })
        }
    }
}

pub(super) fn gain(traditional: u64, modified: u64) -> f64 {
    100.0 * (1.0 - modified as f64 / traditional as f64)
}

/// Modified over traditional: lifetime gain (wear_trad / wear_mod − 1), energy and latency
/// saved, %.
pub(super) fn gains(traditional: &Totals, modified: &Totals) -> (f64, f64, f64) {
    (
        100.0 * (traditional.pcm.bits_written as f64 / modified.pcm.bits_written.max(1) as f64 - 1.0),
        gain(traditional.energy_pj(), modified.energy_pj()),
        gain(traditional.latency_cycles(), modified.latency_cycles()),
    )
}

/// One run of the three queries without the users: a database size, where it lives, a
/// join variant, the DRAM pool, and (PCM as main memory) the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SingleSpec {
    pub(super) size_factor: u64,
    mode: Mode,
    pub(super) layout: Layout,
    algorithm: Algorithm,
    pub(super) pool: Pool,
    /// The machine's last level shrunk 4× (PCM as main memory).
    pub(super) small_l3: bool,
}

impl SingleSpec {
    pub(super) fn disk(size_factor: u64, layout: Layout, algorithm: Algorithm, pool: Pool) -> SingleSpec {
        SingleSpec { size_factor, mode: Mode::Disk, layout, algorithm, pool, small_l3: false }
    }
    pub(super) fn main_memory(size_factor: u64, algorithm: Algorithm, pool: Pool, small_l3: bool) -> SingleSpec {
        SingleSpec { size_factor, mode: Mode::MainMemory, layout: Layout::Row, algorithm, pool, small_l3 }
    }
    /// What the database load depends on: the run with its join, partition size and what a
    /// result reads set to one choice (the pool's bytes matter with PCM as disk only).
    pub(super) fn load(&self) -> SingleSpec {
        let bytes = if self.mode == Mode::Disk { self.pool.bytes } else { 0 };
        SingleSpec { algorithm: Algorithm::CachePartitioning, pool: Pool::of(bytes), ..*self }
    }
}

/// A DRAM pool of 1/`fraction` of `ssb`, in whole pages, at least 16 of them.
pub(super) fn pool_for(ssb: &Ssb, fraction: u64) -> u64 {
    (ssb.bytes() / fraction).next_multiple_of(PAGE_BYTES).max(MIN_POOL_PAGES * PAGE_BYTES)
}

/// The smallest DRAM pool, pages.
pub(super) const MIN_POOL_PAGES: u64 = 16;

/// A database size's cell: the report's `2.0X`, the scale factor's multiple as data
/// (`x`, so Python's column is `size_x`).
pub(super) fn size_cell(k: impl Into<Cell> + std::fmt::Display) -> Cell {
    let text = format!("{k}.0X");
    Cell::typed(text, [("x", k.into())])
}

/// Runs `specs` as parts on the context's pool, each stated at `part_bytes`, calling
/// `tick` after each; results in the order of `specs`, and on a failure the first failed
/// run's message in that order.
pub(super) fn run_parts<S: Sync, T: Send>(
    ctx: &RunContext,
    specs: &[S],
    part_bytes: u64,
    tick: &(dyn Fn() + Sync),
    run: impl Fn(&S) -> Result<T, String> + Sync,
) -> Result<Vec<T>, String> {
    ctx.run_parts(
        specs,
        |_| part_bytes,
        |spec| {
            let result = run(spec).map_err(|message| LabError::Failed { id: String::new(), message });
            tick();
            result
        },
    )
    .map_err(|e| match e {
        LabError::Failed { message, .. } => message,
        other => other.to_string(),
    })
}

/// The four variants, in the thesis's order.
pub(super) const VARIANTS: [(Layout, Algorithm); 4] = [
    (Layout::Row, Algorithm::CachePartitioning),
    (Layout::Row, Algorithm::VirtualPartitioning),
    (Layout::Column, Algorithm::CachePartitioning),
    (Layout::Column, Algorithm::VirtualPartitioning),
];

/// The counters of a run as table cells: bits written, N_r, N_w, CIDR and thesis energy
/// (µJ), CIDR and thesis latency (Mcycles).
pub(super) fn counter_cells(t: &Totals) -> Vec<Cell> {
    vec![
        t.pcm.bits_written.into(),
        t.words_read().into(),
        t.pcm.words_written.into(),
        (t.energy_pj() as f64 / 1e6).into(),
        (t.thesis_energy_pj() as f64 / 1e6).into(),
        (t.latency_cycles() as f64 / 1e6).into(),
        (t.thesis_latency_cycles() as f64 / 1e6).into(),
    ]
}

/// Column names of [`counter_cells`].
pub(super) const COUNTER_COLUMNS: [&str; 7] = [
    "bits written",
    "N_r, words read",
    "N_w, words written",
    "PCM energy, µJ",
    "thesis energy, µJ",
    "PCM latency, Mcycles",
    "thesis latency, Mcycles",
];

/// Wear, energy and latency of a run.
pub(super) fn metrics(t: &Totals) -> [u64; 3] {
    [t.pcm.bits_written, t.energy_pj(), t.latency_cycles()]
}
