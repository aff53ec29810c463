//! The weight-order code used by nvmdb-leaf: a bijection on 64-bit words that lists
//! all words by weight (number of ones), then in colex order within a weight. Value `v`
//! becomes the `v`-th word of that list, so small values get words with few ones: every
//! value below 2^43 has at most 13 ones (against about 21 for its plain binary), while
//! uniformly random values keep an average weight of 32. Writing a code word into
//! never-programmed (zero) PCM cells programs as many cells as it has ones.

/// `BINOMIAL[n][k]` = C(n, k) for n, k ≤ 64, saturated at u128 (none saturate).
const fn binomials() -> [[u128; 65]; 65] {
    let mut table = [[0u128; 65]; 65];
    let mut n = 0;
    while n <= 64 {
        table[n][0] = 1;
        let mut k = 1;
        while k <= n {
            table[n][k] = table[n - 1][k - 1] + if k < n { table[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    table
}

static BINOMIAL: [[u128; 65]; 65] = binomials();

/// The code word of `value`.
pub fn encode(value: u64) -> u64 {
    let mut rank = u128::from(value);
    let mut weight = 0;
    while rank >= BINOMIAL[64][weight] {
        rank -= BINOMIAL[64][weight];
        weight += 1;
    }
    let mut word = 0u64;
    for position in (0..64).rev() {
        if weight == 0 {
            break;
        }
        if BINOMIAL[position][weight] <= rank {
            word |= 1 << position;
            rank -= BINOMIAL[position][weight];
            weight -= 1;
        }
    }
    word
}

/// The value of a code word.
pub fn decode(word: u64) -> u64 {
    let weight = word.count_ones() as usize;
    let below: u128 = (0..weight).map(|w| BINOMIAL[64][w]).sum();
    let mut rank = 0u128;
    let mut rest = word;
    let mut i = 1;
    while rest != 0 {
        rank += BINOMIAL[rest.trailing_zeros() as usize][i];
        rest &= rest - 1;
        i += 1;
    }
    u64::try_from(below + rank).expect("a code word's value fits in 64 bits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_get_light_words_by_hand() {
        assert_eq!(encode(0), 0);
        // Weight 1: words 1, 2, 4, ... for values 1..=64.
        assert_eq!(encode(1), 1);
        assert_eq!(encode(2), 2);
        assert_eq!(encode(64), 1 << 63);
        // Weight 2 starts at value 65 with the colex-first pair {0, 1}.
        assert_eq!(encode(65), 0b11);
        assert_eq!(encode(66), 0b101);
        assert_eq!(encode(u64::MAX), u64::MAX);
        assert_eq!(encode((1 << 43) - 1).count_ones(), 13);
    }

    #[test]
    fn round_trips() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..10_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            for v in [x, x >> 21, x >> 40, x >> 60] {
                assert_eq!(decode(encode(v)), v);
            }
        }
        for v in 0..5000u64 {
            assert_eq!(decode(encode(v)), v);
        }
    }
}
