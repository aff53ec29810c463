//! The memory estimate of a benchmark run (`workload::estimated_memory_bytes`, which
//! `nvmdb kv run --workload --records` and `nvmdb kv demo` check against the memory
//! available before they start, and `estimated_power_loss_memory_bytes` with a power
//! cut), and of a file run (`file_run::estimated_memory_bytes`, which `nvmdb kv run --load
//! --ops` checks), against the peak of the bytes the run holds, counted by this binary's
//! global allocator: the estimate is never below the peak, and at most 1.5×
//! above it for the engines with flash where the run cycles through the flash array (the
//! estimate takes every block programmed). Where the buffer pool holds the whole tree and
//! few syncs come, the flash is written about once and holds less (2–7× less below).
//!
//! `pcm-only` is an upper bound only: its PCM holds the image slots the tree uses (two per
//! page at most, leaves half-full at worst) and wear counters that grow with each line's
//! rewrites, bounded from the operations as if spread evenly over the lines; a run fills
//! its leaves to about 70% and rewrites a few slots often (freed slots are reused first),
//! so it holds 3–5× less than that bound.

use nvmdb_kv::{workload, Benchmark, Engine, EngineConfig, EngineKind, WorkloadSpec};
use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// One measurement at a time: the allocator's peak is the whole process's.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The bytes a run held at its peak, beyond what was held before (the steps of
/// `nvmdb kv run --workload --records`).
fn measured_peak(config: &EngineConfig, spec: &WorkloadSpec) -> u64 {
    let _alone = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    {
        let mut engine = Engine::new(config.clone()).unwrap();
        workload::run(&mut engine, spec, 4096, &mut |_| {}).unwrap();
    }
    (ALLOCATOR.peak_usage() - before) as u64
}

#[test]
fn the_estimate_holds_the_measured_peak_within_one_and_a_half_times() {
    let records = 50_000;
    // (engine, page KB, buffer KB, benchmark, sync every, whether within 1.5×)
    let cases = [
        (EngineKind::FlashOnly, 8, 1024, Benchmark::Insert, None, true),
        (EngineKind::FlashOnly, 8, 1024, Benchmark::Update, Some(100), true),
        (EngineKind::FlashOnly, 1, 64, Benchmark::Insert, Some(1), true),
        (EngineKind::Ipl, 8, 1024, Benchmark::Insert, Some(100), true),
        (EngineKind::Ipl, 8, 1024, Benchmark::Search, None, true),
        (EngineKind::Ipl, 2, 16384, Benchmark::Update, Some(1), true),
        // Buffers that hold the whole tree, and no sync before the end of a phase (searches
        // change nothing): the flash is written about once, not cycled through.
        (EngineKind::Ipl, 2, 16384, Benchmark::Update, None, false),
        (EngineKind::IplP, 16, 4096, Benchmark::Search, Some(100), false),
        (EngineKind::IplP, 8, 1024, Benchmark::Insert, None, true),
        (EngineKind::IplP, 4, 256, Benchmark::Update, Some(1), true),
        (EngineKind::PcmOnly, 8, 1024, Benchmark::Insert, None, false),
        (EngineKind::PcmOnly, 8, 1024, Benchmark::Insert, Some(100), false),
        (EngineKind::PcmOnly, 64, 4096, Benchmark::Insert, Some(100), false),
        (EngineKind::PcmOnly, 1, 64, Benchmark::Update, Some(1), false),
    ];
    let mut failures = Vec::new();
    for (kind, page_kb, buffer_kb, benchmark, sync_every, tight) in cases {
        // Sized as the CLI sizes it (for 64 B values).
        let mut config = EngineConfig::new(kind, records, 64);
        config.page_bytes = page_kb * 1024;
        config.buffer_bytes = buffer_kb * 1024;
        config.size_for(records, 64);
        let spec = WorkloadSpec { sync_every, ..WorkloadSpec::seed_benchmark(benchmark, records, 1) };
        let peak = measured_peak(&config, &spec);
        let estimate = workload::estimated_memory_bytes(&config, &spec);
        let ratio = estimate as f64 / peak as f64;
        println!(
            "{} {page_kb} KB pages, {buffer_kb} KB buffer, {} sync every {sync_every:?}: peak {peak} B, estimate {estimate} B ({ratio:.2}×)",
            kind.name(),
            benchmark.name()
        );
        if ratio < 1.0 || (tight && ratio > 1.5) {
            failures.push(format!("{} {page_kb} KB {} {sync_every:?}: {ratio:.2}×", kind.name(), benchmark.name()));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}

/// With a power cut the run also keeps its models of the synced state and of the writes
/// since the last sync, and scans the recovered engine.
#[test]
fn a_power_loss_run_holds_the_estimate_within_one_and_a_half_times() {
    let records = 50_000;
    // (engine, sync every, the device write cut before)
    let cases = [
        (EngineKind::FlashOnly, None, 1_000_000),
        (EngineKind::FlashOnly, Some(100), 5_000),
        (EngineKind::Ipl, Some(10), 50_000),
        (EngineKind::IplP, Some(1), 20_000),
        (EngineKind::PcmOnly, Some(1_000), 2_000),
    ];
    let mut failures = Vec::new();
    for (kind, sync_every, cut) in cases {
        let config = EngineConfig::new(kind, records, 64);
        let spec = WorkloadSpec { sync_every, ..WorkloadSpec::seed_benchmark(Benchmark::Update, records, 1) };
        let alone = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let before = ALLOCATOR.current_usage();
        ALLOCATOR.reset_peak_usage();
        let outcome = workload::run_with_power_loss(Engine::new(config.clone()).unwrap(), &spec, cut, None);
        let cut_reached = outcome.unwrap().1.cut.is_some();
        let peak = (ALLOCATOR.peak_usage() - before) as u64;
        drop(alone);
        let estimate = workload::estimated_power_loss_memory_bytes(&config, &spec);
        let ratio = estimate as f64 / peak as f64;
        println!(
            "{} sync every {sync_every:?}, cut at write {cut} (reached: {cut_reached}): peak {peak} B, estimate {estimate} B ({ratio:.2}×)",
            kind.name()
        );
        // pcm-only's PCM is an upper bound only (see above).
        if ratio < 1.0 || (kind != EngineKind::PcmOnly && ratio > 1.5) {
            failures.push(format!("{} {sync_every:?} {cut}: {ratio:.2}×", kind.name()));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}

/// A load file of `records` records (keys `0..records` in a shuffled order) and an
/// operations file of `ops` operations: inserts of new keys, updates, deletes, gets and
/// scans of up to `scan_keys` keys in the proportions `mix` (I, U, D, G, S), and a `C`
/// line every `sync_lines` operations; values of `values.0` to `values.1` bytes.
struct Files {
    records: u32,
    ops: u32,
    mix: [u32; 5],
    scan_keys: u32,
    sync_lines: u32,
    values: (usize, usize),
}

impl Files {
    fn texts(&self) -> (Vec<u8>, Vec<u8>) {
        use rand::seq::SliceRandom;
        use rand::{Rng, SeedableRng};
        use std::fmt::Write;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let value = |rng: &mut rand_xoshiro::Xoshiro256PlusPlus| {
            let len = rng.gen_range(self.values.0..=self.values.1);
            (0..len).map(|_| char::from(rng.gen_range(b'a'..=b'z'))).collect::<String>()
        };
        let mut keys: Vec<u32> = (0..self.records).collect();
        keys.shuffle(&mut rng);
        let mut load = String::new();
        for key in keys {
            let _ = writeln!(load, "{key} {}", value(&mut rng));
        }
        let mut ops = String::new();
        let mut next_key = self.records;
        let total: u32 = self.mix.iter().sum();
        for i in 1..=self.ops {
            let known = rng.gen_range(0..next_key);
            let mut pick = rng.gen_range(0..total);
            let kind = self.mix.iter().position(|&w| {
                pick < w || {
                    pick -= w;
                    false
                }
            });
            let _ = match kind {
                Some(0) => {
                    next_key += 1;
                    writeln!(ops, "I {} {}", next_key - 1, value(&mut rng))
                }
                Some(1) => writeln!(ops, "U {known} {}", value(&mut rng)),
                Some(2) => writeln!(ops, "D {known}"),
                Some(3) => writeln!(ops, "G {known}"),
                _ => writeln!(ops, "S {known} {}", known.saturating_add(self.scan_keys - 1)),
            };
            if i % self.sync_lines == 0 {
                ops.push_str("C\n");
            }
        }
        (load.into_bytes(), ops.into_bytes())
    }
}

/// File mode (`nvmdb kv run --load --ops`, the same steps): the estimate computed from
/// the files' summaries against the peak of checking the load file, parsing the
/// operations, loading and running them.
#[test]
fn a_file_run_holds_the_estimate_within_one_and_a_half_times() {
    use nvmdb_kv::file_format::{check_load, parse_ops, summarize_load};
    use nvmdb_kv::file_run::{self, FileRunOptions};
    let (records, ops) = (20_000, 40_000);
    let plain = Files { records, ops, mix: [4, 4, 0, 2, 0], scan_keys: 1, sync_lines: 1_000, values: (26, 26) };
    let deletes = Files { mix: [3, 3, 3, 1, 0], values: (1, 64), ..plain };
    let scans = Files { mix: [4, 2, 1, 1, 2], scan_keys: 100, ..plain };
    let varied = Files { values: (1, 64), ..plain };
    // Few operations, many of them scans of most of the keys, whose answers are kept.
    let wide = Files { ops: 300, mix: [1, 1, 0, 0, 1], scan_keys: 30_000, sync_lines: 50, ..plain };
    let options = |sync_every, cut, keep_results| FileRunOptions {
        sync_every,
        power_loss_at: cut,
        power_loss_during_recovery: None,
        keep_results,
    };
    // (engine, files, options, whether within 1.5×)
    let cases = [
        (EngineKind::Ipl, &plain, options(Some(100), None, true), true),
        (EngineKind::Ipl, &deletes, options(Some(10), None, false), true),
        (EngineKind::IplP, &varied, options(Some(100), None, true), true),
        (EngineKind::IplP, &deletes, options(None, None, true), true),
        (EngineKind::FlashOnly, &scans, options(Some(10), None, true), true),
        // An upper bound: 300 operations write the flash about once, not cycled through;
        // and the kept answers' vector, grown by doubling, peaks at 1.5 to 3 times their
        // bytes, counted as 3.
        (EngineKind::FlashOnly, &wide, options(None, None, true), false),
        (EngineKind::FlashOnly, &plain, options(Some(100), Some(2_000), true), true),
        (EngineKind::IplP, &deletes, options(Some(10), Some(30_000), true), true),
        // pcm-only's PCM is an upper bound only (see above).
        (EngineKind::PcmOnly, &plain, options(Some(100), None, true), false),
        (EngineKind::PcmOnly, &deletes, options(Some(10), Some(5_000), false), false),
    ];
    let mut failures = Vec::new();
    for (kind, files, options, tight) in cases {
        // Alone from the files' making on: the allocator's peak is the whole process's.
        let alone = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (load_text, ops_text) = files.texts();
        let loaded = summarize_load(&load_text[..]).unwrap();
        let summary = file_run::summarize_ops(&ops_text[..], loaded.records, &options).unwrap();
        let n = loaded.records + summary.inserts;
        let mut config = EngineConfig::new(kind, n, 64);
        config.size_for(n, 64);
        let estimate = file_run::estimated_memory_bytes(&config, &loaded, &summary, &options);
        let before = ALLOCATOR.current_usage();
        ALLOCATOR.reset_peak_usage();
        let cut_reached = {
            check_load(&load_text[..], loaded.records).unwrap();
            let ops = parse_ops(&ops_text[..], summary.ops).unwrap();
            let mut engine = Engine::new(config.clone()).unwrap();
            let model = file_run::load::<()>(&mut engine, &load_text[..], options.power_loss_at.is_some()).unwrap();
            let outcome = file_run::run_ops(engine, &ops, &options, model, &mut |_| Ok::<(), ()>(())).unwrap();
            assert_eq!((outcome.lost_synced_ops, outcome.lost_synced_ops_at_end), (0, 0));
            outcome.cut.is_some()
        };
        let peak = (ALLOCATOR.peak_usage() - before) as u64;
        drop((load_text, ops_text, alone));
        let ratio = estimate as f64 / peak as f64;
        println!(
            "{} mix {:?}, values {:?}, {options:?} (cut reached: {cut_reached}): peak {peak} B, estimate {estimate} B ({ratio:.2}×)",
            kind.name(),
            files.mix,
            files.values,
        );
        if ratio < 1.0 || (tight && ratio > 1.5) {
            failures.push(format!("{} {:?} {options:?}: {ratio:.2}×", kind.name(), files.mix));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}
