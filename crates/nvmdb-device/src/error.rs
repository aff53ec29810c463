use thiserror::Error;

/// Expected device failures. Broken invariants are assertions instead.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceError {
    #[error("address range {addr:#x}+{len} is outside the {capacity}-byte device")]
    OutOfRange { addr: u64, len: u64, capacity: u64 },
    #[error("flash page {ppn} is not erased (program before erase)")]
    ProgramNotErased { ppn: u64 },
    #[error("flash page {ppn} programmed out of order: block {block} expects page {expected} or later")]
    ProgramOutOfOrder { ppn: u64, block: u64, expected: u32 },
    #[error("flash block {block} is worn out ({erases} erases, endurance {endurance})")]
    WornOut { block: u64, erases: u64, endurance: u64 },
    #[error("partial programming is disabled on this flash array")]
    PartialProgramDisabled,
    #[error("sector range {first}..{end} is invalid for a page of {sectors} sectors")]
    BadSectorRange { first: u32, end: u32, sectors: u32 },
    #[error("flash page {ppn} data is {got} bytes, expected {expected}")]
    BadPageSize { ppn: u64, got: usize, expected: usize },
    #[error("invalid configuration: {0}")]
    Config(String),
}
