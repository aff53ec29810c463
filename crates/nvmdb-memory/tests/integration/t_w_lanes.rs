//! One simulation timed at several T_w ([`CachedMemory::time_also_at_t_w`]) against a
//! separate simulation per T_w: every report, both times and every counter included,
//! must be identical.

use crate::common;
use nvmdb_device::{Pcm, PcmConfig, PcmMetrics};
use nvmdb_memory::{CachedMemory, Memory, MemoryReport};
use proptest::prelude::*;

const CAPACITY: u64 = 1 << 21;

fn memory(t_w: u64) -> CachedMemory<Pcm> {
    let mut pcm = PcmConfig::new(CAPACITY);
    pcm.metrics = PcmMetrics { t_w_cycles: t_w, ..PcmMetrics::CIDR2011 };
    let mut memory = CachedMemory::new(Pcm::new(pcm).expect("valid PCM"), common::small_three_levels());
    // The image then covers every address the operations use; allocating is no access.
    memory.alloc(STORED_BYTES, 64).expect("room");
    memory
}

/// Bytes the operations address.
const STORED_BYTES: u64 = 1 << 20;

#[derive(Debug, Clone)]
enum Op {
    Load(u64),
    Store(u64, u64),
    Compute(u64),
    Group(Vec<u64>),
    Flush,
    Reset,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    // Addresses over 64 KiB: eight times the last level.
    ops_over(8192)
}

/// Operations on the first `words` words of memory.
fn ops_over(words: u64) -> impl Strategy<Value = Vec<Op>> {
    let word = 0u64..words;
    let op = prop_oneof![
        6 => word.clone().prop_map(|w| Op::Load(w * 8)),
        6 => (word.clone(), any::<u64>()).prop_map(|(w, v)| Op::Store(w * 8, v)),
        1 => (1u64..50).prop_map(Op::Compute),
        1 => proptest::collection::vec(word.prop_map(|w| w * 8), 1..20).prop_map(Op::Group),
        1 => Just(Op::Flush),
        1 => Just(Op::Reset),
    ];
    proptest::collection::vec(op, 1..600)
}

fn run<M: Memory>(memory: &mut M, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Load(addr) => {
                memory.load::<u64>(*addr);
            }
            Op::Store(addr, value) => memory.store(*addr, *value),
            Op::Compute(n) => memory.compute(*n),
            Op::Group(addrs) => {
                memory.begin_independent();
                for &addr in addrs {
                    memory.load::<u64>(addr);
                }
                memory.end_independent();
            }
            Op::Flush => memory.flush_all(),
            Op::Reset => memory.reset_stats(),
        }
    }
    memory.flush_all();
}

/// T_w below, at and above the device's own.
const T_WS: [u64; 5] = [230, 345, 450, 575, 690];

/// `before`, then every T_w added, a reset of the counters if `before` is not empty,
/// then `ops`: the report of the one simulation at each T_w beside that of a separate
/// simulation at that T_w (which resets its counters at the same point).
fn shared_and_fresh(device_t_w: u64, before: &[Op], ops: &[Op]) -> Vec<(MemoryReport, MemoryReport)> {
    let mut shared = memory(device_t_w);
    run(&mut shared, before);
    shared.time_also_at_t_w(&T_WS);
    if !before.is_empty() {
        shared.reset_stats();
    }
    run(&mut shared, ops);
    T_WS.iter()
        .map(|&t_w| {
            let mut fresh = memory(t_w);
            run(&mut fresh, before);
            if !before.is_empty() {
                fresh.reset_stats();
            }
            run(&mut fresh, ops);
            (shared.report_at_t_w(t_w).expect("timed"), fresh.report())
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_t_w_of_one_simulation_reports_as_its_own_simulation(ops in ops(), device in 0usize..T_WS.len()) {
        for (shared, fresh) in shared_and_fresh(T_WS[device], &[], &ops) {
            prop_assert_eq!(shared, fresh);
        }
    }

    /// Over 1 MiB, 256 pages: the DTLB (64 entries), which every T_w's time model shares,
    /// evicts pages and misses on them again.
    #[test]
    fn every_t_w_reports_as_its_own_simulation_over_more_pages_than_the_dtlb_holds(
        ops in ops_over(STORED_BYTES / 8),
        device in 0usize..T_WS.len(),
    ) {
        for (shared, fresh) in shared_and_fresh(T_WS[device], &[], &ops) {
            prop_assert_eq!(shared, fresh);
        }
    }

    #[test]
    fn t_w_added_later_count_from_the_next_reset(
        before in ops(),
        ops in ops(),
        device in 0usize..T_WS.len(),
    ) {
        for (shared, fresh) in shared_and_fresh(T_WS[device], &before, &ops) {
            prop_assert_eq!(shared, fresh);
        }
    }
}

#[test]
fn the_t_w_sweep_changes_the_times_and_nothing_else() {
    // Stores over 16 times the last level, with reads between them: write-backs queue up
    // and fetches wait behind them.
    let ops: Vec<Op> = (0..20_000u64)
        .map(|i| if i % 3 == 0 { Op::Load(i * 523 % 16_384 * 8) } else { Op::Store(i * 8 % 131_072, i) })
        .collect();
    let reports = shared_and_fresh(450, &[], &ops);
    for (shared, fresh) in &reports {
        assert_eq!(shared, fresh);
    }
    let times: Vec<(u64, u64)> = reports.iter().map(|(r, _)| (r.estimated_cycles, r.cpu.cycles)).collect();
    assert!(times.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 > w[0].1), "times rise with T_w: {times:?}");
    let counts: Vec<_> = reports.iter().map(|(r, _)| (r.pcm, r.cache_levels.clone(), r.cpu.instructions)).collect();
    assert!(counts.windows(2).all(|w| w[0] == w[1]), "counters do not depend on T_w");
    assert!(reports[0].0.pcm.lines_written > 1000, "{:?}", reports[0].0.pcm);
}

#[test]
fn t_w_added_after_a_timed_write_back_count_from_the_next_reset() {
    // Loads only: no time depends on T_w yet, so the other T_w count from the start.
    let loads: Vec<Op> = (0..500).map(|i| Op::Load(i * 8 * 97 % STORED_BYTES)).collect();
    let stores: Vec<Op> = (0..5_000).map(|i| Op::Store(i * 8 * 61 % STORED_BYTES, i)).collect();
    let mut shared = memory(450);
    run(&mut shared, &loads);
    shared.time_also_at_t_w(&[230]);
    run(&mut shared, &stores);
    let mut fresh = memory(230);
    run(&mut fresh, &loads);
    run(&mut fresh, &stores);
    assert_eq!(shared.report_at_t_w(230), Some(fresh.report()));
    // After write-backs of modified words, a T_w added now does not count until a reset.
    shared.time_also_at_t_w(&[690]);
    assert_eq!(shared.report_at_t_w(690), None);
    shared.reset_stats();
    run(&mut shared, &stores);
    let mut fresh = memory(690);
    run(&mut fresh, &loads);
    run(&mut fresh, &stores);
    fresh.reset_stats();
    run(&mut fresh, &stores);
    assert_eq!(shared.report_at_t_w(690), Some(fresh.report()));
}

#[test]
fn only_the_t_w_asked_for_are_reported() {
    let mut m = memory(450);
    m.time_also_at_t_w(&[230, 450]);
    m.store(0u64, 1u64);
    assert!(m.report_at_t_w(450).is_some() && m.report_at_t_w(230).is_some());
    assert_eq!(m.report_at_t_w(690), None);
}
