//! How to replay ([`ReplayOptions`]), what the host's read-back receives, and how a replay
//! fails.

use nvmdb_device::PageContent;
use serde::{Deserialize, Serialize};

use crate::layer::FlashError;

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
    /// ([`ReplayReport::last_pass`](super::ReplayReport::last_pass)).
    pub passes: u64,
    /// After the last request, carry every pending piece of work to flash
    /// ([`PageStore::drain`](crate::PageStore::drain): merge every log record, write the
    /// DRAM buffer down), counted in every figure (and the last pass's) as the same work is
    /// during the run.
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
