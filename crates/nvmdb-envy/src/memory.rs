//! eNVy as an `nvmdb_memory::Memory`: any structure written against the trait runs on
//! it unchanged.

use nvmdb_memory::{Heap, Memory, MemoryError, MemoryReport, Scalar};

use crate::engine::Envy;

/// An eNVy system with a simulated heap over its address space. Operations run back to
/// back in simulated time: each starts when the previous one's latency has passed. The
/// heap is a volatile allocator, like any process's; the bytes it hands out are eNVy's.
/// A clone is another memory in the same state, system and heap.
#[derive(Debug, Clone)]
pub struct EnvyMemory {
    envy: Envy,
    heap: Heap,
}

impl EnvyMemory {
    /// Wraps a system; the heap spans its whole address space.
    pub fn new(envy: Envy) -> EnvyMemory {
        let heap = Heap::new(envy.config().logical_bytes());
        EnvyMemory { envy, heap }
    }

    /// The system.
    pub fn envy(&self) -> &Envy {
        &self.envy
    }

    /// The system, mutably.
    pub fn envy_mut(&mut self) -> &mut Envy {
        &mut self.envy
    }

    /// Starts the next operation once one of `ns` has passed: operations run back to back.
    #[inline]
    fn after(&mut self, ns: u64) {
        let t = self.envy.now_ns() + ns;
        self.envy.advance_to(t);
    }

    /// Unwraps the system.
    pub fn into_envy(self) -> Envy {
        self.envy
    }
}

impl Memory for EnvyMemory {
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        let ns = self.envy.read(addr, buf).unwrap_or_else(|e| panic!("eNVy read failed: {e}"));
        self.after(ns);
    }
    /// As [`Memory::read_bytes`] of the value's bytes, which counts the same
    /// ([`Envy::read_scalar`]).
    #[inline]
    fn load<T: Scalar>(&mut self, addr: u64) -> T {
        let (value, ns) = self.envy.read_scalar(addr).unwrap_or_else(|e| panic!("eNVy read failed: {e}"));
        self.after(ns);
        value
    }
    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        let ns = self.envy.write(addr, data).unwrap_or_else(|e| panic!("eNVy write failed: {e}"));
        self.after(ns);
    }
    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        self.heap.alloc(size, align)
    }
    fn free(&mut self, addr: u64, size: u64) {
        self.heap.free(addr, size);
    }
    fn reset_stats(&mut self) {
        self.envy.reset_stats();
    }
    fn report(&self) -> MemoryReport {
        MemoryReport { kind: "envy".into(), ..MemoryReport::default() }
    }
}
