//! The page-mapped FTL's recovery after a power loss: the volatile tables rebuilt from the
//! pages' out-of-band records (and, with deduplication, the fingerprint store in PCM).

use nvmdb_device::{FlashArray, PowerSwitch};

use super::{parse_oob, PageFtl, TRIM_BIT, UNMAPPED};
use crate::config::SsdConfig;
use crate::dedup::Dedup;
use crate::layer::FlashError;

impl PageFtl {
    /// Rebuilds the FTL after a power loss from what survives: the flash array (its pages'
    /// out-of-band records and write pointers) and, with deduplication, the PCM of
    /// `dedup` (the engine from before the loss; its volatile parts are rebuilt). The
    /// rebuild's own writes pass through `power`, which the FTL keeps. See
    /// [`PageFtl::power_cycle`](crate::layer::PageStore::power_cycle) for the rules.
    pub fn reopen(
        config: &SsdConfig,
        flash: FlashArray,
        dedup: Option<Dedup>,
        power: PowerSwitch,
    ) -> Result<PageFtl, FlashError> {
        let mut ftl = PageFtl::with_geometry(config, *flash.geometry())?;
        ftl.flash = flash;
        ftl.power = power;
        ftl.rebuild(dedup)?;
        Ok(ftl)
    }

    /// [`PageFtl::reopen`]'s rebuild, on a fresh FTL that holds the surviving flash array
    /// and power switch; `dedup` goes to it whether or not the rebuild completes.
    pub(super) fn rebuild(&mut self, dedup: Option<Dedup>) -> Result<(), FlashError> {
        let ftl = self;
        let geometry = ftl.geometry;
        if ftl.dedup.is_some() {
            ftl.dedup = Some(dedup.ok_or_else(|| {
                FlashError::Config("a deduplicating FTL recovers with its fingerprint store's PCM".into())
            })?);
        }
        let ppb = u64::from(geometry.pages_per_block);
        // Per logical page, its newest record: (sequence number, programmed sectors,
        // physical page, whether it is a trim record).
        let mut newest: Vec<(u64, u32, u32, bool)> = vec![(0, 0, UNMAPPED, false); ftl.logical_pages as usize];
        // Deduplication: each data page by its identity (logical page, sequence number).
        let mut by_identity: std::collections::HashMap<(u32, u64), (u32, u32)> = std::collections::HashMap::new();
        let mut block_seq = vec![0u64; geometry.blocks() as usize];
        for block in 0..geometry.blocks() {
            for page in 0..u64::from(ftl.flash.write_pointer(block)) {
                let ppn = block * ppb + page;
                let Some((raw, seq)) = ftl.flash.spare(ppn).and_then(parse_oob) else { continue };
                block_seq[block as usize] = block_seq[block as usize].max(seq);
                ftl.write_seq = ftl.write_seq.max(seq + 1);
                // Two copies with one sequence number are a page and its GC copy: the one
                // with more programmed sectors is whole (a partial copy may be torn).
                let sectors = ftl.flash.sector_mask(ppn).map_or(u32::MAX, u64::count_ones);
                if let Some(slot) = newest.get_mut((raw & !TRIM_BIT) as usize) {
                    if (seq, sectors) > (slot.0, slot.1) {
                        *slot = (seq, sectors, ppn as u32, raw & TRIM_BIT != 0);
                    }
                }
                if ftl.dedup.is_some() && raw & TRIM_BIT == 0 {
                    let known = by_identity.entry((raw, seq)).or_insert((sectors, ppn as u32));
                    if sectors > known.0 {
                        *known = (sectors, ppn as u32);
                    }
                }
            }
        }
        // Deduplication: a share-map slot newer than every flash record of its page maps
        // it to the page the slot names.
        if let Some(dedup) = &mut ftl.dedup {
            for (lpn, slot) in newest.iter_mut().enumerate() {
                let Some(share) = dedup.share(lpn as u32)? else { continue };
                ftl.write_seq = ftl.write_seq.max(share.seq + 1);
                if share.seq > slot.0 {
                    let &(_, ppn) = by_identity.get(&(share.owner, share.owner_seq)).ok_or_else(|| {
                        FlashError::Config(format!(
                            "recovery: logical page {lpn} shares a page (written for {} as write {}) that flash no longer holds",
                            share.owner, share.owner_seq
                        ))
                    })?;
                    *slot = (share.seq, 0, ppn, false);
                }
            }
        }
        for (lpn, &(seq, _, ppn, trimmed)) in newest.iter().enumerate() {
            if ppn == UNMAPPED {
                continue;
            }
            if trimmed {
                ftl.p2l[ppn as usize] = lpn as u32 | TRIM_BIT;
                ftl.trims.insert(lpn as u32, ppn);
                ftl.count_valid(geometry.block_of(u64::from(ppn)) as usize, true);
                continue;
            }
            let fresh = ftl.p2l[ppn as usize] == UNMAPPED;
            ftl.map(lpn as u32, ppn, seq);
            if fresh {
                ftl.count_valid(geometry.block_of(u64::from(ppn)) as usize, true);
            }
        }
        // Every block with programmed pages is closed (its erased pages stay unused until
        // GC erases it), aged by the newest write sequence number in it (the order in which
        // the blocks were closed is not on flash); the others are free. Blocks closed from
        // now on are younger than every recovered one: FIFO would otherwise collect the
        // blocks written after the recovery first, full of live pages.
        for plane in &mut ftl.planes {
            plane.free.clear();
        }
        for block in 0..geometry.blocks() {
            if ftl.flash.write_pointer(block) == 0 {
                ftl.release(block as u32);
            } else {
                ftl.close(block as u32, block_seq[block as usize]);
            }
        }
        ftl.seq = ftl.seq.max(block_seq.iter().copied().max().unwrap_or(0));
        ftl.rebuild_fingerprints()
    }

    /// Deduplication after a power loss: the fingerprint store again holds every live
    /// page written whole (not the partially programmed log pages of a layer above),
    /// fingerprinted from its flash content, in physical order.
    pub(super) fn rebuild_fingerprints(&mut self) -> Result<(), FlashError> {
        if self.dedup.is_none() {
            return Ok(());
        }
        let mut pages = Vec::new();
        for ppn in 0..self.p2l.len() as u32 {
            let owner = self.p2l[ppn as usize];
            if owner == UNMAPPED || owner & TRIM_BIT != 0 || self.flash.sector_mask(u64::from(ppn)).is_some() {
                continue;
            }
            let (data, _) = self.flash.read_page(u64::from(ppn), 0)?;
            if let Some(fingerprint) = Dedup::fingerprint(&data) {
                pages.push((fingerprint, ppn));
            }
        }
        let dedup = self.dedup.as_mut().expect("dedup is on");
        dedup.rebuild(&mut self.power, pages)?;
        Ok(())
    }

    /// Rebuilds every volatile table from the devices (see [`PageStore::power_cycle`]).
    pub(super) fn recover(&mut self) -> Result<(), FlashError> {
        self.power.restore();
        let mut fresh = PageFtl::with_geometry(&self.config, self.geometry)?;
        fresh.stats = self.stats;
        // The devices move to the rebuilt FTL; a recovery cut short (a second power loss)
        // hands them back, so that the next power cycle starts again from them alone.
        std::mem::swap(&mut fresh.flash, &mut self.flash);
        std::mem::swap(&mut fresh.power, &mut self.power);
        let dedup = self.dedup.take();
        match fresh.rebuild(dedup) {
            Ok(()) => {
                *self = fresh;
                Ok(())
            }
            Err(e) => {
                std::mem::swap(&mut fresh.flash, &mut self.flash);
                std::mem::swap(&mut fresh.power, &mut self.power);
                self.dedup = fresh.dedup.take();
                Err(e)
            }
        }
    }
}
