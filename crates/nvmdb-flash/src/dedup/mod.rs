//! Inline deduplication (thesis 3.2.2, "Redundant Write Finder"), used by the page-mapped
//! FTL.
//!
//! A written page's fingerprint is the SHA-1 of its bytes, or the content id it carries
//! (a trace's folded MD5 or a synthetic id), zero-padded to 160 bits. The fingerprint
//! store (in PCM, see [`store`]) maps fingerprints to physical pages; the location table
//! beside it maps physical pages back to fingerprints, and is updated when a page is
//! freed (overwrite, trim) or moved (garbage collection before an erase). The store can
//! be bounded: beyond `dedup.max_entries` the least recently used fingerprint is dropped
//! (its page stays, it just cannot be shared any more).
//!
//! After a power loss the FTL rebuilds the sharing from flash and the store's share map
//! ([`store::Share`]), then the store itself from the live pages' contents
//! ([`Dedup::rebuild`]).

pub mod store;

use std::collections::{BTreeMap, HashMap};

use nvmdb_device::{PageData, PowerSwitch};
use sha1::{Digest, Sha1};

use crate::config::DedupSection;
use crate::layer::{FlashError, StoreStats};
pub use store::{Fingerprint, FingerprintStore, Share};

/// Buckets the fingerprint store holds for at most `fingerprints` fingerprints: one per
/// segment and one per [`store::BUCKET_ENTRIES`]` / 2` fingerprints beyond (a bucket is
/// made by a split, which leaves both halves that full). Buckets are freed only once
/// empty, so removals leaving many nearly empty could hold more; fingerprints (SHA-1,
/// content ids) spread evenly over them.
fn bucket_bound(section: &DedupSection, fingerprints: u64) -> u64 {
    u64::from(section.segments).saturating_add(fingerprints.div_ceil(store::BUCKET_ENTRIES as u64 / 2))
}

/// The fingerprints a store can hold with `fingerprints` pages to name: at most
/// `dedup.max_entries` when it is set.
fn fingerprint_bound(section: &DedupSection, fingerprints: u64) -> u64 {
    if section.max_entries > 0 {
        fingerprints.min(section.max_entries)
    } else {
        fingerprints
    }
}

/// The most host memory deduplication takes beyond its fixed PCM tables holding at most
/// `fingerprints` fingerprints (one per live physical page: at most the logical pages),
/// bytes, before its lines are rewritten:
/// - its buckets ([`bucket_bound`]): a bucket is 4 KB of PCM, 64 lines, one host chunk of
///   64 line records ([`nvmdb_device::pcm::LINE_HOST_BYTES`] each) once any entry is
///   written, and a header in the controller (its vector up to twice the headers);
/// - the bitmap of pages with a location-table entry, one bit per physical page;
/// - with `max_entries`, the LRU order per fingerprint: a hash map slot (key, tick and a
///   control byte, at most 16/7 slots per entry at its 7/8 load) and a B-tree entry (tick
///   and key, a node of 11 at least 5 full, with a 16 B node header).
pub fn estimated_store_bytes(section: &DedupSection, physical_pages: u64, fingerprints: u64) -> u64 {
    let fingerprints = fingerprint_bound(section, fingerprints);
    let buckets = bucket_bound(section, fingerprints);
    let mut bytes = buckets
        .saturating_mul(store::BUCKET_BYTES / 64 * nvmdb_device::pcm::LINE_HOST_BYTES + 2 * store::BUCKET_HEADER_BYTES)
        .saturating_add(physical_pages.div_ceil(64).saturating_mul(8));
    if section.max_entries > 0 {
        let key_tick = (std::mem::size_of::<Fingerprint>() + 8) as u64;
        let hash_slot = std::mem::size_of::<(Fingerprint, u64)>() as u64 + 1;
        let btree_entry = (11 * key_tick + 16).div_ceil(5);
        bytes = bytes.saturating_add(fingerprints.saturating_mul((hash_slot * 16).div_ceil(7) + btree_entry));
    }
    bytes
}

/// The most host memory the higher wear planes of the store's rewritten lines take after
/// `updates` inserts and removals, `relocations` location moves and `shares` share-map
/// writes (hits), with at most `fingerprints` fingerprints (one per logical page at most:
/// the share map's slots), bytes ([`nvmdb_device::wear::higher_plane_bytes_bound`]): an
/// insert or removal rewrites at most all 64 lines of its bucket, a move at most the two
/// lines its 4 B location spans; each rewrites at most two location-table slots (20 B per
/// physical page) of two lines each; a hit rewrites one share-map slot (20 B per logical
/// page), at most two lines.
pub fn estimated_store_wear_bytes(
    section: &DedupSection,
    physical_pages: u64,
    fingerprints: u64,
    updates: u64,
    relocations: u64,
    shares: u64,
) -> u64 {
    let bucket_lines = bucket_bound(section, fingerprint_bound(section, fingerprints)) * (store::BUCKET_BYTES / 64);
    let bucket_writes = updates.saturating_mul(store::BUCKET_BYTES / 64).saturating_add(relocations.saturating_mul(2));
    let table_lines = physical_pages.saturating_mul(store::SLOT_BYTES).div_ceil(64);
    let table_writes = updates.saturating_add(relocations).saturating_mul(4);
    let share_lines = fingerprints.saturating_mul(store::SHARE_BYTES).div_ceil(64);
    nvmdb_device::wear::higher_plane_bytes_bound(bucket_lines, bucket_writes)
        .saturating_add(nvmdb_device::wear::higher_plane_bytes_bound(table_lines, table_writes))
        .saturating_add(nvmdb_device::wear::higher_plane_bytes_bound(share_lines, shares.saturating_mul(2)))
}

/// The deduplication engine of one FTL.
#[derive(Debug, Clone)]
pub struct Dedup {
    store: FingerprintStore,
    /// Physical pages with a location-table entry, one bit each (controller DRAM).
    has_entry: Vec<u64>,
    max_entries: u64,
    tick: u64,
    /// LRU order (bounded stores only): tick → fingerprint, and back.
    lru: BTreeMap<u64, Fingerprint>,
    lru_tick: HashMap<Fingerprint, u64>,
    lookups: u64,
    /// Fingerprint comparisons of `lookup` alone (the store counts every search, its upkeep's too).
    lookup_comparisons: u64,
    /// Entries evicted from a bounded store.
    evictions: u64,
}

impl Dedup {
    /// A deduplication engine for a flash of `physical_pages` holding `logical_pages`.
    pub fn new(section: &DedupSection, physical_pages: u64, logical_pages: u64) -> Result<Dedup, FlashError> {
        Ok(Dedup {
            store: FingerprintStore::new(
                section.segments,
                physical_pages,
                logical_pages,
                section.pcm_mb,
                section.pcm_timing.timing(),
            )?,
            has_entry: vec![0; physical_pages.div_ceil(64) as usize],
            max_entries: section.max_entries,
            tick: 0,
            lru: BTreeMap::new(),
            lru_tick: HashMap::new(),
            lookups: 0,
            lookup_comparisons: 0,
            evictions: 0,
        })
    }

    /// The fingerprint of a page's data; `None` when it carries no content.
    pub fn fingerprint(data: &PageData) -> Option<Fingerprint> {
        match data {
            PageData::Bytes(bytes) => Some(Sha1::digest(bytes).into()),
            PageData::Fingerprint(id) => {
                let mut f = [0; 20];
                f[..8].copy_from_slice(&id.to_le_bytes());
                Some(f)
            }
            PageData::Empty => None,
        }
    }

    fn has(&self, ppn: u32) -> bool {
        self.has_entry[ppn as usize / 64] >> (ppn % 64) & 1 == 1
    }

    fn mark(&mut self, ppn: u32, on: bool) {
        let word = &mut self.has_entry[ppn as usize / 64];
        if on {
            *word |= 1 << (ppn % 64);
        } else {
            *word &= !(1 << (ppn % 64));
        }
    }

    fn touch(&mut self, fingerprint: &Fingerprint) {
        if self.max_entries == 0 {
            return;
        }
        self.tick += 1;
        if let Some(old) = self.lru_tick.insert(*fingerprint, self.tick) {
            self.lru.remove(&old);
        }
        self.lru.insert(self.tick, *fingerprint);
    }

    fn untouch(&mut self, fingerprint: &Fingerprint) {
        if let Some(tick) = self.lru_tick.remove(fingerprint) {
            self.lru.remove(&tick);
        }
    }

    /// Looks a fingerprint up: the live physical page holding that content, if any, and
    /// the PCM time, ns.
    pub fn lookup(&mut self, fingerprint: &Fingerprint) -> (Option<u32>, u64) {
        self.lookups += 1;
        let before = self.store.comparisons;
        let (found, ns) = self.store.lookup(fingerprint).expect("fingerprint store addresses are in range");
        self.lookup_comparisons += self.store.comparisons - before;
        if found.is_some() {
            self.touch(fingerprint);
        }
        (found, ns)
    }

    /// Records that physical page `ppn` now holds `fingerprint` (not stored before).
    /// Returns the PCM time, ns.
    pub fn insert(&mut self, power: &mut PowerSwitch, fingerprint: Fingerprint, ppn: u32) -> Result<u64, FlashError> {
        let mut ns = self.store.insert(power, fingerprint, ppn)?;
        ns += self.store.set_table(power, ppn, Some(&fingerprint))?;
        self.mark(ppn, true);
        self.touch(&fingerprint);
        if self.max_entries > 0 && self.store.entries() > self.max_entries {
            let (_, oldest) = self.lru.pop_first().expect("a bounded, overfull store has an LRU entry");
            self.evictions += 1;
            self.lru_tick.remove(&oldest);
            let (location, t) = self.store.lookup(&oldest)?;
            ns += t;
            let location = location.expect("an LRU fingerprint is stored");
            ns += self.store.remove(power, &oldest, location)?.1;
            ns += self.store.set_table(power, location, None)?;
            self.mark(location, false);
        }
        Ok(ns)
    }

    /// Physical page `ppn` was freed: drops its fingerprint. Returns the PCM time, ns.
    pub fn forget(&mut self, power: &mut PowerSwitch, ppn: u32) -> Result<u64, FlashError> {
        if !self.has(ppn) {
            return Ok(0);
        }
        let (fingerprint, mut ns) = self.store.table(ppn)?;
        let (removed, t) = self.store.remove(power, &fingerprint, ppn)?;
        assert!(removed, "a page with a location-table entry has its fingerprint stored");
        ns += t + self.store.set_table(power, ppn, None)?;
        self.mark(ppn, false);
        self.untouch(&fingerprint);
        Ok(ns)
    }

    /// Physical page `old` was copied to `new`. Returns the PCM time, ns.
    pub fn relocate(&mut self, power: &mut PowerSwitch, old: u32, new: u32) -> Result<u64, FlashError> {
        if !self.has(old) {
            return Ok(0);
        }
        let (fingerprint, mut ns) = self.store.table(old)?;
        ns += self.store.set_location(power, &fingerprint, new)?;
        ns += self.store.set_table(power, old, None)?;
        ns += self.store.set_table(power, new, Some(&fingerprint))?;
        self.mark(old, false);
        self.mark(new, true);
        Ok(ns)
    }

    /// Records in PCM that logical page `lpn` now shares the page `share` names (a hit).
    /// Returns the PCM time, ns.
    pub fn set_share(&mut self, power: &mut PowerSwitch, lpn: u32, share: Share) -> Result<u64, FlashError> {
        self.store.set_share(power, lpn, share)
    }

    /// Logical page `lpn`'s share-map slot, read from PCM (recovery).
    pub fn share(&mut self, lpn: u32) -> Result<Option<Share>, FlashError> {
        Ok(self.store.share(lpn)?.0)
    }

    /// Rebuilds the store after a power loss from the live pages' fingerprints, in the
    /// order given (a fingerprint seen twice keeps its first page). Returns the PCM time, ns.
    pub fn rebuild(
        &mut self,
        power: &mut PowerSwitch,
        pages: impl IntoIterator<Item = (Fingerprint, u32)>,
    ) -> Result<u64, FlashError> {
        self.store.clear();
        self.has_entry.fill(0);
        self.lru.clear();
        self.lru_tick.clear();
        let mut ns = 0;
        for (fingerprint, ppn) in pages {
            let (found, t) = self.store.lookup(&fingerprint)?;
            ns += t;
            if found.is_none() {
                ns += self.insert(power, fingerprint, ppn)?;
            }
        }
        Ok(ns)
    }

    /// Adds the engine's counters (lookups, comparisons, PCM) into `stats`.
    pub fn add_stats(&self, stats: &mut StoreStats) {
        stats.dedup_lookups += self.lookups;
        stats.dedup_lookup_comparisons += self.lookup_comparisons;
        stats.dedup_evictions += self.evictions;
        stats.dedup_comparisons += self.store.comparisons;
        stats.add_pcm(self.store.pcm());
    }

    /// Zeroes the counters (not the PCM wear).
    pub fn reset_stats(&mut self) {
        self.store.reset_stats();
        self.lookups = 0;
        self.lookup_comparisons = 0;
        self.evictions = 0;
    }

    /// Checks the store and that both directions of the map agree, with `live(ppn)`
    /// telling which physical pages hold live data.
    pub fn check(&self, live: impl Fn(u32) -> bool) -> Result<(), String> {
        self.store.check()?;
        let entries = self.store.peek_entries();
        for (fingerprint, ppn) in &entries {
            if !live(*ppn) || !self.has(*ppn) || self.store.peek_table(*ppn) != *fingerprint {
                return Err(format!("fingerprint store entry for page {ppn} disagrees with the location table"));
            }
        }
        let marked: u64 = self.has_entry.iter().map(|w| u64::from(w.count_ones())).sum();
        if marked != entries.len() as u64 {
            return Err(format!("{marked} location-table entries but {} fingerprints", entries.len()));
        }
        if self.max_entries > 0 && (self.lru.len() != entries.len() || self.store.entries() > self.max_entries) {
            return Err("LRU list and fingerprint store disagree".into());
        }
        Ok(())
    }
}
