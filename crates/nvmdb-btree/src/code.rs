//! The weight-order code used by nvmdb-leaf: a bijection on 64-bit words that lists
//! all words by weight (number of ones), then in colex order within a weight. Value `v`
//! becomes the `v`-th word of that list, so small values get words with few ones: every
//! value below 2^43 has at most 13 ones (against about 21 for its plain binary), while
//! uniformly random values keep an average weight of 32. Writing a code word into
//! never-programmed (zero) PCM cells programs as many cells as it has ones.

/// `BINOMIAL[n][k]` = C(n, k) for n, k ≤ 64, and 0 for k > n. Every entry fits in a
/// u64 (the largest, C(64, 32), is below 2^61), and so does every rank below: a value is
/// a u64, and its rank within its weight is below C(64, weight).
const fn binomials() -> [[u64; 65]; 65] {
    let mut table = [[0u64; 65]; 65];
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

static BINOMIAL: [[u64; 65]; 65] = binomials();

/// `BY_WEIGHT[k][n]` = C(n, k) for n, k < 64: [`BINOMIAL`] transposed and cut to the
/// weights below 64, so that [`encode`]'s searches index it with masked indices.
const fn by_weight() -> [[u64; 64]; 64] {
    let table = binomials();
    let mut out = [[0u64; 64]; 64];
    let mut k = 0;
    while k < 64 {
        let mut n = 0;
        while n < 64 {
            out[k][n] = table[n][k];
            n += 1;
        }
        k += 1;
    }
    out
}

static BY_WEIGHT: [[u64; 64]; 64] = by_weight();

/// `BELOW[w]` = the words of weight below `w`, the sum of C(64, j) for j < w; `BELOW[64]`
/// is 2^64 − 1, so every entry fits in a u64.
const fn below() -> [u64; 65] {
    let table = binomials();
    let mut sums = [0u64; 65];
    let mut w = 1;
    while w <= 64 {
        sums[w] = sums[w - 1] + table[64][w - 1];
        w += 1;
    }
    sums
}

static BELOW: [u64; 65] = below();

/// [`BELOW`] without its last entry, for [`last_at_most`]: the weights below 64.
static FIRST_OF_WEIGHT: [u64; 64] = {
    let all = below();
    let mut out = [0u64; 64];
    let mut w = 0;
    while w < 64 {
        out[w] = all[w];
        w += 1;
    }
    out
};

/// The last index whose entry is not above `x`, in a non-decreasing `row` whose first
/// entry is not above `x`. A search of three four-way steps: each compares `x` with three
/// entries whose loads do not wait for each other, so the chain of dependent loads is
/// three long where a binary search's is six (1.6× faster encodes, BENCHMARKS.md).
#[inline(always)]
fn last_at_most(row: &[u64; 64], x: u64) -> usize {
    let mut position = 0;
    for step in [16, 4, 1] {
        let above = |k: usize| usize::from(row[(position + k * step) & 63] <= x);
        position += (above(1) + above(2) + above(3)) * step;
    }
    position
}

/// The code word of `value`.
pub fn encode(value: u64) -> u64 {
    if value == u64::MAX {
        // The one word of weight 64.
        return u64::MAX;
    }
    // The weight: the last w whose first value is not above `value`.
    let mut weight = last_at_most(&FIRST_OF_WEIGHT, value);
    let mut rank = value - FIRST_OF_WEIGHT[weight];
    // Colex unranking: the highest one is the last position p whose C(p, weight) is not
    // above the rank; the rank less that C(p, weight) is below C(p, weight − 1), so the
    // next one, found the same way at one weight less, lies below p. C(p, weight) never
    // falls as p grows (it is 0 for p < weight), so each position is found by a search
    // over the 64. At weight 1, C(p, 1) = p, so the last one is at the rank itself.
    let mut word = 0u64;
    while weight > 1 {
        let row = &BY_WEIGHT[weight];
        let position = last_at_most(row, rank);
        word |= 1 << position;
        rank -= row[position];
        weight -= 1;
    }
    if weight == 1 {
        word |= 1 << rank;
    }
    word
}

/// The value of a code word.
pub fn decode(word: u64) -> u64 {
    let mut rank = BELOW[word.count_ones() as usize];
    let mut rest = word;
    let mut i = 1;
    while rest != 0 {
        rank += BINOMIAL[rest.trailing_zeros() as usize][i];
        rest &= rest - 1;
        i += 1;
    }
    rank
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

    /// The code as first written, with u128 ranks and a branch per position: the
    /// reference the u64 code above must match word for word.
    fn encode_reference(value: u64) -> u64 {
        let b = |n: usize, k: usize| u128::from(BINOMIAL[n][k]);
        let mut rank = u128::from(value);
        let mut weight = 0;
        while rank >= b(64, weight) {
            rank -= b(64, weight);
            weight += 1;
        }
        let mut word = 0u64;
        for position in (0..64).rev() {
            if weight == 0 {
                break;
            }
            if b(position, weight) <= rank {
                word |= 1 << position;
                rank -= b(position, weight);
                weight -= 1;
            }
        }
        word
    }

    fn decode_reference(word: u64) -> u64 {
        let weight = word.count_ones() as usize;
        let below: u128 = (0..weight).map(|w| u128::from(BINOMIAL[64][w])).sum();
        let mut rank = 0u128;
        let mut rest = word;
        let mut i = 1;
        while rest != 0 {
            rank += u128::from(BINOMIAL[rest.trailing_zeros() as usize][i]);
            rest &= rest - 1;
            i += 1;
        }
        u64::try_from(below + rank).expect("a code word's value fits in 64 bits")
    }

    #[test]
    fn the_code_matches_its_u128_reference() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut values: Vec<u64> = (0..5000).chain([u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1]).collect();
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            values.extend((0..64).step_by(7).map(|shift| x >> shift));
        }
        // The first value of every weight, and the last of the weight below.
        for &first in &BELOW {
            values.push(first);
            values.push(first.wrapping_sub(1));
        }
        for v in values {
            assert_eq!(encode(v), encode_reference(v), "encode({v})");
            assert_eq!(decode(v), decode_reference(v), "decode({v})");
        }
        // The binomials' largest entry and the sums of every weight are those of u128
        // arithmetic, which cannot overflow here.
        assert_eq!(BINOMIAL[64][32], 1_832_624_140_942_590_534);
        assert_eq!(BELOW[64], u64::MAX);
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
