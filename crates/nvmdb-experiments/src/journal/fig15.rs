//! `journal-fig15`: maximum PCM bit updates against header-frame reuse, RU2-S2X-WHm
//! (Figure 15).

use nvmdb_lab::{Experiment, LabError, Outcome, RunContext};

use super::mean;
use super::sweep::{fmt3, hottest_note, sweep_name, BitMetric, SweepFigure, SWEEP_M};
use crate::papers::holds_explained;

/// `journal-fig15`: maximum bit updates against header copies m (RU2-S2X-WHm).
#[derive(Debug)]
pub struct Fig15HeaderReuseMax;

impl Experiment for Fig15HeaderReuseMax {
    fn id(&self) -> &'static str {
        "journal-fig15"
    }
    fn title(&self) -> &'static str {
        "Maximum PCM bit updates against header-frame reuse, RU2-S2X-WHm (Figure 15)"
    }
    fn source(&self) -> &'static str {
        "Lee et al., ACM TODAES 2016 (seed 003), Section 6.2, Figure 15"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let points: Vec<(u32, String)> = SWEEP_M.iter().map(|&m| (m, sweep_name(2, m))).collect();
        let mut fig = SweepFigure::run(self.id(), ctx, &points, BitMetric::Max, "header copies m")?;
        let (wh1, wh64) = (&fig.by_config[&sweep_name(2, 1)], &fig.by_config[&sweep_name(2, 64)]);
        let lower = wh64.iter().zip(wh1).filter(|(a, b)| a < b).count();
        let most = 2 * lower > wh1.len();
        fig.outcome.summary = format!(
            "Maximum bit updates of RU2-S2X-WHm ÷ RR-S2X, mean over traces: {} for m = 1 and {} for m = 64; \
             m = 64 is lower than m = 1 on {lower} of {} traces.",
            fmt3(mean(wh1)),
            fmt3(mean(wh64)),
            wh1.len()
        );
        let note = hottest_note(ctx, &fig.runs, &[&sweep_name(2, 1), &sweep_name(2, 64)]);
        fig.outcome.notes.push(note.clone());
        holds_explained(&mut fig.outcome, "journal-fig15-wh-lowers-max", most, &note);
        Ok(fig.outcome)
    }
}
