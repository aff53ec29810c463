//! The msr trace parser over arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nvmdb_workload::{TraceFormat, TraceReader};

fuzz_target!(|data: &[u8]| {
    for item in TraceReader::new(data, TraceFormat::Msr).with_max_request_bytes(1 << 30) {
        match item {
            Ok(r) => assert!(r.len_bytes > 0 && r.len_bytes <= 1 << 30 && r.offset_bytes.checked_add(r.len_bytes).is_some()),
            Err(e) => assert!(e.line >= 1 && !e.message.contains('\n')),
        }
    }
});
