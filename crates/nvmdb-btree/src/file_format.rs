//! The text formats of `nvmdb btree run`'s file mode: a keys file (one `key value` per
//! line) to bulk-load, and an operations file (lines `I key value`, `D key`, `G key`,
//! `S lo hi`) of [`Op`]s. Blank lines are skipped; every line is at most
//! [`MAX_LINE_BYTES`] long, a UTF-8 byte-order mark before
//! the first line is ignored, and a bad line is a [`ParseError`] naming its number.

use std::io::BufRead;

use nvmdb_text::{for_each_line, quote};

use crate::workload::Op;
/// The longest line accepted, bytes, terminator excluded (1 MiB, as for every text input).
pub use nvmdb_text::MAX_LINE_BYTES;

/// A line of a keys or operations file that could not be read or parsed.
pub use nvmdb_text::ParseError;

fn parse_u64(token: &str, what: &str) -> Result<u64, String> {
    token.parse::<u64>().map_err(|_| format!("{what} {} is not a u64 decimal", quote(token)))
}

/// Parses a keys file into pairs sorted by key. A duplicate key is an error at its later
/// line, naming the first.
pub fn parse_keys(input: impl BufRead) -> Result<Vec<(u64, u64)>, ParseError> {
    let mut pairs: Vec<(u64, u64, u64)> = Vec::new();
    for_each_line(input, |number, line| {
        let mut fields = line.split_whitespace();
        match (fields.next(), fields.next(), fields.next()) {
            (None, ..) => {}
            (Some(key), Some(value), None) => pairs.push((parse_u64(key, "key")?, parse_u64(value, "value")?, number)),
            _ => return Err(format!("expected 'key value', found {} fields", line.split_whitespace().count())),
        }
        Ok(())
    })?;
    pairs.sort_unstable_by_key(|&(key, _, line)| (key, line));
    if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(ParseError::new(w[1].2, format!("duplicate key {} (first on line {})", w[0].0, w[0].2)));
    }
    Ok(pairs.into_iter().map(|(k, v, _)| (k, v)).collect())
}

/// Parses one line of an operations file: `None` for a blank line, or why it is bad.
pub fn parse_op_line(line: &str) -> Result<Option<Op>, String> {
    let mut fields = line.split_whitespace();
    let Some(op) = fields.next() else {
        return Ok(None);
    };
    let (a, b, rest) = (fields.next(), fields.next(), fields.next());
    Ok(Some(match (op, a, b, rest) {
        ("I", Some(key), Some(value), None) => Op::Insert(parse_u64(key, "key")?, parse_u64(value, "value")?),
        ("D", Some(key), None, _) => Op::Delete(parse_u64(key, "key")?),
        ("G", Some(key), None, _) => Op::Get(parse_u64(key, "key")?),
        ("S", Some(lo), Some(hi), None) => {
            let (lo, hi) = (parse_u64(lo, "lo")?, parse_u64(hi, "hi")?);
            if lo > hi {
                return Err(format!("scan bounds out of order: {lo} > {hi}"));
            }
            Op::Scan(lo, hi)
        }
        ("I", ..) => return Err("expected 'I key value'".into()),
        ("D", ..) => return Err("expected 'D key'".into()),
        ("G", ..) => return Err("expected 'G key'".into()),
        ("S", ..) => return Err("expected 'S lo hi'".into()),
        (op, ..) => return Err(format!("unknown operation {} (expected I, D, G or S)", quote(op))),
    }))
}

/// Parses an operations file, in order.
pub fn parse_ops(input: impl BufRead) -> Result<Vec<Op>, ParseError> {
    let mut ops = Vec::new();
    for_each_line(input, |_, line| {
        ops.extend(parse_op_line(line)?);
        Ok(())
    })?;
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_lines_parse_and_bad_lines_say_why() {
        assert_eq!(parse_op_line("I 5 7"), Ok(Some(Op::Insert(5, 7))));
        assert_eq!(parse_op_line("  D 5 "), Ok(Some(Op::Delete(5))));
        assert_eq!(parse_op_line("G 9"), Ok(Some(Op::Get(9))));
        assert_eq!(parse_op_line("S 1 2"), Ok(Some(Op::Scan(1, 2))));
        assert_eq!(parse_op_line(""), Ok(None));
        assert_eq!(parse_op_line("I 5"), Err("expected 'I key value'".into()));
        assert_eq!(parse_op_line("I 5 6 7"), Err("expected 'I key value'".into()));
        assert_eq!(parse_op_line("D 5 6"), Err("expected 'D key'".into()));
        assert_eq!(parse_op_line("G"), Err("expected 'G key'".into()));
        assert_eq!(parse_op_line("S 1"), Err("expected 'S lo hi'".into()));
        assert_eq!(parse_op_line("G -1"), Err("key '-1' is not a u64 decimal".into()));
        assert_eq!(parse_op_line("S 3 2"), Err("scan bounds out of order: 3 > 2".into()));
        assert_eq!(parse_op_line("Q 1"), Err("unknown operation 'Q' (expected I, D, G or S)".into()));
    }

    #[test]
    fn ops_files_name_the_bad_line() {
        assert_eq!(
            parse_ops(&b"\xef\xbb\xbfI 1 2\n\nG 1\r\nS 0 9"[..]),
            Ok(vec![Op::Insert(1, 2), Op::Get(1), Op::Scan(0, 9)])
        );
        assert_eq!(
            parse_ops(&b"G 1\n\nX\n"[..]),
            Err(ParseError::new(3, "unknown operation 'X' (expected I, D, G or S)"))
        );
        assert_eq!(parse_ops(&b"G 1\nG \xff\n"[..]), Err(ParseError::new(2, "line is not valid UTF-8")));
    }

    #[test]
    fn keys_are_sorted_and_bad_lines_named() {
        assert_eq!(parse_keys(&b"7 1\n\n3 2\n"[..]), Ok(vec![(3, 2), (7, 1)]));
        assert_eq!(parse_keys(&b"7 1\n3\n"[..]), Err(ParseError::new(2, "expected 'key value', found 1 fields")));
        assert_eq!(parse_keys(&b"1 x\n"[..]), Err(ParseError::new(1, "value 'x' is not a u64 decimal")));
    }

    #[test]
    fn duplicate_keys_name_the_later_line() {
        let err = parse_keys(&b"7 1\n3 2\n7 9\n"[..]).unwrap_err();
        assert_eq!(err, ParseError::new(3, "duplicate key 7 (first on line 1)"));
    }
}
