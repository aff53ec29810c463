//! Wear levelling: under a hot/cold workload, static levelling narrows the erase-count
//! spread that dynamic levelling alone leaves (cold blocks never get erased).

use nvmdb_device::PageData;
use nvmdb_flash::config::WearLeveling;
use nvmdb_flash::{SsdConfig, StoreHealth};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn health_after_hot_cold(wl: WearLeveling) -> StoreHealth {
    let mut c = SsdConfig::default();
    c.flash.packages = 1;
    c.flash.planes_per_package = 1;
    c.flash.blocks_per_plane = 64;
    c.flash.pages_per_block = 16;
    c.ftl.overprovision = 0.25;
    c.ftl.wear_leveling = wl;
    c.ftl.static_wl_threshold = 8;
    let mut store = nvmdb_flash::build(&c).unwrap();
    let pages = store.logical_pages();
    let mut now_ns = 0;
    // Cold: every page written once. Hot: a tenth of the pages rewritten many times.
    for lpn in 0..pages {
        now_ns = store.write(lpn, PageData::Empty, now_ns).unwrap();
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    for _ in 0..60 * pages {
        now_ns = store.write(rng.gen_range(0..pages / 10), PageData::Empty, now_ns).unwrap();
    }
    store.check_invariants().unwrap();
    store.health()
}

#[test]
fn static_levelling_narrows_the_erase_spread() {
    let none = health_after_hot_cold(WearLeveling::None);
    let dynamic = health_after_hot_cold(WearLeveling::Dynamic);
    let stat = health_after_hot_cold(WearLeveling::Static);
    let spread = |h: &StoreHealth| h.block_erases_max as f64 / (h.block_erases_total as f64 / h.blocks as f64);
    println!(
        "max/mean erases: none {:.2}, dynamic {:.2}, static {:.2}",
        spread(&none),
        spread(&dynamic),
        spread(&stat)
    );
    assert!(spread(&stat) < spread(&dynamic), "static {stat:?} vs dynamic {dynamic:?}");
    assert!(spread(&stat) < 2.0, "static levelling keeps the most-worn block near the mean");
}
