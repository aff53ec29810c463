//! Byte layout of the persistent state in battery-backed SRAM. All integers are
//! little-endian. Offsets are computed from the configuration (see the crate README for
//! the table).

use nvmdb_device::FlashArray;

use crate::config::EnvyConfig;

/// `b"NVMENVY2"` as a little-endian u64: a formatted SRAM starts with it.
pub const MAGIC: u64 = u64::from_le_bytes(*b"NVMENVY2");

/// Header field offsets (the header is 64 bytes at address 0).
pub mod header {
    /// u64 magic.
    pub const MAGIC: u64 = 0;
    /// u64 sequence number of the next page inserted at the buffer's head.
    pub const HEAD_SEQ: u64 = 8;
    /// u64 sequence number of the page at the buffer's tail.
    pub const TAIL_SEQ: u64 = 16;
    /// u32 spare segments formatted (the length of the spare ring).
    pub const SPARES: u64 = 24;
    /// u32 page_bytes, u32 pages_per_segment, u32 segments, u32 buffer_pages: the
    /// geometry this state was formatted with.
    pub const GEOMETRY: u64 = 28;
    /// u64 logical pages formatted.
    pub const LOGICAL_PAGES: u64 = 44;
    /// u32 transaction open (1) or not (0), then u32 shadow entries recorded: written
    /// together, so commit is one atomic 8-byte write.
    pub const TXN: u64 = 52;
    /// u32 index into the spare ring of the spare the next clean copies into. It lies just
    /// before the cleaning record's phase, so one 8-byte write advances it and ends a
    /// clean.
    pub const SPARE_NEXT: u64 = 60;
}

/// Cleaning record field offsets (16 bytes at 64): u32 phase, u32 position, u32 victim
/// segment, u32 destination segment.
pub const CLEAN_RECORD: u64 = 64;

// The header's fields end where the cleaning record begins, the spare index last.
const _: () = assert!(header::TXN + 8 <= header::SPARE_NEXT && header::SPARE_NEXT + 4 == CLEAN_RECORD);

/// No clean in progress.
pub const PHASE_IDLE: u32 = 0;
/// Live pages are being copied out of the victim.
pub const PHASE_COPYING: u32 = 1;
/// The position points at the destination; the victim is to be erased.
pub const PHASE_ERASING: u32 = 2;

/// A page-table entry: where a logical page lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// Never written: reads as zeros.
    Unmapped,
    /// A flash page.
    Flash(u64),
    /// A write-buffer slot in SRAM.
    Sram(u32),
}

const SRAM_BIT: u32 = 1 << 31;

impl Entry {
    /// The 4-byte encoding: 0 unmapped, `ppn + 1` for flash, bit 31 | slot for SRAM.
    pub fn encode(self) -> u32 {
        match self {
            Entry::Unmapped => 0,
            Entry::Flash(ppn) => u32::try_from(ppn + 1).expect("flash page numbers fit below bit 31"),
            Entry::Sram(slot) => SRAM_BIT | slot,
        }
    }

    /// Decodes an entry.
    #[inline]
    pub fn decode(raw: u32) -> Entry {
        if raw == 0 {
            Entry::Unmapped
        } else if raw & SRAM_BIT != 0 {
            Entry::Sram(raw & !SRAM_BIT)
        } else {
            Entry::Flash(u64::from(raw - 1))
        }
    }
}

/// Where each region lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Position table: per cleanable position, u32 segment, u32 reserved, u64 the
    /// sequence number of its last clean (0 never cleaned).
    pub positions: u64,
    /// Spare ring: per spare, u32 an erased segment that no position holds.
    pub spares: u64,
    /// Active table: per partition, u32 the position flushes fill.
    pub actives: u64,
    /// Slot metadata: per buffer slot, u32 logical page, u32 home position.
    pub slot_meta: u64,
    /// Transaction shadow list: per entry, u32 logical page, u32 its page-table entry
    /// before the transaction.
    pub shadows: u64,
    /// Slot data: per buffer slot, one page.
    pub slot_data: u64,
    /// Page table: per logical page, a 4-byte [`Entry`].
    pub page_table: u64,
    /// Total bytes.
    pub total_bytes: u64,
}

impl Layout {
    /// The layout of a configuration.
    pub fn new(config: &EnvyConfig) -> Layout {
        let positions = u64::from(config.positions());
        let partitions = positions.div_ceil(u64::from(config.cleaning.partition_segments(config.positions())));
        let buffer = u64::from(config.buffer_pages);
        let positions_at = 80;
        let spares = positions_at + 16 * positions;
        let actives = spares + 4 * u64::from(config.spare_segments);
        let slot_meta = (actives + 4 * partitions).next_multiple_of(8);
        let shadows = slot_meta + 8 * buffer;
        let slot_data = shadows + 8 * u64::from(config.max_transaction_pages);
        let page_table = slot_data + buffer * u64::from(config.page_bytes);
        let total_bytes = page_table + 4 * config.logical_pages;
        Layout { positions: positions_at, spares, actives, slot_meta, shadows, slot_data, page_table, total_bytes }
    }
}

impl EnvyConfig {
    /// Host memory a system of this configuration holds, bytes (saturating: an overflow
    /// is refused anyway), from its layout: the flash array once every segment has been
    /// programmed ([`FlashArray::host_bytes_bound`], page bytes kept or not), the SRAM
    /// image ([`Layout`]), the controller's volatile tables (per flash page
    /// its owner and shadow index; per buffer slot its shadow index and flush time; per
    /// segment its live count, position, last clean, spare ring entry and partition cost),
    /// a clean's list of the victim's live pages (8 B each, a segment's at most, in a
    /// vector grown by doubling: its capacity, and the old half while it last grew) and a
    /// page of staging. The most a run holds: `tests/memory_estimate.rs` checks it against
    /// the measured peak.
    pub fn estimated_memory_bytes(&self) -> u64 {
        let flash = FlashArray::host_bytes_bound(&self.flash_geometry(), self.page_content(), false);
        let sram = Layout::new(self).total_bytes;
        let tables = self
            .flash_pages()
            .saturating_mul(4 + 4)
            .saturating_add(u64::from(self.buffer_pages).saturating_mul(4 + 8))
            .saturating_add(u64::from(self.segments).saturating_mul(4 + 4 + 4 + 8 + 4 + 4 + 24));
        let scratch = u64::from(self.pages_per_segment.max(4)).next_power_of_two().saturating_mul(8 * 3 / 2);
        flash
            .saturating_add(sram)
            .saturating_add(tables)
            .saturating_add(scratch)
            .saturating_add(u64::from(self.page_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CleaningPolicy;

    #[test]
    fn entries_round_trip() {
        for e in [Entry::Unmapped, Entry::Flash(0), Entry::Flash((1 << 31) - 3), Entry::Sram(0), Entry::Sram(12_345)] {
            assert_eq!(Entry::decode(e.encode()), e);
        }
        assert_eq!(Entry::Unmapped.encode(), 0, "zeroed SRAM must read as unmapped");
    }

    #[test]
    fn regions_follow_each_other_without_overlap() {
        let mut config = EnvyConfig::small(11, 16, 5, 0.5);
        config.spare_segments = 2;
        config.cleaning = CleaningPolicy::Hybrid { partition_segments: 4 };
        config.logical_pages = 80;
        let l = Layout::new(&config);
        // 9 positions, 2 spares, 3 partitions, 5 slots of 256 B, 64 shadow entries, 80
        // logical pages.
        assert_eq!(l.positions, CLEAN_RECORD + 16);
        assert_eq!(l.spares, l.positions + 16 * 9);
        assert_eq!(l.actives, l.spares + 4 * 2);
        assert!(l.slot_meta >= l.actives + 4 * 3 && l.slot_meta.is_multiple_of(8));
        assert_eq!(l.shadows, l.slot_meta + 8 * 5);
        assert_eq!(l.slot_data, l.shadows + 8 * 64);
        assert_eq!(l.page_table, l.slot_data + 5 * 256);
        assert_eq!(l.total_bytes, l.page_table + 4 * 80);
    }
}
