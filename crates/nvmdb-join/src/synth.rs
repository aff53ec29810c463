//! Synthetic relations of CIDR 2011 Section 4.3 (seed 001): R of a given size with
//! unique join keys, S with `match_per_r` records per R record (a primary-foreign-key
//! join: every S record matches exactly one R record), both of the same record size,
//! S in random order. Records are an 8 B key followed by random payload bytes.

use nvmdb_device::pcm::LINE_HOST_BYTES;
use nvmdb_memory::{CacheConfig, Memory, MemoryError};
use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::hash_table::ENTRY_BYTES;
use crate::idlist::CHUNK_BYTES;
use crate::join::{cache_partitions, virtual_partitions};
use crate::relation::{Layout, StoredRelation};
use crate::{Algorithm, IdEncoding, JoinOptions};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SynthSpec {
    /// Bytes of R (M_R = r_bytes / record_bytes).
    pub r_bytes: u64,
    /// Bytes per record of both relations (at least 8).
    pub record_bytes: u64,
    /// S records per R record.
    pub match_per_r: u64,
    /// Layout of both relations.
    pub layout: Layout,
}

impl SynthSpec {
    /// Records in R.
    pub fn r_rows(&self) -> u64 {
        self.r_bytes / self.record_bytes
    }

    /// Records in S.
    pub fn s_rows(&self) -> u64 {
        self.r_rows() * self.match_per_r
    }
}

/// Host memory a join of `spec`'s relations (as [`generate`] makes them, then
/// [`crate::measured_join`] with `options`) holds at most, bytes, in a memory over PCM,
/// with the cache hierarchy `cache` or none (flat), from the layout of what it allocates:
/// - simulated memory: both relations, the hash table (sized for R, or for the whole of R
///   in the partitioned joins, whose largest partition is not known in advance), and the
///   partitions' copies (cache partitioning) or ID lists (virtual partitioning, at most 3
///   units a delta-encoded ID) in [`CHUNK_BYTES`] chunks; each 64 B line of it a PCM line
///   record ([`LINE_HOST_BYTES`], allocated 64 lines at a time, a directory slot each)
///   and, cached, a byte image of it (in 1 MiB segments) and the hierarchy's tags
///   ([`CacheConfig::host_bytes`]);
/// - the wear counters' higher planes of the hash table's lines, the only ones whose words
///   are written more than once (see the comment at the sum);
/// - on the host: the shuffled match list (4 B an S row) while S is generated, cache
///   partitioning's source rows (row layout, 8 B an entry in doubling vectors: 24 B with
///   a growth's old half), and the pairs when collected.
///
/// `tests/memory_estimate.rs` checks it against the measured peak.
pub fn estimated_memory_bytes(spec: &SynthSpec, options: &JoinOptions, cache: Option<&CacheConfig>) -> u64 {
    let (r_rows, s_rows) = (spec.r_rows(), spec.s_rows());
    let widths = record_widths(spec.record_bytes);
    let aligned = |bytes: u64| bytes.max(1).next_multiple_of(64);
    let relation = |rows: u64| match spec.layout {
        Layout::Row => aligned(spec.record_bytes.saturating_mul(rows)),
        Layout::Column => widths.iter().map(|&w| aligned(u64::from(w).saturating_mul(rows))).sum(),
    };
    let table_rows = r_rows.max(1);
    let table = aligned(table_rows.next_power_of_two().saturating_mul(8))
        .saturating_add(aligned(table_rows.saturating_mul(ENTRY_BYTES)));
    let chunked = |rows: u64, item_bytes: u64, lists: u64| {
        rows.div_ceil(CHUNK_BYTES / item_bytes).saturating_add(lists).saturating_mul(CHUNK_BYTES)
    };
    // Cache partitioning copies whole records (row layout) or {key, tuple ID} (column).
    let copied = match spec.layout {
        Layout::Row => spec.record_bytes,
        Layout::Column => 16,
    };
    let (partitions, parts, host) = match options.algorithm {
        Algorithm::Simple => (1, 0, 0),
        Algorithm::CachePartitioning => {
            let p = cache_partitions(r_rows, copied, s_rows, copied, options.cache_bytes);
            let copies = chunked(r_rows, copied, p).saturating_add(chunked(s_rows, copied, p));
            let sources = if spec.layout == Layout::Row { r_rows.saturating_add(s_rows).saturating_mul(24) } else { 0 };
            (p, copies, sources.saturating_add(p.saturating_mul(2 * 32)))
        }
        Algorithm::VirtualPartitioning => {
            let (id_bytes, units) = match options.id_encoding {
                IdEncoding::Delta16 => (2, 3),
                IdEncoding::Plain32 => (4, 1),
            };
            let p =
                virtual_partitions(r_rows, spec.record_bytes, s_rows, spec.record_bytes, id_bytes, options.cache_bytes);
            // A delta-encoded ID takes one unit, or three after a gap of over 0xFFFE: in a
            // list of a relation's ascending IDs, at most one per 0xFFFF rows, and the first.
            let items = |rows: u64| {
                let escapes = rows.min(p.saturating_mul(rows / 0xFFFF + 1));
                rows.saturating_add(if units > 1 { escapes.saturating_mul(2) } else { 0 })
            };
            let lists = chunked(items(r_rows), id_bytes, p).saturating_add(chunked(items(s_rows), id_bytes, p));
            (p, lists, 0)
        }
    };
    let span = relation(r_rows).saturating_add(relation(s_rows)).saturating_add(table).saturating_add(parts);
    let chunk_lines = 64;
    let chunks = span.div_ceil(chunk_lines * 64);
    let lines = chunks.saturating_mul(chunk_lines);
    // A directory table of 1024 chunk slots (16 B each) per 1024 chunks.
    let directory = chunks.div_ceil(1024).saturating_mul(1024 * 16);
    let mut bytes = lines.saturating_mul(LINE_HOST_BYTES).saturating_add(directory);
    if let Some(cache) = cache {
        let image = span.div_ceil(1 << 20).saturating_mul(1 << 20);
        bytes = bytes.saturating_add(image).saturating_add(cache.host_bytes());
    }
    // Wear: a cell's counter passes 1 only where its word is written twice. An entry's
    // words are written once per partition that fills the slot; the bucket lines once per
    // insertion (its head) and per reset.
    let entry_lines = aligned(table_rows.saturating_mul(ENTRY_BYTES)) / 64;
    let entry_planes =
        entry_lines.saturating_mul(u64::from(partitions.saturating_add(1).next_power_of_two().trailing_zeros() - 1));
    let bucket_lines = aligned(table_rows.next_power_of_two().saturating_mul(8)) / 64;
    let bucket_writes = r_rows.saturating_add(partitions.saturating_mul(bucket_lines));
    let plane_bytes = nvmdb_device::wear::LANES as u64 * 8;
    bytes = bytes
        .saturating_add(entry_planes.saturating_mul(plane_bytes))
        .saturating_add(nvmdb_device::wear::higher_plane_bytes_bound(bucket_lines, bucket_writes));
    let pairs = if options.collect_pairs { s_rows.saturating_mul(32) } else { 0 };
    bytes.saturating_add(s_rows.saturating_mul(4)).saturating_add(host).saturating_add(pairs)
}

/// Columns of a record of `record_bytes`: the 8 B key, then 8 B payload columns, then
/// the remainder.
pub fn record_widths(record_bytes: u64) -> Vec<u32> {
    assert!(record_bytes >= 8, "records hold at least the 8 B key");
    let mut widths = vec![8u32];
    let mut rest = record_bytes - 8;
    while rest > 0 {
        let w = rest.min(8);
        widths.push(w as u32);
        rest -= w;
    }
    widths
}

/// Key of R row `i`: an odd-multiplier bijection, so keys are distinct and scattered.
fn key_of(i: u64, salt: u64) -> u64 {
    (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt
}

fn random_row(rng: &mut impl Rng, widths: &[u32], key: u64, row: &mut [u64]) {
    row[0] = key;
    for (value, &w) in row.iter_mut().zip(widths).skip(1) {
        let mask = if w == 8 { u64::MAX } else { (1u64 << (8 * w)) - 1 };
        *value = rng.gen::<u64>() & mask;
    }
}

/// Generates R and S in `mem` (counters are not reset); a stop asked for ends it at its
/// next check ([`crate::join::check_at`]).
pub fn generate<M: Memory>(
    mem: &mut M,
    spec: &SynthSpec,
    rng: &mut impl Rng,
) -> Result<(StoredRelation, StoredRelation), MemoryError> {
    let widths = record_widths(spec.record_bytes);
    let salt = rng.gen::<u64>();
    let r = StoredRelation::allocate(mem, spec.layout, &widths, 0, spec.r_rows())?;
    let mut row = vec![0u64; widths.len()];
    for i in 0..spec.r_rows() {
        crate::join::check_at(i)?;
        random_row(rng, &widths, key_of(i, salt), &mut row);
        r.write_row(mem, i, &row);
    }
    let mut matches: Vec<u32> = (0..spec.s_rows())
        .map(|j| u32::try_from(j % spec.r_rows().max(1)).expect("R has fewer than 2^32 rows"))
        .collect();
    matches.shuffle(rng);
    let s = StoredRelation::allocate(mem, spec.layout, &widths, 0, spec.s_rows())?;
    for (j, &i) in matches.iter().enumerate() {
        crate::join::check_at(j as u64)?;
        random_row(rng, &widths, key_of(u64::from(i), salt), &mut row);
        s.write_row(mem, j as u64, &row);
    }
    Ok((r, s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::join::{hash_join, Algorithm, JoinOptions};
    use nvmdb_memory::NativeMemory;
    use rand::SeedableRng;

    #[test]
    fn every_s_record_matches_once() {
        assert_eq!(record_widths(20), vec![8, 8, 4]);
        let mut mem = NativeMemory::new(1 << 26);
        let spec = SynthSpec { r_bytes: 20_000, record_bytes: 20, match_per_r: 3, layout: Layout::Row };
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let (r, s) = generate(&mut mem, &spec, &mut rng).unwrap();
        assert_eq!((r.rows(), s.rows()), (1000, 3000));
        let out = hash_join(&mut mem, &r, &s, &JoinOptions::cidr2011(Algorithm::Simple)).unwrap();
        assert_eq!(out.matches, 3000);
    }
}
