//! CONTRIBUTING.md's worked example of a new log scheme: a toy `LogArea` plugged into the
//! crate's log layer (`LogStore::over` the page-mapped FTL) from outside the crate, and
//! replayed on a short trace of small updates beside the plain `PageFtl`. The log layer
//! must be invisible in the pages read back, and the toy must have logged and merged.
//!
//! The toy keeps up to `capacity` records in host memory (a volatile log: it pays for no
//! device and cannot recover, so it is an example only, never a scheme to compare) and,
//! when full, asks the layer to merge the logical block with the most records.

use std::collections::BTreeMap;

use nvmdb_device::{PageContent, PageData, Pcm};
use nvmdb_flash::config::{FlashSection, FtlSection, SsdConfig};
use nvmdb_flash::ftl::PageFtl;
use nvmdb_flash::log_common::{Append, LogArea, Record, Update};
use nvmdb_flash::log_store::{DeltaPolicy, LogStore, MergeScope};
use nvmdb_flash::replay::{replay, ReplayOptions};
use nvmdb_flash::{FlashError, PageStore, Pending};
use nvmdb_workload::{Content, Op, Request};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[derive(Debug)]
struct ToyLog {
    capacity: usize,
    pages_per_block: u64,
    /// Each logged page's records, in the order they apply.
    records: BTreeMap<u64, Vec<Record>>,
}

impl ToyLog {
    fn count(&self) -> usize {
        self.records.values().map(Vec::len).sum()
    }

    fn block_records(&self, lbn: u64) -> usize {
        let pages = lbn * self.pages_per_block..(lbn + 1) * self.pages_per_block;
        self.records.range(pages).map(|(_, r)| r.len()).sum()
    }
}

impl LogArea for ToyLog {
    fn name(&self) -> &'static str {
        "toy-log"
    }

    fn has_records(&self, lpn: u64) -> bool {
        self.records.contains_key(&lpn)
    }

    fn records(&mut self, _ftl: &mut PageFtl, lpn: u64, now_ns: u64) -> Result<(Vec<Record>, u64), FlashError> {
        Ok((self.records.get(&lpn).cloned().unwrap_or_default(), now_ns))
    }

    fn append(&mut self, _ftl: &mut PageFtl, update: &Update, now_ns: u64) -> Result<Append, FlashError> {
        if self.count() == self.capacity {
            let victim = self.logged_blocks().into_iter().max_by_key(|&lbn| self.block_records(lbn));
            return Ok(victim.map_or(Append::Unloggable, Append::NeedMerge));
        }
        let entries = match update.page {
            Some(page) => {
                update.change.iter().map(|&(o, l)| (o, page[o as usize..(o + l) as usize].to_vec())).collect()
            }
            None => Vec::new(),
        };
        self.records.entry(update.lpn).or_default().push(Record { entries, fingerprint: update.fingerprint });
        Ok(Append::Logged { done_ns: now_ns, merge: None })
    }

    fn drop_page(&mut self, _ftl: &mut PageFtl, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        self.records.remove(&lpn);
        Ok(now_ns)
    }

    fn drop_block(&mut self, _ftl: &mut PageFtl, lbn: u64, now_ns: u64) -> Result<u64, FlashError> {
        self.records.retain(|lpn, _| lpn / self.pages_per_block != lbn);
        Ok(now_ns)
    }

    fn logged_offsets(&self, lbn: u64) -> Vec<u32> {
        let pages = lbn * self.pages_per_block..(lbn + 1) * self.pages_per_block;
        self.records.range(pages).map(|(lpn, _)| (lpn % self.pages_per_block) as u32).collect()
    }

    fn logged_blocks(&self) -> Vec<u64> {
        let mut blocks: Vec<u64> = self.records.keys().map(|lpn| lpn / self.pages_per_block).collect();
        blocks.dedup();
        blocks
    }

    fn pending(&self) -> Pending {
        Pending { log_records: self.count() as u64, log_pages: self.records.len() as u64, dram_pages: 0 }
    }

    fn check(&self, _ftl: &PageFtl) -> Result<(), String> {
        if self.count() > self.capacity {
            return Err(format!("{} records in a log of {}", self.count(), self.capacity));
        }
        Ok(())
    }

    fn recover(&mut self, _ftl: &mut PageFtl, _host_pages: u64) -> Result<(), FlashError> {
        Err(FlashError::Config("the toy log lives in volatile memory and cannot recover".into()))
    }

    fn pcm(&self) -> Option<&Pcm> {
        None
    }

    fn reset_stats(&mut self) {}
}

fn config() -> SsdConfig {
    let base = SsdConfig::default();
    SsdConfig {
        content: PageContent::Bytes,
        flash: FlashSection {
            packages: 1,
            planes_per_package: 2,
            blocks_per_plane: 16,
            pages_per_block: 16,
            ..base.flash
        },
        ftl: FtlSection { overprovision: 0.25, ..base.ftl },
        ..base
    }
}

/// Small writes (100 to 400 B, each a read-modify-write of its page) over the first 64
/// logical pages, with a few reads.
fn trace() -> Vec<Request> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    (0..3_000u64)
        .map(|i| {
            let offset = rng.gen_range(0..64 * 4096 - 512);
            let op = if rng.gen_ratio(1, 10) { Op::Read } else { Op::Write };
            let len_bytes = rng.gen_range(100..400);
            Request { time_ns: i * 10_000, op, offset_bytes: offset, len_bytes, content: Content::Unknown }
        })
        .collect()
}

#[test]
fn a_toy_log_scheme_replays_a_trace_to_the_same_pages_as_the_plain_ftl() {
    let config = config();
    let ftl = PageFtl::new(&config).expect("the FTL builds");
    let (host_pages, pages_per_block) = (ftl.logical_pages(), u64::from(ftl.geometry().pages_per_block));
    let area = ToyLog { capacity: 40, pages_per_block, records: BTreeMap::new() };
    let policy = DeltaPolicy::Sampled { min: 50, max: 150 };
    let mut toy = LogStore::over(ftl, area, host_pages, policy, MergeScope::LiveBlock, 1).expect("the layer builds");
    let mut plain = PageFtl::new(&config).expect("the FTL builds");
    let options = ReplayOptions { content: PageContent::Bytes, seed: 4, ..ReplayOptions::default() };
    let requests = trace();
    let report = replay(&mut toy, requests.iter().cloned().map(Ok::<_, ()>), &options).expect("toy replay");
    replay(&mut plain, requests.iter().cloned().map(Ok::<_, ()>), &options).expect("plain replay");
    toy.check_invariants().expect("the layer's and the toy's invariants hold");
    // The toy logged small writes and ran out of room, so the layer merged blocks.
    assert!(report.stats.logged_writes > 1_000 && report.stats.merges > 10, "{:?}", report.stats);
    for lpn in 0..64 {
        let (ours, _) = toy.read(lpn, 0).expect("toy read");
        let (theirs, _) = plain.read(lpn, 0).expect("plain read");
        assert!(matches!(ours, PageData::Bytes(_)), "logical page {lpn} was written");
        assert!(ours == theirs, "logical page {lpn} differs");
    }
}
