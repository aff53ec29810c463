//! What the block-granular FTLs (block-mapped and hybrid) share: the flash array, a pool
//! of free blocks ordered by the wear-levelling key, in-order programming with padding,
//! and per-block bitmaps of pages holding live data.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use nvmdb_device::{FlashArray, FlashGeometry, PageContent, PageData};

use crate::config::{SsdConfig, WearLeveling};
use crate::layer::{FlashError, StoreHealth, StoreStats};
use crate::wear_level;

/// Marks an unmapped entry.
pub const NONE: u32 = u32::MAX;

/// Flash plus free blocks plus live-page bitmaps.
#[derive(Debug)]
pub struct BlockPool {
    /// The flash array.
    pub flash: FlashArray,
    /// Its geometry.
    pub geometry: FlashGeometry,
    free: BinaryHeap<Reverse<(u64, u32)>>,
    wear_leveling: WearLeveling,
    seq: u64,
    /// Live-page bitmap, `words_per_block` words per block.
    live: Vec<u64>,
    words_per_block: usize,
    /// Counters kept here (the flash keeps its own).
    pub stats: StoreStats,
}

impl BlockPool {
    /// A pool with every block free.
    pub fn new(config: &SsdConfig) -> Result<BlockPool, FlashError> {
        config.validate()?;
        let geometry = config.flash.geometry();
        let flash = FlashArray::new(geometry, config.flash.timing.timing(), config.content)?;
        let words_per_block = (geometry.pages_per_block as usize).div_ceil(64);
        let mut pool = BlockPool {
            flash,
            geometry,
            free: BinaryHeap::new(),
            wear_leveling: config.ftl.wear_leveling,
            seq: 0,
            live: vec![0; geometry.blocks() as usize * words_per_block],
            words_per_block,
            stats: StoreStats::default(),
        };
        for block in 0..geometry.blocks() as u32 {
            pool.release_erased(block);
        }
        Ok(pool)
    }

    /// Pages per block.
    pub fn ppb(&self) -> u32 {
        self.geometry.pages_per_block
    }

    /// Free blocks.
    pub fn free_blocks(&self) -> usize {
        self.free.len()
    }

    fn release_erased(&mut self, block: u32) {
        self.seq += 1;
        let key = wear_level::free_block_key(self.wear_leveling, self.flash.erase_count(u64::from(block)), self.seq);
        self.free.push(Reverse((key, block)));
    }

    /// Takes a free block (fewest erases first under wear levelling).
    pub fn allocate(&mut self) -> Result<u32, FlashError> {
        let Reverse((_, block)) = self.free.pop().ok_or_else(|| FlashError::Full("no free block".into()))?;
        Ok(block)
    }

    /// Erases a block (its pages must all be dead) and returns it to the pool; the erase
    /// counts as GC time. Returns the completion time.
    pub fn erase(&mut self, block: u32, now_ns: u64) -> Result<u64, FlashError> {
        assert!(self.live_pages(block) == 0, "an erased block holds no live page");
        let timing = self.flash.erase_block(u64::from(block), now_ns)?;
        self.stats.gc_time_ns += timing.end_ns - timing.start_ns;
        self.release_erased(block);
        Ok(timing.end_ns)
    }

    /// The physical page number of page `page` of `block`.
    pub fn ppn(&self, block: u32, page: u32) -> u64 {
        u64::from(block) * u64::from(self.ppb()) + u64::from(page)
    }

    /// Whether page `page` of `block` holds live data.
    pub fn is_live(&self, block: u32, page: u32) -> bool {
        self.live[block as usize * self.words_per_block + page as usize / 64] >> (page % 64) & 1 == 1
    }

    /// Marks page `page` of `block` live or dead.
    pub fn set_live(&mut self, block: u32, page: u32, live: bool) {
        let word = &mut self.live[block as usize * self.words_per_block + page as usize / 64];
        if live {
            *word |= 1 << (page % 64);
        } else {
            *word &= !(1 << (page % 64));
        }
    }

    /// Live pages of a block.
    pub fn live_pages(&self, block: u32) -> u32 {
        let start = block as usize * self.words_per_block;
        self.live[start..start + self.words_per_block].iter().map(|w| w.count_ones()).sum()
    }

    /// Data for a padding page (programmed only to keep a block's pages in order).
    fn padding(&self) -> PageData {
        match self.flash.content_mode() {
            PageContent::Bytes => PageData::Bytes(vec![0xFF; self.geometry.page_bytes as usize]),
            PageContent::Fingerprint | PageContent::None => PageData::Empty,
        }
    }

    /// Programs `data` at page `page` of `block`, first padding any pages below it that
    /// are still erased. Marks the page live; returns the completion time.
    pub fn program_at(&mut self, block: u32, page: u32, data: &PageData, now_ns: u64) -> Result<u64, FlashError> {
        let mut done_ns = now_ns;
        while self.flash.write_pointer(u64::from(block)) < page {
            let pad = self.flash.write_pointer(u64::from(block));
            let padding = self.padding();
            done_ns = self.flash.program_page(self.ppn(block, pad), &padding, now_ns)?.end_ns;
        }
        done_ns = done_ns.max(self.flash.program_page(self.ppn(block, page), data, now_ns)?.end_ns);
        self.set_live(block, page, true);
        Ok(done_ns)
    }

    /// Reads page `page` of `block`; returns the data and the completion time.
    pub fn read(&mut self, block: u32, page: u32, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let (data, timing) = self.flash.read_page(self.ppn(block, page), now_ns)?;
        Ok((data, timing.end_ns))
    }

    /// A read of a never-written page: costs a flash read on the plane the logical page
    /// would stripe to (the trace's data predates it), returns nothing.
    pub fn read_unwritten(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let block = (lpn % self.geometry.planes()) as u32;
        let (_, end_ns) = self.read(block, 0, now_ns)?;
        Ok((PageData::Empty, end_ns))
    }

    /// Copies page `from` of block `src` to page `to` of `dst` (GC or merge); returns the
    /// completion time.
    pub fn copy(&mut self, src: u32, from: u32, dst: u32, to: u32, now_ns: u64) -> Result<u64, FlashError> {
        let (data, read_ns) = self.read(src, from, now_ns)?;
        let done_ns = self.program_at(dst, to, &data, read_ns)?;
        self.stats.gc_page_copies += 1;
        self.stats.gc_time_ns += self.flash.timing().read_ns + self.flash.timing().program_ns;
        Ok(done_ns)
    }

    /// Counters: this pool's plus the flash's.
    pub fn store_stats(&self) -> StoreStats {
        self.stats.with_flash(&self.flash)
    }

    /// Zeroes the counters.
    pub fn reset_stats(&mut self) {
        self.stats = StoreStats::default();
        self.flash.reset_stats();
    }

    /// Wear and space, with `mapped` logical pages live.
    pub fn health(&self, mapped: u64) -> StoreHealth {
        StoreHealth {
            blocks: self.geometry.blocks(),
            endurance: self.geometry.endurance,
            block_erases_total: self.flash.erase_counts().sum(),
            block_erases_max: self.flash.erase_counts().max().unwrap_or(0),
            mapped_pages: mapped,
            live_physical_pages: mapped,
        }
    }

    /// Total live pages.
    pub fn total_live(&self) -> u64 {
        self.live.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}
