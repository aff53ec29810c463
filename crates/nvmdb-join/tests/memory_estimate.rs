//! The memory estimate of a synthetic join (`synth::estimated_memory_bytes`, which
//! `nvmdb join run --generate` checks against the machine's memory for every combination
//! before the first runs) against the peak of the bytes generating the relations and
//! joining them holds, counted by this binary's global allocator: the estimate is never
//! below the peak, and at most 1.5× above it for the simple hash join.
//!
//! The partitioned joins are an upper bound only: their hash table is sized for the
//! largest partition, which the estimate cannot know before the keys are drawn and takes
//! as the whole of R.

use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_join::synth::{estimated_memory_bytes, generate, SynthSpec};
use nvmdb_join::{measured_join, Algorithm, IdEncoding, JoinOptions, Layout};
use nvmdb_memory::{CacheConfig, CachedMemory, FlatMemory, Memory};
use peak_alloc::PeakAlloc;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// Generates the relations into `mem` and joins them, as `nvmdb join run` does.
fn join_in<M: Memory>(mut mem: M, spec: &SynthSpec, options: &JoinOptions) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let (r, s) = generate(&mut mem, spec, &mut rng).unwrap();
    measured_join(&mut mem, &r, &s, options).unwrap();
}

/// The bytes a join held at its peak, beyond what was held before.
fn measured_peak(cached: bool, spec: &SynthSpec, options: &JoinOptions) -> u64 {
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    // The CLI's PCM (64 GiB, allocated as it is written).
    let pcm = Pcm::new(PcmConfig::new(64 << 30)).unwrap();
    if cached {
        join_in(CachedMemory::cidr2011(pcm), spec, options);
    } else {
        join_in(FlatMemory::new(pcm), spec, options);
    }
    (ALLOCATOR.peak_usage() - before) as u64
}

#[test]
fn the_estimate_holds_the_measured_peak_within_one_and_a_half_times() {
    use Algorithm::{CachePartitioning, Simple, VirtualPartitioning};
    // (cached, algorithm, layout, record bytes, matches per R row, whether within 1.5×)
    let cases = [
        (true, Simple, Layout::Row, 20, 1, true),
        (false, Simple, Layout::Row, 20, 1, true),
        (true, Simple, Layout::Column, 64, 2, true),
        (true, Simple, Layout::Row, 200, 4, true),
        (true, CachePartitioning, Layout::Row, 20, 1, false),
        (true, CachePartitioning, Layout::Column, 64, 1, false),
        (true, VirtualPartitioning, Layout::Row, 20, 1, false),
        (false, VirtualPartitioning, Layout::Column, 8, 2, false),
    ];
    let cache = CacheConfig::cidr2011();
    let mut failures = Vec::new();
    for (cached, algorithm, layout, record_bytes, match_per_r, tight) in cases {
        let spec = SynthSpec { r_bytes: 4 << 20, record_bytes, match_per_r, layout };
        let options =
            JoinOptions { algorithm, cache_bytes: 8 << 20, id_encoding: IdEncoding::Delta16, collect_pairs: false };
        let peak = measured_peak(cached, &spec, &options);
        let estimate = estimated_memory_bytes(&spec, &options, cached.then_some(&cache));
        let ratio = estimate as f64 / peak as f64;
        let memory = if cached { "cached" } else { "flat" };
        println!(
            "{memory} {} {layout:?} {record_bytes} B ×{match_per_r}: peak {peak} B, estimate {estimate} B ({ratio:.2}×)",
            algorithm.name()
        );
        if ratio < 1.0 || (tight && ratio > 1.5) {
            failures
                .push(format!("{memory} {} {layout:?} {record_bytes} B ×{match_per_r}: {ratio:.2}×", algorithm.name()));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}
