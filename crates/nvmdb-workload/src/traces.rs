//! Block-trace parsers for five formats, streaming: a [`TraceReader`] reads one line at a
//! time from any [`BufRead`] and yields [`Request`]s, so traces need not fit in memory.
//! A malformed line is a [`TraceError`] carrying its 1-based line number.
//!
//! Units (see `data/README.md`); every format's times are made relative to the
//! first request's (`Request::time_ns` counts from the trace's start):
//! - `disksim` (DiskSim ASCII, the MQSim traces): `time_ns device lba sectors type`,
//!   sectors of 512 B, type 0 = write, 1 = read.
//! - `msr` (MSR Cambridge CSV): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`,
//!   Timestamp in Windows 100 ns ticks, Type `Read`/`Write`, Offset and Size in bytes;
//!   DiskNumber and ResponseTime (ticks) are checked to be non-negative integers, then unused.
//! - `spc` (UMass Financial, WebSearch): `ASU,LBA,Size,Opcode,Timestamp[,...]`, LBA in 512 B
//!   sectors, Size in bytes, Opcode `r`/`w` (either case), Timestamp in seconds. The ASU
//!   (application storage unit) is ignored: all ASUs share one address space.
//! - `fiu` (SNIA IODedup): `ts pid process lba size op major minor md5`, ts in ns, lba and
//!   size in 512 B sectors, op `W`/`R`, md5 the hex MD5 of the 4 KB block; writes carry
//!   the MD5 folded to 64 bits (high half XOR low half) as their page's content id.
//! - `simple`: `W|R|T <byte offset> <byte length>`, or `W <byte offset> 0x<hex bytes>`: a
//!   write that carries its data (two hex digits a byte, at least one byte; its length is
//!   the bytes' count; a length is decimal, so a `0x` field is always data); `#` starts a
//!   comment. The format has no times: every request arrives at time 0.
//!
//! Blank lines are skipped in every format, and so are `#` comment lines. Every format
//! refuses, with the line's number: a line longer than 1 MiB or not UTF-8; a missing or
//! extra field (except where noted: SPC ignores fields after the fifth, and FIU takes any
//! fields between the pid and the last six as the process name); a request of zero bytes;
//! a byte range that crosses 2^64; a time that overflows u64 ns; a time earlier than the
//! previous request's; and, with [`TraceReader::with_max_request_bytes`], a request longer
//! than the device. A UTF-8 byte-order mark before the first line is skipped.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::str::FromStr;

use thiserror::Error;

use crate::lines::{quote, Lines};
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
    /// DiskSim's device number (0 in the other formats).
    device: u64,
    time_ns: u64,
    op: Op,
    offset_bytes: u64,
    len_bytes: u64,
    content: Content,
}

/// A streaming trace parser.
#[derive(Debug)]
pub struct TraceReader<R> {
    lines: Lines<R>,
    format: TraceFormat,
    first_time_ns: Option<u64>,
    last_time_ns: u64,
    max_request_bytes: u64,
    failed: bool,
    disksim_layout: Option<DisksimLayout>,
}

/// Where each DiskSim device's requests go. The device numbers of a DiskSim trace are
/// separate disks that the file gives one LBA space; each device gets its own range of
/// the simulated device (in ascending device number, the capacity split evenly in whole
/// pages, offsets beyond a range wrapping within it), and its requests move back by the
/// device's most common misalignment to a page, so that its page-sized requests land on
/// page boundaries. A request may still cross into the next range at its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisksimLayout {
    span_bytes: u64,
    /// Device number → (range index, shift in bytes).
    devices: BTreeMap<u64, (u64, u64)>,
}

impl DisksimLayout {
    /// Scans a DiskSim trace (a first pass over the input) for its devices and each
    /// device's most common `lba mod (page_bytes / 512)` (ties to the smallest).
    pub fn scan<R: BufRead>(input: R, page_bytes: u64, capacity_bytes: u64) -> Result<DisksimLayout, TraceError> {
        let sectors_per_page = (page_bytes / SECTOR_BYTES).max(1);
        let mut counts: BTreeMap<u64, BTreeMap<u64, u64>> = BTreeMap::new();
        let mut lines = Lines::new(input);
        loop {
            let text = match lines.next_line() {
                None => break,
                Some(Ok(text)) => text.trim(),
                Some(Err(e)) => return Err(TraceError { line: lines.line(), message: e.to_string() }),
            };
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let parsed = disksim(text);
            let line = lines.line();
            let parsed = parsed.map_err(|message| TraceError { line, message })?;
            let misalignment = (parsed.offset_bytes / SECTOR_BYTES).checked_rem(sectors_per_page).unwrap_or(0);
            let n = counts.entry(parsed.device).or_default().entry(misalignment).or_insert(0);
            *n = n.saturating_add(1);
        }
        let devices_count = (counts.len() as u64).max(1);
        let span_pages = capacity_bytes.checked_div(page_bytes).and_then(|p| p.checked_div(devices_count)).unwrap_or(0);
        let span_bytes = span_pages.max(1).saturating_mul(page_bytes.max(1));
        let devices = counts
            .into_iter()
            .zip(0u64..)
            .map(|((device, by_shift), index)| {
                let shift = by_shift.iter().max_by_key(|&(&m, &n)| (n, std::cmp::Reverse(m))).map_or(0, |(&m, _)| m);
                (device, (index, shift.saturating_mul(SECTOR_BYTES)))
            })
            .collect();
        Ok(DisksimLayout { span_bytes, devices })
    }

    /// Devices found.
    pub fn devices(&self) -> usize {
        self.devices.len()
    }

    /// The byte offset in the simulated device of a request of `device` at `offset_bytes`
    /// (a device the scan did not see keeps its offset).
    pub fn place(&self, device: u64, offset_bytes: u64) -> u64 {
        let Some(&(index, shift)) = self.devices.get(&device) else { return offset_bytes };
        let within = offset_bytes.saturating_sub(shift).checked_rem(self.span_bytes).unwrap_or(0);
        index.saturating_mul(self.span_bytes).saturating_add(within)
    }
}

impl<R: BufRead> TraceReader<R> {
    /// A reader of `format` over `input`.
    pub fn new(input: R, format: TraceFormat) -> TraceReader<R> {
        TraceReader {
            lines: Lines::new(input),
            format,
            first_time_ns: None,
            last_time_ns: 0,
            max_request_bytes: u64::MAX,
            failed: false,
            disksim_layout: None,
        }
    }

    /// Places each DiskSim device's requests by `layout` (see [`DisksimLayout`]).
    pub fn with_disksim_layout(mut self, layout: DisksimLayout) -> TraceReader<R> {
        self.disksim_layout = Some(layout);
        self
    }

    /// Refuses requests longer than `bytes` (a device's capacity).
    pub fn with_max_request_bytes(mut self, bytes: u64) -> TraceReader<R> {
        self.max_request_bytes = bytes;
        self
    }

    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        loop {
            let text = match self.lines.next_line()? {
                Ok(text) => text.trim(),
                Err(e) => return Some(Err(TraceError { line: self.lines.line(), message: e.to_string() })),
            };
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
            let line = self.lines.line();
            return Some(parsed.and_then(|p| self.check(p)).map_err(|message| TraceError { line, message }));
        }
    }

    /// The checks common to every format; times become relative to the first request's.
    fn check(&mut self, p: Parsed) -> Result<Request, String> {
        if p.len_bytes == 0 {
            return Err("request of 0 bytes".into());
        }
        if p.offset_bytes.checked_add(p.len_bytes).is_none() {
            return Err(format!("byte range {}+{} crosses 2^64", p.offset_bytes, p.len_bytes));
        }
        if p.len_bytes > self.max_request_bytes {
            return Err(format!(
                "request of {} bytes is longer than the device ({} bytes)",
                p.len_bytes, self.max_request_bytes
            ));
        }
        if self.first_time_ns.is_some() && p.time_ns < self.last_time_ns {
            return Err(format!(
                "time {} ns is earlier than the previous request's {} ns",
                p.time_ns, self.last_time_ns
            ));
        }
        self.last_time_ns = p.time_ns;
        let first = *self.first_time_ns.get_or_insert(p.time_ns);
        let offset_bytes = match &self.disksim_layout {
            Some(layout) => layout.place(p.device, p.offset_bytes),
            None => p.offset_bytes,
        };
        Ok(Request {
            // Times ascend (checked above) from the first one, so this never saturates.
            time_ns: p.time_ns.saturating_sub(first),
            op: p.op,
            offset_bytes,
            len_bytes: p.len_bytes,
            content: p.content,
        })
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
    field.trim().parse::<u64>().map_err(|_| format!("{what} {} is not a non-negative integer", quote(field.trim())))
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
        other => return Err(format!("type {} is not 0 (write) or 1 (read)", quote(other))),
    };
    Ok(Parsed {
        device: number(f[1], "device")?,
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
    if f.len() > 7 {
        return Err(format!("expected 7 fields ({layout}), found {}", f.len()));
    }
    let op = match f[3].to_ascii_lowercase().as_str() {
        "read" => Op::Read,
        "write" => Op::Write,
        _ => return Err(format!("type {} is not Read or Write", quote(f[3]))),
    };
    let ticks = number(f[0], "timestamp")?;
    // Not used, but checked: a line whose disk or response time is not a number is no
    // MSR line.
    number(f[2], "disk number")?;
    number(f[6], "response time")?;
    Ok(Parsed {
        device: 0,
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
        other => return Err(format!("opcode {} is not r or w", quote(other))),
    };
    let seconds: f64 = f[4].parse().map_err(|_| format!("timestamp {} is not a number of seconds", quote(f[4])))?;
    if !(seconds.is_finite() && seconds >= 0.0) {
        return Err(format!("timestamp {} is not a non-negative number of seconds", quote(f[4])));
    }
    let Some(time_ns) = whole_ns((seconds * 1e9).round()) else {
        return Err(format!("timestamp {} overflows u64 nanoseconds", quote(f[4])));
    };
    Ok(Parsed {
        device: 0,
        time_ns,
        op,
        offset_bytes: sectors_to_bytes(number(f[1], "lba")?, "lba")?,
        len_bytes: number(f[2], "size")?,
        content: Content::Unknown,
    })
}

/// A whole, non-negative number of nanoseconds as u64, or `None` at 2^64 or more.
#[expect(
    clippy::cast_possible_truncation,
    reason = "ns is a whole number checked to lie in [0, 2^64), so the cast is exact"
)]
fn whole_ns(ns: f64) -> Option<u64> {
    // 2^64 as f64: anything at or above it does not fit in u64 ns.
    (0.0..18_446_744_073_709_551_616.0).contains(&ns).then_some(ns as u64)
}

fn fiu(text: &str) -> Result<Parsed, String> {
    let layout = "ts pid process lba size op major minor md5";
    let f = fields(text, None, 9, layout)?;
    // The process name may contain spaces: the last six fields are fixed.
    let tail = f.last_chunk::<6>().expect("fields returns at least 9 fields");
    number(f[1], "pid")?;
    let op = match tail[2] {
        "W" | "w" => Op::Write,
        "R" | "r" => Op::Read,
        other => return Err(format!("op {} is not W or R", quote(other))),
    };
    let md5 = tail[5];
    if md5.len() != 32 || !md5.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("md5 {} is not 32 hex digits", quote(md5)));
    }
    let high = u64::from_str_radix(&md5[..16], 16).expect("checked hex");
    let low = u64::from_str_radix(&md5[16..], 16).expect("checked hex");
    Ok(Parsed {
        device: 0,
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
        other => return Err(format!("operation {} is not W, R or T", quote(other))),
    };
    let offset_bytes = number(f[1], "offset")?;
    let (len_bytes, content) = match f[2].strip_prefix("0x").or_else(|| f[2].strip_prefix("0X")) {
        Some(_) if op != Op::Write => return Err(format!("only W carries data, not {}", f[0])),
        Some(hex) => {
            let data = parse_hex_bytes(hex)?;
            (data.len() as u64, Content::Bytes(data))
        }
        None => (number(f[2], "length")?, Content::Unknown),
    };
    Ok(Parsed { device: 0, time_ns: 0, op, offset_bytes, len_bytes, content })
}

/// Hex data (an even number of hex digits) as bytes; shared with the PCM trace (`pcm_trace`).
pub(crate) fn parse_hex_bytes(token: &str) -> Result<Vec<u8>, String> {
    if !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{} is not hex data", quote(token)));
    }
    if !token.len().is_multiple_of(2) {
        return Err(format!("hex data {} has an odd number of digits", quote(token)));
    }
    let digit = |b: u8| (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok()).expect("checked hex");
    Ok(token.as_bytes().chunks_exact(2).map(|pair| digit(pair[0]) << 4 | digit(pair[1])).collect())
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
    fn disksim_devices_get_their_own_ranges_and_alignment() {
        // Device 3: mostly 2 sectors past a 4 KB page; device 7 aligned.
        let text = "1 3 2 8 0\n2 3 10 8 0\n3 3 7 8 1\n4 7 8 8 0\n";
        let layout = DisksimLayout::scan(text.as_bytes(), 4096, 4 * 4096).unwrap();
        assert_eq!(layout.devices(), 2);
        let offsets: Vec<u64> = TraceReader::new(text.as_bytes(), TraceFormat::Disksim)
            .with_disksim_layout(layout)
            .map(|r| r.unwrap().offset_bytes)
            .collect();
        // Device 3 in pages 0..2 shifted back by 1 KB; device 7 in pages 2..4.
        assert_eq!(offsets, vec![0, 4096, 2560, 2 * 4096 + 4096]);
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
        // A write may carry its data in hex: its length is the bytes'.
        let r = ok("W 4096 0x00ff10\nW 0 0XAb\n", TraceFormat::Simple);
        assert_eq!((r[0].offset_bytes, r[0].len_bytes, &r[0].content), (4096, 3, &Content::Bytes(vec![0, 0xff, 0x10])));
        assert_eq!((r[1].len_bytes, &r[1].content), (1, &Content::Bytes(vec![0xab])));
        assert!(error("W 0 0xabc\n", TraceFormat::Simple).message.contains("odd number"));
        assert!(error("W 0 0xzz\n", TraceFormat::Simple).message.contains("not hex"));
        assert!(error("W 0 0x\n", TraceFormat::Simple).message.contains("0 bytes"));
        assert_eq!(error("R 0 0x00\n", TraceFormat::Simple).message, "only W carries data, not R");
    }

    #[test]
    fn every_format_refuses_wrapping_empty_and_backward_requests() {
        let wraps = [
            ("1 0 36028797018963967 1 0", TraceFormat::Disksim),
            ("1,h,0,Write,18446744073709551615,4096,1", TraceFormat::Msr),
            ("0,36028797018963967,4096,w,0.1", TraceFormat::Spc),
            ("1 2 p 36028797018963967 8 W 6 0 0123456789abcdef0000000000000001", TraceFormat::Fiu),
            ("W 18446744073709551000 4096", TraceFormat::Simple),
        ];
        for (line, format) in wraps {
            assert!(error(line, format).message.contains("crosses 2^64"), "{format:?}: {}", error(line, format));
        }
        assert!(error("1 0 0 0 0\n", TraceFormat::Disksim).message.contains("0 bytes"));
        assert!(error("W 0 0\n", TraceFormat::Simple).message.contains("0 bytes"));
        let e = error("2 0 8 8 0\n1 0 8 8 0\n", TraceFormat::Disksim);
        assert_eq!((e.line, e.message.contains("earlier")), (2, true));
        assert!(error("0,1,512,w,1e300\n", TraceFormat::Spc).message.contains("overflows"));
        assert!(error("1,hm,1,Write,0,4096,1,extra\n", TraceFormat::Msr).message.contains("found 8"));
        // SPC's optional trailing fields are ignored, as its specification allows.
        assert_eq!(ok("0,1,512,w,0.1,x,y\n", TraceFormat::Spc).len(), 1);
        let capped: Vec<_> =
            TraceReader::new(&b"W 0 4096\nW 0 8192\n"[..], TraceFormat::Simple).with_max_request_bytes(4096).collect();
        assert!(capped[1].as_ref().unwrap_err().message.contains("longer than the device"));
    }

    #[test]
    fn bom_long_lines_and_long_tokens() {
        assert_eq!(ok("\u{feff}W 0 1\n", TraceFormat::Simple).len(), 1);
        let long = format!("W 0 1\nW 0 {}\n", "9".repeat(2 << 20));
        let e = error(&long, TraceFormat::Simple);
        assert_eq!((e.line, e.message.contains("too long")), (2, true));
        let e = error(&format!("Q{} 0 1\n", "x".repeat(1000)), TraceFormat::Simple);
        assert!(e.message.len() < 120 && e.message.contains('…'), "{e}");
    }

    #[test]
    fn iteration_stops_after_an_error_and_formats_parse_by_name() {
        let all = parse("W 0 1\nbad\nW 0 1\n", TraceFormat::Simple);
        assert_eq!(all.len(), 2);
        assert_eq!("fiu".parse::<TraceFormat>(), Ok(TraceFormat::Fiu));
        assert!("csv".parse::<TraceFormat>().unwrap_err().contains("disksim, msr"));
    }
}
