//! The eNVy experiments' tests: registration, the same results on one thread or several,
//! the shared cleaning simulations against a plain reference, and the settling rules.

use nvmdb_envy::workload::{self, Bimodal};
use nvmdb_envy::{CleaningPolicy, Envy};
use nvmdb_lab::{RunContext, Scale};

use super::cleaning::{
    cleaning_traces, hot_positions_90, partition_live_share, same_run_config, settled, shared_cleaning_parts,
    CleaningTrace, Span, TurnoverPoint, WarmUp, SIMULATIONS,
};
use super::locality::settle_turnovers;
use super::*;
use crate::papers::ENVY;

#[test]
fn every_claim_names_a_registered_experiment() {
    let ids: Vec<&str> = all().iter().map(|e| e.id()).collect();
    for claim in ENVY {
        assert!(ids.contains(&claim.experiment), "{} names {}", claim.id, claim.experiment);
    }
}

#[test]
fn the_experiments_with_parts_are_the_same_on_one_thread_or_several() {
    let experiments: [&dyn Experiment; 4] =
        [&CleaningUtilization, &CleaningLocality, &HybridPartition, &ParallelAndBuffer];
    for experiment in experiments {
        let run = |jobs| experiment.run(&RunContext::new(Scale::Quick, 3).with_jobs(jobs)).expect("runs");
        let one = run(1);
        assert!(!one.tables.is_empty() && one.tables.iter().all(|t| !t.rows.is_empty()), "{}", experiment.id());
        // Every simulation again, not the first run's shared ones.
        SIMULATIONS.clear();
        assert_eq!(run(3), one, "{}", experiment.id());
    }
}

#[test]
fn the_tpca_experiments_are_the_same_on_one_thread_or_two() {
    let experiments: [&dyn Experiment; 3] = [&tpca::TpcaThroughput, &lifetime::Lifetime, &sensitivity::Sensitivity];
    for experiment in experiments {
        let run = |jobs| experiment.run(&RunContext::new(Scale::Quick, 2).with_jobs(jobs)).expect("runs");
        let one = run(1);
        assert!(!one.tables.is_empty() && one.tables.iter().all(|t| !t.rows.is_empty()), "{}", experiment.id());
        assert_eq!(run(2), one, "{}", experiment.id());
    }
}

/// The simple reference: one simulation per run, its counters reset after the warm-up.
fn reference_trace(config: EnvyConfig, dist: Bimodal, span: Span, ctx: &RunContext) -> CleaningTrace {
    let mut envy = Envy::format(config).expect("valid");
    let mut rng = ctx.rng(1);
    workload::fill(&mut envy).expect("fits");
    let hot = dist.hot_pages(config.logical_pages);
    let mut points = Vec::new();
    let mut costs = Vec::new();
    let mut turnover = |envy: &mut Envy| {
        let before = *envy.stats();
        workload::update(envy, dist, config.flash_pages(), &mut rng).expect("fits");
        let after = *envy.stats();
        let cost = (after.clean_programs - before.clean_programs) as f64
            / (after.flush_programs - before.flush_programs) as f64;
        points.push(TurnoverPoint { cost, hot_positions: hot_positions_90(envy, &hot) });
        cost
    };
    let warm = span.warm;
    while (costs.len() as u64) < warm.min || (!settled(&costs) && (costs.len() as u64) < warm.cap) {
        costs.push(turnover(&mut envy));
    }
    let capped = !settled(&costs) && warm.cap > warm.min;
    envy.reset_stats();
    for _ in 0..span.measured {
        turnover(&mut envy);
    }
    let partition_live_share = partition_live_share(&envy);
    CleaningTrace { stats: *envy.stats(), points, warm: costs.len() as u64, capped, partition_live_share }
}

#[test]
fn one_simulation_gives_every_span_what_its_own_run_gives() {
    let ctx = RunContext::new(Scale::Quick, 5);
    let dist = Bimodal { hot_access: 0.8, hot_data: 0.2 };
    let mut config = EnvyConfig::small(16, 32, 2, 0.8);
    config.wear_threshold_erases = None;
    config.cleaning = CleaningPolicy::Locality;
    let spans = [
        Span { warm: WarmUp { min: 4, cap: 40 }, measured: 3 },
        Span { warm: WarmUp::fixed(2), measured: 5 },
        Span { warm: WarmUp { min: 4, cap: 40 }, measured: 3 },
        Span { warm: WarmUp { min: 8, cap: 9 }, measured: 0 },
        Span { warm: WarmUp::fixed(12), measured: 4 },
    ];
    let shared = cleaning_traces(config, dist, &spans, &ctx, "test").expect("runs");
    assert_eq!(shared.len(), spans.len());
    for (span, trace) in spans.iter().zip(&shared) {
        assert_eq!(*trace, reference_trace(config, dist, *span, &ctx), "{span:?}");
        assert_eq!(trace.points.len() as u64, trace.warm + span.measured);
    }
    // The spans end at different turnovers, and their counters differ.
    assert_ne!(shared[1].stats, shared[4].stats);
}

#[test]
fn a_run_that_cannot_redistribute_is_the_same_whatever_its_step() {
    let ctx = RunContext::new(Scale::Quick, 2);
    let span = Span { warm: WarmUp { min: 4, cap: 12 }, measured: 3 };
    let trace = |k: u32, divisor: u32| {
        let mut config = EnvyConfig::small(16, 32, 2, 0.8);
        config.wear_threshold_erases = None;
        config.cleaning = CleaningPolicy::Hybrid { partition_segments: k };
        config.redistribution_divisor = divisor;
        let run = cleaning_traces(config, Bimodal::UNIFORM, &[span], &ctx, "test").expect("runs");
        (run, same_run_config(config))
    };
    // 15 positions in one partition: the separate runs agree, and share a configuration.
    let (without, config_without) = trace(15, 0);
    let (with, config_with) = trace(15, 8);
    assert_eq!(without, with);
    assert_eq!(config_without, config_with);
    assert_eq!(with[0].stats.redistributed_pages, 0);
    // In two partitions the step is read, and the configurations stay apart.
    let (without, config_without) = trace(8, 0);
    let (with, config_with) = trace(8, 8);
    assert_ne!(config_without, config_with);
    assert!(with[0].stats.redistributed_pages > 0);
    assert_ne!(without[0].stats, with[0].stats);
}

#[test]
fn hybrid_at_its_extremes_shares_the_simulation_of_its_canonical_policy() {
    let ctx = RunContext::new(Scale::Quick, 2);
    let span = Span { warm: WarmUp { min: 4, cap: 12 }, measured: 3 };
    let config = |policy: CleaningPolicy| {
        let mut config = EnvyConfig::small(16, 32, 2, 0.8);
        config.wear_threshold_erases = None;
        config.cleaning = policy;
        config
    };
    let dist = Bimodal { hot_access: 0.9, hot_data: 0.1 };
    for (hybrid, canonical) in [(1, CleaningPolicy::Locality), (15, CleaningPolicy::Fifo), (40, CleaningPolicy::Fifo)] {
        let hybrid = config(CleaningPolicy::Hybrid { partition_segments: hybrid });
        let canonical = config(canonical);
        assert_eq!(same_run_config(hybrid), same_run_config(canonical));
        let separate = cleaning_traces(hybrid, dist, &[span], &ctx, "test").expect("runs");
        assert_eq!(separate, cleaning_traces(canonical, dist, &[span], &ctx, "test").expect("runs"));
        // Asked for by either configuration, the shared simulation gives the separate runs' traces.
        let runs = [(hybrid, dist, span), (canonical, dist, span)];
        let shared = shared_cleaning_parts(&ctx, "test", &runs).expect("runs");
        assert_eq!(shared, [separate[0].clone(), separate[0].clone()]);
    }
    // Partitions of two segments are neither.
    let two = config(CleaningPolicy::Hybrid { partition_segments: 2 });
    assert_ne!(same_run_config(two), same_run_config(config(CleaningPolicy::Locality)));
}

#[test]
fn the_settling_rule_wants_the_last_three_quarters_flat() {
    assert!(!settled(&[1.0; 3]), "no windows yet");
    assert!(settled(&[1.0; 4]));
    assert!(settled(&[0.0; 8]));
    let falling: Vec<f64> = (0..32).map(|t| 40.0 - f64::from(t)).collect();
    assert!(!settled(&falling));
    let within = [[5.0; 4], [1.0; 4], [1.02; 4], [1.0; 4]].concat();
    assert!(settled(&within));
    let beyond = [[5.0; 4], [1.0; 4], [1.04; 4], [1.0; 4]].concat();
    assert!(!settled(&beyond));
    // Only the last three quarters count.
    assert!(settled(&[vec![9.0; 4], vec![1.0; 12]].concat()));
    // A dip: the cost falls from 10 to 7 over 16 turnovers and stays there for 8. Two
    // adjacent 4-turnover windows at the bottom agree; the last three quarters do not.
    let dip: Vec<f64> = (0..16).map(|t| 10.0 - 3.0 * f64::from(t) / 15.0).chain([7.0; 8]).collect();
    assert!(!settled(&dip));
    // It recovers to 8.5 and stays: settled once the dip has left the windows.
    let recovered: Vec<f64> = dip.iter().copied().chain([8.5; 72]).collect();
    assert!(!settled(&recovered[..48]));
    assert!(settled(&recovered));
}

#[test]
fn shapes_settle_by_the_warm_up_rule_and_where_the_hot_pages_stay_gathered() {
    let point = |cost: f64, hot_positions: usize| TurnoverPoint { cost, hot_positions };
    // 10.0 until turnover 19, then 2.0; the hot positions fall to 5 at turnover 20. The
    // first 19 turnovers are flat, so the rule holds at turnover 4 already: hence the
    // warm-ups' minimum. From 32 on it holds once the last three quarters are all at
    // 2.0: turnover 67 (windows of 16 from turnover 20).
    let points: Vec<TurnoverPoint> =
        (1..=100).map(|t| if t < 20 { point(10.0, 30 - t) } else { point(2.0, 5) }).collect();
    assert_eq!(settle_turnovers(&points, 1, 16), (Some(4), 20));
    assert_eq!(settle_turnovers(&points, 32, 16), (Some(67), 20));
    // A cost that never settles within the run.
    let rising: Vec<TurnoverPoint> = (1..=40).map(|t| point(f64::from(t), 5)).collect();
    assert_eq!(settle_turnovers(&rising, 1, 16).0, None);
    // The hot positions come down to 5 at 20, spread out again and gather at 30 for good.
    let hot: Vec<TurnoverPoint> =
        (1..=40).map(|t| point(1.0, if (20..25).contains(&t) || t >= 30 { 5 } else { 9 })).collect();
    assert_eq!(settle_turnovers(&hot, 1, 10).1, 30);
}

#[test]
fn lifetime_measures_its_claim_from_the_run() {
    let outcome = lifetime::Lifetime.run(&RunContext::new(Scale::Quick, 1)).unwrap();
    let finished = nvmdb_lab::report::Finished {
        id: "envy-lifetime".into(),
        title: String::new(),
        source: String::new(),
        outcome,
    };
    let rows = nvmdb_lab::scorecard(ENVY, &[finished]).unwrap();
    let row = rows.iter().find(|r| r.claim_id == "envy-lifetime-years").unwrap();
    let years = row.value.unwrap();
    assert!(years.is_finite() && years > 0.0, "{years}");
}
