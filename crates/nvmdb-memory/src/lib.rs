//! The CPU's view of main memory.
//!
//! Main-memory algorithms are written against one [`Memory`] trait: typed
//! [`Memory::load`] / [`Memory::store`] on addresses, byte-slice variants, and
//! [`Memory::alloc`] / [`Memory::free`] on a simulated heap. Three implementations:
//!
//! - [`CachedMemory`]: a set-associative, write-back, LRU cache hierarchy over a PCM
//!   [`LineDevice`](nvmdb_device::LineDevice); misses are line fetches (N_l), dirty
//!   evictions are differential line writes (N_lw, N_w, bits).
//! - [`FlatMemory`]: no cache; every load reads and every store writes the device.
//! - [`NativeMemory`]: plain RAM with no accounting, the speed baseline.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

pub mod cache;
mod divisor;
pub mod flat;
pub mod heap;
pub mod hints;
pub mod image;
pub mod native;
pub mod timing;

pub use cache::{CacheConfig, CacheLevelConfig, CacheLevelStats, CachedMemory, Checkpoint};
pub use flat::FlatMemory;
pub use heap::Heap;
pub use hints::HintFilter;
pub use native::NativeMemory;
pub use timing::{CpuConfig, CpuTimeStats};

use nvmdb_device::{PcmMetrics, PcmStats};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Expected memory failures. Accesses outside allocated memory are bugs and panic.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryError {
    #[error("out of simulated memory: {requested} bytes requested, {capacity} bytes capacity")]
    OutOfMemory { requested: u64, capacity: u64 },
    /// A stop was asked for ([`nvmdb_cancel::cancel`]): an algorithm on this memory (a
    /// join) stopped at its next check.
    #[error("interrupted")]
    Interrupted(#[from] nvmdb_cancel::Interrupted),
}

/// A fixed-size little-endian value that can live in simulated memory.
pub trait Scalar: Copy {
    /// Size in bytes (at most 8).
    const SIZE: usize;
    /// Decodes from `SIZE` little-endian bytes.
    fn from_le(bytes: &[u8]) -> Self;
    /// Encodes into `SIZE` little-endian bytes.
    fn to_le(self, out: &mut [u8]);
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn from_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
            #[inline]
            fn to_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
scalar!(u8, u16, u32, u64, i8, i16, i32, i64);

/// What a memory reports about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryReport {
    /// `cached`, `flat` or `native`.
    pub kind: String,
    /// PCM counters (zero for native memory).
    pub pcm: PcmStats,
    /// Cache levels, L1 first (empty without a cache).
    pub cache_levels: Vec<CacheLevelStats>,
    /// Estimated CPU cycles spent in memory accesses, the memory-only time (cached
    /// memory only).
    pub estimated_cycles: u64,
    /// The CPU time model's counters: instructions, DTLB, overlapped misses (cached
    /// memory only; see [`timing`]).
    #[serde(default)]
    pub cpu: CpuTimeStats,
    /// The PCM cost parameters in force.
    pub metrics: Option<PcmMetrics>,
}

impl MemoryReport {
    /// CIDR energy of the PCM counters, pJ.
    pub fn energy_pj(&self) -> u64 {
        self.metrics.map_or(0, |m| self.pcm.energy_pj(&m))
    }
    /// CIDR PCM access latency of the counters, cycles.
    pub fn pcm_latency_cycles(&self) -> u64 {
        self.metrics.map_or(0, |m| self.pcm.latency_cycles(&m))
    }
}

/// Simulated main memory.
pub trait Memory {
    /// Reads `buf.len()` bytes at `addr`.
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]);
    /// Writes `data` at `addr`.
    fn write_bytes(&mut self, addr: u64, data: &[u8]);
    /// Allocates `size` bytes aligned to `align` (a power of two).
    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError>;
    /// Frees an allocation made with the same `size`.
    fn free(&mut self, addr: u64, size: u64);
    /// Writes every dirty cached line back to the device.
    fn flush_all(&mut self) {}
    /// Zeroes all counters (contents and wear stay).
    fn reset_stats(&mut self) {}
    /// The counters so far.
    fn report(&self) -> MemoryReport;
    /// Declares `instructions` executed beside the loads and stores, for the CPU time
    /// model ([`timing`]); memories without one ignore it.
    fn compute(&mut self, _instructions: u64) {}
    /// Opens a group of accesses whose addresses do not depend on each other's values,
    /// so their misses may overlap ([`timing`]); groups do not nest.
    fn begin_independent(&mut self) {}
    /// Closes the group: what follows waits for every access in it.
    fn end_independent(&mut self) {}

    /// Loads a value.
    #[inline]
    fn load<T: Scalar>(&mut self, addr: u64) -> T {
        let mut b = [0u8; 8];
        self.read_bytes(addr, &mut b[..T::SIZE]);
        T::from_le(&b[..T::SIZE])
    }

    /// Stores a value.
    #[inline]
    fn store<T: Scalar>(&mut self, addr: u64, value: T) {
        let mut b = [0u8; 8];
        value.to_le(&mut b[..T::SIZE]);
        self.write_bytes(addr, &b[..T::SIZE]);
    }
}
