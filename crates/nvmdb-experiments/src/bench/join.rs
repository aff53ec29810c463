//! Wall-clock speed of PCM as disk (the thesis's DRAM page pool over PCM in storage mode),
//! for `nvmdb bench`, each beside a baseline in plain memory measured in the same run.
//! Only benchmarks read the clock; the simulation never does.

use std::hint::black_box;
use std::time::Instant;

use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_join::buffered::{BufferedMemory, PAGE_BYTES};
use nvmdb_join::ssb::{run_query, Query, ResultColumns, Ssb, StoredSsb};
use nvmdb_join::{Algorithm, IdEncoding, JoinOptions, Layout};
use nvmdb_memory::{Memory, NativeMemory};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Pages the page-fault benchmark cycles through, twice its pool's frames, so that every
/// touch misses.
const FAULT_PAGES: u64 = 32;

/// `("pcm-as-disk/page-fault", ops, ns per op)`: `ops` touches of pages in turn over a pool
/// of half as many frames, each storing one 8-byte word, so that each touch reads a page
/// from PCM and writes a dirty page back (one word of it changed); counted every cell.
pub fn page_fault_ns(ops: u64) -> f64 {
    let pcm = Pcm::new(PcmConfig::new(FAULT_PAGES * PAGE_BYTES)).expect("a valid device");
    let mut mem = BufferedMemory::new(pcm, FAULT_PAGES / 2 * PAGE_BYTES);
    let start = Instant::now();
    for i in 0..ops {
        let page = i % FAULT_PAGES;
        mem.store::<u64>(page * PAGE_BYTES + (i / FAULT_PAGES % 512) * 8, i);
    }
    mem.flush_all();
    black_box(mem.report());
    start.elapsed().as_nanos() as f64 / ops as f64
}

/// `("page-copy/native", ops, ns per op)`: the physical limit of a page fault in plain
/// memory: per touch, one page copied in and one page compared word by word against the
/// copy it replaces (XOR and popcount) and copied out.
pub fn page_copy_native_ns(ops: u64) -> f64 {
    let words = usize::try_from(PAGE_BYTES / 8).expect("a page's words fit usize");
    let mut store: Vec<Vec<u64>> = (0..FAULT_PAGES).map(|_| vec![0u64; words]).collect();
    let mut frame = vec![0u64; words];
    let mut bits = 0u64;
    let start = Instant::now();
    for i in 0..ops {
        let page = usize::try_from(i % FAULT_PAGES).expect("small");
        frame.copy_from_slice(&store[page]);
        frame[usize::try_from(i / FAULT_PAGES % 512).expect("small")] = i;
        let old = &mut store[page];
        bits += old.iter().zip(&frame).map(|(a, b)| u64::from((a ^ b).count_ones())).sum::<u64>();
        old.copy_from_slice(&frame);
    }
    black_box(bits);
    start.elapsed().as_nanos() as f64 / ops as f64
}

/// The SSB database of the ssb benchmarks: scale factor 0.0005 (thesis-hashjoin's quick
/// multi-user size), seed 1.
fn bench_ssb() -> Ssb {
    Ssb::generate(0.0005, &mut Xoshiro256PlusPlus::seed_from_u64(1))
}

/// Loads the database in the column layout and runs query Q1 with the modified join;
/// returns the LINEORDER rows (the operations).
fn load_and_join<M: Memory>(mem: &mut M, ssb: &Ssb, cache_bytes: u64) -> u64 {
    let stored = StoredSsb::load(mem, ssb, Layout::Column).expect("the database fits");
    let options = JoinOptions {
        algorithm: Algorithm::VirtualPartitioning,
        cache_bytes,
        id_encoding: IdEncoding::Plain32,
        collect_pairs: true,
    };
    let run = run_query(mem, ssb, &stored, Query::Q1, &options, ResultColumns::Used, |_| {}).expect("the query runs");
    black_box(run.result_rows);
    ssb.lineorder.rows()
}

/// `[("pcm-as-disk/ssb-load-join", ops, ns per op), ("native/ssb-load-join", ...)]`: the
/// column-store SSB database at scale factor 0.0005 loaded and query Q1 run with the
/// modified join, with PCM as disk behind a 16-page DRAM pool (thesis-hashjoin's smallest
/// pool, where the load touches more pages than the pool holds), then the same in plain
/// memory; the operations are the LINEORDER rows.
pub fn ssb_load_join() -> [(String, u64, f64); 2] {
    let ssb = bench_ssb();
    let pool_bytes = 16 * PAGE_BYTES;
    let start = Instant::now();
    let pcm = Pcm::new(PcmConfig::new(4 << 30)).expect("a valid device");
    let ops = load_and_join(&mut BufferedMemory::new(pcm, pool_bytes), &ssb, pool_bytes);
    let disk_ns = start.elapsed().as_nanos() as f64;
    let start = Instant::now();
    load_and_join(&mut NativeMemory::new(4 << 30), &ssb, pool_bytes);
    let native_ns = start.elapsed().as_nanos() as f64;
    [
        ("pcm-as-disk/ssb-load-join".to_string(), ops, disk_ns / ops as f64),
        ("native/ssb-load-join".to_string(), ops, native_ns / ops as f64),
    ]
}
