//! The eNVy controller: page table, copy-on-write into the SRAM FIFO buffer, flushing,
//! segment cleaning, wear levelling, shadow-copy transactions and recovery.
//!
//! Every persistent fact is bytes in the [`Devices`]; the fields of [`Envy`] besides
//! `dev` are volatile tables that [`Envy::open`] rebuilds from those bytes.

use std::collections::BTreeSet;

mod clean;
mod transaction;

use nvmdb_device::{Activity, FlashTiming};
use nvmdb_memory::Scalar;

use crate::config::EnvyConfig;
use crate::devices::Devices;
use crate::error::EnvyError;
use crate::layout::{header, Entry, Layout, CLEAN_RECORD, MAGIC, PHASE_COPYING, PHASE_IDLE};
use crate::policy::{PartitionCost, Redistribution, Room};
use crate::stats::{EnvyEnergy, EnvyStats};

/// Not a position: a spare segment.
const SPARE_POSITION: u32 = u32::MAX;

/// Cleans between halvings of the partitions' cost counters, per partition.
const COST_WINDOW_PER_PARTITION: u64 = 16;

/// A recovery that failed: why, and the devices, to recover from again.
#[derive(Debug)]
pub struct RecoveryFailure {
    /// Why it failed (a power cut during recovery, or an unformatted SRAM).
    pub error: EnvyError,
    /// The devices as the failure left them.
    pub devices: Devices,
}

impl RecoveryFailure {
    fn boxed(error: EnvyError, devices: Devices) -> Box<RecoveryFailure> {
        Box::new(RecoveryFailure { error, devices })
    }
}

/// A clean's redistribution and the positions it involves.
#[derive(Debug, Clone, Copy, Default)]
struct Plan {
    red: Redistribution,
    /// The lower neighbour's active position (receives pages).
    down: Option<u32>,
    /// The upper neighbour's active position (receives and gives pages).
    up: Option<u32>,
    /// The lower neighbour's oldest position (gives pages).
    down_source: Option<u32>,
    room: Room,
}

/// An eNVy system. A clone is another system in the same state, devices included.
#[derive(Debug, Clone)]
pub struct Envy {
    config: EnvyConfig,
    layout: Layout,
    dev: Devices,
    /// Per flash page: owning logical page + 1, or 0.
    owner: Vec<u32>,
    /// Per flash page: shadow-list index + 1 of the transaction pre-image it holds, or 0.
    flash_shadow: Vec<u32>,
    /// Per buffer slot: shadow-list index + 1 of the pre-image it holds, or 0.
    slot_shadow: Vec<u32>,
    /// Per segment: pages owned or shadowed.
    live: Vec<u32>,
    /// Per position: its segment.
    segment_of: Vec<u32>,
    /// Per segment: its position, or `SPARE_POSITION`.
    position_of: Vec<u32>,
    /// Per position: sequence number of its last clean (0: never).
    last_clean: Vec<u64>,
    clean_seq: u64,
    /// Per partition: the position flushes fill.
    actives: Vec<u32>,
    /// The spare ring: erased segments no position holds.
    spares: Vec<u32>,
    /// Index into `spares` of the spare the next clean copies into.
    spare_next: u32,
    head: u64,
    tail: u64,
    /// Logical pages shadowed by the open transaction.
    txn_pages: Option<BTreeSet<u32>>,
    txn_count: u32,
    costs: Vec<PartitionCost>,
    /// Per buffer slot: when its last flush completes, ns.
    slot_free_at_ns: Vec<u64>,
    /// When the controller's current long operation ends (serial banks), ns.
    controller_free_ns: u64,
    now_ns: u64,
    stats: EnvyStats,
    /// The devices' energy counters when `stats` started.
    energy_base: EnvyEnergy,
    /// The devices' per-bank busy times when `stats` started.
    bank_busy_base: Vec<u64>,
    /// Before each erase, scan the SRAM page table and shadow list for a page of the
    /// segment ([`Envy::set_erase_checks`]).
    erase_checks: bool,
    /// A clean's list of the victim's live pages, kept between cleans so that none
    /// allocates (volatile scratch).
    live_scratch: Vec<u64>,
}

impl Envy {
    /// Formats fresh devices and opens the system.
    pub fn format(config: EnvyConfig) -> Result<Envy, EnvyError> {
        let mut dev = Devices::new(&config)?;
        let layout = Layout::new(&config);
        let positions = config.positions();
        for p in 0..positions {
            dev.set_u32(layout.positions + 16 * u64::from(p), p)?;
        }
        let k = config.cleaning.partition_segments(positions);
        for q in 0..positions.div_ceil(k) {
            dev.set_u32(layout.actives + 4 * u64::from(q), q * k)?;
        }
        for (i, segment) in (positions..config.segments).enumerate() {
            dev.set_u32(layout.spares + 4 * i as u64, segment)?;
        }
        dev.set_u32(header::SPARES, config.spare_segments)?;
        let geometry = [config.page_bytes, config.pages_per_segment, config.segments, config.buffer_pages];
        let bytes: Vec<u8> = geometry.iter().flat_map(|v| v.to_le_bytes()).collect();
        dev.sram_write(header::GEOMETRY, &bytes)?;
        dev.set_u64(header::LOGICAL_PAGES, config.logical_pages)?;
        // The magic last: a cut before it leaves an unformatted SRAM.
        dev.set_u64(header::MAGIC, MAGIC)?;
        Envy::open(config, dev)
    }

    /// Recovers a system from its persistent devices: rebuilds every volatile table from
    /// the SRAM and flash, finishes an interrupted clean, and rolls back a transaction
    /// that had not committed.
    pub fn open(config: EnvyConfig, dev: Devices) -> Result<Envy, EnvyError> {
        Envy::recover(config, dev).map_err(|failure| failure.error)
    }

    /// [`Envy::open`], giving the devices back when it fails (a cut during recovery
    /// leaves them to be recovered again).
    /// Its device writes are reported as [`Activity::Recovery`].
    pub fn recover(config: EnvyConfig, mut dev: Devices) -> Result<Envy, Box<RecoveryFailure>> {
        dev.set_activity(Activity::Recovery);
        let mut envy = Envy::load(config, dev)?;
        if let Err(error) = envy.resume_clean() {
            return Err(RecoveryFailure::boxed(error, envy.dev));
        }
        if envy.txn_pages.is_some() {
            if let Err(error) = envy.abort() {
                return Err(RecoveryFailure::boxed(error, envy.dev));
            }
        }
        envy.check_invariants();
        envy.dev.set_activity(Activity::Host);
        Ok(envy)
    }

    /// Runs `work` with the devices' writes reported as `activity`, then sets back what
    /// the controller was doing.
    #[inline]
    fn doing<T>(
        &mut self,
        activity: Activity,
        work: impl FnOnce(&mut Envy) -> Result<T, EnvyError>,
    ) -> Result<T, EnvyError> {
        let was = self.dev.set_activity(activity);
        let out = work(self);
        self.dev.set_activity(was);
        out
    }

    /// Checks the SRAM's format and rebuilds the volatile tables.
    fn load(config: EnvyConfig, mut dev: Devices) -> Result<Envy, Box<RecoveryFailure>> {
        if let Err(error) = config.validate() {
            return Err(RecoveryFailure::boxed(error, dev));
        }
        let layout = Layout::new(&config);
        if dev.sram().capacity_bytes() as u64 != layout.total_bytes {
            return Err(Box::new(RecoveryFailure {
                error: EnvyError::NotFormatted("SRAM size differs from the configuration's layout".into()),
                devices: dev,
            }));
        }
        if dev.sram_u64(header::MAGIC) != MAGIC {
            return Err(RecoveryFailure::boxed(EnvyError::NotFormatted("no magic".into()), dev));
        }
        let geometry: Vec<u32> = (0..4).map(|i| dev.sram_u32(header::GEOMETRY + 4 * i)).collect();
        let want = [config.page_bytes, config.pages_per_segment, config.segments, config.buffer_pages];
        if geometry != want
            || dev.sram_u64(header::LOGICAL_PAGES) != config.logical_pages
            || dev.sram_u32(header::SPARES) != config.spare_segments
        {
            return Err(Box::new(RecoveryFailure {
                error: EnvyError::NotFormatted(format!("formatted geometry {geometry:?} differs")),
                devices: dev,
            }));
        }
        let positions = config.positions();
        let k = config.cleaning.partition_segments(positions);
        let partitions = positions.div_ceil(k);
        let flash_pages = config.flash_pages() as usize;
        let mut envy = Envy {
            layout,
            owner: vec![0; flash_pages],
            flash_shadow: vec![0; flash_pages],
            slot_shadow: vec![0; config.buffer_pages as usize],
            live: vec![0; config.segments as usize],
            segment_of: (0..positions).map(|p| dev.sram_u32(layout.positions + 16 * u64::from(p))).collect(),
            position_of: vec![SPARE_POSITION; config.segments as usize],
            last_clean: (0..positions).map(|p| dev.sram_u64(layout.positions + 16 * u64::from(p) + 8)).collect(),
            clean_seq: 0,
            actives: (0..partitions).map(|q| dev.sram_u32(layout.actives + 4 * u64::from(q))).collect(),
            spares: (0..config.spare_segments).map(|i| dev.sram_u32(layout.spares + 4 * u64::from(i))).collect(),
            spare_next: dev.sram_u32(header::SPARE_NEXT),
            head: dev.sram_u64(header::HEAD_SEQ),
            tail: dev.sram_u64(header::TAIL_SEQ),
            txn_pages: None,
            txn_count: 0,
            costs: vec![PartitionCost::default(); partitions as usize],
            slot_free_at_ns: vec![0; config.buffer_pages as usize],
            controller_free_ns: 0,
            now_ns: 0,
            stats: EnvyStats::default(),
            energy_base: EnvyEnergy::default(),
            bank_busy_base: Vec::new(),
            erase_checks: false,
            live_scratch: Vec::new(),
            config,
            dev,
        };
        envy.rebuild_tables();
        envy.energy_base = envy.device_energy();
        envy.bank_busy_base = envy.dev.bank_busy_ns().to_vec();
        Ok(envy)
    }

    /// Rebuilds the volatile tables from the SRAM's page table, position table and
    /// shadow list. A clean may be in progress, so a segment may be both a position's and
    /// in the spare ring, or in neither.
    fn rebuild_tables(&mut self) {
        self.clean_seq = self.last_clean.iter().copied().max().unwrap_or(0);
        for (p, &s) in self.segment_of.iter().enumerate() {
            assert_eq!(self.position_of[s as usize], SPARE_POSITION, "segment {s} holds two positions");
            self.position_of[s as usize] = p as u32;
        }
        let window = self.head - self.tail;
        assert!(window <= u64::from(self.config.buffer_pages), "buffer holds {window} pages");
        for lpn in 0..self.config.logical_pages {
            match self.entry(lpn as u32) {
                Entry::Unmapped => {}
                Entry::Flash(ppn) => self.own(ppn, lpn as u32),
                Entry::Sram(slot) => assert!(self.slot_in_window(slot), "page {lpn} maps to a free buffer slot"),
            }
        }
        let txn = self.dev.sram_u64(header::TXN);
        if txn & 0xFFFF_FFFF == 1 {
            self.txn_count = (txn >> 32) as u32;
            self.txn_pages = Some(BTreeSet::new());
            for k in 0..self.txn_count {
                let (lpn, old) = self.shadow_entry(k);
                self.txn_pages.as_mut().expect("open").insert(lpn);
                if self.entry(lpn) == old {
                    // Cut between recording the shadow and the copy: nothing moved.
                    continue;
                }
                match old {
                    Entry::Flash(ppn) => self.mark_flash_shadow(ppn, k),
                    Entry::Sram(slot) => self.slot_shadow[slot as usize] = k + 1,
                    Entry::Unmapped => {}
                }
            }
        }
    }

    /// Finishes a clean the power cut interrupted.
    fn resume_clean(&mut self) -> Result<(), EnvyError> {
        let phase = self.dev.sram_u32(CLEAN_RECORD);
        if phase == PHASE_IDLE {
            return Ok(());
        }
        let position = self.dev.sram_u32(CLEAN_RECORD + 4);
        let victim = self.dev.sram_u32(CLEAN_RECORD + 8);
        let dest = self.dev.sram_u32(CLEAN_RECORD + 12);
        self.stats.cleans_resumed += 1;
        if phase == PHASE_COPYING && self.segment_of[position as usize] == victim {
            self.adopt_interrupted_copy(victim, dest)?;
            self.copy_out(victim, dest, Redistribution::default(), None, None)?;
        }
        self.finish_clean(position, victim, dest)
    }

    /// Turns on (or off) the erase check: before the cleaner erases a segment, it
    /// asserts that neither the page table nor the open transaction's shadow list in
    /// SRAM names a page of it. Each erase then reads the whole page table (and counts
    /// those SRAM reads), so tests turn it on; off, the cleaner asserts only that the
    /// segment's live count is 0. Not persistent: a recovered system starts with it off.
    pub fn set_erase_checks(&mut self, on: bool) {
        self.erase_checks = on;
    }

    /// The configuration.
    pub fn config(&self) -> &EnvyConfig {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> &EnvyStats {
        &self.stats
    }

    /// Sets the counters, e.g. to carry them across a recovery.
    pub fn restore_stats(&mut self, stats: EnvyStats) {
        self.stats = stats;
    }

    /// Zeroes the counters.
    pub fn reset_stats(&mut self) {
        self.stats = EnvyStats::default();
        self.energy_base = self.device_energy();
        self.bank_busy_base = self.dev.bank_busy_ns().to_vec();
    }

    /// Per bank, the time its flash operations took since the system was opened or its
    /// counters reset, ns. With the banks working in parallel, a run's flash work cannot
    /// finish sooner than the busiest bank's time.
    pub fn bank_busy_ns(&self) -> Vec<u64> {
        self.dev.bank_busy_ns().iter().zip(&self.bank_busy_base).map(|(now, base)| now - base).collect()
    }

    /// Device energy since the system was opened or its counters were last reset
    /// (`restore_stats` does not restore it).
    pub fn energy(&self) -> EnvyEnergy {
        let now = self.device_energy();
        EnvyEnergy {
            flash_pj: now.flash_pj.saturating_sub(self.energy_base.flash_pj),
            sram_pj: now.sram_pj.saturating_sub(self.energy_base.sram_pj),
        }
    }

    fn device_energy(&self) -> EnvyEnergy {
        EnvyEnergy { flash_pj: self.dev.flash().stats().energy_pj, sram_pj: self.dev.sram().stats().energy_pj }
    }

    /// The devices.
    pub fn devices(&self) -> &Devices {
        &self.dev
    }

    /// Gives up the devices (what survives a power cut).
    pub fn into_devices(self) -> Devices {
        self.dev
    }

    /// Cuts the power before device write number `index` (see
    /// [`Devices::cut_power_before`]).
    pub fn cut_power_before(&mut self, index: u64) {
        self.dev.cut_power_before(index);
    }

    /// The simulated host time, ns.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Moves the host time forward to `t_ns` (never back).
    #[inline]
    pub fn advance_to(&mut self, t_ns: u64) {
        self.now_ns = self.now_ns.max(t_ns);
    }

    /// Changes the flash's speed and parallelism: its timing (`flash`), its banks and
    /// whether they work in parallel, for the next operations. Only an idle system
    /// (its flash done with the work issued, [`Envy::flash_idle_at_ns`] not after
    /// [`Envy::now_ns`]) may change, and the banks must divide the segments. Nothing
    /// else changes: no cleaning, placement or wear-levelling decision reads a time, so a
    /// system changed so runs from here as one built with this timing and these banks
    /// that took the same operations (`tests/integration/retime.rs`); the banks' busy times and the
    /// counters restart from zero. For runs that copy one aged system ([`Clone`]) and
    /// vary the hardware's speed.
    pub fn retime(&mut self, flash: FlashTiming, banks: u32, parallel_banks: bool) -> Result<(), EnvyError> {
        if self.flash_idle_at_ns() > self.now_ns {
            return Err(EnvyError::Config("retime of a system whose flash is still busy".into()));
        }
        let config = EnvyConfig { flash, banks, parallel_banks, ..self.config };
        config.validate()?;
        self.dev.retime(&config)?;
        self.config = config;
        self.reset_stats();
        Ok(())
    }

    /// When the flash controller finishes the work issued so far, ns.
    pub fn flash_idle_at_ns(&self) -> u64 {
        self.controller_free_ns.max(self.dev.flash().all_idle_at_ns())
    }

    /// Per logical page, the position whose segment holds its flash copy; `None` while
    /// the page is in the write buffer or was never written. From the volatile owner
    /// table: reads no device.
    pub fn page_positions(&self) -> Vec<Option<u32>> {
        let mut positions = vec![None; self.config.logical_pages as usize];
        for (ppn, &owner) in self.owner.iter().enumerate() {
            if owner != 0 {
                positions[owner as usize - 1] = Some(self.position_of[self.segment_of_ppn(ppn as u64) as usize]);
            }
        }
        positions
    }

    /// Per position, its live pages.
    pub fn position_live_pages(&self) -> Vec<u32> {
        self.segment_of.iter().map(|&s| self.live[s as usize]).collect()
    }

    /// Pages in the write buffer.
    pub fn buffered_pages(&self) -> u64 {
        self.head - self.tail
    }

    // ----- persistent accessors -----

    #[inline]
    fn pt_addr(&self, lpn: u32) -> u64 {
        self.layout.page_table + 4 * u64::from(lpn)
    }

    #[inline]
    fn entry(&mut self, lpn: u32) -> Entry {
        let addr = self.pt_addr(lpn);
        Entry::decode(self.dev.sram_u32(addr))
    }

    #[inline]
    fn set_entry(&mut self, lpn: u32, e: Entry) -> Result<(), EnvyError> {
        let addr = self.pt_addr(lpn);
        self.dev.set_u32(addr, e.encode())
    }

    #[inline]
    fn slot_of(&self, seq: u64) -> u32 {
        (seq % u64::from(self.config.buffer_pages)) as u32
    }

    #[inline]
    fn slot_data_addr(&self, slot: u32) -> u64 {
        self.layout.slot_data + u64::from(slot) * u64::from(self.config.page_bytes)
    }

    fn slot_in_window(&self, slot: u32) -> bool {
        let b = u64::from(self.config.buffer_pages);
        let offset = (u64::from(slot) + b - self.tail % b) % b;
        offset < self.head - self.tail
    }

    #[inline]
    fn slot_meta(&mut self, slot: u32) -> (u32, u32) {
        let addr = self.layout.slot_meta + 8 * u64::from(slot);
        (self.dev.sram_u32(addr), self.dev.sram_u32(addr + 4))
    }

    fn shadow_entry(&mut self, k: u32) -> (u32, Entry) {
        let addr = self.layout.shadows + 8 * u64::from(k);
        (self.dev.sram_u32(addr), Entry::decode(self.dev.sram_u32(addr + 4)))
    }

    fn set_shadow_old(&mut self, k: u32, e: Entry) -> Result<(), EnvyError> {
        self.dev.set_u32(self.layout.shadows + 8 * u64::from(k) + 4, e.encode())
    }

    #[inline]
    fn pages_per_segment(&self) -> u64 {
        u64::from(self.config.pages_per_segment)
    }

    #[inline]
    fn segment_of_ppn(&self, ppn: u64) -> u32 {
        (ppn / self.pages_per_segment()) as u32
    }

    #[inline]
    fn write_pointer(&self, segment: u32) -> u32 {
        self.dev.flash().write_pointer(u64::from(segment))
    }

    #[inline]
    fn free_pages(&self, position: u32) -> u32 {
        self.config.pages_per_segment - self.write_pointer(self.segment_of[position as usize])
    }

    #[inline]
    fn own(&mut self, ppn: u64, lpn: u32) {
        assert_eq!(self.owner[ppn as usize], 0, "flash page {ppn} mapped twice");
        self.owner[ppn as usize] = lpn + 1;
        let seg = self.segment_of_ppn(ppn) as usize;
        self.live[seg] += 1;
    }

    #[inline]
    fn disown(&mut self, ppn: u64) {
        self.owner[ppn as usize] = 0;
        let seg = self.segment_of_ppn(ppn) as usize;
        self.live[seg] -= 1;
    }

    fn mark_flash_shadow(&mut self, ppn: u64, k: u32) {
        // A pre-image in flash stays live: the owner table no longer names it.
        self.flash_shadow[ppn as usize] = k + 1;
        let seg = self.segment_of_ppn(ppn) as usize;
        self.live[seg] += 1;
    }

    fn unmark_flash_shadow(&mut self, ppn: u64) {
        self.flash_shadow[ppn as usize] = 0;
        let seg = self.segment_of_ppn(ppn) as usize;
        self.live[seg] -= 1;
    }

    // ----- timing -----

    /// When a long operation can be issued: now with parallel banks (each bank queues its
    /// own), else after the controller's previous long operation.
    #[inline]
    fn issue_ns(&self) -> u64 {
        if self.config.parallel_banks {
            self.now_ns
        } else {
            self.now_ns.max(self.controller_free_ns)
        }
    }

    #[inline]
    fn long_op_done(&mut self, end_ns: u64) {
        if !self.config.parallel_banks {
            self.controller_free_ns = self.controller_free_ns.max(end_ns);
        }
    }

    /// A host read of a flash page. With `suspend_reads` it suspends a long operation in
    /// progress (on its bank with parallel banks, else on the controller), delaying it by
    /// the suspend and the read; without, it waits for that operation. Times and counts
    /// the read; the caller takes the bytes it needs from the page
    /// ([`Devices::copy_flash_bytes`], [`Devices::sram_write_flash_page`]). Returns the
    /// latency, ns.
    #[inline]
    fn host_flash_read(&mut self, ppn: u64) -> u64 {
        let now = self.now_ns;
        if self.config.parallel_banks {
            // The bank's own queue: the flash array suspends or queues the read.
            return self.dev.flash_read_timing(ppn, now) - now;
        }
        let read_ns = self.config.flash.read_ns;
        if self.controller_free_ns <= now {
            self.dev.flash_read_timing(ppn, now);
            return read_ns;
        }
        if self.config.suspend_reads {
            let latency = read_ns + self.config.suspend_ns;
            self.controller_free_ns += latency;
            self.dev.flash_read_timing(ppn, now);
            latency
        } else {
            let start = self.controller_free_ns;
            self.controller_free_ns = start + read_ns;
            self.dev.flash_read_timing(ppn, start);
            start + read_ns - now
        }
    }

    // ----- host operations -----

    #[inline]
    fn check_range(&self, addr: u64, len: usize) -> Result<(), EnvyError> {
        let capacity = self.config.logical_bytes();
        match addr.checked_add(len as u64) {
            Some(end) if end <= capacity => Ok(()),
            _ => Err(EnvyError::OutOfRange { addr, len: len as u64, capacity }),
        }
    }

    /// Reads `buf.len()` bytes at `addr` at the host time; returns the latency, ns (the
    /// sum over the pages touched). Never-written bytes read as 0. A system that keeps no
    /// page bytes ([`EnvyConfig::keep_page_bytes`]) refuses every read.
    pub fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<u64, EnvyError> {
        self.check_read(addr, buf.len())?;
        let page = u64::from(self.config.page_bytes);
        let mut done = 0usize;
        let mut latency_ns = 0;
        while done < buf.len() {
            let at = addr + done as u64;
            let (lpn, offset) = ((at / page) as u32, (at % page) as usize);
            let n = (page as usize - offset).min(buf.len() - done);
            latency_ns += self.read_in_page(lpn, offset, &mut buf[done..done + n]);
            done += n;
        }
        Ok(latency_ns)
    }

    /// [`Envy::read`] of a scalar: the same bytes, time and counts, the value within one
    /// page copied with its length known where it is made (no call of the C library's
    /// copy). Returns the value and the latency, ns.
    #[inline]
    pub fn read_scalar<T: Scalar>(&mut self, addr: u64) -> Result<(T, u64), EnvyError> {
        let mut bytes = [0u8; 8];
        let page = u64::from(self.config.page_bytes);
        let offset = addr % page;
        let ns = if offset + T::SIZE as u64 <= page {
            self.check_read(addr, T::SIZE)?;
            self.read_in_page((addr / page) as u32, offset as usize, &mut bytes[..T::SIZE])
        } else {
            self.read(addr, &mut bytes[..T::SIZE])?
        };
        Ok((T::from_le(&bytes[..T::SIZE]), ns))
    }

    /// Whether `len` bytes at `addr` may be read.
    #[inline]
    fn check_read(&self, addr: u64, len: usize) -> Result<(), EnvyError> {
        self.check_range(addr, len)?;
        if !self.config.keep_page_bytes {
            return Err(EnvyError::NoPageBytes("a read"));
        }
        Ok(())
    }

    /// Reads `out` from page `lpn` at `offset` (within the page); counts the page read and
    /// returns its latency, ns.
    #[inline(always)]
    fn read_in_page(&mut self, lpn: u32, offset: usize, out: &mut [u8]) -> u64 {
        let ns = match self.entry(lpn) {
            Entry::Unmapped => {
                out.fill(0);
                self.config.sram.read_ns
            }
            Entry::Sram(slot) => {
                let a = self.slot_data_addr(slot) + offset as u64;
                self.dev.sram_read(a, out);
                self.stats.sram_read_hits += 1;
                self.config.sram.read_ns
            }
            Entry::Flash(ppn) => {
                let ns = self.host_flash_read(ppn);
                self.dev.copy_flash_bytes(ppn, offset, out);
                ns
            }
        };
        self.stats.host_page_reads += 1;
        self.stats.host_read_ns += ns;
        ns
    }

    /// Writes `data` at `addr` at the host time; returns the latency, ns, waits for
    /// buffer pages included. The host time is left where it was: the caller advances it
    /// by the latency. Each page's part of the write is atomic and durable when this
    /// returns; a cut during a write spanning pages may leave a prefix of its pages
    /// written.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<u64, EnvyError> {
        self.check_range(addr, data.len())?;
        let start_ns = self.now_ns;
        let written = self.write_pages(addr, data);
        self.now_ns = start_ns;
        written
    }

    /// [`Envy::write`]'s pages, each issued when the previous one is done.
    fn write_pages(&mut self, addr: u64, data: &[u8]) -> Result<u64, EnvyError> {
        let page = u64::from(self.config.page_bytes);
        let start_ns = self.now_ns;
        let mut done = 0usize;
        let mut latency_ns = 0;
        while done < data.len() {
            let at = addr + done as u64;
            let (lpn, offset) = ((at / page) as u32, (at % page) as usize);
            let n = (page as usize - offset).min(data.len() - done);
            self.now_ns = start_ns + latency_ns;
            let ns = self.write_page(lpn, offset, &data[done..done + n])?;
            self.stats.host_page_writes += 1;
            self.stats.host_write_ns += ns;
            latency_ns += ns;
            done += n;
            self.now_ns = start_ns + latency_ns;
            while self.head - self.tail > u64::from(self.config.flush_threshold_pages) {
                self.flush_one()?;
            }
        }
        Ok(latency_ns)
    }

    fn write_page(&mut self, lpn: u32, offset: usize, bytes: &[u8]) -> Result<u64, EnvyError> {
        // Before the page is looked up, so no flush runs between a shadow and its copy.
        if self.head - self.tail == u64::from(self.config.buffer_pages) {
            self.flush_one()?;
        }
        let entry = self.entry(lpn);
        let needs_shadow = self.txn_pages.as_ref().is_some_and(|pages| !pages.contains(&lpn));
        if let (Entry::Sram(slot), false) = (entry, needs_shadow) {
            let a = self.slot_data_addr(slot) + offset as u64;
            self.dev.sram_write(a, bytes)?;
            self.stats.sram_write_hits += 1;
            return Ok(self.config.sram.write_ns);
        }
        if needs_shadow {
            self.record_shadow(lpn, entry)?;
        }
        self.copy_on_write(lpn, entry, offset, bytes)
    }

    /// Copy-on-write: 1. copy the page into a free SRAM page; 2. apply the write there;
    /// 3. repoint the page table (one atomic 4-byte write, the commit point); 4. the old
    /// copy is invalid from then on (the owner tables follow the page table).
    fn copy_on_write(&mut self, lpn: u32, entry: Entry, offset: usize, bytes: &[u8]) -> Result<u64, EnvyError> {
        let slot = self.slot_of(self.head);
        let wait_ns = self.slot_free_at_ns[slot as usize].saturating_sub(self.now_ns);
        if wait_ns > 0 {
            self.stats.buffer_full_waits += 1;
            self.stats.buffer_wait_ns += wait_ns;
            // The copy starts once the slot is free.
            self.now_ns += wait_ns;
        }
        // The page's image is read, then written to the slot (one SRAM write each way):
        // a flash page's bytes and a never-written page's zeros go straight to the slot, a
        // buffered page's through the devices' page buffer.
        let data_addr = self.slot_data_addr(slot);
        let (read_ns, home) = match entry {
            Entry::Unmapped => {
                let home = lpn as u64 * u64::from(self.config.positions()) / self.config.logical_pages;
                self.dev.sram_write_zero_page(data_addr)?;
                (0, home as u32)
            }
            Entry::Flash(ppn) => {
                let ns = self.host_flash_read(ppn);
                self.dev.sram_write_flash_page(data_addr, ppn)?;
                (ns, self.position_of[self.segment_of_ppn(ppn) as usize])
            }
            Entry::Sram(from) => {
                let a = self.slot_data_addr(from);
                self.dev.sram_read_page(a);
                let (_, home) = self.slot_meta(from);
                self.dev.sram_write_page(data_addr)?;
                (self.config.sram.read_ns, home)
            }
        };
        self.dev.sram_write(data_addr + offset as u64, bytes)?;
        let mut meta = [0u8; 8];
        meta[..4].copy_from_slice(&lpn.to_le_bytes());
        meta[4..].copy_from_slice(&home.to_le_bytes());
        self.dev.sram_write(self.layout.slot_meta + 8 * u64::from(slot), &meta)?;
        self.dev.set_u64(header::HEAD_SEQ, self.head + 1)?;
        self.head += 1;
        self.set_entry(lpn, Entry::Sram(slot))?;
        if let Entry::Flash(ppn) = entry {
            if self.flash_shadow[ppn as usize] == 0 {
                self.disown(ppn);
            } else {
                // The pre-image stays live as a shadow; only ownership moves.
                self.owner[ppn as usize] = 0;
            }
        }
        self.stats.copy_on_writes += 1;
        Ok(wait_ns + read_ns + self.config.sram.write_ns)
    }

    // ----- flushing -----

    /// Flushes the buffer's tail page to flash (or drops it if superseded), its device
    /// writes reported as [`Activity::Flush`] (a clean it needs as [`Activity::Clean`]).
    fn flush_one(&mut self) -> Result<(), EnvyError> {
        self.doing(Activity::Flush, Envy::flush_tail)
    }

    fn flush_tail(&mut self) -> Result<(), EnvyError> {
        assert!(self.head > self.tail, "flush of an empty buffer");
        let slot = self.slot_of(self.tail);
        let (lpn, home) = self.slot_meta(slot);
        let owned = self.entry(lpn) == Entry::Sram(slot);
        let shadow = self.slot_shadow[slot as usize];
        if !owned && shadow == 0 {
            self.dev.set_u64(header::TAIL_SEQ, self.tail + 1)?;
            self.tail += 1;
            self.slot_free_at_ns[slot as usize] = self.now_ns;
            self.stats.dead_slots_dropped += 1;
            return Ok(());
        }
        let position = self.target_position(home)?;
        let segment = self.segment_of[position as usize];
        let ppn = u64::from(segment) * self.pages_per_segment() + u64::from(self.write_pointer(segment));
        let a = self.slot_data_addr(slot);
        let issue_ns = self.issue_ns();
        let bank = self.dev.flash().geometry().plane_of_block(u64::from(segment));
        let queue_ns = self.dev.flash().plane_busy_until_ns(bank).saturating_sub(issue_ns);
        if queue_ns > 0 {
            self.stats.flushes_queued += 1;
            self.stats.flush_queue_ns += queue_ns;
        }
        let end_ns = self.dev.program_from_sram(ppn, a, issue_ns)?;
        self.long_op_done(end_ns);
        if owned {
            self.set_entry(lpn, Entry::Flash(ppn))?;
            self.own(ppn, lpn);
        } else {
            self.set_shadow_old(shadow - 1, Entry::Flash(ppn))?;
            self.slot_shadow[slot as usize] = 0;
            self.mark_flash_shadow(ppn, shadow - 1);
        }
        self.dev.set_u64(header::TAIL_SEQ, self.tail + 1)?;
        self.tail += 1;
        self.slot_free_at_ns[slot as usize] = end_ns;
        self.stats.flush_programs += 1;
        Ok(())
    }

    // ----- invariants -----

    /// Asserts the invariants: the page table is one-to-one and agrees with the owner
    /// tables; each segment's live count matches the table; every spare is erased,
    /// holds nothing and is no position's; positions and segments correspond one-to-one; no clean is in
    /// progress.
    pub fn check_invariants(&mut self) {
        let mut owners = vec![0u32; self.owner.len()];
        let mut slots = BTreeSet::new();
        for lpn in 0..self.config.logical_pages as u32 {
            match self.entry(lpn) {
                Entry::Unmapped => {}
                Entry::Flash(ppn) => {
                    assert_eq!(owners[ppn as usize], 0, "flash page {ppn} mapped twice");
                    owners[ppn as usize] = lpn + 1;
                    let seg = self.segment_of_ppn(ppn);
                    assert!(
                        ppn % self.pages_per_segment() < u64::from(self.write_pointer(seg)),
                        "page {ppn} unprogrammed"
                    );
                }
                Entry::Sram(slot) => {
                    assert!(slots.insert(slot), "buffer slot {slot} mapped twice");
                    assert!(self.slot_in_window(slot), "page {lpn} maps to a free slot");
                    assert_eq!(self.slot_meta(slot).0, lpn, "slot {slot} records another page");
                }
            }
        }
        assert_eq!(owners, self.owner, "owner table differs from the page table");
        let mut live = vec![0u32; self.live.len()];
        for (ppn, (&o, &s)) in self.owner.iter().zip(&self.flash_shadow).enumerate() {
            assert!(o == 0 || s == 0, "flash page {ppn} both owned and shadowed");
            if o != 0 || s != 0 {
                live[self.segment_of_ppn(ppn as u64) as usize] += 1;
            }
        }
        assert_eq!(live, self.live, "live-page counts differ from the page table");
        assert!(self.spare_next < self.config.spare_segments, "spare index {} out of the ring", self.spare_next);
        assert_eq!(self.dev.sram_u32(header::SPARE_NEXT), self.spare_next, "spare index differs from the SRAM");
        for (i, &s) in self.spares.iter().enumerate() {
            assert_eq!(self.dev.sram_u32(self.layout.spares + 4 * i as u64), s, "spare ring differs from the SRAM");
            assert_eq!(self.live[s as usize], 0, "spare {s} holds live pages");
            assert_eq!(self.write_pointer(s), 0, "spare {s} is not erased");
            assert_eq!(self.position_of[s as usize], SPARE_POSITION, "spare {s} holds a position");
        }
        let unheld = self.position_of.iter().filter(|&&p| p == SPARE_POSITION).count();
        assert_eq!(unheld, self.spares.len(), "segments outside positions and spares, or a spare twice");
        for (p, &s) in self.segment_of.iter().enumerate() {
            assert_eq!(self.position_of[s as usize], p as u32, "position {p} and segment {s} disagree");
        }
        assert_eq!(self.dev.sram_u32(CLEAN_RECORD), PHASE_IDLE, "a clean is in progress");
    }
}
