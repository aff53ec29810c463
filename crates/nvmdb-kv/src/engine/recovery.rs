//! Recovery: the engine's state rebuilt from the committed metadata and the log areas.

use nvmdb_device::flash::SECTOR_BYTES;

use super::layout::{BlockLog, Meta, Unit, NO_SLOT, SECTOR_HEADER_BYTES, UNIT_HEADER_BYTES};
use super::Engine;
use crate::config::EngineKind;
use crate::page::{Page, Record};
use crate::KvError;

impl Engine {
    pub(super) fn recover_state(&mut self) -> Result<(), KvError> {
        let start_ns = self.store.now_ns;
        let mut newest: Option<(u64, Vec<u8>)> = None;
        for slot in 0..2 {
            if let Some((seq, body)) = self.store.read_meta(slot)? {
                if newest.as_ref().is_none_or(|(s, _)| seq > *s) {
                    newest = Some((seq, body));
                }
            }
        }
        let meta = match newest {
            Some((seq, body)) => {
                self.meta_seq = seq;
                let pages = u32::from_le_bytes(body.get(4..8).and_then(|b| b.try_into().ok()).unwrap_or([0; 4]));
                let blocks = self.blocks_used(pages);
                Meta::decode(&body, blocks).ok_or_else(|| KvError::Corrupt("metadata does not decode".into()))?
            }
            None => Meta::default(),
        };
        self.root = meta.root;
        self.next_page = meta.next_page;
        self.next_lsn = meta.next_lsn.max(1);
        self.table = meta.table.clone();
        let mut used = vec![false; self.store.layout.image_slots as usize];
        for &slot in &self.table {
            if slot != NO_SLOT {
                used[slot as usize] = true;
            }
        }
        self.free_slots = (0..self.store.layout.image_slots).rev().filter(|&s| !used[s as usize]).collect();
        // Every page of the committed tree has an image (a sync writes every dirty page
        // first), so the pages without one are the free pages.
        self.free_pages = (0..self.next_page).rev().filter(|&p| self.table[p as usize] == NO_SLOT).collect();
        // Slots no committed metadata names may still hold pages the FTL maps (images
        // written after the last commit, or freed slots whose discard the FTL forgot in
        // the power loss): discard them again so garbage collection can reclaim them.
        if self.config.kind.has_flash() {
            for slot in self.free_slots.clone() {
                self.store.discard_image(slot)?;
            }
        }
        self.logs =
            meta.logs.iter().map(|&(generation, _)| BlockLog { generation, used: 0, units: Vec::new() }).collect();
        self.committed = meta;
        if self.config.kind == EngineKind::Ipl {
            // Log pages of blocks the committed state does not have may still be mapped
            // (their discards are forgotten in a power loss); new sectors must go to
            // erased pages.
            for block in self.logs.len()..self.store.layout.blocks as usize {
                self.store.flash_log_discard(block as u32)?;
            }
        }
        let mut stale_blocks = Vec::new();
        for block in 0..self.logs.len() {
            if self.recover_log(block)? {
                stale_blocks.push(block);
            }
        }
        if self.next_page == 0 {
            // A fresh database: one empty leaf as the root, not yet written anywhere.
            self.root = self.alloc_page()?;
            let page = Page::empty_leaf(self.root);
            self.install(page, true)?;
        }
        for block in stale_blocks {
            self.merge(block)?;
        }
        self.recovery_ns = self.store.now_ns - start_ns;
        Ok(())
    }

    /// Rebuilds a block's log index from its log area; true when the area holds records
    /// written after the last commit of the same generation that a flash sector cannot
    /// forget (`ipl`): the block is then merged before the engine runs.
    pub(super) fn recover_log(&mut self, block: usize) -> Result<bool, KvError> {
        let (generation, committed_len) = self.committed.logs[block];
        let mut units = Vec::new();
        let mut used = committed_len;
        let mut stale = false;
        match self.config.kind {
            EngineKind::IplP => {
                let bytes = self.store.pcm_log_read(block as u32, 0, committed_len as usize)?;
                let unit = self.store.layout.pcm_unit as usize;
                let mut at = 0usize;
                while at < bytes.len() {
                    let len = usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
                    let body = bytes
                        .get(at + UNIT_HEADER_BYTES..at + UNIT_HEADER_BYTES + len)
                        .ok_or_else(|| KvError::Corrupt(format!("block {block}: log unit overruns the log")))?;
                    let records = Record::decode_all(body)?;
                    let first =
                        records.first().ok_or_else(|| KvError::Corrupt(format!("block {block}: empty log unit")))?;
                    units.push(Unit { at: at as u32, len: len as u32, page: first.page });
                    at += (UNIT_HEADER_BYTES + len).next_multiple_of(unit);
                }
            }
            EngineKind::Ipl => {
                let spp = self.store.layout.sectors_per_log_page;
                for k in 0..self.store.layout.log_pages {
                    let Some((bytes, mask)) = self.store.flash_log_read(block as u32, k)? else { continue };
                    for s in 0..spp {
                        if mask & (1 << s) == 0 {
                            continue;
                        }
                        let index = k * spp + s;
                        used = used.max(index + 1);
                        let sector = &bytes[(s * SECTOR_BYTES) as usize..((s + 1) * SECTOR_BYTES) as usize];
                        let sector_generation = u32::from_le_bytes(sector[..4].try_into().expect("4 bytes"));
                        if sector_generation != generation {
                            continue;
                        }
                        if index >= committed_len {
                            stale = true;
                            continue;
                        }
                        let len = usize::from(u16::from_le_bytes([sector[4], sector[5]]));
                        let body = sector
                            .get(SECTOR_HEADER_BYTES..SECTOR_HEADER_BYTES + len)
                            .ok_or_else(|| KvError::Corrupt(format!("block {block}: log sector overruns")))?;
                        let records = Record::decode_all(body)?;
                        let first = records
                            .first()
                            .ok_or_else(|| KvError::Corrupt(format!("block {block}: empty log sector")))?;
                        units.push(Unit { at: index, len: len as u32, page: first.page });
                    }
                }
                units.sort_by_key(|u| u.at);
            }
            _ => {}
        }
        self.logs[block] = BlockLog { generation, used, units };
        Ok(stale)
    }
}
