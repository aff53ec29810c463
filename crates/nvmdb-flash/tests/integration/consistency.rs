//! Differential test: every configuration returns, on read, the last data written. The
//! stack stores real bytes (small geometry) and is checked page by page against a plain
//! map, with its invariants (valid counts, mappings, dedup reference counts) checked after
//! every operation, in two passes of the same operations with a drain (which finds nothing
//! pending in an FTL) in the first pass's middle and at the end.

use std::collections::BTreeMap;

use nvmdb_device::{PageContent, PageData};
use nvmdb_flash::config::{BufferKind, GcPolicy, Mapping, WearLeveling};
use nvmdb_flash::{PageStore, SsdConfig};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const PAGE_BYTES: usize = 512;

/// Buffer kinds under test here, with every mapping: the log layers (above the page
/// mapping only) are tested the same way, with every option, in `buffers.rs`.
const BUFFERS: [BufferKind; 1] = [BufferKind::None];

fn config(mapping: Mapping, buffer: BufferKind, dedup: bool, gc: GcPolicy, wl: WearLeveling) -> SsdConfig {
    let mut c = SsdConfig { content: PageContent::Bytes, ..SsdConfig::default() };
    c.flash.packages = 1;
    c.flash.planes_per_package = 2;
    c.flash.blocks_per_plane = 16;
    c.flash.pages_per_block = 8;
    c.flash.page_bytes = PAGE_BYTES as u32;
    c.ftl.mapping = mapping;
    c.ftl.gc = gc;
    c.ftl.wear_leveling = wl;
    c.ftl.static_wl_threshold = 3;
    c.ftl.overprovision = 0.3;
    c.ftl.log_blocks = 4;
    c.buffer.kind = buffer;
    c.dedup.enabled = dedup;
    c.dedup.segments = 4;
    c.dedup.pcm_mb = 1;
    c
}

/// Page contents drawn from a small pool, so that duplicates are common.
fn content(rng: &mut Xoshiro256PlusPlus) -> Vec<u8> {
    let id: u32 = rng.gen_range(0..400);
    (0..PAGE_BYTES).map(|i| (id.wrapping_mul(2_654_435_761) >> (i % 4 * 8)) as u8 ^ i as u8).collect()
}

fn check_all(store: &mut dyn PageStore, model: &BTreeMap<u64, Vec<u8>>, label: &str) {
    store.check_invariants().unwrap_or_else(|e| panic!("{label}: {e}"));
    for lpn in 0..store.logical_pages() {
        let (data, _) = store.read(lpn, 0).unwrap();
        match model.get(&lpn) {
            Some(bytes) => assert_eq!(data, PageData::Bytes(bytes.clone()), "{label}: page {lpn}"),
            None => assert!(
                data == PageData::Empty || data == PageData::Bytes(vec![0xFF; PAGE_BYTES]),
                "{label}: never-written or trimmed page {lpn} returned data"
            ),
        }
    }
}

/// Drains a stack with nothing pending (an FTL holds no log records or buffered pages):
/// the drain does nothing, counts nothing, and returns at once.
fn drain_nothing(store: &mut dyn PageStore, now_ns: u64, label: &str) -> u64 {
    assert_eq!(store.pending(), nvmdb_flash::Pending::default(), "{label}");
    let before = store.stats();
    assert_eq!(store.drain(now_ns).unwrap(), now_ns, "{label}: a drain of nothing takes no time");
    assert_eq!(store.stats(), before, "{label}: a drain of nothing counts nothing");
    now_ns
}

fn run(config: &SsdConfig, seed: u64, ops: u64, label: &str) -> nvmdb_flash::StoreStats {
    let mut store = nvmdb_flash::build(config).unwrap_or_else(|e| panic!("{label}: {e}"));
    let pages = store.logical_pages();
    let mut model = BTreeMap::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut now_ns = 0;
    // Two passes of the same operations, a drain in the first's middle and at the end.
    for (pass, op) in (0..2).flat_map(|pass| (0..ops / 2).map(move |op| (pass, op))) {
        if op == 0 {
            rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        }
        if pass == 0 && op == ops / 4 {
            now_ns = drain_nothing(store.as_mut(), now_ns, label);
        }
        // Skewed addresses: a hot quarter takes most writes, so GC and merges see mixed blocks.
        let lpn = if rng.gen_bool(0.7) { rng.gen_range(0..pages / 4) } else { rng.gen_range(0..pages) };
        match rng.gen_range(0..10) {
            0..=6 => {
                let bytes = content(&mut rng);
                now_ns = store.write(lpn, PageData::Bytes(bytes.clone()), now_ns).unwrap();
                model.insert(lpn, bytes);
            }
            7 => {
                store.trim(lpn, now_ns).unwrap();
                model.remove(&lpn);
            }
            _ => {
                let (data, done) = store.read(lpn, now_ns).unwrap();
                now_ns = done;
                if let Some(bytes) = model.get(&lpn) {
                    assert_eq!(data, PageData::Bytes(bytes.clone()), "{label}: op {op} page {lpn}");
                }
            }
        }
        store.check_invariants().unwrap_or_else(|e| panic!("{label}: pass {pass} op {op}: {e}"));
    }
    drain_nothing(store.as_mut(), now_ns, label);
    check_all(store.as_mut(), &model, label);
    let stats = store.stats();
    assert!(stats.block_erases > 0, "{label}: the run never reclaimed space, so GC/merges went untested");
    assert_eq!(stats.dedup_pages_removed > 0, config.dedup.enabled, "{label}: duplicates removed iff dedup is on");
    stats
}

#[test]
fn every_configuration_reads_back_the_last_write() {
    for mapping in [Mapping::Page, Mapping::Block, Mapping::Hybrid] {
        for buffer in BUFFERS {
            for dedup in [false, true] {
                if dedup && mapping != Mapping::Page {
                    continue;
                }
                for seed in 1..=3 {
                    let c = config(mapping, buffer, dedup, GcPolicy::Greedy, WearLeveling::Dynamic);
                    let label = format!("{mapping:?}/{buffer:?}/dedup {dedup}/seed {seed}");
                    let stats = run(&c, seed, 6_000, &label);
                    if mapping != Mapping::Page {
                        assert!(stats.merges > 0, "{label}: no merge happened");
                    }
                }
            }
        }
    }
}

#[test]
fn every_gc_policy_and_wear_levelling_mode_reads_back_the_last_write() {
    for gc in [GcPolicy::Greedy, GcPolicy::Fifo, GcPolicy::CostBenefit] {
        for wl in [WearLeveling::None, WearLeveling::Dynamic, WearLeveling::Static] {
            for dedup in [false, true] {
                let c = config(Mapping::Page, BufferKind::None, dedup, gc, wl);
                run(&c, 9, 4_000, &format!("{gc:?}/{wl:?}/dedup {dedup}"));
            }
        }
    }
}

#[test]
fn a_bounded_fingerprint_store_stays_consistent() {
    let mut c = config(Mapping::Page, BufferKind::None, true, GcPolicy::Greedy, WearLeveling::Dynamic);
    c.dedup.max_entries = 5;
    let stats = run(&c, 4, 5_000, "dedup max_entries 5");
    let unbounded = run(
        &config(Mapping::Page, BufferKind::None, true, GcPolicy::Greedy, WearLeveling::Dynamic),
        4,
        5_000,
        "dedup unbounded",
    );
    assert!(stats.dedup_pages_removed < unbounded.dedup_pages_removed, "a 5-entry store finds fewer duplicates");
}
