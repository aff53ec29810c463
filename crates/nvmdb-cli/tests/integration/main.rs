//! The integration tests of `nvmdb-cli`, one test binary (compiled and linked once): each file
//! in this folder is a module declared below. A test that needs a process of its own (a
//! global allocator, process-wide state) is a file of its own in `tests/` instead.
//! `.ci/test_modules.sh` fails on a file here that no `mod` declaration reaches.

mod bench_markdown;
mod chromium;
mod cli;
mod envy;
mod hostile_input;
mod hostile_suite;
mod input_contract;
mod journal_crash;
mod kv;
mod kv_demo;
mod report_out;
mod scratch;
mod ssd_replay;
mod trace_gen;
