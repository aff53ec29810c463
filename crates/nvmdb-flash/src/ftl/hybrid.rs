//! The hybrid log-block FTL, FAST-style (Lee et al., 2007): data blocks are block-mapped;
//! updates that cannot go in place are appended to log blocks shared by all data blocks
//! (fully associative) and page-mapped. When every log block is full, the oldest is
//! reclaimed: each logical block with a live page in it is full-merged (its latest pages,
//! from the data block and any log block, are copied in order into a fresh block, and the
//! old data block is erased), then the emptied log block is erased.
//!
//! Simplification: FAST's separate sequential-write log block is not modelled; all
//! updates go to the random-write log blocks.

use std::collections::VecDeque;

use nvmdb_device::PageData;

use crate::config::SsdConfig;
use crate::ftl::pool::{BlockPool, NONE};
use crate::layer::{FlashError, PageStore, StoreHealth, StoreStats};

/// The hybrid (FAST) FTL.
#[derive(Debug)]
pub struct HybridFtl {
    pool: BlockPool,
    logical_pages: u64,
    /// Logical block → data block.
    l2b: Vec<u32>,
    /// Logical page → its copy in a log block (physical page), if newer than the data block.
    log_l2p: Vec<u32>,
    /// Physical page in a log block → logical page (`NONE` when dead).
    log_p2l: Vec<u32>,
    /// Log blocks, oldest first; the last one is being filled.
    logs: VecDeque<u32>,
    log_blocks: usize,
    mapped_pages: u64,
}

impl HybridFtl {
    /// Builds the FTL over a fresh flash array.
    pub fn new(config: &SsdConfig) -> Result<HybridFtl, FlashError> {
        let pool = BlockPool::new(config)?;
        let logical_pages = config.logical_pages();
        let logical_blocks = logical_pages.div_ceil(u64::from(pool.ppb()));
        let log_blocks = u64::from(config.ftl.log_blocks);
        if log_blocks == 0 || logical_blocks + log_blocks + 1 > pool.geometry.blocks() {
            return Err(FlashError::Config(format!(
                "hybrid mapping needs 1 to {} log blocks with ftl.overprovision = {} (ftl.log_blocks = {log_blocks})",
                pool.geometry.blocks().saturating_sub(logical_blocks + 1),
                config.ftl.overprovision
            )));
        }
        let physical_pages = pool.geometry.pages() as usize;
        Ok(HybridFtl {
            pool,
            logical_pages,
            l2b: vec![NONE; logical_blocks as usize],
            log_l2p: vec![NONE; logical_pages as usize],
            log_p2l: vec![NONE; physical_pages],
            logs: VecDeque::new(),
            log_blocks: log_blocks as usize,
            mapped_pages: 0,
        })
    }

    fn split(&self, lpn: u64) -> Result<(usize, u32), FlashError> {
        if lpn >= self.logical_pages {
            return Err(FlashError::OutOfRange { lpn, pages: self.logical_pages });
        }
        let ppb = u64::from(self.pool.ppb());
        Ok(((lpn / ppb) as usize, (lpn % ppb) as u32))
    }

    fn block_page(&self, ppn: u32) -> (u32, u32) {
        (ppn / self.pool.ppb(), ppn % self.pool.ppb())
    }

    /// Whether logical page `lpn` holds data (in a log block or its data block).
    fn is_mapped(&self, lpn: u64) -> bool {
        let (lbn, offset) = ((lpn / u64::from(self.pool.ppb())) as usize, (lpn % u64::from(self.pool.ppb())) as u32);
        self.log_l2p[lpn as usize] != NONE || (self.l2b[lbn] != NONE && self.pool.is_live(self.l2b[lbn], offset))
    }

    /// Kills the current copy of `lpn`, wherever it is.
    fn kill(&mut self, lpn: u64) {
        let log = std::mem::replace(&mut self.log_l2p[lpn as usize], NONE);
        if log != NONE {
            let (block, page) = self.block_page(log);
            self.pool.set_live(block, page, false);
            self.log_p2l[log as usize] = NONE;
        }
        let (lbn, offset) = self.split(lpn).expect("in range");
        if self.l2b[lbn] != NONE {
            self.pool.set_live(self.l2b[lbn], offset, false);
        }
    }

    /// A log page to append to, reclaiming the oldest log block when all are full.
    fn log_page(&mut self, now_ns: u64) -> Result<(u32, u32), FlashError> {
        if let Some(&last) = self.logs.back() {
            let wp = self.pool.flash.write_pointer(u64::from(last));
            if wp < self.pool.ppb() {
                return Ok((last, wp));
            }
        }
        if self.logs.len() == self.log_blocks {
            let victim = self.logs.pop_front().expect("log blocks exist");
            self.reclaim(victim, now_ns)?;
        }
        let block = self.pool.allocate()?;
        self.logs.push_back(block);
        Ok((block, 0))
    }

    /// Full-merges every logical block with a live page in log block `victim`, then
    /// erases it.
    fn reclaim(&mut self, victim: u32, now_ns: u64) -> Result<(), FlashError> {
        let ppb = self.pool.ppb();
        for page in 0..ppb {
            let lpn = self.log_p2l[self.pool.ppn(victim, page) as usize];
            if lpn != NONE {
                self.full_merge(lpn as usize / ppb as usize, now_ns)?;
            }
        }
        self.pool.erase(victim, now_ns)?;
        Ok(())
    }

    /// Copies the latest version of each page of logical block `lbn` into a fresh block.
    fn full_merge(&mut self, lbn: usize, now_ns: u64) -> Result<(), FlashError> {
        let ppb = self.pool.ppb();
        let old = self.l2b[lbn];
        let new = self.pool.allocate()?;
        for page in 0..ppb {
            let lpn = lbn * ppb as usize + page as usize;
            if lpn as u64 >= self.logical_pages {
                break;
            }
            let log = self.log_l2p[lpn];
            if log != NONE {
                let (block, from) = self.block_page(log);
                self.pool.copy(block, from, new, page, now_ns)?;
                self.pool.set_live(block, from, false);
                self.log_l2p[lpn] = NONE;
                self.log_p2l[log as usize] = NONE;
                if old != NONE {
                    self.pool.set_live(old, page, false);
                }
            } else if old != NONE && self.pool.is_live(old, page) {
                self.pool.copy(old, page, new, page, now_ns)?;
                self.pool.set_live(old, page, false);
            }
        }
        if old != NONE {
            self.pool.erase(old, now_ns)?;
        }
        self.l2b[lbn] = new;
        self.pool.stats.merges += 1;
        Ok(())
    }
}

impl PageStore for HybridFtl {
    fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    fn page_bytes(&self) -> u32 {
        self.pool.geometry.page_bytes
    }

    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        let (lbn, offset) = self.split(lpn)?;
        self.pool.stats.host_page_writes += 1;
        if !self.is_mapped(lpn) {
            self.mapped_pages += 1;
        }
        if self.l2b[lbn] == NONE {
            self.l2b[lbn] = self.pool.allocate()?;
        }
        let data_block = self.l2b[lbn];
        // In place while the data block's page is still erased.
        if self.pool.flash.write_pointer(u64::from(data_block)) <= offset {
            self.kill(lpn);
            return self.pool.program_at(data_block, offset, &data, now_ns);
        }
        let (block, page) = self.log_page(now_ns)?;
        // Reclaiming may have merged this logical block: re-check for an in-place slot.
        let data_block = self.l2b[lbn];
        self.kill(lpn);
        if self.pool.flash.write_pointer(u64::from(data_block)) <= offset {
            return self.pool.program_at(data_block, offset, &data, now_ns);
        }
        let done_ns = self.pool.program_at(block, page, &data, now_ns)?;
        let ppn = self.pool.ppn(block, page) as u32;
        self.log_l2p[lpn as usize] = ppn;
        self.log_p2l[ppn as usize] = lpn as u32;
        Ok(done_ns)
    }

    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let (lbn, offset) = self.split(lpn)?;
        self.pool.stats.host_page_reads += 1;
        let log = self.log_l2p[lpn as usize];
        if log != NONE {
            let (block, page) = self.block_page(log);
            return self.pool.read(block, page, now_ns);
        }
        let block = self.l2b[lbn];
        if block == NONE || !self.pool.is_live(block, offset) {
            return self.pool.read_unwritten(lpn, now_ns);
        }
        self.pool.read(block, offset, now_ns)
    }

    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        self.split(lpn)?;
        self.pool.stats.host_page_trims += 1;
        if self.is_mapped(lpn) {
            self.mapped_pages -= 1;
        }
        self.kill(lpn);
        Ok(now_ns)
    }

    fn stats(&self) -> StoreStats {
        self.pool.store_stats()
    }

    fn reset_stats(&mut self) {
        self.pool.reset_stats();
    }

    fn check_invariants(&self) -> Result<(), String> {
        for (lpn, &ppn) in self.log_l2p.iter().enumerate() {
            if ppn == NONE {
                continue;
            }
            let (block, page) = self.block_page(ppn);
            if self.log_p2l[ppn as usize] != lpn as u32 || !self.pool.is_live(block, page) {
                return Err(format!("logical page {lpn}: log copy {ppn} is not live or not owned"));
            }
            if !self.logs.contains(&block) {
                return Err(format!("logical page {lpn}: log copy {ppn} is outside the log blocks"));
            }
            let lbn = lpn / self.pool.ppb() as usize;
            let offset = lpn as u32 % self.pool.ppb();
            if self.l2b[lbn] != NONE && self.pool.is_live(self.l2b[lbn], offset) {
                return Err(format!("logical page {lpn} is live in both a log and its data block"));
            }
        }
        let mapped = (0..self.logical_pages).filter(|&lpn| self.is_mapped(lpn)).count() as u64;
        if mapped != self.mapped_pages || self.pool.total_live() != mapped {
            return Err(format!(
                "{} mapped pages counted, {mapped} mapped, {} live",
                self.mapped_pages,
                self.pool.total_live()
            ));
        }
        let used = self.l2b.iter().filter(|&&b| b != NONE).count() + self.logs.len();
        if used + self.pool.free_blocks() != self.pool.geometry.blocks() as usize {
            return Err(format!("{used} blocks in use + {} free != all blocks", self.pool.free_blocks()));
        }
        Ok(())
    }

    fn health(&self) -> StoreHealth {
        self.pool.health(self.mapped_pages)
    }
}
