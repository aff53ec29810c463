//! What makes `cidr-fig9-gap-230`: simple's and virtual partitioning's time at T_w = 230
//! split into its parts, and the same joins re-run with one factor of the time model
//! changed at a time.
//!
//! The memory-only time (`estimated_cycles`) is exactly the hit latencies of every level
//! probed, plus T_l per PCM fetch, plus the cycles a fetch or a full write queue waits
//! behind write-backs; the first two come from the counters, the stalls are the rest
//! (zero when write-backs are free, which the tests check). The CPU model's time adds
//! the joins' declared instructions, the DTLB and the overlap of their independent
//! misses; re-running with those hints withheld gives its gap without each.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

use nvmdb_device::PcmMetrics;
use nvmdb_join::join::Algorithm;
use nvmdb_join::model::{cost, ModelParams, Workload};
use nvmdb_join::relation::Layout;
use nvmdb_join::synth::SynthSpec;
use nvmdb_lab::{Cell, LabError, RunContext, Table};

use super::{data_seed, is_shared, shared_join, DEFAULT_RECORD_BYTES};
use crate::join::{ratio, run_synthetic_hinted, Hints, Machine, Measurement};
use crate::papers;

/// The T_w of the claim, cycles (equal to T_l).
const T_W: u64 = 230;

/// Record sizes at which the gap is also measured with write-backs free.
const OTHER_RECORD_BYTES: [u64; 2] = [20, 100];

/// One join's time in parts.
#[derive(Debug, Clone, Copy)]
struct Split {
    /// Hit latency of every level probed, cycles.
    hits: u64,
    /// T_l per PCM line fetch, cycles.
    fetches: u64,
    /// Waits behind write-backs (a busy rank, a full write queue), cycles.
    stalls: u64,
    /// The memory-only time, the sum of the three.
    memory: u64,
    /// The CPU time model's cycles (the joins' declared instructions, hit latency of the
    /// level that hits, DTLB, overlapped independent misses, fetches waiting only for the
    /// write in progress).
    cpu: u64,
    /// Instructions the CPU model counted (loads and stores and the declared ones).
    instructions: u64,
    dtlb_misses: u64,
    lines_read: u64,
    lines_written: u64,
    /// Hits below L1.
    lower_hits: u64,
}

impl Split {
    fn of(m: &Measurement, machine: &Machine, metrics: &PcmMetrics) -> Split {
        let r = &m.report;
        let hits =
            r.cache_levels.iter().zip(&machine.cache.levels).map(|(s, l)| (s.hits + s.misses) * l.latency_cycles).sum();
        let fetches = r.pcm.lines_read * metrics.t_l_cycles;
        let memory = m.cycles();
        let stalls = memory.checked_sub(hits + fetches).expect("memory time covers its hit latencies and fetches");
        Split {
            hits,
            fetches,
            stalls,
            memory,
            cpu: r.cpu.cycles,
            instructions: r.cpu.instructions,
            dtlb_misses: r.cpu.dtlb_misses,
            lines_read: r.pcm.lines_read,
            lines_written: r.pcm.lines_written,
            lower_hits: r.cache_levels.iter().skip(1).map(|s| s.hits).sum(),
        }
    }
}

/// Simple and virtual partitioning on one machine and PCM timing.
#[derive(Debug, Clone, Copy)]
struct Pair {
    simple: Split,
    virtual_: Split,
}

impl Pair {
    /// Simple ÷ virtual partitioning − 1, percent, of the memory-only time.
    fn gap(&self) -> f64 {
        100.0 * (ratio(self.simple.memory, self.virtual_.memory).unwrap_or(0.0) - 1.0)
    }
    /// The same of the CPU model's time.
    fn cpu_gap(&self) -> f64 {
        100.0 * (ratio(self.simple.cpu, self.virtual_.cpu).unwrap_or(0.0) - 1.0)
    }
}

fn spec(machine: &Machine, record_bytes: u64) -> SynthSpec {
    SynthSpec { r_bytes: machine.r_bytes, record_bytes, match_per_r: 1, layout: Layout::Row }
}

/// Both joins at `record_bytes`, on the data `cidr-fig9`'s sweep uses at that size: from
/// the simulations the sweep shares ([`shared_join`]) when they are timed at `metrics`.
fn measure(seed: u64, machine: &Machine, metrics: PcmMetrics, record_bytes: u64, id: &str) -> Result<Pair, LabError> {
    let spec = spec(machine, record_bytes);
    if !is_shared(machine, &spec, metrics) {
        return measure_hinted(seed, machine, metrics, record_bytes, id, Hints::ALL);
    }
    let seed = data_seed(seed, record_bytes);
    let run =
        |a| shared_join(machine, &spec, metrics.t_w_cycles, a, seed, id).map(|m| Split::of(&m, machine, &metrics));
    Ok(Pair { simple: run(Algorithm::Simple)?, virtual_: run(Algorithm::VirtualPartitioning)? })
}

/// [`measure`] with only `hints` reaching the CPU model.
fn measure_hinted(
    seed: u64,
    machine: &Machine,
    metrics: PcmMetrics,
    record_bytes: u64,
    id: &str,
    hints: Hints,
) -> Result<Pair, LabError> {
    let seed = data_seed(seed, record_bytes);
    let spec = spec(machine, record_bytes);
    let run =
        |a| run_synthetic_hinted(machine, metrics, &spec, a, seed, id, hints).map(|m| Split::of(&m, machine, &metrics));
    Ok(Pair { simple: run(Algorithm::Simple)?, virtual_: run(Algorithm::VirtualPartitioning)? })
}

/// Table 4's N_l of simple over virtual partitioning's at `record_bytes`.
fn model_fetch_ratio(machine: &Machine, record_bytes: u64) -> f64 {
    let s = spec(machine, record_bytes);
    let w = Workload {
        m_r: s.r_rows() as f64,
        l_r: record_bytes as f64,
        m_s: s.s_rows() as f64,
        l_s: record_bytes as f64,
        match_per_s: 1.0,
    };
    let n_l = |a| cost(a, &w, &ModelParams::CIDR2011).total().n_l;
    n_l(Algorithm::Simple) / n_l(Algorithm::VirtualPartitioning)
}

/// One factor of the time model changed from `cidr-fig9`'s run at T_w = 230.
struct Variant {
    label: &'static str,
    machine: Machine,
    metrics: PcmMetrics,
    hints: Hints,
}

fn variants(machine: &Machine) -> Vec<Variant> {
    let base = PcmMetrics { t_w_cycles: T_W, ..PcmMetrics::CIDR2011 };
    let many_ranks =
        Machine { cache: nvmdb_memory::CacheConfig { ranks: 64, ..machine.cache.clone() }, ..machine.clone() };
    let mut no_hit_latency = machine.clone();
    for level in &mut no_hit_latency.cache.levels {
        level.latency_cycles = 0;
    }
    let all = Hints::ALL;
    let hinted = |label, hints| Variant { label, machine: machine.clone(), metrics: base, hints };
    vec![
        hinted("as measured (T_w = 230)", all),
        Variant {
            label: "write-backs free (T_w = 0)",
            machine: machine.clone(),
            metrics: PcmMetrics { t_w_cycles: 0, ..base },
            hints: all,
        },
        Variant { label: "64 PCM ranks instead of 4", machine: many_ranks, metrics: base, hints: all },
        Variant {
            label: "fetches free (T_l = 0)",
            machine: machine.clone(),
            metrics: PcmMetrics { t_l_cycles: 0, ..base },
            hints: all,
        },
        Variant { label: "cache hit latencies 0", machine: no_hit_latency, metrics: base, hints: all },
        hinted("CPU model without the declared instructions", Hints { instructions: false, overlap: true }),
        hinted("CPU model without overlapped misses", Hints { instructions: true, overlap: false }),
        hinted("CPU model with neither (accesses and DTLB only)", Hints { instructions: false, overlap: false }),
    ]
}

const M: f64 = 1e6;

fn decomposition_table(bytes: u64, pair: &Pair) -> Table {
    let mut table = Table::new(
        format!(
            "Figure 9(c), the 6% gap: join time at T_w = {T_W} in parts, {bytes} B records, MatchPerR 1 (memory-only \
             time = hit latencies + fetches + stalls behind write-backs)"
        ),
        &[
            "algorithm",
            "hit latencies, M cycles",
            "fetches N_l·T_l, M cycles",
            "stalls behind write-backs, M cycles",
            "memory-only time, M cycles",
            "N_l",
            "N_lw",
            "CPU-model time, M cycles",
            "instructions, M",
            "DTLB misses",
        ],
    );
    let row = |name: &str, s: &Split| -> Vec<Cell> {
        vec![
            name.into(),
            (s.hits as f64 / M).into(),
            (s.fetches as f64 / M).into(),
            (s.stalls as f64 / M).into(),
            (s.memory as f64 / M).into(),
            s.lines_read.into(),
            s.lines_written.into(),
            (s.cpu as f64 / M).into(),
            (s.instructions as f64 / M).into(),
            s.dtlb_misses.into(),
        ]
    };
    let (s, v) = (&pair.simple, &pair.virtual_);
    table.row(row("simple", s));
    table.row(row("virtual partitioning", v));
    let diff = |a: u64, b: u64| Cell::from((a as f64 - b as f64) / M);
    let count =
        |a: u64, b: u64| Cell::from(i64::try_from(a).unwrap_or(i64::MAX) - i64::try_from(b).unwrap_or(i64::MAX));
    table.row(vec![
        "simple − virtual".into(),
        diff(s.hits, v.hits),
        diff(s.fetches, v.fetches),
        diff(s.stalls, v.stalls),
        diff(s.memory, v.memory),
        count(s.lines_read, v.lines_read),
        count(s.lines_written, v.lines_written),
        diff(s.cpu, v.cpu),
        diff(s.instructions, v.instructions),
        count(s.dtlb_misses, v.dtlb_misses),
    ]);
    table
}

fn variants_table(bytes: u64, rows: &[(&str, Pair)]) -> Table {
    let mut table = Table::new(
        format!(
            "Figure 9(c), the 6% gap: simple ÷ virtual partitioning − 1 with one factor of the time model changed, \
             {bytes} B records, MatchPerR 1"
        ),
        &[
            "variant",
            "gap, memory-only time, %",
            "gap, CPU-model time, %",
            "paper, %",
            "simple stalls, M cycles",
            "virtual stalls, M cycles",
        ],
    );
    let paper = papers::stated_value("cidr-fig9-gap-230");
    for (i, (label, pair)) in rows.iter().enumerate() {
        table.row(vec![
            (*label).into(),
            pair.gap().into(),
            pair.cpu_gap().into(),
            if i == 0 { Cell::from(paper) } else { Cell::Missing },
            (pair.simple.stalls as f64 / M).into(),
            (pair.virtual_.stalls as f64 / M).into(),
        ]);
    }
    table
}

/// The decomposition and the isolating runs: tables and a note stating what they show.
pub(super) fn gap_report(ctx: &RunContext, machine: &Machine, id: &str) -> Result<(Vec<Table>, String), LabError> {
    let bytes = DEFAULT_RECORD_BYTES;
    let runs = variants(machine);
    let bar = ctx.progress(&format!("{id} gap"), (runs.len() + OTHER_RECORD_BYTES.len()) as u64);
    let mut rows = Vec::new();
    for variant in &runs {
        let pair = if variant.hints == Hints::ALL && variant.machine == *machine {
            measure(ctx.seed, machine, variant.metrics, bytes, id)?
        } else {
            measure_hinted(ctx.seed, &variant.machine, variant.metrics, bytes, id, variant.hints)?
        };
        rows.push((variant.label, pair));
        bar.inc(1);
    }
    let mut free_by_size = Vec::new();
    let free = PcmMetrics { t_w_cycles: 0, ..PcmMetrics::CIDR2011 };
    let mut by_size = Table::new(
        "Figure 9(c), the 6% gap with write-backs free (T_w = 0), by record size, MatchPerR 1",
        &["record bytes", "gap, memory-only time, %", "N_l simple ÷ virtual", "Table 4's N_l ratio"],
    );
    for &b in &OTHER_RECORD_BYTES {
        let pair = measure(ctx.seed, machine, free, b, id)?;
        free_by_size.push((b, pair.gap()));
        by_size.row(vec![
            b.into(),
            pair.gap().into(),
            ratio(pair.simple.lines_read, pair.virtual_.lines_read).into(),
            model_fetch_ratio(machine, b).into(),
        ]);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let base = rows[0].1;
    by_size.row(vec![
        bytes.into(),
        rows[1].1.gap().into(),
        ratio(base.simple.lines_read, base.virtual_.lines_read).into(),
        model_fetch_ratio(machine, bytes).into(),
    ]);
    let note = gap_note(bytes, machine, &rows, &free_by_size);
    Ok((vec![decomposition_table(bytes, &base), variants_table(bytes, &rows), by_size], note))
}

/// What the decomposition and the variants show, from their numbers.
fn gap_note(bytes: u64, machine: &Machine, rows: &[(&str, Pair)], free_by_size: &[(u64, f64)]) -> String {
    let (base, free, ranks) = (&rows[0].1, &rows[1].1, &rows[2].1);
    let (no_instructions, no_overlap, neither) = (&rows[5].1, &rows[6].1, &rows[7].1);
    let (s, v) = (&base.simple, &base.virtual_);
    let d = |a: u64, b: u64| (a as f64 - b as f64) / M;
    let paper = papers::stated_value("cidr-fig9-gap-230") / 100.0;
    // The cycles both joins would need on top, with these parts unchanged, for the paper's gap.
    let common = (s.memory as f64 - (1.0 + paper) * v.memory as f64) / paper;
    let r_rows = spec(machine, bytes).r_rows() as f64;
    format!(
        "At {bytes} B, T_w = {T_W}, simple takes {:.1} M memory-only cycles against virtual partitioning's {:.1} M \
         (gap {:.1}%). Of the {:.1} M difference, {:.1} M is fetches (simple fetches {} lines against {}, {:.2}×; \
         Table 4: {:.2}×), {:.1} M stalls behind write-backs (simple writes back {} lines against {}) and {:.1} M hit \
         latencies (virtual partitioning hits below L1 {} times, simple {}). With write-backs free (T_w = 0) the gap \
         is {:.1}% ({}), with 64 ranks {:.1}%: write-back stalls make {:.1} points of it, simple's extra fetches less \
         virtual partitioning's extra hit latencies the rest. The memory-only time makes a fetch wait for its rank's \
         whole write backlog; the CPU model without the joins' hints, whose fetches wait only for the write in \
         progress, gives {:.1}% (it also charges simple's {} more DTLB misses and only the latency of the level that \
         hits), so the backlog rule does not make the gap. With the joins' declared instructions ({:.1} M more \
         CPU-model cycles for simple, {:.1} M for virtual partitioning) and their independent misses overlapped, the \
         CPU model's gap is {:.1}% ({:.1}% with write-backs free); without the instructions it is {:.1}%, without the \
         overlap {:.1}%. With the memory-only parts unchanged, a gap of {:.0}% would need {:.0} M more cycles common \
         to both joins ({:.1}× virtual partitioning's memory-only time, {:.0} cycles per R record).",
        s.memory as f64 / M,
        v.memory as f64 / M,
        base.gap(),
        d(s.memory, v.memory),
        d(s.fetches, v.fetches),
        s.lines_read,
        v.lines_read,
        ratio(s.lines_read, v.lines_read).unwrap_or(0.0),
        model_fetch_ratio(machine, bytes),
        d(s.stalls, v.stalls),
        s.lines_written,
        v.lines_written,
        d(s.hits, v.hits),
        v.lower_hits,
        s.lower_hits,
        free.gap(),
        free_by_size.iter().map(|(b, g)| format!("{g:.1}% at {b} B")).collect::<Vec<_>>().join(", "),
        ranks.gap(),
        base.gap() - free.gap(),
        neither.cpu_gap(),
        s.dtlb_misses.saturating_sub(v.dtlb_misses),
        d(s.cpu, no_instructions.simple.cpu),
        d(v.cpu, no_instructions.virtual_.cpu),
        base.cpu_gap(),
        free.cpu_gap(),
        no_instructions.cpu_gap(),
        no_overlap.cpu_gap(),
        100.0 * paper,
        common / M,
        common / v.memory as f64,
        common / r_rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvmdb_lab::Scale;

    /// Withholding the joins' hints from the CPU model changes neither the memory-only
    /// time nor a counter, only the CPU model's cycles, which the instructions raise.
    #[test]
    fn hints_move_only_the_cpu_model_time() {
        let machine = Machine::for_scale(Scale::Quick);
        let metrics = PcmMetrics { t_w_cycles: T_W, ..PcmMetrics::CIDR2011 };
        let run =
            |hints| measure_hinted(42, &machine, metrics, DEFAULT_RECORD_BYTES, "test", hints).expect("joins run");
        let (all, neither) = (run(Hints::ALL), run(Hints { instructions: false, overlap: false }));
        for (a, n) in [(all.simple, neither.simple), (all.virtual_, neither.virtual_)] {
            assert_eq!((a.memory, a.lines_read, a.lines_written), (n.memory, n.lines_read, n.lines_written));
            assert!(a.instructions > n.instructions, "{a:?} {n:?}");
            assert_ne!(a.cpu, n.cpu, "{a:?} {n:?}");
        }
    }

    /// The mechanism of the quick-scale gap at T_w = 230: write-back stalls are the only
    /// part T_w changes (none left when writes are free), they add points to the gap, and
    /// what remains comes from simple's extra fetches, in Table 4's proportion.
    #[test]
    fn the_gap_is_extra_fetches_plus_write_back_stalls() {
        let machine = Machine::for_scale(Scale::Quick);
        let base = PcmMetrics { t_w_cycles: T_W, ..PcmMetrics::CIDR2011 };
        let at_230 = measure(42, &machine, base, DEFAULT_RECORD_BYTES, "test").expect("joins run");
        let free = measure(42, &machine, PcmMetrics { t_w_cycles: 0, ..base }, DEFAULT_RECORD_BYTES, "test")
            .expect("joins run");
        assert_eq!((free.simple.stalls, free.virtual_.stalls), (0, 0), "with free write-backs nothing stalls");
        assert_eq!(free.simple.lines_read, at_230.simple.lines_read, "T_w changes no fetch");
        assert!(at_230.simple.stalls > 4 * at_230.virtual_.stalls, "{at_230:?}");
        let stall_points = at_230.gap() - free.gap();
        assert!(stall_points > 5.0, "write-back stalls add {stall_points:.1} points");
        assert!(free.gap() > 10.0, "the gap without write-backs is {:.1}%", free.gap());
        let fetch_ratio = ratio(free.simple.lines_read, free.virtual_.lines_read).expect("fetches");
        let model = model_fetch_ratio(&machine, DEFAULT_RECORD_BYTES);
        assert!((fetch_ratio / model - 1.0).abs() < 0.1, "N_l ratio {fetch_ratio:.3}, Table 4 {model:.3}");
        // Without write-backs simple's extra fetches are more than the whole difference:
        // virtual partitioning's extra hit latencies take back the rest.
        let extra = |a: u64, b: u64| i128::from(a) - i128::from(b);
        assert!(
            extra(free.simple.fetches, free.virtual_.fetches) > extra(free.simple.memory, free.virtual_.memory),
            "{free:?}"
        );
    }
}
