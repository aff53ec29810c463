//! Devices that account for every bit: PCM (main-memory and storage views),
//! NAND flash, and volatile DRAM/SRAM.
//!
//! Devices know nothing about the data structures that live in them. Each device
//! owns a `*Stats` struct of integer counters; derived figures (energy, latency)
//! are computed from counters and a typed parameter preset.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

pub mod error;
pub mod flash;
pub mod params;
pub mod pcm;
pub mod power;
pub mod splitmix;
pub mod start_gap;
pub mod volatile;
pub mod wear;

pub use error::DeviceError;
pub use flash::{FlashArray, FlashGeometry, FlashStats, PageContent, PageData, Ppn};
pub use params::{FlashTiming, PcmMetrics, PcmStorageTiming, ProgramBudget, VolatileParams};
pub use pcm::{FlipNWrite, LineDevice, LineWrite, Pcm, PcmAccounting, PcmConfig, PcmStats};
pub use power::{Activity, Cut, PowerLoss, PowerSwitch};
pub use splitmix::{mix64, splitmix64};
pub use volatile::{Volatile, VolatileKind};
pub use wear::WearReport;

// Device sizes, line numbers and addresses are u64 and index in-memory vectors.
const _: () = assert!(usize::BITS >= 64, "nvmdb needs a 64-bit target");

/// `x`, an index, offset or count of something held in memory, as a `usize`.
///
/// Never fails and costs nothing: nvmdb builds only for 64-bit targets (asserted at
/// compile time), where `usize` holds every `u64`. Numbers from input are checked
/// where they enter, not here.
#[inline]
#[must_use]
pub fn index(x: u64) -> usize {
    usize::try_from(x).expect("usize holds every u64 on the 64-bit targets nvmdb builds for")
}
