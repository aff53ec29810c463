//! `envy-lifetime`: the 2 GB array's lifetime at 10,000 TPS from a converged TPC-A run,
//! and the factors that set it, one at a time.

use nvmdb_envy::tpca::{Convergence, TpcaConfig};
use nvmdb_envy::{CleaningPolicy, EnvyConfig, EnvyStats};
use nvmdb_lab::{Cell, Experiment, Footprint, LabError, Outcome, RunContext, Scale, Table};
use serde_json::json;

use super::tpca::{array, convergence, database_bytes, load, tpca_config, Measured, TPCA_TEMPLATE};
use super::SOURCE;
use crate::papers::stated;

/// The offered rate of the lifetime runs: below saturation at both scales. The pages a
/// transaction flushes and the cleaning cost do not depend on the rate (no cleaning
/// decision reads a time), so the projection to 10,000 TPS takes them from here.
const LIGHT_TPS: f64 = 25.0;

/// The workload rate of the paper's lifetime estimate.
const LIFETIME_TPS: f64 = 10_000.0;

const YEAR_S: f64 = 365.25 * 86_400.0;

/// The one-factor runs' array: the TPC-A array at quick scale; at paper scale 64 segments
/// of 16,384 pages (256 MB), where a run of each factor loads in seconds (the 2 GB array
/// takes about 15 s, and 64 B pages four times as long).
fn factor_config(scale: Scale) -> EnvyConfig {
    let (segments, pages) = scale.pick((32, 2048), (64, 16_384));
    array(segments, pages, 0.8)
}

/// The lifetime runs' convergence: [`convergence`], with a transactions cap that ends a
/// run whose flash never turns over (a buffer that holds the whole database) in seconds.
fn rule(scale: Scale) -> Convergence {
    Convergence { max_transactions: scale.pick(200_000, 1_000_000), ..convergence(scale) }
}

/// Years the paper's 2 GB array lasts at [`LIFETIME_TPS`] when a transaction flushes
/// `flushed` pages of `page_bytes` and cleaning costs `cost`: flash pages (of that size) ×
/// endurance / flash programs per second.
pub(super) fn years_2gb(page_bytes: u32, flushed: f64, cost: f64) -> f64 {
    let paper = EnvyConfig::PAPER_2GB;
    let flash_bytes = paper.flash_pages() as f64 * f64::from(paper.page_bytes);
    flash_bytes / f64::from(page_bytes) * paper.endurance_cycles as f64
        / (LIFETIME_TPS * flushed * (1.0 + cost))
        / YEAR_S
}

/// `envy-lifetime`.
#[derive(Debug)]
pub struct Lifetime;

impl Experiment for Lifetime {
    fn id(&self) -> &'static str {
        "envy-lifetime"
    }
    /// One database at a time on its own thread, the factor runs' on others. Measured on
    /// the 2-core machine of BENCHMARKS.md (2026-11-29, `--jobs 2`): quick scale 0.9 s of
    /// user CPU; paper scale 37 s of user CPU, 40 s of wall time and 2.3 GB peak resident.
    fn footprint(&self, scale: Scale) -> Footprint {
        let mib = database_bytes(&tpca_config(scale, 0.8)) >> 20;
        scale.pick(Footprint::new(mib.max(64), 1.0), Footprint::new(mib, 37.0))
    }
    fn title(&self) -> &'static str {
        "eNVy: lifetime in years at 10,000 TPS"
    }
    fn source(&self) -> &'static str {
        SOURCE
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let id = self.id();
        let rule = rule(ctx.scale);
        let config = tpca_config(ctx.scale, 0.8);
        let (mut db, tpca) = load(config, &TPCA_TEMPLATE, &mut ctx.rng(2), id)?;
        let main = Measured::of(&mut db, LIGHT_TPS, &rule, &mut ctx.rng(4), id)?;
        drop(db);
        let r = &main.run.report;
        let flushed_per_txn = r.flushed_pages_per_s / r.throughput_tps;
        let paper = EnvyConfig::PAPER_2GB;
        let years = years_2gb(config.page_bytes, flushed_per_txn, r.cleaning_cost);
        let budget = |c: &EnvyConfig| c.flash_pages() as f64 * c.endurance_cycles as f64;
        let programs_per_s = LIFETIME_TPS * flushed_per_txn * (1.0 + r.cleaning_cost);
        let years_ours = budget(&config) / programs_per_s / YEAR_S;
        let mut table = Table::new(
            format!(
                "Lifetime = flash pages × endurance / (pages flushed per second × (1 + cleaning cost)), from TPC-A at \
                 {LIGHT_TPS} TPS run until its throughput converged ({})",
                super::tpca::ending_words(&main.run)
            ),
            &[
                "array",
                "flash pages",
                "endurance",
                "flushed pages / transaction",
                "cleaning cost",
                "years at 10,000 TPS",
                "paper",
            ],
        );
        table.row(vec![
            "2 GB preset".into(),
            paper.flash_pages().into(),
            paper.endurance_cycles.into(),
            flushed_per_txn.into(),
            r.cleaning_cost.into(),
            years.into(),
            stated("envy-lifetime-years"),
        ]);
        table.row(vec![
            "simulated array".into(),
            config.flash_pages().into(),
            config.endurance_cycles.into(),
            flushed_per_txn.into(),
            r.cleaning_cost.into(),
            years_ours.into(),
            Cell::Missing,
        ]);
        // Isolates the factors: each row changes one parameter of a run on the factor
        // array and puts its flushed pages per transaction and cleaning cost on a 2 GB
        // array of the run's page size.
        let base = factor_config(ctx.scale);
        let mut factors = Table::new(
            format!(
                "One factor at a time on {} MB of flash: a run with one parameter changed, projected on a 2 GB array \
                 of its page size",
                (base.flash_pages() * u64::from(base.page_bytes)) >> 20
            ),
            &[
                "run",
                "page bytes",
                "host page writes / transaction",
                "copy-on-writes / transaction",
                "flushed pages / transaction",
                "cleaning cost",
                "flash programs / transaction",
                "years",
                "ended by",
            ],
        );
        let per_txn =
            |s: &EnvyStats, n: u64| (s.host_page_writes as f64 / n as f64, s.copy_on_writes as f64 / n as f64);
        fn resize_buffer(c: &mut EnvyConfig, pages: u64) {
            c.buffer_pages = pages as u32;
            c.flush_threshold_pages = c.buffer_pages - (c.buffer_pages / 8).max(1);
        }
        // The same bytes of flash and of buffer in pages of another size.
        fn repage(c: &mut EnvyConfig, page_bytes: u32) {
            let (flash_bytes, buffer_bytes) = (c.pages_per_segment * c.page_bytes, c.buffer_pages * c.page_bytes);
            c.page_bytes = page_bytes;
            c.pages_per_segment = flash_bytes / page_bytes;
            c.buffer_pages = buffer_bytes / page_bytes;
            c.flush_threshold_pages = c.buffer_pages - (c.buffer_pages / 8).max(1);
            c.set_utilization(0.8);
        }
        type Change = fn(&mut EnvyConfig);
        let no_history = TpcaConfig { history_records: 1, history_bytes: 16, ..TPCA_TEMPLATE };
        let variants: [(&str, Change, TpcaConfig); 9] = [
            ("as measured (80 %, buffer 1/256, hybrid)", |_| {}, TPCA_TEMPLATE),
            ("utilisation 50 %", |c| c.set_utilization(0.5), TPCA_TEMPLATE),
            ("buffer 1/32 of the flash", |c| resize_buffer(c, c.flash_pages() / 32), TPCA_TEMPLATE),
            (
                "buffer 8/7 of the logical space (it holds the database)",
                |c| resize_buffer(c, c.logical_pages * 8 / 7 + 1),
                TPCA_TEMPLATE,
            ),
            ("no history append (one 16 B history record rewritten in place)", |_| {}, no_history),
            ("64 B pages (same bytes of flash and buffer)", |c| repage(c, 64), TPCA_TEMPLATE),
            ("1 KB pages (same bytes of flash and buffer)", |c| repage(c, 1024), TPCA_TEMPLATE),
            ("greedy cleaning", |c| c.cleaning = CleaningPolicy::Greedy, TPCA_TEMPLATE),
            ("hybrid without redistribution", |c| c.redistribution_divisor = 0, TPCA_TEMPLATE),
        ];
        let runs = ctx.run_parts(
            &variants,
            |(_, change, _)| {
                let mut c = base;
                change(&mut c);
                database_bytes(&c)
            },
            |(_, change, template)| {
                let mut c = base;
                change(&mut c);
                let (mut db, _) = load(c, template, &mut ctx.rng(2), id)?;
                Ok((c.page_bytes, Measured::of(&mut db, LIGHT_TPS, &rule, &mut ctx.rng(4), id)?))
            },
        )?;
        let mut factor_years = Vec::new();
        for ((label, ..), (page_bytes, v)) in variants.iter().zip(&runs) {
            let report = &v.run.report;
            let flushed = report.flushed_pages_per_s / report.throughput_tps;
            let (writes, cows) = per_txn(&v.stats, report.transactions);
            let cost = report.cleaning_cost;
            let years = years_2gb(*page_bytes, flushed, cost);
            factors.row(vec![
                (*label).into(),
                (*page_bytes).into(),
                writes.into(),
                cows.into(),
                flushed.into(),
                // Without a flushed page there is no cleaning cost and no wear to project.
                Cell::from((flushed > 0.0).then_some(cost)),
                (flushed * (1.0 + cost.max(0.0))).into(),
                Cell::from((flushed > 0.0).then_some(years)),
                v.run.ended_by.name().into(),
            ]);
            factor_years.push((*label, flushed, years, writes, cows, cost));
        }
        let mut outcome = Outcome {
            summary: format!(
                "Pages flushed per transaction ({flushed_per_txn:.2}) and the cleaning cost ({:.2}) are measured on \
                 TPC-A ({} accounts, 80 % utilisation, hybrid cleaning, {} MB of flash) at {LIGHT_TPS} TPS, run \
                 until its throughput converged; the 2 GB array's lifetime at 10,000 TPS then follows: {years:.2} \
                 years.",
                r.cleaning_cost,
                tpca.accounts,
                (config.flash_pages() * u64::from(config.page_bytes)) >> 20
            ),
            config: json!({"envy": config, "tpca": tpca, "convergence": rule, "factor_array": base,
                "measured_tps": r.throughput_tps, "seed": ctx.seed}),
            ..Default::default()
        };
        outcome.tables.extend([table, factors]);
        let factor = |label: &str| factor_years.iter().find(|f| f.0.starts_with(label)).copied();
        let as_measured = factor("as measured").expect("the baseline runs");
        let (_, base_flushed, base_years, writes, cows, base_cost) = as_measured;
        let (no_history, small_pages, big_pages, whole) =
            (factor("no history"), factor("64 B"), factor("1 KB"), factor("buffer 8/7"));
        let budget_per_txn = budget(&paper) / (10.0 * YEAR_S * LIFETIME_TPS);
        let no_cleaning_years = years_2gb(config.page_bytes, flushed_per_txn, 0.0);
        let years_note = format!(
            "The run flushes {flushed_per_txn:.3} pages per transaction and cleaning multiplies the programs by (1 + \
             {:.2}); the 2 GB array's budget over 10 years at 10,000 TPS allows {budget_per_txn:.3} programs \
             per transaction, so even with no cleaning it would last {no_cleaning_years:.2} years. The factors, each \
             isolated by a run, are the second table and the notes.",
            r.cleaning_cost
        );
        crate::papers::measure_explained(&mut outcome, "envy-lifetime-years", years, &years_note);
        let base_tpca_accounts = nvmdb_envy::tpca::accounts_to_fill(base.logical_bytes(), 0.95, &TPCA_TEMPLATE);
        let base_tpca = TpcaConfig { accounts: base_tpca_accounts, ..TPCA_TEMPLATE };
        outcome.notes.push(format!(
            "The factors, isolated (second table; each row changes one parameter of the run on its first row). \
             Cleaning: with no cleaning at all the 2 GB array would last {:.2} years at the first row's flushes, so \
             the cleaning cost accounts for (1 + cost) = {:.2}× of the gap. Spread over 10 years at 10,000 TPS, the \
             2 GB array's budget (flash pages × endurance) allows {budget_per_txn:.3} flash programs per \
             transaction; the run flushes {base_flushed:.3} pages per transaction before any cleaning. What is \
             flushed: each transaction writes {writes:.2} pages (the branch, teller and account balances and the \
             history record; the B+-tree lookups write nothing), and {cows:.3} of them miss the buffer and are \
             flushed later. Without the history append the run flushes {:.3} pages per transaction, so the history \
             accounts for {:.3}; the rest comes from the balance updates, of which the account record is chosen \
             uniformly among {} accounts on {} pages, far more than the {}-page buffer holds, while the {} branch \
             and {} teller records share a few pages. Those updates alone flush {:.1}× the 10-year budget. With a \
             buffer larger than the database {}. Smaller pages flush more pages but each is smaller: {:.3} 64 B \
             pages per transaction give {:.2} years, {:.3} 1 KB pages {:.2} years. At the first row's {:.2} programs \
             per transaction ({base_years:.2} years), 10 years on 2 GB would take {:.0} cycles per segment instead \
             of {}.",
            years_2gb(base.page_bytes, base_flushed, 0.0),
            1.0 + base_cost,
            no_history.map_or(f64::NAN, |f| f.1),
            no_history.map_or(f64::NAN, |f| base_flushed - f.1),
            base_tpca.accounts,
            (base_tpca.accounts * base_tpca.record_bytes).div_ceil(u64::from(base.page_bytes)),
            base.buffer_pages,
            base_tpca.branches(),
            base_tpca.tellers(),
            no_history.map_or(f64::NAN, |f| f.1) / budget_per_txn,
            match whole {
                Some((_, 0.0, ..)) => "no page was flushed at all during the run".to_string(),
                Some((_, f, y, ..)) => format!("{f:.3} pages per transaction are flushed ({y:.2} years)"),
                None => String::new(),
            },
            small_pages.map_or(f64::NAN, |f| f.1),
            small_pages.map_or(f64::NAN, |f| f.2),
            big_pages.map_or(f64::NAN, |f| f.1),
            big_pages.map_or(f64::NAN, |f| f.2),
            base_flushed * (1.0 + base_cost),
            paper.endurance_cycles as f64 * 10.0 / base_years,
            paper.endurance_cycles,
        ));
        outcome.notes.push(format!(
            "The one-factor runs give {}.",
            factor_years
                .iter()
                .skip(1)
                .map(|f| if f.2.is_finite() {
                    format!("{:.2} years with {}", f.2, f.0)
                } else {
                    format!("no wear with {}", f.0)
                })
                .collect::<Vec<_>>()
                .join(", ")
        ));
        Ok(outcome)
    }
}
