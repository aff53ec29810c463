//! Bounded line reading for the text formats this crate parses (the same rules as
//! `nvmdb_workload::lines`, which this crate's floor may not depend on): a line longer
//! than [`MAX_LINE_BYTES`] is an error instead of an unbounded allocation, a UTF-8
//! byte-order mark before the first line is skipped, and a line that is not UTF-8 is an
//! error.

use std::io::{BufRead, ErrorKind};

/// The longest line accepted, terminator excluded.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The longest token quoted in an error message, in characters.
const MAX_QUOTED_CHARS: usize = 60;

/// Reads lines of at most [`MAX_LINE_BYTES`] from `input`, numbering them from 1.
#[derive(Debug)]
pub(crate) struct Lines<R> {
    input: R,
    buffer: Vec<u8>,
    line: u64,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `input`.
    pub(crate) fn new(input: R) -> Lines<R> {
        Lines { input, buffer: Vec::new(), line: 0 }
    }

    /// The next line without its terminator (`\n` or `\r\n`), or `None` at the end; an
    /// error is the one-line reason the line could not be read.
    pub(crate) fn next_line(&mut self) -> Option<Result<&str, String>> {
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
            return Some(Err(too_long()));
        }
        let mut text = match std::str::from_utf8(&self.buffer) {
            Ok(text) => text,
            Err(_) => return Some(Err("line is not valid UTF-8".into())),
        };
        if self.line == 1 {
            text = text.strip_prefix('\u{feff}').unwrap_or(text);
        }
        Some(Ok(text))
    }

    /// Reads up to and including the next `\n` into the buffer; false at the end of input.
    fn fill(&mut self) -> Result<bool, String> {
        loop {
            let available = match self.input.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("cannot read: {e}")),
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
                return Err(too_long());
            }
            self.buffer.extend_from_slice(&available[..take]);
            self.input.consume(take);
            if done {
                return Ok(true);
            }
        }
    }
}

fn too_long() -> String {
    format!("line too long (more than {MAX_LINE_BYTES} bytes)")
}

/// `token` quoted for an error message: at most [`MAX_QUOTED_CHARS`] characters, cut on a
/// character boundary with an ellipsis.
pub(crate) fn quote(token: &str) -> String {
    match token.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("'{}…'", &token[..cut]),
        None => format!("'{token}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8]) -> Vec<Result<String, String>> {
        let mut lines = Lines::new(input);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line() {
            let failed = line.is_err();
            out.push(line.map(str::to_string));
            if failed {
                break;
            }
        }
        out
    }

    #[test]
    fn lines_strip_terminators_and_a_leading_bom_only() {
        assert_eq!(
            all(b"\xef\xbb\xbfa\r\nb\n\xef\xbb\xbfc"),
            vec![Ok("a".into()), Ok("b".into()), Ok("\u{feff}c".into())]
        );
        assert_eq!(all(b"a\xff\n"), vec![Err("line is not valid UTF-8".into())]);
        assert!(all(b"").is_empty());
    }

    #[test]
    fn a_line_over_the_cap_is_refused_without_reading_on() {
        let exact = vec![b'a'; MAX_LINE_BYTES];
        assert_eq!(all(&exact).len(), 1);
        let mut long = vec![b'a'; MAX_LINE_BYTES + 1];
        long.extend_from_slice(b"\nb\n");
        assert_eq!(all(&long), vec![Err(too_long())]);
    }

    #[test]
    fn quotes_are_cut_on_a_character_boundary() {
        assert_eq!(quote("ab"), "'ab'");
        let quoted = quote(&"é".repeat(100));
        assert_eq!(quoted.chars().count(), MAX_QUOTED_CHARS + 3);
    }
}
