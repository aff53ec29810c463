//! Strategies shared by the PCM property tests.

use nvmdb_device::PcmStorageTiming;
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
