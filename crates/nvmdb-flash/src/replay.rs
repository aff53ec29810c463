//! The replay engine: feeds block requests to a [`PageStore`] at their arrival times.
//!
//! Each request is split into logical pages. A page the request covers only partly is a
//! read-modify-write: the old page is read, the new bytes merged in, and the page written
//! when the read completes. All pages of a request are issued at its arrival time (they
//! spread over planes), and the request's response time is the latest page completion
//! minus the arrival time. Byte offsets beyond the device wrap around modulo its logical
//! capacity, page by page (as MQSim does), and the report counts the wrapped pages.
//!
//! Before the trace the device may be aged ([`ReplayOptions::age`]) and the trace's pages
//! pre-filled; the trace may be replayed several times ([`ReplayOptions::passes`]), the
//! last pass reported alone beside the whole; and the store may be drained after it
//! ([`ReplayOptions::drain`]), so that no work it accepted is left unpaid.

use nvmdb_device::{Activity, PageContent, PageData};
use nvmdb_workload::{Content, Op, Request};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::layer::{FlashError, PageStore, Pending, StoreHealth, StoreStats};

mod model;
mod responses;
pub use model::Check;
use model::Model;
use responses::ResponseTimes;

/// How to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayOptions {
    /// Requests at the start left out of every reported statistic.
    pub warmup_requests: u64,
    /// The store's content mode: decides what a write carries (bytes, a content id, or
    /// nothing).
    pub content: PageContent,
    /// Seed for the synthetic content of writes whose trace carries none: content ids in
    /// fingerprint mode, bytes in bytes mode ([`SYNTHETIC_BYTES_STREAM`]).
    pub seed: u64,
    /// Cut power after this many requests (then recover and go on), and verify every
    /// written page against the replay's own model of acknowledged writes right after the
    /// recovery and at the end.
    pub power_loss_at: Option<u64>,
    /// Cut power before this device write of the trace (from 1, counted from the trace's
    /// start, after the ageing and pre-fill, across passes and the drain), inside whatever
    /// the store is doing; the request it falls in is not acknowledged (each page it writes
    /// may read as before it or after it). Then recover, check, and go on with the next
    /// request, as [`ReplayOptions::power_loss_at`]. Not with it.
    pub power_loss_at_write: Option<u64>,
    /// A second cut, before this device write of the recovery after the first cut (from
    /// 1): the store powers up again from its devices alone.
    pub power_loss_during_recovery: Option<u64>,
    /// Before the trace, write every logical page it touches once (whole pages, in page
    /// order, synthetic content), left out of every statistic, so that the trace runs on
    /// data that exists and reads of "old" pages cost the same in every configuration.
    /// The pre-fill reads the trace once more to find the footprint (before the first pass).
    pub prefill: bool,
    /// Before the trace (and the pre-fill), age the device: every logical page written once
    /// in order, then as many uniformly random whole-page overwrites, all new content
    /// (out of place in every configuration), as the thesis experiments age theirs
    /// ([`nvmdb_workload::ageing::age`]); left out of every statistic.
    pub age: bool,
    /// Times the trace is replayed, at least 1: each pass issues the same requests, its
    /// first arriving when everything before it has completed and the rest keeping the
    /// trace's gaps. Warm-up and power-loss request numbers count across passes. With more
    /// than one, the report carries the last pass's figures alone
    /// ([`ReplayReport::last_pass`]).
    pub passes: u64,
    /// After the last request, carry every pending piece of work to flash
    /// ([`PageStore::drain`]: merge every log record, write the DRAM buffer down), counted
    /// in every figure (and the last pass's) as the same work is during the run.
    pub drain: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            warmup_requests: 0,
            content: PageContent::None,
            seed: 1,
            power_loss_at: None,
            power_loss_at_write: None,
            power_loss_during_recovery: None,
            prefill: false,
            age: false,
            passes: 1,
            drain: false,
        }
    }
}

/// Salt of the synthetic bytes' stream, xored into [`ReplayOptions::seed`]: in bytes mode a
/// write whose trace carries no bytes (and every set-up write) takes the next bytes of
/// xoshiro256++ (`rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ this)`, period
/// 2^256 − 1), as many as the host writes, in the order it writes them.
pub const SYNTHETIC_BYTES_STREAM: u64 = 0x6279_7465_735f_7374;

/// Where a replay sends the bytes its read requests return (bytes mode): each read
/// request's bytes in order, in one or more pieces, then its end. A never-written byte
/// reads as `0xFF` (erased flash).
pub trait ReadBack {
    /// The next bytes of the read request in progress.
    fn bytes(&mut self, bytes: &[u8]) -> Result<(), String>;
    /// The read request in progress is complete.
    fn end(&mut self) -> Result<(), String>;
}

/// A replay failure: bad input (with the index of the request that failed to parse) or a
/// storage error.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplayError<E> {
    /// The request source failed (e.g. a malformed trace line).
    Input(E),
    /// The store refused a page.
    Store {
        /// Index of the request, from 0.
        request: u64,
        /// What went wrong.
        error: FlashError,
    },
    /// A power cut asked for lies past the end of the run: it never happened.
    CutPastEnd(CutPastEnd),
    /// The [`ReadBack`] failed (e.g. its file could not be written).
    ReadBack(String),
}

/// A power cut that lies past the end of what the run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutPastEnd {
    /// [`ReplayOptions::power_loss_at`] beyond the requests of every pass.
    Request {
        /// The request asked for.
        asked: u64,
        /// The requests the run issued, across passes.
        requests: u64,
    },
    /// [`ReplayOptions::power_loss_at_write`] beyond the device writes of the run.
    DeviceWrite {
        /// The device write asked for.
        asked: u64,
        /// The device writes the run made (after its set-up).
        writes: u64,
    },
    /// [`ReplayOptions::power_loss_during_recovery`] beyond the device writes of the
    /// recovery.
    RecoveryWrite {
        /// The recovery's device write asked for.
        asked: u64,
        /// The device writes the recovery made.
        writes: u64,
    },
}

impl std::fmt::Display for CutPastEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CutPastEnd::Request { asked, requests } => {
                write!(f, "request {asked} is past the end of the run ({requests} requests in all)")
            }
            CutPastEnd::DeviceWrite { asked, writes } => {
                write!(f, "device write {asked} is past the end of the run ({writes} device writes in all)")
            }
            CutPastEnd::RecoveryWrite { asked, writes } => {
                write!(f, "device write {asked} is past the end of the recovery ({writes} device writes in all)")
            }
        }
    }
}

impl<E: std::fmt::Display> std::fmt::Display for ReplayError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Input(e) => write!(f, "{e}"),
            ReplayError::Store { request, error } => write!(f, "request {request}: {error}"),
            ReplayError::CutPastEnd(cut) => write!(f, "no power cut: {cut}"),
            ReplayError::ReadBack(e) => write!(f, "read-back: {e}"),
        }
    }
}

impl<E: std::fmt::Debug + std::fmt::Display> std::error::Error for ReplayError<E> {}

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
    fn empty(content_mode: PageContent) -> ReplayReport {
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
    fn set_check(&mut self, check: &Check) {
        (self.verified_pages, self.lost_pages, self.corrupt_pages) =
            (check.verified_pages, check.lost_pages, check.corrupt_pages);
    }

    /// Takes `earlier`'s request counters (a report of the same run, before) off this one's.
    fn subtract_requests(&mut self, earlier: &ReplayReport) {
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
    fn set_times(&mut self, responses: &mut ResponseTimes, first_arrival_ns: Option<u64>, last_completion_ns: u64) {
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

/// Replays `requests` into `store`. Requests must come in arrival order (a request
/// arriving earlier than the one before it is issued at the later time). With a pre-fill
/// or more than one pass the requests are held in memory; [`replay_passes`] reads them
/// afresh instead.
pub fn replay<E>(
    store: &mut dyn PageStore,
    requests: impl Iterator<Item = Result<Request, E>>,
    options: &ReplayOptions,
) -> Result<ReplayReport, ReplayError<E>> {
    if options.prefill || options.passes > 1 {
        let requests: Vec<Request> = requests.collect::<Result<_, E>>().map_err(ReplayError::Input)?;
        return replay_passes(store, || requests.iter().cloned().map(Ok), options);
    }
    let mut once = Some(requests);
    replay_passes(store, || once.take().expect("one pass and no pre-fill read the trace once"), options)
}

/// Replays the trace `trace()` gives into `store`: once for the pre-fill's footprint when
/// asked, then once per pass, each call giving the same requests in arrival order.
pub fn replay_passes<E, I>(
    store: &mut dyn PageStore,
    trace: impl FnMut() -> I,
    options: &ReplayOptions,
) -> Result<ReplayReport, ReplayError<E>>
where
    I: Iterator<Item = Result<Request, E>>,
{
    replay_reading(store, trace, options, None)
}

/// [`replay_passes`], sending the bytes of every read request to `reads` (bytes mode
/// only).
pub fn replay_reading<'a, E, I>(
    store: &'a mut dyn PageStore,
    mut trace: impl FnMut() -> I,
    options: &ReplayOptions,
    reads: Option<&'a mut dyn ReadBack>,
) -> Result<ReplayReport, ReplayError<E>>
where
    I: Iterator<Item = Result<Request, E>>,
{
    let before = |error| ReplayError::Store { request: 0, error };
    if options.passes == 0 {
        return Err(before(FlashError::Config("a replay makes at least one pass".into())));
    }
    if reads.is_some() && options.content != PageContent::Bytes {
        return Err(before(FlashError::Config("reading back needs content = \"bytes\"".into())));
    }
    if options.power_loss_at.is_some() && options.power_loss_at_write.is_some() {
        return Err(before(FlashError::Config("one power cut: between requests or at a device write".into())));
    }
    if options.power_loss_at_write == Some(0) || options.power_loss_during_recovery == Some(0) {
        return Err(before(FlashError::Config("device writes count from 1".into())));
    }
    let mut engine = Engine::new(store, options, reads);
    if options.power_loss_at_write.is_some() && engine.store.power_switch().is_none() {
        return Err(before(FlashError::Config("this storage layer has no power switch to cut".into())));
    }
    let was = engine.store.power_switch().map(|switch| switch.set_activity(Activity::Setup));
    if options.age {
        engine.age().map_err(before)?;
    }
    if options.prefill {
        engine.prefill(trace()).map_err(|e| match e {
            Fill::Input(e) => ReplayError::Input(e),
            Fill::Store(error) => before(error),
        })?;
    }
    if let (Some(was), Some(switch)) = (was, engine.store.power_switch()) {
        switch.set_activity(was);
        engine.trace_writes = switch.writes();
        if let Some(n) = options.power_loss_at_write {
            switch.cut_before(engine.trace_writes.saturating_add(n - 1));
        }
    }
    if options.power_loss_at == Some(0) {
        engine.power_cycle(0, false).map_err(|stop| stop.at(0))?;
    }
    let mut seen = 0;
    for pass in 0..options.passes {
        engine.start_pass(pass);
        for request in trace() {
            let request = request.map_err(ReplayError::Input)?;
            let index = seen;
            nvmdb_cancel::check().map_err(|e| ReplayError::Store { request: index, error: e.into() })?;
            if index == options.warmup_requests && index > 0 {
                engine.start_measuring();
            }
            match engine.run(&request) {
                Err(Stop::Store(FlashError::PowerCut(_))) if engine.power_loss.is_none() => {
                    engine.power_cycle(index + 1, true).map_err(|stop| stop.at(index))?;
                }
                other => other.map_err(|stop| stop.at(index))?,
            }
            seen = index + 1;
            if options.power_loss_at == Some(seen) {
                engine.power_cycle(seen, false).map_err(|stop| stop.at(index))?;
            }
        }
    }
    if let Some(asked) = options.power_loss_at.filter(|&n| n > seen) {
        return Err(ReplayError::CutPastEnd(CutPastEnd::Request { asked, requests: seen }));
    }
    if seen <= options.warmup_requests && options.warmup_requests > 0 {
        // The whole trace was warm-up: nothing is measured.
        engine.start_measuring();
    }
    if options.drain {
        match engine.drain() {
            Err(FlashError::PowerCut(_)) if engine.power_loss.is_none() => {
                // Cut in the drain: recover, and drain what the recovered store holds.
                engine.power_cycle(seen + 1, true).map_err(|stop| stop.at(seen))?;
                engine.drain().map_err(|error| ReplayError::Store { request: seen, error })?;
            }
            other => other.map_err(|error| ReplayError::Store { request: seen, error })?,
        }
    }
    if let Some(asked) = options.power_loss_at_write.filter(|_| engine.power_loss.is_none()) {
        let writes = engine.store.power_switch().map_or(0, |switch| switch.writes()) - engine.trace_writes;
        return Err(ReplayError::CutPastEnd(CutPastEnd::DeviceWrite { asked, writes }));
    }
    let mut report = engine.finish();
    if let Some(model) = &engine.model {
        let (check, _) = model
            .check(&mut *engine.store, engine.clock_ns)
            .map_err(|error| ReplayError::Store { request: seen, error })?;
        report.set_check(&check);
        if let Some(last) = &mut report.last_pass {
            last.set_check(&check);
        }
    }
    Ok(report)
}

/// Why a request stopped: the store refused it, the read-back failed, or a second cut
/// asked for lay past the end of the recovery.
enum Stop {
    Store(FlashError),
    ReadBack(String),
    PastEnd(CutPastEnd),
}

impl Stop {
    /// The replay error of request `request` (from 0) stopping so.
    fn at<E>(self, request: u64) -> ReplayError<E> {
        match self {
            Stop::Store(error) => ReplayError::Store { request, error },
            Stop::ReadBack(e) => ReplayError::ReadBack(e),
            Stop::PastEnd(cut) => ReplayError::CutPastEnd(cut),
        }
    }
}

impl From<FlashError> for Stop {
    fn from(error: FlashError) -> Stop {
        Stop::Store(error)
    }
}

/// A pre-fill failure: the trace or the store.
enum Fill<E> {
    Input(E),
    Store(FlashError),
}

/// Where the last of several passes started: the counters then, and its own response
/// times and first arrival since.
struct LastPass {
    stats: StoreStats,
    report: ReplayReport,
    responses_ns: ResponseTimes,
    first_arrival_ns: Option<u64>,
}

struct Engine<'a> {
    store: &'a mut dyn PageStore,
    options: ReplayOptions,
    page_bytes: u64,
    /// `log2(page_bytes)` when the page size is a power of two (the usual case: a page
    /// number is then a shift, without a division on every request).
    page_shift: Option<u32>,
    logical_pages: u64,
    /// The logical capacity, bytes (saturating).
    capacity_bytes: u64,
    report: ReplayReport,
    responses_ns: ResponseTimes,
    first_arrival_ns: Option<u64>,
    last_completion_ns: u64,
    last_arrival_ns: u64,
    synthetic_id: u64,
    /// The synthetic bytes of bytes mode ([`SYNTHETIC_BYTES_STREAM`]).
    bytes_rng: Xoshiro256PlusPlus,
    /// Where the bytes of read requests go (bytes mode).
    reads: Option<&'a mut dyn ReadBack>,
    /// What each written page may read back as (power-loss runs only).
    model: Option<Model>,
    power_cycles: u64,
    /// Where the power was cut, and the check after the recovery.
    power_loss: Option<PowerLossReport>,
    /// The counters of the check after the recovery, left out of every figure (until the
    /// counters are next zeroed).
    excluded: Option<StoreStats>,
    /// The store's device writes before the trace (the set-up's).
    trace_writes: u64,
    /// Added to every arrival time of the pass (the ageing and pre-fill's duration, then
    /// what places a pass after the one before).
    time_offset_ns: u64,
    /// The latest completion so far, of anything (ageing and pre-fill included).
    clock_ns: u64,
    /// Set at the start of a pass after the first: the first request's arrival is moved to
    /// `clock_ns`.
    pass_starts: bool,
    /// The last pass, once it has started (only with more than one).
    last_pass: Option<LastPass>,
}

impl<'a> Engine<'a> {
    fn new(store: &'a mut dyn PageStore, options: &ReplayOptions, reads: Option<&'a mut dyn ReadBack>) -> Engine<'a> {
        let page_bytes = u64::from(store.page_bytes());
        let logical_pages = store.logical_pages();
        assert!(page_bytes > 0 && logical_pages > 0, "a store has pages");
        Engine {
            store,
            options: *options,
            page_bytes,
            page_shift: page_bytes.is_power_of_two().then(|| page_bytes.trailing_zeros()),
            logical_pages,
            capacity_bytes: logical_pages.saturating_mul(page_bytes),
            report: ReplayReport::empty(options.content),
            responses_ns: ResponseTimes::default(),
            first_arrival_ns: None,
            last_completion_ns: 0,
            last_arrival_ns: 0,
            synthetic_id: options.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            bytes_rng: Xoshiro256PlusPlus::seed_from_u64(options.seed ^ SYNTHETIC_BYTES_STREAM),
            reads,
            model: (options.power_loss_at.is_some() || options.power_loss_at_write.is_some())
                .then(|| Model::new(options.content, page_bytes as usize)),
            power_cycles: 0,
            power_loss: None,
            excluded: None,
            trace_writes: 0,
            time_offset_ns: 0,
            clock_ns: 0,
            pass_starts: false,
            last_pass: None,
        }
    }

    fn start_measuring(&mut self) {
        self.store.reset_stats();
        self.excluded = None;
        self.report = ReplayReport::empty(self.options.content);
        self.responses_ns.clear();
        self.first_arrival_ns = None;
        self.last_completion_ns = 0;
        if let Some(last) = &mut self.last_pass {
            // The measured part of the last pass starts here.
            *last = LastPass {
                stats: StoreStats::default(),
                report: ReplayReport::empty(self.options.content),
                responses_ns: ResponseTimes::default(),
                first_arrival_ns: None,
            };
        }
    }

    /// Ends the set-up (ageing, pre-fill) done at `done_ns`: the counters are zeroed and
    /// the trace starts then.
    fn end_setup(&mut self, done_ns: u64) {
        self.start_measuring();
        self.clock_ns = self.clock_ns.max(done_ns);
        self.time_offset_ns = self.clock_ns;
    }

    /// A whole page of new synthetic content for page `lpn` (the set-up's writes),
    /// remembered as what it must read back as.
    fn fresh_page(&mut self, lpn: u64) -> PageData {
        let fill = Request {
            time_ns: 0,
            op: Op::Write,
            offset_bytes: lpn * self.page_bytes,
            len_bytes: self.page_bytes,
            content: Content::Unknown,
        };
        let data = self.new_data(&fill, 0, 0, None);
        if let Some(model) = &mut self.model {
            // Each set-up write is a request of its own.
            model.begin_request();
        }
        self.remember(lpn, &data);
        data
    }

    /// Ages the device ([`ReplayOptions::age`]): every logical page written once in order,
    /// then as many random overwrites, all at time 0 and new content.
    fn age(&mut self) -> Result<(), FlashError> {
        let pages = self.logical_pages;
        let mut done_ns = 0;
        // Each write carries fresh synthetic content (the ageing's content ids, which say
        // what each page ends holding, are for callers that track content).
        let load = (0..pages).map(|lpn| (lpn, 0, 0));
        nvmdb_workload::ageing::age(pages, self.options.seed, load, |lpn, _, now_ns| {
            nvmdb_cancel::check()?;
            let data = self.fresh_page(lpn);
            done_ns = done_ns.max(self.store.write_new(lpn, data, now_ns)?);
            Ok::<_, FlashError>(())
        })?;
        self.end_setup(done_ns);
        self.report.aged_pages = 2 * pages;
        Ok(())
    }

    /// Writes every page `requests` touch once (new content), then zeroes the counters;
    /// the trace's times are shifted to start when the pre-fill is done.
    fn prefill<E>(&mut self, requests: impl Iterator<Item = Result<Request, E>>) -> Result<(), Fill<E>> {
        let mut pages = std::collections::BTreeSet::new();
        for r in requests {
            let r = r.map_err(Fill::Input)?;
            if r.len_bytes == 0 {
                continue;
            }
            let first = r.offset_bytes / self.page_bytes;
            let last = r.offset_bytes.saturating_add(r.len_bytes - 1) / self.page_bytes;
            if last - first >= self.logical_pages {
                pages.extend(0..self.logical_pages);
                break;
            }
            pages.extend((first..=last).map(|p| p % self.logical_pages));
        }
        let mut done_ns = self.clock_ns;
        for &lpn in &pages {
            nvmdb_cancel::check().map_err(|e| Fill::Store(e.into()))?;
            let data = self.fresh_page(lpn);
            done_ns = done_ns.max(self.store.write_new(lpn, data, self.clock_ns).map_err(Fill::Store)?);
        }
        let aged = self.report.aged_pages;
        self.end_setup(done_ns);
        (self.report.aged_pages, self.report.prefilled_pages) = (aged, pages.len() as u64);
        Ok(())
    }

    /// Starts pass `pass` (from 0): a pass after the first starts when everything before
    /// it has completed; the last of several starts the last pass's own figures.
    fn start_pass(&mut self, pass: u64) {
        self.pass_starts = pass > 0;
        if pass > 0 && pass + 1 == self.options.passes {
            self.last_pass = Some(LastPass {
                stats: self.stats(),
                report: self.report.clone(),
                responses_ns: ResponseTimes::default(),
                first_arrival_ns: None,
            });
        }
    }

    /// Carries the store's pending work to flash after the last request has completed.
    fn drain(&mut self) -> Result<(), FlashError> {
        let done_ns = self.store.drain(self.clock_ns)?;
        self.clock_ns = self.clock_ns.max(done_ns);
        self.last_completion_ns = self.last_completion_ns.max(done_ns);
        self.report.drained = true;
        Ok(())
    }

    fn run(&mut self, request: &Request) -> Result<(), Stop> {
        if let Some(model) = &mut self.model {
            model.begin_request();
        }
        if std::mem::take(&mut self.pass_starts) {
            self.time_offset_ns = self.clock_ns.saturating_sub(request.time_ns);
        }
        let arrival_ns = (request.time_ns.saturating_add(self.time_offset_ns)).max(self.last_arrival_ns);
        self.last_arrival_ns = arrival_ns;
        self.first_arrival_ns.get_or_insert(arrival_ns);
        let mut done_ns = arrival_ns;
        // Checked before any page runs: a wrapped range would otherwise run no page at all,
        // and a request longer than the device would revisit its pages without end.
        let end = request.offset_bytes.checked_add(request.len_bytes).ok_or_else(|| {
            FlashError::Request(format!("byte range {}+{} crosses 2^64", request.offset_bytes, request.len_bytes))
        })?;
        if request.len_bytes > self.capacity_bytes {
            return Err(Stop::Store(FlashError::Request(format!(
                "request of {} bytes is longer than the device ({} bytes)",
                request.len_bytes, self.capacity_bytes
            ))));
        }
        if let Some(lpn) = self.whole_page(request) {
            done_ns = done_ns.max(self.whole_page_request(request, lpn, arrival_ns)?);
        } else if request.len_bytes > 0 {
            let first = self.page_of(request.offset_bytes);
            let last = self.page_of(end - 1);
            for page in first..=last {
                let page_done = self.page(request, page, page - first, arrival_ns)?;
                done_ns = done_ns.max(page_done);
            }
        }
        let r = &mut self.report;
        r.requests += 1;
        match request.op {
            Op::Read => {
                r.read_requests += 1;
                r.host_bytes_read += request.len_bytes;
                if let Some(reads) = &mut self.reads {
                    reads.end().map_err(Stop::ReadBack)?;
                }
            }
            Op::Write => {
                r.write_requests += 1;
                r.host_bytes_written += request.len_bytes;
            }
            Op::Trim => r.trim_requests += 1,
        }
        self.responses_ns.push(done_ns - arrival_ns);
        if let Some(last) = &mut self.last_pass {
            last.responses_ns.push(done_ns - arrival_ns);
            last.first_arrival_ns.get_or_insert(arrival_ns);
        }
        self.last_completion_ns = self.last_completion_ns.max(done_ns);
        self.clock_ns = self.clock_ns.max(done_ns);
        Ok(())
    }

    /// The page holding byte `at`.
    #[inline]
    fn page_of(&self, at: u64) -> u64 {
        match self.page_shift {
            Some(shift) => at >> shift,
            None => at / self.page_bytes,
        }
    }

    /// The logical page of a request that is exactly one whole page, not wrapped (most
    /// requests of page-sized traces): the fast path of [`Engine::page`] for it.
    #[inline]
    fn whole_page(&self, request: &Request) -> Option<u64> {
        let shift = self.page_shift?;
        let aligned = request.offset_bytes & (self.page_bytes - 1) == 0;
        let lpn = request.offset_bytes >> shift;
        (request.len_bytes == self.page_bytes && aligned && lpn < self.logical_pages).then_some(lpn)
    }

    /// [`Engine::page`] for a request that is the whole of page `lpn` (see
    /// [`Engine::whole_page`]): the same calls on the store, without the partial-page
    /// arithmetic.
    #[inline]
    fn whole_page_request(&mut self, request: &Request, lpn: u64, now_ns: u64) -> Result<u64, Stop> {
        Ok(match request.op {
            Op::Read => {
                let (data, done_ns) = self.store.read(lpn, now_ns)?;
                self.read_back(&data, 0..self.page_bytes as usize)?;
                done_ns
            }
            Op::Write => {
                let data = self.new_data(request, 0, 0, None);
                self.remember(lpn, &data);
                self.store.write(lpn, data, now_ns)?
            }
            Op::Trim => {
                if let Some(model) = &mut self.model {
                    model.trim(lpn);
                }
                self.store.trim(lpn, now_ns)?
            }
        })
    }

    /// Sends bytes `range` of a page read (never written: erased, `0xFF`) to the read-back.
    #[inline]
    fn read_back(&mut self, data: &PageData, range: std::ops::Range<usize>) -> Result<(), Stop> {
        let Some(reads) = &mut self.reads else { return Ok(()) };
        match data {
            PageData::Bytes(bytes) if bytes.len() >= range.end => reads.bytes(&bytes[range]),
            _ => reads.bytes(&vec![0xFF; range.len()]),
        }
        .map_err(Stop::ReadBack)
    }

    /// Runs the `index`-th page (`page` = absolute page number) of a request.
    #[inline]
    fn page(&mut self, request: &Request, page: u64, index: u64, now_ns: u64) -> Result<u64, Stop> {
        let lpn = if page < self.logical_pages {
            page
        } else {
            self.report.wrapped_pages += 1;
            page % self.logical_pages
        };
        let page_start = page * self.page_bytes;
        let page_end = page_start.saturating_add(self.page_bytes);
        let start = request.offset_bytes.max(page_start);
        // `run` checked that the request's end fits in u64.
        let end = (request.offset_bytes + request.len_bytes).min(page_end);
        let whole = start == page_start && end == page_end;
        Ok(match request.op {
            Op::Read => {
                let (data, done_ns) = self.store.read(lpn, now_ns)?;
                self.read_back(&data, (start - page_start) as usize..(end - page_start) as usize)?;
                done_ns
            }
            Op::Trim if whole => {
                if let Some(model) = &mut self.model {
                    model.trim(lpn);
                }
                self.store.trim(lpn, now_ns)?
            }
            // A partial trim cannot discard the page; the rest of it stays.
            Op::Trim => now_ns,
            Op::Write if whole => {
                let data = self.new_data(request, index, (start - request.offset_bytes) as usize, None);
                self.remember(lpn, &data);
                self.store.write(lpn, data, now_ns)?
            }
            Op::Write => {
                self.report.rmw_pages += 1;
                let (old, read_done_ns) = self.store.read(lpn, now_ns)?;
                let from = (start - page_start) as usize..(end - page_start) as usize;
                let written = (from.start as u32, from.len() as u32);
                let data =
                    self.new_data(request, index, (start - request.offset_bytes) as usize, Some((old, from.clone())));
                if let Some(model) = &mut self.model {
                    match &data {
                        // The host's bytes go over the model's own page, not the one read back.
                        PageData::Bytes(page) => model.patch(lpn, from.clone(), &page[from]),
                        other => model.write(lpn, other),
                    }
                }
                self.store.write_range(lpn, data, written, read_done_ns)?
            }
        })
    }

    /// The data a written page carries. `src` is the offset of the page's first written
    /// byte in the request; `merge` the old page and the byte range being replaced.
    /// (Forced inline: in metadata mode it is a constant.)
    #[inline(always)]
    fn new_data(
        &mut self,
        request: &Request,
        index: u64,
        src: usize,
        merge: Option<(PageData, std::ops::Range<usize>)>,
    ) -> PageData {
        match self.options.content {
            PageContent::None => PageData::Empty,
            _ => self.new_content(request, index, src, merge),
        }
    }

    /// [`Engine::new_data`] when pages carry content (bytes or identities).
    fn new_content(
        &mut self,
        request: &Request,
        index: u64,
        src: usize,
        merge: Option<(PageData, std::ops::Range<usize>)>,
    ) -> PageData {
        let page_bytes = self.page_bytes as usize;
        match (self.options.content, &request.content) {
            (PageContent::None, _) => PageData::Empty,
            (PageContent::Bytes, content) => {
                // A partial page keeps its old bytes outside the host's range.
                let (mut page, range) = match merge {
                    Some((PageData::Bytes(old), range)) if old.len() == page_bytes => (old, range),
                    Some((_, range)) => (vec![0xFF; page_bytes], range),
                    None => (vec![0; page_bytes], 0..page_bytes),
                };
                match content {
                    Content::Bytes(bytes) => {
                        let available = bytes.len().saturating_sub(src).min(range.len());
                        page[range.start..range.start + available].copy_from_slice(&bytes[src..src + available]);
                    }
                    // A trace without bytes: the next bytes of the seed's stream.
                    _ => self.bytes_rng.fill_bytes(&mut page[range]),
                }
                PageData::Bytes(page)
            }
            (PageContent::Fingerprint, Content::Bytes(bytes)) if merge.is_none() => {
                PageData::Bytes(bytes.get(src..src + page_bytes).map_or_else(|| vec![0; page_bytes], <[u8]>::to_vec))
            }
            (PageContent::Fingerprint, Content::PageIds(ids)) if merge.is_none() => {
                ids.get(index as usize).map_or_else(|| self.synthetic(), |&id| PageData::Fingerprint(id))
            }
            // Content-free traces and partial pages in fingerprint mode: a fresh content id.
            (PageContent::Fingerprint, _) => self.synthetic(),
        }
    }

    /// Records a whole page the host wrote in the model.
    #[inline]
    fn remember(&mut self, lpn: u64, data: &PageData) {
        if let Some(model) = &mut self.model {
            model.write(lpn, data);
        }
    }

    /// The store's counters, less the check after a recovery's.
    fn stats(&self) -> StoreStats {
        let stats = self.store.stats();
        self.excluded.as_ref().map_or(stats, |check| stats.since(check))
    }

    /// The store's device writes so far (0 for a store without a power switch).
    fn writes(&mut self) -> u64 {
        self.store.power_switch().map_or(0, |switch| switch.writes())
    }

    /// Cuts the power in request `operation` (`inside`: the switch refused one of its
    /// device writes, and the request is not acknowledged) or after it (from 1; 0 before
    /// the first), recovers (again, when a second cut falls in the recovery), and checks
    /// every page of the model at once. The check's reads are left out of every counter,
    /// and the trace goes on when they have completed (its gaps kept).
    fn power_cycle(&mut self, operation: u64, inside: bool) -> Result<(), Stop> {
        let (trace_writes, second) = (self.trace_writes, self.options.power_loss_during_recovery);
        let writes = self.writes();
        let (device_write, activity) = match self.store.power_switch().and_then(|switch| switch.cuts().last()) {
            Some(cut) if inside => (cut.device_write, Some(cut.activity)),
            _ => (writes, None),
        };
        if let Some(m) = second {
            let switch = self.store.power_switch().ok_or_else(|| {
                FlashError::Config("this storage layer has no power switch to cut during recovery".into())
            })?;
            switch.cut_after_restore(writes + m - 1);
        }
        let model = self.model.as_mut().expect("a power-loss run keeps a model");
        if inside {
            model.interrupted();
        }
        let mut recovery_cut = None;
        let recovery_device_writes = loop {
            let start = self.writes();
            match self.store.power_cycle() {
                Ok(()) => break self.writes() - start,
                Err(FlashError::PowerCut(at)) if recovery_cut.is_none() => recovery_cut = Some(at - start + 1),
                Err(e) => return Err(e.into()),
            }
        };
        if let Some(asked) = self.options.power_loss_during_recovery.filter(|_| recovery_cut.is_none()) {
            return Err(Stop::PastEnd(CutPastEnd::RecoveryWrite { asked, writes: recovery_device_writes }));
        }
        self.power_cycles += 1;
        let model = self.model.as_ref().expect("a power-loss run keeps a model");
        let before = self.store.stats();
        let (after_recovery, done_ns) = model.check(&mut *self.store, self.clock_ns)?;
        self.excluded = Some(self.store.stats().since(&before));
        self.time_offset_ns = self.time_offset_ns.saturating_add(done_ns - self.clock_ns);
        self.clock_ns = done_ns;
        self.power_loss = Some(PowerLossReport {
            operation,
            device_write: device_write - trace_writes + 1,
            activity,
            recovery_cut,
            recovery_device_writes,
            after_recovery,
        });
        Ok(())
    }

    fn synthetic(&mut self) -> PageData {
        // SplitMix64: distinct ids for distinct writes.
        let id = nvmdb_device::splitmix64(self.synthetic_id);
        self.synthetic_id = self.synthetic_id.wrapping_add(nvmdb_device::splitmix::GAMMA);
        PageData::Fingerprint(id)
    }

    fn finish(&mut self) -> ReplayReport {
        let mut r = std::mem::replace(&mut self.report, ReplayReport::empty(self.options.content));
        r.power_cycles = self.power_cycles;
        r.passes = self.options.passes;
        r.stats = self.stats();
        r.power_loss = self.power_loss;
        r.health = self.store.health();
        r.pending = self.store.pending();
        r.set_times(&mut self.responses_ns, self.first_arrival_ns, self.last_completion_ns);
        if let Some(mut mark) = self.last_pass.take() {
            let mut last = ReplayReport { stats: r.stats.since(&mark.stats), ..r.clone() };
            last.subtract_requests(&mark.report);
            last.set_times(&mut mark.responses_ns, mark.first_arrival_ns, self.last_completion_ns);
            r.last_pass = Some(Box::new(last));
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SsdConfig;

    fn small(content: PageContent) -> Box<dyn PageStore> {
        let mut config = SsdConfig { content, ..SsdConfig::default() };
        config.flash.packages = 1;
        config.flash.planes_per_package = 2;
        config.flash.blocks_per_plane = 16;
        config.flash.pages_per_block = 8;
        config.ftl.overprovision = 0.3;
        crate::stack::build(&config).unwrap()
    }

    fn write(time_ns: u64, offset_bytes: u64, bytes: Vec<u8>) -> Result<Request, String> {
        Ok(Request {
            time_ns,
            op: Op::Write,
            offset_bytes,
            len_bytes: bytes.len() as u64,
            content: Content::Bytes(bytes),
        })
    }

    #[test]
    fn requests_split_into_pages_with_read_modify_write_for_partial_pages() {
        let mut store = small(PageContent::Bytes);
        let options = ReplayOptions { content: PageContent::Bytes, ..ReplayOptions::default() };
        // Page 0 whole, then bytes 4000..4200 (end of page 0, start of page 1): two RMWs.
        let requests = vec![write(0, 0, vec![1; 4096]), write(1_000_000, 4000, vec![2; 200])];
        let report = replay(store.as_mut(), requests.into_iter(), &options).unwrap();
        assert_eq!(report.stats.host_page_writes, 3);
        assert_eq!(report.rmw_pages, 2);
        assert_eq!(report.stats.host_page_reads, 2);
        let PageData::Bytes(page0) = store.read(0, 0).unwrap().0 else { panic!("bytes mode returns bytes") };
        assert!(page0[..4000].iter().all(|&b| b == 1) && page0[4000..].iter().all(|&b| b == 2));
        let PageData::Bytes(page1) = store.read(1, 0).unwrap().0 else { panic!("bytes mode returns bytes") };
        assert!(page1[..104].iter().all(|&b| b == 2) && page1[104..].iter().all(|&b| b == 0xFF));
        store.check_invariants().unwrap();
    }

    #[test]
    fn synthetic_bytes_are_the_seeds_stream_without_short_periods() {
        let mut store = small(PageContent::Bytes);
        let options = ReplayOptions { content: PageContent::Bytes, seed: 5, ..ReplayOptions::default() };
        let page = |lpn: u64| {
            Ok::<_, String>(Request {
                time_ns: 0,
                op: Op::Write,
                offset_bytes: lpn * 4096,
                len_bytes: 4096,
                content: Content::Unknown,
            })
        };
        replay(store.as_mut(), [page(0), page(1)].into_iter(), &options).unwrap();
        let mut stream = vec![0; 2 * 4096];
        Xoshiro256PlusPlus::seed_from_u64(5 ^ SYNTHETIC_BYTES_STREAM).fill_bytes(&mut stream);
        let PageData::Bytes(page0) = store.read(0, 0).unwrap().0 else { panic!("bytes mode returns bytes") };
        let PageData::Bytes(page1) = store.read(1, 0).unwrap().0 else { panic!("bytes mode returns bytes") };
        assert_eq!((&page0[..], &page1[..]), (&stream[..4096], &stream[4096..]), "the stream, in write order");
        for period in 1..4096 {
            assert_ne!(page0[period..], page0[..4096 - period], "a period of {period} bytes");
        }
    }

    #[test]
    fn response_times_p99_and_warmup() {
        let mut store = small(PageContent::None);
        // 200 one-page writes far apart: each takes one program (200 µs, Table 5.1).
        let requests = (0..200u64).map(|i| {
            Ok::<_, String>(Request {
                time_ns: i * 10_000_000,
                op: Op::Write,
                offset_bytes: i * 4096,
                len_bytes: 4096,
                content: Content::Unknown,
            })
        });
        let options = ReplayOptions { warmup_requests: 100, ..ReplayOptions::default() };
        let report = replay(store.as_mut(), requests, &options).unwrap();
        assert_eq!(report.requests, 100);
        assert_eq!(report.stats.host_page_writes, 100);
        assert_eq!((report.mean_response_ns, report.p99_response_ns), (200_000, 200_000));
        assert_eq!(report.content_mode, PageContent::None);
        assert_eq!(report.summary().write_amplification, 1.0);
        // Three one-page requests at once on two planes (striped round-robin): the third
        // waits for the first.
        let mut store = small(PageContent::None);
        let same_time = [0u64, 1, 2].map(|page| {
            Ok::<_, String>(Request {
                time_ns: 0,
                op: Op::Write,
                offset_bytes: page * 4096,
                len_bytes: 4096,
                content: Content::Unknown,
            })
        });
        let report = replay(store.as_mut(), same_time.into_iter(), &ReplayOptions::default()).unwrap();
        assert_eq!((report.mean_response_ns, report.p99_response_ns), (266_666, 400_000));
    }

    #[test]
    fn input_errors_are_reported_and_addresses_wrap() {
        let mut store = small(PageContent::None);
        let bad = vec![Err::<Request, String>("line 3: bad".into())];
        assert_eq!(
            replay(store.as_mut(), bad.into_iter(), &ReplayOptions::default()),
            Err(ReplayError::Input("line 3: bad".to_string()))
        );
        let beyond = store.logical_pages() * 4096;
        let wrapped = vec![write(0, beyond, vec![0; 4096])];
        let report = replay(store.as_mut(), wrapped.into_iter(), &ReplayOptions::default()).unwrap();
        assert_eq!(report.wrapped_pages, 1);
        // A trace shorter than its warm-up measures nothing.
        let short = vec![write(0, 0, vec![0; 4096]), write(1, 0, vec![0; 4096])];
        let options = ReplayOptions { warmup_requests: 5, ..ReplayOptions::default() };
        let report = replay(store.as_mut(), short.into_iter(), &options).unwrap();
        assert_eq!((report.requests, report.stats.host_page_writes, report.lifetime_host_bytes()), (0, 0, None));
    }

    /// Whole-page writes of pages `0..pages`, then 100 B writes (logged by a log layer) and
    /// reads of them, 1 ms apart.
    fn updates(pages: u64) -> Vec<Request> {
        let request = |i: u64, op, lpn: u64, len| Request {
            time_ns: i * 1_000_000,
            op,
            offset_bytes: lpn * 4096,
            len_bytes: len,
            content: Content::Unknown,
        };
        let mut requests: Vec<Request> = (0..pages).map(|p| request(p, Op::Write, p, 4096)).collect();
        requests.extend((0..pages).map(|p| request(pages + p, Op::Write, p, 100)));
        requests.extend((0..pages).map(|p| request(2 * pages + p, Op::Read, p, 4096)));
        requests
    }

    fn log_store(kind: crate::config::BufferKind) -> Box<dyn PageStore> {
        let mut config = SsdConfig::default();
        config.flash.packages = 1;
        config.flash.planes_per_package = 2;
        config.flash.blocks_per_plane = 16;
        config.ftl.overprovision = 0.3;
        config.buffer.kind = kind;
        config.buffer.pcm_mb = 1;
        crate::stack::build(&config).unwrap()
    }

    #[test]
    fn passes_replay_the_same_requests_and_report_the_last_alone() {
        let trace = updates(40);
        let run = |passes| {
            let mut store = log_store(crate::config::BufferKind::Dpram);
            let options = ReplayOptions { passes, ..ReplayOptions::default() };
            replay(store.as_mut(), trace.iter().cloned().map(Ok::<_, String>), &options).unwrap()
        };
        let one = run(1);
        assert_eq!((one.passes, one.last_pass.is_none()), (1, true));
        let three = run(3);
        assert_eq!(three, run(3), "deterministic");
        assert_eq!(three.requests, 3 * 120);
        assert_eq!(three.stats.host_page_writes, 3 * 80);
        let last = three.last_pass.as_deref().expect("the last pass");
        assert_eq!((last.requests, last.write_requests, last.read_requests), (120, 80, 40));
        assert_eq!(last.stats.host_page_writes, 80);
        // Every write of a pass after the first updates a page written before: none is a
        // first write, and the counters are the run's minus the first two passes'.
        assert_eq!(last.stats.direct_writes, 0);
        assert_eq!(three.stats.direct_writes, 40);
        assert_eq!(last.stats.logged_writes + last.stats.out_of_place_writes, 80);
        // A pass starts when the one before has completed, and keeps the trace's gaps.
        assert!(last.span_ns >= 119 * 1_000_000 && three.span_ns >= 3 * last.span_ns, "{three:?}");
        assert_eq!((last.pending, last.health), (three.pending, three.health), "the end state is the run's");
    }

    #[test]
    fn a_drain_carries_every_pending_record_to_flash_and_counts_it() {
        let trace = updates(40);
        for kind in
            [crate::config::BufferKind::Ipl, crate::config::BufferKind::Dpram, crate::config::BufferKind::PcmLog]
        {
            let run = |drain| {
                let mut store = log_store(kind);
                let options = ReplayOptions { drain, passes: 2, ..ReplayOptions::default() };
                let report = replay(store.as_mut(), trace.iter().cloned().map(Ok::<_, String>), &options).unwrap();
                store.check_invariants().unwrap();
                assert_eq!(store.pending(), report.pending, "{kind:?}");
                report
            };
            let (kept, drained) = (run(false), run(true));
            assert!(kept.pending.log_records > 0 && kept.pending.log_pages > 0, "{kind:?}: {:?}", kept.pending);
            assert_eq!(drained.pending, Pending::default(), "{kind:?}");
            assert!(drained.drained && !kept.drained);
            let (k, d) = (&kept.stats, &drained.stats);
            assert!(d.merges > k.merges && d.flash_page_programs > k.flash_page_programs, "{kind:?}: {k:?} {d:?}");
            assert!(drained.energy_pj() > kept.energy_pj() && d.gc_time_ns > k.gc_time_ns, "{kind:?}");
            // The drain follows the last pass: its work is in the last pass's figures too.
            let (kl, dl) = (&kept.last_pass.as_ref().unwrap().stats, &drained.last_pass.as_ref().unwrap().stats);
            assert_eq!(dl.merges - kl.merges, d.merges - k.merges, "{kind:?}");
            assert_eq!(d.host_page_writes, k.host_page_writes, "{kind:?}: the drain writes no host page");
        }
    }

    #[test]
    fn ageing_writes_every_page_twice_out_of_every_figure() {
        let trace = updates(40);
        for kind in [crate::config::BufferKind::None, crate::config::BufferKind::Ipl, crate::config::BufferKind::PcmLog]
        {
            let mut store = log_store(kind);
            let pages = store.logical_pages();
            let options = ReplayOptions { age: true, content: PageContent::Fingerprint, ..ReplayOptions::default() };
            let report = replay(store.as_mut(), trace.iter().cloned().map(Ok::<_, String>), &options).unwrap();
            assert_eq!(report.aged_pages, 2 * pages, "{kind:?}");
            assert_eq!(report.stats.host_page_writes, 80, "{kind:?}: the trace's writes alone");
            // On an aged device no trace write is a first write, and every page is mapped.
            assert_eq!(report.stats.direct_writes, 0, "{kind:?}");
            assert_eq!(report.health.mapped_pages, pages, "{kind:?}");
            store.check_invariants().unwrap();
        }
    }

    #[test]
    fn wrapping_and_overlong_requests_are_errors_not_silent() {
        let mut store = small(PageContent::None);
        let request = |offset_bytes, len_bytes| {
            Ok::<_, String>(Request { time_ns: 0, op: Op::Read, offset_bytes, len_bytes, content: Content::Unknown })
        };
        let capacity = store.logical_pages() * 4096;
        for (offset, len, why) in [(u64::MAX - 10, 4096, "crosses 2^64"), (0, capacity + 1, "longer than the device")] {
            match replay(store.as_mut(), [request(offset, len)].into_iter(), &ReplayOptions::default()) {
                Err(ReplayError::Store { request: 0, error: FlashError::Request(message) }) => {
                    assert!(message.contains(why), "{message}")
                }
                other => panic!("{offset}+{len}: {other:?}"),
            }
        }
        // A page just below 2^64 still runs, wrapped.
        let report =
            replay(store.as_mut(), [request(u64::MAX - 8191, 4096)].into_iter(), &ReplayOptions::default()).unwrap();
        assert_eq!((report.stats.host_page_reads, report.wrapped_pages), (1, 1));
    }
}
