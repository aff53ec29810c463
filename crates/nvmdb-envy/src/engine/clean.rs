//! Placement of flushed pages and cleaning: victims, redistribution between
//! partitions, the copy-out and erase steps recovery can repeat, and wear levelling.

use nvmdb_device::Activity;

use super::{Envy, Plan, COST_WINDOW_PER_PARTITION, SPARE_POSITION};
use crate::config::CleaningPolicy;
use crate::error::EnvyError;
use crate::layout::{header, Entry, CLEAN_RECORD, PHASE_COPYING, PHASE_ERASING, PHASE_IDLE};
use crate::policy::{self, PartitionCost, Redistribution, Room};

impl Envy {
    fn partition_size(&self) -> u32 {
        self.config.cleaning.partition_segments(self.config.positions())
    }

    /// A position with a free page for a page whose home is `home`: its partition's
    /// active position, cleaning one of the partition's positions if that is full, and
    /// failing that the nearest partition that can take it.
    pub(super) fn target_position(&mut self, home: u32) -> Result<u32, EnvyError> {
        let partitions = self.actives.len();
        let k = self.partition_size();
        let own = match self.config.cleaning {
            CleaningPolicy::Greedy | CleaningPolicy::Fifo => 0,
            _ => (home / k) as usize,
        };
        // `make_room`'s first step, without the call: the active position has room.
        let active = self.actives[own];
        if self.free_pages(active) > 0 {
            return Ok(active);
        }
        if let Some(p) = self.make_room(own)? {
            return Ok(p);
        }
        for distance in 1..partitions {
            let sides = [own.checked_sub(distance), Some(own + distance).filter(|&q| q < partitions)];
            for q in sides.into_iter().flatten() {
                if let Some(p) = self.make_room(q)? {
                    return Ok(p);
                }
            }
        }
        Err(EnvyError::Full)
    }

    fn partition_range(&self, q: usize) -> std::ops::Range<usize> {
        let k = self.partition_size() as usize;
        q * k..((q + 1) * k).min(self.config.positions() as usize)
    }

    fn make_room(&mut self, q: usize) -> Result<Option<u32>, EnvyError> {
        let active = self.actives[q];
        if self.free_pages(active) > 0 {
            return Ok(Some(active));
        }
        let p = self.config.pages_per_segment;
        let live: Vec<u32> = self.segment_of.iter().map(|&s| self.live[s as usize]).collect();
        let victim = match self.config.cleaning {
            CleaningPolicy::Greedy => policy::greedy(&live, p),
            _ => {
                let range = self.partition_range(q);
                policy::fifo(&self.last_clean[range.clone()], &live[range.clone()], p).map(|i| i + range.start)
            }
        };
        let Some(victim) = victim else { return Ok(None) };
        let victim = victim as u32;
        let victim_live = live[victim as usize];
        self.doing(Activity::Clean, |e| e.clean_for_room(q, victim, victim_live)).map(Some)
    }

    /// [`Envy::make_room`]'s clean of position `victim` (holding `live` live pages) for
    /// partition `q`, with its redistribution and any wear-levelling clean; returns the
    /// position, which has room. Its device writes are reported as [`Activity::Clean`].
    fn clean_for_room(&mut self, q: usize, victim: u32, live: u32) -> Result<u32, EnvyError> {
        let plan = self.plan_redistribution(q, live);
        if plan.down.is_some() || plan.up.is_some() {
            self.count_redistribution(q, live, &plan);
        }
        self.clean(victim, plan.red, plan.down, plan.up)?;
        if let Some(source) = plan.down_source {
            self.pull(victim, source, plan.red.from_down, true)?;
        }
        if let Some(source) = plan.up {
            self.pull(victim, source, plan.red.from_up, false)?;
        }
        self.dev.set_u32(self.layout.actives + 4 * q as u64, victim)?;
        self.actives[q] = victim;
        self.maybe_wear_level()?;
        assert!(self.free_pages(victim) > 0, "a clean freed nothing");
        Ok(victim)
    }

    fn plan_redistribution(&self, q: usize, live: u32) -> Plan {
        if !self.config.redistributes() {
            return Plan::default();
        }
        let down = q.checked_sub(1).map(|d| self.actives[d]);
        let up = self.actives.get(q + 1).copied();
        // Cold pages come up from the lower partition's oldest position, hot pages down
        // from the upper partition's active one.
        let down_source = q.checked_sub(1).map(|d| {
            let range = self.partition_range(d);
            let oldest =
                (range.start..range.end).min_by_key(|&p| (self.last_clean[p], p)).expect("partitions are not empty");
            oldest as u32
        });
        let free = |p: Option<u32>| p.map_or(0, |p| self.free_pages(p));
        let live_of = |p: Option<u32>| p.map_or(0, |p| self.live[self.segment_of[p as usize] as usize]);
        let room =
            Room { free_down: free(down), free_up: free(up), live_down: live_of(down_source), live_up: live_of(up) };
        let red = policy::redistribute(
            &self.costs,
            q,
            live,
            self.config.pages_per_segment,
            self.config.redistribution_divisor,
            room,
        );
        Plan { red, down, up, down_source, room }
    }

    /// Counts what redistribution wanted to move (with unlimited room) and what the room
    /// let it move.
    fn count_redistribution(&mut self, q: usize, live: u32, plan: &Plan) {
        let unlimited = Room { free_down: u32::MAX, free_up: u32::MAX, ..plan.room };
        let wanted = policy::redistribute(
            &self.costs,
            q,
            live,
            self.config.pages_per_segment,
            self.config.redistribution_divisor,
            unlimited,
        );
        let sum = |r: Redistribution| u64::from(r.down + r.up + r.from_down + r.from_up);
        self.stats.redistribution_wanted_pages += sum(wanted);
        self.stats.redistributed_pages += sum(plan.red);
    }

    /// Moves `n` live pages of `from` (its oldest, or its newest) to the tail of `to`.
    /// Each move is a program and one page-table write, so a cut leaves at most a dead
    /// copy.
    fn pull(&mut self, to: u32, from: u32, n: u32, oldest: bool) -> Result<(), EnvyError> {
        let segment = self.segment_of[from as usize];
        let base = u64::from(segment) * self.pages_per_segment();
        let programmed = base..base + u64::from(self.write_pointer(segment));
        let live = |&ppn: &u64| self.owner[ppn as usize] != 0 || self.flash_shadow[ppn as usize] != 0;
        // Only the `n` pages that move are looked for.
        let pages: Vec<u64> = if oldest {
            programmed.filter(live).take(n as usize).collect()
        } else {
            programmed.rev().filter(live).take(n as usize).collect()
        };
        self.relocate_run(&pages, self.segment_of[to as usize])
    }

    /// Cleans a position: its live pages go (in page order) to the next spare of the ring
    /// (the one erased longest ago), except the oldest `red.up` to the `up` position and
    /// the newest `red.down` to `down`; the spare takes the position over and the old
    /// segment is erased and takes the spare's place in the ring.
    fn clean(
        &mut self,
        position: u32,
        red: Redistribution,
        down: Option<u32>,
        up: Option<u32>,
    ) -> Result<(), EnvyError> {
        let victim = self.segment_of[position as usize];
        let dest = self.spares[self.spare_next as usize];
        assert_eq!(self.write_pointer(dest), 0, "spare segment {dest} is not erased");
        let bank = self.dev.flash().geometry().plane_of_block(u64::from(dest));
        let spare_wait_ns = self.dev.flash().plane_busy_until_ns(bank).saturating_sub(self.issue_ns());
        if spare_wait_ns > 0 {
            self.stats.cleans_waiting_for_spare += 1;
            self.stats.spare_wait_ns += spare_wait_ns;
        }
        let record: Vec<u8> = [PHASE_COPYING, position, victim, dest].iter().flat_map(|v| v.to_le_bytes()).collect();
        self.dev.sram_write(CLEAN_RECORD, &record)?;
        let programmed = self.write_pointer(victim);
        let live = self.live[victim as usize];
        let moved = self.copy_out(victim, dest, red, down, up)?;
        if programmed > 0 {
            self.stats.cleans += 1;
            self.stats.cleaned_segment_pages += u64::from(self.config.pages_per_segment);
            self.stats.cleaned_live_pages += u64::from(live);
            let q = position as usize / self.partition_size() as usize;
            let cost = &mut self.costs[q];
            cost.cleans += 1;
            cost.copied_pages += u64::from(live);
            cost.freed_pages += u64::from(self.config.pages_per_segment - (live - moved));
            let total: u64 = self.costs.iter().map(|c| c.cleans).sum();
            if total >= COST_WINDOW_PER_PARTITION * self.costs.len() as u64 {
                for c in &mut self.costs {
                    *c = PartitionCost {
                        cleans: c.cleans / 2,
                        copied_pages: c.copied_pages / 2,
                        freed_pages: c.freed_pages / 2,
                    };
                }
            }
        }
        self.finish_clean(position, victim, dest)
    }

    /// Copies the victim's live and shadow pages out; returns how many went to neighbours.
    pub(super) fn copy_out(
        &mut self,
        victim: u32,
        dest: u32,
        red: Redistribution,
        down: Option<u32>,
        up: Option<u32>,
    ) -> Result<u32, EnvyError> {
        let base = u64::from(victim) * self.pages_per_segment();
        let programmed = base as usize..(base + u64::from(self.write_pointer(victim))) as usize;
        let mut pages = std::mem::take(&mut self.live_scratch);
        let n = live_pages(&self.owner[programmed.clone()], &self.flash_shadow[programmed], base, &mut pages);
        let moved = self.copy_runs(&pages[..n], dest, red, down, up);
        self.live_scratch = pages;
        moved
    }

    /// [`Envy::copy_out`]'s copies of the victim's live `pages` (in page order).
    fn copy_runs(
        &mut self,
        pages: &[u64],
        dest: u32,
        red: Redistribution,
        down: Option<u32>,
        up: Option<u32>,
    ) -> Result<u32, EnvyError> {
        let n = pages.len() as u32;
        let (up, down) = (up.map(|u| self.segment_of[u as usize]), down.map(|d| self.segment_of[d as usize]));
        let target = |i: u32| match (up, down) {
            (Some(u), _) if i < red.up => u,
            (_, Some(d)) if i >= n - red.down => d,
            _ => dest,
        };
        // Each run of pages bound for one segment goes in one call.
        let mut moved = 0;
        let mut start = 0;
        while start < n {
            let to = target(start);
            let end = (start + 1..n).find(|&i| target(i) != to).unwrap_or(n);
            moved += if to == dest { 0 } else { end - start };
            self.relocate_run(&pages[start as usize..end as usize], to)?;
            start = end;
        }
        Ok(moved)
    }

    /// [`Envy::relocate`] of each of `pages` (in order, all of one segment) to `to_segment`:
    /// when the devices take the run in one call ([`crate::devices::Devices::copy_pages`]: no power cut
    /// within its device writes, and room in the segment), the copies go in that call, each
    /// issued as [`Envy::relocate`] issues it, and the page-table writes follow; the same
    /// device operations, times and counts. Otherwise page by page.
    fn relocate_run(&mut self, pages: &[u64], to_segment: u32) -> Result<(), EnvyError> {
        let next = self.write_pointer(to_segment);
        let new = u64::from(to_segment) * self.pages_per_segment() + u64::from(next);
        let (parallel, now, read_ns) = (self.config.parallel_banks, self.now_ns, self.config.flash.read_ns);
        let mut free_ns = self.controller_free_ns;
        // Each copy is issued when the previous one's program is done (serial banks), as
        // `issue_ns` after `long_op_done`.
        let schedule = |previous_end: Option<u64>| {
            let issue = if parallel {
                now
            } else {
                free_ns = free_ns.max(previous_end.unwrap_or(0));
                now.max(free_ns)
            };
            (issue, issue + read_ns)
        };
        match self.dev.copy_pages(pages, new, schedule) {
            Some(end_ns) => {
                if !parallel {
                    self.controller_free_ns = free_ns;
                }
                self.long_op_done(end_ns);
                self.stats.clean_programs += pages.len() as u64;
                self.repoint_run(pages, new);
            }
            None => {
                for &ppn in pages {
                    self.relocate(ppn, to_segment)?;
                }
            }
        }
        Ok(())
    }

    fn relocate(&mut self, ppn: u64, to_segment: u32) -> Result<(), EnvyError> {
        let issue = self.issue_ns();
        let next = self.write_pointer(to_segment);
        assert!(next < self.config.pages_per_segment, "relocation into full segment {to_segment}");
        let new = u64::from(to_segment) * self.pages_per_segment() + u64::from(next);
        let end_ns = self.dev.copy_page(ppn, new, issue, issue + self.config.flash.read_ns)?;
        self.long_op_done(end_ns);
        self.stats.clean_programs += 1;
        self.repoint(ppn, new)
    }

    /// Points whatever names flash page `ppn` (the page table or a shadow entry) at `new`,
    /// which holds the same bytes.
    fn repoint(&mut self, ppn: u64, new: u64) -> Result<(), EnvyError> {
        let owner = self.owner[ppn as usize];
        if owner != 0 {
            self.set_entry(owner - 1, Entry::Flash(new))?;
            self.disown(ppn);
            self.own(new, owner - 1);
        } else {
            let k = self.flash_shadow[ppn as usize] - 1;
            self.set_shadow_old(k, Entry::Flash(new))?;
            self.unmark_flash_shadow(ppn);
            self.mark_flash_shadow(new, k);
        }
        Ok(())
    }

    /// [`Envy::repoint`] of each of `pages` (all of one segment) to the pages from `new`
    /// on (all of one segment): the same SRAM writes in the same order, and each segment's
    /// live count moved once for the run. For a run whose writes no power cut can refuse
    /// ([`crate::devices::Devices::copy_pages`] checked), so the switch and the SRAM count
    /// them once ([`crate::devices::Devices::set_u32_run`]).
    fn repoint_run(&mut self, pages: &[u64], new: u64) {
        let (Some(&first), Some(&last)) = (pages.first(), pages.last()) else { return };
        let from_segment = self.segment_of_ppn(first) as usize;
        debug_assert_eq!(self.segment_of_ppn(last) as usize, from_segment, "a run of one segment");
        // One SRAM write per page, the page table's or the shadow entry's (as
        // `set_entry` and `set_shadow_old`), counted once for the run.
        let (page_table, shadows) = (self.layout.page_table, self.layout.shadows);
        let (owners, flash_shadow) = (&mut self.owner, &mut self.flash_shadow);
        let writes = pages.iter().zip(new..).map(|(&ppn, new)| {
            let owner = owners[ppn as usize];
            let value = Entry::Flash(new).encode();
            if owner != 0 {
                owners[ppn as usize] = 0;
                assert_eq!(owners[new as usize], 0, "flash page {new} mapped twice");
                owners[new as usize] = owner;
                (page_table + 4 * u64::from(owner - 1), value)
            } else {
                let k = flash_shadow[ppn as usize] - 1;
                flash_shadow[ppn as usize] = 0;
                flash_shadow[new as usize] = k + 1;
                (shadows + 8 * u64::from(k) + 4, value)
            }
        });
        self.dev.set_u32_run(pages.len(), writes);
        let (n, to_segment) = (pages.len() as u32, self.segment_of_ppn(new) as usize);
        self.live[from_segment] -= n;
        self.live[to_segment] += n;
    }

    /// Recovery of a clean cut between a copy's program and its page-table write: the
    /// destination's last page is then dead and holds the victim's next live page, which
    /// is pointed at it instead of copied again, so repeated cuts cannot fill the
    /// destination with dead copies.
    pub(super) fn adopt_interrupted_copy(&mut self, victim: u32, dest: u32) -> Result<(), EnvyError> {
        let written = self.write_pointer(dest);
        if written == 0 {
            return Ok(());
        }
        let last = u64::from(dest) * self.pages_per_segment() + u64::from(written - 1);
        if self.owner[last as usize] != 0 || self.flash_shadow[last as usize] != 0 {
            return Ok(());
        }
        let base = u64::from(victim) * self.pages_per_segment();
        let next = (base..base + u64::from(self.write_pointer(victim)))
            .find(|&ppn| self.owner[ppn as usize] != 0 || self.flash_shadow[ppn as usize] != 0);
        if let Some(ppn) = next {
            if !self.config.keep_page_bytes {
                return Err(EnvyError::NoPageBytes("recovering a clean cut after a copy's program"));
            }
            let now = self.now_ns;
            if self.dev.flash_read(ppn, now) == self.dev.flash_read(last, now) {
                self.repoint(ppn, last)?;
            }
        }
        Ok(())
    }

    /// The steps after copying, each idempotent so recovery can repeat them: repoint the
    /// position, mark the erase phase, put the victim in the destination's place in the
    /// spare ring, erase it, record the clean's sequence number, then advance the ring's
    /// index and go idle in one 8-byte write.
    pub(super) fn finish_clean(&mut self, position: u32, victim: u32, dest: u32) -> Result<(), EnvyError> {
        assert_eq!(self.live[victim as usize], 0, "segment {victim} is being erased with live pages");
        let pos_addr = self.layout.positions + 16 * u64::from(position);
        self.dev.set_u32(pos_addr, dest)?;
        self.segment_of[position as usize] = dest;
        self.position_of[dest as usize] = position;
        self.position_of[victim as usize] = SPARE_POSITION;
        self.dev.set_u32(CLEAN_RECORD, PHASE_ERASING)?;
        let next = self.spare_next;
        self.dev.set_u32(self.layout.spares + 4 * u64::from(next), victim)?;
        self.spares[next as usize] = victim;
        if self.write_pointer(victim) > 0 {
            if self.erase_checks {
                self.assert_nothing_names(victim);
            }
            let end_ns = self.dev.erase(u64::from(victim), self.issue_ns())?;
            self.long_op_done(end_ns);
            self.stats.erases += 1;
        }
        self.clean_seq += 1;
        self.dev.set_u64(pos_addr + 8, self.clean_seq)?;
        self.last_clean[position as usize] = self.clean_seq;
        let advanced = (next + 1) % self.config.spare_segments;
        // Little-endian: the index at `SPARE_NEXT`, then the phase at `CLEAN_RECORD`.
        self.dev.set_u64(header::SPARE_NEXT, u64::from(advanced) | u64::from(PHASE_IDLE) << 32)?;
        self.spare_next = advanced;
        Ok(())
    }

    /// The erase check ([`Envy::set_erase_checks`]): no page-table entry and no shadow
    /// entry of an open transaction names a programmed page of `segment`.
    fn assert_nothing_names(&mut self, segment: u32) {
        let base = u64::from(segment) * self.pages_per_segment();
        let pages = base..base + u64::from(self.write_pointer(segment));
        for lpn in 0..self.config.logical_pages as u32 {
            if let Entry::Flash(ppn) = self.entry(lpn) {
                assert!(!pages.contains(&ppn), "segment {segment} is erased while page {lpn} maps to its page {ppn}");
            }
        }
        if self.txn_pages.is_some() {
            for k in 0..self.txn_count {
                if let (lpn, Entry::Flash(ppn)) = self.shadow_entry(k) {
                    assert!(
                        !pages.contains(&ppn),
                        "segment {segment} is erased while the pre-image of page {lpn} is its page {ppn}"
                    );
                }
            }
        }
    }

    /// Wear levelling: cleans the position on the least-erased segment when the spread
    /// of erase counts passes the threshold, so its cold data moves to the (worn) next
    /// spare and the young segment joins the spare ring.
    fn maybe_wear_level(&mut self) -> Result<(), EnvyError> {
        let Some(threshold) = self.config.wear_threshold_erases else { return Ok(()) };
        let flash = self.dev.flash();
        let erases: Vec<u64> = self.segment_of.iter().map(|&s| flash.erase_count(u64::from(s))).collect();
        let spare_erases = flash.erase_count(u64::from(self.spares[self.spare_next as usize]));
        if let Some(position) = policy::wear_level(&erases, spare_erases, threshold) {
            self.stats.wear_level_cleans += 1;
            self.clean(position as u32, Redistribution::default(), None, None)?;
        }
        Ok(())
    }
}

/// The flash pages from `base` on whose `owner` or `flash_shadow` entry is set (a victim's
/// live pages, in page order): how many, and they are the first that many of `out`
/// (grown to the scan's length if shorter, never shrunk, so it is sized once). Every
/// page is stored and the count moves only past a live one, so the scan has no branch
/// per page.
fn live_pages(owner: &[u32], flash_shadow: &[u32], base: u64, out: &mut Vec<u64>) -> usize {
    if out.len() < owner.len() {
        out.resize(owner.len(), 0);
    }
    let mut n = 0;
    for ((&o, &s), ppn) in owner.iter().zip(flash_shadow).zip(base..) {
        out[n] = ppn;
        n += usize::from(o | s != 0);
    }
    n
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    /// The scan `live_pages` replaced: a filter over the programmed pages.
    fn live_pages_filtered(owner: &[u32], flash_shadow: &[u32], base: u64) -> Vec<u64> {
        (base..base + owner.len() as u64)
            .filter(|&ppn| owner[(ppn - base) as usize] != 0 || flash_shadow[(ppn - base) as usize] != 0)
            .collect()
    }

    #[test]
    fn the_scan_without_a_branch_keeps_what_the_filter_keeps() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(21);
        // Left longer than some scans by earlier ones.
        let mut out = vec![7; 3];
        let mut kept = 0;
        for _ in 0..2_000 {
            // Segments of 0-300 programmed pages, from all dead to all live.
            let len = rng.gen_range(0..300);
            let live = rng.gen_range(0.0..=1.0);
            let entry = |rng: &mut rand_xoshiro::Xoshiro256PlusPlus| {
                if rng.gen_bool(live) {
                    rng.gen_range(1..u32::MAX)
                } else {
                    0
                }
            };
            let owner: Vec<u32> = (0..len).map(|_| entry(&mut rng)).collect();
            let shadow: Vec<u32> = (0..len).map(|_| if rng.gen_bool(0.1) { entry(&mut rng) } else { 0 }).collect();
            let base = rng.gen_range(0..1 << 20);
            let n = super::live_pages(&owner, &shadow, base, &mut out);
            assert_eq!(out[..n], live_pages_filtered(&owner, &shadow, base));
            kept += n;
        }
        assert!(kept > 100_000, "{kept} live pages kept");
    }
}
