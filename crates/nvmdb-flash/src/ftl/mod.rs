//! Flash translation layers: page-mapped, block-mapped and hybrid log-block (FAST).

pub mod block;
mod by_valid;
pub mod hybrid;
pub mod page;
pub mod pool;

pub use block::BlockFtl;
pub use hybrid::HybridFtl;
pub use page::PageFtl;
