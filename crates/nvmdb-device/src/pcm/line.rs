//! One PCM line: its geometry, its cells' encodings (plain, one flip cell per word,
//! Flip-N-Write), the record of a line counting every cell, how a write programs it, and
//! the conversions between a line's words and its bytes.

use serde::{Deserialize, Serialize};

use crate::error::DeviceError;
use crate::wear::{LineWear, FLIP_LANE, LANES};

/// Bytes per line.
pub const LINE_BYTES: usize = 64;
/// Bytes per word.
pub const WORD_BYTES: usize = 8;
/// Words per line.
pub const WORDS_PER_LINE: usize = LINE_BYTES / WORD_BYTES;

/// Flip-N-Write: one flip cell per `group_bits` data bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlipNWrite {
    /// Data bits per flip cell: 8, 16, 32 or 64.
    pub group_bits: u32,
}

impl FlipNWrite {
    /// Flip-N-Write with one flip cell per 64-bit word.
    pub const WORD: FlipNWrite = FlipNWrite { group_bits: 64 };

    /// Checks the group size.
    pub fn new(group_bits: u32) -> Result<FlipNWrite, DeviceError> {
        match group_bits {
            8 | 16 | 32 | 64 => Ok(FlipNWrite { group_bits }),
            other => Err(DeviceError::Config(format!("Flip-N-Write group must be 8, 16, 32 or 64 bits, not {other}"))),
        }
    }

    pub(super) fn flips_per_word(self) -> u32 {
        64 / self.group_bits
    }

    /// Mask of the low group's data bits.
    #[inline]
    pub(super) fn low_group_mask(self) -> u64 {
        if self.group_bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.group_bits) - 1
        }
    }

    /// Expands flip bits into the data mask they invert.
    #[inline]
    pub(super) fn expand(self, flips: u64) -> u64 {
        if self.group_bits == 64 {
            return 0u64.wrapping_sub(flips & 1);
        }
        let low = self.low_group_mask();
        (0..self.flips_per_word()).fold(0, |m, g| m | (low * (flips >> g & 1)) << (g * self.group_bits))
    }

    /// Chooses the encoding of `new` over physical cells `cells` with flip bits `flips`:
    /// per group, the cheaper of plain and inverted, where the cost counts the group's
    /// changed data cells plus its flip cell if that changes; on a tie the current flip
    /// bit stays. Returns the new physical cells and flip bits.
    #[inline]
    pub fn encode(self, cells: u64, flips: u64, new: u64) -> (u64, u64) {
        let diff = cells ^ new;
        let low = self.low_group_mask();
        let n = self.group_bits;
        let mut new_flips = 0u64;
        let mut invert = 0u64;
        for group in 0..self.flips_per_word() {
            let shift = group * n;
            let changed = ((diff >> shift) & low).count_ones();
            let flip = flips >> group & 1;
            let cost_plain = changed + u32::from(flip != 0);
            let cost_inverted = n - changed + u32::from(flip != 1);
            let chosen = match cost_plain.cmp(&cost_inverted) {
                std::cmp::Ordering::Less => 0,
                std::cmp::Ordering::Greater => 1,
                std::cmp::Ordering::Equal => flip,
            };
            new_flips |= chosen << group;
            invert |= (low * chosen) << shift;
        }
        (new ^ invert, new_flips)
    }
}

/// How logical words map to physical cells and flip cells. A record keeps each word's
/// logical value and its flip cells; its data cells are the value with every group whose
/// flip cell is set inverted, so a read is a copy and a write compares logical values.
pub(super) trait Encoding: Copy {
    /// Whether the encoding has flip cells (without them a word's programmed cells are
    /// its changed bits, and no flip cell is ever set).
    const FLIPS: bool = true;

    /// A word whose logical value changes from `old` to `new`, with flip bits `flips`: the
    /// data cells it programs and its new flip bits.
    fn program(self, old: u64, flips: u64, new: u64) -> (u64, u64);
}

/// No Flip-N-Write: cells hold the data.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plain;

impl Encoding for Plain {
    const FLIPS: bool = false;

    #[inline]
    fn program(self, old: u64, _flips: u64, new: u64) -> (u64, u64) {
        (old ^ new, 0)
    }
}

/// Flip-N-Write with one flip cell per 64-bit word (the common case, specialised).
#[derive(Debug, Clone, Copy)]
pub(super) struct WordFlip;

impl Encoding for WordFlip {
    /// [`FlipNWrite::encode`] for one 64-bit group, without branches: the cells hold
    /// `old ^ m_old` (`m_old` all ones when the flip cell is set); plain costs
    /// `changed + flip` and inverted `65 - changed - flip`, which never tie, so inverting
    /// is cheaper exactly when `changed + flip > 32`.
    #[inline]
    fn program(self, old: u64, flips: u64, new: u64) -> (u64, u64) {
        let m_old = 0u64.wrapping_sub(flips & 1);
        let plain = (old ^ new) ^ m_old;
        let invert = u64::from(u64::from(plain.count_ones()) + (flips & 1) > 32);
        (plain ^ 0u64.wrapping_sub(invert), invert)
    }
}

impl Encoding for FlipNWrite {
    #[inline]
    fn program(self, old: u64, flips: u64, new: u64) -> (u64, u64) {
        let cells = old ^ self.expand(flips);
        let (new_cells, new_flips) = FlipNWrite::encode(self, cells, flips, new);
        (cells ^ new_cells, new_flips)
    }
}

/// What one line write did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineWrite {
    /// Words with a programmed cell.
    pub words: u32,
    /// Cells programmed, flip cells included.
    pub bits: u32,
    /// Bit `w` set when word `w` had a programmed cell.
    pub word_mask: u8,
}

/// One line's logical words, flip cells and lowest wear plane, kept together so that a
/// write-back touches three adjacent host cache lines (plus the line's higher wear planes,
/// if the carry reaches them). The fields are in this order ([`LineWear`] too): a record
/// at a 64-byte boundary holds its words in one host line, its flip cells, the pointer to
/// its higher planes and plane 0 of words 0 to 4 in the next, and plane 0 of words 5 to 7
/// and of the flip lane in the third.
#[derive(Clone, Default)]
#[repr(C)]
pub(super) struct LineRecord {
    /// The logical words; the data cells are these with the groups whose flip cell is set
    /// inverted (see [`Encoding`]).
    pub(super) words: [u64; WORDS_PER_LINE],
    /// The flip cells of word `w` at bits `8w..8w + flips_per_word`.
    pub(super) flips: u64,
    pub(super) wear: LineWear,
}

/// Counting every cell: `record` takes the logical words `new`, encoded by `enc`, and its
/// programmed cells are added to its wear. Returns the line's result and the flip cells
/// programmed; a line whose logical words do not change programs nothing.
#[inline(always)]
pub(super) fn program_record<E: Encoding>(
    record: &mut LineRecord,
    new: &[u64; WORDS_PER_LINE],
    enc: E,
) -> (LineWrite, u32) {
    let LineRecord { words, flips, wear } = record;
    let old_flips_all = *flips;
    // An unchanged logical word programs nothing (its current encoding costs 0), and a
    // changed one programs at least one cell or flip cell: so the words written are
    // exactly the words whose logical value changes.
    let changed = (0..WORDS_PER_LINE).fold(0u8, |mask, w| mask | u8::from(new[w] != words[w]) << w);
    // Most lines of a page written back are unchanged: they program nothing.
    if changed == 0 {
        return (LineWrite::default(), 0);
    }
    // The higher wear planes are the only part of the write not beside the words.
    wear.prefetch_high();
    if !E::FLIPS {
        // Without flip cells a word programs its changed bits (an unchanged word none):
        // every word at once, without a loop over the changed ones.
        let programmed: [u64; LANES] =
            std::array::from_fn(|lane| if lane < WORDS_PER_LINE { words[lane] ^ new[lane] } else { 0 });
        let bits = programmed.iter().map(|cells| cells.count_ones()).sum();
        *words = *new;
        wear.add_lanes(&programmed, u16::from(changed));
        return (LineWrite { words: changed.count_ones(), bits, word_mask: changed }, 0);
    }
    // Per lane, the cells this write programs.
    let mut programmed = [0u64; LANES];
    // How many cells this write programs.
    let mut bits = 0u32;
    let mut new_flips_all = old_flips_all;
    let mut encode = |w: usize| {
        let old_flips = old_flips_all >> (8 * w) & 0xff;
        let (cells, new_flips) = enc.program(words[w], old_flips, new[w]);
        programmed[w] = cells;
        bits += cells.count_ones();
        new_flips_all ^= (old_flips ^ new_flips) << (8 * w);
    };
    if changed.count_ones() > 2 {
        // Many words change (a new line): every word, without the loop's dependent steps.
        // An unchanged word's encoding programs nothing and keeps its flip cells (its
        // current encoding is the cheapest), so it adds nothing.
        (0..WORDS_PER_LINE).for_each(&mut encode);
    } else {
        let mut pending = changed;
        while pending != 0 {
            encode(pending.trailing_zeros() as usize % WORDS_PER_LINE);
            pending &= pending - 1;
        }
    }
    *words = *new;
    let flip_programmed = old_flips_all ^ new_flips_all;
    programmed[FLIP_LANE] = flip_programmed;
    bits += flip_programmed.count_ones();
    *flips = new_flips_all;
    // Every lane that programs a cell is a changed word's or the flip lane (a changed
    // word may program only its flip cells: its lane adds nothing).
    wear.add_lanes(&programmed, u16::from(changed) | u16::from(flip_programmed != 0) << FLIP_LANE);
    (LineWrite { words: changed.count_ones(), bits, word_mask: changed }, flip_programmed.count_ones())
}

/// `words` (a line) with its little-endian bytes from `start` on replaced by `bytes`, which
/// end within the line; only the words they overlap are touched.
pub(super) fn with_bytes_replaced(words: [u64; WORDS_PER_LINE], start: usize, bytes: &[u8]) -> [u64; WORDS_PER_LINE] {
    let mut line = words_to_bytes(&words);
    line[start..start + bytes.len()].copy_from_slice(bytes);
    bytes_to_words(&line)
}

/// Little-endian bytes of a line.
pub fn words_to_bytes(words: &[u64; WORDS_PER_LINE]) -> [u8; LINE_BYTES] {
    let mut bytes = [0u8; LINE_BYTES];
    for (w, word) in words.iter().enumerate() {
        bytes[w * WORD_BYTES..(w + 1) * WORD_BYTES].copy_from_slice(&word.to_le_bytes());
    }
    bytes
}

/// Words of a line from its little-endian bytes.
pub fn bytes_to_words(bytes: &[u8; LINE_BYTES]) -> [u64; WORDS_PER_LINE] {
    let mut words = [0u64; WORDS_PER_LINE];
    for (w, word) in words.iter_mut().enumerate() {
        let mut b = [0u8; WORD_BYTES];
        b.copy_from_slice(&bytes[w * WORD_BYTES..(w + 1) * WORD_BYTES]);
        *word = u64::from_le_bytes(b);
    }
    words
}
