//! Seed 003 (Lee et al., ACM TODAES 2016): the SQLite rollback journal in PCM, run with
//! real SQLite through nvmdb-journal's VFS on four generated mobile-app workloads. A
//! module per figure (`workloads` for Figures 5 and 6, `fig9` to `fig19`, the workload
//! `sensitivity`, `recovery`); the runs they share here, and what the sweep's figures
//! share in `sweep`.

mod fig10;
mod fig11;
mod fig13;
mod fig14;
mod fig15;
mod fig16;
mod fig17;
mod fig18;
mod fig19;
mod fig9;
mod recovery;
mod sensitivity;
mod sweep;
mod workloads;

use std::collections::BTreeMap;

use nvmdb_journal::{generate_with, run_workload, App, AppModel, DeviceParams, JournalConfig, WorkloadRun};
use nvmdb_lab::{Cell, Experiment, LabError, RunContext, Table};
use serde_json::json;

use crate::papers::holds_explained;

pub use fig10::Fig10ReuseLimitTotal;
pub use fig11::Fig11HeaderReuseTotal;
pub use fig13::Fig13Max;
pub use fig14::Fig14ReuseLimitMax;
pub use fig15::Fig15HeaderReuseMax;
pub use fig16::Fig16Sweep;
pub use fig17::Fig17IncrementalGc;
pub use fig18::Fig18Energy;
pub use fig19::Fig19Time;
pub use fig9::Fig9Total;
pub use recovery::Recovery;
pub use sensitivity::WorkloadSensitivity;
pub use sweep::pareto_front;
pub use workloads::Workloads;

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

/// The traces run at this scale, in table order.
fn traces(ctx: &RunContext) -> Vec<(App, u32)> {
    App::ALL.iter().flat_map(|&app| lengths(ctx).into_iter().map(move |l| (app, l))).collect()
}

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
