//! In-Page Logging on flash (Lee & Moon, SIGMOD 2007; as IPL-P, seed 002, describes it).
//!
//! Each erase block holds data pages followed by an in-flash log area: one sixteenth of
//! the block (IPL's 8 KB of a 128 KB erase unit), at least one page, written 512 B sector
//! by sector with partial-page programming (which IPL turns on in the geometry). An
//! update writes one log record (its changed byte ranges, at most one sector) into the
//! block's next free log sector; reads apply the page's records in order. When the log
//! area is full, or a change does not fit one sector, the block is merged: data pages and
//! log records are read, the up-to-date pages written sequentially into a clean block and
//! the old block erased.
//!
//! Before the first log sector of a block is programmed its remaining data pages are
//! programmed erased (NAND programs a block's pages in order), so later first writes to
//! those pages are whole-page changes that merge. In fingerprint and metadata modes the
//! controller's record index keeps each record's content identity (a flash page holds one
//! fingerprint, not one per sector); in bytes mode records are decoded from flash.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use nvmdb_device::flash::SECTOR_BYTES;
use nvmdb_device::{PageContent, PageData};

use crate::config::SsdConfig;
use crate::layer::{FlashError, PageStore, StoreHealth, StoreStats};
use crate::log_common::{
    apply_record, decode_record, diff_ranges, encode_record, fingerprint_of, fits, BlockFlash, Record, SchemeParams,
};

/// One log record in a block's log area.
#[derive(Debug, Clone, Copy)]
struct LogRecord {
    /// Data page (offset in the block) the record belongs to.
    offset: u32,
    /// Log sector index in the block's log area.
    sector: u32,
    /// Encoded length, bytes.
    len: u32,
    /// Content identity (fingerprint and metadata modes).
    fingerprint: u64,
}

/// IPL over flash with partial-page programming.
#[derive(Debug)]
pub struct IplStore {
    base: BlockFlash,
    log_pages: u32,
    sectors_per_page: u32,
    /// Records of each logical block, in write order.
    logs: BTreeMap<u64, Vec<LogRecord>>,
}

impl IplStore {
    /// Builds the store from `[flash]` (partial programming is switched on),
    /// `[ftl] overprovision`, `[buffer]` and `content`.
    pub fn new(config: &SsdConfig) -> Result<IplStore, FlashError> {
        IplStore::with_params(&SchemeParams::from_config(config))
    }

    /// Builds the store from explicit parameters.
    pub fn with_params(params: &SchemeParams) -> Result<IplStore, FlashError> {
        let mut params = *params;
        params.geometry.partial_programming = true;
        let pages = params.geometry.pages_per_block;
        if pages < 2 || !params.geometry.page_bytes.is_multiple_of(SECTOR_BYTES) {
            return Err(FlashError::Config(
                "IPL needs at least 2 pages per block and pages of whole 512 B sectors".into(),
            ));
        }
        let log_pages = (pages / 16).max(1);
        Ok(IplStore {
            base: BlockFlash::new(&params, pages - log_pages)?,
            log_pages,
            sectors_per_page: params.geometry.page_bytes / SECTOR_BYTES,
            logs: BTreeMap::new(),
        })
    }

    /// Flash and PCM service time so far, ns (queueing excluded).
    pub fn busy_ns(&self) -> u64 {
        self.base.flash.stats().busy_ns
    }

    /// Flash energy so far, pJ.
    pub fn energy_pj(&self) -> u64 {
        self.base.flash.stats().energy_pj
    }

    fn log_sectors(&self) -> u32 {
        self.log_pages * self.sectors_per_page
    }

    fn block_ppn(&self, block: u64, page: u32) -> u64 {
        block * u64::from(self.base.flash.geometry().pages_per_block) + u64::from(page)
    }

    /// Applies a page's records to its flash copy, reading each log page once.
    fn apply_logs(
        &mut self,
        lbn: u64,
        offset: u32,
        mut data: PageData,
        now_ns: u64,
    ) -> Result<(PageData, u64), FlashError> {
        let records: Vec<LogRecord> =
            self.logs.get(&lbn).map(|r| r.iter().filter(|r| r.offset == offset).copied().collect()).unwrap_or_default();
        let mut done = now_ns;
        let mut page_cache: BTreeMap<u32, PageData> = BTreeMap::new();
        for record in records {
            let decoded = if self.base.flash.content_mode() == PageContent::Bytes {
                let page = self.base.data_pages + record.sector / self.sectors_per_page;
                let cached = match page_cache.entry(page) {
                    Entry::Occupied(e) => e.into_mut(),
                    Entry::Vacant(e) => {
                        let block = self.base.physical(lbn).expect("a block with logs is mapped");
                        let (bytes, t) = self.base.read_physical(self.block_ppn(block, page), now_ns)?;
                        done = done.max(t);
                        e.insert(bytes)
                    }
                };
                let PageData::Bytes(bytes) = cached else { unreachable!("bytes mode reads bytes") };
                let at = ((record.sector % self.sectors_per_page) * SECTOR_BYTES) as usize;
                decode_record(&bytes[at..at + record.len as usize])
            } else {
                Record { entries: Vec::new(), fingerprint: record.fingerprint }
            };
            data = apply_record(data, &decoded);
        }
        Ok((data, done))
    }

    /// The page's current content (flash copy plus its records).
    fn current(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let (lbn, offset) = self.base.locate(lpn)?;
        let (data, t) = self.base.read_base(lpn, now_ns)?;
        self.apply_logs(lbn, offset, data, t)
    }

    fn merge(&mut self, lbn: u64, replace: Option<(u32, PageData)>, now_ns: u64) -> Result<u64, FlashError> {
        let d = self.base.data_pages;
        let mut pages = Vec::with_capacity(d as usize);
        let mut ready_ns = now_ns;
        for offset in 0..d {
            let lpn = lbn * u64::from(d) + u64::from(offset);
            match &replace {
                _ if !self.base.is_valid(lpn) => pages.push(None),
                Some((o, data)) if *o == offset => pages.push(Some(data.clone())),
                _ => {
                    let (data, t) = self.current(lpn, now_ns)?;
                    ready_ns = ready_ns.max(t);
                    pages.push(Some(data));
                }
            }
        }
        self.logs.remove(&lbn);
        self.base.merge(lbn, pages, ready_ns, ready_ns - now_ns)
    }

    /// Programs the block's unwritten data pages erased, so its log area can be written.
    fn close_data_area(&mut self, block: u64, now_ns: u64) -> Result<u64, FlashError> {
        let erased = self.base.erased();
        let mut done = now_ns;
        while self.base.flash.write_pointer(block) < self.base.data_pages {
            let page = self.base.flash.write_pointer(block);
            done = done.max(self.base.flash.program_page(self.block_ppn(block, page), &erased, now_ns)?.end_ns);
        }
        Ok(done)
    }

    /// Writes a page whose change since its previous write is `changed` (byte ranges);
    /// `None`: unknown — computed from the bytes in bytes mode, otherwise drawn from
    /// `buffer.delta_bytes_min..=max`.
    pub fn write_update(
        &mut self,
        lpn: u64,
        data: PageData,
        changed: Option<&[(u32, u32)]>,
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let (lbn, offset) = self.base.locate(lpn)?;
        self.base.stats.host_page_writes += 1;
        if let Some(done) = self.base.try_direct(lbn, offset, &data, now_ns)? {
            self.base.set_valid(lpn, true);
            return Ok(done);
        }
        let (ranges, ready_ns) = match (&data, self.base.flash.content_mode()) {
            (PageData::Bytes(new), PageContent::Bytes) => {
                let (current, t) = self.current(lpn, now_ns)?;
                let PageData::Bytes(old) = current else { unreachable!("bytes mode reads bytes") };
                (Some(diff_ranges(&old, new)), t)
            }
            _ => (changed.map(<[_]>::to_vec).or_else(|| self.base.unknown_change(lpn)), now_ns),
        };
        let used = self.logs.get(&lbn).map_or(0, Vec::len) as u32;
        self.base.set_valid(lpn, true);
        let block = self.base.physical(lbn);
        let loggable = |r: &Vec<(u32, u32)>| fits(r, SECTOR_BYTES) && used < self.log_sectors() && block.is_some();
        let (Some(ranges), Some(block)) = (ranges.filter(loggable), block) else {
            return self.merge(lbn, Some((offset, data)), now_ns);
        };
        let ready_ns = self.close_data_area(block, ready_ns)?;
        let page = match &data {
            PageData::Bytes(b) => Some(b.as_slice()),
            _ => None,
        };
        let fingerprint = fingerprint_of(&data);
        let mut record = encode_record(&ranges, fingerprint, page);
        let len = record.len() as u32;
        let sector_data = match self.base.flash.content_mode() {
            PageContent::Bytes => {
                record.resize(SECTOR_BYTES as usize, 0xFF);
                PageData::Bytes(record)
            }
            PageContent::Fingerprint => PageData::Fingerprint(fingerprint),
            PageContent::None => PageData::Empty,
        };
        let ppn = self.block_ppn(block, self.base.data_pages + used / self.sectors_per_page);
        let t = self.base.flash.program_sectors(ppn, used % self.sectors_per_page, &sector_data, 1, ready_ns)?;
        self.logs.entry(lbn).or_default().push(LogRecord { offset, sector: used, len, fingerprint });
        Ok(t.end_ns)
    }
}

impl PageStore for IplStore {
    fn logical_pages(&self) -> u64 {
        self.base.logical_pages()
    }
    fn page_bytes(&self) -> u32 {
        self.base.page_bytes()
    }
    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        self.write_update(lpn, data, None, now_ns)
    }
    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        if self.base.begin_read(lpn)?.is_none() {
            return Ok((self.base.erased(), now_ns));
        }
        self.current(lpn, now_ns)
    }
    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let (lbn, offset) = self.base.begin_trim(lpn)?;
        // The records stay in flash (sectors are not rewritable) but no longer apply.
        if let Some(records) = self.logs.get_mut(&lbn) {
            for r in records.iter_mut().filter(|r| r.offset == offset) {
                r.offset = u32::MAX;
            }
        }
        Ok(now_ns)
    }
    fn stats(&self) -> StoreStats {
        self.base.combined_stats()
    }
    fn reset_stats(&mut self) {
        self.base.reset_stats();
    }
    fn health(&self) -> StoreHealth {
        self.base.health()
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.base.check_invariants()?;
        for (&lbn, records) in &self.logs {
            let Some(block) = self.base.physical(lbn) else {
                return Err(format!("logical block {lbn} has log records but no physical block"));
            };
            if records.len() as u32 > self.log_sectors() {
                return Err(format!(
                    "logical block {lbn} has {} records in {} sectors",
                    records.len(),
                    self.log_sectors()
                ));
            }
            for (i, r) in records.iter().enumerate() {
                if r.sector != i as u32 {
                    return Err(format!("logical block {lbn}: record {i} sits in sector {}", r.sector));
                }
            }
            let needed = self.base.data_pages + (records.len() as u32).div_ceil(self.sectors_per_page);
            if self.base.flash.write_pointer(block) != needed {
                return Err(format!("block {block}: write pointer disagrees with {} log records", records.len()));
            }
        }
        Ok(())
    }
}
