//! Claims of the paper.

use nvmdb_lab::Claim;

/// The paper's claims about the experiments nvmdb runs.
pub const THESIS: &[Claim] = &[];
