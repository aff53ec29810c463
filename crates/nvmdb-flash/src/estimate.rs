//! The SSD stack's memory estimates, from its configuration and the layouts of the
//! structures it builds: what the command line's memory check compares with the memory
//! available before anything is allocated. `tests/memory_estimate.rs` checks each against
//! the measured peak.

use nvmdb_device::{FlashArray, PageContent};

use crate::config::{BufferKind, SsdConfig};
use crate::{dedup, ipl};

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
    /// ([`dedup::estimated_store_bytes`]). What grows with the trace comes on top:
    /// page bytes (`content = "bytes"`), the wear counters of rewritten PCM lines, and the
    /// replay's response times ([`crate::replay::estimated_response_bytes`]). `tests/memory_estimate.rs`
    /// checks it against the measured peak.
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
            ));
        }
        bytes
    }
}
