//! Cache model checks on a hand-traced sequence, and differential tests of every
//! `Memory` against plain RAM.

use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_memory::{CacheConfig, CacheLevelConfig, CacheLevelStats, CachedMemory, FlatMemory, Memory, NativeMemory};
use proptest::prelude::*;

/// L1: 2 lines, fully associative, 4 cycles. L2: 4 lines, fully associative, 11 cycles.
/// One rank, two write-queue entries; T_l = 230, T_w = 450.
fn tiny() -> CachedMemory {
    let config = CacheConfig {
        levels: vec![
            CacheLevelConfig { size_bytes: 128, ways: 2, latency_cycles: 4 },
            CacheLevelConfig { size_bytes: 256, ways: 4, latency_cycles: 11 },
        ],
        ranks: 1,
        write_queue: 2,
    };
    CachedMemory::new(Pcm::new(PcmConfig::new(1 << 16)).unwrap(), config)
}

#[test]
fn hand_traced_sequence() {
    let mut m = tiny();
    let base = m.alloc(64 * 8, 64).unwrap();
    assert_eq!(base, 64, "heap starts at line 1");
    let line = |i: u64| base + 64 * i;
    let _: u64 = m.load(line(0)); // miss, miss, fetch: 4 + 11 + 230 = 245
    assert_eq!(m.estimated_cycles(), 245);
    m.store::<u64>(line(0), 0xFF); // L1 hit: 249, line 0 dirty
    assert_eq!(m.estimated_cycles(), 249);
    let _: u64 = m.load(line(1)); // 494
    let _: u64 = m.load(line(2)); // 739; L1 evicts dirty line 0 into L2
    let _: u64 = m.load(line(3)); // 984; L1 evicts clean line 1
    assert_eq!(m.estimated_cycles(), 984);
    assert_eq!(m.report().pcm.lines_written, 0, "dirty line 0 still cached in L2");
    // Line 4: fetch (1229), then L2 evicts line 0 (LRU, dirty): write-back of 1 word,
    // 8 bits, occupying the rank until 1229 + 450 = 1679.
    let _: u64 = m.load(line(4));
    assert_eq!(m.estimated_cycles(), 1229);
    // Line 0 again: 1229 + 4 + 11 = 1244, then wait for the rank (1679) and fetch: 1909.
    let value: u64 = m.load(line(0));
    assert_eq!(value, 0xFF);
    let r = m.report();
    assert_eq!(r.estimated_cycles, 1909);
    assert_eq!((r.pcm.lines_read, r.pcm.lines_written, r.pcm.words_written, r.pcm.bits_written), (6, 1, 1, 8));
    assert_eq!(r.cache_levels, vec![CacheLevelStats { hits: 1, misses: 6 }, CacheLevelStats { hits: 0, misses: 6 }]);
    m.flush_all();
    assert_eq!(m.report().pcm.lines_written, 1, "line 0 is clean after its reload, nothing to flush");
}

/// The recency rule of the module docs: a hit refreshes the line in the levels below, so
/// a line in use in L1 is never an inclusion victim. Here L1 keeps the hot line (it is
/// touched between every two streamed loads) while 20 other lines stream through the
/// 4-line L2. Were L2's recency updated only by L2 hits, the hot line would be L2's
/// least recently used line after 3 streamed loads, be evicted, back-invalidated from L1
/// and written back, and miss in L1 on its next store.
#[test]
fn a_line_hot_in_l1_is_no_inclusion_victim() {
    let mut m = tiny();
    let base = m.alloc(64 * 32, 64).unwrap();
    let hot = base;
    m.store::<u64>(hot, 1);
    for i in 1..=20u64 {
        let _: u64 = m.load(base + 64 * i);
        m.store::<u64>(hot, i);
    }
    let r = m.report();
    assert_eq!(r.pcm.lines_written, 0, "the hot line stayed cached");
    assert_eq!(r.cache_levels[0], CacheLevelStats { hits: 20, misses: 21 }, "every hot store hit L1");
    assert_eq!(r.pcm.lines_read, 21, "one fetch per line");
    m.flush_all();
    assert_eq!(m.report().pcm.lines_written, 1, "the hot line is written back once, at the flush");
}

#[test]
fn fetches_wait_for_writebacks_and_a_full_queue_stalls() {
    let mut m = tiny();
    let base = m.alloc(64 * 16, 64).unwrap();
    // Store one word into each of lines 0..8. Each store misses twice (15) and fetches
    // (230). From store 4 on, L2 evicts a dirty line per store: write-backs of one word
    // (450) on the single rank, which the next fetch waits for:
    //   s0..s3: 245, 490, 735, 980; s4: 1225 (write-back of line 0 until 1675)
    //   s5: 1240 -> waits to 1675 -> 1905 (write-back until 2355)
    //   s6: 1920 -> 2355 -> 2585 (until 3035);  s7: 2600 -> 3035 -> 3265 (until 3715)
    for i in 0..8 {
        m.store::<u64>(base + 64 * i, 1);
    }
    assert_eq!(m.estimated_cycles(), 3265);
    // The flush writes back lines 4..8 with one queued entry (3715) outstanding: the
    // first goes in, each later one waits for the oldest entry of the 2-entry queue:
    // 3715, then 4165, then 4615.
    m.flush_all();
    let r = m.report();
    assert_eq!(r.pcm.lines_written, 8);
    assert_eq!(r.estimated_cycles, 4615);
}

#[test]
fn sequential_writes_write_back_each_line_once() {
    let mut m = CachedMemory::cidr2011(Pcm::new(PcmConfig::new(64 << 20)).unwrap());
    let bytes = 16u64 << 20;
    let base = m.alloc(bytes, 64).unwrap();
    for addr in (base..base + bytes).step_by(8) {
        m.store::<u64>(addr, addr | 1);
    }
    m.flush_all();
    let r = m.report();
    assert_eq!(r.pcm.lines_written, bytes / 64);
    assert_eq!(r.pcm.words_written, bytes / 8);
    assert_eq!(r.pcm.lines_read, bytes / 64, "write-allocate fetches every line once");
}

#[derive(Debug, Clone)]
enum Op {
    Store(u64, u64),
    Bytes(u64, Vec<u8>),
    Load(u64),
}

fn op(span: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..span / 8, any::<u64>()).prop_map(|(i, v)| Op::Store(i * 8, v)),
        (0..span - 100, prop::collection::vec(any::<u8>(), 1..100)).prop_map(|(a, b)| Op::Bytes(a, b)),
        (0..span / 8).prop_map(|i| Op::Load(i * 8)),
    ]
}

fn small_cache() -> CacheConfig {
    CacheConfig {
        levels: vec![
            CacheLevelConfig { size_bytes: 512, ways: 2, latency_cycles: 1 },
            CacheLevelConfig { size_bytes: 2048, ways: 4, latency_cycles: 2 },
        ],
        ranks: 2,
        write_queue: 4,
    }
}

proptest! {
    #[test]
    fn every_memory_agrees_with_ram_and_flush_persists(ops in prop::collection::vec(op(8192), 1..400)) {
        let mut native = NativeMemory::new(1 << 20);
        let mut cached = CachedMemory::new(Pcm::new(PcmConfig::new(1 << 20)).unwrap(), small_cache());
        let mut flat = FlatMemory::new(Pcm::new(PcmConfig::new(1 << 20)).unwrap());
        let base = native.alloc(8192, 64).unwrap();
        prop_assert_eq!(cached.alloc(8192, 64).unwrap(), base);
        prop_assert_eq!(flat.alloc(8192, 64).unwrap(), base);
        for op in ops {
            match op {
                Op::Store(a, v) => {
                    native.store(base + a, v);
                    cached.store(base + a, v);
                    flat.store(base + a, v);
                }
                Op::Bytes(a, b) => {
                    native.write_bytes(base + a, &b);
                    cached.write_bytes(base + a, &b);
                    flat.write_bytes(base + a, &b);
                }
                Op::Load(a) => {
                    let v: u64 = native.load(base + a);
                    prop_assert_eq!(cached.load::<u64>(base + a), v);
                    prop_assert_eq!(flat.load::<u64>(base + a), v);
                }
            }
        }
        cached.flush_all();
        for line in base / 64..(base + 8192) / 64 {
            let mut expected = [0u8; 64];
            native.read_bytes(line * 64, &mut expected);
            let words = cached.device().peek_line(line);
            prop_assert_eq!(nvmdb_device::pcm::words_to_bytes(&words), expected, "cached PCM line {}", line);
            let words = flat.device().peek_line(line);
            prop_assert_eq!(nvmdb_device::pcm::words_to_bytes(&words), expected, "flat PCM line {}", line);
        }
    }
}

#[test]
fn heap_reuses_freed_blocks_and_reports_exhaustion() {
    let mut m = NativeMemory::new(4096);
    let a = m.alloc(128, 64).unwrap();
    let b = m.alloc(128, 64).unwrap();
    m.free(a, 128);
    assert_eq!(m.alloc(128, 64).unwrap(), a);
    assert_ne!(a, b);
    assert!(m.alloc(8192, 8).is_err());
}
