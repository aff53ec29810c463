//! Every algorithm, layout and ID encoding returns exactly the pairs of a nested-loop
//! join, on random small relations with duplicate keys.

use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_join::{hash_join, Algorithm, Column, IdEncoding, JoinOptions, Layout, StoredRelation, Table};
use nvmdb_memory::{CacheConfig, CacheLevelConfig, CachedMemory, Memory, NativeMemory};
use proptest::prelude::*;

fn nested_loop(r: &Table, r_key: usize, s: &Table, s_key: usize) -> Vec<(u64, u64)> {
    let mut pairs = Vec::new();
    for (i, rk) in r.columns[r_key].values.iter().enumerate() {
        for (j, sk) in s.columns[s_key].values.iter().enumerate() {
            if rk == sk {
                pairs.push((i as u64, j as u64));
            }
        }
    }
    pairs
}

fn table(widths: &[u32], rows: &[Vec<u64>]) -> Table {
    let columns = widths
        .iter()
        .enumerate()
        .map(|(c, &w)| {
            let mask = if w == 8 { u64::MAX } else { (1u64 << (8 * w)) - 1 };
            Column { name: format!("c{c}"), width_bytes: w, values: rows.iter().map(|row| row[c] & mask).collect() }
        })
        .collect();
    Table { columns }
}

/// A tiny cache (and tiny C) so that the partitioned joins use many partitions.
fn tiny_cached() -> CachedMemory {
    let config = CacheConfig {
        levels: vec![
            CacheLevelConfig { size_bytes: 1 << 10, ways: 2, latency_cycles: 4 },
            CacheLevelConfig { size_bytes: 4 << 10, ways: 4, latency_cycles: 39 },
        ],
        ranks: 2,
        write_queue: 4,
    };
    CachedMemory::new(Pcm::new(PcmConfig::new(1 << 24)).unwrap(), config)
}

fn run<M: Memory>(
    mem: &mut M,
    r: &Table,
    rk: usize,
    s: &Table,
    sk: usize,
    layout: Layout,
    options: &JoinOptions,
) -> (Vec<(u64, u64)>, u64) {
    let rs = StoredRelation::load(mem, r, layout, rk).unwrap();
    let ss = StoredRelation::load(mem, s, layout, sk).unwrap();
    let mut out = hash_join(mem, &rs, &ss, options).unwrap();
    // A second join in the same memory reuses freed (dirty) memory and must agree.
    let again = hash_join(mem, &rs, &ss, options).unwrap();
    assert_eq!((again.matches, again.checksum), (out.matches, out.checksum));
    assert_eq!(out.matches, out.pairs.len() as u64);
    out.pairs.sort_unstable();
    (out.pairs, out.checksum)
}

fn relation_strategy() -> impl Strategy<Value = (Vec<u32>, usize, Vec<Vec<u64>>)> {
    (prop::collection::vec(prop::sample::select(vec![1u32, 2, 4, 8]), 1..4), 0usize..3).prop_flat_map(
        |(widths, key)| {
            let key = key % widths.len();
            let n = widths.len();
            // Keys from a small domain so that duplicates and misses are common.
            let row = prop::collection::vec(0u64..6, n..=n).prop_map(move |mut v| {
                for (c, x) in v.iter_mut().enumerate() {
                    if c != key {
                        *x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    }
                }
                v
            });
            (Just(widths), Just(key), prop::collection::vec(row, 0..40))
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_join_equals_nested_loop((rw, rk, rrows) in relation_strategy(), (sw, sk, srows) in relation_strategy(), cache_bytes in prop::sample::select(vec![64u64, 512, 1 << 20])) {
        let r = table(&rw, &rrows);
        let s = table(&sw, &srows);
        let mut expected = nested_loop(&r, rk, &s, sk);
        expected.sort_unstable();
        for layout in [Layout::Row, Layout::Column] {
            let mut checksums = Vec::new();
            for algorithm in Algorithm::ALL {
                for id_encoding in [IdEncoding::Delta16, IdEncoding::Plain32] {
                    let options = JoinOptions { algorithm, cache_bytes, id_encoding, collect_pairs: true };
                    let (native, sum) = run(&mut NativeMemory::new(1 << 24), &r, rk, &s, sk, layout, &options);
                    prop_assert_eq!(&native, &expected, "{:?} {:?} native", algorithm, layout);
                    let (cached, cached_sum) = run(&mut tiny_cached(), &r, rk, &s, sk, layout, &options);
                    prop_assert_eq!(&cached, &expected, "{:?} {:?} cached", algorithm, layout);
                    prop_assert_eq!(sum, cached_sum);
                    checksums.push(sum);
                }
            }
            // Within a layout, the result records read are the same whatever the algorithm.
            prop_assert!(checksums.windows(2).all(|w| w[0] == w[1]));
        }
    }
}
