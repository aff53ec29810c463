//! Hash joins on simulated PCM main memory.
//!
//! - [`join`]: CIDR 2011's simple hash join, cache partitioning and virtual partitioning
//!   (seed 001, Algorithms 1–3), which are also the thesis's traditional and modified
//!   joins for row and column stores (seed 000, Chapter 4, Algorithms 1–4).
//! - [`relation`]: relations in memory, row or column layout; [`csv`]: the CSV relation
//!   format of `nvmdb join run`.
//! - [`hash_table`], [`idlist`]: the chained hash table and the record-ID lists (2-byte
//!   deltas with a `0xFFFF` escape).
//! - [`model`]: the analytic cost model of CIDR Table 4 and Figure 5.
//! - [`synth`]: the synthetic relations of CIDR Section 4.3.
//! - [`estimate`]: the host memory of a join run (synthetic or over CSV tables).
//! - [`ssb`]: the Star Schema Benchmark of the thesis (Section 2.2.5).
//! - [`users`]: the thesis's multi-user load (queries, inserts, updates and deletes).
//! - [`buffered`]: PCM used as a disk behind a DRAM buffer pool (the thesis's "PCM as disk").
//!
//! The joins declare their instructions and independent accesses to the CPU time model
//! (`instructions.rs`: the estimates per step and which accesses overlap); the hints
//! change no memory content and no counter.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

pub mod buffered;
pub mod csv;
pub mod estimate;
pub mod hash_table;
pub mod idlist;
mod instructions;
pub mod join;
pub mod model;
pub mod relation;
pub mod ssb;
pub mod synth;
pub mod users;

pub use idlist::IdEncoding;
pub use join::{hash_join, measured_join, Algorithm, JoinOptions, JoinOutput};
pub use relation::{Column, Layout, StoredRelation, Table};
