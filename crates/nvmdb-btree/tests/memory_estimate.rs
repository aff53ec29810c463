// A test binary of its own: its counting #[global_allocator] would count every other test's allocations too.
//! The memory estimate of a generated run (`workload::estimated_memory_bytes`, which
//! `nvmdb btree run` checks against the machine's memory before it starts) against the
//! peak of the bytes the run holds, counted by this binary's global allocator: the
//! estimate is never below the peak and at most 1.5× above it.

use nvmdb_btree::workload::{
    estimated_memory_bytes, loaded_pairs, measure, op_keys, ops_of, random_keys, AnyMemory, MemoryKind, OpKind,
};
use nvmdb_btree::{BTree, Variant};
use peak_alloc::PeakAlloc;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// The bytes a run of the CLI's generator mode held at its peak, beyond what was held
/// before it (the same steps as `nvmdb btree run --entries --op --count`).
fn measured_peak(kind: MemoryKind, variant: Variant, node_lines: u32, entries: usize, op: OpKind, count: usize) -> u64 {
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let loaded = random_keys(entries, &mut rng);
        let keys = op_keys(op, &loaded, count, &mut rng).unwrap();
        let memory = AnyMemory::new(kind, false);
        let mut tree = BTree::bulk_load(memory, variant, node_lines, loaded_pairs(&loaded), 0.75, &mut rng).unwrap();
        measure(&mut tree, ops_of(op, &keys, loaded.len() as u64)).unwrap();
    }
    (ALLOCATOR.peak_usage() - before) as u64
}

#[test]
fn the_estimate_holds_the_measured_peak_within_one_and_a_half_times() {
    let entries = 200_000;
    let cases = [
        (MemoryKind::Cached, Variant::Sorted, 1, OpKind::Search, 10),
        (MemoryKind::Flat, Variant::Sorted, 1, OpKind::Search, 10),
        (MemoryKind::Cached, Variant::Unsorted, 2, OpKind::Search, 10),
        (MemoryKind::Cached, Variant::Sorted, 8, OpKind::Search, 10),
        (MemoryKind::Flat, Variant::Sorted, 8, OpKind::Search, 10),
        (MemoryKind::Cached, Variant::Sorted, 1, OpKind::Insert, 20_000),
        // The split and rewrite allowances are the worst case's (inserts all into one
        // place); random inserts this many into 8.7k leaves of 8 lines come to 1.7× at
        // 20,000.
        (MemoryKind::Cached, Variant::Sorted, 8, OpKind::Insert, 5_000),
        (MemoryKind::Cached, Variant::Unsorted, 4, OpKind::Delete, 20_000),
        (MemoryKind::Flat, Variant::Sorted, 1, OpKind::Search, 100_000),
        (MemoryKind::Native, Variant::Sorted, 2, OpKind::Search, 10),
    ];
    let mut failures = Vec::new();
    for (kind, variant, node_lines, op, count) in cases {
        let peak = measured_peak(kind, variant, node_lines, entries, op, count);
        let estimate = estimated_memory_bytes(kind, node_lines, entries as u64, op, count as u64, 0.75);
        let ratio = estimate as f64 / peak as f64;
        println!("{kind:?} {variant:?} node_lines={node_lines} {op:?}×{count}: peak {peak} B, estimate {estimate} B ({ratio:.2}×)");
        if !(1.0..=1.5).contains(&ratio) {
            failures.push(format!("{kind:?} {variant:?} {node_lines} {op:?} {count}: {ratio:.2}×"));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}
