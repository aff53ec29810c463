//! Where a PCM device keeps its lines: sparse chunks of 64 line records (or of 64 lines' bytes),
//! allocated on first write, under a two-level directory.

use crate::index;

use super::line::{LineRecord, LineWrite, LINE_BYTES, WORD_BYTES};

pub(super) const CHUNK_LINES: usize = 64;
/// Chunks per second-level directory table (4 MiB of address space).
pub(super) const TABLE_CHUNKS: usize = 1024;

/// The records of two lines, 64-byte aligned, so that its 160-byte records start at a
/// host cache line's start and middle, and each spans exactly three host cache lines (at
/// an 8-byte alignment that is not a multiple of 32, half of them span four).
#[derive(Clone, Default)]
#[repr(C, align(64))]
pub(super) struct RecordPair(pub(super) [LineRecord; 2]);

/// The records of 64 lines, line `slot` in pair `slot / 2`: pairs, so that an empty
/// chunk is built in place on the heap as a boxed slice of aligned pairs (a `Box::new` of
/// one 10 KiB array builds it on the stack and copies it).
pub(super) type Chunk = [RecordPair; CHUNK_LINES / 2];

/// A chunk's line records.
pub(super) trait Records {
    fn line(&self, slot: usize) -> &LineRecord;
    fn line_mut(&mut self, slot: usize) -> &mut LineRecord;
    /// Every line's record, in slot order.
    fn lines(&self) -> impl Iterator<Item = &LineRecord>;
}

impl Records for Chunk {
    #[inline]
    fn line(&self, slot: usize) -> &LineRecord {
        &self[slot / 2].0[slot % 2]
    }

    #[inline]
    fn line_mut(&mut self, slot: usize) -> &mut LineRecord {
        &mut self[slot / 2].0[slot % 2]
    }

    fn lines(&self) -> impl Iterator<Item = &LineRecord> {
        self.iter().flat_map(|pair| &pair.0)
    }
}

/// A chunk of 64 lines in one of the two host layouts: [`Chunk`] counting every cell,
/// [`WordChunk`] counting to the word.
pub(super) trait ChunkLines {
    /// A chunk none of whose lines is written.
    fn empty() -> Box<Self>;
    /// Sets the lines from `slot` on as in [`ChunkLines::empty`].
    fn forget_lines_from(&mut self, slot: usize);
}

impl ChunkLines for Chunk {
    #[cold]
    fn empty() -> Box<Chunk> {
        // Collected from an iterator of known length, each pair is written where it lies
        // in the allocation.
        let pairs: Box<[RecordPair]> = (0..CHUNK_LINES / 2).map(|_| RecordPair::default()).collect();
        pairs.try_into().ok().expect("CHUNK_LINES / 2 pairs")
    }

    fn forget_lines_from(&mut self, slot: usize) {
        for line in slot..CHUNK_LINES {
            *self.line_mut(line) = LineRecord::default();
        }
    }
}

/// Counting to the word, 64 lines' logical bytes in a row (no flip cells, no wear).
#[derive(Clone)]
#[repr(C, align(64))]
pub(super) struct WordChunk {
    pub(super) lines: [[u8; LINE_BYTES]; CHUNK_LINES],
}

impl ChunkLines for WordChunk {
    #[cold]
    fn empty() -> Box<WordChunk> {
        Box::new(WordChunk { lines: [[0; LINE_BYTES]; CHUNK_LINES] })
    }

    fn forget_lines_from(&mut self, slot: usize) {
        self.lines[slot..].fill([0; LINE_BYTES]);
    }
}

/// A directory table's slot: a chunk, allocated on the first write to any of its lines,
/// and which of its lines have been written. The bits sit beside the pointer, which every
/// write reads: marking a line written touches no other host cache line (in the chunk,
/// they took a host cache line of their own, missed on most write-backs over 64 MiB).
#[derive(Clone)]
pub(super) struct ChunkSlot<C> {
    pub(super) chunk: Option<Box<C>>,
    /// Bit `slot` set once line `slot` has been written.
    pub(super) written: u64,
}

/// A chunk and its written bits, as a write sees them.
pub(super) struct ChunkMut<'a, C> {
    pub(super) chunk: &'a mut C,
    /// Bit `slot` set once line `slot` has been written.
    pub(super) written: &'a mut u64,
}

/// A two-level sparse directory of chunks: `TABLE_CHUNKS` chunk slots per table, tables
/// and chunks allocated on first use.
#[derive(Clone)]
pub(super) struct Directory<C> {
    pub(super) tables: Vec<Option<Box<ChunkTable<C>>>>,
}

/// A second-level directory table of `TABLE_CHUNKS` chunk slots.
pub(super) type ChunkTable<C> = [ChunkSlot<C>];

impl<C: ChunkLines> Directory<C> {
    pub(super) fn new() -> Directory<C> {
        Directory { tables: Vec::new() }
    }

    /// The chunk holding `physical_line`, if allocated.
    #[inline]
    pub(super) fn get(&self, physical_line: u64) -> Option<&C> {
        let index = index(physical_line / CHUNK_LINES as u64);
        self.tables.get(index / TABLE_CHUNKS)?.as_deref()?[index % TABLE_CHUNKS].chunk.as_deref()
    }

    /// The chunk holding `physical_line`, allocated on first use, and its written bits: one
    /// directory lookup.
    #[inline]
    pub(super) fn get_mut(&mut self, physical_line: u64) -> ChunkMut<'_, C> {
        let index = index(physical_line / CHUNK_LINES as u64);
        let table = index / TABLE_CHUNKS;
        if self.tables.get(table).is_none_or(Option::is_none) {
            self.allocate_table(table);
        }
        let ChunkSlot { chunk, written } =
            &mut self.tables[table].as_deref_mut().expect("the table was allocated above")[index % TABLE_CHUNKS];
        ChunkMut { chunk: chunk.get_or_insert_with(C::empty), written }
    }

    /// Allocates directory table `table`.
    #[cold]
    pub(super) fn allocate_table(&mut self, table: usize) {
        if table >= self.tables.len() {
            self.tables.resize_with(table + 1, || None);
        }
        self.tables[table] = Some((0..TABLE_CHUNKS).map(|_| ChunkSlot { chunk: None, written: 0 }).collect());
    }

    /// Every allocated chunk, with its written bits.
    pub(super) fn chunks(&self) -> impl Iterator<Item = (&C, u64)> {
        self.tables.iter().flatten().flat_map(|t| t.iter().filter_map(|s| Some((s.chunk.as_deref()?, s.written))))
    }

    /// Heap bytes of the directory and its chunks (not what a chunk holds on the heap).
    pub(super) fn heap_bytes(&self) -> usize {
        let tables = self.tables.iter().flatten().count() * TABLE_CHUNKS * std::mem::size_of::<ChunkSlot<C>>();
        self.tables.capacity() * std::mem::size_of::<Option<Box<ChunkTable<C>>>>()
            + tables
            + self.chunks().count() * std::mem::size_of::<C>()
    }

    /// Forgets the lines from `first` on: their chunks, and in the chunk holding `first`
    /// the records and written bits of the lines from it on, as if never written.
    pub(super) fn forget_from(&mut self, first: u64) {
        let chunk = index(first / CHUNK_LINES as u64);
        let slot = index(first % CHUNK_LINES as u64);
        for (t, table) in self.tables.iter_mut().enumerate().skip(chunk / TABLE_CHUNKS) {
            let Some(table) = table else { continue };
            for (i, entry) in table.iter_mut().enumerate() {
                let at = t * TABLE_CHUNKS + i;
                if at > chunk || (at == chunk && slot == 0) {
                    *entry = ChunkSlot { chunk: None, written: 0 };
                } else if at == chunk {
                    let kept = entry.written & (u64::MAX >> (64 - slot));
                    if let Some(c) = entry.chunk.as_deref_mut() {
                        C::forget_lines_from(c, slot);
                    }
                    entry.written = kept;
                }
            }
        }
    }

    /// Marks the lines `first..end` written (their chunks allocated).
    pub(super) fn mark_written(&mut self, first: u64, end: u64) {
        let mut line = first;
        while line < end {
            let slot = index(line % CHUNK_LINES as u64);
            let take = (CHUNK_LINES - slot).min(index(end - line));
            *self.get_mut(line).written |= (u64::MAX >> (64 - take)) << slot;
            line += take as u64;
        }
    }

    /// Hands each line's part of `data`, written at `addr`, to `visit(chunk, slot, line,
    /// start, written)` in increasing line order, walking the lines in place chunk by
    /// chunk (one directory lookup per chunk); `start` is the part's offset in its line.
    pub(super) fn for_each_line_in_place(
        &mut self,
        addr: u64,
        data: &[u8],
        mut visit: impl FnMut(&mut ChunkMut<'_, C>, usize, u64, usize, &[u8]),
    ) {
        let mut line = addr / LINE_BYTES as u64;
        let mut start = index(addr % LINE_BYTES as u64);
        let mut rest = data;
        while !rest.is_empty() {
            let mut slot = index(line % CHUNK_LINES as u64);
            let mut chunk = self.get_mut(line);
            while slot < CHUNK_LINES && !rest.is_empty() {
                let take = (LINE_BYTES - start).min(rest.len());
                let (written, tail) = rest.split_at(take);
                visit(&mut chunk, slot, line, start, written);
                rest = tail;
                start = 0;
                slot += 1;
                line += 1;
            }
        }
    }
}

/// Host memory one written PCM line takes counting every cell, bytes: its cells, flip
/// cells and lowest wear plane (further wear planes, 72 B each, come as its program counts
/// grow). Lines are allocated 64 at a time, on the first write to any of them.
pub const LINE_HOST_BYTES: u64 = std::mem::size_of::<LineRecord>() as u64;

// Paper-scale B+-trees hold gigabytes of line records: a record that grew would show in
// every experiment's peak memory. And 64 of them fill their aligned chunk exactly.
const _: () = assert!(
    LINE_HOST_BYTES == 160
        && std::mem::size_of::<Chunk>() == CHUNK_LINES * 160
        && std::mem::align_of::<RecordPair>() == 64
);

/// Counting to the word: line `slot` of `chunk` takes the bytes `new`; the words written
/// are those whose value changes, and with `count_bits` the cells programmed those whose
/// bit changes (as [`PcmAccounting::Cells`] counts them without Flip-N-Write).
#[inline]
pub(super) fn store_words(
    chunk: &mut ChunkMut<'_, WordChunk>,
    slot: usize,
    new: &[u8; LINE_BYTES],
    count_bits: bool,
) -> LineWrite {
    *chunk.written |= 1 << slot;
    let line = &mut chunk.chunk.lines[slot];
    let (mut changed, mut bits) = (0u8, 0u32);
    for (w, (old, new)) in line.chunks_exact(WORD_BYTES).zip(new.chunks_exact(WORD_BYTES)).enumerate() {
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("a word"));
        let flipped = word(old) ^ word(new);
        changed |= u8::from(flipped != 0) << w;
        if count_bits {
            bits += flipped.count_ones();
        }
    }
    *line = *new;
    LineWrite { words: changed.count_ones(), bits, word_mask: changed }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wear::LANES;

    /// An empty chunk built in place is what the plain construction gives: 64 records,
    /// each with its words, flip cells and wear zero and no higher wear plane; and its
    /// records lie at a 64-byte alignment.
    #[test]
    fn an_empty_chunk_is_64_default_records_aligned() {
        let chunk = Chunk::empty();
        assert_eq!(chunk.as_ptr().addr() % 64, 0);
        assert_eq!(chunk.lines().count(), CHUNK_LINES);
        for (slot, record) in chunk.lines().enumerate() {
            let plain = LineRecord::default();
            assert_eq!((record.words, record.flips), (plain.words, plain.flips), "slot {slot}");
            assert_eq!(record.wear.heap_bytes(), 0, "slot {slot}");
            assert!((0..LANES).all(|lane| record.wear.count(lane, 0) == 0 && record.wear.count(lane, 63) == 0));
            assert!(std::ptr::eq(record, chunk.line(slot)));
            assert_eq!(std::ptr::from_ref(record).addr() % 64, if slot % 2 == 0 { 0 } else { 32 }, "slot {slot}");
        }
    }
}
