//! The experiment harness: an [`Experiment`] trait, a [`RunContext`] carrying the scale,
//! the seed and progress reporting, result [`Outcome`]s made of tables and plots, and a
//! report writer producing `results.json`, `results.csv`, SVG plots, `REPORT.md` and
//! `index.html`, opened by a [`scorecard()`] of the papers' [`Claim`]s, beside the
//! paper-scale values of runs stored in the repository ([`stored`]).

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

mod chart;
mod format;
pub mod measured;
pub mod memo;
pub mod outcome;
pub mod report;
pub mod run;
pub mod runner;
pub mod scorecard;
pub mod stored;

pub use memo::Memo;
pub use outcome::{AxisScale, Cell, Outcome, Plot, Series, Table};
pub use runner::{run_experiments, Exclusive, Footprint, Pool, RunEvents};
pub use scorecard::{
    claim, scorecard, Claim, ClaimKind, FoundWouldHold, Measured, Relation, ScoreRow, Stated, Tolerance, Unmeasured,
    Verdict, WouldHold, WouldHoldWhen,
};
pub use stored::{PaperStore, StoredRun};

use std::io::IsTerminal;
use std::sync::Arc;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The PRNG every experiment uses.
pub type Rng = Xoshiro256PlusPlus;

/// Harness failures.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LabError {
    #[error("unknown experiment '{0}' (see `nvmdb list`)")]
    UnknownExperiment(String),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("experiment {id} failed: {message}")]
    Failed { id: String, message: String },
    #[error("experiment {experiment} measures claim '{claim}', which the claim table does not hold")]
    UnknownClaim { claim: String, experiment: String },
    #[error("experiment {experiment} measures claim '{claim}' twice")]
    DuplicateMeasurement { claim: String, experiment: String },
    #[error("experiment {experiment} says where claim '{claim}' would hold, which another experiment says too")]
    DuplicateWouldHold { claim: String, experiment: String },
    #[error("experiment {experiment} measures claim '{claim}', which belongs to experiment {owner}")]
    MisplacedClaim { claim: String, experiment: String, owner: String },
    #[error("the claim table holds claim '{claim}' twice")]
    DuplicateClaim { claim: String },
    #[error("{path}:{line}: {message}")]
    StoredRun { path: String, line: usize, message: String },
    /// A stop was asked for ([`nvmdb_cancel::cancel`]: Ctrl-C, a Python interrupt).
    #[error("interrupted")]
    Interrupted(#[from] nvmdb_cancel::Interrupted),
}

impl LabError {
    /// What went wrong, without the experiment's name: a failed experiment's message, or
    /// the whole error (for a [`Memo`] result that another experiment may take).
    pub fn into_message(self) -> String {
        match self {
            LabError::Failed { message, .. } => message,
            e => e.to_string(),
        }
    }
}

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    /// Small enough that all experiments together take a few minutes.
    Quick,
    /// The paper's sizes.
    Paper,
}

impl Scale {
    /// `quick` or `paper`.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Quick => "quick",
            Scale::Paper => "paper",
        }
    }

    /// Picks the value for this scale.
    pub fn pick<T>(self, quick: T, paper: T) -> T {
        match self {
            Scale::Quick => quick,
            Scale::Paper => paper,
        }
    }
}

/// What an experiment gets to run with. One context serves experiments running in
/// parallel: their progress bars share one display.
#[derive(Debug)]
pub struct RunContext {
    /// The scale.
    pub scale: Scale,
    /// The one seed of the run.
    pub seed: u64,
    slots: runner::Slots,
    show_progress: bool,
    bars: indicatif::MultiProgress,
    tally: Arc<Tally>,
}

/// How far a run is, for a program that shows its progress (the Python package): the
/// experiments and independent parts started so far (`total`, which grows as experiments
/// announce their parts) and those finished (`done`). The same counter as a single
/// command's steps ([`nvmdb_cancel::Progress`]).
pub use nvmdb_cancel::Progress as Tally;

impl RunContext {
    /// A context; progress bars are shown only when stderr is a terminal.
    pub fn new(scale: Scale, seed: u64) -> RunContext {
        RunContext {
            scale,
            seed,
            slots: runner::Slots::new(Pool { jobs: 1, memory_budget_bytes: u64::MAX }),
            show_progress: std::io::stderr().is_terminal(),
            bars: indicatif::MultiProgress::new(),
            tally: Arc::default(),
        }
    }

    /// The same context counting its experiments and parts in `tally`.
    pub fn with_tally(mut self, tally: Arc<Tally>) -> RunContext {
        self.tally = tally;
        self
    }

    /// The experiments and parts of this context's runs, started and finished.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// The same context on `jobs` threads (at least 1) with no memory budget: see
    /// [`RunContext::with_pool`].
    pub fn with_jobs(self, jobs: usize) -> RunContext {
        self.with_pool(Pool { jobs, memory_budget_bytes: u64::MAX })
    }

    /// The same context on `pool`: [`run_experiments`] runs experiments on its threads,
    /// and an experiment runs its independent parts ([`RunContext::run_parts`]) on
    /// those that are free, within the pool's memory budget. The output may not depend
    /// on it.
    pub fn with_pool(mut self, pool: Pool) -> RunContext {
        self.slots = runner::Slots::new(pool);
        self
    }

    /// Threads of the pool (1 unless [`RunContext::with_pool`] said otherwise).
    pub fn jobs(&self) -> usize {
        self.slots.jobs()
    }

    /// Runs independent `parts` of an experiment: on the calling thread, and beside it
    /// on each thread of the pool that is free while the part's `memory_bytes` (its
    /// peak resident memory, beyond what the experiment's [`Footprint`] counts) fit the
    /// memory budget. Results come in the order of `parts` whatever the threads did;
    /// on a failure no further part starts and the first failed part's error (in that
    /// order) is returned.
    pub fn run_parts<P: Sync, T: Send>(
        &self,
        parts: &[P],
        memory_bytes: impl Fn(&P) -> u64 + Sync,
        run: impl Fn(&P) -> Result<T, LabError> + Sync,
    ) -> Result<Vec<T>, LabError> {
        self.tally.add_total(parts.len() as u64);
        let run = |part: &P| {
            let result = run(part);
            self.tally.advance(1);
            result
        };
        runner::run_parts(&self.slots, parts, &memory_bytes, &run)
    }

    /// Prints a line on stderr, above the progress bars when they are shown.
    pub fn log(&self, line: &str) {
        if !self.show_progress || self.bars.println(line).is_err() {
            eprintln!("{line}");
        }
    }

    /// An independent, reproducible PRNG for one part of the experiment.
    pub fn rng(&self, stream: u64) -> Rng {
        let mut rng = Rng::seed_from_u64(self.seed);
        for _ in 0..stream {
            rng.jump();
        }
        rng
    }

    /// A progress bar over `total` steps (hidden when stderr is not a terminal).
    pub fn progress(&self, label: &str, total: u64) -> indicatif::ProgressBar {
        if !self.show_progress {
            return indicatif::ProgressBar::hidden();
        }
        let bar = self.bars.add(indicatif::ProgressBar::new(total));
        let style = indicatif::ProgressStyle::with_template("{prefix:>24} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("static template")
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(label.to_string());
        bar
    }
}

/// A registered experiment.
pub trait Experiment: Send + Sync {
    /// Short id used on the command line, e.g. `cidr-fig6`.
    fn id(&self) -> &'static str;
    /// One-line title.
    fn title(&self) -> &'static str;
    /// What it reproduces: seed file, paper, figure or table.
    fn source(&self) -> &'static str;
    /// Runs it.
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError>;
    /// What a run at `scale` needs, for scheduling runs in parallel.
    fn footprint(&self, _scale: Scale) -> Footprint {
        Footprint::DEFAULT
    }
    /// Experiments that name the same group share state of the process and are run one
    /// at a time (see [`runner::Exclusive`]).
    fn exclusive_group(&self) -> Option<&'static str> {
        None
    }
}

/// Finds an experiment by id.
pub fn find<'a>(registry: &'a [Box<dyn Experiment>], id: &str) -> Result<&'a dyn Experiment, LabError> {
    registry.iter().find(|e| e.id() == id).map(|e| e.as_ref()).ok_or_else(|| LabError::UnknownExperiment(id.into()))
}
