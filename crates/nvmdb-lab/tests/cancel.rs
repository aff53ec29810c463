// A test binary of its own: it raises the process-wide cancellation flag, which would stop other tests' runs.
//! A stop asked for ([`nvmdb_cancel`]) ends runs at the runner's checks, and a memoised
//! computation that failed because of it is run again afterwards. One test: the flag is
//! process-wide, and this file is a process of its own.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use nvmdb_lab::report::Finished;
use nvmdb_lab::{Experiment, LabError, Memo, Outcome, RunContext, RunEvents, Scale};

struct Counted<'a> {
    runs: &'a AtomicU32,
}

impl Experiment for Counted<'_> {
    fn id(&self) -> &'static str {
        "counted"
    }
    fn title(&self) -> &'static str {
        "counts its runs"
    }
    fn source(&self) -> &'static str {
        "test"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        ctx.run_parts(&[1u32, 2, 3], |_| 0, |_| Ok(()))?;
        Ok(Outcome::default())
    }
}

struct Quiet;

impl RunEvents for Quiet {
    fn started(&self, _experiment: &dyn Experiment) {}
    fn finished(&self, _finished: &Finished, _wall: Duration) -> Result<(), LabError> {
        Ok(())
    }
}

#[test]
fn a_stop_ends_runs_and_is_not_remembered() {
    let runs = AtomicU32::new(0);
    let experiment = Counted { runs: &runs };
    let ctx = RunContext::new(Scale::Quick, 1).with_jobs(2);
    nvmdb_cancel::clear();
    assert!(nvmdb_lab::run_experiments(&[&experiment], &ctx, &Quiet).is_ok());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(ctx.tally().done.load(Ordering::SeqCst), ctx.tally().total.load(Ordering::SeqCst));
    assert_eq!(ctx.tally().total.load(Ordering::SeqCst), 4, "one experiment, three parts");

    nvmdb_cancel::cancel();
    let stopped = nvmdb_lab::run_experiments(&[&experiment], &ctx, &Quiet);
    assert!(matches!(stopped, Err(LabError::Interrupted(_))), "{stopped:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "no experiment starts once a stop is asked for");
    let parts = ctx.run_parts(&[1u32, 2], |_| 0, |_| Ok(()));
    assert!(matches!(parts, Err(LabError::Interrupted(_))), "{parts:?}");

    let memo: Memo<u32> = Memo::new();
    let stopped = memo.get_or_run("a".into(), || Err("interrupted".into()));
    assert_eq!(stopped, Err("interrupted".into()));
    nvmdb_cancel::clear();
    assert_eq!(memo.get_or_run("a".into(), || Ok(7)), Ok(7), "the interrupted failure was not kept");
    assert_eq!(memo.get_or_run("b".into(), || Err("failed".into())), Err::<u32, _>("failed".into()));
    assert_eq!(memo.get_or_run("b".into(), || Ok(8)), Err("failed".into()), "other failures are kept");
}
