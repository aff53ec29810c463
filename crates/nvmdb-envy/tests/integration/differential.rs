//! Random byte reads and writes (spanning pages) against a plain `Vec<u8>`, at every
//! cleaning policy, buffer size and utilisation up to the limit, with the invariants
//! checked after every operation.

use crate::common;
use crate::common::{tiny, POLICIES};
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

/// Runs `ops` on two systems alike, reading through `read` on `bytes` and through
/// `read_scalar` (1, 2, 4 or 8 bytes, by the op's `u8`) on `scalars`: the values, the
/// latencies and every count must agree.
fn scalar_reads_count_as_byte_reads(bytes: &mut Envy, scalars: &mut Envy, ops: &[(Op, u8)]) {
    let size = bytes.config().logical_bytes() as usize;
    for (op, width) in ops {
        match op {
            Op::Read { at, .. } => {
                let width = 1usize << (width % 4);
                let addr = ((size - width) as f64 * at) as u64;
                let mut buf = [0u8; 8];
                let ns = bytes.read(addr, &mut buf[..width]).unwrap();
                let expected = u64::from_le_bytes(buf);
                let got = match width {
                    1 => scalars.read_scalar::<u8>(addr).map(|(v, ns)| (u64::from(v), ns)),
                    2 => scalars.read_scalar::<u16>(addr).map(|(v, ns)| (u64::from(v), ns)),
                    4 => scalars.read_scalar::<u32>(addr).map(|(v, ns)| (u64::from(v), ns)),
                    _ => scalars.read_scalar::<u64>(addr),
                };
                assert_eq!(got.unwrap(), (expected, ns), "{width} bytes at {addr}");
            }
            Op::Write { at, bytes: data } => {
                let len = data.len().min(size);
                let addr = ((size - len) as f64 * at) as u64;
                for envy in [&mut *bytes, &mut *scalars] {
                    let ns = envy.write(addr, &data[..len]).unwrap();
                    envy.advance_to(envy.now_ns() + ns);
                }
            }
        }
        assert_eq!(bytes.stats(), scalars.stats());
        assert_eq!(bytes.devices().flash().stats(), scalars.devices().flash().stats());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn scalar_reads_match_byte_reads(
        policy in 0..POLICIES.len(),
        buffer_pages in 1u32..4,
        ops in prop::collection::vec((op(), any::<u8>()), 1..400),
    ) {
        let config = tiny(POLICIES[policy], 8, 8, buffer_pages, 0.5);
        let (mut bytes, mut scalars) = (Envy::format(config).unwrap(), Envy::format(config).unwrap());
        scalar_reads_count_as_byte_reads(&mut bytes, &mut scalars, &ops);
    }
}

/// The comparison above over reads of unwritten, buffered and flushed pages, at every
/// width and every offset in a page of 16 B (so within a page and across two).
#[test]
fn scalar_reads_of_every_kind_of_page_match_byte_reads() {
    let config = tiny(POLICIES[0], 8, 8, 3, 0.5);
    let (mut bytes, mut scalars) = (Envy::format(config).unwrap(), Envy::format(config).unwrap());
    let size = config.logical_bytes() as f64;
    // Writes to each page of the first half (all but the last few flushed from the
    // three-page buffer).
    let pages = (size / 32.0) as u8;
    let writes: Vec<(Op, u8)> = (0..pages)
        .map(|page| (Op::Write { at: f64::from(page) * 16.0 / (size - 5.0), bytes: vec![page + 1; 5] }, 0))
        .collect();
    scalar_reads_count_as_byte_reads(&mut bytes, &mut scalars, &writes);
    let flash_before = scalars.devices().flash().stats().page_reads;
    // Reads all over, one byte further each time.
    let reads: Vec<(Op, u8)> =
        (0..size as u32).map(|i| (Op::Read { at: f64::from(i) / size, len: 0 }, i as u8)).collect();
    scalar_reads_count_as_byte_reads(&mut bytes, &mut scalars, &reads);
    let stats = scalars.stats();
    let flash = scalars.devices().flash().stats().page_reads - flash_before;
    let unwritten = stats.host_page_reads - stats.sram_read_hits - flash;
    assert!(stats.sram_read_hits > 10 && flash > 100 && unwritten > 100, "{stats:?}, {flash} flash reads");
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
