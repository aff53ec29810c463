//! The CIDR 2011 B+-trees run on eNVy unchanged, through the `Memory` trait: every
//! variant against a `BTreeMap`, with the flash cleaned underneath.

use std::collections::BTreeMap;

use nvmdb_btree::{BTree, Variant};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig, EnvyMemory};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[test]
fn every_variant_matches_a_btreemap_on_envy() {
    for (i, variant) in Variant::ALL.into_iter().enumerate() {
        let mut config = EnvyConfig::small(12, 64, 8, 0.6);
        config.cleaning = [CleaningPolicy::Greedy, CleaningPolicy::Hybrid { partition_segments: 3 }][i % 2];
        let envy = Envy::format(config).unwrap();
        let mut tree = BTree::new(EnvyMemory::new(envy), variant, 4).unwrap();
        let mut model = BTreeMap::new();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(i as u64);
        for step in 0..6_000u64 {
            let key = rng.gen_range(0..1_500u64);
            if rng.gen_bool(0.7) {
                assert_eq!(tree.insert(key, step).unwrap(), model.insert(key, step), "{variant:?} insert {key}");
            } else {
                assert_eq!(tree.delete(key), model.remove(&key), "{variant:?} delete {key}");
            }
        }
        for (k, v) in &model {
            assert_eq!(tree.get(*k), Some(*v));
        }
        let envy = tree.memory_mut().envy_mut();
        envy.check_invariants();
        assert!(envy.stats().cleans > 0, "{variant:?}: the run must clean: {:?}", envy.stats());
    }
}
