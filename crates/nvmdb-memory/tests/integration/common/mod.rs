//! Pieces shared by this crate's integration tests.

use nvmdb_memory::{CacheConfig, CacheLevelConfig};

/// A small three-level hierarchy, so that lines leave it, with a short write queue, so
/// that the CPU stalls on a full queue too.
pub fn small_three_levels() -> CacheConfig {
    CacheConfig {
        levels: vec![
            CacheLevelConfig { size_bytes: 512, ways: 2, latency_cycles: 4 },
            CacheLevelConfig { size_bytes: 2048, ways: 4, latency_cycles: 11 },
            CacheLevelConfig { size_bytes: 8192, ways: 8, latency_cycles: 39 },
        ],
        ranks: 4,
        write_queue: 4,
    }
}
