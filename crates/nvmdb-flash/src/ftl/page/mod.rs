//! The page-mapped FTL: any logical page may live in any physical page.
//!
//! Metadata is flat: `l2p` and `p2l` are `Vec<u32>` (4 bytes per page each), block state
//! is one small struct per block, and nothing on the write path allocates. Closed blocks
//! are also filed by valid-page count (`ByValid`), so greedy GC finds its victim
//! without a pass over the plane's blocks. Host writes
//! are striped round-robin over planes; each plane has its own active block, free blocks
//! and garbage collection, so GC copies stay inside a plane (copy-back).
//!
//! With deduplication, several logical pages may share one physical page: `refs` counts
//! them, `p2l` names one owner and `extra_owners` the others, and the page is freed only
//! when its last owner goes.
//!
//! Durability: every flash program and erase passes through the FTL's
//! [`PowerSwitch`], which a log layer above shares for its PCM
//! writes. A trim is durable: it programs a trim record. The recovery rules are on
//! [`PageFtl::power_cycle`](crate::layer::PageStore::power_cycle) (see `impl PageStore`).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use nvmdb_device::flash::SectorTag;
use nvmdb_device::{FlashArray, FlashGeometry, PageContent, PageData, PowerSwitch};

mod collect;
mod recovery;

use super::by_valid::ByValid;
use crate::config::{GcPolicy, MergeLayout, SsdConfig, WearLeveling};
use crate::dedup::{Dedup, Share};
use crate::gc::Candidate;
use crate::layer::{with_activity, FlashError, PageStore, StoreHealth, StoreStats};
use crate::wear_level;

/// Marks an unmapped entry of `l2p` / `p2l`.
const UNMAPPED: u32 = u32::MAX;
/// Set in a spare area's logical page (and in `p2l`) for a trim record: a page that says
/// its logical page was trimmed at that write sequence number.
const TRIM_BIT: u32 = 1 << 31;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockState {
    Free,
    Active,
    Closed,
    /// Closed, and being collected: its live pages are moving out (filed nowhere by
    /// valid count meanwhile, and filed again if the collection fails).
    Collecting,
}

#[derive(Debug, Clone, Copy)]
struct BlockMeta {
    valid_pages: u32,
    state: BlockState,
    closed_seq: u64,
    last_write_ns: u64,
}

#[derive(Debug, Clone, Default)]
struct Plane {
    /// The block being filled.
    active: Option<u32>,
    /// Free blocks, smallest key (see [`wear_level::free_block_key`]) first.
    free: BinaryHeap<Reverse<(u64, u32)>>,
}

/// The page-mapped FTL.
#[derive(Debug, Clone)]
pub struct PageFtl {
    flash: FlashArray,
    geometry: FlashGeometry,
    /// `log2(pages_per_block)` when it is a power of two (a page's block is then a shift).
    page_shift: Option<u32>,
    /// `planes - 1` when the planes are a power of two (a block's plane is then a mask).
    plane_mask: Option<u64>,
    logical_pages: u64,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    blocks: Vec<BlockMeta>,
    planes: Vec<Plane>,
    next_plane: usize,
    gc_policy: GcPolicy,
    wear_leveling: WearLeveling,
    gc_free_blocks: usize,
    static_wl_threshold: u64,
    seq: u64,
    stats: StoreStats,
    mapped_pages: u64,
    live_physical_pages: u64,
    dedup: Option<Dedup>,
    /// Reference counts per physical page (deduplication only; empty otherwise).
    refs: Vec<u32>,
    /// Owners of shared pages other than the one `p2l` names.
    extra_owners: BTreeMap<u32, Vec<u32>>,
    /// Write sequence number of each logical page's mapping (deduplication only: a
    /// shared page's spare area names another page's write).
    map_seq: Vec<u64>,
    /// Scratch list of GC candidates, reused.
    candidates: Vec<Candidate>,
    /// Every closed block, filed by its valid-page count (greedy GC's victim without a
    /// pass over the plane).
    by_valid: ByValid,
    /// Valid pages per plane (the sum of its blocks' `valid_pages`).
    plane_valid: Vec<u64>,
    /// Live trim records: trimmed logical page → the physical page recording the trim.
    trims: BTreeMap<u32, u32>,
    /// Every flash program and erase (and the deduplication's PCM writes) passes through
    /// it; a log layer above passes its own PCM writes through it too ([`PageFtl::admit`]).
    power: PowerSwitch,
    /// Sequence number of the next page write; each page's spare area holds its logical
    /// page and write sequence number ([`OOB_BYTES`]), from which [`PageFtl::reopen`]
    /// rebuilds the mapping.
    write_seq: u64,
    /// The logical page of the last page written for the layer above (not a GC copy), for
    /// `sequential_page_writes`; `None` after a partial (log-sector) program.
    last_data_lpn: Option<u32>,
    config: SsdConfig,
}

/// Bytes of the FTL's out-of-band record in a page's spare area: logical page (`u32`) and
/// write sequence number (`u64`), little-endian.
pub const OOB_BYTES: usize = 12;

fn oob(lpn: u32, seq: u64) -> [u8; OOB_BYTES] {
    let mut out = [0u8; OOB_BYTES];
    out[..4].copy_from_slice(&lpn.to_le_bytes());
    out[4..].copy_from_slice(&seq.to_le_bytes());
    out
}

fn parse_oob(spare: &[u8]) -> Option<(u32, u64)> {
    let bytes: &[u8; OOB_BYTES] = spare.get(..OOB_BYTES)?.try_into().ok()?;
    let lpn = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
    let seq = u64::from_le_bytes(bytes[4..].try_into().expect("8 bytes"));
    Some((lpn, seq))
}

impl PageFtl {
    /// Builds the FTL over a fresh flash array.
    pub fn new(config: &SsdConfig) -> Result<PageFtl, FlashError> {
        PageFtl::with_geometry(config, config.flash.geometry())
    }

    /// Builds the FTL over a fresh flash array of `geometry` (a log layer above may turn
    /// on partial programming).
    pub fn with_geometry(config: &SsdConfig, geometry: FlashGeometry) -> Result<PageFtl, FlashError> {
        config.validate()?;
        if (geometry.spare_bytes as usize) < OOB_BYTES {
            return Err(FlashError::Config(format!(
                "flash.spare_bytes must be at least {OOB_BYTES}: the page FTL keeps each page's logical address and write sequence there"
            )));
        }
        let flash = FlashArray::new(geometry, config.flash.timing.timing(), config.content)?;
        let logical_pages = config.logical_pages();
        if logical_pages >= u64::from(TRIM_BIT) {
            return Err(FlashError::Config(format!(
                "{logical_pages} logical pages: the page FTL addresses at most 2^31 - 1"
            )));
        }
        let planes = geometry.planes();
        let ppb = u64::from(geometry.pages_per_block);
        // GC needs, per plane, the reserve plus an active block beyond the live data.
        let usable = (u64::from(geometry.blocks_per_plane) - u64::from(config.ftl.gc_free_blocks) - 1) * planes * ppb;
        if logical_pages >= usable {
            return Err(FlashError::Config(format!(
                "ftl.overprovision = {} leaves {logical_pages} logical pages, but garbage collection needs them \
                 below {usable} (physical pages minus ftl.gc_free_blocks + 1 blocks per plane)",
                config.ftl.overprovision
            )));
        }
        let mut ftl = PageFtl {
            flash,
            geometry,
            page_shift: geometry.pages_per_block.is_power_of_two().then(|| geometry.pages_per_block.trailing_zeros()),
            plane_mask: planes.is_power_of_two().then(|| planes - 1),
            logical_pages,
            l2p: vec![UNMAPPED; logical_pages as usize],
            p2l: vec![UNMAPPED; geometry.pages() as usize],
            blocks: vec![
                BlockMeta { valid_pages: 0, state: BlockState::Free, closed_seq: 0, last_write_ns: 0 };
                geometry.blocks() as usize
            ],
            planes: (0..planes).map(|_| Plane::default()).collect(),
            next_plane: 0,
            gc_policy: config.ftl.gc,
            wear_leveling: config.ftl.wear_leveling,
            gc_free_blocks: config.ftl.gc_free_blocks as usize,
            static_wl_threshold: config.ftl.static_wl_threshold,
            seq: 0,
            stats: StoreStats::default(),
            mapped_pages: 0,
            live_physical_pages: 0,
            dedup: None,
            refs: Vec::new(),
            extra_owners: BTreeMap::new(),
            map_seq: Vec::new(),
            candidates: Vec::new(),
            by_valid: ByValid::new(planes as usize, geometry.blocks() as usize, geometry.pages_per_block),
            plane_valid: vec![0; planes as usize],
            trims: BTreeMap::new(),
            power: PowerSwitch::new(),
            write_seq: 1,
            last_data_lpn: None,
            config: config.clone(),
        };
        for block in 0..geometry.blocks() {
            ftl.release(block as u32);
        }
        if config.dedup.enabled {
            ftl.dedup = Some(Dedup::new(&config.dedup, geometry.pages(), logical_pages)?);
            ftl.refs = vec![0; geometry.pages() as usize];
            ftl.map_seq = vec![0; logical_pages as usize];
        }
        Ok(ftl)
    }

    /// The plane of a block ([`FlashGeometry::plane_of_block`], with the mask computed once).
    #[inline(always)]
    fn plane_of(&self, block: u32) -> usize {
        match self.plane_mask {
            Some(mask) => (u64::from(block) & mask) as usize,
            None => self.geometry.plane_of_block(u64::from(block)) as usize,
        }
    }

    /// The block of a page ([`FlashGeometry::block_of`], with the shift computed once).
    #[inline(always)]
    fn block_of(&self, ppn: u64) -> usize {
        match self.page_shift {
            Some(shift) => (ppn >> shift) as usize,
            None => self.geometry.block_of(ppn) as usize,
        }
    }

    /// Puts an erased block into its plane's free pool.
    fn release(&mut self, block: u32) {
        self.seq += 1;
        let key = wear_level::free_block_key(self.wear_leveling, self.flash.erase_count(u64::from(block)), self.seq);
        let plane = self.plane_of(block);
        let meta = &mut self.blocks[block as usize];
        if meta.state == BlockState::Closed {
            self.by_valid.unfile(block, plane, meta.valid_pages);
        }
        meta.state = BlockState::Free;
        self.planes[plane].free.push(Reverse((key, block)));
    }

    /// One more (`up`) or one fewer valid page in `block`.
    #[inline(always)]
    fn count_valid(&mut self, block: usize, up: bool) {
        let plane = self.plane_of(block as u32);
        let meta = &mut self.blocks[block];
        let was = meta.valid_pages;
        if up {
            meta.valid_pages += 1;
            self.plane_valid[plane] += 1;
        } else {
            meta.valid_pages -= 1;
            self.plane_valid[plane] -= 1;
        }
        if meta.state == BlockState::Closed {
            self.by_valid.refile(block as u32, plane, was, meta.valid_pages);
        }
    }

    /// Closes a plane's full or recovered block: a GC candidate from now on.
    fn close(&mut self, block: u32, closed_seq: u64) {
        let plane = self.plane_of(block);
        let meta = &mut self.blocks[block as usize];
        meta.state = BlockState::Closed;
        meta.closed_seq = closed_seq;
        self.by_valid.file(block, plane, meta.valid_pages);
    }

    /// The next free page of a plane, opening a new active block when needed.
    #[inline(always)]
    fn allocate(&mut self, plane: usize, now_ns: u64) -> Result<u64, FlashError> {
        let ppb = self.geometry.pages_per_block;
        if let Some(block) = self.planes[plane].active {
            let next = self.flash.write_pointer(u64::from(block));
            if next < ppb {
                return Ok(u64::from(block) * u64::from(ppb) + u64::from(next));
            }
            self.seq += 1;
            self.blocks[block as usize].last_write_ns = now_ns;
            self.close(block, self.seq);
        }
        let Reverse((_, block)) =
            self.planes[plane].free.pop().ok_or_else(|| FlashError::Full(format!("plane {plane}")))?;
        self.blocks[block as usize].state = BlockState::Active;
        self.planes[plane].active = Some(block);
        Ok(u64::from(block) * u64::from(ppb))
    }

    /// Programs `data` into the next page of `plane`; returns the page and completion time.
    /// (This and the steps of [`PageFtl::write_new`] are forced inline: the write path is
    /// the replay's inner loop, and the workspace builds without LTO in 16 code-generation
    /// units, where `#[inline]` alone left them calls.)
    #[inline(always)]
    fn program(
        &mut self,
        plane: usize,
        lpn: u32,
        seq: u64,
        data: &PageData,
        now_ns: u64,
    ) -> Result<(u32, u64), FlashError> {
        let ppn = self.allocate(plane, now_ns)?;
        self.admit()?;
        let timing = self.flash.program_page_with_spare(ppn, data, &oob(lpn, seq), now_ns)?;
        self.programmed(ppn, now_ns);
        Ok((ppn as u32, timing.end_ns))
    }

    /// GC's copy of whole page `old` (read at `now_ns`) into the next page of `plane`,
    /// inside the flash array: what [`PageFtl::program`] stores given `old`'s data and its
    /// out-of-band record (every page the FTL programs has its 12 bytes there, and erased
    /// bytes after them). Returns the new page.
    #[inline(always)]
    fn program_copy(&mut self, plane: usize, old: u64, now_ns: u64) -> Result<u32, FlashError> {
        let ppn = self.allocate(plane, now_ns)?;
        self.admit()?;
        self.flash.program_page_copy(ppn, old, now_ns)?;
        self.programmed(ppn, now_ns);
        Ok(ppn as u32)
    }

    /// Counts a page just programmed whole at `now_ns` as valid.
    #[inline(always)]
    fn programmed(&mut self, ppn: u64, now_ns: u64) {
        let block = self.block_of(ppn);
        self.count_valid(block, true);
        self.blocks[block].last_write_ns = now_ns;
    }

    /// Copies partially programmed page `old` sector run by sector run, so that its erased
    /// sectors stay programmable (IPL's log pages); each sector keeps its tag.
    fn program_partial_copy(
        &mut self,
        plane: usize,
        old: u64,
        spare: &[u8],
        data: &PageData,
        mask: u64,
        now_ns: u64,
    ) -> Result<(u32, u64), FlashError> {
        let ppn = self.allocate(plane, now_ns)?;
        let mut done_ns = now_ns;
        let mut spare = Some(spare);
        let mut sector = 0;
        while mask >> sector != 0 {
            if mask >> sector & 1 == 0 {
                sector += 1;
                continue;
            }
            // A run is programmed sectors that are all tagged, or all untagged.
            let tagged = self.flash.sector_tag(old, sector).is_some();
            let run = (sector..sector + (mask >> sector).trailing_ones())
                .take_while(|&s| self.flash.sector_tag(old, s).is_some() == tagged)
                .count() as u32;
            let part = sector_slice(data, sector, run);
            let with = spare.take().unwrap_or(&[]);
            let tags: Vec<SectorTag> =
                (sector..sector + run).filter_map(|s| self.flash.sector_tag(old, s).copied()).collect();
            self.admit()?;
            done_ns = done_ns.max(self.program_sectors(ppn, sector, &part, run, &tags, with, now_ns)?.end_ns);
            sector += run;
        }
        self.programmed(ppn, now_ns);
        Ok((ppn as u32, done_ns))
    }

    /// Removes `lpn`'s mapping, freeing its physical page if no other page shares it.
    /// Returns PCM time spent updating the fingerprint store, ns.
    #[inline(always)]
    fn unmap(&mut self, lpn: u32) -> Result<u64, FlashError> {
        let ppn = std::mem::replace(&mut self.l2p[lpn as usize], UNMAPPED);
        if ppn == UNMAPPED {
            return Ok(0);
        }
        self.mapped_pages -= 1;
        if self.dedup.is_some() {
            self.refs[ppn as usize] -= 1;
            if self.p2l[ppn as usize] == lpn {
                let next = self.extra_owners.get_mut(&ppn).and_then(Vec::pop).unwrap_or(UNMAPPED);
                self.p2l[ppn as usize] = next;
            } else {
                let others = self.extra_owners.get_mut(&ppn).expect("a shared page lists its other owners");
                let at = others.iter().position(|&o| o == lpn).expect("an owner is listed");
                others.swap_remove(at);
            }
            if self.extra_owners.get(&ppn).is_some_and(Vec::is_empty) {
                self.extra_owners.remove(&ppn);
            }
            if self.refs[ppn as usize] > 0 {
                return Ok(0);
            }
        }
        assert!(self.p2l[ppn as usize] == UNMAPPED || self.p2l[ppn as usize] == lpn, "p2l names the owner");
        self.p2l[ppn as usize] = UNMAPPED;
        self.count_valid(self.block_of(u64::from(ppn)), false);
        self.live_physical_pages -= 1;
        match &mut self.dedup {
            Some(dedup) => dedup.forget(&mut self.power, ppn),
            None => Ok(0),
        }
    }

    /// Maps `lpn` to `ppn` (a fresh page, or with deduplication a shared one) by the write
    /// numbered `seq`.
    #[inline(always)]
    fn map(&mut self, lpn: u32, ppn: u32, seq: u64) {
        self.l2p[lpn as usize] = ppn;
        if let Some(slot) = self.map_seq.get_mut(lpn as usize) {
            *slot = seq;
        }
        self.mapped_pages += 1;
        // A write supersedes the page's trim record, which becomes garbage.
        if let Some(record) = self.trims.remove(&lpn) {
            self.p2l[record as usize] = UNMAPPED;
            self.count_valid(self.block_of(u64::from(record)), false);
        }
        if self.dedup.is_some() {
            self.refs[ppn as usize] += 1;
            if self.refs[ppn as usize] > 1 {
                self.extra_owners.entry(ppn).or_default().push(lpn);
                return;
            }
        }
        assert_eq!(self.p2l[ppn as usize], UNMAPPED, "a fresh physical page has no owner");
        self.p2l[ppn as usize] = lpn;
        self.live_physical_pages += 1;
    }

    #[inline]
    fn check_lpn(&self, lpn: u64) -> Result<u32, FlashError> {
        if lpn >= self.logical_pages {
            return Err(FlashError::OutOfRange { lpn, pages: self.logical_pages });
        }
        Ok(lpn as u32)
    }

    /// Writes a new physical copy of `lpn` on some plane, collecting garbage first.
    fn write_new(&mut self, lpn: u32, data: &PageData, now_ns: u64) -> Result<u64, FlashError> {
        // The old copy stays live while garbage collection makes room: it is the page's
        // only durable copy until the new one is programmed.
        let plane = self.make_room(now_ns)?;
        let now_ns = now_ns + self.unmap(lpn)?;
        let seq = self.next_write_seq();
        let (ppn, done_ns) = self.program(plane, lpn, seq, data, now_ns)?;
        self.map(lpn, ppn, seq);
        self.note_data_write(lpn);
        Ok(done_ns)
    }

    /// Counts a page programmed for the layer above, and whether its logical page follows
    /// the previous one's (a sequential run in the write stream reaching flash).
    #[inline]
    fn note_data_write(&mut self, lpn: u32) {
        self.stats.data_page_writes += 1;
        if self.last_data_lpn.and_then(|last| last.checked_add(1)) == Some(lpn) {
            self.stats.sequential_page_writes += 1;
        }
        self.last_data_lpn = Some(lpn);
    }

    /// The next plane in round-robin order that has room (after garbage collection).
    #[inline(always)]
    fn make_room(&mut self, now_ns: u64) -> Result<usize, FlashError> {
        let planes = self.planes.len();
        let mut last_error = None;
        // Round-robin striping; a plane that cannot make room passes the page on.
        for _ in 0..planes {
            let plane = self.next_plane;
            self.next_plane = if plane + 1 == planes { 0 } else { plane + 1 };
            match self.collect(plane, now_ns) {
                Ok(()) => return Ok(plane),
                Err(e @ FlashError::PowerCut(_)) => return Err(e),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.expect("at least one plane was tried"))
    }

    /// Takes the next write sequence number (a log layer numbers its records from the same
    /// counter, so that a record is newer than a page copy exactly when it applies to it).
    #[inline]
    pub fn next_write_seq(&mut self) -> u64 {
        let seq = self.write_seq;
        self.write_seq += 1;
        seq
    }

    /// Makes later sequence numbers exceed `seq` (a log layer's recovery found a record
    /// numbered `seq`, newer than every page copy).
    pub fn note_seq(&mut self, seq: u64) {
        self.write_seq = self.write_seq.max(seq + 1);
    }

    /// The write sequence number of a logical page's mapping: its flash copy's, or with
    /// deduplication the hit's that made it share its page.
    pub fn page_seq(&self, lpn: u64) -> Option<u64> {
        let ppn = *self.l2p.get(lpn as usize)?;
        if ppn == UNMAPPED {
            return None;
        }
        if let Some(&seq) = self.map_seq.get(lpn as usize) {
            return Some(seq);
        }
        self.flash.spare(u64::from(ppn)).and_then(parse_oob).map(|(_, seq)| seq)
    }

    /// Admits one device write through the store's power switch, or fails with
    /// [`FlashError::PowerCut`] once the power is cut.
    #[inline]
    pub fn admit(&mut self) -> Result<(), FlashError> {
        self.power.admit().map_err(FlashError::PowerCut)
    }

    /// Drops a logical page's mapping without recording it in flash (a log layer's own
    /// pages, whose recovery tells a stale copy from a live one by itself). Returns PCM
    /// time, ns.
    pub fn discard(&mut self, lpn: u64) -> Result<u64, FlashError> {
        let lpn = self.check_lpn(lpn)?;
        self.unmap(lpn)
    }

    /// What a trim record's page holds: nothing (erased bytes in bytes mode).
    fn trim_record_data(&self) -> PageData {
        match self.flash.content_mode() {
            PageContent::Bytes => PageData::Bytes(vec![0xFF; self.geometry.page_bytes as usize]),
            _ => PageData::Empty,
        }
    }

    /// The programmed-sector mask of a logical page opened by partial programming.
    pub fn sector_mask(&self, lpn: u64) -> Option<u64> {
        let ppn = *self.l2p.get(lpn as usize)?;
        if ppn == UNMAPPED {
            return None;
        }
        self.flash.sector_mask(u64::from(ppn))
    }

    /// Whether a logical page has a physical copy.
    pub fn is_mapped(&self, lpn: u64) -> bool {
        self.l2p.get(lpn as usize).is_some_and(|&p| p != UNMAPPED)
    }

    /// Writes `pages` as one sequential run (a log layer's merge). With `buffer.merge_layout
    /// = "one-plane"` the run goes to the plane with the fewest live pages (see
    /// [`run_plane`]), each page to its next free page, so the run fills its active block
    /// in order; with `"striped"` each page goes to the next plane in round-robin order,
    /// as host writes do, so the planes program the run in parallel. Returns the
    /// completion time.
    pub fn write_run(&mut self, pages: &[(u64, PageData)], now_ns: u64) -> Result<u64, FlashError> {
        let Some(&(first, _)) = pages.first() else { return Ok(now_ns) };
        self.check_lpn(first)?;
        if self.config.buffer.merge_layout == MergeLayout::Striped {
            let mut done_ns = now_ns;
            for (lpn, data) in pages {
                let lpn = self.check_lpn(*lpn)?;
                done_ns = done_ns.max(self.write_new(lpn, data, now_ns)?);
            }
            return Ok(done_ns);
        }
        let plane = run_plane(&self.plane_valid);
        let mut done_ns = now_ns;
        for (lpn, data) in pages {
            let lpn = self.check_lpn(*lpn)?;
            match self.collect(plane, now_ns) {
                Ok(()) => {}
                Err(e @ FlashError::PowerCut(_)) => return Err(e),
                Err(_) => {
                    done_ns = done_ns.max(self.write_new(lpn, data, now_ns)?);
                    continue;
                }
            }
            let now_ns = now_ns + self.unmap(lpn)?;
            let seq = self.next_write_seq();
            let (ppn, t) = self.program(plane, lpn, seq, data, now_ns)?;
            self.map(lpn, ppn, seq);
            self.note_data_write(lpn);
            done_ns = done_ns.max(t);
        }
        Ok(done_ns)
    }

    /// Programs sector `sector` of logical page `lpn` with partial programming (IPL's log
    /// pages): into its physical page when it has one, otherwise into a fresh page, which
    /// stays open for its other sectors. The sector must be erased.
    pub fn program_sector(&mut self, lpn: u64, sector: u32, data: &PageData, now_ns: u64) -> Result<u64, FlashError> {
        self.program_sector_tagged(lpn, sector, data, None, now_ns)
    }

    /// [`PageFtl::program_sector`], giving the sector a tag of its own (its content
    /// identity and spare bytes, which recovery reads with [`PageFtl::sector_tag`]) when
    /// `tag` is given. GC copies keep each sector's tag.
    pub fn program_sector_tagged(
        &mut self,
        lpn: u64,
        sector: u32,
        data: &PageData,
        tag: Option<SectorTag>,
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let lpn = self.check_lpn(lpn)?;
        self.last_data_lpn = None;
        let tags: Vec<SectorTag> = tag.into_iter().collect();
        let ppn = self.l2p[lpn as usize];
        if ppn != UNMAPPED {
            self.admit()?;
            let t = self.program_sectors(u64::from(ppn), sector, data, 1, &tags, &[], now_ns)?;
            return Ok(t.end_ns);
        }
        let plane = self.make_room(now_ns)?;
        let ppn = self.allocate(plane, now_ns)?;
        let seq = self.next_write_seq();
        self.admit()?;
        let t = self.program_sectors(ppn, sector, data, 1, &tags, &oob(lpn, seq), now_ns)?;
        self.programmed(ppn, now_ns);
        self.map(lpn, ppn as u32, seq);
        Ok(t.end_ns)
    }

    /// Programs `n` sectors from `first` of a physical page, with their tags when `tags`
    /// holds one per sector (and without when it is empty).
    #[allow(clippy::too_many_arguments)]
    fn program_sectors(
        &mut self,
        ppn: u64,
        first: u32,
        data: &PageData,
        n: u32,
        tags: &[SectorTag],
        spare: &[u8],
        now_ns: u64,
    ) -> Result<nvmdb_device::flash::OpTiming, FlashError> {
        Ok(if tags.is_empty() {
            self.flash.program_sectors_with_spare(ppn, first, data, n, spare, now_ns)?
        } else {
            assert_eq!(tags.len(), n as usize, "one tag per sector");
            self.flash.program_sectors_tagged(ppn, first, data, tags, spare, now_ns)?
        })
    }

    /// The tag of sector `sector` of logical page `lpn`'s physical copy, if it has one.
    pub fn sector_tag(&self, lpn: u64, sector: u32) -> Option<SectorTag> {
        let ppn = *self.l2p.get(lpn as usize)?;
        if ppn == UNMAPPED {
            return None;
        }
        self.flash.sector_tag(u64::from(ppn), sector).copied()
    }

    /// Flash busy time so far, ns.
    pub fn busy_ns(&self) -> u64 {
        self.flash.stats().busy_ns
    }

    /// Flash energy so far, pJ.
    pub fn energy_pj(&self) -> u64 {
        self.flash.stats().energy_pj
    }

    /// The flash content mode.
    pub fn content_mode(&self) -> nvmdb_device::PageContent {
        self.flash.content_mode()
    }

    /// The flash geometry.
    pub fn geometry(&self) -> &FlashGeometry {
        &self.geometry
    }
}

/// The plane a merge's run goes to: the one with the fewest live pages (ties to the
/// lowest), so that runs of a whole block keep live data balanced over the planes. (Each
/// plane collects its own garbage; a plane that fills with live data can free nothing.)
pub fn run_plane(live_pages: &[u64]) -> usize {
    (0..live_pages.len()).min_by_key(|&p| (live_pages[p], p)).unwrap_or(0)
}

/// Sectors `first..first + n` of a page's data (the whole content identity in
/// fingerprint mode).
fn sector_slice(data: &PageData, first: u32, n: u32) -> PageData {
    match data {
        PageData::Bytes(bytes) => {
            let s = nvmdb_device::flash::SECTOR_BYTES as usize;
            PageData::Bytes(bytes[first as usize * s..(first + n) as usize * s].to_vec())
        }
        other => other.clone(),
    }
}

impl PageStore for PageFtl {
    fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    fn page_bytes(&self) -> u32 {
        self.geometry.page_bytes
    }

    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        let lpn = self.check_lpn(lpn)?;
        self.stats.host_page_writes += 1;
        let Some(dedup) = &mut self.dedup else {
            return self.write_new(lpn, &data, now_ns);
        };
        let Some(fingerprint) = Dedup::fingerprint(&data) else {
            return self.write_new(lpn, &data, now_ns);
        };
        let (found, lookup_ns) = dedup.lookup(&fingerprint);
        let now_ns = now_ns + lookup_ns;
        match found {
            Some(ppn) => {
                self.stats.dedup_pages_removed += 1;
                if self.l2p[lpn as usize] != ppn {
                    // The hit is durable once the page's share-map slot names the shared
                    // page by its own write (logical page and sequence number).
                    let (owner, owner_seq) = self
                        .flash
                        .spare(u64::from(ppn))
                        .and_then(parse_oob)
                        .expect("a stored page has its out-of-band record");
                    let seq = self.next_write_seq();
                    let mut pcm_ns = self.unmap(lpn)?;
                    self.map(lpn, ppn, seq);
                    let dedup = self.dedup.as_mut().expect("dedup is on");
                    pcm_ns += dedup.set_share(&mut self.power, lpn, Share { owner, owner_seq, seq })?;
                    return Ok(now_ns + pcm_ns);
                }
                Ok(now_ns)
            }
            None => {
                let done_ns = self.write_new(lpn, &data, now_ns)?;
                let ppn = self.l2p[lpn as usize];
                let dedup = self.dedup.as_mut().expect("dedup is on");
                let insert_ns = dedup.insert(&mut self.power, fingerprint, ppn)?;
                Ok(done_ns.max(now_ns + insert_ns))
            }
        }
    }

    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let lpn = self.check_lpn(lpn)?;
        self.stats.host_page_reads += 1;
        let ppn = self.l2p[lpn as usize];
        if ppn == UNMAPPED {
            // The trace's data is taken to predate it: the read costs a flash read on the
            // plane the page stripes to, and returns nothing.
            let plane_first_page = u64::from(lpn) % self.geometry.planes() * u64::from(self.geometry.pages_per_block);
            let (_, timing) = self.flash.read_page(plane_first_page, now_ns)?;
            return Ok((PageData::Empty, timing.end_ns));
        }
        let (data, timing) = self.flash.read_page(u64::from(ppn), now_ns)?;
        Ok((data, timing.end_ns))
    }

    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let lpn = self.check_lpn(lpn)?;
        self.stats.host_page_trims += 1;
        if self.l2p[lpn as usize] == UNMAPPED {
            return Ok(now_ns);
        }
        // A trim record, newer than every copy of the page, makes the trim durable.
        let plane = self.make_room(now_ns)?;
        let seq = self.next_write_seq();
        let data = self.trim_record_data();
        let (ppn, done_ns) = self.program(plane, lpn | TRIM_BIT, seq, &data, now_ns)?;
        let pcm_ns = self.unmap(lpn)?;
        self.p2l[ppn as usize] = lpn | TRIM_BIT;
        self.trims.insert(lpn, ppn);
        Ok(done_ns.max(now_ns + pcm_ns))
    }

    fn stats(&self) -> StoreStats {
        let mut stats = self.stats.with_flash(&self.flash);
        if let Some(dedup) = &self.dedup {
            dedup.add_stats(&mut stats);
        }
        stats
    }

    fn reset_stats(&mut self) {
        self.stats = StoreStats::default();
        self.flash.reset_stats();
        if let Some(dedup) = &mut self.dedup {
            dedup.reset_stats();
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        let ppb = self.geometry.pages_per_block as usize;
        let mut refs = vec![0u32; self.p2l.len()];
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn == UNMAPPED {
                continue;
            }
            refs[ppn as usize] += 1;
            let owner = self.p2l[ppn as usize];
            let listed = owner == lpn as u32 || self.extra_owners.get(&ppn).is_some_and(|o| o.contains(&(lpn as u32)));
            if !listed {
                return Err(format!("logical page {lpn} maps to physical page {ppn}, which does not list it"));
            }
        }
        let mut trim_records = vec![false; self.p2l.len()];
        for (&lpn, &ppn) in &self.trims {
            if self.l2p[lpn as usize] != UNMAPPED || self.p2l[ppn as usize] != lpn | TRIM_BIT {
                return Err(format!("trim record of logical page {lpn} at {ppn} disagrees with the mapping"));
            }
            trim_records[ppn as usize] = true;
        }
        for (block, meta) in self.blocks.iter().enumerate() {
            let pages = block * ppb..(block + 1) * ppb;
            let live = pages.filter(|&p| refs[p] > 0 || trim_records[p]).count() as u32;
            if live != meta.valid_pages {
                return Err(format!("block {block}: valid count {} but {live} live pages", meta.valid_pages));
            }
        }
        for (plane, &valid) in self.plane_valid.iter().enumerate() {
            let sum: u64 = (plane..self.blocks.len())
                .step_by(self.planes.len())
                .map(|b| u64::from(self.blocks[b].valid_pages))
                .sum();
            if sum != valid {
                return Err(format!("plane {plane}: {valid} valid pages counted but its blocks hold {sum}"));
            }
            // Every closed block of the plane is filed once, under its valid count.
            let closed = (plane..self.blocks.len())
                .step_by(self.planes.len())
                .filter(|&b| self.blocks[b].state == BlockState::Closed)
                .count();
            let mut filed = 0;
            for count in 0..=self.geometry.pages_per_block {
                for block in self.by_valid.blocks(plane, count) {
                    let meta = &self.blocks[block as usize];
                    if meta.state != BlockState::Closed || meta.valid_pages != count || self.plane_of(block) != plane {
                        return Err(format!("block {block} filed under {count} valid pages of plane {plane}"));
                    }
                    filed += 1;
                    if filed > closed {
                        return Err(format!("plane {plane}: more blocks filed by valid count than closed"));
                    }
                }
            }
            if filed != closed {
                return Err(format!("plane {plane}: {filed} blocks filed by valid count but {closed} closed"));
            }
        }
        for (ppn, &r) in refs.iter().enumerate() {
            if (r == 0) != (self.p2l[ppn] == UNMAPPED || trim_records[ppn]) {
                return Err(format!("physical page {ppn}: {r} mappings but p2l says {}", self.p2l[ppn]));
            }
            if self.dedup.is_some() && self.refs[ppn] != r {
                return Err(format!("physical page {ppn}: reference count {} but {r} mappings", self.refs[ppn]));
            }
        }
        let mapped = self.l2p.iter().filter(|&&p| p != UNMAPPED).count() as u64;
        if mapped != self.mapped_pages {
            return Err(format!("{} mapped pages counted but {mapped} mapped", self.mapped_pages));
        }
        match &self.dedup {
            Some(dedup) => dedup.check(|ppn| refs[ppn as usize] > 0),
            None => Ok(()),
        }
    }

    /// Recovery rules: each programmed page's spare area names its logical page and write
    /// sequence number (a trim record, a page written for a trim, names it with a flag).
    /// The newest record of each logical page wins: a data copy is mapped, a trim record
    /// leaves the page unmapped and stays live until the page is written again (GC copies
    /// it). Every other programmed page is garbage. A page and its GC copy share a sequence
    /// number; the one with more programmed sectors wins (a partial copy cut short is
    /// torn). A write's old copy stays live while GC makes room for the new one, so no
    /// erase can take a page's last durable copy before its replacement is programmed.
    fn power_cycle(&mut self) -> Result<(), FlashError> {
        with_activity(self, nvmdb_device::Activity::Recovery, PageFtl::recover)
    }

    fn power_switch(&mut self) -> Option<&mut PowerSwitch> {
        Some(&mut self.power)
    }

    fn health(&self) -> StoreHealth {
        StoreHealth {
            blocks: self.geometry.blocks(),
            endurance: self.geometry.endurance,
            block_erases_total: self.flash.erase_counts().sum(),
            block_erases_max: self.flash.erase_counts().max().unwrap_or(0),
            mapped_pages: self.mapped_pages,
            live_physical_pages: self.live_physical_pages,
        }
    }
}

#[cfg(test)]
mod tests;
