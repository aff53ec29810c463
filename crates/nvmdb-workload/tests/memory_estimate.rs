// A test binary of its own: its counting #[global_allocator] would count every other test's allocations too.
//! The synthetic generator's memory estimate (`SynthParams::estimated_memory_bytes`, which
//! `nvmdb trace gen` checks against the machine's memory before it starts) against the
//! peak of the bytes generation holds, counted by this binary's global allocator: the
//! estimate is never below the peak, and at most 1.5× above it where the buffer pool
//! dominates. The written pages' term is the worst case (every request writing 16 pages
//! never written before); the workloads rewrite their hot pages, so for them it is an
//! upper bound only.

use nvmdb_workload::synth::{fiu_lines, SynthGenerator, SynthParams, SynthWorkload};
use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// The bytes generating (and formatting, as `trace gen` does) every request held at its
/// peak, beyond what was held before.
fn measured_peak(params: SynthParams) -> u64 {
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    let mut text = String::new();
    for request in SynthGenerator::new(params).unwrap() {
        text.clear();
        fiu_lines(&request, &mut text).unwrap();
    }
    (ALLOCATOR.peak_usage() - before) as u64
}

#[test]
fn the_estimate_holds_the_measured_peak_within_one_and_a_half_times() {
    // (parameters, whether the estimate must be within 1.5× of the peak)
    let cases = [
        // The buffer pool dominates (1 GiB database, 256 MiB pool).
        (
            SynthParams {
                workload: SynthWorkload::T2,
                requests: 10,
                seed: 1,
                footprint_mb: 1024,
                buffer_pool_pages: 65_536,
            },
            true,
        ),
        (
            SynthParams {
                workload: SynthWorkload::T3,
                requests: 10,
                seed: 1,
                footprint_mb: 4096,
                buffer_pool_pages: 262_144,
            },
            true,
        ),
        (
            SynthParams {
                workload: SynthWorkload::T1,
                requests: 20_000,
                seed: 1,
                footprint_mb: 1024,
                buffer_pool_pages: 65_536,
            },
            false,
        ),
        // The written pages dominate.
        (
            SynthParams {
                workload: SynthWorkload::D1,
                requests: 100_000,
                seed: 1,
                footprint_mb: 4096,
                buffer_pool_pages: 16,
            },
            false,
        ),
        (
            SynthParams {
                workload: SynthWorkload::D2,
                requests: 100_000,
                seed: 1,
                footprint_mb: 4096,
                buffer_pool_pages: 16,
            },
            false,
        ),
    ];
    let mut failures = Vec::new();
    for (params, tight) in cases {
        let peak = measured_peak(params);
        let estimate = params.estimated_memory_bytes();
        let ratio = estimate as f64 / peak as f64;
        println!("{params:?}: peak {peak} B, estimate {estimate} B ({ratio:.2}×)");
        if ratio < 1.0 || (tight && ratio > 1.5) {
            failures.push(format!("{params:?}: {ratio:.2}×"));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}
