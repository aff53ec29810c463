//! The B+-tree operations file parser (`I key value`, `D key`, `G key`, `S lo hi`) over
//! arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nvmdb_btree::file_format::parse_ops;
use nvmdb_btree::workload::Op;

fuzz_target!(|data: &[u8]| {
    let lines = data.split(|&b| b == b'\n').count() as u64;
    match parse_ops(data) {
        // At most one operation per line, and every scan's bounds in order.
        Ok(ops) => assert!(ops.len() as u64 <= lines && ops.iter().all(|op| !matches!(op, Op::Scan(lo, hi) if lo > hi))),
        Err(e) => assert!(e.line >= 1 && e.line <= lines && !e.message.is_empty() && !e.message.contains('\n')),
    }
});
