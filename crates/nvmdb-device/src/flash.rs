//! A NAND flash array: packages × planes × blocks × pages, with per-plane `busy_until`
//! time, per-block erase counts, endurance, optional 512 B partial-page programming, and
//! three page-content modes.
//!
//! Rules enforced as errors, never silent overwrites: a page is programmed only when
//! erased, pages of a block are programmed in order, and a block that has reached its
//! endurance can no longer be programmed or erased.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::DeviceError;
use crate::index;
use crate::params::FlashTiming;

/// A physical page number: `block * pages_per_block + page`.
pub type Ppn = u64;

/// Bytes per partial-programming sector.
pub const SECTOR_BYTES: u32 = 512;

/// Spare bytes per page the array stores (the rest of the spare area is not modelled):
/// enough for an FTL's logical address and sequence number.
pub const SPARE_STORED_BYTES: usize = 16;

/// Spare bytes a 512 B sector keeps of its own when it is programmed partially (its share
/// of the page's spare area, programmed with it): enough for a log record's header.
pub const SECTOR_SPARE_BYTES: usize = 16;

/// What a partially programmed sector holds of its own, besides the page's data: its
/// content identity (in fingerprint mode a page keeps one identity, a sector one of its
/// own) and its spare bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectorTag {
    /// The sector's content identity.
    pub fingerprint: u64,
    /// The sector's spare bytes (unprogrammed bytes read `0xFF`).
    pub spare: [u8; SECTOR_SPARE_BYTES],
}

/// Flash geometry and behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlashGeometry {
    /// Packages (chips).
    pub packages: u32,
    /// Planes per package; planes work in parallel.
    pub planes_per_package: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Data bytes per page.
    pub page_bytes: u32,
    /// Spare (out-of-band) bytes per page.
    pub spare_bytes: u32,
    /// Erases a block survives.
    pub endurance: u64,
    /// Whether 512 B sectors of a page may be programmed separately.
    pub partial_programming: bool,
}

impl FlashGeometry {
    /// Thesis Table 5.1's SSD (seed 000): 4 KB pages, 64-page (256 KB) blocks; 8 packages
    /// of 2 planes of 256 blocks (1 GiB), 10^5-cycle blocks.
    pub const THESIS_SSD: FlashGeometry = FlashGeometry {
        packages: 8,
        planes_per_package: 2,
        blocks_per_plane: 256,
        pages_per_block: 64,
        page_bytes: 4096,
        spare_bytes: 128,
        endurance: 100_000,
        partial_programming: false,
    };

    /// Total planes.
    pub fn planes(&self) -> u64 {
        u64::from(self.packages) * u64::from(self.planes_per_package)
    }
    /// Total blocks.
    pub fn blocks(&self) -> u64 {
        // Saturating: a geometry too large for u64 must fail validation, not wrap into a
        // small one that passes.
        self.planes().saturating_mul(u64::from(self.blocks_per_plane))
    }
    /// Total pages (saturating, as `blocks`).
    pub fn pages(&self) -> u64 {
        self.blocks().saturating_mul(u64::from(self.pages_per_block))
    }
    /// Sectors per page.
    pub fn sectors_per_page(&self) -> u32 {
        self.page_bytes / SECTOR_BYTES
    }
    /// Bytes of all data pages.
    pub fn capacity_bytes(&self) -> u64 {
        self.pages() * u64::from(self.page_bytes)
    }
    /// The block holding a page.
    pub fn block_of(&self, ppn: Ppn) -> u64 {
        ppn / u64::from(self.pages_per_block)
    }
    /// The plane holding a block. Consecutive blocks go to consecutive planes, so that
    /// sequential allocation spreads over planes.
    pub fn plane_of_block(&self, block: u64) -> u64 {
        block % self.planes()
    }

    fn validate(&self) -> Result<(), DeviceError> {
        let fields = [
            ("packages", self.packages),
            ("planes_per_package", self.planes_per_package),
            ("blocks_per_plane", self.blocks_per_plane),
            ("pages_per_block", self.pages_per_block),
            ("page_bytes", self.page_bytes),
        ];
        if let Some((name, _)) = fields.iter().find(|(_, v)| *v == 0) {
            return Err(DeviceError::Config(format!("flash.{name} must be positive")));
        }
        if self.partial_programming && (!self.page_bytes.is_multiple_of(SECTOR_BYTES) || self.sectors_per_page() > 64) {
            return Err(DeviceError::Config(format!(
                "partial programming needs a page of 1 to 64 whole 512 B sectors, not {} bytes",
                self.page_bytes
            )));
        }
        if self.endurance == 0 {
            return Err(DeviceError::Config("flash.endurance must be positive".into()));
        }
        // blocks(), pages() and capacity_bytes() multiply the fields; none may overflow.
        let capacity = [self.blocks_per_plane, self.pages_per_block, self.page_bytes]
            .into_iter()
            .try_fold(self.planes(), |product, field| product.checked_mul(u64::from(field)));
        if capacity.is_none() {
            return Err(DeviceError::Config("flash geometry holds more than 2^64 bytes".into()));
        }
        Ok(())
    }
}

/// What a flash array stores of each page's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageContent {
    /// The real bytes.
    Bytes,
    /// A 64-bit content identity, for very large replays.
    Fingerprint,
    /// Nothing: metadata-only simulation.
    None,
}

/// Data carried into or out of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageData {
    /// Real bytes (a whole page, or a sector run for partial programming).
    Bytes(Vec<u8>),
    /// A content identity.
    Fingerprint(u64),
    /// No content (metadata-only mode), or an erased page.
    Empty,
}

/// When an operation ran on its plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OpTiming {
    /// When the plane started it, ns.
    pub start_ns: u64,
    /// When it completed, ns.
    pub end_ns: u64,
}

/// Flash counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlashStats {
    /// Page reads.
    pub page_reads: u64,
    /// Whole-page programs.
    pub page_programs: u64,
    /// Partial programs (each of one or more 512 B sectors).
    pub sector_programs: u64,
    /// Sectors written by partial programs.
    pub sectors_programmed: u64,
    /// Block erases.
    pub block_erases: u64,
    /// Energy, pJ.
    pub energy_pj: u64,
    /// Sum of operation service times over all planes, ns.
    pub busy_ns: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct BlockState {
    next_page: u32,
    erase_count: u64,
}

/// A NAND flash array.
#[derive(Debug)]
pub struct FlashArray {
    geometry: FlashGeometry,
    timing: FlashTiming,
    content: PageContent,
    blocks: Vec<BlockState>,
    plane_busy_until_ns: Vec<u64>,
    /// Programmed-sector masks of partially programmed pages (partial mode only).
    sector_masks: HashMap<Ppn, u64>,
    bytes: HashMap<Ppn, Vec<u8>>,
    fingerprints: HashMap<Ppn, u64>,
    /// Spare (out-of-band) bytes of programmed pages, in every content mode.
    spare: HashMap<Ppn, [u8; SPARE_STORED_BYTES]>,
    /// Tags of partially programmed sectors (see [`FlashArray::program_sectors_tagged`]),
    /// one slot per sector of the page.
    sector_tags: HashMap<Ppn, Vec<Option<SectorTag>>>,
    stats: FlashStats,
}

impl FlashArray {
    /// Creates an array with every block erased.
    pub fn new(geometry: FlashGeometry, timing: FlashTiming, content: PageContent) -> Result<FlashArray, DeviceError> {
        geometry.validate()?;
        Ok(FlashArray {
            geometry,
            timing,
            content,
            blocks: vec![BlockState::default(); index(geometry.blocks())],
            plane_busy_until_ns: vec![0; index(geometry.planes())],
            sector_masks: HashMap::new(),
            bytes: HashMap::new(),
            fingerprints: HashMap::new(),
            spare: HashMap::new(),
            sector_tags: HashMap::new(),
            stats: FlashStats::default(),
        })
    }

    /// The geometry.
    pub fn geometry(&self) -> &FlashGeometry {
        &self.geometry
    }
    /// The timing preset.
    pub fn timing(&self) -> &FlashTiming {
        &self.timing
    }
    /// The content mode.
    pub fn content_mode(&self) -> PageContent {
        self.content
    }
    /// The counters.
    pub fn stats(&self) -> &FlashStats {
        &self.stats
    }
    /// Zeroes the counters (erase counts are physical and stay).
    pub fn reset_stats(&mut self) {
        self.stats = FlashStats::default();
    }
    /// Erases a block has had.
    pub fn erase_count(&self, block: u64) -> u64 {
        self.blocks[index(block)].erase_count
    }
    /// Erase counts of all blocks.
    pub fn erase_counts(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks.iter().map(|b| b.erase_count)
    }
    /// The next page a block accepts (pages below it are programmed).
    pub fn write_pointer(&self, block: u64) -> u32 {
        self.blocks[index(block)].next_page
    }
    /// The programmed-sector mask of a page opened by partial programming (`None` for a
    /// page programmed whole, or not programmed).
    pub fn sector_mask(&self, ppn: Ppn) -> Option<u64> {
        self.sector_masks.get(&ppn).copied()
    }
    /// When a plane is next free, ns.
    pub fn plane_busy_until_ns(&self, plane: u64) -> u64 {
        self.plane_busy_until_ns[index(plane)]
    }
    /// When every plane is free, ns.
    pub fn all_idle_at_ns(&self) -> u64 {
        self.plane_busy_until_ns.iter().copied().max().unwrap_or(0)
    }

    fn check_ppn(&self, ppn: Ppn) -> Result<(), DeviceError> {
        if ppn >= self.geometry.pages() {
            return Err(DeviceError::OutOfRange { addr: ppn, len: 1, capacity: self.geometry.pages() });
        }
        Ok(())
    }

    fn check_block(&self, block: u64) -> Result<(), DeviceError> {
        if block >= self.geometry.blocks() {
            return Err(DeviceError::OutOfRange { addr: block, len: 1, capacity: self.geometry.blocks() });
        }
        let state = self.blocks[index(block)];
        if state.erase_count >= self.geometry.endurance {
            return Err(DeviceError::WornOut { block, erases: state.erase_count, endurance: self.geometry.endurance });
        }
        Ok(())
    }

    fn occupy(&mut self, block: u64, now_ns: u64, service_ns: u64, energy_pj: u64) -> OpTiming {
        let plane = index(self.geometry.plane_of_block(block));
        let start_ns = now_ns.max(self.plane_busy_until_ns[plane]);
        let end_ns = start_ns + service_ns;
        self.plane_busy_until_ns[plane] = end_ns;
        self.stats.busy_ns += service_ns;
        self.stats.energy_pj += energy_pj;
        OpTiming { start_ns, end_ns }
    }

    fn page_index(&self, ppn: Ppn) -> u32 {
        u32::try_from(ppn % u64::from(self.geometry.pages_per_block)).expect("a remainder below a u32 fits u32")
    }

    /// Reads a page issued at `now_ns`. An erased page reads as `Empty` (fingerprint and
    /// metadata modes) or all `0xFF` bytes.
    pub fn read_page(&mut self, ppn: Ppn, now_ns: u64) -> Result<(PageData, OpTiming), DeviceError> {
        self.check_ppn(ppn)?;
        self.stats.page_reads += 1;
        let timing = self.occupy(self.geometry.block_of(ppn), now_ns, self.timing.read_ns, self.timing.read_pj);
        let data = match self.content {
            PageContent::Bytes => PageData::Bytes(
                self.bytes.get(&ppn).cloned().unwrap_or_else(|| vec![0xFF; self.geometry.page_bytes as usize]),
            ),
            PageContent::Fingerprint => {
                self.fingerprints.get(&ppn).map_or(PageData::Empty, |&f| PageData::Fingerprint(f))
            }
            PageContent::None => PageData::Empty,
        };
        Ok((data, timing))
    }

    /// Programs a whole page issued at `now_ns`.
    pub fn program_page(&mut self, ppn: Ppn, data: &PageData, now_ns: u64) -> Result<OpTiming, DeviceError> {
        self.program_page_with_spare(ppn, data, &[], now_ns)
    }

    /// Programs a whole page and the first `spare.len()` bytes of its spare area (an FTL's
    /// out-of-band metadata) in the same operation.
    pub fn program_page_with_spare(
        &mut self,
        ppn: Ppn,
        data: &PageData,
        spare: &[u8],
        now_ns: u64,
    ) -> Result<OpTiming, DeviceError> {
        self.check_spare(ppn, spare)?;
        self.check_ppn(ppn)?;
        let block = self.geometry.block_of(ppn);
        self.check_block(block)?;
        let page = self.page_index(ppn);
        let expected = self.blocks[index(block)].next_page;
        if page < expected {
            return Err(DeviceError::ProgramNotErased { ppn });
        }
        if page > expected {
            return Err(DeviceError::ProgramOutOfOrder { ppn, block, expected });
        }
        self.store(ppn, 0, data)?;
        self.store_spare(ppn, spare);
        self.blocks[index(block)].next_page = page + 1;
        self.stats.page_programs += 1;
        Ok(self.occupy(block, now_ns, self.timing.program_ns, self.timing.program_pj))
    }

    /// Programs sectors `first..first + n` of a page (partial-page programming). The page
    /// must be the block's next page or one opened by an earlier partial program, and the
    /// sectors erased.
    /// Time and energy are charged per sector as a fraction of a page program.
    pub fn program_sectors(
        &mut self,
        ppn: Ppn,
        first: u32,
        data: &PageData,
        sectors: u32,
        now_ns: u64,
    ) -> Result<OpTiming, DeviceError> {
        self.program_sectors_with_spare(ppn, first, data, sectors, &[], now_ns)
    }

    /// [`FlashArray::program_sectors`], also programming the first `spare.len()` bytes of
    /// the page's spare area, which must still be erased (the page's first program).
    pub fn program_sectors_with_spare(
        &mut self,
        ppn: Ppn,
        first: u32,
        data: &PageData,
        sectors: u32,
        spare: &[u8],
        now_ns: u64,
    ) -> Result<OpTiming, DeviceError> {
        self.check_spare(ppn, spare)?;
        if !spare.is_empty() && self.spare.contains_key(&ppn) {
            return Err(DeviceError::ProgramNotErased { ppn });
        }
        if !self.geometry.partial_programming {
            return Err(DeviceError::PartialProgramDisabled);
        }
        self.check_ppn(ppn)?;
        let per_page = self.geometry.sectors_per_page();
        if sectors == 0 || first + sectors > per_page {
            return Err(DeviceError::BadSectorRange { first, end: first + sectors, sectors: per_page });
        }
        let block = self.geometry.block_of(ppn);
        self.check_block(block)?;
        let page = self.page_index(ppn);
        let next = self.blocks[index(block)].next_page;
        let mask = ((1u64 << sectors) - 1) << first;
        let current = self.sector_masks.get(&ppn).copied().unwrap_or(0);
        // A page opened by a partial program takes more partial programs into its erased
        // sectors later, even after later pages of its block were programmed (SLC NOP);
        // a page's first program still follows the block's page order.
        let opened_partially = page < next && current != 0;
        if page > next {
            return Err(DeviceError::ProgramOutOfOrder { ppn, block, expected: next });
        }
        if page < next && !opened_partially {
            return Err(if page + 1 < next {
                DeviceError::ProgramOutOfOrder { ppn, block, expected: next - 1 }
            } else {
                DeviceError::ProgramNotErased { ppn }
            });
        }
        if current & mask != 0 {
            return Err(DeviceError::ProgramNotErased { ppn });
        }
        self.store(ppn, first, data)?;
        self.store_spare(ppn, spare);
        self.sector_masks.insert(ppn, current | mask);
        self.blocks[index(block)].next_page = next.max(page + 1);
        self.stats.sector_programs += 1;
        self.stats.sectors_programmed += u64::from(sectors);
        let service_ns = self.timing.program_ns * u64::from(sectors) / u64::from(per_page);
        let energy_pj = self.timing.program_pj * u64::from(sectors) / u64::from(per_page);
        Ok(self.occupy(block, now_ns, service_ns, energy_pj))
    }

    /// [`FlashArray::program_sectors_with_spare`], also giving each programmed sector a tag
    /// of its own (`tags[i]` for sector `first + i`): its content identity and its share of
    /// the spare area, which a recovery reads back with [`FlashArray::sector_tag`].
    pub fn program_sectors_tagged(
        &mut self,
        ppn: Ppn,
        first: u32,
        data: &PageData,
        tags: &[SectorTag],
        spare: &[u8],
        now_ns: u64,
    ) -> Result<OpTiming, DeviceError> {
        let sectors = u32::try_from(tags.len()).unwrap_or(u32::MAX);
        let per_page = self.geometry.sectors_per_page();
        let room = (self.geometry.spare_bytes / per_page.max(1)) as usize;
        if room < SECTOR_SPARE_BYTES {
            return Err(DeviceError::BadPageSize { ppn, got: SECTOR_SPARE_BYTES, expected: room });
        }
        let timing = self.program_sectors_with_spare(ppn, first, data, sectors, spare, now_ns)?;
        let slots = self.sector_tags.entry(ppn).or_insert_with(|| vec![None; per_page as usize]);
        for (slot, tag) in slots[first as usize..].iter_mut().zip(tags) {
            *slot = Some(*tag);
        }
        Ok(timing)
    }

    /// The tag of a sector programmed by [`FlashArray::program_sectors_tagged`] (`None` when
    /// the sector is erased or was programmed without one). Like [`FlashArray::spare`], it is
    /// read with the page.
    pub fn sector_tag(&self, ppn: Ppn, sector: u32) -> Option<&SectorTag> {
        self.sector_tags.get(&ppn)?.get(sector as usize)?.as_ref()
    }

    fn check_spare(&self, ppn: Ppn, spare: &[u8]) -> Result<(), DeviceError> {
        let room = (self.geometry.spare_bytes as usize).min(SPARE_STORED_BYTES);
        if spare.len() > room {
            return Err(DeviceError::BadPageSize { ppn, got: spare.len(), expected: room });
        }
        Ok(())
    }

    fn store_spare(&mut self, ppn: Ppn, spare: &[u8]) {
        if !spare.is_empty() {
            let mut stored = [0xFF; SPARE_STORED_BYTES];
            stored[..spare.len()].copy_from_slice(spare);
            self.spare.insert(ppn, stored);
        }
    }

    /// The first [`SPARE_STORED_BYTES`] spare bytes of a page (`None` when its spare area
    /// is erased; unprogrammed bytes read `0xFF`). Reading the spare area is part of a page
    /// read; a recovery scan reads it for free here.
    pub fn spare(&self, ppn: Ppn) -> Option<&[u8]> {
        self.spare.get(&ppn).map(|s| s.as_slice())
    }

    fn store(&mut self, ppn: Ppn, first_sector: u32, data: &PageData) -> Result<(), DeviceError> {
        match (self.content, data) {
            (PageContent::Bytes, PageData::Bytes(bytes)) => {
                let page_bytes = self.geometry.page_bytes as usize;
                let offset = (first_sector * SECTOR_BYTES) as usize;
                let whole = first_sector == 0 && bytes.len() == page_bytes;
                if !whole && (offset + bytes.len() > page_bytes || bytes.len() % SECTOR_BYTES as usize != 0) {
                    return Err(DeviceError::BadPageSize { ppn, got: bytes.len(), expected: page_bytes });
                }
                let page = self.bytes.entry(ppn).or_insert_with(|| vec![0xFF; page_bytes]);
                page[offset..offset + bytes.len()].copy_from_slice(bytes);
            }
            (PageContent::Bytes, _) => {
                return Err(DeviceError::Config(
                    "this flash array stores bytes; program it with PageData::Bytes".into(),
                ))
            }
            (PageContent::Fingerprint, PageData::Fingerprint(f)) => {
                self.fingerprints.insert(ppn, *f);
            }
            (PageContent::Fingerprint, PageData::Bytes(bytes)) => {
                self.fingerprints.insert(ppn, fingerprint64(bytes));
            }
            (PageContent::Fingerprint, PageData::Empty) | (PageContent::None, _) => {}
        }
        Ok(())
    }

    /// Erases a block issued at `now_ns`.
    pub fn erase_block(&mut self, block: u64, now_ns: u64) -> Result<OpTiming, DeviceError> {
        self.check_block(block)?;
        let pages = u64::from(self.geometry.pages_per_block);
        let state = &mut self.blocks[index(block)];
        let programmed = u64::from(state.next_page);
        state.next_page = 0;
        state.erase_count += 1;
        // Only the maps this array's modes fill hold anything to drop.
        let range = block * pages..block * pages + programmed;
        for ppn in range {
            self.spare.remove(&ppn);
            match self.content {
                PageContent::Bytes => {
                    self.bytes.remove(&ppn);
                }
                PageContent::Fingerprint => {
                    self.fingerprints.remove(&ppn);
                }
                PageContent::None => {}
            }
            if self.geometry.partial_programming {
                self.sector_masks.remove(&ppn);
                self.sector_tags.remove(&ppn);
            }
        }
        self.stats.block_erases += 1;
        Ok(self.occupy(block, now_ns, self.timing.erase_ns, self.timing.erase_pj))
    }
}

/// FNV-1a 64-bit content identity of a byte string.
pub fn fingerprint64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}
