//! `nvmdb list`, `nvmdb run` and `nvmdb reproduce`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};
use nvmdb_lab::report::{write_experiment, write_report, Finished, RunMeta};
use nvmdb_lab::{Experiment, RunContext, Scale};

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
}

/// `nvmdb list`.
pub fn list() -> Result<(), CliError> {
    let mut out = Output::new();
    for e in registry::all() {
        out.line(format_args!("{:<22} {}  [{}]", e.id(), e.title(), e.source()))?;
    }
    out.finish()
}

fn run_one(experiment: &dyn Experiment, ctx: &RunContext) -> Result<Finished, CliError> {
    eprintln!("running {} ({})", experiment.id(), experiment.title());
    let started = Instant::now();
    let outcome = experiment.run(ctx)?;
    eprintln!("  {} done in {:.1} s", experiment.id(), started.elapsed().as_secs_f64());
    Ok(Finished::new(experiment, outcome))
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
    let ctx = RunContext::new(args.options.scale.into(), args.options.seed);
    let meta = RunMeta::new(ctx.seed, ctx.scale);
    check_out_dir(&args.options.out)?;
    let claims = registry::papers::all();
    let finished = run_one(experiment, &ctx)?;
    let dir = write_experiment(&args.options.out, &finished, &meta, &claims)?;
    let rows = nvmdb_lab::scorecard(&claims, std::slice::from_ref(&finished))?;
    eprintln!("wrote {}", dir.display());
    let mut out = Output::new();
    out.line(nvmdb_lab::report::markdown(std::slice::from_ref(&finished), &meta, &rows))?;
    out.finish()
}

/// `nvmdb reproduce`: every experiment, then the combined report.
pub fn reproduce(options: &RunOptions) -> Result<(), CliError> {
    let ctx = RunContext::new(options.scale.into(), options.seed);
    let meta = RunMeta::new(ctx.seed, ctx.scale);
    check_out_dir(&options.out)?;
    let claims = registry::papers::all();
    let mut finished = Vec::new();
    for experiment in registry::all() {
        let f = run_one(experiment.as_ref(), &ctx)?;
        write_experiment(&options.out, &f, &meta, &claims)?;
        finished.push(f);
    }
    write_report(&options.out, &finished, &meta, &claims)?;
    eprintln!("wrote {}/REPORT.md and {}/index.html", options.out.display(), options.out.display());
    Ok(())
}
