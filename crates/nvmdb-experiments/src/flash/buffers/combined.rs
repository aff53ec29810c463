//! `thesis-fig5-8`: deduplication and the PCM log buffer combined against the baseline
//! (Figure 5.8).

use nvmdb_lab::{Experiment, LabError, Outcome, Plot, RunContext, Table};
use nvmdb_workload::synth::SynthWorkload;
use serde_json::json;

use super::{
    energy_percent, first_energy_percent, first_lifetime_cell, lifetime, lifetime_cell, pcm_bytes, pcm_log_pblocks,
    per_pass, roomier, steady_state_note, Delta, SteadyPart, SteadyRuns, DELTA_NOTE, PCM_MB,
    ROOMY_EXTRA_BLOCKS_PERCENT, WINDOW_NOTE,
};
use crate::flash::{failed, scale_divisor, ssd_config, synth_params, working_set, Kind, RunResult};
use crate::papers;

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
