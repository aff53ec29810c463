//! Typed errors of the journal crate.

use thiserror::Error;

/// Expected failures. Broken invariants are assertions instead.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournalError {
    /// A configuration name or parameter is invalid.
    #[error("invalid journal configuration: {0}")]
    Config(String),
    /// A workload name or trace length is invalid.
    #[error("invalid workload: {0}")]
    Workload(String),
    /// The power was cut: this write and every later one did not happen.
    #[error("power cut at device write {0}")]
    PowerCut(u64),
    /// No free frame, portion or descriptor is left in the PCM journal area.
    #[error("the PCM journal area is full: {0}")]
    Full(String),
    /// SQLite wrote the journal in a shape the PCM structures do not hold.
    #[error("unsupported journal write: {0}")]
    Unsupported(String),
    /// A device reported an error.
    #[error("device: {0}")]
    Device(#[from] nvmdb_device::DeviceError),
    /// SQLite reported an error.
    #[error("sqlite: {0}")]
    Sqlite(String),
    /// A stop was asked for ([`nvmdb_cancel::cancel`]).
    #[error("interrupted")]
    Interrupted(#[from] nvmdb_cancel::Interrupted),
}

impl From<rusqlite::Error> for JournalError {
    fn from(e: rusqlite::Error) -> Self {
        JournalError::Sqlite(e.to_string())
    }
}
