//! The CSV relation format of `nvmdb join run`: a header row of distinct, non-empty column
//! names, then rows of unsigned 64-bit integers, one per header cell, each stored in 8
//! bytes. The `csv` crate reads it: cells are separated by commas, may be quoted (RFC 4180)
//! and are trimmed; records end at `\n` (a `\r` before it is trimmed); blank lines are
//! skipped and a UTF-8 byte-order mark before the first line is ignored. Every line is at
//! most [`MAX_LINE_BYTES`] long, and a bad line is a [`CsvError`] naming its number.

use std::collections::HashSet;
use std::io::Read;

use thiserror::Error;

use nvmdb_text::quote;

use crate::relation::{Column, Table};
/// The longest line accepted, bytes, terminator excluded (1 MiB, as for every text input).
pub use nvmdb_text::MAX_LINE_BYTES;

/// A line of a CSV relation that could not be read or parsed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("line {line}: {message}")]
#[non_exhaustive]
pub struct CsvError {
    /// The line, from 1.
    pub line: u64,
    /// What is wrong with it, one line of text.
    pub message: String,
}

impl CsvError {
    /// An error at `line`.
    pub fn new(line: u64, message: impl Into<String>) -> CsvError {
        CsvError { line, message: message.into() }
    }
}

/// The most data rows a table may hold (row numbers are 32-bit in the joins).
pub const MAX_ROWS: u64 = u32::MAX as u64;

/// What a CSV relation holds, read without keeping its values ([`shape_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvShape {
    /// Columns.
    pub columns: usize,
    /// Data rows.
    pub rows: u64,
    /// The column names' bytes in all.
    pub name_bytes: u64,
}

/// Reads a CSV relation, checking every line as [`parse_csv`] does, and counts what it
/// holds; memory: its header and one row.
pub fn shape_of(input: impl Read) -> Result<CsvShape, CsvError> {
    let (names, rows) = read(input, |_| Ok(()))?;
    let name_bytes = names.iter().map(|n| n.len() as u64).sum();
    Ok(CsvShape { columns: names.len(), rows, name_bytes })
}

/// Parses a CSV relation with a header row into a table of 8-byte columns. With `rows`
/// (the data rows a first reading counted, [`shape_of`]) each column holds exactly that
/// many values, and a row beyond them is an error naming its line; without, the columns
/// grow as rows come.
pub fn parse_csv(input: impl Read, rows: Option<u64>) -> Result<Table, CsvError> {
    let capacity = rows.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let mut values: Vec<Vec<u64>> = Vec::new();
    let (names, _) = read(input, |row| {
        if values.is_empty() {
            values = row.iter().map(|_| Vec::with_capacity(capacity)).collect();
        }
        if let Some(n) = rows.filter(|&n| values[0].len() as u64 >= n) {
            return Err(nvmdb_text::grew_while_read(n, "rows"));
        }
        for (column, &value) in values.iter_mut().zip(row) {
            column.push(value);
        }
        Ok(())
    })?;
    values.resize_with(names.len(), Vec::new);
    let columns = names.into_iter().zip(values).map(|(name, values)| Column { name, width_bytes: 8, values });
    Ok(Table { columns: columns.collect() })
}

/// Reads a CSV relation, calling `each_row` with each data row's values; returns the
/// header's names and the number of data rows.
fn read(
    input: impl Read,
    mut each_row: impl FnMut(&[u64]) -> Result<(), String>,
) -> Result<(Vec<String>, u64), CsvError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(LineCap { input, line: 1, line_bytes: 0 });
    let mut names: Vec<String> = Vec::new();
    let mut rows = 0u64;
    let mut record = csv::StringRecord::new();
    let mut values = Vec::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                let line = record.position().map_or(1, csv::Position::line);
                parse_record(&record, &mut names, &mut rows, &mut values)
                    .and_then(|row| if row { each_row(&values) } else { Ok(()) })
                    .map_err(|message| CsvError::new(line, message))?;
            }
            Err(e) => {
                let line = e.position().map_or(reader.get_ref().line, csv::Position::line);
                let message = match e.into_kind() {
                    csv::ErrorKind::Utf8 { .. } => "line is not valid UTF-8".to_string(),
                    csv::ErrorKind::Io(e) if e.kind() == std::io::ErrorKind::InvalidData => e.to_string(),
                    csv::ErrorKind::Io(e) => format!("cannot read: {e}"),
                    other => format!("{other:?}"),
                };
                return Err(CsvError::new(line, message));
            }
        }
    }
    if names.is_empty() {
        return Err(CsvError::new(1, "empty file: expected a header row"));
    }
    Ok((names, rows))
}

/// The input, refusing a line longer than [`MAX_LINE_BYTES`] (a `\r` before its `\n`
/// aside) before the CSV reader buffers it; `line` is the line being read, from 1.
struct LineCap<R> {
    input: R,
    line: u64,
    line_bytes: usize,
}

impl<R: Read> Read for LineCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.read(buf)?;
        for &byte in &buf[..n] {
            if byte == b'\n' {
                self.line = self.line.saturating_add(1);
                self.line_bytes = 0;
            } else {
                self.line_bytes += 1;
                if self.line_bytes > MAX_LINE_BYTES + 1 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("line too long (more than {MAX_LINE_BYTES} bytes)"),
                    ));
                }
            }
        }
        Ok(n)
    }
}

/// Parses one record: the header's `names` if there are none yet, else a row's `values`
/// (returning whether it was a row).
fn parse_record(
    record: &csv::StringRecord,
    names: &mut Vec<String>,
    rows: &mut u64,
    values: &mut Vec<u64>,
) -> Result<bool, String> {
    if record.iter().all(str::is_empty) && record.len() <= 1 {
        return Ok(false);
    }
    if names.is_empty() {
        let mut seen = HashSet::new();
        for (cell, name) in (1u64..).zip(record.iter()) {
            if name.is_empty() {
                return Err(format!("header cell {cell} is empty"));
            }
            if !seen.insert(name) {
                return Err(format!("column {} appears twice", quote(name)));
            }
        }
        names.extend(record.iter().map(str::to_string));
        return Ok(false);
    }
    if record.len() != names.len() {
        return Err(format!("{} cells, but the header has {}", record.len(), names.len()));
    }
    let Some(next_rows) = rows.checked_add(1).filter(|&n| n <= MAX_ROWS) else {
        return Err("more than 2^32 - 1 rows".into());
    };
    // Every cell is parsed before the row is given, so a bad row leaves the columns even.
    values.clear();
    for (name, cell) in names.iter().zip(record.iter()) {
        let value = cell
            .parse::<u64>()
            .map_err(|_| format!("column {}: {} is not an unsigned 64-bit integer", quote(name), quote(cell)))?;
        values.push(value);
    }
    *rows = next_rows;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `text` as it grows, and sized by a first reading, which must agree.
    fn parse(text: &str) -> Result<Table, CsvError> {
        let grown = parse_csv(text.as_bytes(), None);
        let shape = shape_of(text.as_bytes());
        match &grown {
            Ok(table) => {
                assert_eq!(shape.map(|s| (s.columns, s.rows)), Ok((table.columns.len(), table.rows())));
                assert_eq!(parse_csv(text.as_bytes(), Some(table.rows())).as_ref(), Ok(table));
            }
            Err(e) => assert_eq!(shape.err().as_ref(), Some(e)),
        }
        grown
    }

    #[test]
    fn csv_parses_with_spaces_blank_lines_and_a_bom() {
        let table = parse("\u{feff}a, b\r\n1,2\n\n3, 4\n").unwrap();
        assert_eq!(table.columns.len(), 2);
        assert_eq!((table.columns[0].name.as_str(), table.columns[1].name.as_str()), ("a", "b"));
        assert_eq!(table.columns[0].values, vec![1, 3]);
        assert_eq!(table.columns[1].values, vec![2, 4]);
        assert!(table.columns.iter().all(|c| c.width_bytes == 8));
        assert_eq!(parse("k\n").unwrap().rows(), 0);
    }

    #[test]
    fn csv_errors_name_the_line() {
        let cases = [
            ("", 1, "empty file: expected a header row"),
            ("\n \n", 1, "empty file: expected a header row"),
            ("a,a\n1,2\n", 1, "column 'a' appears twice"),
            ("a,,b\n", 1, "header cell 2 is empty"),
            ("a,b\n1,2\n3\n", 3, "1 cells, but the header has 2"),
            ("a,b\n1,-2\n", 2, "column 'b': '-2' is not an unsigned 64-bit integer"),
            ("a\n18446744073709551616\n", 2, "column 'a': '18446744073709551616' is not an unsigned 64-bit integer"),
            ("a\n1\n\u{feff}2\n", 3, "column 'a': '\u{feff}2' is not an unsigned 64-bit integer"),
            // A quoted cell holding a line break is shown on one line.
            ("a\n\"1\n2\"\n", 2, "column 'a': '1\\n2' is not an unsigned 64-bit integer"),
        ];
        for (text, line, message) in cases {
            assert_eq!(parse(text), Err(CsvError::new(line, message)), "{text:?}");
        }
        assert_eq!(parse_csv(&b"a\n\xff\n"[..], None), Err(CsvError::new(2, "line is not valid UTF-8")));
        assert_eq!(
            parse_csv(&b"a\n1\n2\n"[..], Some(1)),
            Err(CsvError::new(3, "more than the 1 rows read before: the file changed while it was read"))
        );
        let long = format!("a\n{}\n", "1".repeat(MAX_LINE_BYTES + 2));
        assert_eq!(parse(&long), Err(CsvError::new(2, format!("line too long (more than {MAX_LINE_BYTES} bytes)"))));
    }

    #[test]
    fn quoted_cells_are_read_as_the_csv_format_defines_them() {
        let table = parse("\"a,b\",c\n\"1\", 2\r\n").unwrap();
        assert_eq!((table.columns[0].name.as_str(), table.columns[1].name.as_str()), ("a,b", "c"));
        assert_eq!((table.columns[0].values.as_slice(), table.columns[1].values.as_slice()), (&[1][..], &[2][..]));
    }
}
