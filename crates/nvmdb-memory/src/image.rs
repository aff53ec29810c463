//! A byte image of memory in 1 MiB segments, allocated as the heap grows, so a large
//! image never needs one huge reallocation.

use nvmdb_device::index;

use crate::Scalar;

const SEGMENT_BITS: u32 = 20;
const SEGMENT_LEN: usize = 1 << SEGMENT_BITS;
const SEGMENT_BYTES: u64 = 1 << SEGMENT_BITS;

/// Segmented byte storage addressed from 0.
#[derive(Debug, Default, Clone)]
pub struct Image {
    segments: Vec<Box<[u8]>>,
}

impl Image {
    /// Makes `[0, end)` addressable (new bytes are zero).
    pub fn ensure(&mut self, end: u64) {
        let needed = index(end.div_ceil(SEGMENT_BYTES));
        while self.segments.len() < needed {
            self.segments.push(vec![0u8; SEGMENT_LEN].into_boxed_slice());
        }
    }

    /// Zeroes `[end, len)` and drops the segments wholly past `end`: the image as it was
    /// when `end` was last made addressable, if nothing past `end` was written then.
    pub fn rewind(&mut self, end: u64) {
        self.segments.truncate(index(end.div_ceil(SEGMENT_BYTES)));
        let kept = self.len();
        if let Some(last) = self.segments.last_mut() {
            last[index(end + SEGMENT_BYTES - kept)..].fill(0);
        }
    }

    /// Addressable bytes.
    pub fn len(&self) -> u64 {
        self.segments.len() as u64 * SEGMENT_BYTES
    }

    /// True when nothing is addressable.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Copies bytes out. Panics outside `[0, len)`: that is an access to unallocated memory.
    #[inline]
    pub fn read(&self, addr: u64, buf: &mut [u8]) {
        let offset = index(addr & (SEGMENT_BYTES - 1));
        let segment = &self.segments[index(addr >> SEGMENT_BITS)];
        if offset + buf.len() <= SEGMENT_LEN {
            buf.copy_from_slice(&segment[offset..offset + buf.len()]);
        } else {
            let first = SEGMENT_LEN - offset;
            buf[..first].copy_from_slice(&segment[offset..]);
            self.read(addr + first as u64, &mut buf[first..]);
        }
    }

    /// The scalar at `addr`, copied with its length known where the copy is made, so that
    /// it compiles to one host load rather than a call of the C library's `memcpy`.
    /// Panics outside `[0, len)`.
    #[inline]
    pub fn read_scalar<T: Scalar>(&self, addr: u64) -> T {
        let offset = index(addr & (SEGMENT_BYTES - 1));
        match self.segments[index(addr >> SEGMENT_BITS)].get(offset..offset + T::SIZE) {
            Some(bytes) => T::from_le(bytes),
            None => {
                let mut bytes = [0u8; 8];
                self.read(addr, &mut bytes[..T::SIZE]);
                T::from_le(&bytes[..T::SIZE])
            }
        }
    }

    /// Stores the scalar at `addr`, as [`Image::read_scalar`] loads it. Panics outside
    /// `[0, len)`.
    #[inline]
    pub fn write_scalar<T: Scalar>(&mut self, addr: u64, value: T) {
        let offset = index(addr & (SEGMENT_BYTES - 1));
        match self.segments[index(addr >> SEGMENT_BITS)].get_mut(offset..offset + T::SIZE) {
            Some(bytes) => value.to_le(bytes),
            None => {
                let mut bytes = [0u8; 8];
                value.to_le(&mut bytes[..T::SIZE]);
                self.write(addr, &bytes[..T::SIZE]);
            }
        }
    }

    /// Copies bytes in. Panics outside `[0, len)`.
    #[inline]
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        let offset = index(addr & (SEGMENT_BYTES - 1));
        let segment = &mut self.segments[index(addr >> SEGMENT_BITS)];
        if offset + data.len() <= SEGMENT_LEN {
            segment[offset..offset + data.len()].copy_from_slice(data);
        } else {
            let first = SEGMENT_LEN - offset;
            segment[offset..].copy_from_slice(&data[..first]);
            self.write(addr + first as u64, &data[first..]);
        }
    }

    /// Asks the host to bring the byte at `addr` into its caches, without waiting for
    /// it (a prefetch); does nothing outside `[0, len)`.
    #[inline]
    pub fn prefetch(&self, addr: u64) {
        let offset = index(addr & (SEGMENT_BYTES - 1));
        if let Some(byte) = self.segments.get(index(addr >> SEGMENT_BITS)).and_then(|s| s.get(offset)) {
            mem_prefetch::prefetch_read_data::<u8, 3>(byte);
        }
    }

    /// A 64 B line as words.
    #[inline]
    pub fn line_words(&self, line: u64) -> [u64; 8] {
        let mut bytes = [0u8; 64];
        self.read(line * 64, &mut bytes);
        nvmdb_device::pcm::bytes_to_words(&bytes)
    }
}
