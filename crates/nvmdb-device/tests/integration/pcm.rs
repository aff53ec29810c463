//! Hand-computed and property tests of PCM accounting.

use nvmdb_device::pcm::{LINE_BYTES, WORDS_PER_LINE};
use nvmdb_device::{FlipNWrite, Pcm, PcmAccounting, PcmConfig, PcmMetrics, PcmStats, PcmStorageTiming, ProgramBudget};
use proptest::prelude::*;

fn pcm(fnw: Option<u32>) -> Pcm {
    let mut config = PcmConfig::new(1 << 20);
    config.flip_n_write = fnw.map(|n| FlipNWrite::new(n).unwrap());
    Pcm::new(config).unwrap()
}

fn line(word0: u64) -> [u64; WORDS_PER_LINE] {
    let mut l = [0u64; WORDS_PER_LINE];
    l[0] = word0;
    l
}

#[test]
fn differential_write_programs_only_changed_cells() {
    let mut p = pcm(None);
    let w = p.write_line(3, &line(0xFF));
    assert_eq!((w.words, w.bits, w.word_mask), (1, 8, 0b1));
    let w = p.write_line(3, &line(0xFF));
    assert_eq!((w.words, w.bits), (0, 0));
    let w = p.write_line(3, &line(0x0F));
    assert_eq!((w.words, w.bits), (1, 4));
    let s = p.stats();
    assert_eq!((s.lines_written, s.words_written, s.bits_written), (3, 2, 12));
    assert_eq!(p.read_line(3), line(0x0F));
    // Cells 0..4 were programmed once, cells 4..8 twice.
    assert_eq!(p.cell_writes(3, 0, 0), 1);
    assert_eq!(p.cell_writes(3, 0, 7), 2);
    assert_eq!(p.wear_report().max_cell_writes, 2);
}

#[test]
fn flip_n_write_inverts_when_cheaper_and_flip_cells_wear() {
    let mut p = pcm(Some(64));
    // All ones over zero cells: plain costs 64, inverted costs 0 + 1 flip cell.
    let w = p.write_line(0, &line(u64::MAX));
    assert_eq!((w.words, w.bits), (1, 1));
    assert_eq!(p.peek_line(0), line(u64::MAX));
    assert_eq!(p.stats().flip_bits_written, 1);
    // Back to zero: plain again, the flip cell is programmed a second time.
    let w = p.write_line(0, &line(0));
    assert_eq!((w.words, w.bits), (1, 1));
    assert_eq!(p.cell_writes(0, 8, 0), 2, "flip cell of word 0 programmed twice");
    assert_eq!(p.cell_writes(0, 0, 5), 0, "data cells never programmed");
    assert_eq!(p.wear_report().max_cell_writes, 2);
}

#[test]
fn flip_n_write_near_tie_keeps_current_flip_bit() {
    // cost0 + cost1 = N + 1 is odd, so exact ties cannot happen; the closest case, a
    // half-changed word, must resolve towards the current flip bit.
    let half = 0x0000_0000_FFFF_FFFFu64;
    let fnw = FlipNWrite::new(64).unwrap();
    assert_eq!(fnw.encode(0, 0, half), (half, 0), "f = 0: plain costs 32, inverted 33");
    assert_eq!(fnw.encode(u64::MAX, 1, half), (!half, 1), "f = 1: inverted costs 32, plain 33");
    // With 8-bit groups each byte decides alone: 0xFF bytes invert, 0x0F bytes (4 of 8) stay.
    let fnw8 = FlipNWrite::new(8).unwrap();
    let (cells, flips) = fnw8.encode(0, 0, 0x0F_FF);
    assert_eq!(flips, 0b01, "byte 0 inverted, byte 1 plain (4 + 0 < 4 + 1)");
    assert_eq!(cells, 0x0F_00);
}

#[test]
fn flip_n_write_rejects_bad_group_sizes() {
    assert!(FlipNWrite::new(12).is_err());
    let mut config = PcmConfig::new(4096);
    config.flip_n_write = Some(FlipNWrite { group_bits: 7 });
    assert!(Pcm::new(config).is_err());
}

#[test]
fn partial_word_and_line_crossing_write() {
    let mut p = pcm(None);
    // 4 bytes at 62: bytes 62, 63 of line 0 (word 7) and bytes 0, 1 of line 1 (word 0).
    let summary = p.write_bytes(62, &[0x01, 0x03, 0x07, 0x0F]).unwrap();
    assert_eq!(summary.bits, 1 + 2 + 3 + 4);
    assert_eq!(summary.programmed_words, vec![7, 8]);
    let s = *p.stats();
    assert_eq!((s.lines_written, s.words_written, s.bits_written), (2, 2, 10));
    // A partial word keeps its other bytes.
    p.write_bytes(60, &[0xAA]).unwrap();
    let mut buf = [0u8; 6];
    p.read_bytes(59, &mut buf).unwrap();
    assert_eq!(buf, [0, 0xAA, 0, 0x01, 0x03, 0x07]);
    assert_eq!(p.stats().lines_read, 2);
    assert!(p.write_bytes((1 << 20) - 2, &[1, 2, 3]).is_err(), "write past the end is an error");
}

#[test]
fn energy_and_latency_follow_the_cidr_formulas() {
    let mut p = pcm(None);
    p.write_bytes(0, &[0xFF; 16]).unwrap(); // 1 line, 2 words, 128 bits
    let mut buf = [0u8; 70];
    p.read_bytes(100, &mut buf).unwrap(); // 100..170 overlaps lines 1 and 2
    let m = PcmMetrics::CIDR2011;
    let s = p.stats();
    assert_eq!((s.lines_read, s.lines_written, s.words_written, s.bits_written), (2, 1, 2, 128));
    // 8·64·(2 + 1)·2 + 128·16 = 3072 + 2048
    assert_eq!(s.energy_pj(&m), 5120);
    // 2·230 + 2·450
    assert_eq!(s.latency_cycles(&m), 1360);
}

#[test]
fn storage_mode_pays_only_for_changed_chunks() {
    let mut config = PcmConfig::new(1 << 16);
    config.storage = PcmStorageTiming::SAMSUNG_PRAM_DATASHEET;
    let mut p = Pcm::new(config).unwrap();
    // 64 bytes at 0 with only bytes 0 and 40 non-zero: chunks 0 and 1 of 32 B change.
    let mut data = [0u8; 64];
    data[0] = 1;
    data[40] = 1;
    assert_eq!(p.storage_write(0, &data).unwrap(), 78 + 2 * 7100);
    assert_eq!(p.storage_write(0, &data).unwrap(), 78, "rewriting the same bytes changes nothing");
    let mut buf = [0u8; 40];
    assert_eq!(p.storage_read(30, &mut buf).unwrap(), 78 + 3 * 206, "30..70 overlaps three 32 B chunks");
    let mut thesis = PcmConfig::new(1 << 16);
    thesis.storage = PcmStorageTiming::THESIS_TABLE_2_2;
    let mut t = Pcm::new(thesis).unwrap();
    t.storage_write(0, &data).unwrap();
    assert_eq!(t.stats().storage_energy_pj, 2 * 94);
}

/// The Samsung datasheet timing with a program budget of 64 cells per 444 ns iteration.
fn budget_config() -> PcmConfig {
    let mut config = PcmConfig::new(1 << 16);
    config.flip_n_write = Some(FlipNWrite::WORD);
    config.storage = PcmStorageTiming {
        program_budget: Some(ProgramBudget { cells_per_iteration: 64, ns_per_iteration: 444 }),
        ..PcmStorageTiming::SAMSUNG_PRAM_DATASHEET
    };
    config
}

#[test]
fn under_a_program_budget_a_write_programming_more_cells_takes_longer() {
    let mut p = Pcm::new(budget_config()).unwrap();
    // One cell of one 32 B chunk: one iteration, where the fixed time charges a chunk.
    assert_eq!(p.storage_write(0, &[1]).unwrap(), 78 + 444);
    assert_eq!(p.storage_write(0, &[1]).unwrap(), 78, "no cell programmed, no iteration");
    // Longer writes of bytes with the top bit set program more cells (flip cells
    // included), in more iterations of 64.
    let mut last = 0;
    for bytes in [8usize, 64, 128, 512] {
        let data: Vec<u8> = (0..bytes).map(|i| (i as u8).wrapping_mul(37) | 0x80).collect();
        let before = p.stats().bits_written;
        let t = p.storage_write(0, &data).unwrap();
        let cells = p.stats().bits_written - before;
        assert_eq!(t, 78 + cells.div_ceil(64) * 444, "{bytes} B programming {cells} cells");
        if bytes == 8 {
            assert_eq!((t, cells > 1), (78 + 444, true), "up to 64 cells take one iteration");
        }
        assert!(t > last, "{bytes} B programming {cells} cells takes {t} ns, not more than {last}");
        last = t;
        // Back to zeros for the next, larger write.
        p.storage_write(0, &vec![0; bytes]).unwrap();
    }
}

#[test]
fn a_program_budget_changes_the_write_time_and_nothing_else() {
    let mut budget = Pcm::new(budget_config()).unwrap();
    let mut fixed =
        Pcm::new(PcmConfig { storage: PcmStorageTiming::SAMSUNG_PRAM_DATASHEET, ..budget_config() }).unwrap();
    let (mut budget_ns, mut fixed_ns) = (0, 0);
    for i in 0..200u64 {
        let addr = (i * 97) % 4000;
        let data: Vec<u8> = (0..(i % 300) as usize).map(|j| (i * 31 + j as u64 * 7) as u8).collect();
        budget_ns += budget.storage_write(addr, &data).unwrap();
        fixed_ns += fixed.storage_write(addr, &data).unwrap();
        let mut buf = vec![0u8; 40];
        let read_ns = budget.storage_read(addr, &mut buf).unwrap();
        assert_eq!(read_ns, fixed.storage_read(addr, &mut buf).unwrap(), "reads are timed alike");
        budget_ns += read_ns;
    }
    let (b, f) = (budget.stats(), fixed.stats());
    assert_eq!(PcmStats { storage_time_ns: 0, ..*b }, PcmStats { storage_time_ns: 0, ..*f });
    assert_eq!(budget.wear_report(), fixed.wear_report());
    assert_eq!(b.storage_time_ns, budget_ns);
    assert_ne!(budget_ns, fixed_ns);
}

#[test]
fn a_program_budget_needs_cells_counted_and_no_chunk_charging() {
    let config = budget_config();
    assert!(Pcm::new(config).is_ok());
    let zero = ProgramBudget { cells_per_iteration: 0, ns_per_iteration: 444 };
    let refused = [
        PcmConfig { storage: PcmStorageTiming { program_budget: Some(zero), ..config.storage }, ..config },
        PcmConfig { storage: PcmStorageTiming { charge_every_chunk: true, ..config.storage }, ..config },
        PcmConfig { accounting: PcmAccounting::Words, ..config },
    ];
    for config in refused {
        assert!(Pcm::new(config).is_err(), "{config:?}");
    }
    assert!(Pcm::new(PcmConfig { accounting: PcmAccounting::Bits, flip_n_write: None, ..config }).is_ok());
}

#[test]
fn the_presets_keep_the_fixed_time_per_changed_chunk() {
    for timing in [
        PcmStorageTiming::default(),
        PcmStorageTiming::SAMSUNG_PRAM_DATASHEET,
        PcmStorageTiming::IPLP_BOARD,
        PcmStorageTiming::THESIS_TABLE_2_2,
    ] {
        assert_eq!(timing.program_budget, None, "{timing:?}");
        let mut config = PcmConfig::new(1 << 16);
        config.storage = timing;
        let mut p = Pcm::new(config).unwrap();
        // One changed bit and a whole changed chunk cost the same: one chunk.
        let one = p.storage_write(0, &[1]).unwrap();
        let chunk = vec![0xFFu8; timing.write_chunk_bytes as usize];
        let whole = p.storage_write(timing.write_chunk_bytes, &chunk).unwrap();
        assert_eq!((one, whole), (timing.initial_ns + timing.write_ns_per_chunk, one));
    }
}

#[test]
fn counted_to_the_word_a_line_takes_its_bytes_of_host_memory() {
    let mut config = PcmConfig::new(64 << 20);
    config.flip_n_write = Some(FlipNWrite::WORD);
    let mut cells = Pcm::new(config).unwrap();
    config.accounting = PcmAccounting::Words;
    let mut words = Pcm::new(config).unwrap();
    // 64 chunks of 64 lines, every line written.
    let data: Vec<u8> = (0..64 * 64 * 64u32).map(|i| (i * 7 + i / 64) as u8).collect();
    for pcm in [&mut cells, &mut words] {
        pcm.storage_write(0, &data).unwrap();
    }
    let bytes = words.heap_bytes();
    let chunks = 64 * (64 * LINE_BYTES + 8);
    assert!((chunks..chunks + (16 << 10)).contains(&bytes), "{bytes} B for 4,096 lines counted to the word");
    assert!(cells.heap_bytes() > 2 * bytes, "counting every cell: {} B", cells.heap_bytes());
    let mut back = vec![0u8; data.len()];
    words.peek_bytes(0, &mut back).unwrap();
    assert_eq!(back, data);
}

#[test]
fn sparse_storage_does_not_grow_with_capacity() {
    let mut p = Pcm::new(PcmConfig::new(64 << 30)).unwrap();
    for i in 0..1000u64 {
        p.write_line(i * 977_777, &line(i));
    }
    let bytes = p.heap_bytes();
    assert!(bytes < 64 << 20, "64 GiB device with 1000 lines written holds {bytes} bytes");
    assert_eq!(p.peek_line(977_777), line(1));
}

#[test]
fn start_gap_spreads_a_hot_line() {
    let run = |interval: Option<u64>| {
        let mut config = PcmConfig::new(64 * 16);
        config.start_gap_interval = interval;
        let mut p = Pcm::new(config).unwrap();
        for i in 0..20_000u64 {
            p.write_line(0, &line(if i % 2 == 0 { u64::MAX } else { 0 }));
        }
        // Data survives the remapping.
        assert_eq!(p.peek_line(0), line(0));
        p.wear_report().max_cell_writes
    };
    let without = run(None);
    let with = run(Some(4));
    assert_eq!(without, 20_000);
    assert!(with * 4 < without, "Start-Gap max wear {with} vs {without}");
}

/// The randomised mapping keeps every line's data through many gap moves, and costs the
/// same copies as plain Start-Gap.
#[test]
fn randomised_start_gap_keeps_every_line() {
    let lines = 37u64;
    let mut config = PcmConfig::new(64 * lines);
    config.start_gap_interval = Some(3);
    config.start_gap_randomiser_seed = Some(11);
    let mut p = Pcm::new(config).unwrap();
    let mut expected = vec![0u64; lines as usize];
    for i in 0..5_000u64 {
        let la = i * 7 % lines;
        expected[la as usize] = i + 1;
        p.write_line(la, &line(i + 1));
    }
    for la in 0..lines {
        assert_eq!(p.peek_line(la), line(expected[la as usize]), "line {la}");
    }
    assert_eq!(p.stats().start_gap_moves, 5_000 / 3);
}

#[test]
fn start_gap_randomiser_needs_start_gap() {
    let mut config = PcmConfig::new(64 * 16);
    config.start_gap_randomiser_seed = Some(1);
    assert!(Pcm::new(config).is_err());
}

proptest! {
    #[test]
    fn fnw_never_costs_more_than_plain_plus_one_per_word(
        writes in prop::collection::vec((0u64..4, any::<[u64; 8]>(), 0u8..=255), 1..60),
        group in prop::sample::select(vec![8u32, 16, 32, 64]),
    ) {
        let mut plain = pcm(None);
        let mut fnw = pcm(Some(group));
        for (line_no, data, keep) in writes {
            // Keep some words unchanged so that partial changes occur.
            let mut new = plain.peek_line(line_no);
            for (w, word) in new.iter_mut().enumerate() {
                if keep >> w & 1 == 0 { *word = data[w]; }
            }
            let a = plain.write_line(line_no, &new);
            let b = fnw.write_line(line_no, &new);
            prop_assert!(b.bits <= a.bits + WORDS_PER_LINE as u32);
            prop_assert_eq!(fnw.peek_line(line_no), new);
        }
    }

    #[test]
    fn bits_written_equals_sum_of_cell_counts(
        writes in prop::collection::vec((0u64..64, any::<u64>(), 0usize..LINE_BYTES / 8), 1..200),
        fnw in prop::option::of(prop::sample::select(vec![8u32, 16, 32, 64])),
    ) {
        let mut p = pcm(fnw);
        for (line_no, value, word) in writes {
            let mut new = p.peek_line(line_no);
            new[word] = value;
            p.write_line(line_no, &new);
        }
        let report = p.wear_report();
        prop_assert_eq!(report.total_cell_writes, p.stats().bits_written);
        let flip_lanes = if fnw.is_some() { 9 } else { 8 };
        let by_cell: u64 = (0..64u64)
            .flat_map(|l| (0..flip_lanes).map(move |lane| (l, lane)))
            .map(|(l, lane)| (0..64).map(|bit| p.cell_writes(l, lane, bit)).sum::<u64>())
            .sum();
        prop_assert_eq!(by_cell, p.stats().bits_written);
        prop_assert_eq!(report.histogram_log2.iter().sum::<u64>(), report.cells_tracked);
    }
}

#[test]
fn count_read_matches_read_bytes_and_refuses_ranges_past_the_device() {
    let mut copied = Pcm::new(PcmConfig::new(1 << 20)).unwrap();
    let mut counted = Pcm::new(PcmConfig::new(1 << 20)).unwrap();
    for (addr, len) in [(0u64, 1u64), (63, 2), (100, 1000), ((1 << 20) - 64, 64)] {
        copied.read_bytes(addr, &mut vec![0; len as usize]).unwrap();
        counted.count_read(addr, len).unwrap();
        assert_eq!(copied.stats().lines_read, counted.stats().lines_read, "{addr}+{len}");
    }
    assert_eq!(counted.count_read(0, 0).unwrap(), 0);
    assert!(counted.count_read((1 << 20) - 1, 2).is_err());
    assert!(counted.count_read(u64::MAX, 1).is_err());
    // A huge read past the end costs nothing and counts nothing.
    let before = counted.stats().lines_read;
    assert!(counted.count_read(1, u64::MAX).is_err());
    assert_eq!(counted.stats().lines_read, before);
}

/// A page write of the line-skipping storage write: the first line of the range, its
/// length in lines, the lines whose bytes change (bit `i`: line `i` of the range), the
/// further lines declared dirty though unchanged, and the seed of the new bytes.
type PageWrite = (u64, usize, u64, u64, u64);

/// Replays `writes` on two devices of the same configuration, one through
/// `storage_write`, the other through `storage_write_lines` given the changed lines and
/// some unchanged ones as dirty: the returned times, every counter, the wear report, every
/// cell's program count and the bytes must be identical after each write.
fn check_lines_write(config: PcmConfig, writes: Vec<PageWrite>) -> Result<(), TestCaseError> {
    let (mut whole, mut skipping) = (Pcm::new(config).unwrap(), Pcm::new(config).unwrap());
    let device_lines = whole.lines();
    for (first, lines, changed, extra, seed) in writes {
        let first = first % device_lines;
        let lines = lines.min((device_lines - first) as usize);
        let addr = first * LINE_BYTES as u64;
        let mut data = vec![0u8; lines * LINE_BYTES];
        whole.peek_bytes(addr, &mut data).unwrap();
        for (i, line) in data.chunks_exact_mut(LINE_BYTES).enumerate() {
            if changed >> i & 1 == 1 {
                for (j, byte) in line.iter_mut().enumerate() {
                    let x = (seed ^ (i * LINE_BYTES + j) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    // Sparse: a few bytes of the line change.
                    if x >> 60 == 0 {
                        *byte = (x >> 32) as u8;
                    }
                }
            }
        }
        let t = whole.storage_write(addr, &data).unwrap();
        prop_assert_eq!(skipping.storage_write_lines(addr, &data, changed | extra).unwrap(), t);
        prop_assert_eq!(whole.stats(), skipping.stats());
    }
    prop_assert_eq!(whole.wear_report(), skipping.wear_report());
    for line in 0..device_lines + u64::from(config.start_gap_interval.is_some()) {
        for lane in 0..9 {
            for bit in 0..64 {
                prop_assert_eq!(whole.cell_writes(line, lane, bit), skipping.cell_writes(line, lane, bit));
            }
        }
    }
    let (mut a, mut b) = (vec![0u8; config.capacity_bytes as usize], vec![0u8; config.capacity_bytes as usize]);
    whole.peek_bytes(0, &mut a).unwrap();
    skipping.peek_bytes(0, &mut b).unwrap();
    prop_assert_eq!(a, b);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn storage_write_lines_counts_as_storage_write(
        fnw in prop::option::of(prop::sample::select(vec![8u32, 64])),
        words in any::<bool>(),
        start_gap in any::<bool>(),
        charge_every_chunk in any::<bool>(),
        timing in prop::sample::select(vec![
            PcmStorageTiming::THESIS_TABLE_2_2,
            PcmStorageTiming::SAMSUNG_PRAM_DATASHEET,
            PcmStorageTiming::IPLP_BOARD,
        ]),
        writes in prop::collection::vec((0u64..200, 0usize..=64, any::<u64>(), any::<u64>(), any::<u64>()), 1..30),
    ) {
        // 200 lines: ranges cross the device's 64-line chunks.
        let mut config = PcmConfig::new(200 * LINE_BYTES as u64);
        config.flip_n_write = fnw.map(|n| FlipNWrite::new(n).unwrap());
        config.accounting = if words { PcmAccounting::Words } else { PcmAccounting::Cells };
        config.start_gap_interval = start_gap.then_some(3);
        config.storage = PcmStorageTiming { charge_every_chunk, ..timing };
        check_lines_write(config, writes)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Without Flip-N-Write, a device counting the cells without their wear
    /// ([`PcmAccounting::Bits`]) returns, counts and holds exactly what one counting every
    /// cell does, after every operation; its wear reads 0. An operation: a kind (line
    /// write, byte write, storage write, storage write of whole lines, storage read, line
    /// read), a line, a length in bytes and the seed of the new bytes.
    #[test]
    fn bits_accounting_counts_as_cells(
        start_gap in any::<bool>(),
        charge_every_chunk in any::<bool>(),
        timing in prop::sample::select(vec![
            PcmStorageTiming::THESIS_TABLE_2_2,
            PcmStorageTiming::SAMSUNG_PRAM_DATASHEET,
            PcmStorageTiming::IPLP_BOARD,
        ]),
        ops in prop::collection::vec((0u8..6, 0u64..200, 0usize..=4 * LINE_BYTES, any::<u64>()), 1..40),
    ) {
        // 200 lines: ranges cross the device's 64-line chunks.
        let mut config = PcmConfig::new(200 * LINE_BYTES as u64);
        config.start_gap_interval = start_gap.then_some(3);
        config.storage = PcmStorageTiming { charge_every_chunk, ..timing };
        let mut cells = Pcm::new(config).unwrap();
        let mut bits = Pcm::new(PcmConfig { accounting: PcmAccounting::Bits, ..config }).unwrap();
        let capacity = config.capacity_bytes;
        for (kind, line, len, seed) in ops {
            let line = line % cells.lines();
            // An address inside a line, and a length that ends inside the device.
            let addr = line * LINE_BYTES as u64 + seed % LINE_BYTES as u64;
            let len = len.min((capacity - addr) as usize);
            let mut data = vec![0u8; len];
            cells.peek_bytes(addr, &mut data).unwrap();
            for (j, byte) in data.iter_mut().enumerate() {
                let x = (seed ^ j as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                // Sparse: a few bytes change, by a few bits or many.
                if x >> 61 == 0 {
                    *byte ^= (x >> 32) as u8;
                }
            }
            match kind {
                0 => {
                    let mut words = cells.peek_line(line);
                    words[(seed % WORDS_PER_LINE as u64) as usize] ^= seed.rotate_left(7) & (seed >> 3);
                    prop_assert_eq!(cells.write_line(line, &words), bits.write_line(line, &words));
                }
                1 => {
                    prop_assert_eq!(cells.write_bytes(addr, &data).unwrap(), bits.write_bytes(addr, &data).unwrap());
                }
                2 => {
                    prop_assert_eq!(cells.storage_write(addr, &data).unwrap(), bits.storage_write(addr, &data).unwrap());
                }
                3 => {
                    // Whole lines from the line, every line declared dirty.
                    let start = line * LINE_BYTES as u64;
                    let lines = (len / LINE_BYTES).min((cells.lines() - line) as usize);
                    let mut page = vec![0u8; lines * LINE_BYTES];
                    cells.peek_bytes(start, &mut page).unwrap();
                    for (j, byte) in page.iter_mut().enumerate() {
                        if (seed ^ j as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60 == 0 {
                            *byte = byte.wrapping_add(1);
                        }
                    }
                    prop_assert_eq!(
                        cells.storage_write_lines(start, &page, u64::MAX).unwrap(),
                        bits.storage_write_lines(start, &page, u64::MAX).unwrap()
                    );
                }
                4 => {
                    let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
                    prop_assert_eq!(cells.storage_read(addr, &mut a).unwrap(), bits.storage_read(addr, &mut b).unwrap());
                    prop_assert_eq!(a, b);
                }
                _ => prop_assert_eq!(cells.read_line(line), bits.read_line(line)),
            }
            prop_assert_eq!(cells.stats(), bits.stats());
        }
        let (mut a, mut b) = (vec![0u8; capacity as usize], vec![0u8; capacity as usize]);
        cells.peek_bytes(0, &mut a).unwrap();
        bits.peek_bytes(0, &mut b).unwrap();
        prop_assert_eq!(a, b);
        prop_assert_eq!(bits.wear_report().max_cell_writes, 0);
    }
}

#[test]
fn bits_accounting_refuses_flip_n_write() {
    let mut config = PcmConfig::new(1 << 20);
    config.accounting = PcmAccounting::Bits;
    config.flip_n_write = Some(FlipNWrite::new(8).unwrap());
    assert!(Pcm::new(config).is_err());
}
