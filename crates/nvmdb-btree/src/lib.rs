#![doc = include_str!("../README.md")]
#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

pub mod code;
pub mod file_format;
pub mod insert_wear;
mod tree;
pub mod workload;

pub use tree::{bulk_loaded_nodes, BTree};

use std::str::FromStr;

use nvmdb_memory::MemoryError;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::tree::Format;

/// Expected B+-tree failures.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum BTreeError {
    #[error("node size must be 1, 2, 4 or 8 cache lines, not {0}")]
    NodeLines(u32),
    #[error("fill factor must be in (0, 1], not {0}")]
    Fill(f64),
    #[error("bulk-load entry {index} (key {key}) is not above the key before it")]
    NotIncreasing { index: usize, key: u64 },
    #[error("unknown variant '{0}' (expected sorted, unsorted, unsorted-leaf, unsorted-leaf-bitmap or nvmdb-leaf)")]
    UnknownVariant(String),
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// A stop was asked for ([`nvmdb_cancel::cancel`]): [`workload::measure`] stops
    /// before its next operation.
    #[error("interrupted")]
    Interrupted(#[from] nvmdb_cancel::Interrupted),
}

/// The node organisation of a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// CIDR 2011 "sorted": every node sorted and packed, with a counter.
    Sorted,
    /// CIDR 2011 "unsorted": every node packed but unsorted, with a counter.
    Unsorted,
    /// CIDR 2011 "unsorted leaf": sorted inner nodes, packed unsorted leaves.
    UnsortedLeaf,
    /// CIDR 2011 "unsorted leaf with bitmap": sorted inner nodes, leaves with holes and a
    /// validity bitmap.
    UnsortedLeafBitmap,
    /// nvmdb's leaf: bitmap leaves that store keys as the weight-order code of their
    /// distance above the leaf's separator (pointers as the code of their value) and insert
    /// into the free slot whose stale key is nearest in Hamming distance (see the crate docs).
    NvmdbLeaf,
}

impl Variant {
    /// Every variant, the paper's four first.
    pub const ALL: [Variant; 5] =
        [Variant::Sorted, Variant::Unsorted, Variant::UnsortedLeaf, Variant::UnsortedLeafBitmap, Variant::NvmdbLeaf];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Sorted => "sorted",
            Variant::Unsorted => "unsorted",
            Variant::UnsortedLeaf => "unsorted-leaf",
            Variant::UnsortedLeafBitmap => "unsorted-leaf-bitmap",
            Variant::NvmdbLeaf => "nvmdb-leaf",
        }
    }

    fn leaf_format(self) -> Format {
        match self {
            Variant::Sorted => Format::Sorted,
            Variant::Unsorted | Variant::UnsortedLeaf => Format::Packed,
            Variant::UnsortedLeafBitmap => Format::Bitmap,
            Variant::NvmdbLeaf => Format::Nearest,
        }
    }

    fn inner_format(self) -> Format {
        match self {
            Variant::Unsorted => Format::Packed,
            _ => Format::Sorted,
        }
    }
}

impl FromStr for Variant {
    type Err = BTreeError;
    fn from_str(s: &str) -> Result<Variant, BTreeError> {
        Variant::ALL.into_iter().find(|v| v.name() == s).ok_or_else(|| BTreeError::UnknownVariant(s.into()))
    }
}
