//! The progress board: every benchmark run of the demo reports here; the terminal and the
//! web server read from it.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;

/// A run the board will show: an engine on a benchmark.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Engine name.
    pub engine: String,
    /// Benchmark name.
    pub benchmark: String,
    /// Records loaded before the measured operations (0 for none).
    pub load_total: u64,
    /// Measured operations.
    pub ops_total: u64,
}

/// What one run reports: operations done and the simulated time they took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// Simulated nanoseconds since the run started.
    pub sim_ns: u64,
    /// Operations done by then.
    pub ops_done: u64,
}

/// One run's state: an engine on a benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct RunState {
    /// Engine name, e.g. `ipl-p`.
    pub engine: String,
    /// Benchmark name, e.g. `insert`.
    pub benchmark: String,
    /// Records loaded before the measured operations (0 when nothing is loaded first).
    pub load_total: u64,
    /// Records loaded so far.
    pub load_done: u64,
    /// Measured operations the run will do.
    pub ops_total: u64,
    /// Measured operations done so far.
    pub ops_done: u64,
    /// Simulated nanoseconds of the measured operations so far.
    pub sim_ns: u64,
    /// The run is over.
    pub finished: bool,
    /// Every report, oldest first (a run reports a bounded number of times).
    pub samples: Vec<Sample>,
}

/// A reader's view of the board: each run with the samples the reader has not seen yet.
#[derive(Debug, Serialize)]
pub struct Delta {
    /// Changes with every report.
    pub version: u64,
    /// Every run is over (or the demo stopped).
    pub closed: bool,
    /// One line about the whole demo (records, seed, preset).
    pub caption: String,
    /// The runs, in the board's order; `samples` holds only the unseen ones.
    pub runs: Vec<RunState>,
}

#[derive(Debug)]
struct Inner {
    runs: Vec<RunState>,
    version: u64,
    closed: bool,
}

/// The shared board.
#[derive(Debug)]
pub struct Board {
    caption: String,
    inner: Mutex<Inner>,
    changed: Condvar,
}

impl Board {
    /// A board for `runs`, nothing done yet.
    pub fn new(caption: String, runs: &[RunPlan]) -> Board {
        let runs = runs
            .iter()
            .map(|plan| RunState {
                engine: plan.engine.clone(),
                benchmark: plan.benchmark.clone(),
                load_total: plan.load_total,
                load_done: 0,
                ops_total: plan.ops_total,
                ops_done: 0,
                sim_ns: 0,
                finished: false,
                samples: Vec::new(),
            })
            .collect();
        Board { caption, inner: Mutex::new(Inner { runs, version: 0, closed: false }), changed: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A reporter that panicked leaves counters that are still whole numbers.
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn bump(&self, mut inner: MutexGuard<'_, Inner>) {
        inner.version = inner.version.wrapping_add(1);
        drop(inner);
        self.changed.notify_all();
    }

    /// Run `run` has loaded `load_done` records.
    pub fn report_load(&self, run: usize, load_done: u64) {
        let mut inner = self.lock();
        let state = &mut inner.runs[run];
        assert!(load_done >= state.load_done && load_done <= state.load_total, "load of run {run} out of order");
        state.load_done = load_done;
        self.bump(inner);
    }

    /// Run `run` has done `ops_done` measured operations in `sim_ns` simulated nanoseconds.
    pub fn report(&self, run: usize, ops_done: u64, sim_ns: u64) {
        let mut inner = self.lock();
        let state = &mut inner.runs[run];
        assert!(ops_done >= state.ops_done && sim_ns >= state.sim_ns, "progress of run {run} went backwards");
        state.ops_done = ops_done;
        state.sim_ns = sim_ns;
        state.samples.push(Sample { sim_ns, ops_done });
        self.bump(inner);
    }

    /// Run `run` is over.
    pub fn finish(&self, run: usize) {
        let mut inner = self.lock();
        inner.runs[run].finished = true;
        self.bump(inner);
    }

    /// No run will report again.
    pub fn close(&self) {
        let mut inner = self.lock();
        inner.closed = true;
        self.bump(inner);
    }

    /// Every run, with all its samples.
    pub fn snapshot(&self) -> Delta {
        self.delta(&mut Vec::new())
    }

    /// Every run, with the samples past `seen[run]`; advances `seen` (grown as needed).
    pub fn delta(&self, seen: &mut Vec<usize>) -> Delta {
        let inner = self.lock();
        seen.resize(inner.runs.len(), 0);
        let runs = inner
            .runs
            .iter()
            .zip(seen.iter_mut())
            .map(|(run, seen)| {
                let new = run.samples.get(*seen..).unwrap_or_default().to_vec();
                *seen = run.samples.len();
                RunState { samples: new, ..run.clone_without_samples() }
            })
            .collect();
        Delta { version: inner.version, closed: inner.closed, caption: self.caption.clone(), runs }
    }

    /// Waits until the version differs from `seen` or `timeout` passes; returns the version.
    pub fn wait_change(&self, seen: u64, timeout: Duration) -> u64 {
        let inner = self.lock();
        let (inner, _) = self
            .changed
            .wait_timeout_while(inner, timeout, |inner| inner.version == seen)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        inner.version
    }
}

impl RunState {
    fn clone_without_samples(&self) -> RunState {
        RunState {
            engine: self.engine.clone(),
            benchmark: self.benchmark.clone(),
            load_total: self.load_total,
            load_done: self.load_done,
            ops_total: self.ops_total,
            ops_done: self.ops_done,
            sim_ns: self.sim_ns,
            finished: self.finished,
            samples: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(engine: &str, load_total: u64) -> RunPlan {
        RunPlan { engine: engine.into(), benchmark: "update".into(), load_total, ops_total: 10 }
    }

    fn board() -> Board {
        Board::new("test".into(), &[plan("a", 0), plan("b", 5)])
    }

    #[test]
    fn delta_returns_each_sample_once() {
        let board = board();
        let mut seen = Vec::new();
        board.report(0, 3, 100);
        board.report(0, 6, 250);
        let first = board.delta(&mut seen);
        assert_eq!(first.runs[0].samples, [Sample { sim_ns: 100, ops_done: 3 }, Sample { sim_ns: 250, ops_done: 6 }]);
        assert!(first.runs[1].samples.is_empty());
        board.report_load(1, 5);
        board.report(1, 10, 40);
        board.finish(1);
        let second = board.delta(&mut seen);
        assert!(second.runs[0].samples.is_empty());
        assert_eq!(second.runs[0].ops_done, 6);
        assert_eq!(second.runs[1].samples, [Sample { sim_ns: 40, ops_done: 10 }]);
        assert_eq!((second.runs[1].load_done, second.runs[1].load_total), (5, 5));
        assert!(second.runs[1].finished && !second.closed);
        assert!(second.version > first.version);
        assert_eq!(board.snapshot().runs[0].samples.len(), 2);
    }

    #[test]
    fn wait_change_wakes_on_report_and_times_out_without() {
        let board = std::sync::Arc::new(board());
        let version = board.snapshot().version;
        assert_eq!(board.wait_change(version, Duration::from_millis(10)), version);
        let reporter = std::sync::Arc::clone(&board);
        let thread = std::thread::spawn(move || reporter.close());
        let changed = board.wait_change(version, Duration::from_secs(60));
        thread.join().unwrap();
        assert_ne!(changed, version);
        assert!(board.snapshot().closed);
    }

    #[test]
    #[should_panic(expected = "went backwards")]
    fn progress_never_goes_backwards() {
        let board = board();
        board.report(0, 5, 100);
        board.report(0, 4, 200);
    }
}
