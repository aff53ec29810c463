//! Division and remainder by a divisor fixed at construction: a shift and a mask when it
//! is a power of two (every preset's set counts, ranks and page size), a division
//! otherwise. A 64-bit division takes tens of cycles on the host, and the cache model
//! divides by set counts and ranks on every access.

/// A nonzero divisor, with its power-of-two shift when it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Divisor {
    divisor: u64,
    /// `log2(divisor)` when the divisor is a power of two.
    shift: Option<u32>,
}

impl Divisor {
    pub(crate) fn new(divisor: u64) -> Divisor {
        assert!(divisor > 0, "divisor is 0");
        Divisor { divisor, shift: divisor.is_power_of_two().then(|| divisor.trailing_zeros()) }
    }

    /// `x / divisor`.
    #[inline]
    pub(crate) fn div(self, x: u64) -> u64 {
        match self.shift {
            Some(shift) => x >> shift,
            None => x / self.divisor,
        }
    }

    /// `x % divisor`.
    #[inline]
    pub(crate) fn rem(self, x: u64) -> u64 {
        match self.shift {
            Some(_) => x & (self.divisor - 1),
            None => x % self.divisor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotients_and_remainders_match_the_operators() {
        let xs = [0, 1, 2, 3, 63, 64, 65, 4095, 4096, 1 << 40, (1 << 40) + 17, u64::MAX - 1, u64::MAX];
        for d in [1, 2, 3, 4, 5, 7, 8, 64, 80, 96, 512, 4096, 8192, 1 << 63, u64::MAX] {
            let divisor = Divisor::new(d);
            for x in xs {
                assert_eq!(divisor.div(x), x / d, "{x} / {d}");
                assert_eq!(divisor.rem(x), x % d, "{x} % {d}");
            }
        }
    }
}
