//! Record-ID lists for virtual partitioning, and the chunked append-only byte streams
//! that hold them (and physically partitioned records) in simulated memory.
//!
//! CIDR 2011 (seed 001, Section 3.3) stores each partition's record IDs as deltas of two
//! subsequent IDs in 2-byte integers, with `0xFFFF` announcing that a full ID follows. A
//! full ID here is 32 bits, as two 2-byte units, low half first. The first delta of a
//! list is taken from 0. The thesis (seed 000, Section 4.1.2) stores plain 4-byte IDs.

use nvmdb_device::index;
use nvmdb_memory::{Memory, MemoryError};
use serde::{Deserialize, Serialize};

use crate::instructions;

/// The escape unit: a full 32-bit ID follows in two units.
pub const ESCAPE: u16 = 0xFFFF;

/// How a record-ID list is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdEncoding {
    /// CIDR 2011: 2-byte deltas, `0xFFFF` escaping a full 4-byte ID.
    Delta16,
    /// The thesis: plain 4-byte IDs.
    Plain32,
}

/// Incremental delta encoder of one ascending list.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeltaEncoder {
    previous: u64,
}

impl DeltaEncoder {
    /// Encodes `id` (at least the previous ID, below 2^32) into 1 or 3 units.
    pub fn push(&mut self, id: u64, out: &mut Vec<u16>) {
        assert!(id >= self.previous, "record IDs must ascend within a list");
        let Ok(full) = u32::try_from(id) else { panic!("record ID {id} exceeds 32 bits") };
        match u16::try_from(id - self.previous) {
            Ok(delta) if delta < ESCAPE => out.push(delta),
            _ => out.extend([ESCAPE, (full & 0xFFFF) as u16, (full >> 16) as u16]),
        }
        self.previous = id;
    }
}

/// Incremental decoder: feed units, get IDs.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeltaDecoder {
    previous: u64,
    /// Units of a full ID still to come (0, 2 or 1) and the low half read so far.
    pending: u8,
    low: u64,
}

impl DeltaDecoder {
    /// Consumes one unit; returns the ID it completes, if any.
    pub fn feed(&mut self, unit: u16) -> Option<u64> {
        match self.pending {
            0 if unit == ESCAPE => {
                self.pending = 2;
                None
            }
            0 => {
                self.previous += u64::from(unit);
                Some(self.previous)
            }
            2 => {
                self.low = u64::from(unit);
                self.pending = 1;
                None
            }
            _ => {
                self.pending = 0;
                self.previous = self.low | u64::from(unit) << 16;
                Some(self.previous)
            }
        }
    }

    /// True when no escape sequence is half read.
    pub fn is_complete(&self) -> bool {
        self.pending == 0
    }
}

/// Encodes an ascending list of IDs.
pub fn encode(ids: &[u64]) -> Vec<u16> {
    let mut encoder = DeltaEncoder::default();
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        encoder.push(id, &mut out);
    }
    out
}

/// Decodes units produced by [`encode`].
pub fn decode(units: &[u16]) -> Vec<u64> {
    let mut decoder = DeltaDecoder::default();
    let ids = units.iter().filter_map(|&u| decoder.feed(u)).collect();
    assert!(decoder.is_complete(), "truncated escape sequence");
    ids
}

/// Bytes per chunk of a [`ChunkedStream`].
pub const CHUNK_BYTES: u64 = 4096;

/// An append-only sequence of fixed-size items in simulated memory, kept in chunks of
/// [`CHUNK_BYTES`] allocated on demand, so a partition need not know its size in
/// advance. The chunk directory lives in CPU registers/variables and is not simulated:
/// it is a few words per 4 KB of data.
#[derive(Debug, Clone, Default)]
pub struct ChunkedStream {
    item_bytes: u64,
    /// Items per chunk, `CHUNK_BYTES / item_bytes`: kept, not divided out at every address.
    per_chunk: u64,
    chunks: Vec<u64>,
    items: u64,
}

impl ChunkedStream {
    /// An empty stream of items of `item_bytes` (at most [`CHUNK_BYTES`]).
    pub fn new(item_bytes: u64) -> ChunkedStream {
        assert!((1..=CHUNK_BYTES).contains(&item_bytes), "item of {item_bytes} bytes does not fit a chunk");
        ChunkedStream { item_bytes, per_chunk: CHUNK_BYTES / item_bytes, chunks: Vec::new(), items: 0 }
    }

    /// Items appended.
    pub fn len(&self) -> u64 {
        self.items
    }

    /// True when nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Address of item `i`.
    pub fn addr(&self, i: u64) -> u64 {
        self.chunks[index(i / self.per_chunk)] + (i % self.per_chunk) * self.item_bytes
    }

    /// Reserves the next item and returns its address.
    pub fn push<M: Memory>(&mut self, mem: &mut M) -> Result<u64, MemoryError> {
        if self.items == self.chunks.len() as u64 * self.per_chunk {
            self.chunks.push(mem.alloc(self.per_chunk * self.item_bytes, 64)?);
        }
        self.items += 1;
        Ok(self.addr(self.items - 1))
    }

    /// Frees every chunk.
    pub fn free<M: Memory>(self, mem: &mut M) {
        let bytes = self.per_chunk * self.item_bytes;
        for chunk in self.chunks {
            mem.free(chunk, bytes);
        }
    }
}

/// One partition's record-ID list in simulated memory.
#[derive(Debug, Clone)]
pub struct IdList {
    encoding: IdEncoding,
    stream: ChunkedStream,
    encoder: DeltaEncoder,
    ids: u64,
    units: Vec<u16>,
}

impl IdList {
    /// An empty list.
    pub fn new(encoding: IdEncoding) -> IdList {
        let item_bytes = match encoding {
            IdEncoding::Delta16 => 2,
            IdEncoding::Plain32 => 4,
        };
        IdList {
            encoding,
            stream: ChunkedStream::new(item_bytes),
            encoder: DeltaEncoder::default(),
            ids: 0,
            units: Vec::new(),
        }
    }

    /// IDs appended.
    pub fn len(&self) -> u64 {
        self.ids
    }

    /// True when no ID was appended.
    pub fn is_empty(&self) -> bool {
        self.ids == 0
    }

    /// Bytes the list occupies in memory.
    pub fn bytes(&self) -> u64 {
        self.stream.len() * self.stream.item_bytes
    }

    /// Appends an ID (ascending within the list).
    pub fn push<M: Memory>(&mut self, mem: &mut M, id: u64) -> Result<(), MemoryError> {
        self.ids += 1;
        match self.encoding {
            IdEncoding::Delta16 => {
                self.units.clear();
                self.encoder.push(id, &mut self.units);
                for i in 0..self.units.len() {
                    mem.compute(instructions::APPEND + instructions::DELTA);
                    let addr = self.stream.push(mem)?;
                    mem.store::<u16>(addr, self.units[i]);
                }
            }
            IdEncoding::Plain32 => {
                let id = u32::try_from(id).expect("record IDs fit 32 bits");
                mem.compute(instructions::APPEND);
                let addr = self.stream.push(mem)?;
                mem.store::<u32>(addr, id);
            }
        }
        Ok(())
    }

    /// Reads the IDs back from memory, in order, calling `f` on each; the first error `f`
    /// returns ends the reading.
    pub fn for_each<M: Memory, E>(
        &self,
        mem: &mut M,
        mut f: impl FnMut(&mut M, u64) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut decoder = DeltaDecoder::default();
        for i in 0..self.stream.len() {
            let addr = self.stream.addr(i);
            mem.compute(instructions::LOOP);
            match self.encoding {
                IdEncoding::Delta16 => {
                    mem.compute(instructions::DELTA);
                    if let Some(id) = decoder.feed(mem.load::<u16>(addr)) {
                        f(mem, id)?;
                    }
                }
                IdEncoding::Plain32 => {
                    let id = u64::from(mem.load::<u32>(addr));
                    f(mem, id)?;
                }
            }
        }
        assert!(decoder.is_complete(), "truncated escape sequence in an ID list");
        Ok(())
    }

    /// Frees the list's memory.
    pub fn free<M: Memory>(self, mem: &mut M) {
        self.stream.free(mem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvmdb_memory::NativeMemory;

    #[test]
    fn small_deltas_take_one_unit() {
        assert_eq!(encode(&[0, 1, 5, 5 + 0xFFFE]), vec![0, 1, 4, 0xFFFE]);
        assert_eq!(decode(&[0, 1, 4, 0xFFFE]), vec![0, 1, 5, 5 + 0xFFFE]);
    }

    #[test]
    fn a_delta_of_0xffff_is_escaped() {
        // 0xFFFF itself cannot be a delta: it is the escape, so the full ID follows.
        let id = 0xFFFFu64;
        assert_eq!(encode(&[id]), vec![ESCAPE, 0xFFFF, 0x0000]);
        let big = 0x1234_5678u64;
        assert_eq!(encode(&[3, big, big + 2]), vec![3, ESCAPE, 0x5678, 0x1234, 2]);
        assert_eq!(decode(&encode(&[3, big, big + 2])), vec![3, big, big + 2]);
    }

    #[test]
    fn round_trip_through_memory() {
        let mut mem = NativeMemory::new(1 << 24);
        let ids: Vec<u64> = vec![7, 8, 100, 70_000, 70_001, 200_000, 4_000_000_000];
        for encoding in [IdEncoding::Delta16, IdEncoding::Plain32] {
            let mut list = IdList::new(encoding);
            for &id in &ids {
                list.push(&mut mem, id).unwrap();
            }
            let mut back = Vec::new();
            list.for_each(&mut mem, |_, id| {
                back.push(id);
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(back, ids);
            let expected_bytes = match encoding {
                IdEncoding::Delta16 => 2 * (4 + 3 * 3),
                IdEncoding::Plain32 => 4 * 7,
            };
            assert_eq!(list.bytes(), expected_bytes);
        }
    }

    #[test]
    fn chunked_stream_spans_chunks() {
        let mut mem = NativeMemory::new(1 << 24);
        let mut stream = ChunkedStream::new(100);
        let addrs: Vec<u64> = (0..100).map(|_| stream.push(&mut mem).unwrap()).collect();
        assert_eq!(stream.len(), 100);
        for (i, &a) in addrs.iter().enumerate() {
            assert_eq!(stream.addr(i as u64), a);
            mem.store::<u64>(a, i as u64);
        }
        assert!((0..100).all(|i| mem.load::<u64>(addrs[i]) == i as u64));
    }
}
