//! Runs a list of experiments on a pool of threads. Results come back in the list's
//! order whatever the threads did, so a report does not depend on the number of
//! threads. Experiments start longest first (by their [`Footprint`]), and one starts
//! only while the footprints of those running fit the memory budget, so the peak stays
//! bounded; an experiment whose own footprint is over the budget runs alone. Experiments
//! that name the same [`Experiment::exclusive_group`] (they share state of the process)
//! never run at the same time. An experiment may split itself into independent parts
//! ([`RunContext::run_parts`]): a thread of the pool that has no experiment to start,
//! and memory left in the budget, runs its parts beside it.

use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::run::Finished;
use crate::{Experiment, LabError, Outcome, RunContext, Scale};

/// What one run of an experiment needs, measured, for scheduling parallel runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Footprint {
    /// Peak resident memory of the run alone on one thread, bytes.
    pub memory_bytes: u64,
    /// Wall time of the run alone on one thread, seconds (orders the runs: longest first).
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

/// How many threads run experiments and their parts at once, and within what memory.
#[derive(Debug, Clone, Copy)]
pub struct Pool {
    /// Threads, at least 1.
    pub jobs: usize,
    /// The footprints of the running experiments and the memory of the parts running
    /// beside them may not add up to more than this, bytes.
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

/// The threads and memory of a [`Pool`] that running experiments and parts hold. Every
/// change is made under `taken`'s lock and announced on `changed`.
#[derive(Debug)]
pub(crate) struct Slots {
    pool: Pool,
    taken: Mutex<Taken>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct Taken {
    /// Threads running an experiment or a part.
    threads: usize,
    memory_bytes: u64,
    /// Exclusive groups with an experiment running.
    held: BTreeSet<&'static str>,
}

impl Slots {
    pub(crate) fn new(pool: Pool) -> Slots {
        let pool = Pool { jobs: pool.jobs.max(1), ..pool };
        Slots { pool, taken: Mutex::default(), changed: Condvar::new() }
    }

    pub(crate) fn jobs(&self) -> usize {
        self.pool.jobs
    }

    fn lock(&self) -> MutexGuard<'_, Taken> {
        self.taken.lock().expect("no panics while locked")
    }

    /// Whether a thread and `memory_bytes` more are free.
    fn fits(&self, taken: &Taken, memory_bytes: u64) -> bool {
        taken.threads < self.pool.jobs
            && taken.memory_bytes.saturating_add(memory_bytes) <= self.pool.memory_budget_bytes
    }

    fn take(taken: &mut Taken, memory_bytes: u64) {
        taken.threads += 1;
        taken.memory_bytes += memory_bytes;
    }

    /// Gives back what [`Slots::take`] took, and runs `also` under the same lock.
    fn give_back(&self, memory_bytes: u64, also: impl FnOnce(&mut Taken)) {
        let mut taken = self.lock();
        taken.threads -= 1;
        taken.memory_bytes -= memory_bytes;
        also(&mut taken);
        self.changed.notify_all();
    }
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

/// The experiments not yet started. Locked only under [`Slots`]' lock.
struct Queue {
    /// Indices into the experiment list, in starting order.
    pending: Vec<usize>,
    failed: bool,
}

/// The order in which experiments start: longest first, ties in list order.
fn start_order(experiments: &[&dyn Experiment], scale: Scale) -> Vec<usize> {
    let mut order: Vec<usize> = (0..experiments.len()).collect();
    order.sort_by(|&a, &b| experiments[b].footprint(scale).seconds.total_cmp(&experiments[a].footprint(scale).seconds));
    order
}

/// Takes the next experiment that fits the budget, waiting while none does; `None`
/// when nothing is left to start (or a run failed). An experiment over the budget
/// starts when nothing else runs.
fn next(slots: &Slots, queue: &Mutex<Queue>, experiments: &[&dyn Experiment], memory: &[u64]) -> Option<usize> {
    let mut taken = slots.lock();
    loop {
        let mut q = queue.lock().expect("no panics while locked");
        if q.failed || q.pending.is_empty() {
            return None;
        }
        let fits = |i: usize| {
            let free = experiments[i].exclusive_group().is_none_or(|g| !taken.held.contains(g));
            free && (taken.threads == 0 || slots.fits(&taken, memory[i]))
        };
        if let Some(at) = q.pending.iter().position(|&i| fits(i)) {
            let i = q.pending.remove(at);
            Slots::take(&mut taken, memory[i]);
            taken.held.extend(experiments[i].exclusive_group());
            return Some(i);
        }
        drop(q);
        taken = slots.changed.wait(taken).expect("no panics while locked");
    }
}

/// Runs one experiment; a stop asked for before it starts, or while it runs, is
/// [`LabError::Interrupted`] (then nothing of it is written).
fn run_one(experiment: &dyn Experiment, ctx: &RunContext, events: &dyn RunEvents) -> Result<Finished, LabError> {
    nvmdb_cancel::check()?;
    events.started(experiment);
    let started = Instant::now();
    let finished = Finished::new(experiment, experiment.run(ctx)?);
    nvmdb_cancel::check()?;
    events.finished(&finished, started.elapsed())?;
    Ok(finished)
}

/// Runs `experiments` on the context's [`Pool`] ([`RunContext::with_pool`]); returns
/// their results in the list's order, or the error of the first (in list order) that
/// failed. After a failure no further experiment starts; those running finish.
pub fn run_experiments(
    experiments: &[&dyn Experiment],
    ctx: &RunContext,
    events: &dyn RunEvents,
) -> Result<Vec<Finished>, LabError> {
    let slots = &ctx.slots;
    ctx.tally.add_total(experiments.len() as u64);
    let memory: Vec<u64> = experiments.iter().map(|e| e.footprint(ctx.scale).memory_bytes).collect();
    let queue = Mutex::new(Queue { pending: start_order(experiments, ctx.scale), failed: false });
    let results: Mutex<Vec<Option<Result<Finished, LabError>>>> =
        Mutex::new(experiments.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..slots.jobs().min(experiments.len()) {
            scope.spawn(|| {
                while let Some(i) = next(slots, &queue, experiments, &memory) {
                    let result = run_one(experiments[i], ctx, events);
                    ctx.tally.advance(1);
                    let failed = result.is_err();
                    results.lock().expect("no panics while locked")[i] = Some(result);
                    slots.give_back(memory[i], |taken| {
                        if let Some(group) = experiments[i].exclusive_group() {
                            taken.held.remove(group);
                        }
                        queue.lock().expect("no panics while locked").failed |= failed;
                    });
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

/// The parts of one [`run_parts`] call not yet started. Locked only under [`Slots`]' lock.
struct Parts {
    next: usize,
    failed: bool,
}

/// Runs `parts` on the calling thread, and each part also on any thread of the pool
/// that is free while the part's `memory_bytes` fit the budget. Returns the results in
/// the order of `parts`, or the error of the first (in that order) that failed; after a
/// failure no further part starts. A stop asked for before a part starts is that part's
/// failure ([`LabError::Interrupted`]).
pub(crate) fn run_parts<P: Sync, T: Send>(
    slots: &Slots,
    parts: &[P],
    memory_bytes: &(dyn Fn(&P) -> u64 + Sync),
    run: &(dyn Fn(&P) -> Result<T, LabError> + Sync),
) -> Result<Vec<T>, LabError> {
    let queue = Mutex::new(Parts { next: 0, failed: false });
    let results: Mutex<Vec<Option<Result<T, LabError>>>> = Mutex::new(parts.iter().map(|_| None).collect());
    let run = |part: &P| nvmdb_cancel::check().map_err(LabError::from).and_then(|()| run(part));
    let finish = |i: usize, result: Result<T, LabError>| {
        let failed = result.is_err();
        results.lock().expect("no panics while locked")[i] = Some(result);
        failed
    };
    // The caller's thread and memory are already the experiment's: it takes the next
    // part whenever it is free.
    let own = || loop {
        let i = {
            let _taken = slots.lock();
            let mut q = queue.lock().expect("no panics while locked");
            if q.failed || q.next == parts.len() {
                return;
            }
            q.next += 1;
            if q.next == parts.len() {
                // Helpers waiting for a slot have nothing left to wait for.
                slots.changed.notify_all();
            }
            q.next - 1
        };
        if finish(i, run(&parts[i])) {
            let _taken = slots.lock();
            queue.lock().expect("no panics while locked").failed = true;
            slots.changed.notify_all();
        }
    };
    // A helper takes a thread and the part's memory from the pool for each part it runs.
    let helper = || loop {
        let (i, memory) = {
            let mut taken = slots.lock();
            loop {
                let mut q = queue.lock().expect("no panics while locked");
                if q.failed || q.next == parts.len() {
                    return;
                }
                let memory = memory_bytes(&parts[q.next]);
                if slots.fits(&taken, memory) {
                    Slots::take(&mut taken, memory);
                    q.next += 1;
                    break (q.next - 1, memory);
                }
                drop(q);
                taken = slots.changed.wait(taken).expect("no panics while locked");
            }
        };
        let failed = finish(i, run(&parts[i]));
        slots.give_back(memory, |_| queue.lock().expect("no panics while locked").failed |= failed);
    };
    std::thread::scope(|scope| {
        for _ in 1..slots.jobs().min(parts.len()) {
            scope.spawn(helper);
        }
        own();
    });
    let mut out = Vec::with_capacity(parts.len());
    // Without a failure every part ran; with one, those never started are `None`.
    for result in results.into_inner().expect("no panics while locked").into_iter().flatten() {
        out.push(result?);
    }
    assert_eq!(out.len(), parts.len(), "every part ran");
    Ok(out)
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
        run_experiments(&list, &RunContext::new(Scale::Quick, 7).with_pool(pool), &Events(watch))
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
        run_experiments(&list, &RunContext::new(Scale::Quick, 7).with_pool(pool), &Events(&watch)).unwrap();
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
        let ctx = RunContext::new(Scale::Quick, 7).with_pool(pool);
        let finished = run_experiments(&list, &ctx, &Events(&WATCH)).unwrap();
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

    /// The most threads and memory the pool had taken, sampled as parts run.
    #[derive(Default)]
    struct Peaks {
        threads: AtomicU64,
        memory_bytes: AtomicU64,
        parts_at_once: AtomicU64,
        parts_now: AtomicU64,
    }

    impl Peaks {
        fn sample(&self, ctx: &RunContext) {
            let taken = ctx.slots.lock();
            self.threads.fetch_max(taken.threads as u64, Ordering::SeqCst);
            self.memory_bytes.fetch_max(taken.memory_bytes, Ordering::SeqCst);
        }
    }

    /// An experiment of `parts` parts of `part_mib` each.
    struct Split<'a> {
        id: &'static str,
        footprint: Footprint,
        parts: usize,
        part_mib: u64,
        peaks: &'a Peaks,
    }

    impl Experiment for Split<'_> {
        fn id(&self) -> &'static str {
            self.id
        }
        fn title(&self) -> &'static str {
            "split"
        }
        fn source(&self) -> &'static str {
            "test"
        }
        fn footprint(&self, _scale: Scale) -> Footprint {
            self.footprint
        }
        fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
            self.peaks.sample(ctx);
            let parts: Vec<u64> = (0..self.parts as u64).collect();
            let squares = ctx.run_parts(
                &parts,
                |_| self.part_mib * MIB,
                |&i| {
                    let now = self.peaks.parts_now.fetch_add(1, Ordering::SeqCst) + 1;
                    self.peaks.parts_at_once.fetch_max(now, Ordering::SeqCst);
                    self.peaks.sample(ctx);
                    std::thread::sleep(Duration::from_millis(5));
                    self.peaks.parts_now.fetch_sub(1, Ordering::SeqCst);
                    Ok(i * i)
                },
            )?;
            Ok(Outcome { summary: format!("{squares:?}"), ..Default::default() })
        }
    }

    #[test]
    fn parts_come_back_in_order_and_run_at_once_on_free_threads() {
        for jobs in 1..=4 {
            let ctx = RunContext::new(Scale::Quick, 7).with_jobs(jobs);
            // With two threads or more, parts 0 and 1 can only pass the barrier together.
            let both = std::sync::Barrier::new(2);
            let parts: Vec<usize> = (0..12).collect();
            let out = ctx
                .run_parts(
                    &parts,
                    |_| MIB,
                    |&i| {
                        if jobs > 1 && i < 2 {
                            both.wait();
                        }
                        Ok(i * 10)
                    },
                )
                .unwrap();
            assert_eq!(out, (0..12).map(|i| i * 10).collect::<Vec<_>>(), "{jobs} jobs");
        }
    }

    #[test]
    fn parts_take_free_threads_within_the_memory_budget() {
        let peaks = Peaks::default();
        let (a, b) = (
            Split { id: "a", footprint: Footprint::new(300, 9.0), parts: 8, part_mib: 400, peaks: &peaks },
            Split { id: "b", footprint: Footprint::new(200, 1.0), parts: 2, part_mib: 100, peaks: &peaks },
        );
        // a and one part of it fit beside b (900 MiB); a and two parts (1100 MiB) never.
        let list: Vec<&dyn Experiment> = vec![&a, &b];
        let ctx = RunContext::new(Scale::Quick, 7).with_pool(Pool { jobs: 3, memory_budget_bytes: 1024 * MIB });
        let finished = run_experiments(&list, &ctx, &Events(&Watch::default())).unwrap();
        assert_eq!(finished[0].outcome.summary, "[0, 1, 4, 9, 16, 25, 36, 49]");
        assert_eq!(finished[1].outcome.summary, "[0, 1]");
        assert!(peaks.threads.load(Ordering::SeqCst) <= 3);
        let memory = peaks.memory_bytes.load(Ordering::SeqCst);
        assert!(memory <= 1024 * MIB, "{} MiB", memory / MIB);
        assert_eq!(ctx.slots.lock().threads, 0, "every thread given back");
        assert_eq!(ctx.slots.lock().memory_bytes, 0, "all memory given back");
    }

    #[test]
    fn a_part_over_the_budget_waits_for_the_calling_thread() {
        let peaks = Peaks::default();
        // 600 MiB of experiment leave no room for a 500 MiB part beside it.
        let a = Split { id: "a", footprint: Footprint::new(600, 9.0), parts: 6, part_mib: 500, peaks: &peaks };
        let ctx = RunContext::new(Scale::Quick, 7).with_pool(Pool { jobs: 4, memory_budget_bytes: 1024 * MIB });
        run_experiments(&[&a], &ctx, &Events(&Watch::default())).unwrap();
        assert_eq!(peaks.parts_at_once.load(Ordering::SeqCst), 1);
        assert_eq!(peaks.memory_bytes.load(Ordering::SeqCst), 600 * MIB);
    }

    #[test]
    fn a_failed_part_is_returned_and_stops_further_parts() {
        let ctx = RunContext::new(Scale::Quick, 7);
        let started = AtomicU64::new(0);
        let parts: Vec<u64> = (0..8).collect();
        let result = ctx.run_parts(
            &parts,
            |_| 0,
            |&i| {
                started.fetch_add(1, Ordering::SeqCst);
                if i == 3 {
                    return Err(LabError::Failed { id: "p".into(), message: format!("part {i}") });
                }
                Ok(i)
            },
        );
        let Err(LabError::Failed { message, .. }) = result else { panic!("part 3 fails") };
        assert_eq!(message, "part 3");
        assert_eq!(started.load(Ordering::SeqCst), 4, "one thread: nothing after part 3");
    }
}
