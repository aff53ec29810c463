//! What the three log-based buffer schemes (IPL, d-PRAM, the thesis's PCM log) share:
//! the encoding of an update's log record (its changed byte ranges), the [`DeltaPolicy`]
//! and [`MergeScope`] a [`SchemeParams`] selects, and the [`LogArea`] interface, the one
//! thing in which the schemes differ. The layer that carries a scheme
//! out above the page-mapped FTL is [`crate::log_store::LogStore`].
//!
//! A log record is `[count: u16][fingerprint: u64]` followed by `count` entries of
//! `[offset: u16][len: u16][len bytes]`. In bytes mode the entry bytes are the page's new
//! bytes at that offset; in fingerprint and metadata modes they are deterministic
//! pseudo-random filler (so PCM cells flip as real data would; a rewrite of a record keeps
//! the filler of its unchanged ranges, [`encode_rewrite_into`]), and the fingerprint
//! field carries the page's content identity.

use nvmdb_device::{splitmix64, PageData, Pcm};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::config::{DeltaKind, MergeKind, SsdConfig};
use crate::ftl::PageFtl;
use crate::layer::{FlashError, Pending};

/// The change assumed for a content-free update whose changed bytes are unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeltaPolicy {
    /// One range of `min..=max` bytes at a random offset (IPL's measured 50–150 B by
    /// default), within the host's byte range when it gave one.
    Sampled { min: u32, max: u32 },
    /// The whole page (or the whole host range): a content-free whole-page write is then
    /// never logged.
    FullPage,
}

impl DeltaPolicy {
    /// The PRNG a store draws its sampled changes from, for the configuration's `seed`
    /// (every store with the policy draws the same sequence).
    pub fn rng(seed: u64) -> Xoshiro256PlusPlus {
        Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xD5E1_7A00)
    }

    /// The change of a content-free update whose changed bytes are unknown: `written` is
    /// the host's byte range (or the whole page).
    pub fn draw(self, rng: &mut Xoshiro256PlusPlus, written: (u32, u32)) -> (u32, u32) {
        match self {
            DeltaPolicy::FullPage => written,
            DeltaPolicy::Sampled { min, max } => {
                let len = rng.gen_range(min..=max).clamp(1, written.1.max(1));
                let offset = written.0 + rng.gen_range(0..=written.1.saturating_sub(len));
                (offset, len)
            }
        }
    }
}

/// Which pages a merge writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeScope {
    /// Every live page of the logical block (the thesis's merge: the block is written
    /// sequentially).
    LiveBlock,
    /// Only the pages with records (the others are current in the FTL already).
    LoggedPages,
}

/// What builds a log scheme: the whole configuration, and the PCM bytes of its log area
/// (`buffer.pcm_mb` by default; experiments scale it).
#[derive(Debug, Clone)]
pub struct SchemeParams {
    /// The configuration (flash, FTL, buffer, content, seed).
    pub config: SsdConfig,
    /// PCM bytes of the log area (d-PRAM, PCM log).
    pub pcm_bytes: u64,
}

impl SchemeParams {
    /// The parameters of `config`.
    pub fn from_config(config: &SsdConfig) -> SchemeParams {
        SchemeParams { config: config.clone(), pcm_bytes: config.buffer.pcm_mb << 20 }
    }

    /// The delta policy for content-free updates.
    pub fn delta_policy(&self) -> DeltaPolicy {
        let b = &self.config.buffer;
        match b.delta {
            DeltaKind::Sampled => DeltaPolicy::Sampled { min: b.delta_bytes_min, max: b.delta_bytes_max },
            DeltaKind::FullPage => DeltaPolicy::FullPage,
        }
    }

    /// Which pages a merge writes.
    pub fn merge_scope(&self) -> MergeScope {
        match self.config.buffer.merge {
            MergeKind::LiveBlock => MergeScope::LiveBlock,
            MergeKind::LoggedPages => MergeScope::LoggedPages,
        }
    }
}

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

/// Encodes a record. `page` holds the new page bytes in bytes mode; without it the entry
/// bytes are filler drawn from `salt` (a per-record number), 8 bytes per SplitMix64 step
/// (see `extend_filler`).
pub fn encode_record(ranges: &[(u32, u32)], fingerprint: u64, page: Option<&[u8]>, salt: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(record_bytes(ranges) as usize);
    encode_record_into(&mut out, ranges, fingerprint, page, salt);
    out
}

/// [`encode_record`], appending to `out`.
pub fn encode_record_into(out: &mut Vec<u8>, ranges: &[(u32, u32)], fingerprint: u64, page: Option<&[u8]>, salt: u64) {
    out.reserve(record_bytes(ranges) as usize);
    out.extend_from_slice(&(ranges.len() as u16).to_le_bytes());
    out.extend_from_slice(&fingerprint.to_le_bytes());
    for &(offset, len) in ranges {
        out.extend_from_slice(&(offset as u16).to_le_bytes());
        out.extend_from_slice(&(len as u16).to_le_bytes());
        match page {
            Some(bytes) => out.extend_from_slice(&bytes[offset as usize..(offset + len) as usize]),
            None => extend_filler(out, salt, offset, len),
        }
    }
}

/// Encodes a content-free rewrite of a page's record, appending to `out`: `old` is the
/// page's record as stored (as [`encode_record`] wrote it) and `change` the update's new
/// change (ranges in any order); the new record holds `ranges`. A page offset that `old`
/// holds and `change` does not keeps its stored byte (it stands for content that did not
/// change, wherever the rewrite moves it in the record); every other byte is filler drawn
/// from `salt`.
///
/// Returns where the bytes that can differ from `old` resume: the record's leading
/// entries whose range `old`'s same entry has and no change range reaches are `old`'s
/// bytes at the same place (copied whole), so only the record's header and its bytes
/// from the returned offset on can differ from the stored record.
pub fn encode_rewrite_into(
    out: &mut Vec<u8>,
    ranges: &[(u32, u32)],
    fingerprint: u64,
    salt: u64,
    change: &[(u32, u32)],
    old: &[u8],
) -> usize {
    let old_count = usize::from(u16::from_le_bytes([old[0], old[1]]));
    let mut kept = (0, RECORD_HEADER_BYTES as usize);
    for &(offset, len) in ranges.iter().take(old_count) {
        let at = kept.1;
        let entry = u32::from(u16::from_le_bytes([old[at], old[at + 1]]));
        let entry_len = u32::from(u16::from_le_bytes([old[at + 2], old[at + 3]]));
        let reached = change.iter().any(|&(o, l)| o < offset + len && offset < o + l);
        if (entry, entry_len) != (offset, len) || reached {
            break;
        }
        kept = (kept.0 + 1, at + (RANGE_HEADER_BYTES + len) as usize);
    }
    out.reserve(record_bytes(ranges) as usize);
    out.extend_from_slice(&(ranges.len() as u16).to_le_bytes());
    out.extend_from_slice(&fingerprint.to_le_bytes());
    out.extend_from_slice(&old[RECORD_HEADER_BYTES as usize..kept.1]);
    encode_entries_keeping(out, &ranges[kept.0..], salt, change, old, kept);
    kept.1
}

/// [`encode_rewrite_into`] of an update whose change is the one non-empty range `change`,
/// the new record's ranges being `old`'s with `change` joined in as
/// [`nvmdb_workload::synth::union_range`] joins it. The ranges are found from `old`'s entry
/// headers, not given: the entries before the joined range and those after it are copied
/// whole (their bytes are kept and their ranges unchanged), and only the joined range is
/// encoded piece by piece. Appends the same bytes and returns the same offset as
/// [`encode_rewrite_into`] given those ranges; or, when the new record would exceed
/// `room` bytes, appends nothing and returns `None`.
pub fn encode_rewrite_one_into(
    out: &mut Vec<u8>,
    fingerprint: u64,
    salt: u64,
    change: (u32, u32),
    old: &[u8],
    room: usize,
) -> Option<usize> {
    assert!(change.1 > 0, "a change of one non-empty range");
    let count = usize::from(u16::from_le_bytes([old[0], old[1]]));
    let entry = |at: usize| {
        let offset = u32::from(u16::from_le_bytes([old[at], old[at + 1]]));
        (offset, u32::from(u16::from_le_bytes([old[at + 2], old[at + 3]])))
    };
    let next = |at: usize, len: u32| at + (RANGE_HEADER_BYTES + len) as usize;
    // As `union_range`: the entries ending before the change, then those it joins.
    let (mut start, mut end) = (change.0, change.0.saturating_add(change.1));
    let (mut i, mut at) = (0, RECORD_HEADER_BYTES as usize);
    while i < count && entry(at).0.saturating_add(entry(at).1) < start {
        at = next(at, entry(at).1);
        i += 1;
    }
    let (kept, joined_from) = (at, i);
    while i < count && entry(at).0 <= end {
        let (offset, len) = entry(at);
        (start, end) = (start.min(offset), end.max(offset.saturating_add(len)));
        at = next(at, len);
        i += 1;
    }
    let (joined, joined_end) = (i - joined_from, at);
    for _ in i..count {
        at = next(at, entry(at).1);
    }
    assert!(at <= old.len(), "log record overruns its space");
    let len = at - (joined_end - kept) + (RANGE_HEADER_BYTES + end - start) as usize;
    if len > room {
        return None;
    }
    out.reserve(len);
    out.extend_from_slice(&((count - joined + 1) as u16).to_le_bytes());
    out.extend_from_slice(&fingerprint.to_le_bytes());
    out.extend_from_slice(&old[RECORD_HEADER_BYTES as usize..kept]);
    out.extend_from_slice(&(start as u16).to_le_bytes());
    out.extend_from_slice(&((end - start) as u16).to_le_bytes());
    // The joined range: the joined entries' bytes outside the change kept, the rest filler.
    let (change_start, change_end) = (change.0, change.0 + change.1);
    let (mut p, mut from) = (start, kept);
    for _ in 0..joined {
        let (offset, len) = entry(from);
        let bytes = from + RANGE_HEADER_BYTES as usize;
        from = bytes + len as usize;
        if p < offset {
            extend_filler(out, salt, p, offset - p);
        }
        let entry_end = offset + len;
        let (a, b) = (change_start.clamp(offset, entry_end), change_end.clamp(offset, entry_end));
        out.extend_from_slice(&old[bytes..bytes + (a - offset) as usize]);
        if a < b {
            extend_filler(out, salt, a, b - a);
        }
        out.extend_from_slice(&old[bytes + (b - offset) as usize..from]);
        p = entry_end;
    }
    if p < end {
        extend_filler(out, salt, p, end - p);
    }
    out.extend_from_slice(&old[joined_end..at]);
    Some(kept)
}

/// Appends the entries of `ranges` for a content-free rewrite (see [`encode_rewrite_into`]),
/// taking kept bytes from `old`'s entries from `(entry, record offset)` `from` on, every
/// earlier entry of `old` lying before the first range.
fn encode_entries_keeping(
    out: &mut Vec<u8>,
    ranges: &[(u32, u32)],
    salt: u64,
    change: &[(u32, u32)],
    old: &[u8],
    from: (usize, usize),
) {
    let old_count = usize::from(u16::from_le_bytes([old[0], old[1]]));
    // The old entry under consideration: page offsets `start..end`, bytes from `old[at..]`.
    let (mut read, mut at, mut next_at) = (from.0, 0, from.1);
    let (mut start, mut end) = (0u32, 0u32);
    for &(offset, len) in ranges {
        out.extend_from_slice(&(offset as u16).to_le_bytes());
        out.extend_from_slice(&(len as u16).to_le_bytes());
        let (mut p, stop) = (offset, offset + len);
        while p < stop {
            while end <= p && read < old_count {
                start = u32::from(u16::from_le_bytes([old[next_at], old[next_at + 1]]));
                let n = u16::from_le_bytes([old[next_at + 2], old[next_at + 3]]);
                at = next_at + RANGE_HEADER_BYTES as usize;
                next_at = at + usize::from(n);
                assert!(next_at <= old.len(), "log record overruns its space");
                end = start + u32::from(n);
                read += 1;
            }
            // The end of a change range holding `p`, and the next change range's start.
            let (mut changed_to, mut next_change) = (None, u32::MAX);
            for &(o, l) in change {
                if o <= p && p < o + l {
                    changed_to = Some(o + l);
                } else if o > p {
                    next_change = next_change.min(o);
                }
            }
            let kept = changed_to.is_none() && start <= p && p < end;
            let to = match changed_to {
                _ if kept => stop.min(end).min(next_change),
                Some(e) => stop.min(e),
                None => stop.min(next_change).min(if p < start { start } else { u32::MAX }),
            };
            if kept {
                let from = at + (p - start) as usize;
                out.extend_from_slice(&old[from..from + (to - p) as usize]);
            } else {
                extend_filler(out, salt, p, to - p);
            }
            p = to;
        }
    }
}

/// Appends the filler bytes of page offsets `offset..offset + len` for the record with
/// `salt`. Page offsets `8k..8k + 8` take the little-endian bytes of one SplitMix64 output,
/// `splitmix64(salt ^ (k << 32))`: deterministic, pseudo-random, and a function of the
/// salt and the page offset alone, so a range reads the same filler however it is split.
fn extend_filler(out: &mut Vec<u8>, salt: u64, offset: u32, len: u32) {
    let word = |k: u32| splitmix64(salt ^ (u64::from(k) << 32)).to_le_bytes();
    let end = offset + len;
    let (first, last) = (offset / 8, end / 8);
    if first == last {
        out.extend_from_slice(&word(first)[(offset % 8) as usize..(end % 8) as usize]);
        return;
    }
    // A partial first word, whole words (8 bytes at a time, into the room reserved by the
    // caller), a partial last word.
    out.extend_from_slice(&word(first)[(offset % 8) as usize..]);
    for k in first + 1..last {
        out.extend_from_slice(&word(k));
    }
    out.extend_from_slice(&word(last)[..(end % 8) as usize]);
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

/// The ranges of a record written by [`encode_record`], into `out` (cleared first),
/// without copying its bytes; a malformed record is a broken invariant.
pub fn decode_ranges(bytes: &[u8], out: &mut Vec<(u32, u32)>) {
    out.clear();
    let count = usize::from(u16::from_le_bytes([bytes[0], bytes[1]]));
    let mut at = RECORD_HEADER_BYTES as usize;
    for _ in 0..count {
        let offset = u32::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
        let len = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]);
        at += RANGE_HEADER_BYTES as usize + usize::from(len);
        assert!(at <= bytes.len(), "log record overruns its space");
        out.push((offset, u32::from(len)));
    }
}

/// [`apply_record`] of the record encoded at the start of `bytes` ([`encode_record`]),
/// without decoding it into owned entries; a malformed record is a broken invariant.
pub fn apply_encoded(mut page: PageData, bytes: &[u8]) -> PageData {
    let count = usize::from(u16::from_le_bytes([bytes[0], bytes[1]]));
    let fingerprint = u64::from_le_bytes(bytes[2..10].try_into().expect("8 bytes"));
    let mut at = RECORD_HEADER_BYTES as usize;
    for _ in 0..count {
        let offset = usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
        let len = usize::from(u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]));
        at += RANGE_HEADER_BYTES as usize;
        assert!(at + len <= bytes.len(), "log record overruns its space");
        if let PageData::Bytes(page) = &mut page {
            page[offset..offset + len].copy_from_slice(&bytes[at..at + len]);
        }
        at += len;
    }
    identity_after(page, fingerprint)
}

/// [`apply_encoded`] for a page without bytes (content `none` and `fingerprint`), which a
/// record changes only in its content identity: `bytes` need hold only the record's header.
pub fn apply_encoded_identity(page: PageData, bytes: &[u8]) -> PageData {
    assert!(!matches!(page, PageData::Bytes(_)), "a page with bytes takes its record's bytes");
    identity_after(page, u64::from_le_bytes(bytes[2..10].try_into().expect("8 bytes")))
}

/// A page after a record carrying `fingerprint` (its bytes, if any, already applied).
fn identity_after(page: PageData, fingerprint: u64) -> PageData {
    match page {
        PageData::Bytes(b) => PageData::Bytes(b),
        PageData::Empty if fingerprint == 0 => PageData::Empty,
        _ => PageData::Fingerprint(fingerprint),
    }
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

/// Whether a record of `ranges` fits a log sector of `sector_bytes`.
pub fn fits(ranges: &[(u32, u32)], sector_bytes: u32) -> bool {
    record_bytes(ranges) <= sector_bytes
}

/// One update handed to a [`LogArea`].
#[derive(Debug, Clone, Copy)]
pub struct Update<'a> {
    /// Logical page.
    pub lpn: u64,
    /// Logical block (`lpn / pages_per_block`).
    pub lbn: u64,
    /// Page offset in its logical block.
    pub offset: u32,
    /// What changed against the page's current content (flash copy plus its records).
    pub change: &'a [(u32, u32)],
    /// Bytes mode: what changed against the flash copy alone (the PCM log folds a page's
    /// changes into one record against it). `None` in the other modes.
    pub base_change: Option<&'a [(u32, u32)]>,
    /// The new page bytes (bytes mode).
    pub page: Option<&'a [u8]>,
    /// The new content identity (fingerprint mode; 0 otherwise).
    pub fingerprint: u64,
    /// A number unique to this record (filler bytes in the content-free modes).
    pub salt: u64,
    /// The record's write sequence number, from the FTL's counter: a record applies to a
    /// page copy exactly when it is newer (recovery tells live records from stale ones).
    pub seq: u64,
}

/// What a [`LogArea`] did with an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Append {
    /// Logged, done at `done_ns`; `merge` names a logical block whose log region is now
    /// all altered and must be merged (the PCM log's trigger).
    Logged { done_ns: u64, merge: Option<u64> },
    /// No room: the layer merges this logical block (the policy's victim), then retries.
    NeedMerge(u64),
    /// The change cannot be logged (its record exceeds a sector, or the page's records a
    /// page): the layer writes the page out of place through the FTL.
    Unloggable,
}

/// Where and how a log scheme keeps its records. Implementations differ only in policy:
/// record placement, folding, and which block to merge when space runs out.
pub trait LogArea: std::fmt::Debug {
    /// Short name (`pcm-log`, `dpram`, `ipl`).
    fn name(&self) -> &'static str;
    /// Whether a logical page has records.
    fn has_records(&self, lpn: u64) -> bool;
    /// A page's records in the order they apply, and when they are read.
    fn records(&mut self, ftl: &mut PageFtl, lpn: u64, now_ns: u64) -> Result<(Vec<Record>, u64), FlashError>;
    /// Applies a page's records, in order, to `page` (its flash copy); returns the result
    /// and when the records are read.
    fn apply_records(
        &mut self,
        ftl: &mut PageFtl,
        lpn: u64,
        page: PageData,
        now_ns: u64,
    ) -> Result<(PageData, u64), FlashError> {
        let (records, t) = self.records(ftl, lpn, now_ns)?;
        Ok((apply_all(page, &records), t))
    }
    /// Applies the records of the pages a merge of one logical block reads, `pages` holding
    /// each page's flash copy (replaced by its current content); returns when the records
    /// are read. The default reads each page's records as a host read does; IPL, whose
    /// pages share log pages, reads each log page once.
    fn apply_block_records(
        &mut self,
        ftl: &mut PageFtl,
        pages: &mut [(u64, PageData)],
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let mut done_ns = now_ns;
        for (lpn, page) in pages.iter_mut() {
            if self.has_records(*lpn) {
                let (current, t) = self.apply_records(ftl, *lpn, std::mem::replace(page, PageData::Empty), now_ns)?;
                *page = current;
                done_ns = done_ns.max(t);
            }
        }
        Ok(done_ns)
    }
    /// Logs an update (see [`Append`]).
    fn append(&mut self, ftl: &mut PageFtl, update: &Update, now_ns: u64) -> Result<Append, FlashError>;
    /// Drops a page's records (it was written out of place or trimmed).
    fn drop_page(&mut self, ftl: &mut PageFtl, lpn: u64, now_ns: u64) -> Result<u64, FlashError>;
    /// Drops every record of a logical block after a merge wrote its pages.
    fn drop_block(&mut self, ftl: &mut PageFtl, lbn: u64, now_ns: u64) -> Result<u64, FlashError>;
    /// Offsets of the pages of a logical block that have records, ascending.
    fn logged_offsets(&self, lbn: u64) -> Vec<u32>;
    /// The logical blocks with at least one record that applies, ascending.
    fn logged_blocks(&self) -> Vec<u64>;
    /// The records that apply and the pages they apply to (`dram_pages` 0).
    fn pending(&self) -> Pending;
    /// The area's own invariants (and that every logged page is mapped in `ftl`).
    fn check(&self, ftl: &PageFtl) -> Result<(), String>;
    /// Rebuilds the area's volatile tables after a power loss from its persistent bytes
    /// (PCM, or flash through `ftl`, already recovered); `host_pages` bounds valid pages.
    fn recover(&mut self, ftl: &mut PageFtl, host_pages: u64) -> Result<(), FlashError>;
    /// The PCM device the area lives in, if any.
    fn pcm(&self) -> Option<&Pcm>;
    /// Zeroes device counters the area owns.
    fn reset_stats(&mut self);
    /// A host write of logical block `lbn` reached the layer (the PCM log's offline
    /// replacement bound counts references with it).
    fn host_write(&mut self, lbn: u64) {
        let _ = lbn;
    }
}

/// The encoded length of the record at the start of `bytes`, or `None` when the bytes do
/// not hold a whole record (an erased or torn area).
pub fn record_len(bytes: &[u8]) -> Option<usize> {
    let count = usize::from(u16::from_le_bytes(bytes.get(..2)?.try_into().ok()?));
    let mut at = RECORD_HEADER_BYTES as usize;
    for _ in 0..count {
        let len = usize::from(u16::from_le_bytes(bytes.get(at + 2..at + 4)?.try_into().ok()?));
        at += RANGE_HEADER_BYTES as usize + len;
    }
    (at <= bytes.len()).then_some(at)
}

/// Applies records, in order, to a page image.
pub fn apply_all(mut page: PageData, records: &[Record]) -> PageData {
    for record in records {
        page = apply_record(page, record);
    }
    page
}

#[cfg(test)]
mod tests {
    use nvmdb_device::{FlipNWrite, PcmAccounting, PcmConfig};
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

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
        let bytes = encode_record(&ranges, 0, Some(&new), 0);
        assert_eq!(bytes.len() as u32, record_bytes(&ranges));
        let record = decode_record(&bytes);
        let mut decoded = vec![(9, 9)];
        decode_ranges(&bytes, &mut decoded);
        assert_eq!(decoded, record.ranges());
        assert_eq!(apply_record(PageData::Bytes(old), &record), PageData::Bytes(new));
        let record = decode_record(&encode_record(&ranges, 42, None, 7));
        assert_eq!(apply_record(PageData::Empty, &record), PageData::Fingerprint(42));
    }

    #[test]
    fn an_encoded_record_applies_as_its_decoded_form() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
        for _ in 0..500 {
            let mut ranges = Vec::new();
            for _ in 0..rng.gen_range(0..5) {
                let len = rng.gen_range(0..200);
                nvmdb_workload::synth::union_range(&mut ranges, rng.gen_range(0..4096 - len), len);
            }
            let new: Vec<u8> = (0..4096).map(|_| rng.gen()).collect();
            let fingerprint = if rng.gen_bool(0.5) { 0 } else { rng.gen() };
            let salt = rng.gen();
            let pages = [
                PageData::Bytes((0..4096).map(|_| rng.gen()).collect()),
                PageData::Fingerprint(rng.gen()),
                PageData::Empty,
            ];
            for page in pages {
                for bytes in [Some(new.as_slice()), None] {
                    let mut encoded = encode_record(&ranges, fingerprint, bytes, salt);
                    let expected = apply_record(page.clone(), &decode_record(&encoded));
                    if !matches!(page, PageData::Bytes(_)) {
                        let header = &encoded[..RECORD_HEADER_BYTES as usize];
                        assert_eq!(apply_encoded_identity(page.clone(), header), expected);
                    }
                    // Trailing bytes (the rest of a sector) are not part of the record.
                    encoded.extend_from_slice(&[0xEE; 7]);
                    assert_eq!(apply_encoded(page.clone(), &encoded), expected);
                }
            }
        }
    }

    /// The whole record of a content-free rewrite, every entry encoded (the write path
    /// before [`encode_rewrite_into`] stored only what can differ).
    fn encode_whole_rewrite(
        out: &mut Vec<u8>,
        ranges: &[(u32, u32)],
        fingerprint: u64,
        salt: u64,
        change: &[(u32, u32)],
        old: &[u8],
    ) {
        out.extend_from_slice(&(ranges.len() as u16).to_le_bytes());
        out.extend_from_slice(&fingerprint.to_le_bytes());
        encode_entries_keeping(out, ranges, salt, change, old, (0, RECORD_HEADER_BYTES as usize));
    }

    /// A page's record on random content-free updates (first records, rewrites folding
    /// the change into it, records dropped when they outgrow the sector), kept in two PCM
    /// devices: one stores each rewrite's whole record as the write path did before
    /// [`encode_rewrite_into`], the other writes it without comparing the bytes that
    /// function says are kept. Both must read back the same records and count, time and
    /// wear the same.
    fn check_rewrites_skipping_kept_bytes(seed: u64, accounting: PcmAccounting, flip_n_write: Option<FlipNWrite>) {
        const SECTOR: u64 = 512;
        const HEADER: usize = 12;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut config = PcmConfig::new(4 * SECTOR);
        config.accounting = accounting;
        config.flip_n_write = flip_n_write;
        let (mut whole, mut known) = (Pcm::new(config).unwrap(), Pcm::new(config).unwrap());
        let (mut ranges, mut len, mut rewrites) = (Vec::new(), 0usize, 0);
        // A sector at a line boundary, as the area's sectors are (after its table).
        let addr = 64 * rng.gen_range(1..16);
        for step in 0..200 {
            let mut change = Vec::new();
            for _ in 0..rng.gen_range(1..=3) {
                let n = rng.gen_range(1..150);
                change.push((rng.gen_range(0..4096 - n), n));
            }
            let (salt, fingerprint) = (rng.gen::<u64>(), if rng.gen_bool(0.5) { 0 } else { rng.gen() });
            let mut record = rng.gen::<u64>().to_le_bytes().to_vec();
            record.extend_from_slice(&rng.gen::<u32>().to_le_bytes());
            let first = len == 0 || rng.gen_bool(0.1);
            if first {
                ranges.clear();
            }
            for &(o, n) in &change {
                nvmdb_workload::synth::union_range(&mut ranges, o, n);
            }
            if !fits(&ranges, SECTOR as u32 - HEADER as u32) {
                len = 0;
                continue;
            }
            if first {
                encode_record_into(&mut record, &ranges, fingerprint, None, salt);
                let t = whole.storage_write(addr, &record).unwrap();
                assert_eq!(known.storage_write(addr, &record).unwrap(), t);
                len = record.len();
                continue;
            }
            let (mut old, mut old_known) = (vec![0u8; len], vec![0u8; len]);
            let t = whole.storage_read(addr, &mut old).unwrap();
            assert_eq!(known.storage_read(addr, &mut old_known).unwrap(), t);
            assert_eq!(old, old_known, "step {step}: the stored records");
            let mut full = record.clone();
            encode_whole_rewrite(&mut full, &ranges, fingerprint, salt, &change, &old[HEADER..]);
            let kept = encode_rewrite_into(&mut record, &ranges, fingerprint, salt, &change, &old[HEADER..]);
            assert_eq!(record, full, "step {step}: the record");
            // Only the headers and the bytes from the kept entries' end on can differ.
            let unchanged = HEADER + RECORD_HEADER_BYTES as usize..HEADER + kept;
            assert_eq!(record[unchanged.clone()], old[unchanged.clone()], "step {step}");
            let t = whole.storage_write(addr, &full).unwrap();
            assert_eq!(known.storage_write_known(addr, &record, unchanged).unwrap(), t, "step {step}: time");
            assert_eq!(known.stats(), whole.stats(), "step {step}: counters");
            len = full.len();
            rewrites += 1;
        }
        assert!(rewrites > 50, "{rewrites} rewrites");
        let (mut a, mut b) = (vec![0u8; 4 * SECTOR as usize], vec![0u8; 4 * SECTOR as usize]);
        whole.peek_bytes(0, &mut a).unwrap();
        known.peek_bytes(0, &mut b).unwrap();
        assert!(a == b, "the devices hold different bytes");
        assert_eq!(known.wear_report(), whole.wear_report());
    }

    #[test]
    fn a_rewrite_that_skips_its_kept_bytes_stores_and_counts_the_whole_record() {
        let encodings = [None, Some(FlipNWrite::WORD), Some(FlipNWrite::new(8).unwrap())];
        for seed in 0..40 {
            for accounting in [PcmAccounting::Cells, PcmAccounting::Words] {
                check_rewrites_skipping_kept_bytes(seed, accounting, encodings[seed as usize % 3]);
            }
        }
    }

    #[test]
    fn a_rewrite_of_one_range_is_the_rewrite_of_the_joined_ranges() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
        let mut cases = 0;
        for _ in 0..3_000 {
            // A stored record of up to six ranges (some touching or a byte apart, so that
            // `union_range` joins them), with its own filler.
            let mut ranges = Vec::new();
            for _ in 0..rng.gen_range(0..6) {
                let len = rng.gen_range(1..120);
                nvmdb_workload::synth::union_range(&mut ranges, rng.gen_range(0..=4096 - len), len);
            }
            let old = encode_record(&ranges, rng.gen(), None, rng.gen());
            // A change at a random place, at an entry's edge, inside one, or over several.
            let change = match (rng.gen_range(0..4), ranges.len()) {
                (0, n) if n > 0 => {
                    let (o, l) = ranges[rng.gen_range(0..n)];
                    let at = if rng.gen_bool(0.5) { o.saturating_sub(rng.gen_range(0..3)) } else { o + l };
                    (at.min(4095), rng.gen_range(1..40).min(4096 - at.min(4095)))
                }
                (1, n) if n > 0 => {
                    let (o, l) = ranges[rng.gen_range(0..n)];
                    let at = o + rng.gen_range(0..l);
                    (at, rng.gen_range(1..=o + l - at))
                }
                (2, _) => {
                    let at = rng.gen_range(0..2048);
                    (at, rng.gen_range(1..2048))
                }
                _ => {
                    let len = rng.gen_range(1..150);
                    (rng.gen_range(0..=4096 - len), len)
                }
            };
            let mut joined = Vec::new();
            decode_ranges(&old, &mut joined);
            nvmdb_workload::synth::union_range(&mut joined, change.0, change.1);
            let (fingerprint, salt) = (rng.gen(), rng.gen());
            let prefix = rng.gen::<[u8; 12]>().to_vec();
            let (mut expected, mut got) = (prefix.clone(), prefix.clone());
            let kept = encode_rewrite_into(&mut expected, &joined, fingerprint, salt, &[change], &old);
            let len = record_bytes(&joined) as usize;
            assert_eq!(expected.len(), 12 + len);
            let room = if rng.gen_bool(0.2) { len - rng.gen_range(1..8) } else { len + rng.gen_range(0..8) };
            let written = encode_rewrite_one_into(&mut got, fingerprint, salt, change, &old, room);
            if len > room {
                assert_eq!((written, &got), (None, &prefix), "{ranges:?} {change:?}: no room, nothing written");
                continue;
            }
            assert_eq!(written, Some(kept), "{ranges:?} {change:?}");
            assert_eq!(got, expected, "{ranges:?} {change:?}");
            cases += usize::from(joined.len() < ranges.len() + 1);
        }
        assert!(cases > 500, "{cases} changes joined existing ranges");
    }

    #[test]
    fn filler_depends_on_salt_and_page_offset_only() {
        let filler = |salt: u64, ranges: &[(u32, u32)]| -> Vec<u8> {
            decode_record(&encode_record(ranges, 0, None, salt)).entries.into_iter().flat_map(|(_, b)| b).collect()
        };
        let whole = filler(5, &[(3, 150)]);
        assert_eq!(whole.len(), 150);
        // The same page offsets give the same bytes however the range is split.
        assert_eq!(filler(5, &[(3, 1), (4, 12), (16, 137)]), whole);
        assert_eq!(filler(5, &[(10, 20)]), whole[7..27]);
        assert_ne!(filler(6, &[(3, 150)]), whole, "another record, other bytes");
        // Page offsets 8k..8k + 8 are splitmix64(salt ^ (k << 32)), however long the range.
        let expected: Vec<u8> = (0..512u32).flat_map(|k| splitmix64(9 ^ (u64::from(k) << 32)).to_le_bytes()).collect();
        for (offset, len) in [(0, 4096), (5, 70), (8, 64), (1, 7), (60, 9)] {
            assert_eq!(filler(9, &[(offset, len)]), expected[offset as usize..(offset + len) as usize]);
        }
        // Pseudo-random: about half the bits of a page are ones.
        let ones: u32 = filler(9, &[(0, 4096)]).iter().map(|b| b.count_ones()).sum();
        assert!((15_800..=16_968).contains(&ones), "{ones} ones in 32,768 bits");
    }
}
