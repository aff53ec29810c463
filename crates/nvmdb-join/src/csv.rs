//! The CSV relation format of `nvmdb join run`: a header row of distinct, non-empty column
//! names, then rows of unsigned 64-bit integers, one per header cell, each stored in 8
//! bytes. Cells are separated by commas and trimmed; blank lines are skipped. Every line
//! is at most [`MAX_LINE_BYTES`] long, a UTF-8 byte-order
//! mark before the first line is ignored, and a bad line is a [`CsvError`] naming its
//! number.

use std::collections::HashSet;
use std::io::BufRead;

use thiserror::Error;

use nvmdb_text::{quote, Lines};

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
pub fn parse_csv(input: impl BufRead) -> Result<Table, CsvError> {
    let mut lines = Lines::new(input);
    let mut columns: Vec<Column> = Vec::new();
    let mut rows = 0u64;
    let mut number = 0u64;
    while let Some(line) = lines.next_line() {
        number = number.saturating_add(1);
        line.map_err(|e| e.to_string())
            .and_then(|line| parse_line(line, &mut columns, &mut rows))
            .map_err(|message| CsvError::new(number, message))?;
    }
    if columns.is_empty() {
        return Err(CsvError::new(1, "empty file: expected a header row"));
    }
    Ok(Table { columns })
}

/// Parses one line into `columns`: the header if there are none yet, else a row.
fn parse_line(line: &str, columns: &mut Vec<Column>, rows: &mut u64) -> Result<(), String> {
    if line.trim().is_empty() {
        return Ok(());
    }
    if columns.is_empty() {
        let mut seen = HashSet::new();
        for (cell, name) in (1u64..).zip(line.split(',').map(str::trim)) {
            if name.is_empty() {
                return Err(format!("header cell {cell} is empty"));
            }
            if !seen.insert(name) {
                return Err(format!("column {} appears twice", quote(name)));
            }
        }
        columns.extend(line.split(',').map(str::trim).map(|name| Column {
            name: name.to_string(),
            width_bytes: 8,
            values: Vec::new(),
        }));
        return Ok(());
    }
    let cells = line.split(',').count();
    if cells != columns.len() {
        return Err(format!("{cells} cells, but the header has {}", columns.len()));
    }
    let Some(next_rows) = rows.checked_add(1).filter(|&n| n <= MAX_ROWS) else {
        return Err("more than 2^32 - 1 rows".into());
    };
    // Every cell is parsed before any is stored, so a bad row leaves the columns even.
    for (column, cell) in columns.iter().zip(line.split(',')) {
        if cell.trim().parse::<u64>().is_err() {
            return Err(format!(
                "column {}: {} is not an unsigned 64-bit integer",
                quote(&column.name),
                quote(cell.trim())
            ));
        }
    }
    for (column, cell) in columns.iter_mut().zip(line.split(',')) {
        column.values.extend(cell.trim().parse::<u64>().ok());
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
        ];
        for (text, line, message) in cases {
            assert_eq!(parse(text), Err(CsvError::new(line, message)), "{text:?}");
        }
        assert_eq!(parse_csv(&b"a\n\xff\n"[..]), Err(CsvError::new(2, "line is not valid UTF-8")));
    }
}
