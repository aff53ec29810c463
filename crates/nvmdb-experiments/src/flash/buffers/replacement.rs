//! `thesis-replacement`: the PCM log's P-block replacement policies: least-popular (the
//! thesis), LRU, and Belady's offline bound.

use nvmdb_flash::config::ReplacementKind;
use nvmdb_lab::{Cell, Experiment, LabError, Outcome, RunContext, Table};
use nvmdb_workload::synth::SynthWorkload;
use serde_json::json;

use super::{pcm_bytes, per_pass, Delta, SteadyPart, SteadyRuns, DELTA_NOTE, PCM_MB, WINDOW_NOTE};
use crate::flash::{scale_divisor, ssd_config, synth_params, Kind, RunResult, SYNTH_MEASURED_PASSES};
use crate::papers;

/// The most-written P-block's sector writes over the mean P-block's (NaN without P-blocks).
fn pblock_spread(writes: &[u64]) -> f64 {
    let max = writes.iter().copied().max().unwrap_or(0) as f64;
    max * writes.len() as f64 / writes.iter().sum::<u64>() as f64
}

/// Of a run's P-block replacements, the share whose victim was the P-block taken last, %.
fn newest_share(r: &RunResult) -> f64 {
    100.0 * r.replacements.of_newest as f64 / r.replacements.total.max(1) as f64
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
