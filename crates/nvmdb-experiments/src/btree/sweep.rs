//! The sweeps of Figures 8 and 9 (`cidr-fig8-btree`, `cidr-fig9-btree`): the variants and
//! operations swept, and one run of each at every T_w.

use nvmdb_btree::workload::OpKind;
use nvmdb_btree::Variant;
use nvmdb_device::PcmMetrics;
use nvmdb_lab::{LabError, RunContext, Scale};

use super::runs::{run_all, tree_bytes, Inputs, Job, Results, PAPER_ENTRIES};

/// Figures 8 and 9 sweep inserts and deletes of the paper's four organisations.
pub(super) const SWEEP_VARIANTS: [Variant; 4] =
    [Variant::Sorted, Variant::Unsorted, Variant::UnsortedLeaf, Variant::UnsortedLeafBitmap];

pub(super) const SWEEP_OPS: [OpKind; 2] = [OpKind::Insert, OpKind::Delete];

/// The unsorted-leaf schemes, which the paper's sensitivity conclusions are about.
pub(super) const LEAF_SCHEMES: [Variant; 2] = [Variant::UnsortedLeaf, Variant::UnsortedLeafBitmap];

/// Entries of the sweeps: a quarter of Figure 6's quick tree, on its own scaled machine.
pub(super) fn sweep_entries(scale: Scale) -> usize {
    scale.pick(250_000, PAPER_ENTRIES)
}

/// Runs inserts then deletes of the sweep's variants at `node_lines`, one tree each, timed
/// at every T_w of Figure 9 (the default and [`T_W_CYCLES`]): Figure 8 reads the default,
/// Figure 9 all, and in one reproduction Figure 9 takes Figure 8's 2- and 8-line trees
/// ([`run_job_once`](super::runs::run_job_once)).
pub(super) fn run_sweep(ctx: &RunContext, id: &str, node_lines: &[u32]) -> Result<(Inputs, Results), LabError> {
    let failed = |message: String| LabError::Failed { id: id.into(), message };
    let entries = sweep_entries(ctx.scale);
    let inputs = Inputs::draw(ctx, entries, entries / 100).map_err(failed)?;
    let mut jobs = Vec::new();
    for &lines in node_lines {
        for variant in SWEEP_VARIANTS {
            jobs.push(Job {
                node_lines: lines,
                variant,
                ops: &SWEEP_OPS,
                metrics: PcmMetrics::CIDR2011,
                also_t_w: &T_W_CYCLES,
            });
        }
    }
    let results = run_all(ctx, id, &inputs, &jobs, tree_bytes(ctx.scale))?;
    Ok((inputs, results))
}

/// T_w of Figure 9, cycles per modified word (450 is the default, 230 equals T_l).
pub(super) const T_W_CYCLES: [u64; 5] = [230, 345, 450, 575, 690];
