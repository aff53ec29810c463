//! Figures 5.5–5.7 (IPL, d-PRAM and the PCM log across buffer-pool sizes: merges,
//! erases, write time, energy, sequentiality of the writes reaching flash; `schemes`),
//! Figure 5.8 (deduplication and the PCM log combined against the baseline; `combined`),
//! the PCM capacity sweep (`capacity`) and the replacement policies (`replacement`). Every
//! run is measured in steady state ([`Warmup::SteadyState`]) and reports the delta-policy
//! band ([`Delta`]); the steady runs and the cells comparing a scheme with the baseline
//! are here.

mod capacity;
mod combined;
mod replacement;
mod schemes;

use nvmdb_flash::config::{DeltaKind, SsdConfig};
use nvmdb_flash::layer::StoreStats;
use nvmdb_lab::{Cell, Experiment, LabError, RunContext};
use nvmdb_workload::synth::SynthParams;

use super::mqsim;
use super::{failed, part_bytes, run_synth_with, scale_divisor, DeltaSource, Kind, RunResult, Warmup};
use capacity::PcmCapacity;
use combined::Combined;
use replacement::Replacement;
use schemes::BufferSchemes;

/// The buffer experiments.
pub fn all() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(BufferSchemes), Box::new(Combined), Box::new(PcmCapacity), Box::new(Replacement)]
}

/// Thesis Table 5.2's buffer-pool sizes, MB.
const POOLS_MB: [u64; 5] = [20, 40, 60, 80, 100];
/// The thesis's PCM size (Figure 5.8), MB.
pub(super) const PCM_MB: u64 = 16;
/// The PCM log region that the thesis's 128 KB F-block → P-block table implies, MB: a
/// row for each of the 1 GB database's 4,096 flash blocks (32 B a row), and so a P-block
/// of 32 KB for each, 4,096 × 32 KB.
const PCM_TABLE_MB: u64 = 128;

/// PCM bytes of `pcm_mb` (thesis scale) at the run's scale.
pub(super) fn pcm_bytes(ctx: &RunContext, pcm_mb: u64) -> u64 {
    (pcm_mb << 20) / scale_divisor(ctx.scale)
}

/// P-blocks the PCM log keeps in `pcm_bytes`: one P-block of a sector per page of a flash
/// block, plus its 16 B table row.
pub(super) fn pcm_log_pblocks(config: &SsdConfig, pcm_bytes: u64) -> u64 {
    pcm_bytes / (u64::from(config.flash.pages_per_block) * u64::from(config.buffer.log_sector_bytes) + 16)
}

/// What a log layer is told of an update's change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delta {
    /// The generator's changed byte ranges (the figures' runs and the claims).
    Generator,
    /// Not told: `buffer.delta = sampled`, one change of 50–150 B (the replay default).
    Sampled,
    /// Not told: `buffer.delta = full-page`, the whole page changed.
    FullPage,
}

impl Delta {
    /// The content-free band reported beside every figure.
    const BAND: [Delta; 2] = [Delta::Sampled, Delta::FullPage];

    fn name(self) -> &'static str {
        match self {
            Delta::Generator => "generator",
            Delta::Sampled => "sampled",
            Delta::FullPage => "full-page",
        }
    }
}

/// One steady-state run of `kind` with `delta`.
fn steady(
    kind: Kind,
    config: &SsdConfig,
    pcm_bytes: u64,
    params: SynthParams,
    filter: bool,
    delta: Delta,
) -> Result<RunResult, String> {
    steady_with(kind, config, pcm_bytes, params, filter, delta, Warmup::SteadyState)
}

/// [`steady`] reaching its window by `warmup`.
fn steady_with(
    kind: Kind,
    config: &SsdConfig,
    pcm_bytes: u64,
    params: SynthParams,
    filter: bool,
    delta: Delta,
    warmup: Warmup,
) -> Result<RunResult, String> {
    let mut config = config.clone();
    let source = match delta {
        Delta::Generator => DeltaSource::Exact,
        Delta::Sampled => {
            config.buffer.delta = DeltaKind::Sampled;
            DeltaSource::Policy
        }
        Delta::FullPage => {
            config.buffer.delta = DeltaKind::FullPage;
            DeltaSource::Policy
        }
    };
    run_synth_with(kind, &config, pcm_bytes, params, filter, warmup, source)
}

/// One run of [`steady`], by its arguments: a part of its experiment.
#[derive(Debug, Clone, PartialEq)]
struct SteadyPart {
    kind: Kind,
    config: SsdConfig,
    pcm_bytes: u64,
    params: SynthParams,
    filter: bool,
    delta: Delta,
}

impl SteadyPart {
    fn new(kind: Kind, config: &SsdConfig, pcm_bytes: u64, params: SynthParams, filter: bool, delta: Delta) -> Self {
        SteadyPart { kind, config: config.clone(), pcm_bytes, params, filter, delta }
    }
}

/// An experiment's steady-state runs, computed up front as independent parts on the
/// shared pool ([`RunContext::run_parts`], each part holding one SSD: [`part_bytes`]);
/// the tables then take each run's result by its arguments, in their own order, so the
/// output does not depend on the threads.
struct SteadyRuns(Vec<(SteadyPart, RunResult)>);

impl SteadyRuns {
    /// Runs each distinct part of `parts` once, calling `tick` after each.
    fn run(ctx: &RunContext, id: &str, parts: Vec<SteadyPart>, tick: impl Fn() + Sync) -> Result<SteadyRuns, LabError> {
        let mut distinct: Vec<SteadyPart> = Vec::new();
        for part in parts {
            if !distinct.contains(&part) {
                distinct.push(part);
            }
        }
        let fail = failed(id);
        let results = ctx.run_parts(
            &distinct,
            |_| part_bytes(ctx.scale),
            |p| {
                let result = steady(p.kind, &p.config, p.pcm_bytes, p.params, p.filter, p.delta).map_err(&fail);
                tick();
                result
            },
        )?;
        Ok(SteadyRuns(distinct.into_iter().zip(results).collect()))
    }

    /// The result of the run [`SteadyRuns::run`] was given with these arguments.
    fn get(
        &self,
        kind: Kind,
        config: &SsdConfig,
        pcm_bytes: u64,
        params: SynthParams,
        filter: bool,
        delta: Delta,
    ) -> RunResult {
        let part = SteadyPart::new(kind, config, pcm_bytes, params, filter, delta);
        self.0.iter().find(|(p, _)| *p == part).map(|(_, r)| r.clone()).expect("every run of the tables is planned")
    }
}

/// Pages written to the FTL for the layer above whose logical page follows the previous
/// one's, % of those pages; `None` when nothing reached the FTL.
fn sequential_percent(r: &RunResult) -> Option<f64> {
    let pages = r.stats.data_page_writes;
    (pages > 0).then(|| 100.0 * r.stats.sequential_page_writes as f64 / pages as f64)
}

/// Lifetime relative to `base`: the ratio of erases in the measured window, or why it is
/// undefined.
pub(super) fn lifetime(base: &RunResult, r: &RunResult) -> Result<f64, &'static str> {
    match (base.stats.block_erases, r.stats.block_erases) {
        (0, _) => Err("n/a: the baseline erased no block"),
        (_, 0) => Err("n/a: no block erased"),
        (b, e) => Ok(b as f64 / e as f64),
    }
}

pub(super) fn lifetime_cell(base: &RunResult, r: &RunResult) -> Cell {
    lifetime(base, r).map_or_else(Cell::from, Cell::from)
}

/// [`lifetime_cell`] of the runs' first passes alone.
pub(super) fn first_lifetime_cell(base: &RunResult, r: &RunResult) -> Cell {
    mqsim::erase_ratio(base.first.block_erases, r.first.block_erases)
}

/// Energy of `r`'s first pass as % of `base`'s first pass.
pub(super) fn first_energy_percent(base: &RunResult, r: &RunResult) -> f64 {
    let energy = |s: &StoreStats| (s.flash_energy_pj + s.pcm_energy_pj) as f64;
    100.0 * energy(&r.first) / energy(&base.first).max(1.0)
}

/// A count of `r`'s window, per pass, as a cell.
pub(super) fn per_pass(r: &RunResult, count: u64) -> Cell {
    r.per_pass(count).into()
}

fn percent_cell(p: Option<f64>) -> Cell {
    p.map_or_else(|| "n/a: no page reached the FTL".into(), Cell::from)
}

/// Energy of `r` as % of `base`'s.
pub(super) fn energy_percent(base: &RunResult, r: &RunResult) -> f64 {
    100.0 * r.energy_pj() as f64 / base.energy_pj().max(1) as f64
}

/// Flash programs in pages (partial programs as page shares) per host page written.
fn write_amplification(r: &RunResult) -> f64 {
    r.stats.flash_programs_in_pages() / r.pages_written.max(1) as f64
}

/// The steady-state note every buffer experiment carries.
fn steady_state_note(r: &RunResult) -> String {
    format!(
        "Steady state of the SSD: before the measured window each run writes every page of the footprint once in order, then overwrites as many uniformly random pages of it with new whole pages (out of place in every configuration, so the FTL's free blocks reach their GC reserve: the same ageing as `nvmdb ssd replay --age`); neither is counted. Each page ends the warm-up holding the content the workload's initial load gave it (the last overwrite of a page carries it, and the fill writes other content to the pages the overwrites reach), in the device and in the duplicate filter alike, so a page the workload rolls back is a duplicate of live content as it is without the ageing pass. The workload then starts as the thesis's runs do, with a cold DBMS buffer pool and empty log areas. Garbage collection runs inside the window: the baseline's t3 run at the 60 MB pool erased {:.0} blocks per pass there.",
        r.per_pass(r.stats.block_erases)
    )
}

/// The note on the measured window every synthetic buffer experiment carries.
pub(super) const WINDOW_NOTE: &str = "Steady state of the logs, not a first pass: after the ageing each run continues the workload to 8 times its length (the same generator: fresh content ids, the DBMS buffer pool carried on; t1, t2 and t3 differ only in length), and the figures are per pass — per workload length — over the last 4 of those lengths (passes 5–8). A first pass on empty logs is a transient: a log that has not filled merges less than it will, and ends the pass holding records no merge has paid for (d-PRAM's units, IPL's log sectors, the PCM log's P-blocks); the columns marked \"first pass\" give that pass alone, as a single run reports it. thesis-pcm-capacity also shows what a drain at the end of the first pass (`nvmdb ssd replay --drain`) charges instead.";

/// The delta-policy note every buffer experiment carries.
const DELTA_NOTE: &str = "Delta policy band: `generator` passes the synthetic workload's own changed byte ranges to the log layer (the TPC-C-like row updates, united per page between evictions; a whole page for new content) and is what the figures and the scorecard use. `sampled` (the replay default for traces without content) and `full-page` tell the layer nothing and let buffer.delta decide: one change of 50–150 B, or the whole page, which no log takes, so every update goes out of place through the FTL as in the baseline.";

/// Blocks the over-provisioning check adds, % of the experiment's.
const ROOMY_EXTRA_BLOCKS_PERCENT: u32 = 20;

/// `config` with [`ROOMY_EXTRA_BLOCKS_PERCENT`] more blocks and a quarter of them spare: the
/// host sees no fewer pages than before.
fn roomier(config: &SsdConfig) -> SsdConfig {
    let mut roomy = config.clone();
    roomy.flash.blocks_per_plane = (config.flash.blocks_per_plane * (100 + ROOMY_EXTRA_BLOCKS_PERCENT)).div_ceil(100);
    roomy.ftl.overprovision = 0.25;
    assert!(roomy.logical_pages() >= config.logical_pages(), "the footprint still fits");
    roomy
}
