//! Random byte reads and writes (spanning pages) against a plain `Vec<u8>`, at every
//! cleaning policy, buffer size and utilisation up to the limit, with the invariants
//! checked after every operation.

mod common;

use common::{tiny, POLICIES};
use nvmdb_envy::{CleaningPolicy, Envy};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Read { at: f64, len: usize },
    Write { at: f64, bytes: Vec<u8> },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0.0..1.0f64, 1usize..48).prop_map(|(at, len)| Op::Read { at, len }),
        // Writes concentrated on the low quarter half of the time, so locality policies
        // see hot and cold data.
        (0.0..1.0f64, any::<bool>(), prop::collection::vec(any::<u8>(), 1..40))
            .prop_map(|(at, hot, bytes)| Op::Write { at: if hot { at / 4.0 } else { at }, bytes }),
    ]
}

fn run(policy: CleaningPolicy, spares: u32, buffer_pages: u32, utilization: f64, ops: &[Op]) -> nvmdb_envy::EnvyStats {
    let mut config = tiny(policy, 8, 8, buffer_pages, 0.5);
    config.spare_segments = spares;
    config.set_utilization(utilization);
    let mut envy = Envy::format(config).unwrap();
    envy.set_erase_checks(true);
    let size = config.logical_bytes() as usize;
    let mut model = vec![0u8; size];
    for op in ops {
        match op {
            Op::Read { at, len } => {
                let len = (*len).min(size);
                let addr = ((size - len) as f64 * at) as usize;
                let mut buf = vec![0; len];
                envy.read(addr as u64, &mut buf).unwrap();
                assert_eq!(buf, model[addr..addr + len], "read of {len} at {addr}");
            }
            Op::Write { at, bytes } => {
                let len = bytes.len().min(size);
                let addr = ((size - len) as f64 * at) as usize;
                envy.write(addr as u64, &bytes[..len]).unwrap();
                model[addr..addr + len].copy_from_slice(&bytes[..len]);
            }
        }
        envy.check_invariants();
    }
    assert_eq!(common::contents(&mut envy), model);
    *envy.stats()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn reads_match_a_byte_vector(
        policy in 0..POLICIES.len(),
        spares in 1u32..4,
        buffer_pages in 1u32..6,
        share_of_limit in 0.07..1.0f64,
        ops in prop::collection::vec(op(), 1..400),
    ) {
        // Up to the limit (7 − spares) / 8 of 8 segments.
        let utilization = share_of_limit * f64::from(7 - spares) / 8.0;
        run(POLICIES[policy], spares, buffer_pages, utilization, &ops);
    }
}

/// Every policy at the utilisation limit (6 of 8 segments live with one spare, 4 with
/// three), with enough writes to clean each segment many times.
#[test]
fn every_policy_at_the_utilisation_limit() {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for policy in POLICIES {
        for (spares, buffer_pages) in [(1, 1), (1, 3), (1, 8), (3, 1), (3, 8)] {
            let mut config = tiny(policy, 8, 8, buffer_pages, 0.5);
            config.spare_segments = spares;
            let limit = config.max_utilization();
            let ops: Vec<Op> = (0..1500)
                .map(|i| {
                    let at = (next() % 10_000) as f64 / 10_000.0;
                    if i % 5 == 0 {
                        Op::Read { at, len: 1 + (next() % 40) as usize }
                    } else {
                        Op::Write { at, bytes: vec![(i % 251) as u8 + 1; 1 + (next() % 24) as usize] }
                    }
                })
                .collect();
            let stats = run(policy, spares, buffer_pages, limit, &ops);
            // The workload must have exercised cleaning, or the test shows nothing.
            assert!(stats.cleans > 20 && stats.clean_programs > 0, "{policy:?}: {stats:?}");
        }
    }
}

/// A configuration beyond the limit is refused, not run into a full flash.
#[test]
fn utilisation_above_the_limit_is_refused() {
    let config = tiny(POLICIES[0], 8, 8, 2, 0.78);
    assert!(matches!(Envy::format(config), Err(nvmdb_envy::EnvyError::Config(_))));
    let mut spares = tiny(POLICIES[0], 8, 8, 2, 0.7);
    spares.spare_segments = 2;
    assert!(
        matches!(Envy::format(spares), Err(nvmdb_envy::EnvyError::Config(_))),
        "5 of 8 segments below the limit at 70 %"
    );
    spares.set_utilization(0.5);
    assert!(Envy::format(spares).is_ok());
}

/// Spare counts outside 1..=segments − 2 are refused, naming the field.
#[test]
fn spare_counts_outside_the_range_are_refused() {
    for bad in [0, 7, u32::MAX] {
        let mut config = tiny(POLICIES[0], 8, 8, 2, 0.1);
        config.spare_segments = bad;
        let Err(nvmdb_envy::EnvyError::Config(message)) = Envy::format(config) else { panic!("{bad} spares accepted") };
        assert!(message.contains("spare_segments"), "{message}");
    }
}
