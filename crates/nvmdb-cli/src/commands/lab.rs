//! `nvmdb list`, `nvmdb run` and `nvmdb reproduce`.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use nvmdb_lab::report::{write_experiment, write_report, Finished, RunMeta};
use nvmdb_lab::{Experiment, RunContext, Scale};

use crate::error::CliError;
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
pub fn list() {
    for e in registry::all() {
        println!("{:<22} {}  [{}]", e.id(), e.title(), e.source());
    }
}

fn run_one(experiment: &dyn Experiment, ctx: &RunContext) -> Result<Finished, CliError> {
    eprintln!("running {} ({})", experiment.id(), experiment.title());
    let started = Instant::now();
    let outcome = experiment.run(ctx)?;
    eprintln!("  {} done in {:.1} s", experiment.id(), started.elapsed().as_secs_f64());
    Ok(Finished::new(experiment, outcome))
}

/// `nvmdb run EXPERIMENT`.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let all = registry::all();
    let experiment = nvmdb_lab::find(&all, &args.experiment)?;
    let ctx = RunContext::new(args.options.scale.into(), args.options.seed);
    let meta = RunMeta::new(ctx.seed, ctx.scale);
    let finished = run_one(experiment, &ctx)?;
    let dir = write_experiment(&args.options.out, &finished, &meta)?;
    println!("{}", nvmdb_lab::report::markdown(std::slice::from_ref(&finished), &meta));
    eprintln!("wrote {}", dir.display());
    Ok(())
}

/// `nvmdb reproduce`: every experiment, then the combined report.
pub fn reproduce(options: &RunOptions) -> Result<(), CliError> {
    let ctx = RunContext::new(options.scale.into(), options.seed);
    let meta = RunMeta::new(ctx.seed, ctx.scale);
    let mut finished = Vec::new();
    for experiment in registry::all() {
        let f = run_one(experiment.as_ref(), &ctx)?;
        write_experiment(&options.out, &f, &meta)?;
        finished.push(f);
    }
    write_report(&options.out, &finished, &meta)?;
    eprintln!("wrote {}/REPORT.md and {}/index.html", options.out.display(), options.out.display());
    Ok(())
}
