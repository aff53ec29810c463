//! Host memory of a join run: the join over two relations of given shapes
//! ([`join_memory_bytes`], which the synthetic joins' estimate
//! [`crate::synth::estimated_memory_bytes`] and that of joins over CSV tables
//! ([`tables_memory_bytes`]) share).

use nvmdb_device::pcm::LINE_HOST_BYTES;
use nvmdb_memory::CacheConfig;

use crate::csv::CsvShape;
use crate::hash_table::ENTRY_BYTES;
use crate::idlist::CHUNK_BYTES;
use crate::join::{cache_partitions, virtual_partitions};
use crate::relation::{Column, Layout};
use crate::{Algorithm, IdEncoding, JoinOptions};

/// A relation as a join stores it: its rows and its columns' widths, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape<'a> {
    /// Rows.
    pub rows: u64,
    /// Bytes of each column (1 to 8).
    pub widths: &'a [u32],
}

impl Shape<'_> {
    /// Bytes per record in the row layout.
    fn record_bytes(&self) -> u64 {
        self.widths.iter().map(|&w| u64::from(w)).sum()
    }
}

/// Host memory a join of relations of shapes `r` and `s` stored in `layout` (loaded, then
/// [`crate::measured_join`] with `options`, its pairs aside) holds at most, bytes, in a
/// memory over PCM, with the cache hierarchy `cache` or none (flat), from the layout of
/// what it allocates:
/// - simulated memory: both relations, the hash table (sized for R, or for the whole of R
///   in the partitioned joins, whose largest partition is not known in advance), and the
///   partitions' copies (cache partitioning) or ID lists (virtual partitioning, at most 3
///   units a delta-encoded ID) in [`CHUNK_BYTES`] chunks; each 64 B line of it a PCM line
///   record ([`LINE_HOST_BYTES`], allocated 64 lines at a time, a directory slot each)
///   and, cached, a byte image of it (in 1 MiB segments) and the hierarchy's tags
///   ([`CacheConfig::host_bytes`]);
/// - the wear counters' higher planes of the hash table's lines, the only ones whose words
///   are written more than once (see the comment at the sum);
/// - on the host: cache partitioning's source rows (row layout, 8 B an entry in doubling
///   vectors: 24 B with a growth's old half).
pub fn join_memory_bytes(
    r: &Shape,
    s: &Shape,
    layout: Layout,
    options: &JoinOptions,
    cache: Option<&CacheConfig>,
) -> u64 {
    let (r_rows, s_rows) = (r.rows, s.rows);
    let aligned = |bytes: u64| bytes.max(1).next_multiple_of(64);
    let relation = |shape: &Shape| match layout {
        Layout::Row => aligned(shape.record_bytes().saturating_mul(shape.rows)),
        Layout::Column => shape.widths.iter().map(|&w| aligned(u64::from(w).saturating_mul(shape.rows))).sum(),
    };
    let table_rows = r_rows.max(1);
    let table = aligned(table_rows.next_power_of_two().saturating_mul(8))
        .saturating_add(aligned(table_rows.saturating_mul(ENTRY_BYTES)));
    let chunked = |rows: u64, item_bytes: u64, lists: u64| {
        rows.div_ceil(CHUNK_BYTES / item_bytes).saturating_add(lists).saturating_mul(CHUNK_BYTES)
    };
    // Cache partitioning copies whole records (row layout) or {key, tuple ID} (column).
    let copied = |shape: &Shape| match layout {
        Layout::Row => shape.record_bytes(),
        Layout::Column => 16,
    };
    let (partitions, parts, host) = match options.algorithm {
        Algorithm::Simple => (1, 0, 0),
        Algorithm::CachePartitioning => {
            let p = cache_partitions(r_rows, copied(r), s_rows, copied(s), options.cache_bytes);
            let copies = chunked(r_rows, copied(r), p).saturating_add(chunked(s_rows, copied(s), p));
            let sources = if layout == Layout::Row { r_rows.saturating_add(s_rows).saturating_mul(24) } else { 0 };
            (p, copies, sources.saturating_add(p.saturating_mul(2 * 32)))
        }
        Algorithm::VirtualPartitioning => {
            let (id_bytes, units) = match options.id_encoding {
                IdEncoding::Delta16 => (2, 3),
                IdEncoding::Plain32 => (4, 1),
            };
            let p =
                virtual_partitions(r_rows, r.record_bytes(), s_rows, s.record_bytes(), id_bytes, options.cache_bytes);
            // A delta-encoded ID takes one unit, or three after a gap of over 0xFFFE: in a
            // list of a relation's ascending IDs, at most one per 0xFFFF rows, and the first.
            let items = |rows: u64| {
                let escapes = rows.min(p.saturating_mul(rows / 0xFFFF + 1));
                rows.saturating_add(if units > 1 { escapes.saturating_mul(2) } else { 0 })
            };
            let lists = chunked(items(r_rows), id_bytes, p).saturating_add(chunked(items(s_rows), id_bytes, p));
            (p, lists, 0)
        }
    };
    let span = relation(r).saturating_add(relation(s)).saturating_add(table).saturating_add(parts);
    let chunk_lines = 64;
    let chunks = span.div_ceil(chunk_lines * 64);
    let lines = chunks.saturating_mul(chunk_lines);
    // A directory table of 1024 chunk slots (16 B each) per 1024 chunks.
    let directory = chunks.div_ceil(1024).saturating_mul(1024 * 16);
    let mut bytes = lines.saturating_mul(LINE_HOST_BYTES).saturating_add(directory);
    if let Some(cache) = cache {
        let image = span.div_ceil(1 << 20).saturating_mul(1 << 20);
        bytes = bytes.saturating_add(image).saturating_add(cache.host_bytes());
    }
    // Wear: a cell's counter passes 1 only where its word is written twice. An entry's
    // words are written once per partition that fills the slot; the bucket lines once per
    // insertion (its head) and per reset.
    let entry_lines = aligned(table_rows.saturating_mul(ENTRY_BYTES)) / 64;
    let entry_planes =
        entry_lines.saturating_mul(u64::from(partitions.saturating_add(1).next_power_of_two().trailing_zeros() - 1));
    let bucket_lines = aligned(table_rows.next_power_of_two().saturating_mul(8)) / 64;
    let bucket_writes = r_rows.saturating_add(partitions.saturating_mul(bucket_lines));
    let plane_bytes = nvmdb_device::wear::LANES as u64 * 8;
    bytes
        .saturating_add(entry_planes.saturating_mul(plane_bytes))
        .saturating_add(nvmdb_device::wear::higher_plane_bytes_bound(bucket_lines, bucket_writes))
        .saturating_add(host)
}

/// Host memory a table of shape `shape` holds once parsed into exactly sized columns
/// ([`crate::csv::parse_csv`] with the shape's rows), bytes: per column its entry, its
/// name and its values (8 B each).
pub fn table_bytes(shape: &CsvShape) -> u64 {
    let columns = shape.columns as u64;
    columns
        .saturating_mul(std::mem::size_of::<Column>() as u64)
        .saturating_add(shape.name_bytes)
        .saturating_add(columns.saturating_mul(shape.rows).saturating_mul(8))
}

/// Host memory a join over two CSV tables of shapes `r` and `s` holds at most, bytes
/// (`nvmdb join run --r --s`, its pairs aside): both tables parsed ([`table_bytes`]),
/// held through the join ([`join_memory_bytes`], every column 8 B).
pub fn tables_memory_bytes(
    r: &CsvShape,
    s: &CsvShape,
    layout: Layout,
    options: &JoinOptions,
    cache: Option<&CacheConfig>,
) -> u64 {
    let (r_widths, s_widths) = (vec![8; r.columns], vec![8; s.columns]);
    let (r_shape, s_shape) = (Shape { rows: r.rows, widths: &r_widths }, Shape { rows: s.rows, widths: &s_widths });
    table_bytes(r)
        .saturating_add(table_bytes(s))
        .saturating_add(join_memory_bytes(&r_shape, &s_shape, layout, options, cache))
}
