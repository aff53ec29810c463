//! Every scheme pays for the same kinds of work in every content mode: a host read of a
//! page with IPL log records reads the log pages holding them (as d-PRAM and the PCM log
//! read their PCM), and IPL's partial programs count in write amplification (as the share
//! of a page their sectors are), in energy and in time.

use nvmdb_device::{FlashTiming, PageContent, PageData};
use nvmdb_flash::config::BufferKind;
use nvmdb_flash::ipl::IplStore;
use nvmdb_flash::replay::{replay, ReplayOptions};
use nvmdb_flash::{PageStore, SsdConfig};
use nvmdb_workload::{Content, Op, Request};

const PAGE: u64 = 4096;
/// Pages written, then updated (logged), then read.
const PAGES: u64 = 20;
/// Reads of the logged pages.
const READS: u64 = 1000;

fn config(kind: BufferKind, content: PageContent) -> SsdConfig {
    let mut c = SsdConfig { content, ..SsdConfig::default() };
    c.flash.packages = 1;
    c.flash.planes_per_package = 2;
    c.flash.blocks_per_plane = 32;
    c.ftl.overprovision = 0.2;
    c.buffer.kind = kind;
    c.buffer.pcm_mb = 1;
    c
}

fn request(i: u64, op: Op, lpn: u64, len: u64) -> Result<Request, String> {
    Ok(Request { time_ns: i * 1_000_000, op, offset_bytes: lpn * PAGE, len_bytes: len, content: Content::Unknown })
}

/// The trace: every page written whole, then a 100 B write to each (a logged update: the
/// host range passes down), then [`READS`] reads of them; the writes are the warm-up, so
/// the figures are the reads'.
fn trace() -> Vec<Result<Request, String>> {
    let mut requests: Vec<_> = (0..PAGES).map(|lpn| request(lpn, Op::Write, lpn, PAGE)).collect();
    requests.extend((0..PAGES).map(|lpn| request(PAGES + lpn, Op::Write, lpn, 100)));
    requests.extend((0..READS).map(|i| request(2 * PAGES + i, Op::Read, i % PAGES, PAGE)));
    requests
}

/// The reads' counters: (flash page reads, energy pJ, mean response ns).
fn reads(kind: BufferKind, content: PageContent) -> (u64, u64, u64) {
    let mut store = nvmdb_flash::build(&config(kind, content)).unwrap();
    let options = ReplayOptions { content, warmup_requests: 2 * PAGES, ..ReplayOptions::default() };
    let report = replay(store.as_mut(), trace().into_iter(), &options).unwrap();
    assert_eq!(report.stats.host_page_reads, READS, "{kind:?} {content:?}");
    (report.stats.flash_page_reads, report.energy_pj(), report.mean_response_ns)
}

#[test]
fn a_read_of_a_logged_page_reads_its_log_in_every_content_mode() {
    let timing = FlashTiming::THESIS_TABLE_5_1;
    for content in [PageContent::None, PageContent::Fingerprint, PageContent::Bytes] {
        let (base_reads, base_pj, base_ns) = reads(BufferKind::None, content);
        assert_eq!(base_reads, READS, "{content:?}: the baseline reads each page once");
        assert_eq!(base_pj, READS * timing.read_pj, "{content:?}");
        // IPL: each page's record is in the block's first log page, read with the page.
        let (ipl_reads, ipl_pj, ipl_ns) = reads(BufferKind::Ipl, content);
        assert_eq!(ipl_reads, 2 * READS, "{content:?}: IPL reads the data page and its log page");
        assert!(ipl_pj > base_pj, "{content:?}: IPL's reads {ipl_pj} pJ, the baseline's {base_pj} pJ");
        assert!(ipl_ns > base_ns, "{content:?}: IPL's response {ipl_ns} ns, the baseline's {base_ns} ns");
        // d-PRAM and the PCM log read their records from PCM: energy above the baseline's.
        for kind in [BufferKind::Dpram, BufferKind::PcmLog] {
            let (flash_reads, pj, _) = reads(kind, content);
            assert_eq!(flash_reads, READS, "{kind:?} {content:?}");
            assert!(pj > base_pj, "{kind:?} {content:?}: {pj} pJ, the baseline's {base_pj} pJ");
        }
    }
}

#[test]
fn ipl_partial_programs_count_in_write_amplification_energy_and_time() {
    let timing = FlashTiming::THESIS_TABLE_5_1;
    for content in [PageContent::None, PageContent::Fingerprint, PageContent::Bytes] {
        let mut store = IplStore::new(&config(BufferKind::Ipl, content)).unwrap();
        let data = |b: u8| match content {
            PageContent::Bytes => PageData::Bytes(vec![b; PAGE as usize]),
            PageContent::Fingerprint => PageData::Fingerprint(u64::from(b) + 1),
            PageContent::None => PageData::Empty,
        };
        store.write(0, data(1), 0).unwrap();
        let (before, busy, energy) = (store.stats(), store.busy_ns(), store.energy_pj());
        // A 100 B change: one record, one 512 B sector programmed partially.
        let changed = match data(1) {
            PageData::Bytes(mut b) => {
                b[1000..1100].fill(7);
                PageData::Bytes(b)
            }
            _ => data(2),
        };
        store.write_range(0, changed, (1000, 100), 1_000_000_000).unwrap();
        let after = store.stats();
        assert_eq!(after.logged_writes - before.logged_writes, 1, "{content:?}");
        assert_eq!(after.flash_sector_programs - before.flash_sector_programs, 1, "{content:?}");
        assert_eq!(after.flash_sectors_programmed - before.flash_sectors_programmed, 1, "{content:?}");
        assert_eq!(after.flash_page_programs, before.flash_page_programs, "{content:?}: no whole page");
        // Energy: the sector's share of a page program; time: a page program's (bytes mode
        // also reads the page to find the change, as every scheme does there).
        let reads = after.flash_page_reads - before.flash_page_reads;
        assert_eq!(reads, u64::from(content == PageContent::Bytes), "{content:?}");
        assert_eq!(store.energy_pj() - energy, timing.program_pj / 8 + reads * timing.read_pj, "{content:?}");
        assert_eq!(store.busy_ns() - busy, timing.program_ns + reads * timing.read_ns, "{content:?}");
        // Write amplification: one page and one eighth of a page for two host writes.
        assert_eq!(after.flash_programs_in_pages(), 1.125, "{content:?}");
        assert_eq!(after.write_amplification(), 1.125 / 2.0, "{content:?}");
        assert!(after.write_amplification() > after.flash_page_programs as f64 / 2.0, "{content:?}");
    }
}
