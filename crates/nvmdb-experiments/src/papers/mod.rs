//! What the papers state: one table of [`Claim`]s per paper, next to the experiments
//! that measure them. Experiments report their values with `Outcome::measure` under
//! these ids, the scorecard computes each verdict, and tables and summaries quote the
//! stated values from here (`stated(id)`) instead of retyping them.

mod cidr2011;
mod envy;
mod thesis;

use nvmdb_lab::{Cell, Claim};

pub use cidr2011::CIDR2011;
pub use envy::ENVY;
pub use thesis::THESIS;

/// Every paper's claims, in report order.
pub fn all() -> Vec<Claim> {
    [CIDR2011, THESIS, ENVY].concat()
}

/// The claim with this id; a missing id is a programming error.
pub fn claim(id: &str) -> Claim {
    *nvmdb_lab::scorecard::claim(&all(), id)
}

/// The stated value of a claim, as a table cell.
pub fn stated(id: &str) -> Cell {
    claim(id).stated_cell()
}
