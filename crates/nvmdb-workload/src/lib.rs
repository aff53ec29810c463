//! Workloads: block-trace parsers and synthetic generators.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used, clippy::arithmetic_side_effects)]

pub use nvmdb_text as lines;
pub mod ageing;
pub mod pcm_trace;
pub mod request;
pub mod synth;
pub mod traces;

pub use request::{Content, Op, Request};
pub use traces::{DisksimLayout, TraceError, TraceFormat, TraceReader};
