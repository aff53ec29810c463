//! The PCM replay trace parser (`R`/`W` lines) over arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nvmdb_workload::pcm_trace::{PcmOp, PcmTraceReader};

const CAPACITY: u64 = 1 << 40;

fuzz_target!(|data: &[u8]| {
    for item in PcmTraceReader::new(data, CAPACITY) {
        match item {
            Ok(PcmOp::Read { addr, len }) => assert!(len > 0 && addr.checked_add(len).is_some_and(|end| end <= CAPACITY)),
            Ok(PcmOp::Write { addr, data }) => {
                assert!(!data.is_empty() && addr.checked_add(data.len() as u64).is_some_and(|end| end <= CAPACITY))
            }
            Err(e) => assert!(e.line >= 1 && !e.message.contains('\n')),
        }
    }
});
