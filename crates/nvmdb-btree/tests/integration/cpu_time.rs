//! The CPU time model under the B+-tree: its hints change no count, and overlapping
//! independent misses is what keeps the all-unsorted tree's searches close to sorted's.

use nvmdb_btree::workload::{loaded_pairs, measure, op_keys, ops_of, random_keys, OpKind, RunReport, CAPACITY_BYTES};
use nvmdb_btree::{BTree, Variant};
use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_memory::{CacheConfig, CachedMemory, CpuConfig};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const ENTRIES: usize = 150_000;

/// Table 5 with every level ÷ 64, so that the tree is many times the L3.
fn machine() -> CacheConfig {
    let mut config = CacheConfig::cidr2011();
    for level in &mut config.levels {
        level.size_bytes /= 64;
    }
    config
}

fn searches(variant: Variant, cpu: CpuConfig) -> RunReport {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let loaded = random_keys(ENTRIES, &mut rng);
    let keys = op_keys(OpKind::Search, &loaded, 2_000, &mut rng).expect("keys");
    let pcm = Pcm::new(PcmConfig::new(CAPACITY_BYTES)).expect("capacity");
    let memory = CachedMemory::new(pcm, machine()).with_cpu(cpu);
    let mut shuffle = Xoshiro256PlusPlus::seed_from_u64(5);
    let mut tree = BTree::bulk_load(memory, variant, 8, loaded_pairs(&loaded), 0.75, &mut shuffle).expect("loads");
    measure(&mut tree, ops_of(OpKind::Search, &keys, 0)).expect("runs").0
}

#[test]
fn overlapping_scanned_misses_hides_the_unsorted_trees_extra_instructions() {
    let serial = CpuConfig { mshrs: 1, ..CpuConfig::CIDR2011 };
    let [sorted, unsorted] = [Variant::Sorted, Variant::Unsorted].map(|v| searches(v, CpuConfig::CIDR2011));
    let [sorted_1, unsorted_1] = [Variant::Sorted, Variant::Unsorted].map(|v| searches(v, serial));
    // The CPU model adds time only: every count, and the memory-only time, is the same.
    for (a, b) in [(&sorted, &sorted_1), (&unsorted, &unsorted_1)] {
        assert_eq!(a.pcm, b.pcm);
        assert_eq!(a.estimated_cycles, b.estimated_cycles);
        assert_eq!(a.instructions, b.instructions);
    }
    let ratio = |a: u64, b: u64| a as f64 / b as f64;
    // Scanning every separator of an inner node costs far more instructions.
    assert!(ratio(unsorted.instructions, sorted.instructions) > 2.0);
    // With one fetch in flight the scan's misses serialise and the unsorted tree falls
    // further behind; with ten they overlap.
    let overlapped = ratio(unsorted.cpu_cycles, sorted.cpu_cycles);
    let serialised = ratio(unsorted_1.cpu_cycles, sorted_1.cpu_cycles);
    assert!(serialised > overlapped + 0.05, "unsorted ÷ sorted: {serialised} with 1 MSHR, {overlapped} with 10");
}
