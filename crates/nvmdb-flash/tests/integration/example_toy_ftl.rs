//! CONTRIBUTING.md's worked example of a new FTL: a toy page-mapped FTL, written outside
//! the crate against its public pieces (`PageStore`, the block pool `ftl::pool`, the pure
//! victim policies of `gc.rs`), replayed on a short trace beside the crate's `PageFtl`.
//! Both must hand back the same page contents; the toy must have collected garbage.
//!
//! The toy appends every write to one open block, keeps a page map in host memory and,
//! when only one free block is left, cleans the closed block `gc::greedy` picks. It has no
//! wear levelling and no recovery (`power_cycle` keeps the default refusal).

use nvmdb_device::{PageContent, PageData};
use nvmdb_flash::config::{FlashSection, FtlSection, SsdConfig};
use nvmdb_flash::ftl::pool::{BlockPool, NONE};
use nvmdb_flash::ftl::PageFtl;
use nvmdb_flash::gc::{self, Candidate};
use nvmdb_flash::replay::{replay, ReplayOptions};
use nvmdb_flash::{FlashError, PageStore, StoreHealth, StoreStats};
use nvmdb_workload::{Content, Op, Request};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Where a logical page lives: `(block, page)`, or `NONE` blocks for unmapped.
#[derive(Debug)]
struct ToyFtl {
    pool: BlockPool,
    logical_pages: u64,
    map: Vec<(u32, u32)>,
    /// Logical page of each physical page, for moving live pages out of a victim.
    owner: Vec<u64>,
    open: (u32, u32),
    /// Fill order of each block, for the policy's ties.
    closed_seq: Vec<u64>,
    seq: u64,
    mapped: u64,
}

impl ToyFtl {
    fn new(config: &SsdConfig) -> Result<ToyFtl, FlashError> {
        let mut pool = BlockPool::new(config)?;
        let blocks = pool.geometry.blocks();
        let physical = blocks * u64::from(pool.ppb());
        let open = (pool.allocate()?, 0);
        Ok(ToyFtl {
            logical_pages: config.logical_pages(),
            map: vec![(NONE, 0); config.logical_pages() as usize],
            owner: vec![u64::MAX; physical as usize],
            open,
            closed_seq: vec![0; blocks as usize],
            seq: 0,
            mapped: 0,
            pool,
        })
    }

    fn check_lpn(&self, lpn: u64) -> Result<usize, FlashError> {
        if lpn >= self.logical_pages {
            return Err(FlashError::OutOfRange { lpn, pages: self.logical_pages });
        }
        Ok(lpn as usize)
    }

    /// The next free page of the open block, opening a new block when it is full.
    fn next_page(&mut self) -> Result<(u32, u32), FlashError> {
        if self.open.1 == self.pool.ppb() {
            self.seq += 1;
            self.closed_seq[self.open.0 as usize] = self.seq;
            self.open = (self.pool.allocate()?, 0);
        }
        let at = self.open;
        self.open.1 += 1;
        Ok(at)
    }

    fn unmap(&mut self, lpn: usize) {
        let (block, page) = self.map[lpn];
        if block != NONE {
            self.pool.set_live(block, page, false);
            self.map[lpn] = (NONE, 0);
            self.mapped -= 1;
        }
    }

    /// Cleans greedy's victim among the closed blocks: its live pages move to the open
    /// block, then it is erased.
    fn collect(&mut self, now_ns: u64) -> Result<u64, FlashError> {
        let ppb = self.pool.ppb();
        let candidates: Vec<Candidate> = (0..self.pool.geometry.blocks() as u32)
            .filter(|&b| self.closed_seq[b as usize] > 0 && b != self.open.0)
            .map(|block| Candidate {
                block,
                valid_pages: self.pool.live_pages(block),
                pages_per_block: ppb,
                closed_seq: self.closed_seq[block as usize],
                last_write_ns: 0,
            })
            .collect();
        let victim = gc::greedy(&candidates).ok_or_else(|| FlashError::Full("no block to clean".into()))?;
        let mut done_ns = now_ns;
        for page in 0..ppb {
            if self.pool.is_live(victim, page) {
                let lpn = self.owner[self.pool.ppn(victim, page) as usize];
                let to = self.next_page()?;
                done_ns = done_ns.max(self.pool.copy(victim, page, to.0, to.1, now_ns)?);
                self.pool.set_live(victim, page, false);
                self.owner[self.pool.ppn(to.0, to.1) as usize] = lpn;
                self.map[lpn as usize] = to;
            }
        }
        self.closed_seq[victim as usize] = 0;
        self.pool.erase(victim, now_ns).map(|t| t.max(done_ns))
    }
}

impl PageStore for ToyFtl {
    fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    fn page_bytes(&self) -> u32 {
        self.pool.geometry.page_bytes
    }

    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        let lpn = self.check_lpn(lpn)?;
        self.pool.stats.host_page_writes += 1;
        // Cleaning needs a free block to copy into: clean while the open block is full
        // and only that one is left.
        let mut start_ns = now_ns;
        while self.open.1 == self.pool.ppb() && self.pool.free_blocks() <= 1 {
            start_ns = self.collect(start_ns)?;
        }
        self.unmap(lpn);
        let (block, page) = self.next_page()?;
        let done_ns = self.pool.program_at(block, page, &data, start_ns)?;
        self.owner[self.pool.ppn(block, page) as usize] = lpn as u64;
        self.map[lpn] = (block, page);
        self.mapped += 1;
        Ok(done_ns)
    }

    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let index = self.check_lpn(lpn)?;
        self.pool.stats.host_page_reads += 1;
        match self.map[index] {
            (NONE, _) => self.pool.read_unwritten(lpn, now_ns),
            (block, page) => self.pool.read(block, page, now_ns),
        }
    }

    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let lpn = self.check_lpn(lpn)?;
        self.pool.stats.host_page_trims += 1;
        self.unmap(lpn);
        Ok(now_ns)
    }

    fn stats(&self) -> StoreStats {
        self.pool.store_stats()
    }

    fn reset_stats(&mut self) {
        self.pool.reset_stats();
    }

    fn check_invariants(&self) -> Result<(), String> {
        let live = self.pool.total_live();
        if live != self.mapped {
            return Err(format!("{live} live pages but {} mapped logical pages", self.mapped));
        }
        for (lpn, &(block, page)) in self.map.iter().enumerate() {
            if block != NONE && self.owner[self.pool.ppn(block, page) as usize] != lpn as u64 {
                return Err(format!("logical page {lpn} maps to a page another owns"));
            }
        }
        Ok(())
    }

    fn health(&self) -> StoreHealth {
        self.pool.health(self.mapped)
    }
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

/// Whole-page writes (and a few reads and trims) over the logical pages, 90 % of them to
/// the first tenth, so GC finds blocks with few live pages.
fn trace(pages: u64, requests: u64) -> Vec<Request> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    (0..requests)
        .map(|i| {
            let lpn = if rng.gen_bool(0.9) { rng.gen_range(0..pages / 10) } else { rng.gen_range(0..pages) };
            let op = match rng.gen_range(0..20) {
                0 => Op::Read,
                1 => Op::Trim,
                _ => Op::Write,
            };
            Request { time_ns: i * 10_000, op, offset_bytes: lpn * 4096, len_bytes: 4096, content: Content::Unknown }
        })
        .collect()
}

#[test]
fn a_toy_ftl_replays_a_trace_to_the_same_pages_as_the_page_ftl() {
    let config = config();
    let options = ReplayOptions { content: PageContent::Bytes, seed: 3, ..ReplayOptions::default() };
    let mut toy = ToyFtl::new(&config).expect("the toy builds");
    let mut page_ftl = PageFtl::new(&config).expect("the page FTL builds");
    let requests = trace(config.logical_pages(), 4_000);
    let toy_report = replay(&mut toy, requests.iter().cloned().map(Ok::<_, ()>), &options).expect("toy replay");
    let reference = replay(&mut page_ftl, requests.iter().cloned().map(Ok::<_, ()>), &options).expect("replay");
    toy.check_invariants().expect("the toy's invariants hold");
    assert_eq!(toy_report.stats.host_page_writes, reference.stats.host_page_writes);
    // The device filled and the toy cleaned blocks to go on.
    assert!(toy_report.stats.block_erases > 10 && toy_report.stats.gc_page_copies > 0, "{:?}", toy_report.stats);
    for lpn in 0..config.logical_pages() {
        let (ours, _) = toy.read(lpn, 0).expect("toy read");
        let (theirs, _) = page_ftl.read(lpn, 0).expect("page FTL read");
        assert!(ours == theirs, "logical page {lpn} differs");
    }
}
