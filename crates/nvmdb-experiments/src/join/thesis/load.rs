//! The thesis's multi-user load: Figure 5.10 (users), and Figures 5.9 and 5.11 under it,
//! with each variant's column store isolated.

use nvmdb_join::buffered::BufferedMemory;
use nvmdb_join::idlist::IdEncoding;
use nvmdb_join::join::{Algorithm, JoinOptions};
use nvmdb_join::relation::Layout;
use nvmdb_join::ssb::{run_query, Query, ResultColumns, Ssb, StoredSsb};
use nvmdb_join::users::{self, Transaction, UserLoad};
use nvmdb_lab::{Cell, Plot, RunContext, Scale, Table};
use nvmdb_memory::{CachedMemory, Memory};
use serde_json::json;

use super::runs::{
    counter_cells, device, gains, metrics, pool_for, run_parts, size_cell, variant_name, Mode, Pool, Totals,
    COUNTER_COLUMNS, HALF, SIZE_SWEEP_POOL_FRACTION, VARIANTS,
};
use super::single::POOL_RATIO_COLUMNS;
use crate::join::Machine;

/// The multi-user load (Figures 5.9–5.11 as the thesis ran them): users per scale. Quick
/// scale runs a tenth of the thesis's users on a smaller database (see [`LoadSetup`]).
fn figure_510_users(scale: Scale) -> [u32; 5] {
    scale.pick([2, 5, 10, 15, 20], [20, 50, 100, 150, 200])
}

/// The users behind Figures 5.9 and 5.11 (the thesis's 100; a tenth at quick scale).
fn load_users(scale: Scale) -> u32 {
    scale.pick(10, 100)
}

/// Inserts per user, and as many updates and deletes (the thesis: "multiple"; ours).
const DML_PER_USER: u32 = 2;

/// Scale factor of the 1.0X database of the multi-user runs: every user runs three queries,
/// so the database is 4× (quick) and 25× (paper) smaller than the single-run one.
fn load_base_sf(scale: Scale) -> f64 {
    scale.pick(0.0005, 0.002)
}

/// PRNG streams of the multi-user runs: schedule, DML draws, databases (+ size factor).
const LOAD_SCHEDULE_STREAM: u64 = 100;

const LOAD_DML_STREAM: u64 = 101;

const LOAD_DATABASE_STREAM: u64 = 110;

/// What every multi-user run shares.
pub(super) struct LoadSetup {
    /// The databases at 1.0X–4.0X.
    databases: Vec<Ssb>,
    /// The DRAM pool (PCM as disk): 1/16 of the 1.0X database, at least 16 pages.
    pool: Pool,
    /// A pool of half the 1.0X database, for the isolating runs.
    half_pool: Pool,
    /// The machine of PCM as main memory: its last level about a third of the 1.0X database.
    machine: Machine,
    schedule_rng: nvmdb_lab::Rng,
    dml_rng: nvmdb_lab::Rng,
}

impl LoadSetup {
    pub(super) fn new(ctx: &RunContext, factors: &[u64]) -> LoadSetup {
        let sf = load_base_sf(ctx.scale);
        let databases: Vec<Ssb> =
            factors.iter().map(|&k| Ssb::generate(sf * k as f64, &mut ctx.rng(LOAD_DATABASE_STREAM + k))).collect();
        let pool = Pool::of(pool_for(&databases[0], SIZE_SWEEP_POOL_FRACTION));
        let half_pool = Pool::of(pool_for(&databases[0], HALF));
        let machine = Machine::with_last_level_shrunk(&Machine::for_scale(Scale::Quick), ctx.scale.pick(8, 2));
        LoadSetup {
            databases,
            pool,
            half_pool,
            machine,
            schedule_rng: ctx.rng(LOAD_SCHEDULE_STREAM),
            dml_rng: ctx.rng(LOAD_DML_STREAM),
        }
    }
}

/// One multi-user run: a database size, where it lives, a join variant and the users.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LoadSpec {
    pub(super) size_factor: u64,
    pub(super) mode: Mode,
    pub(super) layout: Layout,
    pub(super) algorithm: Algorithm,
    pub(super) users: u32,
    /// The DRAM pool (PCM as disk).
    pub(super) pool: LoadPool,
}

/// The DRAM pool of a multi-user run with PCM as disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LoadPool {
    /// Figure 5.10's: 1/16 of the 1.0X database, partitions sized to it.
    Figure510,
    /// Half the 1.0X database, partitions sized to it.
    Half,
    /// Figure 5.10's pool with partitions sized to half of it (an isolating run).
    PartitionsHalved,
    /// Twice Figure 5.10's pool, partitions sized to it (an isolating run).
    Doubled,
}

/// The hash joins of every query of every user, summed (result rows summed per query).
fn run_load_in<M: Memory>(
    mem: &mut M,
    setup: &LoadSetup,
    spec: &LoadSpec,
    options: &JoinOptions,
    mut dram_bytes: impl FnMut(&M) -> u64,
) -> Result<Totals, String> {
    let load = UserLoad { users: spec.users, dml_per_user: DML_PER_USER };
    let mut ssb = setup.databases[usize::try_from(spec.size_factor - 1).expect("a size factor")].clone();
    let mut stored = StoredSsb::load_with_spare(mem, &ssb, spec.layout, load.inserts()).map_err(|e| e.to_string())?;
    let mut dml_rng = setup.dml_rng.clone();
    let mut totals = Totals::default();
    for step in load.schedule(&mut setup.schedule_rng.clone()) {
        match step.transaction {
            Transaction::Query(query) => {
                let mut dram = 0;
                let run = run_query(mem, &ssb, &stored, query, options, ResultColumns::Used, |m| {
                    dram += dram_bytes(m);
                })
                .map_err(|e| e.to_string())?;
                for (_, report) in &run.joins {
                    totals.add(&report.pcm);
                }
                totals.dram_bytes += dram;
                let q = Query::ALL.iter().position(|&x| x == query).expect("one of the three");
                totals.result_rows[q] += run.result_rows;
            }
            t => users::apply(mem, &mut ssb, &mut stored, t, &mut dml_rng),
        }
    }
    Ok(totals)
}

fn run_load(setup: &LoadSetup, spec: &LoadSpec) -> Result<Totals, String> {
    let pool = match spec.pool {
        LoadPool::Figure510 => setup.pool,
        LoadPool::Half => setup.half_pool,
        LoadPool::PartitionsHalved => Pool { partition_bytes: setup.pool.bytes / 2, ..setup.pool },
        LoadPool::Doubled => Pool::of(setup.pool.bytes * 2),
    };
    let pcm = device()?;
    let cache_bytes = match spec.mode {
        Mode::Disk => pool.partition_bytes,
        Mode::MainMemory => setup.machine.cache_bytes(),
    };
    let options =
        JoinOptions { algorithm: spec.algorithm, cache_bytes, id_encoding: IdEncoding::Plain32, collect_pairs: true };
    match spec.mode {
        Mode::Disk => {
            let mut mem = BufferedMemory::new(pcm, pool.bytes);
            run_load_in(&mut mem, setup, spec, &options, |m| {
                let s = m.dram_stats();
                s.bytes_read + s.bytes_written
            })
        }
        Mode::MainMemory => {
            let mut mem = CachedMemory::new(pcm, setup.machine.cache.clone());
            run_load_in(&mut mem, setup, spec, &options, |_| 0)
        }
    }
}

/// Runs `specs` as parts on the context's pool (each run has its own memory and a clone
/// of its database, so none depends on another); results come back in the order of
/// `specs`, and on a failure the first failed run's error in that order.
pub(super) fn run_loads(
    ctx: &RunContext,
    setup: &LoadSetup,
    specs: &[LoadSpec],
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<Totals>, String> {
    // A run's own memory beyond the experiment's footprint: its database clone, DRAM pool
    // and simulated devices, a few MiB at quick scale (SF 0.0005) and at most tens of MiB
    // at paper scale (SF 0.002); a generous bound, so that it never starves the budget.
    run_parts(ctx, specs, ctx.scale.pick(32u64, 256) << 20, tick, |spec| run_load(setup, spec))
}

/// What the multi-user runs measured.
pub(super) struct LoadResults {
    pub(super) tables: Vec<Table>,
    pub(super) plots: Vec<Plot>,
    /// Figure 5.10, per metric (wear, energy, latency): modified below traditional at every
    /// user count, for both stores.
    pub(super) modified_better: [bool; 3],
    /// Figure 5.10: the column store below the row store in every metric, for both joins,
    /// at every user count.
    pub(super) column_better: bool,
    /// The isolating runs: with a pool of half the database, modified below traditional in
    /// every metric for both stores at the fewest and the most users.
    pub(super) half_pool_cheaper: bool,
    /// What the isolating runs of the traditional joins by pool and partition size show.
    pub(super) column_note: String,
    pub(super) notes: Vec<String>,
    pub(super) config: serde_json::Value,
}

/// What the isolating runs of the column store's traditional join under the load found.
struct ColumnIsolation {
    table: Table,
    /// Per set-up, in the table's order: its name, C-S ÷ R-S traditional energy and
    /// latency, and the words read (N_r) by R-S and by C-S traditional.
    ratios: Vec<(String, f64, f64, u64, u64)>,
}

/// Figure 5.10's fewest users at 1.0X, traditional joins of both stores, with one thing
/// varied from Figure 5.10's set-up: the partitions sized to half the pool (pool kept), or
/// the pool (and the partitions) doubled; `find` gives a run of [`load_specs`].
fn column_isolation<'a>(setup: &LoadSetup, users: u32, find: &impl Fn(LoadSpec) -> &'a Totals) -> ColumnIsolation {
    let pool = setup.pool;
    let setups = [
        (format!("{} KB pool, partitions sized to it (Figure 5.10)", pool.bytes >> 10), LoadPool::Figure510),
        (format!("{} KB pool, partitions sized to half of it", pool.bytes >> 10), LoadPool::PartitionsHalved),
        (format!("{} KB pool, partitions sized to it", pool.bytes >> 9), LoadPool::Doubled),
    ];
    let mut table = Table::new(
        format!("Figure 5.10 isolated: traditional joins at U{users}, PCM as disk at 1.0X, by pool and partition size"),
        &[&["set-up", "variant"][..], &COUNTER_COLUMNS, &["C-S ÷ R-S energy", "C-S ÷ R-S latency"]].concat(),
    );
    let mut ratios = Vec::new();
    for (name, pool) in setups {
        let [row, column] = [Layout::Row, Layout::Column].map(|layout| {
            let spec = LoadSpec {
                size_factor: 1,
                mode: Mode::Disk,
                layout,
                algorithm: Algorithm::CachePartitioning,
                users,
                pool,
            };
            find(spec)
        });
        let energy = column.energy_pj() as f64 / row.energy_pj() as f64;
        let latency = column.latency_cycles() as f64 / row.latency_cycles() as f64;
        for (t, layout, r) in [(row, Layout::Row, None), (column, Layout::Column, Some((energy, latency)))] {
            let mut cells: Vec<Cell> =
                vec![name.clone().into(), variant_name(layout, Algorithm::CachePartitioning).into()];
            cells.extend(counter_cells(t));
            match r {
                Some((e, l)) => cells.extend([e.into(), l.into()]),
                None => cells.extend([Cell::Missing, Cell::Missing]),
            }
            table.row(cells);
        }
        ratios.push((name, energy, latency, row.words_read(), column.words_read()));
    }
    ColumnIsolation { table, ratios }
}

/// The explanation of the column store's traditional join costing more than the row
/// store's under the load, from the isolating runs.
fn column_isolation_note(isolation: &ColumnIsolation, users: u32) -> String {
    let (base, rest) = isolation.ratios.split_first().expect("three set-ups");
    let cheaper_elsewhere = rest.iter().all(|&(_, e, l, _, _)| e < 1.0 && l < 1.0);
    format!(
        "Isolating runs (table \"Figure 5.10 isolated\", U{users}, 1.0X): the column store's traditional join costs \
         {:.2}× the row store's energy and {:.2}× its latency with {} (N_r {} words, row store {}); {}. {}",
        base.1,
        base.2,
        base.0,
        base.4,
        base.3,
        rest.iter()
            .map(|(name, e, l, r, c)| format!("{e:.2}× and {l:.2}× with {name} (N_r {c}, row store {r})"))
            .collect::<Vec<_>>()
            .join(", "),
        if cheaper_elsewhere {
            "Either change alone makes the column store the cheaper one in energy and latency: the ordering comes \
             from sizing the column store's partitions to the whole pool, which it pays for in words read."
        } else {
            ""
        }
    )
}

/// The database sizes of the multi-user runs.
const LOAD_FACTORS: [u64; 4] = [1, 2, 3, 4];

/// Every multi-user run: Figure 5.10's users at 1.0X (PCM as disk, four variants), then
/// Figure 5.9's other sizes and Figure 5.11's sizes under the load.
pub(super) fn load_specs(scale: Scale) -> Vec<LoadSpec> {
    let load = load_users(scale);
    let mut specs = Vec::new();
    // The four variants with PCM as disk.
    let disk = |specs: &mut Vec<LoadSpec>, size_factor, users, pool| {
        for (layout, algorithm) in VARIANTS {
            specs.push(LoadSpec { size_factor, mode: Mode::Disk, layout, algorithm, users, pool });
        }
    };
    for &u in &figure_510_users(scale) {
        disk(&mut specs, 1, u, LoadPool::Figure510);
    }
    for &k in &LOAD_FACTORS[1..] {
        disk(&mut specs, k, load, LoadPool::Figure510);
    }
    for &k in &LOAD_FACTORS {
        for algorithm in [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning] {
            specs.push(LoadSpec {
                size_factor: k,
                mode: Mode::MainMemory,
                layout: Layout::Row,
                algorithm,
                users: load,
                pool: LoadPool::Figure510,
            });
        }
    }
    // Isolating runs: Figure 5.10's fewest and most users with a pool of half the database.
    let users = figure_510_users(scale);
    for u in [users[0], users[users.len() - 1]] {
        disk(&mut specs, 1, u, LoadPool::Half);
    }
    // Isolating runs: the fewest users, traditional joins, partitions sized to half the
    // pool, or the pool doubled (see [`column_isolation`]).
    for pool in [LoadPool::PartitionsHalved, LoadPool::Doubled] {
        for layout in [Layout::Row, Layout::Column] {
            specs.push(LoadSpec {
                size_factor: 1,
                mode: Mode::Disk,
                layout,
                algorithm: Algorithm::CachePartitioning,
                users: users[0],
                pool,
            });
        }
    }
    specs
}

/// Figure 5.10 (users), and Figures 5.9 and 5.11 under the multi-user load; `tick` after
/// each of the [`load_specs`] runs.
pub(super) fn multi_user(ctx: &RunContext, tick: &(dyn Fn() + Sync)) -> Result<LoadResults, String> {
    let factors = LOAD_FACTORS;
    let setup = LoadSetup::new(ctx, &factors);
    let users = figure_510_users(ctx.scale);
    let load = load_users(ctx.scale);
    let specs = load_specs(ctx.scale);
    let totals = run_loads(ctx, &setup, &specs, tick)?;
    let find = |spec: LoadSpec| {
        let i = specs.iter().position(|s| *s == spec).expect("every spec was run");
        &totals[i]
    };
    let disk = |k: u64, (layout, algorithm): (Layout, Algorithm), users: u32| {
        find(LoadSpec { size_factor: k, mode: Mode::Disk, layout, algorithm, users, pool: LoadPool::Figure510 })
    };
    // Every variant of a load sees the same transactions, so the same results.
    for spec in &specs {
        let same = LoadSpec { layout: Layout::Row, algorithm: Algorithm::CachePartitioning, ..*spec };
        let reference = if spec.mode == Mode::Disk { find(same) } else { find(LoadSpec { mode: Mode::Disk, ..same }) };
        if find(*spec).result_rows != reference.result_rows {
            return Err(format!("query results differ between variants: {spec:?}"));
        }
    }
    let max_users = users[users.len() - 1];
    let reference = metrics(disk(1, VARIANTS[0], max_users));
    let mut fig510 = Table::new(
        format!(
            "Figure 5.10: PCM as disk at 1.0X ({} KB pool), by users; wear, energy and latency ÷ R-S traditional at \
             U{max_users}",
            setup.pool.bytes >> 10
        ),
        &[&["users", "variant"][..], &COUNTER_COLUMNS, &["wear ÷ ref", "energy ÷ ref", "latency ÷ ref"]].concat(),
    );
    let metric_names = ["wear (bits written)", "PCM energy", "PCM latency"];
    let mut plots: Vec<Plot> = metric_names
        .iter()
        .map(|m| {
            Plot::new(
                format!("Figure 5.10: {m} ÷ R-S traditional at U{max_users}, PCM as disk at 1.0X"),
                "users",
                format!("{m}, relative"),
            )
        })
        .collect();
    let mut series = vec![vec![Vec::new(); VARIANTS.len()]; 3];
    let (mut modified_better, mut column_better) = ([true; 3], true);
    for &u in &users {
        for (v, &variant) in VARIANTS.iter().enumerate() {
            let t = disk(1, variant, u);
            let m = metrics(t);
            let mut row: Vec<Cell> = vec![u.into(), variant_name(variant.0, variant.1).into()];
            row.extend(counter_cells(t));
            for (i, (&x, &r)) in m.iter().zip(&reference).enumerate() {
                let relative = x as f64 / r.max(1) as f64;
                row.push(relative.into());
                series[i][v].push((f64::from(u), relative));
            }
            fig510.row(row);
        }
        let [rt, rm, ct, cm] = VARIANTS.map(|v| metrics(disk(1, v, u)));
        for i in 0..3 {
            modified_better[i] &= rm[i] < rt[i] && cm[i] < ct[i];
            column_better &= ct[i] < rt[i] && cm[i] < rm[i];
        }
    }
    for (plot, series) in plots.iter_mut().zip(series) {
        for ((layout, algorithm), points) in VARIANTS.iter().zip(series) {
            plot.series(variant_name(*layout, *algorithm), points);
        }
    }
    let mut fig59 = Table::new(
        format!(
            "Figure 5.9 under the {load}-user load: PCM as disk ({} KB pool), by database size (1.0X = SSB SF {})",
            setup.pool.bytes >> 10,
            load_base_sf(ctx.scale)
        ),
        &[&["size", "variant"][..], &COUNTER_COLUMNS, &["DRAM traffic, MB"]].concat(),
    );
    let mut observations = [true; 4];
    for &k in &factors {
        for variant in VARIANTS {
            let t = disk(k, variant, load);
            let mut row: Vec<Cell> = vec![size_cell(k), variant_name(variant.0, variant.1).into()];
            row.extend(counter_cells(t));
            row.push((t.dram_bytes as f64 / 1e6).into());
            fig59.row(row);
        }
        let [rt, rm, ct, cm] = VARIANTS.map(|v| disk(k, v, load));
        observations[0] &= ct.pcm.bits_written < rt.pcm.bits_written;
        observations[1] &= (cm.pcm.bits_written as f64 / rm.pcm.bits_written.max(1) as f64 - 1.0).abs() <= 0.2;
        observations[2] &= cm.energy_pj() > rm.energy_pj();
        observations[3] &= ct.latency_cycles() < rt.latency_cycles() && cm.latency_cycles() < rm.latency_cycles();
    }
    let mut fig511 = Table::new(
        format!(
            "Figure 5.11 under the {load}-user load: row store, PCM as main memory ({} KB last level), by database \
             size",
            setup.machine.cache_bytes() >> 10
        ),
        &[&["size", "variant"][..], &COUNTER_COLUMNS, &["lifetime gain, %", "energy saved, %", "latency saved, %"]]
            .concat(),
    );
    for &k in &factors {
        let [t, m] = [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning].map(|algorithm| {
            find(LoadSpec {
                size_factor: k,
                mode: Mode::MainMemory,
                layout: Layout::Row,
                algorithm,
                users: load,
                pool: LoadPool::Figure510,
            })
        });
        let g = gains(t, m);
        for (totals, algorithm, g) in
            [(t, Algorithm::CachePartitioning, None), (m, Algorithm::VirtualPartitioning, Some(g))]
        {
            let mut row: Vec<Cell> = vec![size_cell(k), variant_name(Layout::Row, algorithm).into()];
            row.extend(counter_cells(totals));
            match g {
                Some(g) => row.extend([g.0.into(), g.1.into(), g.2.into()]),
                None => row.extend([Cell::Missing, Cell::Missing, Cell::Missing]),
            }
            fig511.row(row);
        }
    }
    let (few, many) = (users[0], max_users);
    let mut pools = Table::new(
        format!(
            "Figure 5.10 by DRAM pool, PCM as disk at 1.0X: the modified join's wear, energy and latency over the \
             traditional one's at U{few} and U{many} (above 1: modified costs more)"
        ),
        &[&["users"][..], &POOL_RATIO_COLUMNS].concat(),
    );
    let mut half_pool_cheaper = true;
    for u in [few, many] {
        for pool in [LoadPool::Figure510, LoadPool::Half] {
            let [rt, rm, ct, cm] = VARIANTS.map(|(layout, algorithm)| {
                metrics(find(LoadSpec { size_factor: 1, mode: Mode::Disk, layout, algorithm, users: u, pool }))
            });
            let half_pool = pool == LoadPool::Half;
            let ratios: Vec<f64> = (0..3)
                .map(|i| (rm[i], rt[i]))
                .chain((0..3).map(|i| (cm[i], ct[i])))
                .map(|(m, t)| crate::join::ratio(m, t).unwrap_or(f64::NAN))
                .collect();
            if half_pool {
                half_pool_cheaper &= ratios.iter().all(|&r| r < 1.0);
            }
            let bytes = if half_pool { setup.half_pool.bytes } else { setup.pool.bytes };
            let mut row: Vec<Cell> = vec![u.into(), (bytes >> 10).into()];
            row.extend(ratios.into_iter().map(Cell::from));
            pools.row(row);
        }
    }
    let yes = |b: bool| if b { "yes" } else { "no" };
    let notes = vec![
        format!(
            "Multi-user load (Figures 5.9–5.11): each user runs the three queries once and {DML_PER_USER} inserts, \
             {DML_PER_USER} updates and {DML_PER_USER} deletes on LINEORDER, each arriving at a random time from the \
             run's seed; transactions run one at a time in arrival order (a query's shared lock holds an update \
             back; two users' queries are not interleaved join by join). The thesis states neither the mix nor \
             its timing: these are ours. {} Costs are those of the hash joins alone (the transactions' own writes \
             reach PCM before the next join's counters start), summed over every user's queries. The database of \
             these runs is SSB SF {} at 1.0X ({} KB) with a {} KB DRAM pool (PCM as disk) and a {} KB last level \
             (PCM as main memory): the 1.0X database is {:.1}× the pool and {:.1}× the last level.",
            ctx.scale.pick(
                "Quick scale runs a tenth of the thesis's users (2–20, and 10 for Figures 5.9 and 5.11) on a \
                 database 4× smaller than the single run's.",
                "Paper scale runs the thesis's users (20–200, and 100 for Figures 5.9 and 5.11) on a database 25× \
                 smaller than the single run's."
            ),
            load_base_sf(ctx.scale),
            setup.databases[0].bytes() >> 10,
            setup.pool.bytes >> 10,
            setup.machine.cache_bytes() >> 10,
            setup.databases[0].bytes() as f64 / setup.pool.bytes as f64,
            setup.databases[0].bytes() as f64 / setup.machine.cache_bytes() as f64
        ),
        format!(
            "Figure 5.9's observations under the {load}-user load, at every size: the traditional row store wears \
             PCM more than the traditional column store: {}; the modified joins' wear (column ÷ row) within 20% of \
             1: {}; the modified column store uses more energy than the modified row store: {}; the column store \
             has the lower latency: {}.",
            yes(observations[0]),
            yes(observations[1]),
            yes(observations[2]),
            yes(observations[3])
        ),
        format!(
            "Figure 5.10 by DRAM pool (table \"Figure 5.10 by DRAM pool\"): with a pool of half the 1.0X database \
             ({} KB), the modified join costs less wear, energy and latency than the traditional one for both \
             stores at U{few} and U{many}: {}.",
            setup.half_pool.bytes >> 10,
            yes(half_pool_cheaper)
        ),
    ];
    let config = json!({"users": users, "load_users": load, "dml_per_user": DML_PER_USER,
                        "base_scale_factor": load_base_sf(ctx.scale), "pool_bytes": setup.pool.bytes,
                        "machine": setup.machine, "size_factors": factors});
    let isolation = column_isolation(&setup, users[0], &find);
    let column_note = column_isolation_note(&isolation, users[0]);
    Ok(LoadResults {
        tables: vec![fig510, pools, isolation.table, fig59, fig511],
        column_note,
        plots,
        modified_better,
        column_better,
        half_pool_cheaper,
        notes,
        config,
    })
}
