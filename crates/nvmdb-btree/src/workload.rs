//! The CIDR 2011 Figure 6 workload: random keys, bulk load, then one kind of operation,
//! measured with counters reset after loading and the cache flushed at the end.

use std::collections::HashSet;
use std::str::FromStr;

use nvmdb_device::{FlipNWrite, Pcm, PcmAccounting, PcmConfig, PcmMetrics, PcmStats};
use nvmdb_memory::{CacheConfig, CachedMemory, FlatMemory, Memory, MemoryError, MemoryReport, NativeMemory, Scalar};
use rand::Rng;
use serde::Serialize;

use crate::{BTree, BTreeError};

/// Simulated memory capacity: 1 TiB, allocated sparsely as the heap grows.
pub const CAPACITY_BYTES: u64 = 1 << 40;

/// Bytes per record: a loaded or inserted entry's value is the address of its record,
/// `RECORD_BYTES × record id`, so values are distinct, 64 B aligned pointers into a
/// record heap as large as the table.
pub const RECORD_BYTES: u64 = 64;

/// Host bytes a simulated memory line costs in `kind`: the PCM's cell record (64 B of
/// words, the flip cells and the lowest wear plane, 160 B), with the cache model's copy of
/// the line (64 B) beside it when cached; plain RAM holds the line's 64 B.
fn host_bytes_per_line(kind: MemoryKind) -> u64 {
    match kind {
        MemoryKind::Cached => 160 + 64,
        MemoryKind::Flat => 160,
        MemoryKind::Native => 64,
    }
}

/// The cache model's own memory whatever it holds: 16 B of tag and stamp per way of the
/// CIDR 2011 levels (8.3 MB of 64 B lines), and as much again for the upper levels' slot
/// maps and the write queue (measured: about 3.7 MiB).
fn cache_model_bytes(kind: MemoryKind) -> u64 {
    let ways: u64 = CacheConfig::cidr2011().levels.iter().map(|l| l.size_bytes / 64).sum();
    if kind == MemoryKind::Cached {
        ways * 32
    } else {
        0
    }
}

/// Host memory of a generated run (as `nvmdb btree run --entries N --op OP --count C`,
/// fill `fill`), bytes; checked by the CLI before anything is allocated:
/// - the loaded keys (8 B each), and the bulk load's separators (16 B a node);
/// - the tree's lines ([`crate::bulk_loaded_nodes`] of `node_lines` lines), each
///   [`host_bytes_per_line`], and the cache model's own ([`cache_model_bytes`]);
/// - per operation its key, the key set that drew it and its answer in a doubling
///   vector (8 + 24 + 48 B);
/// - inserts: the nodes their splits add, one per leaf per half-node of inserts (a bulk-
///   loaded leaf splits once it has taken its free slots, a split one once it has taken
///   half of them), and as many again above;
/// - inserts and deletes: the wear planes their rewrites grow (72 B each; a line's
///   planes grow by one each time its program count doubles, so R rewrites of L lines
///   add at most L·log2(1 + R/L): [`nvmdb_device::wear::higher_plane_bytes_bound`]), each
///   operation rewriting at most a node's lines.
///
/// `tests/memory_estimate.rs` measures the peak of such runs: the estimate is at least
/// the peak and at most 1.5× it.
pub fn estimated_memory_bytes(
    kind: MemoryKind,
    node_lines: u32,
    entries: u64,
    op: OpKind,
    count: u64,
    fill: f64,
) -> u64 {
    let lines_per_node = u64::from(node_lines);
    let mut nodes = crate::bulk_loaded_nodes(node_lines, entries, fill);
    let mut bytes = entries.saturating_mul(8).saturating_add(nodes.saturating_mul(16));
    bytes = bytes.saturating_add(count.saturating_mul(8 + 24 + 48));
    if op == OpKind::Insert {
        let (cap, per_node) = crate::tree::node_fill(node_lines, fill);
        let inserts_per_split = (cap - per_node + 1).min(cap.div_ceil(2)).max(1) as u64;
        nodes = nodes.saturating_add(count.div_ceil(inserts_per_split).saturating_mul(2));
    }
    let lines = nodes.saturating_mul(lines_per_node);
    if op != OpKind::Search && lines > 0 {
        let rewrites = count.saturating_mul(lines_per_node);
        bytes = bytes.saturating_add(nvmdb_device::wear::higher_plane_bytes_bound(lines, rewrites));
    }
    // The directory's tables and the run's small state (1 MiB).
    bytes
        .saturating_add(lines.saturating_mul(host_bytes_per_line(kind)))
        .saturating_add(cache_model_bytes(kind))
        .saturating_add(1 << 20)
}

/// Which memory a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryKind {
    /// The CIDR 2011 cache hierarchy over PCM.
    Cached,
    /// PCM with no cache.
    Flat,
    /// Plain RAM, no accounting.
    Native,
}

impl MemoryKind {
    /// `cached`, `flat` or `native`.
    pub fn name(self) -> &'static str {
        match self {
            MemoryKind::Cached => "cached",
            MemoryKind::Flat => "flat",
            MemoryKind::Native => "native",
        }
    }
}

impl FromStr for MemoryKind {
    type Err = String;
    fn from_str(s: &str) -> Result<MemoryKind, String> {
        match s {
            "cached" => Ok(MemoryKind::Cached),
            "flat" => Ok(MemoryKind::Flat),
            "native" => Ok(MemoryKind::Native),
            other => Err(format!("unknown memory '{other}' (expected cached, flat or native)")),
        }
    }
}

/// One of the three memories, chosen at run time.
#[derive(Debug)]
pub enum AnyMemory {
    /// Cache hierarchy over PCM.
    Cached(Box<CachedMemory<Pcm>>),
    /// Uncached PCM.
    Flat(Box<FlatMemory>),
    /// Plain RAM.
    Native(NativeMemory),
}

impl AnyMemory {
    /// A fresh memory of [`CAPACITY_BYTES`], with Flip-N-Write (one flip cell per word)
    /// when asked.
    pub fn new(kind: MemoryKind, flip_n_write: bool) -> AnyMemory {
        match kind {
            MemoryKind::Cached => AnyMemory::cached(CacheConfig::cidr2011(), PcmMetrics::CIDR2011),
            MemoryKind::Flat => AnyMemory::Flat(Box::new(FlatMemory::new(pcm(
                flip_n_write,
                PcmMetrics::CIDR2011,
                PcmAccounting::Cells,
            )))),
            MemoryKind::Native => AnyMemory::Native(NativeMemory::new(CAPACITY_BYTES)),
        }
    }

    /// A cache hierarchy `config` over a fresh PCM of [`CAPACITY_BYTES`] with `metrics`
    /// (no Flip-N-Write).
    pub fn cached(config: CacheConfig, metrics: PcmMetrics) -> AnyMemory {
        AnyMemory::Cached(Box::new(CachedMemory::new(pcm(false, metrics, PcmAccounting::Cells), config)))
    }

    /// As [`AnyMemory::cached`], with the PCM's cells counted without their wear
    /// ([`PcmAccounting::Bits`]): every counter and report is the same, the per-cell wear
    /// reads 0, and the device keeps 64 B of host memory a written line instead of 160 B.
    /// For runs that read the counters and never the wear.
    pub fn cached_without_wear(config: CacheConfig, metrics: PcmMetrics) -> AnyMemory {
        AnyMemory::Cached(Box::new(CachedMemory::new(pcm(false, metrics, PcmAccounting::Bits), config)))
    }
}

fn pcm(flip_n_write: bool, metrics: PcmMetrics, accounting: PcmAccounting) -> Pcm {
    let mut config = PcmConfig::new(CAPACITY_BYTES);
    config.flip_n_write = flip_n_write.then_some(FlipNWrite::WORD);
    config.metrics = metrics;
    config.accounting = accounting;
    Pcm::new(config).expect("the capacity is a multiple of 64, and Flip-N-Write is off where the wear is not kept")
}

macro_rules! dispatch {
    ($self:ident, $m:ident => $e:expr) => {
        match $self {
            AnyMemory::Cached($m) => $e,
            AnyMemory::Flat($m) => $e,
            AnyMemory::Native($m) => $e,
        }
    };
}

impl Memory for AnyMemory {
    #[inline]
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        dispatch!(self, m => m.read_bytes(addr, buf))
    }
    #[inline]
    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        dispatch!(self, m => m.write_bytes(addr, data))
    }
    #[inline]
    fn load<T: Scalar>(&mut self, addr: u64) -> T {
        dispatch!(self, m => m.load(addr))
    }
    #[inline]
    fn store<T: Scalar>(&mut self, addr: u64, value: T) {
        dispatch!(self, m => m.store(addr, value))
    }
    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        dispatch!(self, m => m.alloc(size, align))
    }
    fn free(&mut self, addr: u64, size: u64) {
        dispatch!(self, m => m.free(addr, size))
    }
    fn flush_all(&mut self) {
        dispatch!(self, m => m.flush_all())
    }
    fn reset_stats(&mut self) {
        dispatch!(self, m => m.reset_stats())
    }
    fn report(&self) -> MemoryReport {
        dispatch!(self, m => m.report())
    }
    #[inline]
    fn compute(&mut self, instructions: u64) {
        dispatch!(self, m => m.compute(instructions))
    }
    #[inline]
    fn begin_independent(&mut self) {
        dispatch!(self, m => m.begin_independent())
    }
    #[inline]
    fn end_independent(&mut self) {
        dispatch!(self, m => m.end_independent())
    }
}

/// The operation a generated run repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpKind {
    /// Inserts of new random keys.
    Insert,
    /// Deletes of distinct existing keys.
    Delete,
    /// Point searches, half of them for present keys.
    Search,
}

impl OpKind {
    /// The three kinds, in the paper's order.
    pub const ALL: [OpKind; 3] = [OpKind::Insert, OpKind::Delete, OpKind::Search];

    /// `insert`, `delete` or `search`.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Insert => "insert",
            OpKind::Delete => "delete",
            OpKind::Search => "search",
        }
    }
}

impl FromStr for OpKind {
    type Err = String;
    fn from_str(s: &str) -> Result<OpKind, String> {
        OpKind::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| format!("unknown operation '{s}' (expected insert, delete or search)"))
    }
}

/// `n` distinct uniformly random keys, sorted.
pub fn random_keys(n: usize, rng: &mut impl Rng) -> Vec<u64> {
    let mut keys: Vec<u64> = Vec::with_capacity(n);
    while keys.len() < n {
        let missing = n - keys.len();
        keys.extend((0..missing).map(|_| rng.gen::<u64>()));
        keys.sort_unstable();
        keys.dedup();
    }
    keys
}

/// The loaded pairs: key `i` points at record `(i · P) mod n` for an odd `P` coprime
/// with `n`, so values are a scrambled permutation of the record heap.
pub fn loaded_pairs(keys: &[u64]) -> impl Iterator<Item = (u64, u64)> + '_ {
    let n = keys.len().max(1) as u64;
    let mut multiplier = (0x9E37_79B9_7F4A_7C15 % n) | 1;
    while gcd(multiplier, n) != 1 {
        multiplier += 2;
    }
    // Record `i · P mod n`, stepped by adding `P mod n` and taking n off when the sum
    // reaches it: no division per pair.
    let step = multiplier % n;
    let mut next = 0u64;
    keys.iter().map(move |&k| {
        let record = next;
        next = if next >= n - step { next - (n - step) } else { next + step };
        (k, record * RECORD_BYTES)
    })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The keys of `count` operations of one kind against the sorted `loaded` keys: new
/// distinct keys for inserts, distinct loaded keys for deletes, and alternately a
/// loaded and an absent key for searches. Fails when more deletes than keys are asked.
pub fn op_keys(op: OpKind, loaded: &[u64], count: usize, rng: &mut impl Rng) -> Result<Vec<u64>, String> {
    let present = |k: &u64| loaded.binary_search(k).is_ok();
    let mut chosen = HashSet::with_capacity(count);
    let mut keys = Vec::with_capacity(count);
    match op {
        OpKind::Insert => {
            while keys.len() < count {
                let k = rng.gen::<u64>();
                if !present(&k) && chosen.insert(k) {
                    keys.push(k);
                }
            }
        }
        OpKind::Delete => {
            if count > loaded.len() {
                return Err(format!("cannot delete {count} distinct keys from {} entries", loaded.len()));
            }
            while keys.len() < count {
                let k = loaded[rng.gen_range(0..loaded.len())];
                if chosen.insert(k) {
                    keys.push(k);
                }
            }
        }
        OpKind::Search => {
            while keys.len() < count {
                let k = if keys.len() % 2 == 0 && !loaded.is_empty() {
                    loaded[rng.gen_range(0..loaded.len())]
                } else {
                    rng.gen::<u64>()
                };
                if keys.len() % 2 == 0 || !present(&k) {
                    keys.push(k);
                }
            }
        }
    }
    Ok(keys)
}

/// What a measured run did and cost. `found` counts operations whose key was present
/// beforehand (search hits, deletes done, inserts that replaced a value).
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// Variant name.
    pub variant: String,
    /// Node size, cache lines.
    pub node_lines: u32,
    /// `cached`, `flat` or `native`.
    pub memory: String,
    /// Operations measured.
    pub ops: u64,
    /// Operations whose key was present beforehand.
    pub found: u64,
    /// PCM counters of the measured operations.
    #[serde(flatten)]
    pub pcm: PcmStats,
    /// Bits programmed per operation.
    pub bits_per_op: f64,
    /// Words written per operation.
    pub words_per_op: f64,
    /// Lines written per operation.
    pub lines_written_per_op: f64,
    /// CIDR PCM energy, pJ.
    pub energy_pj: u64,
    /// CIDR PCM access latency, cycles.
    pub pcm_latency_cycles: u64,
    /// The cache model's memory time, cycles (0 without a cache).
    pub estimated_cycles: u64,
    /// The CPU time model's time: instructions, DTLB misses and overlapped independent
    /// misses beside the memory accesses, cycles (0 without a cache).
    pub cpu_cycles: u64,
    /// Instructions the CPU time model counted (0 without a cache).
    pub instructions: u64,
    /// DTLB misses (0 without a cache).
    pub dtlb_misses: u64,
    /// Keys in the tree afterwards.
    pub entries_after: u64,
    /// Tree levels afterwards.
    pub height: u32,
}

/// One operation of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Insert or replace.
    Insert(u64, u64),
    /// Delete.
    Delete(u64),
    /// Point get.
    Get(u64),
    /// Count of keys in `[lo, hi]`.
    Scan(u64, u64),
}

/// The answer of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Insert or delete: whether the key was present.
    Changed(bool),
    /// Get: the value, if present.
    Value(Option<u64>),
    /// Scan: keys in range.
    Count(u64),
}

/// Runs one operation.
pub fn apply<M: Memory>(tree: &mut BTree<M>, op: Op) -> Result<Answer, BTreeError> {
    Ok(match op {
        Op::Insert(k, v) => Answer::Changed(tree.insert(k, v)?.is_some()),
        Op::Delete(k) => Answer::Changed(tree.delete(k).is_some()),
        Op::Get(k) => Answer::Value(tree.get(k)),
        Op::Scan(lo, hi) => Answer::Count(tree.scan(lo, hi).len() as u64),
    })
}

/// Measures `ops` on a loaded tree: flushes the cache and resets the counters first,
/// flushes again at the end so every dirty line is counted, and returns the report
/// with each operation's answer.
pub fn measure<M: Memory>(
    tree: &mut BTree<M>,
    ops: impl IntoIterator<Item = Op>,
) -> Result<(RunReport, Vec<Answer>), BTreeError> {
    tree.memory_mut().flush_all();
    tree.memory_mut().reset_stats();
    let mut answers = Vec::new();
    for op in ops {
        nvmdb_cancel::check()?;
        answers.push(apply(tree, op)?);
    }
    tree.memory_mut().flush_all();
    let found = answers
        .iter()
        .filter(|a| matches!(a, Answer::Changed(true) | Answer::Value(Some(_)) | Answer::Count(1..)))
        .count() as u64;
    Ok((report(tree, answers.len() as u64, found), answers))
}

fn report<M: Memory>(tree: &BTree<M>, ops: u64, found: u64) -> RunReport {
    RunReport::of(
        tree.variant().name().into(),
        tree.node_lines(),
        ops,
        found,
        tree.len(),
        tree.height(),
        &tree.memory().report(),
    )
}

impl RunReport {
    fn of(
        variant: String,
        node_lines: u32,
        ops: u64,
        found: u64,
        entries_after: u64,
        height: u32,
        memory: &MemoryReport,
    ) -> RunReport {
        let per_op = |v: u64| if ops == 0 { 0.0 } else { v as f64 / ops as f64 };
        RunReport {
            variant,
            node_lines,
            memory: memory.kind.clone(),
            ops,
            found,
            pcm: memory.pcm,
            bits_per_op: per_op(memory.pcm.bits_written),
            words_per_op: per_op(memory.pcm.words_written),
            lines_written_per_op: per_op(memory.pcm.lines_written),
            energy_pj: memory.energy_pj(),
            pcm_latency_cycles: memory.pcm_latency_cycles(),
            estimated_cycles: memory.estimated_cycles,
            cpu_cycles: memory.cpu.cycles,
            instructions: memory.cpu.instructions,
            dtlb_misses: memory.cpu.dtlb_misses,
            entries_after,
            height,
        }
    }

    /// The same run with every memory figure taken from `memory`: for one simulation
    /// timed at several T_w, the report at another T_w
    /// ([`CachedMemory::report_at_t_w`](nvmdb_memory::CachedMemory::report_at_t_w)).
    pub fn with_memory(&self, memory: &MemoryReport) -> RunReport {
        RunReport::of(
            self.variant.clone(),
            self.node_lines,
            self.ops,
            self.found,
            self.entries_after,
            self.height,
            memory,
        )
    }
}

/// Turns operation keys into operations; inserted keys point at new records numbered
/// from `first_record`.
pub fn ops_of(op: OpKind, keys: &[u64], first_record: u64) -> impl Iterator<Item = Op> + '_ {
    keys.iter().enumerate().map(move |(i, &k)| match op {
        OpKind::Insert => Op::Insert(k, (first_record + i as u64) * RECORD_BYTES),
        OpKind::Delete => Op::Delete(k),
        OpKind::Search => Op::Get(k),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// The loaded pairs' records, stepped by addition, are `i · P mod n` as computed
    /// with a division per pair, for counts whose multiplier needs its search (and so may
    /// exceed n) or not.
    #[test]
    fn loaded_records_are_the_multiples_of_the_multiplier() {
        // At 13 pairs the multiplier is 15, above n.
        for n in [1usize, 2, 3, 5, 7, 13, 64, 1000, 4095, 4096, 65_537, 250_000] {
            let keys: Vec<u64> = (0..n as u64).collect();
            let nn = n as u64;
            let mut multiplier = (0x9E37_79B9_7F4A_7C15 % nn) | 1;
            while gcd(multiplier, nn) != 1 {
                multiplier += 2;
            }
            for (i, (k, v)) in loaded_pairs(&keys).enumerate() {
                let record = u64::try_from(i as u128 * u128::from(multiplier) % u128::from(nn)).unwrap();
                assert_eq!((k, v), (i as u64, record * RECORD_BYTES), "n {n}, pair {i}");
            }
        }
    }

    #[test]
    fn generated_keys_have_the_promised_shape() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let loaded = random_keys(5000, &mut rng);
        assert_eq!(loaded.len(), 5000);
        assert!(loaded.windows(2).all(|w| w[0] < w[1]));
        let present = |k: &u64| loaded.binary_search(k).is_ok();
        let inserts = op_keys(OpKind::Insert, &loaded, 1000, &mut rng).unwrap();
        assert!(inserts.iter().all(|k| !present(k)));
        assert_eq!(inserts.iter().collect::<HashSet<_>>().len(), 1000);
        let deletes = op_keys(OpKind::Delete, &loaded, 1000, &mut rng).unwrap();
        assert!(deletes.iter().all(present));
        assert_eq!(deletes.iter().collect::<HashSet<_>>().len(), 1000);
        let searches = op_keys(OpKind::Search, &loaded, 1000, &mut rng).unwrap();
        assert_eq!(searches.iter().filter(|k| present(k)).count(), 500);
        assert!(op_keys(OpKind::Delete, &loaded, 5001, &mut rng).is_err());
        // Loaded values are distinct record pointers.
        let values: HashSet<u64> = loaded_pairs(&loaded).map(|(_, v)| v).collect();
        assert_eq!(values.len(), 5000);
        assert!(values.iter().all(|v| v % RECORD_BYTES == 0 && *v < 5000 * RECORD_BYTES));
    }
}
