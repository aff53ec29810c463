//! The engine's counters.

use serde::Serialize;

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
