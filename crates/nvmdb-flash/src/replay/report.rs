//! What a replay measured: the full report, the power-loss report and the flat summary.

use nvmdb_device::{Activity, PageContent};
use serde::{Deserialize, Serialize};

use crate::layer::{Pending, StoreHealth, StoreStats};

use super::model::Check;
use super::responses::ResponseTimes;

/// What a replay measured (warm-up excluded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Which content mode ran (`bytes`, `fingerprint` or `none` = metadata only).
    pub content_mode: PageContent,
    /// Requests measured.
    pub requests: u64,
    /// Read requests measured.
    pub read_requests: u64,
    /// Write requests measured.
    pub write_requests: u64,
    /// Trim requests measured.
    pub trim_requests: u64,
    /// Host bytes written.
    pub host_bytes_written: u64,
    /// Host bytes read.
    pub host_bytes_read: u64,
    /// Partial-page writes done as read-modify-write.
    pub rmw_pages: u64,
    /// Pages whose address was beyond the device and wrapped around.
    pub wrapped_pages: u64,
    /// The store's counters.
    pub stats: StoreStats,
    /// Wear and space at the end.
    pub health: StoreHealth,
    /// Mean response time, ns.
    pub mean_response_ns: u64,
    /// 99th-percentile response time (exact, nearest rank), ns.
    pub p99_response_ns: u64,
    /// Largest response time, ns.
    pub max_response_ns: u64,
    /// Simulated span from the first measured arrival to the last completion, ns.
    pub span_ns: u64,
    /// Power losses simulated (each followed by recovery).
    pub power_cycles: u64,
    /// Pages written by the pre-fill (not in any other counter).
    pub prefilled_pages: u64,
    /// Pages written by the ageing pass (not in any other counter).
    pub aged_pages: u64,
    /// Times the trace was replayed.
    pub passes: u64,
    /// Whether the store was drained after the last request.
    pub drained: bool,
    /// Work the store holds that has not reached its final place in flash, at the end
    /// (after the drain when drained).
    pub pending: Pending,
    /// With more than one pass: the last pass alone (its requests, counters and response
    /// times; the drain's work when drained; the end state as the whole run's).
    pub last_pass: Option<Box<ReplayReport>>,
    /// Pages checked at the end against the model of acknowledged writes and trims (0
    /// when no power loss was asked for; in metadata-only mode only that written pages are
    /// mapped).
    pub verified_pages: u64,
    /// Checked pages that read as never written.
    pub lost_pages: u64,
    /// Checked pages that read other data than last acknowledged (a trimmed page: any data).
    pub corrupt_pages: u64,
    /// Where the power was cut and what the check right after the recovery found (`None`
    /// when no power loss was asked for).
    pub power_loss: Option<PowerLossReport>,
    /// Requests per simulated second.
    pub iops: f64,
    /// Host bytes (read + written) per simulated second, MB/s (10^6 bytes).
    pub throughput_mb_s: f64,
}

impl ReplayReport {
    pub(super) fn empty(content_mode: PageContent) -> ReplayReport {
        ReplayReport {
            content_mode,
            requests: 0,
            read_requests: 0,
            write_requests: 0,
            trim_requests: 0,
            host_bytes_written: 0,
            host_bytes_read: 0,
            rmw_pages: 0,
            wrapped_pages: 0,
            stats: StoreStats::default(),
            health: StoreHealth::default(),
            mean_response_ns: 0,
            p99_response_ns: 0,
            max_response_ns: 0,
            span_ns: 0,
            power_cycles: 0,
            prefilled_pages: 0,
            aged_pages: 0,
            passes: 1,
            drained: false,
            pending: Pending::default(),
            last_pass: None,
            verified_pages: 0,
            lost_pages: 0,
            corrupt_pages: 0,
            power_loss: None,
            iops: 0.0,
            throughput_mb_s: 0.0,
        }
    }

    /// Sets the end-of-trace check's figures.
    pub(super) fn set_check(&mut self, check: &Check) {
        (self.verified_pages, self.lost_pages, self.corrupt_pages) =
            (check.verified_pages, check.lost_pages, check.corrupt_pages);
    }

    /// Takes `earlier`'s request counters (a report of the same run, before) off this one's.
    pub(super) fn subtract_requests(&mut self, earlier: &ReplayReport) {
        self.requests -= earlier.requests;
        self.read_requests -= earlier.read_requests;
        self.write_requests -= earlier.write_requests;
        self.trim_requests -= earlier.trim_requests;
        self.host_bytes_written -= earlier.host_bytes_written;
        self.host_bytes_read -= earlier.host_bytes_read;
        self.rmw_pages -= earlier.rmw_pages;
        self.wrapped_pages -= earlier.wrapped_pages;
    }

    /// Flash and PCM energy, pJ.
    pub fn energy_pj(&self) -> u64 {
        self.stats.flash_energy_pj + self.stats.pcm_energy_pj
    }

    /// Host bytes the flash can take before its most-worn block wears out, at the rate of
    /// wear measured (`None` when nothing was erased). The measured erases per block are
    /// scaled by the wear spread so far (most-worn over mean erase count).
    pub fn lifetime_host_bytes(&self) -> Option<f64> {
        let h = &self.health;
        if self.stats.block_erases == 0 || h.block_erases_total == 0 || h.blocks == 0 {
            return None;
        }
        let spread = h.block_erases_max as f64 * h.blocks as f64 / h.block_erases_total as f64;
        let worst_erases = self.stats.block_erases as f64 / h.blocks as f64 * spread;
        Some(self.host_bytes_written as f64 * h.endurance as f64 / worst_erases)
    }

    /// Fills in the response times, the span and the rates of requests that arrived from
    /// `first_arrival_ns` on and completed by `last_completion_ns`.
    pub(super) fn set_times(
        &mut self,
        responses: &mut ResponseTimes,
        first_arrival_ns: Option<u64>,
        last_completion_ns: u64,
    ) {
        let times = responses.summary();
        self.mean_response_ns = times.map_or(0, |t| t.mean_ns);
        self.p99_response_ns = times.map_or(0, |t| t.p99_ns);
        self.max_response_ns = times.map_or(0, |t| t.max_ns);
        self.span_ns = last_completion_ns.saturating_sub(first_arrival_ns.unwrap_or(0));
        let seconds = self.span_ns as f64 / 1e9;
        (self.iops, self.throughput_mb_s) = if self.span_ns == 0 {
            (0.0, 0.0)
        } else {
            (self.requests as f64 / seconds, (self.host_bytes_read + self.host_bytes_written) as f64 / 1e6 / seconds)
        };
    }
}

/// Where a power loss fell, and what the check of every page of the model against the
/// store found right after the recovery (the check at the end of the trace is the report's
/// own `verified_pages`, `lost_pages` and `corrupt_pages`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerLossReport {
    /// The request the power was cut in (a cut at a device write; the request is not
    /// acknowledged) or after (a cut between requests), from 1 (0: before the first),
    /// counted across passes; one past the last: in the drain.
    pub operation: u64,
    /// The device write refused, from 1, counted from the trace's start (a cut between
    /// requests: the next device write the run would have made).
    pub device_write: u64,
    /// What the store was doing when the cut fell inside an operation (`host`, `flush`,
    /// `gc`, `merge`, ...); `None` for a cut between requests.
    pub activity: Option<Activity>,
    /// The second cut: the recovery's device write refused, from 1.
    pub recovery_cut: Option<u64>,
    /// Device writes of the recovery that completed.
    pub recovery_device_writes: u64,
    /// The check right after the recovery.
    pub after_recovery: Check,
}

/// The flat figures of a replay, as `nvmdb ssd replay --json` prints them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplaySummary {
    /// Which content mode ran (`none` = metadata only).
    pub content_mode: PageContent,
    /// Requests measured (warm-up excluded).
    pub requests: u64,
    /// Logical pages written by the host.
    pub host_page_writes: u64,
    /// Logical pages read by the host.
    pub host_page_reads: u64,
    /// Flash pages programmed whole: host data, GC copies and merges.
    pub flash_page_programs: u64,
    /// Flash partial programs (IPL's log sectors).
    pub flash_sector_programs: u64,
    /// 512 B sectors the partial programs wrote.
    pub flash_sectors_programmed: u64,
    /// Flash programs in pages: `flash_page_programs` plus each partial program as the
    /// share of a page its sectors are (`flash_sectors_programmed × 512 B ÷ page bytes`).
    pub flash_programs_in_pages: f64,
    /// `flash_programs_in_pages / host_page_writes`: partial programs count as page shares.
    pub write_amplification: f64,
    /// Flash pages read: host reads, log pages holding a read page's records, GC and merge
    /// reads.
    pub flash_page_reads: u64,
    /// Block erases.
    pub block_erases: u64,
    /// Merges (log-block FTLs and buffers).
    pub merges: u64,
    /// Log buffers: pages written by merges.
    pub merge_page_writes: u64,
    /// Log buffers: host writes of pages without a flash copy, written through (case 1).
    pub direct_writes: u64,
    /// Log buffers: host writes logged.
    pub logged_writes: u64,
    /// Log buffers: host writes that could not be logged, written out of place.
    pub out_of_place_writes: u64,
    /// Log buffers: host writes that changed nothing (no-ops).
    pub unchanged_writes: u64,
    /// Pages copied by garbage collection.
    pub gc_page_copies: u64,
    /// Flash time spent in GC and merges, ns.
    pub gc_time_ns: u64,
    /// Mean response time, ns.
    pub mean_response_ns: u64,
    /// 99th-percentile response time, ns.
    pub p99_response_ns: u64,
    /// Largest response time, ns.
    pub max_response_ns: u64,
    /// Requests per simulated second.
    pub iops: f64,
    /// Host MB (10^6 B) per simulated second.
    pub throughput_mb_s: f64,
    /// Flash plus PCM energy, pJ.
    pub energy_pj: u64,
    /// Flash energy, pJ.
    pub flash_energy_pj: u64,
    /// PCM energy, pJ.
    pub pcm_energy_pj: u64,
    /// PCM lines (64 B) read: log records, deduplication's fingerprint store.
    pub pcm_lines_read: u64,
    /// PCM lines written.
    pub pcm_lines_written: u64,
    /// PCM words (8 B) written with a changed cell.
    pub pcm_words_written: u64,
    /// PCM cells programmed (null when not counted: `buffer.pcm_accounting = "words"`).
    pub pcm_bits_written: Option<u64>,
    /// The hottest PCM cell's program count (null when not counted).
    pub pcm_max_cell_writes: Option<u64>,
    /// Host page writes removed as duplicates.
    pub dedup_pages_removed: u64,
    /// Mean fingerprint comparisons per deduplication lookup.
    pub dedup_comparisons_per_lookup: f64,
    /// Flash pages saved by sharing, at the end.
    pub flash_pages_saved: u64,
    /// The most-erased block's erase count.
    pub block_erases_max: u64,
    /// Fraction of the endurance the most-erased block has used.
    pub wear_fraction: f64,
    /// Host bytes the flash can take before its most-worn block wears out, at the measured
    /// rate (null when nothing was erased).
    pub lifetime_host_bytes: Option<f64>,
    /// Partial-page writes done as read-modify-write.
    pub rmw_pages: u64,
    /// Pages whose address wrapped around the device.
    pub wrapped_pages: u64,
    /// Power losses simulated (`--power-loss-at`).
    pub power_cycles: u64,
    /// Pages written by the pre-fill (`--prefill`), left out of every other figure.
    pub prefilled_pages: u64,
    /// Pages written by the ageing pass (`--age`), left out of every other figure.
    pub aged_pages: u64,
    /// Times the trace was replayed (`--passes`).
    pub passes: u64,
    /// Whether the store was drained after the last request (`--drain`).
    pub drained: bool,
    /// Log records (IPL, d-PRAM, PCM log) not yet merged into their pages at the end.
    pub pending_log_records: u64,
    /// Logical pages with such records.
    pub pending_log_pages: u64,
    /// Pages in the DRAM write buffer not yet written to the layer below.
    pub pending_dram_pages: u64,
    /// Pages verified against the acknowledged writes after the power loss.
    pub verified_pages: u64,
    /// Verified pages that read as never written.
    pub lost_pages: u64,
    /// Verified pages that read other data than last acknowledged.
    pub corrupt_pages: u64,
    /// With a power loss: where the power was cut and the check right after the recovery;
    /// null otherwise.
    pub power_loss: Option<PowerLossReport>,
    /// With `--passes` above 1: the last pass alone, in these same fields (the end state's
    /// fields, such as the pending counts and wear, are the run's); null otherwise.
    pub last_pass: Option<Box<ReplaySummary>>,
}

impl ReplayReport {
    /// The flat summary.
    pub fn summary(&self) -> ReplaySummary {
        let s = &self.stats;
        ReplaySummary {
            content_mode: self.content_mode,
            requests: self.requests,
            host_page_writes: s.host_page_writes,
            host_page_reads: s.host_page_reads,
            flash_page_programs: s.flash_page_programs,
            flash_sector_programs: s.flash_sector_programs,
            flash_sectors_programmed: s.flash_sectors_programmed,
            flash_programs_in_pages: s.flash_programs_in_pages(),
            write_amplification: s.write_amplification(),
            flash_page_reads: s.flash_page_reads,
            block_erases: s.block_erases,
            merges: s.merges,
            merge_page_writes: s.merge_page_writes,
            direct_writes: s.direct_writes,
            logged_writes: s.logged_writes,
            out_of_place_writes: s.out_of_place_writes,
            unchanged_writes: s.unchanged_writes,
            gc_page_copies: s.gc_page_copies,
            gc_time_ns: s.gc_time_ns,
            mean_response_ns: self.mean_response_ns,
            p99_response_ns: self.p99_response_ns,
            max_response_ns: self.max_response_ns,
            iops: self.iops,
            throughput_mb_s: self.throughput_mb_s,
            energy_pj: self.energy_pj(),
            flash_energy_pj: s.flash_energy_pj,
            pcm_energy_pj: s.pcm_energy_pj,
            pcm_lines_read: s.pcm_lines_read,
            pcm_lines_written: s.pcm_lines_written,
            pcm_words_written: s.pcm_words_written,
            pcm_bits_written: s.pcm_accounting.is_cells().then_some(s.pcm_bits_written),
            pcm_max_cell_writes: s.pcm_accounting.is_cells().then_some(s.pcm_max_cell_writes),
            dedup_pages_removed: s.dedup_pages_removed,
            dedup_comparisons_per_lookup: if s.dedup_lookups == 0 {
                0.0
            } else {
                s.dedup_comparisons as f64 / s.dedup_lookups as f64
            },
            flash_pages_saved: self.health.flash_pages_saved(),
            block_erases_max: self.health.block_erases_max,
            wear_fraction: self.health.wear_fraction(),
            lifetime_host_bytes: self.lifetime_host_bytes(),
            rmw_pages: self.rmw_pages,
            wrapped_pages: self.wrapped_pages,
            power_cycles: self.power_cycles,
            prefilled_pages: self.prefilled_pages,
            aged_pages: self.aged_pages,
            passes: self.passes,
            drained: self.drained,
            pending_log_records: self.pending.log_records,
            pending_log_pages: self.pending.log_pages,
            pending_dram_pages: self.pending.dram_pages,
            verified_pages: self.verified_pages,
            lost_pages: self.lost_pages,
            corrupt_pages: self.corrupt_pages,
            power_loss: self.power_loss,
            last_pass: self.last_pass.as_ref().map(|last| Box::new(last.summary())),
        }
    }
}
