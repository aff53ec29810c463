//! FIFO cleaning under uniform random page updates: the measured cleaning cost matches
//! u/(1 − u) of the cleaned segments' utilisation u within 5 %, and u matches the
//! closed form for FIFO; within the closed partitions of hybrid without redistribution,
//! u matches the closed form for FIFO within partitions.

use nvmdb_envy::analytic::{cleaning_cost, fifo_cleaned_utilization, fifo_partition_cleaned_utilization};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn measure(utilization: f64) -> (f64, f64, f64) {
    measure_with(utilization, CleaningPolicy::Fifo)
}

fn measure_with(utilization: f64, cleaning: CleaningPolicy) -> (f64, f64, f64) {
    let mut config = EnvyConfig::small(64, 128, 4, utilization);
    config.page_bytes = 16;
    config.cleaning = cleaning;
    config.redistribution_divisor = 0;
    config.wear_threshold_erases = None;
    let mut envy = Envy::format(config).unwrap();
    let pages = config.logical_pages;
    for lpn in 0..pages {
        envy.write(lpn * 16, &[1]).unwrap();
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let flash_pages = config.flash_pages();
    // Warm up for four turnovers of the array, then measure over twenty.
    for _ in 0..4 * flash_pages {
        envy.write(rng.gen_range(0..pages) * 16, &[2]).unwrap();
    }
    envy.reset_stats();
    for _ in 0..20 * flash_pages {
        envy.write(rng.gen_range(0..pages) * 16, &[3]).unwrap();
    }
    envy.check_invariants();
    let stats = envy.stats();
    let alpha = (pages - envy.buffered_pages()) as f64 / (u64::from(config.positions()) * 128) as f64;
    (stats.cleaning_cost(), stats.cleaned_utilization(), alpha)
}

#[test]
fn fifo_cost_matches_u_over_one_minus_u() {
    for utilization in [0.5, 0.7, 0.85] {
        let (cost, u, alpha) = measure(utilization);
        let analytic = cleaning_cost(u);
        println!("utilisation {utilization}: cost {cost:.4}, u {u:.4}, u/(1−u) {analytic:.4}");
        assert!((cost - analytic).abs() <= 0.05 * analytic, "cost {cost} vs u/(1−u) = {analytic}");
        let predicted = fifo_cleaned_utilization(alpha);
        println!("  α {alpha:.4}: FIFO closed form u {predicted:.4}");
        assert!((u - predicted).abs() <= 0.05 * predicted, "u {u} vs closed form {predicted}");
    }
}

#[test]
fn fifo_within_partitions_cleans_fuller_segments_as_its_closed_form_says() {
    // 63 positions in partitions of 4 (the last of 3), no redistribution: flushes return
    // to their partition, which FIFO cleans alone.
    let (cost, u, alpha) = measure_with(0.8, CleaningPolicy::Hybrid { partition_segments: 4 });
    let predicted = fifo_partition_cleaned_utilization(alpha, 4);
    println!("partitions of 4: cost {cost:.4}, u {u:.4}; closed form u {predicted:.4}");
    assert!((u - predicted).abs() <= 0.02 * predicted, "u {u} vs closed form within partitions {predicted}");
    // Distinct from FIFO over the whole array.
    let whole = fifo_cleaned_utilization(alpha);
    assert!(u > 1.05 * whole, "u {u} not above FIFO's closed form {whole}");
}
