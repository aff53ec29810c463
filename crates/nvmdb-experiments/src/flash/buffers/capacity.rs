//! `thesis-pcm-capacity`: d-PRAM and the PCM log buffer with 16 MB and 128 MB of PCM, and
//! where the thesis's 4× would hold on `tpcc-small`.

use nvmdb_flash::config::{BufferKind, DeltaKind};
use nvmdb_lab::{Cell, Experiment, LabError, Outcome, Plot, Relation, RunContext, Scale, Table, WouldHoldWhen};
use nvmdb_workload::synth::SynthWorkload;
use serde_json::json;

use super::{
    energy_percent, first_lifetime_cell, lifetime_cell, pcm_bytes, pcm_log_pblocks, per_pass, steady_state_note,
    steady_with, write_amplification, Delta, SteadyPart, SteadyRuns, DELTA_NOTE, PCM_MB, PCM_TABLE_MB, WINDOW_NOTE,
};
use crate::flash::mqsim;
use crate::flash::{failed, part_bytes, scale_divisor, ssd_config, synth_params, Kind, Warmup};
use crate::papers;

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
