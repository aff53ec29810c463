//! Start-Gap wear levelling (Qureshi et al., MICRO 2009): `n` logical lines live in
//! `n + 1` physical lines; one spare "gap" line moves down by one slot every `interval`
//! writes, and each full rotation of the gap shifts every logical line by one slot.
//!
//! Mapping: `pa = (la + start) mod n`, then `pa + 1` if `pa >= gap`.

/// Start-Gap registers.
#[derive(Debug, Clone)]
pub struct StartGap {
    lines: u64,
    start: u64,
    gap: u64,
    interval: u64,
    writes_since_move: u64,
}

impl StartGap {
    /// `lines` logical lines (physical lines `0..=lines`); the gap moves every `interval`
    /// writes.
    pub fn new(lines: u64, interval: u64) -> StartGap {
        assert!(lines > 0 && interval > 0, "Start-Gap needs lines and a positive interval");
        StartGap { lines, start: 0, gap: lines, interval, writes_since_move: 0 }
    }

    /// The physical line of logical line `la`.
    pub fn map(&self, la: u64) -> u64 {
        let pa = (la + self.start) % self.lines;
        if pa >= self.gap {
            pa + 1
        } else {
            pa
        }
    }

    /// Counts one write; when the gap is due to move, returns the `(from, to)` physical
    /// lines whose content the device must copy.
    pub fn record_write(&mut self) -> Option<(u64, u64)> {
        self.writes_since_move += 1;
        if self.writes_since_move < self.interval {
            return None;
        }
        self.writes_since_move = 0;
        if self.gap == 0 {
            self.gap = self.lines;
            self.start = (self.start + 1) % self.lines;
            Some((self.lines, 0))
        } else {
            self.gap -= 1;
            Some((self.gap, self.gap + 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index;

    /// The mapping stays one-to-one into `0..=n` and follows the moved data.
    #[test]
    fn mapping_tracks_moves() {
        let n = 5;
        let mut sg = StartGap::new(n, 1);
        let mut physical: Vec<Option<u64>> = (0..=n).map(|p| if p < n { Some(p) } else { None }).collect();
        for _ in 0..40 {
            if let Some((from, to)) = sg.record_write() {
                physical[index(to)] = physical[index(from)].take();
            }
            for la in 0..n {
                assert_eq!(physical[index(sg.map(la))], Some(la));
            }
        }
    }
}
