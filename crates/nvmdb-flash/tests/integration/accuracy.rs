//! Accuracy against theory: under uniform random overwrites of a full logical space, a
//! page-mapped FTL with FIFO cleaning has write amplification `1 / (1 − u)`, where the
//! victim's valid fraction `u` solves `u = exp(−(1 − u) / α)` and `α` = logical/physical.

use nvmdb_device::PageData;
use nvmdb_flash::config::GcPolicy;
use nvmdb_flash::SsdConfig;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// `u` solving `u = exp(−(1 − u)/α)` by Newton's method on `g(u) = u − exp(−(1 − u)/α)`,
/// from below 1 (u = 1 is the trivial root).
fn analytic_wa(alpha: f64) -> f64 {
    let mut u = 0.0f64;
    for _ in 0..100 {
        let e = (-(1.0 - u) / alpha).exp();
        let g = u - e;
        let dg = 1.0 - e / alpha;
        u -= g / dg;
    }
    assert!((u - (-(1.0 - u) / alpha).exp()).abs() < 1e-12 && u < 1.0, "Newton converged to the non-trivial root");
    1.0 / (1.0 - u)
}

fn config(alpha: f64, gc: GcPolicy) -> SsdConfig {
    let mut config = SsdConfig::default();
    config.flash.packages = 1;
    config.flash.planes_per_package = 4;
    config.flash.blocks_per_plane = 256;
    config.ftl.overprovision = 1.0 - alpha;
    config.ftl.gc = gc;
    config
}

/// Fills the logical space, overwrites it uniformly at random (warm-up), then measures
/// write amplification over `rounds` more logical spaces of random overwrites.
fn measured_wa(alpha: f64, gc: GcPolicy, rounds: u64) -> f64 {
    let mut ftl = nvmdb_flash::build(&config(alpha, gc)).unwrap();
    let pages = ftl.logical_pages();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut now_ns = 0;
    for lpn in 0..pages {
        now_ns = ftl.write(lpn, PageData::Empty, now_ns).unwrap();
    }
    for _ in 0..2 * pages {
        now_ns = ftl.write(rng.gen_range(0..pages), PageData::Empty, now_ns).unwrap();
    }
    ftl.reset_stats();
    for _ in 0..rounds * pages {
        now_ns = ftl.write(rng.gen_range(0..pages), PageData::Empty, now_ns).unwrap();
    }
    ftl.check_invariants().unwrap();
    let stats = ftl.stats();
    assert_eq!(stats.host_page_writes, rounds * pages);
    assert_eq!(stats.flash_page_programs, stats.host_page_writes + stats.gc_page_copies);
    stats.write_amplification()
}

#[test]
fn analytic_helper_matches_the_known_value() {
    assert!((analytic_wa(0.8) - 2.69).abs() < 0.01, "{}", analytic_wa(0.8));
}

#[test]
fn fifo_write_amplification_matches_theory_and_greedy_is_no_worse() {
    for alpha in [0.8, 0.7] {
        let theory = analytic_wa(alpha);
        let fifo = measured_wa(alpha, GcPolicy::Fifo, 4);
        let greedy = measured_wa(alpha, GcPolicy::Greedy, 4);
        let cost_benefit = measured_wa(alpha, GcPolicy::CostBenefit, 4);
        println!("alpha {alpha}: theory {theory:.3} fifo {fifo:.3} greedy {greedy:.3} cost-benefit {cost_benefit:.3}");
        assert!((fifo - theory).abs() / theory < 0.05, "alpha {alpha}: FIFO WA {fifo:.3} vs analytic {theory:.3}");
        assert!(greedy <= fifo, "alpha {alpha}: greedy {greedy:.3} worse than FIFO {fifo:.3}");
        assert!(cost_benefit <= fifo * 1.02, "alpha {alpha}: cost-benefit {cost_benefit:.3} vs FIFO {fifo:.3}");
    }
}
