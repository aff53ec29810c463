//! Differential tests of the three log-based buffer schemes (IPL, d-PRAM, PCM log)
//! against a plain map: random writes (small edits and whole-page rewrites), reads and
//! trims in bytes mode on a small geometry; every logical page's bytes and the
//! invariants are checked along the way and at the end.

use std::collections::BTreeMap;

use nvmdb_device::PageData;
use nvmdb_flash::config::{BufferKind, BufferSection, FlashSection, FtlSection, SsdConfig};
use nvmdb_flash::dpram::DpramStore;
use nvmdb_flash::ipl::IplStore;
use nvmdb_flash::log_common::SchemeParams;
use nvmdb_flash::pcm_log::PcmLogStore;
use nvmdb_flash::PageStore;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const PAGE: usize = 4096;

fn small_config(kind: BufferKind) -> SsdConfig {
    let base = SsdConfig::default();
    SsdConfig {
        content: nvmdb_device::PageContent::Bytes,
        flash: FlashSection {
            packages: 1,
            planes_per_package: 2,
            blocks_per_plane: 12,
            pages_per_block: 16,
            ..base.flash
        },
        ftl: FtlSection { overprovision: 0.2, ..base.ftl },
        buffer: BufferSection { kind, pcm_mb: 1, ..base.buffer },
        ..base
    }
}

fn build(kind: BufferKind, pcm_bytes: Option<u64>) -> Box<dyn PageStore> {
    let config = small_config(kind);
    let mut params = SchemeParams::from_config(&config);
    if let Some(bytes) = pcm_bytes {
        params.pcm_bytes = bytes;
    }
    match kind {
        BufferKind::Ipl => Box::new(IplStore::with_params(&params).unwrap()),
        BufferKind::Dpram => Box::new(DpramStore::with_params(&params).unwrap()),
        _ => Box::new(PcmLogStore::with_params(&params).unwrap()),
    }
}

fn erased() -> Vec<u8> {
    vec![0xFF; PAGE]
}

fn run(kind: BufferKind, pcm_bytes: Option<u64>, seed: u64, ops: usize) {
    let mut store = build(kind, pcm_bytes);
    let pages = store.logical_pages();
    let mut model: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut now = 0u64;
    for step in 0..ops {
        let lpn = rng.gen_range(0..pages);
        match rng.gen_range(0..10) {
            0..=5 => {
                let mut bytes = model.get(&lpn).cloned().unwrap_or_else(erased);
                if rng.gen_bool(0.15) {
                    rng.fill(&mut bytes[..]);
                } else {
                    for _ in 0..rng.gen_range(1..4) {
                        let len = rng.gen_range(1..120);
                        let at = rng.gen_range(0..PAGE - len);
                        rng.fill(&mut bytes[at..at + len]);
                    }
                }
                now = store.write(lpn, PageData::Bytes(bytes.clone()), now).unwrap();
                model.insert(lpn, bytes);
            }
            6..=8 => {
                let (data, t) = store.read(lpn, now).unwrap();
                now = t;
                let expected = model.get(&lpn).cloned().unwrap_or_else(erased);
                assert!(data == PageData::Bytes(expected), "{kind:?} step {step}: page {lpn} differs");
            }
            _ => {
                now = store.trim(lpn, now).unwrap();
                model.remove(&lpn);
            }
        }
        if step % 97 == 0 {
            store.check_invariants().unwrap_or_else(|e| panic!("{kind:?} step {step}: {e}"));
        }
    }
    for lpn in 0..pages {
        let (data, _) = store.read(lpn, now).unwrap();
        let expected = model.get(&lpn).cloned().unwrap_or_else(erased);
        assert!(data == PageData::Bytes(expected), "{kind:?} final: page {lpn} differs");
    }
    store.check_invariants().unwrap();
    let stats = store.stats();
    assert!(stats.merges > 0, "{kind:?}: the run should force merges");
    // A merge erases the old block unless the logical block had none yet.
    assert!(stats.block_erases <= stats.merges && stats.block_erases > 0, "{kind:?}: {stats:?}");
    assert_eq!(stats.sequential_flushes, stats.merges);
}

#[test]
fn pcm_log_matches_a_map() {
    for seed in 0..3 {
        run(BufferKind::PcmLog, None, seed, 3000);
    }
}

#[test]
fn pcm_log_with_few_pblocks_replaces_victims() {
    // Two P-blocks for 19 logical blocks: case 2 replacement runs constantly.
    run(BufferKind::PcmLog, Some(2 * 16 * 512 + 64), 11, 3000);
}

#[test]
fn ipl_matches_a_map() {
    for seed in 0..3 {
        run(BufferKind::Ipl, None, seed, 3000);
    }
}

#[test]
fn dpram_matches_a_map() {
    for seed in 0..3 {
        run(BufferKind::Dpram, None, seed, 3000);
    }
}

#[test]
fn dpram_with_a_tiny_pool_merges_oldest() {
    run(BufferKind::Dpram, Some(4096), 5, 3000);
}

/// Fingerprint mode with the synthetic generator's changed ranges: reads return the last
/// content id; small deltas are logged (PCM cells written), not merged.
#[test]
fn fingerprint_mode_logs_small_deltas() {
    let mut config = small_config(BufferKind::PcmLog);
    config.content = nvmdb_device::PageContent::Fingerprint;
    let params = SchemeParams::from_config(&config);
    let mut pcm_log = PcmLogStore::with_params(&params).unwrap();
    let mut dpram = DpramStore::with_params(&params).unwrap();
    let mut ipl = IplStore::with_params(&params).unwrap();
    let mut model = BTreeMap::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    for step in 0..2000u64 {
        let lpn = rng.gen_range(0..ipl.logical_pages());
        let delta = [(rng.gen_range(0..3900), rng.gen_range(20..120))];
        let changed: &[(u32, u32)] = if model.contains_key(&lpn) { &delta } else { &[(0, 4096)] };
        let data = PageData::Fingerprint(step + 1);
        pcm_log.write_update(lpn, data.clone(), Some(changed), 0).unwrap();
        dpram.write_update(lpn, data.clone(), Some(changed), 0).unwrap();
        ipl.write_update(lpn, data, Some(changed), 0).unwrap();
        model.insert(lpn, step + 1);
    }
    for (&lpn, &id) in &model {
        let stores: [&mut dyn PageStore; 3] = [&mut pcm_log, &mut dpram, &mut ipl];
        for store in stores {
            assert_eq!(store.read(lpn, 0).unwrap().0, PageData::Fingerprint(id), "page {lpn}");
        }
    }
    for store in [&pcm_log as &dyn PageStore, &dpram, &ipl] {
        store.check_invariants().unwrap();
        let stats = store.stats();
        assert!(stats.merges < stats.host_page_writes / 2, "{stats:?}");
    }
    assert!(pcm_log.stats().pcm_bits_written > 0 && dpram.stats().pcm_bits_written > 0);
    assert!(ipl.stats().flash_sector_programs > 0);
}
