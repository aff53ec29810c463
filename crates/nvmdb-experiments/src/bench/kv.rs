//! Wall-clock speed of the IPL-P key-value engines, for `nvmdb bench`: simulated
//! operations per wall-clock second of each engine on each of the seed's benchmarks,
//! beside a `BTreeMap` running the same operations in the same run. Only benchmarks read
//! the clock; the simulation never does.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use nvmdb_kv::workload::run;
use nvmdb_kv::{Benchmark, Engine, EngineConfig, EngineKind, WorkloadSpec};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Operations a benchmark runs over `records` records: the load and the measured phase
/// (the load is the measured phase of `insert`).
pub fn operations(benchmark: Benchmark, records: u64) -> u64 {
    match benchmark {
        Benchmark::Insert => records,
        _ => 2 * records,
    }
}

/// The same operations on a `BTreeMap`: the keys inserted in random order, then `records`
/// updates or searches of random keys. Returns wall nanoseconds.
fn btreemap_ns(benchmark: Benchmark, records: u64) -> f64 {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut keys: Vec<u32> = (0..records as u32).collect();
    keys.shuffle(&mut rng);
    let start = Instant::now();
    let mut map: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    for &key in &keys {
        map.insert(key, vec![b'v'; 26]);
    }
    let mut found = 0usize;
    if benchmark != Benchmark::Insert {
        for _ in 0..records {
            let key = rng.gen_range(0..records as u32);
            match benchmark {
                Benchmark::Update => {
                    if let Some(v) = map.get_mut(&key) {
                        v[0] = v[0].wrapping_add(1);
                    }
                }
                _ => found += usize::from(map.contains_key(&key)),
            }
        }
    }
    black_box((map.len(), found));
    start.elapsed().as_nanos() as f64
}

/// Host memory [`engines`] over `records` records holds at most, bytes: one run at a time,
/// the largest of the engines' ([`nvmdb_kv::workload::estimated_memory_bytes`] of each
/// engine and benchmark as [`engines`] configures them) and the `BTreeMap`'s (a model of
/// the records, [`nvmdb_kv::workload::synced_model_bytes`], and the shuffled keys, 4 B
/// each).
pub fn estimated_memory_bytes(records: u64) -> u64 {
    Benchmark::ALL
        .into_iter()
        .flat_map(|benchmark| EngineKind::ALL.into_iter().map(move |kind| (benchmark, kind)))
        .map(|(benchmark, kind)| {
            let spec = WorkloadSpec::seed_benchmark(benchmark, records, 1);
            let map = nvmdb_kv::workload::synced_model_bytes(records, spec.value_bytes as u64)
                .saturating_add(records.saturating_mul(4));
            nvmdb_kv::workload::estimated_memory_bytes(&config(kind, records), &spec).max(map)
        })
        .fold(0, u64::max)
}

/// The configuration of `kind` [`engines`] runs over `records` records.
fn config(kind: EngineKind, records: u64) -> EngineConfig {
    EngineConfig::new(kind, records, 26)
}

/// For each benchmark, `("kv/btreemap/<benchmark>", ops, ns per op)` and then each
/// engine's `("kv/<engine>/<benchmark>", ops, ns per op)` over `records` records (the
/// seed's 26-byte values, 8 KB pages, the 1 MB pool and board timing), for the names
/// `selected` accepts.
pub fn engines(records: u64, selected: impl Fn(&str) -> bool) -> Vec<(String, u64, f64)> {
    let mut out = Vec::new();
    for benchmark in Benchmark::ALL {
        let ops = operations(benchmark, records);
        let baseline = format!("kv/btreemap/{}", benchmark.name());
        let engines: Vec<EngineKind> = EngineKind::ALL
            .into_iter()
            .filter(|k| selected(&format!("kv/{}/{}", k.name(), benchmark.name())))
            .collect();
        if engines.is_empty() {
            continue;
        }
        out.push((baseline, ops, btreemap_ns(benchmark, records) / ops as f64));
        for kind in engines {
            let mut engine = Engine::new(config(kind, records)).expect("the benchmark's configuration is valid");
            let spec = WorkloadSpec::seed_benchmark(benchmark, records, 1);
            let start = Instant::now();
            black_box(run(&mut engine, &spec, 1 << 16, &mut |_| {}).expect("the benchmark runs"));
            let ns = start.elapsed().as_nanos() as f64;
            out.push((format!("kv/{}/{}", kind.name(), benchmark.name()), ops, ns / ops as f64));
        }
    }
    out
}
