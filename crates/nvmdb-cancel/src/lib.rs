//! The process-wide cancellation flag: set by the `nvmdb` binary's Ctrl-C handler and by
//! the Python package when Python signals an interrupt, checked by the drivers' loops
//! (the experiment runner between experiments and parts, a trace replay per request, a
//! workload per operation or transaction, ...), which then stop with their crate's
//! `Interrupted` error. It sits below every other crate (it depends on none), so each
//! driver can see it without an upward dependency.
//!
//! A check is one relaxed atomic load: cheap enough for a loop per operation.

use std::sync::atomic::{AtomicBool, Ordering};
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

/// `Err(Interrupted)` once a stop was asked for: the check a driver's loop makes.
pub fn check() -> Result<(), Interrupted> {
    if is_cancelled() {
        Err(Interrupted)
    } else {
        Ok(())
    }
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

    #[test]
    fn the_flag_is_raised_seen_by_check_and_lowered() {
        clear();
        assert_eq!(check(), Ok(()));
        cancel();
        assert!(is_cancelled() && shared_flag().load(Ordering::Relaxed));
        assert_eq!(check(), Err(Interrupted));
        assert_eq!(Interrupted.to_string(), "interrupted");
        clear();
        assert_eq!(check(), Ok(()));
    }
}
