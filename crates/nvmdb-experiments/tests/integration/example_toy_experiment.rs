//! CONTRIBUTING.md's worked example of a new experiment with its claim: a toy experiment,
//! registered only here (not in `nvmdb_experiments::all()`), that measures Flip-N-Write on
//! random line overwrites, and a claim table beside it as `papers/` keeps them. The
//! scorecard judges the measurement against the claim, and the measured value moves with
//! the seed, as a row of kind `measured` must.

use nvmdb_device::{FlipNWrite, Pcm, PcmConfig};
use nvmdb_lab::report::Finished;
use nvmdb_lab::{
    scorecard, Claim, ClaimKind, Experiment, LabError, Outcome, RunContext, Scale, Stated, Table, Verdict,
};
use rand::Rng;

/// Random overwrites of a few PCM lines, with and without Flip-N-Write (8-bit groups).
struct ToyFlipNWrite;

const LINES: u64 = 64;
const WRITES: u64 = 20_000;

/// A device error as the experiment's failure.
fn failed(e: nvmdb_device::DeviceError) -> LabError {
    LabError::Failed { id: "toy-flip-n-write".into(), message: e.to_string() }
}

/// Cells programmed by `WRITES` random whole-line writes, the same lines and data for a
/// given seed.
fn cells_programmed(ctx: &RunContext, flip_n_write: Option<FlipNWrite>) -> Result<u64, LabError> {
    let mut config = PcmConfig::new(LINES * 64);
    config.flip_n_write = flip_n_write;
    let mut pcm = Pcm::new(config).map_err(failed)?;
    let mut rng = ctx.rng(1);
    let mut cells = 0;
    for _ in 0..WRITES {
        let line = rng.gen_range(0..LINES);
        cells += u64::from(pcm.write_line(line, &rng.gen()).bits);
    }
    Ok(cells)
}

impl Experiment for ToyFlipNWrite {
    fn id(&self) -> &'static str {
        "toy-flip-n-write"
    }

    fn title(&self) -> &'static str {
        "Worked example: Flip-N-Write's cells programmed on random overwrites"
    }

    fn source(&self) -> &'static str {
        "CONTRIBUTING.md (a worked example; not a paper's experiment)"
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let plain = cells_programmed(ctx, None)?;
        let flip = cells_programmed(ctx, Some(FlipNWrite::new(8).map_err(failed)?))?;
        let ratio = flip as f64 / plain as f64;
        let mut outcome =
            Outcome { summary: format!("Flip-N-Write programs {ratio:.3} of the cells."), ..Outcome::default() };
        let mut table = Table::new("Cells programmed by random line overwrites", &["encoding", "cells"]);
        table.row(vec!["differential".into(), plain.into()]);
        table.row(vec!["Flip-N-Write, 8-bit groups".into(), flip.into()]);
        outcome.tables.push(table);
        outcome.measure("toy-fnw-share", ratio);
        Ok(outcome)
    }
}

/// The claim, as a paper's table in `papers/` states one.
const CLAIMS: &[Claim] = &[Claim {
    id: "toy-fnw-share",
    experiment: "toy-flip-n-write",
    seed: "Worked example",
    figure: "—",
    claim: "Flip-N-Write (8-bit groups) programs at most 0.9 of the cells differential writes do on random data",
    stated: Stated::AtMost(0.9),
    tolerance: nvmdb_experiments::papers::BOUND,
    unit: "",
    kind: ClaimKind::Measured,
}];

fn run_at(seed: u64) -> (Finished, f64) {
    let ctx = RunContext::new(Scale::Quick, seed);
    let outcome = ToyFlipNWrite.run(&ctx).expect("the toy runs");
    let value = outcome.measurements[0].value;
    (Finished::new(&ToyFlipNWrite, outcome), value)
}

#[test]
fn a_toy_experiment_is_judged_by_its_claim_and_its_value_moves_with_the_seed() {
    let (finished, one) = run_at(1);
    let rows = scorecard(CLAIMS, std::slice::from_ref(&finished)).expect("the scorecard builds");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].verdict, Verdict::Reproduces, "{:?}", rows[0]);
    assert!((0.5..0.9).contains(&one), "{one}");
    let (_, two) = run_at(2);
    assert_ne!(one, two, "a measured value must come from the simulation");
}
