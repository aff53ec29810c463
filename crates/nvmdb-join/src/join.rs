//! The hash joins of CIDR 2011 (seed 001, Algorithms 1–3), which are also the thesis's
//! traditional and modified joins (seed 000, Chapter 4, Algorithms 1–4).
//!
//! - [`Algorithm::Simple`]: build a chained hash table on all of R, probe it with S.
//! - [`Algorithm::CachePartitioning`]: copy R and S into P partitions, then join each
//!   pair of partitions with a cache-resident hash table. In the row layout whole
//!   records are copied; in the column layout (thesis Algorithm 3) only the join column
//!   is copied, as (value, tuple ID) pairs.
//! - [`Algorithm::VirtualPartitioning`]: per-partition lists of record IDs (CIDR: 2-byte
//!   deltas; thesis: 4-byte IDs), then join each pair of partitions reading the records
//!   in place.
//!
//! A match reads every column of both records ("generate join results"); the results
//! themselves are consumed in the CPU (counted and checksummed), as in the paper.
//!
//! Every algorithm declares the same instructions per step to the CPU time model
//! (`instructions.rs`): a loop iteration and a hash per record scanned, built or
//! probed, a partition choice and an append per record partitioned, a step per chain
//! entry, a compare per candidate, a move per word copied or read at a match, and an
//! emit per result.

use nvmdb_device::index;
use nvmdb_memory::{Memory, MemoryError, MemoryReport};
use serde::{Deserialize, Serialize};

use crate::hash_table::{hash_key, partition_of, HashTable, METADATA_BYTES_PER_RECORD};
use crate::idlist::{ChunkedStream, IdEncoding, IdList};
use crate::instructions::{self, words, EMIT, HASH, KEY_COMPARE, LOOP, PARTITION};
use crate::relation::{fold_bytes, read_uint, with_record_buffer, Layout, StoredRelation};

/// The three algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// CIDR Algorithm 1.
    Simple,
    /// CIDR Algorithm 2; the thesis's "traditional" join.
    CachePartitioning,
    /// CIDR Algorithm 3; the thesis's "modified" join.
    VirtualPartitioning,
}

impl Algorithm {
    /// All three, in the paper's order.
    pub const ALL: [Algorithm; 3] = [Algorithm::Simple, Algorithm::CachePartitioning, Algorithm::VirtualPartitioning];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Simple => "simple",
            Algorithm::CachePartitioning => "cache-partitioning",
            Algorithm::VirtualPartitioning => "virtual-partitioning",
        }
    }
}

/// How to run a join.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinOptions {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Cache capacity C used to choose the number of partitions, bytes.
    pub cache_bytes: u64,
    /// Encoding of virtual partitioning's ID lists.
    pub id_encoding: IdEncoding,
    /// Keep every `(r_row, s_row)` pair (otherwise only count them).
    pub collect_pairs: bool,
}

impl JoinOptions {
    /// The CIDR 2011 set-up: C = 8 MB (the L3 of Table 5), delta-encoded ID lists.
    pub fn cidr2011(algorithm: Algorithm) -> JoinOptions {
        JoinOptions { algorithm, cache_bytes: 8 << 20, id_encoding: IdEncoding::Delta16, collect_pairs: false }
    }
}

/// What a join produced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinOutput {
    /// Matching pairs.
    pub matches: u64,
    /// Partitions used (1 for the simple hash join).
    pub partitions: u64,
    /// Order-independent checksum of the bytes of every result record pair.
    pub checksum: u64,
    /// `(r_row, s_row)` per match when collected, in no particular order.
    pub pairs: Vec<(u64, u64)>,
}

impl JoinOutput {
    fn emit(&mut self, collect: bool, r_row: u64, s_row: u64, r_sum: u64, s_sum: u64) {
        self.matches += 1;
        self.checksum = self.checksum.wrapping_add(r_sum.rotate_left(17) ^ s_sum);
        if collect {
            self.pairs.push((r_row, s_row));
        }
    }
}

/// Partitions for cache partitioning (CIDR Algorithm 2, line 2):
/// `P = ⌈(M_R·L_R + M_S·L_S + htsize) / C⌉` with L the bytes copied per record.
pub fn cache_partitions(m_r: u64, l_r: u64, m_s: u64, l_s: u64, cache_bytes: u64) -> u64 {
    let htsize = m_r * METADATA_BYTES_PER_RECORD;
    (m_r * l_r + m_s * l_s + htsize).div_ceil(cache_bytes).max(1)
}

/// Partitions for virtual partitioning (CIDR Algorithm 3, line 2):
/// `P = ⌈((M_R + M_S)·id + M_R(L_R − 1 + L) + M_S(L_S − 1 + L) + htsize) / C⌉`, with `id`
/// the bytes per list entry (2 in the paper) and L = 64 B lines.
pub fn virtual_partitions(m_r: u64, l_r: u64, m_s: u64, l_s: u64, id_bytes: u64, cache_bytes: u64) -> u64 {
    let htsize = m_r * METADATA_BYTES_PER_RECORD;
    let line = 64;
    let bytes = (m_r + m_s) * id_bytes + m_r * (l_r - 1 + line) + m_s * (l_s - 1 + line) + htsize;
    bytes.div_ceil(cache_bytes).max(1)
}

/// Rows a join phase runs between two checks for a stop.
const CHECK_ROWS: u64 = 1 << 16;

/// A stop asked for ([`nvmdb_cancel`]) ends a join, or the generation of its relations,
/// with [`MemoryError::Interrupted`] at its next check: before each phase and partition,
/// and every [`CHECK_ROWS`] rows of a phase.
pub(crate) fn check_at(row: u64) -> Result<(), MemoryError> {
    if row.is_multiple_of(CHECK_ROWS) {
        nvmdb_cancel::check()?;
    }
    Ok(())
}

/// Joins `r` (build) with `s` (probe) on their key columns; a stop asked for ends it at
/// its next check ([`check_at`]).
pub fn hash_join<M: Memory>(
    mem: &mut M,
    r: &StoredRelation,
    s: &StoredRelation,
    options: &JoinOptions,
) -> Result<JoinOutput, MemoryError> {
    match options.algorithm {
        Algorithm::Simple => simple(mem, r, s, options.collect_pairs),
        Algorithm::CachePartitioning => cache_partitioning(mem, r, s, options),
        Algorithm::VirtualPartitioning => virtual_partitioning(mem, r, s, options),
    }
}

/// A join measured from clean counters: counters are reset before, every dirty line is
/// written back after, so the report holds all the join's writes.
pub fn measured_join<M: Memory>(
    mem: &mut M,
    r: &StoredRelation,
    s: &StoredRelation,
    options: &JoinOptions,
) -> Result<(JoinOutput, MemoryReport), MemoryError> {
    mem.flush_all();
    mem.reset_stats();
    let output = hash_join(mem, r, s, options)?;
    mem.flush_all();
    Ok((output, mem.report()))
}

/// Probes `table` for S row `s_row` with key `key` against R rows stored in place.
#[inline]
fn probe_in_place<M: Memory>(
    mem: &mut M,
    table: &HashTable,
    (r, s): (&StoredRelation, &StoredRelation),
    s_row: u64,
    key: u64,
    collect: bool,
    out: &mut JoinOutput,
) -> Result<(), MemoryError> {
    table.probe(mem, hash_key(key), |mem, r_row| {
        mem.compute(KEY_COMPARE);
        if r.read_key(mem, r_row) == key {
            // Both records' addresses are known: their lines overlap.
            mem.begin_independent();
            let r_sum = r.read_record(mem, r_row);
            let s_sum = s.read_record(mem, s_row);
            mem.end_independent();
            mem.compute(EMIT);
            out.emit(collect, r_row, s_row, r_sum, s_sum);
        }
    })?;
    Ok(())
}

fn simple<M: Memory>(
    mem: &mut M,
    r: &StoredRelation,
    s: &StoredRelation,
    collect: bool,
) -> Result<JoinOutput, MemoryError> {
    let mut table = HashTable::allocate(mem, r.rows())?;
    table.reset(mem, r.rows());
    for i in 0..r.rows() {
        check_at(i)?;
        mem.compute(LOOP + HASH);
        let key = r.read_key(mem, i);
        table.insert(mem, hash_key(key), i);
    }
    let mut out = JoinOutput { partitions: 1, ..JoinOutput::default() };
    for j in 0..s.rows() {
        check_at(j)?;
        mem.compute(LOOP + HASH);
        let key = s.read_key(mem, j);
        probe_in_place(mem, &table, (r, s), j, key, collect, &mut out)?;
    }
    table.free(mem);
    Ok(out)
}

fn virtual_partitioning<M: Memory>(
    mem: &mut M,
    r: &StoredRelation,
    s: &StoredRelation,
    options: &JoinOptions,
) -> Result<JoinOutput, MemoryError> {
    let id_bytes = match options.id_encoding {
        IdEncoding::Delta16 => 2,
        IdEncoding::Plain32 => 4,
    };
    let partitions =
        virtual_partitions(r.rows(), r.record_bytes(), s.rows(), s.record_bytes(), id_bytes, options.cache_bytes);
    let r_lists = partition_ids(mem, r, partitions, options.id_encoding)?;
    let s_lists = partition_ids(mem, s, partitions, options.id_encoding)?;
    let largest = r_lists.iter().map(IdList::len).max().unwrap_or(0);
    let mut table = HashTable::allocate(mem, largest)?;
    let mut out = JoinOutput { partitions, ..JoinOutput::default() };
    for (r_list, s_list) in r_lists.iter().zip(&s_lists) {
        nvmdb_cancel::check()?;
        table.reset(mem, r_list.len());
        r_list.for_each(mem, |mem, i| {
            mem.compute(HASH);
            let key = r.read_key(mem, i);
            table.insert(mem, hash_key(key), i);
            Ok::<(), MemoryError>(())
        })?;
        s_list.for_each(mem, |mem, j| {
            mem.compute(HASH);
            let key = s.read_key(mem, j);
            probe_in_place(mem, &table, (r, s), j, key, options.collect_pairs, &mut out)
        })?;
    }
    table.free(mem);
    for list in r_lists.into_iter().chain(s_lists) {
        list.free(mem);
    }
    Ok(out)
}

/// Virtual partition phase of one relation: reads each key, appends the ID to its
/// partition's list.
fn partition_ids<M: Memory>(
    mem: &mut M,
    relation: &StoredRelation,
    partitions: u64,
    encoding: IdEncoding,
) -> Result<Vec<IdList>, MemoryError> {
    let mut lists = vec![IdList::new(encoding); index(partitions)];
    for i in 0..relation.rows() {
        check_at(i)?;
        mem.compute(LOOP + HASH + PARTITION);
        let p = partition_of(hash_key(relation.read_key(mem, i)), partitions);
        lists[index(p)].push(mem, i)?;
    }
    Ok(lists)
}

/// One relation physically partitioned: per partition, a stream of copied entries, and
/// (row layout) the source row of each entry.
///
/// In the row layout an entry is the whole record; the source rows are kept outside
/// simulated memory only to report `(r_row, s_row)` pairs (a real engine would emit the
/// record contents, which the copy holds). In the column layout an entry is
/// `{key: u64, tuple_id: u64}` and the tuple ID is read from simulated memory.
#[derive(Debug)]
struct Partitioned {
    streams: Vec<ChunkedStream>,
    source_rows: Vec<Vec<u64>>,
    entry_bytes: u64,
    key_offset: u64,
    key_width: u32,
    layout: Layout,
}

impl Partitioned {
    fn entry_bytes(relation: &StoredRelation) -> u64 {
        match relation.layout() {
            Layout::Row => relation.record_bytes(),
            Layout::Column => 16,
        }
    }

    /// The partition phase of cache partitioning for one relation.
    fn build<M: Memory>(mem: &mut M, relation: &StoredRelation, partitions: u64) -> Result<Partitioned, MemoryError> {
        let entry_bytes = Partitioned::entry_bytes(relation);
        let (key_offset, key_width) = match relation.layout() {
            Layout::Row => {
                (relation.column_addr(0, relation.key_column()) - relation.column_addr(0, 0), relation.key_width())
            }
            Layout::Column => (0, 8),
        };
        let mut streams = vec![ChunkedStream::new(entry_bytes); index(partitions)];
        let mut source_rows = vec![Vec::new(); index(partitions)];
        let mut buf = vec![0u8; index(entry_bytes)];
        for i in 0..relation.rows() {
            check_at(i)?;
            mem.compute(LOOP + HASH + PARTITION + instructions::APPEND + words(entry_bytes));
            let key = match relation.layout() {
                Layout::Row => {
                    // The record's lines overlap.
                    mem.begin_independent();
                    mem.read_bytes(relation.column_addr(i, 0), &mut buf);
                    mem.end_independent();
                    let mut k = [0u8; 8];
                    let at = index(key_offset);
                    k[..key_width as usize].copy_from_slice(&buf[at..at + key_width as usize]);
                    u64::from_le_bytes(k)
                }
                Layout::Column => {
                    let key = relation.read_key(mem, i);
                    buf[..8].copy_from_slice(&key.to_le_bytes());
                    buf[8..].copy_from_slice(&i.to_le_bytes());
                    key
                }
            };
            let p = index(partition_of(hash_key(key), partitions));
            let addr = streams[p].push(mem)?;
            // The copy's lines overlap; its address waited for the key.
            mem.begin_independent();
            mem.write_bytes(addr, &buf);
            mem.end_independent();
            if relation.layout() == Layout::Row {
                source_rows[p].push(i);
            }
        }
        Ok(Partitioned { streams, source_rows, entry_bytes, key_offset, key_width, layout: relation.layout() })
    }

    fn key<M: Memory>(&self, mem: &mut M, p: usize, i: u64) -> u64 {
        read_uint(mem, self.streams[p].addr(i) + self.key_offset, self.key_width)
    }

    /// Reads the record behind entry `i` of partition `p`: the copy (row layout) or the
    /// original columns through the tuple ID (column layout). Returns (row, checksum).
    fn record<M: Memory>(&self, mem: &mut M, relation: &StoredRelation, p: usize, i: u64) -> (u64, u64) {
        let addr = self.streams[p].addr(i);
        match self.layout {
            Layout::Row => {
                mem.compute(words(self.entry_bytes));
                let sum = with_record_buffer(index(self.entry_bytes), |bytes| {
                    mem.read_bytes(addr, bytes);
                    fold_bytes(0, bytes)
                });
                (self.source_rows[p][index(i)], sum)
            }
            Layout::Column => {
                let row = mem.load::<u64>(addr + 8);
                (row, relation.read_record(mem, row))
            }
        }
    }

    fn free<M: Memory>(self, mem: &mut M) {
        for stream in self.streams {
            stream.free(mem);
        }
    }
}

fn cache_partitioning<M: Memory>(
    mem: &mut M,
    r: &StoredRelation,
    s: &StoredRelation,
    options: &JoinOptions,
) -> Result<JoinOutput, MemoryError> {
    let partitions = cache_partitions(
        r.rows(),
        Partitioned::entry_bytes(r),
        s.rows(),
        Partitioned::entry_bytes(s),
        options.cache_bytes,
    );
    let r_parts = Partitioned::build(mem, r, partitions)?;
    let s_parts = Partitioned::build(mem, s, partitions)?;
    let largest = r_parts.streams.iter().map(ChunkedStream::len).max().unwrap_or(0);
    let mut table = HashTable::allocate(mem, largest)?;
    let mut out = JoinOutput { partitions, ..JoinOutput::default() };
    for p in 0..index(partitions) {
        nvmdb_cancel::check()?;
        table.reset(mem, r_parts.streams[p].len());
        for i in 0..r_parts.streams[p].len() {
            mem.compute(LOOP + HASH);
            let key = r_parts.key(mem, p, i);
            table.insert(mem, hash_key(key), i);
        }
        // Row layout: both copies' addresses are known at a match, so their lines
        // overlap. Column layout: each record waits for its tuple ID.
        let overlap = r_parts.layout == Layout::Row && s_parts.layout == Layout::Row;
        for j in 0..s_parts.streams[p].len() {
            mem.compute(LOOP + HASH);
            let key = s_parts.key(mem, p, j);
            table.probe(mem, hash_key(key), |mem, i| {
                mem.compute(KEY_COMPARE);
                if r_parts.key(mem, p, i) == key {
                    if overlap {
                        mem.begin_independent();
                    }
                    let (r_row, r_sum) = r_parts.record(mem, r, p, i);
                    let (s_row, s_sum) = s_parts.record(mem, s, p, j);
                    if overlap {
                        mem.end_independent();
                    }
                    mem.compute(EMIT);
                    out.emit(options.collect_pairs, r_row, s_row, r_sum, s_sum);
                }
            })?;
        }
    }
    table.free(mem);
    r_parts.free(mem);
    s_parts.free(mem);
    Ok(out)
}
