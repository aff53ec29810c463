//! Synthetic relations of CIDR 2011 Section 4.3 (seed 001): R of a given size with
//! unique join keys, S with `match_per_r` records per R record (a primary-foreign-key
//! join: every S record matches exactly one R record), both of the same record size,
//! S in random order. Records are an 8 B key followed by random payload bytes.

use nvmdb_memory::{CacheConfig, Memory, MemoryError};
use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::estimate::{join_memory_bytes, Shape};
use crate::relation::{Layout, StoredRelation};
use crate::JoinOptions;

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
/// with the cache hierarchy `cache` or none (flat): the join over them
/// ([`crate::estimate::join_memory_bytes`]), the shuffled match list (4 B an S row) while
/// S is generated, and the pairs when collected (every S row matches one R row; 16 B each
/// in a vector grown by doubling).
///
/// `tests/memory_estimate.rs` checks it against the measured peak.
pub fn estimated_memory_bytes(spec: &SynthSpec, options: &JoinOptions, cache: Option<&CacheConfig>) -> u64 {
    let widths = record_widths(spec.record_bytes);
    let (r, s) = (Shape { rows: spec.r_rows(), widths: &widths }, Shape { rows: spec.s_rows(), widths: &widths });
    let pairs = if options.collect_pairs { spec.s_rows().saturating_mul(32) } else { 0 };
    join_memory_bytes(&r, &s, spec.layout, options, cache)
        .saturating_add(spec.s_rows().saturating_mul(4))
        .saturating_add(pairs)
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
