//! The thesis's PCM log buffer (seed 000, Sections 3.2.3–3.2.5).
//!
//! The PCM log region is `n` P-blocks of `m` log sectors (`m` = pages per flash block,
//! sectors of `log_sector_bytes`, 512 B by default), preceded by the F-block → P-block
//! table (`n` rows of 16 B: F-block + 1 (0 = none), P-block, popularity). Everything lives
//! in a real [`Pcm`] in storage mode: every record and table update is written there, its
//! bits counted and its wear tracked. The controller keeps a mirror of the table and of
//! each sector's record length (metadata, as the thesis's "n × 3 array").
//!
//! Write cases (3.2.3): (1) the page is its flash block's next erased page: program it in
//! place; (2) the F-block has no P-block: take a free P-block, or replace the *least
//! popular* one (merging its F-block), then log; (3) the page already has a log record:
//! read it, compare, and rewrite the sector with the combined change against the flash
//! page; (4) the F-block has a P-block but the page no log: log it. The sector of a page is
//! its relative address in the block (`addr_update − addr_page` at page granularity), the
//! "simple hash". Popularity grows by one per update and is reset by a flush.
//!
//! A merge (3.2.4) reads the F-block and its log sectors, builds the up-to-date pages and
//! writes the whole block sequentially into a clean block, then erases the old one. A
//! merge also runs when a page's combined change no longer fits its sector. Reads apply
//! the log on the fly.

use std::collections::BTreeMap;

use nvmdb_device::{PageContent, PageData, Pcm, PcmConfig};

use crate::config::SsdConfig;
use crate::layer::{FlashError, PageStore, StoreHealth, StoreStats};
use crate::log_common::{
    apply_record, decode_record, diff_ranges, encode_record, fingerprint_of, fits, BlockFlash, SchemeParams,
};

/// Sorted, disjoint `(offset, len)` byte ranges of a page.
type Ranges = Vec<(u32, u32)>;

/// Bytes per F-block → P-block table row.
const TABLE_ROW_BYTES: u64 = 16;

#[derive(Debug, Clone, Copy, Default)]
struct PBlock {
    fblock: Option<u64>,
    popularity: u64,
}

/// The PCM log buffer over block-mapped flash.
#[derive(Debug)]
pub struct PcmLogStore {
    base: BlockFlash,
    pcm: Pcm,
    pcm_free_at_ns: u64,
    sector_bytes: u32,
    sectors_per_pblock: u32,
    table_bytes: u64,
    pblocks: Vec<PBlock>,
    fmap: BTreeMap<u64, u32>,
    /// Record length of each sector, 0 = no record.
    sector_len: Vec<u16>,
}

impl PcmLogStore {
    /// Builds the store from `[flash]`, `[ftl] overprovision`, `[buffer]` and `content`.
    pub fn new(config: &SsdConfig) -> Result<PcmLogStore, FlashError> {
        PcmLogStore::with_params(&SchemeParams::from_config(config))
    }

    /// Builds the store from explicit parameters.
    pub fn with_params(params: &SchemeParams) -> Result<PcmLogStore, FlashError> {
        let m = params.geometry.pages_per_block;
        let base = BlockFlash::new(params, m)?;
        let sector_bytes = params.log_sector_bytes;
        if !(64..=4096).contains(&sector_bytes) || sector_bytes > u32::from(u16::MAX) {
            return Err(FlashError::Config(format!("buffer.log_sector_bytes must be 64..=4096, not {sector_bytes}")));
        }
        let pblock_bytes = u64::from(m) * u64::from(sector_bytes);
        let n = params.pcm_bytes / (pblock_bytes + TABLE_ROW_BYTES);
        if n == 0 {
            return Err(FlashError::Config(format!(
                "buffer.pcm_mb gives {} bytes, less than one P-block of {pblock_bytes} bytes",
                params.pcm_bytes
            )));
        }
        let table_bytes = (n * TABLE_ROW_BYTES).div_ceil(64) * 64;
        let capacity = (table_bytes + n * pblock_bytes).div_ceil(64) * 64;
        let mut pcm_config = PcmConfig::new(capacity);
        pcm_config.storage = params.pcm_timing;
        Ok(PcmLogStore {
            base,
            pcm: Pcm::new(pcm_config)?,
            pcm_free_at_ns: 0,
            sector_bytes,
            sectors_per_pblock: m,
            table_bytes,
            pblocks: vec![PBlock::default(); n as usize],
            fmap: BTreeMap::new(),
            sector_len: vec![0; (n * u64::from(m)) as usize],
        })
    }

    /// P-blocks in the log region.
    pub fn pblocks(&self) -> usize {
        self.pblocks.len()
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

    fn sector_index(&self, pblock: u32, offset: u32) -> usize {
        (pblock * self.sectors_per_pblock + offset) as usize
    }

    fn sector_addr(&self, pblock: u32, offset: u32) -> u64 {
        self.table_bytes + self.sector_index(pblock, offset) as u64 * u64::from(self.sector_bytes)
    }

    fn pcm_op(&mut self, now_ns: u64, service_ns: u64) -> u64 {
        let start = now_ns.max(self.pcm_free_at_ns);
        self.pcm_free_at_ns = start + service_ns;
        self.pcm_free_at_ns
    }

    fn write_table_row(&mut self, pblock: u32, now_ns: u64) -> Result<u64, FlashError> {
        let row = self.pblocks[pblock as usize];
        let mut bytes = [0u8; TABLE_ROW_BYTES as usize];
        bytes[0..4].copy_from_slice(&(row.fblock.map_or(0, |f| f + 1) as u32).to_le_bytes());
        bytes[4..8].copy_from_slice(&pblock.to_le_bytes());
        bytes[8..16].copy_from_slice(&row.popularity.to_le_bytes());
        let ns = self.pcm.storage_write(u64::from(pblock) * TABLE_ROW_BYTES, &bytes)?;
        Ok(self.pcm_op(now_ns, ns))
    }

    /// Reads a page's log record, if it has one.
    fn read_record(
        &mut self,
        lbn: u64,
        offset: u32,
        now_ns: u64,
    ) -> Result<Option<(crate::log_common::Record, u64)>, FlashError> {
        let Some(&pblock) = self.fmap.get(&lbn) else { return Ok(None) };
        let len = self.sector_len[self.sector_index(pblock, offset)];
        if len == 0 {
            return Ok(None);
        }
        let mut buf = vec![0u8; usize::from(len)];
        let ns = self.pcm.storage_read(self.sector_addr(pblock, offset), &mut buf)?;
        Ok(Some((decode_record(&buf), self.pcm_op(now_ns, ns))))
    }

    /// Frees a P-block after its F-block was merged.
    fn release(&mut self, lbn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let Some(pblock) = self.fmap.remove(&lbn) else { return Ok(now_ns) };
        self.pblocks[pblock as usize] = PBlock::default();
        let first = self.sector_index(pblock, 0);
        self.sector_len[first..first + self.sectors_per_pblock as usize].fill(0);
        self.write_table_row(pblock, now_ns)
    }

    /// Merge: F-block pages + log sectors → up-to-date pages, written sequentially to a
    /// clean block; `replace` overrides one page with new data.
    fn merge(&mut self, lbn: u64, replace: Option<(u32, PageData)>, now_ns: u64) -> Result<u64, FlashError> {
        let m = self.base.data_pages;
        let mut pages = Vec::with_capacity(m as usize);
        let mut ready_ns = now_ns;
        let mut read_busy_ns = 0;
        for offset in 0..m {
            let lpn = lbn * u64::from(m) + u64::from(offset);
            if !self.base.is_valid(lpn) {
                pages.push(None);
                continue;
            }
            if let Some((o, data)) = &replace {
                if *o == offset {
                    pages.push(Some(data.clone()));
                    continue;
                }
            }
            let (mut data, t) = self.base.read_base(lpn, now_ns)?;
            read_busy_ns += t - now_ns.min(t);
            ready_ns = ready_ns.max(t);
            if let Some((record, t)) = self.read_record(lbn, offset, now_ns)? {
                data = apply_record(data, &record);
                ready_ns = ready_ns.max(t);
            }
            pages.push(Some(data));
        }
        let done = self.base.merge(lbn, pages, ready_ns, read_busy_ns)?;
        let released = self.release(lbn, done)?;
        Ok(done.max(released))
    }

    /// Case 2: the P-block of an F-block, allocating (and replacing the least popular
    /// P-block) when it has none.
    fn pblock_for(&mut self, lbn: u64, now_ns: u64) -> Result<(u32, u64), FlashError> {
        if let Some(&p) = self.fmap.get(&lbn) {
            return Ok((p, now_ns));
        }
        let mut ready_ns = now_ns;
        let free = self.pblocks.iter().position(|p| p.fblock.is_none());
        let pblock = match free {
            Some(p) => p as u32,
            None => {
                let victim = (0..self.pblocks.len())
                    .min_by_key(|&p| (self.pblocks[p].popularity, p))
                    .expect("at least one P-block");
                let fblock = self.pblocks[victim].fblock.expect("no free P-block means all are assigned");
                ready_ns = self.merge(fblock, None, now_ns)?;
                victim as u32
            }
        };
        self.pblocks[pblock as usize].fblock = Some(lbn);
        self.fmap.insert(lbn, pblock);
        Ok((pblock, ready_ns))
    }

    /// Writes a page whose change since its previous write is `changed` (byte ranges), as
    /// a synthetic trace knows it. `None`: unknown — computed from the bytes in bytes
    /// mode, otherwise drawn from `buffer.delta_bytes_min..=max`.
    pub fn write_update(
        &mut self,
        lpn: u64,
        data: PageData,
        changed: Option<&[(u32, u32)]>,
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let (lbn, offset) = self.base.locate(lpn)?;
        self.base.stats.host_page_writes += 1;
        let logged = self.fmap.get(&lbn).is_some_and(|&p| self.sector_len[self.sector_index(p, offset)] != 0);
        if !logged {
            if let Some(done) = self.base.try_direct(lbn, offset, &data, now_ns)? {
                self.base.set_valid(lpn, true);
                return Ok(done);
            }
        }
        let (ranges, ready_ns) = self.combined_change(lpn, lbn, offset, &data, changed, now_ns)?;
        let Some(ranges) = ranges.filter(|r| fits(r, self.sector_bytes)) else {
            self.base.set_valid(lpn, true);
            return self.merge(lbn, Some((offset, data)), now_ns);
        };
        let (pblock, ready_ns) = self.pblock_for(lbn, ready_ns)?;
        let page = match &data {
            PageData::Bytes(b) => Some(b.as_slice()),
            _ => None,
        };
        let record = encode_record(&ranges, fingerprint_of(&data), page);
        let ns = self.pcm.storage_write(self.sector_addr(pblock, offset), &record)?;
        let index = self.sector_index(pblock, offset);
        self.sector_len[index] = record.len() as u16;
        let done = self.pcm_op(ready_ns, ns);
        self.pblocks[pblock as usize].popularity += 1;
        let done = done.max(self.write_table_row(pblock, done)?);
        self.base.set_valid(lpn, true);
        Ok(done)
    }

    /// The change of the page against its flash copy, as one sorted range list; `None`
    /// for a whole-page change.
    fn combined_change(
        &mut self,
        lpn: u64,
        lbn: u64,
        offset: u32,
        data: &PageData,
        changed: Option<&[(u32, u32)]>,
        now_ns: u64,
    ) -> Result<(Option<Ranges>, u64), FlashError> {
        if let (PageContent::Bytes, PageData::Bytes(new)) = (self.base.flash.content_mode(), data) {
            let (base, t) = self.base.read_base(lpn, now_ns)?;
            let PageData::Bytes(old) = base else { unreachable!("bytes mode reads bytes") };
            return Ok((Some(diff_ranges(&old, new)), t));
        }
        let change = match changed {
            Some(c) => Some(c.to_vec()),
            None => self.base.unknown_change(lpn),
        };
        let Some(change) = change else { return Ok((None, now_ns)) };
        // Case 3: compare with the existing record; the sector keeps the union.
        let (mut ranges, ready_ns) = match self.read_record(lbn, offset, now_ns)? {
            Some((record, t)) => (record.ranges(), t),
            None => (Vec::new(), now_ns),
        };
        for (o, l) in change {
            nvmdb_workload::synth::union_range(&mut ranges, o, l);
        }
        Ok((Some(ranges), ready_ns))
    }
}

impl PageStore for PcmLogStore {
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
        let Some((lbn, offset)) = self.base.begin_read(lpn)? else {
            return Ok((self.base.erased(), now_ns));
        };
        let (data, t) = self.base.read_base(lpn, now_ns)?;
        match self.read_record(lbn, offset, now_ns)? {
            Some((record, t2)) => Ok((apply_record(data, &record), t.max(t2))),
            None => Ok((data, t)),
        }
    }
    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let (lbn, offset) = self.base.begin_trim(lpn)?;
        if let Some(&p) = self.fmap.get(&lbn) {
            let index = self.sector_index(p, offset);
            self.sector_len[index] = 0;
        }
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
        for (&f, &p) in &self.fmap {
            if self.pblocks[p as usize].fblock != Some(f) {
                return Err(format!("F-block {f} maps to P-block {p}, whose row says {:?}", self.pblocks[p as usize]));
            }
        }
        let assigned = self.pblocks.iter().filter(|p| p.fblock.is_some()).count();
        if assigned != self.fmap.len() {
            return Err(format!("{assigned} P-blocks assigned but {} F-blocks mapped", self.fmap.len()));
        }
        for (p, row) in self.pblocks.iter().enumerate() {
            let first = p * self.sectors_per_pblock as usize;
            let used = self.sector_len[first..first + self.sectors_per_pblock as usize].iter().any(|&l| l != 0);
            if row.fblock.is_none() && (used || row.popularity != 0) {
                return Err(format!("free P-block {p} holds records or popularity"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FlashSection, FtlSection};

    fn store(pblocks: u64) -> PcmLogStore {
        let base = SsdConfig::default();
        let config = SsdConfig {
            content: PageContent::Fingerprint,
            flash: FlashSection {
                packages: 1,
                planes_per_package: 1,
                blocks_per_plane: 8,
                pages_per_block: 4,
                ..base.flash
            },
            ftl: FtlSection { overprovision: 0.25, ..base.ftl },
            ..base
        };
        let mut params = SchemeParams::from_config(&config);
        params.pcm_bytes = pblocks * (4 * 512 + TABLE_ROW_BYTES);
        PcmLogStore::with_params(&params).unwrap()
    }

    #[test]
    fn least_popular_pblock_is_replaced_and_merged() {
        let mut s = store(2);
        assert_eq!(s.pblocks(), 2);
        // Load blocks 0, 1, 2 in order (case 1: direct programs, no log).
        for lpn in 0..12 {
            s.write_update(lpn, PageData::Fingerprint(lpn + 100), None, 0).unwrap();
        }
        assert_eq!(s.stats().merges, 0);
        let small = [(8u32, 40u32)];
        // Block 0 updated three times, block 1 once: both get P-blocks (cases 2 and 3/4).
        for (i, lpn) in [0u64, 1, 0].into_iter().enumerate() {
            s.write_update(lpn, PageData::Fingerprint(200 + i as u64), Some(&small), 0).unwrap();
        }
        s.write_update(5, PageData::Fingerprint(300), Some(&small), 0).unwrap();
        assert_eq!(s.fmap.len(), 2);
        // Block 2 needs a P-block: block 1 (popularity 1) is the victim, block 0 stays.
        s.write_update(9, PageData::Fingerprint(400), Some(&small), 0).unwrap();
        assert_eq!(s.stats().merges, 1);
        assert!(s.fmap.contains_key(&0) && s.fmap.contains_key(&2) && !s.fmap.contains_key(&1));
        // The merged block holds the update; the logged pages read through their logs.
        for (lpn, id) in [(5, 300), (0, 202), (1, 201), (9, 400), (4, 104)] {
            assert_eq!(s.read(lpn, 0).unwrap().0, PageData::Fingerprint(id), "page {lpn}");
        }
        s.check_invariants().unwrap();
    }

    #[test]
    fn case_three_keeps_the_union_of_changes_in_one_sector() {
        let mut s = store(2);
        for lpn in 0..4 {
            s.write_update(lpn, PageData::Fingerprint(lpn), None, 0).unwrap();
        }
        s.write_update(2, PageData::Fingerprint(10), Some(&[(0, 100)]), 0).unwrap();
        s.write_update(2, PageData::Fingerprint(11), Some(&[(50, 100)]), 0).unwrap();
        let (record, _) = s.read_record(0, 2, 0).unwrap().unwrap();
        assert_eq!(record.ranges(), vec![(0, 150)]);
        assert_eq!(record.fingerprint, 11);
        // A change beyond the sector's room merges the block instead.
        s.write_update(2, PageData::Fingerprint(12), Some(&[(1000, 600)]), 0).unwrap();
        assert_eq!(s.stats().merges, 1);
        assert!(s.read_record(0, 2, 0).unwrap().is_none());
        assert_eq!(s.read(2, 0).unwrap().0, PageData::Fingerprint(12));
    }
}
