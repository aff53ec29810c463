//! Arbitrary bytes as keys and operations files: each parses or names a line of the input.

use nvmdb_btree::file_format::{parse_keys, parse_ops, ParseError};
use nvmdb_btree::workload::Op;
use proptest::prelude::*;

/// Lines in `bytes`, counting a last line without a terminator.
fn line_count(bytes: &[u8]) -> u64 {
    let pieces = bytes.split(|&b| b == b'\n').count() as u64;
    pieces - u64::from(bytes.ends_with(b"\n") || bytes.is_empty())
}

fn check(error: &ParseError, contents: &[u8]) -> Result<(), TestCaseError> {
    prop_assert!(error.line >= 1 && error.line <= line_count(contents), "{error}");
    prop_assert!(!error.message.is_empty() && !error.message.contains('\n'), "{error}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_files_parse_or_name_a_line(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        tokens in proptest::collection::vec("[IDGS]|[0-9]{1,21}|-1| |\n|\u{feff}", 0..40),
    ) {
        for contents in [bytes, tokens.concat().into_bytes()] {
            match parse_keys(&contents[..]) {
                Ok(pairs) => prop_assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0)),
                Err(e) => check(&e, &contents)?,
            }
            match parse_ops(&contents[..]) {
                Ok(ops) => prop_assert!(ops.iter().all(|op| !matches!(op, Op::Scan(lo, hi) if lo > hi))),
                Err(e) => check(&e, &contents)?,
            }
        }
    }
}
