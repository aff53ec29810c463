//! The rollback journal in PCM: a manager frame, one header frame per journal, and data
//! frames of portions (Section 5.2, Figure 7). The VFS hands it SQLite's journal-file
//! writes; it stores them in these structures and rebuilds the file's bytes on reads.
//!
//! The Rust fields below are the DRAM copy. Under `S2` the quasi-non-volatile and
//! non-functional metadata (presence and reusable bits, reuse counters, first-free
//! pointers) live only there; without `S2` every change to them is also written to PCM.
//! Recovery ([`PcmJournal::recover`]) reads only PCM.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::JournalConfig;
use crate::devices::Devices;
use crate::error::JournalError;
use crate::flag;
use crate::layout::*;

/// The state of a frame (Section 5.2: presence and reusable bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameState {
    /// Free for any DB file (presence 0, reusable 0).
    Invalid,
    /// In use by a journal (presence 1, reusable 1).
    Active,
    /// Free, but only for the DB file it last served (presence 0, reusable 1).
    Reuse,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    None,
    /// A header frame, of this manager descriptor slot.
    Header(usize),
    /// A data frame, of this header frame.
    Data(usize),
}

/// DRAM mirror of one data-frame descriptor that this header frame may still use.
#[derive(Debug, Clone, Copy)]
struct Desc {
    pgno: [u8; 4],
    frame: usize,
    portion: usize,
    valid: bool,
    /// Holds a record of the current journal.
    in_use: bool,
    /// Its portion last held an image of the same DB page (a reuse).
    reused: bool,
}

/// A journal header segment after the first: SQLite writes a new header, at a sector
/// boundary after the last page record, when its page cache spills within a transaction.
#[derive(Debug, Clone, Copy)]
struct Segment {
    /// The header's offset in the journal file.
    offset: u64,
    /// The index of the segment's first page record.
    first: usize,
}

/// DRAM view of one DB file's journal (its header frame).
#[derive(Debug, Clone, Default)]
struct Journal {
    frame: Option<usize>,
    active: bool,
    header: [u8; SQLITE_HEADER_BYTES],
    slot: u32,
    seq: u32,
    page_size: u64,
    descs: BTreeMap<usize, Desc>,
    records: Vec<usize>,
    fresh: Option<(usize, usize)>,
    file_end: u64,
    /// Descriptors initialised in this header frame (`HF_DESC_HWM`).
    hwm: usize,
    /// Header segments after the first, in file order (`HF_SEGMENTS` and its table).
    segments: Vec<Segment>,
}

impl Journal {
    /// The segment holding file offset `pos` (`None`: the first, whose header is at 0):
    /// its header offset, first record and records.
    fn segment_of(&self, pos: u64) -> (Option<usize>, u64, usize, usize) {
        let s = self.segments.iter().rposition(|g| g.offset <= pos);
        let (offset, first) = s.map_or((0, 0), |s| (self.segments[s].offset, self.segments[s].first));
        let next = s.map_or(0, |s| s + 1);
        let end = self.segments.get(next).map_or(self.records.len(), |g| g.first);
        (s, offset, first, end.saturating_sub(first))
    }
}

/// What one recovery did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Journals found hot.
    pub hot_journals: u64,
    /// Deletions found half done and finished.
    pub finished_deletions: u64,
    /// Simulated PCM time of the recovery, ns.
    pub time_ns: u64,
}

/// What the frame copies at the reuse limit copied: the isolating counters behind the
/// frame-copy terms of Figures 10 and 17.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CopyStats {
    /// Header frames copied.
    pub header_frames: u64,
    /// PCM bit updates of the header-frame copies.
    pub header_bits: u64,
    /// Data frames copied.
    pub data_frames: u64,
    /// PCM bit updates of the data-frame copies.
    pub data_bits: u64,
    /// Portions of the copied data frames that the journal's descriptors point at (a
    /// page image of the current journal or a reuse candidate), summed over copies.
    pub data_portions: u64,
    /// Copies into a frame that had not been allocated before (since the area was
    /// created or last recovered).
    pub onto_unused: u64,
    /// Copies of a frame that stayed in the reuse state through a garbage-collection run
    /// (only `INVp` keeps reuse-state frames through one).
    pub kept_through_gc: u64,
}

/// The PCM journal manager.
#[derive(Debug, Clone)]
pub struct PcmJournal {
    config: JournalConfig,
    layout: Layout,
    state: Vec<FrameState>,
    owner: Vec<Owner>,
    reuse_count: Vec<u32>,
    reuse_since: Vec<u64>,
    cursor: usize,
    clock: u64,
    names: Vec<Option<String>>,
    journals: BTreeMap<usize, Journal>,
    /// Frame copies made at the reuse limit.
    pub frame_copies: u64,
    /// Garbage-collection runs.
    pub gc_runs: u64,
    /// What the frame copies copied.
    pub copies: CopyStats,
    /// Allocations of each frame since the area was created or recovered.
    allocations: Vec<u32>,
    /// Frames kept in the reuse state through a GC run since their last allocation.
    kept: Vec<bool>,
}

impl PcmJournal {
    /// An empty journal area on fresh PCM.
    pub fn new(config: JournalConfig, journal_bytes: u64) -> Result<PcmJournal, JournalError> {
        let layout = Layout::new(journal_bytes, config.header_copies)?;
        let frames = layout.frames;
        Ok(PcmJournal {
            config,
            layout,
            state: vec![FrameState::Invalid; frames],
            owner: vec![Owner::None; frames],
            reuse_count: vec![0; frames],
            reuse_since: vec![0; frames],
            cursor: 1,
            clock: 0,
            names: vec![None; MAX_DB_FILES],
            journals: BTreeMap::new(),
            frame_copies: 0,
            gc_runs: 0,
            copies: CopyStats::default(),
            allocations: vec![0; frames],
            kept: vec![false; frames],
        })
    }

    /// The configuration.
    pub fn config(&self) -> &JournalConfig {
        &self.config
    }

    /// The state of every frame (frame 0 is the manager frame and always `Active`).
    pub fn frame_states(&self) -> Vec<FrameState> {
        let mut states = self.state.clone();
        states[0] = FrameState::Active;
        states
    }

    /// The journal-area field holding the most-programmed PCM cell, and its count. A
    /// frame counts as a header frame if it is one now or last was one.
    pub fn hottest_field(&self, dev: &Devices) -> (String, u64) {
        let pcm = &dev.pcm;
        let max = pcm.wear_report().max_cell_writes;
        if max == 0 {
            return ("none".into(), 0);
        }
        // Scan from the manager frame up and stop at the first cell with the maximum.
        for line in 0..pcm.lines() {
            for lane in 0..9 {
                for bit in 0..64 {
                    if pcm.cell_writes(line, lane, bit) == max {
                        // Flip cells of word w sit at bits 8w..: charge them to word w.
                        let byte = if lane < 8 { lane as u64 * 8 + u64::from(bit) / 8 } else { u64::from(bit) / 8 * 8 };
                        let headers: Vec<usize> = self.journals.values().filter_map(|j| j.frame).collect();
                        return (field_name(&self.layout, line * 64 + byte, |f| headers.contains(&f)), max);
                    }
                }
            }
        }
        unreachable!("the wear report's maximum is some cell's count")
    }

    fn slot_of(&self, db: &str) -> Option<usize> {
        self.names.iter().position(|n| n.as_deref() == Some(db))
    }

    fn journal(&self, db: &str) -> Option<&Journal> {
        self.slot_of(db).and_then(|s| self.journals.get(&s)).filter(|j| j.active)
    }

    /// Whether the journal file of `db` exists (its header frame is active and hot).
    pub fn exists(&self, db: &str) -> bool {
        self.journal(db).is_some()
    }

    /// The size of the journal file of `db`, bytes.
    pub fn size(&self, db: &str) -> u64 {
        self.journal(db).map_or(0, |j| j.file_end)
    }

    // ---- persistent metadata helpers -------------------------------------------------

    fn set_flag(&self, dev: &mut Devices, field: Field, addr: u64, want: bool) -> Result<(), JournalError> {
        let old = dev.pcm_byte(field, addr)?;
        let new = flag::set(old, want, self.config.xor_flags);
        if new != old {
            dev.pcm_write(field, addr, &[new])?;
        }
        Ok(())
    }

    /// Writes presence and reusable bits and reuse counters to PCM, without `S2`.
    fn persist_states(&self, dev: &mut Devices, frames: &[usize]) -> Result<(), JournalError> {
        if self.config.s2 || frames.is_empty() {
            return Ok(());
        }
        let mut presence = 0u64;
        let mut reusable = 0u64;
        for (f, s) in self.state.iter().enumerate() {
            presence |= u64::from(*s == FrameState::Active) << f;
            reusable |= u64::from(*s != FrameState::Invalid) << f;
        }
        let mut bits = [0u8; 16];
        bits[..8].copy_from_slice(&presence.to_le_bytes());
        bits[8..].copy_from_slice(&reusable.to_le_bytes());
        dev.pcm_write(Field::StateBits, MGR_PRESENCE, &bits)?;
        for &f in frames {
            let count = self.reuse_count[f].min(u32::from(u16::MAX)) as u16;
            dev.pcm_write(Field::ReuseCounters, MGR_REUSE_COUNTS + 2 * f as u64, &count.to_le_bytes())?;
        }
        Ok(())
    }

    fn set_state(&mut self, frame: usize, state: FrameState) {
        assert!(frame > 0 && frame < self.layout.frames, "frame {frame} is not a journal frame");
        if state == FrameState::Reuse {
            self.clock += 1;
            self.reuse_since[frame] = self.clock;
        }
        if state == FrameState::Invalid {
            self.owner[frame] = Owner::None;
            self.reuse_count[frame] = 0;
        }
        self.state[frame] = state;
    }

    // ---- frame allocation: pure policy, then the engine carries it out ---------------

    /// Allocates a free (invalid) frame, round robin from the last one; runs garbage
    /// collection when none is free.
    fn allocate_frame(&mut self, dev: &mut Devices, owner: Owner) -> Result<usize, JournalError> {
        let frame = match policy::next_invalid(&self.state, self.cursor) {
            Some(f) => f,
            None => {
                self.collect_garbage(dev)?;
                policy::next_invalid(&self.state, self.cursor)
                    .ok_or_else(|| JournalError::Full(format!("all {} frames active", self.layout.frames - 1)))?
            }
        };
        self.cursor = frame + 1;
        self.set_state(frame, FrameState::Active);
        self.owner[frame] = owner;
        self.allocations[frame] = self.allocations[frame].saturating_add(1);
        self.kept[frame] = false;
        Ok(frame)
    }

    fn collect_garbage(&mut self, dev: &mut Devices) -> Result<(), JournalError> {
        self.gc_runs += 1;
        let victims = policy::gc_victims(&self.state, &self.reuse_since, self.config.incremental_gc_percent);
        let mut freed = Vec::new();
        for f in victims {
            if self.state[f] != FrameState::Reuse {
                continue;
            }
            freed.push(f);
            if let Owner::Header(slot) = self.owner[f] {
                // Its data frames can no longer be found: free them with it.
                for d in 1..self.layout.frames {
                    if self.owner[d] == Owner::Data(f) && self.state[d] == FrameState::Reuse {
                        self.set_state(d, FrameState::Invalid);
                        freed.push(d);
                    }
                }
                if let Some(j) = self.journals.get_mut(&slot) {
                    assert!(!j.active, "GC freed the header frame of an active journal");
                    *j = Journal::default();
                }
            } else if let Owner::Data(h) = self.owner[f] {
                if let Some(j) = self.journals.values_mut().find(|j| j.frame == Some(h)) {
                    j.descs.retain(|_, d| d.frame != f);
                }
            }
            self.set_state(f, FrameState::Invalid);
        }
        for f in 1..self.layout.frames {
            self.kept[f] |= self.state[f] == FrameState::Reuse;
        }
        self.persist_states(dev, &freed)
    }

    // ---- journal lifetime ----------------------------------------------------------

    fn begin(&mut self, dev: &mut Devices, db: &str) -> Result<usize, JournalError> {
        let slot = match self.slot_of(db) {
            Some(s) => s,
            None => {
                let s = self
                    .names
                    .iter()
                    .position(Option::is_none)
                    .ok_or_else(|| JournalError::Full(format!("more than {MAX_DB_FILES} DB files")))?;
                if db.len() > MAX_NAME_BYTES {
                    return Err(JournalError::Config(format!("DB name {db:?} over {MAX_NAME_BYTES} bytes")));
                }
                let mut bytes = vec![db.len() as u8];
                bytes.extend_from_slice(db.as_bytes());
                dev.pcm_write(Field::HeaderDescriptor, mgr_desc(s) + DESC_NAME_LEN, &bytes)?;
                self.names[s] = Some(db.to_string());
                s
            }
        };
        let journal = self.journals.remove(&slot).unwrap_or_default();
        let result = self.begin_frame(dev, slot, journal);
        match result {
            Ok(j) => {
                self.journals.insert(slot, j);
                Ok(slot)
            }
            Err(e) => Err(e),
        }
    }

    fn begin_frame(&mut self, dev: &mut Devices, slot: usize, mut j: Journal) -> Result<Journal, JournalError> {
        let old = j.frame.filter(|&h| self.state[h] == FrameState::Reuse && self.owner[h] == Owner::Header(slot));
        let frame = match old {
            Some(h) if policy::may_reuse(self.reuse_count[h], self.config.header_reuse_limit()) => {
                self.set_state(h, FrameState::Active);
                self.reuse_count[h] += 1;
                self.persist_states(dev, &[h])?;
                h
            }
            Some(h) => {
                // At the reuse limit: copy the frame to a new one.
                self.set_state(h, FrameState::Active);
                let new = self.allocate_frame(dev, Owner::Header(slot))?;
                self.copy_frame(dev, h, new, None)?;
                for d in 1..self.layout.frames {
                    if self.owner[d] == Owner::Data(h) {
                        self.owner[d] = Owner::Data(new);
                    }
                }
                self.set_state(h, FrameState::Invalid);
                self.persist_states(dev, &[h, new])?;
                new
            }
            None => {
                j = Journal::default();
                let new = self.allocate_frame(dev, Owner::Header(slot))?;
                // A new header frame starts with its flag and header slots zeroed.
                let base = self.layout.frame_addr(new);
                dev.pcm_write(Field::HeaderReset, base + HF_HOT, &[0])?;
                dev.pcm_write(Field::HeaderReset, base + HF_DESC_HWM, &[0; 4])?;
                dev.pcm_write(
                    Field::HeaderReset,
                    base + HF_SLOTS,
                    &vec![0u8; self.layout.slot_bytes() * self.layout.header_copies],
                )?;
                self.persist_states(dev, &[new])?;
                new
            }
        };
        if j.frame != Some(frame) {
            dev.pcm_write(Field::HeaderDescriptor, mgr_desc(slot) + DESC_FRAME, &[frame as u8])?;
        }
        j.frame = Some(frame);
        // Garbage collection during the allocations above cannot see this journal (it
        // is out of the map): drop the reuse candidates whose frames it freed.
        let owner = &self.owner;
        j.descs.retain(|_, d| owner[d.frame] == Owner::Data(frame));
        j.active = false;
        j.records.clear();
        j.segments.clear();
        j.fresh = None;
        j.file_end = 0;
        if !self.config.s2 {
            dev.pcm_write(
                Field::HeaderReuseCount,
                self.layout.frame_addr(frame) + HF_REUSE_COUNT,
                &self.reuse_count[frame].to_le_bytes(),
            )?;
        }
        Ok(j)
    }

    /// Copies frame `from` to the newly allocated `to`: a data frame with the number of
    /// `portions` its journal points at, a header frame with `None`.
    fn copy_frame(
        &mut self,
        dev: &mut Devices,
        from: usize,
        to: usize,
        portions: Option<usize>,
    ) -> Result<(), JournalError> {
        self.frame_copies += 1;
        let c = &mut self.copies;
        c.onto_unused += u64::from(self.allocations[to] == 1);
        c.kept_through_gc += u64::from(self.kept[from]);
        let before = dev.pcm.stats().bits_written;
        let mut bytes = vec![0u8; FRAME_BYTES as usize];
        dev.pcm_read(Field::FrameCopy, self.layout.frame_addr(from), &mut bytes)?;
        let written = dev.pcm_write(Field::FrameCopy, self.layout.frame_addr(to), &bytes);
        let bits = dev.pcm.stats().bits_written - before;
        let c = &mut self.copies;
        match portions {
            Some(p) => {
                c.data_frames += 1;
                c.data_bits += bits;
                c.data_portions += p as u64;
            }
            None => {
                c.header_frames += 1;
                c.header_bits += bits;
            }
        }
        written
    }

    /// Deletes the journal of `db`: the commit point of a transaction in DELETE mode.
    pub fn delete(&mut self, dev: &mut Devices, db: &str) -> Result<(), JournalError> {
        let Some(slot) = self.slot_of(db) else { return Ok(()) };
        let Some(j) = self.journals.get(&slot) else { return Ok(()) };
        let Some(frame) = j.frame else { return Ok(()) };
        if !j.active {
            return Ok(());
        }
        let base = self.layout.frame_addr(frame);
        // One flag write is the commit: the hot flag goes first.
        self.set_flag(dev, Field::HotFlag, base + HF_HOT, false)?;
        let valid: Vec<usize> = j.descs.iter().filter(|(_, d)| d.valid).map(|(&i, _)| i).collect();
        for i in valid {
            self.set_flag(dev, Field::DataDescriptorValid, self.layout.desc_addr(frame, i) + DD_VALID, false)?;
        }
        self.set_flag(dev, Field::HeaderDescriptorValid, mgr_desc(slot) + DESC_VALID, false)?;
        if !j.segments.is_empty() {
            dev.pcm_write(Field::SegmentHeader, base + HF_SEGMENTS, &[0, 0])?;
        }
        let reuse = self.config.data_reuse_limit() != Some(0);
        let next = if reuse { FrameState::Reuse } else { FrameState::Invalid };
        let mut changed = vec![frame];
        for d in 1..self.layout.frames {
            if self.owner[d] == Owner::Data(frame) && self.state[d] == FrameState::Active {
                changed.push(d);
            }
        }
        for &f in &changed {
            self.set_state(f, next);
        }
        let j = self.journals.get_mut(&slot).expect("journal looked up above");
        j.active = false;
        j.records.clear();
        j.segments.clear();
        j.fresh = None;
        j.file_end = 0;
        if reuse {
            j.descs.values_mut().for_each(|d| {
                d.valid = false;
                d.in_use = false;
            });
        } else {
            *j = Journal::default();
        }
        self.persist_states(dev, &changed)
    }

    // ---- journal file writes ---------------------------------------------------------

    /// Applies one write of SQLite to the journal file of `db`.
    pub fn write(&mut self, dev: &mut Devices, db: &str, offset: u64, data: &[u8]) -> Result<(), JournalError> {
        let unsupported = |why: &str| JournalError::Unsupported(format!("{why} ({} bytes at {offset})", data.len()));
        let active = self.slot_of(db).filter(|s| self.journals.get(s).is_some_and(|j| j.active));
        // A whole header sector at 0 starts a new journal: a journal SQLite left
        // behind as not hot (zero magic) is overwritten, as in a file.
        let restart = offset == 0 && data.len() as u64 == JOURNAL_HEADER_BYTES;
        if let (Some(s), true) = (active, restart) {
            if !self.journals[&s].records.is_empty() {
                self.delete(dev, db)?;
            }
        }
        let active = self.slot_of(db).filter(|s| self.journals.get(s).is_some_and(|j| j.active));
        let slot = match active {
            Some(s) => s,
            None => {
                if offset != 0 {
                    return Err(unsupported("a new journal must start with its header"));
                }
                self.begin(dev, db)?
            }
        };
        if offset < JOURNAL_HEADER_BYTES {
            let end = offset + data.len() as u64;
            if end > JOURNAL_HEADER_BYTES {
                return Err(unsupported("a header write past the header sector"));
            }
            let split = (SQLITE_HEADER_BYTES as u64).saturating_sub(offset).min(data.len() as u64) as usize;
            if data[split..].iter().any(|&b| b != 0) {
                return Err(unsupported("non-zero header padding"));
            }
            return self.write_header(dev, slot, offset as usize, &data[..split]);
        }
        let j = &self.journals[&slot];
        if j.page_size == 0 {
            return Err(unsupported("a page record before the page size is known"));
        }
        let sector = offset.is_multiple_of(JOURNAL_HEADER_BYTES) && data.len() as u64 == JOURNAL_HEADER_BYTES;
        if sector && offset >= j.file_end {
            return self.begin_segment(dev, slot, offset, data);
        }
        let (segment, base, first, _) = j.segment_of(offset);
        if offset < base + JOURNAL_HEADER_BYTES {
            let s = segment.expect("the first segment's header is handled above");
            if offset + data.len() as u64 > base + JOURNAL_HEADER_BYTES {
                return Err(unsupported("a header write past the header sector"));
            }
            let within = (offset - base) as usize;
            let split = SQLITE_HEADER_BYTES.saturating_sub(within).min(data.len());
            if data[split..].iter().any(|&b| b != 0) {
                return Err(unsupported("non-zero header padding"));
            }
            let frame = j.frame.expect("active journal has a frame");
            let addr = self.layout.segment_addr(frame, s) + SEG_HEADER + within as u64;
            return dev.pcm_write(Field::SegmentHeader, addr, &data[..split]);
        }
        let record_bytes = j.page_size + 8;
        let record = first + ((offset - base - JOURNAL_HEADER_BYTES) / record_bytes) as usize;
        let within = (offset - base - JOURNAL_HEADER_BYTES) % record_bytes;
        match (within, data.len() as u64) {
            (0, 4) => self.write_pgno(dev, slot, record, data)?,
            (4, n) if n == j.page_size && record < j.records.len() => {
                let d = j.descs[&j.records[record]];
                let field = if d.reused { Field::PageImageReused } else { Field::PageImageFresh };
                dev.pcm_write(field, self.layout.portion_addr(d.frame, d.portion, j.page_size), data)?;
            }
            (w, 4) if w == j.page_size + 4 && record < j.records.len() => {
                let frame = j.frame.expect("active journal has a frame");
                let i = j.records[record];
                let addr = self.layout.desc_addr(frame, i);
                dev.pcm_write(Field::Checksum, addr + DD_CKSUM, data)?;
                self.set_flag(dev, Field::DataDescriptorValid, addr + DD_VALID, true)?;
                self.journals.get_mut(&slot).expect("active").descs.get_mut(&i).expect("record desc").valid = true;
            }
            _ => return Err(unsupported("a write that is not a page-number, page or checksum field")),
        }
        let j = self.journals.get_mut(&slot).expect("active");
        j.file_end = j.file_end.max(offset + data.len() as u64);
        Ok(())
    }

    fn write_header(
        &mut self,
        dev: &mut Devices,
        slot: usize,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), JournalError> {
        let copies = self.layout.header_copies as u32;
        let j = self.journals.get_mut(&slot).expect("journal begun");
        let frame = j.frame.expect("journal has a frame");
        j.header[offset..offset + bytes.len()].copy_from_slice(bytes);
        let page_size = u64::from(u32::from_be_bytes(j.header[24..28].try_into().expect("4 bytes")));
        if page_size != 0 && page_size != j.page_size {
            if page_size > FRAME_BYTES || !FRAME_BYTES.is_multiple_of(page_size) || !j.records.is_empty() {
                return Err(JournalError::Unsupported(format!("journal page size {page_size}")));
            }
            // Portions of another size cannot be reused.
            j.descs.retain(|_, d| d.valid);
            j.page_size = page_size;
        }
        j.slot = if copies > 1 { (j.slot + 1) % copies } else { 0 };
        j.seq = j.seq.wrapping_add(1);
        let mut image = j.header.to_vec();
        if copies > 1 {
            image.extend_from_slice(&j.seq.to_le_bytes());
        }
        let addr = self.layout.frame_addr(frame) + HF_SLOTS + u64::from(j.slot) * self.layout.slot_bytes() as u64;
        let was_active = j.active;
        j.active = true;
        j.file_end = j.file_end.max(JOURNAL_HEADER_BYTES);
        dev.pcm_write(Field::JournalHeader, addr, &image)?;
        if !was_active {
            self.set_flag(dev, Field::HeaderDescriptorValid, mgr_desc(slot) + DESC_VALID, true)?;
            self.set_flag(dev, Field::HotFlag, self.layout.frame_addr(frame) + HF_HOT, true)?;
        }
        Ok(())
    }

    /// Starts a header segment after the first at file `offset` (SQLite's cache spill):
    /// its entry, then the segment count, so a cut between the two leaves it uncounted.
    fn begin_segment(&mut self, dev: &mut Devices, slot: usize, offset: u64, data: &[u8]) -> Result<(), JournalError> {
        let unsupported = |why: String| JournalError::Unsupported(format!("{why} (header at {offset})"));
        let j = &self.journals[&slot];
        let frame = j.frame.expect("active journal has a frame");
        let s = j.segments.len();
        if s >= MAX_SEGMENTS {
            return Err(unsupported(format!("more than {} journal header segments", MAX_SEGMENTS + 1)));
        }
        let Ok(at) = u32::try_from(offset) else { return Err(unsupported("a journal over 4 GB".into())) };
        if data[SQLITE_HEADER_BYTES..].iter().any(|&b| b != 0) {
            return Err(unsupported("non-zero header padding".into()));
        }
        let page_size = u64::from(u32::from_be_bytes(data[24..28].try_into().expect("4 bytes")));
        if page_size != j.page_size {
            return Err(unsupported(format!("a header segment of page size {page_size}")));
        }
        let first = j.records.len();
        let mut entry = [0u8; SEG_HEADER as usize + SQLITE_HEADER_BYTES];
        entry[SEG_OFFSET as usize..][..4].copy_from_slice(&at.to_le_bytes());
        entry[SEG_FIRST as usize..][..2].copy_from_slice(&(first as u16).to_le_bytes());
        entry[SEG_HEADER as usize..].copy_from_slice(&data[..SQLITE_HEADER_BYTES]);
        dev.pcm_write(Field::SegmentHeader, self.layout.segment_addr(frame, s), &entry)?;
        let count = (s + 1) as u16;
        dev.pcm_write(Field::SegmentHeader, self.layout.frame_addr(frame) + HF_SEGMENTS, &count.to_le_bytes())?;
        let j = self.journals.get_mut(&slot).expect("active");
        j.segments.push(Segment { offset, first });
        j.file_end = j.file_end.max(offset + JOURNAL_HEADER_BYTES);
        Ok(())
    }

    fn write_pgno(&mut self, dev: &mut Devices, slot: usize, record: usize, pgno: &[u8]) -> Result<(), JournalError> {
        let j = &self.journals[&slot];
        if record != j.records.len() {
            return Err(JournalError::Unsupported(format!("page record {record} written out of order")));
        }
        let header_frame = j.frame.expect("active journal has a frame");
        let page_size = j.page_size;
        let reuse = self.config.data_reuse_limit() != Some(0);
        let candidate =
            if reuse { j.descs.iter().find(|(_, d)| !d.in_use && d.pgno == pgno).map(|(&i, d)| (i, *d)) } else { None };
        let (index, mut desc) = match candidate {
            Some((i, d)) => {
                let frame = self.reactivate(dev, header_frame, d.frame)?;
                (i, Desc { frame, reused: true, ..d })
            }
            None => self.fresh_portion(dev, slot, header_frame, page_size, pgno)?,
        };
        desc.pgno.copy_from_slice(pgno);
        let addr = self.layout.desc_addr(header_frame, index);
        let mut image = [0u8; DESC_BYTES];
        dev.pcm_read(Field::DataDescriptor, addr, &mut image)?;
        let hwm = self.journals[&slot].hwm;
        assert!(index <= hwm, "descriptor {index} beyond the initialised {hwm}");
        if index == hwm {
            // First use in this frame: the valid flag starts at zero.
            image[DD_VALID as usize] = 0;
        }
        image[DD_PGNO as usize..DD_PGNO as usize + 4].copy_from_slice(pgno);
        image[DD_FRAME as usize] = desc.frame as u8;
        image[DD_PORTION as usize] = desc.portion as u8;
        image[DD_RECORD as usize..DD_RECORD as usize + 2].copy_from_slice(&(record as u16).to_le_bytes());
        dev.pcm_write(Field::DataDescriptor, addr, &image)?;
        if index == hwm {
            let next = (hwm + 1) as u16;
            dev.pcm_write(
                Field::DescriptorCount,
                self.layout.frame_addr(header_frame) + HF_DESC_HWM,
                &next.to_le_bytes(),
            )?;
        }
        let j = self.journals.get_mut(&slot).expect("active");
        j.hwm = j.hwm.max(index + 1);
        desc.valid = false;
        desc.in_use = true;
        j.descs.insert(index, desc);
        j.records.push(index);
        Ok(())
    }

    /// Makes a reuse-state data frame active again, or copies it to a new frame at the
    /// reuse limit. Returns the frame now holding the portions.
    fn reactivate(&mut self, dev: &mut Devices, header_frame: usize, frame: usize) -> Result<usize, JournalError> {
        if self.state[frame] == FrameState::Active {
            return Ok(frame);
        }
        assert_eq!(self.owner[frame], Owner::Data(header_frame), "reuse of another journal's frame");
        if policy::may_reuse(self.reuse_count[frame], self.config.data_reuse_limit()) {
            self.set_state(frame, FrameState::Active);
            self.reuse_count[frame] += 1;
            self.persist_states(dev, &[frame])?;
            return Ok(frame);
        }
        self.set_state(frame, FrameState::Active);
        let new = self.allocate_frame(dev, Owner::Data(header_frame))?;
        let j = self.journals.values().find(|j| j.frame == Some(header_frame)).expect("owner journal");
        let portions = j.descs.values().filter(|d| d.frame == frame).count();
        self.copy_frame(dev, frame, new, Some(portions))?;
        let j = self.journals.values_mut().find(|j| j.frame == Some(header_frame)).expect("owner journal");
        let moved: Vec<usize> = j.descs.iter().filter(|(_, d)| d.frame == frame).map(|(&i, _)| i).collect();
        for i in moved {
            j.descs.get_mut(&i).expect("listed").frame = new;
            let addr = self.layout.desc_addr(header_frame, i) + DD_FRAME;
            dev.pcm_write(Field::DataDescriptor, addr, &[new as u8])?;
        }
        self.set_state(frame, FrameState::Invalid);
        self.persist_states(dev, &[frame, new])?;
        Ok(new)
    }

    fn fresh_portion(
        &mut self,
        dev: &mut Devices,
        slot: usize,
        header_frame: usize,
        page_size: u64,
        pgno: &[u8],
    ) -> Result<(usize, Desc), JournalError> {
        let portions = (FRAME_BYTES / page_size) as usize;
        let fresh = self.journals[&slot].fresh.filter(|&(_, next)| next < portions);
        let (frame, portion) = match fresh {
            Some(f) => f,
            None => (self.allocate_frame(dev, Owner::Data(header_frame))?, 0),
        };
        if !self.config.s2 {
            let next = (portion + 1) as u16;
            dev.pcm_write(Field::FirstFree, self.layout.frame_addr(header_frame) + HF_FIRST_FREE, &next.to_le_bytes())?;
        }
        let descriptors = self.layout.descriptors;
        let j = self.journals.get_mut(&slot).expect("active");
        j.fresh = Some((frame, portion + 1));
        // A free descriptor, else one whose portion is only a reuse candidate.
        let index = (0..descriptors)
            .find(|i| !j.descs.contains_key(i))
            .or_else(|| j.descs.iter().find(|(_, d)| !d.in_use).map(|(&i, _)| i))
            .ok_or_else(|| JournalError::Full(format!("more than {descriptors} page records")))?;
        j.descs.remove(&index);
        let mut p = [0u8; 4];
        p.copy_from_slice(pgno);
        Ok((index, Desc { pgno: p, frame, portion, valid: false, in_use: true, reused: false }))
    }

    // ---- reads -----------------------------------------------------------------------

    /// Reads the journal file of `db` as SQLite wrote it. Returns the bytes that were
    /// inside the file; the rest of `buf` is zeroed (a short read).
    pub fn read(&self, dev: &mut Devices, db: &str, offset: u64, buf: &mut [u8]) -> Result<usize, JournalError> {
        buf.fill(0);
        let Some(j) = self.journal(db) else { return Ok(0) };
        let frame = j.frame.expect("active journal has a frame");
        let end = j.file_end.min(offset + buf.len() as u64);
        let mut pos = offset;
        while pos < end {
            let (chunk_start, bytes) = self.field_at(dev, j, frame, pos)?;
            let from = (pos - chunk_start) as usize;
            let take = (bytes.len() - from).min((end - pos) as usize);
            let at = (pos - offset) as usize;
            buf[at..at + take].copy_from_slice(&bytes[from..from + take]);
            pos += take as u64;
        }
        Ok(end.saturating_sub(offset) as usize)
    }

    /// The file field holding byte `pos`: its start offset and bytes.
    fn field_at(&self, dev: &mut Devices, j: &Journal, frame: usize, pos: u64) -> Result<(u64, Vec<u8>), JournalError> {
        if pos < JOURNAL_HEADER_BYTES {
            let mut header = vec![0u8; JOURNAL_HEADER_BYTES as usize];
            let addr = self.layout.frame_addr(frame) + HF_SLOTS + u64::from(j.slot) * self.layout.slot_bytes() as u64;
            dev.pcm_read(Field::JournalHeader, addr, &mut header[..SQLITE_HEADER_BYTES])?;
            return Ok((0, header));
        }
        let (segment, base, first, records) = j.segment_of(pos);
        if pos < base + JOURNAL_HEADER_BYTES {
            let s = segment.expect("the first segment's header is handled above");
            let mut header = vec![0u8; JOURNAL_HEADER_BYTES as usize];
            let addr = self.layout.segment_addr(frame, s) + SEG_HEADER;
            dev.pcm_read(Field::SegmentHeader, addr, &mut header[..SQLITE_HEADER_BYTES])?;
            return Ok((base, header));
        }
        let record_bytes = j.page_size + 8;
        let records_end = base + JOURNAL_HEADER_BYTES + records as u64 * record_bytes;
        if pos >= records_end {
            // Padding up to the next segment's header sector.
            let next = j.segments.get(segment.map_or(0, |s| s + 1)).map_or(j.file_end, |g| g.offset);
            return Ok((records_end, vec![0u8; next.saturating_sub(records_end).max(1) as usize]));
        }
        let record = first + ((pos - base - JOURNAL_HEADER_BYTES) / record_bytes) as usize;
        let start = base + JOURNAL_HEADER_BYTES + (record - first) as u64 * record_bytes;
        let within = pos - start;
        let index = j.records[record];
        let d = j.descs[&index];
        let desc = self.layout.desc_addr(frame, index);
        if within < 4 {
            let mut b = vec![0u8; 4];
            dev.pcm_read(Field::DataDescriptor, desc + DD_PGNO, &mut b)?;
            Ok((start, b))
        } else if within < 4 + j.page_size {
            let mut b = vec![0u8; j.page_size as usize];
            let field = if d.reused { Field::PageImageReused } else { Field::PageImageFresh };
            dev.pcm_read(field, self.layout.portion_addr(d.frame, d.portion, j.page_size), &mut b)?;
            Ok((start + 4, b))
        } else {
            let mut b = vec![0u8; 4];
            dev.pcm_read(Field::Checksum, desc + DD_CKSUM, &mut b)?;
            Ok((start + 4 + j.page_size, b))
        }
    }

    /// Truncates the journal file: to 0 it is a deletion; to its own size, nothing.
    pub fn truncate(&mut self, dev: &mut Devices, db: &str, size: u64) -> Result<(), JournalError> {
        if size == 0 {
            self.delete(dev, db)
        } else if size == self.size(db) {
            Ok(())
        } else {
            Err(JournalError::Unsupported(format!("journal truncation to {size} bytes")))
        }
    }

    // ---- recovery --------------------------------------------------------------------

    /// Rebuilds the DRAM state from PCM alone after a power cut: reads the header-frame
    /// descriptors of the manager frame, and for each hot journal its header and its
    /// data-frame descriptors, so the work grows with the active journals. A deletion
    /// found half done (hot flag clear) is finished. Reuse information is non-functional
    /// and starts empty.
    pub fn recover(config: JournalConfig, dev: &mut Devices) -> Result<(PcmJournal, Recovery), JournalError> {
        let start_ns = dev.pcm.stats().storage_time_ns;
        let mut me = PcmJournal::new(config, dev.pcm.config().capacity_bytes)?;
        let mut report = Recovery::default();
        for slot in 0..MAX_DB_FILES {
            let mut desc = [0u8; MGR_DESC_BYTES as usize];
            dev.pcm_read(Field::HeaderDescriptor, mgr_desc(slot), &mut desc)?;
            let len = desc[DESC_NAME_LEN as usize] as usize;
            if len == 0 || len > MAX_NAME_BYTES {
                continue;
            }
            let name = &desc[DESC_NAME_LEN as usize + 1..DESC_NAME_LEN as usize + 1 + len];
            me.names[slot] = Some(String::from_utf8_lossy(name).into_owned());
            if !flag::value(desc[DESC_VALID as usize], config.xor_flags) {
                continue;
            }
            let frame = desc[DESC_FRAME as usize] as usize;
            assert!(frame > 0 && frame < me.layout.frames, "header descriptor {slot} points at frame {frame}");
            let base = me.layout.frame_addr(frame);
            let hot = flag::value(dev.pcm_byte(Field::HotFlag, base + HF_HOT)?, config.xor_flags);
            let mut hwm = [0u8; 2];
            dev.pcm_read(Field::DescriptorCount, base + HF_DESC_HWM, &mut hwm)?;
            let hwm = usize::from(u16::from_le_bytes(hwm)).min(me.layout.descriptors);
            let valid = me.scan_descriptors(dev, frame, hwm)?;
            if !hot {
                for (i, _) in valid {
                    me.set_flag(dev, Field::DataDescriptorValid, me.layout.desc_addr(frame, i) + DD_VALID, false)?;
                }
                me.set_flag(dev, Field::HeaderDescriptorValid, mgr_desc(slot) + DESC_VALID, false)?;
                report.finished_deletions += 1;
                continue;
            }
            report.hot_journals += 1;
            let mut j = me.rebuild_journal(dev, slot, frame, valid)?;
            j.hwm = hwm;
            me.journals.insert(slot, j);
        }
        let active: Vec<usize> = (1..me.layout.frames).filter(|&f| me.state[f] == FrameState::Active).collect();
        if !me.config.s2 {
            me.persist_states(dev, &active)?;
        }
        report.time_ns = dev.pcm.stats().storage_time_ns - start_ns;
        Ok((me, report))
    }

    fn scan_descriptors(
        &self,
        dev: &mut Devices,
        frame: usize,
        hwm: usize,
    ) -> Result<Vec<(usize, [u8; DESC_BYTES])>, JournalError> {
        let mut table = vec![0u8; hwm * DESC_BYTES];
        dev.pcm_read(Field::DataDescriptor, self.layout.desc_addr(frame, 0), &mut table)?;
        Ok(table
            .chunks_exact(DESC_BYTES)
            .enumerate()
            .filter(|(_, d)| flag::value(d[DD_VALID as usize], self.config.xor_flags))
            .map(|(i, d)| (i, d.try_into().expect("descriptor bytes")))
            .collect())
    }

    fn rebuild_journal(
        &mut self,
        dev: &mut Devices,
        slot: usize,
        frame: usize,
        valid: Vec<(usize, [u8; DESC_BYTES])>,
    ) -> Result<Journal, JournalError> {
        self.set_state(frame, FrameState::Active);
        self.owner[frame] = Owner::Header(slot);
        let mut j = Journal { frame: Some(frame), active: true, ..Journal::default() };
        let copies = self.layout.header_copies;
        let mut slots = vec![0u8; copies * self.layout.slot_bytes()];
        dev.pcm_read(Field::JournalHeader, self.layout.frame_addr(frame) + HF_SLOTS, &mut slots)?;
        let (best, seq) = (0..copies)
            .map(|s| {
                let b = &slots[s * self.layout.slot_bytes()..];
                let seq = if copies > 1 { u32::from_le_bytes(b[28..32].try_into().expect("4 bytes")) } else { 0 };
                (s, seq)
            })
            .max_by_key(|&(s, seq)| (seq, std::cmp::Reverse(s)))
            .expect("at least one header slot");
        j.slot = best as u32;
        j.seq = seq;
        j.header.copy_from_slice(&slots[best * self.layout.slot_bytes()..][..SQLITE_HEADER_BYTES]);
        j.page_size = u64::from(u32::from_be_bytes(j.header[24..28].try_into().expect("4 bytes")));
        let mut records = vec![usize::MAX; valid.len()];
        for (i, d) in valid {
            let record = usize::from(u16::from_le_bytes([d[DD_RECORD as usize], d[DD_RECORD as usize + 1]]));
            assert!(record < records.len() && records[record] == usize::MAX, "hot journal records not 0..n");
            records[record] = i;
            let data = d[DD_FRAME as usize] as usize;
            assert!(data > 0 && data < self.layout.frames, "descriptor points at frame {data}");
            self.set_state(data, FrameState::Active);
            self.owner[data] = Owner::Data(frame);
            let mut pgno = [0u8; 4];
            pgno.copy_from_slice(&d[..4]);
            j.descs.insert(
                i,
                Desc {
                    pgno,
                    frame: data,
                    portion: d[DD_PORTION as usize] as usize,
                    valid: true,
                    in_use: true,
                    reused: false,
                },
            );
        }
        let mut count = [0u8; 2];
        dev.pcm_read(Field::SegmentHeader, self.layout.frame_addr(frame) + HF_SEGMENTS, &mut count)?;
        for s in 0..usize::from(u16::from_le_bytes(count)).min(MAX_SEGMENTS) {
            let mut entry = [0u8; 8];
            dev.pcm_read(Field::SegmentHeader, self.layout.segment_addr(frame, s), &mut entry)?;
            let offset = u64::from(u32::from_le_bytes(entry[..4].try_into().expect("4 bytes")));
            let first = usize::from(u16::from_le_bytes([entry[SEG_FIRST as usize], entry[SEG_FIRST as usize + 1]]));
            let last = j.segments.last().map_or((0, 0), |g| (g.offset, g.first));
            assert!(offset > last.0 && first >= last.1 && first <= records.len(), "segment {s} out of order");
            j.segments.push(Segment { offset, first });
        }
        let (base, first) = j.segments.last().map_or((0, 0), |g| (g.offset, g.first));
        j.file_end = base + JOURNAL_HEADER_BYTES + (records.len() - first) as u64 * (j.page_size + 8);
        j.records = records;
        Ok(j)
    }
}

/// Allocation and collection policies: pure functions returning a decision.
pub mod policy {
    use super::FrameState;

    /// The first invalid frame at or after `cursor`, wrapping, skipping frame 0 (the
    /// manager frame): FIFO allocation of free frames.
    pub fn next_invalid(states: &[FrameState], cursor: usize) -> Option<usize> {
        let n = states.len();
        (0..n).map(|k| (cursor + k) % n).find(|&f| f != 0 && states[f] == FrameState::Invalid)
    }

    /// Whether a frame reused `count` times may be reused again under `limit`.
    pub fn may_reuse(count: u32, limit: Option<u32>) -> bool {
        limit.is_none_or(|n| count < n)
    }

    /// The reuse-state frames a GC run frees: all of them, or under `INVp` the oldest
    /// `p`% (at least one), oldest first.
    pub fn gc_victims(states: &[FrameState], since: &[u64], percent: Option<u32>) -> Vec<usize> {
        let mut reuse: Vec<usize> = (1..states.len()).filter(|&f| states[f] == FrameState::Reuse).collect();
        reuse.sort_by_key(|&f| (since[f], f));
        if let Some(p) = percent {
            let keep = (reuse.len() * p as usize).div_ceil(100).max(1);
            reuse.truncate(keep);
        }
        reuse
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use FrameState::*;

        #[test]
        fn allocation_is_fifo_and_skips_the_manager_frame() {
            let states = [Invalid, Active, Invalid, Reuse, Invalid];
            assert_eq!(next_invalid(&states, 0), Some(2));
            assert_eq!(next_invalid(&states, 3), Some(4));
            assert_eq!(next_invalid(&states, 5), Some(2));
            assert_eq!(next_invalid(&[Invalid, Active, Reuse], 1), None);
        }

        #[test]
        fn reuse_stops_at_the_limit() {
            assert!(may_reuse(19, Some(20)));
            assert!(!may_reuse(20, Some(20)));
            assert!(!may_reuse(0, Some(0)));
            assert!(may_reuse(u32::MAX - 1, None));
        }

        #[test]
        fn incremental_gc_frees_the_oldest_share() {
            let states = [Active, Reuse, Reuse, Active, Reuse, Reuse];
            let since = [0, 40, 10, 0, 30, 20];
            assert_eq!(gc_victims(&states, &since, None), vec![2, 5, 4, 1]);
            assert_eq!(gc_victims(&states, &since, Some(25)), vec![2]);
            assert_eq!(gc_victims(&states, &since, Some(50)), vec![2, 5]);
            assert!(gc_victims(&[Active, Active], &[0, 0], Some(25)).is_empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::DeviceParams;

    const PAGE: usize = 1024;

    /// A journal of `pages` records as SQLite writes it: header, then per page its number,
    /// image and checksum; then the header's magic and record count.
    fn journal(j: &mut PcmJournal, dev: &mut Devices, db: &str, pages: &[(u32, u8)]) {
        let mut header = vec![0u8; JOURNAL_HEADER_BYTES as usize];
        header[24..28].copy_from_slice(&(PAGE as u32).to_be_bytes());
        j.write(dev, db, 0, &header).unwrap();
        for (r, &(pgno, fill)) in pages.iter().enumerate() {
            let at = JOURNAL_HEADER_BYTES + (r * (PAGE + 8)) as u64;
            j.write(dev, db, at, &pgno.to_be_bytes()).unwrap();
            j.write(dev, db, at + 4, &[fill; PAGE]).unwrap();
            j.write(dev, db, at + 4 + PAGE as u64, &[fill, 1, 2, 3]).unwrap();
        }
        j.write(dev, db, 0, &[0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7, 0, 0, 0, pages.len() as u8]).unwrap();
    }

    fn setup(name: &str) -> (PcmJournal, Devices) {
        let params = DeviceParams { journal_bytes: 8 * FRAME_BYTES, ..DeviceParams::PAPER };
        (
            PcmJournal::new(JournalConfig::parse(name).unwrap(), params.journal_bytes).unwrap(),
            Devices::new(&params).unwrap(),
        )
    }

    fn count(j: &PcmJournal, state: FrameState) -> usize {
        j.frame_states().iter().skip(1).filter(|&&s| s == state).count()
    }

    #[test]
    fn frames_go_active_then_invalid_under_rr_and_reuse_under_ru() {
        for (name, reuse) in [("RR-S2X", 0), ("RU-S2X", 2)] {
            let (mut j, mut dev) = setup(name);
            journal(&mut j, &mut dev, "a.db", &[(1, 7), (2, 8)]);
            assert!(j.exists("a.db"));
            assert_eq!(j.size("a.db"), JOURNAL_HEADER_BYTES + 2 * (PAGE as u64 + 8));
            assert_eq!(count(&j, FrameState::Active), 2, "{name}: a header and a data frame");
            j.delete(&mut dev, "a.db").unwrap();
            assert!(!j.exists("a.db"));
            assert_eq!(count(&j, FrameState::Reuse), reuse, "{name}");
            assert_eq!(count(&j, FrameState::Invalid), 7 - reuse, "{name}");
            assert_eq!(count(&j, FrameState::Active), 0, "{name}");
        }
    }

    #[test]
    fn reuse_writes_a_page_over_its_old_image_and_rr_does_not() {
        let mut bits = Vec::new();
        for name in ["RR-S2X", "RU-S2X"] {
            let (mut j, mut dev) = setup(name);
            journal(&mut j, &mut dev, "a.db", &[(5, 0xaa)]);
            j.delete(&mut dev, "a.db").unwrap();
            let before = dev.pcm.stats().bits_written;
            journal(&mut j, &mut dev, "a.db", &[(5, 0xaa)]);
            bits.push(dev.pcm.stats().bits_written - before);
            let mut buf = vec![0u8; PAGE];
            j.read(&mut dev, "a.db", JOURNAL_HEADER_BYTES + 4, &mut buf).unwrap();
            assert_eq!(buf, vec![0xaa; PAGE], "{name}: the journal reads back the page");
        }
        // The same page image again: RU programs only metadata, RR a whole new portion.
        assert!(bits[1] * 10 < bits[0], "RU {} bits vs RR {} bits", bits[1], bits[0]);
    }

    #[test]
    fn gc_frees_reuse_frames_and_the_reuse_limit_copies() {
        // 7 journal frames: each journal of a new DB takes a header and a data frame.
        let (mut j, mut dev) = setup("RU-S2X");
        for db in ["a.db", "b.db", "c.db"] {
            journal(&mut j, &mut dev, db, &[(1, 1)]);
            j.delete(&mut dev, db).unwrap();
        }
        assert_eq!(count(&j, FrameState::Reuse), 6);
        journal(&mut j, &mut dev, "d.db", &[(1, 1), (2, 2)]);
        assert_eq!(j.gc_runs, 1, "the fourth DB file found one free frame, then collected");
        assert_eq!(count(&j, FrameState::Reuse), 0);
        j.delete(&mut dev, "d.db").unwrap();

        let (mut j, mut dev) = setup("RU2-S2X");
        for _ in 0..3 {
            journal(&mut j, &mut dev, "a.db", &[(1, 1)]);
            j.delete(&mut dev, "a.db").unwrap();
        }
        assert_eq!(j.frame_copies, 0, "two reuses of each frame are allowed");
        journal(&mut j, &mut dev, "a.db", &[(1, 1)]);
        assert_eq!(j.frame_copies, 2, "the third reuse copies the header and the data frame");
        let c = j.copies;
        assert_eq!((c.header_frames, c.data_frames, c.data_portions), (1, 1, 1), "{c:?}");
        assert_eq!((c.onto_unused, c.kept_through_gc), (2, 0), "{c:?}: frames 3 and 4 were never used, no GC ran");
        // The page image is 1 KB of 0x01 bytes, copied onto a frame never written.
        assert!(c.data_bits >= 1024 && c.header_bits > 0, "{c:?}: a copy programs the page image");
    }

    #[test]
    fn the_hot_flag_wears_one_cell_per_flip_spread_over_eight_under_x() {
        for (name, cells) in [("RU-S2", 1), ("RU-S2X", 8)] {
            let (mut j, mut dev) = setup(name);
            for _ in 0..16 {
                journal(&mut j, &mut dev, "a.db", &[(1, 1)]);
                j.delete(&mut dev, "a.db").unwrap();
            }
            let frame = j.journals.values().next().unwrap().frame.unwrap();
            let line = frame as u64 * FRAME_BYTES / 64;
            // The hot flag is byte 0 of the header frame: bits 0..8 of word 0.
            let wear: Vec<u64> = (0..8).map(|b| dev.pcm.cell_writes(line, 0, b)).collect();
            assert_eq!(wear.iter().sum::<u64>(), 32, "{name}: 32 flips, one cell each: {wear:?}");
            assert_eq!(wear.iter().filter(|&&w| w > 0).count(), cells, "{name}: {wear:?}");
            if cells == 8 {
                assert!(wear.iter().all(|&w| w == 4), "{name}: even wear {wear:?}");
            }
        }
    }

    #[test]
    fn header_copies_rotate_and_recovery_finds_the_newest() {
        let (mut j, mut dev) = setup("RU-S2X-WH4");
        journal(&mut j, &mut dev, "a.db", &[(3, 9), (4, 10)]);
        let mut before = vec![0u8; 28];
        j.read(&mut dev, "a.db", 0, &mut before).unwrap();
        let slot = j.journals.values().next().unwrap().slot;
        assert_eq!(slot, 2, "two header writes: slots 1 then 2");
        let (mut r, report) = PcmJournal::recover(*j.config(), &mut dev).unwrap();
        assert_eq!(report.hot_journals, 1);
        let mut after = vec![0u8; 28];
        r.read(&mut dev, "a.db", 0, &mut after).unwrap();
        assert_eq!(after, before);
        assert_eq!(r.size("a.db"), j.size("a.db"));
        r.delete(&mut dev, "a.db").unwrap();
        assert!(!r.exists("a.db"));
    }
}
