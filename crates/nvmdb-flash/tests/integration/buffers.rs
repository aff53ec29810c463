//! Differential tests of every configuration above the one page-mapped FTL (baseline,
//! dedup, IPL, d-PRAM, PCM log, and the log schemes with dedup), and of IPL in its own
//! layout over the flash array, against a plain map: random whole-page writes (small
//! edits, and rewrites as whole pages of new content, `PageStore::write_new`), partial
//! host writes (read-modify-write with the host range passed down), unchanged rewrites,
//! reads and trims in bytes mode on a small geometry, in two passes of the same operations
//! with a drain (`PageStore::drain`) in the first pass's middle and at the end. The
//! invariants are checked after every operation and drain, and every logical page's bytes
//! at the end.

use std::collections::BTreeMap;

use nvmdb_device::{PageContent, PageData};
use nvmdb_flash::config::{
    BufferKind, BufferSection, FlashSection, FtlSection, MergeKind, MergeLayout, ReplacementKind, SsdConfig,
};
use nvmdb_flash::dpram::DpramStore;
use nvmdb_flash::ipl::IplStore;
use nvmdb_flash::ipl_native::IplNativeStore;
use nvmdb_flash::log_common::SchemeParams;
use nvmdb_flash::pcm_log::PcmLogStore;
use nvmdb_flash::PageStore;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const PAGE: usize = 4096;

fn small_config(kind: BufferKind, dedup: bool) -> SsdConfig {
    let base = SsdConfig::default();
    let mut config = SsdConfig {
        content: PageContent::Bytes,
        flash: FlashSection {
            packages: 1,
            planes_per_package: 2,
            blocks_per_plane: 16,
            pages_per_block: 16,
            ..base.flash
        },
        ftl: FtlSection { overprovision: 0.3, ..base.ftl },
        buffer: BufferSection { kind, pcm_mb: 1, ..base.buffer },
        ..base
    };
    config.dedup.enabled = dedup;
    config.dedup.pcm_mb = 1;
    config.dedup.segments = 4;
    config
}

fn build(kind: BufferKind, dedup: bool, pcm_bytes: Option<u64>, option: Option<Variant>) -> Box<dyn PageStore> {
    let mut config = small_config(kind, dedup);
    match option {
        Some(Variant::LoggedPages) => config.buffer.merge = MergeKind::LoggedPages,
        Some(Variant::Lru) => config.buffer.replacement = ReplacementKind::Lru,
        Some(Variant::Striped) => config.buffer.merge_layout = MergeLayout::Striped,
        None => {}
    }
    let mut params = SchemeParams::from_config(&config);
    if let Some(bytes) = pcm_bytes {
        params.pcm_bytes = bytes;
    }
    match kind {
        BufferKind::None => nvmdb_flash::build(&config).unwrap(),
        BufferKind::Ipl => Box::new(IplStore::with_params(&params).unwrap()),
        BufferKind::IplNative => Box::new(IplNativeStore::new(&config).unwrap()),
        BufferKind::Dpram => Box::new(DpramStore::with_params(&params).unwrap()),
        BufferKind::PcmLog => Box::new(PcmLogStore::with_params(&params).unwrap()),
    }
}

fn expect(model: &BTreeMap<u64, Vec<u8>>, lpn: u64) -> PageData {
    model.get(&lpn).map_or(PageData::Empty, |b| PageData::Bytes(b.clone()))
}

/// The log layer's options beside the defaults.
#[derive(Debug, Clone, Copy)]
enum Variant {
    /// `buffer.merge = "logged-pages"`.
    LoggedPages,
    /// `buffer.replacement = "lru"` (the PCM log).
    Lru,
    /// `buffer.merge_layout = "striped"`.
    Striped,
}

/// Runs `ops` random operations; returns the store's final counters.
fn run(kind: BufferKind, dedup: bool, pcm_bytes: Option<u64>, seed: u64, ops: usize) -> nvmdb_flash::StoreStats {
    run_variant(kind, dedup, pcm_bytes, None, seed, ops)
}

/// [`run`] with one of the log layer's options.
fn run_variant(
    kind: BufferKind,
    dedup: bool,
    pcm_bytes: Option<u64>,
    option: Option<Variant>,
    seed: u64,
    ops: usize,
) -> nvmdb_flash::StoreStats {
    let label = format!("{kind:?} {option:?} dedup={dedup} seed={seed}");
    let mut store = build(kind, dedup, pcm_bytes, option);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    // A small hot set, so that updates dominate and logs fill.
    let pages = store.logical_pages().min(160);
    let mut model: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let mut now = 0u64;
    // Two passes of the same operations (the second's bytes built on the first's), with a
    // drain in the first pass's middle and one at the end.
    for (pass, step) in (0..PASSES).flat_map(|pass| (0..ops).map(move |step| (pass, step))) {
        if pass == 0 && step == ops / 2 {
            now = drain(store.as_mut(), now, &label);
        }
        if step == 0 {
            rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        }
        let lpn = rng.gen_range(0..pages);
        let old = model.get(&lpn).cloned().unwrap_or_else(|| vec![0xFF; PAGE]);
        match rng.gen_range(0..20) {
            0..=9 => {
                let mut bytes = old;
                // A whole page of new content goes as such (`write_new`, the ageing pass's
                // write); small edits as plain writes.
                let new = rng.gen_bool(0.1);
                if new {
                    rng.fill(&mut bytes[..]);
                } else {
                    for _ in 0..rng.gen_range(1..4) {
                        let len = rng.gen_range(1..120);
                        let at = rng.gen_range(0..PAGE - len);
                        rng.fill(&mut bytes[at..at + len]);
                    }
                }
                let data = PageData::Bytes(bytes.clone());
                now = if new { store.write_new(lpn, data, now) } else { store.write(lpn, data, now) }.unwrap();
                model.insert(lpn, bytes);
            }
            10..=12 => {
                // A partial host write: the host range passes down.
                let len = rng.gen_range(1..700);
                let at = rng.gen_range(0..PAGE - len);
                let mut bytes = old;
                rng.fill(&mut bytes[at..at + len]);
                now = store.write_range(lpn, PageData::Bytes(bytes.clone()), (at as u32, len as u32), now).unwrap();
                model.insert(lpn, bytes);
            }
            13 if model.contains_key(&lpn) => {
                // Unchanged content.
                now = store.write(lpn, PageData::Bytes(old), now).unwrap();
            }
            14..=17 => {
                let (data, t) = store.read(lpn, now).unwrap();
                now = t;
                assert!(data == expect(&model, lpn), "{label} step {step}: page {lpn} differs");
            }
            _ => {
                now = store.trim(lpn, now).unwrap();
                model.remove(&lpn);
            }
        }
        store.check_invariants().unwrap_or_else(|e| panic!("{label} pass {pass} step {step}: {e}"));
    }
    now = drain(store.as_mut(), now, &label);
    for lpn in 0..store.logical_pages() {
        let (data, _) = store.read(lpn, now).unwrap();
        assert!(data == expect(&model, lpn), "{label} final: page {lpn} differs");
    }
    store.check_invariants().unwrap();
    store.stats()
}

/// Passes of each run's operations.
const PASSES: usize = 2;

/// Drains the store at `now`: nothing pending after it, no host page written, and (checked
/// by the caller's reads) every page as it was; returns when it is done.
fn drain(store: &mut dyn PageStore, now: u64, label: &str) -> u64 {
    let before = store.stats();
    let done = store.drain(now).unwrap_or_else(|e| panic!("{label}: drain: {e}"));
    assert_eq!(store.pending(), nvmdb_flash::Pending::default(), "{label}: pending after a drain");
    let after = store.stats();
    assert_eq!(after.host_page_writes, before.host_page_writes, "{label}: a drain writes no host page");
    store.check_invariants().unwrap_or_else(|e| panic!("{label}: after a drain: {e}"));
    done.max(now)
}

const KINDS: [BufferKind; 5] =
    [BufferKind::None, BufferKind::Ipl, BufferKind::IplNative, BufferKind::Dpram, BufferKind::PcmLog];

#[test]
fn every_configuration_matches_a_map() {
    for kind in KINDS {
        // IPL in its own layout has no page FTL to deduplicate in.
        let dedups: &[bool] = if kind == BufferKind::IplNative { &[false] } else { &[false, true] };
        for &dedup in dedups {
            for seed in 0..2 {
                let stats = run(kind, dedup, None, seed, 2500);
                if kind != BufferKind::None {
                    assert!(stats.logged_writes > 0, "{kind:?}: {stats:?}");
                    assert!(stats.out_of_place_writes > 0, "{kind:?}: whole rewrites go out of place");
                    assert!(stats.unchanged_writes > 0, "{kind:?}: unchanged rewrites are no-ops");
                    assert_eq!(stats.sequential_flushes, stats.merges);
                }
            }
        }
    }
}

#[test]
fn every_log_layer_option_matches_a_map() {
    for kind in [BufferKind::Ipl, BufferKind::Dpram, BufferKind::PcmLog] {
        for option in [Variant::LoggedPages, Variant::Lru, Variant::Striped] {
            if matches!(option, Variant::Lru) && kind != BufferKind::PcmLog {
                continue;
            }
            for dedup in [false, true] {
                // PCM small enough that the PCM log replaces P-blocks and d-PRAM merges.
                let pcm = match kind {
                    BufferKind::PcmLog => Some(3 * 16 * 512 + 64),
                    BufferKind::Dpram => Some(4096),
                    _ => None,
                };
                let stats = run_variant(kind, dedup, pcm, Some(option), 1, 2500);
                assert!(stats.merges > 0 && stats.logged_writes > 0, "{kind:?} {option:?}: {stats:?}");
            }
        }
    }
}

#[test]
fn a_dram_write_buffer_on_top_matches_a_map() {
    for kind in [BufferKind::None, BufferKind::PcmLog, BufferKind::Dpram] {
        let mut config = small_config(kind, false);
        config.dram.pages = 6;
        let mut store = nvmdb_flash::build(&config).unwrap();
        let mut model: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        for step in 0..1500 {
            let lpn = rng.gen_range(0..40);
            if rng.gen_bool(0.6) {
                let mut bytes = model.get(&lpn).cloned().unwrap_or_else(|| vec![0xFF; PAGE]);
                let at = rng.gen_range(0..PAGE - 64);
                rng.fill(&mut bytes[at..at + 64]);
                store.write(lpn, PageData::Bytes(bytes.clone()), 0).unwrap();
                model.insert(lpn, bytes);
            } else {
                assert!(store.read(lpn, 0).unwrap().0 == expect(&model, lpn), "{kind:?} step {step}: page {lpn}");
            }
            if step == 750 {
                assert!(store.pending().dram_pages > 0, "{kind:?}: pages wait in DRAM");
                drain(store.as_mut(), 0, &format!("{kind:?} DRAM"));
            }
            store.check_invariants().unwrap();
        }
        let s = store.stats();
        assert!(s.host_page_writes > s.flash_page_programs, "{kind:?}: the buffer absorbs rewrites: {s:?}");
        drain(store.as_mut(), 0, &format!("{kind:?} DRAM"));
        for lpn in 0..40 {
            assert!(store.read(lpn, 0).unwrap().0 == expect(&model, lpn), "{kind:?} drained: page {lpn}");
        }
    }
}

#[test]
fn pcm_log_with_few_pblocks_replaces_victims() {
    // Two P-blocks: case 2 replacement runs constantly.
    let stats = run(BufferKind::PcmLog, false, Some(2 * 16 * 512 + 64), 11, 3000);
    assert!(stats.merges > 10, "{stats:?}");
}

#[test]
fn dpram_with_a_tiny_pool_merges_oldest() {
    let stats = run(BufferKind::Dpram, false, Some(4096), 5, 3000);
    assert!(stats.merges > 10, "{stats:?}");
}

#[test]
fn ipl_fills_its_log_pages_and_merges() {
    for kind in [BufferKind::Ipl, BufferKind::IplNative] {
        let stats = run(kind, false, None, 7, 6000);
        assert!(stats.merges > 0 && stats.flash_sector_programs > 0, "{kind:?}: {stats:?}");
    }
}

/// Fingerprint mode with the synthetic generator's changed ranges: reads return the last
/// content id; small deltas are logged (PCM cells written, flash sectors for IPL), so the
/// flash programs stay near the first writes.
#[test]
fn fingerprint_mode_logs_small_deltas() {
    let mut config = small_config(BufferKind::PcmLog, false);
    config.content = PageContent::Fingerprint;
    let params = SchemeParams::from_config(&config);
    let mut pcm_log = PcmLogStore::with_params(&params).unwrap();
    let mut dpram = DpramStore::with_params(&params).unwrap();
    let mut ipl = IplStore::with_params(&params).unwrap();
    let mut native = IplNativeStore::new(&params.config).unwrap();
    let mut model = BTreeMap::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    for step in 0..2000u64 {
        let lpn = rng.gen_range(0..ipl.logical_pages().min(native.logical_pages()));
        let delta = [(rng.gen_range(0..3900), rng.gen_range(20..120))];
        let data = PageData::Fingerprint(step + 1);
        pcm_log.write_update(lpn, data.clone(), Some(&delta), 0).unwrap();
        dpram.write_update(lpn, data.clone(), Some(&delta), 0).unwrap();
        ipl.write_update(lpn, data.clone(), Some(&delta), 0).unwrap();
        native.write_update(lpn, data, Some(&delta), 0).unwrap();
        model.insert(lpn, step + 1);
    }
    for (&lpn, &id) in &model {
        let stores: [&mut dyn PageStore; 4] = [&mut pcm_log, &mut dpram, &mut ipl, &mut native];
        for store in stores {
            assert_eq!(store.read(lpn, 0).unwrap().0, PageData::Fingerprint(id), "page {lpn}");
        }
    }
    for store in [&pcm_log as &dyn PageStore, &dpram, &ipl, &native] {
        store.check_invariants().unwrap();
        let stats = store.stats();
        assert_eq!(stats.direct_writes, model.len() as u64, "{stats:?}");
        assert!(stats.merges < stats.host_page_writes / 4, "{stats:?}");
    }
    assert!(pcm_log.stats().pcm_bits_written > 0 && dpram.stats().pcm_bits_written > 0);
    assert!(ipl.stats().flash_sector_programs > 0 && native.stats().flash_sector_programs > 0);
}
