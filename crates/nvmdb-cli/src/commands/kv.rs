//! `nvmdb kv run`: the IPL-P key-value engine (seed 002) on one of the seed's benchmarks,
//! or on a load file and an operations file. `nvmdb kv demo` is in [`crate::commands::kv_demo`].

use std::io::{BufReader, Write};

use clap::{Args, Subcommand};
use serde::Serialize;

use nvmdb_kv::file_format::{self, ParseError};
use nvmdb_kv::file_run::{self, FileRunError, FileRunOptions};
use nvmdb_kv::workload::CutReport;
use nvmdb_kv::{
    workload, Benchmark, DevicePreset, Engine, EngineConfig, EngineKind, FlashTime, KvError, Stats, WorkloadSpec,
};

use crate::commands::kv_demo;
use crate::error::CliError;
use crate::output::{Output, OutputFile};

/// Key-value engine commands.
#[derive(Debug, Subcommand)]
pub enum KvCommand {
    /// Run one engine on one of the seed's benchmarks, or on files.
    ///
    /// Benchmark mode: --workload insert|update|search --records N. Keys 0..N with
    /// 26-byte values; insert measures loading them in random order; update (80% of the
    /// updates to 20% of the pages) and search run N operations on a database first loaded
    /// that way and synced, and the load is left out of the figures. Each phase ends with
    /// a sync, which is measured.
    ///
    /// File mode: --load KEYS.txt (one `key value` per line) is loaded and synced first,
    /// then --ops OPS.txt (lines `I key value`, `U key value`, `D key`, `G key`, `S lo hi`,
    /// `C` for sync) runs and ends with a sync. Keys are u32 decimals, values 1 to 64
    /// printable ASCII bytes without spaces. --results gets one line per G (the value, or
    /// `-`) and per S (the keys in [lo, hi] ascending, separated by single spaces, or `-`).
    /// Both files are read first (so they must be files, not pipes) to count what the run
    /// holds, and a run that would not fit the memory available is refused.
    ///
    /// ops_per_s is operations per simulated second.
    Run(RunArgs),
    /// The seed's live performance monitor: the four engines side by side on the insert,
    /// update and search benchmarks, with progress bars and a throughput line every second
    /// on stderr, an optional web page (--serve), and the engines' reports on stdout.
    Demo(kv_demo::DemoArgs),
}

/// Arguments of `nvmdb kv run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Engine: flash-only, pcm-only, ipl (log in flash sectors by partial programming: IPL
    /// on a raw flash chip) or ipl-p (log in PCM).
    #[arg(long, value_parser = clap::builder::TypedValueParser::map(
        clap::builder::PossibleValuesParser::new(["flash-only", "pcm-only", "ipl", "ipl-p"]),
        |s: String| EngineKind::parse(&s).expect("listed values parse"),
    ))]
    pub engine: EngineKind,
    /// Benchmark mode: insert, update or search.
    #[arg(long, value_parser = clap::builder::TypedValueParser::map(
        clap::builder::PossibleValuesParser::new(["insert", "update", "search"]),
        |s: String| Benchmark::parse(&s).expect("listed values parse"),
    ))]
    pub workload: Option<Benchmark>,
    /// Benchmark mode: records (and measured operations), at least 1.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub records: Option<u64>,
    /// Buffer pool, KB (it must hold at least 3 pages).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    pub buffer_kb: u64,
    /// Page size, KB: 1 to 64.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub page_kb: u32,
    /// Sync after every K operations (besides the final sync, and C lines in file mode).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub sync_every: Option<u64>,
    /// Cut the power before the N-th device write (from 1) of the operations (file mode)
    /// or of the measured phase (benchmark mode), recover from the devices, and finish from
    /// the last completed sync; the JSON reports lost_synced_ops (keys on which the
    /// recovered state differs from the exact state at the last completed sync; must be 0) and recovery_ns. The other figures cover the run before the cut
    /// and after recovery. Past the end of the run, exit 2.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub power_loss_at: Option<u64>,
    /// The same cut as --power-loss-at, whose N already counts device writes, under the
    /// name `ssd replay` and `envy replay` give a cut inside an operation (not with it).
    /// The JSON's power_loss gives the operation, the device write and what the engine was
    /// doing (host, flush, merge, commit, gc).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub power_loss_at_write: Option<u64>,
    /// A second cut, before the M-th device write (from 1) of the recovery after the first
    /// cut: the engine recovers again from its devices alone. Needs --power-loss-at or
    /// --power-loss-at-write; past the recovery's device writes (power_loss's
    /// recovery_device_writes without it), exit 2.
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u64).range(1..))]
    pub power_loss_during_recovery: Option<u64>,
    /// Device timing: board (IPL-P Table 2) or chips (IPL-P Table 1).
    #[arg(long, default_value = "board", value_parser = clap::builder::TypedValueParser::map(
        clap::builder::PossibleValuesParser::new(["board", "chips"]),
        |s: String| DevicePreset::parse(&s).expect("listed values parse"),
    ))]
    pub preset: DevicePreset,
    /// Where flash time comes from (one source, never both): measured (the default with
    /// --preset board: the board SSD's 620 µs read and 1.6 ms write per 8 KB of IPL-P
    /// Table 2, its own garbage collection inside, so the FTL's garbage-collection copies
    /// and erases are counted but take no time) or chip (the default with --preset chips:
    /// the NAND chip of IPL-P Table 1, 75 µs read and 250 µs program per 2 KB page and
    /// 1.5 ms erase, garbage collection timed). ipl's partial program of a 512 B log sector
    /// takes the chip's 250 µs program under both: ipl is In-Page Logging on a raw flash
    /// chip that can program partially, which the board's SSD cannot.
    #[arg(long, value_parser = clap::builder::TypedValueParser::map(
        clap::builder::PossibleValuesParser::new(["measured", "chip"]),
        |s: String| FlashTime::parse(&s).expect("listed values parse"),
    ))]
    pub flash_time: Option<FlashTime>,
    /// PCM write granularity, bytes (a power of two, 8 to 4096): ipl-p's log write unit.
    #[arg(long, default_value_t = 128)]
    pub pcm_write_bytes: u32,
    /// Seed of the benchmark's key order, update and search keys and values.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// File mode: the records to load.
    #[arg(long)]
    pub load: Option<String>,
    /// File mode: the operations.
    #[arg(long)]
    pub ops: Option<String>,
    /// File mode: where to write the answers of G and S operations.
    #[arg(long)]
    pub results: Option<String>,
}

/// Runs a `kv` subcommand.
pub fn run(command: KvCommand) -> Result<(), CliError> {
    match command {
        KvCommand::Run(args) => run_kv(&args),
        KvCommand::Demo(args) => kv_demo::run(&args),
    }
}

/// What `nvmdb kv run` prints.
#[derive(Debug, Serialize)]
struct Report {
    engine: &'static str,
    mode: &'static str,
    preset: &'static str,
    /// Where flash time comes from (engines with flash).
    #[serde(skip_serializing_if = "Option::is_none")]
    flash_time: Option<&'static str>,
    page_kb: u32,
    buffer_kb: u64,
    pcm_write_bytes: u32,
    seed: u64,
    records: u64,
    /// Measured operations (`ops`, below) per simulated second.
    ops_per_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    power_loss_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lost_synced_ops: Option<u64>,
    /// The same check at the end of the run, after its last sync.
    #[serde(skip_serializing_if = "Option::is_none")]
    lost_synced_ops_at_end: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recovery_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    power_loss: Option<CutReport>,
    #[serde(flatten)]
    stats: Stats,
}

fn config(args: &RunArgs, records: u64) -> Result<EngineConfig, CliError> {
    let mut config = EngineConfig::new(args.engine, records, 64);
    config.page_bytes = args.page_kb.saturating_mul(1024);
    config.buffer_bytes = args.buffer_kb.saturating_mul(1024);
    config.preset = args.preset;
    config.flash_time = flash_time(args)?;
    config.pcm_write_bytes = args.pcm_write_bytes;
    config.seed = args.seed;
    config.size_for(records, 64);
    if config.buffer_pages() < nvmdb_kv::config::MIN_BUFFER_PAGES {
        return Err(CliError::input(format!(
            "--buffer-kb {} holds {} pages of {} KB; at least {} are needed",
            args.buffer_kb,
            config.buffer_pages(),
            args.page_kb,
            nvmdb_kv::config::MIN_BUFFER_PAGES
        )));
    }
    if !args.pcm_write_bytes.is_power_of_two() || !(8..=4096).contains(&args.pcm_write_bytes) {
        return Err(CliError::input(format!(
            "--pcm-write-bytes {}: must be a power of two from 8 to 4096",
            args.pcm_write_bytes
        )));
    }
    config.validate().map_err(|e| CliError::input(e.to_string()))?;
    Ok(config)
}

/// The flash time of `--flash-time`, or the preset's; refused where it does nothing
/// (pcm-only has no flash) or names a device the preset does not have.
fn flash_time(args: &RunArgs) -> Result<FlashTime, CliError> {
    let Some(time) = args.flash_time else { return Ok(args.preset.default_flash_time()) };
    if !args.engine.has_flash() {
        return Err(CliError::input(crate::effect::no_effect(
            &format!("--flash-time {}", time.name()),
            &format!("with --engine {}, which has no flash", args.engine.name()),
        )));
    }
    if args.preset == DevicePreset::Chips && time == FlashTime::Measured {
        return Err(CliError::input(
            "--flash-time measured is the board's SSD; --preset chips has only the chip (--flash-time chip)",
        ));
    }
    Ok(time)
}

/// The power cut a run asks for (device write N, from 1) and the flag that gives it;
/// refuses both flags, and a second cut without a first, naming both.
fn power_cut(args: &RunArgs) -> Result<Option<(u64, &'static str)>, CliError> {
    let cut = match (args.power_loss_at, args.power_loss_at_write) {
        (Some(_), Some(_)) => {
            return Err(CliError::input(
                "--power-loss-at and --power-loss-at-write: both name the same cut (a device write); give one",
            ))
        }
        (Some(n), None) => Some((n, "--power-loss-at")),
        (None, Some(n)) => Some((n, "--power-loss-at-write")),
        (None, None) => None,
    };
    if cut.is_none() && args.power_loss_during_recovery.is_some() {
        return Err(CliError::input(
            "--power-loss-during-recovery does nothing without --power-loss-at or --power-loss-at-write: there is no \
             recovery",
        ));
    }
    Ok(cut)
}

/// Fills `report`'s power-loss fields; a cut past the end of the run, or a second cut
/// past the end of the recovery, is refused naming its flag.
fn report_cut(
    report: &mut Report,
    args: &RunArgs,
    (at, flag): (u64, &str),
    cut: Option<CutReport>,
    lost: (u64, u64),
    recovery_ns: u64,
) -> Result<(), CliError> {
    let Some(cut) = cut else {
        return Err(CliError::input(format!("{flag}: device write {at} is past the end of the run")));
    };
    if let (Some(m), None) = (args.power_loss_during_recovery, cut.recovery_cut) {
        return Err(CliError::input(format!(
            "--power-loss-during-recovery: device write {m} is past the end of the recovery ({} device writes in all)",
            cut.recovery_device_writes
        )));
    }
    report.power_loss_at = Some(at);
    report.lost_synced_ops = Some(lost.0);
    report.lost_synced_ops_at_end = Some(lost.1);
    report.recovery_ns = Some(recovery_ns);
    report.power_loss = Some(cut);
    Ok(())
}

fn run_kv(args: &RunArgs) -> Result<(), CliError> {
    let cut = power_cut(args)?;
    let file_mode = args.load.is_some() || args.ops.is_some() || args.results.is_some();
    let benchmark_mode = args.workload.is_some() || args.records.is_some();
    let report = match (file_mode, benchmark_mode) {
        (true, true) => {
            return Err(CliError::input("use either --load/--ops/--results or --workload/--records, not both"))
        }
        (true, false) => file_run(args, cut)?,
        (false, true) => benchmark_run(args, cut)?,
        (false, false) => return Err(CliError::input("give --workload and --records, or --load and --ops")),
    };
    Output::new().report(&report, args.json)
}

fn engine_error(e: KvError) -> CliError {
    match e {
        KvError::Interrupted(i) => i.into(),
        e => CliError::failed(e.to_string()),
    }
}

/// Benchmark mode, with the power cut `cut` ([`power_cut`]).
fn benchmark_run(args: &RunArgs, cut: Option<(u64, &'static str)>) -> Result<Report, CliError> {
    let (Some(benchmark), Some(records)) = (args.workload, args.records) else {
        return Err(CliError::input("benchmark mode needs --workload and --records"));
    };
    let config = config(args, records)?;
    let spec =
        WorkloadSpec { sync_every: args.sync_every, ..WorkloadSpec::seed_benchmark(benchmark, records, args.seed) };
    let estimate = match cut {
        Some(_) => workload::estimated_power_loss_memory_bytes(&config, &spec),
        None => workload::estimated_memory_bytes(&config, &spec),
    };
    crate::limits::check_memory("--records", estimate)?;
    let mut engine = Engine::new(config.clone()).map_err(engine_error)?;
    let Some(cut) = cut else {
        let result = workload::run(&mut engine, &spec, 4096, &mut |_| {}).map_err(engine_error)?;
        return Ok(report(args, &config, benchmark.name(), records, result.stats));
    };
    let (_, outcome) =
        workload::run_with_power_loss(engine, &spec, cut.0, args.power_loss_during_recovery).map_err(engine_error)?;
    let mut report = report(args, &config, benchmark.name(), records, outcome.stats);
    let lost = (outcome.lost_synced_ops, outcome.lost_synced_ops_at_end);
    report_cut(&mut report, args, cut, outcome.cut, lost, outcome.recovery_ns)?;
    Ok(report)
}

fn report(args: &RunArgs, config: &EngineConfig, mode: &'static str, records: u64, stats: Stats) -> Report {
    Report {
        engine: args.engine.name(),
        mode,
        preset: args.preset.name(),
        flash_time: config.kind.has_flash().then(|| config.flash_time.name()),
        page_kb: args.page_kb,
        buffer_kb: args.buffer_kb,
        pcm_write_bytes: args.pcm_write_bytes,
        seed: args.seed,
        records,
        ops_per_s: stats.ops_per_s(),
        power_loss_at: None,
        lost_synced_ops: None,
        lost_synced_ops_at_end: None,
        recovery_ns: None,
        power_loss: None,
        stats,
    }
}

fn at_line(path: &str, e: ParseError) -> CliError {
    CliError::at_line(path, e.line, e.message)
}

/// File mode, with the power cut `cut` ([`power_cut`]): both files are read first to
/// count what the run holds, and a run whose memory estimate
/// ([`file_run::estimated_memory_bytes`]) would not fit is refused naming them before
/// anything is kept.
fn file_run(args: &RunArgs, cut: Option<(u64, &'static str)>) -> Result<Report, CliError> {
    let (Some(load), Some(ops_path)) = (&args.load, &args.ops) else {
        return Err(CliError::input("file mode needs both --load and --ops"));
    };
    if let Some(out) = &args.results {
        crate::input::check_output_is_not_an_input(("--results", out), &[("--load", load), ("--ops", ops_path)])?;
    }
    crate::input::check_rereadable(load)?;
    crate::input::check_rereadable(ops_path)?;
    let options = FileRunOptions {
        sync_every: args.sync_every,
        power_loss_at: cut.map(|(n, _)| n),
        power_loss_during_recovery: args.power_loss_during_recovery,
        keep_results: args.results.is_some(),
    };
    let open = |path: &str| crate::input::open(path).map(BufReader::new);
    let loaded = file_format::summarize_load(open(load)?).map_err(|e| at_line(load, e))?;
    let summary =
        file_run::summarize_ops(open(ops_path)?, loaded.records, &options).map_err(|e| at_line(ops_path, e))?;
    let config = config(args, loaded.records.saturating_add(summary.inserts))?;
    crate::limits::check_memory(
        "--load/--ops",
        file_run::estimated_memory_bytes(&config, &loaded, &summary, &options),
    )?;
    let records = file_format::check_load(open(load)?, loaded.records).map_err(|e| at_line(load, e))?;
    let ops = file_format::parse_ops(open(ops_path)?, summary.ops).map_err(|e| at_line(ops_path, e))?;
    let mut engine = Engine::new(config.clone()).map_err(engine_error)?;
    let model = file_run::load(&mut engine, open(load)?, cut.is_some()).map_err(|e| file_error(load, e))?;
    let mut out = match &args.results {
        Some(path) => Some(OutputFile::create(path).map_err(|e| CliError::unwritable(path, &e))?),
        None => None,
    };
    let results_path = args.results.as_deref().unwrap_or_default();
    let outcome = file_run::run_ops(engine, &ops, &options, model, &mut |answers: &[u8]| match &mut out {
        Some(out) => out.write_all(answers).map_err(|e| CliError::unwritable(results_path, &e)),
        None => Ok(()),
    })
    .map_err(|e| file_error(load, e))?;
    if let Some(out) = out {
        out.finish()?;
    }
    let mut report = report(args, &config, "file", records, outcome.stats);
    if let Some(cut) = cut {
        let lost = (outcome.lost_synced_ops, outcome.lost_synced_ops_at_end);
        report_cut(&mut report, args, cut, outcome.cut, lost, outcome.recovery_ns)?;
    }
    Ok(report)
}

/// A file run's failure: a line of the load file (`load`), the engine's, or the results
/// file's.
fn file_error(load: &str, e: FileRunError<CliError>) -> CliError {
    match e {
        FileRunError::Load(e) => at_line(load, e),
        FileRunError::Engine(e) => engine_error(e),
        FileRunError::Results(e) => e,
    }
}
