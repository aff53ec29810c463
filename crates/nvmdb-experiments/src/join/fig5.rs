//! `cidr-fig5`: the analytic best-scheme regions of CIDR 2011 Figure 5.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

use nvmdb_lab::{Cell, Experiment, LabError, Outcome, Plot, RunContext, Table};
use serde_json::json;

use nvmdb_join::join::Algorithm;
use nvmdb_join::model::{
    best, cost, wear_crossover, GammaReading, Metric, ModelParams, Workload, DEFAULT_GAMMA, FIG5_MATCH_PER_R,
    FIG5_RECORD_BYTES,
};

use super::cidr::DEFAULT_RECORD_BYTES;
use crate::papers;

/// `cidr-fig5`.
#[derive(Debug)]
pub struct Fig5;

/// The paper's R (the regions do not depend on it: every cost is linear in M_R).
const R_BYTES: f64 = 50e6;

fn letter(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Simple => "S",
        Algorithm::CachePartitioning => "C",
        Algorithm::VirtualPartitioning => "V",
    }
}

fn grid_table(metric: Metric, p: &ModelParams) -> Table {
    let sizes = [1u64, 2, 4, 8, 16, 32, 64, 100, 200, 300, 400, 500];
    let mut columns = vec!["MatchPerR \\ record B".to_string()];
    columns.extend(sizes.iter().map(|s| s.to_string()));
    let column_refs: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut table = Table::new(
        format!(
            "Figure 5 ({}): best scheme (S simple, C cache partitioning, V virtual partitioning; V shows its \
             benefit over the second best)",
            metric.name()
        ),
        &column_refs,
    )
    .keyed(format!("best_scheme_{}", metric.name().replace(' ', "_")));
    for m in [1u64, 2, 5, 10, 15, 18, 19, 20, 30, 40, 50] {
        let mut row: Vec<Cell> = vec![m.into()];
        for &size in &sizes {
            let (winner, gain) = best(&Workload::primary_foreign(R_BYTES, size as f64, m as f64), p, metric);
            let text = match winner {
                Algorithm::VirtualPartitioning => format!("V {gain:.2}×"),
                other => letter(other).to_string(),
            };
            // The data carries the gain of every winner over the second best.
            row.push(Cell::typed(text, [("best", winner.name().into()), ("gain_x", gain.into())]));
        }
        table.row(row);
    }
    table
}

/// Figure 7's configurations as (record bytes, MatchPerR): the record-size sweep at
/// MatchPerR 1 and the MatchPerR sweep at the record size `cidr-fig7` uses.
fn fig7_points() -> Vec<(u64, u64)> {
    let mut points: Vec<(u64, u64)> = [20, 40, 60, 80, 100].into_iter().map(|b| (b, 1)).collect();
    points.extend((2..=8).map(|m| (DEFAULT_RECORD_BYTES, m)));
    points
}

/// The energy winners over Figure 5's grid, in [`Algorithm::ALL`] order.
fn energy_wins(p: &ModelParams) -> [u64; 3] {
    let mut wins = [0u64; 3];
    for size in FIG5_RECORD_BYTES {
        for m in FIG5_MATCH_PER_R {
            let (winner, _) = best(&Workload::primary_foreign(R_BYTES, size as f64, m as f64), p, Metric::Energy);
            wins[Algorithm::ALL.iter().position(|&a| a == winner).expect("listed")] += 1;
        }
    }
    wins
}

/// The model's energy of `a` over virtual partitioning's at one configuration.
fn energy_over_virtual(a: Algorithm, (size, m): (u64, u64), p: &ModelParams) -> f64 {
    let w = Workload::primary_foreign(R_BYTES, size as f64, m as f64);
    cost(a, &w, p).energy_pj(p) / cost(Algorithm::VirtualPartitioning, &w, p).energy_pj(p)
}

/// What each γ reading says about Figure 5(c) and Figure 7: (tables, and per reading
/// whether virtual partitioning is the model's best in every metric at every Figure 7
/// configuration).
fn gamma_readings() -> (Vec<Table>, Vec<(GammaReading, bool)>) {
    let mut regions = Table::new(
        "γ readings: Figure 5(c) energy regions, and the model at Figure 7's configurations (Section 4.3: they \
         \"fall in the region where virtual partitioning wins\")",
        &[
            "reading",
            "energy: simple",
            "cache part.",
            "virtual part.",
            "Figure 7 points where virtual partitioning wins every metric",
            "energy worst at 60 B, MatchPerR 1",
            "energy worst at 60 B, MatchPerR 8",
        ],
    )
    .keyed("gamma_regions");
    let points = fig7_points();
    let mut in_region = Vec::new();
    for reading in GammaReading::ALL {
        let p = ModelParams::CIDR2011.with_gamma(reading);
        let wins = energy_wins(&p);
        let virtual_points = points
            .iter()
            .filter(|&&(size, m)| {
                let w = Workload::primary_foreign(R_BYTES, size as f64, m as f64);
                Metric::ALL[1..].iter().all(|&metric| best(&w, &p, metric).0 == Algorithm::VirtualPartitioning)
            })
            .count();
        let worst = |m: u64| {
            let over = |a| energy_over_virtual(a, (DEFAULT_RECORD_BYTES, m), &p);
            if over(Algorithm::CachePartitioning) > over(Algorithm::Simple) {
                "cache part."
            } else {
                "simple"
            }
        };
        regions.row(vec![
            format!("γ = {}", reading.name()).into(),
            wins[0].into(),
            wins[1].into(),
            wins[2].into(),
            Cell::typed(
                format!("{virtual_points} of {}", points.len()),
                [("points", virtual_points.into()), ("of_points", points.len().into())],
            ),
            worst(1).into(),
            worst(8).into(),
        ]);
        in_region.push((reading, virtual_points == points.len()));
    }
    let mut ratios = Table::new(
        format!(
            "γ readings: the model's energy gain of virtual partitioning over simple along Figure 7's sweeps (record \
             size at MatchPerR 1; MatchPerR at {DEFAULT_RECORD_BYTES} B), beside the paper's measured gains (Figure \
             7(b, e))"
        ),
        &["sweep", "x", "paper", "γ = 0.5 bits", "γ = 32 bits"],
    )
    .keyed("gamma_energy_gain");
    let record_sweep = [20u64, 40, 60, 80, 100].map(|b| ("record bytes", b, (b, 1)));
    let match_sweep = (1..=8u64).map(|m| ("MatchPerR", m, (DEFAULT_RECORD_BYTES, m)));
    for (sweep, x, point) in record_sweep.into_iter().chain(match_sweep) {
        let paper = match (sweep, x) {
            ("record bytes", 20) => papers::stated("cidr-fig7-energy-20b"),
            ("record bytes", 100) => papers::stated("cidr-fig7-energy-100b"),
            ("MatchPerR", 1) => papers::stated("cidr-fig7-energy-match1"),
            ("MatchPerR", 8) => papers::stated("cidr-fig7-energy-match8"),
            _ => Cell::Missing,
        };
        let mut row: Vec<Cell> = vec![sweep.into(), x.into(), paper];
        for reading in GammaReading::ALL {
            row.push(energy_over_virtual(Algorithm::Simple, point, &ModelParams::CIDR2011.with_gamma(reading)).into());
        }
        ratios.row(row);
    }
    (vec![regions, ratios], in_region)
}

/// Why the default reading is the default, from the values computed here.
fn gamma_note(in_region: &[(GammaReading, bool)]) -> String {
    let gain = |reading: GammaReading, m: u64| {
        energy_over_virtual(Algorithm::Simple, (DEFAULT_RECORD_BYTES, m), &ModelParams::CIDR2011.with_gamma(reading))
    };
    let readings: Vec<String> = GammaReading::ALL
        .iter()
        .map(|&r| {
            let holds = in_region.iter().any(|&(x, h)| x == r && h);
            format!(
                "with γ = {} virtual partitioning {} the model's best at every Figure 7 configuration, and its energy gain \
                 over simple goes {:.2}× → {:.2}× from MatchPerR 1 to 8",
                r.name(),
                if holds { "is" } else { "is not" },
                gain(r, 1),
                gain(r, 8)
            )
        })
        .collect();
    format!(
        "γ: Table 3 defines it as modified bits per modified word, so Figure 5's 0.5 reads either as 0.5 bits or as \
         half a word's 64 bits. Only energy depends on the reading: {} (paper, measured: {} → {}, and \"the record \
         size and MatchPerR settings in the experiments fall in the region where virtual partitioning wins in \
         Figure 5\"). The model uses γ = {} by default.",
        readings.join("; "),
        papers::claim("cidr-fig7-energy-match1").paper_display(),
        papers::claim("cidr-fig7-energy-match8").paper_display(),
        DEFAULT_GAMMA.name()
    )
}

/// Where `a` wins `metric` over Figure 5's grid: (points, smallest and largest record
/// size, largest MatchPerR); `None` when it wins nowhere.
fn region(a: Algorithm, metric: Metric, p: &ModelParams) -> Option<(u64, u64, u64, u64)> {
    let mut found: Option<(u64, u64, u64, u64)> = None;
    for size in FIG5_RECORD_BYTES {
        for m in FIG5_MATCH_PER_R {
            if best(&Workload::primary_foreign(R_BYTES, size as f64, m as f64), p, metric).0 == a {
                let (n, lo, hi, top) = found.unwrap_or((0, size, size, m));
                found = Some((n + 1, lo.min(size), hi.max(size), top.max(m)));
            }
        }
    }
    found
}

/// Why simple does not have the fewest cache misses at the largest records for every
/// MatchPerR: simple's line fetches minus virtual partitioning's, per R record, are
/// linear in MatchPerR (Table 4); the note gives both terms and where they cross.
fn miss_regions_note(p: &ModelParams) -> String {
    let size = *FIG5_RECORD_BYTES.end();
    let excess = |m: u64| {
        let w = Workload::primary_foreign(R_BYTES, size as f64, m as f64);
        let n_l = |a| cost(a, &w, p).total().n_l / w.m_r;
        n_l(Algorithm::Simple) - n_l(Algorithm::VirtualPartitioning)
    };
    let per_match = excess(2) - excess(1);
    let fixed = excess(1) - per_match;
    let simple_up_to = FIG5_MATCH_PER_R
        .take_while(|&m| {
            let w = Workload::primary_foreign(R_BYTES, size as f64, m as f64);
            best(&w, p, Metric::CacheMisses).0 == Algorithm::Simple
        })
        .last()
        .unwrap_or(0);
    format!(
        "Figure 5(a) from Table 4 as printed: at {size} B records simple has the fewest line fetches only up to \
         MatchPerR {simple_up_to}. Per R record, simple fetches {fixed:+.2} + {per_match:.2}·MatchPerR lines more \
         than virtual partitioning: each S record costs simple N_hS = {} hash-table lines where virtual \
         partitioning pays {:.3} lines of ID lists, while virtual partitioning reads every R record whole twice \
         (partition scan and join) where simple reads only its key and the hash table; the terms cross at \
         MatchPerR {:.2}. The paper's text (\"simple hash join is the best scheme when record size is very large\") \
         does not say for which MatchPerR, and its figure is not in our copy.",
        p.n_hs,
        4.0 / p.line_bytes,
        -fixed / per_match
    )
}

/// Where cache partitioning and simple win each PCM metric, for the claim that cache
/// partitioning wins the fewest points.
fn cache_few_note(p: &ModelParams) -> String {
    let total = (FIG5_RECORD_BYTES.count() * FIG5_MATCH_PER_R.count()) as f64;
    let describe = |a: Algorithm, metric: Metric| match region(a, metric, p) {
        Some((n, lo, hi, top)) => format!(
            "{} wins {n} points ({:.1}%: records {lo}–{hi} B, MatchPerR up to {top})",
            a.name(),
            100.0 * n as f64 / total
        ),
        None => format!("{} wins none", a.name()),
    };
    let parts: Vec<String> = Metric::ALL[1..]
        .iter()
        .map(|&metric| {
            format!(
                "{}: {}, {}",
                metric.name(),
                describe(Algorithm::CachePartitioning, metric),
                describe(Algorithm::Simple, metric)
            )
        })
        .collect();
    format!(
        "Cache partitioning wins few points in every PCM metric, but the claim's test (fewer than each other \
         scheme) also needs simple to win more, and in latency simple's region is as small: {}.",
        parts.join("; ")
    )
}

impl Experiment for Fig5 {
    fn id(&self) -> &'static str {
        "cidr-fig5"
    }
    fn title(&self) -> &'static str {
        "Hash joins, analytic: the best scheme by record size and MatchPerR"
    }
    fn source(&self) -> &'static str {
        "seed 001 (Chen, Gibbons, Nath, CIDR 2011), Table 4 and Figure 5"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let p = ModelParams::CIDR2011;
        let mut counts = Table::new(
            "Figure 5: configurations won by each scheme (record size 1–500 B × MatchPerR 1–50 = 25,000 points)",
            &["metric", "simple", "cache partitioning", "virtual partitioning"],
        )
        .keyed("wins");
        let mut plot = Plot::new(
            "Figure 5: largest MatchPerR at which virtual partitioning is best",
            "record size, bytes",
            "MatchPerR",
        );
        let bar = ctx.progress(self.id(), Metric::ALL.len() as u64);
        let mut virtual_share = Vec::new();
        let mut cache_shares = Vec::new();
        // Figure 5(a): simple wins at the largest records and cache partitioning at the
        // smallest, for every MatchPerR.
        let (smallest, largest) = (*FIG5_RECORD_BYTES.start(), *FIG5_RECORD_BYTES.end());
        let mut miss_regions = true;
        // Figures 5(b–d): cache partitioning wins fewer points than each other scheme.
        let mut cache_fewest = true;
        for (k, metric) in Metric::ALL.into_iter().enumerate() {
            let mut wins = [0u64; 3];
            let mut boundary = Vec::new();
            for size in FIG5_RECORD_BYTES {
                let mut last_virtual = 0u64;
                for m in FIG5_MATCH_PER_R {
                    let w = Workload::primary_foreign(R_BYTES, size as f64, m as f64);
                    let (winner, _) = best(&w, &p, metric);
                    let index = Algorithm::ALL.iter().position(|&a| a == winner).expect("listed");
                    wins[index] += 1;
                    if metric == Metric::CacheMisses && (size == smallest || size == largest) {
                        let expected = if size == largest { Algorithm::Simple } else { Algorithm::CachePartitioning };
                        miss_regions &= winner == expected;
                    }
                    if winner == Algorithm::VirtualPartitioning {
                        last_virtual = m;
                    }
                }
                boundary.push((size as f64, last_virtual as f64));
            }
            counts.row(vec![metric.name().into(), wins[0].into(), wins[1].into(), wins[2].into()]);
            if metric != Metric::CacheMisses {
                cache_fewest &= wins[1] < wins[0] && wins[1] < wins[2];
            }
            virtual_share.push((metric, wins[2] as f64 / wins.iter().sum::<u64>() as f64));
            cache_shares.push((metric, wins[1] as f64 / wins.iter().sum::<u64>() as f64));
            plot.series(metric.name(), boundary);
            bar.set_position(k as u64 + 1);
        }
        bar.finish_and_clear();

        let mut crossover = Table::new(
            "Figure 5(b): wear cross-over (smallest MatchPerR where simple ≤ virtual), computed from Table 4",
            &["record size, B", "ours", "paper"],
        )
        .keyed("wear_crossover");
        let mut crossovers = Vec::new();
        for size in [1u64, 20, 100, 500] {
            let c = wear_crossover(size as f64, &p);
            crossovers.push(c);
            crossover.row(vec![size.into(), c.into(), papers::stated("cidr-fig5-wear-crossover")]);
        }
        let (gamma_tables, in_region) = gamma_readings();
        let mut tables = vec![counts, crossover];
        tables.extend(gamma_tables);
        tables.extend(Metric::ALL.into_iter().map(|m| grid_table(m, &p)));
        let share = |m: Metric| virtual_share.iter().find(|(x, _)| *x == m).map_or(0.0, |(_, s)| *s);
        let cache_share = |m: Metric| cache_shares.iter().find(|(x, _)| *x == m).map_or(0.0, |(_, s)| *s);
        let paper = |id: &str| papers::claim(id).paper_display();
        let mut outcome = Outcome {
            summary: format!(
                "Table 4's formulas evaluated over Figure 5's grid with its parameters (L_S = L_R, MatchPerS = 1, \
                 N_hR = N_hS = 1.8, HashTable_lw = 1.5, HashTable_w = 5.0, γ = 0.5 read as {}). For cache misses, that simple wins \
                 every MatchPerR at {largest} B records and cache partitioning every MatchPerR at {smallest} B {} \
                 (see the grid; paper: simple for very large records, cache partitioning for small ones); for wear, virtual \
                 partitioning beats simple below MatchPerR {c} and simple wins from {c} on at 100 B records \
                 (paper: simple from {}); virtual partitioning wins {:.0}% of the energy grid \
                 and {:.0}% of the latency grid (paper: \"in most cases\"), and cache partitioning wins {:.0}% and \
                 {:.0}% (paper: \"very few configurations\").",
                DEFAULT_GAMMA.name(),
                if miss_regions { "holds" } else { "does not hold" },
                paper("cidr-fig5-wear-crossover"),
                100.0 * share(Metric::Energy),
                100.0 * share(Metric::Latency),
                100.0 * cache_share(Metric::Energy),
                100.0 * cache_share(Metric::Latency),
                c = crossovers[2].map_or_else(|| "none".to_string(), |c| c.to_string()),
            ),
            config: json!({"model": p, "r_bytes": R_BYTES, "record_bytes": "1..=500", "match_per_r": "1..=50",
                           "seed": ctx.seed}),
            tables,
            plots: vec![plot],
            notes: vec![
                "Ties go to the earlier of simple, cache partitioning, virtual partitioning; at MatchPerR = 19 the \
                 wear of simple and virtual partitioning is exactly equal (5·M_R = (M_R + 19·M_R)·2/8 words), so \
                 the cross-over reads 19."
                    .into(),
                "At 1–2 B records cache partitioning copies no more words than virtual partitioning writes IDs (1–2 B \
                 vs 2 B per record; ties go to cache partitioning), so it wins wear there until simple takes over."
                    .into(),
                "Regions do not depend on |R|: every term of Table 4 is proportional to M_R once L_R, L_S and \
                 MatchPerR are fixed."
                    .into(),
                gamma_note(&in_region),
            ],
            ..Default::default()
        };
        let model = "Table 4's formulas at the paper's parameters, with no simulation: a check of our reading of the \
                     model.";
        let with = |why: &str| format!("{model} {why}");
        papers::measure_check(
            &mut outcome,
            "cidr-fig5-wear-crossover",
            crossovers[2].map_or(f64::NAN, |c| c as f64),
            &with(
                "Simple's 5·M_R words equal virtual partitioning's (M_R + MatchPerR·M_R)·2/8 at MatchPerR 19 (notes).",
            ),
        );
        papers::holds_check(
            &mut outcome,
            "cidr-fig5-cache-misses-regions",
            miss_regions,
            &with(&miss_regions_note(&p)),
        );
        papers::holds_check(&mut outcome, "cidr-fig5-cache-partitioning-few", cache_fewest, &with(&cache_few_note(&p)));
        papers::holds_check(
            &mut outcome,
            "cidr-fig5-virtual-most",
            share(Metric::Energy) > 0.5 && share(Metric::Latency) > 0.5,
            model,
        );
        let gamma_why = with(&gamma_note(&in_region));
        for (reading, holds) in in_region {
            let id = match reading {
                GammaReading::HalfBit => "cidr-fig5-fig7-virtual-region-half-bit",
                GammaReading::HalfWord => "cidr-fig5-fig7-virtual-region-half-word",
            };
            papers::holds_check(&mut outcome, id, holds, &gamma_why);
        }
        Ok(outcome)
    }
}
