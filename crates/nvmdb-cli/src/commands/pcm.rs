//! `nvmdb pcm replay`: device-level PCM trace replay.

use std::io::BufReader;

use clap::{Args, Subcommand};
use nvmdb_device::{FlipNWrite, Pcm, PcmConfig};
use nvmdb_workload::pcm_trace::{PcmOp, PcmTraceReader};
use serde::Serialize;

use crate::error::CliError;
use crate::output::Output;

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

/// The most a write of `len` bytes grows the sparse cell image: it touches at most
/// len/4 KiB + 2 chunks of 64 line records, 10,240 bytes each (12 KiB here).
fn growth_bound(len: usize) -> u64 {
    (len as u64 / 4096).saturating_add(2).saturating_mul(12 << 10)
}

fn replay(args: &ReplayArgs) -> Result<(), CliError> {
    let file = crate::input::open(&args.trace)?;
    let mut config = PcmConfig::new(REPLAY_CAPACITY_BYTES);
    if args.flip_n_write {
        config.flip_n_write =
            Some(FlipNWrite::new(args.flip_bits).map_err(|e| CliError::input(format!("--flip-bits: {e}")))?);
    }
    let mut pcm = Pcm::new(config).map_err(|e| CliError::failed(e.to_string()))?;
    let mut operations = 0u64;
    let mut reader = PcmTraceReader::new(BufReader::new(file), REPLAY_CAPACITY_BYTES);
    let available = crate::limits::memory_limit();
    let (mut unmeasured_growth, mut measured) = (0u64, 0u64);
    while let Some(op) = reader.next() {
        nvmdb_cancel::check()?;
        let op = op.map_err(|e| CliError::at_line(&args.trace, e.line, e.message))?;
        // Writes allocate cells sparsely, so scattered writes grow the image; stop before
        // it outgrows the memory available. Measuring walks the image, so it is measured
        // only once the writes since the last look could have grown it by a quarter (or by
        // 1/64 of the memory available): a write touches at most len/4 KiB + 2 chunks of at
        // most 12 KiB each. The image can so pass half the memory by at most an eighth.
        if let PcmOp::Write { data, .. } = &op {
            unmeasured_growth = unmeasured_growth.saturating_add(growth_bound(data.len()));
        }
        if unmeasured_growth >= (available.bytes / 64).max(measured / 4) {
            unmeasured_growth = 0;
            measured = pcm.heap_bytes() as u64;
            if measured > available.bytes / 2 {
                let line = reader.line();
                let what = format!(
                    "the cells written up to line {line} need more than half the {} MiB available ({})",
                    available.bytes >> 20,
                    available.source
                );
                return Err(CliError::input(format!("{}: {what}", args.trace)));
            }
        }
        // The reader checked the range against the device; a refusal here is a bug, exit 1.
        let done = match op {
            // Counted, not copied: a read's data is never used.
            PcmOp::Read { addr, len } => pcm.count_read(addr, len).map(|_| ()),
            PcmOp::Write { addr, data } => pcm.write_bytes(addr, &data).map(|_| ()),
        };
        operations = operations.saturating_add(1);
        done.map_err(|e| CliError::failed(format!("{}: operation {operations}: {e}", args.trace)))?;
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
    Output::new().report(&report, args.json)
}
