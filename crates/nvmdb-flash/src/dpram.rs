//! d-PRAM (Sun et al., HPCA 2010), "basic dynamic log assignment", as the thesis (seed 000,
//! Section 5.1.2) compares against it.
//!
//! The log region is a [`Pcm`] in storage mode divided into 64 B log units. An update is
//! appended as a new log record (its changed byte ranges, at most one log sector) in
//! units taken from a free pool, so a page's log grows dynamically with no per-page or
//! per-block reservation; unlike the thesis's scheme, records are appended, never
//! compared with and folded into earlier ones. Reads apply a page's records in order.
//! When the pool runs out, the block owning the oldest live record is merged (the basic
//! scheme has no popularity); a block is also merged when a change does not fit one log
//! sector or a page's records would exceed a page.

use std::collections::{BTreeMap, VecDeque};

use nvmdb_device::{PageContent, PageData, Pcm, PcmConfig};

use crate::config::SsdConfig;
use crate::layer::{FlashError, PageStore, StoreHealth, StoreStats};
use crate::log_common::{
    apply_record, decode_record, diff_ranges, encode_record, fingerprint_of, fits, BlockFlash, SchemeParams,
};

/// Bytes per log unit.
pub const UNIT_BYTES: u32 = 64;

#[derive(Debug, Clone)]
struct DRecord {
    units: Vec<u32>,
    len: u32,
}

/// d-PRAM over block-mapped flash.
#[derive(Debug)]
pub struct DpramStore {
    base: BlockFlash,
    pcm: Pcm,
    pcm_free_at_ns: u64,
    sector_bytes: u32,
    units: u32,
    free_units: VecDeque<u32>,
    /// Records of each logical page, in write order.
    logs: BTreeMap<u64, Vec<DRecord>>,
    /// Logical blocks with records, by the sequence number of their oldest record.
    oldest: BTreeMap<u64, u64>,
    oldest_of: BTreeMap<u64, u64>,
    next_seq: u64,
}

impl DpramStore {
    /// Builds the store from `[flash]`, `[ftl] overprovision`, `[buffer]` and `content`.
    pub fn new(config: &SsdConfig) -> Result<DpramStore, FlashError> {
        DpramStore::with_params(&SchemeParams::from_config(config))
    }

    /// Builds the store from explicit parameters.
    pub fn with_params(params: &SchemeParams) -> Result<DpramStore, FlashError> {
        let base = BlockFlash::new(params, params.geometry.pages_per_block)?;
        let units = params.pcm_bytes / u64::from(UNIT_BYTES);
        let sector_units = params.log_sector_bytes.div_ceil(UNIT_BYTES);
        if units < u64::from(sector_units) || units > u64::from(u32::MAX) {
            return Err(FlashError::Config(format!("buffer.pcm_mb gives {} log units of 64 B", units)));
        }
        let mut config = PcmConfig::new(units * u64::from(UNIT_BYTES));
        config.storage = params.pcm_timing;
        Ok(DpramStore {
            base,
            pcm: Pcm::new(config)?,
            pcm_free_at_ns: 0,
            sector_bytes: params.log_sector_bytes,
            units: units as u32,
            free_units: (0..units as u32).collect(),
            logs: BTreeMap::new(),
            oldest: BTreeMap::new(),
            oldest_of: BTreeMap::new(),
            next_seq: 0,
        })
    }

    /// Flash and PCM service time so far, ns (queueing excluded).
    pub fn busy_ns(&self) -> u64 {
        self.base.flash.stats().busy_ns + self.pcm.stats().storage_time_ns
    }

    /// Flash plus PCM energy so far, pJ (cheaper than [`PageStore::stats`]).
    pub fn energy_pj(&self) -> u64 {
        self.base.flash.stats().energy_pj + self.pcm.stats().storage_energy_pj
    }

    /// The PCM device (wear report, counters).
    pub fn pcm(&self) -> &Pcm {
        &self.pcm
    }

    fn pcm_op(&mut self, now_ns: u64, service_ns: u64) -> u64 {
        let start = now_ns.max(self.pcm_free_at_ns);
        self.pcm_free_at_ns = start + service_ns;
        self.pcm_free_at_ns
    }

    fn apply_logs(&mut self, lpn: u64, mut data: PageData, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let records = self.logs.get(&lpn).cloned().unwrap_or_default();
        let mut done = now_ns;
        for record in records {
            let mut bytes = Vec::with_capacity(record.units.len() * UNIT_BYTES as usize);
            for &unit in &record.units {
                let mut buf = vec![0u8; UNIT_BYTES as usize];
                let ns = self.pcm.storage_read(u64::from(unit) * u64::from(UNIT_BYTES), &mut buf)?;
                done = self.pcm_op(done, ns);
                bytes.extend_from_slice(&buf);
            }
            data = apply_record(data, &decode_record(&bytes[..record.len as usize]));
        }
        Ok((data, done))
    }

    fn current(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let (data, t) = self.base.read_base(lpn, now_ns)?;
        self.apply_logs(lpn, data, t)
    }

    fn drop_logs(&mut self, lpn: u64) {
        if let Some(records) = self.logs.remove(&lpn) {
            self.free_units.extend(records.into_iter().flat_map(|r| r.units));
        }
    }

    fn merge(&mut self, lbn: u64, replace: Option<(u32, PageData)>, now_ns: u64) -> Result<u64, FlashError> {
        let d = self.base.data_pages;
        let mut pages = Vec::with_capacity(d as usize);
        let mut ready_ns = now_ns;
        for offset in 0..d {
            let lpn = lbn * u64::from(d) + u64::from(offset);
            match &replace {
                _ if !self.base.is_valid(lpn) => pages.push(None),
                Some((o, data)) if *o == offset => pages.push(Some(data.clone())),
                _ => {
                    let (data, t) = self.current(lpn, now_ns)?;
                    ready_ns = ready_ns.max(t);
                    pages.push(Some(data));
                }
            }
            self.drop_logs(lpn);
        }
        if let Some(seq) = self.oldest_of.remove(&lbn) {
            self.oldest.remove(&seq);
        }
        self.base.merge(lbn, pages, ready_ns, 0)
    }

    /// Writes a page whose change since its previous write is `changed` (byte ranges);
    /// `None`: unknown — computed from the bytes in bytes mode, otherwise drawn from
    /// `buffer.delta_bytes_min..=max`.
    pub fn write_update(
        &mut self,
        lpn: u64,
        data: PageData,
        changed: Option<&[(u32, u32)]>,
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let (lbn, offset) = self.base.locate(lpn)?;
        self.base.stats.host_page_writes += 1;
        if !self.logs.contains_key(&lpn) {
            if let Some(done) = self.base.try_direct(lbn, offset, &data, now_ns)? {
                self.base.set_valid(lpn, true);
                return Ok(done);
            }
        }
        let (ranges, mut ready_ns) = match (&data, self.base.flash.content_mode()) {
            (PageData::Bytes(new), PageContent::Bytes) => {
                let (current, t) = self.current(lpn, now_ns)?;
                let PageData::Bytes(old) = current else { unreachable!("bytes mode reads bytes") };
                (Some(diff_ranges(&old, new)), t)
            }
            _ => (changed.map(<[_]>::to_vec).or_else(|| self.base.unknown_change(lpn)), now_ns),
        };
        self.base.set_valid(lpn, true);
        let logged: u32 = self.logs.get(&lpn).map_or(0, |r| r.iter().map(|r| r.len).sum());
        let Some(ranges) = ranges
            .filter(|r| fits(r, self.sector_bytes))
            .filter(|r| logged + crate::log_common::record_bytes(r) <= self.base.page_bytes())
        else {
            return self.merge(lbn, Some((offset, data)), now_ns);
        };
        let page = match &data {
            PageData::Bytes(b) => Some(b.as_slice()),
            _ => None,
        };
        let record = encode_record(&ranges, fingerprint_of(&data), page);
        let needed = (record.len() as u32).div_ceil(UNIT_BYTES) as usize;
        while self.free_units.len() < needed {
            let (_, &victim) = self.oldest.iter().next().expect("an empty pool means some block holds records");
            ready_ns = self.merge(victim, None, ready_ns)?;
        }
        // Were the page's own block the victim, its merged flash copy is the content the
        // record was computed against, so the record still applies.
        let units: Vec<u32> = self.free_units.drain(..needed).collect();
        for (i, &unit) in units.iter().enumerate() {
            let chunk = &record[i * UNIT_BYTES as usize..record.len().min((i + 1) * UNIT_BYTES as usize)];
            let ns = self.pcm.storage_write(u64::from(unit) * u64::from(UNIT_BYTES), chunk)?;
            ready_ns = self.pcm_op(ready_ns, ns);
        }
        self.logs.entry(lpn).or_default().push(DRecord { units, len: record.len() as u32 });
        if !self.oldest_of.contains_key(&lbn) {
            self.oldest_of.insert(lbn, self.next_seq);
            self.oldest.insert(self.next_seq, lbn);
        }
        self.next_seq += 1;
        Ok(ready_ns)
    }
}

impl PageStore for DpramStore {
    fn logical_pages(&self) -> u64 {
        self.base.logical_pages()
    }
    fn page_bytes(&self) -> u32 {
        self.base.page_bytes()
    }
    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        self.write_update(lpn, data, None, now_ns)
    }
    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        if self.base.begin_read(lpn)?.is_none() {
            return Ok((self.base.erased(), now_ns));
        }
        self.current(lpn, now_ns)
    }
    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        self.base.begin_trim(lpn)?;
        self.drop_logs(lpn);
        Ok(now_ns)
    }
    fn stats(&self) -> StoreStats {
        self.base.combined_stats_with_pcm(&self.pcm)
    }
    fn reset_stats(&mut self) {
        self.base.reset_stats();
        self.pcm.reset_stats();
    }
    fn health(&self) -> StoreHealth {
        self.base.health()
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.base.check_invariants()?;
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
        let d = u64::from(self.base.data_pages);
        for &lpn in self.logs.keys() {
            if !self.oldest_of.contains_key(&(lpn / d)) {
                return Err(format!("page {lpn} has records but its block is not in the victim order"));
            }
        }
        Ok(())
    }
}
