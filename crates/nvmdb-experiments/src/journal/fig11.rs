//! `journal-fig11`: total PCM bit updates against header-frame reuse, RU20-S2X-WHm
//! (Figure 11).

use nvmdb_journal::{App, Field};
use nvmdb_lab::{Experiment, LabError, Outcome, RunContext};

use super::sweep::{app_means, fmt3, sweep_name, BitMetric, SweepFigure, SWEEP_M, UNEXPLAINED};
use super::{mean, traces};
use crate::papers::holds_explained;

/// `journal-fig11`: total bit updates against header copies m (RU20-S2X-WHm).
#[derive(Debug)]
pub struct Fig11HeaderReuseTotal;

impl Experiment for Fig11HeaderReuseTotal {
    fn id(&self) -> &'static str {
        "journal-fig11"
    }
    fn title(&self) -> &'static str {
        "Total PCM bit updates against header-frame reuse, RU20-S2X-WHm (Figure 11)"
    }
    fn source(&self) -> &'static str {
        "Lee et al., ACM TODAES 2016 (seed 003), Section 6.2, Figure 11"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let points: Vec<(u32, String)> = SWEEP_M.iter().map(|&m| (m, sweep_name(20, m))).collect();
        let mut fig = SweepFigure::run(self.id(), ctx, &points, BitMetric::Total, "header copies m")?;
        let (wh1, wh64) = (sweep_name(20, 1), sweep_name(20, 64));
        let below = mean(&fig.by_config[&wh64]) < mean(&fig.by_config[&wh1]);
        let drop: Vec<f64> = fig.by_config[&wh1].iter().zip(&fig.by_config[&wh64]).map(|(a, b)| a - b).collect();
        let drops = app_means(ctx, &drop);
        let tw_most = drops.values().all(|&d| d <= drops[&App::Twitter]);
        fig.outcome.summary = format!(
            "Total bit updates of RU20-S2X-WHm ÷ RR-S2X, mean over traces: {} for m = 1 and {} for m = 64. The \
             drop from m = 1 to m = 64 (in units of RR-S2X's total) is FB {:.3}, TW {:.3}, KT {:.3}, GM {:.3}.",
            fmt3(mean(&fig.by_config[&wh1])),
            fmt3(mean(&fig.by_config[&wh64])),
            drops[&App::Facebook],
            drops[&App::Twitter],
            drops[&App::KakaoTalk],
            drops[&App::Gmail]
        );
        // Which structures' bit updates change from m = 1 to m = 64, summed over traces.
        let bits = |config: &str, fields: &[Field]| -> u64 {
            traces(ctx)
                .iter()
                .map(|(a, l)| {
                    let r = &fig.runs[&(config.to_string(), *a, *l)];
                    fields.iter().map(|f| r.transactions_pcm_by_field[f.index()].bits_written).sum::<u64>()
                })
                .sum()
        };
        let changes = [
            (Field::HeaderReset, "zeroing new header frames"),
            (Field::JournalHeader, "journal header slot writes"),
            (Field::FrameCopy, "frame copies"),
        ]
        .iter()
        .map(|(f, what)| format!("{what} {} → {}", bits(&wh1, &[*f]), bits(&wh64, &[*f])))
        .collect::<Vec<_>>()
        .join(", ");
        let note = format!(
            "Measured bit updates of the transactions, summed over traces, RU20-S2X → RU20-S2X-WH64: all structures \
             {} → {}; {changes}. A new header frame's 64 slots (2 KB) are zeroed when it is allocated.",
            bits(&wh1, &Field::ALL),
            bits(&wh64, &Field::ALL)
        );
        fig.outcome.notes.push(note.clone());
        holds_explained(&mut fig.outcome, "journal-fig11-wh64-below-wh1", below, &note);
        holds_explained(&mut fig.outcome, "journal-fig11-tw-gains-most", tw_most, UNEXPLAINED);
        Ok(fig.outcome)
    }
}
