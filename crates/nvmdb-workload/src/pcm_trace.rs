//! The PCM access-trace format of `nvmdb pcm replay`, streaming: one operation per line,
//! `#` starts a comment, addresses are decimal or `0x` hex.
//!
//! - `R <addr> <len>`: read `len` bytes (at least 1) from `addr`.
//! - `W <addr> <hexbytes>`: write the bytes (an even number of hex digits, at least two),
//!   the first at `addr`.
//!
//! Extra fields are errors, and so is any range that crosses 2^64 or ends past the
//! device's capacity. Lines are at most 1 MiB (so a write carries at most 512 KiB).

use std::io::BufRead;

use crate::lines::{quote, Lines};
use crate::traces::{parse_hex_bytes, TraceError};

/// One PCM trace operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PcmOp {
    /// Read `len` bytes from `addr`.
    Read {
        /// First byte.
        addr: u64,
        /// Bytes, at least 1.
        len: u64,
    },
    /// Write `data` from `addr`.
    Write {
        /// First byte.
        addr: u64,
        /// The bytes, at least one.
        data: Vec<u8>,
    },
}

/// A streaming PCM trace parser over a device of `capacity_bytes`.
#[derive(Debug)]
pub struct PcmTraceReader<R> {
    lines: Lines<R>,
    capacity_bytes: u64,
    failed: bool,
}

impl<R: BufRead> PcmTraceReader<R> {
    /// A reader of `input` for a device of `capacity_bytes`.
    pub fn new(input: R, capacity_bytes: u64) -> PcmTraceReader<R> {
        PcmTraceReader { lines: Lines::new(input), capacity_bytes, failed: false }
    }

    /// The number of the line last read, from 1.
    pub fn line(&self) -> u64 {
        self.lines.line()
    }

    fn next_op(&mut self) -> Option<Result<PcmOp, TraceError>> {
        loop {
            let parsed = match self.lines.next_line()? {
                Ok(text) => parse_line(text, self.capacity_bytes),
                Err(e) => Err(e.to_string()),
            };
            match parsed {
                Ok(None) => continue,
                Ok(Some(op)) => return Some(Ok(op)),
                Err(message) => return Some(Err(TraceError { line: self.lines.line(), message })),
            }
        }
    }
}

impl<R: BufRead> Iterator for PcmTraceReader<R> {
    type Item = Result<PcmOp, TraceError>;

    /// The next operation; after an error, `None`.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.next_op();
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}

fn parse_addr(token: &str) -> Result<u64, String> {
    let parsed = match token.strip_prefix("0x").or_else(|| token.strip_prefix("0X")) {
        // from_str_radix takes a sign; an address does not.
        Some(hex) if !hex.starts_with('+') => u64::from_str_radix(hex, 16).ok(),
        Some(_) => None,
        None => token.parse::<u64>().ok(),
    };
    parsed.ok_or_else(|| format!("{} is not a decimal or 0x-hex address", quote(token)))
}

fn check_range(addr: u64, len: u64, capacity: u64) -> Result<(), String> {
    match addr.checked_add(len) {
        None => Err(format!("byte range {addr:#x}+{len} crosses 2^64")),
        Some(end) if end > capacity => Err(format!("byte range {addr:#x}+{len} ends past the {capacity}-byte device")),
        Some(_) => Ok(()),
    }
}

/// Parses one line: `Ok(None)` for a blank or comment line.
pub fn parse_line(line: &str, capacity_bytes: u64) -> Result<Option<PcmOp>, String> {
    let content = line.split('#').next().unwrap_or("").trim();
    let fields: Vec<&str> = content.split_whitespace().collect();
    let op = match fields.as_slice() {
        [] => return Ok(None),
        ["R", addr, len] => {
            let len = len.parse::<u64>().map_err(|_| format!("read length {} is not a number", quote(len)))?;
            if len == 0 {
                return Err("read length must be positive".into());
            }
            PcmOp::Read { addr: parse_addr(addr)?, len }
        }
        ["W", addr, hex] => PcmOp::Write { addr: parse_addr(addr)?, data: parse_hex_bytes(hex)? },
        ["R", ..] => return Err(format!("expected 'R <addr> <len>', found {} fields", fields.len())),
        ["W", ..] => return Err(format!("expected 'W <addr> <hexbytes>', found {} fields", fields.len())),
        [op, ..] => return Err(format!("unknown operation {} (expected R or W)", quote(op))),
    };
    match &op {
        PcmOp::Read { addr, len } => check_range(*addr, *len, capacity_bytes)?,
        PcmOp::Write { addr, data } => check_range(*addr, data.len() as u64, capacity_bytes)?,
    }
    Ok(Some(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: u64 = 1 << 40;

    #[test]
    fn operations_parse() {
        assert_eq!(parse_line("R 0x40 8 # c", CAP), Ok(Some(PcmOp::Read { addr: 64, len: 8 })));
        assert_eq!(parse_line("W 3 0aFf", CAP), Ok(Some(PcmOp::Write { addr: 3, data: vec![0x0a, 0xff] })));
        assert_eq!(parse_line("  # only a comment", CAP), Ok(None));
        let all: Vec<_> = PcmTraceReader::new(&b"\xef\xbb\xbfR 0 1\n\nW 0 00\n"[..], CAP).collect();
        assert_eq!(all.len(), 2);
        assert!(all.iter().all(Result::is_ok));
    }

    #[test]
    fn bad_lines_say_why() {
        let err = |line: &str| parse_line(line, CAP).unwrap_err();
        assert!(err("R 18446744073709551615 1").contains("crosses 2^64"));
        assert!(err("R 0 1099511627777").contains("ends past the 1099511627776-byte device"));
        assert!(err("W 0xffffffffff 0000").contains("ends past"));
        assert!(err("R 0 0").contains("positive"));
        assert!(err("R 0 1 2").contains("found 4 fields"));
        assert!(err("W 0 abc").contains("odd number"));
        assert!(err("W 0 +f").contains("not hex data"));
        assert!(err("R 0x+1 1").contains("address"));
        assert!(err("R -1 1").contains("address"));
        assert!(err("X 1").contains("unknown operation 'X'"));
        assert!(err(&format!("W 0 {}", "z".repeat(500))).len() < 120);
        let mut reader = PcmTraceReader::new(&b"R 0 1\nR 0 0\nR 0 1\n"[..], CAP);
        assert!(reader.next().unwrap().is_ok());
        assert_eq!(reader.next().unwrap().unwrap_err().line, 2);
        assert!(reader.next().is_none());
    }
}
