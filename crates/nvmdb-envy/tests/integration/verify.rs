//! The model of acknowledged bytes (`verify::AckModel`) passes an honest recovery and
//! catches a deliberately lossy one: a system that lost the last acknowledged write, and
//! one with a byte changed after recovery. An interrupted write may leave each of its
//! pages as before or as after it, never a mix inside a page.

use crate::common::tiny;
use nvmdb_envy::verify::{AckModel, Check};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig, EnvyError};

fn config() -> EnvyConfig {
    tiny(CleaningPolicy::Greedy, 8, 16, 4, 0.5)
}

/// Writes spread over the space, enough to flush and clean, each told to the model;
/// a committed and an aborted transaction among them.
fn acknowledged_run(envy: &mut Envy, model: &mut AckModel, writes: u64) {
    let size = envy.config().logical_bytes();
    for i in 0..writes {
        let len = 1 + i % 23;
        let addr = (i * 37) % (size - len);
        let data = vec![(i as u8).wrapping_mul(29) | 1; len as usize];
        if i % 17 == 3 {
            envy.begin().unwrap();
            model.begin();
        }
        envy.write(addr, &data).unwrap();
        model.write(addr, &data);
        if i % 17 == 5 {
            envy.commit().unwrap();
            model.commit();
        }
        if i % 17 == 9 && model.in_transaction() {
            envy.abort().unwrap();
            model.roll_back();
        }
    }
    if model.in_transaction() {
        envy.commit().unwrap();
        model.commit();
    }
}

fn power_cycle(envy: Envy) -> Envy {
    let config = *envy.config();
    let mut devices = envy.into_devices();
    devices.power_cycle();
    Envy::open(config, devices).unwrap()
}

#[test]
fn an_honest_recovery_passes_and_a_lossy_one_is_caught() {
    let config = config();
    let mut envy = Envy::format(config).unwrap();
    let mut model = AckModel::new(config.logical_bytes() as usize, config.page_bytes as usize);
    acknowledged_run(&mut envy, &mut model, 200);
    assert!(envy.stats().erases > 0, "the run never cleaned");
    let size = config.logical_bytes();
    let clean = Check { verified_bytes: size, lost_pages: 0, lost_bytes: 0 };
    assert_eq!(model.check(&mut envy).unwrap(), clean, "before the cut");

    // Lossy: the system as it was before the last acknowledged write, which the model has.
    let lost = envy.clone();
    let last = vec![0xA5; 20];
    envy.write(size - 40, &last).unwrap();
    model.write(size - 40, &last);
    let mut envy = power_cycle(envy);
    assert_eq!(model.check(&mut envy).unwrap(), clean, "an honest recovery");
    let mut lost = power_cycle(lost);
    let check = model.check(&mut lost).unwrap();
    assert_eq!(check.lost_bytes, 20, "the dropped write: {check:?}");
    assert!((1..=3).contains(&check.lost_pages), "{check:?}");

    // Lossy: one byte changed after recovery, behind the model's back.
    let byte = model.bytes()[100];
    envy.write(100, &[byte ^ 0x40]).unwrap();
    assert_eq!(model.check(&mut envy).unwrap(), Check { lost_pages: 1, lost_bytes: 1, ..clean });
}

#[test]
fn an_interrupted_write_leaves_each_page_all_before_or_all_after() {
    let config = config();
    let page = config.page_bytes as u64;
    let mut envy = Envy::format(config).unwrap();
    let mut model = AckModel::new(config.logical_bytes() as usize, page as usize);
    acknowledged_run(&mut envy, &mut model, 40);
    // A write over three pages, cut somewhere inside: the model allows old or new pages.
    let (addr, data) = (page + 4, vec![0x3C; 2 * page as usize]);
    let before = envy.clone();
    let mut cuts = 0;
    for cut in 0.. {
        let mut envy = before.clone();
        envy.cut_power_before(envy.devices().device_writes() + cut);
        match envy.write(addr, &data) {
            Err(EnvyError::PowerCut { .. }) => {}
            Ok(_) => break,
            Err(e) => panic!("{e}"),
        }
        let mut model = model.clone();
        model.interrupted_write(addr, &data);
        let mut envy = power_cycle(envy);
        assert_eq!(model.check(&mut envy).unwrap().lost_bytes, 0, "cut {cut}");
        // A page half old, half new is no content the model allows.
        let mixed = model.bytes()[addr as usize] ^ 0xFF;
        envy.write(addr, &[mixed]).unwrap();
        assert_eq!(model.check(&mut envy).unwrap().lost_pages, 1, "cut {cut}");
        // A later acknowledged write over the whole page settles it.
        model.write(page, &[7; 16]);
        envy.write(page, &[7; 16]).unwrap();
        assert_eq!(model.check(&mut envy).unwrap().lost_bytes, 0, "cut {cut}");
        cuts += 1;
    }
    assert!(cuts > 5, "the write made only {cuts} device writes");
}
