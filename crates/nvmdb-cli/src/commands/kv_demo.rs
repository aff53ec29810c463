//! `nvmdb kv demo`: the seed's live performance monitor (IPL-P, Section 3). The four
//! engines run side by side, one thread each, through the three benchmarks; stderr shows
//! progress bars and a throughput line every second, `--serve` a web page, and stdout the
//! final numbers.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use nvmdb_kv::{Benchmark, Engine, EngineConfig, EngineKind, Phase, Run, RunReport, WorkloadSpec};

use crate::error::CliError;
use crate::limits;
use crate::monitor::board::{Board, RunPlan};
use crate::monitor::runner::{run_jobs, Job, Reporter, REPORTS_PER_RUN};
use crate::monitor::server;
use crate::monitor::terminal::{thousands, Terminal};
use crate::output::Output;

/// Value bytes of the seed's records (a 4 B key and a 26 B value).
const VALUE_BYTES: usize = 26;
/// Values the devices are sized for: as `kv run` sizes them (values up to 64 B), so that
/// both commands give the same numbers for the same engine, benchmark, records and seed.
const SIZED_VALUE_BYTES: usize = 64;
/// Most records `--records` accepts (the seed's experiment has 1,000,000).
const MAX_RECORDS: u64 = 10_000_000;
/// How long the server stays up after the runs end, so that a page shows the final
/// numbers.
pub const GRACE: Duration = Duration::from_secs(3);

/// Arguments of `nvmdb kv demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Records of each benchmark, 1 to 10,000,000 (and what fits in the machine's memory:
    /// about 4 KB per record): inserted in random order, or loaded and then updated (80% of
    /// the updates to 20% of the pages) or searched as many times.
    #[arg(long, default_value_t = 50_000, value_parser = clap::value_parser!(u64).range(1..=MAX_RECORDS))]
    pub records: u64,
    /// The run's one seed (key order, update and search keys, values, FTL); the same seed
    /// gives the same final numbers.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also serve the live monitor page at IP:PORT, and only there (e.g. 127.0.0.1:8080;
    /// port 0 picks a free port). The address is printed on stderr; the server stops 3 s
    /// after the runs end, or on Ctrl-C.
    #[arg(long, value_name = "IP:PORT")]
    pub serve: Option<String>,
    /// JSON output: each run's report (engine, benchmark, records, measured counters,
    /// ops_per_s).
    #[arg(long)]
    pub json: bool,
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> Result<(), CliError> {
    let configs: Vec<EngineConfig> = EngineKind::ALL
        .into_iter()
        .map(|kind| EngineConfig { seed: args.seed, ..EngineConfig::new(kind, args.records, SIZED_VALUE_BYTES) })
        .collect();
    for config in &configs {
        config.validate().map_err(|e| CliError::input(format!("--records {}: {e}", args.records)))?;
    }
    limits::check_memory("--records", memory_estimate_bytes(&configs, args.records, args.seed))?;
    // Bound before anything runs: a bad or taken address fails first.
    let listener = args.serve.as_deref().map(server::bind).transpose()?;

    let plans: Vec<RunPlan> = configs
        .iter()
        .flat_map(|config| {
            Benchmark::ALL.into_iter().map(|benchmark| RunPlan {
                engine: config.kind.name().to_string(),
                benchmark: benchmark.name().to_string(),
                load_total: if benchmark == Benchmark::Insert { 0 } else { args.records },
                ops_total: args.records,
            })
        })
        .collect();
    let caption = configs.first().map_or(String::new(), |c| {
        format!(
            "{} records (4 B keys, {VALUE_BYTES} B values), seed {}, '{}' device timing, {} KB pages, {} KB buffer pool",
            thousands(args.records as f64),
            args.seed,
            c.preset.name(),
            c.page_bytes / 1024,
            c.buffer_bytes / 1024
        )
    });
    let board = Arc::new(Board::new(caption, &plans));
    if let Some(listener) = listener {
        let addr = listener.local_addr().map_err(|e| CliError::failed(format!("--serve: {e}")))?;
        eprintln!("live monitor at http://{addr}/ (it stops {} s after the runs end, or on Ctrl-C)", GRACE.as_secs());
        server::spawn(listener, Arc::clone(&board));
    }

    let runs_per_engine = Benchmark::ALL.len();
    let jobs: Vec<(usize, Job<Vec<RunReport>>)> = configs
        .into_iter()
        .enumerate()
        .map(|(i, config)| (i.saturating_mul(runs_per_engine), engine_job(config, args.records, args.seed)))
        .collect();
    let mut terminal = Terminal::new(&board);
    let reports: Vec<RunReport> = run_jobs(&board, jobs, &mut terminal)?.into_iter().flatten().collect();

    print_reports(&reports, args.json)?;
    if args.serve.is_some() {
        eprintln!("the runs are over; the monitor stops in {} s", GRACE.as_secs());
        std::thread::sleep(GRACE);
    }
    Ok(())
}

/// Memory of the four engines running at once, each running its benchmarks one after
/// another on a fresh engine: per engine the largest of its runs' estimates
/// ([`nvmdb_kv::workload::estimated_memory_bytes`]).
fn memory_estimate_bytes(configs: &[EngineConfig], records: u64, seed: u64) -> u64 {
    configs
        .iter()
        .map(|config| {
            Benchmark::ALL
                .into_iter()
                .map(|b| {
                    nvmdb_kv::workload::estimated_memory_bytes(config, &WorkloadSpec::seed_benchmark(b, records, seed))
                })
                .max()
                .unwrap_or(0)
        })
        .fold(0, u64::saturating_add)
}

/// One engine's three benchmarks, each on a fresh engine, one after another.
fn engine_job(config: EngineConfig, records: u64, seed: u64) -> Job<Vec<RunReport>> {
    Box::new(move |reporter: &Reporter| {
        let name = config.kind.name();
        let failed = |e: nvmdb_kv::KvError| CliError::failed(format!("{name}: {e}"));
        let step_ops = records.div_ceil(REPORTS_PER_RUN).max(1);
        let mut reports = Vec::new();
        for (nth, benchmark) in Benchmark::ALL.into_iter().enumerate() {
            let mut engine = Engine::new(config.clone()).map_err(failed)?;
            let mut run = Run::new(&WorkloadSpec::seed_benchmark(benchmark, records, seed), &engine);
            let load_total = if benchmark == Benchmark::Insert { 0 } else { records };
            while !run.is_done() {
                let progress = run.step(&mut engine, step_ops).map_err(failed)?;
                if progress.phase == Phase::Load {
                    reporter.load(nth, progress.ops_done);
                    continue;
                }
                // A step may end past the load: the whole load is done.
                reporter.load(nth, load_total);
                if progress.phase == Phase::Measure {
                    reporter.report(nth, progress.ops_done, progress.sim_ns);
                }
            }
            let report = run.report(&engine);
            reporter.report(nth, report.stats.ops, report.stats.sim_ns);
            reporter.finish(nth);
            reports.push(report);
        }
        Ok(reports)
    })
}

fn print_reports(reports: &[RunReport], json: bool) -> Result<(), CliError> {
    let out = Output::new();
    if json {
        return out.json(&reports);
    }
    let mut out = out;
    out.line(format_args!(
        "{:<10}  {:<9}  {:>15}  {:>11}  {:>11}  {:>11}  {:>13}  {:>12}  {:>7}",
        "engine",
        "benchmark",
        "ops/s (sim.)",
        "simulated s",
        "flash reads",
        "flash pages",
        "flash sectors",
        "PCM bytes",
        "merges"
    ))?;
    for r in reports {
        let s = &r.stats;
        out.line(format_args!(
            "{:<10}  {:<9}  {:>15}  {:>11.3}  {:>11}  {:>11}  {:>13}  {:>12}  {:>7}",
            r.engine.name(),
            r.benchmark.name(),
            thousands(r.ops_per_s),
            s.sim_ns as f64 / 1e9,
            s.flash_page_reads,
            s.flash_page_writes,
            s.flash_sector_writes,
            s.pcm_bytes_written,
            s.merges
        ))?;
    }
    out.finish()
}
