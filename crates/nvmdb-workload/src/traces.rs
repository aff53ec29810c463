//! Block-trace parsers for five formats, streaming: a [`TraceReader`] reads one line at a
//! time from any [`BufRead`] and yields [`Request`]s, so traces need not fit in memory.
//! A malformed line is a [`TraceError`] carrying its 1-based line number.
//!
//! Units (see `data/README.md`); every format's times are made relative to the
//! first request's (`Request::time_ns` counts from the trace's start):
//! - `disksim` (DiskSim ASCII, the MQSim traces): `time_ns device lba sectors type`,
//!   sectors of 512 B, type 0 = write, 1 = read.
//! - `msr` (MSR Cambridge CSV): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`,
//!   Timestamp in Windows 100 ns ticks, Type `Read`/`Write`, Offset and Size in bytes.
//! - `spc` (UMass Financial, WebSearch): `ASU,LBA,Size,Opcode,Timestamp[,...]`, LBA in 512 B
//!   sectors, Size in bytes, Opcode `r`/`w` (either case), Timestamp in seconds. The ASU
//!   (application storage unit) is ignored: all ASUs share one address space.
//! - `fiu` (SNIA IODedup): `ts pid process lba size op major minor md5`, ts in ns, lba and
//!   size in 512 B sectors, op `W`/`R`, md5 the hex MD5 of the 4 KB block; writes carry
//!   the MD5 folded to 64 bits (high half XOR low half) as their page's content id.
//! - `simple`: `W|R|T <byte offset> <byte length>`; `#` starts a comment. The format has
//!   no times: every request arrives at time 0.
//!
//! Blank lines are skipped in every format, and so are `#` comment lines.

use std::io::BufRead;
use std::str::FromStr;

use thiserror::Error;

use crate::request::{Content, Op, Request};

/// Bytes per sector in sector-addressed formats.
pub const SECTOR_BYTES: u64 = 512;

/// A trace format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// DiskSim ASCII (MQSim's traces).
    Disksim,
    /// MSR Cambridge CSV.
    Msr,
    /// SPC (UMass).
    Spc,
    /// FIU IODedup, with MD5 content.
    Fiu,
    /// `W|R|T offset length`.
    Simple,
}

impl TraceFormat {
    /// The format names, as the CLI accepts them.
    pub const NAMES: [&'static str; 5] = ["disksim", "msr", "spc", "fiu", "simple"];
}

impl FromStr for TraceFormat {
    type Err = String;

    fn from_str(name: &str) -> Result<TraceFormat, String> {
        match name {
            "disksim" => Ok(TraceFormat::Disksim),
            "msr" => Ok(TraceFormat::Msr),
            "spc" => Ok(TraceFormat::Spc),
            "fiu" => Ok(TraceFormat::Fiu),
            "simple" => Ok(TraceFormat::Simple),
            other => Err(format!("unknown trace format '{other}' (expected one of {})", Self::NAMES.join(", "))),
        }
    }
}

/// A bad trace line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}: {message}")]
pub struct TraceError {
    /// 1-based line number.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

/// One parsed line, with its time in the format's own clock (ns).
struct Parsed {
    time_ns: u64,
    op: Op,
    offset_bytes: u64,
    len_bytes: u64,
    content: Content,
}

/// A streaming trace parser.
#[derive(Debug)]
pub struct TraceReader<R> {
    input: R,
    format: TraceFormat,
    line: u64,
    buffer: String,
    first_time_ns: Option<u64>,
    failed: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// A reader of `format` over `input`.
    pub fn new(input: R, format: TraceFormat) -> TraceReader<R> {
        TraceReader { input, format, line: 0, buffer: String::new(), first_time_ns: None, failed: false }
    }

    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        loop {
            self.buffer.clear();
            self.line += 1;
            match self.input.read_line(&mut self.buffer) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(TraceError { line: self.line, message: format!("cannot read: {e}") })),
            }
            let text = self.buffer.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let parsed = match self.format {
                TraceFormat::Disksim => disksim(text),
                TraceFormat::Msr => msr(text),
                TraceFormat::Spc => spc(text),
                TraceFormat::Fiu => fiu(text),
                TraceFormat::Simple => simple(text),
            };
            return Some(match parsed {
                Ok(p) => {
                    let first = *self.first_time_ns.get_or_insert(p.time_ns);
                    Ok(Request {
                        time_ns: p.time_ns.saturating_sub(first),
                        op: p.op,
                        offset_bytes: p.offset_bytes,
                        len_bytes: p.len_bytes,
                        content: p.content,
                    })
                }
                Err(message) => Err(TraceError { line: self.line, message }),
            });
        }
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Request, TraceError>;

    /// The next request; after an error, `None`.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.next_request();
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}

fn number(field: &str, what: &str) -> Result<u64, String> {
    field.trim().parse::<u64>().map_err(|_| format!("{what} '{}' is not a non-negative integer", field.trim()))
}

fn fields<'a>(text: &'a str, separator: Option<char>, at_least: usize, layout: &str) -> Result<Vec<&'a str>, String> {
    let fields: Vec<&str> = match separator {
        Some(c) => text.split(c).map(str::trim).collect(),
        None => text.split_whitespace().collect(),
    };
    if fields.len() < at_least {
        return Err(format!("expected {at_least} fields ({layout}), found {}", fields.len()));
    }
    Ok(fields)
}

fn sectors_to_bytes(sectors: u64, what: &str) -> Result<u64, String> {
    sectors.checked_mul(SECTOR_BYTES).ok_or_else(|| format!("{what} {sectors} sectors overflows a byte offset"))
}

fn disksim(text: &str) -> Result<Parsed, String> {
    let f = fields(text, None, 5, "time_ns device lba sectors type")?;
    if f.len() > 5 {
        return Err(format!("expected 5 fields (time_ns device lba sectors type), found {}", f.len()));
    }
    let op = match f[4] {
        "0" => Op::Write,
        "1" => Op::Read,
        other => return Err(format!("type '{other}' is not 0 (write) or 1 (read)")),
    };
    number(f[1], "device")?;
    Ok(Parsed {
        time_ns: number(f[0], "time")?,
        op,
        offset_bytes: sectors_to_bytes(number(f[2], "lba")?, "lba")?,
        len_bytes: sectors_to_bytes(number(f[3], "size")?, "size")?,
        content: Content::Unknown,
    })
}

fn msr(text: &str) -> Result<Parsed, String> {
    let layout = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";
    let f = fields(text, Some(','), 7, layout)?;
    let op = match f[3].to_ascii_lowercase().as_str() {
        "read" => Op::Read,
        "write" => Op::Write,
        _ => return Err(format!("type '{}' is not Read or Write", f[3])),
    };
    let ticks = number(f[0], "timestamp")?;
    Ok(Parsed {
        time_ns: ticks.checked_mul(100).ok_or_else(|| format!("timestamp {ticks} overflows"))?,
        op,
        offset_bytes: number(f[4], "offset")?,
        len_bytes: number(f[5], "size")?,
        content: Content::Unknown,
    })
}

fn spc(text: &str) -> Result<Parsed, String> {
    let f = fields(text, Some(','), 5, "ASU,LBA,Size,Opcode,Timestamp")?;
    number(f[0], "ASU")?;
    let op = match f[3] {
        "r" | "R" => Op::Read,
        "w" | "W" => Op::Write,
        other => return Err(format!("opcode '{other}' is not r or w")),
    };
    let seconds: f64 = f[4].parse().map_err(|_| format!("timestamp '{}' is not a number of seconds", f[4]))?;
    if !(seconds.is_finite() && seconds >= 0.0) {
        return Err(format!("timestamp '{}' is not a non-negative number of seconds", f[4]));
    }
    Ok(Parsed {
        time_ns: (seconds * 1e9).round() as u64,
        op,
        offset_bytes: sectors_to_bytes(number(f[1], "lba")?, "lba")?,
        len_bytes: number(f[2], "size")?,
        content: Content::Unknown,
    })
}

fn fiu(text: &str) -> Result<Parsed, String> {
    let layout = "ts pid process lba size op major minor md5";
    let f = fields(text, None, 9, layout)?;
    // The process name may contain spaces: the last six fields are fixed.
    let tail = &f[f.len() - 6..];
    number(f[1], "pid")?;
    let op = match tail[2] {
        "W" | "w" => Op::Write,
        "R" | "r" => Op::Read,
        other => return Err(format!("op '{other}' is not W or R")),
    };
    let md5 = tail[5];
    if md5.len() != 32 || !md5.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("md5 '{md5}' is not 32 hex digits"));
    }
    let high = u64::from_str_radix(&md5[..16], 16).expect("checked hex");
    let low = u64::from_str_radix(&md5[16..], 16).expect("checked hex");
    Ok(Parsed {
        time_ns: number(f[0], "ts")?,
        op,
        offset_bytes: sectors_to_bytes(number(tail[0], "lba")?, "lba")?,
        len_bytes: sectors_to_bytes(number(tail[1], "size")?, "size")?,
        content: if op == Op::Write { Content::PageIds(vec![high ^ low]) } else { Content::Unknown },
    })
}

fn simple(text: &str) -> Result<Parsed, String> {
    let text = text.split('#').next().unwrap_or("");
    let f = fields(text, None, 3, "W|R|T offset length")?;
    if f.len() > 3 {
        return Err(format!("expected 3 fields (W|R|T offset length), found {}", f.len()));
    }
    let op = match f[0] {
        "W" => Op::Write,
        "R" => Op::Read,
        "T" => Op::Trim,
        other => return Err(format!("operation '{other}' is not W, R or T")),
    };
    let offset_bytes = number(f[1], "offset")?;
    let len_bytes = number(f[2], "length")?;
    offset_bytes.checked_add(len_bytes).ok_or_else(|| "offset + length overflows".to_string())?;
    Ok(Parsed { time_ns: 0, op, offset_bytes, len_bytes, content: Content::Unknown })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, format: TraceFormat) -> Vec<Result<Request, TraceError>> {
        TraceReader::new(text.as_bytes(), format).collect()
    }

    fn ok(text: &str, format: TraceFormat) -> Vec<Request> {
        parse(text, format).into_iter().map(Result::unwrap).collect()
    }

    fn error(text: &str, format: TraceFormat) -> TraceError {
        parse(text, format).into_iter().find_map(Result::err).expect("an error")
    }

    #[test]
    fn disksim_lines_and_errors() {
        let r = ok("938513000 4 264719034 16 0\n\n938828000 3 8 8 1\n", TraceFormat::Disksim);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].time_ns, r[0].op, r[0].offset_bytes, r[0].len_bytes), (0, Op::Write, 264719034 * 512, 8192));
        assert_eq!((r[1].time_ns, r[1].op, r[1].offset_bytes, r[1].len_bytes), (315_000, Op::Read, 4096, 4096));
        let e = error("1 0 8 8 0\n2 0 8 8 7\n", TraceFormat::Disksim);
        assert_eq!(e.line, 2);
        assert!(e.message.contains("type '7'"), "{e}");
        assert_eq!(
            error("1 0 x 8 0\n", TraceFormat::Disksim).to_string(),
            "line 1: lba 'x' is not a non-negative integer"
        );
        assert_eq!(error("1 0 8\n", TraceFormat::Disksim).line, 1);
    }

    #[test]
    fn msr_lines_and_errors() {
        let text = "128166372003061629,hm,1,Write,3154152448,4096,1331\n128166372003071629,hm,1,Read,0,512,20\n";
        let r = ok(text, TraceFormat::Msr);
        assert_eq!((r[0].time_ns, r[0].op, r[0].offset_bytes, r[0].len_bytes), (0, Op::Write, 3154152448, 4096));
        assert_eq!((r[1].time_ns, r[1].op, r[1].len_bytes), (1_000_000, Op::Read, 512));
        let e = error("1,hm,1,Write,0,4096,1\n2,hm,1,Erase,0,4096,1\n", TraceFormat::Msr);
        assert_eq!(e.line, 2);
        assert!(e.message.contains("Erase"));
        assert!(error("1,hm,1,Write\n", TraceFormat::Msr).message.contains("expected 7 fields"));
    }

    #[test]
    fn spc_lines_and_errors() {
        let r = ok("0,20941264,8192,W,0.551706\n1,3,512,r,0.552\n", TraceFormat::Spc);
        assert_eq!((r[0].time_ns, r[0].op, r[0].offset_bytes, r[0].len_bytes), (0, Op::Write, 20941264 * 512, 8192));
        assert_eq!((r[1].time_ns, r[1].op, r[1].offset_bytes), (294_000, Op::Read, 1536));
        let e = error("0,1,512,w,0.1\n0,1,512,w,soon\n", TraceFormat::Spc);
        assert_eq!((e.line, e.message.contains("soon")), (2, true));
        assert!(error("0,1,512,x,0.1\n", TraceFormat::Spc).message.contains("opcode"));
    }

    #[test]
    fn fiu_lines_carry_folded_md5() {
        let text = "89966543 4680 syslogd 1623568 8 W 6 0 0123456789abcdef0000000000000001\n\
                    89966600 4680 my proc 64 8 R 6 0 ffffffffffffffffffffffffffffffff\n";
        let r = ok(text, TraceFormat::Fiu);
        assert_eq!((r[0].op, r[0].offset_bytes, r[0].len_bytes), (Op::Write, 1623568 * 512, 4096));
        assert_eq!(r[0].content, Content::PageIds(vec![0x0123_4567_89ab_cdef ^ 1]));
        assert_eq!((r[1].time_ns, r[1].op, r[1].content.clone()), (57, Op::Read, Content::Unknown));
        let e = error("1 2 p 0 8 W 6 0 xyz\n", TraceFormat::Fiu);
        assert!(e.message.contains("md5 'xyz'"), "{e}");
    }

    #[test]
    fn simple_lines_comments_and_errors() {
        let r = ok("# header\nW 0 4096\nR 100 10 # comment\nT 8192 4096\n", TraceFormat::Simple);
        assert_eq!(r.len(), 3);
        assert_eq!((r[0].op, r[0].offset_bytes, r[0].len_bytes), (Op::Write, 0, 4096));
        assert_eq!((r[1].op, r[1].offset_bytes, r[1].len_bytes), (Op::Read, 100, 10));
        assert_eq!(r[2].op, Op::Trim);
        let e = error("W 0 4096\n\nX 0 1\n", TraceFormat::Simple);
        assert_eq!(e.to_string(), "line 3: operation 'X' is not W, R or T");
        assert!(error("W 0 -1\n", TraceFormat::Simple).message.contains("length '-1'"));
    }

    #[test]
    fn iteration_stops_after_an_error_and_formats_parse_by_name() {
        let all = parse("W 0 1\nbad\nW 0 1\n", TraceFormat::Simple);
        assert_eq!(all.len(), 2);
        assert_eq!("fiu".parse::<TraceFormat>(), Ok(TraceFormat::Fiu));
        assert!("csv".parse::<TraceFormat>().unwrap_err().contains("disksim, msr"));
    }
}
