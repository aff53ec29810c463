//! The memory estimates `nvmdb envy run` and `nvmdb envy replay` check against the
//! machine's memory before they start (`EnvyConfig::estimated_memory_bytes`, and for a
//! replay `AckModel::estimated_memory_bytes` beside it) against the peak of the bytes a
//! run holds, counted by this binary's global allocator: the estimate is never below the
//! peak and at most 1.5× above it.

use nvmdb_envy::tpca::{accounts_to_fill, Tpca, TpcaConfig};
use nvmdb_envy::verify::AckModel;
use nvmdb_envy::workload::{self, Bimodal};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig};
use peak_alloc::PeakAlloc;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// The system the CLI builds for `flash_mb` MiB of flash at utilisation `u`: 64 segments
/// of 256 B pages, an SRAM buffer of 1/256 of the flash, one spare segment.
fn cli_config(flash_mb: u64, u: f64, keep_page_bytes: bool, cleaning: CleaningPolicy) -> EnvyConfig {
    let logical_pages = ((flash_mb << 20) as f64 * u).ceil() as u64 / 256;
    let flash_pages = (logical_pages as f64 / u).ceil() as u64;
    let per_segment = u32::try_from(flash_pages.div_ceil(64)).unwrap();
    let mut config = EnvyConfig::small(64, per_segment, 8, u);
    config.logical_pages = logical_pages;
    config.keep_page_bytes = keep_page_bytes;
    config.cleaning = cleaning;
    config.spare_segments = 1;
    config.buffer_pages = u32::try_from((config.flash_pages() / 256).max(8)).unwrap();
    config.flush_threshold_pages = config.buffer_pages - (config.buffer_pages / 8).max(1);
    config.validate().unwrap();
    config
}

/// What a run does.
#[derive(Debug, Clone, Copy)]
enum Run {
    /// `envy run --workload uniform|bimodal`: fill, a turnover of warm-up, `turnovers`
    /// more measured.
    Updates(Bimodal, u64),
    /// `envy run --workload tpca`: load, age, `transactions` transactions.
    Tpca(u64),
    /// `envy replay`: the system and its model, `writes` one-page writes at random pages,
    /// eight to a transaction.
    Replay(u64),
}

/// The bytes a run held at its peak, beyond what was held before.
fn measured_peak(config: &EnvyConfig, run: Run) -> u64 {
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut envy = Envy::format(*config).unwrap();
        match run {
            Run::Updates(dist, turnovers) => {
                workload::fill(&mut envy).unwrap();
                workload::update(&mut envy, dist, config.flash_pages() * (1 + turnovers), &mut rng).unwrap();
            }
            Run::Tpca(transactions) => {
                let template = TpcaConfig::STANDARD;
                let tpca =
                    TpcaConfig { accounts: accounts_to_fill(config.logical_bytes(), 0.95, &template), ..template };
                let mut db = Tpca::load(envy, &tpca, &mut rng).unwrap();
                db.age(config.flash_pages() * 2, &mut rng);
                db.run(50.0, transactions, transactions, &mut rng).unwrap();
            }
            Run::Replay(writes) => {
                let page = u64::from(config.page_bytes);
                let mut model = AckModel::new(config.logical_bytes() as usize, page as usize);
                let mut data = vec![0u8; page as usize];
                for i in 0..writes {
                    if i % 8 == 0 {
                        envy.begin().unwrap();
                        model.begin();
                    }
                    rng.fill(&mut data[..]);
                    let addr = rng.gen_range(0..config.logical_pages) * page;
                    envy.write(addr, &data).unwrap();
                    model.write(addr, &data);
                    if i % 8 == 7 {
                        envy.commit().unwrap();
                        model.commit();
                    }
                }
            }
        }
    }
    (ALLOCATOR.peak_usage() - before) as u64
}

#[test]
fn the_estimate_holds_the_measured_peak_within_one_and_a_half_times() {
    let hybrid = CleaningPolicy::Hybrid { partition_segments: 8 };
    let bimodal = Bimodal { hot_access: 0.9, hot_data: 0.1 };
    let cases = [
        (32, 0.8, true, hybrid, Run::Updates(Bimodal::UNIFORM, 1)),
        (32, 0.8, false, hybrid, Run::Updates(Bimodal::UNIFORM, 1)),
        (32, 0.5, true, CleaningPolicy::Fifo, Run::Updates(bimodal, 1)),
        (64, 0.9, false, CleaningPolicy::Greedy, Run::Updates(bimodal, 1)),
        (32, 0.8, true, hybrid, Run::Tpca(2_000)),
        (32, 0.8, true, hybrid, Run::Replay(100_000)),
    ];
    let mut failures = Vec::new();
    for (flash_mb, u, keep_page_bytes, cleaning, run) in cases {
        let config = cli_config(flash_mb, u, keep_page_bytes, cleaning);
        let peak = measured_peak(&config, run);
        let mut estimate = config.estimated_memory_bytes();
        if let Run::Replay(_) = run {
            estimate += AckModel::estimated_memory_bytes(&config);
        }
        let ratio = estimate as f64 / peak as f64;
        println!(
            "{flash_mb} MiB u={u} page bytes {keep_page_bytes} {cleaning:?} {run:?}: peak {peak} B, estimate {estimate} B ({ratio:.2}×)"
        );
        if !(1.0..=1.5).contains(&ratio) {
            failures.push(format!("{flash_mb} MiB u={u} {keep_page_bytes} {run:?}: {ratio:.2}×"));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}
