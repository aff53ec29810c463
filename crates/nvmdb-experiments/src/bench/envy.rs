//! Wall-clock speed of eNVy as a `Memory` against `NativeMemory`, for `nvmdb bench`. Only
//! benchmarks read the clock; the simulation never does.

use std::hint::black_box;
use std::time::Instant;

use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig, EnvyMemory};
use nvmdb_memory::{Memory, NativeMemory};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A random 70/30 mix of 8 B loads and stores over `words` words from `base`.
fn random_mix<M: Memory>(memory: &mut M, base: u64, words: u64, ops: u64) -> u64 {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut sum = 0u64;
    for i in 0..ops {
        let addr = base + 8 * rng.gen_range(0..words);
        if rng.gen_ratio(7, 10) {
            sum = sum.wrapping_add(memory.load::<u64>(addr));
        } else {
            memory.store::<u64>(addr, i);
        }
    }
    sum
}

/// Nanoseconds per operation of the random mix over a `mib`-MiB working set on eNVy
/// (80 % utilisation, hybrid cleaning, a 1/256 buffer; each page written once first, not
/// timed) and on native memory: `[("envy-memory-random-mix/envy", ops, ns), (…/native, ops,
/// ns)]`.
pub fn memory_random_mix(ops: u64, mib: u64) -> [(String, u64, f64); 2] {
    let bytes = mib << 20;
    let words = bytes / 8;
    let mut config = EnvyConfig::small(64, (bytes / 256 * 5 / 4 / 64).max(2) as u32, 8, 0.8);
    config.logical_pages = bytes / 256 + 1;
    config.buffer_pages = (config.flash_pages() / 256).max(8) as u32;
    config.flush_threshold_pages = config.buffer_pages - config.buffer_pages / 8;
    config.cleaning = CleaningPolicy::Hybrid { partition_segments: 8 };
    let envy = Envy::format(config).expect("the benchmark's configuration is valid");
    let mut envy = EnvyMemory::new(envy);
    let mut native = NativeMemory::new(bytes * 2);
    [("envy", &mut envy as &mut dyn DynMemory), ("native", &mut native)].map(|(name, memory)| {
        let base = memory.setup(bytes);
        let start = Instant::now();
        black_box(memory.mix(base, words, ops));
        (format!("envy-memory-random-mix/{name}"), ops, start.elapsed().as_nanos() as f64 / ops as f64)
    })
}

/// The two memories behind one interface, each call monomorphised inside.
trait DynMemory {
    fn setup(&mut self, bytes: u64) -> u64;
    fn mix(&mut self, base: u64, words: u64, ops: u64) -> u64;
}

impl<M: Memory> DynMemory for M {
    fn setup(&mut self, bytes: u64) -> u64 {
        let base = self.alloc(bytes, 256).expect("the benchmark fits");
        for addr in (base..base + bytes).step_by(256) {
            self.store::<u64>(addr, addr);
        }
        base
    }
    fn mix(&mut self, base: u64, words: u64, ops: u64) -> u64 {
        random_mix(self, base, words, ops)
    }
}
