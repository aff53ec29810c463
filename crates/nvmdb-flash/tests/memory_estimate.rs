//! The memory estimates of `nvmdb ssd replay` (`SsdConfig::estimated_memory_bytes`,
//! `SsdConfig::estimated_aged_memory_bytes` with `--age`, and the response times'
//! `replay::estimated_response_bytes`, which the CLI checks against the memory available
//! before it builds the stack and before it replays) against the peak of the bytes
//! building, ageing and replaying hold, counted by this binary's global allocator: the
//! estimate is never below the peak, and at most 1.5× above it for the FTLs, whose tables
//! and flash array the ageing fills. A replay's response times are counted at 8 B each,
//! where the times of these replays fit in 4 B: an upper bound only.
//!
//! The log schemes and the DRAM buffer are counted at their full size (IPL's sector tags
//! in every block, a PCM buffer's every line, every DRAM page), which the ageing, writing
//! whole pages below them, does not touch: for them the estimate is an upper bound only.
//! With deduplication, the fingerprint store's buckets are counted for a fingerprint per
//! logical page (as the ageing's distinct contents store) in buckets half full, and the
//! wear counters of its rewritten lines by the most rewrites the ageing can make: every
//! insert and removal rewriting its whole bucket and every page written followed by a
//! block's worth of garbage-collection copies, each a location move (it moves far fewer);
//! an upper bound only (the estimate without the store was 0.38× of the peak).

use nvmdb_flash::replay::{estimated_response_bytes, replay, ReplayOptions};
use nvmdb_flash::SsdConfig;
use nvmdb_workload::{Content, Op, Request};
use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// One measurement at a time: the allocator's peak is the whole process's.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The bytes building the stack and ageing it (as `--age` does, with an empty trace) held
/// at the peak, beyond what was held before.
fn measured_peak(config: &SsdConfig) -> u64 {
    let _alone = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    {
        let mut store = nvmdb_flash::stack::build(config).unwrap();
        let options =
            ReplayOptions { content: config.content, seed: config.seed, age: true, ..ReplayOptions::default() };
        replay(store.as_mut(), std::iter::empty::<Result<Request, String>>(), &options).unwrap();
    }
    (ALLOCATOR.peak_usage() - before) as u64
}

#[test]
fn the_aged_estimate_holds_the_measured_peak_within_one_and_a_half_times() {
    // (settings beyond a 32,768-page flash of 4 KiB pages, whether within 1.5×)
    let cases: [(&[&str], bool); 13] = [
        (&[], true),
        (&["content=\"fingerprint\""], true),
        (&["content=\"bytes\""], true),
        (&["flash.pages_per_block=128", "ftl.overprovision=0.25"], true),
        (&["ftl.mapping=\"block\""], true),
        (&["ftl.mapping=\"hybrid\"", "ftl.log_blocks=16"], true),
        (&["buffer.kind=\"ipl\"", "content=\"fingerprint\""], false),
        (&["buffer.kind=\"ipl-native\"", "content=\"bytes\""], false),
        (&["buffer.kind=\"pcm-log\"", "buffer.pcm_mb=4"], false),
        (&["buffer.kind=\"dpram\"", "buffer.pcm_mb=4"], false),
        (&["dram.pages=1024"], false),
        (&["dedup.enabled=true", "content=\"fingerprint\""], false),
        (&["dedup.enabled=true", "content=\"fingerprint\"", "dedup.max_entries=4096"], false),
    ];
    let mut failures = Vec::new();
    for (settings, tight) in cases {
        let mut config = SsdConfig::default();
        for setting in
            ["flash.packages=1", "flash.planes_per_package=2", "flash.blocks_per_plane=256"].iter().chain(settings)
        {
            config.set(setting).unwrap();
        }
        config.validate().unwrap();
        let peak = measured_peak(&config);
        let estimate = config.estimated_aged_memory_bytes();
        let ratio = estimate as f64 / peak as f64;
        println!("{settings:?}: peak {peak} B, estimate {estimate} B ({ratio:.2}×)");
        if ratio < 1.0 || (tight && ratio > 1.5) {
            failures.push(format!("{settings:?}: {ratio:.2}×"));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}

/// The bytes building the stack and replaying `requests` one-sector writes at random
/// places `passes` times held at the peak, beyond what was held before.
fn measured_replay_peak(config: &SsdConfig, requests: u64, passes: u64) -> u64 {
    let _alone = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    {
        let mut store = nvmdb_flash::stack::build(config).unwrap();
        let span = store.logical_pages() * u64::from(store.page_bytes());
        let options = ReplayOptions { content: config.content, passes, ..ReplayOptions::default() };
        let trace = || {
            (0..requests).map(move |i| {
                let offset_bytes = nvmdb_device::splitmix64(i) % (span / 512) * 512;
                let request = Request {
                    time_ns: i * 100_000,
                    op: Op::Write,
                    offset_bytes,
                    len_bytes: 512,
                    content: Content::Unknown,
                };
                Ok::<_, String>(request)
            })
        };
        nvmdb_flash::replay::replay_passes(store.as_mut(), trace, &options).unwrap();
    }
    (ALLOCATOR.peak_usage() - before) as u64
}

#[test]
fn a_replay_holds_the_stack_and_its_response_times() {
    // The response times are counted at 8 B each (a time beyond 2^32 ns widens the list
    // to `u64`); here every time fits in 4 B, so their estimate is an upper bound only.
    // (settings, requests, passes)
    // Page bytes as written (`content = "bytes"`) are not counted: not tried here.
    let cases: [(&[&str], u64, u64); 5] = [
        (&[], 50_000, 1),
        (&[], 200_000, 1),
        (&[], 800_000, 1),
        (&[], 100_000, 3),
        // IPL's record index: every log sector's record at most.
        (&["buffer.kind=\"ipl\"", "content=\"fingerprint\""], 200_000, 1),
    ];
    let mut failures = Vec::new();
    for (settings, requests, passes) in cases {
        let mut config = SsdConfig::default();
        for setting in
            ["flash.packages=1", "flash.planes_per_package=2", "flash.blocks_per_plane=256"].iter().chain(settings)
        {
            config.set(setting).unwrap();
        }
        config.validate().unwrap();
        let peak = measured_replay_peak(&config, requests, passes);
        let estimate = config.estimated_memory_bytes() + estimated_response_bytes(requests, passes);
        let ratio = estimate as f64 / peak as f64;
        println!(
            "{settings:?}, {requests} requests × {passes} passes: peak {peak} B, estimate {estimate} B ({ratio:.2}×)"
        );
        if ratio < 1.0 {
            failures.push(format!("{settings:?}, {requests} × {passes}: {ratio:.2}×"));
        }
    }
    assert!(failures.is_empty(), "estimates below the peak: {failures:?}");
}
