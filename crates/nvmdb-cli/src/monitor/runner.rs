//! Runs the demo's engines side by side, one thread per engine, each reporting to the
//! board, while the calling thread keeps the terminal view up to date.

use std::sync::Arc;
use std::time::Duration;

use crate::error::CliError;
use crate::monitor::board::Board;
use crate::monitor::terminal::Terminal;

/// Reports a run's progress this many times (a bounded number of samples per run).
pub const REPORTS_PER_RUN: u64 = 200;

/// Wall time between two terminal refreshes.
const REFRESH: Duration = Duration::from_millis(100);

/// What an engine's thread is given: reports for its runs, which sit at `first_run..` on
/// the board in the order it runs them.
#[derive(Debug)]
pub struct Reporter {
    board: Arc<Board>,
    first_run: usize,
}

impl Reporter {
    /// The engine's `nth` run has loaded `load_done` records.
    pub fn load(&self, nth: usize, load_done: u64) {
        self.board.report_load(self.first_run.saturating_add(nth), load_done);
    }

    /// The engine's `nth` run has done `ops_done` operations in `sim_ns` simulated ns.
    pub fn report(&self, nth: usize, ops_done: u64, sim_ns: u64) {
        self.board.report(self.first_run.saturating_add(nth), ops_done, sim_ns);
    }

    /// The engine's `nth` run is over.
    pub fn finish(&self, nth: usize) {
        self.board.finish(self.first_run.saturating_add(nth));
    }
}

/// One engine's work: all its runs, in board order, on a thread of its own.
pub type Job<T> = Box<dyn FnOnce(&Reporter) -> Result<T, CliError> + Send>;

/// Runs `jobs`, each given with the board index of its first run, to the end and returns
/// their results in order; closes the board when every job is over. The first failure is
/// returned, after every thread ended.
pub fn run_jobs<T: Send + 'static>(
    board: &Arc<Board>,
    jobs: Vec<(usize, Job<T>)>,
    terminal: &mut Terminal,
) -> Result<Vec<T>, CliError> {
    let handles: Vec<_> = jobs
        .into_iter()
        .map(|(first_run, job)| {
            let reporter = Reporter { board: Arc::clone(board), first_run };
            std::thread::spawn(move || job(&reporter))
        })
        .collect();
    while !handles.iter().all(|h| h.is_finished()) {
        terminal.refresh(board);
        std::thread::sleep(REFRESH);
    }
    terminal.finish(board);
    board.close();
    let results: Vec<Result<T, CliError>> = handles
        .into_iter()
        .map(|h| h.join().unwrap_or_else(|_| Err(CliError::failed("an engine's thread panicked"))))
        .collect();
    results.into_iter().collect()
}
