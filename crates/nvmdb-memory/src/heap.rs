//! A deterministic simulated heap: a bump pointer plus exact-size free lists.
//!
//! Address 0 is never handed out, so it can serve as a null pointer.

use std::collections::BTreeMap;

use crate::MemoryError;

/// The first address handed out.
pub const HEAP_BASE: u64 = 64;

/// Simulated heap state.
#[derive(Debug, Clone)]
pub struct Heap {
    next: u64,
    capacity: u64,
    free: BTreeMap<u64, Vec<u64>>,
    live_bytes: u64,
}

impl Heap {
    /// A heap over `[HEAP_BASE, capacity)`.
    pub fn new(capacity: u64) -> Heap {
        Heap { next: HEAP_BASE, capacity, free: BTreeMap::new(), live_bytes: 0 }
    }

    /// Allocates `size` bytes (rounded up to 8) aligned to `align`. Reuses a freed block
    /// of the same size first, newest first.
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        assert!(align.is_power_of_two(), "alignment {align} is not a power of two");
        let size = size.max(1).next_multiple_of(8);
        if let Some(list) = self.free.get_mut(&size) {
            if let Some(pos) = list.iter().rposition(|a| a % align == 0) {
                self.live_bytes += size;
                return Ok(list.swap_remove(pos));
            }
        }
        let addr = self.next.next_multiple_of(align);
        let end = addr.checked_add(size).filter(|&e| e <= self.capacity);
        let Some(end) = end else {
            return Err(MemoryError::OutOfMemory { requested: size, capacity: self.capacity });
        };
        self.next = end;
        self.live_bytes += size;
        Ok(addr)
    }

    /// Frees a block allocated with `size`.
    pub fn free(&mut self, addr: u64, size: u64) {
        let size = size.max(1).next_multiple_of(8);
        assert!(addr >= HEAP_BASE && addr + size <= self.next, "free of {addr:#x}+{size} outside the heap");
        self.live_bytes -= size;
        self.free.entry(size).or_default().push(addr);
    }

    /// One past the highest address ever allocated.
    pub fn high_water(&self) -> u64 {
        self.next
    }

    /// Bytes currently allocated.
    pub fn live_bytes(&self) -> u64 {
        self.live_bytes
    }
}
