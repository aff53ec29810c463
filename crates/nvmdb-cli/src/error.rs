//! The CLI's one error type: every failure becomes one line on stderr and an exit code.

use std::fmt;

/// Exit code for bad input: a malformed file, an unknown flag value.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code for a failure while running.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code of a run stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
pub const EXIT_INTERRUPTED: i32 = 130;

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
    /// An I/O error's file and the operating system's error number, when it gave one (the
    /// Python package's `OSError.filename` and `errno`).
    pub os: Option<OsError>,
}

/// The file and OS error number of an I/O [`CliError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsError {
    /// The file, as named on the command line.
    pub path: String,
    /// The OS's error number (`errno`), if the error came from the OS.
    pub errno: Option<i32>,
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
    /// The run stopped because a stop was asked for (Ctrl-C, a Python interrupt; exit 130).
    Interrupted,
}

impl CliError {
    /// Bad input (exit 2).
    pub fn input(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), code: EXIT_BAD_INPUT, kind: ErrorKind::Input, os: None }
    }

    /// An input file that cannot be read (exit 2): `FILE: cannot read: reason`.
    pub fn unreadable(path: &str, e: &std::io::Error) -> CliError {
        CliError { code: EXIT_BAD_INPUT, ..CliError::io(path, "cannot read", e) }
    }

    /// An output file that cannot be written (exit 1): `FILE: cannot write: reason`. A
    /// closed pipe (stdout, or an output file `/dev/stdout`, read by `head -1`) is the
    /// reader having all it wanted: [`CliError::closed_pipe`]. Every write of stdout and
    /// of output files ends here.
    pub fn unwritable(path: &str, e: &std::io::Error) -> CliError {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return CliError::closed_pipe();
        }
        CliError::io(path, "cannot write", e)
    }

    /// `FILE: what: reason` of an I/O error (exit 1).
    fn io(path: &str, what: &str, e: &std::io::Error) -> CliError {
        CliError {
            message: format!("{path}: {what}: {e}"),
            code: EXIT_FAILURE,
            kind: ErrorKind::Io(e.kind()),
            os: Some(OsError { path: path.to_string(), errno: e.raw_os_error() }),
        }
    }

    /// An output path given by `flag` that cannot be written (exit 2: the flag is at
    /// fault): `FLAG PATH: what: reason`.
    pub fn flag_io(flag: &str, path: &str, what: &str, e: &std::io::Error) -> CliError {
        let error = CliError::io(path, what, e);
        CliError { message: format!("{flag} {}", error.message), code: EXIT_BAD_INPUT, ..error }
    }

    /// A bad line of an input file (exit 2): `FILE:LINE: what is wrong`.
    pub fn at_line(file: &str, line: u64, what: impl fmt::Display) -> CliError {
        CliError::input(format!("{file}:{line}: {what}"))
    }

    /// A failure while running (exit 1).
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), code: EXIT_FAILURE, kind: ErrorKind::Failed, os: None }
    }

    /// A run stopped by [`nvmdb_cancel::cancel`] (exit 130).
    pub fn interrupted() -> CliError {
        CliError { message: "interrupted".into(), code: EXIT_INTERRUPTED, kind: ErrorKind::Interrupted, os: None }
    }

    /// Stdout's reader went away (`nvmdb … | head -1`): it has all it wanted, so stop
    /// quietly with success.
    pub fn closed_pipe() -> CliError {
        CliError { message: String::new(), code: 0, kind: ErrorKind::Failed, os: None }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<nvmdb_cancel::Interrupted> for CliError {
    fn from(_: nvmdb_cancel::Interrupted) -> CliError {
        CliError::interrupted()
    }
}

impl From<nvmdb_lab::LabError> for CliError {
    fn from(e: nvmdb_lab::LabError) -> CliError {
        match e {
            nvmdb_lab::LabError::UnknownExperiment(_) | nvmdb_lab::LabError::StoredRun { .. } => {
                CliError::input(e.to_string())
            }
            nvmdb_lab::LabError::Io { ref path, ref source } => CliError {
                kind: ErrorKind::Io(source.kind()),
                os: Some(OsError { path: path.clone(), errno: source.raw_os_error() }),
                ..CliError::failed(e.to_string())
            },
            other => CliError::failed(other.to_string()),
        }
    }
}
