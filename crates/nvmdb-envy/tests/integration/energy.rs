//! `Envy::energy` counts the device energy of the measured part only, at the presets'
//! per-operation energies.

use nvmdb_envy::workload::{self, Bimodal};
use nvmdb_envy::{Envy, EnvyConfig, FLASH_1994};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[test]
fn energy_restarts_at_reset_and_follows_the_operations_counted() {
    let config = EnvyConfig::small(16, 64, 8, 0.7);
    let mut envy = Envy::format(config).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    workload::fill(&mut envy).unwrap();
    assert!(envy.energy().sram_pj > 0);
    envy.reset_stats();
    assert_eq!(envy.energy().flash_pj, 0);
    assert_eq!(envy.energy().sram_pj, 0);
    workload::update(&mut envy, Bimodal::UNIFORM, 4 * config.flash_pages(), &mut rng).unwrap();
    let (s, e) = (*envy.stats(), envy.energy());
    assert!(s.erases > 0, "the updates must clean");
    // A segment of 64 pages of 256 B is 16 KB: four times the thesis's 16.5 µJ per 4 KB.
    assert_eq!(config.flash.erase_pj, 4 * 16_500_000);
    let written = (s.flush_programs + s.clean_programs) * FLASH_1994.program_pj + s.erases * config.flash.erase_pj;
    assert!(e.flash_pj >= written, "{e:?} {s:?}");
    // The rest is whole page reads.
    assert_eq!((e.flash_pj - written) % FLASH_1994.read_pj, 0, "{e:?} {s:?}");
    // SRAM: 2 pJ per bit.
    assert!(e.sram_pj > 0 && e.sram_pj % 16 == 0, "{e:?}");
}

#[test]
fn a_segment_erase_takes_every_chip_block_erase_of_the_bank() {
    // The 2 GB preset's segment: 256 chips each erasing a 64 KB block, 16 × 16.5 µJ per
    // chip.
    assert_eq!(FLASH_1994.erase_pj, 256 * 16 * 16_500_000);
    assert_eq!(EnvyConfig::PAPER_2GB.flash.erase_pj, FLASH_1994.erase_pj);
    let segment_bytes = 65_536 * 256;
    assert_eq!(nvmdb_envy::config::segment_erase_pj(segment_bytes), FLASH_1994.erase_pj);
}
