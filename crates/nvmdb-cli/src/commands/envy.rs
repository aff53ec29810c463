//! `nvmdb envy run` and `nvmdb envy replay`: eNVy, flash as persistent linear memory.

use std::fs::File;
use std::io::{BufReader, Write};

use clap::{Args, Subcommand, ValueEnum};
use nvmdb_device::index;
use nvmdb_device::Activity;
use nvmdb_envy::tpca::{accounts_to_fill, ConvergedRun, Convergence, Tpca, TpcaConfig};
use nvmdb_envy::verify::{AckModel, Check};
use nvmdb_envy::workload::{self, Bimodal};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig, EnvyError};
use nvmdb_workload::lines::{quote, Lines};
use nvmdb_workload::pcm_trace::{self, PcmOp};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use crate::error::CliError;
use crate::output::{Output, OutputFile};

/// eNVy commands.
#[derive(Debug, Subcommand)]
pub enum EnvyCommand {
    /// Run a workload (TPC-A, uniform or bimodal page updates) on a simulated eNVy.
    Run(RunArgs),
    /// Replay a byte-level trace (the `pcm replay` format) on a simulated eNVy.
    ///
    /// One operation per line; `#` starts a comment; addresses are decimal or 0x hex.
    /// `R <addr> <len>` reads len bytes and prints them as lowercase hex, one line per
    /// read; `W <addr> <hexbytes>` writes the bytes. Never-written bytes read as 00.
    /// `B`, `C` and `A` begin, commit and abort a shadow-copy transaction (one open at a
    /// time, at most 64 pages written in it). A power cut rolls an open transaction back;
    /// the trace's remaining lines of that transaction, to its `C` or `A`, are skipped.
    Replay(ReplayArgs),
}

/// A cleaning policy on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Cleaning {
    /// Fewest live pages.
    Greedy,
    /// Oldest segment.
    Fifo,
    /// Locality gathering.
    Locality,
    /// Locality gathering between partitions, FIFO within one.
    Hybrid,
}

/// Options shared by `run` and `replay`.
#[derive(Debug, Args)]
pub struct SystemArgs {
    /// Share of the flash the logical space fills, in (0, 1).
    #[arg(long, default_value_t = 0.8)]
    pub utilization: f64,
    /// The cleaning policy.
    #[arg(long, value_enum, default_value_t = Cleaning::Hybrid)]
    pub cleaning: Cleaning,
    /// Segments per partition of the hybrid policy.
    #[arg(long, default_value_t = 8)]
    pub partition_segments: u32,
    /// SRAM write buffer, MiB (default: 1/256 of the flash, the 2 GB preset's ratio).
    #[arg(long)]
    pub sram_mb: Option<f64>,
    /// Erased segments kept in reserve for cleaning, of the array's 64; the utilisation
    /// may be at most (63 − S) / 64.
    #[arg(long, default_value_t = 1)]
    pub spare_segments: u32,
}

/// Arguments of `nvmdb envy run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The workload.
    #[arg(long, value_enum)]
    pub workload: Workload,
    /// TPC-A transaction arrival rate, per second.
    #[arg(long, default_value_t = 50.0)]
    pub tps: f64,
    /// TPC-A transactions measured (as many again run first as warm-up), at most
    /// 50,000,000.
    #[arg(long, default_value_t = 5_000)]
    pub transactions: u64,
    /// Page updates measured by uniform and bimodal, in turnovers of the flash.
    #[arg(long, default_value_t = 4)]
    pub turnovers: u64,
    /// Share of the accesses that go to the hot data (bimodal).
    #[arg(long, default_value_t = 0.9)]
    pub hot_access: f64,
    /// Share of the data that is hot (bimodal).
    #[arg(long, default_value_t = 0.1)]
    pub hot_data: f64,
    /// Flash array size, MiB.
    #[arg(long, default_value_t = 32)]
    pub flash_mb: u64,
    #[command(flatten)]
    pub system: SystemArgs,
    /// Keep no page bytes in flash (uniform and bimodal only: TPC-A reads its pages
    /// back). Every count, time and energy is the same; the memory check counts about
    /// 100 B of host memory per flash page instead of 350 B (a 64 MiB array peaked at
    /// 12 MB instead of 77 MB), and large arrays run several times faster.
    #[arg(long)]
    pub no_page_bytes: bool,
    #[command(flatten)]
    pub flash: FlashArgs,
    /// Cleaning policy's redistribution between partitions (locality and hybrid with at
    /// least two partitions): a clean moves its victim's live pages divided by N (at least
    /// one) between neighbouring partitions; 0 turns it off. Default 8 (an eighth; the
    /// paper gives no step).
    #[arg(long, value_name = "N")]
    pub redistribution_divisor: Option<u32>,
    #[command(flatten)]
    pub converge: ConvergeArgs,
    /// The run's seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The flash's timing and banks (`nvmdb envy run`).
#[derive(Debug, Args)]
pub struct FlashArgs {
    /// Segment erase time, ms, in 0..=10000 (default 1600: the Intel 28F008SA's typical
    /// 64 KB block erase; 10 s is its maximum).
    #[arg(long, value_name = "MS")]
    pub erase_ms: Option<f64>,
    /// Page program time, µs, in 0..=1000 (default 9: the 28F008SA's typical byte write,
    /// every chip of a bank programming its byte of the page at once).
    #[arg(long, value_name = "US")]
    pub program_us: Option<f64>,
    /// Banks the array's 64 segments are spread over (segment s in bank s mod N): 1, 2,
    /// 4, …, 64. Only with --parallel-banks: one long operation at a time does not see
    /// them.
    #[arg(long, value_name = "N")]
    pub banks: Option<u32>,
    /// Program and erase in different banks at once (the paper's extension).
    #[arg(long)]
    pub parallel_banks: bool,
}

/// Running TPC-A until its throughput has converged (`nvmdb envy run`).
#[derive(Debug, Args)]
pub struct ConvergeArgs {
    /// TPC-A: after --transactions of warm-up, measure until the throughput has
    /// converged instead of measuring --transactions: windows of equal transactions (the
    /// first of at least 16 cleans and 2,000 transactions) are compared each time their
    /// number doubles, until their two halves agree within --tolerance, or the first
    /// window end after --max-turnovers flash turnovers.
    #[arg(long)]
    pub converge: bool,
    /// With --converge: the largest difference of two successive windows' throughputs, as
    /// a share of the larger, in (0, 0.5] (default 0.02).
    #[arg(long, value_name = "F")]
    pub tolerance: Option<f64>,
    /// With --converge: flash turnovers (flash programs / flash pages) after which an
    /// unconverged run stops, in (0, 64] and at most 2^28 flash programs in all (default
    /// 4).
    #[arg(long, value_name = "N")]
    pub max_turnovers: Option<f64>,
}

/// The workloads of `nvmdb envy run`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Workload {
    /// TPC-A over three B+-trees in eNVy.
    Tpca,
    /// Uniform single-page updates.
    Uniform,
    /// Bimodal single-page updates (--hot-access of them to --hot-data of the pages).
    Bimodal,
}

/// Arguments of `nvmdb envy replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The trace file.
    #[arg(long)]
    pub trace: String,
    /// Logical (address space) size, MiB.
    #[arg(long, default_value_t = 16)]
    pub size_mb: u64,
    #[command(flatten)]
    pub system: SystemArgs,
    /// Cut the power after the N-th operation (every R, W, B, C and A line counts), then
    /// recover and continue; an open transaction rolls back. The whole space is checked
    /// against the replay's own model of acknowledged bytes right after the recovery and
    /// at the end. Past the end of the trace, exit 2.
    #[arg(long)]
    pub power_loss_at: Option<u64>,
    /// Cut the power before the N-th device write (SRAM write, flash program or erase;
    /// from 1, counted from the trace's start), inside whatever the controller is doing (a
    /// host write, a flush, a clean, a commit); the operation it falls in is not
    /// acknowledged (each page a write touches may read as before or after it; an open
    /// transaction rolls back). Then as --power-loss-at (not with it); the JSON's
    /// power_loss gives the operation, the device write and the activity. Past the end of
    /// the trace, exit 2.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub power_loss_at_write: Option<u64>,
    /// A second cut, before the M-th device write (from 1) of the recovery after the first
    /// cut: eNVy recovers again from its devices alone. Needs --power-loss-at or
    /// --power-loss-at-write; past the recovery's device writes (power_loss's
    /// recovery_device_writes without it), exit 2.
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u64).range(1..))]
    pub power_loss_during_recovery: Option<u64>,
    /// Write the reads' hex lines to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub reads: Option<String>,
    /// Print one JSON object of counters (after any read lines).
    #[arg(long)]
    pub json: bool,
}

/// Runs an `envy` subcommand.
pub fn run(command: EnvyCommand) -> Result<(), CliError> {
    match command {
        EnvyCommand::Run(args) => run_workload(&args),
        EnvyCommand::Replay(args) => replay(&args),
    }
}

const PAGE_BYTES: u64 = 256;
const MIB: u64 = 1 << 20;
/// Segments of the command's arrays (the 2 GB preset has 128 of 16 MiB).
const SEGMENTS: u32 = 64;

fn policy(system: &SystemArgs) -> Result<CleaningPolicy, CliError> {
    Ok(match system.cleaning {
        Cleaning::Greedy => CleaningPolicy::Greedy,
        Cleaning::Fifo => CleaningPolicy::Fifo,
        Cleaning::Locality => CleaningPolicy::Locality,
        Cleaning::Hybrid => {
            if system.partition_segments == 0 || system.partition_segments >= SEGMENTS {
                return Err(CliError::input(format!("--partition-segments must be in 1..{SEGMENTS}")));
            }
            CleaningPolicy::Hybrid { partition_segments: system.partition_segments }
        }
    })
}

/// `x` rounded up to whole pages, refused naming `flag` when it does not fit a u64.
fn pages_at(x: f64, flag: &str) -> Result<u64, CliError> {
    let pages = x.ceil();
    if pages.is_finite() && pages >= 0.0 && pages < u64::MAX as f64 {
        #[expect(clippy::cast_possible_truncation, reason = "checked to lie in [0, 2^64) and whole just above")]
        Ok(pages as u64)
    } else {
        Err(CliError::input(format!("{flag}: too many pages")))
    }
}

/// `--utilization`, which must lie in (0, 1).
fn checked_utilization(system: &SystemArgs) -> Result<f64, CliError> {
    let u = system.utilization;
    if u > 0.0 && u < 1.0 {
        Ok(u)
    } else {
        Err(CliError::input(format!("--utilization {u} is outside (0, 1)")))
    }
}

/// An array of `SEGMENTS` segments holding `logical_bytes` at `utilization`, keeping its
/// flash pages' bytes or not.
fn system_config(
    logical_bytes: u64,
    system: &SystemArgs,
    size_flag: &str,
    keep_page_bytes: bool,
) -> Result<EnvyConfig, CliError> {
    let u = checked_utilization(system)?;
    let logical_pages = logical_bytes.div_ceil(PAGE_BYTES).max(1);
    let flash_pages = pages_at(logical_pages as f64 / u, size_flag)?;
    let per_segment = flash_pages.div_ceil(u64::from(SEGMENTS)).max(2);
    let per_segment = u32::try_from(per_segment).map_err(|_| CliError::input(format!("{size_flag} is too large")))?;
    let mut config = EnvyConfig::small(SEGMENTS, per_segment, 8, u);
    config.logical_pages = logical_pages;
    config.keep_page_bytes = keep_page_bytes;
    config.cleaning = policy(system)?;
    if system.spare_segments == 0 || system.spare_segments > SEGMENTS - 2 {
        return Err(CliError::input(format!(
            "--spare-segments {} is outside 1..={}",
            system.spare_segments,
            SEGMENTS - 2
        )));
    }
    config.spare_segments = system.spare_segments;
    let buffer_pages = match system.sram_mb {
        None => (config.flash_pages() / 256).max(8),
        Some(mb) if mb.is_finite() && mb > 0.0 => pages_at(mb * MIB as f64 / PAGE_BYTES as f64, "--sram-mb")?,
        Some(mb) => return Err(CliError::input(format!("--sram-mb {mb} must be positive"))),
    };
    if buffer_pages >= config.flash_pages() {
        return Err(CliError::input("--sram-mb must be smaller than the flash".to_string()));
    }
    config.buffer_pages =
        u32::try_from(buffer_pages).map_err(|_| CliError::input("--sram-mb is too large".to_string()))?;
    // Flush once less than an eighth of the buffer (at least one page) is free.
    config.flush_threshold_pages = config.buffer_pages.saturating_sub((config.buffer_pages / 8).max(1));
    if let Err(e) = config.validate() {
        return Err(CliError::input(format!("--utilization/--spare-segments/{size_flag}: {e}")));
    }
    Ok(config)
}

fn envy_failed(e: EnvyError) -> CliError {
    CliError::failed(e.to_string())
}

/// `value` of `flag` if it is finite and in `lo..=hi` (or above `lo` when `open_lo`).
fn in_range(flag: &str, value: f64, lo: f64, hi: f64, open_lo: bool) -> Result<f64, CliError> {
    let above_lo = if open_lo { value > lo } else { value >= lo };
    if value.is_finite() && above_lo && value <= hi {
        Ok(value)
    } else {
        let left = if open_lo { "(" } else { "[" };
        let shown = if value.abs() >= 1e6 { format!("{value:e}") } else { value.to_string() };
        Err(CliError::input(format!("{flag} {shown} is outside {left}{lo}, {hi}]")))
    }
}

/// A time checked by [`in_range`] (at most 10^10 ns), rounded to whole nanoseconds.
fn nanoseconds(ns: f64) -> u64 {
    #[expect(clippy::cast_possible_truncation, reason = "checked to lie in [0, 10^10] by in_range")]
    let whole = ns.round() as u64;
    whole
}

/// The most TPC-A transactions a run measures (and as many warm up): about 10 minutes.
const MAX_TRANSACTIONS: u64 = 50_000_000;

/// The most flash programs a converged run's turnovers cap allows: about 10 minutes.
const MAX_CONVERGE_PROGRAMS: f64 = (1u64 << 28) as f64;

/// Applies `nvmdb envy run`'s flash and redistribution flags to `config`.
fn apply_flash(config: &mut EnvyConfig, args: &RunArgs) -> Result<(), CliError> {
    let flash = &args.flash;
    if let Some(ms) = flash.erase_ms {
        config.flash.erase_ns = nanoseconds(in_range("--erase-ms", ms, 0.0, 10_000.0, false)? * 1e6);
    }
    if let Some(us) = flash.program_us {
        config.flash.program_ns = nanoseconds(in_range("--program-us", us, 0.0, 1_000.0, false)? * 1e3);
    }
    match (flash.banks, flash.parallel_banks) {
        (Some(banks), _) if banks == 0 || banks > SEGMENTS || !SEGMENTS.is_multiple_of(banks) => {
            return Err(CliError::input(format!(
                "--banks {banks} must divide the {SEGMENTS} segments (1, 2, 4, …, 64)"
            )));
        }
        (Some(banks), false) if banks > 1 => {
            return Err(CliError::input(crate::effect::no_effect(
                &format!("--banks {banks}"),
                "without --parallel-banks (one long operation at a time)",
            )));
        }
        (None | Some(1), true) => {
            return Err(CliError::input(crate::effect::no_effect(
                "--parallel-banks",
                "with one bank: add --banks N (N > 1)",
            )));
        }
        (banks, parallel) => {
            config.banks = banks.unwrap_or(1);
            config.parallel_banks = parallel;
        }
    }
    if let Some(divisor) = args.redistribution_divisor {
        if divisor > 1 << 16 {
            return Err(CliError::input(format!("--redistribution-divisor {divisor} is outside 0..=65536")));
        }
        if !config.redistributes() {
            return Err(CliError::input(crate::effect::no_effect(
                "--redistribution-divisor",
                &format!(
                    "with --cleaning {} (only locality, and hybrid with at least two partitions: see \
                     --partition-segments)",
                    config.cleaning.name()
                ),
            )));
        }
        config.redistribution_divisor = divisor;
    }
    Ok(())
}

/// `nvmdb envy run`'s convergence rule, or `None` without `--converge`.
fn convergence(args: &RunArgs, config: &EnvyConfig) -> Result<Option<Convergence>, CliError> {
    let c = &args.converge;
    // --tolerance and --max-turnovers need --converge, which needs TPC-A (`crate::effect`).
    if !c.converge {
        return Ok(None);
    }
    let tolerance = in_range("--tolerance", c.tolerance.unwrap_or(0.02), 0.0, 0.5, true)?;
    let max_turnovers = in_range("--max-turnovers", c.max_turnovers.unwrap_or(4.0), 0.0, 64.0, true)?;
    if max_turnovers * config.flash_pages() as f64 > MAX_CONVERGE_PROGRAMS {
        return Err(CliError::input(format!(
            "--max-turnovers {max_turnovers} of {} flash pages is more than 2^28 flash programs (hours)",
            config.flash_pages()
        )));
    }
    Ok(Some(Convergence {
        window_cleans: 16,
        window_transactions: 2_000,
        tolerance,
        max_turnovers,
        max_transactions: MAX_TRANSACTIONS,
    }))
}

/// Counters of a run or replay.
#[derive(Debug, Serialize)]
struct Report {
    workload: String,
    cleaning: String,
    utilization: f64,
    flash_mib: f64,
    logical_mib: f64,
    sram_buffer_pages: u32,
    operations: u64,
    /// After a power cut: the check of the whole space at the end of the trace.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    at_end: Option<Check>,
    #[serde(skip_serializing_if = "Option::is_none")]
    power_loss_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    power_loss: Option<PowerLossReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    transactions: Option<TransactionCounts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    energy: Option<EnergyReport>,
    erase_ms: f64,
    program_us: f64,
    banks: u32,
    parallel_banks: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    redistribution_divisor: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    convergence: Option<ConvergenceReport>,
    cleaning_cost: f64,
    flash_programs: u64,
    flush_programs: u64,
    clean_programs: u64,
    erases: u64,
    mean_read_ns: f64,
    mean_write_ns: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    throughput_tps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offered_tps: Option<f64>,
}

/// How a converged TPC-A run ended.
#[derive(Debug, Serialize)]
struct ConvergenceReport {
    /// `converged`, `turnovers` or `transactions`.
    ended_by: &'static str,
    windows: usize,
    window_transactions: u64,
    /// The last two successive windows' throughputs, per second.
    last_halves_tps: Option<(f64, f64)>,
    /// Flash programs of the measured part / flash pages.
    turnovers: f64,
}

impl ConvergenceReport {
    fn new(run: &ConvergedRun) -> ConvergenceReport {
        ConvergenceReport {
            ended_by: run.ended_by.name(),
            windows: run.window_tps.len(),
            window_transactions: run.window_transactions,
            last_halves_tps: run.halves(),
            turnovers: run.turnovers,
        }
    }
}

/// Device energy of the measured part of a run.
#[derive(Debug, Serialize)]
struct EnergyReport {
    flash_pj: u64,
    sram_pj: u64,
    /// (flash + SRAM) / the run's operations (transactions for TPC-A).
    per_operation_pj: f64,
}

impl EnergyReport {
    fn new(envy: &Envy, operations: u64) -> EnergyReport {
        let e = envy.energy();
        let total = e.flash_pj.saturating_add(e.sram_pj);
        EnergyReport { flash_pj: e.flash_pj, sram_pj: e.sram_pj, per_operation_pj: total as f64 / operations as f64 }
    }
}

/// What became of a replay's transactions.
#[derive(Debug, Default, Serialize)]
struct TransactionCounts {
    committed_transactions: u64,
    aborted_transactions: u64,
    /// Open at the power cut, rolled back by recovery.
    rolled_back_transactions: u64,
    /// Lines of a rolled-back transaction after the cut, to its `C` or `A`.
    skipped_operations: u64,
}

impl Report {
    fn new(workload: &str, envy: &Envy, operations: u64) -> Report {
        let c = envy.config();
        let s = envy.stats();
        Report {
            workload: workload.into(),
            cleaning: c.cleaning.name().into(),
            utilization: c.utilization(),
            flash_mib: c.flash_pages() as f64 * f64::from(c.page_bytes) / MIB as f64,
            logical_mib: c.logical_bytes() as f64 / MIB as f64,
            sram_buffer_pages: c.buffer_pages,
            operations,
            at_end: None,
            power_loss_at: None,
            power_loss: None,
            transactions: None,
            energy: None,
            erase_ms: c.flash.erase_ns as f64 / 1e6,
            program_us: c.flash.program_ns as f64 / 1e3,
            banks: c.banks,
            parallel_banks: c.parallel_banks,
            redistribution_divisor: c.redistributes().then_some(c.redistribution_divisor),
            convergence: None,
            cleaning_cost: s.cleaning_cost(),
            flash_programs: s.flush_programs.saturating_add(s.clean_programs),
            flush_programs: s.flush_programs,
            clean_programs: s.clean_programs,
            erases: s.erases,
            mean_read_ns: s.mean_read_ns(),
            mean_write_ns: s.mean_write_ns(),
            throughput_tps: None,
            offered_tps: None,
        }
    }
}

fn run_workload(args: &RunArgs) -> Result<(), CliError> {
    let flash_bytes = args
        .flash_mb
        .checked_mul(MIB)
        .filter(|&b| b > 0)
        .ok_or_else(|| CliError::input("--flash-mb is out of range"))?;
    let logical = pages_at(flash_bytes as f64 * checked_utilization(&args.system)?, "--flash-mb")?;
    if args.no_page_bytes && matches!(args.workload, Workload::Tpca) {
        return Err(CliError::input("--no-page-bytes: TPC-A reads its pages back; use --workload uniform or bimodal"));
    }
    let mut config = system_config(logical, &args.system, "--flash-mb", !args.no_page_bytes)?;
    crate::limits::check_memory("--flash-mb", config.estimated_memory_bytes())?;
    apply_flash(&mut config, args)?;
    let rule = convergence(args, &config)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(args.seed);
    let mut envy = Envy::format(config).map_err(envy_failed)?;
    let report = match args.workload {
        Workload::Tpca => {
            if !(0.001..=1e9).contains(&args.tps) {
                return Err(CliError::input(format!("--tps {} is outside 0.001..=1e9", args.tps)));
            }
            if args.transactions == 0 || args.transactions > MAX_TRANSACTIONS {
                return Err(CliError::input(format!(
                    "--transactions {} is outside 1..={MAX_TRANSACTIONS}",
                    args.transactions
                )));
            }
            let template = TpcaConfig::STANDARD;
            let history = template.history_records.saturating_mul(template.history_bytes);
            if config.logical_bytes() < history.saturating_mul(2) {
                return Err(CliError::input("--flash-mb is too small for TPC-A's history area"));
            }
            let tpca = TpcaConfig { accounts: accounts_to_fill(config.logical_bytes(), 0.95, &template), ..template };
            let mut db = Tpca::load(envy, &tpca, &mut rng).map_err(envy_failed)?;
            db.age(config.flash_pages().saturating_mul(2), &mut rng);
            let (r, converged) = match &rule {
                Some(rule) => {
                    let run = db.run_converged(args.tps, args.transactions, rule, &mut rng).map_err(envy_failed)?;
                    (run.report, Some(ConvergenceReport::new(&run)))
                }
                None => (db.run(args.tps, args.transactions, args.transactions, &mut rng).map_err(envy_failed)?, None),
            };
            let mut report = db.with_envy(|e| Report::new("tpca", e, r.transactions));
            report.energy = Some(db.with_envy(|e| EnergyReport::new(e, r.transactions)));
            report.convergence = converged;
            report.throughput_tps = Some(r.throughput_tps);
            report.offered_tps = Some(args.tps);
            report
        }
        Workload::Uniform | Workload::Bimodal => {
            let dist = match args.workload {
                Workload::Uniform => Bimodal::UNIFORM,
                _ => {
                    let ok = |x: f64| x > 0.0 && x < 1.0;
                    if !ok(args.hot_access) || !ok(args.hot_data) {
                        return Err(CliError::input("--hot-access and --hot-data must be in (0, 1)"));
                    }
                    Bimodal { hot_access: args.hot_access, hot_data: args.hot_data }
                }
            };
            let updates = args
                .turnovers
                .checked_mul(config.flash_pages())
                .filter(|&u| u > 0 && u <= 1 << 32)
                .ok_or_else(|| CliError::input("--turnovers must be positive and at most 2^32 updates in all"))?;
            workload::fill(&mut envy).map_err(envy_failed)?;
            workload::update(&mut envy, dist, config.flash_pages(), &mut rng).map_err(envy_failed)?;
            envy.reset_stats();
            workload::update(&mut envy, dist, updates, &mut rng).map_err(envy_failed)?;
            let name = if matches!(args.workload, Workload::Uniform) { "uniform".into() } else { dist.label() };
            let mut report = Report::new(&name, &envy, updates);
            report.energy = Some(EnergyReport::new(&envy, updates));
            report
        }
    };
    Output::new().report(&report, args.json)
}

/// One line of a replay trace: a `pcm replay` operation or a transaction boundary.
#[derive(Debug, PartialEq, Eq)]
enum ReplayOp {
    Plain(PcmOp),
    Begin,
    Commit,
    Abort,
}

/// Parses one replay line: `B`, `C` or `A` alone, or a `pcm replay` line; `Ok(None)` for
/// a blank or comment line.
fn parse_replay_line(line: &str, capacity_bytes: u64) -> Result<Option<ReplayOp>, String> {
    let content = line.split('#').next().unwrap_or("").trim();
    let mut tokens = content.split_whitespace();
    let boundary = match tokens.next() {
        Some("B") => ReplayOp::Begin,
        Some("C") => ReplayOp::Commit,
        Some("A") => ReplayOp::Abort,
        _ => return Ok(pcm_trace::parse_line(line, capacity_bytes)?.map(ReplayOp::Plain)),
    };
    match tokens.next() {
        Some(extra) => {
            Err(format!("{} takes no operand, found {}", content.chars().next().unwrap_or('?'), quote(extra)))
        }
        None => Ok(Some(boundary)),
    }
}

/// Where `envy replay` cut the power, what recovery did, and what the check right after
/// it found.
#[derive(Debug, Serialize)]
struct PowerLossReport {
    /// The operation the cut fell in (a cut at a device write: the operation is not
    /// acknowledged) or after (`--power-loss-at`), from 1.
    operation: u64,
    /// The device write refused, from 1, counted from the trace's start (a cut between
    /// operations: the next device write the replay would have made).
    device_write: u64,
    /// What the controller was doing (`host`, `flush`, `clean`, `commit`); `None` for a
    /// cut between operations.
    activity: Option<Activity>,
    /// The second cut: the recovery's device write refused, from 1.
    recovery_cut: Option<u64>,
    /// Device writes of the recovery that completed.
    recovery_device_writes: u64,
    /// The check of the whole space right after recovery.
    after_recovery: Check,
}

/// A recovered system, and where a second cut fell in its recovery.
struct Recovered {
    envy: Envy,
    recovery_cut: Option<u64>,
    recovery_device_writes: u64,
}

/// Loses the power of `envy` (its devices alone survive) and recovers, cutting the power
/// again before the recovery's `second`-th device write and recovering once more.
fn recover(envy: Envy, second: Option<u64>) -> Result<Recovered, CliError> {
    let config = *envy.config();
    let mut devices = envy.into_devices();
    devices.power_cycle();
    if let Some(m) = second {
        devices.cut_power_before(devices.device_writes().saturating_add(m.saturating_sub(1)));
    }
    let mut recovery_cut = None;
    loop {
        let start = devices.device_writes();
        match Envy::recover(config, devices) {
            Ok(envy) => {
                let recovery_device_writes = envy.devices().device_writes().saturating_sub(start);
                if let Some(m) = second.filter(|_| recovery_cut.is_none()) {
                    return Err(CliError::input(format!(
                        "--power-loss-during-recovery: device write {m} is past the end of the recovery \
                         ({recovery_device_writes} device writes in all)"
                    )));
                }
                return Ok(Recovered { envy, recovery_cut, recovery_device_writes });
            }
            Err(failure) if matches!(failure.error, EnvyError::PowerCut { .. }) && recovery_cut.is_none() => {
                devices = failure.devices;
                recovery_cut = Some(devices.device_writes().saturating_sub(start).saturating_add(1));
                devices.power_cycle();
            }
            Err(failure) => return Err(envy_failed(failure.error)),
        }
    }
}

/// The power cut flags' combinations: one cut, and a second only after a first.
fn check_cut_flags(args: &ReplayArgs) -> Result<(), CliError> {
    if args.power_loss_at == Some(0) {
        return Err(CliError::input("--power-loss-at counts operations from 1"));
    }
    if args.power_loss_at.is_some() && args.power_loss_at_write.is_some() {
        return Err(CliError::input(
            "--power-loss-at and --power-loss-at-write: a replay cuts the power once; give one",
        ));
    }
    if args.power_loss_during_recovery.is_some() && args.power_loss_at.is_none() && args.power_loss_at_write.is_none() {
        return Err(CliError::input(
            "--power-loss-during-recovery does nothing without --power-loss-at or --power-loss-at-write: there is no \
             recovery",
        ));
    }
    Ok(())
}

/// Checks `envy` against `model`, leaving the check's reads out of its counters.
fn check_against(model: &AckModel, envy: &mut Envy) -> Result<Check, CliError> {
    let stats = *envy.stats();
    let check = model.check(envy).map_err(envy_failed)?;
    envy.restore_stats(stats);
    Ok(check)
}

fn replay(args: &ReplayArgs) -> Result<(), CliError> {
    check_cut_flags(args)?;
    if let Some(reads) = &args.reads {
        crate::input::check_output_is_not_an_input(("--reads", reads), &[("--trace", &args.trace)])?;
    }
    let logical = args
        .size_mb
        .checked_mul(MIB)
        .filter(|&b| b > 0)
        .ok_or_else(|| CliError::input(format!("--size-mb {} is out of range", args.size_mb)))?;
    let config = system_config(logical, &args.system, "--size-mb", true)?;
    // The replay keeps the model of acknowledged bytes beside the system.
    let estimate = config.estimated_memory_bytes().saturating_add(AckModel::estimated_memory_bytes(&config));
    crate::limits::check_memory("--size-mb", estimate)?;
    let capacity = config.logical_bytes();
    let file = File::open(&args.trace).map_err(|e| CliError::unreadable(&args.trace, &e))?;
    let mut lines = Lines::new(BufReader::new(file));
    let mut reads = match &args.reads {
        Some(path) => Some(OutputFile::create(path).map_err(|e| CliError::unwritable(path, &e))?),
        None => None,
    };
    let mut stdout = std::io::BufWriter::new(crate::output::Stdout);
    let out: &mut dyn Write = match &mut reads {
        Some(file) => file,
        None => &mut stdout,
    };
    let mut envy = Envy::format(config).map_err(envy_failed)?;
    // Device writes are counted from the trace's start, after the format.
    let trace_start = envy.devices().device_writes();
    if let Some(n) = args.power_loss_at_write {
        envy.cut_power_before(trace_start.saturating_add(n.saturating_sub(1)));
    }
    // The model the recovery is checked against (the size was checked above); it also
    // knows whether the trace has a transaction open.
    let mut model = AckModel::new(index(capacity), index(PAGE_BYTES));
    let mut counts = TransactionCounts::default();
    // Skipping the rest of a transaction the cut rolled back.
    let mut skipping = false;
    let mut operations = 0u64;
    let mut power_loss = None;
    while let Some(text) = lines.next_line() {
        nvmdb_cancel::check()?;
        let parsed = match text {
            Ok(text) => parse_replay_line(text, capacity),
            Err(e) => Err(e.to_string()),
        };
        let at_line = |message: String| CliError::at_line(&args.trace, lines.line(), message);
        let Some(op) = parsed.map_err(at_line)? else { continue };
        operations = operations.saturating_add(1);
        if skipping {
            counts.skipped_operations = counts.skipped_operations.saturating_add(1);
            skipping = !matches!(op, ReplayOp::Commit | ReplayOp::Abort);
            continue;
        }
        let done = match &op {
            ReplayOp::Plain(PcmOp::Read { addr, len }) => {
                let mut buf = vec![0u8; index(*len)];
                let ns = envy.read(*addr, &mut buf).map_err(envy_failed)?;
                envy.advance_to(envy.now_ns().saturating_add(ns));
                crate::output::write_hex(out, &buf)
                    .and_then(|()| out.write_all(b"\n"))
                    .map_err(|e| CliError::unwritable(args.reads.as_deref().unwrap_or("stdout"), &e))?;
                Ok(())
            }
            ReplayOp::Plain(PcmOp::Write { addr, data }) => envy.write(*addr, data).map(|ns| {
                envy.advance_to(envy.now_ns().saturating_add(ns));
                // The parser checked that the write ends inside the space the model spans.
                model.write(*addr, data);
            }),
            ReplayOp::Begin => {
                if model.in_transaction() {
                    return Err(at_line("B inside an open transaction".into()));
                }
                // Open in the model first: a cut in the begin rolls the transaction back.
                model.begin();
                envy.begin()
            }
            ReplayOp::Commit => {
                if !model.in_transaction() {
                    return Err(at_line("C without an open transaction".into()));
                }
                envy.commit().map(|()| {
                    model.commit();
                    counts.committed_transactions = counts.committed_transactions.saturating_add(1);
                })
            }
            ReplayOp::Abort => {
                if !model.in_transaction() {
                    return Err(at_line("A without an open transaction".into()));
                }
                envy.abort().map(|()| {
                    model.roll_back();
                    counts.aborted_transactions = counts.aborted_transactions.saturating_add(1);
                })
            }
        };
        let activity = match done {
            Ok(()) if args.power_loss_at == Some(operations) => None,
            Ok(()) => continue,
            Err(EnvyError::PowerCut { .. }) if power_loss.is_none() => {
                if let (ReplayOp::Plain(PcmOp::Write { addr, data }), false) = (&op, model.in_transaction()) {
                    model.interrupted_write(*addr, data);
                }
                Some(envy.devices().last_cut().expect("a refused write is a cut").activity)
            }
            Err(EnvyError::Transaction(why)) => return Err(at_line(why.to_string())),
            Err(e) => return Err(envy_failed(e)),
        };
        let device_write = match activity {
            Some(_) => envy.devices().last_cut().expect("a refused write is a cut").device_write,
            None => envy.devices().device_writes(),
        }
        .saturating_sub(trace_start)
        .saturating_add(1);
        // Keep counting from before the cut: the run is one experiment.
        let stats = *envy.stats();
        let recovered = recover(envy, args.power_loss_during_recovery)?;
        envy = recovered.envy;
        if model.in_transaction() {
            model.roll_back();
            counts.rolled_back_transactions = counts.rolled_back_transactions.saturating_add(1);
            skipping = !matches!(op, ReplayOp::Commit | ReplayOp::Abort);
        }
        let after_recovery = check_against(&model, &mut envy)?;
        envy.restore_stats(stats);
        power_loss = Some(PowerLossReport {
            operation: operations,
            device_write,
            activity,
            recovery_cut: recovered.recovery_cut,
            recovery_device_writes: recovered.recovery_device_writes,
            after_recovery,
        });
    }
    if let Some(at) = args.power_loss_at.filter(|&at| at > operations) {
        return Err(CliError::input(format!(
            "--power-loss-at: operation {at} is past the end of the trace ({operations} operations in all)"
        )));
    }
    if let Some(n) = args.power_loss_at_write.filter(|_| power_loss.is_none()) {
        return Err(CliError::input(format!(
            "--power-loss-at-write: device write {n} is past the end of the trace ({} device writes in all)",
            envy.devices().device_writes().saturating_sub(trace_start)
        )));
    }
    out.flush().map_err(|e| CliError::unwritable(args.reads.as_deref().unwrap_or("stdout"), &e))?;
    if let Some(file) = reads {
        file.finish()?;
    }
    let mut report = Report::new("replay", &envy, operations);
    if power_loss.is_some() {
        report.at_end = Some(check_against(&model, &mut envy)?);
    }
    report.power_loss_at = args.power_loss_at;
    report.power_loss = power_loss;
    report.transactions = Some(counts);
    Output::new().report(&report, args.json)
}
