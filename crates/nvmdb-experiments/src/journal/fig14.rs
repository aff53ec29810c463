//! `journal-fig14`: maximum PCM bit updates against the reuse limit n, RUn-S2X (Figure 14).

use nvmdb_lab::{Experiment, LabError, Outcome, RunContext};

use super::sweep::{fmt3, hottest_note, sweep_name, BitMetric, SweepFigure, SWEEP_N};
use crate::papers::holds_explained;

/// `journal-fig14`: maximum bit updates against the reuse limit n (RUn-S2X).
#[derive(Debug)]
pub struct Fig14ReuseLimitMax;

impl Experiment for Fig14ReuseLimitMax {
    fn id(&self) -> &'static str {
        "journal-fig14"
    }
    fn title(&self) -> &'static str {
        "Maximum PCM bit updates against the reuse limit n, RUn-S2X (Figure 14)"
    }
    fn source(&self) -> &'static str {
        "Lee et al., ACM TODAES 2016 (seed 003), Section 6.2, Figure 14"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let points: Vec<(u32, String)> = SWEEP_N.iter().map(|&n| (n, sweep_name(n, 1))).collect();
        let mut fig = SweepFigure::run(self.id(), ctx, &points, BitMetric::Max, "reuse limit n")?;
        let means = fig.means();
        let lowest = (0..means.len()).min_by(|&a, &b| means[a].total_cmp(&means[b])).unwrap_or(0);
        // Past the limit with the lowest maximum, the maximum rises with n.
        let rises = lowest + 1 < means.len() && means[lowest..].windows(2).all(|w| w[1] >= w[0]);
        let small_higher = lowest != 0 && means[0] > means[lowest];
        fig.outcome.summary = format!(
            "Maximum bit updates of RUn-S2X ÷ RR-S2X, mean over traces, for n = {SWEEP_N:?}: {}; lowest at n = {}.",
            means.iter().map(|m| fmt3(*m)).collect::<Vec<_>>().join(", "),
            SWEEP_N[lowest]
        );
        let (smallest, largest) = (sweep_name(SWEEP_N[0], 1), sweep_name(SWEEP_N[SWEEP_N.len() - 1], 1));
        let note = hottest_note(ctx, &fig.runs, &[&smallest, &largest]);
        fig.outcome.notes.push(note.clone());
        holds_explained(&mut fig.outcome, "journal-fig14-max-rises-with-n", rises, &note);
        holds_explained(&mut fig.outcome, "journal-fig14-small-limit-raises-max", small_higher, &note);
        Ok(fig.outcome)
    }
}
