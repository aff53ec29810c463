//! PCM main memory with no cache: every load reads the device and every store writes it.

use nvmdb_device::Pcm;

use crate::heap::Heap;
use crate::{Memory, MemoryError, MemoryReport};

/// Uncached PCM memory. A load counts one line read per line it overlaps; a store is a
/// differential write of every line it overlaps (the device's byte-range semantics).
#[derive(Debug)]
pub struct FlatMemory {
    pcm: Pcm,
    heap: Heap,
}

impl FlatMemory {
    /// Uncached memory over a PCM device.
    pub fn new(pcm: Pcm) -> FlatMemory {
        let heap = Heap::new(pcm.config().capacity_bytes);
        FlatMemory { pcm, heap }
    }

    /// The device.
    pub fn device(&self) -> &Pcm {
        &self.pcm
    }
}

impl Memory for FlatMemory {
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        if let Err(e) = self.pcm.read_bytes(addr, buf) {
            panic!("simulated memory access outside the device: {e}");
        }
    }
    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        if let Err(e) = self.pcm.write_bytes(addr, data) {
            panic!("simulated memory access outside the device: {e}");
        }
    }
    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        self.heap.alloc(size, align)
    }
    fn free(&mut self, addr: u64, size: u64) {
        self.heap.free(addr, size);
    }
    fn reset_stats(&mut self) {
        self.pcm.reset_stats();
    }
    fn report(&self) -> MemoryReport {
        MemoryReport {
            kind: "flat".into(),
            pcm: *self.pcm.stats(),
            metrics: Some(self.pcm.config().metrics),
            ..MemoryReport::default()
        }
    }
}
