//! The engine: a B+-tree over fixed-size pages in an LRU buffer pool, with page images
//! copied on write into image slots, page changes logged per erase block (`ipl`,
//! `ipl-p`), merges, group commit and recovery. `docs/kv.md` describes the design.

use nvmdb_device::{Activity, Cut};
use nvmdb_flash::PageStore;

use crate::config::EngineConfig;
use crate::devices::{Devices, Store};
use crate::page::{Change, Node, MAX_VALUE_BYTES};
use crate::pool::Frames;
use crate::KvError;

mod buffer;
mod layout;
mod log;
mod recovery;
mod stats;
mod tree;

use layout::{BlockLog, Meta, NO_SLOT};
pub use stats::Stats;

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
mod tests;
