//! A chained hash table of (hash code, record reference) entries in simulated memory
//! (CIDR 2011, seed 001, Section 4.3).
//!
//! Layout: a bucket array of 8 B head pointers (0 is null) and an entry pool of 24 B
//! entries `{hash: u64, record: u64, next: u64}` filled in insertion order. An insertion
//! writes one entry and one bucket head: 4 words over about 1.4 lines.

use nvmdb_cancel::Interrupted;
use nvmdb_device::index;
use nvmdb_memory::{Memory, MemoryError};

use crate::instructions;

/// Bytes per entry.
pub const ENTRY_BYTES: u64 = ENTRY_LEN as u64;
const ENTRY_LEN: usize = 24;
/// Bytes of hash-table metadata per inserted record: an entry plus one bucket slot (the
/// bucket array has up to one slot per record). This is `hash_table_per_entry_metadata_size`
/// of CIDR Algorithms 2 and 3.
pub const METADATA_BYTES_PER_RECORD: u64 = ENTRY_BYTES + 8;

/// The 64-bit finaliser of MurmurHash3: a bijective mix of the key.
#[inline]
pub fn hash_key(key: u64) -> u64 {
    let mut h = key;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The partition of a hash code among `partitions`, from its high 32 bits (buckets use
/// the low bits, so the two choices are independent).
#[inline]
pub fn partition_of(hash: u64, partitions: u64) -> u64 {
    ((hash >> 32) * partitions) >> 32
}

/// A chained hash table with room for up to `capacity` records, reusable (one partition
/// after another) through [`HashTable::reset`].
#[derive(Debug)]
pub struct HashTable {
    buckets: u64,
    bucket_capacity: u64,
    entries: u64,
    capacity: u64,
    mask: u64,
    len: u64,
    /// Bucket slots `[0, dirty)` may be non-null.
    dirty: u64,
}

impl HashTable {
    /// Allocates a table for up to `capacity` records. The heap may hand out memory freed
    /// by an earlier user, so the first [`HashTable::reset`] nulls every bucket slot
    /// (over fresh memory this writes zeros over zeros: lines, but no bits, are written).
    pub fn allocate<M: Memory>(mem: &mut M, capacity: u64) -> Result<HashTable, MemoryError> {
        let capacity = capacity.max(1);
        let bucket_capacity = capacity.next_power_of_two();
        let buckets = mem.alloc(bucket_capacity * 8, 64)?;
        let entries = mem.alloc(capacity * ENTRY_BYTES, 64)?;
        Ok(HashTable {
            buckets,
            bucket_capacity,
            entries,
            capacity,
            mask: bucket_capacity - 1,
            len: 0,
            dirty: bucket_capacity,
        })
    }

    /// Empties the table for `records` upcoming insertions (at most the capacity): nulls
    /// the bucket slots the previous use touched and sizes the bucket array to
    /// `records.next_power_of_two()`.
    pub fn reset<M: Memory>(&mut self, mem: &mut M, records: u64) {
        assert!(records <= self.capacity, "partition of {records} records exceeds the table's {}", self.capacity);
        let zeros = [0u8; 512];
        let mut at = 0u64;
        // The zeroed lines' addresses depend on nothing loaded.
        mem.begin_independent();
        while at < self.dirty * 8 {
            let n = (self.dirty * 8 - at).min(zeros.len() as u64);
            mem.compute(instructions::LOOP);
            mem.write_bytes(self.buckets + at, &zeros[..index(n)]);
            at += n;
        }
        mem.end_independent();
        self.mask = records.max(1).next_power_of_two() - 1;
        self.dirty = 0;
        self.len = 0;
    }

    /// Inserts `(hash, record)`.
    #[inline]
    pub fn insert<M: Memory>(&mut self, mem: &mut M, hash: u64, record: u64) {
        assert!(self.len < self.capacity, "hash table full");
        let slot = hash & self.mask;
        self.dirty = self.dirty.max(slot + 1);
        let bucket = self.buckets + slot * 8;
        let entry = self.entries + self.len * ENTRY_BYTES;
        self.len += 1;
        mem.compute(instructions::INSERT);
        // The bucket and entry addresses come from the hash and the count, not from the
        // head loaded: the three accesses overlap.
        mem.begin_independent();
        let head = mem.load::<u64>(bucket);
        let mut bytes = [0u8; ENTRY_LEN];
        bytes[..8].copy_from_slice(&hash.to_le_bytes());
        bytes[8..16].copy_from_slice(&record.to_le_bytes());
        bytes[16..].copy_from_slice(&head.to_le_bytes());
        mem.write_bytes(entry, &bytes);
        mem.store::<u64>(bucket, entry);
        mem.end_independent();
    }

    /// Calls `f` with every record inserted under `hash`, most recent first. Each chain
    /// entry waits for the one before (it holds the entry's address). A chain can hold
    /// every row of R (one key), so a stop asked for ([`nvmdb_cancel`]) ends the walk at
    /// its next entry.
    #[inline]
    pub fn probe<M: Memory>(&self, mem: &mut M, hash: u64, mut f: impl FnMut(&mut M, u64)) -> Result<(), Interrupted> {
        let mut entry = mem.load::<u64>(self.buckets + (hash & self.mask) * 8);
        while entry != 0 {
            if nvmdb_cancel::is_cancelled() {
                return Err(Interrupted);
            }
            mem.compute(instructions::CHAIN_STEP);
            if mem.load::<u64>(entry) == hash {
                let record = mem.load::<u64>(entry + 8);
                f(mem, record);
            }
            entry = mem.load::<u64>(entry + 16);
        }
        Ok(())
    }

    /// Returns the table's memory.
    pub fn free<M: Memory>(self, mem: &mut M) {
        mem.free(self.buckets, self.bucket_capacity * 8);
        mem.free(self.entries, self.capacity * ENTRY_BYTES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvmdb_memory::NativeMemory;

    #[test]
    fn chains_hold_every_record_and_reset_empties() {
        let mut mem = NativeMemory::new(1 << 20);
        let mut table = HashTable::allocate(&mut mem, 8).unwrap();
        table.reset(&mut mem, 8);
        for (i, key) in [5u64, 9, 5, 12, 5].into_iter().enumerate() {
            table.insert(&mut mem, hash_key(key), i as u64);
        }
        let mut found = Vec::new();
        table.probe(&mut mem, hash_key(5), |_, r| found.push(r)).unwrap();
        assert_eq!(found, vec![4, 2, 0]);
        table.reset(&mut mem, 2);
        let mut after = 0;
        table.probe(&mut mem, hash_key(5), |_, _| after += 1).unwrap();
        assert_eq!(after, 0);
    }

    #[test]
    fn partitions_cover_the_range() {
        assert_eq!(partition_of(0, 7), 0);
        assert_eq!(partition_of(u64::MAX, 7), 6);
        assert!((0..1000u64).all(|k| partition_of(hash_key(k), 3) < 3));
    }
}
