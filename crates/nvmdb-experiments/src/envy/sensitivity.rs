//! `envy-sensitivity`: saturated TPC-A throughput and the lifetime at 10,000 TPS against
//! the flash's erase time and bank count, and the values at which the paper's 30,000 TPS
//! and 10-year lifetime would hold, found by sweep and bisection.

use nvmdb_envy::tpca::{Convergence, Ending, Tpca};
use nvmdb_lab::{AxisScale, Cell, Experiment, Footprint, LabError, Outcome, Plot, RunContext, Scale, Table};
use serde_json::json;

use super::lifetime::years_2gb;
use super::tpca::{convergence, database_bytes, load, tpca_config, Measured, SATURATED_TPS, TPCA_TEMPLATE};
use super::{failed, SOURCE};
use crate::papers::stated_value;

/// The erase times of the sweep, ms: none, then 1 ms to the 28F008SA's 10 s maximum
/// block erase (the preset's 1.6 s is its typical one).
const ERASE_MS: [f64; 7] = [0.0, 1.0, 10.0, 100.0, 400.0, 1600.0, 10_000.0];

/// The range the bisections try, ms: from none to the datasheet's maximum.
const ERASE_RANGE_MS: (f64, f64) = (0.0, 10_000.0);

/// The smallest positive erase time a bisection tries, ms (it halves a log scale).
const ERASE_FLOOR_MS: f64 = 0.01;

/// A bisection on the log of the erase time stops once its bracket's longest erase is
/// within this factor of its shortest.
const BISECTION_RATIO: f64 = 1.25;

/// The runs' convergence: [`convergence`] (windows of 16 cleans) with at most half a
/// turnover at paper scale (64 cleans of the 2 GB array, about 1.3 million transactions)
/// and 4 at quick scale. Every run starts from a copy of one aged database and draws the
/// same transactions, so the points differ only in the flash's timing.
fn rule(scale: Scale) -> Convergence {
    Convergence { max_turnovers: scale.pick(4.0, 0.5), ..convergence(scale) }
}

/// Where a run's flash stands: erase time, banks, banks in parallel.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Flash {
    erase_ms: f64,
    banks: u32,
    parallel: bool,
}

/// One measured point.
#[derive(Debug, Clone, Copy)]
struct Point {
    flash: Flash,
    tps: f64,
    flushed_per_txn: f64,
    cost: f64,
    years: f64,
    ended_by: Ending,
    turnovers: f64,
}

/// A database to copy, and the points run on copies of it.
struct Bench<'a> {
    base: Tpca,
    ctx: &'a RunContext,
    id: &'a str,
    rule: Convergence,
    points: Vec<Point>,
}

impl Bench<'_> {
    /// The saturated run on a copy of the database with `flash`, measured once.
    fn point(&mut self, flash: Flash) -> Result<Point, LabError> {
        if let Some(p) = self.points.iter().find(|p| p.flash == flash) {
            return Ok(*p);
        }
        let mut db = self.base.fork();
        let timing = self.base.with_envy(|e| e.config().flash);
        let erase_ns = (flash.erase_ms * 1e6).round() as u64;
        let timing = nvmdb_device::FlashTiming { erase_ns, ..timing };
        db.with_envy_mut(|e| e.retime(timing, flash.banks, flash.parallel)).map_err(failed(self.id))?;
        // Every point draws the same transactions.
        let m = Measured::of(&mut db, SATURATED_TPS, &self.rule, &mut self.ctx.rng(500), self.id)?;
        let r = &m.run.report;
        let flushed_per_txn = r.flushed_pages_per_s / r.throughput_tps;
        let page_bytes = self.base.with_envy(|e| e.config().page_bytes);
        let point = Point {
            flash,
            tps: r.throughput_tps,
            flushed_per_txn,
            cost: r.cleaning_cost,
            years: years_2gb(page_bytes, flushed_per_txn, r.cleaning_cost),
            ended_by: m.run.ended_by,
            turnovers: m.run.turnovers,
        };
        self.points.push(point);
        Ok(point)
    }

    /// The erase time at which `value` of a point reaches `target` with `banks` banks,
    /// by bisection on the log of the erase time over [`ERASE_RANGE_MS`], assuming
    /// `value` does not rise as the erase time grows (each point measured is in the runs'
    /// table). The bracket starts from the points measured so far with these banks.
    fn boundary(
        &mut self,
        banks: u32,
        parallel: bool,
        target: f64,
        value: fn(&Point) -> f64,
    ) -> Result<Boundary, LabError> {
        let at = |erase_ms| Flash { erase_ms, banks, parallel };
        let (lo, hi) = ERASE_RANGE_MS;
        if value(&self.point(at(lo))?) < target {
            return Ok(Boundary::None);
        }
        // The shortest erase measured that misses the target, else the range's longest.
        let missed = self
            .points
            .iter()
            .filter(|p| p.flash.banks == banks && p.flash.parallel == parallel && value(p) < target)
            .map(|p| p.flash.erase_ms)
            .fold(f64::INFINITY, f64::min);
        let mut bad = if missed.is_finite() {
            missed
        } else if value(&self.point(at(hi))?) >= target {
            return Ok(Boundary::Whole);
        } else {
            hi
        };
        // The longest erase measured below it that meets the target, at least the floor.
        let met = self
            .points
            .iter()
            .filter(|p| p.flash.banks == banks && p.flash.parallel == parallel)
            .filter(|p| p.flash.erase_ms >= ERASE_FLOOR_MS && p.flash.erase_ms < bad && value(p) >= target)
            .map(|p| p.flash.erase_ms)
            .fold(0.0, f64::max);
        let mut good = if met > 0.0 {
            met
        } else if value(&self.point(at(ERASE_FLOOR_MS))?) >= target {
            ERASE_FLOOR_MS
        } else {
            return Ok(Boundary::Between(lo, ERASE_FLOOR_MS));
        };
        while bad / good > BISECTION_RATIO {
            let mid = (good * bad).sqrt();
            if value(&self.point(at(mid))?) >= target {
                good = mid;
            } else {
                bad = mid;
            }
        }
        Ok(Boundary::Between(good, bad))
    }
}

/// Where a bisection found the boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Boundary {
    /// Not even with no erase time: none in the range.
    None,
    /// Even at the range's longest erase.
    Whole,
    /// Between two erase times, ms: the first meets the target, the second does not.
    Between(f64, f64),
}

impl Boundary {
    fn value(self) -> Cell {
        match self {
            Boundary::None => "none in range".into(),
            Boundary::Whole => format!("at least {} (the whole range)", ERASE_RANGE_MS.1).into(),
            Boundary::Between(good, bad) => (good * bad).sqrt().into(),
        }
    }
    fn words(self) -> String {
        match self {
            Boundary::None => {
                format!("it does not hold at any erase time from {} to {} ms", ERASE_RANGE_MS.0, ERASE_RANGE_MS.1)
            }
            Boundary::Whole => format!("it holds at every erase time up to {} ms", ERASE_RANGE_MS.1),
            Boundary::Between(good, bad) => {
                format!("it holds up to an erase time between {good:.3} and {bad:.3} ms (bisection)")
            }
        }
    }
}

/// `envy-sensitivity`.
#[derive(Debug)]
pub struct Sensitivity;

impl Experiment for Sensitivity {
    fn id(&self) -> &'static str {
        "envy-sensitivity"
    }
    /// Each of its two parts holds a database and a copy. Measured on the 2-core machine
    /// of BENCHMARKS.md (2026-11-29, `--jobs 2`): quick scale 1.7 s of user CPU; paper
    /// scale 218 s of user CPU, 3 min 58 s of wall time and 9.3 GB peak resident.
    fn footprint(&self, scale: Scale) -> Footprint {
        let mib = (2 * database_bytes(&tpca_config(scale, 0.8))) >> 20;
        scale.pick(Footprint::new(mib.max(64), 2.0), Footprint::new(mib, 218.0))
    }
    fn title(&self) -> &'static str {
        "eNVy: TPC-A throughput and lifetime against the flash's erase time and banks"
    }
    fn source(&self) -> &'static str {
        SOURCE
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let id = self.id();
        let config = tpca_config(ctx.scale, 0.8);
        let (paper_banks, preset_erase_ms) = (config.banks, config.flash.erase_ns as f64 / 1e6);
        let target_tps = stated_value("envy-tpca-peak");
        let target_years = stated_value("envy-lifetime-years");
        let bank_counts: Vec<u32> = (0..).map(|i| 1u32 << i).take_while(|&b| b <= config.segments).collect();
        // Bank counts of the 30,000 TPS boundaries with banks in parallel: the paper's, and
        // a bank per segment.
        let parallel_banks = [paper_banks, config.segments];
        // Two parts, each on its own copy of the same database: the erase times with the
        // paper's banks one at a time, and the banks in parallel.
        let parts = [false, true];
        let bar = ctx.progress(id, parts.len() as u64);
        let results = ctx.run_parts(
            &parts,
            |_| 2 * database_bytes(&config),
            |&parallel| {
                let (base, _) = load(config, &TPCA_TEMPLATE, &mut ctx.rng(200), id)?;
                let mut bench = Bench { base, ctx, id, rule: rule(ctx.scale), points: Vec::new() };
                let mut boundaries = Vec::new();
                if parallel {
                    for &banks in &bank_counts {
                        bench.point(Flash { erase_ms: preset_erase_ms, banks, parallel: true })?;
                    }
                    for &banks in &parallel_banks {
                        let b = bench.boundary(banks, true, target_tps, |p| p.tps)?;
                        boundaries.push((banks, true, "throughput", b));
                    }
                } else {
                    for erase_ms in ERASE_MS {
                        bench.point(Flash { erase_ms, banks: paper_banks, parallel: false })?;
                    }
                    let b = bench.boundary(paper_banks, false, target_tps, |p| p.tps)?;
                    boundaries.push((paper_banks, false, "throughput", b));
                    let b = bench.boundary(paper_banks, false, target_years, |p| p.years)?;
                    boundaries.push((paper_banks, false, "lifetime", b));
                }
                bar.inc(1);
                Ok((bench.points, boundaries))
            },
        )?;
        bar.finish_and_clear();
        let points: Vec<Point> = results.iter().flat_map(|r| r.0.iter().copied()).collect();
        let boundaries: Vec<_> = results.iter().flat_map(|r| r.1.iter().copied()).collect();
        let find = |flash: Flash| points.iter().find(|p| p.flash == flash).copied();

        let columns = [
            "erase time, ms",
            "banks",
            "banks in parallel",
            "throughput TPS",
            "flushed pages / transaction",
            "cleaning cost",
            "years at 10,000 TPS (2 GB)",
            "sustains 10,000 TPS",
            "ended by",
            "flash turnovers",
        ];
        let row = |p: &Point| -> Vec<Cell> {
            vec![
                p.flash.erase_ms.into(),
                p.flash.banks.into(),
                if p.flash.parallel { "yes" } else { "no" }.into(),
                p.tps.into(),
                p.flushed_per_txn.into(),
                p.cost.into(),
                p.years.into(),
                if p.tps >= 10_000.0 { "yes" } else { "no" }.into(),
                p.ended_by.name().into(),
                p.turnovers.into(),
            ]
        };
        let erase_points: Vec<Point> = ERASE_MS
            .iter()
            .filter_map(|&erase_ms| find(Flash { erase_ms, banks: paper_banks, parallel: false }))
            .collect();
        let bank_points: Vec<Point> = bank_counts
            .iter()
            .filter_map(|&banks| find(Flash { erase_ms: preset_erase_ms, banks, parallel: true }))
            .collect();
        let mut by_erase = Table::new(
            format!(
                "Saturated TPC-A at 80 % utilisation against the erase time, {paper_banks} banks one at a time (the \
                 paper's controller), each run from a copy of one aged database drawing the same transactions"
            ),
            &columns,
        );
        erase_points.iter().for_each(|p| by_erase.row(row(p)));
        let mut by_banks = Table::new(
            format!(
                "The same against the bank count with the banks in parallel, the preset's {preset_erase_ms} ms erase"
            ),
            &columns,
        );
        bank_points.iter().for_each(|p| by_banks.row(row(p)));
        let mut all_runs = Table::new("Every run, bisection steps included, in the order run", &columns);
        points.iter().for_each(|p| all_runs.row(row(p)));
        let mut bounds = Table::new(
            "Where the paper's claims would hold: the erase time found by bisection on its log (the geometric mean of \
             the last bracket; the runs are in the last table)",
            &["claim", "parameter", "banks", "banks in parallel", "value", "unit", "range tried", "bracket, ms"],
        );
        for &(banks, parallel, what, b) in &boundaries {
            let claim = if what == "throughput" {
                format!("{target_tps:.0} TPS (envy-tpca-peak)")
            } else {
                format!("{target_years:.0} years at 10,000 TPS (envy-lifetime-years)")
            };
            let bracket = match b {
                Boundary::Between(good, bad) => format!("{good:.4} to {bad:.4}"),
                _ => String::new(),
            };
            bounds.row(vec![
                claim.into(),
                "erase time".into(),
                banks.into(),
                if parallel { "yes" } else { "no" }.into(),
                b.value(),
                "ms".into(),
                format!("{} to {} ms", ERASE_RANGE_MS.0, ERASE_RANGE_MS.1).into(),
                bracket.into(),
            ]);
        }
        // The lifetime does not move with the erase time; the endurance it would need.
        let preset = find(Flash { erase_ms: preset_erase_ms, banks: paper_banks, parallel: false })
            .expect("the erase sweep runs the preset");
        let endurance = nvmdb_envy::EnvyConfig::PAPER_2GB.endurance_cycles as f64;
        let needed_cycles = endurance * target_years / preset.years;
        bounds.row(vec![
            format!("{target_years:.0} years at 10,000 TPS (envy-lifetime-years)").into(),
            "endurance (lifetime ∝ endurance at the measured programs per transaction)".into(),
            paper_banks.into(),
            "no".into(),
            needed_cycles.into(),
            "cycles per segment".into(),
            "".into(),
            "".into(),
        ]);

        let mut erase_plot = Plot::new(
            format!("Saturated TPC-A throughput vs erase time ({paper_banks} banks one at a time)"),
            "erase time, ms",
            "throughput TPS",
        );
        erase_plot.x_scale = AxisScale::Log10;
        erase_plot.y_scale = AxisScale::Log10;
        let positive: Vec<&Point> = erase_points.iter().filter(|p| p.flash.erase_ms > 0.0).collect();
        erase_plot.series("ours", positive.iter().map(|p| (p.flash.erase_ms, p.tps)).collect());
        let x_ends = (ERASE_FLOOR_MS.max(1.0), ERASE_RANGE_MS.1);
        erase_plot.series(format!("paper: {target_tps:.0} TPS"), vec![(x_ends.0, target_tps), (x_ends.1, target_tps)]);
        let mut life_plot = Plot::new("Lifetime at 10,000 TPS vs erase time (2 GB)", "erase time, ms", "years");
        life_plot.x_scale = AxisScale::Log10;
        life_plot.series("ours", positive.iter().map(|p| (p.flash.erase_ms, p.years)).collect());
        life_plot.series(
            format!("paper: {target_years:.0} years"),
            vec![(x_ends.0, target_years), (x_ends.1, target_years)],
        );
        let mut bank_plot = Plot::new(
            format!("Saturated TPC-A throughput vs banks in parallel ({preset_erase_ms} ms erase)"),
            "banks",
            "throughput TPS",
        )
        .log2_x();
        bank_plot.series("ours", bank_points.iter().map(|p| (f64::from(p.flash.banks), p.tps)).collect());
        let b_ends = (1.0, f64::from(config.segments));
        bank_plot.series(format!("paper: {target_tps:.0} TPS"), vec![(b_ends.0, target_tps), (b_ends.1, target_tps)]);
        let mut bank_life_plot = Plot::new("Lifetime at 10,000 TPS vs banks (2 GB)", "banks", "years").log2_x();
        bank_life_plot.series("ours", bank_points.iter().map(|p| (f64::from(p.flash.banks), p.years)).collect());
        bank_life_plot.series(
            format!("paper: {target_years:.0} years"),
            vec![(b_ends.0, target_years), (b_ends.1, target_years)],
        );
        // The bisections with the banks in parallel: every run of each bank count against
        // its erase time, the paper's value as a line, and the erase time found as a
        // vertical line, on the plot of its banks.
        let mut parallel_plot = Plot::new(
            "Saturated TPC-A throughput vs erase time, banks in parallel (the bisections' runs)",
            "erase time, ms",
            "throughput TPS",
        );
        parallel_plot.x_scale = AxisScale::Log10;
        let mut top = target_tps;
        for &banks in &parallel_banks {
            let mut runs: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.flash.banks == banks && p.flash.parallel && p.flash.erase_ms > 0.0)
                .map(|p| (p.flash.erase_ms, p.tps))
                .collect();
            runs.sort_by(|a, b| a.0.total_cmp(&b.0));
            top = runs.iter().map(|r| r.1).fold(top, f64::max);
            parallel_plot.series(format!("{banks} banks"), runs);
        }
        parallel_plot.series(
            format!("paper: {target_tps:.0} TPS"),
            vec![(ERASE_FLOOR_MS, target_tps), (ERASE_RANGE_MS.1, target_tps)],
        );
        for &(banks, parallel, what, b) in &boundaries {
            if let (Boundary::Between(good, bad), "throughput") = (b, what) {
                let x = (good * bad).sqrt();
                let name = format!("{target_tps:.0} TPS holds up to, {banks} banks");
                // The serial plot's throughput axis is logarithmic: its line starts at 1.
                if parallel {
                    parallel_plot.series(name, vec![(x, 0.0), (x, top)]);
                } else {
                    erase_plot.series(name, vec![(x, 1.0), (x, top)]);
                }
            }
        }

        let mut outcome = Outcome::default();
        let boundary_words: Vec<String> = boundaries
            .iter()
            .map(|&(banks, parallel, what, b)| {
                format!(
                    "{} with {banks} banks {}: {}",
                    if what == "throughput" {
                        format!("{target_tps:.0} TPS")
                    } else {
                        format!("{target_years:.0} years")
                    },
                    if parallel { "in parallel" } else { "one at a time" },
                    b.words()
                )
            })
            .collect();
        outcome.summary = format!(
            "Saturated TPC-A on {} MB of flash at 80 % utilisation, every run from a copy of one loaded and aged \
             database, its flash given another erase time or bank count (no cleaning decision reads a time, so a copy \
             runs as a database built with that flash), each run until its throughput converged or {} turnovers. \
             With the preset's {preset_erase_ms} ms erase and {paper_banks} banks one at a time: {:.0} TPS; with no \
             erase time: {:.0} TPS. {}. The lifetime at 10,000 TPS is {:.2} years at every erase time and bank count \
             (a transaction's flushes and the cleaning cost do not depend on the timing); 10 years would take {:.0} \
             erase cycles per segment instead of {endurance:.0}.",
            (config.flash_pages() * u64::from(config.page_bytes)) >> 20,
            rule(ctx.scale).max_turnovers,
            preset.tps,
            erase_points.first().map_or(f64::NAN, |p| p.tps),
            boundary_words.join("; "),
            preset.years,
            needed_cycles,
        );
        outcome.config = json!({"envy": config, "convergence": rule(ctx.scale), "erase_ms": ERASE_MS,
            "banks": bank_counts, "boundary_banks_in_parallel": parallel_banks, "erase_range_ms": ERASE_RANGE_MS,
            "erase_floor_ms": ERASE_FLOOR_MS, "bisection_ratio": BISECTION_RATIO, "seed": ctx.seed});
        outcome.tables.extend([bounds, by_erase, by_banks, all_runs]);
        outcome.plots.extend([erase_plot, parallel_plot, life_plot, bank_plot, bank_life_plot]);
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(cell: &Cell) -> f64 {
        match cell {
            Cell::Float(v) => *v,
            Cell::Int(v) => *v as f64,
            other => panic!("not a number: {other:?}"),
        }
    }

    #[test]
    fn each_boundary_is_bracketed_by_runs_on_either_side_of_the_claim() {
        let outcome = Sensitivity.run(&RunContext::new(Scale::Quick, 1)).expect("runs");
        let [bounds, by_erase, _, runs] = &outcome.tables[..] else { panic!("four tables") };
        let target = stated_value("envy-tpca-peak");
        // (erase ms, banks, parallel) → throughput, from every run.
        let tps = |erase_ms: f64, banks: f64, parallel: &str| {
            let row = runs.rows.iter().find(|r| {
                (number(&r[0]) - erase_ms).abs() <= 1e-4 + 1e-6 * erase_ms
                    && number(&r[1]) == banks
                    && r[2] == Cell::from(parallel)
            });
            number(&row.unwrap_or_else(|| panic!("a run at {erase_ms} ms, {banks} banks"))[3])
        };
        let mut bracketed = 0;
        for row in bounds.rows.iter().filter(|r| r[0] == Cell::from(format!("{target:.0} TPS (envy-tpca-peak)"))) {
            let (banks, parallel) = (
                number(&row[2]),
                match &row[3] {
                    Cell::Text(t) => t.clone(),
                    _ => panic!(),
                },
            );
            match &row[7] {
                Cell::Text(bracket) if !bracket.is_empty() => {
                    let ends: Vec<f64> = bracket.split(" to ").map(|x| x.parse().unwrap()).collect();
                    let (good, bad) = (ends[0], ends[1]);
                    assert!(bad / good <= BISECTION_RATIO * 1.001, "{bracket}");
                    assert!(tps(good, banks, &parallel) >= target, "{row:?}");
                    assert!(tps(bad, banks, &parallel) < target, "{row:?}");
                    bracketed += 1;
                }
                _ => {
                    // None in range: even no erase time misses the claim.
                    assert_eq!(row[4], Cell::from("none in range"), "{row:?}");
                    assert!(tps(0.0, banks, &parallel) < target, "{row:?}");
                }
            }
        }
        assert!(bracketed > 0, "a bisection ran");
        // Every run draws the same transactions: the throughput falls as the erase grows.
        let sweep: Vec<f64> = by_erase.rows.iter().map(|r| number(&r[3])).collect();
        assert_eq!(sweep.len(), ERASE_MS.len());
        assert!(sweep.windows(2).all(|w| w[1] < w[0]), "{sweep:?}");
    }
}
