//! The PCM model's write path (record layout, bit-sliced wear, Flip-N-Write encoding)
//! against a reference kept deliberately simple: one plain counter per cell, and
//! Flip-N-Write decided bit by bit. Every counter, every cell's program count and the
//! wear report must be identical, for line writes and for storage-mode byte-range writes
//! (whose merge of old and new bytes and per-chunk charging the reference also does byte
//! by byte), on lines within one 64-line chunk and on lines across a chunk boundary.
//! Line and storage writes counted to the word ([`PcmAccounting::Words`]) must match it in
//! everything but the cells programmed and their wear, which read 0 (the wear report still
//! tracks every cell of every written line); counting the cells without their wear
//! ([`PcmAccounting::Bits`], no Flip-N-Write) they must match it in everything but the
//! wear, which reads 0. Storage writes timed by a program budget (the cells each write
//! programs, so many at a time) must take the time the reference's cell counts give. A
//! second test runs the storage path
//! over a device of two directory tables, with ranges across chunk and table boundaries,
//! against a plain byte image.

use nvmdb_device::pcm::WORDS_PER_LINE;
use nvmdb_device::wear::{FLIP_LANE, LANES};
use std::collections::BTreeSet;

use nvmdb_device::{FlipNWrite, LineWrite, Pcm, PcmAccounting, PcmConfig, PcmMetrics, PcmStorageTiming};
use proptest::prelude::*;

use crate::common::{budget_timings, timings};

const LINES: u64 = 8;

/// Where each reference line lives in a device spread over its sparse directory: lines
/// sharing a chunk (64 lines), neighbouring chunks, and chunks in three directory tables
/// (65,536 lines each), so that chunk and table allocation on a line's first write are
/// exercised.
const SPREAD: [u64; LINES as usize] = [0, 1, 63, 64, 4_095, 65_535, 65_536, 3 * 65_536 + 7];

/// One line of the reference: logical words, flip bits per word and group, and a plain
/// program counter per physical cell (`counts[FLIP_LANE][8w + g]` is word `w`'s flip
/// cell of group `g`).
#[derive(Clone)]
struct RefLine {
    cells: [u64; WORDS_PER_LINE],
    flips: [[bool; 8]; WORDS_PER_LINE],
    counts: [[u64; 64]; LANES],
    written: bool,
}

struct RefPcm {
    group_bits: Option<u32>,
    lines: Vec<RefLine>,
    lines_written: u64,
    words_written: u64,
    bits_written: u64,
    flip_bits_written: u64,
}

impl RefPcm {
    fn new(group_bits: Option<u32>) -> RefPcm {
        let line = RefLine {
            cells: [0; WORDS_PER_LINE],
            flips: [[false; 8]; WORDS_PER_LINE],
            counts: [[0; 64]; LANES],
            written: false,
        };
        RefPcm {
            group_bits,
            lines: vec![line; LINES as usize],
            lines_written: 0,
            words_written: 0,
            bits_written: 0,
            flip_bits_written: 0,
        }
    }

    fn bit(x: u64, i: u32) -> bool {
        x >> i & 1 == 1
    }

    /// The logical word: each cell, inverted where its group's flip bit is set.
    fn logical(&self, line: &RefLine, w: usize) -> u64 {
        let n = self.group_bits.unwrap_or(64);
        (0..64u32).fold(0, |word, i| {
            let inverted = self.group_bits.is_some() && line.flips[w][(i / n) as usize];
            word | u64::from(Self::bit(line.cells[w], i) != inverted) << i
        })
    }

    fn peek(&self, line: u64) -> [u64; WORDS_PER_LINE] {
        let l = &self.lines[line as usize];
        std::array::from_fn(|w| self.logical(l, w))
    }

    fn write(&mut self, line: u64, new: &[u64; WORDS_PER_LINE]) -> LineWrite {
        let mut result = LineWrite::default();
        let mut l = self.lines[line as usize].clone();
        l.written = true;
        for (w, &value) in new.iter().enumerate() {
            if self.logical(&l, w) == value {
                continue;
            }
            let mut programmed = 0u32;
            match self.group_bits {
                None => {
                    for i in 0..64 {
                        if Self::bit(l.cells[w], i) != Self::bit(value, i) {
                            l.counts[w][i as usize] += 1;
                            programmed += 1;
                        }
                    }
                    l.cells[w] = value;
                }
                Some(n) => {
                    for g in 0..64 / n {
                        let bits = g * n..(g + 1) * n;
                        let flip = l.flips[w][g as usize];
                        // Cells that differ from the data stored plainly, and inverted.
                        let plain_changes =
                            bits.clone().filter(|&i| Self::bit(l.cells[w], i) != Self::bit(value, i)).count() as u32;
                        let inverted_changes = n - plain_changes;
                        let plain = plain_changes + u32::from(flip);
                        let inverted = inverted_changes + u32::from(!flip);
                        let invert = if plain == inverted { flip } else { inverted < plain };
                        for i in bits {
                            let cell = Self::bit(value, i) != invert;
                            if cell != Self::bit(l.cells[w], i) {
                                l.counts[w][i as usize] += 1;
                                l.cells[w] ^= 1 << i;
                                programmed += 1;
                            }
                        }
                        if invert != flip {
                            l.flips[w][g as usize] = invert;
                            l.counts[FLIP_LANE][(8 * w as u32 + g) as usize] += 1;
                            self.flip_bits_written += 1;
                            programmed += 1;
                        }
                    }
                }
            }
            result.words += 1;
            result.word_mask |= 1 << w;
            result.bits += programmed;
        }
        self.lines[line as usize] = l;
        self.lines_written += 1;
        self.words_written += u64::from(result.words);
        self.bits_written += u64::from(result.bits);
        result
    }

    /// Valid cells of the flip lane: `64 / n` per word.
    fn flip_cell_valid(&self, bit: usize) -> bool {
        self.group_bits.is_some_and(|n| bit % 8 < (64 / n) as usize)
    }

    fn cells(&self) -> impl Iterator<Item = u64> + '_ {
        self.lines.iter().filter(|l| l.written).flat_map(move |l| {
            (0..LANES).flat_map(move |lane| {
                (0..64).filter(move |&b| lane != FLIP_LANE || self.flip_cell_valid(b)).map(move |b| l.counts[lane][b])
            })
        })
    }

    fn histogram_log2(&self) -> Vec<u64> {
        let mut histogram = Vec::new();
        for count in self.cells() {
            let bucket = if count == 0 { 0 } else { (64 - count.leading_zeros()) as usize };
            if histogram.len() <= bucket {
                histogram.resize(bucket + 1, 0);
            }
            histogram[bucket] += 1;
        }
        histogram
    }
}

/// A write: the line, the new data, which words keep their old value (bit set), and how
/// many times the write is repeated alternately with the line's previous content (to
/// drive counts through many wear planes).
type Write = (u64, [u64; WORDS_PER_LINE], u8, u16);

fn writes() -> impl Strategy<Value = Vec<Write>> {
    let data = prop_oneof![
        any::<[u64; WORDS_PER_LINE]>(),
        // Sparse changes: few bits differ from all-zero or all-one words.
        (any::<u64>(), any::<bool>()).prop_map(|(x, ones)| {
            let sparse = x & x >> 7 & x >> 13;
            [if ones { !sparse } else { sparse }; WORDS_PER_LINE]
        }),
    ];
    prop::collection::vec((0..LINES, data, any::<u8>(), prop_oneof![Just(1u16), 1u16..300]), 1..40)
}

/// The reference's storage-mode write: each overlapped line becomes its old bytes with the
/// written bytes replaced, written through [`RefPcm::write`]; the time and chunk energy
/// are charged per chunk holding a programmed word (or per chunk covered, with
/// `charge_every_chunk`), or, with a program budget, the time per `cells_per_iteration`
/// cells the reference programmed (rounded up). Returns `(time_ns, energy_pj)`.
fn ref_storage_write(reference: &mut RefPcm, timing: &PcmStorageTiming, addr: u64, data: &[u8]) -> (u64, u64) {
    let cells_before = reference.bits_written;
    let mut changed = BTreeSet::new();
    let end = addr + data.len() as u64;
    let lines = if data.is_empty() { 0..0 } else { addr / 64..end.div_ceil(64) };
    for line in lines {
        let mut bytes: Vec<u8> = reference.peek(line).iter().flat_map(|w| w.to_le_bytes()).collect();
        for (i, byte) in bytes.iter_mut().enumerate() {
            let at = line * 64 + i as u64;
            if (addr..end).contains(&at) {
                *byte = data[(at - addr) as usize];
            }
        }
        let new: [u64; WORDS_PER_LINE] =
            std::array::from_fn(|w| u64::from_le_bytes(bytes[8 * w..8 * w + 8].try_into().unwrap()));
        let result = reference.write(line, &new);
        for w in (0..WORDS_PER_LINE as u64).filter(|w| result.word_mask >> w & 1 == 1) {
            changed.insert((line * 64 + 8 * w) / timing.write_chunk_bytes);
        }
    }
    let chunks = if timing.charge_every_chunk {
        (addr..end).map(|a| a / timing.write_chunk_bytes).collect::<BTreeSet<_>>().len() as u64
    } else {
        changed.len() as u64
    };
    let program_ns = match timing.program_budget {
        None => chunks * timing.write_ns_per_chunk,
        Some(budget) => {
            let cells = reference.bits_written - cells_before;
            cells.div_ceil(budget.cells_per_iteration) * budget.ns_per_iteration
        }
    };
    (timing.initial_ns + program_ns, chunks * timing.write_pj_per_chunk)
}

/// Every cell's program count, and the wear report, against the reference, whose line `i`
/// is the device's line `place(i)`.
fn check_wear(pcm: &Pcm, reference: &RefPcm, place: impl Fn(u64) -> u64) -> Result<(), TestCaseError> {
    for (line, l) in reference.lines.iter().enumerate() {
        for (lane, counts) in l.counts.iter().enumerate() {
            for (bit, &count) in counts.iter().enumerate() {
                prop_assert_eq!(
                    pcm.cell_writes(place(line as u64), lane, bit as u32),
                    count,
                    "line {} lane {} bit {}",
                    line,
                    lane,
                    bit
                );
            }
        }
    }
    let report = pcm.wear_report();
    prop_assert_eq!(report.max_cell_writes, reference.cells().max().unwrap_or(0));
    prop_assert_eq!(pcm.max_cell_writes(), report.max_cell_writes);
    prop_assert_eq!(report.total_cell_writes, reference.cells().sum::<u64>());
    prop_assert_eq!(report.cells_tracked, reference.cells().count() as u64);
    prop_assert_eq!(report.histogram_log2, reference.histogram_log2());
    Ok(())
}

/// Counted to the word: no cell programmed and no wear, every cell of the reference's
/// written lines tracked with 0 program counts.
fn check_no_wear(pcm: &Pcm, reference: &RefPcm, place: impl Fn(u64) -> u64) -> Result<(), TestCaseError> {
    let stats = pcm.stats();
    prop_assert_eq!((stats.bits_written, stats.flip_bits_written), (0, 0));
    check_wear_zero(pcm, reference, place)
}

/// Every cell's program count and the wear report read 0, the reference's cells tracked.
fn check_wear_zero(pcm: &Pcm, reference: &RefPcm, place: impl Fn(u64) -> u64) -> Result<(), TestCaseError> {
    for line in 0..LINES {
        for lane in 0..LANES {
            for bit in [0, 7, 63] {
                prop_assert_eq!(pcm.cell_writes(place(line), lane, bit), 0);
            }
        }
    }
    let wear = pcm.wear_report();
    let cells = reference.cells().count() as u64;
    prop_assert_eq!((wear.max_cell_writes, wear.total_cell_writes, wear.cells_tracked), (0, 0, cells));
    prop_assert_eq!(pcm.max_cell_writes(), 0);
    prop_assert_eq!(wear.histogram_log2, if cells == 0 { vec![] } else { vec![cells] });
    Ok(())
}

fn check(group_bits: Option<u32>, writes: Vec<Write>) -> Result<(), TestCaseError> {
    check_placed(group_bits, PcmAccounting::Cells, writes, LINES, |line| line)
}

/// [`check`] on a device counting as `accounting` of `device_lines`, whose line
/// `place(i)` is the reference's line `i`.
fn check_placed(
    group_bits: Option<u32>,
    accounting: PcmAccounting,
    writes: Vec<Write>,
    device_lines: u64,
    place: impl Fn(u64) -> u64,
) -> Result<(), TestCaseError> {
    let mut config = PcmConfig::new(device_lines * 64);
    config.flip_n_write = group_bits.map(|n| FlipNWrite::new(n).unwrap());
    config.accounting = accounting;
    let mut pcm = Pcm::new(config).unwrap();
    let mut reference = RefPcm::new(group_bits);
    for (line, data, keep, repeat) in writes {
        let old = reference.peek(line);
        let mut new = data;
        for (w, word) in new.iter_mut().enumerate() {
            if keep >> w & 1 == 1 {
                *word = old[w];
            }
        }
        for i in 0..repeat {
            let value = if i % 2 == 0 { new } else { old };
            let (got, want) = (pcm.write_line(place(line), &value), reference.write(line, &value));
            match accounting {
                PcmAccounting::Cells | PcmAccounting::Bits => prop_assert_eq!(got, want),
                PcmAccounting::Words => prop_assert_eq!(got, LineWrite { bits: 0, ..want }),
            }
            prop_assert_eq!(pcm.peek_line(place(line)), value);
        }
    }
    if accounting == PcmAccounting::Words {
        let stats = pcm.stats();
        prop_assert_eq!((stats.lines_written, stats.words_written), (reference.lines_written, reference.words_written));
        return check_no_wear(&pcm, &reference, place);
    }
    let stats = pcm.stats();
    prop_assert_eq!(
        (stats.lines_written, stats.words_written, stats.bits_written, stats.flip_bits_written),
        (reference.lines_written, reference.words_written, reference.bits_written, reference.flip_bits_written)
    );
    let metrics = PcmMetrics::CIDR2011;
    prop_assert_eq!(stats.energy_pj(&metrics), metrics.energy_pj(0, reference.lines_written, reference.bits_written));
    prop_assert_eq!(stats.latency_cycles(&metrics), metrics.latency_cycles(0, reference.words_written));
    match accounting {
        PcmAccounting::Bits => check_wear_zero(&pcm, &reference, place),
        _ => check_wear(&pcm, &reference, place),
    }
}

/// A storage-mode write: the address, the bytes (a pattern drawn from the seed, sparse or
/// dense), and how many times it is repeated alternately with the range's previous bytes.
type StorageWrite = (u64, usize, u64, bool, u16);

fn storage_writes() -> impl Strategy<Value = Vec<StorageWrite>> {
    let addr = prop_oneof![0..LINES * 64, (0..LINES).prop_map(|l| l * 64)];
    let len = prop_oneof![0usize..24, 0usize..200, Just(64usize), Just(128usize)];
    prop::collection::vec((addr, len, any::<u64>(), any::<bool>(), prop_oneof![Just(1u16), 1u16..40]), 1..40)
}

/// Replays `writes` through the storage path of a device counting as `accounting` and
/// through the per-cell reference, whose line `i` is the device's line `base_line + i`.
/// Under [`PcmAccounting::Words`] everything but the cells programmed and their wear must
/// match the reference, and those must read 0.
fn check_storage(
    group_bits: Option<u32>,
    timing: PcmStorageTiming,
    accounting: PcmAccounting,
    base_line: u64,
    writes: Vec<StorageWrite>,
) -> Result<(), TestCaseError> {
    let base = base_line * 64;
    let mut config = PcmConfig::new(base + LINES * 64);
    config.flip_n_write = group_bits.map(|n| FlipNWrite::new(n).unwrap());
    config.storage = timing;
    config.accounting = accounting;
    let mut pcm = Pcm::new(config).unwrap();
    let mut reference = RefPcm::new(group_bits);
    let (mut time_ns, mut energy_pj, mut ops) = (0u64, 0u64, 0u64);
    for (addr, len, seed, sparse, repeat) in writes {
        let len = len.min((LINES * 64 - addr) as usize);
        let new: Vec<u8> = (0..len as u64)
            .map(|i| {
                let x = (seed ^ i).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
                (if sparse { x & x >> 11 & x >> 23 } else { x }) as u8
            })
            .collect();
        let mut old = vec![0u8; len];
        pcm.read_bytes(base + addr, &mut old).unwrap();
        for i in 0..repeat {
            let value = if i % 2 == 0 { &new } else { &old };
            let (t, e) = ref_storage_write(&mut reference, &timing, addr, value);
            prop_assert_eq!(pcm.storage_write(base + addr, value).unwrap(), t, "write of {} B at {}", len, addr);
            time_ns += t;
            energy_pj += e;
            ops += 1;
            let mut back = vec![0u8; len];
            pcm.read_bytes(base + addr, &mut back).unwrap();
            prop_assert_eq!(&back, value);
        }
    }
    for line in 0..LINES {
        prop_assert_eq!(pcm.peek_line(base_line + line), reference.peek(line), "line {}", line);
    }
    let stats = pcm.stats();
    prop_assert_eq!((stats.lines_written, stats.words_written), (reference.lines_written, reference.words_written));
    prop_assert_eq!((stats.storage_ops, stats.storage_time_ns, stats.storage_energy_pj), (ops, time_ns, energy_pj));
    match accounting {
        PcmAccounting::Cells => {
            prop_assert_eq!(
                (stats.bits_written, stats.flip_bits_written),
                (reference.bits_written, reference.flip_bits_written)
            );
            check_wear(&pcm, &reference, |line| base_line + line)
        }
        PcmAccounting::Words => check_no_wear(&pcm, &reference, |line| base_line + line),
        PcmAccounting::Bits => {
            prop_assert_eq!(
                (stats.bits_written, stats.flip_bits_written),
                (reference.bits_written, reference.flip_bits_written)
            );
            check_wear_zero(&pcm, &reference, |line| base_line + line)
        }
    }
}

proptest! {
    #[test]
    fn write_path_matches_the_per_cell_reference(
        group_bits in prop::option::of(prop::sample::select(vec![8u32, 16, 32, 64])),
        writes in writes(),
    ) {
        check(group_bits, writes)?;
    }

    #[test]
    fn write_path_matches_the_reference_across_chunks_and_tables(
        group_bits in prop::option::of(prop::sample::select(vec![8u32, 16, 32, 64])),
        writes in writes(),
    ) {
        check_placed(group_bits, PcmAccounting::Cells, writes, SPREAD[LINES as usize - 1] + 1, |line| SPREAD[line as usize])?;
    }

    #[test]
    fn line_writes_counted_to_the_word_match_the_reference_but_for_cells(
        group_bits in prop::option::of(prop::sample::select(vec![8u32, 16, 32, 64])),
        writes in writes(),
    ) {
        check_placed(group_bits, PcmAccounting::Words, writes, SPREAD[LINES as usize - 1] + 1, |line| SPREAD[line as usize])?;
    }

    #[test]
    fn storage_path_matches_the_per_cell_reference(
        group_bits in prop::option::of(prop::sample::select(vec![8u32, 16, 32, 64])),
        timing in timings(),
        writes in storage_writes(),
    ) {
        check_storage(group_bits, timing, PcmAccounting::Cells, 0, writes)?;
    }

    #[test]
    fn storage_path_across_a_chunk_boundary_matches_the_per_cell_reference(
        group_bits in prop::option::of(prop::sample::select(vec![8u32, 16, 32, 64])),
        timing in timings(),
        accounting in prop::sample::select(vec![PcmAccounting::Cells, PcmAccounting::Words]),
        writes in storage_writes(),
    ) {
        // The reference's lines are the device's lines 60..68: the last four of the first
        // 64-line chunk and the first four of the second.
        check_storage(group_bits, timing, accounting, 60, writes)?;
    }

    #[test]
    fn line_writes_counting_cells_without_wear_match_the_reference_but_for_wear(writes in writes()) {
        check_placed(None, PcmAccounting::Bits, writes, SPREAD[LINES as usize - 1] + 1, |line| SPREAD[line as usize])?;
    }

    #[test]
    fn storage_path_counting_cells_without_wear_matches_the_reference_but_for_wear(
        timing in timings(),
        base_line in prop::sample::select(vec![0u64, 60]),
        writes in storage_writes(),
    ) {
        check_storage(None, timing, PcmAccounting::Bits, base_line, writes)?;
    }

    #[test]
    fn storage_path_with_a_program_budget_matches_the_per_cell_reference(
        group_bits in prop::option::of(prop::sample::select(vec![8u32, 16, 32, 64])),
        timing in budget_timings(),
        base_line in prop::sample::select(vec![0u64, 60]),
        writes in storage_writes(),
    ) {
        check_storage(group_bits, timing, PcmAccounting::Cells, base_line, writes)?;
    }

    #[test]
    fn storage_path_with_a_program_budget_counting_cells_without_wear_matches_the_reference(
        timing in budget_timings(),
        writes in storage_writes(),
    ) {
        check_storage(None, timing, PcmAccounting::Bits, 0, writes)?;
    }

    #[test]
    fn storage_path_counted_to_the_word_matches_the_reference_but_for_cells(
        group_bits in prop::option::of(prop::sample::select(vec![8u32, 16, 32, 64])),
        timing in timings(),
        writes in storage_writes(),
    ) {
        check_storage(group_bits, timing, PcmAccounting::Words, 0, writes)?;
    }
}

/// Bytes of the large device of the cross-chunk storage test: a little over two
/// directory tables (4 MiB each), so ranges cross chunk (4 KiB) and table boundaries.
const WIDE_BYTES: u64 = (8 << 20) + (64 << 10);

/// A storage operation of the cross-chunk test: a write (`true`) or a read, its address
/// and length, and the seed of its bytes.
type WideOp = (bool, u64, usize, u64);

fn wide_ops() -> impl Strategy<Value = Vec<WideOp>> {
    // Near chunk and table boundaries, anywhere, or at a line start.
    let boundary = prop_oneof![Just(4096u64), Just(8192), Just(4 << 20), Just(8 << 20)];
    let addr = prop_oneof![
        (boundary, 0u64..300).prop_map(|(b, back)| b - back),
        0..WIDE_BYTES,
        (0..WIDE_BYTES / 64).prop_map(|l| l * 64),
    ];
    let len = prop_oneof![0usize..80, 0usize..600, 4000usize..9000, Just(64usize)];
    prop::collection::vec((any::<bool>(), addr, len, any::<u64>()), 1..60)
}

/// The storage path over ranges that cross chunks and directory tables, against a plain
/// byte image: each write's bytes read back (by `storage_read` and `peek_bytes`), and `lines_read`, `lines_written`,
/// `words_written` (8 B words whose bytes change), storage time and chunk energy as the
/// image counts them, for every encoding and both accountings.
fn check_wide(
    group_bits: Option<u32>,
    timing: PcmStorageTiming,
    accounting: PcmAccounting,
    ops: Vec<WideOp>,
) -> Result<(), TestCaseError> {
    let mut config = PcmConfig::new(WIDE_BYTES);
    config.flip_n_write = group_bits.map(|n| FlipNWrite::new(n).unwrap());
    config.storage = timing;
    config.accounting = accounting;
    let mut pcm = Pcm::new(config).unwrap();
    let mut image = std::collections::BTreeMap::<u64, u8>::new();
    let byte = |image: &std::collections::BTreeMap<u64, u8>, at: u64| image.get(&at).copied().unwrap_or(0);
    let (mut lines_read, mut lines_written, mut words_written) = (0u64, 0u64, 0u64);
    let (mut time_ns, mut energy_pj) = (0u64, 0u64);
    for (write, addr, len, seed) in ops {
        let len = len.min((WIDE_BYTES - addr) as usize);
        let end = addr + len as u64;
        let lines = if len == 0 { 0 } else { (end - 1) / 64 - addr / 64 + 1 };
        if write {
            let data: Vec<u8> =
                (0..len as u64).map(|i| ((seed ^ i).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8).collect();
            let mut changed_chunks = BTreeSet::new();
            let words = if len == 0 { 0..0 } else { addr / 8..end.div_ceil(8) };
            for word in words {
                let differs = (word * 8..word * 8 + 8)
                    .any(|at| (addr..end).contains(&at) && data[(at - addr) as usize] != byte(&image, at));
                if differs {
                    words_written += 1;
                    changed_chunks.insert(word * 8 / timing.write_chunk_bytes);
                }
            }
            for (i, &b) in data.iter().enumerate() {
                image.insert(addr + i as u64, b);
            }
            let chunks = if timing.charge_every_chunk {
                if len == 0 {
                    0
                } else {
                    (end - 1) / timing.write_chunk_bytes - addr / timing.write_chunk_bytes + 1
                }
            } else {
                changed_chunks.len() as u64
            };
            let t = timing.initial_ns + chunks * timing.write_ns_per_chunk;
            prop_assert_eq!(pcm.storage_write(addr, &data).unwrap(), t, "write of {} B at {}", len, addr);
            lines_written += lines;
            time_ns += t;
            energy_pj += chunks * timing.write_pj_per_chunk;
        } else {
            let chunks =
                if len == 0 { 0 } else { (end - 1) / timing.read_chunk_bytes - addr / timing.read_chunk_bytes + 1 };
            let t = timing.initial_ns + chunks * timing.read_ns_per_chunk;
            let expected: Vec<u8> = (addr..end).map(|at| byte(&image, at)).collect();
            let mut buf = vec![0xA5u8; len];
            prop_assert_eq!(pcm.storage_read(addr, &mut buf).unwrap(), t, "read of {} B at {}", len, addr);
            prop_assert_eq!(&buf, &expected, "read of {} B at {}", len, addr);
            let mut peeked = vec![0x5Au8; len];
            pcm.peek_bytes(addr, &mut peeked).unwrap();
            prop_assert_eq!(&peeked, &expected, "peek of {} B at {}", len, addr);
            lines_read += lines;
            time_ns += t;
            energy_pj += chunks * timing.read_pj_per_chunk;
        }
        let stats = pcm.stats();
        prop_assert_eq!(
            (stats.lines_read, stats.lines_written, stats.words_written),
            (lines_read, lines_written, words_written)
        );
        prop_assert_eq!((stats.storage_time_ns, stats.storage_energy_pj), (time_ns, energy_pj));
    }
    // Every line ever written reads back as the image says.
    let lines: BTreeSet<u64> = image.keys().map(|at| at / 64).collect();
    for line in lines {
        let expected: [u64; WORDS_PER_LINE] = std::array::from_fn(|w| {
            u64::from_le_bytes(std::array::from_fn(|i| byte(&image, line * 64 + 8 * w as u64 + i as u64)))
        });
        prop_assert_eq!(pcm.peek_line(line), expected, "line {}", line);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn storage_path_across_chunks_and_tables_matches_a_byte_image(
        group_bits in prop::option::of(prop::sample::select(vec![8u32, 16, 64])),
        timing in timings(),
        words in any::<bool>(),
        ops in wide_ops(),
    ) {
        let accounting = if words { PcmAccounting::Words } else { PcmAccounting::Cells };
        check_wide(group_bits, timing, accounting, ops)?;
    }
}
