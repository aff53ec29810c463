//! Plain RAM with no accounting: the speed baseline.

use crate::heap::Heap;
use crate::image::Image;
use crate::{Memory, MemoryError, MemoryReport, Scalar};

/// Unaccounted memory.
#[derive(Debug)]
pub struct NativeMemory {
    image: Image,
    heap: Heap,
}

impl NativeMemory {
    /// A memory of up to `capacity_bytes`.
    pub fn new(capacity_bytes: u64) -> NativeMemory {
        NativeMemory { image: Image::default(), heap: Heap::new(capacity_bytes) }
    }
}

impl Memory for NativeMemory {
    #[inline]
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        self.image.read(addr, buf);
    }
    #[inline]
    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        self.image.write(addr, data);
    }
    /// As the provided method, with the copy's length known where it is made
    /// ([`Image::read_scalar`], as [`CachedMemory`](crate::CachedMemory)'s).
    #[inline]
    fn load<T: Scalar>(&mut self, addr: u64) -> T {
        self.image.read_scalar(addr)
    }
    /// As the provided method, with the copy's length known where it is made.
    #[inline]
    fn store<T: Scalar>(&mut self, addr: u64, value: T) {
        self.image.write_scalar(addr, value);
    }
    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        let addr = self.heap.alloc(size, align)?;
        self.image.ensure(self.heap.high_water());
        Ok(addr)
    }
    fn free(&mut self, addr: u64, size: u64) {
        self.heap.free(addr, size);
    }
    fn report(&self) -> MemoryReport {
        MemoryReport { kind: "native".into(), ..MemoryReport::default() }
    }
}
