//! Why a sorted leaf insert programs only a few times the bits of an unsorted one: a
//! small Monte Carlo over one leaf, independent of the tree and of the memory model.
//!
//! A leaf of `cap` slots holds `n = round(cap × fill)` sorted entries (8 B key, 8 B
//! record pointer) in slots `0..n` behind a count word; the slots above `n` were never
//! written (zero cells), as after the bulk load. The leaf's smallest key is its
//! separator (the bulk load makes it so), and a new key routed to the leaf lies above it:
//! it falls into one of the `n` gaps after the first key, each equally likely (the gaps
//! between random keys are identically distributed), so its rank `pos` is uniform in
//! `1..=n`.
//!
//! - **Unsorted** writes the entry into slot `n`: `F` bits (the ones of a fresh key and
//!   pointer over zero cells) plus the count's flipped bits `H`.
//! - **Sorted** moves the `m = n − pos` larger entries up one slot. The last moved entry
//!   lands in the zero slot `n` (`F` bits); every other moved entry, and the new one,
//!   overwrite a sorted neighbour (`X` bits each). So it programs `F + m·X + H`.
//!
//! With `E[m] = (n − 1) / 2`:
//!
//! ```text
//! sorted ÷ unsorted = (F + E[m]·X + H) ÷ (F + H) = 1 + E[m] · s · F / (F + H),  s = X / F
//! ```
//!
//! `s` is below 1 because sorted neighbours share their high key bits: with `N` random
//! keys in the tree, adjacent keys differ by about 2^64 / N, so about `log2 N` high bits
//! agree, while a pointer over another random pointer flips as many bits as over zeros.
//! [`simulate`] measures `F`, `X`, `H` and the ratio directly; the tests check the
//! formula against it.

use rand::Rng;

/// Entries of a node of `lines` cache lines: `(64·lines − 8) / 16`.
pub fn capacity(lines: u32) -> usize {
    nvmdb_device::index((64 * u64::from(lines) - 8) / 16)
}

/// The leaf a Monte Carlo draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeafModel {
    /// Slots per leaf.
    pub cap: usize,
    /// Entries before the insert.
    pub entries: usize,
    /// Keys in the whole tree: sets the gap between sorted neighbours (2^64 / keys).
    pub tree_keys: u64,
    /// Record pointers are `64 × id` with `id` uniform below this (the records' count).
    pub records: u64,
}

impl LeafModel {
    /// The paper's set-up: a node of `lines` lines, `fill` full, in a tree of `tree_keys`
    /// random keys pointing at as many 64 B records.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "fill is in (0, 1] and cap is small, so the rounded product fits usize"
    )]
    pub fn new(lines: u32, fill: f64, tree_keys: u64) -> LeafModel {
        let cap = capacity(lines);
        let entries = ((cap as f64 * fill).round() as usize).clamp(1, cap - 1);
        LeafModel { cap, entries, tree_keys, records: tree_keys }
    }
}

/// Mean bits programmed per insert, and the terms of the formula.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InsertWear {
    /// Mean bits of a sorted insert (shifts, new entry, count).
    pub sorted_bits: f64,
    /// Mean bits of an unsorted insert (new entry into slot `n`, count).
    pub unsorted_bits: f64,
    /// `F`: mean ones of a fresh entry (key and pointer) over zero cells.
    pub fresh_bits: f64,
    /// `X`: mean bits flipped by writing an entry over its sorted neighbour.
    pub shift_bits: f64,
    /// `H`: mean bits flipped in the count word.
    pub count_bits: f64,
    /// Mean entries moved by a sorted insert.
    pub moved: f64,
}

impl InsertWear {
    /// Sorted ÷ unsorted bits, measured directly.
    pub fn ratio(&self) -> f64 {
        self.sorted_bits / self.unsorted_bits
    }

    /// `s = X / F`: a shifted entry's bits relative to a fresh entry's.
    pub fn shift_fraction(&self) -> f64 {
        self.shift_bits / self.fresh_bits
    }

    /// The formula `1 + E[m]·X / (F + H)` with the measured terms.
    pub fn derived_ratio(&self) -> f64 {
        1.0 + self.moved * self.shift_bits / (self.fresh_bits + self.count_bits)
    }
}

/// Runs `trials` inserts into fresh leaves drawn from `model`.
pub fn simulate(model: LeafModel, trials: u32, rng: &mut impl Rng) -> InsertWear {
    assert!(model.entries < model.cap && trials > 0 && model.tree_keys > 1 && model.records > 0);
    let n = model.entries;
    // Adjacent keys of a tree of N random keys are about 2^64 / N apart: draw the leaf's
    // n + 1 keys uniformly in a window of (n + 1) such gaps.
    let window = (u128::from(u64::MAX) * (n as u128 + 1) / u128::from(model.tree_keys)).max(n as u128 + 1);
    let window = u64::try_from(window).unwrap_or(u64::MAX);
    let mut sums = [0u64; 6];
    let (mut fresh_count, mut shift_count) = (0u64, 0u64);
    let weight = |w: u64| u64::from(w.count_ones());
    for _ in 0..trials {
        let start = rng.gen_range(0..=u64::MAX - window);
        let mut keys: Vec<u64> = (0..=n).map(|_| start + rng.gen_range(0..window)).collect();
        keys.sort_unstable();
        let pos = rng.gen_range(1..=n);
        let new_key = keys.remove(pos);
        let pointer = |rng: &mut dyn rand::RngCore| 64 * rng.gen_range(0..model.records);
        let ptrs: Vec<u64> = (0..n).map(|_| pointer(rng)).collect();
        let new_ptr = pointer(rng);

        let count = weight(n as u64 ^ (n as u64 + 1));
        let fresh = weight(new_key) + weight(new_ptr);
        // Sorted: the node after the insert, slot by slot, against the node before.
        let mut after_keys = keys.clone();
        let mut after_ptrs = ptrs.clone();
        after_keys.insert(pos, new_key);
        after_ptrs.insert(pos, new_ptr);
        let mut sorted = count;
        for slot in pos..=n {
            let (old_key, old_ptr) = if slot < n { (keys[slot], ptrs[slot]) } else { (0, 0) };
            sorted += weight(old_key ^ after_keys[slot]) + weight(old_ptr ^ after_ptrs[slot]);
        }
        // The formula's terms, each from this draw.
        for slot in 0..n.saturating_sub(1) {
            sums[4] += weight(keys[slot] ^ keys[slot + 1]) + weight(ptrs[slot] ^ ptrs[slot + 1]);
            shift_count += 1;
        }
        sums[3] += weight(keys[n - 1]) + weight(ptrs[n - 1]) + fresh;
        fresh_count += 2;
        sums[0] += sorted;
        sums[1] += fresh + count;
        sums[2] += count;
        sums[5] += (n - pos) as u64;
    }
    let t = f64::from(trials);
    InsertWear {
        sorted_bits: sums[0] as f64 / t,
        unsorted_bits: sums[1] as f64 / t,
        count_bits: sums[2] as f64 / t,
        fresh_bits: sums[3] as f64 / fresh_count as f64,
        shift_bits: sums[4] as f64 / shift_count.max(1) as f64,
        moved: sums[5] as f64 / t,
    }
}
