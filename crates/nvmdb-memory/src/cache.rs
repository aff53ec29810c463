//! A cache hierarchy over PCM, reduced from the CIDR 2011 PTLsim set-up (seed 001,
//! Table 5) to a memory timing model.
//!
//! Levels are set-associative, write-back, write-allocate and LRU, and inclusive: a line
//! evicted from a lower level is invalidated above it, its dirtiness merged. A miss in
//! every level is a PCM line fetch (N_l); a dirty line leaving the last level is a
//! differential line write (N_lw, N_w, bits).
//!
//! **Recency across levels.** A hit at one level also makes the line most recently used
//! in every level below it, so a lower level never evicts a line that is in use above
//! it. Real inclusive caches update only the level that hits and so suffer inclusion
//! victims: a line hot in L1 ages out of L3, is back-invalidated and, if dirty, written
//! back. We model the paper's PTLsim set-up instead: the paper does not call its
//! hierarchy inclusive, and the data-cache interface of the public PTLsim source
//! (`dcache.h`) fills levels on a miss and declares no back-invalidation of the levels
//! above, so a line in use in L1 is not forced out by the L3's replacement. Keeping
//! inclusion and refreshing recency below gives that while every dirty line still has one
//! path to PCM. The choice matters when L1 is large
//! against L3: with L3 shrunk 12.5× and L1 kept (an earlier quick machine of the hash
//! joins), inclusion victims wrote back each partition's hash table, +75% words over
//! Table 4 for virtual partitioning at MatchPerR 8, against +3% with recency refreshed.
//! `a_line_hot_in_l1_is_no_inclusion_victim` tests it.
//!
//! `estimated_cycles` is memory time only, with no modelled instruction execution: the
//! hit latencies of the levels probed, plus T_l per fetch, plus the time fetches wait
//! behind write-backs. A write-back occupies its rank (line mod ranks) for T_w per
//! modified word and sits in a FIFO write queue; when the queue is full the CPU waits
//! for the oldest entry. This reproduces the paper's mechanism (write-backs stalling
//! front-end fetches) without an out-of-order core.
//!
//! **Lookups.** Each last-level way has a directory entry naming the line's slot in
//! every level above, and each upper way the line's last-level slot, so recency
//! refreshes and back-invalidations go straight to their slots. A small table indexed by
//! the line's low bits keeps lines lately accessed that are still in L1 with their L1
//! slots (a line leaving L1 leaves the table), so an access to one of them goes straight
//! to its slot; any other access searches L1's set (most accesses hit there); on a miss
//! there, inclusion means the line is in some level only if it is in the last one, so the
//! last level's set is the only other set searched, in the same pass that finds its LRU
//! way.
//!
//! **Recency below L1, kept lazily.** An L1 hit updates L1's way alone and flags it as
//! hit; the line's clocks below may then be older than its last access. They are brought
//! up to date from L1 when a flagged line leaves L1, and when the least stamp of a set
//! that chooses a victim belongs to a line in L1. Every other clock is exact and clocks
//! differ, so the victims are those of refreshing every level on each hit
//! (`tests/integration/cache_reference.rs` compares with a reference that does).
//!
//! Beside it, [`timing`](crate::timing) keeps a CPU time (`cpu` in the report) with
//! instructions, a DTLB and overlapped independent misses; the hierarchy reports each
//! access, fetch and write-back to it and nothing else changes.
//!
//! **Several T_w in one simulation.** T_w sets only how long a write-back occupies its
//! rank: no cache decision, fetch, write-back or device counter depends on time. So
//! [`CachedMemory::time_also_at_t_w`] keeps, beside the device's own T_w, one more copy of
//! both time models per extra T_w, fed the same events, counting from where it is called
//! if no modified word has been written back since the counters were last zeroed
//! (nothing so far depends on T_w), otherwise from the next [`Memory::reset_stats`] (so
//! that, say, a B+-tree's bulk load is timed once and its measured operations at every
//! T_w); [`CachedMemory::report_at_t_w`] gives each
//! one's report, identical to that of a separate simulation at that T_w
//! (`tests/integration/t_w_lanes.rs`). Between two fetches or write-backs every copy of the
//! memory-only time gains the same hit latencies, so a copy is brought up to date only at
//! those events.

use std::collections::VecDeque;

use nvmdb_device::pcm::LINE_BYTES;
use nvmdb_device::{index, LineDevice, Pcm, PcmMetrics};
use serde::{Deserialize, Serialize};

use crate::divisor::Divisor;
use crate::heap::Heap;
use crate::image::Image;
use crate::timing::{CpuConfig, CpuTiming, Dtlb};
use crate::{Memory, MemoryError, MemoryReport, Scalar};

/// One cache level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLevelConfig {
    /// Capacity, bytes.
    pub size_bytes: u64,
    /// Ways per set.
    pub ways: u32,
    /// Hit latency, cycles.
    pub latency_cycles: u64,
}

/// The hierarchy and the PCM timing behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheConfig {
    /// Levels, L1 first.
    pub levels: Vec<CacheLevelConfig>,
    /// PCM ranks serving write-backs in parallel.
    pub ranks: u32,
    /// Write queue entries.
    pub write_queue: u32,
}

impl CacheConfig {
    /// CIDR 2011 Table 5: L1D 32 KB 8-way 4 cycles, L2 256 KB 8-way 11 cycles, L3 8 MB
    /// 16-way 39 cycles, 64 B lines, 4 PCM ranks, 32-entry FIFO write queue.
    pub fn cidr2011() -> CacheConfig {
        CacheConfig {
            levels: vec![
                CacheLevelConfig { size_bytes: 32 << 10, ways: 8, latency_cycles: 4 },
                CacheLevelConfig { size_bytes: 256 << 10, ways: 8, latency_cycles: 11 },
                CacheLevelConfig { size_bytes: 8 << 20, ways: 16, latency_cycles: 39 },
            ],
            ranks: 4,
            write_queue: 32,
        }
    }
}

impl CacheConfig {
    /// Host memory the hierarchy's own state takes, bytes, whatever it caches: each
    /// level's ways (tag and stamp), the upper levels' slots in the last level and the
    /// last level's directory of them (4 B each), and the write queue.
    pub fn host_bytes(&self) -> u64 {
        let lines = |level: &CacheLevelConfig| level.size_bytes / LINE_BYTES as u64;
        let ways: u64 = self.levels.iter().map(lines).sum();
        let last = self.levels.last().map_or(0, lines);
        let upper = ways - last;
        let directory = last * (self.levels.len().saturating_sub(1) as u64);
        ways * std::mem::size_of::<Way>() as u64 + (upper + directory) * 4 + self.write_queue as u64 * 8
    }
}

/// Counters of one level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLevelStats {
    /// Accesses that found the line here.
    pub hits: u64,
    /// Accesses that did not.
    pub misses: u64,
}

/// Tag of an empty way (never a real line number). Empty ways also have stamp 0.
const INVALID: u64 = u64::MAX;

/// No slot: the line is not in that level.
const NONE: u32 = u32::MAX;

/// A slot index as stored in the directories (levels have fewer than [`NONE`] lines).
#[inline]
fn to_slot(slot: usize) -> u32 {
    u32::try_from(slot).expect("levels have fewer than u32::MAX lines")
}

/// Entries of [`CachedMemory`]'s table of lines known to be in L1 (a power of two).
const RECENT: usize = 16;

/// A line known to be in L1, and its L1 slot.
#[derive(Debug, Clone, Copy)]
struct Recent {
    line: u64,
    slot: usize,
}

/// The entry of `line` in the table of lines known to be in L1.
#[inline]
fn recent_entry(line: u64) -> usize {
    index(line % RECENT as u64)
}

/// A way's stamp is `clock << CLOCK_SHIFT | HIT | DIRTY`.
const DIRTY: u64 = 1;
/// In L1 only: the line has been hit in L1 since it was filled there, so its clocks in
/// the levels below may be older than its last access (see `CachedMemory::l1_hit`).
const HIT: u64 = 2;
const CLOCK_SHIFT: u32 = 2;

/// One way of a set: its tag beside its LRU stamp, so that a set's lookup and its LRU
/// choice read the same few host cache lines.
#[derive(Debug, Clone, Copy)]
struct Way {
    tag: u64,
    /// `clock << CLOCK_SHIFT | flags`, where `clock` is the time of the last access (below
    /// L1, for a line in L1 whose L1 way has [`HIT`], of an access no later than the
    /// last); 0 when empty. Within a set the clocks differ, so the least stamp is the
    /// least recently used way once no clock is stale.
    stamp: u64,
}

impl Way {
    const EMPTY: Way = Way { tag: INVALID, stamp: 0 };

    #[inline]
    fn dirty(self) -> bool {
        self.stamp & DIRTY != 0
    }

    #[inline]
    fn clock(self) -> u64 {
        self.stamp >> CLOCK_SHIFT
    }
}

#[derive(Debug, Clone)]
struct Level {
    sets: Divisor,
    ways: usize,
    latency_cycles: u64,
    /// Set `s` is `slots[s * ways..(s + 1) * ways]`.
    slots: Vec<Way>,
    /// Above the last level: the last level's slot of the line in each slot (inclusion
    /// keeps every line there), so that an eviction finds the line's other copies
    /// without a search. Empty for the last level.
    below: Vec<u32>,
}

impl Level {
    fn new(config: &CacheLevelConfig, last: bool) -> Level {
        let lines = config.size_bytes / LINE_BYTES as u64;
        let ways = config.ways as usize;
        let sets = lines / ways as u64;
        assert!(
            sets > 0 && sets * ways as u64 == lines,
            "cache of {} bytes cannot have {ways} ways",
            config.size_bytes
        );
        assert!(lines < u64::from(NONE), "cache of {} bytes has too many lines", config.size_bytes);
        Level {
            sets: Divisor::new(sets),
            ways,
            latency_cycles: config.latency_cycles,
            slots: vec![Way::EMPTY; index(lines)],
            below: if last { Vec::new() } else { vec![NONE; index(lines)] },
        }
    }

    #[inline]
    fn set_base(&self, line: u64) -> usize {
        index(self.sets.rem(line)) * self.ways
    }

    /// `f` of the ways of the set at `base`, a slice whose length the compiler knows for
    /// the presets' 8 and 16 ways, so that the scans below unroll.
    #[inline(always)]
    fn scan<R>(&self, base: usize, f: impl FnOnce(&[Way]) -> R) -> R {
        match self.ways {
            8 => f(&self.slots[base..base + 8]),
            16 => f(&self.slots[base..base + 16]),
            ways => f(&self.slots[base..base + ways]),
        }
    }

    /// The slot of `line` if present.
    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        let base = self.set_base(line);
        // A line is in at most one way; scanning every way without an early exit trades a
        // few compares for no mispredicted loop exit.
        let hit = self.scan(base, |set| {
            set.iter().enumerate().fold(usize::MAX, |hit, (w, way)| if way.tag == line { w } else { hit })
        });
        (hit != usize::MAX).then(|| base + hit)
    }

    /// Searches the set of `line`: `Ok` with the line's slot if present, otherwise `Err`
    /// with the slot an insert fills, [`Level::victim`]'s. One pass answers both.
    #[inline]
    fn lookup(&self, line: u64) -> Result<usize, usize> {
        let base = self.set_base(line);
        // A line is in at most one way; scanning every way without an early exit trades a
        // few compares for no mispredicted loop exit. The least stamp is the first way's
        // with that stamp, as in `victim`.
        let (hit, oldest, _) = self.scan(base, |set| {
            set.iter().enumerate().fold((usize::MAX, 0, u64::MAX), |(hit, oldest, least), (w, way)| {
                let hit = if way.tag == line { w } else { hit };
                if way.stamp < least {
                    (hit, w, way.stamp)
                } else {
                    (hit, oldest, least)
                }
            })
        });
        if hit == usize::MAX {
            Err(base + oldest)
        } else {
            Ok(base + hit)
        }
    }

    /// Marks an access to a present line at `clock` with the flags `hit` (0 or [`HIT`]),
    /// keeping its dirtiness.
    #[inline]
    fn touch(&mut self, slot: usize, clock: u64, hit: u64) {
        let way = &mut self.slots[slot];
        way.stamp = clock << CLOCK_SHIFT | hit | way.stamp & DIRTY;
    }

    #[inline]
    fn mark_dirty(&mut self, slot: usize) {
        self.slots[slot].stamp |= DIRTY;
    }

    /// The way of `line`'s set with the least stamp, the first of them (no stamp is
    /// u64::MAX): below L1, the least recently used unless its line is in L1 with a stale
    /// clock here ([`HIT`]).
    #[inline]
    fn victim(&self, line: u64) -> usize {
        let base = self.set_base(line);
        let (oldest, _) =
            self.scan(base, |set| {
                set.iter().enumerate().fold((0, u64::MAX), |(oldest, least), (w, way)| {
                    if way.stamp < least {
                        (w, way.stamp)
                    } else {
                        (oldest, least)
                    }
                })
            });
        base + oldest
    }

    /// Puts `line`, clean, into `slot` at `clock`; returns the way it replaced, if one was
    /// in use.
    #[inline]
    fn fill(&mut self, slot: usize, line: u64, clock: u64) -> Option<Way> {
        let old = std::mem::replace(&mut self.slots[slot], Way { tag: line, stamp: clock << CLOCK_SHIFT });
        (old.stamp != 0).then_some(old)
    }

    /// Empties the way in `slot`; returns what it held.
    #[inline]
    fn invalidate(&mut self, slot: usize) -> Way {
        std::mem::replace(&mut self.slots[slot], Way::EMPTY)
    }

    /// Clears the dirty bit of the way in `slot`; returns whether it was set.
    fn take_dirty(&mut self, slot: usize) -> bool {
        let way = &mut self.slots[slot];
        let dirty = way.dirty();
        way.stamp &= !DIRTY;
        dirty
    }
}

/// A cache hierarchy over a PCM line device. A clone is the memory in the same state:
/// image, cache contents and recency, clocks, counters and the device's own state.
#[derive(Debug, Clone)]
pub struct CachedMemory<D: LineDevice = Pcm> {
    device: D,
    image: Image,
    heap: Heap,
    levels: Vec<Level>,
    /// The last level's directory of the levels above: `up[s * (levels - 1) + i]` is the
    /// slot in level `i` of the line in last-level slot `s`, or [`NONE`]. With inclusion,
    /// one search of the last level finds a line in every level.
    up: Vec<u32>,
    /// Lines known to be in L1, each with its L1 slot, in entry `line % RECENT` (the
    /// line [`INVALID`] when empty): every access leaves its line's entry, a line keeps its
    /// slot while it is in L1, and `evict` empties the entry of a line that leaves L1, so
    /// an entry that names a line gives its slot without a search of L1's set.
    recent: [Recent; RECENT],
    /// `ended[k]` counts the accesses whose line was first found in level `k`, and
    /// `ended[levels]` those found in none (fetches): one counter per access, from which
    /// [`CachedMemory::level_stats`] derives every level's hits and misses.
    ended: Vec<u64>,
    /// `probe_cycles[k]` is the hit latencies of levels `0..k` added up: the memory-only
    /// time of an access that probed them.
    probe_cycles: Vec<u64>,
    clock: u64,
    cycles: u64,
    t_l_cycles: u64,
    t_w_cycles: u64,
    rank_busy_until: Vec<u64>,
    /// The number of ranks; a line's rank is the line modulo it.
    ranks: Divisor,
    write_queue: VecDeque<u64>,
    write_queue_capacity: usize,
    config: CacheConfig,
    cpu: CpuTiming,
    /// The CPU time model's DTLB: which accesses miss it does not depend on T_w, so one
    /// serves `cpu` and every copy in `other_t_w`.
    dtlb: Dtlb,
    /// The time models of the other T_w ([`CachedMemory::time_also_at_t_w`]).
    other_t_w: Vec<TwTime>,
    /// Whether a write-back of modified words was timed since the counters were zeroed:
    /// until then no time depends on T_w.
    t_w_spent: bool,
}

/// The memory-only time and the CPU time model of the same accesses at another T_w.
#[derive(Debug, Clone)]
struct TwTime {
    t_w_cycles: u64,
    /// The memory-only time at the last fetch or write-back, when the main time was
    /// `synced`; both have since gained the same hit latencies.
    cycles: u64,
    synced: u64,
    rank_busy_until: Vec<u64>,
    write_queue: VecDeque<u64>,
    cpu: CpuTiming,
    /// Whether these times count from the same point as the main ones: added before any
    /// access, or reset since.
    counting: bool,
}

impl TwTime {
    /// The memory-only time now, when the main time is `main`.
    fn now(&self, main: u64) -> u64 {
        self.cycles + (main - self.synced)
    }
}

/// The memory-only time after a fetch from `rank` issued at `cycles`.
#[inline]
fn fetch_done(cycles: u64, rank_busy_until: &[u64], rank: usize, t_l_cycles: u64) -> u64 {
    cycles.max(rank_busy_until[rank]) + t_l_cycles
}

/// Queues a write-back taking `cycles_needed` on `rank` at `cycles` (waiting for the
/// oldest entry when the queue is full); returns the memory-only time after it.
#[inline]
fn queue_write(
    mut cycles: u64,
    rank_busy_until: &mut [u64],
    write_queue: &mut VecDeque<u64>,
    capacity: usize,
    rank: usize,
    cycles_needed: u64,
) -> u64 {
    while write_queue.front().is_some_and(|&done| done <= cycles) {
        write_queue.pop_front();
    }
    if write_queue.len() == capacity {
        let oldest = write_queue.pop_front().expect("queue is full");
        cycles = cycles.max(oldest);
    }
    let start = cycles.max(rank_busy_until[rank]);
    let done = start + cycles_needed;
    rank_busy_until[rank] = done;
    write_queue.push_back(done);
    cycles
}

/// What [`CachedMemory::checkpoint`] keeps to rewind a memory to: every part of its
/// state but the device's lines and the image, which the rewind cuts back to the heap's
/// high water instead.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    heap: Heap,
    levels: Vec<Level>,
    up: Vec<u32>,
    recent: [Recent; RECENT],
    ended: Vec<u64>,
    clock: u64,
    cycles: u64,
    rank_busy_until: Vec<u64>,
    write_queue: VecDeque<u64>,
    cpu: CpuTiming,
    dtlb: Dtlb,
    t_w_spent: bool,
}

impl CachedMemory<Pcm> {
    /// A hierarchy over a PCM device.
    pub fn new(pcm: Pcm, config: CacheConfig) -> CachedMemory<Pcm> {
        CachedMemory::with_device(pcm, config)
    }

    /// The state to [`CachedMemory::rewind`] to. Takes no copy of memory contents: the
    /// rewind is exact if, in between, nothing below the heap's high water of now was
    /// written and no block allocated now was freed (a hash join reading relations
    /// loaded before the checkpoint and writing only memory it allocates). No dirty line
    /// and no other T_w ([`CachedMemory::time_also_at_t_w`]) may be held.
    pub fn checkpoint(&self) -> Checkpoint {
        assert!(self.other_t_w.is_empty(), "a checkpoint times one T_w");
        assert!(
            self.levels.iter().all(|l| l.slots.iter().all(|w| !w.dirty())),
            "a checkpoint holds no dirty line (flush first)"
        );
        Checkpoint {
            heap: self.heap.clone(),
            levels: self.levels.clone(),
            up: self.up.clone(),
            recent: self.recent,
            ended: self.ended.clone(),
            clock: self.clock,
            cycles: self.cycles,
            rank_busy_until: self.rank_busy_until.clone(),
            write_queue: self.write_queue.clone(),
            cpu: self.cpu.clone(),
            dtlb: self.dtlb.clone(),
            t_w_spent: self.t_w_spent,
        }
    }

    /// Rewinds to `checkpoint`, taken of this memory: its caches, clocks, time models,
    /// counters of the hierarchy and heap as then, and the image and the device's lines
    /// past the heap's high water of then zero and never written. The device's counters
    /// are not rewound ([`Memory::reset_stats`] zeroes them).
    pub fn rewind(&mut self, checkpoint: &Checkpoint) {
        assert!(self.other_t_w.is_empty(), "a rewind times one T_w");
        let end = checkpoint.heap.high_water();
        self.device.forget_lines_from(end.div_ceil(LINE_BYTES as u64));
        self.image.rewind(end);
        let Checkpoint {
            heap,
            levels,
            up,
            recent,
            ended,
            clock,
            cycles,
            rank_busy_until,
            write_queue,
            cpu,
            dtlb,
            t_w_spent,
        } = checkpoint.clone();
        self.heap = heap;
        self.levels = levels;
        self.up = up;
        self.recent = recent;
        self.ended = ended;
        self.clock = clock;
        self.cycles = cycles;
        self.rank_busy_until = rank_busy_until;
        self.write_queue = write_queue;
        self.cpu = cpu;
        self.dtlb = dtlb;
        self.t_w_spent = t_w_spent;
    }

    /// The CIDR 2011 preset over a PCM device.
    pub fn cidr2011(pcm: Pcm) -> CachedMemory<Pcm> {
        CachedMemory::new(pcm, CacheConfig::cidr2011())
    }
}

impl<D: LineDevice> CachedMemory<D> {
    /// A hierarchy over any line device; T_l and T_w come from the device's metrics.
    pub fn with_device(device: D, config: CacheConfig) -> CachedMemory<D> {
        let metrics = device.metrics();
        assert!(!config.levels.is_empty() && config.ranks > 0 && config.write_queue > 0, "invalid cache config");
        let heap = Heap::new(device.capacity_bytes());
        CachedMemory {
            device,
            image: Image::default(),
            heap,
            levels: config
                .levels
                .iter()
                .enumerate()
                .map(|(i, l)| Level::new(l, i + 1 == config.levels.len()))
                .collect(),
            up: vec![
                NONE;
                config.levels.last().map_or(0, |l| index(l.size_bytes / LINE_BYTES as u64))
                    * (config.levels.len() - 1)
            ],
            recent: [Recent { line: INVALID, slot: 0 }; RECENT],
            ended: vec![0; config.levels.len() + 1],
            probe_cycles: std::iter::once(0)
                .chain(config.levels.iter().scan(0, |sum, l| {
                    *sum += l.latency_cycles;
                    Some(*sum)
                }))
                .collect(),
            clock: 0,
            cycles: 0,
            t_l_cycles: metrics.t_l_cycles,
            t_w_cycles: metrics.t_w_cycles,
            rank_busy_until: vec![0; config.ranks as usize],
            ranks: Divisor::new(u64::from(config.ranks)),
            write_queue: VecDeque::with_capacity(config.write_queue as usize),
            write_queue_capacity: config.write_queue as usize,
            cpu: CpuTiming::new(
                CpuConfig::CIDR2011,
                metrics.t_l_cycles,
                metrics.t_w_cycles,
                config.ranks as usize,
                config.write_queue as usize,
            ),
            dtlb: Dtlb::of(&CpuConfig::CIDR2011),
            config,
            other_t_w: Vec::new(),
            t_w_spent: false,
        }
    }

    /// The same memory with another CPU time model (the default is
    /// [`CpuConfig::CIDR2011`]); call before any access.
    pub fn with_cpu(mut self, cpu: CpuConfig) -> CachedMemory<D> {
        self.cpu = self.new_cpu(cpu, self.t_w_cycles);
        self.dtlb = Dtlb::of(&cpu);
        let others: Vec<CpuTiming> = self.other_t_w.iter().map(|o| self.new_cpu(cpu, o.t_w_cycles)).collect();
        for (other, timing) in self.other_t_w.iter_mut().zip(others) {
            other.cpu = timing;
        }
        self
    }

    fn new_cpu(&self, cpu: CpuConfig, t_w_cycles: u64) -> CpuTiming {
        CpuTiming::new(cpu, self.t_l_cycles, t_w_cycles, self.config.ranks as usize, self.config.write_queue as usize)
    }

    /// Also times every access at each of `t_ws` (cycles per modified word) beside the
    /// device's own T_w, so that one simulation gives the reports of several
    /// ([`CachedMemory::report_at_t_w`]; see the module docs). The other T_w count from
    /// here if no modified word has been written back since the counters were zeroed,
    /// otherwise from the next [`Memory::reset_stats`]. T_w values already timed are
    /// skipped.
    pub fn time_also_at_t_w(&mut self, t_ws: &[u64]) {
        for &t_w in t_ws {
            if t_w == self.t_w_cycles || self.other_t_w.iter().any(|o| o.t_w_cycles == t_w) {
                continue;
            }
            // A copy of the main times: exact while they owe nothing to T_w; otherwise
            // exact from the next reset (what the caches and the DTLB hold does not
            // depend on T_w).
            self.other_t_w.push(TwTime {
                t_w_cycles: t_w,
                cycles: self.cycles,
                synced: self.cycles,
                rank_busy_until: self.rank_busy_until.clone(),
                write_queue: self.write_queue.clone(),
                cpu: self.cpu.copy_at_t_w(t_w),
                counting: !self.t_w_spent,
            });
        }
    }

    /// The report a simulation at `t_w` would give: [`Memory::report`] at the device's
    /// T_w, or at one given to [`CachedMemory::time_also_at_t_w`] once it counts from the
    /// same point as the device's; `None` otherwise.
    pub fn report_at_t_w(&self, t_w: u64) -> Option<MemoryReport> {
        let report = self.report();
        if t_w == self.t_w_cycles {
            return Some(report);
        }
        let other = self.other_t_w.iter().find(|o| o.t_w_cycles == t_w && o.counting)?;
        Some(MemoryReport {
            estimated_cycles: other.now(self.cycles),
            cpu: other.cpu.stats(),
            metrics: report.metrics.map(|m| PcmMetrics { t_w_cycles: t_w, ..m }),
            ..report
        })
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// Estimated cycles so far.
    pub fn estimated_cycles(&self) -> u64 {
        self.cycles
    }

    /// The hierarchy configuration.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// Counters per level, L1 first.
    pub fn level_stats(&self) -> Vec<CacheLevelStats> {
        // A level's misses are the accesses that reached it and ended below it.
        let mut reached: u64 = self.ended.iter().sum();
        self.ended[..self.levels.len()]
            .iter()
            .map(|&hits| {
                reached -= hits;
                CacheLevelStats { hits, misses: reached }
            })
            .collect()
    }

    /// Brings `line` into L1 and marks it dirty on a write.
    ///
    /// Most accesses hit L1, many of them a line accessed lately, whose L1 slot the
    /// `recent` table gives; otherwise L1's set is searched first. That path is small
    /// enough to inline into every load and store; the rest is
    /// [`CachedMemory::access_below_l1`].
    #[inline]
    fn access(&mut self, line: u64, write: bool) {
        self.clock += 1;
        let clock = self.clock;
        if self.levels.len() > 1 {
            let entry = recent_entry(line);
            let slot = if self.recent[entry].line == line {
                Some(self.recent[entry].slot)
            } else {
                let slot = self.levels[0].find(line);
                if let Some(slot) = slot {
                    self.recent[entry] = Recent { line, slot };
                }
                slot
            };
            if let Some(slot) = slot {
                self.l1_hit(slot, clock, write);
                self.time_access(line, Some(0));
                return;
            }
        }
        // The presets have three levels: a body for them, whose loops over the levels the
        // compiler unrolls.
        if self.levels.len() == 3 {
            self.access_below_l1::<3>(line, write, clock);
        } else {
            self.access_below_l1::<0>(line, write, clock);
        }
    }

    /// The number of levels: `N`, for a body specialised to it (the caller checked), or
    /// the configuration's when `N` is 0.
    #[inline(always)]
    fn level_count<const N: usize>(&self) -> usize {
        debug_assert!(N == 0 || N == self.levels.len(), "a body for {N} levels runs {}", self.levels.len());
        if N > 0 {
            N
        } else {
            self.levels.len()
        }
    }

    /// An access at `clock` whose line is not in L1 (or, with one level, any access).
    #[inline(never)]
    fn access_below_l1<const N: usize>(&mut self, line: u64, write: bool, clock: u64) {
        let last = self.level_count::<N>() - 1;
        // Inclusion: a line is in a level only if it is in the last one, whose directory
        // gives its slot in each level above. The first level holding it is the hit.
        let found = match self.levels[last].lookup(line) {
            Err(slot) if last > 0 => Err(self.exact_victim::<N>(last, line, slot)),
            found => found,
        };
        if let Err(slot) = found {
            self.prefetch_write_back::<N>(slot);
        }
        let llc = found.ok();
        let hit = llc.map(|llc| {
            let up = &self.up[llc * last..(llc + 1) * last];
            up.iter().position(|&s| s != NONE).map_or((last, llc), |i| (i, index(u64::from(up[i]))))
        });
        let levels = self.level_count::<N>();
        self.ended[hit.map_or(levels, |(i, _)| i)] += 1;
        self.cycles += self.probe_cycles[hit.map_or(levels, |(i, _)| i + 1)];
        if let (Some((i, slot)), Some(llc)) = (hit, llc) {
            self.levels[i].touch(slot, clock, 0);
            // A hit refreshes the line's recency in the levels below too (see the module
            // docs); inclusion keeps it in each of them.
            for j in i + 1..last {
                let below = index(u64::from(self.up[llc * last + j]));
                self.levels[j].touch(below, clock, 0);
            }
            if i < last {
                self.levels[last].touch(llc, clock, 0);
            }
        }
        self.time_access(line, hit.map(|(i, _)| i));
        let (fill_from, mut l1_slot, mut llc) = match (hit, llc) {
            (Some((i, slot)), Some(llc)) => (i, slot, llc),
            _ => {
                self.fetch(line);
                (self.level_count::<N>(), 0, 0)
            }
        };
        for i in (0..fill_from).rev() {
            // The last level's victim is the one its search found: nothing has changed
            // its set since.
            let slot = match found {
                Err(slot) if i == last => slot,
                _ if i > 0 => {
                    let slot = self.levels[i].victim(line);
                    self.exact_victim::<N>(i, line, slot)
                }
                _ => self.levels[0].victim(line),
            };
            if let Some(victim) = self.levels[i].fill(slot, line, clock) {
                self.evict::<N>(i, slot, victim);
            }
            if i == last {
                // The victim's eviction emptied the slot's directory entries.
                llc = slot;
            } else {
                self.levels[i].below[slot] = to_slot(llc);
                self.up[llc * last + i] = to_slot(slot);
            }
            l1_slot = slot;
        }
        // Evictions touch only other lines' ways, so the line's L1 slot is still its own.
        if write {
            self.levels[0].mark_dirty(l1_slot);
        }
        self.recent[recent_entry(line)] = Recent { line, slot: l1_slot };
    }

    /// An access that found its line in L1 at `slot`, with levels below L1.
    ///
    /// The line's recency in the levels below (see the module docs) is refreshed lazily:
    /// L1's way is flagged [`HIT`], and the line's clocks below may be older than L1's.
    /// They are brought up to date from L1's way when the line leaves L1 (`evict`), and
    /// when the least stamp of a set that chooses a victim belongs to a line in L1
    /// (`exact_victim`). Every other clock below L1 is the line's last access, and clocks
    /// only grow, so a stale clock that is not its set's least stamp does not hide the
    /// least recently used way: the victims are those of refreshing every level on each
    /// hit.
    #[inline]
    fn l1_hit(&mut self, slot: usize, clock: u64, write: bool) {
        let l1 = &mut self.levels[0];
        self.cycles += l1.latency_cycles;
        self.ended[0] += 1;
        l1.touch(slot, clock, HIT);
        if write {
            l1.mark_dirty(slot);
        }
    }

    /// The least recently used way of `line`'s set in level `j` below L1, given `slot`, the
    /// way with the least stamp. When that way's line is in L1 (its clock here may be
    /// stale), the set's clocks are first brought up to date from L1.
    #[inline]
    fn exact_victim<const N: usize>(&mut self, j: usize, line: u64, slot: usize) -> usize {
        if self.l1_slot_of::<N>(j, slot).is_none() {
            return slot;
        }
        self.refresh_set(j, line);
        self.levels[j].victim(line)
    }

    /// Before the line in `slot` of the last level is evicted: if it will be written back
    /// (dirty there, or with a copy above that may be), asks the host for what the
    /// write-back reads, the line's bytes in the image and the device's record of the line
    /// (prefetches, which do not wait), so that the host's misses on them overlap the
    /// fetch and the fills instead of stalling the write-back. Changes nothing: over a
    /// large working set a write-back otherwise waits on these misses one after another.
    #[inline]
    fn prefetch_write_back<const N: usize>(&self, slot: usize) {
        let last = self.level_count::<N>() - 1;
        let way = self.levels[last].slots[slot];
        if way.stamp == 0 {
            return;
        }
        if way.dirty() || self.up[slot * last..(slot + 1) * last].iter().any(|&s| s != NONE) {
            self.image.prefetch(way.tag * LINE_BYTES as u64);
            self.device.prefetch_line(way.tag);
        }
    }

    /// The L1 slot of the line in `slot` of level `j` below L1, if it is in L1.
    #[inline]
    fn l1_slot_of<const N: usize>(&self, j: usize, slot: usize) -> Option<usize> {
        if self.levels[j].slots[slot].stamp == 0 {
            return None;
        }
        let last = self.level_count::<N>() - 1;
        let llc = if j == last { slot } else { index(u64::from(self.levels[j].below[slot])) };
        let l1 = self.up[llc * last];
        (l1 != NONE).then(|| index(u64::from(l1)))
    }

    /// Sets the clock of each way of `line`'s set in level `j` (below L1) whose line is in
    /// L1 to L1's, the line's last access.
    /// (Rare, and so compiled once, for any number of levels.)
    #[cold]
    fn refresh_set(&mut self, j: usize, line: u64) {
        let base = self.levels[j].set_base(line);
        for slot in base..base + self.levels[j].ways {
            if let Some(l1) = self.l1_slot_of::<0>(j, slot) {
                let clock = self.levels[0].slots[l1].clock();
                self.levels[j].touch(slot, clock, 0);
            }
        }
    }

    /// Reports an access that hit at level `hit` (a fetch when `None`) to the CPU model.
    #[inline(always)]
    fn time_access(&mut self, line: u64, hit: Option<usize>) {
        let (hit, probe) = match hit {
            Some(i) => (Some(self.levels[i].latency_cycles), 0),
            None => (None, self.probe_cycles[self.levels.len()]),
        };
        let dtlb_miss = self.dtlb.miss_on_line(line);
        self.cpu.access(line, hit, probe, dtlb_miss);
        for other in &mut self.other_t_w {
            other.cpu.access(line, hit, probe, dtlb_miss);
        }
    }

    /// `victim` left `slot` of level `i`: invalidate it above (inclusion), merge
    /// dirtiness, bring its clocks below up to date if it was hit in L1, and pass it down
    /// or write it back. The slot's directory entries are still the line's.
    #[inline]
    fn evict<const N: usize>(&mut self, i: usize, slot: usize, victim: Way) {
        let last = self.level_count::<N>() - 1;
        let line = victim.tag;
        let mut dirty = victim.dirty();
        let llc = if i == last { slot } else { index(u64::from(self.levels[i].below[slot])) };
        let up = llc * last;
        // The line's L1 way, if it was in L1.
        let mut l1_way = (i == 0).then_some(victim);
        for (j, upper) in self.levels[..i].iter_mut().enumerate() {
            let s = std::mem::replace(&mut self.up[up + j], NONE);
            if s != NONE {
                let way = upper.invalidate(index(u64::from(s)));
                dirty |= way.dirty();
                if j == 0 {
                    l1_way = Some(way);
                }
            }
        }
        if l1_way.is_some() {
            // The line leaves L1: its slot there no longer holds it.
            let entry = &mut self.recent[recent_entry(line)];
            if entry.line == line {
                entry.line = INVALID;
            }
        }
        if i < last {
            self.up[up + i] = NONE;
            if let Some(clock) = l1_way.filter(|way| way.stamp & HIT != 0).map(Way::clock) {
                // The line stays below, no longer in L1: its clocks there become exact.
                for j in i + 1..last {
                    let below = index(u64::from(self.up[up + j]));
                    self.levels[j].touch(below, clock, 0);
                }
                self.levels[last].touch(llc, clock, 0);
            }
        }
        if !dirty {
            return;
        }
        if i == last {
            self.write_back(line);
        } else if i + 1 == last {
            self.levels[last].mark_dirty(llc);
        } else {
            let below = index(u64::from(self.up[up + i + 1]));
            self.levels[i + 1].mark_dirty(below);
        }
    }

    fn fetch(&mut self, line: u64) {
        let rank = index(self.ranks.rem(line));
        let before = self.cycles;
        self.cycles = fetch_done(before, &self.rank_busy_until, rank, self.t_l_cycles);
        for other in &mut self.other_t_w {
            other.cycles = fetch_done(other.now(before), &other.rank_busy_until, rank, self.t_l_cycles);
            other.synced = self.cycles;
        }
        // The image already holds the line's content; the device only counts the fetch.
        self.device.count_fetch(line);
    }

    fn write_back(&mut self, line: u64) {
        let words = self.image.line_words(line);
        let written = self.device.write_line(line, &words);
        let words = u64::from(written.words);
        self.t_w_spent |= words > 0;
        self.cpu.write_back(line, words);
        let rank = index(self.ranks.rem(line));
        let before = self.cycles;
        self.cycles = queue_write(
            before,
            &mut self.rank_busy_until,
            &mut self.write_queue,
            self.write_queue_capacity,
            rank,
            words * self.t_w_cycles,
        );
        for other in &mut self.other_t_w {
            other.cpu.write_back(line, words);
            other.cycles = queue_write(
                other.now(before),
                &mut other.rank_busy_until,
                &mut other.write_queue,
                self.write_queue_capacity,
                rank,
                words * other.t_w_cycles,
            );
            other.synced = self.cycles;
        }
    }

    /// Asks the host for the first and the last byte of `[addr, addr + len)` (see
    /// `read_bytes`): the lines of most spans. A span starting in a line accessed lately
    /// and still in L1 (the `recent` table's) is not asked for: the host, too, has
    /// lately read it.
    #[inline]
    fn prefetch_span(&self, addr: u64, len: usize) {
        let line = addr / LINE_BYTES as u64;
        if self.recent[recent_entry(line)].line == line {
            return;
        }
        self.image.prefetch(addr);
        if len > 1 {
            self.image.prefetch(addr + (len - 1) as u64);
        }
    }

    /// Accesses each line of `[addr, addr + len)` in order (one line when `len` is 0).
    #[inline]
    fn access_span(&mut self, addr: u64, len: usize, write: bool) {
        let first = addr / LINE_BYTES as u64;
        let last = (addr + len.max(1) as u64 - 1) / LINE_BYTES as u64;
        // Most accesses are scalars within one line: no loop for them.
        self.access(first, write);
        for line in first + 1..last + 1 {
            self.access(line, write);
        }
    }
}

impl<D: LineDevice> Memory for CachedMemory<D> {
    /// Asks the host for the bytes (a prefetch, which does not wait), simulates the
    /// access, then copies them out: the host's miss on them overlaps the model's work
    /// instead of stalling it. (A load made first instead waits at the head of the host's
    /// reorder window, which fills long before the model's work is done.)
    #[inline]
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        self.prefetch_span(addr, buf.len());
        self.access_span(addr, buf.len(), false);
        self.image.read(addr, buf);
    }

    /// As `read_bytes`: the bytes are asked for before the access is simulated. The
    /// store follows the access: a write-back it causes may read the line from the image.
    #[inline]
    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        self.prefetch_span(addr, data.len());
        self.access_span(addr, data.len(), true);
        self.image.write(addr, data);
    }

    /// As `read_bytes`, with the copy's length known where it is made
    /// ([`Image::read_scalar`], as [`NativeMemory`](crate::NativeMemory)'s).
    #[inline]
    fn load<T: Scalar>(&mut self, addr: u64) -> T {
        self.prefetch_span(addr, 1);
        self.access_span(addr, T::SIZE, false);
        self.image.read_scalar(addr)
    }

    /// As `write_bytes`, with the copy's length known where it is made
    /// ([`Image::write_scalar`]).
    #[inline]
    fn store<T: Scalar>(&mut self, addr: u64, value: T) {
        self.prefetch_span(addr, 1);
        self.access_span(addr, T::SIZE, true);
        self.image.write_scalar(addr, value);
    }

    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        let addr = self.heap.alloc(size, align)?;
        self.image.ensure(self.heap.high_water());
        Ok(addr)
    }

    fn free(&mut self, addr: u64, size: u64) {
        self.heap.free(addr, size);
    }

    /// Writes back every dirty line, in order of the last level's slots.
    fn flush_all(&mut self) {
        let last = self.levels.len() - 1;
        for slot in 0..self.levels[last].slots.len() {
            let line = self.levels[last].slots[slot].tag;
            if line == INVALID {
                continue;
            }
            let mut dirty = self.levels[last].take_dirty(slot);
            for (j, upper) in self.levels[..last].iter_mut().enumerate() {
                let s = self.up[slot * last + j];
                if s != NONE {
                    dirty |= upper.take_dirty(index(u64::from(s)));
                }
            }
            if dirty {
                self.write_back(line);
            }
        }
    }

    fn reset_stats(&mut self) {
        self.device.reset_line_stats();
        self.ended.fill(0);
        self.cycles = 0;
        self.rank_busy_until.fill(0);
        self.write_queue.clear();
        self.cpu.reset();
        self.t_w_spent = false;
        for other in &mut self.other_t_w {
            other.cycles = 0;
            other.synced = 0;
            other.rank_busy_until.fill(0);
            other.write_queue.clear();
            other.cpu.reset();
            other.counting = true;
        }
    }

    fn compute(&mut self, instructions: u64) {
        self.cpu.compute(instructions);
        for other in &mut self.other_t_w {
            other.cpu.compute(instructions);
        }
    }

    fn begin_independent(&mut self) {
        self.cpu.begin_independent();
        for other in &mut self.other_t_w {
            other.cpu.begin_independent();
        }
    }

    fn end_independent(&mut self) {
        self.cpu.end_independent();
        for other in &mut self.other_t_w {
            other.cpu.end_independent();
        }
    }

    fn report(&self) -> MemoryReport {
        MemoryReport {
            kind: "cached".into(),
            pcm: self.device.line_stats(),
            cache_levels: self.level_stats(),
            estimated_cycles: self.cycles,
            cpu: self.cpu.stats(),
            metrics: Some(self.device.metrics()),
        }
    }
}
