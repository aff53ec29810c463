//! Devices that account for every bit: PCM (main-memory and storage views),
//! NAND flash, and volatile DRAM/SRAM.
//!
//! Devices know nothing about the data structures that live in them. Each device
//! owns a `*Stats` struct of integer counters; derived figures (energy, latency)
//! are computed from counters and a typed parameter preset.

pub mod error;
pub mod flash;
pub mod params;
pub mod pcm;
pub mod power;
pub mod start_gap;
pub mod volatile;
pub mod wear;

pub use error::DeviceError;
pub use flash::{FlashArray, FlashGeometry, FlashStats, PageContent, PageData, Ppn};
pub use params::{FlashTiming, PcmMetrics, PcmStorageTiming, VolatileParams};
pub use pcm::{FlipNWrite, LineDevice, LineWrite, Pcm, PcmConfig, PcmStats};
pub use power::PowerLoss;
pub use volatile::{Volatile, VolatileKind};
pub use wear::WearReport;
