//! Phase-change memory with differential writes, optional Flip-N-Write, exact per-cell
//! wear, and optional Start-Gap line remapping.
//!
//! Geometry: 64 B lines of eight 8 B words. All cells start at 0. A line write compares
//! the new data with the cells and programs only the cells that change; a word counts as
//! written when at least one of its cells (flip cells included) is programmed.
//!
//! Storage is sparse: chunks of 64 line records (a line's logical words, flip cells and
//! lowest wear plane together; the data cells are the words with the groups whose flip
//! cell is set inverted) are allocated on first write, and a line's wear
//! counters grow with the writes it has seen (see [`crate::wear`]). Counted to the word
//! ([`PcmAccounting::Words`]) or to the cell without wear ([`PcmAccounting::Bits`]), a
//! chunk holds only its 64 lines' logical bytes, 4 KiB in a row.

pub(crate) mod line;
mod store;

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::error::DeviceError;
use crate::index;
use crate::params::{PcmMetrics, PcmStorageTiming};
use crate::start_gap::StartGap;
use crate::wear::{WearReport, FLIP_LANE, LANES};

pub use line::{bytes_to_words, words_to_bytes, FlipNWrite, LineWrite, LINE_BYTES, WORDS_PER_LINE, WORD_BYTES};
use line::{program_record, with_bytes_replaced, Encoding, Plain, WordFlip};
pub use store::LINE_HOST_BYTES;
use store::{store_words, Chunk, ChunkMut, Directory, Records, WordChunk, CHUNK_LINES};

/// What a PCM write counts ([`PcmConfig::accounting`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PcmAccounting {
    /// Every cell: the cells each write programs (Flip-N-Write's encoding included) and
    /// each cell's program count (wear).
    #[default]
    Cells,
    /// To the word: lines and words written exactly as [`PcmAccounting::Cells`] counts
    /// them (a word is written when its logical value changes, whatever the encoding), and
    /// so the storage-mode time and chunk energy, which depend only on which words change.
    /// Not counted: the cells programmed (`bits_written`, `flip_bits_written`, and the bit
    /// energy derived from them), which depend on the encoding of each word, and cell
    /// wear ([`Pcm::wear_report`] and [`Pcm::cell_writes`] read 0). The device keeps only
    /// the logical bytes of each written line (64 B of host memory a line, against
    /// [`LINE_HOST_BYTES`] or more counting every cell).
    Words,
    /// The cells programmed without their wear, for a device without Flip-N-Write (which
    /// [`Pcm::new`] refuses with it): every counter exactly as [`PcmAccounting::Cells`]
    /// counts it (a cell is programmed when its bit changes), kept as
    /// [`PcmAccounting::Words`] keeps the bytes (64 B of host memory a line); cell wear is
    /// not counted ([`Pcm::wear_report`] and [`Pcm::cell_writes`] read 0). For a caller
    /// that reads the counters and never the wear. Not a configuration file's choice: it
    /// is neither read nor written by serde.
    #[serde(skip)]
    Bits,
}

impl PcmAccounting {
    /// Whether every cell is counted.
    pub fn is_cells(&self) -> bool {
        *self == PcmAccounting::Cells
    }
}

/// PCM device configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcmConfig {
    /// Logical capacity, bytes (a multiple of 64).
    pub capacity_bytes: u64,
    /// Flip-N-Write, off when `None`.
    pub flip_n_write: Option<FlipNWrite>,
    /// Main-memory cost parameters.
    pub metrics: PcmMetrics,
    /// Storage-mode timing.
    pub storage: PcmStorageTiming,
    /// Start-Gap: gap moves once every this many line writes; off when `None`.
    pub start_gap_interval: Option<u64>,
    /// Start-Gap's static address randomiser: the seed of a Feistel permutation of the
    /// line addresses applied before Start-Gap (Qureshi et al., MICRO 2009); off when
    /// `None`. Needs `start_gap_interval`.
    #[serde(default)]
    pub start_gap_randomiser_seed: Option<u64>,
    /// What writes count: every cell (the default) or only to the word.
    #[serde(default, skip_serializing_if = "PcmAccounting::is_cells")]
    pub accounting: PcmAccounting,
}

impl PcmConfig {
    /// A device of `capacity_bytes` with default parameters and no Flip-N-Write.
    pub fn new(capacity_bytes: u64) -> PcmConfig {
        PcmConfig {
            capacity_bytes,
            flip_n_write: None,
            metrics: PcmMetrics::CIDR2011,
            storage: PcmStorageTiming::default(),
            start_gap_interval: None,
            start_gap_randomiser_seed: None,
            accounting: PcmAccounting::Cells,
        }
    }
}

/// PCM counters. Derived figures come from [`PcmStats::energy_pj`] and
/// [`PcmStats::latency_cycles`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcmStats {
    /// Lines read (N_l).
    pub lines_read: u64,
    /// Lines written (N_lw), whether or not any cell changed.
    pub lines_written: u64,
    /// Words with at least one programmed cell (N_w).
    pub words_written: u64,
    /// Cells programmed, flip cells included.
    pub bits_written: u64,
    /// Flip cells programmed (part of `bits_written`).
    pub flip_bits_written: u64,
    /// Line copies made by Start-Gap (their cells are in the counters above).
    pub start_gap_moves: u64,
    /// Storage-mode operations.
    pub storage_ops: u64,
    /// Storage-mode time, ns.
    pub storage_time_ns: u64,
    /// Storage-mode per-chunk energy, pJ (from presets that give one).
    pub storage_energy_pj: u64,
}

impl PcmStats {
    /// CIDR energy formula over these counters.
    pub fn energy_pj(&self, metrics: &PcmMetrics) -> u64 {
        metrics.energy_pj(self.lines_read, self.lines_written, self.bits_written)
    }

    /// CIDR latency formula over these counters.
    pub fn latency_cycles(&self, metrics: &PcmMetrics) -> u64 {
        metrics.latency_cycles(self.lines_read, self.words_written)
    }

    /// Counter-wise difference `self - earlier`.
    pub fn since(&self, earlier: &PcmStats) -> PcmStats {
        PcmStats {
            lines_read: self.lines_read - earlier.lines_read,
            lines_written: self.lines_written - earlier.lines_written,
            words_written: self.words_written - earlier.words_written,
            bits_written: self.bits_written - earlier.bits_written,
            flip_bits_written: self.flip_bits_written - earlier.flip_bits_written,
            start_gap_moves: self.start_gap_moves - earlier.start_gap_moves,
            storage_ops: self.storage_ops - earlier.storage_ops,
            storage_time_ns: self.storage_time_ns - earlier.storage_time_ns,
            storage_energy_pj: self.storage_energy_pj - earlier.storage_energy_pj,
        }
    }
}

/// A PCM device. A clone is the device in the same state: bytes, wear, counters and
/// Start-Gap registers.
#[derive(Clone)]
pub struct Pcm {
    config: PcmConfig,
    /// The lines counting every cell: table → chunk → line record.
    tables: Directory<Chunk>,
    /// The lines kept as bytes ([`PcmAccounting::Words`] and [`PcmAccounting::Bits`]; `tables` then stays
    /// empty): table → chunk → line bytes.
    words: Directory<WordChunk>,
    stats: PcmStats,
    start_gap: Option<StartGap>,
}

impl std::fmt::Debug for Pcm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pcm").field("config", &self.config).field("stats", &self.stats).finish_non_exhaustive()
    }
}

impl Pcm {
    /// Creates a device; all cells start at 0.
    pub fn new(config: PcmConfig) -> Result<Pcm, DeviceError> {
        if config.capacity_bytes == 0 || !config.capacity_bytes.is_multiple_of(LINE_BYTES as u64) {
            return Err(DeviceError::Config(format!(
                "PCM capacity must be a positive multiple of 64 bytes, not {}",
                config.capacity_bytes
            )));
        }
        if let Some(fnw) = config.flip_n_write {
            FlipNWrite::new(fnw.group_bits)?;
            if config.accounting == PcmAccounting::Bits {
                return Err(DeviceError::Config(
                    "PCM accounting of the cells without their wear needs Flip-N-Write off".into(),
                ));
            }
        }
        if let Some(budget) = config.storage.program_budget {
            if budget.cells_per_iteration == 0 {
                return Err(DeviceError::Config("a program budget needs at least 1 cell per iteration".into()));
            }
            if config.storage.charge_every_chunk {
                return Err(DeviceError::Config(
                    "a program budget (time by the cells programmed) and charging every chunk (time by the chunks \
                     covered) exclude each other"
                        .into(),
                ));
            }
            if config.accounting == PcmAccounting::Words {
                return Err(DeviceError::Config(
                    "a program budget times a write by its cells, which PCM accounting to the word does not count"
                        .into(),
                ));
            }
        }
        let lines = config.capacity_bytes / LINE_BYTES as u64;
        let start_gap = match (config.start_gap_interval, config.start_gap_randomiser_seed) {
            (Some(0), _) => return Err(DeviceError::Config("Start-Gap interval must be at least 1".into())),
            (Some(interval), None) => Some(StartGap::new(lines, interval)),
            (Some(interval), Some(seed)) => Some(StartGap::randomised(lines, interval, seed)),
            (None, Some(_)) => {
                return Err(DeviceError::Config("the Start-Gap randomiser needs a Start-Gap interval".into()))
            }
            (None, None) => None,
        };
        Ok(Pcm { config, tables: Directory::new(), words: Directory::new(), stats: PcmStats::default(), start_gap })
    }

    /// The configuration.
    pub fn config(&self) -> &PcmConfig {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> &PcmStats {
        &self.stats
    }

    /// Zeroes the counters (not the wear, which is physical).
    pub fn reset_stats(&mut self) {
        self.stats = PcmStats::default();
    }

    /// Forgets every line from `first` on: their bytes, flip cells and wear are those of
    /// a line never written (the counters are not touched). For a caller that rewinds a
    /// simulation to a point before any of them was written. Without Start-Gap only (it
    /// moves lines).
    pub fn forget_lines_from(&mut self, first: u64) {
        assert!(self.start_gap.is_none(), "forgetting lines needs Start-Gap off");
        self.tables.forget_from(first);
        self.words.forget_from(first);
    }

    /// Logical lines.
    pub fn lines(&self) -> u64 {
        self.config.capacity_bytes / LINE_BYTES as u64
    }

    /// All physical cells: data and flip cells, the Start-Gap spare line included.
    pub fn device_cells(&self) -> u64 {
        let physical_lines = self.lines() + u64::from(self.start_gap.is_some());
        physical_lines * (LINE_BYTES as u64 * 8 + self.flip_cells_per_line())
    }

    fn flip_cells_per_line(&self) -> u64 {
        self.config.flip_n_write.map_or(0, |f| u64::from(f.flips_per_word()) * WORDS_PER_LINE as u64)
    }

    fn check_range(&self, addr: u64, len: u64) -> Result<(), DeviceError> {
        match addr.checked_add(len) {
            Some(end) if end <= self.config.capacity_bytes => Ok(()),
            _ => Err(DeviceError::OutOfRange { addr, len, capacity: self.config.capacity_bytes }),
        }
    }

    fn physical(&self, line: u64) -> u64 {
        self.start_gap.as_ref().map_or(line, |sg| sg.map(line))
    }

    fn chunk(&self, physical_line: u64) -> Option<&Chunk> {
        self.tables.get(physical_line)
    }

    /// The chunk holding `physical_line`, allocated on first use, and its written bits: one
    /// directory lookup.
    #[inline]
    fn chunk_mut(&mut self, physical_line: u64) -> ChunkMut<'_, Chunk> {
        self.tables.get_mut(physical_line)
    }

    /// Every allocated chunk counting every cell, with its written bits.
    fn all_chunks(&self) -> impl Iterator<Item = (&Chunk, u64)> {
        self.tables.chunks()
    }

    /// Whether the lines are kept as bytes, without cells ([`PcmAccounting::Words`] and
    /// [`PcmAccounting::Bits`]).
    fn counts_words(&self) -> bool {
        self.config.accounting != PcmAccounting::Cells
    }

    /// The logical content of a physical line, without accounting.
    fn peek_physical(&self, physical_line: u64) -> [u64; WORDS_PER_LINE] {
        if self.counts_words() {
            return self.words.get(physical_line).map_or([0; WORDS_PER_LINE], |chunk| {
                bytes_to_words(&chunk.lines[index(physical_line % CHUNK_LINES as u64)])
            });
        }
        self.chunk(physical_line)
            .map_or([0; WORDS_PER_LINE], |chunk| chunk.line(index(physical_line % CHUNK_LINES as u64)).words)
    }

    /// The logical content of a line, without accounting.
    pub fn peek_line(&self, line: u64) -> [u64; WORDS_PER_LINE] {
        self.peek_physical(self.physical(line))
    }

    /// Asks the host to bring the memory that a write of `line` reads (its words, flip
    /// cells and lowest wear plane) into its caches, without waiting for it, and changes
    /// nothing ([`LineDevice::prefetch_line`]).
    #[inline]
    pub fn prefetch_line(&self, line: u64) {
        let physical = self.physical(line);
        let slot = index(physical % CHUNK_LINES as u64);
        if self.counts_words() {
            if let Some(chunk) = self.words.get(physical) {
                mem_prefetch::prefetch_read_data::<_, 3>(&chunk.lines[slot]);
            }
        } else if let Some(chunk) = self.chunk(physical) {
            let record = chunk.line(slot);
            // Each host line of the record.
            mem_prefetch::prefetch_read_data::<_, 3>(&record.words[0]);
            mem_prefetch::prefetch_read_data::<_, 3>(&record.flips);
            mem_prefetch::prefetch_read_data::<_, 3>(record.wear.last_low_lane_ref());
        }
    }

    /// Reads a line (N_l += 1).
    pub fn read_line(&mut self, line: u64) -> [u64; WORDS_PER_LINE] {
        self.stats.lines_read += 1;
        self.peek_line(line)
    }

    /// Writes a line differentially (N_lw += 1).
    pub fn write_line(&mut self, line: u64, new: &[u64; WORDS_PER_LINE]) -> LineWrite {
        let physical = self.physical(line);
        let result = self.program_physical(physical, new);
        if let Some(sg) = self.start_gap.as_mut() {
            if let Some((from, to)) = sg.record_write() {
                let moved = self.peek_physical(from);
                self.program_physical(to, &moved);
                self.stats.start_gap_moves += 1;
            }
        }
        result
    }

    fn program_physical(&mut self, physical_line: u64, new: &[u64; WORDS_PER_LINE]) -> LineWrite {
        match (self.config.accounting, self.config.flip_n_write) {
            (PcmAccounting::Words | PcmAccounting::Bits, _) => self.program_words(physical_line, new),
            (PcmAccounting::Cells, None) => self.program_encoded(physical_line, new, Plain),
            (PcmAccounting::Cells, Some(FlipNWrite { group_bits: 64 })) => {
                self.program_encoded(physical_line, new, WordFlip)
            }
            (PcmAccounting::Cells, Some(fnw)) => self.program_encoded(physical_line, new, fnw),
        }
    }

    /// The write of [`PcmAccounting::Words`] and [`PcmAccounting::Bits`]: the line takes the
    /// logical words; the words written are those whose value changes, as in
    /// [`Pcm::program_encoded`]; the cells programmed are counted with `Bits` only.
    fn program_words(&mut self, physical_line: u64, new: &[u64; WORDS_PER_LINE]) -> LineWrite {
        let slot = index(physical_line % CHUNK_LINES as u64);
        let count_bits = self.counts_bits();
        let result = store_words(&mut self.words.get_mut(physical_line), slot, &words_to_bytes(new), count_bits);
        self.stats.lines_written += 1;
        self.stats.words_written += u64::from(result.words);
        self.stats.bits_written += u64::from(result.bits);
        result
    }

    /// Whether the lines are kept as bytes and their cells programmed counted
    /// ([`PcmAccounting::Bits`]).
    fn counts_bits(&self) -> bool {
        self.config.accounting == PcmAccounting::Bits
    }

    /// The write loop, monomorphised per encoding so the per-word path has no branches on
    /// the configuration.
    #[inline]
    fn program_encoded<E: Encoding>(&mut self, physical_line: u64, new: &[u64; WORDS_PER_LINE], enc: E) -> LineWrite {
        let slot = index(physical_line % CHUNK_LINES as u64);
        let chunk = self.chunk_mut(physical_line);
        *chunk.written |= 1 << slot;
        let (result, flip_bits) = program_record(chunk.chunk.line_mut(slot), new, enc);
        self.stats.lines_written += 1;
        self.stats.words_written += u64::from(result.words);
        self.stats.bits_written += u64::from(result.bits);
        self.stats.flip_bits_written += u64::from(flip_bits);
        result
    }

    /// Reads bytes: `lines_read` += the distinct lines `[addr, addr + len)` overlaps.
    pub fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.peek_bytes(addr, buf)?;
        self.stats.lines_read += lines_overlapped(addr, buf.len() as u64);
        Ok(())
    }

    /// The logical bytes of `[addr, addr + buf.len())`, without accounting. Without
    /// Start-Gap the lines are contiguous and read chunk by chunk (one directory lookup per
    /// chunk); with it, line by line through the remapping.
    pub fn peek_bytes(&self, addr: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.check_range(addr, buf.len() as u64)?;
        if self.start_gap.is_some() {
            let mut at = 0;
            for_each_line(addr, buf.len(), |line, start, take| {
                let bytes = words_to_bytes(&self.peek_line(line));
                buf[at..at + take].copy_from_slice(&bytes[start..start + take]);
                at += take;
            });
            return Ok(());
        }
        if self.counts_words() {
            self.peek_words_contiguous(addr, buf);
            return Ok(());
        }
        self.peek_contiguous(addr, buf);
        Ok(())
    }

    /// [`Pcm::peek_bytes`] without Start-Gap: physical lines are logical lines.
    fn peek_contiguous(&self, addr: u64, buf: &mut [u8]) {
        let mut line = addr / LINE_BYTES as u64;
        let mut start = index(addr % LINE_BYTES as u64);
        let mut rest = buf;
        while !rest.is_empty() {
            let chunk = self.chunk(line);
            let mut slot = index(line % CHUNK_LINES as u64);
            while slot < CHUNK_LINES && !rest.is_empty() {
                let take = (LINE_BYTES - start).min(rest.len());
                let (out, tail) = rest.split_at_mut(take);
                match chunk {
                    Some(chunk) => {
                        let words = chunk.line(slot).words;
                        match <&mut [u8; LINE_BYTES]>::try_from(&mut *out) {
                            // A whole line: its words straight into the buffer, one copy.
                            Ok(whole) => {
                                for (bytes, word) in whole.chunks_exact_mut(WORD_BYTES).zip(words) {
                                    bytes.copy_from_slice(&word.to_le_bytes());
                                }
                            }
                            Err(_) => out.copy_from_slice(&words_to_bytes(&words)[start..start + take]),
                        }
                    }
                    None => out.fill(0),
                }
                rest = tail;
                start = 0;
                slot += 1;
                line += 1;
            }
        }
    }

    /// [`Pcm::peek_bytes`] counting to the word without Start-Gap: a copy per chunk. (Not
    /// inlined: inlined, it made `peek_bytes` dearer counting every cell.)
    #[inline(never)]
    fn peek_words_contiguous(&self, addr: u64, buf: &mut [u8]) {
        let chunk_bytes = (CHUNK_LINES * LINE_BYTES) as u64;
        let mut at = addr;
        let mut rest = buf;
        while !rest.is_empty() {
            let start = index(at % chunk_bytes);
            let take = (index(chunk_bytes) - start).min(rest.len());
            let (out, tail) = rest.split_at_mut(take);
            match self.words.get(at / LINE_BYTES as u64) {
                Some(chunk) => out.copy_from_slice(&chunk.lines.as_flattened()[start..start + take]),
                None => out.fill(0),
            }
            rest = tail;
            at += take as u64;
        }
    }

    /// Counts a read of `[addr, addr + len)` without copying the data: `lines_read` += the
    /// distinct lines it overlaps, in constant time however long the range. Returns that
    /// number of lines.
    pub fn count_read(&mut self, addr: u64, len: u64) -> Result<u64, DeviceError> {
        self.check_range(addr, len)?;
        if len == 0 {
            return Ok(0);
        }
        let lines = lines_overlapped(addr, len);
        self.stats.lines_read += lines;
        Ok(lines)
    }

    /// Writes bytes: `lines_written` += the distinct lines overlapped; every word overlapped
    /// becomes the old logical word with the written bytes replaced, written differentially.
    /// Returns the indices (global, in units of `chunk_bytes`) of chunks with a programmed
    /// cell, in increasing order.
    pub fn write_bytes(&mut self, addr: u64, data: &[u8]) -> Result<WriteSummary, DeviceError> {
        self.check_range(addr, data.len() as u64)?;
        let mut summary = WriteSummary::default();
        self.write_range(addr, data, |line, result| summary.add(line, result));
        Ok(summary)
    }

    /// The line writes of [`Pcm::write_bytes`] (the range checked), handing each line's
    /// result to `on_line` in increasing line order. A line the range covers whole is
    /// written without reading its old content. Without Start-Gap the lines are written in
    /// place chunk by chunk (one directory lookup per chunk, as [`Pcm::program_words`] or,
    /// counting every cell, [`Pcm::program_encoded`] writes one line); with it each line
    /// goes through [`Pcm::write_line`].
    fn write_range(&mut self, addr: u64, data: &[u8], mut on_line: impl FnMut(u64, LineWrite)) {
        if self.start_gap.is_none() && self.counts_words() {
            self.store_words_contiguous(addr, data, on_line);
            return;
        }
        if self.start_gap.is_none() {
            match self.config.flip_n_write {
                None => self.program_contiguous(addr, data, Plain, on_line),
                Some(FlipNWrite { group_bits: 64 }) => self.program_contiguous(addr, data, WordFlip, on_line),
                Some(fnw) => self.program_contiguous(addr, data, fnw, on_line),
            }
            return;
        }
        let mut at = 0;
        for_each_line(addr, data.len(), |line, start, take| {
            let written = &data[at..at + take];
            at += take;
            let new = match <&[u8; LINE_BYTES]>::try_from(written) {
                Ok(whole) => bytes_to_words(whole),
                Err(_) => with_bytes_replaced(self.peek_line(line), start, written),
            };
            on_line(line, self.write_line(line, &new));
        });
    }

    /// [`Pcm::write_range`] counting to the word without Start-Gap.
    fn store_words_contiguous(&mut self, addr: u64, data: &[u8], mut on_line: impl FnMut(u64, LineWrite)) {
        let (mut lines, mut words, mut bits) = (0u64, 0u64, 0u64);
        let count_bits = self.counts_bits();
        self.words.for_each_line_in_place(addr, data, |chunk, slot, line, start, written| {
            let result = match <&[u8; LINE_BYTES]>::try_from(written) {
                Ok(whole) => store_words(chunk, slot, whole, count_bits),
                Err(_) => {
                    let mut bytes = chunk.chunk.lines[slot];
                    bytes[start..start + written.len()].copy_from_slice(written);
                    store_words(chunk, slot, &bytes, count_bits)
                }
            };
            lines += 1;
            words += u64::from(result.words);
            bits += u64::from(result.bits);
            on_line(line, result);
        });
        self.stats.lines_written += lines;
        self.stats.words_written += words;
        self.stats.bits_written += bits;
    }

    /// [`Pcm::write_range`] counting every cell without Start-Gap: the lines are written in
    /// place chunk by chunk (one directory lookup per chunk), each as [`Pcm::program_encoded`]
    /// writes one line.
    fn program_contiguous<E: Encoding>(
        &mut self,
        addr: u64,
        data: &[u8],
        enc: E,
        mut on_line: impl FnMut(u64, LineWrite),
    ) {
        let (mut lines, mut words, mut bits, mut flip_bits) = (0u64, 0u64, 0u64, 0u64);
        self.tables.for_each_line_in_place(addr, data, |chunk, slot, line, start, written| {
            *chunk.written |= 1 << slot;
            let record = chunk.chunk.line_mut(slot);
            let new = match <&[u8; LINE_BYTES]>::try_from(written) {
                Ok(whole) => bytes_to_words(whole),
                Err(_) => with_bytes_replaced(record.words, start, written),
            };
            let (result, flips) = program_record(record, &new, enc);
            lines += 1;
            words += u64::from(result.words);
            bits += u64::from(result.bits);
            flip_bits += u64::from(flips);
            on_line(line, result);
        });
        self.stats.lines_written += lines;
        self.stats.words_written += words;
        self.stats.bits_written += bits;
        self.stats.flip_bits_written += flip_bits;
    }

    /// Storage-mode read: returns the operation's time in ns (initial latency plus one
    /// read chunk time per chunk overlapped).
    pub fn storage_read(&mut self, addr: u64, buf: &mut [u8]) -> Result<u64, DeviceError> {
        self.read_bytes(addr, buf)?;
        Ok(self.charge_storage_read(addr, buf.len() as u64))
    }

    /// [`Pcm::storage_read`] of the `len` bytes at `addr` that copies only the first
    /// `buf.len()` of them into `buf` (at most `len`): counts and returns exactly what
    /// reading them all does.
    pub fn storage_read_head(&mut self, addr: u64, len: u64, buf: &mut [u8]) -> Result<u64, DeviceError> {
        assert!(buf.len() as u64 <= len, "the head of a read lies within it");
        self.check_range(addr, len)?;
        self.peek_bytes(addr, buf)?;
        self.stats.lines_read += lines_overlapped(addr, len);
        Ok(self.charge_storage_read(addr, len))
    }

    /// Charges a storage-mode read of `len` bytes at `addr` and returns its time.
    fn charge_storage_read(&mut self, addr: u64, len: u64) -> u64 {
        let timing = self.config.storage;
        let chunks = chunks_overlapped(addr, len, timing.read_chunk_bytes);
        let time_ns = timing.initial_ns + chunks * timing.read_ns_per_chunk;
        self.stats.storage_ops += 1;
        self.stats.storage_time_ns += time_ns;
        self.stats.storage_energy_pj += chunks * timing.read_pj_per_chunk;
        time_ns
    }

    /// Storage-mode write: returns the operation's time in ns (initial latency plus one
    /// write chunk time per chunk whose cells change, or, with a
    /// [`crate::ProgramBudget`], its program iterations: the cells it programs, flip cells
    /// and any Start-Gap move's included, `cells_per_iteration` at a time).
    pub fn storage_write(&mut self, addr: u64, data: &[u8]) -> Result<u64, DeviceError> {
        self.check_range(addr, data.len() as u64)?;
        let (line, start) = (addr / LINE_BYTES as u64, index(addr % LINE_BYTES as u64));
        if self.start_gap.is_none() && self.counts_words() && !data.is_empty() && start + data.len() <= LINE_BYTES {
            // Counted to the word (or every cell without its wear), within one line (a log
            // area's table row): that line written, without the walk over a range's lines.
            // (Counting every cell with its wear, the walk's one line costs no more.)
            let result = self.store_in_line(line, start, data);
            let mut changed = ChangedChunks::new(self.config.storage.write_chunk_bytes);
            changed.add_line(line, result.word_mask);
            return Ok(self.count_storage_write(addr, data.len() as u64, changed.count, u64::from(result.bits)));
        }
        Ok(self.charge_storage_write(addr, data.len() as u64, |pcm, changed| {
            pcm.write_range(addr, data, |line, result| changed.add_line(line, result.word_mask))
        }))
    }

    /// Counting to the word (or every cell without its wear) without Start-Gap: writes
    /// `data` over bytes `start..` of `line`, the rest of the line kept, as
    /// [`Pcm::write_range`] writes a line it covers in part.
    fn store_in_line(&mut self, line: u64, start: usize, data: &[u8]) -> LineWrite {
        let slot = index(line % CHUNK_LINES as u64);
        let count_bits = self.counts_bits();
        let mut chunk = self.words.get_mut(line);
        let mut bytes = chunk.chunk.lines[slot];
        bytes[start..start + data.len()].copy_from_slice(data);
        let result = store_words(&mut chunk, slot, &bytes, count_bits);
        self.stats.lines_written += 1;
        self.stats.words_written += u64::from(result.words);
        self.stats.bits_written += u64::from(result.bits);
        result
    }

    /// [`Pcm::storage_write`] of `data` at `addr` when the bytes `unchanged` (a range of
    /// `data`'s indices) are known to hold their stored values already. Stores, counts and
    /// returns exactly what `storage_write` would (every line the range overlaps is written;
    /// a line those bytes cover whole is written unchanged), but without Start-Gap does not
    /// read or compare the lines those bytes cover whole: they are only counted.
    pub fn storage_write_known(&mut self, addr: u64, data: &[u8], unchanged: Range<usize>) -> Result<u64, DeviceError> {
        self.check_range(addr, data.len() as u64)?;
        assert!(unchanged.start <= unchanged.end && unchanged.end <= data.len(), "unchanged bytes within the data");
        let line_bytes = LINE_BYTES as u64;
        // The whole lines within the unchanged bytes.
        let (first, end) =
            ((addr + unchanged.start as u64).div_ceil(line_bytes), (addr + unchanged.end as u64) / line_bytes);
        Ok(self.charge_storage_write(addr, data.len() as u64, |pcm, changed| {
            let mut on_line = |line, result: LineWrite| changed.add_line(line, result.word_mask);
            // With Start-Gap every line write moves the gap: each line is written.
            if pcm.start_gap.is_some() || first >= end {
                pcm.write_range(addr, data, on_line);
                return;
            }
            let (before, after) = (index(first * line_bytes - addr), index(end * line_bytes - addr));
            pcm.write_range(addr, &data[..before], &mut on_line);
            pcm.mark_written(first, end);
            pcm.stats.lines_written += end - first;
            pcm.write_range(end * line_bytes, &data[after..], &mut on_line);
        }))
    }

    /// Carries out a storage-mode write of `len` bytes at `addr` (already checked) with
    /// `write`, which reports each line write's changed words; charges and returns its time.
    fn charge_storage_write(&mut self, addr: u64, len: u64, write: impl FnOnce(&mut Pcm, &mut ChangedChunks)) -> u64 {
        let timing = self.config.storage;
        let mut changed = ChangedChunks::new(timing.write_chunk_bytes);
        let cells_before = self.stats.bits_written;
        write(self, &mut changed);
        let cells = self.stats.bits_written - cells_before;
        self.count_storage_write(addr, len, changed.count, cells)
    }

    /// Counts a storage-mode write of `len` bytes at `addr` whose programmed words lie in
    /// `changed_chunks` write chunks and which programmed `cells` cells; returns its time
    /// in ns.
    fn count_storage_write(&mut self, addr: u64, len: u64, changed_chunks: u64, cells: u64) -> u64 {
        let timing = self.config.storage;
        let chunks = if timing.charge_every_chunk {
            chunks_overlapped(addr, len, timing.write_chunk_bytes)
        } else {
            changed_chunks
        };
        let program_ns = match timing.program_budget {
            None => chunks * timing.write_ns_per_chunk,
            Some(budget) => budget.time_ns(cells),
        };
        let time_ns = timing.initial_ns + program_ns;
        self.stats.storage_ops += 1;
        self.stats.storage_time_ns += time_ns;
        self.stats.storage_energy_pj += chunks * timing.write_pj_per_chunk;
        time_ns
    }

    /// [`Pcm::storage_write`] of whole lines, whose lines outside `dirty_lines` (bit `i`:
    /// line `i` of the range) the caller knows to hold the device's bytes already, as a
    /// page pool knows of the lines it has not written since it read the page: those are
    /// counted as written and unchanged, as `storage_write` counts them, without comparing
    /// them. Every counter, cell and wear count comes out as `storage_write`'s. `addr` and
    /// `data.len()` are multiples of 64 and the range is at most 64 lines. With Start-Gap,
    /// whose gap moves with every line write, this is `storage_write`.
    pub fn storage_write_lines(&mut self, addr: u64, data: &[u8], dirty_lines: u64) -> Result<u64, DeviceError> {
        let lines = data.len() / LINE_BYTES;
        assert!(
            addr.is_multiple_of(LINE_BYTES as u64) && data.len().is_multiple_of(LINE_BYTES) && lines <= 64,
            "whole lines, at most 64"
        );
        if self.start_gap.is_some() {
            return self.storage_write(addr, data);
        }
        self.check_range(addr, data.len() as u64)?;
        let first = addr / LINE_BYTES as u64;
        // Every line of the range is written: its chunk allocated and the line marked, as
        // a line write does whether or not a cell changes.
        self.mark_written(first, first + lines as u64);
        let mut pending = if lines == 64 { dirty_lines } else { dirty_lines & ((1 << lines) - 1) };
        self.stats.lines_written += lines as u64 - u64::from(pending.count_ones());
        Ok(self.charge_storage_write(addr, data.len() as u64, |pcm, changed| {
            while pending != 0 {
                let i = pending.trailing_zeros() as usize;
                pending &= pending - 1;
                let bytes: &[u8; LINE_BYTES] =
                    data[i * LINE_BYTES..(i + 1) * LINE_BYTES].try_into().expect("a line's bytes");
                let result = pcm.program_physical(first + i as u64, &bytes_to_words(bytes));
                changed.add_line(first + i as u64, result.word_mask);
            }
        }))
    }

    /// Marks the lines `first..end` written (their chunks allocated), as a line write does
    /// whether or not a cell changes, without storing anything.
    fn mark_written(&mut self, first: u64, end: u64) {
        if self.counts_words() {
            self.words.mark_written(first, end);
        } else {
            self.tables.mark_written(first, end);
        }
    }

    /// The exact program count of one physical cell: `lane` 0..8 are data words, 8 the
    /// flip cells (word `w`'s at bits `8w..`); 0 under [`PcmAccounting::Words`] and
    /// [`PcmAccounting::Bits`].
    pub fn cell_writes(&self, physical_line: u64, lane: usize, bit: u32) -> u64 {
        self.chunk(physical_line).map_or(0, |c| c.line(index(physical_line % CHUNK_LINES as u64)).wear.count(lane, bit))
    }

    /// Summarises the wear of every line ever written (all counts 0 under
    /// [`PcmAccounting::Words`] and [`PcmAccounting::Bits`], which do not count wear).
    pub fn wear_report(&self) -> WearReport {
        let mut valid = [u64::MAX; LANES];
        valid[FLIP_LANE] = self.config.flip_n_write.map_or(0, |f| {
            let per_word = (1u64 << f.flips_per_word()) - 1;
            (0..WORDS_PER_LINE).fold(0, |m, w| m | per_word << (8 * w))
        });
        let cells_per_line = LINE_BYTES as u64 * 8 + self.flip_cells_per_line();
        let mut report =
            WearReport { max_cell_writes: 0, total_cell_writes: 0, cells_tracked: 0, histogram_log2: Vec::new() };
        if self.counts_words() {
            // Every cell of every written line tracked, each with 0 program counts.
            let lines = self.words.chunks().map(|(_, written)| u64::from(written.count_ones())).sum::<u64>();
            report.cells_tracked = lines * cells_per_line;
            if lines != 0 {
                report.histogram_log2.push(report.cells_tracked);
            }
            return report;
        }
        for (chunk, mut written) in self.all_chunks() {
            while written != 0 {
                let slot = written.trailing_zeros() as usize;
                written &= written - 1;
                let (max, total) = chunk.line(slot).wear.summarise(&valid, &mut report.histogram_log2);
                report.max_cell_writes = report.max_cell_writes.max(max);
                report.total_cell_writes += total;
                report.cells_tracked += cells_per_line;
            }
        }
        report
    }

    /// The largest program count of any cell: [`Pcm::wear_report`]'s `max_cell_writes`
    /// without the rest of the report. A line's counts are below 2^(its planes), so only
    /// the lines whose counters could hold more than the largest count found so far are
    /// searched.
    pub fn max_cell_writes(&self) -> u64 {
        let mut max = 0;
        for (chunk, mut written) in self.all_chunks() {
            while written != 0 {
                let wear = &chunk.line(written.trailing_zeros() as usize).wear;
                written &= written - 1;
                if wear.count_bound() > max {
                    max = max.max(wear.max());
                }
            }
        }
        max
    }

    /// Heap bytes held for cell contents and wear counters.
    pub fn heap_bytes(&self) -> usize {
        self.tables.heap_bytes()
            + self.words.heap_bytes()
            + self.all_chunks().flat_map(|(c, _)| c.lines().map(|l| l.wear.heap_bytes())).sum::<usize>()
    }
}

/// PCM seen as main memory: 64 B lines. Implemented by [`Pcm`]; the CPU memory model is
/// written against this trait only.
pub trait LineDevice {
    /// Reads a line, counting one line fetch.
    fn read_line(&mut self, line: u64) -> [u64; WORDS_PER_LINE];
    /// Writes a line differentially, counting one line write.
    fn write_line(&mut self, line: u64, new: &[u64; WORDS_PER_LINE]) -> LineWrite;
    /// The line's logical content, without accounting.
    fn peek_line(&self, line: u64) -> [u64; WORDS_PER_LINE];
    /// Counts one line fetch whose data the caller already holds (a cache model keeps
    /// the memory image itself), without touching the cells.
    fn count_fetch(&mut self, line: u64);
    /// Logical capacity in bytes.
    fn capacity_bytes(&self) -> u64;
    /// The counters.
    fn line_stats(&self) -> PcmStats;
    /// Zeroes the counters.
    fn reset_line_stats(&mut self);
    /// The cost parameters.
    fn metrics(&self) -> PcmMetrics;
    /// A hint that `line` will be written soon: the device may ask the host to bring what
    /// the write reads into its caches (a prefetch, which does not wait). Changes nothing;
    /// the default asks for nothing.
    fn prefetch_line(&self, _line: u64) {}
}

impl LineDevice for Pcm {
    fn read_line(&mut self, line: u64) -> [u64; WORDS_PER_LINE] {
        Pcm::read_line(self, line)
    }
    fn write_line(&mut self, line: u64, new: &[u64; WORDS_PER_LINE]) -> LineWrite {
        Pcm::write_line(self, line, new)
    }
    fn peek_line(&self, line: u64) -> [u64; WORDS_PER_LINE] {
        Pcm::peek_line(self, line)
    }
    fn count_fetch(&mut self, _line: u64) {
        self.stats.lines_read += 1;
    }
    #[inline]
    fn prefetch_line(&self, line: u64) {
        Pcm::prefetch_line(self, line);
    }
    fn capacity_bytes(&self) -> u64 {
        self.config.capacity_bytes
    }
    fn line_stats(&self) -> PcmStats {
        self.stats
    }
    fn reset_line_stats(&mut self) {
        self.reset_stats();
    }
    fn metrics(&self) -> PcmMetrics {
        self.config.metrics
    }
}

/// Which words a byte-range write programmed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteSummary {
    /// Global indices of programmed words (address / 8), increasing.
    pub programmed_words: Vec<u64>,
    /// Cells programmed.
    pub bits: u64,
}

impl WriteSummary {
    fn add(&mut self, line: u64, result: LineWrite) {
        self.bits += u64::from(result.bits);
        for w in 0..WORDS_PER_LINE as u64 {
            if result.word_mask >> w & 1 == 1 {
                self.programmed_words.push(line * WORDS_PER_LINE as u64 + w);
            }
        }
    }

    /// Distinct chunks of `chunk_bytes` (a multiple of 8) holding a programmed word.
    pub fn chunks_changed(&self, chunk_bytes: u64) -> u64 {
        let mut changed = ChangedChunks::new(chunk_bytes);
        for &word in &self.programmed_words {
            changed.add_word(word);
        }
        changed.count
    }
}

/// Counts the distinct chunks holding a programmed word, from words given in increasing
/// order.
struct ChangedChunks {
    words_per_chunk: u64,
    last: Option<u64>,
    count: u64,
}

impl ChangedChunks {
    fn new(chunk_bytes: u64) -> ChangedChunks {
        ChangedChunks { words_per_chunk: (chunk_bytes / WORD_BYTES as u64).max(1), last: None, count: 0 }
    }

    fn add_word(&mut self, word: u64) {
        let chunk = word / self.words_per_chunk;
        if self.last != Some(chunk) {
            self.count += 1;
            self.last = Some(chunk);
        }
    }

    /// Adds the words of `line` set in `word_mask`.
    fn add_line(&mut self, line: u64, word_mask: u8) {
        if self.words_per_chunk == 1 {
            // Every word is its own chunk, so the words of increasing lines are distinct.
            self.count += u64::from(word_mask.count_ones());
            return;
        }
        let mut pending = word_mask;
        while pending != 0 {
            self.add_word(line * WORDS_PER_LINE as u64 + u64::from(pending.trailing_zeros()));
            pending &= pending - 1;
        }
    }
}

fn chunks_overlapped(addr: u64, len: u64, chunk_bytes: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    (addr + len - 1) / chunk_bytes - addr / chunk_bytes + 1
}

/// Lines a byte range of `len` bytes at `addr` overlaps.
fn lines_overlapped(addr: u64, len: u64) -> u64 {
    chunks_overlapped(addr, len, LINE_BYTES as u64)
}

/// Calls `f(line, start, take)` for each line a byte range of `len` bytes at `addr`
/// overlaps, in increasing order: the range covers bytes `start..start + take` of `line`.
fn for_each_line(addr: u64, len: usize, mut f: impl FnMut(u64, usize, usize)) {
    let mut line = addr / LINE_BYTES as u64;
    let mut start = index(addr % LINE_BYTES as u64);
    let mut left = len;
    while left > 0 {
        let take = (LINE_BYTES - start).min(left);
        f(line, start, take);
        left -= take;
        start = 0;
        line += 1;
    }
}
