//! What the engine keeps on its devices besides page images: the committed metadata's
//! encoding, and the units of each erase block's log area.

use nvmdb_device::flash::SECTOR_BYTES;

pub(super) use crate::devices::UNIT_HEADER_BYTES;

/// Marks a page without an image slot.
pub(super) const NO_SLOT: u32 = u32::MAX;
/// Bytes of an `ipl` log sector's header: the block's log generation and the record bytes.
pub(super) const SECTOR_HEADER_BYTES: usize = 6;
/// Record bytes a page's in-memory log sector holds (a 512 B sector less its header).
pub(super) const LOG_ROOM: usize = SECTOR_BYTES as usize - SECTOR_HEADER_BYTES;

/// What the committed metadata holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Meta {
    pub(super) root: u32,
    pub(super) next_page: u32,
    pub(super) next_lsn: u64,
    /// Image slot of each page.
    pub(super) table: Vec<u32>,
    /// Each block's log: generation and committed length (bytes in PCM, sectors in flash).
    pub(super) logs: Vec<(u32, u32)>,
}

impl Meta {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + 4 * self.table.len() + 8 * self.logs.len());
        out.extend_from_slice(&self.root.to_le_bytes());
        out.extend_from_slice(&self.next_page.to_le_bytes());
        out.extend_from_slice(&self.next_lsn.to_le_bytes());
        for slot in &self.table {
            out.extend_from_slice(&slot.to_le_bytes());
        }
        for (generation, len) in &self.logs {
            out.extend_from_slice(&generation.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        out
    }

    pub(super) fn decode(bytes: &[u8], blocks: usize) -> Option<Meta> {
        let u32_at = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
        let root = u32_at(0)?;
        let next_page = u32_at(4)?;
        let next_lsn = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
        let pages = next_page as usize;
        if bytes.len() != 16 + 4 * pages + 8 * blocks {
            return None;
        }
        let table = (0..pages).map(|p| u32_at(16 + 4 * p)).collect::<Option<Vec<_>>>()?;
        let at = 16 + 4 * pages;
        let logs = (0..blocks).map(|b| Some((u32_at(at + 8 * b)?, u32_at(at + 8 * b + 4)?))).collect::<Option<_>>()?;
        Some(Meta { root, next_page, next_lsn, table, logs })
    }
}

/// One flush of one page's records into its block's log area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unit {
    /// Byte offset (`ipl-p`) or sector index (`ipl`).
    pub(super) at: u32,
    /// Record bytes.
    pub(super) len: u32,
    /// The page the records change.
    pub(super) page: u32,
}

/// A block's log area as the engine tracks it.
#[derive(Debug, Clone, Default)]
pub(super) struct BlockLog {
    pub(super) generation: u32,
    /// Space used: bytes (`ipl-p`, a multiple of the PCM unit) or sectors (`ipl`).
    pub(super) used: u32,
    /// The units written since the last merge, in write order.
    pub(super) units: Vec<Unit>,
}
