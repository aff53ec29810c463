//! Closed blocks filed by their valid-page count, plane by plane: the greedy victim
//! ([`gc::greedy`](crate::gc::greedy): fewest valid pages, then the oldest) without a
//! pass over the plane's blocks.
//!
//! Each plane has one list of blocks per valid count (`0..=pages_per_block`), doubly
//! linked through per-block links, and a bitmap of its non-empty lists. Filing, unfiling
//! and moving a block to the next count are O(1); the choice reads the bitmap for the
//! lowest non-empty list and takes its oldest block (smallest closing sequence number,
//! then smallest block number, as the pass over the blocks in order would).

/// Ends a list, and marks a block filed nowhere.
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
}

/// The closed blocks of every plane, by valid-page count.
#[derive(Debug, Clone)]
pub struct ByValid {
    /// Lists per plane: `pages_per_block + 1`.
    lists: usize,
    /// Bitmap words per plane.
    words: usize,
    /// First block of list `plane * lists + valid`.
    heads: Vec<u32>,
    /// Bit `valid` of plane `p`'s words: list `valid` of plane `p` is not empty.
    nonempty: Vec<u64>,
    links: Vec<Link>,
}

impl ByValid {
    /// No block filed, for `blocks` blocks over `planes` planes of `pages_per_block`.
    pub fn new(planes: usize, blocks: usize, pages_per_block: u32) -> ByValid {
        let lists = pages_per_block as usize + 1;
        let words = lists.div_ceil(64);
        ByValid {
            lists,
            words,
            heads: vec![NONE; planes * lists],
            nonempty: vec![0; planes * words],
            links: vec![Link { prev: NONE, next: NONE }; blocks],
        }
    }

    /// Files `block` of `plane` under `valid` valid pages.
    #[inline]
    pub fn file(&mut self, block: u32, plane: usize, valid: u32) {
        let list = plane * self.lists + valid as usize;
        let head = self.heads[list];
        self.links[block as usize] = Link { prev: NONE, next: head };
        if head == NONE {
            self.nonempty[plane * self.words + valid as usize / 64] |= 1 << (valid % 64);
        } else {
            self.links[head as usize].prev = block;
        }
        self.heads[list] = block;
    }

    /// Takes `block` of `plane`, filed under `valid`, out of its list.
    #[inline]
    pub fn unfile(&mut self, block: u32, plane: usize, valid: u32) {
        let Link { prev, next } = self.links[block as usize];
        if prev == NONE {
            let list = plane * self.lists + valid as usize;
            debug_assert_eq!(self.heads[list], block, "a block with no predecessor heads its list");
            self.heads[list] = next;
            if next == NONE {
                self.nonempty[plane * self.words + valid as usize / 64] &= !(1 << (valid % 64));
            }
        } else {
            self.links[prev as usize].next = next;
        }
        if next != NONE {
            self.links[next as usize].prev = prev;
        }
    }

    /// Moves `block` of `plane` from list `from` to list `to`.
    #[inline]
    pub fn refile(&mut self, block: u32, plane: usize, from: u32, to: u32) {
        self.unfile(block, plane, from);
        self.file(block, plane, to);
    }

    /// The lowest valid count with a block filed in `plane`.
    #[inline]
    pub fn lowest(&self, plane: usize) -> Option<u32> {
        let words = &self.nonempty[plane * self.words..(plane + 1) * self.words];
        let (w, &bits) = words.iter().enumerate().find(|(_, &bits)| bits != 0)?;
        Some(w as u32 * 64 + bits.trailing_zeros())
    }

    /// The blocks filed under `valid` in `plane`, most recently filed first.
    pub fn blocks(&self, plane: usize, valid: u32) -> impl Iterator<Item = u32> + '_ {
        let mut at = self.heads[plane * self.lists + valid as usize];
        std::iter::from_fn(move || {
            let block = (at != NONE).then_some(at)?;
            at = self.links[block as usize].next;
            Some(block)
        })
    }

    /// The greedy victim of `plane`: a block of the lowest valid count, the one with the
    /// smallest `(age(block), block)` (`age`: the order in which blocks were closed);
    /// with its valid count.
    #[inline]
    pub fn greedy(&self, plane: usize, age: impl Fn(u32) -> u64) -> Option<(u32, u32)> {
        let valid = self.lowest(plane)?;
        let block = self.blocks(plane, valid).min_by_key(|&b| (age(b), b))?;
        Some((block, valid))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::ByValid;
    use crate::gc::{self, Candidate};

    proptest! {
        /// Against the policy's own pass over every closed block: the same victim after
        /// any sequence of closings, invalidations and erases.
        #[test]
        fn greedy_matches_the_pass_over_the_blocks(
            ops in proptest::collection::vec((0u32..24, 0u8..4), 1..300),
        ) {
            const PLANES: usize = 2;
            const PPB: u32 = 70; // two bitmap words per plane
            // Per block: Some((valid, closed_seq)) while closed.
            let mut closed: Vec<Option<(u32, u64)>> = vec![None; 24];
            let mut index = ByValid::new(PLANES, 24, PPB);
            let mut seq = 0u64;
            for (block, op) in ops {
                let plane = block as usize % PLANES;
                match (closed[block as usize], op) {
                    (None, _) => {
                        seq += 1;
                        let valid = (seq * 37 % u64::from(PPB + 1)) as u32;
                        // Equal ages happen after a recovery; the block number breaks them.
                        closed[block as usize] = Some((valid, seq / 2));
                        index.file(block, plane, valid);
                    }
                    (Some((valid, _)), 0) => {
                        closed[block as usize] = None;
                        index.unfile(block, plane, valid);
                    }
                    (Some((valid, age)), _) if valid > 0 => {
                        closed[block as usize] = Some((valid - 1, age));
                        index.refile(block, plane, valid, valid - 1);
                    }
                    _ => {}
                }
                for p in 0..PLANES {
                    let candidates: Vec<Candidate> = (p..closed.len())
                        .step_by(PLANES)
                        .filter_map(|b| closed[b].map(|(valid_pages, closed_seq)| Candidate {
                            block: b as u32,
                            valid_pages,
                            pages_per_block: PPB,
                            closed_seq,
                            last_write_ns: 0,
                        }))
                        .collect();
                    let age = |b: u32| closed[b as usize].expect("filed blocks are closed").1;
                    let fast = index.greedy(p, age);
                    prop_assert_eq!(fast.map(|(b, _)| b), gc::greedy(&candidates));
                    if let Some((b, valid)) = fast {
                        prop_assert_eq!(Some(valid), closed[b as usize].map(|c| c.0));
                    }
                }
            }
        }
    }
}
