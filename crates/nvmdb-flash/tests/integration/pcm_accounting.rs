//! `buffer.pcm_accounting = "words"` counts the log area's PCM only to the word: it must
//! change nothing but the figures it does not count (PCM cells programmed and the hottest
//! cell). Every log scheme that keeps its records in PCM (the PCM log, d-PRAM; IPL's log
//! is in flash) replays the same workloads under `cells` and `words`, in every content
//! mode and PCM timing preset, and every other figure of the replay (flash counters,
//! merges, the layer's write cases, PCM time and energy, response times, flash health)
//! and every page read back must be identical.

use nvmdb_device::{PageContent, PageData, PcmAccounting};
use nvmdb_flash::config::{BufferKind, DeltaKind, PcmTimingPreset, SsdConfig};
use nvmdb_flash::{replay, ReplayOptions, ReplayReport};
use nvmdb_workload::{Content, Op, Request};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A small SSD (2 planes × 32 blocks × 16 pages, 48 logical blocks) with 1 MiB of PCM in
/// 4 KiB log sectors: 15 P-blocks for the PCM log, so that replacements merge.
fn config(kind: BufferKind, content: PageContent, accounting: PcmAccounting) -> SsdConfig {
    let mut config = SsdConfig { content, ..SsdConfig::default() };
    config.flash.packages = 1;
    config.flash.planes_per_package = 2;
    config.flash.blocks_per_plane = 32;
    config.flash.pages_per_block = 16;
    config.ftl.overprovision = 0.25;
    config.buffer.kind = kind;
    config.buffer.pcm_mb = 1;
    config.buffer.log_sector_bytes = 4096;
    config.buffer.pcm_accounting = accounting;
    config
}

/// Which requests a workload sends.
#[derive(Debug, Clone, Copy)]
enum Workload {
    /// Whole-page writes and reads, 90 % to a hot eighth of the pages.
    HotPages,
    /// Partial writes (16 to 300 B at any offset in a page: logged in every content mode),
    /// reads and whole-page trims, uniform.
    PartialWithTrims,
}

fn requests(workload: Workload, pages: u64, count: u64, seed: u64) -> Vec<Request> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let hot = (pages / 8).max(1);
    (0..count)
        .map(|i| {
            let roll = rng.gen_range(0..10);
            let (op, lpn, offset, len) = match workload {
                Workload::HotPages => {
                    let lpn = if rng.gen_range(0..10) < 9 { rng.gen_range(0..hot) } else { rng.gen_range(0..pages) };
                    (if roll < 7 { Op::Write } else { Op::Read }, lpn, 0, 4096)
                }
                Workload::PartialWithTrims => {
                    let op = match roll {
                        0..=6 => Op::Write,
                        7..=8 => Op::Read,
                        _ => Op::Trim,
                    };
                    let len = if op == Op::Trim { 4096 } else { rng.gen_range(16..=300u64) };
                    (op, rng.gen_range(0..pages), rng.gen_range(0..=4096 - len), len)
                }
            };
            Request {
                time_ns: i * 20_000,
                op,
                offset_bytes: lpn * 4096 + offset,
                len_bytes: len,
                content: Content::Unknown,
            }
        })
        .collect()
}

/// Replays the workload; returns the report and every logical page read back.
fn run(config: &SsdConfig, workload: Workload) -> (ReplayReport, Vec<PageData>) {
    let mut store = nvmdb_flash::build(config).unwrap();
    let pages = store.logical_pages().min(400);
    let options = ReplayOptions { content: config.content, seed: config.seed, prefill: true, ..Default::default() };
    let stream = requests(workload, pages, 3_000, config.seed).into_iter().map(Ok::<_, std::convert::Infallible>);
    let report = replay(store.as_mut(), stream, &options).unwrap();
    store.check_invariants().unwrap();
    let end = report.span_ns;
    let contents = (0..pages).map(|lpn| store.read(lpn, end).unwrap().0).collect();
    (report, contents)
}

#[test]
fn counting_to_the_word_changes_nothing_but_the_cell_counts() {
    let (mut compared, mut merges) = (0, 0);
    for kind in [BufferKind::PcmLog, BufferKind::Dpram] {
        for content in [PageContent::None, PageContent::Fingerprint, PageContent::Bytes] {
            for workload in [Workload::HotPages, Workload::PartialWithTrims] {
                for (timing, delta) in [
                    (PcmTimingPreset::ThesisTable22, DeltaKind::Sampled),
                    (PcmTimingPreset::SamsungPramDatasheet, DeltaKind::Sampled),
                    (PcmTimingPreset::IplpBoard, DeltaKind::FullPage),
                ] {
                    let label = format!("{kind:?} {content:?} {workload:?} {timing:?} {delta:?}");
                    let with = |accounting| {
                        let mut c = config(kind, content, accounting);
                        c.buffer.pcm_timing = timing;
                        c.buffer.delta = delta;
                        run(&c, workload)
                    };
                    let (cells, cells_pages) = with(PcmAccounting::Cells);
                    let (words, words_pages) = with(PcmAccounting::Words);
                    let (c, w) = (cells.summary(), words.summary());
                    // The figures `words` does not count, and says so.
                    assert!(c.pcm_bits_written.is_some() && c.pcm_max_cell_writes.is_some(), "{label}: {c:?}");
                    assert_eq!((w.pcm_bits_written, w.pcm_max_cell_writes), (None, None), "{label}");
                    assert_eq!(words.stats.pcm_accounting, PcmAccounting::Words, "{label}");
                    // Everything else, to the last counter.
                    let uncounted = |mut s: nvmdb_flash::StoreStats| {
                        (s.pcm_bits_written, s.pcm_max_cell_writes) = (0, 0);
                        s.pcm_accounting = PcmAccounting::Cells;
                        s
                    };
                    assert_eq!(uncounted(cells.stats), uncounted(words.stats), "{label}");
                    if let Workload::PartialWithTrims = workload {
                        assert!(cells.stats.logged_writes > 0, "{label}: nothing logged");
                        assert!(c.pcm_bits_written > Some(0) && c.pcm_max_cell_writes > Some(0), "{label}");
                    }
                    merges += cells.stats.merges;
                    assert_eq!(cells.health, words.health, "{label}");
                    let summary = |s: nvmdb_flash::ReplaySummary| nvmdb_flash::ReplaySummary {
                        pcm_bits_written: None,
                        pcm_max_cell_writes: None,
                        ..s
                    };
                    assert_eq!(summary(c), summary(w), "{label}");
                    assert_eq!(cells_pages, words_pages, "{label}: pages read back");
                    compared += 1;
                }
            }
        }
    }
    println!("{compared} configurations and workloads compared under cells and words ({merges} merges)");
    assert_eq!(compared, 2 * 3 * 2 * 3);
    assert!(merges > 0, "no merge was compared");
}
