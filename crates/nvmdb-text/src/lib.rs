//! Bounded line reading for every text input: a line longer than [`MAX_LINE_BYTES`] is an
//! error instead of an unbounded allocation, a UTF-8 byte-order mark before the first line
//! is skipped, and a line that is not UTF-8 is an error naming its number. The trace parsers,
//! the B+-tree file formats and the CSV relations all read through it.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used, clippy::arithmetic_side_effects)]

use std::io::{BufRead, ErrorKind};

use thiserror::Error;

/// The longest line any parser accepts, terminator excluded.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The longest token quoted in an error message, in characters.
pub const MAX_QUOTED_CHARS: usize = 60;

/// Why a line could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LineError {
    /// Longer than [`MAX_LINE_BYTES`].
    #[error("line too long (more than {MAX_LINE_BYTES} bytes)")]
    TooLong,
    /// Not valid UTF-8.
    #[error("line is not valid UTF-8")]
    NotUtf8,
    /// The reader failed.
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads lines of at most [`MAX_LINE_BYTES`] from `input`, numbering them from 1.
#[derive(Debug)]
pub struct Lines<R> {
    input: R,
    buffer: Vec<u8>,
    line: u64,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `input`.
    pub fn new(input: R) -> Lines<R> {
        Lines { input, buffer: Vec::new(), line: 0 }
    }

    /// The number of the line last returned (or that failed), from 1.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The next line without its terminator (`\n` or `\r\n`), or `None` at the end.
    pub fn next_line(&mut self) -> Option<Result<&str, LineError>> {
        self.buffer.clear();
        self.line = self.line.saturating_add(1);
        match self.fill() {
            Ok(false) => return None,
            Ok(true) => {}
            Err(e) => return Some(Err(e)),
        }
        if self.buffer.last() == Some(&b'\n') {
            self.buffer.pop();
            if self.buffer.last() == Some(&b'\r') {
                self.buffer.pop();
            }
        }
        if self.buffer.len() > MAX_LINE_BYTES {
            return Some(Err(LineError::TooLong));
        }
        let mut text = match std::str::from_utf8(&self.buffer) {
            Ok(text) => text,
            Err(_) => return Some(Err(LineError::NotUtf8)),
        };
        if self.line == 1 {
            text = text.strip_prefix('\u{feff}').unwrap_or(text);
        }
        Some(Ok(text))
    }

    /// Reads up to and including the next `\n` into the buffer; false at the end of input.
    fn fill(&mut self) -> Result<bool, LineError> {
        loop {
            let available = match self.input.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if available.is_empty() {
                return Ok(!self.buffer.is_empty());
            }
            let (take, done) = match available.iter().position(|&b| b == b'\n') {
                // The terminator is part of the line: the slice holds one more byte than `i`.
                Some(i) => (i.saturating_add(1), true),
                None => (available.len(), false),
            };
            // +2 leaves room for a `\r\n` terminator.
            if self.buffer.len().saturating_add(take) > MAX_LINE_BYTES + 2 {
                return Err(LineError::TooLong);
            }
            self.buffer.extend_from_slice(&available[..take]);
            self.input.consume(take);
            if done {
                return Ok(true);
            }
        }
    }
}

/// The error of a second reading that finds more than the first counted (`count` of
/// `what`: lines, rows), at the line beyond them: the file changed between the readings.
pub fn grew_while_read(count: u64, what: &str) -> String {
    format!("more than the {count} {what} read before: the file changed while it was read")
}

/// `token` quoted for an error message: at most [`MAX_QUOTED_CHARS`] characters, cut on a
/// character boundary with an ellipsis, and control characters escaped (`\n`, `\u{6}`), so
/// the message stays one line whatever the token holds (a quoted CSV cell may hold a line
/// break).
pub fn quote(token: &str) -> String {
    let mut shown = String::new();
    for (i, c) in token.chars().enumerate() {
        if i == MAX_QUOTED_CHARS {
            return format!("'{shown}…'");
        }
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    format!("'{shown}'")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8]) -> Vec<Result<String, String>> {
        let mut lines = Lines::new(input);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line() {
            let failed = line.is_err();
            out.push(line.map(str::to_string).map_err(|e| e.to_string()));
            if failed {
                break;
            }
        }
        out
    }

    #[test]
    fn terminators_bom_and_numbering() {
        assert_eq!(
            all(b"\xef\xbb\xbfa\r\nb\n\nc"),
            vec![Ok("a".into()), Ok("b".into()), Ok("".into()), Ok("c".into())]
        );
        assert_eq!(all(b""), vec![]);
        // A byte-order mark is skipped only before the first line.
        assert_eq!(all(b"a\n\xef\xbb\xbfb\n")[1], Ok("\u{feff}b".into()));
        let mut lines = Lines::new(&b"x\ny\n"[..]);
        lines.next_line();
        lines.next_line();
        assert_eq!(lines.line(), 2);
    }

    #[test]
    fn long_and_binary_lines_fail() {
        let exact = vec![b'a'; MAX_LINE_BYTES];
        assert_eq!(all(&[exact.as_slice(), b"\r\n"].concat()).len(), 1);
        assert!(all(&exact)[0].is_ok());
        let long = vec![b'a'; MAX_LINE_BYTES + 1];
        assert_eq!(all(&long), vec![Err("line too long (more than 1048576 bytes)".into())]);
        assert_eq!(all(&[long.as_slice(), b"\n"].concat()).len(), 1);
        assert_eq!(all(b"ok\n\xff\xfe\n"), vec![Ok("ok".into()), Err("line is not valid UTF-8".into())]);
    }

    #[test]
    fn quotes_are_cut_on_a_char_boundary() {
        assert_eq!(quote("abc"), "'abc'");
        let long = "é".repeat(100);
        let quoted = quote(&long);
        assert_eq!(quoted.chars().count(), MAX_QUOTED_CHARS + 3);
        assert!(quoted.ends_with("…'"));
        assert_eq!(quote("a\r\nb\u{6}\\"), "'a\\r\\nb\\u{6}\\'");
    }
}

/// A line of a text input that could not be read or parsed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("line {line}: {message}")]
#[non_exhaustive]
pub struct ParseError {
    /// The line, from 1.
    pub line: u64,
    /// What is wrong with it, one line of text.
    pub message: String,
}

impl ParseError {
    /// An error at `line`.
    pub fn new(line: u64, message: impl Into<String>) -> ParseError {
        ParseError { line, message: message.into() }
    }
}

/// Calls `each(line_number, text)` for every line of `input`, numbered from 1, stopping at
/// the first error: an unreadable line or what `each` returns, as a [`ParseError`].
pub fn for_each_line(
    input: impl BufRead,
    mut each: impl FnMut(u64, &str) -> Result<(), String>,
) -> Result<(), ParseError> {
    let mut lines = Lines::new(input);
    let mut number = 0u64;
    while let Some(line) = lines.next_line() {
        number = number.saturating_add(1);
        line.map_err(|e| e.to_string())
            .and_then(|text| each(number, text))
            .map_err(|message| ParseError::new(number, message))?;
    }
    Ok(())
}
