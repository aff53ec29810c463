//! The memory estimate of a synthetic join (`synth::estimated_memory_bytes`, which
//! `nvmdb join run --generate` checks against the machine's memory for every combination
//! before the first runs) against the peak of the bytes generating the relations and
//! joining them holds, and that of a join over CSV tables
//! (`estimate::tables_memory_bytes`, which `nvmdb join run --r --s` checks) against the
//! peak of parsing the tables, loading and joining them, counted by this binary's global
//! allocator: the estimate is never below the peak, and at most 1.5× above it for the
//! simple hash join.
//!
//! The partitioned joins are an upper bound only: their hash table is sized for the
//! largest partition, which the estimate cannot know before the keys are drawn and takes
//! as the whole of R.

use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_join::synth::{estimated_memory_bytes, generate, SynthSpec};
use nvmdb_join::{measured_join, Algorithm, IdEncoding, JoinOptions, Layout};
use nvmdb_memory::{CacheConfig, CachedMemory, FlatMemory, Memory};
use peak_alloc::PeakAlloc;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// Generates the relations into `mem` and joins them, as `nvmdb join run` does.
fn join_in<M: Memory>(mut mem: M, spec: &SynthSpec, options: &JoinOptions) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let (r, s) = generate(&mut mem, spec, &mut rng).unwrap();
    measured_join(&mut mem, &r, &s, options).unwrap();
}

/// One measurement at a time: the allocator's peak is the whole process's.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The bytes a join held at its peak, beyond what was held before.
fn measured_peak(cached: bool, spec: &SynthSpec, options: &JoinOptions) -> u64 {
    let _alone = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    // The CLI's PCM (64 GiB, allocated as it is written).
    let pcm = Pcm::new(PcmConfig::new(64 << 30)).unwrap();
    if cached {
        join_in(CachedMemory::cidr2011(pcm), spec, options);
    } else {
        join_in(FlatMemory::new(pcm), spec, options);
    }
    (ALLOCATOR.peak_usage() - before) as u64
}

#[test]
fn the_estimate_holds_the_measured_peak_within_one_and_a_half_times() {
    use Algorithm::{CachePartitioning, Simple, VirtualPartitioning};
    // (cached, algorithm, layout, record bytes, matches per R row, whether within 1.5×)
    let cases = [
        (true, Simple, Layout::Row, 20, 1, true),
        (false, Simple, Layout::Row, 20, 1, true),
        (true, Simple, Layout::Column, 64, 2, true),
        (true, Simple, Layout::Row, 200, 4, true),
        (true, CachePartitioning, Layout::Row, 20, 1, false),
        (true, CachePartitioning, Layout::Column, 64, 1, false),
        (true, VirtualPartitioning, Layout::Row, 20, 1, false),
        (false, VirtualPartitioning, Layout::Column, 8, 2, false),
    ];
    let cache = CacheConfig::cidr2011();
    let mut failures = Vec::new();
    for (cached, algorithm, layout, record_bytes, match_per_r, tight) in cases {
        let spec = SynthSpec { r_bytes: 4 << 20, record_bytes, match_per_r, layout };
        let options =
            JoinOptions { algorithm, cache_bytes: 8 << 20, id_encoding: IdEncoding::Delta16, collect_pairs: false };
        let peak = measured_peak(cached, &spec, &options);
        let estimate = estimated_memory_bytes(&spec, &options, cached.then_some(&cache));
        let ratio = estimate as f64 / peak as f64;
        let memory = if cached { "cached" } else { "flat" };
        println!(
            "{memory} {} {layout:?} {record_bytes} B ×{match_per_r}: peak {peak} B, estimate {estimate} B ({ratio:.2}×)",
            algorithm.name()
        );
        if ratio < 1.0 || (tight && ratio > 1.5) {
            failures
                .push(format!("{memory} {} {layout:?} {record_bytes} B ×{match_per_r}: {ratio:.2}×", algorithm.name()));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}

/// A CSV table of `rows` rows and `columns` columns, `c0` to `c{columns - 1}`, whose
/// column `key` holds keys drawn from `0..keys` and the others random values.
fn csv_text(rows: u64, columns: usize, key: usize, keys: u64, seed: u64) -> String {
    use rand::Rng;
    use std::fmt::Write;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut text = (0..columns).map(|c| format!("c{c}")).collect::<Vec<_>>().join(",");
    text.push('\n');
    for _ in 0..rows {
        for c in 0..columns {
            let value = if c == key { rng.gen_range(0..keys) } else { rng.gen::<u64>() };
            let _ = write!(text, "{}{value}", if c == 0 { "" } else { "," });
        }
        text.push('\n');
    }
    text
}

/// Parses both tables as sized by a first reading, loads them into `mem` and joins them,
/// as `nvmdb join run --r --s` does.
fn join_tables_in<M: Memory>(
    mut mem: M,
    texts: (&str, &str),
    keys: (usize, usize),
    layout: Layout,
    options: &JoinOptions,
) {
    use nvmdb_join::csv::{parse_csv, shape_of};
    use nvmdb_join::StoredRelation;
    let table = |text: &str| parse_csv(text.as_bytes(), Some(shape_of(text.as_bytes()).unwrap().rows)).unwrap();
    let (r_table, s_table) = (table(texts.0), table(texts.1));
    let r = StoredRelation::load(&mut mem, &r_table, layout, keys.0).unwrap();
    let s = StoredRelation::load(&mut mem, &s_table, layout, keys.1).unwrap();
    measured_join(&mut mem, &r, &s, options).unwrap();
}

#[test]
fn a_join_over_csv_tables_holds_the_estimate_within_one_and_a_half_times() {
    use nvmdb_join::csv::shape_of;
    use nvmdb_join::estimate::tables_memory_bytes;
    use Algorithm::{CachePartitioning, Simple, VirtualPartitioning};
    // (cached, algorithm, layout, R rows and columns, S rows and columns, distinct keys,
    // id encoding, whether within 1.5×)
    let cases = [
        (true, Simple, Layout::Row, (100_000, 3), (200_000, 2), 100_000, IdEncoding::Delta16, true),
        (false, Simple, Layout::Row, (100_000, 1), (100_000, 1), 1_000, IdEncoding::Delta16, true),
        (true, Simple, Layout::Column, (50_000, 8), (150_000, 4), 50_000, IdEncoding::Delta16, true),
        (false, Simple, Layout::Column, (200_000, 2), (50_000, 5), 200_000, IdEncoding::Delta16, true),
        // The partitioned joins' hash table is sized for their largest partition; the
        // estimate takes the whole of R (see above).
        (true, CachePartitioning, Layout::Row, (100_000, 3), (200_000, 2), 100_000, IdEncoding::Delta16, false),
        (false, CachePartitioning, Layout::Column, (100_000, 2), (100_000, 6), 10_000, IdEncoding::Delta16, false),
        (true, VirtualPartitioning, Layout::Row, (100_000, 3), (200_000, 2), 100_000, IdEncoding::Delta16, false),
        (false, VirtualPartitioning, Layout::Column, (100_000, 4), (100_000, 1), 100_000, IdEncoding::Plain32, false),
    ];
    let cache = CacheConfig::cidr2011();
    let mut failures = Vec::new();
    for (cached, algorithm, layout, (r_rows, r_columns), (s_rows, s_columns), keys, id_encoding, tight) in cases {
        // Alone from the tables' making on: the allocator's peak is the whole process's.
        let alone = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // The key is the last column of R and the first of S.
        let key_columns = (r_columns - 1, 0);
        let r_text = csv_text(r_rows, r_columns, key_columns.0, keys, 1);
        let s_text = csv_text(s_rows, s_columns, key_columns.1, keys, 2);
        let options = JoinOptions { algorithm, cache_bytes: 8 << 20, id_encoding, collect_pairs: false };
        let (r_shape, s_shape) = (shape_of(r_text.as_bytes()).unwrap(), shape_of(s_text.as_bytes()).unwrap());
        let estimate = tables_memory_bytes(&r_shape, &s_shape, layout, &options, cached.then_some(&cache));
        let before = ALLOCATOR.current_usage();
        ALLOCATOR.reset_peak_usage();
        let pcm = Pcm::new(PcmConfig::new(64 << 30)).unwrap();
        let texts = (r_text.as_str(), s_text.as_str());
        if cached {
            join_tables_in(CachedMemory::cidr2011(pcm), texts, key_columns, layout, &options);
        } else {
            join_tables_in(FlatMemory::new(pcm), texts, key_columns, layout, &options);
        }
        let peak = (ALLOCATOR.peak_usage() - before) as u64;
        drop((r_text, s_text, alone));
        let ratio = estimate as f64 / peak as f64;
        let memory = if cached { "cached" } else { "flat" };
        let what = format!(
            "{memory} {} {layout:?} {id_encoding:?}, R {r_rows}×{r_columns}, S {s_rows}×{s_columns}, {keys} keys",
            algorithm.name()
        );
        println!("{what}: peak {peak} B, estimate {estimate} B ({ratio:.2}×)");
        if ratio < 1.0 || (tight && ratio > 1.5) {
            failures.push(format!("{what}: {ratio:.2}×"));
        }
    }
    assert!(failures.is_empty(), "estimates off: {failures:?}");
}
