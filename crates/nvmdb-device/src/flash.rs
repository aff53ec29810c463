//! A NAND flash array: packages × planes × blocks × pages, with per-plane `busy_until`
//! time, per-block erase counts, endurance, optional 512 B partial-page programming, and
//! three page-content modes.
//!
//! Rules enforced as errors, never silent overwrites: a page is programmed only when
//! erased, pages of a block are programmed in order, and a block that has reached its
//! endurance can no longer be programmed or erased.
//!
//! Because pages are programmed in order, the pages of a block below its write pointer
//! are exactly its programmed pages. Their state (spare bytes, sector masks, content
//! identities, bytes) lives in one flat arena per block, indexed by page, allocated when
//! the block is first programmed and kept across erases: a program or an erase touches
//! no hash map and allocates nothing once the block has been used, and an erase only
//! resets the write pointer (a page's state is cleared when it is next opened).

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
    #[inline]
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
    /// The block holding a page (a shift when pages per block is a power of two: the
    /// same result without a division, on every FTL and flash-array path).
    #[inline]
    pub fn block_of(&self, ppn: Ppn) -> u64 {
        let per_block = u64::from(self.pages_per_block);
        if per_block.is_power_of_two() {
            ppn >> per_block.trailing_zeros()
        } else {
            ppn / per_block
        }
    }
    /// The plane holding a block. Consecutive blocks go to consecutive planes, so that
    /// sequential allocation spreads over planes. (A mask when the planes are a power of
    /// two, as [`FlashGeometry::block_of`].)
    #[inline]
    pub fn plane_of_block(&self, block: u64) -> u64 {
        let planes = self.planes();
        if planes.is_power_of_two() {
            block & (planes - 1)
        } else {
            block % planes
        }
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

/// A page's flag in [`BlockArena::flags`]: its spare bytes are programmed.
const HAS_SPARE: u8 = 1;
/// A page's flag in [`BlockArena::flags`]: it has a content identity (fingerprint mode).
const HAS_FINGERPRINT: u8 = 2;

/// The per-page state of one block, indexed by page, each kind of state in an array of
/// its own, so that a page's program or copy touches only the bytes its content mode
/// keeps (a metadata-only page: its 16 spare bytes and a flag byte). A page's entries
/// are meaningful only below its block's write pointer, and cleared when the page is
/// opened by its first program after an erase.
#[derive(Clone)]
struct BlockArena {
    /// Each page's stored spare bytes (valid when its flags have [`HAS_SPARE`]).
    spares: Box<[[u8; SPARE_STORED_BYTES]]>,
    /// Each page's flags: [`HAS_SPARE`], [`HAS_FINGERPRINT`].
    flags: Box<[u8]>,
    /// Each page's content identity (fingerprint mode only; empty otherwise).
    fingerprints: Box<[u64]>,
    /// Programmed sectors of each page opened by partial programming, 0 for a page
    /// programmed whole (arrays with partial programming only; empty otherwise).
    masks: Box<[u64]>,
    /// The block's page bytes, page after page (bytes mode only; empty otherwise).
    bytes: Box<[u8]>,
    /// Tags of partially programmed sectors, page after page (one slot per sector),
    /// allocated at the block's first tagged program (see
    /// [`FlashArray::program_sectors_tagged`]); a page's slots are cleared when it is
    /// opened.
    tags: Vec<Option<SectorTag>>,
}

impl BlockArena {
    /// The sector mask of page `page` (0 for a page programmed whole).
    #[inline]
    fn mask(&self, page: usize) -> u64 {
        self.masks.get(page).copied().unwrap_or(0)
    }

    /// Clears page `page`'s state: the page is opened by its first program since an erase.
    #[inline(always)]
    fn open(&mut self, page: usize) {
        self.flags[page] = 0;
        self.spares[page] = [0xFF; SPARE_STORED_BYTES];
        if let Some(f) = self.fingerprints.get_mut(page) {
            *f = 0;
        }
        if let Some(m) = self.masks.get_mut(page) {
            *m = 0;
        }
        if !self.tags.is_empty() {
            let per_page = self.tags.len() / self.flags.len();
            self.tags[page * per_page..(page + 1) * per_page].fill(None);
        }
    }
}

impl std::fmt::Debug for BlockArena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockArena").field("pages", &self.flags.len()).field("bytes", &self.bytes.len()).finish()
    }
}

#[derive(Debug, Clone, Default)]
struct BlockState {
    next_page: u32,
    erase_count: u64,
    /// Allocated at the block's first program, kept across erases.
    arena: Option<Box<BlockArena>>,
}

/// A NAND flash array. A clone is the array in the same state: pages, erase counts,
/// plane times and counters.
#[derive(Debug, Clone)]
pub struct FlashArray {
    geometry: FlashGeometry,
    timing: FlashTiming,
    content: PageContent,
    blocks: Vec<BlockState>,
    plane_busy_until_ns: Vec<u64>,
    /// `geometry.pages()` and `geometry.blocks()`, computed once.
    pages: u64,
    block_count: u64,
    /// `log2(pages_per_block)` when it is a power of two (a page's block is then a shift).
    page_shift: Option<u32>,
    /// `planes - 1` when the planes are a power of two (a block's plane is then a mask).
    plane_mask: Option<u64>,
    stats: FlashStats,
    /// Read suspend: `Some(ns)` lets a read issued while its plane is busy suspend the
    /// operation in progress, taking `ns` to suspend and resume; `None` (the default)
    /// queues the read behind it.
    read_suspend_ns: Option<u64>,
}

impl FlashArray {
    /// Creates an array with every block erased.
    pub fn new(geometry: FlashGeometry, timing: FlashTiming, content: PageContent) -> Result<FlashArray, DeviceError> {
        geometry.validate()?;
        Ok(FlashArray {
            geometry,
            timing,
            content,
            blocks: std::iter::repeat_with(BlockState::default).take(index(geometry.blocks())).collect(),
            plane_busy_until_ns: vec![0; index(geometry.planes())],
            pages: geometry.pages(),
            block_count: geometry.blocks(),
            page_shift: geometry.pages_per_block.is_power_of_two().then(|| geometry.pages_per_block.trailing_zeros()),
            plane_mask: geometry.planes().is_power_of_two().then(|| geometry.planes() - 1),
            stats: FlashStats::default(),
            read_suspend_ns: None,
        })
    }

    /// Host memory an array of `geometry` keeping `content` takes once every block has
    /// been programmed, bytes: the most it holds, as each block's arena is allocated at its
    /// first program and kept across erases. Per block its state and arena; per page the
    /// stored spare bytes and flag, and by mode the page's bytes, its fingerprint or (with
    /// partial programming) its sector mask; with `tagged` (sector programs that carry
    /// tags) a tag slot per sector; per plane its busy time.
    pub fn host_bytes_bound(geometry: &FlashGeometry, content: PageContent, tagged: bool) -> u64 {
        let size = |bytes: usize| bytes as u64;
        let mut per_page = size(SPARE_STORED_BYTES) + 1;
        per_page += match content {
            PageContent::Bytes => u64::from(geometry.page_bytes),
            PageContent::Fingerprint => 8,
            PageContent::None => 0,
        };
        if geometry.partial_programming {
            per_page += 8;
        }
        if tagged {
            per_page += u64::from(geometry.sectors_per_page()) * size(std::mem::size_of::<Option<SectorTag>>());
        }
        let per_block = size(std::mem::size_of::<BlockState>() + std::mem::size_of::<BlockArena>())
            .saturating_add(u64::from(geometry.pages_per_block).saturating_mul(per_page));
        geometry.blocks().saturating_mul(per_block).saturating_add(geometry.planes().saturating_mul(8))
    }

    /// Switches read suspend on (`Some(ns)`: a read issued while its plane is busy starts
    /// after `ns` to suspend the operation in progress, which finishes later by that and
    /// the read) or off (`None`, the default: the read waits for the plane).
    #[inline]
    pub fn set_read_suspend(&mut self, suspend_ns: Option<u64>) {
        self.read_suspend_ns = suspend_ns;
    }
    /// The read suspend setting (see [`FlashArray::set_read_suspend`]).
    #[inline]
    pub fn read_suspend_ns(&self) -> Option<u64> {
        self.read_suspend_ns
    }

    /// The geometry.
    #[inline]
    pub fn geometry(&self) -> &FlashGeometry {
        &self.geometry
    }
    /// The timing preset.
    #[inline]
    pub fn timing(&self) -> &FlashTiming {
        &self.timing
    }
    /// Gives the array another timing and groups its blocks into `packages` × `planes_per_package`
    /// planes (block `b` in plane `b` mod planes, as always): the pages, their contents,
    /// erase counts and counters stay, and every plane is free from when the busiest one of
    /// before was. What the array would be had it been built with this timing and these
    /// planes and run the same operations, for a caller whose operations do not depend on
    /// time (eNVy's sensitivity runs, which copy one aged array). Fails, changing nothing,
    /// when the blocks do not divide evenly into the planes.
    pub fn retime(&mut self, timing: FlashTiming, packages: u32, planes_per_package: u32) -> Result<(), DeviceError> {
        let planes = u64::from(packages) * u64::from(planes_per_package);
        let blocks = self.geometry.blocks();
        if planes == 0 || !blocks.is_multiple_of(planes) {
            return Err(DeviceError::Config(format!("{blocks} blocks do not divide into {planes} planes")));
        }
        let geometry = FlashGeometry {
            packages,
            planes_per_package,
            blocks_per_plane: u32::try_from(blocks / planes).expect("a quotient of a valid geometry's blocks"),
            ..self.geometry
        };
        geometry.validate()?;
        let free_ns = self.all_idle_at_ns();
        self.geometry = geometry;
        self.timing = timing;
        self.plane_busy_until_ns = vec![free_ns; index(planes)];
        self.plane_mask = planes.is_power_of_two().then(|| planes - 1);
        Ok(())
    }
    /// The content mode.
    #[inline]
    pub fn content_mode(&self) -> PageContent {
        self.content
    }
    /// The counters.
    #[inline]
    pub fn stats(&self) -> &FlashStats {
        &self.stats
    }
    /// Zeroes the counters (erase counts are physical and stay).
    pub fn reset_stats(&mut self) {
        self.stats = FlashStats::default();
    }
    /// Erases a block has had.
    #[inline]
    pub fn erase_count(&self, block: u64) -> u64 {
        self.blocks[index(block)].erase_count
    }
    /// Erase counts of all blocks.
    pub fn erase_counts(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks.iter().map(|b| b.erase_count)
    }
    /// The next page a block accepts (pages below it are programmed).
    #[inline]
    pub fn write_pointer(&self, block: u64) -> u32 {
        self.blocks[index(block)].next_page
    }
    /// The programmed-sector mask of a page opened by partial programming (`None` for a
    /// page programmed whole, or not programmed).
    #[inline]
    pub fn sector_mask(&self, ppn: Ppn) -> Option<u64> {
        self.programmed(ppn).map(|(arena, page)| arena.mask(page)).filter(|&m| m != 0)
    }
    /// When a plane is next free, ns.
    #[inline]
    pub fn plane_busy_until_ns(&self, plane: u64) -> u64 {
        self.plane_busy_until_ns[index(plane)]
    }
    /// When every plane is free, ns.
    pub fn all_idle_at_ns(&self) -> u64 {
        self.plane_busy_until_ns.iter().copied().max().unwrap_or(0)
    }

    #[inline]
    fn check_ppn(&self, ppn: Ppn) -> Result<(), DeviceError> {
        if ppn >= self.pages {
            return Err(DeviceError::OutOfRange { addr: ppn, len: 1, capacity: self.pages });
        }
        Ok(())
    }

    #[inline]
    fn check_block(&self, block: u64) -> Result<(), DeviceError> {
        if block >= self.block_count {
            return Err(DeviceError::OutOfRange { addr: block, len: 1, capacity: self.block_count });
        }
        let state = &self.blocks[index(block)];
        if state.erase_count >= self.geometry.endurance {
            return Err(DeviceError::WornOut { block, erases: state.erase_count, endurance: self.geometry.endurance });
        }
        Ok(())
    }

    #[inline]
    fn occupy(&mut self, block: u64, now_ns: u64, service_ns: u64, energy_pj: u64) -> OpTiming {
        let plane = self.plane_index(block);
        let start_ns = now_ns.max(self.plane_busy_until_ns[plane]);
        let end_ns = start_ns + service_ns;
        self.plane_busy_until_ns[plane] = end_ns;
        self.stats.busy_ns += service_ns;
        self.stats.energy_pj += energy_pj;
        OpTiming { start_ns, end_ns }
    }

    /// The plane of a block, as [`FlashArray::occupy`] finds it.
    #[inline]
    fn plane_index(&self, block: u64) -> usize {
        match self.plane_mask {
            Some(mask) => index(block & mask),
            None => index(self.geometry.plane_of_block(block)),
        }
    }

    /// The block and index of page `ppn`, checked to be in range, in a block not worn out,
    /// and its block's next page to program (NAND pages are programmed in order).
    /// (Forced inline, as the program and copy paths that call it.)
    #[inline(always)]
    fn page_to_program(&self, ppn: Ppn) -> Result<(u64, u32), DeviceError> {
        self.check_ppn(ppn)?;
        let (block, page) = self.locate(ppn);
        self.check_block(block)?;
        let expected = self.blocks[index(block)].next_page;
        if page != expected {
            return Err(program_order_error(ppn, block, page, expected));
        }
        Ok((block, page))
    }

    /// The block of a page and the page's index in it.
    #[inline]
    fn locate(&self, ppn: Ppn) -> (u64, u32) {
        match self.page_shift {
            Some(shift) => {
                let page = ppn & u64::from(self.geometry.pages_per_block - 1);
                (ppn >> shift, u32::try_from(page).expect("a page below pages_per_block fits u32"))
            }
            None => {
                let block = ppn / u64::from(self.geometry.pages_per_block);
                let page = ppn - block * u64::from(self.geometry.pages_per_block);
                (block, u32::try_from(page).expect("a remainder below a u32 fits u32"))
            }
        }
    }

    /// The arena of a programmed page's block and the page's index in it (`None` for a
    /// page out of range or not programmed).
    #[inline]
    fn programmed(&self, ppn: Ppn) -> Option<(&BlockArena, usize)> {
        let (block, page) = self.locate(ppn);
        let state = self.blocks.get(index(block))?;
        if page >= state.next_page {
            return None;
        }
        state.arena.as_deref().map(|a| (a, page as usize))
    }

    /// The arena of a block, allocated at its first program.
    #[inline]
    fn arena_mut(&mut self, block: u64) -> &mut BlockArena {
        if self.blocks[index(block)].arena.is_none() {
            self.blocks[index(block)].arena = Some(self.new_arena());
        }
        self.blocks[index(block)].arena.as_mut().expect("allocated above")
    }

    /// An arena of erased pages (and erased bytes in bytes mode), with the arrays the
    /// content mode and partial programming need.
    #[cold]
    fn new_arena(&self) -> Box<BlockArena> {
        let pages = self.geometry.pages_per_block as usize;
        let page_bytes = match self.content {
            PageContent::Bytes => self.geometry.page_bytes as usize,
            PageContent::Fingerprint | PageContent::None => 0,
        };
        let fingerprints = if self.content == PageContent::Fingerprint { pages } else { 0 };
        let masks = if self.geometry.partial_programming { pages } else { 0 };
        Box::new(BlockArena {
            spares: vec![[0xFF; SPARE_STORED_BYTES]; pages].into_boxed_slice(),
            flags: vec![0; pages].into_boxed_slice(),
            fingerprints: vec![0; fingerprints].into_boxed_slice(),
            masks: vec![0; masks].into_boxed_slice(),
            bytes: vec![0xFF; pages * page_bytes].into_boxed_slice(),
            tags: Vec::new(),
        })
    }

    /// The page bytes of a programmed page (bytes mode).
    #[inline]
    fn page_bytes_of(&self, ppn: Ppn) -> Option<&[u8]> {
        let (arena, page) = self.programmed(ppn)?;
        let page_bytes = self.geometry.page_bytes as usize;
        let at = page * page_bytes;
        arena.bytes.get(at..at + page_bytes)
    }

    /// Reads a page issued at `now_ns`. An erased page reads as `Empty` (fingerprint and
    /// metadata modes) or all `0xFF` bytes.
    #[inline]
    pub fn read_page(&mut self, ppn: Ppn, now_ns: u64) -> Result<(PageData, OpTiming), DeviceError> {
        let timing = self.read_page_timing(ppn, now_ns)?;
        let data = match self.content {
            PageContent::Bytes => PageData::Bytes(
                self.page_bytes_of(ppn).map_or_else(|| vec![0xFF; self.geometry.page_bytes as usize], <[u8]>::to_vec),
            ),
            PageContent::Fingerprint => self
                .programmed(ppn)
                .filter(|&(arena, page)| arena.flags[page] & HAS_FINGERPRINT != 0)
                .map_or(PageData::Empty, |(arena, page)| PageData::Fingerprint(arena.fingerprints[page])),
            PageContent::None => PageData::Empty,
        };
        Ok((data, timing))
    }

    /// [`FlashArray::read_page`] of a bytes-mode array into `out`, which it sizes to one
    /// page: the same read, timed and counted alike, without allocating a page.
    #[inline]
    pub fn read_page_into(&mut self, ppn: Ppn, now_ns: u64, out: &mut Vec<u8>) -> Result<OpTiming, DeviceError> {
        if self.content != PageContent::Bytes {
            return Err(DeviceError::Config("this flash array stores no bytes to read into a buffer".into()));
        }
        let timing = self.read_page_timing(ppn, now_ns)?;
        out.resize(self.geometry.page_bytes as usize, 0);
        match self.page_bytes_of(ppn) {
            Some(bytes) => out.copy_from_slice(bytes),
            None => out.fill(0xFF),
        }
        Ok(timing)
    }

    /// The stored bytes of page `ppn` of a bytes-mode array, neither timed nor counted
    /// (the bytes a [`FlashArray::read_page_timing`] of it reads, for a caller that copies
    /// them out itself): `None` for a page out of range or not programmed (it reads as
    /// `0xFF` bytes) and in the other content modes.
    #[inline]
    pub fn stored_page_bytes(&self, ppn: Ppn) -> Option<&[u8]> {
        self.page_bytes_of(ppn)
    }

    /// [`FlashArray::read_page`] without taking the data out: the same time, energy and
    /// counts, for a read whose page [`FlashArray::program_page_copy`] then copies inside
    /// the array (a garbage collector's copy). (Forced inline: it is the garbage
    /// collector's inner loop, and the workspace builds without cross-crate LTO.)
    #[inline(always)]
    pub fn read_page_timing(&mut self, ppn: Ppn, now_ns: u64) -> Result<OpTiming, DeviceError> {
        self.check_ppn(ppn)?;
        self.stats.page_reads += 1;
        let block = self.locate(ppn).0;
        Ok(match self.read_suspend_ns {
            Some(suspend_ns) if self.plane_busy_until_ns[self.plane_index(block)] > now_ns => {
                // The operation in progress stops for the suspend and the read, then resumes.
                let plane = self.plane_index(block);
                let start_ns = now_ns + suspend_ns;
                self.plane_busy_until_ns[plane] += suspend_ns + self.timing.read_ns;
                self.stats.busy_ns += self.timing.read_ns;
                self.stats.energy_pj += self.timing.read_pj;
                OpTiming { start_ns, end_ns: start_ns + self.timing.read_ns }
            }
            _ => self.occupy(block, now_ns, self.timing.read_ns, self.timing.read_pj),
        })
    }

    /// Programs a whole page issued at `now_ns`.
    pub fn program_page(&mut self, ppn: Ppn, data: &PageData, now_ns: u64) -> Result<OpTiming, DeviceError> {
        self.program_page_with_spare(ppn, data, &[], now_ns)
    }

    /// Programs a whole page and the first `spare.len()` bytes of its spare area (an FTL's
    /// out-of-band metadata) in the same operation. (Inlined into an FTL's write path:
    /// the workspace builds without cross-crate LTO.)
    #[inline]
    pub fn program_page_with_spare(
        &mut self,
        ppn: Ppn,
        data: &PageData,
        spare: &[u8],
        now_ns: u64,
    ) -> Result<OpTiming, DeviceError> {
        self.check_spare(ppn, spare)?;
        let (block, page) = self.page_to_program(ppn)?;
        self.check_data(ppn, 0, data)?;
        self.record(block, page, true, 0, data, spare, None);
        self.blocks[index(block)].next_page = page + 1;
        self.stats.page_programs += 1;
        Ok(self.occupy(block, now_ns, self.timing.program_ns, self.timing.program_pj))
    }

    /// [`FlashArray::program_page`] of `PageData::Bytes(bytes.to_vec())` without building
    /// the page: the same checks, errors, stored state, counts and times (a whole page in
    /// a bytes-mode or metadata-only array, which stores the bytes or nothing; anything
    /// else goes through [`FlashArray::program_page`]). `tests/integration/flash_slices.rs` compares
    /// the two.
    #[inline]
    pub fn program_page_bytes(&mut self, ppn: Ppn, bytes: &[u8], now_ns: u64) -> Result<OpTiming, DeviceError> {
        let page_bytes = self.geometry.page_bytes as usize;
        let content = self.content;
        if content == PageContent::Fingerprint || bytes.len() != page_bytes {
            return self.program_page(ppn, &PageData::Bytes(bytes.to_vec()), now_ns);
        }
        let (block, page) = self.page_to_program(ppn)?;
        let arena = self.arena_mut(block);
        arena.open(page as usize);
        if content == PageContent::Bytes {
            let at = page as usize * page_bytes;
            arena.bytes[at..at + page_bytes].copy_from_slice(bytes);
        }
        self.blocks[index(block)].next_page = page + 1;
        self.stats.page_programs += 1;
        Ok(self.occupy(block, now_ns, self.timing.program_ns, self.timing.program_pj))
    }

    /// Programs page `ppn` whole with a copy of page `from` (a garbage collector's copy,
    /// after [`FlashArray::read_page_timing`] of `from`): what
    /// [`FlashArray::program_page_with_spare`] stores, counts and times given the data
    /// [`FlashArray::read_page`] returns for `from` and the spare bytes programmed into it
    /// (none when its spare area is erased), without building either; `from`'s
    /// sector mask and sector tags are not copied, as a whole-page program keeps none.
    /// `tests/integration/flash_reference.rs` compares the two. (Forced inline, as
    /// [`FlashArray::read_page_timing`].)
    #[inline(always)]
    pub fn program_page_copy(&mut self, ppn: Ppn, from: Ppn, now_ns: u64) -> Result<OpTiming, DeviceError> {
        // A stored spare area fits any page's (it was checked when programmed), and a
        // copy's data is a whole page of the array's content mode: neither check can fail.
        let (block, page) = self.page_to_program(ppn)?;
        self.record_copy(block, page, from);
        self.blocks[index(block)].next_page = page + 1;
        self.stats.page_programs += 1;
        Ok(self.occupy(block, now_ns, self.timing.program_ns, self.timing.program_pj))
    }

    /// Stores [`FlashArray::program_page_copy`]'s copy of page `from` (an erased page's
    /// state when it is not programmed) in page `page` of `block`, which it opens.
    #[inline(always)]
    fn record_copy(&mut self, block: u64, page: u32, from: Ppn) {
        let page_bytes = self.geometry.page_bytes as usize;
        let content = self.content;
        let (from_block, from_page) = self.locate(from);
        let source = self.programmed(from).map(|(arena, at)| {
            let flags = arena.flags[at];
            let fingerprint = if flags & HAS_FINGERPRINT != 0 { arena.fingerprints[at] } else { 0 };
            (arena.spares[at], flags, fingerprint)
        });
        let (spare, flags, fingerprint) = source.unwrap_or(([0xFF; SPARE_STORED_BYTES], 0, 0));
        let arena = self.arena_mut(block);
        let at = page as usize;
        arena.spares[at] = spare;
        arena.flags[at] = flags;
        if let Some(f) = arena.fingerprints.get_mut(at) {
            *f = fingerprint;
        }
        if let Some(m) = arena.masks.get_mut(at) {
            *m = 0;
        }
        if !arena.tags.is_empty() {
            let per_page = arena.tags.len() / arena.flags.len();
            arena.tags[at * per_page..(at + 1) * per_page].fill(None);
        }
        if content == PageContent::Bytes {
            self.copy_page_bytes(block, page, from_block, from_page, source.is_some(), page_bytes);
        }
    }

    /// Copies pages `sources`, in order, into the pages of one block from `to` on (`to`
    /// first, then the pages after it): what a [`FlashArray::read_page_timing`] of each
    /// source with read suspend off (the controller's own read, which waits for its
    /// plane), then a [`FlashArray::program_page_copy`] of it into the next page, do, in
    /// one call. `schedule` gives each copy's read and program issue times, given the
    /// previous copy's program end (`None` for the first copy); returns the last copy's
    /// program end (`None` when `sources` is empty).
    ///
    /// All or nothing: a run that page-by-page copies would not complete (a source out of
    /// range; `to` out of range, in a worn-out block or not its block's next page) is
    /// refused with the error of the first copy that would fail, and so is a run past the
    /// block's last page; nothing changes then. `tests/integration/flash_copy_run.rs` compares it with page-by-page
    /// copies.
    pub fn copy_pages(
        &mut self,
        sources: &[Ppn],
        to: Ppn,
        mut schedule: impl FnMut(Option<u64>) -> (u64, u64),
    ) -> Result<Option<u64>, DeviceError> {
        let Some(&first_source) = sources.first() else { return Ok(None) };
        // Checked in page-by-page order: each copy's source, then its destination.
        self.check_ppn(first_source)?;
        let (block, first) = self.page_to_program(to)?;
        let count = u32::try_from(sources.len()).unwrap_or(u32::MAX);
        if count > self.geometry.pages_per_block - first {
            return Err(DeviceError::Config(format!(
                "a run of {} page copies from page {to} passes its block's last page",
                sources.len()
            )));
        }
        // Whether every source is a programmed page of one block other than `block`: its
        // copies then go in one pass per kind of state. Such a source is in range, so only
        // a run with another source checks each one's range.
        let (from_block, _) = self.locate(first_source);
        let block_start = from_block * u64::from(self.geometry.pages_per_block);
        let programmed = u64::from(self.blocks[index(from_block)].next_page);
        let one_source_block =
            from_block != block && sources.iter().all(|&from| from.wrapping_sub(block_start) < programmed);
        if !one_source_block {
            for &from in sources {
                self.check_ppn(from)?;
            }
        }
        let n = sources.len() as u64;
        let (read_ns, program_ns) = (self.timing.read_ns, self.timing.program_ns);
        let to_plane = self.plane_index(block);
        let mut end = None;
        if one_source_block {
            // The two planes' times stay in locals for the run (one when the source block
            // shares the destination's plane).
            let from_plane = self.plane_index(from_block);
            let same_plane = from_plane == to_plane;
            let mut from_busy = self.plane_busy_until_ns[from_plane];
            let mut to_busy = self.plane_busy_until_ns[to_plane];
            for _ in sources {
                let (read_at, program_at) = schedule(end);
                from_busy = read_at.max(from_busy) + read_ns;
                if same_plane {
                    to_busy = from_busy;
                }
                to_busy = program_at.max(to_busy) + program_ns;
                if same_plane {
                    from_busy = to_busy;
                }
                end = Some(to_busy);
            }
            self.plane_busy_until_ns[from_plane] = from_busy;
            self.plane_busy_until_ns[to_plane] = to_busy;
        } else {
            for &from in sources {
                let (read_at, program_at) = schedule(end);
                let from_plane = self.plane_index(self.locate(from).0);
                let read_start = read_at.max(self.plane_busy_until_ns[from_plane]);
                self.plane_busy_until_ns[from_plane] = read_start + read_ns;
                let program_end = program_at.max(self.plane_busy_until_ns[to_plane]) + program_ns;
                self.plane_busy_until_ns[to_plane] = program_end;
                end = Some(program_end);
            }
        }
        self.stats.page_reads += n;
        self.stats.page_programs += n;
        self.stats.busy_ns += n * (read_ns + program_ns);
        self.stats.energy_pj += n * (self.timing.read_pj + self.timing.program_pj);
        if one_source_block {
            self.record_copies(block, first, from_block, sources);
        } else {
            for (page, &from) in (first..).zip(sources) {
                self.record_copy(block, page, from);
                self.blocks[index(block)].next_page = page + 1;
            }
        }
        self.blocks[index(block)].next_page = first + count;
        Ok(end)
    }

    /// [`FlashArray::record_copy`] of each of `sources`, all programmed pages of
    /// `from_block` (not `block`), into the pages of `block` from `first` on, with both
    /// arenas borrowed once: each run of consecutive sources (pages `p`, `p + 1`, …) is
    /// copied as one slice per kind of state, a run of at most [`COPY_RUN_BYTES`] of page
    /// bytes at a time.
    fn record_copies(&mut self, block: u64, first: u32, from_block: u64, sources: &[Ppn]) {
        let page_bytes = self.geometry.page_bytes as usize;
        let bytes_mode = self.content == PageContent::Bytes;
        let longest = (COPY_RUN_BYTES / page_bytes.max(1)).max(1);
        let block_start = from_block * u64::from(self.geometry.pages_per_block);
        // The source's arena steps out while the copies land.
        let source = self.blocks[index(from_block)].arena.take().expect("a programmed page's block has its arena");
        let arena = self.arena_mut(block);
        let to = first as usize..first as usize + sources.len();
        // A whole-page program keeps no sector masks or tags.
        if let Some(masks) = arena.masks.get_mut(to.clone()) {
            masks.fill(0);
        }
        if !arena.tags.is_empty() {
            let per_page = arena.tags.len() / arena.flags.len();
            arena.tags[to.start * per_page..to.end * per_page].fill(None);
        }
        let mut at = to.start;
        let mut rest = sources;
        while let Some(&from) = rest.first() {
            let len = consecutive_run(rest, longest);
            let from = index(from - block_start);
            let (to, from) = (at..at + len, from..from + len);
            // Page by page: the compiler moves a page's 17 bytes inline, where a slice
            // copy of a run would call `memcpy` twice.
            let spares = arena.spares[to.clone()].iter_mut().zip(&source.spares[from.clone()]);
            let flags = arena.flags[to.clone()].iter_mut().zip(&source.flags[from.clone()]);
            for ((spare, from_spare), (flag, from_flag)) in spares.zip(flags) {
                *spare = *from_spare;
                *flag = *from_flag;
            }
            if !arena.fingerprints.is_empty() {
                for (at, from) in to.clone().zip(from.clone()) {
                    let has = source.flags[from] & HAS_FINGERPRINT != 0;
                    arena.fingerprints[at] = if has { source.fingerprints[from] } else { 0 };
                }
            }
            if bytes_mode {
                arena.bytes[to.start * page_bytes..to.end * page_bytes]
                    .copy_from_slice(&source.bytes[from.start * page_bytes..from.end * page_bytes]);
            }
            at += len;
            rest = &rest[len..];
        }
        self.blocks[index(from_block)].arena = Some(source);
    }

    /// Bytes mode: page `page` of `block` takes page `from_page` of `from_block`'s bytes
    /// (erased bytes when `programmed` is false: a read of an unprogrammed page).
    #[cold]
    fn copy_page_bytes(
        &mut self,
        block: u64,
        page: u32,
        from_block: u64,
        from_page: u32,
        programmed: bool,
        page_bytes: usize,
    ) {
        let to = page as usize * page_bytes..(page as usize + 1) * page_bytes;
        let from = from_page as usize * page_bytes;
        if !programmed {
            self.arena_mut(block).bytes[to].fill(0xFF);
        } else if from_block == block {
            self.arena_mut(block).bytes.copy_within(from..from + page_bytes, to.start);
        } else {
            // The source's arena steps out while the copy lands; a programmed page has one.
            let source = self.blocks[index(from_block)].arena.take().expect("a programmed page's block has its arena");
            self.arena_mut(block).bytes[to].copy_from_slice(&source.bytes[from..from + page_bytes]);
            self.blocks[index(from_block)].arena = Some(source);
        }
    }

    /// Programs sectors `first..first + n` of a page (partial-page programming). The page
    /// must be the block's next page or one opened by an earlier partial program, and the
    /// sectors erased.
    /// A partial program takes a whole page program's time, whatever the number of sectors:
    /// a program operation's time (t_PROG, the program-and-verify pulses) does not shrink
    /// with the bytes loaded into the page register. Its energy is charged per sector, as
    /// a fraction of a page program's, for the cells it programs.
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
        if !spare.is_empty() && self.programmed(ppn).is_some_and(|(arena, page)| arena.flags[page] & HAS_SPARE != 0) {
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
        let (block, page) = self.locate(ppn);
        self.check_block(block)?;
        let next = self.blocks[index(block)].next_page;
        let mask = ((1u64 << sectors) - 1) << first;
        let current = self.sector_mask(ppn).unwrap_or(0);
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
        self.check_data(ppn, first, data)?;
        self.record(block, page, !opened_partially, first, data, spare, Some(current | mask));
        self.blocks[index(block)].next_page = next.max(page + 1);
        self.stats.sector_programs += 1;
        self.stats.sectors_programmed += u64::from(sectors);
        let service_ns = self.timing.program_ns;
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
        let (block, page) = self.locate(ppn);
        let pages = self.geometry.pages_per_block as usize;
        let arena = self.arena_mut(block);
        if arena.tags.is_empty() {
            arena.tags = vec![None; pages * per_page as usize];
        }
        let at = page as usize * per_page as usize + first as usize;
        for (slot, tag) in arena.tags[at..].iter_mut().zip(tags) {
            *slot = Some(*tag);
        }
        Ok(timing)
    }

    /// The tag of a sector programmed by [`FlashArray::program_sectors_tagged`] (`None` when
    /// the sector is erased or was programmed without one). Like [`FlashArray::spare`], it is
    /// read with the page.
    pub fn sector_tag(&self, ppn: Ppn, sector: u32) -> Option<&SectorTag> {
        let (arena, page) = self.programmed(ppn)?;
        let per_page = self.geometry.sectors_per_page();
        if sector >= per_page {
            return None;
        }
        arena.tags.get(page * per_page as usize + sector as usize)?.as_ref()
    }

    #[inline]
    fn check_spare(&self, ppn: Ppn, spare: &[u8]) -> Result<(), DeviceError> {
        let room = (self.geometry.spare_bytes as usize).min(SPARE_STORED_BYTES);
        if spare.len() > room {
            return Err(DeviceError::BadPageSize { ppn, got: spare.len(), expected: room });
        }
        Ok(())
    }

    /// The first [`SPARE_STORED_BYTES`] spare bytes of a page (`None` when its spare area
    /// is erased; unprogrammed bytes read `0xFF`). Reading the spare area is part of a page
    /// read; a recovery scan reads it for free here.
    #[inline]
    pub fn spare(&self, ppn: Ppn) -> Option<&[u8]> {
        self.programmed(ppn)
            .filter(|&(arena, page)| arena.flags[page] & HAS_SPARE != 0)
            .map(|(arena, page)| arena.spares[page].as_slice())
    }

    /// Whether `data` may be stored at sector `first_sector` of page `ppn` in this content
    /// mode (checked before anything changes).
    #[inline]
    fn check_data(&self, ppn: Ppn, first_sector: u32, data: &PageData) -> Result<(), DeviceError> {
        match (self.content, data) {
            (PageContent::Bytes, PageData::Bytes(bytes)) => {
                let page_bytes = self.geometry.page_bytes as usize;
                let offset = (first_sector * SECTOR_BYTES) as usize;
                let whole = first_sector == 0 && bytes.len() == page_bytes;
                if !whole && (offset + bytes.len() > page_bytes || bytes.len() % SECTOR_BYTES as usize != 0) {
                    return Err(DeviceError::BadPageSize { ppn, got: bytes.len(), expected: page_bytes });
                }
                Ok(())
            }
            (PageContent::Bytes, _) => {
                Err(DeviceError::Config("this flash array stores bytes; program it with PageData::Bytes".into()))
            }
            _ => Ok(()),
        }
    }

    /// Stores a checked program (see [`FlashArray::check_data`]) of sectors from
    /// `first_sector` of a page: a program that `opens` the page first clears its state
    /// (and in bytes mode its bytes, which then read `0xFF` where not programmed); then the
    /// data, the spare bytes if any, and for a partial program the page's new sector mask.
    /// Inlined, so that a whole-page program (`opens`, sector 0, no mask) keeps only its
    /// own steps.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn record(
        &mut self,
        block: u64,
        page: u32,
        opens: bool,
        first_sector: u32,
        data: &PageData,
        spare: &[u8],
        sector_mask: Option<u64>,
    ) {
        let page_bytes = self.geometry.page_bytes as usize;
        let content = self.content;
        let arena = self.arena_mut(block);
        let at = page as usize;
        if opens {
            arena.open(at);
        }
        match (content, data) {
            (PageContent::Bytes, PageData::Bytes(bytes)) => {
                let page_at = at * page_bytes;
                if opens && bytes.len() != page_bytes {
                    arena.bytes[page_at..page_at + page_bytes].fill(0xFF);
                }
                let from = page_at + (first_sector * SECTOR_BYTES) as usize;
                arena.bytes[from..from + bytes.len()].copy_from_slice(bytes);
            }
            (PageContent::Fingerprint, PageData::Fingerprint(f)) => {
                arena.fingerprints[at] = *f;
                arena.flags[at] |= HAS_FINGERPRINT;
            }
            (PageContent::Fingerprint, PageData::Bytes(bytes)) => {
                arena.fingerprints[at] = fingerprint64(bytes);
                arena.flags[at] |= HAS_FINGERPRINT;
            }
            _ => {}
        }
        if !spare.is_empty() {
            let mut stored = [0xFF; SPARE_STORED_BYTES];
            stored[..spare.len()].copy_from_slice(spare);
            arena.spares[at] = stored;
            arena.flags[at] |= HAS_SPARE;
        }
        if let Some(mask) = sector_mask {
            arena.masks[at] = mask;
        }
    }

    /// Erases a block issued at `now_ns`.
    pub fn erase_block(&mut self, block: u64, now_ns: u64) -> Result<OpTiming, DeviceError> {
        self.check_block(block)?;
        // The pages' state is stale from here on, and cleared when each is opened again.
        let state = &mut self.blocks[index(block)];
        state.next_page = 0;
        state.erase_count += 1;
        self.stats.block_erases += 1;
        Ok(self.occupy(block, now_ns, self.timing.erase_ns, self.timing.erase_pj))
    }
}

/// The most page bytes [`FlashArray::record_copies`] copies in one slice copy: a run of
/// consecutive pages longer than this goes in several. (glibc's `memcpy` copies up to
/// 2 KiB with vector moves on every x86-64 machine, and beyond a threshold of 2 KiB or
/// more with `rep movsb`, which callgrind counts per byte, so that longer copies would no
/// longer be measured by the instruction counts the simulator's profiles rely on.)
const COPY_RUN_BYTES: usize = 2048;

/// How many of `pages` from the first on are consecutive page numbers (`p`, `p + 1`,
/// …), at most `longest` (which is at least 1) and at least 1 (`pages` is not empty).
#[inline]
fn consecutive_run(pages: &[Ppn], longest: usize) -> usize {
    let first = pages[0];
    pages.iter().take(longest).zip(first..).take_while(|&(&p, expected)| p == expected).count()
}

/// Why a whole-page program of page `page` of `block` (`ppn`) is refused when the block
/// expects page `expected` next.
#[cold]
fn program_order_error(ppn: Ppn, block: u64, page: u32, expected: u32) -> DeviceError {
    if page < expected {
        DeviceError::ProgramNotErased { ppn }
    } else {
        DeviceError::ProgramOutOfOrder { ppn, block, expected }
    }
}

/// FNV-1a 64-bit content identity of a byte string.
pub fn fingerprint64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}
