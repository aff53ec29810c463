//! Garbage-collection victim policies: pure functions from candidate blocks to a choice.
//! The FTL carries the choice out (copies the valid pages, erases the block).

use crate::config::GcPolicy;

/// What a policy knows about one closed block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// Block number.
    pub block: u32,
    /// Valid pages in it.
    pub valid_pages: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Order in which the block was filled (smaller = older).
    pub closed_seq: u64,
    /// Simulated time of the last write into the block, ns.
    pub last_write_ns: u64,
}

/// Chooses a victim among `candidates` at time `now_ns`; `None` when there is none.
/// Ties go to the older block, so the choice is deterministic.
pub fn choose(policy: GcPolicy, candidates: &[Candidate], now_ns: u64) -> Option<u32> {
    match policy {
        GcPolicy::Greedy => greedy(candidates),
        GcPolicy::Fifo => fifo(candidates),
        GcPolicy::CostBenefit => cost_benefit(candidates, now_ns),
    }
}

/// The block with the fewest valid pages.
pub fn greedy(candidates: &[Candidate]) -> Option<u32> {
    candidates.iter().min_by_key(|c| (c.valid_pages, c.closed_seq)).map(|c| c.block)
}

/// The block filled longest ago.
pub fn fifo(candidates: &[Candidate]) -> Option<u32> {
    candidates.iter().min_by_key(|c| c.closed_seq).map(|c| c.block)
}

/// The block maximising `benefit / cost = age · (1 − u) / (2u)` (LFS; Rosenblum and
/// Ousterhout), with `u` the valid fraction and age the time since its last write. An
/// empty block (u = 0) costs nothing to clean and wins outright.
pub fn cost_benefit(candidates: &[Candidate], now_ns: u64) -> Option<u32> {
    let score = |c: &Candidate| -> f64 {
        let u = f64::from(c.valid_pages) / f64::from(c.pages_per_block.max(1));
        if u == 0.0 {
            return f64::INFINITY;
        }
        // +1 ns keeps blocks written "now" comparable by their utilisation.
        let age = (now_ns.saturating_sub(c.last_write_ns) + 1) as f64;
        age * (1.0 - u) / (2.0 * u)
    };
    candidates
        .iter()
        .fold(None::<(f64, &Candidate)>, |best, c| {
            let s = score(c);
            match best {
                Some((b, bc)) if b > s || (b == s && bc.closed_seq <= c.closed_seq) => Some((b, bc)),
                _ => Some((s, c)),
            }
        })
        .map(|(_, c)| c.block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(block: u32, valid_pages: u32, closed_seq: u64, last_write_ns: u64) -> Candidate {
        Candidate { block, valid_pages, pages_per_block: 64, closed_seq, last_write_ns }
    }

    #[test]
    fn greedy_takes_fewest_valid_then_oldest() {
        let blocks = [c(1, 30, 5, 0), c(2, 10, 9, 0), c(3, 10, 7, 0), c(4, 60, 1, 0)];
        assert_eq!(greedy(&blocks), Some(3));
        assert_eq!(greedy(&[]), None);
    }

    #[test]
    fn fifo_takes_oldest_whatever_its_validity() {
        let blocks = [c(1, 30, 5, 0), c(2, 0, 9, 0), c(4, 64, 1, 0)];
        assert_eq!(fifo(&blocks), Some(4));
        assert_eq!(fifo(&[]), None);
    }

    #[test]
    fn cost_benefit_trades_age_against_utilisation() {
        // u = 0.5, age 1000 → 500; u = 0.25, age 100 → 150: the older, fuller block wins.
        let blocks = [c(1, 32, 1, 9_000), c(2, 16, 2, 9_900)];
        assert_eq!(cost_benefit(&blocks, 10_000 - 1), Some(1));
        // Same age: the emptier block wins.
        let blocks = [c(1, 32, 1, 0), c(2, 16, 2, 0)];
        assert_eq!(cost_benefit(&blocks, 1_000), Some(2));
        // An empty block always wins.
        let blocks = [c(1, 1, 1, 0), c(2, 0, 2, 999)];
        assert_eq!(cost_benefit(&blocks, 1_000), Some(2));
        assert_eq!(choose(GcPolicy::CostBenefit, &[], 0), None);
    }
}
