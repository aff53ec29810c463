//! The run's counters: a copy taken mid-run and `since` give what a reset would.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use nvmdb_envy::workload::{self, Bimodal};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig, EnvyStats};

#[test]
fn counts_since_a_copy_are_the_counts_after_a_reset() {
    let mut config = EnvyConfig::small(16, 32, 4, 0.8);
    config.cleaning = CleaningPolicy::Hybrid { partition_segments: 4 };
    let dist = Bimodal { hot_access: 0.8, hot_data: 0.2 };
    let run = |reset: bool| {
        let mut envy = Envy::format(config).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        workload::fill(&mut envy).unwrap();
        workload::update(&mut envy, dist, 2_000, &mut rng).unwrap();
        let copy = *envy.stats();
        if reset {
            envy.reset_stats();
        }
        workload::update(&mut envy, dist, 3_000, &mut rng).unwrap();
        (copy, *envy.stats())
    };
    let ((_, after_reset), (copy, kept)) = (run(true), run(false));
    assert!(after_reset.cleans > 0 && copy.cleans > 0, "both stretches clean");
    assert_eq!(kept.since(&copy), after_reset);
    assert_eq!(kept.since(&kept), EnvyStats::default());
}
