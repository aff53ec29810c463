//! `nvmdb._native`: the `nvmdb` command line run in the Python process. The package's
//! functions (`python/nvmdb/__init__.py`) build a command line from their keywords and
//! call [`run`], which hands it to `nvmdb_cli::run_captured`: the binary's own argument
//! definitions and code, so the numbers are the CLI's by construction.

use nvmdb_cli::{CliError, ErrorKind};
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyOSError, PyPermissionError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;

/// run(args: list[str]) -> str
///
/// Runs `nvmdb ARGS` (without the program name) in this process, without the GIL, and
/// returns what the command would print on stdout. Bad input (the CLI's exit code 2)
/// raises ValueError, a file that cannot be read or written OSError (FileNotFoundError,
/// PermissionError, ...), any other failure RuntimeError; the message is the CLI's one
/// line on stderr.
#[pyfunction]
fn run(py: Python<'_>, args: Vec<String>) -> PyResult<String> {
    py.detach(|| nvmdb_cli::run_captured(&args)).map_err(exception)
}

/// The Python exception of a CLI error, with the CLI's line as its message.
fn exception(e: CliError) -> PyErr {
    match e.kind {
        ErrorKind::Input => PyValueError::new_err(e.message),
        ErrorKind::Io(std::io::ErrorKind::NotFound) => PyFileNotFoundError::new_err(e.message),
        ErrorKind::Io(std::io::ErrorKind::PermissionDenied) => PyPermissionError::new_err(e.message),
        ErrorKind::Io(std::io::ErrorKind::AlreadyExists) => PyFileExistsError::new_err(e.message),
        ErrorKind::Io(_) => PyOSError::new_err(e.message),
        ErrorKind::Failed => PyRuntimeError::new_err(e.message),
    }
}

/// The native half of the `nvmdb` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}
