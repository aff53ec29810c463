//! The crate's one error type.

use nvmdb_device::DeviceError;
use thiserror::Error;

/// Expected eNVy failures. Broken invariants are assertions instead.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvyError {
    /// The configuration cannot describe a working system.
    #[error("invalid eNVy configuration: {0}")]
    Config(String),
    /// A device refused an operation.
    #[error("device: {0}")]
    Device(#[from] DeviceError),
    /// An access outside the logical address space.
    #[error("address range {addr:#x}+{len} is outside the {capacity}-byte eNVy address space")]
    OutOfRange { addr: u64, len: u64, capacity: u64 },
    /// Power was cut (simulated) before the next device write.
    #[error("power cut after {device_writes} device writes")]
    PowerCut { device_writes: u64 },
    /// The battery-backed SRAM does not hold a formatted eNVy state for this configuration.
    #[error("battery-backed SRAM holds no eNVy state for this configuration: {0}")]
    NotFormatted(String),
    /// Cleaning could not free a page (only when the configured utilisation leaves none).
    #[error("flash full: no segment can be cleaned to free a page")]
    Full,
    /// A transaction call out of order.
    #[error("transaction: {0}")]
    Transaction(&'static str),
    /// An operation that needs the flash pages' bytes on a system that keeps none
    /// ([`EnvyConfig::keep_page_bytes`](crate::EnvyConfig::keep_page_bytes) off).
    #[error("{0} needs the flash pages' bytes, and this eNVy keeps none (keep_page_bytes is off)")]
    NoPageBytes(&'static str),
    /// A stop was asked for ([`nvmdb_cancel::cancel`]).
    #[error("interrupted")]
    Interrupted(#[from] nvmdb_cancel::Interrupted),
}
