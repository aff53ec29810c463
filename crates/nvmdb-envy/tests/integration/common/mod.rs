//! Shared helpers of the integration tests: small configurations and a byte model.

use nvmdb_envy::workload::{self, Bimodal};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Every policy, with hybrid at two partition sizes.
pub const POLICIES: [CleaningPolicy; 5] = [
    CleaningPolicy::Greedy,
    CleaningPolicy::Fifo,
    CleaningPolicy::Locality,
    CleaningPolicy::Hybrid { partition_segments: 2 },
    CleaningPolicy::Hybrid { partition_segments: 3 },
];

/// A tiny system: 16 B pages so that short writes span pages, `segments` segments of
/// `pages_per_segment` pages, a `buffer_pages` buffer, at `utilization`.
pub fn tiny(
    policy: CleaningPolicy,
    segments: u32,
    pages_per_segment: u32,
    buffer_pages: u32,
    utilization: f64,
) -> EnvyConfig {
    let mut config = EnvyConfig::small(segments, pages_per_segment, buffer_pages, utilization);
    config.page_bytes = 16;
    config.cleaning = policy;
    config.wear_threshold_erases = Some(4);
    config.max_transaction_pages = 16;
    config
}

/// Reads the whole address space.
pub fn contents(envy: &mut Envy) -> Vec<u8> {
    let mut buf = vec![0; envy.config().logical_bytes() as usize];
    envy.read(0, &mut buf).expect("in range");
    buf
}

/// One step of a run: an update stream of a turnover's tenth under `dist`, a short write
/// anywhere (spanning pages of 16 B, so partly written pages are copied on write), or a
/// transaction of a few writes that commits or aborts.
pub fn step(envy: &mut Envy, dist: Bimodal, rng: &mut Xoshiro256PlusPlus) {
    let size = envy.config().logical_bytes();
    match rng.gen_range(0..4) {
        0 | 1 => {
            let updates = envy.config().flash_pages() / 10 + 1;
            workload::update(envy, dist, updates, rng).expect("updates fit");
        }
        2 => {
            let len = rng.gen_range(1..40u64).min(size);
            let addr = rng.gen_range(0..=size - len);
            let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            envy.write(addr, &bytes).expect("in range");
        }
        _ => {
            envy.begin().expect("no transaction open");
            for _ in 0..rng.gen_range(1..4) {
                let addr = rng.gen_range(0..size - 8);
                envy.write(addr, &rng.gen::<u64>().to_le_bytes()).expect("in range");
            }
            if rng.gen_bool(0.5) {
                envy.commit().expect("open");
            } else {
                envy.abort().expect("open");
            }
        }
    }
}

/// Runs the same [`step`]s, drawn from `seed`, on `x` and `y`, calling `compare` after
/// each (with the step's index): 24 steps, and on until `x` has cleaned (a sparse array
/// under skewed updates may not have after 24), at most 480.
pub fn step_both(
    x: &mut Envy,
    y: &mut Envy,
    dist: Bimodal,
    seed: u64,
    mut compare: impl FnMut(&mut Envy, &mut Envy, usize),
) {
    let (mut rx, mut ry) = (Xoshiro256PlusPlus::seed_from_u64(seed), Xoshiro256PlusPlus::seed_from_u64(seed));
    for i in 0..480 {
        if i >= 24 && x.stats().cleaned_segment_pages > 0 {
            break;
        }
        step(x, dist, &mut rx);
        step(y, dist, &mut ry);
        compare(x, y, i);
    }
    assert!(x.stats().cleaned_segment_pages > 0, "the run cleaned");
}
