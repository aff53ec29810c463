//! eNVy's counters: integers, units last.

use serde::{Deserialize, Serialize};

/// Counters of one eNVy system since it was opened (or since `reset_stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvyStats {
    /// Host read operations (one per page touched).
    pub host_page_reads: u64,
    /// Host write operations (one per page touched).
    pub host_page_writes: u64,
    /// Sum of host read latencies, ns.
    pub host_read_ns: u64,
    /// Sum of host write latencies, ns.
    pub host_write_ns: u64,
    /// Host page reads served from the SRAM buffer.
    pub sram_read_hits: u64,
    /// Host page writes that found their page in the SRAM buffer.
    pub sram_write_hits: u64,
    /// Copy-on-writes into the buffer (page from flash or never written).
    pub copy_on_writes: u64,
    /// Host page writes that waited for a flush to free a buffer page.
    pub buffer_full_waits: u64,
    /// Time those writes waited, ns (part of `host_write_ns`).
    pub buffer_wait_ns: u64,
    /// Flash programs of pages flushed from the buffer.
    pub flush_programs: u64,
    /// Buffer slots dropped at the tail because a later copy or an abort superseded them.
    pub dead_slots_dropped: u64,
    /// Flash programs done by cleaning (live pages copied).
    pub clean_programs: u64,
    /// Pages locality gathering's redistribution wanted to move between neighbours.
    pub redistribution_wanted_pages: u64,
    /// Pages it moved (the rest found no free or live page at hand).
    pub redistributed_pages: u64,
    /// Cleans that erased a segment.
    pub cleans: u64,
    /// Segment erases.
    pub erases: u64,
    /// Pages of the segments those cleans erased (for their mean utilisation).
    pub cleaned_segment_pages: u64,
    /// Live pages those cleans found (= clean programs unless a cut intervened).
    pub cleaned_live_pages: u64,
    /// Cleans whose destination spare's bank was still busy (erasing or programming) when
    /// the clean was issued, so its copies queued behind that work.
    pub cleans_waiting_for_spare: u64,
    /// The time those cleans' copies queued, ns: from the clean's issue to when the
    /// destination's bank became free.
    pub spare_wait_ns: u64,
    /// Flushes whose target bank was still busy (erasing, cleaning or programming) when
    /// the flush was issued.
    pub flushes_queued: u64,
    /// The time those flushes queued behind their bank's work, ns.
    pub flush_queue_ns: u64,
    /// Cleans that recovery found interrupted and finished.
    pub cleans_resumed: u64,
    /// Cleans started by wear levelling.
    pub wear_level_cleans: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Transactions rolled back (by `abort` or by recovery).
    pub aborts: u64,
}

impl EnvyStats {
    /// The counts since `earlier`, a copy of these counters taken before: what they would
    /// hold had [`crate::Envy::reset_stats`] run then. Every field is named, so a counter
    /// added to the struct and not here fails to compile.
    pub fn since(&self, earlier: &EnvyStats) -> EnvyStats {
        EnvyStats {
            host_page_reads: self.host_page_reads - earlier.host_page_reads,
            host_page_writes: self.host_page_writes - earlier.host_page_writes,
            host_read_ns: self.host_read_ns - earlier.host_read_ns,
            host_write_ns: self.host_write_ns - earlier.host_write_ns,
            sram_read_hits: self.sram_read_hits - earlier.sram_read_hits,
            sram_write_hits: self.sram_write_hits - earlier.sram_write_hits,
            copy_on_writes: self.copy_on_writes - earlier.copy_on_writes,
            buffer_full_waits: self.buffer_full_waits - earlier.buffer_full_waits,
            buffer_wait_ns: self.buffer_wait_ns - earlier.buffer_wait_ns,
            flush_programs: self.flush_programs - earlier.flush_programs,
            dead_slots_dropped: self.dead_slots_dropped - earlier.dead_slots_dropped,
            clean_programs: self.clean_programs - earlier.clean_programs,
            redistribution_wanted_pages: self.redistribution_wanted_pages - earlier.redistribution_wanted_pages,
            redistributed_pages: self.redistributed_pages - earlier.redistributed_pages,
            cleans: self.cleans - earlier.cleans,
            erases: self.erases - earlier.erases,
            cleaned_segment_pages: self.cleaned_segment_pages - earlier.cleaned_segment_pages,
            cleaned_live_pages: self.cleaned_live_pages - earlier.cleaned_live_pages,
            cleans_waiting_for_spare: self.cleans_waiting_for_spare - earlier.cleans_waiting_for_spare,
            spare_wait_ns: self.spare_wait_ns - earlier.spare_wait_ns,
            flushes_queued: self.flushes_queued - earlier.flushes_queued,
            flush_queue_ns: self.flush_queue_ns - earlier.flush_queue_ns,
            cleans_resumed: self.cleans_resumed - earlier.cleans_resumed,
            wear_level_cleans: self.wear_level_cleans - earlier.wear_level_cleans,
            commits: self.commits - earlier.commits,
            aborts: self.aborts - earlier.aborts,
        }
    }

    /// Flash programs done by cleaning per page flushed from the write buffer (the paper's
    /// flash cleaning cost). NaN before the first flush.
    pub fn cleaning_cost(&self) -> f64 {
        self.clean_programs as f64 / self.flush_programs as f64
    }

    /// Mean utilisation of the segments cleaned: live pages found / pages cleaned.
    pub fn cleaned_utilization(&self) -> f64 {
        self.cleaned_live_pages as f64 / self.cleaned_segment_pages as f64
    }

    /// Mean host read latency, ns (NaN without reads).
    pub fn mean_read_ns(&self) -> f64 {
        self.host_read_ns as f64 / self.host_page_reads as f64
    }

    /// Mean host write latency, ns (NaN without writes).
    pub fn mean_write_ns(&self) -> f64 {
        self.host_write_ns as f64 / self.host_page_writes as f64
    }
}

/// Device energy of one eNVy system since it was opened (or since `reset_stats`), from
/// the device presets' per-operation energies: flash reads, programs and erases, and
/// battery-backed SRAM accesses (page table, write buffer, cleaning state).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvyEnergy {
    /// Flash energy, pJ.
    pub flash_pj: u64,
    /// SRAM energy, pJ.
    pub sram_pj: u64,
}
