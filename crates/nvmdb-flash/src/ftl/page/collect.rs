//! The page-mapped FTL's garbage collection and static wear levelling: victim choice,
//! evacuation of a victim's live pages inside its plane, and the erase.

use nvmdb_device::flash::SPARE_STORED_BYTES;

use super::{BlockState, PageFtl, TRIM_BIT, UNMAPPED};
use crate::config::{GcPolicy, WearLeveling};
use crate::gc::{self, Candidate};
use crate::layer::{with_activity, FlashError};
use crate::wear_level;

impl PageFtl {
    /// Runs garbage collection on `plane` until it has `gc_free_blocks` free blocks.
    #[inline(always)]
    pub(super) fn collect(&mut self, plane: usize, now_ns: u64) -> Result<(), FlashError> {
        if self.planes[plane].free.len() < self.gc_free_blocks {
            with_activity(self, nvmdb_device::Activity::Gc, |ftl| ftl.collect_garbage(plane, now_ns))?;
        }
        Ok(())
    }

    /// [`PageFtl::collect`] once the plane is short of free blocks.
    pub(super) fn collect_garbage(&mut self, plane: usize, now_ns: u64) -> Result<(), FlashError> {
        let mut fruitless = 0;
        while self.planes[plane].free.len() < self.gc_free_blocks {
            let victim = match self.gc_policy {
                GcPolicy::Greedy => self.greedy_victim(plane)?,
                policy => self.scanned_victim(policy, plane, now_ns, &mut fruitless)?,
            };
            self.evacuate(victim, now_ns)?;
        }
        Ok(())
    }

    /// The greedy victim of `plane`, from the closed blocks filed by valid count: the
    /// block [`gc::greedy`] chooses among the plane's closed blocks (a test compares the
    /// two). It holds garbage, so collecting it frees a page or more.
    #[inline]
    pub(super) fn greedy_victim(&self, plane: usize) -> Result<u32, FlashError> {
        let blocks = &self.blocks;
        match self.by_valid.greedy(plane, |b| blocks[b as usize].closed_seq) {
            Some((block, valid)) if valid != self.geometry.pages_per_block => Ok(block),
            // No closed block holds garbage: collecting would only copy.
            _ => Err(FlashError::Full(format!("plane {plane}: every block is full of live data"))),
        }
    }

    /// The victim `policy` chooses among the closed blocks of `plane`, found by a pass
    /// over them; `fruitless` counts the full victims chosen so far by this collection.
    pub(super) fn scanned_victim(
        &mut self,
        policy: GcPolicy,
        plane: usize,
        now_ns: u64,
        fruitless: &mut usize,
    ) -> Result<u32, FlashError> {
        // No closed block holds garbage: collecting would only copy.
        if !self.gather_candidates(plane) {
            return Err(FlashError::Full(format!("plane {plane}: every block is full of live data")));
        }
        let victim = gc::choose(policy, &self.candidates, now_ns)
            .ok_or_else(|| FlashError::Full(format!("plane {plane}: no block to collect")))?;
        // A full victim frees nothing; give up once every closed block was tried.
        if self.blocks[victim as usize].valid_pages == self.geometry.pages_per_block {
            *fruitless += 1;
            if *fruitless > self.candidates.len() {
                return Err(FlashError::Full(format!("plane {plane}: every block is full of live data")));
            }
        }
        Ok(victim)
    }

    /// Fills `candidates` with the closed blocks of `plane`; whether one holds garbage.
    pub(super) fn gather_candidates(&mut self, plane: usize) -> bool {
        self.candidates.clear();
        let ppb = self.geometry.pages_per_block;
        let mut garbage = false;
        for block in (plane..self.blocks.len()).step_by(self.planes.len()) {
            let meta = self.blocks[block];
            if meta.state == BlockState::Closed {
                garbage |= meta.valid_pages != ppb;
                self.candidates.push(Candidate {
                    block: block as u32,
                    valid_pages: meta.valid_pages,
                    pages_per_block: ppb,
                    closed_seq: meta.closed_seq,
                    last_write_ns: meta.last_write_ns,
                });
            }
        }
        garbage
    }

    /// Copies the live pages of `victim`, a closed block, elsewhere in its plane and
    /// erases it.
    pub(super) fn evacuate(&mut self, victim: u32, now_ns: u64) -> Result<(), FlashError> {
        let plane = self.plane_of(victim);
        let meta = &mut self.blocks[victim as usize];
        assert_eq!(meta.state, BlockState::Closed, "a GC victim is a closed block");
        meta.state = BlockState::Collecting;
        self.by_valid.unfile(victim, plane, meta.valid_pages);
        let result = self.move_out(victim, now_ns);
        let meta = &mut self.blocks[victim as usize];
        if result.is_err() && meta.state == BlockState::Collecting {
            meta.state = BlockState::Closed;
            self.by_valid.file(victim, plane, meta.valid_pages);
        }
        result
    }

    /// [`PageFtl::evacuate`]'s copies and erase, the victim marked as being collected.
    pub(super) fn move_out(&mut self, victim: u32, now_ns: u64) -> Result<(), FlashError> {
        let plane = self.plane_of(victim);
        let ppb = u64::from(self.geometry.pages_per_block);
        let first = u64::from(victim) * ppb;
        // Without partial programming no page has a sector mask: every copy is whole.
        let whole_pages = !self.geometry.partial_programming;
        let mut copies = 0;
        for old in first..first + ppb {
            if self.p2l[old as usize] == UNMAPPED {
                continue;
            }
            // The copy keeps the page's spare bytes (logical page, write sequence number).
            let mask = if whole_pages { None } else { self.flash.sector_mask(old) };
            let new = match mask {
                Some(mask) => {
                    let (data, read) = self.flash.read_page(old, now_ns)?;
                    let stored = self.flash.spare(old).expect("an FTL page has its out-of-band record");
                    let mut spare_bytes = [0u8; SPARE_STORED_BYTES];
                    spare_bytes[..stored.len()].copy_from_slice(stored);
                    let spare = &spare_bytes[..stored.len()];
                    self.program_partial_copy(plane, old, spare, &data, mask, read.end_ns)?.0
                }
                None => {
                    let read = self.flash.read_page_timing(old, now_ns)?;
                    self.program_copy(plane, old, read.end_ns)?
                }
            };
            copies += 1;
            self.move_page(old as u32, new)?;
            self.stats.gc_page_copies += 1;
        }
        assert_eq!(self.blocks[victim as usize].valid_pages, 0, "an evacuated block holds no live page");
        self.admit()?;
        let erase = self.flash.erase_block(u64::from(victim), now_ns)?;
        // Each copy is a read (`read_ns` from its start, suspended or not) and a program.
        let timing = self.flash.timing();
        let gc_ns = copies * (timing.read_ns + timing.program_ns);
        self.stats.gc_time_ns += gc_ns + (erase.end_ns - erase.start_ns);
        self.release(victim);
        if self.wear_leveling == WearLeveling::Static {
            self.level_statically(plane, now_ns)?;
        }
        Ok(())
    }

    /// Static wear levelling after an erase: empties the coldest block if it lags.
    pub(super) fn level_statically(&mut self, plane: usize, now_ns: u64) -> Result<(), FlashError> {
        let planes = self.planes.len();
        let mut closed = Vec::new();
        let mut max_erases = 0;
        for block in (plane..self.blocks.len()).step_by(planes) {
            let erases = self.flash.erase_count(block as u64);
            max_erases = max_erases.max(erases);
            if self.blocks[block].state == BlockState::Closed {
                closed.push((block as u32, erases));
            }
        }
        if let Some(cold) = wear_level::static_victim(&closed, max_erases, self.static_wl_threshold) {
            // Its erase count rises by one, so the spread shrinks and this terminates.
            self.wear_leveling = WearLeveling::Dynamic;
            let result = self.evacuate(cold, now_ns);
            self.wear_leveling = WearLeveling::Static;
            result?;
        }
        Ok(())
    }

    /// Points every owner of `old` at `new` (GC copy).
    #[inline(always)]
    pub(super) fn move_page(&mut self, old: u32, new: u32) -> Result<(), FlashError> {
        let owner = std::mem::replace(&mut self.p2l[old as usize], UNMAPPED);
        self.p2l[new as usize] = owner;
        self.count_valid(self.block_of(u64::from(old)), false);
        if owner & TRIM_BIT != 0 {
            self.trims.insert(owner & !TRIM_BIT, new);
            return Ok(());
        }
        self.l2p[owner as usize] = new;
        if let Some(dedup) = &mut self.dedup {
            self.refs[new as usize] = std::mem::take(&mut self.refs[old as usize]);
            if let Some(others) = self.extra_owners.remove(&old) {
                for &lpn in &others {
                    self.l2p[lpn as usize] = new;
                }
                self.extra_owners.insert(new, others);
            }
            let pcm_ns = dedup.relocate(&mut self.power, old, new)?;
            self.stats.gc_time_ns += pcm_ns;
        }
        Ok(())
    }
}
