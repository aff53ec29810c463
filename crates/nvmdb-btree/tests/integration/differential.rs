//! Differential tests: every variant and node size against `BTreeMap`, over long random
//! sequences of inserts, deletes, gets and scans on a small key space (so that nodes
//! split and merge often).

use std::collections::BTreeMap;

use nvmdb_btree::workload::{apply, measure, Answer, AnyMemory, MemoryKind, Op};
use nvmdb_btree::{BTree, Variant};
use nvmdb_memory::{Memory, NativeMemory};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

fn op_strategy(key_space: u64) -> impl Strategy<Value = Op> {
    let key = 0..key_space;
    prop_oneof![
        4 => (key.clone(), any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => key.clone().prop_map(Op::Delete),
        2 => key.clone().prop_map(Op::Get),
        1 => (key.clone(), key).prop_map(|(a, b)| Op::Scan(a.min(b), a.max(b))),
    ]
}

fn model_apply(model: &mut BTreeMap<u64, u64>, op: Op) -> Answer {
    match op {
        Op::Insert(k, v) => Answer::Changed(model.insert(k, v).is_some()),
        Op::Delete(k) => Answer::Changed(model.remove(&k).is_some()),
        Op::Get(k) => Answer::Value(model.get(&k).copied()),
        Op::Scan(lo, hi) => Answer::Count(model.range(lo..=hi).count() as u64),
    }
}

fn check_against_model<M: Memory>(tree: &mut BTree<M>, model: &mut BTreeMap<u64, u64>, ops: &[Op]) {
    for (i, &op) in ops.iter().enumerate() {
        let expected = model_apply(model, op);
        let got = apply(tree, op).expect("memory is large enough");
        assert_eq!(got, expected, "op {i}: {op:?} on {:?}/{}", tree.variant(), tree.node_lines());
        assert_eq!(tree.len(), model.len() as u64);
    }
    let all: Vec<(u64, u64)> = model.iter().map(|(&k, &v)| (k, v)).collect();
    assert_eq!(tree.scan(0, u64::MAX), all, "full scan of {:?}/{}", tree.variant(), tree.node_lines());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn every_variant_and_node_size_matches_btreemap(
        ops in proptest::collection::vec(op_strategy(600), 1500..3000),
        start in proptest::collection::btree_map(0..600u64, any::<u64>(), 0..400),
        fill in 0.3f64..1.0,
    ) {
        for variant in Variant::ALL {
            for node_lines in [1, 2, 4, 8] {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
                let mut model = start.clone();
                let mem = NativeMemory::new(1 << 30);
                let pairs = model.iter().map(|(&k, &v)| (k, v));
                let mut tree = BTree::bulk_load(mem, variant, node_lines, pairs, fill, &mut rng).unwrap();
                check_against_model(&mut tree, &mut model, &ops);
            }
        }
    }

    #[test]
    fn trees_grown_from_empty_match_btreemap(ops in proptest::collection::vec(op_strategy(300), 1000..2000)) {
        for variant in Variant::ALL {
            for node_lines in [1, 2] {
                let mut model = BTreeMap::new();
                let mut tree = BTree::new(NativeMemory::new(1 << 30), variant, node_lines).unwrap();
                check_against_model(&mut tree, &mut model, &ops);
            }
        }
    }
}

/// The accounted memories give the same answers as plain RAM: every answer is read
/// from the simulated image.
#[test]
fn accounted_memories_answer_like_native() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let ops: Vec<Op> = (0..3000u64)
        .map(|i| {
            let k = (i * 7919) % 500;
            match i % 4 {
                0 | 1 => Op::Insert(k, i),
                2 => Op::Delete((k * 3) % 500),
                _ => Op::Get(k),
            }
        })
        .collect();
    for variant in Variant::ALL {
        let mut answers = Vec::new();
        for kind in [MemoryKind::Native, MemoryKind::Cached, MemoryKind::Flat] {
            let pairs = (0..200u64).map(|k| (k * 2, k));
            let mut tree = BTree::bulk_load(AnyMemory::new(kind, false), variant, 2, pairs, 0.75, &mut rng).unwrap();
            let (report, got) = measure(&mut tree, ops.iter().copied()).unwrap();
            if kind != MemoryKind::Native {
                assert!(report.pcm.bits_written > 0, "{kind:?} counted no bits");
            }
            answers.push(got);
        }
        assert_eq!(answers[0], answers[1]);
        assert_eq!(answers[0], answers[2]);
    }
}
