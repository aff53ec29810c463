//! The CLI's one error type: every failure becomes one line on stderr and an exit code.

use std::fmt;

/// Exit code for bad input: a malformed file, an unknown flag value.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code for a failure while running.
pub const EXIT_FAILURE: i32 = 1;

/// A CLI failure.
#[derive(Debug)]
pub struct CliError {
    /// The one line printed on stderr.
    pub message: String,
    /// The process exit code.
    pub code: i32,
    /// What failed, for callers that tell failures apart by more than the exit code (the
    /// Python package's exception types).
    pub kind: ErrorKind,
}

/// What a [`CliError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input: a flag, a value, a line of an input file (exit 2).
    Input,
    /// A file could not be opened, read or written (a missing input file is exit 2, an
    /// output that cannot be written exit 1); the operating system's reason.
    Io(std::io::ErrorKind),
    /// A failure while running (exit 1), or a closed stdout pipe (exit 0).
    Failed,
}

impl CliError {
    /// Bad input (exit 2).
    pub fn input(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), code: EXIT_BAD_INPUT, kind: ErrorKind::Input }
    }

    /// An input file that cannot be read (exit 2): `FILE: cannot read: reason`.
    pub fn unreadable(path: &str, e: &std::io::Error) -> CliError {
        CliError { message: format!("{path}: cannot read: {e}"), code: EXIT_BAD_INPUT, kind: ErrorKind::Io(e.kind()) }
    }

    /// An output file that cannot be written (exit 1): `FILE: cannot write: reason`.
    pub fn unwritable(path: &str, e: &std::io::Error) -> CliError {
        CliError { message: format!("{path}: cannot write: {e}"), code: EXIT_FAILURE, kind: ErrorKind::Io(e.kind()) }
    }

    /// A bad line of an input file (exit 2): `FILE:LINE: what is wrong`.
    pub fn at_line(file: &str, line: u64, what: impl fmt::Display) -> CliError {
        CliError::input(format!("{file}:{line}: {what}"))
    }

    /// A failure while running (exit 1).
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), code: EXIT_FAILURE, kind: ErrorKind::Failed }
    }

    /// Stdout's reader went away (`nvmdb … | head -1`): it has all it wanted, so stop
    /// quietly with success.
    pub fn closed_pipe() -> CliError {
        CliError { message: String::new(), code: 0, kind: ErrorKind::Failed }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<nvmdb_lab::LabError> for CliError {
    fn from(e: nvmdb_lab::LabError) -> CliError {
        match e {
            nvmdb_lab::LabError::UnknownExperiment(_) | nvmdb_lab::LabError::StoredRun { .. } => {
                CliError::input(e.to_string())
            }
            other => CliError::failed(other.to_string()),
        }
    }
}
