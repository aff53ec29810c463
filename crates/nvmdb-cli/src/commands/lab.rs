//! `nvmdb list`, `nvmdb run` and `nvmdb reproduce`.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use clap::{Args, ValueEnum};
use nvmdb_lab::report::{write_experiment, write_report, Finished, RunMeta};
use nvmdb_lab::{Claim, Experiment, LabError, Pool, RunContext, RunEvents, Scale};

use crate::error::CliError;
use crate::output::Output;
use nvmdb_experiments as registry;

/// Run size.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ScaleArg {
    /// Small sizes: all experiments in a few minutes.
    Quick,
    /// The papers' sizes.
    Paper,
}

impl From<ScaleArg> for Scale {
    fn from(s: ScaleArg) -> Scale {
        match s {
            ScaleArg::Quick => Scale::Quick,
            ScaleArg::Paper => Scale::Paper,
        }
    }
}

/// Options shared by `run` and `reproduce`.
#[derive(Debug, Args)]
pub struct RunOptions {
    /// Experiment size.
    #[arg(long, value_enum, default_value = "quick")]
    pub scale: ScaleArg,
    /// The run's one seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output directory.
    #[arg(long, default_value = "report")]
    pub out: PathBuf,
}

/// Arguments of `nvmdb run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Experiment id (see `nvmdb list`).
    pub experiment: String,
    #[command(flatten)]
    pub options: RunOptions,
    /// Threads the experiment may run its independent parts on (default: the machine's
    /// cores), within the memory budget of `reproduce`. The output is the same for any
    /// number.
    #[arg(long)]
    pub jobs: Option<NonZeroUsize>,
}

/// Arguments of `nvmdb reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    #[command(flatten)]
    pub options: RunOptions,
    /// Threads (default: the machine's cores): experiments run at once, and a thread with
    /// no experiment to start runs independent parts of a running one. The report is the
    /// same for any number; experiments start longest first, and experiments and parts
    /// start only while their measured memory footprints together stay within 11.5 GiB
    /// (or half the machine's memory).
    #[arg(long)]
    pub jobs: Option<NonZeroUsize>,
}

/// Most memory the footprints of experiments and parts running at once may add up to:
/// two paper-scale B+-trees of 50 M entries.
const MEMORY_BUDGET_BYTES: u64 = 23 << 29;

/// The pool of `run` and `reproduce`: `jobs` threads (default: the machine's cores) within
/// the memory budget.
fn pool(jobs: Option<NonZeroUsize>) -> Pool {
    let jobs = jobs.or_else(|| std::thread::available_parallelism().ok()).map_or(1, NonZeroUsize::get);
    Pool { jobs, memory_budget_bytes: MEMORY_BUDGET_BYTES.min(crate::limits::machine_memory_bytes() / 2) }
}

/// `nvmdb list`.
pub fn list() -> Result<(), CliError> {
    let mut out = Output::new();
    for e in registry::all() {
        out.line(format_args!("{:<22} {}  [{}]", e.id(), e.title(), e.source()))?;
    }
    out.finish()
}

/// Writes each experiment's files as it ends and reports on stderr how long it took and
/// how much resident memory the process held while it ran (sampled).
struct Reporter<'a> {
    ctx: &'a RunContext,
    out: &'a Path,
    meta: &'a RunMeta,
    claims: &'a [Claim],
    /// Running experiments and the most resident memory sampled since each started.
    resident_peaks: Mutex<BTreeMap<&'static str, u64>>,
}

impl Reporter<'_> {
    fn sample(&self) {
        let Some(now) = crate::limits::resident_bytes() else { return };
        for peak in self.resident_peaks.lock().expect("no panics while locked").values_mut() {
            *peak = (*peak).max(now);
        }
    }

    /// Runs `experiments` on the context's pool, sampling resident memory every 100 ms
    /// meanwhile.
    fn run(&self, experiments: &[&dyn Experiment]) -> Result<Vec<Finished>, LabError> {
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    self.sample();
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
            let result = nvmdb_lab::run_experiments(experiments, self.ctx, self);
            done.store(true, Ordering::Relaxed);
            result
        })
    }
}

impl RunEvents for Reporter<'_> {
    fn started(&self, experiment: &dyn Experiment) {
        let now = crate::limits::resident_bytes().unwrap_or(0);
        self.resident_peaks.lock().expect("no panics while locked").insert(experiment.id(), now);
        self.ctx.log(&format!("running {} ({})", experiment.id(), experiment.title()));
    }

    fn finished(&self, finished: &Finished, wall: Duration) -> Result<(), LabError> {
        self.sample();
        let peak = self.resident_peaks.lock().expect("no panics while locked").remove(finished.id.as_str());
        write_experiment(self.out, finished, self.meta, self.claims)?;
        let memory = match peak {
            Some(bytes) if bytes > 0 => format!(", process resident memory up to {} MiB meanwhile", bytes >> 20),
            _ => String::new(),
        };
        self.ctx.log(&format!("  {} done in {:.1} s{memory}", finished.id, wall.as_secs_f64()));
        Ok(())
    }
}

/// Makes sure `--out` is a directory we can write before any experiment runs, so a long
/// run never ends in an unwritable path. A probe file is created and removed; nothing
/// already in the directory is touched.
fn check_out_dir(out: &Path) -> Result<(), CliError> {
    let bad = |what: String| CliError::input(format!("--out {}: {what}", out.display()));
    if out.exists() && !out.is_dir() {
        return Err(bad("exists and is not a directory".into()));
    }
    std::fs::create_dir_all(out).map_err(|e| bad(format!("cannot create the directory: {e}")))?;
    let probe = out.join(format!(".nvmdb-write-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| bad(format!("cannot write in the directory: {e}")))?;
    std::fs::remove_file(&probe).map_err(|e| bad(format!("cannot remove the write probe: {e}")))?;
    Ok(())
}

/// `nvmdb run EXPERIMENT`.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let all = registry::all();
    let experiment = nvmdb_lab::find(&all, &args.experiment)?;
    let ctx = RunContext::new(args.options.scale.into(), args.options.seed).with_pool(pool(args.jobs));
    let meta = RunMeta::new(ctx.seed, ctx.scale);
    check_out_dir(&args.options.out)?;
    let claims = registry::papers::all();
    let reporter =
        Reporter { ctx: &ctx, out: &args.options.out, meta: &meta, claims: &claims, resident_peaks: Mutex::default() };
    let finished = reporter.run(&[experiment])?;
    let rows = nvmdb_lab::scorecard(&claims, &finished)?;
    eprintln!("wrote {}", args.options.out.join(experiment.id()).display());
    let mut out = Output::new();
    out.line(nvmdb_lab::report::markdown(&finished, &meta, &rows))?;
    out.finish()
}

/// `nvmdb reproduce`: every experiment on `--jobs` threads, then the combined report.
pub fn reproduce(args: &ReproduceArgs) -> Result<(), CliError> {
    let options = &args.options;
    let ctx = RunContext::new(options.scale.into(), options.seed).with_pool(pool(args.jobs));
    let meta = RunMeta::new(ctx.seed, ctx.scale);
    check_out_dir(&options.out)?;
    let claims = registry::papers::all();
    let all = registry::all();
    let experiments: Vec<&dyn Experiment> = all.iter().map(|e| e.as_ref()).collect();
    let reporter =
        Reporter { ctx: &ctx, out: &options.out, meta: &meta, claims: &claims, resident_peaks: Mutex::default() };
    let finished = reporter.run(&experiments)?;
    write_report(&options.out, &finished, &meta, &claims)?;
    eprintln!("wrote {}/REPORT.md and {}/index.html", options.out.display(), options.out.display());
    if let Some(peak) = crate::limits::peak_resident_bytes() {
        eprintln!("{} experiments on {} threads; peak resident memory {} MiB", finished.len(), ctx.jobs(), peak >> 20);
    }
    Ok(())
}
