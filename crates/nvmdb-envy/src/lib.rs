//! eNVy (Wu & Zwaenepoel, ASPLOS 1994): a linear, byte-addressable, persistent address
//! space over NAND flash.
//!
//! A page table in battery-backed SRAM maps each logical page to a flash page or to a
//! page of an SRAM write buffer. A write to a page in flash is a copy-on-write into the
//! buffer's head; the buffer is a FIFO that flushes whole pages from its tail to flash
//! when it holds more than a threshold. Flash is divided into segments (the erase unit
//! across a bank); cleaning copies a segment's live pages to the spare segment and erases
//! it. Cleaning policies ([`policy`]) are pure functions: greedy, FIFO, locality
//! gathering and the hybrid of the two. [`Envy`] implements nothing of `Memory` itself;
//! [`EnvyMemory`] wraps it with a simulated heap so any structure written against
//! `nvmdb_memory::Memory` runs on it unchanged.
//!
//! # Durability contract
//!
//! - **What survives a power loss** is the flash array and the battery-backed SRAM
//!   ([`Devices`]): the page table, the write buffer's pages, its head and tail, the
//!   segment map, the cleaning record and the transaction shadow list are bytes there
//!   (layouts in the crate README). Every other table is rebuilt by [`Envy::open`].
//! - **A write is acknowledged when [`Envy::write`] returns**: every byte of it is then
//!   durable. Each page's part of a write is atomic (its commit point is one 4-byte
//!   page-table write); a cut during a write spanning pages may leave a prefix of its
//!   pages written, never part of a page.
//! - **A clean interrupted by a cut is finished by recovery**: live pages still in the
//!   victim are copied on, and the erase is repeated if it had not happened. A cut between
//!   a copy's program and its page-table update leaves the copy dead at the destination's
//!   tail; recovery points the page at it instead of copying again. Elsewhere (a flush, a
//!   move to a neighbour) such a cut leaves one dead flash page, cleaned later like any
//!   other.
//! - **A cut during recovery** is recovered from like any other: every recovery step is
//!   repeatable. [`Envy::recover`] gives the devices back when it fails.
//! - **Transactions**: between [`Envy::begin`] and [`Envy::commit`], the pre-image of
//!   each written page is kept as a shadow copy that cleaning preserves; [`Envy::abort`],
//!   or recovery after a cut before the commit's single SRAM write, restores every
//!   pre-image.
//! - The cleaning heuristics' recent-cost counters and the timing state are volatile:
//!   recovery restarts them from zero, which changes later decisions but never data.
//! - **Checked against a model**: [`verify::AckModel`] keeps the acknowledged bytes,
//!   written only from what the host wrote and eNVy acknowledged, and compares a
//!   recovered system's whole space with it (`nvmdb envy replay` right after recovery and
//!   at the end; `tests/integration/verify.rs` shows it catching a lost write and a changed byte).

pub mod analytic;
pub mod config;
pub mod devices;
pub mod engine;
pub mod error;
pub mod layout;
pub mod memory;
pub mod policy;
pub mod stats;
pub mod tpca;
pub mod verify;
pub mod workload;

pub use config::{CleaningPolicy, EnvyConfig, FLASH_1994};
pub use devices::Devices;
pub use engine::{Envy, RecoveryFailure};
pub use error::EnvyError;
pub use memory::EnvyMemory;
pub use stats::{EnvyEnergy, EnvyStats};
