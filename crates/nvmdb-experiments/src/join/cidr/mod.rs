//! `cidr-fig7`, `cidr-fig8`, `cidr-fig9`: the simulated hash joins of CIDR 2011 Section 4.3
//! and the E_wb / T_w sensitivity of Section 4.4, a module per figure (`fig9`'s gap runs
//! in `gap`). Here, what they share: the configurations measured, their data seeds, and
//! the joins at MatchPerR 1 that every figure measuring them takes from one simulation.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

mod fig7;
mod fig8;
mod fig9;
mod gap;

pub use fig7::Fig7;
pub use fig8::Fig8;
pub use fig9::Fig9;

use nvmdb_device::PcmMetrics;
use nvmdb_lab::{LabError, RunContext};

use super::{run_synthetic_shared, Machine, Measurement};
use nvmdb_join::join::Algorithm;
use nvmdb_join::relation::Layout;
use nvmdb_join::synth::SynthSpec;

/// Record size of Figure 7's MatchPerR sweep and of Figure 9's 6% gap. The paper does
/// not state it; 60 B is the middle of Figure 7's record-size axis.
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

/// The data seed of the configuration at `x`.
fn point_seed(ctx: &RunContext, x: u64) -> u64 {
    data_seed(ctx.seed, x)
}

/// The data seed of the configuration at `x` in a run seeded `seed`.
fn data_seed(seed: u64, x: u64) -> u64 {
    seed ^ x.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The T_w at which each join at MatchPerR 1 and one of [`FIG89_RECORD_BYTES`] is timed,
/// in one simulation: Figure 9's sweep (the device's 450 among them) and 0, the gap's
/// write-backs free. `cidr-fig7`'s record-size sweep, `cidr-fig8`'s Figure 8(c),
/// `cidr-fig9`'s sweep and its gap runs all measure these joins, on the same data; each
/// runs once in a process ([`run_synthetic_shared`]).
const SHARED_T_WS: [u64; 6] = [230, 345, 450, 575, 690, 0];

/// Whether the join of `spec` at `metrics` is one of those timed at [`SHARED_T_WS`] (on
/// the data of its record size's configuration, which the caller knows).
fn is_shared(machine: &Machine, spec: &SynthSpec, metrics: PcmMetrics) -> bool {
    FIG89_RECORD_BYTES.contains(&spec.record_bytes)
        && *spec == spec_at(machine, spec.record_bytes, 1)
        && metrics == PcmMetrics { t_w_cycles: metrics.t_w_cycles, ..PcmMetrics::CIDR2011 }
        && SHARED_T_WS.contains(&metrics.t_w_cycles)
}

/// [`super::run_synthetic`] of `spec` (MatchPerR 1 at one of [`FIG89_RECORD_BYTES`]) at
/// CIDR 2011's PCM with T_w `t_w`, one of [`SHARED_T_WS`]: taken from the one
/// simulation timed at all of them that every experiment measuring the join shares.
fn shared_join(
    machine: &Machine,
    spec: &SynthSpec,
    t_w: u64,
    algorithm: Algorithm,
    seed: u64,
    id: &str,
) -> Result<Measurement, LabError> {
    let metrics = PcmMetrics { t_w_cycles: t_w, ..PcmMetrics::CIDR2011 };
    assert!(is_shared(machine, spec, metrics), "{spec:?} at T_w {t_w} is not a shared join");
    let mut runs = run_synthetic_shared(machine, PcmMetrics::CIDR2011, spec, algorithm, seed, id, &SHARED_T_WS)?;
    Ok(runs.swap_remove(SHARED_T_WS.iter().position(|&t| t == t_w).expect("a shared T_w")))
}

/// The three algorithms at MatchPerR 1 and `bytes`-byte records (one of
/// [`FIG89_RECORD_BYTES`]) on the data of the configuration at `bytes`, at T_w `t_w`
/// (one of [`SHARED_T_WS`]).
fn shared_point(ctx: &RunContext, machine: &Machine, bytes: u64, t_w: u64, id: &str) -> Result<Point, LabError> {
    let spec = spec_at(machine, bytes, 1);
    let seed = point_seed(ctx, bytes);
    let runs =
        Algorithm::ALL.iter().map(|&a| shared_join(machine, &spec, t_w, a, seed, id)).collect::<Result<Vec<_>, _>>()?;
    Ok(Point { x: bytes, spec, runs })
}

fn short(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Simple => "simple",
        Algorithm::CachePartitioning => "cache part.",
        Algorithm::VirtualPartitioning => "virtual part.",
    }
}

/// MatchPerR 1 at `record_bytes`, on `machine`'s R.
fn spec_at(machine: &Machine, record_bytes: u64, match_per_r: u64) -> SynthSpec {
    SynthSpec { r_bytes: machine.r_bytes, record_bytes, match_per_r, layout: Layout::Row }
}

/// Record sizes of Figures 8(c) and 9(c). The paper does not state their configuration;
/// these are the ends and the middle of Figure 7's record-size axis, at MatchPerR 1.
const FIG89_RECORD_BYTES: [u64; 3] = [20, 60, 100];

#[cfg(test)]
mod tests;
