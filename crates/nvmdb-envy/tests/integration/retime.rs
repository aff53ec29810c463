//! A copy of a loaded TPC-A database whose flash changes speed and parallelism
//! (`Tpca::fork`, `Envy::retime`) runs exactly as a database loaded from the start with
//! that flash: no cleaning, placement or wear-levelling decision reads a time.

use nvmdb_envy::tpca::{Convergence, Ending, Tpca, TpcaConfig};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig, EnvyError};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const TPCA: TpcaConfig =
    TpcaConfig { accounts: 2_000, record_bytes: 100, history_bytes: 50, history_records: 1_000, node_lines: 4 };

/// 16 segments of 256 pages in 4 banks, hybrid cleaning, 2 ms erases.
fn config() -> EnvyConfig {
    let mut config = EnvyConfig::small(16, 256, 64, 0.5);
    config.banks = 4;
    config.cleaning = CleaningPolicy::Hybrid { partition_segments: 4 };
    config.flash.erase_ns = 2_000_000;
    config.logical_pages = TPCA.bytes_needed().div_ceil(256) + 64;
    config
}

/// Loads and ages a database on `config`; returns it and the generator where the
/// loading left it.
fn loaded(config: EnvyConfig) -> (Tpca, Xoshiro256PlusPlus) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let mut db = Tpca::load(Envy::format(config).unwrap(), &TPCA, &mut rng).unwrap();
    db.age(2 * config.flash_pages(), &mut rng);
    (db, rng)
}

/// A saturated run and a light one: their reports and the counters after each.
fn runs(db: &mut Tpca, rng: &mut Xoshiro256PlusPlus) -> Vec<String> {
    [(1e6, 3_000), (200.0, 1_000)]
        .iter()
        .map(|&(tps, n)| {
            let report = db.run(tps, 200, n, rng).unwrap();
            let (stats, energy, busy) = db.with_envy(|e| (*e.stats(), e.energy(), e.bank_busy_ns()));
            assert!(stats.cleans > 0, "the run must clean");
            format!("{report:?} {stats:?} {energy:?} {busy:?}")
        })
        .collect()
}

#[test]
fn a_retimed_fork_runs_as_a_database_built_with_that_flash() {
    let (base, rng) = loaded(config());
    let mut seen = Vec::new();
    for (erase_ns, program_ns, banks, parallel) in
        [(2_000_000, 9_000, 4, false), (200_000, 9_000, 4, true), (20_000_000, 2_000, 16, true), (0, 9_000, 1, false)]
    {
        let mut changed = config();
        changed.flash.erase_ns = erase_ns;
        changed.flash.program_ns = program_ns;
        changed.banks = banks;
        changed.parallel_banks = parallel;
        let mut fork = base.fork();
        fork.with_envy_mut(|e| e.retime(changed.flash, banks, parallel)).unwrap();
        assert_eq!(fork.with_envy(|e| *e.config()), changed);
        let (mut built, mut built_rng) = loaded(changed);
        let mut fork_rng = rng.clone();
        let on_fork = runs(&mut fork, &mut fork_rng);
        assert_eq!(on_fork, runs(&mut built, &mut built_rng), "{changed:?}");
        assert!(!seen.contains(&on_fork[0]), "each flash runs differently");
        seen.push(on_fork[0].clone());
        let sums = fork.balance_sums();
        assert_eq!(sums, built.balance_sums());
        assert!(sums[0] == sums[1] && sums[1] == sums[2]);
    }
}

#[test]
fn a_fork_leaves_its_original_as_it_was() {
    let (mut base, rng) = loaded(config());
    let mut fork = base.fork();
    let (mut fork_rng, mut base_rng) = (rng.clone(), rng.clone());
    let on_fork = runs(&mut fork, &mut fork_rng);
    let on_base = runs(&mut base, &mut base_rng);
    assert_eq!(on_fork, on_base, "the original runs as the fork did: the fork's run changed nothing in it");
    let (mut again, mut again_rng) = loaded(config());
    assert_eq!(runs(&mut again, &mut again_rng)[0], on_base[0]);
}

#[test]
fn only_an_idle_system_changes_its_flash_and_the_banks_must_divide_the_segments() {
    let (mut db, mut rng) = loaded(config());
    let flash = config().flash;
    // Saturated: the last transaction leaves flushes and cleans running.
    db.run(1e6, 0, 500, &mut rng).unwrap();
    let busy = db.with_envy_mut(|e| e.retime(flash, 4, true));
    assert!(matches!(busy, Err(EnvyError::Config(_))), "{busy:?}");
    db.with_envy_mut(|e| {
        let idle = e.flash_idle_at_ns();
        e.advance_to(idle);
        assert!(matches!(e.retime(flash, 3, true), Err(EnvyError::Config(_))), "16 segments in 3 banks");
        e.retime(flash, 8, true).unwrap();
    });
}

#[test]
fn a_converged_run_ends_by_agreement_or_by_its_caps() {
    let (base, rng) = loaded(config());
    let rule = Convergence {
        window_cleans: 4,
        window_transactions: 100,
        tolerance: 0.02,
        max_turnovers: 40.0,
        max_transactions: 10_000_000,
    };
    // Light load: every window's throughput is the offered rate within its arrivals'
    // randomness, so the first check (two windows) agrees.
    let mut light = base.fork();
    let run = light.run_converged(100.0, 0, &Convergence { window_transactions: 20_000, ..rule }, &mut rng.clone());
    let run = run.unwrap();
    assert_eq!(run.ended_by, Ending::Converged, "{run:?}");
    assert_eq!(run.window_tps.len(), 2);
    let (a, b) = run.halves().unwrap();
    assert!((a - b).abs() <= 0.02 * a.max(b));
    assert!((run.report.throughput_tps / 100.0 - 1.0).abs() < 0.03, "{run:?}");
    assert_eq!(run.report.transactions, 2 * run.window_transactions);
    // Saturated with a tolerance nothing meets: the turnovers end it, at a window's end.
    let strict = Convergence { tolerance: 1e-9, max_turnovers: 3.0, ..rule };
    let mut saturated = base.fork();
    let run = saturated.run_converged(1e6, 0, &strict, &mut rng.clone()).unwrap();
    assert_eq!(run.ended_by, Ending::Turnovers, "{run:?}");
    assert!(run.turnovers >= 3.0, "{run:?}");
    assert_eq!(run.report.transactions, run.window_transactions * run.window_tps.len() as u64);
    // The windows' transactions, at their throughputs, take the run's elapsed time.
    let elapsed_s: f64 = run.window_tps.iter().map(|t| run.window_transactions as f64 / t).sum();
    let whole = run.report.transactions as f64 / run.report.throughput_tps;
    assert!((elapsed_s / whole - 1.0).abs() < 1e-9, "{elapsed_s} {whole}");
    // And a transactions cap ends a run that never cleans enough for a window.
    let capped = Convergence { window_cleans: u64::MAX, max_transactions: 700, ..rule };
    let run = base.fork().run_converged(1e6, 0, &capped, &mut rng.clone()).unwrap();
    assert_eq!((run.ended_by, run.report.transactions, run.window_tps.len()), (Ending::Transactions, 700, 0));
    assert!(run.halves().is_none());
    // A rule that cannot end a run is refused.
    for bad in [
        Convergence { tolerance: 0.0, ..rule },
        Convergence { tolerance: f64::NAN, ..rule },
        Convergence { max_turnovers: f64::INFINITY, ..rule },
        Convergence { max_transactions: 0, ..rule },
    ] {
        assert!(base.fork().run_converged(1e6, 0, &bad, &mut rng.clone()).is_err(), "{bad:?}");
    }
}
