//! The thesis's PCM log buffer (seed 000, Sections 3.2.3–3.2.5), as a [`LogArea`] above
//! the page-mapped FTL ([`LogStore`]).
//!
//! The PCM log region is `n` P-blocks of `m` log sectors (`m` = pages per flash block,
//! sectors of `log_sector_bytes`, 512 B by default), preceded by the F-block → P-block
//! table (`n` rows of 16 B: F-block + 1 (0 = none), P-block, popularity). A sector holds
//! its record's write sequence number and logical page, then the record. Everything lives
//! in a real [`Pcm`] in storage mode: every record and table update is written there, its
//! bits counted and its wear tracked. The controller keeps a mirror of the table and of
//! each sector's record length (the thesis's "n × 3 array"), and from those lengths each
//! P-block's count of sectors holding a record (the "all altered" merge trigger).
//!
//! Write cases (3.2.3): (1) the page has no flash copy: the layer writes it through the
//! FTL; (2) the F-block has no P-block: take a free P-block, or replace one chosen by the
//! [`ReplacementKind`] policy (the thesis: the *least popular*; its F-block is merged), then
//! log; (3) the page already has a record: read it and rewrite the sector with the
//! combined change against the flash copy (in the content-free modes the rewrite keeps
//! the stored record's bytes outside the new change, so that only the new change's bytes
//! are fresh filler, as in bytes mode only they hold new content; the PCM is not made to
//! compare the lines of the leading entries that the rewrite keeps byte for byte, and
//! counts the write as the whole record's; a change of one range, as the content-free delta
//! policy gives, is joined into the stored record's entries read from their headers, the
//! entries it does not reach copied whole); (4) the F-block has a P-block but the page no
//! record: log it. In the content-free modes a read of a page's record (a host read, a
//! merge) copies only its header, which holds all it changes, the read counted whole.
//! The sector of a page is its offset in the block, the "simple hash". Popularity grows
//! by one per update and is reset when the P-block is freed.
//!
//! A change whose combined record exceeds a sector is written out of place by the layer.
//! When every sector of a P-block holds a record ("the log sectors in a block region are
//! all altered"), its F-block is merged.

use std::collections::{BTreeMap, BTreeSet};

use nvmdb_device::{index, PageData, Pcm, PcmConfig};

use crate::config::{ReplacementKind, SsdConfig};
use crate::ftl::PageFtl;
use crate::layer::{FlashError, Pending};
use crate::log_common::{
    apply_encoded, apply_encoded_identity, decode_ranges, decode_record, encode_record_into, encode_rewrite_into,
    encode_rewrite_one_into, fits, record_len, Append, LogArea, Record, SchemeParams, Update, RECORD_HEADER_BYTES,
};
use crate::log_store::LogStore;

/// Bytes per F-block → P-block table row.
pub const TABLE_ROW_BYTES: u64 = 16;
/// Bytes before a sector's record: its write sequence number (`u64`) and logical page
/// (`u32`), so that recovery tells a live record from one its page has outgrown.
pub const SECTOR_HEADER_BYTES: usize = 12;

/// One P-block's row as a replacement policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PBlockView {
    /// Updates logged since the P-block was assigned.
    pub popularity: u64,
    /// Sequence number of its last update.
    pub last_use: u64,
}

/// The P-block to replace (index into `rows`), ties to the lowest index; `None` when
/// there are no rows.
pub fn choose_victim(policy: ReplacementKind, rows: &[PBlockView]) -> Option<usize> {
    // The least key, then the first row holding it: two passes the compiler vectorises.
    let first_least = |key: fn(&PBlockView) -> u64| {
        let least = rows.iter().map(key).min()?;
        rows.iter().position(|r| key(r) == least)
    };
    match policy {
        ReplacementKind::LeastPopular => first_least(|r| r.popularity),
        ReplacementKind::Lru => first_least(|r| r.last_use),
    }
}

/// Belady's offline choice: the P-block whose F-block is next written farthest in the
/// future (`None`: never again, chosen first), ties to the lowest index; `None` when there
/// are no rows.
pub fn choose_victim_offline(next_write: &[Option<u64>]) -> Option<usize> {
    (0..next_write.len()).max_by_key(|&i| (next_write[i].map_or(u64::MAX, |n| n), std::cmp::Reverse(i)))
}

/// The future the offline bound sees: for each logical block, the indices (in host-write
/// order) of the writes to it.
#[derive(Debug, Default)]
struct Oracle {
    writes_of: BTreeMap<u64, Vec<u64>>,
    position: u64,
}

impl Oracle {
    fn next_write(&self, lbn: u64) -> Option<u64> {
        let writes = self.writes_of.get(&lbn)?;
        let at = writes.partition_point(|&w| w < self.position);
        writes.get(at).copied()
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct PBlock {
    fblock: Option<u64>,
    popularity: u64,
    last_use: u64,
}

/// P-block replacements of a PCM log region.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Replacements {
    /// Replacements (each merges its victim's F-block).
    pub total: u64,
    /// Of those, the ones whose victim was the P-block a write last took from the free
    /// list: the F-block given a P-block most recently loses it first.
    pub of_newest: u64,
}

/// How a PCM log region's writes and replacements fell on its P-blocks.
#[derive(Debug)]
struct Tally {
    /// Sector writes since the region was made, per P-block: how evenly the replacement
    /// policy spreads the log's writes (and so the PCM's wear) over the P-blocks.
    sector_writes: Vec<u64>,
    /// The P-block last taken from the free list by a write.
    newest: Option<u32>,
    replacements: Replacements,
}

/// The PCM log region.
#[derive(Debug)]
pub struct PcmLogArea {
    pcm: Pcm,
    pcm_free_at_ns: u64,
    sector_bytes: u32,
    sectors_per_pblock: u32,
    table_bytes: u64,
    pblocks: Vec<PBlock>,
    /// F-block → its P-block + 1 (0 = none), indexed by F-block and grown on demand.
    fmap: Vec<u32>,
    /// F-blocks that have a P-block.
    assigned: usize,
    /// The free P-blocks (the lowest is taken first).
    free: BTreeSet<u32>,
    /// Record length of each sector, 0 = no record.
    sector_len: Vec<u16>,
    /// Sectors holding a record, per P-block.
    logged: Vec<u32>,
    /// How the replacement policy spreads the log's writes (boxed: a `Scheme` of the
    /// experiments holds the region by value beside smaller stores).
    tally: Box<Tally>,
    policy: ReplacementKind,
    use_seq: u64,
    /// Set by [`PcmLogStore::set_offline_future`]: Belady's bound replaces the policy.
    oracle: Option<Oracle>,
    /// Each P-block's row as the replacement policy sees it, kept beside `pblocks`.
    rows: Vec<PBlockView>,
    /// Scratch bytes of the record being written, reused.
    sector_buf: Vec<u8>,
    /// Scratch bytes of one sector read, reused (a whole sector long).
    read_buf: Vec<u8>,
    /// Bytes of `read_buf` the last read filled.
    read_len: usize,
    /// Scratch ranges of a record, reused.
    ranges: Vec<(u32, u32)>,
}

/// The PCM log buffer above the page-mapped FTL.
pub type PcmLogStore = LogStore<PcmLogArea>;

impl LogStore<PcmLogArea> {
    /// Replaces the replacement policy by Belady's offline bound for the host writes to
    /// come: `future_lpns` are the logical pages of the next host writes, in order (the
    /// caller knows them, e.g. by generating a synthetic workload twice). The bound is
    /// a measuring tool, not a policy an SSD could run.
    pub fn set_offline_future(&mut self, future_lpns: &[u64]) {
        let m = u64::from(self.ftl().geometry().pages_per_block);
        let mut writes_of: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for (i, &lpn) in future_lpns.iter().enumerate() {
            // Position i + 1: the area's position counts the write being served.
            writes_of.entry(lpn / m).or_default().push(i as u64 + 1);
        }
        self.area_mut().oracle = Some(Oracle { writes_of, position: 0 });
    }

    /// Builds the store from the configuration.
    pub fn new(config: &SsdConfig) -> Result<PcmLogStore, FlashError> {
        PcmLogStore::with_params(&SchemeParams::from_config(config))
    }

    /// Builds the store from explicit parameters.
    pub fn with_params(params: &SchemeParams) -> Result<PcmLogStore, FlashError> {
        let ftl = PageFtl::new(&params.config)?;
        let area = PcmLogArea::new(params, ftl.geometry().pages_per_block)?;
        let host_pages = ftl.logical_pages();
        LogStore::over(ftl, area, host_pages, params.delta_policy(), params.merge_scope(), params.config.seed)
    }
}

use crate::layer::PageStore as _;

impl PcmLogArea {
    /// A region of `params.pcm_bytes` with P-blocks of `m` sectors.
    pub fn new(params: &SchemeParams, m: u32) -> Result<PcmLogArea, FlashError> {
        let sector_bytes = params.config.buffer.log_sector_bytes;
        if !(64..=4096).contains(&sector_bytes) {
            return Err(FlashError::Config(format!("buffer.log_sector_bytes must be 64..=4096, not {sector_bytes}")));
        }
        let pblock_bytes = u64::from(m) * u64::from(sector_bytes);
        let n = params.pcm_bytes / (pblock_bytes + TABLE_ROW_BYTES);
        if n == 0 {
            return Err(FlashError::Config(format!(
                "buffer.pcm_mb gives {} bytes, less than one P-block of {pblock_bytes} bytes",
                params.pcm_bytes
            )));
        }
        let table_bytes = (n * TABLE_ROW_BYTES).div_ceil(64) * 64;
        let capacity = (table_bytes + n * pblock_bytes).div_ceil(64) * 64;
        let mut pcm_config = PcmConfig::new(capacity);
        pcm_config.storage = params.config.buffer.pcm_timing.timing();
        pcm_config.accounting = params.config.buffer.pcm_accounting;
        Ok(PcmLogArea {
            pcm: Pcm::new(pcm_config)?,
            pcm_free_at_ns: 0,
            sector_bytes,
            sectors_per_pblock: m,
            table_bytes,
            pblocks: vec![PBlock::default(); n as usize],
            fmap: Vec::new(),
            assigned: 0,
            free: (0..n as u32).collect(),
            sector_len: vec![0; (n * u64::from(m)) as usize],
            logged: vec![0; n as usize],
            tally: Box::new(Tally {
                sector_writes: vec![0; n as usize],
                newest: None,
                replacements: Replacements::default(),
            }),
            policy: params.config.buffer.replacement,
            use_seq: 0,
            oracle: None,
            rows: vec![PBlockView { popularity: 0, last_use: 0 }; n as usize],
            sector_buf: Vec::new(),
            read_buf: vec![0; sector_bytes as usize],
            read_len: 0,
            ranges: Vec::new(),
        })
    }

    /// P-blocks in the log region.
    pub fn pblocks(&self) -> usize {
        self.pblocks.len()
    }

    /// Sector writes since the region was made, per P-block.
    pub fn sector_writes(&self) -> &[u64] {
        &self.tally.sector_writes
    }

    /// The replacements since the region was made.
    pub fn replacements(&self) -> Replacements {
        self.tally.replacements
    }

    /// The F-blocks that have a P-block now, ascending.
    pub fn fblocks(&self) -> Vec<u64> {
        self.mapped().map(|(f, _)| f).collect()
    }

    /// `(F-block, P-block)` of every F-block that has a P-block, ascending.
    fn mapped(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.fmap.iter().enumerate().filter(|(_, &p)| p != 0).map(|(f, &p)| (f as u64, p - 1))
    }

    /// The P-block of an F-block.
    fn pblock_of(&self, lbn: u64) -> Option<u32> {
        self.fmap.get(index(lbn)).and_then(|&p| p.checked_sub(1))
    }

    /// Gives F-block `lbn` P-block `p` (in the mirror only).
    fn assign(&mut self, lbn: u64, p: u32) {
        let at = index(lbn);
        if at >= self.fmap.len() {
            self.fmap.resize(at + 1, 0);
        }
        self.fmap[at] = p + 1;
        self.assigned += 1;
        self.free.remove(&p);
        self.pblocks[p as usize].fblock = Some(lbn);
    }

    /// Sets P-block `p`'s row (in the mirror only), keeping the policy's view beside it.
    fn set_row(&mut self, p: u32, row: PBlock) {
        self.pblocks[p as usize] = row;
        self.rows[p as usize] = PBlockView { popularity: row.popularity, last_use: row.last_use };
    }

    fn sector_index(&self, pblock: u32, offset: u32) -> usize {
        (pblock * self.sectors_per_pblock + offset) as usize
    }

    /// Sets the record length of P-block `pblock`'s sector `offset` (0: no record),
    /// keeping the P-block's count of sectors with a record.
    fn set_sector_len(&mut self, pblock: u32, offset: u32, len: u16) {
        let at = self.sector_index(pblock, offset);
        let (was, is) = (self.sector_len[at] != 0, len != 0);
        self.sector_len[at] = len;
        let logged = &mut self.logged[pblock as usize];
        *logged = *logged + u32::from(is) - u32::from(was);
    }

    fn sector_addr(&self, pblock: u32, offset: u32) -> u64 {
        self.table_bytes + self.sector_index(pblock, offset) as u64 * u64::from(self.sector_bytes)
    }

    fn pcm_op(&mut self, now_ns: u64, service_ns: u64) -> u64 {
        let start = now_ns.max(self.pcm_free_at_ns);
        self.pcm_free_at_ns = start + service_ns;
        self.pcm_free_at_ns
    }

    fn write_table_row(&mut self, ftl: &mut PageFtl, pblock: u32, now_ns: u64) -> Result<u64, FlashError> {
        let row = self.pblocks[pblock as usize];
        let mut bytes = [0u8; TABLE_ROW_BYTES as usize];
        bytes[0..4].copy_from_slice(&(row.fblock.map_or(0, |f| f + 1) as u32).to_le_bytes());
        bytes[4..8].copy_from_slice(&pblock.to_le_bytes());
        bytes[8..16].copy_from_slice(&row.popularity.to_le_bytes());
        ftl.admit()?;
        let ns = self.pcm.storage_write(u64::from(pblock) * TABLE_ROW_BYTES, &bytes)?;
        Ok(self.pcm_op(now_ns, ns))
    }

    /// Bytes of the PCM at `addr`, without accounting (invariant checks).
    fn peek(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        self.pcm.peek_bytes(addr, &mut out).expect("the table and sectors lie within the PCM");
        out
    }

    fn locate(&self, lpn: u64) -> (u64, u32) {
        let m = u64::from(self.sectors_per_pblock);
        (lpn / m, (lpn % m) as u32)
    }

    /// Reads a page's record, if it has one.
    fn read_record(&mut self, lpn: u64, now_ns: u64) -> Result<Option<(Record, u64)>, FlashError> {
        Ok(self.read_sector(lpn, now_ns)?.map(|t| (decode_record(self.record_read()), t)))
    }

    /// Reads a page's sector (its record's bytes) into `read_buf` if it holds a record;
    /// returns when the read is done.
    fn read_sector(&mut self, lpn: u64, now_ns: u64) -> Result<Option<u64>, FlashError> {
        self.read_sector_head(lpn, now_ns, usize::MAX)
    }

    /// [`PcmLogArea::read_sector`] that copies at most the record's first `head` bytes,
    /// the read counted and timed whole.
    fn read_sector_head(&mut self, lpn: u64, now_ns: u64, head: usize) -> Result<Option<u64>, FlashError> {
        let (lbn, offset) = self.locate(lpn);
        let Some(pblock) = self.pblock_of(lbn) else { return Ok(None) };
        let len = self.sector_len[self.sector_index(pblock, offset)];
        if len == 0 {
            return Ok(None);
        }
        let addr = self.sector_addr(pblock, offset);
        self.read_len = usize::from(len).min(SECTOR_HEADER_BYTES.saturating_add(head));
        let ns = self.pcm.storage_read_head(addr, u64::from(len), &mut self.read_buf[..self.read_len])?;
        Ok(Some(self.pcm_op(now_ns, ns)))
    }

    /// The record of the sector [`PcmLogArea::read_sector`] read last.
    fn record_read(&self) -> &[u8] {
        &self.read_buf[SECTOR_HEADER_BYTES..self.read_len]
    }

    /// The P-block of `lbn`, a free one, or the victim to merge first.
    fn pblock_for(&mut self, lbn: u64) -> Result<u32, u64> {
        if let Some(p) = self.pblock_of(lbn) {
            return Ok(p);
        }
        if let Some(&p) = self.free.first() {
            self.assign(lbn, p);
            self.tally.newest = Some(p);
            return Ok(p);
        }
        let victim = match &self.oracle {
            Some(oracle) => {
                let next: Vec<Option<u64>> =
                    self.pblocks.iter().map(|p| p.fblock.and_then(|f| oracle.next_write(f))).collect();
                choose_victim_offline(&next)
            }
            None => choose_victim(self.policy, &self.rows),
        }
        .expect("at least one P-block");
        let tally = &mut self.tally;
        tally.replacements.total += 1;
        tally.replacements.of_newest += u64::from(tally.newest == Some(victim as u32));
        Err(self.pblocks[victim].fblock.expect("no free P-block means all are assigned"))
    }
}

impl PcmLogArea {
    /// Logs `ranges` (the page's whole change against its flash copy) for `update` in the
    /// page's sector, once its F-block has a P-block. `rewrite`: `read_buf` holds the page's
    /// record (content-free modes), whose bytes outside the update's change are kept.
    fn log(
        &mut self,
        ftl: &mut PageFtl,
        update: &Update,
        ranges: &[(u32, u32)],
        rewrite: bool,
        ready_ns: u64,
    ) -> Result<Append, FlashError> {
        if !fits(ranges, self.sector_bytes - SECTOR_HEADER_BYTES as u32) {
            return Ok(Append::Unloggable);
        }
        let pblock = match self.pblock_for(update.lbn) {
            Ok(p) => p,
            Err(victim) => return Ok(Append::NeedMerge(victim)),
        };
        let mut record = self.sector_header(update);
        let kept = if rewrite && update.page.is_none() {
            let old = &self.read_buf[SECTOR_HEADER_BYTES..self.read_len];
            encode_rewrite_into(&mut record, ranges, update.fingerprint, update.salt, update.change, old)
        } else {
            encode_record_into(&mut record, ranges, update.fingerprint, update.page, update.salt);
            RECORD_HEADER_BYTES as usize
        };
        self.store(ftl, update, pblock, record, kept, ready_ns)
    }

    /// Case 3 of a content-free update whose change is one non-empty range, `read_buf`
    /// holding the page's record: the record rewritten with the change joined in, as
    /// [`PcmLogArea::log`] rewrites it given the joined ranges.
    fn rewrite_one(&mut self, ftl: &mut PageFtl, update: &Update, ready_ns: u64) -> Result<Append, FlashError> {
        let mut record = self.sector_header(update);
        let old = &self.read_buf[SECTOR_HEADER_BYTES..self.read_len];
        let room = self.sector_bytes as usize - SECTOR_HEADER_BYTES;
        let Some(kept) =
            encode_rewrite_one_into(&mut record, update.fingerprint, update.salt, update.change[0], old, room)
        else {
            self.sector_buf = record;
            return Ok(Append::Unloggable);
        };
        let pblock = self.pblock_of(update.lbn).expect("a page with a record has a P-block");
        self.store(ftl, update, pblock, record, kept, ready_ns)
    }

    /// The scratch sector buffer, holding `update`'s sector header.
    fn sector_header(&mut self, update: &Update) -> Vec<u8> {
        let mut record = std::mem::take(&mut self.sector_buf);
        record.clear();
        record.extend_from_slice(&update.seq.to_le_bytes());
        record.extend_from_slice(&(update.lpn as u32).to_le_bytes());
        record
    }

    /// Writes `record` (a sector header and record) to `update`'s sector of `pblock`, and
    /// the P-block's table row: `kept` is where the record's bytes that can differ from the
    /// stored record's resume, after its header (the bytes between are not compared).
    fn store(
        &mut self,
        ftl: &mut PageFtl,
        update: &Update,
        pblock: u32,
        record: Vec<u8>,
        kept: usize,
        ready_ns: u64,
    ) -> Result<Append, FlashError> {
        let addr = self.sector_addr(pblock, update.offset);
        // (On an error the scratch buffer is dropped; a fresh one replaces it.)
        let unchanged = SECTOR_HEADER_BYTES + RECORD_HEADER_BYTES as usize..SECTOR_HEADER_BYTES + kept;
        ftl.admit()?;
        let ns = self.pcm.storage_write_known(addr, &record, unchanged)?;
        let len = record.len();
        self.set_sector_len(pblock, update.offset, len as u16);
        self.tally.sector_writes[pblock as usize] += 1;
        self.sector_buf = record;
        let done = self.pcm_op(ready_ns, ns);
        self.use_seq += 1;
        let row = PBlock {
            popularity: self.pblocks[pblock as usize].popularity + 1,
            last_use: self.use_seq,
            ..self.pblocks[pblock as usize]
        };
        self.set_row(pblock, row);
        let done = done.max(self.write_table_row(ftl, pblock, done)?);
        let all_altered = self.logged[pblock as usize] == self.sectors_per_pblock;
        Ok(Append::Logged { done_ns: done, merge: all_altered.then_some(update.lbn) })
    }
}

impl LogArea for PcmLogArea {
    fn name(&self) -> &'static str {
        "pcm-log"
    }

    fn has_records(&self, lpn: u64) -> bool {
        let (lbn, offset) = self.locate(lpn);
        self.pblock_of(lbn).is_some_and(|p| self.sector_len[self.sector_index(p, offset)] != 0)
    }

    fn records(&mut self, _ftl: &mut PageFtl, lpn: u64, now_ns: u64) -> Result<(Vec<Record>, u64), FlashError> {
        Ok(match self.read_record(lpn, now_ns)? {
            Some((record, t)) => (vec![record], t),
            None => (Vec::new(), now_ns),
        })
    }

    fn apply_records(
        &mut self,
        _ftl: &mut PageFtl,
        lpn: u64,
        page: PageData,
        now_ns: u64,
    ) -> Result<(PageData, u64), FlashError> {
        // A page without bytes takes only its record's content identity, from its header.
        if matches!(page, PageData::Bytes(_)) {
            return Ok(match self.read_sector(lpn, now_ns)? {
                Some(t) => (apply_encoded(page, self.record_read()), t),
                None => (page, now_ns),
            });
        }
        Ok(match self.read_sector_head(lpn, now_ns, RECORD_HEADER_BYTES as usize)? {
            Some(t) => (apply_encoded_identity(page, self.record_read()), t),
            None => (page, now_ns),
        })
    }

    fn append(&mut self, ftl: &mut PageFtl, update: &Update, now_ns: u64) -> Result<Append, FlashError> {
        // Case 3: the sector keeps the change against the flash copy.
        if let (None, None, &[(_, 1..)]) = (update.base_change, update.page, update.change) {
            if let Some(ready_ns) = self.read_sector(update.lpn, now_ns)? {
                return self.rewrite_one(ftl, update, ready_ns);
            }
            return self.log(ftl, update, update.change, false, now_ns);
        }
        let mut ranges = std::mem::take(&mut self.ranges);
        ranges.clear();
        let (ready_ns, rewrite) = match update.base_change {
            Some(base) => {
                ranges.extend_from_slice(base);
                (now_ns, false)
            }
            None => {
                let read = self.read_sector(update.lpn, now_ns)?;
                if read.is_some() {
                    decode_ranges(self.record_read(), &mut ranges);
                }
                for &(o, l) in update.change {
                    nvmdb_workload::synth::union_range(&mut ranges, o, l);
                }
                (read.unwrap_or(now_ns), read.is_some())
            }
        };
        let logged = self.log(ftl, update, &ranges, rewrite, ready_ns);
        self.ranges = ranges;
        logged
    }

    fn drop_page(&mut self, _ftl: &mut PageFtl, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let (lbn, offset) = self.locate(lpn);
        if let Some(p) = self.pblock_of(lbn) {
            self.set_sector_len(p, offset, 0);
        }
        Ok(now_ns)
    }

    fn drop_block(&mut self, ftl: &mut PageFtl, lbn: u64, now_ns: u64) -> Result<u64, FlashError> {
        let Some(pblock) = self.pblock_of(lbn) else { return Ok(now_ns) };
        self.fmap[index(lbn)] = 0;
        self.assigned -= 1;
        self.free.insert(pblock);
        self.set_row(pblock, PBlock::default());
        let first = self.sector_index(pblock, 0);
        self.sector_len[first..first + self.sectors_per_pblock as usize].fill(0);
        self.logged[pblock as usize] = 0;
        self.write_table_row(ftl, pblock, now_ns)
    }
    fn logged_blocks(&self) -> Vec<u64> {
        self.mapped().filter(|&(_, p)| self.logged[p as usize] > 0).map(|(f, _)| f).collect()
    }

    /// A page's changes are folded into one record: records and pages are the same count.
    fn pending(&self) -> Pending {
        let logged: u64 = self.logged.iter().map(|&n| u64::from(n)).sum();
        Pending { log_records: logged, log_pages: logged, dram_pages: 0 }
    }

    fn logged_offsets(&self, lbn: u64) -> Vec<u32> {
        let Some(p) = self.pblock_of(lbn) else { return Vec::new() };
        (0..self.sectors_per_pblock).filter(|&o| self.sector_len[self.sector_index(p, o)] != 0).collect()
    }

    fn check(&self, ftl: &PageFtl) -> Result<(), String> {
        for (f, p) in self.mapped() {
            if self.pblocks[p as usize].fblock != Some(f) {
                return Err(format!("F-block {f} maps to P-block {p}, whose row says {:?}", self.pblocks[p as usize]));
            }
            for o in self.logged_offsets(f) {
                let lpn = f * u64::from(self.sectors_per_pblock) + u64::from(o);
                if !ftl.is_mapped(lpn) {
                    return Err(format!("page {lpn} has a log record but no flash copy"));
                }
            }
        }
        let assigned = self.pblocks.iter().filter(|p| p.fblock.is_some()).count();
        for (p, row) in self.pblocks.iter().enumerate() {
            if self.rows[p] != (PBlockView { popularity: row.popularity, last_use: row.last_use }) {
                return Err(format!("P-block {p}: the policy's view {:?} disagrees with {row:?}", self.rows[p]));
            }
        }
        let mapped = self.mapped().count();
        if assigned != mapped || mapped != self.assigned {
            return Err(format!(
                "{assigned} P-blocks assigned but {mapped} F-blocks mapped (counted {})",
                self.assigned
            ));
        }
        let free: BTreeSet<u32> =
            (0..self.pblocks.len() as u32).filter(|&p| self.pblocks[p as usize].fblock.is_none()).collect();
        if free != self.free {
            return Err(format!("free P-blocks {free:?}, but the free set holds {:?}", self.free));
        }
        // The table in PCM says what the controller's mirror says, and every logged
        // sector in PCM names its own page.
        for (p, row) in self.pblocks.iter().enumerate() {
            let bytes = self.peek(p as u64 * TABLE_ROW_BYTES, TABLE_ROW_BYTES as usize);
            let fblock = u64::from(u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes")));
            let popularity = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
            if fblock != row.fblock.map_or(0, |f| f + 1) || popularity != row.popularity {
                return Err(format!("P-block {p}: PCM table row disagrees with the controller's {row:?}"));
            }
            let Some(f) = row.fblock else { continue };
            for o in self.logged_offsets(f) {
                let header = self.peek(self.sector_addr(p as u32, o), SECTOR_HEADER_BYTES);
                let owner = u64::from(u32::from_le_bytes(header[8..12].try_into().expect("4 bytes")));
                if owner != f * u64::from(self.sectors_per_pblock) + u64::from(o) {
                    return Err(format!("P-block {p} sector {o} holds page {owner}'s record"));
                }
            }
        }
        for (p, row) in self.pblocks.iter().enumerate() {
            let first = p * self.sectors_per_pblock as usize;
            let used =
                self.sector_len[first..first + self.sectors_per_pblock as usize].iter().filter(|&&l| l != 0).count();
            if used != self.logged[p] as usize {
                return Err(format!("P-block {p} has {used} sectors with records, but counts {}", self.logged[p]));
            }
            let used = used != 0;
            if row.fblock.is_none() && (used || row.popularity != 0) {
                return Err(format!("free P-block {p} holds records or popularity"));
            }
        }
        Ok(())
    }

    fn recover(&mut self, ftl: &mut PageFtl, host_pages: u64) -> Result<(), FlashError> {
        self.fmap.clear();
        self.assigned = 0;
        self.free = (0..self.pblocks.len() as u32).collect();
        self.sector_len.fill(0);
        self.logged.fill(0);
        self.use_seq = 0;
        let m = self.sectors_per_pblock;
        for p in 0..self.pblocks.len() as u32 {
            let mut row = [0u8; TABLE_ROW_BYTES as usize];
            self.pcm.storage_read(u64::from(p) * TABLE_ROW_BYTES, &mut row)?;
            let fblock = u32::from_le_bytes(row[0..4].try_into().expect("4 bytes"));
            let popularity = u64::from_le_bytes(row[8..16].try_into().expect("8 bytes"));
            self.set_row(p, PBlock::default());
            let Some(fblock) = u64::from(fblock).checked_sub(1) else { continue };
            self.assign(fblock, p);
            self.set_row(p, PBlock { fblock: Some(fblock), popularity, last_use: 0 });
            for offset in 0..m {
                let lpn = fblock * u64::from(m) + u64::from(offset);
                let mut sector = vec![0u8; self.sector_bytes as usize];
                self.pcm.storage_read(self.sector_addr(p, offset), &mut sector)?;
                let seq = u64::from_le_bytes(sector[0..8].try_into().expect("8 bytes"));
                let owner = u32::from_le_bytes(sector[8..12].try_into().expect("4 bytes"));
                ftl.note_seq(seq);
                let newer = ftl.page_seq(lpn).is_some_and(|copy| seq > copy);
                if u64::from(owner) != lpn || lpn >= host_pages || !newer {
                    continue;
                }
                if let Some(len) = record_len(&sector[SECTOR_HEADER_BYTES..]).filter(|&l| l > 0) {
                    self.set_sector_len(p, offset, (SECTOR_HEADER_BYTES + len) as u16);
                }
            }
        }
        Ok(())
    }

    fn pcm(&self) -> Option<&Pcm> {
        Some(&self.pcm)
    }

    fn host_write(&mut self, _lbn: u64) {
        if let Some(oracle) = &mut self.oracle {
            oracle.position += 1;
        }
    }

    fn reset_stats(&mut self) {
        self.pcm.reset_stats();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FlashSection, FtlSection};
    use crate::layer::PageStore;
    use nvmdb_device::{PageContent, PageData};

    fn store(pblocks: u64) -> PcmLogStore {
        store_in(PageContent::Fingerprint, pblocks)
    }

    fn store_in(content: PageContent, pblocks: u64) -> PcmLogStore {
        let base = SsdConfig::default();
        let config = SsdConfig {
            content,
            flash: FlashSection {
                packages: 1,
                planes_per_package: 1,
                blocks_per_plane: 16,
                pages_per_block: 4,
                ..base.flash
            },
            ftl: FtlSection { overprovision: 0.25, ..base.ftl },
            ..base
        };
        let mut params = SchemeParams::from_config(&config);
        params.pcm_bytes = pblocks * (4 * 512 + TABLE_ROW_BYTES);
        PcmLogStore::with_params(&params).unwrap()
    }

    #[test]
    fn victims_are_pure_decisions() {
        let rows = [
            PBlockView { popularity: 3, last_use: 9 },
            PBlockView { popularity: 1, last_use: 10 },
            PBlockView { popularity: 1, last_use: 2 },
        ];
        assert_eq!(choose_victim(ReplacementKind::LeastPopular, &rows), Some(1), "ties go to the lowest index");
        assert_eq!(choose_victim(ReplacementKind::Lru, &rows), Some(2));
        assert_eq!(choose_victim(ReplacementKind::Lru, &[]), None);
        assert_eq!(choose_victim_offline(&[Some(4), None, Some(9), None]), Some(1), "never again beats any time");
        assert_eq!(choose_victim_offline(&[Some(4), Some(9), Some(2)]), Some(1));
        assert_eq!(choose_victim_offline(&[]), None);
    }

    #[test]
    fn the_offline_bound_replaces_the_block_not_written_again() {
        // Two P-blocks; updates to blocks 0, 0, 1, 2, 1. At the write to block 2 the
        // thesis's policy replaces block 1 (less popular) and block 1 then misses again;
        // the offline bound replaces block 0, never written again.
        let future = [0u64, 1, 4, 8, 5];
        let merges = |offline: bool| {
            let mut s = store(2);
            for lpn in 0..12 {
                s.write_update(lpn, PageData::Fingerprint(lpn), None, 0).unwrap();
            }
            if offline {
                s.set_offline_future(&future);
            }
            for (i, &lpn) in future.iter().enumerate() {
                s.write_update(lpn, PageData::Fingerprint(100 + i as u64), Some(&[(0, 8)]), 0).unwrap();
                s.check_invariants().unwrap();
            }
            s.stats().merges
        };
        assert_eq!((merges(false), merges(true)), (2, 1));
    }

    #[test]
    fn first_writes_go_through_the_ftl_and_the_least_popular_pblock_is_merged() {
        let mut s = store(2);
        assert_eq!(s.area().pblocks(), 2);
        // First writes of blocks 0, 1, 2, in any order: case 1, no log, no merge.
        for lpn in [9u64, 0, 5, 11, 1, 2, 3, 4, 6, 7, 8, 10] {
            s.write_update(lpn, PageData::Fingerprint(lpn + 100), None, 0).unwrap();
        }
        let st = s.stats();
        assert_eq!((st.merges, st.direct_writes, st.flash_page_programs), (0, 12, 12));
        let small = [(8u32, 40u32)];
        // Block 0 updated three times, block 1 once: both get P-blocks (cases 2 and 3/4).
        for (i, lpn) in [0u64, 1, 0].into_iter().enumerate() {
            s.write_update(lpn, PageData::Fingerprint(200 + i as u64), Some(&small), 0).unwrap();
        }
        s.write_update(5, PageData::Fingerprint(300), Some(&small), 0).unwrap();
        assert_eq!(s.area().fblocks(), vec![0, 1]);
        assert_eq!(s.stats().flash_page_programs, 12, "updates are logged, not programmed");
        // Block 2 needs a P-block: block 1 (popularity 1) is the victim, block 0 stays.
        s.write_update(9, PageData::Fingerprint(400), Some(&small), 0).unwrap();
        let st = s.stats();
        assert_eq!(st.merges, 1);
        assert_eq!(st.merge_page_writes, 4, "the merge writes block 1's four live pages");
        assert_eq!(s.area().fblocks(), vec![0, 2]);
        // P-block 0 took block 0's three updates; P-block 1, the one taken last, block 1's
        // update and, replaced, block 2's.
        assert_eq!(s.area().sector_writes(), &[3, 2]);
        assert_eq!(s.area().replacements(), Replacements { total: 1, of_newest: 1 });
        for (lpn, id) in [(5, 300), (0, 202), (1, 201), (9, 400), (4, 104)] {
            assert_eq!(s.read(lpn, 0).unwrap().0, PageData::Fingerprint(id), "page {lpn}");
        }
        s.check_invariants().unwrap();
    }

    #[test]
    fn case_three_keeps_the_union_and_an_overflow_is_written_out_of_place() {
        let mut s = store(2);
        for lpn in 0..4 {
            s.write_update(lpn, PageData::Fingerprint(lpn), None, 0).unwrap();
        }
        s.write_update(2, PageData::Fingerprint(10), Some(&[(0, 100)]), 0).unwrap();
        s.write_update(2, PageData::Fingerprint(11), Some(&[(50, 100)]), 0).unwrap();
        let (record, _) = s.area_mut().read_record(2, 0).unwrap().unwrap();
        assert_eq!(record.ranges(), vec![(0, 150)]);
        assert_eq!(record.fingerprint, 11);
        let programs = s.stats().flash_page_programs;
        // A change beyond the sector's room is one out-of-place page write, not a merge.
        s.write_update(2, PageData::Fingerprint(12), Some(&[(1000, 600)]), 0).unwrap();
        let st = s.stats();
        assert_eq!((st.merges, st.out_of_place_writes, st.flash_page_programs), (0, 1, programs + 1));
        assert!(!s.area().has_records(2));
        assert_eq!(s.read(2, 0).unwrap().0, PageData::Fingerprint(12));
        // An empty change is a no-op.
        s.write_update(3, PageData::Fingerprint(3), Some(&[]), 0).unwrap();
        assert_eq!(s.stats().unchanged_writes, 1);
        s.check_invariants().unwrap();
    }

    /// Page 2's record after `updates` disjoint 40-byte changes at offsets 0, 100, 200, …
    /// and the PCM bits and words each update wrote.
    fn disjoint_updates(content: PageContent, updates: u32) -> (Vec<Record>, Vec<(u64, u64)>) {
        let mut s = store_in(content, 2);
        let mut page = vec![0u8; 4096];
        let mut x = 7u64;
        let mut fill = |bytes: &mut [u8]| {
            for b in bytes {
                x = nvmdb_device::splitmix64(x);
                *b = x as u8;
            }
        };
        fill(&mut page);
        let data = |page: &[u8]| match content {
            PageContent::Bytes => PageData::Bytes(page.to_vec()),
            _ => PageData::Empty,
        };
        for lpn in 0..4 {
            s.write_update(lpn, data(&page), None, 0).unwrap();
        }
        let (mut records, mut written) = (Vec::new(), Vec::new());
        for i in 0..updates {
            let range = (i * 100, 40);
            fill(&mut page[range.0 as usize..(range.0 + range.1) as usize]);
            let before = *s.area().pcm().unwrap().stats();
            s.write_update(2, data(&page), Some(&[range]), 0).unwrap();
            let after = s.area().pcm().unwrap().stats();
            written.push((after.bits_written - before.bits_written, after.words_written - before.words_written));
            records.push(s.area_mut().read_record(2, 0).unwrap().unwrap().0);
            s.check_invariants().unwrap();
        }
        (records, written)
    }

    #[test]
    fn a_content_free_rewrite_keeps_the_earlier_ranges_bytes() {
        for content in [PageContent::None, PageContent::Fingerprint, PageContent::Bytes] {
            let (records, _) = disjoint_updates(content, 6);
            for pair in records.windows(2) {
                let (before, after) = (&pair[0], &pair[1]);
                assert_eq!(after.entries.len(), before.entries.len() + 1, "{content:?}: disjoint ranges");
                // Every earlier range keeps its bytes; the new one is the last entry.
                assert_eq!(after.entries[..before.entries.len()], before.entries[..], "{content:?}");
            }
        }
        // A change over an earlier range gets fresh filler there, and only there; a range
        // inserted before the others moves their bytes along in the record.
        let mut s = store_in(PageContent::None, 2);
        for lpn in 0..4 {
            s.write_update(lpn, PageData::Empty, None, 0).unwrap();
        }
        s.write_update(2, PageData::Empty, Some(&[(100, 100)]), 0).unwrap();
        let first = s.area_mut().read_record(2, 0).unwrap().unwrap().0;
        s.write_update(2, PageData::Empty, Some(&[(140, 20), (0, 10)]), 0).unwrap();
        let second = s.area_mut().read_record(2, 0).unwrap().unwrap().0;
        assert_eq!(second.ranges(), vec![(0, 10), (100, 100)]);
        let (old, new) = (&first.entries[0].1, &second.entries[1].1);
        assert_eq!((&old[..40], &old[60..]), (&new[..40], &new[60..]), "outside the change: kept");
        assert_ne!(&old[40..60], &new[40..60], "the change: fresh filler");
    }

    #[test]
    fn a_content_free_rewrite_costs_the_pcm_what_a_bytes_mode_rewrite_costs() {
        // Six disjoint 40-byte updates of one page: a rewrite of the folded record writes
        // the new range and the record's header, whatever the record already holds.
        let (_, none) = disjoint_updates(PageContent::None, 6);
        let (_, bytes) = disjoint_updates(PageContent::Bytes, 6);
        println!("PCM (bits, words) written per update: none {none:?}, bytes {bytes:?}");
        for (i, (&(n_bits, n_words), &(b_bits, b_words))) in none.iter().zip(&bytes).enumerate() {
            // Within 64 bits and 4 words of bytes mode's update (the salt changes no more
            // than the new range's filler; bytes mode's record header is the same size).
            assert!(n_bits.abs_diff(b_bits) <= 64, "update {i}: none {n_bits} bits, bytes {b_bits}");
            assert!(n_words.abs_diff(b_words) <= 4, "update {i}: none {n_words} words, bytes {b_words}");
        }
    }

    #[test]
    fn a_pblock_with_every_sector_altered_is_merged() {
        let mut s = store(2);
        for lpn in 0..4 {
            s.write_update(lpn, PageData::Fingerprint(lpn), None, 0).unwrap();
        }
        for lpn in 0..3 {
            s.write_update(lpn, PageData::Fingerprint(lpn + 10), Some(&[(0, 8)]), 0).unwrap();
        }
        assert_eq!(s.stats().merges, 0);
        s.write_update(3, PageData::Fingerprint(13), Some(&[(0, 8)]), 0).unwrap();
        assert_eq!(s.stats().merges, 1);
        assert!(s.area().fblocks().is_empty());
        for lpn in 0..4 {
            assert_eq!(s.read(lpn, 0).unwrap().0, PageData::Fingerprint(lpn + 10));
        }
        s.check_invariants().unwrap();
    }
}
