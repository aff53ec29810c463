//! PCM used as a disk (the thesis, seed 000, Section 5.2.1): data lives in PCM storage and
//! is used through a DRAM buffer pool. A page is copied from PCM into DRAM when first
//! touched and copied back (a differential PCM write) when a dirty page is evicted or
//! flushed. Compare [`nvmdb_memory::CachedMemory`], PCM as main memory, where the CPU
//! reads and writes PCM lines directly.

use std::collections::{BTreeMap, HashMap};

use nvmdb_device::volatile::VolatileStats;
use nvmdb_device::{index, Pcm, Volatile};
use nvmdb_memory::{Heap, Memory, MemoryError, MemoryReport};

/// Bytes per buffer-pool page.
pub const PAGE_BYTES: u64 = 4096;

#[derive(Debug, Clone, Copy)]
struct Frame {
    page: u64,
    dirty: bool,
    stamp: u64,
}

/// A DRAM buffer pool (LRU, write-back) over PCM in storage mode.
#[derive(Debug)]
pub struct BufferedMemory {
    pcm: Pcm,
    dram: Volatile,
    heap: Heap,
    frames: Vec<Frame>,
    capacity_frames: usize,
    /// Resident page → frame. Only looked up, never iterated, so its order cannot leak.
    page_table: HashMap<u64, usize>,
    /// LRU order: stamp → frame.
    lru: BTreeMap<u64, usize>,
    clock: u64,
    dram_at_reset: VolatileStats,
}

impl BufferedMemory {
    /// A pool of `pool_bytes` (a multiple of [`PAGE_BYTES`]) over `pcm`.
    pub fn new(pcm: Pcm, pool_bytes: u64) -> BufferedMemory {
        assert!(pool_bytes >= PAGE_BYTES && pool_bytes.is_multiple_of(PAGE_BYTES), "pool of whole pages");
        let heap = Heap::new(pcm.config().capacity_bytes);
        let capacity_frames = index(pool_bytes / PAGE_BYTES);
        BufferedMemory {
            pcm,
            dram: Volatile::dram(index(pool_bytes)),
            heap,
            frames: Vec::with_capacity(capacity_frames),
            capacity_frames,
            page_table: HashMap::new(),
            lru: BTreeMap::new(),
            clock: 0,
            dram_at_reset: VolatileStats::default(),
        }
    }

    /// DRAM traffic since the last [`Memory::reset_stats`].
    pub fn dram_stats(&self) -> VolatileStats {
        self.dram.stats().since(&self.dram_at_reset)
    }

    fn write_back(&mut self, frame: usize) {
        let mut buf = vec![0u8; index(PAGE_BYTES)];
        let dram_addr = frame as u64 * PAGE_BYTES;
        self.dram.read(dram_addr, &mut buf).expect("frame inside the pool");
        self.pcm.storage_write(self.frames[frame].page * PAGE_BYTES, &buf).expect("page inside the device");
        self.frames[frame].dirty = false;
    }

    /// Makes `page` resident and returns its frame.
    fn frame_of(&mut self, page: u64) -> usize {
        self.clock += 1;
        if let Some(&frame) = self.page_table.get(&page) {
            let old = std::mem::replace(&mut self.frames[frame].stamp, self.clock);
            self.lru.remove(&old);
            self.lru.insert(self.clock, frame);
            return frame;
        }
        let frame = if self.frames.len() < self.capacity_frames {
            self.frames.push(Frame { page, dirty: false, stamp: 0 });
            self.frames.len() - 1
        } else {
            let (_, victim) = self.lru.pop_first().expect("a full pool has pages");
            if self.frames[victim].dirty {
                self.write_back(victim);
            }
            self.page_table.remove(&self.frames[victim].page);
            victim
        };
        let mut buf = vec![0u8; index(PAGE_BYTES)];
        self.pcm.storage_read(page * PAGE_BYTES, &mut buf).expect("page inside the device");
        self.dram.write(frame as u64 * PAGE_BYTES, &buf).expect("frame inside the pool");
        self.frames[frame] = Frame { page, dirty: false, stamp: self.clock };
        self.page_table.insert(page, frame);
        self.lru.insert(self.clock, frame);
        frame
    }

    /// Calls `f(frame address, range of the caller's buffer)` for each page `[addr, addr + len)` spans.
    fn for_pages(
        &mut self,
        addr: u64,
        len: usize,
        write: bool,
        mut f: impl FnMut(&mut Volatile, u64, std::ops::Range<usize>),
    ) {
        let mut done = 0usize;
        while done < len {
            let at = addr + done as u64;
            let page = at / PAGE_BYTES;
            let offset = at % PAGE_BYTES;
            let n = index(PAGE_BYTES - offset).min(len - done);
            let frame = self.frame_of(page);
            if write {
                self.frames[frame].dirty = true;
            }
            f(&mut self.dram, frame as u64 * PAGE_BYTES + offset, done..done + n);
            done += n;
        }
    }
}

impl Memory for BufferedMemory {
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        self.for_pages(addr, buf.len(), false, |dram, at, range| {
            dram.read(at, &mut buf[range]).expect("frame inside the pool");
        });
    }

    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        self.for_pages(addr, data.len(), true, |dram, at, range| {
            dram.write(at, &data[range]).expect("frame inside the pool");
        });
    }

    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        self.heap.alloc(size, align)
    }

    fn free(&mut self, addr: u64, size: u64) {
        self.heap.free(addr, size);
    }

    /// Writes every dirty page back, in frame order.
    fn flush_all(&mut self) {
        for frame in 0..self.frames.len() {
            if self.frames[frame].dirty {
                self.write_back(frame);
            }
        }
    }

    fn reset_stats(&mut self) {
        self.pcm.reset_stats();
        self.dram_at_reset = *self.dram.stats();
    }

    fn report(&self) -> MemoryReport {
        MemoryReport {
            kind: "pcm-as-disk".into(),
            pcm: *self.pcm.stats(),
            metrics: Some(self.pcm.config().metrics),
            ..MemoryReport::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvmdb_device::PcmConfig;

    #[test]
    fn pages_round_trip_and_write_back_on_eviction() {
        let pcm = Pcm::new(PcmConfig::new(1 << 20)).unwrap();
        let mut mem = BufferedMemory::new(pcm, 2 * PAGE_BYTES);
        let a = mem.alloc(4 * PAGE_BYTES, PAGE_BYTES).unwrap();
        // A write across a page boundary dirties two pages.
        mem.write_bytes(a + PAGE_BYTES - 4, &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(mem.report().pcm.lines_written, 0, "dirty pages stay in DRAM");
        // Touching two other pages evicts both dirty pages: two whole-page write-backs.
        mem.load::<u8>(a + 2 * PAGE_BYTES);
        mem.load::<u8>(a + 3 * PAGE_BYTES);
        let pcm = mem.report().pcm;
        assert_eq!(pcm.lines_written, 2 * 64);
        assert_eq!(pcm.words_written, 2, "only the words holding the 8 bytes changed");
        assert_eq!(pcm.lines_read, 4 * 64);
        let mut back = [0u8; 8];
        mem.read_bytes(a + PAGE_BYTES - 4, &mut back);
        assert_eq!(back, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(mem.dram_stats().bytes_written >= 8);
    }
}
