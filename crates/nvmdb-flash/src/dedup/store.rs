//! The fingerprint store of thesis 3.2.2, with its bytes really stored in simulated PCM
//! (storage mode).
//!
//! PCM layout (byte addresses):
//! - `[0, physical_pages · 20)`: the location → fingerprint table, 20 bytes per physical
//!   page (the reverse half of the bidirectional map).
//! - `[share_base, share_base + logical_pages · 20)`: the share map, 20 bytes per logical
//!   page: the identity of the physical page it last came to share by a deduplication hit
//!   (that page's own logical page `u32` and write sequence number `u64`, as its spare
//!   area says, which GC copies keep) and the sequence number of the hit (`u64`; 0 = none).
//!   Recovery maps a logical page to the page its slot names when the slot is newer than
//!   every flash record of the page.
//! - after it, 4 KB buckets. A fingerprint `f` (its first 8 bytes, little-endian) lives
//!   in segment `f mod N`; a segment is a list of buckets with disjoint fingerprint
//!   ranges, in ascending order; a bucket holds up to 170 sorted 24-byte entries
//!   ⟨fingerprint (20 B), location (4 B LE)⟩. A full bucket splits in two.
//!
//! A lookup range-checks the segment's buckets one after another against their smallest
//! and largest fingerprints (kept in the controller's bucket headers), then binary
//! searches the one bucket whose range holds the fingerprint, reading each probed entry
//! from PCM. Every fingerprint comparison is counted.
//!
//! Every PCM write passes through the FTL's [`PowerSwitch`]. The bucket headers are the
//! controller's, so after a power loss the buckets and the location table are rebuilt
//! ([`FingerprintStore::clear`], then inserts) from the live pages' contents in flash;
//! only the share map is read back.

use std::cmp::Ordering;

use nvmdb_device::pcm::{words_to_bytes, LINE_BYTES};
use nvmdb_device::{Pcm, PcmConfig, PcmStorageTiming, PowerSwitch};

use crate::layer::FlashError;

/// A 160-bit fingerprint (SHA-1, or a shorter content id zero-padded).
pub type Fingerprint = [u8; 20];

/// Bytes of one ⟨fingerprint, location⟩ entry.
pub const ENTRY_BYTES: u64 = 24;
/// Bytes of one bucket.
pub const BUCKET_BYTES: u64 = 4096;
/// Entries per bucket.
pub const BUCKET_ENTRIES: usize = (BUCKET_BYTES / ENTRY_BYTES) as usize;
/// Bytes per location-table slot.
pub const SLOT_BYTES: u64 = 20;
/// Bytes per share-map slot.
pub const SHARE_BYTES: u64 = 20;

/// A share-map slot: the shared page's identity (its own logical page and write sequence
/// number) and the hit's sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// The logical page the shared physical page was written for.
    pub owner: u32,
    /// Its write sequence number.
    pub owner_seq: u64,
    /// The hit's write sequence number.
    pub seq: u64,
}

/// Host bytes of one bucket's header in the controller.
pub const BUCKET_HEADER_BYTES: u64 = std::mem::size_of::<Bucket>() as u64;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    addr: u64,
    len: usize,
    min: Fingerprint,
    max: Fingerprint,
}

/// A fingerprint's place in the store.
#[derive(Debug, Clone, Copy)]
struct Slot {
    segment: usize,
    bucket: usize,
    index: usize,
    location: u32,
}

/// The fingerprint store.
#[derive(Debug, Clone)]
pub struct FingerprintStore {
    pcm: Pcm,
    segments: Vec<Vec<Bucket>>,
    free_buckets: Vec<u64>,
    next_bucket_addr: u64,
    share_base: u64,
    bucket_base: u64,
    entries: u64,
    /// Fingerprint comparisons made by every search: lookups, and the searches of
    /// removals and location moves.
    pub comparisons: u64,
}

impl FingerprintStore {
    /// A store for a flash of `physical_pages` holding `logical_pages`, with `bucket_mb`
    /// MiB of PCM for buckets.
    pub fn new(
        segments: u32,
        physical_pages: u64,
        logical_pages: u64,
        bucket_mb: u64,
        timing: PcmStorageTiming,
    ) -> Result<FingerprintStore, FlashError> {
        let table_bytes = (physical_pages * SLOT_BYTES).div_ceil(BUCKET_BYTES) * BUCKET_BYTES;
        let share_bytes = (logical_pages * SHARE_BYTES).div_ceil(BUCKET_BYTES) * BUCKET_BYTES;
        let bucket_base = table_bytes + share_bytes;
        let mut config = PcmConfig::new(bucket_base + bucket_mb.max(1) * (1 << 20));
        config.storage = timing;
        Ok(FingerprintStore {
            pcm: Pcm::new(config)?,
            segments: vec![Vec::new(); segments as usize],
            free_buckets: Vec::new(),
            next_bucket_addr: bucket_base,
            share_base: table_bytes,
            bucket_base,
            entries: 0,
            comparisons: 0,
        })
    }

    /// The PCM device (for its counters and wear).
    pub fn pcm(&self) -> &Pcm {
        &self.pcm
    }

    /// Zeroes the PCM counters and the comparison count.
    pub fn reset_stats(&mut self) {
        self.pcm.reset_stats();
        self.comparisons = 0;
    }

    /// Fingerprints stored.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Forgets every bucket (their headers are volatile): the store is empty, its PCM
    /// bytes left as they are, to be overwritten by later inserts.
    pub fn clear(&mut self) {
        self.segments.iter_mut().for_each(Vec::clear);
        self.free_buckets.clear();
        self.next_bucket_addr = self.bucket_base;
        self.entries = 0;
    }

    /// Writes `bytes` at `addr`, admitted by `power`.
    fn write(&mut self, power: &mut PowerSwitch, addr: u64, bytes: &[u8]) -> Result<u64, FlashError> {
        power.admit().map_err(FlashError::PowerCut)?;
        Ok(self.pcm.storage_write(addr, bytes)?)
    }

    /// Writes logical page `lpn`'s share-map slot. Returns the PCM time, ns.
    pub fn set_share(&mut self, power: &mut PowerSwitch, lpn: u32, share: Share) -> Result<u64, FlashError> {
        let mut bytes = [0u8; SHARE_BYTES as usize];
        bytes[..4].copy_from_slice(&share.owner.to_le_bytes());
        bytes[4..12].copy_from_slice(&share.owner_seq.to_le_bytes());
        bytes[12..].copy_from_slice(&share.seq.to_le_bytes());
        self.write(power, self.share_base + u64::from(lpn) * SHARE_BYTES, &bytes)
    }

    /// Reads logical page `lpn`'s share-map slot (`None` if it never shared); returns it and
    /// the PCM time, ns.
    pub fn share(&mut self, lpn: u32) -> Result<(Option<Share>, u64), FlashError> {
        let (bytes, ns) = self.read(self.share_base + u64::from(lpn) * SHARE_BYTES, SHARE_BYTES)?;
        let owner = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
        let owner_seq = u64::from_le_bytes(bytes[4..12].try_into().expect("8 bytes"));
        let seq = u64::from_le_bytes(bytes[12..].try_into().expect("8 bytes"));
        Ok(((seq != 0).then_some(Share { owner, owner_seq, seq }), ns))
    }

    fn segment_of(&self, fingerprint: &Fingerprint) -> usize {
        let head = u64::from_le_bytes(fingerprint[..8].try_into().expect("8 bytes"));
        (head % self.segments.len() as u64) as usize
    }

    fn read(&mut self, addr: u64, len: u64) -> Result<(Vec<u8>, u64), FlashError> {
        let mut buf = vec![0; len as usize];
        let ns = self.pcm.storage_read(addr, &mut buf)?;
        Ok((buf, ns))
    }

    fn read_entry(&mut self, bucket: &Bucket, index: usize) -> Result<((Fingerprint, u32), u64), FlashError> {
        let (bytes, ns) = self.read(bucket.addr + index as u64 * ENTRY_BYTES, ENTRY_BYTES)?;
        Ok((decode(&bytes), ns))
    }

    /// Finds a fingerprint: returns its slot (if stored) and the PCM time, ns.
    fn find(&mut self, fingerprint: &Fingerprint) -> Result<(Option<Slot>, u64), FlashError> {
        let segment = self.segment_of(fingerprint);
        let mut ns = 0;
        for b in 0..self.segments[segment].len() {
            let bucket = self.segments[segment][b];
            self.comparisons += 1;
            if *fingerprint < bucket.min {
                // Buckets are in ascending order: no later bucket can hold it.
                return Ok((None, ns));
            }
            self.comparisons += 1;
            if *fingerprint > bucket.max {
                continue;
            }
            let (mut lo, mut hi) = (0, bucket.len);
            while lo < hi {
                let mid = (lo + hi) / 2;
                let ((stored, location), t) = self.read_entry(&bucket, mid)?;
                ns += t;
                self.comparisons += 1;
                match stored.cmp(fingerprint) {
                    Ordering::Less => lo = mid + 1,
                    Ordering::Greater => hi = mid,
                    Ordering::Equal => return Ok((Some(Slot { segment, bucket: b, index: mid, location }), ns)),
                }
            }
            return Ok((None, ns));
        }
        Ok((None, ns))
    }

    /// Looks a fingerprint up: its location if stored, and the PCM time, ns.
    pub fn lookup(&mut self, fingerprint: &Fingerprint) -> Result<(Option<u32>, u64), FlashError> {
        let (slot, ns) = self.find(fingerprint)?;
        Ok((slot.map(|s| s.location), ns))
    }

    fn read_bucket(&mut self, bucket: &Bucket) -> Result<(Vec<(Fingerprint, u32)>, u64), FlashError> {
        let (bytes, ns) = self.read(bucket.addr, bucket.len as u64 * ENTRY_BYTES)?;
        Ok((bytes.chunks_exact(ENTRY_BYTES as usize).map(decode).collect(), ns))
    }

    /// Writes `entries[from..]` to a bucket at `addr`, clearing `clear` slots after them.
    fn write_entries(
        &mut self,
        power: &mut PowerSwitch,
        addr: u64,
        entries: &[(Fingerprint, u32)],
        from: usize,
        clear: usize,
    ) -> Result<u64, FlashError> {
        let mut bytes: Vec<u8> = entries[from..].iter().flat_map(encode).collect();
        bytes.resize(bytes.len() + clear * ENTRY_BYTES as usize, 0);
        if bytes.is_empty() {
            return Ok(0);
        }
        self.write(power, addr + from as u64 * ENTRY_BYTES, &bytes)
    }

    fn new_bucket(&mut self) -> Result<u64, FlashError> {
        if let Some(addr) = self.free_buckets.pop() {
            return Ok(addr);
        }
        let addr = self.next_bucket_addr;
        if addr + BUCKET_BYTES > self.pcm.config().capacity_bytes {
            return Err(FlashError::Full("fingerprint store PCM (raise dedup.pcm_mb)".into()));
        }
        self.next_bucket_addr += BUCKET_BYTES;
        Ok(addr)
    }

    /// Inserts a fingerprint that is not stored; returns the PCM time, ns.
    pub fn insert(
        &mut self,
        power: &mut PowerSwitch,
        fingerprint: Fingerprint,
        location: u32,
    ) -> Result<u64, FlashError> {
        let segment = self.segment_of(&fingerprint);
        if self.segments[segment].is_empty() {
            let addr = self.new_bucket()?;
            self.segments[segment].push(Bucket { addr, len: 0, min: fingerprint, max: fingerprint });
        }
        let buckets = &self.segments[segment];
        let b = buckets.iter().rposition(|bk| bk.min <= fingerprint).unwrap_or(0);
        let bucket = buckets[b];
        let (mut entries, mut ns) = self.read_bucket(&bucket)?;
        let at = entries.partition_point(|(f, _)| *f < fingerprint);
        assert!(!matches!(entries.get(at), Some((f, _)) if *f == fingerprint), "a fingerprint is stored once");
        entries.insert(at, (fingerprint, location));
        self.entries += 1;
        if entries.len() <= BUCKET_ENTRIES {
            ns += self.write_entries(power, bucket.addr, &entries, at, 0)?;
            self.segments[segment][b] = summarise(bucket.addr, &entries);
            return Ok(ns);
        }
        // Split: the upper half moves to a new bucket right after this one.
        let upper = entries.split_off(entries.len() / 2);
        let addr = self.new_bucket()?;
        ns += self.write_entries(power, addr, &upper, 0, 0)?;
        let from = at.min(entries.len());
        // The bucket held `entries.len() + upper.len() - 1` entries before; clear the rest.
        ns += self.write_entries(power, bucket.addr, &entries, from, upper.len() - 1)?;
        self.segments[segment][b] = summarise(bucket.addr, &entries);
        self.segments[segment].insert(b + 1, summarise(addr, &upper));
        Ok(ns)
    }

    /// Removes a fingerprint if it is stored at `location`; returns whether it was, and
    /// the PCM time, ns.
    pub fn remove(
        &mut self,
        power: &mut PowerSwitch,
        fingerprint: &Fingerprint,
        location: u32,
    ) -> Result<(bool, u64), FlashError> {
        let (slot, mut ns) = self.find(fingerprint)?;
        let Some(slot) = slot.filter(|s| s.location == location) else {
            return Ok((false, ns));
        };
        let bucket = self.segments[slot.segment][slot.bucket];
        let (mut entries, t) = self.read_bucket(&bucket)?;
        ns += t;
        entries.remove(slot.index);
        self.entries -= 1;
        ns += self.write_entries(power, bucket.addr, &entries, slot.index, 1)?;
        if entries.is_empty() {
            self.segments[slot.segment].remove(slot.bucket);
            self.free_buckets.push(bucket.addr);
        } else {
            self.segments[slot.segment][slot.bucket] = summarise(bucket.addr, &entries);
        }
        Ok((true, ns))
    }

    /// Changes a stored fingerprint's location; returns the PCM time, ns.
    pub fn set_location(
        &mut self,
        power: &mut PowerSwitch,
        fingerprint: &Fingerprint,
        location: u32,
    ) -> Result<u64, FlashError> {
        let (slot, mut ns) = self.find(fingerprint)?;
        let slot = slot.expect("a relocated page's fingerprint is stored");
        let bucket = self.segments[slot.segment][slot.bucket];
        let addr = bucket.addr + slot.index as u64 * ENTRY_BYTES + SLOT_BYTES;
        ns += self.write(power, addr, &location.to_le_bytes())?;
        Ok(ns)
    }

    /// The location table's entry for a physical page: written with `Some`, cleared with
    /// `None`. Returns the PCM time, ns.
    pub fn set_table(
        &mut self,
        power: &mut PowerSwitch,
        location: u32,
        fingerprint: Option<&Fingerprint>,
    ) -> Result<u64, FlashError> {
        let bytes = fingerprint.copied().unwrap_or([0; 20]);
        self.write(power, u64::from(location) * SLOT_BYTES, &bytes)
    }

    /// Reads the location table's entry for a physical page; returns it and the PCM time.
    pub fn table(&mut self, location: u32) -> Result<(Fingerprint, u64), FlashError> {
        let (bytes, ns) = self.read(u64::from(location) * SLOT_BYTES, SLOT_BYTES)?;
        Ok((bytes.try_into().expect("20 bytes"), ns))
    }

    /// Every stored entry, segment by segment, bucket by bucket (no accounting).
    pub fn peek_entries(&self) -> Vec<(Fingerprint, u32)> {
        let mut all = Vec::new();
        for buckets in &self.segments {
            for bucket in buckets {
                let bytes = self.peek(bucket.addr, bucket.len as u64 * ENTRY_BYTES);
                all.extend(bytes.chunks_exact(ENTRY_BYTES as usize).map(decode));
            }
        }
        all
    }

    /// The location table's entry (no accounting).
    pub fn peek_table(&self, location: u32) -> Fingerprint {
        self.peek(u64::from(location) * SLOT_BYTES, SLOT_BYTES).try_into().expect("20 bytes")
    }

    fn peek(&self, addr: u64, len: u64) -> Vec<u8> {
        let line = LINE_BYTES as u64;
        (addr / line..(addr + len).div_ceil(line))
            .flat_map(|l| words_to_bytes(&self.pcm.peek_line(l)))
            .skip((addr % line) as usize)
            .take(len as usize)
            .collect()
    }

    /// Checks bucket order, ranges and counts.
    pub fn check(&self) -> Result<(), String> {
        let mut total = 0;
        for (s, buckets) in self.segments.iter().enumerate() {
            let mut previous_max: Option<Fingerprint> = None;
            for bucket in buckets {
                let bytes = self.peek(bucket.addr, bucket.len as u64 * ENTRY_BYTES);
                let entries: Vec<_> = bytes.chunks_exact(ENTRY_BYTES as usize).map(decode).collect();
                if entries.is_empty() || entries.windows(2).any(|w| w[0].0 >= w[1].0) {
                    return Err(format!("segment {s}: a bucket is empty or unsorted"));
                }
                if entries[0].0 != bucket.min || entries[entries.len() - 1].0 != bucket.max {
                    return Err(format!("segment {s}: a bucket header disagrees with its entries"));
                }
                if previous_max.is_some_and(|m| m >= bucket.min) || entries.iter().any(|(f, _)| self.segment_of(f) != s)
                {
                    return Err(format!("segment {s}: buckets overlap or hold another segment's fingerprint"));
                }
                previous_max = Some(bucket.max);
                total += entries.len() as u64;
            }
        }
        if total != self.entries {
            return Err(format!("fingerprint store counts {} entries but holds {total}", self.entries));
        }
        Ok(())
    }
}

fn summarise(addr: u64, entries: &[(Fingerprint, u32)]) -> Bucket {
    Bucket { addr, len: entries.len(), min: entries[0].0, max: entries[entries.len() - 1].0 }
}

fn encode(entry: &(Fingerprint, u32)) -> [u8; ENTRY_BYTES as usize] {
    let mut bytes = [0; ENTRY_BYTES as usize];
    bytes[..20].copy_from_slice(&entry.0);
    bytes[20..].copy_from_slice(&entry.1.to_le_bytes());
    bytes
}

fn decode(bytes: &[u8]) -> (Fingerprint, u32) {
    (bytes[..20].try_into().expect("20 bytes"), u32::from_le_bytes(bytes[20..24].try_into().expect("4 bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(n: u64) -> Fingerprint {
        let mut f = [0; 20];
        f[..8].copy_from_slice(&n.to_le_bytes());
        f[8..16].copy_from_slice(&n.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
        f
    }

    #[test]
    fn insert_lookup_remove_across_bucket_splits() {
        let mut store = FingerprintStore::new(4, 1024, 512, 1, PcmStorageTiming::THESIS_TABLE_2_2).unwrap();
        let power = &mut PowerSwitch::new();
        let n = 2_000u64;
        for i in 0..n {
            let f = fp(i * 7919 % n);
            store.insert(power, f, i as u32).unwrap();
        }
        store.check().unwrap();
        assert_eq!(store.entries(), n);
        for i in 0..n {
            assert_eq!(store.lookup(&fp(i * 7919 % n)).unwrap().0, Some(i as u32));
        }
        assert_eq!(store.lookup(&fp(n + 5)).unwrap().0, None);
        let before = store.comparisons;
        store.lookup(&fp(3)).unwrap();
        // Range checks over a few buckets plus about log2(170) probes.
        let per_lookup = store.comparisons - before;
        assert!((2..40).contains(&per_lookup), "{per_lookup} comparisons");
        store.set_location(power, &fp(3), 77).unwrap();
        assert_eq!(store.lookup(&fp(3)).unwrap().0, Some(77));
        assert!(!store.remove(power, &fp(3), 76).unwrap().0);
        assert!(store.remove(power, &fp(3), 77).unwrap().0);
        let mut removed = 1;
        for i in 0..n / 2 {
            let f = fp(i * 7919 % n);
            let (location, _) = store.lookup(&f).unwrap();
            if let Some(location) = location {
                assert!(store.remove(power, &f, location).unwrap().0);
                removed += 1;
            }
        }
        store.check().unwrap();
        assert!(removed >= n / 2);
        assert_eq!(store.entries(), n - removed);
        assert!(store.pcm().stats().bits_written > 0);
    }

    #[test]
    fn location_table_round_trips_in_pcm() {
        let mut store = FingerprintStore::new(2, 100, 50, 1, PcmStorageTiming::THESIS_TABLE_2_2).unwrap();
        let power = &mut PowerSwitch::new();
        store.set_table(power, 42, Some(&fp(9))).unwrap();
        assert_eq!(store.table(42).unwrap().0, fp(9));
        assert_eq!(store.peek_table(42), fp(9));
        store.set_table(power, 42, None).unwrap();
        assert_eq!(store.table(42).unwrap().0, [0; 20]);
        assert_eq!(store.share(7).unwrap().0, None);
        let share = Share { owner: 3, owner_seq: 11, seq: 12 };
        store.set_share(power, 7, share).unwrap();
        assert_eq!(store.share(7).unwrap().0, Some(share));
        // A cut refuses the write and leaves the slot as it was.
        power.cut_before(power.writes());
        let newer = Share { seq: 13, ..share };
        assert_eq!(store.set_share(power, 7, newer), Err(FlashError::PowerCut(power.writes())));
        assert_eq!(store.share(7).unwrap().0, Some(share));
    }
}
