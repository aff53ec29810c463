//! IPL-P (seed 002): a persistent key-value engine whose B+-tree pages live in simulated
//! flash (or PCM) and whose page changes are physiological log records kept beside each
//! flash erase block, in PCM (`ipl-p`) or in flash log sectors (`ipl`).
//!
//! [`Engine`] is built from an [`EngineConfig`] ([`EngineKind::FlashOnly`],
//! [`EngineKind::PcmOnly`], [`EngineKind::Ipl`], [`EngineKind::IplP`]); it answers
//! `insert`, `update`, `delete`, `get` and `scan` from its devices through an LRU buffer
//! pool, makes everything up to a `sync` durable, and recovers from its devices alone
//! after a power loss ([`Engine::crash`], [`Engine::open`]). [`workload`] drives the
//! seed's three benchmarks and reports progress as it runs. The design and the byte
//! layouts are in `docs/kv.md`.

pub mod config;
pub mod devices;
pub mod engine;
pub mod file_format;
pub mod file_run;
pub mod page;
mod pool;
pub mod workload;

pub use config::{DevicePreset, EngineConfig, EngineKind, FlashTime};
pub use devices::Devices;
pub use engine::{Engine, RecoveryFailure, Stats};
pub use workload::{Benchmark, Phase, Progress, Run, RunReport, WorkloadSpec};

use thiserror::Error;

/// Expected engine failures.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KvError {
    /// The configuration is not usable; the message names the field.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A value is empty or longer than [`page::MAX_VALUE_BYTES`].
    #[error("value of {0} bytes: values are 1 to 64 bytes")]
    Value(usize),
    /// The devices are full (more pages than the configuration's capacity).
    #[error("device full: {0}")]
    Full(String),
    /// The power was cut before a device write; the engine must be dropped
    /// ([`Engine::crash`]) and reopened.
    #[error("power cut")]
    PowerCut,
    /// What the devices hold is not what the engine wrote.
    #[error("corrupt: {0}")]
    Corrupt(String),
    /// A device or FTL error.
    #[error("device: {0}")]
    Device(String),
    /// A stop was asked for ([`nvmdb_cancel::cancel`]).
    #[error("interrupted")]
    Interrupted(#[from] nvmdb_cancel::Interrupted),
}

impl From<nvmdb_flash::FlashError> for KvError {
    fn from(e: nvmdb_flash::FlashError) -> KvError {
        match e {
            nvmdb_flash::FlashError::Full(what) => KvError::Full(what),
            nvmdb_flash::FlashError::PowerCut(_) => KvError::PowerCut,
            nvmdb_flash::FlashError::Interrupted(i) => KvError::Interrupted(i),
            other => KvError::Device(other.to_string()),
        }
    }
}

impl From<nvmdb_device::DeviceError> for KvError {
    fn from(e: nvmdb_device::DeviceError) -> KvError {
        KvError::Device(e.to_string())
    }
}
