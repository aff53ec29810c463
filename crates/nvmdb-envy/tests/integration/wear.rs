//! Wear levelling and parallel banks, measured on the engine.

use nvmdb_envy::workload::{self, Bimodal};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

fn erase_spread(threshold: Option<u64>) -> (u64, u64) {
    let mut config = EnvyConfig::small(16, 32, 4, 0.7);
    config.page_bytes = 16;
    config.cleaning = CleaningPolicy::Greedy;
    config.wear_threshold_erases = threshold;
    let mut envy = Envy::format(config).unwrap();
    workload::fill(&mut envy).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    workload::update(&mut envy, Bimodal { hot_access: 0.95, hot_data: 0.05 }, 200_000, &mut rng).unwrap();
    envy.check_invariants();
    let counts: Vec<u64> = envy.devices().flash().erase_counts().collect();
    let (min, max) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
    (max - min, envy.stats().wear_level_cleans)
}

#[test]
fn wear_levelling_bounds_the_erase_spread() {
    let (without, _) = erase_spread(None);
    let (with, swaps) = erase_spread(Some(8));
    println!("erase spread without levelling {without}, with a threshold of 8: {with} ({swaps} swaps)");
    // Greedy under 95/5 locality never cleans the segments of cold data.
    assert!(without > 50, "the workload must wear unevenly: spread {without}");
    assert!(swaps > 0 && with <= 8 + 2, "spread {with} after {swaps} swaps");
}

#[test]
fn parallel_banks_finish_the_same_work_sooner() {
    let run = |parallel: bool| {
        let mut config = EnvyConfig::small(16, 64, 8, 0.7);
        config.banks = 4;
        config.parallel_banks = parallel;
        config.flash.erase_ns = 2_000_000;
        let mut envy = Envy::format(config).unwrap();
        workload::fill(&mut envy).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        workload::update(&mut envy, Bimodal::UNIFORM, 20_000, &mut rng).unwrap();
        (envy.flash_idle_at_ns(), *envy.stats())
    };
    let (serial_ns, serial) = run(false);
    let (parallel_ns, parallel) = run(true);
    println!("flash idle at {serial_ns} ns serial, {parallel_ns} ns parallel");
    // The same decisions, so the same flash work; only its overlap differs.
    assert_eq!(serial.flush_programs, parallel.flush_programs);
    assert_eq!(serial.erases, parallel.erases);
    assert!(parallel_ns < serial_ns);
}
