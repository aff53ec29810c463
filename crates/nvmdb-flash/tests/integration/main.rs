//! The integration tests of `nvmdb-flash`, one test binary (compiled and linked once): each file
//! in this folder is a module declared below. A test that needs a process of its own (a
//! global allocator, process-wide state) is a file of its own in `tests/` instead.
//! `.ci/test_modules.sh` fails on a file here that no `mod` declaration reaches.

mod accuracy;
mod buffers;
mod charging;
mod config_arbitrary;
mod consistency;
mod dedup_replay;
mod example_toy_ftl;
mod example_toy_log_scheme;
mod ipl_native;
mod mqsim_traces;
mod pcm_accounting;
mod power_cut;
mod power_loss;
mod small_updates;
mod wear_leveling;
