//! `nvmdb ssd replay`: replay a block trace on a simulated SSD stack.

use std::io::BufReader;

use clap::{Args, Subcommand};
use nvmdb_device::DeviceError;
use nvmdb_flash::{CutPastEnd, FlashError, ReplayError, ReplayOptions, ReplaySummary, SsdConfig, TraceCounts};
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
    /// The `simple` format is `W|R|T <offset> <length>` or `W <offset> 0x<hexbytes>` (a write
    /// carrying its data; a length is decimal, so a 0x field is always data).
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
    /// Cuts power after the N-th request, recovers from what the flash and PCM hold, checks
    /// every written or trimmed page against the replay's own model of acknowledged writes
    /// and trims (`power_loss.after_recovery`), finishes the trace and checks again
    /// (`lost_pages`, `corrupt_pages`; in metadata-only mode, that each written page is
    /// still mapped). Every configuration recovers. N counts requests across passes; past the
    /// end of the run, no cut happens and the replay exits 2.
    #[arg(long, value_name = "N")]
    pub power_loss_at: Option<u64>,
    /// Cuts power before the N-th device write (flash program or erase, PCM write; from 1,
    /// counted from the trace's start, after --age or the pre-fill, across passes and the
    /// drain), inside whatever the store is doing (a host write, a DRAM flush, GC, a merge);
    /// the request it falls in is not acknowledged (each page it writes may read as before
    /// or after it). Then recovers, checks and goes on as --power-loss-at (not with it). The
    /// JSON's power_loss gives the request, the device write and the activity. Past the end
    /// of the run, exit 2.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub power_loss_at_write: Option<u64>,
    /// A second cut, before the M-th device write (from 1) of the recovery after the first
    /// cut: the store powers up again from its devices alone. Needs --power-loss-at or
    /// --power-loss-at-write; past the recovery's device writes (power_loss's
    /// recovery_device_writes without it), exit 2.
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u64).range(1..))]
    pub power_loss_during_recovery: Option<u64>,
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
    /// Writes the bytes of every read request (`R`) to FILE, one line of lowercase hex
    /// per request in trace order (every pass; never-written bytes read as ff); needs
    /// `content = "bytes"`.
    #[arg(long, value_name = "FILE")]
    pub reads: Option<String>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `--reads`: each read request's bytes as one line of lowercase hex.
struct HexReads {
    file: crate::output::OutputFile,
    /// The write error the replay was stopped by, for its message and kind.
    error: Option<std::io::Error>,
}

impl HexReads {
    fn keep(&mut self, result: std::io::Result<()>) -> Result<(), String> {
        result.map_err(|e| {
            let text = e.to_string();
            self.error = Some(e);
            text
        })
    }
}

impl nvmdb_flash::replay::ReadBack for HexReads {
    fn bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        let written = crate::output::write_hex(&mut self.file, bytes);
        self.keep(written)
    }

    fn end(&mut self) -> Result<(), String> {
        let written = std::io::Write::write_all(&mut self.file, b"\n");
        self.keep(written)
    }
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
/// ignores is refused, as is a configuration whose memory would not fit the machine
/// (naming the `--set` without which it would).
fn load_config(args: &ReplayArgs) -> Result<SsdConfig, CliError> {
    let (config, given) = assemble_config(args, None)?;
    config.validate().map_err(config_error)?;
    config.check_given_keys(given.iter().map(String::as_str)).map_err(config_error)?;
    let estimate = config.estimated_memory_bytes();
    let limit = crate::limits::memory_limit().bytes;
    if estimate > limit {
        // A valid configuration without it fits.
        let fits = |skip: usize| {
            assemble_config(args, Some(skip)).is_ok_and(|(c, given)| {
                c.validate().is_ok()
                    && c.check_given_keys(given.iter().map(String::as_str)).is_ok()
                    && c.estimated_memory_bytes() <= limit
            })
        };
        let what = match (0..args.set.len()).find(|&i| fits(i)) {
            Some(i) => format!("--set {}", args.set[i]),
            None => "--config/--set (flash geometry, buffer, dedup)".to_string(),
        };
        crate::limits::check_memory(&what, estimate)?;
    }
    Ok(config)
}

/// The configuration of the defaults, the --config file and each --set but the
/// `skip`-th, and the keys given.
fn assemble_config(args: &ReplayArgs, skip: Option<usize>) -> Result<(SsdConfig, Vec<String>), CliError> {
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
    for (_, assignment) in args.set.iter().enumerate().filter(|&(i, _)| Some(i) != skip) {
        config.set(assignment).map_err(config_error)?;
        given.extend(assignment.split_once('=').map(|(key, _)| key.trim().to_string()));
    }
    Ok((config, given))
}

fn replay(args: &ReplayArgs) -> Result<(), CliError> {
    let config = load_config(args)?;
    let format: TraceFormat = args.format.parse().map_err(CliError::input)?;
    check_flags(args, &config)?;
    let prefill = args.prefill.unwrap_or(!args.age);
    crate::input::open(&args.trace)?;
    crate::input::check_rereadable(&args.trace)?;
    let mut store = nvmdb_flash::build(&config).map_err(config_error)?;
    // A store recovers from a power loss where every device write passes one switch.
    let cut = [
        ("--power-loss-at", args.power_loss_at.is_some()),
        ("--power-loss-at-write", args.power_loss_at_write.is_some()),
    ];
    if let (Some((flag, _)), None) = (cut.iter().find(|(_, given)| *given), store.power_switch()) {
        return Err(CliError::input(format!(
            "{flag}: ftl.mapping = {} cannot recover from a power loss (the page-mapped FTL and ipl-native can)",
            serde_json::to_value(config.ftl.mapping).expect("serialises")
        )));
    }
    let options = ReplayOptions {
        warmup_requests: args.warmup_requests,
        content: config.content,
        seed: config.seed,
        power_loss_at: args.power_loss_at,
        power_loss_at_write: args.power_loss_at_write,
        power_loss_during_recovery: args.power_loss_during_recovery,
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
    // Every pass's response times are kept (for the exact percentiles), and the pages the
    // trace writes may grow the stack: count its requests and pages first, which also finds
    // a bad line before the run.
    let counts = open()?.try_fold(TraceCounts::default(), |mut counts, r| {
        r.map(|request| {
            counts.add(&request, config.flash.page_bytes);
            counts
        })
    });
    let counts = counts.map_err(|e| CliError::at_line(&args.trace, e.line, e.message))?;
    let (requests, pages) = (counts.requests, counts.changed_pages);
    let what = match args.passes {
        1 => format!("{} ({requests} requests, {pages} pages written or trimmed)", args.trace),
        passes => format!("--passes {passes} ({requests} requests, {pages} pages written or trimmed, each)"),
    };
    crate::limits::check_memory(&what, config.estimated_replay_memory_bytes(&counts, &options))?;
    let mut reopen_error = None;
    let trace = || match open() {
        Ok(requests) => Some(requests).into_iter().flatten(),
        Err(e) => {
            reopen_error.get_or_insert(e);
            None.into_iter().flatten()
        }
    };
    let mut reads = match &args.reads {
        Some(path) => {
            let file = crate::output::OutputFile::create(path).map_err(|e| CliError::unwritable(path, &e))?;
            Some(HexReads { file, error: None })
        }
        None => None,
    };
    let sink = reads.as_mut().map(|r| r as &mut dyn nvmdb_flash::replay::ReadBack);
    let report = nvmdb_flash::replay::replay_reading(store.as_mut(), trace, &options, sink).map_err(|e| match e {
        ReplayError::Input(e) => CliError::at_line(&args.trace, e.line, e.message),
        ReplayError::Store { request, error } => {
            CliError::failed(format!("{}: request {}: {error}", args.trace, request.saturating_add(1)))
        }
        ReplayError::CutPastEnd(cut) => CliError::input(format!("{}: {cut}", cut_flag(&cut))),
        ReplayError::ReadBack(e) => {
            let path = args.reads.as_deref().unwrap_or("--reads");
            match reads.as_mut().and_then(|r| r.error.take()) {
                Some(error) => CliError::unwritable(path, &error),
                None => CliError::failed(format!("{path}: cannot write: {e}")),
            }
        }
    });
    if let Some(e) = reopen_error {
        return Err(e);
    }
    let report = report?;
    let summary = report.summary();
    if summary.requests == 0 && args.warmup_requests > 0 {
        return Err(CliError::input(format!(
            "--warmup-requests {}: no request of {} is left to measure",
            args.warmup_requests, args.trace
        )));
    }
    if let Some(HexReads { file, .. }) = reads {
        file.finish()?;
    }
    store.check_invariants().map_err(|e| CliError::failed(format!("invariant broken after the replay: {e}")))?;
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

/// The flag that asked for a cut.
fn cut_flag(cut: &CutPastEnd) -> &'static str {
    match cut {
        CutPastEnd::Request { .. } => "--power-loss-at",
        CutPastEnd::DeviceWrite { .. } => "--power-loss-at-write",
        CutPastEnd::RecoveryWrite { .. } => "--power-loss-during-recovery",
    }
}

/// The flags' ranges and combinations: a combination that would do nothing is refused,
/// naming both flags (or the flag and the configuration key).
fn check_flags(args: &ReplayArgs, config: &SsdConfig) -> Result<(), CliError> {
    if args.power_loss_at.is_some() && args.power_loss_at_write.is_some() {
        return Err(CliError::input(
            "--power-loss-at and --power-loss-at-write: a replay cuts the power once; give one".to_string(),
        ));
    }
    if let Some(reads) = &args.reads {
        if config.content != nvmdb_device::PageContent::Bytes {
            let content = serde_json::to_value(config.content).expect("serialises");
            return Err(CliError::input(format!(
                "--reads needs content = \"bytes\": with content = {content} pages keep no bytes to read back"
            )));
        }
        let mut inputs = vec![("--trace", args.trace.as_str())];
        inputs.extend(args.config.as_deref().map(|c| ("--config", c)));
        crate::input::check_output_is_not_an_input(("--reads", reads), &inputs)?;
    }
    let buffered = config.buffer.kind != nvmdb_flash::config::BufferKind::None || config.dram.pages > 0;
    if args.drain && !buffered {
        return Err(CliError::input(crate::effect::no_effect(
            "--drain",
            "with buffer.kind = \"none\" and dram.pages = 0: nothing is ever pending",
        )));
    }
    if args.age {
        let pages = config.host_pages();
        crate::limits::check_memory(
            &format!("--age ({pages} logical pages, each written twice)"),
            config.estimated_aged_memory_bytes(),
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
    if let Some(loss) = &s.power_loss {
        let after = &loss.after_recovery;
        let place = match loss.activity {
            Some(activity) => {
                let activity = serde_json::to_value(activity).expect("serialises");
                format!("in request {} ({})", loss.operation, activity.as_str().unwrap_or("?"))
            }
            None => format!("after request {}", loss.operation),
        };
        let second = loss.recovery_cut.map_or(String::new(), |w| format!(", cut again at its device write {w}"));
        out.line(format_args!(
            "power loss           {place}, before device write {}; recovery {} device writes{second}",
            loss.device_write, loss.recovery_device_writes
        ))?;
        out.line(format_args!(
            "after recovery       {} pages verified, {} lost, {} corrupt",
            after.verified_pages, after.lost_pages, after.corrupt_pages
        ))?;
        out.line(format_args!(
            "at the end           {} pages verified, {} lost, {} corrupt",
            s.verified_pages, s.lost_pages, s.corrupt_pages
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
