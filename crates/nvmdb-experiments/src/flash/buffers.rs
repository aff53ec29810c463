//! Figures 5.5–5.7 (IPL, d-PRAM and the PCM log across buffer-pool sizes: merges,
//! erases, write time, energy, sequentiality of the writes reaching flash), Figure 5.8
//! (deduplication and the PCM log combined against the baseline), the PCM capacity sweep
//! and the replacement policies. Every run is measured in steady state
//! ([`Warmup::SteadyState`]) and reports the delta-policy band ([`Delta`]).

use nvmdb_flash::config::{BufferKind, DeltaKind, ReplacementKind, SsdConfig};
use nvmdb_flash::layer::StoreStats;
use nvmdb_lab::{Cell, Experiment, LabError, Outcome, Plot, Relation, RunContext, Scale, Table, WouldHoldWhen};
use nvmdb_workload::synth::{SynthParams, SynthWorkload};
use serde_json::json;

use super::mqsim;

use super::{
    failed, part_bytes, run_synth_with, scale_divisor, ssd_config, synth_params, working_set, DeltaSource, Kind,
    RunResult, Warmup, SYNTH_MEASURED_PASSES,
};
use crate::papers;

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

/// `thesis-fig5-5-6-7`: merges, erases, write time, energy and sequential writes.
#[derive(Debug)]
pub struct BufferSchemes;

impl Experiment for BufferSchemes {
    fn id(&self) -> &'static str {
        "thesis-fig5-5-6-7"
    }
    fn title(&self) -> &'static str {
        "Figures 5.5, 5.6, 5.7: IPL vs d-PRAM vs the PCM log buffer across buffer-pool sizes"
    }
    fn source(&self) -> &'static str {
        "seed 000 (Pathak, NUS 2011), Section 5.1.2, Figures 5.5 (merges, erases, write time), 5.6 (energy), 5.7 (sequential flush)"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let divisor = scale_divisor(ctx.scale);
        let footprint_mb = 1024 / divisor;
        let config = ssd_config(footprint_mb, ctx.seed);
        let pcm = pcm_bytes(ctx, PCM_MB);
        let kinds = [Kind::Baseline, Kind::Ipl, Kind::Dpram, Kind::PcmLog];
        let mut fig5 = Table::new(
            "Figure 5.5 (t3): merges, erases and write time by DBMS buffer pool, per pass over passes 5–8 (thesis: ours lowest in all three; the baseline for reference), the first pass beside",
            &[
                "pool (MB, thesis scale)",
                "scheme",
                "host page writes",
                "merges",
                "flash page programs",
                "flash sector programs",
                "erases",
                "write time (s)",
                "host page writes, first pass",
                "merges, first pass",
                "erases, first pass",
                "log records pending at the end",
            ],
        );
        let mut fig6 = Table::new(
            "Figure 5.6 (t3): energy by DBMS buffer pool, per pass over passes 5–8 (thesis: ours lowest for write, read and total), the first pass beside",
            &[
                "pool (MB, thesis scale)",
                "scheme",
                "write energy (J)",
                "read energy (J)",
                "total (J)",
                "PCM bits written",
                "total (J), first pass",
            ],
        );
        let mut merges_plot =
            Plot::new("Figure 5.5(a): merges per pass (t3, passes 5–8)", "buffer pool, MB (thesis scale)", "merges");
        let mut erases_plot =
            Plot::new("Figure 5.5(b): erases per pass (t3, passes 5–8)", "buffer pool, MB (thesis scale)", "erases");
        let mut time_plot = Plot::new(
            "Figure 5.5(c): write time per pass (t3, passes 5–8)",
            "buffer pool, MB (thesis scale)",
            "seconds",
        );
        let mut energy_plot =
            Plot::new("Figure 5.6(c): total energy per pass (t3, passes 5–8)", "buffer pool, MB (thesis scale)", "J");
        // Runs of the figures (t3 at every pool, then t1 and t2 at 60 MB), and of the band
        // (the log schemes' two content-free deltas at each of those points).
        let points = POOLS_MB.len() + 2;
        let bar = ctx.progress(self.id(), (points * (kinds.len() + 1) + 2 + points * 3 * Delta::BAND.len()) as u64);
        let mut plan = Vec::new();
        let figure_points = POOLS_MB.map(|pool| (SynthWorkload::T3, pool));
        for (workload, pool) in figure_points.into_iter().chain([(SynthWorkload::T1, 60), (SynthWorkload::T2, 60)]) {
            let params = synth_params(workload, ctx.scale, ctx.seed, pool);
            for kind in kinds {
                plan.push(SteadyPart::new(kind, &config, pcm, params, false, Delta::Generator));
                if kind != Kind::Baseline {
                    plan.extend(Delta::BAND.map(|delta| SteadyPart::new(kind, &config, pcm, params, false, delta)));
                }
            }
        }
        // IPL in its own layout at the figures' points, beside the FTL-layered IPL.
        let ipl_points: Vec<(SynthWorkload, u64)> =
            figure_points.into_iter().chain([(SynthWorkload::T1, 60), (SynthWorkload::T2, 60)]).collect();
        for &(workload, pool) in &ipl_points {
            let params = synth_params(workload, ctx.scale, ctx.seed, pool);
            plan.push(SteadyPart::new(Kind::IplNative, &config, pcm, params, false, Delta::Generator));
        }
        // Both forms on a roomier flash at t3, 60 MB: what the FTL's garbage collection costs.
        let roomy = roomier(&config);
        let t3_60 = synth_params(SynthWorkload::T3, ctx.scale, ctx.seed, 60);
        for kind in [Kind::Ipl, Kind::IplNative] {
            plan.push(SteadyPart::new(kind, &roomy, pcm, t3_60, false, Delta::Generator));
        }
        let steady_runs = SteadyRuns::run(ctx, self.id(), plan, || bar.inc(1))?;
        let mut at_60: Vec<RunResult> = Vec::new();
        // The generator-delta runs: workload, pool, index in `kinds`, result.
        let mut generator_runs: Vec<(SynthWorkload, u64, usize, RunResult)> = Vec::new();
        // Per log scheme, per pool: host page writes of the first pass, then per pass of the
        // window merges, erases, write time, write, read and total energy.
        let mut by_scheme: Vec<Vec<[f64; 7]>> = Vec::new();
        for (k, kind) in kinds.into_iter().enumerate() {
            let mut points = Vec::new();
            let (mut m, mut e, mut t, mut en) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for pool in POOLS_MB {
                let params = synth_params(SynthWorkload::T3, ctx.scale, ctx.seed, pool);
                let r = steady_runs.get(kind, &config, pcm, params, false, Delta::Generator);
                let log = kind != Kind::Baseline;
                let write_s = r.per_pass(r.write_busy_ns) / 1e9;
                fig5.row(vec![
                    pool.into(),
                    kind.name().into(),
                    per_pass(&r, r.pages_written),
                    per_pass(&r, r.stats.merges),
                    per_pass(&r, r.stats.flash_page_programs),
                    per_pass(&r, r.stats.flash_sector_programs),
                    per_pass(&r, r.stats.block_erases),
                    if log { write_s.into() } else { "-".into() },
                    r.first.host_page_writes.into(),
                    r.first.merges.into(),
                    r.first.block_erases.into(),
                    r.pending.log_records.into(),
                ]);
                let joules = |pj: u64| Cell::from(r.per_pass(pj) / 1e12);
                fig6.row(vec![
                    pool.into(),
                    kind.name().into(),
                    if log { joules(r.write_energy_pj) } else { "-".into() },
                    if log { joules(r.read_energy_pj) } else { "-".into() },
                    joules(r.energy_pj()),
                    per_pass(&r, r.stats.pcm_bits_written),
                    ((r.first.flash_energy_pj + r.first.pcm_energy_pj) as f64 / 1e12).into(),
                ]);
                if pool == 60 {
                    at_60.push(r.clone());
                }
                generator_runs.push((SynthWorkload::T3, pool, k, r.clone()));
                if !log {
                    continue;
                }
                points.push([
                    r.first.host_page_writes as f64,
                    r.per_pass(r.stats.merges),
                    r.per_pass(r.stats.block_erases),
                    write_s,
                    r.per_pass(r.write_energy_pj),
                    r.per_pass(r.read_energy_pj),
                    r.per_pass(r.energy_pj()),
                ]);
                m.push((pool as f64, r.per_pass(r.stats.merges)));
                e.push((pool as f64, r.per_pass(r.stats.block_erases)));
                t.push((pool as f64, write_s));
                en.push((pool as f64, r.per_pass(r.energy_pj()) / 1e12));
            }
            if kind == Kind::Baseline {
                continue;
            }
            by_scheme.push(points);
            merges_plot.series(kind.name(), m);
            erases_plot.series(kind.name(), e);
            time_plot.series(kind.name(), t);
            energy_plot.series(kind.name(), en);
        }
        // Ours (last) lowest in each of `metrics` at every pool.
        let ours_lowest = |metrics: &[usize]| {
            let (ours, others) = by_scheme.split_last().expect("three schemes");
            ours.iter()
                .enumerate()
                .all(|(i, o)| metrics.iter().all(|&k| others.iter().all(|scheme| o[k] < scheme[i][k])))
        };
        let fewer_writes = by_scheme.iter().all(|points| points.windows(2).all(|w| w[1][0] < w[0][0]));

        // Figure 5.7: t1 and t2 here, t3 from the 60 MB runs above.
        let paper_points = papers::stated_value("thesis-fig5-5-6-7-sequential-flush");
        let mut fig7 = Table::new(
            format!("Figure 5.7: sequential share of the pages written to flash (page FTL writes whose logical page follows the previous one's, GC copies excluded), % (60 MB pool; thesis: about +{paper_points} for t3)"),
            &["workload", "baseline (page FTL)", "IPL", "d-PRAM", "PCM log (ours)", "ours − baseline (points)"],
        );
        let mut t3_points = f64::NAN;
        for workload in [SynthWorkload::T1, SynthWorkload::T2, SynthWorkload::T3] {
            let runs = if workload == SynthWorkload::T3 {
                at_60.clone()
            } else {
                let params = synth_params(workload, ctx.scale, ctx.seed, 60);
                let mut runs = Vec::new();
                for (k, kind) in kinds.into_iter().enumerate() {
                    let r = steady_runs.get(kind, &config, pcm, params, false, Delta::Generator);
                    generator_runs.push((workload, 60, k, r.clone()));
                    runs.push(r);
                }
                runs
            };
            let percents: Vec<Option<f64>> = runs.iter().map(sequential_percent).collect();
            let mut row = vec![workload.name().into()];
            row.extend(percents.iter().map(|&p| percent_cell(p)));
            let difference = percents[3].zip(percents[0]).map(|(ours, base)| ours - base);
            if workload == SynthWorkload::T3 {
                t3_points = difference.unwrap_or(f64::NAN);
            }
            row.push(percent_cell(difference));
            fig7.row(row);
        }

        // The delta band at every point of the figures.
        let mut band = Table::new(
            "Delta policy band (t3 at every pool, t1 and t2 at 60 MB): the generator's changes against the content-free policies, per pass over passes 5–8",
            &[
                "workload",
                "pool (MB, thesis scale)",
                "scheme",
                "delta",
                "merges",
                "flash page programs",
                "erases",
                "write time (s)",
                "total energy (J)",
                "sequential %",
            ],
        );
        for (workload, pool, k, generator) in generator_runs.iter().filter(|run| run.2 > 0) {
            let params = synth_params(*workload, ctx.scale, ctx.seed, *pool);
            let mut runs = vec![(Delta::Generator, generator.clone())];
            for delta in Delta::BAND {
                runs.push((delta, steady_runs.get(kinds[*k], &config, pcm, params, false, delta)));
            }
            for (delta, r) in runs {
                band.row(vec![
                    workload.name().into(),
                    (*pool).into(),
                    kinds[*k].name().into(),
                    delta.name().into(),
                    per_pass(&r, r.stats.merges),
                    per_pass(&r, r.stats.flash_page_programs),
                    per_pass(&r, r.stats.block_erases),
                    (r.per_pass(r.write_busy_ns) / 1e9).into(),
                    (r.per_pass(r.energy_pj()) / 1e12).into(),
                    percent_cell(sequential_percent(&r)),
                ]);
            }
        }
        let (ipl_forms, ipl_forms_note) = ipl_forms_table(&ipl_points, |workload, pool, kind, roomy_flash| {
            let config = if roomy_flash { &roomy } else { &config };
            steady_runs.get(
                kind,
                config,
                pcm,
                synth_params(workload, ctx.scale, ctx.seed, pool),
                false,
                Delta::Generator,
            )
        });
        bar.finish_and_clear();
        let summary_at_60: Vec<String> = kinds
            .iter()
            .zip(&at_60)
            .map(|(k, r)| {
                format!(
                    "{} {:.0} merges / {:.0} erases per pass",
                    k.name(),
                    r.per_pass(r.stats.merges),
                    r.per_pass(r.stats.block_erases)
                )
            })
            .collect();
        let mut outcome = Outcome {
            summary: format!(
                "TPC-C-like t1–t3 (database {footprint_mb} MB, PCM {} KB, pools 20–100 MB scaled by 1/{divisor}) in steady state through IPL, d-PRAM and the thesis's PCM log buffer, each a log layer above the same page-mapped FTL as the baseline. The thesis states ours is lowest in merges, erases, write time and energy, and about +{paper_points} points of sequential writes for t3. Measured on t3 at 60 MB: {}.",
                pcm >> 10,
                summary_at_60.join("; ")
            ),
            config: json!({
                "scale": ctx.scale.name(), "seed": ctx.seed, "footprint_mb": footprint_mb,
                "pcm_bytes": pcm, "pools_mb_thesis_scale": POOLS_MB, "ssd": config,
                "content_mode": "fingerprint (deltas from the generator's changed byte ranges, or buffer.delta for the band)",
                "warmup": "fill, then one random whole-page overwrite pass of the footprint; each page ends it with its load content; then 8 passes of the workload, passes 5–8 measured",
            }),
            tables: vec![fig5, fig6, fig7, band, ipl_forms],
            plots: vec![merges_plot, erases_plot, time_plot, energy_plot],
            notes: vec![
                "All three schemes are a log layer above the same page-mapped FTL, GC and flash as the baseline (Table 5.1 timing, Table 2.2 PCM), with the same PCM capacity (d-PRAM and ours). First writes go straight through the FTL; a change that cannot be logged is one out-of-place page write; a merge rewrites the logical block's live pages through the FTL as one sequential run (buffer.merge = live-block) and the FTL's GC reclaims the old copies. IPL keeps 1/16 of a block per logical block as log pages in the FTL, written 512 B at a time, as Lee & Moon's 8 KB of 128 KB.".into(),
                steady_state_note(&at_60[0]),
                WINDOW_NOTE.into(),
                "Figure 5.4's claim (host writes fall with a larger buffer pool) is measured on the first pass, the thesis's run from a cold DBMS buffer pool: once the pool is full, each miss's read comes with one dirty page's eviction, so a pass of a fixed number of requests writes the same pages at every pool (host page writes column).".into(),
                "Write time is the flash and PCM service time spent on writes (merges, GC and erases included, queueing excluded); energy is flash (Table 5.1) plus PCM (Table 2.2, per changed 8 B word), attributed to the request that caused it. The baseline's split by request kind is not metered (\"-\").".into(),
                "Figure 5.7 measures what the thesis names, the sequentiality of the writes passed to flash: of the pages the page FTL writes for the layer above (host writes, out-of-place writes and merge runs; GC copies and IPL's 512 B log programs excluded, the latter breaking a run), the share whose logical page is the previous one's plus one. The baseline's share comes from the workload's own multi-page evictions and order-line appends; a scheme's from its merges (whole logical blocks, in order) and the host writes that still reach flash. The thesis's +50% is read as points of this share.".into(),
                DELTA_NOTE.into(),
                "The PCM capacity sweep and the replacement policies are the experiments thesis-pcm-capacity and thesis-replacement.".into(),
                ipl_forms_note,
            ],
            ..Default::default()
        };
        outcome.holds("thesis-fig5-5-6-7-pool-fewer-writes", fewer_writes);
        let churn = "16 MB of PCM holds P-blocks of 32 KB for 1/8 of the database's blocks; an update to a block without one replaces a P-block, and each replacement merges the victim's whole logical block (thesis-pcm-capacity and thesis-fig5-8's logged-pages rows isolate both; thesis-fig5-8-why varies the updated blocks against the P-blocks).";
        papers::holds_explained(&mut outcome, "thesis-fig5-5-6-7-fewest-merges", ours_lowest(&[1]), churn);
        papers::holds_explained(&mut outcome, "thesis-fig5-5-6-7-fewest-erases", ours_lowest(&[2]), churn);
        papers::holds_explained(&mut outcome, "thesis-fig5-5-6-7-least-write-time", ours_lowest(&[3]), churn);
        papers::holds_explained(&mut outcome, "thesis-fig5-5-6-7-least-energy", ours_lowest(&[4, 5, 6]), churn);
        let (base_t3, ours_t3) = (&at_60[0], &at_60[3]);
        let merge_share = 100.0 * ours_t3.stats.merge_page_writes as f64 / ours_t3.stats.data_page_writes.max(1) as f64;
        papers::measure_explained(
            &mut outcome,
            "thesis-fig5-5-6-7-sequential-flush",
            t3_points,
            &format!(
                "The baseline's t3 writes are single-page evictions ({:.0} of {:.0} pages a pass continue a run); {merge_share:.1}% of the pages ours writes to flash are merge runs of whole logical blocks in order.",
                base_t3.per_pass(base_t3.stats.sequential_page_writes),
                base_t3.per_pass(base_t3.stats.data_page_writes)
            ),
        );
        Ok(outcome)
    }
}

/// The table of IPL's two forms at `points` (generator deltas), and both at t3 with a
/// 60 MB pool on the [`roomier`] flash, from `run(workload, pool, kind, roomier)`: per pass
/// over the steady window, the first pass beside; and its note, the mechanism of their
/// difference from those runs.
fn ipl_forms_table(
    points: &[(SynthWorkload, u64)],
    run: impl Fn(SynthWorkload, u64, Kind, bool) -> RunResult,
) -> (Table, String) {
    let mut table = Table::new(
        "IPL's two forms (generator deltas): log pages in the page-mapped FTL (IPL) and log sectors at the end of each erase unit with no FTL (IPL, native layout), per pass over passes 5–8, the first pass beside; the last two rows on a flash with 20% more blocks, 25% over-provisioned",
        &[
            "workload",
            "pool (MB, thesis scale)",
            "scheme",
            "flash",
            "host page writes",
            "logged",
            "out of place",
            "merges",
            "merge page writes",
            "GC page copies",
            "flash page programs",
            "flash sector programs",
            "flash page reads",
            "erases",
            "write time (s)",
            "total energy (J)",
            "merges, first pass",
            "erases, first pass",
        ],
    );
    let runs = points.iter().map(|&(w, p)| (w, p, false)).chain([(SynthWorkload::T3, 60, true)]);
    // t3 at 60 MB: the FTL form and the native form, as run and on the roomier flash.
    let mut t3_60 = Vec::new();
    for (workload, pool, roomy) in runs {
        for kind in [Kind::Ipl, Kind::IplNative] {
            let r = run(workload, pool, kind, roomy);
            let s = &r.stats;
            table.row(vec![
                workload.name().into(),
                pool.into(),
                kind.name().into(),
                (if roomy { "+20% blocks, 25% spare" } else { "as the figures" }).into(),
                per_pass(&r, r.pages_written),
                per_pass(&r, s.logged_writes),
                per_pass(&r, s.out_of_place_writes),
                per_pass(&r, s.merges),
                per_pass(&r, s.merge_page_writes),
                per_pass(&r, s.gc_page_copies),
                per_pass(&r, s.flash_page_programs),
                per_pass(&r, s.flash_sector_programs),
                per_pass(&r, s.flash_page_reads),
                per_pass(&r, s.block_erases),
                (r.per_pass(r.write_busy_ns) / 1e9).into(),
                (r.per_pass(r.energy_pj()) / 1e12).into(),
                r.first.merges.into(),
                r.first.block_erases.into(),
            ]);
            if (workload, pool) == (SynthWorkload::T3, 60) {
                t3_60.push(r);
            }
        }
    }
    let [ftl, native, roomy_ftl, roomy_native] = t3_60.as_slice() else { unreachable!("four t3 runs at 60 MB") };
    let (f, n) = (&ftl.stats, &native.stats);
    // The FTL form's whole-page programs that are neither the layer's writes nor merges: its
    // GC's copies of whole pages.
    let layer_pages = f.merge_page_writes + f.out_of_place_writes + f.direct_writes;
    let seconds = |r: &RunResult| r.per_pass(r.write_busy_ns) / 1e9;
    // The share of the FTL form's excess over the native form (erases, write time) that the
    // roomier flash removes.
    let gone = |as_run: f64, roomy: f64, native: f64, roomy_native: f64| {
        let excess = as_run - native;
        if excess > 0.0 {
            (as_run - roomy - (native - roomy_native)) / excess
        } else {
            0.0
        }
    };
    let erases = |r: &RunResult| r.per_pass(r.stats.block_erases);
    let erases_gone = gone(erases(ftl), erases(roomy_ftl), erases(native), erases(roomy_native));
    let time_gone = gone(seconds(ftl), seconds(roomy_ftl), seconds(native), seconds(roomy_native));
    let note = format!(
        "IPL in its own layout (buffer.kind = ipl-native, last table): each 64-page erase unit holds 60 data pages and 4 log pages of 512 B sectors; a logical unit maps to a physical one, and a merge reads the unit's live pages and log pages once each, programs the pages into a free erased unit and erases the old one. There is no FTL, so no other garbage collection, and a change too large for a sector, which the FTL-layered IPL writes out of place, merges its unit with the new page (so does the ageing pass's every overwrite, before the window). Where the forms differ (t3, 60 MB pool, per pass of the window): the FTL-layered IPL's {:.0} page programs are {:.0} merge pages, {:.0} out-of-place writes, {:.0} first writes and {:.0} whole-page copies by the FTL's garbage collector ({:.0} GC copies in all, the partially programmed log pages among them copied sector run by sector run: {:.0} sector programs against {:.0} logged writes), and its {:.0} erases are the GC's; the native form copies nothing: its {:.0} merges ({:.0} of them for changes too large for a sector) program {:.0} pages and erase {:.0} units. Isolated on a flash with 20% more blocks, 25% over-provisioned (last two rows): the FTL form's GC copies fall to {:.0} and its erases to {:.0}, write time {:.2} s → {:.2} s, while the native form erases {:.0} units (as run: {:.0}) in {:.2} s (as run: {:.2} s): {:.0}% of the FTL form's erases beyond the native form's, and {:.0}% of its write time beyond the native form's, go with the garbage collection the roomier flash spares, so the difference as run is {} the FTL's garbage collection in steady state at 10% over-provisioning.",
        ftl.per_pass(f.flash_page_programs),
        ftl.per_pass(f.merge_page_writes),
        ftl.per_pass(f.out_of_place_writes),
        ftl.per_pass(f.direct_writes),
        ftl.per_pass(f.flash_page_programs.saturating_sub(layer_pages)),
        ftl.per_pass(f.gc_page_copies),
        ftl.per_pass(f.flash_sector_programs),
        ftl.per_pass(f.logged_writes),
        ftl.per_pass(f.block_erases),
        native.per_pass(n.merges),
        native.per_pass(n.out_of_place_writes),
        native.per_pass(n.flash_page_programs),
        native.per_pass(n.block_erases),
        roomy_ftl.per_pass(roomy_ftl.stats.gc_page_copies),
        roomy_ftl.per_pass(roomy_ftl.stats.block_erases),
        seconds(ftl),
        seconds(roomy_ftl),
        roomy_native.per_pass(roomy_native.stats.block_erases),
        native.per_pass(n.block_erases),
        seconds(roomy_native),
        seconds(native),
        100.0 * erases_gone,
        100.0 * time_gone,
        if erases_gone.min(time_gone) >= 0.5 { "mostly" } else { "only in part" },
    );
    (table, note)
}

/// `thesis-fig5-8`: dedup and the PCM log combined, against the baseline.
#[derive(Debug)]
pub struct Combined;

impl Experiment for Combined {
    fn id(&self) -> &'static str {
        "thesis-fig5-8"
    }
    fn title(&self) -> &'static str {
        "Figure 5.8: deduplication and the PCM log buffer combined against the baseline"
    }
    fn source(&self) -> &'static str {
        "seed 000 (Pathak, NUS 2011), Section 5.1.2, Figure 5.8 (write efficiency, lifetime, power)"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let fail = failed(self.id());
        let divisor = scale_divisor(ctx.scale);
        let footprint_mb = 1024 / divisor;
        let config = ssd_config(footprint_mb, ctx.seed);
        let pcm = pcm_bytes(ctx, PCM_MB);
        let paper = |id: &str| papers::claim(id).paper_display();
        let mut table = Table::new(
            format!(
                "Figure 5.8: against the baseline, per pass over passes 5–8 (thesis, 16 MB PCM: lifetime about {}, energy {}), the first pass beside",
                paper("thesis-fig5-8-lifetime"),
                paper("thesis-fig5-8-energy")
            ),
            &[
                "workload",
                "configuration",
                "delta",
                "flash programs in pages",
                "erases",
                "write efficiency (host pages / flash programs in pages)",
                "lifetime × (erases, baseline / this)",
                "energy % of baseline",
                "lifetime ×, first pass",
                "energy % of baseline, first pass",
            ],
        );
        let runs = [
            ("baseline", Kind::Baseline, false),
            ("dedup", Kind::Dedup, false),
            ("PCM log", Kind::PcmLog, false),
            ("dedup + PCM log", Kind::PcmLog, true),
            ("PCM log, logged-pages merges", Kind::PcmLogLoggedPages, false),
        ];
        let transaction = [SynthWorkload::T1, SynthWorkload::T2, SynthWorkload::T3];
        let pblocks = pcm_log_pblocks(&config, pcm);
        let pages_per_block = u64::from(config.flash.pages_per_block);
        let mut mechanism = Table::new(
            format!("Where t1–t3's updates go, per pass over passes 5–8 (16 MB PCM: {pblocks} P-blocks; generator deltas; PCM log with live-block merges unless named)"),
            &[
                "workload",
                "host page writes",
                "duplicates the filter removes (dedup + PCM log)",
                "unchanged writes the PCM log alone skips",
                "updates logged",
                "distinct logical blocks updated",
                "updated blocks ÷ P-blocks",
                "updates to the P-block-count hottest blocks, %",
                "merges",
                "updates logged per merge",
                "pages per merge, live-block / logged-pages",
                "lifetime ×, by erases / by flash programs",
                "PCM share of energy, %",
            ],
        );
        // Per transaction workload: distinct blocks updated, updates logged per merge, the
        // live-block and logged-pages lifetimes, the PCM share of energy, and whether the
        // filter removed exactly the writes the log layer skips.
        let mut why_points: Vec<(u64, f64, f64, f64, f64, bool)> = Vec::new();
        let mut hottest_max = 0.0f64;
        let bar = ctx.progress(self.id(), (SynthWorkload::ALL.len() * (runs.len() + 4) + 2 * transaction.len()) as u64);
        let mut lifetime_points = Vec::new();
        let mut energy_points = Vec::new();
        let mut undefined_lifetimes = Vec::new();
        let (mut dedup_helps, mut log_helps, mut combined_better) = (true, true, true);
        // Write efficiency (Figure 5.8(a)): dedup + PCM log against the baseline, and each
        // part alone beside, per workload.
        let mut efficiency_improves = true;
        let mut efficiency_words = Vec::new();
        // dedup + PCM log's lifetime on t1–t3, where the PCM log acts.
        let mut transaction_lifetimes = Vec::new();
        let roomy = roomier(&config);
        let mut plan = Vec::new();
        for workload in SynthWorkload::ALL {
            let params = synth_params(workload, ctx.scale, ctx.seed, 60);
            for (_, kind, filter) in runs {
                plan.push(SteadyPart::new(kind, &config, pcm, params, filter, Delta::Generator));
            }
            for (_, kind, filter) in [runs[2], runs[3]] {
                plan.extend(Delta::BAND.map(|delta| SteadyPart::new(kind, &config, pcm, params, filter, delta)));
            }
            if transaction.contains(&workload) {
                for kind in [Kind::Baseline, Kind::PcmLogLoggedPages] {
                    plan.push(SteadyPart::new(kind, &roomy, pcm, params, false, Delta::Generator));
                }
            }
        }
        let steady_runs = SteadyRuns::run(ctx, self.id(), plan, || bar.inc(1))?;
        let mut dedup_energy = 0.0f64;
        let mut t3_baseline = None;
        // Per workload: the PCM log's lifetime with live-block and logged-pages merges, and
        // the latter's energy.
        let mut by_workload = Vec::new();
        // Per transaction workload: the baseline's erases and the logged-pages PCM log's
        // lifetime, at the experiment's over-provisioning.
        let mut at_op = Vec::new();
        for (i, workload) in SynthWorkload::ALL.into_iter().enumerate() {
            let params = synth_params(workload, ctx.scale, ctx.seed, 60);
            let mut results: Vec<RunResult> = Vec::new();
            let mut rows = Vec::new();
            for (name, kind, filter) in runs {
                results.push(steady_runs.get(kind, &config, pcm, params, filter, Delta::Generator));
                rows.push((name, Delta::Generator, results.len() - 1));
            }
            for (name, kind, filter) in [runs[2], runs[3]] {
                for delta in Delta::BAND {
                    results.push(steady_runs.get(kind, &config, pcm, params, filter, delta));
                    rows.push((name, delta, results.len() - 1));
                }
            }
            let base = &results[0];
            // Rows 0 and 1 (baseline, dedup) have no log layer, so no delta.
            for (name, delta, at) in rows {
                let r = &results[at];
                table.row(vec![
                    workload.name().into(),
                    name.into(),
                    (if at < 2 { "-" } else { delta.name() }).into(),
                    (r.stats.flash_programs_in_pages() / r.passes.max(1) as f64).into(),
                    per_pass(r, r.stats.block_erases),
                    write_efficiency(r).into(),
                    lifetime_cell(base, r),
                    energy_percent(base, r).into(),
                    first_lifetime_cell(base, r),
                    first_energy_percent(base, r).into(),
                ]);
            }
            by_workload.push(format!(
                "{} {} / {} / {:.0}%",
                workload.name(),
                lifetime(base, &results[2]).map_or_else(str::to_string, |l| format!("{l:.2}×")),
                lifetime(base, &results[4]).map_or_else(str::to_string, |l| format!("{l:.2}×")),
                energy_percent(base, &results[4])
            ));
            if transaction.contains(&workload) {
                at_op.push((base.stats.block_erases, lifetime(base, &results[4]).ok()));
                let set = working_set(params, pages_per_block, pblocks).map_err(&fail)?;
                let (log, combined, logged) = (&results[2], &results[3], &results[4]);
                let per_merge = log.stats.logged_writes as f64 / log.stats.merges.max(1) as f64;
                let pages_per_merge = |r: &RunResult| r.stats.merge_page_writes as f64 / r.stats.merges.max(1) as f64;
                let pcm_share = 100.0 * log.stats.pcm_energy_pj as f64 / log.energy_pj().max(1) as f64;
                let by_programs = base.stats.flash_programs_in_pages() / log.stats.flash_programs_in_pages().max(1.0);
                mechanism.row(vec![
                    workload.name().into(),
                    per_pass(log, log.pages_written),
                    per_pass(combined, combined.pages_filtered),
                    per_pass(log, log.stats.unchanged_writes),
                    per_pass(log, log.stats.logged_writes),
                    set.blocks.into(),
                    (set.blocks as f64 / pblocks as f64).into(),
                    set.hottest_share_percent.into(),
                    per_pass(log, log.stats.merges),
                    per_merge.into(),
                    format!("{:.1} / {:.2}", pages_per_merge(log), pages_per_merge(logged)).into(),
                    format!("{} / {by_programs:.3}", lifetime_cell(base, log).display()).into(),
                    pcm_share.into(),
                ]);
                hottest_max = hottest_max.max(set.hottest_share_percent);
                why_points.push((
                    set.blocks,
                    per_merge,
                    lifetime(base, log).unwrap_or(f64::NAN),
                    lifetime(base, logged).unwrap_or(f64::NAN),
                    pcm_share,
                    combined.pages_filtered + combined.stats.unchanged_writes == log.stats.unchanged_writes
                        && combined.stats.block_erases == log.stats.block_erases,
                ));
            }
            let combined = &results[3];
            let gain = |r: &RunResult| write_efficiency(r) / write_efficiency(base);
            efficiency_improves &= gain(combined) > 1.0;
            efficiency_words.push(format!(
                "{} {:.3}× (dedup {:.3}×, PCM log {:.3}×)",
                workload.name(),
                gain(combined),
                gain(&results[1]),
                gain(&results[2])
            ));
            if transaction.contains(&workload) {
                transaction_lifetimes.push((workload, lifetime(base, combined)));
            }
            match lifetime(base, combined) {
                Ok(l) => lifetime_points.push((i as f64 + 1.0, l)),
                Err(why) => undefined_lifetimes.push(format!("{} ({why})", workload.name())),
            }
            energy_points.push((i as f64 + 1.0, energy_percent(base, combined)));
            // Better than the baseline: more host pages per flash program, fewer erases
            // (longer lifetime), less energy.
            let better = |r: &RunResult| {
                r.pages_written as f64 * base.stats.flash_programs_in_pages()
                    > base.pages_written as f64 * r.stats.flash_programs_in_pages()
                    && r.stats.block_erases < base.stats.block_erases
                    && r.energy_pj() < base.energy_pj()
            };
            dedup_helps &= better(&results[1]);
            dedup_energy = dedup_energy.max(energy_percent(base, &results[1]));
            log_helps &= better(&results[2]);
            combined_better &= combined.stats.block_erases < results[1].stats.block_erases
                && combined.stats.block_erases < results[2].stats.block_erases;
            if workload == SynthWorkload::T3 {
                t3_baseline = Some(base.clone());
            }
        }
        // The same runs on an SSD with more spare blocks: does the lifetime ratio follow the
        // baseline's garbage-collection cost?
        let mut op_notes = Vec::new();
        let (mut ratio_change_max, mut erase_drop_min) = (0.0f64, f64::INFINITY);
        for (workload, &(erases, ratio)) in transaction.into_iter().zip(&at_op) {
            let params = synth_params(workload, ctx.scale, ctx.seed, 60);
            let base = steady_runs.get(Kind::Baseline, &roomy, pcm, params, false, Delta::Generator);
            let logged = steady_runs.get(Kind::PcmLogLoggedPages, &roomy, pcm, params, false, Delta::Generator);
            let roomy_ratio = lifetime(&base, &logged).ok();
            if let (Some(a), Some(b)) = (ratio, roomy_ratio) {
                ratio_change_max = ratio_change_max.max((b / a - 1.0).abs());
            }
            erase_drop_min = erase_drop_min.min(1.0 - base.stats.block_erases as f64 / erases.max(1) as f64);
            let shown = |r: Option<f64>| r.map_or_else(|| "n/a".to_string(), |l| format!("{l:.2}×"));
            op_notes.push(format!(
                "{} baseline erases per pass {:.0} → {:.0}, lifetime {} → {}",
                workload.name(),
                erases as f64 / base.passes.max(1) as f64,
                base.per_pass(base.stats.block_erases),
                shown(ratio),
                shown(roomy_ratio)
            ));
        }
        bar.finish_and_clear();
        // The geometric mean over t1–t3, defined when every one of them is.
        let transaction_geomean = transaction_lifetimes
            .iter()
            .map(|(_, l)| l.ok().map(f64::ln))
            .sum::<Option<f64>>()
            .map(|sum| (sum / transaction_lifetimes.len() as f64).exp());
        let energy = energy_points.iter().map(|p| p.1).fold(f64::NAN, f64::max);
        let mut plot =
            Plot::new("Figure 5.8: dedup + PCM log against the baseline", "workload (1 = d1 … 5 = t3)", "ratio");
        plot.series("lifetime ×", lifetime_points);
        plot.series("energy % / 100", energy_points.iter().map(|&(x, y)| (x, y / 100.0)).collect());
        let t3_baseline = t3_baseline.expect("t3 ran");
        let mut notes = vec![
            steady_state_note(&t3_baseline),
            WINDOW_NOTE.into(),
            "Lifetime is the ratio of block erases in the measured window, baseline over this configuration: with even wear, lifetime is inversely proportional to erases per host byte. It is n/a only where an erase count is zero, with the reason in the cell.".into(),
            "“dedup + PCM log” puts an exact fingerprint filter (the thesis's maximum-size store) in front of the PCM log layer: a write whose content is live elsewhere only remaps the page. The remapping is modelled, not stored (the FTL's own deduplication, with its bounded PCM fingerprint store, is not used here), so its reads are not checked in this run.".into(),
            "“PCM log, logged-pages merges” is the PCM log with buffer.merge = logged-pages: a merge rewrites only the pages with records. The difference to “PCM log” isolates the cost of rewriting a merged block's other live pages.".into(),
            DELTA_NOTE.into(),
            format!("Measured: deduplication alone uses at most {dedup_energy:.0}% of the baseline's energy here. The scorecard's lifetime is “dedup + PCM log”'s on each of t1–t3 (the workloads where the PCM log acts) and their geometric mean, its energy the largest over the five workloads, with the generator's deltas."),
            format!("Write efficiency (Figure 5.8(a)), host pages per flash program ÷ the baseline's, dedup + PCM log (each part alone): {}.", efficiency_words.join("; ")),
            format!("What isolates the difference to the thesis: the PCM log's lifetime against the baseline with live-block merges / with logged-pages merges / the latter's energy %, by workload: {}. The desktop workloads write whole pages of new content, which no log takes, so the PCM log alone matches the baseline there; on t1–t3 the two merge scopes differ only in whether a merge rewrites the block's other live pages. thesis-pcm-capacity isolates the capacity (16 MB against 128 MB), thesis-replacement the policy (against Belady's bound), and thesis-fig5-8-why the number of updated blocks against the P-blocks.", by_workload.join("; ")),
        ];
        notes.push(format!(
            "Over-provisioning: the baseline and the logged-pages PCM log again on t1–t3 with ftl.overprovision = {} and {}% more blocks (the same footprint) instead of {}: {}. The baseline's erases fall by at least {:.0}%, the lifetime ratio changes by at most {:.0}%.",
            roomy.ftl.overprovision,
            ROOMY_EXTRA_BLOCKS_PERCENT,
            config.ftl.overprovision,
            op_notes.join("; "),
            100.0 * erase_drop_min,
            100.0 * ratio_change_max
        ));
        if !undefined_lifetimes.is_empty() {
            notes.push(format!(
                "Left out of the lifetime claim and plot, where a ratio is undefined: {}.",
                undefined_lifetimes.join(", ")
            ));
        }
        let mut outcome = Outcome {
            summary: format!(
                "All five synthetic workloads (footprint {footprint_mb} MB, 60 MB pool scaled by 1/{divisor}, PCM {} KB = 16 MB scaled) in steady state through the baseline page-mapped FTL, core's deduplicating FTL, the PCM log buffer, and the PCM log behind an exact duplicate filter. The thesis states about {} lifetime at {} energy with 16 MB of PCM.",
                pcm >> 10,
                paper("thesis-fig5-8-lifetime"),
                paper("thesis-fig5-8-energy")
            ),
            config: json!({"scale": ctx.scale.name(), "seed": ctx.seed, "pcm_bytes": pcm, "ssd": config,
                "warmup": "fill, then one random whole-page overwrite pass of the footprint; each page ends it with its load content; then 8 passes of the workload, passes 5–8 measured"}),
            tables: vec![table, mechanism],
            plots: vec![plot],
            notes,
            ..Default::default()
        };
        let whole_blocks = format!(
            "t1–t3 update {} distinct logical blocks against {pblocks} P-blocks (the {pblocks} hottest take at most {hottest_max:.0}% of the updates), so a P-block is replaced, and its block merged, every {} logged updates; a merge rewrites the whole logical block (lifetime {}), only its logged pages would give {}. thesis-fig5-8-why isolates it: at least 4× only while the updated blocks fit the P-blocks. d1–d2 write whole pages, never logged (notes).",
            span(&why_points, |p| p.0 as f64, 0),
            span(&why_points, |p| p.1, 2),
            span_x(&why_points, |p| p.2),
            span_x(&why_points, |p| p.3),
        );
        let energy_why = format!(
            "The PCM is at most {:.1e}% of the PCM log's energy on t1–t3; the rest is flash, dominated by the merges' page programs and reads, so energy follows the lifetime's mechanism: {whole_blocks}",
            why_points.iter().map(|p| p.4).fold(0.0, f64::max)
        );
        let no_gain = if why_points.iter().all(|p| p.5) {
            "On t1–t3 every page the duplicate filter removes is one the PCM log alone skips as unchanged (a rolled-back page goes out with its old content and no changed bytes: removed plus still skipped equals the PCM log's unchanged writes), so dedup + PCM log erases as many blocks as the PCM log alone (second table)."
        } else {
            "On t1–t3 the pages the duplicate filter removes are not all among the PCM log's unchanged writes (second table)."
        };
        let combined_why = format!("{no_gain} {whole_blocks}");
        outcome.notes.push(format!(
            "Where t1–t3's updates go (second table): {}. A live-block merge writes 64 pages, so at fewer than 64 logged updates per merge the merges program more pages than the updates they took out of flash. {no_gain}",
            why_points
                .iter()
                .zip(transaction)
                .map(|(p, w)| format!(
                    "{} updates {} blocks ({:.1}× the P-blocks), {:.2} logged updates per merge",
                    w.name(),
                    p.0,
                    p.0 as f64 / pblocks as f64,
                    p.1
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ));
        if let Some(geomean) = transaction_geomean {
            papers::measure_explained(&mut outcome, "thesis-fig5-8-lifetime", geomean, &whole_blocks);
        }
        for (workload, l) in &transaction_lifetimes {
            if let Ok(l) = l {
                let id = format!("thesis-fig5-8-lifetime-{}", workload.name());
                papers::measure_explained(&mut outcome, &id, *l, &whole_blocks);
            }
        }
        papers::holds_explained(
            &mut outcome,
            "thesis-fig5-8-write-efficiency",
            efficiency_improves,
            &format!("Per workload (notes): {}. {whole_blocks}", efficiency_words.join("; ")),
        );
        papers::measure_explained(&mut outcome, "thesis-fig5-8-energy", energy, &energy_why);
        papers::holds_explained(
            &mut outcome,
            "thesis-fig5-8-dedup-alone",
            dedup_helps,
            "See the dedup rows of the table: a workload where deduplication does not cut erases, programs or energy.",
        );
        papers::holds_explained(&mut outcome, "thesis-fig5-8-pcm-log-alone", log_helps, &whole_blocks);
        papers::holds_explained(&mut outcome, "thesis-fig5-8-combined-better", combined_better, &combined_why);
        Ok(outcome)
    }
}

/// The most-written P-block's sector writes over the mean P-block's (NaN without P-blocks).
fn pblock_spread(writes: &[u64]) -> f64 {
    let max = writes.iter().copied().max().unwrap_or(0) as f64;
    max * writes.len() as f64 / writes.iter().sum::<u64>() as f64
}

/// Of a run's P-block replacements, the share whose victim was the P-block taken last, %.
fn newest_share(r: &RunResult) -> f64 {
    100.0 * r.replacements.of_newest as f64 / r.replacements.total.max(1) as f64
}

/// Write efficiency (Figure 5.8(a)): host pages per page of flash programs.
fn write_efficiency(r: &RunResult) -> f64 {
    r.pages_written as f64 / r.stats.flash_programs_in_pages().max(1.0)
}

/// `lo–hi` of `f` over `points` with `digits` decimals (one value when they agree).
fn span<T>(points: &[T], f: impl Fn(&T) -> f64, digits: usize) -> String {
    let lo = points.iter().map(&f).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(&f).fold(f64::NEG_INFINITY, f64::max);
    if format!("{lo:.digits$}") == format!("{hi:.digits$}") {
        format!("{lo:.digits$}")
    } else {
        format!("{lo:.digits$}–{hi:.digits$}")
    }
}

/// [`span`] of a ratio, with three significant decimals and a ×.
fn span_x<T>(points: &[T], f: impl Fn(&T) -> f64) -> String {
    format!("{}×", span(points, f, 3))
}

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

/// PCM sizes of the tpcc-small sweep, MB (the trace's SSD holds 1 GB at every scale); the
/// boundaries are then found between neighbours by bisection, to 1 MB.
const TRACE_SWEEP_MB: [u64; 6] = [16, 32, 48, 64, 96, 128];

/// One point of the tpcc-small sweep: the PCM log with `pcm_mb` against the baseline, per
/// pass over the steady window (lifetime `None`: no block erased, unbounded).
#[derive(Debug, Clone, Copy)]
struct TracePoint {
    pcm_mb: u64,
    lifetime: Option<f64>,
    energy_percent: f64,
}

/// Where a quantity of the sweep first holds, ascending in PCM: the smallest size measured
/// to hold with the size 1 MB below measured not to (`None`: it holds at every size or at
/// none; `below` then says which).
#[derive(Debug, Clone, Copy)]
struct Boundary {
    at_mb: Option<u64>,
    holds_everywhere: bool,
}

/// Bisects for the smallest PCM size at which `holds` is true between the first pair of
/// neighbouring `points` (ascending) where it turns from false to true, running `measure`
/// at each size it tries; the points it measured are appended to `points`.
fn bisect(
    points: &mut Vec<TracePoint>,
    holds: impl Fn(&TracePoint) -> bool,
    measure: impl Fn(u64) -> Result<TracePoint, LabError>,
) -> Result<Boundary, LabError> {
    points.sort_by_key(|p| p.pcm_mb);
    if points.iter().all(&holds) {
        return Ok(Boundary { at_mb: None, holds_everywhere: true });
    }
    let Some(turn) = points.windows(2).position(|w| !holds(&w[0]) && holds(&w[1])) else {
        return Ok(Boundary { at_mb: None, holds_everywhere: false });
    };
    let (mut lo, mut hi) = (points[turn].pcm_mb, points[turn + 1].pcm_mb);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let point = match points.iter().find(|p| p.pcm_mb == mid) {
            Some(p) => *p,
            None => {
                let p = measure(mid)?;
                points.push(p);
                p
            }
        };
        if holds(&point) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    points.sort_by_key(|p| p.pcm_mb);
    Ok(Boundary { at_mb: Some(hi), holds_everywhere: false })
}

/// `thesis-pcm-capacity`: d-PRAM and the PCM log at the thesis's 16 MB and at the 128 MB
/// its mapping table implies on t3, and the PCM log on tpcc-small swept over capacity to
/// where the thesis's lifetime and energy would hold.
#[derive(Debug)]
pub struct PcmCapacity;

impl Experiment for PcmCapacity {
    fn id(&self) -> &'static str {
        "thesis-pcm-capacity"
    }
    fn title(&self) -> &'static str {
        "PCM capacity: d-PRAM and the PCM log buffer with 16 MB and 128 MB of PCM, and where the thesis's 4× would hold on tpcc-small"
    }
    fn source(&self) -> &'static str {
        "seed 000 (Pathak, NUS 2011), Section 5.1.1 (16 MB of PCM, the 128 KB F-block → P-block table), Figures 5.5 and 5.8"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let divisor = scale_divisor(ctx.scale);
        let footprint_mb = 1024 / divisor;
        let config = ssd_config(footprint_mb, ctx.seed);
        let params = synth_params(SynthWorkload::T3, ctx.scale, ctx.seed, 60);
        let deltas = [Delta::Generator, Delta::Sampled, Delta::FullPage];
        let bar = ctx.progress(self.id(), 2 * (1 + 2 * 2 * deltas.len() as u64) + 1 + TRACE_SWEEP_MB.len() as u64);
        let mut plan = vec![SteadyPart::new(Kind::Baseline, &config, 0, params, false, Delta::Generator)];
        for pcm_mb in [PCM_MB, PCM_TABLE_MB] {
            for kind in [Kind::Dpram, Kind::PcmLog] {
                let bytes = pcm_bytes(ctx, pcm_mb);
                plan.extend(deltas.map(|delta| SteadyPart::new(kind, &config, bytes, params, false, delta)));
            }
        }
        let steady_runs = SteadyRuns::run(ctx, self.id(), plan.clone(), || bar.inc(1))?;
        // The same runs' first passes, drained at their end.
        let fail = failed(self.id());
        let drained = ctx.run_parts(
            &plan,
            |_| part_bytes(ctx.scale),
            |p| {
                let result =
                    steady_with(p.kind, &p.config, p.pcm_bytes, p.params, p.filter, p.delta, Warmup::AgedDrained);
                bar.inc(1);
                result.map_err(&fail)
            },
        )?;
        let drained_of = |kind, bytes, delta| {
            let part = SteadyPart::new(kind, &config, bytes, params, false, delta);
            drained[plan.iter().position(|p| *p == part).expect("planned")].clone()
        };
        let base = steady_runs.get(Kind::Baseline, &config, 0, params, false, Delta::Generator);
        let base_drained = drained_of(Kind::Baseline, 0, Delta::Generator);
        let mut table = Table::new(
            "PCM capacity (t3, 60 MB pool; equal PCM for d-PRAM and the PCM log), against the baseline page FTL, per pass over passes 5–8; beside, the first pass alone and the first pass drained at its end",
            &[
                "PCM (MB, thesis scale)",
                "scheme",
                "delta",
                "P-blocks or 64 B units",
                "merges",
                "flash programs in pages",
                "write amplification",
                "erases",
                "lifetime × baseline",
                "energy % of baseline",
                "erases, first pass",
                "lifetime × baseline, first pass",
                "erases, first pass drained",
                "lifetime × baseline, first pass drained",
            ],
        );
        table.row(vec![
            0u64.into(),
            Kind::Baseline.name().into(),
            "-".into(),
            0u64.into(),
            0u64.into(),
            (base.stats.flash_programs_in_pages() / base.passes.max(1) as f64).into(),
            write_amplification(&base).into(),
            per_pass(&base, base.stats.block_erases),
            1.0.into(),
            100.0.into(),
            base.first.block_erases.into(),
            1.0.into(),
            base_drained.stats.block_erases.into(),
            1.0.into(),
        ]);
        let mut merges = Vec::new();
        // Generator deltas: the drained first pass's erases over a steady pass's.
        let mut drain_over_steady = Vec::new();
        for pcm_mb in [PCM_MB, PCM_TABLE_MB] {
            let bytes = pcm_bytes(ctx, pcm_mb);
            for kind in [Kind::Dpram, Kind::PcmLog] {
                for delta in deltas {
                    let r = steady_runs.get(kind, &config, bytes, params, false, delta);
                    let d = drained_of(kind, bytes, delta);
                    // d-PRAM's 64 B units; the PCM log's P-blocks of 64 × 512 B plus a 16 B row.
                    let slots = if kind == Kind::Dpram { bytes / 64 } else { pcm_log_pblocks(&config, bytes) };
                    if delta == Delta::Generator {
                        merges.push(format!(
                            "{} at {pcm_mb} MB: {:.0} merges per pass (first pass {}, drained {})",
                            kind.name(),
                            r.per_pass(r.stats.merges),
                            r.first.merges,
                            d.stats.merges
                        ));
                        drain_over_steady.push(format!(
                            "{} at {pcm_mb} MB {:.2}×",
                            kind.name(),
                            d.stats.block_erases as f64 / r.per_pass(r.stats.block_erases).max(1.0)
                        ));
                    }
                    table.row(vec![
                        pcm_mb.into(),
                        kind.name().into(),
                        delta.name().into(),
                        slots.into(),
                        per_pass(&r, r.stats.merges),
                        (r.stats.flash_programs_in_pages() / r.passes.max(1) as f64).into(),
                        write_amplification(&r).into(),
                        per_pass(&r, r.stats.block_erases),
                        lifetime_cell(&base, &r),
                        energy_percent(&base, &r).into(),
                        r.first.block_erases.into(),
                        first_lifetime_cell(&base, &r),
                        d.stats.block_erases.into(),
                        lifetime_cell(&base_drained, &d),
                    ]);
                }
            }
        }

        // tpcc-small: the PCM log by PCM capacity, in steady state (the trace looped).
        let (trace, text) = mqsim::TRACES[0];
        let trace_ssd = mqsim::trace_config(ctx.seed);
        let with = |kind: BufferKind, pcm_mb: u64| {
            let mut c = trace_ssd.clone();
            (c.buffer.kind, c.buffer.delta, c.buffer.pcm_mb) = (kind, DeltaKind::Sampled, pcm_mb);
            c
        };
        let trace_base =
            mqsim::trace_run(trace, text, &with(BufferKind::None, trace_ssd.buffer.pcm_mb)).map_err(&fail)?;
        bar.inc(1);
        let updated_blocks = {
            let store = nvmdb_flash::build(&with(BufferKind::PcmLog, PCM_MB)).map_err(|e| fail(e.to_string()))?;
            let pages_per_block = u64::from(trace_ssd.flash.pages_per_block);
            let requests = mqsim::requests(text, store.as_ref()).map_err(&fail)?;
            let written = requests.iter().filter(|r| r.op == nvmdb_workload::Op::Write);
            let blocks: std::collections::BTreeSet<u64> = written
                .flat_map(|r| {
                    let first = r.offset_bytes / 4096;
                    (first..=(r.offset_bytes + r.len_bytes - 1) / 4096)
                        .map(|p| p % store.logical_pages() / pages_per_block)
                })
                .collect();
            blocks.len() as u64
        };
        let base_erases = trace_base.window.stats.block_erases;
        let measure = |pcm_mb: u64| -> Result<(TracePoint, mqsim::TraceRun), LabError> {
            let run = mqsim::trace_run(trace, text, &with(BufferKind::PcmLog, pcm_mb)).map_err(&fail)?;
            let erases = run.window.stats.block_erases;
            let lifetime = (erases > 0).then(|| base_erases as f64 / erases as f64);
            let energy_percent = 100.0 * run.window.energy_pj() as f64 / trace_base.window.energy_pj().max(1) as f64;
            Ok((TracePoint { pcm_mb, lifetime, energy_percent }, run))
        };
        let mut points: Vec<TracePoint> = ctx.run_parts(
            &TRACE_SWEEP_MB,
            |_| part_bytes(Scale::Paper),
            |&mb| {
                let point = measure(mb).map(|(p, _)| p);
                bar.inc(1);
                point
            },
        )?;
        let paper_lifetime = papers::stated_value("thesis-fig5-8-lifetime");
        let paper_energy = papers::stated_value("thesis-fig5-8-energy");
        let lifetime_holds = |p: &TracePoint| p.lifetime.is_none_or(|l| l >= paper_lifetime);
        let energy_holds = |p: &TracePoint| p.energy_percent < paper_energy;
        let lifetime_at = bisect(&mut points, lifetime_holds, |mb| measure(mb).map(|(p, _)| p))?;
        let energy_at = bisect(&mut points, energy_holds, |mb| measure(mb).map(|(p, _)| p))?;
        let pblocks_at = |mb: u64| pcm_log_pblocks(&trace_ssd, mb << 20);
        let mut sweep = Table::new(
            format!(
                "tpcc-small through the PCM log by PCM capacity (sampled deltas, the 1 GB SSD of thesis-mqsim-traces, aged), per pass over passes {}–{} of the trace looped, against the baseline page FTL; its writes update {updated_blocks} distinct logical blocks",
                mqsim::WARM_PASSES + 1,
                mqsim::WARM_PASSES + mqsim::MEASURED_PASSES
            ),
            &[
                "PCM (MB)",
                "P-blocks",
                "P-blocks ÷ updated blocks",
                "merges per pass",
                "erases per pass",
                "lifetime × baseline",
                "energy % of baseline",
                "lifetime × baseline, first pass",
            ],
        );
        for point in &points {
            let (_, run) = measure(point.pcm_mb)?;
            let pblocks = pblocks_at(point.pcm_mb);
            sweep.row(vec![
                point.pcm_mb.into(),
                pblocks.into(),
                (pblocks as f64 / updated_blocks.max(1) as f64).into(),
                run.per_pass(run.window.stats.merges).into(),
                run.per_pass(run.window.stats.block_erases).into(),
                mqsim::erase_ratio(base_erases, run.window.stats.block_erases),
                point.energy_percent.into(),
                mqsim::erase_ratio(trace_base.first.stats.block_erases, run.first.stats.block_erases),
            ]);
        }
        let mut boundaries = Table::new(
            "Where the thesis's Figure 5.8 values would hold on tpcc-small (the smallest PCM at which the PCM log reaches them, found by bisection to 1 MB from the sweep)",
            &[
                "quantity",
                "thesis",
                "smallest PCM at which it holds (MB)",
                "P-blocks there",
                "P-blocks ÷ updated blocks",
                "value 1 MB below",
                "value there",
            ],
        );
        let shown = |p: &TracePoint, lifetime: bool| -> Cell {
            match (lifetime, p.lifetime) {
                (true, Some(l)) => l.into(),
                (true, None) => "no block erased".into(),
                (false, _) => p.energy_percent.into(),
            }
        };
        let mut boundary_text = Vec::new();
        let mut lifetime_plot = Plot::new(
            "tpcc-small: PCM log lifetime against the baseline by PCM capacity (steady state)",
            "PCM, MB",
            "lifetime ×",
        );
        let mut energy_plot = Plot::new(
            "tpcc-small: PCM log energy against the baseline by PCM capacity (steady state)",
            "PCM, MB",
            "energy, % of baseline",
        );
        let (x_min, x_max) = (TRACE_SWEEP_MB[0] as f64, TRACE_SWEEP_MB[TRACE_SWEEP_MB.len() - 1] as f64);
        lifetime_plot
            .series("PCM log", points.iter().filter_map(|p| p.lifetime.map(|l| (p.pcm_mb as f64, l))).collect());
        lifetime_plot.series(
            format!("thesis: {paper_lifetime}× (Figure 5.8(b))"),
            vec![(x_min, paper_lifetime), (x_max, paper_lifetime)],
        );
        energy_plot.series("PCM log", points.iter().map(|p| (p.pcm_mb as f64, p.energy_percent)).collect());
        energy_plot.series(
            format!("thesis: < {paper_energy}% (Figure 5.8(c))"),
            vec![(x_min, paper_energy), (x_max, paper_energy)],
        );
        for (quantity, thesis, boundary, lifetime) in [
            ("lifetime × baseline", format!("{paper_lifetime}×"), lifetime_at, true),
            ("energy % of baseline", format!("< {paper_energy}%"), energy_at, false),
        ] {
            let Some(mb) = boundary.at_mb else {
                let why =
                    if boundary.holds_everywhere { "at every size swept" } else { "at no size swept (16–128 MB)" };
                boundaries.row(vec![
                    quantity.into(),
                    thesis.clone().into(),
                    why.into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                ]);
                boundary_text.push(format!("{quantity}: {thesis} holds {why}"));
                continue;
            };
            let at = |m: u64| *points.iter().find(|p| p.pcm_mb == m).expect("bisection measured both sides");
            let pblocks = pblocks_at(mb);
            boundaries.row(vec![
                quantity.into(),
                thesis.clone().into(),
                mb.into(),
                pblocks.into(),
                (pblocks as f64 / updated_blocks.max(1) as f64).into(),
                shown(&at(mb - 1), lifetime),
                shown(&at(mb), lifetime),
            ]);
            boundary_text.push(format!(
                "{quantity} reaches {thesis} from {mb} MB ({pblocks} P-blocks for {updated_blocks} updated blocks; {} at {} MB, {} at {mb} MB)",
                shown(&at(mb - 1), lifetime).display(),
                mb - 1,
                shown(&at(mb), lifetime).display()
            ));
            let plot = if lifetime { &mut lifetime_plot } else { &mut energy_plot };
            let ys: Vec<f64> = plot.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect();
            let (y_lo, y_hi) = (
                ys.iter().copied().fold(f64::INFINITY, f64::min),
                ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            );
            plot.series(format!("boundary: {mb} MB"), vec![(mb as f64, y_lo), (mb as f64, y_hi)]);
        }
        bar.finish_and_clear();
        // The scorecard's "would hold when" of the Figure 5.8 claims: the bisected PCM sizes.
        let would_hold = |boundary: Boundary| WouldHoldWhen {
            parameter: "PCM capacity (PCM log, tpcc-small)".into(),
            value: match boundary {
                Boundary { at_mb: Some(mb), .. } => Some(mb as f64),
                Boundary { holds_everywhere: true, .. } => Some(x_min),
                Boundary { .. } => None,
            },
            unit: "MB".into(),
            range_tried: [x_min, x_max],
            relation: Relation::AtLeast,
        };
        let mut outcome = Outcome {
            summary: format!(
                "t3 (database {footprint_mb} MB, 60 MB pool, scaled by 1/{divisor}) in steady state with the thesis's 16 MB of PCM and with 128 MB, the log region its 128 KB F-block → P-block table implies (one 32 B row, and so one 32 KB P-block, for each of the 1 GB database's 4,096 flash blocks); d-PRAM gets the same capacity. Generator deltas: {}. tpcc-small, looped to steady state, PCM log by capacity: {}.",
                merges.join("; "),
                boundary_text.join("; ")
            ),
            config: json!({"scale": ctx.scale.name(), "seed": ctx.seed, "footprint_mb": footprint_mb,
                "pcm_mb_thesis_scale": [PCM_MB, PCM_TABLE_MB], "ssd": config,
                "trace": format!("data/mqsim/{trace}"), "trace_ssd": trace_ssd, "trace_sweep_pcm_mb": TRACE_SWEEP_MB}),
            tables: vec![table, sweep, boundaries],
            plots: vec![lifetime_plot.log10_y(), energy_plot],
            notes: vec![
                "The 128 MB reading: the thesis allocates 128 KB to the F-block → P-block table; a 1 GB database has 4,096 flash blocks of 256 KB, so the table has 32 B for a row per flash block, and a P-block (64 log sectors of 512 B = 32 KB) for each is 128 MB. The PCM log's P-block count here is what fits beside its own 16 B table rows.".into(),
                steady_state_note(&base),
                WINDOW_NOTE.into(),
                format!(
                    "The drained columns: the first pass, then every pending log record merged at its end (`PageStore::drain`, as `nvmdb ssd replay --drain`), charged as merges during the run are. A drain pays at once for every record pending then, also for those a steady state keeps in its log and updates again, so a drained first pass is not a pass of the steady state either: its erases over a steady pass's, generator deltas: {}.",
                    drain_over_steady.join(", ")
                ),
                DELTA_NOTE.into(),
                format!(
                    "tpcc-small (second and third tables, plots): the trace's SSD (thesis-mqsim-traces: Table 5.1's 80 planes, 1 GB, aged), the PCM log with sampled deltas looped {} times, measured per pass over the last {} against the baseline's same window; the sweep's sizes are {TRACE_SWEEP_MB:?} MB, and each boundary is found by bisection between the neighbours where the quantity turns from failing to holding (the sizes it tried are rows of the second table). Lifetime holds at {paper_lifetime}× or more (or with no block erased), energy below {paper_energy}%. {}.",
                    mqsim::WARM_PASSES + mqsim::MEASURED_PASSES,
                    mqsim::MEASURED_PASSES,
                    boundary_text.join("; ")
                ),
            ],
            ..Default::default()
        };
        outcome.would_hold_when("thesis-fig5-8-lifetime", would_hold(lifetime_at));
        outcome.would_hold_when("thesis-fig5-8-energy", would_hold(energy_at));
        Ok(outcome)
    }
}

/// `thesis-replacement`: the PCM log's P-block replacement policies against Belady's
/// offline bound.
#[derive(Debug)]
pub struct Replacement;

impl Experiment for Replacement {
    fn id(&self) -> &'static str {
        "thesis-replacement"
    }
    fn title(&self) -> &'static str {
        "P-block replacement: least-popular (the thesis), LRU, and Belady's offline bound"
    }
    fn source(&self) -> &'static str {
        "seed 000 (Pathak, NUS 2011), Section 3.2.3 (replacement policy, block popularity)"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let divisor = scale_divisor(ctx.scale);
        let footprint_mb = 1024 / divisor;
        let config = ssd_config(footprint_mb, ctx.seed);
        let pcm = pcm_bytes(ctx, PCM_MB);
        let params = synth_params(SynthWorkload::T3, ctx.scale, ctx.seed, 60);
        // full-page logs nothing, so no P-block is ever replaced: only the other two.
        let deltas = [Delta::Generator, Delta::Sampled];
        let policies = [Some(ReplacementKind::LeastPopular), Some(ReplacementKind::Lru), None];
        let bar = ctx.progress(self.id(), (policies.len() * deltas.len()) as u64);
        let mut table = Table::new(
            "PCM log replacement (t3, 60 MB pool, 16 MB PCM, live-block merges), per pass over passes 5–8: Belady's bound replaces the P-block whose flash block is written again farthest in the future",
            &[
                "replacement",
                "delta",
                "merges",
                "pages written by merges",
                "flash page programs",
                "erases",
                "merges ÷ Belady's",
                "merges, first pass",
                "sector writes per P-block, most ÷ mean (whole run)",
                "replacements of the P-block taken last, % (whole run)",
            ],
        );
        // Merges, and the spread of sector writes over the P-blocks, by delta, in policy
        // order.
        let mut merges: Vec<Vec<u64>> = vec![Vec::new(); deltas.len()];
        let mut spreads: Vec<Vec<f64>> = vec![Vec::new(); deltas.len()];
        // The least-popular run's share of replacements of the P-block taken last, and its
        // replacements, generator deltas.
        let mut least_newest = None;
        let mut rows = Vec::new();
        // The run of a policy: its configuration and scheme.
        let policy_run = |replacement: Option<ReplacementKind>| {
            let mut config = config.clone();
            config.buffer.replacement = replacement.unwrap_or(ReplacementKind::LeastPopular);
            let kind = if replacement.is_some() { Kind::PcmLog } else { Kind::PcmLogOffline };
            (kind, config)
        };
        let mut plan = Vec::new();
        for delta in deltas {
            for replacement in policies {
                let (kind, config) = policy_run(replacement);
                plan.push(SteadyPart::new(kind, &config, pcm, params, false, delta));
            }
        }
        let steady_runs = SteadyRuns::run(ctx, self.id(), plan, || bar.inc(1))?;
        for (d, delta) in deltas.into_iter().enumerate() {
            for replacement in policies {
                let (kind, config) = policy_run(replacement);
                let r = steady_runs.get(kind, &config, pcm, params, false, delta);
                merges[d].push(r.stats.merges);
                spreads[d].push(pblock_spread(&r.pblock_sector_writes));
                if d == 0 && replacement == Some(ReplacementKind::LeastPopular) {
                    least_newest = Some((newest_share(&r), r.replacements.total));
                }
                let name = replacement.map_or("Belady (offline bound)", |r| match r {
                    ReplacementKind::LeastPopular => "least-popular (thesis)",
                    ReplacementKind::Lru => "LRU",
                });
                rows.push((name, delta, r));
            }
        }
        bar.finish_and_clear();
        for (name, delta, r) in rows {
            let d = deltas.iter().position(|&x| x == delta).expect("a listed delta");
            let bound = merges[d][2];
            let ratio: Cell = if bound == 0 {
                "n/a: Belady's bound merges none".into()
            } else {
                (r.stats.merges as f64 / bound as f64).into()
            };
            table.row(vec![
                name.into(),
                delta.name().into(),
                per_pass(&r, r.stats.merges),
                per_pass(&r, r.stats.merge_page_writes),
                per_pass(&r, r.stats.flash_page_programs),
                per_pass(&r, r.stats.block_erases),
                ratio,
                r.first.merges.into(),
                pblock_spread(&r.pblock_sector_writes).into(),
                newest_share(&r).into(),
            ]);
        }
        let [least, lru, belady] = [merges[0][0], merges[0][1], merges[0][2]];
        let [least_spread, lru_spread, belady_spread] = [spreads[0][0], spreads[0][1], spreads[0][2]];
        let (least_newest, least_replacements) = least_newest.expect("least-popular ran");
        let mut outcome = Outcome {
            summary: format!(
                "t3 (database {footprint_mb} MB, 60 MB pool, PCM {} KB = 16 MB scaled by 1/{divisor}) in steady state, generator deltas, merges per pass over passes 5–8: least-popular {:.0}, LRU {:.0}, Belady's offline bound {:.0}.",
                pcm >> 10,
                least as f64 / SYNTH_MEASURED_PASSES as f64,
                lru as f64 / SYNTH_MEASURED_PASSES as f64,
                belady as f64 / SYNTH_MEASURED_PASSES as f64
            ),
            config: json!({"scale": ctx.scale.name(), "seed": ctx.seed, "footprint_mb": footprint_mb, "pcm_bytes": pcm, "ssd": config}),
            tables: vec![table],
            plots: Vec::new(),
            notes: vec![
                "Every P-block replacement merges the victim's logical block, so merges count replacements plus merges of blocks whose log sectors are all altered. Belady's bound is computed offline from the run's future host writes, every pass's (a second generator of the same seed): his MIN rule, which makes the fewest replacements when every write to a flash block without a P-block must take one. Merges of blocks whose sectors are all altered free P-blocks outside that model, so the bound is exact for replacements only; it is not an online policy.".into(),
                "The thesis keeps the least popular P-block's logs out (popularity counts updates since the block was loaded), because \"it is preferable to keep those blocks which are frequently accessed\"; the scorecard row compares it with recency (LRU), the table with the bound.".into(),
                WINDOW_NOTE.into(),
                DELTA_NOTE.into(),
            ],
            ..Default::default()
        };
        papers::holds_explained(
            &mut outcome,
            "thesis-replacement-popular-beats-lru",
            least <= lru,
            "A P-block's popularity counts every update since its flash block was loaded, so a block that was hot long ago keeps its P-block while recently hot ones are replaced (table).",
        );
        outcome.notes.push(format!(
            "PCM wear over the P-blocks (generator deltas): the most-written P-block takes {least_spread:.2}× the mean P-block's sector writes under least-popular, {lru_spread:.2}× under LRU and {belady_spread:.2}× under Belady's bound, counted over the whole run (load and warm-up included, since wear is cumulative). A P-block's cells wear with its sector writes, so the most-written P-block wears out first; 1× would be even wear."
        ));
        papers::holds_explained(
            &mut outcome,
            "thesis-replacement-popular-evens-wear",
            least_spread <= lru_spread,
            &format!(
                "The most-written P-block takes {least_spread:.2}× the mean under least-popular against {lru_spread:.2}× under LRU: {least_newest:.1}% of least-popular's {} replacements chose the P-block taken last (table), whose popularity, reset when it was freed, is the lowest, so one P-block takes the log of every newly logged flash block in turn while the others keep theirs.",
                least_replacements
            ),
        );
        Ok(outcome)
    }
}
