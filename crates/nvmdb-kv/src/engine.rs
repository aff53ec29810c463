//! The engine: a B+-tree over fixed-size pages in an LRU buffer pool, with page images
//! copied on write into image slots, page changes logged per erase block (`ipl`,
//! `ipl-p`), merges, group commit and recovery. `docs/kv.md` describes the design.

use nvmdb_device::flash::SECTOR_BYTES;
use nvmdb_device::{Activity, Cut};
use nvmdb_flash::PageStore;
use serde::Serialize;

use crate::config::{EngineConfig, EngineKind};
use crate::devices::{Devices, Store};
use crate::page::{Change, Node, Page, Record, MAX_VALUE_BYTES};
use crate::pool::{Frame, Frames};
use crate::KvError;

/// Marks a page without an image slot.
const NO_SLOT: u32 = u32::MAX;
/// Bytes of an `ipl` log sector's header: the block's log generation and the record bytes.
const SECTOR_HEADER_BYTES: usize = 6;
/// Bytes of an `ipl-p` log unit's header: the record bytes.
const UNIT_HEADER_BYTES: usize = 2;
/// Record bytes a page's in-memory log sector holds (a 512 B sector less its header).
const LOG_ROOM: usize = SECTOR_BYTES as usize - SECTOR_HEADER_BYTES;

/// What the committed metadata holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Meta {
    root: u32,
    next_page: u32,
    next_lsn: u64,
    /// Image slot of each page.
    table: Vec<u32>,
    /// Each block's log: generation and committed length (bytes in PCM, sectors in flash).
    logs: Vec<(u32, u32)>,
}

impl Meta {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + 4 * self.table.len() + 8 * self.logs.len());
        out.extend_from_slice(&self.root.to_le_bytes());
        out.extend_from_slice(&self.next_page.to_le_bytes());
        out.extend_from_slice(&self.next_lsn.to_le_bytes());
        for slot in &self.table {
            out.extend_from_slice(&slot.to_le_bytes());
        }
        for (generation, len) in &self.logs {
            out.extend_from_slice(&generation.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        out
    }

    fn decode(bytes: &[u8], blocks: usize) -> Option<Meta> {
        let u32_at = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
        let root = u32_at(0)?;
        let next_page = u32_at(4)?;
        let next_lsn = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
        let pages = next_page as usize;
        if bytes.len() != 16 + 4 * pages + 8 * blocks {
            return None;
        }
        let table = (0..pages).map(|p| u32_at(16 + 4 * p)).collect::<Option<Vec<_>>>()?;
        let at = 16 + 4 * pages;
        let logs = (0..blocks).map(|b| Some((u32_at(at + 8 * b)?, u32_at(at + 8 * b + 4)?))).collect::<Option<_>>()?;
        Some(Meta { root, next_page, next_lsn, table, logs })
    }
}

/// One flush of one page's records into its block's log area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Unit {
    /// Byte offset (`ipl-p`) or sector index (`ipl`).
    at: u32,
    /// Record bytes.
    len: u32,
    /// The page the records change.
    page: u32,
}

/// A block's log area as the engine tracks it.
#[derive(Debug, Clone, Default)]
struct BlockLog {
    generation: u32,
    /// Space used: bytes (`ipl-p`, a multiple of the PCM unit) or sectors (`ipl`).
    used: u32,
    /// The units written since the last merge, in write order.
    units: Vec<Unit>,
}

/// A snapshot of the engine's counters. Device counters are cumulative over the devices'
/// lives; [`Stats::since`] gives the difference between two snapshots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Operations done (insert, update, delete, get, scan).
    pub ops: u64,
    /// Syncs done (group commits asked for).
    pub syncs: u64,
    /// Metadata commits written (by syncs and by merges).
    pub commits: u64,
    /// Simulated time, ns.
    pub sim_ns: u64,
    /// Flash pages read.
    pub flash_page_reads: u64,
    /// Flash pages programmed (engine writes, FTL garbage-collection copies).
    pub flash_page_writes: u64,
    /// Flash 512 B sectors programmed by partial programming (`ipl` log).
    pub flash_sector_writes: u64,
    /// Flash block erases.
    pub flash_erases: u64,
    /// PCM bytes the engine wrote (before differential writing).
    pub pcm_bytes_written: u64,
    /// PCM cells programmed.
    pub pcm_bits_written: u64,
    /// Log merges.
    pub merges: u64,
    /// Page images written (evictions and syncs of whole pages, new pages, merges).
    pub page_image_writes: u64,
    /// Simulated time spent writing page images, ns.
    pub page_image_write_ns: u64,
    /// Flash energy, pJ.
    pub flash_energy_pj: u64,
    /// PCM energy, pJ.
    pub pcm_energy_pj: u64,
    /// Wear: the most-erased flash block's erase count.
    pub flash_erases_max: u64,
    /// Wear: the most-programmed PCM cell's program count.
    pub pcm_cell_writes_max: u64,
    /// Log writes: `ipl`'s 512 B sector programs, `ipl-p`'s PCM writes of a page's
    /// records (a flush).
    pub log_writes: u64,
    /// Simulated time spent in log writes, ns.
    pub log_write_ns: u64,
    /// Log reads: `ipl`'s reads of a flash log page, `ipl-p`'s PCM reads of a flush's
    /// records (page fetches, merges and recovery).
    pub log_reads: u64,
    /// Simulated time spent in log reads, ns.
    pub log_read_ns: u64,
}

impl Stats {
    /// Counter-wise `self - earlier`; the wear maxima are kept as they are now.
    pub fn since(&self, earlier: &Stats) -> Stats {
        Stats {
            ops: self.ops - earlier.ops,
            syncs: self.syncs - earlier.syncs,
            commits: self.commits - earlier.commits,
            sim_ns: self.sim_ns - earlier.sim_ns,
            flash_page_reads: self.flash_page_reads - earlier.flash_page_reads,
            flash_page_writes: self.flash_page_writes - earlier.flash_page_writes,
            flash_sector_writes: self.flash_sector_writes - earlier.flash_sector_writes,
            flash_erases: self.flash_erases - earlier.flash_erases,
            pcm_bytes_written: self.pcm_bytes_written - earlier.pcm_bytes_written,
            pcm_bits_written: self.pcm_bits_written - earlier.pcm_bits_written,
            merges: self.merges - earlier.merges,
            page_image_writes: self.page_image_writes - earlier.page_image_writes,
            page_image_write_ns: self.page_image_write_ns - earlier.page_image_write_ns,
            flash_energy_pj: self.flash_energy_pj - earlier.flash_energy_pj,
            pcm_energy_pj: self.pcm_energy_pj - earlier.pcm_energy_pj,
            flash_erases_max: self.flash_erases_max,
            pcm_cell_writes_max: self.pcm_cell_writes_max,
            log_writes: self.log_writes - earlier.log_writes,
            log_write_ns: self.log_write_ns - earlier.log_write_ns,
            log_reads: self.log_reads - earlier.log_reads,
            log_read_ns: self.log_read_ns - earlier.log_read_ns,
        }
    }

    /// Counter-wise `self + other` (two spans of one run, such as before and after a power
    /// loss); the wear maxima are the larger.
    pub fn plus(&self, other: &Stats) -> Stats {
        Stats {
            ops: self.ops + other.ops,
            syncs: self.syncs + other.syncs,
            commits: self.commits + other.commits,
            sim_ns: self.sim_ns + other.sim_ns,
            flash_page_reads: self.flash_page_reads + other.flash_page_reads,
            flash_page_writes: self.flash_page_writes + other.flash_page_writes,
            flash_sector_writes: self.flash_sector_writes + other.flash_sector_writes,
            flash_erases: self.flash_erases + other.flash_erases,
            pcm_bytes_written: self.pcm_bytes_written + other.pcm_bytes_written,
            pcm_bits_written: self.pcm_bits_written + other.pcm_bits_written,
            merges: self.merges + other.merges,
            page_image_writes: self.page_image_writes + other.page_image_writes,
            page_image_write_ns: self.page_image_write_ns + other.page_image_write_ns,
            flash_energy_pj: self.flash_energy_pj + other.flash_energy_pj,
            pcm_energy_pj: self.pcm_energy_pj + other.pcm_energy_pj,
            flash_erases_max: self.flash_erases_max.max(other.flash_erases_max),
            pcm_cell_writes_max: self.pcm_cell_writes_max.max(other.pcm_cell_writes_max),
            log_writes: self.log_writes + other.log_writes,
            log_write_ns: self.log_write_ns + other.log_write_ns,
            log_reads: self.log_reads + other.log_reads,
            log_read_ns: self.log_read_ns + other.log_read_ns,
        }
    }

    /// Total energy, pJ.
    pub fn energy_pj(&self) -> u64 {
        self.flash_energy_pj + self.pcm_energy_pj
    }

    /// Operations per simulated second (0 when no time passed).
    pub fn ops_per_s(&self) -> f64 {
        if self.sim_ns == 0 {
            0.0
        } else {
            self.ops as f64 * 1e9 / self.sim_ns as f64
        }
    }
}

/// An [`Engine::recover`] that failed, with the devices it was given.
#[derive(Debug)]
pub struct RecoveryFailure {
    /// Why it failed ([`KvError::PowerCut`]: the power was cut during recovery).
    pub error: KvError,
    /// The devices, as the failure left them.
    pub devices: Devices,
}

/// The key-value engine. A clone is the engine in the same state, its devices included:
/// run on, it makes the same device operations and counts as the original would.
#[derive(Debug, Clone)]
pub struct Engine {
    config: EngineConfig,
    store: Store,
    root: u32,
    next_page: u32,
    next_lsn: u64,
    /// Current image slot of each page.
    table: Vec<u32>,
    committed: Meta,
    meta_seq: u64,
    free_slots: Vec<u32>,
    /// Page ids below `next_page` that no tree page uses (freed by merges); reused first.
    free_pages: Vec<u32>,
    logs: Vec<BlockLog>,
    frames: Frames,
    ops: u64,
    syncs: u64,
    commits: u64,
    merges: u64,
    recovery_ns: u64,
    /// Set once a device write was refused: the engine only hands its devices back.
    cut: bool,
}

impl Engine {
    /// A new, empty engine on fresh devices.
    pub fn new(config: EngineConfig) -> Result<Engine, KvError> {
        let devices = Devices::new(&config)?;
        Engine::start(config, devices).map_err(|failure| failure.error)
    }

    /// Reopens an engine after a power loss from what its devices hold (the devices
    /// [`Engine::crash`] handed back): every volatile structure (buffer pool, page table,
    /// free slots, log indexes) is rebuilt from the committed metadata and the log areas.
    /// The time this takes is [`Engine::recovery_ns`].
    pub fn open(config: EngineConfig, devices: Devices) -> Result<Engine, KvError> {
        Engine::recover(config, devices).map_err(|failure| failure.error)
    }

    /// [`Engine::open`], giving the devices back when it fails: a power cut during
    /// recovery (an `ipl` block's merge) leaves them, power restored, to be
    /// opened again.
    pub fn recover(config: EngineConfig, devices: Devices) -> Result<Engine, Box<RecoveryFailure>> {
        if let Err(error) = config.validate() {
            return Err(Box::new(RecoveryFailure { error, devices }));
        }
        Engine::start(config, devices)
    }

    /// Cuts the power before device write number `index` of the devices' lives: that write
    /// and every later one fail with [`KvError::PowerCut`].
    pub fn cut_power_before(&mut self, index: u64) {
        self.store.dev.cut_power_before(index);
    }

    /// The last power cut reached: the device write it refused (0-based, as
    /// [`Engine::cut_power_before`] counts) and what the engine was doing (`host`,
    /// `flush`: writing pages back, `merge`, `commit`: a sync's metadata write, `gc`: the
    /// FTL's garbage collection, `recovery`).
    pub fn last_cut(&mut self) -> Option<Cut> {
        self.store.dev.last_cut()
    }

    /// Device writes made so far (the index the next write would have), counting the
    /// FTL's garbage-collection copies and erases.
    pub fn device_writes(&mut self) -> u64 {
        self.store.dev.device_writes()
    }

    /// Drops every volatile structure, as a power loss does, and hands back the devices
    /// with the power restored: the cut is cleared, and the FTL has rebuilt its mapping
    /// from the flash alone ([`nvmdb_flash::ftl::PageFtl::reopen`]), since its tables are
    /// volatile too.
    pub fn crash(self) -> Devices {
        let mut dev = self.store.dev;
        dev.clock_ns = self.store.now_ns;
        dev.power_cycle();
        dev
    }

    /// Simulated time the last [`Engine::open`] spent recovering, ns.
    pub fn recovery_ns(&self) -> u64 {
        self.recovery_ns
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    fn start(config: EngineConfig, dev: Devices) -> Result<Engine, Box<RecoveryFailure>> {
        let mut engine = Engine {
            store: Store::new(&config, dev),
            root: 0,
            next_page: 0,
            next_lsn: 1,
            table: Vec::new(),
            committed: Meta::default(),
            meta_seq: 0,
            free_slots: Vec::new(),
            free_pages: Vec::new(),
            logs: Vec::new(),
            frames: Frames::new(),
            ops: 0,
            syncs: 0,
            commits: 0,
            merges: 0,
            recovery_ns: 0,
            cut: false,
            config,
        };
        engine.store.dev.set_activity(Activity::Recovery);
        match engine.recover_state() {
            Ok(()) => {
                engine.store.dev.set_activity(Activity::Host);
                Ok(engine)
            }
            Err(error) => Err(Box::new(RecoveryFailure { error, devices: engine.crash() })),
        }
    }

    fn blocks_used(&self, pages: u32) -> usize {
        if self.config.kind.logs() {
            pages.div_ceil(self.config.pages_per_block()) as usize
        } else {
            0
        }
    }

    fn block_of(&self, page: u32) -> usize {
        (page / self.config.pages_per_block()) as usize
    }

    fn recover_state(&mut self) -> Result<(), KvError> {
        let start_ns = self.store.now_ns;
        let mut newest: Option<(u64, Vec<u8>)> = None;
        for slot in 0..2 {
            if let Some((seq, body)) = self.store.read_meta(slot)? {
                if newest.as_ref().is_none_or(|(s, _)| seq > *s) {
                    newest = Some((seq, body));
                }
            }
        }
        let meta = match newest {
            Some((seq, body)) => {
                self.meta_seq = seq;
                let pages = u32::from_le_bytes(body.get(4..8).and_then(|b| b.try_into().ok()).unwrap_or([0; 4]));
                let blocks = self.blocks_used(pages);
                Meta::decode(&body, blocks).ok_or_else(|| KvError::Corrupt("metadata does not decode".into()))?
            }
            None => Meta::default(),
        };
        self.root = meta.root;
        self.next_page = meta.next_page;
        self.next_lsn = meta.next_lsn.max(1);
        self.table = meta.table.clone();
        let mut used = vec![false; self.store.layout.image_slots as usize];
        for &slot in &self.table {
            if slot != NO_SLOT {
                used[slot as usize] = true;
            }
        }
        self.free_slots = (0..self.store.layout.image_slots).rev().filter(|&s| !used[s as usize]).collect();
        // Every page of the committed tree has an image (a sync writes every dirty page
        // first), so the pages without one are the free pages.
        self.free_pages = (0..self.next_page).rev().filter(|&p| self.table[p as usize] == NO_SLOT).collect();
        // Slots no committed metadata names may still hold pages the FTL maps (images
        // written after the last commit, or freed slots whose discard the FTL forgot in
        // the power loss): discard them again so garbage collection can reclaim them.
        if self.config.kind.has_flash() {
            for slot in self.free_slots.clone() {
                self.store.discard_image(slot)?;
            }
        }
        self.logs =
            meta.logs.iter().map(|&(generation, _)| BlockLog { generation, used: 0, units: Vec::new() }).collect();
        self.committed = meta;
        if self.config.kind == EngineKind::Ipl {
            // Log pages of blocks the committed state does not have may still be mapped
            // (their discards are forgotten in a power loss); new sectors must go to
            // erased pages.
            for block in self.logs.len()..self.store.layout.blocks as usize {
                self.store.flash_log_discard(block as u32)?;
            }
        }
        let mut stale_blocks = Vec::new();
        for block in 0..self.logs.len() {
            if self.recover_log(block)? {
                stale_blocks.push(block);
            }
        }
        if self.next_page == 0 {
            // A fresh database: one empty leaf as the root, not yet written anywhere.
            self.root = self.alloc_page()?;
            let page = Page::empty_leaf(self.root);
            self.install(page, true)?;
        }
        for block in stale_blocks {
            self.merge(block)?;
        }
        self.recovery_ns = self.store.now_ns - start_ns;
        Ok(())
    }

    /// Rebuilds a block's log index from its log area; true when the area holds records
    /// written after the last commit of the same generation that a flash sector cannot
    /// forget (`ipl`): the block is then merged before the engine runs.
    fn recover_log(&mut self, block: usize) -> Result<bool, KvError> {
        let (generation, committed_len) = self.committed.logs[block];
        let mut units = Vec::new();
        let mut used = committed_len;
        let mut stale = false;
        match self.config.kind {
            EngineKind::IplP => {
                let bytes = self.store.pcm_log_read(block as u32, 0, committed_len as usize)?;
                let unit = self.store.layout.pcm_unit as usize;
                let mut at = 0usize;
                while at < bytes.len() {
                    let len = usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
                    let body = bytes
                        .get(at + UNIT_HEADER_BYTES..at + UNIT_HEADER_BYTES + len)
                        .ok_or_else(|| KvError::Corrupt(format!("block {block}: log unit overruns the log")))?;
                    let records = Record::decode_all(body)?;
                    let first =
                        records.first().ok_or_else(|| KvError::Corrupt(format!("block {block}: empty log unit")))?;
                    units.push(Unit { at: at as u32, len: len as u32, page: first.page });
                    at += (UNIT_HEADER_BYTES + len).next_multiple_of(unit);
                }
            }
            EngineKind::Ipl => {
                let spp = self.store.layout.sectors_per_log_page;
                for k in 0..self.store.layout.log_pages {
                    let Some((bytes, mask)) = self.store.flash_log_read(block as u32, k)? else { continue };
                    for s in 0..spp {
                        if mask & (1 << s) == 0 {
                            continue;
                        }
                        let index = k * spp + s;
                        used = used.max(index + 1);
                        let sector = &bytes[(s * SECTOR_BYTES) as usize..((s + 1) * SECTOR_BYTES) as usize];
                        let sector_generation = u32::from_le_bytes(sector[..4].try_into().expect("4 bytes"));
                        if sector_generation != generation {
                            continue;
                        }
                        if index >= committed_len {
                            stale = true;
                            continue;
                        }
                        let len = usize::from(u16::from_le_bytes([sector[4], sector[5]]));
                        let body = sector
                            .get(SECTOR_HEADER_BYTES..SECTOR_HEADER_BYTES + len)
                            .ok_or_else(|| KvError::Corrupt(format!("block {block}: log sector overruns")))?;
                        let records = Record::decode_all(body)?;
                        let first = records
                            .first()
                            .ok_or_else(|| KvError::Corrupt(format!("block {block}: empty log sector")))?;
                        units.push(Unit { at: index, len: len as u32, page: first.page });
                    }
                }
                units.sort_by_key(|u| u.at);
            }
            _ => {}
        }
        self.logs[block] = BlockLog { generation, used, units };
        Ok(stale)
    }

    fn check_live(&self) -> Result<(), KvError> {
        if self.cut {
            Err(KvError::PowerCut)
        } else {
            Ok(())
        }
    }

    /// Runs `work` with the devices' writes reported as `activity`, then sets back what the
    /// engine was doing.
    fn doing<T>(
        &mut self,
        activity: Activity,
        work: impl FnOnce(&mut Engine) -> Result<T, KvError>,
    ) -> Result<T, KvError> {
        let was = self.store.dev.set_activity(activity);
        let out = work(self);
        self.store.dev.set_activity(was);
        out
    }

    /// Runs `f`, marking the engine cut if the power was.
    fn guarded<T>(&mut self, f: impl FnOnce(&mut Engine) -> Result<T, KvError>) -> Result<T, KvError> {
        self.check_live()?;
        let out = f(self);
        if out.as_ref().is_err_and(|e| *e == KvError::PowerCut) {
            self.cut = true;
        }
        out
    }

    // ---- buffer pool -------------------------------------------------------------

    /// Makes room for one more frame.
    fn make_room(&mut self) -> Result<(), KvError> {
        while self.frames.len() as u64 >= self.config.buffer_pages() {
            let victim = self.frames.oldest().expect("a full pool has frames");
            self.doing(Activity::Flush, |e| e.write_back(victim))?;
            self.frames.remove(victim);
        }
        Ok(())
    }

    fn install(&mut self, page: Page, dirty: bool) -> Result<(), KvError> {
        self.make_room()?;
        self.frames.insert(page, dirty);
        Ok(())
    }

    /// Brings a page into the pool (reading its image and applying its logged records).
    fn fetch(&mut self, id: u32) -> Result<&mut Frame, KvError> {
        if self.frames.contains(id) {
            return Ok(self.frames.touch(id));
        }
        let (page, _) = self.read_page(id, self.table[id as usize], None)?;
        self.install(page, false)?;
        Ok(self.frames.get_mut(id))
    }

    /// A page as its image in `slot` and the records of its block's log (those in units
    /// before `upto` when given) make it.
    fn read_page(&mut self, id: u32, slot: u32, upto: Option<u32>) -> Result<(Page, usize), KvError> {
        if slot == NO_SLOT {
            return Err(KvError::Corrupt(format!("page {id} has no image")));
        }
        let image = self
            .store
            .read_image(slot)?
            .ok_or_else(|| KvError::Corrupt(format!("page {id}: image slot {slot} is empty")))?;
        let mut page =
            Page::decode(image).ok_or_else(|| KvError::Corrupt(format!("page {id}: image does not decode")))?;
        if page.id != id {
            return Err(KvError::Corrupt(format!("page {id}: slot {slot} holds page {}", page.id)));
        }
        let mut applied = 0;
        if self.config.kind.logs() {
            let block = self.block_of(id);
            let units: Vec<Unit> = self.logs[block]
                .units
                .iter()
                .filter(|u| u.page == id && upto.is_none_or(|limit| u.at < limit))
                .copied()
                .collect();
            for unit in units {
                for record in self.read_unit(block as u32, &unit)? {
                    if record.page == id && record.lsn > page.lsn {
                        page.apply(record.lsn, &record.change);
                        applied += 1;
                    }
                }
            }
        }
        Ok((page, applied))
    }

    fn read_unit(&mut self, block: u32, unit: &Unit) -> Result<Vec<Record>, KvError> {
        let body = match self.config.kind {
            EngineKind::IplP => {
                self.store.pcm_log_read(block, u64::from(unit.at) + UNIT_HEADER_BYTES as u64, unit.len as usize)?
            }
            _ => {
                let spp = self.store.layout.sectors_per_log_page;
                let (bytes, _) = self.store.flash_log_read(block, unit.at / spp)?.ok_or_else(|| {
                    KvError::Corrupt(format!("block {block}: log page of sector {} is gone", unit.at))
                })?;
                let at = ((unit.at % spp) * SECTOR_BYTES) as usize + SECTOR_HEADER_BYTES;
                bytes[at..at + unit.len as usize].to_vec()
            }
        };
        Record::decode_all(&body)
    }

    /// Writes a frame's changes to the devices (its records, or its image) and marks it clean.
    fn write_back(&mut self, id: u32) -> Result<(), KvError> {
        let frame = self.frames.get(id);
        if !frame.dirty {
            return Ok(());
        }
        if self.config.kind.logs() && self.table[id as usize] != NO_SLOT && !frame.whole {
            self.flush_log(id)?;
        } else {
            let image = frame.page.encode(self.config.page_bytes as usize);
            self.write_image(id, image)?;
        }
        let frame = self.frames.get_mut(id);
        frame.dirty = false;
        frame.whole = false;
        frame.log.clear();
        Ok(())
    }

    /// Writes a page image: into the page's uncommitted slot when it has one, otherwise
    /// into a free slot (the committed image is never overwritten).
    fn write_image(&mut self, id: u32, image: Vec<u8>) -> Result<(), KvError> {
        let current = self.table[id as usize];
        let slot = if current != NO_SLOT && current != self.committed_slot(id) { current } else { self.alloc_slot()? };
        self.write_slot(slot, image)?;
        self.table[id as usize] = slot;
        Ok(())
    }

    fn write_slot(&mut self, slot: u32, image: Vec<u8>) -> Result<(), KvError> {
        self.store.write_image(slot, image)
    }

    fn committed_slot(&self, id: u32) -> u32 {
        self.committed.table.get(id as usize).copied().unwrap_or(NO_SLOT)
    }

    fn alloc_slot(&mut self) -> Result<u32, KvError> {
        self.free_slots.pop().ok_or_else(|| KvError::Full("no free page image slot".into()))
    }

    fn alloc_page(&mut self) -> Result<u32, KvError> {
        if let Some(id) = self.free_pages.pop() {
            return Ok(id);
        }
        if self.next_page >= self.config.capacity_pages {
            return Err(KvError::Full(format!("the tree needs more than {} pages", self.config.capacity_pages)));
        }
        let id = self.next_page;
        self.next_page += 1;
        self.table.push(NO_SLOT);
        let blocks = self.blocks_used(self.next_page);
        while self.logs.len() < blocks {
            self.logs.push(BlockLog::default());
        }
        Ok(id)
    }

    // ---- logging and merging -------------------------------------------------------

    /// Writes a page's in-memory log sector to its block's log area, merging the block
    /// first when the area has no room.
    fn flush_log(&mut self, id: u32) -> Result<(), KvError> {
        let records = std::mem::take(&mut self.frames.get_mut(id).log);
        if records.is_empty() {
            return Ok(());
        }
        let block = self.block_of(id);
        if !self.log_has_room(block, records.len()) {
            self.merge(block)?;
        }
        let log = &self.logs[block];
        let at = log.used;
        match self.config.kind {
            EngineKind::IplP => {
                let unit = self.store.layout.pcm_unit as usize;
                let mut bytes = Vec::with_capacity((UNIT_HEADER_BYTES + records.len()).next_multiple_of(unit));
                bytes.extend_from_slice(&(records.len() as u16).to_le_bytes());
                bytes.extend_from_slice(&records);
                bytes.resize(bytes.len().next_multiple_of(unit), 0);
                self.store.pcm_log_write(block as u32, u64::from(at), &bytes)?;
                self.logs[block].used += bytes.len() as u32;
            }
            _ => {
                let mut sector = Vec::with_capacity(SECTOR_BYTES as usize);
                sector.extend_from_slice(&log.generation.to_le_bytes());
                sector.extend_from_slice(&(records.len() as u16).to_le_bytes());
                sector.extend_from_slice(&records);
                sector.resize(SECTOR_BYTES as usize, 0);
                self.store.flash_log_program(block as u32, at, sector)?;
                self.logs[block].used += 1;
            }
        }
        self.logs[block].units.push(Unit { at, len: records.len() as u32, page: id });
        Ok(())
    }

    fn log_has_room(&self, block: usize, record_bytes: usize) -> bool {
        let log = &self.logs[block];
        match self.config.kind {
            EngineKind::IplP => {
                let need = (UNIT_HEADER_BYTES + record_bytes).next_multiple_of(self.store.layout.pcm_unit as usize);
                u64::from(log.used) + need as u64 <= self.store.layout.log_area_bytes
            }
            _ => log.used < self.store.layout.log_sectors,
        }
    }

    /// Merges a block: each page with records gets a new image of its committed state
    /// (when it has committed records) and of its current state, the metadata commits the
    /// new committed images with the block's log emptied, and the log area is reused.
    /// The committed state does not change, so a merge may run at any point. Its device
    /// writes are reported as [`Activity::Merge`].
    fn merge(&mut self, block: usize) -> Result<(), KvError> {
        self.doing(Activity::Merge, |e| e.merge_block(block))
    }

    fn merge_block(&mut self, block: usize) -> Result<(), KvError> {
        self.merges += 1;
        let committed_len = self.committed.logs.get(block).map_or(0, |l| l.1);
        let mut pages: Vec<u32> = self.logs[block].units.iter().map(|u| u.page).collect();
        pages.sort_unstable();
        pages.dedup();
        let page_bytes = self.config.page_bytes as usize;
        let mut new_committed = Vec::new();
        for id in pages {
            let old_committed = self.committed_slot(id);
            // A page the committed tree does not have (freed, or allocated since) has no
            // committed state to rebuild.
            let has_committed =
                old_committed != NO_SLOT && self.logs[block].units.iter().any(|u| u.page == id && u.at < committed_len);
            let mut committed_page = None;
            let mut committed_slot = old_committed;
            if has_committed {
                let (page, _) = self.read_page(id, old_committed, Some(committed_len))?;
                committed_slot = self.alloc_slot()?;
                self.write_slot(committed_slot, page.encode(page_bytes))?;
                committed_page = Some(page);
            }
            let current = self.table[id as usize];
            if current == NO_SLOT {
                // Freed, or reused for a page not written yet: its records are dead.
                new_committed.push((id, old_committed, committed_slot));
                continue;
            }
            let has_uncommitted = self.logs[block].units.iter().any(|u| u.page == id && u.at >= committed_len);
            if current == old_committed {
                if has_uncommitted {
                    let (page, _) = self.read_page(id, current, None)?;
                    if committed_page.as_ref() == Some(&page) {
                        self.table[id as usize] = committed_slot;
                    } else {
                        let slot = self.alloc_slot()?;
                        self.write_slot(slot, page.encode(page_bytes))?;
                        self.table[id as usize] = slot;
                    }
                } else {
                    self.table[id as usize] = committed_slot;
                }
            } else {
                let (page, applied) = self.read_page(id, current, None)?;
                if applied > 0 {
                    self.write_slot(current, page.encode(page_bytes))?;
                }
            }
            new_committed.push((id, old_committed, committed_slot));
        }
        let mut meta = self.committed.clone();
        for &(id, old, slot) in &new_committed {
            if old != slot {
                meta.table[id as usize] = slot;
            }
        }
        let generation = self.logs[block].generation + 1;
        if block < meta.logs.len() {
            meta.logs[block] = (generation, 0);
        }
        self.write_meta(&meta)?;
        self.committed = meta;
        for (id, old, new) in new_committed {
            if old != new && old != NO_SLOT && self.table[id as usize] != old {
                self.free_slot(old)?;
            }
        }
        if self.config.kind == EngineKind::Ipl {
            self.store.flash_log_discard(block as u32)?;
        }
        self.logs[block] = BlockLog { generation, used: 0, units: Vec::new() };
        Ok(())
    }

    fn free_slot(&mut self, slot: u32) -> Result<(), KvError> {
        self.store.discard_image(slot)?;
        self.free_slots.push(slot);
        Ok(())
    }

    /// Takes a page out of the tree: out of the pool, its uncommitted image slot freed
    /// (the committed one is freed by the next commit), its id free for reuse.
    fn free_page(&mut self, id: u32) -> Result<(), KvError> {
        if self.frames.contains(id) {
            self.frames.remove(id);
        }
        let slot = std::mem::replace(&mut self.table[id as usize], NO_SLOT);
        if slot != NO_SLOT && slot != self.committed_slot(id) {
            self.free_slot(slot)?;
        }
        self.free_pages.push(id);
        Ok(())
    }

    /// Replaces a resident page's entries without log records: the page is written whole
    /// at its next write-back (a merge's entries would not fit a log sector).
    fn rewrite(&mut self, id: u32, node: Node) -> Result<(), KvError> {
        let lsn = self.next_lsn;
        self.next_lsn += 1;
        let frame = self.fetch(id)?;
        frame.page = Page::new(id, lsn, node);
        frame.dirty = true;
        frame.whole = true;
        frame.log.clear();
        Ok(())
    }

    fn write_meta(&mut self, meta: &Meta) -> Result<(), KvError> {
        let seq = self.meta_seq + 1;
        let body = meta.encode();
        self.store.write_meta((seq % 2) as u32, seq, &body)?;
        self.meta_seq = seq;
        self.commits += 1;
        Ok(())
    }

    // ---- changes -----------------------------------------------------------------

    /// Applies a change to a resident page and logs it.
    fn change(&mut self, id: u32, change: Change) -> Result<(), KvError> {
        let lsn = self.next_lsn;
        self.next_lsn += 1;
        let logged = self.config.kind.logs() && self.table[id as usize] != NO_SLOT;
        let frame = self.fetch(id)?;
        frame.page.apply(lsn, &change);
        frame.dirty = true;
        if logged && !frame.whole {
            let record = Record { lsn, page: id, change };
            if frame.log.len() + record.encoded_len() > LOG_ROOM {
                self.flush_log(id)?;
            }
            let frame = self.frames.get_mut(id);
            record.encode_into(&mut frame.log);
        }
        Ok(())
    }

    /// The leaf for `key` and the path to it (each inner page and the child taken).
    fn descend(&mut self, key: u32) -> Result<(u32, Vec<(u32, u16)>), KvError> {
        let mut id = self.root;
        let mut path = Vec::new();
        loop {
            let frame = self.fetch(id)?;
            match &frame.page.node {
                Node::Leaf(_) => return Ok((id, path)),
                Node::Inner { keys, children } => {
                    let child = keys.partition_point(|k| *k <= key);
                    path.push((id, child as u16));
                    id = children[child];
                }
            }
        }
    }

    /// The leaf for `key` and its path, with room for `need` more bytes: full pages on
    /// the way are split first, so no page ever holds more than a page (not even in the
    /// middle of an operation, whose records may be written and merged at any time).
    fn leaf_with_room(&mut self, key: u32, need: usize) -> Result<(u32, Vec<(u32, u16)>), KvError> {
        let page_bytes = self.config.page_bytes as usize;
        loop {
            let (leaf, path) = self.descend(key)?;
            if self.fetch(leaf)?.page.size + need <= page_bytes {
                return Ok((leaf, path));
            }
            self.split(leaf, &path)?;
        }
    }

    /// Splits page `id` (reached by `path`) in two, adding the separator to its parent,
    /// or to a new root. When the parent has no room it is split instead (its parent
    /// first, and so on); the caller descends again.
    fn split(&mut self, id: u32, path: &[(u32, u16)]) -> Result<(), KvError> {
        if let Some((&(parent, _), above)) = path.split_last() {
            if self.fetch(parent)?.page.size + 8 > self.config.page_bytes as usize {
                return self.split(parent, above);
            }
        }
        let frame = self.fetch(id)?;
        let mid = frame.page.len() / 2;
        let (separator, right_node) = match &frame.page.node {
            Node::Leaf(leaf) => (leaf.keys()[mid], Node::Leaf(leaf.split_off_copy(mid))),
            Node::Inner { keys, children } => {
                (keys[mid], Node::Inner { keys: keys[mid + 1..].to_vec(), children: children[mid + 1..].to_vec() })
            }
        };
        self.change(id, Change::Truncate { keep: mid as u16 })?;
        let right = self.alloc_page()?;
        let lsn = self.next_lsn;
        self.next_lsn += 1;
        self.install(Page::new(right, lsn, right_node), true)?;
        match path.last() {
            Some(&(parent, child)) => {
                self.change(parent, Change::InnerInsert { slot: child, key: separator, child: right })
            }
            None => {
                let root = self.alloc_page()?;
                let lsn = self.next_lsn;
                self.next_lsn += 1;
                let node = Node::Inner { keys: vec![separator], children: vec![id, right] };
                self.install(Page::new(root, lsn, node), true)?;
                self.root = root;
                Ok(())
            }
        }
    }

    /// Underflow after a delete, from page `id` (reached by `path`) up. A leaf that is empty
    /// merges with a sibling (always possible: the sibling alone fits a page), and a leaf
    /// under a quarter of a page merges when the two fit in three quarters of one (so
    /// that the next insert does not split them again). An inner page left without keys
    /// (one child) merges with a sibling, the parent's separator pulled down between
    /// them, or, when the sibling is too full for that, takes one child from it through
    /// the parent. A merge keeps the left page, written whole, frees the right one and
    /// removes their separator from the parent, which may then underflow in turn; a root
    /// left with one child gives way to it. Every page involved is in the pool, and the
    /// whole change commits at the next sync (or not at all), like a split.
    fn rebalance(&mut self, mut id: u32, mut path: Vec<(u32, u16)>) -> Result<(), KvError> {
        let page_bytes = self.config.page_bytes as usize;
        while let Some((parent, child)) = path.pop() {
            let page = &self.fetch(id)?.page;
            let (is_leaf, must) = (matches!(page.node, Node::Leaf { .. }), page.is_empty());
            let underfull = must || (is_leaf && page.size < page_bytes / 4);
            if !underfull {
                return Ok(());
            }
            let child = usize::from(child);
            let Node::Inner { keys, children } = &self.fetch(parent)?.page.node else {
                unreachable!("a path holds inner pages")
            };
            let (sep_slot, left, right) =
                if child > 0 { (child - 1, children[child - 1], id) } else { (0, id, children[1]) };
            let separator = keys[sep_slot];
            let left_page = self.fetch(left)?.page.clone();
            let right_page = self.fetch(right)?.page.clone();
            let merged = left_page.merged_with(&right_page, separator, 0);
            let limit = if must { page_bytes } else { page_bytes * 3 / 4 };
            if merged.size <= limit {
                self.rewrite(left, merged.node)?;
                self.free_page(right)?;
                self.change(parent, Change::InnerDelete { slot: sep_slot as u16 })?;
                id = parent;
                continue;
            }
            if !must {
                return Ok(());
            }
            // An inner page without keys beside a sibling too full to take its child:
            // one child moves over from the sibling, its separator up to the parent.
            assert!(!is_leaf, "an empty leaf always fits beside its sibling");
            let (Node::Inner { keys: lk, children: lc }, Node::Inner { keys: rk, children: rc }) =
                (&left_page.node, &right_page.node)
            else {
                unreachable!("siblings of an inner page are inner pages")
            };
            if left == id {
                let node = Node::Inner { keys: vec![separator], children: vec![lc[0], rc[0]] };
                let rest = Node::Inner { keys: rk[1..].to_vec(), children: rc[1..].to_vec() };
                self.change(parent, Change::InnerSetKey { slot: sep_slot as u16, key: rk[0] })?;
                self.rewrite(left, node)?;
                self.rewrite(right, rest)?;
            } else {
                let last = lk.len() - 1;
                let node = Node::Inner { keys: vec![separator], children: vec![lc[last + 1], rc[0]] };
                self.change(parent, Change::InnerSetKey { slot: sep_slot as u16, key: lk[last] })?;
                self.change(left, Change::Truncate { keep: last as u16 })?;
                self.rewrite(right, node)?;
            }
            return Ok(());
        }
        // `id` is the root: a root inner page with one child gives way to it.
        if let Node::Inner { keys, children } = &self.fetch(id)?.page.node {
            if keys.is_empty() {
                self.root = children[0];
                self.free_page(id)?;
            }
        }
        Ok(())
    }

    fn check_value(value: &[u8]) -> Result<(), KvError> {
        if value.is_empty() || value.len() > MAX_VALUE_BYTES {
            return Err(KvError::Value(value.len()));
        }
        Ok(())
    }

    /// Inserts `key` with `value`, replacing an existing value; returns whether the key
    /// was present.
    pub fn insert(&mut self, key: u32, value: &[u8]) -> Result<bool, KvError> {
        Engine::check_value(value)?;
        self.guarded(|e| {
            let (leaf, _) = e.leaf_with_room(key, 5 + value.len())?;
            let found = e.fetch(leaf)?.page.keys().binary_search(&key);
            let change = match found {
                Ok(slot) => Change::LeafUpdate { slot: slot as u16, value: value.to_vec() },
                Err(slot) => Change::LeafInsert { slot: slot as u16, key, value: value.to_vec() },
            };
            e.change(leaf, change)?;
            e.ops += 1;
            Ok(found.is_ok())
        })
    }

    /// Replaces the value of a present key; returns whether it was present.
    pub fn update(&mut self, key: u32, value: &[u8]) -> Result<bool, KvError> {
        Engine::check_value(value)?;
        self.guarded(|e| {
            let (leaf, _) = e.leaf_with_room(key, value.len())?;
            let found = e.fetch(leaf)?.page.keys().binary_search(&key);
            if let Ok(slot) = found {
                e.change(leaf, Change::LeafUpdate { slot: slot as u16, value: value.to_vec() })?;
            }
            e.ops += 1;
            Ok(found.is_ok())
        })
    }

    /// Deletes a key; returns whether it was present. A leaf left empty, or small enough
    /// to share a page with a sibling, is merged into it (see `Engine::rebalance`).
    pub fn delete(&mut self, key: u32) -> Result<bool, KvError> {
        self.guarded(|e| {
            let (leaf, path) = e.descend(key)?;
            let found = e.fetch(leaf)?.page.keys().binary_search(&key);
            if let Ok(slot) = found {
                e.change(leaf, Change::LeafDelete { slot: slot as u16 })?;
                e.rebalance(leaf, path)?;
            }
            e.ops += 1;
            Ok(found.is_ok())
        })
    }

    /// The value of a key.
    pub fn get(&mut self, key: u32) -> Result<Option<Vec<u8>>, KvError> {
        self.guarded(|e| {
            let (leaf, _) = e.descend(key)?;
            let Node::Leaf(leaf) = &e.fetch(leaf)?.page.node else { unreachable!("descend ends at a leaf") };
            let value = leaf.keys().binary_search(&key).ok().map(|slot| leaf.value(slot).to_vec());
            e.ops += 1;
            Ok(value)
        })
    }

    /// The entries with `lo <= key <= hi`, in ascending key order.
    pub fn scan(&mut self, lo: u32, hi: u32) -> Result<Vec<(u32, Vec<u8>)>, KvError> {
        self.guarded(|e| {
            let mut out = Vec::new();
            if lo <= hi {
                e.scan_page(e.root, lo, hi, &mut out)?;
            }
            e.ops += 1;
            Ok(out)
        })
    }

    fn scan_page(&mut self, id: u32, lo: u32, hi: u32, out: &mut Vec<(u32, Vec<u8>)>) -> Result<(), KvError> {
        let children = match &self.fetch(id)?.page.node {
            Node::Leaf(leaf) => {
                let keys = leaf.keys();
                let from = keys.partition_point(|k| *k < lo);
                let to = keys.partition_point(|k| *k <= hi);
                out.extend((from..to).map(|i| (keys[i], leaf.value(i).to_vec())));
                return Ok(());
            }
            Node::Inner { keys, children } => {
                let from = keys.partition_point(|k| *k <= lo);
                let to = keys.partition_point(|k| *k <= hi);
                children[from..=to].to_vec()
            }
        };
        for child in children {
            self.scan_page(child, lo, hi, out)?;
        }
        Ok(())
    }

    /// Group commit: writes every dirty page's changes and then the metadata. Every
    /// operation before a completed sync survives a power loss. The metadata write is the
    /// commit point, and the last device write of a sync: freeing the slots the old
    /// committed state named only discards them in the FTL, which writes nothing.
    pub fn sync(&mut self) -> Result<(), KvError> {
        self.guarded(|e| {
            e.doing(Activity::Flush, |e| {
                for id in e.frames.dirty_pages() {
                    e.write_back(id)?;
                }
                Ok(())
            })?;
            let meta = Meta {
                root: e.root,
                next_page: e.next_page,
                next_lsn: e.next_lsn,
                table: e.table.clone(),
                logs: e.logs.iter().map(|l| (l.generation, l.used)).collect(),
            };
            e.doing(Activity::Commit, |e| e.write_meta(&meta))?;
            e.syncs += 1;
            let old = std::mem::replace(&mut e.committed, meta);
            for (id, &slot) in old.table.iter().enumerate() {
                if slot != NO_SLOT && slot != e.table[id] {
                    e.free_slot(slot)?;
                }
            }
            Ok(())
        })
    }

    /// The counters now.
    pub fn stats(&self) -> Stats {
        let mut stats = Stats {
            ops: self.ops,
            syncs: self.syncs,
            commits: self.commits,
            sim_ns: self.store.now_ns,
            merges: self.merges,
            pcm_bytes_written: self.store.pcm_bytes_written,
            page_image_writes: self.store.image_writes,
            page_image_write_ns: self.store.image_write_ns,
            log_writes: self.store.log_writes,
            log_write_ns: self.store.log_write_ns,
            log_reads: self.store.log_reads,
            log_read_ns: self.store.log_read_ns,
            ..Stats::default()
        };
        if let Some(ftl) = &self.store.dev.flash {
            let s = ftl.stats();
            stats.flash_page_reads = s.flash_page_reads;
            stats.flash_page_writes = s.flash_page_programs;
            stats.flash_sector_writes = s.flash_sector_programs;
            stats.flash_erases = s.block_erases;
            stats.flash_energy_pj = s.flash_energy_pj;
            stats.flash_erases_max = ftl.health().block_erases_max;
        }
        if let Some(pcm) = &self.store.dev.pcm {
            let s = pcm.stats();
            stats.pcm_bits_written = s.bits_written;
            stats.pcm_energy_pj = s.energy_pj(&pcm.config().metrics) + s.storage_energy_pj;
            stats.pcm_cell_writes_max = pcm.wear_report().max_cell_writes;
        }
        stats
    }

    /// Simulated time so far, ns (cheaper than [`Engine::stats`]).
    pub fn sim_ns(&self) -> u64 {
        self.store.now_ns
    }

    /// Pages the tree has.
    pub fn pages(&self) -> u32 {
        self.next_page - self.free_pages.len() as u32
    }

    /// Operations done so far.
    pub fn ops(&self) -> u64 {
        self.ops
    }

    /// Checks the tree and the engine's tables: keys ascending in every page and within
    /// the bounds the parent gives, every page at most a page long and every inner page
    /// with at least two children, no empty leaf but the root, all leaves at one depth,
    /// every allocated page either free or reachable exactly once, and every image slot
    /// committed, current or free (and only one of those unless committed and current
    /// agree). Returns the first violation.
    pub fn check(&mut self) -> Result<(), String> {
        let mut seen = vec![false; self.next_page as usize];
        for &id in &self.free_pages {
            if self.table[id as usize] != NO_SLOT || self.frames.contains(id) {
                return Err(format!("free page {id} has an image slot or a frame"));
            }
            // A free page reached from the root is then reported as reachable twice.
            if std::mem::replace(&mut seen[id as usize], true) {
                return Err(format!("page {id} is free twice"));
            }
        }
        let mut leaf_depth = None;
        let mut stack = vec![(self.root, 0usize, None::<u32>, None::<u32>)];
        while let Some((id, depth, lo, hi)) = stack.pop() {
            let seen_slot = seen.get_mut(id as usize).ok_or_else(|| format!("page {id} beyond {}", self.next_page))?;
            if std::mem::replace(seen_slot, true) {
                return Err(format!("page {id} is reachable twice, or free and reachable"));
            }
            let page = self.fetch(id).map_err(|e| format!("page {id}: {e}"))?.page.clone();
            if page.size > self.config.page_bytes as usize {
                return Err(format!("page {id} holds {} bytes", page.size));
            }
            let keys = page.keys();
            if keys.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("page {id}: keys not ascending"));
            }
            if keys.iter().any(|&k| lo.is_some_and(|lo| k < lo) || hi.is_some_and(|hi| k >= hi)) {
                return Err(format!("page {id}: a key outside its parent's bounds [{lo:?}, {hi:?})"));
            }
            match &page.node {
                Node::Leaf(leaf) => {
                    if leaf.is_empty() && id != self.root {
                        return Err(format!("leaf {id} is empty and not the root"));
                    }
                    if *leaf_depth.get_or_insert(depth) != depth {
                        return Err(format!("leaf {id} at depth {depth}, another at {leaf_depth:?}"));
                    }
                }
                Node::Inner { keys, children } => {
                    if keys.is_empty() || children.len() != keys.len() + 1 {
                        return Err(format!("inner page {id}: {} keys, {} children", keys.len(), children.len()));
                    }
                    for (i, &child) in children.iter().enumerate() {
                        let child_lo = if i == 0 { lo } else { Some(keys[i - 1]) };
                        let child_hi = if i == keys.len() { hi } else { Some(keys[i]) };
                        stack.push((child, depth + 1, child_lo, child_hi));
                    }
                }
            }
        }
        if let Some(id) = seen.iter().position(|s| !s) {
            return Err(format!("page {id} is not reachable"));
        }
        let mut owner = vec![0u8; self.store.layout.image_slots as usize];
        for (id, &slot) in self.table.iter().enumerate() {
            if slot != NO_SLOT {
                owner[slot as usize] |= 1;
            }
            let c = self.committed_slot(id as u32);
            if c != NO_SLOT && c != slot {
                owner[c as usize] |= 2;
            }
        }
        for &slot in &self.free_slots {
            owner[slot as usize] |= 4;
        }
        if let Some(slot) = owner.iter().position(|&o| o != 1 && o != 2 && o != 4) {
            return Err(format!("image slot {slot} is owned as {:03b} (free 4, committed 2, current 1)", owner[slot]));
        }
        if let Some(ftl) = &self.store.dev.flash {
            ftl.check_invariants()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Key counts of the root's children when the root is an inner page with two inner
    /// children.
    fn two_inner_children(engine: &mut Engine) -> Option<(usize, usize)> {
        let Node::Inner { children, .. } = engine.fetch(engine.root).unwrap().page.node.clone() else { return None };
        if children.len() != 2 {
            return None;
        }
        let mut counts = [0; 2];
        for (count, id) in counts.iter_mut().zip(children) {
            let page = &engine.fetch(id).unwrap().page;
            if matches!(page.node, Node::Leaf { .. }) {
                return None;
            }
            *count = page.len();
        }
        Some((counts[0], counts[1]))
    }

    /// Fills one inner page beside another, then deletes the other's keys until it has
    /// none: being unable to merge with its full sibling, it takes one child from it.
    /// `ascending` fills the right inner page and empties the left one; otherwise the
    /// reverse.
    fn an_inner_page_without_keys_takes_a_child_from_a_full_sibling(kind: EngineKind, ascending: bool) {
        let mut config = EngineConfig::new(kind, 0, 0);
        config.page_bytes = 1024;
        config.buffer_bytes = 8 * 1024;
        config.erase_block_bytes = 4 * 1024;
        config.log_area_bytes = 1024;
        config.capacity_pages = 600;
        let mut engine = Engine::new(config).unwrap();
        let full = (1024 - PAGE_HEADER_BYTES_INNER) / 8;
        let mut model = BTreeMap::new();
        let value = [b'v'; 64];
        let key_at = |i: u32| if ascending { i } else { 1_000_000 - i };
        let mut i = 0;
        loop {
            engine.insert(key_at(i), &value).unwrap();
            model.insert(key_at(i), value.to_vec());
            i += 1;
            let counts = two_inner_children(&mut engine);
            let filled = if ascending { counts.map(|c| c.1) } else { counts.map(|c| c.0) };
            if filled == Some(full) {
                break;
            }
            assert!(i < 5000, "{kind:?}: no inner page filled up");
        }
        engine.sync().unwrap();
        let mut rotated = false;
        for j in 0..i {
            let key = if ascending { key_at(j) } else { key_at(i - 1 - j) };
            assert!(engine.delete(key).unwrap());
            model.remove(&key);
            engine.check().unwrap_or_else(|e| panic!("{kind:?} after deleting {key}: {e}"));
            let counts = two_inner_children(&mut engine);
            let filled = if ascending { counts.map(|c| c.1) } else { counts.map(|c| c.0) };
            if filled == Some(full - 1) {
                rotated = true;
                break;
            }
        }
        assert!(rotated, "{kind:?}: the emptied inner page never took a child from its full sibling");
        let got: BTreeMap<u32, Vec<u8>> = engine.scan(0, u32::MAX).unwrap().into_iter().collect();
        assert_eq!(got, model);
        engine.sync().unwrap();
        let mut engine = Engine::open(engine.config().clone(), engine.crash()).unwrap();
        engine.check().unwrap();
        let got: BTreeMap<u32, Vec<u8>> = engine.scan(0, u32::MAX).unwrap().into_iter().collect();
        assert_eq!(got, model, "{kind:?}: after a power loss");
    }

    /// Page header and the first child of an inner page, bytes.
    const PAGE_HEADER_BYTES_INNER: usize = crate::page::PAGE_HEADER_BYTES + 4;

    /// Levels of the tree.
    fn depth(engine: &mut Engine) -> usize {
        let mut id = engine.root;
        let mut levels = 1;
        while let Node::Inner { children, .. } = &engine.fetch(id).unwrap().page.node {
            id = children[0];
            levels += 1;
        }
        levels
    }

    /// Deleting the low 97% of a three-level tree's keys in order empties whole inner
    /// pages: they merge with their siblings, and the tree loses a level.
    #[test]
    fn inner_pages_merge_and_the_tree_loses_a_level() {
        for kind in EngineKind::ALL {
            let mut config = EngineConfig::new(kind, 0, 0);
            config.page_bytes = 1024;
            config.buffer_bytes = 8 * 1024;
            config.erase_block_bytes = 4 * 1024;
            config.log_area_bytes = 1024;
            config.capacity_pages = 1200;
            let mut engine = Engine::new(config).unwrap();
            for k in 0..4000 {
                engine.insert(k, &[b'v'; 64]).unwrap();
            }
            engine.sync().unwrap();
            assert_eq!(depth(&mut engine), 3, "{kind:?}");
            for k in 0..3880 {
                assert!(engine.delete(k).unwrap());
                if k % 97 == 0 {
                    engine.check().unwrap_or_else(|e| panic!("{kind:?} after deleting {k}: {e}"));
                }
            }
            engine.sync().unwrap();
            engine.check().unwrap();
            assert_eq!(depth(&mut engine), 2, "{kind:?}: {} pages", engine.pages());
            let keys: Vec<u32> = engine.scan(0, u32::MAX).unwrap().into_iter().map(|(k, _)| k).collect();
            assert_eq!(keys, (3880..4000).collect::<Vec<_>>());
        }
    }

    #[test]
    fn an_inner_page_without_keys_takes_a_child_from_either_full_sibling() {
        for kind in EngineKind::ALL {
            an_inner_page_without_keys_takes_a_child_from_a_full_sibling(kind, true);
            an_inner_page_without_keys_takes_a_child_from_a_full_sibling(kind, false);
        }
    }
}
