//! The B+-tree keys file parser (`key value` per line) over arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nvmdb_btree::file_format::parse_keys;

fuzz_target!(|data: &[u8]| {
    let lines = data.split(|&b| b == b'\n').count() as u64;
    match parse_keys(data) {
        // Sorted by key, no key twice, and no more pairs than lines.
        Ok(pairs) => assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0) && pairs.len() as u64 <= lines),
        Err(e) => assert!(e.line >= 1 && e.line <= lines && !e.message.is_empty() && !e.message.contains('\n')),
    }
});
