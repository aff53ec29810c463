//! `thesis-hashjoin`: traditional vs modified hash joins on the Star Schema Benchmark,
//! row and column stores, PCM as disk and as main memory (seed 000, Section 5.2,
//! Figures 5.9–5.11), single runs of the three queries and the thesis's multi-user load.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

use nvmdb_device::{Pcm, PcmAccounting, PcmConfig, PcmStats};
use nvmdb_lab::{Cell, Experiment, Footprint, LabError, Outcome, Plot, RunContext, Scale, Table};
use nvmdb_memory::{CachedMemory, Memory};
use rand::RngCore;
use serde_json::json;

use super::Machine;
use nvmdb_join::buffered::{BufferedMemory, PAGE_BYTES};
use nvmdb_join::idlist::IdEncoding;
use nvmdb_join::join::{measured_join, Algorithm, JoinOptions};
use nvmdb_join::relation::Layout;
use nvmdb_join::ssb::{run_query, Query, ResultColumns, Ssb, StoredSsb};
use nvmdb_join::synth::{generate, SynthSpec};
use nvmdb_join::users::{self, Transaction, UserLoad};

use crate::papers;

/// `thesis-hashjoin`.
#[derive(Debug)]
pub struct ThesisHashJoin;

/// Database ÷ DRAM pool of the pool sweep at 1.0X. The thesis states 256 MB of DRAM over
/// 8 GB of PCM (1/32); 16 is the pool of the size sweep.
const POOL_FRACTIONS: [u64; 4] = [32, SIZE_SWEEP_POOL_FRACTION, 4, HALF];

/// Database ÷ DRAM pool of the size sweep (the pool stays fixed as the database grows).
const SIZE_SWEEP_POOL_FRACTION: u64 = 16;

/// A pool of half the database, where the disk claim is measured.
const HALF: u64 = 2;

/// Where the database lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// PCM storage behind a DRAM buffer pool.
    Disk,
    /// PCM main memory behind the CPU caches.
    MainMemory,
}

/// Totals over the three queries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Totals {
    pcm: PcmStats,
    dram_bytes: u64,
    result_rows: [u64; 3],
}

impl Totals {
    fn add(&mut self, pcm: &PcmStats) {
        self.pcm.lines_read += pcm.lines_read;
        self.pcm.lines_written += pcm.lines_written;
        self.pcm.words_written += pcm.words_written;
        self.pcm.bits_written += pcm.bits_written;
    }
    fn energy_pj(&self) -> u64 {
        self.pcm.energy_pj(&nvmdb_device::PcmMetrics::CIDR2011)
    }
    fn latency_cycles(&self) -> u64 {
        self.pcm.latency_cycles(&nvmdb_device::PcmMetrics::CIDR2011)
    }
    /// N_r of the thesis's formulas: words read (8 per line or line of a page read).
    fn words_read(&self) -> u64 {
        self.pcm.lines_read * WORDS_PER_LINE
    }
    /// The thesis's energy (Section 4.1.1): 8(N_w·E_wb + N_r·E_rb), pJ.
    fn thesis_energy_pj(&self) -> u64 {
        let m = nvmdb_device::PcmMetrics::CIDR2011;
        8 * (self.pcm.words_written * m.e_wb_pj + self.words_read() * m.e_rb_pj)
    }
    /// The thesis's access latency (Section 4.1.1): 8(N_w·T_w + N_r·T_r), cycles.
    fn thesis_latency_cycles(&self) -> u64 {
        let m = nvmdb_device::PcmMetrics::CIDR2011;
        8 * (self.pcm.words_written * m.t_w_cycles + self.words_read() * m.t_l_cycles)
    }
}

/// 8 B words per 64 B line.
const WORDS_PER_LINE: u64 = 8;

/// The PCM of every run: 4 GiB, no Flip-N-Write, its cells counted without their wear
/// ([`PcmAccounting::Bits`]: every counter as counting every cell gives it), since the
/// experiment reads the counters and never the wear.
fn device() -> Result<Pcm, String> {
    Pcm::new(PcmConfig { accounting: PcmAccounting::Bits, ..PcmConfig::new(4 << 30) }).map_err(|e| e.to_string())
}

fn variant_name(layout: Layout, algorithm: Algorithm) -> &'static str {
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
struct Pool {
    bytes: u64,
    /// The C partitions are sized to: the pool, unless an experiment isolates the choice.
    partition_bytes: u64,
    /// The attributes the query uses, unless an experiment isolates the choice.
    result_columns: ResultColumns,
}

impl Pool {
    fn of(bytes: u64) -> Pool {
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
fn measure(ssb: &Ssb, specs: &[SingleSpec], machine: &Machine) -> Result<Vec<Totals>, String> {
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

fn gain(traditional: u64, modified: u64) -> f64 {
    100.0 * (1.0 - modified as f64 / traditional as f64)
}

/// Modified over traditional: lifetime gain (wear_trad / wear_mod − 1), energy and latency
/// saved, %.
fn gains(traditional: &Totals, modified: &Totals) -> (f64, f64, f64) {
    (
        100.0 * (traditional.pcm.bits_written as f64 / modified.pcm.bits_written.max(1) as f64 - 1.0),
        gain(traditional.energy_pj(), modified.energy_pj()),
        gain(traditional.latency_cycles(), modified.latency_cycles()),
    )
}

/// The 1.0X database with PCM as disk, by DRAM pool size: the modified join's cost over
/// the traditional one's, for each layout. `fractions` are database ÷ pool.
/// Modified over traditional at one pool: wear, energy, latency for the row, then the
/// column store.
type PoolRatios = [f64; 6];

fn pool_sweep(ssb: &Ssb, fractions: &[u64], single: &impl Fn(SingleSpec) -> Totals) -> (Table, Vec<PoolRatios>) {
    let mut table = Table::new(
        "PCM as disk at 1.0X, by DRAM pool: the modified join's wear, energy and latency over the traditional one's \
         (above 1: modified costs more)",
        &[&["database ÷ pool"][..], &POOL_RATIO_COLUMNS].concat(),
    );
    let mut sweep = Vec::new();
    for &f in fractions {
        let mut ratios = Vec::new();
        for layout in [Layout::Row, Layout::Column] {
            let [t, m] = [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning]
                .map(|a| single(SingleSpec::disk(1, layout, a, Pool::of(pool_for(ssb, f)))));
            for (a, b) in [
                (m.pcm.bits_written, t.pcm.bits_written),
                (m.energy_pj(), t.energy_pj()),
                (m.latency_cycles(), t.latency_cycles()),
            ] {
                ratios.push(super::ratio(a, b).unwrap_or(f64::NAN));
            }
        }
        let ratios: PoolRatios = ratios.try_into().expect("three ratios per layout");
        let mut row: Vec<Cell> = vec![f.into(), (pool_for(ssb, f) >> 10).into()];
        row.extend(ratios.iter().map(|&r| Cell::from(r)));
        table.row(row);
        sweep.push(ratios);
    }
    (table, sweep)
}

/// One run of the three queries without the users: a database size, where it lives, a
/// join variant, the DRAM pool, and (PCM as main memory) the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SingleSpec {
    size_factor: u64,
    mode: Mode,
    layout: Layout,
    algorithm: Algorithm,
    pool: Pool,
    /// The machine's last level shrunk 4× (PCM as main memory).
    small_l3: bool,
}

impl SingleSpec {
    fn disk(size_factor: u64, layout: Layout, algorithm: Algorithm, pool: Pool) -> SingleSpec {
        SingleSpec { size_factor, mode: Mode::Disk, layout, algorithm, pool, small_l3: false }
    }
    fn main_memory(size_factor: u64, algorithm: Algorithm, pool: Pool, small_l3: bool) -> SingleSpec {
        SingleSpec { size_factor, mode: Mode::MainMemory, layout: Layout::Row, algorithm, pool, small_l3 }
    }
    /// What the database load depends on: the run with its join, partition size and what a
    /// result reads set to one choice (the pool's bytes matter with PCM as disk only).
    fn load(&self) -> SingleSpec {
        let bytes = if self.mode == Mode::Disk { self.pool.bytes } else { 0 };
        SingleSpec { algorithm: Algorithm::CachePartitioning, pool: Pool::of(bytes), ..*self }
    }
}

/// Indices of `specs` grouped by the load they start from ([`SingleSpec::load`]), groups
/// in the order of their first run, each in the order of `specs`.
fn load_groups(specs: &[SingleSpec]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        match groups.iter_mut().find(|g| specs[g[0]].load() == spec.load()) {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

/// Every run without the users, each once (the pool sweep's 1/16 pool is the size sweep's
/// pool, and at quick scale the 1/32 one too): by size, the pool sweep, the smaller last
/// level, partitions sized to half the pool, and the column store reading every attribute.
fn single_specs(base: &Ssb, factors: &[u64], pool_bytes: u64) -> Vec<SingleSpec> {
    let pool = Pool::of(pool_bytes);
    let mut specs = Vec::new();
    for &k in factors {
        specs.extend(VARIANTS.map(|(layout, algorithm)| SingleSpec::disk(k, layout, algorithm, pool)));
        specs.extend(
            [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning]
                .map(|a| SingleSpec::main_memory(k, a, pool, false)),
        );
    }
    for &f in &POOL_FRACTIONS {
        for layout in [Layout::Row, Layout::Column] {
            specs.extend(
                [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning]
                    .map(|a| SingleSpec::disk(1, layout, a, Pool::of(pool_for(base, f)))),
            );
        }
    }
    specs.extend(
        [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning]
            .map(|a| SingleSpec::main_memory(1, a, pool, true)),
    );
    let half = Pool { partition_bytes: pool_bytes / 2, ..pool };
    specs.extend(factors.iter().map(|&k| SingleSpec::disk(k, Layout::Column, Algorithm::CachePartitioning, half)));
    let all_columns = Pool { result_columns: ResultColumns::All, ..pool };
    specs.push(SingleSpec::disk(1, Layout::Column, Algorithm::VirtualPartitioning, all_columns));
    let mut unique: Vec<SingleSpec> = Vec::new();
    for spec in specs {
        if !unique.contains(&spec) {
            unique.push(spec);
        }
    }
    unique
}

/// The columns after the first of a table of modified ÷ traditional ratios by DRAM pool.
const POOL_RATIO_COLUMNS: [&str; 7] =
    ["pool, KB", "row: wear", "row: energy", "row: latency", "column: wear", "column: energy", "column: latency"];

/// A DRAM pool of 1/`fraction` of `ssb`, in whole pages, at least 16 of them.
fn pool_for(ssb: &Ssb, fraction: u64) -> u64 {
    (ssb.bytes() / fraction).next_multiple_of(PAGE_BYTES).max(MIN_POOL_PAGES * PAGE_BYTES)
}

/// The smallest DRAM pool, pages.
const MIN_POOL_PAGES: u64 = 16;

/// `a / b` as a table cell.
fn ratio_cell(a: u64, b: u64) -> Cell {
    super::ratio(a, b).into()
}

/// The modified joins' energy, column store against row store, by what a result reads.
fn result_columns_note((row, column): (u64, u64), column_all: u64) -> String {
    let times = |e: u64| e as f64 / row as f64;
    format!(
        "Modified joins, PCM as disk at 1.0X (table \"by what a result reads\"): the column store uses {:.2}× the \
         row store's PCM energy when its results read only the attributes the query uses, and {:.2}× when they \
         read every attribute (thesis: \"slightly more\"), so {}.",
        times(column),
        times(column_all),
        if column_all > row {
            "the column store's lower energy comes from its results reading fewer attributes"
        } else {
            "reading fewer attributes does not explain all of the column store's lower energy"
        }
    )
}

/// The pool sweep's measured reversal, and where the thesis's pool sits.
fn pool_note(sweep: &[PoolRatios], sf1_bytes: f64) -> String {
    let energy = |f: u64| {
        let i = POOL_FRACTIONS.iter().position(|&x| x == f).expect("swept");
        (sweep[i][1], sweep[i][4])
    };
    let (small, half) = (energy(SIZE_SWEEP_POOL_FRACTION), energy(HALF));
    format!(
        "DRAM pool (table \"by DRAM pool\"): the thesis states 256 MB of DRAM over 8 GB of PCM but not the bytes of \
         its 1.0X database; at this generator's {:.0} MB per SSB scale factor, 256 MB is {:.2} of an SF 1 database. \
         At 1.0X the modified join's PCM energy over the traditional one's is {:.2} (row) and {:.2} (column) with \
         a pool of 1/{SIZE_SWEEP_POOL_FRACTION} of the database, and {:.2} and {:.2} with half of it: the \
         modified join costs more energy only with the small pool. (A 1/32 pool is below the {MIN_POOL_PAGES}-page \
         minimum at quick scale and equals the 1/16 one.)",
        sf1_bytes / 1e6,
        256e6 / sf1_bytes,
        small.0,
        small.1,
        half.0,
        half.1
    )
}

/// The main-memory gains against the database's fit in the last level.
fn fit_note(memory_gains: &[(f64, f64, f64)], small_l3: (f64, f64, f64), ratios: &[f64]) -> String {
    let (one, four) = (memory_gains[0], memory_gains[memory_gains.len() - 1]);
    let closer = (small_l3.1 - four.1).abs() < (one.1 - four.1).abs();
    format!(
        "PCM as main memory (table \"by database ÷ last-level cache\"): the 1.0X database is {:.2}× the last \
         level and saves {:.0}% energy; with a last level 4× smaller ({:.2}×) it saves {:.0}%, beside 4.0X's {:.0}% \
         at {:.2}×, so the 1.0X energy saving {} from the database nearly fitting the cache. Lifetime gains: \
         {:.0}%, {:.0}% and {:.0}%.",
        ratios[0],
        one.1,
        ratios[1],
        small_l3.1,
        four.1,
        ratios[2],
        if closer { "comes" } else { "does not come" },
        one.0,
        small_l3.0,
        four.0
    )
}

/// The column store's traditional disk energy by size, against partition sizing.
fn column_partitions_note(to_pool: &[u64], to_half: &[u64]) -> String {
    let series = |v: &[u64]| v.iter().map(|&e| format!("{:.0}", e as f64 / 1e6)).collect::<Vec<_>>().join(" → ");
    let rising = to_half.windows(2).all(|w| w[1] > w[0]);
    format!(
        "Column store, traditional join, PCM as disk: energy by size is {} µJ with partitions sized to the pool and \
         {} µJ with partitions sized to half of it, {}; so the non-monotonic series is an effect of sizing \
         partitions to the whole pool{}.",
        series(to_pool),
        series(to_half),
        if rising { "which rises with size" } else { "which does not rise at every size either" },
        if rising { "" } else { " only in part" }
    )
}

impl Experiment for ThesisHashJoin {
    fn id(&self) -> &'static str {
        "thesis-hashjoin"
    }
    /// Measured on the 2-core machine of BENCHMARKS.md: quick scale 151 s and 58 MiB on one
    /// thread (of a loaded machine; 43 s of CPU, 28 s since the page pool's LRU list);
    /// paper scale 303 s of CPU since its PCM counts the cells without their wear (427 s
    /// before, since the PCM storage writes in place; 678 s before that). Peak memory
    /// 1,068 MiB in the run of the page pool's LRU list; 1.3–1.5 GB for the whole process
    /// with `--jobs 2` since, its parts (stated separately) included, and 1,138 MiB with the
    /// PCM kept as bytes.
    fn footprint(&self, scale: Scale) -> Footprint {
        scale.pick(Footprint::new(128, 151.0), Footprint::new(1_024, 303.0))
    }
    fn title(&self) -> &'static str {
        "Traditional vs modified hash joins on SSB: row/column stores, PCM as disk and as main memory"
    }
    fn source(&self) -> &'static str {
        "seed 000 (Pathak, NUS 2011), Chapter 4 Algorithms 1–4, Section 5.2, Figures 5.9–5.11"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let failed = |message: String| LabError::Failed { id: self.id().into(), message };
        let machine = Machine::for_scale(ctx.scale);
        let base_sf = ctx.scale.pick(0.002, 0.05);
        let factors = [1u64, 2, 3, 4];
        let base = Ssb::generate(base_sf, &mut ctx.rng(1));
        // The DRAM pool is fixed while the database grows, as the thesis's 256 MB of DRAM.
        let pool_bytes = pool_for(&base, SIZE_SWEEP_POOL_FRACTION);
        let variants = [
            (Layout::Row, Algorithm::CachePartitioning),
            (Layout::Row, Algorithm::VirtualPartitioning),
            (Layout::Column, Algorithm::CachePartitioning),
            (Layout::Column, Algorithm::VirtualPartitioning),
        ];
        let mut fig59 = Table::new(
            format!(
                "Figure 5.9: PCM as disk ({} KB DRAM pool of 4 KB pages), three queries, by database size (1.0X = \
                 SSB SF {base_sf})",
                pool_bytes >> 10
            ),
            &[&["size", "variant"][..], &COUNTER_COLUMNS, &["DRAM traffic, MB"]].concat(),
        );
        let mut fig511 = Table::new(
            "Figure 5.11: row store, traditional vs modified, PCM as disk and as main memory",
            &[&["size", "mode", "variant"][..], &COUNTER_COLUMNS].concat(),
        );
        let mut improvements = Table::new(
            "Modified vs traditional: lifetime gain (wear_trad / wear_mod − 1), energy and latency saved",
            &["size", "mode", "layout", "lifetime gain, %", "energy saved, %", "latency saved, %", "thesis"],
        );
        let mut plot = Plot::new("Figure 5.9(a): wear, PCM as disk", "database size, X", "bits written");
        let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); variants.len()];
        // Every database, and every run without the users, as parts on the shared pool.
        let databases: Vec<Ssb> = factors
            .iter()
            .map(|&k| if k == 1 { base.clone() } else { Ssb::generate(base_sf * k as f64, &mut ctx.rng(k)) })
            .collect();
        let small_l3 = Machine::with_last_level_shrunk(&machine, 4);
        let singles = single_specs(&base, &factors, pool_bytes);
        let bar = ctx.progress(self.id(), singles.len() as u64 + 1 + load_specs(ctx.scale).len() as u64);
        let single_totals =
            run_singles(ctx, &databases, (&machine, &small_l3), &singles, &|| bar.inc(1)).map_err(failed)?;
        let single = |spec: SingleSpec| {
            let i = singles.iter().position(|s| *s == spec).expect("every run without the users was run");
            single_totals[i]
        };
        let mut result_rows = Vec::new();
        let paper = |id: &str| papers::claim(id).paper_display();
        let thesis_gains = format!(
            "{} / {} / {}",
            paper("thesis-hashjoin-mm-lifetime"),
            paper("thesis-hashjoin-mm-energy"),
            paper("thesis-hashjoin-mm-latency")
        );
        let mut disk_gains = Vec::new();
        let mut memory_gains = Vec::new();
        let mut column_traditional_energy = Vec::new();
        let mut modified_energy_1x = (0, 0);
        // Figure 5.9's observations, checked at every size: the traditional row store wears
        // more than the traditional column store; the modified column store uses more energy
        // than the modified row store; the column store is faster. And the modified joins'
        // wear ratio (column ÷ row) furthest from 1.
        let (mut row_trad_wears_more, mut column_modified_energy_more, mut column_faster) = (true, true, true);
        let mut modified_wear_ratio = 1.0f64;
        for &k in &factors {
            let mut disk = Vec::new();
            for (v, &(layout, algorithm)) in variants.iter().enumerate() {
                let t = single(SingleSpec::disk(k, layout, algorithm, Pool::of(pool_bytes)));
                fig59.row(
                    [
                        vec![size_cell(k), variant_name(layout, algorithm).into()],
                        counter_cells(&t),
                        vec![(t.dram_bytes as f64 / 1e6).into()],
                    ]
                    .concat(),
                );
                series[v].push((k as f64, t.pcm.bits_written as f64));
                disk.push(t);
            }
            let bits: Vec<u64> = disk.iter().map(|t| t.pcm.bits_written).collect();
            row_trad_wears_more &= bits[0] > bits[2];
            let wear_ratio = bits[3] as f64 / bits[1].max(1) as f64;
            if (wear_ratio - 1.0).abs() > (modified_wear_ratio - 1.0).abs() {
                modified_wear_ratio = wear_ratio;
            }
            column_modified_energy_more &= disk[3].energy_pj() > disk[1].energy_pj();
            column_faster &= disk[2].latency_cycles() < disk[0].latency_cycles()
                && disk[3].latency_cycles() < disk[1].latency_cycles();
            let memory: Vec<Totals> = [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning]
                .into_iter()
                .map(|a| single(SingleSpec::main_memory(k, a, Pool::of(pool_bytes), false)))
                .collect();
            if disk.iter().chain(&memory).any(|t| t.result_rows != disk[0].result_rows) {
                return Err(failed(format!("query results differ between variants at {k}.0X")));
            }
            result_rows.push((k, disk[0].result_rows));
            let pairs = [
                ("disk", "row", &disk[0], &disk[1]),
                ("disk", "column", &disk[2], &disk[3]),
                ("main memory", "row", &memory[0], &memory[1]),
            ];
            column_traditional_energy.push(disk[2].energy_pj());
            if k == 1 {
                modified_energy_1x = (disk[1].energy_pj(), disk[3].energy_pj());
            }
            for (mode, layout, t, m) in pairs {
                let g = gains(t, m);
                if mode == "disk" {
                    disk_gains.push(g);
                } else {
                    memory_gains.push(g);
                }
                improvements.row(vec![
                    size_cell(k),
                    mode.into(),
                    layout.into(),
                    g.0.into(),
                    g.1.into(),
                    g.2.into(),
                    if mode == "main memory" { Cell::from(thesis_gains.as_str()) } else { Cell::Missing },
                ]);
            }
            for (mode, totals) in [("disk", &disk[..2]), ("main memory", &memory[..])] {
                for (t, algorithm) in totals.iter().zip([Algorithm::CachePartitioning, Algorithm::VirtualPartitioning])
                {
                    fig511.row(
                        [
                            vec![size_cell(k), mode.into(), variant_name(Layout::Row, algorithm).into()],
                            counter_cells(t),
                        ]
                        .concat(),
                    );
                }
            }
        }
        let (pools, pool_ratios) = pool_sweep(&base, &POOL_FRACTIONS, &single);
        // PCM as main memory: the 1.0X database against a last level 4× smaller, which puts
        // it at 4.0X's ratio of database to cache.
        let [t, m] = [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning]
            .map(|a| single(SingleSpec::main_memory(1, a, Pool::of(pool_bytes), true)));
        let small_l3_gains = gains(&t, &m);
        let mut fit = Table::new(
            "PCM as main memory, row store: the modified join's gains over traditional by database ÷ last-level cache",
            &[
                "database",
                "last level, KB",
                "database ÷ last level",
                "lifetime gain, %",
                "energy saved, %",
                "latency saved, %",
            ],
        );
        let last = factors.len() - 1;
        let mut fit_ratios = Vec::new();
        for (k, m, g) in [
            (1, &machine, memory_gains[0]),
            (1, &small_l3, small_l3_gains),
            (factors[last], &machine, memory_gains[last]),
        ] {
            let database = databases[usize::try_from(k - 1).expect("a size factor")].bytes();
            fit_ratios.push(database as f64 / m.cache_bytes() as f64);
            fit.row(vec![
                size_cell(k),
                (m.cache_bytes() >> 10).into(),
                (database as f64 / m.cache_bytes() as f64).into(),
                g.0.into(),
                g.1.into(),
                g.2.into(),
            ]);
        }
        // PCM as disk, column store, traditional join: energy by size with partitions sized to
        // the pool (as everywhere) and to half of it.
        let mut column_partitions = Table::new(
            format!(
                "PCM as disk, column store, traditional join: PCM energy (µJ) by database size, partitions sized to \
                 the {} KB pool and to half of it",
                pool_bytes >> 10
            ),
            &["size", "partitions sized to the pool", "partitions sized to half the pool"],
        );
        let half = Pool { partition_bytes: pool_bytes / 2, ..Pool::of(pool_bytes) };
        let mut column_half_energy = Vec::new();
        for (&k, &energy) in factors.iter().zip(&column_traditional_energy) {
            let t = single(SingleSpec::disk(k, Layout::Column, Algorithm::CachePartitioning, half));
            column_half_energy.push(t.energy_pj());
            column_partitions.row(vec![
                size_cell(k),
                (energy as f64 / 1e6).into(),
                (t.energy_pj() as f64 / 1e6).into(),
            ]);
        }
        // PCM as disk, modified joins at 1.0X: the column store reading every attribute of a
        // result, as the row store does.
        let all_columns = Pool { result_columns: ResultColumns::All, ..Pool::of(pool_bytes) };
        let column_all_energy =
            single(SingleSpec::disk(1, Layout::Column, Algorithm::VirtualPartitioning, all_columns)).energy_pj();
        let mut result_columns = Table::new(
            format!(
                "PCM as disk at 1.0X ({} KB pool), modified joins: PCM energy by what a result reads",
                pool_bytes >> 10
            ),
            &["variant", "result reads", "PCM energy, µJ", "over the row store"],
        );
        let (row_energy, column_energy) = modified_energy_1x;
        for (variant, reads, energy) in [
            ("R-S modified", "whole records", row_energy),
            ("C-S modified", "the attributes the query uses", column_energy),
            ("C-S modified", "every attribute", column_all_energy),
        ] {
            result_columns.row(vec![
                variant.into(),
                reads.into(),
                (energy as f64 / 1e6).into(),
                ratio_cell(energy, row_energy),
            ]);
        }
        let records = record_size_sweep(ctx, &machine).map_err(failed)?;
        bar.inc(1);
        let loaded = multi_user(ctx, &|| bar.inc(1)).map_err(failed)?;
        bar.finish_and_clear();
        let best_gains = records.best_gains;
        let [lifetime_why, energy_why, latency_why] = records.gain_notes();
        for ((layout, algorithm), points) in variants.iter().zip(series) {
            plot.series(variant_name(*layout, *algorithm), points);
        }
        let mut outcome = Outcome {
            summary: format!(
                "The thesis's four hash joins (traditional = CIDR cache partitioning, copying records (row store) or \
                 (key, tuple ID) pairs of the join column (column store); modified = per-partition lists of 4 B tuple \
                 IDs) run the three SSB queries at 1.0X–4.0X, once and under the multi-user load. With PCM as main \
                 memory, by the record size of the query output (Figure 5.11's axis, synthetic relations), the \
                 modified join's best gains over traditional are {:.0}% lifetime, {:.0}% energy and {:.0}% latency \
                 (thesis: up to {}, {} and about {}); by database size on SSB, see the first table. With PCM as a \
                 disk behind a DRAM pool of 4 KB pages, the modified join still cuts wear (lifetime +{:.0}% row \
                 store, +{:.0}% column store at 1.0X) but costs {:.1}× and {:.1}× the PCM energy and {:.1}× and \
                 {:.1}× the latency of the traditional join with a pool of 1/16 of the 1.0X database (the pool sweep: \
                 with half the database it costs less): reading records in place by tuple ID faults a whole \
                 page per record once the relation outgrows the pool. The thesis assumes random reads cost what \
                 sequential ones do, which holds at line granularity (PCM as main memory) but not for page copies. \
                 Figure 5.9's observations in the single runs, at every size: the traditional row store wears \
                 PCM more than the traditional column store: {}; the two modified joins' wear ratio (column ÷ row) \
                 furthest from 1 is {:.2}; the modified column store uses more energy than the modified row \
                 store: {}; the column store has the lower latency: {}.",
                best_gains.0,
                best_gains.1,
                best_gains.2,
                paper("thesis-hashjoin-mm-lifetime"),
                paper("thesis-hashjoin-mm-energy"),
                paper("thesis-hashjoin-mm-latency"),
                disk_gains[0].0,
                disk_gains[1].0,
                1.0 - disk_gains[0].1 / 100.0,
                1.0 - disk_gains[1].1 / 100.0,
                1.0 - disk_gains[0].2 / 100.0,
                1.0 - disk_gains[1].2 / 100.0,
                if row_trad_wears_more { "yes" } else { "no" },
                modified_wear_ratio,
                if column_modified_energy_more { "yes" } else { "no" },
                if column_faster { "yes" } else { "no" },
            ),
            config: json!({"base_scale_factor": base_sf, "size_factors": factors, "pool_bytes": pool_bytes,
                           "page_bytes": PAGE_BYTES, "machine": machine, "id_encoding": "plain32",
                           "seed": ctx.seed, "result_rows_q1_q2_q3_by_size": result_rows,
                           "record_size_sweep": {"record_bytes": RECORD_BYTES, "r_bytes": records.r_bytes},
                           "multi_user": loaded.config}),
            tables: [
                vec![improvements, fig59, fig511, records.table],
                loaded.tables,
                vec![pools, fit, column_partitions, result_columns],
            ]
            .concat(),
            plots: [vec![plot, records.plot], loaded.plots].concat(),
            notes: vec![
                "Figure 5.11's axis is the record size of the query output. SSB's records have fixed sizes, so the \
                 sweep joins synthetic row-store relations (CIDR Section 4.3's generator, one S record per R \
                 record, R and S records of 20–100 B): a result is an R record and an S record, 40–200 B. The \
                 Figure 5.11 claims are measured on this sweep; the SSB runs by database size stay beside it."
                    .into(),
                "PCM as disk: pages of 4 KB are copied from PCM into a DRAM pool (1/16 of the 1.0X database, fixed \
                 as the database grows) and written back when dirty pages are evicted; partitions are sized to the \
                 pool. PCM as main memory: the CIDR cache hierarchy of this scale, partitions sized to its last level."
                    .into(),
                pool_note(&pool_ratios, base.bytes() as f64 / base_sf),
                fit_note(&memory_gains, small_l3_gains, &fit_ratios),
                column_partitions_note(&column_traditional_energy, &column_half_energy),
                result_columns_note(modified_energy_1x, column_all_energy),
                "Each query is one hash join per dimension (dimension = build side, LINEORDER = probe side); the \
                 dimension predicates and Q3's `qty > 500` are applied by the upper operator to the join results. \
                 SSB quantities are 1–50, so Q3 returns no rows, as the thesis's predicate reads. A column-store \
                 join result reads only the attributes the query uses; a row-store result reads whole records."
                    .into(),
                "PCM energy and latency are the CIDR formulas over PCM counters, 8·64·(N_l + N_lw)·E_rb + bits·E_wb \
                 and N_l·T_l + N_w·T_w (for PCM as disk, page transfers count 64 lines each). The thesis columns are \
                 its Section 4.1.1 formulas, 8(N_w·E_wb + N_r·E_rb) and 8(N_w·T_w + N_r·T_r), over words written \
                 N_w and words read N_r (8 per line read), with T_r = 230 cycles: they charge every word, not every \
                 modified bit, and a read word as much as a read line."
                    .into(),
            ],
            ..Default::default()
        };
        outcome.notes.extend(loaded.notes);
        papers::measure_explained(&mut outcome, "thesis-hashjoin-mm-lifetime", best_gains.0, &lifetime_why);
        papers::measure_explained(&mut outcome, "thesis-hashjoin-mm-energy", best_gains.1, &energy_why);
        papers::measure_explained(&mut outcome, "thesis-hashjoin-mm-latency", best_gains.2, &latency_why);
        papers::holds_explained(
            &mut outcome,
            "thesis-hashjoin-mm-trades-reads",
            records.trades_reads,
            &trades_reads_explanation(&records.fetches),
        );
        outcome.holds("thesis-hashjoin-row-traditional-wear", row_trad_wears_more);
        outcome.measure("thesis-hashjoin-modified-wear-same", modified_wear_ratio);
        let (row_energy, _) = modified_energy_1x;
        papers::holds_explained(
            &mut outcome,
            "thesis-hashjoin-column-modified-energy",
            column_modified_energy_more,
            &format!(
                "Our column-store results read only the attributes a query uses; reading every attribute, the column \
                 store's modified join uses {:.1}× the row store's energy at 1.0X (notes).",
                column_all_energy as f64 / row_energy as f64
            ),
        );
        outcome.holds("thesis-hashjoin-column-latency", column_faster);
        let half = POOL_FRACTIONS.iter().position(|&f| f == HALF).expect("the sweep has a half pool");
        outcome.holds("thesis-hashjoin-disk-modified-cheaper", pool_ratios[half].iter().all(|&r| r < 1.0));
        outcome.holds("thesis-hashjoin-users-wear", loaded.modified_better[0]);
        let pool_explains = if loaded.half_pool_cheaper {
            "With a DRAM pool of half the database instead of 1/16, the modified join uses less energy than the \
             traditional one for both stores at the fewest and the most users (table \"Figure 5.10 by DRAM pool\")."
        } else {
            ""
        };
        papers::holds_explained(&mut outcome, "thesis-hashjoin-users-energy", loaded.modified_better[1], pool_explains);
        outcome.holds("thesis-hashjoin-users-latency", loaded.modified_better[2]);
        papers::holds_explained(
            &mut outcome,
            "thesis-hashjoin-users-column",
            loaded.column_better,
            &loaded.column_note,
        );
        Ok(outcome)
    }
}

/// The multi-user load (Figures 5.9–5.11 as the thesis ran them): users per scale. Quick
/// scale runs a tenth of the thesis's users on a smaller database (see [`LoadSetup`]).
fn figure_510_users(scale: Scale) -> [u32; 5] {
    scale.pick([2, 5, 10, 15, 20], [20, 50, 100, 150, 200])
}

/// The users behind Figures 5.9 and 5.11 (the thesis's 100; a tenth at quick scale).
fn load_users(scale: Scale) -> u32 {
    scale.pick(10, 100)
}

/// Inserts per user, and as many updates and deletes (the thesis: "multiple"; ours).
const DML_PER_USER: u32 = 2;

/// A database size's cell: the report's `2.0X`, the scale factor's multiple as data
/// (`x`, so Python's column is `size_x`).
fn size_cell(k: impl Into<Cell> + std::fmt::Display) -> Cell {
    let text = format!("{k}.0X");
    Cell::typed(text, [("x", k.into())])
}

/// Scale factor of the 1.0X database of the multi-user runs: every user runs three queries,
/// so the database is 4× (quick) and 25× (paper) smaller than the single-run one.
fn load_base_sf(scale: Scale) -> f64 {
    scale.pick(0.0005, 0.002)
}

/// PRNG streams of the multi-user runs: schedule, DML draws, databases (+ size factor).
const LOAD_SCHEDULE_STREAM: u64 = 100;
const LOAD_DML_STREAM: u64 = 101;
const LOAD_DATABASE_STREAM: u64 = 110;

/// What every multi-user run shares.
struct LoadSetup {
    /// The databases at 1.0X–4.0X.
    databases: Vec<Ssb>,
    /// The DRAM pool (PCM as disk): 1/16 of the 1.0X database, at least 16 pages.
    pool: Pool,
    /// A pool of half the 1.0X database, for the isolating runs.
    half_pool: Pool,
    /// The machine of PCM as main memory: its last level about a third of the 1.0X database.
    machine: Machine,
    schedule_rng: nvmdb_lab::Rng,
    dml_rng: nvmdb_lab::Rng,
}

impl LoadSetup {
    fn new(ctx: &RunContext, factors: &[u64]) -> LoadSetup {
        let sf = load_base_sf(ctx.scale);
        let databases: Vec<Ssb> =
            factors.iter().map(|&k| Ssb::generate(sf * k as f64, &mut ctx.rng(LOAD_DATABASE_STREAM + k))).collect();
        let pool = Pool::of(pool_for(&databases[0], SIZE_SWEEP_POOL_FRACTION));
        let half_pool = Pool::of(pool_for(&databases[0], HALF));
        let machine = Machine::with_last_level_shrunk(&Machine::for_scale(Scale::Quick), ctx.scale.pick(8, 2));
        LoadSetup {
            databases,
            pool,
            half_pool,
            machine,
            schedule_rng: ctx.rng(LOAD_SCHEDULE_STREAM),
            dml_rng: ctx.rng(LOAD_DML_STREAM),
        }
    }
}

/// One multi-user run: a database size, where it lives, a join variant and the users.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LoadSpec {
    size_factor: u64,
    mode: Mode,
    layout: Layout,
    algorithm: Algorithm,
    users: u32,
    /// The DRAM pool (PCM as disk).
    pool: LoadPool,
}

/// The DRAM pool of a multi-user run with PCM as disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoadPool {
    /// Figure 5.10's: 1/16 of the 1.0X database, partitions sized to it.
    Figure510,
    /// Half the 1.0X database, partitions sized to it.
    Half,
    /// Figure 5.10's pool with partitions sized to half of it (an isolating run).
    PartitionsHalved,
    /// Twice Figure 5.10's pool, partitions sized to it (an isolating run).
    Doubled,
}

/// The hash joins of every query of every user, summed (result rows summed per query).
fn run_load_in<M: Memory>(
    mem: &mut M,
    setup: &LoadSetup,
    spec: &LoadSpec,
    options: &JoinOptions,
    mut dram_bytes: impl FnMut(&M) -> u64,
) -> Result<Totals, String> {
    let load = UserLoad { users: spec.users, dml_per_user: DML_PER_USER };
    let mut ssb = setup.databases[usize::try_from(spec.size_factor - 1).expect("a size factor")].clone();
    let mut stored = StoredSsb::load_with_spare(mem, &ssb, spec.layout, load.inserts()).map_err(|e| e.to_string())?;
    let mut dml_rng = setup.dml_rng.clone();
    let mut totals = Totals::default();
    for step in load.schedule(&mut setup.schedule_rng.clone()) {
        match step.transaction {
            Transaction::Query(query) => {
                let mut dram = 0;
                let run = run_query(mem, &ssb, &stored, query, options, ResultColumns::Used, |m| {
                    dram += dram_bytes(m);
                })
                .map_err(|e| e.to_string())?;
                for (_, report) in &run.joins {
                    totals.add(&report.pcm);
                }
                totals.dram_bytes += dram;
                let q = Query::ALL.iter().position(|&x| x == query).expect("one of the three");
                totals.result_rows[q] += run.result_rows;
            }
            t => users::apply(mem, &mut ssb, &mut stored, t, &mut dml_rng),
        }
    }
    Ok(totals)
}

fn run_load(setup: &LoadSetup, spec: &LoadSpec) -> Result<Totals, String> {
    let pool = match spec.pool {
        LoadPool::Figure510 => setup.pool,
        LoadPool::Half => setup.half_pool,
        LoadPool::PartitionsHalved => Pool { partition_bytes: setup.pool.bytes / 2, ..setup.pool },
        LoadPool::Doubled => Pool::of(setup.pool.bytes * 2),
    };
    let pcm = device()?;
    let cache_bytes = match spec.mode {
        Mode::Disk => pool.partition_bytes,
        Mode::MainMemory => setup.machine.cache_bytes(),
    };
    let options =
        JoinOptions { algorithm: spec.algorithm, cache_bytes, id_encoding: IdEncoding::Plain32, collect_pairs: true };
    match spec.mode {
        Mode::Disk => {
            let mut mem = BufferedMemory::new(pcm, pool.bytes);
            run_load_in(&mut mem, setup, spec, &options, |m| {
                let s = m.dram_stats();
                s.bytes_read + s.bytes_written
            })
        }
        Mode::MainMemory => {
            let mut mem = CachedMemory::new(pcm, setup.machine.cache.clone());
            run_load_in(&mut mem, setup, spec, &options, |_| 0)
        }
    }
}

/// Runs `specs` as parts on the context's pool (each run has its own memory and a clone
/// of its database, so none depends on another); results come back in the order of
/// `specs`, and on a failure the first failed run's error in that order.
fn run_loads(
    ctx: &RunContext,
    setup: &LoadSetup,
    specs: &[LoadSpec],
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<Totals>, String> {
    // A run's own memory beyond the experiment's footprint: its database clone, DRAM pool
    // and simulated devices, a few MiB at quick scale (SF 0.0005) and at most tens of MiB
    // at paper scale (SF 0.002); a generous bound, so that it never starves the budget.
    run_parts(ctx, specs, ctx.scale.pick(32u64, 256) << 20, tick, |spec| run_load(setup, spec))
}

/// Runs `specs` as parts on the context's pool, each stated at `part_bytes`, calling
/// `tick` after each; results in the order of `specs`, and on a failure the first failed
/// run's message in that order.
fn run_parts<S: Sync, T: Send>(
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

/// Runs `specs` (without the users) as parts on the context's pool, each on its own
/// memory; results in the order of `specs`, and on a failure the first failed run's error
/// in that order. `machines` are the machine and the one with its last level shrunk.
fn run_singles(
    ctx: &RunContext,
    databases: &[Ssb],
    (machine, small_l3): (&Machine, &Machine),
    specs: &[SingleSpec],
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<Totals>, String> {
    // A group's own memory beyond the experiment's footprint: its simulated devices, DRAM
    // pool or cache image, relations and join pairs, and a second copy of the loaded state
    // while a run works on one: at most tens of MiB at quick scale, and at paper scale twice
    // the 768 MiB a run loading by itself was given (a few hundred MiB for the 4.0X
    // database, SF 0.2: 1.2 M order lines, which the experiment's measured 1 GiB with these
    // runs one at a time bounds).
    let groups = load_groups(specs);
    let totals = run_parts(ctx, &groups, ctx.scale.pick(64u64, 1_536) << 20, &|| {}, |group| {
        let runs: Vec<SingleSpec> = group.iter().map(|&i| specs[i]).collect();
        let ssb = &databases[usize::try_from(runs[0].size_factor - 1).expect("a size factor")];
        let machine = if runs[0].small_l3 { small_l3 } else { machine };
        let totals = measure(ssb, &runs, machine)?;
        group.iter().for_each(|_| tick());
        Ok(totals)
    })?;
    let mut out = vec![Totals::default(); specs.len()];
    for (group, totals) in groups.iter().zip(totals) {
        for (&i, t) in group.iter().zip(totals) {
            out[i] = t;
        }
    }
    Ok(out)
}

/// The four variants, in the thesis's order.
const VARIANTS: [(Layout, Algorithm); 4] = [
    (Layout::Row, Algorithm::CachePartitioning),
    (Layout::Row, Algorithm::VirtualPartitioning),
    (Layout::Column, Algorithm::CachePartitioning),
    (Layout::Column, Algorithm::VirtualPartitioning),
];

/// The counters of a run as table cells: bits written, N_r, N_w, CIDR and thesis energy
/// (µJ), CIDR and thesis latency (Mcycles).
fn counter_cells(t: &Totals) -> Vec<Cell> {
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
const COUNTER_COLUMNS: [&str; 7] = [
    "bits written",
    "N_r, words read",
    "N_w, words written",
    "PCM energy, µJ",
    "thesis energy, µJ",
    "PCM latency, Mcycles",
    "thesis latency, Mcycles",
];

/// Wear, energy and latency of a run.
fn metrics(t: &Totals) -> [u64; 3] {
    [t.pcm.bits_written, t.energy_pj(), t.latency_cycles()]
}

/// What the multi-user runs measured.
struct LoadResults {
    tables: Vec<Table>,
    plots: Vec<Plot>,
    /// Figure 5.10, per metric (wear, energy, latency): modified below traditional at every
    /// user count, for both stores.
    modified_better: [bool; 3],
    /// Figure 5.10: the column store below the row store in every metric, for both joins,
    /// at every user count.
    column_better: bool,
    /// The isolating runs: with a pool of half the database, modified below traditional in
    /// every metric for both stores at the fewest and the most users.
    half_pool_cheaper: bool,
    /// What the isolating runs of the traditional joins by pool and partition size show.
    column_note: String,
    notes: Vec<String>,
    config: serde_json::Value,
}

/// What the isolating runs of the column store's traditional join under the load found.
struct ColumnIsolation {
    table: Table,
    /// Per set-up, in the table's order: its name, C-S ÷ R-S traditional energy and
    /// latency, and the words read (N_r) by R-S and by C-S traditional.
    ratios: Vec<(String, f64, f64, u64, u64)>,
}

/// Figure 5.10's fewest users at 1.0X, traditional joins of both stores, with one thing
/// varied from Figure 5.10's set-up: the partitions sized to half the pool (pool kept), or
/// the pool (and the partitions) doubled; `find` gives a run of [`load_specs`].
fn column_isolation<'a>(setup: &LoadSetup, users: u32, find: &impl Fn(LoadSpec) -> &'a Totals) -> ColumnIsolation {
    let pool = setup.pool;
    let setups = [
        (format!("{} KB pool, partitions sized to it (Figure 5.10)", pool.bytes >> 10), LoadPool::Figure510),
        (format!("{} KB pool, partitions sized to half of it", pool.bytes >> 10), LoadPool::PartitionsHalved),
        (format!("{} KB pool, partitions sized to it", pool.bytes >> 9), LoadPool::Doubled),
    ];
    let mut table = Table::new(
        format!("Figure 5.10 isolated: traditional joins at U{users}, PCM as disk at 1.0X, by pool and partition size"),
        &[&["set-up", "variant"][..], &COUNTER_COLUMNS, &["C-S ÷ R-S energy", "C-S ÷ R-S latency"]].concat(),
    );
    let mut ratios = Vec::new();
    for (name, pool) in setups {
        let [row, column] = [Layout::Row, Layout::Column].map(|layout| {
            let spec = LoadSpec {
                size_factor: 1,
                mode: Mode::Disk,
                layout,
                algorithm: Algorithm::CachePartitioning,
                users,
                pool,
            };
            find(spec)
        });
        let energy = column.energy_pj() as f64 / row.energy_pj() as f64;
        let latency = column.latency_cycles() as f64 / row.latency_cycles() as f64;
        for (t, layout, r) in [(row, Layout::Row, None), (column, Layout::Column, Some((energy, latency)))] {
            let mut cells: Vec<Cell> =
                vec![name.clone().into(), variant_name(layout, Algorithm::CachePartitioning).into()];
            cells.extend(counter_cells(t));
            match r {
                Some((e, l)) => cells.extend([e.into(), l.into()]),
                None => cells.extend([Cell::Missing, Cell::Missing]),
            }
            table.row(cells);
        }
        ratios.push((name, energy, latency, row.words_read(), column.words_read()));
    }
    ColumnIsolation { table, ratios }
}

/// The explanation of the column store's traditional join costing more than the row
/// store's under the load, from the isolating runs.
fn column_isolation_note(isolation: &ColumnIsolation, users: u32) -> String {
    let (base, rest) = isolation.ratios.split_first().expect("three set-ups");
    let cheaper_elsewhere = rest.iter().all(|&(_, e, l, _, _)| e < 1.0 && l < 1.0);
    format!(
        "Isolating runs (table \"Figure 5.10 isolated\", U{users}, 1.0X): the column store's traditional join costs \
         {:.2}× the row store's energy and {:.2}× its latency with {} (N_r {} words, row store {}); {}. {}",
        base.1,
        base.2,
        base.0,
        base.4,
        base.3,
        rest.iter()
            .map(|(name, e, l, r, c)| format!("{e:.2}× and {l:.2}× with {name} (N_r {c}, row store {r})"))
            .collect::<Vec<_>>()
            .join(", "),
        if cheaper_elsewhere {
            "Either change alone makes the column store the cheaper one in energy and latency: the ordering comes \
             from sizing the column store's partitions to the whole pool, which it pays for in words read."
        } else {
            ""
        }
    )
}

/// The database sizes of the multi-user runs.
const LOAD_FACTORS: [u64; 4] = [1, 2, 3, 4];

/// Every multi-user run: Figure 5.10's users at 1.0X (PCM as disk, four variants), then
/// Figure 5.9's other sizes and Figure 5.11's sizes under the load.
fn load_specs(scale: Scale) -> Vec<LoadSpec> {
    let load = load_users(scale);
    let mut specs = Vec::new();
    // The four variants with PCM as disk.
    let disk = |specs: &mut Vec<LoadSpec>, size_factor, users, pool| {
        for (layout, algorithm) in VARIANTS {
            specs.push(LoadSpec { size_factor, mode: Mode::Disk, layout, algorithm, users, pool });
        }
    };
    for &u in &figure_510_users(scale) {
        disk(&mut specs, 1, u, LoadPool::Figure510);
    }
    for &k in &LOAD_FACTORS[1..] {
        disk(&mut specs, k, load, LoadPool::Figure510);
    }
    for &k in &LOAD_FACTORS {
        for algorithm in [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning] {
            specs.push(LoadSpec {
                size_factor: k,
                mode: Mode::MainMemory,
                layout: Layout::Row,
                algorithm,
                users: load,
                pool: LoadPool::Figure510,
            });
        }
    }
    // Isolating runs: Figure 5.10's fewest and most users with a pool of half the database.
    let users = figure_510_users(scale);
    for u in [users[0], users[users.len() - 1]] {
        disk(&mut specs, 1, u, LoadPool::Half);
    }
    // Isolating runs: the fewest users, traditional joins, partitions sized to half the
    // pool, or the pool doubled (see [`column_isolation`]).
    for pool in [LoadPool::PartitionsHalved, LoadPool::Doubled] {
        for layout in [Layout::Row, Layout::Column] {
            specs.push(LoadSpec {
                size_factor: 1,
                mode: Mode::Disk,
                layout,
                algorithm: Algorithm::CachePartitioning,
                users: users[0],
                pool,
            });
        }
    }
    specs
}

/// Figure 5.10 (users), and Figures 5.9 and 5.11 under the multi-user load; `tick` after
/// each of the [`load_specs`] runs.
fn multi_user(ctx: &RunContext, tick: &(dyn Fn() + Sync)) -> Result<LoadResults, String> {
    let factors = LOAD_FACTORS;
    let setup = LoadSetup::new(ctx, &factors);
    let users = figure_510_users(ctx.scale);
    let load = load_users(ctx.scale);
    let specs = load_specs(ctx.scale);
    let totals = run_loads(ctx, &setup, &specs, tick)?;
    let find = |spec: LoadSpec| {
        let i = specs.iter().position(|s| *s == spec).expect("every spec was run");
        &totals[i]
    };
    let disk = |k: u64, (layout, algorithm): (Layout, Algorithm), users: u32| {
        find(LoadSpec { size_factor: k, mode: Mode::Disk, layout, algorithm, users, pool: LoadPool::Figure510 })
    };
    // Every variant of a load sees the same transactions, so the same results.
    for spec in &specs {
        let same = LoadSpec { layout: Layout::Row, algorithm: Algorithm::CachePartitioning, ..*spec };
        let reference = if spec.mode == Mode::Disk { find(same) } else { find(LoadSpec { mode: Mode::Disk, ..same }) };
        if find(*spec).result_rows != reference.result_rows {
            return Err(format!("query results differ between variants: {spec:?}"));
        }
    }
    let max_users = users[users.len() - 1];
    let reference = metrics(disk(1, VARIANTS[0], max_users));
    let mut fig510 = Table::new(
        format!(
            "Figure 5.10: PCM as disk at 1.0X ({} KB pool), by users; wear, energy and latency ÷ R-S traditional at \
             U{max_users}",
            setup.pool.bytes >> 10
        ),
        &[&["users", "variant"][..], &COUNTER_COLUMNS, &["wear ÷ ref", "energy ÷ ref", "latency ÷ ref"]].concat(),
    );
    let metric_names = ["wear (bits written)", "PCM energy", "PCM latency"];
    let mut plots: Vec<Plot> = metric_names
        .iter()
        .map(|m| {
            Plot::new(
                format!("Figure 5.10: {m} ÷ R-S traditional at U{max_users}, PCM as disk at 1.0X"),
                "users",
                format!("{m}, relative"),
            )
        })
        .collect();
    let mut series = vec![vec![Vec::new(); VARIANTS.len()]; 3];
    let (mut modified_better, mut column_better) = ([true; 3], true);
    for &u in &users {
        for (v, &variant) in VARIANTS.iter().enumerate() {
            let t = disk(1, variant, u);
            let m = metrics(t);
            let mut row: Vec<Cell> = vec![u.into(), variant_name(variant.0, variant.1).into()];
            row.extend(counter_cells(t));
            for (i, (&x, &r)) in m.iter().zip(&reference).enumerate() {
                let relative = x as f64 / r.max(1) as f64;
                row.push(relative.into());
                series[i][v].push((f64::from(u), relative));
            }
            fig510.row(row);
        }
        let [rt, rm, ct, cm] = VARIANTS.map(|v| metrics(disk(1, v, u)));
        for i in 0..3 {
            modified_better[i] &= rm[i] < rt[i] && cm[i] < ct[i];
            column_better &= ct[i] < rt[i] && cm[i] < rm[i];
        }
    }
    for (plot, series) in plots.iter_mut().zip(series) {
        for ((layout, algorithm), points) in VARIANTS.iter().zip(series) {
            plot.series(variant_name(*layout, *algorithm), points);
        }
    }
    let mut fig59 = Table::new(
        format!(
            "Figure 5.9 under the {load}-user load: PCM as disk ({} KB pool), by database size (1.0X = SSB SF {})",
            setup.pool.bytes >> 10,
            load_base_sf(ctx.scale)
        ),
        &[&["size", "variant"][..], &COUNTER_COLUMNS, &["DRAM traffic, MB"]].concat(),
    );
    let mut observations = [true; 4];
    for &k in &factors {
        for variant in VARIANTS {
            let t = disk(k, variant, load);
            let mut row: Vec<Cell> = vec![size_cell(k), variant_name(variant.0, variant.1).into()];
            row.extend(counter_cells(t));
            row.push((t.dram_bytes as f64 / 1e6).into());
            fig59.row(row);
        }
        let [rt, rm, ct, cm] = VARIANTS.map(|v| disk(k, v, load));
        observations[0] &= ct.pcm.bits_written < rt.pcm.bits_written;
        observations[1] &= (cm.pcm.bits_written as f64 / rm.pcm.bits_written.max(1) as f64 - 1.0).abs() <= 0.2;
        observations[2] &= cm.energy_pj() > rm.energy_pj();
        observations[3] &= ct.latency_cycles() < rt.latency_cycles() && cm.latency_cycles() < rm.latency_cycles();
    }
    let mut fig511 = Table::new(
        format!(
            "Figure 5.11 under the {load}-user load: row store, PCM as main memory ({} KB last level), by database \
             size",
            setup.machine.cache_bytes() >> 10
        ),
        &[&["size", "variant"][..], &COUNTER_COLUMNS, &["lifetime gain, %", "energy saved, %", "latency saved, %"]]
            .concat(),
    );
    for &k in &factors {
        let [t, m] = [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning].map(|algorithm| {
            find(LoadSpec {
                size_factor: k,
                mode: Mode::MainMemory,
                layout: Layout::Row,
                algorithm,
                users: load,
                pool: LoadPool::Figure510,
            })
        });
        let g = gains(t, m);
        for (totals, algorithm, g) in
            [(t, Algorithm::CachePartitioning, None), (m, Algorithm::VirtualPartitioning, Some(g))]
        {
            let mut row: Vec<Cell> = vec![size_cell(k), variant_name(Layout::Row, algorithm).into()];
            row.extend(counter_cells(totals));
            match g {
                Some(g) => row.extend([g.0.into(), g.1.into(), g.2.into()]),
                None => row.extend([Cell::Missing, Cell::Missing, Cell::Missing]),
            }
            fig511.row(row);
        }
    }
    let (few, many) = (users[0], max_users);
    let mut pools = Table::new(
        format!(
            "Figure 5.10 by DRAM pool, PCM as disk at 1.0X: the modified join's wear, energy and latency over the \
             traditional one's at U{few} and U{many} (above 1: modified costs more)"
        ),
        &[&["users"][..], &POOL_RATIO_COLUMNS].concat(),
    );
    let mut half_pool_cheaper = true;
    for u in [few, many] {
        for pool in [LoadPool::Figure510, LoadPool::Half] {
            let [rt, rm, ct, cm] = VARIANTS.map(|(layout, algorithm)| {
                metrics(find(LoadSpec { size_factor: 1, mode: Mode::Disk, layout, algorithm, users: u, pool }))
            });
            let half_pool = pool == LoadPool::Half;
            let ratios: Vec<f64> = (0..3)
                .map(|i| (rm[i], rt[i]))
                .chain((0..3).map(|i| (cm[i], ct[i])))
                .map(|(m, t)| super::ratio(m, t).unwrap_or(f64::NAN))
                .collect();
            if half_pool {
                half_pool_cheaper &= ratios.iter().all(|&r| r < 1.0);
            }
            let bytes = if half_pool { setup.half_pool.bytes } else { setup.pool.bytes };
            let mut row: Vec<Cell> = vec![u.into(), (bytes >> 10).into()];
            row.extend(ratios.into_iter().map(Cell::from));
            pools.row(row);
        }
    }
    let yes = |b: bool| if b { "yes" } else { "no" };
    let notes = vec![
        format!(
            "Multi-user load (Figures 5.9–5.11): each user runs the three queries once and {DML_PER_USER} inserts, \
             {DML_PER_USER} updates and {DML_PER_USER} deletes on LINEORDER, each arriving at a random time from the \
             run's seed; transactions run one at a time in arrival order (a query's shared lock holds an update \
             back; two users' queries are not interleaved join by join). The thesis states neither the mix nor \
             its timing: these are ours. {} Costs are those of the hash joins alone (the transactions' own writes \
             reach PCM before the next join's counters start), summed over every user's queries. The database of \
             these runs is SSB SF {} at 1.0X ({} KB) with a {} KB DRAM pool (PCM as disk) and a {} KB last level \
             (PCM as main memory): the 1.0X database is {:.1}× the pool and {:.1}× the last level.",
            ctx.scale.pick(
                "Quick scale runs a tenth of the thesis's users (2–20, and 10 for Figures 5.9 and 5.11) on a \
                 database 4× smaller than the single run's.",
                "Paper scale runs the thesis's users (20–200, and 100 for Figures 5.9 and 5.11) on a database 25× \
                 smaller than the single run's."
            ),
            load_base_sf(ctx.scale),
            setup.databases[0].bytes() >> 10,
            setup.pool.bytes >> 10,
            setup.machine.cache_bytes() >> 10,
            setup.databases[0].bytes() as f64 / setup.pool.bytes as f64,
            setup.databases[0].bytes() as f64 / setup.machine.cache_bytes() as f64
        ),
        format!(
            "Figure 5.9's observations under the {load}-user load, at every size: the traditional row store wears \
             PCM more than the traditional column store: {}; the modified joins' wear (column ÷ row) within 20% of \
             1: {}; the modified column store uses more energy than the modified row store: {}; the column store \
             has the lower latency: {}.",
            yes(observations[0]),
            yes(observations[1]),
            yes(observations[2]),
            yes(observations[3])
        ),
        format!(
            "Figure 5.10 by DRAM pool (table \"Figure 5.10 by DRAM pool\"): with a pool of half the 1.0X database \
             ({} KB), the modified join costs less wear, energy and latency than the traditional one for both \
             stores at U{few} and U{many}: {}.",
            setup.half_pool.bytes >> 10,
            yes(half_pool_cheaper)
        ),
    ];
    let config = json!({"users": users, "load_users": load, "dml_per_user": DML_PER_USER,
                        "base_scale_factor": load_base_sf(ctx.scale), "pool_bytes": setup.pool.bytes,
                        "machine": setup.machine, "size_factors": factors});
    let isolation = column_isolation(&setup, users[0], &find);
    let column_note = column_isolation_note(&isolation, users[0]);
    Ok(LoadResults {
        tables: vec![fig510, pools, isolation.table, fig59, fig511],
        column_note,
        plots,
        modified_better,
        column_better,
        half_pool_cheaper,
        notes,
        config,
    })
}

/// Bytes per record of R and S in Figure 5.11's sweep; a join result is an R record and
/// an S record, so the query output records are twice these.
const RECORD_BYTES: [u64; 5] = [20, 40, 60, 80, 100];

/// PCM as main memory with its line fetches split by the access that missed: a fetch
/// during a store is the write-allocate fill of the line the store writes into, counted in
/// N_r like any other fetch; the rest are fetches of loads.
struct FetchSplit {
    mem: CachedMemory<Pcm>,
    /// Lines fetched by stores (write-allocate fills).
    store_fetches: u64,
}

impl FetchSplit {
    fn fetched(&self) -> u64 {
        use nvmdb_device::LineDevice;
        self.mem.device().line_stats().lines_read
    }
}

impl Memory for FetchSplit {
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        self.mem.read_bytes(addr, buf);
    }
    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        let before = self.fetched();
        self.mem.write_bytes(addr, data);
        self.store_fetches += self.fetched() - before;
    }
    fn load<T: nvmdb_memory::Scalar>(&mut self, addr: u64) -> T {
        self.mem.load(addr)
    }
    fn store<T: nvmdb_memory::Scalar>(&mut self, addr: u64, value: T) {
        let before = self.fetched();
        self.mem.store(addr, value);
        self.store_fetches += self.fetched() - before;
    }
    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, nvmdb_memory::MemoryError> {
        self.mem.alloc(size, align)
    }
    fn free(&mut self, addr: u64, size: u64) {
        self.mem.free(addr, size);
    }
    fn flush_all(&mut self) {
        self.mem.flush_all();
    }
    fn reset_stats(&mut self) {
        self.mem.reset_stats();
        self.store_fetches = 0;
    }
    fn report(&self) -> nvmdb_memory::MemoryReport {
        self.mem.report()
    }
    fn compute(&mut self, instructions: u64) {
        self.mem.compute(instructions);
    }
    fn begin_independent(&mut self) {
        self.mem.begin_independent();
    }
    fn end_independent(&mut self) {
        self.mem.end_independent();
    }
}

/// What Figure 5.11's sweep by output record size measured.
struct RecordSizeResults {
    table: Table,
    plot: Plot,
    /// Largest lifetime gain, energy and latency saved over the sizes, %.
    best_gains: (f64, f64, f64),
    /// Fewer bits written and more lines read by the modified join at every size.
    trades_reads: bool,
    /// Per size: lines the traditional join fetched on loads and on stores, then the
    /// modified join's.
    fetches: Vec<[u64; 4]>,
    /// Per size: the output record's bytes, then the traditional and the modified join's
    /// counters.
    by_size: Vec<(u64, Totals, Totals)>,
    r_bytes: u64,
}

impl RecordSizeResults {
    /// Why the best gains over the record sizes are what they are: the three notes of
    /// the lifetime, energy and latency claims, from the sweep's counters.
    fn gain_notes(&self) -> [String; 3] {
        let (first, last) = (&self.by_size[0], &self.by_size[self.by_size.len() - 1]);
        let million = |bits: u64| bits as f64 / 1e6;
        let saved = |f: fn(&Totals) -> u64, (_, t, m): &(u64, Totals, Totals)| gain(f(t), f(m));
        let span = |f: &dyn Fn(&(u64, Totals, Totals)) -> f64| {
            format!("{:.0}% at {} B to {:.0}% at {} B", f(first), first.0, f(last), last.0)
        };
        let lifetime = format!(
            "Per record the traditional join copies both records into its partitions and the modified join writes \
             a 4 B tuple ID: with R's bytes fixed, traditional writes {:.2} M bits at {} B and {:.2} M at {} B, \
             modified {:.2} M and {:.2} M (one ID per record, fewer records as they grow), so the lifetime gain grows \
             with the record size, {} (table \"Figure 5.11 by record size\"); the claim takes the largest.",
            million(first.1.pcm.bits_written),
            first.0,
            million(last.1.pcm.bits_written),
            last.0,
            million(first.2.pcm.bits_written),
            million(last.2.pcm.bits_written),
            span(&|(_, t, m)| gains(t, m).0),
        );
        let energy = format!(
            "Energy saved grows with the bytes the traditional join copies: {}; by the thesis's formula, which \
             charges every word written, {}.",
            span(&|(_, t, m)| gains(t, m).1),
            span(&|x| saved(Totals::thesis_energy_pj, x)),
        );
        let latency = format!(
            "Ours is N_l·T_l + N_w·T_w, which the traditional join's written words dominate: {}. The thesis's \
             formula charges each word read as a line (8 per line), so the modified join's extra reads by tuple ID \
             weigh 8× more: by it, {}.",
            span(&|(_, t, m)| gains(t, m).2),
            span(&|x| saved(Totals::thesis_latency_cycles, x)),
        );
        [lifetime, energy, latency]
    }
}

/// Figure 5.11 by the record size of the query output: PCM as main memory, row store,
/// synthetic relations (CIDR Section 4.3's generator: one S record per R record, R of half
/// this scale's CIDR R), traditional and modified joins with 4 B tuple IDs.
fn record_size_sweep(ctx: &RunContext, machine: &Machine) -> Result<RecordSizeResults, String> {
    use rand::SeedableRng;
    let r_bytes = machine.r_bytes / 2;
    let mut table = Table::new(
        format!(
            "Figure 5.11 by record size of the query output: row store, PCM as main memory ({} KB last level), \
             synthetic R of {} KB and S of as many records",
            machine.cache_bytes() >> 10,
            r_bytes >> 10
        ),
        &[
            &["output record, B", "variant"][..],
            &COUNTER_COLUMNS,
            &["lines fetched by loads", "lines fetched by stores"],
            &["lifetime gain, %", "energy saved, %", "latency saved, %"],
        ]
        .concat(),
    );
    let mut fetches = Vec::new();
    let mut by_size = Vec::new();
    let mut plot = Plot::new(
        "Figure 5.11: the modified join's gains over traditional, PCM as main memory",
        "record size of the query output, B",
        "%",
    );
    let mut series = vec![Vec::new(); 3];
    let mut best_gains = (f64::MIN, f64::MIN, f64::MIN);
    let mut trades_reads = true;
    for (i, &record_bytes) in RECORD_BYTES.iter().enumerate() {
        let spec = SynthSpec { r_bytes, record_bytes, match_per_r: 1, layout: Layout::Row };
        let seed = ctx.rng(RECORD_SIZE_STREAM + i as u64).next_u64();
        let [t, m] = [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning].map(|algorithm| {
            let pcm = device()?;
            let mut mem = FetchSplit { mem: CachedMemory::new(pcm, machine.cache.clone()), store_fetches: 0 };
            let (r, s) =
                generate(&mut mem, &spec, &mut nvmdb_lab::Rng::seed_from_u64(seed)).map_err(|e| e.to_string())?;
            let options = JoinOptions {
                algorithm,
                cache_bytes: machine.cache_bytes(),
                id_encoding: IdEncoding::Plain32,
                collect_pairs: false,
            };
            let (output, report) = measured_join(&mut mem, &r, &s, &options).map_err(|e| e.to_string())?;
            if output.matches != spec.s_rows() {
                return Err(format!("{} found {} matches of {}", algorithm.name(), output.matches, spec.s_rows()));
            }
            let mut totals = Totals::default();
            totals.add(&report.pcm);
            Ok((totals, mem.store_fetches))
        });
        let ((t, t_store), (m, m_store)) = (t?, m?);
        fetches.push([t.pcm.lines_read - t_store, t_store, m.pcm.lines_read - m_store, m_store]);
        let g = gains(&t, &m);
        best_gains = (best_gains.0.max(g.0), best_gains.1.max(g.1), best_gains.2.max(g.2));
        trades_reads &= m.pcm.bits_written < t.pcm.bits_written && m.pcm.lines_read > t.pcm.lines_read;
        let output_bytes = 2 * record_bytes;
        for (totals, store, algorithm, g) in
            [(&t, t_store, Algorithm::CachePartitioning, None), (&m, m_store, Algorithm::VirtualPartitioning, Some(g))]
        {
            let mut row: Vec<Cell> = vec![output_bytes.into(), variant_name(Layout::Row, algorithm).into()];
            row.extend(counter_cells(totals));
            row.extend([(totals.pcm.lines_read - store).into(), store.into()]);
            match g {
                Some(g) => row.extend([g.0.into(), g.1.into(), g.2.into()]),
                None => row.extend([Cell::Missing, Cell::Missing, Cell::Missing]),
            }
            table.row(row);
        }
        for (points, value) in series.iter_mut().zip([g.0, g.1, g.2]) {
            points.push((output_bytes as f64, value));
        }
        by_size.push((output_bytes, t, m));
    }
    for (name, points) in ["lifetime gain", "energy saved", "latency saved"].into_iter().zip(series) {
        plot.series(name, points);
    }
    Ok(RecordSizeResults { table, plot, best_gains, trades_reads, fetches, by_size, r_bytes })
}

/// What the split of N_r into fetches of loads and of stores (write-allocate fills) shows
/// about the modified join's reads, from `fetches` (per size: traditional loads, stores,
/// modified loads, stores).
fn trades_reads_explanation(fetches: &[[u64; 4]]) -> String {
    let cells = |f: fn(&[u64; 4]) -> String| fetches.iter().map(f).collect::<Vec<_>>().join(", ");
    let loads_more = fetches.iter().all(|f| f[2] > f[0]);
    format!(
        "N_r split by the access that missed (table \"Figure 5.11 by record size\", output records {} B): \
         traditional fetches {} lines on loads and {} on stores (write-allocate fills), modified {} and {}. \
         Counting fetches of loads only, the modified join reads more lines than traditional at every size: {}.",
        RECORD_BYTES.map(|b| (2 * b).to_string()).join(", "),
        cells(|f| f[0].to_string()),
        cells(|f| f[1].to_string()),
        cells(|f| f[2].to_string()),
        cells(|f| f[3].to_string()),
        if loads_more { "yes" } else { "no" },
    )
}

/// PRNG streams of Figure 5.11's sweep (+ the size's index).
const RECORD_SIZE_STREAM: u64 = 120;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetch_split_counts_a_stores_write_allocate_fill_and_not_a_loads_fetch() {
        let pcm = Pcm::new(PcmConfig::new(1 << 20)).expect("a device");
        let machine = Machine::for_scale(Scale::Quick);
        let mut mem = FetchSplit { mem: CachedMemory::new(pcm, machine.cache.clone()), store_fetches: 0 };
        let a = mem.alloc(4096, 64).expect("memory");
        mem.reset_stats();
        mem.store::<u64>(a, 1);
        assert_eq!((mem.fetched(), mem.store_fetches), (1, 1), "a store to an uncached line fetches it");
        let _ = mem.load::<u64>(a + 128);
        assert_eq!((mem.fetched(), mem.store_fetches), (2, 1), "a load's fetch is not a store's");
        mem.store::<u64>(a + 8, 2);
        mem.store::<u64>(a + 136, 3);
        assert_eq!((mem.fetched(), mem.store_fetches), (2, 1), "stores to cached lines fetch nothing");
        mem.reset_stats();
        assert_eq!((mem.fetched(), mem.store_fetches), (0, 0));
    }

    #[test]
    fn runs_without_users_are_listed_once_and_give_the_same_counters_on_any_number_of_threads() {
        let ctx = RunContext::new(Scale::Quick, 3);
        let base = Ssb::generate(0.0005, &mut ctx.rng(1));
        let pool_bytes = pool_for(&base, SIZE_SWEEP_POOL_FRACTION);
        let specs = single_specs(&base, &[1], pool_bytes);
        assert!(specs.iter().enumerate().all(|(i, s)| !specs[..i].contains(s)), "each run listed once");
        // The pool sweep's 1/16 pool is the size sweep's: its four runs are not repeated.
        let sweep_pool = SingleSpec::disk(1, Layout::Row, Algorithm::CachePartitioning, Pool::of(pool_bytes));
        assert_eq!(specs.iter().filter(|s| **s == sweep_pool).count(), 1);
        let machine = Machine::for_scale(Scale::Quick);
        let small_l3 = Machine::with_last_level_shrunk(&machine, 4);
        // A load shared by four runs (PCM as disk: both joins, partitions sized to half the
        // pool, every attribute read), one by two (PCM as main memory), and a run alone.
        let some: Vec<SingleSpec> = specs
            .iter()
            .copied()
            .filter(|s| (s.layout == Layout::Column && s.pool.bytes == pool_bytes) || s.small_l3)
            .chain([SingleSpec::disk(1, Layout::Row, Algorithm::VirtualPartitioning, Pool::of(pool_bytes))])
            .collect();
        let sizes: Vec<usize> = load_groups(&some).iter().map(Vec::len).collect();
        assert_eq!(sizes, [4, 2, 1]);
        let run = |jobs| {
            let ctx = RunContext::new(Scale::Quick, 3).with_jobs(jobs);
            run_singles(&ctx, std::slice::from_ref(&base), (&machine, &small_l3), &some, &|| {}).expect("runs")
        };
        let one = run(1);
        assert_eq!(one, run(3));
        // Each run from a copy of the shared load gives what it gives loading by itself.
        for (spec, totals) in some.iter().zip(&one) {
            let m = if spec.small_l3 { &small_l3 } else { &machine };
            let alone = measure(&base, &[*spec], m).expect("runs");
            assert_eq!(*totals, alone[0], "{spec:?}");
            assert!(totals.pcm.lines_read > 0);
        }
        // The runs sharing a load differ: each measured its own join.
        let shared: Vec<&Totals> = load_groups(&some)[0].iter().map(|&i| &one[i]).collect();
        assert!(shared.iter().enumerate().all(|(i, t)| !shared[..i].contains(t)));
    }

    #[test]
    fn multi_user_runs_give_the_same_counters_on_any_number_of_threads() {
        let ctx = RunContext::new(Scale::Quick, 3);
        let setup = LoadSetup::new(&ctx, &[1]);
        let specs: Vec<LoadSpec> = VARIANTS
            .iter()
            .map(|&(layout, algorithm)| LoadSpec {
                size_factor: 1,
                mode: Mode::Disk,
                layout,
                algorithm,
                users: 2,
                pool: LoadPool::Figure510,
            })
            .chain([LoadSpec {
                size_factor: 1,
                mode: Mode::MainMemory,
                layout: Layout::Row,
                algorithm: Algorithm::VirtualPartitioning,
                users: 2,
                pool: LoadPool::Figure510,
            }])
            .collect();
        let run = |jobs| {
            run_loads(&RunContext::new(Scale::Quick, 3).with_jobs(jobs), &setup, &specs, &|| {})
                .expect("the runs succeed")
        };
        let one = run(1);
        assert_eq!(one, run(3));
        // Every variant saw the same transactions: the same query results, and real work.
        assert!(one.iter().all(|t| t.result_rows == one[0].result_rows && t.pcm.bits_written > 0));
        // Two users run each query twice: twice the join work of one user.
        let single = run_loads(&ctx, &setup, &[LoadSpec { users: 1, ..specs[0] }], &|| {}).expect("runs");
        assert!(one[0].pcm.lines_read > single[0].pcm.lines_read * 3 / 2);
    }
}
