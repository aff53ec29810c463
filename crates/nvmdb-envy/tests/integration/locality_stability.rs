//! Locality gathering's redistribution stays bounded: on 32 positions of 256 pages at
//! 80 % utilisation under 80/20 access, transfers that moved a neighbour's product away
//! from the average used to drain positions of their live pages. A drained position
//! takes no flushes and is never cleaned again, so its free space was stranded and the
//! rest of the array ran ever fuller (cost about 90, cleaned segments 0.978 full, after
//! 96 turnovers). And the redistribution's step is an option: 0 turns it off.

use nvmdb_envy::workload::{self, Bimodal};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Each turnover's cleaning cost (cleaning programs per flush).
fn costs(turnovers: usize) -> Vec<f64> {
    let mut config = EnvyConfig::small(32, 256, 32, 0.8);
    config.wear_threshold_erases = None;
    config.cleaning = CleaningPolicy::Locality;
    let mut envy = Envy::format(config).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    workload::fill(&mut envy).unwrap();
    let dist = Bimodal { hot_access: 0.8, hot_data: 0.2 };
    (0..turnovers)
        .map(|_| {
            let before = *envy.stats();
            workload::update(&mut envy, dist, config.flash_pages(), &mut rng).unwrap();
            let after = *envy.stats();
            (after.clean_programs - before.clean_programs) as f64
                / (after.flush_programs - before.flush_programs) as f64
        })
        .collect()
}

#[test]
fn locality_gathering_cost_stays_bounded() {
    let costs = costs(96);
    let mean = |w: &[f64]| w.iter().sum::<f64>() / w.len() as f64;
    let (early, late) = (mean(&costs[24..32]), mean(&costs[88..96]));
    assert!(late < 1.5 * early, "cost ran away: {early:.2} after 32 turnovers, {late:.2} after 96 ({costs:.2?})");
}

/// The counters of 8 turnovers of 90/10 updates under `policy` with `divisor`.
fn run(policy: CleaningPolicy, divisor: u32) -> nvmdb_envy::EnvyStats {
    let mut config = EnvyConfig::small(32, 64, 8, 0.8);
    config.wear_threshold_erases = None;
    config.cleaning = policy;
    config.redistribution_divisor = divisor;
    let mut envy = Envy::format(config).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    workload::fill(&mut envy).unwrap();
    let dist = Bimodal { hot_access: 0.9, hot_data: 0.1 };
    workload::update(&mut envy, dist, 8 * config.flash_pages(), &mut rng).unwrap();
    *envy.stats()
}

#[test]
fn the_redistribution_step_is_an_option() {
    for policy in [CleaningPolicy::Locality, CleaningPolicy::Hybrid { partition_segments: 4 }] {
        let (off, eighth, quarter) = (run(policy, 0), run(policy, 8), run(policy, 4));
        // Off: no page moves between partitions, and each clean copies only its victim's
        // live pages.
        assert_eq!((off.redistributed_pages, off.redistribution_wanted_pages), (0, 0), "{policy:?}");
        assert_eq!(off.clean_programs, off.cleaned_live_pages, "{policy:?}");
        // On: pages move, and a larger step moves more of them per clean.
        assert!(eighth.redistributed_pages > 0, "{policy:?}");
        let per_clean = |s: &nvmdb_envy::EnvyStats| s.redistribution_wanted_pages as f64 / s.cleans as f64;
        assert!(per_clean(&quarter) > per_clean(&eighth), "{policy:?}: {quarter:?} {eighth:?}");
        assert_ne!(off.clean_programs, eighth.clean_programs, "{policy:?}");
    }
    // Greedy has no partitions: the step changes nothing.
    assert_eq!(run(CleaningPolicy::Greedy, 0), run(CleaningPolicy::Greedy, 8));
}
