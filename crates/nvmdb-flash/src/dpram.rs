//! d-PRAM (Sun et al., HPCA 2010), "basic dynamic log assignment", as the thesis (seed 000,
//! Section 5.1.2) compares against it; a [`LogArea`] above the page-mapped FTL
//! ([`LogStore`]).
//!
//! The log region is a [`Pcm`] in storage mode divided into 64 B log units, each with a
//! 16 B header naming its page, record and part (so the assignment survives power loss)
//! and 48 B of record. An update is
//! appended as a new log record (its changed byte ranges, at most one log sector) in
//! units taken from a free pool, so a page's log grows dynamically with no per-page or
//! per-block reservation; unlike the thesis's scheme, records are appended, never
//! compared with and folded into earlier ones. Reads apply a page's records in order.
//! When the pool runs out, the block owning the oldest live record is merged (the basic
//! scheme has no popularity). A change whose record exceeds a log sector, or would make
//! the page's records exceed a page, is written out of place by the layer.

use std::collections::{BTreeMap, VecDeque};

use nvmdb_device::{Pcm, PcmConfig};

use crate::config::SsdConfig;
use crate::ftl::PageFtl;
use crate::layer::{FlashError, PageStore as _, Pending};
use crate::log_common::{
    decode_record, encode_record, fits, record_bytes, Append, LogArea, Record, SchemeParams, Update,
};
use crate::log_store::LogStore;

/// Bytes per log unit.
pub const UNIT_BYTES: u32 = 64;
/// Bytes of a unit's header: logical page (`u32`), the record's write sequence number
/// (`u64`), the unit's part number and the record's part count (`u8` each), and the
/// record's length (`u16`). Recovery rebuilds the log assignment from the headers alone.
pub const UNIT_HEADER_BYTES: u32 = 16;
/// Record bytes per unit.
pub const UNIT_PAYLOAD_BYTES: u32 = UNIT_BYTES - UNIT_HEADER_BYTES;

/// A record seen by recovery: its part count, length and units by part.
type FoundRecord = (u8, u32, Vec<Option<u32>>);

#[derive(Debug, Clone)]
struct DRecord {
    units: Vec<u32>,
    len: u32,
}

/// The d-PRAM log region.
#[derive(Debug)]
pub struct DpramArea {
    pcm: Pcm,
    pcm_free_at_ns: u64,
    sector_bytes: u32,
    page_bytes: u32,
    pages_per_block: u32,
    units: u32,
    free_units: VecDeque<u32>,
    /// Records of each logical page, in write order.
    logs: BTreeMap<u64, Vec<DRecord>>,
    /// Logical blocks with records, by the sequence number of their oldest record.
    oldest: BTreeMap<u64, u64>,
    oldest_of: BTreeMap<u64, u64>,
}

/// d-PRAM above the page-mapped FTL.
pub type DpramStore = LogStore<DpramArea>;

impl LogStore<DpramArea> {
    /// Builds the store from the configuration.
    pub fn new(config: &SsdConfig) -> Result<DpramStore, FlashError> {
        DpramStore::with_params(&SchemeParams::from_config(config))
    }

    /// Builds the store from explicit parameters.
    pub fn with_params(params: &SchemeParams) -> Result<DpramStore, FlashError> {
        let ftl = PageFtl::new(&params.config)?;
        let area = DpramArea::new(params, ftl.page_bytes(), ftl.geometry().pages_per_block)?;
        let host_pages = ftl.logical_pages();
        LogStore::over(ftl, area, host_pages, params.delta_policy(), params.merge_scope(), params.config.seed)
    }
}

impl DpramArea {
    /// A region of `params.pcm_bytes`.
    pub fn new(params: &SchemeParams, page_bytes: u32, pages_per_block: u32) -> Result<DpramArea, FlashError> {
        let units = params.pcm_bytes / u64::from(UNIT_BYTES);
        let sector_bytes = params.config.buffer.log_sector_bytes;
        if !(64..=4096).contains(&sector_bytes) {
            return Err(FlashError::Config(format!("buffer.log_sector_bytes must be 64..=4096, not {sector_bytes}")));
        }
        let sector_units = sector_bytes.div_ceil(UNIT_BYTES);
        if units < u64::from(sector_units) || units > u64::from(u32::MAX) {
            return Err(FlashError::Config(format!("buffer.pcm_mb gives {units} log units of 64 B")));
        }
        let mut config = PcmConfig::new(units * u64::from(UNIT_BYTES));
        config.storage = params.config.buffer.pcm_timing.timing();
        config.accounting = params.config.buffer.pcm_accounting;
        Ok(DpramArea {
            pcm: Pcm::new(config)?,
            pcm_free_at_ns: 0,
            sector_bytes,
            page_bytes,
            pages_per_block,
            units: units as u32,
            free_units: (0..units as u32).collect(),
            logs: BTreeMap::new(),
            oldest: BTreeMap::new(),
            oldest_of: BTreeMap::new(),
        })
    }

    fn pcm_op(&mut self, now_ns: u64, service_ns: u64) -> u64 {
        let start = now_ns.max(self.pcm_free_at_ns);
        self.pcm_free_at_ns = start + service_ns;
        self.pcm_free_at_ns
    }
}

impl LogArea for DpramArea {
    fn name(&self) -> &'static str {
        "dpram"
    }

    fn has_records(&self, lpn: u64) -> bool {
        self.logs.contains_key(&lpn)
    }

    fn records(&mut self, _ftl: &mut PageFtl, lpn: u64, now_ns: u64) -> Result<(Vec<Record>, u64), FlashError> {
        let records = self.logs.get(&lpn).cloned().unwrap_or_default();
        let mut done = now_ns;
        let mut out = Vec::with_capacity(records.len());
        for record in records {
            let mut bytes = Vec::with_capacity(record.units.len() * UNIT_PAYLOAD_BYTES as usize);
            for &unit in &record.units {
                let mut buf = vec![0u8; UNIT_PAYLOAD_BYTES as usize];
                let addr = u64::from(unit) * u64::from(UNIT_BYTES) + u64::from(UNIT_HEADER_BYTES);
                let ns = self.pcm.storage_read(addr, &mut buf)?;
                done = self.pcm_op(done, ns);
                bytes.extend_from_slice(&buf);
            }
            out.push(decode_record(&bytes[..record.len as usize]));
        }
        Ok((out, done))
    }

    fn append(&mut self, ftl: &mut PageFtl, update: &Update, now_ns: u64) -> Result<Append, FlashError> {
        let logged: u32 = self.logs.get(&update.lpn).map_or(0, |r| r.iter().map(|r| r.len).sum());
        if !fits(update.change, self.sector_bytes) || logged + record_bytes(update.change) > self.page_bytes {
            return Ok(Append::Unloggable);
        }
        let record = encode_record(update.change, update.fingerprint, update.page, update.salt);
        let needed = (record.len() as u32).div_ceil(UNIT_PAYLOAD_BYTES) as usize;
        if self.free_units.len() < needed {
            let (_, &victim) = self.oldest.iter().next().expect("an empty pool means some block holds records");
            return Ok(Append::NeedMerge(victim));
        }
        let mut ready_ns = now_ns;
        let units: Vec<u32> = self.free_units.drain(..needed).collect();
        let payload = UNIT_PAYLOAD_BYTES as usize;
        for (i, &unit) in units.iter().enumerate() {
            let mut bytes = Vec::with_capacity(UNIT_BYTES as usize);
            bytes.extend_from_slice(&(update.lpn as u32).to_le_bytes());
            bytes.extend_from_slice(&update.seq.to_le_bytes());
            bytes.extend_from_slice(&[i as u8, needed as u8]);
            bytes.extend_from_slice(&(record.len() as u16).to_le_bytes());
            bytes.extend_from_slice(&record[i * payload..record.len().min((i + 1) * payload)]);
            ftl.admit()?;
            let ns = self.pcm.storage_write(u64::from(unit) * u64::from(UNIT_BYTES), &bytes)?;
            ready_ns = self.pcm_op(ready_ns, ns);
        }
        self.logs.entry(update.lpn).or_default().push(DRecord { units, len: record.len() as u32 });
        if let std::collections::btree_map::Entry::Vacant(e) = self.oldest_of.entry(update.lbn) {
            e.insert(update.seq);
            self.oldest.insert(update.seq, update.lbn);
        }
        Ok(Append::Logged { done_ns: ready_ns, merge: None })
    }

    fn drop_page(&mut self, _ftl: &mut PageFtl, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        if let Some(records) = self.logs.remove(&lpn) {
            self.free_units.extend(records.into_iter().flat_map(|r| r.units));
        }
        let lbn = lpn / u64::from(self.pages_per_block);
        if self.logged_offsets(lbn).is_empty() {
            if let Some(seq) = self.oldest_of.remove(&lbn) {
                self.oldest.remove(&seq);
            }
        }
        Ok(now_ns)
    }

    fn drop_block(&mut self, ftl: &mut PageFtl, lbn: u64, now_ns: u64) -> Result<u64, FlashError> {
        for offset in self.logged_offsets(lbn) {
            self.drop_page(ftl, lbn * u64::from(self.pages_per_block) + u64::from(offset), now_ns)?;
        }
        Ok(now_ns)
    }

    fn logged_offsets(&self, lbn: u64) -> Vec<u32> {
        let m = u64::from(self.pages_per_block);
        self.logs.range(lbn * m..(lbn + 1) * m).map(|(&lpn, _)| (lpn % m) as u32).collect()
    }

    fn logged_blocks(&self) -> Vec<u64> {
        self.oldest_of.keys().copied().collect()
    }

    fn pending(&self) -> Pending {
        Pending {
            log_records: self.logs.values().map(|r| r.len() as u64).sum(),
            log_pages: self.logs.len() as u64,
            dram_pages: 0,
        }
    }

    fn check(&self, ftl: &PageFtl) -> Result<(), String> {
        let mut owner = vec![false; self.units as usize];
        let used = self.logs.values().flatten().flat_map(|r| r.units.iter());
        for &u in used.chain(self.free_units.iter()) {
            if std::mem::replace(&mut owner[u as usize], true) {
                return Err(format!("log unit {u} is owned twice"));
            }
        }
        if let Some(u) = owner.iter().position(|o| !o) {
            return Err(format!("log unit {u} is neither free nor in a record"));
        }
        if self.oldest.len() != self.oldest_of.len() {
            return Err("oldest-record index is inconsistent".into());
        }
        let m = u64::from(self.pages_per_block);
        for &lpn in self.logs.keys() {
            if !self.oldest_of.contains_key(&(lpn / m)) {
                return Err(format!("page {lpn} has records but its block is not in the victim order"));
            }
            if !ftl.is_mapped(lpn) {
                return Err(format!("page {lpn} has log records but no flash copy"));
            }
        }
        for &lbn in self.oldest_of.keys() {
            if self.logged_offsets(lbn).is_empty() {
                return Err(format!("block {lbn} is in the victim order but has no records"));
            }
        }
        Ok(())
    }

    fn recover(&mut self, ftl: &mut PageFtl, host_pages: u64) -> Result<(), FlashError> {
        // (lpn, seq) → (parts, record length, units by part).
        let mut found: BTreeMap<(u64, u64), FoundRecord> = BTreeMap::new();
        for unit in 0..self.units {
            let mut header = [0u8; UNIT_HEADER_BYTES as usize];
            self.pcm.storage_read(u64::from(unit) * u64::from(UNIT_BYTES), &mut header)?;
            let lpn = u64::from(u32::from_le_bytes(header[0..4].try_into().expect("4 bytes")));
            let seq = u64::from_le_bytes(header[4..12].try_into().expect("8 bytes"));
            let (part, parts) = (header[12], header[13]);
            let len = u32::from(u16::from_le_bytes([header[14], header[15]]));
            if seq == 0 || parts == 0 || part >= parts || lpn >= host_pages {
                continue;
            }
            ftl.note_seq(seq);
            if ftl.page_seq(lpn).is_none_or(|copy| seq <= copy) {
                continue;
            }
            let entry = found.entry((lpn, seq)).or_insert_with(|| (parts, len, vec![None; usize::from(parts)]));
            if entry.0 == parts && entry.1 == len {
                entry.2[usize::from(part)] = Some(unit);
            }
        }
        self.logs.clear();
        self.oldest.clear();
        self.oldest_of.clear();
        let mut owned = vec![false; self.units as usize];
        // Ascending (lpn, seq): each page's records in write order.
        for ((lpn, seq), (_, len, parts)) in found {
            let Some(units) = parts.into_iter().collect::<Option<Vec<u32>>>() else { continue };
            for &u in &units {
                owned[u as usize] = true;
            }
            self.logs.entry(lpn).or_default().push(DRecord { units, len });
            let lbn = lpn / u64::from(self.pages_per_block);
            let oldest = self.oldest_of.entry(lbn).or_insert(seq);
            *oldest = (*oldest).min(seq);
        }
        for (&lbn, &seq) in &self.oldest_of {
            self.oldest.insert(seq, lbn);
        }
        self.free_units = (0..self.units).filter(|&u| !owned[u as usize]).collect();
        Ok(())
    }

    fn pcm(&self) -> Option<&Pcm> {
        Some(&self.pcm)
    }

    fn reset_stats(&mut self) {
        self.pcm.reset_stats();
    }
}
