//! Volatile memories: DRAM, and SRAM with or without a battery. A power loss drops their
//! contents unless the SRAM is battery-backed.

use serde::{Deserialize, Serialize};

use crate::error::DeviceError;
use crate::params::VolatileParams;
use crate::power::PowerLoss;

/// Which volatile technology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VolatileKind {
    /// DRAM: loses its contents on power loss.
    Dram,
    /// SRAM without a battery: loses its contents.
    Sram,
    /// Battery-backed SRAM: keeps its contents.
    BatterySram,
}

/// Volatile memory counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolatileStats {
    /// Read operations.
    pub reads: u64,
    /// Write operations.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Access time, ns.
    pub time_ns: u64,
    /// Energy, pJ.
    pub energy_pj: u64,
}

impl VolatileStats {
    /// Counter-wise difference `self - earlier`.
    pub fn since(&self, earlier: &VolatileStats) -> VolatileStats {
        VolatileStats {
            reads: self.reads - earlier.reads,
            writes: self.writes - earlier.writes,
            bytes_read: self.bytes_read - earlier.bytes_read,
            bytes_written: self.bytes_written - earlier.bytes_written,
            time_ns: self.time_ns - earlier.time_ns,
            energy_pj: self.energy_pj - earlier.energy_pj,
        }
    }
}

/// A byte-addressable volatile memory.
#[derive(Debug, Clone)]
pub struct Volatile {
    kind: VolatileKind,
    params: VolatileParams,
    data: Vec<u8>,
    stats: VolatileStats,
}

impl Volatile {
    /// A zeroed memory of `capacity_bytes`.
    pub fn new(kind: VolatileKind, params: VolatileParams, capacity_bytes: usize) -> Volatile {
        Volatile { kind, params, data: vec![0; capacity_bytes], stats: VolatileStats::default() }
    }

    /// A DRAM with the DRAM preset.
    pub fn dram(capacity_bytes: usize) -> Volatile {
        Volatile::new(VolatileKind::Dram, VolatileParams::DRAM, capacity_bytes)
    }

    /// A battery-backed SRAM with the SRAM preset.
    pub fn battery_sram(capacity_bytes: usize) -> Volatile {
        Volatile::new(VolatileKind::BatterySram, VolatileParams::SRAM, capacity_bytes)
    }

    /// The technology.
    pub fn kind(&self) -> VolatileKind {
        self.kind
    }
    /// The counters.
    pub fn stats(&self) -> &VolatileStats {
        &self.stats
    }
    /// Capacity in bytes.
    pub fn capacity_bytes(&self) -> usize {
        self.data.len()
    }

    fn range(&self, addr: u64, len: usize) -> Result<std::ops::Range<usize>, DeviceError> {
        let start = usize::try_from(addr).ok();
        match start.and_then(|start| Some(start..start.checked_add(len)?)) {
            Some(range) if range.end <= self.data.len() => Ok(range),
            _ => Err(DeviceError::OutOfRange { addr, len: len as u64, capacity: self.data.len() as u64 }),
        }
    }

    /// Reads bytes; returns the access time in ns.
    pub fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<u64, DeviceError> {
        let range = self.range(addr, buf.len())?;
        buf.copy_from_slice(&self.data[range]);
        self.stats.reads += 1;
        self.stats.bytes_read += buf.len() as u64;
        self.stats.energy_pj += buf.len() as u64 * 8 * self.params.read_pj_per_bit;
        self.stats.time_ns += self.params.read_ns;
        Ok(self.params.read_ns)
    }

    /// Writes bytes; returns the access time in ns.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<u64, DeviceError> {
        let range = self.range(addr, data.len())?;
        self.data[range].copy_from_slice(data);
        self.stats.writes += 1;
        self.stats.bytes_written += data.len() as u64;
        self.stats.energy_pj += data.len() as u64 * 8 * self.params.write_pj_per_bit;
        self.stats.time_ns += self.params.write_ns;
        Ok(self.params.write_ns)
    }
}

impl PowerLoss for Volatile {
    fn power_loss(&mut self) {
        if self.kind != VolatileKind::BatterySram {
            self.data.fill(0);
        }
    }
}
