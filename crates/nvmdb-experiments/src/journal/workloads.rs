//! `journal-workloads`: SQLite's write behaviour on the four generated mobile-app
//! workloads (Figures 5 and 6).

use nvmdb_journal::{generate, AppModel, DeviceParams};
use nvmdb_lab::{Cell, Experiment, LabError, Outcome, RunContext, Table};

use super::{config_json, failed, mean, runs, runs_with, trace, WORKLOAD_NOTE};
use crate::papers::{measure_explained, stated};

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
