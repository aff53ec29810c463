//! `journal-fig9`: total PCM bit updates of the journal configurations (Figure 9), with
//! the steps between them and the bits of each field.

use nvmdb_journal::{App, AppModel, DeviceParams, Field, WorkloadRun};
use nvmdb_lab::{Cell, Experiment, LabError, Outcome, Plot, RunContext, Table};

use super::{config_json, mean, normalised, reduction_percent, runs, runs_with, traces, Runs, CONFIGS, WORKLOAD_NOTE};
use crate::papers::{holds_explained, measure_explained, stated};

/// `journal-fig9`: total bit updates of every configuration, normalised to RR.
#[derive(Debug)]
pub struct Fig9Total;

impl Experiment for Fig9Total {
    fn id(&self) -> &'static str {
        "journal-fig9"
    }
    fn title(&self) -> &'static str {
        "Total PCM bit updates of the journal configurations (Figure 9; headline of Figure 16)"
    }
    fn source(&self) -> &'static str {
        "Lee et al., ACM TODAES 2016 (seed 003), Section 6.2, Figures 9 and 16"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let configs: Vec<Option<&str>> = CONFIGS.iter().map(|c| Some(*c)).collect();
        let runs = runs(self.id(), ctx, &configs)?;
        let total = |r: &WorkloadRun| r.stats.total_bit_updates as f64;
        let (table, by) = normalised("Total bit updates ÷ RR", &runs, ctx, &CONFIGS, "RR", total);
        let (vs_s2x, by_s2x) =
            normalised("Total bit updates ÷ RR-S2X", &runs, ctx, &["RR-S2X", "RU20-S2X-WH64"], "RR-S2X", total);
        let ru_below_rr = by["RU"].iter().all(|&v| v < 1.0);
        let cut = reduction_percent(&by_s2x["RU20-S2X-WH64"]);
        let of = |config: &str| mean(&by[config]);
        let s2_below_s2x = of("RR-S2") < of("RR-S2X");
        let ru_cut = 1.0 - of("RU");
        let (s2_step, x_step) = (of("RU") - of("RU-S2"), of("RU-S2") - of("RU-S2X"));
        let slight_extra = s2_step > 0.0 && x_step > 0.0 && s2_step < ru_cut && x_step < ru_cut;
        let mut headline = Table::new("Beside the paper", &["claim", "paper", "ours"]);
        headline.row(vec![
            "RU20-S2X-WH64 cuts total bit updates against RR-S2X, % (mean over traces)".into(),
            stated("journal-fig9-ru20-total-cut"),
            cut.into(),
        ]);
        let mut plot = Plot::new("Total bit updates ÷ RR (mean over traces)", "configuration index", "÷ RR");
        plot.series("ours", CONFIGS.iter().enumerate().map(|(i, c)| (i as f64, mean(&by[*c]))).collect());
        let mut outcome = Outcome {
            summary: format!(
                "Real SQLite on the PCM journal, 64-bit Flip-N-Write under every configuration. Reusing the \
                 portion last used for the same DB page (RU) lets the page image be written differentially over \
                 its old copy: RU's total bit updates are {:.2} of RR's on average. RU20-S2X-WH64 cuts total bit \
                 updates by {cut:.1}% against RR-S2X (paper: 75.2%).",
                mean(&by["RU"])
            ),
            config: config_json(ctx, &CONFIGS),
            tables: vec![headline, table, vs_s2x],
            plots: vec![plot],
            notes: vec![WORKLOAD_NOTE.into()],
            ..Default::default()
        };
        holds_explained(
            &mut outcome,
            "journal-fig9-ru-below-rr",
            ru_below_rr,
            "RU did not stay below RR on every trace; see the table.",
        );
        outcome.tables.push(strategy_split(&runs, ctx));
        let xor_note = step_note(&runs, ctx, "RR-S2", "RR-S2X");
        let reuse_notes =
            format!("{} {}", step_note(&runs, ctx, "RU", "RU-S2"), step_note(&runs, ctx, "RU-S2", "RU-S2X"));
        outcome.notes.push(format!("Strategy 2 and the XOR flags, one at a time: {xor_note} {reuse_notes}"));
        holds_explained(&mut outcome, "journal-fig9-rr-s2-below-rr-s2x", s2_below_s2x, &xor_note);
        let steps_note = format!(
            "Total ÷ RR, mean over traces: RU {:.3}, RU-S2 {:.3}, RU-S2X {:.3} (RU cuts {:.3} of RR's; S2 then {:+.3}, \
             X {:+.3}). {reuse_notes}",
            of("RU"),
            of("RU-S2"),
            of("RU-S2X"),
            ru_cut,
            -s2_step,
            -x_step
        );
        holds_explained(&mut outcome, "journal-fig9-s2-x-slight-extra", slight_extra, &steps_note);
        let (split, split_note) = bits_by_field(&runs, ctx);
        let tx_cut = transactions_cut(&runs, ctx);
        let mut sensitivity = Table::new(
            "Sensitivity to the workload model: message bodies k times longer (RU20-S2X-WH64 against RR-S2X)",
            &["k", "writes / page", "overwrites <= 64 B, %", "cut, whole run, %", "cut, transactions only, %"],
        );
        let mut points = Vec::new();
        for k in BODY_FACTORS {
            let other;
            let r = if k == 1 {
                &runs
            } else {
                let longer = |app: App| {
                    let model = app.model();
                    AppModel { body_bytes: (model.body_bytes.0 * k, model.body_bytes.1 * k), ..model }
                };
                other =
                    runs_with(self.id(), ctx, &[Some("RR-S2X"), Some("RU20-S2X-WH64")], &longer, &DeviceParams::PAPER)?;
                &other
            };
            let wpp = mean(
                &traces(ctx).iter().map(|(a, l)| r[&("RR-S2X".into(), *a, *l)].writes_per_page).collect::<Vec<_>>(),
            );
            let small = mean(
                &traces(ctx)
                    .iter()
                    .map(|(a, l)| r[&("RR-S2X".into(), *a, *l)].small_overwrite_percent)
                    .collect::<Vec<_>>(),
            );
            let (_, b) = normalised("", r, ctx, &["RU20-S2X-WH64"], "RR-S2X", total);
            let whole = reduction_percent(&b["RU20-S2X-WH64"]);
            let tx = transactions_cut(r, ctx);
            sensitivity.row(vec![(k as i64).into(), wpp.into(), small.into(), whole.into(), tx.into()]);
            points.push((k, wpp, whole, tx));
        }
        outcome.tables.push(split);
        outcome.tables.push(sensitivity);
        let sens = points
            .iter()
            .map(|(k, wpp, whole, tx)| format!("k = {k}: {wpp:.1} writes per page, cut {whole:.1}% ({tx:.1}%)"))
            .collect::<Vec<_>>()
            .join("; ");
        let note = format!(
            "{split_note} Counting the measured transactions only (the paper's traces start from an initial \
             database file; ours create theirs in a setup transaction per DB file), the cut is {tx_cut:.1}%. Message bodies k times longer \
             (whole run, and transactions only in brackets): {sens}."
        );
        outcome.notes.push(note.clone());
        measure_explained(&mut outcome, "journal-fig9-ru20-total-cut", cut, &note);
        Ok(outcome)
    }
}

/// Message-body length factors of the workload sensitivity points.
const BODY_FACTORS: [u32; 3] = [1, 2, 4];

/// The configurations of Figure 9's strategy steps: S2 and the XOR flags with and
/// without reuse.
const STEP_CONFIGS: [&str; 5] = ["RR-S2", "RR-S2X", "RU", "RU-S2", "RU-S2X"];

/// The bit updates of the measured transactions per journal structure for the strategy
/// steps of Figure 9 ([`STEP_CONFIGS`]), summed over traces: the isolating split behind
/// its S2 and XOR-flag claims.
fn strategy_split(runs: &Runs, ctx: &RunContext) -> Table {
    let mut table = Table::new(
        "Bit updates of the measured transactions by journal structure, summed over traces: Strategy 2 and the \
         XOR flags, each step the one factor changed",
        &["structure", "RR-S2", "RR-S2X", "RU", "RU-S2", "RU-S2X"],
    );
    for field in Field::ALL {
        let row = STEP_CONFIGS.map(|c| field_bits(runs, ctx, c, field));
        if row.iter().any(|&b| b > 0) {
            let mut cells: Vec<Cell> = vec![field.name().into()];
            cells.extend(row.map(|b| Cell::from(b as i64)));
            table.row(cells);
        }
    }
    table
}

/// How the measured transactions' bit updates change from `from` to `to`, summed over
/// traces: the total change and the three structures that change most.
fn step_note(runs: &Runs, ctx: &RunContext, from: &str, to: &str) -> String {
    let mut changes: Vec<(i64, &str)> = Field::ALL
        .iter()
        .map(|&f| (field_bits(runs, ctx, to, f) as i64 - field_bits(runs, ctx, from, f) as i64, f.name()))
        .filter(|(d, _)| *d != 0)
        .collect();
    changes.sort_by_key(|(d, _)| -d.abs());
    let total = |c: &str| Field::ALL.iter().map(|&f| field_bits(runs, ctx, c, f)).sum::<u64>();
    format!(
        "{from} → {to} (measured transactions, summed over traces): {:+} bit updates of {from}'s {}{}{}.",
        total(to) as i64 - total(from) as i64,
        total(from),
        if changes.is_empty() { "" } else { ", most in " },
        changes.iter().take(3).map(|(d, f)| format!("{f} {d:+}")).collect::<Vec<_>>().join(", ")
    )
}

/// The bit updates of `config`'s measured transactions in journal structure `field`,
/// summed over traces.
fn field_bits(runs: &Runs, ctx: &RunContext, config: &str, field: Field) -> u64 {
    traces(ctx)
        .iter()
        .map(|(a, l)| runs[&(config.to_string(), *a, *l)].transactions_pcm_by_field[field.index()].bits_written)
        .sum()
}

/// RU20-S2X-WH64's cut of total bit updates against RR-S2X counting the measured
/// transactions only (no setup), % (mean over traces).
fn transactions_cut(runs: &Runs, ctx: &RunContext) -> f64 {
    let bits = |r: &WorkloadRun| r.transactions_pcm_by_field.iter().map(|s| s.bits_written).sum::<u64>() as f64;
    let (_, by) = normalised("", runs, ctx, &["RU20-S2X-WH64"], "RR-S2X", bits);
    reduction_percent(&by["RU20-S2X-WH64"])
}

/// The bit updates of the measured transactions per journal structure, RR-S2X against
/// RU20-S2X-WH64 summed over traces, and a note naming the largest shares.
fn bits_by_field(runs: &Runs, ctx: &RunContext) -> (Table, String) {
    let sum = |config: &str, field: Field| field_bits(runs, ctx, config, field);
    let rr_total: u64 = Field::ALL.iter().map(|&f| sum("RR-S2X", f)).sum();
    let ru_total: u64 = Field::ALL.iter().map(|&f| sum("RU20-S2X-WH64", f)).sum();
    let mut table = Table::new(
        "Bit updates of the measured transactions by journal structure, summed over traces",
        &["structure", "RR-S2X", "RU20-S2X-WH64", "RU20 ÷ RR-S2X", "share of RR-S2X's, %", "share of RU20's, %"],
    );
    let mut shares = Vec::new();
    for field in Field::ALL {
        let (rr, ru) = (sum("RR-S2X", field), sum("RU20-S2X-WH64", field));
        let ratio = if rr == 0 { Cell::Missing } else { Cell::from(ru as f64 / rr as f64) };
        let ru_share = 100.0 * ru as f64 / ru_total.max(1) as f64;
        table.row(vec![
            field.name().into(),
            (rr as i64).into(),
            (ru as i64).into(),
            ratio,
            (100.0 * rr as f64 / rr_total.max(1) as f64).into(),
            ru_share.into(),
        ]);
        shares.push((ru_share, field, rr, ru));
    }
    table.row(vec![
        "all".into(),
        (rr_total as i64).into(),
        (ru_total as i64).into(),
        (ru_total as f64 / rr_total.max(1) as f64).into(),
        100.0.into(),
        100.0.into(),
    ]);
    shares.sort_by(|a, b| b.0.total_cmp(&a.0));
    let top = shares
        .iter()
        .take(3)
        .map(|(share, f, rr, ru)| match rr {
            0 => format!("{} {share:.1}% (none under RR-S2X)", f.name()),
            rr => format!("{} {share:.1}% ({:.2} of RR-S2X's)", f.name(), *ru as f64 / *rr as f64),
        })
        .collect::<Vec<_>>()
        .join(", ");
    // Page-image writes: a 1 KB image touches 16 lines, so records = lines / 16.
    let images = |config: &str, field: Field| -> (f64, f64) {
        let (lines, bits) = traces(ctx).iter().fold((0u64, 0u64), |(l, b), (a, len)| {
            let s = runs[&(config.to_string(), *a, *len)].transactions_pcm_by_field[field.index()];
            (l + s.lines_written, b + s.bits_written)
        });
        let records = lines as f64 / 16.0;
        (records, bits as f64 / records.max(1.0))
    };
    let (rr_fresh, rr_fresh_bits) = images("RR-S2X", Field::PageImageFresh);
    let (ru_fresh, ru_fresh_bits) = images("RU20-S2X-WH64", Field::PageImageFresh);
    let (ru_own, ru_own_bits) = images("RU20-S2X-WH64", Field::PageImageReused);
    let note = format!(
        "Measured split of the transactions' bit updates, summed over traces: RU20-S2X-WH64 programs {:.3} of \
         RR-S2X's cells; its largest shares are {top}. Page images (1 KB records, counted as 16 lines each): \
         RR-S2X writes {rr_fresh:.0}, all in fresh portions, {rr_fresh_bits:.0} bits each; RU20-S2X-WH64 writes \
         {ru_own:.0} over the same page's portion at {ru_own_bits:.0} bits each and {ru_fresh:.0} in fresh \
         portions at {ru_fresh_bits:.0} bits each.",
        ru_total as f64 / rr_total.max(1) as f64
    );
    (table, note)
}
