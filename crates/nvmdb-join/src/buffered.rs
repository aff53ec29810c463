//! PCM used as a disk (the thesis, seed 000, Section 5.2.1): data lives in PCM storage and
//! is used through a DRAM buffer pool. A page is copied from PCM into DRAM when first
//! touched and copied back (a differential PCM write) when a dirty page is evicted or
//! flushed. Compare [`nvmdb_memory::CachedMemory`], PCM as main memory, where the CPU
//! reads and writes PCM lines directly.

use nvmdb_device::volatile::VolatileStats;
use nvmdb_device::{index, Pcm, Volatile};
use nvmdb_memory::{Heap, Memory, MemoryError, MemoryReport, Scalar};

/// Bytes per buffer-pool page.
pub const PAGE_BYTES: u64 = 4096;

/// Bytes per PCM line: a page is 64 lines.
const LINE_BYTES: u64 = nvmdb_device::pcm::LINE_BYTES as u64;

/// No frame: the end of the recency list, or a page not resident.
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Frame {
    page: u64,
    /// Bit `i` set when line `i` of the page has been written since the page was read
    /// from PCM or last written back: the other lines still hold PCM's bytes.
    dirty_lines: u64,
    /// The next less recently used frame, or [`NONE`].
    older: u32,
    /// The next more recently used frame, or [`NONE`].
    newer: u32,
}

/// A DRAM buffer pool (LRU, write-back) over PCM in storage mode. A clone is the pool in
/// the same state: its pages and their recency, the heap, the devices and their counters.
#[derive(Debug, Clone)]
pub struct BufferedMemory {
    pcm: Pcm,
    dram: Volatile,
    heap: Heap,
    frames: Vec<Frame>,
    capacity_frames: usize,
    /// Resident page → frame ([`NONE`] when not resident), indexed by page; grown to the
    /// highest page touched.
    page_table: Vec<u32>,
    /// The least and the most recently used frames ([`NONE`] while the pool is empty).
    lru: u32,
    mru: u32,
    dram_at_reset: VolatileStats,
}

impl BufferedMemory {
    /// A pool of `pool_bytes` (a multiple of [`PAGE_BYTES`]) over `pcm`.
    pub fn new(pcm: Pcm, pool_bytes: u64) -> BufferedMemory {
        assert!(pool_bytes >= PAGE_BYTES && pool_bytes.is_multiple_of(PAGE_BYTES), "pool of whole pages");
        let heap = Heap::new(pcm.config().capacity_bytes);
        let capacity_frames = index(pool_bytes / PAGE_BYTES);
        assert!(capacity_frames < NONE as usize, "a pool of fewer than 2^32 - 1 pages");
        BufferedMemory {
            pcm,
            dram: Volatile::dram(index(pool_bytes)),
            heap,
            frames: Vec::with_capacity(capacity_frames),
            capacity_frames,
            page_table: Vec::new(),
            lru: NONE,
            mru: NONE,
            dram_at_reset: VolatileStats::default(),
        }
    }

    /// DRAM traffic since the last [`Memory::reset_stats`].
    pub fn dram_stats(&self) -> VolatileStats {
        self.dram.stats().since(&self.dram_at_reset)
    }

    /// Writes the page back: a whole-page storage write, in which only the lines written
    /// since the page was read are compared with PCM's (the others hold its bytes).
    /// The page goes from the frame's DRAM to PCM without a copy between them: a DRAM
    /// read of the page, as a copy out would count it.
    fn write_back(&mut self, frame: usize) {
        let Frame { page, dirty_lines, .. } = self.frames[frame];
        let bytes =
            self.dram.read_in_place(frame as u64 * PAGE_BYTES, index(PAGE_BYTES)).expect("frame inside the pool");
        self.pcm.storage_write_lines(page * PAGE_BYTES, bytes, dirty_lines).expect("page inside the device");
        self.frames[frame].dirty_lines = 0;
    }

    /// Takes `frame` out of the recency list.
    fn unlink(&mut self, frame: u32) {
        let Frame { older, newer, .. } = self.frames[frame as usize];
        match older {
            NONE => self.lru = newer,
            o => self.frames[o as usize].newer = newer,
        }
        match newer {
            NONE => self.mru = older,
            n => self.frames[n as usize].older = older,
        }
    }

    /// Puts `frame` at the most recently used end of the recency list.
    fn push_mru(&mut self, frame: u32) {
        self.frames[frame as usize].older = self.mru;
        self.frames[frame as usize].newer = NONE;
        match self.mru {
            NONE => self.lru = frame,
            m => self.frames[m as usize].newer = frame,
        }
        self.mru = frame;
    }

    /// Makes `page` resident, the most recently used, and returns its frame: the most
    /// recently used frame, when it holds `page`, without the page table or the list.
    #[inline]
    fn frame_for(&mut self, page: u64) -> usize {
        match self.frames.get(self.mru as usize) {
            Some(frame) if frame.page == page => self.mru as usize,
            _ => self.frame_of(page),
        }
    }

    /// Makes `page` resident, the most recently used, and returns its frame.
    fn frame_of(&mut self, page: u64) -> usize {
        let slot = index(page);
        if let Some(&frame) = self.page_table.get(slot).filter(|&&f| f != NONE) {
            if frame != self.mru {
                self.unlink(frame);
                self.push_mru(frame);
            }
            return frame as usize;
        }
        let frame = if self.frames.len() < self.capacity_frames {
            self.frames.push(Frame { page, dirty_lines: 0, older: NONE, newer: NONE });
            u32::try_from(self.frames.len() - 1).expect("fewer frames than NONE")
        } else {
            let victim = self.lru;
            assert_ne!(victim, NONE, "a full pool has pages");
            self.unlink(victim);
            if self.frames[victim as usize].dirty_lines != 0 {
                self.write_back(victim as usize);
            }
            self.page_table[index(self.frames[victim as usize].page)] = NONE;
            victim
        };
        // Read from PCM straight into the frame: a DRAM write of the page.
        let bytes =
            self.dram.write_in_place(u64::from(frame) * PAGE_BYTES, index(PAGE_BYTES)).expect("frame inside the pool");
        self.pcm.storage_read(page * PAGE_BYTES, bytes).expect("page inside the device");
        self.frames[frame as usize] = Frame { page, dirty_lines: 0, older: NONE, newer: NONE };
        if slot >= self.page_table.len() {
            self.page_table.resize(slot + 1, NONE);
        }
        self.page_table[slot] = frame;
        self.push_mru(frame);
        frame as usize
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
            let frame = self.frame_for(page);
            if write {
                self.mark_lines(frame, offset, n);
            }
            f(&mut self.dram, frame as u64 * PAGE_BYTES + offset, done..done + n);
            done += n;
        }
    }

    /// Marks the lines of `frame` that the `n` bytes (n ≥ 1) at `offset` span written.
    #[inline]
    fn mark_lines(&mut self, frame: usize, offset: u64, n: usize) {
        let (first, last) = (offset / LINE_BYTES, (offset + n as u64 - 1) / LINE_BYTES);
        self.frames[frame].dirty_lines |= (u64::MAX >> (63 - (last - first))) << first;
    }
}

/// `dst.copy_from_slice(src)` (of equal lengths), the copies of the scalar widths, 1, 2, 4
/// and 8 bytes, of fixed size and so inlined, not calls to the library's copy.
#[inline]
fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    fn fixed<const N: usize>(dst: &mut [u8], src: &[u8]) {
        let dst: &mut [u8; N] = dst.try_into().expect("N bytes");
        *dst = src.try_into().expect("N bytes");
    }
    match dst.len() {
        1 => fixed::<1>(dst, src),
        2 => fixed::<2>(dst, src),
        4 => fixed::<4>(dst, src),
        8 => fixed::<8>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

impl Memory for BufferedMemory {
    /// Each page's bytes read from its frame where they lie: counted as a DRAM read of
    /// them (a copy out) counts.
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        self.for_pages(addr, buf.len(), false, |dram, at, range| {
            let n = range.len();
            copy_bytes(&mut buf[range], dram.read_in_place(at, n).expect("frame inside the pool"));
        });
    }

    /// Each page's bytes written into its frame where they lie: counted as a DRAM write
    /// of them (a copy in) counts.
    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        self.for_pages(addr, data.len(), true, |dram, at, range| {
            copy_bytes(dram.write_in_place(at, range.len()).expect("frame inside the pool"), &data[range]);
        });
    }

    /// As [`Memory::read_bytes`] of the value's bytes, which counts the same: a value
    /// within one page read from its frame where it lies, as a copy of fixed size.
    #[inline]
    fn load<T: Scalar>(&mut self, addr: u64) -> T {
        let offset = addr % PAGE_BYTES;
        if offset + T::SIZE as u64 > PAGE_BYTES {
            let mut b = [0u8; 8];
            self.read_bytes(addr, &mut b[..T::SIZE]);
            return T::from_le(&b[..T::SIZE]);
        }
        let frame = self.frame_for(addr / PAGE_BYTES);
        T::from_le(self.dram.read_in_place(frame as u64 * PAGE_BYTES + offset, T::SIZE).expect("frame inside the pool"))
    }

    /// As [`Memory::write_bytes`] of the value's bytes, which counts the same: a value
    /// within one page written into its frame where it lies.
    #[inline]
    fn store<T: Scalar>(&mut self, addr: u64, value: T) {
        let offset = addr % PAGE_BYTES;
        if offset + T::SIZE as u64 > PAGE_BYTES {
            let mut b = [0u8; 8];
            value.to_le(&mut b[..T::SIZE]);
            self.write_bytes(addr, &b[..T::SIZE]);
            return;
        }
        let frame = self.frame_for(addr / PAGE_BYTES);
        self.mark_lines(frame, offset, T::SIZE);
        value.to_le(
            self.dram.write_in_place(frame as u64 * PAGE_BYTES + offset, T::SIZE).expect("frame inside the pool"),
        );
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
            if self.frames[frame].dirty_lines != 0 {
                self.write_back(frame);
            }
        }
    }

    fn reset_stats(&mut self) {
        self.pcm.reset_stats();
        self.dram_at_reset = self.dram.stats();
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
    use proptest::prelude::*;

    /// The pool as plainly as it can be written: frames in a list from least to most
    /// recently used, found by a scan, one page copied through a fresh buffer.
    struct Reference {
        pcm: Pcm,
        dram: Volatile,
        /// `(page, dirty, frame)`, least recently used first.
        recency: Vec<(u64, bool, u64)>,
        capacity_frames: u64,
    }

    impl Reference {
        fn touch(&mut self, page: u64, write: bool) -> u64 {
            let (frame, dirty) = if let Some(i) = self.recency.iter().position(|&(p, _, _)| p == page) {
                let (_, dirty, frame) = self.recency.remove(i);
                (frame, dirty)
            } else {
                let frame = if (self.recency.len() as u64) < self.capacity_frames {
                    self.recency.len() as u64
                } else {
                    let (victim, dirty, frame) = self.recency.remove(0);
                    if dirty {
                        let mut buf = vec![0u8; index(PAGE_BYTES)];
                        self.dram.read(frame * PAGE_BYTES, &mut buf).unwrap();
                        self.pcm.storage_write(victim * PAGE_BYTES, &buf).unwrap();
                    }
                    frame
                };
                let mut buf = vec![0u8; index(PAGE_BYTES)];
                self.pcm.storage_read(page * PAGE_BYTES, &mut buf).unwrap();
                self.dram.write(frame * PAGE_BYTES, &buf).unwrap();
                (frame, false)
            };
            self.recency.push((page, dirty || write, frame));
            frame
        }

        fn access(&mut self, addr: u64, data: &mut [u8], write: bool) {
            let mut done = 0;
            while done < data.len() {
                let at = addr + done as u64;
                let n = index(PAGE_BYTES - at % PAGE_BYTES).min(data.len() - done);
                let frame = self.touch(at / PAGE_BYTES, write);
                let dram_addr = frame * PAGE_BYTES + at % PAGE_BYTES;
                if write {
                    self.dram.write(dram_addr, &data[done..done + n]).unwrap();
                } else {
                    self.dram.read(dram_addr, &mut data[done..done + n]).unwrap();
                }
                done += n;
            }
        }

        fn flush_all(&mut self) {
            let mut dirty: Vec<(u64, u64)> =
                self.recency.iter().filter(|&&(_, d, _)| d).map(|&(p, _, f)| (f, p)).collect();
            dirty.sort_unstable();
            for (frame, page) in dirty {
                let mut buf = vec![0u8; index(PAGE_BYTES)];
                self.dram.read(frame * PAGE_BYTES, &mut buf).unwrap();
                self.pcm.storage_write(page * PAGE_BYTES, &buf).unwrap();
            }
            for entry in &mut self.recency {
                entry.1 = false;
            }
        }
    }

    proptest! {
        #[test]
        fn the_pool_matches_a_plain_lru_model(
            frames in 1u64..6,
            ops in prop::collection::vec((0u64..12 * PAGE_BYTES, 1usize..300, 0u8..7, any::<u8>()), 1..200),
        ) {
            let device = || Pcm::new(PcmConfig::new(1 << 20)).unwrap();
            let mut pool = BufferedMemory::new(device(), frames * PAGE_BYTES);
            let mut reference = Reference {
                pcm: device(),
                dram: Volatile::dram(index(frames * PAGE_BYTES)),
                recency: Vec::new(),
                capacity_frames: frames,
            };
            for (addr, len, op, fill) in ops {
                let len = len.min(index(12 * PAGE_BYTES - addr));
                match op {
                    0 | 1 => {
                        let mut data = vec![fill; len];
                        pool.write_bytes(addr, &data);
                        reference.access(addr, &mut data, true);
                    }
                    2 | 3 => {
                        let (mut got, mut expected) = (vec![0u8; len], vec![0u8; len]);
                        pool.read_bytes(addr, &mut got);
                        reference.access(addr, &mut expected, false);
                        prop_assert_eq!(got, expected);
                    }
                    4 => {
                        pool.flush_all();
                        reference.flush_all();
                    }
                    // A scalar of 1, 2, 4 or 8 bytes (within a page or across two) stored,
                    // or loaded, counted as the bytes written or read.
                    op => {
                        let width = 1usize << (len % 4);
                        let addr = addr.min(12 * PAGE_BYTES - width as u64);
                        let mut expected = vec![fill; width];
                        let got = if op == 5 {
                            match width {
                                1 => pool.store::<u8>(addr, fill),
                                2 => pool.store::<u16>(addr, u16::from_le_bytes([fill; 2])),
                                4 => pool.store::<u32>(addr, u32::from_le_bytes([fill; 4])),
                                _ => pool.store::<u64>(addr, u64::from_le_bytes([fill; 8])),
                            }
                            reference.access(addr, &mut expected, true);
                            expected.clone()
                        } else {
                            let got = match width {
                                1 => u64::from(pool.load::<u8>(addr)),
                                2 => u64::from(pool.load::<u16>(addr)),
                                4 => u64::from(pool.load::<u32>(addr)),
                                _ => pool.load::<u64>(addr),
                            };
                            reference.access(addr, &mut expected, false);
                            got.to_le_bytes()[..width].to_vec()
                        };
                        prop_assert_eq!(got, expected);
                    }
                }
                prop_assert_eq!(pool.pcm.stats(), reference.pcm.stats());
                prop_assert_eq!(pool.dram.stats(), reference.dram.stats());
            }
        }
    }

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
