//! A CPU time model beside the memory-only time of [`CachedMemory`](crate::CachedMemory).
//!
//! The memory-only time (`estimated_cycles`) adds every probed level's hit latency,
//! T_l per fetch and every wait behind write-backs, one access after another. This
//! model keeps that column untouched and adds a second one, `cpu.cycles`, that also
//! counts:
//!
//! - **Instructions.** Every load or store is one instruction; algorithms declare the
//!   other instructions they execute with [`Memory::compute`](crate::Memory::compute)
//!   (an estimate per step, documented where they count it). The core retires one
//!   instruction per cycle when it is not waiting for memory.
//! - **A DTLB** of 64 entries (Table 5), fully associative and LRU over 4 KB pages; a
//!   miss costs a page walk of `page_walk_cycles`.
//! - **Overlap of independent misses.** Between
//!   [`Memory::begin_independent`](crate::Memory::begin_independent) and
//!   [`Memory::end_independent`](crate::Memory::end_independent) an algorithm declares
//!   accesses whose addresses do not depend on each other's values (a node's keys in a
//!   scan, the entries a shift moves): they issue one per instruction and complete in
//!   the background, at most `mshrs` line fetches at a time, and the group ends when
//!   the last completes. Outside a group every access waits for its own data (a pointer
//!   chase, a binary-search probe), so code that declares nothing is timed serially.
//! - **The hit latency of the level that hits only**: a miss pays the latencies of the
//!   levels it probed, a hit at level i pays level i's.
//! - **Reads before queued writes.** A fetch waits for the write its rank is performing
//!   (writes are not pre-empted), not for the rank's whole backlog; writes otherwise keep
//!   the memory-only model's schedule (a FIFO per rank from the time they are queued,
//!   the CPU stalling when the write queue is full). Reads do not delay that schedule,
//!   and two fetches on one rank are served one after the other.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::divisor::Divisor;

/// Parameters of the CPU time model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuConfig {
    /// DTLB entries (Table 5: 64).
    pub dtlb_entries: u32,
    /// Page size, bytes (4 KB, x86-64's base page).
    pub page_bytes: u64,
    /// Cycles of a page walk on a DTLB miss: an estimate for a walk whose page-table
    /// entries hit in L1 and L2 (not stated by the paper).
    pub page_walk_cycles: u64,
    /// Line fetches in flight at once: the 10 line-fill buffers of the Nehalem L1D the
    /// paper's hierarchy is modelled after.
    pub mshrs: u32,
}

impl CpuConfig {
    /// The CIDR 2011 core: 64-entry DTLB, 4 KB pages, 30-cycle page walks, 10 MSHRs.
    pub const CIDR2011: CpuConfig = CpuConfig { dtlb_entries: 64, page_bytes: 4096, page_walk_cycles: 30, mshrs: 10 };
}

/// Counters of the CPU time model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimeStats {
    /// Cycles with instructions, DTLB misses and overlapped misses.
    pub cycles: u64,
    /// Instructions: loads and stores plus those the algorithms declared.
    pub instructions: u64,
    /// DTLB misses.
    pub dtlb_misses: u64,
}

/// No entry.
const NONE: u32 = u32::MAX;

/// A fully associative LRU DTLB: its entries in a circular recency list (most recently
/// used at the head, least recently used just before it), found through a small
/// open-addressed table from page to entry, so that a lookup and an eviction take a few
/// steps instead of a scan of every entry.
///
/// The list is a ring of all `entries` from the start; the entries not yet filled are
/// its least recent end (no lookup finds them, so no hit moves them). A miss therefore
/// takes the least recently used entry, filled or not, by moving the head one step back
/// round the ring: no link changes.
///
/// Which accesses miss depends on the pages accessed alone, not on time, so
/// [`CachedMemory`](crate::CachedMemory) keeps one DTLB and hands each access's answer to
/// the time model of every T_w it times ([`CpuTiming::access`]).
#[derive(Debug, Clone)]
pub(crate) struct Dtlb {
    /// The page size, bytes, as a divisor.
    page_bytes: Divisor,
    /// The page of each entry (meaningless until the entry is filled).
    pages: Vec<u64>,
    /// The ring: each entry's next more and next less recently used entry. The head's
    /// `newer` is the least recently used entry, whose `older` is the head.
    newer: Vec<u32>,
    older: Vec<u32>,
    /// The most recently used entry.
    head: u32,
    /// Entries filled so far (at most `pages.len()`).
    filled: usize,
    /// Linear probing over `2^table_bits` slots (at least four times the entries, so
    /// that probe runs stay short), each a filled entry or [`NONE`]. (Slots holding the
    /// page beside the entry save a load per probe, but the table grows from 1 to 4 KiB
    /// and leaves the host's L1 between accesses: more misses, and no fewer
    /// instructions.)
    table: Vec<u32>,
    table_bits: u32,
}

impl Dtlb {
    /// The DTLB of `config`, empty.
    pub(crate) fn of(config: &CpuConfig) -> Dtlb {
        assert!(config.dtlb_entries > 0 && config.page_bytes > 0, "invalid CPU config");
        Dtlb::new(config.dtlb_entries as usize, config.page_bytes)
    }

    fn new(entries: usize, page_bytes: u64) -> Dtlb {
        let table_bits = (4 * entries).next_power_of_two().trailing_zeros();
        let last = u32::try_from(entries - 1).expect("DTLB entries fit u32");
        // Entry i's next less recent is i + 1, round the ring; entry `last` is the least
        // recent, and fills first.
        Dtlb {
            page_bytes: Divisor::new(page_bytes),
            pages: vec![0; entries],
            newer: (0..=last).map(|e| if e == 0 { last } else { e - 1 }).collect(),
            older: (0..=last).map(|e| if e == last { 0 } else { e + 1 }).collect(),
            head: 0,
            filled: 0,
            table: vec![NONE; 1 << table_bits],
            table_bits,
        }
    }

    /// Looks up the page of a byte in `line` (64-byte lines) as [`Dtlb::miss`] does.
    #[inline]
    pub(crate) fn miss_on_line(&mut self, line: u64) -> bool {
        let page = self.page_bytes.div(line * 64);
        self.miss(page)
    }

    /// Looks `page` up and makes it the most recently used, installing it in place of the
    /// least recently used entry when absent; returns whether it missed.
    #[inline]
    fn miss(&mut self, page: u64) -> bool {
        // Most accesses touch the page of the one before: the head (filled once any
        // access was made).
        if self.filled > 0 && self.pages[slot(self.head)] == page {
            return false;
        }
        self.miss_below_head(page)
    }

    /// [`Dtlb::miss`] for a page that is not the most recently used.
    #[inline(never)]
    fn miss_below_head(&mut self, page: u64) -> bool {
        let mut at = self.home(page);
        loop {
            let entry = self.table[at];
            if entry == NONE {
                break;
            }
            if self.pages[slot(entry)] == page {
                self.make_head(entry);
                return false;
            }
            at = self.next(at);
        }
        // `at` is the empty slot that ends the page's probe run.
        self.install(page, at);
        true
    }

    /// Puts `page` in the least recently used entry, which becomes the head, and in the
    /// table at `at`, the empty slot that ended its probe run. When that entry's old page
    /// leaves the table first, its removal may open a slot within the run, so the run is
    /// probed again.
    fn install(&mut self, page: u64, mut at: usize) {
        let lru = self.newer[slot(self.head)];
        if self.filled < self.pages.len() {
            self.filled += 1;
        } else {
            self.remove_from_table(lru);
            at = self.home(page);
            while self.table[at] != NONE {
                at = self.next(at);
            }
        }
        self.pages[slot(lru)] = page;
        self.table[at] = lru;
        self.head = lru;
    }

    /// Moves `entry`, filled and in the table, to the head of the ring.
    #[inline]
    fn make_head(&mut self, entry: u32) {
        let head = self.head;
        if entry == head {
            return;
        }
        let lru = self.newer[slot(head)];
        if entry != lru {
            // Unlink, then insert between the least recently used entry and the head.
            let (newer, older) = (self.newer[slot(entry)], self.older[slot(entry)]);
            self.older[slot(newer)] = older;
            self.newer[slot(older)] = newer;
            self.newer[slot(entry)] = lru;
            self.older[slot(entry)] = head;
            self.older[slot(lru)] = entry;
            self.newer[slot(head)] = entry;
        }
        // The least recently used entry already sits between the ring's ends.
        self.head = entry;
    }

    /// Removes `entry`'s table slot (found by its page), shifting later slots of its
    /// probe run back.
    fn remove_from_table(&mut self, entry: u32) {
        let mut at = self.home(self.pages[slot(entry)]);
        while self.table[at] != entry {
            at = self.next(at);
        }
        let mut hole = at;
        loop {
            at = self.next(at);
            let later = self.table[at];
            if later == NONE {
                break;
            }
            let home = self.home(self.pages[slot(later)]);
            // The slot may move to the hole if its home is not cyclically in (hole, at].
            let mask = self.table.len() - 1;
            if (at.wrapping_sub(home) & mask) >= (at.wrapping_sub(hole) & mask) {
                self.table[hole] = later;
                hole = at;
            }
        }
        self.table[hole] = NONE;
    }

    #[inline]
    fn home(&self, page: u64) -> usize {
        nvmdb_device::index(page.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - self.table_bits))
    }

    #[inline]
    fn next(&self, at: usize) -> usize {
        (at + 1) & (self.table.len() - 1)
    }
}

/// Keeps the completion times after `now`. Their order is not kept: only their count
/// and their least are ever read.
#[inline]
fn retain_after(in_flight: &mut Vec<u64>, now: u64) {
    let mut i = 0;
    while i < in_flight.len() {
        if in_flight[i] > now {
            i += 1;
        } else {
            in_flight.swap_remove(i);
        }
    }
}

/// The index of an entry.
#[inline]
fn slot(entry: u32) -> usize {
    nvmdb_device::index(u64::from(entry))
}

/// The model's state; [`CachedMemory`](crate::CachedMemory) reports its events to it,
/// each access with whether it missed the DTLB ([`Dtlb`], kept beside it).
#[derive(Debug, Clone)]
pub(crate) struct CpuTiming {
    config: CpuConfig,
    t_l_cycles: u64,
    t_w_cycles: u64,
    now: u64,
    /// Inside an independent group: when its last access completes.
    group_end: Option<u64>,
    /// Completion times of fetches in flight, in no particular order.
    in_flight: Vec<u64>,
    /// The number of ranks, as a divisor.
    ranks: Divisor,
    /// Scheduled writes per rank, `(start, end)`, in order.
    rank_writes: Vec<VecDeque<(u64, u64)>>,
    rank_write_end: Vec<u64>,
    rank_read_free: Vec<u64>,
    write_queue: VecDeque<u64>,
    write_queue_capacity: usize,
    stats: CpuTimeStats,
}

impl CpuTiming {
    pub(crate) fn new(config: CpuConfig, t_l_cycles: u64, t_w_cycles: u64, ranks: usize, queue: usize) -> CpuTiming {
        assert!(config.mshrs > 0, "invalid CPU config");
        CpuTiming {
            config,
            t_l_cycles,
            t_w_cycles,
            now: 0,
            group_end: None,
            in_flight: Vec::new(),
            ranks: Divisor::new(ranks as u64),
            rank_writes: vec![VecDeque::new(); ranks],
            rank_write_end: vec![0; ranks],
            rank_read_free: vec![0; ranks],
            write_queue: VecDeque::new(),
            write_queue_capacity: queue,
            stats: CpuTimeStats::default(),
        }
    }

    /// Zeroes the counters and the clock (the DTLB, kept outside, is not touched).
    pub(crate) fn reset(&mut self) {
        *self = CpuTiming::new(
            self.config,
            self.t_l_cycles,
            self.t_w_cycles,
            self.rank_writes.len(),
            self.write_queue_capacity,
        );
    }

    /// A copy timing write-backs at another T_w.
    pub(crate) fn copy_at_t_w(&self, t_w_cycles: u64) -> CpuTiming {
        CpuTiming { t_w_cycles, ..self.clone() }
    }

    pub(crate) fn stats(&self) -> CpuTimeStats {
        CpuTimeStats { cycles: self.now.max(self.group_end.unwrap_or(0)), ..self.stats }
    }

    #[inline]
    pub(crate) fn compute(&mut self, instructions: u64) {
        self.stats.instructions += instructions;
        self.now += instructions;
    }

    #[inline]
    pub(crate) fn begin_independent(&mut self) {
        self.group_end.get_or_insert(self.now);
    }

    #[inline]
    pub(crate) fn end_independent(&mut self) {
        if let Some(end) = self.group_end.take() {
            self.now = self.now.max(end);
        }
    }

    /// One load or store of a byte in `line`. `hit` is the latency of the level that
    /// held the line; `None` is a fetch from PCM after probing levels worth
    /// `probe_cycles`. `dtlb_miss`: whether the access missed the DTLB
    /// ([`Dtlb::miss_on_line`]).
    #[inline]
    pub(crate) fn access(&mut self, line: u64, hit: Option<u64>, probe_cycles: u64, dtlb_miss: bool) {
        self.compute(1);
        if dtlb_miss {
            self.stats.dtlb_misses += 1;
            self.now += self.config.page_walk_cycles;
        }
        let done = match hit {
            Some(latency) => self.now + latency,
            None => self.fetch(line, probe_cycles),
        };
        match self.group_end.as_mut() {
            Some(end) => *end = (*end).max(done),
            None => self.now = self.now.max(done),
        }
    }

    #[inline(never)]
    fn fetch(&mut self, line: u64, probe_cycles: u64) -> u64 {
        retain_after(&mut self.in_flight, self.now);
        if self.in_flight.len() == self.config.mshrs as usize {
            let first = self.in_flight.iter().copied().min().expect("full");
            self.now = first;
            retain_after(&mut self.in_flight, first);
        }
        let rank = self.rank(line);
        let arrive = self.now + probe_cycles;
        let writes = &mut self.rank_writes[rank];
        while writes.front().is_some_and(|&(_, end)| end <= arrive) {
            writes.pop_front();
        }
        // The write in progress when the read arrives finishes first.
        let after_write = writes.front().filter(|&&(start, _)| start <= arrive).map_or(arrive, |&(_, end)| end);
        let start = after_write.max(self.rank_read_free[rank]);
        let done = start + self.t_l_cycles;
        self.rank_read_free[rank] = done;
        self.in_flight.push(done);
        done
    }

    /// A dirty line of `words` modified words leaves the last level.
    pub(crate) fn write_back(&mut self, line: u64, words: u64) {
        while self.write_queue.front().is_some_and(|&done| done <= self.now) {
            self.write_queue.pop_front();
        }
        if self.write_queue.len() == self.write_queue_capacity {
            let oldest = self.write_queue.pop_front().expect("queue is full");
            self.now = self.now.max(oldest);
        }
        let rank = self.rank(line);
        // Writes done by now no longer delay a read: at most the queue's capacity stay.
        let now = self.now;
        let writes = &mut self.rank_writes[rank];
        while writes.front().is_some_and(|&(_, end)| end <= now) {
            writes.pop_front();
        }
        let start = self.now.max(self.rank_write_end[rank]);
        let done = start + words * self.t_w_cycles;
        self.rank_write_end[rank] = done;
        self.rank_writes[rank].push_back((start, done));
        self.write_queue.push_back(done);
    }

    fn rank(&self, line: u64) -> usize {
        nvmdb_device::index(self.ranks.rem(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The time model with its DTLB, as `CachedMemory` drives them.
    struct Model {
        cpu: CpuTiming,
        dtlb: Dtlb,
    }

    impl Model {
        fn access(&mut self, line: u64, hit: Option<u64>, probe_cycles: u64) {
            let dtlb_miss = self.dtlb.miss_on_line(line);
            self.cpu.access(line, hit, probe_cycles, dtlb_miss);
        }
        fn stats(&self) -> CpuTimeStats {
            self.cpu.stats()
        }
        fn begin_independent(&mut self) {
            self.cpu.begin_independent();
        }
        fn end_independent(&mut self) {
            self.cpu.end_independent();
        }
        fn write_back(&mut self, line: u64, words: u64) {
            self.cpu.write_back(line, words);
        }
        fn compute(&mut self, instructions: u64) {
            self.cpu.compute(instructions);
        }
    }

    fn model() -> Model {
        Model { cpu: CpuTiming::new(CpuConfig::CIDR2011, 230, 450, 4, 32), dtlb: Dtlb::of(&CpuConfig::CIDR2011) }
    }

    #[test]
    fn serial_misses_add_up_and_independent_ones_overlap_up_to_the_mshrs() {
        let mut serial = model();
        for line in 0..20 {
            serial.access(line, None, 54);
        }
        let mut grouped = model();
        grouped.begin_independent();
        for line in 0..20 {
            grouped.access(line, None, 54);
        }
        grouped.end_independent();
        // One page (lines 0..63), one DTLB miss each.
        assert_eq!(serial.stats().dtlb_misses, 1);
        // Serial: each access issues after the previous completes.
        assert_eq!(serial.stats().cycles, 30 + 20 * (1 + 54 + 230));
        // Grouped: 20 fetches on 4 ranks, 5 per rank served back to back; 10 MSHRs.
        let g = grouped.stats().cycles;
        assert!(g < serial.stats().cycles / 3, "{g}");
        assert!(g >= 5 * 230, "{g}");
        assert_eq!(grouped.stats().instructions, 20);
    }

    #[test]
    fn a_fetch_waits_for_the_write_in_progress_not_the_whole_backlog() {
        let mut m = model();
        // Three 8-word write-backs on rank 0: 3 × 3,600 cycles of backlog.
        for _ in 0..3 {
            m.write_back(0, 8);
        }
        m.access(4, None, 0);
        // The first write runs 0..3,600 and hides the page walk; the read goes next (the
        // memory-only model would wait for all three writes).
        assert_eq!(m.stats().cycles, 3_600 + 230);
    }

    #[test]
    fn the_dtlb_holds_64_pages_in_lru_order() {
        let mut m = model();
        for page in 0..65u64 {
            m.access(page * 64, Some(4), 0);
        }
        assert_eq!(m.stats().dtlb_misses, 65);
        // Page 0 was the least recently used and left; page 64 is still there.
        m.access(64 * 64, Some(4), 0);
        assert_eq!(m.stats().dtlb_misses, 65);
        m.access(0, Some(4), 0);
        assert_eq!(m.stats().dtlb_misses, 66);
    }

    /// The DTLB as the plain definition: each entry's last use, a scan to find a page,
    /// and the least recent use leaving when a new page comes into a full DTLB.
    struct ReferenceDtlb {
        pages: Vec<(u64, u64)>,
        entries: usize,
        clock: u64,
    }

    impl ReferenceDtlb {
        fn miss(&mut self, page: u64) -> bool {
            self.clock += 1;
            if let Some(entry) = self.pages.iter_mut().find(|(p, _)| *p == page) {
                entry.1 = self.clock;
                return false;
            }
            if self.pages.len() < self.entries {
                self.pages.push((page, self.clock));
            } else {
                let lru = self.pages.iter_mut().min_by_key(|(_, used)| *used).expect("entries > 0");
                *lru = (page, self.clock);
            }
            true
        }
    }

    proptest::proptest! {
        #[test]
        fn the_dtlb_matches_a_scan_of_last_uses(
            entries in 1usize..70,
            pages in proptest::collection::vec(0u64..200, 1..2000),
        ) {
            let mut dtlb = Dtlb::new(entries, 4096);
            let mut reference = ReferenceDtlb { pages: Vec::new(), entries, clock: 0 };
            for (i, &page) in pages.iter().enumerate() {
                // Pages far apart as well as adjacent ones, so that probe runs collide.
                let page = if i % 3 == 0 { page << 40 } else { page };
                proptest::prop_assert_eq!(dtlb.miss(page), reference.miss(page), "access {}", i);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn retain_after_keeps_what_retain_keeps(times in proptest::collection::vec(0u64..20, 0..12), now in 0u64..20) {
            let mut kept = times.clone();
            retain_after(&mut kept, now);
            let mut expected = times;
            expected.retain(|&done| done > now);
            kept.sort_unstable();
            expected.sort_unstable();
            proptest::prop_assert_eq!(kept, expected);
        }
    }

    #[test]
    fn instructions_cost_a_cycle_each() {
        let mut m = model();
        m.access(0, Some(4), 0);
        let before = m.stats().cycles;
        m.compute(7);
        assert_eq!(m.stats().cycles, before + 7);
        assert_eq!(m.stats().instructions, 8);
    }
}
