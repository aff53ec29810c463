//! What the sweep's figures (10, 11, 14, 15, 16 and 17) share: the reuse limits and
//! header copies swept, a figure's runs over them, each field's contribution to the bit
//! updates, and the Pareto front.

use std::collections::BTreeMap;

use nvmdb_journal::{App, Field, WorkloadRun};
use nvmdb_lab::{Cell, LabError, Outcome, Plot, RunContext, Table};

use super::{config_json, mean, normalised, runs, trace, traces, Runs, WORKLOAD_NOTE};

/// Reuse limits and header copies of the sweep (Figures 10, 11, 14, 15 and 16).
pub(super) const SWEEP_N: [u32; 5] = [2, 5, 10, 20, 50];

pub(super) const SWEEP_M: [u32; 6] = [1, 2, 4, 8, 64, 128];

pub(super) fn sweep_name(n: u32, m: u32) -> String {
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
pub(super) enum BitMetric {
    Total,
    Max,
}

impl BitMetric {
    pub(super) fn of(self, r: &WorkloadRun) -> f64 {
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
pub(super) struct SweepFigure {
    pub(super) configs: Vec<String>,
    pub(super) by_config: BTreeMap<String, Vec<f64>>,
    pub(super) runs: Runs,
    pub(super) outcome: Outcome,
}

impl SweepFigure {
    /// Runs `configs` (each with its x value) and RR-S2X, and draws `metric` ÷ RR-S2X
    /// against x, one line per trace and one for the mean.
    pub(super) fn run(
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
    pub(super) fn means(&self) -> Vec<f64> {
        self.configs.iter().map(|c| mean(&self.by_config[c])).collect()
    }
}

/// Per app, the mean of `values` (one per trace, in table order) over its traces.
pub(super) fn app_means(ctx: &RunContext, values: &[f64]) -> BTreeMap<App, f64> {
    let mut out = BTreeMap::new();
    for app in App::ALL {
        let mine: Vec<f64> = traces(ctx).iter().zip(values).filter(|((a, _), _)| *a == app).map(|(_, &v)| v).collect();
        out.insert(app, mean(&mine));
    }
    out
}

/// One column of a [`contributions`] table: its label, the configuration compared with
/// the base, and the apps whose traces are summed.
pub(super) struct Column {
    pub(super) label: String,
    pub(super) config: String,
    pub(super) apps: Vec<App>,
}

/// The isolating split behind a shape claim: per journal structure, the measured
/// transactions' bit updates under a column's configuration minus those under `base`,
/// divided by RR-S2X's total, summed over the column's traces. A column sums to the
/// difference of the two configurations' totals ÷ RR-S2X. Returns the table and, per
/// column, its largest contributions as text.
pub(super) fn contributions(
    title: &str,
    runs: &Runs,
    ctx: &RunContext,
    base: &str,
    columns: &[Column],
) -> (Table, Vec<String>) {
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

pub(super) const UNEXPLAINED: &str =
    "Not explained by an isolating experiment; the workloads are generated, not the paper's traces.";

pub(super) fn fmt3(v: f64) -> String {
    format!("{v:.3}")
}

/// A note naming, per trace, the hottest cell's field and programs under each of
/// `configs` and under RR-S2X.
pub(super) fn hottest_note(ctx: &RunContext, runs: &Runs, configs: &[&str]) -> String {
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
