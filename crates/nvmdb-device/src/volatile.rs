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
    /// The access and byte counts; [`Volatile::stats`] derives the time and energy from
    /// them (each access costs its kind's time, each byte its kind's energy), so that an
    /// access adds two counts.
    counts: AccessCounts,
}

/// What [`Volatile`] counts per access: operations and bytes, read and written.
#[derive(Debug, Clone, Copy, Default)]
struct AccessCounts {
    reads: u64,
    writes: u64,
    bytes_read: u64,
    bytes_written: u64,
}

impl Volatile {
    /// A zeroed memory of `capacity_bytes`.
    pub fn new(kind: VolatileKind, params: VolatileParams, capacity_bytes: usize) -> Volatile {
        Volatile { kind, params, data: vec![0; capacity_bytes], counts: AccessCounts::default() }
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
    /// The counters: the accesses and bytes, and their time and energy (each read takes
    /// `read_ns` and each write `write_ns`; each bit read or written costs its pJ), the
    /// sums the accesses one by one would add.
    pub fn stats(&self) -> VolatileStats {
        let (c, p) = (&self.counts, &self.params);
        VolatileStats {
            reads: c.reads,
            writes: c.writes,
            bytes_read: c.bytes_read,
            bytes_written: c.bytes_written,
            time_ns: c.reads * p.read_ns + c.writes * p.write_ns,
            energy_pj: c.bytes_read * 8 * p.read_pj_per_bit + c.bytes_written * 8 * p.write_pj_per_bit,
        }
    }
    /// Capacity in bytes.
    pub fn capacity_bytes(&self) -> usize {
        self.data.len()
    }

    #[inline]
    fn range(&self, addr: u64, len: usize) -> Result<std::ops::Range<usize>, DeviceError> {
        let start = usize::try_from(addr).ok();
        match start.and_then(|start| Some(start..start.checked_add(len)?)) {
            Some(range) if range.end <= self.data.len() => Ok(range),
            _ => Err(DeviceError::OutOfRange { addr, len: len as u64, capacity: self.data.len() as u64 }),
        }
    }

    /// Reads bytes; returns the access time in ns.
    #[inline]
    pub fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<u64, DeviceError> {
        buf.copy_from_slice(self.read_in_place(addr, buf.len())?);
        Ok(self.params.read_ns)
    }

    /// The `len` bytes at `addr`, read where they lie: counted as [`Volatile::read`] of
    /// them counts (its time included), without copying them out.
    #[inline]
    pub fn read_in_place(&mut self, addr: u64, len: usize) -> Result<&[u8], DeviceError> {
        let range = self.range(addr, len)?;
        self.counts.reads += 1;
        self.counts.bytes_read += len as u64;
        Ok(&self.data[range])
    }

    /// Writes bytes; returns the access time in ns.
    #[inline]
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<u64, DeviceError> {
        self.write_in_place(addr, data.len())?.copy_from_slice(data);
        Ok(self.params.write_ns)
    }

    /// The `len` bytes at `addr`, for the caller to overwrite where they lie (every byte:
    /// as a write of them, the range holds whatever the caller leaves there): counted as
    /// [`Volatile::write`] of them counts (its time included), without a copy in.
    #[inline]
    pub fn write_in_place(&mut self, addr: u64, len: usize) -> Result<&mut [u8], DeviceError> {
        let range = self.range(addr, len)?;
        self.counts.writes += 1;
        self.counts.bytes_written += len as u64;
        Ok(&mut self.data[range])
    }

    /// Writes of `N` bytes each, in order, counted as one [`Volatile::write`] each (its
    /// time included) but added to the counters once: the same bytes and counters as the
    /// writes one by one. Stops at the first write out of range, with the writes before it
    /// done and counted.
    #[inline]
    pub fn write_each<const N: usize>(
        &mut self,
        writes: impl IntoIterator<Item = (u64, [u8; N])>,
    ) -> Result<(), DeviceError> {
        let mut done = 0u64;
        let mut result = Ok(());
        for (addr, bytes) in writes {
            match self.range(addr, N) {
                Ok(range) => {
                    self.data[range].copy_from_slice(&bytes);
                    done += 1;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.counts.writes += done;
        self.counts.bytes_written += done * N as u64;
        result
    }
}

impl PowerLoss for Volatile {
    fn power_loss(&mut self) {
        if self.kind != VolatileKind::BatterySram {
            self.data.fill(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_accesses_count_as_copies() {
        for mut copying in [Volatile::dram(256), Volatile::battery_sram(256)] {
            let mut in_place = copying.clone();
            let data: Vec<u8> = (0..100).collect();
            copying.write(50, &data).unwrap();
            in_place.write_in_place(50, data.len()).unwrap().copy_from_slice(&data);
            assert_eq!(copying.stats(), in_place.stats());
            let mut back = vec![0u8; 120];
            copying.read(40, &mut back).unwrap();
            assert_eq!(in_place.read_in_place(40, 120).unwrap(), &back[..]);
            assert_eq!(copying.stats(), in_place.stats());
            assert!(copying.stats().bytes_written == 100 && copying.stats().bytes_read == 120);
            assert!(matches!(in_place.read_in_place(200, 57), Err(DeviceError::OutOfRange { .. })));
            assert!(matches!(in_place.write_in_place(u64::MAX, 1), Err(DeviceError::OutOfRange { .. })));
            assert_eq!(copying.stats(), in_place.stats(), "a refused access counts nothing");
        }
    }

    #[test]
    fn writes_counted_at_once_are_the_writes_one_by_one() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(13);
        for mut one_by_one in [Volatile::dram(64), Volatile::battery_sram(64)] {
            let mut at_once = one_by_one.clone();
            let mut refused = 0;
            for _ in 0..2_000 {
                // Runs of 0-5 writes of 4 bytes, now and then one out of range (addresses up
                // to 64: a write from 61 on does not fit).
                let writes: Vec<(u64, [u8; 4])> =
                    (0..rng.gen_range(0..6)).map(|_| (rng.gen_range(0..65), rng.gen())).collect();
                let want = writes.iter().try_for_each(|(addr, bytes)| one_by_one.write(*addr, bytes).map(|_| ()));
                let got = at_once.write_each(writes.iter().copied());
                assert_eq!(got.is_err(), want.is_err());
                refused += usize::from(got.is_err());
                assert_eq!(at_once.stats(), one_by_one.stats());
                assert_eq!(at_once.read_in_place(0, 64).unwrap(), one_by_one.read_in_place(0, 64).unwrap());
            }
            assert!(refused > 100, "{refused} runs stopped out of range");
        }
    }

    #[test]
    fn time_and_energy_from_the_counts_are_their_sums_access_by_access() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let odd = VolatileParams { read_ns: 7, write_ns: 11, read_pj_per_bit: 3, write_pj_per_bit: 5 };
        for mut memory in [Volatile::dram(64), Volatile::battery_sram(64), Volatile::new(VolatileKind::Sram, odd, 64)] {
            // The counters as the accesses used to add them, one by one.
            let p = memory.params;
            let mut want = VolatileStats::default();
            for _ in 0..3_000 {
                let (addr, len) = (rng.gen_range(0..70), rng.gen_range(0..20usize));
                let mut buf = vec![0u8; len];
                match rng.gen_range(0..4) {
                    0 if memory.read(addr, &mut buf).is_ok() => {
                        want.reads += 1;
                        want.bytes_read += len as u64;
                        want.energy_pj += len as u64 * 8 * p.read_pj_per_bit;
                        want.time_ns += p.read_ns;
                    }
                    1 if memory.write(addr, &buf).is_ok() => {
                        want.writes += 1;
                        want.bytes_written += len as u64;
                        want.energy_pj += len as u64 * 8 * p.write_pj_per_bit;
                        want.time_ns += p.write_ns;
                    }
                    2 => {
                        let writes: Vec<(u64, [u8; 2])> = (0..len % 4).map(|i| (addr + i as u64, [1, 2])).collect();
                        let fit = writes.iter().take_while(|(a, _)| a + 2 <= 64).count() as u64;
                        let _ = memory.write_each(writes);
                        want.writes += fit;
                        want.bytes_written += 2 * fit;
                        want.energy_pj += 2 * fit * 8 * p.write_pj_per_bit;
                        want.time_ns += fit * p.write_ns;
                    }
                    _ => {}
                }
                assert_eq!(memory.stats(), want);
            }
            assert!(want.reads > 300 && want.writes > 600, "{want:?}");
        }
    }
}
