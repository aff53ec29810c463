//! Builds a whole SSD stack from an [`SsdConfig`]: an FTL over flash, or one of the log
//! schemes (IPL, d-PRAM, PCM log), which manage their own flash blocks.

use crate::config::{BufferKind, Mapping, SsdConfig};
use crate::ftl::{BlockFtl, HybridFtl, PageFtl};
use crate::layer::{FlashError, PageStore};

/// Builds the stack `config` describes: the FTL of `ftl.mapping` for
/// `buffer.kind = "none"`; otherwise the log scheme, which maps logical blocks to flash
/// blocks itself and uses only `ftl.overprovision` of the `ftl` section.
pub fn build(config: &SsdConfig) -> Result<Box<dyn PageStore>, FlashError> {
    config.validate()?;
    match config.buffer.kind {
        BufferKind::None => build_ftl(config),
        BufferKind::Ipl => Ok(Box::new(crate::ipl::IplStore::new(config)?)),
        BufferKind::Dpram => Ok(Box::new(crate::dpram::DpramStore::new(config)?)),
        BufferKind::PcmLog => Ok(Box::new(crate::pcm_log::PcmLogStore::new(config)?)),
    }
}

/// Builds the FTL `config.ftl.mapping` names, ignoring the buffer section.
pub fn build_ftl(config: &SsdConfig) -> Result<Box<dyn PageStore>, FlashError> {
    match config.ftl.mapping {
        Mapping::Page => Ok(Box::new(PageFtl::new(config)?)),
        Mapping::Block => Ok(Box::new(BlockFtl::new(config)?)),
        Mapping::Hybrid => Ok(Box::new(HybridFtl::new(config)?)),
    }
}
