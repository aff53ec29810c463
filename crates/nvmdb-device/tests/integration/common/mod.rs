//! Strategies shared by the PCM property tests.

use nvmdb_device::{PcmStorageTiming, ProgramBudget};
use proptest::prelude::*;

/// Storage timings with chunks of one word, 32 B and 128 B, differential or charged for
/// every chunk covered.
pub fn timings() -> impl Strategy<Value = PcmStorageTiming> {
    (
        prop::sample::select(vec![
            PcmStorageTiming::THESIS_TABLE_2_2,
            PcmStorageTiming::SAMSUNG_PRAM_DATASHEET,
            PcmStorageTiming::IPLP_BOARD,
        ]),
        any::<bool>(),
    )
        .prop_map(|(timing, every)| PcmStorageTiming { charge_every_chunk: every, ..timing })
}

/// Storage timings whose writes are timed by a program budget: one cell, a 16-bit chunk,
/// the paper board's 64 cells or more at a time, at iteration times from 1 ns.
pub fn budget_timings() -> impl Strategy<Value = PcmStorageTiming> {
    (
        prop::sample::select(vec![
            PcmStorageTiming::THESIS_TABLE_2_2,
            PcmStorageTiming::SAMSUNG_PRAM_DATASHEET,
            PcmStorageTiming::IPLP_BOARD,
        ]),
        prop::sample::select(vec![1u64, 16, 64, 100, 1024]),
        1u64..1000,
    )
        .prop_map(|(timing, cells_per_iteration, ns_per_iteration)| PcmStorageTiming {
            program_budget: Some(ProgramBudget { cells_per_iteration, ns_per_iteration }),
            ..timing
        })
}
