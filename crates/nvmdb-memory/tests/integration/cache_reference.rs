//! The cache model against a reference kept deliberately simple: each set a vector of
//! optional ways with a last-use time and a dirty flag, the same inclusive write-back
//! policy (a hit refreshes the line's last use in the levels below), and the same
//! write-queue timing. Level counters, PCM counters, cycles and loaded values must be
//! identical.

use nvmdb_device::pcm::WORDS_PER_LINE;
use nvmdb_device::{LineDevice, Pcm, PcmConfig};
use nvmdb_memory::{CacheConfig, CacheLevelConfig, CacheLevelStats, CachedMemory, Memory};
use proptest::prelude::*;
use std::collections::{HashMap, VecDeque};

const CAPACITY: u64 = 1 << 16;

#[derive(Clone, Copy)]
struct RefWay {
    line: u64,
    last_use: u64,
    dirty: bool,
}

struct RefLevel {
    latency_cycles: u64,
    sets: Vec<Vec<Option<RefWay>>>,
    stats: CacheLevelStats,
}

impl RefLevel {
    fn set(&mut self, line: u64) -> &mut Vec<Option<RefWay>> {
        let n = self.sets.len() as u64;
        &mut self.sets[(line % n) as usize]
    }

    fn find(&mut self, line: u64) -> Option<&mut RefWay> {
        self.set(line).iter_mut().flatten().find(|w| w.line == line)
    }

    /// Fills the first least recently used way (an empty way counts as used at time 0).
    fn insert(&mut self, line: u64, now: u64) -> Option<RefWay> {
        let set = self.set(line);
        let age = |w: &Option<RefWay>| w.map_or(0, |w| w.last_use);
        let mut victim = 0;
        for i in 1..set.len() {
            if age(&set[i]) < age(&set[victim]) {
                victim = i;
            }
        }
        set[victim].replace(RefWay { line, last_use: now, dirty: false })
    }

    fn remove(&mut self, line: u64) -> Option<RefWay> {
        self.set(line).iter_mut().find(|w| w.is_some_and(|w| w.line == line)).and_then(Option::take)
    }
}

struct RefCache {
    levels: Vec<RefLevel>,
    pcm: Pcm,
    image: HashMap<u64, [u64; WORDS_PER_LINE]>,
    now: u64,
    cycles: u64,
    rank_busy_until: Vec<u64>,
    queue: VecDeque<u64>,
    queue_capacity: usize,
}

impl RefCache {
    fn new(config: &CacheConfig) -> RefCache {
        RefCache {
            levels: config
                .levels
                .iter()
                .map(|l| {
                    let ways = l.ways as usize;
                    let sets = (l.size_bytes / 64) as usize / ways;
                    RefLevel {
                        latency_cycles: l.latency_cycles,
                        sets: vec![vec![None; ways]; sets],
                        stats: CacheLevelStats::default(),
                    }
                })
                .collect(),
            pcm: Pcm::new(PcmConfig::new(CAPACITY)).unwrap(),
            image: HashMap::new(),
            now: 0,
            cycles: 0,
            rank_busy_until: vec![0; config.ranks as usize],
            queue: VecDeque::new(),
            queue_capacity: config.write_queue as usize,
        }
    }

    fn access(&mut self, line: u64, write: bool) {
        self.now += 1;
        let mut hit = None;
        for (i, level) in self.levels.iter_mut().enumerate() {
            self.cycles += level.latency_cycles;
            if let Some(way) = level.find(line) {
                way.last_use = self.now;
                level.stats.hits += 1;
                hit = Some(i);
                break;
            }
            level.stats.misses += 1;
        }
        // A hit refreshes the line's last use in every level below.
        if let Some(i) = hit {
            for level in &mut self.levels[i + 1..] {
                level.find(line).unwrap().last_use = self.now;
            }
        }
        let fill_from = hit.unwrap_or_else(|| {
            let rank = (line % self.rank_busy_until.len() as u64) as usize;
            self.cycles = self.cycles.max(self.rank_busy_until[rank]) + self.pcm.metrics().t_l_cycles;
            self.pcm.count_fetch(line);
            self.levels.len()
        });
        for i in (0..fill_from).rev() {
            if let Some(victim) = self.levels[i].insert(line, self.now) {
                self.evict(i, victim);
            }
        }
        if write {
            self.levels[0].find(line).unwrap().dirty = true;
        }
    }

    fn evict(&mut self, i: usize, victim: RefWay) {
        let mut dirty = victim.dirty;
        for upper in &mut self.levels[..i] {
            dirty |= upper.remove(victim.line).is_some_and(|w| w.dirty);
        }
        if !dirty {
            return;
        }
        match self.levels.get_mut(i + 1) {
            Some(lower) => lower.find(victim.line).unwrap().dirty = true,
            None => self.write_back(victim.line),
        }
    }

    fn write_back(&mut self, line: u64) {
        let words = self.image.get(&line).copied().unwrap_or_default();
        let written = self.pcm.write_line(line, &words);
        while self.queue.front().is_some_and(|&done| done <= self.cycles) {
            self.queue.pop_front();
        }
        if self.queue.len() == self.queue_capacity {
            self.cycles = self.cycles.max(self.queue.pop_front().unwrap());
        }
        let rank = (line % self.rank_busy_until.len() as u64) as usize;
        let done =
            self.cycles.max(self.rank_busy_until[rank]) + u64::from(written.words) * self.pcm.metrics().t_w_cycles;
        self.rank_busy_until[rank] = done;
        self.queue.push_back(done);
    }

    fn load(&mut self, addr: u64) -> u64 {
        self.access(addr / 64, false);
        self.image.get(&(addr / 64)).map_or(0, |l| l[(addr % 64 / 8) as usize])
    }

    fn store(&mut self, addr: u64, value: u64) {
        self.access(addr / 64, true);
        self.image.entry(addr / 64).or_default()[(addr % 64 / 8) as usize] = value;
    }

    /// Writes back every dirty line in the order of the last level's sets and ways.
    fn flush_all(&mut self) {
        let last = self.levels.len() - 1;
        let slots: Vec<(usize, usize)> = (0..self.levels[last].sets.len())
            .flat_map(|s| (0..self.levels[last].sets[s].len()).map(move |w| (s, w)))
            .collect();
        for (s, w) in slots {
            let Some(way) = self.levels[last].sets[s][w].as_mut() else { continue };
            let line = way.line;
            let mut dirty = std::mem::take(&mut way.dirty);
            for upper in &mut self.levels[..last] {
                if let Some(way) = upper.find(line) {
                    dirty |= std::mem::take(&mut way.dirty);
                }
            }
            if dirty {
                self.write_back(line);
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Load(u64),
    Store(u64, u64),
    Flush,
}

fn ops(words: u64) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        6 => (0..words).prop_map(Op::Load),
        3 => (0..words, any::<u64>()).prop_map(|(w, v)| Op::Store(w, v)),
        1 => Just(Op::Flush),
    ];
    prop::collection::vec(op, 1..400)
}

fn config() -> impl Strategy<Value = CacheConfig> {
    // Level l has 2^sets_log2 sets of `ways` ways; each level at least as large as the one above.
    let level = (0u32..3, prop::sample::select(vec![1u32, 2, 4]), 1u64..20);
    (prop::collection::vec(level, 1..4), 1u32..4, 1u32..4).prop_map(|(levels, ranks, write_queue)| {
        let mut lines_above = 0u64;
        let levels = levels
            .into_iter()
            .map(|(sets_log2, ways, latency_cycles)| {
                let lines = (u64::from(ways) << sets_log2).max(lines_above);
                lines_above = lines;
                let ways = ways.min(lines as u32);
                CacheLevelConfig { size_bytes: lines / u64::from(ways) * u64::from(ways) * 64, ways, latency_cycles }
            })
            .collect();
        CacheConfig { levels, ranks, write_queue }
    })
}

/// Runs `ops` over `words` words against the model and the reference, comparing every
/// load, the cycle count after every operation, and the final PCM and cache statistics.
fn check_against_reference(config: &CacheConfig, ops: Vec<Op>, words: u64) -> Result<(), TestCaseError> {
    let mut cached = CachedMemory::new(Pcm::new(PcmConfig::new(CAPACITY)).unwrap(), config.clone());
    let mut reference = RefCache::new(config);
    let base = cached.alloc(words * 8, 64).unwrap();
    for op in ops {
        match op {
            Op::Load(w) => prop_assert_eq!(cached.load::<u64>(base + 8 * w), reference.load(base + 8 * w)),
            Op::Store(w, v) => {
                cached.store::<u64>(base + 8 * w, v);
                reference.store(base + 8 * w, v);
            }
            Op::Flush => {
                cached.flush_all();
                reference.flush_all();
            }
        }
        prop_assert_eq!(cached.estimated_cycles(), reference.cycles);
    }
    let report = cached.report();
    prop_assert_eq!(report.pcm, reference.pcm.line_stats());
    prop_assert_eq!(report.cache_levels, reference.levels.iter().map(|l| l.stats).collect::<Vec<_>>());
    Ok(())
}

proptest! {
    #[test]
    fn cache_matches_the_reference(config in config(), ops in ops(256)) {
        check_against_reference(&config, ops, 256)?;
    }
}

/// Levels beyond those of [`config`] (power-of-two set counts, at most 4 ways): set
/// counts that are not powers of two (no preset has them, but a `CacheConfig` may), 8
/// and 16 ways (the CIDR 2011 levels'), and 80 ways (more than a 64-bit way mask holds).
fn wide_config() -> impl Strategy<Value = CacheConfig> {
    let level = (1u64..7, prop::sample::select(vec![1u32, 3, 8, 16, 80]), 1u64..20);
    (prop::collection::vec(level, 1..4), 1u32..5, 1u32..4).prop_map(|(levels, ranks, write_queue)| {
        let mut lines_above = 0u64;
        let levels = levels
            .into_iter()
            .map(|(sets, ways, latency_cycles)| {
                // Each level at least as large as the one above.
                let sets = sets.max(lines_above.div_ceil(u64::from(ways)));
                lines_above = sets * u64::from(ways);
                CacheLevelConfig { size_bytes: lines_above * 64, ways, latency_cycles }
            })
            .collect();
        CacheConfig { levels, ranks, write_queue }
    })
}

proptest! {
    /// The same comparison over [`wide_config`]'s levels and 128 lines, enough to fill an
    /// 80-way set past its first 64 ways.
    #[test]
    fn wide_and_uneven_sets_match_the_reference(config in wide_config(), ops in ops(1024)) {
        check_against_reference(&config, ops, 1024)?;
    }
}

/// Half the operations on the first 1 to 5 lines, the rest over all `words` words: hot
/// lines stay in L1 for long stretches while the levels below turn over, so that a line
/// in L1 often has the least recent use of a lower set (its clock there is brought up to
/// date only when the set chooses a victim) and leaves L1 with its clocks below out of
/// date.
fn skewed_ops(words: u64) -> impl Strategy<Value = Vec<Op>> {
    (1u64..6).prop_flat_map(move |hot| {
        let op = prop_oneof![
            3 => (0..hot * 8).prop_map(Op::Load),
            2 => (0..hot * 8, any::<u64>()).prop_map(|(w, v)| Op::Store(w, v)),
            3 => (0..words).prop_map(Op::Load),
            2 => (0..words, any::<u64>()).prop_map(|(w, v)| Op::Store(w, v)),
        ];
        prop::collection::vec(op, 1..600)
    })
}

proptest! {
    /// The comparison over both configurations' levels with [`skewed_ops`].
    #[test]
    fn hot_lines_in_l1_match_the_reference(config in prop_oneof![config(), wide_config()], ops in skewed_ops(1024)) {
        check_against_reference(&config, ops, 1024)?;
    }
}

/// Accesses to the words of a few lines 16 lines apart and of their neighbours: lines
/// that share an entry of the model's table of lines in L1 (indexed by the line's low
/// bits) and lines that share an L1 set leave L1 and come back while that table names
/// them, so a stale entry would send an access to a slot its line has left.
fn colliding_ops() -> impl Strategy<Value = Vec<Op>> {
    let word = (0u64..6, 0u64..3, 0u64..8).prop_map(|(apart, next, w)| (apart * 16 + next) * 8 + w);
    let op = prop_oneof![
        5 => word.clone().prop_map(Op::Load),
        4 => (word, any::<u64>()).prop_map(|(w, v)| Op::Store(w, v)),
        1 => Just(Op::Flush),
    ];
    prop::collection::vec(op, 1..600)
}

proptest! {
    /// The comparison over both configurations' levels with [`colliding_ops`].
    #[test]
    fn lines_that_share_table_entries_match_the_reference(
        config in prop_oneof![config(), wide_config()],
        ops in colliding_ops(),
    ) {
        check_against_reference(&config, ops, 6 * 16 * 8)?;
    }
}
