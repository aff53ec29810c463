//! Single runs of the three queries (Figures 5.9 and 5.11 as single runs): the specs, one
//! database load per group of them, and the pool sweep.

use nvmdb_join::join::Algorithm;
use nvmdb_join::relation::Layout;
use nvmdb_join::ssb::{ResultColumns, Ssb};
use nvmdb_lab::{Cell, RunContext, Table};

use super::runs::{measure, pool_for, run_parts, Pool, SingleSpec, Totals, POOL_FRACTIONS, VARIANTS};
use crate::join::Machine;

/// The 1.0X database with PCM as disk, by DRAM pool size: the modified join's cost over
/// the traditional one's, for each layout. `fractions` are database ÷ pool.
/// Modified over traditional at one pool: wear, energy, latency for the row, then the
/// column store.
pub(super) type PoolRatios = [f64; 6];

pub(super) fn pool_sweep(
    ssb: &Ssb,
    fractions: &[u64],
    single: &impl Fn(SingleSpec) -> Totals,
) -> (Table, Vec<PoolRatios>) {
    let mut table = Table::new(
        "PCM as disk at 1.0X, by DRAM pool: the modified join's wear, energy and latency over the traditional one's \
         (above 1: modified costs more)",
        &[&["database ÷ pool"][..], &POOL_RATIO_COLUMNS].concat(),
    );
    let mut sweep = Vec::new();
    for &f in fractions {
        let mut ratios = Vec::new();
        for layout in [Layout::Row, Layout::Column] {
            let [t, m] = [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning]
                .map(|a| single(SingleSpec::disk(1, layout, a, Pool::of(pool_for(ssb, f)))));
            for (a, b) in [
                (m.pcm.bits_written, t.pcm.bits_written),
                (m.energy_pj(), t.energy_pj()),
                (m.latency_cycles(), t.latency_cycles()),
            ] {
                ratios.push(crate::join::ratio(a, b).unwrap_or(f64::NAN));
            }
        }
        let ratios: PoolRatios = ratios.try_into().expect("three ratios per layout");
        let mut row: Vec<Cell> = vec![f.into(), (pool_for(ssb, f) >> 10).into()];
        row.extend(ratios.iter().map(|&r| Cell::from(r)));
        table.row(row);
        sweep.push(ratios);
    }
    (table, sweep)
}

/// Indices of `specs` grouped by the load they start from ([`SingleSpec::load`]), groups
/// in the order of their first run, each in the order of `specs`.
pub(super) fn load_groups(specs: &[SingleSpec]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        match groups.iter_mut().find(|g| specs[g[0]].load() == spec.load()) {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

/// Every run without the users, each once (the pool sweep's 1/16 pool is the size sweep's
/// pool, and at quick scale the 1/32 one too): by size, the pool sweep, the smaller last
/// level, partitions sized to half the pool, and the column store reading every attribute.
pub(super) fn single_specs(base: &Ssb, factors: &[u64], pool_bytes: u64) -> Vec<SingleSpec> {
    let pool = Pool::of(pool_bytes);
    let mut specs = Vec::new();
    for &k in factors {
        specs.extend(VARIANTS.map(|(layout, algorithm)| SingleSpec::disk(k, layout, algorithm, pool)));
        specs.extend(
            [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning]
                .map(|a| SingleSpec::main_memory(k, a, pool, false)),
        );
    }
    for &f in &POOL_FRACTIONS {
        for layout in [Layout::Row, Layout::Column] {
            specs.extend(
                [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning]
                    .map(|a| SingleSpec::disk(1, layout, a, Pool::of(pool_for(base, f)))),
            );
        }
    }
    specs.extend(
        [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning]
            .map(|a| SingleSpec::main_memory(1, a, pool, true)),
    );
    let half = Pool { partition_bytes: pool_bytes / 2, ..pool };
    specs.extend(factors.iter().map(|&k| SingleSpec::disk(k, Layout::Column, Algorithm::CachePartitioning, half)));
    let all_columns = Pool { result_columns: ResultColumns::All, ..pool };
    specs.push(SingleSpec::disk(1, Layout::Column, Algorithm::VirtualPartitioning, all_columns));
    let mut unique: Vec<SingleSpec> = Vec::new();
    for spec in specs {
        if !unique.contains(&spec) {
            unique.push(spec);
        }
    }
    unique
}

/// The columns after the first of a table of modified ÷ traditional ratios by DRAM pool.
pub(super) const POOL_RATIO_COLUMNS: [&str; 7] =
    ["pool, KB", "row: wear", "row: energy", "row: latency", "column: wear", "column: energy", "column: latency"];

/// Runs `specs` (without the users) as parts on the context's pool, each on its own
/// memory; results in the order of `specs`, and on a failure the first failed run's error
/// in that order. `machines` are the machine and the one with its last level shrunk.
pub(super) fn run_singles(
    ctx: &RunContext,
    databases: &[Ssb],
    (machine, small_l3): (&Machine, &Machine),
    specs: &[SingleSpec],
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<Totals>, String> {
    // A group's own memory beyond the experiment's footprint: its simulated devices, DRAM
    // pool or cache image, relations and join pairs, and a second copy of the loaded state
    // while a run works on one: at most tens of MiB at quick scale, and at paper scale twice
    // the 768 MiB a run loading by itself was given (a few hundred MiB for the 4.0X
    // database, SF 0.2: 1.2 M order lines, which the experiment's measured 1 GiB with these
    // runs one at a time bounds).
    let groups = load_groups(specs);
    let totals = run_parts(ctx, &groups, ctx.scale.pick(64u64, 1_536) << 20, &|| {}, |group| {
        let runs: Vec<SingleSpec> = group.iter().map(|&i| specs[i]).collect();
        let ssb = &databases[usize::try_from(runs[0].size_factor - 1).expect("a size factor")];
        let machine = if runs[0].small_l3 { small_l3 } else { machine };
        let totals = measure(ssb, &runs, machine)?;
        group.iter().for_each(|_| tick());
        Ok(totals)
    })?;
    let mut out = vec![Totals::default(); specs.len()];
    for (group, totals) in groups.iter().zip(totals) {
        for (&i, t) in group.iter().zip(totals) {
            out[i] = t;
        }
    }
    Ok(out)
}
