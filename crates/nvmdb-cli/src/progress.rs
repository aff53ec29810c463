//! The binary's progress line: a run of one command that goes on for more than two
//! seconds shows on stderr, when stderr is a terminal, how many steps (requests,
//! operations, transactions, statements: the loops' cancellation checks) it has done, and
//! that Ctrl-C stops it. The line is cleared when the run ends, so what the run prints
//! last (its one-line error, if any) stands alone; nothing is drawn when stderr is a file
//! or a pipe.

use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use nvmdb_cancel::Progress;

/// How long a run goes before its line appears.
const QUIET_FOR: Duration = Duration::from_secs(2);
/// How often the line is redrawn.
const EVERY: Duration = Duration::from_millis(500);

/// The line of a running command; cleared on drop.
#[derive(Debug)]
pub struct ProgressLine {
    stop: Option<Sender<()>>,
    drawer: Option<JoinHandle<()>>,
}

impl ProgressLine {
    /// Starts showing `progress` on stderr (if it is a terminal) after [`QUIET_FOR`].
    pub fn start(progress: Arc<Progress>) -> ProgressLine {
        if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            return ProgressLine { stop: None, drawer: None };
        }
        let (stop, stopped) = channel::<()>();
        let start = std::time::Instant::now();
        let drawer = std::thread::spawn(move || {
            if stopped.recv_timeout(QUIET_FOR) != Err(RecvTimeoutError::Timeout) {
                return;
            }
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            loop {
                let (done, _) = progress.get();
                let seconds = start.elapsed().as_secs();
                bar.set_message(format!("{seconds} s, {done} steps done (Ctrl-C stops)"));
                bar.tick();
                if stopped.recv_timeout(EVERY) != Err(RecvTimeoutError::Timeout) {
                    break;
                }
            }
            bar.finish_and_clear();
        });
        ProgressLine { stop: Some(stop), drawer: Some(drawer) }
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(drawer) = self.drawer.take() {
            let _ = drawer.join();
        }
    }
}
