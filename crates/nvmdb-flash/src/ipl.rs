//! In-Page Logging on flash (Lee & Moon, SIGMOD 2007; as IPL-P, seed 002, describes it),
//! as a [`LogArea`] above the page-mapped FTL ([`LogStore`]).
//!
//! Each logical block of `m` pages has `m / 16` log pages (IPL's 8 KB per 128 KB erase
//! unit), at least one. They are logical pages of the FTL beyond the host's range, which
//! the FTL maps, moves in GC and reclaims like any page; they are written 512 B sector by
//! sector with partial programming (which IPL turns on in the geometry). An update writes
//! one log record (its changed byte ranges, at most one sector) into the block's next
//! free log sector; reads apply the page's records in order. When a block's log sectors
//! are all used, the block is merged before the next record; a change that does not fit a
//! sector is written out of place by the layer. The log pages take their room from the
//! host's: the host sees `m / (m + m/16)` of the FTL's logical pages.
//!
//! In bytes mode records are decoded from flash. In fingerprint mode a flash page holds one
//! content identity, so each log sector is programmed with a tag of its own (the page
//! identity the record gives, and the sector's header in its spare bytes); the
//! controller's record index keeps the identities, and recovery reads them from the tags.

use std::collections::BTreeMap;

use nvmdb_device::flash::{SectorTag, SECTOR_BYTES, SECTOR_SPARE_BYTES};
use nvmdb_device::{PageContent, PageData, Pcm};

use crate::config::SsdConfig;
use crate::ftl::PageFtl;
use crate::layer::{FlashError, PageStore as _, Pending};
use crate::log_common::{apply_all, decode_record, encode_record, fits, Append, LogArea, Record, SchemeParams, Update};
use crate::log_store::LogStore;

/// Bytes of a sector's header: the data page's offset in its block (`u16`) and the
/// record's write sequence number (`u64`). In bytes mode it precedes the record in the
/// sector (an erased sector reads `0xFFFF` as its offset); in fingerprint mode it is in the
/// sector's own spare bytes.
pub(crate) const SECTOR_HEADER_BYTES: usize = 10;

/// A sector's header: the data page's offset in its block and the record's sequence number.
pub(crate) fn sector_header(offset: u32, seq: u64) -> [u8; SECTOR_HEADER_BYTES] {
    let mut out = [0u8; SECTOR_HEADER_BYTES];
    out[..2].copy_from_slice(&(offset as u16).to_le_bytes());
    out[2..].copy_from_slice(&seq.to_le_bytes());
    out
}

pub(crate) fn parse_sector_header(bytes: &[u8]) -> (u16, u64) {
    let offset = u16::from_le_bytes([bytes[0], bytes[1]]);
    let seq = u64::from_le_bytes(bytes[2..SECTOR_HEADER_BYTES].try_into().expect("8 bytes"));
    (offset, seq)
}

/// A log sector's bytes in bytes mode: its header, the record, erased bytes after them.
pub(crate) fn sector_bytes(header: &[u8; SECTOR_HEADER_BYTES], record: &[u8]) -> Vec<u8> {
    let mut sector = Vec::with_capacity(SECTOR_BYTES as usize);
    sector.extend_from_slice(header);
    sector.extend_from_slice(record);
    sector.resize(SECTOR_BYTES as usize, 0xFF);
    sector
}

/// A log sector's tag where a flash page keeps no bytes: the content identity the record
/// gives its page, and the sector's header in its spare bytes.
pub(crate) fn sector_tag(header: &[u8; SECTOR_HEADER_BYTES], fingerprint: u64) -> SectorTag {
    let mut spare = [0xFF; SECTOR_SPARE_BYTES];
    spare[..SECTOR_HEADER_BYTES].copy_from_slice(header);
    SectorTag { fingerprint, spare }
}

/// A record as recovery reads it from its sector.
struct SectorRecord {
    offset: u16,
    seq: u64,
    len: u32,
    fingerprint: u64,
}

/// One log record in a block's log area.
#[derive(Debug, Clone, Copy)]
struct LogRecord {
    /// Data page (offset in the block) the record belongs to; `u32::MAX` once dead.
    offset: u32,
    /// Encoded length, bytes.
    len: u32,
    /// Content identity (fingerprint and metadata modes).
    fingerprint: u64,
}

/// The most host memory IPL's record index takes, bytes: for each logical block of
/// `host_pages` (`pages_per_block` each) a vector of at most its `log_sectors` records,
/// grown by doubling to the next power of two (and the old half beside it while it grows),
/// and its entry in the B-tree of blocks (key and vector, a node of 11 at least 5 full,
/// with a 16 B node header).
pub fn estimated_index_bytes(host_pages: u64, pages_per_block: u32, log_sectors: u32) -> u64 {
    let blocks = host_pages.div_ceil(u64::from(pages_per_block.max(1)));
    let record = std::mem::size_of::<LogRecord>() as u64;
    let vector = u64::from(log_sectors.next_power_of_two()) * record * 3 / 2;
    let entry = (11 * (8 + std::mem::size_of::<Vec<LogRecord>>() as u64) + 16).div_ceil(5);
    blocks.saturating_mul(vector + entry)
}

/// IPL's log pages.
#[derive(Debug)]
pub struct IplArea {
    host_pages: u64,
    pages_per_block: u32,
    log_pages: u32,
    sectors_per_page: u32,
    /// Records of each logical block, in write order (record `i` is in sector `i`).
    logs: BTreeMap<u64, Vec<LogRecord>>,
}

/// IPL above the page-mapped FTL.
pub type IplStore = LogStore<IplArea>;

impl LogStore<IplArea> {
    /// Builds the store from the configuration (partial programming is switched on).
    pub fn new(config: &SsdConfig) -> Result<IplStore, FlashError> {
        IplStore::with_params(&SchemeParams::from_config(config))
    }

    /// Builds the store from explicit parameters.
    pub fn with_params(params: &SchemeParams) -> Result<IplStore, FlashError> {
        let mut geometry = params.config.flash.geometry();
        geometry.partial_programming = true;
        let m = geometry.pages_per_block;
        if !geometry.page_bytes.is_multiple_of(SECTOR_BYTES) || geometry.page_bytes / SECTOR_BYTES > 64 {
            return Err(FlashError::Config("IPL needs pages of 1 to 64 whole 512 B sectors".into()));
        }
        let sector_spare = geometry.spare_bytes / (geometry.page_bytes / SECTOR_BYTES);
        if params.config.content == PageContent::Fingerprint && (sector_spare as usize) < SECTOR_SPARE_BYTES {
            return Err(FlashError::Config(format!(
                "IPL with content = \"fingerprint\" tags each 512 B log sector with {SECTOR_SPARE_BYTES} spare bytes: \
                 flash.spare_bytes must be at least {SECTOR_SPARE_BYTES} per sector of the page"
            )));
        }
        let ftl = PageFtl::with_geometry(&params.config, geometry)?;
        let log_pages = params.config.ipl_log_pages();
        let area = IplArea {
            host_pages: params.config.ipl_host_pages(),
            pages_per_block: m,
            log_pages,
            sectors_per_page: geometry.page_bytes / SECTOR_BYTES,
            logs: BTreeMap::new(),
        };
        let host_pages = area.host_pages;
        LogStore::over(ftl, area, host_pages, params.delta_policy(), params.merge_scope(), params.config.seed)
    }
}

/// The log pages a read of records has read so far (each is read once), and when the
/// last read is done.
struct LogPagesRead {
    pages: BTreeMap<u32, PageData>,
    now_ns: u64,
    done_ns: u64,
}

impl LogPagesRead {
    fn new(now_ns: u64) -> LogPagesRead {
        LogPagesRead { pages: BTreeMap::new(), now_ns, done_ns: now_ns }
    }
}

impl IplArea {
    fn log_sectors(&self) -> u32 {
        self.log_pages * self.sectors_per_page
    }

    /// The FTL logical page holding log page `k` of logical block `lbn`.
    fn log_lpn(&self, lbn: u64, k: u32) -> u64 {
        self.host_pages + lbn * u64::from(self.log_pages) + u64::from(k)
    }

    /// The records of page `lpn`, in order. Every log page holding one is read from flash
    /// (a flash page read, in every content mode: the records are in the log sectors) unless
    /// `read` has read it already; bytes mode decodes the records from the bytes read, the
    /// other modes take the content identity the controller's record index keeps.
    fn page_records(&self, ftl: &mut PageFtl, lpn: u64, read: &mut LogPagesRead) -> Result<Vec<Record>, FlashError> {
        let m = u64::from(self.pages_per_block);
        let (lbn, offset) = (lpn / m, (lpn % m) as u32);
        let Some(records) = self.logs.get(&lbn) else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for (sector, record) in (0u32..).zip(records).filter(|(_, r)| r.offset == offset) {
            let k = sector / self.sectors_per_page;
            if let std::collections::btree_map::Entry::Vacant(e) = read.pages.entry(k) {
                let (bytes, t) = ftl.read(self.log_lpn(lbn, k), read.now_ns)?;
                read.done_ns = read.done_ns.max(t);
                e.insert(bytes);
            }
            if ftl.content_mode() != PageContent::Bytes {
                out.push(Record { entries: Vec::new(), fingerprint: record.fingerprint });
                continue;
            }
            let Some(PageData::Bytes(bytes)) = read.pages.get(&k) else { unreachable!("bytes mode reads bytes") };
            let at = ((sector % self.sectors_per_page) * SECTOR_BYTES) as usize + SECTOR_HEADER_BYTES;
            out.push(decode_record(&bytes[at..at + record.len as usize]));
        }
        Ok(out)
    }
}

impl IplArea {
    /// The log pages of `lbn` that survive a power loss, in order. A block's log pages are
    /// opened one after another, each newer than the one before; a page beyond an unmapped
    /// one, or older than its predecessor, is a stale copy from before a merge (whose
    /// pages the merge discarded without a flash write) and is discarded again.
    fn surviving_log_pages(&self, ftl: &mut PageFtl, lbn: u64) -> Result<Vec<u64>, FlashError> {
        let mut pages = Vec::new();
        let mut previous = 0;
        let mut open = true;
        for k in 0..self.log_pages {
            let lpn = self.log_lpn(lbn, k);
            let Some(seq) = ftl.page_seq(lpn) else {
                open = false;
                continue;
            };
            if !open || seq < previous {
                open = false;
                ftl.discard(lpn)?;
                continue;
            }
            previous = seq;
            pages.push(lpn);
        }
        Ok(pages)
    }

    /// The records of log page `lpn`, from its first sector up to its first erased one
    /// (bytes mode: the sector's header and record; fingerprint mode: its tag).
    fn read_sectors(&self, ftl: &mut PageFtl, lpn: u64) -> Result<Vec<SectorRecord>, FlashError> {
        let mut out = Vec::new();
        if ftl.content_mode() == PageContent::Fingerprint {
            for sector in 0..self.sectors_per_page {
                let Some(tag) = ftl.sector_tag(lpn, sector) else { break };
                let (offset, seq) = parse_sector_header(&tag.spare);
                out.push(SectorRecord { offset, seq, len: 0, fingerprint: tag.fingerprint });
            }
            return Ok(out);
        }
        let (PageData::Bytes(bytes), _) = ftl.read(lpn, 0)? else { unreachable!("bytes mode reads bytes") };
        for sector in 0..self.sectors_per_page {
            let at = (sector * SECTOR_BYTES) as usize;
            let (offset, seq) = parse_sector_header(&bytes[at..at + SECTOR_HEADER_BYTES]);
            if offset == u16::MAX {
                break;
            }
            let body = &bytes[at + SECTOR_HEADER_BYTES..at + SECTOR_BYTES as usize];
            let len = crate::log_common::record_len(body).expect("a programmed log sector holds a record");
            out.push(SectorRecord { offset, seq, len: len as u32, fingerprint: 0 });
        }
        Ok(out)
    }

    /// Metadata-mode recovery: each block's log keeps its programmed sectors, all dead.
    fn recover_spent(&mut self, ftl: &mut PageFtl) -> Result<(), FlashError> {
        self.logs.clear();
        let m = u64::from(self.pages_per_block);
        let full = if self.sectors_per_page >= 64 { u64::MAX } else { (1u64 << self.sectors_per_page) - 1 };
        for lbn in 0..self.host_pages / m {
            let mut used = 0u32;
            let mut open = true;
            for lpn in self.surviving_log_pages(ftl, lbn)? {
                let mask = ftl.sector_mask(lpn).unwrap_or(full);
                if !open {
                    ftl.discard(lpn)?;
                    continue;
                }
                used += mask.count_ones();
                open = mask == full;
            }
            if used > 0 {
                let dead = LogRecord { offset: u32::MAX, len: 0, fingerprint: 0 };
                self.logs.insert(lbn, vec![dead; used as usize]);
            }
        }
        Ok(())
    }
}

impl LogArea for IplArea {
    fn name(&self) -> &'static str {
        "ipl"
    }

    fn has_records(&self, lpn: u64) -> bool {
        let m = u64::from(self.pages_per_block);
        let offset = (lpn % m) as u32;
        self.logs.get(&(lpn / m)).is_some_and(|r| r.iter().any(|r| r.offset == offset))
    }

    fn records(&mut self, ftl: &mut PageFtl, lpn: u64, now_ns: u64) -> Result<(Vec<Record>, u64), FlashError> {
        let mut log_pages = LogPagesRead::new(now_ns);
        let records = self.page_records(ftl, lpn, &mut log_pages)?;
        Ok((records, log_pages.done_ns))
    }

    /// A merge reads each log page holding a record of the block's pages once, however
    /// many of the pages have records in it.
    fn apply_block_records(
        &mut self,
        ftl: &mut PageFtl,
        pages: &mut [(u64, PageData)],
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let mut log_pages = LogPagesRead::new(now_ns);
        for (lpn, page) in pages.iter_mut() {
            let records = self.page_records(ftl, *lpn, &mut log_pages)?;
            *page = apply_all(std::mem::replace(page, PageData::Empty), &records);
        }
        Ok(log_pages.done_ns)
    }

    fn append(&mut self, ftl: &mut PageFtl, update: &Update, now_ns: u64) -> Result<Append, FlashError> {
        if !fits(update.change, SECTOR_BYTES - SECTOR_HEADER_BYTES as u32) {
            return Ok(Append::Unloggable);
        }
        let used = self.logs.get(&update.lbn).map_or(0, Vec::len) as u32;
        if used == self.log_sectors() {
            return Ok(Append::NeedMerge(update.lbn));
        }
        let record = encode_record(update.change, update.fingerprint, update.page, update.salt);
        let len = record.len() as u32;
        let header = sector_header(update.offset, update.seq);
        let (sector_data, tag) = match ftl.content_mode() {
            PageContent::Bytes => (PageData::Bytes(sector_bytes(&header, &record)), None),
            PageContent::Fingerprint => {
                // The page keeps one identity; the sector's own is in its tag.
                let tag = sector_tag(&header, update.fingerprint);
                (PageData::Fingerprint(update.fingerprint), Some(tag))
            }
            PageContent::None => (PageData::Empty, None),
        };
        let lpn = self.log_lpn(update.lbn, used / self.sectors_per_page);
        let done_ns = ftl.program_sector_tagged(lpn, used % self.sectors_per_page, &sector_data, tag, now_ns)?;
        let record = LogRecord { offset: update.offset, len, fingerprint: update.fingerprint };
        self.logs.entry(update.lbn).or_default().push(record);
        Ok(Append::Logged { done_ns, merge: None })
    }

    fn drop_page(&mut self, _ftl: &mut PageFtl, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let m = u64::from(self.pages_per_block);
        let offset = (lpn % m) as u32;
        // The records stay in flash (sectors are not rewritable) but no longer apply.
        if let Some(records) = self.logs.get_mut(&(lpn / m)) {
            for r in records.iter_mut().filter(|r| r.offset == offset) {
                r.offset = u32::MAX;
            }
        }
        Ok(now_ns)
    }

    fn drop_block(&mut self, ftl: &mut PageFtl, lbn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let Some(records) = self.logs.remove(&lbn) else { return Ok(now_ns) };
        let mut done = now_ns;
        for k in 0..(records.len() as u32).div_ceil(self.sectors_per_page) {
            done = done.max(now_ns + ftl.discard(self.log_lpn(lbn, k))?);
        }
        Ok(done)
    }

    fn logged_offsets(&self, lbn: u64) -> Vec<u32> {
        let mut offsets: Vec<u32> = self
            .logs
            .get(&lbn)
            .map_or_else(Vec::new, |r| r.iter().map(|r| r.offset).filter(|&o| o != u32::MAX).collect());
        offsets.sort_unstable();
        offsets.dedup();
        offsets
    }

    fn logged_blocks(&self) -> Vec<u64> {
        self.logs.iter().filter(|(_, r)| r.iter().any(|r| r.offset != u32::MAX)).map(|(&lbn, _)| lbn).collect()
    }

    fn pending(&self) -> Pending {
        let mut pending = Pending::default();
        for &lbn in self.logs.keys() {
            let live = self.logs[&lbn].iter().filter(|r| r.offset != u32::MAX).count();
            pending.log_records += live as u64;
            pending.log_pages += self.logged_offsets(lbn).len() as u64;
        }
        pending
    }

    fn check(&self, ftl: &PageFtl) -> Result<(), String> {
        for (&lbn, records) in &self.logs {
            if records.len() as u32 > self.log_sectors() {
                return Err(format!(
                    "logical block {lbn} has {} records in {} sectors",
                    records.len(),
                    self.log_sectors()
                ));
            }
            let pages = (records.len() as u32).div_ceil(self.sectors_per_page);
            for k in 0..self.log_pages {
                if ftl.is_mapped(self.log_lpn(lbn, k)) != (k < pages) {
                    return Err(format!(
                        "logical block {lbn}: log page {k} mapping disagrees with {} records",
                        records.len()
                    ));
                }
            }
            for o in self.logged_offsets(lbn) {
                let lpn = lbn * u64::from(self.pages_per_block) + u64::from(o);
                if !ftl.is_mapped(lpn) {
                    return Err(format!("page {lpn} has a log record but no flash copy"));
                }
            }
        }
        Ok(())
    }

    /// Bytes mode: each record's header and body are read from its sector; fingerprint
    /// mode: from its sector's tag (the header in the spare bytes, the identity the page
    /// takes). Metadata mode: records carry nothing, so the log pages' programmed sectors
    /// are kept as spent (dead) records.
    fn recover(&mut self, ftl: &mut PageFtl, host_pages: u64) -> Result<(), FlashError> {
        let mode = ftl.content_mode();
        if mode == PageContent::None {
            return self.recover_spent(ftl);
        }
        debug_assert_eq!(host_pages, self.host_pages);
        self.logs.clear();
        let m = u64::from(self.pages_per_block);
        for lbn in 0..self.host_pages / m {
            let mut records = Vec::new();
            let mut open = true;
            let pages = self.surviving_log_pages(ftl, lbn)?;
            for &lpn in &pages {
                if !open {
                    // A log page after one that is not full is a stale copy.
                    ftl.discard(lpn)?;
                    continue;
                }
                let sectors = self.read_sectors(ftl, lpn)?;
                open = sectors.len() as u32 == self.sectors_per_page;
                for sector in sectors {
                    ftl.note_seq(sector.seq);
                    let data_lpn = lbn * m + u64::from(sector.offset);
                    let live = ftl.page_seq(data_lpn).is_some_and(|copy| sector.seq > copy);
                    let offset = if live { u32::from(sector.offset) } else { u32::MAX };
                    records.push(LogRecord { offset, len: sector.len, fingerprint: sector.fingerprint });
                }
            }
            if records.iter().all(|r: &LogRecord| r.offset == u32::MAX) {
                // Nothing in the log applies any more: it starts afresh in new pages.
                for &lpn in &pages {
                    ftl.discard(lpn)?;
                }
            } else {
                self.logs.insert(lbn, records);
            }
        }
        Ok(())
    }

    fn pcm(&self) -> Option<&Pcm> {
        None
    }

    fn reset_stats(&mut self) {}
}
