//! The integration tests of `nvmdb-btree`, one test binary (compiled and linked once): each file
//! in this folder is a module declared below. A test that needs a process of its own (a
//! global allocator, process-wide state) is a file of its own in `tests/` instead.
//! `.ci/test_modules.sh` fails on a file here that no `mod` declaration reaches.

mod bit_costs;
mod cpu_time;
mod differential;
mod file_format_arbitrary;
mod insert_wear;
