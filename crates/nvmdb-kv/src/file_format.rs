//! The text formats of `nvmdb kv run`'s file mode: a load file (one `key value` per
//! line) and an operations file (lines `I key value`, `U key value`, `D key`, `G key`,
//! `S lo hi`, `C`). Keys are `u32` decimals; values are 1 to 64 printable ASCII bytes
//! without spaces. Blank lines are skipped; lines are read with the shared bounded line
//! reader (at most 1 MiB, a UTF-8 byte-order mark ignored), and a bad line is a
//! [`ParseError`] naming its number.

use std::io::BufRead;

use nvmdb_text::quote;

use crate::page::MAX_VALUE_BYTES;

/// A line that could not be read or parsed.
pub use nvmdb_text::ParseError;

/// One operation of an operations file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// `I key value`: insert (or replace).
    Insert(u32, Vec<u8>),
    /// `U key value`: replace the value of a present key.
    Update(u32, Vec<u8>),
    /// `D key`.
    Delete(u32),
    /// `G key`: one result line, the value or `-`.
    Get(u32),
    /// `S lo hi`: one result line, the keys in `[lo, hi]` ascending, or `-`.
    Scan(u32, u32),
    /// `C`: sync (group commit).
    Sync,
}

/// Calls `each(line_number, text)` for every line, stopping at the first error.
pub use nvmdb_text::for_each_line;

fn parse_key(token: &str, what: &str) -> Result<u32, String> {
    token.parse::<u32>().map_err(|_| format!("{what} {} is not a u32 decimal", quote(token)))
}

/// A value: 1 to 64 printable ASCII bytes (no spaces, which separate fields).
pub fn parse_value(token: &str) -> Result<Vec<u8>, String> {
    if token.len() > MAX_VALUE_BYTES {
        return Err(format!("value of {} bytes: values are 1 to {MAX_VALUE_BYTES} bytes", token.len()));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!("value {} is not printable ASCII", quote(token)));
    }
    Ok(token.as_bytes().to_vec())
}

/// Parses one line of a load file: `None` for a blank line.
pub fn parse_load_line(line: &str) -> Result<Option<(u32, Vec<u8>)>, String> {
    let mut fields = line.split_whitespace();
    match (fields.next(), fields.next(), fields.next()) {
        (None, ..) => Ok(None),
        (Some(key), Some(value), None) => Ok(Some((parse_key(key, "key")?, parse_value(value)?))),
        _ => Err(format!("expected 'key value', found {} fields", line.split_whitespace().count())),
    }
}

/// Parses one line of an operations file: `None` for a blank line.
pub fn parse_op_line(line: &str) -> Result<Option<FileOp>, String> {
    let mut fields = line.split_whitespace();
    let Some(op) = fields.next() else {
        return Ok(None);
    };
    let (a, b, rest) = (fields.next(), fields.next(), fields.next());
    Ok(Some(match (op, a, b, rest) {
        ("I", Some(key), Some(value), None) => FileOp::Insert(parse_key(key, "key")?, parse_value(value)?),
        ("U", Some(key), Some(value), None) => FileOp::Update(parse_key(key, "key")?, parse_value(value)?),
        ("D", Some(key), None, _) => FileOp::Delete(parse_key(key, "key")?),
        ("G", Some(key), None, _) => FileOp::Get(parse_key(key, "key")?),
        ("S", Some(lo), Some(hi), None) => {
            let (lo, hi) = (parse_key(lo, "lo")?, parse_key(hi, "hi")?);
            if lo > hi {
                return Err(format!("scan bounds out of order: {lo} > {hi}"));
            }
            FileOp::Scan(lo, hi)
        }
        ("C", None, ..) => FileOp::Sync,
        ("I", ..) => return Err("expected 'I key value'".into()),
        ("U", ..) => return Err("expected 'U key value'".into()),
        ("D", ..) => return Err("expected 'D key'".into()),
        ("G", ..) => return Err("expected 'G key'".into()),
        ("S", ..) => return Err("expected 'S lo hi'".into()),
        ("C", ..) => return Err("expected 'C'".into()),
        (op, ..) => return Err(format!("unknown operation {} (expected I, U, D, G, S or C)", quote(op))),
    }))
}

/// What a load file holds, read without keeping it ([`summarize_load`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadSummary {
    /// Records (lines that are not blank).
    pub records: u64,
    /// Their values' bytes in all.
    pub value_bytes: u64,
    /// The smallest and the largest value, bytes (`None`: no record).
    pub value_range: Option<(usize, usize)>,
}

/// Widens `range` to hold a value of `bytes` bytes.
pub fn widen(range: Option<(usize, usize)>, bytes: usize) -> Option<(usize, usize)> {
    Some(range.map_or((bytes, bytes), |(lo, hi)| (lo.min(bytes), hi.max(bytes))))
}

/// Reads a load file, checking every line, and counts what it holds; memory: one line.
pub fn summarize_load(input: impl BufRead) -> Result<LoadSummary, ParseError> {
    let mut summary = LoadSummary::default();
    for_each_line(input, |_, line| {
        if let Some((_, value)) = parse_load_line(line)? {
            summary.records = summary.records.saturating_add(1);
            summary.value_bytes = summary.value_bytes.saturating_add(value.len() as u64);
            summary.value_range = widen(summary.value_range, value.len());
        }
        Ok(())
    })?;
    Ok(summary)
}

/// Checks a load file that [`summarize_load`] found to hold `records` records and returns
/// their number; a key given twice is an error at its later line, naming the first.
/// Memory: 16 B per record.
pub fn check_load(input: impl BufRead, records: u64) -> Result<u64, ParseError> {
    let mut keys: Vec<(u32, u64)> = Vec::with_capacity(usize::try_from(records).unwrap_or(usize::MAX));
    for_each_line(input, |number, line| {
        if let Some((key, _)) = parse_load_line(line)? {
            if keys.len() as u64 >= records {
                return Err(nvmdb_text::grew_while_read(records, "lines"));
            }
            keys.push((key, number));
        }
        Ok(())
    })?;
    keys.sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(ParseError::new(w[1].1, format!("duplicate key {} (first on line {})", w[0].0, w[0].1)));
    }
    Ok(keys.len() as u64)
}

/// Parses an operations file that holds `ops` operations (as counted by a first reading);
/// more is an error at the line beyond them. Memory: the operations, in a vector of
/// exactly `ops`.
pub fn parse_ops(input: impl BufRead, ops: u64) -> Result<Vec<FileOp>, ParseError> {
    let mut parsed = Vec::with_capacity(usize::try_from(ops).unwrap_or(usize::MAX));
    for_each_line(input, |_, line| {
        if let Some(op) = parse_op_line(line)? {
            if parsed.len() as u64 >= ops {
                return Err(nvmdb_text::grew_while_read(ops, "lines"));
            }
            parsed.push(op);
        }
        Ok(())
    })?;
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_lines_parse_and_bad_lines_say_why() {
        assert_eq!(parse_op_line("I 5 abc"), Ok(Some(FileOp::Insert(5, b"abc".to_vec()))));
        assert_eq!(parse_op_line(" U 5 x "), Ok(Some(FileOp::Update(5, b"x".to_vec()))));
        assert_eq!(parse_op_line("D 5"), Ok(Some(FileOp::Delete(5))));
        assert_eq!(parse_op_line("G 9"), Ok(Some(FileOp::Get(9))));
        assert_eq!(parse_op_line("S 1 2"), Ok(Some(FileOp::Scan(1, 2))));
        assert_eq!(parse_op_line("C"), Ok(Some(FileOp::Sync)));
        assert_eq!(parse_op_line(""), Ok(None));
        assert_eq!(parse_op_line("I 5"), Err("expected 'I key value'".into()));
        assert_eq!(parse_op_line("C 1"), Err("expected 'C'".into()));
        assert_eq!(parse_op_line("G 4294967296"), Err("key '4294967296' is not a u32 decimal".into()));
        assert_eq!(parse_op_line("S 3 2"), Err("scan bounds out of order: 3 > 2".into()));
        assert_eq!(parse_op_line("Q 1"), Err("unknown operation 'Q' (expected I, U, D, G, S or C)".into()));
        let long = format!("I 1 {}", "v".repeat(65));
        assert_eq!(parse_op_line(&long), Err("value of 65 bytes: values are 1 to 64 bytes".into()));
        assert_eq!(parse_op_line("I 1 caf\u{e9}"), Err("value 'caf\u{e9}' is not printable ASCII".into()));
    }

    #[test]
    fn files_name_the_bad_line() {
        assert_eq!(
            parse_ops(&b"\xef\xbb\xbfI 1 a\n\nG 1\r\nC\n"[..], 3),
            Ok(vec![FileOp::Insert(1, b"a".to_vec()), FileOp::Get(1), FileOp::Sync])
        );
        assert_eq!(
            parse_ops(&b"G 1\nG 2\n"[..], 1),
            Err(ParseError::new(2, "more than the 1 lines read before: the file changed while it was read"))
        );
        assert_eq!(
            parse_ops(&b"G 1\n\nX\n"[..], 10),
            Err(ParseError::new(3, "unknown operation 'X' (expected I, U, D, G, S or C)"))
        );
        assert_eq!(check_load(&b"7 a\n\n3 b\n"[..], 2), Ok(2));
        assert_eq!(
            summarize_load(&b"7 a\n\n3 bcd\n"[..]),
            Ok(LoadSummary { records: 2, value_bytes: 4, value_range: Some((1, 3)) })
        );
        assert_eq!(
            check_load(&b"7 a\n3 b\n7 c\n"[..], 10),
            Err(ParseError::new(3, "duplicate key 7 (first on line 1)"))
        );
        assert_eq!(check_load(&b"7\n"[..], 10), Err(ParseError::new(1, "expected 'key value', found 1 fields")));
    }
}
