//! `nvmdb ssd replay`: replay a block trace on a simulated SSD stack.

use std::io::BufReader;

use clap::{Args, Subcommand};
use nvmdb_device::DeviceError;
use nvmdb_flash::{FlashError, ReplayError, ReplayOptions, ReplaySummary, SsdConfig};
use nvmdb_workload::{TraceFormat, TraceReader};
use serde::Serialize;

use crate::error::CliError;
use crate::output::Output;

/// SSD simulator commands.
#[derive(Debug, Subcommand)]
pub enum SsdCommand {
    /// Replay a block trace on a simulated SSD (FTL, GC, wear levelling, buffer, dedup).
    ///
    /// The configuration starts from the defaults (thesis Table 5.1), then the --config
    /// file, then each --set in order. Every key is documented in crates/nvmdb-flash/CONFIG.md.
    Replay(ReplayArgs),
}

/// The most passes `--passes` takes.
const MAX_PASSES: u64 = 10_000;

/// Arguments of `nvmdb ssd replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The trace file.
    #[arg(long)]
    pub trace: String,
    /// The trace format.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(TraceFormat::NAMES))]
    pub format: String,
    /// An SSD configuration file (TOML).
    #[arg(long)]
    pub config: Option<String>,
    /// Overrides one configuration key, e.g. `--set ftl.gc=fifo` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Leaves the first N requests out of every reported statistic.
    #[arg(long, default_value_t = 0)]
    pub warmup_requests: u64,
    /// Cuts power after the N-th request, recovers from what the flash and PCM hold, and
    /// finishes the trace; then checks every written or trimmed page against the
    /// acknowledged writes and trims (`lost_pages`, `corrupt_pages`; in metadata-only mode,
    /// that each written page is still mapped). Every configuration recovers.
    #[arg(long, value_name = "N")]
    pub power_loss_at: Option<u64>,
    /// Writes every page the trace touches once before replaying it (left out of every
    /// figure), so the trace runs on existing data: `true` (the default without --age) or
    /// `false`. Not with --age, which writes every page.
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub prefill: Option<bool>,
    /// Ages the device before the trace, as the thesis experiments do: every logical page
    /// written once in order, then as many uniformly random whole-page overwrites (new
    /// content, out of place in every configuration), left out of every figure.
    #[arg(long)]
    pub age: bool,
    /// Replays the trace N times (1 to 10000), each pass the same requests, starting when
    /// the one before has completed; the output gives the last pass alone beside the whole.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=MAX_PASSES))]
    pub passes: u64,
    /// After the last request, merges every pending log record and writes the DRAM buffer
    /// down (counted in every figure); needs a log buffer or a DRAM buffer.
    #[arg(long)]
    pub drain: bool,
    /// DiskSim traces: `separate` (default) gives each device number its own address
    /// range and realigns its requests by the device's most common misalignment;
    /// `shared` keeps the file's one address space.
    #[arg(long, value_name = "MODE", default_value = "separate", value_parser = ["separate", "shared"])]
    pub disksim_devices: String,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `--json` prints: the trace, the figures, and the full configuration.
#[derive(Debug, Serialize)]
struct JsonReport<'a> {
    trace: &'a str,
    format: &'a str,
    warmup_requests: u64,
    #[serde(flatten)]
    summary: ReplaySummary,
    config: &'a SsdConfig,
}

/// Runs an `ssd` subcommand.
pub fn run(command: SsdCommand) -> Result<(), CliError> {
    match command {
        SsdCommand::Replay(args) => replay(&args),
    }
}

fn config_error(e: FlashError) -> CliError {
    match e {
        FlashError::Config(message) | FlashError::Device(DeviceError::Config(message)) => CliError::input(message),
        other => CliError::failed(other.to_string()),
    }
}

/// The defaults, the --config file, then each --set; a key given that the chosen stack
/// ignores is refused.
fn load_config(args: &ReplayArgs) -> Result<SsdConfig, CliError> {
    let mut given = Vec::new();
    let mut config = match &args.config {
        Some(path) => {
            let text = crate::input::read_small(path)?;
            let in_file = |e: FlashError| CliError::input(format!("{path}: {e}"));
            given = SsdConfig::toml_keys(&text).map_err(in_file)?;
            SsdConfig::from_toml(&text).map_err(in_file)?
        }
        None => SsdConfig::default(),
    };
    for assignment in &args.set {
        config.set(assignment).map_err(config_error)?;
        given.extend(assignment.split_once('=').map(|(key, _)| key.trim().to_string()));
    }
    config.validate().map_err(config_error)?;
    config.check_given_keys(given.iter().map(String::as_str)).map_err(config_error)?;
    crate::limits::check_memory("--config/--set (flash geometry, buffer, dedup)", config.estimated_memory_bytes())?;
    Ok(config)
}

fn replay(args: &ReplayArgs) -> Result<(), CliError> {
    let config = load_config(args)?;
    let format: TraceFormat = args.format.parse().map_err(CliError::input)?;
    check_flags(args, &config)?;
    let prefill = args.prefill.unwrap_or(!args.age);
    crate::input::open(&args.trace)?;
    let mut store = nvmdb_flash::build(&config).map_err(config_error)?;
    let options = ReplayOptions {
        warmup_requests: args.warmup_requests,
        content: config.content,
        seed: config.seed,
        power_loss_at: args.power_loss_at,
        prefill,
        age: args.age,
        passes: args.passes,
        drain: args.drain,
    };
    let capacity = store.logical_pages().saturating_mul(u64::from(store.page_bytes()));
    let layout = if format == TraceFormat::Disksim && args.disksim_devices == "separate" {
        let scan = BufReader::new(crate::input::open(&args.trace)?);
        let layout = nvmdb_workload::DisksimLayout::scan(scan, u64::from(store.page_bytes()), capacity)
            .map_err(|e| CliError::at_line(&args.trace, e.line, e.message))?;
        Some(layout)
    } else {
        None
    };
    // The trace is read afresh for the pre-fill's footprint and for each pass.
    let open = || -> Result<_, CliError> {
        let file = crate::input::open(&args.trace)?;
        let requests = TraceReader::new(BufReader::new(file), format).with_max_request_bytes(capacity);
        Ok(match &layout {
            Some(layout) => requests.with_disksim_layout(layout.clone()),
            None => requests,
        })
    };
    if args.passes > 1 {
        // Every pass's response times are kept (for the exact percentiles): count them
        // first, which also finds a bad line before the run.
        let requests = open()?.try_fold(0u64, |n: u64, r| r.map(|_| n.saturating_add(1)));
        let requests = requests.map_err(|e| CliError::at_line(&args.trace, e.line, e.message))?;
        crate::limits::check_memory(
            &format!("--passes {} ({requests} requests each)", args.passes),
            requests.saturating_mul(args.passes).saturating_mul(RESPONSE_BYTES),
        )?;
    }
    let mut reopen_error = None;
    let trace = || match open() {
        Ok(requests) => Some(requests).into_iter().flatten(),
        Err(e) => {
            reopen_error.get_or_insert(e);
            None.into_iter().flatten()
        }
    };
    let report = nvmdb_flash::replay::replay_passes(store.as_mut(), trace, &options).map_err(|e| match e {
        ReplayError::Input(e) => CliError::at_line(&args.trace, e.line, e.message),
        ReplayError::Store { request, error } => {
            CliError::failed(format!("{}: request {}: {error}", args.trace, request.saturating_add(1)))
        }
    });
    if let Some(e) = reopen_error {
        return Err(e);
    }
    let report = report?;
    store.check_invariants().map_err(|e| CliError::failed(format!("invariant broken after the replay: {e}")))?;
    let summary = report.summary();
    let out = Output::new();
    if args.json {
        return out.json(&JsonReport {
            trace: &args.trace,
            format: &args.format,
            warmup_requests: args.warmup_requests,
            summary,
            config: &config,
        });
    }
    print_table(out, args, &config, &summary)
}

/// Host bytes a replay keeps per request of every pass (its response time, at most 8 B,
/// in the whole run's list and the last pass's).
const RESPONSE_BYTES: u64 = 16;

/// Host bytes `--age` holds per logical page beyond the stack's tables: the ageing's own
/// and, in the content modes, what flash keeps of the page once written.
fn ageing_bytes_per_page(config: &SsdConfig) -> u64 {
    let content = match config.content {
        nvmdb_device::PageContent::Bytes => u64::from(config.flash.page_bytes),
        nvmdb_device::PageContent::Fingerprint => 8,
        nvmdb_device::PageContent::None => 0,
    };
    nvmdb_workload::ageing::BYTES_PER_PAGE.saturating_add(content)
}

/// The flags' ranges and combinations: a combination that would do nothing is refused,
/// naming both flags (or the flag and the configuration key).
fn check_flags(args: &ReplayArgs, config: &SsdConfig) -> Result<(), CliError> {
    if args.age && args.prefill.is_some() {
        return Err(CliError::input(
            "--prefill does nothing with --age: the ageing pass already writes every logical page".to_string(),
        ));
    }
    let buffered = config.buffer.kind != nvmdb_flash::config::BufferKind::None || config.dram.pages > 0;
    if args.drain && !buffered {
        return Err(CliError::input(
            "--drain does nothing with buffer.kind = \"none\" and dram.pages = 0: nothing is ever pending".to_string(),
        ));
    }
    if args.age {
        let pages = config.host_pages();
        crate::limits::check_memory(
            &format!("--age ({pages} logical pages, each written twice)"),
            config.estimated_memory_bytes().saturating_add(pages.saturating_mul(ageing_bytes_per_page(config))),
        )?;
    }
    Ok(())
}

fn print_table(mut out: Output, args: &ReplayArgs, config: &SsdConfig, s: &ReplaySummary) -> Result<(), CliError> {
    let mode = serde_json::to_value(s.content_mode).expect("serialises");
    let mode = mode.as_str().unwrap_or("?");
    out.line(format_args!("trace                {} ({})", args.trace, args.format))?;
    if config.buffer.kind == nvmdb_flash::config::BufferKind::IplNative {
        out.line(format_args!(
            "stack                IPL in its own layout (no FTL), overprovision {}, wear levelling {:?}",
            config.ftl.overprovision, config.ftl.wear_leveling
        ))?;
    } else {
        out.line(format_args!(
            "stack                {:?} mapping, {:?} GC, overprovision {}, buffer {:?}, dedup {}",
            config.ftl.mapping, config.ftl.gc, config.ftl.overprovision, config.buffer.kind, config.dedup.enabled
        ))?;
    }
    out.line(format_args!("content mode         {mode}{}", if mode == "none" { " (metadata only)" } else { "" }))?;
    out.line(format_args!(
        "set-up               {} pages aged, {} pre-filled (not counted below)",
        s.aged_pages, s.prefilled_pages
    ))?;
    out.line(format_args!("passes               {}{}", s.passes, if s.drained { ", then drained" } else { "" }))?;
    out.line(format_args!("requests             {} (after {} warm-up)", s.requests, args.warmup_requests))?;
    print_figures(&mut out, config, s)?;
    out.line(format_args!(
        "dedup                {} pages removed, {:.1} comparisons per lookup, {} flash pages saved",
        s.dedup_pages_removed, s.dedup_comparisons_per_lookup, s.flash_pages_saved
    ))?;
    match s.lifetime_host_bytes {
        Some(bytes) => out.line(format_args!("lifetime estimate    {:.3e} host bytes", bytes))?,
        None => out.line(format_args!("lifetime estimate    n/a (no erases)"))?,
    }
    out.line(format_args!("RMW / wrapped pages  {} / {}", s.rmw_pages, s.wrapped_pages))?;
    out.line(format_args!(
        "pending at the end   {} log records on {} pages, {} DRAM pages",
        s.pending_log_records, s.pending_log_pages, s.pending_dram_pages
    ))?;
    if s.power_cycles > 0 {
        out.line(format_args!(
            "power loss           {} cut(s); {} pages verified, {} lost, {} corrupt",
            s.power_cycles, s.verified_pages, s.lost_pages, s.corrupt_pages
        ))?;
    }
    if let Some(last) = &s.last_pass {
        out.line(format_args!("last pass alone      {} requests", last.requests))?;
        print_figures(&mut out, config, last)?;
    }
    out.finish()
}

/// The figures a pass or the whole run has of its own: writes, reads, programs, erases,
/// merges, GC, response times, energy.
fn print_figures(out: &mut Output, config: &SsdConfig, s: &ReplaySummary) -> Result<(), CliError> {
    out.line(format_args!("host page writes     {}", s.host_page_writes))?;
    out.line(format_args!("host page reads      {}", s.host_page_reads))?;
    out.line(format_args!("flash page programs  {}", s.flash_page_programs))?;
    out.line(format_args!(
        "partial programs     {} ({} sectors; {:.3} pages programmed in all)",
        s.flash_sector_programs, s.flash_sectors_programmed, s.flash_programs_in_pages
    ))?;
    out.line(format_args!("write amplification  {:.3} (partial programs as page shares)", s.write_amplification))?;
    out.line(format_args!("flash page reads     {}", s.flash_page_reads))?;
    out.line(format_args!("block erases         {} (max per block {})", s.block_erases, s.block_erases_max))?;
    out.line(format_args!("merges               {} ({} pages written)", s.merges, s.merge_page_writes))?;
    if config.buffer.kind != nvmdb_flash::config::BufferKind::None {
        out.line(format_args!(
            "log layer writes     {} direct, {} logged, {} out of place, {} unchanged",
            s.direct_writes, s.logged_writes, s.out_of_place_writes, s.unchanged_writes
        ))?;
    }
    out.line(format_args!("GC copies / time     {} / {} ns", s.gc_page_copies, s.gc_time_ns))?;
    out.line(format_args!("response mean / p99  {} / {} ns", s.mean_response_ns, s.p99_response_ns))?;
    out.line(format_args!("throughput           {:.0} IOPS, {:.2} MB/s", s.iops, s.throughput_mb_s))?;
    out.line(format_args!(
        "energy               {} pJ (flash {}, PCM {})",
        s.energy_pj, s.flash_energy_pj, s.pcm_energy_pj
    ))?;
    out.line(format_args!(
        "PCM lines / words    {} read, {} written / {} words written",
        s.pcm_lines_read, s.pcm_lines_written, s.pcm_words_written
    ))?;
    match (s.pcm_bits_written, s.pcm_max_cell_writes) {
        (Some(bits), Some(hottest)) => {
            out.line(format_args!("PCM bits written     {bits} (hottest cell {hottest})"))?
        }
        _ => out.line(format_args!("PCM bits written     not counted (buffer.pcm_accounting = words)"))?,
    }
    Ok(())
}
