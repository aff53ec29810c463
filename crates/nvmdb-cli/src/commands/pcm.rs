//! `nvmdb pcm replay`: device-level PCM trace replay.

use clap::{Args, Subcommand};
use nvmdb_device::{FlipNWrite, Pcm, PcmConfig};
use serde::Serialize;

use crate::error::{print_json, read_input, CliError};

/// PCM device commands.
#[derive(Debug, Subcommand)]
pub enum PcmCommand {
    /// Replay a PCM access trace at device level (no cache, default CIDR 2011 parameters).
    ///
    /// One operation per line; `#` starts a comment. Addresses are decimal or 0x hex.
    /// `R <addr> <len>` reads len bytes; `W <addr> <hexbytes>` writes the bytes, the
    /// first at addr. All cells start at 0.
    Replay(ReplayArgs),
}

/// Arguments of `nvmdb pcm replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The trace file.
    #[arg(long)]
    pub trace: String,
    /// Enable Flip-N-Write (one flip cell per --flip-bits data bits).
    #[arg(long)]
    pub flip_n_write: bool,
    /// Data bits per flip cell with --flip-n-write: 8, 16, 32 or 64.
    #[arg(long, default_value_t = 64, value_parser = clap::builder::TypedValueParser::map(clap::builder::PossibleValuesParser::new(["8", "16", "32", "64"]), |s: String| s.parse::<u32>().expect("listed values parse")))]
    pub flip_bits: u32,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The replay's counters.
#[derive(Debug, Serialize)]
pub struct ReplayReport {
    operations: u64,
    lines_read: u64,
    lines_written: u64,
    words_written: u64,
    bits_written: u64,
    flip_bits_written: u64,
    energy_pj: u64,
    latency_cycles: u64,
    max_cell_writes: u64,
}

/// Device capacity for replays: 1 TiB, allocated sparsely.
const REPLAY_CAPACITY_BYTES: u64 = 1 << 40;

/// Runs a `pcm` subcommand.
pub fn run(command: PcmCommand) -> Result<(), CliError> {
    match command {
        PcmCommand::Replay(args) => replay(&args),
    }
}

fn parse_addr(token: &str) -> Result<u64, String> {
    let parsed = match token.strip_prefix("0x").or_else(|| token.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => token.parse::<u64>(),
    };
    parsed.map_err(|_| format!("'{token}' is not a decimal or 0x-hex address"))
}

fn parse_hex_bytes(token: &str) -> Result<Vec<u8>, String> {
    if !token.len().is_multiple_of(2) {
        return Err(format!("hex data '{token}' has an odd number of digits"));
    }
    (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&token[i..i + 2], 16).map_err(|_| format!("'{token}' is not hex data")))
        .collect()
}

enum TraceOp {
    Read(u64, u64),
    Write(u64, Vec<u8>),
}

fn parse_line(line: &str) -> Result<Option<TraceOp>, String> {
    let content = line.split('#').next().unwrap_or("").trim();
    if content.is_empty() {
        return Ok(None);
    }
    let fields: Vec<&str> = content.split_whitespace().collect();
    match fields.as_slice() {
        ["R", addr, len] => {
            let len = len.parse::<u64>().map_err(|_| format!("read length '{len}' is not a number"))?;
            if len == 0 {
                return Err("read length must be positive".into());
            }
            Ok(Some(TraceOp::Read(parse_addr(addr)?, len)))
        }
        ["W", addr, hex] => Ok(Some(TraceOp::Write(parse_addr(addr)?, parse_hex_bytes(hex)?))),
        ["R", ..] => Err("expected 'R <addr> <len>'".into()),
        ["W", ..] => Err("expected 'W <addr> <hexbytes>'".into()),
        [op, ..] => Err(format!("unknown operation '{op}' (expected R or W)")),
        [] => Ok(None),
    }
}

fn replay(args: &ReplayArgs) -> Result<(), CliError> {
    let text = read_input(&args.trace)?;
    let mut config = PcmConfig::new(REPLAY_CAPACITY_BYTES);
    if args.flip_n_write {
        config.flip_n_write =
            Some(FlipNWrite::new(args.flip_bits).map_err(|e| CliError::input(format!("--flip-bits: {e}")))?);
    }
    let mut pcm = Pcm::new(config).map_err(|e| CliError::failed(e.to_string()))?;
    let mut operations = 0u64;
    for (index, line) in text.lines().enumerate() {
        let at_line = |what: String| CliError::at_line(&args.trace, index + 1, what);
        let Some(op) = parse_line(line).map_err(at_line)? else { continue };
        let result = match op {
            TraceOp::Read(addr, len) => {
                let mut buf = vec![0u8; len.min(1 << 20) as usize];
                read_span(&mut pcm, addr, len, &mut buf)
            }
            TraceOp::Write(addr, data) => pcm.write_bytes(addr, &data).map(|_| ()),
        };
        result.map_err(|e| at_line(e.to_string()))?;
        operations += 1;
    }
    let stats = *pcm.stats();
    let metrics = pcm.config().metrics;
    let report = ReplayReport {
        operations,
        lines_read: stats.lines_read,
        lines_written: stats.lines_written,
        words_written: stats.words_written,
        bits_written: stats.bits_written,
        flip_bits_written: stats.flip_bits_written,
        energy_pj: stats.energy_pj(&metrics),
        latency_cycles: stats.latency_cycles(&metrics),
        max_cell_writes: pcm.wear_report().max_cell_writes,
    };
    if args.json {
        print_json(&report);
    } else {
        let value = serde_json::to_value(&report).expect("report serialises");
        for (key, v) in value.as_object().expect("report is an object") {
            println!("{key:>18}  {v}");
        }
    }
    Ok(())
}

/// Reads `len` bytes in pieces of at most `buf.len()` (1 MiB), so a huge read needs no
/// huge buffer. Pieces break at 1 MiB boundaries, which are line boundaries, so no line
/// is counted twice.
fn read_span(pcm: &mut Pcm, addr: u64, len: u64, buf: &mut [u8]) -> Result<(), nvmdb_device::DeviceError> {
    const PIECE: u64 = 1 << 20;
    let capacity = pcm.config().capacity_bytes;
    let end = addr.checked_add(len).ok_or(nvmdb_device::DeviceError::OutOfRange { addr, len, capacity })?;
    let mut at = addr;
    while at < end {
        let piece_end = end.min((at / PIECE + 1) * PIECE);
        pcm.read_bytes(at, &mut buf[..(piece_end - at) as usize])?;
        at = piece_end;
    }
    Ok(())
}
