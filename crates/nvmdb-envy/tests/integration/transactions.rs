//! Shadow-copy transactions against a model: `abort` restores every byte written since
//! `begin`, `commit` keeps them, with cleaning running underneath (shadows must survive
//! it), at every policy.

use crate::common::{contents, tiny, POLICIES};
use nvmdb_envy::{Envy, EnvyError};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Write { at: f64, bytes: Vec<u8> },
    Begin,
    Commit,
    Abort,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0.0..1.0f64, prop::collection::vec(any::<u8>(), 1..24)).prop_map(|(at, bytes)| Op::Write { at, bytes }),
        1 => Just(Op::Begin),
        1 => Just(Op::Commit),
        1 => Just(Op::Abort),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn abort_restores_and_commit_keeps(
        policy in 0..POLICIES.len(),
        buffer_pages in 1u32..5,
        utilization in 0.1..0.6f64,
        ops in prop::collection::vec(op(), 1..300),
    ) {
        let config = tiny(POLICIES[policy], 8, 8, buffer_pages, utilization);
        let mut envy = Envy::format(config).unwrap();
        envy.set_erase_checks(true);
        let size = config.logical_bytes() as usize;
        let mut model = vec![0u8; size];
        let mut base: Option<Vec<u8>> = None;
        for op in &ops {
            match op {
                Op::Write { at, bytes } => {
                    let len = bytes.len().min(size);
                    let addr = ((size - len) as f64 * at) as usize;
                    match envy.write(addr as u64, &bytes[..len]) {
                        Ok(_) => model[addr..addr + len].copy_from_slice(&bytes[..len]),
                        // A transaction may shadow at most max_transaction_pages pages.
                        Err(EnvyError::Transaction(_)) => {
                            prop_assert!(base.is_some());
                            envy.abort().unwrap();
                            model = base.take().unwrap();
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
                Op::Begin => {
                    let r = envy.begin();
                    prop_assert_eq!(r.is_ok(), base.is_none());
                    base.get_or_insert_with(|| model.clone());
                }
                Op::Commit => {
                    prop_assert_eq!(envy.commit().is_ok(), base.take().is_some());
                }
                Op::Abort => {
                    let r = envy.abort();
                    prop_assert_eq!(r.is_ok(), base.is_some());
                    if let Some(b) = base.take() {
                        model = b;
                    }
                }
            }
            envy.check_invariants();
        }
        prop_assert_eq!(contents(&mut envy), model);
    }
}
