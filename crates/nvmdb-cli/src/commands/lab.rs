//! `nvmdb list`, `nvmdb run` and `nvmdb reproduce`.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::{Args, ValueEnum};
use nvmdb_lab::report::{write_experiment, write_report, Finished, RunMeta};
use nvmdb_lab::stored::{store, Provenance};
use nvmdb_lab::{Claim, Experiment, LabError, PaperStore, Pool, RunContext, RunEvents, Scale, StoredRun, Tally};

use crate::error::CliError;
use crate::output::Output;
use nvmdb_experiments as registry;

thread_local! {
    /// Where the `run` or `reproduce` running on this thread counts its experiments and
    /// parts (see [`crate::run_counted`]).
    static TALLY: std::cell::RefCell<Option<Arc<Tally>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `command` with `run` and `reproduce` on this thread counting in `tally`.
pub fn counting<T>(tally: Arc<Tally>, command: impl FnOnce() -> T) -> T {
    let earlier = TALLY.with(|t| t.replace(Some(tally)));
    let result = command();
    TALLY.with(|t| t.replace(earlier));
    result
}

/// Whether a program counts this thread's run ([`counting`]): it then shows its own
/// progress, and the status lines on stderr are left out.
fn counted() -> bool {
    TALLY.with(|t| t.borrow().is_some())
}

/// A context for `run` and `reproduce`, counting in this thread's tally if it has one.
fn context(options: &RunOptions, jobs: Option<NonZeroUsize>) -> RunContext {
    let ctx = RunContext::new(options.scale.into(), options.seed).with_pool(pool(jobs));
    match TALLY.with(|t| t.borrow().clone()) {
        Some(tally) => ctx.with_tally(tally),
        None => ctx,
    }
}

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
    /// With `--scale paper`: store each experiment's scorecard values, with the command,
    /// date, commit and machine, as `PAPER_RESULTS/<experiment>.json` (replacing the
    /// experiment's earlier stored run) for quick reports to cite.
    #[arg(long)]
    pub store: bool,
    /// Directory of stored paper-scale runs: where `--store` writes them, and from which
    /// the report's "paper scale (stored)" scorecard column is read (relative to the
    /// current directory; a missing directory means none are stored).
    #[arg(long, default_value = "data/paper-scale")]
    pub paper_results: PathBuf,
}

impl RunOptions {
    /// Refuses `--store` below paper scale, then reads the stored paper-scale runs, before
    /// any experiment starts: a malformed stored file is one line naming `FILE:LINE`.
    fn paper_store(&self, claims: &[Claim]) -> Result<PaperStore, CliError> {
        if self.store && !matches!(self.scale, ScaleArg::Paper) {
            return Err(CliError::input("--store keeps paper-scale runs only: add --scale paper"));
        }
        if self.paper_results.exists() && !self.paper_results.is_dir() {
            return Err(CliError::input(format!("--paper-results {}: not a directory", self.paper_results.display())));
        }
        // The report's own scorecard.json there would read as a stored run.
        if crate::input::same_file(&self.out, &self.paper_results) {
            return Err(CliError::input(format!(
                "--out {}: the directory of --paper-results; write the report elsewhere",
                self.out.display()
            )));
        }
        Ok(PaperStore::load(&self.paper_results, claims)?)
    }

    /// The store directory of `--store`, and the command a stored run records.
    fn store_to(&self, command: String) -> Option<(PathBuf, String)> {
        self.store.then(|| (self.paper_results.clone(), command))
    }
}

/// The machine in words: CPU model, logical cores and memory, from /proc where it can be
/// read.
pub(crate) fn machine_description() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|rest| rest.split_once(':')).map(|(_, m)| m.trim()))
        .unwrap_or("unknown CPU");
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let memory_gib = crate::limits::machine_memory_bytes() >> 30;
    format!("{model}, {cores} logical cores, {memory_gib} GiB, {}", std::env::consts::OS)
}

/// Now, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
pub(crate) fn now_utc() -> String {
    let unix_s = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    nvmdb_lab::stored::utc_timestamp(unix_s).unwrap_or_default()
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
    /// Print the results as one JSON object instead of the tables: the experiment's
    /// id, title, summary, configuration, notes, tables (each with a short `key` where the
    /// experiment gives one, and cells whose report text stands for several values as
    /// objects of those values), plots' data, scorecard rows and the files written to
    /// --out (which are the same as without --json).
    #[arg(long)]
    pub json: bool,
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
/// 11.5 GiB, leaving half a GiB of a 12 GiB peak for what no footprint counts. A
/// paper-scale B+-tree of 50 M entries states 3.75 GiB, so two fit beside a smaller
/// experiment.
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
    /// With `--store`: the directory finished experiments are stored in, and the command.
    store_to: Option<(PathBuf, String)>,
    /// Running experiments and the most resident memory sampled since each started.
    resident_peaks: Mutex<BTreeMap<&'static str, u64>>,
    /// No status lines on stderr: a program counts the run instead ([`counting`]).
    quiet: bool,
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
        if !self.quiet {
            self.ctx.log(&format!("running {} ({})", experiment.id(), experiment.title()));
        }
    }

    fn finished(&self, finished: &Finished, wall: Duration) -> Result<(), LabError> {
        self.sample();
        let peak = self.resident_peaks.lock().expect("no panics while locked").remove(finished.id.as_str());
        write_experiment(self.out, finished, self.meta, self.claims)?;
        if let Some((dir, command)) = &self.store_to {
            let rows = nvmdb_lab::scorecard(self.claims, std::slice::from_ref(finished))?;
            let provenance = Provenance {
                command: command.clone(),
                date: now_utc(),
                machine: machine_description(),
                wall_s: (wall.as_secs_f64() * 10.0).round() / 10.0,
            };
            let path = store(dir, &StoredRun::new(finished, &rows, self.meta, provenance))?;
            self.ctx.log(&format!("  stored {}", path.display()));
        }
        let memory = match peak {
            Some(bytes) if bytes > 0 => format!(", process resident memory up to {} MiB meanwhile", bytes >> 20),
            _ => String::new(),
        };
        if !self.quiet {
            self.ctx.log(&format!("  {} done in {:.1} s{memory}", finished.id, wall.as_secs_f64()));
        }
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
    let path = out.display().to_string();
    std::fs::create_dir_all(out).map_err(|e| CliError::flag_io("--out", &path, "cannot create the directory", &e))?;
    let probe = out.join(format!(".nvmdb-write-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| CliError::flag_io("--out", &path, "cannot write in the directory", &e))?;
    std::fs::remove_file(&probe).map_err(|e| bad(format!("cannot remove the write probe: {e}")))?;
    Ok(())
}

/// `nvmdb run EXPERIMENT`.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let all = registry::all();
    let experiment = nvmdb_lab::find(&all, &args.experiment)?;
    let ctx = context(&args.options, args.jobs);
    let meta = RunMeta::new(ctx.seed, ctx.scale, env!("NVMDB_GIT_COMMIT"));
    check_out_dir(&args.options.out)?;
    let claims = registry::papers::all();
    let stored = args.options.paper_store(&claims)?;
    let command = format!("nvmdb run {} --scale paper --seed {} --store", experiment.id(), ctx.seed);
    let reporter = Reporter {
        ctx: &ctx,
        out: &args.options.out,
        meta: &meta,
        claims: &claims,
        store_to: args.options.store_to(command),
        resident_peaks: Mutex::default(),
        quiet: counted(),
    };
    let finished = reporter.run(&[experiment])?;
    // A run just stored is cited beside itself.
    let stored = if args.options.store { PaperStore::load(&args.options.paper_results, &claims)? } else { stored };
    let mut rows = nvmdb_lab::scorecard(&claims, &finished)?;
    stored.attach(&mut rows, &claims);
    let dir = args.options.out.join(experiment.id());
    if args.json {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| CliError::unreadable(&dir.display().to_string(), &e))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .collect();
        files.sort();
        let [finished] = finished.as_slice() else { unreachable!("one experiment ran") };
        return Output::new().json(&nvmdb_lab::report::data_json(finished, &meta, &rows, &files));
    }
    if !counted() {
        eprintln!("wrote {}", dir.display());
    }
    let mut out = Output::new();
    out.line(nvmdb_lab::report::markdown(&finished, &meta, &rows, &[], &stored))?;
    out.finish()
}

/// `nvmdb reproduce`: every experiment on `--jobs` threads, then the combined report.
pub fn reproduce(args: &ReproduceArgs) -> Result<(), CliError> {
    let options = &args.options;
    let ctx = context(options, args.jobs);
    let meta = RunMeta::new(ctx.seed, ctx.scale, env!("NVMDB_GIT_COMMIT"));
    check_out_dir(&options.out)?;
    let claims = registry::papers::all();
    let stored = options.paper_store(&claims)?;
    let all = registry::all();
    let experiments: Vec<&dyn Experiment> = all.iter().map(|e| e.as_ref()).collect();
    let command = format!("nvmdb reproduce --scale paper --seed {} --store", ctx.seed);
    let reporter = Reporter {
        ctx: &ctx,
        out: &options.out,
        meta: &meta,
        claims: &claims,
        store_to: options.store_to(command),
        resident_peaks: Mutex::default(),
        quiet: counted(),
    };
    let finished = reporter.run(&experiments)?;
    let stored = if options.store { PaperStore::load(&options.paper_results, &claims)? } else { stored };
    write_report(&options.out, &finished, &meta, &claims, &registry::papers::unmeasured(), &stored)?;
    if counted() {
        return Ok(());
    }
    eprintln!("wrote {}/REPORT.md and {}/index.html", options.out.display(), options.out.display());
    if let Some(peak) = crate::limits::peak_resident_bytes() {
        eprintln!("{} experiments on {} threads; peak resident memory {} MiB", finished.len(), ctx.jobs(), peak >> 20);
    }
    Ok(())
}
