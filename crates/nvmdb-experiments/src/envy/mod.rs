//! eNVy (seed 004, Wu & Zwaenepoel, ASPLOS 1994), a module per experiment: cleaning cost
//! against utilisation (`utilization`) and locality (`locality`), the hybrid policy's
//! partition size (`partition`), all three on the shared cleaning simulations
//! (`cleaning`); TPC-A throughput and latency with the TPC-A set-up the others share
//! (`tpca`), lifetime (`lifetime`), their sensitivity to the flash's erase time and banks
//! (`sensitivity`), parallel banks and the SRAM buffer (`parallel`), and the CIDR 2011
//! B+-trees on eNVy (`btree`).

use nvmdb_envy::{EnvyConfig, EnvyError};
use nvmdb_lab::{Exclusive, Experiment, LabError};

mod btree;
mod cleaning;
mod lifetime;
mod locality;
mod parallel;
mod partition;
mod sensitivity;
mod tpca;
mod utilization;

pub use btree::BtreeOnEnvy;
pub use locality::CleaningLocality;
pub use parallel::ParallelAndBuffer;
pub use partition::HybridPartition;
pub use utilization::CleaningUtilization;

/// The eNVy experiments.
pub fn all() -> Vec<Box<dyn Experiment>> {
    let mut all: Vec<Box<dyn Experiment>> = vec![Box::new(CleaningUtilization)];
    // Locality gathering and FIFO appear in both as hybrid at its extremes; their
    // simulations are shared ([`cleaning::SIMULATIONS`]), and run one at a time the second
    // takes the first's without waiting for it.
    all.extend(Exclusive::all("envy-cleaning", vec![Box::new(CleaningLocality), Box::new(HybridPartition)]));
    all.extend([
        Box::new(tpca::TpcaThroughput) as Box<dyn Experiment>,
        Box::new(lifetime::Lifetime),
        Box::new(sensitivity::Sensitivity),
        Box::new(ParallelAndBuffer),
        Box::new(BtreeOnEnvy),
    ]);
    all
}

const SOURCE: &str = "seed 004: Wu & Zwaenepoel, eNVy: a non-volatile, main memory storage system (ASPLOS 1994)";

fn failed(id: &str) -> impl Fn(EnvyError) -> LabError + '_ {
    move |e| LabError::Failed { id: id.into(), message: e.to_string() }
}

/// Peak resident memory of one eNVy run beside the others: 16 MiB, and the flash
/// contents twice over (array and tables) when it keeps its pages' bytes, or else its
/// tables, at most 64 B per flash page (a run of 262,144 pages peaked at 11.5 MB).
fn envy_run_bytes(config: &EnvyConfig) -> u64 {
    let per_page = if config.keep_page_bytes { 2 * u64::from(config.page_bytes) } else { 64 };
    (16 << 20) + config.flash_pages() * per_page
}

#[cfg(test)]
mod tests;
