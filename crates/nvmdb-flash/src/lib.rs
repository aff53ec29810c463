//! Flash storage on simulated NAND. Every layer implements one narrow interface,
//! [`PageStore`]: read, write and trim of logical pages, with simulated time.

pub mod layer;

pub use layer::{FlashError, PageStore, StoreStats};
