//! Byte layouts of the PCM journal area (documented in the crate README).
//!
//! The area is an array of 64 KB frames. Frame 0 is the manager frame; every other frame
//! is a header frame, a data frame, or free.

use crate::config::MAX_HEADER_COPIES;
use crate::error::JournalError;

/// Bytes per page frame (Section 5.2: 64 KB, so the largest DB page fits one portion).
pub const FRAME_BYTES: u64 = 64 * 1024;
/// The journal header SQLite keeps meaningful: magic, record count, checksum nonce,
/// original DB size, sector size and page size.
pub const SQLITE_HEADER_BYTES: usize = 28;
/// The sector size the VFS reports, so the header SQLite writes is one such sector and
/// the page records start here.
pub const JOURNAL_HEADER_BYTES: u64 = 512;

/// Manager frame: presence bits (bit `f` for frame `f`), 8 bytes, written only without S2.
pub const MGR_PRESENCE: u64 = 0;
/// Manager frame: reuse counters, u16 per frame, written only without S2.
pub const MGR_REUSE_COUNTS: u64 = 64;
/// Manager frame: the first header-frame descriptor.
pub const MGR_DESCS: u64 = 1024;
/// Bytes per header-frame descriptor.
pub const MGR_DESC_BYTES: u64 = 64;
/// Header-frame descriptors, so DB files served at once.
pub const MAX_DB_FILES: usize = 64;
/// Descriptor: valid flag (1 byte: plain bit 0, or an XOR flag).
pub const DESC_VALID: u64 = 0;
/// Descriptor: header frame index (1 byte).
pub const DESC_FRAME: u64 = 1;
/// Descriptor: name length (1 byte), then the DB file name: its identity.
pub const DESC_NAME_LEN: u64 = 2;
/// The longest DB file name.
pub const MAX_NAME_BYTES: usize = (MGR_DESC_BYTES - DESC_NAME_LEN - 1) as usize;

/// Header frame: the hot-journal flag (1 byte).
pub const HF_HOT: u64 = 0;
/// Header frame: first free portion of the journal's newest data frame (u16), without S2.
pub const HF_FIRST_FREE: u64 = 2;
/// Header frame: its reuse count (u32), without S2.
pub const HF_REUSE_COUNT: u64 = 4;
/// Header frame: descriptors initialised since the frame was allocated (u16): recovery
/// reads only these, since a new header frame's other bytes are left from earlier use.
pub const HF_DESC_HWM: u64 = 8;
/// Header frame: journal header segments after the first (u16): SQLite writes a new
/// journal header when its page cache spills within a transaction.
pub const HF_SEGMENTS: u64 = 10;
/// Header frame: the journal header slots, `m` of them under WHm.
pub const HF_SLOTS: u64 = 64;
/// The journal header segments after the first that a journal may hold.
pub const MAX_SEGMENTS: usize = 64;
/// Bytes per segment entry at the end of the header frame: the segment header's offset
/// in the journal file (u32), its first page record's index (u16), two unused bytes and
/// the 28 header bytes, in a 64-byte line of its own.
pub const SEG_BYTES: u64 = 64;
/// Segment entry: the header's offset in the journal file.
pub const SEG_OFFSET: u64 = 0;
/// Segment entry: the index of the segment's first page record.
pub const SEG_FIRST: u64 = 4;
/// Segment entry: the header bytes.
pub const SEG_HEADER: u64 = 8;
/// Header frame: the first segment entry; the entries fill the frame's last 4 KB.
pub const HF_SEG_TABLE: u64 = FRAME_BYTES - MAX_SEGMENTS as u64 * SEG_BYTES;

/// Bytes per data-frame descriptor.
pub const DESC_BYTES: usize = 16;
/// Data-frame descriptor: page number, as in the journal file (4 bytes, big-endian).
pub const DD_PGNO: u64 = 0;
/// Data-frame descriptor: checksum, as in the journal file (4 bytes).
pub const DD_CKSUM: u64 = 4;
/// Data-frame descriptor: valid flag (1 byte).
pub const DD_VALID: u64 = 8;
/// Data-frame descriptor: PTR, the data frame (1 byte) ...
pub const DD_FRAME: u64 = 10;
/// ... and the portion in it (1 byte); frame 0 means no portion.
pub const DD_PORTION: u64 = 11;
/// Data-frame descriptor: the record's index in the journal file (u16), so the file's
/// byte order can be rebuilt (not in the paper, whose SQLite read its structures directly).
pub const DD_RECORD: u64 = 12;

/// The journal structure a PCM access belongs to, for accounting bits, lines and
/// energy per structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Field {
    /// Manager frame: presence and reusable bits (written only without S2).
    StateBits,
    /// Manager frame: reuse counters (written only without S2).
    ReuseCounters,
    /// Manager frame: a header-frame descriptor's DB file name and header-frame index.
    HeaderDescriptor,
    /// Manager frame: a header-frame descriptor's valid flag.
    HeaderDescriptorValid,
    /// Header frame: zeroing the hot flag, descriptor and segment counts and journal
    /// header slots of a newly allocated header frame.
    HeaderReset,
    /// Header frame: the hot-journal flag.
    HotFlag,
    /// Header frame: the first-free-portion pointer (written only without S2).
    FirstFree,
    /// Header frame: its reuse count (written only without S2).
    HeaderReuseCount,
    /// Header frame: the count of initialised data-frame descriptors.
    DescriptorCount,
    /// Header frame: the journal header slots.
    JournalHeader,
    /// Header frame: the segment count and entries of later journal header segments.
    SegmentHeader,
    /// Header frame: a data-frame descriptor's PgNo, PTR and record index.
    DataDescriptor,
    /// Header frame: a data-frame descriptor's checksum.
    Checksum,
    /// Header frame: a data-frame descriptor's valid flag.
    DataDescriptorValid,
    /// Data frame: page images written over the same DB page's older image (reuse).
    PageImageReused,
    /// Data frame: page images written in a fresh portion.
    PageImageFresh,
    /// Whole-frame copies at the reuse limit (read and write).
    FrameCopy,
}

impl Field {
    /// Every field, in layout order.
    pub const ALL: [Field; 17] = [
        Field::StateBits,
        Field::ReuseCounters,
        Field::HeaderDescriptor,
        Field::HeaderDescriptorValid,
        Field::HeaderReset,
        Field::HotFlag,
        Field::FirstFree,
        Field::HeaderReuseCount,
        Field::DescriptorCount,
        Field::JournalHeader,
        Field::SegmentHeader,
        Field::DataDescriptor,
        Field::Checksum,
        Field::DataDescriptorValid,
        Field::PageImageReused,
        Field::PageImageFresh,
        Field::FrameCopy,
    ];

    /// A short name: the frame, then the structure.
    pub fn name(self) -> &'static str {
        match self {
            Field::StateBits => "manager: presence and reusable bits",
            Field::ReuseCounters => "manager: reuse counters",
            Field::HeaderDescriptor => "manager: header-frame descriptor (name, frame)",
            Field::HeaderDescriptorValid => "manager: header-frame descriptor valid flag",
            Field::HeaderReset => "header: zeroing a new header frame",
            Field::HotFlag => "header: hot-journal flag",
            Field::FirstFree => "header: first-free pointer",
            Field::HeaderReuseCount => "header: reuse count",
            Field::DescriptorCount => "header: descriptor count",
            Field::JournalHeader => "header: journal header slots",
            Field::SegmentHeader => "header: later header segments (cache spill)",
            Field::DataDescriptor => "header: data descriptor (PgNo, PTR, record)",
            Field::Checksum => "header: data descriptor CkSum",
            Field::DataDescriptorValid => "header: data descriptor valid flag",
            Field::PageImageReused => "data: page images over the same page's portion",
            Field::PageImageFresh => "data: page images in a fresh portion",
            Field::FrameCopy => "frame copies at the reuse limit",
        }
    }

    /// Its index in [`Field::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The manager-frame address of header-frame descriptor `slot`.
pub fn mgr_desc(slot: usize) -> u64 {
    assert!(slot < MAX_DB_FILES);
    MGR_DESCS + slot as u64 * MGR_DESC_BYTES
}

/// The geometry of one journal area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Frames, the manager frame included.
    pub frames: usize,
    /// Journal header copies (`m` of WHm).
    pub header_copies: usize,
    /// Data-frame descriptors per header frame.
    pub descriptors: usize,
    desc_base: u64,
}

impl Layout {
    /// The layout of `journal_bytes` of PCM with `header_copies` header slots.
    pub fn new(journal_bytes: u64, header_copies: u32) -> Result<Layout, JournalError> {
        let frames = journal_bytes / FRAME_BYTES;
        if !journal_bytes.is_multiple_of(FRAME_BYTES) || !(3..=64).contains(&frames) {
            return Err(JournalError::Config(format!(
                "journal area must be 3 to 64 frames of 64 KB, not {journal_bytes} bytes"
            )));
        }
        assert!((1..=MAX_HEADER_COPIES).contains(&header_copies));
        let slot_bytes = if header_copies > 1 { 32 } else { SQLITE_HEADER_BYTES as u64 };
        let desc_base = (HF_SLOTS + slot_bytes * u64::from(header_copies)).next_multiple_of(64);
        let descriptors = ((HF_SEG_TABLE - desc_base) / DESC_BYTES as u64) as usize;
        Ok(Layout { frames: frames as usize, header_copies: header_copies as usize, descriptors, desc_base })
    }

    /// Bytes per header slot: the 28 header bytes, plus a u32 sequence number when
    /// there is more than one slot.
    pub fn slot_bytes(&self) -> usize {
        if self.header_copies > 1 {
            32
        } else {
            SQLITE_HEADER_BYTES
        }
    }

    /// The PCM address of a frame.
    pub fn frame_addr(&self, frame: usize) -> u64 {
        assert!(frame < self.frames);
        frame as u64 * FRAME_BYTES
    }

    /// The PCM address of data-frame descriptor `index` of header frame `frame`.
    pub fn desc_addr(&self, frame: usize, index: usize) -> u64 {
        assert!(index < self.descriptors);
        self.frame_addr(frame) + self.desc_base + (index * DESC_BYTES) as u64
    }

    /// The PCM address of segment entry `index` of header frame `frame`.
    pub fn segment_addr(&self, frame: usize, index: usize) -> u64 {
        assert!(index < MAX_SEGMENTS);
        self.frame_addr(frame) + HF_SEG_TABLE + index as u64 * SEG_BYTES
    }

    /// The PCM address of a portion.
    pub fn portion_addr(&self, frame: usize, portion: usize, page_size: u64) -> u64 {
        assert!((portion as u64 + 1) * page_size <= FRAME_BYTES);
        self.frame_addr(frame) + portion as u64 * page_size
    }
}

/// The field of the journal area that holds byte `addr`, by the layouts above. Data
/// and header frames are told apart by `is_header(frame)`.
pub fn field_name(layout: &Layout, addr: u64, is_header: impl Fn(usize) -> bool) -> String {
    let frame = (addr / FRAME_BYTES) as usize;
    let offset = addr % FRAME_BYTES;
    if frame == 0 {
        return match offset {
            0..8 => "manager frame: presence bits".into(),
            8..16 => "manager frame: reusable bits".into(),
            o if (MGR_REUSE_COUNTS..MGR_DESCS).contains(&o) => "manager frame: reuse counters".into(),
            o if o >= MGR_DESCS => {
                let within = (o - MGR_DESCS) % MGR_DESC_BYTES;
                match within {
                    DESC_VALID => "manager frame: valid flag of a header-frame descriptor".into(),
                    DESC_FRAME => "manager frame: header frame index of a descriptor".into(),
                    _ => "manager frame: DB file name".into(),
                }
            }
            _ => "manager frame: unused".into(),
        };
    }
    if !is_header(frame) {
        return "data frame: page image".into();
    }
    let slots_end = HF_SLOTS + (layout.slot_bytes() * layout.header_copies) as u64;
    match offset {
        HF_HOT => "header frame: hot-journal flag".into(),
        o if (HF_FIRST_FREE..HF_REUSE_COUNT).contains(&o) => "header frame: first-free pointer".into(),
        o if (HF_REUSE_COUNT..HF_DESC_HWM).contains(&o) => "header frame: reuse count".into(),
        o if (HF_DESC_HWM..HF_SEGMENTS).contains(&o) => "header frame: descriptor count".into(),
        o if (HF_SEGMENTS..HF_SLOTS).contains(&o) => "header frame: segment count".into(),
        o if (HF_SLOTS..slots_end).contains(&o) => "header frame: journal header".into(),
        o if o >= HF_SEG_TABLE => "header frame: later header segment".into(),
        o if o >= layout.desc_base => match (o - layout.desc_base) % DESC_BYTES as u64 {
            0..4 => "header frame: descriptor PgNo".into(),
            4..8 => "header frame: descriptor CkSum".into(),
            DD_VALID => "header frame: descriptor valid flag".into(),
            _ => "header frame: descriptor PTR or record index".into(),
        },
        _ => "header frame: unused".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_named_by_their_layout_offsets() {
        let layout = Layout::new(2 << 20, 4).unwrap();
        let name = |addr| field_name(&layout, addr, |f| f == 3);
        assert_eq!(name(3), "manager frame: presence bits");
        assert_eq!(name(mgr_desc(5) + DESC_VALID), "manager frame: valid flag of a header-frame descriptor");
        assert_eq!(name(3 * FRAME_BYTES + HF_HOT), "header frame: hot-journal flag");
        assert_eq!(name(layout.desc_addr(3, 7) + DD_VALID), "header frame: descriptor valid flag");
        assert_eq!(name(layout.desc_addr(3, 7) + DD_CKSUM), "header frame: descriptor CkSum");
        assert_eq!(name(4 * FRAME_BYTES + HF_HOT), "data frame: page image");
        assert_eq!(name(layout.segment_addr(3, 2) + SEG_HEADER), "header frame: later header segment");
        assert_eq!(name(3 * FRAME_BYTES + HF_SEGMENTS), "header frame: segment count");
        assert!(layout.desc_addr(3, layout.descriptors - 1) + DESC_BYTES as u64 <= layout.segment_addr(3, 0));
        assert!(Layout::new(2 << 20, 128).unwrap().descriptors > 3000);
        assert!(Layout::new(100, 1).is_err());
    }

    #[test]
    fn fields_index_their_table() {
        for (i, f) in Field::ALL.iter().enumerate() {
            assert_eq!(f.index(), i, "{}", f.name());
        }
    }
}
