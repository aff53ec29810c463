//! One-byte flags in PCM: plain (bit 0) or XOR flags (Figure 8).
//!
//! An XOR flag's value is the parity of its 8 bits. Changing the value shifts the byte
//! left by one and inserts the inverse of the old most significant bit at the least
//! significant position: exactly one cell changes per flip, and over 16 flips every one
//! of the 8 cells has changed twice.

/// The value a flag byte holds.
pub fn value(byte: u8, xor: bool) -> bool {
    if xor {
        byte.count_ones() % 2 == 1
    } else {
        byte & 1 == 1
    }
}

/// The byte that gives the flag `want`, from the current byte `byte`. Returns `byte`
/// itself when the value already holds, so nothing is programmed.
pub fn set(byte: u8, want: bool, xor: bool) -> u8 {
    if value(byte, xor) == want {
        return byte;
    }
    if xor {
        let inserted = !(byte >> 7) & 1;
        (byte << 1) | inserted
    } else {
        u8::from(want)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_xor_flip_changes_one_cell_and_wears_all_eight_evenly() {
        let mut byte = 0u8;
        let mut wear = [0u32; 8];
        for i in 0..160 {
            let want = i % 2 == 0;
            let next = set(byte, want, true);
            assert_eq!(value(next, true), want);
            assert_eq!((byte ^ next).count_ones(), 1, "flip {i} from {byte:08b} to {next:08b}");
            for (bit, w) in wear.iter_mut().enumerate() {
                *w += u32::from((byte ^ next) >> bit & 1);
            }
            byte = next;
        }
        assert_eq!(wear, [20; 8]);
    }

    #[test]
    fn a_plain_flag_wears_one_cell() {
        let mut byte = 0u8;
        for i in 0..10 {
            byte = set(byte, i % 2 == 0, false);
            assert_eq!(value(byte, false), i % 2 == 0);
        }
        assert_eq!(byte, 0);
        assert_eq!(set(1, true, false), 1);
        assert_eq!(set(0b1011_0000, false, true), 0b0110_0000);
    }
}
