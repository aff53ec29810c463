//! A system that keeps no page bytes (`EnvyConfig::keep_page_bytes` off) runs as one that
//! keeps them: the same writes, update streams and transactions give the same statistics,
//! energy, bank times, clock and placement of every page after every step, under every
//! policy, with several spare segments, parallel banks and wear levelling. It refuses
//! reads, and after a power cut it recovers to the same state as the system with bytes,
//! except where recovery compares page bytes (a clean cut between a copy's program and its
//! page-table write), which it refuses.

use crate::common::{step_both, tiny, POLICIES};
use nvmdb_envy::workload::{self, Bimodal};
use nvmdb_envy::{Envy, EnvyConfig, EnvyError};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Everything of a system that a run can observe without reading its contents.
fn observed(envy: &Envy) -> impl PartialEq + std::fmt::Debug {
    (
        *envy.stats(),
        envy.energy(),
        envy.bank_busy_ns(),
        envy.now_ns(),
        envy.page_positions(),
        envy.position_live_pages(),
        envy.buffered_pages(),
        envy.in_transaction(),
        envy.devices().device_writes(),
        envy.devices().sram().stats(),
    )
}

/// `config` without page bytes.
fn without_bytes(config: EnvyConfig) -> EnvyConfig {
    EnvyConfig { keep_page_bytes: false, ..config }
}

/// Runs `config` with and without page bytes on the same steps ([`step_both`]), comparing
/// after the fill and after every step.
fn same_runs(config: EnvyConfig, dist: Bimodal, seed: u64) {
    let start = |config: EnvyConfig| {
        let mut envy = Envy::format(config).expect("valid");
        envy.set_erase_checks(true);
        workload::fill(&mut envy).expect("fits");
        envy
    };
    let (mut with, mut without) = (start(config), start(without_bytes(config)));
    assert_eq!(observed(&with), observed(&without), "after the fill");
    step_both(&mut with, &mut without, dist, seed, |with, without, i| {
        // Both checked, as the check reads the SRAM.
        with.check_invariants();
        without.check_invariants();
        assert_eq!(observed(with), observed(without), "{:?}, step {i}", config.cleaning);
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn a_system_without_page_bytes_runs_as_one_with_them(
        policy in prop::sample::select(POLICIES.to_vec()),
        spares in prop::sample::select(vec![1u32, 3]),
        parallel_banks in any::<bool>(),
        wear_levelling in any::<bool>(),
        hot in prop::sample::select(vec![(0.5, 0.5), (0.8, 0.2), (0.9, 0.1)]),
        seed in any::<u64>(),
    ) {
        let mut config = tiny(policy, 8, 8, 2, 0.5);
        config.spare_segments = spares;
        config.banks = 2;
        config.parallel_banks = parallel_banks;
        config.wear_threshold_erases = wear_levelling.then_some(4);
        let dist = Bimodal { hot_access: hot.0, hot_data: hot.1 };
        same_runs(config, dist, seed);
    }
}

#[test]
fn a_system_without_page_bytes_refuses_reads() {
    let mut envy = Envy::format(without_bytes(tiny(POLICIES[0], 6, 8, 2, 0.5))).expect("valid");
    envy.write(0, &[1, 2, 3]).expect("in range");
    let mut buf = [0u8; 3];
    let error = envy.read(0, &mut buf).expect_err("no bytes to read");
    assert_eq!(error, EnvyError::NoPageBytes("a read"));
    assert!(error.to_string().contains("keep_page_bytes is off"), "{error}");
    // Out of range stays out of range.
    let size = envy.config().logical_bytes();
    assert!(matches!(envy.read(size, &mut buf), Err(EnvyError::OutOfRange { .. })));
}

/// Writes that fill the space and overwrite a hot third of it, with transactions that
/// commit, abort, and one left open.
fn cut_workload(envy: &mut Envy, rng: &mut Xoshiro256PlusPlus) -> Result<(), EnvyError> {
    let size = envy.config().logical_bytes();
    for i in 0..60u64 {
        let len = rng.gen_range(1..30u64);
        let addr = if i < 12 { (i * 48) % (size - len) } else { rng.gen_range(0..size / 3) };
        envy.write(addr, &vec![(i as u8).wrapping_mul(37) | 1; len as usize])?;
        match i {
            14 | 26 | 56 => envy.begin()?,
            18 => envy.commit()?,
            29 => envy.abort()?,
            _ => {}
        }
    }
    Ok(())
}

/// The devices after the cut workload with the power cut before device write `cut`
/// (counted from the format), power-cycled.
fn cut_devices(config: EnvyConfig, cut: u64) -> nvmdb_envy::Devices {
    let mut envy = Envy::format(config).expect("valid");
    let base = envy.devices().device_writes();
    envy.cut_power_before(base + cut);
    cut_workload(&mut envy, &mut Xoshiro256PlusPlus::seed_from_u64(5)).expect_err("the cut falls inside the run");
    let mut devices = envy.into_devices();
    devices.power_cycle();
    devices
}

#[test]
fn power_loss_without_page_bytes_recovers_as_with_them_or_refuses() {
    let (mut tried, mut recovered, mut refused) = (0u64, 0u64, 0u64);
    for policy in POLICIES {
        let config = tiny(policy, 6, 8, 2, 0.5);
        let total = {
            let mut envy = Envy::format(config).expect("valid");
            let base = envy.devices().device_writes();
            cut_workload(&mut envy, &mut Xoshiro256PlusPlus::seed_from_u64(5)).expect("no cut");
            envy.devices().device_writes() - base
        };
        for cut in 0..total {
            let with = Envy::open(config, cut_devices(config, cut)).expect("recovers with page bytes");
            match Envy::open(without_bytes(config), cut_devices(without_bytes(config), cut)) {
                Ok(without) => {
                    assert_eq!(observed(&with), observed(&without), "{policy:?}: cut {cut}");
                    recovered += 1;
                }
                Err(error) => {
                    assert_eq!(error, EnvyError::NoPageBytes("recovering a clean cut after a copy's program"));
                    assert!(with.stats().cleans_resumed > 0, "{policy:?}: cut {cut} refused outside a clean");
                    refused += 1;
                }
            }
            tried += 1;
        }
    }
    println!("crash points tried: {tried} ({recovered} recovered alike, {refused} refused)");
    assert!(recovered > 1000 && refused > 10, "the cuts must reach both outcomes");
}
