//! Every registered experiment, in report order.

use nvmdb_lab::Experiment;

/// All experiments.
pub fn all() -> Vec<Box<dyn Experiment>> {
    let mut all: Vec<Box<dyn Experiment>> = Vec::new();
    all.extend(nvmdb_lab::device_experiments::all());
    all.extend(nvmdb_btree::experiments::all());
    all.extend(nvmdb_join::experiments::all());
    all.extend(nvmdb_flash::experiments::all());
    all
}
