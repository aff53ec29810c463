//! Hand-computed PCM bit costs of single operations on uncached PCM, where every store
//! is one differential word write, and the growth and shrinking of the tree.

use nvmdb_btree::{code, BTree, Variant};
use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_memory::{FlatMemory, Memory, NativeMemory};

fn flat_tree(variant: Variant) -> BTree<FlatMemory> {
    let pcm = Pcm::new(PcmConfig::new(1 << 20)).unwrap();
    let mut tree = BTree::new(FlatMemory::new(pcm), variant, 1).unwrap();
    tree.memory_mut().reset_stats();
    tree
}

fn bits(tree: &mut BTree<FlatMemory>) -> u64 {
    let bits = tree.memory().report().pcm.bits_written;
    tree.memory_mut().reset_stats();
    bits
}

#[test]
fn bitmap_leaf_insert_writes_key_pointer_and_one_bit_and_delete_clears_one_bit() {
    let mut tree = flat_tree(Variant::UnsortedLeafBitmap);
    tree.insert(0b1011, 0b110).unwrap();
    assert_eq!(bits(&mut tree), 3 + 2 + 1);
    assert_eq!(tree.delete(0b1011), Some(0b110));
    assert_eq!(bits(&mut tree), 1);
}

#[test]
fn nvmdb_leaf_stores_light_code_words() {
    let mut tree = flat_tree(Variant::NvmdbLeaf);
    // Root leaf: separator 0. Values 1..=64 code as one-bit words.
    tree.insert(5, 64).unwrap();
    assert_eq!(bits(&mut tree), 1 + 1 + 1);
    assert_eq!(tree.get(5), Some(64));
    assert_eq!(tree.delete(5), Some(64));
    assert_eq!(bits(&mut tree), 1);
    // The slot of 5 is free again and holds code(5); inserting 5 again reuses it and
    // programs only the pointer and the bitmap bit.
    tree.insert(5, 65).unwrap();
    let pointer_bits = u64::from((code::encode(64) ^ code::encode(65)).count_ones());
    assert_eq!(bits(&mut tree), pointer_bits + 1);
}

#[test]
fn sorted_insert_shifts_larger_entries() {
    let mut tree = flat_tree(Variant::Sorted);
    tree.insert(10, 1).unwrap();
    assert_eq!(bits(&mut tree), 2 + 1 + 1);
    // 5 goes first: key[1] = 10 (2 bits), ptr[1] = 1 (1), key[0] 10 -> 5 (4),
    // ptr[0] 1 -> 2 (2), count 1 -> 2 (2).
    tree.insert(5, 2).unwrap();
    assert_eq!(bits(&mut tree), 2 + 1 + 4 + 2 + 2);
}

#[test]
fn trees_grow_and_shrink_back_to_one_leaf() {
    for variant in Variant::ALL {
        let mut tree = BTree::new(NativeMemory::new(1 << 30), variant, 1).unwrap();
        for k in 0..3000u64 {
            tree.insert(k * 7919 % 3001, k).unwrap();
        }
        assert!(tree.height() >= 6, "{variant:?}: height {}", tree.height());
        for k in 0..3000u64 {
            assert_eq!(tree.delete(k * 7919 % 3001), Some(k), "{variant:?}");
        }
        assert!(tree.is_empty());
        assert_eq!(tree.height(), 1, "{variant:?}: merges collapse the tree");
    }
}
