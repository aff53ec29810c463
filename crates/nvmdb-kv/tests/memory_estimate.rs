//! The memory estimate of a benchmark run (`workload::estimated_memory_bytes`, which
//! `nvmdb kv run --workload --records` and `nvmdb kv demo` check against the memory
//! available before they start, and `estimated_power_loss_memory_bytes` with a power cut) against the peak of the bytes the run holds, counted by this
//! binary's global allocator: the estimate is never below the peak, and at most 1.5×
//! above it for the engines with flash where the run cycles through the flash array (the
//! estimate takes every block programmed). Where the buffer pool holds the whole tree and
//! few syncs come, the flash is written about once and holds less (2–7× less below).
//!
//! `pcm-only` is an upper bound only: its PCM holds the image slots the tree uses (two per
//! page at most, leaves half-full at worst) and wear counters that grow with each line's
//! rewrites, bounded from the operations as if spread evenly over the lines; a run fills
//! its leaves to about 70% and rewrites a few slots often (freed slots are reused first),
//! so it holds 3–5× less than that bound.

use nvmdb_kv::{workload, Benchmark, Engine, EngineConfig, EngineKind, WorkloadSpec};
use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// One measurement at a time: the allocator's peak is the whole process's.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The bytes a run held at its peak, beyond what was held before (the steps of
/// `nvmdb kv run --workload --records`).
fn measured_peak(config: &EngineConfig, spec: &WorkloadSpec) -> u64 {
    let _alone = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    {
        let mut engine = Engine::new(config.clone()).unwrap();
        workload::run(&mut engine, spec, 4096, &mut |_| {}).unwrap();
    }
    (ALLOCATOR.peak_usage() - before) as u64
}

#[test]
fn the_estimate_holds_the_measured_peak_within_one_and_a_half_times() {
    let records = 50_000;
    // (engine, page KB, buffer KB, benchmark, sync every, whether within 1.5×)
    let cases = [
        (EngineKind::FlashOnly, 8, 1024, Benchmark::Insert, None, true),
        (EngineKind::FlashOnly, 8, 1024, Benchmark::Update, Some(100), true),
        (EngineKind::FlashOnly, 1, 64, Benchmark::Insert, Some(1), true),
        (EngineKind::Ipl, 8, 1024, Benchmark::Insert, Some(100), true),
        (EngineKind::Ipl, 8, 1024, Benchmark::Search, None, true),
        (EngineKind::Ipl, 2, 16384, Benchmark::Update, Some(1), true),
        // Buffers that hold the whole tree, and no sync before the end of a phase (searches
        // change nothing): the flash is written about once, not cycled through.
        (EngineKind::Ipl, 2, 16384, Benchmark::Update, None, false),
        (EngineKind::IplP, 16, 4096, Benchmark::Search, Some(100), false),
        (EngineKind::IplP, 8, 1024, Benchmark::Insert, None, true),
        (EngineKind::IplP, 4, 256, Benchmark::Update, Some(1), true),
        (EngineKind::PcmOnly, 8, 1024, Benchmark::Insert, None, false),
        (EngineKind::PcmOnly, 8, 1024, Benchmark::Insert, Some(100), false),
        (EngineKind::PcmOnly, 64, 4096, Benchmark::Insert, Some(100), false),
        (EngineKind::PcmOnly, 1, 64, Benchmark::Update, Some(1), false),
    ];
    let mut failures = Vec::new();
    for (kind, page_kb, buffer_kb, benchmark, sync_every, tight) in cases {
        // Sized as the CLI sizes it (for 64 B values).
        let mut config = EngineConfig::new(kind, records, 64);
        config.page_bytes = page_kb * 1024;
        config.buffer_bytes = buffer_kb * 1024;
        config.size_for(records, 64);
        let spec = WorkloadSpec { sync_every, ..WorkloadSpec::seed_benchmark(benchmark, records, 1) };
        let peak = measured_peak(&config, &spec);
        let estimate = workload::estimated_memory_bytes(&config, &spec);
        let ratio = estimate as f64 / peak as f64;
        println!(
            "{} {page_kb} KB pages, {buffer_kb} KB buffer, {} sync every {sync_every:?}: peak {peak} B, estimate {estimate} B ({ratio:.2}×)",
            kind.name(),
            benchmark.name()
        );
        if ratio < 1.0 || (tight && ratio > 1.5) {
            failures.push(format!("{} {page_kb} KB {} {sync_every:?}: {ratio:.2}×", kind.name(), benchmark.name()));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}

/// With a power cut the run also keeps its models of the synced state and of the writes
/// since the last sync, and scans the recovered engine.
#[test]
fn a_power_loss_run_holds_the_estimate_within_one_and_a_half_times() {
    let records = 50_000;
    // (engine, sync every, the device write cut before)
    let cases = [
        (EngineKind::FlashOnly, None, 1_000_000),
        (EngineKind::FlashOnly, Some(100), 5_000),
        (EngineKind::Ipl, Some(10), 50_000),
        (EngineKind::IplP, Some(1), 20_000),
        (EngineKind::PcmOnly, Some(1_000), 2_000),
    ];
    let mut failures = Vec::new();
    for (kind, sync_every, cut) in cases {
        let config = EngineConfig::new(kind, records, 64);
        let spec = WorkloadSpec { sync_every, ..WorkloadSpec::seed_benchmark(Benchmark::Update, records, 1) };
        let alone = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let before = ALLOCATOR.current_usage();
        ALLOCATOR.reset_peak_usage();
        let outcome = workload::run_with_power_loss(Engine::new(config.clone()).unwrap(), &spec, cut, None);
        let cut_reached = outcome.unwrap().1.cut.is_some();
        let peak = (ALLOCATOR.peak_usage() - before) as u64;
        drop(alone);
        let estimate = workload::estimated_power_loss_memory_bytes(&config, &spec);
        let ratio = estimate as f64 / peak as f64;
        println!(
            "{} sync every {sync_every:?}, cut at write {cut} (reached: {cut_reached}): peak {peak} B, estimate {estimate} B ({ratio:.2}×)",
            kind.name()
        );
        // pcm-only's PCM is an upper bound only (see above).
        if ratio < 1.0 || (kind != EngineKind::PcmOnly && ratio > 1.5) {
            failures.push(format!("{} {sync_every:?} {cut}: {ratio:.2}×", kind.name()));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}
