//! Speed and memory of the simulator itself (wall clock; used by `nvmdb bench`, never
//! asserted by tests).

use std::time::{Duration, Instant};

use nvmdb_device::{PageContent, PageData, PcmAccounting};
use nvmdb_workload::{Content, Op, Request};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use nvmdb_flash::config::SsdConfig;
use nvmdb_flash::layer::FlashError;
use nvmdb_flash::replay::{replay, ReplayError, ReplayOptions};

/// What one replay benchmark measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayBench {
    /// Requests replayed.
    pub requests: u64,
    /// Wall-clock time, request generation included.
    pub elapsed: Duration,
    /// Write amplification the replay reached (GC ran in steady state).
    pub write_amplification: f64,
}

impl ReplayBench {
    /// Requests per wall-clock second.
    pub fn requests_per_second(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The benchmark SSD: a 1 GiB page-mapped flash (8 packages × 2 planes × 256 blocks ×
/// 64 pages of 4 KB, thesis `FlashGeometry::THESIS_SSD`), greedy GC, 7 % over-provisioned,
/// metadata only.
pub fn bench_config() -> SsdConfig {
    let mut config = SsdConfig { content: PageContent::None, ..SsdConfig::default() };
    config.flash.packages = 8;
    config.flash.planes_per_package = 2;
    config.flash.blocks_per_plane = 256;
    config
}

/// Where a replay benchmark's requests go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locality {
    /// Uniform over the logical space: with 16 MB of PCM (496 P-blocks for 4,096 logical
    /// blocks) most log-layer updates find no P-block and merge a whole block, the log
    /// buffer's worst case.
    Uniform,
    /// 90 % of the requests to the first 10 % of the logical erase blocks (410 blocks,
    /// fewer than the P-blocks), the rest uniform over the others: the skewed updates a
    /// log buffer is built for.
    HotCold,
}

/// Replays `requests` single-page requests (70 % writes, 30 % reads, one every 10 µs,
/// placed by `locality`) through the replay engine into a metadata-only page-mapped FTL
/// ([`bench_config`]). Past the first ~0.3 M writes GC runs in steady state.
pub fn page_ftl_replay(requests: u64, locality: Locality) -> Result<ReplayBench, FlashError> {
    replay_bench(&bench_config(), requests, locality)
}

/// [`page_ftl_replay`] through the PCM log layer above the same FTL (`buffer.kind =
/// "pcm-log"`, 16 MB of PCM, content-free updates logged as 50–150 B records), its PCM
/// counting as `accounting` (`buffer.pcm_accounting`).
pub fn pcm_log_replay(requests: u64, locality: Locality, accounting: PcmAccounting) -> Result<ReplayBench, FlashError> {
    let mut config = bench_config();
    config.buffer.kind = nvmdb_flash::config::BufferKind::PcmLog;
    config.buffer.pcm_mb = 16;
    config.buffer.pcm_accounting = accounting;
    replay_bench(&config, requests, locality)
}

/// The physical limit of a page-mapped replay, the baseline of [`page_ftl_replay`]: the
/// same requests over the same logical pages, each write pointing its logical page at the
/// next physical page (in turn over the [`bench_config`] SSD's physical pages) in a plain
/// `Vec<u32>` table, each read looking its page up; no flash, no garbage collection, no
/// timing. Its `write_amplification` is 1: every write takes one page.
pub fn page_remap_replay(requests: u64, locality: Locality) -> ReplayBench {
    let config = bench_config();
    let pages = config.logical_pages();
    let physical = u32::try_from(config.flash.geometry().pages()).expect("the benchmark SSD has fewer than 2^32 pages");
    let mut l2p = vec![u32::MAX; usize::try_from(pages).expect("the table fits in memory")];
    let mut next = 0u32;
    let mut sum = 0u64;
    let start = Instant::now();
    for request in request_stream(&config, pages, locality, requests) {
        let lpn = (request.offset_bytes / 4096) as usize;
        match request.op {
            Op::Write => {
                l2p[lpn] = next;
                next = if next + 1 == physical { 0 } else { next + 1 };
            }
            _ => sum = sum.wrapping_add(u64::from(l2p[lpn])),
        }
    }
    std::hint::black_box((sum, &l2p));
    ReplayBench { requests, elapsed: start.elapsed(), write_amplification: 1.0 }
}

/// The benchmark's requests: single pages, 70 % writes and 30 % reads, one every 10 µs,
/// placed by `locality` over `pages` logical pages.
fn request_stream(config: &SsdConfig, pages: u64, locality: Locality, requests: u64) -> impl Iterator<Item = Request> {
    let per_block = u64::from(config.flash.pages_per_block);
    let hot_pages = (pages / per_block / 10).max(1) * per_block;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(config.seed);
    (0..requests).map(move |i| {
        let op = if rng.gen_range(0..10) < 7 { Op::Write } else { Op::Read };
        let lpn = match locality {
            Locality::Uniform => rng.gen_range(0..pages),
            Locality::HotCold if rng.gen_range(0..10) < 9 => rng.gen_range(0..hot_pages),
            Locality::HotCold => rng.gen_range(hot_pages..pages),
        };
        Request { time_ns: i * 10_000, op, offset_bytes: lpn * 4096, len_bytes: 4096, content: Content::Unknown }
    })
}

fn replay_bench(config: &SsdConfig, requests: u64, locality: Locality) -> Result<ReplayBench, FlashError> {
    let mut store = nvmdb_flash::stack::build(config)?;
    let pages = store.logical_pages();
    let stream = request_stream(config, pages, locality, requests).map(Ok::<_, FlashError>);
    let start = Instant::now();
    let report = replay(store.as_mut(), stream, &ReplayOptions::default()).map_err(|e| match e {
        ReplayError::Input(e) | ReplayError::Store { error: e, .. } => e,
    })?;
    Ok(ReplayBench { requests, elapsed: start.elapsed(), write_amplification: report.stats.write_amplification() })
}

/// A page-mapped SSD with at least 1 TB (2^40 bytes) of logical space in 4 KB pages:
/// 16 packages × 8 planes × 35,300 blocks × 64 pages, 7 % over-provisioned.
pub fn one_tb_config() -> SsdConfig {
    let mut config = SsdConfig::default();
    config.flash.packages = 16;
    config.flash.planes_per_package = 8;
    config.flash.blocks_per_plane = 35_300;
    config
}

/// Builds the [`one_tb_config`] SSD, writes `pages` pages spread over it, and returns the
/// logical capacity in bytes and the process's peak resident memory (VmHWM) in bytes
/// afterwards (`None` where `/proc/self/status` is unavailable).
pub fn one_tb_peak_memory(pages: u64) -> Result<(u64, Option<u64>), FlashError> {
    let config = one_tb_config();
    let mut store = nvmdb_flash::stack::build(&config)?;
    let logical = store.logical_pages();
    let step = (logical / pages.max(1)).max(1);
    let mut now_ns = 0;
    for i in 0..pages {
        now_ns = store.write(i * step % logical, PageData::Empty, now_ns)?;
    }
    store.check_invariants().map_err(FlashError::Config)?;
    Ok((logical * u64::from(store.page_bytes()), vm_hwm_bytes()))
}

/// The process's peak resident set (VmHWM from `/proc/self/status`), bytes.
pub fn vm_hwm_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmark_configs_are_valid_and_big_enough() {
        assert!(bench_config().validate().is_ok());
        let tb = one_tb_config();
        assert!(tb.validate().is_ok());
        assert!(tb.logical_pages() * 4096 >= 1 << 40);
        let run = page_ftl_replay(1_000, Locality::Uniform).unwrap();
        assert_eq!(run.requests, 1_000);
        assert!(run.write_amplification >= 1.0);
        assert_eq!(page_remap_replay(1_000, Locality::Uniform).requests, 1_000);
    }
}
