//! The B+-tree experiments' tests.

use nvmdb_btree::workload::{AnyMemory, OpKind, RunReport};
use nvmdb_btree::Variant;
use nvmdb_device::PcmMetrics;
use nvmdb_lab::{Experiment, Outcome, RunContext, Scale};
use nvmdb_memory::CacheConfig;

use super::fig8::E_WB_PJ;
use super::fig9::FIG9_NODE_LINES;
use super::runs::{run_job, run_job_on, Inputs, Job, Reports, NODE_LINES, PAPER_ENTRIES, RUN};
use super::sweep::{sweep_entries, SWEEP_OPS, SWEEP_VARIANTS, T_W_CYCLES};
use super::*;

/// Runs `experiment` at quick scale with seed 3 on `jobs` threads, sharing only the
/// jobs of the runs since the last `forget`.
fn quick(experiment: &dyn Experiment, jobs: usize) -> Outcome {
    experiment.run(&RunContext::new(Scale::Quick, 3).with_jobs(jobs)).expect("runs")
}

fn forget() {
    RUN.clear();
}

/// Jobs of the quick sweeps with seed 3 run since the last `forget` (other tests may
/// add their own meanwhile).
fn sweep_jobs_run() -> usize {
    let prefix = format!("3 {} ", sweep_entries(Scale::Quick));
    RUN.keys().iter().filter(|k| k.starts_with(&prefix)).count()
}

#[test]
fn the_sweeps_are_the_same_on_one_thread_or_several_and_shared_or_not() {
    forget();
    let alone = quick(&Fig9Btree, 1);
    assert_eq!(alone.tables[0].rows.len(), FIG9_NODE_LINES.len() * SWEEP_OPS.len() * T_W_CYCLES.len());
    // One tree per node size and variant, timed at every T_w.
    assert_eq!(sweep_jobs_run(), FIG9_NODE_LINES.len() * SWEEP_VARIANTS.len());
    forget();
    let eight = quick(&Fig8Btree, 3);
    assert_eq!(eight.tables[0].rows.len(), NODE_LINES.len() * SWEEP_OPS.len() * E_WB_PJ.len());
    let shared = sweep_jobs_run();
    assert_eq!(shared, NODE_LINES.len() * SWEEP_VARIANTS.len());
    // Figure 9 takes Figure 8's 2- and 8-line trees and builds none.
    assert_eq!(quick(&Fig9Btree, 3), alone);
    assert_eq!(sweep_jobs_run(), shared);
    forget();
    assert_eq!(quick(&Fig8Btree, 1), eight);
}

/// A tree timed at every T_w of Figure 9 in one simulation reports, at each, exactly
/// what a tree simulated at that T_w alone reports: every time, counter and ratio.
#[test]
fn one_tree_timed_at_every_t_w_reports_as_a_tree_per_t_w() {
    let ctx = RunContext::new(Scale::Quick, 5);
    let entries = sweep_entries(Scale::Quick) / 4;
    let inputs = Inputs::draw(&ctx, entries, entries / 100).expect("keys");
    for (node_lines, variant) in [(8, Variant::Sorted), (2, Variant::UnsortedLeaf)] {
        let job = |metrics, also_t_w| Job { node_lines, variant, ops: &SWEEP_OPS, metrics, also_t_w };
        let shared = run_job(&ctx, &inputs, job(PcmMetrics::CIDR2011, &T_W_CYCLES)).expect("runs");
        assert_eq!(shared.len(), T_W_CYCLES.len() * SWEEP_OPS.len());
        for t_w in T_W_CYCLES {
            let alone =
                run_job(&ctx, &inputs, job(PcmMetrics { t_w_cycles: t_w, ..PcmMetrics::CIDR2011 }, &[])).expect("runs");
            for (_, op, report) in alone {
                let (_, _, from_shared) =
                    shared.iter().find(|(t, o, _)| *t == t_w && *o == op).expect("every T_w and operation");
                let json = |r: &RunReport| serde_json::to_value(r).expect("serialises");
                assert_eq!(json(from_shared), json(&report), "T_w {t_w}, {node_lines}-line {variant:?} {op:?}");
            }
        }
    }
}

/// The jobs' PCM counted without its wear reports what a PCM counting every cell
/// reports: every time, counter and ratio, for each variant and operation.
#[test]
fn a_job_without_the_wear_reports_as_with_it() {
    let ctx = RunContext::new(Scale::Quick, 7);
    let entries = sweep_entries(Scale::Quick) / 8;
    let inputs = Inputs::draw(&ctx, entries, entries / 100).expect("keys");
    let json = |reports: &Reports| serde_json::to_value(reports).expect("serialises");
    for (node_lines, variant) in [
        (2, Variant::Sorted),
        (4, Variant::Unsorted),
        (8, Variant::UnsortedLeaf),
        (2, Variant::UnsortedLeafBitmap),
        (8, Variant::NvmdbLeaf),
    ] {
        let ops = &[OpKind::Search, OpKind::Insert, OpKind::Delete];
        let job = Job { node_lines, variant, ops, metrics: PcmMetrics::CIDR2011, also_t_w: &T_W_CYCLES };
        let without = run_job(&ctx, &inputs, job).expect("runs");
        let with =
            run_job_on(&ctx, &inputs, job, AnyMemory::cached(inputs.machine.clone(), job.metrics)).expect("runs");
        assert_eq!(without.len(), ops.len() * T_W_CYCLES.len());
        assert_eq!(json(&without), json(&with), "{node_lines}-line {variant:?}");
    }
}

#[test]
fn machines_shrink_with_the_tree_and_keep_it_many_times_the_l3() {
    assert_eq!(machine(PAPER_ENTRIES), CacheConfig::cidr2011());
    let quick = machine(1_000_000);
    let sizes: Vec<u64> = quick.levels.iter().map(|l| l.size_bytes).collect();
    assert_eq!(sizes, [4 << 10, 32 << 10, 1 << 20]);
    assert_eq!(machine(sweep_entries(Scale::Quick)).levels[2].size_bytes, 256 << 10);
    // A tree 75% full holds 16 B per entry in 4/3 of the space.
    for entries in [1_000_000, sweep_entries(Scale::Quick)] {
        let tree_bytes = entries as u64 * 16 * 4 / 3;
        assert!(tree_bytes >= 16 * machine(entries).levels[2].size_bytes, "{entries} entries");
    }
}

/// Figure 6's orderings, which the paper states for its 50 M-entry trees: every unsorted scheme beats sorted in wear, energy and time for inserts and
/// deletes, and the gains widen with node size; quick scale must keep them.
#[test]
fn quick_scale_keeps_the_paper_scale_orderings_of_figure_6() {
    let ctx = RunContext::new(Scale::Quick, 1);
    let outcome = Fig6.run(&ctx).expect("runs");
    let value = |id: &str| outcome.measurements.iter().find(|m| m.claim == id).map(|m| m.value);
    let failing: Vec<&str> = [
        "cidr-fig6-unsorted-better",
        "cidr-fig6-gaps-widen",
        "cidr-fig6-bitmap-deletes-better",
        "cidr-fig6-bitmap-best-deletes",
    ]
    .into_iter()
    .filter(|id| value(id) != Some(1.0))
    .collect();
    assert!(failing.is_empty(), "orderings lost at quick scale: {failing:?}");
}
