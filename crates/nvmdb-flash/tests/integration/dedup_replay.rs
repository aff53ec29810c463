//! Deduplication through the replay engine: an FIU-format trace whose MD5s repeat.

use nvmdb_device::PageContent;
use nvmdb_flash::{ReplayOptions, SsdConfig};
use nvmdb_workload::{TraceFormat, TraceReader};

/// 40 one-page writes to distinct addresses with 10 distinct contents, then 10 overwrites
/// of the first pages with fresh contents.
fn fiu_trace() -> String {
    let mut text = String::new();
    for i in 0..40u64 {
        text += &format!("{} 1 proc {} 8 W 6 0 {:032x}\n", 1000 + i, i * 8, 0xABC0 + i % 10);
    }
    for i in 0..10u64 {
        text += &format!("{} 1 proc {} 8 W 6 0 {:032x}\n", 2000 + i, i * 8, 0xF000 + i);
    }
    text
}

fn run(dedup: bool) -> nvmdb_flash::ReplayReport {
    let mut config = SsdConfig { content: PageContent::Fingerprint, ..SsdConfig::default() };
    config.flash.packages = 1;
    config.flash.planes_per_package = 2;
    config.flash.blocks_per_plane = 32;
    config.ftl.overprovision = 0.2;
    config.dedup.enabled = dedup;
    config.dedup.segments = 4;
    let mut store = nvmdb_flash::build(&config).unwrap();
    let trace = fiu_trace();
    let requests = TraceReader::new(trace.as_bytes(), TraceFormat::Fiu);
    let options = ReplayOptions { content: config.content, ..ReplayOptions::default() };
    let report = nvmdb_flash::replay(store.as_mut(), requests, &options).unwrap();
    store.check_invariants().unwrap();
    report
}

#[test]
fn repeated_md5s_are_written_once() {
    let plain = run(false);
    let dedup = run(true);
    assert_eq!(plain.stats.flash_page_programs, 50);
    assert_eq!(plain.stats.dedup_pages_removed, 0);
    // 40 writes of 10 contents: 30 duplicates; the 10 overwrites carry new contents.
    assert_eq!(dedup.stats.host_page_writes, 50);
    assert_eq!(dedup.stats.dedup_pages_removed, 30);
    assert_eq!(dedup.stats.flash_page_programs, 20);
    assert_eq!(dedup.stats.dedup_lookups, 50);
    // 40 pages mapped; the 10 overwritten ones held 10 distinct old contents that live on
    // in other pages, so 10 + 10 = 20 physical pages hold the 40 logical ones.
    assert_eq!((dedup.health.mapped_pages, dedup.health.live_physical_pages), (40, 20));
    assert_eq!(dedup.summary().flash_pages_saved, 20);
    assert!(dedup.summary().dedup_comparisons_per_lookup >= 1.0);
    assert!(dedup.stats.pcm_bits_written > 0 && dedup.stats.pcm_energy_pj > 0);
    assert_eq!(dedup.summary().content_mode, PageContent::Fingerprint);
}
