//! `envy-hybrid-partition`: the hybrid policy's cleaning cost against its partition size,
//! and the sweep over segment counts.

use nvmdb_envy::analytic::{cleaning_cost, fifo_partition_cleaned_utilization};
use nvmdb_envy::workload::Bimodal;
use nvmdb_envy::{CleaningPolicy, EnvyConfig};
use nvmdb_lab::{Cell, Experiment, Footprint, LabError, Outcome, Plot, RunContext, Scale, Table};
use serde_json::json;

use super::cleaning::{
    cleaning_array, cleaning_config, gathering_turnovers, live_share, same_run_config, shared_cleaning_parts,
    warm_up_words, Span, SETTLE_RULE, SETTLE_TOLERANCE,
};
use super::SOURCE;

/// `envy-hybrid-partition`.
#[derive(Debug)]
pub struct HybridPartition;

impl Experiment for HybridPartition {
    fn id(&self) -> &'static str {
        "envy-hybrid-partition"
    }
    /// Measured on the 2-core machine of BENCHMARKS.md, its runs without page bytes
    /// (2026-11-24): quick scale 2.8 s of user CPU and 9 MB alone on one thread; paper
    /// scale 125 s of user CPU and 19 MB peak alone on one thread (`--jobs 1`, beside
    /// `envy-cleaning-locality`). In a reproduction, after `envy-cleaning-locality` and
    /// taking its shared simulations, 69 s of wall time. With page bytes it took 700 s
    /// alone at paper scale. With the segment-count sweep (2026-11-29, two threads on a
    /// busy machine): quick scale 2.4 s of user CPU, paper scale 103 s and 30 MB peak.
    fn footprint(&self, scale: Scale) -> Footprint {
        scale.pick(Footprint::new(64, 3.0), Footprint::new(64, 125.0))
    }
    fn title(&self) -> &'static str {
        "eNVy: hybrid cleaning cost against partition size"
    }
    fn source(&self) -> &'static str {
        SOURCE
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let (warm, measured) = gathering_turnovers(ctx.scale);
        let segments = cleaning_config(ctx.scale, CleaningPolicy::Fifo, 0.8).positions();
        let mut sizes: Vec<u32> = (0..).map(|i| 1u32 << i).take_while(|&k| k < segments).collect();
        sizes.push(segments);
        let dists = [Bimodal::UNIFORM, Bimodal { hot_access: 0.9, hot_data: 0.1 }];
        let mut table = Table::new(
            format!(
                "Hybrid cleaning cost at 80 % utilisation, {segments} cleanable segments; under uniform access also \
                 without redistribution (FIFO within closed partitions) beside FIFO's closed form within partitions \
                 of k"
            ),
            &[
                "segments per partition",
                "uniform",
                "90/10",
                "uniform, no redistribution",
                "closed form: FIFO within partitions",
                "warm-up turnovers: uniform",
                "90/10",
                "uniform, no redistribution",
            ],
        );
        let mut plot = Plot::new("Hybrid cleaning cost vs partition size", "segments per partition", "cleaning cost");
        let mut series = vec![Vec::new(); dists.len() + 1];
        // Each size under each distribution, then under uniform access without redistribution.
        let parts: Vec<(u32, Bimodal, bool)> = sizes
            .iter()
            .flat_map(|&k| dists.map(|dist| (k, dist, true)).into_iter().chain([(k, Bimodal::UNIFORM, false)]))
            .collect();
        let config_of = |&(k, _, redistribute): &(u32, Bimodal, bool)| {
            let mut config = cleaning_config(ctx.scale, CleaningPolicy::Hybrid { partition_segments: k }, 0.8);
            if !redistribute {
                config.redistribution_divisor = 0;
            }
            same_run_config(config)
        };
        let alpha = live_share(&config_of(&(1, Bimodal::UNIFORM, true)));
        let mut worst_deviation: f64 = 0.0;
        // All positions in one partition run alike with and without redistribution: one
        // simulation gives both.
        let span = Span { warm, measured };
        let runs: Vec<_> = parts.iter().map(|part| (config_of(part), part.1, span)).collect();
        let runs = shared_cleaning_parts(ctx, self.id(), &runs)?;
        let mut warm_ups = Vec::new();
        for (&k, row_runs) in sizes.iter().zip(runs.chunks(dists.len() + 1)) {
            let mut row: Vec<Cell> = vec![k.into()];
            for (d, run) in row_runs.iter().enumerate() {
                let cost = run.stats.cleaning_cost();
                row.push(cost.into());
                series[d].push((f64::from(k), cost));
                let label = dists.get(d).map_or("uniform without redistribution".into(), Bimodal::label);
                warm_ups.push((format!("{k} under {label}"), run.warm, run.capped));
            }
            let closed = cleaning_cost(fifo_partition_cleaned_utilization(alpha, k));
            let plain = row_runs[dists.len()].stats.cleaning_cost();
            worst_deviation = worst_deviation.max(((plain - closed) / closed).abs());
            row.push(closed.into());
            row.extend(row_runs.iter().map(|run| Cell::from(run.warm)));
            table.row(row);
        }
        let skewed = &series[1];
        let best = skewed.iter().copied().fold((0.0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        let mut outcome = Outcome::default();
        outcome.holds("envy-hybrid-partition-interior", best.0 > 1.0 && best.0 < f64::from(segments));
        plot.series("uniform", series[0].clone());
        plot.series("90/10", series[1].clone());
        plot.series("uniform, no redistribution", series[2].clone());
        outcome.summary = format!(
            "Partition size 1 is locality gathering and {segments} (all segments) is FIFO. Under 90/10 locality the \
             lowest cost, {:.3}, is at {} segments per partition.",
            best.1, best.0
        );
        outcome.config = json!({"segments": segments + 1, "utilization": 0.8, "sizes": sizes,
            "min_warm_turnovers": warm.min, "max_warm_turnovers": warm.cap, "settle_windows": SETTLE_RULE,
            "settle_tolerance": SETTLE_TOLERANCE, "measured_turnovers": measured, "seed": ctx.seed});
        outcome.notes.push(warm_up_words(warm, &warm_ups));
        let excess: Vec<f64> = series[0].iter().zip(&series[2]).map(|(with, without)| with.1 - without.1).collect();
        outcome.notes.push(format!(
            "Under uniform access without redistribution, hybrid is FIFO within closed partitions, and its cost \
             follows FIFO's closed form within partitions of k (crates/nvmdb-envy/src/analytic.rs) within {:.1} % \
             at every size, from {:.2} at 1 segment per partition to {:.2} at {segments}: the smaller the partition, \
             the sooner a segment is cleaned again after its last flushes. The preset's redistribution adds {:.2} to \
             {:.2} at the sizes with more than one partition.",
            worst_deviation * 100.0,
            series[2].first().map_or(f64::NAN, |p| p.1),
            series[2].last().map_or(f64::NAN, |p| p.1),
            excess[..excess.len() - 1].iter().copied().fold(f64::INFINITY, f64::min),
            excess[..excess.len() - 1].iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ));
        outcome.tables.push(table);
        outcome.plots.push(plot);
        let (segments_table, falls, segments_note) = segment_sweep(ctx, self.id(), span, &dists)?;
        outcome.tables.push(segments_table);
        outcome.notes.push(segments_note.clone());
        crate::papers::holds_explained(&mut outcome, "envy-hybrid-partition-segments", falls, &segments_note);
        Ok(outcome)
    }
}

/// Segment counts of the segment-count sweep: the array of [`cleaning_config`] cut into a
/// quarter to twice its segments.
fn segment_counts(scale: Scale) -> [u32; 4] {
    scale.pick([16, 32, 64, 128], [32, 64, 128, 256])
}

/// Partitions of the segment-count sweep, whatever the segment count.
const SWEEP_PARTITIONS: u32 = 4;

/// Hybrid cleaning at 80 % utilisation on the array of [`cleaning_config`] cut into
/// [`segment_counts`] segments, in [`SWEEP_PARTITIONS`] partitions, under `dists`: the table,
/// whether under every distribution the cost never rises by more than the settling
/// tolerance from one count to the next, and what the table shows in words.
fn segment_sweep(ctx: &RunContext, id: &str, span: Span, dists: &[Bimodal]) -> Result<(Table, bool, String), LabError> {
    let total = cleaning_config(ctx.scale, CleaningPolicy::Fifo, 0.8).flash_pages();
    let counts = segment_counts(ctx.scale);
    let config_of = |segments: u32| {
        let pages = u32::try_from(total / u64::from(segments)).expect("pages per segment fit in u32");
        let k = (segments / SWEEP_PARTITIONS).max(1);
        cleaning_array(
            EnvyConfig::small(segments, pages, segments * pages / 256, 0.8),
            CleaningPolicy::Hybrid { partition_segments: k },
        )
    };
    let runs: Vec<_> = counts.iter().flat_map(|&s| dists.iter().map(move |&d| (config_of(s), d, span))).collect();
    let traces = shared_cleaning_parts(ctx, id, &runs)?;
    let mut columns = vec![
        "segments".to_string(),
        "pages per segment".into(),
        "segments per partition".into(),
        "live share of cleanable flash α".into(),
        "closed form: FIFO within partitions at α".into(),
    ];
    columns.extend(dists.iter().map(|d| format!("cost, {}", d.label())));
    columns.extend(dists.iter().map(|d| format!("warm-up turnovers, {}", d.label())));
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut table = Table::new(
        format!(
            "Hybrid cleaning cost at 80 % utilisation against the number of segments the same {total} pages are cut into, in {SWEEP_PARTITIONS} partitions"
        ),
        &columns,
    );
    let mut costs = vec![Vec::new(); dists.len()];
    for (&segments, row_runs) in counts.iter().zip(traces.chunks(dists.len())) {
        let config = config_of(segments);
        let alpha = live_share(&config);
        let k = (segments / SWEEP_PARTITIONS).max(1);
        let mut row: Vec<Cell> = vec![
            segments.into(),
            config.pages_per_segment.into(),
            k.into(),
            alpha.into(),
            cleaning_cost(fifo_partition_cleaned_utilization(alpha, k)).into(),
        ];
        for (d, run) in row_runs.iter().enumerate() {
            costs[d].push(run.stats.cleaning_cost());
            row.push(run.stats.cleaning_cost().into());
        }
        row.extend(row_runs.iter().map(|run| Cell::from(run.warm)));
        table.row(row);
    }
    let falls = costs.iter().all(|c| c.windows(2).all(|w| w[1] <= w[0] * (1.0 + SETTLE_TOLERANCE)));
    let words: Vec<String> = dists
        .iter()
        .zip(&costs)
        .map(|(d, c)| {
            let shown: Vec<String> = c.iter().map(|x| format!("{x:.3}")).collect();
            format!("{} {}", d.label(), shown.join(" → "))
        })
        .collect();
    let note = format!(
        "Against the number of segments ({}; the same {total} pages, {SWEEP_PARTITIONS} partitions, the second table), hybrid's cost goes {}. More segments make each clean finer and the one spare segment a smaller share of the flash, so α falls with them too; the closed form of FIFO within partitions at each α and partition size is beside. A rise from one count to the next within the warm-ups' settling tolerance ({:.0} %) counts as none.",
        counts.map(|c| c.to_string()).join(", "),
        words.join("; "),
        SETTLE_TOLERANCE * 100.0
    );
    Ok((table, falls, note))
}
