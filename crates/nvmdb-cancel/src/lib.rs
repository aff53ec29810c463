//! The process-wide cancellation flag: set by the `nvmdb` binary's Ctrl-C handler and by
//! the Python package when Python signals an interrupt, checked by the drivers' loops
//! (the experiment runner between experiments and parts, a trace replay per request, a
//! workload per operation or transaction, ...), which then stop with their crate's
//! `Interrupted` error. It sits below every other crate (it depends on none), so each
//! driver can see it without an upward dependency.
//!
//! A check is one relaxed atomic load: cheap enough for a loop per operation.
//!
//! Beside the flag, each [`check`] counts one step of its loop in the calling thread's
//! [`Progress`] when a program watches it ([`counting`]: the Python package's progress
//! bar of a single call). The total stays unknown (0): a trace streams, and setup
//! (ageing, pre-fill) shares the count. While no thread of the process watches (the
//! binary) the count is one relaxed load; a thread that is not watched while another is
//! (an experiment's parts beside a Python call) reads a thread-local and counts nothing.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The flag, shared with the binary's signal handler (which sets an `Arc<AtomicBool>`).
fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(Arc::default)
}

/// The flag itself, for a signal handler that sets it (`signal_hook::flag::register`).
pub fn shared_flag() -> Arc<AtomicBool> {
    Arc::clone(flag())
}

/// Asks every running driver to stop.
pub fn cancel() {
    flag().store(true, Ordering::Relaxed);
}

/// Lowers the flag, for a process that goes on after a cancelled call (the Python
/// package, once no call is running).
pub fn clear() {
    flag().store(false, Ordering::Relaxed);
}

/// Whether a stop was asked for.
pub fn is_cancelled() -> bool {
    flag().load(Ordering::Relaxed)
}

/// `Err(Interrupted)` once a stop was asked for: the check a driver's loop makes once per
/// step (request, operation, transaction, statement, phase), so it also counts the step
/// in this thread's [`Progress`] when a program watches ([`counting`]).
pub fn check() -> Result<(), Interrupted> {
    if is_cancelled() {
        Err(Interrupted)
    } else {
        work_done(1);
        Ok(())
    }
}

/// How far a run is, for a program that shows it from another thread: the steps known so
/// far (`total`, which may grow, and stays 0 when a loop cannot know its length, such as a
/// trace read as it streams) and those finished (`done`). The Python package reads it
/// while a call runs; `nvmdb run` and `reproduce` count experiments and parts in one.
#[derive(Debug, Default)]
pub struct Progress {
    /// Steps finished.
    pub done: AtomicU64,
    /// Steps known so far.
    pub total: AtomicU64,
}

impl Progress {
    /// `n` more steps to do.
    pub fn add_total(&self, n: u64) {
        self.total.fetch_add(n, Ordering::Relaxed);
    }

    /// `n` more steps done.
    pub fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// `(done, total)`.
    pub fn get(&self) -> (u64, u64) {
        (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed))
    }
}

thread_local! {
    /// Where the loops on this thread count their steps ([`counting`]).
    static WATCHED: RefCell<Option<Arc<Progress>>> = const { RefCell::new(None) };
}

/// How many threads run [`counting`] now: while none does, a check counts nothing and
/// reads no thread-local (one relaxed load, as for the flag).
static WATCHERS: AtomicUsize = AtomicUsize::new(0);

/// Runs `work` with the loops on this thread counting their steps in `progress`.
pub fn counting<T>(progress: Arc<Progress>, work: impl FnOnce() -> T) -> T {
    /// Puts back the thread's earlier watcher, also when `work` panics.
    struct Restore(Option<Arc<Progress>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            WATCHED.with(|w| w.replace(self.0.take()));
            WATCHERS.fetch_sub(1, Ordering::Relaxed);
        }
    }
    WATCHERS.fetch_add(1, Ordering::Relaxed);
    let _restore = Restore(WATCHED.with(|w| w.replace(Some(progress))));
    work()
}

/// `n` steps finished on this thread (counted when a program watches).
fn work_done(n: u64) {
    if WATCHERS.load(Ordering::Relaxed) == 0 {
        return;
    }
    WATCHED.with(|w| {
        if let Some(progress) = w.borrow().as_deref() {
            progress.advance(n);
        }
    });
}

/// A run stopped because a stop was asked for ([`cancel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flag is process-wide: the tests that raise it or rely on it take turns.
    static FLAG_USERS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn the_flag_is_raised_seen_by_check_and_lowered() {
        let _turn = FLAG_USERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        clear();
        assert_eq!(check(), Ok(()));
        cancel();
        assert!(is_cancelled() && shared_flag().load(Ordering::Relaxed));
        assert_eq!(check(), Err(Interrupted));
        assert_eq!(Interrupted.to_string(), "interrupted");
        clear();
        assert_eq!(check(), Ok(()));
    }

    #[test]
    fn checks_are_counted_as_steps_only_on_a_watched_thread_and_only_while_watched() {
        let _turn = FLAG_USERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        clear();
        check().unwrap();
        let progress = Arc::new(Progress::default());
        let inner = counting(Arc::clone(&progress), || {
            for _ in 0..3 {
                check().unwrap();
            }
            // Another thread's loops are not this call's.
            std::thread::spawn(|| check().unwrap()).join().unwrap();
            // A check that stops the loop is not a step.
            cancel();
            assert_eq!(check(), Err(Interrupted));
            clear();
            7
        });
        check().unwrap();
        assert_eq!(inner, 7);
        assert_eq!(progress.get(), (3, 0));
        progress.add_total(2);
        progress.advance(1);
        assert_eq!(progress.get(), (4, 2));
    }
}
