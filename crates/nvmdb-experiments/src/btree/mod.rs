//! `cidr-fig6`: CIDR 2011 Figure 6, B+-tree wear, energy and time for inserts, deletes
//! and searches, for the paper's four node organisations and nvmdb-leaf (`fig6`);
//! `cidr-fig8-btree` and `cidr-fig9-btree`: Figures 8(a, b) and 9(a, b), insert and
//! delete energy as E_wb varies and time as T_w varies (`fig8`, `fig9`, on the sweep of
//! `sweep`). The runs they share are in `runs`.
//!
//! Quick scale shrinks the tree and the cache hierarchy together (see [`runs::machine`]),
//! so the tree stays many times larger than the last-level cache, as in the paper.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

mod fig6;
mod fig8;
mod fig9;
mod runs;
mod sweep;

use nvmdb_lab::Experiment;

pub use fig6::Fig6;
pub use fig8::Fig8Btree;
pub use fig9::Fig9Btree;
pub use runs::machine;

/// The B+-tree experiments.
pub fn all() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(Fig6), Box::new(Fig8Btree), Box::new(Fig9Btree)]
}

#[cfg(test)]
mod tests;
