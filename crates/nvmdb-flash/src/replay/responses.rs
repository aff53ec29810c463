//! The replay's response times: every one kept, for the exact mean, nearest-rank
//! 99th percentile and maximum of the report.
//!
//! The sum and the maximum are kept as the times arrive. The times themselves are kept
//! as `u32` while every one fits (below 2^32 ns, about 4.3 s: half the memory, and half
//! the host cache lines, of `u64`), and widened to `u64` at the first that does not, so
//! every figure is exact whatever the times.

/// Host memory the response times of a replay of `requests` requests a pass over
/// `passes` passes take at most, bytes: every time in the whole run's list, and with more
/// than one pass the last pass's again; at most 8 B each (4 B while all fit `u32`), in a
/// vector grown by doubling: its capacity, and the old half while it grows (24 B a time).
pub fn estimated_response_bytes(requests: u64, passes: u64) -> u64 {
    let last_pass = if passes > 1 { requests } else { 0 };
    requests.saturating_mul(passes).saturating_add(last_pass).saturating_mul(24)
}

/// Every measured response time, ns.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResponseTimes {
    /// Each time, while all fit in `u32`.
    narrow: Vec<u32>,
    /// Each time, once one did not fit (`narrow` is then empty).
    wide: Vec<u64>,
    sum_ns: u128,
    max_ns: u64,
}

/// What the report gives of the response times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResponseSummary {
    /// Mean, rounded down, ns.
    pub mean_ns: u64,
    /// 99th percentile (nearest rank), ns.
    pub p99_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
}

impl ResponseTimes {
    /// Adds one response time.
    #[inline]
    pub(crate) fn push(&mut self, ns: u64) {
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
        if !self.wide.is_empty() {
            self.wide.push(ns);
            return;
        }
        match u32::try_from(ns) {
            Ok(narrow) => self.narrow.push(narrow),
            Err(_) => self.widen(ns),
        }
    }

    /// [`ResponseTimes::push`] of the first time that does not fit `u32`: every time so
    /// far moves to `wide`.
    #[cold]
    fn widen(&mut self, ns: u64) {
        self.wide = self.narrow.drain(..).map(u64::from).collect();
        self.narrow = Vec::new();
        self.wide.push(ns);
    }

    /// Forgets every time (the end of the warm-up).
    pub(crate) fn clear(&mut self) {
        *self = ResponseTimes::default();
    }

    /// The mean, the 99th percentile and the maximum (`None` with no time). Reorders the
    /// times (a selection, not a sort).
    pub(crate) fn summary(&mut self) -> Option<ResponseSummary> {
        let n = self.narrow.len() + self.wide.len();
        if n == 0 {
            return None;
        }
        let rank = (n * 99).div_ceil(100).max(1) - 1;
        let p99_ns = if self.wide.is_empty() {
            u64::from(*self.narrow.select_nth_unstable(rank).1)
        } else {
            *self.wide.select_nth_unstable(rank).1
        };
        Some(ResponseSummary { mean_ns: (self.sum_ns / n as u128) as u64, p99_ns, max_ns: self.max_ns })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The figures as the report defined them before: from every time sorted.
    fn reference(times: &[u64]) -> Option<ResponseSummary> {
        if times.is_empty() {
            return None;
        }
        let mut sorted = times.to_vec();
        sorted.sort_unstable();
        let n = sorted.len();
        let rank = (n * 99).div_ceil(100).max(1) - 1;
        let sum: u128 = sorted.iter().map(|&t| u128::from(t)).sum();
        Some(ResponseSummary { mean_ns: (sum / n as u128) as u64, p99_ns: sorted[rank], max_ns: sorted[n - 1] })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Narrow, wide from the start, and widened midway: the same figures as sorting.
        #[test]
        fn summary_matches_sorting(
            times in prop::collection::vec(
                prop_oneof![8 => 0u64..1_000_000, 1 => 0u64..=u64::from(u32::MAX), 1 => any::<u64>()],
                0..400,
            )
        ) {
            let mut kept = ResponseTimes::default();
            for &t in &times {
                kept.push(t);
            }
            prop_assert_eq!(kept.summary(), reference(&times));
        }
    }

    #[test]
    fn widening_keeps_the_earlier_times_and_clear_forgets_them() {
        let mut kept = ResponseTimes::default();
        let times: Vec<u64> = (0..200).map(|i| i * 1_000).chain([u64::from(u32::MAX) + 1, 7, u64::MAX / 2]).collect();
        for &t in &times {
            kept.push(t);
        }
        assert!(kept.narrow.is_empty() && kept.wide.len() == times.len());
        assert_eq!(kept.summary(), reference(&times));
        // u32::MAX itself stays narrow.
        kept.clear();
        assert_eq!(kept.summary(), None);
        kept.push(u64::from(u32::MAX));
        assert!(kept.wide.is_empty());
        assert_eq!(
            kept.summary(),
            Some(ResponseSummary { mean_ns: 4_294_967_295, p99_ns: 4_294_967_295, max_ns: 4_294_967_295 })
        );
    }
}
