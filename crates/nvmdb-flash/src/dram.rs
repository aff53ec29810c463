//! The SSD's own DRAM write buffer (`[dram]`), a layer above the rest of the stack.
//!
//! A write goes to DRAM and is acknowledged at DRAM speed; the least recently used page
//! is written to the layer below when the buffer is full. Reads are served from DRAM when
//! the page is there. DRAM is volatile: on a power loss the buffered pages are lost,
//! unless `power_loss_protection` flushes them to the layer below first (the capacitors
//! of an enterprise SSD). The page contents sit in a [`Volatile`] device in bytes mode, so
//! its accesses are counted; the slot table is the controller's.

use std::collections::BTreeMap;

use nvmdb_device::{PageContent, PageData, PowerLoss, Volatile};

use crate::layer::{with_activity, FlashError, PageStore, Pending, StoreHealth, StoreStats};

/// A DRAM write buffer over another layer.
pub struct DramBuffer {
    inner: Box<dyn PageStore>,
    dram: Volatile,
    content: PageContent,
    capacity: usize,
    protected: bool,
    /// Buffered page → (its slot, its data outside bytes mode, last use).
    pages: BTreeMap<u64, (usize, PageData, u64)>,
    /// Last use → buffered page (the LRU order).
    order: BTreeMap<u64, u64>,
    free_slots: Vec<usize>,
    clock: u64,
    hits: u64,
    /// Host counters (the layer below counts what reaches it).
    host: StoreStats,
}

impl std::fmt::Debug for DramBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DramBuffer")
            .field("capacity", &self.capacity)
            .field("buffered", &self.pages.len())
            .field("protected", &self.protected)
            .finish_non_exhaustive()
    }
}

impl DramBuffer {
    /// A buffer of `pages` pages over `inner`.
    pub fn new(inner: Box<dyn PageStore>, pages: u64, protected: bool, content: PageContent) -> DramBuffer {
        let capacity = usize::try_from(pages).unwrap_or(usize::MAX);
        let slot_bytes = if content == PageContent::Bytes { inner.page_bytes() as usize } else { 0 };
        DramBuffer {
            dram: Volatile::dram(capacity.saturating_mul(slot_bytes)),
            inner,
            content,
            capacity,
            protected,
            pages: BTreeMap::new(),
            order: BTreeMap::new(),
            free_slots: (0..capacity).rev().collect(),
            clock: 0,
            hits: 0,
            host: StoreStats::default(),
        }
    }

    /// Reads served from DRAM.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    fn slot_addr(&self, slot: usize) -> u64 {
        slot as u64 * u64::from(self.inner.page_bytes())
    }

    /// Writes the least recently used page to the layer below.
    fn evict(&mut self, now_ns: u64) -> Result<u64, FlashError> {
        let (_, &lpn) = self.order.first_key_value().expect("a full buffer has pages");
        with_activity(self, nvmdb_device::Activity::Flush, |buffer| buffer.write_back(lpn, now_ns))
    }

    /// Writes every buffered page to the layer below, oldest first, each issued at
    /// `now_ns`; returns when the last is done.
    fn write_all_back(&mut self, now_ns: u64) -> Result<u64, FlashError> {
        let buffered: Vec<u64> = self.order.values().copied().collect();
        let mut done_ns = now_ns;
        for lpn in buffered {
            done_ns = done_ns.max(self.write_back(lpn, now_ns)?);
        }
        Ok(done_ns)
    }

    /// Writes a buffered page to the layer below; it leaves the buffer only once written.
    fn write_back(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let (slot, data, used) = self.pages.get(&lpn).cloned().expect("a buffered page has an entry");
        let (data, t) = self.load(slot, data, now_ns)?;
        let done_ns = self.inner.write(lpn, data, t)?;
        self.pages.remove(&lpn);
        self.order.remove(&used);
        self.free_slots.push(slot);
        Ok(done_ns)
    }

    fn load(&mut self, slot: usize, data: PageData, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        if self.content != PageContent::Bytes {
            return Ok((data, now_ns));
        }
        let mut bytes = vec![0u8; self.inner.page_bytes() as usize];
        let ns = self.dram.read(self.slot_addr(slot), &mut bytes)?;
        Ok((PageData::Bytes(bytes), now_ns + ns))
    }

    /// Forgets the buffered copy of a page, if any.
    fn discard(&mut self, lpn: u64) {
        if let Some((slot, _, used)) = self.pages.remove(&lpn) {
            self.order.remove(&used);
            self.free_slots.push(slot);
        }
    }

    fn touch(&mut self, lpn: u64) {
        self.clock += 1;
        if let Some(entry) = self.pages.get_mut(&lpn) {
            self.order.remove(&entry.2);
            entry.2 = self.clock;
            self.order.insert(self.clock, lpn);
        }
    }
}

impl PageStore for DramBuffer {
    fn logical_pages(&self) -> u64 {
        self.inner.logical_pages()
    }

    fn page_bytes(&self) -> u32 {
        self.inner.page_bytes()
    }

    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        if lpn >= self.logical_pages() {
            return Err(FlashError::OutOfRange { lpn, pages: self.logical_pages() });
        }
        self.host.host_page_writes += 1;
        let mut ready_ns = now_ns;
        if !self.pages.contains_key(&lpn) {
            if self.free_slots.is_empty() {
                ready_ns = self.evict(now_ns)?;
            }
            let slot = self.free_slots.pop().expect("a slot is free after an eviction");
            self.pages.insert(lpn, (slot, PageData::Empty, 0));
        }
        let slot = self.pages[&lpn].0;
        let kept = match (&data, self.content) {
            (PageData::Bytes(bytes), PageContent::Bytes) => {
                ready_ns += self.dram.write(self.slot_addr(slot), bytes)?;
                PageData::Empty
            }
            _ => data,
        };
        self.pages.get_mut(&lpn).expect("just inserted").1 = kept;
        self.touch(lpn);
        Ok(ready_ns)
    }

    /// Written through: a buffered copy of the page is dropped (the new content replaces
    /// it) and the page goes to the layer below as new content.
    fn write_new(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        if lpn >= self.logical_pages() {
            return Err(FlashError::OutOfRange { lpn, pages: self.logical_pages() });
        }
        self.host.host_page_writes += 1;
        self.discard(lpn);
        self.inner.write_new(lpn, data, now_ns)
    }

    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        self.host.host_page_reads += 1;
        match self.pages.get(&lpn) {
            Some((slot, data, _)) => {
                let (slot, data) = (*slot, data.clone());
                self.hits += 1;
                self.touch(lpn);
                self.load(slot, data, now_ns)
            }
            None => self.inner.read(lpn, now_ns),
        }
    }

    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        self.host.host_page_trims += 1;
        // Trimmed below first: until then the buffered copy is the page's content.
        let done_ns = self.inner.trim(lpn, now_ns)?;
        self.discard(lpn);
        Ok(done_ns)
    }

    fn stats(&self) -> StoreStats {
        StoreStats {
            host_page_writes: self.host.host_page_writes,
            host_page_reads: self.host.host_page_reads,
            host_page_trims: self.host.host_page_trims,
            ..self.inner.stats()
        }
    }

    fn reset_stats(&mut self) {
        self.inner.reset_stats();
        self.host = StoreStats::default();
        self.hits = 0;
    }

    fn check_invariants(&self) -> Result<(), String> {
        if self.pages.len() + self.free_slots.len() != self.capacity || self.order.len() != self.pages.len() {
            return Err("DRAM buffer: slots, pages and LRU order disagree".into());
        }
        self.inner.check_invariants()
    }

    /// Without protection the buffered pages are lost. With it, the capacitors keep the
    /// buffer alive while the layer below recovers from its devices, and then every
    /// buffered page (including one whose write-back the cut interrupted: a page leaves
    /// the buffer only once written below) is written to it, oldest first.
    fn power_cycle(&mut self) -> Result<(), FlashError> {
        self.inner.power_cycle()?;
        if self.protected {
            with_activity(self, nvmdb_device::Activity::Recovery, |buffer| buffer.write_all_back(0))?;
        }
        self.dram.power_loss();
        self.pages.clear();
        self.order.clear();
        self.free_slots = (0..self.capacity).rev().collect();
        Ok(())
    }

    fn power_switch(&mut self) -> Option<&mut nvmdb_device::PowerSwitch> {
        self.inner.power_switch()
    }

    fn pending(&self) -> Pending {
        Pending { dram_pages: self.pages.len() as u64, ..self.inner.pending() }
    }

    /// Writes every buffered page down (oldest first, as the capacitors of a protected
    /// buffer do), then drains the layer below.
    fn drain(&mut self, now_ns: u64) -> Result<u64, FlashError> {
        let written_ns = with_activity(self, nvmdb_device::Activity::Flush, |buffer| buffer.write_all_back(now_ns))?;
        self.inner.drain(written_ns)
    }

    fn health(&self) -> StoreHealth {
        self.inner.health()
    }
}
