//! Runs a list of experiments on a pool of threads. Results come back in the list's
//! order whatever the threads did, so a report does not depend on the number of
//! threads. Experiments start longest first (by their [`Footprint`]), and one starts
//! only while the footprints of those running fit the memory budget, so the peak stays
//! bounded; an experiment whose own footprint is over the budget runs alone. Experiments
//! that name the same [`Experiment::exclusive_group`] (they share state of the process)
//! never run at the same time.

use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::report::Finished;
use crate::{Experiment, LabError, Outcome, RunContext, Scale};

/// What one run of an experiment needs, measured, for scheduling parallel runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Footprint {
    /// Peak resident memory of the run alone, bytes.
    pub memory_bytes: u64,
    /// Wall time of the run alone, seconds (orders the runs: longest first).
    pub seconds: f64,
}

impl Footprint {
    /// Assumed for an experiment that states none: 1 GiB, 10 s.
    pub const DEFAULT: Footprint = Footprint { memory_bytes: 1 << 30, seconds: 10.0 };

    /// A footprint of `memory_mib` MiB and `seconds` seconds.
    pub const fn new(memory_mib: u64, seconds: f64) -> Footprint {
        Footprint { memory_bytes: memory_mib << 20, seconds }
    }
}

/// How many experiments run at once.
#[derive(Debug, Clone, Copy)]
pub struct Pool {
    /// Threads, at least 1.
    pub jobs: usize,
    /// The sum of the running experiments' footprints may not pass this, bytes.
    pub memory_budget_bytes: u64,
}

/// What the runner reports as it goes. `finished` runs on the experiment's thread, right
/// after it ends (e.g. to write its files); an error there stops the run like a failed
/// experiment.
pub trait RunEvents: Sync {
    /// `experiment` starts.
    fn started(&self, experiment: &dyn Experiment);
    /// An experiment ended after `wall` of wall time.
    fn finished(&self, finished: &Finished, wall: Duration) -> Result<(), LabError>;
}

/// An experiment that runs only when no other of its `group` runs.
pub struct Exclusive {
    group: &'static str,
    inner: Box<dyn Experiment>,
}

impl std::fmt::Debug for Exclusive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exclusive").field("group", &self.group).field("id", &self.inner.id()).finish()
    }
}

impl Exclusive {
    /// Each of `experiments`, in the exclusive group `group`.
    pub fn all(group: &'static str, experiments: Vec<Box<dyn Experiment>>) -> Vec<Box<dyn Experiment>> {
        experiments.into_iter().map(|inner| Box::new(Exclusive { group, inner }) as Box<dyn Experiment>).collect()
    }
}

impl Experiment for Exclusive {
    fn id(&self) -> &'static str {
        self.inner.id()
    }
    fn title(&self) -> &'static str {
        self.inner.title()
    }
    fn source(&self) -> &'static str {
        self.inner.source()
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        self.inner.run(ctx)
    }
    fn footprint(&self, scale: Scale) -> Footprint {
        self.inner.footprint(scale)
    }
    fn exclusive_group(&self) -> Option<&'static str> {
        Some(self.group)
    }
}

struct Queue {
    /// Indices into the experiment list, in starting order.
    pending: Vec<usize>,
    running: usize,
    running_memory_bytes: u64,
    /// Exclusive groups with an experiment running.
    held: BTreeSet<&'static str>,
    failed: bool,
}

/// The order in which experiments start: longest first, ties in list order.
fn start_order(experiments: &[&dyn Experiment], scale: Scale) -> Vec<usize> {
    let mut order: Vec<usize> = (0..experiments.len()).collect();
    order.sort_by(|&a, &b| experiments[b].footprint(scale).seconds.total_cmp(&experiments[a].footprint(scale).seconds));
    order
}

/// Takes the next experiment that fits the budget, waiting while none does; `None`
/// when nothing is left to start (or a run failed).
fn next(
    queue: &Mutex<Queue>,
    changed: &Condvar,
    experiments: &[&dyn Experiment],
    memory: &[u64],
    budget: u64,
) -> Option<usize> {
    let mut q = queue.lock().expect("no panics while locked");
    loop {
        if q.failed || q.pending.is_empty() {
            return None;
        }
        let fits = |i: usize| {
            let free = experiments[i].exclusive_group().is_none_or(|g| !q.held.contains(g));
            free && (q.running == 0 || q.running_memory_bytes.saturating_add(memory[i]) <= budget)
        };
        if let Some(at) = q.pending.iter().position(|&i| fits(i)) {
            let i = q.pending.remove(at);
            q.running += 1;
            q.running_memory_bytes += memory[i];
            q.held.extend(experiments[i].exclusive_group());
            return Some(i);
        }
        q = changed.wait(q).expect("no panics while locked");
    }
}

fn run_one(experiment: &dyn Experiment, ctx: &RunContext, events: &dyn RunEvents) -> Result<Finished, LabError> {
    events.started(experiment);
    let started = Instant::now();
    let finished = Finished::new(experiment, experiment.run(ctx)?);
    events.finished(&finished, started.elapsed())?;
    Ok(finished)
}

/// Runs `experiments` on `pool`; returns their results in the list's order, or the error
/// of the first (in list order) that failed. After a failure no further experiment
/// starts; those running finish.
pub fn run_experiments(
    experiments: &[&dyn Experiment],
    ctx: &RunContext,
    pool: Pool,
    events: &dyn RunEvents,
) -> Result<Vec<Finished>, LabError> {
    let memory: Vec<u64> = experiments.iter().map(|e| e.footprint(ctx.scale).memory_bytes).collect();
    let queue = Mutex::new(Queue {
        pending: start_order(experiments, ctx.scale),
        running: 0,
        running_memory_bytes: 0,
        held: BTreeSet::new(),
        failed: false,
    });
    let changed = Condvar::new();
    let results: Mutex<Vec<Option<Result<Finished, LabError>>>> =
        Mutex::new(experiments.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..pool.jobs.max(1) {
            scope.spawn(|| {
                while let Some(i) = next(&queue, &changed, experiments, &memory, pool.memory_budget_bytes) {
                    let result = run_one(experiments[i], ctx, events);
                    let mut q = queue.lock().expect("no panics while locked");
                    q.running -= 1;
                    q.running_memory_bytes -= memory[i];
                    if let Some(group) = experiments[i].exclusive_group() {
                        q.held.remove(group);
                    }
                    q.failed |= result.is_err();
                    results.lock().expect("no panics while locked")[i] = Some(result);
                    changed.notify_all();
                }
            });
        }
    });
    let mut finished = Vec::with_capacity(experiments.len());
    // Without a failure every experiment ran; with one, those never started are `None`.
    for result in results.into_inner().expect("no panics while locked").into_iter().flatten() {
        finished.push(result?);
    }
    assert_eq!(finished.len(), experiments.len(), "every experiment ran");
    Ok(finished)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;
    use crate::{Outcome, Scale};

    const MIB: u64 = 1 << 20;

    /// Tracks the memory footprints running at once and the order of starts.
    #[derive(Default)]
    struct Watch {
        running_bytes: AtomicU64,
        peak_bytes: AtomicU64,
        starts: Mutex<Vec<&'static str>>,
    }

    impl Watch {
        const fn new() -> Watch {
            Watch { running_bytes: AtomicU64::new(0), peak_bytes: AtomicU64::new(0), starts: Mutex::new(Vec::new()) }
        }
    }

    struct Fake<'a> {
        id: &'static str,
        footprint: Footprint,
        fails: bool,
        watch: &'a Watch,
    }

    impl Experiment for Fake<'_> {
        fn id(&self) -> &'static str {
            self.id
        }
        fn title(&self) -> &'static str {
            "fake"
        }
        fn source(&self) -> &'static str {
            "test"
        }
        fn footprint(&self, _scale: Scale) -> Footprint {
            self.footprint
        }
        fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
            let now = self.watch.running_bytes.fetch_add(self.footprint.memory_bytes, Ordering::SeqCst)
                + self.footprint.memory_bytes;
            self.watch.peak_bytes.fetch_max(now, Ordering::SeqCst);
            // Long enough that parallel runs overlap; nothing depends on the timing.
            std::thread::sleep(Duration::from_millis(20));
            self.watch.running_bytes.fetch_sub(self.footprint.memory_bytes, Ordering::SeqCst);
            if self.fails {
                return Err(LabError::Failed { id: self.id.into(), message: "planned".into() });
            }
            Ok(Outcome { summary: format!("{} with seed {}", self.id, ctx.seed), ..Default::default() })
        }
    }

    struct Events<'a>(&'a Watch);

    impl RunEvents for Events<'_> {
        fn started(&self, experiment: &dyn Experiment) {
            self.0.starts.lock().unwrap().push(experiment.id());
        }
        fn finished(&self, _finished: &Finished, _wall: Duration) -> Result<(), LabError> {
            Ok(())
        }
    }

    const IDS: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
    /// (MiB, seconds) per experiment; `c` alone is over the 1 GiB budget.
    const FOOTPRINTS: [(u64, f64); 6] = [(100, 1.0), (600, 5.0), (1500, 9.0), (500, 2.0), (300, 5.0), (10, 0.5)];

    fn fakes<'a>(watch: &'a Watch, failing: Option<&str>) -> Vec<Fake<'a>> {
        IDS.iter()
            .zip(FOOTPRINTS)
            .map(|(&id, (mib, seconds))| Fake {
                id,
                footprint: Footprint::new(mib, seconds),
                fails: failing == Some(id),
                watch,
            })
            .collect()
    }

    fn run(jobs: usize, watch: &Watch, failing: Option<&str>) -> Result<Vec<Finished>, LabError> {
        let fakes = fakes(watch, failing);
        let list: Vec<&dyn Experiment> = fakes.iter().map(|f| f as &dyn Experiment).collect();
        let pool = Pool { jobs, memory_budget_bytes: 1024 * MIB };
        run_experiments(&list, &RunContext::new(Scale::Quick, 7), pool, &Events(watch))
    }

    #[test]
    fn results_come_in_list_order_whatever_the_threads() {
        for jobs in 1..=4 {
            let watch = Watch::default();
            let finished = run(jobs, &watch, None).unwrap();
            let ids: Vec<&str> = finished.iter().map(|f| f.id.as_str()).collect();
            assert_eq!(ids, IDS, "{jobs} jobs");
            assert_eq!(finished[3].outcome.summary, "d with seed 7");
            assert_eq!(watch.starts.lock().unwrap().len(), IDS.len());
        }
    }

    #[test]
    fn one_thread_starts_longest_first() {
        let watch = Watch::default();
        run(1, &watch, None).unwrap();
        assert_eq!(*watch.starts.lock().unwrap(), ["c", "b", "e", "d", "a", "f"]);
    }

    #[test]
    fn running_footprints_stay_within_the_budget() {
        let watch = Watch::default();
        run(4, &watch, None).unwrap();
        // `c` (1500 MiB) ran, and alone; every other mix stayed within 1024 MiB.
        assert_eq!(watch.peak_bytes.load(Ordering::SeqCst), 1500 * MIB);
        let watch = Watch::default();
        let fakes = fakes(&watch, None);
        let list: Vec<&dyn Experiment> = fakes.iter().filter(|f| f.id != "c").map(|f| f as &dyn Experiment).collect();
        let pool = Pool { jobs: 4, memory_budget_bytes: 1024 * MIB };
        run_experiments(&list, &RunContext::new(Scale::Quick, 7), pool, &Events(&watch)).unwrap();
        let peak = watch.peak_bytes.load(Ordering::SeqCst);
        // b, e, d and a together (1500 MiB) would pass the budget.
        assert!(peak <= 1024 * MIB, "peak {} MiB", peak / MIB);
    }

    #[test]
    fn an_exclusive_group_runs_one_at_a_time() {
        static WATCH: Watch = Watch::new();
        // Without the group `a`, `d`, `e` and `f` (910 MiB) could run together on 4 threads.
        let grouped = Exclusive::all(
            "shared",
            fakes(&WATCH, None)
                .into_iter()
                .filter(|f| ["a", "d", "e", "f"].contains(&f.id))
                .map(|f| Box::new(f) as Box<dyn Experiment>)
                .collect(),
        );
        let list: Vec<&dyn Experiment> = grouped.iter().map(|e| e.as_ref()).collect();
        let pool = Pool { jobs: 4, memory_budget_bytes: 1024 * MIB };
        let finished = run_experiments(&list, &RunContext::new(Scale::Quick, 7), pool, &Events(&WATCH)).unwrap();
        let watch = &WATCH;
        assert_eq!(finished.len(), 4);
        assert_eq!(watch.peak_bytes.load(Ordering::SeqCst), 500 * MIB, "at most one at a time: the largest, d");
    }

    #[test]
    fn a_failure_is_returned_and_stops_further_starts() {
        for jobs in [1, 2] {
            let watch = Watch::default();
            let Err(LabError::Failed { id, .. }) = run(jobs, &watch, Some("c")) else { panic!("c fails") };
            assert_eq!(id, "c");
            // `c` starts first and, over the budget, alone; nothing starts after it fails.
            assert_eq!(*watch.starts.lock().unwrap(), ["c"], "{jobs} jobs");
        }
    }
}
