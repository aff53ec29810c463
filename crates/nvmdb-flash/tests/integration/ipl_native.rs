//! IPL in its own layout (`buffer.kind = "ipl-native"`): what it charges. Reads of a page
//! with records read its log pages in every content mode; each record is one partial
//! program, counted and timed; a merge's reads, programs and erase are counted, timed and
//! in `gc_time_ns`; `pending` counts live records and `drain` merges them; a change too
//! large for a sector merges the unit with the page. The configuration refuses what the
//! layout does not model.

use nvmdb_device::{FlashTiming, PageContent, PageData};
use nvmdb_flash::config::{BufferKind, WearLeveling};
use nvmdb_flash::ipl_native::IplNativeStore;
use nvmdb_flash::{PageStore, Pending, SsdConfig};

const MODES: [PageContent; 3] = [PageContent::Bytes, PageContent::Fingerprint, PageContent::None];

fn config(content: PageContent) -> SsdConfig {
    let mut c = SsdConfig { content, ..SsdConfig::default() };
    c.flash.packages = 1;
    c.flash.planes_per_package = 2;
    c.flash.blocks_per_plane = 8;
    c.ftl.overprovision = 0.25;
    c.buffer.kind = BufferKind::IplNative;
    c
}

/// A page's content in `mode`, version `v`.
fn page(mode: PageContent, v: u8) -> PageData {
    match mode {
        PageContent::Bytes => PageData::Bytes(vec![v; 4096]),
        PageContent::Fingerprint => PageData::Fingerprint(u64::from(v) + 1),
        PageContent::None => PageData::Empty,
    }
}

/// Version `v` with bytes `at..at + 100` changed (a logged update).
fn patched(mode: PageContent, base: &PageData, at: usize, v: u8) -> PageData {
    match (mode, base) {
        (PageContent::Bytes, PageData::Bytes(b)) => {
            let mut b = b.clone();
            b[at..at + 100].fill(v);
            PageData::Bytes(b)
        }
        _ => page(mode, v),
    }
}

const T: FlashTiming = FlashTiming::THESIS_TABLE_5_1;

#[test]
fn the_layout_is_sixty_data_pages_and_four_log_pages_per_unit() {
    let store = IplNativeStore::new(&config(PageContent::None)).unwrap();
    assert_eq!((store.data_pages_per_unit(), store.log_sectors_per_unit()), (60, 32));
    // 16 erase units, 12 of them the host's (a quarter over-provisioned).
    assert_eq!(store.logical_pages(), 12 * 60);
}

/// A read of a page with records reads its data page and each log page holding one of
/// them, in every content mode; without records, the data page alone.
#[test]
fn reads_of_logged_pages_read_their_log_pages_in_every_mode() {
    for mode in MODES {
        let mut store = IplNativeStore::new(&config(mode)).unwrap();
        let mut current = page(mode, 1);
        store.write(0, current.clone(), 0).unwrap();
        store.write(1, page(mode, 9), 0).unwrap();
        // Ten records of page 0 fill log page 0 (8 sectors) and two of log page 1; one
        // record of page 1 lies between them.
        for v in 0..10u8 {
            current = patched(mode, &current, 100 * usize::from(v), v + 10);
            store.write_update(0, current.clone(), Some(&[(100 * u32::from(v), 100)]), 0).unwrap();
            if v == 3 {
                store.write_update(1, patched(mode, &page(mode, 9), 0, 3), Some(&[(0, 100)]), 0).unwrap();
            }
        }
        assert_eq!(store.pending(), Pending { log_records: 11, log_pages: 2, dram_pages: 0 }, "{mode:?}");
        store.reset_stats();
        let (data, _) = store.read(0, 0).unwrap();
        assert_eq!(data, current, "{mode:?}");
        let s = store.stats();
        assert_eq!((s.flash_page_reads, s.host_page_reads), (3, 1), "{mode:?}: data page and two log pages");
        assert_eq!(s.flash_energy_pj, 3 * T.read_pj, "{mode:?}");
        store.reset_stats();
        store.write(2, page(mode, 5), 0).unwrap();
        store.reset_stats();
        store.read(2, 0).unwrap();
        assert_eq!(store.stats().flash_page_reads, 1, "{mode:?}: no records, the data page alone");
        store.check_invariants().unwrap();
    }
}

/// Each record is one partial program, counted and timed as one, at its share of a page
/// program's energy; a merge before the 33rd record reads the unit's live pages and its
/// four log pages once each, programs the live pages into a free unit and erases the old
/// one, all of it in `gc_time_ns`.
#[test]
fn records_are_partial_programs_and_merges_are_charged_as_merges() {
    for mode in MODES {
        let mut store = IplNativeStore::new(&config(mode)).unwrap();
        for lpn in 0..5 {
            store.write(lpn, page(mode, lpn as u8), 0).unwrap();
        }
        store.reset_stats();
        let mut now = 0;
        let mut current = page(mode, 0);
        for v in 0..32u8 {
            current = patched(mode, &current, 10 * usize::from(v), v + 100);
            now = store.write_update(0, current.clone(), Some(&[(10 * u32::from(v), 100)]), now).unwrap();
        }
        let s = store.stats();
        assert_eq!((s.flash_sector_programs, s.flash_page_programs, s.logged_writes), (32, 0, 32), "{mode:?}");
        // Bytes mode reads each page before its update, to find the change.
        let reads = s.flash_page_reads;
        assert_eq!(reads > 0, mode == PageContent::Bytes, "{mode:?}");
        let programs_pj = s.flash_energy_pj - reads * T.read_pj;
        assert_eq!(programs_pj, 32 * T.program_pj / 8, "{mode:?}: a sector's share of a program");
        let programs_ns = store.busy_ns() - reads * T.read_ns;
        assert_eq!(programs_ns, 32 * T.program_ns, "{mode:?}: each partial program takes a program's time");
        assert_eq!((s.merges, s.gc_time_ns), (0, 0), "{mode:?}");
        store.reset_stats();
        current = patched(mode, &current, 3000, 99);
        store.write_update(0, current.clone(), Some(&[(3000, 100)]), now).unwrap();
        let s = store.stats();
        assert_eq!(s.merges, 1, "{mode:?}");
        // Bytes mode first reads page 0 and its four log pages to find the change.
        let diff_reads = if mode == PageContent::Bytes { 5 } else { 0 };
        assert_eq!(s.flash_page_reads, diff_reads + 5 + 4, "{mode:?}: five live pages, four log pages");
        assert_eq!((s.flash_page_programs, s.merge_page_writes, s.block_erases), (5, 5, 1), "{mode:?}");
        assert_eq!(s.flash_sector_programs, 1, "{mode:?}: the record after the merge");
        assert_eq!(s.gc_time_ns, 9 * T.read_ns + 5 * T.program_ns + T.erase_ns, "{mode:?}");
        assert_eq!(s.sequential_flushes, 1, "{mode:?}");
        assert_eq!(store.read(0, 0).unwrap().0, current, "{mode:?}");
        for lpn in 1..5 {
            assert_eq!(store.read(lpn, 0).unwrap().0, page(mode, lpn as u8), "{mode:?}");
        }
        store.check_invariants().unwrap();
    }
}

/// A change whose record exceeds a sector is not logged: the unit is merged with the new
/// page (an out-of-place write and a merge), and the host page's program is not GC time.
#[test]
fn an_unloggable_change_merges_the_unit_with_the_page() {
    for mode in MODES {
        let mut store = IplNativeStore::new(&config(mode)).unwrap();
        for lpn in 0..3 {
            store.write(lpn, page(mode, 1), 0).unwrap();
        }
        store.write_update(2, patched(mode, &page(mode, 1), 0, 7), Some(&[(0, 100)]), 0).unwrap();
        store.reset_stats();
        store.write_update(1, page(mode, 2), Some(&[(0, 4096)]), 0).unwrap();
        let s = store.stats();
        assert_eq!((s.out_of_place_writes, s.merges, s.logged_writes), (1, 1, 0), "{mode:?}");
        // In bytes mode the change is found by reading the page first, as in every log layer.
        let diff_read = u64::from(mode == PageContent::Bytes);
        assert_eq!((s.flash_page_reads, s.flash_page_programs, s.block_erases), (3 + diff_read, 3, 1), "{mode:?}");
        assert_eq!(s.gc_time_ns, 3 * T.read_ns + 2 * T.program_ns + T.erase_ns, "{mode:?}");
        assert_eq!(store.pending(), Pending::default(), "{mode:?}: the merge applied page 2's record");
        assert_eq!(store.read(1, 0).unwrap().0, page(mode, 2), "{mode:?}");
        assert_eq!(store.read(2, 0).unwrap().0, patched(mode, &page(mode, 1), 0, 7), "{mode:?}");
    }
}

/// A whole page of new content (`write_new`, the ageing pass's write) is never logged,
/// whatever the delta policy: a page without a copy is a first write, one with a copy
/// merges its unit with the new page (an out-of-place write and a merge), in every content
/// mode, and it reads no page first to find a change.
#[test]
fn a_whole_new_page_merges_its_unit_and_is_never_logged() {
    for mode in MODES {
        let mut store = IplNativeStore::new(&config(mode)).unwrap();
        store.write_new(0, page(mode, 1), 0).unwrap();
        store.write_new(1, page(mode, 1), 0).unwrap();
        store.write_update(1, patched(mode, &page(mode, 1), 0, 7), Some(&[(0, 100)]), 0).unwrap();
        let s = store.stats();
        assert_eq!((s.direct_writes, s.merges, s.logged_writes), (2, 0, 1), "{mode:?}: two first writes");
        store.reset_stats();
        store.write_new(0, page(mode, 2), 0).unwrap();
        let s = store.stats();
        assert_eq!((s.host_page_writes, s.out_of_place_writes, s.merges, s.logged_writes), (1, 1, 1, 0), "{mode:?}");
        // Page 1's data page and the log page (the merge), nothing read for page 0.
        assert_eq!((s.flash_page_reads, s.flash_page_programs, s.block_erases), (2, 2, 1), "{mode:?}");
        assert_eq!(s.gc_time_ns, 2 * T.read_ns + T.program_ns + T.erase_ns, "{mode:?}: the host's page excepted");
        assert_eq!(store.pending(), Pending::default(), "{mode:?}");
        assert_eq!(store.read(0, 0).unwrap().0, page(mode, 2), "{mode:?}");
        assert_eq!(store.read(1, 0).unwrap().0, patched(mode, &page(mode, 1), 0, 7), "{mode:?}");
        store.check_invariants().unwrap();
    }
}

/// `write_new` draws nothing from the sampled delta policy: content-free writes of a page
/// between whole new pages of another unit's page are logged or merged (by the sampled
/// change's size) exactly as without them.
#[test]
fn a_whole_new_page_draws_nothing_from_the_delta_policy() {
    let outcomes = |with_new_pages: bool| {
        let mut c = config(PageContent::None);
        // Changes of 1 to 1000 B: about half fit a sector, so the sequence of outcomes
        // follows the sequence of draws.
        c.buffer.delta_bytes_min = 1;
        c.buffer.delta_bytes_max = 1000;
        let mut store = IplNativeStore::new(&c).unwrap();
        store.write(0, PageData::Empty, 0).unwrap();
        store.write(60, PageData::Empty, 0).unwrap();
        let mut logged = Vec::new();
        for _ in 0..100 {
            if with_new_pages {
                store.write_new(60, PageData::Empty, 0).unwrap();
            }
            let before = store.stats().logged_writes;
            store.write(0, PageData::Empty, 0).unwrap();
            logged.push(store.stats().logged_writes > before);
        }
        store.check_invariants().unwrap();
        (logged, store.stats())
    };
    let (plain, plain_stats) = outcomes(false);
    let (with_new, with_new_stats) = outcomes(true);
    assert!(plain.iter().any(|&l| l) && plain.iter().any(|&l| !l), "both outcomes occur: {plain:?}");
    assert_eq!(with_new, plain, "the same draws in the same order");
    assert_eq!(with_new_stats.logged_writes, plain_stats.logged_writes);
    assert_eq!(with_new_stats.out_of_place_writes, plain_stats.out_of_place_writes + 100);
}

/// `pending` counts live records (and trim records) and the pages they belong to; `drain`
/// merges every unit with records, charged as merges, and leaves nothing pending.
#[test]
fn drain_merges_every_unit_with_records() {
    for mode in MODES {
        let mut store = IplNativeStore::new(&config(mode)).unwrap();
        for lpn in [0, 1, 60, 61, 62, 120] {
            store.write(lpn, page(mode, 1), 0).unwrap();
        }
        for (lpn, at) in [(0, 0), (0, 200), (1, 0), (60, 0), (62, 0)] {
            store.write_update(lpn, patched(mode, &page(mode, 1), at, 5), Some(&[(at as u32, 100)]), 0).unwrap();
        }
        store.trim(61, 0).unwrap();
        assert_eq!(store.pending(), Pending { log_records: 6, log_pages: 5, dram_pages: 0 }, "{mode:?}");
        store.reset_stats();
        let done = store.drain(1_000).unwrap();
        let s = store.stats();
        assert_eq!((s.merges, s.block_erases), (2, 2), "{mode:?}: units 0 and 1; unit 2 has no records");
        assert_eq!(s.merge_page_writes, 4, "{mode:?}: pages 0, 1, 60 and 62 (61 trimmed)");
        assert!(s.gc_time_ns > 0 && done > 1_000, "{mode:?}");
        assert_eq!(store.pending(), Pending::default(), "{mode:?}");
        assert_eq!(store.drain(done).unwrap(), done, "{mode:?}: nothing left");
        assert_eq!(store.read(61, 0).unwrap().0, PageData::Empty, "{mode:?}");
        assert_eq!(store.health().mapped_pages, 5, "{mode:?}");
        store.check_invariants().unwrap();
    }
}

/// What the layout does not model is refused with one message naming the key; the keys
/// it ignores are refused when given.
#[test]
fn the_configuration_refuses_what_the_layout_does_not_model() {
    let mut c = config(PageContent::Fingerprint);
    c.dedup.enabled = true;
    let err = c.validate().unwrap_err().to_string();
    assert!(err.contains("dedup.enabled") && err.contains("ipl-native"), "{err}");
    let mut c = config(PageContent::None);
    c.ftl.wear_leveling = WearLeveling::Static;
    let err = c.validate().unwrap_err().to_string();
    assert!(err.contains("ftl.wear_leveling") && err.contains("ipl-native"), "{err}");
    let mut c = config(PageContent::None);
    c.ftl.mapping = nvmdb_flash::config::Mapping::Block;
    c.validate().unwrap();
    for key in ["ftl.mapping", "ftl.gc", "buffer.pcm_mb", "buffer.merge", "buffer.merge_layout", "dedup.segments"] {
        let err = c.check_given_keys([key]).unwrap_err().to_string();
        assert!(err.contains(key) && err.contains("ipl-native"), "{key}: {err}");
    }
    c.check_given_keys(["ftl.overprovision", "ftl.wear_leveling", "buffer.delta", "buffer.delta_bytes_min"]).unwrap();
    c.flash.spare_bytes = 64;
    let err = IplNativeStore::new(&c).unwrap_err().to_string();
    assert!(err.contains("flash.spare_bytes"), "{err}");
    let mut c = config(PageContent::None);
    c.ftl.overprovision = 0.0;
    let err = IplNativeStore::new(&c).unwrap_err().to_string();
    assert!(err.contains("ftl.overprovision"), "{err}");
    let mut c = config(PageContent::None);
    c.flash.pages_per_block = 1;
    let err = IplNativeStore::new(&c).unwrap_err().to_string();
    assert!(err.contains("flash.pages_per_block"), "{err}");
    // A built stack.
    let store = nvmdb_flash::build(&config(PageContent::Bytes)).unwrap();
    assert_eq!(store.logical_pages(), 12 * 60);
}
