//! The log layer above the page-mapped FTL: IPL, d-PRAM and the thesis's PCM log are each
//! a [`LogStore`] over one [`PageFtl`] (mapping, GC, wear levelling as in the baseline)
//! with its own [`LogArea`]. "The buffer of the SSD itself is not modified" (seed 000,
//! 3.2.1): the layer only decides which writes reach the FTL.
//!
//! A host write of logical page `p` is handled as follows.
//! 1. Case 1: `p` has no physical copy (a first write): it goes straight to the FTL.
//! 2. The change is found: in bytes mode by comparing the new bytes with the page's current
//!    content (flash copy plus records); otherwise the caller's change ranges, or for a
//!    content-free write the [`DeltaPolicy`] (within the host's byte range when it gave
//!    one). An empty change is a no-op.
//! 3. The area logs the change, or asks for a merge (no room: its policy names the victim
//!    block) and the layer retries, or refuses it (unloggable): then `p` is written out of
//!    place through the FTL like any page, and its records dropped.
//!
//! A merge of logical block `b` reads `b`'s live pages (those the FTL maps; or with
//! [`MergeScope::LoggedPages`] only those with records), applies their records, writes
//! them through the FTL as one sequential run (on one plane, or striped over the planes:
//! `buffer.merge_layout`), and then drops `b`'s records;
//! the old copies become garbage that the FTL's GC reclaims. A merge's flash time (its
//! reads and programs, and any GC it triggers beyond the FTL's own count) is counted in
//! `gc_time_ns`, the same way for every scheme.
//!
//! Recovery after a power loss (which may cut any device write: the FTL's
//! [`PowerSwitch`](nvmdb_device::PowerSwitch) is shared by the area's PCM writes) rests
//! on one rule: every record carries a write sequence number from the FTL's counter, and
//! it applies to a page only while it is newer than the page's flash copy (or trim
//! record). So a merge writes the block's pages before it drops their records, an
//! out-of-place write or a trim makes the page's records stale by writing to flash, and
//! the FTL recovers first, then the area ([`LogArea::recover`]) keeps only what is newer.

use nvmdb_device::{splitmix64, PageContent, PageData};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::ftl::PageFtl;
use crate::layer::{with_activity, FlashError, PageStore, Pending, StoreHealth, StoreStats};
use crate::log_common::{diff_ranges, fingerprint_of, Append, LogArea, Update};
pub use crate::log_common::{DeltaPolicy, MergeScope};

/// Byte ranges `(offset, len)` of a page.
type Ranges = Vec<(u32, u32)>;

/// How a host write starts ([`LogStore::start_write`]).
enum Started {
    /// Written straight through the FTL (case 1), done at this time.
    Done(u64),
    /// An update of a page with a flash copy, carrying this data.
    Update(PageData),
}

/// A log scheme above the page-mapped FTL.
#[derive(Debug)]
pub struct LogStore<A: LogArea> {
    ftl: PageFtl,
    area: A,
    host_pages: u64,
    pages_per_block: u32,
    delta: DeltaPolicy,
    merge_scope: MergeScope,
    delta_rng: Xoshiro256PlusPlus,
    salt_seed: u64,
    stats: StoreStats,
    /// Scratch ranges of a content-free update's change, reused.
    change_buf: Ranges,
}

impl<A: LogArea> LogStore<A> {
    /// A log layer exposing `host_pages` logical pages over `ftl`, with logical blocks of
    /// `pages_per_block` pages.
    pub fn over(
        ftl: PageFtl,
        area: A,
        host_pages: u64,
        delta: DeltaPolicy,
        merge_scope: MergeScope,
        seed: u64,
    ) -> Result<LogStore<A>, FlashError> {
        let pages_per_block = ftl.geometry().pages_per_block;
        if host_pages == 0 || host_pages > ftl.logical_pages() {
            return Err(FlashError::Config(format!(
                "the log layer exposes {host_pages} pages over an FTL of {}",
                ftl.logical_pages()
            )));
        }
        if let DeltaPolicy::Sampled { min, max } = delta {
            if min > max {
                return Err(FlashError::Config("buffer.delta_bytes_min exceeds buffer.delta_bytes_max".into()));
            }
        }
        Ok(LogStore {
            ftl,
            area,
            host_pages,
            pages_per_block,
            delta,
            merge_scope,
            delta_rng: DeltaPolicy::rng(seed),
            salt_seed: splitmix64(seed),
            stats: StoreStats::default(),
            change_buf: Vec::new(),
        })
    }

    /// The log area (tests, invariants, the experiments' counts of the area's own).
    pub fn area(&self) -> &A {
        &self.area
    }

    /// The log area, mutable (the areas' own hooks and unit tests in this crate).
    pub(crate) fn area_mut(&mut self) -> &mut A {
        &mut self.area
    }

    /// The FTL below.
    pub fn ftl(&self) -> &PageFtl {
        &self.ftl
    }

    /// Flash and PCM service time so far, ns (queueing excluded).
    pub fn busy_ns(&self) -> u64 {
        self.ftl.busy_ns() + self.area.pcm().map_or(0, |p| p.stats().storage_time_ns)
    }

    /// Flash plus PCM energy so far, pJ (cheaper than [`PageStore::stats`]).
    pub fn energy_pj(&self) -> u64 {
        self.ftl.energy_pj() + self.area.pcm().map_or(0, |p| p.stats().storage_energy_pj)
    }

    fn check_lpn(&self, lpn: u64) -> Result<(), FlashError> {
        if lpn >= self.host_pages {
            return Err(FlashError::OutOfRange { lpn, pages: self.host_pages });
        }
        Ok(())
    }

    /// The page's current content: flash copy plus records.
    fn current(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        let (base, t) = self.ftl.read(lpn, now_ns)?;
        if !self.area.has_records(lpn) {
            return Ok((base, t));
        }
        let (page, t2) = self.area.apply_records(&mut self.ftl, lpn, base, now_ns)?;
        Ok((page, t.max(t2)))
    }

    /// Bytes mode: what changed in `new` against the page's current content and against
    /// its flash copy alone (the same when the page has no records), and when the page's
    /// reads are done.
    fn bytes_changes(&mut self, lpn: u64, new: &[u8], now_ns: u64) -> Result<(Ranges, Ranges, u64), FlashError> {
        let (base, t) = self.ftl.read(lpn, now_ns)?;
        let PageData::Bytes(base) = base else { unreachable!("bytes mode reads bytes") };
        let base_change = diff_ranges(&base, new);
        if !self.area.has_records(lpn) {
            return Ok((base_change.clone(), base_change, t));
        }
        let (current, t2) = self.area.apply_records(&mut self.ftl, lpn, PageData::Bytes(base), now_ns)?;
        let PageData::Bytes(current) = current else { unreachable!("records keep bytes") };
        Ok((diff_ranges(&current, new), base_change, t.max(t2)))
    }

    /// The change of a content-free update: `written` is the host's byte range (or the
    /// whole page).
    fn unknown_change(&mut self, written: (u32, u32)) -> (u32, u32) {
        self.delta.draw(&mut self.delta_rng, written)
    }

    /// Writes a page whose change since its previous write is `changed` (byte ranges,
    /// exact, as a synthetic trace knows it). `None`: unknown — computed from the bytes in
    /// bytes mode, otherwise taken from the [`DeltaPolicy`].
    pub fn write_update(
        &mut self,
        lpn: u64,
        data: PageData,
        changed: Option<&[(u32, u32)]>,
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let whole = (0, self.ftl.page_bytes());
        self.write_inner(lpn, data, changed, whole, now_ns)
    }

    fn write_inner(
        &mut self,
        lpn: u64,
        data: PageData,
        changed: Option<&[(u32, u32)]>,
        written: (u32, u32),
        now_ns: u64,
    ) -> Result<u64, FlashError> {
        let data = match self.start_write(lpn, data, now_ns)? {
            Started::Done(done_ns) => return Ok(done_ns),
            Started::Update(data) => data,
        };
        let (change, base_change, ready_ns) = match (&data, self.ftl.content_mode()) {
            (PageData::Bytes(new), PageContent::Bytes) => {
                let (change, base_change, t) = self.bytes_changes(lpn, new, now_ns)?;
                (change, Some(base_change), t)
            }
            _ => {
                let mut change = std::mem::take(&mut self.change_buf);
                change.clear();
                match changed {
                    Some(c) => change.extend_from_slice(c),
                    None => change.push(self.unknown_change(written)),
                }
                (change, None, now_ns)
            }
        };
        let done = if change.is_empty() {
            self.stats.unchanged_writes += 1;
            Ok(ready_ns)
        } else {
            self.log_or_write(lpn, data, &change, base_change, ready_ns)
        };
        self.change_buf = change;
        done
    }

    /// What every host write starts with: it is counted, a page's bytes become its content
    /// identity in fingerprint mode (in flash and in records alike), and a page with no
    /// flash copy is written straight through the FTL (case 1; a page with records always
    /// has a flash copy).
    fn start_write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<Started, FlashError> {
        self.check_lpn(lpn)?;
        self.stats.host_page_writes += 1;
        self.area.host_write(lpn / u64::from(self.pages_per_block));
        let data = match (data, self.ftl.content_mode()) {
            (PageData::Bytes(b), PageContent::Fingerprint) => {
                PageData::Fingerprint(nvmdb_device::flash::fingerprint64(&b))
            }
            (d, _) => d,
        };
        if !self.ftl.is_mapped(lpn) {
            self.stats.direct_writes += 1;
            return Ok(Started::Done(self.ftl.write(lpn, data, now_ns)?));
        }
        Ok(Started::Update(data))
    }

    /// Writes an update out of place through the FTL; the page's records no longer apply.
    fn write_out_of_place(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        self.stats.out_of_place_writes += 1;
        let ready_ns = self.area.drop_page(&mut self.ftl, lpn, now_ns)?;
        self.ftl.write(lpn, data, ready_ns)
    }

    fn log_or_write(
        &mut self,
        lpn: u64,
        data: PageData,
        change: &[(u32, u32)],
        mut base_change: Option<Vec<(u32, u32)>>,
        mut ready_ns: u64,
    ) -> Result<u64, FlashError> {
        let lbn = lpn / u64::from(self.pages_per_block);
        loop {
            // Numbered after any merge of this loop, so newer than every page copy.
            let seq = self.ftl.next_write_seq();
            let update = Update {
                lpn,
                lbn,
                offset: (lpn % u64::from(self.pages_per_block)) as u32,
                change,
                base_change: base_change.as_deref(),
                page: match &data {
                    PageData::Bytes(b) => Some(b.as_slice()),
                    _ => None,
                },
                fingerprint: fingerprint_of(&data),
                salt: splitmix64(self.salt_seed ^ seq),
                seq,
            };
            match self.area.append(&mut self.ftl, &update, ready_ns)? {
                Append::Logged { done_ns, merge } => {
                    self.stats.logged_writes += 1;
                    return match merge {
                        Some(block) => self.merge(block, done_ns),
                        None => Ok(done_ns),
                    };
                }
                Append::NeedMerge(victim) => {
                    ready_ns = self.merge(victim, ready_ns)?;
                    if victim == lbn && base_change.is_some() {
                        // The merge made the flash copy current.
                        base_change = Some(change.to_vec());
                    }
                }
                Append::Unloggable => return self.write_out_of_place(lpn, data, ready_ns),
            }
        }
    }

    /// Merges logical block `lbn` (see the module docs), the power switch's activity set to
    /// a merge.
    fn merge(&mut self, lbn: u64, now_ns: u64) -> Result<u64, FlashError> {
        with_activity(self, nvmdb_device::Activity::Merge, |store| store.merge_block(lbn, now_ns))
    }

    /// [`LogStore::merge`]'s work.
    fn merge_block(&mut self, lbn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let busy_before = self.ftl.busy_ns();
        let gc_before = self.ftl.stats().gc_time_ns;
        let ppb = u64::from(self.pages_per_block);
        let offsets: Vec<u32> = match self.merge_scope {
            MergeScope::LiveBlock => (0..self.pages_per_block)
                .filter(|&o| lbn * ppb + u64::from(o) < self.host_pages && self.ftl.is_mapped(lbn * ppb + u64::from(o)))
                .collect(),
            MergeScope::LoggedPages => self.area.logged_offsets(lbn),
        };
        let mut pages = Vec::with_capacity(offsets.len());
        let mut ready_ns = now_ns;
        for offset in offsets {
            let lpn = lbn * ppb + u64::from(offset);
            let (data, t) = self.ftl.read(lpn, now_ns)?;
            ready_ns = ready_ns.max(t);
            pages.push((lpn, data));
        }
        ready_ns = ready_ns.max(self.area.apply_block_records(&mut self.ftl, &mut pages, now_ns)?);
        // The pages are durable in flash before their records go.
        let done_ns = self.ftl.write_run(&pages, ready_ns)?;
        let done_ns = self.area.drop_block(&mut self.ftl, lbn, done_ns)?;
        self.stats.merges += 1;
        self.stats.flushes += 1;
        self.stats.sequential_flushes += 1;
        self.stats.merge_page_writes += pages.len() as u64;
        let gc_during = self.ftl.stats().gc_time_ns - gc_before;
        self.stats.gc_time_ns += (self.ftl.busy_ns() - busy_before).saturating_sub(gc_during);
        Ok(done_ns)
    }
}

impl<A: LogArea> PageStore for LogStore<A> {
    fn logical_pages(&self) -> u64 {
        self.host_pages
    }

    fn page_bytes(&self) -> u32 {
        self.ftl.page_bytes()
    }

    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        self.write_update(lpn, data, None, now_ns)
    }

    fn write_range(&mut self, lpn: u64, data: PageData, written: (u32, u32), now_ns: u64) -> Result<u64, FlashError> {
        self.write_inner(lpn, data, None, written, now_ns)
    }

    /// Case 1 for a page with no flash copy, else out of place (counted as such), in every
    /// content mode and whatever the delta policy.
    fn write_new(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        match self.start_write(lpn, data, now_ns)? {
            Started::Done(done_ns) => Ok(done_ns),
            Started::Update(data) => self.write_out_of_place(lpn, data, now_ns),
        }
    }

    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        self.check_lpn(lpn)?;
        self.stats.host_page_reads += 1;
        self.current(lpn, now_ns)
    }

    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        self.check_lpn(lpn)?;
        self.stats.host_page_trims += 1;
        let now_ns = self.area.drop_page(&mut self.ftl, lpn, now_ns)?;
        self.ftl.trim(lpn, now_ns)
    }

    fn pending(&self) -> Pending {
        self.area.pending()
    }

    /// Merges every logical block with records that apply, in ascending order, each issued
    /// at `now_ns` as a merge during the run is (its reads, programs and the GC it causes
    /// counted in the same counters and in `gc_time_ns`).
    fn drain(&mut self, now_ns: u64) -> Result<u64, FlashError> {
        let mut done_ns = now_ns;
        for lbn in self.area.logged_blocks() {
            done_ns = done_ns.max(self.merge(lbn, now_ns)?);
        }
        Ok(done_ns)
    }

    fn power_cycle(&mut self) -> Result<(), FlashError> {
        with_activity(self, nvmdb_device::Activity::Recovery, |store| {
            store.ftl.power_cycle()?;
            store.area.recover(&mut store.ftl, store.host_pages)
        })
    }

    fn power_switch(&mut self) -> Option<&mut nvmdb_device::PowerSwitch> {
        self.ftl.power_switch()
    }

    fn stats(&self) -> StoreStats {
        let below = self.ftl.stats();
        let own = &self.stats;
        let mut s = StoreStats {
            host_page_writes: own.host_page_writes,
            host_page_reads: own.host_page_reads,
            host_page_trims: own.host_page_trims,
            merges: own.merges,
            flushes: own.flushes,
            sequential_flushes: own.sequential_flushes,
            gc_time_ns: below.gc_time_ns + own.gc_time_ns,
            direct_writes: own.direct_writes,
            logged_writes: own.logged_writes,
            out_of_place_writes: own.out_of_place_writes,
            unchanged_writes: own.unchanged_writes,
            merge_page_writes: own.merge_page_writes,
            ..below
        };
        if let Some(pcm) = self.area.pcm() {
            s.add_pcm(pcm);
            s.pcm_accounting = pcm.config().accounting;
            if !s.pcm_accounting.is_cells() {
                // Counted to the word only: the stack's other PCM (deduplication's) alone
                // would be a part passed off as the whole.
                s.pcm_bits_written = 0;
                s.pcm_max_cell_writes = 0;
            }
        }
        s
    }

    fn reset_stats(&mut self) {
        self.stats = StoreStats::default();
        self.ftl.reset_stats();
        self.area.reset_stats();
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.ftl.check_invariants()?;
        self.area.check(&self.ftl)
    }

    fn health(&self) -> StoreHealth {
        let mut h = self.ftl.health();
        // IPL's log pages are mapped in the FTL but hold no host data.
        h.mapped_pages = (0..self.host_pages).filter(|&p| self.ftl.is_mapped(p)).count() as u64;
        h
    }
}
