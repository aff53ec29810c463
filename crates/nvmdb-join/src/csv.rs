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

/// Parses a CSV relation with a header row into a table of 8-byte columns.
pub fn parse_csv(input: impl Read) -> Result<Table, CsvError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(LineCap { input, line: 1, line_bytes: 0 });
    let mut columns: Vec<Column> = Vec::new();
    let mut rows = 0u64;
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                let line = record.position().map_or(1, csv::Position::line);
                parse_record(&record, &mut columns, &mut rows).map_err(|message| CsvError::new(line, message))?;
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
    if columns.is_empty() {
        return Err(CsvError::new(1, "empty file: expected a header row"));
    }
    Ok(Table { columns })
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

/// Parses one record into `columns`: the header if there are none yet, else a row.
fn parse_record(record: &csv::StringRecord, columns: &mut Vec<Column>, rows: &mut u64) -> Result<(), String> {
    if record.iter().all(str::is_empty) && record.len() <= 1 {
        return Ok(());
    }
    if columns.is_empty() {
        let mut seen = HashSet::new();
        for (cell, name) in (1u64..).zip(record.iter()) {
            if name.is_empty() {
                return Err(format!("header cell {cell} is empty"));
            }
            if !seen.insert(name) {
                return Err(format!("column {} appears twice", quote(name)));
            }
        }
        columns.extend(record.iter().map(|name| Column { name: name.to_string(), width_bytes: 8, values: Vec::new() }));
        return Ok(());
    }
    if record.len() != columns.len() {
        return Err(format!("{} cells, but the header has {}", record.len(), columns.len()));
    }
    let Some(next_rows) = rows.checked_add(1).filter(|&n| n <= MAX_ROWS) else {
        return Err("more than 2^32 - 1 rows".into());
    };
    // Every cell is parsed before any is stored, so a bad row leaves the columns even.
    let mut values = Vec::with_capacity(columns.len());
    for (column, cell) in columns.iter().zip(record.iter()) {
        let value = cell.parse::<u64>().map_err(|_| {
            format!("column {}: {} is not an unsigned 64-bit integer", quote(&column.name), quote(cell))
        })?;
        values.push(value);
    }
    for (column, value) in columns.iter_mut().zip(values) {
        column.values.push(value);
    }
    *rows = next_rows;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Table, CsvError> {
        parse_csv(text.as_bytes())
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
        assert_eq!(parse_csv(&b"a\n\xff\n"[..]), Err(CsvError::new(2, "line is not valid UTF-8")));
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
