//! `envy-parallel`: saturated TPC-A with and without parallel banks, against the SRAM
//! buffer's size, and the spare segments' control.

use nvmdb_envy::analytic::cleaning_cost;
use nvmdb_envy::tpca::{Tpca, TpcaConfig};
use nvmdb_envy::{CleaningPolicy, EnvyConfig};
use nvmdb_lab::{Cell, Experiment, Footprint, LabError, Outcome, RunContext, Scale, Table};
use serde_json::json;

use super::tpca::{self, TPCA_TEMPLATE};
use super::{envy_run_bytes, failed, SOURCE};

/// `envy-parallel`'s TPC-A array: [`tpca::array`] of 32 segments of 2048 pages (16 MB)
/// at quick scale, 64 of 16,384 (256 MB) at paper scale. Its many saturated runs each
/// load their own database, which on the 2 GB array of `envy-tpca` takes about 15 s.
fn parallel_config(scale: Scale, utilization: f64) -> EnvyConfig {
    let (segments, pages) = scale.pick((32, 2048), (64, 16_384));
    tpca::array(segments, pages, utilization)
}

/// Loads `envy-parallel`'s database on `config` from the PRNG stream 2.
fn load_tpca(config: EnvyConfig, ctx: &RunContext, id: &str) -> Result<(Tpca, TpcaConfig), LabError> {
    tpca::load(config, &TPCA_TEMPLATE, &mut ctx.rng(2), id)
}

/// Warm-up and measured transactions of `envy-parallel`'s runs below saturation.
fn tpca_sizes(scale: Scale) -> (u64, u64) {
    scale.pick((2_000, 3_000), (20_000, 20_000))
}

/// `envy-parallel`'s saturated runs: long enough to contain many cleans.
fn parallel_sizes(scale: Scale) -> (u64, u64) {
    scale.pick((2_000, 30_000), (20_000, 200_000))
}

/// One saturated run of `envy-parallel`: throughput and shares of the elapsed time.
struct SaturatedRun {
    tps: f64,
    cleans: u64,
    flushed_per_txn: f64,
    flash_busy: f64,
    busiest_bank: f64,
    reads: f64,
    writes: f64,
    buffer_waits: f64,
    spare_waits: f64,
    cleans_waiting: u64,
    /// Flushes queued behind their bank per 1000 transactions.
    flushes_queued: f64,
    flush_queue_ms: f64,
    copies: f64,
}

/// A row of the spare count's control: segments, spares, last partition's positions, the
/// seeds' costs in the measured window and in the later windows.
type ControlRow = (u32, u32, u32, Vec<f64>, Vec<f64>);

/// Windows of the measured transactions that the spare count's control runs on for,
/// after its measured window, to see whether that window's costs last.
const CONTROL_LATER_WINDOWS: u64 = 8;

/// `envy-parallel`.
#[derive(Debug)]
pub struct ParallelAndBuffer;

impl Experiment for ParallelAndBuffer {
    fn id(&self) -> &'static str {
        "envy-parallel"
    }
    /// Measured on the 2-core machine of BENCHMARKS.md: quick scale 34 s of CPU and 47 MB
    /// (`--jobs 2`, load 10–12); paper scale 218 s of CPU (user + system) and 632 MiB peak
    /// with its parts on two threads, at load 10–12 (2026-11-23). Before, 179 s at load 1–2,
    /// when its code path took 24 % more instructions (callgrind): CPU time under load is
    /// inflated.
    fn footprint(&self, scale: Scale) -> Footprint {
        scale.pick(Footprint::new(64, 34.0), Footprint::new(768, 218.0))
    }
    fn title(&self) -> &'static str {
        "eNVy: the effect of parallel banks and of the SRAM buffer size"
    }
    fn source(&self) -> &'static str {
        SOURCE
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let (warm, measured) = parallel_sizes(ctx.scale);
        let mut banks = Table::new(
            format!(
                "Saturated TPC-A (offered 10^6 TPS, {measured} transactions measured) with and without parallel banks"
            ),
            &["erase time, ms", "spare segments", "parallel banks", "throughput TPS", "cleaning cost", "cleans"],
        );
        let mut time = Table::new(
            "Where the saturated runs' time goes: flash busy time summed over the banks and of the busiest bank, \
             the host's time in reads and in writes (waits for a free buffer page included), the time cleans' \
             copies queued behind their destination spare's bank, and the time flushes queued behind their \
             target's bank; times as shares of the measured run's elapsed time",
            &[
                "erase time, ms",
                "spare segments",
                "parallel banks",
                "flash busy, all banks",
                "busiest bank",
                "host reads",
                "host writes",
                "of which waits for a buffer page",
                "writes that waited / 1000 transactions",
                "cleans",
                "cleans that waited for their spare",
                "cleans' wait for their spare",
                "flushes queued behind their bank / 1000 transactions",
                "mean queueing of a queued flush, ms",
                "cleaning copies' program time",
            ],
        );
        let mut rng = ctx.rng(5);
        let preset_erase_ns = parallel_config(ctx.scale, 0.8).flash.erase_ns;
        // The preset's erase time and one spare, with and without parallel banks; the
        // same with erases taking no time (isolates what the banks overlap); then more
        // spares with the preset's erase (isolates the spare's bank), the data segments
        // kept as full as with one spare (the logical size shrinks with them).
        let spare_counts: &[u32] = ctx.scale.pick(&[2, 4], &[2, 4, 8]);
        let mut runs: Vec<(u64, u32, bool)> = Vec::new();
        for erase_ns in [preset_erase_ns, 0] {
            runs.extend([(erase_ns, 1, false), (erase_ns, 1, true)]);
        }
        for &spares in spare_counts {
            runs.extend([(preset_erase_ns, spares, false), (preset_erase_ns, spares, true)]);
        }
        let bar = ctx.progress(self.id(), runs.len() as u64 + 13 * ctx.scale.pick(4, 1) + 8 + 3 + 4);
        let mut measured_runs = Vec::new();
        for &(erase_ns, spares, parallel) in &runs {
            let mut config = parallel_config(ctx.scale, 0.8);
            config.parallel_banks = parallel;
            config.flash.erase_ns = erase_ns;
            config.spare_segments = spares;
            // The data segments stay as full as with one spare: fewer of them hold less.
            let one_spare = parallel_config(ctx.scale, 0.8);
            config.logical_pages =
                one_spare.logical_pages * u64::from(config.positions()) / u64::from(one_spare.positions());
            let (mut db, _) = load_tpca(config, ctx, self.id())?;
            let r = db.run(1e6, warm, measured, &mut rng).map_err(failed(self.id()))?;
            let (busy, s) = db.with_envy(|e| (e.bank_busy_ns(), *e.stats()));
            let elapsed_ns = measured as f64 / r.throughput_tps * 1e9;
            let share = |ns: u64| ns as f64 / elapsed_ns;
            let run = SaturatedRun {
                tps: r.throughput_tps,
                cleans: s.cleans,
                flushed_per_txn: s.flush_programs as f64 / measured as f64,
                flash_busy: share(busy.iter().sum()),
                busiest_bank: share(busy.iter().copied().max().unwrap_or(0)),
                reads: share(s.host_read_ns),
                writes: share(s.host_write_ns),
                buffer_waits: share(s.buffer_wait_ns),
                spare_waits: share(s.spare_wait_ns),
                cleans_waiting: s.cleans_waiting_for_spare,
                flush_queue_ms: s.flush_queue_ns as f64 / 1e6 / s.flushes_queued.max(1) as f64,
                flushes_queued: s.flushes_queued as f64 * 1000.0 / measured as f64,
                copies: share(s.clean_programs * config.flash.program_ns),
            };
            let (erase_ms, on) = (erase_ns as f64 / 1e6, if parallel { "on" } else { "off" });
            banks.row(vec![
                erase_ms.into(),
                spares.into(),
                on.into(),
                r.throughput_tps.into(),
                r.cleaning_cost.into(),
                s.cleans.into(),
            ]);
            time.row(vec![
                erase_ms.into(),
                spares.into(),
                on.into(),
                run.flash_busy.into(),
                run.busiest_bank.into(),
                run.reads.into(),
                run.writes.into(),
                run.buffer_waits.into(),
                (s.buffer_full_waits as f64 * 1000.0 / measured as f64).into(),
                s.cleans.into(),
                s.cleans_waiting_for_spare.into(),
                run.spare_waits.into(),
                run.flushes_queued.into(),
                run.flush_queue_ms.into(),
                run.copies.into(),
            ]);
            measured_runs.push(run);
            bar.inc(1);
        }
        // Isolates the spare count's effect on the cleaning cost from the run's seed and
        // from the hybrid policy's partitions: the saturated run with parallel banks at 1,
        // 2 and 4 spares, each loaded and run from several seeds, with the preset's hybrid
        // policy and with greedy (no partitions), and the utilisation of the segments its
        // cleans erased.
        let seeds: u64 = ctx.scale.pick(4, 1);
        let hybrid = parallel_config(ctx.scale, 0.8).cleaning;
        let seed_parts: Vec<(CleaningPolicy, u32, u64)> = [hybrid, CleaningPolicy::Greedy]
            .iter()
            .flat_map(|&policy| {
                [1u32, 2, 4].into_iter().flat_map(move |spares| (0..seeds).map(move |seed| (policy, spares, seed)))
            })
            .collect();
        let spare_config = |policy: CleaningPolicy, spares: u32| {
            let mut config = parallel_config(ctx.scale, 0.8);
            config.parallel_banks = true;
            config.spare_segments = spares;
            config.cleaning = policy;
            let one_spare = parallel_config(ctx.scale, 0.8);
            config.logical_pages =
                one_spare.logical_pages * u64::from(config.positions()) / u64::from(one_spare.positions());
            config
        };
        let seed_runs = ctx.run_parts(
            &seed_parts,
            |&(policy, spares, _)| envy_run_bytes(&spare_config(policy, spares)),
            |&(policy, spares, seed)| {
                let mut rng = ctx.rng(100 + seed);
                let (mut db, _) = tpca::load(spare_config(policy, spares), &TPCA_TEMPLATE, &mut rng, self.id())?;
                db.run(1e6, warm, measured, &mut rng).map_err(failed(self.id()))?;
                bar.inc(1);
                Ok(db.with_envy(|e| *e.stats()))
            },
        )?;
        let mut spare_seeds = Table::new(
            format!(
                "Cleaning cost against spare segments over {seeds} seed(s) (saturated TPC-A, parallel banks, the \
                 preset's erase, {measured} transactions measured; each seed loads, ages and runs its own database)"
            ),
            &[
                "policy",
                "spare segments",
                "partition sizes (positions)",
                "seed stream",
                "cleans",
                "cleaning cost",
                "cleaned segments' u",
                "u/(1−u)",
            ],
        );
        let mut spare_costs: Vec<(&str, u32, Vec<f64>, Vec<f64>)> = Vec::new();
        for (&(policy, spares, seed), s) in seed_parts.iter().zip(&seed_runs) {
            let config = spare_config(policy, spares);
            let k = policy.partition_segments(config.positions());
            let sizes: Vec<String> = (0..config.positions())
                .step_by(k as usize)
                .map(|first| (config.positions() - first).min(k).to_string())
                .collect();
            let name = if policy == CleaningPolicy::Greedy { "greedy" } else { "hybrid" };
            spare_seeds.row(vec![
                name.into(),
                spares.into(),
                sizes.join(" ").into(),
                (100 + seed).into(),
                s.cleans.into(),
                s.cleaning_cost().into(),
                s.cleaned_utilization().into(),
                cleaning_cost(s.cleaned_utilization()).into(),
            ]);
            match spare_costs.last_mut() {
                Some((n, k, costs, us)) if *n == name && *k == spares => {
                    costs.push(s.cleaning_cost());
                    us.push(s.cleaned_utilization());
                }
                _ => spare_costs.push((name, spares, vec![s.cleaning_cost()], vec![s.cleaned_utilization()])),
            }
        }
        // The control for the spare count: hybrid with every partition equal at 1, 2 and
        // 4 spares (7 partitions of k positions), and at one spare with a last partition
        // of 1, k/2 and k − 1 positions. The array has one bank here, so the segment count
        // need not be a multiple of 8: cleaning decisions follow the pages written, not
        // the time, and the run at the preset's segments checks that against the seed table.
        let k = hybrid.partition_segments(u32::MAX);
        let preset_segments = parallel_config(ctx.scale, 0.8).segments;
        let mut control_shapes: Vec<(u32, u32)> = [1u32, 2, 4].iter().map(|&spares| (7 * k + spares, spares)).collect();
        control_shapes.extend([1, k / 2, k - 1].map(|rest| (7 * k + rest + 1, 1)));
        if !control_shapes.contains(&(preset_segments, 1)) {
            control_shapes.push((preset_segments, 1));
        }
        let control_parts: Vec<(u32, u32, u64)> = control_shapes
            .iter()
            .flat_map(|&(segments, spares)| (0..seeds).map(move |seed| (segments, spares, seed)))
            .collect();
        let control_config = |segments: u32, spares: u32| {
            let one_spare = parallel_config(ctx.scale, 0.8);
            let mut config = spare_config(hybrid, spares);
            config.banks = 1;
            config.segments = segments;
            config.logical_pages =
                one_spare.logical_pages * u64::from(config.positions()) / u64::from(one_spare.positions());
            config
        };
        let control_runs = ctx.run_parts(
            &control_parts,
            |&(segments, spares, _)| envy_run_bytes(&control_config(segments, spares)),
            |&(segments, spares, seed)| {
                let mut rng = ctx.rng(100 + seed);
                let config = control_config(segments, spares);
                let (mut db, _) = tpca::load(config, &TPCA_TEMPLATE, &mut rng, self.id())?;
                db.run(1e6, warm, measured, &mut rng).map_err(failed(self.id()))?;
                let first = db.with_envy(|e| *e.stats());
                // The same run continued: does the first window's cost last?
                db.run(1e6, 0, CONTROL_LATER_WINDOWS * measured, &mut rng).map_err(failed(self.id()))?;
                bar.inc(1);
                Ok((first, db.with_envy(|e| *e.stats())))
            },
        )?;
        let mut control = Table::new(
            format!(
                "The spare count's control: hybrid ({k}-position partitions) on one bank, saturated TPC-A as in the \
                 third table, with every partition equal at 1, 2 and 4 spares, and with one spare and a smaller \
                 last partition; the array with the preset's {preset_segments} segments and one spare is the third \
                 table's on one bank"
            ),
            &[
                "segments",
                "spare segments",
                "positions",
                "partition sizes (positions)",
                "seed stream",
                "cleans",
                "cleaning cost",
                "cleaned segments' u",
                "next windows: cleans",
                "cleaning cost",
                "cleaned segments' u",
            ],
        );
        let mut control_costs: Vec<ControlRow> = Vec::new();
        for (&(segments, spares, seed), (s, later)) in control_parts.iter().zip(&control_runs) {
            let config = control_config(segments, spares);
            let positions = config.positions();
            let sizes: Vec<String> =
                (0..positions).step_by(k as usize).map(|first| (positions - first).min(k).to_string()).collect();
            let last = if positions % k == 0 { k } else { positions % k };
            control.row(vec![
                segments.into(),
                spares.into(),
                positions.into(),
                sizes.join(" ").into(),
                (100 + seed).into(),
                s.cleans.into(),
                s.cleaning_cost().into(),
                s.cleaned_utilization().into(),
                later.cleans.into(),
                later.cleaning_cost().into(),
                later.cleaned_utilization().into(),
            ]);
            match control_costs.last_mut() {
                Some((g, sp, _, costs, later_costs)) if *g == segments && *sp == spares => {
                    costs.push(s.cleaning_cost());
                    later_costs.push(later.cleaning_cost());
                }
                _ => control_costs.push((segments, spares, last, vec![s.cleaning_cost()], vec![later.cleaning_cost()])),
            }
        }
        // The preset's shape on one bank against the seed table's 8-bank runs, seed by seed.
        let one_bank: Vec<f64> = control_parts
            .iter()
            .zip(&control_runs)
            .filter(|((segments, spares, _), _)| *segments == preset_segments && *spares == 1)
            .map(|(_, (s, _))| s.cleaning_cost())
            .collect();
        let eight_banks: Vec<f64> = seed_parts
            .iter()
            .zip(&seed_runs)
            .filter(|((policy, spares, _), _)| *policy == hybrid && *spares == 1)
            .map(|(_, s)| s.cleaning_cost())
            .collect();
        let mut suspend = Table::new(
            "Host reads with and without suspending a long operation (TPC-A, one spare, the preset's erase)",
            &[
                "offered TPS",
                "parallel banks",
                "suspend",
                "throughput TPS",
                "mean read ns",
                "mean write ns",
                "mean response µs",
                "writes that waited for a buffer page / 1000 transactions",
                "mean wait of such a write, ms",
                "mean write ns, those waits left out",
            ],
        );
        let (warm, measured) = tpca_sizes(ctx.scale);
        let mut suspend_rng = ctx.rng(8);
        let mut read_ns = Vec::new();
        let mut suspend_writes = Vec::new();
        let mut suspend_mean_write = Vec::new();
        for offered in [100.0, 1e6] {
            for parallel in [false, true] {
                for suspend_reads in [true, false] {
                    let mut config = parallel_config(ctx.scale, 0.8);
                    config.parallel_banks = parallel;
                    config.suspend_reads = suspend_reads;
                    let (mut db, _) = load_tpca(config, ctx, self.id())?;
                    let r = db.run(offered, warm, measured, &mut suspend_rng).map_err(failed(self.id()))?;
                    let s = db.with_envy(|e| *e.stats());
                    let unwaited_ns = (s.host_write_ns - s.buffer_wait_ns) as f64 / s.host_page_writes as f64;
                    let waits = (
                        s.buffer_full_waits as f64 * 1000.0 / measured as f64,
                        s.buffer_wait_ns as f64 / 1e6 / s.buffer_full_waits.max(1) as f64,
                        unwaited_ns,
                    );
                    suspend_writes.push((waits, s.host_read_ns, s.host_write_ns));
                    suspend.row(vec![
                        offered.into(),
                        if parallel { "on" } else { "off" }.into(),
                        if suspend_reads { "on" } else { "off" }.into(),
                        r.throughput_tps.into(),
                        r.mean_read_ns.into(),
                        r.mean_write_ns.into(),
                        (r.mean_response_ns / 1e3).into(),
                        waits.0.into(),
                        waits.1.into(),
                        waits.2.into(),
                    ]);
                    read_ns.push(r.mean_read_ns);
                    suspend_mean_write.push(r.mean_write_ns);
                    bar.inc(1);
                }
            }
        }
        // The buffer's part in the waits: the same 100 TPS serial runs with the quick
        // scale's buffer and with the paper scale's.
        let mut suspend_buffers = Table::new(
            "Suspend against the buffer size: TPC-A at 100 TPS offered, serial banks, one spare, with the quick \
             scale's buffer (256 pages) and the paper scale's (4,096 pages), all else as in the fourth table",
            &[
                "buffer pages",
                "suspend",
                "mean read ns",
                "mean write ns",
                "writes that waited for a buffer page / 1000 transactions",
                "mean wait of such a write, ms",
                "mean write ns, those waits left out",
            ],
        );
        let mut buffer_waits = Vec::new();
        for buffer_pages in [256u32, 4096] {
            for suspend_reads in [true, false] {
                let mut config = parallel_config(ctx.scale, 0.8);
                config.suspend_reads = suspend_reads;
                config.buffer_pages = buffer_pages;
                config.flush_threshold_pages = buffer_pages - (buffer_pages / 8).max(1);
                let (mut db, _) = load_tpca(config, ctx, self.id())?;
                let r = db.run(100.0, warm, measured, &mut ctx.rng(9)).map_err(failed(self.id()))?;
                let s = db.with_envy(|e| *e.stats());
                let waits = s.buffer_full_waits as f64 * 1000.0 / measured as f64;
                let wait_ms = s.buffer_wait_ns as f64 / 1e6 / s.buffer_full_waits.max(1) as f64;
                let unwaited = (s.host_write_ns - s.buffer_wait_ns) as f64 / s.host_page_writes as f64;
                suspend_buffers.row(vec![
                    buffer_pages.into(),
                    if suspend_reads { "on" } else { "off" }.into(),
                    r.mean_read_ns.into(),
                    r.mean_write_ns.into(),
                    waits.into(),
                    wait_ms.into(),
                    unwaited.into(),
                ]);
                buffer_waits.push((buffer_pages, suspend_reads, waits, wait_ms, r.mean_write_ns));
                bar.inc(1);
            }
        }
        let mut buffers = Table::new(
            "TPC-A at 25 TPS against the SRAM buffer size",
            &["buffer / flash", "buffer pages", "flushed pages / transaction", "mean write ns", "cleaning cost"],
        );
        let (warm, measured) = tpca_sizes(ctx.scale);
        for divisor in [1024u64, 256, 64] {
            let mut config = parallel_config(ctx.scale, 0.8);
            config.buffer_pages = (config.flash_pages() / divisor) as u32;
            config.flush_threshold_pages = config.buffer_pages - (config.buffer_pages / 8).max(1);
            let (mut db, _) = load_tpca(config, ctx, self.id())?;
            let r = db.run(25.0, warm, measured, &mut rng).map_err(failed(self.id()))?;
            buffers.row(vec![
                Cell::typed(format!("1/{divisor}"), [("fraction", (1.0 / divisor as f64).into())]),
                config.buffer_pages.into(),
                (r.flushed_pages_per_s / r.throughput_tps).into(),
                r.mean_write_ns.into(),
                r.cleaning_cost.into(),
            ]);
            bar.inc(1);
        }
        bar.finish_and_clear();
        let mut outcome = Outcome::default();
        let m = &measured_runs;
        outcome.holds("envy-parallel-faster", m[1].tps > m[0].tps);
        outcome.summary = format!(
            "With parallel banks the controller programs and erases different banks at once: saturated throughput \
             goes from {:.0} to {:.0} TPS with one spare segment. A larger SRAM buffer absorbs more rewrites before \
             they reach flash.",
            m[0].tps, m[1].tps
        );
        outcome.config = json!({"envy": parallel_config(ctx.scale, 0.8), "warmup_transactions": warm,
            "transactions": measured, "spare_segments": spare_counts, "seed": ctx.seed});
        outcome.tables.extend([banks, time, spare_seeds, suspend, buffers, control, suspend_buffers]);
        outcome.notes.push(format!(
            "The erase time, isolated (first table): with the preset's {:.0} ms erase and one spare, parallel banks \
             multiply the saturated throughput by {:.2} ({:.0} to {:.0} TPS, {} and {} cleans measured); with \
             erases taking no time, by {:.2} ({:.0} to {:.0} TPS). The array has {} banks.",
            preset_erase_ns as f64 / 1e6,
            m[1].tps / m[0].tps,
            m[0].tps,
            m[1].tps,
            m[0].cleans,
            m[1].cleans,
            m[3].tps / m[2].tps,
            m[2].tps,
            m[3].tps,
            parallel_config(ctx.scale, 0.8).banks
        ));
        outcome.notes.push(format!(
            "The spare's bank, isolated (second table; with more spares the logical size shrinks so that the data \
             segments stay 80 % × segments / (segments − 1) full). With the preset's erase, one spare and parallel \
             banks, {} \
             of the {} cleans found their destination spare's bank still busy, and their copies queued behind it \
             for {:.2} of the elapsed time. {:.0} flushes per 1000 transactions ({:.2} flushed pages per \
             transaction) found their target's bank busy (an erase or a clean's copies in progress there) and \
             queued {:.0} ms on average, holding their buffer page meanwhile. The busiest bank is busy {:.2}, all \
             banks together {:.2}; the host waits for a buffer page {:.2}. With one spare the destination is the segment the previous \
             clean erased. {}",
            m[1].cleans_waiting,
            m[1].cleans,
            m[1].spare_waits,
            m[1].flushes_queued,
            m[1].flushed_per_txn,
            m[1].flush_queue_ms,
            m[1].busiest_bank,
            m[1].flash_busy,
            m[1].buffer_waits,
            spare_counts
                .iter()
                .enumerate()
                .map(|(i, spares)| {
                    let (serial, parallel) = (&m[4 + 2 * i], &m[5 + 2 * i]);
                    format!(
                        "With {spares} spares: parallel banks give {:.0} TPS ({:.2}× the serial {:.0}), {} of {} \
                         cleans waited for their spare ({:.2} of the time), {:.0} flushes per 1000 transactions \
                         queued {:.0} ms on average, the busiest bank is busy {:.2}, the host waits for a buffer \
                         page {:.2}.",
                        parallel.tps,
                        parallel.tps / serial.tps,
                        serial.tps,
                        parallel.cleans_waiting,
                        parallel.cleans,
                        parallel.spare_waits,
                        parallel.flushes_queued,
                        parallel.flush_queue_ms,
                        parallel.busiest_bank,
                        parallel.buffer_waits
                    )
                })
                .collect::<Vec<_>>()
                .join(" ")
        ));
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let describe = |name: &str| {
            spare_costs
                .iter()
                .filter(|(n, ..)| *n == name)
                .map(|(_, spares, costs, us)| {
                    let (lo, hi) = costs.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &c| (lo.min(c), hi.max(c)));
                    format!(
                        "{spares} spare(s) {:.2} (from {lo:.2} to {hi:.2}; cleaned segments' u {:.3})",
                        mean(costs),
                        mean(us)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        // The hybrid runs' last partition (positions % k, a whole partition when 0) beside
        // their mean cost.
        let k = hybrid.partition_segments(u32::MAX);
        let last: Vec<(u32, f64)> = spare_costs
            .iter()
            .filter(|(n, ..)| *n == "hybrid")
            .map(|(_, spares, costs, _)| {
                let positions = parallel_config(ctx.scale, 0.8).segments - spares;
                let rest = positions % k;
                (if rest == 0 { k } else { rest }, mean(costs))
            })
            .collect();
        let costliest = last.iter().copied().fold((0, f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
        let smallest = last.iter().map(|l| l.0).min().unwrap_or(k);
        let last_partition = format!(
            "With hybrid, the last partition has {} positions and the mean cost is {}; the highest mean cost \
             ({:.2}) is {}with the smallest last partition ({smallest} positions).",
            last.iter().map(|l| l.0.to_string()).collect::<Vec<_>>().join(", "),
            last.iter().map(|l| format!("{:.2}", l.1)).collect::<Vec<_>>().join(", "),
            costliest.1,
            if costliest.0 == smallest { "" } else { "not " },
        );
        let follows = spare_costs.iter().all(|(n, _, c, u)| {
            spare_costs
                .iter()
                .filter(|(m, ..)| m == n)
                .all(|(_, _, c2, u2)| (mean(c) - mean(c2)) * (mean(u) - mean(u2)) >= 0.0)
        });
        let verdict = |name: &str| {
            let runs: Vec<&(&str, u32, Vec<f64>, Vec<f64>)> = spare_costs.iter().filter(|(n, ..)| *n == name).collect();
            let means: Vec<f64> = runs.iter().map(|(.., c, _)| mean(c)).collect();
            let spread = |v: &[f64]| {
                v.iter().copied().fold(f64::NEG_INFINITY, f64::max) - v.iter().copied().fold(f64::INFINITY, f64::min)
            };
            let between = spread(&means);
            let within = runs.iter().map(|(.., c, _)| spread(c)).fold(0.0, f64::max);
            let seed_clause =
                if seeds > 1 { format!("seeds of one count up to {within:.2}") } else { "one seed per count".into() };
            if means.windows(2).all(|w| w[1] <= w[0]) {
                format!("the means fall as spares are added ({between:.2} apart; {seed_clause})")
            } else if seeds > 1 && between <= within {
                format!("the means lie {between:.2} apart, no further than the seeds of one count ({within:.2})")
            } else {
                format!("the means do not fall monotonically ({between:.2} apart; {seed_clause})")
            }
        };
        outcome.notes.push(format!(
            "Spare segments and the cleaning cost, isolated (third table, parallel banks on, {seeds} seed(s) per \
             count). Mean cost with the preset's hybrid policy: {}; {}. With greedy, which has no partitions: \
             {}; {}. The hybrid policy cuts the positions (all segments but the spares) into partitions of {} \
             from the lowest up, so the spare count changes the size of the last partition (the table's third \
             column). {} {}",
            describe("hybrid"),
            verdict("hybrid"),
            describe("greedy"),
            verdict("greedy"),
            hybrid.partition_segments(u32::MAX),
            if follows {
                "Within each policy, the spare count with the higher mean cost is the one whose cleans erased \
                 fuller segments."
            } else {
                "Within a policy, the mean cost and the cleaned segments' utilisation do not always rank the spare \
                 counts alike."
            },
            last_partition,
        ));
        // The equal-partition controls' mean costs over the window `costs` picks, by spare count.
        let equal_means = |costs: fn(&ControlRow) -> &[f64]| -> Vec<String> {
            [1u32, 2, 4]
                .iter()
                .map(|&spares| {
                    let row = control_costs.iter().find(|c| c.0 == 7 * k + spares && c.1 == spares);
                    format!("{spares} spare(s) {:.2}", row.map_or(f64::NAN, |c| mean(costs(c))))
                })
                .collect()
        };
        let equal = equal_means(|c| &c.3);
        let equal_later = equal_means(|c| &c.4);
        // One spare, by the last partition's size: (size, first window's mean, later mean).
        let mut by_last: Vec<(u32, f64, f64)> =
            control_costs.iter().filter(|c| c.1 == 1).map(|c| (c.2, mean(&c.3), mean(&c.4))).collect();
        by_last.sort_by_key(|l| l.0);
        let spread = |v: &[f64]| {
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max) - v.iter().copied().fold(f64::INFINITY, f64::min)
        };
        let rank = |key: fn(&(u32, f64, f64)) -> f64| {
            let mut order: Vec<u32> = (0..by_last.len() as u32).collect();
            order.sort_by(|&a, &b| key(&by_last[a as usize]).total_cmp(&key(&by_last[b as usize])));
            order
        };
        let same_order = rank(|l| l.1) == rank(|l| l.2);
        let first_means: Vec<f64> = control_costs.iter().map(|c| mean(&c.3)).collect();
        let later_means: Vec<f64> = control_costs.iter().map(|c| mean(&c.4)).collect();
        let same_as_eight_banks = one_bank == eight_banks;
        let saturated = parallel_sizes(ctx.scale).1;
        outcome.notes.push(format!(
            "The spare count's control (sixth table, one bank, {seeds} seed(s) per row). With every partition \
             equal ({k} positions each, 7 partitions), hybrid's mean cost is {}. With one spare and a last \
             partition of {}, it is {}. The same runs continued for {CONTROL_LATER_WINDOWS} × {saturated} more \
             transactions cost {} with equal partitions and {} with the last partition of {}: the rows' means lie \
             {:.2} apart there against {:.2} in the first {saturated} transactions, and ordered by cost the last \
             partitions come {}. {}",
            equal.join(", "),
            by_last.iter().map(|l| l.0.to_string()).collect::<Vec<_>>().join(", "),
            by_last.iter().map(|l| format!("{:.2}", l.1)).collect::<Vec<_>>().join(", "),
            equal_later.join(", "),
            by_last.iter().map(|l| format!("{:.2}", l.2)).collect::<Vec<_>>().join(", "),
            by_last.iter().map(|l| l.0.to_string()).collect::<Vec<_>>().join(", "),
            spread(&later_means),
            spread(&first_means),
            if same_order {
                "in the same order in both"
            } else {
                "in another order than in the first transactions: the first window's costs do not last"
            },
            if same_as_eight_banks {
                format!(
                    "On one bank the preset's {preset_segments} segments with one spare cost exactly what they cost \
                     on 8 banks in the third table, seed by seed: the cleaning decisions follow the pages written, \
                     not the time."
                )
            } else {
                format!(
                    "On one bank the preset's {preset_segments} segments with one spare cost {} against {} on 8 \
                     banks (third table), seed by seed: the bank count changes the cleaning decisions.",
                    one_bank.iter().map(|c| format!("{c:.3}")).collect::<Vec<_>>().join(", "),
                    eight_banks.iter().map(|c| format!("{c:.3}")).collect::<Vec<_>>().join(", "),
                )
            }
        ));
        let buffer_words: Vec<String> = buffer_waits
            .iter()
            .map(|&(pages, on, waits, wait_ms, write_ns)| {
                format!(
                    "{pages} pages, suspend {}: {waits:.1} writes per 1000 transactions waited {wait_ms:.2} ms each, \
                     writes average {write_ns:.0} ns",
                    if on { "on" } else { "off" }
                )
            })
            .collect();
        outcome.notes.push(format!(
            "Suspend and the buffer size, isolated (seventh table, 100 TPS, serial banks, this scale's array with \
             each scale's buffer): {}.",
            buffer_words.join("; ")
        ));
        // read_ns: [100 TPS, saturated] × [serial, parallel] × [suspend on, off].
        outcome.notes.push(format!(
            "Suspend (fourth table, {measured} transactions): at 100 TPS offered, the mean host read takes {:.0} ns \
             with suspend and {:.0} ns without on serial banks, {:.0} and {:.0} ns with parallel banks; saturated, \
             {:.0} and {:.0} ns serial, {:.0} and {:.0} ns parallel. With parallel banks a suspended operation \
             finishes later by the suspend and the read, as on serial banks, and the controller's own reads \
             (cleaning, recovery) suspend nothing.",
            read_ns[0], read_ns[1], read_ns[2], read_ns[3], read_ns[4], read_ns[5], read_ns[6], read_ns[7],
        ));
        let per_txn_ms = |ns: u64| ns as f64 / 1e6 / measured as f64;
        let ((on_waits, on_wait_ms, on_unwaited), on_read, on_write) = suspend_writes[0];
        let ((off_waits, _, off_unwaited), off_read, off_write) = suspend_writes[1];
        let (on_mean, off_mean) = (suspend_mean_write[0], suspend_mean_write[1]);
        let with_suspend = if on_waits > 0.0 {
            format!(
                "With suspend the read takes the suspend and a read and the transaction goes on writing; \
                 {on_waits:.1} writes per 1000 transactions waited for a buffer page while the flash was busy, \
                 {on_wait_ms:.2} ms each, and with those waits left out writes average {on_unwaited:.0} ns."
            )
        } else {
            format!(
                "With suspend the read takes the suspend and a read, no write waited for a buffer page, and writes \
                 average {on_unwaited:.0} ns."
            )
        };
        outcome.notes.push(format!(
            "Write latency and suspend (fourth table, 100 TPS, serial banks): writes average {on_mean:.0} ns with \
             suspend and {off_mean:.0} ns without. A copy-on-write first reads its page from flash. Without suspend \
             that read waits for the program or erase in progress: writes average {off_unwaited:.0} ns with \
             {off_waits:.1} writes per 1000 transactions waiting for a buffer page. {with_suspend} Per transaction \
             the host spends {:.3} ms in reads and {:.3} ms in writes with suspend, {:.3} and {:.3} ms without.",
            per_txn_ms(on_read),
            per_txn_ms(on_write),
            per_txn_ms(off_read),
            per_txn_ms(off_write),
        ));
        let (serial, parallel) = (&m[2], &m[3]);
        outcome.notes.push(format!(
            "With erases taking no time and parallel banks, the busiest bank is busy {:.2} of the elapsed time; \
             the host waits for a free buffer page {:.2} of it, and the cleaning copies' program time is {:.2} of \
             it. Without parallel banks the host waits {:.2} of the time and its reads, which suspend the one long \
             operation in progress, take {:.2}.",
            parallel.busiest_bank, parallel.buffer_waits, parallel.copies, serial.buffer_waits, serial.reads,
        ));
        Ok(outcome)
    }
}
