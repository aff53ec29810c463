//! The SSD stack's memory estimates, from its configuration and the layouts of the
//! structures it builds: what the command line's memory check compares with the memory
//! available before anything is allocated. `tests/memory_estimate.rs` checks each against
//! the measured peak.

use nvmdb_device::{FlashArray, PageContent, PageData, PcmAccounting};
use nvmdb_workload::{Op, Request};

use crate::config::{BufferKind, Mapping, SsdConfig};
use crate::replay::{estimated_response_bytes, ReplayOptions};
use crate::{dedup, dpram, ipl};

/// What a trace asks of a replay, counted in one pass over it before the run
/// ([`TraceCounts::add`] for each request): what
/// [`SsdConfig::estimated_replay_memory_bytes`] reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceCounts {
    /// Requests.
    pub requests: u64,
    /// Logical pages the write and trim requests span, each counted once for every
    /// request that spans it.
    pub changed_pages: u64,
    /// Logical pages every request spans, likewise (the pre-fill writes each page the
    /// trace touches once).
    pub touched_pages: u64,
    /// The most logical pages one request spans.
    pub largest_request_pages: u64,
}

impl TraceCounts {
    /// Counts `request` on a device of `page_bytes` pages: the pages its byte range spans,
    /// as the replay splits it.
    pub fn add(&mut self, request: &Request, page_bytes: u32) {
        let page_bytes = u64::from(page_bytes).max(1);
        let pages = match request.len_bytes {
            0 => 0,
            len => {
                let first = request.offset_bytes / page_bytes;
                let last = request.offset_bytes.saturating_add(len - 1) / page_bytes;
                (last - first).saturating_add(1)
            }
        };
        self.requests = self.requests.saturating_add(1);
        self.touched_pages = self.touched_pages.saturating_add(pages);
        self.largest_request_pages = self.largest_request_pages.max(pages);
        if request.op != Op::Read {
            self.changed_pages = self.changed_pages.saturating_add(pages);
        }
    }
}

/// Host bytes per page of the pre-fill's set of the trace's pages (a `BTreeSet<u64>`: a
/// leaf node of 11 keys, 104 B, at least 5 full, and its share of the internal nodes).
const PREFILL_BYTES_PER_PAGE: u64 = 24;

/// Host bytes per page of the power-loss model's map beside the page's contents (a
/// `BTreeMap<u64, Vec<_>>`: 32 B entries, 11 to a node of at most 464 B with its edges,
/// each node at least 5 full).
const MODEL_ENTRY_BYTES: u64 = 93;

impl SsdConfig {
    /// Memory the stack's tables take, bytes: per-page maps and per-block state of the
    /// FTL; the flash array's own per page and block once every block has been programmed
    /// ([`FlashArray::host_bytes_bound`]: spare bytes and flag, fingerprints, IPL's sector
    /// masks and tags, but not the page bytes); a PCM buffer's per-64 B-unit tables and
    /// its lines ([`nvmdb_device::pcm::LINE_HOST_BYTES`] each, every line written), or IPL's
    /// record index with every log sector used ([`ipl::estimated_index_bytes`]); with
    /// deduplication its segments, reference counts and per-logical-page sequence numbers,
    /// its fixed PCM tables (the location table and the share map, 20 B per physical
    /// and per logical page) as simulated PCM holds them once every slot is written, and
    /// its fingerprint store's buckets holding a fingerprint per logical page
    /// ([`dedup::estimated_store_bytes`]). What grows with a trace (page bytes as written
    /// with `content = "bytes"`, the wear counters of rewritten PCM lines, the pre-fill's
    /// set of pages and the response times) is added by
    /// [`SsdConfig::estimated_replay_memory_bytes`]. `tests/memory_estimate.rs` checks it
    /// against the measured peak.
    pub fn estimated_memory_bytes(&self) -> u64 {
        let mut geometry = self.flash.geometry();
        // IPL in either form programs sectors partially, tagging them where the content
        // is not bytes; the array's page bytes come on top as they are written.
        let ipl = matches!(self.buffer.kind, BufferKind::Ipl | BufferKind::IplNative);
        geometry.partial_programming |= ipl;
        let tagged = ipl && self.content != PageContent::Bytes;
        let kept = if self.content == PageContent::Bytes { PageContent::None } else { self.content };
        let array = FlashArray::host_bytes_bound(&geometry, kept, tagged);
        let mut bytes = geometry.pages().saturating_mul(16).saturating_add(geometry.blocks().saturating_mul(64));
        bytes = bytes.saturating_add(array);
        if self.buffer.kind == BufferKind::IplNative {
            // Per page of a unit: its slot (2 B) and its share of the unit's record index (a
            // 16 B record per log sector, 1/16 of the unit's pages of 8 sectors each: 8 B).
            bytes = bytes.saturating_add(geometry.pages().saturating_mul(10));
        } else if self.buffer.kind == BufferKind::Ipl {
            let sectors = self.ipl_log_pages() * (self.flash.page_bytes / 512).max(1);
            bytes = bytes.saturating_add(ipl::estimated_index_bytes(
                self.ipl_host_pages(),
                self.flash.pages_per_block,
                sectors,
            ));
        } else if matches!(self.buffer.kind, BufferKind::Dpram | BufferKind::PcmLog) {
            let units = self.buffer.pcm_mb.saturating_mul(1 << 20) / 64;
            bytes = bytes.saturating_add(units.saturating_mul(16 + nvmdb_device::pcm::LINE_HOST_BYTES));
        }
        if self.dedup.enabled {
            let logical = self.logical_pages();
            // 20 B slots in PCM, at the host bytes a written 64 B line takes.
            let pcm_tables = geometry.pages().saturating_add(logical).saturating_mul(20).div_ceil(64);
            bytes = bytes
                .saturating_add(u64::from(self.dedup.segments).saturating_mul(32))
                .saturating_add(geometry.pages().saturating_mul(8))
                .saturating_add(logical.saturating_mul(8))
                .saturating_add(pcm_tables.saturating_mul(nvmdb_device::pcm::LINE_HOST_BYTES))
                .saturating_add(dedup::estimated_store_bytes(&self.dedup, geometry.pages(), logical));
        }
        bytes.saturating_add(self.dram.pages.saturating_mul(u64::from(self.flash.page_bytes).saturating_add(64)))
    }

    /// Memory the stack holds once every block has been programmed, bytes: its own
    /// ([`SsdConfig::estimated_memory_bytes`]) and, with `content = "bytes"`, the page
    /// bytes of every physical page.
    pub fn estimated_programmed_memory_bytes(&self) -> u64 {
        let geometry = self.flash.geometry();
        let page_bytes = match self.content {
            PageContent::Bytes => geometry.pages().saturating_mul(u64::from(geometry.page_bytes)),
            PageContent::Fingerprint | PageContent::None => 0,
        };
        self.estimated_memory_bytes().saturating_add(page_bytes)
    }

    /// Memory a replay with `--age` holds before its trace, bytes: the stack with every
    /// block programmed ([`SsdConfig::estimated_programmed_memory_bytes`]: writing every
    /// host page twice programs them all), the ageing's own per host page
    /// ([`nvmdb_workload::ageing::BYTES_PER_PAGE`]), and with deduplication the wear
    /// counters of the fingerprint store's lines the ageing rewrites
    /// ([`dedup::estimated_store_wear_bytes`]).
    pub fn estimated_aged_memory_bytes(&self) -> u64 {
        let mut bytes = self
            .estimated_programmed_memory_bytes()
            .saturating_add(self.host_pages().saturating_mul(nvmdb_workload::ageing::BYTES_PER_PAGE));
        if self.dedup.enabled {
            // The ageing writes every host page twice: the first write of a page inserts its
            // fingerprint, an overwrite at most inserts one and removes the freed page's;
            // with `max_entries`, each insert may evict one more. Each write programs at
            // most one page, and garbage collection, freeing no more pages than the writes
            // take, copies at most a block's pages but one for each: a location move each.
            let writes = self.host_pages().saturating_mul(2);
            let per_page = if self.dedup.max_entries > 0 { 5 } else { 3 };
            let updates = self.host_pages().saturating_mul(per_page);
            let relocations = writes.saturating_mul(u64::from(self.flash.pages_per_block.saturating_sub(1)));
            bytes = bytes.saturating_add(dedup::estimated_store_wear_bytes(
                &self.dedup,
                self.flash.geometry().pages(),
                self.logical_pages(),
                updates,
                relocations,
                0,
            ));
        }
        bytes
    }

    /// Memory a replay of a trace of `trace`'s counts with `options` (its passes,
    /// pre-fill and ageing) holds at its peak, bytes: the stack
    /// ([`SsdConfig::estimated_memory_bytes`], or with `--age`
    /// [`SsdConfig::estimated_aged_memory_bytes`]), the response times
    /// ([`estimated_response_bytes`]), the pre-fill's set of pages, in a power-loss run the
    /// replay's model of acknowledged state, and what the trace's
    /// page writes and trims (every pass's, and the pre-fill's one per page) can grow:
    /// - with `content = "bytes"`, the page bytes of every block programmed
    ///   ([`SsdConfig::estimated_programmed_blocks`]; a block's bytes are allocated at its
    ///   first program and kept across erases; with `--age` every block is counted already);
    /// - with a d-PRAM or PCM log buffer counting cell wear, the higher wear planes of its
    ///   lines ([`nvmdb_device::wear::higher_plane_bytes_bound`]): a page's record (at most a
    ///   log sector) rewrites at most one line per 48 B of it (d-PRAM's unit payload; the
    ///   PCM log's sector with its header spans fewer) and at most four more (the PCM
    ///   log's table row, and a replacement's two);
    /// - with deduplication, the wear of the fingerprint store's rewritten lines
    ///   ([`dedup::estimated_store_wear_bytes`]): each page write or trim inserts at most
    ///   one fingerprint and removes the freed page's (and with `max_entries` evicts one
    ///   more), may be a hit, and is followed by at most a block's pages but one of
    ///   garbage-collection copies, a location move each.
    pub fn estimated_replay_memory_bytes(&self, trace: &TraceCounts, options: &ReplayOptions) -> u64 {
        let stack = if options.age { self.estimated_aged_memory_bytes() } else { self.estimated_memory_bytes() };
        let prefilled = if options.prefill { trace.touched_pages.min(self.host_pages()) } else { 0 };
        let writes = trace.changed_pages.saturating_mul(options.passes).saturating_add(prefilled);
        let mut bytes = stack
            .saturating_add(estimated_response_bytes(trace.requests, options.passes))
            .saturating_add(prefilled.saturating_mul(PREFILL_BYTES_PER_PAGE));
        if self.content == PageContent::Bytes && !options.age {
            let block_bytes = u64::from(self.flash.pages_per_block).saturating_mul(u64::from(self.flash.page_bytes));
            bytes = bytes.saturating_add(self.estimated_programmed_blocks(writes).saturating_mul(block_bytes));
        }
        let logs = matches!(self.buffer.kind, BufferKind::Dpram | BufferKind::PcmLog);
        if logs && self.buffer.pcm_accounting == PcmAccounting::Cells {
            let lines = self.buffer.pcm_mb.saturating_mul(1 << 20) / 64;
            let per_write = u64::from(self.buffer.log_sector_bytes).div_ceil(u64::from(dpram::UNIT_PAYLOAD_BYTES)) + 4;
            bytes = bytes
                .saturating_add(nvmdb_device::wear::higher_plane_bytes_bound(lines, writes.saturating_mul(per_write)));
        }
        if options.power_loss_at.is_some() || options.power_loss_at_write.is_some() {
            bytes = bytes.saturating_add(self.estimated_model_bytes(trace, writes, options.age));
        }
        if self.dedup.enabled {
            let per_write = if self.dedup.max_entries > 0 { 3 } else { 2 };
            let relocations = writes.saturating_mul(u64::from(self.flash.pages_per_block.saturating_sub(1)));
            bytes = bytes.saturating_add(dedup::estimated_store_wear_bytes(
                &self.dedup,
                self.flash.geometry().pages(),
                self.logical_pages(),
                writes.saturating_mul(per_write),
                relocations,
                writes,
            ));
        }
        bytes
    }

    /// The replay's model of acknowledged state in a power-loss run, bytes: each page
    /// written or trimmed (at most every host page; every one with `--age`) has an entry
    /// and its content, with `content = "bytes"` its page bytes; the pages of the request in
    /// progress are kept as they were before it, and those of an interrupted request may
    /// read as before or after it (a vector of up to 4 contents): twice the largest
    /// request's pages at most take a second content and a 4-slot vector more.
    fn estimated_model_bytes(&self, trace: &TraceCounts, writes: u64, age: bool) -> u64 {
        let host_pages = self.host_pages();
        let pages = if age { host_pages } else { writes.min(host_pages) };
        let slot = std::mem::size_of::<Option<PageData>>() as u64;
        let content = match self.content {
            PageContent::Bytes => u64::from(self.flash.page_bytes),
            PageContent::Fingerprint | PageContent::None => 0,
        };
        let kept = trace.largest_request_pages.min(host_pages).saturating_mul(2);
        pages
            .saturating_mul(MODEL_ENTRY_BYTES + slot + content)
            .saturating_add(kept.saturating_mul(MODEL_ENTRY_BYTES + 4 * slot + content))
    }

    /// The most flash blocks a run programs after `writes` host page writes and trims
    /// reach the stack (its pre-fill's included), at most every block. The page-mapped FTL
    /// fills one active block per plane at a time and takes a free block only for the next;
    /// before a plane first runs garbage collection (which it does only with fewer than
    /// `ftl.gc_free_blocks` free blocks) nothing in it is erased, so its programmed blocks
    /// are those its programs filled and its active one, and once it has run them at most
    /// every block: `ceil(programs / pages per block)` and `ftl.gc_free_blocks + 3` blocks a
    /// plane (the active block, the reserve, a power cut's abandoned active blocks) bound
    /// both. Its programs are a page a write or trim (a record, an out-of-place page, a DRAM
    /// flush, a trim record), and with a log buffer a merge's pages too: merges are no more
    /// than the records, and each writes at most a block's pages (and with IPL trims its
    /// log pages). The block-mapped FTL and IPL in its own layout take a free block at most
    /// once a write (a first write, a merge; a never-programmed one first, as it has the
    /// fewest erases and was freed longest ago), the hybrid FTL at most twice (a data
    /// block, a merge) and a log block every block's worth of writes.
    pub fn estimated_programmed_blocks(&self, writes: u64) -> u64 {
        let geometry = self.flash.geometry();
        let ppb = u64::from(self.flash.pages_per_block);
        let fresh = match (self.buffer.kind, self.ftl.mapping) {
            (BufferKind::IplNative, _) | (_, Mapping::Block) => writes.saturating_add(1),
            (_, Mapping::Hybrid) => writes.saturating_mul(2).saturating_add(u64::from(self.ftl.log_blocks)),
            (kind, Mapping::Page) => {
                let per_write = match kind {
                    BufferKind::Ipl => 1 + ppb + u64::from(self.ipl_log_pages()),
                    BufferKind::Dpram | BufferKind::PcmLog => 1 + ppb,
                    BufferKind::None | BufferKind::IplNative => 1,
                };
                let reserve = geometry.planes().saturating_mul(u64::from(self.ftl.gc_free_blocks) + 3);
                writes.saturating_mul(per_write).div_ceil(ppb).saturating_add(reserve)
            }
        };
        fresh.min(geometry.blocks())
    }
}
