use nvmdb_device::{PageContent, PageData};

use super::{run_plane, PageFtl};
use crate::config::MergeLayout;
use crate::gc;
use crate::layer::PageStore;
use crate::SsdConfig;

#[test]
fn data_writes_and_their_sequential_runs_are_counted_apart_from_gc_copies() {
    let mut config = SsdConfig { content: PageContent::Fingerprint, ..SsdConfig::default() };
    config.flash.packages = 1;
    config.flash.planes_per_package = 2;
    config.flash.blocks_per_plane = 16;
    config.flash.partial_programming = true;
    config.ftl.overprovision = 0.25;
    let mut ftl = PageFtl::new(&config).unwrap();
    let page = |i: u64| PageData::Fingerprint(i + 1);
    // 0..8 in order (7 continue a run), then 20, 3, 4 (one: 3 -> 4).
    for lpn in (0..8).chain([20, 3, 4]) {
        ftl.write(lpn, page(lpn), 0).unwrap();
    }
    // A run of 5, 6, 7 continues 4 -> 5 and adds two more.
    ftl.write_run(&[(5, page(5)), (6, page(6)), (7, page(7))], 0).unwrap();
    let s = ftl.stats();
    assert_eq!((s.data_page_writes, s.sequential_page_writes), (14, 11));
    // A partial program breaks the run.
    ftl.program_sector(30, 0, &page(30), 0).unwrap();
    ftl.write(8, page(8), 0).unwrap();
    assert_eq!(ftl.stats().sequential_page_writes, 11);
    // Fill, then scattered overwrites until GC copies pages: the copies are not data
    // writes, and the sequential count matches the written stream's.
    ftl.reset_stats();
    let logical = ftl.logical_pages();
    let stream: Vec<u64> = (0..logical).chain((0..4 * logical).map(|i| i * 2_654_435_761 % logical)).collect();
    for (i, &lpn) in stream.iter().enumerate() {
        ftl.write(lpn, page(lpn + i as u64 * logical), 0).unwrap();
    }
    let s = ftl.stats();
    assert!(s.gc_page_copies > 0, "the overwrites made GC copy pages");
    assert_eq!(s.data_page_writes, stream.len() as u64);
    assert_eq!(s.flash_page_programs, s.data_page_writes + s.gc_page_copies);
    // The page written before the stream was 8, so its first page (0) starts a run.
    let runs = stream.windows(2).filter(|w| w[1] == w[0] + 1).count() as u64;
    assert_eq!(s.sequential_page_writes, runs);
}

#[test]
fn a_striped_run_spreads_over_the_planes_and_ends_sooner() {
    let mut config = SsdConfig { content: PageContent::Fingerprint, ..SsdConfig::default() };
    config.flash.packages = 2;
    config.flash.planes_per_package = 2;
    config.flash.blocks_per_plane = 16;
    config.ftl.overprovision = 0.25;
    let pages: Vec<(u64, PageData)> = (0..8).map(|lpn| (lpn, PageData::Fingerprint(lpn + 1))).collect();
    let mut done = Vec::new();
    for layout in [MergeLayout::OnePlane, MergeLayout::Striped] {
        config.buffer.merge_layout = layout;
        let mut ftl = PageFtl::new(&config).unwrap();
        done.push(ftl.write_run(&pages, 0).unwrap());
        let planes: std::collections::BTreeSet<usize> =
            (0..8).map(|lpn| ftl.plane_of(ftl.l2p[lpn as usize] / ftl.geometry.pages_per_block)).collect();
        assert_eq!(planes.len(), if layout == MergeLayout::Striped { 4 } else { 1 }, "{layout:?}");
        for (lpn, data) in &pages {
            assert_eq!(&ftl.read(*lpn, 0).unwrap().0, data);
        }
        ftl.check_invariants().unwrap();
        assert_eq!(ftl.stats().data_page_writes, 8);
    }
    // Eight programs on one plane against two on each of four.
    let program_ns = nvmdb_device::FlashTiming::THESIS_TABLE_5_1.program_ns;
    assert_eq!(done, vec![8 * program_ns, 2 * program_ns]);
}

proptest::proptest! {
    /// The greedy victim from the blocks filed by valid count is the one the policy
    /// chooses in a pass over the plane's closed blocks, after any writes and trims.
    #[test]
    fn filed_greedy_victim_matches_the_pass_over_the_blocks(
        ops in proptest::collection::vec((0u64..1000, 0u8..8), 1..1500),
    ) {
        let mut config = SsdConfig { content: PageContent::None, ..SsdConfig::default() };
        config.flash.packages = 1;
        config.flash.planes_per_package = 2;
        config.flash.blocks_per_plane = 12;
        config.flash.pages_per_block = 16;
        config.ftl.overprovision = 0.3;
        let mut ftl = PageFtl::new(&config).unwrap();
        let logical = ftl.logical_pages();
        for (lpn, op) in ops {
            let lpn = lpn % logical;
            if op == 0 {
                ftl.trim(lpn, 0).unwrap();
            } else {
                ftl.write(lpn, PageData::Empty, 0).unwrap();
            }
            for plane in 0..2 {
                let garbage = ftl.gather_candidates(plane);
                let scanned = gc::greedy(&ftl.candidates).filter(|_| garbage);
                proptest::prop_assert_eq!(ftl.greedy_victim(plane).ok(), scanned);
            }
        }
        proptest::prop_assert_eq!(ftl.check_invariants(), Ok(()));
    }
}

#[test]
fn runs_go_to_the_plane_with_the_fewest_live_pages() {
    assert_eq!(run_plane(&[9, 3, 3, 7]), 1);
    assert_eq!(run_plane(&[0]), 0);
}
