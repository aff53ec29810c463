//! Seed 003 (Lee et al., ACM TODAES 2016): the SQLite rollback journal in PCM, run with
//! real SQLite through nvmdb-journal's VFS on four generated mobile-app workloads.

mod fig13;
mod fig18;
mod fig19;
mod sensitivity;

use std::collections::BTreeMap;

use nvmdb_journal::{
    generate, generate_with, run_workload, App, AppModel, DeviceParams, Field, JournalConfig, WorkloadRun,
};
use nvmdb_lab::{Cell, Experiment, LabError, Outcome, Plot, RunContext, Table};
use serde_json::json;

use crate::papers::{holds_explained, measure_explained, stated};

pub use fig13::Fig13Max;
pub use fig18::Fig18Energy;
pub use fig19::Fig19Time;
pub use sensitivity::WorkloadSensitivity;

/// The journal experiments.
pub fn all() -> Vec<Box<dyn Experiment>> {
    vec![
        Box::new(Workloads),
        Box::new(Fig9Total),
        Box::new(WorkloadSensitivity),
        Box::new(Fig13Max),
        Box::new(Fig18Energy),
        Box::new(Fig19Time),
        Box::new(Fig10ReuseLimitTotal),
        Box::new(Fig11HeaderReuseTotal),
        Box::new(Fig14ReuseLimitMax),
        Box::new(Fig15HeaderReuseMax),
        Box::new(Fig16Sweep),
        Box::new(Fig17IncrementalGc),
        Box::new(Recovery),
    ]
}

/// The configurations of Figures 9 and 13, and the paper's best.
const CONFIGS: [&str; 7] = ["RR", "RR-S2", "RR-S2X", "RU", "RU-S2", "RU-S2X", "RU20-S2X-WH64"];

fn failed(id: &str) -> impl Fn(nvmdb_journal::JournalError) -> LabError + '_ {
    move |e| LabError::Failed { id: id.into(), message: e.to_string() }
}

/// The trace lengths run at this scale: the shortest at quick scale, all four at paper
/// scale.
fn lengths(ctx: &RunContext) -> Vec<u32> {
    ctx.scale.pick(vec![1], vec![1, 2, 3, 4])
}

/// The runs of an experiment: per configuration name (`none`: no journaling), app and
/// trace length.
type Runs = BTreeMap<(String, App, u32), WorkloadRun>;

/// Runs every app and length under each configuration (`None`: no journaling).
fn runs(id: &str, ctx: &RunContext, configs: &[Option<&str>]) -> Result<Runs, LabError> {
    runs_with(id, ctx, configs, &App::model, &DeviceParams::PAPER)
}

/// [`runs`] with each app's workload generated from `model(app)` (a sensitivity point
/// of the workload model), on devices `params`.
fn runs_with(
    id: &str,
    ctx: &RunContext,
    configs: &[Option<&str>],
    model: &dyn Fn(App) -> AppModel,
    params: &DeviceParams,
) -> Result<Runs, LabError> {
    let mut out = BTreeMap::new();
    for app in App::ALL {
        let model = model(app);
        for length in lengths(ctx) {
            let workload = generate_with(app, &model, length, ctx.seed).map_err(failed(id))?;
            for name in configs {
                let config = name.map(JournalConfig::parse).transpose().map_err(failed(id))?;
                let run = run_workload(config, &workload, params, ctx.seed).map_err(failed(id))?;
                out.insert((name.unwrap_or("none").to_string(), app, length), run);
            }
        }
    }
    Ok(out)
}

fn trace(app: App, length: u32) -> String {
    format!("{}{length}", app.code().to_uppercase())
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// The geometric mean of `values` (Figure 16's points are geometric means over traces);
/// a zero counts as the smallest positive value.
fn geometric_mean(values: &[f64]) -> f64 {
    (values.iter().map(|x| x.max(f64::MIN_POSITIVE).ln()).sum::<f64>() / values.len() as f64).exp()
}

/// The smallest, median (of an even count, the mean of the middle two) and largest of
/// `values`; zeros when there are none.
fn spread(values: &[f64]) -> (f64, f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let Some((&lo, &hi)) = sorted.first().zip(sorted.last()) else {
        return (0.0, 0.0, 0.0);
    };
    let half = sorted.len() / 2;
    let median = if sorted.len() % 2 == 1 { sorted[half] } else { (sorted[half - 1] + sorted[half]) / 2.0 };
    (lo, median, hi)
}

/// A table of `metric` per configuration and trace, normalised to `base`, with the
/// per-configuration mean; returns the table and the normalised values by config.
fn normalised(
    title: &str,
    runs: &Runs,
    ctx: &RunContext,
    configs: &[&str],
    base: &str,
    metric: impl Fn(&WorkloadRun) -> f64,
) -> (Table, BTreeMap<String, Vec<f64>>) {
    let mut columns = vec!["config".to_string()];
    for app in App::ALL {
        for length in lengths(ctx) {
            columns.push(trace(app, length));
        }
    }
    columns.push("mean".into());
    let column_refs: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut table = Table::new(title, &column_refs);
    let mut by_config = BTreeMap::new();
    for &config in configs {
        let mut values = Vec::new();
        for app in App::ALL {
            for length in lengths(ctx) {
                let v = metric(&runs[&(config.to_string(), app, length)]);
                let b = metric(&runs[&(base.to_string(), app, length)]);
                values.push(v / b.max(f64::MIN_POSITIVE));
            }
        }
        let mut row: Vec<Cell> = vec![config.into()];
        row.extend(values.iter().map(|&v| Cell::from(v)));
        row.push(mean(&values).into());
        table.row(row);
        by_config.insert(config.to_string(), values);
    }
    (table, by_config)
}

/// The PCM write time a run is timed with; Figures 18 and 19 are reported with both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum WriteTime {
    /// [`nvmdb_journal::PAPER_BOARD_PCM`]: a fixed time per changed 128 B step.
    Chunks,
    /// [`nvmdb_journal::PAPER_BOARD_PCM_PROGRAM_BUDGET`]: a time by the cells programmed.
    Cells,
}

impl WriteTime {
    /// Both, in table order.
    const BOTH: [WriteTime; 2] = [WriteTime::Chunks, WriteTime::Cells];

    /// The devices a run is timed on.
    fn params(self) -> DeviceParams {
        match self {
            WriteTime::Chunks => DeviceParams::PAPER,
            WriteTime::Cells => DeviceParams::PAPER_PROGRAM_BUDGET,
        }
    }

    /// What the composition's PCM write time includes, for row labels.
    fn label(self) -> &'static str {
        match self {
            WriteTime::Chunks => "PCM write time fixed per changed 128 B (7.1 µs)",
            WriteTime::Cells => "PCM write time by cells programmed (64 per 444 ns iteration)",
        }
    }
}

/// The two ends of a bracket around a target: `(x, value)` where the value is at least the
/// target, and where it is below.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bracket {
    holds: (f64, f64),
    fails: (f64, f64),
}

/// Where a measured value reaches `target` as a parameter runs over `grid` (`(x, value)`
/// in increasing x): the first neighbours of the grid whose values lie on either side of
/// the target, narrowed by evaluating `value` at `mid(a, b)` of the bracket's ends until
/// `mid` gives `None`. `None` when no neighbours straddle the target.
fn crossing<E>(
    grid: &[(f64, f64)],
    target: f64,
    mid: impl Fn(f64, f64) -> Option<f64>,
    mut value: impl FnMut(f64) -> Result<f64, E>,
) -> Result<Option<Bracket>, E> {
    let Some(pair) = grid.windows(2).find(|w| (w[0].1 >= target) != (w[1].1 >= target)) else {
        return Ok(None);
    };
    let (mut a, mut b) = (pair[0], pair[1]);
    while let Some(x) = mid(a.0, b.0) {
        let point = (x, value(x)?);
        if (point.1 >= target) == (a.1 >= target) {
            a = point;
        } else {
            b = point;
        }
    }
    Ok(Some(if a.1 >= target { Bracket { holds: a, fails: b } } else { Bracket { holds: b, fails: a } }))
}

fn reduction_percent(values: &[f64]) -> f64 {
    100.0 * (1.0 - mean(values))
}

fn config_json(ctx: &RunContext, configs: &[&str]) -> serde_json::Value {
    json!({
        "seed": ctx.seed,
        "lengths": lengths(ctx),
        "configs": configs,
        "journal_bytes": DeviceParams::PAPER.journal_bytes,
        "pcm": "64-bit Flip-N-Write, exact per-cell wear, paper-board storage timing",
        "db_pages": "1 KB, on 4 KB flash pages (thesis Table 5.1 timing)",
    })
}

const WORKLOAD_NOTE: &str = "The workloads are generated, not the paper's traces: per app a fixed number of DB files \
     (FB 13-16, others 3-6, as stated), short transactions inserting 1-3 rows or updating a flag or a counter. Only \
     the DB file counts and the 1 KB page come from the paper; the other parameters are ours and were not fitted.";

/// Hot sets of the flag updates at which `journal-workloads` measures writes per page.
const WRITES_PER_PAGE_HOT_ROWS: [u32; 4] = [1, 10, 40, 160];

/// `journal-workloads`: the overwrite statistics of Figures 5 and 6, from our workloads.
#[derive(Debug)]
pub struct Workloads;

impl Experiment for Workloads {
    fn id(&self) -> &'static str {
        "journal-workloads"
    }
    fn title(&self) -> &'static str {
        "SQLite write behaviour of the generated mobile-app workloads (Figures 5 and 6)"
    }
    fn source(&self) -> &'static str {
        "Lee et al., ACM TODAES 2016 (seed 003), Section 5.1, Figures 5 and 6"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let runs = runs(self.id(), ctx, &[Some("RR-S2X")])?;
        let mut table = Table::new(
            "DB page writes per logical page, and overwrites changing at most 64 bytes",
            &["trace", "DB files", "transactions", "writes / page", "overwrites <= 64 B, %"],
        );
        let mut per_page = Vec::new();
        let mut small = Vec::new();
        for ((_, app, length), run) in &runs {
            let workload = generate(*app, *length, ctx.seed).map_err(failed(self.id()))?;
            table.row(vec![
                trace(*app, *length).into(),
                (workload.db_files.len() as i64).into(),
                (workload.transactions.len() as i64).into(),
                run.writes_per_page.into(),
                run.small_overwrite_percent.into(),
            ]);
            per_page.push(run.writes_per_page);
            small.push(run.small_overwrite_percent);
        }
        table.row(vec!["mean".into(), Cell::Missing, Cell::Missing, mean(&per_page).into(), mean(&small).into()]);
        let mut paper = Table::new("Beside the paper", &["statistic", "paper", "ours (mean over traces)"]);
        paper.row(vec![
            "writes per logical page".into(),
            stated("journal-workloads-writes-per-page"),
            mean(&per_page).into(),
        ]);
        paper.row(vec![
            "page overwrites changing <= 64 B, %".into(),
            stated("journal-workloads-small-overwrites"),
            mean(&small).into(),
        ]);
        // What sets writes per page: the hot set of the flag updates, a parameter of our
        // generator (the paper's traces have none), against its default.
        let mut by_hot = Table::new(
            format!(
                "Writes per logical page against the hot set of the flag updates (default {}; mean over traces, \
                 RR-S2X)",
                AppModel::HOT_ROWS
            ),
            &["hot set, messages", "writes / page"],
        );
        let mut hot_points = Vec::new();
        for hot_rows in WRITES_PER_PAGE_HOT_ROWS {
            let runs = runs_with(
                self.id(),
                ctx,
                &[Some("RR-S2X")],
                &|app| AppModel { hot_rows, ..app.model() },
                &DeviceParams::PAPER,
            )?;
            let per_page = mean(&runs.values().map(|r| r.writes_per_page).collect::<Vec<_>>());
            by_hot.row(vec![i64::from(hot_rows).into(), per_page.into()]);
            hot_points.push(format!("{per_page:.1} at {hot_rows}"));
        }
        let writes_note = format!(
            "Writes per page follows the hot set of the flag updates, a parameter of our generator the paper's \
             traces do not give (default {} messages): {} (second table); it also grows with a trace's \
             transactions per DB file (first table).",
            AppModel::HOT_ROWS,
            hot_points.join(", ")
        );
        let mut outcome = Outcome {
            summary: format!(
                "Our generated workloads write each logical DB page {:.1} times on average, and {:.1}% of page \
                 overwrites change at most 64 bytes, measured on the DB file's page writes.",
                mean(&per_page),
                mean(&small)
            ),
            config: config_json(ctx, &["RR-S2X"]),
            tables: vec![paper, table, by_hot],
            notes: vec![
                WORKLOAD_NOTE.into(),
                "Writes per page counts every 1 KB DB page write over the distinct pages written (the paper's \
                 'overwrites per page' may count one fewer per page). A small overwrite changes at most 64 bytes \
                 of the page's 1024, counted byte by byte against its previous content."
                    .into(),
            ],
            ..Default::default()
        };
        measure_explained(&mut outcome, "journal-workloads-writes-per-page", mean(&per_page), &writes_note);
        outcome.measure("journal-workloads-small-overwrites", mean(&small));
        Ok(outcome)
    }
}

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

/// Reuse limits and header copies of the sweep (Figures 10, 11, 14, 15 and 16).
const SWEEP_N: [u32; 5] = [2, 5, 10, 20, 50];
const SWEEP_M: [u32; 6] = [1, 2, 4, 8, 64, 128];

fn sweep_name(n: u32, m: u32) -> String {
    if m == 1 {
        format!("RU{n}-S2X")
    } else {
        format!("RU{n}-S2X-WH{m}")
    }
}

/// The indices of the points no other point beats in both coordinates (smaller is
/// better), by increasing first coordinate.
pub fn pareto_front(points: &[(f64, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| points[a].0.total_cmp(&points[b].0).then(points[a].1.total_cmp(&points[b].1)));
    let mut front = Vec::new();
    let mut best_y = f64::INFINITY;
    for i in order {
        if points[i].1 < best_y {
            front.push(i);
            best_y = points[i].1;
        }
    }
    front
}

/// Which bit-update count a sweep figure plots.
#[derive(Debug, Clone, Copy)]
enum BitMetric {
    Total,
    Max,
}

impl BitMetric {
    fn of(self, r: &WorkloadRun) -> f64 {
        match self {
            BitMetric::Total => r.stats.total_bit_updates as f64,
            BitMetric::Max => r.stats.max_bit_updates as f64,
        }
    }

    fn name(self) -> &'static str {
        match self {
            BitMetric::Total => "Total bit updates",
            BitMetric::Max => "Maximum bit updates",
        }
    }
}

/// One sweep figure's measurements: per configuration (in sweep order) the metric ÷
/// RR-S2X on every trace.
struct SweepFigure {
    configs: Vec<String>,
    by_config: BTreeMap<String, Vec<f64>>,
    runs: Runs,
    outcome: Outcome,
}

impl SweepFigure {
    /// Runs `configs` (each with its x value) and RR-S2X, and draws `metric` ÷ RR-S2X
    /// against x, one line per trace and one for the mean.
    fn run(
        id: &str,
        ctx: &RunContext,
        points: &[(u32, String)],
        metric: BitMetric,
        x_label: &str,
    ) -> Result<SweepFigure, LabError> {
        let configs: Vec<String> = points.iter().map(|(_, c)| c.clone()).collect();
        let mut names: Vec<&str> = configs.iter().map(String::as_str).collect();
        names.push("RR-S2X");
        let runs = runs(id, ctx, &names.iter().map(|c| Some(*c)).collect::<Vec<_>>())?;
        let title = format!("{} ÷ RR-S2X", metric.name());
        let (table, by_config) = normalised(&title, &runs, ctx, &names, "RR-S2X", |r| metric.of(r));
        let mut plot = Plot::new(format!("{title} against {x_label}"), x_label, "÷ RR-S2X").log2_x();
        for (t, (app, length)) in traces(ctx).into_iter().enumerate() {
            let line = points.iter().map(|(x, c)| (f64::from(*x), by_config[c][t])).collect();
            plot.series(trace(app, length), line);
        }
        plot.series("mean", points.iter().map(|(x, c)| (f64::from(*x), mean(&by_config[c]))).collect());
        let outcome = Outcome {
            config: config_json(ctx, &names),
            tables: vec![table],
            plots: vec![plot],
            notes: vec![WORKLOAD_NOTE.into()],
            ..Default::default()
        };
        Ok(SweepFigure { configs, by_config, runs, outcome })
    }

    /// The mean over traces of each configuration, in sweep order.
    fn means(&self) -> Vec<f64> {
        self.configs.iter().map(|c| mean(&self.by_config[c])).collect()
    }
}

/// The traces run at this scale, in table order.
fn traces(ctx: &RunContext) -> Vec<(App, u32)> {
    App::ALL.iter().flat_map(|&app| lengths(ctx).into_iter().map(move |l| (app, l))).collect()
}

/// Per app, the mean of `values` (one per trace, in table order) over its traces.
fn app_means(ctx: &RunContext, values: &[f64]) -> BTreeMap<App, f64> {
    let mut out = BTreeMap::new();
    for app in App::ALL {
        let mine: Vec<f64> = traces(ctx).iter().zip(values).filter(|((a, _), _)| *a == app).map(|(_, &v)| v).collect();
        out.insert(app, mean(&mine));
    }
    out
}

/// One column of a [`contributions`] table: its label, the configuration compared with
/// the base, and the apps whose traces are summed.
struct Column {
    label: String,
    config: String,
    apps: Vec<App>,
}

/// The isolating split behind a shape claim: per journal structure, the measured
/// transactions' bit updates under a column's configuration minus those under `base`,
/// divided by RR-S2X's total, summed over the column's traces. A column sums to the
/// difference of the two configurations' totals ÷ RR-S2X. Returns the table and, per
/// column, its largest contributions as text.
fn contributions(title: &str, runs: &Runs, ctx: &RunContext, base: &str, columns: &[Column]) -> (Table, Vec<String>) {
    let bits = |config: &str, apps: &[App], field: Option<Field>| -> f64 {
        traces(ctx)
            .iter()
            .filter(|(a, _)| apps.contains(a))
            .map(|(a, l)| {
                let by = &runs[&(config.to_string(), *a, *l)].transactions_pcm_by_field;
                match field {
                    Some(f) => by[f.index()].bits_written,
                    None => by.iter().map(|s| s.bits_written).sum(),
                }
            })
            .sum::<u64>() as f64
    };
    let mut headers = vec!["structure".to_string()];
    headers.extend(columns.iter().map(|c| c.label.clone()));
    let mut table = Table::new(title, &headers.iter().map(String::as_str).collect::<Vec<_>>());
    let mut per_column: Vec<Vec<(f64, Field)>> = vec![Vec::new(); columns.len()];
    for field in Field::ALL {
        let values: Vec<f64> = columns
            .iter()
            .map(|c| {
                let rr = bits("RR-S2X", &c.apps, None).max(1.0);
                (bits(&c.config, &c.apps, Some(field)) - bits(base, &c.apps, Some(field))) / rr
            })
            .collect();
        if values.iter().all(|v| *v == 0.0) {
            continue;
        }
        for (column, v) in per_column.iter_mut().zip(&values) {
            column.push((*v, field));
        }
        let mut row = vec![Cell::from(field.name())];
        row.extend(values.into_iter().map(Cell::from));
        table.row(row);
    }
    let mut sums = vec![Cell::from("all")];
    sums.extend(per_column.iter().map(|c| Cell::from(c.iter().map(|(v, _)| v).sum::<f64>())));
    table.row(sums);
    let text = columns
        .iter()
        .zip(&mut per_column)
        .map(|(c, column)| {
            let sum: f64 = column.iter().map(|(v, _)| v).sum();
            column.sort_by(|a, b| b.0.abs().total_cmp(&a.0.abs()));
            let top = column
                .iter()
                .take(2)
                .filter(|(v, _)| *v != 0.0)
                .map(|(v, f)| format!("{} {v:+.3}", f.name()))
                .collect::<Vec<_>>()
                .join(", ");
            let top = if top.is_empty() { "no structure changes".to_string() } else { top };
            format!("{} ({} against {base}): {sum:+.3} in all, largest {top}", c.label, c.config)
        })
        .collect();
    (table, text)
}

const UNEXPLAINED: &str =
    "Not explained by an isolating experiment; the workloads are generated, not the paper's traces.";

/// `journal-fig10`: total bit updates against the reuse limit n (RUn-S2X).
#[derive(Debug)]
pub struct Fig10ReuseLimitTotal;

impl Experiment for Fig10ReuseLimitTotal {
    fn id(&self) -> &'static str {
        "journal-fig10"
    }
    fn title(&self) -> &'static str {
        "Total PCM bit updates against the reuse limit n, RUn-S2X (Figure 10)"
    }
    fn source(&self) -> &'static str {
        "Lee et al., ACM TODAES 2016 (seed 003), Section 6.2, Figure 10"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let points: Vec<(u32, String)> = SWEEP_N.iter().map(|&n| (n, sweep_name(n, 1))).collect();
        let mut fig = SweepFigure::run(self.id(), ctx, &points, BitMetric::Total, "reuse limit n")?;
        let means = fig.means();
        let falls = means.windows(2).all(|w| w[1] <= w[0]);
        // FB's reduction is the smallest of the four apps at every reuse limit.
        let fb_smallest = fig.configs.iter().all(|c| {
            let apps = app_means(ctx, &fig.by_config[c]);
            apps.values().all(|&v| v <= apps[&App::Facebook])
        });
        let by_app = app_means(ctx, &fig.by_config[&sweep_name(20, 1)]);
        fig.outcome.summary = format!(
            "Total bit updates of RUn-S2X ÷ RR-S2X, mean over traces, for n = {SWEEP_N:?}: {}. At n = 20 the \
             apps' means are FB {:.3}, TW {:.3}, KT {:.3}, GM {:.3}.",
            means.iter().map(|m| format!("{m:.3}")).collect::<Vec<_>>().join(", "),
            by_app[&App::Facebook],
            by_app[&App::Twitter],
            by_app[&App::KakaoTalk],
            by_app[&App::Gmail]
        );
        holds_explained(&mut fig.outcome, "journal-fig10-total-falls-with-n", falls, UNEXPLAINED);
        // Why FB's cut is not the smallest at n = 2: which structures' bits move from
        // RR-S2X to RUn-S2X, per app, at n = 2 and at n = 5 (where the claim holds).
        let columns: Vec<Column> = [2, 5]
            .into_iter()
            .flat_map(|n| {
                App::ALL.into_iter().map(move |app| Column {
                    label: format!("{} n = {n}", app.code().to_uppercase()),
                    config: sweep_name(n, 1),
                    apps: vec![app],
                })
            })
            .collect();
        let (table, text) = contributions(
            "Measured transactions: (RUn-S2X − RR-S2X) bit updates per structure ÷ RR-S2X's total, per app",
            &fig.runs,
            ctx,
            "RR-S2X",
            &columns,
        );
        fig.outcome.tables.push(table);
        // One factor more: a 4 MB journal area, where garbage collection runs less.
        let params = DeviceParams { journal_bytes: 4 << 20, ..DeviceParams::PAPER };
        let big = runs_with(self.id(), ctx, &[Some("RR-S2X"), Some("RU2-S2X")], &App::model, &params)?;
        let columns: Vec<Column> = App::ALL
            .into_iter()
            .map(|app| Column {
                label: format!("{} n = 2, 4 MB", app.code().to_uppercase()),
                config: sweep_name(2, 1),
                apps: vec![app],
            })
            .collect();
        let (big_table, big_text) = contributions(
            "Measured transactions, 4 MB journal area: (RU2-S2X − RR-S2X) bit updates per structure ÷ RR-S2X's \
             total, per app",
            &big,
            ctx,
            "RR-S2X",
            &columns,
        );
        fig.outcome.tables.push(big_table);
        let gc = |runs: &Runs| {
            traces(ctx)
                .into_iter()
                .map(|(a, l)| {
                    let runs_of = |c: &str| runs[&(c.to_string(), a, l)].stats.gc_runs;
                    format!("{} {}/{}", trace(a, l), runs_of("RR-S2X"), runs_of(&sweep_name(2, 1)))
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let text: Vec<String> = text.into_iter().chain(big_text).collect();
        let (copy_table, copy_note) = copies_at_n2(self.id(), ctx, &fig.runs, &big)?;
        fig.outcome.tables.push(copy_table);
        let gc_note =
            format!("GC runs of RR-S2X/RU2-S2X, 2 MB journal area: {}; 4 MB: {}. {copy_note}", gc(&fig.runs), gc(&big));
        let note = format!(
            "{gc_note} Isolating split, RR-S2X → RUn-S2X with the reuse policy the one factor changed (measured \
             transactions only; a column sums to its total ÷ RR-S2X − 1, so a more negative sum is a larger cut): {}.",
            text.join("; ")
        );
        fig.outcome.notes.push(note.clone());
        holds_explained(&mut fig.outcome, "journal-fig10-fb-smallest-cut", fb_smallest, &note);
        // Longer traces: measurable only when lengths 1 and 4 both run (paper scale).
        let ts = traces(ctx);
        let at = |app: App, length: u32| ts.iter().position(|&t| t == (app, length));
        let ru20 = &fig.by_config[&sweep_name(20, 1)];
        let longer: Option<Vec<(App, f64, f64)>> = [App::Twitter, App::KakaoTalk, App::Gmail]
            .into_iter()
            .map(|app| Some((app, ru20[at(app, 1)?], ru20[at(app, 4)?])))
            .collect();
        if let Some(longer) = longer {
            let holds = longer.iter().all(|(_, one, four)| four < one);
            let (table, note) = longer_traces(self.id(), ctx)?;
            fig.outcome.tables.push(table);
            fig.outcome.notes.push(note.clone());
            holds_explained(&mut fig.outcome, "journal-fig10-longer-traces-cut-more", holds, &note);
        }
        Ok(fig.outcome)
    }
}

/// Why FB's frame copies at n = 2 cost less than the other apps': per trace, the copies
/// RU2-S2X makes, what each costs, and the header copies the per-file journal counts
/// predict. A DB file's header frame is allocated by its first journal (the setup), reused
/// by the next n and copied by the one after, so with no garbage collection its header
/// copies are ⌊t/(n+1)⌋ for t measured transactions. Returns the table and a note.
fn copies_at_n2(id: &str, ctx: &RunContext, small: &Runs, big: &Runs) -> Result<(Table, String), LabError> {
    let config = sweep_name(2, 1);
    let mut table = Table::new(
        "RU2-S2X frame copies per trace (measured transactions; 2 MB unless marked)",
        &[
            "trace",
            "DB files",
            "transactions",
            "files with ≤ 2 transactions",
            "header copies predicted ⌊t/3⌋, no GC",
            "header copies, 4 MB",
            "header copies",
            "data copies, 4 MB",
            "data copies",
            "copies per transaction",
            "bits per header copy",
            "bits per data copy",
            "portions pointed at per data copy",
            "copy bits ÷ RR-S2X total",
        ],
    );
    let mut per_app: BTreeMap<App, (u64, u64, u64, u64, u64)> = BTreeMap::new();
    for (app, length) in traces(ctx) {
        let workload = generate(app, length, ctx.seed).map_err(failed(id))?;
        let mut per_file = vec![0u64; workload.db_files.len()];
        for (db, _) in &workload.transactions {
            per_file[*db] += 1;
        }
        let predicted: u64 = per_file.iter().map(|t| t / 3).sum();
        let few = per_file.iter().filter(|&&t| t <= 2).count();
        let key = (config.clone(), app, length);
        let (c, c4) = (small[&key].stats.copies, big[&key].stats.copies);
        let rr = &small[&("RR-S2X".to_string(), app, length)];
        let rr_bits: u64 = rr.transactions_pcm_by_field.iter().map(|f| f.bits_written).sum();
        let copies = c.header_frames + c.data_frames;
        let per = |bits: u64, n: u64| bits as f64 / n.max(1) as f64;
        table.row(vec![
            trace(app, length).into(),
            (per_file.len() as i64).into(),
            (workload.transactions.len() as i64).into(),
            (few as i64).into(),
            (predicted as i64).into(),
            (c4.header_frames as i64).into(),
            (c.header_frames as i64).into(),
            (c4.data_frames as i64).into(),
            (c.data_frames as i64).into(),
            per(copies, workload.transactions.len() as u64).into(),
            per(c.header_bits, c.header_frames).into(),
            per(c.data_bits, c.data_frames).into(),
            per(c.data_portions, c.data_frames).into(),
            per(c.header_bits + c.data_bits, rr_bits).into(),
        ]);
        let e = per_app.entry(app).or_default();
        e.0 += copies;
        e.1 += workload.transactions.len() as u64;
        e.2 += c.header_bits + c.data_bits;
        e.3 += rr_bits;
        e.4 += u64::from(predicted == c4.header_frames);
    }
    let apps = per_app
        .iter()
        .map(|(app, (copies, txs, bits, rr, _))| {
            format!(
                "{} {:.2} copies per transaction at {:.0} bits each, {:.3} of RR-S2X's bits",
                app.code().to_uppercase(),
                *copies as f64 / (*txs).max(1) as f64,
                *bits as f64 / (*copies).max(1) as f64,
                *bits as f64 / (*rr).max(1) as f64
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let matched: u64 = per_app.values().map(|v| v.4).sum();
    let note = format!(
        "Why FB's frame copies at n = 2 cost less (frame-copy table, 2 MB, summed over traces): {apps}. FB makes \
         the fewest copies per transaction: its transactions are spread over 13–16 DB files, and a file's header \
         frame is copied once per n + 1 = 3 of its measured journals, so a file with 2 or fewer never reaches \
         the limit. The per-file count ⌊t/3⌋ equals the measured header copies in the 4 MB area on {matched} of \
         {} traces. In 2 MB, garbage collection frees reuse-state frames and resets their counts, which removes \
         copies (header copies, 4 MB against 2 MB).",
        traces(ctx).len()
    );
    Ok((table, note))
}

/// Why longer traces cut less: RU20-S2X against RR-S2X on the TW, KT and GM traces of
/// every length, in the paper's 2 MB journal area and in 4 MB, where garbage collection
/// runs less. Returns the table and a note of what it shows.
fn longer_traces(id: &str, ctx: &RunContext) -> Result<(Table, String), LabError> {
    let configs = [Some("RR-S2X"), Some("RU20-S2X")];
    let areas = [2u64, 4];
    let mut by_area = Vec::new();
    for mb in areas {
        let params = DeviceParams { journal_bytes: mb << 20, ..DeviceParams::PAPER };
        by_area.push(runs_with(id, ctx, &configs, &App::model, &params)?);
    }
    let mut table = Table::new(
        "RU20-S2X against RR-S2X by trace length and journal area (page records: 1 KB images)",
        &["trace", "area, MB", "total ÷ RR-S2X", "GC runs", "page records over own portion", "in fresh portions"],
    );
    let records = |r: &WorkloadRun, f: Field| (r.transactions_pcm_by_field[f.index()].lines_written / 16) as i64;
    let mut at_four = Vec::new();
    for app in [App::Twitter, App::KakaoTalk, App::Gmail] {
        for length in lengths(ctx) {
            for (mb, runs) in areas.iter().zip(&by_area) {
                let (rr, ru) = (&runs[&("RR-S2X".into(), app, length)], &runs[&("RU20-S2X".into(), app, length)]);
                let ratio = ru.stats.total_bit_updates as f64 / rr.stats.total_bit_updates.max(1) as f64;
                table.row(vec![
                    trace(app, length).into(),
                    (*mb as i64).into(),
                    ratio.into(),
                    (ru.stats.gc_runs as i64).into(),
                    records(ru, Field::PageImageReused).into(),
                    records(ru, Field::PageImageFresh).into(),
                ]);
                if length == 1 || length == 4 {
                    at_four.push(format!(
                        "{}, {mb} MB: {ratio:.3}, {} GC runs, {} fresh records",
                        trace(app, length),
                        ru.stats.gc_runs,
                        records(ru, Field::PageImageFresh)
                    ));
                }
            }
        }
    }
    let note = format!(
        "Measured, RU20-S2X total ÷ RR-S2X with GC runs and page records written into fresh portions: {}. \
         Garbage collection frees reuse-state frames, whose pages are then journaled again into fresh portions.",
        at_four.join("; ")
    );
    Ok((table, note))
}

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

fn fmt3(v: f64) -> String {
    format!("{v:.3}")
}

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

/// A note naming, per trace, the hottest cell's field and programs under each of
/// `configs` and under RR-S2X.
fn hottest_note(ctx: &RunContext, runs: &Runs, configs: &[&str]) -> String {
    let mut all: Vec<&str> = configs.to_vec();
    all.push("RR-S2X");
    let per_trace = traces(ctx)
        .into_iter()
        .map(|(app, length)| {
            let cells = all
                .iter()
                .map(|c| {
                    let r = &runs[&(c.to_string(), app, length)];
                    format!("{c} {} ({})", r.stats.max_bit_updates, r.hottest_field)
                })
                .collect::<Vec<_>>()
                .join(", ");
            format!("{}: {cells}", trace(app, length))
        })
        .collect::<Vec<_>>()
        .join("; ");
    format!("Measured hottest cells, programs and field: {per_trace}.")
}

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

/// `journal-fig16`: total against maximum bit updates over reuse limits n and header
/// copies m, and the Pareto front.
#[derive(Debug)]
pub struct Fig16Sweep;

impl Experiment for Fig16Sweep {
    fn id(&self) -> &'static str {
        "journal-fig16"
    }
    fn title(&self) -> &'static str {
        "Total against maximum bit updates over reuse limits and header copies (Figure 16)"
    }
    fn source(&self) -> &'static str {
        "Lee et al., ACM TODAES 2016 (seed 003), Section 6.2, Figure 16"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let names: Vec<String> = SWEEP_N.iter().flat_map(|&n| SWEEP_M.iter().map(move |&m| sweep_name(n, m))).collect();
        let mut configs: Vec<Option<&str>> = names.iter().map(|c| Some(c.as_str())).collect();
        configs.push(Some("RR-S2X"));
        let runs = runs(self.id(), ctx, &configs)?;
        let mut all_names: Vec<&str> = names.iter().map(String::as_str).collect();
        all_names.push("RR-S2X");
        let (_, total_by) = normalised("total", &runs, ctx, &all_names, "RR-S2X", |r| BitMetric::Total.of(r));
        let (_, max_by) = normalised("max", &runs, ctx, &all_names, "RR-S2X", |r| BitMetric::Max.of(r));
        // Figure 16 plots geometric means over the traces.
        let points: Vec<(f64, f64)> =
            names.iter().map(|c| (geometric_mean(&max_by[c]), geometric_mean(&total_by[c]))).collect();
        let point = |n: u32, m: u32| {
            let name = sweep_name(n, m);
            points[names.iter().position(|c| *c == name).expect("in the sweep")]
        };
        let front = pareto_front(&points);
        let mut table = Table::new(
            "Figure 16: geometric means over traces, ÷ RR-S2X",
            &["config", "max bit updates", "total bit updates", "on the Pareto front"],
        );
        for (i, c) in names.iter().enumerate() {
            table.row(vec![
                c.clone().into(),
                points[i].0.into(),
                points[i].1.into(),
                if front.contains(&i) { "yes" } else { "" }.into(),
            ]);
        }
        let mut plot = Plot::new("Total vs maximum bit updates (÷ RR-S2X)", "maximum bit updates", "total bit updates");
        for &n in &SWEEP_N {
            plot.series(format!("RU{n}, m = 1..128"), SWEEP_M.iter().map(|&m| point(n, m)).collect());
        }
        plot.series("Pareto front", front.iter().map(|&i| points[i]).collect());
        // The best total at a maximum no higher than RR-S2X's, as the paper picks.
        let within = names
            .iter()
            .enumerate()
            .filter(|(i, _)| points[*i].0 <= 1.0)
            .min_by(|a, b| points[a.0].1.total_cmp(&points[b.0].1));
        let best = within.map_or_else(
            || "none".to_string(),
            |(i, c)| format!("{c} (total {:.3}, max {:.3})", points[i].1, points[i].0),
        );
        let paper_pick_is_best = within.is_some_and(|(_, c)| c == "RU20-S2X-WH64");
        // More reuse: from n = 2 to n = 50 at m = 64, total falls and maximum rises.
        let (low_n, high_n) = (point(SWEEP_N[0], 64), point(SWEEP_N[SWEEP_N.len() - 1], 64));
        let n_trades = high_n.1 < low_n.1 && high_n.0 > low_n.0;
        // More header copies: at every n, m = 64 is below m = 1 in both.
        let m_lowers_both = SWEEP_N.iter().all(|&n| {
            let (one, many) = (point(n, 1), point(n, 64));
            many.0 < one.0 && many.1 < one.1
        });
        let mut outcome = Outcome {
            summary: format!(
                "{} configurations RUn-S2X-WHm (n in {SWEEP_N:?}, m in {SWEEP_M:?}) on every trace. The best total \
                 bit updates at a maximum no higher than RR-S2X's: {best}; the paper picks RU20-S2X-WH64. The \
                 Pareto front of total against maximum has {} configurations. At m = 64, RU{}: total {:.3}, max \
                 {:.3}; RU{}: total {:.3}, max {:.3}. The per-trace values are in journal-fig10, -fig11, -fig14 \
                 and -fig15.",
                names.len(),
                front.len(),
                SWEEP_N[0],
                low_n.1,
                low_n.0,
                SWEEP_N[SWEEP_N.len() - 1],
                high_n.1,
                high_n.0
            ),
            config: config_json(ctx, &all_names),
            tables: vec![table],
            plots: vec![plot],
            notes: vec![WORKLOAD_NOTE.into()],
            ..Default::default()
        };
        // Which structures' bits move when m = 1 becomes m = 64 at each n (and m = 4 at
        // n = 20), with n held: the total side of both claims that differ.
        let all_apps = App::ALL.to_vec();
        let mut columns: Vec<Column> = SWEEP_N
            .iter()
            .map(|&n| Column {
                label: format!("RU{n}: m = 1 → 64"), config: sweep_name(n, 64), apps: all_apps.clone()
            })
            .collect();
        columns.push(Column { label: "RU20: m = 1 → 4".into(), config: sweep_name(20, 4), apps: all_apps.clone() });
        let per_n = |c: &Column| SWEEP_N.iter().copied().find(|&n| c.config.starts_with(&format!("RU{n}-")));
        let mut texts = Vec::new();
        for c in &columns {
            let base = sweep_name(per_n(c).expect("a sweep config"), 1);
            let (table, text) = contributions(
                &format!("Measured transactions: ({} − {base}) bit updates per structure ÷ RR-S2X's total", c.config),
                &runs,
                ctx,
                &base,
                std::slice::from_ref(c),
            );
            outcome.tables.push(table);
            texts.extend(text);
        }
        // The maximum side: the hottest cell's programs and structure per trace.
        let hot_configs =
            [sweep_name(2, 1), sweep_name(2, 64), sweep_name(20, 1), sweep_name(20, 4), sweep_name(20, 64)];
        let mut headers = vec!["config".to_string()];
        headers.extend(traces(ctx).into_iter().map(|(a, l)| trace(a, l)));
        let mut hot = Table::new(
            "Hottest cell per trace: programs (structure)",
            &headers.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        for c in hot_configs.iter().map(String::as_str).chain(["RR-S2X"]) {
            let mut row = vec![Cell::from(c)];
            row.extend(traces(ctx).into_iter().map(|(a, l)| {
                let r = &runs[&(c.to_string(), a, l)];
                Cell::from(format!("{} ({})", r.stats.max_bit_updates, r.hottest_field))
            }));
            hot.row(row);
        }
        outcome.tables.push(hot);
        let note = format!(
            "Isolating splits, m changed with n held (measured transactions only; a column sums to the change of \
             total ÷ RR-S2X, so a positive sum means more header copies raised the total): {}. The maxima and \
             their structures are in the hottest-cell table.",
            texts.join("; ")
        );
        outcome.notes.push(note.clone());
        holds_explained(&mut outcome, "journal-fig16-n-trades-total-for-max", n_trades, UNEXPLAINED);
        holds_explained(&mut outcome, "journal-fig16-m-lowers-both", m_lowers_both, &note);
        holds_explained(&mut outcome, "journal-fig16-ru20-wh64-best-within-max", paper_pick_is_best, &note);
        Ok(outcome)
    }
}

/// `journal-fig17`: incremental garbage collection against the baseline.
#[derive(Debug)]
pub struct Fig17IncrementalGc;

impl Experiment for Fig17IncrementalGc {
    fn id(&self) -> &'static str {
        "journal-fig17"
    }
    fn title(&self) -> &'static str {
        "Incremental garbage collection (Figure 17)"
    }
    fn source(&self) -> &'static str {
        "Lee et al., ACM TODAES 2016 (seed 003), Section 6.2, Figure 17"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let names = ["RR-S2X", "RU2-S2X-WH4", "RU2-S2X-WH4-INV25", "RU20-S2X-WH64", "RU20-S2X-WH64-INV25"];
        let runs = runs(self.id(), ctx, &names.map(Some))?;
        let (total, total_by) =
            normalised("Total bit updates ÷ RR-S2X", &runs, ctx, &names, "RR-S2X", |r| BitMetric::Total.of(r));
        let (max, max_by) =
            normalised("Maximum bit updates ÷ RR-S2X", &runs, ctx, &names, "RR-S2X", |r| BitMetric::Max.of(r));
        let mut gc = Table::new(
            "GC runs and frame copies",
            &[
                "config",
                "trace",
                "GC runs",
                "frame copies",
                "copies of frames kept in the reuse state through a GC run",
                "page records in fresh portions",
            ],
        );
        // Summed over the traces where either RU2 configuration collects garbage, per
        // configuration: (GC runs, copies, copies of kept frames).
        let collects = |app: App, length: u32| {
            ["RU2-S2X-WH4", "RU2-S2X-WH4-INV25"].iter().any(|c| runs[&(c.to_string(), app, length)].stats.gc_runs > 0)
        };
        let mut sums: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
        for name in names {
            for (app, length) in traces(ctx) {
                let r = &runs[&(name.to_string(), app, length)];
                let fresh = r.transactions_pcm_by_field[Field::PageImageFresh.index()].lines_written / 16;
                gc.row(vec![
                    name.into(),
                    trace(app, length).into(),
                    (r.stats.gc_runs as i64).into(),
                    (r.stats.frame_copies as i64).into(),
                    (r.stats.copies.kept_through_gc as i64).into(),
                    (fresh as i64).into(),
                ]);
                if !collects(app, length) {
                    continue;
                }
                let e = sums.entry(name).or_default();
                e.0 += r.stats.gc_runs;
                e.1 += r.stats.frame_copies;
                e.2 += r.stats.copies.kept_through_gc;
            }
        }
        let point = |c: &str| (mean(&max_by[c]), mean(&total_by[c]));
        let mut plot = Plot::new(
            "Total vs maximum bit updates, baseline and incremental GC (÷ RR-S2X, mean over traces)",
            "maximum bit updates",
            "total bit updates",
        );
        for (base, inv) in [("RU2-S2X-WH4", "RU2-S2X-WH4-INV25"), ("RU20-S2X-WH64", "RU20-S2X-WH64-INV25")] {
            plot.series(format!("{base}: baseline → INV25"), vec![point(base), point(inv)]);
        }
        let (small, small_inv) = (point("RU2-S2X-WH4"), point("RU2-S2X-WH4-INV25"));
        let (large, large_inv) = (point("RU20-S2X-WH64"), point("RU20-S2X-WH64-INV25"));
        let mut outcome = Outcome {
            summary: format!(
                "Baseline GC frees every reuse-state frame when no frame is free; INV25 frees the oldest 25%. Means \
                 over traces, ÷ RR-S2X (total, max): RU2-S2X-WH4 ({:.3}, {:.3}) → INV25 ({:.3}, {:.3}); \
                 RU20-S2X-WH64 ({:.3}, {:.3}) → INV25 ({:.3}, {:.3}).",
                small.1, small.0, small_inv.1, small_inv.0, large.1, large.0, large_inv.1, large_inv.0
            ),
            config: config_json(ctx, &names),
            tables: vec![total, max, gc],
            plots: vec![plot],
            notes: vec![WORKLOAD_NOTE.into()],
            ..Default::default()
        };
        // Which structures' bits move from baseline GC to INV25 at n = 2, per app.
        let columns: Vec<Column> = App::ALL
            .into_iter()
            .map(|app| Column { label: app.code().to_uppercase(), config: "RU2-S2X-WH4-INV25".into(), apps: vec![app] })
            .collect();
        let (table, text) = contributions(
            "Measured transactions: (RU2-S2X-WH4-INV25 − RU2-S2X-WH4) bit updates per structure ÷ RR-S2X's total, \
             per app",
            &runs,
            ctx,
            "RU2-S2X-WH4",
            &columns,
        );
        outcome.tables.push(table);
        let with_gc = traces(ctx)
            .into_iter()
            .filter(|(a, l)| runs[&("RU2-S2X-WH4".to_string(), *a, *l)].stats.gc_runs > 0)
            .map(|(a, l)| trace(a, l))
            .collect::<Vec<_>>();
        let sum = |c: &str| sums.get(c).copied().unwrap_or_default();
        let (base, inv) = (sum("RU2-S2X-WH4"), sum("RU2-S2X-WH4-INV25"));
        let note = format!(
            "Isolating split, the GC policy the one factor changed at RU2-S2X-WH4 (measured transactions only; a \
             column sums to the app's change of total ÷ RR-S2X): {}. Baseline GC runs on {} of {} traces ({}); \
             the split measures no change on the others. Why INV25 copies more frames (GC table, summed over the \
             traces where either collects): baseline GC frees every reuse-state frame, so after a run each DB \
             file's next journal starts in newly allocated frames whose reuse count is 0, and no frame is kept in \
             the reuse state through a run ({} GC runs, {} copies, {} of kept frames). INV25 frees the 25% \
             released longest ago and keeps the others in the reuse state with their reuse counts, which go on \
             to the limit of 2: {} GC runs, {} copies, {} of them of frames kept in the reuse state through a \
             GC run.",
            text.join("; "),
            with_gc.len(),
            traces(ctx).len(),
            if with_gc.is_empty() { "none".to_string() } else { with_gc.join(", ") },
            base.0,
            base.1,
            base.2,
            inv.0,
            inv.1,
            inv.2
        );
        outcome.notes.push(note.clone());
        holds_explained(
            &mut outcome,
            "journal-fig17-small-limit-improves-both",
            small_inv.1 < small.1 && small_inv.0 < small.0,
            &note,
        );
        holds_explained(
            &mut outcome,
            "journal-fig17-large-limit-trades",
            large_inv.1 < large.1 && large_inv.0 > large.0,
            UNEXPLAINED,
        );
        Ok(outcome)
    }
}

/// `journal-recovery`: the time to rebuild the journal's DRAM metadata from PCM after a
/// power cut, against the number of active journals.
#[derive(Debug)]
pub struct Recovery;

/// Cuts the power with `journals` DB files each inside an uncommitted transaction that
/// has journaled `rows` inserts, and recovers; returns (hot journals, recovery ns).
fn recover_with_active(journals: usize, rows: u32, seed: u64) -> Result<(u64, u64), nvmdb_journal::JournalError> {
    let config = JournalConfig::RU20_S2X_WH64;
    let sim = nvmdb_journal::Simulation::new(config, &DeviceParams::PAPER, seed)?;
    {
        let names: Vec<String> = (0..journals).map(|i| format!("db{i}.db")).collect();
        let dbs = names.iter().map(|n| sim.open(n)).collect::<Result<Vec<_>, _>>()?;
        for db in &dbs {
            db.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")?;
            db.execute_batch(&format!(
                "BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows}) \
                 INSERT INTO t SELECT i, printf('%0200d', i) FROM n; COMMIT;"
            ))?;
        }
        // Each connection modifies its pages, journaling them, and does not commit.
        for db in &dbs {
            db.execute_batch("BEGIN; UPDATE t SET body = body || 'x';")?;
        }
        sim.cut_power_at(sim.stats().device_writes + 1);
    }
    let devices = sim.into_devices();
    let (_, recovery) = nvmdb_journal::Simulation::recover(config, devices, seed)?;
    Ok((recovery.hot_journals, recovery.time_ns))
}

impl Experiment for Recovery {
    fn id(&self) -> &'static str {
        "journal-recovery"
    }
    fn title(&self) -> &'static str {
        "Recovery of the journal's DRAM metadata after a power cut"
    }
    fn source(&self) -> &'static str {
        "Lee et al., ACM TODAES 2016 (seed 003), Section 5.2 (7.8 ms with three active journals)"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let mut table = Table::new(
            "Simulated PCM time of rebuilding the DRAM metadata, RU20-S2X-WH64",
            &["active journals", "hot journals found", "recovery time, µs"],
        );
        let recover = |journals: usize, rows: u32| {
            let (hot, ns) = recover_with_active(journals, rows, ctx.seed).map_err(failed(self.id()))?;
            if hot != journals as u64 {
                return Err(LabError::Failed {
                    id: self.id().into(),
                    message: format!("{journals} active journals of {rows} rows, {hot} found hot"),
                });
            }
            Ok(ns)
        };
        let mut at_three = 0.0;
        for journals in [1usize, 3, 6, 12] {
            let ns = recover(journals, ROWS)?;
            if journals == 3 {
                at_three = ns as f64 / 1e6;
            }
            table.row(vec![(journals as i64).into(), (journals as i64).into(), (ns as f64 / 1000.0).into()]);
        }
        // The worst case the paper bounds: three journals as large as the journal's PCM
        // holds (at 2,500 rows each they no longer fit), and, above any run, every
        // line of the journal's PCM read as an access of its own.
        let largest_ms = recover(3, LARGEST_ROWS)? as f64 / 1e6;
        let params = DeviceParams::PAPER;
        let timing = params.pcm_timing;
        let lines = params.journal_bytes / timing.read_chunk_bytes;
        let every_line_ms = (lines * (timing.initial_ns + timing.read_ns_per_chunk)) as f64 / 1e6;
        let mut headline = Table::new("Beside the paper", &["claim", "paper", "ours"]);
        headline.row(vec![
            "recovery with 3 active journals, ms".into(),
            stated("journal-recovery-three"),
            at_three.into(),
        ]);
        headline.row(vec![
            format!("the same, {LARGEST_ROWS} rows per DB file (2,500 no longer fit), ms").into(),
            Cell::Missing,
            largest_ms.into(),
        ]);
        headline.row(vec![
            format!("every line of the {} MB journal PCM read as an access of its own, ms", params.journal_bytes >> 20)
                .into(),
            Cell::Missing,
            every_line_ms.into(),
        ]);
        let bound = format!(
            "The verdict follows from the presets: the rebuild reads descriptors of the {} MB journal PCM, and \
             reading every one of its {lines} lines as an access of its own ({} ns + {} ns each) takes {every_line_ms:.2} \
             ms, below the paper's 7.8 ms, so no run can exceed it; three journals of {LARGEST_ROWS} rows per DB file \
             (2,500 no longer fit) rebuild in {largest_ms:.3} ms. Ours counts PCM time only: the paper's 7.8 ms is the \
             whole rebuild on its board, CPU included.",
            params.journal_bytes >> 20,
            timing.initial_ns,
            timing.read_ns_per_chunk,
        );
        let mut outcome = Outcome {
            summary: format!(
                "Each DB file holds {ROWS} rows and is inside an uncommitted transaction that rewrote all of them when \
                 the power is cut. Recovery reads the 64 header-frame descriptors, then each hot journal's header \
                 and descriptors; with three active journals it takes {at_three:.3} ms of simulated PCM time \
                 (paper: 7.8 ms on its board, worst case), {largest_ms:.3} ms with three journals of {LARGEST_ROWS} rows \
                 (2,500 no longer fit)."
            ),
            config: json!({"seed": ctx.seed, "config": "RU20-S2X-WH64", "rows": ROWS, "journals": [1, 3, 6, 12],
                           "largest_rows": LARGEST_ROWS}),
            tables: vec![headline, table],
            notes: vec![
                "Ours is PCM read time only (the board preset's 133 ns per access plus 40 ns per 64 B line), with \
                 no CPU time; the paper measured the whole rebuild on its board."
                    .into(),
                bound.clone(),
            ],
            ..Default::default()
        };
        crate::papers::measure_check(&mut outcome, "journal-recovery-three", at_three, &bound);
        Ok(outcome)
    }
}

/// Rows per DB file of the recovery runs.
const ROWS: u32 = 200;

/// Rows per DB file of three journals the 2 MB journal PCM holds (measured with seed 1: at
/// 2,500 rows each the run fails with "database or disk is full").
const LARGEST_ROWS: u32 = 2_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crossing_is_bracketed_on_the_grid_and_narrowed_by_bisection() {
        // A falling value that reaches 75 at x = 37.5: integer bisection ends at 37 / 38.
        let f = |x: f64| Ok::<f64, ()>(150.0 - 2.0 * x);
        let grid: Vec<(f64, f64)> = [1.0, 10.0, 100.0].iter().map(|&x| (x, f(x).unwrap())).collect();
        let integer = |a: f64, b: f64| {
            let (lo, hi) = (a.min(b), a.max(b));
            (hi - lo > 1.0).then(|| ((lo + hi) / 2.0).floor())
        };
        let mut calls = 0;
        let found = crossing(&grid, 75.0, integer, |x| {
            calls += 1;
            f(x)
        })
        .unwrap()
        .unwrap();
        assert_eq!((found.holds.0, found.fails.0), (37.0, 38.0));
        assert!(calls <= 7, "{calls} evaluations for a bracket of 90");
        // A rising value, and none reaching the target.
        let rising: Vec<(f64, f64)> = grid.iter().map(|&(x, v)| (x, 150.0 - v)).collect();
        let found = crossing(&rising, 75.0, integer, |x| Ok::<f64, ()>(2.0 * x)).unwrap().unwrap();
        assert_eq!((found.holds.0, found.fails.0), (38.0, 37.0));
        assert_eq!(crossing(&grid, 200.0, integer, f).unwrap(), None);
    }

    #[test]
    fn spread_gives_the_smallest_median_and_largest() {
        assert_eq!(spread(&[3.0, 1.0, 2.0]), (1.0, 2.0, 3.0));
        assert_eq!(spread(&[4.0, 1.0, 2.0, 3.0]), (1.0, 2.5, 4.0));
        assert_eq!(spread(&[]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn the_pareto_front_keeps_only_undominated_points() {
        let points = [(1.0, 5.0), (2.0, 3.0), (2.5, 4.0), (3.0, 1.0), (0.5, 6.0), (3.0, 2.0)];
        assert_eq!(pareto_front(&points), vec![4, 0, 1, 3]);
        assert!(pareto_front(&[]).is_empty());
    }
}
