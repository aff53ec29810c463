//! A memory rewound to a checkpoint ([`CachedMemory::rewind`]) against a fresh simulation
//! of the same steps: after a run that reads what was stored before the checkpoint and
//! writes only memory it allocates, the rewound memory runs the next such run exactly as
//! a memory that never ran the first: every report, the device's lines and wear.

use crate::common;
use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_memory::{CachedMemory, Memory, MemoryReport};
use proptest::prelude::*;

/// A small hierarchy, so that lines leave it.
fn memory() -> CachedMemory<Pcm> {
    CachedMemory::new(Pcm::new(PcmConfig::new(1 << 22)).expect("valid PCM"), common::small_three_levels())
}

/// Bytes stored before the checkpoint: 36 pages, fewer than the DTLB's 64 entries
/// less the allocations', so that both are in play.
const STORED: u64 = 36 * 4096 + 40;

#[derive(Debug, Clone)]
enum Op {
    /// A load from the stored bytes.
    LoadStored(u64),
    /// A store to, or a load from, the run's own block.
    Store(u64, u64),
    Load(u64),
    Compute(u64),
}

/// A run: the size in words of the block it allocates (another of the same size is
/// freed and allocated again between its operations), then its operations.
fn run_ops() -> impl Strategy<Value = (u64, Vec<Op>)> {
    (1u64..40_000).prop_flat_map(|words| {
        let op = prop_oneof![
            4 => (0..STORED / 8).prop_map(|w| Op::LoadStored(w * 8)),
            4 => (0..words, any::<u64>()).prop_map(|(w, v)| Op::Store(w * 8, v)),
            2 => (0..words).prop_map(|w| Op::Load(w * 8)),
            1 => (1u64..50).prop_map(Op::Compute),
        ];
        (Just(words), proptest::collection::vec(op, 1..400))
    })
}

/// Stores `before` over the stored bytes and writes every dirty line back.
fn load(memory: &mut CachedMemory<Pcm>, before: &[u64]) -> u64 {
    let base = memory.alloc(STORED, 64).expect("room");
    for (i, &value) in before.iter().enumerate() {
        memory.store(base + (i as u64 * 8) % (STORED - 8), value);
    }
    memory.flush_all();
    base
}

/// One run as a join runs: counters zeroed, a block allocated, the operations, the block
/// freed, every dirty line written back; its report.
fn run(memory: &mut CachedMemory<Pcm>, stored: u64, (words, ops): &(u64, Vec<Op>)) -> MemoryReport {
    memory.flush_all();
    memory.reset_stats();
    let scratch = memory.alloc(words * 8, 64).expect("room");
    memory.store(scratch, 1u64);
    memory.free(scratch, words * 8);
    let block = memory.alloc(words * 8, 64).expect("room");
    for op in ops {
        match *op {
            Op::LoadStored(at) => {
                memory.load::<u64>(stored + at);
            }
            Op::Store(at, value) => memory.store(block + at, value),
            Op::Load(at) => {
                memory.load::<u64>(block + at);
            }
            Op::Compute(n) => memory.compute(n),
        }
    }
    memory.free(block, words * 8);
    memory.flush_all();
    memory.report()
}

/// Every line's content and the device's wear.
fn device_state(memory: &CachedMemory<Pcm>) -> (Vec<[u64; 8]>, nvmdb_device::WearReport) {
    let lines = (0..(1 << 20) / 64).map(|line| memory.device().peek_line(line)).collect();
    (lines, memory.device().wear_report())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_rewound_memory_runs_as_a_fresh_one(
        before in proptest::collection::vec(any::<u64>(), 1..3000),
        first in run_ops(),
        second in run_ops(),
    ) {
        let mut rewound = memory();
        let stored = load(&mut rewound, &before);
        let checkpoint = rewound.checkpoint();
        run(&mut rewound, stored, &first);
        rewound.rewind(&checkpoint);
        let again = run(&mut rewound, stored, &second);

        let mut fresh = memory();
        prop_assert_eq!(load(&mut fresh, &before), stored);
        let alone = run(&mut fresh, stored, &second);
        prop_assert_eq!(again, alone);
        prop_assert_eq!(device_state(&rewound), device_state(&fresh));
    }
}
