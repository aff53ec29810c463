//! Wear-levelling policies: pure functions that return a decision.
//!
//! Dynamic wear levelling hands out the free block with the fewest erases (the FTL keeps
//! its free blocks ordered by [`free_block_key`]). Static wear levelling also moves cold
//! data: when the erase-count spread of a plane exceeds a threshold, the closed block
//! with the fewest erases (which holds data nobody rewrites) is emptied so that hot data
//! wears it instead ([`static_victim`]).

use crate::config::WearLeveling;

/// The key a free block is ordered by (smallest allocated first): its erase count under
/// dynamic or static levelling, else the order in which it was freed (round-robin reuse).
pub fn free_block_key(mode: WearLeveling, erase_count: u64, freed_seq: u64) -> u64 {
    match mode {
        WearLeveling::None => freed_seq,
        WearLeveling::Dynamic | WearLeveling::Static => erase_count,
    }
}

/// Static levelling: among closed blocks `(block, erase_count)`, the one to empty when the
/// plane's most-erased block (`max_erase_count`) leads the least-erased closed block by
/// more than `threshold` erases; `None` otherwise. Ties go to the lower block number.
pub fn static_victim(closed: &[(u32, u64)], max_erase_count: u64, threshold: u64) -> Option<u32> {
    let &(block, coldest) = closed.iter().min_by_key(|&&(b, e)| (e, b))?;
    (max_erase_count.saturating_sub(coldest) > threshold).then_some(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_block_order_follows_the_mode() {
        assert_eq!(free_block_key(WearLeveling::None, 50, 3), 3);
        assert_eq!(free_block_key(WearLeveling::Dynamic, 50, 3), 50);
        assert_eq!(free_block_key(WearLeveling::Static, 50, 3), 50);
    }

    #[test]
    fn static_victim_only_past_the_threshold() {
        let closed = [(4, 10), (2, 3), (7, 3)];
        assert_eq!(static_victim(&closed, 12, 10), None);
        assert_eq!(static_victim(&closed, 14, 10), Some(2));
        assert_eq!(static_victim(&[], 100, 1), None);
    }
}
