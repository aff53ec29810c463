//! What the three log-based buffer schemes (IPL, d-PRAM, the thesis's PCM log) share:
//! block-level mapping over a [`FlashArray`] with merges into clean blocks, and the
//! encoding of an update's log record (its changed byte ranges).
//!
//! A log record is `[count: u16][fingerprint: u64]` followed by `count` entries of
//! `[offset: u16][len: u16][len bytes]`. In bytes mode the entry bytes are the page's new
//! bytes at that offset; in fingerprint and metadata modes they are filler derived from
//! the fingerprint (so PCM cells still flip), and the fingerprint field carries the page's
//! content identity.

use std::collections::VecDeque;

use nvmdb_device::{FlashArray, FlashGeometry, FlashTiming, PageContent, PageData};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::config::SsdConfig;
use crate::layer::{FlashError, StoreHealth, StoreStats};

/// Bytes of a log record's header.
pub const RECORD_HEADER_BYTES: u32 = 10;
/// Bytes of each range entry's header.
pub const RANGE_HEADER_BYTES: u32 = 4;

/// Encoded size of a record holding `ranges`.
pub fn record_bytes(ranges: &[(u32, u32)]) -> u32 {
    RECORD_HEADER_BYTES + ranges.iter().map(|&(_, len)| RANGE_HEADER_BYTES + len).sum::<u32>()
}

/// The byte ranges where `new` differs from `old`; runs closer than a range header are
/// joined, since a separate entry would cost more than the bytes between them.
pub fn diff_ranges(old: &[u8], new: &[u8]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for (i, _) in old.iter().zip(new).enumerate().filter(|(_, (a, b))| a != b) {
        let i = i as u32;
        match out.last_mut() {
            Some((o, l)) if i <= *o + *l + RANGE_HEADER_BYTES => *l = i + 1 - *o,
            _ => out.push((i, 1)),
        }
    }
    out
}

/// Encodes a record. `page` holds the new page bytes in bytes mode.
pub fn encode_record(ranges: &[(u32, u32)], fingerprint: u64, page: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(record_bytes(ranges) as usize);
    out.extend_from_slice(&(ranges.len() as u16).to_le_bytes());
    out.extend_from_slice(&fingerprint.to_le_bytes());
    for &(offset, len) in ranges {
        out.extend_from_slice(&(offset as u16).to_le_bytes());
        out.extend_from_slice(&(len as u16).to_le_bytes());
        match page {
            Some(bytes) => out.extend_from_slice(&bytes[offset as usize..(offset + len) as usize]),
            None => out.extend((0..len).map(|i| (fingerprint.rotate_left(offset + i) & 0xFF) as u8)),
        }
    }
    out
}

/// A decoded record: its ranges (with their bytes) and fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// `(offset, bytes)` entries.
    pub entries: Vec<(u32, Vec<u8>)>,
    /// The page's content identity.
    pub fingerprint: u64,
}

impl Record {
    /// The entries' ranges.
    pub fn ranges(&self) -> Vec<(u32, u32)> {
        self.entries.iter().map(|(o, b)| (*o, b.len() as u32)).collect()
    }
}

/// Decodes a record written by [`encode_record`]; a malformed record is a broken invariant.
pub fn decode_record(bytes: &[u8]) -> Record {
    let count = u16::from_le_bytes([bytes[0], bytes[1]]) as usize;
    let fingerprint = u64::from_le_bytes(bytes[2..10].try_into().expect("8 bytes"));
    let mut at = RECORD_HEADER_BYTES as usize;
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let offset = u32::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
        let len = usize::from(u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]));
        at += RANGE_HEADER_BYTES as usize;
        assert!(at + len <= bytes.len(), "log record overruns its space");
        entries.push((offset, bytes[at..at + len].to_vec()));
        at += len;
    }
    Record { entries, fingerprint }
}

/// Applies a record to a page image.
pub fn apply_record(page: PageData, record: &Record) -> PageData {
    match page {
        PageData::Bytes(mut bytes) => {
            for (offset, data) in &record.entries {
                bytes[*offset as usize..*offset as usize + data.len()].copy_from_slice(data);
            }
            PageData::Bytes(bytes)
        }
        PageData::Fingerprint(_) => PageData::Fingerprint(record.fingerprint),
        PageData::Empty => {
            if record.fingerprint == 0 {
                PageData::Empty
            } else {
                PageData::Fingerprint(record.fingerprint)
            }
        }
    }
}

/// Content identity a record carries for a page (0 in metadata mode and bytes mode).
pub fn fingerprint_of(data: &PageData) -> u64 {
    match data {
        PageData::Fingerprint(f) => *f,
        _ => 0,
    }
}

/// The parameters a buffer scheme takes from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct SchemeParams {
    /// Flash geometry (partial programming as the scheme needs).
    pub geometry: FlashGeometry,
    /// Flash timing.
    pub timing: FlashTiming,
    /// Flash content mode.
    pub content: PageContent,
    /// Fraction of data blocks hidden from the host.
    pub overprovision: f64,
    /// PCM bytes (d-PRAM, PCM log).
    pub pcm_bytes: u64,
    /// Log sector bytes.
    pub log_sector_bytes: u32,
    /// Delta size range for writes whose changes are unknown, bytes.
    pub delta_bytes: (u32, u32),
    /// PCM storage timing.
    pub pcm_timing: nvmdb_device::PcmStorageTiming,
    /// Seed.
    pub seed: u64,
}

impl SchemeParams {
    /// Reads the parameters from a configuration.
    pub fn from_config(config: &SsdConfig) -> SchemeParams {
        SchemeParams {
            geometry: config.flash.geometry(),
            timing: config.flash.timing.timing(),
            content: config.content,
            overprovision: config.ftl.overprovision,
            pcm_bytes: config.buffer.pcm_mb << 20,
            log_sector_bytes: config.buffer.log_sector_bytes,
            delta_bytes: (config.buffer.delta_bytes_min, config.buffer.delta_bytes_max),
            pcm_timing: config.buffer.pcm_timing.timing(),
            seed: config.seed,
        }
    }
}

/// Block-mapped flash: logical block → physical block, data pages at their own offset in
/// the block, merges that write a whole block sequentially into a clean block.
#[derive(Debug)]
pub struct BlockFlash {
    /// The flash.
    pub flash: FlashArray,
    map: Vec<Option<u64>>,
    free: VecDeque<u64>,
    /// Data pages per logical block.
    pub data_pages: u32,
    /// Host-visible state of every logical page (written and not trimmed).
    valid: Vec<bool>,
    /// Counters kept here (merges, flushes, gc time, host counters).
    pub stats: StoreStats,
    delta_rng: Xoshiro256PlusPlus,
    delta_bytes: (u32, u32),
}

impl BlockFlash {
    /// A block-mapped flash exposing `data_pages` of each block.
    pub fn new(params: &SchemeParams, data_pages: u32) -> Result<BlockFlash, FlashError> {
        let flash = FlashArray::new(params.geometry, params.timing, params.content)?;
        let blocks = params.geometry.blocks();
        let logical_blocks = ((blocks as f64) * (1.0 - params.overprovision)).floor() as u64;
        // A merge needs one clean block beside the old one.
        if logical_blocks == 0 || logical_blocks >= blocks {
            return Err(FlashError::Config(format!(
                "{blocks} blocks with overprovision {} leave no spare block for merges",
                params.overprovision
            )));
        }
        if params.delta_bytes.0 > params.delta_bytes.1 {
            return Err(FlashError::Config("buffer.delta_bytes_min exceeds buffer.delta_bytes_max".into()));
        }
        Ok(BlockFlash {
            flash,
            map: vec![None; logical_blocks as usize],
            free: (0..blocks).collect(),
            data_pages,
            valid: vec![false; (logical_blocks * u64::from(data_pages)) as usize],
            stats: StoreStats::default(),
            delta_rng: Xoshiro256PlusPlus::seed_from_u64(params.seed ^ 0xD5E1_7A00),
            delta_bytes: params.delta_bytes,
        })
    }

    /// Logical pages exposed.
    pub fn logical_pages(&self) -> u64 {
        self.valid.len() as u64
    }

    /// Page bytes.
    pub fn page_bytes(&self) -> u32 {
        self.flash.geometry().page_bytes
    }

    /// Checks the range and splits a page number into (logical block, offset).
    pub fn locate(&self, lpn: u64) -> Result<(u64, u32), FlashError> {
        if lpn >= self.logical_pages() {
            return Err(FlashError::OutOfRange { lpn, pages: self.logical_pages() });
        }
        Ok((lpn / u64::from(self.data_pages), (lpn % u64::from(self.data_pages)) as u32))
    }

    /// Whether a logical page holds host data.
    pub fn is_valid(&self, lpn: u64) -> bool {
        self.valid[lpn as usize]
    }

    /// Marks a logical page written or trimmed.
    pub fn set_valid(&mut self, lpn: u64, valid: bool) {
        self.valid[lpn as usize] = valid;
    }

    /// The physical block of a logical block.
    pub fn physical(&self, lbn: u64) -> Option<u64> {
        self.map[lbn as usize]
    }

    /// What an unwritten page reads as.
    pub fn erased(&self) -> PageData {
        match self.flash.content_mode() {
            PageContent::Bytes => PageData::Bytes(vec![0xFF; self.page_bytes() as usize]),
            _ => PageData::Empty,
        }
    }

    /// Case 1: programs the page in place when it is its block's next erased page.
    /// Returns `None` when it is not.
    pub fn try_direct(
        &mut self,
        lbn: u64,
        offset: u32,
        data: &PageData,
        now_ns: u64,
    ) -> Result<Option<u64>, FlashError> {
        let block = match self.map[lbn as usize] {
            Some(b) => b,
            None if offset == 0 => {
                let b = self.take_free()?;
                self.map[lbn as usize] = Some(b);
                b
            }
            None => return Ok(None),
        };
        if self.flash.write_pointer(block) != offset {
            return Ok(None);
        }
        let ppn = block * u64::from(self.flash.geometry().pages_per_block) + u64::from(offset);
        Ok(Some(self.flash.program_page(ppn, data, now_ns)?.end_ns))
    }

    /// Reads a data page's flash copy (erased when never programmed), valid or not.
    pub fn read_base(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let (lbn, offset) = self.locate(lpn)?;
        match self.map[lbn as usize] {
            Some(block) if self.flash.write_pointer(block) > offset => {
                let ppn = block * u64::from(self.flash.geometry().pages_per_block) + u64::from(offset);
                let (data, timing) = self.flash.read_page(ppn, now_ns)?;
                Ok((data, timing.end_ns))
            }
            _ => Ok((self.erased(), now_ns)),
        }
    }

    /// Reads a physical page (log pages of IPL).
    pub fn read_physical(&mut self, ppn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let (data, timing) = self.flash.read_page(ppn, now_ns)?;
        Ok((data, timing.end_ns))
    }

    fn take_free(&mut self) -> Result<u64, FlashError> {
        self.free.pop_front().ok_or_else(|| FlashError::Full("a clean block for a merge".into()))
    }

    /// Merge: writes a logical block's up-to-date data pages (`pages[i]`, `None` for an
    /// unwritten page) sequentially into a clean block, then erases the old block.
    /// `extra_ns` is flash time the caller already spent reading for the merge.
    pub fn merge(
        &mut self,
        lbn: u64,
        pages: Vec<Option<PageData>>,
        now_ns: u64,
        extra_ns: u64,
    ) -> Result<u64, FlashError> {
        assert_eq!(pages.len(), self.data_pages as usize, "a merge writes every data page");
        let clean = self.take_free()?;
        let base = clean * u64::from(self.flash.geometry().pages_per_block);
        let erased = self.erased();
        let mut done_ns = now_ns;
        let mut busy_ns = extra_ns;
        for (i, page) in pages.into_iter().enumerate() {
            let data = page.unwrap_or_else(|| erased.clone());
            let t = self.flash.program_page(base + i as u64, &data, now_ns)?;
            busy_ns += t.end_ns - t.start_ns;
            done_ns = done_ns.max(t.end_ns);
        }
        if let Some(old) = self.map[lbn as usize].replace(clean) {
            let t = self.flash.erase_block(old, done_ns)?;
            busy_ns += t.end_ns - t.start_ns;
            done_ns = t.end_ns;
            self.free.push_back(old);
        }
        self.stats.merges += 1;
        self.stats.flushes += 1;
        self.stats.sequential_flushes += 1;
        self.stats.gc_time_ns += busy_ns;
        Ok(done_ns)
    }

    /// The ranges an update changes when the host gave none: the whole page for a page
    /// without data, otherwise one range of a size drawn from the configured distribution.
    pub fn unknown_change(&mut self, lpn: u64) -> Option<Vec<(u32, u32)>> {
        if !self.valid[lpn as usize] {
            return None;
        }
        let len = self.delta_rng.gen_range(self.delta_bytes.0..=self.delta_bytes.1).clamp(1, self.page_bytes());
        let offset = self.delta_rng.gen_range(0..=self.page_bytes() - len);
        Some(vec![(offset, len)])
    }

    /// Starts a host read: checks the page, counts it, and returns its block and offset,
    /// or `None` when the page holds no live data (it then reads as erased).
    pub fn begin_read(&mut self, lpn: u64) -> Result<Option<(u64, u32)>, FlashError> {
        let location = self.locate(lpn)?;
        self.stats.host_page_reads += 1;
        Ok(self.is_valid(lpn).then_some(location))
    }

    /// Starts a host trim: checks the page, counts it, marks it invalid, and returns its
    /// block and offset.
    pub fn begin_trim(&mut self, lpn: u64) -> Result<(u64, u32), FlashError> {
        let location = self.locate(lpn)?;
        self.stats.host_page_trims += 1;
        self.set_valid(lpn, false);
        Ok(location)
    }

    /// The counters merged with the flash's own.
    pub fn combined_stats(&self) -> StoreStats {
        self.stats.with_flash(self.flash.stats())
    }

    /// The counters merged with the flash's and those of a PCM log device.
    pub fn combined_stats_with_pcm(&self, pcm: &nvmdb_device::Pcm) -> StoreStats {
        let p = pcm.stats();
        StoreStats {
            pcm_bits_written: p.bits_written,
            pcm_energy_pj: p.storage_energy_pj,
            pcm_max_cell_writes: pcm.wear_report().max_cell_writes,
            ..self.combined_stats()
        }
    }

    /// Wear and space now.
    pub fn health(&self) -> StoreHealth {
        let live = self.valid.iter().filter(|&&v| v).count() as u64;
        StoreHealth {
            blocks: self.flash.geometry().blocks(),
            endurance: self.flash.geometry().endurance,
            block_erases_total: self.flash.erase_counts().sum(),
            block_erases_max: self.flash.erase_counts().max().unwrap_or(0),
            mapped_pages: live,
            live_physical_pages: live,
        }
    }

    /// Zeroes counters (wear stays).
    pub fn reset_stats(&mut self) {
        self.stats = StoreStats::default();
        self.flash.reset_stats();
    }

    /// Mapping one-to-one, free list disjoint from mapped blocks, every block accounted.
    pub fn check_invariants(&self) -> Result<(), String> {
        let blocks = self.flash.geometry().blocks() as usize;
        let mut owner = vec![false; blocks];
        for (lbn, block) in self.map.iter().enumerate() {
            if let Some(b) = block {
                if std::mem::replace(&mut owner[*b as usize], true) {
                    return Err(format!("physical block {b} mapped twice (logical block {lbn})"));
                }
            }
        }
        for &b in &self.free {
            if std::mem::replace(&mut owner[b as usize], true) {
                return Err(format!("free block {b} is also mapped or listed twice"));
            }
            if self.flash.write_pointer(b) != 0 {
                return Err(format!("free block {b} is not erased"));
            }
        }
        match owner.iter().position(|o| !o) {
            Some(b) => Err(format!("physical block {b} is neither mapped nor free")),
            None => Ok(()),
        }
    }
}

/// Whether a whole-page update must bypass the log: the record would not fit a sector.
pub fn fits(ranges: &[(u32, u32)], sector_bytes: u32) -> bool {
    record_bytes(ranges) <= sector_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_apply() {
        let old = vec![0u8; 64];
        let mut new = old.clone();
        new[3] = 9;
        new[5] = 7;
        new[40..44].copy_from_slice(&[1, 2, 3, 4]);
        let ranges = diff_ranges(&old, &new);
        assert_eq!(ranges, vec![(3, 3), (40, 4)]);
        let bytes = encode_record(&ranges, 0, Some(&new));
        assert_eq!(bytes.len() as u32, record_bytes(&ranges));
        let record = decode_record(&bytes);
        assert_eq!(apply_record(PageData::Bytes(old), &record), PageData::Bytes(new));
        let record = decode_record(&encode_record(&ranges, 42, None));
        assert_eq!(apply_record(PageData::Empty, &record), PageData::Fingerprint(42));
    }
}
