//! The persistent devices of an eNVy system, behind one write counter that can cut the
//! power before any device write.

use nvmdb_device::{flash::OpTiming, Activity, Cut, FlashArray, PowerLoss, PowerSwitch, Volatile, VolatileKind};

use crate::config::EnvyConfig;
use crate::error::EnvyError;
use crate::layout::Layout;

/// The flash array and the battery-backed SRAM: everything that survives a power loss.
/// A clone is the devices in the same state.
#[derive(Debug, Clone)]
pub struct Devices {
    flash: FlashArray,
    sram: Volatile,
    power: PowerSwitch,
    /// Per bank: time its flash operations took, ns (volatile statistics).
    bank_busy_ns: Vec<u64>,
    /// One page's bytes: the last page a recovery read brought from flash, or a buffered
    /// page a copy-on-write under a transaction copies to a new slot (a host read, a
    /// flush, a copy-on-write of a flash page and a clean's copy do without it). Kept
    /// between operations so that none allocates.
    page: Vec<u8>,
}

impl Devices {
    /// Fresh devices for a configuration: erased flash (one flash block per segment, one
    /// bank per flash package), zeroed SRAM of the layout's size.
    pub fn new(config: &EnvyConfig) -> Result<Devices, EnvyError> {
        config.validate()?;
        let mut flash = FlashArray::new(config.flash_geometry(), config.flash, config.page_content())?;
        flash.set_read_suspend(config.suspend_reads.then_some(config.suspend_ns));
        let bytes = Layout::new(config).total_bytes;
        let bytes = usize::try_from(bytes).map_err(|_| EnvyError::Config(format!("{bytes} B of SRAM")))?;
        let sram = Volatile::new(VolatileKind::BatterySram, config.sram, bytes);
        let bank_busy_ns = vec![0; config.banks as usize];
        Ok(Devices { flash, sram, power: PowerSwitch::new(), bank_busy_ns, page: Vec::new() })
    }

    /// Gives the flash `config`'s timing and banks (see [`FlashArray::retime`]); the
    /// banks' busy times restart from zero.
    pub(crate) fn retime(&mut self, config: &EnvyConfig) -> Result<(), EnvyError> {
        self.flash.retime(config.flash, config.banks, 1)?;
        self.bank_busy_ns = vec![0; config.banks as usize];
        Ok(())
    }

    /// Device writes (SRAM writes, flash programs and erases) so far.
    pub fn device_writes(&self) -> u64 {
        self.power.writes()
    }

    /// Cuts the power before device write number `index` (0-based, counted over the
    /// devices' life): that write and every later one fail with [`EnvyError::PowerCut`].
    pub fn cut_power_before(&mut self, index: u64) {
        self.power.cut_before(index);
    }

    /// Sets what the controller is doing from now on (a cut reports it); returns what it
    /// was doing.
    pub fn set_activity(&mut self, activity: Activity) -> Activity {
        self.power.set_activity(activity)
    }

    /// The last cut reached: the device write it refused and what the controller was
    /// doing.
    pub fn last_cut(&self) -> Option<Cut> {
        self.power.cuts().last().copied()
    }

    /// Loses power and restores it: the SRAM is battery-backed and flash is
    /// non-volatile, so both keep their contents; the cut is cleared.
    pub fn power_cycle(&mut self) {
        self.power.restore();
        self.flash.power_loss();
        self.sram.power_loss();
    }

    /// The flash array.
    pub fn flash(&self) -> &FlashArray {
        &self.flash
    }

    /// The SRAM.
    pub fn sram(&self) -> &Volatile {
        &self.sram
    }

    /// Per bank, the time its flash operations (reads, programs, erases) have taken since
    /// the devices were created, ns.
    pub fn bank_busy_ns(&self) -> &[u64] {
        &self.bank_busy_ns
    }

    /// Adds an operation on `block` to its bank's busy time; returns when it ends. (With
    /// one bank, the block's bank is not looked up.)
    #[inline]
    fn charge(&mut self, block: u64, timing: OpTiming) -> u64 {
        let busy_ns = timing.end_ns - timing.start_ns;
        if let [bank] = self.bank_busy_ns.as_mut_slice() {
            *bank += busy_ns;
        } else {
            self.bank_busy_ns[self.flash.geometry().plane_of_block(block) as usize] += busy_ns;
        }
        timing.end_ns
    }

    #[inline]
    fn permit(&mut self) -> Result<(), EnvyError> {
        self.power.admit().map_err(|device_writes| EnvyError::PowerCut { device_writes })
    }

    #[inline]
    pub(crate) fn sram_read(&mut self, addr: u64, buf: &mut [u8]) {
        self.sram.read(addr, buf).expect("SRAM reads stay inside the layout");
    }

    #[inline]
    pub(crate) fn sram_u32(&mut self, addr: u64) -> u32 {
        let mut b = [0u8; 4];
        self.sram_read(addr, &mut b);
        u32::from_le_bytes(b)
    }

    #[inline]
    pub(crate) fn sram_u64(&mut self, addr: u64) -> u64 {
        let mut b = [0u8; 8];
        self.sram_read(addr, &mut b);
        u64::from_le_bytes(b)
    }

    /// One atomic SRAM write.
    #[inline]
    pub(crate) fn sram_write(&mut self, addr: u64, data: &[u8]) -> Result<(), EnvyError> {
        self.permit()?;
        self.sram.write(addr, data).expect("SRAM writes stay inside the layout");
        Ok(())
    }

    #[inline]
    pub(crate) fn set_u32(&mut self, addr: u64, v: u32) -> Result<(), EnvyError> {
        self.sram_write(addr, &v.to_le_bytes())
    }

    #[inline]
    pub(crate) fn set_u64(&mut self, addr: u64, v: u64) -> Result<(), EnvyError> {
        self.sram_write(addr, &v.to_le_bytes())
    }

    /// `n` atomic 4-byte SRAM writes, `(address, value)` each, in order: what `n` calls of
    /// [`Devices::set_u32`] write and count, for a caller that knows the power switch
    /// admits them all (a clean's page-table writes after [`Devices::copy_pages`], which
    /// checked room for them); the switch and the SRAM's counters move once.
    #[inline]
    pub(crate) fn set_u32_run(&mut self, n: usize, writes: impl IntoIterator<Item = (u64, u32)>) {
        self.power.admit_all(n as u64).expect("the caller checked that the switch admits them");
        let mut written = 0;
        let writes = writes.into_iter().inspect(|_| written += 1).map(|(addr, v)| (addr, v.to_le_bytes()));
        self.sram.write_each(writes).expect("SRAM writes stay inside the layout");
        assert_eq!(written, n, "as many writes as admitted");
    }

    /// The controller's own read of a flash page's bytes at `now_ns` (recovery): part of a
    /// long operation, it waits for its bank and suspends nothing.
    pub(crate) fn flash_read(&mut self, ppn: u64, now_ns: u64) -> Vec<u8> {
        self.controller_read(ppn, now_ns);
        self.page.clone()
    }

    /// [`Devices::flash_read`] into the page buffer.
    fn controller_read(&mut self, ppn: u64, now_ns: u64) {
        let suspend = self.flash.read_suspend_ns();
        self.flash.set_read_suspend(None);
        self.flash_read_timed(ppn, now_ns);
        self.flash.set_read_suspend(suspend);
    }

    /// A read of a flash page's bytes at `now_ns` into the page buffer (the controller's
    /// read, [`Devices::controller_read`]; a host read takes only the bytes it asks for:
    /// [`Devices::flash_read_timing`] and [`Devices::copy_flash_bytes`]); returns when the
    /// read ends. With read suspend on, a read on a busy bank suspends, and so delays, the
    /// operation in progress; without, it waits for the bank.
    pub(crate) fn flash_read_timed(&mut self, ppn: u64, now_ns: u64) -> u64 {
        let timing = self.flash.read_page_into(ppn, now_ns, &mut self.page).expect("mapped flash pages exist");
        self.charge(self.flash.geometry().block_of(ppn), timing)
    }

    /// [`Devices::flash_read_timed`] without bringing the page into the page buffer: the
    /// same read, timed and counted alike, for a copy-on-write that then writes the page's
    /// bytes to the SRAM ([`Devices::sram_write_flash_page`]).
    #[inline]
    pub(crate) fn flash_read_timing(&mut self, ppn: u64, now_ns: u64) -> u64 {
        let timing = self.flash.read_page_timing(ppn, now_ns).expect("mapped flash pages exist");
        self.charge(self.flash.geometry().block_of(ppn), timing)
    }

    /// Copies bytes `offset..offset + out.len()` of flash page `ppn` into `out` (`0xFF`
    /// bytes for a page not programmed), neither timing nor counting them: after
    /// [`Devices::flash_read_timing`] of the page, the bytes a host read takes out of what
    /// [`Devices::flash_read_timed`] brings into the page buffer, without the buffer.
    #[inline]
    pub(crate) fn copy_flash_bytes(&self, ppn: u64, offset: usize, out: &mut [u8]) {
        copy_stored_bytes(&self.flash, ppn, offset, out);
    }

    /// Writes a never-written page's zeros to the SRAM at `sram_addr` (one atomic SRAM
    /// write): [`Devices::sram_write_page`] of a zeroed page buffer, without the buffer.
    pub(crate) fn sram_write_zero_page(&mut self, sram_addr: u64) -> Result<(), EnvyError> {
        self.permit()?;
        let page_bytes = self.flash.geometry().page_bytes as usize;
        self.sram.write_in_place(sram_addr, page_bytes).expect("SRAM writes stay inside the layout").fill(0);
        Ok(())
    }

    /// Writes flash page `ppn`'s bytes (`0xFF` bytes if it is not programmed) to the SRAM
    /// at `sram_addr` (one atomic SRAM write): after [`Devices::flash_read_timing`] of the
    /// page, what [`Devices::sram_write_page`] writes after [`Devices::flash_read_timed`],
    /// without the page buffer. Reads no flash (the read was counted).
    pub(crate) fn sram_write_flash_page(&mut self, sram_addr: u64, ppn: u64) -> Result<(), EnvyError> {
        self.permit()?;
        let page_bytes = self.flash.geometry().page_bytes as usize;
        let out = self.sram.write_in_place(sram_addr, page_bytes).expect("SRAM writes stay inside the layout");
        copy_stored_bytes(&self.flash, ppn, 0, out);
        Ok(())
    }

    /// Reads a page of SRAM at `sram_addr` into the page buffer.
    pub(crate) fn sram_read_page(&mut self, sram_addr: u64) {
        let mut page = std::mem::take(&mut self.page);
        page.resize(self.flash.geometry().page_bytes as usize, 0);
        self.sram_read(sram_addr, &mut page);
        self.page = page;
    }

    /// Writes the page buffer to the SRAM at `sram_addr` (one atomic SRAM write).
    pub(crate) fn sram_write_page(&mut self, sram_addr: u64) -> Result<(), EnvyError> {
        self.permit()?;
        self.sram.write(sram_addr, &self.page).expect("SRAM writes stay inside the layout");
        Ok(())
    }

    /// The controller's copy of flash page `from` to `to` (cleaning): the read issued at
    /// `read_at_ns` as [`Devices::flash_read`]'s, the program at `program_at_ns`; returns
    /// when the program completes. The page moves inside the array
    /// ([`FlashArray::read_page_timing`], then [`FlashArray::program_page_copy`]): the
    /// same read and program, timed and counted as a read into the page buffer and a
    /// program from it, without the buffer (which the copy leaves as it was).
    pub(crate) fn copy_page(
        &mut self,
        from: u64,
        to: u64,
        read_at_ns: u64,
        program_at_ns: u64,
    ) -> Result<u64, EnvyError> {
        let suspend = self.flash.read_suspend_ns();
        self.flash.set_read_suspend(None);
        let read = self.flash.read_page_timing(from, read_at_ns).expect("mapped flash pages exist");
        self.flash.set_read_suspend(suspend);
        self.charge(self.flash.geometry().block_of(from), read);
        self.permit()?;
        let programmed = self.flash.program_page_copy(to, from, program_at_ns);
        Ok(self.charge(self.flash.geometry().block_of(to), programmed?))
    }

    /// The controller's copies of flash pages `from`, in order, into the pages of a
    /// segment from `to` on (a clean's run of live pages into one segment): what [`Devices::copy_page`] of each into the next page does, each copy's read and
    /// program issued at the times `schedule` gives (from the previous copy's program end,
    /// `None` for the first), in one flash-array call ([`FlashArray::copy_pages`]); returns
    /// the last program's end. The caller writes one page-table entry per copy after it, so
    /// it runs only when the power switch admits two device writes per copy and the array
    /// takes the whole run; otherwise it returns `None` with nothing changed, and the
    /// caller copies page by page.
    pub(crate) fn copy_pages(
        &mut self,
        from: &[u64],
        to: u64,
        schedule: impl FnMut(Option<u64>) -> (u64, u64),
    ) -> Option<u64> {
        let n = from.len() as u64;
        if n == 0 || !self.power.admits(2 * n) {
            return None;
        }
        let end = self.flash.copy_pages(from, to, schedule).ok()??;
        self.power.admit_all(n).expect("admitted above");
        let (g, timing) = (*self.flash.geometry(), *self.flash.timing());
        if let [bank] = self.bank_busy_ns.as_mut_slice() {
            *bank += n * (timing.read_ns + timing.program_ns);
        } else {
            for &ppn in from {
                self.bank_busy_ns[g.plane_of_block(g.block_of(ppn)) as usize] += timing.read_ns;
            }
            self.bank_busy_ns[g.plane_of_block(g.block_of(to)) as usize] += n * timing.program_ns;
        }
        Some(end)
    }

    /// Reads a page's bytes from the SRAM at `sram_addr` and programs them at `now_ns`
    /// (a flush); returns when the program completes. The bytes go from the SRAM to the
    /// array ([`FlashArray::program_page_bytes`]): the same SRAM read and program, counted
    /// and timed as a read into the page buffer and a program from it, without the buffer
    /// (`tests::a_flush_and_a_copy_on_write_without_the_buffer_are_through_it` compares).
    pub(crate) fn program_from_sram(&mut self, ppn: u64, sram_addr: u64, now_ns: u64) -> Result<u64, EnvyError> {
        let page_bytes = self.flash.geometry().page_bytes as usize;
        let bytes = self.sram.read_in_place(sram_addr, page_bytes).expect("SRAM reads stay inside the layout");
        self.power.admit().map_err(|device_writes| EnvyError::PowerCut { device_writes })?;
        let programmed = self.flash.program_page_bytes(ppn, bytes, now_ns);
        Ok(self.charge(self.flash.geometry().block_of(ppn), programmed?))
    }

    /// Erases a segment at `now_ns`; returns when it completes.
    pub(crate) fn erase(&mut self, segment: u64, now_ns: u64) -> Result<u64, EnvyError> {
        self.permit()?;
        let timing = self.flash.erase_block(segment, now_ns)?;
        Ok(self.charge(segment, timing))
    }
}

/// Copies bytes `offset..offset + out.len()` of flash page `ppn` into `out`, `0xFF` bytes
/// for a page not programmed (as a read of it gives them), neither timing nor counting.
#[inline]
fn copy_stored_bytes(flash: &FlashArray, ppn: u64, offset: usize, out: &mut [u8]) {
    match flash.stored_page_bytes(ppn) {
        Some(bytes) => out.copy_from_slice(&bytes[offset..offset + out.len()]),
        None => out.fill(0xFF),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvmdb_device::PageData;

    impl Devices {
        /// Programs the page buffer at `now_ns`; returns when the program completes.
        fn program_page_buffer(&mut self, ppn: u64, now_ns: u64) -> Result<u64, EnvyError> {
            self.permit()?;
            let page = PageData::Bytes(std::mem::take(&mut self.page));
            let programmed = self.flash.program_page(ppn, &page, now_ns);
            if let PageData::Bytes(bytes) = page {
                self.page = bytes;
            }
            Ok(self.charge(self.flash.geometry().block_of(ppn), programmed?))
        }

        /// Fills the page buffer with a never-written page's zeros.
        fn zero_page(&mut self) {
            self.page.clear();
            self.page.resize(self.flash.geometry().page_bytes as usize, 0);
        }
    }

    /// The flush the SRAM-to-array program replaced: the SRAM page read into the page
    /// buffer, then programmed from it.
    fn program_from_sram_through_the_buffer(
        dev: &mut Devices,
        ppn: u64,
        sram_addr: u64,
        now_ns: u64,
    ) -> Result<u64, EnvyError> {
        dev.sram_read_page(sram_addr);
        dev.program_page_buffer(ppn, now_ns)
    }

    /// The simple copy the array's copy replaced: a read into the page buffer, then a
    /// program from it.
    fn copy_through_the_buffer(
        dev: &mut Devices,
        from: u64,
        to: u64,
        read_at_ns: u64,
        program_at_ns: u64,
    ) -> Result<u64, EnvyError> {
        dev.controller_read(from, read_at_ns);
        dev.program_page_buffer(to, program_at_ns)
    }

    /// Everything the two copies could leave differently: the array (bytes of every
    /// page, write pointers, erase counts, counters, plane times), the banks' busy times
    /// and the device-write count.
    fn state(dev: &Devices) -> (Vec<Vec<u8>>, Vec<u32>, FlashStatsView, Vec<u64>, u64) {
        let flash = dev.flash();
        let g = *flash.geometry();
        let mut copy = flash.clone();
        let pages =
            (0..g.pages()).map(|ppn| copy.read_page(ppn, 0).map(|(d, _)| d).expect("in range")).map(|d| match d {
                PageData::Bytes(b) => b,
                other => panic!("bytes mode, not {other:?}"),
            });
        let pointers = (0..g.blocks()).map(|b| flash.write_pointer(b)).collect();
        let busy = (0..g.planes()).map(|p| flash.plane_busy_until_ns(p)).collect();
        let erases: Vec<u64> = flash.erase_counts().collect();
        (pages.collect(), pointers, (*flash.stats(), busy, erases), dev.bank_busy_ns().to_vec(), dev.device_writes())
    }

    type FlashStatsView = (nvmdb_device::FlashStats, Vec<u64>, Vec<u64>);

    #[test]
    fn a_copy_inside_the_array_is_a_copy_through_the_page_buffer() {
        // Two banks of four segments of eight 256 B pages, read suspend on: copies within a
        // segment and across banks, from busy and idle banks, of erased pages, into a
        // worn-out segment, out of order, and cut by the power.
        let mut config = EnvyConfig::small(8, 8, 2, 0.5);
        config.banks = 2;
        config.suspend_reads = true;
        config.endurance_cycles = 3;
        let mut fast = Devices::new(&config).expect("valid");
        let mut simple = Devices::new(&config).expect("valid");
        let page = |i: u64| PageData::Bytes((0..256).map(|b| (b as u64 * 7 + i * 13) as u8).collect());
        for dev in [&mut fast, &mut simple] {
            for (i, ppn) in [0u64, 1, 2, 8, 9, 16].into_iter().enumerate() {
                dev.flash.program_page(ppn, &page(i as u64), 1_000 * i as u64).expect("in order");
            }
            for _ in 0..3 {
                dev.erase(5, 0).expect("not worn out yet");
            }
        }
        assert_eq!(state(&fast), state(&simple));
        // (from, to, read at, program at)
        let copies: [(u64, u64, u64, u64); 9] = [
            (0, 3, 0, 25_000),               // same segment, bank busy
            (1, 24, 10_000_000, 10_000_100), // across banks, idle
            (8, 10, 5, 5),                   // source programmed, destination next
            (9, 32, 0, 0),                   // another bank's segment
            (20, 33, 0, 0),                  // an erased source page
            (2, 40, 0, 0),                   // into a worn-out segment (5: pages 40..48)
            (16, 12, 0, 0),                  // out of order
            (16, 9, 0, 0),                   // into a programmed page
            (2, 4, 1, 2),                    // after the failures
        ];
        let mut refused = 0;
        for (from, to, read_at, program_at) in copies {
            let a = fast.copy_page(from, to, read_at, program_at).map_err(|e| e.to_string());
            let b = copy_through_the_buffer(&mut simple, from, to, read_at, program_at).map_err(|e| e.to_string());
            assert_eq!(a, b, "copy {from} -> {to}");
            assert_eq!(state(&fast), state(&simple), "copy {from} -> {to}");
            refused += usize::from(a.is_err());
        }
        assert_eq!(refused, 3, "the worn-out, out-of-order and programmed destinations");
        // Cut before the next device write: both refuse the program after counting the read.
        for dev in [&mut fast, &mut simple] {
            let writes = dev.device_writes();
            dev.cut_power_before(writes);
        }
        let a = fast.copy_page(3, 5, 0, 0).map_err(|e| e.to_string());
        let b = copy_through_the_buffer(&mut simple, 3, 5, 0, 0).map_err(|e| e.to_string());
        assert!(a.is_err(), "the cut refuses the program");
        assert_eq!(a, b);
        assert_eq!(state(&fast), state(&simple));
    }

    #[test]
    fn a_run_of_copies_is_its_copies_one_by_one_whatever_the_cut() {
        // Random runs of copies between segments of two banks (sources of one segment,
        // some not programmed; destinations from a segment's next page, some worn out or
        // too full), each copy followed by one SRAM write as a clean's page-table write,
        // with the power cut before a random device write near the run or not at all:
        // `copy_pages` then the SRAM writes, or page by page where it declines, against
        // page by page throughout.
        use rand::{Rng, SeedableRng};
        let mut config = EnvyConfig::small(8, 8, 2, 0.5);
        config.banks = 2;
        config.suspend_reads = true;
        config.endurance_cycles = 30;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let mut fast = Devices::new(&config).expect("valid");
        let mut simple = Devices::new(&config).expect("valid");
        let pages = u64::from(config.pages_per_segment);
        let (mut runs, mut declined) = (0, 0);
        for step in 0..3_000u64 {
            let now = step * 40_000;
            if rng.gen_bool(0.3) {
                // Program or erase to vary the segments' fill and wear (the fuller, the
                // likelier an erase; a segment wears out after 30).
                let segment = rng.gen_range(0..u64::from(config.segments));
                let erase = u64::from(fast.flash.write_pointer(segment)) > rng.gen_range(2..pages);
                for dev in [&mut fast, &mut simple] {
                    dev.power_cycle();
                    if erase {
                        let _ = dev.erase(segment, now);
                    } else {
                        let wp = u64::from(dev.flash.write_pointer(segment));
                        if wp < pages {
                            dev.zero_page();
                            let _ = dev.program_page_buffer(segment * pages + wp, now);
                        }
                    }
                }
                assert_eq!(state(&fast), state(&simple), "step {step}");
                continue;
            }
            let from_segment = rng.gen_range(0..u64::from(config.segments));
            let to_segment = rng.gen_range(0..u64::from(config.segments));
            let n = rng.gen_range(1..=4u64);
            let sources: Vec<u64> = (0..n).map(|_| from_segment * pages + rng.gen_range(0..pages)).collect();
            let to = to_segment * pages + u64::from(fast.flash.write_pointer(to_segment)).min(pages - 1);
            let cut = rng.gen_bool(0.5).then(|| fast.device_writes() + rng.gen_range(0..2 * n + 2));
            for dev in [&mut fast, &mut simple] {
                dev.power_cycle();
                if let Some(cut) = cut {
                    dev.cut_power_before(cut);
                }
            }
            let schedule = |end: Option<u64>| {
                let issue = end.map_or(now, |e| e + 1_000);
                (issue, issue + 25_000)
            };
            let page_table_write = |dev: &mut Devices, k: usize| dev.set_u32(4 * k as u64, k as u32);
            let got = match fast.copy_pages(&sources, to, schedule) {
                Some(_) => {
                    runs += 1;
                    (0..sources.len()).try_for_each(|k| page_table_write(&mut fast, k))
                }
                None => {
                    declined += 1;
                    let mut end = None;
                    sources.iter().enumerate().try_for_each(|(k, &from)| {
                        let (read_at, program_at) = schedule(end);
                        end = Some(fast.copy_page(from, to + k as u64, read_at, program_at)?);
                        page_table_write(&mut fast, k)
                    })
                }
            };
            let mut end = None;
            let want = sources.iter().enumerate().try_for_each(|(k, &from)| {
                let (read_at, program_at) = schedule(end);
                end = Some(copy_through_the_buffer(&mut simple, from, to + k as u64, read_at, program_at)?);
                page_table_write(&mut simple, k)
            });
            assert_eq!(got.map_err(|e| e.to_string()), want.map_err(|e| e.to_string()), "step {step}");
            assert_eq!(state(&fast), state(&simple), "step {step}");
            assert_eq!(fast.sram.stats(), simple.sram.stats(), "step {step}");
        }
        assert!(runs > 300 && declined > 300, "{runs} runs in one call, {declined} page by page");
    }

    /// The SRAM's bytes and counters.
    fn sram_state(dev: &Devices) -> impl PartialEq + std::fmt::Debug {
        let mut sram = dev.sram().clone();
        let bytes = sram.read_in_place(0, sram.capacity_bytes()).expect("in range").to_vec();
        (bytes, dev.sram().stats())
    }

    #[test]
    fn a_flush_and_a_copy_on_write_without_the_buffer_are_through_it() {
        // Random flushes (SRAM page to flash, in order or not), copy-on-write reads of
        // flash pages (programmed or not) into SRAM, host reads of part of a page, zeroed
        // pages, runs of page-table writes and erases on two banks with read suspend on,
        // the power cut before a random device write near the operation a third of the
        // time: the paths without the page buffer against the paths through it.
        use rand::{Rng, SeedableRng};
        let mut config = EnvyConfig::small(8, 8, 2, 0.5);
        config.banks = 2;
        config.suspend_reads = true;
        config.endurance_cycles = 20;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(17);
        let mut fast = Devices::new(&config).expect("valid");
        let mut simple = Devices::new(&config).expect("valid");
        let pages = u64::from(config.pages_per_segment);
        let flash_pages = pages * u64::from(config.segments);
        let sram_bytes = fast.sram().capacity_bytes() as u64;
        let mut done = [0usize; 6];
        let mut refused = 0;
        for step in 0..4_800u64 {
            let now = step * 30_000 + rng.gen_range(0..60_000);
            let cut = rng.gen_bool(0.3).then(|| fast.device_writes() + rng.gen_range(0..2));
            for dev in [&mut fast, &mut simple] {
                dev.power_cycle();
                if let Some(cut) = cut {
                    dev.cut_power_before(cut);
                }
            }
            let addr = rng.gen_range(0..sram_bytes - 256);
            let kind = rng.gen_range(0..6);
            done[kind] += 1;
            let (a, b) = match kind {
                0 => {
                    // A flush: random bytes into SRAM (both alike, no cut), then programmed.
                    let bytes: Vec<u8> = (0..256).map(|_| rng.gen()).collect();
                    for dev in [&mut fast, &mut simple] {
                        dev.power_cycle();
                        dev.sram_write(addr, &bytes).expect("no cut");
                        if let Some(cut) = cut {
                            dev.cut_power_before(cut + 1);
                        }
                    }
                    let segment = rng.gen_range(0..u64::from(config.segments));
                    let next = u64::from(fast.flash.write_pointer(segment)).min(pages - 1);
                    let ppn = if rng.gen_bool(0.9) { segment * pages + next } else { rng.gen_range(0..flash_pages) };
                    let a = fast.program_from_sram(ppn, addr, now);
                    let b = program_from_sram_through_the_buffer(&mut simple, ppn, addr, now);
                    (a, b)
                }
                5 => {
                    // A host read of part of a flash page (programmed or not).
                    let ppn = rng.gen_range(0..flash_pages);
                    let offset = rng.gen_range(0..256);
                    let len = rng.gen_range(0..=256 - offset);
                    let mut out = vec![0; len];
                    let a = fast.flash_read_timing(ppn, now);
                    fast.copy_flash_bytes(ppn, offset, &mut out);
                    let b = simple.flash_read_timed(ppn, now);
                    assert_eq!(out, simple.page[offset..offset + len], "step {step}: the bytes read");
                    (Ok(a), Ok(b))
                }
                1 => {
                    // A copy-on-write's read of a flash page and its write to the slot.
                    let ppn = rng.gen_range(0..flash_pages);
                    let a = Ok(fast.flash_read_timing(ppn, now))
                        .and_then(|end| fast.sram_write_flash_page(addr, ppn).map(|()| end));
                    let b = Ok(simple.flash_read_timed(ppn, now))
                        .and_then(|end| simple.sram_write_page(addr).map(|()| end));
                    (a, b)
                }
                2 => {
                    let a = fast.sram_write_zero_page(addr).map(|()| 0);
                    simple.zero_page();
                    let b = simple.sram_write_page(addr).map(|()| 0);
                    (a, b)
                }
                3 => {
                    // A clean's page-table writes, admitted (no cut within them).
                    let n = rng.gen_range(0..6);
                    let writes: Vec<(u64, u32)> =
                        (0..n).map(|_| (rng.gen_range(0..sram_bytes - 4), rng.gen())).collect();
                    for dev in [&mut fast, &mut simple] {
                        dev.power_cycle();
                    }
                    fast.set_u32_run(n, writes.iter().copied());
                    let b = writes.iter().try_for_each(|&(addr, v)| simple.set_u32(addr, v)).map(|()| 0);
                    (Ok(0), b)
                }
                _ => {
                    let segment = rng.gen_range(0..u64::from(config.segments));
                    (fast.erase(segment, now), simple.erase(segment, now))
                }
            };
            refused += usize::from(a.is_err());
            assert_eq!(a.map_err(|e| e.to_string()), b.map_err(|e| e.to_string()), "step {step}, kind {kind}");
            assert_eq!(state(&fast), state(&simple), "step {step}, kind {kind}");
            assert_eq!(sram_state(&fast), sram_state(&simple), "step {step}, kind {kind}");
        }
        assert!(done.iter().all(|&n| n > 600), "{done:?} operations of each kind");
        assert!(refused > 500, "{refused} refused by a cut, an order or wear");
    }
}
