//! Small in-place updates (50–150 B, the host range passed down) on a pre-filled store,
//! fingerprint mode: the PCM schemes absorb them in PCM and program fewer flash pages
//! than the page-mapped baseline while their PCM holds a log region for every logical
//! block the updates touch. Each scheme's figures, IPL's and a run whose working set is
//! twice the PCM log's P-blocks are printed beside them (`--nocapture`).

use nvmdb_device::{PageContent, PageData};
use nvmdb_flash::config::{BufferKind, MergeKind};
use nvmdb_flash::{SsdConfig, StoreStats};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn config(kind: BufferKind, merge: MergeKind, pcm_mb: u64) -> SsdConfig {
    let mut c = SsdConfig { content: PageContent::Fingerprint, ..SsdConfig::default() };
    c.flash.packages = 1;
    c.flash.planes_per_package = 4;
    c.flash.blocks_per_plane = 64;
    c.ftl.overprovision = 0.15;
    c.buffer.kind = kind;
    c.buffer.merge = merge;
    c.buffer.pcm_mb = pcm_mb;
    c
}

/// Pre-fills the first `footprint` pages, then makes `updates` updates of 50–150 B to
/// pages drawn uniformly from the footprint; returns the counters of the updates alone.
fn run(kind: BufferKind, merge: MergeKind, pcm_mb: u64, footprint: u64, updates: u64) -> StoreStats {
    let mut store = nvmdb_flash::build(&config(kind, merge, pcm_mb)).unwrap();
    assert!(footprint <= store.logical_pages());
    for lpn in 0..footprint {
        store.write(lpn, PageData::Fingerprint(lpn + 1), 0).unwrap();
    }
    store.reset_stats();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    for i in 0..updates {
        let lpn = rng.gen_range(0..footprint);
        let len = rng.gen_range(50..=150);
        let at = rng.gen_range(0..4096 - len);
        store.write_range(lpn, PageData::Fingerprint(footprint + i + 1), (at, len), 0).unwrap();
        if i % 2000 == 0 {
            store.check_invariants().unwrap();
        }
    }
    store.check_invariants().unwrap();
    store.stats()
}

#[test]
fn pcm_schemes_program_fewer_pages_than_the_baseline_on_small_updates() {
    // 64 logical blocks updated; 4 MB of PCM hold 124 P-blocks of 64 × 512 B.
    let (footprint, updates) = (4096, 20_000);
    let baseline = run(BufferKind::None, MergeKind::LiveBlock, 4, footprint, updates).flash_page_programs;
    println!("baseline: {baseline} page programs for {updates} updates");
    assert!(baseline >= updates, "the baseline programs every update");
    for merge in [MergeKind::LiveBlock, MergeKind::LoggedPages] {
        for kind in [BufferKind::PcmLog, BufferKind::Dpram, BufferKind::Ipl] {
            let s = run(kind, merge, 4, footprint, updates);
            println!(
                "{kind:?} {merge:?}: {} page programs, {} sector programs, {} merges ({} pages), {} out of place",
                s.flash_page_programs, s.flash_sector_programs, s.merges, s.merge_page_writes, s.out_of_place_writes
            );
            assert_eq!(s.direct_writes, 0, "every page was pre-filled");
            if kind != BufferKind::Ipl {
                assert!(s.flash_page_programs < baseline / 4, "{kind:?} {merge:?}: {s:?}");
            }
        }
    }
    // 1 MB: 31 P-blocks for 64 updated blocks, so about half the updates replace a
    // P-block; d-PRAM's 64 B units hold about 5,000 records.
    for kind in [BufferKind::PcmLog, BufferKind::Dpram] {
        let s = run(kind, MergeKind::LiveBlock, 1, footprint, updates);
        println!("1 MB, {kind:?}: {} page programs, {} merges", s.flash_page_programs, s.merges);
        if kind == BufferKind::Dpram {
            assert!(s.flash_page_programs < baseline, "{s:?}");
        }
    }
}
