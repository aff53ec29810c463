//! Builds a whole SSD stack from an [`SsdConfig`]: an FTL over flash, and for a log
//! scheme (IPL, d-PRAM, PCM log) the log layer above a page-mapped FTL; for IPL in its own
//! layout its storage manager over the flash array.

use crate::config::{BufferKind, Mapping, SsdConfig};
use crate::ftl::{BlockFtl, HybridFtl, PageFtl};
use crate::layer::{FlashError, PageStore};

/// Builds the stack `config` describes: the FTL of `ftl.mapping` for
/// `buffer.kind = "none"`; `ipl-native` over the flash array alone; otherwise the log
/// scheme above the page-mapped FTL (with deduplication when `dedup.enabled`); with
/// `dram.pages` > 0, the DRAM write buffer on top.
pub fn build(config: &SsdConfig) -> Result<Box<dyn PageStore>, FlashError> {
    config.validate()?;
    let own_layout = config.buffer.kind == BufferKind::IplNative;
    if config.buffer.kind != BufferKind::None && !own_layout && config.ftl.mapping != Mapping::Page {
        return Err(FlashError::Config(format!(
            "buffer.kind = {:?} sits above the page-mapped FTL; it needs ftl.mapping = \"page\"",
            config.buffer.kind
        )));
    }
    let store: Box<dyn PageStore> = match config.buffer.kind {
        BufferKind::None => build_ftl(config)?,
        BufferKind::Ipl => Box::new(crate::ipl::IplStore::new(config)?),
        BufferKind::IplNative => Box::new(crate::ipl_native::IplNativeStore::new(config)?),
        BufferKind::Dpram => Box::new(crate::dpram::DpramStore::new(config)?),
        BufferKind::PcmLog => Box::new(crate::pcm_log::PcmLogStore::new(config)?),
    };
    if config.dram.pages == 0 {
        return Ok(store);
    }
    let dram = &config.dram;
    Ok(Box::new(crate::dram::DramBuffer::new(store, dram.pages, dram.power_loss_protection, config.content)))
}

/// Builds the FTL `config.ftl.mapping` names, ignoring the buffer section.
pub fn build_ftl(config: &SsdConfig) -> Result<Box<dyn PageStore>, FlashError> {
    match config.ftl.mapping {
        Mapping::Page => Ok(Box::new(PageFtl::new(config)?)),
        Mapping::Block => Ok(Box::new(BlockFtl::new(config)?)),
        Mapping::Hybrid => Ok(Box::new(HybridFtl::new(config)?)),
    }
}
