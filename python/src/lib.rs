//! `nvmdb._native`: the `nvmdb` command line run in the Python process. The package's
//! functions (`python/nvmdb/__init__.py`) build a command line from their keywords and
//! call [`run`], which hands it to `nvmdb_cli::run_counted`: the binary's own argument
//! definitions and code, so the numbers are the CLI's by construction.
//!
//! The command runs on a thread of its own, which never holds the GIL. The calling
//! thread waits for it without the GIL too, taking the GIL back every [`TICK`] only to
//! let Python run its signal handlers (`PyErr_CheckSignals`: Ctrl-C, a Jupyter interrupt)
//! and to report progress. When a handler raises (KeyboardInterrupt), the command is
//! asked to stop (`nvmdb_cli::cancel`), ends at its driver's next check, and the
//! exception is raised once it has ended: nothing runs on after the call returns, and
//! the command's output files are left as they were.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nvmdb_cli::{CliError, ErrorKind, Tally};
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyIsADirectoryError, PyKeyboardInterrupt, PyNotADirectoryError, PyOSError,
    PyPermissionError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;

/// How often the waiting thread looks at Python's signals and the progress.
const TICK: Duration = Duration::from_millis(50);

/// Commands running in this process: the cancellation flag is process-wide, so it is
/// lowered when the last running command has ended (and before the first starts).
static RUNNING: Mutex<usize> = Mutex::new(0);

/// Counts one running command while it lives.
struct Running;

impl Running {
    fn start() -> Running {
        let mut running = RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if *running == 0 {
            nvmdb_cli::clear_cancel();
        }
        *running += 1;
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *running -= 1;
        if *running == 0 {
            nvmdb_cli::clear_cancel();
        }
    }
}

/// run(args: list[str], progress: Callable[[int, int], None] | None = None) -> str
///
/// Runs `nvmdb ARGS` (without the program name) in this process, without the GIL, and
/// returns what the command would print on stdout. `progress(done, total)` is called
/// (with the GIL, from the calling thread) when the experiments and parts of `nvmdb run`
/// or `nvmdb reproduce` finished so far, or known so far, change. Ctrl-C stops the
/// command at its next check and raises KeyboardInterrupt. Bad input (the CLI's exit
/// code 2) raises ValueError, a file that cannot be read or written OSError
/// (FileNotFoundError, PermissionError, ..., with errno and filename), a command stopped
/// by an interrupt in another thread KeyboardInterrupt, any other failure RuntimeError;
/// the message is the CLI's one line on stderr.
#[pyfunction]
#[pyo3(signature = (args, progress=None))]
fn run(py: Python<'_>, args: Vec<String>, progress: Option<Bound<'_, PyAny>>) -> PyResult<String> {
    let _running = Running::start();
    let tally = Arc::new(Tally::default());
    let (send, receive) = mpsc::channel();
    // Behind a lock only to lend it to the GIL-free wait (a receiver is not Sync).
    let receive = Mutex::new(receive);
    let worker = {
        let tally = Arc::clone(&tally);
        std::thread::Builder::new()
            .name("nvmdb".into())
            .spawn(move || {
                // A send fails only when the caller is gone, and then nobody waits.
                let _ = send.send(nvmdb_cli::run_counted(&args, tally));
            })
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the command's thread: {e}")))?
    };
    let mut interrupt: Option<PyErr> = None;
    let mut failure: Option<PyErr> = None;
    let mut shown = (0, 0);
    let result = loop {
        let received =
            py.detach(|| receive.lock().unwrap_or_else(std::sync::PoisonError::into_inner).recv_timeout(TICK));
        match received {
            Ok(result) => break Some(result),
            Err(RecvTimeoutError::Disconnected) => break None,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if interrupt.is_none() {
            if let Err(e) = py.check_signals() {
                interrupt = Some(e);
                nvmdb_cli::cancel();
            }
        }
        if let (Some(callback), None) = (&progress, &failure) {
            let now = (tally.done.load(Ordering::Relaxed), tally.total.load(Ordering::Relaxed));
            if now != shown {
                shown = now;
                // A failing callback stops the command as an interrupt does.
                if let Err(e) = callback.call1(now) {
                    failure = Some(e);
                    nvmdb_cli::cancel();
                }
            }
        }
    };
    let panicked = py.detach(|| worker.join()).is_err();
    if let Some(e) = interrupt.or(failure) {
        return Err(e);
    }
    match result {
        Some(Ok(stdout)) => {
            if let Some(callback) = &progress {
                let now = (tally.done.load(Ordering::Relaxed), tally.total.load(Ordering::Relaxed));
                if now != shown {
                    callback.call1(now)?;
                }
            }
            Ok(stdout)
        }
        Some(Err(e)) => Err(exception(py, e)),
        None if panicked => Err(PyRuntimeError::new_err("the command panicked (a bug in nvmdb)")),
        None => Err(PyRuntimeError::new_err("the command ended without a result")),
    }
}

/// The Python exception of a CLI error, with the CLI's line as its message; an I/O
/// error with an errno is the `OSError` subclass of its errno, with `errno`, `strerror`
/// (the CLI's line after the file's name) and `filename` set.
fn exception(py: Python<'_>, e: CliError) -> PyErr {
    match e.kind {
        ErrorKind::Input => PyValueError::new_err(e.message),
        ErrorKind::Interrupted => PyKeyboardInterrupt::new_err(e.message),
        ErrorKind::Failed => PyRuntimeError::new_err(e.message),
        ErrorKind::Io(kind) => {
            let (errno, filename) = match &e.os {
                Some(os) => (os.errno, Some(os.path.clone())),
                None => (None, None),
            };
            let (Some(errno), Some(filename)) = (errno, filename) else { return os_error(kind, e.message) };
            // OSError(errno, strerror, filename) is the subclass of errno, with the three
            // attributes set and Python's own str(): "[Errno 2] cannot read: ...: 'FILE'".
            let strerror = match e.message.split_once(&format!("{filename}: ")) {
                Some((_, reason)) => reason.to_string(),
                None => e.message.clone(),
            };
            match py.get_type::<PyOSError>().call1((errno, strerror, filename)) {
                Ok(error) => PyErr::from_value(error),
                Err(_) => os_error(kind, e.message),
            }
        }
    }
}

/// The `OSError` subclass of an I/O error that has no errno.
fn os_error(kind: std::io::ErrorKind, message: String) -> PyErr {
    use std::io::ErrorKind as Kind;
    match kind {
        Kind::NotFound => PyFileNotFoundError::new_err(message),
        Kind::PermissionDenied => PyPermissionError::new_err(message),
        Kind::AlreadyExists => PyFileExistsError::new_err(message),
        Kind::IsADirectory => PyIsADirectoryError::new_err(message),
        Kind::NotADirectory => PyNotADirectoryError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}

/// The native half of the `nvmdb` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
