//! Relations: a native [`Table`] of column values, and a [`StoredRelation`] holding the
//! same rows in simulated memory as fixed-length records (row layout) or one array per
//! column with the tuple ID implicit (column layout).

use nvmdb_device::index;
use nvmdb_memory::{Memory, MemoryError};
use serde::{Deserialize, Serialize};

use crate::instructions;

/// How a relation's bytes are arranged in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Fixed-length records, columns packed in order.
    Row,
    /// One array per column; the tuple ID is the array index.
    Column,
}

impl Layout {
    /// `row` or `column`.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Row => "row",
            Layout::Column => "column",
        }
    }
}

/// One column of a [`Table`]: a name, a width of 1 to 8 bytes, and its values (each fits
/// the width).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Bytes per value, 1 to 8 (little-endian, low bytes of the `u64`).
    pub width_bytes: u32,
    /// One value per row.
    pub values: Vec<u64>,
}

/// A relation outside simulated memory.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    /// The columns, all of the same length.
    pub columns: Vec<Column>,
}

impl Table {
    /// Rows in the table.
    pub fn rows(&self) -> u64 {
        self.columns.first().map_or(0, |c| c.values.len() as u64)
    }

    /// Bytes per record in the row layout.
    pub fn record_bytes(&self) -> u64 {
        self.columns.iter().map(|c| u64::from(c.width_bytes)).sum()
    }

    /// The index of the column called `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// One contiguous array in memory: `rows` slots of `stride` bytes from `base`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group {
    base: u64,
    stride: u64,
    /// Columns `[first, first + count)` of the relation live in this group.
    first: usize,
    count: usize,
}

/// A relation in simulated memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRelation {
    layout: Layout,
    rows: u64,
    /// Rows the memory was allocated for (at least `rows`).
    capacity_rows: u64,
    widths: Vec<u32>,
    /// Byte offset of each column within its group's slot.
    offsets: Vec<u64>,
    /// The group of each column.
    column_group: Vec<usize>,
    groups: Vec<Group>,
    key_column: usize,
    /// The groups a join result reads, in order: every group, or in the column layout
    /// those of the columns of [`StoredRelation::with_projection`] (found once, not at
    /// every record read).
    read_groups: Vec<Group>,
}

impl StoredRelation {
    /// Allocates an empty (all-zero) relation of `rows` rows with columns of `widths`
    /// bytes, joined on `key_column`.
    pub fn allocate<M: Memory>(
        mem: &mut M,
        layout: Layout,
        widths: &[u32],
        key_column: usize,
        rows: u64,
    ) -> Result<StoredRelation, MemoryError> {
        StoredRelation::allocate_with_capacity(mem, layout, widths, key_column, rows, rows)
    }

    /// Allocates a relation of `rows` rows with room for `capacity_rows` (at least `rows`),
    /// so that rows can be appended with [`StoredRelation::set_rows`].
    pub fn allocate_with_capacity<M: Memory>(
        mem: &mut M,
        layout: Layout,
        widths: &[u32],
        key_column: usize,
        rows: u64,
        capacity_rows: u64,
    ) -> Result<StoredRelation, MemoryError> {
        assert!(rows <= capacity_rows, "{rows} rows exceed a capacity of {capacity_rows}");
        assert!(!widths.is_empty() && widths.iter().all(|w| (1..=8).contains(w)), "column widths must be 1..=8");
        assert!(key_column < widths.len(), "key column {key_column} out of range");
        let mut offsets = Vec::with_capacity(widths.len());
        let mut column_group = Vec::with_capacity(widths.len());
        let mut groups = Vec::new();
        match layout {
            Layout::Row => {
                let mut offset = 0u64;
                for &w in widths {
                    offsets.push(offset);
                    column_group.push(0);
                    offset += u64::from(w);
                }
                let base = mem.alloc((offset * capacity_rows).max(1), 64)?;
                groups.push(Group { base, stride: offset, first: 0, count: widths.len() });
            }
            Layout::Column => {
                for (i, &w) in widths.iter().enumerate() {
                    offsets.push(0);
                    column_group.push(i);
                    let base = mem.alloc((u64::from(w) * capacity_rows).max(1), 64)?;
                    groups.push(Group { base, stride: u64::from(w), first: i, count: 1 });
                }
            }
        }
        Ok(StoredRelation {
            layout,
            rows,
            capacity_rows,
            widths: widths.to_vec(),
            offsets,
            column_group,
            read_groups: groups.clone(),
            groups,
            key_column,
        })
    }

    /// Stores `table` in memory, joined on `key_column`. Counters are not reset.
    pub fn load<M: Memory>(
        mem: &mut M,
        table: &Table,
        layout: Layout,
        key_column: usize,
    ) -> Result<StoredRelation, MemoryError> {
        StoredRelation::load_with_capacity(mem, table, layout, key_column, table.rows())
    }

    /// [`StoredRelation::load`] with room for `capacity_rows` rows (at least the table's).
    pub fn load_with_capacity<M: Memory>(
        mem: &mut M,
        table: &Table,
        layout: Layout,
        key_column: usize,
        capacity_rows: u64,
    ) -> Result<StoredRelation, MemoryError> {
        let widths: Vec<u32> = table.columns.iter().map(|c| c.width_bytes).collect();
        let relation =
            StoredRelation::allocate_with_capacity(mem, layout, &widths, key_column, table.rows(), capacity_rows)?;
        let mut row = vec![0u64; widths.len()];
        for i in 0..table.rows() {
            for (value, column) in row.iter_mut().zip(&table.columns) {
                *value = column.values[index(i)];
            }
            relation.write_row(mem, i, &row);
        }
        Ok(relation)
    }

    /// Writes one row's values (one per column, each fitting its width).
    pub fn write_row<M: Memory>(&self, mem: &mut M, row: u64, values: &[u64]) {
        assert_eq!(values.len(), self.widths.len(), "one value per column");
        assert!(row < self.capacity_rows, "row {row} beyond a capacity of {}", self.capacity_rows);
        for group in &self.groups {
            with_record_buffer(index(group.stride), |buf| {
                let mut len = 0usize;
                for (value, &w) in values.iter().zip(&self.widths).skip(group.first).take(group.count) {
                    let w = w as usize;
                    buf[len..len + w].copy_from_slice(&value.to_le_bytes()[..w]);
                    len += w;
                }
                mem.write_bytes(group.base + row * group.stride, &buf[..len]);
            });
        }
    }

    /// Writes column `c` of `row` (the value fits the column's width).
    pub fn write_value<M: Memory>(&self, mem: &mut M, row: u64, c: usize, value: u64) {
        assert!(row < self.capacity_rows, "row {row} beyond a capacity of {}", self.capacity_rows);
        let w = self.widths[c] as usize;
        mem.write_bytes(self.column_addr(row, c), &value.to_le_bytes()[..w]);
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Rows.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Sets the number of rows (at most the capacity): rows beyond the old count hold
    /// whatever was written there with [`StoredRelation::write_row`].
    pub fn set_rows(&mut self, rows: u64) {
        assert!(rows <= self.capacity_rows, "{rows} rows exceed a capacity of {}", self.capacity_rows);
        self.rows = rows;
    }

    /// Bytes per record (sum of column widths).
    pub fn record_bytes(&self) -> u64 {
        self.widths.iter().map(|&w| u64::from(w)).sum()
    }

    /// Column widths, bytes.
    pub fn widths(&self) -> &[u32] {
        &self.widths
    }

    /// The join column.
    pub fn key_column(&self) -> usize {
        self.key_column
    }

    /// Width of the join column, bytes.
    pub fn key_width(&self) -> u32 {
        self.widths[self.key_column]
    }

    /// Address of column `c` of `row`.
    pub fn column_addr(&self, row: u64, c: usize) -> u64 {
        let group = &self.groups[self.column_group[c]];
        group.base + row * group.stride + self.offsets[c]
    }

    /// Reads the join key of `row`.
    pub fn read_key<M: Memory>(&self, mem: &mut M, row: u64) -> u64 {
        read_uint(mem, self.column_addr(row, self.key_column), self.key_width())
    }

    /// Reads column `c` of `row`.
    pub fn read_value<M: Memory>(&self, mem: &mut M, row: u64, c: usize) -> u64 {
        read_uint(mem, self.column_addr(row, c), self.widths[c])
    }

    /// The same stored relation joined on another column.
    pub fn rekeyed(&self, key_column: usize) -> StoredRelation {
        assert!(key_column < self.widths.len(), "key column {key_column} out of range");
        StoredRelation { key_column, ..self.clone() }
    }

    /// Restricts what a join result reads in the column layout to `columns` (a column
    /// store reads only the attributes a query needs; a row store reads whole records).
    pub fn with_projection(mut self, columns: &[usize]) -> StoredRelation {
        assert!(columns.iter().all(|&c| c < self.widths.len()), "projected column out of range");
        if self.layout == Layout::Column {
            self.read_groups = self.groups.iter().filter(|g| columns.contains(&g.first)).copied().collect();
        }
        self
    }

    /// Reads the record of `row` as a join result does (row layout: the whole record;
    /// column layout: the projected columns, all by default) and returns a checksum of the
    /// bytes, standing for the join result built from them. Declares a word's instructions
    /// per word read; its lines are independent of each other, but the caller declares
    /// the group (groups do not nest).
    pub fn read_record<M: Memory>(&self, mem: &mut M, row: u64) -> u64 {
        let mut sum = 0u64;
        for group in &self.read_groups {
            mem.compute(instructions::words(group.stride));
            with_record_buffer(index(group.stride), |buf| {
                mem.read_bytes(group.base + row * group.stride, buf);
                sum = fold_bytes(sum, buf);
            });
        }
        sum
    }
}

/// Records up to this many bytes are copied through a buffer on the stack; longer ones
/// (up to the 10,000 B of `--record-bytes`, or a CSV relation of many columns) through one
/// on the heap.
const STACK_RECORD_BYTES: usize = 512;

/// Runs `f` on a zeroed scratch buffer of `len` bytes: on the stack for a record of at
/// most [`STACK_RECORD_BYTES`], else on the heap.
pub(crate) fn with_record_buffer<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    if len <= STACK_RECORD_BYTES {
        f(&mut [0u8; STACK_RECORD_BYTES][..len])
    } else {
        f(&mut vec![0u8; len])
    }
}

/// Reads a little-endian unsigned value of `width` bytes (1 to 8): the scalar widths as
/// [`Memory::load`]s (a read of the same bytes, whose copy has its length known where it
/// is made), the others as a read of the bytes.
pub fn read_uint<M: Memory>(mem: &mut M, addr: u64, width: u32) -> u64 {
    match width {
        1 => u64::from(mem.load::<u8>(addr)),
        2 => u64::from(mem.load::<u16>(addr)),
        4 => u64::from(mem.load::<u32>(addr)),
        8 => mem.load::<u64>(addr),
        _ => {
            let mut b = [0u8; 8];
            mem.read_bytes(addr, &mut b[..width as usize]);
            u64::from_le_bytes(b)
        }
    }
}

/// A cheap order-dependent checksum of bytes: each 8-byte piece in turn (the last one
/// zero-padded) as a little-endian word, XORed into the sum rotated left by 5.
pub fn fold_bytes(mut sum: u64, bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        sum = sum.rotate_left(5) ^ u64::from_le_bytes(word.try_into().expect("8 bytes"));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        // The padded word built byte by byte, not copied into a buffer by a library call.
        sum = sum.rotate_left(5) ^ rest.iter().rev().fold(0u64, |word, &b| word << 8 | u64::from(b));
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The checksum as plainly as it can be written: each piece copied into a zeroed word.
    fn fold_bytes_reference(mut sum: u64, bytes: &[u8]) -> u64 {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            sum = sum.rotate_left(5) ^ u64::from_le_bytes(b);
        }
        sum
    }

    proptest! {
        #[test]
        fn fold_bytes_matches_the_plain_checksum(sum in any::<u64>(), bytes in prop::collection::vec(any::<u8>(), 0..80)) {
            prop_assert_eq!(fold_bytes(sum, &bytes), fold_bytes_reference(sum, &bytes));
        }
    }
}
