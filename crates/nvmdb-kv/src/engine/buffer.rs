//! The buffer pool's traffic: fetching pages (image plus log records), writing them back
//! copy-on-write into image slots, and allocating slots and page ids.

use nvmdb_device::flash::SECTOR_BYTES;
use nvmdb_device::Activity;

use super::layout::{BlockLog, Unit, NO_SLOT, SECTOR_HEADER_BYTES, UNIT_HEADER_BYTES};
use super::Engine;
use crate::config::EngineKind;
use crate::page::{Page, Record};
use crate::pool::Frame;
use crate::KvError;

impl Engine {
    /// Makes room for one more frame.
    pub(super) fn make_room(&mut self) -> Result<(), KvError> {
        while self.frames.len() as u64 >= self.config.buffer_pages() {
            let victim = self.frames.oldest().expect("a full pool has frames");
            self.doing(Activity::Flush, |e| e.write_back(victim))?;
            self.frames.remove(victim);
        }
        Ok(())
    }

    pub(super) fn install(&mut self, page: Page, dirty: bool) -> Result<(), KvError> {
        self.make_room()?;
        self.frames.insert(page, dirty);
        Ok(())
    }

    /// Brings a page into the pool (reading its image and applying its logged records).
    pub(super) fn fetch(&mut self, id: u32) -> Result<&mut Frame, KvError> {
        if self.frames.contains(id) {
            return Ok(self.frames.touch(id));
        }
        let (page, _) = self.read_page(id, self.table[id as usize], None)?;
        self.install(page, false)?;
        Ok(self.frames.get_mut(id))
    }

    /// A page as its image in `slot` and the records of its block's log (those in units
    /// before `upto` when given) make it.
    pub(super) fn read_page(&mut self, id: u32, slot: u32, upto: Option<u32>) -> Result<(Page, usize), KvError> {
        if slot == NO_SLOT {
            return Err(KvError::Corrupt(format!("page {id} has no image")));
        }
        let image = self
            .store
            .read_image(slot)?
            .ok_or_else(|| KvError::Corrupt(format!("page {id}: image slot {slot} is empty")))?;
        let mut page =
            Page::decode(image).ok_or_else(|| KvError::Corrupt(format!("page {id}: image does not decode")))?;
        if page.id != id {
            return Err(KvError::Corrupt(format!("page {id}: slot {slot} holds page {}", page.id)));
        }
        let mut applied = 0;
        if self.config.kind.logs() {
            let block = self.block_of(id);
            let units: Vec<Unit> = self.logs[block]
                .units
                .iter()
                .filter(|u| u.page == id && upto.is_none_or(|limit| u.at < limit))
                .copied()
                .collect();
            for unit in units {
                for record in self.read_unit(block as u32, &unit)? {
                    if record.page == id && record.lsn > page.lsn {
                        page.apply(record.lsn, &record.change);
                        applied += 1;
                    }
                }
            }
        }
        Ok((page, applied))
    }

    pub(super) fn read_unit(&mut self, block: u32, unit: &Unit) -> Result<Vec<Record>, KvError> {
        let body = match self.config.kind {
            EngineKind::IplP => {
                self.store.pcm_log_read(block, u64::from(unit.at) + UNIT_HEADER_BYTES as u64, unit.len as usize)?
            }
            _ => {
                let spp = self.store.layout.sectors_per_log_page;
                let (bytes, _) = self.store.flash_log_read(block, unit.at / spp)?.ok_or_else(|| {
                    KvError::Corrupt(format!("block {block}: log page of sector {} is gone", unit.at))
                })?;
                let at = ((unit.at % spp) * SECTOR_BYTES) as usize + SECTOR_HEADER_BYTES;
                bytes[at..at + unit.len as usize].to_vec()
            }
        };
        Record::decode_all(&body)
    }

    /// Writes a frame's changes to the devices (its records, or its image) and marks it clean.
    pub(super) fn write_back(&mut self, id: u32) -> Result<(), KvError> {
        let frame = self.frames.get(id);
        if !frame.dirty {
            return Ok(());
        }
        if self.config.kind.logs() && self.table[id as usize] != NO_SLOT && !frame.whole {
            self.flush_log(id)?;
        } else {
            let image = frame.page.encode(self.config.page_bytes as usize);
            self.write_image(id, image)?;
        }
        let frame = self.frames.get_mut(id);
        frame.dirty = false;
        frame.whole = false;
        frame.log.clear();
        Ok(())
    }

    /// Writes a page image: into the page's uncommitted slot when it has one, otherwise
    /// into a free slot (the committed image is never overwritten).
    pub(super) fn write_image(&mut self, id: u32, image: Vec<u8>) -> Result<(), KvError> {
        let current = self.table[id as usize];
        let slot = if current != NO_SLOT && current != self.committed_slot(id) { current } else { self.alloc_slot()? };
        self.write_slot(slot, image)?;
        self.table[id as usize] = slot;
        Ok(())
    }

    pub(super) fn write_slot(&mut self, slot: u32, image: Vec<u8>) -> Result<(), KvError> {
        self.store.write_image(slot, image)
    }

    pub(super) fn committed_slot(&self, id: u32) -> u32 {
        self.committed.table.get(id as usize).copied().unwrap_or(NO_SLOT)
    }

    pub(super) fn alloc_slot(&mut self) -> Result<u32, KvError> {
        self.free_slots.pop().ok_or_else(|| KvError::Full("no free page image slot".into()))
    }

    pub(super) fn alloc_page(&mut self) -> Result<u32, KvError> {
        if let Some(id) = self.free_pages.pop() {
            return Ok(id);
        }
        if self.next_page >= self.config.capacity_pages {
            return Err(KvError::Full(format!("the tree needs more than {} pages", self.config.capacity_pages)));
        }
        let id = self.next_page;
        self.next_page += 1;
        self.table.push(NO_SLOT);
        let blocks = self.blocks_used(self.next_page);
        while self.logs.len() < blocks {
            self.logs.push(BlockLog::default());
        }
        Ok(id)
    }
}
