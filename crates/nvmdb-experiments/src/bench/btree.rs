//! Wall-clock speed of the tree on accounted and unaccounted memory, for `nvmdb bench`.
//! Only benchmarks read the clock; the simulation itself never does.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

use std::time::Instant;

use nvmdb_memory::Memory;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use nvmdb_btree::workload::{loaded_pairs, op_keys, ops_of, random_keys, AnyMemory, MemoryKind, OpKind};
use nvmdb_btree::{BTree, Variant};

/// Mean wall-clock nanoseconds per insert: `entries` random keys are bulk-loaded at 75%
/// fill (not timed), then `inserts` new random keys are inserted (timed). The memory is
/// a concrete type (no dispatch), so the comparison shows the accounting overhead only.
pub fn insert_ns_per_op(memory: MemoryKind, variant: Variant, node_lines: u32, entries: usize, inserts: usize) -> f64 {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let loaded = random_keys(entries, &mut rng);
    let keys = op_keys(OpKind::Insert, &loaded, inserts, &mut rng).expect("inserts always have keys");
    match AnyMemory::new(memory, false) {
        AnyMemory::Cached(m) => time_inserts(*m, variant, node_lines, &loaded, &keys),
        AnyMemory::Flat(m) => time_inserts(*m, variant, node_lines, &loaded, &keys),
        AnyMemory::Native(m) => time_inserts(m, variant, node_lines, &loaded, &keys),
    }
}

fn time_inserts<M: Memory>(mem: M, variant: Variant, node_lines: u32, loaded: &[u64], keys: &[u64]) -> f64 {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let mut tree = BTree::bulk_load(mem, variant, node_lines, loaded_pairs(loaded), 0.75, &mut rng)
        .expect("benchmark sizes fit the simulated memory");
    let start = Instant::now();
    for op in ops_of(OpKind::Insert, keys, loaded.len() as u64) {
        nvmdb_btree::workload::apply(&mut tree, op).expect("benchmark sizes fit the simulated memory");
    }
    start.elapsed().as_nanos() as f64 / keys.len().max(1) as f64
}
