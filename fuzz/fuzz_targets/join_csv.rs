//! The join CSV relation parser (header row, then rows of u64 cells) over arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nvmdb_join::csv::parse_csv;

fuzz_target!(|data: &[u8]| {
    let lines = data.split(|&b| b == b'\n').count() as u64;
    match parse_csv(data, None) {
        // A header of distinct, non-empty, trimmed names (a quoted name may hold a comma);
        // 8-byte columns of one length, at most one row per line.
        Ok(table) => {
            assert!(!table.columns.is_empty());
            let rows = table.columns[0].values.len();
            assert!(rows as u64 <= lines);
            for (i, c) in table.columns.iter().enumerate() {
                assert!(c.values.len() == rows && c.width_bytes == 8 && !c.name.is_empty());
                assert!(c.name.trim() == c.name);
                assert!(table.columns[..i].iter().all(|d| d.name != c.name));
            }
        }
        Err(e) => assert!(e.line >= 1 && e.line <= lines && !e.message.is_empty() && !e.message.contains('\n')),
    }
});
