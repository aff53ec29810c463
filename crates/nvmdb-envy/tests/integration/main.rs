//! The integration tests of `nvmdb-envy`, one test binary (compiled and linked once): each file
//! in this folder is a module declared below. A test that needs a process of its own (a
//! global allocator, process-wide state) is a file of its own in `tests/` instead.
//! `.ci/test_modules.sh` fails on a file here that no `mod` declaration reaches.

mod btree;
mod common;
mod crash;
mod differential;
mod energy;
mod equivalent_policies;
mod fifo_cost;
mod locality_stability;
mod metadata_only;
mod retime;
mod stats;
mod timing;
mod transactions;
mod verify;
mod wear;
