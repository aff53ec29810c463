//! The cleaning simulations that `envy-cleaning-utilization`, `envy-cleaning-locality`
//! and `envy-hybrid-partition` share: the array they clean, warm-ups that run until the
//! cost settles, traces of the cost per turnover, and the simulations run once per
//! process ([`SIMULATIONS`]) for the policies and spans several experiments ask for.

use nvmdb_envy::workload::{self, Bimodal};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig, EnvyStats};
use nvmdb_lab::{LabError, Memo, RunContext, Scale};

use super::{envy_run_bytes, failed};

/// The cleaning experiments' array: 256 B pages, one bank, a buffer of 1/256 of the
/// flash (the 2 GB preset's ratio), filled to `utilization`.
pub(super) fn cleaning_config(scale: Scale, policy: CleaningPolicy, utilization: f64) -> EnvyConfig {
    let (segments, pages) = scale.pick((64, 256), (128, 2048));
    cleaning_array(EnvyConfig::small(segments, pages, segments * pages / 256, utilization), policy)
}

/// `config` as a cleaning run takes it: `policy`, no wear levelling, and no page bytes
/// kept in flash ([`EnvyConfig::keep_page_bytes`]). A cleaning run only fills and
/// updates, reading nothing back, and the engine takes no decision from a page's bytes,
/// so its every count and time is what it is with them (`nvmdb-envy`'s
/// `tests/integration/metadata_only.rs`), while copying them was most of its host memory traffic.
pub(super) fn cleaning_array(mut config: EnvyConfig, policy: CleaningPolicy) -> EnvyConfig {
    config.cleaning = policy;
    config.wear_threshold_erases = None;
    config.keep_page_bytes = false;
    config
}

/// Runs independent cleaning runs on the context's free threads
/// ([`RunContext::run_parts`]); results come in the order of `parts`.
pub(super) fn cleaning_parts<P: Sync, T: Send>(
    ctx: &RunContext,
    id: &str,
    parts: &[P],
    config: impl Fn(&P) -> EnvyConfig + Sync,
    run: impl Fn(&P) -> Result<T, LabError> + Sync,
) -> Result<Vec<T>, LabError> {
    let bar = ctx.progress(id, parts.len() as u64);
    let results = ctx.run_parts(
        parts,
        |p| envy_run_bytes(&config(p)),
        |p| {
            let result = run(p);
            bar.inc(1);
            result
        },
    );
    bar.finish_and_clear();
    results
}

/// A cleaning run's warm-up, in array turnovers of updates: at least `min`, then until
/// [`settled`], at most `cap`. With `cap` equal to `min` it is a fixed warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WarmUp {
    pub(super) min: u64,
    pub(super) cap: u64,
}

impl WarmUp {
    pub(super) const fn fixed(turnovers: u64) -> WarmUp {
        WarmUp { min: turnovers, cap: turnovers }
    }
}

/// The settling rule in the outcomes' configuration.
pub(super) const SETTLE_RULE: &str = "three equal windows over the last three quarters of the warm-up";

/// The settling rule's tolerance: the three windows' mean costs lie within it of the
/// largest.
pub(super) const SETTLE_TOLERANCE: f64 = 0.03;

/// Whether a run's per-turnover costs have settled: the last three quarters of the
/// turnovers so far, cut into three equal windows, have mean costs within
/// [`SETTLE_TOLERANCE`] of the largest. The windows grow with the run, so a dip in the
/// cost (locality gathering's falls below its steady state and recovers over tens to
/// hundreds of turnovers) cannot pass for a plateau as it can between two short
/// adjacent windows, and their noise shrinks as they grow.
pub(super) fn settled(costs: &[f64]) -> bool {
    let (n, w) = (costs.len(), costs.len() / 4);
    if w == 0 {
        return false;
    }
    let mean = |w: &[f64]| w.iter().sum::<f64>() / w.len() as f64;
    let means = [&costs[n - 3 * w..n - 2 * w], &costs[n - 2 * w..n - w], &costs[n - w..]].map(mean);
    let (lo, hi) = means.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &m| (lo.min(m), hi.max(m)));
    hi - lo < SETTLE_TOLERANCE * hi || hi == lo
}

/// The live share α of the cleanable segments (all but the spares) with the buffer's
/// pages excluded: the quantity FIFO's closed forms take.
pub(super) fn live_share(config: &EnvyConfig) -> f64 {
    (config.logical_pages - u64::from(config.flush_threshold_pages)) as f64
        / (u64::from(config.positions()) * u64::from(config.pages_per_segment)) as f64
}

/// Pages a run's redistribution pulled into cleaned partitions from their neighbours,
/// per page of the segments cleaned: cleaning programs beyond the cleaned live pages.
pub(super) fn pulled_share(s: &EnvyStats) -> f64 {
    (s.clean_programs - s.cleaned_live_pages) as f64 / s.cleaned_segment_pages as f64
}

/// Fills the space, warms up (`warm`), then measures `measured` turnovers.
pub(super) fn cleaning_run(
    config: EnvyConfig,
    dist: Bimodal,
    warm: WarmUp,
    measured: u64,
    ctx: &RunContext,
    id: &str,
) -> Result<EnvyStats, LabError> {
    Ok(cleaning_trace(config, dist, warm, measured, ctx, id)?.stats)
}

/// One turnover of a traced cleaning run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TurnoverPoint {
    /// Cleaning cost within the turnover.
    pub(super) cost: f64,
    /// Positions holding 90 % of the hot pages that are in flash.
    pub(super) hot_positions: usize,
}

/// A traced cleaning run.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CleaningTrace {
    /// The measured turnovers' counters.
    pub(super) stats: EnvyStats,
    /// Every turnover, warm-up included.
    pub(super) points: Vec<TurnoverPoint>,
    /// Warm-up turnovers run.
    pub(super) warm: u64,
    /// Whether the warm-up ended at its cap unsettled.
    pub(super) capped: bool,
    /// The lowest and highest live share of a partition's positions at the end.
    pub(super) partition_live_share: (f64, f64),
}

/// [`cleaning_run`], also giving each turnover's (warm-up included) cleaning cost and
/// how gathered the hot pages are.
fn cleaning_trace(
    config: EnvyConfig,
    dist: Bimodal,
    warm: WarmUp,
    measured: u64,
    ctx: &RunContext,
    id: &str,
) -> Result<CleaningTrace, LabError> {
    let mut traces = cleaning_traces(config, dist, &[Span { warm, measured }], ctx, id)?;
    Ok(traces.pop().expect("one trace per span"))
}

/// Where a cleaning run stops: its warm-up, then `measured` turnovers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) warm: WarmUp,
    pub(super) measured: u64,
}

/// [`cleaning_trace`] for several spans of the same run. Runs of one array, distribution
/// and seed stream take the same turnovers and differ only in where they stop (the counters
/// reset after the warm-up change nothing the simulation reads), so one simulation, run
/// to the last span's end, gives each span's trace: its counters since its warm-up ended,
/// its turnovers, and the partitions' live shares at its end. In the order of `spans`.
pub(super) fn cleaning_traces(
    config: EnvyConfig,
    dist: Bimodal,
    spans: &[Span],
    ctx: &RunContext,
    id: &str,
) -> Result<Vec<CleaningTrace>, LabError> {
    let mut envy = Envy::format(config).map_err(failed(id))?;
    let mut rng = ctx.rng(1);
    workload::fill(&mut envy).map_err(failed(id))?;
    let hot = dist.hot_pages(config.logical_pages);
    let mut points: Vec<TurnoverPoint> = Vec::new();
    // Per span: the turnover its warm-up ended at and the counters then.
    let mut warm_ends: Vec<Option<(u64, EnvyStats)>> = vec![None; spans.len()];
    let mut traces: Vec<Option<CleaningTrace>> = spans.iter().map(|_| None).collect();
    loop {
        let n = points.len() as u64;
        let costs: Vec<f64> = points.iter().map(|p| p.cost).collect();
        for (span, end) in spans.iter().zip(&mut warm_ends) {
            let warm = span.warm;
            if end.is_none() && n >= warm.min && (n >= warm.cap || settled(&costs)) {
                *end = Some((n, *envy.stats()));
            }
        }
        for ((span, end), trace) in spans.iter().zip(&warm_ends).zip(&mut traces) {
            if let (Some((w, base)), None) = (end, &trace) {
                if n == w + span.measured {
                    let warm_costs = &costs[..*w as usize];
                    *trace = Some(CleaningTrace {
                        stats: envy.stats().since(base),
                        points: points.clone(),
                        warm: *w,
                        capped: !settled(warm_costs) && span.warm.cap > span.warm.min,
                        partition_live_share: partition_live_share(&envy),
                    });
                }
            }
        }
        if traces.iter().all(Option::is_some) {
            return Ok(traces.into_iter().flatten().collect());
        }
        let before = *envy.stats();
        workload::update(&mut envy, dist, config.flash_pages(), &mut rng).map_err(failed(id))?;
        let after = *envy.stats();
        let cost = (after.clean_programs - before.clean_programs) as f64
            / (after.flush_programs - before.flush_programs) as f64;
        points.push(TurnoverPoint { cost, hot_positions: hot_positions_90(&envy, &hot) });
    }
}

/// The lowest and highest live share of a partition's positions.
pub(super) fn partition_live_share(envy: &Envy) -> (f64, f64) {
    let config = envy.config();
    let k = config.cleaning.partition_segments(config.positions()) as usize;
    let pages = f64::from(config.pages_per_segment);
    envy.position_live_pages()
        .chunks(k)
        .map(|c| c.iter().map(|&l| f64::from(l)).sum::<f64>() / (c.len() as f64 * pages))
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), share| (lo.min(share), hi.max(share)))
}

/// Cleaning runs as parts ([`cleaning_parts`]), one simulation per array and distribution:
/// each run is its configuration, distribution and span, and the runs that share an array
/// and a distribution come from one [`cleaning_traces`]. In the order of `runs`.
pub(super) fn shared_cleaning_parts(
    ctx: &RunContext,
    id: &str,
    runs: &[(EnvyConfig, Bimodal, Span)],
) -> Result<Vec<CleaningTrace>, LabError> {
    // Each simulation: its array and distribution, and its distinct spans.
    let mut simulations: Vec<(EnvyConfig, Bimodal, Vec<Span>)> = Vec::new();
    let mut slots = Vec::with_capacity(runs.len());
    for &(config, dist, span) in runs {
        let config = same_run_config(config);
        let i = match simulations.iter().position(|s| s.0 == config && s.1 == dist) {
            Some(i) => i,
            None => {
                simulations.push((config, dist, Vec::new()));
                simulations.len() - 1
            }
        };
        let spans = &mut simulations[i].2;
        let j = spans.iter().position(|&s| s == span).unwrap_or_else(|| {
            spans.push(span);
            spans.len() - 1
        });
        slots.push((i, j));
    }
    let traces = cleaning_parts(
        ctx,
        id,
        &simulations,
        |s| s.0,
        |(config, dist, spans)| shared_cleaning_traces(*config, *dist, spans, ctx, id),
    )?;
    Ok(slots.into_iter().map(|(i, j)| traces[i][j].clone()).collect())
}

/// The cleaning simulations [`shared_cleaning_traces`] ran in this process, keyed by every
/// input of the simulation. `envy-hybrid-partition`'s partitions of one segment and of
/// every segment are `envy-cleaning-locality`'s locality gathering and FIFO
/// ([`CleaningPolicy::canonical`]) under the same distributions and spans: in one
/// `nvmdb reproduce` the first of the two (they run one at a time) runs each, and the
/// other takes its traces.
pub(super) static SIMULATIONS: Memo<Vec<CleaningTrace>> = Memo::new();

/// [`cleaning_traces`], or its traces if this process ran the same simulation (array,
/// distribution, spans, seed) before. A second asker while the first runs waits for its
/// traces; they are the same whichever asks first.
fn shared_cleaning_traces(
    config: EnvyConfig,
    dist: Bimodal,
    spans: &[Span],
    ctx: &RunContext,
    id: &str,
) -> Result<Vec<CleaningTrace>, LabError> {
    // Every input of the simulation: `cleaning_traces` draws from the seed's stream 1,
    // and `id` names only the experiment in an error.
    let key = format!("{config:?} {dist:?} {spans:?} {}", ctx.seed);
    let run = || cleaning_traces(config, dist, spans, ctx, id).map_err(LabError::into_message);
    SIMULATIONS.get_or_run(key, run).map_err(|message| LabError::Failed { id: id.into(), message })
}

/// `config` in the form its run takes, so that runs that differ in nothing the run reads
/// are equal configurations and share one simulation ([`shared_cleaning_parts`]): the
/// policy in its canonical form ([`CleaningPolicy::canonical`]: hybrid with partitions of
/// one segment or of every segment runs as locality gathering or FIFO), and, without two
/// partitions, the redistribution step, which is not read then
/// ([`EnvyConfig::redistributes`]), as in the preset.
pub(super) fn same_run_config(mut config: EnvyConfig) -> EnvyConfig {
    config.cleaning = config.cleaning.canonical(config.positions());
    if !config.redistributes() {
        config.redistribution_divisor = EnvyConfig::PAPER_2GB.redistribution_divisor;
    }
    config
}

/// The fewest positions that hold 90 % of the `hot` pages found in flash.
pub(super) fn hot_positions_90(envy: &Envy, hot: &[u64]) -> usize {
    let positions = envy.page_positions();
    let mut per_position = vec![0u64; envy.config().positions() as usize];
    for &page in hot {
        if let Some(p) = positions[page as usize] {
            per_position[p as usize] += 1;
        }
    }
    let in_flash: u64 = per_position.iter().sum();
    per_position.sort_unstable_by(|a, b| b.cmp(a));
    let mut held = 0;
    per_position
        .iter()
        .take_while(|&&n| {
            let short = 10 * held < 9 * in_flash;
            held += n;
            short
        })
        .count()
}

/// Warm-up and measured turnovers of the utilisation experiment (greedy and FIFO only,
/// which reach their steady state within a few turnovers).
pub(super) fn turnovers(scale: Scale) -> (u64, u64) {
    scale.pick((2, 4), (3, 8))
}

/// Warm-up and measured turnovers of the experiments that run locality gathering and
/// hybrid. From a start with the hot pages scattered over every position, their
/// redistribution gathers hot data one neighbouring partition per clean. Locality
/// gathering's cost falls below its steady state and recovers over tens to hundreds of
/// turnovers, the longer the more positions and the smaller the segments (the shape
/// table of `envy-cleaning-locality`; BENCHMARKS.md has runs of 400 turnovers). At least
/// 32 turnovers, then until [`settled`], at most 400: on 64 × 256 pages under 80/20 the
/// rule settled after 142–355 turnovers in three seeds' runs of 400.
pub(super) fn gathering_turnovers(scale: Scale) -> (WarmUp, u64) {
    scale.pick((WarmUp { min: 32, cap: 400 }, 8), (WarmUp { min: 32, cap: 400 }, 8))
}

/// The warm-ups of several runs in words: their range, and the runs that reached the
/// cap unsettled.
pub(super) fn warm_up_words(warm: WarmUp, runs: &[(String, u64, bool)]) -> String {
    let lo = runs.iter().map(|r| r.1).min().unwrap_or(0);
    let hi = runs.iter().map(|r| r.1).max().unwrap_or(0);
    let capped: Vec<&str> = runs.iter().filter(|r| r.2).map(|r| r.0.as_str()).collect();
    let cap = if capped.is_empty() {
        format!("every run settled before the cap of {}", warm.cap)
    } else {
        format!(
            "{} of {} runs reached the cap of {} unsettled: {}",
            capped.len(),
            runs.len(),
            warm.cap,
            capped.join(", ")
        )
    };
    format!(
        "Each run warms up for at least {} turnovers and then until the last three quarters of its turnovers, cut \
         into three equal windows, have mean costs within {:.0} % of the largest; the warm-ups took {lo}–{hi} \
         turnovers, and {cap}.",
        warm.min,
        SETTLE_TOLERANCE * 100.0
    )
}
