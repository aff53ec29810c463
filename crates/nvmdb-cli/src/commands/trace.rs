//! `nvmdb trace gen`: writes a synthetic, content-carrying trace in FIU format.

use std::io::Write;

use clap::{Args, Subcommand};
use nvmdb_workload::synth::{fiu_lines, SynthGenerator, SynthParams, SynthWorkload};

use crate::error::CliError;
use crate::output::OutputFile;

/// Trace commands.
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Generate a synthetic trace modelled on the thesis's workloads (FIU format: `ts pid
    /// process lba size op major minor md5`, one line per 4 KB block; read it back with
    /// `ssd replay --format fiu`).
    Gen(GenArgs),
}

/// `trace gen` flags.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// Workload: d1, d2 (desktop: small irregular requests, 25% duplicate content) or
    /// t1, t2, t3 (TPC-C-like: small-delta page updates from a DBMS buffer pool, 30%
    /// duplicate content). Models are described in nvmdb-workload's `synth` module docs.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(["d1", "d2", "t1", "t2", "t3"]))]
    pub workload: String,
    /// Requests to generate, 1 to 10^9 (default: the workload's length, d1 100k, d2 200k,
    /// t1 50k, t2 200k, t3 400k, in the ratio of the thesis's run durations).
    #[arg(long)]
    pub requests: Option<u64>,
    /// Seed of the generator; the same seed gives the same trace.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output file.
    #[arg(long)]
    pub out: String,
    /// Database size (t1–t3) or desktop footprint (d1, d2), MB (at least 4).
    #[arg(long, default_value_t = 1024)]
    pub footprint_mb: u64,
    /// DBMS buffer pool, MB (t1–t3 only; the thesis uses 20 to 100; at most a quarter of
    /// --footprint-mb).
    #[arg(long, default_value_t = 60)]
    pub buffer_pool_mb: u64,
}

/// Runs a trace command.
pub fn run(command: TraceCommand) -> Result<(), CliError> {
    match command {
        TraceCommand::Gen(args) => generate(&args),
    }
}

/// The most requests one run generates (about 60 GB of FIU lines).
const MAX_REQUESTS: u64 = 1_000_000_000;

fn generate(args: &GenArgs) -> Result<(), CliError> {
    let workload: SynthWorkload = args.workload.parse().map_err(|e| CliError::input(format!("--workload: {e}")))?;
    let requests = args.requests.unwrap_or(workload.default_requests());
    if !(1..=MAX_REQUESTS).contains(&requests) {
        return Err(CliError::input(format!("--requests must be 1 to {MAX_REQUESTS}, not {requests}")));
    }
    let buffer_pool_pages = args
        .buffer_pool_mb
        .checked_mul(256)
        .ok_or_else(|| CliError::input(format!("--buffer-pool-mb {} is too large", args.buffer_pool_mb)))?;
    let params =
        SynthParams { workload, requests, seed: args.seed, footprint_mb: args.footprint_mb, buffer_pool_pages };
    let generator =
        SynthGenerator::new(params).map_err(|e| CliError::input(format!("--footprint-mb / --buffer-pool-mb: {e}")))?;
    crate::limits::check_memory("--requests/--footprint-mb/--buffer-pool-mb", params.estimated_memory_bytes())?;
    let mut out =
        OutputFile::create(&args.out).map_err(|e| CliError::flag_io("--out", &args.out, "cannot create", &e))?;
    let mut text = String::new();
    for request in generator {
        nvmdb_cancel::check()?;
        text.clear();
        fiu_lines(&request, &mut text).expect("formatting into a String cannot fail");
        out.write_all(text.as_bytes()).map_err(|e| CliError::unwritable(&args.out, &e))?;
    }
    out.finish()
}
