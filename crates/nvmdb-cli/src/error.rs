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
}

impl CliError {
    /// Bad input (exit 2).
    pub fn input(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), code: EXIT_BAD_INPUT }
    }

    /// A bad line of an input file (exit 2): `FILE:LINE: what is wrong`.
    pub fn at_line(file: &str, line: u64, what: impl fmt::Display) -> CliError {
        CliError::input(format!("{file}:{line}: {what}"))
    }

    /// A failure while running (exit 1).
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), code: EXIT_FAILURE }
    }

    /// Stdout's reader went away (`nvmdb … | head -1`): it has all it wanted, so stop
    /// quietly with success.
    pub fn closed_pipe() -> CliError {
        CliError { message: String::new(), code: 0 }
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
