//! The insert-wear derivation of `nvmdb_btree::insert_wear` against its Monte Carlo, and
//! the Monte Carlo against the real tree on uncached PCM.

use nvmdb_btree::insert_wear::{simulate, InsertWear, LeafModel};
use nvmdb_btree::workload::{loaded_pairs, measure, op_keys, ops_of, random_keys, AnyMemory, MemoryKind, OpKind};
use nvmdb_btree::{BTree, Variant};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const FILL: f64 = 0.75;
/// The paper's tree: 50 M entries.
const PAPER_KEYS: u64 = 50_000_000;

fn monte_carlo(lines: u32, tree_keys: u64) -> InsertWear {
    simulate(LeafModel::new(lines, FILL, tree_keys), 20_000, &mut Xoshiro256PlusPlus::seed_from_u64(1))
}

#[test]
fn the_formula_matches_the_monte_carlo() {
    for tree_keys in [1_000_000, PAPER_KEYS] {
        for lines in [2, 4, 8] {
            let w = monte_carlo(lines, tree_keys);
            let (direct, derived) = (w.ratio(), w.derived_ratio());
            assert!((derived / direct - 1.0).abs() < 0.01, "{lines} lines, {tree_keys} keys: {derived} vs {direct}");
            // A key routed to a leaf lies above its separator: (n − 1) / 2 entries move.
            let n = LeafModel::new(lines, FILL, tree_keys).entries as f64;
            assert!((w.moved - (n - 1.0) / 2.0).abs() < 0.1, "{lines} lines: {} moved", w.moved);
        }
    }
}

#[test]
fn the_papers_two_line_node_gives_far_less_than_its_wear_floor() {
    // Paper node: 2 lines, 7 slots, 5 entries, 16 B entries, 50 M keys.
    let w = monte_carlo(2, PAPER_KEYS);
    assert_eq!(LeafModel::new(2, FILL, PAPER_KEYS).cap, 7);
    assert!((2.2..=2.6).contains(&w.ratio()), "2-line sorted ÷ unsorted {}", w.ratio());
    // Sorted neighbours share ~log2(50 M) ≈ 26 high key bits: a shifted entry flips
    // about three quarters of a fresh entry's bits, not all of them.
    assert!((0.7..=0.8).contains(&w.shift_fraction()), "shift fraction {}", w.shift_fraction());
    // Denser keys share fewer bits: the fraction grows as the tree shrinks.
    assert!(monte_carlo(2, 1_000_000).shift_fraction() > w.shift_fraction());
    // Only 8-line nodes reach the paper's 7.7× floor.
    let floor = 7.7;
    assert!(monte_carlo(4, PAPER_KEYS).ratio() < floor);
    assert!(monte_carlo(8, PAPER_KEYS).ratio() > floor);
}

#[test]
fn the_real_tree_on_uncached_pcm_matches_the_monte_carlo() {
    let entries = 200_000usize;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let loaded = random_keys(entries, &mut rng);
    let inserts = op_keys(OpKind::Insert, &loaded, 4_000, &mut rng).expect("enough keys");
    for lines in [2u32, 4, 8] {
        let bits = |variant| {
            let memory = AnyMemory::new(MemoryKind::Flat, false);
            let mut shuffle = Xoshiro256PlusPlus::seed_from_u64(5);
            let mut tree =
                BTree::bulk_load(memory, variant, lines, loaded_pairs(&loaded), FILL, &mut shuffle).expect("loads");
            let ops = ops_of(OpKind::Insert, &inserts, entries as u64);
            measure(&mut tree, ops).expect("runs").0.bits_per_op
        };
        let (sorted, unsorted) = (bits(Variant::Sorted), bits(Variant::UnsortedLeaf));
        let w = monte_carlo(lines, entries as u64);
        // The tree adds splits (the same fresh node for both), which the leaf model leaves out.
        for (tree, model) in [(sorted, w.sorted_bits), (unsorted, w.unsorted_bits), (sorted / unsorted, w.ratio())] {
            assert!((tree / model - 1.0).abs() < 0.05, "{lines} lines: tree {tree}, Monte Carlo {model}");
        }
    }
}
