//! `cidr-fig7`, `cidr-fig8`, `cidr-fig9`: the simulated hash joins of CIDR 2011 Section 4.3
//! and the E_wb / T_w sensitivity of Section 4.4.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

use nvmdb_device::PcmMetrics;
use nvmdb_lab::{Cell, Experiment, Footprint, LabError, Outcome, Plot, RunContext, Scale, Stated, Table};
use serde_json::json;

use super::{ratio, run_synthetic, Machine, Measurement, QUICK_SHRINK};
use nvmdb_join::join::Algorithm;
use nvmdb_join::model::{cost, Metric, ModelParams, Workload};
use nvmdb_join::relation::Layout;
use nvmdb_join::synth::SynthSpec;

use crate::papers;

/// Record size of the MatchPerR sweep and of Figures 8 and 9. The paper does not state
/// it; 60 B is the middle of Figure 7's record-size axis.
pub(super) const DEFAULT_RECORD_BYTES: u64 = 60;

/// The three algorithms measured at one configuration, in [`Algorithm::ALL`] order.
struct Point {
    x: u64,
    spec: SynthSpec,
    runs: Vec<Measurement>,
}

impl Point {
    fn get(&self, a: Algorithm) -> &Measurement {
        &self.runs[Algorithm::ALL.iter().position(|&b| b == a).expect("listed")]
    }
}

fn measure_point(
    ctx: &RunContext,
    machine: &Machine,
    metrics: PcmMetrics,
    x: u64,
    spec: SynthSpec,
    id: &str,
) -> Result<Point, LabError> {
    let seed = ctx.seed ^ x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let runs = Algorithm::ALL
        .iter()
        .map(|&a| run_synthetic(machine, metrics, &spec, a, seed, id))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Point { x, spec, runs })
}

fn short(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Simple => "simple",
        Algorithm::CachePartitioning => "cache part.",
        Algorithm::VirtualPartitioning => "virtual part.",
    }
}

/// `cidr-fig7`.
#[derive(Debug)]
pub struct Fig7;

/// A metric read from a measurement.
type MetricOf = fn(&Measurement) -> u64;

/// Figure 7's three metrics.
const METRICS: [(&str, MetricOf); 3] =
    [("wear", Measurement::wear_bits), ("energy", Measurement::energy_pj), ("time", Measurement::cycles)];

/// The claims on virtual partitioning's improvement over simple (Section 4.3) at the ends
/// of each sweep: (x, wear, energy, time claim ids).
type SweepClaims = [(u64, [&'static str; 3]); 2];
const RECORD_SWEEP_CLAIMS: SweepClaims = [
    (20, ["cidr-fig7-wear-20b", "cidr-fig7-energy-20b", "cidr-fig7-time-20b"]),
    (100, ["cidr-fig7-wear-100b", "cidr-fig7-energy-100b", "cidr-fig7-time-100b"]),
];
const MATCH_SWEEP_CLAIMS: SweepClaims = [
    (1, ["cidr-fig7-wear-match1", "cidr-fig7-energy-match1", "cidr-fig7-time-match1"]),
    (8, ["cidr-fig7-wear-match8", "cidr-fig7-energy-match8", "cidr-fig7-time-match8"]),
];

fn paper_at(claims: &SweepClaims, x: u64) -> (Cell, Cell, Cell) {
    match claims.iter().find(|p| p.0 == x) {
        Some((_, [w, e, t])) => (papers::stated(w), papers::stated(e), papers::stated(t)),
        None => (Cell::Missing, Cell::Missing, Cell::Missing),
    }
}

/// Whether ratios fall strictly from each point to the next and stay above 1: Figure
/// 7(d)'s wear ordering by MatchPerR.
fn falls_above_one(ratios: &[f64]) -> bool {
    ratios.windows(2).all(|w| w[1] < w[0]) && ratios.iter().all(|&r| r > 1.0)
}

/// Raw counters of every run.
fn raw_table(title: &str, x_label: &str, points: &[Point]) -> Table {
    let mut table = Table::new(
        title,
        &[x_label, "algorithm", "partitions", "N_l", "N_lw", "N_w", "bits written", "energy, µJ", "memory cycles, M"],
    );
    for point in points {
        for (&a, m) in Algorithm::ALL.iter().zip(&point.runs) {
            let pcm = &m.report.pcm;
            table.row(vec![
                point.x.into(),
                short(a).into(),
                m.output.partitions.into(),
                pcm.lines_read.into(),
                pcm.lines_written.into(),
                pcm.words_written.into(),
                pcm.bits_written.into(),
                (m.energy_pj() as f64 / 1e6).into(),
                (m.cycles() as f64 / 1e6).into(),
            ]);
        }
    }
    table
}

fn model_of(point: &Point, a: Algorithm) -> nvmdb_join::model::AlgorithmCost {
    let w = Workload {
        m_r: point.spec.r_rows() as f64,
        l_r: point.spec.record_bytes as f64,
        m_s: point.spec.s_rows() as f64,
        l_s: point.spec.record_bytes as f64,
        match_per_s: 1.0,
    };
    cost(a, &w, &ModelParams::CIDR2011)
}

/// Virtual partitioning's improvement over simple, ours, the paper's and the model's.
fn ratio_table(title: &str, x_label: &str, points: &[Point], paper: &SweepClaims) -> Table {
    let mut table = Table::new(
        title,
        &[
            x_label,
            "wear S/V",
            "paper",
            "model",
            "energy S/V",
            "paper",
            "model",
            "time S/V",
            "paper",
            "model (PCM latency)",
            "wear C/V",
        ],
    );
    let p = ModelParams::CIDR2011;
    for point in points {
        let (s, c, v) = (
            point.get(Algorithm::Simple),
            point.get(Algorithm::CachePartitioning),
            point.get(Algorithm::VirtualPartitioning),
        );
        let (ms, mv) = (model_of(point, Algorithm::Simple), model_of(point, Algorithm::VirtualPartitioning));
        let (pw, pe, pt) = paper_at(paper, point.x);
        table.row(vec![
            point.x.into(),
            ratio(s.wear_bits(), v.wear_bits()).into(),
            pw,
            (ms.metric(Metric::Wear, &p) / mv.metric(Metric::Wear, &p)).into(),
            ratio(s.energy_pj(), v.energy_pj()).into(),
            pe,
            (ms.metric(Metric::Energy, &p) / mv.metric(Metric::Energy, &p)).into(),
            ratio(s.cycles(), v.cycles()).into(),
            pt,
            (ms.metric(Metric::Latency, &p) / mv.metric(Metric::Latency, &p)).into(),
            ratio(c.wear_bits(), v.wear_bits()).into(),
        ]);
    }
    table
}

/// Table 4 beside the simulator's counters.
fn model_table(points: &[Point], x_label: &str) -> Table {
    let mut table = Table::new(
        "Model (Table 4, Figure 5 parameters) beside simulation: N_l, N_lw, N_w per join",
        &[x_label, "algorithm", "N_l sim", "N_l model", "N_lw sim", "N_lw model", "N_w sim", "N_w model"],
    );
    for point in points {
        for (&a, m) in Algorithm::ALL.iter().zip(&point.runs) {
            let t = model_of(point, a).total();
            let pcm = &m.report.pcm;
            table.row(vec![
                point.x.into(),
                short(a).into(),
                pcm.lines_read.into(),
                t.n_l.round().into(),
                pcm.lines_written.into(),
                t.n_lw.round().into(),
                pcm.words_written.into(),
                t.n_w.round().into(),
            ]);
        }
    }
    table
}

/// Where ours departs from the paper's ordering (virtual best, cache partitioning worst).
fn ordering_notes(points: &[Point], x_label: &str) -> Vec<String> {
    let mut notes = Vec::new();
    let p = ModelParams::CIDR2011;
    for point in points {
        for ((name, f), metric) in METRICS.into_iter().zip([Metric::Wear, Metric::Energy, Metric::Latency]) {
            let values: Vec<u64> = point.runs.iter().map(f).collect();
            let best = Algorithm::ALL[(0..3).min_by_key(|&i| values[i]).expect("three runs")];
            let worst = Algorithm::ALL[(0..3).max_by_key(|&i| values[i]).expect("three runs")];
            let model: Vec<f64> = Algorithm::ALL.iter().map(|&a| model_of(point, a).metric(metric, &p)).collect();
            let model_best = Algorithm::ALL[(0..3).min_by(|&i, &j| model[i].total_cmp(&model[j])).expect("three")];
            let model_worst = Algorithm::ALL[(0..3).max_by(|&i, &j| model[i].total_cmp(&model[j])).expect("three")];
            if best != Algorithm::VirtualPartitioning || worst != Algorithm::CachePartitioning {
                notes.push(format!(
                    "{x_label} = {}: {name} ranks {} best and {} worst (paper: virtual partitioning best, cache \
                     partitioning worst; Table 4 at this point: {} best, {} worst).",
                    point.x,
                    best.name(),
                    worst.name(),
                    model_best.name(),
                    model_worst.name()
                ));
            }
        }
    }
    notes
}

/// The ratio plot, with the paper's stated ratios at the ends of the sweep as markers.
fn ratio_plot(title: &str, x_label: &str, points: &[Point], paper: &SweepClaims) -> Plot {
    let mut plot = Plot::new(title, x_label, "simple / virtual partitioning");
    for (k, (name, f)) in METRICS.into_iter().enumerate() {
        let series = points
            .iter()
            .filter_map(|p| {
                ratio(f(p.get(Algorithm::Simple)), f(p.get(Algorithm::VirtualPartitioning))).map(|r| (p.x as f64, r))
            })
            .collect();
        plot.series(name, series);
        let stated = paper
            .iter()
            .filter_map(|(x, ids)| match papers::claim(ids[k]).stated {
                Stated::Value(v) => Some((*x as f64, v)),
                _ => None,
            })
            .collect();
        plot.paper_series(name, stated);
    }
    plot
}

impl Experiment for Fig7 {
    fn id(&self) -> &'static str {
        "cidr-fig7"
    }
    /// Measured on the 2-core machine of BENCHMARKS.md: quick scale 36 s and 200 MiB (of a
    /// loaded machine; 10 s of CPU); paper scale 276 s and 3.4 GB.
    fn footprint(&self, scale: Scale) -> Footprint {
        scale.pick(Footprint::new(256, 36.0), Footprint::new(3_584, 276.0))
    }
    fn title(&self) -> &'static str {
        "Hash joins on PCM: wear, energy and time by record size and MatchPerR"
    }
    fn source(&self) -> &'static str {
        "seed 001 (Chen, Gibbons, Nath, CIDR 2011), Section 4.3, Figure 7"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let machine = Machine::for_scale(ctx.scale);
        let sizes = [20u64, 40, 60, 80, 100];
        let matches: Vec<u64> = (1..=8).collect();
        let bar = ctx.progress(self.id(), (sizes.len() + matches.len()) as u64);
        let metrics = PcmMetrics::CIDR2011;
        let mut by_size = Vec::new();
        for &size in &sizes {
            let spec = SynthSpec { r_bytes: machine.r_bytes, record_bytes: size, match_per_r: 1, layout: Layout::Row };
            by_size.push(measure_point(ctx, &machine, metrics, size, spec, self.id())?);
            bar.inc(1);
        }
        let mut by_match = Vec::new();
        for &m in &matches {
            let spec = SynthSpec {
                r_bytes: machine.r_bytes,
                record_bytes: DEFAULT_RECORD_BYTES,
                match_per_r: m,
                layout: Layout::Row,
            };
            by_match.push(measure_point(ctx, &machine, metrics, m, spec, self.id())?);
            bar.inc(1);
        }
        bar.finish_and_clear();
        let wear = |p: &Point| {
            ratio(p.get(Algorithm::Simple).wear_bits(), p.get(Algorithm::VirtualPartitioning).wear_bits())
                .unwrap_or(0.0)
        };
        let energy = |p: &Point| {
            ratio(p.get(Algorithm::Simple).energy_pj(), p.get(Algorithm::VirtualPartitioning).energy_pj())
                .unwrap_or(0.0)
        };
        let time = |p: &Point| {
            ratio(p.get(Algorithm::Simple).cycles(), p.get(Algorithm::VirtualPartitioning).cycles()).unwrap_or(0.0)
        };
        let (s0, s1) = (&by_size[0], &by_size[by_size.len() - 1]);
        let (m0, m1) = (&by_match[0], &by_match[by_match.len() - 1]);
        let mut notes = ordering_notes(&by_size, "record bytes");
        notes.extend(ordering_notes(&by_match, "MatchPerR"));
        let orderings_hold = notes.is_empty();
        let virtual_best = by_size.iter().chain(&by_match).all(|p| {
            METRICS.iter().all(|(_, f)| {
                let v = f(p.get(Algorithm::VirtualPartitioning));
                f(p.get(Algorithm::Simple)) > v && f(p.get(Algorithm::CachePartitioning)) > v
            })
        });
        let cache_most_wear = by_size.iter().chain(&by_match).all(|p| {
            let c = p.get(Algorithm::CachePartitioning).wear_bits();
            c > p.get(Algorithm::Simple).wear_bits() && c > p.get(Algorithm::VirtualPartitioning).wear_bits()
        });
        let last = &by_match[by_match.len() - 1];
        let virtual_words = last.get(Algorithm::VirtualPartitioning).report.pcm.words_written;
        let virtual_model = model_of(last, Algorithm::VirtualPartitioning).total().n_w;
        notes.push(format!(
            "Virtual partitioning writes {virtual_words} words at MatchPerR {} against Table 4's {virtual_model:.0} \
             ({:+.1}%; Table 4's join phase writes nothing).",
            last.x,
            100.0 * (virtual_words as f64 / virtual_model - 1.0)
        ));
        let wear_by_match: Vec<f64> = by_match.iter().map(wear).collect();
        notes.push(format!(
            "Wear, simple / virtual partitioning, by MatchPerR {}–{}: {} ({}; the paper's Figure 7(d) falls from 8.6 \
             to 1.5 and stays above 1).",
            by_match[0].x,
            last.x,
            wear_by_match.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(", "),
            if falls_above_one(&wear_by_match) { "falling and above 1" } else { "not falling and above 1 throughout" }
        ));
        if orderings_hold {
            notes.push(
                "At every point, as in the paper, virtual partitioning is best and cache partitioning worst in \
                        wear, energy and time."
                    .into(),
            );
        }
        notes.extend([
            format!(
                "Machine: {} (see config).",
                match ctx.scale {
                    nvmdb_lab::Scale::Paper =>
                        "CIDR Table 5 hierarchy (32 KB L1, 256 KB L2, 8 MB L3), R = 50 MB".into(),
                    nvmdb_lab::Scale::Quick => format!(
                        "every cache level and R {QUICK_SHRINK}× smaller than CIDR Table 5's and the paper's (2 KB \
                         L1, 16 KB L2, 512 KB L3, R = 3.125 MB), keeping their ratios"
                    ),
                }
            ),
            format!(
                "The MatchPerR sweep uses {DEFAULT_RECORD_BYTES} B records (the paper does not state its record \
                 size)."
            ),
            "Time is our cache model's memory time (hit latencies, T_l per fetch, stalls behind write-backs); \
             the paper's is PTLsim's whole-program time, which adds computation and so shrinks ratios towards 1."
                .into(),
            "Wear is bits programmed by differential writes; all dirty lines are written back at the end of each \
             join, so no write escapes the count. The model's wear uses one γ for every algorithm (wear ratios do \
             not depend on its value), whereas our bit counts depend on the data written: hash codes and pointers flip about half their bits, delta IDs \
             few, copied random payload about half."
                .into(),
        ]);
        let paper = |claims: &SweepClaims, k: usize| {
            format!(
                "{}–{}",
                papers::claim(claims[0].1[k]).paper_display(),
                papers::claim(claims[1].1[k]).paper_display()
            )
        };
        let (r, m) = (&RECORD_SWEEP_CLAIMS, &MATCH_SWEEP_CLAIMS);
        let mut outcome = Outcome {
            summary: format!(
                "Virtual partitioning vs simple hash join, ours (paper): record size {}→{} B: wear {:.1}–{:.1}× \
                 ({}), energy {:.2}–{:.2}× ({}), time {:.2}–{:.2}× ({}); MatchPerR {}→{}: wear {:.1}–{:.1}× ({}), \
                 energy {:.2}–{:.2}× ({}), time {:.2}–{:.2}× ({}).",
                s0.x,
                s1.x,
                wear(s0),
                wear(s1),
                paper(r, 0),
                energy(s0),
                energy(s1),
                paper(r, 1),
                time(s0),
                time(s1),
                paper(r, 2),
                m0.x,
                m1.x,
                wear(m0),
                wear(m1),
                paper(m, 0),
                energy(m0),
                energy(m1),
                paper(m, 1),
                time(m0),
                time(m1),
                paper(m, 2),
            ),
            config: json!({"machine": machine, "record_bytes": sizes, "match_per_r": matches,
                           "default_record_bytes": DEFAULT_RECORD_BYTES, "metrics": metrics,
                           "id_encoding": "delta16", "seed": ctx.seed}),
            tables: vec![
                ratio_table(
                    "Figure 7(a–c): virtual partitioning's improvement over simple hash join, by record size",
                    "record bytes",
                    &by_size,
                    &RECORD_SWEEP_CLAIMS,
                ),
                ratio_table(
                    "Figure 7(d–f): virtual partitioning's improvement over simple hash join, by MatchPerR",
                    "MatchPerR",
                    &by_match,
                    &MATCH_SWEEP_CLAIMS,
                ),
                raw_table("Figure 7(a–c): counters by record size (MatchPerR = 1)", "record bytes", &by_size),
                raw_table("Figure 7(d–f): counters by MatchPerR", "MatchPerR", &by_match),
                model_table(&by_size, "record bytes"),
            ],
            plots: vec![
                ratio_plot(
                    "Figure 7(a–c): simple / virtual partitioning",
                    "record size, bytes",
                    &by_size,
                    &RECORD_SWEEP_CLAIMS,
                ),
                ratio_plot("Figure 7(d–f): simple / virtual partitioning", "MatchPerR", &by_match, &MATCH_SWEEP_CLAIMS),
            ],
            notes,
            ..Default::default()
        };
        let excess = "Measured words of virtual partitioning over Table 4's, and the wear ratios by MatchPerR, are \
                      in the notes.";
        let time_note = "Ours is memory time; the paper's PTLsim time adds computation, pulling ratios towards 1 \
                         (notes).";
        for (claims, points, wear_note) in [(r, &by_size, None), (m, &by_match, Some(excess))] {
            for (x, [w, e, t]) in claims {
                // A sweep end the scale does not run stays unmeasured.
                if let Some(p) = points.iter().find(|p| p.x == *x) {
                    match wear_note {
                        Some(note) => papers::measure_explained(&mut outcome, w, wear(p), note),
                        None => outcome.measure(*w, wear(p)),
                    }
                    outcome.measure(*e, energy(p));
                    papers::measure_explained(&mut outcome, t, time(p), time_note);
                }
            }
        }
        papers::holds_explained(&mut outcome, "cidr-fig7-virtual-best", virtual_best, excess);
        outcome.holds("cidr-fig7-cache-partitioning-most-wear", cache_most_wear);
        outcome.holds("cidr-fig7-wear-falls-with-match", falls_above_one(&wear_by_match));
        Ok(outcome)
    }
}

fn default_spec(machine: &Machine) -> SynthSpec {
    SynthSpec { r_bytes: machine.r_bytes, record_bytes: DEFAULT_RECORD_BYTES, match_per_r: 1, layout: Layout::Row }
}

/// `cidr-fig8`.
#[derive(Debug)]
pub struct Fig8;

impl Experiment for Fig8 {
    fn id(&self) -> &'static str {
        "cidr-fig8"
    }
    fn title(&self) -> &'static str {
        "Hash-join energy as E_wb varies from 2 to 64 pJ/bit"
    }
    fn source(&self) -> &'static str {
        "seed 001 (Chen, Gibbons, Nath, CIDR 2011), Section 4.4, Figure 8(c)"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let machine = Machine::for_scale(ctx.scale);
        let spec = default_spec(&machine);
        let point = measure_point(ctx, &machine, PcmMetrics::CIDR2011, 0, spec, self.id())?;
        let e_wbs = [2u64, 4, 8, 16, 32, 64];
        let mut table = Table::new(
            format!("Figure 8(c): join energy, µJ ({} B records, MatchPerR 1)", spec.record_bytes),
            &["E_wb, pJ/bit", "simple", "cache part.", "virtual part.", "best", "simple / virtual"],
        );
        let mut plot = Plot::new("Figure 8(c): hash-join energy", "E_wb, pJ/bit", "energy, µJ");
        let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 3];
        let mut virtual_always_best = true;
        for &e_wb in &e_wbs {
            let metrics = PcmMetrics { e_wb_pj: e_wb, ..PcmMetrics::CIDR2011 };
            // E_wb changes no decision of the simulator, so energy is the formula over the
            // same counters.
            let energies: Vec<u64> = point.runs.iter().map(|m| m.report.pcm.energy_pj(&metrics)).collect();
            let best = (0..3).min_by_key(|&i| energies[i]).expect("three runs");
            virtual_always_best &= Algorithm::ALL[best] == Algorithm::VirtualPartitioning;
            let mut row: Vec<Cell> = vec![e_wb.into()];
            for (i, &e) in energies.iter().enumerate() {
                row.push((e as f64 / 1e6).into());
                series[i].push((e_wb as f64, e as f64 / 1e6));
            }
            row.push(Algorithm::ALL[best].name().into());
            row.push(ratio(energies[0], energies[2]).into());
            table.row(row);
        }
        for (a, points) in Algorithm::ALL.iter().zip(series) {
            plot.series(a.name(), points);
        }
        let mut outcome = Outcome {
            summary: format!(
                "Energy rises with E_wb for every algorithm, most for cache partitioning (which writes the most \
                 bits); virtual partitioning is {} the best (paper: \"virtual partitioning is still the best\").",
                if virtual_always_best { "always" } else { "not always" }
            ),
            config: json!({"machine": machine, "spec": spec, "e_wb_pj": e_wbs, "seed": ctx.seed}),
            tables: vec![table],
            plots: vec![plot],
            notes: vec!["Energy = 8·64·(N_l + N_lw)·E_rb + bits·E_wb over one run's counters per algorithm; E_wb \
                         does not change what the simulator does, so re-running would give the same counters."
                .into()],
            ..Default::default()
        };
        outcome.holds("cidr-fig8-virtual-best", virtual_always_best);
        Ok(outcome)
    }
}

/// `cidr-fig9`.
#[derive(Debug)]
pub struct Fig9;

/// The smallest T_w of the sweep, equal to T_l, where the paper states the gap.
const T_W_230: u64 = 230;

impl Experiment for Fig9 {
    fn id(&self) -> &'static str {
        "cidr-fig9"
    }
    fn title(&self) -> &'static str {
        "Hash-join time as T_w varies from 230 to 690 cycles"
    }
    fn source(&self) -> &'static str {
        "seed 001 (Chen, Gibbons, Nath, CIDR 2011), Section 4.4, Figure 9(c)"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let machine = Machine::for_scale(ctx.scale);
        let spec = default_spec(&machine);
        let t_ws: Vec<u64> = ctx.scale.pick(vec![230, 450, 690], vec![230, 345, 450, 575, 690]);
        let mut table = Table::new(
            format!("Figure 9(c): join time, memory cycles (M) ({} B records, MatchPerR 1)", spec.record_bytes),
            &["T_w, cycles", "simple", "cache part.", "virtual part.", "simple / virtual", "paper simple / virtual"],
        );
        let mut plot = Plot::new("Figure 9(c): hash-join time", "T_w, cycles", "memory cycles, M");
        let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 3];
        let mut gaps = Vec::new();
        let mut cache_gaps = Vec::new();
        let mut virtual_best = true;
        let paper_gap = 1.0 + papers::stated_value("cidr-fig9-gap-230") / 100.0;
        let bar = ctx.progress(self.id(), t_ws.len() as u64);
        for &t_w in &t_ws {
            let metrics = PcmMetrics { t_w_cycles: t_w, ..PcmMetrics::CIDR2011 };
            let point = measure_point(ctx, &machine, metrics, 0, spec, self.id())?;
            let mut row: Vec<Cell> = vec![t_w.into()];
            for (i, m) in point.runs.iter().enumerate() {
                row.push((m.cycles() as f64 / 1e6).into());
                series[i].push((t_w as f64, m.cycles() as f64 / 1e6));
            }
            let gap = ratio(point.runs[0].cycles(), point.runs[2].cycles()).unwrap_or(0.0);
            gaps.push(gap);
            cache_gaps.push(ratio(point.runs[1].cycles(), point.runs[2].cycles()).unwrap_or(0.0));
            virtual_best &= point.runs[2].cycles() < point.runs[0].cycles().min(point.runs[1].cycles());
            row.push(gap.into());
            row.push(if t_w == T_W_230 { Cell::from(paper_gap) } else { Cell::Missing });
            table.row(row);
            bar.inc(1);
        }
        bar.finish_and_clear();
        for (a, points) in Algorithm::ALL.iter().zip(series) {
            plot.series(a.name(), points);
        }
        let rising = |g: &[f64]| g.windows(2).all(|w| w[1] > w[0]);
        let growing = rising(&gaps) && rising(&cache_gaps);
        let mut outcome = Outcome {
            summary: format!(
                "Simple / virtual partitioning time goes from {:.2}× at T_w = 230 (paper {paper_gap:.2}×) to {:.2}× at \
                 690; the gaps to virtual partitioning {} with T_w (paper: gaps grow as T_w increases).",
                gaps[0],
                gaps[gaps.len() - 1],
                if growing { "grow" } else { "do not grow at every step" }
            ),
            config: json!({"machine": machine, "spec": spec, "t_w_cycles": t_ws, "seed": ctx.seed}),
            tables: vec![table],
            plots: vec![plot],
            notes: vec!["Each T_w is a fresh simulation: T_w sets how long write-backs occupy a rank, and so how \
                         long line fetches stall behind them."
                .into()],
            ..Default::default()
        };
        if t_ws.first() == Some(&T_W_230) {
            outcome.measure("cidr-fig9-gap-230", 100.0 * (gaps[0] - 1.0));
        }
        outcome.holds("cidr-fig9-gaps-grow", growing);
        outcome.holds("cidr-fig9-virtual-best", virtual_best);
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn falls_above_one_needs_both() {
        assert!(falls_above_one(&[8.0, 3.0, 1.5]));
        assert!(!falls_above_one(&[8.0, 3.0, 3.0]), "not strictly falling");
        assert!(!falls_above_one(&[8.0, 3.0, 0.9]), "below 1");
    }

    /// The quick machine keeps the paper-scale ordering of Figure 7(d): virtual
    /// partitioning's wear gain over simple falls with MatchPerR and stays above 1 up to 8
    /// (at paper scale 1.77 at MatchPerR 8; on the earlier quick machine, which shrank L3
    /// 12.5× but L1 not at all, 0.91).
    #[test]
    fn quick_machine_keeps_the_wear_ordering_by_match_per_r() {
        let machine = Machine::for_scale(Scale::Quick);
        let ratios: Vec<f64> = (1..=8)
            .map(|m| {
                let spec = SynthSpec {
                    r_bytes: machine.r_bytes,
                    record_bytes: DEFAULT_RECORD_BYTES,
                    match_per_r: m,
                    layout: Layout::Row,
                };
                let run = |a| run_synthetic(&machine, PcmMetrics::CIDR2011, &spec, a, 42, "test").expect("join runs");
                let (s, v) = (run(Algorithm::Simple), run(Algorithm::VirtualPartitioning));
                ratio(s.wear_bits(), v.wear_bits()).expect("virtual partitioning writes")
            })
            .collect();
        assert!(falls_above_one(&ratios), "wear simple / virtual by MatchPerR 1–8: {ratios:?}");
    }
}
