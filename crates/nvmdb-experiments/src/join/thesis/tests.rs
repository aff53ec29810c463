//! `thesis-hashjoin`'s tests: the fetch split, the parts on one thread or several, and
//! the loads' specs.

use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_memory::{CachedMemory, Memory};

use super::load::{run_loads, LoadPool, LoadSetup, LoadSpec};
use super::record_size::FetchSplit;
use super::runs::{measure, pool_for, Mode, Pool, SingleSpec, Totals, SIZE_SWEEP_POOL_FRACTION, VARIANTS};
use super::single::{load_groups, run_singles, single_specs};
use super::*;

#[test]
fn fetch_split_counts_a_stores_write_allocate_fill_and_not_a_loads_fetch() {
    let pcm = Pcm::new(PcmConfig::new(1 << 20)).expect("a device");
    let machine = Machine::for_scale(Scale::Quick);
    let mut mem = FetchSplit { mem: CachedMemory::new(pcm, machine.cache.clone()), store_fetches: 0 };
    let a = mem.alloc(4096, 64).expect("memory");
    mem.reset_stats();
    mem.store::<u64>(a, 1);
    assert_eq!((mem.fetched(), mem.store_fetches), (1, 1), "a store to an uncached line fetches it");
    let _ = mem.load::<u64>(a + 128);
    assert_eq!((mem.fetched(), mem.store_fetches), (2, 1), "a load's fetch is not a store's");
    mem.store::<u64>(a + 8, 2);
    mem.store::<u64>(a + 136, 3);
    assert_eq!((mem.fetched(), mem.store_fetches), (2, 1), "stores to cached lines fetch nothing");
    mem.reset_stats();
    assert_eq!((mem.fetched(), mem.store_fetches), (0, 0));
}

#[test]
fn runs_without_users_are_listed_once_and_give_the_same_counters_on_any_number_of_threads() {
    let ctx = RunContext::new(Scale::Quick, 3);
    let base = Ssb::generate(0.0005, &mut ctx.rng(1));
    let pool_bytes = pool_for(&base, SIZE_SWEEP_POOL_FRACTION);
    let specs = single_specs(&base, &[1], pool_bytes);
    assert!(specs.iter().enumerate().all(|(i, s)| !specs[..i].contains(s)), "each run listed once");
    // The pool sweep's 1/16 pool is the size sweep's: its four runs are not repeated.
    let sweep_pool = SingleSpec::disk(1, Layout::Row, Algorithm::CachePartitioning, Pool::of(pool_bytes));
    assert_eq!(specs.iter().filter(|s| **s == sweep_pool).count(), 1);
    let machine = Machine::for_scale(Scale::Quick);
    let small_l3 = Machine::with_last_level_shrunk(&machine, 4);
    // A load shared by four runs (PCM as disk: both joins, partitions sized to half the
    // pool, every attribute read), one by two (PCM as main memory), and a run alone.
    let some: Vec<SingleSpec> = specs
        .iter()
        .copied()
        .filter(|s| (s.layout == Layout::Column && s.pool.bytes == pool_bytes) || s.small_l3)
        .chain([SingleSpec::disk(1, Layout::Row, Algorithm::VirtualPartitioning, Pool::of(pool_bytes))])
        .collect();
    let sizes: Vec<usize> = load_groups(&some).iter().map(Vec::len).collect();
    assert_eq!(sizes, [4, 2, 1]);
    let run = |jobs| {
        let ctx = RunContext::new(Scale::Quick, 3).with_jobs(jobs);
        run_singles(&ctx, std::slice::from_ref(&base), (&machine, &small_l3), &some, &|| {}).expect("runs")
    };
    let one = run(1);
    assert_eq!(one, run(3));
    // Each run from a copy of the shared load gives what it gives loading by itself.
    for (spec, totals) in some.iter().zip(&one) {
        let m = if spec.small_l3 { &small_l3 } else { &machine };
        let alone = measure(&base, &[*spec], m).expect("runs");
        assert_eq!(*totals, alone[0], "{spec:?}");
        assert!(totals.pcm.lines_read > 0);
    }
    // The runs sharing a load differ: each measured its own join.
    let shared: Vec<&Totals> = load_groups(&some)[0].iter().map(|&i| &one[i]).collect();
    assert!(shared.iter().enumerate().all(|(i, t)| !shared[..i].contains(t)));
}

#[test]
fn multi_user_runs_give_the_same_counters_on_any_number_of_threads() {
    let ctx = RunContext::new(Scale::Quick, 3);
    let setup = LoadSetup::new(&ctx, &[1]);
    let specs: Vec<LoadSpec> = VARIANTS
        .iter()
        .map(|&(layout, algorithm)| LoadSpec {
            size_factor: 1,
            mode: Mode::Disk,
            layout,
            algorithm,
            users: 2,
            pool: LoadPool::Figure510,
        })
        .chain([LoadSpec {
            size_factor: 1,
            mode: Mode::MainMemory,
            layout: Layout::Row,
            algorithm: Algorithm::VirtualPartitioning,
            users: 2,
            pool: LoadPool::Figure510,
        }])
        .collect();
    let run = |jobs| {
        run_loads(&RunContext::new(Scale::Quick, 3).with_jobs(jobs), &setup, &specs, &|| {}).expect("the runs succeed")
    };
    let one = run(1);
    assert_eq!(one, run(3));
    // Every variant saw the same transactions: the same query results, and real work.
    assert!(one.iter().all(|t| t.result_rows == one[0].result_rows && t.pcm.bits_written > 0));
    // Two users run each query twice: twice the join work of one user.
    let single = run_loads(&ctx, &setup, &[LoadSpec { users: 1, ..specs[0] }], &|| {}).expect("runs");
    assert!(one[0].pcm.lines_read > single[0].pcm.lines_read * 3 / 2);
}
