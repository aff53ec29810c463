//! `journal-workload-sensitivity`: the headline cut in total bit updates (RU20-S2X-WH64
//! against RR-S2X; the paper's 75.2%) against the workload's hot-set size and update
//! mix, and where in them the paper's value would hold.

use std::collections::BTreeMap;

use nvmdb_journal::{App, AppModel, DeviceParams, Field, WorkloadRun};
use nvmdb_lab::{Cell, Experiment, LabError, Outcome, Plot, Relation, RunContext, Table, WouldHoldWhen};

use super::{config_json, crossing, mean, normalised, reduction_percent, runs_with, traces, Bracket, WORKLOAD_NOTE};
use crate::papers::stated_value;

/// `journal-workload-sensitivity`: the cut in total bit updates against the workload.
#[derive(Debug)]
pub struct WorkloadSensitivity;

/// The claim whose value the experiment locates.
const CLAIM: &str = "journal-fig9-ru20-total-cut";

/// Hot sets tried, messages: the flag updates pick one of each DB file's newest `h`.
const HOT_ROWS: [u32; 8] = [1, 2, 4, 10, 40, 160, 640, 2560];

/// Update shares of the plotted mixes beside each app's own, % of transactions.
const MIX_SERIES: [u32; 3] = [0, 50, 100];

/// Update shares tried at the default hot set, % of transactions.
const UPDATE_SHARES: [u32; 11] = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];

/// A workload: the hot set, and the share of transactions updating rows in place (`None`:
/// each app's own mix).
type Knobs = (u32, Option<u32>);

/// `app`'s model at `knobs`. An update share `u` keeps the app's ratio of flag to
/// counter updates among the updates; the other `100 - u`% insert.
fn model(app: App, (hot_rows, update_percent): Knobs) -> AppModel {
    let base = app.model();
    let (insert_percent, flag_percent) = match update_percent {
        None => (base.insert_percent, base.flag_percent),
        Some(u) => {
            let updates = 100 - base.insert_percent;
            (100 - u, u * base.flag_percent / updates.max(1))
        }
    };
    AppModel { hot_rows, insert_percent, flag_percent, ..base }
}

/// What one workload point measured, means over traces.
#[derive(Debug, Clone)]
struct Point {
    /// RU20-S2X-WH64's cut of RR-S2X's total bit updates, % (the claim's measure).
    cut: f64,
    /// The same per app, in [`App::ALL`] order.
    app_cuts: Vec<f64>,
    /// Per app, the share of RU20-S2X-WH64's page images in the measured transactions
    /// written to fresh portions rather than over the same page's old image, %.
    app_fresh: Vec<f64>,
    /// DB page writes per distinct page (Figure 5's statistic).
    writes_per_page: f64,
    /// Page overwrites changing at most 64 bytes, % (Figure 6's).
    small_percent: f64,
}

/// The points measured so far, so that each workload runs once.
struct Points<'a> {
    id: &'a str,
    ctx: &'a RunContext,
    done: BTreeMap<Knobs, Point>,
}

impl Points<'_> {
    fn get(&mut self, knobs: Knobs) -> Result<Point, LabError> {
        if let Some(p) = self.done.get(&knobs) {
            return Ok(p.clone());
        }
        let configs = [Some("RR-S2X"), Some("RU20-S2X-WH64")];
        let runs = runs_with(self.id, self.ctx, &configs, &|app| model(app, knobs), &DeviceParams::PAPER)?;
        let total = |r: &WorkloadRun| r.stats.total_bit_updates as f64;
        let (_, by) = normalised("", &runs, self.ctx, &["RU20-S2X-WH64"], "RR-S2X", total);
        let ratios = &by["RU20-S2X-WH64"];
        let traces = traces(self.ctx);
        let app_cuts = App::ALL
            .iter()
            .map(|&app| {
                let mine: Vec<f64> =
                    traces.iter().zip(ratios).filter(|((a, _), _)| *a == app).map(|(_, &v)| v).collect();
                reduction_percent(&mine)
            })
            .collect();
        let app_fresh = App::ALL
            .iter()
            .map(|&app| {
                let (fresh, reused) = traces.iter().filter(|(a, _)| *a == app).fold((0, 0), |(f, r), (a, l)| {
                    let by = &runs[&("RU20-S2X-WH64".to_string(), *a, *l)].transactions_pcm_by_field;
                    (
                        f + by[Field::PageImageFresh.index()].lines_written,
                        r + by[Field::PageImageReused.index()].lines_written,
                    )
                });
                100.0 * fresh as f64 / (fresh + reused).max(1) as f64
            })
            .collect();
        let rr = |f: &dyn Fn(&WorkloadRun) -> f64| {
            mean(&traces.iter().map(|(a, l)| f(&runs[&("RR-S2X".to_string(), *a, *l)])).collect::<Vec<_>>())
        };
        let point = Point {
            cut: reduction_percent(ratios),
            app_cuts,
            app_fresh,
            writes_per_page: rr(&|r| r.writes_per_page),
            small_percent: rr(&|r| r.small_overwrite_percent),
        };
        self.done.insert(knobs, point.clone());
        Ok(point)
    }

    /// Where the cut reaches the paper's value as one knob runs over `grid` (the other
    /// fixed by `knobs_at`), narrowed by integer bisection.
    fn locate(&mut self, grid: &[u32], knobs_at: impl Fn(u32) -> Knobs) -> Result<Option<Bracket>, LabError> {
        let values = grid
            .iter()
            .map(|&x| Ok((f64::from(x), self.get(knobs_at(x))?.cut)))
            .collect::<Result<Vec<_>, LabError>>()?;
        let integer = |a: f64, b: f64| {
            let (lo, hi) = (a.min(b), a.max(b));
            (hi - lo > 1.0).then(|| ((lo + hi) / 2.0).floor())
        };
        crossing(&values, stated_value(CLAIM), integer, |x| Ok(self.get(knobs_at(integer_knob(x)))?.cut))
    }
}

/// A knob value from a bisection midpoint (an integer below 2^32 by construction).
fn integer_knob(x: f64) -> u32 {
    #[expect(clippy::cast_possible_truncation, reason = "midpoints of u32 grid values, floored")]
    let knob = x as u32;
    knob
}

/// A "would hold" row: the knob value at the paper's side of the bracket, or "none in
/// range" with the closest cut the grid reached.
fn hold_row(parameter: &str, unit: &str, grid: &[u32], found: Option<Bracket>, closest: (u32, f64)) -> Vec<Cell> {
    let (value, at) = match found {
        Some(b) => (Cell::from(b.holds.0), format!("{:.1}% at {}", b.holds.1, b.holds.0)),
        None => (Cell::from("none in range"), format!("{:.1}% at {}", closest.1, closest.0)),
    };
    vec![parameter.into(), value, unit.into(), format!("{} to {}", grid[0], grid[grid.len() - 1]).into(), at.into()]
}

impl Experiment for WorkloadSensitivity {
    fn id(&self) -> &'static str {
        "journal-workload-sensitivity"
    }
    fn title(&self) -> &'static str {
        "The cut in total bit updates against the workload's hot set and update mix (Figure 16's 75.2%)"
    }
    fn source(&self) -> &'static str {
        "Lee et al., ACM TODAES 2016 (seed 003), Sections 6.2 and 8 (75.2%), on the workload model of Section 6.1"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let target = stated_value(CLAIM);
        let mut points = Points { id: self.id(), ctx, done: BTreeMap::new() };
        let default_hot = AppModel::HOT_ROWS;

        // The hot-set sweep under each mix, and the update-share sweep at the default hot set.
        let mut hot_table = Table::new(
            "RU20-S2X-WH64's cut of RR-S2X's total bit updates, %, against the hot set (mean over traces)",
            &[
                "hot set, messages",
                "each app's own mix",
                "0% updates",
                "50% updates",
                "100% updates",
                "FB (own mix)",
                "TW",
                "KT",
                "GM",
                "writes / page (own mix)",
                "overwrites <= 64 B, %",
            ],
        );
        let mut hot_plot = Plot::new(
            "Cut in total bit updates against the hot set",
            "hot set of the flag updates, messages",
            "cut, %",
        )
        .log2_x();
        let mixes: Vec<Option<u32>> = std::iter::once(None).chain(MIX_SERIES.map(Some)).collect();
        let mut lines: Vec<Vec<(f64, f64)>> = vec![Vec::new(); mixes.len()];
        for hot in HOT_ROWS {
            let own = points.get((hot, None))?;
            let mut row: Vec<Cell> = vec![i64::from(hot).into()];
            for (line, &mix) in lines.iter_mut().zip(&mixes) {
                let cut = points.get((hot, mix))?.cut;
                line.push((f64::from(hot), cut));
                row.push(cut.into());
            }
            row.extend(own.app_cuts.iter().map(|&c| Cell::from(c)));
            row.push(own.writes_per_page.into());
            row.push(own.small_percent.into());
            hot_table.row(row);
        }
        for (line, mix) in lines.into_iter().zip(&mixes) {
            let name = mix.map_or("each app's own mix".to_string(), |u| format!("{u}% updates"));
            hot_plot.series(name, line);
        }
        let mut share_table = Table::new(
            format!(
                "RU20-S2X-WH64's cut of RR-S2X's total bit updates, %, against the share of transactions updating \
                 rows in place (hot set {default_hot}; mean over traces)"
            ),
            &["updates, % of transactions", "cut, %", "FB", "TW", "KT", "GM", "writes / page", "overwrites <= 64 B, %"],
        );
        let mut share_line = Vec::new();
        for u in UPDATE_SHARES {
            let p = points.get((default_hot, Some(u)))?;
            share_line.push((f64::from(u), p.cut));
            let mut row: Vec<Cell> = vec![i64::from(u).into(), p.cut.into()];
            row.extend(p.app_cuts.iter().map(|&c| Cell::from(c)));
            row.push(p.writes_per_page.into());
            row.push(p.small_percent.into());
            share_table.row(row);
        }
        let mut share_plot = Plot::new(
            format!("Cut in total bit updates against the update mix (hot set {default_hot})"),
            "transactions updating rows in place, %",
            "cut, %",
        );
        share_plot.series(format!("hot set {default_hot}"), share_line.clone());

        // Where the paper's value would hold: the crossing on each grid, narrowed by bisection.
        let hot_found = points.locate(&HOT_ROWS, |h| (h, None))?;
        let share_found = points.locate(&UPDATE_SHARES, |u| (default_hot, Some(u)))?;
        let best =
            |grid: &[u32], knobs_at: &dyn Fn(u32) -> Knobs, points: &mut Points| -> Result<(u32, f64), LabError> {
                let mut best = (grid[0], f64::NEG_INFINITY);
                for &x in grid {
                    let cut = points.get(knobs_at(x))?.cut;
                    if cut > best.1 {
                        best = (x, cut);
                    }
                }
                Ok(best)
            };
        let hot_best = best(&HOT_ROWS, &|h| (h, None), &mut points)?;
        let share_best = best(&UPDATE_SHARES, &|u| (default_hot, Some(u)), &mut points)?;
        let mut would_hold = Table::new(
            format!("Where the paper's {target}% cut would hold (found on the grid, narrowed by integer bisection)"),
            &["parameter", "value", "unit", "range tried", "cut there, or the closest in range"],
        );
        would_hold.row(hold_row(
            "hot set of the flag updates (each app's own mix)",
            "messages",
            &HOT_ROWS,
            hot_found,
            hot_best,
        ));
        would_hold.row(hold_row(
            &format!("share of transactions updating rows in place (hot set {default_hot})"),
            "% of transactions",
            &UPDATE_SHARES,
            share_found,
            share_best,
        ));
        for (plot, grid) in [(&mut hot_plot, &HOT_ROWS[..]), (&mut share_plot, &UPDATE_SHARES[..])] {
            let (lo, hi) = (f64::from(grid[0]), f64::from(grid[grid.len() - 1]));
            plot.series(format!("the paper's {target}%"), vec![(lo, target), (hi, target)]);
        }
        for (plot, found) in [(&mut hot_plot, hot_found), (&mut share_plot, share_found)] {
            if let Some(b) = found {
                plot.series(format!("{target}% reached at {}", b.holds.0), vec![b.holds]);
            }
        }

        let default = points.get((default_hot, None))?;
        let small = points.get((HOT_ROWS[0], None))?;
        let others = |p: &Point| mean(&p.app_cuts[1..]);
        let hot_state =
            hot_found.map_or("at no hot set tried".to_string(), |b| format!("at a hot set of {} messages", b.holds.0));
        let share_state = share_found.map_or("at no update share tried".to_string(), |b| {
            format!("with {}% of transactions updating", b.holds.0)
        });
        let summary = format!(
            "RU20-S2X-WH64's cut of RR-S2X's total bit updates (the claim's measure: whole run, mean over traces) \
             on the generated workloads with the flag updates' hot set from {} to {} messages and each app's own \
             update mix: from {:.1}% to {:.1}%; with {} to {}% of transactions updating rows in place (hot set \
             {default_hot}): from {:.1}% to {:.1}%. The default workloads (hot set {default_hot}, each app's mix) \
             cut {:.1}%. The paper's {target}% is reached {hot_state}, and {share_state}.",
            HOT_ROWS[0],
            HOT_ROWS[HOT_ROWS.len() - 1],
            HOT_ROWS.iter().map(|&h| points.done[&(h, None)].cut).fold(f64::INFINITY, f64::min),
            hot_best.1,
            UPDATE_SHARES[0],
            UPDATE_SHARES[UPDATE_SHARES.len() - 1],
            share_line.iter().map(|p| p.1).fold(f64::INFINITY, f64::min),
            share_best.1,
            default.cut,
        );
        let note = format!(
            "Measured by app: at hot set {} (each app's own mix) FB cuts {:.1}% and TW, KT and GM {:.1}% on \
             average ({:.1}% and {:.1}% at the default hot set {default_hot}); the mean over TW, KT and GM alone is \
             {:.1}% at best over the hot sets tried. FB's RU20-S2X-WH64 writes {:.0}% of its page \
             images (measured transactions) to fresh portions, against {:.0}% for the other three ({:.0}% and \
             {:.0}% at hot set {default_hot}); an image over the same page's old one programs only the changed \
             cells, one in a fresh portion many more (journal-fig9 measures both). The knobs: a flag update picks one of its DB file's newest `hot set` \
             messages (each file starts with at least that many); an update share u% makes u% of the transactions \
             update in place (flags and counters in the app's own ratio) and the rest insert 1 to 3 messages.",
            HOT_ROWS[0],
            small.app_cuts[0],
            others(&small),
            default.app_cuts[0],
            others(&default),
            HOT_ROWS.iter().map(|&h| others(&points.done[&(h, None)])).fold(f64::NEG_INFINITY, f64::max),
            small.app_fresh[0],
            mean(&small.app_fresh[1..]),
            default.app_fresh[0],
            mean(&default.app_fresh[1..]),
        );
        let mut outcome = Outcome {
            summary,
            config: serde_json::json!({
                "journal": config_json(ctx, &["RR-S2X", "RU20-S2X-WH64"]),
                "hot_rows": HOT_ROWS,
                "update_shares": UPDATE_SHARES,
                "mix_series": MIX_SERIES,
                "target": target,
            }),
            tables: vec![would_hold, hot_table, share_table],
            plots: vec![hot_plot, share_plot],
            notes: vec![WORKLOAD_NOTE.into(), note],
            ..Default::default()
        };
        // The scorecard's "would hold when": the hot set at the paper's side of the crossing.
        outcome.would_hold_when(
            CLAIM,
            WouldHoldWhen {
                parameter: "hot set of the flag updates (each app's own mix)".into(),
                value: hot_found.map(|b| b.holds.0),
                unit: "messages".into(),
                range_tried: [f64::from(HOT_ROWS[0]), f64::from(HOT_ROWS[HOT_ROWS.len() - 1])],
                relation: Relation::At,
            },
        );
        Ok(outcome)
    }
}
