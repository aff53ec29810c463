//! The memory estimates of `nvmdb ssd replay` (`SsdConfig::estimated_memory_bytes`,
//! `SsdConfig::estimated_aged_memory_bytes` with `--age`, and
//! `SsdConfig::estimated_replay_memory_bytes` of a trace's counts, which the CLI checks
//! against the memory available before it builds the stack and before it replays) against
//! the peak of the bytes building, ageing and replaying hold, counted by this binary's
//! global allocator: the estimate is never below the peak, and at most 1.5× above it for
//! the FTLs, whose tables and flash array the ageing fills, and for the page bytes of a
//! replay with `content = "bytes"`. A replay's response times are counted at 8 B each,
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
use nvmdb_flash::{SsdConfig, TraceCounts};
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

/// A trace of writes: one sector at a random place, or (with `ids`) a whole page at a
/// random page carrying one of `ids` content identities; within the first `span` pages
/// (all the device's when 0).
#[derive(Debug, Clone, Copy)]
struct Writes {
    requests: u64,
    span: u64,
    ids: u64,
}

impl Writes {
    const fn random(requests: u64) -> Writes {
        Writes { requests, span: 0, ids: 0 }
    }

    /// The requests on a device of `pages` logical pages of `page_bytes`.
    fn requests(self, pages: u64, page_bytes: u64) -> impl Iterator<Item = Request> {
        let span = if self.span == 0 { pages } else { self.span.min(pages) };
        (0..self.requests).map(move |i| {
            let at = nvmdb_device::splitmix64(i);
            let (offset_bytes, len_bytes, content) = if self.ids == 0 {
                (at % (span * page_bytes / 512) * 512, 512, Content::Unknown)
            } else {
                let id = nvmdb_device::splitmix64(at) % self.ids;
                (at % span * page_bytes, page_bytes, Content::PageIds(vec![id + 1]))
            };
            Request { time_ns: i * 100_000, op: Op::Write, offset_bytes, len_bytes, content }
        })
    }
}

/// The bytes building the stack and replaying `writes` with `options` held at the peak,
/// beyond what was held before, and the trace's counts.
fn measured_replay_peak(config: &SsdConfig, writes: Writes, options: &ReplayOptions) -> (u64, TraceCounts) {
    let _alone = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let page_bytes = u64::from(config.flash.page_bytes);
    let mut counts = TraceCounts::default();
    for request in writes.requests(config.host_pages(), page_bytes) {
        counts.add(&request, config.flash.page_bytes);
    }
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    {
        let mut store = nvmdb_flash::stack::build(config).unwrap();
        let pages = store.logical_pages();
        let trace = || writes.requests(pages, page_bytes).map(Ok::<_, String>);
        nvmdb_flash::replay::replay_passes(store.as_mut(), trace, options).unwrap();
    }
    ((ALLOCATOR.peak_usage() - before) as u64, counts)
}

#[test]
fn a_replay_holds_the_stack_and_what_its_trace_grows() {
    // The response times are counted at 8 B each (a time beyond 2^32 ns widens the list
    // to `u64`); here every time fits in 4 B, so where they dominate the estimate is an
    // upper bound only.
    // With `content = "bytes"` a block's page bytes are allocated at its first program
    // and kept across erases: the estimate counts the blocks the trace's page writes can
    // program, at most all (`estimated_programmed_blocks`); where the run programs as many
    // it is within 1.5×.
    // The PCM log buffers' wear counters are bounded as if every line took an equal share
    // of the most line writes the trace's page writes can make; a trace rewriting few
    // pages wears few lines deeply (d-PRAM appends its records around the whole region, the
    // PCM log rewrites each page's sector in place), and the memory of a line's counters
    // grows with the logarithm of its writes, so the bound is far above: an upper bound
    // only. Deduplication's store wear is bounded likewise (every update rewriting its
    // whole bucket, every write followed by a block's worth of garbage-collection copies):
    // an upper bound only.
    // (settings, trace, passes, pre-fill, within 1.5×)
    let bytes = "content=\"bytes\"";
    let fingerprint = "content=\"fingerprint\"";
    let cases: [(&[&str], Writes, u64, bool, bool); 19] = [
        (&[], Writes::random(50_000), 1, false, false),
        (&[], Writes::random(800_000), 1, false, false),
        (&[], Writes::random(100_000), 3, false, false),
        // IPL's record index: every log sector's record at most.
        (&["buffer.kind=\"ipl\"", fingerprint], Writes::random(200_000), 1, true, false),
        // Page bytes: a few blocks' worth, then every block programmed.
        (&[bytes], Writes::random(5_000), 1, false, true),
        (&[bytes], Writes::random(20_000), 1, true, true),
        (&[bytes], Writes::random(2_000), 4, true, true),
        (&[bytes, "buffer.kind=\"ipl\""], Writes::random(20_000), 1, true, true),
        (&[bytes, "buffer.kind=\"ipl-native\""], Writes::random(5_000), 1, true, true),
        (&[bytes, "ftl.mapping=\"block\""], Writes::random(2_000), 1, false, true),
        (&[bytes, "ftl.mapping=\"hybrid\"", "ftl.log_blocks=16"], Writes::random(2_000), 1, true, true),
        (&[bytes, "dram.pages=256"], Writes::random(5_000), 1, false, true),
        (&[bytes, "buffer.kind=\"pcm-log\"", "buffer.pcm_mb=4"], Writes::random(20_000), 1, true, true),
        // Deduplication's store is counted with a fingerprint per logical page: here it
        // holds one per page written, a sixth of them.
        (&[bytes, "dedup.enabled=true"], Writes::random(5_000), 1, false, false),
        (&[bytes, "dedup.enabled=true"], Writes { requests: 20_000, span: 0, ids: 500 }, 1, false, true),
        // Wear counters of rewritten lines: 16 pages rewritten over and over.
        (&["buffer.kind=\"dpram\"", "buffer.pcm_mb=4"], Writes { requests: 100_000, span: 16, ids: 0 }, 1, true, false),
        (
            &["buffer.kind=\"pcm-log\"", "buffer.pcm_mb=4"],
            Writes { requests: 100_000, span: 16, ids: 0 },
            1,
            true,
            false,
        ),
        (&["dedup.enabled=true", fingerprint], Writes::random(100_000), 1, true, false),
        (&["dedup.enabled=true", fingerprint], Writes { requests: 100_000, span: 0, ids: 500 }, 1, true, false),
    ];
    let mut failures = Vec::new();
    for (settings, writes, passes, prefill, tight) in cases {
        let mut config = SsdConfig::default();
        for setting in
            ["flash.packages=1", "flash.planes_per_package=2", "flash.blocks_per_plane=256"].iter().chain(settings)
        {
            config.set(setting).unwrap();
        }
        config.validate().unwrap();
        let options = ReplayOptions { content: config.content, passes, prefill, ..ReplayOptions::default() };
        let (peak, counts) = measured_replay_peak(&config, writes, &options);
        let estimate = config.estimated_replay_memory_bytes(&counts, &options);
        let ratio = estimate as f64 / peak as f64;
        // What was estimated before the trace's growth was counted, for comparison.
        let alone = config.estimated_memory_bytes() + estimated_response_bytes(counts.requests, passes);
        println!(
            "{settings:?}, {writes:?} × {passes} passes, pre-fill {prefill}: peak {peak} B, estimate {estimate} B \
             ({ratio:.2}×; the stack and response times alone {:.2}×)",
            alone as f64 / peak as f64
        );
        if ratio < 1.0 || (tight && ratio > 1.5) {
            failures.push(format!("{settings:?}, {writes:?} × {passes}: {ratio:.2}×"));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}

#[test]
fn a_power_loss_replay_holds_its_model_of_acknowledged_state() {
    // A power-loss run keeps a model of every page written (with `content = "bytes"` its
    // bytes), counted at a B-tree entry per page in nodes half full (they are fuller): an
    // upper bound only where the entries outweigh the page bytes; with page bytes, within
    // 1.5× where the trace writes most of the pages it counts.
    // (settings, trace, pre-fill, cut before request N or device write N, within 1.5×)
    let bytes = "content=\"bytes\"";
    enum Cut {
        Request(u64),
        Write(u64),
    }
    let cases: [(&[&str], Writes, bool, Cut, bool); 4] = [
        (&[bytes], Writes::random(5_000), false, Cut::Request(2_500), true),
        (&[bytes], Writes::random(20_000), true, Cut::Request(10_000), true),
        (&["content=\"fingerprint\""], Writes::random(100_000), true, Cut::Write(50_000), false),
        (&[], Writes::random(100_000), false, Cut::Request(50_000), false),
    ];
    let mut failures = Vec::new();
    for (settings, writes, prefill, cut, tight) in cases {
        let (power_loss_at, power_loss_at_write) = match cut {
            Cut::Request(n) => (Some(n), None),
            Cut::Write(n) => (None, Some(n)),
        };
        let mut config = SsdConfig::default();
        for setting in
            ["flash.packages=1", "flash.planes_per_package=2", "flash.blocks_per_plane=256"].iter().chain(settings)
        {
            config.set(setting).unwrap();
        }
        config.validate().unwrap();
        let options = ReplayOptions {
            content: config.content,
            prefill,
            power_loss_at,
            power_loss_at_write,
            ..ReplayOptions::default()
        };
        let (peak, counts) = measured_replay_peak(&config, writes, &options);
        let estimate = config.estimated_replay_memory_bytes(&counts, &options);
        let ratio = estimate as f64 / peak as f64;
        let without_cut = ReplayOptions { power_loss_at: None, power_loss_at_write: None, ..options };
        let alone = config.estimated_replay_memory_bytes(&counts, &without_cut);
        println!(
            "{settings:?}, {writes:?}, pre-fill {prefill}, cut {power_loss_at:?}/{power_loss_at_write:?}: peak {peak} B, \
             estimate {estimate} B ({ratio:.2}×; without the model {:.2}×)",
            alone as f64 / peak as f64
        );
        if ratio < 1.0 || (tight && ratio > 1.5) {
            failures.push(format!("{settings:?}, {writes:?}: {ratio:.2}×"));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}
