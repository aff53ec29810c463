//! Cleaning and wear-levelling policies: pure functions of counters that return a
//! decision. The engine carries decisions out; each policy is tested alone here.
//!
//! Segments are seen through their *positions*: the cleanable slots `0..n` whose
//! numbering locality gathering sorts data by. Cleaning a position copies its live pages
//! to the spare segment, which then takes the position over.

/// The position with the fewest live pages that has a dead one (lowest index on ties).
pub fn greedy(live: &[u32], pages_per_segment: u32) -> Option<usize> {
    live.iter().enumerate().filter(|(_, &l)| l < pages_per_segment).min_by_key(|(i, &l)| (l, *i)).map(|(i, _)| i)
}

/// The position cleaned longest ago that has a dead page (lowest index on ties).
/// `last_clean` is each position's sequence number of its last clean (0: never).
pub fn fifo(last_clean: &[u64], live: &[u32], pages_per_segment: u32) -> Option<usize> {
    last_clean
        .iter()
        .zip(live)
        .enumerate()
        .filter(|(_, (_, &l))| l < pages_per_segment)
        .min_by_key(|(i, (&seq, _))| (seq, *i))
        .map(|(i, _)| i)
}

/// What one partition has cost in cleaning lately (decayed counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartitionCost {
    /// Cleans.
    pub cleans: u64,
    /// Live pages copied by those cleans.
    pub copied_pages: u64,
    /// Pages those cleans freed.
    pub freed_pages: u64,
}

impl PartitionCost {
    /// Cleaning frequency share × cleaning cost: `cleans / total_cleans · copied / freed`.
    /// `None` before the partition's first clean.
    pub fn product(&self, total_cleans: u64) -> Option<f64> {
        if self.cleans == 0 || total_cleans == 0 {
            return None;
        }
        let cost = self.copied_pages as f64 / self.freed_pages.max(1) as f64;
        Some(self.cleans as f64 / total_cleans as f64 * cost)
    }
}

/// How a clean moves live pages between the victim partition and its neighbours. Above
/// the average frequency × cost, the victim sends its oldest (coldest) pages up and its
/// newest (hottest) down; below it, it takes the oldest pages of the lower neighbour and
/// the newest of the upper one. Either way hot data moves down and cold data up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Redistribution {
    /// Newest live pages of the victim to the lower-numbered neighbour.
    pub down: u32,
    /// Oldest live pages of the victim to the higher-numbered neighbour.
    pub up: u32,
    /// Oldest live pages of the lower neighbour into the victim.
    pub from_down: u32,
    /// Newest live pages of the upper neighbour into the victim.
    pub from_up: u32,
}

/// Room around a clean, in pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Room {
    /// Free pages of the lower neighbour's active position (0 without a neighbour).
    pub free_down: u32,
    /// Free pages of the upper neighbour's active position (0 without a neighbour).
    pub free_up: u32,
    /// Live pages the lower neighbour can give (0 without a neighbour).
    pub live_down: u32,
    /// Live pages the upper neighbour can give (0 without a neighbour).
    pub live_up: u32,
}

/// Locality gathering's free-space redistribution for a clean of partition `victim`
/// whose victim segment holds `live` of `pages_per_segment` pages: the partition's
/// cleaning frequency × cost is steered towards the average over partitions cleaned so
/// far. Above it, `live / divisor` of the live pages (at least one) leave, half each way, as far
/// as the neighbours' free pages allow; below it, as many come in from the neighbours,
/// as far as the victim's free pages allow while leaving one free for the flush waiting.
/// A transfer must bring both ends' products closer (the paper's rule): pages go only
/// to a neighbour whose product is below the victim's and come only from one whose
/// product is above it, a neighbour not cleaned lately counting as 0; if one side is
/// barred, the whole step goes the other way. A partition without a neighbour on a side
/// moves nothing that way, and a `divisor` of 0 moves nothing.
pub fn redistribute(
    costs: &[PartitionCost],
    victim: usize,
    live: u32,
    pages_per_segment: u32,
    divisor: u32,
    room: Room,
) -> Redistribution {
    if divisor == 0 {
        return Redistribution::default();
    }
    let total: u64 = costs.iter().map(|c| c.cleans).sum();
    let Some(mine) = costs[victim].product(total) else { return Redistribution::default() };
    // The mean of the partitions' products, summed in partition order.
    let mut cleaned = 0usize;
    let sum: f64 = costs.iter().filter_map(|c| c.product(total)).inspect(|_| cleaned += 1).sum();
    let average = sum / cleaned as f64;
    let moving = (live / divisor).max(1);
    let split = |has_down: bool, has_up: bool| match (has_down, has_up) {
        (true, true) => (moving.div_ceil(2), moving / 2),
        (true, false) => (moving, 0),
        (false, true) => (0, moving),
        (false, false) => (0, 0),
    };
    let neighbour = |q: Option<usize>| q.filter(|&q| q < costs.len()).map(|q| costs[q].product(total).unwrap_or(0.0));
    let (down_product, up_product) = (neighbour(victim.checked_sub(1)), neighbour(Some(victim + 1)));
    if mine > average && live > 0 {
        let below = |p: Option<f64>| p.is_some_and(|p| p < mine);
        let (down, up) = split(below(down_product), below(up_product));
        return Redistribution {
            down: down.min(room.free_down),
            up: up.min(room.free_up),
            ..Redistribution::default()
        };
    }
    if mine < average {
        let spare = pages_per_segment.saturating_sub(live + 1);
        let above = |p: Option<f64>| p.is_some_and(|p| p > mine);
        let (down, up) = split(above(down_product), above(up_product));
        let from_down = down.min(room.live_down).min(spare);
        let from_up = up.min(room.live_up).min(spare - from_down);
        return Redistribution { from_down, from_up, ..Redistribution::default() };
    }
    Redistribution::default()
}

/// Wear levelling: when the most-erased segment has more than `threshold` erases above
/// the least-erased one, the position holding the least-erased segment (its cold data)
/// is to be cleaned, so its segment becomes the spare and takes the next clean's data.
/// `erases_by_position` is the erase count of each position's segment.
pub fn wear_level(erases_by_position: &[u64], spare_erases: u64, threshold: u64) -> Option<usize> {
    let max = erases_by_position.iter().copied().max()?.max(spare_erases);
    let (coldest, &min) = erases_by_position.iter().enumerate().min_by_key(|(i, &e)| (e, *i))?;
    (max - min > threshold && min < spare_erases).then_some(coldest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_picks_fewest_live_with_room() {
        assert_eq!(greedy(&[5, 2, 7, 2], 8), Some(1));
        assert_eq!(greedy(&[8, 8, 7], 8), Some(2));
        assert_eq!(greedy(&[8, 8], 8), None);
    }

    #[test]
    fn fifo_picks_oldest_with_room() {
        assert_eq!(fifo(&[4, 1, 3], &[0, 0, 0], 8), Some(1));
        assert_eq!(fifo(&[4, 1, 3], &[0, 8, 0], 8), Some(2));
        assert_eq!(fifo(&[0, 0], &[1, 1], 8), Some(0));
        assert_eq!(fifo(&[0, 0], &[8, 8], 8), None);
    }

    fn cost(cleans: u64, copied: u64, freed: u64) -> PartitionCost {
        PartitionCost { cleans, copied_pages: copied, freed_pages: freed }
    }

    fn room(free_down: u32, free_up: u32, live_down: u32, live_up: u32) -> Room {
        Room { free_down, free_up, live_down, live_up }
    }

    fn out(down: u32, up: u32) -> Redistribution {
        Redistribution { down, up, ..Redistribution::default() }
    }

    fn pull(from_down: u32, from_up: u32) -> Redistribution {
        Redistribution { from_down, from_up, ..Redistribution::default() }
    }

    #[test]
    fn redistribution_steers_towards_the_average_product() {
        // Partition 1 is cleaned most often at the highest cost: pages leave it.
        let costs = [cost(1, 10, 10), cost(6, 60, 20), cost(1, 5, 15)];
        assert_eq!(redistribute(&costs, 1, 80, 128, 8, room(100, 100, 0, 0)), out(5, 5));
        // The step follows the divisor; 0 turns the redistribution off.
        assert_eq!(redistribute(&costs, 1, 80, 128, 4, room(100, 100, 0, 0)), out(10, 10));
        assert_eq!(redistribute(&costs, 1, 80, 128, 0, room(100, 100, 0, 0)), Redistribution::default());
        // Limited by the neighbours' free pages.
        assert_eq!(redistribute(&costs, 1, 80, 128, 8, room(2, 0, 0, 0)), out(2, 0));
        // Partition 2 is below the average: pages come in, within its free pages.
        assert_eq!(redistribute(&costs, 2, 80, 128, 8, room(0, 0, 50, 0)), pull(10, 0));
        assert_eq!(redistribute(&costs, 2, 80, 84, 8, room(0, 0, 50, 0)), pull(3, 0));
        assert_eq!(redistribute(&costs, 0, 80, 128, 8, room(0, 0, 0, 4)), pull(0, 4));
        // Edges send everything the one way they can.
        let costs = [cost(6, 60, 20), cost(1, 10, 10)];
        assert_eq!(redistribute(&costs, 0, 16, 128, 8, room(100, 100, 0, 0)), out(0, 2));
        // A transfer must bring the neighbour's product closer to the average too: no
        // pages go to a neighbour whose product is above the victim's, none come from
        // one below it (a neighbour not cleaned lately counts as 0), and the step goes
        // the other way instead.
        // Products 4.27, 2.4 and 0.0007 (average 2.22): partition 1 is above the
        // average but below partition 0, so all its pages go up.
        let costs = [cost(8, 80, 10), cost(6, 60, 10), cost(1, 1, 100)];
        assert_eq!(redistribute(&costs, 1, 80, 128, 8, room(100, 100, 0, 0)), out(0, 10));
        assert_eq!(redistribute(&costs, 2, 80, 128, 8, room(0, 0, 50, 0)), pull(10, 0));
        // Products 0, 1.5 and 3: partition 1 is below the average, but partition 0
        // (drained, not cleaned lately) is below it, so pages come from above only.
        let costs = [cost(0, 0, 0), cost(6, 60, 20), cost(6, 60, 10)];
        assert_eq!(redistribute(&costs, 1, 80, 128, 8, room(0, 0, 50, 50)), pull(0, 10));
        // Never cleaned: no product, nothing moves.
        let costs = [cost(0, 0, 0), cost(1, 1, 1)];
        assert_eq!(redistribute(&costs, 0, 16, 128, 8, room(9, 9, 9, 9)), Redistribution::default());
    }

    /// [`redistribute`] as it was written first, the partitions' products collected into
    /// a vector before their mean: the reference for the version without the vector.
    fn redistribute_reference(
        costs: &[PartitionCost],
        victim: usize,
        live: u32,
        pages_per_segment: u32,
        divisor: u32,
        room: Room,
    ) -> Redistribution {
        if divisor == 0 {
            return Redistribution::default();
        }
        let total: u64 = costs.iter().map(|c| c.cleans).sum();
        let products: Vec<f64> = costs.iter().filter_map(|c| c.product(total)).collect();
        let Some(mine) = costs[victim].product(total) else { return Redistribution::default() };
        let average = products.iter().sum::<f64>() / products.len() as f64;
        let moving = (live / divisor).max(1);
        let split = |has_down: bool, has_up: bool| match (has_down, has_up) {
            (true, true) => (moving.div_ceil(2), moving / 2),
            (true, false) => (moving, 0),
            (false, true) => (0, moving),
            (false, false) => (0, 0),
        };
        let neighbour =
            |q: Option<usize>| q.filter(|&q| q < costs.len()).map(|q| costs[q].product(total).unwrap_or(0.0));
        let (down_product, up_product) = (neighbour(victim.checked_sub(1)), neighbour(Some(victim + 1)));
        if mine > average && live > 0 {
            let below = |p: Option<f64>| p.is_some_and(|p| p < mine);
            let (down, up) = split(below(down_product), below(up_product));
            return Redistribution {
                down: down.min(room.free_down),
                up: up.min(room.free_up),
                ..Redistribution::default()
            };
        }
        if mine < average {
            let spare = pages_per_segment.saturating_sub(live + 1);
            let above = |p: Option<f64>| p.is_some_and(|p| p > mine);
            let (down, up) = split(above(down_product), above(up_product));
            let from_down = down.min(room.live_down).min(spare);
            let from_up = up.min(room.live_up).min(spare - from_down);
            return Redistribution { from_down, from_up, ..Redistribution::default() };
        }
        Redistribution::default()
    }

    #[test]
    fn redistribution_is_its_reference() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut moved = [0u32; 2];
        for _ in 0..20_000 {
            let partitions = rng.gen_range(1..=12);
            // Small counters, so that partitions not cleaned lately, ties with the average
            // and products equal to a neighbour's are common.
            let costs: Vec<PartitionCost> = (0..partitions)
                .map(|_| {
                    let cleans = if rng.gen_bool(0.2) { 0 } else { rng.gen_range(1..4) };
                    cost(cleans, rng.gen_range(0..6), rng.gen_range(0..6))
                })
                .collect();
            let victim = rng.gen_range(0..partitions);
            let pages = rng.gen_range(1..64);
            let live = rng.gen_range(0..=pages);
            let divisor = rng.gen_range(0..5);
            let room = room(rng.gen_range(0..9), rng.gen_range(0..9), rng.gen_range(0..9), rng.gen_range(0..9));
            let got = redistribute(&costs, victim, live, pages, divisor, room);
            assert_eq!(got, redistribute_reference(&costs, victim, live, pages, divisor, room), "{costs:?} {victim}");
            moved[0] += got.down + got.up;
            moved[1] += got.from_down + got.from_up;
        }
        // Both directions were exercised.
        assert!(moved[0] > 0 && moved[1] > 0, "{moved:?}");
    }

    #[test]
    fn wear_levelling_triggers_above_the_threshold() {
        assert_eq!(wear_level(&[10, 3, 9], 11, 7), Some(1));
        assert_eq!(wear_level(&[10, 3, 9], 10, 7), None);
        // The spare is the least worn already: swapping would not help.
        assert_eq!(wear_level(&[20, 3, 9], 2, 7), None);
    }
}
