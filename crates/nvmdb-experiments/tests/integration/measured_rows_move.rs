//! A scorecard row of kind `measured` must come from a simulation, able to come out either
//! way; one whose value the preset parameters fix alone is kind `constant`. The cheap
//! experiments below run at two seeds, which draw different workloads, keys and traces
//! over the same presets: every quantitative `measured` row of theirs must change value
//! between the seeds, and every quantitative `constant` row must not. A row whose value
//! follows from the presets, marked `measured`, fails here. Qualitative rows (holds or
//! not) and `input` rows (a sample of the generator's own input, which moves with the
//! seed) are not decided by this test.

use std::collections::BTreeMap;

use nvmdb_experiments::papers;
use nvmdb_lab::{ClaimKind, RunContext, Scale, Stated};

/// Experiments of a few seconds at quick scale, together about 13 s per seed in release.
const EXPERIMENTS: [&str; 14] = [
    "cidr-fig5",
    "cidr-fig6",
    "envy-lifetime",
    "envy-tpca",
    "iplp-fig4",
    "iplp-log-write",
    "journal-fig9",
    "journal-fig13",
    "journal-fig18",
    "journal-fig19",
    "journal-recovery",
    "journal-workloads",
    "thesis-fig5-1",
    "thesis-fig5-3",
];

/// Every claim value the experiments measured at `seed`.
fn values(seed: u64) -> BTreeMap<String, f64> {
    let ctx = RunContext::new(Scale::Quick, seed);
    let mut out = BTreeMap::new();
    for experiment in nvmdb_experiments::all().into_iter().filter(|e| EXPERIMENTS.contains(&e.id())) {
        let outcome = experiment.run(&ctx).unwrap_or_else(|e| panic!("{} runs: {e}", experiment.id()));
        out.extend(outcome.measurements.into_iter().map(|m| (m.claim, m.value)));
    }
    out
}

#[test]
fn measured_rows_move_with_the_simulation_and_constant_rows_do_not() {
    let (one, two) = std::thread::scope(|s| {
        let one = s.spawn(|| values(1));
        let two = s.spawn(|| values(2));
        (one.join().expect("seed 1"), two.join().expect("seed 2"))
    });
    let (mut moved, mut fixed) = (0, 0);
    for claim in papers::all().iter().filter(|c| EXPERIMENTS.contains(&c.experiment)) {
        let (a, b) = (one[claim.id], two[claim.id]);
        if matches!(claim.stated, Stated::Holds) {
            continue;
        }
        match claim.kind {
            ClaimKind::Measured => {
                assert!(a != b, "{} is measured, yet both seeds give {a}: do the presets fix it?", claim.id);
                moved += 1;
            }
            ClaimKind::Constant => {
                assert!(a == b, "{} is constant, yet the seeds give {a} and {b}", claim.id);
                fixed += 1;
            }
            ClaimKind::Input => {}
        }
    }
    // The experiments hold both kinds, so each assertion above ran.
    assert!(moved >= 20 && fixed >= 3, "{moved} measured and {fixed} constant rows compared");
}
