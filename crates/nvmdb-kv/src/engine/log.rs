//! Logging and merging: a page's in-memory log sector flushed to its block's log area,
//! merges of a block's logged pages into new images, and the metadata commit.

use nvmdb_device::flash::SECTOR_BYTES;
use nvmdb_device::Activity;

use super::layout::{BlockLog, Meta, Unit, NO_SLOT, UNIT_HEADER_BYTES};
use super::Engine;
use crate::config::EngineKind;
use crate::page::{Node, Page};
use crate::KvError;

impl Engine {
    /// Writes a page's in-memory log sector to its block's log area, merging the block
    /// first when the area has no room.
    pub(super) fn flush_log(&mut self, id: u32) -> Result<(), KvError> {
        let records = std::mem::take(&mut self.frames.get_mut(id).log);
        if records.is_empty() {
            return Ok(());
        }
        let block = self.block_of(id);
        if !self.log_has_room(block, records.len()) {
            self.merge(block)?;
        }
        let log = &self.logs[block];
        let at = log.used;
        match self.config.kind {
            EngineKind::IplP => {
                let unit = self.store.layout.pcm_unit as usize;
                let mut bytes = Vec::with_capacity((UNIT_HEADER_BYTES + records.len()).next_multiple_of(unit));
                bytes.extend_from_slice(&(records.len() as u16).to_le_bytes());
                bytes.extend_from_slice(&records);
                bytes.resize(bytes.len().next_multiple_of(unit), 0);
                self.store.pcm_log_write(block as u32, u64::from(at), &bytes)?;
                self.logs[block].used += bytes.len() as u32;
            }
            _ => {
                let mut sector = Vec::with_capacity(SECTOR_BYTES as usize);
                sector.extend_from_slice(&log.generation.to_le_bytes());
                sector.extend_from_slice(&(records.len() as u16).to_le_bytes());
                sector.extend_from_slice(&records);
                sector.resize(SECTOR_BYTES as usize, 0);
                self.store.flash_log_program(block as u32, at, sector)?;
                self.logs[block].used += 1;
            }
        }
        self.logs[block].units.push(Unit { at, len: records.len() as u32, page: id });
        Ok(())
    }

    pub(super) fn log_has_room(&self, block: usize, record_bytes: usize) -> bool {
        let log = &self.logs[block];
        match self.config.kind {
            EngineKind::IplP => {
                let need = (UNIT_HEADER_BYTES + record_bytes).next_multiple_of(self.store.layout.pcm_unit as usize);
                u64::from(log.used) + need as u64 <= self.store.layout.log_area_bytes
            }
            _ => log.used < self.store.layout.log_sectors,
        }
    }

    /// Merges a block: each page with records gets a new image of its committed state
    /// (when it has committed records) and of its current state, the metadata commits the
    /// new committed images with the block's log emptied, and the log area is reused.
    /// The committed state does not change, so a merge may run at any point. Its device
    /// writes are reported as [`Activity::Merge`].
    pub(super) fn merge(&mut self, block: usize) -> Result<(), KvError> {
        self.doing(Activity::Merge, |e| e.merge_block(block))
    }

    pub(super) fn merge_block(&mut self, block: usize) -> Result<(), KvError> {
        self.merges += 1;
        let committed_len = self.committed.logs.get(block).map_or(0, |l| l.1);
        let mut pages: Vec<u32> = self.logs[block].units.iter().map(|u| u.page).collect();
        pages.sort_unstable();
        pages.dedup();
        let page_bytes = self.config.page_bytes as usize;
        let mut new_committed = Vec::new();
        for id in pages {
            let old_committed = self.committed_slot(id);
            // A page the committed tree does not have (freed, or allocated since) has no
            // committed state to rebuild.
            let has_committed =
                old_committed != NO_SLOT && self.logs[block].units.iter().any(|u| u.page == id && u.at < committed_len);
            let mut committed_page = None;
            let mut committed_slot = old_committed;
            if has_committed {
                let (page, _) = self.read_page(id, old_committed, Some(committed_len))?;
                committed_slot = self.alloc_slot()?;
                self.write_slot(committed_slot, page.encode(page_bytes))?;
                committed_page = Some(page);
            }
            let current = self.table[id as usize];
            if current == NO_SLOT {
                // Freed, or reused for a page not written yet: its records are dead.
                new_committed.push((id, old_committed, committed_slot));
                continue;
            }
            let has_uncommitted = self.logs[block].units.iter().any(|u| u.page == id && u.at >= committed_len);
            if current == old_committed {
                if has_uncommitted {
                    let (page, _) = self.read_page(id, current, None)?;
                    if committed_page.as_ref() == Some(&page) {
                        self.table[id as usize] = committed_slot;
                    } else {
                        let slot = self.alloc_slot()?;
                        self.write_slot(slot, page.encode(page_bytes))?;
                        self.table[id as usize] = slot;
                    }
                } else {
                    self.table[id as usize] = committed_slot;
                }
            } else {
                let (page, applied) = self.read_page(id, current, None)?;
                if applied > 0 {
                    self.write_slot(current, page.encode(page_bytes))?;
                }
            }
            new_committed.push((id, old_committed, committed_slot));
        }
        let mut meta = self.committed.clone();
        for &(id, old, slot) in &new_committed {
            if old != slot {
                meta.table[id as usize] = slot;
            }
        }
        let generation = self.logs[block].generation + 1;
        if block < meta.logs.len() {
            meta.logs[block] = (generation, 0);
        }
        self.write_meta(&meta)?;
        self.committed = meta;
        for (id, old, new) in new_committed {
            if old != new && old != NO_SLOT && self.table[id as usize] != old {
                self.free_slot(old)?;
            }
        }
        if self.config.kind == EngineKind::Ipl {
            self.store.flash_log_discard(block as u32)?;
        }
        self.logs[block] = BlockLog { generation, used: 0, units: Vec::new() };
        Ok(())
    }

    pub(super) fn free_slot(&mut self, slot: u32) -> Result<(), KvError> {
        self.store.discard_image(slot)?;
        self.free_slots.push(slot);
        Ok(())
    }

    /// Takes a page out of the tree: out of the pool, its uncommitted image slot freed
    /// (the committed one is freed by the next commit), its id free for reuse.
    pub(super) fn free_page(&mut self, id: u32) -> Result<(), KvError> {
        if self.frames.contains(id) {
            self.frames.remove(id);
        }
        let slot = std::mem::replace(&mut self.table[id as usize], NO_SLOT);
        if slot != NO_SLOT && slot != self.committed_slot(id) {
            self.free_slot(slot)?;
        }
        self.free_pages.push(id);
        Ok(())
    }

    /// Replaces a resident page's entries without log records: the page is written whole
    /// at its next write-back (a merge's entries would not fit a log sector).
    pub(super) fn rewrite(&mut self, id: u32, node: Node) -> Result<(), KvError> {
        let lsn = self.next_lsn;
        self.next_lsn += 1;
        let frame = self.fetch(id)?;
        frame.page = Page::new(id, lsn, node);
        frame.dirty = true;
        frame.whole = true;
        frame.log.clear();
        Ok(())
    }

    pub(super) fn write_meta(&mut self, meta: &Meta) -> Result<(), KvError> {
        let seq = self.meta_seq + 1;
        let body = meta.encode();
        self.store.write_meta((seq % 2) as u32, seq, &body)?;
        self.meta_seq = seq;
        self.commits += 1;
        Ok(())
    }
}
