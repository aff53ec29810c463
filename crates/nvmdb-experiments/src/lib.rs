//! Every paper's experiments, registered in report order, and the speed benchmarks of
//! `nvmdb bench`. This crate sits above the structures and engines it measures: they
//! never depend on it, nor on the report harness.

pub mod bench;
pub mod btree;
pub mod device;
pub mod envy;
pub mod flash;
pub mod iplp;
pub mod join;
pub mod journal;
pub mod papers;

use nvmdb_lab::{Exclusive, Experiment};

/// All experiments, in report order.
pub fn all() -> Vec<Box<dyn Experiment>> {
    let mut all: Vec<Box<dyn Experiment>> = Vec::new();
    all.extend(device::all());
    all.extend(btree::all());
    all.extend(join::all());
    all.extend(flash::all());
    all.extend(envy::all());
    // Real SQLite draws the journal's checksum nonces from its process-wide PRNG, which
    // each run seeds: the journal experiments give the same results only one at a time.
    all.extend(Exclusive::all("sqlite", journal::all()));
    all.extend(iplp::all());
    all
}
