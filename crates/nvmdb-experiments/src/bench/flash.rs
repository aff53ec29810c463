//! Speed and memory of the simulator itself (wall clock; used by `nvmdb bench`, never
//! asserted by tests).

use std::time::{Duration, Instant};

use nvmdb_device::{index, PageContent, PageData, PcmAccounting};
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

/// [`page_ftl_replay`] through IPL's log layer above the same FTL (`buffer.kind = "ipl"`:
/// content-free updates logged as 50–150 B records in 512 B flash log sectors; a read of a
/// page with records also reads the log pages that hold them).
pub fn ipl_replay(requests: u64, locality: Locality) -> Result<ReplayBench, FlashError> {
    let mut config = bench_config();
    config.buffer.kind = nvmdb_flash::config::BufferKind::Ipl;
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

/// What [`pcm_log_floor_replay`] did beside its time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogFloor {
    /// The replay's requests and time (`write_amplification` 1: it programs no flash).
    pub bench: ReplayBench,
    /// Writes logged to a sector of the PCM.
    pub logged: u64,
    /// Words (8 B) whose value a logged write's sector or table row changed.
    pub changed_words: u64,
}

/// The physical limit of [`pcm_log_replay`] of the hot stream ([`Locality::HotCold`]), its
/// baseline: the same requests over the same logical pages, the log's PCM a plain byte
/// array of the configured 16 MB, and nothing else simulated. A write to a page of the hot
/// blocks (each with a P-block of 64 sectors of `buffer.log_sector_bytes`, and a table row
/// after all the sectors) reads its sector's header, draws a change of 50–150 B
/// (`buffer.delta_bytes_min..=max`) and its filler (one SplitMix64 step per 8 bytes, as
/// the log layer draws it), and writes the sector header, a one-range record and a table
/// row, each counting the words that change against the bytes there (as
/// `buffer.pcm_accounting = "words"` counts them). A read of a hot page reads its sector's
/// record; every other request goes as in [`page_remap_replay`]. No flash, merge, time or
/// energy: what a logged update cannot do without.
pub fn pcm_log_floor_replay(requests: u64) -> LogFloor {
    use nvmdb_device::splitmix64;
    use nvmdb_flash::log_common::{RANGE_HEADER_BYTES, RECORD_HEADER_BYTES};
    use nvmdb_flash::pcm_log::{SECTOR_HEADER_BYTES, TABLE_ROW_BYTES};
    const ROW_BYTES: usize = TABLE_ROW_BYTES as usize;
    let mut config = bench_config();
    config.buffer.pcm_mb = 16;
    let pages = config.logical_pages();
    let per_block = u64::from(config.flash.pages_per_block);
    let hot_pages = (pages / per_block / 10).max(1) * per_block;
    let sector_bytes = config.buffer.log_sector_bytes as usize;
    let table = index(hot_pages) * sector_bytes;
    let pcm_bytes = index(config.buffer.pcm_mb << 20);
    assert!(table + index(hot_pages / per_block) * ROW_BYTES <= pcm_bytes, "the hot blocks' logs fit");
    let (delta_min, delta_max) = (config.buffer.delta_bytes_min as usize, config.buffer.delta_bytes_max as usize);
    let record_at = SECTOR_HEADER_BYTES + (RECORD_HEADER_BYTES + RANGE_HEADER_BYTES) as usize;
    assert!(record_at + delta_max <= sector_bytes, "a change fits its sector");
    let mut pcm = vec![0u8; pcm_bytes];
    let physical = u32::try_from(config.flash.geometry().pages()).expect("the benchmark SSD has fewer than 2^32 pages");
    let mut l2p = vec![u32::MAX; index(pages)];
    let mut delta_rng = Xoshiro256PlusPlus::seed_from_u64(config.seed ^ 0x5eed);
    // A sector's bytes as written, with room for whole filler words past the change.
    let mut sector = vec![0u8; sector_bytes + 8];
    let (mut next, mut sum, mut logged, mut words) = (0u32, 0u64, 0u64, 0u64);
    let start = Instant::now();
    for (seq, request) in request_stream(&config, pages, Locality::HotCold, requests).enumerate() {
        let lpn = request.offset_bytes / 4096;
        let at = index(lpn) * sector_bytes;
        match request.op {
            Op::Write if lpn < hot_pages => {
                sum = sum.wrapping_add(u64::from_le_bytes(word_at(&pcm, at)));
                let seq = seq as u64;
                let len = delta_rng.gen_range(delta_min..=delta_max);
                let offset = delta_rng.gen_range(0..=4096 - len);
                let salt = splitmix64(seq);
                // Sector header (sequence number, page), record header (one range, an
                // identity), range header (offset, length).
                sector[..8].copy_from_slice(&seq.to_le_bytes());
                sector[8..SECTOR_HEADER_BYTES].copy_from_slice(&(lpn as u32).to_le_bytes());
                let record = &mut sector[SECTOR_HEADER_BYTES..record_at];
                record[..2].copy_from_slice(&1u16.to_le_bytes());
                record[2..10].copy_from_slice(&salt.to_le_bytes());
                record[10..12].copy_from_slice(&(offset as u16).to_le_bytes());
                record[12..14].copy_from_slice(&(len as u16).to_le_bytes());
                for k in 0..len.div_ceil(8) {
                    let word = splitmix64(salt ^ ((((offset / 8) + k) as u64) << 32));
                    sector[record_at + 8 * k..record_at + 8 * k + 8].copy_from_slice(&word.to_le_bytes());
                }
                words += store_counting(&mut pcm[at..at + record_at + len], &sector[..record_at + len]);
                let row_at = table + index(lpn / per_block) * ROW_BYTES;
                let mut row = [0u8; ROW_BYTES];
                row[..8].copy_from_slice(&(lpn / per_block + 1).to_le_bytes());
                row[8..].copy_from_slice(&seq.to_le_bytes());
                words += store_counting(&mut pcm[row_at..row_at + ROW_BYTES], &row);
                logged += 1;
            }
            Op::Write => {
                l2p[index(lpn)] = next;
                next = if next + 1 == physical { 0 } else { next + 1 };
            }
            _ => {
                sum = sum.wrapping_add(u64::from(l2p[index(lpn)]));
                if lpn < hot_pages {
                    // The record: its length from its range header, then its words.
                    let len = usize::from(u16::from_le_bytes([pcm[at + record_at - 2], pcm[at + record_at - 1]]));
                    for k in 0..len.div_ceil(8) {
                        sum = sum.wrapping_add(u64::from_le_bytes(word_at(&pcm, at + record_at + 8 * k)));
                    }
                }
            }
        }
    }
    std::hint::black_box((sum, &l2p, &pcm));
    LogFloor {
        bench: ReplayBench { requests, elapsed: start.elapsed(), write_amplification: 1.0 },
        logged,
        changed_words: words,
    }
}

/// The 8 bytes of `bytes` from `at`.
fn word_at(bytes: &[u8], at: usize) -> [u8; 8] {
    bytes[at..at + 8].try_into().expect("8 bytes")
}

/// Writes `new` over `old`; returns the words (8 B; a shorter tail counts as one) that
/// changed.
fn store_counting(old: &mut [u8], new: &[u8]) -> u64 {
    let mut words = 0;
    let mut count = |a: [u8; 8], b: [u8; 8]| words += u64::from(a != b);
    let whole = new.len() / 8 * 8;
    for (o, n) in old[..whole].chunks_exact(8).zip(new[..whole].chunks_exact(8)) {
        count(o.try_into().expect("8 bytes"), n.try_into().expect("8 bytes"));
    }
    if whole < new.len() {
        let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
        a[..new.len() - whole].copy_from_slice(&old[whole..]);
        b[..new.len() - whole].copy_from_slice(&new[whole..]);
        count(a, b);
    }
    old.copy_from_slice(new);
    words
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
        // No cut and no read-back is asked for.
        other => FlashError::Config(other.to_string()),
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

    /// The log's floor logs exactly the stream's writes to hot pages, and a sector it
    /// rewrites changes words: each record has a new sequence number.
    #[test]
    fn the_log_floor_logs_the_hot_writes() {
        let requests = 20_000;
        let config = bench_config();
        let pages = config.logical_pages();
        let hot = pages / u64::from(config.flash.pages_per_block) / 10 * u64::from(config.flash.pages_per_block);
        let hot_writes = request_stream(&config, pages, Locality::HotCold, requests)
            .filter(|r| matches!(r.op, Op::Write) && r.offset_bytes / 4096 < hot)
            .count() as u64;
        let floor = pcm_log_floor_replay(requests);
        assert_eq!(floor.bench.requests, requests);
        assert!(hot_writes > requests / 2, "most requests are hot writes: {hot_writes}");
        assert_eq!(floor.logged, hot_writes);
        // Every logged write changes its sector's sequence number and its table row, and at
        // most its 176 B (a 150 B change past its 26 B of headers) and 16 B: 22 + 2 words.
        assert!(floor.changed_words >= 2 * hot_writes && floor.changed_words <= 24 * hot_writes, "{floor:?}");
        assert_eq!(pcm_log_floor_replay(requests).changed_words, floor.changed_words, "deterministic");
    }
}
