//! A memory that passes on the CPU time model's hints selectively: for isolating what
//! the algorithms' declared instructions and independent accesses contribute to time.

use crate::{Memory, MemoryError, MemoryReport, Scalar};

/// Forwards every access to `inner`, but scales the instructions declared with
/// [`Memory::compute`] by `instruction_factor` (0 drops them) and passes the groups of
/// independent accesses on only when `overlap` is set. Loads, stores and every counter
/// but the CPU time model's are those of `inner` unchanged.
#[derive(Debug)]
pub struct HintFilter<M> {
    /// The memory the accesses go to.
    pub inner: M,
    /// What each declared instruction count is multiplied by.
    pub instruction_factor: u64,
    /// Whether the groups of independent accesses reach `inner`.
    pub overlap: bool,
}

impl<M> HintFilter<M> {
    /// Every hint passed on unchanged.
    pub fn new(inner: M) -> Self {
        HintFilter { inner, instruction_factor: 1, overlap: true }
    }
}

impl<M: Memory> Memory for HintFilter<M> {
    #[inline]
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        self.inner.read_bytes(addr, buf);
    }
    #[inline]
    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        self.inner.write_bytes(addr, data);
    }
    #[inline]
    fn load<T: Scalar>(&mut self, addr: u64) -> T {
        self.inner.load(addr)
    }
    #[inline]
    fn store<T: Scalar>(&mut self, addr: u64, value: T) {
        self.inner.store(addr, value);
    }
    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        self.inner.alloc(size, align)
    }
    fn free(&mut self, addr: u64, size: u64) {
        self.inner.free(addr, size);
    }
    fn flush_all(&mut self) {
        self.inner.flush_all();
    }
    fn reset_stats(&mut self) {
        self.inner.reset_stats();
    }
    fn report(&self) -> MemoryReport {
        self.inner.report()
    }
    #[inline]
    fn compute(&mut self, instructions: u64) {
        if self.instruction_factor != 0 {
            self.inner.compute(instructions * self.instruction_factor);
        }
    }
    #[inline]
    fn begin_independent(&mut self) {
        if self.overlap {
            self.inner.begin_independent();
        }
    }
    #[inline]
    fn end_independent(&mut self) {
        if self.overlap {
            self.inner.end_independent();
        }
    }
}
