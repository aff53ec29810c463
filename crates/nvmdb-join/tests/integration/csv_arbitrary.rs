//! Arbitrary bytes as a CSV relation: each parses into an even table or names a line, and
//! a first reading that keeps no values agrees.

use nvmdb_join::csv::{parse_csv, shape_of};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_csv_parses_or_names_a_line(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        tokens in proptest::collection::vec("[ab]|,|[0-9]{1,21}|-1| |\n|\u{feff}", 0..40),
    ) {
        for contents in [bytes, tokens.concat().into_bytes()] {
            let shape = shape_of(&contents[..]);
            match parse_csv(&contents[..], None) {
                Ok(table) => {
                    prop_assert_eq!(shape.map(|s| (s.columns, s.rows)), Ok((table.columns.len(), table.rows())));
                    prop_assert_eq!(parse_csv(&contents[..], Some(table.rows())), Ok(table.clone()));
                    prop_assert!(!table.columns.is_empty());
                    let rows = table.columns[0].values.len();
                    prop_assert!(table.columns.iter().all(|c| c.values.len() == rows && c.width_bytes == 8 && !c.name.is_empty()));
                }
                Err(e) => {
                    prop_assert_eq!(shape.err(), Some(e.clone()));
                    let lines = contents.split(|&b| b == b'\n').count() as u64;
                    prop_assert!(e.line >= 1 && e.line <= lines, "{e}");
                    prop_assert!(!e.message.is_empty() && !e.message.contains('\n'), "{e}");
                }
            }
        }
    }
}
