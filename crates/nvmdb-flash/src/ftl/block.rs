//! The block-mapped FTL: logical block `lpn / ppb` maps to one physical block, and a
//! logical page always sits at offset `lpn % ppb` in it.
//!
//! NAND pages must be programmed in order, so a write at an offset past the block's
//! write pointer first pads the erased pages below it, and a write to an offset already
//! programmed is a merge: a fresh block receives the live pages and the new one in order,
//! and the old block is erased.

use nvmdb_device::PageData;

use crate::config::SsdConfig;
use crate::ftl::pool::{BlockPool, NONE};
use crate::layer::{FlashError, PageStore, StoreHealth, StoreStats};

/// The block-mapped FTL.
#[derive(Debug)]
pub struct BlockFtl {
    pool: BlockPool,
    logical_pages: u64,
    /// Logical block → physical block.
    l2b: Vec<u32>,
    mapped_pages: u64,
}

impl BlockFtl {
    /// Builds the FTL over a fresh flash array.
    pub fn new(config: &SsdConfig) -> Result<BlockFtl, FlashError> {
        let pool = BlockPool::new(config)?;
        let logical_pages = config.logical_pages();
        let logical_blocks = logical_pages.div_ceil(u64::from(pool.ppb()));
        if logical_blocks >= pool.geometry.blocks() {
            return Err(FlashError::Config(format!(
                "ftl.overprovision = {} leaves no spare block for merges (block mapping)",
                config.ftl.overprovision
            )));
        }
        Ok(BlockFtl { pool, logical_pages, l2b: vec![NONE; logical_blocks as usize], mapped_pages: 0 })
    }

    fn split(&self, lpn: u64) -> Result<(usize, u32), FlashError> {
        if lpn >= self.logical_pages {
            return Err(FlashError::OutOfRange { lpn, pages: self.logical_pages });
        }
        let ppb = u64::from(self.pool.ppb());
        Ok(((lpn / ppb) as usize, (lpn % ppb) as u32))
    }

    /// Rewrites logical block `lbn` into a fresh block with `data` at `offset`.
    fn merge(&mut self, lbn: usize, offset: u32, data: &PageData, now_ns: u64) -> Result<u64, FlashError> {
        let old = self.l2b[lbn];
        let new = self.pool.allocate()?;
        let mut done_ns = now_ns;
        for page in 0..self.pool.ppb() {
            if page == offset {
                done_ns = done_ns.max(self.pool.program_at(new, page, data, now_ns)?);
            } else if self.pool.is_live(old, page) {
                done_ns = done_ns.max(self.pool.copy(old, page, new, page, now_ns)?);
                self.pool.set_live(old, page, false);
            }
        }
        self.pool.set_live(old, offset, false);
        self.pool.erase(old, now_ns)?;
        self.pool.stats.merges += 1;
        self.l2b[lbn] = new;
        Ok(done_ns)
    }
}

impl PageStore for BlockFtl {
    fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    fn page_bytes(&self) -> u32 {
        self.pool.geometry.page_bytes
    }

    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        let (lbn, offset) = self.split(lpn)?;
        self.pool.stats.host_page_writes += 1;
        if self.l2b[lbn] == NONE {
            self.l2b[lbn] = self.pool.allocate()?;
        }
        let block = self.l2b[lbn];
        if !self.pool.is_live(block, offset) {
            self.mapped_pages += 1;
        }
        if self.pool.flash.write_pointer(u64::from(block)) <= offset {
            return self.pool.program_at(block, offset, &data, now_ns);
        }
        self.merge(lbn, offset, &data, now_ns)
    }

    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let (lbn, offset) = self.split(lpn)?;
        self.pool.stats.host_page_reads += 1;
        let block = self.l2b[lbn];
        if block == NONE || !self.pool.is_live(block, offset) {
            return self.pool.read_unwritten(lpn, now_ns);
        }
        self.pool.read(block, offset, now_ns)
    }

    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let (lbn, offset) = self.split(lpn)?;
        self.pool.stats.host_page_trims += 1;
        let block = self.l2b[lbn];
        if block != NONE && self.pool.is_live(block, offset) {
            self.pool.set_live(block, offset, false);
            self.mapped_pages -= 1;
        }
        Ok(now_ns)
    }

    fn stats(&self) -> StoreStats {
        self.pool.store_stats()
    }

    fn reset_stats(&mut self) {
        self.pool.reset_stats();
    }

    fn check_invariants(&self) -> Result<(), String> {
        let mut seen = vec![false; self.pool.geometry.blocks() as usize];
        for (lbn, &block) in self.l2b.iter().enumerate() {
            if block == NONE {
                continue;
            }
            if std::mem::replace(&mut seen[block as usize], true) {
                return Err(format!("physical block {block} is mapped twice (logical block {lbn})"));
            }
        }
        let live = self.pool.total_live();
        if live != self.mapped_pages {
            return Err(format!("{live} live pages but {} mapped logical pages", self.mapped_pages));
        }
        let used = seen.iter().filter(|&&s| s).count();
        if used + self.pool.free_blocks() != seen.len() {
            return Err(format!("{used} mapped + {} free blocks != {} blocks", self.pool.free_blocks(), seen.len()));
        }
        Ok(())
    }

    fn health(&self) -> StoreHealth {
        self.pool.health(self.mapped_pages)
    }
}
