//! The live performance monitor of `nvmdb kv demo`: a progress board that the benchmark
//! runs report to, its terminal view, and its web page served over server-sent events.

pub mod board;
pub mod runner;
pub mod server;
pub mod terminal;
