//! The persistent devices of a run: PCM for the journal and a block device for the
//! database files, behind one write counter so a power cut can stop at any write.

use std::collections::BTreeMap;

use nvmdb_device::FlipNWrite;
use nvmdb_device::{FlashTiming, Pcm, PcmConfig, PcmMetrics, PcmStats, PcmStorageTiming, PowerSwitch, ProgramBudget};
use serde::Serialize;

use crate::error::JournalError;
use crate::layout::Field;

/// The paper's board (Section 4, Table I and Figure 4) as a storage-mode PCM preset.
///
/// The text gives the read path's LPDDR2-N timings (tRP 13 ns + tRCD 80 ns + tCL 40 ns =
/// 133 ns before data) and the shape of Figure 4: write latency grows in 128 B steps,
/// since each of the four chips programs 32 B chunks at constant latency. It does not
/// give Figure 4's numbers, so the time per 32 B chunk is the Samsung PRAM datasheet's
/// 7.1 µs (IPL-P Table 1), four chips in parallel: 7.1 µs per 128 B changed. Reads are
/// charged 133 ns plus 40 ns (one tCL) per 64 B line. The paper gives no energy per
/// operation (it estimated energy with a power calculator and a confidential datasheet);
/// energy is the CIDR 2011 per-bit model ([`PcmMetrics::CIDR2011`]).
pub const PAPER_BOARD_PCM: PcmStorageTiming = PcmStorageTiming {
    initial_ns: 133,
    read_chunk_bytes: 64,
    read_ns_per_chunk: 40,
    write_chunk_bytes: 128,
    write_ns_per_chunk: 7_100,
    read_pj_per_chunk: 0,
    write_pj_per_chunk: 0,
    charge_every_chunk: false,
    program_budget: None,
};

/// [`PAPER_BOARD_PCM`] with a write time that depends on the cells programmed, as on a
/// chip with a program-power budget.
///
/// Section 2 of the paper: "the high power consumption of PCM cell programming and the
/// given peak power constraint of PCM chip limit the maximum number of bits to be
/// programmed at a time" (its example: 512 bits written as 32 chunks of 16 bits), and
/// footnote 5: the board's original 1 Gb chip [Kwon et al. 2012] "shows write performance
/// in proportion to the amount of data difference". So each of the four chips programs at
/// most 16 cells at once: 64 cells per iteration for the module, the programmed cells
/// (flip cells included) taken as spread evenly over the four chips, the module's best
/// case. The iteration time comes from the datasheet [`PAPER_BOARD_PCM`] uses (IPL-P
/// Table 1): 7.1 µs to write 32 B, 256 cells each programmed, is 16 iterations of 16
/// cells, 443.75 ns each, rounded to 444 ns. A 128 B step whose 1,024 cells all change
/// then takes 16 iterations (7.104 µs, against 7.1 µs under [`PAPER_BOARD_PCM`]) and a
/// step changing fewer cells takes fewer. (Section 2 puts a cell's program latency at
/// "typically on the order of 100–200ns"; we keep the datasheet's longer iteration so that
/// both timings agree on a fully changed chunk.) Reads as [`PAPER_BOARD_PCM`].
pub const PAPER_BOARD_PCM_PROGRAM_BUDGET: PcmStorageTiming = PcmStorageTiming {
    program_budget: Some(ProgramBudget { cells_per_iteration: 64, ns_per_iteration: 444 }),
    ..PAPER_BOARD_PCM
};

/// The standby power of a memory over a run, by power mode: while it serves an access
/// and while it waits. The energy of the accesses themselves is counted apart (for the
/// PCM, per bit read and programmed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BackgroundPower {
    /// While the device is busy, µW (active standby).
    pub busy_uw: u64,
    /// The rest of the run, µW (precharge standby; no power-down).
    pub idle_uw: u64,
}

impl BackgroundPower {
    /// The board's four PCM chips. The paper estimated energy "based on the measured
    /// execution cycles per memory power mode" with the Micron memory power calculator and
    /// its chip's datasheet, which is not public (footnote 4). We take the standby
    /// currents of a public LPDDR2 datasheet, the board chips' interface (LPDDR2-N):
    /// Micron MT42L128M32D1 (LPDDR2-S4, 4 Gb; the currents gem5's `LPDDR2_S4_1066_1x32`
    /// tabulates), precharge standby IDD2N 2 mA at VDD1 = 1.8 V plus IDD2N2 30 mA at
    /// VDD2 = 1.2 V, 39.6 mW, and active standby IDD3N 2.5 mA plus IDD3N2 30 mA, 40.5 mW,
    /// per chip; four chips. A DRAM's standby currents stand in for the PCM chip's (no
    /// refresh is in them: that is IDD5), and no power-down is assumed between accesses
    /// (the paper does not say its controller used one).
    pub const PAPER_BOARD: BackgroundPower = BackgroundPower { busy_uw: 4 * 40_500, idle_uw: 4 * 39_600 };

    /// Background energy over a run of `run_ns` of which the device was busy `busy_ns`, pJ
    /// (1 µW for 1 ns is 10⁻³ pJ; rounded down).
    pub fn energy_pj(&self, busy_ns: u64, run_ns: u64) -> u64 {
        let idle_ns = run_ns.saturating_sub(busy_ns);
        let fj = u128::from(self.busy_uw) * u128::from(busy_ns) + u128::from(self.idle_uw) * u128::from(idle_ns);
        u64::try_from(fj / 1000).unwrap_or(u64::MAX)
    }
}

/// Page-level time and energy of the block device that holds the database files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BlockTiming {
    /// Bytes per device page; an access is charged per page it overlaps.
    pub page_bytes: u64,
    /// Time per page read, ns.
    pub read_ns: u64,
    /// Time per page written, ns.
    pub write_ns: u64,
    /// Energy per page read, pJ.
    pub read_pj: u64,
    /// Energy per page written, pJ.
    pub write_pj: u64,
}

impl BlockTiming {
    /// NAND flash pages of 4 KB with the thesis's SSD timing (Table 5.1, seed 000: 25 µs
    /// read, 200 µs program) and energies (Table 2.2: 9.5 and 76.1 µJ per 4 KB). The paper
    /// used a Class 10 SD card and gives no numbers for it. A write is charged as a page
    /// program (no read-modify-write, no FTL: the DB file is a flat page array).
    pub const FLASH_4K: BlockTiming = BlockTiming {
        page_bytes: 4096,
        read_ns: FlashTiming::THESIS_TABLE_5_1.read_ns,
        write_ns: FlashTiming::THESIS_TABLE_5_1.program_ns,
        read_pj: FlashTiming::THESIS_TABLE_5_1.read_pj,
        write_pj: FlashTiming::THESIS_TABLE_5_1.program_pj,
    };
}

/// Counters of the block device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BlockStats {
    /// Pages read.
    pub pages_read: u64,
    /// Pages written.
    pub pages_written: u64,
    /// Time, ns.
    pub time_ns: u64,
    /// Energy, pJ.
    pub energy_pj: u64,
}

/// How SQLite overwrites its DB pages (Figures 5 and 6), counted per 1 KB logical page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteProfile {
    /// DB page writes.
    pub page_writes: u64,
    /// Writes to a page that had been written before.
    pub overwrites: u64,
    /// Overwrites whose bytes differ from the old page in at most 64 places.
    pub small_overwrites: u64,
    /// Distinct pages written, per file.
    pub distinct: BTreeMap<String, std::collections::BTreeSet<u64>>,
}

impl WriteProfile {
    /// The logical page size profiled, bytes (the paper's DB page).
    pub const PAGE_BYTES: usize = 1024;
    /// The most bytes an overwrite may change to count as small (Figure 6).
    pub const SMALL_BYTES: usize = 64;

    fn record(&mut self, name: &str, offset: u64, old: &[u8], data: &[u8]) {
        let page = Self::PAGE_BYTES;
        if !(offset as usize).is_multiple_of(page) {
            return;
        }
        if !self.distinct.contains_key(name) {
            self.distinct.insert(name.to_string(), Default::default());
        }
        let distinct = self.distinct.get_mut(name).expect("inserted above");
        for (k, new) in data.chunks_exact(page).enumerate() {
            let at = offset as usize + k * page;
            self.page_writes += 1;
            distinct.insert((at / page) as u64);
            if let Some(before) = old.get(at..at + page) {
                self.overwrites += 1;
                self.small_overwrites += u64::from(changes_at_most(before, new, Self::SMALL_BYTES));
            }
        }
    }

    /// Writes per distinct logical page.
    pub fn writes_per_page(&self) -> f64 {
        let distinct: usize = self.distinct.values().map(|pages| pages.len()).sum();
        self.page_writes as f64 / distinct.max(1) as f64
    }

    /// Percentage of overwrites changing at most 64 bytes.
    pub fn small_percent(&self) -> f64 {
        100.0 * self.small_overwrites as f64 / self.overwrites.max(1) as f64
    }
}

/// Whether `new` differs from `old` in at most `limit` bytes; equal 8-byte words are
/// skipped whole, and counting stops past the limit.
fn changes_at_most(old: &[u8], new: &[u8], limit: usize) -> bool {
    let mut changed = 0;
    for (a, b) in old.chunks(8).zip(new.chunks(8)) {
        if a != b {
            changed += a.iter().zip(b).filter(|(x, y)| x != y).count();
            if changed > limit {
                return false;
            }
        }
    }
    true
}

/// The largest database file the block device holds, bytes.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// A block device of named files (the database files), kept as real bytes.
#[derive(Debug, Clone)]
pub struct BlockStore {
    files: BTreeMap<String, Vec<u8>>,
    timing: BlockTiming,
    stats: BlockStats,
    profile: WriteProfile,
}

impl BlockStore {
    fn new(timing: BlockTiming) -> BlockStore {
        BlockStore { files: BTreeMap::new(), timing, stats: BlockStats::default(), profile: WriteProfile::default() }
    }

    /// The counters.
    pub fn stats(&self) -> &BlockStats {
        &self.stats
    }

    /// The overwrite profile of the DB pages.
    pub fn profile(&self) -> &WriteProfile {
        &self.profile
    }

    /// The bytes of a file, if it exists.
    pub fn file(&self, name: &str) -> Option<&[u8]> {
        self.files.get(name).map(Vec::as_slice)
    }

    /// The files, by name.
    pub fn files(&self) -> &BTreeMap<String, Vec<u8>> {
        &self.files
    }

    /// Puts a whole file image in place, without accounting (loading a saved image).
    pub fn load(&mut self, name: &str, bytes: Vec<u8>) {
        self.files.insert(name.to_string(), bytes);
    }

    fn pages(&self, offset: u64, len: u64) -> u64 {
        if len == 0 {
            return 0;
        }
        let page = self.timing.page_bytes;
        (offset + len - 1) / page - offset / page + 1
    }

    fn read(&mut self, name: &str, offset: u64, buf: &mut [u8]) -> usize {
        let pages = self.pages(offset, buf.len() as u64);
        self.stats.pages_read += pages;
        self.stats.time_ns += pages * self.timing.read_ns;
        self.stats.energy_pj += pages * self.timing.read_pj;
        let file = self.files.get(name).map_or(&[][..], Vec::as_slice);
        let start = (offset as usize).min(file.len());
        let end = (start + buf.len()).min(file.len());
        buf[..end - start].copy_from_slice(&file[start..end]);
        buf[end - start..].fill(0);
        end - start
    }

    fn write(&mut self, name: &str, offset: u64, data: &[u8]) -> Result<(), JournalError> {
        let end = offset.checked_add(data.len() as u64).filter(|&e| e <= MAX_FILE_BYTES);
        let Some(end) = end else {
            return Err(JournalError::Full(format!("database file {name} over {MAX_FILE_BYTES} bytes")));
        };
        let pages = self.pages(offset, data.len() as u64);
        self.stats.pages_written += pages;
        self.stats.time_ns += pages * self.timing.write_ns;
        self.stats.energy_pj += pages * self.timing.write_pj;
        if !self.files.contains_key(name) {
            self.files.insert(name.to_string(), Vec::new());
        }
        let file = self.files.get_mut(name).expect("inserted above");
        self.profile.record(name, offset, file, data);
        if file.len() < end as usize {
            file.resize(end as usize, 0);
        }
        file[offset as usize..end as usize].copy_from_slice(data);
        Ok(())
    }
}

/// Device parameters of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceParams {
    /// Bytes of PCM for the journal area (a multiple of 64 KB; 2 MB in the paper).
    pub journal_bytes: u64,
    /// Storage-mode timing of the PCM.
    pub pcm_timing: PcmStorageTiming,
    /// The database files' block device.
    pub block: BlockTiming,
}

impl DeviceParams {
    /// The paper's setup: a 2 MB journal area (Section 6.1) on the board's PCM, with
    /// 64-bit Flip-N-Write (Section 6.1), and the DB files on flash.
    pub const PAPER: DeviceParams =
        DeviceParams { journal_bytes: 2 << 20, pcm_timing: PAPER_BOARD_PCM, block: BlockTiming::FLASH_4K };

    /// [`DeviceParams::PAPER`] with the PCM's write time by the cells programmed
    /// ([`PAPER_BOARD_PCM_PROGRAM_BUDGET`]).
    pub const PAPER_PROGRAM_BUDGET: DeviceParams =
        DeviceParams { pcm_timing: PAPER_BOARD_PCM_PROGRAM_BUDGET, ..DeviceParams::PAPER };
}

/// Everything that survives a power cut: the PCM and the block device, and the count of
/// writes made to them.
#[derive(Debug)]
pub struct Devices {
    /// The journal's PCM (Flip-N-Write on, exact per-cell wear).
    pub pcm: Pcm,
    /// The database files.
    pub storage: BlockStore,
    /// Every PCM and storage write passes this one switch.
    power: PowerSwitch,
    /// Whether a sync was refused after the cut.
    refused_sync: bool,
    /// Cuts the switch had recorded when the power was last restored.
    cuts_at_restore: usize,
    by_field: [PcmStats; Field::ALL.len()],
}

impl Devices {
    /// Fresh devices: all PCM cells 0, no files.
    pub fn new(params: &DeviceParams) -> Result<Devices, JournalError> {
        let mut config = PcmConfig::new(params.journal_bytes);
        config.flip_n_write = Some(FlipNWrite::new(64)?);
        config.metrics = PcmMetrics::CIDR2011;
        config.storage = params.pcm_timing;
        Ok(Devices {
            pcm: Pcm::new(config)?,
            storage: BlockStore::new(params.block),
            power: PowerSwitch::new(),
            refused_sync: false,
            cuts_at_restore: 0,
            by_field: Default::default(),
        })
    }

    /// Device writes made so far (PCM and storage together).
    pub fn writes(&self) -> u64 {
        self.power.writes()
    }

    /// Cuts the power at the `index`-th write from the start (1-based): that write and
    /// every later one fail and change nothing.
    pub fn cut_power_at(&mut self, index: u64) {
        self.power.cut_before(index.saturating_sub(1));
    }

    /// Arms a second cut, at the `index`-th write from the start (1-based), for when the
    /// power is restored ([`Devices::restore_power`]): a cut during recovery.
    pub fn cut_power_after_restore(&mut self, index: u64) {
        self.power.cut_after_restore(index.saturating_sub(1));
    }

    /// Restores power (after the volatile state was dropped), with the cut
    /// [`Devices::cut_power_after_restore`] armed, if any.
    pub fn restore_power(&mut self) {
        self.power.restore();
        self.refused_sync = false;
        self.cuts_at_restore = self.power.cuts().len();
    }

    /// True once the cut is reached: the next write would be refused.
    pub fn is_cut(&self) -> bool {
        self.power.is_cut()
    }

    /// A sync: writes reach the persistent devices at once, so it succeeds unless the
    /// power is cut.
    pub fn sync(&mut self) -> Result<(), JournalError> {
        if self.is_cut() {
            self.refused_sync = true;
            return Err(JournalError::PowerCut(self.writes().saturating_add(1)));
        }
        Ok(())
    }

    /// Whether a cut refused a write or a sync since the power was last restored (false
    /// for a cut reached just as the run ended, which interrupted nothing).
    pub fn cut_interrupted(&self) -> bool {
        self.refused_sync || self.power.cuts().len() > self.cuts_at_restore
    }

    fn admit(&mut self) -> Result<(), JournalError> {
        self.power.admit().map_err(|admitted| JournalError::PowerCut(admitted + 1))
    }

    /// Simulated time spent in both devices, ns.
    pub fn time_ns(&self) -> u64 {
        self.pcm.stats().storage_time_ns + self.storage.stats.time_ns
    }

    /// Energy of both devices, pJ: PCM bit energy (CIDR model) plus block pages.
    pub fn energy_pj(&self) -> u64 {
        self.pcm_energy_pj() + self.storage.stats.energy_pj
    }

    /// Energy of the PCM, pJ.
    pub fn pcm_energy_pj(&self) -> u64 {
        let pcm = self.pcm.stats();
        pcm.energy_pj(&self.pcm.config().metrics) + pcm.storage_energy_pj
    }

    /// The PCM counters spent on each journal structure, in [`Field::ALL`] order; they
    /// add up to the PCM's own counters.
    pub fn pcm_by_field(&self) -> &[PcmStats; Field::ALL.len()] {
        &self.by_field
    }

    fn charge(&mut self, field: Field, before: &PcmStats) {
        let spent = self.pcm.stats().since(before);
        let sum = &mut self.by_field[field.index()];
        *sum = PcmStats {
            lines_read: sum.lines_read + spent.lines_read,
            lines_written: sum.lines_written + spent.lines_written,
            words_written: sum.words_written + spent.words_written,
            bits_written: sum.bits_written + spent.bits_written,
            flip_bits_written: sum.flip_bits_written + spent.flip_bits_written,
            start_gap_moves: sum.start_gap_moves + spent.start_gap_moves,
            storage_ops: sum.storage_ops + spent.storage_ops,
            storage_time_ns: sum.storage_time_ns + spent.storage_time_ns,
            storage_energy_pj: sum.storage_energy_pj + spent.storage_energy_pj,
        };
    }

    pub(crate) fn pcm_write(&mut self, field: Field, addr: u64, data: &[u8]) -> Result<(), JournalError> {
        self.admit()?;
        let before = *self.pcm.stats();
        self.pcm.storage_write(addr, data)?;
        self.charge(field, &before);
        Ok(())
    }

    pub(crate) fn pcm_read(&mut self, field: Field, addr: u64, buf: &mut [u8]) -> Result<(), JournalError> {
        let before = *self.pcm.stats();
        self.pcm.storage_read(addr, buf)?;
        self.charge(field, &before);
        Ok(())
    }

    pub(crate) fn pcm_byte(&mut self, field: Field, addr: u64) -> Result<u8, JournalError> {
        let mut b = [0u8];
        self.pcm_read(field, addr, &mut b)?;
        Ok(b[0])
    }

    pub(crate) fn file_read(&mut self, name: &str, offset: u64, buf: &mut [u8]) -> usize {
        self.storage.read(name, offset, buf)
    }

    pub(crate) fn file_write(&mut self, name: &str, offset: u64, data: &[u8]) -> Result<(), JournalError> {
        self.admit()?;
        self.storage.write(name, offset, data)
    }

    pub(crate) fn file_truncate(&mut self, name: &str, size: u64) -> Result<(), JournalError> {
        self.admit()?;
        if let Some(file) = self.storage.files.get_mut(name) {
            file.truncate(size as usize);
        }
        Ok(())
    }

    pub(crate) fn file_delete(&mut self, name: &str) -> Result<(), JournalError> {
        self.admit()?;
        self.storage.files.remove(name);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_energy_is_power_times_time_by_mode() {
        let power = BackgroundPower { busy_uw: 2_000, idle_uw: 1_000 };
        // 1 ms busy at 2 mW and 3 ms idle at 1 mW: 2 µJ + 3 µJ.
        assert_eq!(power.energy_pj(1_000_000, 4_000_000), 5_000_000);
        assert_eq!(power.energy_pj(0, 0), 0);
        // Four chips of 39.6 mW idle for 1 s: 158.4 mJ.
        assert_eq!(BackgroundPower::PAPER_BOARD.energy_pj(0, 1_000_000_000), 158_400_000_000);
    }

    #[test]
    fn the_program_budget_preset_agrees_with_the_fixed_time_on_a_fully_changed_chunk() {
        let budget = PAPER_BOARD_PCM_PROGRAM_BUDGET.program_budget.expect("a budget");
        let cells = 8 * PAPER_BOARD_PCM.write_chunk_bytes;
        assert_eq!(budget.iterations(cells), 16);
        assert!(budget.time_ns(cells).abs_diff(PAPER_BOARD_PCM.write_ns_per_chunk) <= 4);
        assert_eq!(PcmStorageTiming { program_budget: None, ..PAPER_BOARD_PCM_PROGRAM_BUDGET }, PAPER_BOARD_PCM);
    }

    #[test]
    fn small_overwrites_count_changed_bytes_up_to_the_limit() {
        let old = vec![7u8; 1024];
        let mut new = old.clone();
        assert!(changes_at_most(&old, &new, 64));
        for i in (0..1024).step_by(16).take(64) {
            new[i] = 8;
        }
        assert!(changes_at_most(&old, &new, 64), "64 bytes changed, in 64 words");
        new[1] = 9;
        assert!(!changes_at_most(&old, &new, 64), "65 bytes changed");
        let mut profile = WriteProfile::default();
        profile.record("a.db", 0, &[], &old);
        profile.record("a.db", 0, &old, &new);
        profile.record("b.db", 1024, &[], &old);
        assert_eq!((profile.page_writes, profile.overwrites, profile.small_overwrites), (3, 1, 0));
        assert_eq!(profile.writes_per_page(), 1.5);
    }
}
