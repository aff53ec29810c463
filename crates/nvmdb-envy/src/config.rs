//! Typed parameters with named presets. Every field names its unit and its source or the
//! reasoning behind the value. The seed text (Wu & Zwaenepoel, ASPLOS 1994) has lost most
//! of its numbers; where it has, the value is typical of 1994 hardware and says so.

use nvmdb_device::{FlashGeometry, FlashTiming, PageContent, VolatileParams};
use serde::{Deserialize, Serialize};

use crate::error::EnvyError;

/// Which segment the cleaner cleans, and where flushed pages go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "policy", deny_unknown_fields)]
pub enum CleaningPolicy {
    /// Clean the segment with the fewest live pages; flushes fill the cleaned segment.
    Greedy,
    /// Clean the segment cleaned longest ago; flushes fill the cleaned segment.
    Fifo,
    /// Flushed pages return to the segment they came from; a segment is cleaned when its
    /// free space runs out, and hot pages move to the lower neighbour, cold pages to the
    /// upper, while its cleaning frequency × cost is above the average. Identical to
    /// [`CleaningPolicy::Hybrid`] with one segment per partition.
    Locality,
    /// Adjoining segments grouped into partitions of `partition_segments`: locality
    /// gathering between partitions, FIFO within one.
    Hybrid {
        /// Segments per partition.
        partition_segments: u32,
    },
}

impl CleaningPolicy {
    /// `greedy`, `fifo`, `locality` or `hybrid`.
    pub fn name(self) -> &'static str {
        match self {
            CleaningPolicy::Greedy => "greedy",
            CleaningPolicy::Fifo => "fifo",
            CleaningPolicy::Locality => "locality",
            CleaningPolicy::Hybrid { .. } => "hybrid",
        }
    }

    /// Segments per partition under this policy, for `segments` cleanable segments:
    /// greedy and FIFO manage one partition of all segments.
    pub fn partition_segments(self, segments: u32) -> u32 {
        match self {
            CleaningPolicy::Greedy | CleaningPolicy::Fifo => segments,
            CleaningPolicy::Locality => 1,
            CleaningPolicy::Hybrid { partition_segments } => partition_segments.min(segments),
        }
    }

    /// The policy this one runs as on `segments` cleanable segments: hybrid with one
    /// segment per partition is locality gathering, and hybrid with one partition of
    /// every segment is FIFO. The engine reads a policy only through its partition size,
    /// whether it is greedy, and whether it manages one partition of all segments, so
    /// the two run alike step by step (`tests/integration/equivalent_policies.rs`); runs that differ
    /// only in a policy and its canonical form can share one simulation.
    pub fn canonical(self, segments: u32) -> CleaningPolicy {
        match self {
            CleaningPolicy::Hybrid { partition_segments: 1 } => CleaningPolicy::Locality,
            CleaningPolicy::Hybrid { partition_segments } if partition_segments >= segments => CleaningPolicy::Fifo,
            other => other,
        }
    }
}

/// An eNVy system's hardware and policy parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvyConfig {
    /// Bytes per eNVy page, the unit of copy-on-write, flushing and mapping. The paper
    /// chose a small page to save flash lifetime (a flush writes the whole page); its
    /// number is lost in the seed text. 256 B: one byte from each chip of a bank of 256
    /// byte-wide chips, so a page moves in one memory cycle.
    pub page_bytes: u32,
    /// Pages per segment. A segment is the erase unit across a bank: one erase block of
    /// every chip of the bank. 1994 chips (Intel 28F008SA, 1 MB) have 64 KB blocks, so a
    /// 256-chip bank's segment is 16 MB = 65,536 pages of 256 B.
    pub pages_per_segment: u32,
    /// Physical segments. `spare_segments` of them are always erased spares that cleaning
    /// copies into; the others hold data.
    pub segments: u32,
    /// Erased segments kept in reserve for cleaning. A clean copies into the spare erased
    /// longest ago, and the segment it erases joins the reserve. 1 in the 2 GB preset: the
    /// paper keeps a freshly erased segment so that a cleaning operation always finds a
    /// free one. More spares let a clean start while earlier cleans' erases still run in
    /// other banks (the parallel-banks extension), at the price of data segments: the
    /// highest utilisation is `(segments − spare_segments − 1) / segments`.
    #[serde(default = "default_spare_segments")]
    pub spare_segments: u32,
    /// Banks; segment `b` lies in bank `b % banks`. 2 GB of 1 MB chips in banks of 256
    /// is 8 banks. Without `parallel_banks` one long operation runs at a time, and the
    /// bank count changes no time.
    pub banks: u32,
    /// Logical pages of the linear address space.
    pub logical_pages: u64,
    /// SRAM write-buffer pages. Assumed 8 MB (half a segment): the seed text lost the
    /// figure; 1994 battery-backed SRAM cost several times flash per byte.
    pub buffer_pages: u32,
    /// The buffer flushes from its tail while it holds more pages than this. 7/8 of the
    /// buffer (assumed), so a burst of copy-on-writes finds free pages.
    pub flush_threshold_pages: u32,
    /// The cleaning policy.
    pub cleaning: CleaningPolicy,
    /// Program and erase in different banks at once (the paper's extension). Off: the
    /// controller runs one long flash operation at a time.
    pub parallel_banks: bool,
    /// Wear levelling: when the most-erased segment has this many more erases than the
    /// least-erased one, their data are swapped. `None` disables it.
    pub wear_threshold_erases: Option<u64>,
    /// Flash timing per page-wide operation, a parameter (the seed's figures are lost).
    /// Read 100 ns (1994 flash reads at DRAM-like speed; the 28F008SA's maximum access is
    /// 85 ns); program 9 µs (the Intel 28F008SA's typical 64 KB block write of 0.6 s, about
    /// 9 µs a byte, every chip of the bank programming its byte at once); erase 1.6 s (its
    /// typical 64 KB block erase; 10 s maximum). Sources and what is assumed in the crate
    /// README; `envy-sensitivity` measures the throughput and lifetime against them.
    pub flash: FlashTiming,
    /// SRAM access cost (nvmdb's battery-backed SRAM preset: 100 ns).
    pub sram: VolatileParams,
    /// Extra time to suspend a long flash operation to serve a read, ns. Assumed 1 µs.
    pub suspend_ns: u64,
    /// A host read of flash suspends a long program or erase in progress (on its bank with
    /// `parallel_banks`, on the controller without) instead of waiting for it. On in the
    /// presets: the paper's controller suspends a long operation to serve a host access.
    #[serde(default = "default_suspend_reads")]
    pub suspend_reads: bool,
    /// Program/erase cycles a segment survives: 100,000, the Intel 28F008SA's rating
    /// (100,000 block erase cycles, datasheet order number 290429).
    pub endurance_cycles: u64,
    /// Most pages one transaction may shadow (bounds the persistent shadow list).
    pub max_transaction_pages: u32,
    /// Locality gathering's redistribution step, an option: a clean moves the victim's
    /// live pages divided by this (at least one) between neighbouring partitions; 0 turns
    /// the redistribution off. 8 is nvmdb's choice (the paper gives no step), and
    /// hybrid's cost against greedy's turns on it (`envy-cleaning-locality`).
    #[serde(default = "default_redistribution_divisor")]
    pub redistribution_divisor: u32,
    /// Whether the flash array keeps its pages' bytes. On in the presets. Off, the system
    /// runs metadata-only: the engine takes no decision from a page's bytes, so every
    /// count, time, energy and page placement is what it is with them
    /// (`tests/integration/metadata_only.rs` runs both step by step), but the flash holds no data, so
    /// host reads, and the one recovery step that compares page bytes (a clean cut between
    /// a copy's program and its page-table write), fail with
    /// [`EnvyError::NoPageBytes`]. For update-only sizing runs (the cleaning experiments),
    /// where copying the pages' bytes is most of the simulator's host memory traffic.
    #[serde(default = "default_keep_page_bytes")]
    pub keep_page_bytes: bool,
}

fn default_suspend_reads() -> bool {
    EnvyConfig::PAPER_2GB.suspend_reads
}

fn default_spare_segments() -> u32 {
    EnvyConfig::PAPER_2GB.spare_segments
}

fn default_redistribution_divisor() -> u32 {
    EnvyConfig::PAPER_2GB.redistribution_divisor
}

fn default_keep_page_bytes() -> bool {
    EnvyConfig::PAPER_2GB.keep_page_bytes
}

/// Flash erase energy per 4 KB erased, pJ: 16.5 µJ, nvmdb's thesis figure (seed 000,
/// Table 2.2, stated per 4 KB). The paper gives no energies.
pub const ERASE_PJ_PER_4KB: u64 = 16_500_000;

/// The energy of erasing a segment of `segment_bytes`, pJ. A segment is one erase block
/// of every chip of a bank, all erased at once, so the energy is each chip's block erase
/// summed over the chips: [`ERASE_PJ_PER_4KB`] per 4 KB of the segment. The 2 GB
/// preset's 16 MB segment (256 chips × a 64 KB block) takes 67.6 mJ.
pub const fn segment_erase_pj(segment_bytes: u64) -> u64 {
    ERASE_PJ_PER_4KB * segment_bytes / 4096
}

/// Flash timing of the 1994 preset (see [`EnvyConfig::flash`]), for the 2 GB preset's
/// 16 MB segment.
pub const FLASH_1994: FlashTiming = FlashTiming {
    read_ns: 100,
    program_ns: 9_000,
    erase_ns: 1_600_000_000,
    // Energies are not modelled by the paper; nvmdb's thesis figures are per 4 KB,
    // scaled here to the bytes of one operation: a 256 B page (1/16) for reads and
    // programs, a 16 MB segment for an erase.
    read_pj: 9_500_000 / 16,
    program_pj: 76_100_000 / 16,
    erase_pj: segment_erase_pj(65_536 * 256),
};

impl EnvyConfig {
    /// The paper's 2 GB system: 128 segments of 16 MB in 8 banks, 256 B pages, an 8 MB
    /// SRAM write buffer, hybrid cleaning with 16-segment partitions, filled to 80 %.
    pub const PAPER_2GB: EnvyConfig = EnvyConfig {
        page_bytes: 256,
        pages_per_segment: 65_536,
        segments: 128,
        spare_segments: 1,
        banks: 8,
        logical_pages: 128 * 65_536 * 4 / 5,
        buffer_pages: 32_768,
        flush_threshold_pages: 28_672,
        cleaning: CleaningPolicy::Hybrid { partition_segments: 16 },
        parallel_banks: false,
        wear_threshold_erases: Some(100),
        flash: FLASH_1994,
        sram: VolatileParams::SRAM,
        suspend_ns: 1_000,
        suspend_reads: true,
        endurance_cycles: 100_000,
        max_transaction_pages: 4_096,
        redistribution_divisor: 8,
        keep_page_bytes: true,
    };

    /// A small system for tests and quick experiments: `segments` segments of
    /// `pages_per_segment` 256 B pages in one bank, a `buffer_pages` buffer, filled to
    /// `utilization`, with the 1994 timing and the erase energy of its segment size.
    pub fn small(segments: u32, pages_per_segment: u32, buffer_pages: u32, utilization: f64) -> EnvyConfig {
        let page_bytes = EnvyConfig::PAPER_2GB.page_bytes;
        let mut config = EnvyConfig {
            flash: FlashTiming {
                erase_pj: segment_erase_pj(u64::from(pages_per_segment) * u64::from(page_bytes)),
                ..FLASH_1994
            },
            segments,
            pages_per_segment,
            banks: 1,
            buffer_pages,
            flush_threshold_pages: buffer_pages - (buffer_pages / 8).max(1),
            cleaning: CleaningPolicy::Fifo,
            max_transaction_pages: 64,
            ..EnvyConfig::PAPER_2GB
        };
        config.set_utilization(utilization);
        config
    }

    /// All flash pages.
    pub fn flash_pages(&self) -> u64 {
        u64::from(self.segments) * u64::from(self.pages_per_segment)
    }

    /// Sets the logical size to `utilization` of all flash pages (rounded down, at least
    /// one page).
    pub fn set_utilization(&mut self, utilization: f64) {
        self.logical_pages = ((self.flash_pages() as f64 * utilization) as u64).max(1);
    }

    /// Logical pages / flash pages.
    pub fn utilization(&self) -> f64 {
        self.logical_pages as f64 / self.flash_pages() as f64
    }

    /// The highest utilisation the cleaner can always serve: every segment but the spares
    /// and one more's worth of pages may be live, so some segment always has a dead page.
    pub fn max_utilization(&self) -> f64 {
        f64::from(self.segments.saturating_sub(self.spare_segments.saturating_add(1))) / f64::from(self.segments)
    }

    /// The flash array's geometry: one block per segment, the segments spread over
    /// `banks` packages of one plane.
    pub fn flash_geometry(&self) -> FlashGeometry {
        FlashGeometry {
            packages: self.banks,
            planes_per_package: 1,
            blocks_per_plane: self.segments / self.banks.max(1),
            pages_per_block: self.pages_per_segment,
            page_bytes: self.page_bytes,
            spare_bytes: 0,
            endurance: self.endurance_cycles,
            partial_programming: false,
        }
    }

    /// What the flash keeps of a page: its bytes, or nothing.
    pub fn page_content(&self) -> PageContent {
        if self.keep_page_bytes {
            PageContent::Bytes
        } else {
            PageContent::None
        }
    }

    /// Bytes of the linear address space.
    #[inline]
    pub fn logical_bytes(&self) -> u64 {
        self.logical_pages * u64::from(self.page_bytes)
    }

    /// Segments the cleaner manages (all but the spares).
    pub fn positions(&self) -> u32 {
        self.segments - self.spare_segments
    }

    /// Whether a clean may move pages between partitions: only locality gathering and
    /// hybrid with at least two partitions (`redistribution_divisor` is read only then).
    pub fn redistributes(&self) -> bool {
        let positions = self.positions();
        let partitions = positions.div_ceil(self.cleaning.partition_segments(positions));
        !matches!(self.cleaning, CleaningPolicy::Greedy | CleaningPolicy::Fifo) && partitions >= 2
    }

    /// Checks that the parameters describe a working system.
    pub fn validate(&self) -> Result<(), EnvyError> {
        let bad = |m: String| Err(EnvyError::Config(m));
        if self.page_bytes == 0 || self.pages_per_segment < 2 || self.banks == 0 {
            return bad("page_bytes, banks must be positive and pages_per_segment at least 2".into());
        }
        if self.segments < 3 || !self.segments.is_multiple_of(self.banks) {
            return bad(format!(
                "segments ({}) must be at least 3 and a multiple of banks ({})",
                self.segments, self.banks
            ));
        }
        // Page-table entries hold a flash page number + 1 below bit 31.
        if self.flash_pages() >= (1 << 31) - 1 || self.logical_pages >= 1 << 31 {
            return bad("at most 2^31 − 2 flash pages and 2^31 − 1 logical pages".into());
        }
        if self.spare_segments == 0 || self.spare_segments > self.segments - 2 {
            return bad(format!(
                "spare_segments ({}) must be in 1..={} (two segments of {} must hold data)",
                self.spare_segments,
                self.segments - 2,
                self.segments
            ));
        }
        let limit = u64::from(self.segments - self.spare_segments - 1) * u64::from(self.pages_per_segment);
        if self.logical_pages == 0 || self.logical_pages > limit {
            return bad(format!(
                "logical size of {} pages is outside 1..={limit} (utilisation {:.4} above the limit {:.4})",
                self.logical_pages,
                self.utilization(),
                self.max_utilization()
            ));
        }
        if self.buffer_pages == 0 || self.buffer_pages >= 1 << 31 || self.flush_threshold_pages >= self.buffer_pages {
            return bad("buffer_pages must be positive and above flush_threshold_pages".into());
        }
        if let CleaningPolicy::Hybrid { partition_segments: 0 } = self.cleaning {
            return bad("partition_segments must be positive".into());
        }
        if self.endurance_cycles == 0 {
            return bad("endurance_cycles must be positive".into());
        }
        Ok(())
    }
}

impl Default for EnvyConfig {
    fn default() -> Self {
        EnvyConfig::PAPER_2GB
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_two_partitions_or_more_redistribute() {
        // 15 positions and one spare.
        let with = |cleaning| EnvyConfig { cleaning, ..EnvyConfig::small(16, 8, 2, 0.5) };
        assert!(with(CleaningPolicy::Locality).redistributes());
        assert!(with(CleaningPolicy::Hybrid { partition_segments: 8 }).redistributes());
        assert!(with(CleaningPolicy::Hybrid { partition_segments: 14 }).redistributes());
        assert!(!with(CleaningPolicy::Hybrid { partition_segments: 15 }).redistributes());
        assert!(!with(CleaningPolicy::Hybrid { partition_segments: 40 }).redistributes());
        assert!(!with(CleaningPolicy::Greedy).redistributes());
        assert!(!with(CleaningPolicy::Fifo).redistributes());
    }
}
