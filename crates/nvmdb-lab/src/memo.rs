//! Results that several experiments of one process compute alike, computed once.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Results keyed by every input they depend on, each computed by the first asker in this
/// process; an asker while it runs waits for its result. A result is the same whichever
/// experiment asks first, so a report does not depend on which one did. Failures are kept
/// as their messages, for each asker to name itself in.
pub struct Memo<T> {
    results: Mutex<BTreeMap<String, Slot<T>>>,
}

/// One key's result (or its failure's message), set once by its first asker.
type Slot<T> = Arc<OnceLock<Result<T, String>>>;

impl<T: Clone> Memo<T> {
    /// An empty memo, for a `static`.
    pub const fn new() -> Memo<T> {
        Memo { results: Mutex::new(BTreeMap::new()) }
    }

    /// The result under `key`, running `run` for it if no asker has. A failure while a
    /// stop is asked for ([`nvmdb_cancel`]) is not kept: the next asker runs it again.
    pub fn get_or_run(&self, key: String, run: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
        let slot = Arc::clone(self.results.lock().expect("no panics while locked").entry(key.clone()).or_default());
        let result = slot.get_or_init(run).clone();
        if result.is_err() && nvmdb_cancel::is_cancelled() {
            let mut results = self.results.lock().expect("no panics while locked");
            if results.get(&key).is_some_and(|kept| Arc::ptr_eq(kept, &slot)) {
                results.remove(&key);
            }
        }
        result
    }

    /// The keys asked for so far, in order.
    pub fn keys(&self) -> Vec<String> {
        self.results.lock().expect("no panics while locked").keys().cloned().collect()
    }

    /// Forgets every result, so that the next askers run them again (for tests that
    /// compare a run with its repetition).
    pub fn clear(&self) {
        self.results.lock().expect("no panics while locked").clear();
    }
}

impl<T> std::fmt::Debug for Memo<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys = self.results.lock().map_or(0, |r| r.len());
        f.debug_struct("Memo").field("keys", &keys).finish()
    }
}

impl<T: Clone> Default for Memo<T> {
    fn default() -> Memo<T> {
        Memo::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn each_key_runs_once_and_every_asker_gets_its_result() {
        let memo: Memo<u32> = Memo::new();
        let runs = AtomicU32::new(0);
        let run = |value: u32| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(value)
        };
        std::thread::scope(|scope| {
            let askers: Vec<_> = (0..4).map(|_| scope.spawn(|| memo.get_or_run("a".into(), || run(7)))).collect();
            for asker in askers {
                assert_eq!(asker.join().expect("no panic"), Ok(7));
            }
        });
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(memo.get_or_run("b".into(), || Err("failed".into())), Err::<u32, _>("failed".into()));
        assert_eq!(memo.get_or_run("b".into(), || run(8)), Err("failed".into()), "a failure is kept");
        assert_eq!(memo.keys(), ["a", "b"]);
        memo.clear();
        assert!(memo.keys().is_empty());
        assert_eq!(memo.get_or_run("a".into(), || run(9)), Ok(9), "run again after clear");
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }
}
