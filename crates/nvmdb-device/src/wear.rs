//! Exact per-cell program counters, stored bit-sliced.
//!
//! A line has 9 lanes of 64 cells: 8 data words and one lane holding the line's flip
//! cells (up to 8 per word). Counter bit `k` of the 64 cells of a lane is one `u64`, so
//! one increment of every programmed cell of a lane is a ripple carry over these bit
//! planes instead of a loop over set bits.
//!
//! Plane 0 is held inline, so that it sits in the line's record beside the cells. Planes
//! 1 and up are on the heap, and are added only when some counter of the line overflows:
//! memory grows with the number of writes a line has seen, not with device size.

use serde::{Deserialize, Serialize};

/// Lanes per line: 8 data words plus the flip-cell lane.
pub const LANES: usize = 9;
/// The lane index of the flip cells.
pub const FLIP_LANE: usize = 8;

/// Adds `carry` to one plane of the first `N` lanes (the others' carry is zero), leaving in
/// `carry` what carries out; returns whether anything does: one pass over the lanes
/// without early exits.
#[inline]
fn ripple<const N: usize>(plane: &mut [u64; LANES], carry: &mut [u64; LANES]) -> bool {
    for (bits, c) in plane[..N].iter_mut().zip(carry[..N].iter_mut()) {
        let old = *bits;
        *bits = old ^ *c;
        *c &= old;
    }
    carry[..N].iter().fold(0, |any, &c| any | c) != 0
}

/// The most host memory the higher counter planes of `lines` lines take after `writes`
/// line writes among them in all, bytes: a line written `w` times has counters below
/// `w + 1`, so `ceil(log2(w + 1)) - 1` planes of 72 B beyond the inline one; summed over
/// the lines that is at most `lines × log2(1 + writes / lines)` (the logarithm is
/// concave), and at most one plane per write. The bound memory estimates take where
/// lines are rewritten.
pub fn higher_plane_bytes_bound(lines: u64, writes: u64) -> u64 {
    if lines == 0 {
        return 0;
    }
    let planes = (lines as f64 * (1.0 + writes as f64 / lines as f64).log2()).min(writes as f64).ceil();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a non-negative float rounded up; the cast saturates"
    )]
    let planes = planes as u64;
    planes.saturating_mul(LANES as u64 * 8)
}

/// Bit-sliced program counters of the 576 cells of one line.
///
/// The pointer to the higher planes comes first: in a PCM line record it then shares a
/// host cache line with the flip cells before it.
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub struct LineWear {
    /// Planes 1 and up; a plane exists once some counter of the line has needed it.
    high: Box<[[u64; LANES]]>,
    /// Plane 0: the low bit of every counter.
    low: [u64; LANES],
}

impl LineWear {
    /// Plane 0 of the last lane: with plane 0 of the other lanes before it, the end of a
    /// line record ([`Pcm::prefetch_line`](crate::pcm::Pcm::prefetch_line) asks for it).
    #[inline]
    pub(crate) fn last_low_lane_ref(&self) -> &u64 {
        &self.low[LANES - 1]
    }

    /// Asks the host for every host cache line of the higher planes, without waiting for
    /// them: one prefetch per 64 bytes from their start, and one of their last word.
    #[inline]
    pub(crate) fn prefetch_high(&self) {
        let words = self.high.as_flattened();
        for word in words.iter().step_by(8) {
            mem_prefetch::prefetch_read_data::<_, 3>(word);
        }
        if let Some(last) = words.last() {
            mem_prefetch::prefetch_read_data::<_, 3>(last);
        }
    }

    /// Adds one program to every cell whose bit is set in `mask`.
    #[inline]
    pub fn add(&mut self, lane: usize, mask: u64) {
        let bits = self.low[lane];
        self.low[lane] = bits ^ mask;
        let carry = bits & mask;
        if carry != 0 {
            self.carry_lane(lane, carry);
        }
    }

    /// Adds one program to every cell whose bit is set in `masks[lane]`, in every lane
    /// named in `lanes`: bit `lane` of `lanes` is set for every lane with
    /// `masks[lane] != 0` (a set bit over a zero mask adds nothing). A write that programs
    /// one or two lanes (a word and its flip cells) ripples lane by lane; one that
    /// programs more ripples across all lanes at once, with one test per plane.
    #[inline]
    pub fn add_lanes(&mut self, masks: &[u64; LANES], lanes: u16) {
        if lanes.count_ones() > 2 {
            self.add_all_lanes(masks);
            return;
        }
        let mut rest = lanes;
        while rest != 0 {
            let lane = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            self.add(lane, masks[lane]);
        }
    }

    fn add_all_lanes(&mut self, masks: &[u64; LANES]) {
        // Without flip cells programmed (always, without Flip-N-Write) the flip lane
        // takes no carry: the data lanes alone.
        if masks[FLIP_LANE] == 0 {
            self.add_first_lanes::<FLIP_LANE>(masks);
        } else {
            self.add_first_lanes::<LANES>(masks);
        }
    }

    /// [`LineWear::add_all_lanes`] of masks zero beyond the first `N` lanes.
    #[inline]
    fn add_first_lanes<const N: usize>(&mut self, masks: &[u64; LANES]) {
        let mut carry = *masks;
        if ripple::<N>(&mut self.low, &mut carry) {
            self.carry_lanes::<N>(carry);
        }
    }

    /// Ripples one lane's carry out of plane 0 through the higher planes.
    fn carry_lane(&mut self, lane: usize, mut carry: u64) {
        for plane in self.high.iter_mut() {
            let bits = plane[lane];
            plane[lane] = bits ^ carry;
            carry &= bits;
            if carry == 0 {
                return;
            }
        }
        let mut top = [0u64; LANES];
        top[lane] = carry;
        self.push_plane(&top);
    }

    /// Ripples the first `N` lanes' carry out of plane 0 through the higher planes.
    fn carry_lanes<const N: usize>(&mut self, mut carry: [u64; LANES]) {
        for plane in self.high.iter_mut() {
            if !ripple::<N>(plane, &mut carry) {
                return;
            }
        }
        self.push_plane(&carry);
    }

    /// Adds a top plane holding `top`. Grows by exactly one plane: most lines never need
    /// more than a few, and spare capacity would dominate the memory of large structures.
    /// A line's first heap plane is one allocation of the plane, without a vector's steps:
    /// its second program of a cell grows it, and a write-back benchmark over 64 MiB, whose
    /// lines see few writes, grows a plane in 0.83 of its write-backs.
    #[cold]
    fn push_plane(&mut self, top: &[u64; LANES]) {
        if self.high.is_empty() {
            self.high = Box::new([*top]);
            return;
        }
        let mut planes = Vec::with_capacity(self.high.len() + 1);
        planes.extend_from_slice(&self.high);
        planes.push(*top);
        self.high = planes.into_boxed_slice();
    }

    /// Planes, plane 0 included.
    fn plane_count(&self) -> usize {
        1 + self.high.len()
    }

    /// Bit plane `k` of `lane`.
    fn plane(&self, k: usize, lane: usize) -> u64 {
        match k {
            0 => self.low[lane],
            _ => self.high[k - 1][lane],
        }
    }

    /// An upper bound of the line's counts: each is below 2^planes.
    #[inline]
    pub fn count_bound(&self) -> u64 {
        u64::MAX >> (64 - self.plane_count().min(64))
    }

    /// The line's largest count, from its top plane down: the cells still in the running
    /// narrow to those with the next bit wherever some cell of any lane has it.
    pub fn max(&self) -> u64 {
        let mut candidates = [u64::MAX; LANES];
        let mut max = 0u64;
        for k in (0..self.plane_count()).rev() {
            let plane = if k == 0 { &self.low } else { &self.high[k - 1] };
            let with_bit: [u64; LANES] = std::array::from_fn(|lane| candidates[lane] & plane[lane]);
            if with_bit.iter().any(|&bits| bits != 0) {
                candidates = with_bit;
                max |= 1 << k;
            }
        }
        max
    }

    /// The exact program count of one cell.
    pub fn count(&self, lane: usize, bit: u32) -> u64 {
        (0..self.plane_count()).map(|k| ((self.plane(k, lane) >> bit) & 1) << k).sum()
    }

    /// The line's largest count and the sum of its counts, returned in that order, and
    /// its cells added to a log2 histogram (`valid[lane]` marks the lane's valid cells;
    /// bucket 0 holds cells never programmed, bucket `k + 1` cells whose count is in
    /// `[2^k, 2^(k+1))`), in one pass over the planes (a wear report visits every
    /// written line).
    pub fn summarise(&self, valid: &[u64; LANES], histogram: &mut Vec<u64>) -> (u64, u64) {
        let mut above = [0u64; LANES];
        let mut candidates = [u64::MAX; LANES];
        let mut lane_max = [0u64; LANES];
        let mut total = 0u64;
        for k in (0..self.plane_count()).rev() {
            let plane = if k == 0 { &self.low } else { &self.high[k - 1] };
            let (mut ones, mut tops) = (0u64, 0u64);
            for lane in 0..LANES {
                let bits = plane[lane];
                ones += u64::from(bits.count_ones());
                // Whether some cell still in the running for the lane's maximum has bit k.
                let with_bit = candidates[lane] & bits;
                let has = u64::from(with_bit != 0);
                candidates[lane] = if has == 1 { with_bit } else { candidates[lane] };
                lane_max[lane] |= has << k;
                tops += u64::from((bits & !above[lane] & valid[lane]).count_ones());
                above[lane] |= bits;
            }
            total += ones << k;
            if tops != 0 {
                if histogram.len() < k + 2 {
                    histogram.resize(k + 2, 0);
                }
                histogram[k + 1] += tops;
            }
        }
        if histogram.is_empty() {
            histogram.push(0);
        }
        histogram[0] += (0..LANES).map(|lane| u64::from((!above[lane] & valid[lane]).count_ones())).sum::<u64>();
        (lane_max.into_iter().max().unwrap_or(0), total)
    }

    /// Bytes of counter memory this line holds on the heap (plane 0 is inline).
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.high)
    }
}

/// A summary of device wear.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WearReport {
    /// The largest program count of any one cell (flip cells included).
    pub max_cell_writes: u64,
    /// The sum of all program counts (equals `bits_written`).
    pub total_cell_writes: u64,
    /// Cells in lines that have been written (data and flip cells).
    pub cells_tracked: u64,
    /// Log2 histogram over tracked cells: `[0]` never programmed, `[k + 1]` programmed
    /// `2^k ..= 2^(k+1) - 1` times.
    pub histogram_log2: Vec<u64>,
}

/// Lifetime estimates from wear measured over a span of simulated time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Lifetime {
    /// Program cycles a cell survives.
    pub endurance: u64,
    /// Seconds until the hottest cell dies at the measured rate.
    pub hottest_cell_seconds: f64,
    /// Seconds until the device dies under ideal wear levelling:
    /// total cells × endurance / bit-write rate.
    pub ideal_levelling_seconds: f64,
}

impl Lifetime {
    /// Estimates lifetime. `elapsed_seconds` is the simulated time over which `report`'s
    /// wear accrued; `device_cells` the cells of the whole device (data and flip).
    pub fn estimate(report: &WearReport, device_cells: u64, endurance: u64, elapsed_seconds: f64) -> Lifetime {
        let per_second = |count: u64| count as f64 / elapsed_seconds;
        let hottest_rate = per_second(report.max_cell_writes);
        let bit_rate = per_second(report.total_cell_writes);
        Lifetime {
            endurance,
            hottest_cell_seconds: if hottest_rate > 0.0 { endurance as f64 / hottest_rate } else { f64::INFINITY },
            ideal_levelling_seconds: if bit_rate > 0.0 {
                device_cells as f64 * endurance as f64 / bit_rate
            } else {
                f64::INFINITY
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plane-by-plane references for [`LineWear::summarise`].
    impl LineWear {
        /// The largest count in the line, lane by lane.
        fn max_by_lanes(&self) -> u64 {
            (0..LANES).map(|lane| self.lane_max(lane)).max().unwrap_or(0)
        }

        fn lane_max(&self, lane: usize) -> u64 {
            let mut candidates = u64::MAX;
            let mut max = 0u64;
            for k in (0..self.plane_count()).rev() {
                let with_bit = candidates & self.plane(k, lane);
                if with_bit != 0 {
                    candidates = with_bit;
                    max |= 1 << k;
                }
            }
            max
        }

        /// The sum of all counts in the line.
        fn total(&self) -> u64 {
            (0..self.plane_count())
                .map(|k| (0..LANES).map(|lane| u64::from(self.plane(k, lane).count_ones())).sum::<u64>() << k)
                .sum()
        }

        /// Adds the line's cells, `cells_per_lane[lane]` valid cells in each lane, to a log2
        /// histogram: bucket 0 holds cells never programmed, bucket `k + 1` cells whose count is
        /// in `[2^k, 2^(k+1))`.
        fn add_to_histogram(&self, valid: &[u64; LANES], histogram: &mut Vec<u64>) {
            for (lane, &valid_mask) in valid.iter().enumerate() {
                let mut above = 0u64;
                for k in (0..self.plane_count()).rev() {
                    let plane = self.plane(k, lane);
                    let top_here = plane & !above & valid_mask;
                    if top_here != 0 {
                        if histogram.len() < k + 2 {
                            histogram.resize(k + 2, 0);
                        }
                        histogram[k + 1] += u64::from(top_here.count_ones());
                    }
                    above |= plane;
                }
                if histogram.is_empty() {
                    histogram.push(0);
                }
                histogram[0] += u64::from((!above & valid_mask).count_ones());
            }
        }
    }

    #[test]
    fn counts_are_exact_through_plane_growth() {
        let mut wear = LineWear::default();
        for i in 0..1000u64 {
            wear.add(3, 0b101);
            if i % 3 == 0 {
                wear.add(3, 0b100);
            }
        }
        assert_eq!(wear.count(3, 0), 1000);
        assert_eq!(wear.count(3, 1), 0);
        assert_eq!(wear.count(3, 2), 1334);
        assert_eq!((wear.max(), wear.max_by_lanes()), (1334, 1334));
        assert!(wear.count_bound() >= 1334);
        assert_eq!(wear.total(), 2334);
    }

    #[test]
    fn histogram_buckets_by_highest_bit() {
        let mut wear = LineWear::default();
        wear.add(0, 0b11);
        wear.add(0, 0b10);
        wear.add(0, 0b10);
        let mut valid = [0u64; LANES];
        valid[0] = 0b1111;
        let mut histogram = Vec::new();
        wear.add_to_histogram(&valid, &mut histogram);
        // cells: bit0 = 1 program, bit1 = 3, bits 2 and 3 = 0.
        assert_eq!(histogram, vec![2, 1, 1]);
    }

    #[test]
    fn summarise_agrees_with_max_total_and_histogram() {
        let mut wear = LineWear::default();
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut valid = [u64::MAX; LANES];
        valid[FLIP_LANE] = 0x0303_0303_0303_0303;
        for i in 0..700u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Sparse masks on a few lanes, so that counts spread over many planes.
            wear.add((i % 4) as usize, x & x >> 9);
            wear.add(FLIP_LANE, x & valid[FLIP_LANE] & x >> 3);
            let mut expected = Vec::new();
            wear.add_to_histogram(&valid, &mut expected);
            let mut histogram = Vec::new();
            assert_eq!(wear.summarise(&valid, &mut histogram), (wear.max_by_lanes(), wear.total()));
            assert_eq!(wear.max(), wear.max_by_lanes());
            assert!(wear.max() <= wear.count_bound());
            assert_eq!(histogram, expected);
        }
        assert!(wear.plane_count() > 5);
    }
}
