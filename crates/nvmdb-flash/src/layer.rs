//! The one interface between storage layers: read/write/trim of logical pages.
//!
//! A layer is handed the simulated time at which a request reaches it and returns the
//! time at which the request completes. Layers own the devices below them (a
//! [`FlashArray`](nvmdb_device::FlashArray), and where they use one, a
//! [`Pcm`](nvmdb_device::Pcm) in storage mode) and keep their counters in
//! [`StoreStats`].

use nvmdb_device::{Activity, DeviceError, PageData, PowerSwitch};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Expected storage failures.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FlashError {
    #[error("logical page {lpn} is beyond the device's {pages} logical pages")]
    OutOfRange { lpn: u64, pages: u64 },
    #[error("device full: no free block for {0}")]
    Full(String),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("bad request: {0}")]
    Request(String),
    /// The store's [`PowerSwitch`] refused a device write: the power is cut, and the
    /// store's volatile state is no longer trustworthy until [`PageStore::power_cycle`].
    #[error("power cut: device write {0} refused")]
    PowerCut(u64),
    /// A stop was asked for ([`nvmdb_cancel::cancel`]): a replay stops before its next
    /// request.
    #[error("interrupted")]
    Interrupted(#[from] nvmdb_cancel::Interrupted),
}

/// Counters every layer keeps. Units are last in the name; a layer leaves at zero what
/// it does not have.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreStats {
    /// Logical pages written by the host.
    pub host_page_writes: u64,
    /// Logical pages read by the host.
    pub host_page_reads: u64,
    /// Logical pages trimmed by the host.
    pub host_page_trims: u64,
    /// Whole flash pages programmed (host data, GC copies and merges).
    pub flash_page_programs: u64,
    /// Flash partial (sector) programs (IPL's log sectors).
    pub flash_sector_programs: u64,
    /// 512 B sectors those partial programs wrote.
    pub flash_sectors_programmed: u64,
    /// Bytes of a flash page (the geometry's; 0 in a layer without flash): the unit in which
    /// [`StoreStats::flash_programs_in_pages`] counts a partial program.
    pub flash_page_bytes: u64,
    /// Flash pages read (host reads, GC and merge reads).
    pub flash_page_reads: u64,
    /// Flash block erases.
    pub block_erases: u64,
    /// Pages copied by garbage collection.
    pub gc_page_copies: u64,
    /// Whole pages the page FTL programmed for the layer above it (host writes and merge
    /// runs; not GC copies, not partial programs).
    pub data_page_writes: u64,
    /// Of `data_page_writes`, those whose logical page is the previous one's plus one: the
    /// logical sequentiality of the write stream reaching flash (a partial program in
    /// between breaks a run).
    pub sequential_page_writes: u64,
    /// Merges (log-block, IPL, PCM log buffer).
    pub merges: u64,
    /// Flushes of a buffer or log to flash.
    pub flushes: u64,
    /// Of `flushes`, those written as one sequential run of a whole block.
    pub sequential_flushes: u64,
    /// Flash time spent in garbage collection and merges, ns.
    pub gc_time_ns: u64,
    /// Flash energy, pJ.
    pub flash_energy_pj: u64,
    /// PCM energy, pJ.
    pub pcm_energy_pj: u64,
    /// PCM lines (64 B) read by the stack's PCM (a log area's, deduplication's).
    pub pcm_lines_read: u64,
    /// PCM lines written by the stack's PCM, whether or not a cell changed.
    pub pcm_lines_written: u64,
    /// PCM words (8 B) written with at least one changed cell.
    pub pcm_words_written: u64,
    /// PCM cells programmed (0, not counted, when `pcm_accounting` is `words`).
    pub pcm_bits_written: u64,
    /// The hottest PCM cell's program count (0, not counted, when `pcm_accounting` is
    /// `words`).
    pub pcm_max_cell_writes: u64,
    /// What the log area's PCM counted (`buffer.pcm_accounting`; `cells` without one).
    pub pcm_accounting: nvmdb_device::PcmAccounting,
    /// Host writes whose content was already stored (deduplication).
    pub dedup_pages_removed: u64,
    /// Fingerprint comparisons made by the fingerprint store: the lookups of host writes'
    /// content, and the searches of its upkeep (an entry removed when its page is freed or
    /// evicted from a bounded store, a location moved by garbage collection).
    pub dedup_comparisons: u64,
    /// The part of `dedup_comparisons` made by the lookups of host writes' content.
    pub dedup_lookup_comparisons: u64,
    /// Entries a bounded fingerprint store evicted (least recently used) to take a new one.
    pub dedup_evictions: u64,
    /// Deduplication lookups.
    pub dedup_lookups: u64,
    /// Log layers: host writes of a page with no flash copy, written straight through
    /// the FTL (case 1).
    pub direct_writes: u64,
    /// Log layers: host writes logged.
    pub logged_writes: u64,
    /// Log layers: host writes whose change could not be logged, written out of place
    /// through the FTL.
    pub out_of_place_writes: u64,
    /// Log layers: host writes that changed nothing (no-ops).
    pub unchanged_writes: u64,
    /// Log layers: pages written by merges.
    pub merge_page_writes: u64,
}

impl StoreStats {
    /// These counters with the flash array's own (programs, reads, erases, energy) and its
    /// page size filled in.
    pub fn with_flash(self, flash: &nvmdb_device::FlashArray) -> StoreStats {
        let stats = flash.stats();
        StoreStats {
            flash_page_programs: stats.page_programs,
            flash_sector_programs: stats.sector_programs,
            flash_sectors_programmed: stats.sectors_programmed,
            flash_page_bytes: u64::from(flash.geometry().page_bytes),
            flash_page_reads: stats.page_reads,
            block_erases: stats.block_erases,
            flash_energy_pj: stats.energy_pj,
            ..self
        }
    }

    /// Adds a PCM device's counters (energy, lines, words, and cells when it counts them).
    pub fn add_pcm(&mut self, pcm: &nvmdb_device::Pcm) {
        let p = pcm.stats();
        self.pcm_energy_pj += p.storage_energy_pj;
        self.pcm_lines_read += p.lines_read;
        self.pcm_lines_written += p.lines_written;
        self.pcm_words_written += p.words_written;
        if pcm.config().accounting.is_cells() {
            self.pcm_bits_written += p.bits_written;
            self.pcm_max_cell_writes = self.pcm_max_cell_writes.max(pcm.max_cell_writes());
        }
    }

    /// Flash programs in pages: each whole-page program one, each partial program the share
    /// of a page its sectors are (`sectors × 512 B ÷ flash_page_bytes`: one sector of a
    /// 4 KB page is 1/8).
    pub fn flash_programs_in_pages(&self) -> f64 {
        let partial = if self.flash_page_bytes == 0 {
            0.0
        } else {
            (self.flash_sectors_programmed * u64::from(nvmdb_device::flash::SECTOR_BYTES)) as f64
                / self.flash_page_bytes as f64
        };
        self.flash_page_programs as f64 + partial
    }

    /// [`StoreStats::flash_programs_in_pages`] per host page written (0 when nothing was
    /// written): whole-page programs and partial programs alike, in pages.
    pub fn write_amplification(&self) -> f64 {
        if self.host_page_writes == 0 {
            0.0
        } else {
            self.flash_programs_in_pages() / self.host_page_writes as f64
        }
    }

    /// Counter-wise difference `self − earlier` (a window of a run: the last of several
    /// passes). The page size, the accounting and the hottest cell's count are `self`'s:
    /// they describe the device, not the window.
    pub fn since(&self, earlier: &StoreStats) -> StoreStats {
        let StoreStats {
            host_page_writes,
            host_page_reads,
            host_page_trims,
            flash_page_programs,
            flash_sector_programs,
            flash_sectors_programmed,
            flash_page_bytes,
            flash_page_reads,
            block_erases,
            gc_page_copies,
            data_page_writes,
            sequential_page_writes,
            merges,
            flushes,
            sequential_flushes,
            gc_time_ns,
            flash_energy_pj,
            pcm_energy_pj,
            pcm_lines_read,
            pcm_lines_written,
            pcm_words_written,
            pcm_bits_written,
            pcm_max_cell_writes,
            pcm_accounting,
            dedup_pages_removed,
            dedup_comparisons,
            dedup_lookup_comparisons,
            dedup_evictions,
            dedup_lookups,
            direct_writes,
            logged_writes,
            out_of_place_writes,
            unchanged_writes,
            merge_page_writes,
        } = *self;
        StoreStats {
            host_page_writes: host_page_writes - earlier.host_page_writes,
            host_page_reads: host_page_reads - earlier.host_page_reads,
            host_page_trims: host_page_trims - earlier.host_page_trims,
            flash_page_programs: flash_page_programs - earlier.flash_page_programs,
            flash_sector_programs: flash_sector_programs - earlier.flash_sector_programs,
            flash_sectors_programmed: flash_sectors_programmed - earlier.flash_sectors_programmed,
            flash_page_bytes,
            flash_page_reads: flash_page_reads - earlier.flash_page_reads,
            block_erases: block_erases - earlier.block_erases,
            gc_page_copies: gc_page_copies - earlier.gc_page_copies,
            data_page_writes: data_page_writes - earlier.data_page_writes,
            sequential_page_writes: sequential_page_writes - earlier.sequential_page_writes,
            merges: merges - earlier.merges,
            flushes: flushes - earlier.flushes,
            sequential_flushes: sequential_flushes - earlier.sequential_flushes,
            gc_time_ns: gc_time_ns - earlier.gc_time_ns,
            flash_energy_pj: flash_energy_pj - earlier.flash_energy_pj,
            pcm_energy_pj: pcm_energy_pj - earlier.pcm_energy_pj,
            pcm_lines_read: pcm_lines_read - earlier.pcm_lines_read,
            pcm_lines_written: pcm_lines_written - earlier.pcm_lines_written,
            pcm_words_written: pcm_words_written - earlier.pcm_words_written,
            pcm_bits_written: pcm_bits_written - earlier.pcm_bits_written,
            pcm_max_cell_writes,
            pcm_accounting,
            dedup_pages_removed: dedup_pages_removed - earlier.dedup_pages_removed,
            dedup_comparisons: dedup_comparisons - earlier.dedup_comparisons,
            dedup_lookup_comparisons: dedup_lookup_comparisons - earlier.dedup_lookup_comparisons,
            dedup_evictions: dedup_evictions - earlier.dedup_evictions,
            dedup_lookups: dedup_lookups - earlier.dedup_lookups,
            direct_writes: direct_writes - earlier.direct_writes,
            logged_writes: logged_writes - earlier.logged_writes,
            out_of_place_writes: out_of_place_writes - earlier.out_of_place_writes,
            unchanged_writes: unchanged_writes - earlier.unchanged_writes,
            merge_page_writes: merge_page_writes - earlier.merge_page_writes,
        }
    }
}

/// Work a store has accepted but not yet carried to its final place in flash: log records
/// not yet merged into their data pages (IPL, d-PRAM, the PCM log) and pages held in the
/// DRAM write buffer. A run that ends with work pending has not paid for it; see
/// [`PageStore::drain`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// Log records that apply to a page and are not yet merged into it.
    pub log_records: u64,
    /// Logical pages with at least one such record.
    pub log_pages: u64,
    /// Pages in the DRAM write buffer not yet written to the layer below.
    pub dram_pages: u64,
}

/// Physical state that the counters do not capture: flash wear and space saved. Not
/// reset by [`PageStore::reset_stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreHealth {
    /// Erase blocks of the flash.
    pub blocks: u64,
    /// Erases a block survives.
    pub endurance: u64,
    /// Sum of all blocks' erase counts.
    pub block_erases_total: u64,
    /// The most-erased block's erase count.
    pub block_erases_max: u64,
    /// Logical pages mapped now.
    pub mapped_pages: u64,
    /// Physical pages holding live data now (fewer than `mapped_pages` under deduplication).
    pub live_physical_pages: u64,
}

impl StoreHealth {
    /// Flash pages saved by sharing (deduplication).
    pub fn flash_pages_saved(&self) -> u64 {
        self.mapped_pages.saturating_sub(self.live_physical_pages)
    }

    /// Fraction of the flash's total erase budget used so far by the most-worn block.
    pub fn wear_fraction(&self) -> f64 {
        if self.endurance == 0 {
            0.0
        } else {
            self.block_erases_max as f64 / self.endurance as f64
        }
    }
}

/// Runs `work` on `store` with its power switch's activity set to `activity` (what a crash
/// report says the engine was doing when a cut fell), then sets back the activity before;
/// a store without a switch just runs it.
pub fn with_activity<S: PageStore + ?Sized, T>(store: &mut S, activity: Activity, work: impl FnOnce(&mut S) -> T) -> T {
    let was = store.power_switch().map(|switch| switch.set_activity(activity));
    let result = work(store);
    if let (Some(was), Some(switch)) = (was, store.power_switch()) {
        switch.set_activity(was);
    }
    result
}

/// A storage layer over logical pages.
pub trait PageStore {
    /// Logical pages the layer exposes.
    fn logical_pages(&self) -> u64;
    /// Page size in bytes.
    fn page_bytes(&self) -> u32;
    /// Writes a whole logical page arriving at `now_ns`; returns its completion time.
    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError>;
    /// Writes a logical page of which the host wrote only bytes `written.0 ..
    /// written.0 + written.1` (the rest is the page's old content, read-modify-write);
    /// layers that log changes log at most those bytes. The default is [`PageStore::write`].
    fn write_range(&mut self, lpn: u64, data: PageData, written: (u32, u32), now_ns: u64) -> Result<u64, FlashError> {
        let _ = written;
        self.write(lpn, data, now_ns)
    }
    /// Writes a whole logical page of which every byte is new content, arriving at
    /// `now_ns`; returns its completion time. A log layer writes it out of place (its change
    /// is the whole page), whatever its delta policy: the ageing pass's writes
    /// (`nvmdb_workload::ageing`) take this path. The default is [`PageStore::write`].
    fn write_new(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        self.write(lpn, data, now_ns)
    }
    /// Reads a logical page arriving at `now_ns`; returns the data last written (or
    /// [`PageData::Empty`] / erased bytes for a never-written page) and the completion time.
    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError>;
    /// Discards a logical page arriving at `now_ns`; returns its completion time.
    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError>;
    /// The counters so far.
    fn stats(&self) -> StoreStats;
    /// Zeroes the counters (used to leave a warm-up out of the results).
    fn reset_stats(&mut self);
    /// Checks internal invariants (mapping one-to-one, valid counts, reference counts);
    /// returns a description of the first violation.
    fn check_invariants(&self) -> Result<(), String>;
    /// Cuts power and restores it: every volatile table is dropped and rebuilt from what
    /// the persistent devices (flash, PCM) hold, as after a real power loss between two
    /// requests. Counters are the simulator's and are kept. Layers that cannot recover
    /// return [`FlashError::Config`] naming why.
    fn power_cycle(&mut self) -> Result<(), FlashError> {
        Err(FlashError::Config("this storage layer cannot recover from a power loss".into()))
    }
    /// The one switch every device write of the stack passes through (flash programs and
    /// erases, PCM writes), for crash tests that cut the power before a given write; `None`
    /// for layers that cannot recover. [`PageStore::power_cycle`] restores the power.
    fn power_switch(&mut self) -> Option<&mut PowerSwitch> {
        None
    }
    /// What the store holds that is not yet in its final place (see [`Pending`]); layers
    /// without a log or buffer have nothing pending.
    fn pending(&self) -> Pending {
        Pending::default()
    }
    /// Carries every pending piece of work to flash at `now_ns` (merges every logical
    /// block with live log records, writes the DRAM buffer's pages down), counted and
    /// timed as the same work is during a run; returns its completion time. Afterwards
    /// [`PageStore::pending`] is all zero. Layers with nothing pending return `now_ns`.
    fn drain(&mut self, now_ns: u64) -> Result<u64, FlashError> {
        Ok(now_ns)
    }
    /// Wear and space figures (layers without flash of their own forward their inner
    /// layer's; the default reports nothing).
    fn health(&self) -> StoreHealth {
        StoreHealth::default()
    }
}
