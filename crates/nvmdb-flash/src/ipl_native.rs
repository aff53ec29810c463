//! In-Page Logging in its own layout (Lee & Moon, SIGMOD 2007; the thesis's comparison,
//! seed 000 §5.1): a storage manager over the flash array's erase units, with no page-level
//! FTL and no garbage collector below it. (`crate::ipl` is the other form: IPL's log pages
//! as logical pages of the page-mapped FTL.)
//!
//! **Layout.** Each erase unit of `m` pages keeps data pages first and `m / 16` log pages
//! (at least one) of 512 B sectors after them, as the paper's 15 data pages and one log
//! page per 16-page unit (60 and 4 of a 64-page block: the log is 1/16 of the unit, as
//! in the FTL-layered form). A logical unit holds `m − m/16` consecutive host pages; the
//! unit map names the physical unit of each, and the erased units wait in a free pool.
//! Data pages are packed in the order they were written (NAND programs a unit's pages in
//! order), each naming its logical unit, its page and a sequence number in its spare
//! bytes; the log region opens at the page after the last data page, and from then on the
//! unit takes no more data pages.
//!
//! **Writes.** A first write of a page (no flash copy) is programmed into its unit's data
//! region: into a fresh unit from the pool when the logical unit has none, else at the data
//! region's next page while no log sector is written; otherwise the unit is merged with the
//! page. An update of a page with a copy is found as the log layer finds it (bytes compared,
//! the caller's changed ranges, or `buffer.delta` for a content-free write) and logged as
//! one record of [`crate::log_common`]'s encoding in the unit's next free log sector, by a
//! partial program; an unchanged write is a no-op. A change whose record exceeds a sector is
//! not logged: the unit is merged with the new page (IPL writes data pages only by merges;
//! counted as an out-of-place write and a merge). A whole page of new content
//! ([`PageStore::write_new`]: the ageing pass, the pre-fill) takes the same path whatever
//! `buffer.delta` says, never a record (a first write if the page has no copy). A trim is a
//! trim record in the log (or, with the log full, a merge without the page).
//!
//! **Merges.** When a unit's log sectors are all used, the unit is merged before the next
//! record: each live data page and each log page is read once, the records applied, the
//! pages programmed in page order into a free unit and then the old unit erased and
//! returned to the pool. A merge's reads, programs and erase are counted, timed and put in
//! `gc_time_ns` (the host's own page of a merge excepted), as every scheme's merges are.
//!
//! **Reads.** A read of a page reads its data page and each log page holding one of its
//! records, in every content mode (bytes mode decodes the records from the sectors).
//!
//! **Wear levelling.** Dynamic: a merge or a fresh unit takes the free unit with the fewest
//! erases (ties to the lowest unit number); with `ftl.wear_leveling = "none"` the unit freed
//! longest ago. No static levelling: a unit that holds cold data keeps its erase count.
//!
//! **Durability.** Every program and erase passes through the store's [`PowerSwitch`]. A
//! merge programs the new unit whole before it erases the old one; every data page of a
//! merge carries the merge's sequence number and page count (a first write's page, 1), so
//! recovery takes, for each logical unit, the newest unit whose leading run of pages is
//! whole, and erases the others (an interrupted merge's new unit, or an old unit whose
//! erase was cut). Each log sector carries its page's offset (with a trim flag) and the
//! record's sequence number: in its bytes in bytes mode, in its tag (the flash array's
//! per-sector identity and spare bytes) otherwise, so records recover in every content
//! mode. Recovery reads the flash alone.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use nvmdb_device::flash::{Ppn, SECTOR_BYTES, SECTOR_SPARE_BYTES, SPARE_STORED_BYTES};
use nvmdb_device::{splitmix64, FlashArray, PageContent, PageData, PowerSwitch};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::config::{SsdConfig, WearLeveling};
use crate::ipl::{parse_sector_header, sector_bytes, sector_header, sector_tag, SECTOR_HEADER_BYTES};
use crate::layer::{FlashError, PageStore, Pending, StoreHealth, StoreStats};
use crate::log_common::{
    apply_encoded, apply_record, diff_ranges, encode_record, fingerprint_of, fits, record_len, DeltaPolicy, Record,
    SchemeParams,
};
use crate::wear_level;

/// A logical unit without a physical unit.
const UNMAPPED: u32 = u32::MAX;
/// An offset of a logical unit without a data page.
const NO_SLOT: u16 = u16::MAX;
/// The offset field of a log page's spare bytes (data pages name their page there).
const LOG_PAGE: u16 = u16::MAX;
/// Set in a log sector's offset for a trim record.
const TRIM: u16 = 1 << 15;
/// Bytes of a page's spare record: logical unit (`u32`), offset (`u16`, [`LOG_PAGE`] for a
/// log page), sequence number (`u64`) and the page count of the run it was programmed in
/// (`u16`: a merge's pages, 1 for a first write's, 0 for a log page).
const SPARE_RECORD_BYTES: usize = 16;

/// A page's spare record (see [`SPARE_RECORD_BYTES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PageSpare {
    unit: u32,
    offset: u16,
    seq: u64,
    run: u16,
}

impl PageSpare {
    fn bytes(self) -> [u8; SPARE_RECORD_BYTES] {
        let mut out = [0u8; SPARE_RECORD_BYTES];
        out[..4].copy_from_slice(&self.unit.to_le_bytes());
        out[4..6].copy_from_slice(&self.offset.to_le_bytes());
        out[6..14].copy_from_slice(&self.seq.to_le_bytes());
        out[14..].copy_from_slice(&self.run.to_le_bytes());
        out
    }

    fn parse(bytes: &[u8]) -> Option<PageSpare> {
        let b: &[u8; SPARE_RECORD_BYTES] = bytes.get(..SPARE_RECORD_BYTES)?.try_into().ok()?;
        Some(PageSpare {
            unit: u32::from_le_bytes(b[..4].try_into().expect("4 bytes")),
            offset: u16::from_le_bytes([b[4], b[5]]),
            seq: u64::from_le_bytes(b[6..14].try_into().expect("8 bytes")),
            run: u16::from_le_bytes([b[14], b[15]]),
        })
    }
}

/// One record of a unit's log (record `i` is in log sector `i`).
#[derive(Debug, Clone, Copy)]
struct LogRecord {
    /// The data page (offset in its logical unit) the record applies to.
    offset: u16,
    /// A trim record: the page has no content from here on.
    trim: bool,
    /// Encoded length, bytes (bytes mode).
    len: u16,
    /// The content identity the record gives its page (fingerprint mode; 0 otherwise).
    fingerprint: u64,
}

/// A logical unit's volatile state.
#[derive(Debug, Clone)]
struct Unit {
    /// Its physical unit (erase block), or [`UNMAPPED`].
    block: u32,
    /// The page of the physical unit holding each offset's data page ([`NO_SLOT`]: none,
    /// or trimmed). Empty while unmapped.
    slots: Vec<u16>,
    /// Data pages programmed: the log region opens at this page.
    written: u16,
    /// The log's records, in sector order.
    records: Vec<LogRecord>,
}

impl Unit {
    fn unmapped() -> Unit {
        Unit { block: UNMAPPED, slots: Vec::new(), written: 0, records: Vec::new() }
    }

    fn mapped(block: u32, data_pages: u32) -> Unit {
        Unit { block, slots: vec![NO_SLOT; data_pages as usize], written: 0, records: Vec::new() }
    }

    fn is_mapped(&self) -> bool {
        self.block != UNMAPPED
    }

    /// Whether page `offset` has a data page (a flash copy).
    fn has_copy(&self, offset: u16) -> bool {
        self.slots.get(usize::from(offset)).is_some_and(|&s| s != NO_SLOT)
    }

    /// The log's records that apply to the page: its live data page's records (a trimmed
    /// page has none that apply; a page gets no record after its trim within a unit).
    fn records_of(&self, offset: u16) -> impl Iterator<Item = (usize, &LogRecord)> {
        let live = self.has_copy(offset);
        self.records.iter().enumerate().filter(move |(_, r)| live && r.offset == offset && !r.trim)
    }
}

/// How a host write goes on after [`IplNativeStore::start_write`].
enum Started {
    /// Written (a first write); done at this time.
    Done(u64),
    /// An update of page `offset` of `unit`, which has a copy, to `data`.
    Update { unit: usize, offset: u16, data: PageData },
}

/// IPL in its own layout over a flash array (see the module docs).
#[derive(Debug, Clone)]
pub struct IplNativeStore {
    flash: FlashArray,
    power: PowerSwitch,
    /// Pages per erase unit.
    pages_per_unit: u32,
    /// Data pages per unit (host pages per logical unit).
    data_pages: u32,
    /// Log sectors per unit.
    log_sectors: u32,
    sectors_per_page: u32,
    units: Vec<Unit>,
    /// Erased units, smallest key ([`wear_level::free_block_key`]) first.
    free: BinaryHeap<Reverse<(u64, u32)>>,
    /// How many units have been freed (the key under `wear_leveling = "none"`).
    freed: u64,
    wear_leveling: WearLeveling,
    /// Sequence number of the next first write, merge or record.
    seq: u64,
    delta: DeltaPolicy,
    delta_rng: Xoshiro256PlusPlus,
    salt_seed: u64,
    stats: StoreStats,
    /// The logical page of the last data page programmed, for `sequential_page_writes`;
    /// `None` after a log sector.
    last_data_lpn: Option<u64>,
}

impl IplNativeStore {
    /// Builds the store over a fresh flash array (partial programming switched on).
    pub fn new(config: &SsdConfig) -> Result<IplNativeStore, FlashError> {
        config.validate()?;
        let mut geometry = config.flash.geometry();
        geometry.partial_programming = true;
        let m = geometry.pages_per_block;
        let log_pages = config.ipl_log_pages();
        let data_pages = m.saturating_sub(log_pages);
        if data_pages == 0 || data_pages >= u32::from(TRIM) {
            return Err(FlashError::Config(format!(
                "buffer.kind = \"ipl-native\" keeps data pages and {log_pages} log page(s) in each erase unit: \
                 flash.pages_per_block must be from 2 to 34951, not {m}"
            )));
        }
        let sectors_per_page = geometry.page_bytes / SECTOR_BYTES;
        let need = if config.content == PageContent::Bytes {
            SPARE_STORED_BYTES as u32
        } else {
            // Each log sector's tag takes its share of the spare area.
            (SECTOR_SPARE_BYTES as u32 * sectors_per_page).max(SPARE_STORED_BYTES as u32)
        };
        if geometry.spare_bytes < need {
            return Err(FlashError::Config(format!(
                "buffer.kind = \"ipl-native\" with content = \"{}\" keeps its records in the spare area: \
                 flash.spare_bytes must be at least {need}",
                crate::config::kebab(&config.content)
            )));
        }
        let blocks = geometry.blocks();
        let logical_units = config.ipl_native_units();
        if logical_units == 0 || logical_units >= blocks {
            return Err(FlashError::Config(format!(
                "ftl.overprovision = {} leaves {logical_units} of the {blocks} erase units to the host; \
                 buffer.kind = \"ipl-native\" needs at least one, and one free for merges",
                config.ftl.overprovision
            )));
        }
        let flash = FlashArray::new(geometry, config.flash.timing.timing(), config.content)?;
        let params = SchemeParams::from_config(config);
        let mut store = IplNativeStore {
            flash,
            power: PowerSwitch::new(),
            pages_per_unit: m,
            data_pages,
            log_sectors: log_pages * sectors_per_page,
            sectors_per_page,
            units: vec![Unit::unmapped(); logical_units as usize],
            free: BinaryHeap::new(),
            freed: 0,
            wear_leveling: config.ftl.wear_leveling,
            seq: 1,
            delta: params.delta_policy(),
            delta_rng: DeltaPolicy::rng(config.seed),
            salt_seed: splitmix64(config.seed),
            stats: StoreStats::default(),
            last_data_lpn: None,
        };
        for block in 0..blocks {
            store.release(block as u32);
        }
        Ok(store)
    }

    /// Host pages per logical unit.
    pub fn data_pages_per_unit(&self) -> u32 {
        self.data_pages
    }

    /// Log sectors per unit: the records a unit takes between merges.
    pub fn log_sectors_per_unit(&self) -> u32 {
        self.log_sectors
    }

    /// Flash service time so far, ns (queueing excluded).
    pub fn busy_ns(&self) -> u64 {
        self.flash.stats().busy_ns
    }

    /// Flash energy so far, pJ (cheaper than [`PageStore::stats`]).
    pub fn energy_pj(&self) -> u64 {
        self.flash.stats().energy_pj
    }

    /// Writes a page whose change since its previous write is `changed` (byte ranges,
    /// exact, as a synthetic trace knows it). `None`: unknown — computed from the bytes in
    /// bytes mode, otherwise taken from the delta policy (`buffer.delta`).
    pub fn write_update(
        &mut self,
        lpn: u64,
        data: PageData,
        changed: Option<&[(u32, u32)]>,
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let whole = (0, self.flash.geometry().page_bytes);
        self.write_inner(lpn, data, changed, whole, now_ns)
    }

    fn check_lpn(&self, lpn: u64) -> Result<(usize, u16), FlashError> {
        let pages = self.logical_pages();
        if lpn >= pages {
            return Err(FlashError::OutOfRange { lpn, pages });
        }
        let per_unit = u64::from(self.data_pages);
        Ok(((lpn / per_unit) as usize, (lpn % per_unit) as u16))
    }

    fn lpn(&self, unit: usize, offset: u16) -> u64 {
        unit as u64 * u64::from(self.data_pages) + u64::from(offset)
    }

    fn ppn(&self, block: u32, page: u32) -> Ppn {
        u64::from(block) * u64::from(self.pages_per_unit) + u64::from(page)
    }

    fn next_seq(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    /// Admits one device write through the power switch.
    fn admit(&mut self) -> Result<(), FlashError> {
        self.power.admit().map_err(FlashError::PowerCut)
    }

    /// Puts an erased unit into the free pool.
    fn release(&mut self, block: u32) {
        self.freed += 1;
        let key = wear_level::free_block_key(self.wear_leveling, self.flash.erase_count(u64::from(block)), self.freed);
        self.free.push(Reverse((key, block)));
    }

    /// Takes the free unit the wear levelling chooses.
    fn allocate(&mut self) -> Result<u32, FlashError> {
        let Reverse((_, block)) =
            self.free.pop().ok_or_else(|| FlashError::Full("ipl-native: no free erase unit".into()))?;
        Ok(block)
    }

    /// Counts a data page programmed for logical page `lpn`.
    fn note_data_write(&mut self, lpn: u64) {
        self.stats.data_page_writes += 1;
        if self.last_data_lpn.and_then(|last| last.checked_add(1)) == Some(lpn) {
            self.stats.sequential_page_writes += 1;
        }
        self.last_data_lpn = Some(lpn);
    }

    /// Reads log page `k` of unit `unit` at `now_ns`: its bytes in bytes mode (to decode
    /// records from), nothing otherwise (the records' identities are in the volatile index,
    /// as the tags recovery reads them from); the read is counted and timed alike.
    fn read_log_page(&mut self, unit: usize, k: u32, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let u = &self.units[unit];
        let ppn = self.ppn(u.block, u32::from(u.written) + k);
        if self.flash.content_mode() == PageContent::Bytes {
            let (data, t) = self.flash.read_page(ppn, now_ns)?;
            return Ok((data, t.end_ns));
        }
        Ok((PageData::Empty, self.flash.read_page_timing(ppn, now_ns)?.end_ns))
    }

    /// `page` after record `i` of a unit's log, whose log page (as [`Self::read_log_page`]
    /// returned it) is `log_page`.
    fn apply(&self, page: PageData, i: usize, record: &LogRecord, log_page: &PageData) -> PageData {
        match log_page {
            PageData::Bytes(bytes) => {
                let at = (i as u32 % self.sectors_per_page * SECTOR_BYTES) as usize + SECTOR_HEADER_BYTES;
                apply_encoded(page, &bytes[at..at + usize::from(record.len)])
            }
            _ => apply_record(page, &Record { entries: Vec::new(), fingerprint: record.fingerprint }),
        }
    }

    /// Page `offset` of `unit`, which has a copy: its data page with its records applied;
    /// reads the data page and each log page holding one of its records.
    fn current(&mut self, unit: usize, offset: u16, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let u = &self.units[unit];
        let ppn = self.ppn(u.block, u32::from(u.slots[usize::from(offset)]));
        let mine: Vec<(usize, LogRecord)> = u.records_of(offset).map(|(i, r)| (i, *r)).collect();
        let (mut page, t) = self.flash.read_page(ppn, now_ns)?;
        let mut done = t.end_ns;
        let mut log_page: Option<(u32, PageData)> = None;
        for (i, record) in mine {
            let k = i as u32 / self.sectors_per_page;
            if log_page.as_ref().is_none_or(|(read, _)| *read != k) {
                let (data, t) = self.read_log_page(unit, k, now_ns)?;
                done = done.max(t);
                log_page = Some((k, data));
            }
            let (_, data) = log_page.as_ref().expect("read above");
            page = self.apply(page, i, &record, data);
        }
        Ok((page, done))
    }

    /// What every host write starts with: it is counted, a page's bytes become its content
    /// identity in fingerprint mode (in flash and in records alike), and a page without a
    /// data page is written as a first write.
    fn start_write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<Started, FlashError> {
        let (unit, offset) = self.check_lpn(lpn)?;
        self.stats.host_page_writes += 1;
        let data = match (data, self.flash.content_mode()) {
            (PageData::Bytes(b), PageContent::Fingerprint) => {
                PageData::Fingerprint(nvmdb_device::flash::fingerprint64(&b))
            }
            (d, _) => d,
        };
        if !self.units[unit].has_copy(offset) {
            self.stats.direct_writes += 1;
            return Ok(Started::Done(self.first_write(unit, offset, data, now_ns)?));
        }
        Ok(Started::Update { unit, offset, data })
    }

    /// A page with a copy written without a record (a change too large for a sector, or a
    /// whole page of new content): IPL writes data pages only in merges, so the unit is
    /// merged with the new page; counted as an out-of-place write.
    fn write_unlogged(&mut self, unit: usize, offset: u16, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        self.stats.out_of_place_writes += 1;
        self.merge(unit, Some((offset, Some(data))), now_ns)
    }

    fn write_inner(
        &mut self,
        lpn: u64,
        data: PageData,
        changed: Option<&[(u32, u32)]>,
        written: (u32, u32),
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let (unit, offset, data) = match self.start_write(lpn, data, now_ns)? {
            Started::Done(done_ns) => return Ok(done_ns),
            Started::Update { unit, offset, data } => (unit, offset, data),
        };
        let (change, ready_ns) = match (&data, self.flash.content_mode()) {
            (PageData::Bytes(new), PageContent::Bytes) => {
                let (current, t) = self.current(unit, offset, now_ns)?;
                let PageData::Bytes(current) = current else { unreachable!("bytes mode reads bytes") };
                (diff_ranges(&current, new), t)
            }
            _ => match changed {
                Some(c) => (c.to_vec(), now_ns),
                None => (vec![self.delta.draw(&mut self.delta_rng, written)], now_ns),
            },
        };
        if change.is_empty() {
            self.stats.unchanged_writes += 1;
            return Ok(ready_ns);
        }
        if !fits(&change, SECTOR_BYTES - SECTOR_HEADER_BYTES as u32) {
            return self.write_unlogged(unit, offset, data, ready_ns);
        }
        let ready_ns = if self.log_full(unit) { self.merge(unit, None, ready_ns)? } else { ready_ns };
        let seq = self.next_seq();
        let page = match &data {
            PageData::Bytes(b) => Some(b.as_slice()),
            _ => None,
        };
        let fingerprint = fingerprint_of(&data);
        let record = encode_record(&change, fingerprint, page, splitmix64(self.salt_seed ^ seq));
        let done_ns = self.append(unit, offset, false, &record, fingerprint, seq, ready_ns)?;
        self.stats.logged_writes += 1;
        Ok(done_ns)
    }

    fn log_full(&self, unit: usize) -> bool {
        self.units[unit].records.len() as u32 == self.log_sectors
    }

    /// A write of page `offset` of `unit`, which has no copy.
    fn first_write(&mut self, unit: usize, offset: u16, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        let u = &self.units[unit];
        let (mapped, block, page) = (u.is_mapped(), u.block, u.written);
        let open = u.records.is_empty() && u32::from(page) < self.data_pages;
        if mapped && !open {
            return self.merge(unit, Some((offset, Some(data))), now_ns);
        }
        self.admit()?;
        let (block, page) = if mapped { (block, page) } else { (self.allocate()?, 0) };
        let seq = self.next_seq();
        let spare = PageSpare { unit: unit as u32, offset, seq, run: 1 };
        let ppn = self.ppn(block, u32::from(page));
        let t = self.flash.program_page_with_spare(ppn, &data, &spare.bytes(), now_ns)?;
        let u = &mut self.units[unit];
        if !u.is_mapped() {
            *u = Unit::mapped(block, self.data_pages);
        }
        u.slots[usize::from(offset)] = page;
        u.written = page + 1;
        self.note_data_write(self.lpn(unit, offset));
        Ok(t.end_ns)
    }

    /// Programs a record (`trim`: a trim record) of page `offset` into `unit`'s next free
    /// log sector, numbered `seq`.
    #[allow(clippy::too_many_arguments)]
    fn append(
        &mut self,
        unit: usize,
        offset: u16,
        trim: bool,
        record: &[u8],
        fingerprint: u64,
        seq: u64,
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let u = &self.units[unit];
        let i = u.records.len() as u32;
        let ppn = self.ppn(u.block, u32::from(u.written) + i / self.sectors_per_page);
        let sector = i % self.sectors_per_page;
        let header = sector_header(u32::from(if trim { offset | TRIM } else { offset }), seq);
        // A log page's first sector also programs the page's spare record.
        let spare = PageSpare { unit: unit as u32, offset: LOG_PAGE, seq, run: 0 }.bytes();
        let spare: &[u8] = if sector == 0 { &spare } else { &[] };
        self.admit()?;
        let t = match self.flash.content_mode() {
            PageContent::Bytes => {
                let data = PageData::Bytes(sector_bytes(&header, record));
                self.flash.program_sectors_with_spare(ppn, sector, &data, 1, spare, now_ns)?
            }
            mode => {
                let data = match mode {
                    PageContent::Fingerprint if !trim => PageData::Fingerprint(fingerprint),
                    _ => PageData::Empty,
                };
                let tags = [sector_tag(&header, fingerprint)];
                self.flash.program_sectors_tagged(ppn, sector, &data, &tags, spare, now_ns)?
            }
        };
        let len = u16::try_from(record.len()).expect("a record fits a sector");
        self.units[unit].records.push(LogRecord { offset, trim, len, fingerprint });
        self.last_data_lpn = None;
        Ok(t.end_ns)
    }

    /// Merges `unit` (see the module docs): with `change`, page `offset` takes the given
    /// content (`None`: the page is dropped, a trim) instead of its own. Returns when the
    /// old unit's erase completes.
    fn merge(&mut self, unit: usize, change: Option<(u16, Option<PageData>)>, now_ns: u64) -> Result<u64, FlashError> {
        crate::layer::with_activity(self, nvmdb_device::Activity::Merge, |store| store.merge_unit(unit, change, now_ns))
    }

    /// [`IplNativeStore::merge`]'s work.
    fn merge_unit(
        &mut self,
        unit: usize,
        change: Option<(u16, Option<PageData>)>,
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let busy_before = self.flash.stats().busy_ns;
        let (changed_offset, mut changed_data) = match change {
            Some((offset, data)) => (Some(offset), data),
            None => (None, None),
        };
        let host_page = changed_data.is_some();
        // The log pages, each read once.
        let mut ready_ns = now_ns;
        let log_pages = (self.units[unit].records.len() as u32).div_ceil(self.sectors_per_page);
        let mut logs = Vec::with_capacity(log_pages as usize);
        for k in 0..log_pages {
            let (data, t) = self.read_log_page(unit, k, now_ns)?;
            ready_ns = ready_ns.max(t);
            logs.push(data);
        }
        // The live pages in page order, each data page read once and its records applied.
        let mut pages: Vec<(u16, PageData)> = Vec::new();
        for offset in 0..self.data_pages as u16 {
            if changed_offset == Some(offset) {
                if let Some(data) = changed_data.take() {
                    pages.push((offset, data));
                }
                continue;
            }
            let u = &self.units[unit];
            if !u.has_copy(offset) {
                continue;
            }
            let ppn = self.ppn(u.block, u32::from(u.slots[usize::from(offset)]));
            let mine: Vec<(usize, LogRecord)> = u.records_of(offset).map(|(i, r)| (i, *r)).collect();
            let (mut page, t) = self.flash.read_page(ppn, now_ns)?;
            ready_ns = ready_ns.max(t.end_ns);
            for (i, record) in mine {
                page = self.apply(page, i, &record, &logs[i / self.sectors_per_page as usize]);
            }
            pages.push((offset, page));
        }
        let old = self.units[unit].block;
        let mut merged = Unit::unmapped();
        let mut programmed_ns = ready_ns;
        if !pages.is_empty() {
            self.admit()?;
            let block = self.allocate()?;
            merged = Unit::mapped(block, self.data_pages);
            let (seq, run) = (self.next_seq(), pages.len() as u16);
            for (page, (offset, data)) in (0u16..).zip(&pages) {
                if page > 0 {
                    self.admit()?;
                }
                let spare = PageSpare { unit: unit as u32, offset: *offset, seq, run };
                let ppn = self.ppn(block, u32::from(page));
                let t = self.flash.program_page_with_spare(ppn, data, &spare.bytes(), ready_ns)?;
                programmed_ns = programmed_ns.max(t.end_ns);
                merged.slots[usize::from(*offset)] = page;
                self.note_data_write(self.lpn(unit, *offset));
            }
            merged.written = run;
        }
        // The new unit is whole before the old one is erased.
        self.admit()?;
        let erase = self.flash.erase_block(u64::from(old), programmed_ns)?;
        self.release(old);
        self.units[unit] = merged;
        self.stats.merges += 1;
        self.stats.flushes += 1;
        self.stats.sequential_flushes += 1;
        self.stats.merge_page_writes += pages.len() as u64;
        let host_ns = if host_page { self.flash.timing().program_ns } else { 0 };
        self.stats.gc_time_ns += (self.flash.stats().busy_ns - busy_before).saturating_sub(host_ns);
        Ok(erase.end_ns)
    }

    /// The run of pages `block` holds for its logical unit when it is whole: its logical
    /// unit and the run's sequence number. `None` for a unit whose leading run was cut
    /// short (an interrupted merge) or that holds no data page first.
    fn claim(&self, block: u32) -> Option<(u32, u64)> {
        let spare = |page: u32| self.flash.spare(self.ppn(block, page)).and_then(PageSpare::parse);
        let first = spare(0)?;
        let run = u32::from(first.run);
        let valid = first.offset != LOG_PAGE
            && u32::from(first.offset) < self.data_pages
            && (first.unit as usize) < self.units.len()
            && run > 0
            && self.flash.write_pointer(u64::from(block)) >= run;
        let whole = (1..run).all(|page| {
            spare(page).is_some_and(|s| s.unit == first.unit && s.seq == first.seq && s.offset != LOG_PAGE)
        });
        (valid && whole).then_some((first.unit, first.seq))
    }

    /// Rebuilds `unit`'s volatile state from physical unit `block`: its data pages from their
    /// spare records, then its log sectors in order up to the first erased one (bytes mode:
    /// from the sectors' bytes, read and counted; otherwise from their tags). Returns the
    /// largest sequence number found.
    fn load_unit(&mut self, unit: usize, block: u32) -> Result<u64, FlashError> {
        let mut u = Unit::mapped(block, self.data_pages);
        let pages = self.flash.write_pointer(u64::from(block));
        let mut max_seq = 0;
        let broken = |what: &str| FlashError::Config(format!("ipl-native recovery: erase unit {block}: {what}"));
        while u32::from(u.written) < pages {
            let ppn = self.ppn(block, u32::from(u.written));
            let spare =
                self.flash.spare(ppn).and_then(PageSpare::parse).ok_or_else(|| broken("a page without spare"))?;
            if spare.offset == LOG_PAGE {
                break;
            }
            if u32::from(spare.offset) >= self.data_pages {
                return Err(broken("a data page beyond the unit's pages"));
            }
            max_seq = max_seq.max(spare.seq);
            u.slots[usize::from(spare.offset)] = u.written;
            u.written += 1;
        }
        'log: for page in u32::from(u.written)..pages {
            let ppn = self.ppn(block, page);
            let bytes = match self.flash.content_mode() {
                PageContent::Bytes => match self.flash.read_page(ppn, 0)?.0 {
                    PageData::Bytes(bytes) => Some(bytes),
                    _ => unreachable!("bytes mode reads bytes"),
                },
                _ => None,
            };
            for sector in 0..self.sectors_per_page {
                let (raw, seq, len, fingerprint) = match &bytes {
                    Some(bytes) => {
                        let at = (sector * SECTOR_BYTES) as usize;
                        let (raw, seq) = parse_sector_header(&bytes[at..at + SECTOR_HEADER_BYTES]);
                        if raw == u16::MAX {
                            break 'log;
                        }
                        let body = &bytes[at + SECTOR_HEADER_BYTES..at + SECTOR_BYTES as usize];
                        let len = if raw & TRIM != 0 {
                            0
                        } else {
                            record_len(body).ok_or_else(|| broken("a torn record"))?
                        };
                        (raw, seq, len, 0)
                    }
                    None => {
                        let Some(tag) = self.flash.sector_tag(ppn, sector) else { break 'log };
                        let (raw, seq) = parse_sector_header(&tag.spare);
                        (raw, seq, 0, tag.fingerprint)
                    }
                };
                let (offset, trim) = (raw & !TRIM, raw & TRIM != 0);
                if u32::from(offset) >= self.data_pages {
                    return Err(broken("a record of a page beyond the unit's pages"));
                }
                max_seq = max_seq.max(seq);
                if trim {
                    u.slots[usize::from(offset)] = NO_SLOT;
                }
                u.records.push(LogRecord { offset, trim, len: len as u16, fingerprint });
            }
        }
        self.units[unit] = u;
        Ok(max_seq)
    }

    /// Recovery (see the module docs): every volatile table rebuilt from the flash alone.
    /// Units that no logical unit keeps are erased (through the power switch: a cut here
    /// leaves them to the next recovery).
    fn rebuild(&mut self) -> Result<(), FlashError> {
        self.units = vec![Unit::unmapped(); self.units.len()];
        self.free.clear();
        self.last_data_lpn = None;
        let blocks = self.flash.geometry().blocks();
        let mut newest: Vec<Option<(u64, u32)>> = vec![None; self.units.len()];
        let mut stale = Vec::new();
        let mut max_seq = 0;
        for block in 0..blocks as u32 {
            let pages = self.flash.write_pointer(u64::from(block));
            if pages == 0 {
                continue;
            }
            for page in 0..pages {
                if let Some(s) = self.flash.spare(self.ppn(block, page)).and_then(PageSpare::parse) {
                    max_seq = max_seq.max(s.seq);
                }
            }
            match self.claim(block) {
                Some((unit, seq)) => match newest[unit as usize] {
                    Some((held, _)) if held > seq => stale.push(block),
                    previous => {
                        stale.extend(previous.map(|(_, b)| b));
                        newest[unit as usize] = Some((seq, block));
                    }
                },
                None => stale.push(block),
            }
        }
        for (unit, found) in newest.into_iter().enumerate() {
            if let Some((_, block)) = found {
                max_seq = max_seq.max(self.load_unit(unit, block)?);
            }
        }
        self.seq = max_seq + 1;
        stale.sort_unstable();
        for block in stale {
            self.admit()?;
            self.flash.erase_block(u64::from(block), 0)?;
        }
        for block in 0..blocks as u32 {
            if self.flash.write_pointer(u64::from(block)) == 0 {
                self.release(block);
            }
        }
        Ok(())
    }
}

impl PageStore for IplNativeStore {
    fn logical_pages(&self) -> u64 {
        self.units.len() as u64 * u64::from(self.data_pages)
    }

    fn page_bytes(&self) -> u32 {
        self.flash.geometry().page_bytes
    }

    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        self.write_update(lpn, data, None, now_ns)
    }

    fn write_range(&mut self, lpn: u64, data: PageData, written: (u32, u32), now_ns: u64) -> Result<u64, FlashError> {
        self.write_inner(lpn, data, None, written, now_ns)
    }

    /// A first write for a page without a data page; otherwise never a record, whatever
    /// the delta policy (which it does not draw from): the unit is merged with the new
    /// page, as for a change too large for a sector.
    fn write_new(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        match self.start_write(lpn, data, now_ns)? {
            Started::Done(done_ns) => Ok(done_ns),
            Started::Update { unit, offset, data } => self.write_unlogged(unit, offset, data, now_ns),
        }
    }

    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let (unit, offset) = self.check_lpn(lpn)?;
        self.stats.host_page_reads += 1;
        if self.units[unit].has_copy(offset) {
            return self.current(unit, offset, now_ns);
        }
        // As in every configuration, a read of a page never written costs a flash read (of
        // its unit, or without one of a unit on the plane the page's number gives).
        let block = match self.units[unit].block {
            UNMAPPED => lpn % self.flash.geometry().planes(),
            block => u64::from(block),
        };
        let t = self.flash.read_page_timing(block * u64::from(self.pages_per_unit), now_ns)?;
        Ok((PageData::Empty, t.end_ns))
    }

    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let (unit, offset) = self.check_lpn(lpn)?;
        self.stats.host_page_trims += 1;
        if !self.units[unit].has_copy(offset) {
            return Ok(now_ns);
        }
        if self.log_full(unit) {
            return self.merge(unit, Some((offset, None)), now_ns);
        }
        let seq = self.next_seq();
        let done_ns = self.append(unit, offset, true, &[], 0, seq, now_ns)?;
        self.units[unit].slots[usize::from(offset)] = NO_SLOT;
        Ok(done_ns)
    }

    fn stats(&self) -> StoreStats {
        self.stats.with_flash(&self.flash)
    }

    fn reset_stats(&mut self) {
        self.stats = StoreStats::default();
        self.flash.reset_stats();
    }

    fn check_invariants(&self) -> Result<(), String> {
        let blocks = self.flash.geometry().blocks() as usize;
        let mut owner = vec![None; blocks];
        for Reverse((_, block)) in &self.free {
            if self.flash.write_pointer(u64::from(*block)) != 0 {
                return Err(format!("free erase unit {block} is not erased"));
            }
            if owner[*block as usize].replace(usize::MAX).is_some() {
                return Err(format!("erase unit {block} is in the free pool twice"));
            }
        }
        for (n, u) in self.units.iter().enumerate() {
            if !u.is_mapped() {
                if !u.slots.is_empty() || !u.records.is_empty() {
                    return Err(format!("logical unit {n} has pages but no erase unit"));
                }
                continue;
            }
            if let Some(other) = owner[u.block as usize].replace(n) {
                return Err(format!("erase unit {} held by logical unit {n} and by {other} (or free)", u.block));
            }
            let log_pages = (u.records.len() as u32).div_ceil(self.sectors_per_page);
            let pages = self.flash.write_pointer(u64::from(u.block));
            if u.records.len() as u32 > self.log_sectors || u32::from(u.written) > self.data_pages {
                return Err(format!("logical unit {n}: {} data pages, {} records", u.written, u.records.len()));
            }
            if pages != u32::from(u.written) + log_pages {
                return Err(format!(
                    "logical unit {n}: {pages} pages programmed, {} data and {log_pages} log",
                    u.written
                ));
            }
            for page in 0..u32::from(u.written) {
                let spare = self.flash.spare(self.ppn(u.block, page)).and_then(PageSpare::parse);
                let Some(spare) = spare.filter(|s| s.unit as usize == n && s.offset != LOG_PAGE) else {
                    return Err(format!("logical unit {n}: data page {page} does not name it"));
                };
                let slot = u.slots[usize::from(spare.offset)];
                let trimmed = u.records.iter().any(|r| r.trim && r.offset == spare.offset);
                if u32::from(slot) != page && !(slot == NO_SLOT && trimmed) {
                    return Err(format!("logical unit {n}: page {} at {page} but mapped to {slot}", spare.offset));
                }
            }
            let mapped = u.slots.iter().filter(|&&s| s != NO_SLOT).count();
            let mut distinct: Vec<u16> = u.slots.iter().copied().filter(|&s| s != NO_SLOT).collect();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() != mapped {
                return Err(format!("logical unit {n}: two pages share a data page"));
            }
            for k in 0..log_pages {
                let ppn = self.ppn(u.block, u32::from(u.written) + k);
                let used = (u.records.len() as u32 - k * self.sectors_per_page).min(self.sectors_per_page);
                let mask = self.flash.sector_mask(ppn).unwrap_or(0);
                if mask != u64::MAX >> (64 - used) {
                    return Err(format!("logical unit {n}: log page {k} has sectors {mask:#b} for {used} records"));
                }
            }
            for (i, r) in u.records.iter().enumerate() {
                let trimmed_later = u.records[i + 1..].iter().any(|t| t.trim && t.offset == r.offset);
                if !r.trim && !u.has_copy(r.offset) && !trimmed_later {
                    return Err(format!("logical unit {n}: record {i} of page {} without a copy", r.offset));
                }
            }
        }
        if let Some(block) = owner.iter().position(Option::is_none) {
            return Err(format!("erase unit {block} is neither free nor held by a logical unit"));
        }
        Ok(())
    }

    fn power_cycle(&mut self) -> Result<(), FlashError> {
        self.power.restore();
        crate::layer::with_activity(self, nvmdb_device::Activity::Recovery, IplNativeStore::rebuild)
    }

    fn power_switch(&mut self) -> Option<&mut PowerSwitch> {
        Some(&mut self.power)
    }

    /// Live records: every record of a page that still has its data page, and every trim
    /// record (each waits for a merge to reach the unit's data pages).
    fn pending(&self) -> Pending {
        let mut pending = Pending::default();
        let mut pages = Vec::new();
        for u in &self.units {
            pages.clear();
            for r in u.records.iter().filter(|r| r.trim || u.has_copy(r.offset)) {
                pending.log_records += 1;
                pages.push(r.offset);
            }
            pages.sort_unstable();
            pages.dedup();
            pending.log_pages += pages.len() as u64;
        }
        pending
    }

    /// Merges every unit with records, each as a merge during a run is (counted, timed,
    /// in `gc_time_ns`), all issued at `now_ns`.
    fn drain(&mut self, now_ns: u64) -> Result<u64, FlashError> {
        let mut done_ns = now_ns;
        for unit in 0..self.units.len() {
            if !self.units[unit].records.is_empty() {
                done_ns = done_ns.max(self.merge(unit, None, now_ns)?);
            }
        }
        Ok(done_ns)
    }

    fn health(&self) -> StoreHealth {
        let live = self.units.iter().map(|u| u.slots.iter().filter(|&&s| s != NO_SLOT).count() as u64).sum();
        let geometry = self.flash.geometry();
        StoreHealth {
            blocks: geometry.blocks(),
            endurance: geometry.endurance,
            block_erases_total: self.flash.erase_counts().sum(),
            block_erases_max: self.flash.erase_counts().max().unwrap_or(0),
            mapped_pages: live,
            live_physical_pages: live,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(wear_leveling: WearLeveling) -> IplNativeStore {
        let mut config = SsdConfig { content: PageContent::None, ..SsdConfig::default() };
        config.flash.packages = 1;
        config.flash.planes_per_package = 1;
        config.flash.blocks_per_plane = 6;
        config.flash.pages_per_block = 16;
        config.ftl.overprovision = 0.5;
        config.ftl.wear_leveling = wear_leveling;
        IplNativeStore::new(&config).unwrap()
    }

    #[test]
    fn the_spare_record_round_trips() {
        let s = PageSpare { unit: 7, offset: 300, seq: 1 << 40, run: 12 };
        assert_eq!(PageSpare::parse(&s.bytes()), Some(s));
        assert_eq!(PageSpare::parse(&s.bytes()[..15]), None);
    }

    /// Dynamic levelling takes the free unit with the fewest erases; without it the pool
    /// is a queue, the unit freed first taken first.
    #[test]
    fn the_free_pool_follows_the_wear_levelling() {
        for (mode, expected) in [(WearLeveling::Dynamic, 1), (WearLeveling::None, 0)] {
            let mut store = small(mode);
            store.flash.erase_block(0, 0).unwrap();
            store.free.clear();
            for block in 0..6 {
                store.release(block);
            }
            assert_eq!(store.allocate().unwrap(), expected, "{mode:?}");
        }
    }

    /// One hot logical unit merged again and again moves through its own unit and the free
    /// ones, which dynamic levelling wears evenly; the units holding cold data are never
    /// erased (no static levelling).
    #[test]
    fn a_hot_unit_wears_the_free_units_evenly() {
        let mut store = small(WearLeveling::Dynamic);
        assert_eq!((store.data_pages_per_unit(), store.log_sectors_per_unit()), (15, 8));
        // Three logical units (half the six erase units) hold a page each.
        for unit in 0..3 {
            store.write(unit * 15, PageData::Empty, 0).unwrap();
        }
        for i in 0..8 * 60 {
            store.write_update(0, PageData::Empty, Some(&[(i % 4000, 60)]), 0).unwrap();
        }
        store.check_invariants().unwrap();
        let s = store.stats();
        assert_eq!(s.merges, 59, "a merge before every ninth record: {s:?}");
        let held: Vec<u64> = store.units[1..].iter().map(|u| u64::from(u.block)).collect();
        let hot: Vec<u64> = (0..6).filter(|b| !held.contains(b)).map(|b| store.flash.erase_count(b)).collect();
        assert_eq!((hot.len(), hot.iter().sum::<u64>()), (4, 59), "erase counts {hot:?}");
        assert!(hot.iter().max().unwrap() - hot.iter().min().unwrap() <= 1, "erase counts {hot:?}");
        for &block in &held {
            assert_eq!(store.flash.erase_count(block), 0, "a cold unit is never erased");
        }
    }
}
