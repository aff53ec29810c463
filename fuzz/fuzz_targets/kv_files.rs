//! The key-value engine's input files over arbitrary bytes, read as `nvmdb kv run` reads
//! them: the load file (`key value` lines) counted, then checked for duplicate keys; the
//! operations file (`I`, `U`, `D`, `G`, `S`, `C` lines) counted, then parsed into exactly
//! as many operations.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nvmdb_kv::file_format::{check_load, parse_ops, summarize_load, FileOp, ParseError};
use nvmdb_kv::file_run::{summarize_ops, FileRunOptions};

/// One line naming a line of the input.
fn well_formed(e: &ParseError, lines: u64) -> bool {
    e.line >= 1 && e.line <= lines && !e.message.is_empty() && !e.message.contains('\n')
}

fuzz_target!(|data: &[u8]| {
    let lines = data.split(|&b| b == b'\n').count() as u64;
    match summarize_load(data) {
        // The second reading holds the records counted, or names a duplicate key.
        Ok(summary) => match check_load(data, summary.records) {
            Ok(records) => assert_eq!(records, summary.records),
            Err(e) => assert!(well_formed(&e, lines) && e.message.starts_with("duplicate key")),
        },
        Err(e) => assert!(well_formed(&e, lines)),
    }
    match summarize_ops(data, 0, &FileRunOptions::default()) {
        // As many operations as counted, inserts among them, every scan's bounds in order.
        Ok(summary) => {
            let ops = parse_ops(data, summary.ops).expect("a file counted parses");
            assert_eq!(ops.len() as u64, summary.ops);
            let inserts = ops.iter().filter(|op| matches!(op, FileOp::Insert(..))).count() as u64;
            assert_eq!(inserts, summary.inserts);
            assert!(ops.iter().all(|op| !matches!(op, FileOp::Scan(lo, hi) if lo > hi)));
        }
        // The parse (room for an operation per line) finds the same first bad line.
        Err(e) => {
            assert!(well_formed(&e, lines));
            assert_eq!(parse_ops(data, lines).err().map(|p| (p.line, p.message)), Some((e.line, e.message)));
        }
    }
});
