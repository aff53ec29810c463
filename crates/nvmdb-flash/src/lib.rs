//! Flash storage on simulated NAND. Every layer implements one narrow interface,
//! [`PageStore`]: read, write and trim of logical pages, with simulated time.
//!
//! [`config::SsdConfig`] describes a stack, [`stack::build`] builds it, and
//! [`replay::replay`] feeds it block requests.

pub mod config;
pub mod dedup;
pub mod dpram;
pub mod dram;
mod estimate;
pub mod ftl;
pub mod gc;
pub mod ipl;
pub mod ipl_native;
pub mod layer;
pub mod log_common;
pub mod log_store;
pub mod pcm_log;
pub mod replay;
pub mod stack;
pub mod wear_level;

pub use config::SsdConfig;
pub use estimate::TraceCounts;
pub use layer::{FlashError, PageStore, Pending, StoreHealth, StoreStats};
pub use replay::{replay, CutPastEnd, ReplayError, ReplayOptions, ReplayReport, ReplaySummary};
pub use stack::build;
