//! The thesis's Section 5.1 experiments (seed 000): deduplication (Figures 5.1–5.3), the
//! PCM log buffer against IPL and d-PRAM (Figures 5.5–5.7), everything combined (5.8), the
//! PCM capacity and the P-block replacement policies, what the PCM log's lifetime depends
//! on (`why`: updated blocks against P-blocks), and MQSim's real traces through each
//! configuration. The buffer experiments run in steady state (`Warmup`).
//!
//! Scaling: the thesis runs a 1 GB TPC-C database with 20–100 MB buffer pools and 16 MB
//! of PCM. The paper scale keeps those sizes; the quick scale divides the database, the
//! desktop footprint, the buffer pools and the PCM by 16 together, so every ratio that
//! drives merges (pool : database, PCM : database) is the same. The flash is sized to the
//! data (10% over-provisioning) rather than Table 5.1's 40 GB, so that erases per block
//! mean something; its timing and energy are Table 5.1's (MQSim's traces run on Table
//! 5.1's 80 planes). No experiment here uses the SSD's DRAM write buffer (`[dram]`, off
//! by default).

mod buffers;
mod dedup;
mod mqsim;
mod why;

use std::collections::BTreeMap;

use nvmdb_device::{PageContent, PageData};
use nvmdb_lab::{Experiment, LabError, Memo, Scale};
use nvmdb_workload::synth::{SynthGenerator, SynthPage, SynthParams, SynthRequest, SynthWorkload};
use nvmdb_workload::Op;

use nvmdb_flash::config::{PcmTimingPreset, SsdConfig};
use nvmdb_flash::dpram::DpramStore;
use nvmdb_flash::ipl::IplStore;
use nvmdb_flash::ipl_native::IplNativeStore;
use nvmdb_flash::layer::{FlashError, PageStore, Pending, StoreHealth, StoreStats};
use nvmdb_flash::log_common::SchemeParams;
use nvmdb_flash::pcm_log::PcmLogStore;

/// Every experiment of this module, in figure order.
pub fn all() -> Vec<Box<dyn Experiment>> {
    let mut all = dedup::all();
    all.extend(buffers::all());
    all.extend(why::all());
    all.push(Box::new(mqsim::MqsimTraces));
    all
}

fn failed(id: &str) -> impl Fn(String) -> LabError + '_ {
    move |message| LabError::Failed { id: id.into(), message }
}

/// Database / footprint scale relative to the thesis (1 = 1 GB).
fn scale_divisor(scale: Scale) -> u64 {
    scale.pick(16, 1)
}

/// The SSD configuration of every run: flash sized to a footprint of `footprint_mb`,
/// fingerprint content, Table 5.1 timing, PCM at Table 2.2.
fn ssd_config(footprint_mb: u64, seed: u64) -> SsdConfig {
    let mut config = SsdConfig { seed, content: PageContent::Fingerprint, ..SsdConfig::default() };
    // IPL's host sees 64 of every 68 logical pages (4 log pages per 64-page block), so
    // 60 of 64 with margin; 10% over-provisioning on top.
    let blocks_needed = (footprint_mb * 256).div_ceil(60) * 10 / 9 + 8;
    config.flash.packages = 2;
    config.flash.planes_per_package = 4;
    config.flash.blocks_per_plane = blocks_needed.div_ceil(8) as u32;
    config.ftl.overprovision = 0.1;
    config.buffer.pcm_timing = PcmTimingPreset::ThesisTable22;
    config
}

/// One configuration under test.
enum Scheme {
    /// The stack of `stack::build` (page-mapped FTL, with or without dedup): whole-page writes.
    Stack(Box<dyn PageStore>),
    Ipl(IplStore),
    Dpram(DpramStore),
    PcmLog(PcmLogStore),
    IplNative(IplNativeStore),
}

/// The configurations, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Baseline,
    Dedup,
    Ipl,
    Dpram,
    PcmLog,
    /// The PCM log with `buffer.merge = "logged-pages"`.
    PcmLogLoggedPages,
    /// The PCM log with Belady's offline replacement bound instead of its policy.
    PcmLogOffline,
    /// IPL in its own layout: log sectors in each erase unit, no FTL.
    IplNative,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Baseline => "baseline (page FTL)",
            Kind::Dedup => "dedup (page FTL)",
            Kind::Ipl => "IPL",
            Kind::Dpram => "d-PRAM",
            Kind::PcmLog => "PCM log (ours)",
            Kind::PcmLogLoggedPages => "PCM log (ours), logged-pages merges",
            Kind::PcmLogOffline => "PCM log (ours), offline-optimal replacement",
            Kind::IplNative => "IPL (native layout)",
        }
    }
}

impl Scheme {
    fn new(kind: Kind, config: &SsdConfig, pcm_bytes: u64) -> Result<Scheme, FlashError> {
        let mut params = SchemeParams::from_config(config);
        params.pcm_bytes = pcm_bytes;
        Ok(match kind {
            Kind::Baseline => Scheme::Stack(nvmdb_flash::stack::build(config)?),
            Kind::Dedup => {
                let mut config = config.clone();
                config.dedup.enabled = true;
                Scheme::Stack(nvmdb_flash::stack::build(&config)?)
            }
            Kind::Ipl => Scheme::Ipl(IplStore::with_params(&params)?),
            Kind::Dpram => Scheme::Dpram(DpramStore::with_params(&params)?),
            Kind::PcmLog => Scheme::PcmLog(PcmLogStore::with_params(&params)?),
            Kind::PcmLogOffline => Scheme::PcmLog(PcmLogStore::with_params(&params)?),
            Kind::PcmLogLoggedPages => {
                params.config.buffer.merge = nvmdb_flash::config::MergeKind::LoggedPages;
                Scheme::PcmLog(PcmLogStore::with_params(&params)?)
            }
            Kind::IplNative => Scheme::IplNative(IplNativeStore::new(&params.config)?),
        })
    }

    fn store(&mut self) -> &mut dyn PageStore {
        match self {
            Scheme::Stack(s) => s.as_mut(),
            Scheme::Ipl(s) => s,
            Scheme::Dpram(s) => s,
            Scheme::PcmLog(s) => s,
            Scheme::IplNative(s) => s,
        }
    }

    /// Energy and device busy time so far (pJ, ns), for the log schemes only: core's
    /// stack computes its counters in `stats()`, too slowly to call per request.
    fn meters(&self) -> Option<(u64, u64)> {
        match self {
            Scheme::Stack(_) => None,
            Scheme::Ipl(s) => Some((s.energy_pj(), s.busy_ns())),
            Scheme::Dpram(s) => Some((s.energy_pj(), s.busy_ns())),
            Scheme::PcmLog(s) => Some((s.energy_pj(), s.busy_ns())),
            Scheme::IplNative(s) => Some((s.energy_pj(), s.busy_ns())),
        }
    }

    fn write(&mut self, page: &SynthPage, page_bytes: u32, delta: DeltaSource, now_ns: u64) -> Result<u64, FlashError> {
        let data = PageData::Fingerprint(page.content_id);
        let whole = [(0, page_bytes)];
        let changed = match delta {
            DeltaSource::Exact => Some(page.changed.as_deref().unwrap_or(&whole)),
            DeltaSource::Policy => None,
        };
        match self {
            Scheme::Stack(s) => s.write(page.lpn, data, now_ns),
            Scheme::Ipl(s) => s.write_update(page.lpn, data, changed, now_ns),
            Scheme::Dpram(s) => s.write_update(page.lpn, data, changed, now_ns),
            Scheme::PcmLog(s) => s.write_update(page.lpn, data, changed, now_ns),
            Scheme::IplNative(s) => s.write_update(page.lpn, data, changed, now_ns),
        }
    }
}

/// What one synthetic run measured (initial load excluded).
#[derive(Debug, Clone, Default)]
struct RunResult {
    stats: StoreStats,
    health: StoreHealth,
    /// Flash and PCM service time spent serving writes, ns (log schemes only).
    write_busy_ns: u64,
    /// Energy spent serving writes / reads, pJ (log schemes only).
    write_energy_pj: u64,
    read_energy_pj: u64,
    /// Pages the host wrote, and of those dropped by the run's exact duplicate filter.
    pages_written: u64,
    pages_filtered: u64,
    /// Passes of the workload the window covers: the counters above are their sum
    /// ([`RunResult::per_pass`]).
    passes: u64,
    /// The counters of the workload's first pass alone (without a drain): the transient a
    /// single run reports.
    first: StoreStats,
    /// What the store held that was not yet in flash at the end (after the drain of
    /// [`Warmup::AgedDrained`]: nothing).
    pending: Pending,
    /// The PCM log's sector writes per P-block over the whole run, load and warm-up
    /// included (the PCM's wear is cumulative); empty for the other schemes.
    pblock_sector_writes: Vec<u64>,
    /// The PCM log's P-block replacements over the whole run (default for the other schemes).
    replacements: nvmdb_flash::pcm_log::Replacements,
}

impl RunResult {
    /// Flash plus PCM energy of the measured window, pJ.
    fn energy_pj(&self) -> u64 {
        self.stats.flash_energy_pj + self.stats.pcm_energy_pj
    }

    /// A count of the window, per pass of the workload.
    fn per_pass(&self, count: u64) -> f64 {
        count as f64 / self.passes.max(1) as f64
    }
}

/// Passes of the workload in a [`Warmup::SteadyState`] run, and how many of the last are
/// measured (passes 5 to 8).
const SYNTH_PASSES: u64 = 8;
const SYNTH_MEASURED_PASSES: u64 = 4;

/// An exact duplicate filter in front of a store (the thesis's maximum-size fingerprint
/// store): a write whose content is live on some page only remaps the page.
#[derive(Debug, Default)]
struct ExactDedup {
    /// Content → how many pages hold it, and page → its content (hash maps: never iterated).
    live: std::collections::HashMap<u64, u64>,
    page_content: std::collections::HashMap<u64, u64>,
}

impl ExactDedup {
    /// Records the write; returns whether the content was already stored.
    fn is_duplicate(&mut self, lpn: u64, content: u64) -> bool {
        let duplicate = self.live.get(&content).is_some_and(|&n| n > 0);
        if let Some(old) = self.page_content.insert(lpn, content) {
            let n = self.live.get_mut(&old).expect("a page's content is counted");
            *n -= 1;
        }
        *self.live.entry(content).or_insert(0) += 1;
        duplicate
    }
}

/// How a run reaches its measured window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Warmup {
    /// The TPC-C-like initial load only (the deduplication figures, which count what the
    /// trace itself writes).
    LoadOnly,
    /// An aged SSD, by [`steady_state`]: the initial load writes every page of the
    /// footprint once, in order (for the desktop workloads too);
    /// then one pass of uniform random whole-page overwrites of the footprint (out of place
    /// in every configuration) leaves the FTL's free blocks at its GC reserve, so garbage
    /// collection runs in the measured window. Each page ends the warm-up holding the
    /// content the generator's load gave it. Neither pass is measured; the workload itself
    /// then runs once, as in [`Warmup::LoadOnly`] (cold DBMS buffer pool, empty logs), and is
    /// measured: the first pass, a transient for a log that has not filled.
    Aged,
    /// Steady state of the SSD and of its logs (the buffer figures): aged as
    /// [`Warmup::Aged`], then the workload continued to [`SYNTH_PASSES`] times its length
    /// (the same generator: fresh content, the buffer pool carried on), the last
    /// [`SYNTH_MEASURED_PASSES`] of those pass-lengths measured; the first pass's counters
    /// are kept beside ([`RunResult::first`]). A pass repeating the same requests would
    /// write the same content ids again, which deduplication would find as duplicates.
    SteadyState,
    /// Aged, one pass, then drained ([`PageStore::drain`]: every pending log record merged
    /// as during the run, its energy and flash time counted as write work): the cost a
    /// drain at the end of a first pass charges, beside the steady state.
    AgedDrained,
}

/// What the layer is told of an update's change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeltaSource {
    /// The generator's changed byte ranges (a whole page for new content).
    Exact,
    /// Nothing: the change is the configuration's `buffer.delta` policy, as for a trace
    /// without content.
    Policy,
}

/// Runs a synthetic workload through a scheme after the TPC-C-like initial load (not
/// measured), with the generator's changes ([`Warmup::LoadOnly`], [`DeltaSource::Exact`]).
fn run_synth(
    kind: Kind,
    config: &SsdConfig,
    pcm_bytes: u64,
    params: SynthParams,
    filter_duplicates: bool,
) -> Result<RunResult, String> {
    run_synth_with(kind, config, pcm_bytes, params, filter_duplicates, Warmup::LoadOnly, DeltaSource::Exact)
}

/// The synthetic runs of this process, keyed by every argument of [`run_synth_with`]:
/// the buffer experiments repeat some of each other's steady-state runs (at quick scale,
/// 20 of their 140 distinct runs), and in one `nvmdb reproduce` the second asker takes the
/// first's result.
static SYNTH_RUNS: Memo<RunResult> = Memo::new();

/// [`run_synth`] with a warm-up and a delta source, or its result if this process made the
/// same run.
fn run_synth_with(
    kind: Kind,
    config: &SsdConfig,
    pcm_bytes: u64,
    params: SynthParams,
    filter_duplicates: bool,
    warmup: Warmup,
    delta: DeltaSource,
) -> Result<RunResult, String> {
    let key = format!("{kind:?} {config:?} {pcm_bytes} {params:?} {filter_duplicates} {warmup:?} {delta:?}");
    SYNTH_RUNS.get_or_run(key, || {
        let mut scheme = Scheme::new(kind, config, pcm_bytes).map_err(|e| e.to_string())?;
        let page_bytes = scheme.store().page_bytes();
        let passes = if warmup == Warmup::SteadyState { SYNTH_PASSES } else { 1 };
        // The workload continued `passes` times as long: a pass is `params.requests` requests.
        let long = SynthParams { requests: params.requests * passes, ..params };
        let mut generator = SynthGenerator::new(long)?;
        let mut filter = filter_duplicates.then(ExactDedup::default);
        let aged = warmup != Warmup::LoadOnly;
        if aged {
            let load = generator.initial_load();
            steady_state(&mut scheme, &params, &load, filter.as_mut()).map_err(|e| e.to_string())?;
        } else if params.workload.is_transactional() {
            for request in generator.initial_load() {
                nvmdb_cancel::check().map_err(|e| e.to_string())?;
                for page in &request.pages {
                    if let Some(f) = filter.as_mut() {
                        f.is_duplicate(page.lpn, page.content_id);
                    }
                    scheme
                        .write(page, page_bytes, DeltaSource::Exact, request.request.time_ns)
                        .map_err(|e| e.to_string())?;
                }
            }
        }
        scheme.store().reset_stats();
        if let (Kind::PcmLogOffline, Scheme::PcmLog(store)) = (kind, &mut scheme) {
            // The future host writes, from a second generator of the same seed.
            let mut twin = SynthGenerator::new(long)?;
            if params.workload.is_transactional() || aged {
                drop(twin.initial_load());
            }
            let future: Vec<u64> =
                twin.filter(|r| r.request.op == Op::Write).flat_map(|r| r.pages.into_iter().map(|p| p.lpn)).collect();
            store.set_offline_future(&future);
        }
        let drain = warmup == Warmup::AgedDrained;
        run_passes(&mut scheme, passes, drain, |scheme, result| {
            let mut meters = scheme.meters();
            let mut now_ns = 0;
            for request in generator.by_ref().take(usize::try_from(params.requests).unwrap_or(usize::MAX)) {
                nvmdb_cancel::check().map_err(|e| e.to_string())?;
                now_ns = request.request.time_ns;
                run_request(scheme, &request, page_bytes, delta, filter.as_mut(), now_ns, result)
                    .map_err(|e| e.to_string())?;
                let (Some((energy, busy)), Some(now)) = (meters, scheme.meters()) else { continue };
                match request.request.op {
                    Op::Write => {
                        result.write_energy_pj += now.0 - energy;
                        result.write_busy_ns += now.1 - busy;
                    }
                    _ => result.read_energy_pj += now.0 - energy,
                }
                meters = Some(now);
            }
            Ok(now_ns)
        })
    })
}

/// Runs `passes` passes of a workload on `scheme` (`pass` runs one and returns the time of
/// its last request), measuring the last [`SYNTH_MEASURED_PASSES`] (all of one pass) and
/// keeping the first pass's counters beside; with `drain`, drains the store after the last
/// pass, its work counted in the window as write work.
fn run_passes(
    scheme: &mut Scheme,
    passes: u64,
    drain: bool,
    mut pass: impl FnMut(&mut Scheme, &mut RunResult) -> Result<u64, String>,
) -> Result<RunResult, String> {
    let measured_from = passes - SYNTH_MEASURED_PASSES.min(passes);
    let mut result = RunResult::default();
    let mut first = StoreStats::default();
    let mut now_ns = 0;
    for p in 0..passes {
        if p == measured_from && p > 0 {
            scheme.store().reset_stats();
            result = RunResult::default();
        }
        now_ns = pass(scheme, &mut result)?;
        if p == 0 {
            first = scheme.store().stats();
        }
    }
    if drain {
        let before = scheme.meters();
        scheme.store().drain(now_ns).map_err(|e| e.to_string())?;
        if let (Some((energy, busy)), Some((energy_after, busy_after))) = (before, scheme.meters()) {
            result.write_energy_pj += energy_after - energy;
            result.write_busy_ns += busy_after - busy;
        }
    }
    let store = scheme.store();
    store.check_invariants()?;
    result.passes = passes - measured_from;
    result.first = first;
    result.stats = store.stats();
    result.health = store.health();
    result.pending = store.pending();
    if let Scheme::PcmLog(s) = scheme {
        result.pblock_sector_writes = s.area().sector_writes().to_vec();
        result.replacements = s.area().replacements();
    }
    Ok(result)
}

/// The ageing of [`Warmup::Aged`] (and the runs built on it): the generator's initial load `load` (every
/// page of the footprint once, in order), then as many uniformly random whole-page
/// overwrites of the footprint as it has pages ([`nvmdb_workload::ageing::age`], which
/// `nvmdb ssd replay --age` runs too). Every write is new content, out of place in every
/// configuration and a duplicate of nothing, and `filter` sees each one.
///
/// The generator does not know the ageing pass, and its rolled-back pages go out with the
/// content its load gave them. So the warm-up ends with each page holding exactly that
/// content (the ageing's rule), and the device and the duplicate filter then hold the
/// generator's view when the measured window starts: a rolled-back page is a duplicate of
/// what its page holds.
///
/// Why not age first and then write the footprint again with the generator's content:
/// that third pass would lay the footprint out in load order once more, so the window
/// would no longer start from the random layout the ageing pass leaves, and its garbage
/// collection would copy a different number of pages. Here the pages written, their order
/// and their being new content are those of a plain load and ageing pass; only which
/// content id each carries differs, so every configuration without deduplication reaches
/// the same FTL state as those two passes leave, and the measured window its GC cost.
fn steady_state(
    scheme: &mut Scheme,
    params: &SynthParams,
    load: &[SynthRequest],
    mut filter: Option<&mut ExactDedup>,
) -> Result<(), FlashError> {
    let pages = load.iter().flat_map(|r| r.pages.iter().map(move |p| (p.lpn, p.content_id, r.request.time_ns)));
    nvmdb_workload::ageing::age(params.footprint_pages(), params.seed, pages, |lpn, content_id, now_ns| {
        // A stop asked for ([`nvmdb_cancel`]) ends the warm-up, as the run, per write.
        nvmdb_cancel::check()?;
        if let Some(f) = filter.as_deref_mut() {
            f.is_duplicate(lpn, content_id);
        }
        scheme.store().write_new(lpn, PageData::Fingerprint(content_id), now_ns).map(drop)
    })
}

/// Runs one request of a synthetic workload, arriving at `arrival`.
fn run_request(
    scheme: &mut Scheme,
    request: &SynthRequest,
    page_bytes: u32,
    delta: DeltaSource,
    mut filter: Option<&mut ExactDedup>,
    arrival: u64,
    result: &mut RunResult,
) -> Result<(), FlashError> {
    match request.request.op {
        Op::Write => {
            for page in &request.pages {
                result.pages_written += 1;
                if filter.as_deref_mut().is_some_and(|f| f.is_duplicate(page.lpn, page.content_id)) {
                    result.pages_filtered += 1;
                    continue;
                }
                scheme.write(page, page_bytes, delta, arrival)?;
            }
        }
        _ => {
            let first = request.request.offset_bytes / u64::from(page_bytes);
            for lpn in first..first + request.request.len_bytes / u64::from(page_bytes) {
                scheme.store().read(lpn, arrival)?;
            }
        }
    }
    Ok(())
}

/// Memory one run of these experiments (a part, [`nvmdb_lab::RunContext::run_parts`]) holds
/// beside its experiment: its SSD's mapping tables and the flash array's page slots (about
/// 60 B per flash page: 0.31 M pages for the 1 GB footprint at paper scale), its PCM model
/// (up to 128 MB of thesis-scale PCM, cells and per-cell wear), its generator and duplicate
/// filter. Quick scale: each flash entry's whole process peaked at 12–45 MB with one part
/// at a time (`nvmdb run ID --jobs 1`, BENCHMARKS.md); paper scale is not measured, and the
/// bound is the sizes above (PCM fully written, 2.5 host bytes per byte) with room to spare.
fn part_bytes(scale: Scale) -> u64 {
    scale.pick(64u64, 768) << 20
}

/// Synthetic parameters at a scale: the footprint and pool divided by the scale divisor.
fn synth_params(workload: SynthWorkload, scale: Scale, seed: u64, pool_mb: u64) -> SynthParams {
    let divisor = scale_divisor(scale);
    let requests = workload.default_requests() / scale.pick(12, 1);
    SynthParams { workload, requests, seed, footprint_mb: 1024 / divisor, buffer_pool_pages: pool_mb * 256 / divisor }
}

/// How the updates of a synthetic workload's measured window spread over logical blocks.
#[derive(Debug, Clone, Copy)]
struct WorkingSet {
    /// Page writes whose change is neither empty nor the whole page: the writes a log
    /// layer logs (or writes out of place when the change outgrows a sector).
    pub updates: u64,
    /// Distinct logical blocks those updates go to.
    pub blocks: u64,
    /// Share of the updates that go to the `pblocks` most updated blocks, %: the most any
    /// fixed choice of that many blocks could keep in PCM.
    pub hottest_share_percent: f64,
}

/// The working set of `params`'s measured window (after the initial load), with
/// `pages_per_block` pages a logical block and `pblocks` P-blocks.
fn working_set(params: SynthParams, pages_per_block: u64, pblocks: u64) -> Result<WorkingSet, String> {
    let mut generator = SynthGenerator::new(params)?;
    drop(generator.initial_load());
    let mut per_block: BTreeMap<u64, u64> = BTreeMap::new();
    for request in generator {
        for page in &request.pages {
            if page.changed.as_ref().is_some_and(|c| !c.is_empty()) {
                *per_block.entry(page.lpn / pages_per_block).or_default() += 1;
            }
        }
    }
    let mut counts: Vec<u64> = per_block.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let updates: u64 = counts.iter().sum();
    let hottest: u64 = counts.iter().take(usize::try_from(pblocks).unwrap_or(usize::MAX)).sum();
    Ok(WorkingSet {
        updates,
        blocks: counts.len() as u64,
        hottest_share_percent: 100.0 * hottest as f64 / updates.max(1) as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parts on several threads give the outcome of one thread: the tables take each run's
    /// result by its configuration. A deduplication experiment and a steady-state one (the
    /// others run the same two ways of splitting; `diff -r` of quick runs covers them).
    #[test]
    fn the_flash_experiments_are_the_same_on_one_thread_or_several() {
        let ids = ["thesis-fig5-3", "thesis-replacement"];
        for experiment in all().into_iter().filter(|e| ids.contains(&e.id())) {
            let run =
                |jobs| experiment.run(&nvmdb_lab::RunContext::new(Scale::Quick, 3).with_jobs(jobs)).expect("runs");
            let one = run(1);
            assert!(!one.tables[0].rows.is_empty(), "{}", experiment.id());
            assert_eq!(run(3), one, "{}", experiment.id());
        }
    }

    /// The buffer figures' lifetime ratios divide by the baseline's erases in the measured
    /// window: in steady state every workload's baseline erases blocks there, and the
    /// trace alone (after the load only) does not on d1 and t1.
    #[test]
    fn steady_state_runs_collect_garbage_in_the_measured_window() {
        let config = ssd_config(64, 1);
        for workload in SynthWorkload::ALL {
            let params = synth_params(workload, Scale::Quick, 1, 60);
            let steady =
                run_synth_with(Kind::Baseline, &config, 0, params, false, Warmup::SteadyState, DeltaSource::Exact)
                    .unwrap();
            assert!(steady.stats.block_erases > 0, "{}: no erase in the window", workload.name());
            assert!(steady.stats.gc_page_copies > 0, "{}: no GC copy in the window", workload.name());
            assert_eq!(steady.stats.data_page_writes, steady.pages_written, "{}", workload.name());
        }
        for workload in [SynthWorkload::D1, SynthWorkload::T1] {
            let params = synth_params(workload, Scale::Quick, 1, 60);
            let cold = run_synth(Kind::Baseline, &config, 0, params, false).unwrap();
            assert_eq!(cold.stats.block_erases, 0, "{}: the load alone leaves free blocks", workload.name());
        }
    }

    /// The warm-up writes whole pages of new content, which no log takes: the load goes
    /// straight through the FTL, the ageing pass out of place, and neither leaves records
    /// behind, so the measured window starts with empty log areas. IPL in its own layout,
    /// which writes data pages only in merges, merges each overwritten page's unit with it.
    #[test]
    fn the_warm_up_goes_out_of_place_in_every_log_scheme() {
        let config = ssd_config(64, 1);
        let params = synth_params(SynthWorkload::T1, Scale::Quick, 1, 60);
        let load = SynthGenerator::new(params).unwrap().initial_load();
        for kind in [Kind::Ipl, Kind::Dpram, Kind::PcmLog, Kind::IplNative] {
            let mut scheme = Scheme::new(kind, &config, 1 << 20).unwrap();
            steady_state(&mut scheme, &params, &load, None).unwrap();
            let s = scheme.store().stats();
            assert_eq!(s.logged_writes, 0, "{kind:?}");
            let merges = if kind == Kind::IplNative { params.footprint_pages() } else { 0 };
            assert_eq!(s.merges, merges, "{kind:?}");
            assert_eq!(s.direct_writes, params.footprint_pages(), "{kind:?}");
            assert_eq!(s.out_of_place_writes, params.footprint_pages(), "{kind:?}");
            assert_eq!(scheme.store().pending(), Pending::default(), "{kind:?}");
            scheme.store().check_invariants().unwrap();
        }
    }

    /// After the steady-state warm-up every page holds the content the generator's load
    /// gave it, in the duplicate filter as on the device: each page t1 rolls back to its
    /// previous version is a duplicate of live content, both for the exact filter and for
    /// the FTL's deduplication, and no warm-up write was one.
    #[test]
    fn after_the_steady_state_warm_up_a_rollback_is_a_duplicate() {
        let config = ssd_config(64, 1);
        let params = synth_params(SynthWorkload::T1, Scale::Quick, 1, 60);
        let mut generator = SynthGenerator::new(params).unwrap();
        let load = generator.initial_load();
        let mut filter = ExactDedup::default();
        let mut scheme = Scheme::new(Kind::Dedup, &config, 0).unwrap();
        steady_state(&mut scheme, &params, &load, Some(&mut filter)).unwrap();
        assert_eq!(scheme.store().stats().dedup_pages_removed, 0, "no warm-up write is a duplicate");
        for page in load.iter().flat_map(|r| &r.pages) {
            assert_eq!(filter.page_content.get(&page.lpn), Some(&page.content_id), "page {}", page.lpn);
        }
        // The window's rollbacks: the generator's last content again, no changed bytes.
        let rollbacks: u64 =
            generator.flat_map(|r| r.pages).filter(|p| p.changed.as_ref().is_some_and(Vec::is_empty)).count() as u64;
        assert!(rollbacks > 0, "t1 rolls pages back");
        let filtered =
            run_synth_with(Kind::Baseline, &config, 0, params, true, Warmup::Aged, DeltaSource::Exact).unwrap();
        assert_eq!(filtered.pages_filtered, rollbacks);
        let deduped = run_synth_with(Kind::Dedup, &config, 0, params, false, Warmup::Aged, DeltaSource::Exact).unwrap();
        assert_eq!(deduped.stats.dedup_pages_removed, rollbacks);
    }
}
