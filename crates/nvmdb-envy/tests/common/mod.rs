//! Shared helpers of the integration tests: small configurations and a byte model.

#![allow(dead_code)]

use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig};

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
