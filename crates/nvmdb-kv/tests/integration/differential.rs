//! Every engine against a `BTreeMap` on random operation sequences, with pages, pools
//! and log areas small enough that splits, evictions and merges happen often; a power
//! loss among the operations must bring back exactly the last synced state.

use crate::common::{contents, engine_apply, model_apply, small_config, Model, Op};
use nvmdb_kv::{Engine, EngineKind};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Step {
    Op(Op),
    PowerLoss,
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(b'!'..=b'~', 1..=64)
}

fn step() -> impl Strategy<Value = Step> {
    let key = 0u32..300;
    prop_oneof![
        6 => (key.clone(), value()).prop_map(|(k, v)| Step::Op(Op::Insert(k, v))),
        3 => (key.clone(), value()).prop_map(|(k, v)| Step::Op(Op::Update(k, v))),
        2 => key.clone().prop_map(|k| Step::Op(Op::Delete(k))),
        3 => key.clone().prop_map(|k| Step::Op(Op::Get(k))),
        1 => (key.clone(), key).prop_map(|(lo, hi)| Step::Op(Op::Scan(lo, hi))),
        1 => Just(Step::Op(Op::Sync)),
        1 => Just(Step::PowerLoss),
    ]
}

/// Mostly deletes, with gets, scans, syncs and power losses among them.
fn delete_step() -> impl Strategy<Value = Step> {
    let key = 0u32..300;
    prop_oneof![
        12 => key.clone().prop_map(|k| Step::Op(Op::Delete(k))),
        2 => key.clone().prop_map(|k| Step::Op(Op::Get(k))),
        1 => (key.clone(), key).prop_map(|(lo, hi)| Step::Op(Op::Scan(lo, hi))),
        1 => Just(Step::Op(Op::Sync)),
        1 => Just(Step::PowerLoss),
    ]
}

/// Fill, delete most keys (leaves empty and merge, inner pages lose children, the root
/// shrinks), then the ordinary mix, which re-inserts into the freed pages.
fn fill_empty_refill() -> impl Strategy<Value = Vec<Step>> {
    let fill = (0u32..300, value()).prop_map(|(k, v)| Step::Op(Op::Insert(k, v)));
    (
        prop::collection::vec(fill, 100..400),
        prop::collection::vec(delete_step(), 200..800),
        prop::collection::vec(step(), 0..300),
    )
        .prop_map(|(a, b, c)| a.into_iter().chain(b).chain(c).collect())
}

fn run(kind: EngineKind, steps: &[Step]) -> Result<(), TestCaseError> {
    let config = small_config(kind);
    let mut engine = Engine::new(config.clone()).unwrap();
    let mut model = Model::new();
    let mut synced = Model::new();
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Op(op) => {
                let want = model_apply(&mut model, op);
                let got = engine_apply(&mut engine, op).unwrap();
                prop_assert_eq!(got, want, "{:?} step {}: {:?}", kind, i, op);
                if *op == Op::Sync {
                    synced = model.clone();
                }
            }
            Step::PowerLoss => {
                engine = Engine::open(config.clone(), engine.crash()).unwrap();
                model = synced.clone();
                prop_assert_eq!(contents(&mut engine), model.clone(), "{:?} after power loss at step {}", kind, i);
            }
        }
    }
    engine.check().map_err(|e| TestCaseError::fail(format!("{kind:?}: {e}")))?;
    prop_assert_eq!(contents(&mut engine), model);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn flash_only_matches_a_btreemap(steps in prop::collection::vec(step(), 1..400)) {
        run(EngineKind::FlashOnly, &steps)?;
    }

    #[test]
    fn pcm_only_matches_a_btreemap(steps in prop::collection::vec(step(), 1..400)) {
        run(EngineKind::PcmOnly, &steps)?;
    }

    #[test]
    fn ipl_matches_a_btreemap(steps in prop::collection::vec(step(), 1..400)) {
        run(EngineKind::Ipl, &steps)?;
    }

    #[test]
    fn ipl_p_matches_a_btreemap(steps in prop::collection::vec(step(), 1..400)) {
        run(EngineKind::IplP, &steps)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn flash_only_matches_a_btreemap_when_most_keys_go(steps in fill_empty_refill()) {
        run(EngineKind::FlashOnly, &steps)?;
    }

    #[test]
    fn pcm_only_matches_a_btreemap_when_most_keys_go(steps in fill_empty_refill()) {
        run(EngineKind::PcmOnly, &steps)?;
    }

    #[test]
    fn ipl_matches_a_btreemap_when_most_keys_go(steps in fill_empty_refill()) {
        run(EngineKind::Ipl, &steps)?;
    }

    #[test]
    fn ipl_p_matches_a_btreemap_when_most_keys_go(steps in fill_empty_refill()) {
        run(EngineKind::IplP, &steps)?;
    }
}

/// The small configuration does make the events the differential test is for happen:
/// splits, evictions, log merges and, after deletes, page merges.
#[test]
fn the_small_configuration_splits_evicts_and_merges() {
    use rand::{Rng, SeedableRng};
    for kind in EngineKind::ALL {
        let mut engine = Engine::new(small_config(kind)).unwrap();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        for _ in 0..400 {
            let k = rng.gen_range(0..300u32);
            let len = rng.gen_range(1..=64usize);
            engine.insert(k, &vec![b'a'; len]).unwrap();
        }
        engine.sync().unwrap();
        let stats = engine.stats();
        assert!(engine.pages() > 3 * 4, "{kind:?}: {} pages, no more than a few splits", engine.pages());
        assert!(stats.flash_page_writes + stats.pcm_bytes_written > 0, "{kind:?} never evicted");
        if kind.logs() {
            assert!(stats.merges > 0, "{kind:?} never merged");
        }
        // Deleting all but every tenth key frees most pages, and the freed pages are used
        // again when the keys come back.
        let full = engine.pages();
        for k in (0..300u32).filter(|k| k % 10 != 0) {
            engine.delete(k).unwrap();
        }
        engine.sync().unwrap();
        engine.check().unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        let emptied = engine.pages();
        assert!(emptied * 3 < full, "{kind:?}: {full} pages, still {emptied} after deleting 90% of the keys");
        for k in 0..300u32 {
            engine.insert(k, &[b'b'; 30]).unwrap();
        }
        engine.sync().unwrap();
        engine.check().unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(contents(&mut engine).len(), 300);
    }
}

/// A tree three levels deep (1 KB pages, 64 B values, 412 pages) loses 95% of its keys
/// in random order, with power losses on the way, and gets them back; the tree matches
/// the model throughout.
#[test]
fn a_deep_tree_empties_and_refills() {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    for kind in EngineKind::ALL {
        let mut config = small_config(kind);
        config.buffer_bytes = 8 * 1024;
        config.capacity_pages = 1200;
        let mut engine = Engine::new(config.clone()).unwrap();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
        let mut keys: Vec<u32> = (0..4000).collect();
        keys.shuffle(&mut rng);
        let mut model = Model::new();
        for &k in &keys {
            engine.insert(k, &[b'x'; 64]).unwrap();
            model.insert(k, vec![b'x'; 64]);
        }
        engine.sync().unwrap();
        let full = engine.pages();
        keys.shuffle(&mut rng);
        for (i, &k) in keys[..3800].iter().enumerate() {
            assert!(engine.delete(k).unwrap());
            model.remove(&k);
            if i % 500 == 499 {
                engine.sync().unwrap();
                engine = Engine::open(config.clone(), engine.crash()).unwrap();
                engine.check().unwrap_or_else(|e| panic!("{kind:?} after {i} deletes: {e}"));
                assert_eq!(contents(&mut engine), model, "{kind:?} after {i} deletes");
            }
        }
        engine.sync().unwrap();
        engine.check().unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        let emptied = engine.pages();
        assert!(emptied * 10 < full, "{kind:?}: {full} pages, {emptied} after deleting 95% of the keys");
        for &k in &keys {
            engine.insert(k, &[b'y'; 20]).unwrap();
            model.insert(k, vec![b'y'; 20]);
        }
        engine.sync().unwrap();
        engine.check().unwrap_or_else(|e| panic!("{kind:?} refilled: {e}"));
        assert_eq!(contents(&mut engine), model, "{kind:?} refilled");
        eprintln!("{}: {full} pages, {emptied} after the deletes, {} refilled", kind.name(), engine.pages());
    }
}
