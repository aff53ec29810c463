//! The engine's persistent devices and where things live on them. Every device write
//! passes the one [`PowerSwitch`] first: the page-mapped FTL's when there is flash (its
//! own programs, garbage-collection copies and erases pass it, and the
//! engine's PCM writes pass it through [`PageFtl::admit`]), otherwise the devices' own.
//! Simulated time advances serially (the engine waits for each device operation), and
//! flash time comes from one source ([`crate::config::FlashTime`]): the array's timing, or
//! for the measured SSD an untimed array and the engine's per-operation charge.
//!
//! Flash (through the page-mapped FTL) holds, as logical pages: the page image slots
//! (slot `s` is flash pages `s·f .. (s+1)·f` for `f` flash pages per tree page), then the
//! `ipl` engine's log pages (each block's log sectors, written by partial programming),
//! then for `flash-only` and `ipl` the two metadata slots. PCM holds the `pcm-only`
//! engine's image slots or the `ipl-p` engine's log areas (block `b`'s at
//! `b · log_area_bytes`), then the two metadata slots of those engines.

use nvmdb_device::flash::SECTOR_BYTES;
use nvmdb_device::pcm::LINE_HOST_BYTES;
use nvmdb_device::wear::higher_plane_bytes_bound;
use nvmdb_device::{Activity, Cut, FlashArray, PageContent, PageData, Pcm, PcmConfig, PowerSwitch};
use nvmdb_flash::ftl::PageFtl;
use nvmdb_flash::{PageStore, SsdConfig};

use crate::config::{EngineConfig, EngineKind, FlashCharges};
use crate::KvError;

/// Bytes of a metadata slot's header: magic, length, sequence number, checksum.
pub const META_HEADER_BYTES: usize = 24;
const META_MAGIC: u32 = 0x4B56_4D44;

/// The devices an engine owns: what survives a power loss.
#[derive(Debug, Clone)]
pub struct Devices {
    /// Flash behind the page-mapped FTL (every engine but `pcm-only`).
    pub flash: Option<PageFtl>,
    /// PCM in storage mode (`pcm-only`, `ipl-p`).
    pub pcm: Option<Pcm>,
    /// The power switch of devices without flash (with flash, the FTL's is the one).
    switch: PowerSwitch,
    /// Simulated time when the devices were last handed back, ns: time goes on across a
    /// power loss (a plane busy before it is busy after it).
    pub clock_ns: u64,
}

/// Bytes of an `ipl-p` log unit's header in PCM: the record bytes.
pub(crate) const UNIT_HEADER_BYTES: usize = 2;

/// Where things live, derived from the configuration.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub kind: EngineKind,
    pub page_bytes: usize,
    pub flash_page_bytes: usize,
    pub flash_per_page: u64,
    pub image_slots: u32,
    pub blocks: u32,
    pub log_area_bytes: u64,
    pub log_sectors: u32,
    pub sectors_per_log_page: u32,
    pub log_pages: u32,
    pub pcm_unit: u64,
    pub meta_bytes: usize,
    /// First FTL page of the `ipl` log pages.
    flash_log_base: u64,
    /// First FTL page of the metadata slots (flash-only, ipl).
    flash_meta_base: u64,
    /// FTL pages per metadata slot.
    flash_meta_pages: u64,
    /// PCM byte address of the metadata slots (pcm-only, ipl-p).
    pcm_meta_base: u64,
}

impl Layout {
    pub fn new(config: &EngineConfig) -> Layout {
        let page_bytes = config.page_bytes as usize;
        let flash_page_bytes = config.flash_page_bytes() as usize;
        let flash_per_page = u64::from(config.flash_pages_per_page());
        // Each page has at most two live images: the committed one and the current one.
        let image_slots = config.capacity_pages * 2 + 2;
        let blocks = config.blocks();
        let log_area_bytes = u64::from(config.log_area_bytes);
        let sectors_per_log_page = flash_page_bytes as u32 / SECTOR_BYTES;
        let log_sectors = config.log_sectors();
        let log_pages = log_sectors.div_ceil(sectors_per_log_page);
        let meta_bytes = META_HEADER_BYTES + 16 + 4 * config.capacity_pages as usize + 8 * blocks as usize;
        let flash_log_base = u64::from(image_slots) * flash_per_page;
        let ipl_log_pages = if config.kind == EngineKind::Ipl { u64::from(blocks) * u64::from(log_pages) } else { 0 };
        let flash_meta_base = flash_log_base + ipl_log_pages;
        let flash_meta_pages = meta_bytes.div_ceil(flash_page_bytes) as u64;
        let pcm_meta_base = match config.kind {
            EngineKind::PcmOnly => u64::from(image_slots) * page_bytes as u64,
            _ => u64::from(blocks) * log_area_bytes,
        };
        Layout {
            kind: config.kind,
            page_bytes,
            flash_page_bytes,
            flash_per_page,
            image_slots,
            blocks,
            log_area_bytes,
            log_sectors,
            sectors_per_log_page,
            log_pages,
            pcm_unit: u64::from(config.pcm_write_bytes),
            meta_bytes,
            flash_log_base,
            flash_meta_base,
            flash_meta_pages,
            pcm_meta_base,
        }
    }

    /// FTL logical pages needed.
    fn flash_pages(&self) -> u64 {
        let meta = if self.kind.has_pcm() { 0 } else { 2 * self.flash_meta_pages };
        self.flash_meta_base + meta
    }

    /// PCM bytes needed (a multiple of 64).
    fn pcm_bytes(&self) -> u64 {
        (self.pcm_meta_base + 2 * self.meta_bytes as u64).next_multiple_of(64)
    }

    fn log_lpn(&self, block: u32, log_page: u32) -> u64 {
        self.flash_log_base + u64::from(block) * u64::from(self.log_pages) + u64::from(log_page)
    }
}

/// Over-provisioning of the simulated SSD.
const OVERPROVISION: f64 = 0.25;

impl Devices {
    /// Fresh (erased) devices for `config`.
    pub fn new(config: &EngineConfig) -> Result<Devices, KvError> {
        config.validate()?;
        let layout = Layout::new(config);
        let flash = if config.kind.has_flash() {
            let ssd = ssd_config(config, &layout);
            let geometry = ssd.flash.geometry();
            let timing = config.flash_time.array_timing(config.flash_page_bytes());
            let array = FlashArray::new(geometry, timing, PageContent::Bytes)?;
            // Opening the FTL over an erased array builds it with the array's timing (none
            // for the measured SSD, whose latency the engine charges). Its switch is the
            // one every device write passes.
            Some(PageFtl::reopen(&ssd, array, None, PowerSwitch::new())?)
        } else {
            None
        };
        let pcm = if config.kind.has_pcm() {
            let mut pcm_config = PcmConfig::new(layout.pcm_bytes());
            pcm_config.storage = config.preset.pcm_timing(config.pcm_write_bytes);
            Some(Pcm::new(pcm_config)?)
        } else {
            None
        };
        Ok(Devices { flash, pcm, switch: PowerSwitch::new(), clock_ns: 0 })
    }

    /// The one switch every device write passes.
    fn switch(&mut self) -> &mut PowerSwitch {
        match &mut self.flash {
            Some(ftl) => ftl.power_switch().expect("the page-mapped FTL has a power switch"),
            None => &mut self.switch,
        }
    }

    /// Device writes (flash page and sector programs, erases, PCM writes) admitted so far.
    pub fn device_writes(&mut self) -> u64 {
        self.switch().writes()
    }

    /// Cuts the power before device write number `index` (0-based, counted over the
    /// devices' life): that write and every later one are refused.
    pub fn cut_power_before(&mut self, index: u64) {
        self.switch().cut_before(index);
    }

    /// Sets what the engine is doing from now on (a cut reports it); returns what it was
    /// doing. The FTL sets [`Activity::Gc`] itself while it collects garbage.
    pub fn set_activity(&mut self, activity: Activity) -> Activity {
        self.switch().set_activity(activity)
    }

    /// The last cut reached: the device write it refused and what the engine was doing.
    pub fn last_cut(&mut self) -> Option<Cut> {
        self.switch().cuts().last().copied()
    }

    /// A power loss and the power back: the cut is cleared and the FTL, whose tables are
    /// volatile, rebuilds them from the flash alone ([`PageFtl::reopen`]).
    pub(crate) fn power_cycle(&mut self) {
        match &mut self.flash {
            // The FTL reopens over the array it built, without deduplication: only a
            // configuration it already accepted could fail.
            Some(ftl) => ftl.power_cycle().expect("the FTL reopens over its own flash"),
            None => self.switch.restore(),
        }
    }
}

/// Simulated time of one log write on fresh devices of `config`, ns, through the engine's
/// own device path: `ipl`'s partial program of one 512 B flash log sector, or `ipl-p`'s
/// write of one PCM unit of [`EngineConfig::pcm_write_bytes`]. The other engines write
/// no log.
pub fn one_log_write_ns(config: &EngineConfig) -> Result<u64, KvError> {
    Ok(one_log_write(config)?.log_write_ns)
}

/// Simulated time of one log read on fresh devices of `config`, ns, after the write of
/// [`one_log_write_ns`], through the engine's own device path: `ipl`'s read of the flash
/// log page holding the 512 B sector, or `ipl-p`'s read of the PCM unit.
pub fn one_log_read_ns(config: &EngineConfig) -> Result<u64, KvError> {
    let mut store = one_log_write(config)?;
    if config.kind == EngineKind::Ipl {
        store.flash_log_read(0, 0)?.ok_or_else(|| KvError::Corrupt("the log page just written is gone".into()))?;
    } else {
        store.pcm_log_read(0, 0, config.pcm_write_bytes as usize)?;
    }
    Ok(store.log_read_ns)
}

/// A fresh store of `config` after one log write.
fn one_log_write(config: &EngineConfig) -> Result<Store, KvError> {
    let mut store = Store::new(config, Devices::new(config)?);
    match config.kind {
        EngineKind::Ipl => store.flash_log_program(0, 0, vec![0xA5; SECTOR_BYTES as usize])?,
        EngineKind::IplP => store.pcm_log_write(0, 0, &vec![0xA5; config.pcm_write_bytes as usize])?,
        other => return Err(KvError::Config(format!("engine {} writes no log", other.name()))),
    }
    Ok(store)
}

/// Host memory the devices of `config` hold at most, bytes, under a tree of at most
/// `tree_pages` pages changed at most `page_changes` times, with `syncs` syncs:
/// - flash: the FTL's tables and the array once every block has been programmed (the FTL
///   cycles through all of them: [`SsdConfig::estimated_programmed_memory_bytes`]);
/// - PCM: the lines written (`pcm-only`: two image slots per tree page at most, the
///   lowest, as freed slots are reused first; `ipl-p`: every block's log area; both: the
///   two metadata slots), each [`LINE_HOST_BYTES`] and allocated 64 at a time; and their
///   wear counters' higher planes ([`higher_plane_bytes_bound`]) after the line writes:
///   per page change at most an image (`pcm-only`) or a flush of its log sector
///   (`ipl-p`), per commit (a sync, or an `ipl-p` merge) a metadata slot.
pub(crate) fn host_bytes_bound(config: &EngineConfig, tree_pages: u64, page_changes: u64, syncs: u64) -> u64 {
    let layout = Layout::new(config);
    let mut bytes = 0u64;
    if config.kind.has_flash() {
        bytes = ssd_config(config, &layout).estimated_programmed_memory_bytes();
    }
    if config.kind.has_pcm() {
        let chunk_lines = 64;
        let lines_of = |bytes: u64| bytes.div_ceil(64);
        let meta_lines = lines_of(layout.meta_bytes as u64);
        let (data, data_writes, commits) = match config.kind {
            EngineKind::PcmOnly => {
                let slots = tree_pages.saturating_mul(2).saturating_add(2).min(u64::from(layout.image_slots));
                let page_lines = lines_of(layout.page_bytes as u64);
                (slots.saturating_mul(layout.page_bytes as u64), page_changes.saturating_mul(page_lines), syncs)
            }
            _ => {
                // A flush takes at most a log sector and its header, in whole units; a
                // block merges when its area lacks room for one, so at most once per
                // area less a flush (and once more) of flushed units.
                let flush =
                    (UNIT_HEADER_BYTES as u64 + u64::from(config.log_sector_bytes)).next_multiple_of(layout.pcm_unit);
                let room = layout.log_area_bytes.saturating_sub(flush) + 1;
                let merges = u64::from(layout.blocks).saturating_add(page_changes.saturating_mul(flush) / room);
                (layout.pcm_meta_base, page_changes.saturating_mul(lines_of(flush)), syncs.saturating_add(merges))
            }
        };
        // Whole chunks; the metadata slots may straddle one chunk more than they cover.
        let data_lines = lines_of(data).div_ceil(chunk_lines).saturating_mul(chunk_lines);
        let meta_lines_held = ((2 * meta_lines).div_ceil(chunk_lines) + 1).saturating_mul(chunk_lines);
        bytes = bytes
            .saturating_add(data_lines.saturating_add(meta_lines_held).saturating_mul(LINE_HOST_BYTES))
            .saturating_add(higher_plane_bytes_bound(data_lines, data_writes))
            .saturating_add(higher_plane_bytes_bound(2 * meta_lines, commits.saturating_mul(meta_lines)));
    }
    bytes
}

fn ssd_config(config: &EngineConfig, layout: &Layout) -> SsdConfig {
    let mut ssd = SsdConfig { seed: config.seed, content: PageContent::Bytes, ..SsdConfig::default() };
    let pages_per_block = (config.erase_block_bytes / config.flash_page_bytes()).max(2);
    let needed = layout.flash_pages();
    let blocks = (needed as f64 / (1.0 - OVERPROVISION) / f64::from(pages_per_block)).ceil() as u32 + 16;
    ssd.flash.packages = 1;
    ssd.flash.planes_per_package = 1;
    ssd.flash.blocks_per_plane = blocks;
    ssd.flash.pages_per_block = pages_per_block;
    ssd.flash.page_bytes = config.flash_page_bytes();
    ssd.flash.spare_bytes = 16;
    ssd.flash.partial_programming = config.kind == EngineKind::Ipl;
    ssd.ftl.overprovision = OVERPROVISION;
    ssd
}

/// The devices with the layout and the simulated clock: every device operation the
/// engine makes.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    pub dev: Devices,
    pub layout: Layout,
    /// Time the engine charges per flash operation beside the array's own
    /// ([`crate::config::FlashTime::charges`]).
    charges: FlashCharges,
    /// Simulated time, ns.
    pub now_ns: u64,
    /// PCM bytes written (before differential writing).
    pub pcm_bytes_written: u64,
    /// Page images written.
    pub image_writes: u64,
    /// Simulated time spent writing page images, ns.
    pub image_write_ns: u64,
    /// Log writes (`ipl`'s sector programs, `ipl-p`'s PCM writes) and their time, ns.
    pub log_writes: u64,
    pub log_write_ns: u64,
    /// Log reads (`ipl`'s log page reads, `ipl-p`'s PCM reads) and their time, ns.
    pub log_reads: u64,
    pub log_read_ns: u64,
}

impl Store {
    /// The store of `config` over `dev`, its clock at the devices' (`dev.clock_ns`).
    pub fn new(config: &EngineConfig, dev: Devices) -> Store {
        let now_ns = dev.clock_ns;
        Store {
            dev,
            layout: Layout::new(config),
            charges: config.flash_time.charges(config.flash_page_bytes()),
            now_ns,
            pcm_bytes_written: 0,
            image_writes: 0,
            image_write_ns: 0,
            log_writes: 0,
            log_write_ns: 0,
            log_reads: 0,
            log_read_ns: 0,
        }
    }

    /// Admits one PCM write (the FTL admits its own flash operations).
    fn admit_pcm(&mut self) -> Result<(), KvError> {
        match &mut self.dev.flash {
            Some(ftl) => ftl.admit()?,
            None => self.dev.switch.admit().map_err(|_| KvError::PowerCut)?,
        }
        Ok(())
    }

    fn ftl(&mut self) -> &mut PageFtl {
        self.dev.flash.as_mut().expect("this engine has flash")
    }

    fn pcm(&mut self) -> &mut Pcm {
        self.dev.pcm.as_mut().expect("this engine has PCM")
    }

    fn flash_write(&mut self, lpn: u64, bytes: Vec<u8>) -> Result<(), KvError> {
        let now = self.now_ns;
        self.now_ns = self.ftl().write(lpn, PageData::Bytes(bytes), now)? + self.charges.write_ns;
        Ok(())
    }

    fn flash_read(&mut self, lpn: u64) -> Result<Option<Vec<u8>>, KvError> {
        if !self.ftl().is_mapped(lpn) {
            return Ok(None);
        }
        let now = self.now_ns;
        let (data, done) = self.ftl().read(lpn, now)?;
        self.now_ns = done + self.charges.read_ns;
        Ok(match data {
            PageData::Bytes(bytes) => Some(bytes),
            _ => None,
        })
    }

    fn pcm_write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), KvError> {
        self.admit_pcm()?;
        self.now_ns += self.pcm().storage_write(addr, bytes)?;
        self.pcm_bytes_written += bytes.len() as u64;
        Ok(())
    }

    fn pcm_read(&mut self, addr: u64, len: usize) -> Result<Vec<u8>, KvError> {
        let mut buf = vec![0u8; len];
        self.now_ns += self.pcm().storage_read(addr, &mut buf)?;
        Ok(buf)
    }

    /// Writes a page image into an image slot.
    pub fn write_image(&mut self, slot: u32, image: Vec<u8>) -> Result<(), KvError> {
        let start_ns = self.now_ns;
        self.write_image_parts(slot, image)?;
        self.image_writes += 1;
        self.image_write_ns += self.now_ns - start_ns;
        Ok(())
    }

    fn write_image_parts(&mut self, slot: u32, image: Vec<u8>) -> Result<(), KvError> {
        debug_assert_eq!(image.len(), self.layout.page_bytes);
        match self.layout.kind {
            EngineKind::PcmOnly => self.pcm_write(u64::from(slot) * self.layout.page_bytes as u64, &image),
            _ => {
                let f = self.layout.flash_per_page;
                if f == 1 {
                    return self.flash_write(u64::from(slot), image);
                }
                for (i, part) in image.chunks(self.layout.flash_page_bytes).enumerate() {
                    self.flash_write(u64::from(slot) * f + i as u64, part.to_vec())?;
                }
                Ok(())
            }
        }
    }

    /// Reads a page image from an image slot (`None`: nothing there).
    pub fn read_image(&mut self, slot: u32) -> Result<Option<Vec<u8>>, KvError> {
        match self.layout.kind {
            EngineKind::PcmOnly => {
                let page = self.layout.page_bytes;
                self.pcm_read(u64::from(slot) * page as u64, page).map(Some)
            }
            _ => {
                let f = self.layout.flash_per_page;
                if f == 1 {
                    return self.flash_read(u64::from(slot));
                }
                let mut out = Vec::with_capacity(self.layout.page_bytes);
                for i in 0..f {
                    match self.flash_read(u64::from(slot) * f + i)? {
                        Some(bytes) => out.extend_from_slice(&bytes),
                        None => return Ok(None),
                    }
                }
                Ok(Some(out))
            }
        }
    }

    /// Tells the FTL an image slot's flash pages are garbage. The FTL forgets them
    /// (`PageFtl::discard`) without writing a trim record: a slot no committed metadata
    /// names is never read, and recovery discards every such slot again, so the engine
    /// needs no durable trim and pays no flash program for one.
    pub fn discard_image(&mut self, slot: u32) -> Result<(), KvError> {
        if self.layout.kind == EngineKind::PcmOnly {
            return Ok(());
        }
        let f = self.layout.flash_per_page;
        for i in 0..f {
            self.ftl().discard(u64::from(slot) * f + i)?;
        }
        Ok(())
    }

    /// `ipl-p`: writes bytes at `offset` of a block's PCM log area.
    pub fn pcm_log_write(&mut self, block: u32, offset: u64, bytes: &[u8]) -> Result<(), KvError> {
        let addr = u64::from(block) * self.layout.log_area_bytes + offset;
        let start_ns = self.now_ns;
        self.pcm_write(addr, bytes)?;
        self.count_log_write(start_ns);
        Ok(())
    }

    fn count_log_write(&mut self, start_ns: u64) {
        self.log_writes += 1;
        self.log_write_ns += self.now_ns - start_ns;
    }

    fn count_log_read(&mut self, start_ns: u64) {
        self.log_reads += 1;
        self.log_read_ns += self.now_ns - start_ns;
    }

    /// `ipl-p`: reads `len` bytes at `offset` of a block's PCM log area.
    pub fn pcm_log_read(&mut self, block: u32, offset: u64, len: usize) -> Result<Vec<u8>, KvError> {
        let addr = u64::from(block) * self.layout.log_area_bytes + offset;
        let start_ns = self.now_ns;
        let bytes = self.pcm_read(addr, len)?;
        self.count_log_read(start_ns);
        Ok(bytes)
    }

    /// `ipl`: programs log sector `sector` of a block (512 B, partial programming).
    pub fn flash_log_program(&mut self, block: u32, sector: u32, bytes: Vec<u8>) -> Result<(), KvError> {
        debug_assert_eq!(bytes.len(), SECTOR_BYTES as usize);
        let spp = self.layout.sectors_per_log_page;
        let lpn = self.layout.log_lpn(block, sector / spp);
        let now = self.now_ns;
        self.now_ns =
            self.ftl().program_sector(lpn, sector % spp, &PageData::Bytes(bytes), now)? + self.charges.sector_ns;
        self.count_log_write(now);
        Ok(())
    }

    /// `ipl`: reads log page `log_page` of a block, with its programmed-sector mask
    /// (`None` when the page has no flash copy).
    pub fn flash_log_read(&mut self, block: u32, log_page: u32) -> Result<Option<(Vec<u8>, u64)>, KvError> {
        let lpn = self.layout.log_lpn(block, log_page);
        let Some(mask) = self.ftl().sector_mask(lpn) else {
            // A page written whole (never, for log pages) or unmapped.
            return Ok(None);
        };
        let start_ns = self.now_ns;
        let bytes = self.flash_read(lpn)?;
        self.count_log_read(start_ns);
        Ok(bytes.map(|bytes| (bytes, mask)))
    }

    /// `ipl`: drops a block's log pages after a merge (new sectors go to fresh pages).
    /// Like [`Self::discard_image`], the FTL forgets them without a trim record: recovery
    /// tells a stale generation's sectors apart and discards them again.
    pub fn flash_log_discard(&mut self, block: u32) -> Result<(), KvError> {
        for k in 0..self.layout.log_pages {
            let lpn = self.layout.log_lpn(block, k);
            self.ftl().discard(lpn)?;
        }
        Ok(())
    }

    /// Writes metadata slot `slot` (0 or 1): header and body.
    pub fn write_meta(&mut self, slot: u32, seq: u64, body: &[u8]) -> Result<(), KvError> {
        let mut bytes = Vec::with_capacity(META_HEADER_BYTES + body.len());
        bytes.extend_from_slice(&META_MAGIC.to_le_bytes());
        bytes.extend_from_slice(&(body.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&seq.to_le_bytes());
        bytes.extend_from_slice(&nvmdb_device::flash::fingerprint64(body).to_le_bytes());
        bytes.extend_from_slice(body);
        assert!(bytes.len() <= self.layout.meta_bytes, "metadata outgrew its slot");
        if self.layout.kind.has_pcm() {
            let addr = self.layout.pcm_meta_base + u64::from(slot) * self.layout.meta_bytes as u64;
            return self.pcm_write(addr, &bytes);
        }
        let fp = self.layout.flash_page_bytes;
        let base = self.layout.flash_meta_base + u64::from(slot) * self.layout.flash_meta_pages;
        for (i, part) in bytes.chunks(fp).enumerate() {
            let mut page = part.to_vec();
            page.resize(fp, 0);
            self.flash_write(base + i as u64, page)?;
        }
        Ok(())
    }

    /// Reads metadata slot `slot`: its sequence number and body, or `None` when the slot
    /// holds no whole, checksummed metadata (never written, or torn by a power loss).
    pub fn read_meta(&mut self, slot: u32) -> Result<Option<(u64, Vec<u8>)>, KvError> {
        let bytes = if self.layout.kind.has_pcm() {
            let addr = self.layout.pcm_meta_base + u64::from(slot) * self.layout.meta_bytes as u64;
            let header = self.pcm_read(addr, META_HEADER_BYTES)?;
            let Some(len) = meta_len(&header, self.layout.meta_bytes) else { return Ok(None) };
            let mut bytes = header;
            bytes.extend(self.pcm_read(addr + META_HEADER_BYTES as u64, len)?);
            bytes
        } else {
            let fp = self.layout.flash_page_bytes;
            let base = self.layout.flash_meta_base + u64::from(slot) * self.layout.flash_meta_pages;
            let Some(first) = self.flash_read(base)? else { return Ok(None) };
            let Some(len) = meta_len(&first, self.layout.meta_bytes) else { return Ok(None) };
            let total = META_HEADER_BYTES + len;
            let mut bytes = first;
            for i in 1..total.div_ceil(fp) {
                match self.flash_read(base + i as u64)? {
                    Some(page) => bytes.extend_from_slice(&page),
                    None => return Ok(None),
                }
            }
            bytes.truncate(total);
            bytes
        };
        let seq = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
        let sum = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
        let body = bytes[META_HEADER_BYTES..].to_vec();
        Ok((nvmdb_device::flash::fingerprint64(&body) == sum).then_some((seq, body)))
    }
}

/// The body length a metadata header announces, if the header is one.
fn meta_len(header: &[u8], slot_bytes: usize) -> Option<usize> {
    let magic = u32::from_le_bytes(header.get(..4)?.try_into().ok()?);
    let len = u32::from_le_bytes(header.get(4..8)?.try_into().ok()?) as usize;
    (magic == META_MAGIC && META_HEADER_BYTES + len <= slot_bytes).then_some(len)
}
