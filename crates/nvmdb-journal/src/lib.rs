//! The SQLite rollback journal in simulated PCM (Lee et al., ACM TODAES 2016, seed 003),
//! driven by real, unmodified SQLite through a VFS.
//!
//! SQLite writes its rollback journal as a file: a header sector, then page records of
//! page number, page bytes and checksum. The VFS parses those writes into the paper's
//! structures in PCM ([`journal`], layouts in [`layout`]): a manager frame of
//! header-frame descriptors, a header frame per journal with the hot-journal flag, the
//! journal header and data-frame descriptors {PgNo, CkSum, V, PTR}, and data frames of
//! portions holding the page images. When SQLite reads the journal back (rollback, or
//! hot-journal recovery) the VFS rebuilds exactly the bytes SQLite wrote. The database
//! file lives on a simulated block device.
//!
//! # Durability contract
//!
//! - Every write SQLite makes reaches a persistent device (PCM or the block device) when
//!   the call returns; `xSync` has nothing left to do. A power cut stops at a device
//!   write index: that write and all later ones do not happen; one write is atomic.
//! - A transaction is committed when SQLite deletes its journal (or truncates it to 0
//!   bytes, `journal_mode=TRUNCATE`); in PCM that is one write: clearing the
//!   hot-journal flag of the header frame. Under `journal_mode=PERSIST` the commit is
//!   SQLite's write of a zeroed journal header, one write of a header slot; the header
//!   frame stays hot until the next transaction's header replaces the journal. WAL
//!   mode is not served (it writes no rollback journal).
//! - After a cut, [`Simulation::recover`] rebuilds the DRAM state (presence and reusable
//!   bits, first-free pointers, reuse counters) from PCM alone: the header-frame
//!   descriptors, then the header and data descriptors of each hot journal. SQLite then
//!   finds the hot journal and rolls the database back to the last committed state.
//!   Reuse information is non-functional and starts empty after a cut.

pub mod config;
pub mod devices;
pub mod error;
pub mod flag;
pub mod journal;
pub mod layout;
pub mod run;
pub mod sim;
pub mod vfs;
pub mod workload;

pub use config::{Allocation, JournalConfig};
pub use devices::{
    BackgroundPower, BlockTiming, DeviceParams, Devices, PAPER_BOARD_PCM, PAPER_BOARD_PCM_PROGRAM_BUDGET,
};
pub use error::JournalError;
pub use journal::{CopyStats, FrameState, PcmJournal, Recovery};
pub use layout::Field;
pub use run::{run_workload, Mark, WorkloadRun};
/// The SQLite binding the VFS runs, for callers that execute statements.
pub use rusqlite;
pub use sim::{Db, JournalMode, RecoveryFailure, RunStats, Simulation, PAGE_SIZE};
pub use vfs::CutActivity;
pub use workload::{generate, generate_with, App, AppModel, Workload};
